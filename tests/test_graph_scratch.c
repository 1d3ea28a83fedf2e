/* Declared scratch of the row ops (src/ops/optable_scratch.c): softmax's
 * and norm's chunked-row partials and rope's NEOX pieces, in a compiled
 * graph on a context with 4 KiB windows, sized from the declarations
 * alone and equal to the same ops called eagerly (whose wrapper fails
 * when an op takes more scratch than its row declares). */
#include "graph_harness.h"

static wgml_tensor *up(wgml_ctx *c, wgml_dtype dt, int nd, const int64_t *shape, const void *h, uint64_t bytes)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(c, dt, nd, shape, &t));
    if (t)
        CHECK_OK(wgml_tensor_upload(t, h, bytes));
    return t;
}

/* Rows of 1500 f32 (6000 bytes) exceed a 4096-byte window, so softmax and
 * RMS norm run chunked: 2 partials of 3 rows x K <= 1500 chunks, a256(3 x
 * 1500 x 4 = 18000) = 18176 each, 36352 declared (the largest).  NEOX
 * rope of head_dim 1536 (6144 bytes) gathers pieces of 512 pairs (4096 /
 * 4 / 2) into scratch: 2 pieces, each reusing the last's; declared 2 rows
 * x 1536 x 4 = 12288 per tensor, 24576.  A softmax over axis 0 of
 * [4, 1024] reads rows of stride 4096 bytes, one element a window: K = 4
 * = len, the bound's worst case: it takes all its 2 x 4096 x 4 = 32768. */
static void row_ops_declare_scratch(void)
{
    wgml_ctx *sc = small_window_ctx("4096");
    if (!sc)
        return;
    enum { R = 3, N = 1500, HD = 1536, SR = 4, SC = 1024 };
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(sc, &g));
    wgml_node *x, *w, *q, *pos, *s, *o[4];
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){R, N}, &x));
    CHECK_OK(wgml_graph_input(g, "w", WGML_F32, 1, (int64_t[]){N}, &w));
    CHECK_OK(wgml_graph_input(g, "q", WGML_F32, 3, (int64_t[]){2, 1, HD}, &q));
    CHECK_OK(wgml_graph_input(g, "pos", WGML_I32, 1, (int64_t[]){2}, &pos));
    CHECK_OK(wgml_graph_input(g, "s", WGML_F32, 2, (int64_t[]){SR, SC}, &s));
    wgml_softmax_params sp = {-1, 0.5f, 0, 0}, s0 = {0, 1, 0, 0};
    wgml_norm_params rms = {WGML_RMS_NORM, 1e-6f, 0, 0, 0, 0, 0, 0, 0};
    wgml_rope_params rp = {WGML_ROPE_NEOX, HD, 10000, 1, 0, 1, 32, 1, 0, {0}, 0, 0};
    CHECK_OK(wgml_g_softmax(g, x, NULL, NULL, &sp, &o[0]));
    CHECK_OK(wgml_g_norm(g, x, &rms, w, NULL, NULL, &o[1]));
    CHECK_OK(wgml_g_rope(g, q, pos, &rp, NULL, &o[2]));
    CHECK_OK(wgml_g_softmax(g, s, NULL, NULL, &s0, &o[3]));
    for (int i = 0; i < 4; i++)
        CHECK_OK(wgml_graph_output(g, o[i]));
    wgml_graph_options nofuse = {1, 0};
    CHECK_OK(wgml_graph_compile(g, &nofuse));
    const uint64_t want[4] = {36352, 36352, 24576, 32768};
    for (int i = 0; i < 4; i++) {
        uint64_t d = declared_of(o[i]);
        CHECK(d == want[i], "node %d declares %llu bytes of scratch, not %llu", i, (unsigned long long)d,
              (unsigned long long)want[i]);
    }
    wgml_graph_stats gs;
    CHECK_OK(wgml_graph_stats_get(g, &gs));
    printf("    arena %llu + scratch %llu bytes (needed %llu), %llu dispatches\n", (unsigned long long)gs.arena_bytes,
           (unsigned long long)gs.scratch_bytes, (unsigned long long)g->scratch_need,
           (unsigned long long)gs.dispatches);
    CHECK(gs.scratch_bytes == 36352, "scratch region %llu bytes, the largest declaration is 36352",
          (unsigned long long)gs.scratch_bytes);
    CHECK(g->scratch_need <= gs.scratch_bytes && gs.recordings == 1,
          "the nodes took %llu bytes over %llu recordings: some scratch came from the pool",
          (unsigned long long)g->scratch_need, (unsigned long long)gs.recordings);
    /* the most a node took: the strided softmax's, its whole declaration
     * (the others: 2 x 256 for 3 rows x 2 chunks; rope 2 x 8192) */
    CHECK(g->scratch_need == 32768, "the nodes took at most %llu bytes of scratch, not 32768",
          (unsigned long long)g->scratch_need);
    const int64_t n[4] = {R * N, R * N, 2 * HD, SR * SC};
    for (int run = 0; run < 2; run++) {
        float *xh = host_f32(R * N, -3 - run, 3), *wh = host_f32(N, 0.5, 1.5 + run), *qh = host_f32(2 * HD, -2, 2);
        float *sh = host_f32(SR * SC, -4, 4 + run);
        int32_t ph[2] = {3 + run, 11 + 7 * run};
        CHECK_OK(wgml_graph_write(g, x, xh, R * N * 4));
        CHECK_OK(wgml_graph_write(g, w, wh, N * 4));
        CHECK_OK(wgml_graph_write(g, q, qh, 2 * HD * 4));
        CHECK_OK(wgml_graph_write(g, pos, ph, sizeof ph));
        CHECK_OK(wgml_graph_write(g, s, sh, SR * SC * 4));
        CHECK_OK(wgml_graph_run(g));
        /* the eager calls, through the op table's wrapper and its check */
        wgml_tensor *ex = up(sc, WGML_F32, 2, (int64_t[]){R, N}, xh, R * N * 4);
        wgml_tensor *ew = up(sc, WGML_F32, 1, (int64_t[]){N}, wh, N * 4);
        wgml_tensor *eq = up(sc, WGML_F32, 3, (int64_t[]){2, 1, HD}, qh, 2 * HD * 4);
        wgml_tensor *ep = up(sc, WGML_I32, 1, (int64_t[]){2}, ph, sizeof ph);
        wgml_tensor *es = up(sc, WGML_F32, 2, (int64_t[]){SR, SC}, sh, SR * SC * 4);
        wgml_tensor *eo[4] = {NULL, NULL, NULL, NULL};
        CHECK_OK(wgml_tensor_new(sc, WGML_F32, 2, (int64_t[]){R, N}, &eo[0]));
        CHECK_OK(wgml_tensor_new(sc, WGML_F32, 2, (int64_t[]){R, N}, &eo[1]));
        CHECK_OK(wgml_tensor_new(sc, WGML_F32, 3, (int64_t[]){2, 1, HD}, &eo[2]));
        CHECK_OK(wgml_tensor_new(sc, WGML_F32, 2, (int64_t[]){SR, SC}, &eo[3]));
        wgml_norm_params ew_rms = rms;
        ew_rms.weight = ew;
        if (ex && ew && eq && ep && es && eo[0] && eo[1] && eo[2] && eo[3]) {
            CHECK_OK(wgml_softmax(ex, NULL, NULL, &sp, eo[0]));
            CHECK_OK(wgml_norm(ex, &ew_rms, eo[1]));
            CHECK_OK(wgml_rope(eq, ep, &rp, eo[2]));
            CHECK_OK(wgml_softmax(es, NULL, NULL, &s0, eo[3]));
            for (int i = 0; i < 4; i++) {
                float *a = malloc((size_t)n[i] * 4), *b = malloc((size_t)n[i] * 4);
                CHECK_OK(wgml_graph_read(g, o[i], a, (uint64_t)n[i] * 4));
                CHECK_OK(wgml_tensor_download(eo[i], b, (uint64_t)n[i] * 4));
                int bad = 0;
                for (int64_t k = 0; k < n[i]; k++)
                    bad += !f32_close(a[k], b[k]);
                CHECK(!bad, "run %d, output %d: %d of %lld elements differ from eager", run, i, bad, (long long)n[i]);
                free(a), free(b);
            }
        }
        wgml_tensor *all[9] = {ex, ew, eq, ep, es, eo[0], eo[1], eo[2], eo[3]};
        for (int i = 0; i < 9; i++)
            wgml_tensor_free(all[i]);
        free(xh), free(wh), free(qh), free(sh);
    }
    wgml_graph_free(g);
    wgml_ctx_destroy(sc);
}

static const t_case cases[] = {
    {"row_ops_declare_scratch", row_ops_declare_scratch},
};

int main(int argc, char **argv) { return graph_main(argc, argv, cases, sizeof cases / sizeof *cases); }
