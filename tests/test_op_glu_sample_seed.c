/* Sampling with a seed tensor (wgml_sample_seeded, wgml_g_sample's seed
 * node): its first element, read on the GPU, is added to params.seed mod
 * 2^64 (i32 sign-extended), so element 0 draws as no tensor, element s as
 * params.seed + s (and as the reference with that seed), other seeds draw
 * otherwise; bad seed tensors are refused with messages; a compiled graph
 * draws anew each run when only its seed input is rewritten.  The chunked
 * long-row path with a seed: test_op_limits_rows.c. */
#include "op_harness.h"
#include "ops/rope.h"
#include "wgml_graph.h"

enum { ROWS = 64, VOCAB = 300 };

/* An i32 or u32 tensor [n] holding v (as bits). */
static wgml_tensor *seed_tensor(wgml_dtype dt, int64_t n, const uint32_t *v)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, dt, 1, &n, &t));
    if (t)
        CHECK_OK(wgml_tensor_upload(t, v, (uint64_t)n * 4));
    return t;
}

/* ids of wgml_sample_seeded (seed may be NULL) into a fresh out (caller frees). */
static int32_t *draw(const wgml_tensor *l, const wgml_tensor *seed, const wgml_sample_params *p)
{
    int64_t rows = wgml_tensor_dim(l, 0);
    wgml_tensor *o = t_poisoned(WGML_I32, 1, &rows);
    int32_t *ids = calloc((size_t)rows + 1, sizeof *ids);
    wgml_status st = wgml_sample_seeded(l, seed, p, o);
    CHECK(st == WGML_OK, "sample_seeded: %s", wgml_last_error());
    if (st == WGML_OK)
        CHECK_OK(wgml_tensor_download(o, ids, sizeof(int32_t) * (size_t)rows));
    wgml_tensor_free(o);
    return ids;
}

static int differing(const int32_t *a, const int32_t *b, int64_t n)
{
    int d = 0;
    for (int64_t i = 0; i < n; i++)
        d += a[i] != b[i];
    return d;
}

/* The host-side sum: carries into the high word, i32 sign-extends. */
static void t_seed_add(void)
{
    CHECK(wg_sample_seed_add(7, 0, false) == 7 && wg_sample_seed_add(7, 0, true) == 7, "0 must add nothing");
    CHECK(wg_sample_seed_add(0xfffffff0ull, 0x20, false) == 0x100000010ull, "no carry into the high word");
    CHECK(wg_sample_seed_add(5, 0xffffffffu, true) == 4, "i32 -1 is not sign-extended");
    CHECK(wg_sample_seed_add(5, 0xffffffffu, false) == 0x100000004ull, "u32 0xffffffff is not zero-extended");
    CHECK(wg_sample_seed_add(UINT64_MAX, 1, false) == 0, "the sum does not wrap mod 2^64");
}

/* Element 0, of either dtype and wherever it sits (a slice at element 70,
 * not 256-byte aligned; the first of a [2, 3]), draws exactly as no seed
 * tensor, for the top_k/top_p/min_p variants too. */
static void t_seed_zero(void)
{
    const int64_t s[2] = {ROWS, VOCAB}, two[2] = {2, 3};
    t_tensor l = t_random(WGML_F32, 2, s, -3, 3);
    const wgml_sample_params ps[3] = {{1.0f, 0, 1.0f, 0.0f, 11}, {0.8f, 40, 0.9f, 0.0f, 0xfedcba9876543210ull},
                                      {1.3f, 0, 0.95f, 0.02f, 0}};
    uint32_t zeros[80] = {0}, first0[6] = {0, 3, 3, 3, 3, 3}; /* only the first element counts */
    zeros[71] = 9;
    wgml_tensor *si = seed_tensor(WGML_I32, 1, zeros), *su = seed_tensor(WGML_U32, 1, zeros);
    wgml_tensor *big = seed_tensor(WGML_I32, 80, zeros), *at70 = NULL, *s23 = NULL;
    wgml_tensor *sb = seed_tensor(WGML_U32, 6, first0);
    CHECK_OK(wgml_view_slice(big, 0, 70, 72, 1, &at70));
    CHECK_OK(wgml_view_reshape(sb, 2, two, &s23));
    const wgml_tensor *seeds[4] = {si, su, at70, s23};
    for (int i = 0; i < 3; i++) {
        int32_t *want = draw(l.t, NULL, &ps[i]);
        for (int k = 0; k < 4; k++) {
            int32_t *got = draw(l.t, seeds[k], &ps[i]);
            int d = differing(got, want, ROWS);
            CHECK(d == 0, "params %d, seed tensor %d holding 0: %d of %d rows differ from no seed tensor", i, k, d,
                  ROWS);
            free(got);
        }
        free(want);
    }
    wgml_tensor *all[] = {si, su, big, at70, s23, sb};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        wgml_tensor_free(all[i]);
    t_free(&l);
}

/* Element s draws as params.seed + s (wg_sample_seed_add) without a
 * tensor, and as the reference with that seed: low words that carry, i32
 * negatives, u32 above 2^31.  Rows off the reference only on f32 rounding
 * boundaries (margin < 1e-5, as test_op_glu_sample.c's compare_rows). */
static void t_seed_sum(void)
{
    const int64_t s[2] = {ROWS, VOCAB};
    t_tensor l = t_random(WGML_F32, 2, s, -3, 3);
    static const struct { wgml_dtype dt; uint32_t v; uint64_t base; } cs[] = {
        {WGML_I32, 1, 12345},           {WGML_I32, 0xffffffffu, 12345}, {WGML_I32, 0x80000000u, 1ull << 40},
        {WGML_U32, 0xffffffffu, 12345}, {WGML_U32, 0x20, 0xfffffff0ull}, {WGML_U32, 77, UINT64_MAX - 3},
    };
    double *row = malloc(sizeof(double) * VOCAB);
    for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
        wgml_sample_params p = {0.9f, 0, 0.95f, 0.0f, cs[c].base}, q = p;
        q.seed = wg_sample_seed_add(cs[c].base, cs[c].v, cs[c].dt == WGML_I32);
        wgml_tensor *st = seed_tensor(cs[c].dt, 1, &cs[c].v);
        int32_t *got = draw(l.t, st, &p), *want = draw(l.t, NULL, &q);
        int d = differing(got, want, ROWS), off = 0;
        CHECK(d == 0, "case %zu: %d of %d rows differ from params.seed + s", c, d, ROWS);
        for (int r = 0; r < ROWS; r++) {
            double margin;
            memcpy(row, l.val + (size_t)r * VOCAB, sizeof(double) * VOCAB);
            off += got[r] != wg_sample_ref(row, VOCAB, &q, (uint64_t)r, &margin) && margin >= 1e-5;
        }
        CHECK(off == 0, "case %zu: %d rows differ from the reference away from any boundary", c, off);
        free(got);
        free(want);
        wgml_tensor_free(st);
    }
    free(row);
    t_free(&l);
}

/* Temperature 1 over near-flat rows (logits in [-0.5, 0.5]: 300 tokens of
 * roughly equal weight, so two independent draws agree with p ~ 1/300):
 * seed elements 1, 2 and 3 each change most of 64 rows, and element 1
 * repeats itself. */
static void t_seed_changes_draws(void)
{
    const int64_t s[2] = {ROWS, VOCAB};
    t_tensor l = t_random(WGML_F32, 2, s, -0.5, 0.5);
    wgml_sample_params p = {1.0f, 0, 1.0f, 0.0f, 42};
    int32_t *ids[4];
    for (uint32_t k = 0; k < 4; k++) {
        wgml_tensor *st = seed_tensor(WGML_U32, 1, &k);
        ids[k] = draw(l.t, st, &p);
        wgml_tensor_free(st);
    }
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++) {
            int d = differing(ids[a], ids[b], ROWS);
            CHECK(d >= ROWS * 7 / 8, "seeds %d and %d: only %d of %d rows differ", a, b, d, ROWS);
        }
    uint32_t one = 1;
    wgml_tensor *st = seed_tensor(WGML_I32, 1, &one);
    int32_t *again = draw(l.t, st, &p);
    CHECK(differing(again, ids[1], ROWS) == 0, "the same seed element drew differently");
    free(again);
    wgml_tensor_free(st);
    for (int k = 0; k < 4; k++)
        free(ids[k]);
    t_free(&l);
}

/* The seed and out as disjoint views of one i32 buffer: the seed binds
 * read_write beside out (one buffer cannot be both read-only and
 * writable in a dispatch), and still draws as params.seed + s. */
static void t_seed_shares_out_buffer(void)
{
    const int64_t s[2] = {ROWS, VOCAB}, n = ROWS + 1;
    t_tensor l = t_random(WGML_F32, 2, s, -2, 2);
    wgml_tensor *buf = NULL, *o = NULL, *sd = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &n, &buf));
    CHECK_OK(wgml_view_slice(buf, 0, 0, ROWS, 1, &o));
    CHECK_OK(wgml_view_slice(buf, 0, ROWS, ROWS + 1, 1, &sd));
    int32_t sv = 5, got[ROWS];
    CHECK_OK(wgml_tensor_upload(sd, &sv, 4));
    wgml_sample_params p = {1.0f, 20, 1.0f, 0.0f, 100}, q = p;
    q.seed = 105;
    CHECK(wgml_sample_seeded(l.t, sd, &p, o) == WGML_OK, "seed beside out: %s", wgml_last_error());
    CHECK_OK(wgml_tensor_download(o, got, sizeof got));
    int32_t *want = draw(l.t, NULL, &q);
    CHECK(differing(got, want, ROWS) == 0, "seed beside out: draws differ from params.seed + 5");
    free(want);
    wgml_tensor_free(sd);
    wgml_tensor_free(o);
    wgml_tensor_free(buf);
    t_free(&l);
}

/* Refused: f32 / i8 seeds, an empty one, another context's, one that out
 * overlaps; each with a message naming the seed.  The graph builder and
 * the eager call give the same codes. */
static void t_seed_errors(void)
{
    const int64_t s[2] = {4, 10}, r4 = 4, one = 1, zero = 0;
    wgml_tensor *l = NULL, *o = NULL, *sf = NULL, *s8 = NULL, *se = NULL, *ok = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s, &l));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &r4, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, &one, &sf));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I8, 1, &one, &s8));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &zero, &se));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_U32, 1, &one, &ok));
    wgml_sample_params p = {1.0f, 0, 1.0f, 0.0f, 1};
    CHECK_OK(wgml_sample_seeded(l, ok, &p, o));
    CHECK_OK(wgml_sample_seeded(l, NULL, &p, o));
    CHECK(wgml_sample_seeded(l, sf, &p, o) == WGML_ERR_DTYPE, "f32 seed accepted");
    CHECK(strstr(wgml_last_error(), "seed") && strstr(wgml_last_error(), "u32"), "message: %s", wgml_last_error());
    CHECK(wgml_sample_seeded(l, s8, &p, o) == WGML_ERR_DTYPE, "i8 seed accepted");
    CHECK(wgml_sample_seeded(l, se, &p, o) == WGML_ERR_SHAPE, "empty seed accepted");
    CHECK(strstr(wgml_last_error(), "no elements") != NULL, "message: %s", wgml_last_error());
    /* out overlapping the seed: rows would race its read */
    wgml_tensor *o1 = NULL;
    CHECK_OK(wgml_view_slice(o, 0, 2, 3, 1, &o1));
    CHECK(wgml_sample_seeded(l, o1, &p, o) == WGML_ERR_INVALID_ARG, "seed overlapping out accepted");
    CHECK(strstr(wgml_last_error(), "seed") != NULL, "message: %s", wgml_last_error());
    wgml_ctx *other = NULL;
    if (wgml_ctx_create(NULL, &other) == WGML_OK) {
        wgml_tensor *so = NULL;
        CHECK_OK(wgml_tensor_new(other, WGML_I32, 1, &one, &so));
        CHECK(wgml_sample_seeded(l, so, &p, o) == WGML_ERR_INVALID_ARG, "another context's seed accepted");
        CHECK(strstr(wgml_last_error(), "context") != NULL, "message: %s", wgml_last_error());
        wgml_tensor_free(so);
        wgml_ctx_destroy(other);
    }
    wgml_graph *g = NULL;
    wgml_node *gl, *gs, *gf, *out;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    CHECK_OK(wgml_graph_input(g, "logits", WGML_F32, 2, s, &gl));
    CHECK_OK(wgml_graph_input(g, "seed_f32", WGML_F32, 1, &one, &gf));
    CHECK_OK(wgml_graph_input(g, "seed_empty", WGML_U32, 1, &zero, &gs));
    CHECK(wgml_g_sample(g, gl, gf, &p, &out) == WGML_ERR_DTYPE, "graph: f32 seed accepted");
    CHECK(strstr(wgml_last_error(), "seed") != NULL, "message: %s", wgml_last_error());
    CHECK(wgml_g_sample(g, gl, gs, &p, &out) == WGML_ERR_SHAPE, "graph: empty seed accepted");
    wgml_graph_free(g);
    wgml_tensor *all[] = {l, o, sf, s8, se, ok, o1};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        wgml_tensor_free(all[i]);
}

/* A decode step's graph, compiled once: logits -> sample with the seed a
 * graph input rewritten before each run (the step counter, as an i32).
 * Runs with seeds 0..3 draw as eager calls with the same seeds, each run
 * differs from the last over near-flat rows, the seed 0 run draws as
 * params.seed alone, and no run records again. */
static void t_seed_graph_replay(void)
{
    const int64_t s[2] = {ROWS, VOCAB}, one = 1;
    t_tensor l = t_random(WGML_F32, 2, s, -0.5, 0.5);
    float *lh = malloc(sizeof(float) * ROWS * VOCAB);
    for (int i = 0; i < ROWS * VOCAB; i++)
        lh[i] = (float)l.val[i];
    wgml_sample_params p = {1.0f, 0, 0.98f, 0.0f, 2024};
    wgml_graph *g = NULL;
    wgml_node *gl, *gs, *tok;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    CHECK_OK(wgml_graph_input(g, "logits", WGML_F32, 2, s, &gl));
    CHECK_OK(wgml_graph_input(g, "step", WGML_I32, 1, &one, &gs));
    CHECK_OK(wgml_g_sample(g, gl, gs, &p, &tok));
    CHECK_OK(wgml_graph_output(g, tok));
    wgml_status st = wgml_graph_compile(g, NULL);
    CHECK(st == WGML_OK, "compile: %s", wgml_last_error());
    int32_t prev[ROWS], got[ROWS];
    for (int32_t step = 0; step < 4 && st == WGML_OK; step++) {
        CHECK_OK(wgml_graph_write(g, gl, lh, sizeof(float) * ROWS * VOCAB));
        CHECK_OK(wgml_graph_write(g, gs, &step, 4));
        CHECK_OK(wgml_graph_run(g));
        CHECK_OK(wgml_graph_read(g, tok, got, sizeof got));
        uint32_t bits = (uint32_t)step;
        wgml_tensor *es = seed_tensor(WGML_I32, 1, &bits);
        int32_t *want = draw(l.t, es, &p), *none = step == 0 ? draw(l.t, NULL, &p) : NULL;
        int d = differing(got, want, ROWS);
        CHECK(d == 0, "run %d: %d of %d rows differ from the eager call with that seed", step, d, ROWS);
        if (none)
            CHECK(differing(got, none, ROWS) == 0, "run 0 (seed 0) differs from params.seed alone");
        if (step > 0) {
            d = differing(got, prev, ROWS);
            CHECK(d >= ROWS * 7 / 8, "run %d: only %d of %d rows changed with the seed", step, d, ROWS);
        }
        memcpy(prev, got, sizeof got);
        free(want);
        free(none);
        wgml_tensor_free(es);
    }
    wgml_graph_stats gst;
    CHECK_OK(wgml_graph_stats_get(g, &gst));
    CHECK(gst.recordings == 1, "the graph recorded %llu times; the seed must not need a new recording",
          (unsigned long long)gst.recordings);
    wgml_graph_free(g);
    free(lh);
    t_free(&l);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"sample_seed_add_host", t_seed_add},
        {"sample_seed_zero_is_no_seed", t_seed_zero},
        {"sample_seed_adds_to_params_seed", t_seed_sum},
        {"sample_seed_changes_draws", t_seed_changes_draws},
        {"sample_seed_beside_out", t_seed_shares_out_buffer},
        {"sample_seed_invalid", t_seed_errors},
        {"sample_seed_graph_replay", t_seed_graph_replay},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
