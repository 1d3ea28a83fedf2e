/*
 * `wgml bench gemm [--quick] [--json]`: GEMM throughput of wgml_matmul and
 * wgml_linear.  Full mode: f32 4096^3 and 8192^3, f16 inputs 4096^3 (f32
 * accumulation and output), linear x [512, 4096] . w [14336, 4096]^T with
 * f32, q4_0 and q4_K weights, and a few odd shapes; then 4096^3 and the
 * linears again with WGML_PREC_F16 (the "prec" column: f16 arithmetic,
 * the LLM prefill's choice); --quick: tiny shapes
 * that run in seconds on a CPU driver.  Each shape: 0.3 s of back-to-back
 * warm-up (at least 3 calls; the H100 drops its clock when idle, see
 * bench/NOTES.md), then 7 timed repetitions of `iters` calls between
 * wgml_ctx_sync; the median is reported.  The warm-up clock starts after
 * the first call has compiled its kernels and finished.  TFLOP/s counts 2 m n k; the
 * roofline is the H100's FP32 SIMT peak (67 TFLOP/s), printed only when the
 * adapter's name says H100.  Dense results are spot-checked against the CPU
 * (16 entries), so a fast wrong kernel shows.  bench/torch_gemm.py runs the
 * same shapes in PyTorch.
 */
#include "cli.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shape {
    const char *kind;     /* "matmul" or "linear" */
    int64_t m, n, k;
    wgml_dtype in, w;     /* a (x) and b (w) dtypes; out is f32 */
    wgml_precision prec;
} shape;

static const shape full[] = {
    {"matmul", 4096, 4096, 4096, WGML_F32, WGML_F32, WGML_PREC_F32},
    {"matmul", 8192, 8192, 8192, WGML_F32, WGML_F32, WGML_PREC_F32},
    {"matmul", 4096, 4096, 4096, WGML_F16, WGML_F16, WGML_PREC_F32},
    {"linear", 512, 14336, 4096, WGML_F32, WGML_F32, WGML_PREC_F32},
    {"linear", 512, 14336, 4096, WGML_F32, WGML_Q4_0, WGML_PREC_F32},
    {"linear", 512, 14336, 4096, WGML_F32, WGML_Q4_K, WGML_PREC_F32},
    {"matmul", 4095, 4097, 1023, WGML_F32, WGML_F32, WGML_PREC_F32},
    {"matmul", 1000, 1000, 1000, WGML_F32, WGML_F32, WGML_PREC_F32},
    {"matmul", 64, 64, 16384, WGML_F32, WGML_F32, WGML_PREC_F32},
    {"matmul", 127, 4096, 4096, WGML_F32, WGML_F32, WGML_PREC_F32},
    {"matmul", 4096, 4096, 4096, WGML_F32, WGML_F32, WGML_PREC_F16},
    {"matmul", 8192, 8192, 8192, WGML_F32, WGML_F32, WGML_PREC_F16},
    {"linear", 512, 14336, 4096, WGML_F32, WGML_F32, WGML_PREC_F16},
    {"linear", 512, 14336, 4096, WGML_F32, WGML_Q4_0, WGML_PREC_F16},
    {"linear", 512, 14336, 4096, WGML_F32, WGML_Q4_K, WGML_PREC_F16},
    {"linear", 512, 14336, 4096, WGML_F32, WGML_Q6_K, WGML_PREC_F16},
    {"matmul", 4096, 4096, 4096, WGML_F16, WGML_F16, WGML_PREC_F16},
    {"linear", 512, 14336, 4096, WGML_F16, WGML_F16, WGML_PREC_F16},
    {"linear", 512, 14336, 4096, WGML_F32, WGML_F16, WGML_PREC_F16},
};
static const shape quick[] = {
    {"matmul", 64, 64, 64, WGML_F32, WGML_F32, WGML_PREC_F32},
    {"matmul", 100, 70, 33, WGML_F32, WGML_F32, WGML_PREC_F32},
    {"matmul", 64, 64, 64, WGML_F16, WGML_F16, WGML_PREC_F32},
    {"linear", 16, 64, 256, WGML_F32, WGML_Q4_0, WGML_PREC_F32},
    {"linear", 16, 64, 256, WGML_F32, WGML_Q4_K, WGML_PREC_F32},
    {"matmul", 8, 8, 2048, WGML_F32, WGML_F32, WGML_PREC_F32},
    {"matmul", 100, 70, 33, WGML_F32, WGML_F32, WGML_PREC_F16},
    {"linear", 64, 64, 256, WGML_F32, WGML_Q4_K, WGML_PREC_F16},
};

static uint64_t rng = 0x2545f4914f6cdd1dull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* A tensor of random values in [-1, 1] (floats), or of valid blocks
 * (quantised: every byte 0x31, f16 scales of ~0.17 and small fields).
 * *host gets the f32 values of float tensors (NULL otherwise). */
static wgml_status make(wgml_ctx *ctx, wgml_dtype dt, int64_t rows, int64_t cols, wgml_tensor **t, float **host)
{
    int64_t dims[2] = {rows, cols};
    *host = NULL;
    wgml_status st = wgml_tensor_new(ctx, dt, 2, dims, t);
    if (st != WGML_OK)
        return st;
    size_t bytes = wgml_tensor_nbytes(*t), n = (size_t)(rows * cols);
    if (dt != WGML_F32 && dt != WGML_F16) {
        uint8_t *q = malloc(bytes);
        memset(q, 0x31, bytes);
        st = wgml_tensor_upload(*t, q, bytes);
        free(q);
        return st;
    }
    float *h = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        h[i] = frand();
    if (dt == WGML_F16) { /* uploaded as f32 and cast on the GPU; not checked */
        wgml_tensor *f = NULL;
        st = wgml_tensor_new(ctx, WGML_F32, 2, dims, &f);
        if (st == WGML_OK && (st = wgml_tensor_upload(f, h, n * 4)) == WGML_OK)
            st = wgml_cast(f, *t);
        wgml_tensor_free(f);
        free(h);
        return st;
    }
    st = wgml_tensor_upload(*t, h, bytes);
    *host = h;
    return st;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct result {
    double ms, tflops;
    int verified; /* 1 yes, 0 wrong, -1 not checked */
} result;

static wgml_status run_one(wgml_ctx *ctx, const shape *s, result *r)
{
    bool lin = !strcmp(s->kind, "linear");
    wgml_tensor *a = NULL, *b = NULL, *o = NULL;
    float *ha = NULL, *hb = NULL;
    wgml_status st = make(ctx, s->in, s->m, s->k, &a, &ha);
    if (st == WGML_OK)
        st = lin ? make(ctx, s->w, s->n, s->k, &b, &hb) : make(ctx, s->w, s->k, s->n, &b, &hb);
    if (st == WGML_OK)
        st = wgml_tensor_new(ctx, WGML_F32, 2, (int64_t[]){s->m, s->n}, &o);
    double flop = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    /* ~0.1 s of work per repetition at 50 TFLOP/s, at least one call */
    int iters = (int)(5e12 / flop);
    iters = iters < 1 ? 1 : iters > 200 ? 200 : iters;
    double times[7];
    int calls = 0;
    wgml_matmul_params prm = {1.0f, 0.0f, WGML_ACT_NONE, s->prec};
    /* the first call compiles: the warm-up clock starts after it */
    if (st == WGML_OK)
        st = lin ? wgml_linear(a, b, NULL, &prm, o) : wgml_matmul(a, b, NULL, &prm, o);
    if (st == WGML_OK)
        st = wgml_ctx_sync(ctx);
    double w0 = cli_now();
    while (st == WGML_OK && (calls < 3 || cli_now() - w0 < 0.3)) {
        st = lin ? wgml_linear(a, b, NULL, &prm, o) : wgml_matmul(a, b, NULL, &prm, o);
        calls++;
        if (st == WGML_OK && calls % 4 == 0)
            st = wgml_ctx_sync(ctx);
    }
    if (st == WGML_OK)
        st = wgml_ctx_sync(ctx);
    for (int rep = 0; rep < 7 && st == WGML_OK; rep++) {
        double t0 = cli_now();
        for (int i = 0; i < iters && st == WGML_OK; i++)
            st = lin ? wgml_linear(a, b, NULL, &prm, o) : wgml_matmul(a, b, NULL, &prm, o);
        if (st == WGML_OK)
            st = wgml_ctx_sync(ctx);
        times[rep] = (cli_now() - t0) / iters;
    }
    r->verified = -1;
    if (st == WGML_OK) {
        qsort(times, 7, sizeof *times, cmp_d);
        r->ms = times[3] * 1e3;
        r->tflops = flop / times[3] / 1e12;
        /* 16 entries against the CPU: f32 error bound ~k 2^-24; f16
         * arithmetic (test_op_matmul's bound_h) ~2% of sum |x y| */
        double rel = s->prec == WGML_PREC_F16 ? 33 * ldexp(1, -11) + ldexp(1, -9) : 0;
        if (ha && hb) {
            float *ho = malloc(sizeof(float) * (size_t)(s->m * s->n));
            st = wgml_tensor_download(o, ho, wgml_tensor_nbytes(o));
            r->verified = 1;
            for (int t = 0; t < 16 && st == WGML_OK; t++) {
                int64_t i = (int64_t)((frand() + 1) / 2 * (double)(s->m - 1)), j = (int64_t)((frand() + 1) / 2 * (double)(s->n - 1));
                double want = 0, mag = 0;
                for (int64_t q = 0; q < s->k; q++) {
                    double x = ha[i * s->k + q], y = lin ? hb[j * s->k + q] : hb[q * s->n + j];
                    want += x * y;
                    mag += fabs(x * y);
                }
                if (fabs(ho[i * s->n + j] - want) > (double)(s->k + 4) * ldexp(mag, -24) + rel * mag + 1e-6 +
                                                        (rel > 0 ? (double)s->k * ldexp(1, -14) : 0))
                    r->verified = 0;
            }
            free(ho);
        }
    }
    free(ha), free(hb);
    wgml_tensor_free(a), wgml_tensor_free(b), wgml_tensor_free(o);
    return st;
}

int bench_gemm(wgml_ctx *ctx, int argc, char **argv)
{
    bool q, json;
    wgml_device_info info;
    int brc = cli_bench_start(ctx, argc, argv, &q, &json, &info);
    if (brc)
        return brc;
    double peak = strstr(info.adapter, "H100") ? 67.0 : 0;
    const shape *set = q ? quick : full;
    size_t n = q ? sizeof quick / sizeof *quick : sizeof full / sizeof *full;
    if (!json)
        printf("gemm on %s (median of 7, out f32)\n%-7s %-22s %-9s %-4s %10s %9s %9s %s\n", info.adapter, "op",
               "m x n x k", "a.b", "prec", "ms", "TFLOP/s", "roofline", "check");
    int rc = 0;
    /* WGML_GEMM_ROWS=0,1: only those rows of the table (device time for
     * A/B runs; bench/run_h100.sh) */
    const char *only = getenv("WGML_GEMM_ROWS");
    for (size_t i = 0; i < n; i++) {
        const shape *s = &set[i];
        result r = {0, 0, -1};
        char row[24];
        snprintf(row, sizeof row, "%zu", i);
        if (only && *only && !cli_listed(only, row))
            continue;
        wgml_status st = run_one(ctx, s, &r);
        char dims[48], dts[24], roof[16] = "-";
        snprintf(dims, sizeof dims, "%lldx%lldx%lld", (long long)s->m, (long long)s->n, (long long)s->k);
        snprintf(dts, sizeof dts, "%s.%s", wgml_dtype_name(s->in), wgml_dtype_name(s->w));
        if (st != WGML_OK) {
            rc = cli_error(dims, st);
            continue;
        }
        if (peak > 0)
            snprintf(roof, sizeof roof, "%.2f", r.tflops / peak);
        const char *prec = s->prec == WGML_PREC_F16 ? "f16" : "f32";
        const char *chk = r.verified < 0 ? "-" : r.verified ? "verified" : "WRONG";
        if (r.verified == 0)
            rc = 1;
        if (json)
            printf("%s\n  {\"op\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"dtypes\": \"%s\", "
                   "\"prec\": \"%s\", \"ms\": %.4f, \"tflops\": %.3f, \"roofline\": %s, \"check\": \"%s\"}",
                   i ? "," : "", s->kind, (long long)s->m, (long long)s->n, (long long)s->k, dts, prec, r.ms,
                   r.tflops, peak > 0 ? roof : "null", chk);
        else
            printf("%-7s %-22s %-9s %-4s %10.3f %9.2f %9s %s\n", s->kind, dims, dts, prec, r.ms, r.tflops, roof, chk);
        fflush(stdout);
    }
    if (json)
        printf("\n]}\n");
    return rc;
}
