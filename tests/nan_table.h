/* Helpers for the table-driven NaN tests of the op families (each op's
 * NaN rule is stated in include/wgml.h): tensors holding given values, and
 * the float dtypes the rules are tested on. */
#ifndef WGML_TEST_NAN_TABLE_H
#define WGML_TEST_NAN_TABLE_H

#include "op_harness.h"

static const wgml_dtype nan_dts[] = {WGML_F32, WGML_F16, WGML_BF16};
#define N_NAN_DTS (sizeof nan_dts / sizeof *nan_dts)

/* A new tensor of `shape` holding v (logical order, rounded to dt). */
static inline wgml_tensor *t_from(wgml_dtype dt, int ndim, const int64_t *shape, const double *v)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, dt, ndim, shape, &t));
    if (!t)
        return NULL;
    int64_t n = wgml_tensor_nelem(t);
    void *h = malloc(wgml_tensor_nbytes(t) + 8);
    for (int64_t i = 0; i < n; i++)
        wg_host_set(dt, h, (size_t)i, v[i]);
    CHECK_OK(wgml_tensor_upload(t, h, wgml_tensor_nbytes(t)));
    free(h);
    return t;
}

/* Compares t's values with want (NaN must meet NaN, inf the same inf),
 * finite values within atol + rtol |want| (plus a 16-bit output's
 * rounding). */
static inline void t_expect_tol(const char *what, const wgml_tensor *t, const double *want, double rtol, double atol)
{
    if (!t)
        return;
    double *got = t_values(t);
    CHECK(t_compare(what, t->dtype, got, want, wgml_tensor_nelem(t), rtol, atol) == 0, "%s", what);
    free(got);
}

static inline void t_expect(const char *what, const wgml_tensor *t, const double *want, double rtol)
{
    t_expect_tol(what, t, want, rtol, 0);
}

#endif
