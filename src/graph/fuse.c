/*
 * Fusion, before planning (off with wgml_graph_options.no_fuse or
 * WGML_GRAPH_FUSE=0; the linear prologue only with WGML_GRAPH_FUSE=prologue,
 * see wg_graph_fuse).  Ten rewrites, each saving dispatches and the
 * memory traffic of an intermediate:
 *
 *   unary chains    float unary ops feeding only each other become one
 *                   generated kernel (WG_OP_EW_CHAIN, up to WG_CHAIN_MAX ops:
 *                   u_OPn(... u_OP1(x)), intermediates kept in f32);
 *   residual + norm a LAYER/RMS/L2 norm of add(a, b) (same shapes) reads a
 *                   and b itself (wgml_norm's residual); when the sum is
 *                   used elsewhere too, the norm writes it (sum_out) and
 *                   the add's node keeps its memory but runs no kernel;
 *   softmax         softmax(add(scale(x, k), mask)) and its parts become
 *                   one softmax with scale k and the mask;
 *   linear prologue (opt-in) linear(rms_norm(a (+ u)) * w) and
 *                   linear(glu(a, u)) become one WG_OP_LINEAR_PRE: the
 *                   product's integer mat-vec pass makes x
 *                   (src/ops/matvec_pre.c);
 *   linear glu      glu(y[..., 0::2], y[..., 1::2]) of y = linear(x, w)
 *                   becomes one WG_OP_LINEAR_GLU (a model's interleaved
 *                   gate|up: the one-row product writes the glu itself;
 *                   WGML_GRAPH_FUSE=noglupair keeps them apart);
 *   linear rope kv set_rows(cache, idx, rope(linear(x, w[, bias]))[:, h0:h1])
 *                   becomes one WG_OP_LINEAR_ROPE_KV (a decoder's q|k|v:
 *                   the one-row product rotates its pairs and writes the
 *                   cache itself, the rope's node written by it;
 *                   WGML_GRAPH_FUSE=norope keeps them apart);
 *   linear norm     (opt-in, WGML_GRAPH_FUSE=normtail) rms_norm(h) * g of
 *                   h = linear(x, w) (+ c) becomes one WG_OP_LINEAR_NORM (a
 *                   decoder's o and down products: the one-row product's
 *                   last workgroup normalises h);
 *   norm split      (default, WGML_GRAPH_FUSE=nosplit: off) the same norm,
 *                   read by one one-row product, becomes a LINEAR_NORM whose
 *                   workgroups write its blocks' codes and sums of squares,
 *                   and its reader scales its sums (fuse_norm_split);
 *   ffn             (default, WGML_GRAPH_FUSE=noffn: off) a linear_glu read
 *                   by a linear or norm-split linear_norm becomes one
 *                   WG_OP_FFN: a decoder's gate|up and down products, as
 *                   two dispatches or, forced, one persistent dispatch
 *                   (fuse_ffn, src/ops/ffn.c);
 *   matmul epilogue add(matmul(a, b), bias) with a bias of shape [n] (or
 *                   [1, ..., n]) and relu/gelu(erf)/silu of a matmul or
 *                   linear become the product's own bias and activation
 *                   (wgml_matmul_params): one kernel, the product written
 *                   once instead of read and written twice more.
 *
 * A node is folded only when nothing else reads it (no other consumer, not
 * an output).  Results may differ from the unfused graph by rounding: the
 * fused kernels keep f32 where the unfused ones stored the dtype, and may
 * contract a multiply-add.
 */
#include "graph.h"
#include "ops/matvec.h" /* WG_XPRE_* for the linear prologue, wg_q8_split_words */

#include <stdlib.h>
#include <string.h>

static bool live_op(const wgml_node *n, int op)
{
    return n && n->kind == WG_N_OP && n->op == op && !n->fused_into && !n->produced_by;
}

static bool same_desc(const wg_desc *a, const wg_desc *b)
{
    return a->dtype == b->dtype && a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim);
}

/* A float unary op usable in a chain. */
static bool chain_op(const wgml_node *n)
{
    return (live_op(n, WG_OP_UNARY) && n->p.sub != WGML_NOT && wg_dtype_is_float(n->d.dtype)) ||
           live_op(n, WG_OP_EW_CHAIN);
}

static void fold(wgml_graph *g, wgml_node *gone, wgml_node *into, size_t *uses)
{
    gone->fused_into = into;
    g->fused++;
    for (int i = 0; i < gone->nin; i++) /* its inputs are read by `into` now (rewired by the caller) */
        if (gone->in[i])
            uses[gone->in[i]->id]--;
}

static void fuse_chains(wgml_graph *g, size_t *uses)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_node *n = g->nodes[i], *x = n->in[0];
        if (!chain_op(n) || !chain_op(x) || uses[x->id] != 1 || x->output || x->d.dtype != n->d.dtype)
            continue;
        int nx = x->op == WG_OP_EW_CHAIN ? x->p.chain_n : 1, nn = n->op == WG_OP_EW_CHAIN ? n->p.chain_n : 1;
        if (nx + nn > WG_CHAIN_MAX)
            continue;
        wg_op_params p = {0};
        for (int k = 0; k < nx + nn; k++) {
            const wgml_node *s = k < nx ? x : n;
            int j = k < nx ? k : k - nx;
            bool one = s->op == WG_OP_UNARY;
            p.chain_op[k] = one ? s->p.sub : s->p.chain_op[j];
            p.chain_p[k][0] = one ? s->p.f[0] : s->p.chain_p[j][0];
            p.chain_p[k][1] = one ? s->p.f[1] : s->p.chain_p[j][1];
        }
        p.chain_n = nx + nn;
        n->op = WG_OP_EW_CHAIN;
        n->p = p;
        n->in[0] = x->in[0];
        uses[x->in[0]->id]++;
        fold(g, x, n, uses);
    }
}

static void fuse_softmax(wgml_graph *g, size_t *uses)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_node *s = g->nodes[i];
        if (!live_op(s, WG_OP_SOFTMAX) || (s->nin > 1 && s->in[1]) || (s->nin > 2 && s->in[2]) ||
            s->p.softmax.max_bias != 0)
            continue;
        float scale = s->p.softmax.scale == 0 ? 1 : s->p.softmax.scale;
        wgml_node *y = s->in[0], *x = y, *mask = NULL;
        bool sole = uses[y->id] == 1 && !y->output;
        /* add(t, mask) with t of the softmax's shape: the mask is the other */
        if (sole && scale == 1 && live_op(y, WG_OP_BINARY) && y->p.sub == WGML_ADD) {
            int t = same_desc(&y->in[0]->d, &y->d) ? 0 : same_desc(&y->in[1]->d, &y->d) ? 1 : -1;
            if (t >= 0) {
                x = y->in[t];
                mask = y->in[1 - t];
            }
        }
        wgml_node *inner = mask ? x : y;
        bool inner_sole = inner == y ? sole : uses[inner->id] == 1 && !inner->output;
        float k = 1;
        if (inner_sole && live_op(inner, WG_OP_UNARY) && inner->p.sub == WGML_SCALE && inner->p.f[1] == 0 &&
            wg_dtype_is_float(inner->d.dtype)) {
            k = inner->p.f[0];
            x = inner->in[0];
        } else if (!mask) {
            continue; /* nothing to fold */
        } else {
            inner = NULL;
        }
        s->in[0] = x;
        uses[x->id]++;
        if (mask) {
            s->in[1] = mask;
            s->nin = s->nin < 2 ? 2 : s->nin;
            uses[mask->id]++;
            if (inner)
                fold(g, inner, s, uses);
            fold(g, y, s, uses);
        } else {
            fold(g, inner, s, uses);
        }
        s->p.softmax.scale = scale * k;
    }
}

static void fuse_residual_norm(wgml_graph *g, size_t *uses)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_node *nm = g->nodes[i], *h = nm->in[0];
        if (!live_op(nm, WG_OP_NORM) || nm->p.norm.kind > WGML_L2_NORM || (nm->nin > 3 && nm->in[3]) ||
            !live_op(h, WG_OP_BINARY) || h->p.sub != WGML_ADD || !wg_dtype_is_float(h->d.dtype) ||
            !same_desc(&h->in[0]->d, &h->d) || !same_desc(&h->in[1]->d, &h->d))
            continue;
        wgml_node *a = h->in[0], *b = h->in[1];
        for (int k = nm->nin; k < 4; k++)
            nm->in[k] = NULL;
        nm->nin = 4;
        nm->in[0] = a;
        nm->in[3] = b;
        uses[a->id]++, uses[b->id]++;
        if (uses[h->id] == 1 && !h->output) {
            fold(g, h, nm, uses);
        } else { /* the sum is read elsewhere: the norm writes it */
            uses[h->id]--;
            nm->sum_out = h;
            h->produced_by = nm;
            g->fused++;
            for (int k = 0; k < 2; k++)
                uses[h->in[k]->id]--;
        }
    }
}

static bool product(const wgml_node *n)
{
    return live_op(n, WG_OP_MATMUL) || live_op(n, WG_OP_LINEAR);
}

/* The consumer c takes over the product m (folded into it): c's node (its
 * id, its readers, its memory) becomes the product with the epilogue. */
static void take_product(wgml_graph *g, wgml_node *c, wgml_node *m, size_t *uses)
{
    c->op = m->op;
    c->p = m->p;
    for (int k = 0; k < m->nin; k++) {
        c->in[k] = m->in[k];
        if (c->in[k])
            uses[c->in[k]->id]++;
    }
    c->nin = m->nin;
    fold(g, m, c, uses);
}

static void fuse_matmul_epilogue(wgml_graph *g, size_t *uses, bool residual)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_node *c = g->nodes[i];
        if (live_op(c, WG_OP_BINARY) && c->p.sub == WGML_ADD) {
            for (int t = 0; t < 2; t++) {
                wgml_node *m = c->in[t], *b = c->in[1 - t];
                if (!product(m) || uses[m->id] != 1 || m->output || m->p.mm.act != WGML_ACT_NONE ||
                    (m->nin > 2 && m->in[2]) || !same_desc(&m->d, &c->d) || !wg_dtype_is_float(b->d.dtype))
                    continue;
                /* a bias over the last axis only: [n] or [1, ..., n] */
                bool row = b->d.ndim >= 1 && b->d.shape[b->d.ndim - 1] == c->d.shape[c->d.ndim - 1];
                for (int k = 0; row && k < b->d.ndim - 1; k++)
                    row = b->d.shape[k] == 1;
                if (!row && residual && live_op(m, WG_OP_LINEAR) && m->p.mm.beta == 0.0f &&
                    !(m->nin > 3 && m->in[3]) && same_desc(&b->d, &c->d) && b->d.dtype == WGML_F32) {
                    /* a residual add of the product's own shape: its c (beta 1) */
                    uses[b->id]--;
                    take_product(g, c, m, uses);
                    for (int k = c->nin; k < 4; k++)
                        c->in[k] = NULL;
                    c->nin = 4;
                    c->in[3] = b;
                    c->p.mm.beta = 1.0f;
                    uses[b->id]++;
                    break;
                }
                if (!row)
                    continue;
                uses[b->id]--; /* re-added by take_product as the bias input */
                take_product(g, c, m, uses);
                if (c->nin < 3)
                    c->nin = 3;
                c->in[2] = b;
                uses[b->id]++;
                break;
            }
        } else if (live_op(c, WG_OP_UNARY) &&
                   (c->p.sub == WGML_RELU || c->p.sub == WGML_GELU_ERF || c->p.sub == WGML_SILU)) {
            wgml_node *m = c->in[0];
            if (!product(m) || uses[m->id] != 1 || m->output || m->p.mm.act != WGML_ACT_NONE ||
                !same_desc(&m->d, &c->d))
                continue;
            wgml_activation act = c->p.sub == WGML_RELU ? WGML_ACT_RELU
                                  : c->p.sub == WGML_SILU ? WGML_ACT_SILU : WGML_ACT_GELU;
            take_product(g, c, m, uses);
            c->p.mm.act = act;
        }
    }
}

/* linear(rms_norm(a (+ u)) * g) and linear(glu(a, u)): the product's first
 * pass makes x (WG_OP_LINEAR_PRE, src/ops/matvec_pre.c), so a decode step
 * runs no norm or glu dispatch before its products.  The norm keeps the
 * residual sum it writes for others (sum_out), now the fused node's. */
static void fuse_linear_prologue(wgml_graph *g, size_t *uses, bool norms, bool glus)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_node *l = g->nodes[i], *x = l->in[0];
        if (!live_op(l, WG_OP_LINEAR) || (l->nin > 3 && l->in[3]) || !x || uses[x->id] != 1 || x->output ||
            x->d.dtype != WGML_F32)
            continue;
        int64_t k = x->d.shape[x->d.ndim - 1];
        wgml_node *a = x->in[0], *u = NULL, *w = NULL;
        int kind;
        if (norms && live_op(x, WG_OP_NORM) && x->p.norm.kind == WGML_RMS_NORM && !(x->nin > 2 && x->in[2])) {
            w = x->nin > 1 ? x->in[1] : NULL;
            u = x->nin > 3 ? x->in[3] : NULL;
            if (w && (w->d.ndim != 1 || w->d.shape[0] != k))
                continue;
            kind = WG_XPRE_NORM;
        } else if (glus && live_op(x, WG_OP_GLU) && x->nin > 1 && x->in[1] && x->p.flag == 0) {
            u = x->in[1];
            kind = WG_XPRE_GLU;
        } else {
            continue;
        }
        wgml_node *bias = l->nin > 2 ? l->in[2] : NULL;
        l->op = WG_OP_LINEAR_PRE;
        l->p.flag = kind;
        l->p.norm = x->p.norm;
        l->p.sub = x->p.sub;
        wgml_node *in[5] = {a, l->in[1], bias, u, w};
        for (int k2 = 0; k2 < 5; k2++) {
            l->in[k2] = in[k2];
            if (in[k2] && k2 != 1 && k2 != 2)
                uses[in[k2]->id]++;
        }
        l->nin = 5;
        uses[x->id]--;
        if (x->sum_out) { /* the residual sum the norm wrote for others */
            l->sum_out = x->sum_out;
            l->sum_out->produced_by = l;
            x->sum_out = NULL;
        }
        fold(g, x, l, uses);
    }
}

/* A slice view of y along its last dim: [start::2] over all of it. */
static bool half(const wgml_node *v, const wgml_node *y, int64_t start)
{
    return v && v->kind == WG_N_VIEW && v->op == WG_V_SLICE && !v->fused_into && !v->output && v->nin >= 1 &&
           v->in[0] == y && v->p.axis == y->d.ndim - 1 && v->p.k == start && v->p.a[1] == 2 &&
           v->p.a[0] == y->d.shape[y->d.ndim - 1];
}

/* glu(y[..., 0::2], y[..., 1::2]) of y = linear(x, w) (a model's gate|up
 * rows interleaved): one WG_OP_LINEAR_GLU, whose one-row product writes
 * the glu itself (src/ops/linear_glu.c), so a decode step runs no glu
 * dispatch. */
static void fuse_linear_glu(wgml_graph *g, size_t *uses)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_node *n = g->nodes[i];
        if (!live_op(n, WG_OP_GLU) || n->nin < 2 || !n->in[0] || !n->in[1] || n->p.flag != 0)
            continue;
        wgml_node *gv = n->in[0], *uv = n->in[1], *y = gv->nin >= 1 ? gv->in[0] : NULL;
        if (!live_op(y, WG_OP_LINEAR) || y->output || uses[y->id] != 2 || (y->nin > 2 && y->in[2]) ||
            (y->nin > 3 && y->in[3]) || y->d.dtype != WGML_F32 || n->d.dtype != WGML_F32 ||
            y->p.mm.act != WGML_ACT_NONE || y->p.mm.beta != 0.0f || !half(gv, y, 0) || !half(uv, y, 1) ||
            uses[gv->id] != 1 || uses[uv->id] != 1)
            continue;
        wgml_node *x = y->in[0], *w = y->in[1];
        int kind = n->p.sub;
        n->op = WG_OP_LINEAR_GLU;
        n->p = y->p;
        n->p.sub = kind;
        n->in[0] = x, n->in[1] = w;
        n->nin = 2;
        uses[x->id]++, uses[w->id]++;
        uses[gv->id]--, uses[uv->id]--;
        fold(g, gv, n, uses);
        fold(g, uv, n, uses);
        fold(g, y, n, uses);
    }
}

/* A view node of kind vk that one node alone reads (and not an output). */
static bool sole_view(const wgml_node *v, int vk, size_t *uses)
{
    return v && v->kind == WG_N_VIEW && v->op == vk && !v->fused_into && !v->output && v->nin >= 1 && v->in[0] &&
           uses[v->id] == 1;
}

/* set_rows(cache, idx, reshape(r[:, h0:h1])) with r = rope(reshape(y))
 * of y = linear(x, w, bias) [T, N] (a decoder's roped q|k|v product, its k|v
 * heads written into the KV cache): one WG_OP_LINEAR_ROPE_KV, which is
 * the set_rows node and writes r too (r produced_by it), so the one-row
 * product rotates the pairs and writes the cache itself
 * (src/ops/linear_rope_kv.c): a decode layer runs no rope and no cache
 * write (WGML_GRAPH_FUSE=norope keeps them apart). */
static void fuse_linear_rope_kv(wgml_graph *g, size_t *uses)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_node *s = g->nodes[i];
        if (!live_op(s, WG_OP_SET_ROWS) || s->nin != 3 || !sole_view(s->in[2], WG_V_RESHAPE, uses))
            continue;
        wgml_node *v3 = s->in[2], *v2 = v3->in[0];
        if (!sole_view(v2, WG_V_SLICE, uses) || v2->p.axis != 1 || v2->p.a[1] != 1)
            continue;
        wgml_node *r = v2->in[0];
        if (!live_op(r, WG_OP_ROPE) || r->nin < 2 || r->d.ndim != 3 || r->d.dtype != WGML_F32 || r->sum_out ||
            !sole_view(r->in[0], WG_V_RESHAPE, uses))
            continue;
        wgml_node *v1 = r->in[0], *y = v1->in[0];
        if (!live_op(y, WG_OP_LINEAR) || y->output || uses[y->id] != 1 || y->d.ndim != 2 || y->d.dtype != WGML_F32 ||
            (y->nin > 3 && y->in[3]) || y->p.mm.act != WGML_ACT_NONE || y->p.mm.beta != 0.0f)
            continue;
        int64_t D = r->d.shape[2], h0 = v2->p.k, h1 = v2->p.a[0];
        if (wg_is_sym(D) || wg_is_sym(h1) || wg_is_sym(y->d.shape[1]) || v3->d.ndim != 2 ||
            v3->d.shape[1] != (h1 - h0) * D || v3->d.shape[0] != r->d.shape[0] || y->d.shape[0] != r->d.shape[0] ||
            y->d.shape[1] != r->d.shape[1] * D)
            continue;
        wgml_node *x = y->in[0], *w = y->in[1], *pos = r->in[1], *ff = r->nin > 2 ? r->in[2] : NULL;
        wgml_node *bias = y->nin > 2 ? y->in[2] : NULL;
        wg_op_params np = y->p;
        np.rope = r->p.rope;
        np.k = D;
        np.a[0] = h0;
        np.a[1] = h1;
        s->op = WG_OP_LINEAR_ROPE_KV;
        s->p = np;
        s->in[2] = x, s->in[3] = w, s->in[4] = pos, s->in[5] = ff, s->in[6] = bias;
        s->nin = bias ? 7 : ff ? 6 : 5;
        uses[x->id]++, uses[w->id]++, uses[pos->id]++;
        if (ff)
            uses[ff->id]++;
        if (bias)
            uses[bias->id]++;
        uses[v3->id]--;
        fold(g, v3, s, uses);
        fold(g, v2, s, uses);
        /* r runs no kernel: its inputs are s's now, its memory s's out2 */
        for (int k = 0; k < r->nin; k++)
            if (r->in[k])
                uses[r->in[k]->id]--;
        memset(r->in, 0, sizeof r->in);
        r->nin = 0;
        fold(g, v1, s, uses);
        fold(g, y, s, uses);
        r->produced_by = s;
        s->sum_out = r;
        g->fused++;
    }
}

/* norm(..) feeding a product's x (linear, linear_glu's or linear_rope_kv's),
 * when the one-row product would take the one-dispatch integer kernel:
 * the norm writes x's 8-bit codes after its row (xq_tail: its rows grow to
 * k + wg_q8_row_words(k)) and the product reads x through a new [.., :k]
 * slice of it, and for one row reads the codes instead of quantising x in
 * each workgroup (src/ops/norm.c; WGML_GRAPH_FUSE=noxq keeps the norm
 * plain).  Nothing folds: the same dispatches, less work in the products.
 * Adds one node a norm (uses[] has room). */
static void fuse_xq_tail(wgml_graph *g, size_t *uses)
{
    for (size_t i = 0, n0 = g->n; i < n0; i++) {
        wgml_node *c = g->nodes[i];
        int xi = live_op(c, WG_OP_LINEAR) || live_op(c, WG_OP_LINEAR_GLU) ? 0 : live_op(c, WG_OP_LINEAR_ROPE_KV) ? 2
                                                                                                                  : -1;
        if (xi < 0 || c->p.xq_in || c->nin < xi + 2 || !c->in[xi + 1])
            continue;
        wgml_node *x = c->in[xi], *w = c->in[xi + 1], *v;
        int64_t k = x && x->d.ndim ? x->d.shape[x->d.ndim - 1] : 0;
        if (!live_op(x, WG_OP_NORM) || x->p.xq_tail || uses[x->id] != 1 || x->output || x->d.dtype != WGML_F32 ||
            wg_is_sym(k) || k <= 0 || k % 32 || w->d.ndim != 2 || wg_is_sym(w->d.shape[0]) ||
            (x->p.norm.kind != WGML_LAYER_NORM && x->p.norm.kind != WGML_RMS_NORM &&
             x->p.norm.kind != WGML_L2_NORM) ||
            !wg_matvec_xs(g->ctx, w->d.dtype, 1, w->d.shape[0], k))
            continue;
        const wg_desc *d[WG_OP_MAX_IN] = {0};
        for (int j = 0; j < x->nin; j++)
            d[j] = x->in[j] ? &x->in[j]->d : NULL;
        wg_desc xd = x->d;
        x->p.xq_tail = true;
        if (wg_op_def_get(WG_OP_NORM)->check(&x->p, d, x->nin, &x->d) != WGML_OK ||
            wgml_g_slice(g, x, x->d.ndim - 1, 0, k, 1, &v) != WGML_OK) {
            x->p.xq_tail = false; /* as it was: fusion is an optimisation */
            x->d = xd;
            continue;
        }
        c->in[xi] = v;
        c->p.xq_in = true;
        uses[v->id] = 1;
    }
}

/* h (a LINEAR) becomes the LINEAR_NORM that writes y = norm(h) (* gw) too:
 * y runs no kernel, its memory is h's out2 (its sum_out).  split: the
 * norm split's form (fuse_norm_split), else the norm tail's. */
static void take_norm(wgml_graph *g, size_t *uses, wgml_node *h, wgml_node *y, wgml_node *gw, bool split)
{
    wg_op_params np = h->p;
    np.norm = y->p.norm;
    np.xq_tail = split || y->p.xq_tail;
    np.norm_split = split;
    for (int k2 = h->nin; k2 < 5; k2++)
        h->in[k2] = NULL;
    h->nin = 5;
    h->in[4] = gw;
    h->op = WG_OP_LINEAR_NORM;
    h->p = np;
    for (int k2 = 0; k2 < y->nin; k2++)
        if (y->in[k2])
            uses[y->in[k2]->id]--;
    if (gw)
        uses[gw->id]++;
    memset(y->in, 0, sizeof y->in);
    y->nin = 0;
    y->produced_by = h;
    h->sum_out = y;
    g->fused++;
}

/* Whether y = norm(h) (* g), RMS or L2 with no bias or residual of its
 * own, normalises h = linear(x, w) (+ c) (not both; no activation), f32 of
 * whole 32-element blocks, that the one-row one-dispatch product would
 * take: what take_norm takes, in both its forms. */
static bool norm_of_linear(wgml_graph *g, const wgml_node *y)
{
    const wgml_node *h = y->nin ? y->in[0] : NULL, *gw = y->nin > 1 ? y->in[1] : NULL;
    if (!live_op(y, WG_OP_NORM) || y->sum_out || (y->p.norm.kind != WGML_RMS_NORM &&
        y->p.norm.kind != WGML_L2_NORM) || (y->nin > 2 && y->in[2]) || (y->nin > 3 && y->in[3]) ||
        !live_op(h, WG_OP_LINEAR) || h->sum_out || h->d.dtype != WGML_F32 || h->p.mm.act != WGML_ACT_NONE ||
        (h->nin > 3 && h->in[2] && h->in[3]) || h->d.ndim < 1)
        return false;
    const wgml_node *w = h->in[1];
    int64_t n = h->d.shape[h->d.ndim - 1], k = w->d.ndim == 2 ? w->d.shape[1] : 0;
    return !wg_is_sym(n) && n > 0 && n % 32 == 0 && !wg_is_sym(k) && (!gw || gw->d.dtype == WGML_F32) &&
           wg_matvec_xs(g->ctx, w->d.dtype, 1, n, k);
}

/* y = norm(h) (* g), RMS or L2, of h = linear(x, w) (+ c) (a decoder's
 * residual stream after its o and down products, normalised for the next
 * products): one WG_OP_LINEAR_NORM, the linear's node, which writes the
 * norm's node y too (its out2; with the xq tail's codes when y has them),
 * when the one-row product would take the one-dispatch integer kernel:
 * its last workgroup normalises the row (src/ops/linear_norm.c), so a
 * decode layer runs no norm dispatch.  Opt-in (WGML_GRAPH_FUSE=normtail):
 * on an H200 the tail's chain on one SM costs more than the dispatch it
 * saves on the 8B (360.3 -> 353.4 tokens/s), not on the 1B (1,050.9 ->
 * 1,075.6; bench/NOTES.md 2026-11-27 (5)).  Runs after fuse_xq_tail, whose
 * codes the tail writes. */
static void fuse_linear_norm(wgml_graph *g, size_t *uses)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_node *y = g->nodes[i];
        if (norm_of_linear(g, y))
            take_norm(g, uses, y->in[0], y, y->nin > 1 ? y->in[1] : NULL, false);
    }
}

/* The norm split (default; WGML_GRAPH_FUSE=nosplit keeps the norm's
 * dispatch): y = norm(h) (* g), RMS or L2 with the xq tail, of one row
 * h = linear(x, w) (+ c), where y is read only by one product through its
 * [.., :k] view (a decoder's gate|up after the ffn norm, the next layer's
 * q|k|v after the attention norm) and both products would take the
 * one-row one-dispatch kernel, w in one binding window.  Only bindings
 * of one row split: at more rows (a prefill through the same graph) the
 * node runs the linear, then the norm, and the reader reads y's values.
 * h's node becomes a LINEAR_NORM with norm_split: each of its workgroups writes its 32-row
 * block's codes of h * g and sum of squares of h into y's row (y runs no
 * kernel; its row grows by n / 32 words and its values are never
 * written); the reader, given the norm (xq_split), scales its sums by the
 * norm's factor (src/kernels/matvec_nsplit.wgsl says why).  Results differ
 * from the xq tail's by rounding: the codes of h * g instead of y's (the
 * same but where a scaled value lands on a rounding tie), the sum of
 * squares in another order.  Runs after fuse_xq_tail. */
static void fuse_norm_split(wgml_graph *g, size_t *uses)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_node *c = g->nodes[i];
        int xi = live_op(c, WG_OP_LINEAR) || live_op(c, WG_OP_LINEAR_GLU) ? 0 : live_op(c, WG_OP_LINEAR_ROPE_KV) ? 2
                                                                                                                  : -1;
        if (xi < 0 || !c->p.xq_in || c->p.xq_split || c->nin < xi + 2 || !c->in[xi + 1])
            continue;
        wgml_node *v = c->in[xi], *cw = c->in[xi + 1];
        wgml_node *y = v && v->kind == WG_N_VIEW && v->op == WG_V_SLICE ? v->in[0] : NULL;
        if (!y || uses[v->id] != 1 || !y->p.xq_tail || uses[y->id] != 1 || y->output || !norm_of_linear(g, y) ||
            y->in[0]->p.xq_split)
            continue;
        wgml_node *h = y->in[0], *w = h->in[1], *gw = y->nin > 1 ? y->in[1] : NULL;
        int64_t n = h->d.shape[h->d.ndim - 1], ck = cw->d.ndim == 2 ? cw->d.shape[1] : 0, rows = 1;
        for (int d = 0; d + 1 < h->d.ndim; d++) /* a symbolic dim may be 1: decided at each binding */
            rows *= wg_is_sym(h->d.shape[d]) ? 1 : h->d.shape[d];
        if (rows != 1 || ck != n || wg_is_sym(cw->d.shape[0]) || (gw && wg_desc_bytes(&gw->d) != (uint64_t)n * 4) ||
            wg_desc_bytes(&w->d) + 64 > wg_window_cap(g->ctx) ||
            !wg_matvec_xs(g->ctx, cw->d.dtype, 1, cw->d.shape[0], n))
            continue;
        take_norm(g, uses, h, y, gw, true);
        y->d.shape[y->d.ndim - 1] = n + (int64_t)wg_q8_split_words(n);
        c->p.xq_split = true;
        c->p.norm = y->p.norm;
    }
}

/* The feed-forward block (default; WGML_GRAPH_FUSE=noffn keeps it apart):
 * a LINEAR_GLU whose x is a split norm's codes, read only by a LINEAR (no
 * bias; its c the residual) or a norm-split LINEAR_NORM (a decoder's
 * gate|up and down products), becomes one WG_OP_FFN, the second's node:
 * it runs the two fused ops as before, or with WGML_FORCE=ffn=persist,
 * for one row, one persistent dispatch with a grid barrier between them
 * (src/ops/ffn.c says why that is not the default).  Runs after fuse_norm_split, whose codes the glu product
 * reads. */
static void fuse_ffn(wgml_graph *g, size_t *uses)
{
    for (size_t i = 0; i < g->n; i++) {
        wgml_node *b = g->nodes[i], *a = b->nin ? b->in[0] : NULL;
        bool norm = live_op(b, WG_OP_LINEAR_NORM);
        if ((!norm && !live_op(b, WG_OP_LINEAR)) || (norm && !b->p.norm_split) || b->p.xq_in ||
            (b->nin > 2 && b->in[2]) || b->p.mm.act != WGML_ACT_NONE || !live_op(a, WG_OP_LINEAR_GLU) ||
            uses[a->id] != 1 || a->output || !a->p.xq_in || !a->p.xq_split || a->nin < 2 || !a->in[1] ||
            a->in[1]->d.dtype != b->in[1]->d.dtype)
            continue;
        wg_op_params p = b->p;
        p.mm2 = a->p.mm;
        p.xnorm = a->p.norm;
        p.sub = a->p.sub;
        p.xq_in = a->p.xq_in;
        p.xq_split = a->p.xq_split;
        p.flag = norm;
        wgml_node *in[5] = {a->in[0], a->in[1], b->in[1], b->nin > 3 ? b->in[3] : NULL, norm && b->nin > 4 ? b->in[4] : NULL};
        uses[a->id]--;
        for (int k = 0; k < 5; k++) {
            b->in[k] = in[k];
            if (k < 2 && in[k])
                uses[in[k]->id]++; /* the glu product's, now read here (fold takes them back) */
        }
        for (int k = 5; k < WG_OP_MAX_IN; k++)
            b->in[k] = NULL;
        b->nin = 5;
        b->op = WG_OP_FFN;
        b->p = p;
        fold(g, a, b, uses);
    }
}

size_t wg_graph_fuse(wgml_graph *g)
{
    const char *e = getenv("WGML_GRAPH_FUSE");
    if (g->opt.no_fuse || (e && !strcmp(e, "0")))
        return 0;
    size_t *uses = calloc(2 * g->n + 1, sizeof *uses); /* room for fuse_xq_tail's views */
    if (!uses)
        return 0; /* fusion is an optimisation: without memory, run unfused */
    for (size_t i = 0; i < g->n; i++)
        for (int j = 0; j < g->nodes[i]->nin; j++)
            if (g->nodes[i]->in[j])
                uses[g->nodes[i]->in[j]->id]++;
    /* Softmax first: its SCALE is not a chain's to take. */
    fuse_softmax(g, uses);
    /* before chains (an activation is the product's to take) and the
     * residual norm (a residual add is the linear's to take: its c) */
    fuse_matmul_epilogue(g, uses, !(e && strstr(e, "noresid")));
    fuse_residual_norm(g, uses);
    if (!(e && strstr(e, "noglupair")))
        fuse_linear_glu(g, uses);
    if (!(e && strstr(e, "norope")))
        fuse_linear_rope_kv(g, uses);
    /* Opt-in (WGML_GRAPH_FUSE=prologue; normpro / glupro: one kind): on an
     * H200 the 8B decode ran 230.7 tokens/s with both kinds, 240.1 / 240.6
     * with one, 242.9 with neither (bench/NOTES.md): the fused first
     * pass's one workgroup a row (norm) and 32 activations a thread (glu)
     * cost more than the dispatch they save. */
    bool all = e && strstr(e, "prologue");
    fuse_linear_prologue(g, uses, all || (e && strstr(e, "normpro")), all || (e && strstr(e, "glupro")));
    if (!(e && strstr(e, "noxq")))
        fuse_xq_tail(g, uses);
    if (e && strstr(e, "normtail"))
        fuse_linear_norm(g, uses);
    else if (!(e && strstr(e, "nosplit")))
        fuse_norm_split(g, uses);
    if (!(e && strstr(e, "noffn")))
        fuse_ffn(g, uses);
    fuse_chains(g, uses);
    free(uses);
    return g->fused;
}
