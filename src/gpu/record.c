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

#include <stdlib.h>
#include <string.h>

struct wg_record {
    wgml_kernel *kernel;
    uint32_t grid[3];
    int nb;
    size_t psize;
    size_t params_at;     /* offset of the parameter bytes in r->params */
    wg_binding b[WG_MAX_BUFFERS];
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

wgml_status wg_recording_replay(wgml_ctx *ctx, const wg_recording *r)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!r || r->ctx != ctx)
        return wg_fail(WGML_ERR_INVALID_ARG, "wg_recording_replay: recording is NULL or from another context");
    if (ctx->target_data == r) /* appending to itself would never end */
        return wg_fail(WGML_ERR_INVALID_ARG, "wg_recording_replay: the recording is being recorded");
    for (size_t i = 0; i < r->n; i++) {
        const wg_record *rec = &r->recs[i];
        wg_cmd c = {rec->kernel, rec->b, rec->nb, r->params + rec->params_at, rec->psize,
                    {rec->grid[0], rec->grid[1], rec->grid[2]}};
        if ((st = wg_stream_put(ctx, &c)) != WGML_OK)
            return wg_failp(st, "replaying record %zu of %zu ('%s')", i, r->n, rec->kernel->name);
    }
    return WGML_OK;
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
    free(r->recs);
    free(r->params);
    memset(r, 0, sizeof *r);
}
