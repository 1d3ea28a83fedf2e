/*
 * `wgml bench variants [MiB]`: the f32 add written several ways through the
 * public custom-kernel API, to decide the shape of wgml's elementwise
 * kernels on a device (elements per thread, vec4 or scalar access).
 * A tuning tool, not a product benchmark.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src_fmt =
    "struct P { n: u32, a: u32, b: u32, c: u32 }\n"
    "@group(0) @binding(0) var<uniform> p: P;\n"
    "@group(0) @binding(1) var<storage, read> x: array<%s>;\n"
    "@group(0) @binding(2) var<storage, read> y: array<%s>;\n"
    "@group(0) @binding(3) var<storage, read_write> z: array<%s>;\n"
    "@compute @workgroup_size(%d)\n"
    "fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>,\n"
    "        @builtin(local_invocation_index) l: u32) {\n"
    "    let base = (w.x + w.y * g.x) * %du + l;\n"
    "    for (var j = 0u; j < %du; j++) {\n"
    "        let i = base + j * %du;\n"
    "        if (i >= p.n) { return; }\n"
    "        z[i] = %s;\n"
    "    }\n"
    "}\n";

typedef struct variant {
    const char *name;
    int vec4, bitcast, wg, per;
} variant;

int bench_variants(wgml_ctx *ctx, int argc, char **argv)
{
    uint64_t bytes = (argc > 1 && atoi(argv[1]) > 0 ? (uint64_t)atoi(argv[1]) : 256) << 20;
    static const variant vs[] = {
        {"f32 scalar 1/thread wg256", 0, 0, 256, 1}, {"u32 bitcast 4/thread wg256 (wgml now)", 0, 1, 256, 4},
        {"f32 scalar 4/thread wg256", 0, 0, 256, 4}, {"vec4 1/thread wg256", 1, 0, 256, 1},
        {"vec4 2/thread wg256", 1, 0, 256, 2},       {"vec4 1/thread wg128", 1, 0, 128, 1},
        {"vec4 4/thread wg256", 1, 0, 256, 4},       {"f32 scalar 1/thread wg512", 0, 0, 512, 1},
    };
    wgml_buffer *bx = NULL, *by = NULL, *bz = NULL;
    wgml_status st = wgml_buffer_create(ctx, bytes, &bx);
    if (st == WGML_OK) st = wgml_buffer_create(ctx, bytes, &by);
    if (st == WGML_OK) st = wgml_buffer_create(ctx, bytes, &bz);
    if (st == WGML_OK) st = wgml_buffer_fill(bx, 0, bytes, 0x3f800000u);
    if (st == WGML_OK) st = wgml_buffer_fill(by, 0, bytes, 0x40000000u);
    for (size_t v = 0; v < sizeof vs / sizeof *vs && st == WGML_OK; v++) {
        const variant *x = &vs[v];
        char src[2048];
        const char *t = x->vec4 ? "vec4<f32>" : x->bitcast ? "u32" : "f32";
        const char *expr = x->bitcast ? "bitcast<u32>(bitcast<f32>(x[i]) + bitcast<f32>(y[i]))" : "x[i] + y[i]";
        snprintf(src, sizeof src, src_fmt, t, t, t, x->wg, x->wg * x->per, x->per, x->wg, expr);
        wgml_kernel_desc d = {x->name, src, "main", 3, 3};
        wgml_kernel *k = NULL;
        if ((st = wgml_kernel_create(ctx, &d, &k)) != WGML_OK)
            break;
        uint32_t n = (uint32_t)(bytes / 4 / (x->vec4 ? 4 : 1));
        uint32_t prm[4] = {n, 0, 0, 0};
        uint64_t groups = (n + (uint64_t)x->wg * x->per - 1) / ((uint64_t)x->wg * x->per);
        wgml_buffer *bufs[3] = {bx, by, bz};
        double best = 1e30;
        for (int rep = 0; rep < 4 && st == WGML_OK; rep++) {
            double t0 = cli_now();
            for (int i = 0; i < 20 && st == WGML_OK; i++)
                st = wgml_dispatch(ctx, k, bufs, 3, prm, sizeof prm, (uint32_t)groups, 1, 1);
            if (st == WGML_OK)
                st = wgml_ctx_sync(ctx);
            double dt = (cli_now() - t0) / 20;
            if (rep > 0 && dt < best)
                best = dt;
        }
        float z = 0;
        if (st == WGML_OK)
            st = wgml_buffer_read(bz, bytes - 4, &z, 4);
        printf("variant %-40s %8.1f GB/s %s\n", x->name, 3.0 * (double)bytes / best / 1e9, z == 3.0f ? "ok" : "WRONG");
    }
    wgml_buffer_destroy(bx);
    wgml_buffer_destroy(by);
    wgml_buffer_destroy(bz);
    return st == WGML_OK ? 0 : cli_error("bench variants", st);
}
