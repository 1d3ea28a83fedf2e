/*
 * Attention family internals (attention.c: check, variant table,
 * reference; attention_run.c: dispatch).  Kernel: attention.wgsl.
 */
#ifndef WGML_ATTENTION_H
#define WGML_ATTENTION_H

#include "mm.h"

/* Head dims the kernels hold in workgroup memory (Q tile, K/V tile). */
#define WG_ATTN_MAX_D 256
/* Key chunks per KV head in one splitkv dispatch (bounds the scratch;
 * attn_reduce's 256 threads take one run each). */
#define WG_ATTN_MAX_SPLITS 256
/* Fewest keys a splitkv chunk gets: one 64-key tile of the decode kernel
 * at D 128 (below that the partial run, 130 floats a row, and the
 * workgroup's fixed steps outweigh the keys). */
#define WG_ATTN_MIN_CHUNK 64

/* The subgroup decode kernel (attention_dsg.wgsl): at most this many key
 * chunks a row (attn_merge reads 64 runs in one round of loads) and at
 * least this many keys a chunk (the scratch bound below assumes it). */
#define WG_ATTN_DSG_MAX_CHUNKS 64
#define WG_ATTN_DSG_MIN_CHUNK 32

typedef struct wg_attn_variant {
    const char *name;
    /* tiles: attention.wgsl's BQ, RQ, BK, TN; splitkv (attention_decode.wgsl):
     * bq the most rows a workgroup, bk the most keys per thread per tile
     * (KPT), tn the threads, rq unused; dsg (attention_dsg.wgsl): bq the
     * most rows a workgroup (a vec4's lanes), bk the most keys per key
     * group per tile, tn the threads, rq 1 when it prefetches (PF) */
    int bq, rq, bk, tn;
    bool split;           /* key chunks across workgroups + attn_reduce / attn_merge */
    bool sg;              /* the subgroup decode kernel (needs subgroups of >= wg_attn_lpk lanes) */
    bool fa;              /* the register-tiled prefill kernel (attention_fa.wgsl): bq rows, 4 a
                           * thread, 8 subgroup lanes across dims, 16 keys a tile; head dims <= 128,
                           * subgroups of >= 8 lanes */
} wg_attn_variant;

/* The device facts the table is keyed by. */
typedef struct wg_attn_facts {
    uint32_t smem;        /* maxComputeWorkgroupStorageSize */
    uint32_t max_inv;     /* maxComputeInvocationsPerWorkgroup */
    uint32_t subgroup;    /* measured subgroup size, 0 without */
    bool f16;
    bool cpu;             /* a CPU driver (lavapipe): per-thread loops stay rolled */
} wg_attn_facts;

const wg_attn_variant *wg_attn_variant_at(int i);
int64_t wg_attn_pad(int64_t d);
/* attention_fa.wgsl's head dims: multiples of 32 (its swizzle's 8 slots of 4). */
int64_t wg_attn_pad32(int64_t d);
/* CPU drivers' head dim classes: 64, 128 or 256 (the arrays' size). */
int64_t wg_attn_class(int64_t d);
uint64_t wg_attn_smem(const wg_attn_variant *v, int64_t dk, int64_t dv);
/* The decode kernel's workgroup arrays for rows r, kpt keys per thread per
 * tile and wg threads: its SPN and RPR defines, and the bytes. */
typedef struct wg_attn_dec_mem {
    int64_t spn, rpr;
    uint64_t bytes;
} wg_attn_dec_mem;
wg_attn_dec_mem wg_attn_dec_smem(int64_t r, int64_t kpt, int64_t wg);
/* The variant for rows = (q heads per KV head) x Sq query rows over skv
 * keys (WGML_FORCE=attn=<name> overrides; an unknown name is an error
 * listing the variants). */
wgml_status wg_attn_choose(const wg_attn_facts *f, int64_t rows, int64_t skv, int64_t dk, int64_t dv,
                           const wg_attn_variant **out);
uint64_t wg_attn_scratch_bytes(int64_t b, int64_t hq, int64_t sq, int64_t dv, int64_t splits);
/* The most splits a splitkv dispatch over skv keys takes. */
int64_t wg_attn_max_splits(int64_t skv);
/* The most chunks a dsg dispatch over skv keys takes. */
int64_t wg_attn_dsg_max_chunks(int64_t skv);
/* dsg's lanes per key for head dims dk, dv: octets of 8, rounded up to a
 * power of 2 (at least 4). */
int wg_attn_lpk(int64_t dk, int64_t dv);

wgml_status wg_attention_impl(const wgml_tensor *q, const wgml_tensor *k, const wgml_tensor *v,
                              const wgml_tensor *mask, const wgml_tensor *sinks, const wgml_attn_params *p,
                              wgml_tensor *out);

/* CPU reference on contiguous host arrays in double: q [b, hq, sq, d],
 * k [b, hkv, skv, d], v [b, hkv, skv, dv], mask already broadcast to
 * [b, hq, sq, skv] (NULL: none; mask_bool: nonzero keeps), sinks [hq]. */
typedef struct wg_attn_ref_args {
    int64_t b, hq, hkv, sq, skv, d, dv;
    const double *q, *k, *v, *mask, *sinks;
    bool mask_bool;
    wgml_attn_params p;
} wg_attn_ref_args;
void wg_attention_ref(const wg_attn_ref_args *r, double *out);

/* ggml's ALiBi slope (softmax.c). */
double wg_alibi_slope(double max_bias, int64_t n_head, int64_t h);

#endif
