/* Graphs from a generator (include/wgml_graph.h): random valid graphs over
 * the op table run through planner and executor equal the same graphs run
 * eagerly; fused graphs equal unfused ones within rounding; the fusions
 * fold what they should.  test_graph_api.c tests the rest of the API. */
#include "graph_harness.h"

/* ------------------------------------------------------------ generator */

enum { MAXN = 96 };

typedef struct gen {
    wgml_graph *g;
    wgml_node *f[MAXN]; /* f32 nodes to draw operands from */
    bool contig[MAXN];  /* made by an op (reshape-able) */
    int nf;
    wgml_node *inputs[MAXN];
    float *input_data[MAXN];
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
    if (s->ninputs == MAXN) /* never with the generator's step counts; checked all the same */
        return s->inputs[0];
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
    switch (t_range(0, 21)) {
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
    case 19: { /* a chain only its end of which is kept: fusion folds it */
        static const wgml_unary_op ops[] = {WGML_TANH, WGML_SCALE, WGML_SILU, WGML_ABS, WGML_SIGMOID, WGML_NEG};
        t = x;
        for (int k = (int)t_range(2, 8); k > 0; k--)
            CHECK_OK(wgml_g_unary(g, ops[t_range(0, 5)], t, 0.5f, -0.25f, &t));
        y = t;
        break;
    }
    case 20: { /* softmax(scale(x) + mask), the mask a same-shaped node or a column */
        wgml_node *m = NULL, *u = NULL;
        if (t_range(0, 1))
            CHECK_OK(wgml_g_reduce(g, WGML_RMAX, x, 2, 0, &m));
        else
            m = s->f[t_range(0, 1)];
        if (dim(m, 0) != r || (dim(m, 1) != c && dim(m, 1) != 1))
            break;
        CHECK_OK(wgml_g_unary(g, WGML_SCALE, x, 0.5f, 0, &t));
        CHECK_OK(wgml_g_binary(g, WGML_ADD, t, m, &u));
        CHECK_OK(wgml_g_softmax(g, u, NULL, NULL, NULL, &y));
        break;
    }
    case 21: { /* norm(a + b), the sum kept for later use half the time */
        wgml_node *b = NULL, *h = NULL;
        for (int k = 0; k < s->nf && !b; k++)
            if (dim(s->f[k], 0) == r && dim(s->f[k], 1) == c && k != xi)
                b = s->f[k];
        if (!b)
            break;
        int64_t ws[1] = {c};
        wgml_node *w = input(s, WGML_F32, 1, ws);
        wgml_norm_params p = {t_range(0, 1) ? WGML_RMS_NORM : WGML_LAYER_NORM, 1e-5f, 0, 0, 0, 0, 0, 0, 0};
        CHECK_OK(wgml_g_binary(g, WGML_ADD, x, b, &h));
        CHECK_OK(wgml_g_norm(g, h, &p, w, NULL, NULL, &y));
        if (t_range(0, 1))
            keep(s, h, true);
        break;
    }
    case 18: /* rope: pos shares the arena with out (bound read_write there) */
        if (s->contig[xi] && c % 4 == 0) {
            wgml_node *q = NULL, *rq = NULL;
            int64_t ps[2] = {r, 1000};
            wgml_node *pos = input(s, WGML_I32, 1, ps);
            wgml_rope_params rp = {t_range(0, 1) ? WGML_ROPE_NEOX : WGML_ROPE_NORMAL, (int)(c / 2), 10000, 1,
                                   0, 1, 32, 1, 0, {0}, 0, 0};
            CHECK_OK(wgml_g_reshape(g, x, 3, (int64_t[]){r, 2, c / 2}, &q));
            CHECK_OK(wgml_g_rope(g, q, pos, &rp, NULL, &rq));
            CHECK_OK(wgml_g_reshape(g, rq, 2, (int64_t[]){r, c}, &y));
        }
        break;
    }
    keep(s, y, true);
}

static void build(gen *s, uint64_t seed, int steps)
{
    t_rng_state = seed;
    int64_t r = (int64_t)t_range(1, 12), c = (int64_t)(t_range(0, 1) ? t_range(1, 40) : 64);
    if (t_env_set("WGML_MAX_BINDING"))
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
        bool f32 = wgml_node_dtype(c->outs[i]) == WGML_F32;
        size_t at = 0, ndiff = 0, nbits = 0;
        for (size_t b = 0; bc == be && b + 4 <= bc; b += 4) {
            if (!memcmp((char *)hc + b, (char *)he + b, 4))
                continue;
            nbits++;
            if ((!f32 || !f32_close(((float *)hc)[b / 4], ((float *)he)[b / 4])) && !ndiff++)
                at = b / 4;
        }
        if (nbits)
            printf("    graph %d: output %d (node %d %s): %zu of %zu words differ from eager in the last bits\n", k, i,
                   c->outs[i]->id, wg_node_kind_name(c->outs[i]), nbits, (size_t)bc / 4);
        CHECK(bc == be && !ndiff, "graph %d: output %d (node %d %s) differs from eager: %zu of %zu words, first at "
              "%zu: %.9g vs %.9g", k, i, c->outs[i]->id, wg_node_kind_name(c->outs[i]), ndiff, (size_t)bc / 4, at,
              bc ? ((float *)hc)[at] : 0.0, be ? ((float *)he)[at] : 0.0);
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
        wgml_graph_options opt = {1, (int)(k % 3 == 2)}; /* unfused: bit for bit with eager */
        CHECK_OK(wgml_graph_compile(c.g, &opt));
        write_inputs(&c);
        CHECK_OK(wgml_graph_run(c.g));
        CHECK_OK(wgml_graph_run(c.g)); /* twice: inputs persist, set_rows rewrites the same rows */
        compare_outputs(k, &c, &e);
        int64_t ne = wgml_tensor_nelem(st_c);
        float *a = malloc((size_t)ne * 4), *b = malloc((size_t)ne * 4);
        CHECK_OK(wgml_tensor_download(st_c, a, (uint64_t)ne * 4));
        CHECK_OK(wgml_tensor_download(st_e, b, (uint64_t)ne * 4));
        int bad_state = 0;
        for (int64_t i = 0; i < ne; i++)
            bad_state += !f32_close(a[i], b[i]);
        CHECK(!bad_state, "graph %d: the state tensor differs from eager in %d elements", k, bad_state);
        free(a);
        free(b);
        wgml_graph_stats gs;
        CHECK_OK(wgml_graph_stats_get(c.g, &gs));
        CHECK(gs.arena_bytes >= gs.peak_live_bytes && gs.arena_bytes <= gs.intermediate_bytes + 256 * gs.nodes,
              "graph %d: arena %llu, peak %llu, all intermediates %llu", k, (unsigned long long)gs.arena_bytes,
              (unsigned long long)gs.peak_live_bytes, (unsigned long long)gs.intermediate_bytes);
        CHECK_OK(wg_graph_verify(c.g));
        /* the buffer allocated is what the planner planned, not more */
        CHECK(wgml_tensor_nbytes(c.g->arena) == (gs.scratch_bytes ? c.g->scratch_off + gs.scratch_bytes
                                                                   : (gs.arena_bytes ? gs.arena_bytes : 1)),
              "graph %d: arena buffer %llu bytes, planned %llu + scratch %llu", k,
              (unsigned long long)wgml_tensor_nbytes(c.g->arena), (unsigned long long)gs.arena_bytes,
              (unsigned long long)gs.scratch_bytes);
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

/* Fused and unfused runs of a graph agree within f32 rounding.  Chains and
 * the residual norm are identical (both keep f32); softmax with a folded
 * scale and mask rounds scale * x + mask once (maybe as one fma) where the
 * unfused graph rounds twice: a logit moves by up to ulp(|v|) <= 2^-23 * 16
 * for the generator's logits (|v| < 16), its softmax output relatively by
 * twice that (4e-6), and one later op of condition <= 4 makes it 1.6e-5:
 * 2e-5 relative, or 2e-5 of the output's largest magnitude where later
 * ops cancel (an add of nearly opposite values keeps the absolute error),
 * NaN where NaN. */
static int close_f32(const float *a, const float *b, size_t n)
{
    double big = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(b[i]) && fabs((double)b[i]) > big)
            big = fabs((double)b[i]);
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            if (isnan(a[i]) != isnan(b[i]))
                return (int)i;
            continue;
        }
        if (a[i] != b[i] && !(fabs((double)a[i] - b[i]) <= 2e-5 * (fabs((double)b[i]) + big)))
            return (int)i;
    }
    return -1;
}

static void random_graphs_fused_equal_unfused(void)
{
    uint64_t fused_total = 0;
    for (int k = 0; k < 16 && !t_failed_checks; k++) {
        uint64_t seed = t_rand() | 1, resume = t_rng_state;
        int steps = (int)t_range(6, 30);
        gen v[2] = {{0}, {0}};
        wgml_tensor *st[2] = {NULL, NULL};
        for (int f = 0; f < 2; f++) {
            CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, (int64_t[]){16, 64}, &st[f]));
            v[f].state = st[f];
            CHECK_OK(wgml_graph_create(t_ctx, &v[f].g));
            build(&v[f], seed, steps);
            wgml_graph_options o = {f == 0, 0};
            CHECK_OK(wgml_graph_compile(v[f].g, &o));
            write_inputs(&v[f]);
            CHECK_OK(wgml_graph_run(v[f].g));
        }
        t_rng_state = resume;
        for (int i = 0; i < v[0].nouts && i < v[1].nouts; i++) {
            uint64_t b0 = 0, b1 = 0;
            void *h0 = read_node(v[0].g, v[0].outs[i], &b0), *h1 = read_node(v[1].g, v[1].outs[i], &b1);
            int bad = b0 == b1 && wgml_node_dtype(v[0].outs[i]) == WGML_F32 ? close_f32(h1, h0, b0 / 4)
                      : (b0 == b1 && !memcmp(h0, h1, b0)) ? -1 : 0;
            CHECK(bad < 0, "graph %d: output %d (node %d) differs fused vs unfused at %d: %.9g vs %.9g", k, i,
                  v[1].outs[i]->id, bad, bad >= 0 ? ((float *)h1)[bad] : 0.0, bad >= 0 ? ((float *)h0)[bad] : 0.0);
            free(h0), free(h1);
        }
        wgml_graph_stats s0, s1;
        CHECK_OK(wgml_graph_stats_get(v[0].g, &s0));
        CHECK_OK(wgml_graph_stats_get(v[1].g, &s1));
        /* (a folded node may have taken several dispatches: one per window
         * when its operands span several bindings) */
        CHECK(s0.fused_nodes == 0 && (s1.fused_nodes == 0 || s1.dispatches <= s0.dispatches),
              "graph %d: fused %llu nodes, %llu dispatches vs %llu", k, (unsigned long long)s1.fused_nodes,
              (unsigned long long)s1.dispatches, (unsigned long long)s0.dispatches);
        fused_total += s1.fused_nodes;
        if (t_failed_checks)
            wgml_graph_dump(v[1].g, stdout, 0);
        for (int f = 0; f < 2; f++) {
            gen_free(&v[f]);
            wgml_tensor_free(st[f]);
        }
    }
    printf("    %llu nodes fused over 16 graphs\n", (unsigned long long)fused_total);
}

/* The three fusions on a block-like graph: counts, and values against the
 * unfused graph. */
static void fusions_fold_what_they_should(void)
{
    enum { S = 6, D = 40 };
    float *xh = host_f32(S * D, -2, 2), *yh = host_f32(S * D, -2, 2), *wh = host_f32(D, 0.5, 1.5);
    float *sh = host_f32(S * S, -4, 4), *mh = host_f32(S * S, -1, 0);
    float out[2][3][S * D];
    uint64_t disp[2], fused[2];
    for (int f = 0; f < 2; f++) {
        wgml_graph *g = NULL;
        CHECK_OK(wgml_graph_create(t_ctx, &g));
        wgml_node *x, *y, *w, *sc, *m, *h, *n, *r, *a, *b, *c, *t, *sm, *u;
        CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){S, D}, &x));
        CHECK_OK(wgml_graph_input(g, "y", WGML_F32, 2, (int64_t[]){S, D}, &y));
        CHECK_OK(wgml_graph_input(g, "w", WGML_F32, 1, (int64_t[]){D}, &w));
        CHECK_OK(wgml_graph_input(g, "scores", WGML_F32, 2, (int64_t[]){S, S}, &sc));
        CHECK_OK(wgml_graph_input(g, "mask", WGML_F32, 2, (int64_t[]){S, S}, &m));
        wgml_norm_params np = {WGML_RMS_NORM, 1e-6f, 0, 0, 0, 0, 0, 0, 0};
        CHECK_OK(wgml_g_binary(g, WGML_ADD, x, y, &h));           /* residual stream */
        CHECK_OK(wgml_g_norm(g, h, &np, w, NULL, NULL, &n));      /* -> norm(x, residual y), sum_out h */
        CHECK_OK(wgml_g_unary(g, WGML_SILU, n, 0, 0, &a));         /* a chain of 3 */
        CHECK_OK(wgml_g_unary(g, WGML_SCALE, a, 0.75f, 0.125f, &b));
        CHECK_OK(wgml_g_unary(g, WGML_TANH, b, 0, 0, &c));
        CHECK_OK(wgml_g_binary(g, WGML_ADD, c, h, &r));           /* h read after the norm */
        CHECK_OK(wgml_g_unary(g, WGML_SCALE, sc, 0.125f, 0, &t));  /* softmax(scale(s) + mask) */
        CHECK_OK(wgml_g_binary(g, WGML_ADD, t, m, &u));
        CHECK_OK(wgml_g_softmax(g, u, NULL, NULL, NULL, &sm));
        CHECK_OK(wgml_graph_output(g, r));
        CHECK_OK(wgml_graph_output(g, sm));
        CHECK_OK(wgml_graph_output(g, h));
        wgml_graph_options o = {f == 0, 0};
        CHECK_OK(wgml_graph_compile(g, &o));
        CHECK_OK(wgml_graph_write(g, x, xh, S * D * 4));
        CHECK_OK(wgml_graph_write(g, y, yh, S * D * 4));
        CHECK_OK(wgml_graph_write(g, w, wh, D * 4));
        CHECK_OK(wgml_graph_write(g, sc, sh, S * S * 4));
        CHECK_OK(wgml_graph_write(g, m, mh, S * S * 4));
        CHECK_OK(wgml_graph_run(g));
        CHECK_OK(wgml_graph_read(g, r, out[f][0], S * D * 4));
        CHECK_OK(wgml_graph_read(g, sm, out[f][1], S * S * 4));
        CHECK_OK(wgml_graph_read(g, h, out[f][2], S * D * 4));
        wgml_graph_stats s;
        CHECK_OK(wgml_graph_stats_get(g, &s));
        disp[f] = s.dispatches;
        fused[f] = s.fused_nodes;
        if (f == 1) {
            wgml_graph_dump(g, stdout, 0);
            CHECK(n->sum_out == h && h->produced_by == n && n->in[0] == x && n->in[3] == y,
                  "residual add not folded into the norm");
            CHECK(c->op == WG_OP_EW_CHAIN && c->p.chain_n == 3 && a->fused_into && b->fused_into == c,
                  "the unary chain was not fused");
            CHECK(sm->in[0] == sc && sm->in[1] == m && sm->p.softmax.scale == 0.125f && t->fused_into == sm &&
                  u->fused_into == sm, "scale and mask not folded into the softmax");
        }
        wgml_graph_free(g);
    }
    printf("    unfused %llu dispatches; fused %llu (%llu nodes folded)\n", (unsigned long long)disp[0],
           (unsigned long long)disp[1], (unsigned long long)fused[1]);
    CHECK(fused[0] == 0 && fused[1] == 5 && disp[1] + 5 == disp[0], "fusion counts");
    int bad;
    CHECK((bad = close_f32(out[1][0], out[0][0], S * D)) < 0, "r differs at %d", bad);
    CHECK((bad = close_f32(out[1][1], out[0][1], S * S)) < 0, "softmax differs at %d", bad);
    CHECK(!memcmp(out[1][2], out[0][2], S * D * 4), "the residual sum written by the norm differs");
    free(xh), free(yh), free(wh), free(sh), free(mh);
}

/* A replay of >= 1024 dispatches is encoded by worker threads in chunks
 * submitted in order (src/gpu/record.c): a chain of 1500 dependent steps
 * y = (i mod 7) - y, with every third step |y| instead, is exact in f32
 * (small integers) and depends on the order of its chunks (plain
 * translations would commute), so a chunk run out of order shows:
 * swapping the submission of two chunks fails it.
 * Forced to 3 threads: CI's 2 cores would otherwise pick 1 (off). */
static void parallel_replay_in_order(void)
{
    t_env("WGML_REPLAY_THREADS", "3");
    enum { N = 1500, W = 256 };
    wgml_graph *g = NULL;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    wgml_node *x, *y;
    CHECK_OK(wgml_graph_input(g, "x", WGML_F32, 1, (int64_t[]){W}, &x));
    y = x;
    for (int i = 0; i < N; i++)
        CHECK_OK(wgml_g_unary(g, i % 3 == 2 ? WGML_ABS : WGML_SCALE, y, -1.0f, (float)(i % 7), &y));
    CHECK_OK(wgml_graph_output(g, y));
    CHECK_OK(wgml_graph_compile(g, &(wgml_graph_options){.no_fuse = 1}));
    float h[W], got[W];
    for (int run = 0; run < 2; run++) {
        for (int i = 0; i < W; i++)
            h[i] = (float)(i - 128 + 1000 * run);
        CHECK_OK(wgml_graph_write(g, x, h, sizeof h));
        CHECK_OK(wgml_graph_run(g));
        CHECK_OK(wgml_graph_read(g, y, got, sizeof got));
        int bad = 0;
        double want0 = 0;
        for (int i = 0; i < W; i++) {
            double v = h[i];
            for (int k = 0; k < N; k++)
                v = k % 3 == 2 ? fabs(v) : (k % 7) - v;
            bad += got[i] != v;
            want0 = i ? want0 : v;
        }
        CHECK(!bad, "run %d: %d of %d elements wrong (got[0] = %g, want %g)", run, bad, W, got[0], want0);
    }
    /* Back to back, the second run fed the first's output by a device copy
     * (wgml_graph_copy), each run one command buffer behind the copy (as a
     * replay is while the GPU is still busy: forced here, since a CPU
     * driver has mostly finished by then). */
    t_env("WGML_REPLAY_WHOLE", "1");
    for (int i = 0; i < W; i++)
        h[i] = (float)(3 * i - 300);
    CHECK_OK(wgml_graph_write(g, x, h, sizeof h));
    CHECK_OK(wgml_graph_run(g));
    CHECK_OK(wgml_graph_copy(g, x, y, sizeof h));
    CHECK_OK(wgml_graph_run(g));
    CHECK_OK(wgml_graph_read(g, y, got, sizeof got));
    int bad = 0;
    for (int i = 0; i < W; i++) {
        double v = h[i];
        for (int k = 0; k < 2 * N; k++)
            v = k % N % 3 == 2 ? fabs(v) : (k % N % 7) - v;
        bad += got[i] != v;
    }
    CHECK(!bad, "back to back: %d of %d elements wrong", bad, W);
    t_env("WGML_REPLAY_WHOLE", NULL);
    wgml_graph_free(g);
    t_env("WGML_REPLAY_THREADS", NULL);
}

static const t_case cases[] = {
    {"random_graphs_equal_eager", random_graphs},
    {"random_graphs_fused_equal_unfused", random_graphs_fused_equal_unfused},
    {"fusions_fold_what_they_should", fusions_fold_what_they_should},
    {"parallel_replay_in_order", parallel_replay_in_order},
};

int main(int argc, char **argv) { return graph_main(argc, argv, cases, sizeof cases / sizeof *cases); }
