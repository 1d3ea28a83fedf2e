/* Mat-vec path of wgml_linear (wg_matvec, called directly) and
 * wgml_linear_id against the bit-exact CPU dequantiser followed by a
 * double-precision product: every weight dtype, every forced variant,
 * 1..8 rows, batched and strided x, odd n, plain rows of odd k,
 * bias/beta/alpha/activations, beta 0 with NaN in out, f16 x and f16/bf16
 * out, errors, linear_id with repeated, broadcast and bad ids, weights
 * wider than a binding window (WGML_MAX_BINDING=65536 mode), a context
 * without subgroups, and the wide path (every dtype it takes, forced).
 *
 * Tolerance of output (r, j), from the kernel's arithmetic: each weight
 * is d * q + m in f32 with the sum formed as d * (q . x) + m * sum(x),
 * so intermediate terms reach S = sum_i |x_i| * (max |w| + max |m|)
 * <= 2 sum_i |x_i| max|w| (m is at most the block's largest |w|: q4_0's
 * -8d, K-quants' dmin * min).  Each thread adds its ~k / 512 units in
 * sequence (each unit 8 products and 2 adds), then a reduction of depth
 * <= 7 (128 threads) adds the partials: at most L = k / 512 + 24
 * roundings of 2^-24 relative on S.  The wide path's threads add k / 2048
 * or fewer chunks (32 or 64 elements; WG >= 32 threads), each a chain of
 * at most ~12 roundings (4-term dots, the quarter's 4 dots, its scale,
 * the 4 quarters, the m terms over quarter sums of x: |m| sum|x| <= S),
 * so k / 2048 + 12 + 7 stays within the same L, and
 *
 *     |got - want| <= 2^-24 * (k / 512 + 24) * 2 * sum|x| * max|w| * |alpha|
 * plus the epilogue's few roundings of |want| (4 ulps, GELU/SiLU's
 * polynomial and exp errors included: 16 ulps), plus one unit of a
 * 16-bit output's rounding (op_harness.h's t_tol).  The weights are the
 * CPU dequantiser's values, so the reference sees exactly the weights
 * the kernel decodes (fp16 scales times small integers are exact in f32).
 */
#include "quant_table.h"
#include "mm.h"

static const wgml_dtype wtypes[] = {WGML_F32,  WGML_F16,  WGML_BF16, WGML_Q4_0, WGML_Q4_1,   WGML_Q5_0,
                                    WGML_Q5_1, WGML_Q8_0, WGML_Q2_K, WGML_Q3_K, WGML_Q4_K,   WGML_Q5_K,
                                    WGML_Q6_K, WGML_IQ4_NL, WGML_MXFP4};

static double act_ref(wgml_activation a, double v)
{
    switch (a) {
    case WGML_ACT_RELU: return v < 0 ? 0 : v;
    case WGML_ACT_GELU: return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    case WGML_ACT_SILU: return v / (1 + exp(-v));
    default: return v;
    }
}

/* One product: x rows (R of k, xv logical), w [n, k] (wv), optional bias
 * [n] and c (R x n, logical) -> compares out. */
static void compare_out(const char *what, wgml_dtype wdt, const wgml_tensor *out, int64_t R, int64_t n, int64_t k,
                        const double *xv, const double *wv, const double *bias, const double *c,
                        wgml_matmul_params p)
{
    double *got = t_values(out);
    double drel = 0, dabs = 0;
    t_tol(out->dtype, &drel, &dabs);
    /* The integer path multiplies the weights by x rounded to d_b * code_i,
     * d_b = max|x| / 127 over x's 32-element block b, code_i = round(x_i /
     * d_b): the reference takes those values (so a 1% error in a scale
     * fails).  The GPU's division is not correctly rounded (WGSL allows
     * 2.5 ulp), so a code whose x_i / d_b lies within 1e-4 of a half may
     * round the other way: such an element adds |w_i| d_b to the tolerance. */
    bool q8 = wg_matvec_int8(out->ctx, wdt, R, n, k);
    double *xr = malloc(sizeof(double) * (size_t)(k + 1)), *amb = malloc(sizeof(double) * (size_t)(k + 1));
    int bad = 0;
    for (int64_t r = 0; r < R; r++) {
        double sx = 0;
        for (int64_t i = 0; i < k; i++) {
            sx += fabs(xv[r * k + i]);
            xr[i] = xv[r * k + i];
            amb[i] = 0;
        }
        for (int64_t b = 0; q8 && b < k; b += 32) {
            double amax = 0;
            for (int64_t e = b; e < b + 32; e++)
                amax = fmax(amax, fabs(xv[r * k + e]));
            double d = (float)(amax / 127);
            for (int64_t e = b; e < b + 32 && amax > 0; e++) {
                double v = xv[r * k + e] * 127 / amax;
                xr[e] = d * nearbyint(v);
                amb[e] = fabs(fabs(v - floor(v)) - 0.5) < 1e-4 ? d : 0;
            }
        }
        for (int64_t j = 0; j < n; j++) {
            double s = 0, wmax = 0, qerr = 0;
            for (int64_t i = 0; i < k; i++) {
                s += xr[i] * wv[j * k + i];
                wmax = fmax(wmax, fabs(wv[j * k + i]));
                qerr += amb[i] * fabs(wv[j * k + i]);
            }
            double pre = p.alpha * s + (p.beta != 0 ? p.beta * c[r * n + j] : 0) + (bias ? bias[j] : 0);
            double want = act_ref(p.act, pre);
            double tol = (ldexp(1.0, -24) * ((double)k / 512 + 24) * 2 * sx * wmax + qerr) * fabs(p.alpha) +
                         ldexp(1.0, -24) * 16 * (fabs(pre) + fabs(want)) + dabs + drel * fabs(want) +
                         (p.beta != 0 ? ldexp(1.0, -23) * fabs(p.beta * c[r * n + j]) : 0);
            double g = got[r * n + j];
            if (!(fabs(g - want) <= tol) && bad++ < 4)
                printf("    %s [%lld, %lld]: got %.9g want %.9g (tol %.3g)\n", what, (long long)r, (long long)j, g,
                       want, tol);
        }
    }
    CHECK(bad == 0, "%s: %d mismatches%s", what, bad, q8 ? " (integer path)" : "");
    free(got);
    free(xr);
    free(amb);
}

static const wgml_matmul_params plain = {1.0f, 0.0f, WGML_ACT_NONE, WGML_PREC_F32};

/* x [R, k] (xdt) . w^T -> out [R, n] (odt) through wg_matvec. */
static void run_case(const char *what, wgml_dtype wdt, int64_t R, int64_t n, int64_t k, wgml_dtype xdt, wgml_dtype odt)
{
    double *wv;
    wgml_tensor *w = make_w(wdt, 2, (int64_t[]){n, k}, &wv);
    t_tensor x = t_random(xdt, 2, (int64_t[]){R, k}, -1, 1);
    wgml_tensor *out = t_poisoned(odt, 2, (int64_t[]){R, n});
    CHECK_OK(wg_matvec(x.t, w, NULL, NULL, &plain, out));
    compare_out(what, wdt, out, R, n, k, x.val, wv, NULL, NULL, plain);
    free(wv);
    t_free(&x);
    wgml_tensor_free(w);
    wgml_tensor_free(out);
}

static void test_every_dtype(void)
{
    for (size_t i = 0; i < sizeof wtypes / sizeof *wtypes; i++) {
        bool plain_w = wg_dtype_is_plain(wtypes[i]);
        int64_t k = plain_w ? 77 : wg_dtype(wtypes[i])->block_elems == 256 ? 512 : 160;
        run_case(wgml_dtype_name(wtypes[i]), wtypes[i], 1, 37, k, WGML_F32, WGML_F32);
    }
}

static void test_rows(void)
{
    char what[32];
    for (int64_t R = 1; R <= WG_MATVEC_MAX_ROWS; R++) {
        snprintf(what, sizeof what, "q4_0 %lld rows", (long long)R);
        run_case(what, WGML_Q8_0, R, 33, 128, WGML_F32, WGML_F32);
    }
}

static bool in_set(const char *name, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, set[i]))
            return true;
    return false;
}

static void test_variants(void)
{
    static const char *names[] = {"sg_r1", "sg_r2", "sg_r4",   "wg_r1",   "wg_r2",
                                  "wg_r4", "sg_r4u1", "sg_r4u4", "sg_r2u8", "sg_r8u2"};
    /* wide variants and their steps (WG x UPT chunks of 64 q4_K / q6_K
     * elements): k is one or two whole steps and 4 or 8 chunks more */
    static const struct { const char *name; int64_t k; } wide[] = {
        {"sgw_r1", 8704}, {"sgw_r2", 4352}, {"sgw_r4", 4352}, {"wgw_r1", 8704},
        {"wgw_r2", 4352}, {"wgw_r4", 4352}, {"sgw_r4u2", 8704}, {"sgw_r8", 2304},
        {"sgq_r1", 8704}, {"sgq_r2", 4352}, {"sgq_r4", 4352}, {"wgq_r1", 8704},
        {"wgq_r2", 4352}, {"wgq_r4", 4352}, {"sgq_r4u2", 8704}, {"sgq_r8", 2304}, {"sgq_r2u2", 4352},
        {"sgq_r4t128", 8704}, {"sgq_r4t256", 8704}, /* t256: the table's for k >= 8192 on GPUs (x within 64 KiB windows) */
        {"sgx_r2", 4352}, {"sgx_r1", 8704}, /* x quantised by each workgroup (matvec_xs.wgsl) */
        {"sgx_r2t512", 8704},                /* 512 threads: a GPU's table for long rows of many rows */
        {"sgx_r4", 4352}, {"sgx_r1t1024", 8704}, /* 32 rows a workgroup, as the norm split's producer may run */
        {"sgx_r2t1024k2", 8704}, {"sgx_r2t512k2", 4352}, /* the k split: two subgroups a row pair */
        {"sgx_r2t1024k4", 4352},
    };
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(t_ctx, &in));
    /* On a CPU adapter (CI) each wide kernel is 5-20 s of lavapipe
     * compiling: the timing-only variants (sg_r4u1 ... sg_r8u2, sgw_r4u2,
     * sgw_r8) and the wide wgw_* and sgw_r2 (their reductions and row
     * counts are the ones tested here and through the unit path) run only
     * with WGML_TEST_FULL=1 (make soak) or on a GPU. */
    bool some = !strcmp(in.device_type, "cpu") && !getenv("WGML_TEST_FULL");
    /* wgq_r4: the integer path's workgroup-memory reduction (test_int8 takes
     * sgq_r1; sgq_r4 differs from both only in what sg_r4 / sgw_r4 test) */
    static const char *const ci_set[] = {"sg_r1", "sg_r2", "sg_r4", "wg_r1", "wg_r2",
                                         "wg_r4", "sgw_r1", "sgw_r4", "wgq_r4", "sgx_r2", "sgx_r1",
                                         "sgx_r2t512", "sg_r4u4", "sg_r2u8", /* the last five: a GPU's table */
                                         "sgx_r2t1024k2"};
    char env[64];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (names[i][0] == 's' && !(in.features & WGML_FEATURE_SUBGROUPS))
            continue;
        if (some && !in_set(names[i], ci_set, sizeof ci_set / sizeof *ci_set))
            continue;
        snprintf(env, sizeof env, "matvec=%s", names[i]);
        t_env("WGML_FORCE", env);
        /* One kernel each (a cold compile is 1-4 s on lavapipe), k long
         * enough for whole steps of the variant's units (UPT x WG, halved
         * per doubling of rows) and a remainder: q4_K 544 units a row,
         * q8_0 132, f16 4173 elements (a partial last unit). */
        if (i % 3 == 1)
            run_case(names[i], WGML_Q8_0, 2, 9, 1056, WGML_F32, WGML_F32);
        else if (i % 3 == 2)
            run_case(names[i], WGML_F16, 1, 11, 4173, WGML_F32, WGML_F32);
        else
            run_case(names[i], WGML_Q4_K, 1, 130, 4352, WGML_F32, WGML_F32);
    }
    for (size_t i = 0; i < sizeof wide / sizeof *wide; i++) {
        if (wide[i].name[0] == 's' && !(in.features & WGML_FEATURE_SUBGROUPS))
            continue;
        if (some && (!in_set(wide[i].name, ci_set, sizeof ci_set / sizeof *ci_set) || !(in.features & WGML_FEATURE_F16)))
            continue; /* CI's no-f16 mode: test_wide's 16-bit cases cover what the mode changes */
        snprintf(env, sizeof env, "matvec=%s", wide[i].name);
        t_env("WGML_FORCE", env);
        /* q6_K (the funnel-shift loads) where a workgroup has one weight row */
        bool q6 = wide[i].name[5] == '1';
        run_case(wide[i].name, q6 ? WGML_Q6_K : WGML_Q4_K, 1, q6 ? 9 : 130, wide[i].k, WGML_F32, WGML_F32);
        if (!strcmp(wide[i].name, "sgx_r2")) {
            /* 3 workgroups for its 9 groups of 16 rows: each walks three */
            t_env("WGML_MV_XS_WGS", "3");
            run_case("sgx_r2 (3 workgroups)", WGML_Q4_K, 1, 130, wide[i].k, WGML_F32, WGML_F32);
            t_env("WGML_MV_XS_WGS", NULL);
        }
        if (!strcmp(wide[i].name, "sgx_r2t1024k2")) {
            /* q8_0's 32-element chunks: 129 a row, parts of 65 and 64, and
             * 3 workgroups (12 x 256 threads) walking the 7 groups of 32 rows */
            t_env("WGML_MV_XS_WGS", "12");
            run_case("sgx_r2t1024k2 (q8_0, odd chunks)", WGML_Q8_0, 1, 200, 4128, WGML_F32, WGML_F32);
            t_env("WGML_MV_XS_WGS", NULL);
        }
    }
    t_env("WGML_FORCE", NULL);
    t_env("WGML_FORCE", "matvec=nope");
    t_tensor x = t_random(WGML_F32, 1, (int64_t[]){32}, -1, 1);
    double *wv;
    wgml_tensor *w = make_w(WGML_Q8_0, 2, (int64_t[]){4, 32}, &wv), *out = t_poisoned(WGML_F32, 1, (int64_t[]){4});
    wgml_status st = wg_matvec(x.t, w, NULL, NULL, &plain, out);
    CHECK(st == WGML_ERR_INVALID_ARG && strstr(wgml_last_error(), "sg_r4"), "unknown variant: %s %s",
          wgml_status_name(st), wgml_last_error());
    t_env("WGML_FORCE", NULL);
    free(wv);
    t_free(&x);
    wgml_tensor_free(w);
    wgml_tensor_free(out);
}

/* x [2, 3, k] batched; then x a transposed view (k stride != 1) and out a
 * strided slice. */
static void test_batched_strided(void)
{
    int64_t n = 21, k = 64;
    double *wv;
    wgml_tensor *w = make_w(WGML_Q5_0, 2, (int64_t[]){n, k}, &wv);
    t_tensor x = t_random(WGML_F32, 3, (int64_t[]){2, 3, k}, -1, 1);
    wgml_tensor *out = t_poisoned(WGML_F32, 3, (int64_t[]){2, 3, n});
    CHECK_OK(wg_matvec(x.t, w, NULL, NULL, &plain, out));
    compare_out("batched", WGML_Q5_0, out, 6, n, k, x.val, wv, NULL, NULL, plain);
    /* xt [k, 4] transposed -> [4, k] with strides (1, 4); out: every other column of [4, 2n] */
    t_tensor xt = t_random(WGML_F16, 2, (int64_t[]){k, 4}, -1, 1);
    wgml_tensor *xv = NULL, *big = t_poisoned(WGML_F32, 2, (int64_t[]){4, 2 * n}), *ov = NULL;
    CHECK_OK(wgml_view_transpose(xt.t, 0, 1, &xv));
    CHECK_OK(wgml_view_slice(big, 1, 1, 2 * n, 2, &ov));
    double *xl = malloc(sizeof(double) * 4 * (size_t)k);
    for (int64_t r = 0; r < 4; r++)
        for (int64_t i = 0; i < k; i++)
            xl[r * k + i] = xt.val[i * 4 + r];
    CHECK_OK(wg_matvec(xv, w, NULL, NULL, &plain, ov));
    compare_out("strided", WGML_Q5_0, ov, 4, n, k, xl, wv, NULL, NULL, plain);
    free(xl);
    free(wv);
    t_free(&x);
    t_free(&xt);
    wgml_tensor_free(w);
    wgml_tensor_free(out);
    wgml_tensor_free(xv);
    wgml_tensor_free(big);
    wgml_tensor_free(ov);
}

/* bias, beta (c = out itself), alpha, each activation; beta 0 over NaN. */
static void test_epilogue(void)
{
    int64_t R = 2, n = 19, k = 256;
    double *wv;
    wgml_tensor *w = make_w(WGML_Q6_K, 2, (int64_t[]){n, k}, &wv);
    t_tensor x = t_random(WGML_F32, 2, (int64_t[]){R, k}, -1, 1);
    t_tensor bias = t_random(WGML_F16, 1, (int64_t[]){n}, -1, 1);
    for (int a = WGML_ACT_NONE; a <= WGML_ACT_SILU; a++) {
        t_tensor out = t_random(WGML_F32, 2, (int64_t[]){R, n}, -2, 2);
        wgml_matmul_params p = {0.5f, a == WGML_ACT_RELU ? 0.0f : -1.5f, (wgml_activation)a, WGML_PREC_F32};
        if (p.beta == 0)
            CHECK_OK(wgml_buffer_fill(out.t->st->buf, out.t->offset, wgml_tensor_nbytes(out.t), 0x7fc00000u));
        CHECK_OK(wg_matvec(x.t, w, bias.t, p.beta != 0 ? out.t : NULL, &p, out.t));
        char what[32];
        snprintf(what, sizeof what, "epilogue act %d", a);
        compare_out(what, WGML_Q6_K, out.t, R, n, k, x.val, wv, bias.val, out.val, p);
        t_free(&out);
    }
    free(wv);
    t_free(&x);
    t_free(&bias);
    wgml_tensor_free(w);
}

static void test_16bit_io(void)
{
    run_case("f16 x, f16 out", WGML_Q4_K, 2, 40, 256, WGML_F16, WGML_F16);
    run_case("f16 x, bf16 out", WGML_F16, 3, 24, 66, WGML_F16, WGML_BF16);
}

static void expect(wgml_status got, wgml_status want, const char *what)
{
    CHECK(got == want, "%s: got %s (%s), want %s", what, wgml_status_name(got), wgml_last_error(),
          wgml_status_name(want));
    CHECK(got == WGML_OK || strstr(wgml_last_error(), "wgml_linear"), "%s: message '%s' names no op", what,
          wgml_last_error());
}

static void test_errors(void)
{
    double *wv;
    wgml_tensor *w = make_w(WGML_Q8_0, 2, (int64_t[]){8, 64}, &wv), *wi = NULL, *x = NULL, *x9 = NULL, *xi = NULL,
                *out = NULL, *out9 = NULL, *bad = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, (int64_t[]){8, 64}, &wi));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, (int64_t[]){2, 64}, &x));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, (int64_t[]){2, 64}, &xi));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, (int64_t[]){9, 64}, &x9));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, (int64_t[]){2, 8}, &out));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, (int64_t[]){9, 8}, &out9));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, (int64_t[]){2, 7}, &bad));
    expect(wg_matvec(x, wi, NULL, NULL, &plain, out), WGML_ERR_DTYPE, "i32 w");
    expect(wg_matvec(xi, w, NULL, NULL, &plain, out), WGML_ERR_DTYPE, "i32 x");
    expect(wg_matvec(x, w, NULL, NULL, &plain, bad), WGML_ERR_SHAPE, "out shape");
    expect(wg_matvec(x, w, bad, NULL, &plain, out), WGML_ERR_SHAPE, "bias shape");
    expect(wg_matvec(out, w, NULL, NULL, &plain, out), WGML_ERR_SHAPE, "k mismatch");
    expect(wg_matvec(x9, w, NULL, NULL, &plain, out9), WGML_ERR_UNSUPPORTED, "9 rows");
    expect(wg_matvec(x, w, NULL, NULL, &plain, NULL), WGML_ERR_INVALID_ARG, "NULL out");
    free(wv);
    wgml_tensor_free(w);
    wgml_tensor_free(wi);
    wgml_tensor_free(x);
    wgml_tensor_free(xi);
    wgml_tensor_free(x9);
    wgml_tensor_free(out);
    wgml_tensor_free(out9);
    wgml_tensor_free(bad);
}

/* linear_id: w [E, n, k]; x [T, U or 1, k]; ids with repeats. */
static void id_case(const char *what, wgml_dtype wdt, int64_t E, int64_t n, int64_t k, int64_t T, int64_t U,
                    bool bcast, const int32_t *ids_v)
{
    double *wv;
    wgml_tensor *w = make_w(wdt, 3, (int64_t[]){E, n, k}, &wv);
    int64_t XU = bcast ? 1 : U;
    t_tensor x = t_random(WGML_F32, 3, (int64_t[]){T, XU, k}, -1, 1);
    wgml_tensor *ids = t_idx(2, (int64_t[]){T, U}, ids_v);
    wgml_tensor *out = t_poisoned(WGML_F32, 3, (int64_t[]){T, U, n});
    CHECK_OK(wgml_linear_id(x.t, w, ids, out));
    for (int64_t t = 0; t < T; t++)
        for (int64_t u = 0; u < U; u++) {
            /* one (t, u) at a time: the same comparison as a 1-row linear */
            wgml_tensor *o1 = NULL;
            CHECK_OK(wgml_view_slice(out, 0, t, t + 1, 1, &o1));
            wgml_tensor *o2 = NULL;
            CHECK_OK(wgml_view_slice(o1, 1, u, u + 1, 1, &o2));
            /* linear_id has no integer path: the float tolerance (f32) */
            compare_out(what, WGML_F32, o2, 1, n, k, x.val + (t * XU + (bcast ? 0 : u)) * k, wv + ids_v[t * U + u] * n * k,
                        NULL, NULL, plain);
            wgml_tensor_free(o1);
            wgml_tensor_free(o2);
        }
    free(wv);
    t_free(&x);
    wgml_tensor_free(w);
    wgml_tensor_free(ids);
    wgml_tensor_free(out);
}

static void test_linear_id(void)
{
    static const int32_t ids[] = {2, 0, 3, 3, 1, 2};
    id_case("linear_id q8_0", WGML_Q8_0, 4, 40, 64, 3, 2, false, ids);
    id_case("linear_id f16 bcast", WGML_F16, 4, 17, 40, 2, 3, true, ids);
    /* a bad id: WGML_ERR_INDEX at the sync, out untouched */
    double *wv;
    wgml_tensor *w = make_w(WGML_Q4_0, 3, (int64_t[]){4, 8, 32}, &wv);
    t_tensor x = t_random(WGML_F32, 3, (int64_t[]){2, 2, 32}, -1, 1);
    wgml_tensor *idt = t_idx(2, (int64_t[]){2, 2}, (const int32_t[]){1, 3, 4, 0});
    wgml_tensor *out = t_poisoned(WGML_F32, 3, (int64_t[]){2, 2, 8});
    CHECK_OK(wgml_linear_id(x.t, w, idt, out));
    wgml_status st = wgml_ctx_sync(t_ctx);
    CHECK(st == WGML_ERR_INDEX && strstr(wgml_last_error(), "wgml_linear_id"), "bad id: %s %s",
          wgml_status_name(st), wgml_last_error());
    uint32_t raw[32];
    CHECK_OK(wgml_tensor_download(out, raw, sizeof raw));
    int touched = 0;
    for (int i = 0; i < 32; i++)
        touched += raw[i] != 0xa5a5a5a5u;
    CHECK(touched == 0, "bad id: %d outputs written", touched);
    wgml_tensor *bad = t_idx(2, (int64_t[]){2, 3}, (const int32_t[]){0, 0, 0, 0, 0, 0});
    st = wgml_linear_id(x.t, w, bad, out);
    CHECK(st == WGML_ERR_SHAPE, "ids shape: %s", wgml_status_name(st));
    free(wv);
    t_free(&x);
    wgml_tensor_free(w);
    wgml_tensor_free(idt);
    wgml_tensor_free(bad);
    wgml_tensor_free(out);
}

/* Weights of 150 KiB and experts of 2 x 32 KiB: several windows when
 * WGML_MAX_BINDING=65536 (ctest's _window mode), one otherwise. */
static void test_windows(void)
{
    run_case("f16 [300, 256]", WGML_F16, 2, 300, 256, WGML_F32, WGML_F32);
    static const int32_t ids[] = {3, 0, 1, 3};
    id_case("linear_id windows", WGML_F16, 4, 64, 256, 2, 2, false, ids);
}

/* x [2, k] a transposed view of xt [k, 2] (k stride 2: no vec4 loads of
 * x) times w [n, k] (logical values wv). */
static void strided_x_case(const char *what, const wgml_tensor *w, const double *wv)
{
    int64_t n = w->shape[0], k = w->shape[1];
    t_tensor xt = t_random(WGML_F32, 2, (int64_t[]){k, 2}, -1, 1);
    wgml_tensor *xv = NULL, *out = t_poisoned(WGML_F32, 2, (int64_t[]){2, n});
    CHECK_OK(wgml_view_transpose(xt.t, 0, 1, &xv));
    double *xl = malloc(sizeof(double) * 2 * (size_t)k);
    for (int64_t r = 0; r < 2; r++)
        for (int64_t i = 0; i < k; i++)
            xl[r * k + i] = xt.val[i * 2 + r];
    CHECK_OK(wg_matvec(xv, w, NULL, NULL, &plain, out));
    compare_out(what, w->dtype, out, 2, n, k, xl, wv, NULL, NULL, plain);
    free(xl);
    t_free(&xt);
    wgml_tensor_free(xv);
    wgml_tensor_free(out);
}

/* Every dtype of the wide path through it (forced; sgw_r1 / wgw_r1: a
 * step of 128 chunks, of 32 elements but for q4_K and q6_K's 64; q4_K and
 * q6_K's variants in test_variants): k of a step and a few blocks more,
 * 16-byte aligned rows (ALIGN16) and rows at 2-byte offsets (the funnel
 * shifts), plain rows with a partial last unit; 2 activation rows with
 * f16 x and out, strided x, linear_id, a weight wider than a binding
 * window (WGML_MAX_BINDING mode), and a dtype without a wide path (the
 * unit path, same shape). */
static void test_wide(void)
{
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(t_ctx, &in));
    /* one weight row a workgroup: the least code for lavapipe to compile */
    t_env("WGML_FORCE", in.features & WGML_FEATURE_SUBGROUPS ? "matvec=sgw_r1" : "matvec=wgw_r1");
    /* A CPU adapter (CI) compiles each wide kernel in 5-20 s and its table
     * never picks the wide path: there f32, bf16 and strided x run only
     * with WGML_TEST_FULL=1 (make soak; GPUs always run them), and
     * without ShaderF16 (CI's nof16 mode) only the cases with 16-bit data,
     * which that mode changes, recompile. */
    bool cpu = !strcmp(in.device_type, "cpu") && !getenv("WGML_TEST_FULL");
    bool lean = cpu && !(in.features & WGML_FEATURE_F16);
    if (!cpu)
        run_case("wide f32 odd k", WGML_F32, 1, 5, 4197, WGML_F32, WGML_F32);
    run_case("wide f16 aligned", WGML_F16, 1, 5, 4192, WGML_F32, WGML_F32);
    if (!cpu)
        run_case("wide bf16 odd k", WGML_BF16, 1, 5, 4198, WGML_F32, WGML_F32);
    if (!lean) {
        run_case("wide q4_0", WGML_Q4_0, 1, 5, 4192, WGML_F32, WGML_F32);
        run_case("wide q8_0", WGML_Q8_0, 1, 5, 4192, WGML_F32, WGML_F32);
    }
    /* 400 rows of 210 bytes: windows at 2-byte offsets in window mode */
    run_case("wide q6_K 2 rows, f16 x and out, [400, 256]", WGML_Q6_K, 2, 400, 256, WGML_F16, WGML_F16);
    if (lean) {
        t_env("WGML_FORCE", NULL);
        return;
    }
    run_case("wide q5_K (unit path)", WGML_Q5_K, 1, 5, 512, WGML_F32, WGML_F32);
    static const int32_t ids[] = {2, 0, 3, 3, 1, 2};
    id_case("wide linear_id q4_K", WGML_Q4_K, 4, 9, 512, 3, 2, false, ids);
    if (cpu) {
        t_env("WGML_FORCE", NULL);
        return;
    }
    /* strided x (no vec4 loads of x) against q8_0 */
    double *wv;
    wgml_tensor *w = make_w(WGML_Q8_0, 2, (int64_t[]){6, 96}, &wv);
    strided_x_case("wide strided x", w, wv);
    free(wv);
    wgml_tensor_free(w);
    t_env("WGML_FORCE", NULL);
}

/* The integer path (x quantised to 8 bits a 32-element block, then
 * dot4I8Packed against the weight codes), forced (sgq_r1 / wgq_r1): its
 * four dtypes, q4_0 and q8_0 over a step of 128 chunks and more, q6_K's
 * 210-byte rows at 2-byte offsets (400 rows: 64 KiB windows in the window
 * mode, where a window's binding may end inside its last 16-byte piece:
 * PIECE32), 2 rows of f16 x and f16 out, a strided x (the first pass reads
 * it element by element), and NaN and Inf in x (their block's products
 * NaN, the other blocks' as before); then sgx_r2 over the q6_K rows. */
static void test_int8(void)
{
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(t_ctx, &in));
    t_env("WGML_FORCE", in.features & WGML_FEATURE_SUBGROUPS ? "matvec=sgq_r1" : "matvec=wgq_r1");
    run_case("int8 q4_0", WGML_Q4_0, 1, 5, 4192, WGML_F32, WGML_F32);
    run_case("int8 q8_0 2 rows, f16 x and out", WGML_Q8_0, 2, 7, 4192, WGML_F16, WGML_F16);
    run_case("int8 q4_K", WGML_Q4_K, 1, 9, 512, WGML_F32, WGML_F32);
    run_case("int8 q6_K [400, 256]", WGML_Q6_K, 1, 400, 256, WGML_F32, WGML_F32);
    int64_t n = 6, k = 96;
    double *wv;
    wgml_tensor *w = make_w(WGML_Q8_0, 2, (int64_t[]){n, k}, &wv);
    strided_x_case("int8 strided x", w, wv);
    wgml_tensor *out = t_poisoned(WGML_F32, 2, (int64_t[]){2, n});
    /* NaN in row 0's block 1, +Inf in row 1's block 2: those rows' outputs NaN */
    t_tensor x = t_random(WGML_F32, 2, (int64_t[]){2, k}, -1, 1);
    wg_host_set(WGML_F32, x.host, 40, NAN);
    wg_host_set(WGML_F32, x.host, (size_t)(k + 70), INFINITY);
    CHECK_OK(wgml_tensor_upload(x.t, x.host, wgml_tensor_nbytes(x.t)));
    CHECK_OK(wg_matvec(x.t, w, NULL, NULL, &plain, out));
    double *got = t_values(out);
    for (int64_t j = 0; j < 2 * n; j++)
        CHECK(isnan(got[j]), "int8 non-finite x: out[%lld] = %g, want NaN", (long long)j, got[j]);
    free(got);
    free(wv);
    t_free(&x);
    wgml_tensor_free(w);
    wgml_tensor_free(out);
    /* the one-dispatch product over the same 210-byte rows (in the window
     * mode: windows starting at 2-byte offsets) */
    if (in.features & WGML_FEATURE_SUBGROUPS) {
        t_env("WGML_FORCE", "matvec=sgx_r2");
        run_case("int8 one dispatch q6_K [400, 256]", WGML_Q6_K, 1, 400, 256, WGML_F32, WGML_F32);
    }
    t_env("WGML_FORCE", NULL);
}

static void test_no_subgroups(void)
{
    wgml_ctx *keep = t_ctx, *ctx = NULL;
    t_env("WGML_DISABLE", "subgroups");
    wgml_status st = wgml_ctx_create(NULL, &ctx);
    t_env("WGML_DISABLE", NULL);
    CHECK_OK(st);
    if (st != WGML_OK)
        return;
    t_ctx = ctx;
    run_case("no subgroups q4_0", WGML_Q4_0, 2, 20, 64, WGML_F32, WGML_F32);
    t_env("WGML_FORCE", "matvec=sg_r1");
    t_tensor x = t_random(WGML_F32, 1, (int64_t[]){32}, -1, 1);
    wgml_tensor *out = t_poisoned(WGML_F32, 1, (int64_t[]){4});
    double *wv;
    wgml_tensor *w = make_w(WGML_Q8_0, 2, (int64_t[]){4, 32}, &wv);
    st = wg_matvec(x.t, w, NULL, NULL, &plain, out);
    CHECK(st == WGML_ERR_UNSUPPORTED, "sg variant without subgroups: %s", wgml_status_name(st));
    t_env("WGML_FORCE", NULL);
    free(wv);
    t_free(&x);
    wgml_tensor_free(w);
    wgml_tensor_free(out);
    t_ctx = keep;
    wgml_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"every weight dtype", test_every_dtype},
        {"1..8 rows", test_rows},
        {"forced variants", test_variants},
        {"wide path", test_wide},
        {"integer path", test_int8},
        {"batched and strided", test_batched_strided},
        {"epilogue", test_epilogue},
        {"16-bit x and out", test_16bit_io},
        {"errors", test_errors},
        {"linear_id", test_linear_id},
        {"windows", test_windows},
        {"no subgroups", test_no_subgroups},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
