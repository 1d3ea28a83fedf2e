/* Softmax family against its CPU reference (wg_softmax_ref, double):
 * f32/f16/bf16, rows of 1, 7, 1000, 4097, scale, log_softmax, masks
 * broadcast over heads (f32 and f16, with -inf), ALiBi over 12 heads (not a
 * power of two), sinks, fully masked rows, axis 0/1 of a 3-D tensor,
 * strided input and output views, in place, more than 65,535 rows,
 * zero-size tensors, the NaN rule, and the error paths.
 *
 * Tolerance, relative to the largest |value| of the row (softmax outputs
 * are probabilities that sum to 1, so a row's scale is its max):
 *   f32: 1e-5.  The logit v = scale * x + slope * mask carries about
 *   2 ulps of its magnitude (|v - max| <= ~20 here: ~2.4e-6 absolute,
 *   i.e. relative on exp(v - max)); ALiBi's slope = exp2(k) with WGSL's
 *   (3 + 2|k|)-ulp exp2, |k| <= 8, is good to ~1.1e-6 relative, times
 *   |mask| <= 2; WGSL exp adds 3 ulps near the row max; the sum of up to
 *   4097 terms merged in a tree of depth ~12 adds ~1e-6; the division 1
 *   ulp.  That totals ~6e-6 of the row max; log_softmax's errors are the
 *   same absolute amounts, plus log(sum) for a sum just above 1 (one
 *   dominant logit): 2^-24 relative on the sum is ~6e-8 absolute on the
 *   log, whatever the row's scale, hence an absolute 2.5e-7 (4 ulps of 1).
 *   16-bit outputs add one unit of their rounding relative to |value|
 *   (f16 2^-10, bf16 2^-7): the f32 result may round the other way.
 */
#include "nan_table.h"
#include "ops/rows.h"

static const wgml_dtype floats[] = {WGML_F32, WGML_F16, WGML_BF16};

/* |got - want| <= rtol * rowmax + dtype rounding, rows along `axis`. */
static int row_compare(const char *what, wgml_dtype dt, const double *got, const double *want, int ndim,
                       const int64_t *shape, int axis, double rtol)
{
    int64_t n = 1, inner = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    for (int i = axis + 1; i < ndim; i++)
        inner *= shape[i];
    int64_t len = ndim ? shape[axis] : 1;
    double drel = 0, dabs = 0;
    t_tol(dt, &drel, &dabs);
    int bad = 0;
    /* row r = (i / (len inner)) inner + i % inner holds element i */
    int64_t rows = len ? n / len : 0;
    double *rmax = calloc((size_t)rows + 1, sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        int64_t r = (i / (len * inner)) * inner + i % inner;
        double w = fabs(want[i]);
        rmax[r] = isfinite(w) && w > rmax[r] ? w : rmax[r];
    }
    for (int64_t i = 0; i < n; i++) {
        double rm = rmax[(i / (len * inner)) * inner + i % inner];
        uint8_t tmp[8];
        wg_host_set(dt, tmp, 0, want[i]);
        double w = wg_host_get(dt, tmp, 0), g = got[i];
        bool ok = g == w || (isnan(g) && isnan(w)) ||
                  (isfinite(w) && fabs(g - w) <= rtol * rm + drel * fabs(w) + dabs + 2.5e-7);
        if (!ok && bad++ < 4)
            printf("    %s [%lld]: got %.9g want %.9g (row max %.3g)\n", what, (long long)i, g, w, rm);
    }
    if (bad > 4)
        printf("    %s: %d mismatches of %lld\n", what, bad, (long long)n);
    free(rmax);
    return bad;
}

typedef struct sm_case {
    wgml_dtype dt, out_dt, mask_dt;
    int ndim;
    int64_t shape[4];
    int mndim;               /* 0: no mask */
    int64_t mshape[4];
    double masked;           /* fraction of mask entries set to -inf */
    bool sinks;
    wgml_softmax_params p;
    int layout;              /* 1: x is a transposed view, out a strided view;
                                2: x and out are rows [off, off + rows) of taller tensors */
    int64_t off;             /* layout 2 */
    int path;                /* 1: must take the vector path (ROWS4), 2: must not; 0: either */
} sm_case;

/* Rows [off, off + shape[0]) of a contiguous 2-D tensor with off more rows. */
static wgml_tensor *row_slice(wgml_dtype dt, const int64_t *shape, int64_t off, t_tensor *base, bool poison)
{
    int64_t s[2] = {shape[0] + off, shape[1]};
    if (poison)
        base->t = t_poisoned(dt, 2, s);
    else
        *base = t_random(dt, 2, s, -5, 5);
    wgml_tensor *v = NULL;
    CHECK_OK(wgml_view_slice(base->t, 0, off, off + shape[0], 1, &v));
    return v;
}

/* A tensor of `shape` that is a view (last two dims swapped) of a
 * contiguous tensor; *base receives the owner. */
static wgml_tensor *transposed(wgml_dtype dt, int ndim, const int64_t *shape, t_tensor *base, bool poison)
{
    int64_t ts[4];
    memcpy(ts, shape, sizeof(int64_t) * (size_t)ndim);
    ts[ndim - 1] = shape[ndim - 2];
    ts[ndim - 2] = shape[ndim - 1];
    if (poison)
        base->t = t_poisoned(dt, ndim, ts);
    else
        *base = t_random(dt, ndim, ts, -5, 5);
    wgml_tensor *v = NULL;
    CHECK_OK(wgml_view_transpose(base->t, -1, -2, &v));
    return v;
}

static void run_case(const char *what, const sm_case *c)
{
    t_tensor xb = {0}, ob = {0}, m = {0}, s = {0};
    wgml_tensor *x = NULL, *o = NULL;
    if (c->layout == 1) {
        x = transposed(c->dt, c->ndim, c->shape, &xb, false);
        o = transposed(c->out_dt, c->ndim, c->shape, &ob, true);
    } else if (c->layout == 2) {
        x = row_slice(c->dt, c->shape, c->off, &xb, false);
        o = row_slice(c->out_dt, c->shape, c->off, &ob, true);
    } else {
        xb = t_random(c->dt, c->ndim, c->shape, -5, 5);
        CHECK_OK(wgml_view_reshape(xb.t, c->ndim, c->shape, &x));
        o = t_poisoned(c->out_dt, c->ndim, c->shape);
    }
    if (c->mndim) {
        m = t_random(c->mask_dt, c->mndim, c->mshape, -2, 2);
        for (int64_t i = 0; i < m.n; i++)
            if (t_uniform(0, 1) < c->masked)
                wg_host_set(c->mask_dt, m.host, (size_t)i, -INFINITY);
        CHECK_OK(wgml_tensor_upload(m.t, m.host, wgml_tensor_nbytes(m.t)));
        for (int64_t i = 0; i < m.n; i++)
            m.val[i] = wg_host_get(c->mask_dt, m.host, (size_t)i);
    }
    int64_t heads = c->ndim >= 3 ? c->shape[c->ndim - 3] : 1;
    if (c->sinks)
        s = t_random(c->dt, 1, &heads, -3, 3); /* x's dtype: no extra kernel variant */
    wgml_status st = wgml_softmax(x, c->mndim ? m.t : NULL, c->sinks ? s.t : NULL, &c->p, o);
    CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
    const char *k = wg_last_dispatch(t_ctx) ? wg_last_dispatch(t_ctx) : "";
    CHECK(c->path != 1 || strstr(k, "ROWS4"), "%s: vector path not taken (%s)", what, k);
    CHECK(c->path != 2 || !strstr(k, "ROWS4"), "%s: vector path taken (%s)", what, k);
    int64_t n = wgml_tensor_nelem(x);
    double *xv = t_values(x), *want = malloc(sizeof(double) * (size_t)(n + 1));
    wg_softmax_ref(c->ndim, c->shape, xv, c->mndim, c->mshape, c->mndim ? m.val : NULL, c->sinks ? s.val : NULL,
                   &c->p, want);
    double *got = t_values(o);
    int axis = c->ndim ? (c->p.axis < 0 ? c->p.axis + c->ndim : c->p.axis) : 0;
    CHECK(row_compare(what, c->out_dt, got, want, c->ndim, c->shape, axis, 1e-5) == 0, "%s", what);
    free(got);
    free(want);
    free(xv);
    wgml_tensor_free(x);
    wgml_tensor_free(o);
    t_free(&xb);
    t_free(&ob);
    t_free(&m);
    t_free(&s);
}

/* out == x for a 2-D x of `shape`; path as in sm_case. */
static void in_place(const char *what, wgml_dtype dt, const int64_t shape[2], const wgml_softmax_params *p, int path)
{
    t_tensor x = t_random(dt, 2, shape, -5, 5);
    double *want = malloc(sizeof(double) * (size_t)x.n);
    wg_softmax_ref(2, shape, x.val, 0, NULL, NULL, NULL, p, want);
    CHECK_OK(wgml_softmax(x.t, NULL, NULL, p, x.t));
    CHECK(path != 1 || strstr(wg_last_dispatch(t_ctx), "ROWS4"), "%s: vector path not taken", what);
    double *got = t_values(x.t);
    CHECK(row_compare(what, dt, got, want, 2, shape, 1, 1e-5) == 0, "%s", what);
    free(got);
    free(want);
    t_free(&x);
}

static sm_case plain_case(wgml_dtype dt, int ndim, const int64_t *shape)
{
    sm_case c;
    memset(&c, 0, sizeof c);
    c.dt = c.out_dt = dt;
    c.mask_dt = WGML_F32;
    c.ndim = ndim;
    memcpy(c.shape, shape, sizeof(int64_t) * (size_t)ndim);
    c.p.axis = -1;
    return c;
}

/* Every dtype, row lengths 1, 7, 1000, 4097, scale, log. */
static void t_rows(void)
{
    const int64_t lens[] = {1, 7, 1000, 4097};
    for (size_t d = 0; d < 3; d++)
        for (size_t l = 0; l < 4; l++)
            for (int lg = 0; lg < 2; lg++) {
                int64_t shape[2] = {3, lens[l]};
                sm_case c = plain_case(floats[d], 2, shape);
                c.p.log = lg;
                c.p.scale = l % 2 ? 0.37f : 0; /* 0 means 1 */
                char what[64];
                snprintf(what, sizeof what, "%s len %lld log %d", wgml_dtype_name(floats[d]), (long long)lens[l], lg);
                run_case(what, &c);
            }
    /* f16 in, f32 out and the reverse */
    const int64_t shape[2] = {4, 33};
    sm_case c = plain_case(WGML_F16, 2, shape);
    c.out_dt = WGML_F32;
    run_case("f16 -> f32", &c);
    c = plain_case(WGML_F32, 2, shape);
    c.out_dt = WGML_BF16;
    run_case("f32 -> bf16", &c);
}

/* Attention-shaped x [B, H, Q, K] with masks broadcast over heads,
 * ALiBi over 12 heads, sinks. */
static void t_attention(void)
{
    const int64_t xs[4] = {2, 12, 5, 33};
    const int64_t masks[3][4] = {{5, 33}, {2, 1, 5, 33}, {1, 1, 1, 33}};
    const int mnd[3] = {2, 4, 4};
    for (int mi = 0; mi < 3; mi++)
        for (int opt = 0; opt < 8; opt++) { /* bit 0 ALiBi, bit 1 sinks, bit 2 log */
            /* one dtype per mask shape keeps the kernel variants few */
            wgml_dtype dt = floats[mi];
            sm_case c = plain_case(dt, 4, xs);
            c.mndim = mnd[mi];
            memcpy(c.mshape, masks[mi], sizeof c.mshape);
            c.mask_dt = mi == 1 ? WGML_F16 : WGML_F32;
            c.masked = 0.3;
            c.p.scale = 0.125f;
            c.p.max_bias = opt & 1 ? 8.0f : 0;
            c.sinks = opt & 2;
            c.p.log = opt >> 2 & 1;
            char what[80];
            snprintf(what, sizeof what, "attn %s mask %d alibi %d sinks %d log %d", wgml_dtype_name(dt), mi, opt & 1,
                     opt >> 1 & 1, opt >> 2 & 1);
            run_case(what, &c);
        }
    /* sinks and ALiBi without a mask (ALiBi then does nothing, as in ggml) */
    sm_case c = plain_case(WGML_F32, 4, xs);
    c.sinks = true;
    c.p.max_bias = 4;
    run_case("sinks only", &c);
    /* 3-D x [heads, q, k]: heads are dim -3 */
    const int64_t x3[3] = {12, 6, 9}, m3[2] = {6, 9};
    c = plain_case(WGML_F32, 3, x3);
    c.mndim = 2;
    memcpy(c.mshape, m3, sizeof m3);
    c.p.max_bias = 8;
    c.sinks = true;
    run_case("3-D alibi sinks", &c);
}

/* Rows entirely -inf: 0 for softmax, -inf for log_softmax, with and
 * without a sink. */
static void t_fully_masked(void)
{
    const int64_t xs[3] = {3, 4, 7}, ms[2] = {4, 7};
    for (int opt = 0; opt < 4; opt++) {
        sm_case c = plain_case(WGML_F32, 3, xs);
        c.mndim = 2;
        memcpy(c.mshape, ms, sizeof ms);
        c.masked = 0.75;
        c.sinks = opt & 1;
        c.p.log = opt >> 1;
        run_case("mostly masked", &c);
    }
    /* every entry -inf: checked against the documented values directly */
    t_tensor x = t_random(WGML_F32, 3, xs, -1, 1), s = t_random(WGML_F32, 1, xs, -1, 1);
    wgml_tensor *m = NULL, *o = t_poisoned(WGML_F32, 3, xs);
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, ms, &m));
    CHECK_OK(wgml_fill(m, -INFINITY));
    for (int opt = 0; opt < 4; opt++) {
        wgml_softmax_params p = {-1, 1, 0, opt >> 1};
        CHECK_OK(wgml_softmax(x.t, m, opt & 1 ? s.t : NULL, &p, o));
        double *got = t_values(o);
        int bad = 0;
        for (int i = 0; i < 84; i++)
            bad += got[i] != (p.log ? -INFINITY : 0.0);
        CHECK(bad == 0, "all -inf rows (sinks %d log %d): %d wrong, e.g. %g", opt & 1, opt >> 1, bad, got[0]);
        free(got);
    }
    wgml_tensor_free(m);
    wgml_tensor_free(o);
    t_free(&x);
    t_free(&s);
}

/* The register-cached vector path (ROWS4): every vectors-per-thread count
 * (R = 1, 2, 4, 8 for both workgroup sizes), the longest row it takes and
 * the first it leaves, with mask, ALiBi, sinks and log together; f16 in
 * and out (a vector type only with ShaderF16); row offsets that keep or
 * break 16-byte alignment; and the other layouts that must fall back. */
static void t_vector_rows(void)
{
    bool f16v = wg_has(t_ctx, WGML_FEATURE_F16);
    const int64_t lens[] = {4, 252, 512, 1024, 1028, 3000, 4096, 8192, 8196};
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
        for (int opt = 0; opt < 2; opt++) {
            int64_t xs[4] = {2, 3, 2, lens[l]}, ms[2] = {2, lens[l]};
            sm_case c = plain_case(WGML_F32, 4, xs);
            if (opt) {
                c.mndim = 2;
                memcpy(c.mshape, ms, sizeof ms);
                c.masked = 0.25;
                c.p.max_bias = 8;
                c.sinks = true;
                c.p.log = l % 2;
                c.p.scale = 0.3f;
            }
            c.path = lens[l] == 8196 ? 2 : 1;
            char what[64];
            snprintf(what, sizeof what, "vector len %lld opt %d", (long long)lens[l], opt);
            run_case(what, &c);
        }
    const int64_t s2[2] = {5, 1024};
    sm_case c = plain_case(WGML_F16, 2, s2);
    c.path = f16v ? 1 : 2;
    run_case("vector f16", &c);
    c.out_dt = WGML_F32;
    run_case("vector f16 -> f32", &c);
    c = plain_case(WGML_F32, 2, s2);
    c.out_dt = WGML_BF16; /* no vector type for bf16 */
    c.path = 2;
    run_case("bf16 out falls back", &c);
    c = plain_case(WGML_F32, 2, s2);
    c.layout = 2;
    c.off = 3;
    c.path = 1;
    run_case("row offset 3 (aligned)", &c);
    const int64_t s3[2] = {4, 1026};
    c = plain_case(WGML_F32, 2, s3);
    c.layout = 2;
    c.off = 1;
    c.path = 2;
    run_case("length 1026 falls back", &c);
    const int64_t s4[3] = {2, 8, 64};
    c = plain_case(WGML_F32, 3, s4);
    c.layout = 1;
    c.path = 2;
    run_case("transposed falls back", &c);
    /* in place on the vector path: x bound read_write */
    const wgml_softmax_params p = {-1, 1, 0, 1};
    in_place("vector in place", WGML_F32, s2, &p, 1);
}

/* Non-last axes, strided views, in place, scalars. */
static void t_axes_layouts(void)
{
    const int64_t s3[3] = {5, 4, 3};
    for (int axis = 0; axis < 3; axis++)
        for (size_t d = 0; d < 3; d++) {
            sm_case c = plain_case(floats[d], 3, s3);
            c.p.axis = axis - (d == 1 ? 3 : 0); /* also as a negative axis */
            c.p.log = axis == 1;
            char what[48];
            snprintf(what, sizeof what, "axis %d %s", axis, wgml_dtype_name(floats[d]));
            run_case(what, &c);
        }
    /* axis 1 with a mask [4, 3] and a 1000-long strided axis 0 */
    sm_case c = plain_case(WGML_F32, 3, s3);
    c.p.axis = 1;
    c.mndim = 2;
    c.mshape[0] = 4;
    c.mshape[1] = 3;
    c.masked = 0.2;
    run_case("axis 1 with mask", &c);
    const int64_t tall[2] = {1000, 6};
    c = plain_case(WGML_BF16, 2, tall);
    c.p.axis = 0;
    run_case("axis 0 of [1000, 6]", &c);
    /* transposed input, strided output */
    const int64_t s2[3] = {2, 9, 300};
    for (size_t d = 0; d < 3; d++) {
        c = plain_case(floats[d], 3, s2);
        c.layout = 1;
        c.p.log = d == 2;
        run_case("transposed views", &c);
    }
    c = plain_case(WGML_F32, 3, s2);
    c.layout = 1;
    c.p.axis = 1;
    run_case("transposed views axis 1", &c);
    const wgml_softmax_params p = {-1, 2, 0, 0};
    in_place("in place", WGML_F16, s3, &p, 0);
    /* a scalar is a row of one */
    sm_case sc = plain_case(WGML_F32, 0, s3);
    run_case("scalar", &sc);
}

/* More than 65,535 rows (folded grid), and zero-size tensors. */
static void t_sizes(void)
{
    const int64_t big[2] = {70001, 5};
    sm_case c = plain_case(WGML_F32, 2, big);
    c.p.log = 1;
    run_case("70001 rows", &c);
    const int64_t mbig[3] = {3, 23339, 5}, mm[1] = {5};
    c = plain_case(WGML_F16, 3, mbig);
    c.mndim = 1;
    memcpy(c.mshape, mm, sizeof mm);
    c.masked = 0.2;
    run_case("70017 rows masked", &c);
    /* above 2^24 elements (rows of 4099: the scalar path) */
    const int64_t huge[2] = {4097, 4099};
    c = plain_case(WGML_F32, 2, huge);
    run_case("16.8M elements", &c);
    const int64_t z1[2] = {0, 7}, z2[2] = {3, 0}, z3[4] = {2, 0, 4, 4};
    run_case("zero rows", (c = plain_case(WGML_F32, 2, z1), &c));
    run_case("zero-length rows", (c = plain_case(WGML_F16, 2, z2), &c));
    c = plain_case(WGML_F32, 4, z3);
    c.sinks = true;
    c.p.max_bias = 8;
    run_case("zero heads", &c);
}

/* NaN rule (wgml.h): a NaN logit in a row -- from x, the mask or the
 * row's sink -- makes the whole row NaN, as does +inf (exp(inf - inf));
 * other rows are untouched.  x [2 heads, 6, L], L = 8 (vector path for
 * f32 and f16 with ShaderF16) and 7 (scalar path); head 0's sink is NaN,
 * head 1's finite; the mask is 0 but for a NaN in row 4. */
static void t_nan_rows(void)
{
    const double N = NAN, I = INFINITY;
    const double rows[6][3] = {{1, N, 2}, {N, N, N}, {-I, N, -I}, {I, 1, 2}, {1, 2, 3}, {-I, 0, 1}};
    const bool nan_row[6] = {true, true, true, true, true, false}; /* row 4: its mask entry */
    for (size_t d = 0; d < 3; d++)
        for (int64_t L = 7; L <= 8; L++)
            for (int lg = 0; lg < 2; lg++)
                for (int sk = 0; sk < 2; sk++) {
                    const int64_t shape[3] = {2, 6, L}, ms[2] = {6, L}, heads = 2;
                    double xv[2 * 6 * 8], mv[6 * 8], sv[2] = {N, 0.5};
                    for (int h = 0; h < 2; h++)
                        for (int r = 0; r < 6; r++)
                            for (int64_t j = 0; j < L; j++)
                                xv[(h * 6 + r) * L + j] = j < 3 ? rows[r][j] : (r == 2 ? -I : 0.25 * (double)j);
                    for (int64_t i = 0; i < 6 * L; i++)
                        mv[i] = i == 4 * L + 1 ? N : 0;
                    wgml_tensor *x = t_from(floats[d], 3, shape, xv), *m = t_from(WGML_F32, 2, ms, mv);
                    wgml_tensor *sinks = sk ? t_from(floats[d], 1, &heads, sv) : NULL;
                    wgml_tensor *o = t_poisoned(floats[d], 3, shape);
                    wgml_softmax_params p = {-1, 0, 0, lg};
                    char what[64];
                    snprintf(what, sizeof what, "NaN rows %s len %lld log %d sinks %d", wgml_dtype_name(floats[d]),
                             (long long)L, lg, sk);
                    CHECK_OK(wgml_softmax(x, m, sinks, &p, o));
                    double *xr = t_values(x), *sr = sk ? t_values(sinks) : NULL, want[2 * 6 * 8];
                    wg_softmax_ref(3, shape, xr, 2, ms, mv, sr, &p, want);
                    int bad_ref = 0;
                    for (int h = 0; h < 2; h++)
                        for (int r = 0; r < 6; r++)
                            for (int64_t j = 0; j < L; j++) {
                                bool all = nan_row[r] || (sk && h == 0);
                                bad_ref += all != (bool)isnan(want[(h * 6 + r) * L + j]);
                            }
                    CHECK(bad_ref == 0, "%s: the reference breaks the NaN rule at %d elements", what, bad_ref);
                    double *got = t_values(o);
                    CHECK(row_compare(what, floats[d], got, want, 3, shape, 2, 1e-5) == 0, "%s", what);
                    free(got);
                    free(xr);
                    free(sr);
                    wgml_tensor_free(o);
                    wgml_tensor_free(sinks);
                    wgml_tensor_free(m);
                    wgml_tensor_free(x);
                }
}

static void t_errors(void)
{
    const int64_t s[4] = {2, 3, 4, 5}, bad_m[2] = {3, 5}, s2[2] = {4, 5}, h4[1] = {4}, h3[1] = {3};
    wgml_tensor *x, *o, *m, *mb, *i32, *sk, *skb, *o2;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 4, s, &x));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 4, s, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s2, &m));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, bad_m, &mb));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 4, s, &i32));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, h3, &sk));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, h4, &skb));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s2, &o2));
    wgml_softmax_params p = {-1, 1, 0, 0};
    CHECK_OK(wgml_softmax(x, m, sk, &p, o));
    CHECK(wgml_softmax(x, mb, NULL, &p, o) == WGML_ERR_SHAPE, "mask [3, 5] for [2, 3, 4, 5] accepted");
    CHECK(strstr(wgml_last_error(), "broadcast") != NULL, "message: %s", wgml_last_error());
    CHECK(wgml_softmax(x, x, NULL, &p, o) == WGML_OK, "a full-shape mask refused");
    CHECK(wgml_softmax(m, x, NULL, &p, o2) == WGML_ERR_SHAPE, "mask with more dims than x accepted");
    CHECK(wgml_softmax(x, NULL, skb, &p, o) == WGML_ERR_SHAPE, "4 sinks for 3 heads accepted");
    CHECK(wgml_softmax(x, NULL, NULL, &p, o2) == WGML_ERR_SHAPE, "wrong out shape accepted");
    CHECK(wgml_softmax(x, NULL, NULL, &p, i32) == WGML_ERR_DTYPE, "i32 out accepted");
    CHECK(wgml_softmax(i32, NULL, NULL, &p, o) == WGML_ERR_DTYPE, "i32 x accepted");
    CHECK(wgml_softmax(x, i32, NULL, &p, o) == WGML_ERR_DTYPE, "i32 mask accepted");
    CHECK(wgml_softmax(NULL, NULL, NULL, &p, o) == WGML_ERR_INVALID_ARG, "NULL x accepted");
    CHECK(wgml_softmax(x, NULL, NULL, &p, NULL) == WGML_ERR_INVALID_ARG, "NULL out accepted");
    p.axis = 4;
    CHECK(wgml_softmax(x, NULL, NULL, &p, o) == WGML_ERR_INDEX, "axis 4 of 4-D accepted");
    p.axis = -5;
    CHECK(wgml_softmax(x, NULL, NULL, &p, o) == WGML_ERR_INDEX, "axis -5 of 4-D accepted");
    p.axis = 1;
    CHECK(wgml_softmax(x, NULL, sk, &p, o) == WGML_ERR_INVALID_ARG, "sinks over the head axis accepted");
    p.max_bias = 8;
    CHECK(wgml_softmax(x, m, NULL, &p, o) == WGML_ERR_INVALID_ARG, "ALiBi over the head axis accepted");
    p.axis = -1;
    p.max_bias = -1;
    CHECK(wgml_softmax(x, m, NULL, &p, o) == WGML_ERR_INVALID_ARG, "negative max_bias accepted");
    p.max_bias = 0;
    p.scale = NAN;
    CHECK(wgml_softmax(x, m, NULL, &p, o) == WGML_ERR_INVALID_ARG, "NaN scale accepted");
    CHECK_OK(wgml_softmax(x, NULL, NULL, NULL, o)); /* NULL params: defaults */
    wgml_tensor *all[] = {x, o, m, mb, i32, sk, skb, o2};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        wgml_tensor_free(all[k]);
}

static void t_registry(void)
{
    int found = 0;
    for (size_t i = 0; i < wgml_op_count(); i++) {
        const wgml_op_info *r = wgml_op_get(i);
        if (strcmp(r->family, "softmax") == 0)
            found += r->dtypes == ((1u << WGML_F32) | (1u << WGML_F16) | (1u << WGML_BF16));
    }
    CHECK(found == 2, "softmax registry rows: %d", found);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"rows_dtypes_lengths_scale_log", t_rows},
        {"attention_mask_alibi_sinks", t_attention},
        {"fully_masked_rows", t_fully_masked},
        {"axes_views_in_place", t_axes_layouts},
        {"vector_rows", t_vector_rows},
        {"many_rows_and_zero_size", t_sizes},
        {"nan_rows", t_nan_rows},
        {"invalid_calls", t_errors},
        {"registry", t_registry},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_stats cs;
    if (wgml_ctx_stats_get(t_ctx, &cs) == WGML_OK) /* compiles dominate the run time on lavapipe */
        printf("pipelines compiled: %llu\n", (unsigned long long)cs.pipelines_compiled);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
