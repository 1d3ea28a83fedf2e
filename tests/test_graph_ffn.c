/* Graph fusion's feed-forward block (src/graph/fuse.c fuse_ffn,
 * src/ops/ffn.c, src/kernels/matvec_pffn.wgsl): a decoder layer's second
 * half
 *
 *   h1 = x . Wo + r;  y1 = rms_norm(h1) * g1            (the o product, split)
 *   f = swiglu(y1 . Wgu) (gate and up rows interleaved) (LINEAR_GLU)
 *   h2 = f . Wd + h1;  y2 = rms_norm(h2) * g2           (the down product, split)
 *   z = y2 . W3                                         (the next product)
 *
 * where the gate|up and down products become one WG_OP_FFN: for one row,
 * with Wgu and Wd in one buffer, one persistent dispatch whose workgroups
 * meet at a grid barrier between the two (forced here with
 * WGML_FORCE=ffn=persist: the table takes it on GPUs only).  Each graph is
 * compiled with fusion (ffn) and with WGML_GRAPH_FUSE=noffn (the same
 * fused products as two dispatches), run on two input sets at one row.
 *
 * Tolerance: none.  The persistent kernel's stages are the two dispatches'
 * code (matvec_xs.wgsl's xs_sums, emit, xs_quantise, ns_block) on the same
 * rows: each row's sum is the same lanes' chunks in the same order, the
 * glu and the split's codes the same expressions, so h2 and z must be
 * equal bit for bit (checked able to fail: a wrong glu kind in stage 0
 * reported every z).  The noffn form itself is tested against unfused
 * graphs in test_graph_nsplit.
 *
 * Also: weights in two buffers (no persistent form: two dispatches, the
 * same values), two rows (a prefill through the same graph: the unfused
 * ops), and more workgroups than the device runs at once
 * (WGML_PFFN_WGS, a test knob past the discovered count), where the grid
 * barrier must give up, the sync must say so, and nothing may hang. */
#include "quant_table.h"
#include "graph_harness.h"

#include <time.h>

enum { E = 256, F = 512, M3 = 40 };

typedef struct ffn_case {
    wgml_dtype wdt; /* Wgu and Wd */
    bool packed;    /* in one buffer (the persistent form's condition) */
} ffn_case;

typedef struct weights {
    wgml_tensor *wo, *wgu, *wd, *w3, *pack;
} weights;

static void weights_make(const ffn_case *c, weights *w)
{
    float *deq = NULL;
    memset(w, 0, sizeof *w);
    w->wo = quant_table(WGML_Q8_0, E, E, &deq, NULL), free(deq);
    w->w3 = quant_table(WGML_Q8_0, M3, E, &deq, NULL), free(deq);
    if (!c->packed) {
        w->wgu = quant_table(c->wdt, 2 * F, E, &deq, NULL), free(deq);
        w->wd = quant_table(c->wdt, E, F, &deq, NULL), free(deq);
        return;
    }
    /* one tensor of rows of E, then views: a loader's packed layer (Wd's
     * E x F values are F more rows of E, reshaped) */
    w->pack = quant_table(c->wdt, 3 * F, E, &deq, NULL), free(deq);
    wgml_tensor *b = NULL;
    CHECK_OK(wgml_view_slice(w->pack, 0, 0, 2 * F, 1, &w->wgu));
    CHECK_OK(wgml_view_slice(w->pack, 0, 2 * F, 3 * F, 1, &b));
    CHECK_OK(wgml_view_reshape(b, 2, (int64_t[]){E, F}, &w->wd));
    wgml_tensor_free(b);
}

static void weights_free(weights *w)
{
    wgml_tensor_free(w->wo), wgml_tensor_free(w->wgu), wgml_tensor_free(w->wd), wgml_tensor_free(w->w3);
    wgml_tensor_free(w->pack);
}

typedef struct built {
    wgml_graph *g;
    int64_t seq;
    wgml_node *x, *r, *g1, *g2, *h2, *z;
} built;

static void build(const weights *w, built *b)
{
    wgml_node *wo, *wgu, *wd, *w3, *h1, *y1, *gu, *gv, *uv, *f, *d, *y2;
    CHECK_OK(wgml_graph_create(t_ctx, &b->g));
    wgml_graph *g = b->g;
    CHECK_OK(wgml_graph_dim(g, "seq", 2, &b->seq));
    CHECK_OK(wgml_graph_tensor(g, "Wo", w->wo, &wo));
    CHECK_OK(wgml_graph_tensor(g, "Wgu", w->wgu, &wgu));
    CHECK_OK(wgml_graph_tensor(g, "Wd", w->wd, &wd));
    CHECK_OK(wgml_graph_tensor(g, "W3", w->w3, &w3));
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){b->seq, E}, &b->x));
    CHECK_OK(wgml_graph_input(g, "r", WGML_F32, 2, (int64_t[]){b->seq, E}, &b->r));
    CHECK_OK(wgml_graph_input(g, "g1", WGML_F32, 1, (int64_t[]){E}, &b->g1));
    CHECK_OK(wgml_graph_input(g, "g2", WGML_F32, 1, (int64_t[]){E}, &b->g2));
    const wgml_norm_params np = {.kind = WGML_RMS_NORM, .eps = 1e-5f};
    CHECK_OK(wgml_g_linear(g, b->x, wo, NULL, NULL, NULL, WGML_F32, &h1));
    CHECK_OK(wgml_g_binary(g, WGML_ADD, h1, b->r, &h1));
    CHECK_OK(wgml_g_norm(g, h1, &np, b->g1, NULL, NULL, &y1));
    CHECK_OK(wgml_g_linear(g, y1, wgu, NULL, NULL, NULL, WGML_F32, &gu));
    CHECK_OK(wgml_g_slice(g, gu, 1, 0, 2 * F, 2, &gv));
    CHECK_OK(wgml_g_slice(g, gu, 1, 1, 2 * F, 2, &uv));
    CHECK_OK(wgml_g_glu(g, WGML_SWIGLU, gv, uv, 0, &f));
    CHECK_OK(wgml_g_linear(g, f, wd, NULL, NULL, NULL, WGML_F32, &d));
    CHECK_OK(wgml_g_binary(g, WGML_ADD, d, h1, &b->h2));
    CHECK_OK(wgml_g_norm(g, b->h2, &np, b->g2, NULL, NULL, &y2));
    CHECK_OK(wgml_g_linear(g, y2, w3, NULL, NULL, NULL, WGML_F32, &b->z));
    CHECK_OK(wgml_graph_output(g, b->h2));
    CHECK_OK(wgml_graph_output(g, b->z));
    CHECK_OK(wgml_graph_compile(g, NULL));
}

/* Runs b at T rows on set s; h2 and z into out[0..1] (malloc'd); the
 * graph's dispatch count into *disp.  Returns the run's status. */
static wgml_status run(built *b, int64_t T, uint64_t seed, float *out[2], uint64_t *disp)
{
    t_rng_state = seed;
    float *x = host_f32(T * E, -2, 2), *r = host_f32(T * E, -2, 2), *g1 = host_f32(E, 0.5, 1.5),
          *g2 = host_f32(E, 0.5, 1.5);
    wgml_status st = wgml_graph_bind_dim(b->g, b->seq, T);
    if (st == WGML_OK)
        st = wgml_graph_write(b->g, b->x, x, (uint64_t)(T * E) * 4);
    if (st == WGML_OK)
        st = wgml_graph_write(b->g, b->r, r, (uint64_t)(T * E) * 4);
    if (st == WGML_OK)
        st = wgml_graph_write(b->g, b->g1, g1, E * 4);
    if (st == WGML_OK)
        st = wgml_graph_write(b->g, b->g2, g2, E * 4);
    if (st == WGML_OK)
        st = wgml_graph_run(b->g);
    out[0] = calloc((size_t)(T * E), 4);
    out[1] = calloc((size_t)(T * M3), 4);
    if (st == WGML_OK)
        st = wgml_graph_read(b->g, b->h2, out[0], (uint64_t)(T * E) * 4);
    if (st == WGML_OK)
        st = wgml_graph_read(b->g, b->z, out[1], (uint64_t)(T * M3) * 4);
    wgml_graph_stats gs;
    if (st == WGML_OK && (st = wgml_graph_stats_get(b->g, &gs)) == WGML_OK)
        *disp = gs.dispatches;
    free(x), free(r), free(g1), free(g2);
    return st;
}

static int differ(const char *what, const char *name, const float *a, const float *b, int64_t n)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], 4) && !(isnan(a[i]) && isnan(b[i])) && bad++ < 4)
            printf("    %s: %s[%lld] ffn %.9g noffn %.9g\n", what, name, (long long)i, a[i], b[i]);
    return bad;
}

/* fused: whether the persistent form must take the one-row runs. */
static void ffn_case_run(const ffn_case *c, bool fused)
{
    char what[96];
    snprintf(what, sizeof what, "ffn %s%s", wgml_dtype_name(c->wdt), c->packed ? " packed" : " apart");
    weights w;
    weights_make(c, &w);
    float *out[2][3][2];
    uint64_t disp[2][3] = {{0}};
    for (int f = 0; f < 2; f++) {
        t_env("WGML_GRAPH_FUSE", f ? "noffn" : NULL);
        built b;
        build(&w, &b);
        if (f == 0) {
            char *txt = dump_both(b.g);
            CHECK(txt && strstr(txt, "ffn"), "%s: the dump shows no ffn node", what);
            free(txt);
        }
        for (int s = 0; s < 3; s++) /* two sets at one row, then two rows */
            CHECK_OK(run(&b, s < 2 ? 1 : 2, 1000 + (uint64_t)s, out[f][s], &disp[f][s]));
        wgml_graph_free(b.g);
    }
    t_env("WGML_GRAPH_FUSE", NULL);
    int bad = 0;
    for (int s = 0; s < 3; s++) {
        int64_t T = s < 2 ? 1 : 2;
        bad += differ(what, "h2", out[0][s][0], out[1][s][0], T * E);
        bad += differ(what, "z", out[0][s][1], out[1][s][1], T * M3);
    }
    CHECK(bad == 0, "%s: %d outputs differ from noffn's", what, bad);
    CHECK(disp[0][1] + (fused ? 1 : 0) == disp[1][1] && disp[0][2] == disp[1][2],
          "%s: %llu / %llu dispatches (one row / two) with ffn, %llu / %llu noffn", what,
          (unsigned long long)disp[0][1], (unsigned long long)disp[0][2], (unsigned long long)disp[1][1],
          (unsigned long long)disp[1][2]);
    for (int f = 0; f < 2; f++)
        for (int s = 0; s < 3; s++)
            free(out[f][s][0]), free(out[f][s][1]);
    weights_free(&w);
}

/* q4_K in CI; q6_K (blocks of 210 bytes: unaligned loads) and q8_0 (32-
 * element chunks) as the "dtypes" case, labelled full: each persistent
 * kernel is ~8 s of lavapipe's compile (2 cores). */
static const ffn_case cases[] = {
    {WGML_Q4_K, true},
    {WGML_Q6_K, true},
    {WGML_Q8_0, true},
};
static bool all_dtypes;

static void t_persistent(void)
{
    if (!force_sgx())
        return;
    t_env("WGML_FORCE", "matvec=sgx_r2,ffn=persist");
    ffn_case_run(&cases[0], true);
    t_env("WGML_FORCE", NULL);
}

static void t_dtypes(void)
{
    if (!all_dtypes) {
        printf("    (run by name: test_graph_ffn dtypes, ctest's label full)\n");
        return;
    }
    if (!force_sgx())
        return;
    t_env("WGML_FORCE", "matvec=sgx_r2,ffn=persist");
    for (size_t i = 1; i < sizeof cases / sizeof *cases; i++)
        ffn_case_run(&cases[i], true);
    t_env("WGML_FORCE", NULL);
}

/* Weights in two buffers: the fused node runs the two products. */
static void t_apart(void)
{
    if (!force_sgx())
        return;
    t_env("WGML_FORCE", "matvec=sgx_r2,ffn=persist");
    ffn_case_run(&(ffn_case){WGML_Q4_K, false}, false);
    t_env("WGML_FORCE", NULL);
}

/* More workgroups than run at once (where the device runs at most 4 of
 * this kernel's: lavapipe's 1-2): the barrier gives up after its bounded
 * polls, the next sync reports it, and the same graph then runs right. */
static void t_overcommit(void)
{
    if (!force_sgx())
        return;
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(t_ctx, &in));
    if (strcmp(in.device_type, "cpu")) {
        printf("    (a GPU: its resident workgroups are too many to overcommit in a test)\n");
        return;
    }
    t_env("WGML_FORCE", "matvec=sgx_r2,ffn=persist");
    weights w;
    weights_make(&cases[0], &w);
    built b;
    build(&w, &b);
    float *ok[2], *bad[2], *again[2];
    uint64_t d;
    CHECK_OK(run(&b, 1, 7, ok, &d));
    wgml_graph_free(b.g);
    t_env("WGML_PFFN_WGS", "64");
    build(&w, &b);
    double t0 = (double)clock() / CLOCKS_PER_SEC;
    wgml_status st = run(&b, 1, 7, bad, &d);
    printf("    64 workgroups launched: %s after %.1f s of CPU\n", wgml_status_name(st),
           (double)clock() / CLOCKS_PER_SEC - t0);
    expect(st, WGML_ERR_DEVICE, "grid barrier gave up", "overcommitted");
    wgml_graph_free(b.g);
    t_env("WGML_PFFN_WGS", NULL);
    build(&w, &b);
    CHECK_OK(run(&b, 1, 7, again, &d));
    CHECK(differ("after the overcommit", "h2", again[0], ok[0], E) == 0 &&
              differ("after the overcommit", "z", again[1], ok[1], M3) == 0,
          "a right-sized run after the overcommit differs");
    wgml_graph_free(b.g);
    for (int k = 0; k < 2; k++)
        free(ok[k]), free(bad[k]), free(again[k]);
    weights_free(&w);
    t_env("WGML_FORCE", NULL);
}

int main(int argc, char **argv)
{
    static const t_case list[] = {
        {"persistent", t_persistent},
        {"weights_apart", t_apart},
        {"overcommit", t_overcommit},
        {"dtypes", t_dtypes},
    };
    all_dtypes = argc > 1 && !strcmp(argv[1], "dtypes");
    return graph_main(argc, argv, list, sizeof list / sizeof *list);
}
