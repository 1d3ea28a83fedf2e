/* wgml_linear_id's grouped path (src/ops/moe.c: pairs sorted by expert on
 * the GPU, one grouped GEMM) against a double-precision reference over the
 * bit-exact CPU dequantiser's weights (quant_table.h make_w): f32, f16
 * and q4_0, q8_0, q4_K, q6_K weights; f32 and f16 x (and f16 out); x
 * broadcast over the used slots; experts with no token and every token
 * on one expert; odd sizes (k off the tile, n odd, a prime token count);
 * a strided ids view; the mat-vec path forced on the same operands; a bad
 * id (WGML_ERR_INDEX naming wgml_linear_id, out untouched); zero tokens;
 * a compiled graph; and, in ctest's _window mode (WGML_MAX_BINDING=65536),
 * weights cut into blocks of experts and of rows.
 *
 * Tolerance of output (t, u, j) with S = sum_i |x_i| * max|w| over the
 * pair's row of x and its expert's weights:
 *     |got - want| <= 2^-24 * (k + 32) * 2 * S + the output's rounding
 * The GEMM sums k products in f32 in sequence (k + 4 roundings of at most
 * 2^-24 of sum_i |x_i w_i| <= S: test_op_matmul's bound); the mat-vec
 * path (forced) forms d (q . x) + m sum(x) with |m| <= max|w|, k / 512 +
 * 24 roundings of 2 S (test_op_matvec's bound).  (k + 32) 2 S covers
 * both.  Weights are the CPU dequantiser's values, which the GPU decodes
 * exactly (f16 scales times small integers), x the dtype's rounded values;
 * a 16-bit out adds one unit of its rounding (op_harness.h t_tol).
 *
 * Lavapipe time goes to compiling GEMM kernels (seconds each): the CI
 * cases share x f32 / k a multiple of 4 (one kernel per weight dtype);
 * WGML_TEST_FULL=1 adds bf16, q4_1, q5_K, mxfp4 and the 64-wide tile.
 */
#include "quant_table.h"
#include "graph_harness.h"
#include "mm.h"

static void force(const char *path) { t_force("linear_id", path); }

typedef struct mcase {
    const char *what;
    wgml_dtype wdt, xdt, odt;
    int64_t E, n, k, T, U;
    bool bcast;  /* x [T, 1, k] */
    int ids;     /* 0 random, 1 all on expert 1, 2 experts 0 and E-1 only, 3 random through a strided view */
} mcase;

/* The case's ids [T, U] (distinct experts per token where U <= E, as a
 * router gives them; repeats otherwise). */
static int32_t *make_ids(const mcase *c)
{
    int32_t *v = malloc(sizeof(int32_t) * (size_t)(c->T * c->U + 1));
    for (int64_t t = 0; t < c->T; t++)
        for (int64_t u = 0; u < c->U; u++) {
            int32_t e = (int32_t)(t_rand() % (uint64_t)c->E);
            if (c->ids == 1)
                e = 1 % (int32_t)c->E;
            else if (c->ids == 2)
                e = (t + u) % 2 ? (int32_t)c->E - 1 : 0;
            else if (c->U <= c->E)
                e = (int32_t)((t * 7 + u * (1 + t % 3) + (int64_t)(t_rand() % 2)) % c->E);
            v[t * c->U + u] = e;
        }
    return v;
}

/* ids as a [T, U] tensor, or (strided) every other element of a
 * [T, 2U + 1] tensor. */
static wgml_tensor *ids_tensor(const mcase *c, const int32_t *v, wgml_tensor **keep)
{
    *keep = NULL;
    if (c->ids != 3)
        return t_idx(2, (int64_t[]){c->T, c->U}, v);
    int64_t W = 2 * c->U + 1;
    int32_t *big = calloc((size_t)(c->T * W + 1), sizeof(int32_t));
    for (int64_t t = 0; t < c->T; t++)
        for (int64_t u = 0; u < c->U; u++)
            big[t * W + 1 + 2 * u] = v[t * c->U + u];
    *keep = t_idx(2, (int64_t[]){c->T, W}, big);
    free(big);
    wgml_tensor *view = NULL;
    CHECK_OK(wgml_view_slice(*keep, 1, 1, W, 2, &view));
    return view;
}

/* Compares out [T, U, n] (values got) with the reference. */
static int compare(const char *what, const mcase *c, const double *got, const double *xv, const double *wv,
                   const int32_t *ids)
{
    int64_t XU = c->bcast ? 1 : c->U, n = c->n, k = c->k;
    int bad = 0;
    for (int64_t t = 0; t < c->T; t++)
        for (int64_t u = 0; u < c->U; u++) {
            const double *x = xv + (t * XU + (c->bcast ? 0 : u)) * k, *w = wv + (int64_t)ids[t * c->U + u] * n * k;
            double sx = 0, mw = 0;
            for (int64_t i = 0; i < k; i++)
                sx += fabs(x[i]);
            for (int64_t i = 0; i < n * k; i++)
                mw = fmax(mw, fabs(w[i]));
            double bound = ldexp((double)(k + 32) * 2 * sx * mw, -24), rtol = 0, atol = 0;
            t_tol(c->odt, &rtol, &atol);
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t i = 0; i < k; i++)
                    s += x[i] * w[j * k + i];
                uint8_t tmp[8];
                wg_host_set(c->odt, tmp, 0, s);
                double want = wg_host_get(c->odt, tmp, 0), g = got[(t * c->U + u) * n + j];
                if (!(fabs(g - want) <= bound + atol + rtol * fabs(want)) && bad++ < 4)
                    printf("    %s: out[%lld, %lld, %lld] = %.9g, want %.9g (bound %.3g)\n", what, (long long)t,
                           (long long)u, (long long)j, g, want, bound + atol + rtol * fabs(want));
        }
        }
    if (bad > 4)
        printf("    %s: %d mismatches of %lld\n", what, bad, (long long)(c->T * c->U * n));
    return bad;
}

/* Runs case c eagerly on `path` ("grouped", "matvec" or NULL: the
 * table) and checks it; *out_vals (when not NULL) gets the values. */
static void run(const mcase *c, const char *path, double **out_vals)
{
    double *wv;
    wgml_tensor *w = make_w(c->wdt, 3, (int64_t[]){c->E, c->n, c->k}, &wv);
    int64_t XU = c->bcast ? 1 : c->U;
    t_tensor x = t_random(c->xdt, 3, (int64_t[]){c->T, XU, c->k}, -1, 1);
    int32_t *iv = make_ids(c);
    wgml_tensor *keep, *ids = ids_tensor(c, iv, &keep);
    wgml_tensor *out = t_poisoned(c->odt, 3, (int64_t[]){c->T, c->U, c->n});
    force(path);
    CHECK_OK(wgml_linear_id(x.t, w, ids, out));
    force(NULL);
    double *got = t_values(out);
    char what[160];
    snprintf(what, sizeof what, "%s (%s)", c->what, path ? path : "table");
    CHECK(compare(what, c, got, x.val, wv, iv) == 0, "%s: mismatches", what);
    if (out_vals)
        *out_vals = got;
    else
        free(got);
    free(wv);
    free(iv);
    t_free(&x);
    wgml_tensor_free(w);
    wgml_tensor_free(ids);
    wgml_tensor_free(keep);
    wgml_tensor_free(out);
}

static bool full(void) { return getenv("WGML_TEST_FULL") != NULL; }

static void run_all(const mcase *cs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        run(&cs[i], "grouped", NULL);
}

/* Weight dtypes, x f32.  CI: q4_K (f16 with odd k everywhere else, f16
 * with f16 x and out in test_layouts, q8_0 in test_graph: 4 GEMM kernels,
 * ~5-10 s of lavapipe compile each); WGML_TEST_FULL=1 adds the rest, k a
 * multiple of 4 (vec4 loads of x).  k 64..256 against tiles of 16 along
 * k; n odd; 37 tokens (prime) x 2 used over 4-5 experts: 74 pairs, > 32
 * rows on some experts (two m-tiles of t32). */
static void test_dtypes(void)
{
    const mcase q4k = {"q4_K", WGML_Q4_K, WGML_F32, WGML_F32, 4, 17, 256, 31, 2, false, 0};
    run(&q4k, "grouped", NULL);
    static const mcase more[] = {
        {"f32", WGML_F32, WGML_F32, WGML_F32, 5, 33, 68, 37, 2, false, 0},
        {"f16", WGML_F16, WGML_F32, WGML_F32, 5, 33, 64, 37, 2, false, 0},
        {"q4_0", WGML_Q4_0, WGML_F32, WGML_F32, 5, 33, 64, 37, 2, false, 0},
        {"q8_0", WGML_Q8_0, WGML_F32, WGML_F32, 5, 33, 96, 37, 2, false, 0},
        {"q6_K", WGML_Q6_K, WGML_F32, WGML_F32, 4, 17, 256, 31, 2, false, 0},
        {"bf16", WGML_BF16, WGML_F32, WGML_F32, 3, 9, 64, 31, 2, false, 0},
        {"q4_1", WGML_Q4_1, WGML_F32, WGML_F32, 3, 9, 64, 31, 2, false, 0},
        {"q5_K", WGML_Q5_K, WGML_F32, WGML_F32, 3, 9, 256, 31, 2, false, 0},
        {"mxfp4", WGML_MXFP4, WGML_F32, WGML_F32, 3, 9, 64, 31, 2, false, 0},
    };
    if (full())
        run_all(more, sizeof more / sizeof *more);
}

/* f16 x and out; x broadcast over the used slots; odd k (no vec4 loads:
 * the f16-weight kernel the other CI cases share). */
static void test_layouts(void)
{
    static const mcase cs[] = {
        {"f16 x, f16 out", WGML_F16, WGML_F16, WGML_F16, 4, 24, 64, 29, 3, false, 0},
        {"x broadcast", WGML_F16, WGML_F32, WGML_F32, 5, 33, 45, 23, 4, true, 0},
        {"odd k", WGML_F16, WGML_F32, WGML_F32, 3, 7, 45, 41, 2, false, 0},
    };
    run_all(cs, sizeof cs / sizeof *cs);
}

/* Routing extremes: experts with no token (only 0 and E-1 of 6 used),
 * every token on one expert (3 m-tiles there, none elsewhere), a strided
 * ids view, and more pairs than a grouping chunk (300 tokens x 2 over 8
 * experts: 3 chunks of 256; x broadcast to stay under the _window mode's
 * 64 KiB, as x and out are bound whole on both paths). */
static void test_routing(void)
{
    static const mcase cs[] = {
        {"empty experts", WGML_F16, WGML_F32, WGML_F32, 6, 33, 45, 37, 2, false, 2},
        {"one expert", WGML_F16, WGML_F32, WGML_F32, 5, 33, 45, 37, 2, false, 1},
        {"strided ids", WGML_F16, WGML_F32, WGML_F32, 5, 33, 45, 37, 2, false, 3},
        {"3 chunks", WGML_F16, WGML_F32, WGML_F32, 8, 20, 45, 300, 2, true, 0},
    };
    run_all(cs, sizeof cs / sizeof *cs);
    /* the 64-row tile (WGML_FORCE lists: 74 pairs on one expert, 2 tiles) */
    if (full())
        run(&cs[1], "grouped,gemm=t64", NULL);
}

/* The same operands through both forced paths (and the table) agree, each
 * within the reference's bound; the table takes the grouped path from
 * wg_moe_path's pair count. */
static void test_paths(void)
{
    const mcase c = {"paths", WGML_F16, WGML_F32, WGML_F32, 5, 33, 45, 37, 2, false, 0};
    uint64_t seed = t_rng_state;
    double *a, *b, *d;
    run(&c, "grouped", &a);
    t_rng_state = seed;
    run(&c, "matvec", &b);
    t_rng_state = seed;
    run(&c, NULL, &d);
    int diff = 0;
    for (int64_t i = 0; i < c.T * c.U * c.n; i++)
        diff += a[i] != d[i];
    CHECK(diff == 0, "the table's run differs from the forced grouped path in %d outputs", diff);
    CHECK(wg_moe_path(74, 5, false) == 1 && wg_moe_path(8, 8, false) == 0, "the table's routing");
    free(a);
    free(b);
    free(d);
    t_env("WGML_FORCE", "linear_id=bogus");
    t_tensor x = t_random(WGML_F32, 3, (int64_t[]){2, 1, 32}, -1, 1);
    double *wv;
    wgml_tensor *w = make_w(WGML_F32, 3, (int64_t[]){2, 4, 32}, &wv);
    wgml_tensor *ids = t_idx(2, (int64_t[]){2, 1}, (const int32_t[]){0, 1});
    wgml_tensor *out = t_poisoned(WGML_F32, 3, (int64_t[]){2, 1, 4});
    wgml_status st = wgml_linear_id(x.t, w, ids, out);
    CHECK(st == WGML_ERR_INVALID_ARG && strstr(wgml_last_error(), "grouped"), "bad WGML_FORCE: %s %s",
          wgml_status_name(st), wgml_last_error());
    force(NULL);
    free(wv);
    t_free(&x);
    wgml_tensor_free(w);
    wgml_tensor_free(ids);
    wgml_tensor_free(out);
}

/* A bad id: WGML_ERR_INDEX at the sync naming wgml_linear_id, out
 * untouched; zero tokens: nothing to do. */
static void test_errors(void)
{
    const int64_t T = 40, U = 2, E = 4, n = 8, k = 45;
    double *wv;
    wgml_tensor *w = make_w(WGML_F16, 3, (int64_t[]){E, n, k}, &wv);
    t_tensor x = t_random(WGML_F32, 3, (int64_t[]){T, U, k}, -1, 1);
    int32_t iv[T * U];
    for (int i = 0; i < T * U; i++)
        iv[i] = i % E;
    iv[57] = (int32_t)E;
    wgml_tensor *idt = t_idx(2, (int64_t[]){T, U}, iv);
    wgml_tensor *out = t_poisoned(WGML_F32, 3, (int64_t[]){T, U, n});
    force("grouped");
    CHECK_OK(wgml_linear_id(x.t, w, idt, out));
    wgml_status st = wgml_ctx_sync(t_ctx);
    CHECK(st == WGML_ERR_INDEX && strstr(wgml_last_error(), "wgml_linear_id"), "bad id: %s %s",
          wgml_status_name(st), wgml_last_error());
    uint32_t *raw = malloc(sizeof(uint32_t) * (size_t)(T * U * n));
    CHECK_OK(wgml_tensor_download(out, raw, sizeof(uint32_t) * (size_t)(T * U * n)));
    int touched = 0;
    for (int64_t i = 0; i < T * U * n; i++)
        touched += raw[i] != 0xa5a5a5a5u;
    CHECK(touched == 0, "bad id: %d outputs written", touched);
    /* the next call with good ids runs (the check is armed afresh) */
    iv[57] = 1;
    wgml_tensor *good = t_idx(2, (int64_t[]){T, U}, iv);
    CHECK_OK(wgml_linear_id(x.t, w, good, out));
    CHECK_OK(wgml_ctx_sync(t_ctx));
    /* zero tokens */
    wgml_tensor *x0 = NULL, *i0 = NULL, *o0 = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 3, (int64_t[]){0, U, k}, &x0));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, (int64_t[]){0, U}, &i0));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 3, (int64_t[]){0, U, n}, &o0));
    CHECK_OK(wgml_linear_id(x0, w, i0, o0));
    CHECK_OK(wgml_ctx_sync(t_ctx));
    force(NULL);
    free(raw);
    free(wv);
    t_free(&x);
    wgml_tensor_free(w);
    wgml_tensor_free(idt);
    wgml_tensor_free(good);
    wgml_tensor_free(out);
    wgml_tensor_free(x0);
    wgml_tensor_free(i0);
    wgml_tensor_free(o0);
}

/* In a compiled graph (symbolic token count, weights a graph tensor): the
 * grouping scratch comes from the arena; two bindings of the dim. */
static void test_graph(void)
{
    const int64_t E = 5, n = 33, k = 64, U = 2, TMAX = 48;
    double *wv;
    wgml_tensor *wt = make_w(WGML_Q8_0, 3, (int64_t[]){E, n, k}, &wv);
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    int64_t tok;
    wgml_node *x, *w, *ids, *y;
    CHECK_OK(wgml_graph_dim(g, "tokens", TMAX, &tok));
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 3, (int64_t[]){tok, U, k}, &x));
    CHECK_OK(wgml_graph_input(g, "ids", WGML_I32, 2, (int64_t[]){tok, U}, &ids));
    CHECK_OK(wgml_graph_tensor(g, "w", wt, &w));
    CHECK_OK(wgml_g_linear_id(g, x, w, ids, WGML_F32, &y));
    CHECK_OK(wgml_graph_output(g, y));
    force("grouped");
    CHECK_OK(wgml_graph_compile(g, NULL));
    const int64_t lens[] = {TMAX, 19};
    for (int r = 0; r < 2; r++) {
        mcase c = {"graph", WGML_Q8_0, WGML_F32, WGML_F32, E, n, k, lens[r], U, false, 0};
        CHECK_OK(wgml_graph_bind_dim(g, tok, c.T));
        t_tensor xh = t_random(WGML_F32, 3, (int64_t[]){c.T, U, k}, -1, 1);
        int32_t *iv = make_ids(&c);
        double *got = malloc(sizeof(double) * (size_t)(c.T * U * n));
        float *gf = malloc(sizeof(float) * (size_t)(c.T * U * n));
        CHECK_OK(wgml_graph_write(g, x, xh.host, (uint64_t)(c.T * U * k) * 4));
        CHECK_OK(wgml_graph_write(g, ids, iv, (uint64_t)(c.T * U) * 4));
        CHECK_OK(wgml_graph_run(g));
        CHECK_OK(wgml_graph_read(g, y, gf, (uint64_t)(c.T * U * n) * 4));
        for (int64_t i = 0; i < c.T * U * n; i++)
            got[i] = gf[i];
        CHECK(compare("graph", &c, got, xh.val, wv, iv) == 0, "graph, %lld tokens", (long long)c.T);
        free(got);
        free(gf);
        free(iv);
        t_free(&xh);
    }
    force(NULL);
    wgml_graph_free(g);
    free(wv);
    wgml_tensor_free(wt);
}

/* Experts of 16 x 513 f16 (16 KiB) x 12: 192 KiB of weights, cut into
 * blocks of experts with 64 KiB windows; experts of 300 x 513 f16 (300
 * KiB) also cut along n (x and out stay under 64 KiB: bound whole).  One
 * window each in the default mode. */
static void test_windows(void)
{
    static const mcase cs[] = {
        {"windows: experts", WGML_F16, WGML_F32, WGML_F32, 12, 16, 513, 13, 2, false, 0},
        {"windows: rows", WGML_F16, WGML_F32, WGML_F32, 2, 300, 513, 9, 2, false, 0},
    };
    run_all(cs, sizeof cs / sizeof *cs);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"weight dtypes", test_dtypes},
        {"layouts", test_layouts},
        {"routing", test_routing},
        {"forced paths", test_paths},
        {"errors", test_errors},
        {"graph", test_graph},
        {"windows", test_windows},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
