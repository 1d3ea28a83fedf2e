/* `wgml bench llm -m FILE.gguf [-p 512] [-n 128] [-d 0] [-r 3] [--json]`:
 * llama-bench's measurement of a GGUF model, test for test: prompt
 * processing of p tokens (pp) and generation of n tokens one at a time
 * (tg), each repeated r times after a warm-up, tokens/s as mean +- sd.
 * As in llama-bench, each test starts from a context of d tokens (-d,
 * default 0: an empty cache), made before the clock starts: tg128 is
 * positions d .. d + 127, not the positions after the pp test (measuring
 * tg after pp512 puts every decode step over a 512-token longer cache
 * than llama-bench's tg128 has).  Token ids are fixed pseudo-random ids
 * (the speed does not depend on them); generation feeds back the sampled
 * (greedy) token as a real decode step does: wgml_model_generate, the
 * GPU copying each token into the next step's input while the host reads
 * it, or with --sync one wgml_model_decode a token (each token read back
 * before the next step is issued, as llama-bench's loop does). */
#include "cli.h"
#include "wgml_llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int keep_going(int32_t token, void *user)
{
    (void)token, (void)user;
    return 0;
}

static void stats(const double *v, int n, double *mean, double *sd)
{
    double s = 0, q = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    *mean = s / n;
    for (int i = 0; i < n; i++)
        q += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(q / (n - 1)) : 0;
}

int bench_llm(wgml_ctx *ctx, int argc, char **argv)
{
    const char *path = NULL;
    int p = 512, n = 128, d = 0, r = 3, json = 0, no_fuse = 0, sync = 0, prefill_f32 = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--sync"))
            sync = 1;
        else if (!strcmp(argv[i], "--no-fuse"))
            no_fuse = 1;
        else if (!strcmp(argv[i], "--prefill-f32"))
            prefill_f32 = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "-m"))
            path = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "-p"))
            p = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-n"))
            n = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-d"))
            d = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-r"))
            r = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: wgml bench llm -m FILE.gguf [-p 512] [-n 128] [-d 0] [-r 3] [--json] [--no-fuse] "
                            "[--sync] [--prefill-f32]\n");
            return 2;
        }
    }
    if (!path || p < 1 || n < 1 || d < 0 || d > 1 << 20 || r < 1 || r > 100) {
        fprintf(stderr, "wgml bench llm: -m FILE.gguf is required; -p, -n >= 1, 0 <= -d <= 2^20, 1 <= -r <= 100\n");
        return 2;
    }
    int nid = p > d ? p : d; /* token ids: the pp test's and the depth's */
    wgml_model_params mp = {.n_ctx = d + (p > n ? p : n) + 8, .n_batch = nid < 512 ? nid : 512, .no_fuse = no_fuse,
                            .prefill_f32 = prefill_f32};
    wgml_model *m = NULL;
    wgml_status st = wgml_model_load(ctx, path, &mp, &m);
    if (st != WGML_OK)
        return cli_error("bench llm: loading", st);
    wgml_model_info info;
    wgml_model_info_get(m, &info);
    int32_t *ids = malloc(sizeof *ids * (size_t)nid);
    double pp[100], tg[100];
    uint32_t x = 12345;
    for (int i = 0; ids && i < nid; i++) {
        x = x * 1664525u + 1013904223u;
        ids[i] = (int32_t)((x >> 8) % (uint32_t)info.n_vocab);
    }
    wgml_sample_params greedy = {0};
    int32_t tok = 0;
    if (!ids)
        st = wgml_error(WGML_ERR_OOM, "out of host memory");
    /* rep -1: warm-up (compiles, first binds), repeated until 0.5 s have
     * passed after the first: a 1B's pp512 + tg128 (~0.2 s) right after a
     * load left an H200's clock low for the first timed rep (9,948 ± 4,083
     * tokens/s against 12,385 ± 37 in the next run).  The depth's context
     * is made in batches of at most 512 (the step's limit) before each
     * clock. */
    double w0 = -1; /* when the first warm-up ended */
    for (int rep = -1; st == WGML_OK && rep < r; rep++) {
        if (rep == 0 && cli_now() - w0 < 0.5)
            rep = -1; /* warm up again */
        for (int at = 0; st == WGML_OK && at < d; at += 512)
            st = wgml_model_decode(m, ids + at, d - at < 512 ? d - at : 512, at, &greedy, &tok, NULL);
        double t0 = cli_now();
        if (st == WGML_OK)
            st = wgml_model_decode(m, ids, p, d, &greedy, &tok, NULL);
        double t1 = cli_now();
        tok = ids[0];
        double t2 = cli_now();
        if (sync) /* one wgml_model_decode a token: the host reads each token before the next step */
            for (int i = 0; st == WGML_OK && i < n; i++)
                st = wgml_model_decode(m, &tok, 1, d + i, &greedy, &tok, NULL);
        else
            st = wgml_model_generate(m, tok, d, n, &greedy, keep_going, NULL, NULL);
        double t3 = cli_now();
        if (w0 < 0)
            w0 = t3;
        if (rep >= 0) {
            pp[rep] = p / (t1 - t0);
            tg[rep] = n / (t3 - t2);
        }
    }
    if (st == WGML_OK) {
        double pm, ps, tm, ts;
        stats(pp, r, &pm, &ps);
        stats(tg, r, &tm, &ts);
        double gb = (double)info.weight_bytes / 1e9;
        if (json) {
            printf("{\"model\": \"%s\", \"arch\": \"%s\", \"weight_bytes\": %llu, \"pp\": %d, \"pp_tps\": %.2f, "
                   "\"pp_sd\": %.2f, \"tg\": %d, \"tg_tps\": %.2f, \"tg_sd\": %.2f, \"depth\": %d}\n",
                   path, info.arch, (unsigned long long)info.weight_bytes, p, pm, ps, n, tm, ts, d);
        } else {
            printf("| model | arch | size | test | t/s |\n|---|---|---|---|---|\n");
            char at[32] = "";
            if (d > 0)
                snprintf(at, sizeof at, " @ d%d", d);
            printf("| %s | %s | %.2f GB | pp%d%s | %.2f ± %.2f |\n", path, info.arch, gb, p, at, pm, ps);
            printf("| %s | %s | %.2f GB | tg%d%s | %.2f ± %.2f |\n", path, info.arch, gb, n, at, tm, ts);
            printf("tg weight stream: %.1f GB/s (weights read once per token)\n", gb * tm);
        }
    } else {
        cli_error("bench llm", st);
    }
    free(ids);
    wgml_model_free(m);
    return st == WGML_OK ? 0 : 1;
}
