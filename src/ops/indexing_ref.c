/*
 * CPU references of the indexing family (indexing.c), in double on host
 * data in logical row-major order; declared in indexing.h.
 */
#include "indexing.h"

static int64_t prod(const int64_t *s, int a, int b)
{
    int64_t n = 1;
    for (int d = a; d < b; d++)
        n *= s[d];
    return n;
}

void wg_index_select_ref(int ndim, const int64_t *src_shape, const double *src, int axis, int64_t n,
                         const int32_t *idx, double *out)
{
    int64_t outer = prod(src_shape, 0, axis), inner = prod(src_shape, axis + 1, ndim), rows = src_shape[axis];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < inner; k++)
                out[(o * n + i) * inner + k] = src[(o * rows + idx[i]) * inner + k];
}

void wg_get_rows_ref(int ndim, const int64_t *src_shape, const double *src, int idx_ndim, const int64_t *idx_shape,
                     const int32_t *idx, double *out)
{
    int kb = idx_ndim - 1;
    int64_t batches = prod(idx_shape, 0, kb), n = idx_shape[kb], rows = src_shape[kb];
    int64_t inner = prod(src_shape, kb + 1, ndim);
    for (int64_t b = 0; b < batches; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < inner; k++)
                out[(b * n + i) * inner + k] = src[(b * rows + idx[b * n + i]) * inner + k];
}

void wg_set_rows_ref(int ndim, const int64_t *dst_shape, double *dst, int idx_ndim, const int64_t *idx_shape,
                     const int32_t *idx, const double *src)
{
    int kb = idx_ndim - 1;
    int64_t batches = prod(idx_shape, 0, kb), n = idx_shape[kb], rows = dst_shape[kb];
    int64_t inner = prod(dst_shape, kb + 1, ndim);
    for (int64_t b = 0; b < batches; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < inner && idx[b * n + i] >= 0; k++)
                dst[(b * rows + idx[b * n + i]) * inner + k] = src[(b * n + i) * inner + k];
}

/* Row-major linear index of coordinates c in shape s. */
static int64_t lin(int ndim, const int64_t *s, const int64_t *c)
{
    int64_t r = 0;
    for (int d = 0; d < ndim; d++)
        r = r * s[d] + c[d];
    return r;
}

static void unlin(int ndim, const int64_t *s, int64_t i, int64_t *c)
{
    for (int d = ndim - 1; d >= 0; d--) {
        c[d] = i % s[d];
        i /= s[d];
    }
}

void wg_gather_ref(int ndim, const int64_t *src_shape, const double *src, int axis, const int64_t *idx_shape,
                   const int32_t *idx, double *out)
{
    int64_t n = prod(idx_shape, 0, ndim), c[WGML_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        unlin(ndim, idx_shape, i, c);
        c[axis] = idx[i];
        out[i] = src[lin(ndim, src_shape, c)];
    }
}

void wg_scatter_add_ref(int ndim, const int64_t *dst_shape, double *dst, int axis, const int64_t *idx_shape,
                        const int32_t *idx, const int64_t *src_shape, const double *src)
{
    int64_t n = prod(idx_shape, 0, ndim), c[WGML_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        unlin(ndim, idx_shape, i, c);
        double v = src[lin(ndim, src_shape, c)];
        c[axis] = idx[i];
        dst[lin(ndim, dst_shape, c)] += v;
    }
}

void wg_one_hot_ref(int64_t n, const int32_t *idx, int64_t classes, double *out)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < classes; k++)
            out[i * classes + k] = idx[i] == k;
}
