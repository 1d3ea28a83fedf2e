/*
 * Internal interface shared by the op families (src/ops): the tensor
 * struct, dtype facts, shape/validation helpers, the strided launcher that
 * every elementwise-shaped kernel uses, and host-side element access for
 * the CPU references.
 *
 * Conventions every op follows:
 *   - validate everything first (wg_fail with a message), then record work;
 *   - views are padded on the left to 4-D (wg_view4) before reaching a
 *     kernel; strides are in elements and never negative;
 *   - each family file holds its shape rules, its dispatch and its CPU
 *     reference (`*_ref` functions on host arrays), tested against each
 *     other in tests/test_op_*.c.
 */
#ifndef WGML_OPS_H
#define WGML_OPS_H

#include "gpu/runtime.h"

#include <stdio.h>

typedef struct wg_storage {
    wgml_buffer *buf;
    int refs;
} wg_storage;

struct wgml_tensor {
    wgml_ctx *ctx;
    wg_storage *st;
    uint64_t offset;            /* bytes into the buffer */
    wgml_dtype dtype;
    int ndim;
    int64_t shape[WGML_MAX_DIMS];
    int64_t strides[WGML_MAX_DIMS]; /* elements (blocks' elements for quantised rows) */
};

/* ------------------------------------------------------------ dtypes */

enum { WG_KIND_FLOAT, WG_KIND_INT, WG_KIND_UINT, WG_KIND_BOOL, WG_KIND_QUANT };

typedef struct wg_dtype_info {
    const char *name;
    uint32_t block_bytes, block_elems;
    int kind;
    const char *wgsl;   /* name for #tensor (NULL for quantised) */
} wg_dtype_info;

const wg_dtype_info *wg_dtype(wgml_dtype t); /* NULL if out of range */
bool wg_dtype_is_float(wgml_dtype t);
bool wg_dtype_is_plain(wgml_dtype t);        /* not quantised */
#define WG_DT_BIT(t) (1u << (t))
#define WG_DT_FLOATS (WG_DT_BIT(WGML_F32) | WG_DT_BIT(WGML_F16) | WG_DT_BIT(WGML_BF16))
#define WG_DT_INTS (WG_DT_BIT(WGML_I32) | WG_DT_BIT(WGML_U32) | WG_DT_BIT(WGML_I8) | WG_DT_BIT(WGML_U8))
#define WG_DT_PLAIN (WG_DT_FLOATS | WG_DT_INTS | WG_DT_BIT(WGML_BOOL))

/* ------------------------------------------------------------ shapes */

/* A view padded on the left to 4-D. */
typedef struct wg_view4 {
    int64_t shape[4];
    int64_t strides[4];
    uint64_t offset;     /* elements from the buffer start */
} wg_view4;

wg_view4 wg_view4_of(const wgml_tensor *t);
/* t broadcast (numpy rules) to the 4-D iteration shape `iter`; false if
 * it does not broadcast. */
bool wg_view4_bcast(const wgml_tensor *t, const int64_t iter[4], wg_view4 *out);
/* out's own 4-D shape (for ops whose iteration space is the output). */
void wg_shape4(const wgml_tensor *t, int64_t out[4]);
int64_t wg_nelem4(const int64_t s[4]);
/* Element index (from the buffer start) of the last element a view with
 * this offset and these strides touches over the 4-D space `iter`. */
uint64_t wg_span_last(uint64_t offset, const int64_t strides[4], const int64_t iter[4]);
bool wg_view4_contiguous(const wg_view4 *v);

/* Normalises a negative axis; -1 when out of range. */
int wg_axis(const wgml_tensor *t, int axis);
/* Numpy broadcast of two shapes into out (ndim = max); false if they clash. */
bool wg_broadcast_shapes(const wgml_tensor *a, const wgml_tensor *b, int *ndim, int64_t shape[4]);
/* Checks out has ndim/shape (NULL shape: skip) and dtype (-1: skip). */
wgml_status wg_check_out(const char *op, const wgml_tensor *out, int dtype, int ndim, const int64_t *shape);
wgml_status wg_check_tensor(const char *op, const char *what, const wgml_tensor *t);
bool wg_same_ctx(const wgml_tensor *a, const wgml_tensor *b);
/* Write hazards (overlap.c).  An output with a stride-0 dim of size > 1
 * is refused (its elements alias).  wg_check_writes also refuses an out
 * sharing memory with an input, given as (name, tensor) pairs ended by a
 * NULL name (NULL tensors are skipped), except the same view when inplace_ok (ops where every
 * element or row is read by the invocation that writes it). */
wgml_status wg_check_out_writable(const char *op, const char *what, const wgml_tensor *out);
wgml_status wg_check_writes(const char *op, const char *out_name, const wgml_tensor *out, bool inplace_ok, ...);
#define WG_END ((const char *)NULL)
bool wg_tensors_overlap(const wgml_tensor *a, const wgml_tensor *b);
/* An op's scratch: a zeroed contiguous tensor from the context's scratch
 * provider (a graph's arena, runtime.h) or the pool.  Free it right after
 * dispatching, like any tensor. */
wgml_status wg_scratch_tensor(wgml_ctx *ctx, wgml_dtype dt, int ndim, const int64_t *shape, wgml_tensor **out);
/* The same without the zeroing fill, for an op that writes every element
 * before it reads any (a dequantised weight: 235 MB of fill saved a
 * prefill linear of an 8B model). */
wgml_status wg_scratch_tensor_raw(wgml_ctx *ctx, wgml_dtype dt, int ndim, const int64_t *shape, wgml_tensor **out);
/* A new handle on t's view and storage. */
wgml_status wg_tensor_dup(const wgml_tensor *t, wgml_tensor **out);
/* A contiguous tensor of dt/shape at byte_offset of base's buffer (sharing
 * its storage): how a graph places its nodes in its arena. */
wgml_status wg_tensor_alias(const wgml_tensor *base, uint64_t byte_offset, wgml_dtype dt, int ndim,
                            const int64_t *shape, wgml_tensor **out);
/* Formats a shape "[2, 3, 4]". */
const char *wg_shape_str(const wgml_tensor *t, char *buf, size_t n);

/* ------------------------------------------------------------ windows */

/*
 * The window binder shared by every launcher whose operands may exceed one
 * storage binding (window.c).  An operand is a buffer, an element offset
 * and four strides over a 4-D iteration space ([0] outermost); its window
 * is the byte range from its first to its last element, plus `tail`
 * elements past the last one that its kernel also reads (a run of per-row
 * partials, a position table's streams).
 *
 * wg_win_split runs a callback on blocks of the space whose windows all
 * fit one binding (wg_window_cap) and which hold at most max_elems
 * elements.  It cuts the outermost dim > 1 among dims 0..nsplit-1 into as
 * few equal chunks as fit (or into single slices when not even one slice
 * fits, then cuts the next dim), moving every operand by start times its
 * stride, so element indexing stays right for strided views and for
 * broadcast (stride 0) operands alike.  nsplit = 4 lets the innermost dim
 * be cut too (elementwise kernels); row kernels pass 3, since a row is
 * one workgroup's.  A block that still does not fit once dims 0..nsplit-1
 * are all 1 fails with WGML_ERR_LIMIT naming `who` and the widest operand.
 */
typedef struct wg_win {
    wgml_buffer *buf;   /* NULL: absent or virtual (moved with the cuts, never checked) */
    uint64_t offset;    /* elements from the buffer start */
    int64_t st[4];      /* >= 0 */
    uint64_t esz;       /* bytes per element */
    uint64_t tail;      /* elements read past the last indexed one */
    const char *name;   /* for messages */
} wg_win;

/* The operand of a tensor viewed as v. */
wg_win wg_win_of(const wgml_tensor *t, const wg_view4 *v, const char *name);
/* Bytes operand w spans over iter. */
uint64_t wg_win_bytes(const wg_win *w, const int64_t iter[4]);
/* Whether every present window fits one binding and iter has at most
 * max_elems elements. */
bool wg_win_fits(const wgml_ctx *ctx, const wg_win *w, int n, const int64_t iter[4], uint64_t max_elems);
/* w's window over iter as a binding; *off: w's first element within it. */
wg_binding wg_win_bind(const wg_win *w, const int64_t iter[4], uint32_t *off);
/* Binds t's elements [0, span) from its view offset whole (a fused
 * epilogue's operands): the binding and the first element's index in it;
 * false when they do not fit one binding. */
bool wg_bind_elems(const wgml_tensor *t, uint64_t span, wg_binding *b, uint32_t *first);

/* The most elements along d a block of iter (dims before d all 1) may
 * take with every window fitting; 0 when not even one slice fits. */
int64_t wg_win_most(const wgml_ctx *ctx, const wg_win *w, int n, const int64_t iter[4], int d, uint64_t max_elems);

/* One block: the operands moved to its start, its sub-space and where it
 * starts in the whole space (kernels needing absolute coordinates). */
typedef wgml_status (*wg_win_fn)(void *user, const wg_win *w, const int64_t iter[4], const int64_t origin[4]);
wgml_status wg_win_split(wgml_ctx *ctx, const wg_win *w, int n, const int64_t iter[4], int nsplit, uint64_t max_elems,
                         const char *who, wg_win_fn fn, void *user);

/* ------------------------------------------------------------ launching */

/* One operand of a strided kernel: its tensor, its 4-D view over the
 * iteration space, and its #tensor name.  Written operands are `out`. */
typedef struct wg_operand {
    const wgml_tensor *t;
    wg_view4 v;
    const char *name;   /* "a", "b", "c", "o": defines NAME_DT and NAME_MODE */
    bool write;
} wg_operand;

/* Runs `entry` of `file` over the 4-D iteration space `iter` with up to 4
 * operands.  Binds each operand's window, splitting the space
 * (wg_win_split, down to chunks of one row) when an operand exceeds one
 * storage binding; sets <NAME>_DT,
 * <NAME>_MODE and CONTIG (all operands contiguous over `iter`) defines, and
 * passes wg_ew_params (below) to the kernel.  `defines` adds more. */
typedef struct wg_ew_params {
    uint32_t shape[4];      /* iteration space, [0] outermost */
    uint32_t n, pad0, pad1, pad2;
    uint32_t offs[4];       /* per operand, elements within its binding */
    uint32_t st[4][4];      /* per operand strides */
    float fp[4];
    uint32_t ip[4];
} wg_ew_params;

wgml_status wg_ew_launch(wgml_ctx *ctx, const char *file, const char *entry, const char *defines,
                         wg_operand *ops, int nops, const int64_t iter[4], const float fp[4],
                         const uint32_t ip[4]);

/* Whether `#tensor` can give a dtype vector accessors (NAME_ld4/NAME_st4,
 * src/gpu/wgsl_tensor.c): 32-bit plain types, and f16 with ShaderF16. */
bool wg_vec4_dtype(const wgml_ctx *ctx, wgml_dtype dt);

/* ------------------------------------------------------------ host side */

/* Element i (linear in the dtype's storage) of host data as double / set
 * from double with the dtype's rounding (cast rules in wgml.h). */
double wg_host_get(wgml_dtype t, const void *data, size_t i);
void wg_host_set(wgml_dtype t, void *data, size_t i, double v);
/* value converted to t (wgml_cast's rules) as the bits of t's compute type
 * (f32 / i32 / u32): how fill-like kernels receive a constant. */
uint32_t wg_value_bits(wgml_dtype t, double value);

/* The ops' implementations: the public wgml_* calls (eager.c) run the op
 * table's check, then these; the table's encodes call them directly. */
wgml_status wg_binary_impl(wgml_binary_op op, const wgml_tensor *a, const wgml_tensor *b, wgml_tensor *out);
wgml_status wg_unary_impl(wgml_unary_op op, const wgml_tensor *x, wgml_tensor *out, float p0, float p1);
wgml_status wg_fill_impl(wgml_tensor *out, double value);
wgml_status wg_where_impl(const wgml_tensor *cond, const wgml_tensor *a, const wgml_tensor *b, wgml_tensor *out);
wgml_status wg_cast_impl(const wgml_tensor *x, wgml_tensor *out);
wgml_status wg_copy_impl(const wgml_tensor *x, wgml_tensor *out);
wgml_status wg_permute_impl(const wgml_tensor *x, const int *perm, wgml_tensor *out);
wgml_status wg_repeat_impl(const wgml_tensor *x, wgml_tensor *out);
wgml_status wg_concat_impl(const wgml_tensor *const *xs, int n, int axis, wgml_tensor *out);
wgml_status wg_pad_impl(const wgml_tensor *x, const int64_t *before, const int64_t *after, wgml_pad_mode mode, double value, wgml_tensor *out);
wgml_status wg_flip_impl(const wgml_tensor *x, unsigned axes_mask, wgml_tensor *out);
wgml_status wg_roll_impl(const wgml_tensor *x, const int64_t *shifts, wgml_tensor *out);
wgml_status wg_tri_impl(const wgml_tensor *x, int upper, int64_t k, wgml_tensor *out);
wgml_status wg_diag_impl(const wgml_tensor *x, wgml_tensor *out);
wgml_status wg_get_rows_impl(const wgml_tensor *src, const wgml_tensor *idx, wgml_tensor *out);
wgml_status wg_set_rows_impl(wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src);
wgml_status wg_gather_impl(const wgml_tensor *src, int axis, const wgml_tensor *idx, wgml_tensor *out);
wgml_status wg_scatter_add_impl(wgml_tensor *dst, int axis, const wgml_tensor *idx, const wgml_tensor *src);
wgml_status wg_index_select_impl(const wgml_tensor *src, int axis, const wgml_tensor *idx, wgml_tensor *out);
wgml_status wg_one_hot_impl(const wgml_tensor *idx, wgml_tensor *out);
wgml_status wg_embedding_impl(const wgml_tensor *table, const wgml_tensor *ids, wgml_tensor *out);
wgml_status wg_dequantize_impl(const wgml_tensor *x, wgml_tensor *out);
wgml_status wg_reduce_impl(wgml_reduce_op op, const wgml_tensor *x, unsigned axes_mask, float p0, wgml_tensor *out);
wgml_status wg_cumsum_impl(const wgml_tensor *x, int axis, int exclusive, wgml_tensor *out);
wgml_status wg_argsort_impl(const wgml_tensor *x, int descending, wgml_tensor *out);
wgml_status wg_top_k_impl(const wgml_tensor *x, int64_t k, wgml_tensor *values, wgml_tensor *indices);
wgml_status wg_softmax_impl(const wgml_tensor *x, const wgml_tensor *mask, const wgml_tensor *sinks, const wgml_softmax_params *p, wgml_tensor *out);
wgml_status wg_norm_impl(const wgml_tensor *x, const wgml_norm_params *p, wgml_tensor *out);
wgml_status wg_rope_impl(const wgml_tensor *x, const wgml_tensor *pos, const wgml_rope_params *p, wgml_tensor *out);
wgml_status wg_glu_impl(wgml_glu_kind kind, const wgml_tensor *x, const wgml_tensor *gate, int swapped, wgml_tensor *out);
/* seed may be NULL: its first element (i32/u32, read on the GPU) is added
 * to p->seed (sample.c wg_sample_seed_add). */
wgml_status wg_sample_impl(const wgml_tensor *logits, const wgml_tensor *seed, const wgml_sample_params *p,
                           wgml_tensor *out);

/* Registry rows contributed by each family (registry.c joins them). */
typedef struct wg_op_table {
    const wgml_op_info *rows;
    size_t n;
} wg_op_table;

wg_op_table wg_elementwise_ops(void);
wg_op_table wg_movement_ops(void);
wg_op_table wg_indexing_ops(void);
wg_op_table wg_reduce_ops(void);
wg_op_table wg_softmax_ops(void);
wg_op_table wg_norm_ops(void);
wg_op_table wg_rope_ops(void);
wg_op_table wg_glu_ops(void);
wg_op_table wg_sample_ops(void);
wg_op_table wg_quant_ops(void);

#endif
