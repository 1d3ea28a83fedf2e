/*
 * The GEMM behind wgml_matmul and wgml_linear (gemm.c; rows, checks and
 * the CPU reference in matmul.c; kernel gemm.wgsl).
 */
#ifndef WGML_GEMM_H
#define WGML_GEMM_H

#include "mm.h"

/* One product: out = act(alpha a.b + beta c + bias).  a [..., m, k]
 * plain float; b [..., k, n] plain float, or (bq) a quantised w [n, k]
 * whose rows are contiguous blocks; c NULL when beta is 0 (may be out
 * itself); bias NULL or broadcastable to out.  Checked by the caller. */
typedef struct wg_gemm_args {
    const char *name;
    const wgml_tensor *a, *b, *bias, *c;
    wgml_tensor *out;
    wgml_matmul_params p;
    bool bq;
} wg_gemm_args;

wgml_status wg_gemm_run(const wg_gemm_args *g);

/* A kernel variant of gemm.wgsl: block tile bm x bn, k-step bk, thread
 * tile tm x tn, nbuf workgroup buffers; splitk cuts k. */
typedef struct wg_gemm_variant {
    const char *name;
    int bm, bn, bk, tm, tn, nbuf;
    bool splitk;
    bool h16; /* f16 tiles and tile sums (WGML_PREC_F16; needs ShaderF16) */
} wg_gemm_variant;

/* The variant of that name (NULL: none) and its workgroup memory bytes. */
const wg_gemm_variant *wg_gemm_variant_named(const char *name);
uint32_t wg_gemm_wg_mem(const wg_gemm_variant *v);

/* Whether gemm.wgsl keeps the next k-tile's loads in an `if` (GEMM_LDIF;
 * gemm.c says where it pays): dflt, unless WGML_GEMM_LDIF=0|1 forces. */
bool wg_gemm_ldif(bool dflt);

/* Writes v's tile defines for gemm.wgsl (BM ... BS_N, TM8 / TN8 / TILE8, LA* / LB*,
 * SINGLE_BUFFER, H16, R, the k-step unroll KU4 ... KU32 for ctx's device) and,
 * when qb, the quantised-B defines of weight dtype wdt (QB;QT_<type>;QK;BB)
 * into defs (cap bytes); returns their length.  Shared by gemm.c and the
 * grouped GEMM of wgml_linear_id (moe.c). */
size_t wg_gemm_tile_defs(wgml_ctx *ctx, const wg_gemm_variant *v, wgml_dtype wdt, bool qb, char *defs, size_t cap);

/* Mirrors Params in gemm.wgsl. */
typedef struct wg_gemm_params {
    uint32_t dims[4], grid[4], ast[4], bst[4], cst[4], dst[4], ost[4], offs[4], misc[4], pst[4];
    float fp[4];
    uint32_t gx[4], gy[4], gz[4]; /* MOE only (moe.c) */
} wg_gemm_params;

/* The variant forced by WGML_FORCE=gemm=NAME (NULL: none); an unknown
 * name is WGML_ERR_INVALID_ARG listing the variants. */
wgml_status wg_gemm_forced(const wg_gemm_variant **v);

/* Whether the product (as wg_gemm_run would run it) takes an f16 (h)
 * variant: precision WGML_PREC_F16 on a device with ShaderF16 and a
 * 64- or 128-wide tile, or an h variant forced.  wgml_linear then
 * dequantises a quantised w into f16 instead of f32. */
bool wg_gemm_takes_h16(wgml_ctx *ctx, int64_t batches, int64_t m, int64_t n, int64_t k, wgml_precision prec);

/* The k slices of a product (1: no split-K).  Depends on the shape and
 * WGML_FORCE only, so the op table's scratch declaration (no device)
 * and the encode agree; *chunk: k per slice. */
int wg_gemm_splits(int64_t batches, int64_t m, int64_t n, int64_t k, int64_t *chunk);

/* Scratch bytes a product may take: contiguous copies of a and of a
 * plain b (taken only when neither inner stride is 1) and the split-K
 * partials, each rounded up to 256. */
uint64_t wg_gemm_scratch_bytes(uint64_t a_bytes, uint64_t b_bytes, int64_t batches, int64_t m, int64_t n,
                               int64_t k);

/* The reference: out[z][i][j] = act(alpha sum_k a[z][i][k] b[z][k][j] +
 * beta c[z][i][j] + bias[z][i][j]) in double over dense row-major
 * arrays, every operand already broadcast to its batch (c, bias NULL:
 * absent; beta 0 never reads c). */
void wg_gemm_ref(int64_t batches, int64_t m, int64_t n, int64_t k, const double *a, const double *b,
                 const double *c, const double *bias, const wgml_matmul_params *p, double *out);

#endif
