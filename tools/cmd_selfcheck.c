/* `wgml selfcheck`: a vector op and a reduction on the GPU, each checked
 * against the CPU, with timings.  Proves the whole path (upload, kernels,
 * grid folding, readback) on this machine in a second or two. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static int check_add(wgml_ctx *ctx, uint32_t n)
{
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
    wgml_buffer *bx = NULL, *by = NULL, *bz = NULL;
    wgml_kernel *k = NULL;
    int bad = -1;
    for (uint32_t i = 0; i < n; i++) {
        x[i] = frand();
        y[i] = frand();
        z[i] = NAN;
    }
    wgml_status st = wgml_kernel_builtin(ctx, "selfcheck.wgsl", "add_f32", "ADD", 3, 3, &k);
    if (st == WGML_OK) st = wgml_buffer_create(ctx, n * 4ull, &bx);
    if (st == WGML_OK) st = wgml_buffer_create(ctx, n * 4ull, &by);
    if (st == WGML_OK) st = wgml_buffer_create(ctx, n * 4ull, &bz);
    if (st == WGML_OK) st = wgml_buffer_write(bx, 0, x, n * 4ull);
    if (st == WGML_OK) st = wgml_buffer_write(by, 0, y, n * 4ull);
    if (st == WGML_OK) st = wgml_buffer_fill(bz, 0, n * 4ull, 0x7fc00000u); /* NaN: unwritten shows */
    double t0 = 0, t1 = 0;
    if (st == WGML_OK) st = wgml_ctx_sync(ctx);
    if (st == WGML_OK) {
        uint32_t prm[4] = {n, 0, 0, 0};
        wgml_buffer *b[3] = {bx, by, bz};
        t0 = cli_now();
        st = wgml_dispatch(ctx, k, b, 3, prm, sizeof prm, (n + 255) / 256, 1, 1);
        if (st == WGML_OK) st = wgml_ctx_sync(ctx);
        t1 = cli_now();
    }
    if (st == WGML_OK) st = wgml_buffer_read(bz, 0, z, n * 4ull);
    if (st == WGML_OK) {
        bad = 0;
        for (uint32_t i = 0; i < n; i++)
            if (z[i] != x[i] + y[i]) /* one f32 rounding on both sides: exact */
                bad++;
        printf("add      n=%-9u %s  (%u mismatches)  GPU %.3f ms incl. submit+wait, %.1f GB/s\n", n,
               bad ? "FAIL" : "ok  ", (unsigned)bad, (t1 - t0) * 1e3, 12.0 * n / (t1 - t0) / 1e9);
    } else {
        cli_error("selfcheck add", st);
    }
    wgml_buffer_destroy(bx);
    wgml_buffer_destroy(by);
    wgml_buffer_destroy(bz);
    free(x);
    free(y);
    free(z);
    return bad != 0;
}

static int check_reduce(wgml_ctx *ctx, uint32_t n)
{
    const uint32_t groups = 1024;
    float *x = malloc(n * sizeof *x);
    double ref_sum = 0, abs_sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        x[i] = frand();
        ref_sum += x[i];
        abs_sum += fabs(x[i]);
    }
    wgml_buffer *bx = NULL, *bp = NULL, *bo = NULL;
    wgml_kernel *k = NULL;
    float got = NAN;
    double t0 = 0, t1 = 0;
    wgml_status st = wgml_kernel_builtin(ctx, "selfcheck.wgsl", "reduce_sum_f32", "REDUCE", 2, 1, &k);
    if (st == WGML_OK) st = wgml_buffer_create(ctx, n * 4ull, &bx);
    if (st == WGML_OK) st = wgml_buffer_create(ctx, groups * 4ull, &bp);
    if (st == WGML_OK) st = wgml_buffer_create(ctx, 4, &bo);
    if (st == WGML_OK) st = wgml_buffer_write(bx, 0, x, n * 4ull);
    if (st == WGML_OK) st = wgml_ctx_sync(ctx);
    if (st == WGML_OK) {
        uint32_t p1[4] = {n, 0, 0, 0}, p2[4] = {groups, 0, 0, 0};
        wgml_buffer *b1[2] = {bx, bp}, *b2[2] = {bp, bo};
        t0 = cli_now();
        st = wgml_dispatch(ctx, k, b1, 2, p1, sizeof p1, groups, 1, 1);
        if (st == WGML_OK) st = wgml_dispatch(ctx, k, b2, 2, p2, sizeof p2, 1, 1, 1);
        if (st == WGML_OK) st = wgml_ctx_sync(ctx);
        t1 = cli_now();
    }
    if (st == WGML_OK) st = wgml_buffer_read(bo, 0, &got, 4);
    int fail = 1;
    if (st == WGML_OK) {
        /* f32 summation error bound: each element passes through at most
         * n/(groups*256) serial adds, log2(256) tree levels in pass 1 and
         * ceil(groups/256) + 8 in pass 2; each add costs <= 2^-24 relative
         * of the running |sum|, bounded by sum|x|. */
        double depth = ceil((double)n / (groups * 256.0)) + 8 + groups / 256.0 + 8;
        double tol = depth * ldexp(1.0, -24) * abs_sum;
        double err = fabs((double)got - ref_sum);
        fail = !(err <= tol);
        printf("reduce   n=%-9u %s  (|gpu-cpu| %.3g, bound %.3g)  GPU %.3f ms incl. submit+wait, %.1f GB/s\n", n,
               fail ? "FAIL" : "ok  ", err, tol, (t1 - t0) * 1e3, 4.0 * n / (t1 - t0) / 1e9);
    } else {
        cli_error("selfcheck reduce", st);
    }
    wgml_buffer_destroy(bx);
    wgml_buffer_destroy(bp);
    wgml_buffer_destroy(bo);
    free(x);
    return fail;
}

int cmd_selfcheck(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    wgml_ctx *ctx = cli_open();
    if (!ctx)
        return 1;
    wgml_device_info in;
    if (wgml_device_info_get(ctx, &in) == WGML_OK)
        printf("selfcheck on %s (%s, %s)\n", in.adapter, in.backend, in.device_type);
    int fails = 0;
    /* 16.8 M elements need 65,600+ workgroups of 256: exercises grid folding. */
    fails += check_add(ctx, (1u << 24) + 12345);
    fails += check_reduce(ctx, (1u << 22) + 3);
    wgml_ctx_destroy(ctx);
    printf("selfcheck: %s\n", fails ? "FAILED" : "all ok");
    return fails ? 1 : 0;
}
