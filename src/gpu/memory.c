/*
 * Device memory: buffers checked against the device's limits, uploads that
 * stay ordered with recorded work, downloads through a reused staging pool,
 * and fill/copy by kernels.  Ranges larger than one storage binding
 * (maxStorageBufferBindingSize) are walked in binding-sized windows.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STAGING_MIN (64u << 10)
#define STAGING_MAX (64u << 20)

uint64_t wg_buffer_alloc(const wgml_buffer *b) { return b->alloc; }

const char *wg_window_str(const wgml_ctx *ctx, char *buf, size_t n)
{
    if (ctx->binding_cap < ctx->limits.maxStorageBufferBindingSize)
        snprintf(buf, n, "the %llu-byte storage binding window (WGML_MAX_BINDING)",
                 (unsigned long long)ctx->binding_cap);
    else
        snprintf(buf, n, "the %llu-byte storage binding (maxStorageBufferBindingSize)",
                 (unsigned long long)ctx->binding_cap);
    return buf;
}

wgml_status wg_fail_window(const wgml_ctx *ctx, uint64_t bytes, const char *fmt, ...)
{
    char what[512], win[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return wg_fail(WGML_ERR_LIMIT, "%s spans %llu bytes, more than fits in %s", what, (unsigned long long)bytes,
                   wg_window_str(ctx, win, sizeof win));
}


static wgml_status check_range(const wgml_buffer *b, uint64_t off, uint64_t size, const char *fn)
{
    if (!b)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: buffer is NULL", fn);
    if (off > b->size || size > b->size - off)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: range [%llu, +%llu) is outside the %llu-byte buffer", fn,
                       (unsigned long long)off, (unsigned long long)size, (unsigned long long)b->size);
    return wg_check(b->ctx);
}

/* ------------------------------------------------------------ pool */

void wg_pool_release(wgml_ctx *ctx)
{
    for (int i = 0; i < WG_POOL_SLOTS; i++)
        if (ctx->pool[i].buf) {
            wgpuBufferRelease(ctx->pool[i].buf);
            ctx->pool[i].buf = NULL;
        }
    ctx->pool_bytes = 0;
}

void wg_staging_release(wgml_ctx *ctx)
{
    for (int i = 0; i < WG_STAGING_SLOTS; i++)
        if (ctx->staging[i].buf) {
            wgpuBufferRelease(ctx->staging[i].buf);
            ctx->staging[i].buf = NULL;
        }
}

static WGPUBuffer pool_take(wgml_ctx *ctx, uint64_t alloc)
{
    for (int i = 0; i < WG_POOL_SLOTS; i++)
        if (ctx->pool[i].buf && ctx->pool[i].alloc == alloc) {
            WGPUBuffer b = ctx->pool[i].buf;
            ctx->pool[i].buf = NULL;
            ctx->pool_bytes -= alloc;
            return b;
        }
    return NULL;
}

/* Keeps b's memory for reuse, evicting the least recently pooled buffers
 * to stay within pool_cap; false if it does not fit at all. */
static bool pool_put(wgml_ctx *ctx, WGPUBuffer b, uint64_t alloc)
{
    if (alloc > ctx->pool_cap || ctx->destroying)
        return false;
    for (;;) {
        int free_slot = -1, oldest = -1;
        for (int i = 0; i < WG_POOL_SLOTS; i++) {
            if (!ctx->pool[i].buf)
                free_slot = free_slot < 0 ? i : free_slot;
            else if (oldest < 0 || ctx->pool[i].tick < ctx->pool[oldest].tick)
                oldest = i;
        }
        if (free_slot >= 0 && ctx->pool_bytes + alloc <= ctx->pool_cap) {
            ctx->pool[free_slot].buf = b;
            ctx->pool[free_slot].alloc = alloc;
            ctx->pool[free_slot].tick = ++ctx->pool_tick;
            ctx->pool_bytes += alloc;
            return true;
        }
        wgpuBufferRelease(ctx->pool[oldest].buf);
        ctx->pool_bytes -= ctx->pool[oldest].alloc;
        ctx->pool[oldest].buf = NULL;
    }
}

static wgml_status fill_range(wgml_buffer *b, uint64_t off, uint64_t size, uint32_t pattern);

/* ------------------------------------------------------------ buffers */

/* A storage buffer of `alloc` bytes (asked: `size`) under an error scope:
 * WGML_ERR_OOM or the device's error, and *out NULL, when it fails. */
static wgml_status device_buffer(wgml_ctx *ctx, uint64_t alloc, uint64_t size, WGPUBuffer *out)
{
    WGPUBufferDescriptor d = {0};
    d.size = alloc;
    d.usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
    wg_scope_push(ctx);
    *out = wgpuDeviceCreateBuffer(ctx->device, &d);
    char what[96];
    snprintf(what, sizeof what, "allocating %llu bytes", (unsigned long long)size);
    wgml_status st = wg_scope_pop(ctx, WGML_ERR_DEVICE, what);
    if (st == WGML_OK && !*out)
        st = wg_fail(WGML_ERR_OOM, "%s: the device returned no buffer", what);
    if (st != WGML_OK && *out) {
        wgpuBufferRelease(*out);
        *out = NULL;
    }
    return st;
}

wgml_status wgml_buffer_create(wgml_ctx *ctx, uint64_t size, wgml_buffer **out)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!out)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_buffer_create: out is NULL");
    *out = NULL;
    if (size > ctx->limits.maxBufferSize)
        return wg_fail(WGML_ERR_LIMIT, "buffer of %llu bytes exceeds the device's maxBufferSize (%llu bytes)",
                       (unsigned long long)size, (unsigned long long)ctx->limits.maxBufferSize);
    wgml_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return wg_fail(WGML_ERR_OOM, "out of host memory");
    b->ctx = ctx;
    b->refs = 1;
    b->size = size;
    /* >= 4 bytes for bindings; 16-byte multiples let vec4 kernels bind
     * whole vectors at the end of a tensor. */
    b->alloc = wg_align_up(size ? size : 16, 16);
    if (b->alloc > ctx->limits.maxBufferSize)
        b->alloc = wg_align_up(size, 4) <= ctx->limits.maxBufferSize ? wg_align_up(size, 4) : size;
    b->id = ctx->next_buffer_id++;
    /* The contract is zeroed memory.  A pooled buffer is zeroed by a fill
     * in the stream (recorded work still using its previous life runs
     * before it), even while recording, as the buffer may be used eagerly
     * after the recording; and every buffer made while recording gets a
     * recorded fill too, since each replay must find it zeroed again, not
     * holding the previous replay's results. */
    if ((b->buf = pool_take(ctx, b->alloc)) != NULL) {
        ctx->stats.buffers_reused++;
        wg_cmd_target target = ctx->target;
        void *data = ctx->target_data;
        wg_stream_set_target(ctx, NULL, NULL);
        st = fill_range(b, 0, b->alloc, 0);
        wg_stream_set_target(ctx, target, data);
    } else {
        st = device_buffer(ctx, b->alloc, size, &b->buf);
        if (st == WGML_ERR_OOM && ctx->pool_bytes) {
            /* the pool may hold the memory needed: give it back and retry */
            wg_pool_release(ctx);
            st = device_buffer(ctx, b->alloc, size, &b->buf);
        }
    }
    if (st == WGML_OK && wg_recording_active(ctx))
        st = fill_range(b, 0, b->alloc, 0);
    if (st != WGML_OK) {
        if (b->buf)
            wgpuBufferRelease(b->buf);
        free(b);
        return st;
    }
    *out = b;
    return WGML_OK;
}

void wg_buffer_retain(wgml_buffer *b) { b->refs++; }

void wgml_buffer_destroy(wgml_buffer *b)
{
    if (!b || --b->refs > 0)
        return;
    wg_stream_forget_buffer(b->ctx, b->id);
    /* Pooled or released, never destroyed: work already recorded may
     * still read it (wgpu frees released memory once that work is done). */
    if (b->buf && !pool_put(b->ctx, b->buf, b->alloc))
        wgpuBufferRelease(b->buf);
    free(b);
}

uint64_t wgml_buffer_size(const wgml_buffer *b) { return b ? b->size : 0; }

/* ------------------------------------------------------------ fill */

static wgml_kernel *kernel_or_null(wgml_ctx *ctx, const wg_kernel_ref *ref, wgml_status *st)
{
    wgml_kernel *k = NULL;
    *st = wg_kernel_get(ctx, ref, &k);
    return k;
}

static wgml_status fill_range(wgml_buffer *b, uint64_t off, uint64_t size, uint32_t pattern)
{
    static const wg_kernel_ref ref = {"fill.wgsl", "fill", NULL, 1, 0};
    wgml_ctx *ctx = b->ctx;
    wgml_status st;
    wgml_kernel *k = kernel_or_null(ctx, &ref, &st);
    if (!k)
        return st;
    /* Rotate the pattern so byte (addr % 4) lands on byte addr. */
    uint64_t end = off + size;
    while (off < end) {
        uint64_t rem;
        wg_binding bind = wg_bind_from(b, off, end - off, &rem);
        uint64_t n = end - off < bind.size - rem ? end - off : bind.size - rem;
        uint32_t prm[5];
        prm[0] = (uint32_t)(rem / 4);
        prm[1] = (uint32_t)((rem + n + 3) / 4 - rem / 4);
        prm[2] = (uint32_t)rem;
        prm[3] = (uint32_t)(rem + n);
        prm[4] = pattern; /* binding offsets are multiples of 4: no rotation */
        uint64_t groups = (prm[1] + 1023) / 1024;
        if ((st = wg_dispatch(ctx, k, &bind, 1, prm, sizeof prm, (uint32_t)groups, 1, 1)) != WGML_OK)
            return st;
        off += n;
    }
    return WGML_OK;
}

wgml_status wgml_buffer_fill(wgml_buffer *b, uint64_t off, uint64_t size, uint32_t pattern)
{
    wgml_status st = check_range(b, off, size, "wgml_buffer_fill");
    if (st != WGML_OK || size == 0)
        return st;
    return fill_range(b, off, size, pattern);
}

/* ------------------------------------------------------------ upload */

/* Pattern whose byte (a % 4) is src byte a - off, for bytes [lo, hi). */
static uint32_t bytes_pattern(const uint8_t *src, uint64_t off, uint64_t lo, uint64_t hi)
{
    uint32_t p = 0;
    for (uint64_t a = lo; a < hi; a++)
        p |= (uint32_t)src[a - off] << (8 * (a % 4));
    return p;
}

wgml_status wgml_buffer_write(wgml_buffer *b, uint64_t off, const void *src, uint64_t size)
{
    wgml_status st = check_range(b, off, size, "wgml_buffer_write");
    if (st != WGML_OK || size == 0)
        return st;
    if (!src)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_buffer_write: src is NULL");
    wgml_ctx *ctx = b->ctx;
    if ((st = wg_stream_not_recording(ctx, "wgml_buffer_write: an upload")) != WGML_OK)
        return st;
    /* writeBuffer is ordered against submits, not against work still being
     * recorded: submit that work first so the write lands after it. */
    if (ctx->stream.enc && (st = wg_stream_submit(ctx)) != WGML_OK)
        return st;
    const uint8_t *s = src;
    uint64_t end = off + size;
    uint64_t a0 = wg_align_up(off, 4), a1 = wg_align_down(end, 4);
    uint64_t head_end = a0 < end ? a0 : end;
    if (a1 > a0) {
        /* Chunks keep wgpu's internal staging copy bounded. */
        for (uint64_t p = a0; p < a1;) {
            uint64_t n = a1 - p < (256u << 20) ? a1 - p : (256u << 20);
            wgpuQueueWriteBuffer(ctx->queue, b->buf, p, s + (p - off), n);
            p += n;
        }
    }
    if (head_end > off && (st = fill_range(b, off, head_end - off, bytes_pattern(s, off, off, head_end))) != WGML_OK)
        return st;
    uint64_t tail = a1 > head_end ? a1 : head_end;
    if (end > tail && (st = fill_range(b, tail, end - tail, bytes_pattern(s, off, tail, end))) != WGML_OK)
        return st;
    ctx->stats.bytes_uploaded += size;
    return wg_check(ctx);
}

/* ------------------------------------------------------------ download */

static wg_staging *staging_get(wgml_ctx *ctx, uint64_t size, wgml_status *st)
{
    wg_staging *pick = NULL;
    for (int i = 0; i < WG_STAGING_SLOTS; i++) {
        wg_staging *s = &ctx->staging[i];
        if (s->buf && s->size >= size && (!pick || s->size < pick->size))
            pick = s;
    }
    if (pick)
        return pick;
    /* Replace an empty slot, else the smallest. */
    pick = &ctx->staging[0];
    for (int i = 0; i < WG_STAGING_SLOTS; i++) {
        wg_staging *s = &ctx->staging[i];
        if (!s->buf || s->size < pick->size)
            pick = s;
        if (!s->buf)
            break;
    }
    if (pick->buf)
        wgpuBufferRelease(pick->buf);
    uint64_t n = STAGING_MIN;
    while (n < size)
        n *= 2;
    WGPUBufferDescriptor d = {0};
    d.size = n;
    d.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    pick->buf = wgpuDeviceCreateBuffer(ctx->device, &d);
    pick->size = n;
    if (!pick->buf) {
        pick->size = 0;
        *st = wg_fail(WGML_ERR_OOM, "could not allocate a %llu-byte staging buffer", (unsigned long long)n);
        return NULL;
    }
    return pick;
}

static void on_map(WGPUMapAsyncStatus status, WGPUStringView msg, void *u1, void *u2)
{
    (void)msg; (void)u2;
    *(volatile int *)u1 = status == WGPUMapAsyncStatus_Success ? 1 : 2;
}

wgml_status wgml_buffer_read(wgml_buffer *b, uint64_t off, void *dst, uint64_t size)
{
    wgml_status st = check_range(b, off, size, "wgml_buffer_read");
    if (st == WGML_OK)
        st = wg_stream_not_recording(b->ctx, "wgml_buffer_read: a read-back");
    if (st != WGML_OK)
        return st;
    wgml_ctx *ctx = b->ctx;
    if (size && !dst)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_buffer_read: dst is NULL");
    /* A read is a sync: index errors found on the device since the last
     * one are reported here, the error word's copy riding on this submit. */
    wg_errword_stage(ctx);
    if (size == 0) { /* waits all the same, as a read of data would */
        st = wg_stream_submit(ctx);
        if (st == WGML_OK)
            st = wg_stream_wait(ctx);
        wgml_status es = wg_errword_report(ctx);
        return st != WGML_OK ? st : es;
    }
    uint8_t *d = dst;
    uint64_t end = off + size;
    for (uint64_t p = wg_align_down(off, 4); p < end;) {
        uint64_t n = wg_align_up(end, 4) - p;
        if (n > STAGING_MAX)
            n = STAGING_MAX;
        wg_staging *sg = staging_get(ctx, n, &st);
        if (!sg)
            return st;
        WGPUCommandEncoder enc = wg_stream_encoder(ctx);
        wgpuCommandEncoderCopyBufferToBuffer(enc, b->buf, p, sg->buf, 0, n);
        if ((st = wg_stream_submit(ctx)) != WGML_OK)
            return st;
        volatile int done = 0;
        WGPUBufferMapCallbackInfo ci = {0};
        ci.mode = WGPUCallbackMode_AllowProcessEvents;
        ci.callback = on_map;
        ci.userdata1 = (void *)&done;
        wgpuBufferMapAsync(sg->buf, WGPUMapMode_Read, 0, n, ci);
        ctx->stats.waits++;
        if (!wg_wait_flag(ctx, &done, 120.0))
            return wg_fail(WGML_ERR_TIMEOUT, "reading back %llu bytes: no answer in 120 s", (unsigned long long)n);
        if (done != 1) {
            if ((st = wg_check(ctx)) != WGML_OK)
                return st;
            return wg_fail(WGML_ERR_DEVICE, "reading back %llu bytes: mapping the staging buffer failed",
                           (unsigned long long)n);
        }
        const uint8_t *m = wgpuBufferGetConstMappedRange(sg->buf, 0, n);
        uint64_t lo = p > off ? p : off, hi = p + n < end ? p + n : end;
        if (m)
            memcpy(d + (lo - off), m + (lo - p), hi - lo);
        wgpuBufferUnmap(sg->buf);
        if (!m)
            return wg_fail(WGML_ERR_DEVICE, "reading back: no mapped range");
        p += n;
    }
    ctx->stats.bytes_downloaded += size;
    st = wg_errword_report(ctx);
    return st != WGML_OK ? st : wg_check(ctx);
}

/* ------------------------------------------------------------ reads that do not wait */

/* A read-back in flight: its own mappable buffer (the staging pool's are
 * reused by the next wgml_buffer_read, which may come before the end). */
struct wgml_pending {
    wgml_ctx *ctx;
    WGPUBuffer buf;
    uint64_t size, skip; /* bytes asked for; bytes before them in buf (offset alignment) */
    uint64_t span;       /* bytes of buf */
    volatile int done;   /* on_map: 1 mapped, 2 failed */
    bool errw;           /* the error word's copy rode on this read's submit */
    bool armed;          /* mapping asked for (after the submit) */
};

/* Largest read-back in flight: a token, a row of logits (128256 x 4 bytes)
 * and more; bigger reads are wgml_buffer_read's. */
#define PENDING_MAX (64u << 20)

wgml_status wg_pending_record(wgml_buffer *b, uint64_t off, uint64_t size, const char *fn, wgml_pending **out)
{
    if (!out)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: out is NULL", fn);
    *out = NULL;
    wgml_status st = check_range(b, off, size, fn);
    if (st == WGML_OK)
        st = wg_stream_not_recording(b->ctx, "a read-back in flight");
    if (st != WGML_OK)
        return st;
    if (size > PENDING_MAX)
        return wg_fail(WGML_ERR_LIMIT, "%s: %llu bytes; a read in flight takes at most %u (use wgml_buffer_read)",
                       fn, (unsigned long long)size, PENDING_MAX);
    wgml_ctx *ctx = b->ctx;
    wgml_pending *p = calloc(1, sizeof *p);
    if (!p)
        return wg_fail(WGML_ERR_OOM, "%s: out of host memory", fn);
    uint64_t lo = wg_align_down(off, 4), hi = wg_align_up(off + size, 4);
    p->ctx = ctx;
    p->size = size;
    p->skip = off - lo;
    p->span = hi - lo > 4 ? hi - lo : 4;
    WGPUBufferDescriptor d = {0};
    d.size = p->span;
    d.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    p->buf = wgpuDeviceCreateBuffer(ctx->device, &d);
    if (!p->buf) {
        free(p);
        return wg_fail(WGML_ERR_OOM, "%s: could not allocate a %llu-byte read-back buffer", fn,
                       (unsigned long long)d.size);
    }
    /* The error word's copy rides on this read's submit; only the read that
     * carried it reports it (mapping the word's staging after a later read
     * carried it would wait for that read's work too). */
    p->errw = wg_errword_stage(ctx);
    if (hi > lo)
        wgpuCommandEncoderCopyBufferToBuffer(wg_stream_encoder(ctx), b->buf, lo, p->buf, 0, hi - lo);
    else
        wg_stream_encoder(ctx); /* an empty read still marks its place in the queue */
    *out = p;
    return WGML_OK;
}

/* Mapped once the submit that carried the copy has run: wgpu answers a map
 * when the buffer's last submission is done, not the whole queue. */
void wg_pending_arm(wgml_pending *p)
{
    WGPUBufferMapCallbackInfo ci = {0};
    ci.mode = WGPUCallbackMode_AllowProcessEvents;
    ci.callback = on_map;
    ci.userdata1 = (void *)&p->done;
    wgpuBufferMapAsync(p->buf, WGPUMapMode_Read, 0, p->span, ci);
    p->armed = true;
}

wgml_status wgml_buffer_read_begin(wgml_buffer *b, uint64_t off, uint64_t size, wgml_pending **out)
{
    wgml_status st = wg_pending_record(b, off, size, "wgml_buffer_read_begin", out);
    if (st != WGML_OK)
        return st;
    if ((st = wg_stream_submit(b->ctx)) != WGML_OK) {
        wgml_buffer_read_end(*out, NULL);
        *out = NULL;
        return st;
    }
    wg_pending_arm(*out);
    return wg_check(b->ctx);
}

wgml_status wgml_buffer_read_end(wgml_pending *p, void *dst)
{
    if (!p)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_buffer_read_end: no read");
    wgml_ctx *ctx = p->ctx;
    wgml_status st = WGML_OK;
    ctx->stats.waits++;
    /* waited for even without dst: the buffer is released mapped or failed */
    if (!p->armed) { /* its submit failed: nothing to wait for */
        if ((st = wg_check(ctx)) == WGML_OK)
            st = wg_fail(WGML_ERR_DEVICE, "reading back %llu bytes: the read was never submitted",
                         (unsigned long long)p->size);
    } else if (!wg_wait_flag(ctx, &p->done, 120.0)) {
        st = wg_fail(WGML_ERR_TIMEOUT, "reading back %llu bytes: no answer in 120 s", (unsigned long long)p->size);
    } else if (p->done != 1) {
        if ((st = wg_check(ctx)) == WGML_OK)
            st = wg_fail(WGML_ERR_DEVICE, "reading back %llu bytes: mapping the buffer failed",
                         (unsigned long long)p->size);
    } else {
        const uint8_t *m = wgpuBufferGetConstMappedRange(p->buf, 0, p->span);
        if (!m)
            st = wg_fail(WGML_ERR_DEVICE, "reading back: no mapped range");
        else if (dst)
            memcpy(dst, m + p->skip, p->size);
        wgpuBufferUnmap(p->buf);
        ctx->stats.bytes_downloaded += p->size;
    }
    bool errw = p->errw;
    wgpuBufferRelease(p->buf);
    free(p);
    wgml_status es = errw ? wg_errword_report(ctx) : WGML_OK;
    if (st != WGML_OK)
        return st;
    return es != WGML_OK ? es : wg_check(ctx);
}

/* ------------------------------------------------------------ copy */

static wgml_status copy_window(wgml_buffer *dst, uint64_t doff, wgml_buffer *src, uint64_t soff,
                               uint64_t size, bool same, uint64_t *done)
{
    wgml_ctx *ctx = dst->ctx;
    uint64_t srem, drem;
    wg_binding bind[2];
    bind[0] = wg_bind_from(src, soff, size, &srem);
    bind[1] = wg_bind_from(dst, doff, size, &drem);
    uint64_t n = size;
    if (n > bind[0].size - srem)
        n = bind[0].size - srem;
    if (n > bind[1].size - drem)
        n = bind[1].size - drem;
    bool v4 = srem % 16 == 0 && drem % 16 == 0 && (n % 16 == 0 || n >= 16);
    bool word = srem % 4 == 0 && drem % 4 == 0 && (n % 4 == 0 || n >= 4);
    unsigned unit = v4 ? 16 : word ? 4 : 1;
    if (unit > 1)
        n = wg_align_down(n, unit); /* the remainder goes in the next window */
    wg_kernel_ref ref = {"copy.wgsl", unit > 1 ? "copy_units" : "copy_bytes",
                         v4 ? (same ? "V4;SRC_RW" : "V4") : (same ? "SRC_RW" : NULL), 2, same ? 0u : 1u};
    wgml_status st;
    wgml_kernel *k = kernel_or_null(ctx, &ref, &st);
    if (!k)
        return st;
    uint32_t prm[4];
    uint64_t threads;
    if (unit > 1) {
        prm[0] = (uint32_t)(srem / unit);
        prm[1] = (uint32_t)(drem / unit);
        prm[2] = (uint32_t)(n / unit);
        prm[3] = 0;
        threads = n / unit; /* one unit a thread (copy.wgsl) */
    } else {
        prm[0] = (uint32_t)srem;
        prm[1] = (uint32_t)drem;
        prm[2] = (uint32_t)n;
        prm[3] = (uint32_t)((drem + n + 3) / 4 - drem / 4);
        threads = prm[3];
    }
    *done = n;
    return wg_dispatch(ctx, k, bind, 2, prm, sizeof prm, (uint32_t)((threads + 255) / 256), 1, 1);
}

wgml_status wgml_buffer_copy(wgml_buffer *dst, uint64_t doff, wgml_buffer *src, uint64_t soff, uint64_t size)
{
    wgml_status st = check_range(dst, doff, size, "wgml_buffer_copy (destination)");
    if (st == WGML_OK)
        st = check_range(src, soff, size, "wgml_buffer_copy (source)");
    if (st != WGML_OK || size == 0)
        return st;
    if (src->ctx != dst->ctx)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_buffer_copy: buffers belong to different contexts");
    bool same = src == dst;
    if (same && soff == doff)
        return WGML_OK;
    if (same && soff < doff + size && doff < soff + size) {
        /* Overlap: threads would read bytes others already wrote.  Bounce
         * through a temporary buffer (rare: in-place shifts). */
        wgml_buffer *tmp;
        if ((st = wgml_buffer_create(src->ctx, size, &tmp)) != WGML_OK)
            return st;
        st = wgml_buffer_copy(tmp, 0, src, soff, size);
        if (st == WGML_OK)
            st = wgml_buffer_copy(dst, doff, tmp, 0, size);
        wgml_buffer_destroy(tmp);
        return st;
    }
    for (uint64_t p = 0; p < size;) {
        uint64_t n = 0;
        if ((st = copy_window(dst, doff + p, src, soff + p, size - p, same, &n)) != WGML_OK)
            return st;
        p += n;
    }
    return WGML_OK;
}

/* ------------------------------------------------------------ device error word */

/* The read-back: the error words, then the grid words' first 4 (GC_FAIL). */
#define ERRW_STAGE (WG_ERRW_WORDS * 4 + 16)

wgml_status wg_errword_init(wgml_ctx *ctx)
{
    /* A fresh device buffer is zeroed by WebGPU; the pool is empty at
     * context creation, so no fill is recorded either. */
    wgml_status st = wgml_buffer_create(ctx, WG_GRID_AT + WG_GRID_WORDS * 4, &ctx->errw.buf);
    if (st != WGML_OK)
        return st;
    WGPUBufferDescriptor d = {0};
    d.size = ERRW_STAGE;
    d.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    ctx->errw.stage = wgpuDeviceCreateBuffer(ctx->device, &d);
    return ctx->errw.stage ? WGML_OK : wg_fail(WGML_ERR_OOM, "could not allocate the error word's read-back");
}

void wg_errword_release(wgml_ctx *ctx)
{
    wgml_buffer_destroy(ctx->tickets);
    ctx->tickets = NULL;
    wgml_buffer_destroy(ctx->errw.buf);
    ctx->errw.buf = NULL;
    if (ctx->errw.stage)
        wgpuBufferRelease(ctx->errw.stage);
    ctx->errw.stage = NULL;
}

wg_binding wg_errword_bind(wgml_ctx *ctx) { return (wg_binding){ctx->errw.buf, 0, WG_ERRW_WORDS * 4}; }

/* The grid words live in the error word's buffer, 256 bytes in (a binding
 * offset), so a persistent kernel's fail word (grid.wgsl GC_FAIL) rides on
 * the error word's read-back at every sync. */
wg_binding wg_grid_bind(wgml_ctx *ctx) { return (wg_binding){ctx->errw.buf, WG_GRID_AT, WG_GRID_WORDS * 4}; }

wgml_status wg_tickets_init(wgml_ctx *ctx)
{
    /* zeroed as the error word is: a fresh buffer, the pool still empty */
    return wgml_buffer_create(ctx, WG_TICKET_WORDS * 4, &ctx->tickets);
}

wg_binding wg_tickets_bind(wgml_ctx *ctx) { return wg_bind_all(ctx->tickets); }

wgml_status wg_errword_arm(wgml_ctx *ctx) { return fill_range(ctx->errw.buf, WG_ERRW_CUR * 4, 4, 0); }

uint32_t wg_errword_op(wgml_ctx *ctx, const char *op, const char *what)
{
    for (uint32_t i = 0; i < ctx->errw.n_ops; i++)
        if (ctx->errw.ops[i][0] == op && ctx->errw.ops[i][1] == what)
            return i + 1;
    if (ctx->errw.n_ops == sizeof ctx->errw.ops / sizeof ctx->errw.ops[0])
        return 0;
    ctx->errw.ops[ctx->errw.n_ops][0] = op;
    ctx->errw.ops[ctx->errw.n_ops][1] = what;
    return ++ctx->errw.n_ops;
}

bool wg_errword_stage(wgml_ctx *ctx)
{
    if (!ctx->errw.dirty || ctx->errw.staged)
        return false;
    WGPUCommandEncoder enc = wg_stream_encoder(ctx);
    wgpuCommandEncoderCopyBufferToBuffer(enc, ctx->errw.buf->buf, 0, ctx->errw.stage, 0, WG_ERRW_WORDS * 4);
    wgpuCommandEncoderCopyBufferToBuffer(enc, ctx->errw.buf->buf, WG_GRID_AT, ctx->errw.stage, WG_ERRW_WORDS * 4, 16);
    ctx->errw.dirty = false;
    ctx->errw.staged = true;
    return true;
}

/* "[2, 5]": logical position pos of an index tensor of this shape. */
static void coords_str(uint32_t pos, uint32_t ndim, const uint32_t shape[4], char *buf, size_t n)
{
    uint32_t c[4] = {0};
    ndim = ndim < 1 ? 1 : ndim > 4 ? 4 : ndim;
    for (int d = 3; d >= 0; d--) {
        c[d] = shape[d] ? pos % shape[d] : 0;
        pos = shape[d] ? pos / shape[d] : 0;
    }
    size_t u = 0;
    for (uint32_t d = 4 - ndim; d < 4 && u < n; d++) {
        int w = snprintf(buf + u, n - u, "%s%u", d > 4 - ndim ? ", " : "[", c[d]);
        u += w > 0 ? (size_t)w : 0;
    }
    if (u < n)
        snprintf(buf + u, n - u, "]");
}

wgml_status wg_map_read(wgml_ctx *ctx, WGPUBuffer buf, uint64_t size, void *dst, const char *what)
{
    volatile int done = 0;
    WGPUBufferMapCallbackInfo ci = {0};
    ci.mode = WGPUCallbackMode_AllowProcessEvents;
    ci.callback = on_map;
    ci.userdata1 = (void *)&done;
    wgpuBufferMapAsync(buf, WGPUMapMode_Read, 0, size, ci);
    if (!wg_wait_flag(ctx, &done, 120.0))
        return wg_fail(WGML_ERR_TIMEOUT, "%s: no answer in 120 s", what);
    const void *m = done == 1 ? wgpuBufferGetConstMappedRange(buf, 0, size) : NULL;
    if (m)
        memcpy(dst, m, size);
    if (done == 1)
        wgpuBufferUnmap(buf);
    return m ? WGML_OK : wg_fail(WGML_ERR_DEVICE, "%s: mapping failed", what);
}

wgml_status wg_errword_report(wgml_ctx *ctx)
{
    if (!ctx->errw.staged)
        return WGML_OK;
    ctx->errw.staged = false;
    /* The submit that carried the copy has been waited on: this map is
     * answered at once (it is not another GPU wait). */
    uint32_t w[ERRW_STAGE / 4] = {0};
    wgml_status st = wg_map_read(ctx, ctx->errw.stage, sizeof w, w, "reading the error word back");
    if (st != WGML_OK)
        return st;
    if (w[WG_ERRW_WORDS + 2]) { /* grid.wgsl's GC_FAIL */
        static const uint32_t z = 0;
        wgpuQueueWriteBuffer(ctx->queue, ctx->errw.buf->buf, WG_GRID_AT + 8, &z, 4);
        return wg_fail(WGML_ERR_DEVICE, "a persistent kernel's grid barrier gave up waiting (its workgroups were not "
                       "all running at once on this device): results since the last sync are wrong; "
                       "WGML_DISABLE=grid runs such work as separate dispatches");
    }
    if (w[WG_ERRW_COUNT] == 0)
        return WGML_OK;
    static const uint32_t zero[WG_ERRW_WORDS];
    wgpuQueueWriteBuffer(ctx->queue, ctx->errw.buf->buf, 0, zero, sizeof zero);
    uint32_t op = w[WG_ERRW_OP];
    const char *name = op && op <= ctx->errw.n_ops ? ctx->errw.ops[op - 1][0] : "an index op";
    const char *what = op && op <= ctx->errw.n_ops ? ctx->errw.ops[op - 1][1] : "idx";
    char pos[96], more[96] = "";
    coords_str(w[WG_ERRW_POS], w[WG_ERRW_NDIM], &w[WG_ERRW_SHAPE], pos, sizeof pos);
    int32_t v = (int32_t)w[WG_ERRW_VALUE];
    if (w[WG_ERRW_COUNT] > 1)
        snprintf(more, sizeof more, " (%u bad indices since the last sync; the first is named)", w[WG_ERRW_COUNT]);
    return wg_fail(WGML_ERR_INDEX, "%s: %s%s = %d is %s; indices must lie in [0, %u): the call wrote nothing%s",
                   name, what, pos, (int)v, v < 0 ? "negative" : "out of range", w[WG_ERRW_LIMIT], more);
}
