/* Graph fusion around a linear, the fused graph against the same graph
 * compiled with no_fuse: the rms_norm or glu that makes its x
 * (WG_OP_LINEAR_PRE, src/ops/matvec_pre.c; opt-in, WGML_GRAPH_FUSE=prologue,
 * set here for every case), and glu_pairs, rope_kv and xq_tail below (the
 * glu of its column pairs; its rope and KV-cache write; a norm handing it
 * x's 8-bit codes), for
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
    glu_pair_case(WGML_Q4_K, 0, 1, false); /* the table: linear + glu on a CPU adapter, one dispatch on a GPU */
    glu_pair_case(WGML_Q4_K, 0, 3, false);
    if (!force_sgx())
        return;
    glu_pair_case(WGML_Q4_K, 0, 1, true);
    glu_pair_case(WGML_Q8_0, 2, 1, true);
    glu_pair_case(WGML_Q4_K, 0, 2, true); /* two rows: the integer path with its first pass, then glu */
    t_env("WGML_FORCE", NULL);
}

/* set_rows(cache, idx, rope(linear(x, W))[:, H:NH]) with q = the first H
 * heads read by another op (a decoder's q|k|v, k and v written into a
 * joint cache): graph fusion makes one LINEAR_ROPE_KV node, which the
 * one-dispatch product (sgx_r2) runs as one dispatch (XS_ROPE: lane 0
 * rotates each NORMAL pair and writes the cache) and every other path as
 * linear + rope + set_rows.  Fused and unfused graphs must agree: the
 * same product and the same angle code (rope_fns.wgsl), so q within 2^-20
 * of (1 + |q|) (the rotation's multiply-adds may be contracted
 * differently) and the cache within its dtype's rounding of that (one f16
 * ulp, 2^-10 relative); rows the step does not write keep their value
 * (-30000, exact in f16 and far from the O(10) values written).
 * An idx past the cache's rows writes nothing there and fails the next
 * sync with WGML_ERR_INDEX naming wgml_set_rows, fused as unfused. */
enum { RK_H = 4, RK_HKV = 2, RK_NH = RK_H + 2 * RK_HKV, RK_D = 16, RK_ROWS = 9 };

typedef struct rk_case {
    wgml_dtype wdt, cdt;
    int64_t T;
    wgml_rope_mode mode;
    int n_dims, rot;      /* rot: n_heads_rot (0 every head) */
    bool ff, yarn, bad;   /* freq_factors; YaRN; idx past the cache */
    bool norm;            /* x = rms_norm(x) * g first: its codes after its row (xq tail) */
    bool bias;            /* the linear has a bias (qwen2's q|k|v): added in the epilogue unless ff */
} rk_case;

static void rope_kv_case(const rk_case *c, bool sgx)
{
    const int64_t T = c->T, NR = RK_NH * RK_D, W = 2 * RK_HKV * RK_D;
    float *deq = NULL;
    wgml_tensor *w = quant_table(c->wdt, NR, K, &deq, NULL), *ff = NULL;
    float *x = host_f32(T * K, -2, 2), *gh = host_f32(K, 0.5, 1.5), *bh = host_f32(NR, -3, 3), ffh[RK_D / 2];
    int32_t pos[3] = {37, 38, 1000}, idx[3] = {c->bad ? RK_ROWS : 5, 1, 8};
    for (int i = 0; i < RK_D / 2; i++)
        ffh[i] = (float)t_uniform(1, 4);
    if (c->ff) {
        CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, (int64_t[]){RK_D / 2}, &ff));
        CHECK_OK(wgml_tensor_upload(ff, ffh, sizeof ffh));
    }
    wgml_tensor *bt = NULL;
    if (c->bias) {
        CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, (int64_t[]){NR}, &bt));
        CHECK_OK(wgml_tensor_upload(bt, bh, (uint64_t)NR * 4));
    }
    wgml_tensor *cache[2], *c32 = NULL;
    float *q[2], *cv[2];
    wgml_graph_stats st[2];
    wgml_status rs[2];
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, (int64_t[]){RK_ROWS, W}, &c32));
    for (int f = 0; f < 2; f++) {
        CHECK_OK(wgml_tensor_new(t_ctx, c->cdt, 2, (int64_t[]){RK_ROWS, W}, &cache[f]));
        CHECK_OK(wgml_fill(cache[f], -30000.0)); /* exact in f16, far from any value written */
        wgml_graph *g = NULL;
        wgml_node *wn, *xn, *pn, *in, *fn = NULL, *bn = NULL, *cn, *y, *r, *qv, *qo, *kv, *cw;
        CHECK_OK(wgml_graph_create(t_ctx, &g));
        CHECK_OK(wgml_graph_tensor(g, "W", w, &wn));
        CHECK_OK(wgml_graph_tensor(g, "cache", cache[f], &cn));
        if (ff)
            CHECK_OK(wgml_graph_tensor(g, "ff", ff, &fn));
        if (bt)
            CHECK_OK(wgml_graph_tensor(g, "bias", bt, &bn));
        CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){T, K}, &xn));
        CHECK_OK(wgml_graph_input(g, "pos", WGML_I32, 1, (int64_t[]){T}, &pn));
        CHECK_OK(wgml_graph_input(g, "idx", WGML_I32, 1, (int64_t[]){T}, &in));
        wgml_node *h = xn, *gn = NULL;
        if (c->norm) {
            CHECK_OK(wgml_graph_input(g, "g", WGML_F32, 1, (int64_t[]){K}, &gn));
            CHECK_OK(wgml_g_norm(g, xn, &(wgml_norm_params){.kind = WGML_RMS_NORM, .eps = 1e-5f}, gn, NULL, NULL, &h));
        }
        CHECK_OK(wgml_g_linear(g, h, wn, bn, NULL, NULL, WGML_F32, &y));
        CHECK_OK(wgml_g_reshape(g, y, 3, (int64_t[]){T, RK_NH, RK_D}, &y));
        wgml_rope_params rp = {.mode = c->mode, .n_dims = c->n_dims, .freq_base = 10000, .n_heads_rot = c->rot,
                               .ext_factor = c->yarn ? 1.0f : 0.0f, .freq_scale = c->yarn ? 0.25f : 1.0f,
                               .n_ctx_orig = 512};
        CHECK_OK(wgml_g_rope(g, y, pn, &rp, fn, &r));
        CHECK_OK(wgml_g_slice(g, r, 1, 0, RK_H, 1, &qv));
        CHECK_OK(wgml_g_unary(g, WGML_SCALE, qv, 1.0f, 0.0f, &qo));
        CHECK_OK(wgml_g_slice(g, r, 1, RK_H, RK_NH, 1, &kv));
        CHECK_OK(wgml_g_reshape(g, kv, 2, (int64_t[]){T, W}, &kv));
        CHECK_OK(wgml_g_set_rows(g, cn, in, kv, &cw));
        CHECK_OK(wgml_graph_output(g, qo));
        CHECK_OK(wgml_graph_output(g, cw));
        wgml_graph_options o = {.no_fuse = f == 1};
        CHECK_OK(wgml_graph_compile(g, &o));
        CHECK_OK(wgml_graph_write(g, xn, x, (uint64_t)(T * K) * 4));
        CHECK_OK(wgml_graph_write(g, pn, pos, (uint64_t)T * 4));
        CHECK_OK(wgml_graph_write(g, in, idx, (uint64_t)T * 4));
        if (gn)
            CHECK_OK(wgml_graph_write(g, gn, gh, (uint64_t)K * 4));
        rs[f] = wgml_graph_run(g);
        if (rs[f] == WGML_OK)
            rs[f] = wgml_ctx_sync(t_ctx);
        if (c->bad)
            expect(rs[f], WGML_ERR_INDEX, "wgml_set_rows", f ? "bad idx, unfused" : "bad idx, fused");
        else
            CHECK_OK(rs[f]);
        q[f] = malloc((size_t)(T * RK_H * RK_D) * 4);
        cv[f] = malloc((size_t)(RK_ROWS * W) * 4);
        CHECK_OK(wgml_graph_read(g, qo, q[f], (uint64_t)(T * RK_H * RK_D) * 4));
        CHECK_OK(wgml_cast(cache[f], c32));
        CHECK_OK(wgml_tensor_download(c32, cv[f], (uint64_t)(RK_ROWS * W) * 4));
        CHECK_OK(wgml_graph_stats_get(g, &st[f]));
        if (f == 0) { /* the dump names the rope's node as written by the fused one */
            char *txt = dump_both(g);
            CHECK(txt && strstr(txt, "linear_rope_kv") && strstr(txt, "written by node"),
                  "the fused graph's dump names neither the fused node nor what it writes");
            bool xq = c->norm && wg_matvec_xs(t_ctx, c->wdt, 1, NR, K);
            CHECK(txt && (strstr(txt, "reads x codes") != NULL) == xq, "the fused graph's dump %s x's codes",
                  xq ? "does not show" : "shows");
            free(txt);
        }
        wgml_graph_free(g);
    }
    char what[128];
    snprintf(what, sizeof what, "rope kv %s cache %s T=%lld %s n_dims %d rot %d%s%s%s%s%s", wgml_dtype_name(c->wdt),
             wgml_dtype_name(c->cdt), (long long)T, c->mode == WGML_ROPE_NORMAL ? "normal" : "neox", c->n_dims,
             c->rot, c->ff ? " ff" : "", c->bias ? " bias" : "", c->yarn ? " yarn" : "", c->bad ? " bad idx" : "",
             sgx ? " (sgx_r2)" : "");
    int bad = 0;
    for (int64_t i = 0; i < T * RK_H * RK_D; i++)
        if (!(fabs((double)q[0][i] - q[1][i]) <= 0x1p-20 * (1 + fabs(q[1][i]))) && bad++ < 4)
            printf("    %s: q[%lld] fused %.7g unfused %.7g\n", what, (long long)i, q[0][i], q[1][i]);
    double ctol = c->cdt == WGML_F32 ? 0x1p-20 : 0x1p-10;
    int64_t written = 0;
    for (int64_t i = 0; i < RK_ROWS * W; i++) {
        written += cv[1][i] != -30000.0f;
        if (!(fabs((double)cv[0][i] - cv[1][i]) <= ctol * (1 + fabs(cv[1][i]))) && bad++ < 8)
            printf("    %s: cache[%lld] fused %.7g unfused %.7g\n", what, (long long)i, cv[0][i], cv[1][i]);
    }
    CHECK(bad == 0, "%s: %d outputs differ", what, bad);
    /* the unfused graph wrote T rows (none with a bad idx): the test sees them */
    CHECK(written == (c->bad ? 0 : T * W), "%s: %lld cache elements written, want %lld", what, (long long)written, (long long)(c->bad ? 0 : T * W));
    CHECK(st[0].fused_nodes > st[1].fused_nodes, "%s: nothing fused", what);
    /* one dispatch for product, rope and write (then the q reader) where
     * the one-dispatch product takes it; else the unfused dispatches */
    bool one = T == 1 && c->mode == WGML_ROPE_NORMAL && !(c->bias && c->ff) && wg_matvec_xs(t_ctx, c->wdt, 1, NR, K);
    CHECK(one ? st[0].dispatches == 2u + c->norm : st[0].dispatches == st[1].dispatches,
          "%s: %llu dispatches fused, %llu unfused", what, (unsigned long long)st[0].dispatches,
          (unsigned long long)st[1].dispatches);
    for (int f = 0; f < 2; f++) {
        wgml_tensor_free(cache[f]);
        free(q[f]), free(cv[f]);
    }
    wgml_tensor_free(c32);
    wgml_tensor_free(ff);
    wgml_tensor_free(bt);
    free(x), free(gh), free(bh), free(deq);
    wgml_tensor_free(w);
}

static void t_rope_kv(void)
{
    /* the table (a CPU adapter's unit path: every case falls back) */
    const rk_case tab[] = {
        {WGML_Q4_K, WGML_F16, 1, WGML_ROPE_NORMAL, RK_D, RK_H + RK_HKV, false, false, false, false, false},
        {WGML_Q4_K, WGML_F32, 3, WGML_ROPE_NEOX, 8, 0, true, false, false, false, false},
        {WGML_Q4_K, WGML_F16, 1, WGML_ROPE_NORMAL, RK_D, RK_H + RK_HKV, false, false, false, false, true},
    };
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        rope_kv_case(&tab[i], false);
    if (!force_sgx())
        return;
    const rk_case one[] = {
        /* partial rotary dims, v heads passing through, freq_factors, f16 cache */
        {WGML_Q4_K, WGML_F16, 1, WGML_ROPE_NORMAL, 10, RK_H + RK_HKV, true, false, false, false, false},
        /* every head rotated, YaRN, f32 cache */
        {WGML_Q8_0, WGML_F32, 1, WGML_ROPE_NORMAL, RK_D, 0, false, true, false, false, false},
        {WGML_Q4_K, WGML_F16, 1, WGML_ROPE_NORMAL, 10, RK_H + RK_HKV, true, false, true, false, false},
        /* NEOX pairs and two rows: the unfused ops */
        {WGML_Q4_K, WGML_F16, 1, WGML_ROPE_NEOX, RK_D, RK_H + RK_HKV, false, false, false, false, false},
        {WGML_Q4_K, WGML_F16, 2, WGML_ROPE_NORMAL, RK_D, RK_H + RK_HKV, false, false, false, false, false},
        /* x made by a norm, which writes its codes (the xq tail): one row
         * reads them, two rows (the unfused ops) x's strided view */
        {WGML_Q4_K, WGML_F16, 1, WGML_ROPE_NORMAL, RK_D, RK_H + RK_HKV, false, false, false, true, false},
        {WGML_Q4_K, WGML_F16, 2, WGML_ROPE_NORMAL, RK_D, RK_H + RK_HKV, false, false, false, true, false},
        /* the linear's bias (qwen2's q|k|v): added in the epilogue before
         * the rotation; with freq_factors (their binding) the unfused ops */
        {WGML_Q4_K, WGML_F16, 1, WGML_ROPE_NORMAL, 10, RK_H + RK_HKV, false, false, false, false, true},
        {WGML_Q8_0, WGML_F32, 1, WGML_ROPE_NORMAL, RK_D, 0, true, false, false, false, true},
        {WGML_Q4_K, WGML_F16, 1, WGML_ROPE_NORMAL, RK_D, RK_H + RK_HKV, false, false, false, true, true},
    };
    for (size_t i = 0; i < sizeof one / sizeof *one; i++)
        rope_kv_case(&one[i], true);
    t_env("WGML_FORCE", NULL);
}

/* y = linear(h, W) or glu of its column pairs, h = rms_norm(x + r) * g,
 * the sum an output: graph fusion makes the norm write x's 8-bit codes
 * after its row and the one-row product on the one-dispatch kernel read
 * them (the xq tail, src/ops/norm.c).  The codes are q8_block's of the
 * very f32 values the norm stores, and the product kernel is the same, so
 * the fused graph equals the one compiled with WGML_GRAPH_FUSE=noxq bit for
 * bit (any row count: more rows read x through its strided view), and the
 * unfused graph within the glu pairs' 2^-20 (1 + |y|).  g in f16 without
 * ShaderF16 (CI's _nof16 run) takes the fallback: the norm, then a pass
 * writing the codes (one dispatch more). */
static void xq_case(bool glu, wgml_dtype wdt, bool g16, int64_t T)
{
    const int64_t M = 37, NW = glu ? 2 * M : M;
    float *deq = NULL;
    wgml_tensor *w = quant_table(wdt, NW, K, &deq, NULL);
    float *x = host_f32(T * K, -2, 2), *r = host_f32(T * K, -2, 2), *gh = host_f32(K, 0.5, 1.5), *y[3];
    wgml_graph_stats st[3];
    char what[96];
    snprintf(what, sizeof what, "xq tail %s %s%s T=%lld", glu ? "glu pairs" : "linear", wgml_dtype_name(wdt),
             g16 ? " g f16" : "", (long long)T);
    for (int f = 0; f < 3; f++) { /* fused, fused but noxq, unfused */
        t_env("WGML_GRAPH_FUSE", f == 1 ? "noxq" : NULL);
        wgml_graph *g = NULL;
        wgml_node *wn, *xn, *rn, *gn, *gw, *sn, *h, *lin, *out;
        CHECK_OK(wgml_graph_create(t_ctx, &g));
        CHECK_OK(wgml_graph_tensor(g, "W", w, &wn));
        CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){T, K}, &xn));
        CHECK_OK(wgml_graph_input(g, "r", WGML_F32, 2, (int64_t[]){T, K}, &rn));
        CHECK_OK(wgml_graph_input(g, "g", WGML_F32, 1, (int64_t[]){K}, &gn));
        gw = gn;
        if (g16)
            CHECK_OK(wgml_g_cast(g, gn, WGML_F16, &gw));
        CHECK_OK(wgml_g_binary(g, WGML_ADD, xn, rn, &sn));
        CHECK_OK(wgml_graph_output(g, sn));
        CHECK_OK(wgml_g_norm(g, sn, &(wgml_norm_params){.kind = WGML_RMS_NORM, .eps = 1e-5f}, gw, NULL, NULL, &h));
        CHECK_OK(wgml_g_linear(g, h, wn, NULL, NULL, NULL, WGML_F32, &lin));
        out = lin;
        if (glu) {
            wgml_node *gv, *uv;
            CHECK_OK(wgml_g_slice(g, lin, 1, 0, NW, 2, &gv));
            CHECK_OK(wgml_g_slice(g, lin, 1, 1, NW, 2, &uv));
            CHECK_OK(wgml_g_glu(g, WGML_SWIGLU, gv, uv, 0, &out));
        }
        CHECK_OK(wgml_graph_output(g, out));
        wgml_graph_options o = {.no_fuse = f == 2};
        CHECK_OK(wgml_graph_compile(g, &o));
        CHECK_OK(wgml_graph_write(g, xn, x, (uint64_t)(T * K) * 4));
        CHECK_OK(wgml_graph_write(g, rn, r, (uint64_t)(T * K) * 4));
        CHECK_OK(wgml_graph_write(g, gn, gh, (uint64_t)K * 4));
        CHECK_OK(wgml_graph_run(g));
        y[f] = malloc((size_t)(T * M) * 4);
        CHECK_OK(wgml_graph_read(g, out, y[f], (uint64_t)(T * M) * 4));
        CHECK_OK(wgml_graph_stats_get(g, &st[f]));
        if (f == 0) {
            char *txt = dump_both(g);
            CHECK(txt && strstr(txt, "+codes") && strstr(txt, "reads x codes"), "%s: the dump shows no x codes",
                  what);
            free(txt);
        }
        wgml_graph_free(g);
    }
    t_env("WGML_GRAPH_FUSE", "prologue");
    int bad = 0;
    for (int64_t i = 0; i < T * M; i++) {
        if (y[0][i] != y[1][i] && bad++ < 4)
            printf("    %s: y[%lld] with codes %.9g without %.9g\n", what, (long long)i, y[0][i], y[1][i]);
        if (!(fabs((double)y[0][i] - y[2][i]) <= 0x1p-20 * (1 + fabs(y[2][i]))) && bad++ < 4)
            printf("    %s: y[%lld] fused %.9g unfused %.9g\n", what, (long long)i, y[0][i], y[2][i]);
    }
    CHECK(bad == 0, "%s: %d outputs differ", what, bad);
    /* the same dispatches, but the codes' own pass where the norm's one
     * dispatch does not apply (an f16 g without ShaderF16) */
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(t_ctx, &in));
    bool pass = T == 1 && g16 && !(in.features & WGML_FEATURE_F16);
    CHECK(st[0].dispatches == st[1].dispatches + pass, "%s: %llu dispatches with codes, %llu without", what,
          (unsigned long long)st[0].dispatches, (unsigned long long)st[1].dispatches);
    for (int f = 0; f < 3; f++)
        free(y[f]);
    free(x), free(r), free(gh), free(deq);
    wgml_tensor_free(w);
}

static void t_xq_tail(void)
{
    if (!force_sgx())
        return;
    xq_case(false, WGML_Q4_K, false, 1);
    xq_case(true, WGML_Q8_0, true, 1);
    xq_case(true, WGML_Q4_K, false, 3);
    /* the product's own quantising a block a thread (q8_block), as on
     * GPUs whose subgroups are not a multiple of 8 lanes, against the
     * norm's codes */
    t_env("WGML_MV_XS_LANES", "0");
    xq_case(false, WGML_Q4_K, false, 1);
    t_env("WGML_MV_XS_LANES", NULL);
    t_env("WGML_FORCE", NULL);
}

/* h = add(linear(x, W), r) (a decoder's residual stream after its o and
 * down products), y = rms_norm(h) * g, both outputs: graph fusion makes
 * the add the linear's c operand (beta 1, WGML_GRAPH_FUSE=noresid keeps it
 * apart), so the norm reads one row and writes no sum; against no_fuse
 * within 2^-20 (1 + |v|) (the sum is the same f32 add; the norm's
 * reduction the same kernel), one dispatch fewer. */
static void residual_case(wgml_dtype wdt, int64_t T)
{
    const int64_t NW = 64;
    float *deq = NULL, *out[2][2];
    wgml_tensor *w = quant_table(wdt, NW, K, &deq, NULL);
    float *x = host_f32(T * K, -2, 2), *r = host_f32(T * NW, -2, 2), *gh = host_f32(NW, 0.5, 1.5);
    wgml_graph_stats st[2];
    char what[96];
    snprintf(what, sizeof what, "residual %s T=%lld", wgml_dtype_name(wdt), (long long)T);
    t_env("WGML_GRAPH_FUSE", NULL);
    for (int f = 0; f < 2; f++) { /* fused, no_fuse */
        wgml_graph *g = NULL;
        wgml_node *wn, *xn, *rn, *gn, *lin, *h, *y;
        CHECK_OK(wgml_graph_create(t_ctx, &g));
        CHECK_OK(wgml_graph_tensor(g, "W", w, &wn));
        CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){T, K}, &xn));
        CHECK_OK(wgml_graph_input(g, "r", WGML_F32, 2, (int64_t[]){T, NW}, &rn));
        CHECK_OK(wgml_graph_input(g, "g", WGML_F32, 1, (int64_t[]){NW}, &gn));
        CHECK_OK(wgml_g_linear(g, xn, wn, NULL, NULL, NULL, WGML_F32, &lin));
        CHECK_OK(wgml_g_binary(g, WGML_ADD, rn, lin, &h));
        CHECK_OK(wgml_g_norm(g, h, &(wgml_norm_params){.kind = WGML_RMS_NORM, .eps = 1e-5f}, gn, NULL, NULL, &y));
        CHECK_OK(wgml_graph_output(g, h));
        CHECK_OK(wgml_graph_output(g, y));
        wgml_graph_options o = {.no_fuse = f == 1};
        CHECK_OK(wgml_graph_compile(g, &o));
        CHECK_OK(wgml_graph_write(g, xn, x, (uint64_t)(T * K) * 4));
        CHECK_OK(wgml_graph_write(g, rn, r, (uint64_t)(T * NW) * 4));
        CHECK_OK(wgml_graph_write(g, gn, gh, (uint64_t)NW * 4));
        CHECK_OK(wgml_graph_run(g));
        for (int o2 = 0; o2 < 2; o2++) {
            out[f][o2] = malloc((size_t)(T * NW) * 4);
            CHECK_OK(wgml_graph_read(g, o2 ? y : h, out[f][o2], (uint64_t)(T * NW) * 4));
        }
        CHECK_OK(wgml_graph_stats_get(g, &st[f]));
        if (f == 0) { /* the sum is the linear's output, not a norm's second one */
            char *txt = dump_both(g);
            CHECK(txt && !strstr(txt, "written by node"), "%s: the norm still writes the sum", what);
            free(txt);
        }
        wgml_graph_free(g);
    }
    t_env("WGML_GRAPH_FUSE", "prologue");
    int bad = 0;
    for (int o2 = 0; o2 < 2; o2++)
        for (int64_t i = 0; i < T * NW; i++)
            if (!(fabs((double)out[0][o2][i] - out[1][o2][i]) <= 0x1p-20 * (1 + fabs(out[1][o2][i]))) && bad++ < 4)
                printf("    %s: %s[%lld] fused %.9g unfused %.9g\n", what, o2 ? "y" : "h", (long long)i,
                       out[0][o2][i], out[1][o2][i]);
    CHECK(bad == 0, "%s: %d outputs differ", what, bad);
    CHECK(st[0].dispatches + 1 == st[1].dispatches, "%s: %llu dispatches fused, %llu unfused", what,
          (unsigned long long)st[0].dispatches, (unsigned long long)st[1].dispatches);
    for (int f = 0; f < 2; f++)
        free(out[f][0]), free(out[f][1]);
    free(x), free(r), free(gh), free(deq);
    wgml_tensor_free(w);
}

static void t_residual(void)
{
    residual_case(WGML_Q4_K, 1); /* the table's product */
    residual_case(WGML_Q8_0, 3);
    if (!force_sgx()) /* the one-dispatch product's c */
        return;
    residual_case(WGML_Q4_K, 1);
    t_env("WGML_FORCE", NULL);
}

/* h = linear(x, W) + r, y = norm(h) (* g), z = linear(y, W2) (a decoder's
 * o product, its ffn norm and the gate|up product that reads the norm's
 * codes; next = false: y is the last op, without codes): graph fusion
 * makes the product and the norm one WG_OP_LINEAR_NORM whose last
 * workgroup normalises h (src/ops/linear_norm.c, matvec_ntail.wgsl;
 * opt-in, WGML_GRAPH_FUSE=normtail).  Against the default fusions without
 * the norm split (nosplit: the same product kernel, then the norm
 * dispatch) and no_fuse, over two input sets replayed one after the other
 * (the tail's ticket counter must be back at 0 for the second).
 * Tolerances: h is the same f32 sum (2^-20 (1 + |h|) against no_fuse, exact
 * against the default).  y's sum of squares is added in another order: each
 * order is within (n - 1) u of the exact sum (u = 2^-24), so the scale
 * (ss / n + eps)^-1/2 differs by at most (n - 1) u relatively, plus 2 ulp
 * of inverseSqrt on each side: 2^-16 (1 + |y|) covers n <= 128.  z reads
 * y's 8-bit codes, which may flip by one where a value sits within that
 * difference of a rounding boundary: each flip moves z by
 * (max|y| / 127) max|W2|; 4 of them, plus 2^-20 (1 + |z|). */
static void ntail_case(wgml_dtype wdt, wgml_norm_kind kind, bool with_g, bool next, bool resid, int64_t NW)
{
    const int64_t M2 = 48;
    float *deq = NULL, *deq2 = NULL;
    wgml_tensor *w = quant_table(wdt, NW, K, &deq, NULL), *w2 = quant_table(WGML_Q8_0, M2, NW, &deq2, NULL);
    float *gh = host_f32(NW, 0.5, 1.5), *x[2], *r[2], *out[3][2][3];
    for (int s2 = 0; s2 < 2; s2++)
        x[s2] = host_f32(K, -2, 2), r[s2] = host_f32(NW, -2, 2);
    wgml_graph_stats st[3];
    char what[96];
    snprintf(what, sizeof what, "norm tail %s %s%s%s%s n=%lld", wgml_dtype_name(wdt), kind == WGML_RMS_NORM ? "rms" : "l2",
             with_g ? " g" : "", next ? " +product" : "", resid ? "" : " no residual", (long long)NW);
    int64_t len[3] = {NW, NW, M2};
    for (int f = 0; f < 3; f++) { /* fused (opt-in), the default fusions, no_fuse */
        t_env("WGML_GRAPH_FUSE", f == 0 ? "normtail" : f == 1 ? "nosplit" : NULL);
        wgml_graph *g = NULL;
        wgml_node *wn, *w2n, *xn, *rn, *gn = NULL, *lin, *o[3] = {NULL, NULL, NULL};
        CHECK_OK(wgml_graph_create(t_ctx, &g));
        CHECK_OK(wgml_graph_tensor(g, "W", w, &wn));
        CHECK_OK(wgml_graph_tensor(g, "W2", w2, &w2n));
        CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){1, K}, &xn));
        CHECK_OK(wgml_graph_input(g, "r", WGML_F32, 2, (int64_t[]){1, NW}, &rn));
        if (with_g)
            CHECK_OK(wgml_graph_input(g, "g", WGML_F32, 1, (int64_t[]){NW}, &gn));
        CHECK_OK(wgml_g_linear(g, xn, wn, NULL, NULL, NULL, WGML_F32, &lin));
        if (resid) /* the product's bias at one row (graph fusion) */
            CHECK_OK(wgml_g_binary(g, WGML_ADD, lin, rn, &o[0]));
        else /* h = the product alone: the tail reads it through the bias's binding */
            o[0] = lin;
        CHECK_OK(wgml_g_norm(g, o[0], &(wgml_norm_params){.kind = kind, .eps = 1e-5f}, gn, NULL, NULL, &o[1]));
        if (next)
            CHECK_OK(wgml_g_linear(g, o[1], w2n, NULL, NULL, NULL, WGML_F32, &o[2]));
        for (int k = 0; k < 3; k++)
            if (o[k] && (k != 1 || !next)) /* y itself an output only without the next product */
                CHECK_OK(wgml_graph_output(g, o[k]));
        wgml_graph_options opt = {.no_fuse = f == 2};
        CHECK_OK(wgml_graph_compile(g, &opt));
        if (with_g)
            CHECK_OK(wgml_graph_write(g, gn, gh, (uint64_t)NW * 4));
        for (int s2 = 0; s2 < 2; s2++) { /* two input sets, replayed in turn */
            CHECK_OK(wgml_graph_write(g, xn, x[s2], (uint64_t)K * 4));
            if (resid)
                CHECK_OK(wgml_graph_write(g, rn, r[s2], (uint64_t)NW * 4));
            CHECK_OK(wgml_graph_run(g));
            for (int k = 0; k < 3; k++) {
                out[f][s2][k] = NULL;
                if (!o[k] || (k == 1 && next))
                    continue;
                out[f][s2][k] = malloc((size_t)len[k] * 4);
                CHECK_OK(wgml_graph_read(g, o[k], out[f][s2][k], (uint64_t)len[k] * 4));
            }
        }
        CHECK_OK(wgml_graph_stats_get(g, &st[f]));
        if (f == 0) {
            char *txt = dump_both(g);
            CHECK(txt && strstr(txt, "linear_norm") && strstr(txt, "written by node"),
                  "%s: the dump shows no linear_norm writing the norm", what);
            free(txt);
        }
        wgml_graph_free(g);
    }
    t_env("WGML_GRAPH_FUSE", "prologue");
    double ymax = 0, w2max = 0;
    for (int64_t i = 0; i < M2 * NW; i++)
        w2max = fmax(w2max, fabs(deq2[i]));
    for (int s2 = 0; s2 < 2; s2++)
        for (int64_t i = 0; next && i < NW; i++) /* y from h (nontail's), as the unfused graph made it */
            ymax = fmax(ymax, 2.0 * fabs(out[1][s2][0][i]) * (with_g ? 1.5 : 1.0) * (kind == WGML_RMS_NORM ? 16 : 1));
    int bad = 0;
    for (int s2 = 0; s2 < 2; s2++)
        for (int f = 1; f < 3; f++)
            for (int k = 0; k < 3; k++)
                for (int64_t i = 0; out[0][s2][k] && i < len[k]; i++) {
                    double a = out[0][s2][k][i], b = out[f][s2][k][i];
                    double tol = k == 0 ? (f == 1 ? 0 : 0x1p-20 * (1 + fabs(b))) : k == 1 ? 0x1p-16 * (1 + fabs(b))
                                 : 4 * ymax / 127 * w2max + 0x1p-20 * (1 + fabs(b));
                    if (!(fabs(a - b) <= tol) && bad++ < 4)
                        printf("    %s: set %d %s[%lld] fused %.9g %s %.9g\n", what, s2, k == 0 ? "h" : k == 1 ? "y" : "z",
                               (long long)i, a, f == 1 ? "default" : "unfused", b);
                }
    CHECK(bad == 0, "%s: %d outputs differ", what, bad);
    CHECK(st[0].dispatches + 1 == st[1].dispatches, "%s: %llu dispatches fused, %llu without the tail", what,
          (unsigned long long)st[0].dispatches, (unsigned long long)st[1].dispatches);
    for (int f = 0; f < 3; f++)
        for (int s2 = 0; s2 < 2; s2++)
            for (int k = 0; k < 3; k++)
                free(out[f][s2][k]);
    for (int s2 = 0; s2 < 2; s2++)
        free(x[s2]), free(r[s2]);
    free(gh), free(deq), free(deq2);
    wgml_tensor_free(w);
    wgml_tensor_free(w2);
}

static void t_norm_tail(void)
{
    if (!force_sgx()) /* the one-dispatch product (a GPU's table) */
        return;
    ntail_case(WGML_Q4_K, WGML_RMS_NORM, true, true, true, 64);
    ntail_case(WGML_Q8_0, WGML_RMS_NORM, true, false, true, 96);
    ntail_case(WGML_Q8_0, WGML_L2_NORM, false, true, true, 32);
    ntail_case(WGML_Q8_0, WGML_RMS_NORM, true, true, false, 64);
    t_env("WGML_FORCE", NULL);
}

static void t_table(void) { cases(false); }
static void t_integer(void) { cases(true); }

int main(int argc, char **argv)
{
    t_env_reserve();
    t_env("WGML_GRAPH_FUSE", "prologue"); /* opt-in (src/graph/fuse.c) */
    if (t_setup(argc, argv))
        return 1;
    static const t_case list[] = {
        {"table", t_table},
        {"integer_path", t_integer},
        {"glu_pairs", t_glu_pairs},
        {"rope_kv", t_rope_kv},
        {"xq_tail", t_xq_tail},
        {"residual", t_residual},
        {"norm_tail", t_norm_tail},
    };
    int rc = t_run(list, sizeof list / sizeof *list, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
