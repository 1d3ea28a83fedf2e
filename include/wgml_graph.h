/*
 * wgml graphs: build a computation once, plan its memory once, replay it
 * at a few microseconds a dispatch.
 *
 *   wgml_graph *g;  wgml_node *x, *w, *y;
 *   int64_t seq;  wgml_graph_create(ctx, &g);
 *   wgml_graph_dim(g, "seq", 512, &seq);                  // symbolic, <= 512
 *   wgml_graph_input(g, "x", WGML_F32, 2, (int64_t[]){seq, 4096}, &x);
 *   wgml_graph_tensor(g, "w", weight, &w);                // uploaded once, kept
 *   wgml_g_norm(g, x, &(wgml_norm_params){WGML_RMS_NORM, 1e-6f}, w, NULL, NULL, &y);
 *   wgml_graph_output(g, y);
 *   wgml_graph_compile(g, NULL);                          // plan + record
 *   wgml_graph_bind_dim(g, seq, 7);                       // per run
 *   wgml_graph_write(g, x, host, bytes);  wgml_graph_run(g);
 *   wgml_graph_read(g, y, out, bytes);                    // waits
 *
 * Nodes have no memory until the graph is compiled: the planner orders
 * them, computes each intermediate's lifetime and places all of them in
 * one arena buffer with best-fit reuse (wgml_graph_stats reports the arena
 * next to the sum of all intermediates).  Tensors given with
 * wgml_graph_tensor (weights, a KV cache) live outside it and persist
 * across runs; ops that update a tensor in place (set_rows, scatter_add)
 * return the node of the updated tensor, and a node that reads the old
 * version after it was updated is refused.
 *
 * Compiling records every node's dispatches once (kernels compiled, bind
 * groups made, parameters uploaded); a run replays the recording into the
 * context's command stream and submits it.  Binding a symbolic dim to a
 * new value re-records the nodes whose shapes involve it (no kernel is
 * compiled for it: kernels do not depend on sizes; the others' dispatches
 * are copied); the last few bindings are kept, so alternating lengths
 * replay without re-recording.
 *
 * Every builder checks its operands at once (shapes, dtypes, symbolic
 * dims against their bounds) and returns WGML_ERR_SHAPE / _DTYPE / ... with
 * a message naming the node; nothing is added on error.
 *
 * Environment: WGML_GRAPH_FUSE=0 turns fusion off; WGML_PROFILE=1 times
 * every node (wgml_graph_profile_print); WGML_GRAPH_NANCHECK=1 runs node
 * by node and fails with the first node whose output holds a NaN or Inf.
 */
#ifndef WGML_GRAPH_H
#define WGML_GRAPH_H

#include "wgml.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wgml_graph wgml_graph;
typedef struct wgml_node wgml_node;

/* Symbolic dims are handed out as these sentinel values, to be placed in
 * shapes like any size. */
#define WGML_SYMBOLIC_BASE (-((int64_t)1 << 50))
#define WGML_MAX_GRAPH_DIMS 16

wgml_status wgml_graph_create(wgml_ctx *ctx, wgml_graph **out);
/* An eager graph: every builder also runs its node at once, and
 * wgml_node_tensor gives the result; it is how a caller lets wgml make an
 * op's output (shape and dtype from the op's check). */
wgml_status wgml_graph_create_eager(wgml_ctx *ctx, wgml_graph **out);
/* Waits for the graph's work and frees it (its nodes, arena and
 * recordings; not the tensors given with wgml_graph_tensor). */
void wgml_graph_free(wgml_graph *g);

/* A symbolic dim named `name` with values 0..max (max >= 1); *value is its
 * sentinel for shapes. */
wgml_status wgml_graph_dim(wgml_graph *g, const char *name, int64_t max, int64_t *value);

/* ------------------------------------------------------------ leaves */

/* An input: its contents are written before each run (wgml_graph_write). */
wgml_status wgml_graph_input(wgml_graph *g, const char *name, wgml_dtype dt, int ndim, const int64_t *shape,
                             wgml_node **out);
/* A tensor the graph uses in place (weights, a KV cache): not copied, not
 * in the arena, and it must outlive the graph.  Updates (set_rows,
 * scatter_add) persist across runs. */
wgml_status wgml_graph_tensor(wgml_graph *g, const char *name, wgml_tensor *t, wgml_node **out);
/* Marks n as an output: its memory is never reused, so it can be read
 * after a run (any node can be read in an eager graph). */
wgml_status wgml_graph_output(wgml_graph *g, wgml_node *n);
/* Names a node for dumps and messages (copied). */
wgml_status wgml_node_set_name(wgml_node *n, const char *name);

/* ------------------------------------------------------------ views (no copy) */

wgml_status wgml_g_reshape(wgml_graph *g, wgml_node *x, int ndim, const int64_t *shape, wgml_node **out);
wgml_status wgml_g_permute(wgml_graph *g, wgml_node *x, const int *perm, wgml_node **out);
wgml_status wgml_g_transpose(wgml_graph *g, wgml_node *x, int axis0, int axis1, wgml_node **out);
/* stop may be a symbolic dim (a KV cache read up to the current length). */
wgml_status wgml_g_slice(wgml_graph *g, wgml_node *x, int axis, int64_t start, int64_t stop, int64_t step,
                         wgml_node **out);
wgml_status wgml_g_broadcast(wgml_graph *g, wgml_node *x, int ndim, const int64_t *shape, wgml_node **out);

/* ------------------------------------------------------------ ops
 * One builder per op of wgml.h, with its parameters and rules; the output
 * shape and dtype come from the op's check. */
wgml_status wgml_g_unary(wgml_graph *g, wgml_unary_op op, wgml_node *x, float p0, float p1, wgml_node **out);
wgml_status wgml_g_binary(wgml_graph *g, wgml_binary_op op, wgml_node *a, wgml_node *b, wgml_node **out);
wgml_status wgml_g_where(wgml_graph *g, wgml_node *cond, wgml_node *a, wgml_node *b, wgml_node **out);
wgml_status wgml_g_cast(wgml_graph *g, wgml_node *x, wgml_dtype dt, wgml_node **out);
/* A contiguous copy (materialises a view). */
wgml_status wgml_g_copy(wgml_graph *g, wgml_node *x, wgml_node **out);
wgml_status wgml_g_fill(wgml_graph *g, wgml_dtype dt, int ndim, const int64_t *shape, double value, wgml_node **out);
wgml_status wgml_g_permute_copy(wgml_graph *g, wgml_node *x, const int *perm, wgml_node **out);
wgml_status wgml_g_repeat(wgml_graph *g, wgml_node *x, int ndim, const int64_t *shape, wgml_node **out);
wgml_status wgml_g_concat(wgml_graph *g, wgml_node *const *xs, int n, int axis, wgml_node **out);
wgml_status wgml_g_pad(wgml_graph *g, wgml_node *x, const int64_t *before, const int64_t *after, wgml_pad_mode mode,
                       double value, wgml_node **out);
wgml_status wgml_g_flip(wgml_graph *g, wgml_node *x, unsigned axes_mask, wgml_node **out);
wgml_status wgml_g_roll(wgml_graph *g, wgml_node *x, const int64_t *shifts, wgml_node **out);
wgml_status wgml_g_tri(wgml_graph *g, wgml_node *x, int upper, int64_t k, wgml_node **out);
/* to_matrix 1: x [..., n] -> [..., n, n]; 0: x [..., n, n] -> [..., n]. */
wgml_status wgml_g_diag(wgml_graph *g, wgml_node *x, int to_matrix, wgml_node **out);
/* out_dtype: f32, or src's dtype (plain src). */
wgml_status wgml_g_get_rows(wgml_graph *g, wgml_node *src, wgml_node *idx, wgml_dtype out_dtype, wgml_node **out);
/* Returns the node of dst after the write. */
wgml_status wgml_g_set_rows(wgml_graph *g, wgml_node *dst, wgml_node *idx, wgml_node *src, wgml_node **out);
wgml_status wgml_g_gather(wgml_graph *g, wgml_node *src, int axis, wgml_node *idx, wgml_node **out);
wgml_status wgml_g_scatter_add(wgml_graph *g, wgml_node *dst, int axis, wgml_node *idx, wgml_node *src,
                               wgml_node **out);
wgml_status wgml_g_index_select(wgml_graph *g, wgml_node *src, int axis, wgml_node *idx, wgml_node **out);
wgml_status wgml_g_one_hot(wgml_graph *g, wgml_node *idx, int64_t classes, wgml_dtype dt, wgml_node **out);
wgml_status wgml_g_embedding(wgml_graph *g, wgml_node *table, wgml_node *ids, wgml_dtype out_dtype,
                             wgml_node **out);
wgml_status wgml_g_dequantize(wgml_graph *g, wgml_node *x, wgml_dtype dt, wgml_node **out);
wgml_status wgml_g_reduce(wgml_graph *g, wgml_reduce_op op, wgml_node *x, unsigned axes_mask, float p0,
                          wgml_node **out);
wgml_status wgml_g_cumsum(wgml_graph *g, wgml_node *x, int axis, int exclusive, wgml_node **out);
wgml_status wgml_g_argsort(wgml_graph *g, wgml_node *x, int descending, wgml_node **out);
/* indices 0: the values; 1: the i32 indices. */
wgml_status wgml_g_top_k(wgml_graph *g, wgml_node *x, int64_t k, int indices, wgml_node **out);
/* mask and sinks may be NULL. */
wgml_status wgml_g_softmax(wgml_graph *g, wgml_node *x, wgml_node *mask, wgml_node *sinks,
                           const wgml_softmax_params *p, wgml_node **out);
/* p's tensor fields are ignored: weight, bias, residual are nodes (NULL:
 * none).  BATCH_NORM's mean/var and sum_out are not graph operands. */
wgml_status wgml_g_norm(wgml_graph *g, wgml_node *x, const wgml_norm_params *p, wgml_node *weight,
                        wgml_node *bias, wgml_node *residual, wgml_node **out);
/* p->freq_factors is ignored: freq_factors is a node (NULL: none). */
wgml_status wgml_g_rope(wgml_graph *g, wgml_node *x, wgml_node *pos, const wgml_rope_params *p,
                        wgml_node *freq_factors, wgml_node **out);
wgml_status wgml_g_glu(wgml_graph *g, wgml_glu_kind kind, wgml_node *x, wgml_node *gate, int swapped,
                       wgml_node **out);
/* seed (NULL: none) as wgml_sample_seeded's: an i32/u32 node, typically a
 * graph input rewritten before each run so replays draw anew. */
wgml_status wgml_g_sample(wgml_graph *g, wgml_node *logits, wgml_node *seed, const wgml_sample_params *p,
                          wgml_node **out);
/* out = act(alpha * a.b + beta * c + bias) (c may be NULL when beta is 0;
 * out is a new node, c is not updated); out dtype as given. */
wgml_status wgml_g_matmul(wgml_graph *g, wgml_node *a, wgml_node *b, wgml_node *bias, wgml_node *c,
                          const wgml_matmul_params *p, wgml_dtype out_dtype, wgml_node **out);
wgml_status wgml_g_linear(wgml_graph *g, wgml_node *x, wgml_node *w, wgml_node *bias, wgml_node *c,
                          const wgml_matmul_params *p, wgml_dtype out_dtype, wgml_node **out);
wgml_status wgml_g_linear_id(wgml_graph *g, wgml_node *x, wgml_node *w, wgml_node *ids, wgml_dtype out_dtype,
                             wgml_node **out);
wgml_status wgml_g_attention(wgml_graph *g, wgml_node *q, wgml_node *k, wgml_node *v, wgml_node *mask,
                             wgml_node *sinks, const wgml_attn_params *p, wgml_dtype out_dtype, wgml_node **out);

/* ------------------------------------------------------------ node facts */

wgml_dtype wgml_node_dtype(const wgml_node *n);
int wgml_node_ndim(const wgml_node *n);
/* Size of axis (negative counts from the end); a symbolic dim gives its
 * sentinel before compile, its bound value after. */
int64_t wgml_node_dim(const wgml_node *n, int axis);
const char *wgml_node_name(const wgml_node *n);
/* The node's tensor at the current binding (a new view handle to free):
 * for inputs, outputs, eager nodes.  Valid until the next compile or
 * bind of a different size. */
wgml_status wgml_node_tensor(wgml_node *n, wgml_tensor **out);

/* ------------------------------------------------------------ compile and run */

typedef struct wgml_graph_options {
    int no_fuse;      /* 1: keep every node a dispatch of its own (also WGML_GRAPH_FUSE=0) */
    int no_inplace;   /* 1: the planner never gives an op its input's memory */
} wgml_graph_options;

/* Plans memory and records the graph at every symbolic dim's maximum
 * (opts may be NULL).  Bad graphs (a cycle made by wgml_node_set_input,
 * ops whose encode refuses concrete operands) fail naming the node. */
wgml_status wgml_graph_compile(wgml_graph *g, const wgml_graph_options *opts);
/* Binds a symbolic dim for the next runs (0..max); WGML_ERR_SHAPE above
 * its bound. */
wgml_status wgml_graph_bind_dim(wgml_graph *g, int64_t dim, int64_t value);
/* Host data into an input (its bytes at the current binding). */
wgml_status wgml_graph_write(wgml_graph *g, wgml_node *input, const void *src, uint64_t bytes);
/* Records the graph's dispatches into the stream and submits them without
 * waiting (every symbolic dim must be bound).  Asynchronous: the next read,
 * wgml_graph_wait or wgml_ctx_sync waits; an index error inside the graph
 * is reported there as WGML_ERR_INDEX. */
wgml_status wgml_graph_run(wgml_graph *g);
/* Waits for the last run. */
wgml_status wgml_graph_wait(wgml_graph *g);
/* The last run's completion, without waiting: *done = 1 once the GPU has
 * finished it (and everything submitted before it). */
wgml_status wgml_graph_done(wgml_graph *g, int *done);
/* Output (or input) bytes at the current binding; waits. */
wgml_status wgml_graph_read(wgml_graph *g, wgml_node *n, void *dst, uint64_t bytes);
/* The same without waiting (wgml_buffer_read_begin): the bytes as the runs
 * issued so far leave them; wgml_buffer_read_end(*out, dst) waits for
 * those runs only.  n's data must be contiguous. */
wgml_status wgml_graph_read_begin(wgml_graph *g, wgml_node *n, uint64_t bytes, wgml_pending **out);
/* wgml_graph_run, then wgml_graph_read_begin of n, the read's copy in the
 * run's own command buffer (each command buffer costs a GPU ~20 us: a
 * decode step's token read this way spares one a token). */
wgml_status wgml_graph_run_read(wgml_graph *g, wgml_node *n, uint64_t bytes, wgml_pending **out);
/* bytes of src (an output or input) into the input dst on the device,
 * after the runs issued before and before those issued after: a decode
 * loop feeds the sampled token back without reading it first. */
wgml_status wgml_graph_copy(wgml_graph *g, wgml_node *dst, wgml_node *src, uint64_t bytes);

/* Rewires input slot `slot` of n to src (graph editing; checked again at
 * compile, where a cycle is refused). */
wgml_status wgml_node_set_input(wgml_node *n, int slot, wgml_node *src);

/* ------------------------------------------------------------ introspection */

typedef struct wgml_graph_stats {
    uint64_t nodes, op_nodes, fused_nodes;   /* fused_nodes: nodes folded into another's kernel */
    uint64_t dispatches;                     /* recorded at the current binding */
    uint64_t arena_bytes;                    /* the planned arena (tensors) */
    uint64_t scratch_bytes;                  /* ops' scratch, placed after them (reused by every node) */
    uint64_t peak_live_bytes;                /* the most bytes live at once (arena >= this) */
    uint64_t intermediate_bytes;             /* sum of every intermediate (no reuse) */
    uint64_t recordings;                     /* times the graph was recorded */
    uint64_t nodes_encoded, nodes_reused;    /* the last recording: nodes whose host side ran, and nodes
                                              * whose dispatches were copied (no dim of theirs changed) */
} wgml_graph_stats;
wgml_status wgml_graph_stats_get(const wgml_graph *g, wgml_graph_stats *out);
/* Text (format 0) or Graphviz DOT (format 1) of the graph, with shapes,
 * arena offsets after compile and per-node GPU time after a profiled run. */
wgml_status wgml_graph_dump(const wgml_graph *g, FILE *f, int format);
/* Per-node GPU time of the runs so far (WGML_PROFILE=1), slowest first. */
wgml_status wgml_graph_profile_print(wgml_graph *g, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* WGML_GRAPH_H */
