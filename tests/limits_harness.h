/* Shared by the window tests (test_op_limits.c, test_op_limits_rows.c): a
 * context made with WGML_MAX_BINDING=4096 and helpers to compare ops run on
 * it with their CPU references. */
#ifndef WGML_LIMITS_HARNESS_H
#define WGML_LIMITS_HARNESS_H

#include "op_harness.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/rope.h"
#include "ops/rows.h"
#include "ops/indexing.h"
#include "ops/movement.h"
#include "quant_table.h"


#define WINDOW 4096

static wgml_ctx *small; /* WGML_MAX_BINDING = WINDOW */

/* A tensor of `shape` on the small-window context. */
static inline wgml_tensor *mk(wgml_dtype dt, int ndim, const int64_t *shape)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(small, dt, ndim, shape, &t));
    return t;
}

/* ------------------------------------------------ cases that now split */

/* Random f32 values on the small-window context. */
static inline t_tensor rnd(int ndim, const int64_t *shape, double lo, double hi)
{
    wgml_ctx *keep = t_ctx;
    t_ctx = small;
    t_tensor r = t_random(WGML_F32, ndim, shape, lo, hi);
    t_ctx = keep;
    return r;
}

/* Compares t's values (logical order) with want. */
static inline void expect_values(const char *what, const wgml_tensor *t, const double *want, double rtol, double atol)
{
    double *got = t_values(t);
    CHECK(t_compare(what, t->dtype, got, want, wgml_tensor_nelem(t), rtol, atol) == 0, "%s: mismatches", what);
    free(got);
}

/* Opens the small-window context and runs the cases. */
static inline int limits_main(int argc, char **argv, const t_case *cases, size_t n)
{
    if (t_setup(argc, argv))
        return 1;
    const char *prev = getenv("WGML_MAX_BINDING");
    char *saved = prev ? strdup(prev) : NULL;
    char w[16];
    snprintf(w, sizeof w, "%d", WINDOW);
    t_env("WGML_MAX_BINDING", w); /* read once, when a context is made */
    wgml_status st = wgml_ctx_create(NULL, &small);
    if (saved)
        t_env("WGML_MAX_BINDING", saved);
    else
        t_env("WGML_MAX_BINDING", NULL);
    free(saved);
    if (st != WGML_OK) {
        printf("cannot create a %d-byte-window context: %s\n0 passed, 1 failed\n", WINDOW, wgml_last_error());
        return 1;
    }
    int rc = t_run(cases, n, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(small);
    wgml_ctx_destroy(t_ctx);
    return rc;
}

#endif
