/* GLU (every kind; packed, swapped and separate gate; f32/f16/bf16; views)
 * and sampling (token-exact against the double reference with the same
 * RNG, greedy paths, ties, a 256k vocabulary, frequencies of draws against
 * known distributions, the filters cutting what they should, more than
 * 65,535 rows), both families' NaN rules and their error paths. */
#include "nan_table.h"
#include "ops/rope.h"

static const wgml_dtype floats[] = {WGML_F32, WGML_F16, WGML_BF16};

/* ------------------------------------------------------------ glu */

/* f32 kernel error, relative to |act(a) * g| plus an absolute floor scaled
 * by |g| <= 4: the activations' own error as in the unary tests (sigmoid
 * and tanh through exp: ~1e-5 relative near their tails; erf's fit 1.2e-7
 * absolute) and one rounding of the product. */
static void glu_tol(wgml_glu_kind k, double *rtol, double *atol)
{
    switch (k) {
    case WGML_SWIGLU: case WGML_GEGLU_TANH: *rtol = 1e-5; *atol = 8e-6; break;
    case WGML_GEGLU_ERF: *rtol = 2e-6; *atol = 1.2e-6; break;
    default: *rtol = 1.2e-7; *atol = 0; break;
    }
}

/* form 0 packed [a|g], 1 packed swapped [g|a], 2 separate gate.  layout 1
 * makes the inputs strided views (packed: a slice of a wider tensor;
 * separate: transposed x and gate), and out a slice view. */
static void check_glu(wgml_glu_kind kind, wgml_dtype dt, int ndim, const int64_t *oshape, int form, int layout)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= oshape[i];
    int64_t xs[4], gs[4];
    memcpy(xs, oshape, sizeof(int64_t) * (size_t)ndim);
    memcpy(gs, oshape, sizeof(int64_t) * (size_t)ndim);
    int last = ndim - 1;
    if (form < 2)
        xs[last] *= 2;
    int64_t store[4];
    memcpy(store, xs, sizeof(int64_t) * (size_t)ndim);
    if (layout == 1 && form < 2)
        store[last] += 3;
    bool transposed = layout == 1 && form == 2 && ndim >= 2;
    if (transposed) {
        store[last] = xs[last - 1];
        store[last - 1] = xs[last];
    }
    t_tensor xt = t_random(dt, ndim, store, -4, 4), gt = {0};
    wgml_tensor *x = NULL, *g = NULL;
    if (layout == 1 && form < 2)
        CHECK_OK(wgml_view_slice(xt.t, -1, 2, 2 + xs[last], 1, &x));
    else if (transposed)
        CHECK_OK(wgml_view_transpose(xt.t, -1, -2, &x));
    else
        CHECK_OK(wgml_view_reshape(xt.t, ndim, xs, &x));
    if (form == 2) {
        gt = t_random(dt, ndim, transposed ? store : gs, -4, 4);
        if (transposed)
            CHECK_OK(wgml_view_transpose(gt.t, -1, -2, &g));
        else
            CHECK_OK(wgml_view_reshape(gt.t, ndim, gs, &g));
    }
    wgml_tensor *ob = NULL, *o = NULL;
    if (layout == 1) {
        int64_t os_[4];
        memcpy(os_, oshape, sizeof(int64_t) * (size_t)ndim);
        os_[last] += 2;
        ob = t_poisoned(dt, ndim, os_);
        CHECK_OK(wgml_view_slice(ob, -1, 1, 1 + oshape[last], 1, &o));
    } else {
        o = t_poisoned(dt, ndim, oshape);
    }
    wgml_status st = wgml_glu(kind, x, g, form == 1, o);
    CHECK(st == WGML_OK, "glu: %s", wgml_last_error());
    double *xv = t_values(x), *gv = g ? t_values(g) : NULL, *want = malloc(sizeof(double) * (size_t)(n + 1));
    int64_t h = oshape[last];
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i / h, c = i % h;
        double a, gg;
        if (form == 2) {
            a = xv[i];
            gg = gv[i];
        } else {
            double lo = xv[r * 2 * h + c], hi = xv[r * 2 * h + h + c];
            a = form == 1 ? hi : lo;
            gg = form == 1 ? lo : hi;
        }
        want[i] = wg_glu_ref(kind, a, gg);
    }
    double *got = t_values(o);
    double rtol, atol;
    glu_tol(kind, &rtol, &atol);
    char what[96];
    snprintf(what, sizeof what, "%s/%s/form%d/layout%d/n%lld", wg_glu_name(kind), wgml_dtype_name(dt), form, layout,
             (long long)n);
    CHECK(t_compare(what, dt, got, want, n, rtol, atol) == 0, "%s", what);
    free(got);
    free(want);
    free(xv);
    free(gv);
    wgml_tensor_free(o);
    wgml_tensor_free(ob);
    wgml_tensor_free(x);
    wgml_tensor_free(g);
    t_free(&xt);
    t_free(&gt);
}

static void t_glu_all(void)
{
    const int64_t s3[3] = {3, 5, 7}, s1[1] = {1}, s2[2] = {37, 33}, s0[2] = {0, 4}, big[1] = {5003};
    for (int k = 0; k < 4; k++)
        for (size_t d = 0; d < 3; d++)
            for (int form = 0; form < 3; form++) {
                check_glu((wgml_glu_kind)k, floats[d], 3, s3, form, 0);
                check_glu((wgml_glu_kind)k, floats[d], 2, s2, form, 1);
                check_glu((wgml_glu_kind)k, floats[d], 1, s1, form, 0);
                check_glu((wgml_glu_kind)k, floats[d], 2, s0, form, form % 2);
                if (d == 0)
                    check_glu((wgml_glu_kind)k, floats[d], 1, big, form, 0);
            }
    /* an output above 2^24 elements, gate packed with the input */
    const int64_t huge[2] = {4097, 4099};
    check_glu(WGML_SWIGLU, WGML_F32, 2, huge, 0, 0);
}

/* NaN rule (wgml.h): per element, NaN in a or g gives NaN -- relu(NaN)
 * is NaN (REGLU used WGSL's max(x, 0), which may drop it) and act(a) * NaN
 * is NaN even where act(a) is 0; other elements are untouched.  Separate
 * and packed gates, f32/f16/bf16. */
static void t_glu_nan(void)
{
    const double N = NAN;
    const double a[8] = {N, 1, -1, N, 2, -3, 0.5, -0.25}, g[8] = {1, N, N, N, 2, 0.5, -1, 3};
    const int64_t s[2] = {2, 4}, ps[2] = {2, 8};
    for (int k = WGML_SWIGLU; k <= WGML_REGLU; k++)
        for (size_t d = 0; d < 3; d++)
            for (int packed = 0; packed < 2; packed++) {
                double pk[16], want[8];
                for (int r = 0; r < 2; r++)
                    for (int j = 0; j < 4; j++) {
                        pk[r * 8 + j] = a[r * 4 + j];
                        pk[r * 8 + 4 + j] = g[r * 4 + j];
                    }
                wgml_tensor *x = packed ? t_from(floats[d], 2, ps, pk) : t_from(floats[d], 2, s, a);
                wgml_tensor *gt = packed ? NULL : t_from(floats[d], 2, s, g), *o = t_poisoned(floats[d], 2, s);
                CHECK_OK(wgml_glu((wgml_glu_kind)k, x, gt, 0, o));
                int bad_ref = 0;
                for (int i = 0; i < 8; i++) {
                    uint8_t ra[4], rg[4]; /* the inputs as the dtype holds them */
                    wg_host_set(floats[d], ra, 0, a[i]);
                    wg_host_set(floats[d], rg, 0, g[i]);
                    want[i] = wg_glu_ref((wgml_glu_kind)k, wg_host_get(floats[d], ra, 0), wg_host_get(floats[d], rg, 0));
                    bad_ref += (bool)isnan(want[i]) != (isnan(a[i]) || isnan(g[i]));
                }
                char what[64];
                snprintf(what, sizeof what, "glu NaN kind %d %s%s", k, wgml_dtype_name(floats[d]),
                         packed ? " packed" : "");
                CHECK(bad_ref == 0, "%s: the reference breaks the NaN rule at %d elements", what, bad_ref);
                double rtol, atol;
                glu_tol((wgml_glu_kind)k, &rtol, &atol);
                t_expect_tol(what, o, want, rtol, atol * 4); /* atol is per unit of |g| <= 4 */
                wgml_tensor_free(o);
                wgml_tensor_free(gt);
                wgml_tensor_free(x);
            }
}

/* Activation tails at relative accuracy (f32, gate 1): act(a) for large
 * negative a is tiny but not zero (swiglu(-80) = -1.4e-33), and forms
 * like 0.5 a (1 + tanh u) lose it all where the device's tanh stops short
 * of -1 (NVIDIA: geglu_tanh(-89) was -2.7e-6).  Wanted values come from
 * forms that stay exact in double: a / (1 + e^-a), a / (1 + e^-2u),
 * a erfc(-a / sqrt 2) / 2.  Tolerance: 64 f32 ulps relative (exp is
 * specified to 3 + 2|z| ulps; |z| <= 80 here would allow 163, the forms
 * reach far less on the devices seen) or, below the smallest normal f32,
 * any value of at most that size (a device may flush subnormals). */
static void t_glu_tails(void)
{
    static const double xs[] = {-1e30, -60000, -89, -80, -40, -20, -10, -5, -1, 0.5, 5, 20, 1e4};
    enum { N = sizeof xs / sizeof *xs };
    const int64_t s[1] = {N};
    double ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    for (int k = WGML_SWIGLU; k <= WGML_GEGLU_TANH; k++) {
        wgml_tensor *x = t_from(WGML_F32, 1, s, xs), *g = t_from(WGML_F32, 1, s, ones);
        wgml_tensor *o = t_poisoned(WGML_F32, 1, s);
        CHECK_OK(wgml_glu((wgml_glu_kind)k, x, g, 0, o));
        double *got = t_values(o);
        for (int i = 0; i < N; i++) {
            double a = xs[i], u = 0.7978845608028654 * (a + 0.044715 * a * a * a), w;
            if (k == WGML_SWIGLU)
                w = a / (1 + exp(-a));
            else if (k == WGML_GEGLU_ERF)
                w = 0.5 * a * erfc(-a / sqrt(2.0));
            else
                w = a / (1 + exp(-2 * u));
            bool ok = fabs(w) < 0x1p-126 ? fabs(got[i]) <= 0x1p-126 && !(got[i] > 0 && w < 0)
                                         : fabs(got[i] - w) <= 64 * 0x1p-23 * fabs(w);
            CHECK(ok, "glu kind %d tail at %g: got %.9g want %.9g", k, a, got[i], w);
        }
        free(got);
        wgml_tensor_free(o);
        wgml_tensor_free(g);
        wgml_tensor_free(x);
    }
}

static void t_glu_errors(void)
{
    const int64_t s[2] = {3, 8}, sodd[2] = {3, 7}, sh[2] = {3, 4}, s5[2] = {3, 5};
    wgml_tensor *x = NULL, *xo = NULL, *o = NULL, *of = NULL, *g5 = NULL, *gh = NULL, *xi = NULL, *o8 = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s, &x));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, sodd, &xo));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, sh, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F16, 2, sh, &of));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s5, &g5));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F16, 2, s, &gh));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, s, &xi));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s, &o8));
    CHECK_OK(wgml_glu(WGML_SWIGLU, x, NULL, 0, o));
    CHECK_OK(wgml_glu(WGML_SWIGLU, x, x, 0, o8));
    CHECK(wgml_glu(WGML_SWIGLU, xo, NULL, 0, o) == WGML_ERR_SHAPE, "odd packed last dim accepted");
    CHECK(strstr(wgml_last_error(), "even") != NULL, "message: %s", wgml_last_error());
    CHECK(wgml_glu(WGML_SWIGLU, x, NULL, 0, o8) == WGML_ERR_SHAPE, "packed out of the full width accepted");
    CHECK(wgml_glu(WGML_SWIGLU, x, g5, 0, o8) == WGML_ERR_SHAPE, "gate of another shape accepted");
    CHECK(wgml_glu(WGML_SWIGLU, x, gh, 0, o8) == WGML_ERR_DTYPE, "f16 gate for f32 x accepted");
    CHECK(wgml_glu(WGML_SWIGLU, x, NULL, 0, of) == WGML_ERR_DTYPE, "f16 out for f32 x accepted");
    CHECK(wgml_glu(WGML_REGLU, xi, NULL, 0, o) == WGML_ERR_DTYPE, "i32 x accepted");
    CHECK(wgml_glu((wgml_glu_kind)9, x, NULL, 0, o) == WGML_ERR_INVALID_ARG, "unknown kind accepted");
    CHECK(wgml_glu(WGML_SWIGLU, NULL, NULL, 0, o) == WGML_ERR_INVALID_ARG, "NULL x accepted");
    CHECK(wgml_glu(WGML_SWIGLU, x, NULL, 0, NULL) == WGML_ERR_INVALID_ARG, "NULL out accepted");
    wgml_tensor *all[] = {x, xo, o, of, g5, gh, xi, o8};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        wgml_tensor_free(all[i]);
}

/* ------------------------------------------------------------ sample */

static wgml_sample_params sp(float t, int k, float top_p, float min_p, uint64_t seed)
{
    wgml_sample_params p = {t, k, top_p, min_p, seed};
    return p;
}

static int32_t *run_sample(const wgml_tensor *logits, const wgml_sample_params *p)
{
    int64_t rows = wgml_tensor_dim(logits, 0);
    wgml_tensor *o = t_poisoned(WGML_I32, 1, &rows);
    CHECK_OK(wgml_sample(logits, p, o));
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)(rows + 1));
    CHECK_OK(wgml_tensor_download(o, ids, sizeof(int32_t) * (size_t)rows));
    wgml_tensor_free(o);
    return ids;
}

/* Token-exact comparison with the reference.  top_k, min_p and greedy
 * decisions are exact on both sides; top_p and the draw compare sums (f32
 * on the GPU, f64 here), so a row may differ only when the reference says
 * its boundary was within 1e-5 of the kept mass (sums of n <= 2^18
 * positive f32 terms, in blocks of <= 1024 and a tree or chain above,
 * typically err by sqrt(n) 2^-24 <= 3e-5 / 32 ~ 1e-6 relative: 10x that),
 * and such rows must stay rare (<= 1% + 1).  With the seeds tried, no row
 * of the 1000-token cases differed at all. */
static void compare_rows(const char *what, const wgml_tensor *logits, const double *vals, int64_t row_stride,
                         int64_t col_stride, const wgml_sample_params *p)
{
    int64_t rows = wgml_tensor_dim(logits, 0), vocab = wgml_tensor_dim(logits, 1);
    int32_t *ids = run_sample(logits, p);
    double *row = malloc(sizeof(double) * (size_t)vocab);
    int diff = 0, unexplained = 0;
    double worst = 0; /* largest margin among differing rows */
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < vocab; i++)
            row[i] = vals[r * row_stride + i * col_stride];
        double margin;
        int32_t want = wg_sample_ref(row, vocab, p, (uint64_t)r, &margin);
        if (ids[r] != want) {
            diff++;
            worst = fmax(worst, margin);
            if (margin >= 1e-5 && unexplained++ < 4)
                printf("    %s row %lld: got %d want %d (margin %.3g)\n", what, (long long)r, ids[r], want, margin);
        }
    }
    CHECK(unexplained == 0 && diff <= rows / 100 + 1, "%s: %d rows differ (%d away from any boundary)", what, diff,
          unexplained);
    if (diff)
        printf("    %s: %d of %lld rows on a rounding boundary differ (margin <= %.2g)\n", what, diff,
               (long long)rows, worst);
    free(row);
    free(ids);
}

static void t_sample_vs_ref(void)
{
    const wgml_sample_params ps[] = {
        sp(1, 0, 1, 0, 11),          sp(0.7f, 40, 1, 0, 12),     sp(1.3f, 0, 0.9f, 0, 13),
        sp(1, 0, 1, 0.05f, 14),      sp(0.8f, 100, 0.95f, 0.02f, 15), sp(2.5f, 7, 0.5f, 0, 0xfedcba9876543210ull),
        sp(1, 5000, 1, 0, 16),       sp(1, 0, 0, 0, 17),
    };
    const int64_t s[2] = {300, 1000};
    for (size_t d = 0; d < 3; d++) {
        t_tensor l = t_random(floats[d], 2, s, -8, 8);
        for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
            if (d && i % 3)
                continue;
            char what[64];
            snprintf(what, sizeof what, "%s/params%zu", wgml_dtype_name(floats[d]), i);
            compare_rows(what, l.t, l.val, s[1], 1, &ps[i]);
        }
        t_free(&l);
    }
    /* logits as a transposed view (column stride 1000), out as a strided view */
    const int64_t st[2] = {1000, 300};
    t_tensor lt = t_random(WGML_F32, 2, st, -6, 6);
    wgml_tensor *v = NULL;
    CHECK_OK(wgml_view_transpose(lt.t, 0, 1, &v));
    wgml_sample_params p = sp(0.9f, 50, 0.9f, 0.01f, 99);
    compare_rows("transposed", v, lt.val, 1, 300, &p);
    const int64_t o2 = 600;
    wgml_tensor *ob = t_poisoned(WGML_I32, 1, &o2), *ov = NULL;
    CHECK_OK(wgml_view_slice(ob, 0, 1, 600, 2, &ov));
    if (ov) {
        CHECK_OK(wgml_sample(v, &p, ov));
        int32_t *a = run_sample(v, &p), b[300];
        CHECK_OK(wgml_tensor_download(ov, b, sizeof b));
        CHECK(memcmp(a, b, sizeof b) == 0, "strided out differs from contiguous out");
        free(a);
    }
    wgml_tensor_free(ov);
    wgml_tensor_free(ob);
    wgml_tensor_free(v);
    t_free(&lt);
}

/* Vocabulary of 256k + 7: one workgroup walks the whole row. */
static void t_sample_big_vocab(void)
{
    const int64_t s[2] = {3, 262151};
    t_tensor l = t_random(WGML_F32, 2, s, -10, 10);
    wgml_sample_params p1 = sp(1, 0, 1, 0, 5), p2 = sp(0.8f, 64, 0.9f, 0, 6), p3 = sp(1.2f, 0, 0.97f, 0.001f, 7),
                       p0 = sp(0, 0, 1, 0, 1);
    compare_rows("256k/plain", l.t, l.val, s[1], 1, &p1);
    compare_rows("256k/topk-topp", l.t, l.val, s[1], 1, &p2);
    compare_rows("256k/topp-minp", l.t, l.val, s[1], 1, &p3);
    compare_rows("256k/greedy", l.t, l.val, s[1], 1, &p0);
    t_free(&l);
}

static int64_t argmax_first(const double *v, int64_t n)
{
    int64_t b = 0;
    for (int64_t i = 1; i < n; i++)
        if (v[i] > v[b])
            b = i;
    return b;
}

/* temperature 0 and top_k 1 are argmax (first occurrence on ties, which
 * rows 0..9 have); the same seed repeats, another seed differs. */
static void t_sample_greedy_seed(void)
{
    const int64_t s[2] = {200, 777};
    t_tensor l = t_random(WGML_F32, 2, s, -5, 5);
    for (int r = 0; r < 10; r++) { /* a tied maximum at r+3 and 500 */
        l.val[r * 777 + r + 3] = l.val[r * 777 + 500] = 7;
        wg_host_set(WGML_F32, l.host, (size_t)(r * 777 + r + 3), 7);
        wg_host_set(WGML_F32, l.host, (size_t)(r * 777 + 500), 7);
    }
    CHECK_OK(wgml_tensor_upload(l.t, l.host, wgml_tensor_nbytes(l.t)));
    wgml_sample_params pg[2] = {sp(0, 0, 1, 0, 3), sp(1.5f, 1, 1, 0, 3)};
    for (int k = 0; k < 2; k++) {
        int32_t *ids = run_sample(l.t, &pg[k]);
        int bad = 0;
        for (int64_t r = 0; r < s[0]; r++)
            bad += ids[r] != argmax_first(l.val + r * s[1], s[1]);
        CHECK(bad == 0, "%s: %d rows are not the argmax", k ? "top_k 1" : "temperature 0", bad);
        free(ids);
    }
    wgml_sample_params a = sp(1, 0, 1, 0, 42), b = sp(1, 0, 1, 0, 43);
    int32_t *x1 = run_sample(l.t, &a), *x2 = run_sample(l.t, &a), *x3 = run_sample(l.t, &b);
    int same = 0;
    for (int64_t r = 0; r < s[0]; r++)
        same += x1[r] == x3[r];
    CHECK(memcmp(x1, x2, sizeof(int32_t) * (size_t)s[0]) == 0, "same seed, different tokens");
    CHECK(same < s[0] / 4, "seeds 42 and 43 agree on %d of %lld rows", same, (long long)s[0]);
    free(x1);
    free(x2);
    free(x3);
    t_free(&l);
}

/* Draw frequencies over many rows of one 4-token distribution (a broadcast
 * view: row stride 0), each within 4 sigma of N p; tokens a filter removed
 * never appear.  70,000 rows is also more than 65,535 workgroups. */
static void check_freq(const char *what, int64_t rows, const wgml_sample_params *p, const double want[4])
{
    const double probs[4] = {0.1, 0.2, 0.3, 0.4};
    const int64_t one[2] = {1, 4}, full[2] = {rows, 4};
    wgml_tensor *l1 = NULL, *lb = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, one, &l1));
    float lv[4];
    for (int i = 0; i < 4; i++)
        lv[i] = (float)log(probs[i]);
    CHECK_OK(wgml_tensor_upload(l1, lv, sizeof lv));
    CHECK_OK(wgml_view_broadcast(l1, 2, full, &lb));
    int32_t *ids = run_sample(lb, p);
    int64_t cnt[4] = {0}, other = 0;
    for (int64_t r = 0; r < rows; r++) {
        if (ids[r] >= 0 && ids[r] < 4)
            cnt[ids[r]]++;
        else
            other++;
    }
    CHECK(other == 0, "%s: %lld ids out of range", what, (long long)other);
    for (int i = 0; i < 4; i++) {
        double e = (double)rows * want[i], sd = sqrt((double)rows * want[i] * (1 - want[i]));
        CHECK(fabs((double)cnt[i] - e) <= 4 * sd, "%s: token %d drawn %lld times, expected %.0f +- %.0f", what, i,
              (long long)cnt[i], e, 4 * sd);
    }
    free(ids);
    wgml_tensor_free(lb);
    wgml_tensor_free(l1);
}

static void t_sample_frequencies(void)
{
    const double plain[4] = {0.1, 0.2, 0.3, 0.4};
    const double cold[4] = {0.01 / 0.3, 0.04 / 0.3, 0.09 / 0.3, 0.16 / 0.3}; /* T 0.5: p^2 renormalised */
    const double topp[4] = {0, 0, 3.0 / 7, 4.0 / 7};    /* 0.4 + 0.3 >= 0.65 */
    const double minp[4] = {0, 2.0 / 9, 3.0 / 9, 4.0 / 9}; /* p >= 0.45 * 0.4 = 0.18 */
    const double topk[4] = {0, 0, 3.0 / 7, 4.0 / 7};
    wgml_sample_params a = sp(1, 0, 1, 0, 2024), b = sp(0.5f, 0, 1, 0, 7), c = sp(1, 0, 0.65f, 0, 8),
                       d = sp(1, 0, 1, 0.45f, 9), e = sp(1, 2, 1, 0, 10);
    check_freq("plain, 70k rows", 70000, &a, plain);
    check_freq("temperature 0.5", 20000, &b, cold);
    check_freq("top_p 0.65", 20000, &c, topp);
    check_freq("min_p 0.45", 20000, &d, minp);
    check_freq("top_k 2", 20000, &e, topk);
}

/* Edge rows: -inf logits are never drawn, NaN neither; a row whose
 * largest logit is +inf or whose logits are all -inf is greedy; ties at
 * the top_k boundary are all kept. */
static void t_sample_edges(void)
{
    const int64_t s[2] = {5, 6};
    float v[5][6] = {
        {-INFINITY, 0, -INFINITY, 0, NAN, -INFINITY},
        {1, INFINITY, 2, INFINITY, 0, 0},
        {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY},
        {NAN, NAN, NAN, NAN, NAN, NAN},
        {0, 3, 1, 3, 3, -1},
    };
    wgml_tensor *l = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s, &l));
    CHECK_OK(wgml_tensor_upload(l, v, sizeof v));
    int hits[6] = {0};
    for (uint64_t seed = 0; seed < 64; seed++) {
        wgml_sample_params p = sp(1, 2, 1, 0, seed);
        int32_t *ids = run_sample(l, &p);
        CHECK(ids[0] == 1 || ids[0] == 3, "row 0 drew %d", ids[0]);
        CHECK(ids[1] == 1, "row 1 (+inf) drew %d", ids[1]);
        CHECK(ids[2] == 0 && ids[3] == 0, "rows without a finite logit drew %d, %d", ids[2], ids[3]);
        CHECK(ids[4] == 1 || ids[4] == 3 || ids[4] == 4, "row 4 drew %d", ids[4]);
        hits[ids[4]]++;
        double rv[6];
        for (int r = 0; r < 5; r++) {
            for (int i = 0; i < 6; i++)
                rv[i] = v[r][i];
            CHECK(wg_sample_ref(rv, 6, &p, (uint64_t)r, NULL) == ids[r], "row %d differs from the reference", r);
        }
        free(ids);
    }
    CHECK(hits[1] && hits[3] && hits[4], "top_k 2 with a three-way tie kept %d/%d/%d", hits[1], hits[3], hits[4]);
    const int64_t z[2] = {0, 10}, zero = 0;
    wgml_tensor *lz = NULL, *oz = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, z, &lz));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &zero, &oz));
    wgml_sample_params p = sp(1, 0, 1, 0, 1);
    CHECK_OK(wgml_sample(lz, &p, oz));
    wgml_tensor_free(lz);
    wgml_tensor_free(oz);
    wgml_tensor_free(l);
}

/* NaN rule (wgml.h): a NaN logit is never drawn (it ranks below -inf);
 * a row without a finite largest logit is greedy, so a row of NaN gives
 * index 0 and NaN with -inf the first -inf.  Every filter, f32/f16/bf16,
 * 6 and 5000 tokens: each call ends, writes an index in range, never a
 * NaN's unless the row has nothing else, and matches the reference. */
static void t_sample_nan(void)
{
    const double N = NAN, I = INFINITY;
    const double v[5][6] = {{N, 1, N, 2, N, 0}, {N, N, N, N, N, N}, {N, -I, N, -I, N, N}, {N, I, 1, N, I, 2},
                            {3, N, 3, N, 3, N}};
    const wgml_sample_params ps[] = {sp(1, 0, 1, 0, 0), sp(0.7f, 2, 1, 0, 0), sp(1, 0, 0.5f, 0, 0),
                                     sp(1, 0, 1, 0.3f, 0), sp(0, 0, 1, 0, 0), sp(2, 3, 0.9f, 0.05f, 0)};
    const int64_t s[2] = {5, 6}, big[2] = {3, 5000};
    double *bv = malloc(sizeof(double) * 15000);
    for (int i = 0; i < 15000; i++)
        bv[i] = i % 7 == 3 || i >= 10000 ? NAN : t_uniform(-4, 4); /* row 2: NaN only */
    for (size_t d = 0; d < 3; d++)
        for (int b = 0; b < 2; b++) {
            int64_t rows = b ? big[0] : s[0], vocab = b ? big[1] : s[1];
            const double *vals = b ? bv : &v[0][0];
            wgml_tensor *l = t_from(floats[d], 2, b ? big : s, vals);
            double *lv = t_values(l);
            for (size_t k = 0; l && k < sizeof ps / sizeof *ps; k++)
                for (uint64_t seed = 0; seed < 8; seed++) {
                    wgml_sample_params p = ps[k];
                    p.seed = seed;
                    int32_t *ids = run_sample(l, &p);
                    for (int64_t r = 0; r < rows; r++) {
                        int32_t id = ids[r], want = wg_sample_ref(lv + r * vocab, vocab, &p, (uint64_t)r, NULL);
                        bool only_nan = true;
                        for (int64_t i = 0; i < vocab; i++)
                            only_nan = only_nan && isnan(lv[r * vocab + i]);
                        CHECK(id >= 0 && id < vocab && (only_nan || !isnan(lv[r * vocab + id])) && id == want,
                              "%s vocab %lld params %zu seed %llu row %lld: drew %d (reference %d)",
                              wgml_dtype_name(floats[d]), (long long)vocab, k, (unsigned long long)seed, (long long)r,
                              id, want);
                    }
                    free(ids);
                }
            free(lv);
            wgml_tensor_free(l);
        }
    free(bv);
}

static void t_sample_errors(void)
{
    const int64_t s[2] = {4, 10}, r4 = 4, r5 = 5, s3[3] = {1, 4, 10}, z[2] = {4, 0};
    wgml_tensor *l = NULL, *o = NULL, *o5 = NULL, *of = NULL, *li = NULL, *l1 = NULL, *l3 = NULL, *lz = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s, &l));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &r4, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &r5, &o5));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, &r4, &of));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, s, &li));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, &r4, &l1));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 3, s3, &l3));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, z, &lz));
    wgml_sample_params p = sp(1, 0, 1, 0, 1);
    CHECK_OK(wgml_sample(l, &p, o));
    CHECK(wgml_sample(l, &p, o5) == WGML_ERR_SHAPE, "5 outputs for 4 rows accepted");
    CHECK(wgml_sample(l, &p, of) == WGML_ERR_DTYPE, "f32 out accepted");
    CHECK(strstr(wgml_last_error(), "i32") != NULL, "message: %s", wgml_last_error());
    CHECK(wgml_sample(li, &p, o) == WGML_ERR_DTYPE, "i32 logits accepted");
    CHECK(wgml_sample(l1, &p, o) == WGML_ERR_SHAPE, "1-D logits accepted");
    CHECK(wgml_sample(l3, &p, o) == WGML_ERR_SHAPE, "3-D logits accepted");
    CHECK(wgml_sample(lz, &p, o) == WGML_ERR_SHAPE, "empty vocabulary accepted");
    wgml_sample_params bad[] = {sp(-1, 0, 1, 0, 1), sp(NAN, 0, 1, 0, 1), sp(INFINITY, 0, 1, 0, 1), sp(1, -3, 1, 0, 1),
                                sp(1, 0, 1.5f, 0, 1), sp(1, 0, -0.1f, 0, 1), sp(1, 0, 1, 2, 1), sp(1, 0, 1, -1, 1),
                                sp(1, 0, NAN, 0, 1)};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(wgml_sample(l, &bad[i], o) == WGML_ERR_INVALID_ARG, "bad params %zu accepted", i);
    CHECK(wgml_sample(NULL, &p, o) == WGML_ERR_INVALID_ARG, "NULL logits accepted");
    CHECK(wgml_sample(l, NULL, o) == WGML_ERR_INVALID_ARG, "NULL params accepted");
    CHECK(wgml_sample(l, &p, NULL) == WGML_ERR_INVALID_ARG, "NULL out accepted");
    wgml_tensor *all[] = {l, o, o5, of, li, l1, l3, lz};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        wgml_tensor_free(all[i]);
}

/* The RNG: fixed values (so the stream never changes silently), rows and
 * counters independent, 24-bit uniforms with the right mean. */
static void t_rng(void)
{
    uint32_t a = wg_sample_bits(1, 0, 0), b = wg_sample_bits(1, 1, 0), c = wg_sample_bits(2, 0, 0),
             d = wg_sample_bits(1, 0, 1), e = wg_sample_bits(1ull << 32, 0, 0);
    CHECK(a != b && a != c && a != d && a != e && b != c, "streams collide: %08x %08x %08x %08x %08x", a, b, c, d, e);
    double sum = 0;
    int ones = 0;
    for (uint64_t r = 0; r < 100000; r++) {
        uint32_t x = wg_sample_bits(12345, r, 0);
        sum += (double)(x >> 8) * 0x1p-24;
        ones += __builtin_popcount(x);
    }
    CHECK(fabs(sum / 100000 - 0.5) < 4 * sqrt(1.0 / 12 / 100000), "mean of u %.5f", sum / 100000);
    CHECK(fabs(ones / 3200000.0 - 0.5) < 4 * sqrt(0.25 / 3200000), "bit balance %.5f", ones / 3200000.0);
}

static void t_registry(void)
{
    int n = 0;
    for (size_t i = 0; i < wgml_op_count(); i++) {
        const wgml_op_info *r = wgml_op_get(i);
        if (r && (strcmp(r->family, "glu") == 0 || strcmp(r->family, "sample") == 0))
            n += r->dtypes == WG_DT_FLOATS;
    }
    CHECK(n == 5, "expected 4 glu rows and 1 sample row, found %d", n);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"glu_kinds_dtypes_forms_views", t_glu_all},
        {"glu_nan", t_glu_nan},
        {"glu_activation_tails", t_glu_tails},
        {"glu_invalid_calls", t_glu_errors},
        {"sample_rng", t_rng},
        {"sample_matches_reference", t_sample_vs_ref},
        {"sample_256k_vocab", t_sample_big_vocab},
        {"sample_greedy_topk1_ties_seeds", t_sample_greedy_seed},
        {"sample_frequencies_filters_70k_rows", t_sample_frequencies},
        {"sample_edge_rows", t_sample_edges},
        {"sample_nan_logits", t_sample_nan},
        {"sample_invalid_calls", t_sample_errors},
        {"registry", t_registry},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
