/*
 * WG_OP_LINEAR_GLU, made by graph fusion (src/graph/fuse.c) of
 *
 *   glu(y[..., 0::2], y[..., 1::2]) for y = linear(x, w)
 *
 * where w's rows are gate and up rows interleaved (a model's gate|up,
 * src/models/llm_graph.c).  One activation row on the one-dispatch
 * mat-vec (matvec_xs.wgsl, XS_GLU) writes the glu itself: a subgroup's two
 * rows are a gate row and its up row, so the decode step runs no glu
 * dispatch.  Elsewhere (more rows, a CPU adapter's table, w past one
 * binding) the encode runs the linear into declared scratch and the glu
 * op over its even and odd columns: the unfused graph's values.
 *
 * Inputs: x, w.  Params: sub (the glu kind), mm and dtype (the linear's).
 */
#include "mm.h"

#include <string.h>

/* y's description: the linear's output. */
static wgml_status y_desc(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *y)
{
    const wg_desc *li[4] = {in[0], in[1], NULL, NULL};
    (void)nin;
    wgml_status st = wg_ck_linear(p, li, 4, y);
    if (st != WGML_OK)
        return st;
    if ((unsigned)p->sub > WGML_REGLU || y->dtype != WGML_F32 || y->shape[y->ndim - 1] % 2)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_linear (fused with its glu): a known glu kind over an f32 "
                       "product of even width");
    return WGML_OK;
}

wgml_status wg_ck_linear_glu(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    wgml_status st = y_desc(p, in, nin, out);
    if (st == WGML_OK)
        out->shape[out->ndim - 1] /= 2;
    return st;
}

uint64_t wg_sc_linear_glu(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    wg_desc y;
    if (y_desc(p, in, nin, &y) != WGML_OK)
        return 0;
    const wg_desc *li[4] = {in[0], in[1], NULL, NULL};
    (void)out;
    /* y (where the one-dispatch product does not take it), then the
     * linear's own request */
    return wg_align_up(wg_desc_bytes(&y), 256) + wg_sc_linear(p, li, 4, &y);
}

wgml_status wg_en_linear_glu(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                             wgml_tensor *out2)
{
    (void)nin, (void)out2;
    const wgml_tensor *x = in[0], *w = in[1];
    wgml_status st = wg_check_tensor("wgml_linear", "x", x);
    if (st == WGML_OK)
        st = wg_check_tensor("wgml_linear", "w", w);
    if (st != WGML_OK)
        return st;
    int64_t k = x->shape[x->ndim - 1], rows = k ? wgml_tensor_nelem(x) / k : 0;
    st = WGML_ERR_UNSUPPORTED;
    if (rows <= WG_MATVEC_MAX_ROWS && p->mm.beta == 0.0f)
        st = wg_matvec_glu(x, w, &p->mm, p->sub, wg_xin_of(p), out);
    if (st != WGML_ERR_UNSUPPORTED)
        return st;
    /* the linear into scratch, then the glu over its even and odd columns */
    int64_t shape[WGML_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->ndim - 1] = w->shape[0];
    wgml_tensor *y = NULL, *gv = NULL, *uv = NULL;
    if ((st = wg_scratch_tensor_raw(x->ctx, WGML_F32, x->ndim, shape, &y)) != WGML_OK)
        return st;
    const wgml_tensor *li[4] = {x, w, NULL, NULL}; /* wg_en_linear looks at 4 */
    st = wg_en_linear(p, li, 2, y, NULL);
    if (st == WGML_OK)
        st = wgml_view_slice(y, x->ndim - 1, 0, w->shape[0], 2, &gv);
    if (st == WGML_OK)
        st = wgml_view_slice(y, x->ndim - 1, 1, w->shape[0], 2, &uv);
    if (st == WGML_OK) {
        wg_op_params q;
        memset(&q, 0, sizeof q);
        q.sub = p->sub;
        const wgml_tensor *gi[2] = {gv, uv};
        st = wg_op_def_get(WG_OP_GLU)->encode(&q, gi, 2, out, NULL);
    }
    wgml_tensor_free(gv);
    wgml_tensor_free(uv);
    wgml_tensor_free(y);
    return st;
}
