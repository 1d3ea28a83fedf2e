/*
 * The command stream.  Dispatches are recorded into one encoder and one
 * compute pass until the host needs data or a resource fills up; then one
 * submit.  Waiting is separate (wg_stream_wait), so a run of ops costs one
 * submit and one wait however many dispatches it has (measured on an H100:
 * ~6 us per dispatch in a pass vs ~66 us per submit+wait).
 *
 * Kernel parameters go to a host shadow of one uniform "ring" buffer and are
 * bound with dynamic offsets; the used part is written with a single
 * writeBuffer right before the submit.  Queue order guarantees the previous
 * submit has consumed the ring before the next write lands, so the ring
 * restarts at 0 every batch without waiting.
 *
 * wg_dispatch validates a dispatch and hands it, as a wg_cmd pointing at
 * the caller's bindings and parameters, to the context's target: normally
 * wg_stream_encode, which encodes it at once (no copy, no allocation), or
 * a recorder (record.c), which copies it.  Bindings (wg_bind_*) live here
 * too: they are what a dispatch is validated against.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BATCH 8192
/* One early submit per wait.  Recorded work reaches the GPU only at a
 * submit, so a batch of big dispatches followed by one wait ran the host's
 * recording and the GPU's execution back to back.  Once the dispatches
 * since the last wait bind KICK_BYTES, the batch is submitted once, and the
 * host records the rest while the GPU runs it.  Streams of small
 * dispatches (a decode step) never reach it.  Submitting more often (a
 * threshold doubling from 64 MiB) was slower on an H100: each submit
 * leaves the GPU idle between command buffers. */
#define KICK_BYTES (16ull << 20)

wgml_status wg_stream_init(wgml_ctx *ctx)
{
    wg_stream *s = &ctx->stream;
    WGPUBufferDescriptor bd = {0};
    bd.label = (WGPUStringView){"wgml params ring", WGPU_STRLEN};
    bd.size = WG_RING_BYTES + WG_PARAMS_MAX;
    bd.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
    s->ring = wgpuDeviceCreateBuffer(ctx->device, &bd);
    s->shadow = calloc(1, WG_RING_BYTES + WG_PARAMS_MAX);
    if (!s->ring || !s->shadow)
        return wg_fail(WGML_ERR_OOM, "could not allocate the parameter ring");
    return WGML_OK;
}

static void bg_clear(wg_bg_entry *e)
{
    if (e->bg)
        wgpuBindGroupRelease(e->bg);
    memset(e, 0, sizeof *e);
}

void wg_stream_release(wgml_ctx *ctx)
{
    wg_stream *s = &ctx->stream;
    if (s->pass) {
        wgpuComputePassEncoderEnd(s->pass);
        wgpuComputePassEncoderRelease(s->pass);
    }
    if (s->enc)
        wgpuCommandEncoderRelease(s->enc);
    for (int i = 0; i < WG_BG_CACHE; i++)
        bg_clear(&s->bg[i]);
    if (s->ring)
        wgpuBufferRelease(s->ring);
    free(s->shadow);
    memset(s, 0, sizeof *s);
}

void wg_stream_forget_buffer(wgml_ctx *ctx, uint64_t id)
{
    for (int i = 0; i < WG_BG_CACHE; i++) {
        wg_bg_entry *e = &ctx->stream.bg[i];
        for (int j = 0; j < e->n && e->bg; j++)
            if (e->ids[j] == id) {
                bg_clear(e);
                break;
            }
    }
}

uint64_t wg_bindings_hash(WGPUBindGroupLayout bgl, const wg_binding *b, int nb)
{
    uint64_t h = wg_hash_bytes(WG_HASH_SEED, &bgl, sizeof bgl);
    for (int i = 0; i < nb; i++) {
        h = wg_hash_bytes(h, &b[i].buffer->id, 8);
        h = wg_hash_bytes(h, &b[i].offset, 8);
        h = wg_hash_bytes(h, &b[i].size, 8);
    }
    return h;
}

WGPUBindGroup wg_bind_group_create(wgml_ctx *ctx, WGPUBindGroupLayout bgl, WGPUBuffer uniform, const wg_binding *b,
                                   int nb)
{
    WGPUBindGroupEntry ent[WG_MAX_BUFFERS + 1];
    memset(ent, 0, sizeof ent);
    ent[0].binding = 0;
    ent[0].buffer = uniform;
    ent[0].offset = 0;
    ent[0].size = WG_PARAMS_MAX;
    for (int i = 0; i < nb; i++) {
        ent[i + 1].binding = (uint32_t)i + 1;
        ent[i + 1].buffer = b[i].buffer->buf;
        ent[i + 1].offset = b[i].offset;
        ent[i + 1].size = b[i].size;
    }
    WGPUBindGroupDescriptor d = {0};
    d.layout = bgl;
    d.entryCount = (size_t)nb + 1;
    d.entries = ent;
    return wgpuDeviceCreateBindGroup(ctx->device, &d);
}

static WGPUBindGroup bind_group(wgml_ctx *ctx, wgml_kernel *k, const wg_binding *b, int nb)
{
    uint64_t h = wg_bindings_hash(k->bgl, b, nb);
    wg_bg_entry *e = &ctx->stream.bg[h & (WG_BG_CACHE - 1)];
    if (e->bg && e->hash == h && e->bgl == k->bgl && e->n == nb) {
        bool same = true;
        for (int i = 0; i < nb && same; i++)
            same = e->ids[i] == b[i].buffer->id && e->offs[i] == b[i].offset && e->sizes[i] == b[i].size;
        if (same) {
            ctx->stats.bind_group_hits++;
            return e->bg;
        }
    }
    ctx->stats.bind_group_misses++;
    bg_clear(e);
    for (int i = 0; i < nb; i++) {
        e->ids[i] = b[i].buffer->id;
        e->offs[i] = b[i].offset;
        e->sizes[i] = b[i].size;
    }
    e->bg = wg_bind_group_create(ctx, k->bgl, ctx->stream.ring, b, nb);
    e->hash = h;
    e->bgl = k->bgl;
    e->n = nb;
    return e->bg;
}

/* ------------------------------------------------------------ bindings */

static uint64_t max_binding(const wgml_ctx *ctx)
{
    /* Windows start at minStorageBufferOffsetAlignment multiples; keeping
     * their size a multiple of 256 keeps vec4 copies aligned too. */
    return wg_align_down(ctx->binding_cap, 256);
}

uint64_t wg_window_cap(const wgml_ctx *ctx) { return max_binding(ctx) - 256; }

wg_binding wg_bind_all(wgml_buffer *b)
{
    wg_binding r = {b, 0, b->alloc};
    return r;
}

wg_binding wg_bind_from(wgml_buffer *b, uint64_t offset, uint64_t want, uint64_t *rem)
{
    const wgml_ctx *ctx = b->ctx;
    uint64_t start = wg_align_down(offset, ctx->limits.minStorageBufferOffsetAlignment);
    uint64_t size = wg_align_up(offset - start + want, 4);
    uint64_t cap = max_binding(ctx);
    if (size > cap)
        size = cap;
    if (size > b->alloc - start)
        size = b->alloc - start;
    *rem = offset - start;
    wg_binding r = {b, start, size};
    return r;
}

void wg_split_grid(uint32_t max_dim, uint64_t groups, uint32_t out[3])
{
    if (groups <= max_dim) {
        out[0] = (uint32_t)groups;
        out[1] = out[2] = 1;
        return;
    }
    uint64_t y = (groups + max_dim - 1) / max_dim, z = 1;
    if (y > max_dim) {
        z = (y + max_dim - 1) / max_dim;
        y = (groups + (uint64_t)max_dim * z - 1) / ((uint64_t)max_dim * z);
    }
    /* Spread evenly so the overshoot past `groups` stays under one row. */
    uint64_t x = (groups + y * z - 1) / (y * z);
    out[0] = (uint32_t)x;
    out[1] = (uint32_t)y;
    out[2] = (uint32_t)z;
}

WGPUCommandEncoder wg_stream_encoder(wgml_ctx *ctx)
{
    wg_stream *s = &ctx->stream;
    if (s->pass) {
        wgpuComputePassEncoderEnd(s->pass);
        wgpuComputePassEncoderRelease(s->pass);
        s->pass = NULL;
    }
    if (!s->enc) {
        WGPUCommandEncoderDescriptor d = {0};
        s->enc = wgpuDeviceCreateCommandEncoder(ctx->device, &d);
    }
    return s->enc;
}

static void open_pass(wgml_ctx *ctx, const WGPUPassTimestampWrites *tw)
{
    wg_stream *s = &ctx->stream;
    WGPUCommandEncoder enc = wg_stream_encoder(ctx);
    WGPUComputePassDescriptor pd = {0};
    pd.timestampWrites = tw;
    s->pass = wgpuCommandEncoderBeginComputePass(enc, &pd);
}

WGPUComputePassEncoder wg_stream_pass(wgml_ctx *ctx)
{
    if (!ctx->stream.pass)
        open_pass(ctx, NULL);
    return ctx->stream.pass;
}

const char *wg_last_dispatch(const wgml_ctx *ctx) { return ctx->last_dispatch; }

void wg_stream_set_target(wgml_ctx *ctx, wg_cmd_target fn, void *data)
{
    ctx->target = fn ? fn : wg_stream_encode;
    ctx->target_data = fn ? data : NULL;
}

bool wg_recording_active(const wgml_ctx *ctx) { return ctx->target != wg_stream_encode; }

wgml_status wg_stream_not_recording(wgml_ctx *ctx, const char *what)
{
    if (!wg_recording_active(ctx))
        return WGML_OK;
    return wg_fail(WGML_ERR_UNSUPPORTED, "%s cannot be recorded: a recorder is active and only dispatches "
                   "are recorded (end it first)", what);
}

wgml_status wg_stream_put(wgml_ctx *ctx, const wg_cmd *c) { return ctx->target(ctx, ctx->target_data, c); }

/* Whether name contains one of the comma-separated strings of list
 * (WGML_SKIP_KERNELS, context.c). */
static bool skipped(const char *list, const char *name)
{
    char tok[96];
    for (const char *s = list; *s;) {
        size_t n = strcspn(s, ",");
        if (n && n < sizeof tok) {
            memcpy(tok, s, n);
            tok[n] = 0;
            if (strstr(name, tok))
                return true;
        }
        s += n + (s[n] == ',');
    }
    return false;
}

wgml_status wg_dispatch(wgml_ctx *ctx, wgml_kernel *k, const wg_binding *b, int nb,
                        const void *params, size_t psize, uint32_t gx, uint32_t gy, uint32_t gz)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!k || nb != k->n_buffers || psize > WG_PARAMS_MAX || (psize && !params))
        return wg_fail(WGML_ERR_INVALID_ARG, "dispatch of '%s': %d buffers given, %d expected; %zu param bytes (max %d)",
                       k ? k->name : "(null)", nb, k ? k->n_buffers : 0, psize, WG_PARAMS_MAX);
    for (int i = 0; i < nb; i++)
        if (!b[i].buffer || b[i].size == 0 || b[i].size > ctx->limits.maxStorageBufferBindingSize)
            return wg_fail(WGML_ERR_LIMIT, "dispatch of '%s': binding %d is empty or larger than "
                           "maxStorageBufferBindingSize (%llu bytes)", k->name, i,
                           (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    /* A binding outside its buffer, or misaligned, fails WebGPU validation,
     * and wgpu-native reports validation errors found at submit by aborting
     * the process: every binding is proved in range here first.  (A shape
     * whose byte size wrapped 64 bits once reached this point with a 2-byte
     * buffer and killed the process in wgpuQueueSubmit.) */
    for (int i = 0; i < nb; i++) {
        const wg_binding *x = &b[i];
        if (x->buffer->ctx != ctx || x->offset % ctx->limits.minStorageBufferOffsetAlignment || x->size % 4 ||
            x->offset > x->buffer->alloc || x->size > x->buffer->alloc - x->offset)
            return wg_fail(WGML_ERR_INTERNAL, "dispatch of '%s': binding %d [%llu, +%llu) is outside its %llu-byte "
                           "buffer, misaligned or from another context (refused: WebGPU would abort)", k->name, i,
                           (unsigned long long)x->offset, (unsigned long long)x->size,
                           (unsigned long long)x->buffer->alloc);
    }
    /* A buffer bound read-only and writable in one dispatch is a WebGPU
     * usage conflict, and wgpu-native reports errors found at submit by
     * aborting the process: refuse it here instead. */
    for (int i = 0; i < nb; i++)
        for (int j = i + 1; j < nb; j++)
            if (b[i].buffer == b[j].buffer && ((k->readonly_mask >> i) & 1) != ((k->readonly_mask >> j) & 1))
                return wg_fail(WGML_ERR_INVALID_ARG, "dispatch of '%s': bindings %d and %d are one buffer, "
                               "read-only and writable", k->name, i, j);
    ctx->last_dispatch = k->name;
    if (gx == 0 || gy == 0 || gz == 0 || (ctx->skip_kernels && skipped(ctx->skip_kernels, k->name)))
        return WGML_OK;
    uint32_t maxd = ctx->limits.maxComputeWorkgroupsPerDimension;
    wg_cmd c = {k, b, nb, params, psize, {gx, gy, gz}};
    if (gx > ctx->grid_fold && gy == 1 && gz == 1)
        wg_split_grid(ctx->grid_fold, gx, c.grid);
    else if (gx > maxd || gy > maxd || gz > maxd)
        return wg_fail(WGML_ERR_LIMIT, "dispatch of '%s': grid %ux%ux%u exceeds %u per dimension "
                       "(only 1-D grids are folded)", k->name, gx, gy, gz, maxd);
    /* The target is a function pointer, not a branch on "recording?", so
     * a later target (a graph executor's) plugs in without touching this. */
    return ctx->target(ctx, ctx->target_data, &c);
}

wgml_status wg_stream_encode(wgml_ctx *ctx, void *unused, const wg_cmd *c)
{
    (void)unused;
    wgml_status st;
    wgml_kernel *k = c->kernel;
    const wg_binding *b = c->b;
    int nb = c->nb;
    wg_stream *s = &ctx->stream;
    uint32_t align = ctx->limits.minUniformBufferOffsetAlignment;
    uint32_t off = (uint32_t)wg_align_up(s->ring_used, align);
    if (off + WG_PARAMS_MAX > WG_RING_BYTES || s->pending >= MAX_BATCH ||
        (ctx->prof.on && ctx->prof.used >= ctx->prof.cap)) {
        if ((st = wg_stream_submit(ctx)) != WGML_OK)
            return st;
        off = 0;
    }
    if (c->psize)
        memcpy(s->shadow + off, c->params, c->psize);
    s->ring_used = off + (uint32_t)(c->psize ? wg_align_up(c->psize, 4) : 4);

    WGPUBindGroup bg = bind_group(ctx, k, b, nb);
    /* The error word is read back at the next sync only when something
     * bound it (an index op, or a replay of one). */
    for (int i = 0; i < nb; i++)
        if (b[i].buffer == ctx->errw.buf)
            ctx->errw.dirty = true;
    const WGPUPassTimestampWrites *tw = wg_profile_pass_writes(ctx, k);
    if (tw) {
        wg_stream_encoder(ctx); /* one pass per dispatch to time it */
        open_pass(ctx, tw);
    } else if (!s->pass) {
        open_pass(ctx, NULL);
    }
    wg_profile_begin(ctx, k, s->pass);
    wgpuComputePassEncoderSetPipeline(s->pass, k->pipeline);
    wgpuComputePassEncoderSetBindGroup(s->pass, 0, bg, 1, &off);
    wgpuComputePassEncoderDispatchWorkgroups(s->pass, c->grid[0], c->grid[1], c->grid[2]);
    wg_profile_end(ctx, s->pass);
    if (tw)
        wg_stream_encoder(ctx);
    s->pending++;
    ctx->stats.dispatches++;
    for (int i = 0; i < nb; i++)
        s->since_wait += b[i].size;
    if (!s->kicked && !ctx->prof.on && s->since_wait >= KICK_BYTES) {
        s->kicked = true;
        return wg_stream_submit(ctx);
    }
    return WGML_OK;
}

wgml_status wg_stream_submit(wgml_ctx *ctx)
{
    wg_stream *s = &ctx->stream;
    if (!s->enc)
        return WGML_OK;
    if (ctx->lost) /* wgpu-native aborts the process on a submit to a lost device */
        return wg_check(ctx);
    WGPUCommandEncoder enc = wg_stream_encoder(ctx);
    wg_profile_resolve(ctx, enc);
    WGPUCommandBufferDescriptor cd = {0};
    WGPUCommandBuffer cb = wgpuCommandEncoderFinish(enc, &cd);
    wgpuCommandEncoderRelease(enc);
    s->enc = NULL;
    if (s->ring_used)
        wgpuQueueWriteBuffer(ctx->queue, s->ring, 0, s->shadow, wg_align_up(s->ring_used, 4));
    wgpuQueueSubmit(ctx->queue, 1, &cb);
    wgpuCommandBufferRelease(cb);
    s->ring_used = 0;
    s->pending = 0;
    ctx->stats.submits++;
    /* Timestamp results share one readback buffer: collect them before the
     * next batch can overwrite it. */
    if (ctx->prof.on && ctx->prof.used)
        return wg_stream_wait(ctx);
    return wg_check(ctx);
}

static void on_done(WGPUQueueWorkDoneStatus status, WGPUStringView msg, void *u1, void *u2)
{
    (void)status, (void)msg;
    wgml_ctx *ctx = u1;
    uint64_t t = (uint64_t)(uintptr_t)u2;
    if (t > ctx->fence_done)
        ctx->fence_done = t;
}

wgml_status wg_fence_issue(wgml_ctx *ctx, uint64_t *ticket)
{
    wgml_status st = wg_stream_submit(ctx);
    if (st != WGML_OK)
        return st;
    uint64_t t = ++ctx->fence_issued;
    WGPUQueueWorkDoneCallbackInfo ci = {0};
    ci.mode = WGPUCallbackMode_AllowProcessEvents;
    ci.callback = on_done;
    ci.userdata1 = ctx;
    ci.userdata2 = (void *)(uintptr_t)t;
    wgpuQueueOnSubmittedWorkDone(ctx->queue, ci);
    *ticket = t;
    return wg_check(ctx);
}

bool wg_fence_done(wgml_ctx *ctx, uint64_t ticket)
{
    if (ctx->fence_done < ticket && !ctx->lost) {
        wg_native_poll(ctx->device, false);
        wgpuInstanceProcessEvents(ctx->instance);
    }
    return ctx->fence_done >= ticket || ctx->lost;
}

/* WGML_SPIN_US=n: waiting spins for up to n us on a queue work-done
 * callback (wg_fence_issue) before it blocks.  A blocking poll sleeps on
 * the driver's fence and wakes late: on the H100, flush+wait took 83 us
 * blocking and 48 us spinning, and a replayed decode-shaped block 129 us
 * against 95 (bench/NOTES.md).  The spin does not trust the non-blocking
 * poll's "queue empty" answer: on the H100 that answer came back true
 * before the GPU had finished (with it, bench ops timed 7 TB/s copies on
 * a 3.35 TB/s device); with the callback, copies stay at 2.80 TB/s.
 * Default 1000 us on GPUs, 0 on CPU adapters (lavapipe), whose GPU work
 * runs on the driver's threads, which a spinning core would starve. */
#define WG_SPIN_US 1000.0

wgml_status wg_stream_wait(wgml_ctx *ctx)
{
    if (!ctx->lost) {
        const char *e = getenv("WGML_SPIN_US");
        double spin = e ? atof(e) : !wg_is_cpu(ctx) ? WG_SPIN_US : 0.0;
        uint64_t ticket = 0;
        bool done = false;
        if (spin > 0 && wg_fence_issue(ctx, &ticket) == WGML_OK) {
            double t0 = wg_now_s();
            while (!(done = wg_fence_done(ctx, ticket)) && (wg_now_s() - t0) * 1e6 < spin)
                ;
        }
        if (!done && !ctx->lost)
            wg_native_poll(ctx->device, true);
    }
    ctx->stream.since_wait = 0;
    ctx->stream.kicked = false;
    ctx->stats.waits++;
    wg_profile_collect(ctx);
    return wg_check(ctx);
}

wgml_status wgml_dispatch(wgml_ctx *ctx, wgml_kernel *k, wgml_buffer *const *buffers, int n,
                          const void *params, size_t psize, uint32_t gx, uint32_t gy, uint32_t gz)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!k || k->ctx != ctx || (n && !buffers))
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_dispatch: bad kernel or buffer list");
    if (n != k->n_buffers) /* before reading the list: it may be shorter */
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_dispatch of '%s': %d buffers given, %d expected", k->name, n,
                       k->n_buffers);
    wg_binding b[WG_MAX_BUFFERS];
    for (int i = 0; i < n; i++) {
        if (!buffers[i] || buffers[i]->ctx != ctx)
            return wg_fail(WGML_ERR_INVALID_ARG, "wgml_dispatch: buffer %d is NULL or from another context", i);
        b[i] = wg_bind_all(buffers[i]);
    }
    return wg_dispatch(ctx, k, b, n, params, psize, gx, gy, gz);
}
