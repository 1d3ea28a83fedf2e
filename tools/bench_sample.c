/* `wgml bench sample [--quick] [--json] [--vocab N] [--rows N]`: one
 * decode step's sampling, wgml_sample over rows x vocab f32 logits (1 x
 * 128,256 by default: Llama 3's vocabulary), for greedy, top-k 40, top-k
 * 40 + top-p 0.9, top-p 0.9 alone and `wgml generate`'s defaults
 * (temperature 0.8, top-k 40, top-p 0.95, min-p 0.05), each on the
 * one-pass kernel (one workgroup a row: WGML_FORCE=sample=single) and on
 * the split path (a workgroup per 2048-logit chunk: sample=split; the
 * table's choice on GPUs for up to 8 rows of 8192 logits or more).  As a
 * decoder runs it: in a compiled graph (scratch in the arena), here 50
 * sample nodes over the same logits, so a run is one submit of 50
 * samplings one after another (every node's scratch is the one region
 * they share, so each waits for the last).
 * Reported: the median run's us per sampling, after 0.3 s of warm-up (an
 * H100 lowers its clocks when idle: README, hazards).  The two paths
 * must draw the same tokens (they do but where a draw falls within f32
 * rounding of a boundary; the bench says how many rows differ).
 * --quick: 3 runs of 5 nodes and a 0.05 s warm-up, for lavapipe. */
#include "cli.h"
#include "wgml_graph.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* us per sampling on the path forced by `force` (NULL: the table's),
 * its WGML_FORCE entry added to the caller's own WGML_FORCE (user; NULL: none), which is put
 * back; ids: the first node's tokens. */
static wgml_status time_path(wgml_ctx *ctx, const char *user, const char *force, const float *host, int64_t rows,
                             int64_t vocab, const wgml_sample_params *p, bool quick, double *us, int32_t *ids)
{
    enum { MAXN = 50 };
    const int nodes = quick ? 5 : MAXN, reps = quick ? 3 : 15;
    char env[256];
    snprintf(env, sizeof env, "%s%s%s", user ? user : "", user && force ? "," : "", force ? force : "");
    if (*env)
        setenv("WGML_FORCE", env, 1);
    wgml_graph *g = NULL;
    wgml_node *l = NULL, *o[MAXN];
    const int64_t ls[2] = {rows, vocab};
    wgml_status st = wgml_graph_create(ctx, &g);
    if (st == WGML_OK)
        st = wgml_graph_input(g, "logits", WGML_F32, 2, ls, &l);
    for (int i = 0; i < nodes && st == WGML_OK; i++)
        if ((st = wgml_g_sample(g, l, NULL, p, &o[i])) == WGML_OK)
            st = wgml_graph_output(g, o[i]);
    if (st == WGML_OK)
        st = wgml_graph_compile(g, NULL); /* records: WGML_FORCE is read here */
    if (st == WGML_OK)
        st = wgml_graph_write(g, l, host, (uint64_t)(rows * vocab) * 4);
    double t0 = cli_now(), times[16];
    while (st == WGML_OK && cli_now() - t0 < (quick ? 0.05 : 0.3))
        if ((st = wgml_graph_run(g)) == WGML_OK)
            st = wgml_graph_wait(g);
    for (int r = 0; r < reps && st == WGML_OK; r++) {
        double a = cli_now();
        if ((st = wgml_graph_run(g)) == WGML_OK)
            st = wgml_graph_wait(g);
        times[r] = (cli_now() - a) / nodes;
    }
    if (st == WGML_OK)
        st = wgml_graph_read(g, o[0], ids, (uint64_t)rows * 4);
    wgml_graph_free(g);
    if (user)
        setenv("WGML_FORCE", user, 1);
    else
        unsetenv("WGML_FORCE");
    if (st == WGML_OK) {
        qsort(times, (size_t)reps, sizeof *times, cmp_double);
        *us = times[reps / 2] * 1e6;
    }
    return st;
}

int bench_sample(wgml_ctx *ctx, int argc, char **argv)
{
    bool quick = false, json = false;
    long long vocab = 128256, rows = 1;
    for (int i = 1; i < argc; i++) { /* argv[0]: "sample" */
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else if (i + 1 < argc && !strcmp(argv[i], "--vocab") && (vocab = atoll(argv[i + 1])) > 0)
            i++;
        else if (i + 1 < argc && !strcmp(argv[i], "--rows") && (rows = atoll(argv[i + 1])) > 0)
            i++;
        else {
            fprintf(stderr, "usage: wgml bench sample [--quick] [--json] [--vocab N] [--rows N]\n");
            return 2;
        }
    }
    static const struct {
        const char *name;
        wgml_sample_params p;
    } cfg[] = {
        {"greedy", {0.0f, 0, 1.0f, 0.0f, 1}},
        {"top-k 40", {0.8f, 40, 1.0f, 0.0f, 2}},
        {"top-k 40 top-p 0.9", {0.8f, 40, 0.9f, 0.0f, 3}},
        {"top-p 0.9", {0.8f, 0, 0.9f, 0.0f, 4}},
        {"generate defaults", {0.8f, 40, 0.95f, 0.05f, 5}},
    };
    wgml_device_info in;
    wgml_status st = wgml_device_info_get(ctx, &in);
    if (st != WGML_OK)
        return cli_error("device info", st);
    float *h = malloc(sizeof(float) * (size_t)(rows * vocab));
    int32_t *a = malloc(sizeof(int32_t) * (size_t)rows), *b = malloc(sizeof(int32_t) * (size_t)rows);
    if (!h || !a || !b)
        st = WGML_ERR_OOM;
    /* logits like a language model's: roughly normal (sum of 4 uniforms),
     * sigma ~2.3, with a few clear leaders (fixed generator) */
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int64_t i = 0; st == WGML_OK && i < rows * vocab; i++) {
        float v = 0;
        for (int k = 0; k < 4; k++) {
            s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
            v += (float)((s * 2685821657736338717ull) >> 40) * (8.0f / 16777216.0f) - 4.0f;
        }
        h[i] = v + (i % 9973 == 17 ? 8.0f : 0.0f);
    }
    if (json)
        printf("{\"bench\": \"sample\", \"adapter\": \"%s\", \"rows\": %lld, \"vocab\": %lld, \"results\": [",
               in.adapter, rows, vocab);
    else
        printf("%s: wgml_sample of %lld x %lld f32 logits in a graph, us per sampling\n%-20s %12s %12s %8s %8s\n",
               in.adapter, rows, vocab, "params", "one-pass", "split", "speedup", "differ");
    const char *uf = getenv("WGML_FORCE");
    char *user = uf && *uf ? strdup(uf) : NULL;
    for (size_t c = 0; c < sizeof cfg / sizeof *cfg && st == WGML_OK; c++) {
        double t1 = 0, t2 = 0;
        st = time_path(ctx, user, "sample=single", h, rows, vocab, &cfg[c].p, quick, &t1, a);
        if (st == WGML_OK)
            st = time_path(ctx, user, "sample=split", h, rows, vocab, &cfg[c].p, quick, &t2, b);
        if (st != WGML_OK)
            break;
        int differ = 0;
        for (int64_t r = 0; r < rows; r++)
            differ += a[r] != b[r];
        if (json)
            printf("%s{\"params\": \"%s\", \"one_pass_us\": %.1f, \"split_us\": %.1f, \"differ\": %d}", c ? ", " : "",
                   cfg[c].name, t1, t2, differ);
        else
            printf("%-20s %12.1f %12.1f %7.1fx %8d\n", cfg[c].name, t1, t2, t1 / t2, differ);
    }
    if (json)
        printf("]}\n");
    free(user);
    free(h);
    free(a);
    free(b);
    return st == WGML_OK ? 0 : cli_error("bench sample", st);
}
