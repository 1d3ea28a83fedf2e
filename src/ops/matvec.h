/*
 * What matvec.c shares with matvec_pre.c (the fused first pass): the
 * kernel's parameter block and the quantised-x row layout.
 */
#ifndef WGML_MATVEC_H
#define WGML_MATVEC_H

#include "mm.h"

/* Mirrors Params in matvec.wgsl. */
typedef struct mv_params {
    uint32_t n, units, k, rowb, w_off, xs, os, bs, cs, ngroups, m, act, pad0, pad1;
    float alpha, beta;
    uint32_t eb, elo, ehi, used, ids_off, ist_t, ist_u, pairs, xst_t, xst_u, ost_t, ost_u;
    uint32_t xo[8], oo[8], bo[8], co[8];
    uint32_t chk[4];
} mv_params;
_Static_assert(sizeof(mv_params) == 256, "mv_params and matvec.wgsl's Params differ");

/* A weight dtype's layout on the mat-vec path (matvec_pick.c's table). */
typedef struct mv_type {
    wgml_dtype dt;
    const char *def;     /* QT_<type>; plus the layout group's defines */
    const char *group;
    uint32_t qk, bb;     /* elements and bytes per block (plain: units of 8) */
    uint32_t ch;         /* wide path: elements per chunk (0: the unit path only) */
    bool q8;             /* the integer path (codes(), CODES) */
} mv_type;

typedef struct mv_variant {
    const char *name;
    int rpw, wg;
    bool sg;
    int upt;   /* units (wide: chunks) a thread issues per step with one activation row (halved per doubling of rows) */
    bool wide; /* the wide path where the weight dtype has one (else the unit path, same shape) */
    bool q8;   /* the integer path where the weight dtype has one (else the wide path, same shape) */
    bool xs;   /* one activation row: x quantised by each workgroup (matvec_xs.wgsl), no first pass;
                * rpw rows a subgroup, wg / 32 subgroups' worth of rows a workgroup */
    int ks;    /* xs: the k split, subgroups a row set, each a ks-th of its chunks (0: none, as 1) */
} mv_variant;

/* An xs variant's subgroups' worth of row sets a workgroup (RSETS), and
 * its rows a workgroup. */
static inline int wg_mv_sets(const mv_variant *v) { return v->wg / 32 / (v->ks > 1 ? v->ks : 1); }
static inline int wg_mv_xs_rows(const mv_variant *v) { return v->rpw * wg_mv_sets(v); }
/* ... and the workgroup memory its k split's sums take (matvec_xs.wgsl ksum). */
static inline uint64_t wg_mv_ksum_bytes(const mv_variant *v) { return v->ks > 1 ? (uint64_t)v->wg / 32 * 16 : 0; }

const mv_type *wg_mv_type(wgml_dtype dt);          /* NULL: not on the mat-vec path */
/* The wide path's block as its kernels see it (WQK, WBB): elements and
 * bytes; a plain dtype's is one chunk. */
static inline uint32_t wg_mv_wqk(const mv_type *ty) { return ty->qk > 8 ? ty->qk : ty->ch; }
static inline uint32_t wg_mv_wbb(const mv_type *ty) { return ty->qk > 8 ? ty->bb : ty->ch * ty->bb / 8; }
const mv_variant *wg_mv_named(const char *name);   /* NULL: no such variant */
/* The variant for n x k weights of dtype ty and `rows` activation rows
 * (WGML_FORCE=matvec=<name> first) and its units per step. */
wgml_status wg_mv_pick(wgml_ctx *ctx, const char *op, int64_t n, int64_t k, const mv_type *ty, int64_t rows,
                       const mv_variant **out, int *upt);
uint32_t wg_mv_xs_wgs(void);                       /* main_xs's workgroups at most */
const char *wg_mv_probe_defs(void);                /* main_xs's defines for WGML_MV_PROBE ("": none) */
bool wg_mv_xs_fits(wgml_ctx *ctx, int64_t k, uint64_t extra); /* x's codes (and extra bytes) fit workgroup memory */

/* An epilogue a fused op gives the one-dispatch product (main_xs): its
 * defines, its storage bindings in place of bias and c and after them
 * (bindings 4 .. 3 + nb; at most WG_MAX_BUFFERS in all), their read-only
 * bits (bit 0: binding 4), and 20 parameter words, which go where the
 * bias, c and chk fields are (a product with an epilogue has none of
 * them): bo[0..1], co[0..1], chk.  linear_rope_kv.c's XS_ROPE is the one
 * user (matvec_rope.wgsl says what its words are). */
typedef struct mv_epi {
    const char *defs;    /* ";XS_ROPE;..." */
    int nb;
    wg_binding b[5];
    unsigned ro;
    uint32_t words[20];
} mv_epi;
/* wg_matvec for one activation row with epilogue e (no bias, no c, beta 0,
 * no activation, rows in pairs): WGML_ERR_UNSUPPORTED, no message, where
 * main_xs does not take the product in one window (the caller runs its
 * unfused ops).  xi as wg_matvec_glu's. */
wgml_status wg_matvec_epi(const wgml_tensor *x, const wgml_tensor *w, const wgml_matmul_params *p, const mv_epi *e,
                          wg_xin xi, wgml_tensor *out);

/* The norm tail a fused op gives the one-dispatch product (main_xs,
 * XS_NTAIL: matvec_ntail.wgsl): the last workgroup to finish writes
 * y = norm(out) (* g), out's one contiguous f32 row of n (a multiple of
 * 32), and with q8 the row's 8-bit codes right after y's n values (the xq
 * tail's layout).  With split (the norm split, XS_NSPLIT:
 * matvec_nsplit.wgsl) there is no tail: each workgroup, 32 rows a group,
 * writes its block's codes of out * g and sum of squares after y's n
 * words (wg_q8_split_words(n) of them; kind and eps are the consumer's).
 * linear_norm.c is the one user. */
typedef struct mv_ntail {
    const wgml_tensor *yt, *gt; /* y (written) and g (NULL: no weight), for the bindings' access modes */
    wg_binding y, g;            /* their bindings (g unused without gt) */
    uint32_t y0, g0;            /* their first elements there (y in 32-bit words) */
    int kind;                   /* WGML_RMS_NORM or WGML_L2_NORM */
    float eps;
    bool q8;
    bool split;
} mv_ntail;
/* wg_matvec for one activation row with a norm tail (bias and c as
 * wg_matvec's, not both; no activation): WGML_ERR_UNSUPPORTED, no message,
 * where main_xs does not take the product in one dispatch.  xi as
 * wg_matvec_glu's. */
wgml_status wg_matvec_ntail(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *bias, const wgml_tensor *c,
                            const wgml_matmul_params *p, const mv_ntail *nt, wg_xin xi, wgml_tensor *out);

/* Words a quantised row of x takes (matvec_xq.wgsl): k / 4 code words and
 * a (d, sum) pair a 32-element block, padded to 16 bytes. */
static inline uint64_t wg_q8_row_words(int64_t k) { return ((uint64_t)k / 4 + (uint64_t)k / 16 + 3) / 4 * 4; }
/* ... and with the norm split's sums of squares, one a block, after them. */
static inline uint64_t wg_q8_split_words(int64_t k) { return wg_q8_row_words(k) + (uint64_t)k / 32; }

/* y (one f32 row of k, a multiple of 32) quantised into the
 * wg_q8_row_words(k) words right after it: an xq-tail norm's codes where
 * its one dispatch does not apply (norm.c wg_norm_xq). */
wgml_status wg_xquant_tail(const wgml_tensor *y);

/* The first pass of the integer path with its x made there (pre): rows
 * rows of k quantised into a new scratch tensor *xq (p: the product's
 * parameters, k set).  WGML_ERR_UNSUPPORTED, no message, when pre's
 * operands are not laid out for it (rows not contiguous). */
wgml_status wg_xquant_pre(wgml_ctx *ctx, const char *op, const wg_xpre *pre, const mv_params *p, int rows,
                          wgml_tensor **xq);

#endif
