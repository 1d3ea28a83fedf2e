/* Graph fusion of a linear with the rms_norm or glu that makes its x
 * (WG_OP_LINEAR_PRE, src/ops/matvec_pre.c; opt-in, WGML_GRAPH_FUSE=prologue,
 * set here for every case): the fused graph against the
 * same graph compiled with no_fuse, for
 *   norm_res   y = linear(rms_norm(x + r) * g, W), the sum x + r also an
 *              output (the norm's sum_out, now the fused node's);
 *   norm       y = linear(rms_norm(x) * g, W);
 *   glu        y = linear(glu(a, u), W), a and u the halves of one [T, 2k]
 *              tensor (strided rows), swiglu and geglu (tanh);
 * at T = 1 and 2 (the integer mat-vec path's rows: its first pass makes x)
 * and T = 3 and 12 (x made by the norm or glu op in scratch, then the
 * mat-vec or GEMM), with the table's choice (the unit path on CPU
 * adapters: every T falls back) and the integer path forced.
 *
 * Tolerance.  Where x is made in the first pass, its 8-bit codes may
 * differ from the unfused graph's where a value sits within an ulp of a
 * rounding boundary (the norm's sum of squares is added in another
 * order); each such code moves y by d_x |w| <= (max|x| / 127) max|w|.  A
 * row of k = 256 meets at most a handful: 4 such flips, plus 2^-20 of
 * |y| for the f32 sums, bound |y_fused - y_unfused|.  The fallback runs
 * the unfused graph's kernels: the same bound holds trivially.  Dispatch
 * counts prove the path taken: one fewer per product where the first pass
 * makes x (and the residual add, which no_fuse keeps apart).  The
 * residual sum is exact. */
#include "quant_table.h"
#include "graph_harness.h"
#include "mm.h"

#include <math.h>

enum { G_NORM_RES, G_NORM, G_GLU };

typedef struct built {
    wgml_graph *g;
    wgml_node *in[3], *y, *s;
} built;

static int64_t K = 256, N = 37;

static wgml_status build(int kind, int glu, int64_t T, wgml_tensor *w, int fuse, built *b)
{
    memset(b, 0, sizeof *b);
    wgml_status st = wgml_graph_create(t_ctx, &b->g);
    wgml_node *wn = NULL, *h = NULL;
    if (st == WGML_OK) st = wgml_graph_tensor(b->g, "W", w, &wn);
    if (kind == G_GLU) {
        wgml_node *a, *u;
        if (st == WGML_OK) st = wgml_graph_input(b->g, "gu", WGML_F32, 2, (int64_t[]){T, 2 * K}, &b->in[0]);
        if (st == WGML_OK) st = wgml_g_slice(b->g, b->in[0], 1, 0, K, 1, &a);
        if (st == WGML_OK) st = wgml_g_slice(b->g, b->in[0], 1, K, 2 * K, 1, &u);
        if (st == WGML_OK) st = wgml_g_glu(b->g, (wgml_glu_kind)glu, a, u, 0, &h);
    } else {
        wgml_norm_params np = {.kind = WGML_RMS_NORM, .eps = 1e-5f};
        wgml_node *x = NULL;
        if (st == WGML_OK) st = wgml_graph_input(b->g, "x", WGML_F32, 2, (int64_t[]){T, K}, &b->in[0]);
        if (st == WGML_OK) st = wgml_graph_input(b->g, "g", WGML_F32, 1, (int64_t[]){K}, &b->in[2]);
        x = b->in[0];
        if (kind == G_NORM_RES) {
            if (st == WGML_OK) st = wgml_graph_input(b->g, "r", WGML_F32, 2, (int64_t[]){T, K}, &b->in[1]);
            if (st == WGML_OK) st = wgml_g_binary(b->g, WGML_ADD, b->in[0], b->in[1], &b->s);
            if (st == WGML_OK) st = wgml_graph_output(b->g, b->s);
            x = b->s;
        }
        if (st == WGML_OK) st = wgml_g_norm(b->g, x, &np, b->in[2], NULL, NULL, &h);
    }
    if (st == WGML_OK) st = wgml_g_linear(b->g, h, wn, NULL, NULL, NULL, WGML_F32, &b->y);
    if (st == WGML_OK) st = wgml_graph_output(b->g, b->y);
    wgml_graph_options o = {.no_fuse = !fuse};
    if (st == WGML_OK) st = wgml_graph_compile(b->g, &o);
    return st;
}

static void feed(built *b, int kind, int64_t T, const float *x, const float *r, const float *g)
{
    if (kind == G_GLU) {
        CHECK_OK(wgml_graph_write(b->g, b->in[0], x, (uint64_t)(T * 2 * K) * 4));
        return;
    }
    CHECK_OK(wgml_graph_write(b->g, b->in[0], x, (uint64_t)(T * K) * 4));
    CHECK_OK(wgml_graph_write(b->g, b->in[2], g, (uint64_t)K * 4));
    if (kind == G_NORM_RES)
        CHECK_OK(wgml_graph_write(b->g, b->in[1], r, (uint64_t)(T * K) * 4));
}

static void run_case(int kind, int glu, wgml_dtype wdt, int64_t T, bool forced_q8)
{
    float *deq = NULL;
    wgml_tensor *w = quant_table(wdt, N, K, &deq, NULL);
    float *x = host_f32(T * 2 * K, -2, 2), *r = host_f32(T * K, -2, 2), *g = host_f32(K, 0.5, 1.5);
    built f, u;
    char what[96];
    snprintf(what, sizeof what, "%s%s %s T=%lld%s", kind == G_GLU ? "glu" : kind == G_NORM ? "norm" : "norm_res",
             kind == G_GLU ? (glu ? " geglu_tanh" : " swiglu") : "", wgml_dtype_name(wdt), (long long)T,
             forced_q8 ? " (integer path)" : "");
    CHECK_OK(build(kind, glu, T, w, 1, &f));
    CHECK_OK(build(kind, glu, T, w, 0, &u));
    feed(&f, kind, T, x, r, g);
    feed(&u, kind, T, x, r, g);
    CHECK_OK(wgml_graph_run(f.g));
    CHECK_OK(wgml_graph_run(u.g));
    int64_t ny = T * N;
    float *yf = malloc((size_t)ny * 4), *yu = malloc((size_t)ny * 4);
    CHECK_OK(wgml_graph_read(f.g, f.y, yf, (uint64_t)ny * 4));
    CHECK_OK(wgml_graph_read(u.g, u.y, yu, (uint64_t)ny * 4));
    /* the bound of the header: max|x| from the unfused graph's x (the
     * norm's output is at most sqrt(k) max|g| in size; glu's |a| |u|) */
    double wmax = 0, ymax = 0;
    for (int64_t i = 0; i < N * K; i++)
        wmax = fmax(wmax, fabs(deq[i]));
    for (int64_t i = 0; i < ny; i++)
        ymax = fmax(ymax, fabs(yu[i]));
    double xmax = kind == G_GLU ? 4.0 * 2.0 : sqrt((double)K) * 1.5;
    double tol = 4 * (xmax / 127) * wmax + 0x1p-20 * ymax;
    int bad = 0;
    for (int64_t i = 0; i < ny; i++)
        if (!(fabs((double)yf[i] - yu[i]) <= tol)) {
            if (bad++ < 4)
                printf("    %s: y[%lld] fused %.7g unfused %.7g (tol %.3g)\n", what, (long long)i, yf[i], yu[i], tol);
        }
    CHECK(bad == 0, "%s: %d of %lld outputs differ", what, bad, (long long)ny);
    if (kind == G_NORM_RES) { /* the residual sum, now the fused node's second output */
        float *sf = malloc((size_t)(T * K) * 4);
        CHECK_OK(wgml_graph_read(f.g, f.s, sf, (uint64_t)(T * K) * 4));
        int sbad = 0;
        for (int64_t i = 0; i < T * K; i++)
            sbad += sf[i] != x[i] + r[i];
        CHECK(sbad == 0, "%s: %d residual sums wrong", what, sbad);
        free(sf);
    }
    wgml_graph_stats sf, su;
    CHECK_OK(wgml_graph_stats_get(f.g, &sf));
    CHECK_OK(wgml_graph_stats_get(u.g, &su));
    CHECK(sf.fused_nodes > su.fused_nodes, "%s: nothing fused", what);
    /* no_fuse also keeps the residual add apart */
    /* the table's (a GPU's) or forced: the unfused linear's first pass */
    bool first_pass = wg_matvec_int8(t_ctx, wdt, T, N, K) && !wg_matvec_xs(t_ctx, wdt, T, N, K);
    uint64_t want = su.dispatches - (first_pass ? 1 : 0) - (kind == G_NORM_RES ? 1 : 0);
    CHECK(sf.dispatches == want, "%s: %llu dispatches fused, %llu unfused (want %llu)", what,
          (unsigned long long)sf.dispatches, (unsigned long long)su.dispatches, (unsigned long long)want);
    free(yf), free(yu), free(x), free(r), free(g), free(deq);
    wgml_graph_free(f.g);
    wgml_graph_free(u.g);
    wgml_tensor_free(w);
}

static bool full(void) { return getenv("WGML_TEST_FULL") != NULL; }

static void cases(bool q8)
{
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(t_ctx, &in));
    if (q8)
        t_env("WGML_FORCE", in.features & WGML_FEATURE_SUBGROUPS ? "matvec=sgq_r1" : "matvec=wgq_r1");
    /* CI (each kernel is seconds of lavapipe compiling): q4_K at T = 1
     * (the first pass where the integer path is taken) and 3 (the mat-vec
     * fallback), q8_0 at T = 2 on the integer path (two rows);
     * WGML_TEST_FULL: every dtype at every T (12: the GEMM fallback) */
    const wgml_dtype dts[4] = {WGML_Q4_K, WGML_Q8_0, WGML_Q4_0, WGML_Q6_K};
    const int64_t Ts[4] = {1, 2, 3, 12};
    for (int d = 0; d < 4; d++)
        for (int t = 0; t < 4; t++) {
            if (!full() && !(d == 0 && (t == 0 || t == 2)) && !(d == 1 && q8 && t == 1))
                continue;
            run_case(G_NORM_RES, 0, dts[d], Ts[t], q8);
            run_case(G_NORM, 0, dts[d], Ts[t], q8);
            run_case(G_GLU, t % 2 ? WGML_GEGLU_TANH : WGML_SWIGLU, dts[d], Ts[t], q8);
        }
    t_env("WGML_FORCE", NULL);
}

/* glu(y[:, 0::2], y[:, 1::2]) of y = linear(x, w), w's rows gate and up
 * interleaved (a model's gate|up): graph fusion makes one LINEAR_GLU node,
 * which the one-dispatch product (sgx_r2, a GPU's table for one row)
 * writes in one dispatch (XS_GLU) and every other path as linear + glu.
 * Fused and unfused graphs must agree (the same product and the same
 * glu_act), and the dispatch counts say which path ran. */
static void glu_pair_case(wgml_dtype wdt, int glu, int64_t T, bool sgx)
{
    const int64_t M = 37; /* glu outputs: w has 2M rows */
    float *deq = NULL;
    wgml_tensor *w = quant_table(wdt, 2 * M, K, &deq, NULL);
    float *x = host_f32(T * K, -2, 2);
    built b[2];
    float *y[2];
    for (int f = 0; f < 2; f++) {
        built *bb = &b[f];
        memset(bb, 0, sizeof *bb);
        wgml_node *wn = NULL, *gu = NULL, *gv = NULL, *uv = NULL;
        CHECK_OK(wgml_graph_create(t_ctx, &bb->g));
        CHECK_OK(wgml_graph_tensor(bb->g, "W", w, &wn));
        CHECK_OK(wgml_graph_input(bb->g, "x", WGML_F32, 2, (int64_t[]){T, K}, &bb->in[0]));
        CHECK_OK(wgml_g_linear(bb->g, bb->in[0], wn, NULL, NULL, NULL, WGML_F32, &gu));
        CHECK_OK(wgml_g_slice(bb->g, gu, 1, 0, 2 * M, 2, &gv));
        CHECK_OK(wgml_g_slice(bb->g, gu, 1, 1, 2 * M, 2, &uv));
        CHECK_OK(wgml_g_glu(bb->g, (wgml_glu_kind)glu, gv, uv, 0, &bb->y));
        CHECK_OK(wgml_graph_output(bb->g, bb->y));
        wgml_graph_options o = {.no_fuse = f == 1};
        CHECK_OK(wgml_graph_compile(bb->g, &o));
        CHECK_OK(wgml_graph_write(bb->g, bb->in[0], x, (uint64_t)(T * K) * 4));
        CHECK_OK(wgml_graph_run(bb->g));
        y[f] = malloc((size_t)(T * M) * 4);
        CHECK_OK(wgml_graph_read(bb->g, bb->y, y[f], (uint64_t)(T * M) * 4));
    }
    char what[96];
    snprintf(what, sizeof what, "glu pairs %s %s T=%lld%s", glu ? "geglu_tanh" : "swiglu", wgml_dtype_name(wdt),
             (long long)T, sgx ? " (sgx_r2)" : "");
    int bad = 0;
    for (int64_t i = 0; i < T * M; i++)
        if (!(fabs((double)y[0][i] - y[1][i]) <= 0x1p-20 * (1 + fabs(y[1][i])))) {
            if (bad++ < 4)
                printf("    %s: [%lld] fused %.7g unfused %.7g\n", what, (long long)i, y[0][i], y[1][i]);
        }
    CHECK(bad == 0, "%s: %d of %lld outputs differ", what, bad, (long long)(T * M));
    wgml_graph_stats sf, su;
    CHECK_OK(wgml_graph_stats_get(b[0].g, &sf));
    CHECK_OK(wgml_graph_stats_get(b[1].g, &su));
    CHECK(sf.fused_nodes > su.fused_nodes, "%s: nothing fused", what);
    /* the product writes the glu itself: one row on the one-dispatch
     * product (forced, or a GPU's table) */
    bool one = T == 1 && wg_matvec_xs(t_ctx, wdt, 1, 2 * M, K);
    uint64_t want = su.dispatches - (one ? 1 : 0);
    CHECK(sf.dispatches == want, "%s: %llu dispatches fused, %llu unfused (want %llu)", what,
          (unsigned long long)sf.dispatches, (unsigned long long)su.dispatches, (unsigned long long)want);
    for (int f = 0; f < 2; f++) {
        wgml_graph_free(b[f].g);
        free(y[f]);
    }
    free(x), free(deq);
    wgml_tensor_free(w);
}

static void t_glu_pairs(void)
{
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(t_ctx, &in));
    glu_pair_case(WGML_Q4_K, 0, 1, false); /* the table: linear + glu on a CPU adapter, one dispatch on a GPU */
    glu_pair_case(WGML_Q4_K, 0, 3, false);
    if (!(in.features & WGML_FEATURE_SUBGROUPS))
        return;
    t_env("WGML_FORCE", "matvec=sgx_r2");
    glu_pair_case(WGML_Q4_K, 0, 1, true);
    glu_pair_case(WGML_Q8_0, 2, 1, true);
    glu_pair_case(WGML_Q4_K, 0, 2, true); /* two rows: the integer path with its first pass, then glu */
    t_env("WGML_FORCE", NULL);
}

static void t_table(void) { cases(false); }
static void t_integer(void) { cases(true); }

int main(int argc, char **argv)
{
    t_env("WGML_GRAPH_FUSE", "prologue"); /* opt-in (src/graph/fuse.c) */
    if (t_setup(argc, argv))
        return 1;
    static const t_case list[] = {
        {"table", t_table},
        {"integer_path", t_integer},
        {"glu_pairs", t_glu_pairs},
    };
    int rc = t_run(list, sizeof list / sizeof *list, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
