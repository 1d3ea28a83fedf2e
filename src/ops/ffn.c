/*
 * WG_OP_FFN, made by graph fusion (src/graph/fuse.c fuse_ffn) of a
 * decoder's feed-forward block
 *
 *   h = linear_glu(x, w_gu)                   (linear_glu.c)
 *   out = linear(h, w_down) + c               (the residual: beta 1)
 *   [y = norm(out) * g, split]                (linear_norm.c, flag 1)
 *
 * where x is a split norm's codes (xq_in, xq_split: the o product's) and
 * nothing else reads h.  With WGML_FORCE=ffn=persist, for one activation
 * row, both products run as one persistent dispatch (matvec_pffn.wgsl):
 * stage 0's workgroups meet the down product's at one grid barrier
 * instead of a dispatch boundary.  Off by default (wanted() says what it
 * measured); otherwise (and for more rows, weights in two buffers or past
 * one binding, WGML_DISABLE=grid) the two fused ops run as before, h in
 * declared scratch.
 *
 * Inputs: x, w_gu, w_down, c (or NULL), g (flag 1: the norm's weight, or
 * NULL).  Params: wg_op_params' FFN fields (optable.h).
 */
#include "matvec.h"

#include <stdlib.h>
#include <string.h>

/* The two fused ops' own parameters. */
static void stages(const wg_op_params *p, wg_op_params *a, wg_op_params *b)
{
    *a = *p;
    a->mm = p->mm2;
    a->norm = p->xnorm;
    a->norm_split = a->xq_tail = false;
    a->flag = 0;
    *b = *p;
    b->xq_in = b->xq_split = false;
    b->flag = 0;
}

static wgml_status h_desc(const wg_op_params *a, const wg_desc *const *in, wg_desc *h)
{
    const wg_desc *ai[2] = {in[0], in[1]};
    return wg_ck_linear_glu(a, ai, 2, h);
}

wgml_status wg_ck_ffn(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    wg_op_params a, b;
    stages(p, &a, &b);
    wg_desc h;
    wgml_status st = h_desc(&a, in, &h);
    if (st != WGML_OK)
        return st;
    const wg_desc *bi[5] = {&h, in[2], NULL, nin > 3 ? in[3] : NULL, nin > 4 ? in[4] : NULL};
    return p->flag ? wg_ck_linear_norm(&b, bi, 5, out) : wg_ck_linear(&b, bi, 4, out);
}

uint64_t wg_sc_ffn(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    wg_op_params a, b;
    stages(p, &a, &b);
    wg_desc h;
    if (h_desc(&a, in, &h) != WGML_OK)
        return 0;
    const wg_desc *ai[2] = {in[0], in[1]};
    const wg_desc *bi[5] = {&h, in[2], NULL, nin > 3 ? in[3] : NULL, nin > 4 ? in[4] : NULL};
    uint64_t sa = wg_sc_linear_glu(&a, ai, 2, &h);
    uint64_t sb = p->flag ? wg_sc_linear_norm(&b, bi, 5, out) : wg_sc_linear(&b, bi, 4, out);
    /* h, then each op's own in turn (released between them) */
    return wg_align_up(wg_desc_bytes(&h), 256) + (sa > sb ? sa : sb);
}

/* ------------------------------------------------------------ the persistent form */

/* Workgroup shape: sgx_r2t512's (2 rows a subgroup, 16 subgroups' rows a
 * workgroup): 32 rows, one block of the norm split. */
#define PF_WG 512
#define PF_RPW 2
#define PF_ROWS (PF_RPW * (PF_WG / 32))
/* Bytes w's binding reaches past its data (the wide path's 16-byte pieces). */
#define PF_SLACK 15
/* Workgroups of the discovery pass: more than any GPU holds at once. */
#define PF_DISCOVER 4096
enum { BW = 0, BH, BO, BQ, BC, BY, BG, BCTL, NB };

/* Whether the persistent form is asked for: 1 yes, 0 no. */
static int wanted(void)
{
    const char *d = getenv("WGML_DISABLE");
    if (d && strstr(d, "grid"))
        return 0;
    int f = wg_forced_path("wgml_linear (ffn)", "ffn", "split", "persist", false);
    if (f == 0 || f == 1)
        return f;
    /* off by default: on an H200 the persistent form ran the 8B decode
     * 1.3% slower than the two dispatches at equal workgroup shapes (401.5
     * against 406.9 tokens/s; 2.4% at the table's shapes), the 1B 0.9%
     * (bench/NOTES.md 2026-11-27 (8), calls 1-4): a grid barrier costs
     * about what the dispatch boundary it replaces does */
    return 0;
}

static bool contiguous_row(const wgml_tensor *t, int64_t n)
{
    return t && t->dtype == WGML_F32 && wgml_tensor_nelem(t) == n && wgml_tensor_is_contiguous(t);
}

/* Whether buf is bound where the dispatch writes (itself included). */
static bool shares_any(const wgml_buffer *buf, const wg_binding *b, const bool *written)
{
    for (int i = 0; i < NB; i++)
        if (written[i] && b[i].buffer == buf)
            return true;
    return false;
}

/* The one dispatch, or WGML_ERR_UNSUPPORTED (no message) where it does not
 * apply. */
static wgml_status persistent(const wg_op_params *p, const wgml_tensor *x, const wgml_tensor *wgu,
                              const wgml_tensor *wd, const wgml_tensor *c, const wgml_tensor *g, wgml_tensor *h,
                              wgml_tensor *out, wgml_tensor *y)
{
    wgml_ctx *ctx = x->ctx;
    int64_t k0 = wgu->ndim == 2 ? wgu->shape[1] : 0, n0 = wgu->ndim == 2 ? wgu->shape[0] : 0;
    int64_t k1 = wd->ndim == 2 ? wd->shape[1] : 0, n1 = wd->ndim == 2 ? wd->shape[0] : 0;
    const mv_type *ty = wg_mv_type(wgu->dtype);
    bool split = p->flag && p->norm_split;
    if (!wanted() || !ty || !ty->q8 || !ty->ch || wd->dtype != wgu->dtype || !p->xq_in || !p->xq_split ||
        x->dtype != WGML_F32 || wgml_tensor_nelem(x) != k0 || k0 <= 0 || k0 % 128 || k1 % 32 || n0 != 2 * k1 ||
        n1 <= 0 || n1 % PF_ROWS || !contiguous_row(h, k1) || !contiguous_row(out, n1) ||
        (p->mm.beta != 0.0f && !contiguous_row(c, n1)) || p->mm.act != WGML_ACT_NONE ||
        p->mm2.act != WGML_ACT_NONE || p->mm2.beta != 0.0f || wgu->st->buf != wd->st->buf ||
        (p->xnorm.kind != WGML_RMS_NORM && p->xnorm.kind != WGML_L2_NORM) || (p->flag && !split) ||
        wgu->strides[1] != 1 || wd->strides[1] != 1)
        return WGML_ERR_UNSUPPORTED;
    /* workgroup memory: stage 0's codes with the split's sums of squares,
     * or stage 1's codes; the split's block of 32 rows and the counter */
    uint64_t xsw = wg_q8_split_words(k0) > wg_q8_row_words(k1) ? wg_q8_split_words(k0) : wg_q8_row_words(k1);
    wgml_device_info in;
    if (wgml_device_info_get(ctx, &in) != WGML_OK || in.subgroup_size < 8 || in.subgroup_size % 8 ||
        xsw * 4 + 128 + 64 > in.max_workgroup_storage)
        return WGML_ERR_UNSUPPORTED;
    uint64_t bb = ty->bb, qk = ty->qk;
    uint64_t rowb0 = (uint64_t)wgu->strides[0] / qk * bb, rowb1 = (uint64_t)wd->strides[0] / qk * bb;
    uint64_t lo0 = wgu->offset, lo1 = wd->offset;
    uint64_t hi0 = lo0 + (uint64_t)(n0 - 1) * rowb0 + (uint64_t)k0 / qk * bb;
    uint64_t hi1 = lo1 + (uint64_t)(n1 - 1) * rowb1 + (uint64_t)k1 / qk * bb;
    uint64_t lo = lo0 < lo1 ? lo0 : lo1, hi = hi0 > hi1 ? hi0 : hi1, rem;
    uint64_t alloc = wg_buffer_alloc(wgu->st->buf), want = hi + PF_SLACK < alloc ? hi + PF_SLACK - lo : alloc - lo;
    if (hi - lo > wg_window_cap(ctx))
        return WGML_ERR_UNSUPPORTED;

    wg_binding b[NB];
    bool written[NB] = {false, true, true, false, false, split, false, true};
    b[BW] = wg_bind_from(wgu->st->buf, lo, want, &rem);
    if (b[BW].size < rem + (hi - lo))
        return WGML_ERR_UNSUPPORTED;
    bool covered = b[BW].size / 16 * 16 >= wg_align_up(rem + hi - lo, 16);
    mv_params ps[2];
    memset(ps, 0, sizeof ps);
    ps[0].w_off = (uint32_t)(rem + lo0 - lo);
    ps[1].w_off = (uint32_t)(rem + lo1 - lo);
    uint32_t hx, ox, qx, cx = 0, yx = 0, gx = 0;
    uint64_t xw = wg_q8_split_words(k0);
    wg_binding xb;
    uint32_t xfirst;
    if (!wg_bind_elems(h, (uint64_t)k1, &b[BH], &hx) || !wg_bind_elems(out, (uint64_t)n1, &b[BO], &ox) ||
        !wg_bind_elems(x, (uint64_t)k0 + xw, &xb, &xfirst))
        return WGML_ERR_UNSUPPORTED;
    /* x's codes start right after its k values (the split's row) */
    qx = xfirst + (uint32_t)k0;
    b[BQ] = xb;
    if (qx % 4)
        return WGML_ERR_UNSUPPORTED; /* read as vec4s */
    wg_binding grid = wg_grid_bind(ctx);
    b[BC] = b[BY] = b[BG] = grid; /* dummies: bound read_write (the error word's buffer is, at BCTL) */
    b[BCTL] = grid;
    bool beta = p->mm.beta != 0.0f;
    if (beta && !wg_bind_elems(c, (uint64_t)n1, &b[BC], &cx))
        return WGML_ERR_UNSUPPORTED;
    uint64_t qw = split ? wg_q8_split_words(n1) : 0;
    if (split) {
        /* the norm's row: y's n values (never written), then the codes */
        if (!y || y->dtype != WGML_F32 || (uint64_t)wgml_tensor_nelem(y) != (uint64_t)n1 + qw ||
            !wgml_tensor_is_contiguous(y) || (g && !contiguous_row(g, n1)) || wg_tensors_overlap(y, h) ||
            wg_tensors_overlap(y, out) || (c && wg_tensors_overlap(y, c)) ||
            !wg_bind_elems(y, (uint64_t)n1 + qw, &b[BY], &yx) || (g && !wg_bind_elems(g, (uint64_t)n1, &b[BG], &gx)))
            return WGML_ERR_UNSUPPORTED;
        yx += (uint32_t)n1;
    }
    if (wg_tensors_overlap(h, out) || wg_tensors_overlap(h, x) || (c && wg_tensors_overlap(h, c)))
        return WGML_ERR_UNSUPPORTED;
    /* one buffer is bound writable or not at all in a dispatch (the
     * dummies share the grid words' buffer, which is written) */
    const char *acc[NB];
    unsigned ro = 0;
    for (int i = 0; i < NB; i++) {
        bool rw = shares_any(b[i].buffer, b, written);
        acc[i] = rw ? "read_write" : "read";
        ro |= rw ? 0u : 1u << i;
    }
    for (int s = 0; s < 2; s++) {
        mv_params *q = &ps[s];
        q->n = (uint32_t)(s ? n1 : n0);
        q->k = (uint32_t)(s ? k1 : k0);
        q->units = (q->k + 7) / 8;
        q->rowb = (uint32_t)(s ? rowb1 : rowb0);
        q->xs = q->os = q->cs = 1;
        q->m = 1;
        q->ngroups = (q->n + PF_ROWS - 1) / PF_ROWS;
        q->alpha = s ? p->mm.alpha : p->mm2.alpha;
        q->beta = s ? p->mm.beta : 0.0f;
    }
    ps[0].pad1 = (uint32_t)p->sub;
    memcpy(&ps[0].xst_t, &p->xnorm.eps, 4);
    ps[0].xst_u = p->xnorm.kind == WGML_RMS_NORM ? 1u : 2u;
    ps[0].xo[0] = qx;
    ps[0].oo[0] = hx;
    ps[1].xo[0] = hx;
    ps[1].oo[0] = ox;
    ps[1].co[0] = cx;
    ps[1].chk[0] = yx;
    ps[1].chk[1] = gx;
    uint32_t wqk = wg_mv_wqk(ty), wbb = wg_mv_wbb(ty);
    bool align4 = bb % 4 == 0, align16 = wbb % 16 == 0;
    for (int s = 0; s < 2; s++) {
        align4 = align4 && ps[s].rowb % 4 == 0 && ps[s].w_off % 4 == 0;
        align16 = align16 && ps[s].rowb % 16 == 0 && ps[s].w_off % 16 == 0;
    }
    if (ps[0].rowb % 2 || ps[1].rowb % 2 || ps[0].w_off % 2 || ps[1].w_off % 2)
        return WGML_ERR_UNSUPPORTED; /* the wide path's f16 fields in one word */
    char defs[640];
    int n = snprintf(defs, sizeof defs,
                     "M=1;RPW=%d;WG=%d;UPT=1;QK=%u;BB=%u;%s;%s;X_DT=f32;X_MODE=rw%s;O_DT=f32;O_MODE=w;W_ACC=%s;SG%s%s;"
                     "WIDE;CH=%u;WQK=%u;WBB=%u;ACCW=accq;Q8X%s%s;XS;XSW=%llu;RSETS=%d;XS_GLU;XS_LANES;XS_PFFN;XS_NRMS;"
                     "XQI_ACC=%s",
                     PF_RPW, PF_WG, ty->qk, ty->bb, ty->def, ty->group, hx % 4 ? "" : "4", acc[BW],
                     hx % 4 ? "" : ";XV4", align4 ? ";ALIGN4" : "", ty->ch, wqk, wbb, align16 ? ";ALIGN16" : "",
                     covered ? "" : ";PIECE32", (unsigned long long)xsw, PF_WG / 32, acc[BQ]);
    if (beta)
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";BETA;C_DT=f32;C_MODE=%s", ro >> BC & 1u ? "r" : "rw");
    if (split)
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";XS_NSPLIT;NSN=%lld;NSQW=%llu;NSG_ACC=%s%s", (long long)n1,
                      (unsigned long long)wg_q8_row_words(n1), acc[BG], g ? ";NS_G" : "");
    if (n >= (int)sizeof defs)
        return wg_fail(WGML_ERR_INTERNAL, "wgml_linear (ffn): kernel defines too long");
    wg_kernel_ref ref = {"matvec.wgsl", "main_pffn", defs, NB, ro};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    mv_params dp[2];
    memcpy(dp, ps, sizeof dp);
    dp[0].act = 1; /* the discovery form */
    uint32_t resident;
    if ((st = wg_grid_discover(ctx, k, dp, sizeof dp, PF_DISCOVER, &resident)) != WGML_OK)
        return st;
    /* as few workgroups as take the most groups in the fewest rounds: the
     * same time for the busiest, fewer waiting at the barrier */
    uint32_t groups = ps[0].ngroups > ps[1].ngroups ? ps[0].ngroups : ps[1].ngroups;
    uint32_t rounds = (groups + resident - 1) / resident, nw = (groups + rounds - 1) / rounds;
    /* WGML_PFFN_WGS=n launches n workgroups whatever discovery said:
     * timing (fewer), and tests of the barrier giving up (more) */
    const char *force = getenv("WGML_PFFN_WGS");
    if (force && atoi(force) > 0)
        nw = (uint32_t)atoi(force);
    ps[0].pad0 = ps[1].pad0 = nw;
    return wg_dispatch(ctx, k, b, NB, ps, sizeof ps, nw, 1, 1);
}

/* ------------------------------------------------------------ encode */

wgml_status wg_en_ffn(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                      wgml_tensor *out2)
{
    const wgml_tensor *x = in[0], *wgu = in[1], *wd = in[2], *c = nin > 3 ? in[3] : NULL, *g = nin > 4 ? in[4] : NULL;
    wgml_status st = wg_check_tensor("wgml_linear", "x", x);
    if (st == WGML_OK)
        st = wg_check_tensor("wgml_linear", "w", wgu);
    if (st == WGML_OK)
        st = wg_check_tensor("wgml_linear", "w", wd);
    if (st != WGML_OK)
        return st;
    if (p->flag && !out2)
        return wg_fail(WGML_ERR_INTERNAL, "wgml_linear (ffn, fused with a norm): no tensor for the norm's output");
    wg_op_params a, b;
    stages(p, &a, &b);
    int64_t shape[WGML_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->ndim - 1] = wgu->ndim == 2 ? wgu->shape[0] / 2 : 0;
    wgml_tensor *h = NULL;
    if ((st = wg_scratch_tensor_raw(x->ctx, WGML_F32, x->ndim, shape, &h)) != WGML_OK)
        return st;
    st = persistent(p, x, wgu, wd, p->mm.beta != 0.0f ? c : NULL, g, h, out, out2);
    if (st == WGML_ERR_UNSUPPORTED) {
        /* the two fused ops, h between them */
        uint64_t mark = wg_scratch_mark(x->ctx);
        const wgml_tensor *ai[2] = {x, wgu};
        st = wg_en_linear_glu(&a, ai, 2, h, NULL);
        wg_scratch_release(x->ctx, mark);
        const wgml_tensor *bi[5] = {h, wd, NULL, c, g};
        if (st == WGML_OK)
            st = p->flag ? wg_en_linear_norm(&b, bi, 5, out, out2) : wg_en_linear(&b, bi, 4, out, NULL);
    }
    wgml_tensor_free(h);
    return st;
}
