/*
 * Attention (wgml_attention): the op table row (check, scratch, encode),
 * the variant table, the registry row and the CPU reference.  Dispatch is
 * in attention_run.c, the kernel in src/kernels/attention.wgsl.
 *
 * Semantics (sharpening wgml.h; the reference below is the oracle):
 *   s_ij = scale * q_i . k_j; softcap > 0: s = softcap * tanh(s / softcap);
 *   additive mask: s += slope(h) * mask (slope 1 without ALiBi; ALiBi
 *   needs a mask, as in softmax and ggml), a -inf entry masks the key;
 *   boolean mask (bool/u8): zero masks the key; causal: key j visible
 *   when j <= i + Skv - Sq; window W > 0: also j > i + Skv - Sq - W;
 *   out_i = sum_j exp(s_ij - m) v_j / (sum_j exp(s_ij - m) + exp(sink_h - m)),
 *   m the max over visible s_ij and the sink; no visible key: 0.
 */
#include "attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ variants */

/* The tile shapes (attention.wgsl's BQ, RQ, BK, TN).  Workgroup memory
 * holds Q (BQ x DK), one K/V tile (BK x (max(DK, DV) + 1)), P (BQ x BK)
 * and three f32 per row, so the table's first fitting row wins:
 *   t64  64 queries, 4 per thread, 16 keys a tile: D 128 takes 45.8 KiB
 *        (an H100's 48 KiB); 256 threads, 64 rows of Q reuse each K/V tile;
 *   t32  32 queries, 2 per thread, 32 keys: 37 KiB at D 128;
 *   t16  16 queries, 1 per thread: 17.6 KiB at D 128 (lavapipe's 32 KiB),
 *        34 KiB at D 256;
 *   t8   8 queries, 8 threads along keys: 25 KiB at D 256;
 *   splitkv  the old decode kernel (attention_decode.wgsl): up to 8 rows
 *        (a KV head's grouped queries), 128 threads, up to 8 keys per
 *        thread per tile, the keys cut into chunks across workgroups
 *        (partials in scratch, then attn_reduce); its workgroup memory
 *        does not grow with D (23.2 KiB at 8 rows x 4 keys a thread, 9.7
 *        KiB at 1).  The CPU drivers' decode kernel; on GPUs forced only;
 *   dsg  the subgroup decode kernel (attention_dsg.wgsl): 4 rows a
 *        workgroup, 128 threads, key groups of wg_attn_lpk lanes, up to 4
 *        keys a group per tile, the next tile's K/V loaded before this
 *        one is computed; runs merged by attn_merge, or with one chunk
 *        written as the output (18.3 KiB at D 128);
 *   dsg_np  dsg loading each tile after the last (~40 fewer registers,
 *        no load in flight during the arithmetic), for timing against it;
 *   dsg_t256  dsg on 256 threads (twice the key groups): the GPUs' decode
 *        over at most 256 keys of 16-lane keys (D 128), a chunk one tile;
 *   fa64 / fa32  the register-tiled prefill kernel (attention_fa.wgsl):
 *        64 / 32 rows, 4 a thread, 8 lanes of a subgroup across dims,
 *        16 keys a tile, Q and O in named vector registers, the dot
 *        products summed across the lanes by subgroup shuffles; head dims
 *        up to 128 (rounded up to 32), subgroups of >= 8 lanes; 12 KiB for
 *        fa64 at D 128.  The GPUs' prefill kernel; on CPU drivers forced
 *        only.
 * Any variant runs split when the keys of one head do not fit a storage
 * binding (pieces merged through the partials, CARRY). */
static const wg_attn_variant variants[] = {
    {"t64", 64, 4, 16, 16, false, false, false},
    {"t32", 32, 2, 32, 16, false, false, false},
    {"t16", 16, 1, 16, 16, false, false, false},
    {"t8", 8, 1, 16, 8, false, false, false},
    {"splitkv", 8, 1, 8, 128, true, false, false},
    {"dsg", 4, 1, 4, 128, true, true, false},
    {"dsg_np", 4, 0, 4, 128, true, true, false},
    {"fa64", 64, 4, 16, 8, false, false, true},
    {"fa32", 32, 4, 16, 8, false, false, true},
    {"fa64k32", 64, 4, 32, 8, false, false, true},
    {"dsg_t256", 4, 1, 4, 256, true, true, false}, /* dsg on 256 threads: GPUs' decode up to 256 keys of D 128 */
};
#define NVAR 11
#define V_SPLITKV 4
#define V_DSG 5
#define V_FA64 7
#define V_DSG_T256 10
#define VAR_NAMES "t64, t32, t16, t8, splitkv, dsg, dsg_np, fa64, fa32, fa64k32, dsg_t256"

const wg_attn_variant *wg_attn_variant_at(int i) { return i >= 0 && i < NVAR ? &variants[i] : NULL; }

/* Padded head dims: multiples of 16 so TN (8 or 16) divides DV. */
int64_t wg_attn_pad(int64_t d) { return (d + 15) / 16 * 16; }

int64_t wg_attn_pad32(int64_t d) { return (d + 31) / 32 * 32; }

int64_t wg_attn_class(int64_t d) { return d <= 64 ? 64 : d <= 128 ? 128 : 256; }

/* attention_decode.wgsl: Sp (the partial dots: no octet lanes x a stride
 * of BQ x tile keys rounded up to 32, + up to 32 / no, at most BQ KPT WG +
 * 1024 floats; or the final merge's RPR rows x 8 floats a thread), Ss
 * (BQ x 16 key lanes x KPT scores), Ml (2 x 16 x BQ) and Rs (6 x BQ). */
wg_attn_dec_mem wg_attn_dec_smem(int64_t r, int64_t kpt, int64_t wg)
{
    wg_attn_dec_mem m;
    m.rpr = r * kpt / 8 < 1 ? 1 : r * kpt / 8 > r ? r : r * kpt / 8;
    int64_t a = r * kpt * wg + 1024, b = m.rpr * 8 * wg;
    m.spn = a > b ? a : b;
    m.bytes = 4u * (uint64_t)(m.spn + r * 16 * kpt + 2 * 16 * r + 6 * r);
    return m;
}

int wg_attn_lpk(int64_t dk, int64_t dv)
{
    int64_t o = ((dk > dv ? dk : dv) + 7) / 8;
    int l = 4;
    while (l < o)
        l *= 2;
    return l;
}

uint64_t wg_attn_smem(const wg_attn_variant *v, int64_t dk, int64_t dv)
{
    if (v->sg) { /* attention_dsg.wgsl: Aw (4 vec4 a thread), Mw and Lw (a vec4 a key group), Ri, slots, and
                  * Qs (32 floats a lane of a key) */
        uint64_t lpk = (uint64_t)wg_attn_lpk(dk, dv);
        return 16u * (4u * (uint64_t)v->tn + 2u * ((uint64_t)v->tn / lpk)) + 80u + 4u + 128u * lpk;
    }
    if (v->split) /* at its smallest tile: one key a thread */
        return wg_attn_dec_smem(v->bq, 1, v->tn).bytes;
    if (v->fa) { /* attention_fa.wgsl: one K/V tile, P, the slot counter */
        int64_t k32 = wg_attn_pad32(dk), v32 = wg_attn_pad32(dv), w = k32 > v32 ? k32 : v32;
        return 4u * (uint64_t)(v->bk * w + v->bk * v->bq + 1);
    }
    int64_t kvw = dk > dv ? dk : dv;
    return 4u * (uint64_t)(v->bq * dk + v->bk * (kvw + 1) + v->bq * v->bk + 3 * v->bq);
}

static bool fits(const wg_attn_variant *v, int64_t dk, int64_t dv, uint32_t smem, uint32_t max_inv)
{
    if (v->fa && (wg_attn_pad32(dk) > 128 || wg_attn_pad32(dv) > 128))
        return false; /* NV = Dv / 32 <= 4 named accumulator vectors a row */
    uint32_t threads = v->split ? (uint32_t)v->tn : (uint32_t)(v->bq / v->rq * v->tn);
    return wg_attn_smem(v, dk, dv) <= smem && threads <= max_inv;
}

/* Rows a KV head serves (grouped heads x queries) up to which decode
 * takes splitkv, and the keys from which splitting pays: below 256 keys
 * one workgroup per KV head reads them all in a few tiles anyway. */
#define DECODE_ROWS 8
#define CPU_FA_ROWS 512
#define DECODE_MIN_KEYS 256

wgml_status wg_attn_choose(const wg_attn_facts *f, int64_t rows, int64_t skv, int64_t dk, int64_t dv,
                           const wg_attn_variant **out)
{
    char buf[32];
    const char *force = wg_forced_variant("attn", buf, sizeof buf);
    *out = NULL;
    int lpk = wg_attn_lpk(dk, dv);
    if (force) {
        for (int i = 0; i < NVAR; i++)
            if (!strcmp(force, variants[i].name))
                *out = &variants[i];
        if (!*out)
            return wg_fail(WGML_ERR_INVALID_ARG, "WGML_FORCE: attn=%s is not a variant; attn variants: " VAR_NAMES,
                           force);
        if ((*out)->sg && (uint32_t)lpk > f->subgroup)
            return wg_fail(WGML_ERR_UNSUPPORTED, "wgml_attention: variant %s needs subgroups of %d lanes for head "
                           "dims %lld/%lld; the device's are %u (0: none)", force, lpk, (long long)dk, (long long)dv,
                           f->subgroup);
        if ((*out)->fa && f->subgroup < 8)
            return wg_fail(WGML_ERR_UNSUPPORTED, "wgml_attention: variant %s needs subgroups of at least 8 lanes; "
                           "the device's are %u (0: none)", force, f->subgroup);
        if ((*out)->fa && (wg_attn_pad32(dk) > 128 || wg_attn_pad32(dv) > 128))
            return wg_fail(WGML_ERR_UNSUPPORTED, "wgml_attention: variant %s takes head dims up to 128 (got %lld/%lld)",
                           force, (long long)dk, (long long)dv);
        if (fits(*out, dk, dv, f->smem, f->max_inv))
            return WGML_OK;
        return wg_fail(WGML_ERR_UNSUPPORTED, "wgml_attention: variant %s needs %llu bytes of workgroup memory for "
                       "head dims %lld/%lld, the device has %u", force,
                       (unsigned long long)wg_attn_smem(*out, dk, dv), (long long)dk, (long long)dv, f->smem);
    }
    /* Decode on GPUs: dsg at any length (attention_dsg.wgsl says why; the
     * tiled t8 took 69 us a call at KV 88 on an H100, one workgroup a KV
     * head).  CPU drivers keep splitkv: one compiled kernel for every
     * head dim and K/V dtype there (dsg needs LPK <= lavapipe's 8 lanes,
     * D <= 64). */
    if (rows <= DECODE_ROWS && !f->cpu && (uint32_t)lpk <= f->subgroup &&
        fits(&variants[V_DSG], dk, dv, f->smem, f->max_inv)) {
        *out = &variants[V_DSG];
        /* up to 256 keys (a decode's first KV bucket) of 16-lane keys (D
         * 128): 256 threads, so a 32-key chunk is one tile, not two.  H200,
         * tg128 (bench/NOTES.md 2026-11-27 (6), call 7): 8B 400.2 -> 404.7;
         * the 1B's D 64 (8-lane keys: a 64-key tile, half idle) 1,137 ->
         * 1,107, and at 8192 keys 25 -> 28 us a call: dsg kept there */
        if (skv <= 256 && lpk == 16 && fits(&variants[V_DSG_T256], dk, dv, f->smem, f->max_inv))
            *out = &variants[V_DSG_T256];
        return WGML_OK;
    }
    if (rows <= DECODE_ROWS && skv >= DECODE_MIN_KEYS && fits(&variants[V_SPLITKV], dk, dv, f->smem, f->max_inv)) {
        *out = &variants[V_SPLITKV];
        return WGML_OK;
    }
    /* Prefill: the biggest tile that fits and that the rows fill at least
     * half of (a 64-row tile for 20 rows computes 44 empty ones); on GPUs
     * the register-tiled fa64 / fa32 first (head dims <= 128; bench/NOTES.md
     * has their times against the t* tiles).  CPU drivers keep the t*
     * tiles (one compiled kernel per head dim class there) below
     * CPU_FA_ROWS query rows: above, fa64's arithmetic pays for its compile
     * (lavapipe, SmolLM2's 512-token prefill: 9 heads of D 64, 30 layers,
     * 44 s of attention with t64, 11 s with fa64). */
    for (int i = V_FA64; i < V_FA64 + 2 && (!f->cpu || rows >= CPU_FA_ROWS) && f->subgroup >= 8; i++) {
        const wg_attn_variant *v = &variants[i];
        if (fits(v, dk, dv, f->smem, f->max_inv) && rows * 2 >= v->bq) {
            *out = v;
            return WGML_OK;
        }
    }
    for (int i = 0; i < 4; i++) {
        const wg_attn_variant *v = &variants[i];
        if (fits(v, dk, dv, f->smem, f->max_inv) && (rows * 2 >= v->bq || i == 3)) {
            *out = v;
            return WGML_OK;
        }
    }
    return wg_fail(WGML_ERR_UNSUPPORTED, "wgml_attention: head dims %lld/%lld need %llu bytes of workgroup memory, "
                   "the device has %u", (long long)dk, (long long)dv,
                   (unsigned long long)wg_attn_smem(&variants[3], dk, dv), f->smem);
}

/* ------------------------------------------------------------ check */

#define FAIL(code, ...) return wg_fail(code, __VA_ARGS__)

static const char *dn(wgml_dtype t) { return wgml_dtype_name(t); }

wgml_status wg_ck_attention(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    const wg_desc *q = in[0], *k = in[1], *v = in[2];
    const wg_desc *mask = nin > 3 ? in[3] : NULL, *sinks = nin > 4 ? in[4] : NULL;
    const wgml_attn_params *a = &p->attn;
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
        FAIL(WGML_ERR_SHAPE, "q, k and v must be 4-D [B, H, S, D] (got %d, %d, %d dims)", q->ndim, k->ndim, v->ndim);
    if (q->dtype != WGML_F32 && q->dtype != WGML_F16)
        FAIL(WGML_ERR_DTYPE, "q is %s, must be f32 or f16", dn(q->dtype));
    const wg_desc *kv[2] = {k, v};
    for (int i = 0; i < 2; i++)
        if (kv[i]->dtype != WGML_F32 && kv[i]->dtype != WGML_F16 && kv[i]->dtype != WGML_Q8_0)
            FAIL(WGML_ERR_DTYPE, "%s is %s, must be f32, f16 or q8_0", i ? "v" : "k", dn(kv[i]->dtype));
    if (p->dtype != WGML_F32 && p->dtype != WGML_F16)
        FAIL(WGML_ERR_DTYPE, "out is %s, must be f32 or f16", dn(p->dtype));
    if (k->shape[0] != q->shape[0] || v->shape[0] != q->shape[0])
        FAIL(WGML_ERR_SHAPE, "q, k and v must have the same batch (dim 0)");
    if (k->shape[1] != v->shape[1] || k->shape[2] != v->shape[2])
        FAIL(WGML_ERR_SHAPE, "k and v must have the same heads and length (dims 1, 2)");
    if (k->shape[3] != q->shape[3])
        FAIL(WGML_ERR_SHAPE, "q and k must have the same head dim (dim 3)");
    int64_t hq = q->shape[1], hkv = k->shape[1];
    if (wg_is_sym(hq) || wg_is_sym(hkv)) {
        if (hq != hkv)
            FAIL(WGML_ERR_SHAPE, "symbolic head counts: q and k must then have the same heads");
    } else if (hkv == 0 ? hq != 0 : hq % hkv != 0) {
        FAIL(WGML_ERR_SHAPE, "q's %lld heads are not a multiple of k's %lld", (long long)hq, (long long)hkv);
    }
    int64_t d = q->shape[3], dv = v->shape[3];
    if (wg_is_sym(d) || wg_is_sym(dv))
        FAIL(WGML_ERR_SHAPE, "head dims must be fixed sizes, not symbolic dims");
    if (d < 1 || d > WG_ATTN_MAX_D || dv > WG_ATTN_MAX_D)
        FAIL(WGML_ERR_SHAPE, "head dims %lld (q, k) and %lld (v) must be 1..%d", (long long)d, (long long)dv,
             WG_ATTN_MAX_D);
    for (int i = 0; i < 2; i++)
        if (kv[i]->dtype == WGML_Q8_0 && kv[i]->shape[3] % 32)
            FAIL(WGML_ERR_SHAPE, "%s is q8_0: its head dim %lld must be a multiple of 32 (blocks along D)",
                 i ? "v" : "k", (long long)kv[i]->shape[3]);
    const int64_t full[4] = {q->shape[0], hq, q->shape[2], k->shape[2]};
    if (mask) {
        if (mask->dtype != WGML_F32 && mask->dtype != WGML_F16 && mask->dtype != WGML_BOOL && mask->dtype != WGML_U8)
            FAIL(WGML_ERR_DTYPE, "mask is %s, must be f32, f16 (additive), bool or u8", dn(mask->dtype));
        if (mask->ndim > 4)
            FAIL(WGML_ERR_SHAPE, "mask has %d dims, at most 4", mask->ndim);
        for (int i = 0; i < mask->ndim; i++) {
            int64_t m = mask->shape[i], f = full[4 - mask->ndim + i];
            if (m != 1 && m != f)
                FAIL(WGML_ERR_SHAPE, "mask dim %d does not broadcast to [B, Hq, Sq, Skv]", i);
        }
    }
    if (sinks) {
        if (sinks->dtype != WGML_F32)
            FAIL(WGML_ERR_DTYPE, "sinks is %s, must be f32", dn(sinks->dtype));
        if (sinks->ndim != 1 || sinks->shape[0] != hq)
            FAIL(WGML_ERR_SHAPE, "sinks must be 1-D with one logit per q head");
    }
    if (!isfinite(a->scale) || !isfinite(a->softcap) || a->softcap < 0 || !isfinite(a->max_bias) ||
        a->max_bias < 0 || a->window < 0 || (a->causal != 0 && a->causal != 1))
        FAIL(WGML_ERR_INVALID_ARG, "params: scale, softcap >= 0 and max_bias >= 0 must be finite, window >= 0, "
             "causal 0 or 1");
    if (a->out_bshd != 0 && a->out_bshd != 1)
        FAIL(WGML_ERR_INVALID_ARG, "params: out_bshd must be 0 or 1");
    out->dtype = p->dtype;
    out->ndim = 4;
    out->shape[0] = q->shape[0];
    out->shape[1] = a->out_bshd ? q->shape[2] : hq;
    out->shape[2] = a->out_bshd ? hq : q->shape[2];
    out->shape[3] = dv;
    return WGML_OK;
}

/* Partial runs: one (max, sum, acc[Dv]) f32 run per query row and split.
 * Splits per dispatch: up to wg_attn_max_splits(Skv) for splitkv (decode),
 * 1 for the others (they split only when a head's keys exceed a binding,
 * and merge piece by piece into that one run). */
uint64_t wg_attn_scratch_bytes(int64_t b, int64_t hq, int64_t sq, int64_t dv, int64_t splits)
{
    return wg_align_up((uint64_t)(b * hq * sq) * (uint64_t)splits * (uint64_t)(dv + 2) * 4u, 256);
}

int64_t wg_attn_max_splits(int64_t skv)
{
    int64_t n = (skv + WG_ATTN_MIN_CHUNK - 1) / WG_ATTN_MIN_CHUNK;
    return n < 1 ? 1 : n > WG_ATTN_MAX_SPLITS ? WG_ATTN_MAX_SPLITS : n;
}

int64_t wg_attn_dsg_max_chunks(int64_t skv)
{
    int64_t n = (skv + WG_ATTN_DSG_MIN_CHUNK - 1) / WG_ATTN_DSG_MIN_CHUNK;
    return n < 1 ? 1 : n > WG_ATTN_DSG_MAX_CHUNKS ? WG_ATTN_DSG_MAX_CHUNKS : n;
}

uint64_t wg_sc_attention(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)p, (void)nin;
    const wg_desc *q = in[0], *k = in[1];
    for (int i = 0; i < 4; i++)
        if (wg_is_sym(q->shape[i]) || wg_is_sym(k->shape[i]))
            return 0;
    int64_t g = k->shape[1] ? q->shape[1] / k->shape[1] : 0;
    char buf[32];
    const char *f = wg_forced_variant("attn", buf, sizeof buf);
    bool decode = (f && (!strcmp(f, "splitkv") || !strncmp(f, "dsg", 3))) || (!f && g * q->shape[2] <= DECODE_ROWS);
    /* either decode kernel: the table's pick depends on the device */
    int64_t a = wg_attn_max_splits(k->shape[2]), b = wg_attn_dsg_max_chunks(k->shape[2]);
    return wg_attn_scratch_bytes(q->shape[0], q->shape[1], q->shape[2], out->shape[3], decode ? (a > b ? a : b) : 1);
}

wgml_status wg_en_attention(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                            wgml_tensor *out2)
{
    (void)out2;
    const wgml_tensor *mask = nin > 3 ? in[3] : NULL, *sinks = nin > 4 ? in[4] : NULL;
    if (p->attn.out_bshd != 0 && p->attn.out_bshd != 1)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_attention: params: out_bshd must be 0 or 1");
    if (!p->attn.out_bshd)
        return wg_attention_impl(in[0], in[1], in[2], mask, sinks, &p->attn, out);
    /* [B, Sq, Hq, Dv] written through its [B, Hq, Sq, Dv] view: a decode
     * step's permute_copy (a dependent dispatch, ~3.4 us a layer on an
     * H200, bench/NOTES.md) was the only thing between attention and the
     * output projection */
    wgml_tensor *ov = NULL;
    wgml_attn_params a = p->attn;
    a.out_bshd = 0; /* the view is [B, Hq, Sq, Dv] */
    wgml_status st = wgml_view_permute(out, (const int[]){0, 2, 1, 3}, &ov);
    if (st == WGML_OK)
        st = wg_attention_impl(in[0], in[1], in[2], mask, sinks, &a, ov);
    wgml_tensor_free(ov);
    return st;
}

/* ------------------------------------------------------------ reference */

void wg_attention_ref(const wg_attn_ref_args *r, double *out)
{
    int64_t B = r->b, Hq = r->hq, Sq = r->sq, Skv = r->skv, D = r->d, Dv = r->dv, G = Hq / r->hkv;
    double scale = r->p.scale == 0 ? 1 / sqrt((double)D) : r->p.scale;
    double *s = malloc(sizeof(double) * (size_t)(Skv + 1));
    for (int64_t bb = 0; bb < B; bb++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < Sq; i++) {
                int64_t hk = h / G;
                double mx = -INFINITY;
                double slope = r->mask ? wg_alibi_slope(r->p.max_bias, Hq, h) : 1;
                for (int64_t j = 0; j < Skv; j++) {
                    const double *qv = r->q + ((bb * Hq + h) * Sq + i) * D;
                    const double *kv = r->k + ((bb * r->hkv + hk) * Skv + j) * D;
                    double t = 0;
                    for (int64_t d = 0; d < D; d++)
                        t += qv[d] * kv[d];
                    t *= scale;
                    if (r->p.softcap > 0)
                        t = r->p.softcap * tanh(t / r->p.softcap);
                    bool keep = true;
                    if (r->p.causal && j > i + Skv - Sq)
                        keep = false;
                    if (r->p.window > 0 && j <= i + Skv - Sq - r->p.window)
                        keep = false;
                    if (r->mask) {
                        double m = r->mask[((bb * Hq + h) * Sq + i) * Skv + j];
                        if (r->mask_bool)
                            keep = keep && m != 0;
                        else if (m == -INFINITY)
                            keep = false;
                        else
                            t += slope * m;
                    }
                    s[j] = keep ? t : -INFINITY;
                    mx = s[j] > mx ? s[j] : mx;
                }
                if (r->sinks && r->sinks[h] > mx)
                    mx = r->sinks[h];
                double sum = 0;
                for (int64_t j = 0; j < Skv && mx > -INFINITY; j++)
                    sum += s[j] > -INFINITY ? exp(s[j] - mx) : 0;
                if (r->sinks && mx > -INFINITY)
                    sum += exp(r->sinks[h] - mx);
                double *o = out + ((bb * Hq + h) * Sq + i) * Dv;
                for (int64_t d = 0; d < Dv; d++) {
                    double acc = 0;
                    for (int64_t j = 0; j < Skv && sum > 0; j++)
                        if (s[j] > -INFINITY)
                            acc += exp(s[j] - mx) * r->v[((bb * r->hkv + hk) * Skv + j) * Dv + d];
                    o[d] = sum > 0 ? acc / sum : 0;
                }
            }
    free(s);
}

/* ------------------------------------------------------------ registry */

static const wgml_op_info attn_rows[] = {
    {"ATTENTION", "attention", WG_DT_BIT(WGML_F32) | WG_DT_BIT(WGML_F16)},
};

wg_op_table wg_attention_ops(void) { return (wg_op_table){attn_rows, sizeof attn_rows / sizeof *attn_rows}; }
