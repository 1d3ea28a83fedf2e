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
/* For code built on wgml (the model front-ends, a program's own layers):
 * records a printf-formatted message as this thread's wgml_last_error()
 * and returns s, so such code reports errors the way wgml does. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
wgml_status wgml_error(wgml_status s, const char *fmt, ...);

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
    uint64_t buffers_reused;      /* creations served from the buffer pool */
} wgml_ctx_stats;
wgml_status wgml_ctx_stats_get(wgml_ctx *ctx, wgml_ctx_stats *out);

/* Writes the per-kernel GPU time summary gathered with profiling on. */
wgml_status wgml_profile_print(wgml_ctx *ctx, void *file /* FILE* */);

/* -------------------------------------------------------------- buffers */

typedef struct wgml_buffer wgml_buffer;

/* Device memory of `size` bytes (may be 0), zero-initialised.  Fails with
 * WGML_ERR_LIMIT above the device's maxBufferSize, WGML_ERR_OOM when the
 * device cannot allocate it.  Destroyed buffers are kept in a pool (up to
 * WGML_POOL_MB, default 1024; 0 turns it off) and a creation of the same
 * rounded size reuses one, zeroed by a kernel: allocating afresh is slow,
 * and on an H100 a process that kept allocating and freeing 256 MiB
 * buffers saw its kernels run at half bandwidth on the newer ones. */
wgml_status wgml_buffer_create(wgml_ctx *ctx, uint64_t size, wgml_buffer **out);
void wgml_buffer_destroy(wgml_buffer *buf);
uint64_t wgml_buffer_size(const wgml_buffer *buf);

/* Host -> device; any offset and size.  Ordered after earlier work. */
wgml_status wgml_buffer_write(wgml_buffer *buf, uint64_t offset, const void *src, uint64_t size);
/* Device -> host; waits for earlier work on the context. */
wgml_status wgml_buffer_read(wgml_buffer *buf, uint64_t offset, void *dst, uint64_t size);
/* Device -> host without waiting for work issued later: _begin copies the
 * bytes aside as the work issued so far leaves them (a submit, no wait);
 * _end waits for that work only, not for what was issued after the begin
 * (a decode loop reads step t's token while step t + 1 runs), stores the
 * bytes in dst and frees the read.  Every begin needs its end (dst may be
 * NULL to drop the bytes).  At most 64 MiB a read (WGML_ERR_LIMIT). */
typedef struct wgml_pending wgml_pending;
wgml_status wgml_buffer_read_begin(wgml_buffer *buf, uint64_t offset, uint64_t size, wgml_pending **out);
wgml_status wgml_buffer_read_end(wgml_pending *read, void *dst);
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
 *   @group(0) @binding(0) var<uniform> params : YourParams;   (<= 512 bytes)
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

/* One of wgml's own embedded kernels: the template `file` (a name under
 * src/kernels/, e.g. "selfcheck.wgsl") specialised with "KEY=VALUE;KEY2"
 * defines (may be NULL), compiled and cached like wgml_kernel_create.  For
 * wgml's tools and tests, which run the runtime through the public API;
 * the files and entry points are not a stable interface. */
wgml_status wgml_kernel_builtin(wgml_ctx *ctx, const char *file, const char *entry, const char *defines,
                                int n_buffers, unsigned readonly_mask, wgml_kernel **out);


/* -------------------------------------------------------------- tensors */

/* Element types.  16-bit floats work without ShaderF16 (packed in u32 and
 * unpacked); quantised types use GGUF's block layouts bit for bit. */
typedef enum wgml_dtype {
    WGML_F32, WGML_F16, WGML_BF16, WGML_I32, WGML_U32, WGML_I8, WGML_U8, WGML_BOOL,
    WGML_Q4_0, WGML_Q4_1, WGML_Q5_0, WGML_Q5_1, WGML_Q8_0,
    WGML_Q2_K, WGML_Q3_K, WGML_Q4_K, WGML_Q5_K, WGML_Q6_K, WGML_Q8_K,
    WGML_IQ4_NL, WGML_MXFP4,
    WGML_DTYPE_COUNT
} wgml_dtype;

#define WGML_MAX_DIMS 4

const char *wgml_dtype_name(wgml_dtype t);          /* "f32", "q4_K"; NULL if unknown */
/* Bytes per block and elements per block (1 for plain types). */
size_t wgml_dtype_block_bytes(wgml_dtype t);
size_t wgml_dtype_block_elems(wgml_dtype t);

/* A tensor: dtype, up to 4 dims (shape[0] outermost), strides in elements
 * and a reference to device storage.  Views share storage; storage lives
 * until its last tensor is freed. */
typedef struct wgml_tensor wgml_tensor;

/* New contiguous, zero-filled tensor.  ndim 0 is a scalar; a dim may be 0.
 * Each dim is at most 2^40 and a tensor at most 2^42 elements (so no size
 * or offset product can wrap 64 bits): larger shapes, including ones whose
 * product would wrap, are WGML_ERR_SHAPE; a NULL shape with ndim > 0 is
 * WGML_ERR_INVALID_ARG.  Views obey the same limits. */
wgml_status wgml_tensor_new(wgml_ctx *ctx, wgml_dtype t, int ndim, const int64_t *shape, wgml_tensor **out);
void wgml_tensor_free(wgml_tensor *t);

wgml_dtype wgml_tensor_dtype(const wgml_tensor *t);
int wgml_tensor_ndim(const wgml_tensor *t);
int64_t wgml_tensor_dim(const wgml_tensor *t, int axis);     /* negative axis counts from the end */
int64_t wgml_tensor_stride(const wgml_tensor *t, int axis);  /* in elements; 0 for broadcast */
int64_t wgml_tensor_nelem(const wgml_tensor *t);
int wgml_tensor_is_contiguous(const wgml_tensor *t);
/* Bytes the tensor's elements take when contiguous. */
uint64_t wgml_tensor_nbytes(const wgml_tensor *t);

/* Host data in the tensor's dtype, in logical (row-major) order; `bytes`
 * must equal wgml_tensor_nbytes.  Works on views (strided writes/reads). */
wgml_status wgml_tensor_upload(wgml_tensor *t, const void *src, uint64_t bytes);
wgml_status wgml_tensor_download(const wgml_tensor *t, void *dst, uint64_t bytes);

/* Views (no copy).  Each returns a new handle that must be freed. */
wgml_status wgml_view_permute(const wgml_tensor *t, const int *perm, wgml_tensor **out);
wgml_status wgml_view_transpose(const wgml_tensor *t, int axis0, int axis1, wgml_tensor **out);
/* Elements start, start+step, ... < stop along axis (step >= 1). */
wgml_status wgml_view_slice(const wgml_tensor *t, int axis, int64_t start, int64_t stop, int64_t step,
                            wgml_tensor **out);
/* Contiguous tensors only (WGML_ERR_SHAPE otherwise); one dim may be -1. */
wgml_status wgml_view_reshape(const wgml_tensor *t, int ndim, const int64_t *shape, wgml_tensor **out);
/* Numpy broadcasting to `shape` (stride 0 on expanded dims). */
wgml_status wgml_view_broadcast(const wgml_tensor *t, int ndim, const int64_t *shape, wgml_tensor **out);

/* ------------------------------------------------------------------ ops
 * Every op writes into a caller-made `out` (any layout, may be a view) whose
 * shape and dtype must match what the op produces; mismatches return
 * WGML_ERR_SHAPE / WGML_ERR_DTYPE with a message.  Ops are recorded into the
 * context's stream; reading a tensor waits for them.
 *
 * Aliasing: an output may not share memory with an op's inputs, with one
 * exception: it may be the very same view (same offset, shape and strides)
 * for the ops that are correct in place — unary, binary, where, cast, copy,
 * tri, softmax, norm (x/residual as out or sum_out), cumsum, rope, glu
 * with a separate gate, dequantize of a plain dtype.  Any other overlap
 * (a shifted or transposed view of an input, roll/flip/permute/concat/
 * reductions/sorts/indexing into their own input) and any output with a
 * stride-0 (broadcast) dim is WGML_ERR_INVALID_ARG with a message, and
 * nothing is written: results never depend on the GPU's order of writes.
 * Views of one buffer that interleave without sharing an element (column
 * 0 and column 1 of a matrix) are not an overlap. */

typedef enum wgml_binary_op {
    WGML_ADD, WGML_SUB, WGML_MUL, WGML_DIV, WGML_POW, WGML_MAX, WGML_MIN, WGML_MOD,
    WGML_AND, WGML_OR, WGML_XOR,                 /* integer / bool only */
    WGML_EQ, WGML_NE, WGML_LT, WGML_LE, WGML_GT, WGML_GE, /* out: bool */
    WGML_BINARY_COUNT
} wgml_binary_op;
/* Numpy broadcasting between a and b.  Arithmetic (ADD .. MOD) needs a, b,
 * out of one dtype, float or integer; AND OR XOR integer or bool;
 * comparisons a, b of one plain dtype and a bool out.
 *
 * Integers compute in 32 bits and wrap modulo 2^bits.  DIV is floor
 * division (numpy //), MOD follows the sign of the divisor (numpy %,
 * Python); integer DIV and MOD by 0 give 0.
 *
 * Float MOD is numpy's remainder, exactly: r = fmod(x, y), computed
 * exactly from the bits (no division); when r != 0 and its sign differs
 * from y's, r + y rounded once to f32, as numpy does in the dtype; a zero
 * result has y's sign.  x = +-inf or y = +-0 give NaN; finite x with
 * y = +-inf gives x, or y itself when the signs differ.  f16/bf16 compute
 * in f32 and round to 16 bits (numpy's float16 rounds the same way).
 * Subnormal operands and results are exact too, except that the r + y
 * step is a float add, which a device that flushes subnormals may flush.
 *
 * NaN (float dtypes), decided on the bits before the op, so it holds on
 * devices whose float instructions ignore NaN: an operation with a NaN
 * operand gives NaN (MAX and MIN too: numpy's maximum/minimum, not
 * fmax/fmin), except POW(x, +-0) = 1 and POW(1, y) = 1 for any x, y,
 * NaN included (IEEE, C, numpy); EQ LT LE GT GE with a NaN are false and
 * NE is true (IEEE, numpy).  POW(-1, +-inf) = 1 as well.  Other inf
 * arithmetic (inf - inf, 0 * inf) is the device's IEEE arithmetic. */
wgml_status wgml_binary(wgml_binary_op op, const wgml_tensor *a, const wgml_tensor *b, wgml_tensor *out);

typedef enum wgml_unary_op {
    WGML_ABS, WGML_NEG, WGML_SIGN, WGML_EXP, WGML_EXPM1, WGML_LOG, WGML_LOG1P, WGML_SQRT, WGML_RSQRT,
    WGML_SQR, WGML_SIN, WGML_COS, WGML_TANH, WGML_SIGMOID, WGML_RELU, WGML_LEAKY_RELU /* p0 slope */,
    WGML_ELU /* p0 alpha */, WGML_SELU, WGML_GELU_ERF, WGML_GELU_TANH, WGML_GELU_QUICK, WGML_SILU,
    WGML_SOFTPLUS, WGML_MISH, WGML_HARDSWISH, WGML_HARDSIGMOID, WGML_STEP, WGML_CLAMP /* [p0, p1] */,
    WGML_FLOOR, WGML_CEIL, WGML_ROUND /* half to even */, WGML_TRUNC, WGML_RECIPROCAL, WGML_ERF,
    WGML_SCALE /* x * p0 + p1 */, WGML_NOT /* int/bool: logical for bool, bitwise for ints */,
    WGML_UNARY_COUNT
} wgml_unary_op;
/* x and out of one dtype.  Every op but NOT on f32/f16/bf16 (16-bit
 * floats compute in f32); ABS NEG SIGN SQR CLAMP SCALE RELU also on
 * i32/i8; NOT only on i32/u32/i8/u8/bool.  Other pairs: WGML_ERR_DTYPE.
 *
 * Integers (computed in i32): ABS, NEG and SQR wrap modulo 2^bits
 * (i8: ABS(-128) = NEG(-128) = -128, SQR(100) = 16; i32:
 * ABS(INT32_MIN) = INT32_MIN); SIGN is -1/0/1; RELU max(x, 0); CLAMP
 * min(max(x, lo), hi) with lo, hi = p0, p1 converted as wgml_cast
 * converts floats (toward zero, saturated to i32, NaN -> 0).  SCALE is
 * f32(x) * p0 + p1 in f32 (x rounds to f32 above 2^24; the driver may
 * fuse the multiply-add: one or two roundings), converted like wgml_cast:
 * truncated toward zero, saturated to the dtype (i8: SCALE(100, 3, 0) =
 * 127, not a wrapped 44), NaN -> 0.
 *
 * Floats.  NaN: every op maps NaN to NaN (decided on the bits, as numpy
 * does: SIGN, RELU, LEAKY_RELU, STEP, CLAMP, HARDSIGMOID, HARDSWISH,
 * FLOOR, CEIL, ROUND, TRUNC of NaN are NaN, not 0 or a bound).  Domains:
 * LOG, SQRT, RSQRT of x < 0 and LOG1P of x < -1 are NaN; LOG(+-0) =
 * LOG1P(-1) = -inf; RSQRT(+0) = +inf; RECIPROCAL(+-0) = +-inf; SIN and
 * COS of +-inf are NaN.  At +-inf every other op gives its limit: TANH
 * and ERF +-1, SIGMOID and HARDSIGMOID and STEP 0 / 1, EXP 0 / inf,
 * EXPM1 -1 / inf, SOFTPLUS 0 / inf, ELU -p0 / inf, SELU -1.7581 / inf,
 * SILU GELU_ERF GELU_TANH GELU_QUICK MISH HARDSWISH 0 / inf (a zero
 * with the sign of the limit, -0, where the device keeps zero signs),
 * CLAMP p0 / p1, RECIPROCAL and RSQRT 0.
 * Accuracy of the transcendental ops and activations, relative to the
 * result and in both tails, on a device that meets WGSL's accuracy rules:
 * within (16 + 4 cond(x)) 2^-23, cond(x) = |x f'(x) / f(x)| (the 4 cond(x)
 * is WGSL's exp error, 3 + 2|z| ulps at z, plus the rounding of exp's
 * argument z; tests/test_op_elementwise_edges.c derives it).  Nothing
 * cancels (no 1 + tanh(u), no 1 + erf(x)) and no builtin tanh is used
 * (some devices' tanh misses +-1): SILU(-90) = -7.4e-38, MISH(-20) = -4.1e-8,
 * GELU_ERF(-10) = -7.6e-23, GELU_TANH(-9) = -1.3e-28, TANH(1e-20) =
 * 1e-20.  Where a result lies below the smallest normal f32 (1.2e-38;
 * for f16 outputs 6.1e-5) a device that flushes subnormals may return a
 * zero of the result's sign.  LOG on [0.5, 2]: WGSL's 2^-21 absolute.
 * SIN and COS: WGSL's 2^-11 absolute on [-pi, pi]. */
wgml_status wgml_unary(wgml_unary_op op, const wgml_tensor *x, wgml_tensor *out, float p0, float p1);
/* Every element of out = value, converted to out's dtype as wgml_cast
 * converts a float (NaN: a NaN in float dtypes, 0 in integers, true in
 * bool). */
wgml_status wgml_fill(wgml_tensor *out, double value);
/* out = cond ? a : b, broadcasting all three; cond is bool.  Elements are
 * copied bit for bit, NaN included. */
wgml_status wgml_where(const wgml_tensor *cond, const wgml_tensor *a, const wgml_tensor *b, wgml_tensor *out);

/* Conversion to out's dtype.  Float -> int truncates toward zero and
 * saturates (NaN -> 0); float -> f16/bf16 rounds to nearest even, overflow
 * to inf, NaN stays NaN; int -> int wraps modulo 2^bits; anything -> bool
 * is (x != 0), so NaN -> true.
 * Also copies between any strides (same dtype: a plain copy, "contiguous"
 * into a contiguous out, "set" into a view). */
wgml_status wgml_cast(const wgml_tensor *x, wgml_tensor *out);
wgml_status wgml_copy(const wgml_tensor *x, wgml_tensor *out);

/* Materialised data movement. */
wgml_status wgml_permute(const wgml_tensor *x, const int *perm, wgml_tensor *out);
/* out's shape is a multiple of x's in every dim (repeat) or x broadcasts
 * to it (expand). */
wgml_status wgml_repeat(const wgml_tensor *x, wgml_tensor *out);
wgml_status wgml_concat(const wgml_tensor *const *xs, int n, int axis, wgml_tensor *out);
typedef enum wgml_pad_mode { WGML_PAD_CONSTANT, WGML_PAD_REFLECT, WGML_PAD_EDGE, WGML_PAD_CIRCULAR } wgml_pad_mode;
/* before/after: per dim of x (ndim entries). */
wgml_status wgml_pad(const wgml_tensor *x, const int64_t *before, const int64_t *after, wgml_pad_mode mode,
                     double value, wgml_tensor *out);
wgml_status wgml_flip(const wgml_tensor *x, unsigned axes_mask, wgml_tensor *out);
/* shifts: per dim of x, elements move toward higher indices. */
wgml_status wgml_roll(const wgml_tensor *x, const int64_t *shifts, wgml_tensor *out);
/* Keeps the lower (upper=0) or upper triangle of the last two dims,
 * relative to diagonal k; other elements become 0. */
wgml_status wgml_tri(const wgml_tensor *x, int upper, int64_t k, wgml_tensor *out);
/* x [..., n] -> out [..., n, n] diagonal matrix; x [..., n, n] -> out [..., n]. */
wgml_status wgml_diag(const wgml_tensor *x, wgml_tensor *out);

/* Indexing.  Index tensors are i32, checked on the GPU (no index op
 * waits for the GPU, and index ops can be recorded and replayed): an
 * out-of-range index is reported by the next sync (wgml_ctx_sync, or a
 * read: wgml_buffer_read / wgml_tensor_download) as WGML_ERR_INDEX naming
 * the op, the position, the value and the limit; the op writes nothing.
 * Other ops of the batch run as usual (one reading the unwritten output
 * reads its old contents); with several bad calls the first is named.
 * The call itself returns WGML_ERR_INDEX only for a bad axis.
 * Index tensors may be any view
 * (offset, step slice, permuted, broadcast), for quantised tables too.
 * NaN: get_rows, set_rows, gather, index_select and embedding move NaN
 * like any value: bit for bit (sign and payload) when the destination has
 * the source's dtype, still NaN when converted (f16/bf16 -> f32, f32 ->
 * f16/bf16).  scatter_add adds: a NaN in dst or among its added terms
 * makes that sum NaN. */
/* src [rows, ...] any dtype (quantised included) -> out [n_idx, ...] f32
 * (or src's dtype for plain types when out has it). */
wgml_status wgml_get_rows(const wgml_tensor *src, const wgml_tensor *idx, wgml_tensor *out);
/* dst[idx[i], :] = src[i, :]; dst f32/f16/bf16/q8_0/q4_0, src f32. */
wgml_status wgml_set_rows(wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src);
/* torch.gather: out[i][j] = src[i][idx[i][j]] along axis; out shape = idx shape. */
wgml_status wgml_gather(const wgml_tensor *src, int axis, const wgml_tensor *idx, wgml_tensor *out);
/* torch.scatter_add_: dst[...idx[i]...] += src[i] along axis (f32/i32). */
wgml_status wgml_scatter_add(wgml_tensor *dst, int axis, const wgml_tensor *idx, const wgml_tensor *src);
/* out = src with axis indexed by the 1-D idx. */
wgml_status wgml_index_select(const wgml_tensor *src, int axis, const wgml_tensor *idx, wgml_tensor *out);
/* idx [...] -> out [..., classes]: 1 at idx, 0 elsewhere (any numeric out dtype). */
wgml_status wgml_one_hot(const wgml_tensor *idx, wgml_tensor *out);
/* Lookup of token ids in a [vocab, dim] table (get_rows). */
wgml_status wgml_embedding(const wgml_tensor *table, const wgml_tensor *ids, wgml_tensor *out);
/* Dequantise (or convert) a whole tensor to f32/f16/bf16. */
wgml_status wgml_dequantize(const wgml_tensor *x, wgml_tensor *out);

/* Reductions over the axes in axes_mask (bit i = axis i); out has x's
 * ndim with reduced axes of size 1.  ARGMAX/ARGMIN: exactly one axis, out
 * i32, first occurrence wins.  VAR/STD: correction = p0 (0: population,
 * 1: sample).  Float inputs accumulate in f32 with a tree order.
 * NaN (numpy's and PyTorch's rules): a NaN among the reduced elements
 * makes SUM, MEAN, PROD, L2NORM, LOGSUMEXP, VAR and STD NaN, and RMAX /
 * RMIN NaN too (NaN propagates, like numpy's max, not fmax);
 * ARGMAX/ARGMIN give the index of the first NaN.  Infinities follow IEEE
 * arithmetic: +inf and -inf together make SUM, MEAN, VAR and STD NaN;
 * LOGSUMEXP with a +inf (and no NaN) is +inf. */
typedef enum wgml_reduce_op {
    WGML_SUM, WGML_MEAN, WGML_RMAX, WGML_RMIN, WGML_PROD, WGML_ARGMAX, WGML_ARGMIN,
    WGML_LOGSUMEXP, WGML_VAR, WGML_STD, WGML_L2NORM, WGML_REDUCE_COUNT
} wgml_reduce_op;
wgml_status wgml_reduce(wgml_reduce_op op, const wgml_tensor *x, unsigned axes_mask, float p0, wgml_tensor *out);
/* Running sums along axis (exclusive: of the elements before).  NaN (as
 * numpy): every output from a NaN's position on along the axis is NaN;
 * the outputs before it are not affected (nor are other rows). */
wgml_status wgml_cumsum(const wgml_tensor *x, int axis, int exclusive, wgml_tensor *out);
/* Indices (i32) sorting each row of the last axis; stable.  NaN sorts
 * after +inf ascending (numpy) and before +inf descending (PyTorch), NaNs
 * among themselves in index order; -0 and +0 are equal. */
wgml_status wgml_argsort(const wgml_tensor *x, int descending, wgml_tensor *out);
/* Largest k of each row (last axis), sorted descending; values and/or
 * indices may be NULL.  NaN counts as larger than +inf (torch.topk): the
 * NaNs of a row come first, in index order. */
wgml_status wgml_top_k(const wgml_tensor *x, int64_t k, wgml_tensor *values, wgml_tensor *indices);

/* softmax (log=1: log_softmax) of scale * x + slope(h) * mask over any
 * axis (p NULL: defaults).  mask f32/f16/bf16, numpy-broadcast to x.
 * ALiBi (max_bias > 0, with a mask): h = index on dim -3 of x, ggml's
 * slopes.  sinks: 1-D [n_head] logits joining max and sum only.  -inf
 * logits give 0 (log: -inf), fully masked rows included.  NaN (as
 * PyTorch): a NaN logit in a row (from x or the mask) or a NaN sink makes
 * the whole row NaN, softmax and log_softmax alike, and so does a +inf
 * logit or sink (exp(inf - inf)); other rows are unaffected. */
typedef struct wgml_softmax_params {
    int axis;          /* default -1 */
    float scale;       /* 0 means 1 */
    float max_bias;    /* ALiBi: 0 = off; slopes per head (dim -3) as in ggml */
    int log;           /* 1: log_softmax */
} wgml_softmax_params;
wgml_status wgml_softmax(const wgml_tensor *x, const wgml_tensor *mask, const wgml_tensor *sinks,
                         const wgml_softmax_params *p, wgml_tensor *out);

/* LAYER/RMS/L2 over the last axis (weight/bias/residual broadcast to x;
 * L2: v / max(|v|, eps)); GROUP/BATCH on x [N, C, ...] with [C]
 * weight/bias/mean/var.  eps used as given (>= 0).  residual: x + residual
 * is normalised and, when sum_out is given, also written there (the fused
 * residual add); RMS_NORM with a weight is one pass (fused rms_norm x w).
 * NaN (as PyTorch): LAYER/RMS/L2 write a row whose values (x + residual)
 * hold a NaN as all NaN (L2's max(|v|, eps) is NaN then), GROUP_NORM
 * likewise a group.  BATCH_NORM is per element: a NaN in x, or a
 * channel's NaN mean or var, reaches only the outputs made from it; a NaN
 * weight or bias only its own outputs; sum_out is the plain per-element
 * sum. */
typedef enum wgml_norm_kind { WGML_LAYER_NORM, WGML_RMS_NORM, WGML_L2_NORM, WGML_GROUP_NORM, WGML_BATCH_NORM } wgml_norm_kind;
typedef struct wgml_norm_params {
    wgml_norm_kind kind;
    float eps;
    int groups;                     /* GROUP_NORM */
    const wgml_tensor *weight, *bias;
    const wgml_tensor *residual;
    const wgml_tensor *mean, *var;  /* BATCH_NORM running stats */
    wgml_tensor *sum_out;
} wgml_norm_params;
wgml_status wgml_norm(const wgml_tensor *x, const wgml_norm_params *p, wgml_tensor *out);

/* Rotary position embedding on x [..., seq, heads, head_dim] (ggml layout:
 * positions per token), NORMAL (adjacent pairs) or NEOX (halves).  NaN:
 * the rotation mixes the two elements of a pair, so a NaN in either makes
 * both outputs of that pair NaN (at that position and head; also at angle
 * 0, since NaN * sin 0 is NaN); elements past n_dims pass through as
 * they are; a NaN freq_factor makes its pair NaN everywhere.  Nothing
 * else is affected. */
typedef enum wgml_rope_mode { WGML_ROPE_NORMAL, WGML_ROPE_NEOX, WGML_ROPE_MROPE } wgml_rope_mode;
typedef struct wgml_rope_params {
    wgml_rope_mode mode;
    int n_dims;                      /* rotated dims (<= head_dim); rest copied */
    float freq_base, freq_scale;     /* 10000, 1 */
    float ext_factor, attn_factor, beta_fast, beta_slow; /* YaRN; ext_factor 0 = off */
    int n_ctx_orig;
    int sections[4];                 /* M-RoPE */
    const wgml_tensor *freq_factors; /* optional [n_dims/2] f32 */
    int n_heads_rot;                 /* 0: every head; else heads from this one on are copied unrotated
                                      * (a q|k|v block roped in one pass, v passing through) */
} wgml_rope_params;
wgml_status wgml_rope(const wgml_tensor *x, const wgml_tensor *pos, const wgml_rope_params *p, wgml_tensor *out);

typedef enum wgml_glu_kind { WGML_SWIGLU, WGML_GEGLU_ERF, WGML_GEGLU_TANH, WGML_REGLU } wgml_glu_kind;
/* gate NULL: x [..., 2n] holds [a, g] halves (swapped=1: [g, a]);
 * out [..., n] = act(a) * g.  NaN, per element (as PyTorch): out is NaN
 * where a or g is -- act(NaN) is NaN for every kind, REGLU's relu
 * included, and act(a) * NaN is NaN even where act(a) is 0. */
wgml_status wgml_glu(wgml_glu_kind kind, const wgml_tensor *x, const wgml_tensor *gate, int swapped,
                     wgml_tensor *out);

/* Sampling from logits rows [rows, vocab] (f32) into out [rows] i32.
 * temperature 0 = greedy; top_k 0 and top_p 1 mean no restriction; min_p
 * 0 = off.  Counter-based RNG: same seed, same draws.  NaN logits rank
 * below -inf and are never drawn while the row has any other logit; a
 * row whose largest logit is not finite is greedy (the first largest in
 * the order NaN < -inf < ... < +inf), so a row of NaN gives 0.  Every
 * row gets an index in [0, vocab); NaN never stalls a row. */
typedef struct wgml_sample_params {
    float temperature;
    int top_k;
    float top_p, min_p;
    uint64_t seed;
} wgml_sample_params;
wgml_status wgml_sample(const wgml_tensor *logits, const wgml_sample_params *p, wgml_tensor *out);
/* wgml_sample whose seed is p->seed plus seed's first element (an i32 or
 * u32 tensor of >= 1 element, read on the GPU when the op runs, never on
 * the host), mod 2^64: u32 zero-extended, i32 sign-extended.  So element
 * 0 draws exactly as wgml_sample, and element s as wgml_sample with
 * p->seed + s; a compiled graph (wgml_g_sample) draws anew each run when
 * only that tensor is rewritten (a decoder's step counter).  seed NULL is
 * wgml_sample. */
wgml_status wgml_sample_seeded(const wgml_tensor *logits, const wgml_tensor *seed, const wgml_sample_params *p,
                               wgml_tensor *out);

/* ------------------------------------------------ matmul and attention */

typedef enum wgml_activation { WGML_ACT_NONE, WGML_ACT_RELU, WGML_ACT_GELU, WGML_ACT_SILU } wgml_activation;

/* out = act(alpha * A.B + beta * out + bias), accumulated in f32.
 * p NULL: alpha 1, beta 0, no activation; alpha and beta are used as given
 * (alpha 0 is a valid product).  beta 0: out is never read (NaN or garbage
 * there does not leak).  k = 0 gives act(beta * out + bias).  Zero-size
 * m or n: nothing to do.  GELU is the erf form (PyTorch's default). */
/* How a GEMM may round (wgml_matmul_params.precision).
 *   WGML_PREC_F32: f32 products and sums (the default: 0).
 *   WGML_PREC_F16: the operands rounded to f16 (to nearest or either
 *     neighbour, as WGSL's conversions allow) and each output's products
 *     and partial sums over one k tile (16 or 32 terms) kept in f16, the
 *     tiles' sums added in f32: about twice the throughput of f32 on GPUs
 *     with f16 arithmetic (ShaderF16), for an error of ~(tile + 2) f16
 *     roundings of the sum of |products| (README: "Precision").  Every
 *     operand, product and partial sum must stay within f16's range
 *     (|v| < 65504; beyond it the result is undefined, typically inf).
 *     Where the device has no ShaderF16, or the shape takes a small,
 *     split-K or mat-vec kernel, the product runs in f32 as if
 *     WGML_PREC_F32. */
typedef enum wgml_precision { WGML_PREC_F32, WGML_PREC_F16 } wgml_precision;

typedef struct wgml_matmul_params {
    float alpha;
    float beta;
    wgml_activation act;
    wgml_precision precision;
} wgml_matmul_params;

/* a [..., m, k] . b [..., k, n] -> out [..., m, n]: f32, f16, bf16 in any
 * mix (out too).  Up to two leading batch dims, numpy-broadcast between a
 * and b.  Transposes come from strides: a view from wgml_view_transpose is
 * a transposed operand, read directly when either of its two inner strides
 * is 1 (other layouts are copied first).  bias [n] (or broadcastable to
 * out), any float dtype, may be NULL. */
wgml_status wgml_matmul(const wgml_tensor *a, const wgml_tensor *b, const wgml_tensor *bias,
                        const wgml_matmul_params *p, wgml_tensor *out);

/* A weight product in GGUF/ggml layout: w [n, k] in f32, f16, bf16 or any
 * GGUF block type (q4_0 ... q6_K, iq4_nl, mxfp4: blocks along k), x
 * [..., m, k] f32 or f16: out [..., m, n] = act(alpha * x . w^T + beta *
 * out + bias).  For a dense w, the same as wgml_matmul(x, w^T).  A few
 * rows (decode) take a mat-vec path, more rows a tiled GEMM that
 * dequantises while it loads tiles. */
wgml_status wgml_linear(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *bias,
                        const wgml_matmul_params *p, wgml_tensor *out);

/* Mixture of experts (ggml's mul_mat_id): w [experts, n, k] (dtypes as
 * wgml_linear), ids [tokens, used] i32, x [tokens, used or 1, k]:
 * out [tokens, used, n], out[t, u] = w[ids[t, u]] . x[t, u (or 0)].
 * An id outside [0, experts) writes nothing and is WGML_ERR_INDEX at the
 * next sync.  Few pairs (decode) run a mat-vec per pair; prefill sorts the
 * pairs by expert on the GPU and runs each expert's pairs as one GEMM
 * (WGML_FORCE=linear_id=matvec|grouped forces a path). */
wgml_status wgml_linear_id(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *ids,
                           wgml_tensor *out);

/* Attention, forward: out = softmax(scale * q.k^T (+ masks)) . v, computed
 * flash-style (online softmax over key tiles, nothing of size sq x skv is
 * stored).  q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv],
 * out [B, Hq, Sq, Dv]; Hq a multiple of Hkv (GQA, MQA).  Any strides: the
 * [B, S, H, D] layout is a wgml_view_permute(x, {0, 2, 1, 3}) view, out
 * included.  q f32/f16; k and v f32, f16 or q8_0; out f32 or f16.
 * Query i sits at position i + Skv - Sq (bottom-right alignment, so one
 * query against a KV cache is the cache's last position).
 * mask: additive (f32/f16) or boolean (bool/u8: nonzero keeps), numpy-
 * broadcast to [B, Hq, Sq, Skv]; may be NULL.  sinks: [Hq] f32 logits
 * that join each row's softmax denominator only (may be NULL).  A row
 * with every key masked gives 0. */
typedef struct wgml_attn_params {
    float scale;      /* 0 means 1/sqrt(D) */
    int causal;       /* 1: key j is visible to query i when j <= i + Skv - Sq */
    int64_t window;   /* > 0: sliding window, also j > i + Skv - Sq - window */
    float softcap;    /* > 0: s = softcap * tanh(s / softcap) before masks (Gemma 2) */
    float max_bias;   /* ALiBi: > 0 multiplies the mask by the head's slope (ggml's slopes) */
    int out_bshd;     /* 1: out is [B, Sq, Hq, Dv] (heads interleaved), so in a graph the
                         [B * Sq, Hq * Dv] reshape an output projection reads is a view, not a
                         copy; 0: out is [B, Hq, Sq, Dv] (any strides, eagerly) */
} wgml_attn_params;
wgml_status wgml_attention(const wgml_tensor *q, const wgml_tensor *k, const wgml_tensor *v,
                           const wgml_tensor *mask, const wgml_tensor *sinks, const wgml_attn_params *p,
                           wgml_tensor *out);

/* The op registry: one row per op, with the dtypes it supports. */
typedef struct wgml_op_info {
    const char *name;
    const char *family;
    uint32_t dtypes;  /* bit per wgml_dtype accepted as main input */
} wgml_op_info;
size_t wgml_op_count(void);
const wgml_op_info *wgml_op_get(size_t i);

#ifdef __cplusplus
}
#endif
#endif /* WGML_H */
