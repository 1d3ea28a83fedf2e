/*
 * Recordings: while a recorder is the context's command target, each
 * dispatch that wg_dispatch validated is copied into a growable array of
 * records instead of being encoded; replaying hands the records to the
 * current target again (the stream, which encodes them).  This is what a
 * graph executor builds on: record the ops of a graph once, replay them on
 * new inputs without re-running the host side of any op.
 *
 * A record copies the bindings and the parameter bytes (into one arena per
 * recording, so a record is not padded to the 256-byte maximum) and takes a
 * reference on each bound buffer: ops create scratch buffers and destroy
 * them right after dispatching, which in eager mode is safe (the memory
 * outlives the submitted work) but would leave a recording pointing at
 * freed handles.
 */
#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct wg_record {
    wgml_kernel *kernel;
    uint32_t grid[3];
    int nb;
    size_t psize;
    size_t params_at;     /* offset of the parameter bytes in r->params */
    int tag;              /* r->tag when appended */
    wg_binding b[WG_MAX_BUFFERS];
};

/* wg_recording_compile's state: record i's parameters at off[i] in
 * `params` (records with equal parameter bytes share a slot), and a bind
 * group per record (records with the same layout and bindings share one:
 * the parameter offset is dynamic).  A replay sets a bind group only when
 * it or the offset changes: a chain of ops in place on one tensor sets it
 * once. */
struct wg_replay {
    WGPUBuffer params;
    uint32_t slot;
    uint32_t *off;
    WGPUBindGroup *bg;    /* per record (shared ones are released once) */
    WGPUBindGroup *own;   /* the distinct ones */
    size_t n_own;
    bool binds_errword;
};

/* Grows *p (of *cap elements of `size` bytes) to hold `need`, doubling. */
static bool grow(void **p, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : first;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

static wgml_status record_append(wgml_ctx *ctx, void *data, const wg_cmd *c)
{
    wg_recording *r = data;
    (void)ctx;
    if (!grow((void **)&r->recs, &r->cap, r->n + 1, sizeof *r->recs, 64) ||
        !grow((void **)&r->params, &r->params_cap, r->params_used + c->psize, 1, 4096))
        return wg_fail(WGML_ERR_OOM, "out of host memory recording dispatch %zu ('%s')", r->n, c->kernel->name);
    wg_record *rec = &r->recs[r->n++];
    rec->kernel = c->kernel;
    memcpy(rec->grid, c->grid, sizeof rec->grid);
    rec->nb = c->nb;
    rec->psize = c->psize;
    rec->params_at = r->params_used;
    rec->tag = r->tag;
    if (c->psize)
        memcpy(r->params + r->params_used, c->params, c->psize);
    r->params_used += c->psize;
    for (int i = 0; i < c->nb; i++) {
        rec->b[i] = c->b[i];
        wg_buffer_retain(c->b[i].buffer);
    }
    return WGML_OK;
}

wgml_status wg_recorder_begin(wgml_ctx *ctx, wg_recording *r)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!r)
        return wg_fail(WGML_ERR_INVALID_ARG, "wg_recorder_begin: recording is NULL");
    if (wg_recording_active(ctx))
        return wg_fail(WGML_ERR_UNSUPPORTED, "wg_recorder_begin: a recorder is already active (one at a time)");
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    wg_stream_set_target(ctx, record_append, r);
    return WGML_OK;
}

wgml_status wg_recorder_end(wgml_ctx *ctx)
{
    if (!ctx)
        return wg_fail(WGML_ERR_INVALID_ARG, "context is NULL");
    if (!wg_recording_active(ctx))
        return wg_fail(WGML_ERR_INVALID_ARG, "wg_recorder_end: no recorder is active");
    wg_stream_set_target(ctx, NULL, NULL);
    return WGML_OK;
}

/* Encodes records [from, to) into pass, setting a pipeline or bind group
 * only when it changes (dependent chains often repeat one kernel, and an
 * in-place chain one bind group). */
static void encode_range(WGPUComputePassEncoder pass, const wg_recording *r, size_t from, size_t to)
{
    const wg_replay *c = r->compiled;
    WGPUComputePipeline last = NULL;
    WGPUBindGroup last_bg = NULL;
    uint32_t last_off = UINT32_MAX;
    for (size_t i = from; i < to; i++) {
        const wg_record *rec = &r->recs[i];
        if (rec->kernel->pipeline != last)
            wgpuComputePassEncoderSetPipeline(pass, last = rec->kernel->pipeline);
        if (c->bg[i] != last_bg || c->off[i] != last_off) {
            last_bg = c->bg[i];
            last_off = c->off[i];
            wgpuComputePassEncoderSetBindGroup(pass, 0, last_bg, 1, &last_off);
        }
        wgpuComputePassEncoderDispatchWorkgroups(pass, rec->grid[0], rec->grid[1], rec->grid[2]);
    }
}

/*
 * Parallel replay.  wgpu-native spends 1.3-2.6 us of host time per
 * replayed dispatch on the H100's host (pass encoding, state tracking,
 * Vulkan recording), more than the GPU takes for a small dependent
 * dispatch, so one thread bounds a long replay.  Command encoders are
 * independent, so worker threads encode chunks into command buffers
 * while the calling thread submits them in order as they complete (the
 * queue orders them: chunk i+1's first dispatch waits for chunk i's last).
 * The first chunk is small so the GPU starts at once.
 */
#define PAR_MIN 1024      /* dispatches: below, thread start-up (~50 us) does not pay */
#define PAR_MAX_THREADS 8

typedef struct par_job {
    size_t from, to;
    WGPUCommandBuffer cb;
    atomic_int done;
} par_job;

typedef struct par_state {
    wgml_ctx *ctx;
    const wg_recording *r;
    par_job *jobs;
    size_t njobs;
    atomic_size_t next;
} par_state;

static void *par_worker(void *arg)
{
    par_state *ps = arg;
    for (;;) {
        size_t j = atomic_fetch_add(&ps->next, 1);
        if (j >= ps->njobs)
            return NULL;
        par_job *job = &ps->jobs[j];
        WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(ps->ctx->device, NULL);
        WGPUComputePassEncoder pass = enc ? wgpuCommandEncoderBeginComputePass(enc, NULL) : NULL;
        if (pass) {
            encode_range(pass, ps->r, job->from, job->to);
            wgpuComputePassEncoderEnd(pass);
            wgpuComputePassEncoderRelease(pass);
            job->cb = wgpuCommandEncoderFinish(enc, NULL);
        }
        if (enc)
            wgpuCommandEncoderRelease(enc);
        atomic_store_explicit(&job->done, 1, memory_order_release);
    }
}

/* Threads for a replay of n dispatches: WGML_REPLAY_THREADS (0 or 1: off),
 * else up to 4, one fewer than the host's cores. */
static int par_threads(size_t n)
{
    if (n < PAR_MIN)
        return 0;
    const char *e = getenv("WGML_REPLAY_THREADS");
    long t = e && *e ? strtol(e, NULL, 10) : -1;
    if (t < 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        t = cpus > 1 ? (cpus - 1 < 4 ? cpus - 1 : 4) : 0;
    }
    return t > 1 ? (int)(t < PAR_MAX_THREADS ? t : PAR_MAX_THREADS) : 0;
}

/* The first chunk of a replay (dispatches), encoded and submitted before
 * the rest so the GPU starts at once; later chunks double.  The GPU waits
 * for the whole first chunk's host encoding (~1.4 us a dispatch on the
 * H100's host): 64 made a decode token wait ~90 us before its first
 * dispatch ran.  H200, tg128 from an empty cache (bench/NOTES.md,
 * 2026-11-26 (2) call 1): 64 / 16 / 8 gave the 1B 594-599 / 616 / 611
 * tokens/s, the 8B 236-240 / 237 / 237.  WGML_REPLAY_FIRST=n sets it. */
static size_t first_chunk(void)
{
    const char *e = getenv("WGML_REPLAY_FIRST");
    long v = e && *e ? strtol(e, NULL, 10) : 0;
    return v >= 1 && v <= 4096 ? (size_t)v : 16;
}

static wgml_status replay_parallel(wgml_ctx *ctx, const wg_recording *r, size_t from, size_t to, int nt)
{
    wgml_status st = wg_stream_submit(ctx); /* earlier work goes first */
    if (st != WGML_OK)
        return st;
    size_t njobs = 0, c0 = first_chunk();
    for (size_t i = from, c = c0; i < to; i += c, c = c < 1024 ? 2 * c : c)
        njobs++;
    par_state ps = {ctx, r, calloc(njobs, sizeof(par_job)), njobs, 0};
    pthread_t th[PAR_MAX_THREADS];
    if (!ps.jobs)
        return wg_fail(WGML_ERR_OOM, "replay: out of host memory");
    size_t j = 0;
    for (size_t i = from, c = c0; i < to; i += c, c = c < 1024 ? 2 * c : c, j++) {
        ps.jobs[j].from = i;
        ps.jobs[j].to = i + c < to ? i + c : to;
        atomic_init(&ps.jobs[j].done, 0);
    }
    int started = 0;
    while (started < nt && pthread_create(&th[started], NULL, par_worker, &ps) == 0)
        started++;
    if (started == 0) /* no thread: encode here */
        par_worker(&ps);
    bool bad = false;
    for (j = 0; j < njobs; j++) {
        while (!atomic_load_explicit(&ps.jobs[j].done, memory_order_acquire))
            sched_yield();
        WGPUCommandBuffer cb = ps.jobs[j].cb;
        if (!cb) {
            bad = true;
            continue;
        }
        if (!bad && !ctx->lost) /* wgpu-native aborts on a submit to a lost device */
            wgpuQueueSubmit(ctx->queue, 1, &cb);
        wgpuCommandBufferRelease(cb);
        ctx->stats.submits++;
    }
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    free(ps.jobs);
    if (bad)
        return wg_fail(WGML_ERR_OOM, "replay: wgpu could not make a command encoder or buffer");
    return WGML_OK;
}

/* Whether a replay goes into one command buffer.  While the GPU is still
 * busy with earlier work (a pipelined decode issues step t + 1 while step
 * t runs) an early first chunk gains nothing, and every command buffer
 * costs the GPU time.  H200, tg128 pipelined (bench/NOTES.md): the first
 * chunk 16 / 64 / 1024 dispatches (~6 / 4 / 1 command buffers a token)
 * gave the 8B 247 / 249 / 255 tokens/s and the 1B 661 / 668 / 705, and
 * the same chunks in one submit (6 command buffers) were no faster than
 * in six: the command buffers cost, not the submits.  Encoding is then
 * serial (~1.5 us a dispatch, under the GPU's time for the step before).
 * WGML_REPLAY_WHOLE: 1 always (tests: a CPU driver is rarely still
 * busy), 0 never (timing); unset, while busy. */
static bool whole(wgml_ctx *ctx)
{
    const char *e = getenv("WGML_REPLAY_WHOLE");
    if (e && (!strcmp(e, "0") || !strcmp(e, "1")))
        return *e == '1';
    return ctx->fence_issued && !wg_fence_done(ctx, ctx->fence_issued);
}

static wgml_status replay_fast(wgml_ctx *ctx, const wg_recording *r, size_t from, size_t to)
{
    const wg_replay *c = r->compiled;
    size_t since = from;
    bool one = whole(ctx);
    int nt = one ? 0 : par_threads(to - from);
    if (nt) {
        wgml_status st = replay_parallel(ctx, r, from, to, nt);
        if (st != WGML_OK)
            return st;
        since = to;
    } else {
        /* Submit early, then in growing chunks: the GPU runs the first
         * dispatches while the host encodes the rest.  One submit at the
         * end ran host encoding (~1.4 us a dispatch on the H100's host)
         * and GPU execution back to back. */
        size_t chunk = one ? to - from : first_chunk();
        for (size_t i = from; i < to;) {
            size_t end = to - i > chunk + 64 ? i + chunk : to;
            encode_range(wg_stream_pass(ctx), r, i, end);
            since = i;
            i = end;
            if (i < to) {
                ctx->stream.pending += (uint32_t)(end - since);
                wgml_status st = wg_stream_submit(ctx);
                if (st != WGML_OK)
                    return st;
                since = i;
                chunk = chunk < 2048 ? 2 * chunk : chunk;
            }
        }
    }
    if (to > from) {
        ctx->stats.dispatches += to - from;
        ctx->stream.pending += (uint32_t)(to - since);
        ctx->last_dispatch = r->recs[to - 1].kernel->name;
        if (c->binds_errword)
            ctx->errw.dirty = true;
    }
    return wg_check(ctx);
}

wgml_status wg_recording_replay_range(wgml_ctx *ctx, const wg_recording *r, size_t from, size_t to)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!r || r->ctx != ctx)
        return wg_fail(WGML_ERR_INVALID_ARG, "wg_recording_replay: recording is NULL or from another context");
    if (ctx->target_data == r) /* appending to itself would never end */
        return wg_fail(WGML_ERR_INVALID_ARG, "wg_recording_replay: the recording is being recorded");
    if (from > to || to > r->n)
        return wg_fail(WGML_ERR_INVALID_ARG, "wg_recording_replay: range [%zu, %zu) of %zu records", from, to, r->n);
    if (r->compiled && !ctx->prof.on && !wg_recording_active(ctx))
        return replay_fast(ctx, r, from, to);
    for (size_t i = from; i < to; i++) {
        const wg_record *rec = &r->recs[i];
        wg_cmd c = {rec->kernel, rec->b, rec->nb, r->params + rec->params_at, rec->psize,
                    {rec->grid[0], rec->grid[1], rec->grid[2]}};
        if (r->tag_sink)
            wg_profile_tag(ctx, r->tag_sink, rec->tag);
        if ((st = wg_stream_put(ctx, &c)) != WGML_OK)
            return wg_failp(st, "replaying record %zu of %zu ('%s')", i, r->n, rec->kernel->name);
    }
    if (r->tag_sink)
        wg_profile_tag(ctx, NULL, -1);
    return WGML_OK;
}

wgml_status wg_recording_replay(wgml_ctx *ctx, const wg_recording *r)
{
    return wg_recording_replay_range(ctx, r, 0, r ? r->n : 0);
}

static void replay_free(wg_replay *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_own; i++)
        wgpuBindGroupRelease(c->own[i]);
    if (c->params)
        wgpuBufferRelease(c->params);
    free(c->own);
    free(c->bg);
    free(c->off);
    free(c);
}

static bool same_bindings(const wg_record *a, const wg_record *b)
{
    if (a->kernel->bgl != b->kernel->bgl || a->nb != b->nb)
        return false;
    for (int i = 0; i < a->nb; i++)
        if (a->b[i].buffer != b->b[i].buffer || a->b[i].offset != b->b[i].offset || a->b[i].size != b->b[i].size)
            return false;
    return true;
}

wgml_status wg_recording_compile(wgml_ctx *ctx, wg_recording *r)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!r || r->ctx != ctx)
        return wg_fail(WGML_ERR_INVALID_ARG, "wg_recording_compile: recording is NULL or from another context");
    replay_free(r->compiled);
    r->compiled = NULL;
    if (r->n == 0)
        return WGML_OK;
    wg_replay *c = calloc(1, sizeof *c);
    uint32_t slot = (uint32_t)wg_align_up(WG_PARAMS_MAX, ctx->limits.minUniformBufferOffsetAlignment);
    uint8_t *host = c ? calloc(r->n, slot) : NULL;
    if (c) {
        c->slot = slot;
        c->bg = calloc(r->n, sizeof *c->bg);
        c->own = calloc(r->n, sizeof *c->own);
        c->off = calloc(r->n, sizeof *c->off);
    }
    if (!c || !host || !c->bg || !c->own || !c->off) {
        free(host);
        replay_free(c);
        return wg_fail(WGML_ERR_OOM, "out of host memory compiling a recording of %zu dispatches", r->n);
    }
    /* Each slot is bound as WG_PARAMS_MAX bytes at its dynamic offset:
     * the buffer holds n slots (the last one whole). */
    WGPUBufferDescriptor bd = {0};
    bd.label = (WGPUStringView){"wgml replay params", WGPU_STRLEN};
    bd.size = (uint64_t)r->n * slot;
    bd.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
    wg_scope_push(ctx);
    c->params = wgpuDeviceCreateBuffer(ctx->device, &bd);
    if ((st = wg_scope_pop(ctx, WGML_ERR_OOM, "the parameter buffer of a recording")) != WGML_OK || !c->params) {
        free(host);
        replay_free(c);
        return st != WGML_OK ? st : wg_fail(WGML_ERR_OOM, "could not create a recording's parameter buffer");
    }
    /* Bind groups are shared between records with equal bindings; a small
     * hash table keeps compiling linear in the number of records. */
    size_t hcap = 64;
    while (hcap < 2 * r->n)
        hcap *= 2;
    size_t *table = malloc(hcap * sizeof *table), *ptab = malloc(hcap * sizeof *ptab), nslots = 0;
    if (!table || !ptab) {
        free(host), free(table), free(ptab);
        replay_free(c);
        return wg_fail(WGML_ERR_OOM, "out of host memory compiling a recording");
    }
    for (size_t i = 0; i < hcap; i++)
        table[i] = ptab[i] = SIZE_MAX;
    for (size_t i = 0; i < r->n; i++) {
        const wg_record *rec = &r->recs[i];
        /* its parameter slot: an equal one already placed, or the next */
        const uint8_t *pb = r->params + rec->params_at;
        size_t pat = (size_t)wg_hash_bytes(wg_hash_bytes(WG_HASH_SEED, &rec->psize, sizeof rec->psize), pb,
                                           rec->psize) & (hcap - 1);
        while (ptab[pat] != SIZE_MAX && (r->recs[ptab[pat]].psize != rec->psize ||
                                         memcmp(r->params + r->recs[ptab[pat]].params_at, pb, rec->psize)))
            pat = (pat + 1) & (hcap - 1);
        if (ptab[pat] == SIZE_MAX) {
            ptab[pat] = i;
            c->off[i] = (uint32_t)(nslots++ * slot);
            if (rec->psize)
                memcpy(host + c->off[i], pb, rec->psize);
        } else {
            c->off[i] = c->off[ptab[pat]];
        }
        for (int j = 0; j < rec->nb; j++)
            c->binds_errword = c->binds_errword || rec->b[j].buffer == ctx->errw.buf;
        size_t at = (size_t)wg_bindings_hash(rec->kernel->bgl, rec->b, rec->nb) & (hcap - 1);
        while (table[at] != SIZE_MAX && !same_bindings(&r->recs[table[at]], rec))
            at = (at + 1) & (hcap - 1);
        if (table[at] != SIZE_MAX) {
            c->bg[i] = c->bg[table[at]];
            continue;
        }
        table[at] = i;
        c->bg[i] = c->own[c->n_own++] = wg_bind_group_create(ctx, rec->kernel->bgl, c->params, rec->b, rec->nb);
    }
    free(table);
    free(ptab);
    /* Slots are whole (slot >= WG_PARAMS_MAX, the bound size) and the
     * buffer has room for one per record. */
    wgpuQueueWriteBuffer(ctx->queue, c->params, 0, host, (uint64_t)nslots * slot);
    free(host);
    r->compiled = c;
    return wg_check(ctx);
}

void wg_set_scratch_provider(wgml_ctx *ctx, wg_scratch_fn fn, void *data, uint64_t *used)
{
    ctx->scratch_fn = fn;
    ctx->scratch_data = fn ? data : NULL;
    ctx->scratch_used = fn ? used : NULL;
}

uint64_t wg_scratch_mark(const wgml_ctx *ctx) { return ctx->scratch_used ? *ctx->scratch_used : 0; }

void wg_scratch_release(wgml_ctx *ctx, uint64_t mark)
{
    if (ctx->scratch_used && mark < *ctx->scratch_used)
        *ctx->scratch_used = mark;
}

bool wg_scratch_provided(const wgml_ctx *ctx) { return ctx->scratch_fn != NULL; }

wgml_status wg_scratch_take(wgml_ctx *ctx, uint64_t bytes, const wgml_tensor **base, uint64_t *offset)
{
    if (!ctx->scratch_fn)
        return WGML_ERR_LIMIT;
    return ctx->scratch_fn(ctx->scratch_data, bytes, base, offset);
}

void wg_recording_free(wg_recording *r)
{
    if (!r)
        return;
    if (r->ctx && r->ctx->target_data == r)
        wg_stream_set_target(r->ctx, NULL, NULL);
    for (size_t i = 0; i < r->n; i++)
        for (int j = 0; j < r->recs[i].nb; j++)
            wgml_buffer_destroy(r->recs[i].b[j].buffer);
    replay_free(r->compiled);
    free(r->recs);
    free(r->params);
    memset(r, 0, sizeof *r);
}
