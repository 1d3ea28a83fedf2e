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

/* Words a quantised row of x takes (matvec_xq.wgsl): k / 4 code words and
 * a (d, sum) pair a 32-element block, padded to 16 bytes. */
static inline uint64_t wg_q8_row_words(int64_t k) { return ((uint64_t)k / 4 + (uint64_t)k / 16 + 3) / 4 * 4; }

/* The first pass of the integer path with its x made there (pre): rows
 * rows of k quantised into a new scratch tensor *xq (p: the product's
 * parameters, k set).  WGML_ERR_UNSUPPORTED, no message, when pre's
 * operands are not laid out for it (rows not contiguous). */
wgml_status wg_xquant_pre(wgml_ctx *ctx, const char *op, const wg_xpre *pre, const mv_params *p, int rows,
                          wgml_tensor **xq);

#endif
