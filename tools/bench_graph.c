/* `wgml bench graph [--quick] [--json] [--dot]`: what a compiled graph costs per
 * dispatch when replayed, against the same ops called eagerly.
 *
 *   chain  N dependent small dispatches (unary ops on 64 floats, N = 10,000;
 *          1,000 with --quick): host + GPU time per dispatch of a graph run
 *          + wait, and of the eager calls + one sync.
 *   block  a transformer block without its matmuls (rms_norm x w, rope on
 *          q and k, masked scaled softmax over the scores, residual add,
 *          rms_norm, swiglu, residual add), decode (1 token) and prefill
 *          (seq 128) shapes of a 4096-wide, 32-head model: microseconds
 *          per run, graph against eager.
 * Best of 5 after a warm-up; results are checked graph against eager.
 * --dot also prints the decode block's compiled graph as Graphviz DOT. */
#include "cli.h"
#include "wgml_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

typedef struct res { double graph_us, host_us, eager_us, maxdiff; uint64_t dispatches; int ok; } res;

/* Largest |a - b| / (1 + |b|) over n floats (NaN where one is NaN and not the other). */
static double max_rel_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]) / (1 + fabs((double)b[i]));
        if (d > m || (d != d && (a[i] == a[i] || b[i] == b[i])))
            m = d != d ? 1e30 : d;
    }
    return m;
}

static int fail(const char *what, wgml_status st) { return cli_error(what, st); }

/* Best of 5 runs after a warm-up, per unit (n dispatches or 1 run): run +
 * wait, and the host's part (encode + submit, before the wait). */
static wgml_status time_runs(wgml_graph *g, int n, res *r)
{
    wgml_status st = WGML_OK;
    for (int rep = 0; rep < 6 && st == WGML_OK; rep++) {
        double t0 = cli_now();
        st = wgml_graph_run(g);
        double t1 = cli_now();
        if (st == WGML_OK) st = wgml_graph_wait(g);
        double us = (cli_now() - t0) * 1e6 / n, hus = (t1 - t0) * 1e6 / n;
        if (rep && (r->graph_us == 0 || us < r->graph_us))
            r->graph_us = us;
        if (rep && (r->host_us == 0 || hus < r->host_us))
            r->host_us = hus;
    }
    return st;
}

static res bench_chain(wgml_ctx *ctx, int n, int *rc)
{
    res r = {0};
    wgml_graph *g = NULL;
    wgml_node *x = NULL, *y = NULL;
    float h[64], out_g[64], out_e[64];
    for (int i = 0; i < 64; i++)
        h[i] = (float)i / 64;
    wgml_status st = wgml_graph_create(ctx, &g);
    if (st == WGML_OK)
        st = wgml_graph_input(g, "x", WGML_F32, 1, (int64_t[]){64}, &x);
    y = x;
    for (int i = 0; i < n && st == WGML_OK; i++) /* |x| then -x: values stay put, every step depends on the last */
        st = wgml_g_unary(g, i % 2 ? WGML_NEG : WGML_ABS, y, 0, 0, &y);
    if (st == WGML_OK) st = wgml_graph_output(g, y);
    double tc = cli_now();
    wgml_graph_options unfused = {1, 0}; /* a dispatch per node: fusion would fold the chain 6 to 1 */
    if (st == WGML_OK) st = wgml_graph_compile(g, &unfused);
    tc = cli_now() - tc;
    if (st == WGML_OK) st = wgml_graph_write(g, x, h, sizeof h);
    if (st == WGML_OK)
        st = time_runs(g, n, &r);
    if (st == WGML_OK) st = wgml_graph_read(g, y, out_g, sizeof out_g);
    wgml_graph_stats gs;
    if (st == WGML_OK) st = wgml_graph_stats_get(g, &gs);
    r.dispatches = gs.dispatches;
    /* eager: the same calls between two tensors */
    wgml_tensor *a = NULL, *b = NULL;
    if (st == WGML_OK) st = wgml_tensor_new(ctx, WGML_F32, 1, (int64_t[]){64}, &a);
    if (st == WGML_OK) st = wgml_tensor_new(ctx, WGML_F32, 1, (int64_t[]){64}, &b);
    for (int rep = 0; rep < 6 && st == WGML_OK; rep++) {
        st = wgml_tensor_upload(a, h, sizeof h);
        if (st == WGML_OK) st = wgml_ctx_sync(ctx);
        double t0 = cli_now();
        for (int i = 0; i < n && st == WGML_OK; i++)
            st = wgml_unary(i % 2 ? WGML_NEG : WGML_ABS, i % 2 ? b : a, i % 2 ? a : b, 0, 0);
        if (st == WGML_OK) st = wgml_ctx_sync(ctx);
        double us = (cli_now() - t0) * 1e6 / n;
        if (rep && (r.eager_us == 0 || us < r.eager_us))
            r.eager_us = us;
    }
    if (st == WGML_OK) st = wgml_tensor_download(n % 2 ? b : a, out_e, sizeof out_e);
    r.maxdiff = max_rel_diff(out_g, out_e, 64);
    r.ok = st == WGML_OK && r.maxdiff == 0;
    wgml_tensor_free(a);
    wgml_tensor_free(b);
    wgml_graph_free(g);
    if (st != WGML_OK)
        *rc = fail("bench graph chain", st);
    fprintf(stderr, "  chain: %d nodes compiled in %.1f ms\n", n, tc * 1e3);
    return r;
}

/* N independent dispatches (each reads x, writes its own output): what a
 * replayed dispatch costs when it need not wait for the one before. */
static res bench_wide(wgml_ctx *ctx, int n, int *rc)
{
    res r = {0};
    wgml_graph *g = NULL;
    wgml_node *x = NULL, *y = NULL;
    float h[64];
    for (int i = 0; i < 64; i++)
        h[i] = (float)i / 64;
    wgml_status st = wgml_graph_create(ctx, &g);
    if (st == WGML_OK)
        st = wgml_graph_input(g, "x", WGML_F32, 1, (int64_t[]){64}, &x);
    for (int i = 0; i < n && st == WGML_OK; i++) {
        st = wgml_g_unary(g, i % 2 ? WGML_NEG : WGML_ABS, x, 0, 0, &y);
        if (st == WGML_OK) st = wgml_graph_output(g, y); /* outputs: none shares memory */
    }
    if (st == WGML_OK) st = wgml_graph_compile(g, NULL);
    if (st == WGML_OK) st = wgml_graph_write(g, x, h, sizeof h);
    if (st == WGML_OK)
        st = time_runs(g, n, &r);
    float out[64];
    if (st == WGML_OK) st = wgml_graph_read(g, y, out, sizeof out);
    r.ok = st == WGML_OK && out[5] == (n % 2 ? h[5] : -h[5]);
    wgml_graph_free(g);
    if (st != WGML_OK)
        *rc = fail("bench graph wide", st);
    return r;
}

/* The block, built on g (graph or eager) with the given inputs. */
typedef struct blk_in { wgml_node *x, *w1, *w2, *pos, *scores, *mask, *up; } blk_in;

static wgml_status block(wgml_graph *g, const blk_in *in, int64_t seq, wgml_node **out)
{
    const int64_t H = 32, HD = 128, D = H * HD;
    wgml_norm_params rms = {WGML_RMS_NORM, 1e-6f, 0, 0, 0, 0, 0, 0, 0};
    wgml_rope_params rp = {WGML_ROPE_NEOX, (int)HD, 10000, 1, 0, 1, 32, 1, 4096, {0}, 0};
    wgml_softmax_params sp = {-1, 0.0883883f, 0, 0};
    wgml_node *n1, *q, *qr, *k, *kr, *att, *h, *n2, *ff, *o;
    wgml_status st = wgml_g_norm(g, in->x, &rms, in->w1, NULL, NULL, &n1);
    if (st == WGML_OK) st = wgml_g_reshape(g, n1, 3, (int64_t[]){seq, H, HD}, &q);
    if (st == WGML_OK) st = wgml_g_rope(g, q, in->pos, &rp, NULL, &qr);
    if (st == WGML_OK) st = wgml_g_unary(g, WGML_SCALE, n1, 0.5f, 0, &k);
    if (st == WGML_OK) st = wgml_g_reshape(g, k, 3, (int64_t[]){seq, H, HD}, &kr);
    if (st == WGML_OK) st = wgml_g_rope(g, kr, in->pos, &rp, NULL, &kr);
    if (st == WGML_OK) st = wgml_g_softmax(g, in->scores, in->mask, NULL, &sp, &att);
    /* stand-in for attention @ V and the output projection: q + k */
    if (st == WGML_OK) st = wgml_g_binary(g, WGML_ADD, qr, kr, &h);
    if (st == WGML_OK) st = wgml_g_reshape(g, h, 2, (int64_t[]){seq, D}, &h);
    if (st == WGML_OK) st = wgml_g_binary(g, WGML_ADD, in->x, h, &h);
    if (st == WGML_OK) st = wgml_g_norm(g, h, &rms, in->w2, NULL, NULL, &n2);
    if (st == WGML_OK) st = wgml_g_glu(g, WGML_SWIGLU, in->up, NULL, 0, &ff); /* stand-in for the FFN matmuls */
    if (st == WGML_OK) st = wgml_g_binary(g, WGML_ADD, n2, ff, &o);
    if (st == WGML_OK) st = wgml_g_binary(g, WGML_ADD, o, h, &o);
    out[0] = o;
    out[1] = att;
    return st;
}

static wgml_status block_inputs(wgml_graph *g, int64_t seq, blk_in *in, float *data, int32_t *pos)
{
    const int64_t D = 4096, H = 32;
    struct { wgml_node **n; const char *name; wgml_dtype dt; int nd; int64_t s[3]; } L[] = {
        {&in->x, "x", WGML_F32, 2, {seq, D}},           {&in->w1, "w1", WGML_F32, 1, {D}},
        {&in->w2, "w2", WGML_F32, 1, {D}},              {&in->pos, "pos", WGML_I32, 1, {seq}},
        {&in->scores, "scores", WGML_F32, 3, {H, seq, seq}}, {&in->mask, "mask", WGML_F32, 2, {seq, seq}},
        {&in->up, "up", WGML_F32, 2, {seq, 2 * D}},
    };
    wgml_status st = WGML_OK;
    for (size_t i = 0; i < sizeof L / sizeof *L && st == WGML_OK; i++) {
        st = wgml_graph_input(g, L[i].name, L[i].dt, L[i].nd, L[i].s, L[i].n);
        uint64_t ne = 1;
        for (int d = 0; d < L[i].nd; d++)
            ne *= (uint64_t)L[i].s[d];
        if (st == WGML_OK)
            st = wgml_graph_write(g, *L[i].n, L[i].dt == WGML_I32 ? (void *)pos : (void *)data, ne * 4);
    }
    return st;
}

static FILE *dump_to; /* --dot: the block's graph, as compiled */

static res bench_block(wgml_ctx *ctx, int64_t seq, int *rc)
{
    res r = {0};
    uint64_t maxe = (uint64_t)(32 * seq * seq > 2 * 4096 * seq ? 32 * seq * seq : 2 * 4096 * seq);
    float *data = malloc(maxe * 4), *og = malloc((size_t)seq * 4096 * 4), *oe = malloc((size_t)seq * 4096 * 4);
    int32_t *pos = malloc((size_t)seq * 4);
    for (uint64_t i = 0; i < maxe; i++)
        data[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    for (int64_t i = 0; i < seq; i++)
        pos[i] = (int32_t)i;
    wgml_graph *g = NULL, *e = NULL;
    blk_in in = {0}, ein = {0};
    wgml_node *out[2], *eout[2];
    wgml_status st = wgml_graph_create(ctx, &g);
    const int64_t D = 4096, H = 32;
    if (st == WGML_OK) st = wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){seq, D}, &in.x);
    if (st == WGML_OK) st = wgml_graph_input(g, "w1", WGML_F32, 1, (int64_t[]){D}, &in.w1);
    if (st == WGML_OK) st = wgml_graph_input(g, "w2", WGML_F32, 1, (int64_t[]){D}, &in.w2);
    if (st == WGML_OK) st = wgml_graph_input(g, "pos", WGML_I32, 1, (int64_t[]){seq}, &in.pos);
    if (st == WGML_OK) st = wgml_graph_input(g, "scores", WGML_F32, 3, (int64_t[]){H, seq, seq}, &in.scores);
    if (st == WGML_OK) st = wgml_graph_input(g, "mask", WGML_F32, 2, (int64_t[]){seq, seq}, &in.mask);
    if (st == WGML_OK) st = wgml_graph_input(g, "up", WGML_F32, 2, (int64_t[]){seq, 2 * D}, &in.up);
    if (st == WGML_OK) st = block(g, &in, seq, out);
    if (st == WGML_OK) st = wgml_graph_output(g, out[0]);
    if (st == WGML_OK) st = wgml_graph_output(g, out[1]);
    if (st == WGML_OK) st = wgml_graph_compile(g, NULL);
    if (st == WGML_OK && dump_to && seq == 1)
        st = wgml_graph_dump(g, dump_to, 1);
    wgml_node *gi[7] = {in.x, in.w1, in.w2, in.pos, in.scores, in.mask, in.up};
    uint64_t gb[7] = {(uint64_t)(seq * D), D, D, (uint64_t)seq, (uint64_t)(H * seq * seq), (uint64_t)(seq * seq),
                      (uint64_t)(seq * 2 * D)};
    for (int i = 0; i < 7 && st == WGML_OK; i++)
        st = wgml_graph_write(g, gi[i], i == 3 ? (void *)pos : (void *)data, gb[i] * 4);
    if (st == WGML_OK)
        st = time_runs(g, 1, &r);
    wgml_graph_stats gs = {0};
    if (st == WGML_OK) st = wgml_graph_stats_get(g, &gs);
    r.dispatches = gs.dispatches;
    if (st == WGML_OK) st = wgml_graph_read(g, out[0], og, (uint64_t)(seq * D) * 4);
    /* eager: the same block on an eager graph (its ops run as it is built) */
    for (int rep = 0; rep < 6 && st == WGML_OK; rep++) {
        wgml_graph_free(e);
        e = NULL;
        st = wgml_graph_create_eager(ctx, &e);
        if (st == WGML_OK) st = block_inputs(e, seq, &ein, data, pos);
        if (st == WGML_OK) st = wgml_ctx_sync(ctx);
        double t0 = cli_now();
        if (st == WGML_OK) st = block(e, &ein, seq, eout);
        if (st == WGML_OK) st = wgml_ctx_sync(ctx);
        double us = (cli_now() - t0) * 1e6;
        if (rep && (r.eager_us == 0 || us < r.eager_us))
            r.eager_us = us;
    }
    if (st == WGML_OK) st = wgml_graph_read(e, eout[0], oe, (uint64_t)(seq * D) * 4);
    r.maxdiff = max_rel_diff(og, oe, (size_t)(seq * D));
    r.ok = st == WGML_OK && r.maxdiff <= 1e-5; /* the block's reductions may differ in order with layout */
    fprintf(stderr, "  block seq %lld: arena %.1f MiB (peak live %.1f, no reuse %.1f)\n", (long long)seq,
            gs.arena_bytes / 1048576.0, gs.peak_live_bytes / 1048576.0, gs.intermediate_bytes / 1048576.0);
    wgml_graph_free(e);
    wgml_graph_free(g);
    free(data), free(og), free(oe), free(pos);
    if (st != WGML_OK)
        *rc = fail("bench graph block", st);
    return r;
}

int bench_graph(wgml_ctx *ctx, int argc, char **argv)
{
    int quick = 0, json = 0, rc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--dot"))
            dump_to = stdout, quick = 1;
        else {
            fprintf(stderr, "usage: wgml bench graph [--quick] [--json] [--dot]\n");
            return 2;
        }
    }
    int n = quick ? 1000 : 10000;
    res c = bench_chain(ctx, n, &rc);
    res wd = rc ? c : bench_wide(ctx, n, &rc);
    res d = rc ? c : bench_block(ctx, 1, &rc);
    res p = rc || quick ? d : bench_block(ctx, 128, &rc);
    if (rc)
        return rc;
    if (json) {
        printf("{\"chain\": {\"n\": %d, \"graph_us_per_dispatch\": %.3f, \"host_us_per_dispatch\": %.3f, "
               "\"eager_us_per_dispatch\": %.3f, \"ok\": %d},\n"
               " \"wide\": {\"n\": %d, \"graph_us_per_dispatch\": %.3f, \"host_us_per_dispatch\": %.3f, \"ok\": %d},\n"
               " \"block_decode\": {\"dispatches\": %llu, \"graph_us\": %.1f, \"eager_us\": %.1f, \"ok\": %d}",
               n, c.graph_us, c.host_us, c.eager_us, c.ok, n, wd.graph_us, wd.host_us, wd.ok,
               (unsigned long long)d.dispatches, d.graph_us, d.eager_us, d.ok);
        if (!quick)
            printf(",\n \"block_prefill128\": {\"dispatches\": %llu, \"graph_us\": %.1f, \"eager_us\": %.1f, \"ok\": %d}",
                   (unsigned long long)p.dispatches, p.graph_us, p.eager_us, p.ok);
        printf("}\n");
    } else {
        printf("graph chain: %d dependent dispatches: replay %.2f us/dispatch (host encode+submit %.2f), eager "
               "%.2f us/dispatch (x%.2f) %s\n", n, c.graph_us, c.host_us, c.eager_us, c.eager_us / c.graph_us,
               c.ok ? "verified" : "WRONG");
        printf("graph wide: %d independent dispatches: replay %.2f us/dispatch (host encode+submit %.2f) %s\n", n,
               wd.graph_us, wd.host_us, wd.ok ? "verified" : "WRONG");
        printf("block decode (seq 1): %llu dispatches: replay %.1f us (host %.1f), eager %.1f us (x%.2f) %s "
               "(max rel diff %.2g)\n", (unsigned long long)d.dispatches, d.graph_us, d.host_us, d.eager_us,
               d.eager_us / d.graph_us, d.ok ? "verified" : "WRONG", d.maxdiff);
        if (!quick)
            printf("block prefill (seq 128): %llu dispatches: replay %.1f us (host %.1f), eager %.1f us (x%.2f) %s "
                   "(max rel diff %.2g)\n", (unsigned long long)p.dispatches, p.graph_us, p.host_us, p.eager_us,
                   p.eager_us / p.graph_us, p.ok ? "verified" : "WRONG", p.maxdiff);
    }
    return c.ok && wd.ok && d.ok && p.ok ? 0 : 1;
}
