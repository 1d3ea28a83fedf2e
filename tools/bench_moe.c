/*
 * `wgml bench moe [--quick] [--json]`: wgml_linear_id (mixture of experts,
 * ggml's mul_mat_id) at prefill, the grouped GEMM path against the
 * mat-vec path (WGML_FORCE=linear_id=grouped|matvec).  Full mode: 512
 * tokens routed to 2 of 8 experts of w [8, 14336, 4096] (a Mixtral-8x7B
 * up projection), x [512, 1, 4096] f32 broadcast over the 2 slots, q4_K
 * and f16 weights; --quick: 37 tokens, 2 of 4 experts of [4, 64, 256],
 * seconds on lavapipe.  Each case: 0.3 s of back-to-back warm-up (at
 * least 3 calls; an idle H100 drops its clock, bench/NOTES.md), then 7
 * timed repetitions of `iters` calls between syncs, the median reported.
 * TFLOP/s counts 2 pairs n k; the weight-bytes bound is the time to read
 * every routed expert's weights once at the H100's copy bandwidth (2.95
 * TB/s, wgml's vec4 copy), printed as bound / time on an H100 only.  The
 * two paths' outputs are compared at 64 entries (relative 1e-3: different
 * summation orders), so a fast wrong path shows.
 */
#include "cli.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mshape {
    int64_t tokens, experts, used, n, k;
    wgml_dtype w;
} mshape;

static const mshape full[] = {
    {512, 8, 2, 14336, 4096, WGML_Q4_K},
    {512, 8, 2, 14336, 4096, WGML_F16},
};
static const mshape quick[] = {
    {37, 4, 2, 64, 256, WGML_Q4_K},
    {37, 4, 2, 64, 256, WGML_F16},
};
static const char *const paths[] = {"grouped", "matvec"};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* w [E, n, k]: f16 of random magnitude in [1/8, 1/4) and sign, or q4_K
 * blocks of bytes 0x31 (f16 scales ~0.17, small fields: valid blocks). */
static wgml_status make_w(wgml_ctx *ctx, const mshape *s, wgml_tensor **w)
{
    wgml_status st = wgml_tensor_new(ctx, s->w, 3, (int64_t[]){s->experts, s->n, s->k}, w);
    if (st != WGML_OK)
        return st;
    size_t bytes = wgml_tensor_nbytes(*w);
    uint8_t *h = malloc(bytes);
    if (!h)
        return WGML_ERR_OOM;
    if (s->w == WGML_F16) {
        uint16_t *v = (uint16_t *)h;
        for (size_t i = 0; i < bytes / 2; i++) {
            uint64_t r = next();
            v[i] = (uint16_t)(0x3000u | (r & 0x3ffu) | ((r >> 20) & 1u) << 15);
        }
    } else {
        memset(h, 0x31, bytes);
    }
    st = wgml_tensor_upload(*w, h, bytes);
    free(h);
    return st;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* WGML_FORCE as the caller set it (e.g. gemm=t64, the grouped GEMM's
 * tile), plus linear_id=path; NULL path: the caller's again. */
static void force(const char *path)
{
    static char *orig;
    static bool saved;
    if (!saved) {
        const char *e = getenv("WGML_FORCE");
        orig = e && *e ? strdup(e) : NULL;
        saved = true;
    }
    if (!path) {
        if (orig)
            setenv("WGML_FORCE", orig, 1);
        else
            unsetenv("WGML_FORCE");
        return;
    }
    char b[256];
    snprintf(b, sizeof b, "%s%slinear_id=%s", orig ? orig : "", orig ? "," : "", path);
    setenv("WGML_FORCE", b, 1);
}

/* The median seconds of one call on `path`; out holds its result. */
static wgml_status time_path(wgml_ctx *ctx, const char *path, const mshape *s, const wgml_tensor *x,
                             const wgml_tensor *w, const wgml_tensor *ids, wgml_tensor *out, double *sec)
{
    force(path);
    double flop = 2.0 * (double)(s->tokens * s->used) * (double)s->n * (double)s->k;
    /* ~0.1 s of work per repetition at 20 TFLOP/s, at least one call */
    int iters = (int)(2e12 / flop);
    iters = iters < 1 ? 1 : iters > 200 ? 200 : iters;
    wgml_status st = WGML_OK;
    int calls = 0;
    /* the first call compiles: the warm-up clock starts after it */
    st = wgml_linear_id(x, w, ids, out);
    if (st == WGML_OK)
        st = wgml_ctx_sync(ctx);
    double w0 = cli_now(), times[7];
    while (st == WGML_OK && (calls < 3 || cli_now() - w0 < 0.3)) {
        st = wgml_linear_id(x, w, ids, out);
        if (st == WGML_OK && ++calls % 4 == 0)
            st = wgml_ctx_sync(ctx);
    }
    if (st == WGML_OK)
        st = wgml_ctx_sync(ctx);
    for (int rep = 0; rep < 7 && st == WGML_OK; rep++) {
        double t0 = cli_now();
        for (int i = 0; i < iters && st == WGML_OK; i++)
            st = wgml_linear_id(x, w, ids, out);
        if (st == WGML_OK)
            st = wgml_ctx_sync(ctx);
        times[rep] = (cli_now() - t0) / iters;
    }
    force(NULL);
    if (st == WGML_OK) {
        qsort(times, 7, sizeof *times, cmp_d);
        *sec = times[3];
    }
    return st;
}

typedef struct mresult {
    double ms[2];
    double wbytes;  /* bytes of the routed experts' weights */
    int agree;      /* the paths' outputs match (1), not (0) */
} mresult;

static wgml_status run_case(wgml_ctx *ctx, const mshape *s, mresult *r)
{
    int64_t T = s->tokens, U = s->used, E = s->experts, n = s->n, k = s->k;
    wgml_tensor *x = NULL, *w = NULL, *ids = NULL, *out[2] = {NULL, NULL};
    int32_t *iv = malloc(sizeof(int32_t) * (size_t)(T * U));
    float *xh = malloc(sizeof(float) * (size_t)(T * k));
    bool used[256] = {false};
    for (int64_t t = 0; t < T; t++) { /* U distinct experts a token, uniform */
        int64_t first = (int64_t)(next() % (uint64_t)E);
        for (int64_t u = 0; u < U; u++) {
            iv[t * U + u] = (int32_t)((first + u) % E);
            used[(first + u) % E % 256] = true;
        }
    }
    for (int64_t i = 0; i < T * k; i++)
        xh[i] = (float)((double)(next() >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    wgml_status st = make_w(ctx, s, &w);
    if (st == WGML_OK && (st = wgml_tensor_new(ctx, WGML_F32, 3, (int64_t[]){T, 1, k}, &x)) == WGML_OK)
        st = wgml_tensor_upload(x, xh, sizeof(float) * (size_t)(T * k));
    if (st == WGML_OK && (st = wgml_tensor_new(ctx, WGML_I32, 2, (int64_t[]){T, U}, &ids)) == WGML_OK)
        st = wgml_tensor_upload(ids, iv, sizeof(int32_t) * (size_t)(T * U));
    for (int p = 0; p < 2 && st == WGML_OK; p++)
        if ((st = wgml_tensor_new(ctx, WGML_F32, 3, (int64_t[]){T, U, n}, &out[p])) == WGML_OK)
            st = time_path(ctx, paths[p], s, x, w, ids, out[p], &r->ms[p]);
    int routed = 0;
    for (int64_t e = 0; e < E && e < 256; e++)
        routed += used[e];
    r->wbytes = (double)wgml_tensor_nbytes(w) / (double)E * routed;
    r->agree = 1;
    if (st == WGML_OK) {
        size_t cnt = (size_t)(T * U * n);
        float *a = malloc(cnt * sizeof(float)), *b = malloc(cnt * sizeof(float));
        if ((st = wgml_tensor_download(out[0], a, cnt * 4)) == WGML_OK &&
            (st = wgml_tensor_download(out[1], b, cnt * 4)) == WGML_OK)
            for (int i = 0; i < 64; i++) {
                size_t j = (size_t)(next() % cnt);
                if (!(fabsf(a[j] - b[j]) <= 1e-3f * fmaxf(fabsf(b[j]), 1.0f)))
                    r->agree = 0;
            }
        free(a), free(b);
    }
    for (int p = 0; p < 2; p++)
        r->ms[p] *= 1e3;
    free(iv), free(xh);
    wgml_tensor_free(x), wgml_tensor_free(w), wgml_tensor_free(ids);
    wgml_tensor_free(out[0]), wgml_tensor_free(out[1]);
    return st;
}

int bench_moe(wgml_ctx *ctx, int argc, char **argv)
{
    bool q, json;
    wgml_device_info info;
    int brc = cli_bench_start(ctx, argc, argv, &q, &json, &info);
    if (brc)
        return brc;
    double copy_bw = strstr(info.adapter, "H100") ? 2.95e12 : 0;
    const mshape *set = q ? quick : full;
    size_t nc = q ? sizeof quick / sizeof *quick : sizeof full / sizeof *full;
    if (!json)
        printf("moe (wgml_linear_id) on %s (median of 7; x f32 broadcast, out f32)\n%-28s %-5s %-8s %10s %9s %9s "
               "%s\n", info.adapter, "tokens x used/experts n x k", "w", "path", "ms", "TFLOP/s", "of bound", "check");
    int rc = 0, row = 0;
    for (size_t i = 0; i < nc; i++) {
        const mshape *s = &set[i];
        mresult r;
        memset(&r, 0, sizeof r);
        char dims[64];
        snprintf(dims, sizeof dims, "%lldx%lld/%lld %lldx%lld", (long long)s->tokens, (long long)s->used,
                 (long long)s->experts, (long long)s->n, (long long)s->k);
        wgml_status st = run_case(ctx, s, &r);
        if (st != WGML_OK) {
            rc = cli_error(dims, st);
            continue;
        }
        if (!r.agree)
            rc = 1;
        double flop = 2.0 * (double)(s->tokens * s->used) * (double)s->n * (double)s->k;
        for (int p = 0; p < 2; p++) {
            double tf = flop / (r.ms[p] * 1e-3) / 1e12, bound = copy_bw > 0 ? r.wbytes / copy_bw * 1e3 / r.ms[p] : 0;
            char b[16] = "-";
            if (copy_bw > 0)
                snprintf(b, sizeof b, "%.3f", bound);
            const char *chk = r.agree ? "agree" : "DIFFER";
            if (json)
                printf("%s\n  {\"tokens\": %lld, \"experts\": %lld, \"used\": %lld, \"n\": %lld, \"k\": %lld, "
                       "\"w\": \"%s\", \"path\": \"%s\", \"ms\": %.4f, \"tflops\": %.3f, \"weight_bytes\": %.0f, "
                       "\"of_bound\": %s, \"check\": \"%s\"}", row++ ? "," : "", (long long)s->tokens,
                       (long long)s->experts, (long long)s->used, (long long)s->n, (long long)s->k,
                       wgml_dtype_name(s->w), paths[p], r.ms[p], tf, r.wbytes, copy_bw > 0 ? b : "null", chk);
            else
                printf("%-28s %-5s %-8s %10.3f %9.3f %9s %s\n", dims, wgml_dtype_name(s->w), paths[p], r.ms[p], tf,
                       b, chk);
        }
        fflush(stdout);
    }
    if (json)
        printf("\n]}\n");
    return rc;
}
