/* `wgml bench graph [chain] [wide] [block] [decoder] [--quick] [--json] [--dot]
 * [--kv N]`: what a compiled graph costs when replayed (the cases named, or
 * all of them).
 *
 *   chain    N dependent small dispatches (unary ops on 64 floats, N = 10,000;
 *            1,000 with --quick): host + GPU time per dispatch of a graph run
 *            + wait, and of the eager calls + one sync.
 *   wide     N independent dispatches (each reads x, writes its own output).
 *   block    a transformer block without its matmuls (rms_norm x w, rope on
 *            q and k, masked scaled softmax over the scores, residual add,
 *            rms_norm, swiglu, residual add), decode (1 token) and prefill
 *            (seq 128) shapes of a 4096-wide, 32-head model: microseconds
 *            per run, graph against eager.  Best of 5 after a warm-up.
 *   decoder  one decode step (1 token) of a Llama-3-8B-shaped decoder block,
 *            issue 9's goal: 4096 wide, 32 query heads and 8 KV heads of
 *            128, MLP 14336, random q4_K weights (q|k|v stacked and gate|up
 *            interleaved, as the model loader fuses them), one joint f16 k|v
 *            cache read over KV = 4096 rows (--kv N), the ops of
 *            llm_graph.c's layer() on the public API (so graph fusion gives
 *            it the model's dispatches: the q|k|v product writes the rope
 *            and the cache row, the gate|up product the glu).  Median time of a step (run + wait) after 0.3 s of
 *            warm-up, its host part, and a step of 8 runs back to back with
 *            one wait (how a model's 32 layers replay: one wait a token;
 *            the first figure holds a whole flush + wait, ~48 us on an
 *            H100, about the step's bound at KV 4096);
 *            the bytes the step must read (weights, the KV rows attention
 *            reads, x, the mask) against a 256 MiB wgml_copy timed in the
 *            same process: of_bound = bytes / copy bandwidth / step time
 *            (issue 9's goal: >= 0.8).  --quick: 256 wide, 4 heads and 2 KV
 *            heads of 64, MLP 256, KV 128 (seconds on lavapipe).
 * Every case checks the graph's output against the same ops run eagerly
 * (chain: exact; block: 1e-5; decoder: a tolerance derived from its
 * reductions' lengths) and exits 1 when they differ.
 * --dot also prints the decode block's compiled graph as Graphviz DOT. */
#include "cli.h"
#include "wgml_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

typedef struct res {
    double graph_us, host_us;       /* the best sample (run + wait, and its host part) */
    double med_us, med_host_us;     /* the median sample */
    double eager_us, maxdiff;
    uint64_t dispatches;
    int ok;
} res;

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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of t[0..n) (sorts t). */
static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

#define MAX_REPS 64

/* reps samples of `runs` graph runs and one wait, in us per unit (n units
 * in all: dispatches, or runs), after warm-up runs (one at least, more
 * until warm_s has passed: an H100 lowers its clocks while the host is
 * idle and needs sustained work to raise them; README, hazards).  Best and
 * median of run + wait, and of the host's part (encode + submit, before
 * the wait). */
static wgml_status time_runs(wgml_graph *g, int runs, int n, int reps, double warm_s, res *r)
{
    /* the first run compiles: the warm-up clock starts after it */
    wgml_status st = wgml_graph_run(g);
    if (st == WGML_OK)
        st = wgml_graph_wait(g);
    double w0 = cli_now(), t[MAX_REPS], h[MAX_REPS];
    reps = reps < MAX_REPS ? reps : MAX_REPS;
    do {
        st = wgml_graph_run(g);
        if (st == WGML_OK) st = wgml_graph_wait(g);
    } while (st == WGML_OK && cli_now() - w0 < warm_s);
    for (int rep = 0; rep < reps && st == WGML_OK; rep++) {
        double t0 = cli_now();
        for (int i = 0; i < runs && st == WGML_OK; i++)
            st = wgml_graph_run(g);
        double t1 = cli_now();
        if (st == WGML_OK) st = wgml_graph_wait(g);
        t[rep] = (cli_now() - t0) * 1e6 / n, h[rep] = (t1 - t0) * 1e6 / n;
    }
    if (st != WGML_OK)
        return st;
    r->med_us = median(t, reps), r->med_host_us = median(h, reps);
    r->graph_us = t[0], r->host_us = h[0]; /* sorted by median() */
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
        st = time_runs(g, 1, n, 5, 0, &r);
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
        st = time_runs(g, 1, n, 5, 0, &r);
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
    wgml_rope_params rp = {WGML_ROPE_NEOX, (int)HD, 10000, 1, 0, 1, 32, 1, 4096, {0}, 0, 0};
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
        st = time_runs(g, 1, 1, 5, 0, &r);
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

/* ------------------------------------------------------------ decoder */

/* A decoder block's shape: width, query heads, KV heads, head dim, MLP width,
 * KV length (the cache rows attention reads), and the layers of the model
 * it stands for (for the per-token note). */
typedef struct dec_shape { int64_t D, H, Hkv, HD, F, KV; int layers; } dec_shape;

/* The tensors the block uses in place, as the model front-end has them: the
 * two norm weights, the stacked q|k|v and the interleaved gate|up matrices
 * (llm_layer_fuse), the output and down projections, the joint f16 k|v
 * cache [rows, 2 Hkv HD] (llm_load.c). */
enum { T_AN, T_FN, T_QKV, T_O, T_GU, T_DOWN, T_KV, N_DEC_T };
typedef struct dec_in { wgml_node *x, *pos, *mask, *n[N_DEC_T]; } dec_in;

/* Columns [c0, c0 + Hkv HD) of the cache after the step's write, its first
 * KV rows viewed [1, Hkv, KV, HD]. */
static wgml_status dec_half(wgml_graph *g, const dec_shape *s, wgml_node *c, int64_t c0, wgml_node **out)
{
    wgml_status st = wgml_g_slice(g, c, 0, 0, s->KV, 1, &c);
    if (st == WGML_OK) st = wgml_g_slice(g, c, 1, c0, c0 + s->Hkv * s->HD, 1, &c);
    if (st == WGML_OK) st = wgml_g_reshape(g, c, 4, (int64_t[]){1, s->KV, s->Hkv, s->HD}, &c);
    if (st == WGML_OK) st = wgml_g_permute(g, c, (const int[]){0, 2, 1, 3}, out);
    return st;
}

/* One token through the block: the op sequence of llm_graph.c's layer() for
 * a Llama GGUF as the loader sets it up (what `wgml bench llm` replays 32
 * times a token on the 8B shape), so its dispatches are the model's per
 * layer but one: the model folds the block's last residual add into the
 * next layer's norm. */
static wgml_status decoder(wgml_graph *g, const dec_shape *s, const dec_in *in, wgml_node **out)
{
    const int64_t Q = s->H * s->HD, KVD = s->Hkv * s->HD;
    wgml_norm_params rms = {.kind = WGML_RMS_NORM, .eps = 1e-5f};
    /* Llama 3's; one rope over q|k|v with v's heads passing through */
    wgml_rope_params rp = {.mode = WGML_ROPE_NORMAL, .n_dims = (int)s->HD, .freq_base = 500000, .freq_scale = 1,
                           .attn_factor = 1, .n_ctx_orig = 8192, .n_heads_rot = (int)(s->H + s->Hkv)};
    wgml_attn_params ap = {.out_bshd = 1}; /* scale 1 / sqrt(HD); out [1, 1, H, HD], as the model's */
    wgml_node *h, *qkv, *q, *kv, *c, *K, *V, *a, *x, *gu, *gt, *up;
    wgml_status st = wgml_g_norm(g, in->x, &rms, in->n[T_AN], NULL, NULL, &h);
    if (st == WGML_OK) st = wgml_g_linear(g, h, in->n[T_QKV], NULL, NULL, NULL, WGML_F32, &qkv);
    if (st == WGML_OK) st = wgml_g_reshape(g, qkv, 3, (int64_t[]){1, s->H + 2 * s->Hkv, s->HD}, &qkv);
    if (st == WGML_OK) st = wgml_g_rope(g, qkv, in->pos, &rp, NULL, &qkv);
    if (st == WGML_OK) st = wgml_g_slice(g, qkv, 1, 0, s->H, 1, &q);
    /* k|v: one row of the joint cache, written at pos */
    if (st == WGML_OK) st = wgml_g_slice(g, qkv, 1, s->H, s->H + 2 * s->Hkv, 1, &kv);
    if (st == WGML_OK) st = wgml_g_reshape(g, kv, 2, (int64_t[]){1, 2 * KVD}, &kv);
    if (st == WGML_OK) st = wgml_g_set_rows(g, in->n[T_KV], in->pos, kv, &c);
    if (st == WGML_OK) st = dec_half(g, s, c, 0, &K);
    if (st == WGML_OK) st = dec_half(g, s, c, KVD, &V);
    if (st == WGML_OK) st = wgml_g_reshape(g, q, 4, (int64_t[]){1, 1, s->H, s->HD}, &q);
    if (st == WGML_OK) st = wgml_g_permute(g, q, (const int[]){0, 2, 1, 3}, &q);
    if (st == WGML_OK) st = wgml_g_attention(g, q, K, V, in->mask, NULL, &ap, WGML_F32, &a);
    /* [1, 1, H, HD] -> [1, H * HD]: a view */
    if (st == WGML_OK) st = wgml_g_reshape(g, a, 2, (int64_t[]){1, Q}, &a);
    if (st == WGML_OK) st = wgml_g_linear(g, a, in->n[T_O], NULL, NULL, NULL, WGML_F32, &a);
    if (st == WGML_OK) st = wgml_g_binary(g, WGML_ADD, in->x, a, &x);
    if (st == WGML_OK) st = wgml_g_norm(g, x, &rms, in->n[T_FN], NULL, NULL, &h);
    /* gate and up rows interleaved: the product writes the glu itself */
    if (st == WGML_OK) st = wgml_g_linear(g, h, in->n[T_GU], NULL, NULL, NULL, WGML_F32, &gu);
    if (st == WGML_OK) st = wgml_g_slice(g, gu, 1, 0, 2 * s->F, 2, &gt);
    if (st == WGML_OK) st = wgml_g_slice(g, gu, 1, 1, 2 * s->F, 2, &up);
    if (st == WGML_OK) st = wgml_g_glu(g, WGML_SWIGLU, gt, up, 0, &h);
    if (st == WGML_OK) st = wgml_g_linear(g, h, in->n[T_DOWN], NULL, NULL, NULL, WGML_F32, &h);
    if (st == WGML_OK) st = wgml_g_binary(g, WGML_ADD, x, h, out);
    return st;
}

/* The block's leaves on g: inputs x, pos, mask and the tensors t. */
static wgml_status dec_leaves(wgml_graph *g, const dec_shape *s, wgml_tensor *const *t, dec_in *in)
{
    static const char *names[N_DEC_T] = {"attn_norm", "ffn_norm", "attn_qkv", "attn_output",
                                         "ffn_gate_up", "ffn_down", "cache_kv"};
    wgml_status st = wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){1, s->D}, &in->x);
    if (st == WGML_OK) st = wgml_graph_input(g, "pos", WGML_I32, 1, (int64_t[]){1}, &in->pos);
    if (st == WGML_OK) st = wgml_graph_input(g, "mask", WGML_BOOL, 2, (int64_t[]){1, s->KV}, &in->mask);
    for (int i = 0; i < N_DEC_T && st == WGML_OK; i++)
        st = wgml_graph_tensor(g, names[i], t[i], &in->n[i]);
    return st;
}

/* The step's inputs: before the block is built on an eager graph (its ops
 * run as they are built), after compile on a compiled one. */
static wgml_status dec_write(wgml_graph *g, const dec_shape *s, const dec_in *in, const float *x, const uint8_t *mask)
{
    int32_t pos = (int32_t)s->KV - 1; /* the step's token is the last row attention reads */
    wgml_status st = wgml_graph_write(g, in->x, x, (uint64_t)s->D * 4);
    if (st == WGML_OK) st = wgml_graph_write(g, in->pos, &pos, 4);
    if (st == WGML_OK) st = wgml_graph_write(g, in->mask, mask, (uint64_t)s->KV);
    return st;
}

/* splitmix64: a fixed seed gives the same weights every run. */
static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Host data for n elements of dt, malloc'd (NULL: out of memory).
 *   f32   c + [-0.5, 0.5)
 *   f16   +-[2^-4, 1): random sign and mantissa, exponent 2^-4..2^-1
 *   q4_K  random blocks in GGUF's layout (144 bytes a 256: f16 d, f16 dmin,
 *         12 bytes of 6-bit scales and mins, 128 of nibbles; any bits are a
 *         valid scale, min or code) with d in [2^-14, 2^-13) and dmin = 8 d:
 *         weights d sc q - dmin m (sc, m < 64, q < 16) then average ~-16 d
 *         with a spread of ~260 d (~0.02), so a product over k = 4096 O(1)
 *         activations is O(1) and the block's output stays finite (|x| ~10
 *         at the 8B shape) while every op changes it. */
static void *random_data(wgml_dtype dt, uint64_t n, float c, uint64_t *seed)
{
    uint64_t bytes = dt == WGML_Q4_K ? n / 256 * 144 : n * (dt == WGML_F16 ? 2 : 4);
    uint8_t *h = malloc(bytes + 8);
    for (uint64_t i = 0; h && i < bytes; i += 8) {
        uint64_t r = rnd(seed);
        memcpy(h + i, &r, 8);
    }
    for (uint64_t i = 0; h && dt == WGML_F32 && i < n; i++)
        ((float *)h)[i] = c + (float)(rnd(seed) >> 40) / (float)(1 << 24) - 0.5f;
    for (uint64_t i = 0; h && dt == WGML_F16 && i < n; i++) {
        uint16_t *v = (uint16_t *)h + i;
        *v = (uint16_t)((*v & 0x83ffu) | (11u + ((*v >> 10) & 3u)) << 10);
    }
    for (uint64_t b = 0; h && dt == WGML_Q4_K && b < n / 256; b++) {
        uint8_t *p = h + b * 144;
        uint16_t d = (uint16_t)(0x0400u | ((p[0] | p[1] << 8) & 0x3ffu)), dmin = (uint16_t)(d + (3u << 10));
        p[0] = (uint8_t)d, p[1] = (uint8_t)(d >> 8), p[2] = (uint8_t)dmin, p[3] = (uint8_t)(dmin >> 8);
    }
    return h;
}

static wgml_status random_tensor(wgml_ctx *ctx, wgml_dtype dt, int ndim, const int64_t *shape, float c,
                                 uint64_t *seed, wgml_tensor **out)
{
    uint64_t n = (uint64_t)shape[0] * (uint64_t)(ndim > 1 ? shape[1] : 1);
    void *h = random_data(dt, n, c, seed);
    wgml_status st = h ? wgml_tensor_new(ctx, dt, ndim, shape, out) : WGML_ERR_OOM;
    if (st == WGML_OK) st = wgml_tensor_upload(*out, h, wgml_tensor_nbytes(*out));
    free(h);
    return st;
}

/* GB/s (bytes read + written) of wgml_copy between two f32 tensors of `bytes`:
 * the roofline a memory-bound step is held to.  8 copies a sync (one
 * sync's wait would be a quarter of a 512 MiB copy on an H100), median of
 * 7 after 0.3 s of warm-up (--quick: 3 after 0.05 s). */
static double copy_gbs(wgml_ctx *ctx, uint64_t bytes, int quick, wgml_status *st)
{
    wgml_tensor *a = NULL, *b = NULL;
    double t[7], w0 = cli_now();
    int64_t n = (int64_t)(bytes / 4), reps = quick ? 3 : 7;
    *st = wgml_tensor_new(ctx, WGML_F32, 1, &n, &a);
    if (*st == WGML_OK) *st = wgml_tensor_new(ctx, WGML_F32, 1, &n, &b);
    for (int rep = -1; rep < reps && *st == WGML_OK; rep += rep >= 0 || cli_now() - w0 >= (quick ? 0.05 : 0.3)) {
        double t0 = cli_now();
        for (int i = 0; i < 8 && *st == WGML_OK; i++)
            *st = wgml_copy(a, b);
        if (*st == WGML_OK) *st = wgml_ctx_sync(ctx);
        if (rep >= 0)
            t[rep] = (cli_now() - t0) / 8;
    }
    wgml_tensor_free(a);
    wgml_tensor_free(b);
    return *st == WGML_OK ? 2.0 * (double)(n * 4) / median(t, (int)reps) / 1e9 : 0;
}

typedef struct dec_res {
    res r;            /* med_us: a step with its wait; eager_us: unused */
    double b2b_us;    /* a step of 8 runs back to back, one wait */
    double copy_gbs, tol;
    uint64_t bytes;   /* what the step must read */
} dec_res;

static dec_res bench_decoder(wgml_ctx *ctx, const dec_shape *s, int quick, int *rc)
{
    dec_res d = {0};
    const int64_t Q = s->H * s->HD, KVD = s->Hkv * s->HD;
    const struct { wgml_dtype dt; int nd; int64_t shape[2]; float c; } T[N_DEC_T] = {
        [T_AN] = {WGML_F32, 1, {s->D}, 1},          [T_FN] = {WGML_F32, 1, {s->D}, 1},
        [T_QKV] = {WGML_Q4_K, 2, {Q + 2 * KVD, s->D}}, [T_O] = {WGML_Q4_K, 2, {s->D, Q}},
        [T_GU] = {WGML_Q4_K, 2, {2 * s->F, s->D}},  [T_DOWN] = {WGML_Q4_K, 2, {s->D, s->F}},
        [T_KV] = {WGML_F16, 2, {s->KV, 2 * KVD}},
    };
    uint64_t seed = 9; /* issue 9 */
    wgml_tensor *t[N_DEC_T] = {0};
    wgml_status st = WGML_OK;
    /* the step reads every weight byte, KV rows of each cache, x, the mask, pos */
    uint64_t w_bytes = 0, kv_bytes = (uint64_t)(2 * s->KV * KVD * 2), io_bytes = (uint64_t)(s->D * 4 + s->KV + 4);
    for (int i = 0; i < N_DEC_T && st == WGML_OK; i++) {
        st = random_tensor(ctx, T[i].dt, T[i].nd, T[i].shape, T[i].c, &seed, &t[i]);
        w_bytes += st == WGML_OK && i != T_KV ? wgml_tensor_nbytes(t[i]) : 0;
    }
    d.bytes = w_bytes + kv_bytes + io_bytes;
    float *x = random_data(WGML_F32, (uint64_t)s->D, 0, &seed), *og = malloc((size_t)s->D * 4),
          *oe = malloc((size_t)s->D * 4);
    uint8_t *mask = malloc((size_t)s->KV);
    if (st == WGML_OK && (!x || !og || !oe || !mask))
        st = WGML_ERR_OOM;
    for (int64_t i = 0; mask && i < s->KV; i++)
        mask[i] = 1; /* the last position sees every row */
    wgml_graph *g = NULL, *e = NULL;
    dec_in in = {0}, ein = {0};
    wgml_node *out = NULL, *eout = NULL;
    res b2b = {0};
    wgml_graph_stats gs = {0};
    if (st == WGML_OK) st = wgml_graph_create(ctx, &g);
    if (st == WGML_OK) st = dec_leaves(g, s, t, &in);
    if (st == WGML_OK) st = decoder(g, s, &in, &out);
    if (st == WGML_OK) st = wgml_graph_output(g, out);
    double tc = cli_now();
    if (st == WGML_OK) st = wgml_graph_compile(g, NULL);
    tc = cli_now() - tc;
    if (st == WGML_OK) st = dec_write(g, s, &in, x, mask);
    /* every run writes the same cache rows and gives the same output */
    if (st == WGML_OK) st = time_runs(g, 1, 1, quick ? 5 : 21, quick ? 0.05 : 0.3, &d.r);
    if (st == WGML_OK) st = time_runs(g, 8, 8, quick ? 3 : 11, 0, &b2b);
    d.b2b_us = b2b.med_us;
    if (st == WGML_OK) st = wgml_graph_stats_get(g, &gs);
    d.r.dispatches = gs.dispatches;
    if (st == WGML_OK) st = wgml_graph_read(g, out, og, (uint64_t)s->D * 4);
    /* eager: the same block on an eager graph, against the same tensors */
    if (st == WGML_OK) st = wgml_graph_create_eager(ctx, &e);
    if (st == WGML_OK) st = dec_leaves(e, s, t, &ein);
    if (st == WGML_OK) st = dec_write(e, s, &ein, x, mask);
    if (st == WGML_OK) st = decoder(e, s, &ein, &eout);
    if (st == WGML_OK) st = wgml_graph_read(e, eout, oe, (uint64_t)s->D * 4);
    wgml_graph_free(e);
    wgml_graph_free(g);
    if (st == WGML_OK) d.copy_gbs = copy_gbs(ctx, (uint64_t)(quick ? 16 : 256) << 20, quick, &st);
    /* The graph binds operands read_write and fuses the residual adds into
     * the norms, so its f32 sums may run in another order than eager's:
     * each of the step's reductions (4 products, attention over KV, 2
     * norms) may then differ by ~n ulps relative to its terms, and the
     * terms here are O(1) like the output.  Twice their sum: a GPU's
     * integer mat-vec path quantises its activations, and a last-bit
     * difference may round a code the other way. */
    d.tol = 2.0 * 0x1p-23 * (double)(s->D + Q + s->D + s->F + s->KV + 2 * s->D);
    d.r.maxdiff = og && oe ? max_rel_diff(og, oe, (size_t)s->D) : 1e30;
    d.r.ok = st == WGML_OK && d.r.maxdiff <= d.tol;
    for (int i = 0; i < N_DEC_T; i++)
        wgml_tensor_free(t[i]);
    free(x), free(og), free(oe), free(mask);
    if (st != WGML_OK)
        *rc = fail("bench graph decoder", st);
    else if (!d.r.ok)
        fprintf(stderr, "wgml: bench graph decoder: the graph's output differs from the eager run's by %.3g "
                "(largest |a - b| / (1 + |b|)), above the tolerance %.3g\n", d.r.maxdiff, d.tol);
    if (st == WGML_OK)
        fprintf(stderr, "  decoder: %llu nodes (%llu fused) compiled in %.1f ms; arena %.1f MiB; %.1f MB of weights\n",
                (unsigned long long)gs.nodes, (unsigned long long)gs.fused_nodes, tc * 1e3,
                gs.arena_bytes / 1048576.0, w_bytes / 1e6);
    return d;
}

/* One line (text) or a "decoder" member (json).  of_bound: the time the
 * step's bytes take at the copy bandwidth over the time it took. */
static void print_decoder(const dec_shape *s, const dec_res *d, int json)
{
    double bound_us = (double)d->bytes / (d->copy_gbs * 1e3), gbs = (double)d->bytes / (d->r.med_us * 1e3);
    if (json) {
        printf("\"decoder\": {\"d\": %lld, \"heads\": %lld, \"kv_heads\": %lld, \"head_dim\": %lld, \"ffn\": %lld, "
               "\"kv\": %lld, \"weights\": \"q4_K\", \"dispatches\": %llu, \"step_us\": %.1f, \"host_us\": %.1f, "
               "\"b2b_step_us\": %.1f, \"bytes\": %llu, \"gb_s\": %.1f, \"copy_gb_s\": %.1f, \"bound_us\": %.1f, "
               "\"of_bound\": %.3f, \"b2b_of_bound\": %.3f, \"max_rel_diff\": %.3g, \"tol\": %.3g, \"ok\": %d}",
               (long long)s->D, (long long)s->H, (long long)s->Hkv, (long long)s->HD, (long long)s->F,
               (long long)s->KV, (unsigned long long)d->r.dispatches, d->r.med_us, d->r.med_host_us, d->b2b_us,
               (unsigned long long)d->bytes, gbs, d->copy_gbs, bound_us, bound_us / d->r.med_us,
               bound_us / d->b2b_us, d->r.maxdiff, d->tol, d->r.ok);
        return;
    }
    printf("decoder %lld wide, %lld/%lld heads of %lld, MLP %lld, q4_K, KV %lld: %llu dispatches, %.1f us a step "
           "(host %.1f; 8 back to back %.1f), %.2f MB read, %.1f GB/s, copy %.1f GB/s: %.2f of bound %.1f us "
           "(back to back %.2f); x%d layers %.2f ms a token; %s (max rel diff %.2g, tol %.2g)\n",
           (long long)s->D, (long long)s->H, (long long)s->Hkv, (long long)s->HD, (long long)s->F, (long long)s->KV,
           (unsigned long long)d->r.dispatches, d->r.med_us, d->r.med_host_us, d->b2b_us, d->bytes / 1e6, gbs,
           d->copy_gbs, bound_us / d->r.med_us, bound_us, bound_us / d->b2b_us, s->layers,
           s->layers * d->b2b_us / 1e3, d->r.ok ? "verified" : "WRONG", d->r.maxdiff, d->tol);
}

enum { C_CHAIN = 1, C_WIDE = 2, C_BLOCK = 4, C_DECODER = 8 };

/* "{" before a JSON object's first member, ",\n " before the others. */
static const char *json_sep(const char **sep)
{
    const char *s = *sep;
    *sep = ",\n ";
    return s;
}

int bench_graph(wgml_ctx *ctx, int argc, char **argv)
{
    static const char *names[] = {"chain", "wide", "block", "decoder"};
    int quick = 0, json = 0, rc = 0, cases = 0;
    long long kv = 0;
    for (int i = 1; i < argc; i++) {
        int c = 0;
        while (c < 4 && strcmp(argv[i], names[c]))
            c++;
        if (c < 4)
            cases |= 1 << c;
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--dot"))
            dump_to = stdout, quick = 1, cases |= C_BLOCK;
        else if (!strcmp(argv[i], "--kv") && i + 1 < argc && (kv = atoll(argv[i + 1])) >= 1 && kv <= 1 << 20)
            i++;
        else {
            fprintf(stderr, "usage: wgml bench graph [chain] [wide] [block] [decoder] [--quick] [--json] [--dot] "
                    "[--kv N]\n");
            return 2;
        }
    }
    cases = cases ? cases : C_CHAIN | C_WIDE | C_BLOCK | C_DECODER;
    /* Llama-3-8B's block, or a small one for --quick (seconds on lavapipe) */
    dec_shape ds = quick ? (dec_shape){256, 4, 2, 64, 256, 128, 32} : (dec_shape){4096, 32, 8, 128, 14336, 4096, 32};
    ds.KV = kv ? kv : ds.KV;
    int n = quick ? 1000 : 10000;
    res none = {.ok = 1}, c = none, wd = none, d = none, p = none;
    dec_res dr = {.r = none};
    if (cases & C_CHAIN) c = bench_chain(ctx, n, &rc);
    if (!rc && cases & C_WIDE) wd = bench_wide(ctx, n, &rc);
    if (!rc && cases & C_BLOCK) d = bench_block(ctx, 1, &rc);
    if (!rc && cases & C_BLOCK && !quick) p = bench_block(ctx, 128, &rc);
    if (!rc && cases & C_DECODER) dr = bench_decoder(ctx, &ds, quick, &rc);
    if (rc)
        return rc;
    const char *sep = "{";
    if (json && cases & C_CHAIN)
        printf("%s\"chain\": {\"n\": %d, \"graph_us_per_dispatch\": %.3f, \"host_us_per_dispatch\": %.3f, "
               "\"eager_us_per_dispatch\": %.3f, \"ok\": %d}", json_sep(&sep), n, c.graph_us, c.host_us, c.eager_us,
               c.ok);
    if (json && cases & C_WIDE)
        printf("%s\"wide\": {\"n\": %d, \"graph_us_per_dispatch\": %.3f, \"host_us_per_dispatch\": %.3f, \"ok\": %d}",
               json_sep(&sep), n, wd.graph_us, wd.host_us, wd.ok);
    for (int i = 0; i < 2 && json && cases & C_BLOCK && !(i && quick); i++) {
        const res *b = i ? &p : &d;
        printf("%s\"%s\": {\"dispatches\": %llu, \"graph_us\": %.1f, \"eager_us\": %.1f, \"ok\": %d}",
               json_sep(&sep), i ? "block_prefill128" : "block_decode", (unsigned long long)b->dispatches, b->graph_us,
               b->eager_us, b->ok);
    }
    if (json && cases & C_DECODER) {
        printf("%s", json_sep(&sep));
        print_decoder(&ds, &dr, 1);
    }
    if (json)
        printf("}\n");
    if (!json && cases & C_CHAIN)
        printf("graph chain: %d dependent dispatches: replay %.2f us/dispatch (host encode+submit %.2f), eager "
               "%.2f us/dispatch (x%.2f) %s\n", n, c.graph_us, c.host_us, c.eager_us, c.eager_us / c.graph_us,
               c.ok ? "verified" : "WRONG");
    if (!json && cases & C_WIDE)
        printf("graph wide: %d independent dispatches: replay %.2f us/dispatch (host encode+submit %.2f) %s\n", n,
               wd.graph_us, wd.host_us, wd.ok ? "verified" : "WRONG");
    for (int i = 0; i < 2 && !json && cases & C_BLOCK && !(i && quick); i++) {
        const res *b = i ? &p : &d;
        printf("block %s: %llu dispatches: replay %.1f us (host %.1f), eager %.1f us (x%.2f) %s (max rel diff %.2g)\n",
               i ? "prefill (seq 128)" : "decode (seq 1)", (unsigned long long)b->dispatches, b->graph_us,
               b->host_us, b->eager_us, b->eager_us / b->graph_us, b->ok ? "verified" : "WRONG", b->maxdiff);
    }
    if (!json && cases & C_DECODER)
        print_decoder(&ds, &dr, 0);
    if (!(dr.r.ok && c.ok && wd.ok && d.ok && p.ok))
        fprintf(stderr, "wgml: bench graph: a replayed graph's output differs from the eager run's (%s)\n",
                json ? "\"ok\": 0 above" : "WRONG above");
    return dr.r.ok && c.ok && wd.ok && d.ok && p.ok ? 0 : 1;
}
