/*
 * wgml — machine-learning tensor work on any GPU through WebGPU.
 *
 * This is the whole public C API.  Handles are opaque; no WebGPU type leaks
 * out, so a program that includes this header needs neither webgpu.h nor the
 * implementation behind it.
 *
 * Error model (SQLite-like): every call that can fail returns a wgml_status.
 * On failure, wgml_last_error() gives a human-readable message for the last
 * failing call made on this thread.  Errors raised asynchronously by the GPU
 * (validation errors inside a batch, device loss) are recorded on the context
 * and returned by the next call that touches it.  Nothing in wgml aborts.
 *
 * Threading: a context and everything created from it must be used from one
 * thread at a time.  Different contexts are independent.
 */
#ifndef WGML_H
#define WGML_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WGML_VERSION_MAJOR 0
#define WGML_VERSION_MINOR 1
#define WGML_VERSION_PATCH 0
#define WGML_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- status */

typedef enum wgml_status {
    WGML_OK = 0,
    WGML_ERR_INVALID_ARG,  /* NULL handle, bad size/offset, unknown option   */
    WGML_ERR_NO_ADAPTER,   /* no adapter, or WGML_ADAPTER matched none        */
    WGML_ERR_DEVICE,       /* WebGPU reported a validation or internal error  */
    WGML_ERR_DEVICE_LOST,  /* device lost or destroyed; the context is dead   */
    WGML_ERR_OOM,          /* the device is out of memory                     */
    WGML_ERR_LIMIT,        /* request exceeds a device limit                  */
    WGML_ERR_SHADER,       /* WGSL failed to compile; message has the reason  */
    WGML_ERR_UNSUPPORTED,  /* feature or operation not available here         */
    WGML_ERR_IO,           /* file or cache I/O failed                        */
    WGML_ERR_TIMEOUT,      /* the GPU did not answer in time                  */
    WGML_ERR_SHAPE,        /* tensor shapes do not fit the operation          */
    WGML_ERR_DTYPE,        /* dtype not supported by the operation            */
    WGML_ERR_INDEX,        /* index or axis out of range                      */
    WGML_ERR_INTERNAL      /* a bug in wgml                                   */
} wgml_status;

/* Stable short name of a status ("WGML_ERR_SHADER"); never NULL. */
const char *wgml_status_name(wgml_status s);
/* Message of the last failing call on this thread ("" if none). */
const char *wgml_last_error(void);

/* ------------------------------------------------------------- context */

typedef struct wgml_ctx wgml_ctx;

/* Optional device features wgml uses when the adapter has them. */
enum {
    WGML_FEATURE_F16                  = 1u << 0, /* WGSL f16 arithmetic          */
    WGML_FEATURE_SUBGROUPS            = 1u << 1, /* subgroup operations           */
    WGML_FEATURE_TIMESTAMPS           = 1u << 2, /* GPU timestamp queries         */
    WGML_FEATURE_TIMESTAMPS_IN_PASSES = 1u << 3, /* timestamps between dispatches */
    WGML_FEATURE_IMMEDIATES           = 1u << 4, /* push-constant-like data       */
    WGML_FEATURE_PIPELINE_CACHE       = 1u << 5  /* driver pipeline cache         */
};

typedef struct wgml_ctx_options {
    /* Adapter: decimal index or case-insensitive name substring; NULL means
     * the WGML_ADAPTER environment variable, else the best adapter
     * (discrete GPU, then integrated, then CPU). */
    const char *adapter;
    /* WGML_FEATURE_* bits never to enable (also WGML_DISABLE=f16,subgroups,
     * timestamps,immediates,pipeline-cache in the environment). */
    unsigned disable_features;
    /* 1: GPU timestamps per dispatch and a per-kernel summary
     * (also WGML_PROFILE=1). */
    int profile;
    /* 1: compile kernels with WebGPU's runtime bounds checks (slow; for
     * debugging kernels; also WGML_SHADER_CHECKS=1). */
    int shader_checks;
} wgml_ctx_options;

/* opts may be NULL: defaults plus the environment. */
wgml_status wgml_ctx_create(const wgml_ctx_options *opts, wgml_ctx **out);
/* Waits for outstanding work, prints the profile if profiling, frees all. */
void wgml_ctx_destroy(wgml_ctx *ctx);
/* Destroys the GPU device now, like WebGPU's GPUDevice.destroy(): memory is
 * freed at once and every later call on the context (or its buffers and
 * kernels) returns WGML_ERR_DEVICE_LOST.  The handle must still be passed
 * to wgml_ctx_destroy.  Useful to test a program's device-loss path. */
void wgml_ctx_destroy_device(wgml_ctx *ctx);
/* Submit recorded GPU work without waiting. */
wgml_status wgml_ctx_flush(wgml_ctx *ctx);
/* Submit recorded GPU work and wait until the GPU has finished it. */
wgml_status wgml_ctx_sync(wgml_ctx *ctx);

typedef struct wgml_device_info {
    char adapter[256];      /* device name as the driver reports it */
    char vendor[128];
    char architecture[128];
    char driver[256];       /* driver description / version */
    char backend[16];       /* "Vulkan", "Metal", "D3D12", "OpenGL", ... */
    char device_type[16];   /* "discrete", "integrated", "cpu", "unknown" */
    uint32_t vendor_id, device_id;
    unsigned features;      /* WGML_FEATURE_* enabled on the device   */
    unsigned available;     /* WGML_FEATURE_* the adapter offers      */
    uint32_t subgroup_size; /* measured; 0 without subgroups           */
    uint64_t max_buffer_size;
    uint64_t max_storage_binding;
    uint32_t max_workgroup_storage;
    uint32_t max_invocations_per_workgroup;
    uint32_t max_workgroups_per_dim;
    uint32_t min_storage_offset_align;
    uint32_t min_uniform_offset_align;
    uint32_t implementation_version; /* e.g. wgpu-native's packed version */
} wgml_device_info;

wgml_status wgml_device_info_get(wgml_ctx *ctx, wgml_device_info *out);

/* Lists adapters visible to WebGPU, in the order WGML_ADAPTER indexes them.
 * Writes at most cap entries; *count receives the total. */
typedef struct wgml_adapter_desc {
    char name[256];
    char backend[16];
    char device_type[16];
} wgml_adapter_desc;
wgml_status wgml_adapters_list(wgml_adapter_desc *out, size_t cap, size_t *count);

/* Names of WGML_FEATURE_* bits, space separated, into buf. */
const char *wgml_feature_names(unsigned features, char *buf, size_t n);

/* Counters, for tests and tuning. */
typedef struct wgml_ctx_stats {
    uint64_t pipelines_compiled;  /* shader module + pipeline creations */
    uint64_t pipeline_cache_hits; /* kernel requests served from memory */
    uint64_t dispatches;
    uint64_t submits;
    uint64_t waits;
    uint64_t bind_group_hits, bind_group_misses;
    uint64_t bytes_uploaded, bytes_downloaded;
} wgml_ctx_stats;
wgml_status wgml_ctx_stats_get(wgml_ctx *ctx, wgml_ctx_stats *out);

/* Writes the per-kernel GPU time summary gathered with profiling on. */
wgml_status wgml_profile_print(wgml_ctx *ctx, void *file /* FILE* */);

/* -------------------------------------------------------------- buffers */

typedef struct wgml_buffer wgml_buffer;

/* Device memory of `size` bytes (may be 0), zero-initialised.  Fails with
 * WGML_ERR_LIMIT above the device's maxBufferSize, WGML_ERR_OOM when the
 * device cannot allocate it. */
wgml_status wgml_buffer_create(wgml_ctx *ctx, uint64_t size, wgml_buffer **out);
void wgml_buffer_destroy(wgml_buffer *buf);
uint64_t wgml_buffer_size(const wgml_buffer *buf);

/* Host -> device; any offset and size.  Ordered after earlier work. */
wgml_status wgml_buffer_write(wgml_buffer *buf, uint64_t offset, const void *src, uint64_t size);
/* Device -> host; waits for earlier work on the context. */
wgml_status wgml_buffer_read(wgml_buffer *buf, uint64_t offset, void *dst, uint64_t size);
/* Device -> device by a copy kernel (faster than the copy engine on big
 * GPUs); any offsets; overlapping ranges in one buffer are handled. */
wgml_status wgml_buffer_copy(wgml_buffer *dst, uint64_t dst_offset,
                             wgml_buffer *src, uint64_t src_offset, uint64_t size);
/* Sets bytes [offset, offset+size): byte i gets byte (i % 4) of the
 * little-endian `pattern` (so 0x3f800000 fills f32 1.0 at aligned offsets). */
wgml_status wgml_buffer_fill(wgml_buffer *buf, uint64_t offset, uint64_t size, uint32_t pattern);

/* ------------------------------------------------------ custom kernels */

/*
 * A kernel is a WGSL compute entry point with this binding convention:
 *   @group(0) @binding(0) var<uniform> params : YourParams;   (<= 256 bytes)
 *   @group(0) @binding(1 + i) var<storage, read|read_write> ...  buffer i
 * Bit i of readonly_mask says buffer i is declared `read`.
 *
 * Dispatch with more than maxComputeWorkgroupsPerDimension workgroups in x
 * (and y = z = 1) is folded into y and z by wgml; such kernels find their
 * linear workgroup index as wid.x + wid.y * nwg.x + wid.z * nwg.x * nwg.y
 * (nwg = @builtin(num_workgroups)) and must skip indices past the end.
 */
typedef struct wgml_kernel wgml_kernel;

typedef struct wgml_kernel_desc {
    const char *name;      /* for messages and profiles */
    const char *wgsl;      /* full WGSL source */
    const char *entry;     /* entry point, e.g. "main" */
    int n_buffers;         /* storage buffers, 0..8 */
    unsigned readonly_mask;
} wgml_kernel_desc;

/* Compiles (or finds in the cache) a kernel.  Invalid WGSL gives
 * WGML_ERR_SHADER with the compiler's message. Kernels live until the
 * context is destroyed. */
wgml_status wgml_kernel_create(wgml_ctx *ctx, const wgml_kernel_desc *desc, wgml_kernel **out);

/* Records one dispatch into the context's command stream (no wait). */
wgml_status wgml_dispatch(wgml_ctx *ctx, wgml_kernel *k,
                          wgml_buffer *const *buffers, int n_buffers,
                          const void *params, size_t params_size,
                          uint32_t groups_x, uint32_t groups_y, uint32_t groups_z);

#ifdef __cplusplus
}
#endif
#endif /* WGML_H */
