/*
 * The context's lifecycle: create opens the device (device.c) and builds
 * what lives on it — the stream, the profiler, the test knobs — and
 * destroy tears it down in the reverse order (profile, stream, kernels,
 * pools, device).  Living above every other runtime file, this is the one
 * place that calls them all, so the others never call back up into it.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static bool env_true(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* The number in variable `name` when it lies in [lo, limit), else limit. */
static uint64_t env_below(const char *name, uint64_t lo, uint64_t limit)
{
    const char *v = getenv(name);
    uint64_t n = v && *v ? strtoull(v, NULL, 10) : 0;
    return n >= lo && n < limit ? n : limit;
}

wgml_status wgml_ctx_create(const wgml_ctx_options *o, wgml_ctx **out)
{
    if (!out)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_ctx_create: out is NULL");
    *out = NULL;
    wgml_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return wg_fail(WGML_ERR_OOM, "out of host memory");
    ctx->shader_checks = (o && o->shader_checks) || env_true("WGML_SHADER_CHECKS");
    ctx->prof.on = (o && o->profile) || env_true("WGML_PROFILE");
    ctx->next_buffer_id = 1;
    wg_stream_set_target(ctx, NULL, NULL);

    wgml_status st = wg_device_open(ctx, o);
    if (st == WGML_OK) {
        /* Test knobs that shrink what one dispatch sees, so rare paths run
         * on small tensors: WGML_FOLD_GRID=N folds 1-D grids above N
         * workgroups (not the device's limit); WGML_MAX_BINDING=bytes
         * (>= 4096) walks buffers in windows of at most that size. */
        ctx->grid_fold = (uint32_t)env_below("WGML_FOLD_GRID", 1, ctx->limits.maxComputeWorkgroupsPerDimension);
        ctx->binding_cap = env_below("WGML_MAX_BINDING", 4096, ctx->limits.maxStorageBufferBindingSize);
        const char *pool = getenv("WGML_POOL_MB");
        ctx->pool_cap = (pool && *pool ? (uint64_t)strtoull(pool, NULL, 10) : 1024) << 20;
        /* WGML_SKIP_KERNELS=a,b: dispatches of kernels whose names contain
         * one of the comma-separated strings are dropped (wg_dispatch).  A
         * probe for where decode time goes: a step's time less the same
         * step without a kernel is that kernel's real cost in the stream,
         * which timestamps (~5 us a dispatch on an H100) blur.  Results are
         * wrong while it is set. */
        const char *skip = getenv("WGML_SKIP_KERNELS");
        ctx->skip_kernels = skip && *skip ? skip : NULL;
        st = wg_stream_init(ctx);
    }
    if (st == WGML_OK)
        st = wg_errword_init(ctx);
    if (st == WGML_OK)
        st = wg_tickets_init(ctx);
    if (st == WGML_OK && ctx->prof.on)
        st = wg_profile_init(ctx);
    if (st != WGML_OK) {
        wgml_ctx_destroy(ctx);
        return st;
    }
    *out = ctx;
    return WGML_OK;
}

void wgml_ctx_destroy(wgml_ctx *ctx)
{
    if (!ctx)
        return;
    wg_stream_set_target(ctx, NULL, NULL); /* a recorder left active records nothing more */
    if (ctx->device && !ctx->lost) {
        wg_stream_submit(ctx);
        wg_native_poll(ctx->device, true);
        /* completion callbacks (wg_fence_issue) point at ctx: run them now */
        wgpuInstanceProcessEvents(ctx->instance);
        if (ctx->prof.on)
            wgml_profile_print(ctx, stderr);
    }
    ctx->destroying = true;
    wg_profile_release(ctx);
    wg_errword_release(ctx);
    wg_stream_release(ctx);
    wg_kernels_release(ctx);
    wg_pool_release(ctx);
    wg_staging_release(ctx);
    wg_device_close(ctx);
    free(ctx);
}

void wgml_ctx_destroy_device(wgml_ctx *ctx)
{
    if (!ctx || ctx->lost || !ctx->device)
        return;
    wg_stream_submit(ctx);
    wg_native_poll(ctx->device, true);
    ctx->lost = true;
    snprintf(ctx->async_msg, sizeof ctx->async_msg, "the device was destroyed by wgml_ctx_destroy_device");
    wgpuDeviceDestroy(ctx->device);
}

wgml_status wgml_ctx_flush(wgml_ctx *ctx)
{
    wgml_status st = wg_check(ctx);
    if (st == WGML_OK)
        st = wg_stream_not_recording(ctx, "wgml_ctx_flush: a flush");
    return st != WGML_OK ? st : wg_stream_submit(ctx);
}

wgml_status wgml_ctx_sync(wgml_ctx *ctx)
{
    wgml_status st = wg_check(ctx);
    if (st == WGML_OK)
        st = wg_stream_not_recording(ctx, "wgml_ctx_sync: a wait for the GPU");
    if (st != WGML_OK)
        return st;
    wg_errword_stage(ctx); /* rides on this submit: no extra wait */
    st = wg_stream_submit(ctx);
    if (st == WGML_OK)
        st = wg_stream_wait(ctx);
    wgml_status es = wg_errword_report(ctx); /* also after a failure: unmaps, clears */
    return st != WGML_OK ? st : es;
}

wgml_status wgml_device_info_get(wgml_ctx *ctx, wgml_device_info *out)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!out)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_device_info_get: out is NULL");
    if (!ctx->subgroup_measured && wg_has(ctx, WGML_FEATURE_SUBGROUPS)) {
        st = wg_measure_subgroup(ctx);
        if (st != WGML_OK)
            return st;
    }
    *out = ctx->info;
    return WGML_OK;
}

wgml_status wgml_ctx_stats_get(wgml_ctx *ctx, wgml_ctx_stats *out)
{
    if (!ctx || !out)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_ctx_stats_get: NULL argument");
    *out = ctx->stats;
    return WGML_OK;
}

wgml_status wg_measure_subgroup(wgml_ctx *ctx)
{
    static const wg_kernel_ref ref = {"probe.wgsl", "subgroup_size", NULL, 1, 0};
    wgml_kernel *k;
    wgml_buffer *b;
    wgml_status st = wg_stream_not_recording(ctx, "measuring the subgroup size");
    if (st != WGML_OK)
        return st;
    st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return wg_failp(st, "measuring the subgroup size");
    st = wgml_buffer_create(ctx, 16, &b);
    if (st != WGML_OK)
        return st;
    wg_binding bind = wg_bind_all(b);
    uint32_t v[4] = {0};
    st = wg_dispatch(ctx, k, &bind, 1, NULL, 0, 1, 1, 1);
    if (st == WGML_OK)
        st = wgml_buffer_read(b, 0, v, sizeof v);
    wgml_buffer_destroy(b);
    if (st == WGML_OK) {
        ctx->info.subgroup_size = v[0];
        ctx->subgroup_measured = true;
    }
    return st;
}
