/*
 * Row ops: families that reduce along one axis with one workgroup per row
 * (softmax.c, norm.c), their shared launcher and their CPU references.
 *
 * The launcher's iteration space is 4-D, [R0, R1, R2, L] with the reduced
 * axis last; each operand brings its own element offset and four strides
 * over that space (0 where it broadcasts), so kernels read any view in
 * place.  Kernel side: src/kernels/rows.wgsl.
 */
#ifndef WGML_ROWS_H
#define WGML_ROWS_H

#include "ops.h"

#define WG_ROW_MAX_OPS 8

typedef struct wg_row_operand {
    const wgml_tensor *t; /* NULL: an unused slot (bound to a placeholder) */
    uint64_t offset;      /* elements from the start of t's buffer */
    int64_t st[4];        /* strides over the iteration space, >= 0 */
    const char *name;     /* #tensor name: sets NAME_DT and NAME_MODE */
    bool write;
    bool vec;             /* the kernel may read/write it as vectors along the row (ROWS4OK) */
    uint64_t tail;        /* elements read past the row's last (wg_win.tail) */
} wg_row_operand;

/* Operand for t broadcast (numpy) to the 4-D shape `shape4` and reordered
 * by perm (iteration dim i is dim perm[i] of shape4).  t must broadcast:
 * the caller has checked it. */
wg_row_operand wg_row_operand_of(const wgml_tensor *t, const int64_t shape4[4], const int perm[4], const char *name,
                                 bool write);

/* Dispatches `entry` of `file` with one workgroup per row of iter.  Slots
 * 0..nops-1 are bindings 1..nops; unused slots are bound to a placeholder
 * window.  Picks the workgroup size from L (define WG), splits the rows
 * (wg_win_split) when an operand's window exceeds one storage binding,
 * and sends fp/ip in the kernel's RowParams.  No dispatch when iter is empty.
 * A kernel with a register-cached vector path says ROWS4OK in `defines`;
 * the launcher takes it (defines ROWS4 and R, the vectors per thread,
 * and gives the `vec` slots vector accessors) when L is a multiple of 4
 * up to 4 * WG * 8 and every present `vec` operand is a contiguous,
 * 16-byte aligned row of a dtype with vector accessors (wg_vec4_dtype:
 * f32 for the float row ops, or f16 with ShaderF16).
 * Rows longer than one window: a kernel that has the chunked passes
 * (PARTIAL and COMBINE, see rows_chunked in rows.c and rows.wgsl's
 * p.chunk) names in qslot the first of two slots that then hold f32
 * per-(row, chunk) partials (slots past nops are added; slots within
 * must be absent ones); qslot WG_ROWS_PIECES: the kernel reduces nothing
 * along a row, so each piece of the row that fits runs as a launch of its
 * own; qslot -1: such rows fail with WGML_ERR_LIMIT.  Q8OUT in `defines`
 * (norm.c's codes after its row) needs the vector path, rows that fit one
 * window and workgroup memory for the row: elsewhere
 * WGML_ERR_UNSUPPORTED, no message, nothing run. */
#define WG_ROWS_PIECES (-2)
wgml_status wg_rows_launch(wgml_ctx *ctx, const char *file, const char *entry, const char *defines,
                           wg_row_operand *ops, int nops, const int64_t iter[4], const float fp[4],
                           const uint32_t ip[4], int qslot);

/* Whether one row of len elements of every present operand fits one
 * binding (else wg_rows_launch runs it in chunks or pieces). */
bool wg_rows_fit(wgml_ctx *ctx, const wg_row_operand *ops, int nops, int64_t len);

/* ggml's ALiBi slope of head h among n_head heads. */
double wg_alibi_slope(double max_bias, int64_t n_head, int64_t h);

/* CPU reference of wgml_softmax on host data in logical row-major order:
 * x of shape (ndim, shape); mask of shape (mndim, mshape) broadcasting to
 * x (NULL: none); sinks one per head (NULL: none). */
void wg_softmax_ref(int ndim, const int64_t *shape, const double *x, int mndim, const int64_t *mshape,
                    const double *mask, const double *sinks, const wgml_softmax_params *p, double *out);

/* CPU reference of wgml_norm: x and (optional) residual of shape
 * (ndim, shape); weight and bias (optional) already broadcast to x's
 * shape; mean/var per channel (BATCH_NORM).  Uses p->kind, eps, groups. */
void wg_norm_ref(int ndim, const int64_t *shape, const double *x, const double *residual, const double *weight,
                 const double *bias, const double *mean, const double *var, const wgml_norm_params *p, double *out,
                 double *sum_out);

wg_op_table wg_softmax_ops(void);
wg_op_table wg_norm_ops(void);

#endif
