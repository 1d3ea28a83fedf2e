/*
 * Helpers for op tests: random tensors with host mirrors, downloads as
 * doubles, and comparison under per-dtype tolerances.
 *
 * Tolerances (t_tol): a float result is right when
 *     |got - want| <= atol + rtol * |want|
 * where `want` is the double-precision reference rounded to the output
 * dtype.  rtol/atol passed by a test describe the f32 kernel's own error
 * (e.g. a few ulps for transcendental functions, whose WGSL accuracy is
 * only specified in ulps); 16-bit outputs add one unit of rounding of
 * their format on top (f16: 2^-10 relative plus 2^-24 absolute for
 * subnormals; bf16: 2^-7 relative), because an f32 result that lies next
 * to a rounding boundary may round the other way than the double one.
 * Integer and bool results must be exact.  NaN must match NaN.
 */
#ifndef WGML_OP_HARNESS_H
#define WGML_OP_HARNESS_H

#include "harness.h"
#include "ops/ops.h"

#include <math.h>

static wgml_ctx *t_ctx;

typedef struct t_tensor {
    wgml_tensor *t;     /* on the GPU */
    void *host;         /* contiguous host copy in t's dtype */
    double *val;        /* the same values as doubles */
    int64_t n;
} t_tensor;

static inline double t_uniform(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(t_rand() >> 11) / 9007199254740992.0);
}

/* Random values: floats uniform in [lo, hi] (rounded to the dtype), ints
 * uniform integers in [lo, hi] clipped to the dtype, bool 0/1. */
static inline t_tensor t_random(wgml_dtype dt, int ndim, const int64_t *shape, double lo, double hi)
{
    t_tensor r = {0};
    wgml_status st = wgml_tensor_new(t_ctx, dt, ndim, shape, &r.t);
    CHECK(st == WGML_OK, "tensor_new: %s", wgml_last_error());
    if (st != WGML_OK)
        return r;
    r.n = wgml_tensor_nelem(r.t);
    size_t bytes = wgml_tensor_nbytes(r.t);
    r.host = malloc(bytes + 8);
    r.val = malloc(sizeof(double) * (size_t)(r.n + 1));
    for (int64_t i = 0; i < r.n; i++) {
        double v = t_uniform(lo, hi);
        if (!wg_dtype_is_float(dt))
            v = dt == WGML_BOOL ? (double)(t_rand() & 1) : floor(v);
        wg_host_set(dt, r.host, (size_t)i, v);
        r.val[i] = wg_host_get(dt, r.host, (size_t)i);
    }
    CHECK_OK(wgml_tensor_upload(r.t, r.host, bytes));
    return r;
}

/* i32 tensor of `shape` holding v (logical order): index operands. */
static inline wgml_tensor *t_idx(int ndim, const int64_t *shape, const int32_t *v)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, ndim, shape, &t));
    if (t)
        CHECK_OK(wgml_tensor_upload(t, v, wgml_tensor_nbytes(t)));
    return t;
}

/* WGML_FORCE=family=v for the calls that follow (v NULL: unset). */
static inline void t_force(const char *family, const char *v)
{
    if (v) {
        char b[96];
        snprintf(b, sizeof b, "%s=%s", family, v);
        t_env("WGML_FORCE", b);
    } else {
        t_env("WGML_FORCE", NULL);
    }
}

static inline void t_free(t_tensor *r)
{
    wgml_tensor_free(r->t);
    free(r->host);
    free(r->val);
    memset(r, 0, sizeof *r);
}

/* New tensor whose every byte is 0xA5 ("poison"), so unwritten outputs show. */
static inline wgml_tensor *t_poisoned(wgml_dtype dt, int ndim, const int64_t *shape)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, dt, ndim, shape, &t));
    if (t && wgml_tensor_nbytes(t))
        CHECK_OK(wgml_buffer_fill(t->st->buf, t->offset, wgml_tensor_nbytes(t), 0xa5a5a5a5u));
    return t;
}

/* Downloads t (any layout) as doubles in logical order. */
static inline double *t_values(const wgml_tensor *t)
{
    int64_t n = wgml_tensor_nelem(t);
    size_t bytes = wgml_tensor_nbytes(t);
    void *raw = malloc(bytes + 8);
    double *v = malloc(sizeof(double) * (size_t)(n + 1));
    CHECK_OK(wgml_tensor_download(t, raw, bytes));
    for (int64_t i = 0; i < n; i++)
        v[i] = wg_host_get(t->dtype, raw, (size_t)i);
    free(raw);
    return v;
}

static inline void t_tol(wgml_dtype dt, double *rtol, double *atol)
{
    if (dt == WGML_F16) {
        *rtol += ldexp(1.0, -10);
        *atol += ldexp(1.0, -24);
    } else if (dt == WGML_BF16) {
        *rtol += ldexp(1.0, -7);
        *atol += ldexp(1.0, -126);
    } else if (!wg_dtype_is_float(dt)) {
        *rtol = 0;
        *atol = 0;
    }
}

/* Compares got with want (reference in double, rounded here to dt).
 * Returns the number of mismatches and prints the first few. */
static inline int t_compare(const char *what, wgml_dtype dt, const double *got, const double *want, int64_t n,
                            double rtol, double atol)
{
    t_tol(dt, &rtol, &atol);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        uint8_t tmp[8];
        wg_host_set(dt, tmp, 0, want[i]);
        double w = wg_host_get(dt, tmp, 0);
        double g = got[i];
        bool ok = (isnan(w) && isnan(g)) || g == w || (isinf(w) && g == w) ||
                  (!isinf(w) && fabs(g - w) <= atol + rtol * fabs(w));
        if (!ok && bad++ < 4)
            printf("    %s [%lld]: got %.9g want %.9g (rtol %.2g atol %.2g)\n", what, (long long)i, g, w, rtol, atol);
    }
    if (bad > 4)
        printf("    %s: %d mismatches of %lld\n", what, bad, (long long)n);
    return bad;
}

/* Logical index -> linear index of an element within a tensor of shape
 * `shape` broadcast (numpy) into the 4-D `iter` space. */
static inline int64_t t_bcast_index(int ndim, const int64_t *shape, const int64_t iter[4], int64_t i)
{
    int64_t c[4], r = 0;
    for (int d = 3; d >= 0; d--) {
        c[d] = i % iter[d];
        i /= iter[d];
    }
    for (int d = 0; d < ndim; d++) {
        int k = 4 - ndim + d;
        r = r * shape[d] + (shape[d] == 1 ? 0 : c[k]);
    }
    return r;
}

static inline int t_setup(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (t_open_ctx(&t_ctx))
        return 1;
    t_stats_ctx = t_ctx;
    t_stats_get = wgml_ctx_stats_get;
    wgml_device_info in;
    if (wgml_device_info_get(t_ctx, &in) == WGML_OK) {
        char f[128];
        printf("device %s, features: %s\n", in.adapter, wgml_feature_names(in.features, f, sizeof f));
    }
    return 0;
}

#endif
