/* Write hazards (src/ops/overlap.c): an output that partially overlaps an
 * input, or that is a broadcast (stride-0) view, is refused with
 * WGML_ERR_INVALID_ARG and nothing is written; the same view is accepted
 * for the ops that are correct in place (elementwise, softmax, norms,
 * cumsum, rope) and gives numpy's result; views of one buffer that
 * interleave without sharing an element are not refused. */
#include "op_harness.h"

/* base = 0, 1, 2, ... as f32 */
static wgml_tensor *iota(int ndim, const int64_t *shape)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, ndim, shape, &t));
    int64_t n = wgml_tensor_nelem(t);
    float *h = malloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)i;
    CHECK_OK(wgml_tensor_upload(t, h, sizeof(float) * (size_t)n));
    free(h);
    return t;
}

/* The tensor still holds 0, 1, 2, ... (nothing was written). */
static void check_iota(const char *what, const wgml_tensor *t)
{
    double *v = t_values(t);
    int bad = 0;
    for (int64_t i = 0; i < wgml_tensor_nelem(t); i++)
        bad += v[i] != (double)i;
    CHECK(bad == 0, "%s: %d elements changed by a refused call", what, bad);
    free(v);
}

static wgml_tensor *slice(const wgml_tensor *t, int axis, int64_t a, int64_t b, int64_t step)
{
    wgml_tensor *v = NULL;
    CHECK_OK(wgml_view_slice(t, axis, a, b, step, &v));
    return v;
}

#define EXPECT_REFUSED(call, what)                                                                  \
    do {                                                                                            \
        wgml_status s_ = (call);                                                                    \
        CHECK(s_ == WGML_ERR_INVALID_ARG, "%s: got %s (%s)", what, wgml_status_name(s_), wgml_last_error()); \
        CHECK(strstr(wgml_last_error(), "overlap") || strstr(wgml_last_error(), "in place") ||      \
                  strstr(wgml_last_error(), "broadcast"),                                          \
              "%s: message does not say why: %s", what, wgml_last_error());                        \
    } while (0)

static void t_shifted_unary(void)
{
    int64_t n = 1000;
    wgml_tensor *base = iota(1, &n);
    wgml_tensor *x = slice(base, 0, 0, 999, 1), *out = slice(base, 0, 1, 1000, 1);
    EXPECT_REFUSED(wgml_unary(WGML_NEG, x, out, 0, 0), "neg base[0:999] -> base[1:1000]");
    EXPECT_REFUSED(wgml_unary(WGML_NEG, out, x, 0, 0), "neg base[1:1000] -> base[0:999]");
    EXPECT_REFUSED(wgml_copy(x, out), "copy shifted by one");
    EXPECT_REFUSED(wgml_binary(WGML_ADD, x, x, out), "add into a shifted view");
    check_iota("base", base);
    /* Disjoint halves of one buffer are fine. */
    wgml_tensor *lo = slice(base, 0, 0, 500, 1), *hi = slice(base, 0, 500, 1000, 1);
    CHECK_OK(wgml_unary(WGML_NEG, lo, hi, 0, 0));
    double *v = t_values(base);
    int bad = 0;
    for (int i = 0; i < 1000; i++)
        bad += v[i] != (i < 500 ? i : -(double)(i - 500));
    CHECK(bad == 0, "disjoint halves: %d wrong", bad);
    free(v);
    wgml_tensor_free(lo);
    wgml_tensor_free(hi);
    wgml_tensor_free(x);
    wgml_tensor_free(out);
    wgml_tensor_free(base);
}

static void t_interleaved_not_refused(void)
{
    /* Columns 0 and 1 of [64, 2] interleave in memory without sharing an
     * element; step-2 slices of one vector likewise. */
    int64_t sh[2] = {64, 2};
    wgml_tensor *base = iota(2, sh);
    wgml_tensor *c0 = slice(base, 1, 0, 1, 1), *c1 = slice(base, 1, 1, 2, 1);
    CHECK_OK(wgml_unary(WGML_SQR, c0, c1, 0, 0));
    double *v = t_values(base);
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += v[2 * i] != 2.0 * i || v[2 * i + 1] != 4.0 * i * i;
    CHECK(bad == 0, "column square: %d wrong rows", bad);
    free(v);
    wgml_tensor *flat = NULL;
    int64_t n = 128;
    CHECK_OK(wgml_view_reshape(base, 1, &n, &flat));
    wgml_tensor *ev = slice(flat, 0, 0, 128, 2), *od = slice(flat, 0, 1, 128, 2);
    CHECK_OK(wgml_copy(ev, od));
    /* ...but a step-2 view overlapping a step-3 one is refused (element 6). */
    wgml_tensor *s3 = slice(flat, 0, 0, 96, 3), *s2 = slice(flat, 0, 0, 64, 2);
    EXPECT_REFUSED(wgml_copy(s3, s2), "step-3 into step-2 of one vector");
    wgml_tensor_free(s3);
    wgml_tensor_free(s2);
    wgml_tensor_free(ev);
    wgml_tensor_free(od);
    wgml_tensor_free(flat);
    wgml_tensor_free(c0);
    wgml_tensor_free(c1);
    wgml_tensor_free(base);
}

static void t_transposed_self(void)
{
    int64_t sh[2] = {16, 16};
    wgml_tensor *base = iota(2, sh), *tr = NULL;
    CHECK_OK(wgml_view_transpose(base, 0, 1, &tr));
    EXPECT_REFUSED(wgml_copy(base, tr), "copy into its own transpose");
    EXPECT_REFUSED(wgml_copy(tr, base), "copy of the transpose into itself");
    int perm[2] = {1, 0};
    EXPECT_REFUSED(wgml_permute(base, perm, base), "permute in place");
    check_iota("base", base);
    wgml_tensor_free(tr);
    wgml_tensor_free(base);
}

static void t_movement_same_handle(void)
{
    int64_t sh[2] = {8, 12};
    wgml_tensor *x = iota(2, sh);
    int64_t shifts[2] = {1, 3};
    EXPECT_REFUSED(wgml_roll(x, shifts, x), "roll with out == x");
    EXPECT_REFUSED(wgml_flip(x, 3u, x), "flip with out == x");
    EXPECT_REFUSED(wgml_repeat(x, x), "repeat with out == x");
    int64_t zero[2] = {0, 0};
    EXPECT_REFUSED(wgml_pad(x, zero, zero, WGML_PAD_CONSTANT, 0, x), "pad with out == x");
    check_iota("x", x);
    /* tri is elementwise: in place is allowed and right. */
    CHECK_OK(wgml_tri(x, 0, 0, x));
    double *v = t_values(x);
    int bad = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 12; j++)
            bad += v[i * 12 + j] != (j <= i ? i * 12.0 + j : 0.0);
    CHECK(bad == 0, "tri in place: %d wrong", bad);
    free(v);
    wgml_tensor_free(x);
}

static void t_concat_overlap(void)
{
    int64_t n = 12;
    wgml_tensor *base = iota(1, &n);
    wgml_tensor *a = slice(base, 0, 0, 6, 1), *b = slice(base, 0, 6, 12, 1);
    const wgml_tensor *xs[2] = {b, a};
    EXPECT_REFUSED(wgml_concat(xs, 2, 0, base), "concat into a buffer holding its inputs");
    check_iota("base", base);
    wgml_tensor_free(a);
    wgml_tensor_free(b);
    wgml_tensor_free(base);
}

static void t_broadcast_out(void)
{
    int64_t one[2] = {1, 8}, big[2] = {4, 8};
    wgml_tensor *row = iota(2, one), *bc = NULL, *x = iota(2, big);
    CHECK_OK(wgml_view_broadcast(row, 2, big, &bc));
    EXPECT_REFUSED(wgml_fill(bc, 1.0), "fill into a broadcast view");
    EXPECT_REFUSED(wgml_unary(WGML_NEG, x, bc, 0, 0), "unary into a broadcast view");
    EXPECT_REFUSED(wgml_binary(WGML_ADD, x, x, bc), "binary into a broadcast view");
    EXPECT_REFUSED(wgml_copy(x, bc), "copy into a broadcast view");
    float h[32] = {0};
    EXPECT_REFUSED(wgml_tensor_upload(bc, h, sizeof h), "upload into a broadcast view");
    check_iota("row", row);
    /* Reading a broadcast view stays fine. */
    CHECK_OK(wgml_binary(WGML_ADD, x, bc, x));
    wgml_tensor_free(bc);
    wgml_tensor_free(row);
    wgml_tensor_free(x);
}

static void t_other_families(void)
{
    int64_t sh[2] = {4, 16};
    wgml_tensor *x = iota(2, sh);
    wgml_tensor *part = slice(x, 1, 0, 8, 1), *shift = slice(x, 1, 1, 9, 1);
    /* reductions and sorts read whole rows: never in place */
    wgml_tensor *col = slice(x, 1, 0, 1, 1);
    EXPECT_REFUSED(wgml_reduce(WGML_SUM, x, 2u, 0, col), "sum into a column of x");
    wgml_tensor *xi = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, sh, &xi));
    EXPECT_REFUSED(wgml_argsort(xi, 0, xi), "argsort of i32 into itself");
    EXPECT_REFUSED(wgml_softmax(part, NULL, NULL, NULL, shift), "softmax across a shifted view");
    wgml_norm_params np = {WGML_RMS_NORM, 1e-5f, 0, NULL, NULL, NULL, NULL, NULL, NULL};
    np.weight = part;
    EXPECT_REFUSED(wgml_norm(part, &np, part), "rms_norm writing over its weight");
    np.weight = NULL;
    np.sum_out = part;
    EXPECT_REFUSED(wgml_norm(part, &np, part), "rms_norm with out == sum_out");
    EXPECT_REFUSED(wgml_cumsum(part, 1, 0, shift), "cumsum across a shifted view");
    check_iota("x", x);
    wgml_tensor_free(xi);
    wgml_tensor_free(col);
    wgml_tensor_free(part);
    wgml_tensor_free(shift);
    wgml_tensor_free(x);
}

static void t_indexing(void)
{
    int64_t sh[2] = {8, 4}, n = 4;
    wgml_tensor *tab = iota(2, sh), *idx = NULL, *rows = slice(tab, 0, 4, 8, 1);
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &n, &idx));
    int32_t ih[4] = {0, 1, 2, 3};
    CHECK_OK(wgml_tensor_upload(idx, ih, sizeof ih));
    EXPECT_REFUSED(wgml_get_rows(tab, idx, rows), "get_rows into its own table");
    wgml_tensor *src = slice(tab, 0, 0, 4, 1);
    EXPECT_REFUSED(wgml_set_rows(tab, idx, src), "set_rows from its own rows");
    check_iota("table", tab);
    wgml_tensor_free(src);
    wgml_tensor_free(rows);
    wgml_tensor_free(idx);
    wgml_tensor_free(tab);
}

/* The in-place calls that were right before stay allowed and right. */
static void t_inplace_allowed(void)
{
    int64_t sh[2] = {3, 40};
    t_tensor a = t_random(WGML_F32, 2, sh, -2, 2), b = t_random(WGML_F32, 2, sh, -2, 2);
    CHECK_OK(wgml_binary(WGML_ADD, a.t, b.t, a.t));
    double *v = t_values(a.t), *want = malloc(sizeof(double) * 120);
    for (int i = 0; i < 120; i++)
        want[i] = a.val[i] + b.val[i];
    CHECK(t_compare("add in place", WGML_F32, v, want, 120, 2e-7, 0) == 0, "add in place");
    free(v);
    /* softmax in place */
    CHECK_OK(wgml_tensor_upload(a.t, a.host, 480));
    CHECK_OK(wgml_softmax(a.t, NULL, NULL, NULL, a.t));
    v = t_values(a.t);
    for (int r = 0; r < 3; r++) {
        double m = -1e300, s = 0;
        for (int j = 0; j < 40; j++)
            m = fmax(m, a.val[r * 40 + j]);
        for (int j = 0; j < 40; j++)
            s += exp(a.val[r * 40 + j] - m);
        for (int j = 0; j < 40; j++)
            want[r * 40 + j] = exp(a.val[r * 40 + j] - m) / s;
    }
    CHECK(t_compare("softmax in place", WGML_F32, v, want, 120, 1e-6, 1e-7) == 0, "softmax in place");
    free(v);
    /* cumsum and rms_norm in place */
    CHECK_OK(wgml_tensor_upload(a.t, a.host, 480));
    CHECK_OK(wgml_cumsum(a.t, 1, 0, a.t));
    v = t_values(a.t);
    for (int r = 0; r < 3; r++) {
        double s = 0;
        for (int j = 0; j < 40; j++)
            want[r * 40 + j] = s += a.val[r * 40 + j];
    }
    CHECK(t_compare("cumsum in place", WGML_F32, v, want, 120, 1e-6, 1e-6) == 0, "cumsum in place");
    free(v);
    CHECK_OK(wgml_tensor_upload(a.t, a.host, 480));
    wgml_norm_params np = {WGML_RMS_NORM, 1e-6f, 0, NULL, NULL, NULL, NULL, NULL, NULL};
    CHECK_OK(wgml_norm(a.t, &np, a.t));
    v = t_values(a.t);
    for (int r = 0; r < 3; r++) {
        double ss = 0;
        for (int j = 0; j < 40; j++)
            ss += a.val[r * 40 + j] * a.val[r * 40 + j];
        for (int j = 0; j < 40; j++)
            want[r * 40 + j] = a.val[r * 40 + j] / sqrt(ss / 40 + 1e-6);
    }
    CHECK(t_compare("rms_norm in place", WGML_F32, v, want, 120, 1e-5, 1e-6) == 0, "rms_norm in place");
    free(v);
    free(want);
    t_free(&a);
    t_free(&b);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"shifted_unary_refused", t_shifted_unary},
        {"interleaved_views_not_refused", t_interleaved_not_refused},
        {"copy_into_own_transpose_refused", t_transposed_self},
        {"movement_same_handle", t_movement_same_handle},
        {"concat_overlapping_out_refused", t_concat_overlap},
        {"broadcast_out_refused", t_broadcast_out},
        {"other_families", t_other_families},
        {"indexing", t_indexing},
        {"inplace_allowed", t_inplace_allowed},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
