/*
 * WG_OP_LINEAR_NORM, made by graph fusion (src/graph/fuse.c) of
 *
 *   h = linear(x, w) (+ c)     a decoder's o or down product, its residual
 *                              add taken as c (beta 1)
 *   y = norm(h) (* g)          RMS or L2, over h's one row; with the xq
 *                              tail, x's 8-bit codes after y's row
 *
 * The node is the linear (h, which the next residual add reads); the
 * norm's node y is written by it (its out2).  One activation row on the
 * one-dispatch product (sgx: a GPU's table for the integer-path dtypes)
 * has its last workgroup normalise h (matvec_ntail.wgsl): a decode layer
 * runs no norm dispatch.  Everything else (more rows, a bias and c both,
 * a CPU adapter's table, operands past one binding, y where the tail may
 * not write it) runs the two ops: the linear into h, then the norm into y,
 * the unfused graph's kernels and values.
 *
 * The norm split (norm_split, graph fusion's default where y's one reader is
 * a one-row product on that kernel): y's row holds no values, only the
 * codes of h * g and the sums of squares of h's 32-element blocks, which
 * every workgroup of the product writes for its own 32 rows
 * (matvec_nsplit.wgsl); the reader scales its sums by the norm's factor.
 * At one row that form has no fallback (its reader needs exactly those
 * words): where the one dispatch does not apply it is WGML_ERR_INTERNAL,
 * which graph fusion's checks keep from happening.  At more rows (a
 * prefill through the same graph) the node runs the linear, then the norm
 * into y's [.., :n + wg_q8_row_words(n)], and the reader reads values.
 *
 * Inputs: x, w, bias, c, g (bias, c and g absent or NULL).  Params: mm
 * and dtype (the linear's), norm (kind, eps: the norm's), xq_tail (y's
 * rows carry the codes), xq_in (x is a norm's [.., :k] view: its codes
 * follow), norm_split (the norm split).
 */
#include "matvec.h"

static wgml_status descs(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *h, wg_desc *y)
{
    const wg_desc *li[4] = {in[0], in[1], nin > 2 ? in[2] : NULL, nin > 3 ? in[3] : NULL};
    wgml_status st = wg_ck_linear(p, li, 4, h);
    if (st != WGML_OK)
        return st;
    if (p->norm.kind != WGML_RMS_NORM && p->norm.kind != WGML_L2_NORM)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_linear (fused with a norm): RMS or L2 norms only, not kind %d",
                       (int)p->norm.kind);
    const wg_desc *ni[2] = {h, nin > 4 ? in[4] : NULL};
    return wg_op_def_get(WG_OP_NORM)->check(p, ni, ni[1] ? 2 : 1, y);
}

wgml_status wg_ck_linear_norm(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    wg_desc y;
    return descs(p, in, nin, out, &y);
}

uint64_t wg_sc_linear_norm(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    wg_desc h, y;
    if (descs(p, in, nin, &h, &y) != WGML_OK)
        return 0;
    const wg_desc *li[4] = {in[0], in[1], nin > 2 ? in[2] : NULL, nin > 3 ? in[3] : NULL}, *ni[2] = {&h, nin > 4 ? in[4] : NULL};
    /* the unfused ops' requests, one after the other */
    return wg_sc_linear(p, li, 4, &h) + wg_op_def_get(WG_OP_NORM)->scratch(p, ni, ni[1] ? 2 : 1, &y);
}

/* The one-dispatch product with its norm tail, or WGML_ERR_UNSUPPORTED (no
 * message) where it does not apply. */
static wgml_status one_dispatch(const wg_op_params *p, const wgml_tensor *x, const wgml_tensor *w,
                                const wgml_tensor *bias, const wgml_tensor *c, const wgml_tensor *g, wgml_tensor *h,
                                wgml_tensor *y)
{
    int64_t n = w->ndim == 2 ? w->shape[0] : 0;
    uint64_t qw = p->xq_tail && n > 0 ? p->norm_split ? wg_q8_split_words(n) : wg_q8_row_words(n) : 0;
    /* y is written by the last workgroup after every other has finished:
     * it may not take h's, w's or g's memory (read while y is written);
     * x's, c's and the bias's (read before any ticket) are refused too,
     * which no graph has needed */
    if ((p->norm.kind != WGML_RMS_NORM && p->norm.kind != WGML_L2_NORM) || n <= 0 || n % 32 ||
        y->dtype != WGML_F32 || (uint64_t)wgml_tensor_nelem(y) != (uint64_t)n + qw || !wgml_tensor_is_contiguous(y) ||
        (g && (g->dtype != WGML_F32 || wgml_tensor_nelem(g) != n || !wgml_tensor_is_contiguous(g))) ||
        wg_tensors_overlap(y, h) || wg_tensors_overlap(y, w) || (g && wg_tensors_overlap(y, g)) ||
        wg_tensors_overlap(y, x) || (c && wg_tensors_overlap(y, c)) || (bias && wg_tensors_overlap(y, bias)))
        return WGML_ERR_UNSUPPORTED;
    mv_ntail t = {y, g, {0}, {0}, 0, 0, (int)p->norm.kind, p->norm.eps, qw != 0, p->norm_split};
    if (!wg_bind_elems(y, (uint64_t)n + qw, &t.y, &t.y0) || (g && !wg_bind_elems(g, (uint64_t)n, &t.g, &t.g0)))
        return WGML_ERR_UNSUPPORTED;
    if (p->norm_split)
        t.y0 += (uint32_t)n; /* the split writes only the words after y's values */
    return wg_matvec_ntail(x, w, bias, p->mm.beta != 0.0f ? c : NULL, &p->mm, &t, wg_xin_of(p), h);
}

wgml_status wg_en_linear_norm(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                              wgml_tensor *out2)
{
    const wgml_tensor *x = in[0], *w = in[1], *bias = nin > 2 ? in[2] : NULL, *c = nin > 3 ? in[3] : NULL;
    const wgml_tensor *g = nin > 4 ? in[4] : NULL;
    if (!out2)
        return wg_fail(WGML_ERR_INTERNAL, "wgml_linear (fused with a norm): no tensor for the norm's output");
    wgml_status st = wg_check_tensor("wgml_linear", "x", x);
    if (st == WGML_OK)
        st = wg_check_tensor("wgml_linear", "w", w);
    if (st == WGML_OK && g)
        st = wg_check_tensor("wgml_norm", "weight", g);
    if (st != WGML_OK)
        return st;
    if ((st = one_dispatch(p, x, w, bias, c, g, out, out2)) != WGML_ERR_UNSUPPORTED)
        return st;
    int64_t n = w->ndim == 2 ? w->shape[0] : 0;
    if (p->norm_split && n > 0 && wgml_tensor_nelem(out) == n)
        return wg_fail(WGML_ERR_INTERNAL, "wgml_linear (fused with a split norm): the one-row one-dispatch product "
                       "does not take these operands, and a row of one has no other form");
    /* the unfused ops: h = linear(x, w, bias, c), then y = norm(h) * g (a
     * split norm's rows through their xq-tail part: more than one row is
     * read as values) */
    const wgml_tensor *li[4] = {x, w, bias, c}, *ni[2] = {out, g};
    wgml_tensor *yv = NULL;
    st = wg_en_linear(p, li, 4, out, NULL);
    if (st == WGML_OK && p->norm_split)
        st = wgml_view_slice(out2, out2->ndim - 1, 0, n + (int64_t)wg_q8_row_words(n), 1, &yv);
    if (st == WGML_OK)
        st = wg_op_def_get(WG_OP_NORM)->encode(p, ni, g ? 2 : 1, yv ? yv : out2, NULL);
    wgml_tensor_free(yv);
    return st;
}
