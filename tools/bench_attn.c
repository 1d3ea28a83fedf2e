/* `wgml bench attn [--quick] [--json] [--decode] [--skv N]`: flash
 * attention prefill and split-KV decode.  Median wall time of synced runs
 * after 0.3 s of warm-up (cli_time_median; an H100 lowers its clock when
 * mostly idle, README hazards); prefill reports TFLOP/s (4 B H Sq Skv D, halved when
 * causal), decode GB/s of the K + V bytes bound; the roofline fraction is
 * against an H100's 67 TFLOP/s FP32 and 2.95 TB/s copy when the adapter
 * is one, else "-".  Decode also runs batched: 16 calls per sync, cycling
 * over enough distinct K/V sets that a set is out of an H100's 50 MB L2
 * when it comes back (>= 256 MB in all, at most 96 sets), so the time per
 * call is the GPU's, not the ~50 us of a submit and wait (README,
 * WGML_SPIN_US); its fields are batch_us / batch_gb_s.  Eager calls are
 * bound by the host at small shapes (the 8B's KV 768: a scratch request
 * and ~2 us a dispatch each), so the same 16 also run as one graph
 * replayed per sync, the way a decoder runs them: graph_us / graph_gb_s.
 * --decode: the decode shapes only; --skv N: only shapes of N keys.
 * WGML_FORCE=attn=<variant> (and WGML_ATTN_KPT, WGML_ATTN_CHUNKS) apply.
 * bench/torch_attn.py runs the same shapes with torch SDPA. */
#include "cli.h"
#include "wgml_graph.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shape {
    const char *name;
    int64_t b, hq, hkv, sq, skv, d;
    wgml_dtype dt;   /* k and v; q and out too unless qf32 */
    int causal;
    /* The LLM front-end's decode (llm_graph.c): K/V views of [n_ctx, Hkv *
     * D] caches ([B, S, H, D] permuted), KV bound in buckets of 256 rows
     * with a bool [1, skv] mask keeping the first `valid`, q and out f32. */
    int64_t valid;   /* 0: no mask */
    bool llm;
} shape;

static const shape full_shapes[] = {
    {"decode", 1, 32, 8, 1, 768, 128, WGML_F16, 0, 550, true}, /* Llama-3-8B at KV 550 */
    {"decode", 1, 32, 8, 1, 8192, 128, WGML_F16, 0, 0, false},
    {"decode", 1, 32, 8, 1, 32768, 128, WGML_F16, 0, 0, false},
    {"prefill", 1, 32, 32, 4096, 4096, 128, WGML_F32, 1, 0, false},
    {"prefill", 1, 32, 32, 4096, 4096, 128, WGML_F16, 1, 0, false},
};
static const shape quick_shapes[] = {
    {"decode", 1, 4, 2, 1, 1024, 64, WGML_F16, 0, 0, false},
    {"decode", 1, 4, 2, 1, 256, 64, WGML_F16, 0, 200, true},
    {"prefill", 1, 2, 2, 128, 128, 64, WGML_F32, 1, 0, false},
};

#define BATCH 16
#define MAX_SETS 96

/* Median microseconds per decode call in batches of BATCH calls per sync
 * over nset distinct K/V sets (q and out shared). */
static wgml_status batched(wgml_ctx *ctx, const shape *s, int reps, bool quick, double *us, double *gus);

static wgml_status make(wgml_ctx *ctx, wgml_dtype dt, int64_t b, int64_t h, int64_t s, int64_t d, wgml_tensor **t)
{
    wgml_status st = wgml_tensor_new(ctx, dt, 4, (int64_t[]){b, h, s, d}, t);
    if (st == WGML_OK) /* small values: the timing does not depend on them */
        st = wgml_fill(*t, 1.0 / 16);
    return st;
}

/* The operands of shape s: q and out, or one K/V set (an LLM shape's as
 * permuted views of [B, S, Hkv, D] storage, which *own keeps). */
static wgml_status make_q(wgml_ctx *ctx, const shape *s, wgml_tensor **t)
{
    return make(ctx, s->llm ? WGML_F32 : s->dt, s->b, s->hq, s->sq, s->d, t);
}

static wgml_status make_kv(wgml_ctx *ctx, const shape *s, wgml_tensor **own, wgml_tensor **t)
{
    if (!s->llm) {
        *own = NULL;
        return make(ctx, s->dt, s->b, s->hkv, s->skv, s->d, t);
    }
    wgml_status st = make(ctx, s->dt, s->b, s->skv, s->hkv, s->d, own);
    if (st == WGML_OK)
        st = wgml_view_permute(*own, (const int[]){0, 2, 1, 3}, t);
    return st;
}

/* The bool [1, skv] mask keeping the first `valid` keys (NULL: none). */
static wgml_status make_mask(wgml_ctx *ctx, const shape *s, wgml_tensor **t)
{
    *t = NULL;
    if (!s->valid)
        return WGML_OK;
    unsigned char *m = calloc((size_t)s->skv, 1);
    if (!m)
        return WGML_ERR_OOM;
    memset(m, 1, (size_t)s->valid);
    wgml_status st = wgml_tensor_new(ctx, WGML_BOOL, 2, (int64_t[]){1, s->skv}, t);
    if (st == WGML_OK)
        st = wgml_tensor_upload(*t, m, (uint64_t)s->skv);
    free(m);
    return st;
}

/* The BATCH calls as one graph (a decoder runs its attention so: the
 * plan made once, no host work between dispatches), replayed per sync. */
static wgml_status batch_graph(wgml_ctx *ctx, wgml_tensor *q, wgml_tensor *const *k, wgml_tensor *const *v, int nset,
                               wgml_tensor *m, wgml_graph **out)
{
    wgml_graph *g = NULL;
    wgml_node *qn = NULL, *mn = NULL;
    wgml_status st = wgml_graph_create(ctx, &g);
    if (st == WGML_OK)
        st = wgml_graph_tensor(g, "q", q, &qn);
    if (st == WGML_OK && m)
        st = wgml_graph_tensor(g, "mask", m, &mn);
    wgml_attn_params p = {0};
    for (int c = 0; c < BATCH && st == WGML_OK; c++) {
        wgml_node *kn = NULL, *vn = NULL, *o = NULL;
        char name[16];
        snprintf(name, sizeof name, "k%d", c);
        st = wgml_graph_tensor(g, name, k[c % nset], &kn);
        snprintf(name, sizeof name, "v%d", c);
        if (st == WGML_OK)
            st = wgml_graph_tensor(g, name, v[c % nset], &vn);
        if (st == WGML_OK)
            st = wgml_g_attention(g, qn, kn, vn, mn, NULL, &p, WGML_F32, &o);
        if (st == WGML_OK)
            st = wgml_graph_output(g, o);
    }
    return cli_graph_done(g, st, out);
}

/* One timed batch: BATCH eager calls and a sync, or one graph run. */
typedef struct batch {
    wgml_ctx *ctx;
    wgml_tensor *q, *o, *m, **k, **v;
    int nset;
    wgml_graph *g;
} batch;

static wgml_status eager_step(void *user)
{
    batch *b = user;
    wgml_attn_params p = {0};
    wgml_status st = WGML_OK;
    for (int c = 0; c < BATCH && st == WGML_OK; c++)
        st = wgml_attention(b->q, b->k[c % b->nset], b->v[c % b->nset], b->m, NULL, &p, b->o);
    return st == WGML_OK ? wgml_ctx_sync(b->ctx) : st;
}

/* One synced call of a shape (the single-call timing). */
typedef struct one_call {
    wgml_ctx *ctx;
    wgml_tensor *q, *k, *v, *m, *o;
    wgml_attn_params p;
} one_call;

static wgml_status one_step(void *user)
{
    one_call *c = user;
    wgml_status st = wgml_attention(c->q, c->k, c->v, c->m, NULL, &c->p, c->o);
    return st == WGML_OK ? wgml_ctx_sync(c->ctx) : st;
}

static wgml_status graph_step(void *user)
{
    batch *b = user;
    wgml_status st = wgml_graph_run(b->g);
    return st == WGML_OK ? wgml_graph_wait(b->g) : st;
}

static wgml_status batched(wgml_ctx *ctx, const shape *s, int reps, bool quick, double *us, double *gus)
{
    double kv = 2.0 * (double)(s->b * s->hkv * s->skv * s->d) * (s->dt == WGML_F16 ? 2 : 4);
    int nset = (int)(256e6 / kv) + 1;
    nset = nset > MAX_SETS ? MAX_SETS : nset < 2 ? 2 : nset;
    wgml_tensor *q = NULL, *o = NULL, *m = NULL, *k[MAX_SETS] = {0}, *v[MAX_SETS] = {0};
    wgml_tensor *ko[MAX_SETS] = {0}, *vo[MAX_SETS] = {0};
    wgml_status st = make_q(ctx, s, &q);
    if (st == WGML_OK)
        st = make_q(ctx, s, &o);
    if (st == WGML_OK)
        st = make_mask(ctx, s, &m);
    for (int i = 0; i < nset && st == WGML_OK; i++) {
        st = make_kv(ctx, s, &ko[i], &k[i]);
        if (st == WGML_OK)
            st = make_kv(ctx, s, &vo[i], &v[i]);
    }
    batch b = {ctx, q, o, m, k, v, nset, NULL};
    double es = 0, gs = 0;
    if (st == WGML_OK)
        st = cli_time_median(eager_step, &b, BATCH, reps, quick, &es);
    /* the same batch replayed as a graph */
    if (st == WGML_OK)
        st = batch_graph(ctx, q, k, v, nset, m, &b.g);
    if (st == WGML_OK)
        st = cli_time_median(graph_step, &b, BATCH, reps, quick, &gs);
    wgml_graph_free(b.g);
    for (int i = 0; i < nset; i++) {
        wgml_tensor_free(k[i]);
        wgml_tensor_free(v[i]);
        wgml_tensor_free(ko[i]);
        wgml_tensor_free(vo[i]);
    }
    wgml_tensor_free(q);
    wgml_tensor_free(o);
    wgml_tensor_free(m);
    if (st == WGML_OK) {
        *us = es * 1e6;
        *gus = gs * 1e6;
    }
    return st;
}

int bench_attn(wgml_ctx *ctx, int argc, char **argv)
{
    bool quick = false, json = false, decode_only = false;
    int64_t only_skv = 0;
    for (int i = 0; i < argc; i++) {
        quick |= !strcmp(argv[i], "--quick");
        json |= !strcmp(argv[i], "--json");
        decode_only |= !strcmp(argv[i], "--decode");
        if (!strcmp(argv[i], "--skv") && i + 1 < argc)
            only_skv = atoll(argv[++i]);
    }
    wgml_device_info info;
    wgml_status st = wgml_device_info_get(ctx, &info);
    if (st != WGML_OK)
        return cli_error("device info", st);
    bool h100 = strstr(info.adapter, "H100") != NULL;
    const shape *sh = quick ? quick_shapes : full_shapes;
    size_t n = quick ? sizeof quick_shapes / sizeof *quick_shapes : sizeof full_shapes / sizeof *full_shapes;
    int reps = quick ? 3 : 20;
    if (json)
        printf("{\"adapter\": \"%s\", \"results\": [", info.adapter);
    else
        printf("%-8s %-30s %-5s %10s %12s %8s\n", "kind", "shape [B,Hq/Hkv,Sq,Skv,D]", "dtype", "median ms",
               "rate", "roofline");
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        const shape *s = &sh[i];
        bool decode = !strcmp(s->name, "decode");
        if ((decode_only && !decode) || (only_skv && s->skv != only_skv))
            continue;
        wgml_tensor *q = NULL, *k = NULL, *v = NULL, *o = NULL, *m = NULL, *ko = NULL, *vo = NULL;
        st = make_q(ctx, s, &q);
        if (st == WGML_OK)
            st = make_kv(ctx, s, &ko, &k);
        if (st == WGML_OK)
            st = make_kv(ctx, s, &vo, &v);
        if (st == WGML_OK)
            st = make_q(ctx, s, &o);
        if (st == WGML_OK)
            st = make_mask(ctx, s, &m);
        one_call oc = {.ctx = ctx, .q = q, .k = k, .v = v, .m = m, .o = o, .p = {.causal = s->causal}};
        double t = 0, bus = 0, gus = 0;
        if (st == WGML_OK) /* a synced call a step, after cli_time_median's warm-up */
            st = cli_time_median(one_step, &oc, 1, reps, quick, &t);
        wgml_tensor_free(q);
        wgml_tensor_free(k);
        wgml_tensor_free(v);
        wgml_tensor_free(o);
        wgml_tensor_free(m);
        wgml_tensor_free(ko);
        wgml_tensor_free(vo);
        if (st != WGML_OK) {
            if (json)
                printf("]}\n");
            return cli_error("attention", st);
        }
        if (decode && (st = batched(ctx, s, reps, quick, &bus, &gus)) != WGML_OK) {
            if (json)
                printf("]}\n");
            return cli_error("attention (batched)", st);
        }
        double esz = s->dt == WGML_F16 ? 2 : 4;
        double work = decode ? 2.0 * (double)(s->b * s->hkv * s->skv * s->d) * esz
                             : 4.0 * (double)(s->b * s->hq) * (double)s->sq * (double)s->skv * (double)s->d /
                                   (s->causal ? 2 : 1);
        double rate = work / t / (decode ? 1e9 : 1e12), peak = decode ? 2950 : 67;
        char roof[16] = "-", shp[64];
        if (h100)
            snprintf(roof, sizeof roof, "%.2f", rate / peak);
        char extra[32] = "";
        if (s->llm)
            snprintf(extra, sizeof extra, " %lld valid", (long long)s->valid);
        snprintf(shp, sizeof shp, "[%lld,%lld/%lld,%lld,%lld,%lld]%s%s", (long long)s->b, (long long)s->hq,
                 (long long)s->hkv, (long long)s->sq, (long long)s->skv, (long long)s->d, s->causal ? " causal" : "",
                 extra);
        double brate = decode ? work / (bus * 1e-6) / 1e9 : 0, grate = decode ? work / (gus * 1e-6) / 1e9 : 0;
        char broof[16] = "null", groof[16] = "null";
        if (h100)
            snprintf(broof, sizeof broof, "%.2f", brate / peak), snprintf(groof, sizeof groof, "%.2f", grate / peak);
        if (json) {
            printf("%s{\"kind\": \"%s\", \"b\": %lld, \"hq\": %lld, \"hkv\": %lld, \"sq\": %lld, \"skv\": %lld, "
                   "\"valid\": %lld, \"d\": %lld, \"dtype\": \"%s\", \"causal\": %d, \"median_ms\": %.4f, "
                   "\"%s\": %.3f, \"roofline\": %s", first ? "" : ", ", s->name, (long long)s->b, (long long)s->hq,
                   (long long)s->hkv, (long long)s->sq, (long long)s->skv, (long long)s->valid, (long long)s->d,
                   wgml_dtype_name(s->dt), s->causal, t * 1e3, decode ? "gb_s" : "tflop_s", rate, h100 ? roof : "null");
            if (decode)
                printf(", \"batch_us\": %.2f, \"batch_gb_s\": %.1f, \"batch_roofline\": %s, \"graph_us\": %.2f, "
                       "\"graph_gb_s\": %.1f, \"graph_roofline\": %s", bus, brate, broof, gus, grate, groof);
            printf("}");
            first = false;
        } else {
            printf("%-8s %-30s %-5s %10.3f %8.2f %s %8s\n", s->name, shp, wgml_dtype_name(s->dt), t * 1e3, rate,
                   decode ? "GB/s " : "TF/s ", roof);
            if (decode) {
                printf("%-8s %-30s %-5s %10.3f %8.2f GB/s  %8s\n", " x16", "(16 calls a sync, own K/V)",
                       wgml_dtype_name(s->dt), bus * 1e-3, brate, h100 ? broof : "-");
                printf("%-8s %-30s %-5s %10.3f %8.2f GB/s  %8s\n", " graph", "(the 16 as one graph, replayed)",
                       wgml_dtype_name(s->dt), gus * 1e-3, grate, h100 ? groof : "-");
            }
        }
    }
    if (json)
        printf("]}\n");
    return 0;
}
