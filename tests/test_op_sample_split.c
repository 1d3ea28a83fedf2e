/* Sampling's split path (sample.c sample_chunked, split = true): up to 8
 * rows of a large vocabulary run as one workgroup per 2048-logit chunk,
 * with per-chunk candidate lists for top_k <= 256.  GPUs take it from
 * 8192 logits; on CPU adapters it runs forced (WGML_FORCE=sample=split),
 * which every call here does.  Every row is checked
 * against the double reference (wg_sample_ref) and against the one-pass
 * kernel on the same logits (WGML_FORCE=sample=single): the same token,
 * but where the reference puts the row's top-p cut or draw within f32
 * rounding of a boundary (the two paths sum in other orders).  Cases:
 * every filter and their mixes, top_k at and past the lists' capacity and
 * past a chunk's length, a last chunk of 3 logits, ties across chunk
 * boundaries (argmax and the top-k value, more tied logits than any list
 * holds), NaN / -inf / +inf rows, each float dtype, strided and broadcast
 * views, a forced split of small vocabularies, a seed tensor, a compiled
 * graph, and draw frequencies. */
#include "nan_table.h"
#include "ops/rope.h"
#include "wgml_graph.h"

enum { V = 4 * 2048 + 3 }; /* five chunks, the last of 3 logits */

static wgml_sample_params sp(float t, int k, float top_p, float min_p, uint64_t seed)
{
    wgml_sample_params p = {t, k, top_p, min_p, seed};
    return p;
}

/* The filters and their mixes: greedy, temperature alone, top-k (below,
 * at and past the lists' 256, past a chunk), top-p alone (the probes),
 * with top-k (the lists), min-p, top-p 0. */
static const wgml_sample_params params[] = {
    {0.0f, 0, 1.0f, 0.0f, 1},      {1.0f, 0, 1.0f, 0.0f, 2},      {0.7f, 40, 1.0f, 0.0f, 3},
    {0.8f, 40, 0.9f, 0.0f, 4},     {0.8f, 40, 0.95f, 0.05f, 5},   {1.3f, 0, 0.9f, 0.0f, 6},
    {1.0f, 0, 1.0f, 0.1f, 7},      {1.0f, 256, 0.97f, 0.0f, 8},   {1.0f, 257, 0.97f, 0.0f, 9},
    {1.0f, 5000, 1.0f, 0.0f, 10},  {1.0f, 100, 0.0f, 0.0f, 11},   {2.0f, 7, 0.5f, 0.01f, 12},
    {1.5f, 1, 1.0f, 0.0f, 13},
};
#define NPARAMS (sizeof params / sizeof *params)

/* ids of wgml_sample_seeded(logits, seed, p) with WGML_FORCE=sample=<path>
 * (NULL: the table's choice), into a fresh out (caller frees). */
static int32_t *draw_on(const char *path, const wgml_tensor *l, const wgml_tensor *seed,
                        const wgml_sample_params *p)
{
    int64_t rows = wgml_tensor_dim(l, 0);
    if (path) {
        char v[32];
        snprintf(v, sizeof v, "sample=%s", path);
        t_env("WGML_FORCE", v);
    }
    wgml_tensor *o = t_poisoned(WGML_I32, 1, &rows);
    int32_t *ids = calloc((size_t)rows + 1, sizeof *ids);
    wgml_status st = wgml_sample_seeded(l, seed, p, o);
    CHECK(st == WGML_OK, "sample (%s): %s", path ? path : "table", wgml_last_error());
    if (st == WGML_OK)
        CHECK_OK(wgml_tensor_download(o, ids, sizeof(int32_t) * (size_t)rows));
    t_env("WGML_FORCE", NULL);
    wgml_tensor_free(o);
    return ids;
}

/* Split against the reference and the one-pass kernel, row by row (vals:
 * logical values, rows x vocab); a row may differ only where the
 * reference's margin is within f32 rounding (test_op_glu_sample.c
 * compare_rows).  Returns the split path's ids (caller frees). */
static int32_t *check_split(const char *what, const wgml_tensor *l, const double *vals, const wgml_sample_params *p)
{
    int64_t rows = wgml_tensor_dim(l, 0), vocab = wgml_tensor_dim(l, 1);
    int32_t *a = draw_on("split", l, NULL, p), *b = draw_on("single", l, NULL, p);
    int off = 0, near = 0;
    for (int64_t r = 0; r < rows; r++) {
        double margin;
        int32_t want = wg_sample_ref(vals + r * vocab, vocab, p, (uint64_t)r, &margin);
        bool ok = a[r] == want && b[r] == want;
        near += !ok;
        if (!ok && margin >= 1e-5 && off++ < 4)
            printf("    %s row %lld: split %d, one-pass %d, reference %d (margin %.3g)\n", what, (long long)r, a[r],
                   b[r], want, margin);
        CHECK(a[r] >= 0 && a[r] < vocab, "%s row %lld: id %d out of range", what, (long long)r, a[r]);
    }
    CHECK(off == 0, "%s: %d rows differ away from any rounding boundary", what, off);
    CHECK(near <= rows / 100 + 1, "%s: %d rows on a boundary differ", what, near);
    free(b);
    return a;
}

/* Every filter on 5 rows of V (five chunks) and one row of 128,256 (63
 * chunks), logits in [-8, 8] / [-12, 12]. */
static void t_split_filters(void)
{
    const int64_t s[2] = {5, V}, big[2] = {1, 128256};
    t_tensor l = t_random(WGML_F32, 2, s, -8, 8), lb = t_random(WGML_F32, 2, big, -12, 12);
    for (size_t i = 0; i < NPARAMS; i++) {
        char what[48];
        snprintf(what, sizeof what, "[5, %d] params %zu", V, i);
        free(check_split(what, l.t, l.val, &params[i]));
        if (i == 0 || i == 3 || i == 5) {
            snprintf(what, sizeof what, "[1, 128256] params %zu", i);
            free(check_split(what, lb.t, lb.val, &params[i]));
        }
    }
    t_free(&l);
    t_free(&lb);
}

/* Writes v[i] into logits element i of row r (device and mirror). */
static void put(t_tensor *l, int64_t r, int64_t i, double v)
{
    int64_t vocab = wgml_tensor_dim(l->t, 1);
    wg_host_set(l->t->dtype, l->host, (size_t)(r * vocab + i), v);
    l->val[r * vocab + i] = wg_host_get(l->t->dtype, l->host, (size_t)(r * vocab + i));
}

/* Ties: row 0's maximum at 2047, 2048 (the next chunk's first) and 4095
 * (greedy: 2047); row 1's only in the last chunk; row 2: 30 large logits
 * over every chunk and 3000 at 0.5 (the 40th largest value, so all 3000
 * are kept: more than any chunk lists, and chunk 1 is nothing but 0.5);
 * row 3: every logit 1.0 but ten.  Greedy, top-k 40 with and without
 * top-p, over 8 seeds. */
static void t_split_ties(void)
{
    const int64_t s[2] = {4, V};
    t_tensor l = t_random(WGML_F32, 2, s, -4, 0);
    put(&l, 0, 2047, 9);
    put(&l, 0, 2048, 9);
    put(&l, 0, 4095, 9);
    put(&l, 1, V - 2, 9);
    for (int64_t i = 2048; i < 4096; i++)
        put(&l, 2, i, 0.5);
    for (int64_t i = 0; i < 952; i++)
        put(&l, 2, 4200 + i * 4, 0.5);
    for (int i = 0; i < 30; i++) /* a few of them over the 0.5s */
        put(&l, 2, (int64_t)i * 271 + 5, 1 + 0.1 * i);
    for (int64_t i = 0; i < V; i++)
        put(&l, 3, i, i % 800 == 13 ? 1.5 : 1.0);
    CHECK_OK(wgml_tensor_upload(l.t, l.host, wgml_tensor_nbytes(l.t)));
    wgml_sample_params g = sp(0, 0, 1, 0, 1);
    int32_t *ids = check_split("ties, greedy", l.t, l.val, &g);
    CHECK(ids[0] == 2047 && ids[1] == V - 2, "greedy across chunks drew %d and %d", ids[0], ids[1]);
    free(ids);
    int tied = 0;
    for (uint64_t seed = 0; seed < 8; seed++) {
        wgml_sample_params a = sp(1, 40, 1, 0, seed), b = sp(0.5f, 40, 0.8f, 0, seed), c = sp(1, 12, 1, 0, seed);
        int32_t *x = check_split("ties, top-k 40", l.t, l.val, &a);
        tied += x[2] >= 2048 && l.val[2 * V + x[2]] == 0.5;
        free(x);
        free(check_split("ties, top-k 40 top-p 0.8", l.t, l.val, &b));
        free(check_split("ties, top-k 12", l.t, l.val, &c));
    }
    CHECK(tied > 0, "top-k 40 over 3000 tied logits never drew a tied one in 8 draws");
    t_free(&l);
}

/* NaN rule (wgml.h) on the split path, each float dtype: rows with NaN
 * every 7th logit, only NaN (-> 0), NaN and -inf (-> the first -inf,
 * 5000), +inf at 6000 and 7000 (-> 6000), one chunk all NaN, a single
 * finite logit among -inf (always drawn), and ten valid logits (fewer
 * than top_k 40).  Every filter, 2 seeds (f32; 1 for f16 and bf16): in range, never a NaN's index
 * unless the row has nothing else, equal to the reference and the
 * one-pass kernel. */
static void t_split_nan_inf(void)
{
    enum { R = 7 };
    const double N = NAN, I = INFINITY;
    double *v = malloc(sizeof(double) * R * V);
    for (int64_t i = 0; i < V; i++) {
        double u = t_uniform(-4, 4);
        v[0 * V + i] = i % 7 == 3 ? N : u;
        v[1 * V + i] = N;
        v[2 * V + i] = i == 5000 || i == 7000 ? -I : N;
        v[3 * V + i] = i == 6000 || i == 7000 ? I : i % 5 ? u : N;
        v[4 * V + i] = i >= 2048 && i < 4096 ? N : u;
        v[5 * V + i] = i == 3000 ? 0.25 : -I;
        v[6 * V + i] = i % 811 == 17 ? u : N;
    }
    const int64_t s[2] = {R, V};
    for (size_t d = 0; d < N_NAN_DTS; d++) {
        wgml_tensor *l = t_from(nan_dts[d], 2, s, v);
        double *lv = t_values(l);
        for (size_t k = 0; l && k < NPARAMS; k++)
            for (uint64_t seed = 0; seed < (d ? 1u : 2u); seed++) {
                wgml_sample_params p = params[k];
                p.seed = seed;
                char what[64];
                snprintf(what, sizeof what, "NaN rows %s params %zu seed %llu", wgml_dtype_name(nan_dts[d]), k,
                         (unsigned long long)seed);
                int32_t *ids = check_split(what, l, lv, &p);
                for (int r = 0; r < R; r++) {
                    bool nan_ok = r == 1 || !isnan(lv[r * V + ids[r]]);
                    CHECK(nan_ok, "%s row %d drew NaN logit %d", what, r, ids[r]);
                }
                CHECK(ids[1] == 0 && ids[2] == 5000 && ids[3] == 6000 && ids[5] == 3000,
                      "%s: rows without a finite maximum drew %d %d %d, the lone finite logit row %d", what, ids[1],
                      ids[2], ids[3], ids[5]);
                free(ids);
            }
        free(lv);
        wgml_tensor_free(l);
    }
    free(v);
}

/* Views: logits transposed (column stride 3) and broadcast (row stride 0:
 * rows draw apart by their row index), out a strided slice. */
static void t_split_views(void)
{
    const int64_t ts[2] = {9000, 3}, bs[2] = {6, 9000}, one[2] = {1, 9000};
    t_tensor x = t_random(WGML_F32, 2, ts, -5, 5);
    wgml_tensor *v = NULL;
    CHECK_OK(wgml_view_transpose(x.t, 0, 1, &v));
    double *tv = t_values(v);
    wgml_sample_params p = sp(0.9f, 50, 0.9f, 0.01f, 99), q = sp(1, 0, 0.9f, 0, 7);
    free(check_split("transposed", v, tv, &p));
    free(check_split("transposed, top-p", v, tv, &q));
    t_tensor r1 = t_random(WGML_F32, 2, one, -5, 5);
    wgml_tensor *bc = NULL;
    CHECK_OK(wgml_view_broadcast(r1.t, 2, bs, &bc));
    double *bv = t_values(bc);
    int32_t *ids = check_split("broadcast rows", bc, bv, &p);
    int distinct = 0;
    for (int r = 1; r < 6; r++)
        distinct += ids[r] != ids[0];
    CHECK(distinct > 0, "six broadcast rows drew one token: the rows' streams are not apart");
    const int64_t o2 = 12;
    wgml_tensor *ob = t_poisoned(WGML_I32, 1, &o2), *ov = NULL;
    CHECK_OK(wgml_view_slice(ob, 0, 1, 12, 2, &ov));
    if (ov) {
        t_env("WGML_FORCE", "sample=split");
        CHECK_OK(wgml_sample(bc, &p, ov));
        t_env("WGML_FORCE", NULL);
        int32_t got[6];
        CHECK_OK(wgml_tensor_download(ov, got, sizeof got));
        CHECK(memcmp(got, ids, sizeof got) == 0, "strided out differs from contiguous out");
    }
    free(ids);
    free(tv);
    free(bv);
    wgml_tensor_free(ov);
    wgml_tensor_free(ob);
    wgml_tensor_free(bc);
    wgml_tensor_free(v);
    t_free(&r1);
    t_free(&x);
}

/* Forced onto small vocabularies: [8, 100] (8 rows, one chunk, top_k
 * past the vocabulary and past a chunk's valid logits), [3, 1]. */
static void t_split_small_forced(void)
{
    const int64_t s[2] = {8, 100}, s1[2] = {3, 1};
    t_tensor l = t_random(WGML_F32, 2, s, -3, 3), l1 = t_random(WGML_F32, 2, s1, -3, 3);
    const wgml_sample_params ps[] = {sp(1, 200, 1, 0, 1), sp(1, 50, 0.9f, 0, 2), sp(1, 0, 0.9f, 0.05f, 3),
                                     sp(0, 0, 1, 0, 4)};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
        free(check_split("[8, 100]", l.t, l.val, &ps[i]));
        int32_t *ids = check_split("[3, 1]", l1.t, l1.val, &ps[i]);
        CHECK(ids[0] == 0 && ids[1] == 0 && ids[2] == 0, "a vocabulary of one drew %d %d %d", ids[0], ids[1], ids[2]);
        free(ids);
    }
    t_env("WGML_FORCE", "sample=fast");
    int64_t rows = 8;
    wgml_tensor *o = t_poisoned(WGML_I32, 1, &rows);
    CHECK(wgml_sample(l.t, &ps[0], o) == WGML_ERR_INVALID_ARG, "WGML_FORCE=sample=fast accepted");
    CHECK(strstr(wgml_last_error(), "split") != NULL, "message: %s", wgml_last_error());
    t_env("WGML_FORCE", NULL);
    wgml_tensor_free(o);
    t_free(&l);
    t_free(&l1);
}

/* A seed tensor (element 3, i32) draws as params.seed + 3; a compiled
 * graph (scratch from the op table's declaration: one recording) draws as
 * the eager calls, with the seed rewritten between runs. */
static void t_split_seed_graph(void)
{
    const int64_t s[2] = {4, 20000}, one = 1;
    t_tensor l = t_random(WGML_F32, 2, s, -1, 1);
    wgml_sample_params p = sp(1, 40, 0.95f, 0, 500), q = p;
    q.seed = 503;
    int32_t three = 3;
    wgml_tensor *sd = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &one, &sd));
    CHECK_OK(wgml_tensor_upload(sd, &three, 4));
    int32_t *a = draw_on("split", l.t, sd, &p), *b = draw_on("split", l.t, NULL, &q);
    CHECK(memcmp(a, b, 4 * sizeof *a) == 0, "seed element 3 differs from params.seed + 3");
    t_env("WGML_FORCE", "sample=split"); /* read when the graph records */
    free(a), free(b);
    float *lh = malloc(sizeof(float) * 4 * 20000);
    for (int i = 0; i < 4 * 20000; i++)
        lh[i] = (float)l.val[i];
    wgml_graph *g = NULL;
    wgml_node *gl, *gs, *tok;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    CHECK_OK(wgml_graph_input(g, "logits", WGML_F32, 2, s, &gl));
    CHECK_OK(wgml_graph_input(g, "step", WGML_I32, 1, &one, &gs));
    CHECK_OK(wgml_g_sample(g, gl, gs, &p, &tok));
    CHECK_OK(wgml_graph_output(g, tok));
    wgml_status st = wgml_graph_compile(g, NULL);
    CHECK(st == WGML_OK, "compile: %s", wgml_last_error());
    t_env("WGML_FORCE", NULL);
    for (int32_t step = 0; step < 3 && st == WGML_OK; step++) {
        int32_t got[4];
        CHECK_OK(wgml_graph_write(g, gl, lh, sizeof(float) * 4 * 20000));
        CHECK_OK(wgml_graph_write(g, gs, &step, 4));
        CHECK_OK(wgml_graph_run(g));
        CHECK_OK(wgml_graph_read(g, tok, got, sizeof got));
        CHECK_OK(wgml_tensor_upload(sd, &step, 4));
        int32_t *want = draw_on("split", l.t, sd, &p);
        CHECK(memcmp(got, want, sizeof got) == 0, "graph run %d differs from the eager call", step);
        free(want);
    }
    wgml_graph_stats gst;
    CHECK_OK(wgml_graph_stats_get(g, &gst));
    CHECK(gst.recordings == 1, "the graph recorded %llu times", (unsigned long long)gst.recordings);
    wgml_graph_free(g);
    free(lh);
    wgml_tensor_free(sd);
    t_free(&l);
}

/* Draw frequencies: four tokens in four chunks with probabilities 0.1 ..
 * 0.4, every other logit -inf; 8 rows x 50 seeds, each token within 4
 * sigma of N p, plain and with top-k 2 (the two largest: 3/7, 4/7) and
 * top-p 0.65 (the same two). */
static void t_split_frequencies(void)
{
    const int64_t s[2] = {8, V};
    const int64_t at[4] = {100, 3000, 5000, V - 1};
    double *v = malloc(sizeof(double) * 8 * V);
    for (int64_t i = 0; i < 8 * V; i++)
        v[i] = -INFINITY;
    for (int r = 0; r < 8; r++)
        for (int j = 0; j < 4; j++)
            v[r * V + at[j]] = log(0.1 * (j + 1));
    wgml_tensor *l = t_from(WGML_F32, 2, s, v);
    const double plain[4] = {0.1, 0.2, 0.3, 0.4}, two[4] = {0, 0, 3.0 / 7, 4.0 / 7};
    const wgml_sample_params ps[3] = {sp(1, 0, 1, 0, 0), sp(1, 2, 1, 0, 0), sp(1, 40, 0.65f, 0, 0)};
    for (int k = 0; k < 3; k++) {
        int64_t cnt[4] = {0}, other = 0, n = 0;
        for (uint64_t seed = 0; seed < 50; seed++) {
            wgml_sample_params p = ps[k];
            p.seed = seed * 1000003;
            int32_t *ids = draw_on("split", l, NULL, &p);
            for (int r = 0; r < 8; r++, n++) {
                int j = 0;
                while (j < 4 && ids[r] != at[j])
                    j++;
                j < 4 ? cnt[j]++ : other++;
            }
            free(ids);
        }
        const double *want = k ? two : plain;
        CHECK(other == 0, "params %d: %lld draws of a -inf logit", k, (long long)other);
        for (int j = 0; j < 4; j++) {
            double e = (double)n * want[j], sd = sqrt((double)n * want[j] * (1 - want[j]));
            CHECK(fabs((double)cnt[j] - e) <= 4 * sd, "params %d: token %lld drawn %lld times, expected %.0f +- %.0f",
                  k, (long long)at[j], (long long)cnt[j], e, 4 * sd);
        }
    }
    wgml_tensor_free(l);
    free(v);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"split_every_filter", t_split_filters},
        {"split_ties_across_chunks", t_split_ties},
        {"split_nan_inf_each_dtype", t_split_nan_inf},
        {"split_views", t_split_views},
        {"split_forced_small_vocab", t_split_small_forced},
        {"split_seed_tensor_and_graph", t_split_seed_graph},
        {"split_draw_frequencies", t_split_frequencies},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
