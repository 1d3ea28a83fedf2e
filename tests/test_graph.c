/* Graphs (include/wgml_graph.h): random valid graphs over the op table run
 * through planner and executor equal the same graphs run eagerly, bit for
 * bit; the planner's verifier passes on each and can fail; symbolic dims
 * rebind without compiling a kernel; state persists across runs; bad
 * indices, bad graphs and unbound dims fail with messages naming the
 * node. */
#include "graph/graph.h"
#include "op_harness.h"

#include <math.h>

/* ------------------------------------------------------------ generator */

enum { MAXN = 96 };

typedef struct gen {
    wgml_graph *g;
    wgml_node *f[MAXN]; /* f32 nodes to draw operands from */
    bool contig[MAXN];  /* made by an op (reshape-able) */
    int nf;
    wgml_node *inputs[8];
    float *input_data[8];
    int ninputs;
    wgml_node *outs[MAXN];
    int nouts;
    wgml_tensor *state; /* the KV-like tensor set_rows writes (once per graph) */
    bool eager;
} gen;

static int64_t dim(const wgml_node *n, int a) { return wgml_node_dim(n, a); }

static void keep(gen *s, wgml_node *n, bool contig)
{
    if (n && s->nf < MAXN) {
        s->contig[s->nf] = contig;
        s->f[s->nf++] = n;
    }
}

static wgml_node *input(gen *s, wgml_dtype dt, int ndim, const int64_t *shape)
{
    wgml_node *n = NULL;
    CHECK_OK(wgml_graph_input(s->g, "in", dt, ndim, shape, &n));
    int64_t ne = 1;
    for (int i = 0; i < ndim; i++)
        ne *= shape[i];
    float *d = malloc((size_t)(ne ? ne : 1) * 4);
    for (int64_t i = 0; i < ne; i++) {
        if (dt == WGML_I32)
            ((int32_t *)d)[i] = (int32_t)t_range(0, (uint64_t)shape[ndim] - 1); /* shape[ndim]: the index bound */
        else
            d[i] = (float)t_uniform(-2, 2);
    }
    s->inputs[s->ninputs] = n;
    s->input_data[s->ninputs++] = d;
    if (s->eager) /* an eager graph runs ops as they are built: data now */
        CHECK_OK(wgml_graph_write(s->g, n, d, (uint64_t)ne * 4));
    return n;
}

static wgml_node *pick(gen *s, int *i)
{
    int k = (int)t_range(0, (uint64_t)s->nf - 1);
    if (i)
        *i = k;
    return s->f[k];
}

/* One random op on the pool; false when the draw did not fit. */
static void step(gen *s)
{
    wgml_graph *g = s->g;
    int xi;
    wgml_node *x = pick(s, &xi), *y = NULL, *t = NULL;
    int64_t r = dim(x, 0), c = dim(x, 1);
    switch (t_range(0, 17)) {
    case 0: {
        static const wgml_unary_op ops[] = {WGML_NEG, WGML_ABS, WGML_TANH, WGML_SIGMOID, WGML_SQR, WGML_SILU,
                                            WGML_SCALE, WGML_GELU_TANH};
        CHECK_OK(wgml_g_unary(g, ops[t_range(0, 7)], x, 0.5f, 0.25f, &y));
        break;
    }
    case 1: case 2: {
        static const wgml_binary_op ops[] = {WGML_ADD, WGML_SUB, WGML_MUL, WGML_MAX};
        wgml_node *b = NULL;
        for (int k = 0; k < s->nf && !b; k++) /* a same-shaped partner, or x itself */
            if (dim(s->f[k], 0) == r && dim(s->f[k], 1) == c && k != xi && t_range(0, 1))
                b = s->f[k];
        if (!b && t_range(0, 1)) /* a broadcast column */
            CHECK_OK(wgml_g_reduce(g, WGML_RMAX, x, 2, 0, &b));
        CHECK_OK(wgml_g_binary(g, ops[t_range(0, 3)], x, b ? b : x, &y));
        break;
    }
    case 3: {
        wgml_softmax_params p = {t_range(0, 1) ? -1 : 0, 0.5f, 0, (int)t_range(0, 1)};
        CHECK_OK(wgml_g_softmax(g, x, NULL, NULL, &p, &y));
        break;
    }
    case 4: {
        int64_t ws[1] = {c};
        wgml_node *w = input(s, WGML_F32, 1, ws);
        wgml_norm_params p = {t_range(0, 1) ? WGML_RMS_NORM : WGML_LAYER_NORM, 1e-5f, 0, 0, 0, 0, 0, 0, 0};
        CHECK_OK(wgml_g_norm(g, x, &p, w, NULL, t_range(0, 1) ? x : NULL, &y));
        break;
    }
    case 5:
        CHECK_OK(wgml_g_transpose(g, x, 0, 1, &t));
        CHECK_OK(wgml_g_copy(g, t, &y));
        break;
    case 6:
        if (r > 1) {
            CHECK_OK(wgml_g_slice(g, x, 0, 1, r, 2, &t));
            CHECK_OK(wgml_g_copy(g, t, &y));
        }
        break;
    case 7: {
        wgml_node *b = NULL;
        for (int k = 0; k < s->nf && !b; k++)
            if (dim(s->f[k], 1) == c && k != xi)
                b = s->f[k];
        wgml_node *xs[2] = {x, b ? b : x};
        CHECK_OK(wgml_g_concat(g, xs, 2, 0, &y));
        break;
    }
    case 8:
        CHECK_OK(wgml_g_cumsum(g, x, (int)t_range(0, 1), (int)t_range(0, 1), &y));
        break;
    case 9:
        CHECK_OK(wgml_g_glu(g, WGML_SWIGLU, x, x, 0, &y));
        break;
    case 10:
        CHECK_OK(wgml_g_cast(g, x, WGML_F16, &t));
        CHECK_OK(wgml_g_cast(g, t, WGML_F32, &y));
        break;
    case 11: {
        wgml_node *cond = NULL, *z = NULL;
        CHECK_OK(wgml_g_fill(g, WGML_F32, 2, (int64_t[]){r, c}, 0.25, &z));
        CHECK_OK(wgml_g_binary(g, WGML_GT, x, z, &cond));
        CHECK_OK(wgml_g_where(g, cond, x, z, &y));
        break;
    }
    case 12: {
        int64_t is[2] = {(int64_t)t_range(1, 5), r}; /* is[1]: index bound for input() */
        wgml_node *idx = input(s, WGML_I32, 1, is);
        CHECK_OK(wgml_g_get_rows(g, x, idx, WGML_F32, &y));
        break;
    }
    case 13:
        CHECK_OK(wgml_g_tri(g, x, (int)t_range(0, 1), (int64_t)t_range(0, 2) - 1, &y));
        break;
    case 14:
        CHECK_OK(wgml_g_flip(g, x, (unsigned)t_range(1, 3), &t));
        CHECK_OK(wgml_g_roll(g, t, (int64_t[]){1, -2}, &y));
        break;
    case 15:
        CHECK_OK(wgml_g_pad(g, x, (int64_t[]){1, 0}, (int64_t[]){0, 2}, WGML_PAD_EDGE, 0, &y));
        break;
    case 16:
        if (s->contig[xi]) {
            CHECK_OK(wgml_g_reshape(g, x, 1, (int64_t[]){-1}, &t));
            CHECK_OK(wgml_g_reshape(g, t, 2, (int64_t[]){c, r}, &y));
        }
        break;
    case 17:
        if (s->state && c == wgml_tensor_dim(s->state, 1) && r <= wgml_tensor_dim(s->state, 0)) {
            wgml_node *st = NULL, *w = NULL;
            CHECK_OK(wgml_graph_tensor(g, "state", s->state, &st));
            int64_t is[2] = {r, wgml_tensor_dim(s->state, 0)};
            wgml_node *idx = input(s, WGML_I32, 1, is);
            int32_t *v = (int32_t *)s->input_data[s->ninputs - 1]; /* distinct rows: a permutation prefix */
            for (int64_t i = 0; i < r; i++)
                v[i] = (int32_t)((i * 5 + 3) % is[1]);
            if (s->eager)
                CHECK_OK(wgml_graph_write(g, idx, v, (uint64_t)r * 4));
            CHECK_OK(wgml_g_set_rows(g, st, idx, x, &w));
            s->state = NULL; /* once: a second run rewrites the same rows with the same values */
            CHECK_OK(wgml_g_reduce(g, WGML_SUM, w, 1, 0, &y));
        }
        break;
    }
    keep(s, y, true);
}

static void build(gen *s, uint64_t seed, int steps)
{
    t_rng_state = seed;
    int64_t r = (int64_t)t_range(1, 12), c = (int64_t)(t_range(0, 1) ? t_range(1, 40) : 64);
    if (getenv("WGML_MAX_BINDING"))
        r *= 20; /* rows that span several 64 KiB windows */
    keep(s, input(s, WGML_F32, 2, (int64_t[]){r, c}), false);
    keep(s, input(s, WGML_F32, 2, (int64_t[]){r, c}), false);
    for (int i = 0; i < steps && !t_failed_checks; i++)
        step(s);
    /* Outputs: the last few nodes and a random sample. */
    for (int i = 2; i < s->nf; i++)
        if (i >= s->nf - 3 || t_range(0, 3) == 0)
            s->outs[s->nouts++] = s->f[i];
    for (int i = 0; i < s->nouts; i++)
        CHECK_OK(wgml_graph_output(s->g, s->outs[i]));
}

static void write_inputs(gen *s)
{
    for (int i = 0; i < s->ninputs; i++) {
        wgml_tensor *t = NULL;
        CHECK_OK(wgml_node_tensor(s->inputs[i], &t));
        CHECK_OK(wgml_graph_write(s->g, s->inputs[i], s->input_data[i], wgml_tensor_nbytes(t)));
        wgml_tensor_free(t);
    }
}

static void gen_free(gen *s)
{
    wgml_graph_free(s->g);
    for (int i = 0; i < s->ninputs; i++)
        free(s->input_data[i]);
}

static void *read_node(wgml_graph *g, wgml_node *n, uint64_t *bytes)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_node_tensor(n, &t));
    *bytes = wgml_tensor_nbytes(t);
    void *h = malloc(*bytes ? *bytes : 1);
    CHECK_OK(wgml_graph_read(g, n, h, *bytes));
    wgml_tensor_free(t);
    return h;
}

static void compare_outputs(int k, gen *c, gen *e)
{
    for (int i = 0; i < c->nouts && i < e->nouts; i++) {
        uint64_t bc = 0, be = 0;
        void *hc = read_node(c->g, c->outs[i], &bc), *he = read_node(e->g, e->outs[i], &be);
        CHECK(bc == be && !memcmp(hc, he, bc), "graph %d: output %d (node %d %s) differs from eager", k, i,
              c->outs[i]->id, wg_node_kind_name(c->outs[i]));
        free(hc);
        free(he);
    }
}

static void random_graphs(void)
{
    int graphs = 24;
    for (int k = 0; k < graphs && !t_failed_checks; k++) {
        uint64_t seed = t_rand() | 1, resume;
        int steps = (int)t_range(4, 24);
        wgml_tensor *st_e = NULL, *st_c = NULL;
        int64_t ss[2] = {16, (int64_t)t_range(0, 1) ? 64 : 7};
        CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, ss, &st_e));
        CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, ss, &st_c));
        resume = t_rng_state;
        gen e = {.state = st_e, .eager = true}, c = {.state = st_c};
        CHECK_OK(wgml_graph_create_eager(t_ctx, &e.g));
        CHECK_OK(wgml_graph_create(t_ctx, &c.g));
        build(&e, seed, steps); /* runs as it is built */
        build(&c, seed, steps); /* the same draws */
        t_rng_state = resume;
        CHECK(e.ninputs == c.ninputs && e.nouts == c.nouts && e.nf == c.nf, "graph %d: the two builds differ", k);
        wgml_graph_options opt = {0, (int)(k % 3 == 2)};
        CHECK_OK(wgml_graph_compile(c.g, &opt));
        write_inputs(&c);
        CHECK_OK(wgml_graph_run(c.g));
        CHECK_OK(wgml_graph_run(c.g)); /* twice: inputs persist, set_rows rewrites the same rows */
        compare_outputs(k, &c, &e);
        int64_t ne = wgml_tensor_nelem(st_c);
        float *a = malloc((size_t)ne * 4), *b = malloc((size_t)ne * 4);
        CHECK_OK(wgml_tensor_download(st_c, a, (uint64_t)ne * 4));
        CHECK_OK(wgml_tensor_download(st_e, b, (uint64_t)ne * 4));
        CHECK(!memcmp(a, b, (size_t)ne * 4), "graph %d: the state tensor differs from eager", k);
        free(a);
        free(b);
        wgml_graph_stats gs;
        CHECK_OK(wgml_graph_stats_get(c.g, &gs));
        CHECK(gs.arena_bytes >= gs.peak_live_bytes && gs.arena_bytes <= gs.intermediate_bytes + 256 * gs.nodes,
              "graph %d: arena %llu, peak %llu, all intermediates %llu", k, (unsigned long long)gs.arena_bytes,
              (unsigned long long)gs.peak_live_bytes, (unsigned long long)gs.intermediate_bytes);
        CHECK_OK(wg_graph_verify(c.g));
        printf("    graph %2d: %3llu nodes, %3llu dispatches, arena %7llu B (peak live %7llu, no reuse %7llu)\n", k,
               (unsigned long long)gs.nodes, (unsigned long long)gs.dispatches, (unsigned long long)gs.arena_bytes,
               (unsigned long long)gs.peak_live_bytes, (unsigned long long)gs.intermediate_bytes);
        if (t_failed_checks) {
            wgml_graph_dump(c.g, stdout, 0);
        }
        gen_free(&e);
        gen_free(&c);
        wgml_tensor_free(st_e);
        wgml_tensor_free(st_c);
    }
}

static const t_case cases[] = {
    {"random_graphs_equal_eager", random_graphs},
};

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
