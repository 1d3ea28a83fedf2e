/*
 * Graph internals shared by build.c (nodes and their checks), plan.c
 * (order, lifetimes, arena, verifier), exec.c (binding, recording, runs)
 * and dump.c (text, DOT, stats, per-node profile).  The graph layer sees
 * the GPU only through the op table and src/gpu/runtime.h.
 */
#ifndef WGML_GRAPH_INTERNAL_H
#define WGML_GRAPH_INTERNAL_H

#include "ops/optable.h"

typedef enum wg_node_kind { WG_N_INPUT, WG_N_TENSOR, WG_N_VIEW, WG_N_OP } wg_node_kind;
typedef enum wg_view_kind { WG_V_RESHAPE, WG_V_PERMUTE, WG_V_SLICE, WG_V_BROADCAST } wg_view_kind;

#define WG_CACHE_SLOTS 4 /* recordings kept per graph, one per dim binding */

struct wgml_node {
    wgml_graph *g;
    int id;
    wg_node_kind kind;
    int op;                   /* WG_OP_* (WG_N_OP) or wg_view_kind (WG_N_VIEW) */
    wg_op_params p;           /* views: perm in a[], shape in shape[], slice axis/k=start/a[0]=stop/a[1]=step */
    wgml_node *in[WG_OP_MAX_IN];
    int nin;
    wg_desc d;                /* may hold symbolic sentinels */
    char *name;
    bool output;
    wgml_tensor *user;        /* WG_N_TENSOR: the caller's */

    /* fusion (fuse.c) */
    wgml_node *fused_into;    /* folded into that node: no dispatch, no memory */
    wgml_node *produced_by;   /* its memory is written by that node (its sum_out): no dispatch */
    wgml_node *sum_out;       /* the node whose memory it writes too, its encode's out2: a norm's fused
                               * residual add (the sum), linear_rope_kv's rope (the roped product) */

    /* planning (plan.c) */
    wgml_node *root;          /* the node whose memory this is (itself for roots) */
    wgml_node *inplace_of;    /* an op given its dying input's memory */
    int order;                /* position in the run; -1 until planned */
    int last_use;             /* roots: the last position reading this memory */
    bool in_arena;
    uint64_t offset, bytes;   /* roots in the arena */

    /* binding (exec.c) */
    wgml_tensor *t;           /* at the current dims */
    size_t rec_from, rec_to;  /* its dispatches in the current recording */
};

typedef struct wg_gdim {
    char *name;
    int64_t max, value;
    bool bound;
} wg_gdim;

typedef struct wg_cached {
    bool used;
    int64_t key[WGML_MAX_GRAPH_DIMS];
    uint64_t tick;
    wg_recording rec;
    size_t (*ranges)[2];      /* per node: its records */
} wg_cached;

struct wgml_graph {
    wgml_ctx *ctx;
    bool eager;
    wgml_node **nodes;
    size_t n, cap;
    wg_gdim dims[WGML_MAX_GRAPH_DIMS];
    int ndims;
    const char *dim_names[WGML_MAX_GRAPH_DIMS];

    /* compile */
    bool compiled;
    wgml_graph_options opt;
    wgml_node **order;        /* the run's order (op, view and leaf nodes) */
    size_t n_order;
    wgml_tensor *arena;       /* u8 [arena_bytes] */
    uint64_t arena_bytes, peak, inter_bytes;
    /* ops' scratch: one region after the planned tensors, reused by every
     * node (exec.c); need is the most one node asked for */
    uint64_t scratch_off, scratch_cap, scratch_used, scratch_need;

    /* binding and recordings */
    int64_t tensors_key[WGML_MAX_GRAPH_DIMS]; /* dims the node tensors are made at */
    bool tensors_valid;
    wg_cached cache[WG_CACHE_SLOTS];
    wg_cached *cur;
    uint64_t tick, recordings, fused;
    uint64_t nodes_encoded, nodes_reused; /* by the last recording */
    bool nancheck;
    uint64_t ticket;          /* the last run's completion ticket (wg_fence_issue) */
    double *node_ns;          /* per node GPU time (profiling) */
};

/* build.c */
wgml_status wg_graph_fail(const wgml_node *n, wgml_status st);
const char *wg_node_label(const wgml_node *n, char *buf, size_t size);
const char *wg_node_kind_name(const wgml_node *n);
/* The node's description at the graph's current dim values. */
void wg_node_concrete(const wgml_node *n, int64_t shape[WGML_MAX_DIMS]);
int64_t wg_graph_dim_value(const wgml_graph *g, int64_t v, bool at_max);
/* d with every symbolic dim at its maximum (what the planner sizes for). */
wg_desc wg_desc_at_max(const wgml_graph *g, const wg_desc *d);

/* fuse.c: rewrites the graph before planning (unary chains, residual add
 * + norm, scale and mask into softmax); returns nodes fused. */
size_t wg_graph_fuse(wgml_graph *g);

/* plan.c: order, lifetimes, arena placement, verifier. */
wgml_status wg_graph_plan(wgml_graph *g);
wgml_status wg_graph_verify(const wgml_graph *g);

/* exec.c: makes the node tensors for the current dims (eager graphs: one
 * node, built just now). */
wgml_status wg_node_make_tensor(wgml_node *n);
wgml_status wg_node_encode(wgml_node *n);
void wg_graph_drop_bindings(wgml_graph *g);

#endif
