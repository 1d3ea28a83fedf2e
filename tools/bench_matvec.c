/* `wgml bench matvec [--quick] [--json] [--eager]`: one decode step of an
 * 8B model's weight products through the linear op with 1 activation row
 * (its mat-vec path): 32 weight matrices of 14336 x 4096 run back to back,
 * as a replayed graph (as a decoder runs them; --eager: wgml_linear calls,
 * which the integer path's two dispatches and eager scratch request a
 * product made look no faster on an H100 while the graph ran 27% faster;
 * README, hazards), for q4_0,
 * q8_0, q4_K, q6_K and f16.  Reports the median time of a step after a
 * warm-up, GB/s of weight bytes read, and the fraction of copy bandwidth
 * (2.95 TB/s, measured for wgml's vec4 copy) on an H100.  --quick: 4
 * matrices of 1024 x 1024, seconds on lavapipe; --nk NxK another shape
 * (a decoder's 4096 x 4096, 6144 x 4096 fused q|k|v, 4096 x 14336 down
 * projection...); --dtype a comma list of the dtypes to run; --reuse: every
 * product reads the first matrix (its bytes stay in L2 when they fit: how
 * fast a product runs from L2, the bound on prefetching weights there);
 * --per: also a step of the first half of the matrices, alternating with
 * the whole one, and the difference a product (µs, medians and minima):
 * a product's cost with the step's one submit and wait taken out (their
 * ~+-50 µs a step on an H200 hid ~1 µs probes, bench/NOTES.md
 * 2026-11-27 (9)). */
#include "cli.h"
#include "wgml_graph.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MATS 32

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The step as a graph: x an input, every product an output. */
static wgml_status build_graph(wgml_ctx *ctx, wgml_tensor *const *w, int nm, int64_t k, wgml_graph **out)
{
    wgml_graph *g = NULL;
    wgml_node *x = NULL;
    wgml_status st = wgml_graph_create(ctx, &g);
    if (st == WGML_OK)
        st = wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){1, k}, &x);
    for (int i = 0; i < nm && st == WGML_OK; i++) {
        wgml_node *wn = NULL, *y = NULL;
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        st = wgml_graph_tensor(g, name, w[i], &wn);
        if (st == WGML_OK)
            st = wgml_g_linear(g, x, wn, NULL, NULL, NULL, WGML_F32, &y);
        if (st == WGML_OK)
            st = wgml_graph_output(g, y);
    }
    return cli_graph_done(g, st, out);
}

/* One step: every matrix once (g: a graph run); waits for the GPU. */
static wgml_status step(wgml_ctx *ctx, wgml_graph *g, wgml_tensor *const *w, int nm, const wgml_tensor *x,
                        wgml_tensor *out)
{
    if (g) {
        wgml_status st = wgml_graph_run(g);
        return st != WGML_OK ? st : wgml_graph_wait(g);
    }
    for (int i = 0; i < nm; i++) {
        wgml_status st = wgml_linear(x, w[i], NULL, NULL, out);
        if (st != WGML_OK)
            return st;
    }
    return wgml_ctx_sync(ctx);
}

/* Is name one of the comma-separated list's entries? */
int bench_matvec(wgml_ctx *ctx, int argc, char **argv)
{
    bool quick = false, json = false, eager = false, reuse = false, per = false;
    long long nn = 0, kk = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) { /* argv[0]: "matvec" */
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strcmp(argv[i], "--eager") == 0)
            eager = true;
        else if (strcmp(argv[i], "--reuse") == 0)
            reuse = true;
        else if (strcmp(argv[i], "--per") == 0)
            per = true;
        else if (i + 1 < argc && strcmp(argv[i], "--nk") == 0 && sscanf(argv[i + 1], "%lldx%lld", &nn, &kk) == 2 &&
                 nn > 0 && kk > 0 && kk % 256 == 0)
            i++;
        else if (i + 1 < argc && strcmp(argv[i], "--dtype") == 0)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: wgml bench matvec [--quick] [--json] [--eager] [--reuse] [--per] "
                    "[--nk NxK (K a multiple of 256)] "
                    "[--dtype q4_K,f16,...]\n");
            return 2;
        }
    }
    static const wgml_dtype dts[] = {WGML_Q4_0, WGML_Q8_0, WGML_Q4_K, WGML_Q6_K, WGML_F16, WGML_BF16, WGML_F32};
    const int64_t n = nn ? nn : quick ? 1024 : 14336, k = kk ? kk : quick ? 1024 : 4096;
    const int nm = quick ? 4 : MAX_MATS, reps = quick ? 5 : 20;
    wgml_device_info in;
    wgml_status st = wgml_device_info_get(ctx, &in);
    if (st != WGML_OK)
        return cli_error("device info", st);
    bool h100 = strstr(in.adapter, "H100") != NULL;
    if (json)
        printf("{\"bench\": \"matvec\", \"adapter\": \"%s\", \"n\": %lld, \"k\": %lld, \"matrices\": %d, "
               "\"mode\": \"%s\", \"results\": [", in.adapter, (long long)n, (long long)k, nm, eager ? "eager" : "graph");
    else
        printf("%s: %d weight matrices of %lld x %lld, 1 activation row (%s)\n%-6s %12s %10s %8s%s\n", in.adapter, nm,
               (long long)n, (long long)k, eager ? "wgml_linear calls" : "a graph replay", "dtype", "step (us)", "GB/s",
               "of copy", per ? "  per (us)  min (us)" : "");
    int rc = 0, printed = 0;
    for (size_t d = 0; d < sizeof dts / sizeof *dts && rc == 0; d++) {
        /* bf16 and f32 only when asked for (--dtype) */
        if ((only && !cli_listed(only, wgml_dtype_name(dts[d]))) || (!only && (dts[d] == WGML_BF16 || dts[d] == WGML_F32)))
            continue;
        wgml_tensor *w[MAX_MATS] = {0}, *x = NULL, *out = NULL;
        uint64_t bytes = 0;
        st = wgml_tensor_new(ctx, WGML_F32, 2, (int64_t[]){1, k}, &x);
        if (st == WGML_OK)
            st = wgml_tensor_new(ctx, WGML_F32, 2, (int64_t[]){1, n}, &out);
        for (int i = 0; i < nm && st == WGML_OK; i++) {
            if (reuse && i > 0)
                st = wgml_view_reshape(w[0], 2, (int64_t[]){n, k}, &w[i]);
            else
                st = wgml_tensor_new(ctx, dts[d], 2, (int64_t[]){n, k}, &w[i]); /* zeroed blocks: timing only */
            bytes += st == WGML_OK ? wgml_tensor_nbytes(w[i]) : 0;
        }
        wgml_graph *g = NULL, *gh = NULL;
        if (st == WGML_OK && !eager)
            st = build_graph(ctx, w, nm, k, &g);
        if (st == WGML_OK && !eager && per)
            st = build_graph(ctx, w, nm / 2, k, &gh);
        /* Warm-up: 0.3 s of back-to-back work at least, so an H100 has
         * raised its clocks (README, hazards). */
        double t0 = cli_now();
        while (st == WGML_OK && cli_now() - t0 < (quick ? 0.05 : 0.3))
            st = step(ctx, g, w, nm, x, out);
        double times[64], half[64];
        for (int r = 0; r < reps && st == WGML_OK; r++) {
            double a = cli_now();
            st = step(ctx, g, w, nm, x, out);
            times[r] = cli_now() - a;
            if (st == WGML_OK && per) {
                a = cli_now();
                st = step(ctx, gh, w, nm / 2, x, out);
                half[r] = cli_now() - a;
            }
        }
        wgml_graph_free(g);
        wgml_graph_free(gh);
        if (st != WGML_OK) {
            rc = cli_error(wgml_dtype_name(dts[d]), st);
        } else {
            qsort(times, (size_t)reps, sizeof *times, cmp_double);
            double t = times[reps / 2], gbs = (double)bytes / t / 1e9;
            char pp[48] = "";
            if (per) { /* the second half's matrices a product: medians, minima */
                qsort(half, (size_t)reps, sizeof *half, cmp_double);
                int nh = nm - nm / 2;
                snprintf(pp, sizeof pp, json ? ", \"per_us\": %.2f, \"per_min_us\": %.2f" : " %8.2f %8.2f",
                         (t - half[reps / 2]) / nh * 1e6, (times[0] - half[0]) / nh * 1e6);
            }
            char frac[16] = "-";
            if (h100)
                snprintf(frac, sizeof frac, "%.2f", gbs / 2950.0);
            if (json)
                printf("%s{\"dtype\": \"%s\", \"step_us\": %.1f, \"gb_s\": %.1f, \"of_copy\": %s%s%s%s}",
                       printed++ ? ", " : "", wgml_dtype_name(dts[d]), t * 1e6, gbs, h100 ? "" : "\"", frac,
                       h100 ? "" : "\"", pp);
            else
                printf("%-6s %12.1f %10.1f %8s%s\n", wgml_dtype_name(dts[d]), t * 1e6, gbs, frac, pp);
        }
        for (int i = 0; i < nm; i++)
            wgml_tensor_free(w[i]);
        wgml_tensor_free(x);
        wgml_tensor_free(out);
    }
    if (json)
        printf("]}\n");
    return rc;
}
