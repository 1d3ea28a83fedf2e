/*
 * The GPU runtime as the layers above it see it (src/ops, a graph layer,
 * tests of ops): opaque handles, kernel references, storage bindings,
 * dispatch, command recording and a few accessors.  No WebGPU type appears
 * here, so nothing that includes this header needs webgpu.h on its include
 * path; src/gpu/internal.h holds the structs and is for the runtime's own
 * files (and tests of its internals) only.
 */
#ifndef WGML_GPU_RUNTIME_H
#define WGML_GPU_RUNTIME_H

#include "wgml.h"
#include "../error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WG_MAX_BUFFERS 8       /* storage bindings per kernel */
#define WG_PARAMS_MAX 512      /* bytes of uniform parameters per dispatch (a two-stage
                                * persistent kernel's two blocks: matvec_pffn.wgsl) */

/* ---------------------------------------------------------------- kernels */

/* A kernel template reference: an embedded .wgsl file, an entry point and
 * "KEY=VALUE;KEY2" defines for the template step (see pipeline.c). */
typedef struct wg_kernel_ref {
    const char *file;     /* name under src/kernels/, e.g. "copy.wgsl" */
    const char *entry;
    const char *defines;  /* may be NULL */
    int n_buffers;
    unsigned readonly_mask;
} wg_kernel_ref;

/* The kernel for a reference, compiled on first use and cached per context
 * (a second request is a table hit: wgml_ctx_stats.pipeline_cache_hits). */
wgml_status wg_kernel_get(wgml_ctx *ctx, const wg_kernel_ref *ref, wgml_kernel **out);
wgml_ctx *wg_kernel_ctx(const wgml_kernel *k);
const char *wg_kernel_name(const wgml_kernel *k);

/* ---------------------------------------------------------------- bindings */

/* A byte range of a buffer as one storage binding. */
typedef struct wg_binding {
    wgml_buffer *buffer;
    uint64_t offset;      /* multiple of minStorageBufferOffsetAlignment */
    uint64_t size;        /* multiple of 4; <= maxStorageBufferBindingSize */
} wg_binding;

/* Whole-buffer binding when it fits one storage binding. */
wg_binding wg_bind_all(wgml_buffer *b);
/* Widest aligned binding that covers byte `offset` onward: *rem is
 * offset - binding.offset, in bytes. */
wg_binding wg_bind_from(wgml_buffer *b, uint64_t offset, uint64_t want, uint64_t *rem);
/* Bytes a caller may ask of one wg_bind_from window: the binding limit
 * less the up-to-256 bytes the window's start may be aligned back by. */
uint64_t wg_window_cap(const wgml_ctx *ctx);
/* Names the binding window in force for limit messages: the
 * WGML_MAX_BINDING value when set, else the device's
 * maxStorageBufferBindingSize ("the 65536-byte storage binding window
 * (WGML_MAX_BINDING)").  Returns buf. */
const char *wg_window_str(const wgml_ctx *ctx, char *buf, size_t n);
/* WGML_ERR_LIMIT for a window that does not fit one binding, as
 * "<fmt ...> spans N bytes, more than fits in <wg_window_str>"; fmt says
 * who and what, e.g. "wgml_top_k: one row of x (300 elements)". */
wgml_status wg_fail_window(const wgml_ctx *ctx, uint64_t bytes, const char *fmt, ...) WG_PRINTF(3, 4);

/* Bytes the buffer really has (its size rounded up to 16, or to 4 at the
 * maxBufferSize edge): a binding may reach up to here. */
uint64_t wg_buffer_alloc(const wgml_buffer *b);

/* ---------------------------------------------------------------- dispatch */

/* Validates one dispatch (bindings in range and from this context, grid
 * within limits; 1-D grids over the fold limit are folded into y/z) and
 * hands it to the context's current target: the stream, which encodes it
 * at once, or an active recorder (below). */
wgml_status wg_dispatch(wgml_ctx *ctx, wgml_kernel *k, const wg_binding *b, int nb,
                        const void *params, size_t psize,
                        uint32_t gx, uint32_t gy, uint32_t gz);
/* Submits the encoded work (no wait) / waits for everything submitted. */
wgml_status wg_stream_submit(wgml_ctx *ctx);
wgml_status wg_stream_wait(wgml_ctx *ctx);
/* Completion tickets: wg_fence_issue submits the stream and returns a
 * ticket that wg_fence_done reports finished once the GPU has run all work
 * submitted before it (polling, never waiting). */
wgml_status wg_fence_issue(wgml_ctx *ctx, uint64_t *ticket);
bool wg_fence_done(wgml_ctx *ctx, uint64_t ticket);
/* A read in flight (wgml_buffer_read_begin) in two halves, so the copy can
 * ride in a graph run's own command buffer (wgml_graph_run_read):
 * wg_pending_record records the copy into the stream (no submit);
 * wg_pending_arm asks for the mapping once the stream has been submitted.
 * wgml_buffer_read_end ends either (an unarmed read fails and is freed). */
wgml_status wg_pending_record(wgml_buffer *b, uint64_t off, uint64_t size, const char *fn, wgml_pending **out);
void wg_pending_arm(wgml_pending *p);
/* Splits a 1-D grid over max_dim workgroups into x/y/z. */
void wg_split_grid(uint32_t max_dim, uint64_t groups, uint32_t out[3]);

/* ---------------------------------------------------------------- recording */

/*
 * A recording: the dispatches made while a recorder was active, kept as
 * command records {kernel, bindings, parameter bytes, grid} instead of
 * being run.  Replaying encodes them into the stream again, reading the
 * buffers' contents at that time, so a recording made once runs on new
 * inputs as often as wanted.
 *
 * While a recorder is active every GPU command that is not a dispatch
 * (an upload, a read-back, a flush or sync) fails with WGML_ERR_UNSUPPORTED "... cannot be recorded" rather
 * than running eagerly out of order.  Buffers created while recording are
 * zero-filled by a recorded fill, so every replay sees them zeroed.
 *
 * The recording holds a reference on every buffer it binds (buffers an op
 * creates and destroys while recording stay alive with it); tensors are
 * the caller's.  Free recordings before their context.
 */
typedef struct wg_record wg_record;
typedef struct wg_replay wg_replay;
typedef struct wg_recording {
    wgml_ctx *ctx;
    wg_record *recs;
    size_t n, cap;
    uint8_t *params;      /* parameter bytes of all records */
    size_t params_used, params_cap;
    int tag;              /* stored with each record appended (a graph node) */
    double *tag_sink;     /* profiling: replayed records add GPU time to tag_sink[tag] */
    wg_replay *compiled;  /* wg_recording_compile's state, or NULL */
} wg_recording;

/* Starts recording into r (zeroed here; one recorder at a time). */
wgml_status wg_recorder_begin(wgml_ctx *ctx, wg_recording *r);
/* Stops recording: dispatches go to the stream again. */
wgml_status wg_recorder_end(wgml_ctx *ctx);
/* Whether a recorder is active. */
bool wg_recording_active(const wgml_ctx *ctx);
/* Hands every record to the current target, in order: encodes them into
 * the stream (or appends them to an active recorder). */
wgml_status wg_recording_replay(wgml_ctx *ctx, const wg_recording *r);
/* Records [from, to) only (a graph's NaN check runs node by node). */
wgml_status wg_recording_replay_range(wgml_ctx *ctx, const wg_recording *r, size_t from, size_t to);
/* Prepares r for fast replay into the stream: every record's parameters go
 * to one uniform buffer of the recording's own, written once, and each
 * record gets its bind group now, so a replay encodes only pipeline, bind
 * group and grid per dispatch (no parameter copy, no cache lookup).  A
 * replay while profiling, or into a recorder, takes the ordinary path. */
wgml_status wg_recording_compile(wgml_ctx *ctx, wg_recording *r);
/* Drops the records and the buffer references; r may be reused. */
void wg_recording_free(wg_recording *r);

/* ---------------------------------------------------------------- scratch */

/*
 * Scratch: temporaries an op needs only while it runs (partial results,
 * claim tables, sort pairs).  Ops take them with wg_scratch_tensor
 * (src/ops/tensor.c), never by allocating: by default they come from the
 * context's buffer pool and go back when the op's handle is freed (the
 * stream, or a recording, keeps the memory alive while work uses it); a
 * graph that records itself sets a provider, and scratch is then placed in
 * the graph's arena (one region every node reuses: the GPU runs nodes in
 * order).  A provider returns WGML_OK with a tensor whose storage holds
 * the region and a byte offset into it, or WGML_ERR_LIMIT to let the pool
 * serve this request.
 */
typedef wgml_status (*wg_scratch_fn)(void *data, uint64_t bytes, const wgml_tensor **base, uint64_t *offset);
/* used: the provider's running total of bytes taken (each request rounded
 * up to 256), which wg_scratch_mark reads and wg_scratch_release winds
 * back; NULL when the provider keeps none. */
void wg_set_scratch_provider(wgml_ctx *ctx, wg_scratch_fn fn, void *data, uint64_t *used);
bool wg_scratch_provided(const wgml_ctx *ctx);
/* The provider's answer for `bytes` (WGML_ERR_LIMIT when none is set). */
wgml_status wg_scratch_take(wgml_ctx *ctx, uint64_t bytes, const wgml_tensor **base, uint64_t *offset);
/* Scratch taken after a mark is free again once its work is recorded: an
 * op that runs in parts (wg_split_rows' halves) releases each part's
 * scratch before the next, so the next reuses that memory (the GPU runs
 * the parts in order, as it runs a graph's nodes) and an op's declaration
 * bounds its largest part, not the sum over parts.  Only scratch tensors
 * already freed may lie past the mark. */
uint64_t wg_scratch_mark(const wgml_ctx *ctx);
void wg_scratch_release(wgml_ctx *ctx, uint64_t mark);

/* ---------------------------------------------------------- device error word */

/*
 * The context's device error word: a small zeroed storage buffer that
 * kernels set when they find bad input (today: index ops' CHECK pass,
 * indexing.wgsl), so that no op reads device data on the host and index
 * ops record and replay like any other.  The next sync (wgml_ctx_sync, or
 * a host read: wgml_buffer_read / wgml_tensor_download) copies it back
 * with its own read-back, turns a set word into WGML_ERR_INDEX naming the
 * op, the position, the value and the limit, and clears it.
 *
 * Words (u32), shared with the kernels:
 *   COUNT  bad indices found since the last sync (0: none)
 *   CUR    set by the current op's check; its writing passes read it and
 *          write nothing when set; wg_errword_arm clears it first
 *   OP     code of the first failing op (wg_errword_op), POS its position
 *          (logical, row-major in the index tensor), VALUE the index,
 *          LIMIT the bound, NDIM and SHAPE (4 words, left-padded) the
 *          index tensor's shape for the message's coordinates.
 */
enum {
    WG_ERRW_COUNT, WG_ERRW_CUR, WG_ERRW_OP, WG_ERRW_POS, WG_ERRW_VALUE, WG_ERRW_LIMIT, WG_ERRW_NDIM,
    WG_ERRW_SHAPE = 8, WG_ERRW_WORDS = 16
};
/* The error word as a storage binding. */
wg_binding wg_errword_bind(wgml_ctx *ctx);
/* Clears CUR (a fill dispatch in the stream, recordable): call it before
 * an op's check pass. */
wgml_status wg_errword_arm(wgml_ctx *ctx);

/* The context's ticket counters, WG_TICKET_WORDS words bound read_write:
 * a kernel whose last workgroup finishes the job (matvec_ntail.wgsl) counts
 * its workgroups out on word 0 and the last one sets it back to 0, so the
 * words are 0 between dispatches.  Every dispatch that binds them is
 * ordered after the previous one (WebGPU orders read_write uses of a
 * buffer), so one word serves them all. */
#define WG_TICKET_WORDS 64
wg_binding wg_tickets_bind(wgml_ctx *ctx);
/* Persistent kernels (src/kernels/grid.wgsl): the context's control
 * words, WG_GRID_WORDS bound read_write (zero between dispatches: the last
 * workgroup out resets them; every dispatch binding them is ordered after
 * the previous one), and occupancy discovery.  wg_grid_discover runs
 * kernel k once with `params` (the kernel's discovery form, which calls
 * grid_discover and nothing else) on `grid` workgroups in a submission of
 * its own (not the stream's, not a recording's: it may be called while
 * recording) and returns how many workgroups were resident together,
 * cached on k.  Its storage bindings are the control words (read_write
 * ones) and the ticket words (read-only ones): the discovery form touches
 * nothing else.  A persistent dispatch of k launches at most that many. */
#define WG_GRID_WORDS (32 * 17)
#define WG_GRID_AT 256 /* bytes into the error word's buffer (memory.c) */
wg_binding wg_grid_bind(wgml_ctx *ctx);
wgml_status wg_grid_discover(wgml_ctx *ctx, wgml_kernel *k, const void *params, size_t psize, uint32_t grid,
                             uint32_t *count);
/* The code a check kernel records for (op, what) ("wgml_embedding",
 * "ids"); both must be string literals (kept by pointer).  0 if the small
 * table is full (the message then names no op). */
uint32_t wg_errword_op(wgml_ctx *ctx, const char *op, const char *what);

/* ---------------------------------------------------------------- profiling */

bool wg_profiling(const wgml_ctx *ctx);
/* Dispatches encoded after this add their GPU time to sink[tag] when the
 * timestamps are collected (at the next wait); sink NULL stops tagging.
 * The sink must live until that wait.  No-op without profiling. */
void wg_profile_tag(wgml_ctx *ctx, double *sink, int tag);

/* ---------------------------------------------------------------- context */

/* Returns the recorded async error (device lost, validation) if any. */
wgml_status wg_check(wgml_ctx *ctx);
bool wg_has(const wgml_ctx *ctx, unsigned feature);
/* A CPU adapter (lavapipe): kernel tables keep compile-light variants there. */
bool wg_is_cpu(const wgml_ctx *ctx);
/* The device's maxStorageBufferBindingSize (messages of the launchers). */
uint64_t wg_max_storage_binding(const wgml_ctx *ctx);
/* Kernel name of the last dispatch: tests check which path an op took. */
const char *wg_last_dispatch(const wgml_ctx *ctx);

/* ---------------------------------------------------------------- helpers */

static inline uint64_t wg_align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
static inline uint64_t wg_align_down(uint64_t v, uint64_t a) { return v / a * a; }

uint64_t wg_hash_bytes(uint64_t h, const void *p, size_t n);
#define WG_HASH_SEED 1469598103934665603ull

#endif
