/* Elementwise family against its CPU reference: every unary and binary op
 * on every dtype it supports, over odd sizes, one element, zero-size,
 * broadcasting and non-contiguous views; plus cast between every pair of
 * plain dtypes, fill, where, views, and the error paths. */
#include "op_harness.h"
#include "ops/elementwise.h"

static const wgml_dtype plain[] = {WGML_F32, WGML_F16, WGML_BF16, WGML_I32, WGML_U32, WGML_I8, WGML_U8, WGML_BOOL};
#define NPLAIN (sizeof plain / sizeof *plain)

/* Input range and kernel tolerance (f32) per unary op. */
static void unary_domain(wgml_unary_op op, double *lo, double *hi, double *rtol, double *atol)
{
    *lo = -4;
    *hi = 4;
    *rtol = 4e-7;
    *atol = 1e-7;
    switch (op) {
    case WGML_LOG: case WGML_SQRT: case WGML_RSQRT: *lo = 0.01; *hi = 50; *rtol = 2e-6; break;
    /* log1p and expm1 are relative to their (small) results: see t_small */
    case WGML_LOG1P: *lo = -0.9; *hi = 5; *rtol = 2e-6; *atol = 1e-30; break;
    case WGML_EXPM1: *rtol = 4e-6; *atol = 1e-30; break;
    case WGML_EXP: *rtol = 4e-6; *atol = 1e-6; break;
    /* WGSL specifies sin/cos only to 2^-11 absolute on [-pi, pi]. */
    case WGML_SIN: case WGML_COS: *lo = -3.1; *hi = 3.1; *rtol = 0; *atol = 5e-4; break;
    case WGML_RECIPROCAL: *lo = 0.1; *hi = 10; *rtol = 1e-6; break;
    case WGML_TANH: case WGML_SIGMOID: case WGML_SILU: case WGML_GELU_TANH: case WGML_GELU_QUICK:
    case WGML_SOFTPLUS: case WGML_MISH: case WGML_ELU: case WGML_SELU:
        *lo = -10; *hi = 10; *rtol = 1e-5; *atol = 2e-6; break;
    case WGML_GELU_ERF: case WGML_ERF: *lo = -5; *hi = 5; *rtol = 2e-6; *atol = 3e-7; break;
    default: break;
    }
}

static bool has(uint32_t mask, wgml_dtype t) { return (mask >> t) & 1; }

/* small: inputs in [-1e-3, 1e-3] instead of the op's domain. */
static void check_unary(wgml_unary_op op, wgml_dtype dt, int ndim, const int64_t *shape, int layout, bool small)
{
    double lo, hi, rtol, atol;
    unary_domain(op, &lo, &hi, &rtol, &atol);
    if (small) {
        lo = -1e-3;
        hi = 1e-3;
    }
    if (!wg_dtype_is_float(dt)) {
        lo = dt == WGML_U8 || dt == WGML_U32 || dt == WGML_BOOL ? 0 : -100;
        hi = 100;
    }
    float p0 = op == WGML_CLAMP ? -1.5f : op == WGML_SCALE ? 1.75f : 0.3f, p1 = op == WGML_CLAMP ? 2.25f : -0.5f;
    if (op == WGML_CLAMP && !wg_dtype_is_float(dt)) {
        p0 = -20;
        p1 = 35;
    }
    /* layout 1: the input is a transposed view of a contiguous tensor. */
    t_tensor x = {0};
    wgml_tensor *xv = NULL;
    int64_t tshape[4];
    memcpy(tshape, shape, sizeof(int64_t) * (size_t)ndim);
    if (layout == 1 && ndim >= 2) {
        tshape[ndim - 1] = shape[ndim - 2];
        tshape[ndim - 2] = shape[ndim - 1];
    }
    x = t_random(dt, ndim, tshape, lo, hi);
    if (!x.t)
        return;
    if (layout == 1 && ndim >= 2)
        CHECK_OK(wgml_view_transpose(x.t, -1, -2, &xv));
    else
        CHECK_OK(wgml_view_reshape(x.t, ndim, shape, &xv));
    wgml_tensor *o = t_poisoned(dt, ndim, shape);
    wgml_status st = wgml_unary(op, xv, o, p0, p1);
    CHECK(st == WGML_OK, "%s %s: %s", wg_unary_name(op), wgml_dtype_name(dt), wgml_last_error());
    int64_t n = wgml_tensor_nelem(o);
    double *want = malloc(sizeof(double) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        int64_t src = i;
        if (layout == 1 && ndim >= 2) { /* element (.., r, c) of the view is (.., c, r) of x */
            int64_t R = shape[ndim - 2], C = shape[ndim - 1], m = i / (R * C), r = (i / C) % R, c = i % C;
            src = m * R * C + c * R + r;
        }
        want[i] = wg_unary_ref(op, x.val[src], p0, p1, dt);
    }
    double *got = t_values(o);
    char what[64];
    snprintf(what, sizeof what, "%s/%s/layout%d", wg_unary_name(op), wgml_dtype_name(dt), layout);
    CHECK(t_compare(what, dt, got, want, n, rtol, atol) == 0, "%s", what);
    free(got);
    free(want);
    wgml_tensor_free(o);
    wgml_tensor_free(xv);
    t_free(&x);
}

/* Which (op, dtype) pairs run the strided case.  Each pair compiles its
 * own kernels (contiguous and strided variants), and lavapipe's compiles
 * were nearly all of this test's time (unary and binary: ~490 kernels,
 * 150-180 s on a fresh cache, 4-5 s warm).  The strided variant differs
 * from the contiguous one only in its index arithmetic and its load and
 * store (ew_common.wgsl, the #tensor accessors), which depend on the
 * dtype and not on the op, so CI runs every pair contiguous and each op
 * strided on the dtypes the ops before it left without a strided run
 * (*done), or where none is left, on one by rotation (the op's index
 * modulo its dtype count); the callers check that every plain dtype ran
 * strided.  WGML_TEST_FULL=1 runs every pair in every layout. */
static uint32_t strided_dtypes(int op, uint32_t dtypes, uint32_t *done)
{
    uint32_t left = dtypes & ~*done & ((1u << 31) - 1);
    if (getenv("WGML_TEST_FULL"))
        left = dtypes;
    if (!left) {
        int n = 0, k;
        for (size_t d = 0; d < NPLAIN; d++)
            n += has(dtypes, plain[d]);
        k = n ? op % n : 0;
        for (size_t d = 0; d < NPLAIN && !left; d++)
            if (has(dtypes, plain[d]) && k-- == 0)
                left = 1u << plain[d];
    }
    *done |= left;
    return left;
}

static void t_unary_all(void)
{
    const int64_t s1[1] = {1}, s7[1] = {1031}, s3[3] = {3, 5, 17}, s0[2] = {0, 5};
    uint32_t strided = 0;
    for (int op = 0; op < WGML_UNARY_COUNT; op++) {
        uint32_t dts = wg_unary_dtypes((wgml_unary_op)op);
        uint32_t sdt = strided_dtypes(op, dts, &strided);
        for (size_t d = 0; d < NPLAIN; d++) {
            if (!has(dts, plain[d]))
                continue;
            check_unary((wgml_unary_op)op, plain[d], 1, s7, 0, false);
            if (has(sdt, plain[d]))
                check_unary((wgml_unary_op)op, plain[d], 3, s3, 1, false);
            check_unary((wgml_unary_op)op, plain[d], 1, s1, 0, false);
            check_unary((wgml_unary_op)op, plain[d], 2, s0, 0, false);
        }
    }
    for (size_t d = 0; d < NPLAIN; d++)
        CHECK(has(strided, plain[d]), "no unary op ran strided on %s", wgml_dtype_name(plain[d]));
    /* Functions of tiny results, held to relative accuracy: WGSL's log and
     * exp near 1 are only absolutely accurate, so log(1 + x) and exp(x) - 1
     * would fail here (an H100 was 2.6e-4 relative off at 4.5e-4). */
    check_unary(WGML_LOG1P, WGML_F32, 1, s7, 0, true);
    check_unary(WGML_EXPM1, WGML_F32, 1, s7, 0, true);
}

/* Float MOD is exact (wgml.h; the boundary cases are in
 * test_op_elementwise_edges.c): no tolerance. */
static double binary_atol(wgml_binary_op op) { return op == WGML_MOD ? 0 : 1e-30; }

static void binary_domain(wgml_binary_op op, wgml_dtype dt, double *lo, double *hi, double *rtol)
{
    *lo = -8;
    *hi = 8;
    *rtol = 2e-7;
    if (op == WGML_POW) {
        *lo = wg_dtype_is_float(dt) ? 0.1 : 0;
        *hi = wg_dtype_is_float(dt) ? 3 : 6;
        *rtol = 4e-6;
    }
    if (op == WGML_DIV)
        *rtol = 1e-6;
    if (op == WGML_MOD)
        *rtol = 0;
    if (dt == WGML_U8 || dt == WGML_U32 || dt == WGML_BOOL) {
        *lo = 0;
        *hi = op == WGML_POW ? 6 : 200;
    }
}

/* a [shape_a], b [shape_b] broadcasting; layout 1 makes b a strided view. */
static void check_binary(wgml_binary_op op, wgml_dtype dt, int na, const int64_t *sa, int nb, const int64_t *sb,
                         int layout)
{
    double lo, hi, rtol;
    binary_domain(op, dt, &lo, &hi, &rtol);
    t_tensor a = t_random(dt, na, sa, lo, hi);
    t_tensor bb = {0};
    wgml_tensor *bview = NULL;
    if (layout == 1) { /* b = every other element of a twice-as-wide tensor */
        int64_t wide[4];
        memcpy(wide, sb, sizeof(int64_t) * (size_t)nb);
        wide[nb - 1] *= 2;
        bb = t_random(dt, nb, wide, lo, hi);
        CHECK_OK(wgml_view_slice(bb.t, -1, 1, wide[nb - 1], 2, &bview));
    } else {
        bb = t_random(dt, nb, sb, lo, hi);
        CHECK_OK(wgml_view_reshape(bb.t, nb, sb, &bview));
    }
    if (!a.t || !bview)
        return;
    int nd;
    int64_t shape[4], iter[4];
    CHECK(wg_broadcast_shapes(a.t, bview, &nd, shape), "shapes");
    bool cmp = op >= WGML_EQ;
    wgml_tensor *o = t_poisoned(cmp ? WGML_BOOL : dt, nd, shape);
    wgml_status st = wgml_binary(op, a.t, bview, o);
    CHECK(st == WGML_OK, "%s %s: %s", wg_binary_name(op), wgml_dtype_name(dt), wgml_last_error());
    wg_shape4(o, iter);
    int64_t n = wgml_tensor_nelem(o);
    double *want = malloc(sizeof(double) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        double x = a.val[t_bcast_index(na, sa, iter, i)];
        int64_t jb = t_bcast_index(nb, sb, iter, i);
        double y = layout == 1 ? bb.val[2 * jb + 1] : bb.val[jb];
        want[i] = wg_binary_ref(op, x, y, dt);
    }
    double *got = t_values(o);
    char what[64];
    snprintf(what, sizeof what, "%s/%s/layout%d", wg_binary_name(op), wgml_dtype_name(dt), layout);
    CHECK(t_compare(what, cmp ? WGML_BOOL : dt, got, want, n, rtol, binary_atol(op)) == 0, "%s", what);
    free(got);
    free(want);
    wgml_tensor_free(o);
    wgml_tensor_free(bview);
    t_free(&a);
    t_free(&bb);
}

/* Every (op, dtype) pair contiguous at an odd size and at one element,
 * and zero-size with broadcasting; broadcasting both ways and a strided
 * view (the strided kernel variant) for the pairs strided_dtypes picks. */
static void t_binary_all(void)
{
    const int64_t a1[3] = {4, 1, 33}, b1[2] = {7, 33};   /* broadcast both ways */
    const int64_t a2[1] = {1000}, b2[1] = {1000};
    const int64_t a3[2] = {1, 1}, b3[2] = {1, 1};
    const int64_t a4[2] = {0, 3}, b4[1] = {3};
    const int64_t a5[1] = {1031};
    uint32_t strided = 0;
    for (int op = 0; op < WGML_BINARY_COUNT; op++) {
        uint32_t dts = wg_binary_dtypes((wgml_binary_op)op);
        uint32_t sdt = strided_dtypes(op, dts, &strided);
        for (size_t d = 0; d < NPLAIN; d++) {
            if (!has(dts, plain[d]))
                continue;
            if (has(sdt, plain[d])) {
                check_binary((wgml_binary_op)op, plain[d], 3, a1, 2, b1, 0);
                check_binary((wgml_binary_op)op, plain[d], 1, a2, 1, b2, 1);
            }
            check_binary((wgml_binary_op)op, plain[d], 1, a5, 1, a5, 0);
            check_binary((wgml_binary_op)op, plain[d], 2, a3, 2, b3, 0);
            check_binary((wgml_binary_op)op, plain[d], 2, a4, 1, b4, 0);
        }
    }
    for (size_t d = 0; d < NPLAIN; d++)
        CHECK(has(strided, plain[d]), "no binary op ran strided on %s", wgml_dtype_name(plain[d]));
}

static void t_cast_all_pairs(void)
{
    const int64_t shape[2] = {3, 301};
    for (size_t i = 0; i < NPLAIN; i++)
        for (size_t j = 0; j < NPLAIN; j++) {
            wgml_dtype from = plain[i], to = plain[j];
            /* floats include out-of-range values to test saturation */
            double lo = wg_dtype_is_float(from) ? -70000 : -300, hi = wg_dtype_is_float(from) ? 70000 : 300;
            if (from == WGML_F32 && (to == WGML_I32 || to == WGML_U32)) {
                lo = -5e9;
                hi = 5e9;
            }
            t_tensor x = t_random(from, 2, shape, lo, hi);
            wgml_tensor *o = t_poisoned(to, 2, shape);
            CHECK_OK(wgml_cast(x.t, o));
            double *want = malloc(sizeof(double) * (size_t)x.n);
            for (int64_t k = 0; k < x.n; k++)
                want[k] = wg_cast_ref(x.val[k], from, to);
            double *got = t_values(o);
            char what[48];
            snprintf(what, sizeof what, "cast %s->%s", wgml_dtype_name(from), wgml_dtype_name(to));
            CHECK(t_compare(what, to, got, want, x.n, 0, 0) == 0, "%s", what);
            free(want);
            free(got);
            wgml_tensor_free(o);
            t_free(&x);
        }
}

/* Copy into a view ("set"), materialise a permuted view ("contiguous"). */
static void t_copy_views(void)
{
    const int64_t s[3] = {5, 6, 7};
    for (size_t d = 0; d < NPLAIN; d++) {
        t_tensor x = t_random(plain[d], 3, s, -50, 50);
        wgml_tensor *pv = NULL, *o = NULL;
        int perm[3] = {2, 0, 1};
        CHECK_OK(wgml_view_permute(x.t, perm, &pv));
        const int64_t ps[3] = {7, 5, 6};
        o = t_poisoned(plain[d], 3, ps);
        CHECK_OK(wgml_copy(pv, o));
        double *got = t_values(o);
        int bad = 0;
        for (int64_t i = 0; i < 7; i++)
            for (int64_t j = 0; j < 5; j++)
                for (int64_t k = 0; k < 6; k++)
                    bad += got[(i * 5 + j) * 6 + k] != x.val[(j * 6 + k) * 7 + i];
        CHECK(bad == 0, "permuted copy %s: %d wrong", wgml_dtype_name(plain[d]), bad);
        free(got);
        /* write ones into a slice view of o and read the whole back */
        wgml_tensor *sl = NULL;
        CHECK_OK(wgml_view_slice(o, 1, 1, 5, 3, &sl)); /* rows 1 and 4 of dim 1 */
        if (sl) {
            CHECK_OK(wgml_fill(sl, 1));
            got = t_values(o);
            bad = 0;
            for (int64_t i = 0; i < 7; i++)
                for (int64_t j = 0; j < 5; j++)
                    for (int64_t k = 0; k < 6; k++) {
                        double w = (j == 1 || j == 4) ? 1 : x.val[(j * 6 + k) * 7 + i];
                        bad += got[(i * 5 + j) * 6 + k] != w;
                    }
            CHECK(bad == 0, "fill into a slice %s: %d wrong", wgml_dtype_name(plain[d]), bad);
            free(got);
        }
        /* upload through a view, download through the same view */
        if (sl) {
            int64_t n = wgml_tensor_nelem(sl);
            size_t bytes = wgml_tensor_nbytes(sl);
            uint8_t *h = malloc(bytes), *back = malloc(bytes);
            for (size_t i = 0; i < bytes; i++)
                h[i] = (uint8_t)t_rand();
            if (plain[d] == WGML_BOOL)
                for (size_t i = 0; i < bytes; i++)
                    h[i] &= 1;
            if (plain[d] == WGML_F16 || plain[d] == WGML_BF16 || plain[d] == WGML_F32)
                for (int64_t i = 0; i < n; i++)
                    wg_host_set(plain[d], h, (size_t)i, t_uniform(-9, 9));
            CHECK_OK(wgml_tensor_upload(sl, h, bytes));
            CHECK_OK(wgml_tensor_download(sl, back, bytes));
            CHECK(memcmp(h, back, bytes) == 0, "view upload/download %s", wgml_dtype_name(plain[d]));
            free(h);
            free(back);
        }
        wgml_tensor_free(sl);
        wgml_tensor_free(o);
        wgml_tensor_free(pv);
        t_free(&x);
    }
}

static void t_where_fill(void)
{
    const int64_t sc[2] = {9, 1}, sa[2] = {9, 13}, sb[1] = {13};
    for (size_t d = 0; d < NPLAIN; d++) {
        t_tensor c = t_random(WGML_BOOL, 2, sc, 0, 1), a = t_random(plain[d], 2, sa, -9, 9),
                 b = t_random(plain[d], 1, sb, -9, 9);
        wgml_tensor *o = t_poisoned(plain[d], 2, sa);
        CHECK_OK(wgml_where(c.t, a.t, b.t, o));
        double *got = t_values(o);
        int bad = 0;
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 13; j++)
                bad += got[i * 13 + j] != (c.val[i] != 0 ? a.val[i * 13 + j] : b.val[j]);
        CHECK(bad == 0, "where %s: %d wrong", wgml_dtype_name(plain[d]), bad);
        free(got);
        double v = plain[d] == WGML_BOOL ? 1 : plain[d] == WGML_U8 || plain[d] == WGML_U32 ? 200 : -3.25;
        CHECK_OK(wgml_fill(o, v));
        got = t_values(o);
        bad = 0;
        for (int i = 0; i < 9 * 13; i++)
            bad += got[i] != wg_cast_ref(v, WGML_F32, plain[d]);
        CHECK(bad == 0, "fill %s: %d wrong", wgml_dtype_name(plain[d]), bad);
        free(got);
        wgml_tensor_free(o);
        t_free(&c);
        t_free(&a);
        t_free(&b);
    }
}

/* Above 2^24 elements; on lavapipe (128 MiB bindings) the 48M-float
 * tensors also exceed one binding and are split (a row of 2^24 + 5 floats
 * a block: 16,384 workgroups; 49,152 unsplit: grids above 65,535
 * workgroups are the _fold runs' part, WGML_FOLD_GRID=7).  The host side
 * stays in f32 (t_random's doubles and t_values' conversions of 150M
 * elements took 7.5 of this case's 8 s on lavapipe; the add 0.2 s). */
static float *large_f32(int64_t n)
{
    float *h = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; h && i < n; i++) /* [-1, 1), 24 random bits */
        h[i] = (float)(t_rand() >> 40) * 0x1p-23f - 1.0f;
    return h;
}

static void t_large(void)
{
    const int64_t s[2] = {3, (1 << 24) + 5}, n = s[0] * s[1];
    float *ha = large_f32(n), *hb = large_f32(n), *got = malloc(sizeof(float) * (size_t)n);
    wgml_tensor *a = NULL, *b = NULL, *o = t_poisoned(WGML_F32, 2, s);
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s, &a));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s, &b));
    if (ha && hb && got && a && b && o) {
        CHECK_OK(wgml_tensor_upload(a, ha, (uint64_t)n * 4));
        CHECK_OK(wgml_tensor_upload(b, hb, (uint64_t)n * 4));
        CHECK_OK(wgml_binary(WGML_ADD, a, b, o));
        CHECK_OK(wgml_tensor_download(o, got, (uint64_t)n * 4));
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) /* f32 + f32 rounded once: exact in f32 */
            bad += got[i] != ha[i] + hb[i];
        CHECK(bad == 0, "large add: %lld wrong of %lld", (long long)bad, (long long)n);
    }
    free(ha);
    free(hb);
    free(got);
    wgml_tensor_free(o);
    wgml_tensor_free(a);
    wgml_tensor_free(b);
}

static void t_errors(void)
{
    const int64_t s3[1] = {3}, s4[1] = {4}, s2[2] = {2, 3};
    wgml_tensor *a = NULL, *b = NULL, *o = NULL, *i = NULL, *q = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, s3, &a));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, s4, &b));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, s3, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, s3, &i));
    CHECK(wgml_binary(WGML_ADD, a, b, o) == WGML_ERR_SHAPE, "3 + 4 accepted");
    CHECK(strstr(wgml_last_error(), "broadcast") != NULL, "message: %s", wgml_last_error());
    CHECK(wgml_binary(WGML_ADD, a, i, o) == WGML_ERR_DTYPE, "f32 + i32 accepted");
    CHECK(wgml_binary(WGML_AND, a, a, o) == WGML_ERR_DTYPE, "AND on f32 accepted");
    CHECK(wgml_binary(WGML_EQ, a, a, o) == WGML_ERR_DTYPE, "EQ into f32 accepted");
    CHECK(wgml_unary(WGML_EXP, i, i, 0, 0) == WGML_ERR_DTYPE, "EXP on i32 accepted");
    CHECK(wgml_unary(WGML_EXP, a, b, 0, 0) == WGML_ERR_SHAPE, "EXP into the wrong shape accepted");
    CHECK(wgml_unary((wgml_unary_op)999, a, o, 0, 0) == WGML_ERR_INVALID_ARG, "unknown unary accepted");
    CHECK(wgml_binary((wgml_binary_op)-1, a, a, o) == WGML_ERR_INVALID_ARG, "unknown binary accepted");
    CHECK(wgml_unary(WGML_EXP, NULL, o, 0, 0) == WGML_ERR_INVALID_ARG, "NULL accepted");
    CHECK(wgml_copy(a, i) == WGML_ERR_DTYPE, "copy f32 -> i32 accepted");
    CHECK(wgml_where(a, a, a, o) == WGML_ERR_DTYPE, "f32 cond accepted");
    CHECK(wgml_tensor_new(t_ctx, (wgml_dtype)77, 1, s3, &q) == WGML_ERR_DTYPE, "unknown dtype accepted");
    CHECK(wgml_tensor_new(t_ctx, WGML_Q4_0, 1, s3, &q) == WGML_ERR_SHAPE, "q4_0 row of 3 accepted");
    CHECK(wgml_tensor_new(t_ctx, WGML_F32, 5, s3, &q) == WGML_ERR_SHAPE, "5 dims accepted");
    wgml_tensor *v = NULL;
    CHECK(wgml_view_transpose(a, 0, 3, &v) == WGML_ERR_INDEX, "axis 3 of 1-D accepted");
    CHECK(wgml_view_slice(a, 0, 2, 5, 1, &v) == WGML_ERR_INDEX, "slice past the end accepted");
    CHECK(wgml_view_reshape(a, 2, s2, &v) == WGML_ERR_SHAPE, "reshape 3 -> 6 accepted");
    CHECK(wgml_tensor_upload(a, "x", 1) == WGML_ERR_SHAPE, "upload of the wrong size accepted");
    wgml_tensor_free(a);
    wgml_tensor_free(b);
    wgml_tensor_free(o);
    wgml_tensor_free(i);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"unary_all_ops_dtypes_layouts", t_unary_all},
        {"binary_all_ops_dtypes_broadcast", t_binary_all},
        {"cast_every_pair", t_cast_all_pairs},
        {"copy_views_set_contiguous", t_copy_views},
        {"where_and_fill", t_where_fill},
        {"large_over_2p24_elements", t_large},
        {"invalid_calls", t_errors},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
