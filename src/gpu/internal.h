/*
 * Internal interface of the WebGPU runtime (src/gpu/): the structs behind
 * the opaque handles and the calls between runtime files.  Only files in
 * src/gpu/ (and tests of the runtime's internals) include this header, the one
 * that includes webgpu.h; everything above the runtime uses runtime.h.
 * Only native.c includes wgpu.h.
 *
 * Files, each calling only files listed above it (a DAG: nothing calls
 * back up; checked with nm on the objects when this was written):
 *
 *   native.c      every wgpu-native extension call (swap for Dawn here)
 *   diskcache.c   the drivers' on-disk pipeline cache folder
 *   wgsl_tensor.c `#tensor` accessors for the template step
 *   device.c      instance, adapter choice, device, callbacks, error
 *                 scopes, wg_check                  -> native, diskcache
 *   pipeline.c    kernel templates, compilation, growing kernel tables
 *                                          -> device, native, wgsl_tensor
 *   profile.c     GPU timestamps per dispatch; per-kernel summary
 *                                                   -> device, native
 *   stream.c      bindings, wg_dispatch and its target (the stream or a
 *                 recorder), one pass, uniform ring, bind groups,
 *                 submit/wait                -> device, native, profile
 *   memory.c      buffers, pool, staging, upload, download, fill, copy
 *                                        -> device, pipeline, stream
 *   record.c      recordings of dispatches, replay -> device, stream, memory
 *   context.c     wgml_ctx create/destroy (the lifecycle of the device,
 *                 stream, profile, kernels, pools), flush, sync, info,
 *                 stats                                       -> all above
 */
#ifndef WGML_GPU_INTERNAL_H
#define WGML_GPU_INTERNAL_H

#include "runtime.h"
#include "webgpu.h"

#include <stdio.h>

#define WG_RING_BYTES (1u << 20)
#define WG_BG_CACHE 512        /* bind-group cache slots (power of two) */

/* ---------------------------------------------------------------- native.c */
size_t wg_native_enumerate_adapters(WGPUInstance inst, WGPUAdapter *out, size_t cap);
WGPUShaderModule wg_native_create_module(WGPUDevice dev, const WGPUShaderModuleDescriptor *d, bool checks);
/* Blocks until all submitted work is done (or only polls when !wait). */
bool wg_native_poll(WGPUDevice dev, bool wait);
void wg_native_write_timestamp(WGPUComputePassEncoder pass, WGPUQuerySet qs, uint32_t index);
uint32_t wg_native_version(void);
double wg_native_timestamp_period(WGPUQueue q);
/* Feature ids as this implementation numbers them (subgroups etc. differ
 * between wgpu-native and Dawn). */
WGPUFeatureName wg_native_feature_id(unsigned wgml_feature);

/* ------------------------------------------------------------- diskcache.c */

/* Pipeline disk cache setup (before the instance is created). */
void wg_disk_cache_setup(void);
/* The cache folder, or NULL when disk caching is off. */
const char *wg_disk_cache_dir(char *buf, size_t n);

/* ---------------------------------------------------------------- device.c */

/* Creates the instance, picks the adapter (options, then WGML_ADAPTER) and
 * opens the device with the features wgml uses; fills ctx->limits/info. */
wgml_status wg_device_open(wgml_ctx *ctx, const wgml_ctx_options *o);
/* Destroys the device and releases queue, device, adapter, instance. */
void wg_device_close(wgml_ctx *ctx);
/* Error scope helpers: push, then pop and turn any error into a status. */
void wg_scope_push(wgml_ctx *ctx);
wgml_status wg_scope_pop(wgml_ctx *ctx, wgml_status as, const char *what);
/* Waits on a flag set by a callback, pumping events; false on timeout. */
bool wg_wait_flag(wgml_ctx *ctx, volatile int *flag, double timeout_s);
/* Monotonic clock, seconds. */
double wg_now_s(void);

/* ---------------------------------------------------------------- kernels */

struct wgml_kernel {
    wgml_ctx *ctx;
    char name[96];
    uint64_t key;         /* hash of the specialised source + layout */
    WGPUComputePipeline pipeline;
    WGPUBindGroupLayout bgl;
    int n_buffers;
    unsigned readonly_mask;
    uint32_t grid_count;  /* wg_grid_discover's answer for this pipeline (0: not asked yet) */
    /* profile accumulators */
    double prof_ns;
    uint64_t prof_count;
};

/* An open-addressing table key -> kernel (k NULL: empty slot).  It grows
 * (doubling, rehashing) past 5/8 load, so a context holds any number of
 * kernels; probing stays short. */
typedef struct wg_kslot { uint64_t key; struct wgml_kernel *k; } wg_kslot;
typedef struct wg_ktable {
    wg_kslot *slots;
    size_t cap, n;        /* cap: 0 or a power of two */
} wg_ktable;

/* Embedded sources (generated kernels_embedded.c). */
typedef struct wg_source { const char *name; const char *text; size_t len; } wg_source;
extern const wg_source wg_sources[];
extern const size_t wg_source_count;
const wg_source *wg_source_find(const char *name);

/* Expands a template: "#include", "#if/#ifdef/#ifndef/#else/#endif" and
 * "{{KEY}}" substitution.  Returns malloc'd text or NULL with the error set. */
char *wg_template_expand(wgml_ctx *ctx, const char *file, const char *defines);

/* Typed operand accessors for the `#tensor` directive (wgsl_tensor.c). */
size_t wg_tensor_accessors(char *out, size_t cap, const char *name, int binding, const char *dtype,
                           const char *mode, bool native_f16, bool vec4, bool *needs_f16);

wgml_status wg_kernel_compile(wgml_ctx *ctx, const char *name, const char *wgsl,
                              const char *entry, int n_buffers, unsigned ro_mask,
                              wgml_kernel **out);
void wg_kernels_release(wgml_ctx *ctx);

/* ---------------------------------------------------------------- buffers */

struct wgml_buffer {
    wgml_ctx *ctx;
    WGPUBuffer buf;
    uint64_t size;        /* as asked */
    uint64_t alloc;       /* rounded up to 16 (4 at the maxBufferSize edge) */
    uint64_t id;          /* never reused; keys the bind-group cache */
    uint64_t refs;        /* the creator's handle + one per record binding
                           * it (record.c); freed at 0 */
};

/* Another reference to b; wgml_buffer_destroy drops one. */
void wg_buffer_retain(wgml_buffer *b);
/* Releases the pooled buffers (context teardown, or OOM before a retry). */
void wg_pool_release(wgml_ctx *ctx);
/* Releases the staging buffers (context teardown). */
void wg_staging_release(wgml_ctx *ctx);
/* The device error word (runtime.h): created with the context, released
 * at teardown.  wg_errword_stage encodes a copy of it into the stream when
 * a dispatch bound it since the last one (call it before the submit of a
 * sync or read-back); wg_errword_report, after that submit's wait, maps
 * the copy and returns WGML_ERR_INDEX (and clears the word) when it was
 * set. */
wgml_status wg_errword_init(wgml_ctx *ctx);
void wg_errword_release(wgml_ctx *ctx);
bool wg_errword_stage(wgml_ctx *ctx); /* true: staged now (false: clean, or already staged) */
wgml_status wg_errword_report(wgml_ctx *ctx);
/* The ticket counters (runtime.h): created zeroed with the context (with
 * the error word), released at teardown. */
wgml_status wg_tickets_init(wgml_ctx *ctx);
/* Maps the first `size` bytes of a MapRead buffer (the work writing them
 * already submitted), waits up to 120 s, copies them to dst and unmaps;
 * `what` names the read-back in the messages (memory.c). */
wgml_status wg_map_read(wgml_ctx *ctx, WGPUBuffer buf, uint64_t size, void *dst, const char *what);

typedef struct wg_staging {
    WGPUBuffer buf;
    uint64_t size;
    bool busy;
} wg_staging;
#define WG_STAGING_SLOTS 4
#define WG_POOL_SLOTS 32

/* ---------------------------------------------------------------- stream */

typedef struct wg_bg_entry {
    uint64_t hash;
    WGPUBindGroupLayout bgl;
    int n;
    uint64_t ids[WG_MAX_BUFFERS];
    uint64_t offs[WG_MAX_BUFFERS];
    uint64_t sizes[WG_MAX_BUFFERS];
    WGPUBindGroup bg;
} wg_bg_entry;

typedef struct wg_stream {
    WGPUCommandEncoder enc;
    WGPUComputePassEncoder pass;
    uint32_t pending;         /* dispatches recorded since the last submit */
    uint64_t since_wait;      /* bytes bound by dispatches since the last wait */
    bool kicked;              /* the early submit since the last wait is done */
    WGPUBuffer ring;          /* uniform ring */
    uint8_t *shadow;          /* host copy of the ring region in use */
    uint32_t ring_used;       /* bytes used in this batch */
    uint32_t ring_start;      /* first byte written in this batch */
    wg_bg_entry bg[WG_BG_CACHE];
} wg_stream;

/* One validated dispatch, as wg_dispatch hands it to the current target.
 * It points at the caller's bindings and parameters (valid for the call
 * only): the stream encodes it at once with no copy, a recorder copies it. */
typedef struct wg_cmd {
    wgml_kernel *kernel;
    const wg_binding *b;
    int nb;
    const void *params;
    size_t psize;
    uint32_t grid[3];         /* folded already */
} wg_cmd;
typedef wgml_status (*wg_cmd_target)(wgml_ctx *ctx, void *data, const wg_cmd *c);

wgml_status wg_stream_init(wgml_ctx *ctx);
void wg_stream_release(wgml_ctx *ctx);
/* The eager target: encodes c into the stream's pass now. */
wgml_status wg_stream_encode(wgml_ctx *ctx, void *unused, const wg_cmd *c);
/* Routes later dispatches to fn(data) (NULL: back to the stream). */
void wg_stream_set_target(wgml_ctx *ctx, wg_cmd_target fn, void *data);
/* Hands c to the current target (replay of records). */
wgml_status wg_stream_put(wgml_ctx *ctx, const wg_cmd *c);
/* Fails with WGML_ERR_UNSUPPORTED "<what> cannot be recorded" while a
 * recorder is the target; WGML_OK otherwise. */
wgml_status wg_stream_not_recording(wgml_ctx *ctx, const char *what);
/* Ends the pass so copy commands can be recorded; returns the encoder. */
WGPUCommandEncoder wg_stream_encoder(wgml_ctx *ctx);
void wg_stream_forget_buffer(wgml_ctx *ctx, uint64_t id);
/* Bind groups, for the stream's cache and for compiled recordings: the key
 * of (layout, bindings), and a bind group with `uniform` (WG_PARAMS_MAX
 * bytes at a dynamic offset) at binding 0 and b at 1.. */
uint64_t wg_bindings_hash(WGPUBindGroupLayout bgl, const wg_binding *b, int nb);
WGPUBindGroup wg_bind_group_create(wgml_ctx *ctx, WGPUBindGroupLayout bgl, WGPUBuffer uniform, const wg_binding *b,
                                   int nb);
/* The open compute pass of the stream (opened if needed), for replays that
 * encode dispatches themselves (record.c). */
WGPUComputePassEncoder wg_stream_pass(wgml_ctx *ctx);

/* ---------------------------------------------------------------- profile */

typedef struct wg_profile {
    bool on;
    bool in_passes;          /* timestamps between dispatches inside a pass */
    WGPUQuerySet qs;
    WGPUBuffer resolve, readback;
    uint32_t cap;            /* dispatch slots (2 queries each) */
    uint32_t used;
    wgml_kernel **who;       /* kernel per slot */
    int *tag;                /* wg_profile_tag's tag per slot (-1: none) */
    double **sink;           /* and its sink per slot (times are added at collection) */
    double *tag_ns;          /* the current sink (a graph's per-node times) */
    int cur_tag;
    double period_ns;
    /* First stamp to last of each collected batch, summed: the GPU's time
     * per dispatch with barriers and gaps between kernels included (the
     * per-kernel sums above count only the kernels). */
    double span_ns;
    uint64_t span_n;
} wg_profile;

wgml_status wg_profile_init(wgml_ctx *ctx);
void wg_profile_release(wgml_ctx *ctx);
/* Called by the stream around each dispatch / at submit / after wait. */
void wg_profile_begin(wgml_ctx *ctx, wgml_kernel *k, WGPUComputePassEncoder pass);
void wg_profile_end(wgml_ctx *ctx, WGPUComputePassEncoder pass);
void wg_profile_resolve(wgml_ctx *ctx, WGPUCommandEncoder enc);
void wg_profile_collect(wgml_ctx *ctx);
/* Timestamp writes for a pass when timestamps can't go inside passes. */
const WGPUPassTimestampWrites *wg_profile_pass_writes(wgml_ctx *ctx, wgml_kernel *k);

/* ---------------------------------------------------------------- context */

struct wgml_ctx {
    WGPUInstance instance;
    WGPUAdapter adapter;
    WGPUDevice device;
    WGPUQueue queue;
    WGPULimits limits;
    wgml_device_info info;
    bool subgroup_measured;
    bool shader_checks;
    bool destroying;

    /* set by WebGPU callbacks, returned by the next call */
    bool lost;
    wgml_status async_status;
    char async_msg[1024];

    uint64_t next_buffer_id;
    /* destroyed buffers kept for reuse (memory.c) */
    struct { WGPUBuffer buf; uint64_t alloc, tick; } pool[WG_POOL_SLOTS];
    uint64_t pool_bytes, pool_cap, pool_tick;
    wg_staging staging[WG_STAGING_SLOTS];

    wg_ktable kernels;         /* by specialised source (owns the kernels) */
    wg_ktable refs;            /* by reference (file, entry, defines) */

    wg_stream stream;
    wg_cmd_target target;      /* where wg_dispatch sends commands */
    void *target_data;         /* NULL for the stream; the recording */
    uint64_t fence_issued;     /* wg_fence_issue tickets: work submitted up to them */
    volatile uint64_t fence_done; /* the highest ticket the queue finished (in order) */
    wg_scratch_fn scratch_fn;  /* where ops' scratch comes from (a graph's arena), or NULL: the pool */
    void *scratch_data;
    uint64_t *scratch_used;    /* the provider's running total (wg_scratch_mark), or NULL */
    wg_profile prof;
    wgml_ctx_stats stats;
    const char *last_dispatch; /* kernel name of the last dispatch: tests check which path ran */
    uint32_t grid_fold;        /* 1-D grids above this many workgroups are folded (WGML_FOLD_GRID) */
    const char *skip_kernels;  /* WGML_SKIP_KERNELS: a timing probe, never for results (context.c) */
    uint64_t binding_cap;      /* windows of at most this many bytes (WGML_MAX_BINDING) */
    struct {
        wgml_buffer *buf;      /* the device error word (runtime.h) */
        WGPUBuffer stage;      /* its read-back copy */
        bool dirty;            /* a dispatch bound it since the last stage */
        bool staged;           /* a copy is on its way to `stage` */
        const char *ops[32][2];/* codes 1..: (op, what) of wg_errword_op */
        uint32_t n_ops;
    } errw;
    wgml_buffer *tickets;      /* the kernels' ticket counters (runtime.h, wg_tickets_bind) */
};

/* Measures the subgroup size with a tiny kernel (wgpu reports 0). */
wgml_status wg_measure_subgroup(wgml_ctx *ctx);

#endif
