/*
 * The op table: one row per op with a pure *check* (operand descriptions
 * and parameters -> output description, or an error with a message; no
 * GPU, no allocation) and an *encode* (bound tensors -> dispatches into the
 * context's current target, which may be a recorder).  The graph layer
 * builds nodes with check alone and records encodes once at compile; an
 * eager graph (wgml_graph_create_eager) runs both per node and is how a
 * caller lets wgml make an op's output.
 *
 * Shapes in a check may hold symbolic dims (sentinels from
 * wgml_graph_dim, WGML_SYMBOLIC_BASE - id): a check compares them for
 * equality and broadcasts them against 1, and refuses arithmetic on them
 * (a concat along a symbolic axis) with a message.  Compile binds them and
 * encodes with concrete shapes, so the eager functions check again there.
 */
#ifndef WGML_OPTABLE_H
#define WGML_OPTABLE_H

#include "ops.h"
#include "elementwise.h"
#include "wgml_graph.h"

/* inputs a node takes at most (linear_rope_kv: cache, idx, x, w, pos,
 * freq_factors, bias) */
#define WG_OP_MAX_IN 7

typedef enum wg_op {
    WG_OP_UNARY, WG_OP_BINARY, WG_OP_WHERE, WG_OP_CAST, WG_OP_COPY, WG_OP_FILL,
    WG_OP_PERMUTE, WG_OP_REPEAT, WG_OP_CONCAT, WG_OP_PAD, WG_OP_FLIP, WG_OP_ROLL, WG_OP_TRI, WG_OP_DIAG,
    WG_OP_GET_ROWS, WG_OP_SET_ROWS, WG_OP_GATHER, WG_OP_SCATTER_ADD, WG_OP_INDEX_SELECT, WG_OP_ONE_HOT,
    WG_OP_EMBEDDING, WG_OP_DEQUANTIZE,
    WG_OP_REDUCE, WG_OP_CUMSUM, WG_OP_ARGSORT, WG_OP_TOP_K,
    WG_OP_SOFTMAX, WG_OP_NORM, WG_OP_ROPE, WG_OP_GLU, WG_OP_SAMPLE,
    WG_OP_EW_CHAIN, /* fused float unary ops: made by graph fusion only */
    /* Part 2 (src/ops/optable_mm.c): matrix products and attention. */
    WG_OP_MATMUL, WG_OP_LINEAR, WG_OP_LINEAR_ID, WG_OP_ATTENTION,
    WG_OP_LINEAR_PRE, /* a linear with its x's rms_norm or glu: made by graph fusion only (matvec_pre.c) */
    WG_OP_LINEAR_GLU, /* the glu of a linear's even and odd columns: made by graph fusion only (linear_glu.c) */
    WG_OP_LINEAR_ROPE_KV, /* set_rows of a roped linear's heads: made by graph fusion only (linear_rope_kv.c) */
    WG_OP_LINEAR_NORM, /* a linear and the RMS/L2 norm of its output: made by graph fusion only (linear_norm.c) */
    WG_OP_FFN, /* a linear_glu feeding a linear or linear_norm: made by graph fusion only (ffn.c) */
    WG_OP_COUNT
} wg_op;

/* What a check sees of an operand: logical shape and dtype (layout is the
 * encode's business: every eager op takes any strides). */
typedef struct wg_desc {
    wgml_dtype dtype;
    int ndim;
    int64_t shape[WGML_MAX_DIMS];
} wg_desc;

/* Parameters of every op, one struct (unused fields zero).  Tensor
 * operands of the public param structs (norm weight, rope freq_factors)
 * are inputs instead; their pointers here are ignored. */
typedef struct wg_op_params {
    int sub;            /* unary/binary/reduce op, glu kind, pad mode */
    int axis;
    int flag;           /* exclusive, descending, upper, swapped, diag direction, top_k output */
    unsigned mask;      /* reduce axes, flip axes */
    float f[2];         /* unary p0 p1, reduce p0 */
    int64_t k;          /* tri diagonal, top_k k */
    int64_t a[WGML_MAX_DIMS], b[WGML_MAX_DIMS]; /* perm, pad before/after, roll shifts */
    double value;       /* fill, pad */
    wgml_dtype dtype;   /* cast, fill, one_hot, get_rows, embedding, dequantize out dtype */
    int ndim;           /* fill, repeat out shape; one_hot classes in shape[0] */
    int64_t shape[WGML_MAX_DIMS];
    wgml_softmax_params softmax;
    wgml_norm_params norm;
    wgml_rope_params rope;
    wgml_sample_params sample;
    wgml_matmul_params mm;  /* matmul, linear (out dtype in .dtype) */
    wgml_attn_params attn;  /* attention (out dtype in .dtype) */
    /* Graph fusion's xq tail (src/ops/norm.c): xq_tail, a NORM whose
     * output rows are [k + wg_q8_row_words(k)], its values then (one-row
     * tensors) their 8-bit codes; xq_in, a LINEAR,
     * LINEAR_GLU or LINEAR_ROPE_KV whose x is the [.., :k] view of such an
     * output, so its one-row product reads the codes. */
    bool xq_tail, xq_in;
    /* Graph fusion's norm split (src/graph/fuse.c): norm_split, a
     * LINEAR_NORM each 32-row block of whose product writes the codes of
     * h * g and the block's sum of squares into the norm's row (no
     * normalised values); xq_split, a product with xq_in whose x's codes
     * are such a row's: it scales its sums by the factor of the norm in
     * `norm` (kind, eps). */
    bool norm_split, xq_split;
    /* WG_OP_FFN (graph fusion's linear_glu -> linear / linear_norm, ffn.c):
     * the glu product's own mm and x-codes norm; mm, norm, norm_split and
     * xq_tail are the second product's, xq_in and xq_split the first's,
     * flag 1 when the second is a LINEAR_NORM. */
    wgml_matmul_params mm2;
    wgml_norm_params xnorm;
    int chain_n;        /* WG_OP_EW_CHAIN: ops applied in order */
    int chain_op[WG_CHAIN_MAX];
    float chain_p[WG_CHAIN_MAX][2];
} wg_op_params;

typedef struct wg_op_def {
    const char *name;
    int min_in, max_in;   /* inputs; those past min_in may be NULL (absent) */
    /* The output may be the very input 0 view (wgml.h's in-place list):
     * the planner may give it input 0's memory when input 0 dies here. */
    bool inplace;
    /* The op updates input 0 in place and its node is that tensor after
     * the update (set_rows, scatter_add). */
    bool updates_input;
    wgml_status (*check)(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out);
    /* Scratch the encode may take (wg_scratch_tensor) for these operands,
     * an upper bound in bytes with each request rounded up to 256 (NULL:
     * the op takes none).  Eager calls verify it (taking more, or any for
     * a row without one, is WGML_ERR_INTERNAL); graphs size their arena's
     * scratch region with it. */
    uint64_t (*scratch)(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
    /* out2: a second output for ops fusion gives one (norm's sum_out), else NULL. */
    wgml_status (*encode)(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                          wgml_tensor *out2);
} wg_op_def;

/* Scratch declarations kept beside the code whose requests they bound
 * (optable.c's first comment lists every row that declares scratch). */
uint64_t wg_sc_reduce(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
uint64_t wg_sc_cumsum(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
uint64_t wg_sc_argsort(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
uint64_t wg_sc_top_k(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
uint64_t wg_sc_sample(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
uint64_t wg_sc_softmax(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
uint64_t wg_sc_norm(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
uint64_t wg_sc_rope(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
/* A NORM with xq_tail (norm.c): its output's description, and its encode. */
wgml_status wg_ck_norm_xq(const wg_op_params *p, const wg_desc *x, wg_desc *out);
wgml_status wg_norm_xq(const wgml_tensor *x, const wgml_norm_params *p, wgml_tensor *out);

/* The row of op (NULL when out of range). */
const wg_op_def *wg_op_def_get(int op);
/* Rows WG_OP_MATMUL .. WG_OP_COUNT - 1 (optable_mm.c; NULL otherwise). */
const wg_op_def *wg_op_def_mm(int op);

/* Symbolic dims (wgml_graph.h): a sentinel per graph dim id. */
static inline bool wg_is_sym(int64_t d) { return d <= WGML_SYMBOLIC_BASE && d > WGML_SYMBOLIC_BASE - WGML_MAX_GRAPH_DIMS; }
static inline int wg_sym_id(int64_t d) { return (int)(WGML_SYMBOLIC_BASE - d); }
/* Bytes of d's elements (concrete dims; a symbolic one counts as 0). */
uint64_t wg_desc_bytes(const wg_desc *d);
/* "[seq, 4096]" with symbolic dims by name when names is given. */
const char *wg_desc_str(const wg_desc *d, const char *const *names, char *buf, size_t n);

#endif
