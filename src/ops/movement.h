/* Movement family: CPU references (contiguous row-major host arrays of
 * doubles, one value per element) and the registry rows. */
#ifndef WGML_MOVEMENT_H
#define WGML_MOVEMENT_H

#include "ops.h"

/* out[i0..] = x[perm applied]: out dim i is x dim perm[i]. */
void wg_permute_ref(const double *x, int ndim, const int64_t *shape, const int *perm, double *out);
/* Tile / expand: x right-aligned against out (xndim <= ondim); out dim d
 * is a multiple of x's (x dim 1 broadcasts). */
void wg_repeat_ref(const double *x, int xndim, const int64_t *xshape, int ondim, const int64_t *oshape, double *out);
/* n inputs of ndim dims each (shapes[i]) joined along axis. */
void wg_concat_ref(const double *const *xs, const int64_t *const *shapes, int n, int ndim, int axis, double *out);
/* numpy.pad: constant / reflect / edge / wrap; out dim d = before + x + after. */
void wg_pad_ref(const double *x, int ndim, const int64_t *shape, const int64_t *before, const int64_t *after,
                wgml_pad_mode mode, double value, double *out);
void wg_flip_ref(const double *x, int ndim, const int64_t *shape, unsigned axes_mask, double *out);
/* numpy.roll per dim: out[(i + shift) mod n] = x[i]. */
void wg_roll_ref(const double *x, int ndim, const int64_t *shape, const int64_t *shifts, double *out);
void wg_tri_ref(const double *x, int ndim, const int64_t *shape, int upper, int64_t k, double *out);
/* to_matrix: x [..., n] -> out [..., n, n]; else x [..., n, n] -> out [..., n]. */
void wg_diag_ref(const double *x, int ndim, const int64_t *shape, int to_matrix, double *out);

wg_op_table wg_movement_ops(void);

#endif
