/* The NaN rules of the reduce family (include/wgml.h), table-driven on
 * f32, f16 and bf16: every reduction over rows holding NaN, infinities of
 * both signs and neither, read contiguously and through a transposed view
 * (the kept axis contiguous: a different kernel shape) and over a long
 * row split into chunks; cumsum (NaN spreads forward only, also across
 * the blocks of a long row); argsort and top_k (NaN above +inf).
 *
 * Tolerances: the finite expectations are sums and products of small
 * integers (exact) or LOGSUMEXP / STD / L2NORM of them, within a few f32
 * ulps (rtol 1e-6); 16-bit outputs add their rounding (t_compare). */
#include "nan_table.h"
#include "ops/reduce.h"

#define NR 6
#define NC 6
static const double rows_in[NR][NC] = {
    {1, NAN, 3, NAN, -2, 0},
    {NAN, NAN, NAN, NAN, NAN, NAN},
    {INFINITY, NAN, -INFINITY, 1, 2, 3},
    {-INFINITY, 1, 2, NAN, 5, INFINITY},
    {1, 2, 3, 4, 5, 6},
    {INFINITY, -INFINITY, 1, 2, 3, 4},
};

/* Expected value per row; rows 0..3 hold a NaN, row 4 none, row 5 both
 * infinities (SUM and VAR meet inf - inf = NaN; MAX, PROD, LOGSUMEXP and
 * L2NORM do not). */
static void want_of(wgml_reduce_op op, double w[NR])
{
    const double N = NAN, I = INFINITY;
    double lse4 = 0;
    for (int j = 1; j <= 6; j++)
        lse4 += exp(j - 6.0);
    lse4 = 6 + log(lse4);
    double t[WGML_REDUCE_COUNT][NR] = {
        [WGML_SUM] = {N, N, N, N, 21, N},
        [WGML_MEAN] = {N, N, N, N, 3.5, N},
        [WGML_RMAX] = {N, N, N, N, 6, I},
        [WGML_RMIN] = {N, N, N, N, 1, -I},
        [WGML_PROD] = {N, N, N, N, 720, -I},
        [WGML_ARGMAX] = {1, 0, 1, 3, 5, 0},  /* the first NaN, as numpy */
        [WGML_ARGMIN] = {1, 0, 1, 3, 0, 1},
        [WGML_LOGSUMEXP] = {N, N, N, N, lse4, I},
        [WGML_VAR] = {N, N, N, N, 35.0 / 12, N},
        [WGML_STD] = {N, N, N, N, sqrt(35.0 / 12), N},
        [WGML_L2NORM] = {N, N, N, N, sqrt(91), I},
    };
    memcpy(w, t[op], sizeof t[op]);
}

/* x [NR, NC] from rows_in, contiguous (transposed 0) or as the transpose
 * of a [NC, NR] tensor (1). */
static wgml_tensor *rows_tensor(wgml_dtype dt, int transposed, wgml_tensor **base)
{
    double v[NR * NC];
    const int64_t s[2] = {NR, NC}, st[2] = {NC, NR};
    for (int r = 0; r < NR; r++)
        for (int c = 0; c < NC; c++)
            v[transposed ? c * NR + r : r * NC + c] = rows_in[r][c];
    *base = t_from(dt, 2, transposed ? st : s, v);
    wgml_tensor *x = NULL;
    if (*base)
        CHECK_OK(transposed ? wgml_view_transpose(*base, 0, 1, &x) : wgml_view_reshape(*base, 2, s, &x));
    return x;
}

static void t_reduce_nan_table(void)
{
    const int64_t os[2] = {NR, 1};
    for (size_t d = 0; d < N_NAN_DTS; d++)
        for (int tr = 0; tr < 2; tr++) {
            wgml_tensor *base = NULL, *x = rows_tensor(nan_dts[d], tr, &base);
            for (int op = 0; x && op < WGML_REDUCE_COUNT; op++) {
                bool arg = op == WGML_ARGMAX || op == WGML_ARGMIN;
                wgml_tensor *o = t_poisoned(arg ? WGML_I32 : nan_dts[d], 2, os);
                char what[64];
                snprintf(what, sizeof what, "%s %s%s", wg_reduce_name((wgml_reduce_op)op),
                         wgml_dtype_name(nan_dts[d]), tr ? " transposed" : "");
                wgml_status st = wgml_reduce((wgml_reduce_op)op, x, 2, 0, o);
                CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
                double w[NR];
                want_of((wgml_reduce_op)op, w);
                t_expect(what, o, w, 1e-6);
                wgml_tensor_free(o);
            }
            wgml_tensor_free(x);
            wgml_tensor_free(base);
        }
}

/* One row of 100,000 (split into chunks merged in a second pass) with
 * NaN at 77,777 and 88,888 among values in [-2, 2]. */
static void t_reduce_nan_long(void)
{
    const int64_t n = 100000, s[2] = {1, 100000}, os[2] = {1, 1};
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[i] = t_uniform(-2, 2);
    v[77777] = v[88888] = NAN;
    const wgml_reduce_op ops[] = {WGML_SUM, WGML_RMAX, WGML_RMIN, WGML_ARGMAX, WGML_ARGMIN, WGML_LOGSUMEXP,
                                  WGML_VAR, WGML_L2NORM};
    for (size_t d = 0; d < N_NAN_DTS; d++) {
        wgml_tensor *x = t_from(nan_dts[d], 2, s, v);
        for (size_t k = 0; x && k < sizeof ops / sizeof *ops; k++) {
            bool arg = ops[k] == WGML_ARGMAX || ops[k] == WGML_ARGMIN;
            wgml_tensor *o = t_poisoned(arg ? WGML_I32 : nan_dts[d], 2, os);
            CHECK_OK(wgml_reduce(ops[k], x, 2, 0, o));
            double want = arg ? 77777 : NAN;
            char what[64];
            snprintf(what, sizeof what, "%s %s long row", wg_reduce_name(ops[k]), wgml_dtype_name(nan_dts[d]));
            t_expect(what, o, &want, 0);
            wgml_tensor_free(o);
        }
        wgml_tensor_free(x);
    }
    free(v);
}

/* cumsum: NaN from its position on, nothing before it; inf - inf is NaN. */
static void t_cumsum_nan(void)
{
    const double N = NAN, I = INFINITY;
    const double in[4][5] = {{1, N, 2, 3, 4}, {I, -I, 1, 2, 3}, {1, 2, 3, 4, N}, {N, 1, 2, 3, 4}};
    const double inc[4][5] = {{1, N, N, N, N}, {I, N, N, N, N}, {1, 3, 6, 10, N}, {N, N, N, N, N}};
    const double exc[4][5] = {{0, 1, N, N, N}, {0, I, N, N, N}, {0, 1, 3, 6, 10}, {0, N, N, N, N}};
    const int64_t s[2] = {4, 5};
    for (size_t d = 0; d < N_NAN_DTS; d++)
        for (int ex = 0; ex < 2; ex++) {
            wgml_tensor *x = t_from(nan_dts[d], 2, s, &in[0][0]), *o = t_poisoned(nan_dts[d], 2, s);
            CHECK_OK(wgml_cumsum(x, 1, ex, o));
            char what[48];
            snprintf(what, sizeof what, "cumsum %s%s", wgml_dtype_name(nan_dts[d]), ex ? " exclusive" : "");
            t_expect(what, o, ex ? &exc[0][0] : &inc[0][0], 0);
            wgml_tensor_free(o);
            wgml_tensor_free(x);
        }
    /* one row of 20,000 ones (scanned in blocks) with NaN at 12,345 */
    const int64_t n = 20000, sl[2] = {1, 20000};
    double *v = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        v[i] = i == 12345 ? NAN : 1;
        w[i] = i >= 12345 ? NAN : (double)(i + 1);
    }
    wgml_tensor *x = t_from(WGML_F32, 2, sl, v), *o = t_poisoned(WGML_F32, 2, sl);
    CHECK_OK(wgml_cumsum(x, 1, 0, o));
    t_expect("cumsum f32 long row", o, w, 0);
    wgml_tensor_free(o);
    wgml_tensor_free(x);
    free(v);
    free(w);
}

/* argsort: NaN after +inf ascending, first descending, NaNs in index
 * order; -0 ties +0 (index order).  top_k: NaN counts above +inf. */
static void t_sort_nan(void)
{
    const double N = NAN, I = INFINITY;
    const double in[2][8] = {{3, N, -I, 1, N, I, 0, -0.0}, {N, N, N, N, N, N, N, N}};
    const double asc[2][8] = {{2, 6, 7, 3, 0, 5, 1, 4}, {0, 1, 2, 3, 4, 5, 6, 7}};
    const double desc[2][8] = {{1, 4, 5, 0, 3, 6, 7, 2}, {0, 1, 2, 3, 4, 5, 6, 7}};
    const double tki[2][3] = {{1, 4, 5}, {0, 1, 2}}, tkv[2][3] = {{N, N, I}, {N, N, N}};
    const int64_t s[2] = {2, 8}, ks[2] = {2, 3};
    for (size_t d = 0; d < N_NAN_DTS; d++) {
        wgml_dtype dt = nan_dts[d];
        wgml_tensor *x = t_from(dt, 2, s, &in[0][0]);
        for (int de = 0; de < 2 && x; de++) {
            wgml_tensor *o = t_poisoned(WGML_I32, 2, s);
            CHECK_OK(wgml_argsort(x, de, o));
            char what[48];
            snprintf(what, sizeof what, "argsort %s%s", wgml_dtype_name(dt), de ? " descending" : "");
            t_expect(what, o, de ? &desc[0][0] : &asc[0][0], 0);
            wgml_tensor_free(o);
        }
        wgml_tensor *vi = t_poisoned(WGML_I32, 2, ks), *vv = t_poisoned(dt, 2, ks);
        CHECK_OK(wgml_top_k(x, 3, vv, vi));
        char what[48];
        snprintf(what, sizeof what, "top_k %s indices", wgml_dtype_name(dt));
        t_expect(what, vi, &tki[0][0], 0);
        snprintf(what, sizeof what, "top_k %s values", wgml_dtype_name(dt));
        t_expect(what, vv, &tkv[0][0], 0);
        wgml_tensor_free(vi);
        wgml_tensor_free(vv);
        wgml_tensor_free(x);
    }
    /* rows of 5000 (sorted through global memory) with NaN, infinities
     * and many ties, against the reference */
    const int64_t sl[2] = {2, 5000};
    double *v = malloc(sizeof(double) * 10000);
    for (int i = 0; i < 10000; i++) {
        uint64_t r = t_range(0, 19);
        v[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : floor(t_uniform(-8, 8));
    }
    int32_t want[10000];
    for (size_t d = 0; d < N_NAN_DTS; d++) {
        wgml_tensor *x = t_from(nan_dts[d], 2, sl, v);
        for (int de = 0; de < 2 && x; de++) {
            wgml_tensor *o = t_poisoned(WGML_I32, 2, sl);
            CHECK_OK(wgml_argsort(x, de, o));
            wg_argsort_ref(v, 2, 5000, de, want);
            double wd[10000];
            for (int i = 0; i < 10000; i++)
                wd[i] = want[i];
            char what[48];
            snprintf(what, sizeof what, "argsort %s long rows%s", wgml_dtype_name(nan_dts[d]), de ? " desc" : "");
            t_expect(what, o, wd, 0);
            wgml_tensor_free(o);
        }
        wgml_tensor_free(x);
    }
    free(v);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"reduce_nan_table", t_reduce_nan_table},
        {"reduce_nan_long_row", t_reduce_nan_long},
        {"cumsum_nan", t_cumsum_nan},
        {"argsort_top_k_nan", t_sort_nan},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
