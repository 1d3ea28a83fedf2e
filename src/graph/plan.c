/*
 * The planner: the run's order (a topological sort that keeps build order
 * where it can), each memory root's lifetime in that order, and one arena
 * with best-fit offset reuse for every intermediate and input; then a
 * verifier that proves no two live tensors share a byte.
 *
 * Memory roots: an op node owns its output unless it updates its input in
 * place (set_rows, scatter_add: its root is the input's); a view's root is
 * its source's; inputs and op outputs live in the arena, tensors given
 * with wgml_graph_tensor outside it.  A root is live from its node's
 * position to the last position that reads it or any alias of it; inputs
 * and outputs for the whole run (an input may be run twice without being
 * written again, an output is read after the run).
 *
 * Ordering of in-place updates: every other reader of the version an
 * update consumes runs before the update (an edge reader -> update), so a
 * node built later that still reads the old version sees it; a reader that
 * also depends on the update makes a cycle, refused like any other.
 */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN 256 /* minStorageBufferOffsetAlignment on every device we know; vec4 kernels need 16 */

static uint64_t node_bytes_at_max(const wgml_node *n)
{
    wg_desc m = wg_desc_at_max(n->g, &n->d);
    return wg_desc_bytes(&m);
}

/* ------------------------------------------------------------ order */

/* Must r run before u?  Yes when u updates a version r reads (set_rows,
 * scatter_add).  Must r run after u?  Yes when r reads memory u writes for
 * another node (a fused residual add's sum, written by the norm). */
static bool must_precede(const wgml_node *u, const wgml_node *r)
{
    if (r == u)
        return false;
    bool upd = u->kind == WG_N_OP && wg_op_def_get(u->op)->updates_input;
    for (int i = 0; i < r->nin; i++)
        if (upd && r->in[i] == u->in[0])
            return true;
    return false;
}

static bool must_follow(const wgml_node *u, const wgml_node *r)
{
    if (r == u)
        return false;
    for (int i = 0; i < r->nin; i++)
        if (r->in[i] && r->in[i]->produced_by == u)
            return true;
    return false;
}

/* A min-heap of node positions in `live`: Kahn's algorithm taking the
 * lowest-numbered ready node keeps build order whenever it is valid. */
typedef struct heap { size_t *v, n; } heap;
static void heap_push(heap *h, size_t x)
{
    size_t i = h->n++;
    h->v[i] = x;
    while (i && h->v[(i - 1) / 2] > h->v[i]) {
        size_t p = (i - 1) / 2, t = h->v[p];
        h->v[p] = h->v[i], h->v[i] = t, i = p;
    }
}
static size_t heap_pop(heap *h)
{
    size_t top = h->v[0], i = 0;
    h->v[0] = h->v[--h->n];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->v[l] < h->v[m])
            m = l;
        if (r < h->n && h->v[r] < h->v[m])
            m = r;
        if (m == i)
            return top;
        size_t t = h->v[m];
        h->v[m] = h->v[i], h->v[i] = t, i = m;
    }
}

static wgml_status topo_order(wgml_graph *g)
{
    size_t n = 0, ne = 0;
    wgml_status st = WGML_OK;
    wgml_node **live = malloc((g->n ? g->n : 1) * sizeof *live);
    int *pos = malloc((g->n ? g->n : 1) * sizeof *pos); /* node id -> position in live */
    if (!live || !pos) {
        free(live), free(pos);
        return wg_fail(WGML_ERR_OOM, "out of host memory planning the graph");
    }
    for (size_t i = 0; i < g->n; i++) {
        g->nodes[i]->order = -1;
        pos[i] = -1;
        if (!g->nodes[i]->fused_into) {
            pos[i] = (int)n;
            live[n++] = g->nodes[i];
        }
    }
    bool extra = false; /* update or produced_by nodes: their edges are found by a quadratic scan */
    for (size_t i = 0; i < n; i++)
        extra = extra || live[i]->produced_by ||
                (live[i]->kind == WG_N_OP && wg_op_def_get(live[i]->op)->updates_input);
    /* Edges x -> y as (from, to) pairs; then successor lists (CSR). */
    size_t cap = 8 * n + 8;
    size_t (*e)[2] = malloc(cap * sizeof *e);
    for (size_t i = 0; e && i < n; i++) {
        for (int j = 0; j < live[i]->nin && e; j++) {
            const wgml_node *x = live[i]->in[j];
            if (!x || pos[x->id] < 0)
                continue;
            if (ne == cap && !(e = realloc(e, (cap *= 2) * sizeof *e)))
                break;
            e[ne][0] = (size_t)pos[x->id], e[ne++][1] = i;
        }
        for (size_t k = 0; extra && e && k < n; k++)
            if (must_precede(live[i], live[k]) || must_follow(live[k], live[i])) {
                if (ne == cap && !(e = realloc(e, (cap *= 2) * sizeof *e)))
                    break;
                e[ne][0] = k, e[ne++][1] = i;
            }
    }
    size_t *first = calloc(n + 1, sizeof *first), *succ = malloc((ne ? ne : 1) * sizeof *succ);
    size_t *fill = calloc(n ? n : 1, sizeof *fill);
    int *indeg = calloc(n ? n : 1, sizeof *indeg);
    wgml_node **order = malloc((n ? n : 1) * sizeof *order);
    heap h = {malloc((n ? n : 1) * sizeof(size_t)), 0};
    if (!e || !first || !succ || !fill || !indeg || !order || !h.v) {
        st = wg_fail(WGML_ERR_OOM, "out of host memory planning the graph");
        goto out;
    }
    for (size_t k = 0; k < ne; k++)
        first[e[k][0] + 1]++, indeg[e[k][1]]++;
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    for (size_t k = 0; k < ne; k++)
        succ[first[e[k][0]] + fill[e[k][0]]++] = e[k][1];
    for (size_t i = 0; i < n; i++)
        if (!indeg[i])
            heap_push(&h, i);
    size_t placed = 0;
    while (h.n) {
        size_t i = heap_pop(&h);
        live[i]->order = (int)placed;
        order[placed++] = live[i];
        for (size_t k = first[i]; k < first[i + 1]; k++)
            if (--indeg[succ[k]] == 0)
                heap_push(&h, succ[k]);
    }
    if (placed < n) {
        wgml_node *stuck = NULL;
        for (size_t i = 0; i < n && !stuck; i++)
            if (live[i]->order < 0)
                stuck = live[i];
        st = wg_graph_fail(stuck, wg_fail(WGML_ERR_INVALID_ARG, "is on a cycle (its inputs depend on it)"));
        goto out;
    }
    free(g->order);
    g->order = order;
    order = NULL;
    g->n_order = n;
out:
    free(e), free(first), free(succ), free(fill), free(indeg), free(order), free(h.v), free(live), free(pos);
    return st;
}

/* ------------------------------------------------------------ lifetimes */

static void find_roots(wgml_graph *g)
{
    for (size_t i = 0; i < g->n_order; i++) {
        wgml_node *x = g->order[i];
        bool alias = x->kind == WG_N_VIEW || (x->kind == WG_N_OP && wg_op_def_get(x->op)->updates_input);
        x->root = alias ? x->in[0]->root : x;
        x->inplace_of = NULL;
        x->in_arena = x->root == x && (x->kind == WG_N_INPUT || x->kind == WG_N_OP);
        x->bytes = x->in_arena ? node_bytes_at_max(x) : 0;
        x->last_use = x->order;
    }
    int end = (int)g->n_order;
    for (size_t i = 0; i < g->n_order; i++) {
        wgml_node *x = g->order[i];
        for (int j = 0; j < x->nin; j++)
            if (x->in[j] && x->in[j]->root->last_use < x->order)
                x->in[j]->root->last_use = x->order;
        /* A view or an update keeps its root alive as long as itself. */
        if (x->root != x && x->root->last_use < x->order)
            x->root->last_use = x->order;
        if (x->output || x->kind == WG_N_INPUT)
            x->root->last_use = end;
    }
    /* Views' last uses reach their root (a view read late keeps it). */
    for (size_t i = g->n_order; i-- > 0;) {
        wgml_node *x = g->order[i];
        if (x->root != x && x->last_use > x->root->last_use)
            x->root->last_use = x->last_use;
    }
}

static int def_of(const wgml_node *x) { return x->kind == WG_N_INPUT ? -1 : x->order; }

/* ------------------------------------------------------------ arena */

typedef struct blk { uint64_t off, size; } blk;
typedef struct freelist { blk *b; size_t n, cap; uint64_t end; } freelist;

static uint64_t fl_alloc(freelist *f, uint64_t size)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < f->n; i++)
        if (f->b[i].size >= size && (best == SIZE_MAX || f->b[i].size < f->b[best].size))
            best = i;
    if (best != SIZE_MAX) {
        uint64_t off = f->b[best].off;
        f->b[best].off += size;
        f->b[best].size -= size;
        if (f->b[best].size == 0)
            memmove(&f->b[best], &f->b[best + 1], (--f->n - best) * sizeof *f->b);
        return off;
    }
    /* No block fits: grow the arena, starting inside a free tail block. */
    if (f->n && f->b[f->n - 1].off + f->b[f->n - 1].size == f->end) {
        uint64_t off = f->b[--f->n].off;
        f->end = off + size;
        return off;
    }
    uint64_t off = f->end;
    f->end += size;
    return off;
}

static bool fl_free(freelist *f, uint64_t off, uint64_t size)
{
    if (size == 0)
        return true;
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 32;
        blk *q = realloc(f->b, cap * sizeof *q);
        if (!q)
            return false;
        f->b = q;
        f->cap = cap;
    }
    size_t at = 0;
    while (at < f->n && f->b[at].off < off)
        at++;
    memmove(&f->b[at + 1], &f->b[at], (f->n - at) * sizeof *f->b);
    f->b[at] = (blk){off, size};
    f->n++;
    /* merge with the next, then the previous */
    if (at + 1 < f->n && f->b[at].off + f->b[at].size == f->b[at + 1].off) {
        f->b[at].size += f->b[at + 1].size;
        memmove(&f->b[at + 1], &f->b[at + 2], (f->n - at - 2) * sizeof *f->b);
        f->n--;
    }
    if (at > 0 && f->b[at - 1].off + f->b[at - 1].size == f->b[at].off) {
        f->b[at - 1].size += f->b[at].size;
        memmove(&f->b[at], &f->b[at + 1], (f->n - at - 1) * sizeof *f->b);
        f->n--;
    }
    return true;
}

/* An op may take its input 0's memory when that input is an arena root
 * of the same size that dies here and the op is correct in place. */
static wgml_node *inplace_donor(const wgml_graph *g, const wgml_node *x)
{
    if (g->opt.no_inplace || x->kind != WG_N_OP || !wg_op_def_get(x->op)->inplace || x->nin < 1 || !x->in[0])
        return NULL;
    wgml_node *r = x->in[0];
    if (r->root != r || !r->in_arena || r->kind == WG_N_INPUT || r->output || r->last_use != x->order)
        return NULL;
    if (r->d.ndim != x->d.ndim || memcmp(r->d.shape, x->d.shape, sizeof(int64_t) * (size_t)x->d.ndim) ||
        wg_dtype(r->d.dtype)->block_bytes != wg_dtype(x->d.dtype)->block_bytes || r->bytes != x->bytes)
        return NULL;
    /* Another input of x reading the same memory through a view would be
     * a shifted alias: only the very view is safe. */
    for (int i = 1; i < x->nin; i++)
        if (x->in[i] && x->in[i]->root == r)
            return NULL;
    return r;
}

wgml_status wg_graph_plan(wgml_graph *g)
{
    wgml_status st = topo_order(g);
    if (st != WGML_OK)
        return st;
    find_roots(g);
    freelist f = {0};
    uint64_t live = 0, peak = 0, sum = 0;
    bool *donated = calloc(g->n ? g->n : 1, sizeof *donated);
    if (!donated)
        return wg_fail(WGML_ERR_OOM, "out of host memory planning the graph");
    /* Inputs first: they live through the whole run. */
    for (size_t i = 0; i < g->n_order; i++) {
        wgml_node *x = g->order[i];
        if (x->in_arena && x->kind == WG_N_INPUT) {
            x->offset = fl_alloc(&f, wg_align_up(x->bytes, ALIGN));
            live += x->bytes;
            sum += x->bytes;
        }
    }
    peak = live;
    for (size_t i = 0; i < g->n_order; i++) {
        wgml_node *x = g->order[i];
        if (x->in_arena && x->kind == WG_N_OP) {
            sum += x->bytes;
            wgml_node *donor = inplace_donor(g, x);
            if (donor) { /* its block passes to x, not to the free list */
                x->offset = donor->offset;
                x->inplace_of = donor;
                donated[donor->id] = true;
            } else {
                x->offset = fl_alloc(&f, wg_align_up(x->bytes, ALIGN));
                live += x->bytes;
            }
            if (live > peak)
                peak = live;
        }
        /* Free every root that dies here (not a donor: its block is x's). */
        for (int j = -1; j < x->nin; j++) {
            wgml_node *r = j < 0 ? x : (x->in[j] ? x->in[j]->root : NULL);
            if (!r || !r->in_arena || r->last_use != (int)i || r->kind == WG_N_INPUT)
                continue;
            bool again = false; /* freed already via another input slot */
            for (int m = -1; m < j; m++) {
                wgml_node *q = m < 0 ? x : (x->in[m] ? x->in[m]->root : NULL);
                again = again || q == r;
            }
            if (again || donated[r->id])
                continue;
            if (!fl_free(&f, r->offset, wg_align_up(r->bytes, ALIGN))) {
                free(f.b);
                free(donated);
                return wg_fail(WGML_ERR_OOM, "out of host memory planning the graph");
            }
            live -= r->bytes;
        }
    }
    free(f.b);
    free(donated);
    g->arena_bytes = f.end;
    g->peak = peak;
    g->inter_bytes = sum;
    return wg_graph_verify(g);
}

/* ------------------------------------------------------------ verifier */

wgml_status wg_graph_verify(const wgml_graph *g)
{
    for (size_t i = 0; i < g->n_order; i++) {
        const wgml_node *a = g->order[i];
        if (!a->in_arena)
            continue;
        if (a->offset % ALIGN || a->offset + a->bytes > g->arena_bytes)
            return wg_graph_fail(a, wg_fail(WGML_ERR_INTERNAL, "planner: [%llu, +%llu) is outside the %llu-byte arena",
                                            (unsigned long long)a->offset, (unsigned long long)a->bytes,
                                            (unsigned long long)g->arena_bytes));
        for (size_t j = i + 1; j < g->n_order; j++) {
            const wgml_node *b = g->order[j];
            if (!b->in_arena || !a->bytes || !b->bytes)
                continue;
            int a0 = def_of(a), a1 = a->last_use, b0 = def_of(b), b1 = b->last_use;
            if (a1 < b0 || b1 < a0)
                continue; /* never live together */
            /* An in-place chain shares one block, handing it over at the
             * node where one dies and the next is made. */
            const wgml_node *p = b;
            bool chain = false;
            while (p && !chain) {
                chain = p->inplace_of == a;
                p = p->inplace_of;
            }
            p = a;
            while (p && !chain) {
                chain = p->inplace_of == b;
                p = p->inplace_of;
            }
            if (chain)
                continue;
            if (a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes) {
                char la[160], lb[160];
                return wg_fail(WGML_ERR_INTERNAL, "planner: %s [%llu, +%llu) live %d..%d overlaps %s [%llu, +%llu) "
                               "live %d..%d", wg_node_label(a, la, sizeof la), (unsigned long long)a->offset,
                               (unsigned long long)a->bytes, a0, a1, wg_node_label(b, lb, sizeof lb),
                               (unsigned long long)b->offset, (unsigned long long)b->bytes, b0, b1);
            }
        }
    }
    return WGML_OK;
}
