/* Quantised tables for op tests: random floats quantised by the CPU
 * reference (quant_ref*.c, bit-exact with gguf) and uploaded, with their
 * CPU dequantisation as the expected values.  Shared by the tests of the
 * quant family and of indexing on quantised tables. */
#ifndef WGML_TEST_QUANT_TABLE_H
#define WGML_TEST_QUANT_TABLE_H

#include "op_harness.h"
#include "quant.h"

static const wgml_dtype qtypes[] = {WGML_Q4_0, WGML_Q4_1, WGML_Q5_0, WGML_Q5_1, WGML_Q8_0, WGML_Q2_K, WGML_Q3_K,
                                    WGML_Q4_K, WGML_Q5_K, WGML_Q6_K, WGML_Q8_K, WGML_IQ4_NL, WGML_MXFP4};
#define NQ (sizeof qtypes / sizeof *qtypes)

static inline wgml_qtype qt_of(wgml_dtype t) { return (wgml_qtype)(t - WGML_Q4_0); }

/* A valid quantised tensor of `shape` (last dim a multiple of the block);
 * *deq gets its CPU dequantisation (logical order, caller frees) and *raw,
 * when not NULL, its bytes. */
static inline wgml_tensor *quant_tensor(wgml_dtype t, int ndim, const int64_t *shape, float **deq, uint8_t **raw)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    float *x = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)t_uniform(-3, 3) * (i % 97 == 0 ? 8.0f : 1.0f);
    size_t bytes = (size_t)n / wgml_dtype_block_elems(t) * wgml_dtype_block_bytes(t);
    uint8_t *q = calloc(1, bytes + 1);
    CHECK(wg_quantize_ref(qt_of(t), x, q, n) == 0, "CPU quantise %s", wgml_dtype_name(t));
    *deq = malloc(sizeof(float) * (size_t)(n + 1));
    CHECK(wg_dequantize_ref(qt_of(t), q, *deq, n) == 0, "CPU dequantise %s", wgml_dtype_name(t));
    wgml_tensor *tt = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, t, ndim, shape, &tt));
    if (tt)
        CHECK_OK(wgml_tensor_upload(tt, q, bytes));
    free(x);
    if (raw)
        *raw = q;
    else
        free(q);
    return tt;
}

/* A [rows, cols] quantised table. */
static inline wgml_tensor *quant_table(wgml_dtype t, int64_t rows, int64_t cols, float **deq, uint8_t **raw)
{
    const int64_t shape[2] = {rows, cols};
    return quant_tensor(t, 2, shape, deq, raw);
}

/* A weight tensor of shape (ndim, shape), any weight dtype (plain or a
 * block type), from uniform [-1, 1] floats; *deq: the values the kernel
 * must see (logical order; block types: the bit-exact CPU dequantiser's).
 * Shared by the mat-vec, matmul and MoE tests. */
static inline wgml_tensor *make_w(wgml_dtype dt, int ndim, const int64_t *shape, double **deq)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    *deq = malloc(sizeof(double) * (size_t)(n + 1));
    if (wg_dtype_is_plain(dt)) {
        t_tensor r = t_random(dt, ndim, shape, -1, 1);
        memcpy(*deq, r.val, sizeof(double) * (size_t)n);
        free(r.host);
        free(r.val);
        return r.t;
    }
    wgml_qtype qt = WGML_QT_COUNT;
    for (int q = 0; q < WGML_QT_COUNT; q++)
        if (strcmp(wgml_qtype_get((wgml_qtype)q)->name, wgml_dtype_name(dt)) == 0)
            qt = (wgml_qtype)q;
    float *src = malloc(sizeof(float) * (size_t)n), *back = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        src[i] = (float)t_uniform(-1, 1);
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, dt, ndim, shape, &t));
    size_t bytes = t ? wgml_tensor_nbytes(t) : 0;
    void *blocks = malloc(bytes + 1);
    CHECK(qt != WGML_QT_COUNT && wg_quantize_ref(qt, src, blocks, n) == 0, "quantise %s", wgml_dtype_name(dt));
    CHECK(wg_dequantize_ref(qt, blocks, back, n) == 0, "dequantise");
    for (int64_t i = 0; i < n; i++)
        (*deq)[i] = back[i];
    if (t)
        CHECK_OK(wgml_tensor_upload(t, blocks, bytes));
    free(src);
    free(back);
    free(blocks);
    return t;
}

/* Absolute slack for dequantised values (see test_op_quant.c): 2^-20 of
 * the largest |value|. */
static inline double block_atol(const float *v, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fabs(v[i]));
    return ldexp(m, -20);
}

#endif
