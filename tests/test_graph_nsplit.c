/* Graph fusion's norm split (src/graph/fuse.c fuse_norm_split,
 * src/kernels/matvec_nsplit.wgsl): z = P(norm(h) * g) with
 * h = linear(x, W) (+ r), P a linear or a gate|up linear with its glu,
 * both one-row products on the one-dispatch kernel (forced: sgx_r2, a
 * GPU's table).  The producer's 32-row workgroups write each block's codes
 * of h * g and sum of squares; P scales its sums by the norm's factor; no
 * norm dispatch.  Each graph is compiled three ways, the default (split),
 * WGML_GRAPH_FUSE=nosplit (the same products, the norm's dispatch between
 * them) and no_fuse, and run at a symbolic row count bound to 1 (two
 * input sets in turn) and then to 2 (a prefill through the same graph:
 * the split node runs the linear, then the norm, and P reads y's values).
 *
 * Tolerances.  h: the split's producer runs 512 threads where nosplit's
 * runs 256, but each row's sum is the same lanes' chunks and the same
 * subgroupAdd, so h is exact against nosplit; against no_fuse (the
 * residual add apart) 2^-20 (1 + |h|).  z: P reads the codes of h * g
 * where nosplit's reads those of y = h * g * s; a code differs only where
 * a value lands within the scale's rounding of a rounding boundary, and
 * the sum of squares is added in another order (the scale then differs by
 * <= (n - 1) u relatively, u = 2^-24).  Each flipped code moves a linear's
 * output by d |w2| <= (max|y| / 127) max|W2|: 4 flips, plus 2^-16 (1 + |z|)
 * for the scale (n <= 128 here), bound |z - z'| = e for a linear.  The
 * glu's z = silu(a) b (swiglu) moves by <= (1.1 |b| + |a| + e) e for a
 * and b each within e (|silu'| <= 1.1, |silu(a)| <= |a|); a and b come
 * from the host (double, from no_fuse's h), with e added to each.  At 2
 * rows the split graph runs the unfused kernels, the norm into rows of
 * another stride (y's row is longer by the sums of squares), which its
 * strided kernel sums in another order: the same bounds.  Dispatch counts: one fewer than nosplit at one row,
 * the same at two (no_fuse and two rows for the first case of each kind:
 * their kernels cost CI time).  WGML_MV_XS_LANES=0 repeats a case with the blocks'
 * codes a block a thread (q8_block_c), as 4-lane subgroups run them. */
#include "quant_table.h"
#include "graph_harness.h"

#include <math.h>

enum { K = 256, MAX_M2 = 320, F_SPLIT = 0, F_NOSPLIT = 1, F_NOFUSE = 2, SETS = 3 };

typedef struct ns_case {
    wgml_dtype wdt, w2dt;
    wgml_norm_kind kind;
    bool with_g, resid, glu;
    int64_t n;
    int64_t m2; /* the reader's outputs (0: 40) */
    bool nan;   /* a NaN in set 1's x: every h, and so every z, NaN in each form */
    bool full;  /* against no_fuse too, and at two rows (their kernels are CI time: the first case of each kind) */
} ns_case;

/* The set's row count: sets 0 and 1 one row, set 2 two rows. */
static int64_t rows_of(int s) { return s < 2 ? 1 : 2; }

static void split_case(const ns_case *c)
{
    const int64_t NW = c->n, M2 = c->m2 ? c->m2 : 40, N2 = c->glu ? 2 * M2 : M2;
    float *deq = NULL, *deq2 = NULL;
    wgml_tensor *w = quant_table(c->wdt, NW, K, &deq, NULL), *w2 = quant_table(c->w2dt, N2, NW, &deq2, NULL);
    float *gh = host_f32(NW, 0.5, 1.5), *x[SETS], *r[SETS], *out[3][SETS][2];
    for (int s = 0; s < SETS; s++)
        x[s] = host_f32(rows_of(s) * K, -2, 2), r[s] = host_f32(rows_of(s) * NW, -2, 2);
    if (c->nan)
        x[1][5] = NAN;
    char what[128];
    snprintf(what, sizeof what, "split %s -> %s%s %s%s%s%s n=%lld", wgml_dtype_name(c->wdt), wgml_dtype_name(c->w2dt),
             c->glu ? " glu" : "", c->kind == WGML_RMS_NORM ? "rms" : "l2", c->with_g ? " g" : "",
             c->resid ? "" : " no residual", c->nan ? " NaN" : "", (long long)NW);
    const int64_t len[2] = {NW, M2};
    uint64_t disp[3][2] = {{0}};
    const int nf = c->full ? 3 : 2, ns = c->full ? SETS : 2;
    for (int f = 0; f < nf; f++) {
        t_env("WGML_GRAPH_FUSE", f == F_NOSPLIT ? "nosplit" : NULL);
        wgml_graph *g = NULL;
        int64_t seq;
        wgml_node *wn, *w2n, *xn, *rn, *gn = NULL, *lin, *h, *y, *z;
        CHECK_OK(wgml_graph_create(t_ctx, &g));
        CHECK_OK(wgml_graph_dim(g, "seq", 2, &seq));
        CHECK_OK(wgml_graph_tensor(g, "W", w, &wn));
        CHECK_OK(wgml_graph_tensor(g, "W2", w2, &w2n));
        CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){seq, K}, &xn));
        CHECK_OK(wgml_graph_input(g, "r", WGML_F32, 2, (int64_t[]){seq, NW}, &rn));
        if (c->with_g)
            CHECK_OK(wgml_graph_input(g, "g", WGML_F32, 1, (int64_t[]){NW}, &gn));
        CHECK_OK(wgml_g_linear(g, xn, wn, NULL, NULL, NULL, WGML_F32, &lin));
        h = lin;
        if (c->resid) /* the product's c at one row (graph fusion) */
            CHECK_OK(wgml_g_binary(g, WGML_ADD, lin, rn, &h));
        CHECK_OK(wgml_g_norm(g, h, &(wgml_norm_params){.kind = c->kind, .eps = 1e-5f}, gn, NULL, NULL, &y));
        CHECK_OK(wgml_g_linear(g, y, w2n, NULL, NULL, NULL, WGML_F32, &z));
        if (c->glu) { /* W2's rows gate and up interleaved: one LINEAR_GLU */
            wgml_node *gv, *uv;
            CHECK_OK(wgml_g_slice(g, z, 1, 0, N2, 2, &gv));
            CHECK_OK(wgml_g_slice(g, z, 1, 1, N2, 2, &uv));
            CHECK_OK(wgml_g_glu(g, WGML_SWIGLU, gv, uv, 0, &z));
        }
        CHECK_OK(wgml_graph_output(g, h));
        CHECK_OK(wgml_graph_output(g, z));
        wgml_graph_options opt = {.no_fuse = f == F_NOFUSE};
        CHECK_OK(wgml_graph_compile(g, &opt));
        for (int s = 0; s < ns; s++) {
            int64_t T = rows_of(s);
            CHECK_OK(wgml_graph_bind_dim(g, seq, T));
            if (c->with_g)
                CHECK_OK(wgml_graph_write(g, gn, gh, (uint64_t)NW * 4));
            CHECK_OK(wgml_graph_write(g, xn, x[s], (uint64_t)(T * K) * 4));
            CHECK_OK(wgml_graph_write(g, rn, r[s], (uint64_t)(T * NW) * 4));
            CHECK_OK(wgml_graph_run(g));
            wgml_node *o[2] = {h, z};
            for (int k = 0; k < 2; k++) {
                out[f][s][k] = malloc((size_t)(T * len[k]) * 4);
                CHECK_OK(wgml_graph_read(g, o[k], out[f][s][k], (uint64_t)(T * len[k]) * 4));
            }
            wgml_graph_stats st;
            CHECK_OK(wgml_graph_stats_get(g, &st));
            if (s >= 1)
                disp[f][s - 1] = st.dispatches;
        }
        if (f == F_SPLIT) {
            char *txt = dump_both(g);
            CHECK(txt && strstr(txt, "+split codes") && strstr(txt, "reads split codes"),
                  "%s: the dump shows no split", what);
            free(txt);
        }
        wgml_graph_free(g);
    }
    t_env("WGML_GRAPH_FUSE", NULL);
    double w2max = 0;
    for (int64_t i = 0; i < N2 * NW; i++)
        w2max = fmax(w2max, fabs(deq2[i]));
    int bad = 0;
    for (int s = 0; s < ns; s++) {
        int64_t T = rows_of(s);
        for (int64_t t = 0; t < T; t++) {
            /* y on the host from nosplit's h, and the glu's a and b */
            const float *hr = out[F_NOSPLIT][s][0] + t * NW;
            double ss = 0, ymax = 0, y[256], ab[2 * MAX_M2];
            for (int64_t i = 0; i < NW; i++)
                ss += (double)hr[i] * hr[i];
            double sc = c->kind == WGML_RMS_NORM ? 1 / sqrt(ss / (double)NW + 1e-5) : 1 / fmax(sqrt(ss), 1e-5);
            for (int64_t i = 0; i < NW; i++)
                y[i] = hr[i] * sc * (c->with_g ? gh[i] : 1), ymax = fmax(ymax, fabs(y[i]));
            for (int64_t j = 0; j < N2; j++) {
                ab[j] = 0;
                for (int64_t i = 0; i < NW; i++)
                    ab[j] += deq2[j * NW + i] * y[i];
            }
            for (int f = 1; f < nf; f++)
                for (int k = 0; k < 2; k++)
                    for (int64_t i = 0; i < len[k]; i++) {
                        double a = out[F_SPLIT][s][k][t * len[k] + i], b = out[f][s][k][t * len[k] + i], tol;
                        if (k == 0)
                            tol = f == F_NOSPLIT ? 0 : 0x1p-20 * (1 + fabs(b));
                        else {
                            double e = 4 * ymax / 127 * w2max + 0x1p-16 * (1 + fabs(c->glu ? ab[2 * i] : b));
                            if (c->glu) {
                                double ga = fabs(ab[2 * i]) + e, ub = fabs(ab[2 * i + 1]) + e;
                                e = (1.1 * ub + ga + e) * e;
                            }
                            tol = e;
                        }
                        if (isnan(a) || isnan(b)) /* NaN where the other form has NaN, nowhere else */
                            tol = isnan(a) && isnan(b) ? INFINITY : -1;
                        if (!(fabs(a - b) <= tol || (isnan(a) && isnan(b))) && bad++ < 4)
                            printf("    %s: set %d row %lld %s[%lld] split %.9g %s %.9g (tol %.3g)\n", what, s,
                                   (long long)t, k ? "z" : "h", (long long)i, a, f == F_NOSPLIT ? "nosplit" : "no_fuse",
                                   b, tol);
                    }
        }
    }
    CHECK(bad == 0, "%s: %d outputs differ", what, bad);
    CHECK(disp[F_SPLIT][0] + 1 == disp[F_NOSPLIT][0] && (!c->full || disp[F_SPLIT][1] == disp[F_NOSPLIT][1]),
          "%s: %llu / %llu dispatches split (one row / two), %llu / %llu nosplit", what,
          (unsigned long long)disp[F_SPLIT][0], (unsigned long long)disp[F_SPLIT][1],
          (unsigned long long)disp[F_NOSPLIT][0], (unsigned long long)disp[F_NOSPLIT][1]);
    for (int f = 0; f < nf; f++)
        for (int s = 0; s < ns; s++)
            free(out[f][s][0]), free(out[f][s][1]);
    for (int s = 0; s < SETS; s++)
        free(x[s]), free(r[s]);
    free(gh), free(deq), free(deq2);
    wgml_tensor_free(w);
    wgml_tensor_free(w2);
}

static const ns_case cases[] = {
    {WGML_Q4_K, WGML_Q8_0, WGML_RMS_NORM, true, true, false, 64, 0, false, true},
    {WGML_Q8_0, WGML_Q8_0, WGML_RMS_NORM, true, true, true, 96, 0, false, true},
    {WGML_Q8_0, WGML_Q8_0, WGML_L2_NORM, false, true, false, 32, 0, false, false},
    {WGML_Q4_K, WGML_Q8_0, WGML_RMS_NORM, true, false, false, 96, 0, false, false},
    {WGML_Q4_K, WGML_Q8_0, WGML_RMS_NORM, true, true, false, 64, 0, true, false},
};

static void t_linear(void)
{
    if (!force_sgx())
        return;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (!cases[i].glu)
            split_case(&cases[i]);
    t_env("WGML_FORCE", NULL);
}

static void t_glu(void)
{
    if (!force_sgx())
        return;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (cases[i].glu)
            split_case(&cases[i]);
    t_env("WGML_FORCE", NULL);
}

/* The blocks' codes a block a thread (the path of subgroups that are not a
 * multiple of 8 lanes), and the products' own quantising likewise. */
/* The reader's weights past one binding window (WGML_MAX_BINDING=65536 in
 * CI's test_graph_nsplit_window: a q8_0 [300, 256] reader is 81.6 KB, cut
 * into two windows, each a dispatch reading the split's codes and sums of
 * squares whole; the producer's 36.9 KB fit, as fusion requires). */
static void t_windows(void)
{
    if (!force_sgx())
        return;
    static const ns_case wide = {WGML_Q4_K, WGML_Q8_0, WGML_RMS_NORM, true, true, false, 256, 300, false, false};
    split_case(&wide);
    t_env("WGML_FORCE", NULL);
}

static void t_block_a_thread(void)
{
    if (!force_sgx())
        return;
    t_env("WGML_MV_XS_LANES", "0");
    split_case(&cases[1]);
    t_env("WGML_MV_XS_LANES", NULL);
    t_env("WGML_FORCE", NULL);
}

int main(int argc, char **argv)
{
    t_env_reserve();
    if (t_setup(argc, argv))
        return 1;
    static const t_case list[] = {
        {"linear", t_linear},
        {"glu", t_glu},
        {"block_a_thread", t_block_a_thread},
        {"windows", t_windows},
    };
    int rc = t_run(list, sizeof list / sizeof *list, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
