/*
 * `wgml bench ops [MiB] [rounds]`: memory-bound ops on big tensors (default 256 MiB
 * per main operand), in GB/s counting each input read once and each output
 * written once, and as a fraction of the device-to-device copy measured in
 * the same run.  Each op: 0.3 s of warm-up runs, then 3 repetitions of `iters`
 * runs recorded in one stream and waited on once; the best repetition is
 * reported.  Outputs are spot-checked against the CPU so a fast wrong
 * kernel cannot pass.  Lines starting with "op " are machine-readable
 * (bench/torch_ops.py joins them with PyTorch's figures).  With rounds > 1
 * the whole set runs again in the same process (fresh tensors each time);
 * earlier rounds print "round N op ..." lines, the last the "op " lines,
 * so the spread within one process shows (on the H100 it found the clock
 * drop that the warm-up in time_it now answers).
 */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef wgml_status (*run_fn)(void *st);

typedef struct bench {
    wgml_ctx *ctx;
    uint64_t bytes;       /* main operand size */
    double copy_gbs;      /* measured roofline */
    int round, rounds;
} bench;

static double time_it(bench *b, run_fn fn, void *st, int iters, wgml_status *status)
{
    double best = 1e30;
    *status = WGML_OK;
    /* Warm up for 0.3 s of back-to-back runs, not a fixed count: the GPU
     * lowers its clocks while the host prepares inputs (an H100's SM clock
     * fell from 1980 to 435-825 MHz over a few seconds of mostly idle
     * bench, halving memory-bound kernels) and needs sustained work to
     * raise them again. */
    /* the first run compiles: the warm-up clock starts after it */
    *status = fn(st);
    if (*status == WGML_OK)
        *status = wgml_ctx_sync(b->ctx);
    double w0 = cli_now();
    while (*status == WGML_OK && cli_now() - w0 < 0.3) {
        for (int w = 0; w < 8 && *status == WGML_OK; w++)
            *status = fn(st);
        if (*status == WGML_OK)
            *status = wgml_ctx_sync(b->ctx);
    }
    for (int rep = 0; rep < 3 && *status == WGML_OK; rep++) {
        double t0 = cli_now();
        for (int i = 0; i < iters && *status == WGML_OK; i++)
            *status = fn(st);
        if (*status == WGML_OK)
            *status = wgml_ctx_sync(b->ctx);
        double t = (cli_now() - t0) / iters;
        if (t < best)
            best = t;
    }
    return best;
}

static void report(bench *b, const char *op, const char *dtype, double moved, double t, int ok)
{
    double gbs = moved / t / 1e9;
    if (b->round + 1 < b->rounds)
        printf("round %d ", b->round + 1);
    printf("op %-10s %-8s %8.1f MiB moved %9.3f ms %8.1f GB/s  %5.2f of copy  %s\n", op, dtype, moved / 1048576.0,
           t * 1e3, gbs, b->copy_gbs > 0 ? gbs / b->copy_gbs : 0, ok ? "verified" : "WRONG");
}

static uint64_t rng = 88172645463325252ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static wgml_tensor *random_f32(wgml_ctx *ctx, int ndim, const int64_t *shape, float **host)
{
    wgml_tensor *t = NULL;
    if (wgml_tensor_new(ctx, WGML_F32, ndim, shape, &t) != WGML_OK)
        return NULL;
    int64_t n = wgml_tensor_nelem(t);
    float *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++)
        h[i] = frand();
    if (wgml_tensor_upload(t, h, (uint64_t)n * 4) != WGML_OK) {
        wgml_tensor_free(t);
        free(h);
        return NULL;
    }
    if (host)
        *host = h;
    else
        free(h);
    return t;
}

/* Reads element i of t as f32 (t is f32 or f16). */
static float element(wgml_tensor *t, int64_t i)
{
    wgml_tensor *v = NULL;
    float r = NAN;
    wgml_tensor *flat = NULL;
    int64_t n = wgml_tensor_nelem(t);
    if (wgml_view_reshape(t, 1, &n, &flat) != WGML_OK)
        return r;
    if (wgml_view_slice(flat, 0, i, i + 1, 1, &v) == WGML_OK) {
        if (wgml_tensor_dtype(t) == WGML_F32) {
            wgml_tensor_download(v, &r, 4);
        } else {
            uint16_t h = 0;
            wgml_tensor_download(v, &h, 2);
            unsigned e = (h >> 10) & 31, m = h & 1023;
            r = e == 0 ? ldexpf((float)m, -24) : e == 31 ? INFINITY : ldexpf((float)(m | 1024), (int)e - 25);
            if (h & 0x8000)
                r = -r;
        }
    }
    wgml_tensor_free(v);
    wgml_tensor_free(flat);
    return r;
}

/* ------------------------------------------------------------ cases */

typedef struct two { wgml_buffer *a, *b; uint64_t n; } two;
static wgml_status run_copy(void *p) { two *s = p; return wgml_buffer_copy(s->b, 0, s->a, 0, s->n); }

typedef struct bin { wgml_tensor *a, *b, *o; } bin;
static wgml_status run_add(void *p) { bin *s = p; return wgml_binary(WGML_ADD, s->a, s->b, s->o); }
static wgml_status run_cast(void *p) { bin *s = p; return wgml_cast(s->a, s->o); }

static int bench_copy(bench *b, int iters)
{
    two s = {NULL, NULL, b->bytes};
    wgml_status st = wgml_buffer_create(b->ctx, b->bytes, &s.a);
    if (st == WGML_OK) st = wgml_buffer_create(b->ctx, b->bytes, &s.b);
    if (st == WGML_OK) st = wgml_buffer_fill(s.a, 0, b->bytes, 0x3f800000u);
    double t = st == WGML_OK ? time_it(b, run_copy, &s, iters, &st) : 0;
    float x = 0;
    if (st == WGML_OK) st = wgml_buffer_read(s.b, b->bytes - 4, &x, 4);
    wgml_buffer_destroy(s.a);
    wgml_buffer_destroy(s.b);
    if (st != WGML_OK)
        return cli_error("bench copy", st);
    b->copy_gbs = 2.0 * (double)b->bytes / t / 1e9;
    report(b, "copy", "bytes", 2.0 * (double)b->bytes, t, x == 1.0f);
    return 0;
}

static int bench_add(bench *b, int iters)
{
    int64_t n = (int64_t)(b->bytes / 4);
    float *ha, *hb;
    bin s = {random_f32(b->ctx, 1, &n, &ha), random_f32(b->ctx, 1, &n, &hb), NULL};
    wgml_status st = s.a && s.b ? wgml_tensor_new(b->ctx, WGML_F32, 1, &n, &s.o) : WGML_ERR_OOM;
    double t = st == WGML_OK ? time_it(b, run_add, &s, iters, &st) : 0;
    int ok = st == WGML_OK;
    for (int k = 0; k < 8 && ok; k++) {
        int64_t i = (int64_t)((double)(n - 1) * k / 7);
        ok = element(s.o, i) == ha[i] + hb[i];
    }
    wgml_tensor_free(s.a);
    wgml_tensor_free(s.b);
    wgml_tensor_free(s.o);
    free(ha);
    free(hb);
    if (st != WGML_OK)
        return cli_error("bench add", st);
    report(b, "add", "f32", 3.0 * (double)b->bytes, t, ok);
    return !ok;
}

static int bench_cast(bench *b, int iters)
{
    int64_t n = (int64_t)(b->bytes / 4);
    float *ha;
    bin s = {random_f32(b->ctx, 1, &n, &ha), NULL, NULL};
    wgml_status st = s.a ? wgml_tensor_new(b->ctx, WGML_F16, 1, &n, &s.o) : WGML_ERR_OOM;
    double t = st == WGML_OK ? time_it(b, run_cast, &s, iters, &st) : 0;
    int ok = st == WGML_OK;
    for (int k = 0; k < 8 && ok; k++) {
        int64_t i = (int64_t)((double)(n - 1) * k / 7);
        ok = fabsf(element(s.o, i) - ha[i]) <= 1e-3f * fabsf(ha[i]) + 1e-7f;
    }
    wgml_tensor_free(s.a);
    wgml_tensor_free(s.o);
    free(ha);
    if (st != WGML_OK)
        return cli_error("bench cast", st);
    report(b, "cast", "f32>f16", 1.5 * (double)b->bytes, t, ok);
    return !ok;
}

/* get_rows: a [rows, 4096] f32 table gathered in a random order into an
 * output of the same size (read table once, write out once). */
typedef struct gather { wgml_tensor *tab, *idx, *o; } gather;
static wgml_status run_get_rows(void *p) { gather *s = p; return wgml_get_rows(s->tab, s->idx, s->o); }

static int bench_get_rows(bench *b, int iters)
{
    int64_t cols = 4096, rows = (int64_t)(b->bytes / 4 / 4096);
    int64_t shape[2] = {rows, cols};
    float *ht;
    gather s = {random_f32(b->ctx, 2, shape, &ht), NULL, NULL};
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)rows);
    for (int64_t i = 0; i < rows; i++)
        perm[i] = (int32_t)i;
    for (int64_t i = rows - 1; i > 0; i--) {
        int64_t j = (int64_t)((frand() * 0.5f + 0.5f) * (float)i);
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    wgml_status st = s.tab ? wgml_tensor_new(b->ctx, WGML_I32, 1, &rows, &s.idx) : WGML_ERR_OOM;
    if (st == WGML_OK) st = wgml_tensor_upload(s.idx, perm, (uint64_t)rows * 4);
    if (st == WGML_OK) st = wgml_tensor_new(b->ctx, WGML_F32, 2, shape, &s.o);
    double t = st == WGML_OK ? time_it(b, run_get_rows, &s, iters, &st) : 0;
    int ok = st == WGML_OK;
    for (int k = 0; k < 8 && ok; k++) {
        int64_t r = (int64_t)((double)(rows - 1) * k / 7), c = (k * 997) % cols;
        ok = element(s.o, r * cols + c) == ht[perm[r] * cols + c];
    }
    wgml_tensor_free(s.tab);
    wgml_tensor_free(s.idx);
    wgml_tensor_free(s.o);
    free(ht);
    free(perm);
    if (st != WGML_OK)
        return cli_error("bench get_rows", st);
    report(b, "get_rows", "f32", 2.0 * (double)b->bytes, t, ok);
    return !ok;
}

/* rope: x [seq, 32 heads, 128] f32, NEOX over the whole head, positions
 * 0..seq-1 (read x once, write out once). */
typedef struct rope_case { wgml_tensor *x, *pos, *o; wgml_rope_params p; } rope_case;
static wgml_status run_rope(void *p) { rope_case *s = p; return wgml_rope(s->x, s->pos, &s->p, s->o); }

static int bench_rope(bench *b, int iters)
{
    int64_t seq = (int64_t)(b->bytes / 4 / (32 * 128));
    int64_t shape[3] = {seq, 32, 128};
    float *hx;
    rope_case s = {random_f32(b->ctx, 3, shape, &hx), NULL, NULL, {0}};
    s.p.mode = WGML_ROPE_NEOX;
    s.p.n_dims = 128;
    s.p.freq_base = 10000.0f;
    s.p.freq_scale = 1.0f;
    s.p.attn_factor = 1.0f;
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)seq);
    for (int64_t i = 0; i < seq; i++)
        pos[i] = (int32_t)i;
    wgml_status st = s.x ? wgml_tensor_new(b->ctx, WGML_I32, 1, &seq, &s.pos) : WGML_ERR_OOM;
    if (st == WGML_OK) st = wgml_tensor_upload(s.pos, pos, (uint64_t)seq * 4);
    if (st == WGML_OK) st = wgml_tensor_new(b->ctx, WGML_F32, 3, shape, &s.o);
    double t = st == WGML_OK ? time_it(b, run_rope, &s, iters, &st) : 0;
    /* spot check: token r, head 0, pair (i, i + 64) rotated by r * 10000^(-i/64) */
    int ok = st == WGML_OK;
    for (int k = 0; k < 6 && ok; k++) {
        int64_t r = (int64_t)((double)(seq - 1) * k / 5) % 4096, i = (k * 11) % 64;
        double th = (double)r * pow(10000.0, -(double)i / 64.0);
        double x0 = hx[r * 4096 + i], x1 = hx[r * 4096 + i + 64];
        double want = x0 * cos(th) - x1 * sin(th);
        ok = fabs(element(s.o, r * 4096 + i) - want) < 1e-4;
    }
    wgml_tensor_free(s.x);
    wgml_tensor_free(s.pos);
    wgml_tensor_free(s.o);
    free(hx);
    free(pos);
    if (st != WGML_OK)
        return cli_error("bench rope", st);
    report(b, "rope", "f32", 2.0 * (double)b->bytes, t, ok);
    return !ok;
}

/* softmax and rms_norm (x weight) over rows of 4096 f32 (read x once,
 * write out once; the weight is 16 KiB and not counted). */
typedef struct rows_case { wgml_tensor *x, *w, *o; wgml_softmax_params sp; wgml_norm_params np; } rows_case;
static wgml_status run_softmax(void *p) { rows_case *s = p; return wgml_softmax(s->x, NULL, NULL, &s->sp, s->o); }
static wgml_status run_rms(void *p) { rows_case *s = p; return wgml_norm(s->x, &s->np, s->o); }

static int bench_rows(bench *b, int iters, int norm)
{
    int64_t shape[2] = {(int64_t)(b->bytes / 4 / 4096), 4096};
    int64_t wn = 4096;
    float *hx, *hw = NULL;
    rows_case s = {random_f32(b->ctx, 2, shape, &hx), NULL, NULL, {-1, 1.0f, 0.0f, 0}, {0}};
    wgml_status st = s.x ? WGML_OK : WGML_ERR_OOM;
    if (st == WGML_OK && norm) {
        s.w = random_f32(b->ctx, 1, &wn, &hw);
        st = s.w ? WGML_OK : WGML_ERR_OOM;
        s.np.kind = WGML_RMS_NORM;
        s.np.eps = 1e-6f;
        s.np.weight = s.w;
    }
    if (st == WGML_OK) st = wgml_tensor_new(b->ctx, WGML_F32, 2, shape, &s.o);
    double t = st == WGML_OK ? time_it(b, norm ? run_rms : run_softmax, &s, iters, &st) : 0;
    int ok = st == WGML_OK;
    for (int k = 0; k < 3 && ok; k++) {
        int64_t r = (int64_t)((double)(shape[0] - 1) * k / 2), c = (k * 1237) % 4096;
        const float *x = hx + r * 4096;
        double want, acc = 0, mx = -1e30;
        for (int j = 0; j < 4096; j++) {
            acc += norm ? (double)x[j] * x[j] : 0;
            mx = x[j] > mx ? x[j] : mx;
        }
        if (norm) {
            want = x[c] / sqrt(acc / 4096 + 1e-6) * hw[c];
        } else {
            for (int j = 0; j < 4096; j++)
                acc += exp(x[j] - mx);
            want = exp(x[c] - mx) / acc;
        }
        ok = fabs(element(s.o, r * 4096 + c) - want) <= 1e-5 * fabs(want) + 1e-7;
    }
    wgml_tensor_free(s.x);
    wgml_tensor_free(s.w);
    wgml_tensor_free(s.o);
    free(hx);
    free(hw);
    if (st != WGML_OK)
        return cli_error(norm ? "bench rms_norm" : "bench softmax", st);
    report(b, norm ? "rms_norm" : "softmax", "f32", 2.0 * (double)b->bytes, t, ok);
    return !ok;
}

int bench_ops(wgml_ctx *ctx, int argc, char **argv)
{
    bench b = {ctx, 256ull << 20, 0, 0, 1};
    if (argc > 1 && atoi(argv[1]) > 0)
        b.bytes = (uint64_t)atoi(argv[1]) << 20;
    if (argc > 2 && atoi(argv[2]) > 0)
        b.rounds = atoi(argv[2]);
    wgml_device_info in;
    if (wgml_device_info_get(ctx, &in) == WGML_OK)
        printf("bench ops on %s (%s), %llu MiB per main operand\n", in.adapter, in.backend,
               (unsigned long long)(b.bytes >> 20));
    int iters = b.bytes >= (64ull << 20) ? 20 : 5;
    int fails = 0;
    for (b.round = 0; b.round < b.rounds; b.round++) {
        fails += bench_copy(&b, iters);
        fails += bench_add(&b, iters);
        fails += bench_cast(&b, iters);
        fails += bench_rows(&b, iters, 0);
        fails += bench_rows(&b, iters, 1);
        fails += bench_get_rows(&b, iters);
        fails += bench_rope(&b, iters);
    }
    return fails ? 1 : 0;
}
