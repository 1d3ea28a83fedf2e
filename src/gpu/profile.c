/*
 * WGML_PROFILE=1: GPU timestamps around every dispatch, summed per kernel.
 * With TimestampQueryInsidePasses the stamps go between dispatches of one
 * pass; otherwise each dispatch gets its own pass with timestampWrites,
 * which perturbs batching but still times the kernel itself.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define PROF_CAP 2048 /* dispatches per batch: 4096 queries, WebGPU's max */

wgml_status wg_profile_init(wgml_ctx *ctx)
{
    wg_profile *p = &ctx->prof;
    if (!wg_has(ctx, WGML_FEATURE_TIMESTAMPS)) {
        fprintf(stderr, "wgml: WGML_PROFILE ignored: the device has no timestamp queries\n");
        p->on = false;
        return WGML_OK;
    }
    p->in_passes = wg_has(ctx, WGML_FEATURE_TIMESTAMPS_IN_PASSES);
    p->cap = PROF_CAP;
    WGPUQuerySetDescriptor qd = {0};
    qd.type = WGPUQueryType_Timestamp;
    qd.count = 2 * p->cap;
    p->qs = wgpuDeviceCreateQuerySet(ctx->device, &qd);
    WGPUBufferDescriptor bd = {0};
    bd.size = 2ull * p->cap * 8;
    bd.usage = WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc;
    p->resolve = wgpuDeviceCreateBuffer(ctx->device, &bd);
    bd.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    p->readback = wgpuDeviceCreateBuffer(ctx->device, &bd);
    p->who = calloc(p->cap, sizeof *p->who);
    p->tag = calloc(p->cap, sizeof *p->tag);
    p->sink = calloc(p->cap, sizeof *p->sink);
    p->cur_tag = -1;
    p->period_ns = wg_native_timestamp_period(ctx->queue);
    if (!p->qs || !p->resolve || !p->readback || !p->who || !p->tag || !p->sink)
        return wg_fail(WGML_ERR_OOM, "could not allocate profiling resources");
    return WGML_OK;
}

void wg_profile_release(wgml_ctx *ctx)
{
    wg_profile *p = &ctx->prof;
    if (p->qs)
        wgpuQuerySetRelease(p->qs);
    if (p->resolve)
        wgpuBufferRelease(p->resolve);
    if (p->readback)
        wgpuBufferRelease(p->readback);
    free(p->who);
    free(p->tag);
    free(p->sink);
    memset(p, 0, sizeof *p);
}

const WGPUPassTimestampWrites *wg_profile_pass_writes(wgml_ctx *ctx, wgml_kernel *k)
{
    static _Thread_local WGPUPassTimestampWrites tw;
    wg_profile *p = &ctx->prof;
    (void)k;
    if (!p->on || p->in_passes)
        return NULL;
    memset(&tw, 0, sizeof tw);
    tw.querySet = p->qs;
    tw.beginningOfPassWriteIndex = 2 * p->used;
    tw.endOfPassWriteIndex = 2 * p->used + 1;
    return &tw;
}

void wg_profile_begin(wgml_ctx *ctx, wgml_kernel *k, WGPUComputePassEncoder pass)
{
    wg_profile *p = &ctx->prof;
    if (!p->on)
        return;
    p->who[p->used] = k;
    p->tag[p->used] = p->tag_ns ? p->cur_tag : -1;
    p->sink[p->used] = p->tag_ns;
    if (p->in_passes)
        wg_native_write_timestamp(pass, p->qs, 2 * p->used);
}

void wg_profile_end(wgml_ctx *ctx, WGPUComputePassEncoder pass)
{
    wg_profile *p = &ctx->prof;
    if (!p->on)
        return;
    if (p->in_passes)
        wg_native_write_timestamp(pass, p->qs, 2 * p->used + 1);
    p->used++;
}

void wg_profile_resolve(wgml_ctx *ctx, WGPUCommandEncoder enc)
{
    wg_profile *p = &ctx->prof;
    if (!p->on || !p->used)
        return;
    wgpuCommandEncoderResolveQuerySet(enc, p->qs, 0, 2 * p->used, p->resolve, 0);
    wgpuCommandEncoderCopyBufferToBuffer(enc, p->resolve, 0, p->readback, 0, 16ull * p->used);
}

static void on_map(WGPUMapAsyncStatus st, WGPUStringView msg, void *u1, void *u2)
{
    (void)msg; (void)u2;
    *(int *)u1 = st == WGPUMapAsyncStatus_Success ? 1 : 2;
}

void wg_profile_collect(wgml_ctx *ctx)
{
    wg_profile *p = &ctx->prof;
    if (!p->on || !p->used || ctx->lost)
        return;
    volatile int done = 0;
    WGPUBufferMapCallbackInfo ci = {0};
    ci.mode = WGPUCallbackMode_AllowProcessEvents;
    ci.callback = on_map;
    ci.userdata1 = (void *)&done;
    wgpuBufferMapAsync(p->readback, WGPUMapMode_Read, 0, 16ull * p->used, ci);
    while (!done && !ctx->lost) {
        wg_native_poll(ctx->device, true);
        wgpuInstanceProcessEvents(ctx->instance);
    }
    if (done == 1) {
        const uint64_t *t = wgpuBufferGetConstMappedRange(p->readback, 0, 16ull * p->used);
        uint64_t lo = UINT64_MAX, hi = 0, n = 0;
        for (uint32_t i = 0; t && i < p->used; i++) {
            if (!p->who[i] || t[2 * i + 1] < t[2 * i])
                continue;
            lo = t[2 * i] < lo ? t[2 * i] : lo;
            hi = t[2 * i + 1] > hi ? t[2 * i + 1] : hi;
            n++;
            double ns = (double)(t[2 * i + 1] - t[2 * i]) * p->period_ns;
            p->who[i]->prof_ns += ns;
            p->who[i]->prof_count++;
            if (p->tag[i] >= 0 && p->sink[i])
                p->sink[i][p->tag[i]] += ns;
        }
        if (n && hi > lo) {
            p->span_ns += (double)(hi - lo) * p->period_ns;
            p->span_n += n;
        }
        wgpuBufferUnmap(p->readback);
    }
    p->used = 0;
}

bool wg_profiling(const wgml_ctx *ctx) { return ctx->prof.on; }

void wg_profile_tag(wgml_ctx *ctx, double *sink, int tag)
{
    if (!ctx->prof.on)
        return;
    ctx->prof.tag_ns = sink;
    ctx->prof.cur_tag = sink ? tag : -1;
}

static int by_time(const void *a, const void *b)
{
    const wgml_kernel *x = *(wgml_kernel *const *)a, *y = *(wgml_kernel *const *)b;
    return (x->prof_ns < y->prof_ns) - (x->prof_ns > y->prof_ns);
}

wgml_status wgml_profile_print(wgml_ctx *ctx, void *file)
{
    FILE *f = file ? file : stderr;
    if (!ctx)
        return wg_fail(WGML_ERR_INVALID_ARG, "context is NULL");
    if (!ctx->prof.on)
        return wg_fail(WGML_ERR_UNSUPPORTED, "profiling is off (set WGML_PROFILE=1)");
    wgml_kernel **list = malloc((ctx->kernels.n + 1) * sizeof *list);
    if (!list)
        return wg_fail(WGML_ERR_OOM, "out of host memory for the profile summary");
    size_t n = 0;
    double total = 0;
    for (size_t i = 0; i < ctx->kernels.cap; i++) {
        wgml_kernel *k = ctx->kernels.slots[i].k;
        if (k && k->prof_count) {
            list[n++] = k;
            total += k->prof_ns;
        }
    }
    qsort(list, n, sizeof *list, by_time);
    fprintf(f, "wgml profile (GPU time, %s):\n", ctx->prof.in_passes ? "timestamps inside passes"
                                                                      : "one pass per dispatch");
    fprintf(f, "  %-48s %10s %12s %10s %6s\n", "kernel", "calls", "total ms", "mean us", "%");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %-48.48s %10llu %12.3f %10.2f %6.1f\n", list[i]->name,
                (unsigned long long)list[i]->prof_count, list[i]->prof_ns * 1e-6,
                list[i]->prof_ns * 1e-3 / (double)list[i]->prof_count,
                total > 0 ? 100.0 * list[i]->prof_ns / total : 0.0);
    fprintf(f, "  %-48s %10s %12.3f\n", "total", "", total * 1e-6);
    if (ctx->prof.span_n)
        fprintf(f, "  GPU span (first stamp to last per batch, barriers and gaps included): %.3f ms over %llu "
                "dispatches, %.2f us each\n", ctx->prof.span_ns * 1e-6, (unsigned long long)ctx->prof.span_n,
                ctx->prof.span_ns * 1e-3 / (double)ctx->prof.span_n);
    free(list);
    return WGML_OK;
}
