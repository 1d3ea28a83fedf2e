/* The graph API (include/wgml_graph.h) beyond random graphs: the op table,
 * symbolic dims (rebinding compiles nothing, only changed nodes re-encode),
 * state across runs, bad indices, bad graphs named by node, the planner's
 * verifier and arena reuse, eager graphs, dumps, the NaN check, completion
 * and per-node profiles. */
#include "graph_harness.h"

/* Every row of the op table is filled and every op has a builder that a
 * graph accepts (the random graphs cover most; this names the table). */
static void op_table_complete(void)
{
    for (int i = 0; i < WG_OP_COUNT; i++) {
        const wg_op_def *d = wg_op_def_get(i);
        CHECK(d && d->name && d->check && d->encode && d->min_in <= d->max_in && d->max_in <= WG_OP_MAX_IN,
              "op table row %d is incomplete", i);
        for (int j = 0; d && j < i; j++)
            CHECK(strcmp(wg_op_def_get(j)->name, d->name), "op table: '%s' twice", d->name);
    }
    CHECK(wg_op_def_get(WG_OP_COUNT) == NULL && wg_op_def_get(-1) == NULL, "rows past the table");
}

/* Symbolic dims: one compile at the maxima, then runs at other lengths
 * match an eager run at that length and compile no kernel. */
static void symbolic_dims_rebind_without_compiling(void)
{
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    int64_t seq;
    CHECK_OK(wgml_graph_dim(g, "seq", 40, &seq));
    const int64_t D = 48;
    wgml_node *x, *w, *n, *sm, *y, *sum;
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){seq, D}, &x));
    CHECK_OK(wgml_graph_input(g, "w", WGML_F32, 1, (int64_t[]){D}, &w));
    wgml_norm_params np = {WGML_RMS_NORM, 1e-6f, 0, 0, 0, 0, 0, 0, 0};
    CHECK_OK(wgml_g_norm(g, x, &np, w, NULL, NULL, &n));
    CHECK_OK(wgml_g_softmax(g, n, NULL, NULL, NULL, &sm));
    CHECK_OK(wgml_g_binary(g, WGML_ADD, sm, x, &y));
    CHECK_OK(wgml_g_reduce(g, WGML_SUM, y, 1, 0, &sum));
    CHECK_OK(wgml_graph_output(g, y));
    CHECK_OK(wgml_graph_output(g, sum));
    CHECK(wgml_node_dim(x, 0) == seq, "before compile a symbolic dim reads as its sentinel");
    CHECK_OK(wgml_graph_compile(g, NULL));
    wgml_ctx_stats s0, s1;
    float *wh = host_f32(D, 0.5, 1.5);
    const int64_t lens[] = {5, 1, 40, 17, 5, 0, 33};
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        int64_t L = lens[k];
        CHECK_OK(wgml_ctx_stats_get(t_ctx, &s0));
        CHECK_OK(wgml_graph_bind_dim(g, seq, L));
        CHECK(wgml_node_dim(x, 0) == L, "bound dim reads %lld", (long long)wgml_node_dim(x, 0));
        float *xh = host_f32(L * D + 1, -2, 2);
        CHECK_OK(wgml_graph_write(g, x, xh, (uint64_t)(L * D) * 4));
        CHECK_OK(wgml_graph_write(g, w, wh, D * 4));
        CHECK_OK(wgml_graph_run(g));
        float *got = malloc((size_t)(L * D + 1) * 4), *gs = malloc((size_t)D * 4);
        CHECK_OK(wgml_graph_read(g, y, got, (uint64_t)(L * D) * 4));
        CHECK_OK(wgml_graph_read(g, sum, gs, D * 4));
        CHECK_OK(wgml_ctx_stats_get(t_ctx, &s1));
        CHECK(s1.pipelines_compiled == s0.pipelines_compiled, "binding seq = %lld compiled %llu kernels",
              (long long)L, (unsigned long long)(s1.pipelines_compiled - s0.pipelines_compiled));
        /* the same ops eagerly at this length */
        wgml_graph *e = NULL;
        wgml_node *ex, *ew, *en, *esm, *ey, *esum;
        CHECK_OK(wgml_graph_create_eager(t_ctx, &e));
        CHECK_OK(wgml_graph_input(e, "x", WGML_F32, 2, (int64_t[]){L, D}, &ex));
        CHECK_OK(wgml_graph_write(e, ex, xh, (uint64_t)(L * D) * 4));
        CHECK_OK(wgml_graph_input(e, "w", WGML_F32, 1, (int64_t[]){D}, &ew));
        CHECK_OK(wgml_graph_write(e, ew, wh, D * 4));
        CHECK_OK(wgml_g_norm(e, ex, &np, ew, NULL, NULL, &en));
        CHECK_OK(wgml_g_softmax(e, en, NULL, NULL, NULL, &esm));
        CHECK_OK(wgml_g_binary(e, WGML_ADD, esm, ex, &ey));
        CHECK_OK(wgml_g_reduce(e, WGML_SUM, ey, 1, 0, &esum));
        float *want = malloc((size_t)(L * D + 1) * 4), *ws = malloc((size_t)D * 4);
        CHECK_OK(wgml_graph_read(e, ey, want, (uint64_t)(L * D) * 4));
        CHECK_OK(wgml_graph_read(e, esum, ws, D * 4));
        int nbad = 0; /* f32_close: graph kernels bind shared-buffer operands read_write */
        for (int64_t i = 0; i < L * D; i++)
            nbad += !f32_close(got[i], want[i]);
        for (int64_t i = 0; i < D; i++)
            nbad += !f32_close(gs[i], ws[i]);
        CHECK(!nbad, "seq = %lld: graph and eager differ in %d elements", (long long)L, nbad);
        wgml_graph_free(e);
        free(xh), free(got), free(gs), free(want), free(ws);
    }
    wgml_graph_stats gs;
    CHECK_OK(wgml_graph_stats_get(g, &gs));
    CHECK(gs.recordings == 6, "recordings %llu: 1 at compile + 5 new lengths (5 again is cached)",
          (unsigned long long)gs.recordings);
    free(wh);
    wgml_graph_free(g);
}

/* Pure graph runs at new lengths after warm-up compile nothing at all. */
static void rebinding_compiles_no_pipeline(void)
{
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    int64_t seq, kv;
    CHECK_OK(wgml_graph_dim(g, "seq", 64, &seq));
    CHECK_OK(wgml_graph_dim(g, "kv", 64, &kv));
    wgml_node *x, *m, *sc, *a, *b, *sm, *r, *pos, *cache, *c1, *view, *red;
    wgml_tensor *kvt = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, (int64_t[]){64, 32}, &kvt));
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){seq, 32}, &x));
    CHECK_OK(wgml_graph_input(g, "pos", WGML_I32, 1, (int64_t[]){seq}, &pos));
    CHECK_OK(wgml_graph_input(g, "scores", WGML_F32, 2, (int64_t[]){seq, kv}, &sc));
    CHECK_OK(wgml_graph_input(g, "mask", WGML_F32, 2, (int64_t[]){seq, kv}, &m));
    CHECK_OK(wgml_graph_tensor(g, "kv_cache", kvt, &cache));
    CHECK_OK(wgml_g_set_rows(g, cache, pos, x, &c1));
    CHECK_OK(wgml_g_slice(g, c1, 0, 0, kv, 1, &view));
    CHECK_OK(wgml_g_reduce(g, WGML_SUM, view, 1, 0, &red));
    wgml_softmax_params sp = {-1, 0.125f, 0, 0};
    CHECK_OK(wgml_g_softmax(g, sc, m, NULL, &sp, &sm));
    CHECK_OK(wgml_g_unary(g, WGML_SILU, x, 0, 0, &a));
    CHECK_OK(wgml_g_glu(g, WGML_SWIGLU, a, x, 0, &b));
    CHECK_OK(wgml_g_binary(g, WGML_ADD, b, x, &r));
    CHECK_OK(wgml_graph_output(g, r));
    CHECK_OK(wgml_graph_output(g, sm));
    CHECK_OK(wgml_graph_output(g, red));
    CHECK_OK(wgml_graph_compile(g, NULL));
    wgml_ctx_stats s0, s1;
    CHECK_OK(wgml_ctx_stats_get(t_ctx, &s0));
    for (int it = 0; it < 12; it++) { /* lengths drawn from the seed: not the ones compile warmed */
        int64_t L = (int64_t)t_range(1, 64), K = (int64_t)t_range(1, 64);
        CHECK_OK(wgml_graph_bind_dim(g, seq, L));
        CHECK_OK(wgml_graph_bind_dim(g, kv, K));
        int32_t *p = malloc((size_t)L * 4);
        for (int64_t i = 0; i < L; i++)
            p[i] = (int32_t)i;
        CHECK_OK(wgml_graph_write(g, pos, p, (uint64_t)L * 4));
        CHECK_OK(wgml_graph_run(g));
        CHECK_OK(wgml_graph_wait(g));
        free(p);
    }
    CHECK_OK(wgml_ctx_stats_get(t_ctx, &s1));
    CHECK(s1.pipelines_compiled == s0.pipelines_compiled, "rebinding dims compiled %llu pipelines",
          (unsigned long long)(s1.pipelines_compiled - s0.pipelines_compiled));
    printf("    12 random (seq, kv) bindings: %llu kernels compiled\n",
           (unsigned long long)(s1.pipelines_compiled - s0.pipelines_compiled));
    /* kv alone changes: the seq-only nodes (silu, glu, add) keep their
     * copied dispatches and still compute r = silu(silu(x)) * x + x. */
    enum { L = 5 };
    float xh[L * 32], rh[L * 32];
    int32_t ph[L];
    for (int i = 0; i < L * 32; i++)
        xh[i] = (float)((i % 17) - 8) / 4;
    for (int i = 0; i < L; i++)
        ph[i] = i;
    CHECK_OK(wgml_graph_bind_dim(g, seq, L));
    CHECK_OK(wgml_graph_write(g, x, xh, sizeof xh));
    CHECK_OK(wgml_graph_write(g, pos, ph, sizeof ph));
    for (int64_t K = 7; K < 12; K++) {
        CHECK_OK(wgml_graph_bind_dim(g, kv, K));
        CHECK_OK(wgml_graph_run(g));
        wgml_graph_stats gs;
        CHECK_OK(wgml_graph_stats_get(g, &gs));
        CHECK(K == 7 || (gs.nodes_reused == 4 && gs.nodes_encoded == 2), "kv = %lld: %llu re-encoded, %llu reused",
              (long long)K, (unsigned long long)gs.nodes_encoded, (unsigned long long)gs.nodes_reused);
        CHECK_OK(wgml_graph_read(g, r, rh, sizeof rh));
        for (int i = 0; i < L * 32; i++) {
            double v = xh[i], sv = v / (1 + exp(-v)), want = sv / (1 + exp(-sv)) * v + v;
            CHECK(fabs(rh[i] - want) <= 1e-5 * (1 + fabs(want)), "kv = %lld: r[%d] = %g, want %g", (long long)K, i,
                  (double)rh[i], want);
        }
    }
    wgml_graph_free(g);
    wgml_tensor_free(kvt);
}

/* A KV cache across runs: each decode step writes its rows at positions
 * and reads the cache up to the current length, nothing through the host. */
static void state_persists_across_runs(void)
{
    enum { MAXCTX = 16, D = 8 };
    wgml_tensor *kvt = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, (int64_t[]){MAXCTX, D}, &kvt));
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    int64_t seq, kv;
    CHECK_OK(wgml_graph_dim(g, "seq", MAXCTX, &seq));
    CHECK_OK(wgml_graph_dim(g, "kv", MAXCTX, &kv));
    wgml_node *x, *pos, *cache, *c1, *view, *sum;
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){seq, D}, &x));
    CHECK_OK(wgml_graph_input(g, "pos", WGML_I32, 1, (int64_t[]){seq}, &pos));
    CHECK_OK(wgml_graph_tensor(g, "cache", kvt, &cache));
    CHECK_OK(wgml_g_set_rows(g, cache, pos, x, &c1));
    CHECK_OK(wgml_g_slice(g, c1, 0, 0, kv, 1, &view));
    CHECK_OK(wgml_g_reduce(g, WGML_SUM, view, 1, 0, &sum));
    CHECK_OK(wgml_graph_output(g, sum));
    CHECK_OK(wgml_graph_compile(g, NULL));
    double want[MAXCTX][D] = {{0}};
    int64_t at = 0;
    const int64_t steps[] = {3, 1, 1, 4, 1};
    for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
        int64_t L = steps[k];
        float xh[MAXCTX * D];
        int32_t ph[MAXCTX];
        for (int64_t i = 0; i < L; i++) {
            ph[i] = (int32_t)(at + i);
            for (int j = 0; j < D; j++)
                want[at + i][j] = xh[i * D + j] = (float)(k * 100 + i * 10 + j);
        }
        CHECK_OK(wgml_graph_bind_dim(g, seq, L));
        CHECK_OK(wgml_graph_bind_dim(g, kv, at + L));
        CHECK_OK(wgml_graph_write(g, x, xh, (uint64_t)(L * D) * 4));
        CHECK_OK(wgml_graph_write(g, pos, ph, (uint64_t)L * 4));
        CHECK_OK(wgml_graph_run(g));
        if (k == 2) { /* seq stayed 1, kv grew: set_rows' dispatches are copied, the reduce's re-encoded */
            wgml_graph_stats gs;
            CHECK_OK(wgml_graph_stats_get(g, &gs));
            CHECK(gs.nodes_reused == 1 && gs.nodes_encoded == 1, "kv grew: %llu nodes re-encoded, %llu reused",
                  (unsigned long long)gs.nodes_encoded, (unsigned long long)gs.nodes_reused);
        }
        at += L;
        float got[D];
        CHECK_OK(wgml_graph_read(g, sum, got, sizeof got));
        for (int j = 0; j < D; j++) {
            double s = 0;
            for (int64_t i = 0; i < at; i++)
                s += want[i][j];
            CHECK(got[j] == (float)s, "step %zu: sum[%d] = %g, want %g", k, j, (double)got[j], s);
        }
    }
    float all[MAXCTX * D];
    CHECK_OK(wgml_tensor_download(kvt, all, sizeof all));
    for (int64_t i = 0; i < MAXCTX; i++)
        for (int j = 0; j < D; j++)
            CHECK(all[i * D + j] == (float)(i < at ? want[i][j] : 0), "cache[%lld][%d]", (long long)i, j);
    wgml_graph_free(g);
    wgml_tensor_free(kvt);
}

/* Reads in flight (wgml_graph_read_begin, wgml_graph_run_read; ended by
 * wgml_buffer_read_end) and device-side copies into inputs
 * (wgml_graph_copy), as a pipelined decode uses them: y = 3x + 1 fed back
 * into x three times with every read still in flight, the reads ended out
 * of order; then the refusals. */
static void reads_in_flight_and_device_copies(void)
{
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    wgml_node *x, *h, *y;
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 1, (int64_t[]){4}, &x));
    CHECK_OK(wgml_g_unary(g, WGML_SCALE, x, 2.0f, 0.0f, &h));
    CHECK_OK(wgml_g_binary(g, WGML_ADD, h, x, &h)); /* 3x, so h is an op node, not an output */
    CHECK_OK(wgml_g_unary(g, WGML_SCALE, h, 1.0f, 1.0f, &y));
    CHECK_OK(wgml_graph_output(g, y));
    CHECK_OK(wgml_graph_compile(g, &(wgml_graph_options){.no_fuse = 1}));
    float x0[4] = {0, 1, -2, 0.5f};
    CHECK_OK(wgml_graph_write(g, x, x0, sizeof x0));
    wgml_pending *rd[3] = {0};
    for (int k = 0; k < 3; k++) {
        if (k)
            CHECK_OK(wgml_graph_copy(g, x, y, sizeof x0));
        if (k == 2) { /* the read in the run's own command buffer */
            CHECK_OK(wgml_graph_run_read(g, y, sizeof x0, &rd[k]));
        } else {
            CHECK_OK(wgml_graph_run(g));
            CHECK_OK(wgml_graph_read_begin(g, y, sizeof x0, &rd[k]));
        }
    }
    float got[3][4];
    const int order[3] = {2, 0, 1};
    for (int k = 0; k < 3; k++)
        if (rd[order[k]])
            CHECK_OK(wgml_buffer_read_end(rd[order[k]], got[order[k]]));
    for (int i = 0; i < 4; i++) {
        double v = x0[i];
        for (int k = 0; k < 3; k++) {
            v = 3 * v + 1;
            CHECK(got[k][i] == (float)v, "run %d: y[%d] = %g, want %g", k, i, (double)got[k][i], v);
        }
    }
    wgml_pending *r = NULL;
    expect(wgml_graph_copy(g, y, x, sizeof x0), WGML_ERR_INVALID_ARG, "dst must be an input", "copy into a non-input");
    expect(wgml_graph_copy(g, x, y, sizeof x0 + 4), WGML_ERR_INVALID_ARG, "holds 16", "copy past the node");
    expect(wgml_graph_read_begin(g, h, 4, &r), WGML_ERR_INVALID_ARG, "not an output", "read of a non-output");
    CHECK(r == NULL, "a refused read handed out a handle");
    expect(wgml_graph_read_begin(g, y, 4, NULL), WGML_ERR_INVALID_ARG, "out is NULL", "read with no handle");
    expect(wgml_graph_run_read(g, h, 4, &r), WGML_ERR_INVALID_ARG, "not an output", "run_read of a non-output");
    expect(wgml_buffer_read_end(NULL, got[0]), WGML_ERR_INVALID_ARG, "no read", "end of no read");
    CHECK_OK(wgml_graph_read_begin(g, y, 0, &r)); /* an empty read still waits and frees */
    if (r)
        CHECK_OK(wgml_buffer_read_end(r, NULL));
    wgml_graph_free(g);
}

/* A get_rows with a bad index inside a graph: WGML_ERR_INDEX at the next
 * read, naming the op, and its output keeps its last contents. */
static void bad_index_in_graph(void)
{
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    wgml_node *tab, *idx, *rows, *y;
    CHECK_OK(wgml_graph_input(g, "table", WGML_F32, 2, (int64_t[]){5, 4}, &tab));
    CHECK_OK(wgml_graph_input(g, "idx", WGML_I32, 1, (int64_t[]){3}, &idx));
    CHECK_OK(wgml_g_get_rows(g, tab, idx, WGML_F32, &rows));
    CHECK_OK(wgml_g_unary(g, WGML_NEG, rows, 0, 0, &y));
    CHECK_OK(wgml_graph_output(g, rows));
    CHECK_OK(wgml_graph_output(g, y));
    CHECK_OK(wgml_graph_compile(g, NULL));
    float th[20];
    for (int i = 0; i < 20; i++)
        th[i] = (float)i;
    int32_t good[3] = {4, 0, 2}, bad[3] = {1, 7, 0};
    CHECK_OK(wgml_graph_write(g, tab, th, sizeof th));
    CHECK_OK(wgml_graph_write(g, idx, good, sizeof good));
    CHECK_OK(wgml_graph_run(g));
    float before[12], after[12];
    CHECK_OK(wgml_graph_read(g, rows, before, sizeof before));
    CHECK(before[0] == 16 && before[4] == 0 && before[8] == 8, "good indices gave wrong rows");
    CHECK_OK(wgml_graph_write(g, idx, bad, sizeof bad));
    CHECK_OK(wgml_graph_run(g));
    wgml_status st = wgml_graph_read(g, rows, after, sizeof after);
    CHECK(st == WGML_ERR_INDEX && strstr(wgml_last_error(), "get_rows") && strstr(wgml_last_error(), "7"),
          "bad index: %s: %s", wgml_status_name(st), wgml_last_error());
    CHECK_OK(wgml_graph_read(g, rows, after, sizeof after));
    CHECK(!memcmp(before, after, sizeof after), "the bad get_rows wrote its output");
    wgml_graph_free(g);
}

static void bad_graphs_name_the_node(void)
{
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    int64_t seq, other;
    CHECK_OK(wgml_graph_dim(g, "seq", 8, &seq));
    CHECK_OK(wgml_graph_dim(g, "other", 8, &other));
    wgml_node *a, *b, *c, *u1, *u2, *u3, *bad = NULL;
    CHECK_OK(wgml_graph_input(g, "a", WGML_F32, 2, (int64_t[]){3, 4}, &a));
    CHECK_OK(wgml_graph_input(g, "b", WGML_F32, 2, (int64_t[]){5, 4}, &b));
    CHECK_OK(wgml_graph_input(g, "c", WGML_F32, 2, (int64_t[]){seq, 4}, &c));
    expect(wgml_g_binary(g, WGML_ADD, a, b, &bad), WGML_ERR_SHAPE, "node 3 (binary)", "shape mismatch");
    CHECK(bad == NULL, "a failed builder returned a node");
    wgml_node *d = NULL;
    CHECK_OK(wgml_graph_input(g, "d", WGML_F32, 2, (int64_t[]){other, 4}, &d));
    expect(wgml_g_binary(g, WGML_MUL, c, d, &bad), WGML_ERR_SHAPE, "do not broadcast", "two symbolic dims");
    wgml_node *i32 = NULL;
    CHECK_OK(wgml_graph_input(g, "i", WGML_I32, 2, (int64_t[]){3, 4}, &i32));
    expect(wgml_g_binary(g, WGML_ADD, a, i32, &bad), WGML_ERR_DTYPE, "(binary)", "dtype mismatch");
    wgml_node *cc[2] = {c, c};
    expect(wgml_g_concat(g, cc, 2, 0, &bad), WGML_ERR_SHAPE, "symbolic", "concat along a symbolic axis");
    expect(wgml_graph_bind_dim(g, seq, 9), WGML_ERR_SHAPE, "over its bound", "dim over its bound");
    CHECK_OK(wgml_g_unary(g, WGML_EXP, a, 0, 0, &u1));
    CHECK_OK(wgml_g_unary(g, WGML_NEG, u1, 0, 0, &u2));
    CHECK_OK(wgml_g_unary(g, WGML_ABS, c, 0, 0, &u3));
    CHECK_OK(wgml_node_set_name(u1, "first"));
    CHECK_OK(wgml_graph_output(g, u2));
    CHECK_OK(wgml_graph_output(g, u3));
    CHECK_OK(wgml_node_set_input(u1, 0, u2)); /* u1 <- u2 <- u1 */
    wgml_graph_options nofuse = {1, 0};
    expect(wgml_graph_compile(g, &nofuse), WGML_ERR_INVALID_ARG, "'first' (unary)", "cycle");
    wgml_graph_free(g);

    CHECK_OK(wgml_graph_create(t_ctx, &g));
    CHECK_OK(wgml_graph_dim(g, "seq", 8, &seq));
    CHECK_OK(wgml_graph_input(g, "c", WGML_F32, 2, (int64_t[]){seq, 4}, &c));
    CHECK_OK(wgml_g_unary(g, WGML_ABS, c, 0, 0, &u3));
    CHECK_OK(wgml_graph_output(g, u3));
    expect(wgml_graph_run(g), WGML_ERR_INVALID_ARG, "compile", "run before compile");
    CHECK_OK(wgml_graph_compile(g, NULL));
    expect(wgml_graph_run(g), WGML_ERR_SHAPE, "'seq' is not bound", "unbound dim");
    float tmp[4];
    expect(wgml_g_unary(g, WGML_ABS, c, 0, 0, &bad), WGML_ERR_INVALID_ARG, "compiled", "build after compile");
    CHECK_OK(wgml_graph_bind_dim(g, seq, 1));
    CHECK_OK(wgml_graph_run(g));
    expect(wgml_graph_read(g, u3, tmp, 8), WGML_ERR_SHAPE, "8 bytes given", "read of the wrong size");
    wgml_graph_free(g);
}

/* The verifier proves a plan, and a plan it must refuse is refused. */
static void verifier_can_fail(void)
{
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    wgml_node *x, *a, *b, *c;
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){16, 16}, &x));
    CHECK_OK(wgml_g_unary(g, WGML_EXP, x, 0, 0, &a));
    CHECK_OK(wgml_g_unary(g, WGML_NEG, x, 0, 0, &b));
    CHECK_OK(wgml_g_binary(g, WGML_ADD, a, b, &c));
    CHECK_OK(wgml_graph_output(g, c));
    CHECK_OK(wgml_graph_compile(g, NULL));
    CHECK_OK(wg_graph_verify(g));
    uint64_t keep_off = b->offset;
    b->offset = a->offset; /* a and b are live together */
    wgml_status st = wg_graph_verify(g);
    CHECK(st == WGML_ERR_INTERNAL && strstr(wgml_last_error(), "overlaps"), "verifier missed an overlap: %s",
          wgml_last_error());
    b->offset = keep_off;
    wgml_graph_free(g);
}

/* A chain of in-place-capable ops runs in one block; with in-place reuse
 * off, in two alternating ones. */
static void arena_reuse(void)
{
    for (int noinp = 0; noinp < 2; noinp++) {
        wgml_graph *g = NULL;
        CHECK_OK(wgml_graph_create(t_ctx, &g));
        wgml_node *x, *y;
        CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){64, 64}, &x));
        y = x;
        for (int i = 0; i < 40; i++)
            CHECK_OK(wgml_g_unary(g, i % 2 ? WGML_NEG : WGML_ABS, y, 0, 0, &y));
        CHECK_OK(wgml_graph_output(g, y));
        wgml_graph_options o = {1, noinp}; /* unfused: 40 dispatches, 41 tensors */
        CHECK_OK(wgml_graph_compile(g, &o));
        wgml_graph_stats s;
        CHECK_OK(wgml_graph_stats_get(g, &s));
        uint64_t one = 64 * 64 * 4;
        printf("    in place %s: arena %llu bytes for 41 tensors of %llu\n", noinp ? "off" : "on",
               (unsigned long long)s.arena_bytes, (unsigned long long)one);
        CHECK(s.arena_bytes == (noinp ? 3 : 2) * one, "arena %llu", (unsigned long long)s.arena_bytes);
        CHECK(s.intermediate_bytes == 41 * one, "sum of intermediates %llu", (unsigned long long)s.intermediate_bytes);
        float *h = host_f32(64 * 64, -3, 3), *o2 = malloc(64 * 64 * 4);
        CHECK_OK(wgml_graph_write(g, x, h, 64 * 64 * 4));
        CHECK_OK(wgml_graph_run(g));
        CHECK_OK(wgml_graph_read(g, y, o2, 64 * 64 * 4));
        for (int i = 0; i < 64 * 64; i++)
            CHECK(o2[i] == -fabsf(h[i]), "element %d", i);
        free(h), free(o2);
        wgml_graph_free(g);
    }
}

/* Eager graphs: wgml makes each output from the op's check. */
static void eager_makes_outputs(void)
{
    wgml_graph *e = NULL;
    CHECK_OK(wgml_graph_create_eager(t_ctx, &e));
    wgml_node *x, *t, *y;
    CHECK_OK(wgml_graph_input(e, "x", WGML_F32, 2, (int64_t[]){3, 5}, &x));
    float h[15];
    for (int i = 0; i < 15; i++)
        h[i] = (float)i;
    CHECK_OK(wgml_graph_write(e, x, h, sizeof h));
    CHECK_OK(wgml_g_transpose(e, x, 0, 1, &t));
    CHECK_OK(wgml_g_reduce(e, WGML_ARGMAX, t, 2, 0, &y));
    CHECK(wgml_node_dtype(y) == WGML_I32 && wgml_node_ndim(y) == 2 && wgml_node_dim(y, 0) == 5 &&
          wgml_node_dim(y, 1) == 1, "argmax output made wrong");
    wgml_tensor *yt = NULL;
    CHECK_OK(wgml_node_tensor(y, &yt));
    int32_t got[5];
    CHECK_OK(wgml_tensor_download(yt, got, sizeof got));
    for (int i = 0; i < 5; i++)
        CHECK(got[i] == 2, "argmax[%d] = %d", i, got[i]);
    wgml_tensor_free(yt);
    wgml_node *bad = NULL;
    expect(wgml_graph_compile(e, NULL), WGML_ERR_INVALID_ARG, "eager", "compile of an eager graph");
    expect(wgml_g_glu(e, WGML_SWIGLU, x, NULL, 0, &bad), WGML_ERR_SHAPE, "odd", "glu of an odd row");
    wgml_graph_free(e);
}

static void dump_and_nancheck(void)
{
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    wgml_node *x, *l, *y;
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 1, (int64_t[]){8}, &x));
    CHECK_OK(wgml_g_unary(g, WGML_LOG, x, 0, 0, &l));
    CHECK_OK(wgml_node_set_name(l, "the_log"));
    CHECK_OK(wgml_g_unary(g, WGML_ABS, l, 0, 0, &y));
    CHECK_OK(wgml_graph_output(g, y));
    t_env("WGML_GRAPH_NANCHECK", "1");
    wgml_graph_options nofuse = {1, 0};
    CHECK_OK(wgml_graph_compile(g, &nofuse));
    t_env("WGML_GRAPH_NANCHECK", NULL);
    char *buf = dump_both(g);
    CHECK(buf && strstr(buf, "the_log") && strstr(buf, "digraph wgml") && strstr(buf, "n1 -> n2") && strstr(buf, "arena ["),
          "dump lacks names, edges or places:\n%s", buf);
    free(buf);
    float h[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK_OK(wgml_graph_write(g, x, h, sizeof h));
    CHECK_OK(wgml_graph_run(g));
    h[5] = -1; /* log(-1) = NaN */
    CHECK_OK(wgml_graph_write(g, x, h, sizeof h));
    expect(wgml_graph_run(g), WGML_ERR_INVALID_ARG, "'the_log' (unary) is the first node", "NaN check");
    wgml_graph_free(g);
}

/* A run is asynchronous: wgml_graph_done turns 1 without a wait; with
 * WGML_PROFILE every node that dispatched gets GPU time. */
static void async_completion_and_profile(void)
{
    wgml_ctx_options o = {0};
    o.profile = 1;
    wgml_ctx *pc = NULL;
    CHECK_OK(wgml_ctx_create(&o, &pc));
    if (!pc)
        return;
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(pc, &in));
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(pc, &g));
    wgml_node *x, *a, *b;
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){64, 256}, &x));
    CHECK_OK(wgml_g_unary(g, WGML_EXP, x, 0, 0, &a));
    CHECK_OK(wgml_node_set_name(a, "exp"));
    CHECK_OK(wgml_g_softmax(g, a, NULL, NULL, NULL, &b));
    CHECK_OK(wgml_node_set_name(b, "softmax"));
    CHECK_OK(wgml_graph_output(g, b));
    CHECK_OK(wgml_graph_compile(g, NULL));
    int done = 0;
    CHECK_OK(wgml_graph_run(g));
    for (int spin = 0; spin < 2000000 && !done; spin++)
        CHECK_OK(wgml_graph_done(g, &done));
    CHECK(done, "the run never completed by polling");
    CHECK_OK(wgml_graph_run(g));
    CHECK_OK(wgml_graph_wait(g));
    CHECK_OK(wgml_graph_done(g, &done));
    CHECK(done == 1, "done after a wait");
    if (in.features & WGML_FEATURE_TIMESTAMPS) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        CHECK_OK(wgml_graph_profile_print(g, f));
        fclose(f);
        printf("%s", buf);
        CHECK(strstr(buf, "'exp' (unary)") && strstr(buf, "'softmax' (softmax)"), "per-node profile lacks nodes");
        free(buf);
    } else {
        printf("    no timestamps on this device: profile not checked\n");
    }
    wgml_graph_free(g);
    wgml_ctx_destroy(pc);
}

/* Ops' scratch in a graph lives in the arena, after the planned tensors:
 * set_rows' winners table (repeated indices: the last occurrence wins),
 * zeroed on every run by its recorded fill. */
static void scratch_in_arena(void)
{
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    wgml_node *x, *idx, *dst, *out;
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){6, 8}, &x));
    CHECK_OK(wgml_graph_input(g, "idx", WGML_I32, 1, (int64_t[]){6}, &idx));
    CHECK_OK(wgml_g_fill(g, WGML_F32, 2, (int64_t[]){10, 8}, -1.0, &dst));
    CHECK_OK(wgml_g_set_rows(g, dst, idx, x, &out));
    CHECK_OK(wgml_graph_output(g, out));
    CHECK_OK(wgml_graph_compile(g, NULL));
    wgml_graph_stats gs;
    CHECK_OK(wgml_graph_stats_get(g, &gs));
    printf("    arena %llu bytes of tensors + %llu of scratch\n", (unsigned long long)gs.arena_bytes,
           (unsigned long long)gs.scratch_bytes);
    CHECK(gs.scratch_bytes > 0 && g->scratch_off >= gs.arena_bytes, "no scratch region after the tensors");
    CHECK(gs.recordings == 1, "set_rows declares its scratch: one recording at compile, not %llu",
          (unsigned long long)gs.recordings);
    float xh[48];
    for (int i = 0; i < 48; i++)
        xh[i] = (float)i;
    const int32_t sets[2][6] = {{3, 1, 3, 9, 1, 0}, {2, 2, 2, 5, 7, 5}};
    CHECK_OK(wgml_graph_write(g, x, xh, sizeof xh));
    for (int r = 0; r < 2; r++) {
        CHECK_OK(wgml_graph_write(g, idx, sets[r], sizeof sets[r]));
        CHECK_OK(wgml_graph_run(g));
        float got[80], want[80];
        for (int i = 0; i < 80; i++)
            want[i] = -1;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 8; j++)
                want[sets[r][i] * 8 + j] = xh[i * 8 + j];
        CHECK_OK(wgml_graph_read(g, out, got, sizeof got));
        CHECK(!memcmp(got, want, sizeof got), "run %d: set_rows with repeated indices wrong", r);
    }
    wgml_graph_free(g);
}

/* Rows longer than one storage binding inside a graph (a 4 KiB-window
 * context): chunked softmax and norms and rope in pieces take their
 * scratch from the arena, bind it next to the arena's other tensors, and
 * equal the same ops run eagerly. */
static void long_rows_in_graph(void)
{
    wgml_ctx *sc = small_window_ctx("4096");
    if (!sc)
        return;
    enum { R = 3, N = 3000, HD = 2048 };
    float *xh = host_f32(R * N, -3, 3), *wh = host_f32(N, 0.5, 1.5), *qh = host_f32(2 * HD, -2, 2);
    int32_t ph[2] = {3, 11};
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(sc, &g));
    wgml_node *x, *w, *q, *pos, *o[8], *xg, *w8, *ws, *xt;
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){R, N}, &x));
    CHECK_OK(wgml_graph_input(g, "w", WGML_F32, 1, (int64_t[]){N}, &w));
    CHECK_OK(wgml_graph_input(g, "q", WGML_F32, 3, (int64_t[]){2, 1, HD}, &q));
    CHECK_OK(wgml_graph_input(g, "pos", WGML_I32, 1, (int64_t[]){2}, &pos));
    wgml_softmax_params sp = {-1, 0.5f, 0, 0};
    wgml_norm_params rms = {WGML_RMS_NORM, 1e-6f, 0, 0, 0, 0, 0, 0, 0};
    wgml_norm_params ln = {WGML_LAYER_NORM, 1e-5f, 0, 0, 0, 0, 0, 0, 0};
    wgml_rope_params rp = {WGML_ROPE_NEOX, HD, 10000, 1, 0, 1, 32, 1, 0, {0}, 0, 0};
    CHECK_OK(wgml_g_softmax(g, x, NULL, NULL, &sp, &o[0]));
    CHECK_OK(wgml_g_norm(g, x, &rms, w, NULL, NULL, &o[1]));
    CHECK_OK(wgml_g_norm(g, o[0], &ln, NULL, w, NULL, &o[2]));
    CHECK_OK(wgml_g_rope(g, q, pos, &rp, NULL, &o[3]));
    /* group norm, groups of 2 x 1500, with a strided weight (copied to a
     * contiguous scratch when the group runs in chunks) */
    wgml_norm_params gn = {WGML_GROUP_NORM, 1e-5f, 2, 0, 0, 0, 0, 0, 0};
    CHECK_OK(wgml_g_reshape(g, x, 3, (int64_t[]){1, 6, 1500}, &xg));
    CHECK_OK(wgml_g_reshape(g, w, 1, (int64_t[]){N}, &w8));
    CHECK_OK(wgml_g_slice(g, w8, 0, 0, 12, 2, &ws));
    CHECK_OK(wgml_g_norm(g, xg, &gn, ws, NULL, NULL, &o[4]));
    /* cumsum in pieces (their totals in scratch), argsort of a strided row
     * (copied to a contiguous scratch first), top_k's indices alone */
    CHECK_OK(wgml_g_cumsum(g, x, 1, 0, &o[5]));
    CHECK_OK(wgml_g_transpose(g, x, 0, 1, &xt));
    CHECK_OK(wgml_g_argsort(g, xt, 0, &o[6]));
    CHECK_OK(wgml_g_top_k(g, x, 50, 0, &o[7]));
    for (int i = 0; i < 8; i++)
        CHECK_OK(wgml_graph_output(g, o[i]));
    wgml_graph_options nofuse = {1, 0};
    CHECK_OK(wgml_graph_compile(g, &nofuse));
    wgml_graph_stats gs;
    CHECK_OK(wgml_graph_stats_get(g, &gs));
    printf("    arena %llu + scratch %llu bytes, %llu dispatches\n", (unsigned long long)gs.arena_bytes,
           (unsigned long long)gs.scratch_bytes, (unsigned long long)gs.dispatches);
    CHECK(gs.scratch_bytes > 0, "chunked rows took no scratch from the arena");
    CHECK_OK(wgml_graph_write(g, x, xh, R * N * 4));
    CHECK_OK(wgml_graph_write(g, w, wh, N * 4));
    CHECK_OK(wgml_graph_write(g, q, qh, 2 * HD * 4));
    CHECK_OK(wgml_graph_write(g, pos, ph, sizeof ph));
    CHECK_OK(wgml_graph_run(g));
    /* the same ops eagerly on the same context */
    wgml_graph *e = NULL;
    CHECK_OK(wgml_graph_create_eager(sc, &e));
    wgml_node *ex, *ew, *eq, *ep, *eo[8], *exg, *ews, *ext;
    CHECK_OK(wgml_graph_input(e, "x", WGML_F32, 2, (int64_t[]){R, N}, &ex));
    CHECK_OK(wgml_graph_write(e, ex, xh, R * N * 4));
    CHECK_OK(wgml_graph_input(e, "w", WGML_F32, 1, (int64_t[]){N}, &ew));
    CHECK_OK(wgml_graph_write(e, ew, wh, N * 4));
    CHECK_OK(wgml_graph_input(e, "q", WGML_F32, 3, (int64_t[]){2, 1, HD}, &eq));
    CHECK_OK(wgml_graph_write(e, eq, qh, 2 * HD * 4));
    CHECK_OK(wgml_graph_input(e, "pos", WGML_I32, 1, (int64_t[]){2}, &ep));
    CHECK_OK(wgml_graph_write(e, ep, ph, sizeof ph));
    CHECK_OK(wgml_g_softmax(e, ex, NULL, NULL, &sp, &eo[0]));
    CHECK_OK(wgml_g_norm(e, ex, &rms, ew, NULL, NULL, &eo[1]));
    CHECK_OK(wgml_g_norm(e, eo[0], &ln, NULL, ew, NULL, &eo[2]));
    CHECK_OK(wgml_g_rope(e, eq, ep, &rp, NULL, &eo[3]));
    CHECK_OK(wgml_g_reshape(e, ex, 3, (int64_t[]){1, 6, 1500}, &exg));
    CHECK_OK(wgml_g_slice(e, ew, 0, 0, 12, 2, &ews));
    CHECK_OK(wgml_g_norm(e, exg, &gn, ews, NULL, NULL, &eo[4]));
    CHECK_OK(wgml_g_cumsum(e, ex, 1, 0, &eo[5]));
    CHECK_OK(wgml_g_transpose(e, ex, 0, 1, &ext));
    CHECK_OK(wgml_g_argsort(e, ext, 0, &eo[6]));
    CHECK_OK(wgml_g_top_k(e, ex, 50, 0, &eo[7]));
    const int64_t n[8] = {R * N, R * N, R * N, 2 * HD, R * N, R * N, R * N, R * 50};
    for (int i = 0; i < 8; i++) {
        float *a = malloc((size_t)n[i] * 4), *b = malloc((size_t)n[i] * 4);
        CHECK_OK(wgml_graph_read(g, o[i], a, (uint64_t)n[i] * 4));
        CHECK_OK(wgml_graph_read(e, eo[i], b, (uint64_t)n[i] * 4));
        int bad = 0;
        for (int64_t k = 0; k < n[i]; k++)
            bad += !f32_close(a[k], b[k]);
        CHECK(!bad, "output %d: %d of %lld elements differ from eager", i, bad, (long long)n[i]);
        free(a), free(b);
    }
    wgml_graph_free(e);
    wgml_graph_free(g);
    free(xh), free(wh), free(qh);
    wgml_ctx_destroy(sc);
}

/* Every op that takes scratch declares it: a graph with a variance over a
 * long axis (partial states), an argsort of rows longer than one block
 * (a pair array) and a sample node sizes its scratch region from the
 * declarations alone (one recording: no request fell back to the pool),
 * and two runs on new inputs equal the ops run eagerly.  Their operands
 * are intermediates (negated inputs, a negated result), so the scratch
 * shares the arena's buffer with them (with 64 KiB windows: running
 * states, sort chunks and ranks).  A cumsum of rows of 16384 (block
 * totals) rides along.  The region is
 * the largest declaration: var of [4, 8192] = 256 (running states 4 x 16
 * bytes) + 1024 (4 rows x 16 chunks x 16 bytes); argsort of [2, 5000] =
 * 2 x 8192 pairs x 8 = 131072 (its one-row path: 20224 + 65536 + 32768);
 * sample of [3, 1000] = 256 + 16000 -> 16128; cumsum of [2, 16384]: its
 * one-row path, 2 x 65536 for a piece per element + 2 x 256 for the
 * totals' totals = 131584, the largest. */
static void scratch_replays_on(wgml_ctx *c)
{
    enum { R = 4, L = 8192, SR = 2, SL = 5000, V = 1000 };
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(c, &g));
    wgml_node *x, *xs, *lg, *nx, *nxs, *nlg, *var, *x2, *o[4];
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){R, L}, &x));
    CHECK_OK(wgml_graph_input(g, "xs", WGML_F32, 2, (int64_t[]){SR, SL}, &xs));
    CHECK_OK(wgml_graph_input(g, "logits", WGML_F32, 2, (int64_t[]){3, V}, &lg));
    wgml_sample_params smp = {0.8f, 40, 0.9f, 0.0f, 1234};
    CHECK_OK(wgml_g_unary(g, WGML_NEG, x, 0, 0, &nx));
    CHECK_OK(wgml_g_unary(g, WGML_NEG, xs, 0, 0, &nxs));
    CHECK_OK(wgml_g_unary(g, WGML_NEG, lg, 0, 0, &nlg));
    CHECK_OK(wgml_g_reduce(g, WGML_VAR, nx, 2, 1.0f, &var));
    CHECK_OK(wgml_g_unary(g, WGML_NEG, var, 0, 0, &o[0]));
    CHECK_OK(wgml_g_argsort(g, nxs, 1, &o[1]));
    CHECK_OK(wgml_g_sample(g, nlg, NULL, &smp, &o[2]));
    CHECK_OK(wgml_g_reshape(g, nx, 2, (int64_t[]){2, R * L / 2}, &x2));
    CHECK_OK(wgml_g_cumsum(g, x2, 1, 0, &o[3]));
    for (int i = 0; i < 4; i++)
        CHECK_OK(wgml_graph_output(g, o[i]));
    wgml_graph_options nofuse = {1, 0};
    CHECK_OK(wgml_graph_compile(g, &nofuse));
    const uint64_t want[4] = {256 + 1024, 2 * 8192 * 8, 256 + 16128, 2 * 65536 + 2 * 256};
    uint64_t most = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t d = declared_of(i ? o[i] : var);
        CHECK(d == want[i], "node %d declares %llu bytes of scratch, not %llu", i, (unsigned long long)d,
              (unsigned long long)want[i]);
        most = d > most ? d : most;
    }
    wgml_graph_stats gs;
    CHECK_OK(wgml_graph_stats_get(g, &gs));
    printf("    arena %llu + scratch %llu bytes (needed %llu)\n", (unsigned long long)gs.arena_bytes,
           (unsigned long long)gs.scratch_bytes, (unsigned long long)g->scratch_need);
    CHECK(gs.scratch_bytes == most, "scratch region %llu bytes, the declarations say %llu",
          (unsigned long long)gs.scratch_bytes, (unsigned long long)most);
    CHECK(g->scratch_need <= gs.scratch_bytes && gs.recordings == 1,
          "the nodes took %llu bytes over %llu recordings: some scratch came from the pool",
          (unsigned long long)g->scratch_need, (unsigned long long)gs.recordings);
    for (int run = 0; run < 2; run++) {
        float *xh = host_f32(R * L, -2 - run, 3), *sh = host_f32(SR * SL, -1, 1 + run), *lh = host_f32(3 * V, -4, 4);
        CHECK_OK(wgml_graph_write(g, x, xh, R * L * 4));
        CHECK_OK(wgml_graph_write(g, xs, sh, SR * SL * 4));
        CHECK_OK(wgml_graph_write(g, lg, lh, 3 * V * 4));
        CHECK_OK(wgml_graph_run(g));
        wgml_graph *e = NULL;
        wgml_node *ex, *exs, *elg, *enx, *enxs, *enlg, *evar, *ex2, *eo[4];
        CHECK_OK(wgml_graph_create_eager(c, &e));
        CHECK_OK(wgml_graph_input(e, "x", WGML_F32, 2, (int64_t[]){R, L}, &ex));
        CHECK_OK(wgml_graph_write(e, ex, xh, R * L * 4));
        CHECK_OK(wgml_graph_input(e, "xs", WGML_F32, 2, (int64_t[]){SR, SL}, &exs));
        CHECK_OK(wgml_graph_write(e, exs, sh, SR * SL * 4));
        CHECK_OK(wgml_graph_input(e, "logits", WGML_F32, 2, (int64_t[]){3, V}, &elg));
        CHECK_OK(wgml_graph_write(e, elg, lh, 3 * V * 4));
        CHECK_OK(wgml_g_unary(e, WGML_NEG, ex, 0, 0, &enx));
        CHECK_OK(wgml_g_unary(e, WGML_NEG, exs, 0, 0, &enxs));
        CHECK_OK(wgml_g_unary(e, WGML_NEG, elg, 0, 0, &enlg));
        CHECK_OK(wgml_g_reduce(e, WGML_VAR, enx, 2, 1.0f, &evar));
        CHECK_OK(wgml_g_unary(e, WGML_NEG, evar, 0, 0, &eo[0]));
        CHECK_OK(wgml_g_argsort(e, enxs, 1, &eo[1]));
        CHECK_OK(wgml_g_sample(e, enlg, NULL, &smp, &eo[2]));
        CHECK_OK(wgml_g_reshape(e, enx, 2, (int64_t[]){2, R * L / 2}, &ex2));
        CHECK_OK(wgml_g_cumsum(e, ex2, 1, 0, &eo[3]));
        const int64_t n[4] = {R, SR * SL, 3, R * L};
        for (int i = 0; i < 4; i++) {
            uint32_t *a = malloc((size_t)n[i] * 4), *b = malloc((size_t)n[i] * 4);
            CHECK_OK(wgml_graph_read(g, o[i], a, (uint64_t)n[i] * 4));
            CHECK_OK(wgml_graph_read(e, eo[i], b, (uint64_t)n[i] * 4));
            int bad = 0;
            for (int64_t k = 0; k < n[i]; k++) /* var, cumsum: f32 sums; indices and ids exact */
                bad += i == 1 || i == 2 ? a[k] != b[k] : !f32_close(((float *)a)[k], ((float *)b)[k]);
            CHECK(!bad, "run %d, output %d: %d of %lld elements differ from eager", run, i, bad, (long long)n[i]);
            free(a), free(b);
        }
        wgml_graph_free(e);
        free(xh), free(sh), free(lh);
    }
    wgml_graph_free(g);
}

/* On the test's context, then with 4 KiB windows: sampling's long rows
 * (state and partials), sorts in chunks and boxes of running states. */
static void declared_scratch_replays(void)
{
    scratch_replays_on(t_ctx);
    if (t_env_set("WGML_MAX_BINDING"))
        return; /* the _window run: its windows cut the same paths (~1.3 s saved on lavapipe) */
    wgml_ctx *sc = small_window_ctx("4096");
    if (sc)
        scratch_replays_on(sc);
    wgml_ctx_destroy(sc);
}

static const t_case cases[] = {
    {"op_table_complete", op_table_complete},
    {"symbolic_dims_rebind_without_compiling", symbolic_dims_rebind_without_compiling},
    {"rebinding_compiles_no_pipeline", rebinding_compiles_no_pipeline},
    {"state_persists_across_runs", state_persists_across_runs},
    {"reads_in_flight_and_device_copies", reads_in_flight_and_device_copies},
    {"bad_index_in_graph", bad_index_in_graph},
    {"bad_graphs_name_the_node", bad_graphs_name_the_node},
    {"verifier_can_fail", verifier_can_fail},
    {"arena_reuse", arena_reuse},
    {"eager_makes_outputs", eager_makes_outputs},
    {"dump_and_nancheck", dump_and_nancheck},
    {"async_completion_and_profile", async_completion_and_profile},
    {"scratch_in_arena", scratch_in_arena},
    {"long_rows_in_graph", long_rows_in_graph},
    {"declared_scratch_replays", declared_scratch_replays},
};

int main(int argc, char **argv) { return graph_main(argc, argv, cases, sizeof cases / sizeof *cases); }
