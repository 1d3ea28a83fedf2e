/*
 * Internal interface of the WebGPU runtime (src/gpu/).  Everything above this
 * layer (ops, graph, tools) talks to the GPU through these functions; only
 * files in src/gpu/ include webgpu.h, and only native.c includes wgpu.h.
 *
 *   device.c    instance, adapter choice, device, features, info, callbacks
 *   memory.c    buffers, staging pool, upload, download, fill, copy
 *   pipeline.c  kernel templates, compilation, in-memory + driver caches
 *   stream.c    command stream: one pass, uniform ring, bind groups, flush
 *   profile.c   GPU timestamps per dispatch
 *   native.c    every wgpu-native extension call (swap for Dawn here)
 */
#ifndef WGML_GPU_H
#define WGML_GPU_H

#include "wgml.h"
#include "webgpu.h"
#include "../error.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define WG_MAX_BUFFERS 8       /* storage bindings per kernel */
#define WG_PARAMS_MAX 256      /* bytes of uniform parameters per dispatch */
#define WG_RING_BYTES (1u << 20)
#define WG_BG_CACHE 512        /* bind-group cache slots (power of two) */
#define WG_KERNEL_TABLE 1024   /* kernel hash slots (power of two) */

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

struct wgml_kernel {
    wgml_ctx *ctx;
    char name[96];
    uint64_t key;         /* hash of the specialised source + layout */
    WGPUComputePipeline pipeline;
    WGPUBindGroupLayout bgl;
    int n_buffers;
    unsigned readonly_mask;
    /* profile accumulators */
    double prof_ns;
    uint64_t prof_count;
};

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

wgml_status wg_kernel_get(wgml_ctx *ctx, const wg_kernel_ref *ref, wgml_kernel **out);
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
    uint64_t version;     /* bumped by every recorded write (dispatch with a
                           * writable binding, upload): lets host-side
                           * caches of buffer contents know they are stale */
};

/* A byte range of a buffer as one storage binding. */
typedef struct wg_binding {
    wgml_buffer *buffer;
    uint64_t offset;      /* multiple of minStorageBufferOffsetAlignment */
    uint64_t size;        /* multiple of 4; <= maxStorageBufferBindingSize */
} wg_binding;

/* Whole-buffer binding when it fits one storage binding. */
wg_binding wg_bind_all(wgml_buffer *b);
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
/* Releases the pooled buffers (context teardown, or OOM before a retry). */
void wg_pool_release(wgml_ctx *ctx);
/* Widest aligned binding that covers byte `offset` onward: *rem is
 * offset - binding.offset, in bytes. */
wg_binding wg_bind_from(wgml_buffer *b, uint64_t offset, uint64_t want, uint64_t *rem);

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
    const struct wgml_kernel *kernel_layout_owner;
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

wgml_status wg_stream_init(wgml_ctx *ctx);
void wg_stream_release(wgml_ctx *ctx);
wgml_status wg_dispatch(wgml_ctx *ctx, wgml_kernel *k, const wg_binding *b, int nb,
                        const void *params, size_t psize,
                        uint32_t gx, uint32_t gy, uint32_t gz);
/* Ends the pass so copy commands can be recorded; returns the encoder. */
WGPUCommandEncoder wg_stream_encoder(wgml_ctx *ctx);
wgml_status wg_stream_submit(wgml_ctx *ctx);
wgml_status wg_stream_wait(wgml_ctx *ctx);
void wg_stream_forget_buffer(wgml_ctx *ctx, uint64_t id);
/* Splits a 1-D grid over maxComputeWorkgroupsPerDimension into x/y/z. */
void wg_split_grid(uint32_t max_dim, uint64_t groups, uint32_t out[3]);

/* ---------------------------------------------------------------- profile */

typedef struct wg_profile {
    bool on;
    bool in_passes;          /* timestamps between dispatches inside a pass */
    WGPUQuerySet qs;
    WGPUBuffer resolve, readback;
    uint32_t cap;            /* dispatch slots (2 queries each) */
    uint32_t used;
    wgml_kernel **who;       /* kernel per slot */
    double period_ns;
} wg_profile;

wgml_status wg_profile_init(wgml_ctx *ctx);
void wg_profile_release(wgml_ctx *ctx);
/* Called by the stream around each dispatch / at submit / after wait. */
void wg_profile_begin(wgml_ctx *ctx, wgml_kernel *k);
void wg_profile_end(wgml_ctx *ctx);
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

    struct wgml_kernel *kernels[WG_KERNEL_TABLE];  /* by specialised key */
    struct { uint64_t key; struct wgml_kernel *k; } refs[WG_KERNEL_TABLE]; /* by ref */

    wg_stream stream;
    wg_profile prof;
    wgml_ctx_stats stats;
    const char *last_dispatch; /* kernel name of the last dispatch: tests check which path ran */
    uint32_t grid_fold;        /* 1-D grids above this many workgroups are folded (WGML_FOLD_GRID) */
    uint64_t binding_cap;      /* windows of at most this many bytes (WGML_MAX_BINDING) */
};

/* Returns the recorded async error (device lost, validation) if any. */
wgml_status wg_check(wgml_ctx *ctx);
bool wg_has(const wgml_ctx *ctx, unsigned feature);

/* Error scope helpers: push, then pop and turn any error into a status. */
void wg_scope_push(wgml_ctx *ctx);
wgml_status wg_scope_pop(wgml_ctx *ctx, wgml_status as, const char *what);

/* Waits on a flag set by a callback, pumping events; false on timeout. */
bool wg_wait_flag(wgml_ctx *ctx, volatile int *flag, double timeout_s);

/* Measures the subgroup size with a tiny kernel (wgpu reports 0). */
wgml_status wg_measure_subgroup(wgml_ctx *ctx);

/* Pipeline disk cache setup (before the instance is created). */
void wg_disk_cache_setup(void);
/* The cache folder, or NULL when disk caching is off. */
const char *wg_disk_cache_dir(char *buf, size_t n);

static inline uint64_t wg_align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
static inline uint64_t wg_align_down(uint64_t v, uint64_t a) { return v / a * a; }

uint64_t wg_hash_bytes(uint64_t h, const void *p, size_t n);
#define WG_HASH_SEED 1469598103934665603ull

#endif
