/*
 * Building graphs: nodes, symbolic dims, views and one builder per op.  A
 * builder fills the op's parameters, runs the op table's check on its
 * operands' descriptions and appends the node; nothing is added when the
 * check fails, and the message names the node it would have been.  In an
 * eager graph the node is also run at once (exec.c).
 */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

const char *wg_node_kind_name(const wgml_node *n)
{
    static const char *views[] = {"reshape", "permute", "slice", "broadcast"};
    switch (n->kind) {
    case WG_N_INPUT: return "input";
    case WG_N_TENSOR: return "tensor";
    case WG_N_VIEW: return views[n->op];
    default: return wg_op_def_get(n->op)->name;
    }
}

const char *wg_node_label(const wgml_node *n, char *buf, size_t size)
{
    if (n->name)
        snprintf(buf, size, "node %d '%s' (%s)", n->id, n->name, wg_node_kind_name(n));
    else
        snprintf(buf, size, "node %d (%s)", n->id, wg_node_kind_name(n));
    return buf;
}

wgml_status wg_graph_fail(const wgml_node *n, wgml_status st)
{
    char lab[160];
    return wg_failp(st, "graph %s", wg_node_label(n, lab, sizeof lab));
}

int64_t wg_graph_dim_value(const wgml_graph *g, int64_t v, bool at_max)
{
    if (!wg_is_sym(v))
        return v;
    const wg_gdim *d = &g->dims[wg_sym_id(v)];
    return at_max || !d->bound ? d->max : d->value;
}

wg_desc wg_desc_at_max(const wgml_graph *g, const wg_desc *d)
{
    wg_desc m = *d;
    for (int i = 0; i < m.ndim; i++)
        m.shape[i] = wg_graph_dim_value(g, m.shape[i], true);
    return m;
}

void wg_node_concrete(const wgml_node *n, int64_t shape[WGML_MAX_DIMS])
{
    for (int i = 0; i < WGML_MAX_DIMS; i++)
        shape[i] = i < n->d.ndim ? wg_graph_dim_value(n->g, n->d.shape[i], false) : 1;
}

/* ------------------------------------------------------------ graphs */

static wgml_status graph_new(wgml_ctx *ctx, bool eager, wgml_graph **out)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!out)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_create: out is NULL");
    wgml_graph *g = calloc(1, sizeof *g);
    if (!g)
        return wg_fail(WGML_ERR_OOM, "out of host memory");
    g->ctx = ctx;
    g->eager = eager;
    *out = g;
    return WGML_OK;
}

wgml_status wgml_graph_create(wgml_ctx *ctx, wgml_graph **out) { return graph_new(ctx, false, out); }
wgml_status wgml_graph_create_eager(wgml_ctx *ctx, wgml_graph **out) { return graph_new(ctx, true, out); }

void wgml_graph_free(wgml_graph *g)
{
    if (!g)
        return;
    wgml_ctx_sync(g->ctx); /* profiled times land in g->node_ns at this wait */
    wg_graph_drop_bindings(g);
    for (int i = 0; i < WG_CACHE_SLOTS; i++) {
        wg_recording_free(&g->cache[i].rec);
        free(g->cache[i].ranges);
    }
    for (size_t i = 0; i < g->n; i++) {
        wgml_tensor_free(g->nodes[i]->t);
        free(g->nodes[i]->name);
        free(g->nodes[i]);
    }
    for (int i = 0; i < g->ndims; i++)
        free(g->dims[i].name);
    wgml_tensor_free(g->arena);
    free(g->order);
    free(g->nodes);
    free(g->node_ns);
    free(g);
}

wgml_status wgml_graph_dim(wgml_graph *g, const char *name, int64_t max, int64_t *value)
{
    if (!g || !name || !value)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_dim: NULL argument");
    if (g->eager)
        return wg_fail(WGML_ERR_UNSUPPORTED, "wgml_graph_dim: an eager graph has no symbolic dims");
    if (g->compiled)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_dim: the graph is compiled");
    if (g->ndims == WGML_MAX_GRAPH_DIMS)
        return wg_fail(WGML_ERR_LIMIT, "wgml_graph_dim: at most %d symbolic dims", WGML_MAX_GRAPH_DIMS);
    if (max < 1 || max > ((int64_t)1 << 40))
        return wg_fail(WGML_ERR_SHAPE, "wgml_graph_dim '%s': max %lld must be 1..2^40", name, (long long)max);
    wg_gdim *d = &g->dims[g->ndims];
    if (!(d->name = strdup(name)))
        return wg_fail(WGML_ERR_OOM, "out of host memory");
    d->max = max;
    g->dim_names[g->ndims] = d->name;
    *value = WGML_SYMBOLIC_BASE - g->ndims++;
    return WGML_OK;
}

/* ------------------------------------------------------------ nodes */

static wgml_status check_operand(wgml_graph *g, const wgml_node *x, const char *fn, int i)
{
    if (!x)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: operand %d is NULL", fn, i);
    if (x->g != g)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: operand %d is from another graph", fn, i);
    return WGML_OK;
}

/* Appends a node made from `proto` (kind, op, p, in, nin, d); for WG_N_OP
 * the description comes from the op's check.  An eager graph runs it. */
static wgml_status add_node(wgml_graph *g, const wgml_node *proto, const char *fn, wgml_node **out)
{
    if (!g || !out)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: graph or out is NULL", fn);
    *out = NULL;
    if (g->compiled)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: the graph is compiled; build a new one", fn);
    wgml_node *n = calloc(1, sizeof *n);
    if (!n)
        return wg_fail(WGML_ERR_OOM, "out of host memory");
    *n = *proto;
    n->g = g;
    n->id = (int)g->n;
    n->order = -1;
    wgml_status st = WGML_OK;
    if (n->kind == WG_N_OP && (n->nin < wg_op_def_get(n->op)->min_in || n->nin > wg_op_def_get(n->op)->max_in))
        st = wg_fail(WGML_ERR_INVALID_ARG, "%s: %d inputs; %s takes %d..%d", fn, n->nin, wg_op_def_get(n->op)->name,
                     wg_op_def_get(n->op)->min_in, wg_op_def_get(n->op)->max_in);
    for (int i = 0; i < n->nin && st == WGML_OK; i++)
        if (n->in[i] || (n->kind == WG_N_OP && i < wg_op_def_get(n->op)->min_in))
            st = check_operand(g, n->in[i], fn, i);
    if (st == WGML_OK && n->kind == WG_N_OP) {
        const wg_op_def *def = wg_op_def_get(n->op);
        const wg_desc *d[WG_OP_MAX_IN] = {0};
        for (int i = 0; i < n->nin; i++)
            d[i] = n->in[i] ? &n->in[i]->d : NULL;
        if ((st = def->check(&n->p, d, n->nin, &n->d)) != WGML_OK)
            st = wg_graph_fail(n, st);
    }
    if (st == WGML_OK && g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 64;
        wgml_node **q = realloc(g->nodes, cap * sizeof *q);
        if (!q)
            st = wg_fail(WGML_ERR_OOM, "out of host memory");
        else {
            g->nodes = q;
            g->cap = cap;
        }
    }
    if (st == WGML_OK && g->eager) {
        if ((st = wg_node_make_tensor(n)) == WGML_OK && n->kind == WG_N_OP)
            st = wg_node_encode(n);
        if (st != WGML_OK)
            wgml_tensor_free(n->t);
    }
    if (st != WGML_OK) {
        free(n);
        return st;
    }
    g->nodes[g->n++] = n;
    *out = n;
    return WGML_OK;
}

static wgml_status leaf_desc(wgml_graph *g, const char *fn, wgml_dtype dt, int ndim, const int64_t *shape, wg_desc *d)
{
    if (!wg_dtype(dt))
        return wg_fail(WGML_ERR_DTYPE, "%s: unknown dtype %d", fn, (int)dt);
    if (ndim < 0 || ndim > WGML_MAX_DIMS || (ndim && !shape))
        return wg_fail(WGML_ERR_SHAPE, "%s: ndim %d (0..%d, with a shape)", fn, ndim, WGML_MAX_DIMS);
    d->dtype = dt;
    d->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        if (wg_is_sym(shape[i]) && wg_sym_id(shape[i]) >= g->ndims)
            return wg_fail(WGML_ERR_SHAPE, "%s: dim %d is an unknown symbolic dim", fn, i);
        if (!wg_is_sym(shape[i]) && (shape[i] < 0 || shape[i] > ((int64_t)1 << 40)))
            return wg_fail(WGML_ERR_SHAPE, "%s: dim %d is %lld (must be 0..2^40)", fn, i, (long long)shape[i]);
        d->shape[i] = shape[i];
    }
    return WGML_OK;
}

wgml_status wgml_graph_input(wgml_graph *g, const char *name, wgml_dtype dt, int ndim, const int64_t *shape,
                             wgml_node **out)
{
    wgml_node proto = {.kind = WG_N_INPUT};
    wgml_status st = g ? leaf_desc(g, "wgml_graph_input", dt, ndim, shape, &proto.d)
                       : wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_input: graph is NULL");
    if (st == WGML_OK && (st = add_node(g, &proto, "wgml_graph_input", out)) == WGML_OK && name)
        st = wgml_node_set_name(*out, name);
    return st;
}

wgml_status wgml_graph_tensor(wgml_graph *g, const char *name, wgml_tensor *t, wgml_node **out)
{
    if (!t)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_tensor: tensor is NULL");
    if (g && t->ctx != g->ctx)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_tensor: the tensor is from another context");
    wgml_node proto = {.kind = WG_N_TENSOR, .user = t};
    proto.d.dtype = t->dtype;
    proto.d.ndim = t->ndim;
    memcpy(proto.d.shape, t->shape, sizeof proto.d.shape);
    wgml_status st = add_node(g, &proto, "wgml_graph_tensor", out);
    if (st == WGML_OK && name)
        st = wgml_node_set_name(*out, name);
    return st;
}

wgml_status wgml_graph_output(wgml_graph *g, wgml_node *n)
{
    if (!g || !n || n->g != g)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_output: NULL node or one from another graph");
    if (g->compiled)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_output: the graph is compiled");
    n->output = true;
    return WGML_OK;
}

wgml_status wgml_node_set_name(wgml_node *n, const char *name)
{
    if (!n || !name)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_node_set_name: NULL argument");
    char *c = strdup(name);
    if (!c)
        return wg_fail(WGML_ERR_OOM, "out of host memory");
    free(n->name);
    n->name = c;
    return WGML_OK;
}

wgml_status wgml_node_set_input(wgml_node *n, int slot, wgml_node *src)
{
    if (!n || !src || n->g != src->g)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_node_set_input: NULL node or nodes of different graphs");
    if (n->g->compiled || n->g->eager)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_node_set_input: the graph is compiled or eager");
    if (slot < 0 || slot >= n->nin)
        return wg_fail(WGML_ERR_INDEX, "wgml_node_set_input: slot %d of %d", slot, n->nin);
    if (src->d.dtype != n->in[slot]->d.dtype || src->d.ndim != n->in[slot]->d.ndim ||
        memcmp(src->d.shape, n->in[slot]->d.shape, sizeof(int64_t) * (size_t)src->d.ndim))
        return wg_fail(WGML_ERR_SHAPE, "wgml_node_set_input: the new input's shape or dtype differs from the old one's");
    n->in[slot] = src;
    return WGML_OK;
}

/* ------------------------------------------------------------ node facts */

wgml_dtype wgml_node_dtype(const wgml_node *n) { return n ? n->d.dtype : WGML_DTYPE_COUNT; }
int wgml_node_ndim(const wgml_node *n) { return n ? n->d.ndim : 0; }
const char *wgml_node_name(const wgml_node *n) { return n && n->name ? n->name : ""; }

int64_t wgml_node_dim(const wgml_node *n, int axis)
{
    if (!n)
        return 0;
    if (axis < 0)
        axis += n->d.ndim;
    if (axis < 0 || axis >= n->d.ndim)
        return 0;
    return n->g->compiled || n->g->eager ? wg_graph_dim_value(n->g, n->d.shape[axis], false) : n->d.shape[axis];
}

/* ------------------------------------------------------------ views */

static wgml_node view_proto(wgml_node *x, int kind)
{
    wgml_node p = {.kind = WG_N_VIEW, .op = kind, .nin = 1};
    p.in[0] = x;
    if (x)
        p.d = x->d;
    return p;
}

wgml_status wgml_g_reshape(wgml_graph *g, wgml_node *x, int ndim, const int64_t *shape, wgml_node **out)
{
    const char *fn = "wgml_g_reshape";
    if (!x || !shape || ndim < 0 || ndim > WGML_MAX_DIMS)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: NULL argument or ndim %d", fn, ndim);
    wgml_node p = view_proto(x, WG_V_RESHAPE);
    /* Element counts must match: fixed parts multiply out equal and the
     * symbolic dims are the same ones (one fixed -1 may be inferred). */
    int64_t fx = 1, fo = 1, infer = -1;
    int sx[WGML_MAX_GRAPH_DIMS] = {0}, so[WGML_MAX_GRAPH_DIMS] = {0};
    for (int i = 0; i < x->d.ndim; i++)
        wg_is_sym(x->d.shape[i]) ? (void)sx[wg_sym_id(x->d.shape[i])]++ : (void)(fx *= x->d.shape[i]);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == -1 && infer < 0)
            infer = i;
        else if (wg_is_sym(shape[i]) && wg_sym_id(shape[i]) < g->ndims)
            so[wg_sym_id(shape[i])]++;
        else if (shape[i] >= 0)
            fo *= shape[i];
        else
            return wg_fail(WGML_ERR_SHAPE, "%s: dim %d is %lld", fn, i, (long long)shape[i]);
        p.p.shape[i] = shape[i];
    }
    if (infer >= 0 && fo > 0 && fx % fo == 0)
        p.p.shape[infer] = fx / fo, fo = fx;
    if (fo != fx || memcmp(sx, so, sizeof sx)) {
        char a[96];
        return wg_fail(WGML_ERR_SHAPE, "%s: %s does not reshape to the %d dims given (element counts differ)", fn,
                       wg_desc_str(&x->d, g->dim_names, a, sizeof a), ndim);
    }
    p.d.ndim = p.p.ndim = ndim;
    memcpy(p.d.shape, p.p.shape, sizeof p.d.shape);
    return add_node(g, &p, fn, out);
}

wgml_status wgml_g_permute(wgml_graph *g, wgml_node *x, const int *perm, wgml_node **out)
{
    if (!x || !perm)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_g_permute: NULL argument");
    wgml_node p = view_proto(x, WG_V_PERMUTE);
    for (int i = 0; i < x->d.ndim; i++)
        p.p.a[i] = perm[i];
    const wg_desc *d[1] = {&x->d};
    wgml_status st = wg_op_def_get(WG_OP_PERMUTE)->check(&p.p, d, 1, &p.d);
    return st != WGML_OK ? wg_failp(st, "wgml_g_permute") : add_node(g, &p, "wgml_g_permute", out);
}

wgml_status wgml_g_transpose(wgml_graph *g, wgml_node *x, int axis0, int axis1, wgml_node **out)
{
    if (!x)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_g_transpose: x is NULL");
    int perm[WGML_MAX_DIMS] = {0, 1, 2, 3}, nd = x->d.ndim;
    int a = axis0 < 0 ? axis0 + nd : axis0, b = axis1 < 0 ? axis1 + nd : axis1;
    if (a < 0 || a >= nd || b < 0 || b >= nd)
        return wg_fail(WGML_ERR_INDEX, "wgml_g_transpose: axes %d, %d out of range for %d dims", axis0, axis1, nd);
    perm[a] = b;
    perm[b] = a;
    return wgml_g_permute(g, x, perm, out);
}

wgml_status wgml_g_slice(wgml_graph *g, wgml_node *x, int axis, int64_t start, int64_t stop, int64_t step,
                         wgml_node **out)
{
    const char *fn = "wgml_g_slice";
    if (!x || !g)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: NULL argument", fn);
    int a = axis < 0 ? axis + x->d.ndim : axis;
    if (a < 0 || a >= x->d.ndim)
        return wg_fail(WGML_ERR_INDEX, "%s: axis %d out of range for %d dims", fn, axis, x->d.ndim);
    int64_t size = x->d.shape[a];
    wgml_node p = view_proto(x, WG_V_SLICE);
    p.p.axis = a;
    p.p.k = start;
    p.p.a[0] = stop;
    p.p.a[1] = step;
    if (wg_is_sym(stop)) {
        /* A symbolic stop: [0, dim) of a fixed or the same symbolic size. */
        if (start != 0 || step != 1 || wg_sym_id(stop) >= g->ndims)
            return wg_fail(WGML_ERR_SHAPE, "%s: a symbolic stop needs start 0 and step 1", fn);
        if (size != stop && (wg_is_sym(size) || g->dims[wg_sym_id(stop)].max > size))
            return wg_fail(WGML_ERR_SHAPE, "%s: symbolic stop '%s' (up to %lld) can pass dim %d", fn,
                           g->dims[wg_sym_id(stop)].name, (long long)g->dims[wg_sym_id(stop)].max, a);
        p.d.shape[a] = stop;
        return add_node(g, &p, fn, out);
    }
    if (wg_is_sym(size))
        return wg_fail(WGML_ERR_SHAPE, "%s: dim %d is symbolic; slice it with a symbolic stop", fn, a);
    if (step < 1 || start < 0 || stop < start || stop > size)
        return wg_fail(WGML_ERR_SHAPE, "%s: [%lld:%lld:%lld] does not fit dim %d of size %lld", fn, (long long)start,
                       (long long)stop, (long long)step, a, (long long)size);
    p.d.shape[a] = (stop - start + step - 1) / step;
    return add_node(g, &p, fn, out);
}

wgml_status wgml_g_broadcast(wgml_graph *g, wgml_node *x, int ndim, const int64_t *shape, wgml_node **out)
{
    if (!x || !shape || ndim < x->d.ndim || ndim > WGML_MAX_DIMS)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_g_broadcast: NULL argument or ndim %d", ndim);
    wgml_node p = view_proto(x, WG_V_BROADCAST);
    for (int i = 0; i < ndim; i++) {
        int j = i - (ndim - x->d.ndim);
        int64_t s = j < 0 ? 1 : x->d.shape[j];
        if (s != shape[i] && s != 1)
            return wg_fail(WGML_ERR_SHAPE, "wgml_g_broadcast: dim %d of size %lld does not broadcast", i,
                           (long long)s);
        p.p.shape[i] = p.d.shape[i] = shape[i];
    }
    p.p.ndim = p.d.ndim = ndim;
    return add_node(g, &p, "wgml_g_broadcast", out);
}

/* ------------------------------------------------------------ op builders */

static wgml_status op_node(wgml_graph *g, int op, const wg_op_params *p, wgml_node *const *in, int nin,
                           const char *fn, wgml_node **out)
{
    wgml_node proto = {.kind = WG_N_OP, .op = op, .nin = nin};
    if (p)
        proto.p = *p;
    if (nin > WG_OP_MAX_IN)
        return wg_fail(WGML_ERR_LIMIT, "%s: %d inputs (max %d)", fn, nin, WG_OP_MAX_IN);
    for (int i = 0; i < nin; i++)
        proto.in[i] = in[i];
    return add_node(g, &proto, fn, out);
}

#define IN(...) ((wgml_node *const[]){__VA_ARGS__})
#define NIN(...) ((int)(sizeof((wgml_node *const[]){__VA_ARGS__}) / sizeof(wgml_node *)))
#define BUILD(op, pp, fn, ...) op_node(g, op, pp, IN(__VA_ARGS__), NIN(__VA_ARGS__), fn, out)

wgml_status wgml_g_unary(wgml_graph *g, wgml_unary_op op, wgml_node *x, float p0, float p1, wgml_node **out)
{
    wg_op_params p = {.sub = (int)op, .f = {p0, p1}};
    return BUILD(WG_OP_UNARY, &p, "wgml_g_unary", x);
}
wgml_status wgml_g_binary(wgml_graph *g, wgml_binary_op op, wgml_node *a, wgml_node *b, wgml_node **out)
{
    wg_op_params p = {.sub = (int)op};
    return BUILD(WG_OP_BINARY, &p, "wgml_g_binary", a, b);
}
wgml_status wgml_g_where(wgml_graph *g, wgml_node *cond, wgml_node *a, wgml_node *b, wgml_node **out)
{
    return BUILD(WG_OP_WHERE, NULL, "wgml_g_where", cond, a, b);
}
wgml_status wgml_g_cast(wgml_graph *g, wgml_node *x, wgml_dtype dt, wgml_node **out)
{
    wg_op_params p = {.dtype = dt};
    return BUILD(WG_OP_CAST, &p, "wgml_g_cast", x);
}
wgml_status wgml_g_copy(wgml_graph *g, wgml_node *x, wgml_node **out)
{
    return BUILD(WG_OP_COPY, NULL, "wgml_g_copy", x);
}
wgml_status wgml_g_fill(wgml_graph *g, wgml_dtype dt, int ndim, const int64_t *shape, double value, wgml_node **out)
{
    wg_op_params p = {.dtype = dt, .ndim = ndim, .value = value};
    if (ndim < 0 || ndim > WGML_MAX_DIMS || (ndim && !shape))
        return wg_fail(WGML_ERR_SHAPE, "wgml_g_fill: ndim %d (0..%d, with a shape)", ndim, WGML_MAX_DIMS);
    for (int i = 0; i < ndim; i++)
        p.shape[i] = shape[i];
    return op_node(g, WG_OP_FILL, &p, NULL, 0, "wgml_g_fill", out);
}
wgml_status wgml_g_permute_copy(wgml_graph *g, wgml_node *x, const int *perm, wgml_node **out)
{
    wg_op_params p = {0};
    for (int i = 0; perm && x && i < x->d.ndim; i++)
        p.a[i] = perm[i];
    if (!perm)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_g_permute_copy: perm is NULL");
    return BUILD(WG_OP_PERMUTE, &p, "wgml_g_permute_copy", x);
}
wgml_status wgml_g_repeat(wgml_graph *g, wgml_node *x, int ndim, const int64_t *shape, wgml_node **out)
{
    wg_op_params p = {.ndim = ndim};
    for (int i = 0; shape && i < ndim && i < WGML_MAX_DIMS; i++)
        p.shape[i] = shape[i];
    return BUILD(WG_OP_REPEAT, &p, "wgml_g_repeat", x);
}
wgml_status wgml_g_concat(wgml_graph *g, wgml_node *const *xs, int n, int axis, wgml_node **out)
{
    wg_op_params p = {.axis = axis};
    if (!xs || n < 1)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_g_concat: no inputs");
    return op_node(g, WG_OP_CONCAT, &p, xs, n, "wgml_g_concat", out);
}
wgml_status wgml_g_pad(wgml_graph *g, wgml_node *x, const int64_t *before, const int64_t *after, wgml_pad_mode mode,
                       double value, wgml_node **out)
{
    wg_op_params p = {.sub = (int)mode, .value = value};
    if (!before || !after)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_g_pad: before/after is NULL");
    for (int i = 0; x && i < x->d.ndim; i++)
        p.a[i] = before[i], p.b[i] = after[i];
    return BUILD(WG_OP_PAD, &p, "wgml_g_pad", x);
}
wgml_status wgml_g_flip(wgml_graph *g, wgml_node *x, unsigned axes_mask, wgml_node **out)
{
    wg_op_params p = {.mask = axes_mask};
    return BUILD(WG_OP_FLIP, &p, "wgml_g_flip", x);
}
wgml_status wgml_g_roll(wgml_graph *g, wgml_node *x, const int64_t *shifts, wgml_node **out)
{
    wg_op_params p = {0};
    if (!shifts)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_g_roll: shifts is NULL");
    for (int i = 0; x && i < x->d.ndim; i++)
        p.a[i] = shifts[i];
    return BUILD(WG_OP_ROLL, &p, "wgml_g_roll", x);
}
wgml_status wgml_g_tri(wgml_graph *g, wgml_node *x, int upper, int64_t k, wgml_node **out)
{
    wg_op_params p = {.flag = upper, .k = k};
    return BUILD(WG_OP_TRI, &p, "wgml_g_tri", x);
}
wgml_status wgml_g_diag(wgml_graph *g, wgml_node *x, int to_matrix, wgml_node **out)
{
    wg_op_params p = {.flag = to_matrix};
    return BUILD(WG_OP_DIAG, &p, "wgml_g_diag", x);
}
wgml_status wgml_g_get_rows(wgml_graph *g, wgml_node *src, wgml_node *idx, wgml_dtype out_dtype, wgml_node **out)
{
    wg_op_params p = {.dtype = out_dtype};
    return BUILD(WG_OP_GET_ROWS, &p, "wgml_g_get_rows", src, idx);
}
wgml_status wgml_g_set_rows(wgml_graph *g, wgml_node *dst, wgml_node *idx, wgml_node *src, wgml_node **out)
{
    return BUILD(WG_OP_SET_ROWS, NULL, "wgml_g_set_rows", dst, idx, src);
}
wgml_status wgml_g_gather(wgml_graph *g, wgml_node *src, int axis, wgml_node *idx, wgml_node **out)
{
    wg_op_params p = {.axis = axis};
    return BUILD(WG_OP_GATHER, &p, "wgml_g_gather", src, idx);
}
wgml_status wgml_g_scatter_add(wgml_graph *g, wgml_node *dst, int axis, wgml_node *idx, wgml_node *src,
                               wgml_node **out)
{
    wg_op_params p = {.axis = axis};
    return BUILD(WG_OP_SCATTER_ADD, &p, "wgml_g_scatter_add", dst, idx, src);
}
wgml_status wgml_g_index_select(wgml_graph *g, wgml_node *src, int axis, wgml_node *idx, wgml_node **out)
{
    wg_op_params p = {.axis = axis};
    return BUILD(WG_OP_INDEX_SELECT, &p, "wgml_g_index_select", src, idx);
}
wgml_status wgml_g_one_hot(wgml_graph *g, wgml_node *idx, int64_t classes, wgml_dtype dt, wgml_node **out)
{
    wg_op_params p = {.dtype = dt, .shape = {classes}};
    return BUILD(WG_OP_ONE_HOT, &p, "wgml_g_one_hot", idx);
}
wgml_status wgml_g_embedding(wgml_graph *g, wgml_node *table, wgml_node *ids, wgml_dtype out_dtype, wgml_node **out)
{
    wg_op_params p = {.dtype = out_dtype};
    return BUILD(WG_OP_EMBEDDING, &p, "wgml_g_embedding", table, ids);
}
wgml_status wgml_g_dequantize(wgml_graph *g, wgml_node *x, wgml_dtype dt, wgml_node **out)
{
    wg_op_params p = {.dtype = dt};
    return BUILD(WG_OP_DEQUANTIZE, &p, "wgml_g_dequantize", x);
}
wgml_status wgml_g_reduce(wgml_graph *g, wgml_reduce_op op, wgml_node *x, unsigned axes_mask, float p0,
                          wgml_node **out)
{
    wg_op_params p = {.sub = (int)op, .mask = axes_mask, .f = {p0, 0}};
    return BUILD(WG_OP_REDUCE, &p, "wgml_g_reduce", x);
}
wgml_status wgml_g_cumsum(wgml_graph *g, wgml_node *x, int axis, int exclusive, wgml_node **out)
{
    wg_op_params p = {.axis = axis, .flag = exclusive};
    return BUILD(WG_OP_CUMSUM, &p, "wgml_g_cumsum", x);
}
wgml_status wgml_g_argsort(wgml_graph *g, wgml_node *x, int descending, wgml_node **out)
{
    wg_op_params p = {.flag = descending};
    return BUILD(WG_OP_ARGSORT, &p, "wgml_g_argsort", x);
}
wgml_status wgml_g_top_k(wgml_graph *g, wgml_node *x, int64_t k, int indices, wgml_node **out)
{
    wg_op_params p = {.k = k, .flag = indices};
    return BUILD(WG_OP_TOP_K, &p, "wgml_g_top_k", x);
}
wgml_status wgml_g_softmax(wgml_graph *g, wgml_node *x, wgml_node *mask, wgml_node *sinks,
                           const wgml_softmax_params *sp, wgml_node **out)
{
    wg_op_params p = {.softmax = {-1, 1, 0, 0}};
    if (sp)
        p.softmax = *sp;
    return BUILD(WG_OP_SOFTMAX, &p, "wgml_g_softmax", x, mask, sinks);
}
wgml_status wgml_g_norm(wgml_graph *g, wgml_node *x, const wgml_norm_params *np, wgml_node *weight,
                        wgml_node *bias, wgml_node *residual, wgml_node **out)
{
    if (!np)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_g_norm: params are NULL");
    if (np->kind == WGML_BATCH_NORM)
        return wg_fail(WGML_ERR_UNSUPPORTED, "wgml_g_norm: BATCH_NORM is not a graph op yet (use the eager call)");
    wg_op_params p = {.norm = *np};
    p.norm.weight = p.norm.bias = p.norm.residual = p.norm.mean = p.norm.var = NULL;
    p.norm.sum_out = NULL;
    return BUILD(WG_OP_NORM, &p, "wgml_g_norm", x, weight, bias, residual);
}
wgml_status wgml_g_rope(wgml_graph *g, wgml_node *x, wgml_node *pos, const wgml_rope_params *rp,
                        wgml_node *freq_factors, wgml_node **out)
{
    if (!rp)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_g_rope: params are NULL");
    wg_op_params p = {.rope = *rp};
    p.rope.freq_factors = NULL;
    return BUILD(WG_OP_ROPE, &p, "wgml_g_rope", x, pos, freq_factors);
}
wgml_status wgml_g_glu(wgml_graph *g, wgml_glu_kind kind, wgml_node *x, wgml_node *gate, int swapped,
                       wgml_node **out)
{
    wg_op_params p = {.sub = (int)kind, .flag = swapped};
    return BUILD(WG_OP_GLU, &p, "wgml_g_glu", x, gate);
}
wgml_status wgml_g_sample(wgml_graph *g, wgml_node *logits, wgml_node *seed, const wgml_sample_params *sp,
                          wgml_node **out)
{
    if (!sp)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_g_sample: params are NULL");
    wg_op_params p = {.sample = *sp};
    return BUILD(WG_OP_SAMPLE, &p, "wgml_g_sample", logits, seed);
}

/* ------------------------------------------------ matmul and attention */

static wgml_matmul_params mm_params(const wgml_matmul_params *p)
{
    return p ? *p : (wgml_matmul_params){1.0f, 0.0f, WGML_ACT_NONE, WGML_PREC_F32};
}
wgml_status wgml_g_matmul(wgml_graph *g, wgml_node *a, wgml_node *b, wgml_node *bias, wgml_node *c,
                          const wgml_matmul_params *mp, wgml_dtype out_dtype, wgml_node **out)
{
    wg_op_params p = {.mm = mm_params(mp), .dtype = out_dtype};
    return BUILD(WG_OP_MATMUL, &p, "wgml_g_matmul", a, b, bias, c);
}
wgml_status wgml_g_linear(wgml_graph *g, wgml_node *x, wgml_node *w, wgml_node *bias, wgml_node *c,
                          const wgml_matmul_params *mp, wgml_dtype out_dtype, wgml_node **out)
{
    wg_op_params p = {.mm = mm_params(mp), .dtype = out_dtype};
    return BUILD(WG_OP_LINEAR, &p, "wgml_g_linear", x, w, bias, c);
}
wgml_status wgml_g_linear_id(wgml_graph *g, wgml_node *x, wgml_node *w, wgml_node *ids, wgml_dtype out_dtype,
                             wgml_node **out)
{
    wg_op_params p = {.dtype = out_dtype};
    return BUILD(WG_OP_LINEAR_ID, &p, "wgml_g_linear_id", x, w, ids);
}
wgml_status wgml_g_attention(wgml_graph *g, wgml_node *q, wgml_node *k, wgml_node *v, wgml_node *mask,
                             wgml_node *sinks, const wgml_attn_params *ap, wgml_dtype out_dtype, wgml_node **out)
{
    wg_op_params p = {.dtype = out_dtype};
    if (ap)
        p.attn = *ap;
    return BUILD(WG_OP_ATTENTION, &p, "wgml_g_attention", q, k, v, mask, sinks);
}
