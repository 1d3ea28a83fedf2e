/*
 * The executor.  Compiling plans the graph (plan.c), allocates its arena
 * and records it at the symbolic dims' maxima; a run binds the node
 * tensors at the current dims, takes the recording for those dims from a
 * small cache (recording afresh on a miss: every op's encode with a
 * recorder as the context's target), and replays it into the stream with
 * one submit.  Replays use compiled recordings (record.c): no parameter
 * copies, no bind-group lookups.
 */
#include "graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ node tensors */

wgml_status wg_node_make_tensor(wgml_node *n)
{
    wgml_graph *g = n->g;
    wgml_tensor_free(n->t);
    n->t = NULL;
    int64_t s[WGML_MAX_DIMS];
    wg_node_concrete(n, s);
    wgml_status st = WGML_OK;
    if (g->eager) {
        for (int i = 0; i < n->d.ndim; i++)
            if (wg_is_sym(n->d.shape[i]))
                return wg_fail(WGML_ERR_SHAPE, "eager graph: dim %d is symbolic", i);
    }
    switch (n->kind) {
    case WG_N_TENSOR:
        st = wg_tensor_dup(n->user, &n->t);
        break;
    case WG_N_INPUT:
    case WG_N_OP:
        if (n->kind == WG_N_OP && wg_op_def_get(n->op)->updates_input)
            st = wg_tensor_dup(n->in[0]->t, &n->t);
        else if (g->eager)
            st = wgml_tensor_new(g->ctx, n->d.dtype, n->d.ndim, s, &n->t);
        else
            st = wg_tensor_alias(g->arena, n->offset, n->d.dtype, n->d.ndim, s, &n->t);
        break;
    case WG_N_VIEW: {
        const wgml_tensor *src = n->in[0]->t;
        if (n->op == WG_V_RESHAPE) {
            st = wgml_view_reshape(src, n->d.ndim, s, &n->t);
        } else if (n->op == WG_V_PERMUTE) {
            int perm[WGML_MAX_DIMS];
            for (int i = 0; i < WGML_MAX_DIMS; i++)
                perm[i] = (int)n->p.a[i];
            st = wgml_view_permute(src, perm, &n->t);
        } else if (n->op == WG_V_SLICE) {
            int64_t stop = wg_graph_dim_value(g, n->p.a[0], false);
            st = wgml_view_slice(src, n->p.axis, n->p.k, stop, n->p.a[1], &n->t);
        } else {
            st = wgml_view_broadcast(src, n->d.ndim, s, &n->t);
        }
        break;
    }
    }
    return st == WGML_OK ? WGML_OK : wg_graph_fail(n, st);
}

wgml_status wg_node_encode(wgml_node *n)
{
    const wgml_tensor *in[WG_OP_MAX_IN] = {0};
    for (int i = 0; i < n->nin; i++)
        in[i] = n->in[i] ? n->in[i]->t : NULL;
    wgml_status st = wg_op_def_get(n->op)->encode(&n->p, in, n->nin, n->t, n->sum_out ? n->sum_out->t : NULL);
    return st == WGML_OK ? WGML_OK : wg_graph_fail(n, st);
}

void wg_graph_drop_bindings(wgml_graph *g)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_tensor_free(g->nodes[i]->t);
        g->nodes[i]->t = NULL;
    }
    g->tensors_valid = false;
}

static void dims_key(const wgml_graph *g, int64_t key[WGML_MAX_GRAPH_DIMS])
{
    memset(key, 0, sizeof(int64_t) * WGML_MAX_GRAPH_DIMS);
    for (int i = 0; i < g->ndims; i++)
        key[i] = g->dims[i].value;
}

/* Node tensors at the current dims (remade only when a dim changed). */
static wgml_status bind_tensors(wgml_graph *g)
{
    int64_t key[WGML_MAX_GRAPH_DIMS];
    dims_key(g, key);
    if (g->tensors_valid && !memcmp(key, g->tensors_key, sizeof key))
        return WGML_OK;
    wg_graph_drop_bindings(g);
    for (size_t i = 0; i < g->n_order; i++) {
        wgml_status st = wg_node_make_tensor(g->order[i]);
        if (st != WGML_OK) {
            wg_graph_drop_bindings(g);
            return st;
        }
    }
    memcpy(g->tensors_key, key, sizeof key);
    g->tensors_valid = true;
    return WGML_OK;
}

/* ------------------------------------------------------------ recordings */

/* The scratch provider while a graph records: each node's scratch from the
 * start of the arena's scratch region (nodes run in order, and wgpu puts a
 * barrier between dispatches writing one buffer).  A request that does not
 * fit goes to the pool this time and grows what compile allocates. */
static wgml_status scratch_from_arena(void *data, uint64_t bytes, const wgml_tensor **base, uint64_t *off)
{
    wgml_graph *g = data;
    uint64_t at = wg_align_up(g->scratch_used, 256);
    g->scratch_used = at + bytes;
    if (g->scratch_used > g->scratch_need)
        g->scratch_need = g->scratch_used;
    if (!g->arena || g->scratch_used > g->scratch_cap)
        return WGML_ERR_LIMIT;
    *base = g->arena;
    *off = g->scratch_off + at;
    return WGML_OK;
}

/* Do x's dispatches change between two dim bindings?  Only when a dim
 * that changed appears in x's shape or an input's (arena offsets are
 * planned once; a view's strides change only with a dim of its shape). */
static bool node_depends(const wgml_node *x, const int64_t *a, const int64_t *b)
{
    for (int k = -1; k < x->nin; k++) {
        const wgml_node *y = k < 0 ? x : x->in[k];
        for (int i = 0; y && i < y->d.ndim; i++)
            if (wg_is_sym(y->d.shape[i]) && a[wg_sym_id(y->d.shape[i])] != b[wg_sym_id(y->d.shape[i])])
                return true;
    }
    return false;
}

/* Records the graph at the current dims into c.  Nodes whose shapes do not
 * involve a dim that changed since `prev` (the last recording) copy their
 * records from it instead of running their host side again: a decode step
 * whose KV length grew re-encodes only the nodes that see it. */
static wgml_status record(wgml_graph *g, wg_cached *c, const wg_cached *prev)
{
    wg_recording_free(&c->rec);
    free(c->ranges);
    c->ranges = calloc(g->n ? g->n : 1, sizeof *c->ranges);
    int64_t key[WGML_MAX_GRAPH_DIMS];
    dims_key(g, key);
    g->nodes_reused = g->nodes_encoded = 0;
    if (!c->ranges)
        return wg_fail(WGML_ERR_OOM, "out of host memory recording the graph");
    wgml_status st = wg_recorder_begin(g->ctx, &c->rec);
    if (st != WGML_OK)
        return st;
    wg_set_scratch_provider(g->ctx, scratch_from_arena, g, &g->scratch_used);
    for (size_t i = 0; i < g->n_order && st == WGML_OK; i++) {
        wgml_node *x = g->order[i];
        if (x->kind != WG_N_OP || x->produced_by)
            continue;
        c->rec.tag = x->id;
        c->ranges[x->id][0] = c->rec.n;
        g->scratch_used = 0;
        if (prev && !node_depends(x, prev->key, key)) {
            st = wg_recording_replay_range(g->ctx, &prev->rec, prev->ranges[x->id][0], prev->ranges[x->id][1]);
            g->nodes_reused++;
        } else {
            st = wg_node_encode(x);
            g->nodes_encoded++;
        }
        c->ranges[x->id][1] = c->rec.n;
    }
    wg_set_scratch_provider(g->ctx, NULL, NULL, NULL);
    wg_recorder_end(g->ctx);
    if (st == WGML_OK)
        st = wg_recording_compile(g->ctx, &c->rec);
    if (st != WGML_OK) {
        wg_recording_free(&c->rec);
        c->used = false;
        return st;
    }
    c->rec.tag_sink = g->node_ns;
    g->recordings++;
    return WGML_OK;
}

/* The recording for the current dims: cached, or made now (LRU slot). */
static wgml_status current_recording(wgml_graph *g)
{
    int64_t key[WGML_MAX_GRAPH_DIMS];
    dims_key(g, key);
    wg_cached *victim = &g->cache[0];
    for (int i = 0; i < WG_CACHE_SLOTS; i++) {
        wg_cached *c = &g->cache[i];
        if (c->used && !memcmp(c->key, key, sizeof key)) {
            c->tick = ++g->tick;
            g->cur = c;
            return WGML_OK;
        }
        if (!c->used || (victim->used && c->tick < victim->tick))
            victim = c;
    }
    /* The victim's recording may still be running: the stream keeps the
     * buffers alive, and its bind groups are released only by WebGPU's
     * reference counting once the work is done. */
    const wg_cached *prev = g->cur && g->cur != victim && g->cur->used ? g->cur : NULL;
    wgml_status st = record(g, victim, prev);
    if (st != WGML_OK)
        return st;
    victim->used = true;
    memcpy(victim->key, key, sizeof key);
    victim->tick = ++g->tick;
    g->cur = victim;
    return WGML_OK;
}

/* The scratch region: the most any node's row declares at the dims'
 * maxima (every op that takes scratch declares it; recording still
 * measures, and grows the region should a declaration fall short). */
static uint64_t declared_scratch(const wgml_graph *g)
{
    uint64_t most = 0;
    for (size_t i = 0; i < g->n_order; i++) {
        const wgml_node *x = g->order[i];
        const wg_op_def *def = x->kind == WG_N_OP ? wg_op_def_get(x->op) : NULL;
        if (!def || !def->scratch || x->produced_by)
            continue;
        wg_desc d[WG_OP_MAX_IN], o = wg_desc_at_max(g, &x->d);
        const wg_desc *dp[WG_OP_MAX_IN] = {0};
        for (int k = 0; k < x->nin; k++)
            if (x->in[k]) {
                d[k] = wg_desc_at_max(g, &x->in[k]->d);
                dp[k] = &d[k];
            }
        uint64_t b = def->scratch(&x->p, dp, x->nin, &o);
        most = b > most ? b : most;
    }
    return most;
}

static wgml_status alloc_arena(wgml_graph *g)
{
    int64_t len = (int64_t)(g->scratch_cap ? g->scratch_off + g->scratch_cap : g->arena_bytes);
    if (len == 0)
        len = 1;
    wgml_status st = wgml_tensor_new(g->ctx, WGML_U8, 1, &len, &g->arena);
    return st == WGML_OK ? st : wg_failp(st, "graph arena of %lld bytes", (long long)len);
}

static void drop_recordings(wgml_graph *g)
{
    for (int i = 0; i < WG_CACHE_SLOTS; i++) {
        wg_recording_free(&g->cache[i].rec);
        g->cache[i].used = false;
    }
    g->cur = NULL;
}

/* Kernels are specialised on layout and on a few size classes of the
 * operands (a row a multiple of 4 long takes a vector path, rows up to
 * 1024 a smaller workgroup, the vectors per thread...).  So that binding a
 * symbolic dim later compiles nothing, compile records every dependent
 * node once more at sizes that reach those classes, one dim at a time (the
 * others at their maxima), into a recording it drops: 1..5, max-3..max,
 * and 2^k - 1, 2^k, 2^k + 1 and 1.5 * 2^k up to max (the row launcher's
 * vectors per thread change at multiples of 4 * 64 and 4 * 256: 1.5 * 2^k
 * reaches the odd counts).  Only nodes that see the dim run their host
 * side again (record() copies the others).  A class this misses compiles
 * its kernel on first use: test_graph's random bindings (and make soak)
 * would show it. */
static wgml_status warm_variants(wgml_graph *g)
{
    wg_cached tmp = {0}, *keep = g->cur;
    wgml_status st = WGML_OK;
    uint64_t enc = g->nodes_encoded, reu = g->nodes_reused;
    for (int d = 0; d < g->ndims && st == WGML_OK; d++) {
        int64_t max = g->dims[d].max, vals[160];
        int nv = 0;
        for (int64_t v = 1; v <= 5; v++)
            vals[nv++] = v;
        for (int64_t v = max - 3; v < max; v++)
            vals[nv++] = v;
        for (int64_t p2 = 8; p2 <= max && nv + 4 <= 160; p2 *= 2)
            vals[nv++] = p2 - 1, vals[nv++] = p2, vals[nv++] = p2 + 1, vals[nv++] = p2 + p2 / 2;
        for (int k = 0; k < nv && st == WGML_OK; k++) {
            if (vals[k] < 1 || vals[k] >= max)
                continue;
            g->dims[d].value = vals[k];
            /* A size some op refuses is the run's error to report if it is
             * ever bound; here it only warms nothing. */
            if (bind_tensors(g) == WGML_OK && record(g, &tmp, keep) == WGML_OK)
                g->recordings--; /* not a recording anyone runs */
            wg_recording_free(&tmp.rec);
            free(tmp.ranges);
            tmp.ranges = NULL;
            st = wg_check(g->ctx); /* but a lost device ends it */
        }
        g->dims[d].value = max;
    }
    g->nodes_encoded = enc, g->nodes_reused = reu;
    if (st == WGML_OK)
        st = bind_tensors(g);
    return st;
}

static bool env_is(const char *name, const char *v)
{
    const char *e = getenv(name);
    return e && !strcmp(e, v);
}

wgml_status wgml_graph_compile(wgml_graph *g, const wgml_graph_options *opts)
{
    if (!g)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_compile: graph is NULL");
    wgml_status st = wg_check(g->ctx);
    if (st != WGML_OK)
        return st;
    if (g->eager)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_compile: an eager graph runs as it is built");
    if (g->compiled)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_compile: compiled already");
    /* Device facts some kernel choices read (the subgroup size, measured by
     * a dispatch and a readback) cannot be measured while recording. */
    wgml_device_info info;
    if ((st = wgml_device_info_get(g->ctx, &info)) != WGML_OK)
        return st;
    if (opts)
        g->opt = *opts;
    g->nancheck = env_is("WGML_GRAPH_NANCHECK", "1");
    wg_graph_fuse(g);
    if ((st = wg_graph_plan(g)) != WGML_OK)
        return st;
    g->scratch_off = wg_align_up(g->arena_bytes, 256);
    g->scratch_cap = declared_scratch(g);
    g->scratch_need = 0;
    if ((st = alloc_arena(g)) != WGML_OK)
        return st;
    free(g->node_ns);
    g->node_ns = wg_profiling(g->ctx) ? calloc(g->n ? g->n : 1, sizeof *g->node_ns) : NULL;
    /* Record at the maxima: every shape error shows now, not at a run. */
    int64_t saved[WGML_MAX_GRAPH_DIMS];
    bool bound[WGML_MAX_GRAPH_DIMS];
    for (int i = 0; i < g->ndims; i++) {
        saved[i] = g->dims[i].value, bound[i] = g->dims[i].bound;
        g->dims[i].value = g->dims[i].max, g->dims[i].bound = true;
    }
    g->compiled = true;
    st = bind_tensors(g);
    if (st == WGML_OK)
        st = current_recording(g);
    /* The nodes' scratch went to the pool while the region did not exist:
     * size the region for the largest node, place it, record again. */
    if (st == WGML_OK && g->scratch_need > g->scratch_cap) {
        g->scratch_cap = wg_align_up(g->scratch_need, 256);
        wg_graph_drop_bindings(g);
        drop_recordings(g);
        wgml_tensor_free(g->arena);
        g->arena = NULL;
        st = alloc_arena(g);
        if (st == WGML_OK)
            st = bind_tensors(g);
        if (st == WGML_OK)
            st = current_recording(g);
    }
    if (st == WGML_OK)
        st = warm_variants(g);
    for (int i = 0; i < g->ndims; i++)
        g->dims[i].value = saved[i], g->dims[i].bound = bound[i];
    if (st != WGML_OK) {
        g->compiled = false;
        wg_graph_drop_bindings(g);
        wgml_tensor_free(g->arena);
        g->arena = NULL;
    }
    return st;
}

wgml_status wgml_graph_bind_dim(wgml_graph *g, int64_t dim, int64_t value)
{
    if (!g || !wg_is_sym(dim) || wg_sym_id(dim) >= g->ndims)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_bind_dim: NULL graph or not one of its symbolic dims");
    wg_gdim *d = &g->dims[wg_sym_id(dim)];
    if (value < 0 || value > d->max)
        return wg_fail(WGML_ERR_SHAPE, "wgml_graph_bind_dim: '%s' = %lld is over its bound 0..%lld", d->name,
                       (long long)value, (long long)d->max);
    d->value = value;
    d->bound = true;
    return WGML_OK;
}

static wgml_status ready(wgml_graph *g, const char *fn)
{
    if (!g)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: graph is NULL", fn);
    wgml_status st = wg_check(g->ctx);
    if (st != WGML_OK)
        return st;
    if (g->eager)
        return WGML_OK;
    if (!g->compiled)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: compile the graph first", fn);
    for (int i = 0; i < g->ndims; i++)
        if (!g->dims[i].bound)
            return wg_fail(WGML_ERR_SHAPE, "%s: symbolic dim '%s' is not bound (wgml_graph_bind_dim)", fn,
                           g->dims[i].name);
    return bind_tensors(g);
}

wgml_status wgml_node_tensor(wgml_node *n, wgml_tensor **out)
{
    if (!n || !out)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_node_tensor: NULL argument");
    wgml_status st = ready(n->g, "wgml_node_tensor");
    if (st != WGML_OK)
        return st;
    if (!n->t)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_node_tensor: the node has no tensor");
    return wg_tensor_dup(n->t, out);
}

static wgml_status readable(wgml_node *n, const char *fn)
{
    if (n->g->eager || n->output || n->kind == WG_N_INPUT || n->kind == WG_N_TENSOR)
        return WGML_OK;
    char lab[160];
    return wg_fail(WGML_ERR_INVALID_ARG, "%s: %s is not an output: its memory is reused (wgml_graph_output)", fn,
                   wg_node_label(n, lab, sizeof lab));
}

wgml_status wgml_graph_write(wgml_graph *g, wgml_node *n, const void *src, uint64_t bytes)
{
    wgml_status st = ready(g, "wgml_graph_write");
    if (st != WGML_OK)
        return st;
    if (!n || n->g != g || (n->kind != WG_N_INPUT && n->kind != WG_N_TENSOR))
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_write: not an input or tensor node of this graph");
    return wgml_tensor_upload(n->t, src, bytes);
}

wgml_status wgml_graph_read(wgml_graph *g, wgml_node *n, void *dst, uint64_t bytes)
{
    wgml_status st = ready(g, "wgml_graph_read");
    if (st != WGML_OK)
        return st;
    if (!n || n->g != g)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_read: not a node of this graph");
    if ((st = readable(n, "wgml_graph_read")) != WGML_OK)
        return st;
    return wgml_tensor_download(n->t, dst, bytes);
}

/* A node's bytes [0, bytes) as one range of its buffer (contiguous data). */
static wgml_status node_range(wgml_node *n, uint64_t bytes, const char *fn, wgml_buffer **buf, uint64_t *off)
{
    char lab[160];
    if (!n->t || !wgml_tensor_is_contiguous(n->t))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: %s is not contiguous", fn, wg_node_label(n, lab, sizeof lab));
    uint64_t have = wgml_tensor_nbytes(n->t);
    if (bytes > have)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: %llu bytes, but %s holds %llu at the current binding", fn,
                       (unsigned long long)bytes, wg_node_label(n, lab, sizeof lab), (unsigned long long)have);
    *buf = n->t->st->buf;
    *off = n->t->offset;
    return WGML_OK;
}

/* The checks of a read in flight of n's first bytes (fn names the call):
 * the graph ready, n an output or input of it, its bytes one range. */
static wgml_status read_target(wgml_graph *g, wgml_node *n, uint64_t bytes, wgml_pending **out, const char *fn,
                               wgml_buffer **b, uint64_t *off)
{
    if (out)
        *out = NULL;
    wgml_status st = ready(g, fn);
    if (st != WGML_OK)
        return st;
    if (!n || n->g != g || !out)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: not a node of this graph, or out is NULL", fn);
    if ((st = readable(n, fn)) != WGML_OK)
        return st;
    return node_range(n, bytes, fn, b, off);
}

wgml_status wgml_graph_read_begin(wgml_graph *g, wgml_node *n, uint64_t bytes, wgml_pending **out)
{
    wgml_buffer *b;
    uint64_t off;
    wgml_status st = read_target(g, n, bytes, out, "wgml_graph_read_begin", &b, &off);
    return st != WGML_OK ? st : wgml_buffer_read_begin(b, off, bytes, out);
}

wgml_status wgml_graph_copy(wgml_graph *g, wgml_node *dst, wgml_node *src, uint64_t bytes)
{
    wgml_status st = ready(g, "wgml_graph_copy");
    if (st != WGML_OK)
        return st;
    if (!dst || !src || dst->g != g || src->g != g || dst->kind != WG_N_INPUT)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_copy: dst must be an input and src a node of this graph");
    wgml_buffer *db, *sb;
    uint64_t doff, soff;
    if ((st = readable(src, "wgml_graph_copy")) != WGML_OK ||
        (st = node_range(src, bytes, "wgml_graph_copy", &sb, &soff)) != WGML_OK ||
        (st = node_range(dst, bytes, "wgml_graph_copy", &db, &doff)) != WGML_OK)
        return st;
    return bytes ? wgml_buffer_copy(db, doff, sb, soff, bytes) : WGML_OK;
}

/* WGML_GRAPH_NANCHECK=1: node by node, stop at the first float output
 * holding a NaN or an Inf. */
static wgml_status run_checked(wgml_graph *g)
{
    const wg_cached *c = g->cur;
    for (size_t i = 0; i < g->n_order; i++) {
        wgml_node *x = g->order[i];
        if (x->kind != WG_N_OP || x->produced_by)
            continue;
        wgml_status st = wg_recording_replay_range(g->ctx, &c->rec, c->ranges[x->id][0], c->ranges[x->id][1]);
        if (st != WGML_OK || (st = wgml_ctx_sync(g->ctx)) != WGML_OK)
            return wg_graph_fail(x, st);
        if (!wg_dtype_is_float(x->d.dtype) || !wgml_tensor_nelem(x->t))
            continue;
        int64_t ne = wgml_tensor_nelem(x->t);
        wgml_tensor *f32 = NULL;
        float *h = malloc((size_t)ne * sizeof *h);
        if (!h)
            return wg_fail(WGML_ERR_OOM, "out of host memory for the NaN check");
        st = wgml_tensor_new(g->ctx, WGML_F32, x->t->ndim, x->t->shape, &f32);
        if (st == WGML_OK)
            st = wgml_cast(x->t, f32);
        if (st == WGML_OK)
            st = wgml_tensor_download(f32, h, (uint64_t)ne * 4);
        wgml_tensor_free(f32);
        int64_t bad = -1;
        for (int64_t k = 0; st == WGML_OK && k < ne && bad < 0; k++)
            if (!isfinite(h[k]))
                bad = k;
        float v = bad >= 0 ? h[bad] : 0;
        free(h);
        if (st != WGML_OK)
            return wg_graph_fail(x, st);
        if (bad >= 0) {
            char lab[160];
            return wg_fail(WGML_ERR_INVALID_ARG, "WGML_GRAPH_NANCHECK: %s is the first node with a non-finite "
                           "output: element %lld is %g", wg_node_label(x, lab, sizeof lab), (long long)bad, (double)v);
        }
    }
    return WGML_OK;
}

wgml_status wgml_graph_run(wgml_graph *g)
{
    wgml_status st = ready(g, "wgml_graph_run");
    if (st != WGML_OK)
        return st;
    if (g->eager)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_run: an eager graph ran as it was built");
    if ((st = current_recording(g)) != WGML_OK)
        return st;
    if (g->nancheck)
        return run_checked(g);
    if ((st = wg_recording_replay(g->ctx, &g->cur->rec)) != WGML_OK)
        return st;
    return wg_fence_issue(g->ctx, &g->ticket);
}

wgml_status wgml_graph_run_read(wgml_graph *g, wgml_node *n, uint64_t bytes, wgml_pending **out)
{
    wgml_buffer *b;
    uint64_t off;
    wgml_status st = read_target(g, n, bytes, out, "wgml_graph_run_read", &b, &off);
    if (st != WGML_OK)
        return st;
    if (g->eager || g->nancheck) { /* no recording to share a command buffer with */
        if ((st = wgml_graph_run(g)) != WGML_OK)
            return st;
        return wgml_buffer_read_begin(b, off, bytes, out);
    }
    if ((st = current_recording(g)) != WGML_OK || (st = wg_recording_replay(g->ctx, &g->cur->rec)) != WGML_OK ||
        (st = wg_pending_record(b, off, bytes, "wgml_graph_run_read", out)) != WGML_OK)
        return st;
    if ((st = wg_fence_issue(g->ctx, &g->ticket)) != WGML_OK) {
        wgml_buffer_read_end(*out, NULL);
        *out = NULL;
        return st;
    }
    wg_pending_arm(*out);
    return WGML_OK;
}

wgml_status wgml_graph_done(wgml_graph *g, int *done)
{
    if (!g || !done)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_done: NULL argument");
    wgml_status st = wg_check(g->ctx);
    *done = st == WGML_OK ? wg_fence_done(g->ctx, g->ticket) : 1;
    return st;
}

wgml_status wgml_graph_wait(wgml_graph *g)
{
    if (!g)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_wait: graph is NULL");
    return wgml_ctx_sync(g->ctx);
}
