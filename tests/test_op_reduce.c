/* Reduce family against its CPU reference: every reduction on every dtype
 * it supports over single and multiple axes (contiguous, transposed and
 * sliced inputs, zero-size, one element), long rows split over many
 * workgroups, a scalar from > 2^24 elements, > 65,535 rows, an input larger
 * than one storage binding; cumsum; stable argsort of rows up to 2^18;
 * top_k; the error paths.
 *
 * Tolerances.  A float sum in f32 whose every element passes through at
 * most D additions has |got - exact| <= D * 2^-24 * sum|x| (each addition
 * errs by <= 2^-24 of its result, and every partial result is bounded by
 * sum|x|).  The kernel's D: a thread folds a strided slice of its row
 * serially, at most max(32, len / 8) elements when the row is not split
 * (>= 8 threads share a row unless it has <= 32 elements), then
 * log2(threads per row) <= 8 tree levels: D <= len / 8 + 48 for the rows up
 * to 4096 tested here.  The long rows (few-row cases) are split into
 * <= 1024 chunks, each thread folding >= 64 elements of its chunk with
 * >= 128 threads per row, then pass 2 adds ceil(chunks / 256) serial + 8
 * tree levels: D <= 2 * 64 + len / (1024 * 128) + 24.
 * Other ops derive from that: MEAN adds one rounding; L2NORM's sum of
 * squares has relative error D * 2^-24 (all terms positive) and sqrt halves
 * it; PROD errs by <= (n - 1) * 2^-24 relative in any order; LOGSUMEXP sums
 * positive exp terms, each within (3 + 2|x - max|) ulp (WGSL's exp bound;
 * |x - max| <= 8 here) and adds log's 2^-21 absolute; VAR/STD (Welford +
 * Chan) are held to 2^-22 * D relative.  Max, min, argmax, argmin and all
 * integer results are exact.  16-bit outputs get one rounding of their
 * format on top (op_harness.h).
 */
#include "op_harness.h"
#include "ops/reduce.h"

static const wgml_dtype all_dt[] = {WGML_F32, WGML_F16, WGML_BF16, WGML_I32, WGML_U32, WGML_I8, WGML_U8};
#define NDT (sizeof all_dt / sizeof *all_dt)
static const double U = 5.9604644775390625e-8; /* 2^-24 */

static bool has(uint32_t mask, wgml_dtype t) { return (mask >> t) & 1; }

static int64_t prod(int n, const int64_t *s)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= s[i];
    return p;
}

/* Values of the view `v` of a fresh random tensor, as doubles. */
typedef struct input {
    t_tensor base;
    wgml_tensor *v;
    double *val;
} input;

/* layout 0: contiguous; 1: last two axes transposed; 2: every other
 * element of the last axis. */
static input make_input(wgml_dtype dt, int ndim, const int64_t *shape, int layout, double lo, double hi)
{
    input in = {0};
    int64_t bs[4];
    memcpy(bs, shape, sizeof(int64_t) * (size_t)ndim);
    if (layout == 1 && ndim >= 2) {
        bs[ndim - 1] = shape[ndim - 2];
        bs[ndim - 2] = shape[ndim - 1];
    } else if (layout == 2 && ndim >= 1) {
        bs[ndim - 1] = shape[ndim - 1] * 2 + 1;
    }
    in.base = t_random(dt, ndim, bs, lo, hi);
    if (layout == 1 && ndim >= 2)
        CHECK_OK(wgml_view_transpose(in.base.t, -1, -2, &in.v));
    else if (layout == 2 && ndim >= 1)
        CHECK_OK(wgml_view_slice(in.base.t, -1, 1, bs[ndim - 1], 2, &in.v));
    else
        CHECK_OK(wgml_view_reshape(in.base.t, ndim, shape, &in.v));
    in.val = in.v ? t_values(in.v) : NULL;
    return in;
}

static void free_input(input *in)
{
    wgml_tensor_free(in->v);
    t_free(&in->base);
    free(in->val);
}

/* |got - want| <= atol[i] + rtol |want| element by element. */
static int compare_each(const char *what, wgml_dtype dt, const double *got, const double *want, int64_t n,
                        double rtol, const double *atol)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        int b = t_compare(what, dt, got + i, want + i, 1, rtol, atol[i]);
        if (b && bad++ > 4)
            break;
    }
    return bad;
}

/* Tolerance per output of op over rows of x (reduced length len). */
static void reduce_tol(wgml_reduce_op op, int64_t len, const double *absum, int64_t no, double *rtol, double *atol)
{
    double d = len > 4096 ? (double)len / 131072 + 128 + 24 : (double)len / 8 + 48;
    *rtol = 0;
    for (int64_t i = 0; i < no; i++)
        atol[i] = 0;
    switch (op) {
    case WGML_SUM: case WGML_MEAN:
        for (int64_t i = 0; i < no; i++)
            atol[i] = d * U * absum[i] / (op == WGML_MEAN && len ? (double)len : 1);
        *rtol = 2 * U;
        break;
    case WGML_L2NORM: *rtol = (d + 2) * U; break;
    case WGML_PROD: *rtol = ((double)len + 1) * U; break;
    case WGML_LOGSUMEXP:
        *rtol = 2 * U;
        for (int64_t i = 0; i < no; i++)
            atol[i] = (19 + d) * U + ldexp(1, -21);
        break;
    case WGML_VAR: case WGML_STD: *rtol = d * 4 * U; for (int64_t i = 0; i < no; i++) atol[i] = 1e-30; break;
    default: break;
    }
}

/* Reduces `in` (logical shape) over mask and checks against the reference. */
static void check_reduce_on(wgml_reduce_op op, wgml_dtype dt, int ndim, const int64_t *shape, unsigned mask,
                            float p0, const input *in, const char *tag)
{
    bool arg = op == WGML_ARGMAX || op == WGML_ARGMIN;
    int64_t os[4], len = 1;
    for (int i = 0; i < ndim; i++) {
        os[i] = (mask >> i) & 1 ? 1 : shape[i];
        len *= (mask >> i) & 1 ? shape[i] : 1;
    }
    wgml_dtype odt = arg ? WGML_I32 : dt;
    wgml_tensor *o = t_poisoned(odt, ndim, os);
    wgml_status st = wgml_reduce(op, in->v, mask, p0, o);
    CHECK(st == WGML_OK, "%s %s %s: %s", wg_reduce_name(op), wgml_dtype_name(dt), tag, wgml_last_error());
    int64_t no = prod(ndim, os);
    double *want = malloc(sizeof(double) * (size_t)(no + 1)), *absum = calloc((size_t)no + 1, sizeof(double));
    double *atol = malloc(sizeof(double) * (size_t)(no + 1));
    double *ab = malloc(sizeof(double) * (size_t)(prod(ndim, shape) + 1));
    for (int64_t i = 0; i < prod(ndim, shape); i++)
        ab[i] = fabs(in->val[i]);
    wg_reduce_ref(op, dt, in->val, ndim, shape, mask, p0, want);
    wg_reduce_ref(WGML_SUM, WGML_F32, ab, ndim, shape, mask, 0, absum);
    double rtol;
    reduce_tol(op, len, absum, no, &rtol, atol);
    double *got = t_values(o);
    char what[96];
    snprintf(what, sizeof what, "%s/%s/mask%x/%s", wg_reduce_name(op), wgml_dtype_name(dt), mask, tag);
    CHECK(compare_each(what, odt, got, want, no, rtol, atol) == 0, "%s", what);
    free(got);
    free(want);
    free(absum);
    free(atol);
    free(ab);
    wgml_tensor_free(o);
}

static void domain(wgml_reduce_op op, wgml_dtype dt, double *lo, double *hi)
{
    *lo = -4;
    *hi = 4;
    if (!wg_dtype_is_float(dt)) {
        *lo = dt == WGML_U8 || dt == WGML_U32 ? 0 : -100;
        *hi = 200;
        if (dt == WGML_I8)
            *hi = 100;
    } else if (op == WGML_PROD) {
        *lo = 0.5;
        *hi = 1.6;
    }
}

static void check_reduce(wgml_reduce_op op, wgml_dtype dt, int ndim, const int64_t *shape, unsigned mask, int layout,
                         float p0)
{
    double lo, hi;
    domain(op, dt, &lo, &hi);
    input in = make_input(dt, ndim, shape, layout, lo, hi);
    if (in.v) {
        char tag[16];
        snprintf(tag, sizeof tag, "layout%d", layout);
        check_reduce_on(op, dt, ndim, shape, mask, p0, &in, tag);
    }
    free_input(&in);
}

static void t_reduce_grid(void)
{
    const int64_t s1[1] = {1031}, s3[3] = {3, 5, 17}, s4[4] = {4, 3, 5, 6}, one[1] = {1}, col[2] = {300, 37};
    const unsigned m3[] = {1, 2, 4, 5, 7, 6, 0};
    for (int op = 0; op < WGML_REDUCE_COUNT; op++) {
        bool arg = op == WGML_ARGMAX || op == WGML_ARGMIN;
        float p0 = op == WGML_VAR ? 1.0f : 0.0f;
        for (size_t d = 0; d < NDT; d++) {
            wgml_dtype dt = all_dt[d];
            if (!has(wg_reduce_dtypes((wgml_reduce_op)op), dt))
                continue;
            check_reduce((wgml_reduce_op)op, dt, 1, s1, 1, 0, p0);
            check_reduce((wgml_reduce_op)op, dt, 1, one, 1, 0, p0);
            check_reduce((wgml_reduce_op)op, dt, 2, col, 1, 0, p0);     /* kept axis contiguous */
            check_reduce((wgml_reduce_op)op, dt, 2, col, 2, 1, p0);     /* reduced axis strided */
            for (size_t m = 0; m < sizeof m3 / sizeof *m3; m++) {
                if (arg && (m3[m] == 0 || (m3[m] & (m3[m] - 1))))
                    continue;
                check_reduce((wgml_reduce_op)op, dt, 3, s3, m3[m], (int)(m % 3), p0);
            }
            if (!arg) {
                check_reduce((wgml_reduce_op)op, dt, 4, s4, 0x5, 0, p0); /* axes {0, 2} */
                check_reduce((wgml_reduce_op)op, dt, 4, s4, 0xa, 1, p0); /* axes {1, 3}, transposed */
            } else {
                check_reduce((wgml_reduce_op)op, dt, 4, s4, 0x4, 2, p0);
            }
        }
    }
}

/* Zero-size: no rows is a no-op; an empty axis gives the identity (or an
 * error where there is none, like numpy). */
static void t_zero_size(void)
{
    const int64_t s0[2] = {0, 5}, o0[2] = {0, 1}, s1[2] = {3, 0}, o1[2] = {3, 1};
    wgml_tensor *x = NULL, *o = NULL, *y = NULL, *p = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s0, &x));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, o0, &o));
    CHECK_OK(wgml_reduce(WGML_SUM, x, 2, 0, o));
    CHECK_OK(wgml_reduce(WGML_ARGMAX, x, 2, 0, NULL) == WGML_ERR_INVALID_ARG ? WGML_OK : WGML_ERR_INTERNAL);
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s1, &y));
    p = t_poisoned(WGML_F32, 2, o1);
    const wgml_reduce_op ops[] = {WGML_SUM, WGML_MEAN, WGML_PROD, WGML_LOGSUMEXP, WGML_VAR, WGML_L2NORM};
    const double want[] = {0, NAN, 1, -INFINITY, NAN, 0};
    for (int i = 0; i < 6; i++) {
        CHECK_OK(wgml_reduce(ops[i], y, 2, 1, p));
        double *g = t_values(p);
        for (int r = 0; r < 3; r++)
            CHECK((isnan(want[i]) && isnan(g[r])) || g[r] == want[i], "%s of nothing: %g", wg_reduce_name(ops[i]),
                  g[r]);
        free(g);
    }
    CHECK(wgml_reduce(WGML_RMAX, y, 2, 0, p) == WGML_ERR_SHAPE, "max of nothing accepted");
    const int64_t s5[1] = {5}, e5[1] = {0};
    wgml_tensor *z = NULL, *zo = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, e5, &z));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, e5, &zo));
    CHECK_OK(wgml_cumsum(z, 0, 0, zo));
    CHECK_OK(wgml_argsort(x, 0, NULL) == WGML_ERR_INVALID_ARG ? WGML_OK : WGML_ERR_INTERNAL);
    (void)s5;
    wgml_tensor_free(z);
    wgml_tensor_free(zo);
    wgml_tensor_free(x);
    wgml_tensor_free(o);
    wgml_tensor_free(y);
    wgml_tensor_free(p);
}

/* > 2^24 elements to a scalar (all three axes): pass 1 splits the one row
 * into up to 1024 chunks, pass 2 merges them. */
static void t_big_scalar(void)
{
    const int64_t s[3] = {3, 2049, 2731}; /* 16,787,457 > 2^24 */
    input in = make_input(WGML_F32, 3, s, 0, -1, 3);
    const wgml_reduce_op ops[] = {WGML_SUM, WGML_MEAN, WGML_RMAX, WGML_VAR, WGML_LOGSUMEXP, WGML_L2NORM};
    for (size_t i = 0; in.v && i < sizeof ops / sizeof *ops; i++)
        check_reduce_on(ops[i], WGML_F32, 3, s, 7, 1, &in, "big");
    /* argmax of the flat view, its maximum planted twice */
    wgml_tensor *flat = NULL;
    const int64_t n1[1] = {s[0] * s[1] * s[2]};
    CHECK_OK(wgml_view_reshape(in.base.t, 1, n1, &flat));
    if (flat) {
        float big = 7.5f;
        CHECK_OK(wgml_buffer_write(in.base.t->st->buf, 4 * 3000001, &big, 4));
        CHECK_OK(wgml_buffer_write(in.base.t->st->buf, 4 * 3999999, &big, 4));
        const int64_t o1[1] = {1};
        wgml_tensor *o = t_poisoned(WGML_I32, 1, o1);
        CHECK_OK(wgml_reduce(WGML_ARGMAX, flat, 1, 0, o));
        double *g = t_values(o);
        CHECK(g[0] == 3000001, "argmax of 16.8M: %g", g[0]);
        free(g);
        wgml_tensor_free(o);
    }
    wgml_tensor_free(flat);
    free_input(&in);
}

/* More than 65,535 output rows. */
static void t_many_rows(void)
{
    const int64_t s[2] = {70001, 33};
    input in = make_input(WGML_F32, 2, s, 0, -2, 2);
    if (in.v) {
        check_reduce_on(WGML_SUM, WGML_F32, 2, s, 2, 0, &in, "rows");
        check_reduce_on(WGML_ARGMIN, WGML_F32, 2, s, 2, 0, &in, "rows");
    }
    free_input(&in);
    const int64_t s2[2] = {70001, 3};
    in = make_input(WGML_BF16, 2, s2, 0, -2, 2);
    if (in.v)
        check_reduce_on(WGML_RMAX, WGML_BF16, 2, s2, 2, 0, &in, "rows");
    free_input(&in);
}

/* Ties (first occurrence wins), also across the chunks of a split row,
 * and NaN (numpy: max is NaN, argmax is the first NaN). */
static void t_ties_nan(void)
{
    const int64_t s[2] = {3, 100000}, o[2] = {3, 1};
    input in = make_input(WGML_F32, 2, s, 0, 0, 3.999);
    if (!in.v)
        return;
    for (int i = 0; i < 2 * 100000; i++) /* floor to 0..3: every value ties thousands of times */
        in.val[i] = floor(in.val[i]);
    float *h = malloc(sizeof(float) * 300000);
    for (int i = 0; i < 300000; i++)
        h[i] = (float)floor(in.val[i]);
    /* row 2: one NaN in the middle, another later */
    h[200000 + 54321] = NAN;
    h[200000 + 77777] = NAN;
    CHECK_OK(wgml_tensor_upload(in.base.t, h, sizeof(float) * 300000));
    for (int i = 0; i < 300000; i++)
        in.val[i] = h[i];
    const wgml_reduce_op ops[] = {WGML_ARGMAX, WGML_ARGMIN, WGML_RMAX, WGML_RMIN, WGML_SUM, WGML_LOGSUMEXP};
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        check_reduce_on(ops[k], WGML_F32, 2, s, 2, 0, &in, "ties");
    wgml_tensor *ai = t_poisoned(WGML_I32, 2, o);
    CHECK_OK(wgml_reduce(WGML_ARGMAX, in.v, 2, 0, ai));
    double *g = t_values(ai);
    CHECK(g[2] == 54321, "argmax with NaN: %g", g[2]);
    free(g);
    wgml_tensor_free(ai);
    free(h);
    free_input(&in);
    /* integer ties, every element equal */
    const int64_t s2[2] = {4, 999};
    input z = make_input(WGML_I8, 2, s2, 0, 5, 5.5);
    if (z.v)
        check_reduce_on(WGML_ARGMAX, WGML_I8, 2, s2, 2, 0, &z, "equal");
    free_input(&z);
}

/* VAR with correction 0 and 1, on data far from zero (a one-pass sum of
 * squares would lose every digit here), and single-element rows. */
static void t_var(void)
{
    const int64_t s[2] = {7, 5001}, s1[2] = {4, 1};
    input in = make_input(WGML_F32, 2, s, 0, 1000, 1001);
    for (int c = 0; in.v && c <= 1; c++) {
        check_reduce_on(WGML_VAR, WGML_F32, 2, s, 2, (float)c, &in, c ? "ddof1" : "ddof0");
        check_reduce_on(WGML_STD, WGML_F32, 2, s, 2, (float)c, &in, c ? "ddof1" : "ddof0");
        check_reduce_on(WGML_VAR, WGML_F32, 2, s, 1, (float)c, &in, c ? "col-ddof1" : "col-ddof0");
    }
    free_input(&in);
    input one = make_input(WGML_F32, 2, s1, 0, -1, 1);
    for (int c = 0; one.v && c <= 1; c++) /* ddof 1 on one element: 0/0 = NaN */
        check_reduce_on(WGML_VAR, WGML_F32, 2, s1, 2, (float)c, &one, "one");
    free_input(&one);
}

/* An input whose window exceeds one storage binding (128 MiB on
 * lavapipe) without many elements: columns 0..2 of an [8200, 4096] f32
 * tensor.  Reducing axis 0 cuts the reduced axis into boxes that merge into
 * running states; reducing axis 1 cuts the kept axis into independent
 * boxes. */
static void t_over_binding(void)
{
    const int64_t bs[2] = {8200, 4096}, s[2] = {8200, 3};
    input in = {0};
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, bs, &in.base.t));
    if (!in.base.t)
        return;
    CHECK_OK(wgml_view_slice(in.base.t, 1, 0, 3, 1, &in.v));
    int64_t n = s[0] * s[1];
    float *h = malloc(sizeof(float) * (size_t)n);
    in.val = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        in.val[i] = h[i] = (float)t_uniform(-1, 1);
    CHECK_OK(wgml_tensor_upload(in.v, h, sizeof(float) * (size_t)n));
    const wgml_reduce_op ops[] = {WGML_SUM, WGML_ARGMAX, WGML_VAR, WGML_RMIN};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        check_reduce_on(ops[i], WGML_F32, 2, s, 1, 0, &in, "huge");
        check_reduce_on(ops[i], WGML_F32, 2, s, 2, 0, &in, "huge");
    }
    /* cumsum and argsort along rows: the rows are halved until each part
     * fits */
    wgml_tensor *o = t_poisoned(WGML_F32, 2, s), *oi = t_poisoned(WGML_I32, 2, s);
    double *want = malloc(sizeof(double) * (size_t)n);
    int32_t *wi = malloc(sizeof(int32_t) * (size_t)n);
    CHECK_OK(wgml_cumsum(in.v, 1, 0, o));
    wg_cumsum_ref(WGML_F32, in.val, 2, s, 1, 0, want);
    double *got = t_values(o);
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += fabs(got[i] - want[i]) > 8 * U * 3;
    CHECK(bad == 0, "cumsum of a split view: %d wrong", bad);
    free(got);
    /* along the long axis (on lavapipe one row spans more than a binding:
     * it is scanned in pieces joined by their totals) */
    CHECK_OK(wgml_cumsum(in.v, 0, 0, o));
    wg_cumsum_ref(WGML_F32, in.val, 2, s, 0, 0, want);
    got = t_values(o);
    bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += fabs(got[i] - want[i]) > 8 * U * (double)s[0];
    CHECK(bad == 0, "cumsum along a row over one binding: %d wrong", bad);
    free(got);
    CHECK_OK(wgml_argsort(in.v, 1, oi));
    wg_argsort_ref(in.val, s[0], s[1], 1, wi);
    got = t_values(oi);
    bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += got[i] != wi[i];
    CHECK(bad == 0, "argsort of a split view: %d wrong", bad);
    free(got);
    free(want);
    free(wi);
    wgml_tensor_free(o);
    wgml_tensor_free(oi);
    free(h);
    free_input(&in);
}

/* out as a strided view into x's own buffer (x bound read-write then). */
static void t_out_view(void)
{
    const int64_t bs[2] = {6, 12};
    t_tensor b = t_random(WGML_F32, 2, bs, -3, 3);
    wgml_tensor *x = NULL, *o = NULL;
    CHECK_OK(wgml_view_slice(b.t, 1, 0, 11, 1, &x));  /* [6, 11] */
    CHECK_OK(wgml_view_slice(b.t, 1, 11, 12, 1, &o)); /* [6, 1], column 11 */
    if (x && o) {
        CHECK_OK(wgml_reduce(WGML_SUM, x, 2, 0, o));
        double *g = t_values(b.t);
        int bad = 0;
        for (int r = 0; r < 6; r++) {
            double w = 0;
            for (int c = 0; c < 11; c++) {
                w += b.val[r * 12 + c];
                bad += g[r * 12 + c] != b.val[r * 12 + c]; /* x untouched */
            }
            bad += fabs(g[r * 12 + 11] - w) > 16 * U * 33;
        }
        CHECK(bad == 0, "sum into a view of x's buffer: %d wrong", bad);
        free(g);
    }
    wgml_tensor_free(x);
    wgml_tensor_free(o);
    t_free(&b);
}

/* ------------------------------------------------------------ cumsum */

static void check_cumsum(wgml_dtype dt, int ndim, const int64_t *shape, int axis, int excl, int layout, bool inplace)
{
    bool fl = wg_dtype_is_float(dt);
    input in = make_input(dt, ndim, shape, layout, fl ? -4 : dt == WGML_U32 ? 0 : -2e9, fl ? 4 : 2e9);
    if (!in.v)
        return;
    int64_t n = prod(ndim, shape);
    wgml_tensor *o = inplace ? in.v : t_poisoned(dt, ndim, shape);
    CHECK_OK(wgml_cumsum(in.v, axis, excl, o));
    double *want = malloc(sizeof(double) * (size_t)(n + 1)), *absw = malloc(sizeof(double) * (size_t)(n + 1));
    double *ab = malloc(sizeof(double) * (size_t)(n + 1)), *atol = malloc(sizeof(double) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        ab[i] = fabs(in.val[i]);
    int a = axis < 0 ? axis + ndim : axis;
    wg_cumsum_ref(dt, in.val, ndim, shape, a, excl, want);
    wg_cumsum_ref(WGML_F32, ab, ndim, shape, a, 0, absw);
    /* prefix j: chunk carries j / 1024 (or block carries through the
     * exclusive scan of totals, fewer), 8 levels for the 256 thread totals,
     * 4 within a thread, 8 more for the totals' own scan */
    for (int64_t i = 0; i < n; i++)
        atol[i] = ((double)shape[a] / 1024 + 24) * U * absw[i];
    double *got = t_values(o);
    char what[80];
    snprintf(what, sizeof what, "cumsum/%s/axis%d/excl%d/layout%d%s", wgml_dtype_name(dt), axis, excl, layout,
             inplace ? "/inplace" : "");
    CHECK(compare_each(what, dt, got, want, n, 0, atol) == 0, "%s", what);
    free(got);
    free(want);
    free(absw);
    free(ab);
    free(atol);
    if (!inplace)
        wgml_tensor_free(o);
    free_input(&in);
}

static void t_cumsum(void)
{
    const wgml_dtype dts[] = {WGML_F32, WGML_F16, WGML_BF16, WGML_I32, WGML_U32};
    const int64_t s1[1] = {1031}, s3[3] = {3, 5, 17}, one[1] = {1}, s4[4] = {2, 3, 4, 5};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (int ex = 0; ex <= 1; ex++) {
            check_cumsum(dts[d], 1, s1, 0, ex, 0, false);
            check_cumsum(dts[d], 1, one, 0, ex, 0, false);
            for (int a = 0; a < 3; a++)
                check_cumsum(dts[d], 3, s3, a, ex, a, false);
            check_cumsum(dts[d], 4, s4, -3, ex, 1, false);
        }
    const int64_t lng[2] = {2, 100003}, many[2] = {70001, 3}, mid[2] = {5, 5000};
    check_cumsum(WGML_F32, 2, lng, 1, 0, 0, false); /* three passes */
    check_cumsum(WGML_I32, 2, lng, 1, 1, 0, false);
    check_cumsum(WGML_F16, 2, lng, 1, 1, 2, false);
    check_cumsum(WGML_F32, 2, many, 1, 0, 0, false);
    check_cumsum(WGML_F32, 2, many, 0, 1, 0, false);
    check_cumsum(WGML_F32, 2, mid, 1, 0, 0, true);
    check_cumsum(WGML_BF16, 2, lng, 1, 0, 0, true);
}

/* ------------------------------------------------------------ sort */

static void check_argsort(wgml_dtype dt, int ndim, const int64_t *shape, int desc, int layout, double lo, double hi,
                          bool dups)
{
    input in = make_input(dt, ndim, shape, layout, lo, hi);
    if (!in.v)
        return;
    int64_t n = prod(ndim, shape), len = shape[ndim - 1];
    if (dups && wg_dtype_is_float(dt)) { /* few distinct values: long runs of equal keys, -0 and +0 */
        void *h = malloc((size_t)wgml_tensor_nbytes(in.v) + 8);
        for (int64_t i = 0; i < n; i++) {
            double v = floor(in.val[i]);
            if (v == 0 && (i & 1))
                v = -0.0;
            wg_host_set(dt, h, (size_t)i, v);
            in.val[i] = wg_host_get(dt, h, (size_t)i);
        }
        CHECK_OK(wgml_tensor_upload(in.v, h, wgml_tensor_nbytes(in.v)));
        free(h);
    }
    wgml_tensor *o = t_poisoned(WGML_I32, ndim, shape);
    wgml_status st = wgml_argsort(in.v, desc, o);
    CHECK(st == WGML_OK, "argsort %s: %s", wgml_dtype_name(dt), wgml_last_error());
    int32_t *want = malloc(sizeof(int32_t) * (size_t)(n + 1));
    wg_argsort_ref(in.val, n / (len ? len : 1), len, desc, want);
    double *got = t_values(o);
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ < 4)
            printf("    argsort %s len %lld desc %d [%lld]: got %g want %d\n", wgml_dtype_name(dt), (long long)len,
                   desc, (long long)i, got[i], want[i]);
    CHECK(bad == 0, "argsort %s len %lld desc %d layout %d: %d wrong", wgml_dtype_name(dt), (long long)len, desc,
          layout, bad);
    free(got);
    free(want);
    wgml_tensor_free(o);
    free_input(&in);
}

static void t_argsort(void)
{
    const int64_t s1[2] = {3, 1000}, s2[1] = {1}, s3[2] = {5, 1}, s4[3] = {2, 3, 37}, s5[2] = {2, 5000};
    const int64_t big[2] = {1, 1 << 18};
    for (int desc = 0; desc <= 1; desc++) {
        check_argsort(WGML_F32, 2, s1, desc, 0, -20, 20, true);
        check_argsort(WGML_F32, 1, s2, desc, 0, -20, 20, false);
        check_argsort(WGML_F32, 2, s3, desc, 0, -20, 20, false);
        check_argsort(WGML_F32, 2, s5, desc, 2, -50, 50, true); /* global steps, strided */
        check_argsort(WGML_F32, 2, big, desc, 0, -300, 300, true);
        for (size_t d = 0; d < NDT; d++) {
            double lo = all_dt[d] == WGML_U8 || all_dt[d] == WGML_U32 ? 0 : -100;
            check_argsort(all_dt[d], 3, s4, desc, 1, lo, 100, true);
        }
    }
    check_argsort(WGML_I32, 2, s5, 1, 0, -2147483648.0, 2147483647.0, false);
    /* NaN and infinities */
    const int64_t sn[1] = {9};
    wgml_tensor *x = NULL, *o = t_poisoned(WGML_I32, 1, sn);
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, sn, &x));
    float h[9] = {1, NAN, -INFINITY, 0.0f, INFINITY, -0.0f, NAN, -1, 1};
    double hv[9];
    for (int i = 0; i < 9; i++)
        hv[i] = h[i];
    CHECK_OK(wgml_tensor_upload(x, h, sizeof h));
    for (int desc = 0; desc <= 1; desc++) {
        int32_t want[9];
        wg_argsort_ref(hv, 1, 9, desc, want);
        CHECK_OK(wgml_argsort(x, desc, o));
        double *g = t_values(o);
        int bad = 0;
        for (int i = 0; i < 9; i++)
            bad += g[i] != want[i];
        CHECK(bad == 0, "argsort with NaN desc %d: %d wrong (first %g)", desc, bad, g[0]);
        free(g);
    }
    wgml_tensor_free(x);
    wgml_tensor_free(o);
}

static void check_top_k(wgml_dtype dt, int ndim, const int64_t *shape, int64_t k, int which)
{
    input in = make_input(dt, ndim, shape, 0, -30, 30);
    if (!in.v)
        return;
    int64_t len = shape[ndim - 1], rows = prod(ndim, shape) / len, ks[4];
    memcpy(ks, shape, sizeof(int64_t) * (size_t)ndim);
    ks[ndim - 1] = k;
    wgml_tensor *v = which & 1 ? t_poisoned(dt, ndim, ks) : NULL, *ix = which & 2 ? t_poisoned(WGML_I32, ndim, ks) : NULL;
    CHECK_OK(wgml_top_k(in.v, k, v, ix));
    int32_t *order = malloc(sizeof(int32_t) * (size_t)(rows * len + 1));
    wg_argsort_ref(in.val, rows, len, 1, order);
    double *gv = v ? t_values(v) : NULL, *gi = ix ? t_values(ix) : NULL;
    int bad = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < k; c++) {
            int32_t w = order[r * len + c];
            if (gi && gi[r * k + c] != w)
                bad++;
            if (gv && gv[r * k + c] != in.val[r * len + w])
                bad++;
        }
    CHECK(bad == 0, "top_k %s len %lld k %lld which %d: %d wrong", wgml_dtype_name(dt), (long long)len, (long long)k,
          which, bad);
    free(gv);
    free(gi);
    free(order);
    wgml_tensor_free(v);
    wgml_tensor_free(ix);
    free_input(&in);
}

static void t_top_k(void)
{
    const int64_t s1[2] = {3, 1000}, s2[3] = {2, 2, 17}, big[2] = {1, 1 << 18};
    check_top_k(WGML_F32, 2, s1, 1, 3);
    check_top_k(WGML_F32, 2, s1, 1000, 3);
    check_top_k(WGML_F32, 2, s1, 7, 1);
    check_top_k(WGML_F32, 2, s1, 7, 2);
    for (size_t d = 0; d < NDT; d++)
        check_top_k(all_dt[d], 3, s2, 5, 3);
    check_top_k(WGML_BF16, 2, big, 10, 3);
}

/* ------------------------------------------------------------ errors */

static void t_errors(void)
{
    const int64_t s4[4] = {2, 3, 4, 5}, o1[4] = {2, 1, 4, 5}, o13[4] = {2, 1, 4, 1}, s2[2] = {3, 4}, k2[2] = {3, 2};
    wgml_tensor *x = NULL, *o = NULL, *oi = NULL, *o2 = NULL, *xi = NULL, *xb = NULL, *sx = NULL, *so = NULL;
    wgml_tensor *kv = NULL, *ki = NULL, *bad = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 4, s4, &x));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 4, o1, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 4, o1, &oi));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 4, o13, &o2));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 4, s4, &xi));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_BOOL, 4, s4, &xb));
    CHECK(wgml_reduce(WGML_ARGMAX, x, 0xa, 0, o2) == WGML_ERR_INVALID_ARG, "argmax over 2 axes accepted");
    CHECK(wgml_reduce(WGML_ARGMIN, x, 0, 0, oi) == WGML_ERR_INVALID_ARG, "argmin over no axis accepted");
    CHECK(wgml_reduce(WGML_SUM, x, 0x10, 0, o) == WGML_ERR_INDEX, "axis 4 of 4-D accepted");
    CHECK(wgml_reduce(WGML_SUM, x, 0x4, 0, o) == WGML_ERR_SHAPE, "wrong out shape accepted");
    CHECK(wgml_reduce(WGML_SUM, x, 0x2, 0, oi) == WGML_ERR_DTYPE, "i32 out of an f32 sum accepted");
    CHECK(wgml_reduce(WGML_ARGMAX, x, 0x2, 0, o) == WGML_ERR_DTYPE, "f32 out of argmax accepted");
    CHECK(wgml_reduce(WGML_MEAN, xi, 0x2, 0, oi) == WGML_ERR_DTYPE, "integer mean accepted");
    CHECK(wgml_reduce(WGML_SUM, xb, 0x2, 0, o) == WGML_ERR_DTYPE, "bool sum accepted");
    CHECK(wgml_reduce((wgml_reduce_op)99, x, 0x2, 0, o) == WGML_ERR_INVALID_ARG, "unknown op accepted");
    CHECK(wgml_reduce(WGML_SUM, NULL, 0x2, 0, o) == WGML_ERR_INVALID_ARG, "NULL x accepted");
    CHECK(wgml_reduce(WGML_SUM, x, 0x2, 0, NULL) == WGML_ERR_INVALID_ARG, "NULL out accepted");
    CHECK_OK(wgml_reduce(WGML_ARGMAX, x, 0x2, 0, oi));
    CHECK_OK(wgml_reduce(WGML_SUM, xi, 0x2, 0, oi));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s2, &sx));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s2, &so));
    CHECK(wgml_cumsum(sx, 2, 0, so) == WGML_ERR_INDEX, "cumsum axis 2 of 2-D accepted");
    CHECK(wgml_cumsum(sx, -3, 0, so) == WGML_ERR_INDEX, "cumsum axis -3 of 2-D accepted");
    CHECK(wgml_cumsum(x, 0, 0, so) == WGML_ERR_SHAPE, "cumsum into the wrong shape accepted");
    CHECK(wgml_cumsum(xb, 0, 0, xb) == WGML_ERR_DTYPE, "bool cumsum accepted");
    CHECK(wgml_argsort(sx, 0, so) == WGML_ERR_DTYPE, "f32 argsort indices accepted");
    CHECK(wgml_argsort(xb, 0, xi) == WGML_ERR_DTYPE, "bool argsort accepted");
    CHECK(wgml_argsort(sx, 0, xi) == WGML_ERR_SHAPE, "argsort into the wrong shape accepted");
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, k2, &kv));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, k2, &ki));
    CHECK(wgml_top_k(sx, 5, kv, ki) == WGML_ERR_INVALID_ARG, "k > row length accepted");
    CHECK(wgml_top_k(sx, -1, kv, ki) == WGML_ERR_INVALID_ARG, "negative k accepted");
    CHECK(wgml_top_k(sx, 3, kv, ki) == WGML_ERR_SHAPE, "k = 3 into [3, 2] accepted");
    CHECK(wgml_top_k(sx, 2, ki, kv) == WGML_ERR_DTYPE, "swapped values/indices accepted");
    CHECK_OK(wgml_top_k(sx, 2, NULL, NULL));
    CHECK(wgml_tensor_new(t_ctx, WGML_F32, 0, NULL, &bad) == WGML_OK, "scalar");
    CHECK(wgml_argsort(bad, 0, bad) == WGML_ERR_SHAPE, "argsort of a scalar accepted");
    /* the registry knows the family */
    int found = 0;
    for (size_t i = 0; i < wgml_op_count(); i++)
        found += strcmp(wgml_op_get(i)->family, "reduce") == 0;
    CHECK(found == WGML_REDUCE_COUNT + 3, "registry rows: %d", found);
    wgml_tensor *ts[] = {x, o, oi, o2, xi, xb, sx, so, kv, ki, bad};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        wgml_tensor_free(ts[i]);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"reduce_all_ops_dtypes_axes_layouts", t_reduce_grid},
        {"reduce_zero_size", t_zero_size},
        {"reduce_scalar_of_over_2p24", t_big_scalar},
        {"reduce_over_65535_rows", t_many_rows},
        {"reduce_ties_and_nan", t_ties_nan},
        {"reduce_var_std_corrections", t_var},
        {"reduce_input_over_one_binding", t_over_binding},
        {"reduce_into_view_of_same_buffer", t_out_view},
        {"cumsum", t_cumsum},
        {"argsort_stable_up_to_2p18", t_argsort},
        {"top_k", t_top_k},
        {"invalid_calls", t_errors},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_stats cs;
    if (wgml_ctx_stats_get(t_ctx, &cs) == WGML_OK)
        printf("pipelines built: %llu, dispatches: %llu\n", (unsigned long long)cs.pipelines_compiled,
               (unsigned long long)cs.dispatches);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
