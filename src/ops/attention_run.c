/*
 * wgml_attention's dispatch: operands as windows over the iteration space
 * [B, Hkv, G, Sq] (G = q heads per KV head), cut by the shared window
 * binder (wg_win_split) where q, out, the mask or the partials exceed one
 * storage binding; keys that exceed one binding run in pieces, each
 * merging into the partial runs (split mode, flag CARRY), then the
 * reduce pass.  Kernel: attention.wgsl.
 */
#include "attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    F_CAUSAL = 1, F_WINDOW = 2, F_SOFTCAP = 4, F_MASK = 8, F_ALIBI = 16, F_SINKS = 32, F_CARRY = 64,
    F_MASK16 = 128, F_MASK8 = 256, /* the mask's dtype (f32 without either): it is read raw, see below */
    F_SPLIT = 512,                 /* partial runs to the scratch: a flag, so split and whole runs share a kernel */
    F_KVEC = 1024, F_VVEC = 2048,  /* decode and fa: K / V octets are aligned 16-byte vectors (attention_kv.wgsl) */
    F_MROW = 4096,                 /* dsg: one mask element serves every row of a block (attention_dsg.wgsl) */
    F_PF = 8192,                   /* dsg: prefetch, on CPU drivers (a define on GPUs) */
};

/* attention.wgsl's Params. */
typedef struct attn_params {
    uint32_t dims[4], blk[4], org[4], offs[4], offs2[4], ss[4];
    float fp[4];
    uint32_t ip[4], hq[4], qs[4], ms[4], os[4], kv[4], in1[4], in2[4];
} attn_params;
_Static_assert(sizeof(attn_params) <= WG_PARAMS_MAX, "attention params exceed the uniform slot");

/* Workgroups a splitkv dispatch aims at: an H100's 132 SMs hold about 3
 * decode workgroups each (128 threads of ~150 registers), so 1024 are ~2.6
 * waves: every SM streams K/V to the end, and the last wave is mostly
 * full.  Decode at 8192 keys x 8 KV heads: 128 chunks of 64 keys. */
#define SPLIT_TARGET_GROUPS 1024

/* Threads a dsg dispatch aims at: 64K = 512 workgroups of 128, 3-4 on
 * each SM of an H100 / H200 (132 SMs; dsg holds ~119 registers a thread
 * and ~10.6 KB of workgroup memory).  A workgroup's keys run as a
 * dependent chain of ~1 µs a tile (2 keys a key group), so time is about
 * waves x tiles a workgroup, and more workgroups at once is what helps:
 * on the H200 (8B shape, 8 KV heads) 64 chunks a row ran 32768 keys in
 * 59-61 µs against 66-67 with 32 chunks, and the decoder block at KV
 * 16384 in 148-155 µs against 165-167 (bench/NOTES.md 2026-11-27 (4),
 * call 5).  Fewer where the keys run out first: chunks take at least one
 * tile and WG_ATTN_DSG_MIN_CHUNK keys (8B decode at KV 768: 24 chunks of
 * 32 keys, 192 workgroups, a single DRAM round trip each). */
#define DSG_TARGET_THREADS 65536

enum { O_Q, O_K, O_V, O_M, O_S, O_O, NOPS };

typedef struct attn_job {
    wgml_ctx *ctx;
    wgml_kernel *k;
    const wg_attn_variant *var;
    attn_params base;
    bool raw[NOPS];       /* operand bound as raw bytes (q8_0 K/V, the mask; every K/V of the decode kernel) */
    bool vec16;           /* decode: K/V bound as 16-byte vectors */
    int64_t nsp;          /* splits per dispatch (1 unless splitkv or dsg) */
    int64_t bq;           /* rows per workgroup */
    int64_t rds;          /* reduce pass: value dims per workgroup */
} attn_job;

static wg_binding bind(const wg_win *w, const int64_t iter[4], bool raw, bool vec16, uint32_t *off)
{
    if (!raw)
        return wg_win_bind(w, iter, off);
    uint64_t rem; /* raw: the kernel addresses bytes from the window's first element (q8_0: block) */
    uint64_t need = wg_win_bytes(w, iter);
    /* 16-byte vectors: the binding also covers the rest of the vector that
     * holds the last byte, and ends on a whole vector (array<vec4<u32>>).
     * Bindings start at multiples of minStorageBufferOffsetAlignment (>= 32),
     * end at most at the buffer's allocation (a multiple of 16) or a window
     * of a multiple of 256, so rounding down never cuts the data. */
    wg_binding b = wg_bind_from(w->buf, w->offset * w->esz, need + (vec16 ? 15 : 0), &rem);
    if (vec16)
        b.size = wg_align_down(b.size, 16);
    *off = (uint32_t)rem;
    return b;
}

static wgml_status attn_block(void *user, const wg_win *w, const int64_t iter[4], const int64_t origin[4])
{
    const attn_job *j = user;
    attn_params p = j->base;
    wg_binding b[NOPS];
    uint32_t off[NOPS] = {0};
    for (int i = 0; i < NOPS; i++)
        b[i] = w[i].buf ? bind(&w[i], iter, j->raw[i], j->vec16 && (i == O_K || i == O_V), &off[i]) : b[O_Q];
    for (int i = 0; i < 4; i++) {
        p.blk[i] = (uint32_t)iter[i];
        p.org[i] = (uint32_t)origin[i];
        p.offs[i] = off[i];
    }
    p.offs2[0] = off[O_S];
    p.offs2[1] = off[O_O];
    int64_t rows = iter[2] * iter[3], nrb = (rows + j->bq - 1) / j->bq;
    uint64_t groups = (uint64_t)(iter[0] * iter[1] * nrb * j->nsp);
    return wg_dispatch(j->ctx, j->k, b, NOPS, &p, sizeof p, (uint32_t)groups, 1, 1);
}

static wgml_status reduce_block(void *user, const wg_win *w, const int64_t iter[4], const int64_t origin[4])
{
    const attn_job *j = user;
    (void)origin;
    attn_params p = j->base;
    wg_binding b[3];
    uint32_t off[3] = {0};
    for (int i = 0; i < 3; i++)
        b[i] = w[i].buf ? wg_win_bind(&w[i], iter, &off[i]) : b[0];
    for (int i = 0; i < 4; i++)
        p.blk[i] = (uint32_t)iter[i];
    p.offs2[1] = off[0];
    p.offs2[0] = off[1];
    p.offs[3] = off[2];
    uint64_t nds = (uint64_t)(j->base.dims[3] + j->rds - 1) / (uint64_t)j->rds;
    return wg_dispatch(j->ctx, j->k, b, 3, &p, sizeof p, (uint32_t)((uint64_t)(iter[0] * iter[1] * iter[2] * iter[3]) * nds),
                       1, 1);
}

static const char *wgsl_dt(wgml_dtype t) { return t == WGML_Q8_0 ? "u32" : wg_dtype(t)->wgsl; }

/* attention_decode.wgsl's K_KIND / V_KIND. */
static int kv_kind(wgml_dtype t) { return t == WGML_F32 ? 0 : t == WGML_F16 ? 1 : 2; }

/* Whether the decode kernel may load K or V (a [B, H, S, d] view) by
 * 16-byte vectors of 8 elements: f16 or f32, contiguous along d, d a
 * multiple of 8, and every key's octets 16-byte aligned (offset and the
 * b, h, s strides; windows move by multiples of those, and bindings start
 * at multiples of 16). */
static bool vec_ok(const wgml_tensor *t, const wg_view4 *v, int64_t d)
{
    int64_t esz = t->dtype == WGML_F16 ? 2 : t->dtype == WGML_F32 ? 4 : 0;
    if (!esz || v->strides[3] != 1 || d % 8 || ((int64_t)v->offset * esz) % 16)
        return false;
    for (int i = 0; i < 3; i++)
        if ((v->strides[i] * esz) % 16)
            return false;
    return true;
}

/* Strides of a [B, H, S, X] view over [B, Hkv, G, Sq] (head = hkv G + g). */
static void space_st(const wg_view4 *v, int64_t g, int64_t st[4])
{
    st[0] = v->strides[0];
    st[1] = v->strides[1] * g;
    st[2] = v->strides[1];
    st[3] = v->strides[2];
}

static wg_win win(const wgml_tensor *t, uint64_t offset, const int64_t st[4], uint64_t tail, const char *name)
{
    const wg_dtype_info *d = wg_dtype(t->dtype);
    wg_win w = {t->st->buf, offset, {st[0], st[1], st[2], st[3]}, d->block_bytes, tail, name};
    if (d->block_elems > 1) { /* q8_0: windows in blocks */
        w.offset /= d->block_elems;
        for (int i = 0; i < 4; i++)
            w.st[i] /= d->block_elems;
        w.tail /= d->block_elems;
    }
    return w;
}

/* dsg's launch (attention_dsg.wgsl): keys per key group per tile, lanes
 * per key, chunks and keys a chunk, for B x Hkv x nrb row blocks over a
 * piece of `piece` keys. */
typedef struct dsg_plan {
    int64_t kpt, lpk, nsp, L;
} dsg_plan;

static int env_int(const char *name)
{
    const char *e = getenv(name);
    return e ? atoi(e) : 0;
}

static dsg_plan plan_dsg(const wg_attn_variant *var, int64_t nblk, int64_t piece, int64_t dk, int64_t dv, bool f16kv,
                         bool cpu)
{
    dsg_plan d;
    d.lpk = wg_attn_lpk(dk, dv);
    /* 2 keys a tile on GPUs: the H100 scan (bench/NOTES.md, device call
     * 4; f16 K/V, 8B shape) gave 1 / 2 / 4 keys 33.7 / 30.4 / 30.8 µs a
     * call at KV 768, 53.3 / 50.9 / 52.9 at 8192 and 115.9 / 101.4 / 115.5
     * at 32768.  CPU drivers: 1, one kernel for every dtype (lavapipe took
     * ~5, 10 and 25 s of CPU to compile 1, 2 and 4).  WGML_ATTN_KPT=1|2|4
     * forces it (8 is taken as 4: splitkv's 8 spilled on the H100). */
    int kf = env_int("WGML_ATTN_KPT");
    d.kpt = kf == 1 || kf == 2 ? kf : kf >= 4 ? 4 : cpu ? 1 : 2;
    int64_t tile = var->tn / d.lpk * d.kpt;
    /* WGML_ATTN_MINCHUNK=n (timing): fewest keys a chunk (graphs grow their
     * scratch to fit; eager calls may refuse more chunks than declared) */
    int mf = env_int("WGML_ATTN_MINCHUNK");
    int64_t mc = mf > 0 ? mf : WG_ATTN_DSG_MIN_CHUNK;
    int64_t minc = tile > mc ? tile : mc;
    int64_t most = (piece + minc - 1) / minc;
    most = most > WG_ATTN_DSG_MAX_CHUNKS ? WG_ATTN_DSG_MAX_CHUNKS : most; /* <= wg_attn_dsg_max_chunks(piece) */
    int64_t n = (DSG_TARGET_THREADS + nblk * var->tn - 1) / (nblk * var->tn);
    /* WGML_ATTN_CHUNKS=n: chunks a row forced (1: no merge pass), for timing */
    int cf = env_int("WGML_ATTN_CHUNKS");
    if (cf > 0)
        n = cf;
    n = n < 1 ? 1 : n > most ? most : n;
    /* whole tiles a chunk, so only a row's last chunk ends in a part tile */
    d.L = ((piece + n - 1) / n + tile - 1) / tile * tile;
    d.nsp = (piece + d.L - 1) / d.L;
    return d;
}

typedef struct attn_ops {
    const wgml_tensor *t[NOPS];
    wg_view4 v[NOPS];
} attn_ops;

static wgml_status get_kernel(wgml_ctx *ctx, const char *defs, int nb, unsigned ro, const char *entry,
                              wgml_kernel **k)
{
    wg_kernel_ref ref = {"attention.wgsl", entry, defs, nb, ro};
    return wg_kernel_get(ctx, &ref, k);
}

static wgml_status check_operands(const wgml_tensor *q, const wgml_tensor *k, const wgml_tensor *v,
                                  const wgml_tensor *mask, const wgml_tensor *sinks, const wgml_attn_params *p,
                                  wgml_tensor *out)
{
    const char *name = "wgml_attention";
    wgml_status st = wg_check_tensor(name, "q", q);
    if (st == WGML_OK)
        st = wg_check_tensor(name, "k", k);
    if (st == WGML_OK)
        st = wg_check_tensor(name, "v", v);
    if (st == WGML_OK)
        st = wg_check_tensor(name, "out", out);
    if (st != WGML_OK)
        return st;
    if (!wg_same_ctx(q, k) || !wg_same_ctx(q, v) || !wg_same_ctx(q, out) || !wg_same_ctx(q, mask) ||
        !wg_same_ctx(q, sinks))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", name);
    wg_op_params op = {.dtype = out->dtype, .attn = *p};
    wg_desc d[5], o;
    const wgml_tensor *ts[5] = {q, k, v, mask, sinks};
    const wg_desc *dp[5] = {0};
    for (int i = 0; i < 5; i++)
        if (ts[i]) {
            d[i].dtype = ts[i]->dtype;
            d[i].ndim = ts[i]->ndim;
            memcpy(d[i].shape, ts[i]->shape, sizeof d[i].shape);
            dp[i] = &d[i];
        }
    if ((st = wg_ck_attention(&op, dp, 5, &o)) != WGML_OK)
        return wg_failp(st, "%s: ", name);
    if ((st = wg_check_out(name, out, (int)o.dtype, 4, o.shape)) != WGML_OK)
        return st;
    for (int i = 1; i < 3; i++)
        if (ts[i]->dtype == WGML_Q8_0 && ts[i]->strides[3] != 1)
            return wg_fail(WGML_ERR_INVALID_ARG, "%s: q8_0 %s must have its blocks along D (stride 1)", name,
                           i == 1 ? "k" : "v");
    return wg_check_writes(name, "out", out, false, "q", q, "k", k, "v", v, "mask", mask, "sinks", sinks, WG_END);
}

wgml_status wg_attention_impl(const wgml_tensor *q, const wgml_tensor *k, const wgml_tensor *v,
                              const wgml_tensor *mask, const wgml_tensor *sinks, const wgml_attn_params *params,
                              wgml_tensor *out)
{
    wgml_attn_params pa = {0};
    if (params)
        pa = *params;
    wgml_status st = check_operands(q, k, v, mask, sinks, &pa, out);
    if (st != WGML_OK)
        return st;
    wgml_ctx *ctx = q->ctx;
    int64_t B = q->shape[0], Hq = q->shape[1], Sq = q->shape[2], D = q->shape[3];
    int64_t Hkv = k->shape[1], Skv = k->shape[2], Dv = v->shape[3], G = Hkv ? Hq / Hkv : 1;
    if (wgml_tensor_nelem(out) == 0)
        return WGML_OK;
    if (Skv == 0) /* every row sees no key */
        return wg_fill_impl(out, 0);
    wgml_device_info info;
    if ((st = wgml_device_info_get(ctx, &info)) != WGML_OK)
        return st;
    wg_attn_facts facts = {info.max_workgroup_storage, info.max_invocations_per_workgroup, info.subgroup_size,
                           (info.features & WGML_FEATURE_F16) != 0, wg_is_cpu(ctx)};
    /* GPUs: the common head dims get kernels of their own (DEXACT: constant
     * loop bounds, unrolled), others pad to 16.  CPU drivers: D is always a
     * runtime bound and the workgroup arrays take a class of 64, 128 or 256,
     * so one compiled kernel serves every head dim of a class (lavapipe
     * takes 2-4 s of CPU to compile one of these kernels; the constant
     * bound buys a CPU nothing). */
    bool exact = !facts.cpu && D == Dv && (D == 64 || D == 80 || D == 96 || D == 128 || D == 256);
    int64_t dk = exact ? D : facts.cpu ? wg_attn_class(D) : wg_attn_pad(D);
    int64_t dvp = exact ? Dv : facts.cpu ? wg_attn_class(Dv) : wg_attn_pad(Dv < 1 ? 1 : Dv);
    const wg_attn_variant *var;
    if ((st = wg_attn_choose(&facts, G * Sq, Skv, dk, dvp, &var)) != WGML_OK)
        return st;

    attn_ops o;
    memset(&o, 0, sizeof o);
    const wgml_tensor *ts[NOPS] = {q, k, v, mask, sinks, out};
    memcpy(o.t, ts, sizeof ts);
    const int64_t full[4] = {B, Hq, Sq, Skv};
    for (int i = 0; i < NOPS; i++)
        if (o.t[i])
            o.v[i] = wg_view4_of(o.t[i]);
    if (mask)
        wg_view4_bcast(mask, full, &o.v[O_M]); /* the check proved it broadcasts */
    bool mbool = mask && (mask->dtype == WGML_BOOL || mask->dtype == WGML_U8);

    /* Keys per piece: as many as k, v and one mask row fit in a binding. */
    wg_win kw[3];
    {
        int64_t ks[4] = {0, 0, 0, o.v[O_K].strides[2]}, vs[4] = {0, 0, 0, o.v[O_V].strides[2]};
        int64_t ms[4] = {0, 0, 0, mask ? o.v[O_M].strides[3] : 0};
        kw[0] = win(k, o.v[O_K].offset, ks, (uint64_t)((D - 1) * o.v[O_K].strides[3]), "k");
        kw[1] = win(v, o.v[O_V].offset, vs, (uint64_t)((Dv - 1) * o.v[O_V].strides[3]), "v");
        kw[2] = mask ? win(mask, o.v[O_M].offset, ms, 0, "mask") : (wg_win){0};
    }
    const int64_t keys[4] = {1, 1, 1, Skv};
    int64_t piece = wg_win_most(ctx, kw, 3, keys, 3, UINT64_MAX);
    if (piece == 0)
        return wg_fail_window(ctx, wg_win_bytes(&kw[0], (const int64_t[4]){1, 1, 1, 1}),
                              "wgml_attention: one key of k (head dim %lld)", (long long)D);
    /* Decode rows per workgroup: the rows a KV head serves, rounded up to
     * 1, 2, 4 or 8 on GPUs (registers hold BQ rows of q and acc).  CPU
     * drivers take 4 rows and 1 key per thread per tile always: one
     * compiled kernel, and lavapipe's compile time grows with the arrays
     * that live across barriers (8 rows x 4 keys took it ~6 s, 4 x 1 ~1.5). */
    int64_t bq = var->bq, kpt = 0;
    if (var->split && !var->sg) {
        int64_t rows = G * Sq < var->bq ? G * Sq : var->bq;
        bq = 1;
        while (bq < rows)
            bq *= 2;
        /* Keys per thread per tile: 4 for f16 K/V up to 4 rows, else 2
         * (f32 octets take twice the registers); fewer where workgroup
         * memory is short.  H100, 32 heads / 8 KV heads, D 128, f16, a
         * 16-call batch: 8 keys (16 loads of 16 bytes in flight, ~150
         * registers) took 114 / 241 µs at KV 8192 / 32768, 4 keys 88 /
         * 201, 2 keys 96 / 207; the 8B decode 133.5 tokens/s with 8, 138.7
         * with 4 (bench/NOTES.md). */
        kpt = bq <= 4 && k->dtype == WGML_F16 && v->dtype == WGML_F16 ? var->bk / 2 : var->bk / 4;
        /* WGML_ATTN_KPT=1|2|4|8: keys per thread forced, for timing the
         * register pressure against loads in flight (bench/NOTES.md) */
        int kf = env_int("WGML_ATTN_KPT");
        if (kf == 1 || kf == 2 || kf == 4 || kf == 8)
            kpt = kf;
        if (facts.cpu)
            bq = 4, kpt = 1;
        while (kpt > 1 && wg_attn_dec_smem(bq, kpt, var->tn).bytes > facts.smem)
            kpt /= 2;
    }
    int64_t nrb = (G * Sq + bq - 1) / bq, nsp = 1, L = piece;
    dsg_plan dp = {0};
    if (var->sg) {
        /* 4 rows a workgroup whatever the rows (they are a vec4's lanes) */
        dp = plan_dsg(var, B * Hkv * nrb, piece, dk, dvp, k->dtype == WGML_F16 && v->dtype == WGML_F16, facts.cpu);
        nsp = dp.nsp;
        L = dp.L;
    } else if (var->split) {
        nsp = (SPLIT_TARGET_GROUPS + B * Hkv * nrb - 1) / (B * Hkv * nrb);
        int64_t most = wg_attn_max_splits(piece); /* <= what wg_sc_attention declares */
        nsp = nsp < 1 ? 1 : nsp > most ? most : nsp;
        L = (piece + nsp - 1) / nsp;
        nsp = (piece + L - 1) / L;
    }
    /* Partial runs and a reduce pass: splitkv always, dsg with more than
     * one chunk, any variant whose keys come in pieces. */
    bool split = (var->split && (!var->sg || nsp > 1)) || piece < Skv;

    /* Kernel defines. */
    wgml_tensor *part = NULL;
    if (split) {
        /* dsg writes every run its merge reads (empty chunks too), so its
         * scratch skips the zero fill (a graph replays that fill as one
         * more dependent dispatch per layer) */
        const int64_t n[1] = {B * Hq * Sq * nsp * (Dv + 2)};
        st = var->sg ? wg_scratch_tensor_raw(ctx, WGML_F32, 1, n, &part) : wg_scratch_tensor(ctx, WGML_F32, 1, n, &part);
        if (st != WGML_OK)
            return st;
    }
    wgml_buffer *wbuf = split ? part->st->buf : out->st->buf;
    char defs[768];
    size_t u;
    /* Whether K / V octets are aligned 16-byte vectors: the flags F_KVEC /
     * F_VVEC, and for dsg and fa on GPUs the constants KVEC / VVEC (on CPU
     * drivers the flags, so one compiled kernel serves both) */
    bool kvec = vec_ok(k, &o.v[O_K], D), vvec = vec_ok(v, &o.v[O_V], Dv);
    const char *kvd = facts.cpu ? "flag(F_KVEC)" : kvec ? "true" : "false";
    const char *vvd = facts.cpu ? "flag(F_VVEC)" : vvec ? "true" : "false";
    if (var->split) {
        char kk[24] = "(p.ss.w & 3u)", vk[24] = "((p.ss.w >> 2u) & 3u)"; /* CPU: uniforms (one kernel) */
        if (!facts.cpu) {
            snprintf(kk, sizeof kk, "%du", kv_kind(k->dtype));
            snprintf(vk, sizeof vk, "%du", kv_kind(v->dtype));
        }
        if (var->sg) {
            /* prefetch (PF) and whether K / V octets are 16-byte vectors
             * (KVEC, VVEC): constants on GPUs, flags on CPU drivers (dsg
             * and dsg_np then share one compiled kernel).  With the vector
             * flags as uniforms every octet load sat in a branch of its
             * own on GPUs (H200 SASS, bench/NOTES.md 2026-11-26 (7)). */
            /* QSM: q read from workgroup memory in each tile, not held in
             * registers (attention_dsg.wgsl says why); WGML_ATTN_QREG=1
             * holds it (timing, GPUs) */
            bool qsm = facts.cpu || env_int("WGML_ATTN_QREG") != 1;
            u = (size_t)snprintf(defs, sizeof defs, "DECODE;DSG;KRAW;VRAW;BQ=%lld;WG=%d;LPK=%lld;KPT=%lld;KPT2=%d;"
                                 "KPT4=%d;DK=%lld;DV=%lld;K_KIND=%s;V_KIND=%s;PF=%s;KVEC=%s;VVEC=%s;%s%s", (long long)bq,
                                 var->tn, (long long)dp.lpk, (long long)dp.kpt, dp.kpt >= 2, dp.kpt >= 4,
                                 (long long)dk, (long long)dvp, kk, vk,
                                 facts.cpu ? "flag(F_PF)" : var->rq ? "true" : "false",
                                 kvd, vvd, qsm ? "QSM;" : "",
                                 exact ? "DEXACT;" : facts.cpu ? "ROLLED;" : "");
        } else {
            wg_attn_dec_mem dm = wg_attn_dec_smem(bq, kpt, var->tn);
            u = (size_t)snprintf(defs, sizeof defs, "DECODE;KRAW;VRAW;BQ=%lld;WG=%d;KPT=%lld;SPN=%lld;RPR=%lld;"
                                 "DK=%lld;DV=%lld;K_KIND=%s;V_KIND=%s;%s%s", (long long)bq, var->tn, (long long)kpt,
                                 (long long)dm.spn, (long long)dm.rpr, (long long)dk, (long long)dvp, kk, vk,
                                 exact ? "DEXACT;" : "", facts.cpu ? "ROLLED;" : "");
        }
    } else if (var->fa) {
        /* attention_fa.wgsl: head dims rounded up to 32, NV = Dv / 32
         * accumulator vectors a row */
        int64_t k32 = wg_attn_pad32(dk), v32 = wg_attn_pad32(dvp);
        /* PF: a tile's K and V octets (BK keys x D / 8) fit two (or with
         * PU4 four) registers of each thread, so they are loaded a phase
         * ahead.  CPU drivers: two at most (lavapipe compiles barriers as
         * coroutines, and 4 octets live across them doubled fa32's compile
         * time at D 128); so fa32 at D 128 keeps the plain loads there */
        int wgt = var->bq / var->rq * var->tn;
        int64_t w32 = k32 > v32 ? k32 : v32, units = (var->bk * w32 / 8 + wgt - 1) / wgt;
        /* WGML_ATTN_FA_PF=0: no loads a phase ahead (timing: registers
         * against loads in flight, bench/NOTES.md) */
        const char *pfe = getenv("WGML_ATTN_FA_PF");
        bool pf = units <= (facts.cpu ? 2 : 4) && !(pfe && pfe[0] == '0');
        u = (size_t)snprintf(defs, sizeof defs, "FA;BQ=%d;BK=%d;WG=%d;DK=%lld;DV=%lld;KVW=%lld;NV2=%d;NV3=%d;"
                             "NV4=%d;NQ2=%d;NQ3=%d;NQ4=%d;NK4=%d;KRAW;VRAW;K_KIND=%du;V_KIND=%du;PF=%d;PU4=%d;"
                             "KVEC=%s;VVEC=%s;%s",
                             var->bq, var->bk, wgt, (long long)k32, (long long)v32, (long long)w32, v32 >= 64,
                             v32 >= 96, v32 >= 128, k32 >= 64, k32 >= 96, k32 >= 128, var->bk == 32,
                             kv_kind(k->dtype), kv_kind(v->dtype), pf, pf && units > 2,
                             kvd, vvd, facts.cpu ? "ROLLED;" : "");
    } else {
        u = (size_t)snprintf(defs, sizeof defs, "BQ=%d;RQ=%d;BK=%d;TN=%d;WG=%d;DK=%lld;DV=%lld;KVW=%lld;%s%s%s%s",
                             var->bq, var->rq, var->bk, var->tn, var->bq / var->rq * var->tn, (long long)dk,
                             (long long)dvp, (long long)(dk > dvp ? dk : dvp), exact ? "DEXACT;" : "",
                             k->dtype == WGML_Q8_0 ? "K_Q8;KRAW;" : "", v->dtype == WGML_Q8_0 ? "V_Q8;VRAW;" : "",
                             facts.cpu ? "ROLLED;" : "");
    }
    static const char *const up[NOPS] = {"Q", "K", "V", "M", "S", "O"};
    unsigned ro = 0;
    for (int i = 0; i < NOPS; i++) {
        const wgml_tensor *t = i == O_O ? NULL : o.t[i] ? o.t[i] : q;
        bool rw = i == O_O || t->st->buf == wbuf;
        if (!rw)
            ro |= 1u << i;
        /* out is rw (split runs read the carried partials) and f32 when split;
         * the mask is read as raw words, whatever its dtype (or none); the
         * decode and fa kernels read K and V as raw 16-byte vectors */
        bool v16 = (var->split || var->fa) && (i == O_K || i == O_V);
        const char *mode = i == O_O || rw ? (v16 ? "rw4" : "rw") : v16 ? "r4" : "r";
        const char *dt = i == O_O ? (split ? "f32" : wg_dtype(out->dtype)->wgsl)
                         : i == O_M || v16 ? "u32" : wgsl_dt(t->dtype);
        u += (size_t)snprintf(defs + u, sizeof defs - u, "%s_DT=%s;%s_MODE=%s;", up[i], dt, up[i], mode);
    }
    attn_job job;
    memset(&job, 0, sizeof job);
    job.ctx = ctx;
    job.var = var;
    job.raw[O_K] = k->dtype == WGML_Q8_0 || var->split || var->fa;
    job.raw[O_V] = v->dtype == WGML_Q8_0 || var->split || var->fa;
    job.raw[O_M] = mask != NULL;
    job.vec16 = var->split || var->fa;
    job.nsp = nsp;
    job.bq = bq;
    job.rds = var->sg ? 16 : 32; /* attn_merge's MDS, attn_reduce's RDS */
    if (st == WGML_OK)
        st = get_kernel(ctx, defs, NOPS, ro, var->sg ? "attn_dsg" : var->split ? "attn_dec" : "attn", &job.k);

    /* Parameters every block shares. */
    attn_params *p = &job.base;
    double nhl2 = 1;
    while (nhl2 * 2 <= (double)Hq)
        nhl2 *= 2;
    p->dims[0] = (uint32_t)Sq;
    p->dims[2] = (uint32_t)D;
    p->dims[3] = (uint32_t)Dv;
    p->ss[0] = 1; /* ROLLED's loop bound factor */
    p->ss[1] = (uint32_t)nsp;
    p->ss[2] = (uint32_t)L;
    p->ss[3] = (uint32_t)(kv_kind(k->dtype) | kv_kind(v->dtype) << 2); /* decode on CPU drivers: K/V dtypes */
    p->fp[0] = pa.scale != 0 ? pa.scale : (float)(1 / sqrt((double)D));
    p->fp[1] = pa.softcap;
    p->fp[2] = (float)(-pa.max_bias / nhl2);
    p->fp[3] = (float)(-pa.max_bias / 2 / nhl2);
    p->ip[0] = (uint32_t)Sq;
    p->ip[1] = (uint32_t)Skv;
    p->ip[2] = (uint32_t)(pa.window < (int64_t)UINT32_MAX / 4 ? pa.window : UINT32_MAX / 4);
    p->ip[3] = (uint32_t)nhl2;
    p->hq[0] = (uint32_t)G;
    if (sinks) {
        p->hq[1] = (uint32_t)(sinks->strides[0] * G);
        p->hq[2] = (uint32_t)sinks->strides[0];
    }
    /* Feature switches are uniform flags, not defines: one compiled kernel
     * serves every combination (the branches are uniform per dispatch, and
     * the key loop's only per-key branches are the masks themselves). */
    unsigned flags = (pa.causal ? F_CAUSAL : 0) | (pa.window > 0 ? F_WINDOW : 0) | (pa.softcap > 0 ? F_SOFTCAP : 0) |
                     (mask ? F_MASK : 0) | (mask && !mbool && pa.max_bias > 0 ? F_ALIBI : 0) |
                     (sinks && !split ? F_SINKS : 0) | (mask && mask->dtype == WGML_F16 ? F_MASK16 : 0) |
                     (mbool ? F_MASK8 : 0) | (split ? F_SPLIT : 0) |
                     ((var->split || var->fa) && kvec ? F_KVEC : 0) | ((var->split || var->fa) && vvec ? F_VVEC : 0) |
                     /* a block's rows are heads g and queries i of one (b, hkv) */
                     (var->sg && mask && o.v[O_M].strides[1] == 0 && (o.v[O_M].strides[2] == 0 || Sq == 1) ? F_MROW
                                                                                                          : 0) |
                     (var->sg && var->rq ? F_PF : 0);
    int64_t st4[NOPS][4];
    for (int i = 0; i < NOPS; i++)
        if (o.t[i] && i != O_S)
            space_st(&o.v[i], G, st4[i]);
    for (int i = 0; i < 4; i++) {
        p->qs[i] = (uint32_t)st4[O_Q][i];
        p->ms[i] = mask ? (uint32_t)st4[O_M][i] : 0;
        p->os[i] = (uint32_t)st4[O_O][i];
    }
    p->kv[0] = (uint32_t)o.v[O_K].strides[0];
    p->kv[1] = (uint32_t)o.v[O_K].strides[1];
    p->kv[2] = (uint32_t)o.v[O_V].strides[0];
    p->kv[3] = (uint32_t)o.v[O_V].strides[1];
    p->in1[0] = (uint32_t)o.v[O_Q].strides[3];
    p->in1[1] = (uint32_t)o.v[O_K].strides[2];
    p->in1[2] = (uint32_t)o.v[O_K].strides[3];
    p->in1[3] = (uint32_t)o.v[O_V].strides[2];
    p->in2[0] = (uint32_t)o.v[O_V].strides[3];
    p->in2[1] = mask ? (uint32_t)o.v[O_M].strides[3] : 0;
    p->in2[2] = (uint32_t)o.v[O_O].strides[3];
    int64_t R = nsp * (Dv + 2);
    int64_t pst[4] = {Hkv * G * Sq * R, G * Sq * R, Sq * R, R};
    if (split)
        for (int i = 0; i < 4; i++)
            p->os[i] = (uint32_t)pst[i];

    /* The attention pass, piece by piece of the keys. */
    const int64_t iter[4] = {B, Hkv, G, Sq};
    const int64_t kst[4] = {o.v[O_K].strides[0], o.v[O_K].strides[1], 0, 0};
    const int64_t vst[4] = {o.v[O_V].strides[0], o.v[O_V].strides[1], 0, 0};
    const int64_t sst[4] = {0, sinks ? sinks->strides[0] * G : 0, sinks ? sinks->strides[0] : 0, 0};
    char who[96];
    snprintf(who, sizeof who, "wgml_attention (variant %s)", var->name);
    for (int64_t j0 = 0; j0 < Skv && st == WGML_OK; j0 += piece) {
        int64_t n = Skv - j0 < piece ? Skv - j0 : piece;
        wg_win w[NOPS] = {0};
        w[O_Q] = win(q, o.v[O_Q].offset, st4[O_Q], (uint64_t)((D - 1) * o.v[O_Q].strides[3]), "q");
        w[O_K] = win(k, o.v[O_K].offset + (uint64_t)(j0 * o.v[O_K].strides[2]), kst,
                     (uint64_t)((n - 1) * o.v[O_K].strides[2] + (D - 1) * o.v[O_K].strides[3]), "k");
        w[O_V] = win(v, o.v[O_V].offset + (uint64_t)(j0 * o.v[O_V].strides[2]), vst,
                     (uint64_t)((n - 1) * o.v[O_V].strides[2] + (Dv - 1) * o.v[O_V].strides[3]), "v");
        if (mask)
            w[O_M] = win(mask, o.v[O_M].offset + (uint64_t)(j0 * o.v[O_M].strides[3]), st4[O_M],
                         (uint64_t)((n - 1) * o.v[O_M].strides[3]), "mask");
        if (sinks && !split)
            w[O_S] = win(sinks, wg_view4_of(sinks).offset, sst, 0, "sinks");
        if (split)
            w[O_O] = win(part, wg_view4_of(part).offset, pst, (uint64_t)(R - 1), "partials");
        else
            w[O_O] = win(out, o.v[O_O].offset, st4[O_O], (uint64_t)((Dv - 1) * o.v[O_O].strides[3]), "out");
        p->dims[1] = (uint32_t)n;
        p->offs2[2] = (uint32_t)j0;
        p->offs2[3] = flags | (j0 > 0 ? F_CARRY : 0);
        if (!var->split)
            p->ss[2] = (uint32_t)n;
        st = wg_win_split(ctx, w, NOPS, iter, 4, 1u << 30, who, attn_block, &job);
    }

    /* The reduce pass: partial runs -> out. */
    if (split && st == WGML_OK) {
        bool prw = part->st->buf == out->st->buf, srw = sinks && sinks->st->buf == out->st->buf;
        snprintf(defs, sizeof defs, "REDUCE;PART_MODE=%s;S_DT=%s;S_MODE=%s;O_DT=%s;O_MODE=w", prw ? "rw" : "r",
                 sinks ? "f32" : "f32", (sinks ? srw : prw) ? "rw" : "r", wg_dtype(out->dtype)->wgsl);
        unsigned rro = (prw ? 0u : 1u) | ((sinks ? srw : prw) ? 0u : 2u);
        if ((st = get_kernel(ctx, defs, 3, rro, var->sg ? "attn_merge" : "attn_reduce", &job.k)) == WGML_OK) {
            attn_params *r = &job.base;
            memset(r->offs2, 0, sizeof r->offs2);
            r->offs2[3] = sinks ? F_SINKS : 0;
            for (int i = 0; i < 4; i++) {
                r->os[i] = (uint32_t)pst[i];
                r->ms[i] = (uint32_t)st4[O_O][i];
            }
            r->in2[2] = (uint32_t)o.v[O_O].strides[3];
            wg_win w[3] = {win(part, wg_view4_of(part).offset, pst, (uint64_t)(R - 1), "partials"), {0},
                           win(out, o.v[O_O].offset, st4[O_O], (uint64_t)((Dv - 1) * o.v[O_O].strides[3]), "out")};
            if (sinks)
                w[1] = win(sinks, wg_view4_of(sinks).offset, sst, 0, "sinks");
            st = wg_win_split(ctx, w, 3, iter, 4, 1u << 30, "wgml_attention (reduce)", reduce_block, &job);
        }
    }
    wgml_tensor_free(part);
    return st;
}
