/* Edge cases of the elementwise family, checked against values written down
 * here (numpy's, where numpy has the op) rather than only against the
 * library's own reference: float MOD at its boundaries, the NaN rule of
 * wgml.h for every float op, values at +-inf and at the domain edges,
 * activation tails at relative accuracy, integer SCALE and the dtype claims
 * of wgml.h.  Random coverage of every op is in test_op_elementwise.c.
 * Every input here is fixed, so these cases do not depend on the seed. */
#include "op_harness.h"
#include "ops/elementwise.h"

static const wgml_dtype floats[3] = {WGML_F32, WGML_F16, WGML_BF16};
static const wgml_dtype plain[] = {WGML_F32, WGML_F16, WGML_BF16, WGML_I32, WGML_U32, WGML_I8, WGML_U8, WGML_BOOL};
#define NPLAIN (sizeof plain / sizeof *plain)

/* ------------------------------------------------------------ helpers */

/* v rounded to dtype dt as the tensor stores it. */
static double round_to(wgml_dtype dt, double v)
{
    uint8_t tmp[8];
    wg_host_set(dt, tmp, 0, v);
    return wg_host_get(dt, tmp, 0);
}

/* A 1-D tensor holding v[0..n) rounded to dt; the rounded values go to r. */
static wgml_tensor *upload(wgml_dtype dt, int64_t n, const double *v, double *r)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, dt, 1, &n, &t));
    if (!t)
        return NULL;
    uint8_t *h = calloc((size_t)n + 1, 4);
    for (int64_t i = 0; i < n; i++) {
        wg_host_set(dt, h, (size_t)i, v[i]);
        if (r)
            r[i] = wg_host_get(dt, h, (size_t)i);
    }
    CHECK_OK(wgml_tensor_upload(t, h, wgml_tensor_nbytes(t)));
    free(h);
    return t;
}

/* out = op(x) for n host values; returns the results (free them). */
static double *unary_on(wgml_unary_op op, wgml_dtype dt, int64_t n, const double *x, float p0, float p1)
{
    wgml_tensor *a = upload(dt, n, x, NULL), *o = t_poisoned(dt, 1, &n);
    wgml_status st = wgml_unary(op, a, o, p0, p1);
    CHECK(st == WGML_OK, "%s %s: %s", wg_unary_name(op), wgml_dtype_name(dt), wgml_last_error());
    double *got = t_values(o);
    wgml_tensor_free(a);
    wgml_tensor_free(o);
    return got;
}

static double *binary_on(wgml_binary_op op, wgml_dtype dt, int64_t n, const double *x, const double *y)
{
    wgml_tensor *a = upload(dt, n, x, NULL), *b = upload(dt, n, y, NULL);
    wgml_tensor *o = t_poisoned(op >= WGML_EQ ? WGML_BOOL : dt, 1, &n);
    wgml_status st = wgml_binary(op, a, b, o);
    CHECK(st == WGML_OK, "%s %s: %s", wg_binary_name(op), wgml_dtype_name(dt), wgml_last_error());
    double *got = t_values(o);
    wgml_tensor_free(a);
    wgml_tensor_free(b);
    wgml_tensor_free(o);
    return got;
}

/* Equal as values; NaN matches any NaN; zeros must agree in sign when
 * zero_sign is set. */
static bool same(double g, double w, bool zero_sign)
{
    if (isnan(w) || isnan(g))
        return isnan(w) && isnan(g);
    if (g != w)
        return false;
    return !zero_sign || g != 0 || signbit(g) == signbit(w);
}

/* The neighbour of v > 0 in dt toward +inf (dir 1) or 0 (dir -1). */
static double next_in(wgml_dtype dt, double v, int dir)
{
    int e, bits = dt == WGML_F16 ? 10 : dt == WGML_BF16 ? 7 : 23;
    double m = frexp(v, &e), ulp = ldexp(1, e - 1 - bits);
    return dir > 0 ? v + ulp : v - (m == 0.5 ? ulp / 2 : ulp);
}

static double unit_of(wgml_dtype dt) { return dt == WGML_F16 ? ldexp(1, -10) : dt == WGML_BF16 ? ldexp(1, -7) : 0; }

/* ------------------------------------------------------------ MOD */

/* numpy.remainder on float32 (numpy 2.4.6), written out: x just below a
 * multiple of y, x / y rounding to an integer, every sign combination,
 * y = +-0, x = +-inf, y = +-inf, NaN, huge ratios, subnormal operands and
 * results, and zero results (which take the divisor's sign). */
static const double mod_numpy_f32[][3] = {
    {0x1.333332p-2, 0x1.99999ap-4, 0x1.999994p-4},   /* 0.3 - ulp, 0.1 */
    {0x1.333334p-2, 0x1.99999ap-4, 0x1p-27},         /* x / y rounds to 3 */
    {0x1.333336p-2, 0x1.99999ap-4, 0x1.4p-25},
    {-0x1.333334p-2, 0x1.99999ap-4, 0x1.999998p-4},
    {0x1.333334p-2, -0x1.99999ap-4, -0x1.999998p-4},
    {-0x1.333334p-2, -0x1.99999ap-4, -0x1p-27},
    {0x1.bffffep+2, 0x1.666666p-1, 0x1.66665ap-1},   /* 7 - ulp, 0.7 */
    {-0x1.bffffep+2, 0x1.666666p-1, 0x1.8p-22},
    {0x1.fffffep-1, 0x1.99999ap-4, 0x1.999986p-4},   /* 1 - ulp, 0.1 */
    {0x1.5dfffep+9, 0x1.666666p-1, 0x1.665ff6p-1},   /* 700 - ulp, 0.7 */
    {-0x1.4484cp-100, 1, 1},                         /* r + y rounds to y */
    {0x1.4484cp-100, -1, -1},
    {-0x1.b38fb8p-127, 3, 3},                        /* subnormal x */
    {-4, 2, 0.0}, {4, -2, -0.0}, {-0.0, 2, 0.0}, {0.0, -2, -0.0}, {-0.0, -2, -0.0},
    {1, 0.0, NAN}, {1, -0.0, NAN}, {0.0, 0.0, NAN}, {INFINITY, 1, NAN}, {-INFINITY, -3, NAN},
    {INFINITY, INFINITY, NAN},
    {-1, INFINITY, INFINITY}, {1, INFINITY, 1}, {1, -INFINITY, -INFINITY}, {-1, -INFINITY, -1},
    {0.0, -INFINITY, -0.0},
    {NAN, 1, NAN}, {1, NAN, NAN}, {NAN, NAN, NAN},
    {0x1.93e594p+99, 3, 0.0}, {-0x1.93e594p+99, 3, 0.0},   /* 1e30 % 3 */
    {0x1.ff933cp+127, 0x1.b38fb8p-127, 0x1.6e4e4p-129},    /* ratio 2^254, subnormal y and result */
    {-0x1.ff933cp+127, 0x1.dc6534p-121, 0x1.d0298p-125},
    {0x1.fffffep+23, 3, 0.0},
    {0x1.2a05f2p+33, 0x1.99999ap-4, 0x1.6a0beep-4},        /* 1e10 % 0.1 */
    {-0x1.2a05f2p+33, 0x1.99999ap-4, 0x1.7c6d6p-7},
    {0x1.05564p-128, 0x1.5c73p-130, 0.0},                  /* subnormal x and y */
    {0x1.6p+2, 0x1.05564p-129, 0x1.3f97p-131},
};

static void t_mod_numpy_f32(void)
{
    enum { N = sizeof mod_numpy_f32 / sizeof *mod_numpy_f32 };
    double x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = mod_numpy_f32[i][0];
        y[i] = mod_numpy_f32[i][1];
    }
    double *got = binary_on(WGML_MOD, WGML_F32, N, x, y);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        double w = mod_numpy_f32[i][2];
        /* the table is numpy's; the library's CPU reference must agree too */
        CHECK(same(round_to(WGML_F32, wg_binary_ref(WGML_MOD, x[i], y[i], WGML_F32)), w, true),
              "reference MOD(%a, %a) = %a, numpy %a", x[i], y[i], wg_binary_ref(WGML_MOD, x[i], y[i], WGML_F32), w);
        if (!same(got[i], w, true) && bad++ < 6)
            printf("    MOD(%a, %a): got %a want %a\n", x[i], y[i], got[i], w);
    }
    CHECK(bad == 0, "MOD f32: %d of %d differ from numpy", bad, N);
    free(got);
}

/* x near k * y for many y and k, both signs, in every float dtype,
 * against the CPU reference (fmod in double, exact, then numpy's sign
 * rule; it matched numpy 2.4.6's float32 and float16 remainder on exactly
 * this family, 1404 and 708 cases, when this was written; numpy has no
 * bf16).  f32 results are exact; a 16-bit result is exact
 * too unless the f32 value needs rounding to 16 bits (r + y), where one
 * unit of that format is allowed (native f16 conversion may round either
 * way in WGSL). */
static void t_mod_boundaries(void)
{
    static const double ys[] = {0.1, 0.7, 3, 1e-3, 7.5, 1e5, 2.5e-5, 0.0625, 1.1};
    static const double ks[] = {1, 2, 3, 7, 10, 100, 1000, 4097, 1 << 20, 1 << 23, 3.0 * (1 << 24), 1e10, 1e30};
    enum { MAXN = 9 * 13 * 3 * 4 };
    static double x[MAXN], y[MAXN];
    for (size_t d = 0; d < 3; d++) {
        wgml_dtype dt = floats[d];
        int64_t n = 0;
        for (size_t i = 0; i < sizeof ys / sizeof *ys; i++)
            for (size_t k = 0; k < sizeof ks / sizeof *ks; k++) {
                double yy = round_to(dt, ys[i]), x0 = round_to(dt, ks[k] * yy);
                if (!isfinite(x0) || yy == 0)
                    continue;
                if (dt == WGML_F16 && yy < ldexp(1, -14))
                    continue; /* f16 subnormal inputs may be flushed on load */
                double up = next_in(dt, x0, 1), dn = next_in(dt, x0, -1);
                const double xs[3] = {dn, x0, up};
                for (int j = 0; j < 3; j++)
                    for (int s = 0; s < 4; s++) {
                        x[n] = s & 1 ? -xs[j] : xs[j];
                        y[n] = s & 2 ? -yy : yy;
                        n++;
                    }
            }
        double *got = binary_on(WGML_MOD, dt, n, x, y);
        int bad = 0;
        for (int64_t i = 0; i < n; i++) {
            double exact = wg_binary_ref(WGML_MOD, x[i], y[i], dt), w = round_to(dt, exact);
            bool ok = same(got[i], w, true) ||
                      (round_to(dt, (float)exact) != (float)exact && fabs(got[i] - w) <= unit_of(dt) * fabs(w));
            if (!ok && bad++ < 6)
                printf("    MOD %s (%a, %a): got %a want %a\n", wgml_dtype_name(dt), x[i], y[i], got[i], w);
        }
        CHECK(bad == 0, "MOD %s boundaries: %d of %lld wrong", wgml_dtype_name(dt), bad, (long long)n);
        free(got);
    }
}

/* ------------------------------------------------------------ NaN */

static void params_for(wgml_unary_op op, float *p0, float *p1)
{
    *p0 = op == WGML_CLAMP ? -1.5f : op == WGML_SCALE ? 1.75f : op == WGML_ELU ? 0.5f : 0.3f;
    *p1 = op == WGML_CLAMP ? 2.25f : -0.5f;
}

/* wgml.h: every float unary op maps NaN to NaN.  NaNs sit among finite
 * values so the vector path and the scalar tail both see them. */
static void t_nan_unary(void)
{
    static const double x[11] = {NAN, 0.5, -NAN, 2, NAN, -1, 3, -NAN, 0.25, 1, NAN};
    for (int op = 0; op < WGML_UNARY_COUNT; op++) {
        if (!((wg_unary_dtypes((wgml_unary_op)op) >> WGML_F32) & 1))
            continue;
        float p0, p1;
        params_for((wgml_unary_op)op, &p0, &p1);
        for (size_t d = 0; d < 3; d++) {
            double *got = unary_on((wgml_unary_op)op, floats[d], 11, x, p0, p1);
            int bad = 0;
            for (int i = 0; i < 11; i++)
                bad += isnan(x[i]) && !isnan(got[i]);
            CHECK(bad == 0, "%s(NaN) %s: got %g %g %g", wg_unary_name((wgml_unary_op)op), wgml_dtype_name(floats[d]),
                  got[0], got[2], got[4]);
            free(got);
        }
    }
}

/* The NaN rule of wgml.h for binary ops, written out independently of the
 * library: NaN, except POW(x, 0) = POW(1, y) = 1; comparisons false
 * except NE. */
static double nan_rule(wgml_binary_op op, double x, double y)
{
    if (op >= WGML_EQ)
        return op == WGML_NE;
    if (op == WGML_POW && (y == 0 || x == 1))
        return 1;
    return NAN;
}

static void t_nan_binary(void)
{
    static const double x[] = {NAN, 1, NAN, NAN, 0.0, NAN, INFINITY, 1, NAN, -NAN, 2.5, -0.0, NAN};
    static const double y[] = {1, NAN, NAN, 0.0, NAN, -INFINITY, NAN, NAN, -0.0, 2.5, -NAN, NAN, 1};
    enum { N = sizeof x / sizeof *x };
    for (int op = 0; op < WGML_BINARY_COUNT; op++) {
        if (!((wg_binary_dtypes((wgml_binary_op)op) >> WGML_F32) & 1))
            continue;
        for (size_t d = 0; d < 3; d++) {
            double *got = binary_on((wgml_binary_op)op, floats[d], N, x, y);
            int bad = 0;
            for (int i = 0; i < N; i++) {
                double w = nan_rule((wgml_binary_op)op, x[i], y[i]);
                CHECK(same(wg_binary_ref((wgml_binary_op)op, x[i], y[i], floats[d]), w, false),
                      "reference %s(%g, %g)", wg_binary_name((wgml_binary_op)op), x[i], y[i]);
                if (!same(got[i], w, false) && bad++ < 3)
                    printf("    %s %s (%g, %g): got %g want %g\n", wg_binary_name((wgml_binary_op)op),
                           wgml_dtype_name(floats[d]), x[i], y[i], got[i], w);
            }
            CHECK(bad == 0, "%s %s with NaN: %d wrong", wg_binary_name((wgml_binary_op)op), wgml_dtype_name(floats[d]),
                  bad);
            free(got);
        }
    }
}

/* where passes NaN through; fill and cast convert it: float NaN, int 0,
 * bool true. */
static void t_nan_where_fill_cast(void)
{
    static const double v[5] = {NAN, 1, -NAN, 2, NAN};
    static const double c[5] = {1, 0, 1, 1, 0};
    int64_t n = 5;
    for (size_t d = 0; d < 3; d++) {
        wgml_tensor *a = upload(floats[d], n, v, NULL), *b = upload(floats[d], n, v + 0, NULL);
        wgml_tensor *cond = upload(WGML_BOOL, n, c, NULL), *o = t_poisoned(floats[d], 1, &n);
        CHECK_OK(wgml_where(cond, a, b, o));
        double *got = t_values(o);
        for (int i = 0; i < 5; i++)
            CHECK(same(got[i], v[i], false), "where %s [%d]: %g", wgml_dtype_name(floats[d]), i, got[i]);
        free(got);
        for (size_t k = 0; k < NPLAIN; k++) {
            wgml_tensor *q = t_poisoned(plain[k], 1, &n);
            double w = wg_dtype_is_float(plain[k]) ? NAN : plain[k] == WGML_BOOL ? 1 : 0;
            CHECK_OK(wgml_cast(a, q));
            got = t_values(q);
            CHECK(same(got[0], w, false) && same(got[2], w, false), "cast %s NaN -> %s: %g",
                  wgml_dtype_name(floats[d]), wgml_dtype_name(plain[k]), got[0]);
            free(got);
            if (d == 0) {
                CHECK_OK(wgml_fill(q, NAN));
                got = t_values(q);
                CHECK(same(got[4], w, false), "fill %s NaN: %g", wgml_dtype_name(plain[k]), got[4]);
                free(got);
            }
            wgml_tensor_free(q);
        }
        wgml_tensor_free(a);
        wgml_tensor_free(b);
        wgml_tensor_free(cond);
        wgml_tensor_free(o);
    }
}

/* ------------------------------------------------------------ +-inf, domains */

typedef struct uval { wgml_unary_op op; double x, want; } uval;
/* Limits at +-inf and values at domain edges (wgml.h).  Params as
 * params_for: LEAKY_RELU slope 0.3, ELU alpha 0.5, CLAMP [-1.5, 2.25],
 * SCALE 1.75 x - 0.5. */
static const uval special[] = {
    {WGML_ABS, -INFINITY, INFINITY}, {WGML_NEG, INFINITY, -INFINITY}, {WGML_SIGN, -INFINITY, -1},
    {WGML_SIGN, INFINITY, 1}, {WGML_EXP, -INFINITY, 0}, {WGML_EXP, INFINITY, INFINITY},
    {WGML_EXPM1, -INFINITY, -1}, {WGML_EXPM1, INFINITY, INFINITY}, {WGML_LOG, INFINITY, INFINITY},
    {WGML_LOG, -INFINITY, NAN}, {WGML_LOG, 0.0, -INFINITY}, {WGML_LOG, -0.0, -INFINITY}, {WGML_LOG, -1, NAN},
    {WGML_LOG1P, INFINITY, INFINITY}, {WGML_LOG1P, -INFINITY, NAN}, {WGML_LOG1P, -1, -INFINITY},
    {WGML_LOG1P, -2, NAN}, {WGML_SQRT, INFINITY, INFINITY}, {WGML_SQRT, -INFINITY, NAN}, {WGML_SQRT, -1, NAN},
    {WGML_SQRT, 0.0, 0.0}, {WGML_RSQRT, INFINITY, 0}, {WGML_RSQRT, -INFINITY, NAN}, {WGML_RSQRT, 0.0, INFINITY},
    {WGML_RSQRT, -1, NAN}, {WGML_SQR, -INFINITY, INFINITY}, {WGML_SIN, INFINITY, NAN}, {WGML_SIN, -INFINITY, NAN},
    {WGML_COS, INFINITY, NAN}, {WGML_COS, -INFINITY, NAN}, {WGML_TANH, -INFINITY, -1}, {WGML_TANH, INFINITY, 1},
    {WGML_SIGMOID, -INFINITY, 0}, {WGML_SIGMOID, INFINITY, 1}, {WGML_RELU, -INFINITY, 0},
    {WGML_RELU, INFINITY, INFINITY}, {WGML_LEAKY_RELU, -INFINITY, -INFINITY}, {WGML_LEAKY_RELU, INFINITY, INFINITY},
    {WGML_ELU, -INFINITY, -0.5}, {WGML_ELU, INFINITY, INFINITY}, {WGML_SELU, -INFINITY, -1.7580993408473766},
    {WGML_SELU, INFINITY, INFINITY}, {WGML_GELU_ERF, -INFINITY, -0.0}, {WGML_GELU_ERF, INFINITY, INFINITY},
    {WGML_GELU_TANH, -INFINITY, -0.0}, {WGML_GELU_TANH, INFINITY, INFINITY}, {WGML_GELU_QUICK, -INFINITY, -0.0},
    {WGML_GELU_QUICK, INFINITY, INFINITY}, {WGML_SILU, -INFINITY, -0.0}, {WGML_SILU, INFINITY, INFINITY},
    {WGML_SOFTPLUS, -INFINITY, 0}, {WGML_SOFTPLUS, INFINITY, INFINITY}, {WGML_MISH, -INFINITY, -0.0},
    {WGML_MISH, INFINITY, INFINITY}, {WGML_HARDSWISH, -INFINITY, -0.0}, {WGML_HARDSWISH, INFINITY, INFINITY},
    {WGML_HARDSIGMOID, -INFINITY, 0}, {WGML_HARDSIGMOID, INFINITY, 1}, {WGML_STEP, -INFINITY, 0},
    {WGML_STEP, INFINITY, 1}, {WGML_CLAMP, -INFINITY, -1.5}, {WGML_CLAMP, INFINITY, 2.25},
    {WGML_FLOOR, -INFINITY, -INFINITY}, {WGML_CEIL, INFINITY, INFINITY}, {WGML_ROUND, -INFINITY, -INFINITY},
    {WGML_TRUNC, INFINITY, INFINITY}, {WGML_RECIPROCAL, INFINITY, 0}, {WGML_RECIPROCAL, -INFINITY, -0.0},
    {WGML_RECIPROCAL, 0.0, INFINITY}, {WGML_RECIPROCAL, -0.0, -INFINITY}, {WGML_ERF, -INFINITY, -1},
    {WGML_ERF, INFINITY, 1}, {WGML_SCALE, -INFINITY, -INFINITY}, {WGML_SCALE, INFINITY, INFINITY},
};

/* Each case runs as its own one-element op; a zero may come back with
 * either sign (WGSL lets implementations ignore the sign of zero). */
static void t_special_values(void)
{
    for (size_t d = 0; d < 3; d++) {
        int bad = 0;
        for (size_t i = 0; i < sizeof special / sizeof *special; i++) {
            const uval *u = &special[i];
            float p0, p1;
            params_for(u->op, &p0, &p1);
            double *got = unary_on(u->op, floats[d], 1, &u->x, p0, p1);
            double w = round_to(floats[d], u->want);
            CHECK(same(round_to(floats[d], wg_unary_ref(u->op, u->x, p0, p1, floats[d])), w, false),
                  "reference %s(%g) = %g, table %g", wg_unary_name(u->op), u->x,
                  wg_unary_ref(u->op, u->x, p0, p1, floats[d]), w);
            bool ok = same(got[0], w, false) ||
                      (isfinite(w) && fabs(got[0] - w) <= (1e-6 + unit_of(floats[d])) * fabs(w));
            if (!ok && bad++ < 8)
                printf("    %s %s(%g): got %g want %g\n", wgml_dtype_name(floats[d]), wg_unary_name(u->op), u->x,
                       got[0], w);
            free(got);
        }
        /* binary: POW at |x| = 1 and MAX/MIN with infinities */
        static const double bx[] = {1, 1, -1, -1, -INFINITY, INFINITY, INFINITY};
        static const double by[] = {INFINITY, -INFINITY, INFINITY, -INFINITY, 1, 1, -INFINITY};
        static const wgml_binary_op bop[] = {WGML_POW, WGML_POW, WGML_POW, WGML_POW, WGML_MAX, WGML_MIN, WGML_MAX};
        static const double bw[] = {1, 1, 1, 1, 1, 1, INFINITY};
        for (int i = 0; i < 7; i++) {
            double *got = binary_on(bop[i], floats[d], 1, &bx[i], &by[i]);
            CHECK(same(wg_binary_ref(bop[i], bx[i], by[i], floats[d]), bw[i], false), "reference %s",
                  wg_binary_name(bop[i]));
            if (!same(got[0], bw[i], false) && bad++ < 8)
                printf("    %s %s(%g, %g): got %g want %g\n", wgml_dtype_name(floats[d]), wg_binary_name(bop[i]), bx[i],
                       by[i], got[0], bw[i]);
            free(got);
        }
        CHECK(bad == 0, "%s: %d special values wrong", wgml_dtype_name(floats[d]), bad);
    }
}

/* ------------------------------------------------------------ tails */

/* Ops whose float result is exact (no rounding): compared exactly. */
static bool exact_op(wgml_unary_op op)
{
    switch (op) {
    case WGML_ABS: case WGML_NEG: case WGML_SIGN: case WGML_RELU: case WGML_STEP: case WGML_CLAMP: case WGML_FLOOR:
    case WGML_CEIL: case WGML_ROUND: case WGML_TRUNC:
        return true;
    default:
        return false;
    }
}

/* cond(x) = |x f'(x) / f(x)|: the relative change of the result per
 * relative change of x, from the double reference (central difference). */
static double cond_at(wgml_unary_op op, double x, float p0, float p1)
{
    double f = wg_unary_ref(op, x, p0, p1, WGML_F32);
    if (f == 0 || !isfinite(f) || !isfinite(x) || x == 0)
        return 0;
    double h = ldexp(1, -20);
    double d = wg_unary_ref(op, x * (1 + h), p0, p1, WGML_F32) - wg_unary_ref(op, x * (1 - h), p0, p1, WGML_F32);
    return isfinite(d) ? fabs(d / (2 * h * f)) : 0;
}

/*
 * Activation tails at relative accuracy.  An f32 result passes when
 *     |got - want| <= (A + B cond(x)) 2^-23 |want|,   A = 16, B = 4,
 * (2^-23 bounds one ulp relative).  A covers the roundings that do not
 * grow with x: WGSL's exp (3 ulp), a division (2.5 ulp), the erfc fit
 * (2 ulp), tanh's polynomial (1 ulp) and up to eight more roundings of
 * half an ulp.  B covers the errors that grow with the exponent: WGSL
 * specifies exp(z) to 3 + 2|z| ulp, which acts like perturbing z by 2 ulp,
 * and the argument z (x, 1.702x, 2u(x), -x^2/2) is itself rounded (up to
 * 2 ulp); for every op here |z| <= cond(x), so both stay under 4 cond(x)
 * ulps.  16-bit outputs add one unit of their format (the f32 result may
 * round the other way than the double).  LOG near 1 is held to WGSL's
 * absolute 2^-21 there.  Results below the smallest normal number of the
 * output (f32 and bf16 2^-126, f16 2^-14) may also be 0 of the right sign:
 * devices may flush subnormals (NVIDIA's exp does), and nowhere else.
 */
static void t_tails(void)
{
    static const double grid[] = {-1e30, -1e10, -60000, -1000, -100, -95, -91, -89, -87.33, -85, -60, -52, -40,
                                  -20, -13, -12, -10, -9, -5, -3, -2.5, -1, -0.5, -0.1, -1e-3, -1e-6, -1e-20,
                                  0, 1e-20, 1e-6, 1e-3, 0.1, 0.5, 0.75, 1, 2, 3, 5, 9, 10, 13, 20, 40, 87,
                                  89, 100, 1000, 60000, 1e10, 1e30};
    enum { N = sizeof grid / sizeof *grid };
    const double A = 16, B = 4;
    for (int op = 0; op < WGML_UNARY_COUNT; op++) {
        wgml_unary_op o = (wgml_unary_op)op;
        if (!((wg_unary_dtypes(o) >> WGML_F32) & 1) || o == WGML_SIN || o == WGML_COS)
            continue; /* WGSL specifies sin/cos only absolutely on [-pi, pi] */
        float p0, p1;
        params_for(o, &p0, &p1);
        for (size_t d = 0; d < 3; d++) {
            wgml_dtype dt = floats[d];
            double x[N];
            int64_t n = 0;
            for (int i = 0; i < N; i++) {
                double v = round_to(dt, grid[i]);
                /* f16 subnormal inputs may be flushed on load: not a tail case */
                if (dt == WGML_F16 && v != 0 && fabs(v) < ldexp(1, -14))
                    continue;
                x[n++] = v;
            }
            double *got = unary_on(o, dt, n, x, p0, p1);
            double min_normal = dt == WGML_F16 ? ldexp(1, -14) : ldexp(1, -126);
            double sub_ulp = dt == WGML_F16 ? ldexp(1, -24) : dt == WGML_BF16 ? ldexp(1, -133) : ldexp(1, -149);
            int bad = 0;
            double worst = 0;
            for (int64_t i = 0; i < n; i++) {
                double exact = wg_unary_ref(o, x[i], p0, p1, dt), w = round_to(dt, exact), g = got[i];
                double rtol = exact_op(o) ? 0 : (A + B * cond_at(o, x[i], p0, p1)) * ldexp(1, -23) + unit_of(dt);
                double atol = exact_op(o) ? 0 : 2 * sub_ulp;
                if (o == WGML_LOG && x[i] >= 0.5 && x[i] <= 2)
                    atol += ldexp(1, -21);
                bool ok = same(g, w, false) || (isfinite(w) && fabs(g - w) <= atol + rtol * fabs(w));
                if (!ok && fabs(w) < min_normal && g == 0)
                    ok = exact_op(o) || signbit(g) == signbit(exact); /* flushed: right sign */
                if (isfinite(w) && w != 0 && rtol > 0 && fabs(w) >= min_normal)
                    worst = fmax(worst, fabs(g - w) / (rtol * fabs(w)));
                if (!ok && bad++ < 4)
                    printf("    %s %s(%.9g): got %.9g want %.9g (rtol %.2g)\n", wgml_dtype_name(dt), wg_unary_name(o),
                           x[i], g, w, rtol);
            }
            if (dt == WGML_F32 && !exact_op(o))
                printf("    tails %-11s f32: worst error %.3f of the allowed\n", wg_unary_name(o), worst);
            CHECK(bad == 0, "%s %s tails: %d wrong", wg_unary_name(o), wgml_dtype_name(dt), bad);
            free(got);
        }
    }
}

/* ------------------------------------------------------------ integers */

/* wgml.h: integer SCALE is f32(x) * p0 + p1 in f32, then converted like
 * wgml_cast (truncate toward zero, saturate, NaN -> 0).  The values are
 * chosen so the f32 arithmetic is exact: whether the driver fuses the
 * multiply-add cannot change them. */
typedef struct iscale { wgml_dtype dt; double x; float p0, p1; double want; } iscale;
static const iscale scale_cases[] = {
    {WGML_I8, 3, 1.75f, -0.5f, 4},        {WGML_I8, -3, 1.75f, -0.5f, -5},    /* 4.75, -5.75: toward 0 */
    {WGML_I8, 100, 3, 0, 127},            {WGML_I8, -100, 3, 0, -128},        /* saturate, not wrap */
    {WGML_I8, 127, 1, 0.5f, 127},         {WGML_I8, -128, -1, 0, 127},
    {WGML_I8, 5, NAN, 0, 0},              {WGML_I8, 5, INFINITY, 0, 127},     {WGML_I8, 0, INFINITY, 0, 0},
    {WGML_I8, -7, 0.5f, 0.25f, -3},       {WGML_I32, 7, 0.5f, 0.25f, 3},
    {WGML_I32, 16777217, 1, 0, 16777216}, /* x rounds to f32 first */
    {WGML_I32, 2147483647, 1, 0, 2147483647}, {WGML_I32, -2147483647 - 1, 1, 0, -2147483647 - 1},
    {WGML_I32, 1000000, 1e10f, 0, 2147483647}, {WGML_I32, -3, 1e10f, -1, -2147483647 - 1},
    {WGML_I32, 12345, -2, 1, -24689},     {WGML_I32, 9, NAN, 1, 0},
};

static void t_int_scale(void)
{
    for (size_t i = 0; i < sizeof scale_cases / sizeof *scale_cases; i++) {
        const iscale *c = &scale_cases[i];
        double *got = unary_on(WGML_SCALE, c->dt, 1, &c->x, c->p0, c->p1);
        CHECK(got[0] == c->want, "SCALE %s %g * %g + %g: got %g want %g", wgml_dtype_name(c->dt), c->x, c->p0, c->p1,
              got[0], c->want);
        CHECK(wg_unary_ref(WGML_SCALE, c->x, c->p0, c->p1, c->dt) == c->want, "reference SCALE %s %g",
              wgml_dtype_name(c->dt), c->x);
        free(got);
    }
    /* the other integer ops wrap modulo 2^bits; CLAMP bounds convert like casts */
    static const struct { wgml_unary_op op; wgml_dtype dt; double x; float p0, p1; double want; } wrap[] = {
        {WGML_ABS, WGML_I8, -128, 0, 0, -128}, {WGML_NEG, WGML_I8, -128, 0, 0, -128},
        {WGML_SQR, WGML_I8, 100, 0, 0, 16}, {WGML_SQR, WGML_I8, -12, 0, 0, -112},
        {WGML_ABS, WGML_I32, -2147483647 - 1, 0, 0, -2147483647 - 1},
        {WGML_NEG, WGML_I32, -2147483647 - 1, 0, 0, -2147483647 - 1}, {WGML_SQR, WGML_I32, 65536, 0, 0, 0},
        {WGML_SIGN, WGML_I8, -7, 0, 0, -1}, {WGML_RELU, WGML_I32, -7, 0, 0, 0},
        {WGML_CLAMP, WGML_I32, 2000000000, -1e10f, 1e10f, 2000000000}, {WGML_CLAMP, WGML_I8, -9, NAN, 5.9f, 0},
        {WGML_CLAMP, WGML_I8, 9, -2.9f, 5.9f, 5}, {WGML_CLAMP, WGML_I8, -9, -2.9f, 5.9f, -2},
    };
    for (size_t i = 0; i < sizeof wrap / sizeof *wrap; i++) {
        double *got = unary_on(wrap[i].op, wrap[i].dt, 1, &wrap[i].x, wrap[i].p0, wrap[i].p1);
        CHECK(got[0] == wrap[i].want, "%s %s(%g): got %g want %g", wg_unary_name(wrap[i].op),
              wgml_dtype_name(wrap[i].dt), wrap[i].x, got[0], wrap[i].want);
        CHECK(wg_unary_ref(wrap[i].op, wrap[i].x, wrap[i].p0, wrap[i].p1, wrap[i].dt) == wrap[i].want, "reference %s",
              wg_unary_name(wrap[i].op));
        free(got);
    }
}

/* The dtype claims of wgml.h, written out: the registry (what `wgml ops`
 * prints) and the ops themselves must agree with them. */
static uint32_t claimed_unary(wgml_unary_op op)
{
    uint32_t fl = 1u << WGML_F32 | 1u << WGML_F16 | 1u << WGML_BF16, si = 1u << WGML_I32 | 1u << WGML_I8;
    switch (op) {
    case WGML_ABS: case WGML_NEG: case WGML_SIGN: case WGML_SQR: case WGML_CLAMP: case WGML_SCALE: case WGML_RELU:
        return fl | si;
    case WGML_NOT:
        return si | 1u << WGML_U32 | 1u << WGML_U8 | 1u << WGML_BOOL;
    default:
        return fl;
    }
}

static uint32_t claimed_binary(wgml_binary_op op)
{
    uint32_t ints = 1u << WGML_I32 | 1u << WGML_U32 | 1u << WGML_I8 | 1u << WGML_U8;
    uint32_t fl = 1u << WGML_F32 | 1u << WGML_F16 | 1u << WGML_BF16;
    if (op == WGML_AND || op == WGML_OR || op == WGML_XOR)
        return ints | 1u << WGML_BOOL;
    if (op >= WGML_EQ)
        return fl | ints | 1u << WGML_BOOL;
    return fl | ints;
}

static const wgml_op_info *registry_row(const char *family, const char *name)
{
    for (size_t i = 0; i < wgml_op_count(); i++) {
        const wgml_op_info *r = wgml_op_get(i);
        if (strcmp(r->family, family) == 0 && strcmp(r->name, name) == 0)
            return r;
    }
    return NULL;
}

static void t_dtype_claims(void)
{
    int64_t n = 3;
    for (int op = 0; op < WGML_UNARY_COUNT; op++) {
        wgml_unary_op o = (wgml_unary_op)op;
        const wgml_op_info *r = registry_row("unary", wg_unary_name(o));
        CHECK(r && r->dtypes == claimed_unary(o), "registry %s: %#x, wgml.h says %#x", wg_unary_name(o),
              r ? r->dtypes : 0, claimed_unary(o));
        for (size_t d = 0; d < NPLAIN; d++) {
            wgml_tensor *x = NULL, *y = NULL;
            CHECK_OK(wgml_tensor_new(t_ctx, plain[d], 1, &n, &x));
            CHECK_OK(wgml_tensor_new(t_ctx, plain[d], 1, &n, &y));
            bool claim = (claimed_unary(o) >> plain[d]) & 1;
            wgml_status st = wgml_unary(o, x, y, 1, 2);
            CHECK(st == (claim ? WGML_OK : WGML_ERR_DTYPE), "%s on %s: %s (wgml.h: %s)", wg_unary_name(o),
                  wgml_dtype_name(plain[d]), wgml_status_name(st), claim ? "supported" : "not supported");
            wgml_tensor_free(x);
            wgml_tensor_free(y);
        }
    }
    for (int op = 0; op < WGML_BINARY_COUNT; op++) {
        wgml_binary_op o = (wgml_binary_op)op;
        const wgml_op_info *r = registry_row("binary", wg_binary_name(o));
        CHECK(r && r->dtypes == claimed_binary(o), "registry %s: %#x, wgml.h says %#x", wg_binary_name(o),
              r ? r->dtypes : 0, claimed_binary(o));
        for (size_t d = 0; d < NPLAIN; d++) {
            wgml_tensor *x = NULL, *y = NULL;
            CHECK_OK(wgml_tensor_new(t_ctx, plain[d], 1, &n, &x));
            CHECK_OK(wgml_tensor_new(t_ctx, o >= WGML_EQ ? WGML_BOOL : plain[d], 1, &n, &y));
            bool claim = (claimed_binary(o) >> plain[d]) & 1;
            wgml_status st = wgml_binary(o, x, x, y);
            CHECK(st == (claim ? WGML_OK : WGML_ERR_DTYPE), "%s on %s: %s", wg_binary_name(o),
                  wgml_dtype_name(plain[d]), wgml_status_name(st));
            wgml_tensor_free(x);
            wgml_tensor_free(y);
        }
    }
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"mod_f32_against_numpy", t_mod_numpy_f32},
        {"mod_boundaries_every_float_dtype", t_mod_boundaries},
        {"nan_every_unary_op", t_nan_unary},
        {"nan_every_binary_op", t_nan_binary},
        {"nan_where_fill_cast", t_nan_where_fill_cast},
        {"inf_and_domain_edges", t_special_values},
        {"activation_tails_relative", t_tails},
        {"integer_scale_and_wrap", t_int_scale},
        {"dtype_claims_of_wgml_h", t_dtype_claims},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
