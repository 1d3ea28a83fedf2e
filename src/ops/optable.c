/*
 * The op table (optable.h): a check and an encode per op.  Checks are the
 * shape inference of each op as wgml.h states it, written once here on
 * descriptions (no tensors, no GPU); the encodes call the eager functions,
 * which check the concrete operands again (layout, aliasing, quantised
 * block rules), so a rule the check does not model still fails at
 * compile, with the node named there.
 *
 * Scratch (optable.h's `scratch`): no op allocates a buffer; temporaries
 * come from wg_scratch_tensor (zeroed: the pool's new buffers are, and an
 * arena region gets a recorded fill), and every row whose encode takes
 * any declares a bound on the most bytes it holds at once, each request
 * rounded up to 256.  The path an op takes may depend on layouts and the
 * binding size (WGML_MAX_BINDING, down to 4096), which a description does
 * not carry, so a bound is the most over paths (a strided row may fit one
 * element a window); ops that run in parts (wg_split_rows' halves, rope's
 * pieces) release each part's scratch before the next (wg_scratch_release),
 * so a bound covers one part.  Bounds grow with every dim: a graph's bound
 * at the dims' maxima holds for any binding.  Eager calls (eager.c run())
 * fail with WGML_ERR_INTERNAL when an op takes more than its row declares.
 * The rows (wg_sc_* in optable_scratch.c unless named):
 *   set_rows      winners [batches x dst rows] i32 when an index can repeat,
 *                 + a copy of src for a quantised dst (sc_set_rows, below)
 *   get_rows, embedding, dequantize: out of a quantised table (sc_quant_out)
 *   reduce        running states R x sw x 4 (a dim cut into windows) + one
 *                 partial-state array every box reuses, <= min(R x min(1024,
 *                 L / 512), 32 x 2047) states (reduce.c)
 *   cumsum        block totals and their scan, <= 2046 words each; or one
 *                 row in pieces: totals of <= len pieces, their own scan
 *                 in pieces of >= 960 words
 *   argsort       pairs rows x pow2ceil(len) x 8 for rows past one block;
 *                 or one row in chunks: a contiguous copy + pairs and
 *                 ranks of <= max(64, pow2ceil(len)); top_k adds indices
 *                 [rows, k] i32 when only the values are wanted
 *   softmax, norm rows past one window: 2 f32 partials a (row, chunk),
 *                 <= len chunks: 8 x nelem (rows.c); GROUP_NORM adds
 *                 stand-ins (x, residual, out, sum_out) and [C] weight/bias
 *   rope          NEOX / M-RoPE rows past one window: a piece's halves in
 *                 x's and out's dtype, <= rows x n_dims each
 *   sample        a row past one binding: state 64 bytes + 16 bytes a
 *                 chunk, <= vocab chunks; or <= 8 rows split: 64 bytes a
 *                 row + (16 + 4 (top_k + 3)) bytes a 2048-logit chunk
 *                 (sample.c, the larger of the two)
 *   matmul, linear, linear_id, attention: optable_mm.c.
 */
#include "optable.h"
#include "elementwise.h"

#include <string.h>

const char *wg_desc_str(const wg_desc *d, const char *const *names, char *buf, size_t n)
{
    size_t u = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < d->ndim && u < n; i++) {
        const char *sep = i ? ", " : "";
        if (wg_is_sym(d->shape[i]) && names && names[wg_sym_id(d->shape[i])])
            u += (size_t)snprintf(buf + u, n - u, "%s%s", sep, names[wg_sym_id(d->shape[i])]);
        else if (wg_is_sym(d->shape[i]))
            u += (size_t)snprintf(buf + u, n - u, "%sdim%d", sep, wg_sym_id(d->shape[i]));
        else
            u += (size_t)snprintf(buf + u, n - u, "%s%lld", sep, (long long)d->shape[i]);
    }
    if (u < n)
        snprintf(buf + u, n - u, "]");
    return buf;
}

/* ------------------------------------------------------------ helpers */

#define FAIL(code, ...) return wg_fail(code, __VA_ARGS__)

static wgml_status same_as(const wg_desc *x, wg_desc *out)
{
    *out = *x;
    return WGML_OK;
}

static int axis_of(const wg_desc *d, int axis)
{
    if (axis < 0)
        axis += d->ndim;
    return axis >= 0 && axis < d->ndim ? axis : -1;
}

static wgml_status need_fixed(int64_t v, const char *what)
{
    if (wg_is_sym(v))
        FAIL(WGML_ERR_SHAPE, "%s is a symbolic dim: this op needs a fixed size there", what);
    return WGML_OK;
}

/* Numpy broadcast of n descriptions (right-aligned); a symbolic dim
 * broadcasts against 1 and itself only. */
static wgml_status bcast(const wg_desc *const *d, int n, wg_desc *out)
{
    int nd = 0;
    for (int i = 0; i < n; i++)
        if (d[i] && d[i]->ndim > nd)
            nd = d[i]->ndim;
    out->ndim = nd;
    for (int k = 0; k < nd; k++) {
        int64_t v = 1;
        for (int i = 0; i < n; i++) {
            if (!d[i])
                continue;
            int j = d[i]->ndim - nd + k;
            if (j < 0)
                continue;
            int64_t s = d[i]->shape[j];
            if (s == v || s == 1)
                continue;
            if (v != 1) {
                char a[96], b[96];
                FAIL(WGML_ERR_SHAPE, "shapes %s and %s do not broadcast (dim %d)", wg_desc_str(d[0], NULL, a, sizeof a),
                     wg_desc_str(d[i], NULL, b, sizeof b), k);
            }
            v = s;
        }
        out->shape[k] = v;
    }
    return WGML_OK;
}

static wgml_status need_dtype(const char *what, wgml_dtype t, uint32_t allowed)
{
    if (!(allowed & WG_DT_BIT(t)))
        FAIL(WGML_ERR_DTYPE, "%s: dtype %s is not supported", what, wgml_dtype_name(t));
    return WGML_OK;
}

/* ------------------------------------------------------------ elementwise */

static wgml_status ck_unary(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if ((unsigned)p->sub >= WGML_UNARY_COUNT)
        FAIL(WGML_ERR_INVALID_ARG, "unknown unary op %d", p->sub);
    wgml_status st = need_dtype("x", in[0]->dtype, wg_unary_dtypes((wgml_unary_op)p->sub));
    return st != WGML_OK ? st : same_as(in[0], out);
}

static wgml_status ck_binary(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if ((unsigned)p->sub >= WGML_BINARY_COUNT)
        FAIL(WGML_ERR_INVALID_ARG, "unknown binary op %d", p->sub);
    if (in[0]->dtype != in[1]->dtype)
        FAIL(WGML_ERR_DTYPE, "a is %s but b is %s (cast one first)", wgml_dtype_name(in[0]->dtype),
             wgml_dtype_name(in[1]->dtype));
    wgml_status st = need_dtype("a", in[0]->dtype, wg_binary_dtypes((wgml_binary_op)p->sub));
    if (st == WGML_OK)
        st = bcast(in, 2, out);
    out->dtype = p->sub >= WGML_EQ ? WGML_BOOL : in[0]->dtype;
    return st;
}

static wgml_status ck_where(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (in[0]->dtype != WGML_BOOL)
        FAIL(WGML_ERR_DTYPE, "cond is %s; it must be bool", wgml_dtype_name(in[0]->dtype));
    if (in[1]->dtype != in[2]->dtype)
        FAIL(WGML_ERR_DTYPE, "a is %s but b is %s", wgml_dtype_name(in[1]->dtype), wgml_dtype_name(in[2]->dtype));
    wgml_status st = bcast(in, 3, out);
    out->dtype = in[1]->dtype;
    return st;
}

static wgml_status ck_cast(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (!wg_dtype(p->dtype) || !wg_dtype_is_plain(p->dtype) || !wg_dtype_is_plain(in[0]->dtype))
        FAIL(WGML_ERR_DTYPE, "cast from %s to %s: plain dtypes only (dequantize quantised ones)",
             wgml_dtype_name(in[0]->dtype), wg_dtype(p->dtype) ? wgml_dtype_name(p->dtype) : "?");
    *out = *in[0];
    out->dtype = p->dtype;
    return WGML_OK;
}

static wgml_status ck_copy(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    return same_as(in[0], out); /* any dtype, quantised blocks too */
}

static wgml_status ck_fill(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (!wg_dtype(p->dtype) || !wg_dtype_is_plain(p->dtype))
        FAIL(WGML_ERR_DTYPE, "fill: plain dtypes only");
    if (p->ndim < 0 || p->ndim > WGML_MAX_DIMS)
        FAIL(WGML_ERR_SHAPE, "ndim %d: must be 0..%d", p->ndim, WGML_MAX_DIMS);
    out->dtype = p->dtype;
    out->ndim = p->ndim;
    memcpy(out->shape, p->shape, sizeof out->shape);
    return WGML_OK;
}

/* ------------------------------------------------------------ movement */

static wgml_status ck_permute(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    unsigned seen = 0;
    *out = *in[0];
    for (int i = 0; i < in[0]->ndim; i++) {
        int64_t a = p->a[i];
        if (a < 0 || a >= in[0]->ndim || (seen >> a & 1))
            FAIL(WGML_ERR_INVALID_ARG, "perm is not a permutation of 0..%d", in[0]->ndim - 1);
        seen |= 1u << a;
        out->shape[i] = in[0]->shape[a];
    }
    return WGML_OK;
}

static wgml_status ck_repeat(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    const wg_desc *x = in[0];
    if (p->ndim < x->ndim || p->ndim > WGML_MAX_DIMS)
        FAIL(WGML_ERR_SHAPE, "repeat to %d dims from %d", p->ndim, x->ndim);
    for (int i = 0; i < p->ndim; i++) {
        int j = i - (p->ndim - x->ndim);
        int64_t s = j < 0 ? 1 : x->shape[j], o = p->shape[i];
        if (s == o || s == 1)
            continue;
        wgml_status st = need_fixed(s, "a repeated dim");
        if (st == WGML_OK)
            st = need_fixed(o, "a repeated dim");
        if (st != WGML_OK)
            return st;
        if (s == 0 || o % s)
            FAIL(WGML_ERR_SHAPE, "dim %d: %lld is not a multiple of %lld", i, (long long)o, (long long)s);
    }
    out->dtype = x->dtype;
    out->ndim = p->ndim;
    memcpy(out->shape, p->shape, sizeof out->shape);
    return WGML_OK;
}

static wgml_status ck_concat(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    int a = axis_of(in[0], p->axis);
    if (a < 0)
        FAIL(WGML_ERR_INDEX, "axis %d out of range for %d dims", p->axis, in[0]->ndim);
    *out = *in[0];
    wgml_status st = need_fixed(in[0]->shape[a], "the concat axis");
    for (int i = 1; i < nin && st == WGML_OK; i++) {
        if (in[i]->dtype != in[0]->dtype || in[i]->ndim != in[0]->ndim)
            FAIL(WGML_ERR_SHAPE, "input %d differs from input 0 in dtype or ndim", i);
        for (int d = 0; d < in[0]->ndim; d++)
            if (d != a && in[i]->shape[d] != in[0]->shape[d])
                FAIL(WGML_ERR_SHAPE, "input %d: dim %d differs from input 0's", i, d);
        if ((st = need_fixed(in[i]->shape[a], "the concat axis")) == WGML_OK)
            out->shape[a] += in[i]->shape[a];
    }
    return st;
}

static wgml_status ck_pad(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    *out = *in[0];
    for (int i = 0; i < in[0]->ndim; i++) {
        if (p->a[i] < 0 || p->b[i] < 0)
            FAIL(WGML_ERR_INVALID_ARG, "negative padding on dim %d", i);
        if (p->a[i] + p->b[i] == 0)
            continue;
        wgml_status st = need_fixed(in[0]->shape[i], "a padded dim");
        if (st != WGML_OK)
            return st;
        out->shape[i] += p->a[i] + p->b[i];
    }
    return WGML_OK;
}

static wgml_status ck_same(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    return same_as(in[0], out);
}

static wgml_status ck_tri(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (in[0]->ndim < 2)
        FAIL(WGML_ERR_SHAPE, "tri needs 2 or more dims, x has %d", in[0]->ndim);
    return same_as(in[0], out);
}

static wgml_status ck_diag(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    const wg_desc *x = in[0];
    *out = *x;
    if (p->flag) {
        if (x->ndim < 1 || x->ndim >= WGML_MAX_DIMS)
            FAIL(WGML_ERR_SHAPE, "diag to a matrix needs 1..%d dims, x has %d", WGML_MAX_DIMS - 1, x->ndim);
        out->shape[x->ndim] = x->shape[x->ndim - 1];
        out->ndim++;
        return WGML_OK;
    }
    if (x->ndim < 2 || x->shape[x->ndim - 1] != x->shape[x->ndim - 2])
        FAIL(WGML_ERR_SHAPE, "diag of a matrix needs square last two dims");
    out->ndim--;
    return WGML_OK;
}

/* ------------------------------------------------------------ indexing */

static wgml_status need_i32(const char *what, const wg_desc *d)
{
    if (d->dtype != WGML_I32)
        FAIL(WGML_ERR_DTYPE, "%s is %s; index tensors are i32", what, wgml_dtype_name(d->dtype));
    return WGML_OK;
}

static wgml_status rows_out_dtype(const wg_desc *src, wgml_dtype want, wgml_dtype *dt)
{
    *dt = want;
    if (!wg_dtype_is_plain(src->dtype) ? !wg_dtype_is_float(want) : want != src->dtype && want != WGML_F32)
        FAIL(WGML_ERR_DTYPE, "out dtype %s: f32%s", wgml_dtype_name(want),
             wg_dtype_is_plain(src->dtype) ? " or the table's dtype" : ", f16 or bf16 for a quantised table");
    return WGML_OK;
}

static wgml_status ck_get_rows(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    const wg_desc *src = in[0], *idx = in[1];
    wgml_status st = need_i32("idx", idx);
    if (st != WGML_OK || (st = rows_out_dtype(src, p->dtype, &out->dtype)) != WGML_OK)
        return st;
    int maxd = src->ndim - (wg_dtype_is_plain(src->dtype) ? 0 : 1);
    if (idx->ndim < 1 || idx->ndim > maxd)
        FAIL(WGML_ERR_SHAPE, "idx has %d dims; with a %d-D src it needs 1..%d", idx->ndim, src->ndim, maxd);
    int kb = idx->ndim - 1;
    for (int d = 0; d < kb; d++)
        if (idx->shape[d] != src->shape[d])
            FAIL(WGML_ERR_SHAPE, "batch dim %d of idx differs from src's", d);
    out->ndim = src->ndim;
    memcpy(out->shape, src->shape, sizeof out->shape);
    out->shape[kb] = idx->shape[kb];
    return WGML_OK;
}

static wgml_status ck_set_rows(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    const wg_desc *dst = in[0], *idx = in[1], *src = in[2];
    wgml_status st = need_i32("idx", idx);
    if (st != WGML_OK)
        return st;
    if (src->ndim != dst->ndim || idx->ndim < 1 || idx->ndim > dst->ndim)
        FAIL(WGML_ERR_SHAPE, "src must have dst's %d dims and idx 1..%d", dst->ndim, dst->ndim);
    int kb = idx->ndim - 1;
    for (int d = 0; d < dst->ndim; d++) {
        int64_t want = d == kb ? idx->shape[kb] : dst->shape[d];
        if (src->shape[d] != want)
            FAIL(WGML_ERR_SHAPE, "src dim %d must be %s", d, d == kb ? "idx's length" : "dst's");
    }
    return same_as(dst, out);
}

static wgml_status ck_gather(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (axis_of(in[0], p->axis) < 0)
        FAIL(WGML_ERR_INDEX, "axis %d out of range for %d dims", p->axis, in[0]->ndim);
    wgml_status st = need_i32("idx", in[1]);
    if (st != WGML_OK)
        return st;
    if (in[1]->ndim != in[0]->ndim)
        FAIL(WGML_ERR_SHAPE, "idx must have src's %d dims", in[0]->ndim);
    *out = *in[1];
    out->dtype = in[0]->dtype;
    return WGML_OK;
}

static wgml_status ck_scatter_add(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (axis_of(in[0], p->axis) < 0)
        FAIL(WGML_ERR_INDEX, "axis %d out of range for %d dims", p->axis, in[0]->ndim);
    wgml_status st = need_i32("idx", in[1]);
    if (st != WGML_OK)
        return st;
    if (in[2]->dtype != in[0]->dtype)
        FAIL(WGML_ERR_DTYPE, "src is %s, dst %s", wgml_dtype_name(in[2]->dtype), wgml_dtype_name(in[0]->dtype));
    return same_as(in[0], out);
}

static wgml_status ck_index_select(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    int a = axis_of(in[0], p->axis);
    if (a < 0)
        FAIL(WGML_ERR_INDEX, "axis %d out of range for %d dims", p->axis, in[0]->ndim);
    wgml_status st = need_i32("idx", in[1]);
    if (st != WGML_OK)
        return st;
    if (in[1]->ndim != 1)
        FAIL(WGML_ERR_SHAPE, "idx must be 1-D, it has %d dims", in[1]->ndim);
    *out = *in[0];
    out->shape[a] = in[1]->shape[0];
    return WGML_OK;
}

static wgml_status ck_one_hot(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    wgml_status st = need_i32("idx", in[0]);
    if (st != WGML_OK)
        return st;
    if (in[0]->ndim >= WGML_MAX_DIMS)
        FAIL(WGML_ERR_SHAPE, "idx has %d dims; one_hot adds one (max %d)", in[0]->ndim, WGML_MAX_DIMS);
    if (!wg_dtype(p->dtype) || !wg_dtype_is_plain(p->dtype))
        FAIL(WGML_ERR_DTYPE, "one_hot: plain out dtypes only");
    if (p->shape[0] < 1 && !wg_is_sym(p->shape[0]))
        FAIL(WGML_ERR_SHAPE, "classes %lld must be >= 1", (long long)p->shape[0]);
    *out = *in[0];
    out->shape[out->ndim++] = p->shape[0];
    out->dtype = p->dtype;
    return WGML_OK;
}

static wgml_status ck_embedding(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    const wg_desc *table = in[0], *ids = in[1];
    wgml_status st = need_i32("ids", ids);
    if (st != WGML_OK || (st = rows_out_dtype(table, p->dtype, &out->dtype)) != WGML_OK)
        return st;
    if (table->ndim != 2)
        FAIL(WGML_ERR_SHAPE, "table must be [vocab, dim], it has %d dims", table->ndim);
    if (ids->ndim >= WGML_MAX_DIMS)
        FAIL(WGML_ERR_SHAPE, "ids has %d dims; embedding adds one (max %d)", ids->ndim, WGML_MAX_DIMS);
    out->ndim = ids->ndim + 1;
    memcpy(out->shape, ids->shape, sizeof out->shape);
    out->shape[ids->ndim] = table->shape[1];
    return WGML_OK;
}

static wgml_status ck_dequantize(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (!wg_dtype_is_float(p->dtype))
        FAIL(WGML_ERR_DTYPE, "dequantize to %s: f32, f16 or bf16", wg_dtype(p->dtype) ? wgml_dtype_name(p->dtype) : "?");
    *out = *in[0];
    out->dtype = p->dtype;
    return WGML_OK;
}

/* ------------------------------------------------------------ reductions, sorts */

static wgml_status ck_reduce(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if ((unsigned)p->sub >= WGML_REDUCE_COUNT)
        FAIL(WGML_ERR_INVALID_ARG, "unknown reduce op %d", p->sub);
    if (p->mask >> in[0]->ndim)
        FAIL(WGML_ERR_INDEX, "axes mask 0x%x names axes past %d dims", p->mask, in[0]->ndim);
    bool arg = p->sub == WGML_ARGMAX || p->sub == WGML_ARGMIN;
    if (arg && (p->mask == 0 || (p->mask & (p->mask - 1))))
        FAIL(WGML_ERR_INVALID_ARG, "argmax/argmin reduce exactly one axis (mask 0x%x)", p->mask);
    *out = *in[0];
    for (int i = 0; i < in[0]->ndim; i++)
        if (p->mask >> i & 1)
            out->shape[i] = 1;
    out->dtype = arg ? WGML_I32 : in[0]->dtype;
    return WGML_OK;
}

static wgml_status ck_cumsum(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (axis_of(in[0], p->axis) < 0)
        FAIL(WGML_ERR_INDEX, "axis %d out of range for %d dims", p->axis, in[0]->ndim);
    return same_as(in[0], out);
}

static wgml_status ck_argsort(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (in[0]->ndim < 1)
        FAIL(WGML_ERR_SHAPE, "argsort of a scalar");
    *out = *in[0];
    out->dtype = WGML_I32;
    return WGML_OK;
}

static wgml_status ck_top_k(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    const wg_desc *x = in[0];
    if (x->ndim < 1)
        FAIL(WGML_ERR_SHAPE, "top_k of a scalar");
    wgml_status st = need_fixed(x->shape[x->ndim - 1], "top_k's row");
    if (st != WGML_OK)
        return st;
    if (p->k < 1 || p->k > x->shape[x->ndim - 1])
        FAIL(WGML_ERR_INVALID_ARG, "k = %lld: must be 1..%lld", (long long)p->k, (long long)x->shape[x->ndim - 1]);
    *out = *x;
    out->shape[x->ndim - 1] = p->k;
    out->dtype = p->flag ? WGML_I32 : x->dtype;
    return WGML_OK;
}

/* ------------------------------------------------------------ rows */

static wgml_status ck_softmax(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (!wg_dtype_is_float(in[0]->dtype))
        FAIL(WGML_ERR_DTYPE, "x is %s; softmax needs a float dtype", wgml_dtype_name(in[0]->dtype));
    bool scalar_row = in[0]->ndim == 0 && (p->softmax.axis == 0 || p->softmax.axis == -1); /* a row of one */
    if (!scalar_row && axis_of(in[0], p->softmax.axis) < 0)
        FAIL(WGML_ERR_INDEX, "axis %d out of range for %d dims", p->softmax.axis, in[0]->ndim);
    if (nin > 1 && in[1]) {
        wg_desc b;
        const wg_desc *pair[2] = {in[0], in[1]};
        wgml_status st = bcast(pair, 2, &b);
        if (st != WGML_OK)
            return st;
        for (int i = 0; i < b.ndim; i++)
            if (b.ndim != in[0]->ndim || b.shape[i] != in[0]->shape[i])
                FAIL(WGML_ERR_SHAPE, "the mask must broadcast to x's shape");
    }
    return same_as(in[0], out);
}

static wgml_status ck_norm(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if ((unsigned)p->norm.kind > WGML_BATCH_NORM)
        FAIL(WGML_ERR_INVALID_ARG, "unknown norm kind %d", (int)p->norm.kind);
    if (!wg_dtype_is_float(in[0]->dtype))
        FAIL(WGML_ERR_DTYPE, "x is %s; norms need a float dtype", wgml_dtype_name(in[0]->dtype));
    if (nin > 3 && in[3]) { /* residual: x's shape exactly */
        if (in[3]->ndim != in[0]->ndim || memcmp(in[3]->shape, in[0]->shape, sizeof(int64_t) * (size_t)in[0]->ndim))
            FAIL(WGML_ERR_SHAPE, "residual must have x's shape");
    }
    return p->xq_tail ? wg_ck_norm_xq(p, in[0], out) : same_as(in[0], out);
}

static wgml_status ck_rope(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (in[0]->ndim < 3)
        FAIL(WGML_ERR_SHAPE, "rope needs x [..., seq, heads, head_dim], x has %d dims", in[0]->ndim);
    wgml_status st = need_i32("pos", in[1]);
    if (st != WGML_OK)
        return st;
    return same_as(in[0], out);
}

static wgml_status ck_glu(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if ((unsigned)p->sub > WGML_REGLU)
        FAIL(WGML_ERR_INVALID_ARG, "unknown glu kind %d", p->sub);
    const wg_desc *x = in[0];
    if (x->ndim < 1)
        FAIL(WGML_ERR_SHAPE, "glu of a scalar");
    *out = *x;
    if (nin > 1 && in[1]) {
        if (in[1]->ndim != x->ndim || memcmp(in[1]->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim))
            FAIL(WGML_ERR_SHAPE, "gate must have x's shape");
        return WGML_OK;
    }
    int64_t n = x->shape[x->ndim - 1];
    wgml_status st = need_fixed(n, "glu's last dim");
    if (st != WGML_OK)
        return st;
    if (n % 2)
        FAIL(WGML_ERR_SHAPE, "x's last dim %lld is odd: it holds two halves", (long long)n);
    out->shape[x->ndim - 1] = n / 2;
    return WGML_OK;
}

static wgml_status ck_ew_chain(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (p->chain_n < 1 || p->chain_n > WG_CHAIN_MAX)
        FAIL(WGML_ERR_INVALID_ARG, "a chain of %d ops (1..%d)", p->chain_n, WG_CHAIN_MAX);
    for (int i = 0; i < p->chain_n; i++)
        if ((unsigned)p->chain_op[i] >= WGML_UNARY_COUNT || p->chain_op[i] == WGML_NOT)
            FAIL(WGML_ERR_INVALID_ARG, "chain op %d is not a float unary op", p->chain_op[i]);
    if (!wg_dtype_is_float(in[0]->dtype))
        FAIL(WGML_ERR_DTYPE, "x is %s; chains are float only", wgml_dtype_name(in[0]->dtype));
    return same_as(in[0], out);
}

static wgml_status ck_sample(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    if (!wg_dtype_is_float(in[0]->dtype))
        FAIL(WGML_ERR_DTYPE, "logits are %s; f32, f16 and bf16 are supported", wgml_dtype_name(in[0]->dtype));
    if (in[0]->ndim != 2)
        FAIL(WGML_ERR_SHAPE, "logits must be [rows, vocab]");
    const wg_desc *s = nin > 1 ? in[1] : NULL; /* optional: its first element is added to the seed */
    if (s && s->dtype != WGML_I32 && s->dtype != WGML_U32)
        FAIL(WGML_ERR_DTYPE, "seed is %s; i32 or u32 is supported", wgml_dtype_name(s->dtype));
    for (int i = 0; s && i < s->ndim; i++)
        if (s->shape[i] == 0) /* a symbolic dim may still bind to 0: the encode refuses that */
            FAIL(WGML_ERR_SHAPE, "seed has no elements; its first element is read");
    out->dtype = WGML_I32;
    out->ndim = 1;
    out->shape[0] = in[0]->shape[0];
    return WGML_OK;
}

/* ------------------------------------------------------------ scratch */

/* A scratch request's share of a declaration: wg_scratch_tensor's 256. */
static uint64_t desc_bytes(const wg_desc *d) { return wg_align_up(wg_desc_bytes(d), 256); }

/* set_rows: the winners table when an index can repeat (wg_set_rows_scratch_bytes),
 * and a contiguous copy of src for a quantised dst. */
static uint64_t sc_set_rows(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    const wg_desc *dst = in[0], *idx = in[1];
    int64_t n = idx->shape[idx->ndim - 1], nidx = 1;
    for (int i = 0; i < idx->ndim; i++)
        nidx *= idx->shape[i];
    uint64_t win = n < 2 ? 0 : wg_align_up((uint64_t)(nidx / n) * (uint64_t)dst->shape[idx->ndim - 1] * 4, 256);
    return win + (wg_dtype_is_plain(dst->dtype) ? 0 : desc_bytes(in[2]));
}

/* Quantised tables and dequantize: a contiguous stand-in for a strided out. */
static uint64_t sc_quant_out(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    return wg_dtype_is_plain(in[0]->dtype) ? 0 : desc_bytes(out);
}

/* ------------------------------------------------------------ encodes */

#define T(i) (in[i])

static wgml_status en_unary(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_unary_impl((wgml_unary_op)p->sub, T(0), out, p->f[0], p->f[1]);
}
static wgml_status en_binary(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_binary_impl((wgml_binary_op)p->sub, T(0), T(1), out);
}
static wgml_status en_where(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_where_impl(T(0), T(1), T(2), out);
}
static wgml_status en_cast(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_cast_impl(T(0), out);
}
static wgml_status en_copy(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_copy_impl(T(0), out);
}
static wgml_status en_fill(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_fill_impl(out, p->value);
}
static wgml_status en_permute(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    int perm[WGML_MAX_DIMS];
    for (int i = 0; i < WGML_MAX_DIMS; i++)
        perm[i] = (int)p->a[i];
    return wg_permute_impl(T(0), perm, out);
}
static wgml_status en_repeat(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_repeat_impl(T(0), out);
}
static wgml_status en_concat(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_concat_impl(in, nin, p->axis, out);
}
static wgml_status en_pad(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_pad_impl(T(0), p->a, p->b, (wgml_pad_mode)p->sub, p->value, out);
}
static wgml_status en_flip(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_flip_impl(T(0), p->mask, out);
}
static wgml_status en_roll(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_roll_impl(T(0), p->a, out);
}
static wgml_status en_tri(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_tri_impl(T(0), p->flag, p->k, out);
}
static wgml_status en_diag(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_diag_impl(T(0), out);
}
static wgml_status en_get_rows(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_get_rows_impl(T(0), T(1), out);
}
/* In-place updates: out is a view of input 0 (the graph binds it so). */
static wgml_status en_set_rows(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_set_rows_impl(out, T(1), T(2));
}
static wgml_status en_gather(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_gather_impl(T(0), p->axis, T(1), out);
}
static wgml_status en_scatter_add(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_scatter_add_impl(out, p->axis, T(1), T(2));
}
static wgml_status en_index_select(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_index_select_impl(T(0), p->axis, T(1), out);
}
static wgml_status en_one_hot(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_one_hot_impl(T(0), out);
}
static wgml_status en_embedding(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_embedding_impl(T(0), T(1), out);
}
static wgml_status en_dequantize(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_dequantize_impl(T(0), out);
}
static wgml_status en_reduce(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_reduce_impl((wgml_reduce_op)p->sub, T(0), p->mask, p->f[0], out);
}
static wgml_status en_cumsum(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_cumsum_impl(T(0), p->axis, p->flag, out);
}
static wgml_status en_argsort(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_argsort_impl(T(0), p->flag, out);
}
static wgml_status en_top_k(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_top_k_impl(T(0), p->k, p->flag ? NULL : out, p->flag ? out : NULL);
}
static wgml_status en_softmax(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_softmax_impl(T(0), nin > 1 ? T(1) : NULL, nin > 2 ? T(2) : NULL, &p->softmax, out);
}
static wgml_status en_norm(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    wgml_norm_params q = p->norm;
    q.weight = nin > 1 ? T(1) : NULL;
    q.bias = nin > 2 ? T(2) : NULL;
    q.residual = nin > 3 ? T(3) : NULL;
    q.mean = q.var = NULL;
    q.sum_out = out2; /* a fused residual add's sum (graph fusion) */
    return p->xq_tail ? wg_norm_xq(T(0), &q, out) : wg_norm_impl(T(0), &q, out);
}
static wgml_status en_rope(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    wgml_rope_params q = p->rope;
    q.freq_factors = nin > 2 ? T(2) : NULL;
    return wg_rope_impl(T(0), T(1), &q, out);
}
static wgml_status en_glu(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_glu_impl((wgml_glu_kind)p->sub, T(0), nin > 1 ? T(1) : NULL, p->flag, out);
}
static wgml_status en_ew_chain(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                               wgml_tensor *out2)
{
    wgml_unary_op ops[WG_CHAIN_MAX];
    for (int i = 0; i < p->chain_n && i < WG_CHAIN_MAX; i++)
        ops[i] = (wgml_unary_op)p->chain_op[i];
    return wg_unary_chain(ops, p->chain_p, p->chain_n, T(0), out);
}
static wgml_status en_sample(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    return wg_sample_impl(T(0), nin > 1 ? T(1) : NULL, &p->sample, out);
}

/* ------------------------------------------------------------ the table */

#define ROW(id, nm, lo, hi, ip, up, ck, en) [id] = {nm, lo, hi, ip, up, ck, NULL, en}
#define ROWS(id, nm, lo, hi, ip, up, ck, sc, en) [id] = {nm, lo, hi, ip, up, ck, sc, en}
static const wg_op_def table[] = {
    ROW(WG_OP_UNARY, "unary", 1, 1, true, false, ck_unary, en_unary),
    ROW(WG_OP_BINARY, "binary", 2, 2, true, false, ck_binary, en_binary),
    ROW(WG_OP_WHERE, "where", 3, 3, false, false, ck_where, en_where),
    ROW(WG_OP_CAST, "cast", 1, 1, false, false, ck_cast, en_cast),
    ROW(WG_OP_COPY, "copy", 1, 1, false, false, ck_copy, en_copy),
    ROW(WG_OP_FILL, "fill", 0, 0, false, false, ck_fill, en_fill),
    ROW(WG_OP_PERMUTE, "permute", 1, 1, false, false, ck_permute, en_permute),
    ROW(WG_OP_REPEAT, "repeat", 1, 1, false, false, ck_repeat, en_repeat),
    ROW(WG_OP_CONCAT, "concat", 1, WG_OP_MAX_IN, false, false, ck_concat, en_concat),
    ROW(WG_OP_PAD, "pad", 1, 1, false, false, ck_pad, en_pad),
    ROW(WG_OP_FLIP, "flip", 1, 1, false, false, ck_same, en_flip),
    ROW(WG_OP_ROLL, "roll", 1, 1, false, false, ck_same, en_roll),
    ROW(WG_OP_TRI, "tri", 1, 1, true, false, ck_tri, en_tri),
    ROW(WG_OP_DIAG, "diag", 1, 1, false, false, ck_diag, en_diag),
    ROWS(WG_OP_GET_ROWS, "get_rows", 2, 2, false, false, ck_get_rows, sc_quant_out, en_get_rows),
    ROWS(WG_OP_SET_ROWS, "set_rows", 3, 3, false, true, ck_set_rows, sc_set_rows, en_set_rows),
    ROW(WG_OP_GATHER, "gather", 2, 2, false, false, ck_gather, en_gather),
    ROW(WG_OP_SCATTER_ADD, "scatter_add", 3, 3, false, true, ck_scatter_add, en_scatter_add),
    ROW(WG_OP_INDEX_SELECT, "index_select", 2, 2, false, false, ck_index_select, en_index_select),
    ROW(WG_OP_ONE_HOT, "one_hot", 1, 1, false, false, ck_one_hot, en_one_hot),
    ROWS(WG_OP_EMBEDDING, "embedding", 2, 2, false, false, ck_embedding, sc_quant_out, en_embedding),
    ROWS(WG_OP_DEQUANTIZE, "dequantize", 1, 1, false, false, ck_dequantize, sc_quant_out, en_dequantize),
    ROWS(WG_OP_REDUCE, "reduce", 1, 1, false, false, ck_reduce, wg_sc_reduce, en_reduce),
    ROWS(WG_OP_CUMSUM, "cumsum", 1, 1, true, false, ck_cumsum, wg_sc_cumsum, en_cumsum),
    ROWS(WG_OP_ARGSORT, "argsort", 1, 1, false, false, ck_argsort, wg_sc_argsort, en_argsort),
    ROWS(WG_OP_TOP_K, "top_k", 1, 1, false, false, ck_top_k, wg_sc_top_k, en_top_k),
    ROWS(WG_OP_SOFTMAX, "softmax", 1, 3, true, false, ck_softmax, wg_sc_softmax, en_softmax),
    ROWS(WG_OP_NORM, "norm", 1, 4, true, false, ck_norm, wg_sc_norm, en_norm),
    ROWS(WG_OP_ROPE, "rope", 2, 3, true, false, ck_rope, wg_sc_rope, en_rope),
    ROW(WG_OP_GLU, "glu", 1, 2, false, false, ck_glu, en_glu),
    ROWS(WG_OP_SAMPLE, "sample", 1, 2, false, false, ck_sample, wg_sc_sample, en_sample),
    ROW(WG_OP_EW_CHAIN, "unary_chain", 1, 1, true, false, ck_ew_chain, en_ew_chain),
};
_Static_assert(sizeof table / sizeof *table == WG_OP_MATMUL, "the op table and enum wg_op are out of step");

const wg_op_def *wg_op_def_get(int op)
{
    if (op >= WG_OP_MATMUL)
        return wg_op_def_mm(op);
    return op >= 0 && table[op].check ? &table[op] : NULL;
}
