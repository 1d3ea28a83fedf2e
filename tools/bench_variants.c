/*
 * `wgml bench variants [MiB]`: the f32 add, a copy and the f32 -> f16 cast
 * written several ways through the public custom-kernel API, to decide
 * the shape of wgml's elementwise kernels on a device (elements per
 * thread, vec4 or scalar access, store width).  A tuning tool, not a
 * product benchmark.
 */
#include "cli.h"

#include <stdbool.h>
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

/* Seconds per dispatch of k over `groups` workgroups: the best of three
 * batches of 20 (after one batch of warm-up). */
static double time_kernel(wgml_ctx *ctx, wgml_kernel *k, wgml_buffer **bufs, int nb, const uint32_t prm[4],
                          uint64_t groups, wgml_status *st)
{
    double best = 1e30;
    for (int rep = 0; rep < 4 && *st == WGML_OK; rep++) {
        double t0 = cli_now();
        for (int i = 0; i < 20 && *st == WGML_OK; i++)
            *st = wgml_dispatch(ctx, k, bufs, nb, prm, 16, (uint32_t)groups, 1, 1);
        if (*st == WGML_OK)
            *st = wgml_ctx_sync(ctx);
        double dt = (cli_now() - t0) / 20;
        if (rep > 0 && dt < best)
            best = dt;
    }
    return best;
}

/* Copy and cast: `x` (f32 1.0 everywhere) into `z`.  The kernel head's
 * %s slots: the enable line, z's element type, the workgroup's vector
 * stride (256 per thread); `base` is the thread's first unit. */
static const char *move_head =
    "%s\n"
    "struct P { n: u32, a: u32, b: u32, c: u32 }\n"
    "@group(0) @binding(0) var<uniform> p: P;\n"
    "@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;\n"
    "@group(0) @binding(2) var<storage, read_write> z: array<%s>;\n"
    "@compute @workgroup_size(256)\n"
    "fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>,\n"
    "        @builtin(local_invocation_index) l: u32) {\n"
    "    let base = (w.x + w.y * g.x) * %du + l;\n";

/* `per` units a thread, strided by the workgroup.  Plain: a loop whose
 * `body` statement moves unit i.  Hoisted: every load of the thread issued
 * (clamped into range) before its stores, as CUDA's vectorised elementwise
 * kernels do (stores may alias loads as far as the shader compiler knows,
 * so a load-store loop keeps one load in flight per thread); `body` is then
 * an expression of the loaded value (%s). */
static void move_src(char *src, size_t cap, int f16, const char *zt, int per, const char *body, int hoist)
{
    size_t n = (size_t)snprintf(src, cap, move_head, f16 ? "enable f16;" : "", zt, 256 * per);
    if (!hoist) {
        if (n < cap)
            snprintf(src + n, cap - n,
                     "    for (var j = 0u; j < %du; j++) {\n"
                     "        let i = base + j * 256u;\n"
                     "        if (i >= p.n) { return; }\n"
                     "        %s\n"
                     "    }\n"
                     "}\n", per, body);
        return;
    }
    for (int k = 0; k < per && n < cap; k++)
        n += (size_t)snprintf(src + n, cap - n, "    let a%d = x[min(base + %du, p.n - 1u)];\n", k, 256 * k);
    for (int k = 0; k < per && n < cap; k++) {
        char e[128], v[16];
        snprintf(v, sizeof v, "a%d", k);
        snprintf(e, sizeof e, body, v);
        n += (size_t)snprintf(src + n, cap - n, "    if (base + %du < p.n) { z[base + %du] = %s; }\n", 256 * k,
                              256 * k, e);
    }
    if (n < cap)
        snprintf(src + n, cap - n, "}\n");
}

typedef struct move_variant {
    const char *name;
    int f16;          /* needs ShaderF16 */
    const char *zt;   /* z's element type */
    int per;          /* units per thread */
    int in_vec4;      /* input vectors per unit */
    double out_ratio; /* bytes written per byte read */
    const char *body; /* statement moving unit i; or, when hoist, an expression of the loaded %s */
    uint32_t want;    /* z's last 32-bit word */
    int hoist;
} move_variant;

static wgml_status move_variants(wgml_ctx *ctx, wgml_buffer *bx, wgml_buffer *bz, uint64_t bytes)
{
    static const move_variant vs[] = {
        {"copy vec4 4/thread (wgml copy)", 0, "vec4<f32>", 4, 1, 1, "z[i] = x[i];", 0x3f800000u, 0},
        {"copy vec4 1/thread", 0, "vec4<f32>", 1, 1, 1, "z[i] = x[i];", 0x3f800000u, 0},
        {"copy vec4 2/thread", 0, "vec4<f32>", 2, 1, 1, "z[i] = x[i];", 0x3f800000u, 0},
        {"cast vec4 -> vec4<f16> 1/thread (wgml)", 1, "vec4<f16>", 1, 1, 0.5, "z[i] = vec4<f16>(x[i]);", 0x3c003c00u, 0},
        {"cast vec4 -> vec4<f16> 2/thread", 1, "vec4<f16>", 2, 1, 0.5, "z[i] = vec4<f16>(x[i]);", 0x3c003c00u, 0},
        {"cast vec4 -> vec2<u32> pack 1/thread", 0, "vec2<u32>", 1, 1, 0.5,
         "let a = x[i]; z[i] = vec2<u32>(pack2x16float(a.xy), pack2x16float(a.zw));", 0x3c003c00u, 0},
        {"cast 2 vec4 -> vec4<u32> pack 1/thread", 0, "vec4<u32>", 1, 2, 0.5,
         "let a = x[2u * i]; let b = x[2u * i + 1u]; z[i] = vec4<u32>(pack2x16float(a.xy), "
         "pack2x16float(a.zw), pack2x16float(b.xy), pack2x16float(b.zw));", 0x3c003c00u, 0},
        {"copy vec4 2/thread hoisted", 0, "vec4<f32>", 2, 1, 1, "%s", 0x3f800000u, 1},
        {"copy vec4 4/thread hoisted", 0, "vec4<f32>", 4, 1, 1, "%s", 0x3f800000u, 1},
        {"cast vec4<f16> 2/thread hoisted", 1, "vec4<f16>", 2, 1, 0.5, "vec4<f16>(%s)", 0x3c003c00u, 1},
        {"cast vec4<f16> 4/thread hoisted", 1, "vec4<f16>", 4, 1, 0.5, "vec4<f16>(%s)", 0x3c003c00u, 1},
        {"cast pack 4/thread hoisted", 0, "vec2<u32>", 4, 1, 0.5,
         "vec2<u32>(pack2x16float(%1$s.xy), pack2x16float(%1$s.zw))", 0x3c003c00u, 1},
    };
    wgml_status st = WGML_OK;
    wgml_device_info info;
    if ((st = wgml_device_info_get(ctx, &info)) != WGML_OK)
        return st;
    bool f16 = (info.features & WGML_FEATURE_F16) != 0;
    for (size_t v = 0; v < sizeof vs / sizeof *vs && st == WGML_OK; v++) {
        const move_variant *x = &vs[v];
        if (x->f16 && !f16)
            continue;
        char src[2048];
        move_src(src, sizeof src, x->f16, x->zt, x->per, x->body, x->hoist);
        wgml_kernel_desc d = {x->name, src, "main", 2, 1};
        wgml_kernel *k = NULL;
        if ((st = wgml_kernel_create(ctx, &d, &k)) != WGML_OK)
            break;
        uint64_t in_bytes = bytes; /* x is read whole */
        uint32_t n = (uint32_t)(in_bytes / 16 / (uint64_t)x->in_vec4);
        uint32_t prm[4] = {n, 0, 0, 0};
        uint64_t groups = (n + 256ull * (uint64_t)x->per - 1) / (256ull * (uint64_t)x->per);
        wgml_buffer *bufs[2] = {bx, bz};
        double best = time_kernel(ctx, k, bufs, 2, prm, groups, &st);
        uint32_t z = 0;
        uint64_t last = (uint64_t)((double)in_bytes * x->out_ratio) - 4;
        if (st == WGML_OK)
            st = wgml_buffer_read(bz, last, &z, 4);
        printf("variant %-40s %8.1f GB/s %s\n", x->name, (1 + x->out_ratio) * (double)in_bytes / best / 1e9,
               z == x->want ? "ok" : "WRONG");
    }
    return st;
}

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
        double best = time_kernel(ctx, k, bufs, 3, prm, groups, &st);
        float z = 0;
        if (st == WGML_OK)
            st = wgml_buffer_read(bz, bytes - 4, &z, 4);
        printf("variant %-40s %8.1f GB/s %s\n", x->name, 3.0 * (double)bytes / best / 1e9, z == 3.0f ? "ok" : "WRONG");
    }
    if (st == WGML_OK)
        st = move_variants(ctx, bx, bz, bytes);
    wgml_buffer_destroy(bx);
    wgml_buffer_destroy(by);
    wgml_buffer_destroy(bz);
    return st == WGML_OK ? 0 : cli_error("bench variants", st);
}
