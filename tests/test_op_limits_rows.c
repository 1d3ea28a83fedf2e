/* Rows and states larger than the storage-binding window, on a context
 * made with WGML_MAX_BINDING=4096: reductions over many windows, argsort
 * and top_k of rows sorted in chunks, sample over long rows, group and
 * batch norm, rope; each against its CPU reference. */
#include "limits_harness.h"

/* Four strided rows of 256: the transpose of a random [256, 4] tensor
 * (*b, its view *v) and their values in row order (to free). */
static double *strided_rows(double lo, double hi, t_tensor *b, wgml_tensor **v)
{
    const int64_t bs[2] = {256, 4};
    *b = rnd(2, bs, lo, hi);
    *v = NULL;
    CHECK_OK(wgml_view_transpose(b->t, 0, 1, v));
    double *tv = malloc(sizeof(double) * 1024);
    for (int i = 0; tv && i < 4; i++)
        for (int j = 0; j < 256; j++)
            tv[i * 256 + j] = b->val[j * 4 + i];
    return tv;
}

/* Reductions whose input, running states and out all span several
 * windows: x [8, 1500] (48000 bytes) over axis 0 (1500 running states of
 * up to 16 bytes, out 6000 bytes), axis 1, both, and a [3, 700, 4] over
 * its middle axis (kept dims contiguous and outermost). */
static void t_limits_reduce_windows(void)
{
    const int64_t xs[2] = {8, 1500}, ys[3] = {3, 700, 4};
    t_tensor x = rnd(2, xs, -3, 3), y = rnd(3, ys, -3, 3);
    static const wgml_reduce_op ops[] = {WGML_SUM, WGML_RMAX, WGML_ARGMAX, WGML_VAR, WGML_LOGSUMEXP};
    static const struct { int which; unsigned mask; } cases[] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases && x.t && y.t; c++) {
        const t_tensor *in = cases[c].which ? &y : &x;
        int nd = in->t->ndim;
        int64_t os[3];
        for (int i = 0; i < nd; i++)
            os[i] = (cases[c].mask >> i) & 1 ? 1 : in->t->shape[i];
        for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
            bool arg = ops[k] == WGML_ARGMAX;
            if (arg && (cases[c].mask & (cases[c].mask - 1)))
                continue;
            wgml_tensor *o = mk(arg ? WGML_I32 : WGML_F32, nd, os);
            double *want = malloc(sizeof(double) * (size_t)wgml_tensor_nelem(o));
            char what[96];
            snprintf(what, sizeof what, "reduce %s of [%s] over mask %u", wg_reduce_name(ops[k]),
                     cases[c].which ? "3, 700, 4" : "8, 1500", cases[c].mask);
            CHECK(wgml_reduce(ops[k], in->t, cases[c].mask, 1.0f, o) == WGML_OK, "%s: %s", what, wgml_last_error());
            wg_reduce_ref(ops[k], WGML_F32, in->val, nd, in->t->shape, cases[c].mask, 1.0, want);
            expect_values(what, o, want, 1e-5, 1e-5);
            free(want);
            wgml_tensor_free(o);
        }
    }
    t_free(&x);
    t_free(&y);
}

/* ------------------------------------------------ sort (issue 8) */

/* argsort and top_k of x's rows (rows x n, logical values xv) against the
 * stable reference: indices exact, values those of the indices. */
static void check_sorted(const char *what, const wgml_tensor *x, const double *xv, int64_t rows, int64_t n)
{
    int32_t *ref = malloc(sizeof(int32_t) * (size_t)(rows * n));
    double *want = malloc(sizeof(double) * (size_t)(rows * n)), *wv = malloc(sizeof(double) * (size_t)(rows * n));
    const int64_t ks[3] = {n, n / 3, 5};
    for (int desc = 0; desc < 2; desc++) {
        char w[96];
        const int64_t os[2] = {rows, n};
        wgml_tensor *o = mk(WGML_I32, 2, os);
        wg_argsort_ref(xv, rows, n, desc, ref);
        for (int64_t i = 0; i < rows * n; i++)
            want[i] = ref[i];
        snprintf(w, sizeof w, "argsort %s of %s", desc ? "descending" : "ascending", what);
        CHECK(wgml_argsort(x, desc, o) == WGML_OK, "%s: %s", w, wgml_last_error());
        expect_values(w, o, want, 0, 0);
        wgml_tensor_free(o);
        if (!desc)
            continue;
        for (int j = 0; j < 3; j++) { /* top_k: the first k of the descending order */
            const int64_t ts[2] = {rows, ks[j]};
            wgml_tensor *ti = j == 2 ? NULL : mk(WGML_I32, 2, ts), *tv = mk(WGML_F32, 2, ts);
            for (int64_t r = 0; r < rows; r++)
                for (int64_t i = 0; i < ks[j]; i++) {
                    want[r * ks[j] + i] = ref[r * n + i];
                    wv[r * ks[j] + i] = xv[r * n + ref[r * n + i]];
                }
            snprintf(w, sizeof w, "top_k %lld of %s%s", (long long)ks[j], what, ti ? "" : " (values only)");
            CHECK(wgml_top_k(x, ks[j], tv, ti) == WGML_OK, "%s: %s", w, wgml_last_error());
            if (ti)
                expect_values(w, ti, want, 0, 0);
            expect_values(w, tv, wv, 0, 0);
            wgml_tensor_free(ti);
            wgml_tensor_free(tv);
        }
    }
    free(ref);
    free(want);
    free(wv);
}

/* Rows whose (key, index) pairs span several windows: [2, 3000] f32 of
 * few distinct values (ties), NaNs and signed zeros; and the strided
 * rows of a transposed [256, 4] view (x spans 4084 bytes). */
static void t_limits_sort_long_rows(void)
{
    const int64_t xs[2] = {2, 3000};
    t_tensor x = rnd(2, xs, -20, 20);
    if (x.t) {
        float *h = x.host;
        for (int64_t i = 0; i < 6000; i++) {
            h[i] = i % 97 == 5 ? NAN : i % 89 == 3 ? -0.0f : floorf(h[i]);
            x.val[i] = h[i];
        }
        CHECK_OK(wgml_tensor_upload(x.t, h, 6000 * sizeof(float)));
        check_sorted("[2, 3000] with NaN and ties", x.t, x.val, 2, 3000);
    }
    t_free(&x);
    wgml_tensor *v = NULL;
    t_tensor b;
    double *tv = strided_rows(-4, 4, &b, &v);
    if (v && tv) {
        check_sorted("strided rows", v, tv, 4, 256);
    }
    free(tv);
    wgml_tensor_free(v);
    t_free(&b);
}

/* ------------------------------------------------ norm (issue 8) */

/* One group / batch norm of x (shape xs, C channels, s spatial) on the
 * small context against the reference; weight from every other element
 * of a [2C] (strided), bias contiguous. */
static void norm_case(const char *what, wgml_norm_kind kind, int groups, int nd, const int64_t *xs)
{
    int64_t c = xs[1], s = 1, n = 1, c2 = 2 * c;
    for (int i = 0; i < nd; i++)
        n *= xs[i];
    for (int i = 2; i < nd; i++)
        s *= xs[i];
    t_tensor x = rnd(nd, xs, -2, 3), w2 = rnd(1, &c2, -2, 2), b = rnd(1, &c, -1, 1);
    t_tensor mn = rnd(1, &c, -1, 1), vr = rnd(1, &c, 0.5, 2);
    wgml_tensor *w = NULL, *o = mk(WGML_F32, nd, xs);
    CHECK_OK(wgml_view_slice(w2.t, 0, 0, c2, 2, &w));
    double *want = malloc(sizeof(double) * (size_t)n), *wv = malloc(sizeof(double) * (size_t)n);
    double *bv = malloc(sizeof(double) * (size_t)n);
    if (x.t && w && b.t && mn.t && vr.t && o && want && wv && bv) {
        for (int64_t i = 0; i < n; i++) {
            wv[i] = w2.val[2 * ((i / s) % c)];
            bv[i] = b.val[(i / s) % c];
        }
        bool batch = kind == WGML_BATCH_NORM;
        wgml_norm_params np = {kind, 1e-5f, groups, w, b.t, NULL, batch ? mn.t : NULL, batch ? vr.t : NULL, NULL};
        CHECK(wgml_norm(x.t, &np, o) == WGML_OK, "%s: %s", what, wgml_last_error());
        wg_norm_ref(nd, xs, x.val, NULL, wv, bv, mn.val, vr.val, &np, want, NULL);
        expect_values(what, o, want, 1e-4, 1e-5);
    }
    free(want);
    free(wv);
    free(bv);
    wgml_tensor_free(w);
    wgml_tensor_free(o);
    t_free(&x);
    t_free(&w2);
    t_free(&b);
    t_free(&mn);
    t_free(&vr);
}

/* Group norm rows (2 of 4 channels x 600 spatial = 4800 bytes) and batch
 * norm rows (40 x 40 spatial, and x [2, 3000]: channels along the row)
 * longer than the window. */
static void t_limits_norm_group_batch(void)
{
    const int64_t g4[4] = {2, 4, 30, 20}, b4[4] = {2, 3, 40, 40}, b2[2] = {2, 3000};
    norm_case("group norm, groups over the window", WGML_GROUP_NORM, 2, 4, g4);
    norm_case("batch norm, spatial rows over the window", WGML_BATCH_NORM, 0, 4, b4);
    norm_case("batch norm of [2, 3000]", WGML_BATCH_NORM, 0, 2, b2);
}

/* ------------------------------------------------ sample (issue 8) */

/* Samples x's rows (rows x vocab, logical values xv) with p and the seed
 * tensor (NULL: none) and compares with the reference at p->seed + add
 * (the seed's element, wg_sample_seed_add), allowing rows whose decision
 * margin is within f32 rounding; returns the ids (caller frees). */
static int32_t *sample_check_seeded(const char *what, const wgml_tensor *x, const wgml_tensor *seed, uint64_t add,
                                    const double *xv, int64_t rows, int64_t vocab, const wgml_sample_params *p0)
{
    wgml_tensor *o = mk(WGML_I32, 1, &rows);
    double *got = NULL;
    int32_t *ids = calloc((size_t)rows, sizeof *ids);
    wgml_sample_params q = *p0, *p = &q;
    CHECK(wgml_sample_seeded(x, seed, p0, o) == WGML_OK, "%s: %s", what, wgml_last_error());
    q.seed += add;
    if (o && (got = t_values(o)) != NULL)
        for (int64_t r = 0; r < rows; r++) {
            double margin;
            ids[r] = (int32_t)got[r];
            int32_t want = wg_sample_ref(xv + r * vocab, vocab, p, (uint64_t)r, &margin);
            CHECK(ids[r] >= 0 && ids[r] < vocab, "%s: row %lld: id %d out of range", what, (long long)r, ids[r]);
            CHECK(ids[r] == want || margin < 1e-4, "%s: row %lld: got %d, the reference %d (margin %.3g)", what,
                  (long long)r, ids[r], want, margin);
        }
    free(got);
    wgml_tensor_free(o);
    return ids;
}

static int32_t *sample_check(const char *what, const wgml_tensor *x, const double *xv, int64_t rows, int64_t vocab,
                             const wgml_sample_params *p)
{
    return sample_check_seeded(what, x, NULL, 0, xv, rows, vocab, p);
}

/* Rows of 3000 logits (12000 bytes, four chunks) with NaNs and a repeated
 * maximum: greedy (temperature 0: argmax, first occurrence), and seeded
 * draws with top-k / top-p / min-p against the reference, run twice
 * (deterministic); and the strided rows of a transposed [256, 4] view. */
static void t_limits_sample_long_rows(void)
{
    const int64_t xs[2] = {3, 3000};
    t_tensor x = rnd(2, xs, -4, 4);
    if (x.t) {
        float *h = x.host;
        for (int64_t i = 0; i < 9000; i++) {
            h[i] = i % 131 == 7 ? NAN : i % 3000 == 2100 || i % 3000 == 2900 ? 9.0f : h[i];
            x.val[i] = h[i];
        }
        CHECK_OK(wgml_tensor_upload(x.t, h, 9000 * sizeof(float)));
        wgml_sample_params g = {0.0f, 0, 1.0f, 0.0f, 1};
        int32_t *ids = sample_check("greedy sample of long rows", x.t, x.val, 3, 3000, &g);
        for (int r = 0; r < 3; r++)
            CHECK(ids[r] == 2100, "greedy row %d: %d, want the first maximum 2100", r, ids[r]);
        free(ids);
        for (int i = 0; i < 9000; i++) /* no dominant logit for the draws */
            x.val[i] = h[i] = h[i] == 9.0f ? 1.0f : h[i];
        CHECK_OK(wgml_tensor_upload(x.t, h, 9000 * sizeof(float)));
        const wgml_sample_params ps[3] = {{1.0f, 0, 1.0f, 0.0f, 11}, {0.8f, 40, 0.9f, 0.0f, 12},
                                          {1.3f, 0, 0.95f, 0.02f, 13}};
        for (int i = 0; i < 3; i++) {
            char what[64];
            snprintf(what, sizeof what, "seeded sample %d of long rows", i);
            int32_t *a = sample_check(what, x.t, x.val, 3, 3000, &ps[i]), *b = sample_check(what, x.t, x.val, 3,
                                                                                             3000, &ps[i]);
            CHECK(memcmp(a, b, 3 * sizeof *a) == 0, "%s: two runs differ", what);
            free(a);
            free(b);
        }
    }
    t_free(&x);
    wgml_tensor *v = NULL;
    t_tensor b;
    double *tv = strided_rows(-3, 3, &b, &v);
    if (v && tv) {
        wgml_sample_params p = {0.7f, 20, 1.0f, 0.0f, 5};
        free(sample_check("sample of strided rows", v, tv, 4, 256, &p));
    }
    free(tv);
    wgml_tensor_free(v);
    t_free(&b);
}

/* A seed tensor on the split paths, each against the reference at
 * params.seed + element: rows of 3000 (chunked: sample_step draws with
 * it), the seed beside out in one buffer (bound read_write there), and
 * 40 rows of 100 (400 bytes, ~9 rows a 4096-byte window: 5 launches, each
 * binding the seed).  Element 0 draws as no tensor; elements 1 and 2
 * change the draws of near-flat rows. */
static void t_limits_sample_seeded(void)
{
    const int64_t xs[2] = {3, 3000}, ys[2] = {40, 100}, one = 1, four = 4;
    t_tensor x = rnd(2, xs, -0.5, 0.5), y = rnd(2, ys, -1, 1);
    wgml_tensor *sd = mk(WGML_I32, 1, &one), *buf = mk(WGML_I32, 1, &four), *o3 = NULL, *s1 = NULL;
    CHECK_OK(wgml_view_slice(buf, 0, 0, 3, 1, &o3));
    CHECK_OK(wgml_view_slice(buf, 0, 3, 4, 1, &s1));
    const wgml_sample_params p = {1.0f, 0, 0.97f, 0.0f, 1000};
    if (x.t && y.t && sd && o3 && s1) {
        int32_t v = -7, e0 = 0, e1 = 1, e2 = 2;
        CHECK_OK(wgml_tensor_upload(sd, &v, 4));
        int32_t *a = sample_check_seeded("chunked rows, seed -7", x.t, sd, (uint64_t)-7, x.val, 3, 3000, &p);
        wgml_sample_params q = p;
        q.seed = 993;
        int32_t *b = sample_check("chunked rows, params.seed 993", x.t, x.val, 3, 3000, &q);
        CHECK(memcmp(a, b, 3 * sizeof *a) == 0, "chunked: seed -7 differs from params.seed - 7");
        free(a), free(b);
        int32_t *d[3];
        const int32_t *ev[3] = {&e0, &e1, &e2};
        for (int k = 0; k < 3; k++) {
            CHECK_OK(wgml_tensor_upload(sd, ev[k], 4));
            d[k] = sample_check_seeded("chunked rows, seed k", x.t, sd, (uint64_t)k, x.val, 3, 3000, &p);
        }
        int32_t *none = sample_check("chunked rows, no seed", x.t, x.val, 3, 3000, &p);
        CHECK(memcmp(d[0], none, 3 * sizeof *none) == 0, "chunked: seed 0 differs from no seed");
        int diff = 0;
        for (int r = 0; r < 3; r++)
            diff += (d[1][r] != d[0][r]) + (d[2][r] != d[1][r]);
        CHECK(diff >= 5, "chunked: seeds 0, 1, 2 changed only %d of 6 row draws", diff); /* agree w.p. ~1/3000 */
        for (int k = 0; k < 3; k++)
            free(d[k]);
        free(none);
        /* the seed beside out */
        CHECK_OK(wgml_tensor_upload(s1, &e2, 4));
        int32_t got[3];
        CHECK(wgml_sample_seeded(x.t, s1, &p, o3) == WGML_OK, "chunked, seed beside out: %s", wgml_last_error());
        CHECK_OK(wgml_tensor_download(o3, got, sizeof got));
        q.seed = 1002;
        b = sample_check("chunked rows, params.seed 1002", x.t, x.val, 3, 3000, &q);
        CHECK(memcmp(got, b, sizeof got) == 0, "chunked: seed beside out differs from params.seed + 2");
        free(b);
        /* rows in several launches */
        CHECK_OK(wgml_tensor_upload(sd, &v, 4));
        a = sample_check_seeded("40 rows in 5 launches, seed -7", y.t, sd, (uint64_t)-7, y.val, 40, 100, &p);
        q.seed = 993;
        b = sample_check("40 rows in 5 launches, params.seed 993", y.t, y.val, 40, 100, &q);
        CHECK(memcmp(a, b, 40 * sizeof *a) == 0, "launches: seed -7 differs from params.seed - 7");
        free(a), free(b);
    }
    wgml_tensor_free(s1);
    wgml_tensor_free(o3);
    wgml_tensor_free(buf);
    wgml_tensor_free(sd);
    t_free(&x);
    t_free(&y);
}

/* ------------------------------------------------ rope (issue 8) */

/* Rope rows (head_dim 1500: 6000 bytes) longer than the window: NORMAL,
 * NEOX with freq_factors and YaRN (pairs 700 apart, gathered through a
 * scratch), M-RoPE, and NEOX in place; n_dims 1400 leaves a copied
 * tail. */
static void t_limits_rope_long_rows(void)
{
    const int64_t xs[3] = {3, 2, 1500}, s4[4] = {1, 3, 2, 1500}, nf = 700, np4 = 12;
    t_tensor x = rnd(3, xs, -2, 2), ff = rnd(1, &nf, 0.5, 3);
    wgml_tensor *pos = NULL, *o = mk(WGML_F32, 3, xs);
    CHECK_OK(wgml_tensor_new(small, WGML_I32, 1, &np4, &pos));
    const int32_t pv[12] = {3, 17, 25, 1, 2, 3, 40, 41, 42, 5, 6, 7};
    double *want = malloc(sizeof(double) * 9000);
    if (x.t && ff.t && pos && o && want) {
        CHECK_OK(wgml_tensor_upload(pos, pv, sizeof pv));
        wgml_tensor *p3 = NULL;
        CHECK_OK(wgml_view_slice(pos, 0, 0, 3, 1, &p3));
        static const char *names[4] = {"normal", "neox, freq_factors, YaRN", "mrope", "neox in place"};
        for (int c = 0; c < 4 && p3; c++) {
            wgml_rope_params rp = {c == 0 ? WGML_ROPE_NORMAL : c == 2 ? WGML_ROPE_MROPE : WGML_ROPE_NEOX, 1400,
                                   10000.0f, c == 1 ? 0.5f : 1.0f, c == 1 ? 1.0f : 0.0f, 1.0f, 0, 0, 512,
                                   {100, 200, 300, 100}, c == 1 ? ff.t : NULL, 0};
            wg_rope_ref(&rp, s4, x.val, pv, c == 1 ? ff.val : NULL, want, NULL);
            wgml_tensor *dst = c == 3 ? x.t : o;
            CHECK(wgml_rope(x.t, c == 2 ? pos : p3, &rp, dst) == WGML_OK, "rope %s: %s", names[c], wgml_last_error());
            char what[64];
            snprintf(what, sizeof what, "rope %s of long rows", names[c]);
            expect_values(what, dst, want, 1e-5, 3e-5); /* theta up to ~40: f32 angles */
        }
        wgml_tensor_free(p3);
    }
    free(want);
    wgml_tensor_free(pos);
    wgml_tensor_free(o);
    t_free(&x);
    t_free(&ff);
}

int main(int argc, char **argv)
{
    static const t_case cases[] = {
        {"limits_reduce_windows", t_limits_reduce_windows},
        {"limits_sort_long_rows", t_limits_sort_long_rows},
        {"limits_norm_group_batch", t_limits_norm_group_batch},
        {"limits_sample_long_rows", t_limits_sample_long_rows},
        {"limits_sample_seeded", t_limits_sample_seeded},
        {"limits_rope_long_rows", t_limits_rope_long_rows},
    };
    return limits_main(argc, argv, cases, sizeof cases / sizeof *cases);
}
