/* `wgml bench`: performance measurements.  Targets live here, never in
 * timed unit tests.
 *
 *   bench dispatch [n]   n dependent dispatches recorded in one stream and
 *                        waited on once (us per dispatch), then n/10 rounds
 *                        of one dispatch + flush + wait (us per round).
 *   bench graph [cases] [--quick] [--json] [--kv N]   graph replay against
 *                        eager, and issue 9's decoder block (bench_graph.c)
 *   bench gemm | matvec | attn [--quick] [--json]   matrix products and
 *                        attention (bench_gemm.c, bench_matvec.c, bench_attn.c;
 *                        attn also takes --decode and --skv N; matvec
 *                        --eager)
 *   bench moe [--quick] [--json]   wgml_linear_id at prefill, grouped GEMM
 *                        against the mat-vec path (bench_moe.c)
 *   bench sample [--quick] [--json] [--vocab N] [--rows N]   a decode
 *                        step's sampling, one-pass kernel against the
 *                        table's path (bench_sample.c) */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bench_dispatch(wgml_ctx *ctx, int n)
{
    const uint32_t elems = 64;
    wgml_kernel *k = NULL;
    wgml_buffer *b = NULL;
    uint32_t host[64], want[64];
    for (uint32_t i = 0; i < elems; i++)
        host[i] = want[i] = i;
    wgml_status st = wgml_kernel_builtin(ctx, "selfcheck.wgsl", "affine_u32", "AFFINE", 1, 0, &k);
    if (st == WGML_OK) st = wgml_buffer_create(ctx, sizeof host, &b);
    if (st == WGML_OK) st = wgml_buffer_write(b, 0, host, sizeof host);
    if (st == WGML_OK) st = wgml_ctx_sync(ctx);
    if (st != WGML_OK)
        return cli_error("bench dispatch setup", st);
    wgml_ctx_stats s0, s1;
    double best_disp = 1e30, best_flush = 1e30;
    for (int rep = 0; rep < 3 && st == WGML_OK; rep++) {
        wgml_ctx_stats_get(ctx, &s0);
        double t0 = cli_now();
        for (int i = 0; i < n && st == WGML_OK; i++) {
            uint32_t prm[4] = {elems, 3u, (uint32_t)i, 0};
            st = wgml_dispatch(ctx, k, &b, 1, prm, sizeof prm, 1, 1, 1);
            for (uint32_t j = 0; j < elems; j++)
                want[j] = want[j] * 3u + (uint32_t)i;
        }
        if (st == WGML_OK) st = wgml_ctx_sync(ctx);
        double t1 = cli_now();
        wgml_ctx_stats_get(ctx, &s1);
        if ((t1 - t0) / n < best_disp)
            best_disp = (t1 - t0) / n;
        printf("  rep %d: %d dispatches in %.2f ms (%llu submits, %llu waits)\n", rep, n, (t1 - t0) * 1e3,
               (unsigned long long)(s1.submits - s0.submits), (unsigned long long)(s1.waits - s0.waits));
    }
    int rounds = n / 10 > 10 ? n / 10 : 10;
    for (int rep = 0; rep < 3 && st == WGML_OK; rep++) {
        double t0 = cli_now();
        for (int i = 0; i < rounds && st == WGML_OK; i++) {
            uint32_t prm[4] = {elems, 1u, 1u, 0};
            st = wgml_dispatch(ctx, k, &b, 1, prm, sizeof prm, 1, 1, 1);
            if (st == WGML_OK) st = wgml_ctx_sync(ctx);
            for (uint32_t j = 0; j < elems; j++)
                want[j] = want[j] + 1u;
        }
        double t1 = cli_now();
        if ((t1 - t0) / rounds < best_flush)
            best_flush = (t1 - t0) / rounds;
    }
    /* The same dispatches round-robin over 256 buffers: a dispatch does not
     * wait for the one before (wgpu puts a barrier between dispatches that
     * write one buffer; here only every 256th does), so the difference is
     * what the barriers cost.  256 keeps every bind group cached. */
    double best_ind = 1e30;
    int nown = n < 256 ? n : 256;
    wgml_buffer **own = calloc((size_t)nown, sizeof *own);
    for (int i = 0; i < nown && st == WGML_OK && own; i++)
        st = wgml_buffer_create(ctx, sizeof host, &own[i]);
    if (st == WGML_OK) st = wgml_ctx_sync(ctx);
    for (int rep = 0; rep < 3 && st == WGML_OK && own; rep++) {
        double t0 = cli_now();
        for (int i = 0; i < n && st == WGML_OK; i++) {
            uint32_t prm[4] = {elems, 1u, 1u, 0};
            st = wgml_dispatch(ctx, k, &own[i % nown], 1, prm, sizeof prm, 1, 1, 1);
        }
        if (st == WGML_OK) st = wgml_ctx_sync(ctx);
        double t1 = cli_now();
        if ((t1 - t0) / n < best_ind)
            best_ind = (t1 - t0) / n;
    }
    for (int i = 0; own && i < nown; i++)
        wgml_buffer_destroy(own[i]);
    free(own);
    if (st == WGML_OK) st = wgml_buffer_read(b, 0, host, sizeof host);
    wgml_buffer_destroy(b);
    if (st != WGML_OK)
        return cli_error("bench dispatch", st);
    int ok = memcmp(host, want, sizeof host) == 0;
    printf("dispatch: %.2f us per dispatch (%d dependent dispatches, one stream, best of 3)\n", best_disp * 1e6, n);
    printf("independent: %.2f us per dispatch (%d dispatches round-robin over 256 buffers: a barrier per 256)\n",
           best_ind * 1e6, n);
    printf("flush+wait: %.1f us per round of 1 dispatch + submit + wait (%d rounds, best of 3)\n",
           best_flush * 1e6, rounds);
    printf("results %s\n", ok ? "verified" : "WRONG");
    return ok ? 0 : 1;
}

int cli_bench_start(wgml_ctx *ctx, int argc, char **argv, bool *quick, bool *json, wgml_device_info *info)
{
    int rc = cli_bench_flags(argc, argv, quick, json);
    if (rc == 0 && wgml_device_info_get(ctx, info) != WGML_OK)
        return cli_error("device info", WGML_ERR_INTERNAL);
    if (rc == 0 && *json)
        printf("{\"adapter\": \"%s\", \"results\": [", info->adapter);
    return rc;
}

bool cli_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return true;
        p += len + (e ? 1 : 0);
    }
    return false;
}

int cli_bench_flags(int argc, char **argv, bool *quick, bool *json)
{
    *quick = *json = false;
    for (int i = 1; i < argc; i++) { /* argv[0] is the bench's name */
        if (!strcmp(argv[i], "--quick"))
            *quick = true;
        else if (!strcmp(argv[i], "--json"))
            *json = true;
        else {
            fprintf(stderr, "usage: wgml bench %s [--quick] [--json]\n", argv[0]);
            return 2;
        }
    }
    return 0;
}

/* Sub-benchmarks that take a context: one row each. */
static const struct {
    const char *name;
    int (*run)(wgml_ctx *ctx, int argc, char **argv);
    const char *usage;
} benches[] = {
    {"ops", bench_ops, "[MiB] [rounds]"},
    {"variants", bench_variants, "[MiB]"},
    {"graph", bench_graph, "[chain|wide|block|decoder]... [--quick] [--json] [--dot] [--kv N]"},
    {"gemm", bench_gemm, "[--quick] [--json]"},
    {"matvec", bench_matvec, "[--quick] [--json]"},
    {"moe", bench_moe, "[--quick] [--json]"},
    {"attn", bench_attn, "[--quick] [--json] [--decode] [--skv N]"},
    {"llm", bench_llm, "-m FILE.gguf [-p 512] [-n 128] [-r 3] [--json]"},
    {"sample", bench_sample, "[--quick] [--json] [--vocab N] [--rows N]"},
};

static int usage(void)
{
    fprintf(stderr, "usage: wgml bench dispatch [n]\n");
    for (size_t i = 0; i < sizeof benches / sizeof *benches; i++)
        fprintf(stderr, "       wgml bench %s %s\n", benches[i].name, benches[i].usage);
    return 2;
}

int cmd_bench(int argc, char **argv)
{
    for (size_t i = 0; argc >= 2 && i < sizeof benches / sizeof *benches; i++) {
        if (strcmp(argv[1], benches[i].name))
            continue;
        wgml_ctx *ctx = cli_open();
        if (!ctx)
            return 1;
        int rc = benches[i].run(ctx, argc - 1, argv + 1);
        wgml_ctx_destroy(ctx);
        return rc;
    }
    if (argc < 2 || strcmp(argv[1], "dispatch") != 0)
        return usage();
    int n = argc > 2 ? atoi(argv[2]) : 10000;
    if (n <= 0) {
        fprintf(stderr, "wgml bench dispatch: n must be positive\n");
        return 2;
    }
    wgml_ctx *ctx = cli_open();
    if (!ctx)
        return 1;
    wgml_device_info in;
    if (wgml_device_info_get(ctx, &in) == WGML_OK)
        printf("bench dispatch on %s (%s)\n", in.adapter, in.backend);
    int rc = bench_dispatch(ctx, n);
    wgml_ctx_destroy(ctx);
    return rc;
}
