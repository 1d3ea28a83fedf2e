/*
 * Matrix products and attention (issue 9): the op table rows of
 * src/ops/optable_mm.c and the entry points the family files share.
 *
 *   matmul.c     wgml_matmul / wgml_linear: tiled GEMM (dense operands in
 *                any float mix, quantised weights dequantised while tiles
 *                load), split-K partials in declared scratch, epilogue.
 *   matvec.c     the mat-vec path of wgml_linear for <= WG_MATVEC_MAX_ROWS
 *                activation rows (decode), and wgml_linear_id (MoE).
 *   attention.c  flash attention forward, split-KV decode.
 *
 * Kernel choice: every family picks its variant from one table keyed by
 * device and shape; WGML_FORCE forces one (wg_forced_variant), so tests run
 * every variant on the CPU driver.
 */
#ifndef WGML_MM_H
#define WGML_MM_H

#include "optable.h"

/* Activation rows up to which wgml_linear takes the mat-vec path. */
#define WG_MATVEC_MAX_ROWS 8

/* WGML_FORCE="family=variant[,family=variant...]" (e.g.
 * "gemm=t64,matvec=q8dot,attn=splitkv"): the variant forced for family,
 * or NULL.  Read at every call (tests change it between cases); an
 * unknown variant name is the family's to refuse with a message listing
 * its variants. */
const char *wg_forced_variant(const char *family, char *buf, size_t n);

/* A two-way switch WGML_FORCE=family=p0|p1: 0 or 1, WG_NOT_FORCED when
 * the family is not named, -1 for another value (WGML_ERR_INVALID_ARG's
 * message set for op only when report: scratch declarations stay pure). */
#define WG_NOT_FORCED (-2)
int wg_forced_path(const char *op, const char *family, const char *p0, const char *p1, bool report);

/* Op table rows: check, scratch, encode (optable.h's signatures). */
wgml_status wg_ck_matmul(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out);
uint64_t wg_sc_matmul(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
wgml_status wg_en_matmul(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                         wgml_tensor *out2);
wgml_status wg_ck_linear(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out);
uint64_t wg_sc_linear(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
wgml_status wg_en_linear(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                         wgml_tensor *out2);
wgml_status wg_ck_linear_id(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out);
uint64_t wg_sc_linear_id(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
wgml_status wg_en_linear_id(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                            wgml_tensor *out2);
wgml_status wg_ck_attention(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out);
uint64_t wg_sc_attention(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
wgml_status wg_en_attention(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                            wgml_tensor *out2);

/* The mat-vec path (matvec.c), called by wgml_linear's encode for x with
 * at most WG_MATVEC_MAX_ROWS rows (all batch dims together): w [n, k] any
 * dtype wgml_linear takes, x [..., m, k], c the beta operand (NULL when
 * beta is 0; may be out itself), same semantics as wgml_linear.  Takes
 * no scratch.  WGML_ERR_UNSUPPORTED when it has no kernel for these
 * operands (the caller then runs the GEMM). */
wgml_status wg_matvec(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *bias, const wgml_tensor *c,
                      const wgml_matmul_params *p, wgml_tensor *out);
/* x's codes after its row (graph fusion's xq tail, norm.c:
 * wg_op_params.xq_in), for a one-row product on the one-dispatch kernel
 * to read instead of quantising x; with norm (the norm split, xq_split)
 * they are the codes of an unscaled row u = h * g, the sums of squares of
 * h's 32-element blocks follow them, and the product scales its sums by
 * the norm's factor (matvec_xs.wgsl XS_NRMS): such a product must take
 * that kernel (anything else is WGML_ERR_INTERNAL: x's values are never
 * written). */
typedef struct wg_xin {
    bool codes;
    int norm;    /* 0, or WGML_RMS_NORM / WGML_L2_NORM: the norm split */
    float eps;
} wg_xin;
static inline wg_xin wg_xin_of(const wg_op_params *p)
{
    return (wg_xin){p->xq_in, p->xq_in && p->xq_split ? (int)p->norm.kind : 0, p->norm.eps};
}
/* What a product reading a norm split's codes returns where it cannot
 * (WGML_ERR_INTERNAL: graph fusion promised the one-dispatch kernel). */
wgml_status wg_xin_refused(const char *op);
/* wg_matvec where x's codes may follow its row (xi). */
wgml_status wg_matvec_xqt(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *bias, const wgml_tensor *c,
                          const wgml_matmul_params *p, wg_xin xi, wgml_tensor *out);

/* A linear whose x is made in the integer mat-vec path's first pass
 * (WG_OP_LINEAR_PRE, made by graph fusion of linear(rms_norm(...)) and
 * linear(glu(a, u)); matvec_pre.c).  x itself is then never written. */
typedef enum wg_xpre_kind { WG_XPRE_NORM = 1, WG_XPRE_GLU = 2 } wg_xpre_kind;
typedef struct wg_xpre {
    wg_xpre_kind kind;
    const wgml_tensor *a, *u; /* norm: x and its residual (or NULL); glu: gate input and up */
    const wgml_tensor *g;     /* norm: weight (or NULL) */
    wgml_tensor *so;          /* norm: a + u written here (or NULL) */
    float eps;                /* norm (RMS) */
    int glu;                  /* glu: wgml_glu_kind */
} wg_xpre;
/* out [..., n / 2] = glu(y[..., 0::2], y[..., 1::2]) for y = x . w^T (w's
 * rows gate and up interleaved), the glu of kind `glu` (wgml_glu_kind), in
 * one mat-vec dispatch (matvec_xs.wgsl, XS_GLU): WGML_ERR_UNSUPPORTED, no
 * message, where that kernel does not take it (the caller runs the linear
 * and the glu).  xi: x's codes after its row (wg_xin). */
wgml_status wg_matvec_glu(const wgml_tensor *x, const wgml_tensor *w, const wgml_matmul_params *p, int glu, wg_xin xi,
                          wgml_tensor *out);
/* wg_matvec with x made by pre (x: a tensor of x's shape, for the row
 * layout only; never read or written): WGML_ERR_UNSUPPORTED, no message,
 * where the integer path does not take these operands (the caller makes
 * x itself and calls wg_matvec). */
wgml_status wg_matvec_pre(const wgml_tensor *x, const wg_xpre *pre, const wgml_tensor *w, const wgml_tensor *bias,
                          const wgml_matmul_params *p, wgml_tensor *out);
wgml_status wg_ck_linear_glu(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out);
uint64_t wg_sc_linear_glu(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
wgml_status wg_en_linear_glu(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                             wgml_tensor *out2);
wgml_status wg_ck_linear_norm(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out);
uint64_t wg_sc_linear_norm(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
wgml_status wg_en_linear_norm(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                              wgml_tensor *out2);
wgml_status wg_ck_ffn(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out);
uint64_t wg_sc_ffn(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
wgml_status wg_en_ffn(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                      wgml_tensor *out2);
wgml_status wg_ck_linear_rope_kv(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out);
uint64_t wg_sc_linear_rope_kv(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
wgml_status wg_en_linear_rope_kv(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                                 wgml_tensor *out2);
wgml_status wg_ck_linear_pre(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out);
uint64_t wg_sc_linear_pre(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out);
wgml_status wg_en_linear_pre(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                             wgml_tensor *out2);

/* The grouped path of wgml_linear_id (moe.c): operands checked by
 * matvec.c's linear_id, whose CHECK pass on ids is already recorded. */
typedef struct wg_moe_args {
    const char *op;
    const wgml_tensor *x, *w, *ids;
    wgml_tensor *out;
    int64_t tokens, used, experts, n, k;
    uint64_t rowb, eb;    /* w's bytes per row and per expert */
    int64_t xst_u;        /* x's step along u (0 when x is [tokens, 1, k]) */
} wg_moe_args;
/* 1: the grouped path for this many (token, used) pairs and experts, 0:
 * the mat-vec path, -1: a bad WGML_FORCE linear_id=... (the message set
 * only when report).  Shape and WGML_FORCE only, so the scratch
 * declaration and the encode agree. */
int wg_moe_path(int64_t pairs, int64_t experts, bool report);
/* Scratch the grouped path takes (0 where wg_moe_path is not 1). */
uint64_t wg_moe_scratch(int64_t pairs, int64_t experts);
/* Runs it; WGML_ERR_UNSUPPORTED, with nothing recorded, for operands it
 * does not take (the caller then runs the mat-vec path). */
wgml_status wg_moe_grouped(const wg_moe_args *a);

/* Registry rows for `wgml ops` (registry.c). */
wg_op_table wg_matmul_ops(void);
wg_op_table wg_matvec_ops(void);
/* The integer mat-vec path (x quantised to 8 bits, dot4I8Packed): the
 * scratch its first pass takes for `rows` rows of k (0 where the weight
 * dtype has no integer path), and whether wg_matvec takes it on ctx for
 * these operands (the table, or WGML_FORCE). */
uint64_t wg_matvec_q8_scratch(wgml_dtype w, int64_t rows, int64_t k);
bool wg_matvec_int8(wgml_ctx *ctx, wgml_dtype w, int64_t rows, int64_t n, int64_t k);
/* Whether that integer path quantises x inside the product's own
 * workgroups (matvec_xs.wgsl: no first pass). */
bool wg_matvec_xs(wgml_ctx *ctx, wgml_dtype w, int64_t rows, int64_t n, int64_t k);
wg_op_table wg_attention_ops(void);

#endif
