/*
 * Indexing family (indexing.c, kernels/indexing.wgsl): get_rows, set_rows,
 * gather, scatter_add, index_select, one_hot, embedding; the hooks through
 * which quantised tensors reach the quant family; and CPU references.
 *
 * Shape rule shared by get_rows and set_rows ("rows" ops), ggml's batched
 * get_rows in row-major order:
 *     idx [B..., n] (i32, 1 <= idx.ndim <= table.ndim)
 *     table [B..., rows, R...]   (the first idx.ndim - 1 dims equal idx's)
 *     rows  [B..., n,    R...]   (get_rows' out / set_rows' src)
 * so a 1-D idx picks rows of dim 0, and idx [b, n] picks per batch row of
 * dim 1.  Every index must lie in [0, rows): indexing.c checks them on the
 * GPU before any other pass, and a bad one makes the call write nothing
 * and the next sync return WGML_ERR_INDEX (the device error word,
 * runtime.h).  set_rows with a repeated index in one batch: the last
 * occurrence wins (as sequential assignment would do), decided on the GPU
 * through a scratch of winners (wg_set_rows_scratch_bytes).
 */
#ifndef WGML_INDEXING_H
#define WGML_INDEXING_H

#include "ops.h"

/*
 * Quantised tables, implemented by the quant family (src/ops/quant*.c).
 * indexing.c calls them only after validating everything on the host
 * (non-NULL tensors of one context, idx i32 and the shape rule above, with
 * the quantised rows along src/dst's last dim, so idx.ndim < table.ndim;
 * (get_rows) out f32/f16/bf16 or (set_rows) src f32 and dst quantised) and
 * after recording the CHECK pass of the indices.  Their writing passes
 * bind the error word (wg_errword_bind) and write nothing when its CUR
 * word is set; they skip indices outside the table, and never read
 * indices on the host.
 *
 * wg_set_rows_quant receives win, the winners scratch (NULL when idx has
 * one index per batch): a src row is written only when it is its
 * destination row's last occurrence, which makes "last writer wins" hold
 * for whole blocks.  Any view of the indices is read in place.
 *
 * Both are defined in quant_gpu.c.
 */
/* get_rows fast path (get_rows_vec4.c): false when the case does not
 * apply (then nothing was recorded); else *st is the outcome. */
bool wg_get_rows_vec4(const wgml_tensor *src, const wgml_tensor *idx, wgml_tensor *out, wgml_status *st);

/* get_rows from a quantised src whose first nb dims are batch dims shared
 * with idx (get_rows: idx->ndim - 1); idx's other dims, in logical order,
 * pick rows of src's dim nb (embedding passes nb = 0: ids of any shape pick
 * rows of a 2-D table).  idx may be any view; op names the caller in
 * messages. */
wgml_status wg_get_rows_quant(const char *op, const wgml_tensor *src, const wgml_tensor *idx, int nb,
                              wgml_tensor *out);
wgml_status wg_set_rows_quant(wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src,
                              const wgml_tensor *win);

/* Scratch set_rows(dst, idx, src) takes from the buffer pool for its
 * duplicate handling (0: none), declared so that a graph planner can
 * reserve it: one i32 per (batch, table row) when a batch has several
 * indices. */
uint64_t wg_set_rows_scratch_bytes(const wgml_tensor *dst, const wgml_tensor *idx);

/* ------------------------------------------------------------ references
 * Host arrays in logical row-major order, values as doubles (rounding to
 * the output dtype is the caller's business); idx values must be in range.
 */

/* get_rows: src (ndim, src_shape), idx (idx_ndim, idx_shape) -> out. */
void wg_get_rows_ref(int ndim, const int64_t *src_shape, const double *src, int idx_ndim, const int64_t *idx_shape,
                     const int32_t *idx, double *out);
/* set_rows, applied in order (the last duplicate wins); -1 skips a row. */
void wg_set_rows_ref(int ndim, const int64_t *dst_shape, double *dst, int idx_ndim, const int64_t *idx_shape,
                     const int32_t *idx, const double *src);
/* torch.gather: out has idx's shape. */
void wg_gather_ref(int ndim, const int64_t *src_shape, const double *src, int axis, const int64_t *idx_shape,
                   const int32_t *idx, double *out);
/* torch.scatter_add_ (double accumulation); src_shape >= idx_shape. */
void wg_scatter_add_ref(int ndim, const int64_t *dst_shape, double *dst, int axis, const int64_t *idx_shape,
                        const int32_t *idx, const int64_t *src_shape, const double *src);
/* index_select with n indices along axis. */
void wg_index_select_ref(int ndim, const int64_t *src_shape, const double *src, int axis, int64_t n,
                         const int32_t *idx, double *out);
/* one_hot: n indices -> out [n, classes]. */
void wg_one_hot_ref(int64_t n, const int32_t *idx, int64_t classes, double *out);

wg_op_table wg_indexing_ops(void);

#endif
