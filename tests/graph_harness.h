/* Helpers shared by the graph tests (test_graph.c, test_graph_api.c). */
#ifndef WGML_GRAPH_HARNESS_H
#define WGML_GRAPH_HARNESS_H

#include "graph/graph.h"
#include "op_harness.h"

#include <math.h>

/* Graph against eager: the same kernels on the same data, so equal bit for
 * bit, except that (1) a graph's operands share one arena buffer and a read
 * operand in a written buffer is bound read_write: a different kernel
 * variant, which NVIDIA's compiler may give another subgroupAdd order
 * (seen on an H100: 1 ulp in some softmax rows; identical without
 * subgroups); (2) on GPUs a row reduction adds its subgroups' partials in
 * the order they arrive (rows.wgsl's slot counter), which varies from run
 * to run: up to 256 / 32 = 8 partials reordered move a row statistic by
 * <= 7u of its absolute sum (u = 2^-24), and a normalised output y by
 * <= 7u (|mean| / sd + |y|) <= 56u < 2^-18 for these tests' data
 * (|mean| / sd <= 4, |y| <= 4; seen on an H200: 2 of 9000 group-norm
 * outputs past 4 ulps, 2026-11-26).  So floats may differ by 4 ulps (2^-21
 * relative) or 2^-18 absolute, NaN only where NaN; ints and bools exact. */
static inline bool f32_close(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    double d = fabs((double)a - b);
    return a == b || d <= 0x1p-21 * fmax(fabs((double)a), fabs((double)b)) || d <= 0x1p-18;
}


static inline float *host_f32(int64_t n, double lo, double hi)
{
    float *h = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)t_uniform(lo, hi);
    return h;
}

static inline void expect(wgml_status got, wgml_status want, const char *needle, const char *what)
{
    const char *m = wgml_last_error();
    printf("    %s: %s\n", what, m);
    CHECK(got == want && strstr(m, needle), "%s: %s (%s), want %s with '%s'", what, wgml_status_name(got), m,
          wgml_status_name(want), needle);
}


/* WGML_FORCE=matvec=sgx_r2, the one-dispatch product (a GPU's table for
 * one row; forced so lavapipe runs it too), where the device has
 * subgroups; false (nothing set) where it has none. */
static inline bool force_sgx(void)
{
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(t_ctx, &in));
    if (!(in.features & WGML_FEATURE_SUBGROUPS))
        return false;
    t_env("WGML_FORCE", "matvec=sgx_r2");
    return true;
}

/* g's dump, text then DOT, as one malloc'd string (NULL on failure). */
static inline char *dump_both(const wgml_graph *g)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    CHECK_OK(wgml_graph_dump(g, f, 0));
    CHECK_OK(wgml_graph_dump(g, f, 1));
    fclose(f);
    return buf;
}

/* Opens the test context and runs the cases. */
/* What node n's op table row declares for its scratch (dims concrete). */
static inline uint64_t declared_of(const wgml_node *n)
{
    const wg_op_def *d = wg_op_def_get(n->op);
    const wg_desc *dp[WG_OP_MAX_IN] = {0};
    for (int k = 0; k < n->nin; k++)
        dp[k] = n->in[k] ? &n->in[k]->d : NULL;
    return d && d->scratch ? d->scratch(&n->p, dp, n->nin, &n->d) : 0;
}

/* A context whose storage bindings are `bytes` long (WGML_MAX_BINDING), so
 * long rows and big operands take their split paths on small tensors;
 * NULL (after a failed check) when none could be made. */
static inline wgml_ctx *small_window_ctx(const char *bytes)
{
    t_env("WGML_MAX_BINDING", bytes);
    wgml_ctx *sc = NULL;
    wgml_status cst = wgml_ctx_create(NULL, &sc);
    t_env("WGML_MAX_BINDING", NULL);
    CHECK_OK(cst);
    return sc;
}

static inline int graph_main(int argc, char **argv, const t_case *cases, size_t n)
{
    if (t_setup(argc, argv))
        return 1;
    int rc = t_run(cases, n, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}

#endif
