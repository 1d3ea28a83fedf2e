/*
 * Softmax family (wgml_softmax).  Kernel: softmax.wgsl (on rows.wgsl,
 * launched by rows.c); CPU reference: wg_softmax_ref.
 *
 * Semantics (sharpening wgml.h):
 *   logit  v = scale * x + slope(h) * mask        (scale 0 means 1)
 *   softmax  out = exp(v - max) / (sum exp(v - max) + exp(sink[h] - max)),
 *            max = max(max v, sink[h]);   log: out = v - max - log(sum)
 *   - axis: any axis of x (negative counts from the end); the row is read
 *     through strides in place, so a non-last axis or a strided view needs
 *     no copy.
 *   - mask: optional, f32/f16/bf16, numpy-broadcast to x's shape (it may
 *     have fewer dims, not more); -inf entries mask logits out.
 *   - ALiBi (max_bias > 0, only with a mask, as in ggml): h is the index
 *     along dim -3 of x (0 for fewer than 3 dims), n_head = that dim's size,
 *     n_head_log2 = 2^floor(log2 n_head), m0 = 2^(-max_bias / n_head_log2),
 *     m1 = 2^(-max_bias / 2 / n_head_log2), slope(h) = m0^(h+1) if
 *     h < n_head_log2 else m1^(2 (h - n_head_log2) + 1); without ALiBi the
 *     slope is 1.
 *   - sinks: optional 1-D float tensor of n_head logits (not scaled, not
 *     masked) that join max and sum and produce no output column.
 *   - ALiBi and sinks need the softmax axis to differ from the head axis.
 *   - a -inf logit (from x or mask) gives 0 (softmax) or -inf
 *     (log_softmax); a row whose logits are all -inf (and no finite sink)
 *     is written the same way, not as 0/0.
 *   - NaN: a NaN logit (from x or the mask) or sink, or a +inf logit or
 *     sink, makes its whole row NaN (PyTorch's result: the row's sum is
 *     NaN); other rows are unaffected.
 *   - x, out: f32/f16/bf16 (out may differ from x); compute is f32.
 *   - in place (out == x) is allowed.
 */
#include "rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ softmax */

static int64_t head_count(const int64_t shape4[4]) { return shape4[1]; }

static int64_t head_log2(int64_t n_head)
{
    int64_t k = 1;
    while (k * 2 <= n_head)
        k *= 2;
    return k;
}

double wg_alibi_slope(double max_bias, int64_t n_head, int64_t h)
{
    if (max_bias <= 0)
        return 1;
    double k = (double)head_log2(n_head);
    double m0 = pow(2, -max_bias / k), m1 = pow(2, -max_bias / 2 / k);
    return h < k ? pow(m0, (double)(h + 1)) : pow(m1, (double)(2 * (h - (int64_t)k) + 1));
}

static wgml_status need_float(const char *op, const char *what, const wgml_tensor *t)
{
    if (!wg_dtype_is_float(t->dtype))
        return wg_fail(WGML_ERR_DTYPE, "%s: %s is %s, must be f32, f16 or bf16", op, what,
                       wgml_dtype_name(t->dtype));
    return WGML_OK;
}

wgml_status wg_softmax_impl(const wgml_tensor *x, const wgml_tensor *mask, const wgml_tensor *sinks,
                         const wgml_softmax_params *params, wgml_tensor *out)
{
    const char *name = "wgml_softmax";
    wgml_softmax_params p = {-1, 1, 0, 0};
    if (params)
        p = *params;
    if (p.scale == 0)
        p.scale = 1;
    wgml_status st = wg_check_tensor(name, "x", x);
    if (st == WGML_OK)
        st = need_float(name, "x", x);
    if (st == WGML_OK)
        st = wg_check_out(name, out, -1, x->ndim, x->shape);
    if (st == WGML_OK)
        st = need_float(name, "out", out);
    /* One workgroup owns a row and reads all of it before writing: x may be
     * out itself. */
    if (st == WGML_OK)
        st = wg_check_writes(name, "out", out, true, "x", x, WG_END);
    if (st == WGML_OK)
        st = wg_check_writes(name, "out", out, false, "mask", mask, "sinks", sinks, WG_END);
    if (st != WGML_OK)
        return st;
    if (!isfinite(p.scale) || !isfinite(p.max_bias) || p.max_bias < 0)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: scale %g and max_bias %g must be finite, max_bias >= 0", name,
                       (double)p.scale, (double)p.max_bias);
    /* A scalar is a row of one. */
    int axis = x->ndim == 0 && (p.axis == 0 || p.axis == -1) ? 0 : wg_axis(x, p.axis);
    if (axis < 0)
        return wg_fail(WGML_ERR_INDEX, "%s: axis %d out of range for %d dims", name, p.axis, x->ndim);
    int a4 = x->ndim == 0 ? 3 : axis + 4 - x->ndim;
    int64_t shape4[4];
    wg_shape4(x, shape4);
    if (mask) {
        wg_view4 mv;
        char a[96], b[96];
        if ((st = need_float(name, "mask", mask)) != WGML_OK)
            return st;
        if (mask->ndim > x->ndim || !wg_view4_bcast(mask, shape4, &mv))
            return wg_fail(WGML_ERR_SHAPE, "%s: mask %s does not broadcast to x %s", name,
                           wg_shape_str(mask, a, sizeof a), wg_shape_str(x, b, sizeof b));
    }
    int64_t n_head = head_count(shape4);
    if (sinks) {
        if ((st = need_float(name, "sinks", sinks)) != WGML_OK)
            return st;
        if (sinks->ndim != 1 || sinks->shape[0] != n_head)
            return wg_fail(WGML_ERR_SHAPE, "%s: sinks must be 1-D with one logit per head (%lld, dim -3 of x)", name,
                           (long long)n_head);
    }
    bool alibi = mask && p.max_bias > 0;
    if ((alibi || sinks) && a4 == 1)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: ALiBi and sinks are per head (dim -3): softmax over that axis "
                       "is not defined for them", name);
    if (!wg_same_ctx(x, out) || !wg_same_ctx(x, mask) || !wg_same_ctx(x, sinks))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", name);

    /* Iteration space: x's other dims in order, then the softmax axis. */
    int perm[4], hp = 0;
    for (int i = 0, n = 0; i < 4; i++)
        if (i != a4) {
            if (i == 1)
                hp = n;
            perm[n++] = i;
        }
    perm[3] = a4;
    int64_t iter[4];
    for (int i = 0; i < 4; i++)
        iter[i] = shape4[perm[i]];
    wg_row_operand ops[4] = {
        wg_row_operand_of(x, shape4, perm, "x", false),
        {NULL, 0, {0, 0, 0, 0}, "m", false, false, 0},
        {NULL, 0, {0, 0, 0, 0}, "s", false, false, 0},
        wg_row_operand_of(out, shape4, perm, "o", true),
    };
    if (mask)
        ops[1] = wg_row_operand_of(mask, shape4, perm, "m", false);
    ops[0].vec = ops[1].vec = ops[3].vec = true;
    if (sinks) {
        ops[2] = (wg_row_operand){sinks, wg_view4_of(sinks).offset, {0, 0, 0, 0}, "s", false, false, 0};
        ops[2].st[hp] = sinks->strides[0];
    }
    double k = (double)head_log2(n_head > 0 ? n_head : 1);
    float fp[4] = {p.scale, (float)(-p.max_bias / k), (float)(-p.max_bias / 2 / k), 0};
    uint32_t flags = (p.log ? 1u : 0u) | (alibi ? 2u : 0u) | (mask ? 4u : 0u) | (sinks ? 8u : 0u);
    uint32_t ip[4] = {(uint32_t)hp, (uint32_t)k, flags, 0};
    /* Rows longer than one window: chunked passes with partial (max, sum)
     * pairs in slots 4 and 5 (softmax.wgsl PARTIAL / COMBINE). */
    return wg_rows_launch(x->ctx, "softmax.wgsl", "rows_main", "ROWS4OK", ops, 4, iter, fp, ip, 4);
}

/* ------------------------------------------------------------ reference */

/* Linear index in a (ndim, shape) tensor of element i of the 4-D space s4
 * it broadcasts to. */
static int64_t bcast_index(int ndim, const int64_t *shape, const int64_t s4[4], int64_t i)
{
    int64_t c[4], r = 0;
    for (int d = 3; d >= 0; d--) {
        c[d] = i % s4[d];
        i /= s4[d];
    }
    for (int d = 0; d < ndim; d++)
        r = r * shape[d] + (shape[d] == 1 ? 0 : c[4 - ndim + d]);
    return r;
}

void wg_softmax_ref(int ndim, const int64_t *shape, const double *x, int mndim, const int64_t *mshape,
                    const double *mask, const double *sinks, const wgml_softmax_params *p, double *out)
{
    int64_t s4[4];
    int pad = 4 - ndim;
    for (int i = 0; i < 4; i++)
        s4[i] = i < pad ? 1 : shape[i - pad];
    int axis = ndim == 0 ? 3 : (p->axis < 0 ? p->axis + ndim : p->axis) + pad;
    double scale = p->scale == 0 ? 1 : p->scale;
    int64_t n = s4[axis], inner = 1, total = s4[0] * s4[1] * s4[2] * s4[3];
    for (int i = axis + 1; i < 4; i++)
        inner *= s4[i];
    if (n == 0)
        return;
    double *v = malloc(sizeof(double) * (size_t)n);
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t row = 0; row < total / n; row++) {
        int64_t first = (row / inner) * n * inner + row % inner;
        int64_t c[4];
        for (int64_t t = first, d = 3; d >= 0; d--) {
            c[d] = t % s4[d];
            t /= s4[d];
        }
        int64_t h = c[1];
        double slope = mask ? wg_alibi_slope(p->max_bias, s4[1], h) : 1;
        double mx = -INFINITY;
        bool nan = sinks && isnan(sinks[h]);
        for (int64_t j = 0; j < n; j++) {
            idx[j] = first + j * inner;
            v[j] = scale * x[idx[j]];
            if (mask)
                v[j] += slope * mask[bcast_index(mndim, mshape, s4, idx[j])];
            mx = v[j] > mx ? v[j] : mx;
            nan = nan || isnan(v[j]);
        }
        if (sinks && sinks[h] > mx)
            mx = sinks[h];
        if (nan || mx == INFINITY) { /* the NaN rule: the whole row */
            for (int64_t j = 0; j < n; j++)
                out[idx[j]] = NAN;
            continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < n && mx > -INFINITY; j++)
            sum += v[j] > -INFINITY ? exp(v[j] - mx) : 0;
        if (sinks && mx > -INFINITY)
            sum += exp(sinks[h] - mx);
        for (int64_t j = 0; j < n; j++) {
            if (sum == 0)
                out[idx[j]] = p->log ? -INFINITY : 0;
            else
                out[idx[j]] = p->log ? v[j] - mx - log(sum) : exp(v[j] - mx) / sum;
        }
    }
    free(v);
    free(idx);
}

/* ------------------------------------------------------------ registry */

static const wgml_op_info softmax_rows[] = {
    {"SOFTMAX", "softmax", WG_DT_FLOATS},
    {"LOG_SOFTMAX", "softmax", WG_DT_FLOATS},
};

wg_op_table wg_softmax_ops(void) { return (wg_op_table){softmax_rows, sizeof softmax_rows / sizeof *softmax_rows}; }
