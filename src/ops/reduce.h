/* Reduce family: reductions, cumsum, argsort and top_k.  Names, dtype
 * rules and CPU references (double accumulation) shared by reduce.c,
 * reduce_sort.c and tests/test_op_reduce.c. */
#ifndef WGML_REDUCE_H
#define WGML_REDUCE_H

#include "ops.h"

const char *wg_reduce_name(wgml_reduce_op op);
/* Input dtypes each op accepts. */
uint32_t wg_reduce_dtypes(wgml_reduce_op op);
#define WG_CUMSUM_DTYPES (WG_DT_FLOATS | WG_DT_BIT(WGML_I32) | WG_DT_BIT(WGML_U32))
#define WG_SORT_DTYPES (WG_DT_FLOATS | WG_DT_INTS)
/* Pairs a row sorts in workgroup memory (16 KiB); longer rows sort
 * through a pair array in scratch (reduce_sort.c). */
#define WG_SORT_BLOCK 2048u

/* References on host data in logical (row-major) order, x of dtype dt.
 * Outputs are exact values before rounding to the output dtype (integer
 * results already wrapped like the GPU's). */
void wg_reduce_ref(wgml_reduce_op op, wgml_dtype dt, const double *x, int ndim, const int64_t *shape,
                   unsigned axes_mask, double p0, double *out);
void wg_cumsum_ref(wgml_dtype dt, const double *x, int ndim, const int64_t *shape, int axis, int exclusive,
                   double *out);
/* Stable sort of each row of the last axis; NaN sorts after +inf
 * ascending and first descending; -0 equals +0. */
void wg_argsort_ref(const double *x, int64_t rows, int64_t n, int descending, int32_t *idx);

/* For ops whose windows exceed one storage binding: halves the outermost
 * dim (other than `skip`) of size > 1 in all n tensors (same shape; ts[i]
 * may be NULL for i > 0) and calls run(arg, halves) on each half;
 * WGML_ERR_LIMIT, with a message prefixed by `name` alone, when one row is
 * left.  run's own errors pass through unchanged: prefixing them again at
 * each level of the recursion repeated the op's name once per halving. */
wgml_status wg_split_rows(const char *name, const wgml_tensor *const *ts, int n, int skip,
                          wgml_status (*run)(void *, wgml_tensor *const *), void *arg);

wg_op_table wg_reduce_ops(void);

#endif
