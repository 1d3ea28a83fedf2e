/*
 * A linear whose x is made in the integer mat-vec path's first pass:
 * WG_OP_LINEAR_PRE, made by graph fusion (src/graph/fuse.c) of
 *
 *   linear(rms_norm(a (+ u)) * g, w)   the norm's residual sum a + u still
 *                                       written where the residual fusion
 *                                       gave it a sum_out;
 *   linear(glu(a, u), w)                two-input glu, any kind.
 *
 * Why: a decode step runs its products on the integer path, whose first
 * pass (matvec_xq.wgsl) quantises x anyway; computing the norm or the glu
 * there saves their dispatches (on an H200, dropping a decode layer's two
 * norms and its glu sped the Llama-3-8B decode by ~14% and ~5%;
 * bench/NOTES.md, WGML_SKIP_KERNELS).  Measured, it does not pay yet: the
 * fused passes (one workgroup a row for the norm, 32 activations a thread
 * for the glu) cost more than the dispatches saved (8B decode 230.7
 * tokens/s fused, 242.9 unfused), so graph fusion makes this op only with
 * WGML_GRAPH_FUSE=prologue.  Where the integer path does not
 * take the product (more rows, a dtype without it, a CPU adapter's table,
 * rows not contiguous) the encode makes x in declared scratch with the
 * norm or glu op and runs wgml_linear on it: the same values as the
 * unfused graph.  On the integer path, x's values differ from the unfused
 * graph's only by the norm's summation order (the glu's are bit-exact).
 *
 * Inputs: a, w, bias, u, g (norm weight): 5, those past w optional.
 * Params: flag (wg_xpre_kind), norm (RMS, eps), sub (glu kind), mm and
 * dtype (the linear's).  out2: the norm's sum_out.
 */
#include "matvec.h"

#include <string.h>

enum { IN_A, IN_W, IN_BIAS, IN_U, IN_G, N_IN };

/* ------------------------------------------------------------ the first pass */

/* Element offsets of t's first `rows` rows (its last dim is the row) and
 * whether each row is contiguous. */
static bool row_offsets(const wgml_tensor *t, int rows, uint64_t off[8])
{
    wg_view4 v = wg_view4_of(t);
    if (v.shape[3] > 1 && v.strides[3] != 1)
        return false;
    for (int r = 0; r < rows; r++) {
        int64_t i = r, o = (int64_t)v.offset;
        for (int d = 2; d >= 0; d--) {
            o += (i % v.shape[d]) * v.strides[d];
            i /= v.shape[d];
        }
        off[r] = (uint64_t)o;
    }
    return true;
}

typedef struct bound {
    wg_binding b;
    uint64_t first; /* elements from the binding's start to the first row */
} bound;

/* t's rows (row offsets off, k elements each) in one binding; false when
 * they do not fit one. */
static bool bind_rows(const wgml_tensor *t, int rows, const uint64_t off[8], uint64_t k, bound *out)
{
    uint64_t lo = off[0], hi = off[0];
    for (int r = 1; r < rows; r++) {
        lo = off[r] < lo ? off[r] : lo;
        hi = off[r] > hi ? off[r] : hi;
    }
    uint64_t e = wg_dtype(t->dtype)->block_bytes, bytes = (hi - lo + k) * e, rem;
    out->b = wg_bind_from(t->st->buf, lo * e, bytes, &rem);
    out->first = rem / e - lo; /* add a row's offset to get its element in the binding */
    return out->b.size >= rem + bytes;
}

/* A read operand's access: rw where it shares a buffer with one of the
 * dispatch's written operands w[0..nw). */
static const char *mode(const wgml_tensor *t, const wgml_tensor *const *w, int nw)
{
    bool shared = false;
    for (int i = 0; i < nw && !shared; i++)
        shared = w[i] && w[i]->st->buf == t->st->buf;
    return shared ? "rw" : "r";
}

wgml_status wg_xquant_pre(wgml_ctx *ctx, const char *op, const wg_xpre *pre, const mv_params *pp, int rows,
                          wgml_tensor **xq)
{
    const bool norm = pre->kind == WG_XPRE_NORM;
    const uint64_t k = pp->k, rw = wg_q8_row_words((int64_t)k);
    uint64_t ao[8] = {0}, uo[8] = {0}, so[8] = {0}, go[8] = {0};
    if (!row_offsets(pre->a, rows, ao) || (pre->u && !row_offsets(pre->u, rows, uo)) ||
        (pre->so && !row_offsets(pre->so, rows, so)) || (pre->g && !row_offsets(pre->g, 1, go)))
        return WGML_ERR_UNSUPPORTED;
    bound a, u, g, s;
    memset(&u, 0, sizeof u), memset(&g, 0, sizeof g), memset(&s, 0, sizeof s);
    if (!bind_rows(pre->a, rows, ao, k, &a) || (pre->u && !bind_rows(pre->u, rows, uo, k, &u)) ||
        (pre->g && !bind_rows(pre->g, 1, go, k, &g)) || (pre->so && !bind_rows(pre->so, rows, so, k, &s)))
        return WGML_ERR_UNSUPPORTED;
    wgml_status st = wg_scratch_tensor_raw(ctx, WGML_U32, 1, (int64_t[]){(int64_t)(rw * (uint64_t)rows)}, xq);
    if (st != WGML_OK)
        return st;
    uint64_t qrem;
    wg_binding bq = wg_bind_from((*xq)->st->buf, (*xq)->offset, rw * (uint64_t)rows * 4, &qrem);
    mv_params p = *pp;
    p.xs = 1;
    p.m = (uint32_t)rows;
    p.alpha = pre->eps;
    p.act = (uint32_t)pre->glu;
    p.pad0 = pre->g ? (uint32_t)(g.first + go[0]) : 0;
    p.pad1 = (pre->u ? 1u : 0u) | (pre->g ? 2u : 0u) | (pre->so ? 4u : 0u);
    /* vector loads and stores where rows start on 16 bytes */
    bool v4 = k % 4 == 0 && wg_vec4_dtype(ctx, pre->a->dtype);
    bool u4 = pre->u && k % 4 == 0 && wg_vec4_dtype(ctx, pre->u->dtype);
    bool s4 = pre->so && k % 4 == 0 && wg_vec4_dtype(ctx, pre->so->dtype);
    bool g4 = pre->g && wg_vec4_dtype(ctx, pre->g->dtype) && p.pad0 % 4 == 0;
    for (int r = 0; r < 8; r++) {
        int q = r < rows ? r : 0;
        p.xo[r] = (uint32_t)(a.first + ao[q]);
        p.bo[r] = pre->u ? (uint32_t)(u.first + uo[q]) : 0;
        p.co[r] = pre->so ? (uint32_t)(s.first + so[q]) : 0;
        p.oo[r] = (uint32_t)(qrem / 4 + (uint64_t)q * rw);
        v4 = v4 && p.xo[r] % 4 == 0;
        u4 = u4 && p.bo[r] % 4 == 0;
        s4 = s4 && p.co[r] % 4 == 0;
    }
    /* absent operands: x bound in u's and g's place, the codes in so's
     * (flags keep the kernel off them); one buffer is bound writable or
     * not at all in a dispatch (a graph's arena holds most of these) */
    const wgml_tensor *written[2] = {*xq, pre->so};
    const wgml_tensor *ut = pre->u ? pre->u : pre->a, *gt = pre->g ? pre->g : pre->a;
    wg_binding b[5] = {bq, a.b, pre->u ? u.b : a.b, pre->g ? g.b : a.b, pre->so ? s.b : bq};
    char defs[320];
    int n = snprintf(defs, sizeof defs, "XQUANT;PRE_ANY;%s;M=1;RPW=1;WG=64;UPT=1;QK=32;BB=34;X_DT=%s;X_MODE=%s%s%s;"
                     "U_DT=%s;U_MODE=%s%s%s", norm ? "PRE_NORM" : "PRE_GLU", wg_dtype(pre->a->dtype)->wgsl,
                     mode(pre->a, written, 2), v4 ? "4" : "", v4 ? ";XV4" : "", wg_dtype(ut->dtype)->wgsl,
                     mode(ut, written, 2), u4 ? "4" : "", u4 ? ";UV4" : "");
    if (norm)
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";G_DT=%s;G_MODE=%s%s%s;SO_DT=%s;SO_MODE=rw%s%s",
                      wg_dtype(gt->dtype)->wgsl, mode(gt, written, 2), g4 ? "4" : "", g4 ? ";GV4" : "",
                      pre->so ? wg_dtype(pre->so->dtype)->wgsl : "f32", s4 ? "4" : "", s4 ? ";SOV4" : "");
    int nb = norm ? 5 : 3;
    unsigned ro = 0;
    const wgml_tensor *bt[5] = {*xq, pre->a, ut, gt, pre->so ? pre->so : *xq};
    for (int i = 1; i < nb; i++)
        ro |= i < 4 && strcmp(mode(bt[i], written, 2), "r") == 0 ? 1u << i : 0u;
    if (n >= (int)sizeof defs)
        return wg_fail(WGML_ERR_INTERNAL, "%s: kernel defines too long", op);
    wg_kernel_ref ref = {"matvec.wgsl", norm ? "xquant_norm" : "xquant", defs, nb, ro};
    wgml_kernel *kern;
    if ((st = wg_kernel_get(ctx, &ref, &kern)) != WGML_OK)
        return st;
    uint32_t grid[3];
    /* norm: a workgroup a row; glu: a thread a 32-element block */
    wg_split_grid(65535, norm ? (uint64_t)rows : (k / 32 * (uint64_t)rows + 63) / 64, grid);
    return wg_dispatch(ctx, kern, b, nb, &p, sizeof p, grid[0], grid[1], grid[2]);
}

/* ------------------------------------------------------------ op table row */

static wgml_status fail(wgml_status st, const char *msg)
{
    return wg_fail(st, "wgml_linear (fused with its x's norm or glu): %s", msg);
}

/* x's description: the norm's or glu's f32 output, a's shape. */
static wgml_status x_desc(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *x)
{
    const wg_desc *a = in[IN_A], *u = nin > IN_U ? in[IN_U] : NULL, *g = nin > IN_G ? in[IN_G] : NULL;
    if (p->flag != WG_XPRE_NORM && p->flag != WG_XPRE_GLU)
        return fail(WGML_ERR_INVALID_ARG, "unknown prologue kind");
    if (!wg_dtype_is_float(a->dtype) || (u && !wg_dtype_is_float(u->dtype)) || (g && !wg_dtype_is_float(g->dtype)))
        return fail(WGML_ERR_DTYPE, "the prologue's operands must be floats");
    if (a->ndim < 1 || (u && (u->ndim != a->ndim || memcmp(u->shape, a->shape, sizeof(int64_t) * (size_t)a->ndim))))
        return fail(WGML_ERR_SHAPE, "the residual (norm) or up (glu) operand must have x's shape");
    if (p->flag == WG_XPRE_GLU && (!u || g || (unsigned)p->sub > WGML_REGLU))
        return fail(WGML_ERR_INVALID_ARG, "a glu prologue takes two operands and a known kind");
    if (p->flag == WG_XPRE_NORM &&
        (p->norm.kind != WGML_RMS_NORM || (g && (g->ndim != 1 || g->shape[0] != a->shape[a->ndim - 1]))))
        return fail(WGML_ERR_INVALID_ARG, "a norm prologue is an RMS norm with a [k] weight");
    *x = *a;
    x->dtype = WGML_F32;
    return WGML_OK;
}

wgml_status wg_ck_linear_pre(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    wg_desc x;
    wgml_status st = x_desc(p, in, nin, &x);
    if (st != WGML_OK)
        return st;
    const wg_desc *li[4] = {&x, in[IN_W], nin > IN_BIAS ? in[IN_BIAS] : NULL, NULL};
    return wg_ck_linear(p, li, 4, out);
}

uint64_t wg_sc_linear_pre(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    wg_desc x;
    if (x_desc(p, in, nin, &x) != WGML_OK)
        return 0;
    const wg_desc *li[4] = {&x, in[IN_W], nin > IN_BIAS ? in[IN_BIAS] : NULL, NULL};
    const wg_desc *ni[4] = {in[IN_A], NULL, NULL, NULL};
    /* x (where the integer path does not take the product), then the norm's
     * and the linear's own requests, one after the other */
    return wg_align_up(wg_desc_bytes(&x), 256) + (p->flag == WG_XPRE_NORM ? wg_sc_norm(p, ni, 1, &x) : 0) +
           wg_sc_linear(p, li, 4, out);
}

wgml_status wg_en_linear_pre(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                             wgml_tensor *out2)
{
    const wgml_tensor *a = in[IN_A], *w = in[IN_W], *bias = nin > IN_BIAS ? in[IN_BIAS] : NULL;
    const wgml_tensor *u = nin > IN_U ? in[IN_U] : NULL, *g = nin > IN_G ? in[IN_G] : NULL;
    wgml_status st = wg_check_tensor("wgml_linear", "x", a);
    if (st != WGML_OK)
        return st;
    wgml_tensor *x = NULL;
    if ((st = wg_scratch_tensor_raw(a->ctx, WGML_F32, a->ndim, a->shape, &x)) != WGML_OK)
        return st;
    wg_xpre pre = {(wg_xpre_kind)p->flag, a, u, g, out2, p->norm.eps, p->sub};
    int64_t rows = a->shape[a->ndim - 1] ? wgml_tensor_nelem(a) / a->shape[a->ndim - 1] : 0;
    st = WGML_ERR_UNSUPPORTED;
    if (rows <= WG_MATVEC_MAX_ROWS && p->mm.beta == 0.0f)
        st = wg_matvec_pre(x, &pre, w, bias, &p->mm, out);
    if (st == WGML_ERR_UNSUPPORTED) { /* x made by the op itself, then the product */
        wg_op_params q;
        memset(&q, 0, sizeof q);
        if (pre.kind == WG_XPRE_NORM) {
            q.norm = p->norm;
            const wgml_tensor *ni[4] = {a, g, NULL, u};
            st = wg_op_def_get(WG_OP_NORM)->encode(&q, ni, 4, x, out2);
        } else {
            q.sub = p->sub;
            const wgml_tensor *gi[2] = {a, u};
            st = wg_op_def_get(WG_OP_GLU)->encode(&q, gi, 2, x, NULL);
        }
        const wgml_tensor *li[4] = {x, w, bias, NULL}; /* wg_en_linear looks at 4 */
        if (st == WGML_OK)
            st = wg_en_linear(p, li, 3, out, NULL);
    }
    wgml_tensor_free(x);
    return st;
}
