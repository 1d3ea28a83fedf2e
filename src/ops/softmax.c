/*
 * Softmax family (wgml_softmax) and the row launcher shared with norm.c.
 * Kernel: softmax.wgsl (on rows.wgsl); CPU reference: wg_softmax_ref.
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
 *     is written the same way, not as 0/0; NaN inputs give unspecified
 *     values in their row (WGSL's max() of NaN is not defined).
 *   - x, out: f32/f16/bf16 (out may differ from x); compute is f32.
 *   - in place (out == x) is allowed.
 */
#include "rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ launcher */

typedef struct row_params {
    uint32_t shape[4];
    uint32_t offs[WG_ROW_MAX_OPS];
    uint32_t st[WG_ROW_MAX_OPS][4];
    float fp[4];
    uint32_t ip[4];
} row_params;

wg_row_operand wg_row_operand_of(const wgml_tensor *t, const int64_t shape4[4], const int perm[4], const char *name,
                                 bool write)
{
    wg_view4 v;
    wg_view4_bcast(t, shape4, &v);
    wg_row_operand o = {t, v.offset, {0, 0, 0, 0}, name, write, false};
    for (int i = 0; i < 4; i++)
        o.st[i] = v.strides[perm[i]];
    return o;
}

static uint64_t esize(const wgml_tensor *t) { return wg_dtype(t->dtype)->block_bytes; }

/* Bytes [first, last] an operand touches over iter. */
static void extent(const wg_row_operand *o, const int64_t iter[4], uint64_t *first, uint64_t *last)
{
    *first = o->offset * esize(o->t);
    *last = wg_span_last(o->offset, o->st, iter) * esize(o->t) + esize(o->t) - 1;
}

static bool rows_fit(wgml_ctx *ctx, const wg_row_operand *ops, int nops, const int64_t iter[4])
{
    uint64_t cap = wg_window_cap(ctx);
    if ((uint64_t)(iter[0] * iter[1] * iter[2]) > 0xffffffffull - 65536)
        return false;
    for (int j = 0; j < nops; j++) {
        if (!ops[j].t)
            continue;
        uint64_t a, b;
        extent(&ops[j], iter, &a, &b);
        if (b + 1 - a > cap)
            return false;
    }
    return true;
}

/* The operand bound in slot j: itself, or for an absent slot a present
 * one of the same direction (so a placeholder for an output is writable
 * without making an input writable). */
static const wg_row_operand *bound(const wg_row_operand *ops, int nops, int j)
{
    if (ops[j].t)
        return &ops[j];
    for (int i = 0; ops[j].write && i < nops; i++)
        if (ops[i].t && ops[i].write)
            return &ops[i];
    return &ops[0];
}

static const wgml_buffer *buf_of(const wg_row_operand *ops, int nops, int j)
{
    return bound(ops, nops, j)->t->st->buf;
}

static wgml_status rows_one(wgml_ctx *ctx, wgml_kernel *k, const wg_row_operand *ops, int nops,
                            const int64_t iter[4], const float fp[4], const uint32_t ip[4], bool vec)
{
    row_params p;
    memset(&p, 0, sizeof p);
    wg_binding b[WG_ROW_MAX_OPS];
    for (int i = 0; i < 4; i++)
        p.shape[i] = (uint32_t)iter[i];
    for (int j = 0; j < nops; j++) {
        uint64_t a, e, rem;
        const wg_row_operand *o = bound(ops, nops, j);
        extent(o, iter, &a, &e);
        /* placeholder: the first element only, or the first vector (the
         * smallest binding an array of vectors accepts) */
        if (!ops[j].t)
            e = a + esize(o->t) * (vec && ops[j].vec ? 4 : 1) - 1;
        b[j] = wg_bind_from(o->t->st->buf, a, e + 1 - a, &rem);
        if (!ops[j].t)
            continue;
        p.offs[j] = (uint32_t)(rem / esize(o->t));
        for (int i = 0; i < 4; i++)
            p.st[j][i] = (uint32_t)o->st[i];
    }
    if (fp)
        memcpy(p.fp, fp, sizeof p.fp);
    if (ip)
        memcpy(p.ip, ip, sizeof p.ip);
    uint64_t rows = (uint64_t)(iter[0] * iter[1] * iter[2]);
    return wg_dispatch(ctx, k, b, nops, &p, sizeof p, (uint32_t)rows, 1, 1);
}

/* Halves the outermost row dim until every window fits one binding. */
static wgml_status rows_split(wgml_ctx *ctx, wgml_kernel *k, const wg_row_operand *ops, int nops,
                              const int64_t iter[4], const float fp[4], const uint32_t ip[4], bool vec)
{
    if (rows_fit(ctx, ops, nops, iter))
        return rows_one(ctx, k, ops, nops, iter, fp, ip, vec);
    int d = 0;
    while (d < 3 && iter[d] == 1)
        d++;
    if (d == 3)
        return wg_fail(WGML_ERR_LIMIT, "kernel '%s': one row of %lld elements spans more than one storage binding "
                       "(%llu bytes)", k->name, (long long)iter[3],
                       (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    int64_t half = iter[d] / 2;
    for (int part = 0; part < 2; part++) {
        int64_t sub[4] = {iter[0], iter[1], iter[2], iter[3]};
        int64_t start = part ? half : 0;
        sub[d] = part ? iter[d] - half : half;
        wg_row_operand o2[WG_ROW_MAX_OPS];
        for (int j = 0; j < nops; j++) {
            o2[j] = ops[j];
            o2[j].offset += (uint64_t)(start * ops[j].st[d]);
        }
        wgml_status st = rows_split(ctx, k, o2, nops, sub, fp, ip, vec);
        if (st != WGML_OK)
            return st;
    }
    return WGML_OK;
}

/* Vectors per thread for the ROWS4 path (see wg_rows_launch), 0 if not
 * taken.  Strides and offsets that are multiples of 4 stay so through
 * rows_split's halving and the 256-byte binding offsets. */
static int rows_vec_count(wgml_ctx *ctx, const wg_row_operand *ops, int nops, const int64_t iter[4], int wg,
                          const char *defines)
{
    if (!defines || !strstr(defines, "ROWS4OK") || iter[3] % 4 != 0)
        return 0;
    int r = 1;
    while ((int64_t)r * 4 * wg < iter[3])
        r *= 2;
    if (r > 8)
        return 0;
    for (int j = 0; j < nops; j++) {
        const wg_row_operand *o = &ops[j];
        if (!o->vec || !o->t)
            continue;
        bool f32 = o->t->dtype == WGML_F32, f16 = o->t->dtype == WGML_F16 && wg_has(ctx, WGML_FEATURE_F16);
        if (!(f32 || f16) || o->st[3] != 1 || o->offset % 4 != 0)
            return 0;
        for (int i = 0; i < 3; i++)
            if (o->st[i] % 4 != 0)
                return 0;
    }
    return r;
}

wgml_status wg_rows_launch(wgml_ctx *ctx, const char *file, const char *entry, const char *defines,
                           wg_row_operand *ops, int nops, const int64_t iter[4], const float fp[4],
                           const uint32_t ip[4])
{
    if (wg_nelem4(iter) == 0)
        return wg_check(ctx);
    /* Rows up to 1024 (16 elements a thread) take small workgroups: more
     * rows in flight per SM, which is what short rows are bound by. */
    int wg = iter[3] <= 1024 ? 64 : 256;
    int rv = rows_vec_count(ctx, ops, nops, iter, wg, defines);
    char defs[640];
    size_t u = 0;
    if (rv) /* first, so profiles and kernel names show the path */
        u += (size_t)snprintf(defs, sizeof defs, "ROWS4;R=%d;", rv);
    unsigned ro = 0;
    for (int j = 0; j < nops; j++) {
        /* WebGPU forbids one buffer bound both read-only and writable in a
         * dispatch: a read operand sharing a written buffer is bound rw. */
        bool rw = ops[j].t && ops[j].write;
        for (int i = 0; i < nops && !rw; i++)
            rw = ops[i].t && ops[i].write && buf_of(ops, nops, i) == buf_of(ops, nops, j);
        if (!rw)
            ro |= 1u << j;
        /* Every slot is declared; an absent one with the dtype of the
         * operand bound in its place (kernels test a uniform flag before
         * touching it), so leaving out an operand of the common dtype
         * makes no new kernel variant. */
        char up[8] = {0};
        for (size_t c = 0; ops[j].name[c] && c + 1 < sizeof up; c++)
            up[c] = (char)(ops[j].name[c] >= 'a' && ops[j].name[c] <= 'z' ? ops[j].name[c] - 32 : ops[j].name[c]);
        int w = snprintf(defs + u, sizeof defs - u, "%s_DT=%s;%s_MODE=%s%s;", up,
                         wg_dtype(bound(ops, nops, j)->t->dtype)->wgsl, up,
                         ops[j].t && ops[j].write ? "w" : rw ? "rw" : "r", rv && ops[j].vec ? "4" : "");
        u += w > 0 ? (size_t)w : 0;
    }
    snprintf(defs + u, sizeof defs - u, "WG=%d;%s", wg, defines ? defines : "");
    wg_kernel_ref ref = {file, entry, defs, nops, ro};
    wgml_kernel *k = NULL;
    wgml_status st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    return rows_split(ctx, k, ops, nops, iter, fp, ip, rv != 0);
}

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

wgml_status wgml_softmax(const wgml_tensor *x, const wgml_tensor *mask, const wgml_tensor *sinks,
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
        {NULL, 0, {0, 0, 0, 0}, "m", false, false},
        {NULL, 0, {0, 0, 0, 0}, "s", false, false},
        wg_row_operand_of(out, shape4, perm, "o", true),
    };
    if (mask)
        ops[1] = wg_row_operand_of(mask, shape4, perm, "m", false);
    ops[0].vec = ops[1].vec = ops[3].vec = true;
    if (sinks) {
        ops[2] = (wg_row_operand){sinks, wg_view4_of(sinks).offset, {0, 0, 0, 0}, "s", false, false};
        ops[2].st[hp] = sinks->strides[0];
    }
    double k = (double)head_log2(n_head > 0 ? n_head : 1);
    float fp[4] = {p.scale, (float)(-p.max_bias / k), (float)(-p.max_bias / 2 / k), 0};
    uint32_t flags = (p.log ? 1u : 0u) | (alibi ? 2u : 0u) | (mask ? 4u : 0u) | (sinks ? 8u : 0u);
    uint32_t ip[4] = {(uint32_t)hp, (uint32_t)k, flags, 0};
    return wg_rows_launch(x->ctx, "softmax.wgsl", "softmax", "ROWS4OK", ops, 4, iter, fp, ip);
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
        for (int64_t j = 0; j < n; j++) {
            idx[j] = first + j * inner;
            v[j] = scale * x[idx[j]];
            if (mask)
                v[j] += slope * mask[bcast_index(mndim, mshape, s4, idx[j])];
            mx = v[j] > mx ? v[j] : mx;
        }
        if (sinks && sinks[h] > mx)
            mx = sinks[h];
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
