/* Matrix products (wgml_matmul, wgml_linear) against a double-precision
 * CPU reference (wg_gemm_ref): every forced kernel variant (WGML_FORCE=
 * gemm=...), odd and prime sizes crossing the 32/64/128 tiles, 1 x n and
 * n x 1, k larger than every tile (split-K), batched broadcast,
 * transposed and non-contiguous views (the copy path), zero sizes, every
 * f32/f16/bf16 mix, alpha/beta/bias/activations, beta = 0 over a NaN out,
 * quantised w of every GGUF block type, dense w, a graph, and errors.
 *
 * Tolerance, per element: the reference uses the operands' rounded
 * values, so the kernel's error is its f32 arithmetic:
 *   |got - want| <= (k + 4) 2^-24 (|alpha| sum_q |a_iq b_qj| + |beta c| + |bias|)
 *                   + 16 2^-24 |want|  (gelu/silu: a few ulps of exp/erfc)
 *                   + the output's own rounding (f16 2^-10, bf16 2^-7 of |want|)
 * The first term is the classic bound for a sum of k products in f32
 * (each partial sum rounds once, relative 2^-24, FMA or not); with inputs
 * uniform in [-1, 1] it is ~k 2^-24 |a||b| and real errors are ~sqrt(k)
 * times smaller.  Split-K adds one rounding per slice sum (S <= 32 < 4).
 * Quantised w: the reference dequantises with the bit-exact CPU decoder,
 * the GPU decodes the same f32 values (d * q products of exact f16 and
 * small integers), so the same bound holds.
 *
 * f16 arithmetic (WGML_PREC_F16, the h variants): a and b are rounded to
 * f16 (either neighbour: 2^-10 each), each product and each partial sum
 * of a tile of at most T = 32 terms rounds in f16 (2^-11 each, a product
 * and an add per FMA at worst), the tiles' sums add in f32:
 *   bound_h = ((T + 1) 2^-11 + 2 2^-10 + (k / T + 4) 2^-24) S + k 2^-14
 * with S = sum_q |alpha a_iq b_qj| (+ |beta c| + |bias| in f32 as above);
 * k 2^-14: results below f16's smallest normal may flush to zero.  With
 * inputs in [-1, 1] that is ~1.8% of S: a wrong element, a lost tile or
 * a lost row of products (|value| ~ sqrt(k / 9), S ~ k / 4) still fails.
 */
#include "quant_table.h"
#include "ops/gemm.h"

static const wgml_dtype floats[] = {WGML_F32, WGML_F16, WGML_BF16};
static const char *const variants[] = {"t128", "t128k16", "t128s", "t64", "t32", "splitk", "h128", "h64", "h128x64"};
#define NV (sizeof variants / sizeof *variants)

static void force(const char *v) { t_force("gemm", v); }

/* Dense [iter] copy of a view's logical values broadcast to iter. */
static double *dense(const double *v, const wgml_tensor *t, const int64_t it[4])
{
    int64_t n = it[0] * it[1] * it[2] * it[3];
    double *d = malloc(sizeof(double) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        d[i] = v[t_bcast_index(wgml_tensor_ndim(t), t->shape, it, i)];
    return d;
}

typedef struct opts {
    int ta, tb;           /* 1: operand made as its transpose and viewed back; 2: every other column (copy path) */
    int bias;             /* 0 none, 1 [n], 2 [m, 1], 3 full out shape */
    float alpha, beta;
    wgml_activation act;
    bool nan_out;         /* out filled with NaN before (beta 0: must not leak) */
    wgml_dtype bias_dt;
    wgml_precision prec;
    bool h16;             /* the product may run in f16: bound_h (prec F16 or an h variant forced) */
} opts;

static const opts plain = {0, 0, 0, 1.0f, 0.0f, WGML_ACT_NONE, false, WGML_F32, WGML_PREC_F32, false};

/* An operand of logical shape (nd, sh) in dtype dt, built per mode. */
static wgml_tensor *operand(wgml_dtype dt, int nd, const int64_t *sh, int mode, t_tensor *keep)
{
    int64_t s2[4];
    memcpy(s2, sh, sizeof(int64_t) * (size_t)nd);
    wgml_tensor *v = NULL;
    if (mode == 1) {
        s2[nd - 1] = sh[nd - 2], s2[nd - 2] = sh[nd - 1];
        *keep = t_random(dt, nd, s2, -1, 1);
        CHECK_OK(wgml_view_transpose(keep->t, nd - 1, nd - 2, &v));
    } else if (mode == 2) {
        s2[nd - 2] = 2 * sh[nd - 2];
        s2[nd - 1] = 2 * sh[nd - 1] + 1;
        *keep = t_random(dt, nd, s2, -1, 1);
        wgml_tensor *a = NULL;
        CHECK_OK(wgml_view_slice(keep->t, nd - 1, 1, 2 * sh[nd - 1] + 1, 2, &a));
        CHECK_OK(wgml_view_slice(a, nd - 2, 0, 2 * sh[nd - 2], 2, &v));
        wgml_tensor_free(a);
    } else {
        *keep = t_random(dt, nd, sh, -1, 1);
        CHECK_OK(wgml_view_slice(keep->t, 0, 0, sh[0], 1, &v));
    }
    return v;
}

/* The per-element bound of the header: s = sum |alpha a b| of the
 * products, e = |beta c| + |bias| (added in f32 either way); h: the
 * product may run in f16 (bound_h). */
static double bound_of(double s, double e, int64_t k, bool h)
{
    if (!h)
        return (double)(k + 4) * ldexp(s + e, -24);
    return (33 * ldexp(1, -11) + 2 * ldexp(1, -10) + ((double)k / 32.0 + 4) * ldexp(1, -24)) * s +
           (double)(k + 4) * ldexp(e, -24) + (double)k * ldexp(1, -14);
}

/* linear_run's precision (test_linear_dequant's f16 case sets it) */
static wgml_precision g_prec = WGML_PREC_F32;

static int compare(const char *what, wgml_dtype odt, const double *got, const double *want, const double *bound,
                   int64_t n)
{
    double rel = odt == WGML_F16 ? ldexp(1, -10) : odt == WGML_BF16 ? ldexp(1, -7) : 0;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        uint8_t tmp[8];
        wg_host_set(odt, tmp, 0, want[i]);
        double w = wg_host_get(odt, tmp, 0), g = got[i];
        double tol = bound[i] + (16 * ldexp(1, -24) + rel) * fabs(w) + ldexp(1, -24) * (odt != WGML_F32);
        bool ok = (isnan(g) && isnan(w)) || g == w || fabs(g - w) <= tol;
        if (!ok && bad++ < 4)
            printf("    %s [%lld]: got %.9g want %.9g (tol %.3g)\n", what, (long long)i, g, w, tol);
    }
    if (bad > 4)
        printf("    %s: %d mismatches of %lld\n", what, bad, (long long)n);
    return bad;
}

/* Runs one product: a [ba..., m, k] . b [bb..., k, n]; nba/nbb batch dims.
 * linear_q: w given instead (then b is ignored). */
static void mm_run(const char *what, wgml_dtype adt, wgml_dtype bdt, wgml_dtype odt, int nba, const int64_t *ba,
                   int nbb, const int64_t *bb, int64_t m, int64_t n, int64_t k, const opts *o)
{
    int64_t ash[4], bsh[4], osh[4];
    int na = nba + 2, nb = nbb + 2, no = (na > nb ? na : nb);
    memcpy(ash, ba, sizeof(int64_t) * (size_t)nba);
    memcpy(bsh, bb, sizeof(int64_t) * (size_t)nbb);
    ash[nba] = m, ash[nba + 1] = k, bsh[nbb] = k, bsh[nbb + 1] = n;
    for (int i = 0; i < no - 2; i++) {
        int ia = na - no + i, ib = nb - no + i;
        int64_t x = ia >= 0 ? ash[ia] : 1, y = ib >= 0 ? bsh[ib] : 1;
        osh[i] = x == 1 ? y : x;
    }
    osh[no - 2] = m, osh[no - 1] = n;
    t_tensor ka = {0}, kb = {0}, kbias = {0};
    wgml_tensor *a = operand(adt, na, ash, o->ta, &ka), *b = operand(bdt, nb, bsh, o->tb, &kb);
    wgml_tensor *bias = NULL;
    if (o->bias) {
        int64_t bs[4] = {n};
        int bn = 1;
        if (o->bias == 2)
            bs[0] = m, bs[1] = 1, bn = 2;
        if (o->bias == 3)
            memcpy(bs, osh, sizeof bs), bn = no;
        kbias = t_random(o->bias_dt, bn, bs, -1, 1);
        bias = kbias.t;
    }
    t_tensor out = t_random(odt, no, osh, -1, 1);
    if (o->nan_out && wgml_tensor_nbytes(out.t))
        CHECK_OK(wgml_buffer_fill(out.t->st->buf, out.t->offset, wgml_tensor_nbytes(out.t),
                                  odt == WGML_F32 ? 0x7fc00000u : 0x7e007e00u));
    double *cv = t_values(out.t);
    wgml_matmul_params p = {o->alpha, o->beta, o->act, o->prec};
    wgml_status st = wgml_matmul(a, b, bias, &p, out.t);
    CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
    if (st == WGML_OK) {
        int64_t it[4] = {1, 1, 1, 1}, bt = 1;
        for (int i = 0; i < no - 2; i++)
            it[4 - no + i] = osh[i];
        bt = it[0] * it[1];
        int64_t ia[4] = {it[0], it[1], m, k}, ib[4] = {it[0], it[1], k, n}, io[4] = {it[0], it[1], m, n};
        double *av = t_values(a), *bv = t_values(b), *A = dense(av, a, ia), *B = dense(bv, b, ib);
        double *biasv = bias ? t_values(bias) : NULL, *D = bias ? dense(biasv, bias, io) : NULL;
        int64_t no_ = bt * m * n;
        double *want = malloc(sizeof(double) * (size_t)(no_ + 1)), *bound = malloc(sizeof(double) * (size_t)(no_ + 1));
        wg_gemm_ref(bt, m, n, k, A, B, cv, D, &p, want);
        for (int64_t z = 0; z < bt; z++)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double s = 0;
                    for (int64_t q = 0; q < k; q++)
                        s += fabs(A[(z * m + i) * k + q] * B[(z * k + q) * n + j]);
                    int64_t x = (z * m + i) * n + j;
                    double e = (o->beta != 0 ? fabs(o->beta * cv[x]) : 0) + (D ? fabs(D[x]) : 0);
                    bound[x] = bound_of(fabs(o->alpha) * s, e, k, o->h16 || o->prec == WGML_PREC_F16);
                }
        double *got = t_values(out.t);
        CHECK(compare(what, odt, got, want, bound, no_) == 0, "%s", what);
        free(av), free(bv), free(A), free(B), free(biasv), free(D), free(want), free(bound), free(got);
    }
    free(cv);
    wgml_tensor_free(a), wgml_tensor_free(b);
    t_free(&ka), t_free(&kb), t_free(&kbias), t_free(&out);
}

static void mm2(const char *what, wgml_dtype adt, wgml_dtype bdt, wgml_dtype odt, int64_t m, int64_t n, int64_t k,
                const opts *o)
{
    mm_run(what, adt, bdt, odt, 0, NULL, 0, NULL, m, n, k, o);
}

/* ------------------------------------------------------------ cases */

static void test_variants(void)
{
    /* odd k and n: one kernel per variant and layout (no vec4 loads) */
    static const int64_t shapes[][3] = {{37, 45, 29}, {130, 129, 71}, {1, 67, 41}, {67, 1, 33}, {5, 7, 3}};
    /* The 8x8 register tiles (t128*, h128) take lavapipe ~40-55 s of
     * CPU each to compile even at half vector width (~120 s for the three,
     * 2026-11-26; CI has no room for them): on a CPU adapter they run with
     * WGML_TEST_FULL=1 or WGML_TEST_T128=1 only (the table never picks
     * them on CPUs; they are tested on GPUs). */
    wgml_device_info info;
    memset(&info, 0, sizeof info);
    wgml_device_info_get(t_ctx, &info);
    bool skip128 = !strcmp(info.device_type, "cpu") && !getenv("WGML_TEST_FULL") && !getenv("WGML_TEST_T128");
    bool f16 = (info.features & WGML_FEATURE_F16) != 0;
    for (size_t v = 0; v < NV; v++) {
        bool h = variants[v][0] == 'h';
        const wg_gemm_variant *gv = wg_gemm_variant_named(variants[v]);
        if (skip128 && gv->tm == 8 && gv->tn == 8) {
            printf("    %s: skipped on a CPU adapter (WGML_TEST_FULL=1 or WGML_TEST_T128=1 runs it)\n", variants[v]);
            continue;
        }
        force(variants[v]);
        if (h && !f16) { /* f16 arithmetic forced on a device without it: refused */
            t_tensor a = t_random(WGML_F32, 2, (int64_t[]){8, 8}, -1, 1), o = t_random(WGML_F32, 2, (int64_t[]){8, 8}, -1, 1);
            wgml_status st = wgml_matmul(a.t, a.t, NULL, NULL, o.t);
            CHECK(st == WGML_ERR_UNSUPPORTED && strstr(wgml_last_error(), "ShaderF16"), "%s without f16: %s", variants[v],
                  wgml_last_error());
            t_free(&a), t_free(&o);
            continue;
        }
        opts t = plain;
        t.h16 = h;
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            char what[96];
            snprintf(what, sizeof what, "%s %lldx%lldx%lld", variants[v], (long long)shapes[s][0],
                     (long long)shapes[s][1], (long long)shapes[s][2]);
            mm2(what, WGML_F32, WGML_F32, WGML_F32, shapes[s][0], shapes[s][1], shapes[s][2], &t);
        }
        t.ta = 1, t.tb = 1;
        mm2("transposed a and b, odd", WGML_F32, WGML_F32, WGML_F32, 35, 41, 47, &t);
        if (h) { /* vec4 loads (a kernel of its own: on CPU adapters with
                  * WGML_TEST_FULL only; test_linear_dequant's f16 case
                  * takes vec4 loads of k-contiguous operands), many tiles */
            if (!skip128) {
                mm2("h: transposed a and b, aligned", WGML_F32, WGML_F32, WGML_F32, 68, 72, 96, &t);
                opts f = t; /* f16 vectors into the f16 tiles as loaded (VAH, VBH) */
                f.ta = 0, f.tb = 1;
                mm2("h: f16 operands, aligned", WGML_F16, WGML_F16, WGML_F32, 64, 68, 72, &f);
            }
            opts e = t; /* the f32 epilogue on the f16 sums (the same kernel) */
            e.ta = 0, e.tb = 0, e.bias = 1, e.beta = 0.5f, e.alpha = -1.5f, e.act = WGML_ACT_SILU;
            mm2("h: alpha, beta, bias, silu", WGML_F32, WGML_F32, WGML_F32, 37, 45, 29, &e);
            /* b k-contiguous: a plain b's column would span k x n x 4 =
             * 80 KB, past test_op_matmul_window's 64 KiB windows */
            t.ta = 0, t.tb = 1;
            mm2("h: k of 9 tiles, b k-contiguous", WGML_F32, WGML_F32, WGML_F32, 66, 70, 287, &t);
        }
    }
    force(NULL);
}

/* The k-step unrolled (gemm.wgsl's KU4 ... KU32; the whole k-tile is the GPUs' default;
 * CPU adapters keep the loop for compile time, so it is forced here): k
 * within one tile, past several and not a multiple of BK.  32 asks the
 * most BK allows (t64 16, h64 32).  On CPU adapters KU8 for t32 and h64
 * only (lavapipe: ~4 s a compile, and CI runs this program in four
 * modes). */
static void test_unrolled(void)
{
    static const char *const vs[] = {"t64", "t32", "h64", "h128x64", "splitk"};
    static const char *const kus[] = {"8", "4", "32"};
    static const int64_t shapes[][3] = {{37, 45, 29}, {67, 70, 131}};
    wgml_device_info info;
    memset(&info, 0, sizeof info);
    wgml_device_info_get(t_ctx, &info);
    bool cpu = !strcmp(info.device_type, "cpu"), f16 = (info.features & WGML_FEATURE_F16) != 0;
    for (size_t u = 0; u < (cpu ? 1 : sizeof kus / sizeof *kus); u++) {
        t_env("WGML_GEMM_KU", kus[u]);
        for (size_t v = 0; v < sizeof vs / sizeof *vs; v++) {
            if ((vs[v][0] == 'h' && !f16) || (cpu && strcmp(vs[v], "t32") && strcmp(vs[v], "h64")))
                continue;
            force(vs[v]);
            opts t = plain;
            t.h16 = vs[v][0] == 'h';
            for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
                char what[96];
                snprintf(what, sizeof what, "%s KU%s %lldx%lldx%lld", vs[v], kus[u], (long long)shapes[s][0],
                         (long long)shapes[s][1], (long long)shapes[s][2]);
                mm2(what, WGML_F32, WGML_F32, WGML_F32, shapes[s][0], shapes[s][1], shapes[s][2], &t);
            }
        }
    }
    t_env("WGML_GEMM_KU", NULL);
    force(NULL);
}

/* Interior tiles' loads without their edge branches (FASTLD: a second
 * copy of the k loop for workgroups whose tile is interior and whose
 * k-tiles are all full; forced on here, the GPUs' default for f16 tiles,
 * 16-bit operands and linears): aligned shapes (vector loads) with
 * interior and edge tiles, k a multiple of every BK (the copy runs) and
 * not (it does not), both k-contiguous layouts, f32 and f16 operands.
 * t128, h64 and h128x64 on GPUs (or WGML_TEST_T128). */
static void test_fast_loads(void)
{
    static const char *const vs[] = {"t64", "t128", "h64", "h128x64"};
    static const int64_t ks[] = {64, 72}; /* b fits test_op_matmul_window's 64 KiB windows */
    wgml_device_info info;
    memset(&info, 0, sizeof info);
    wgml_device_info_get(t_ctx, &info);
    bool skip128 = !strcmp(info.device_type, "cpu") && !getenv("WGML_TEST_FULL") && !getenv("WGML_TEST_T128");
    bool f16 = (info.features & WGML_FEATURE_F16) != 0;
    t_env("WGML_GEMM_FAST", "1");
    for (size_t v = 0; v < sizeof vs / sizeof *vs; v++) {
        if ((skip128 && strcmp(vs[v], "t64")) || (vs[v][0] == 'h' && !f16))
            continue;
        force(vs[v]);
        for (int l = 0; l < 4; l++) {
            opts t = plain;
            t.ta = l % 2, t.tb = l % 2;
            t.h16 = vs[v][0] == 'h';
            char what[96];
            snprintf(what, sizeof what, "%s %s, 136x200x%lld", vs[v],
                     l % 2 ? "a m-contiguous, b k-contiguous" : "a k-contiguous, b n-contiguous", (long long)ks[l / 2]);
            mm2(what, WGML_F32, WGML_F32, WGML_F32, 136, 200, ks[l / 2], &t);
        }
        if (f16) {
            opts t = plain;
            t.h16 = vs[v][0] == 'h';
            t.tb = 1;
            char what[96];
            snprintf(what, sizeof what, "%s f16 operands, b k-contiguous, 136x200x64", vs[v]);
            mm2(what, WGML_F16, WGML_F16, WGML_F32, 136, 200, 64, &t);
        }
    }
    t_env("WGML_GEMM_FAST", NULL);
    force(NULL);
}

static void test_dtype_mix(void)
{
    /* Each dtype in each position (a, b, out); WGML_TEST_FULL=1 runs all
     * 27 mixes (a kernel each: ~1.5 s apiece to compile on lavapipe). */
    static const int mix[][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {1, 1, 1}, {2, 2, 2}, {0, 0, 1}};
    bool full = getenv("WGML_TEST_FULL") != NULL;
    force("t32"); /* one kernel shape: the mix is the point */
    for (int x = 0; x < (full ? 27 : 6); x++) {
        int i = full ? x / 9 : mix[x][0], j = full ? x / 3 % 3 : mix[x][1], l = full ? x % 3 : mix[x][2];
        char what[64];
        snprintf(what, sizeof what, "%s.%s->%s", wgml_dtype_name(floats[i]), wgml_dtype_name(floats[j]),
                 wgml_dtype_name(floats[l]));
        mm2(what, floats[i], floats[j], floats[l], 9, 13, 21, &plain);
    }
    force(NULL);
    opts t = plain;
    t.ta = 1, t.tb = 1;
    mm2("transposed a and b, aligned (vec4 loads)", WGML_F32, WGML_F32, WGML_F32, 36, 40, 48, &t);
    t.ta = 0;
    mm2("f16, transposed b (vec4 loads with ShaderF16)", WGML_F16, WGML_F16, WGML_F16, 64, 68, 72, &t);
}

static void test_layouts(void)
{
    opts o = plain;
    for (int ta = 0; ta < 3; ta++)
        for (int tb = 0; tb < 3; tb++) {
            o.ta = ta, o.tb = tb;
            char what[64];
            snprintf(what, sizeof what, "layout a%d b%d", ta, tb);
            mm2(what, WGML_F32, WGML_F32, WGML_F32, 19, 23, 17, &o);
        }
    o.ta = 2, o.tb = 1;
    mm2("copy a, transposed b, f16", WGML_F16, WGML_F16, WGML_BF16, 21, 24, 16, &o);
}

static void test_batched(void)
{
    int64_t b1[2] = {2, 3}, b2[1] = {3}, b3[1] = {1}, b4[1] = {4};
    mm_run("[2,3] x [3]", WGML_F32, WGML_F32, WGML_F32, 2, b1, 1, b2, 5, 6, 7, &plain);
    mm_run("[1] x [4]", WGML_F32, WGML_F16, WGML_F32, 1, b3, 1, b4, 9, 6, 11, &plain);
    mm_run("[4] x none", WGML_F32, WGML_F32, WGML_F32, 1, b4, 0, NULL, 9, 70, 11, &plain);
    opts o = plain;
    o.ta = 1;
    o.bias = 3;
    mm_run("[2,3] transposed a x [3], full bias", WGML_F32, WGML_F32, WGML_F32, 2, b1, 1, b2, 8, 5, 12, &o);
    force("splitk");
    mm_run("split-K batched [2,3] x [3]", WGML_F32, WGML_F32, WGML_F32, 2, b1, 1, b2, 5, 6, 100, &plain);
    force(NULL);
}

static void test_splitk(void)
{
    /* the table splits: few tiles, large k */
    /* b fits the 64 KiB windows of the window-mode run (a column of a
     * row-major b is not cut along k) */
    mm2("split-K by the table 8x8x1536", WGML_F32, WGML_F32, WGML_F32, 8, 8, 1536, &plain);
    opts o = plain;
    o.beta = 0.5f, o.bias = 1, o.act = WGML_ACT_GELU;
    mm2("split-K with the epilogue", WGML_F32, WGML_F32, WGML_F16, 3, 12, 1100, &o);
    o.tb = 1; /* k-contiguous b is cut along n */
    mm2("split-K, transposed b", WGML_F32, WGML_F32, WGML_F32, 5, 70, 1100, &o);
    mm2("k beyond every tile", WGML_F32, WGML_F32, WGML_F32, 70, 33, 300, &plain);
    /* t64-sized products split below 256 tiles (64 here: 4 slices),
     * thinner ones below 64 */
    int64_t chunk = 0;
    CHECK(wg_gemm_splits(1, 64, 4096, 1024, &chunk) == 4 && chunk == 256, "64x4096x1024 in 4 slices: %lld",
          (long long)chunk);
    CHECK(wg_gemm_splits(1, 32, 4096, 1024, &chunk) == 1, "32x4096x1024 (t32's shape, 64 tiles) not split");
    /* run it outside the 64 KiB window mode only (16 MB of operands there
     * take ~7 minutes of windows on lavapipe; the cases above cover split-K
     * in windows) */
    if (!getenv("WGML_MAX_BINDING")) {
        opts t = plain;
        t.tb = 1;
        mm2("split-K by the table, 64 t64 tiles (64x4096x1024)", WGML_F32, WGML_F32, WGML_F32, 64, 4096, 1024, &t);
    }
}

static void test_zero(void)
{
    mm2("m = 0", WGML_F32, WGML_F32, WGML_F32, 0, 5, 3, &plain);
    mm2("n = 0", WGML_F32, WGML_F32, WGML_F32, 4, 0, 3, &plain);
    opts o = plain;
    o.beta = 2.0f, o.bias = 1, o.act = WGML_ACT_RELU;
    mm2("k = 0: act(beta c + bias)", WGML_F32, WGML_F32, WGML_F32, 4, 5, 0, &o);
    o.beta = 0;
    o.nan_out = true;
    mm2("k = 0, beta 0 over NaN", WGML_F32, WGML_F32, WGML_F16, 4, 5, 0, &o);
    int64_t b0[1] = {0};
    mm_run("batch 0", WGML_F32, WGML_F32, WGML_F32, 1, b0, 0, NULL, 3, 4, 5, &plain);
}

static void test_epilogue(void)
{
    static const wgml_activation acts[] = {WGML_ACT_NONE, WGML_ACT_RELU, WGML_ACT_GELU, WGML_ACT_SILU};
    for (int a = 0; a < 4; a++)
        for (int bias = 0; bias < 4; bias++) {
            opts o = plain;
            o.alpha = 0.75f, o.beta = bias & 1 ? -1.5f : 0.0f, o.bias = bias, o.act = acts[a];
            o.bias_dt = bias == 2 ? WGML_BF16 : WGML_F32;
            char what[64];
            snprintf(what, sizeof what, "act %d bias %d beta %g", a, bias, (double)o.beta);
            mm2(what, WGML_F32, WGML_F32, WGML_F32, 17, 19, 23, &o);
        }
    opts o = plain;
    o.nan_out = true;
    mm2("beta 0 over a NaN out", WGML_F32, WGML_F32, WGML_F32, 17, 19, 23, &o);
    mm2("beta 0 over a NaN f16 out", WGML_F32, WGML_F32, WGML_F16, 17, 19, 23, &o);
    o.alpha = 0;
    mm2("alpha 0", WGML_F32, WGML_F32, WGML_F32, 7, 9, 5, &o);
}

/* ------------------------------------------------------------ linear */

static void linear_run(const char *what, wgml_dtype xdt, wgml_dtype wdt, int64_t m, int64_t n, int64_t k,
                       bool bias_on)
{
    int64_t xs[2] = {m, k}, ws[2] = {n, k}, os[2] = {m, n};
    t_tensor x = t_random(xdt, 2, xs, -1, 1), out = t_random(WGML_F32, 2, os, -1, 1), bias = {0};
    wgml_tensor *w = NULL;
    double *wv = NULL;
    t_tensor wd = {0};
    if (wg_dtype(wdt)->kind == WG_KIND_QUANT) {
        float *deq = NULL;
        w = quant_table(wdt, n, k, &deq, NULL);
        wv = malloc(sizeof(double) * (size_t)(n * k));
        for (int64_t i = 0; i < n * k; i++)
            wv[i] = deq[i];
        free(deq);
    } else {
        wd = t_random(wdt, 2, ws, -1, 1);
        w = wd.t;
        wv = t_values(w);
    }
    if (bias_on) {
        int64_t bs[1] = {n};
        bias = t_random(WGML_F32, 1, bs, -1, 1);
    }
    wgml_matmul_params p = {1.0f, 0.0f, WGML_ACT_NONE, g_prec};
    wgml_status st = wgml_linear(x.t, w, bias.t, &p, out.t);
    CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
    if (st == WGML_OK) {
        double *B = malloc(sizeof(double) * (size_t)(n * k + 1)), *D = NULL;
        for (int64_t i = 0; i < n; i++)
            for (int64_t q = 0; q < k; q++)
                B[q * n + i] = wv[i * k + q];
        if (bias_on) {
            D = malloc(sizeof(double) * (size_t)(m * n));
            for (int64_t i = 0; i < m * n; i++)
                D[i] = bias.val[i % n];
        }
        double *want = malloc(sizeof(double) * (size_t)(m * n + 1)), *bound = malloc(sizeof(double) * (size_t)(m * n + 1));
        wg_gemm_ref(1, m, n, k, x.val, B, NULL, D, &p, want);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t q = 0; q < k; q++)
                    s += fabs(x.val[i * k + q] * B[q * n + j]);
                bound[i * n + j] = bound_of(s, D ? fabs(D[i * n + j]) : 0, k, g_prec == WGML_PREC_F16);
            }
        double *got = t_values(out.t);
        CHECK(compare(what, WGML_F32, got, want, bound, m * n) == 0, "%s", what);
        free(B), free(D), free(want), free(bound), free(got);
    }
    free(wv);
    if (!wd.t)
        wgml_tensor_free(w);
    t_free(&x), t_free(&out), t_free(&bias), t_free(&wd);
}

static void test_linear_quant(void)
{
    /* Each block type is one GEMM kernel, and lavapipe compiles one in ~16
     * s of CPU (196 s for all 12): on a CPU adapter the default run takes
     * one type of each decoder family (legacy 4-bit, 8-bit, K-quant 4- and
     * 6-bit, non-linear 4-bit); WGML_TEST_FULL=1 (make soak) runs all.
     * Every type's decoder is the dequantize op's (dequant_fns.wgsl, tested
     * for all types by test_op_quant) and the mat-vec path's tests cover
     * all 15 weight dtypes. */
    wgml_device_info info;
    memset(&info, 0, sizeof info);
    wgml_device_info_get(t_ctx, &info);
    bool some = !strcmp(info.device_type, "cpu") && !getenv("WGML_TEST_FULL");
    for (size_t i = 0; i < NQ; i++) {
        if (qtypes[i] == WGML_Q8_K)
            continue;
        if (some && qtypes[i] != WGML_Q4_0 && qtypes[i] != WGML_Q8_0 && qtypes[i] != WGML_Q4_K &&
            qtypes[i] != WGML_Q6_K && qtypes[i] != WGML_IQ4_NL) {
            printf("    %s: skipped on a CPU adapter (WGML_TEST_FULL=1 runs it)\n", wgml_dtype_name(qtypes[i]));
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "linear %s w", wgml_dtype_name(qtypes[i]));
        linear_run(what, WGML_F32, qtypes[i], 12, 40, 256, i % 2 == 0);
    }
    linear_run("linear q4_0, f16 x, 3 rows (mat-vec or GEMM)", WGML_F16, WGML_Q4_0, 3, 33, 64, true);
    linear_run("linear q4_K, k over two blocks", WGML_F32, WGML_Q4_K, 20, 130, 512, false);
    force("splitk");
    linear_run("linear q8_0 split-K", WGML_F32, WGML_Q8_0, 10, 20, 256, false);
    force(NULL);
}

/* From 32 activation rows a quantised w is dequantised into f32 scratch
 * and the dense GEMM runs on it (matmul.c, QDEQ_ROWS): the same weights
 * exactly, so the same bound.  WGML_FORCE=qgemm=... picks either path. */
static void test_linear_dequant(void)
{
    static const wgml_dtype dts[] = {WGML_Q4_0, WGML_Q8_0, WGML_Q4_K, WGML_Q6_K};
    char what[64];
    for (size_t i = 0; i < sizeof dts / sizeof *dts; i++) {
        snprintf(what, sizeof what, "linear %s w, 40 rows (dequantised)", wgml_dtype_name(dts[i]));
        linear_run(what, WGML_F32, dts[i], 40, 37, 256, i % 2 == 1);
    }
    linear_run("linear q4_K, 33 rows, k over two blocks", WGML_F16, WGML_Q4_K, 33, 70, 512, false);
    /* WGML_PREC_F16 (the LLM's prefill): w dequantised into f16 scratch, then
     * h64 where the device has f16 arithmetic (else f32: the bound holds) */
    g_prec = WGML_PREC_F16;
    linear_run("linear q4_K, 64 rows, f16 arithmetic", WGML_F32, WGML_Q4_K, 64, 72, 512, true);
    g_prec = WGML_PREC_F32;
    t_env("WGML_FORCE", "qgemm=dequant");
    linear_run("linear q5_K, 12 rows, forced dequant", WGML_F32, WGML_Q5_K, 12, 20, 256, true);
    t_env("WGML_FORCE", "qgemm=fused");
    linear_run("linear q4_K, 40 rows, forced fused", WGML_F32, WGML_Q4_K, 40, 37, 256, false);
    t_env("WGML_FORCE", "qgemm=nope");
    t_tensor x = t_random(WGML_F32, 2, (int64_t[]){40, 32}, -1, 1), out = t_random(WGML_F32, 2, (int64_t[]){40, 8}, -1, 1);
    float *deq = NULL;
    wgml_tensor *w = quant_table(WGML_Q8_0, 8, 32, &deq, NULL);
    wgml_status st = wgml_linear(x.t, w, NULL, NULL, out.t);
    CHECK(st == WGML_ERR_INVALID_ARG && strstr(wgml_last_error(), "dequant"), "qgemm=nope: %s %s",
          wgml_status_name(st), wgml_last_error());
    t_env("WGML_FORCE", NULL);
    free(deq);
    wgml_tensor_free(w);
    t_free(&x), t_free(&out);
}

static void test_linear_dense(void)
{
    for (int i = 0; i < 3; i++) {
        char what[64];
        snprintf(what, sizeof what, "linear dense %s w", wgml_dtype_name(floats[i]));
        linear_run(what, WGML_F32, floats[i], 11, 37, 45, true);
    }
    linear_run("linear dense, f16 x, 1 row", WGML_F16, WGML_F16, 1, 70, 40, false);
    /* x 1-D and 3-D, beta through out */
    int64_t xs[1] = {16}, ws[2] = {5, 16}, os[1] = {5};
    t_tensor x = t_random(WGML_F32, 1, xs, -1, 1), w = t_random(WGML_F32, 2, ws, -1, 1);
    t_tensor out = t_random(WGML_F32, 1, os, -1, 1);
    double *before = t_values(out.t);
    wgml_matmul_params p = {1.0f, 1.0f, WGML_ACT_NONE, WGML_PREC_F32};
    CHECK_OK(wgml_linear(x.t, w.t, NULL, &p, out.t));
    double *got = t_values(out.t);
    int bad = 0;
    for (int j = 0; j < 5; j++) {
        double s = before[j];
        for (int q = 0; q < 16; q++)
            s += x.val[q] * w.val[j * 16 + q];
        bad += fabs(got[j] - s) > 1e-5;
    }
    CHECK(bad == 0, "1-D x with beta 1: %d wrong", bad);
    free(before), free(got);
    t_free(&x), t_free(&w), t_free(&out);
}

/* ------------------------------------------------------------ graph, errors */

static void test_graph(void)
{
    wgml_graph *g = NULL;
    wgml_node *a, *b, *bias, *y;
    int64_t m = 33, n = 20, k = 50;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    if (!g)
        return;
    CHECK_OK(wgml_graph_input(g, "a", WGML_F32, 2, (int64_t[]){m, k}, &a));
    CHECK_OK(wgml_graph_input(g, "b", WGML_F32, 2, (int64_t[]){k, n}, &b));
    CHECK_OK(wgml_graph_input(g, "bias", WGML_F32, 1, (int64_t[]){n}, &bias));
    wgml_matmul_params p = {2.0f, 0.0f, WGML_ACT_SILU, WGML_PREC_F32};
    CHECK_OK(wgml_g_matmul(g, a, b, bias, NULL, &p, WGML_F32, &y));
    wgml_node *bad = NULL;
    wgml_matmul_params pb = {1.0f, 1.0f, WGML_ACT_NONE, WGML_PREC_F32};
    CHECK(wgml_g_matmul(g, a, b, NULL, NULL, &pb, WGML_F32, &bad) == WGML_ERR_INVALID_ARG, "beta without c");
    CHECK(wgml_g_matmul(g, a, a, NULL, NULL, NULL, WGML_F32, &bad) == WGML_ERR_SHAPE, "k mismatch in a graph");
    CHECK_OK(wgml_graph_output(g, y));
    CHECK_OK(wgml_graph_compile(g, NULL));
    t_tensor ta = t_random(WGML_F32, 2, (int64_t[]){m, k}, -1, 1), tb = t_random(WGML_F32, 2, (int64_t[]){k, n}, -1, 1);
    t_tensor tc = t_random(WGML_F32, 1, (int64_t[]){n}, -1, 1);
    CHECK_OK(wgml_graph_write(g, a, ta.host, (uint64_t)(m * k) * 4));
    CHECK_OK(wgml_graph_write(g, b, tb.host, (uint64_t)(k * n) * 4));
    CHECK_OK(wgml_graph_write(g, bias, tc.host, (uint64_t)n * 4));
    CHECK_OK(wgml_graph_run(g));
    float *got = malloc(sizeof(float) * (size_t)(m * n));
    CHECK_OK(wgml_graph_read(g, y, got, (uint64_t)(m * n) * 4));
    double *D = malloc(sizeof(double) * (size_t)(m * n)), *want = malloc(sizeof(double) * (size_t)(m * n));
    for (int64_t i = 0; i < m * n; i++)
        D[i] = tc.val[i % n];
    wg_gemm_ref(1, m, n, k, ta.val, tb.val, NULL, D, &p, want);
    int nbad = 0;
    for (int64_t i = 0; i < m * n; i++)
        nbad += fabs(got[i] - want[i]) > 1e-5 * (1 + fabs(want[i])) * 8;
    CHECK(nbad == 0, "graph matmul: %d wrong", nbad);
    free(got), free(D), free(want);
    t_free(&ta), t_free(&tb), t_free(&tc);
    wgml_graph_free(g);
}

static void test_errors(void)
{
    t_tensor a = t_random(WGML_F32, 2, (int64_t[]){4, 5}, -1, 1), b = t_random(WGML_F32, 2, (int64_t[]){6, 3}, -1, 1);
    t_tensor o = t_random(WGML_F32, 2, (int64_t[]){4, 3}, -1, 1), i32 = t_random(WGML_I32, 2, (int64_t[]){5, 3}, 0, 3);
    t_tensor b2 = t_random(WGML_F32, 2, (int64_t[]){5, 3}, -1, 1), bias = t_random(WGML_F32, 1, (int64_t[]){4}, -1, 1);
    t_tensor o2 = t_random(WGML_F32, 2, (int64_t[]){4, 4}, -1, 1);
    CHECK(wgml_matmul(a.t, b.t, NULL, NULL, o.t) == WGML_ERR_SHAPE, "k mismatch: %s", wgml_last_error());
    CHECK(wgml_matmul(a.t, i32.t, NULL, NULL, o.t) == WGML_ERR_DTYPE, "i32 b: %s", wgml_last_error());
    CHECK(wgml_matmul(a.t, b2.t, NULL, NULL, o2.t) == WGML_ERR_SHAPE, "wrong out: %s", wgml_last_error());
    CHECK(wgml_matmul(a.t, b2.t, bias.t, NULL, o.t) == WGML_ERR_SHAPE, "bias [m] against n: %s", wgml_last_error());
    CHECK(strstr(wgml_last_error(), "bias") != NULL, "message names bias: %s", wgml_last_error());
    t_tensor b55 = t_random(WGML_F32, 2, (int64_t[]){5, 5}, -1, 1);
    CHECK(wgml_matmul(a.t, b55.t, NULL, NULL, a.t) == WGML_ERR_INVALID_ARG, "out aliasing a: %s", wgml_last_error());
    wgml_matmul_params bad_act = {1, 0, (wgml_activation)9, WGML_PREC_F32};
    CHECK(wgml_matmul(a.t, b2.t, NULL, &bad_act, o.t) == WGML_ERR_INVALID_ARG, "activation 9");
    force("bogus");
    CHECK(wgml_matmul(a.t, b2.t, NULL, NULL, o.t) == WGML_ERR_INVALID_ARG, "unknown variant");
    CHECK(strstr(wgml_last_error(), "t128") && strstr(wgml_last_error(), "splitk"), "lists the variants: %s",
          wgml_last_error());
    force(NULL);
    /* linear: quantised k not a multiple of the block; x bf16 */
    float *deq = NULL;
    wgml_tensor *q = quant_table(WGML_Q4_0, 3, 64, &deq, NULL);
    free(deq);
    t_tensor x = t_random(WGML_F32, 2, (int64_t[]){10, 64}, -1, 1), ox = t_random(WGML_F32, 2, (int64_t[]){10, 3}, -1, 1);
    t_tensor xb = t_random(WGML_BF16, 2, (int64_t[]){10, 64}, -1, 1);
    CHECK(wgml_linear(xb.t, q, NULL, NULL, ox.t) == WGML_ERR_DTYPE, "bf16 x: %s", wgml_last_error());
    CHECK(wgml_linear(a.t, q, NULL, NULL, ox.t) == WGML_ERR_SHAPE, "k 5 against 64: %s", wgml_last_error());
    wgml_tensor_free(q);
    t_free(&a), t_free(&b), t_free(&o), t_free(&i32), t_free(&b2), t_free(&bias), t_free(&o2), t_free(&x);
    t_free(&ox), t_free(&xb), t_free(&b55);
}

static void test_dbg(void)
{
    const char *e = getenv("DBG");
    if (!e)
        return;
    int m, n, k, ad, bd, od;
    sscanf(e, "%d,%d,%d,%d,%d,%d", &m, &n, &k, &ad, &bd, &od);
    force(getenv("DBGV"));
    mm2("dbg", (wgml_dtype)ad, (wgml_dtype)bd, (wgml_dtype)od, m, n, k, &plain);
    force(NULL);
}

int main(int argc, char **argv)
{
    t_seed();
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"variants", test_variants},   {"unrolled", test_unrolled}, {"fast_loads", test_fast_loads},   {"dtype_mix", test_dtype_mix}, {"layouts", test_layouts},
        {"batched", test_batched},     {"splitk", test_splitk},       {"zero", test_zero},
        {"epilogue", test_epilogue},   {"linear_quant", test_linear_quant}, {"linear_dequant", test_linear_dequant},
        {"linear_dense", test_linear_dense}, {"graph", test_graph},  {"errors", test_errors}, {"dbg", test_dbg},
    };
    int r = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return r;
}
