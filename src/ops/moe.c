/*
 * The grouped path of wgml_linear_id (ggml's mul_mat_id) for prefill:
 * out[t, u] = w[ids[t, u]] . x[t, u or 0] with each expert's pairs run as
 * one GEMM, so an expert's weights are read once per tile of BM pairs
 * instead of once per pair (the mat-vec path, matvec.c: 512 tokens x 2
 * used experts read an expert's matrix ~128 times).  matvec.c validates
 * the operands, records the ids CHECK pass and routes here from
 * MOE_MIN_PAIRS pairs (wg_moe_path); WGML_FORCE=linear_id=matvec|grouped
 * forces either path.
 *
 * Passes (all recorded, nothing read back; kernels moe_group.wgsl and
 * gemm.wgsl's MOE):
 *   count, scan, scatter   a stable counting sort of the pairs by expert
 *                          into declared scratch (off, toff, perm, hist:
 *                          moe_group.wgsl's header); 3 dispatches
 *   gemm (MOE)             one workgroup per (tile of <= BM pairs of one
 *                          expert, BN output columns): A rows gathered
 *                          from x through perm, B = w[expert] (dense or
 *                          decoded while tiles load, as wgml_linear's
 *                          in-tile decoder), rows scattered to out.  The
 *                          grid is the worst case, ceil(pairs / BM) + min(
 *                          experts, pairs) tiles (sum_e ceil(cnt_e / BM)
 *                          <= sum_e (cnt_e / BM + 1) over the non-empty
 *                          experts); workgroups past the real tiles return.
 * A bad id (the CHECK pass sets the device error word) makes count,
 * scatter and the GEMM write nothing.
 *
 * Weights larger than one storage binding: the window binder (window.c)
 * cuts w into blocks of experts and, within an expert, of rows (n), each
 * block one GEMM dispatch over tiles of its experts only (toff[elo] ..
 * toff[ehi]); x, out and the grouping scratch are bound whole, as the
 * mat-vec path binds x and out (an operand of those that exceeds a
 * binding, or x not contiguous along k, goes to the mat-vec path).
 */
#include "gemm.h"
#include "matvec.h"

#include <string.h>

/* From this many pairs, with at least MOE_MIN_AVG pairs an expert on
 * average, the grouped GEMM; below, the mat-vec path.  The mat-vec path
 * reads one expert matrix per pair, the GEMM about one per (expert, tile
 * of BM pairs) plus 4 dispatches; at 4 pairs an expert it reads ~4x less
 * weight and a decode step (1 token, <= 8 pairs) stays on the mat-vec
 * path.  A first estimate: `wgml bench moe` on the target GPU tunes it. */
#define MOE_MIN_PAIRS 32
#define MOE_MIN_AVG 4

/* Pairs per grouping workgroup (moe_group.wgsl's chunks). */
#define CHUNK 256

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int wg_moe_path(int64_t pairs, int64_t experts, bool report)
{
    int f = wg_forced_path("wgml_linear_id", "linear_id", "matvec", "grouped", report);
    if (f != WG_NOT_FORCED)
        return f;
    return pairs >= MOE_MIN_PAIRS && pairs >= MOE_MIN_AVG * experts;
}

/* Words of the grouping scratch: off and toff (E + 1 each), perm (P),
 * hist (chunks x E). */
static uint64_t grp_words(int64_t pairs, int64_t experts)
{
    return 2 * (uint64_t)(experts + 1) + (uint64_t)pairs + (uint64_t)cdiv(pairs, CHUNK) * (uint64_t)experts;
}

uint64_t wg_moe_scratch(int64_t pairs, int64_t experts)
{
    if (pairs <= 0 || experts <= 0 || wg_moe_path(pairs, experts, false) != 1)
        return 0;
    return wg_align_up(grp_words(pairs, experts) * 4, 256);
}

/* ------------------------------------------------------------ the tile */

/* The GEMM variant: WGML_FORCE=gemm=<name> (not splitk, and not the f16
 * h variants: wgml_linear_id computes in f32), else by the average pairs
 * an expert (the tile's rows) and n.  CPU adapters never take t128
 * (lavapipe compiles its 8x8 register tile for minutes). */
static wgml_status pick_tile(wgml_ctx *ctx, int64_t pairs, int64_t experts, int64_t n, const wg_gemm_variant **v)
{
    const wg_gemm_variant *f;
    wgml_status st = wg_gemm_forced(&f);
    if (st != WGML_OK)
        return st;
    if (f && !f->splitk && !f->h16) {
        *v = f;
        return WGML_OK;
    }
    int64_t avg = pairs / experts;
    static const char *const order[] = {"t128", "t64", "t32"};
    int first = !wg_is_cpu(ctx) && avg >= 128 && n >= 128 ? 0 : avg >= 48 && n >= 64 ? 1 : 2;
    wgml_device_info info;
    memset(&info, 0, sizeof info);
    wgml_device_info_get(ctx, &info);
    for (int i = first; i < 3; i++) {
        *v = wg_gemm_variant_named(order[i]);
        /* MOE adds the tile's row offsets: 2 x BM words, and 16 bytes */
        if (wg_gemm_wg_mem(*v) + 8u * (uint32_t)(*v)->bm + 16u <= info.max_workgroup_storage &&
            (uint32_t)((*v)->bm / (*v)->tm * (*v)->bn / (*v)->tn) <= info.max_invocations_per_workgroup)
            return WGML_OK;
    }
    return WGML_OK; /* t32: every WebGPU device has its 4 KiB and 64 threads */
}

/* ------------------------------------------------------------ grouping */

/* Mirrors Params in moe_group.wgsl. */
typedef struct grp_params {
    uint32_t pairs, used, experts, bm, ids_off, ist_t, ist_u, chunks, base, pad[3];
} grp_params;

static wgml_status group_pass(wgml_ctx *ctx, const char *entry, const char *def, const grp_params *p,
                              wg_binding grp, wg_binding ids, bool ids_rw, uint32_t groups)
{
    bool scan = !strcmp(entry, "scan");
    char defs[96];
    snprintf(defs, sizeof defs, "%s;GRP_ACC=read_write;IDS_ACC=%s", def, ids_rw ? "read_write" : "read");
    /* err read-only; ids too unless it shares grp's buffer (a graph's arena) */
    wg_kernel_ref ref = {"moe_group.wgsl", entry, defs, scan ? 2 : 3, (1u << 1) | (ids_rw ? 0u : 1u << 2)};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    wg_binding b[3] = {grp, wg_errword_bind(ctx), ids};
    uint32_t g[3];
    wg_split_grid(65535, groups, g);
    return wg_dispatch(ctx, k, b, scan ? 2 : 3, p, sizeof *p, g[0], g[1], g[2]);
}

/* ------------------------------------------------------------ the GEMM */

enum { WX, WW, WGRP, WO, NW }; /* window-binder operands */

typedef struct moe_job {
    const wg_moe_args *a;
    const wg_gemm_variant *v;
    bool qb;
    uint64_t pairs;
    wg_gemm_params p; /* everything but the block's offsets */
} moe_job;

/* Whether operand t may be read in vec4s from binding b at element off
 * with these steps: the binding rounded up to whole 16 bytes where the
 * buffer has them. */
static bool vec_bind(wgml_ctx *ctx, const wgml_tensor *t, wg_binding *b, uint32_t off, int64_t s0, int64_t s1,
                     int64_t s2)
{
    if (!wg_vec4_dtype(ctx, t->dtype) || off % 4 || s0 % 4 || s1 % 4 || s2 % 4)
        return false;
    if (wg_align_up(b->size, 16) <= wg_buffer_alloc(t->st->buf) - b->offset)
        b->size = wg_align_up(b->size, 16);
    return b->size % 16 == 0;
}

static const char *mode(const wgml_tensor *t, const wgml_tensor *out, bool v4)
{
    bool rw = t->st->buf == out->st->buf;
    return v4 ? (rw ? "rw4" : "r4") : (rw ? "rw" : "r");
}

static wgml_status gemm_block(void *user, const wg_win *w, const int64_t it[4], const int64_t origin[4])
{
    moe_job *j = user;
    const wg_moe_args *a = j->a;
    wgml_ctx *ctx = a->out->ctx;
    const wg_gemm_variant *v = j->v;
    uint32_t off[NW];
    wg_binding b[5];
    b[0] = wg_win_bind(&w[WX], it, &off[WX]);
    b[1] = wg_win_bind(&w[WW], it, &off[WW]);
    b[2] = wg_win_bind(&w[WGRP], it, &off[WGRP]);
    b[3] = wg_errword_bind(ctx);
    b[4] = wg_win_bind(&w[WO], it, &off[WO]);
    bool va = vec_bind(ctx, a->x, &b[0], off[WX], a->x->strides[0], a->xst_u, 0);
    bool vb = !j->qb && vec_bind(ctx, a->w, &b[1], off[WW], a->w->strides[0], a->w->strides[1], 0);
    const wgml_tensor *out = a->out;
    bool wrw = a->w->st->buf == out->st->buf, grw = a->x->st->buf == out->st->buf;
    bool srw = w[WGRP].buf == out->st->buf;
    char defs[512];
    size_t u = wg_gemm_tile_defs(ctx, v, a->w->dtype, j->qb, defs, sizeof defs);
    if (wg_gemm_ldif(v->h16)) /* f32 tiles load every k-tile (gemm.c): f16 experts 19.1 -> 20.2 TFLOP/s */
        u += (size_t)snprintf(defs + u, sizeof defs - u, ";GEMM_LDIF");
    if (j->qb)
        u += (size_t)snprintf(defs + u, sizeof defs - u, ";QACC=%s%s", wrw ? "read_write" : "read",
                              wg_is_cpu(ctx) ? ";ROLLED" : "");
    else
        u += (size_t)snprintf(defs + u, sizeof defs - u, ";B_DT=%s;B_MODE=%s", wg_dtype(a->w->dtype)->wgsl,
                              mode(a->w, out, vb));
    u += (size_t)snprintf(defs + u, sizeof defs - u, ";A_DT=%s;A_MODE=%s;O_DT=%s;O_MODE=w;GRP_ACC=%s;A_KC;B_KC%s%s;MOE", wg_dtype(a->x->dtype)->wgsl, mode(a->x, out, va),
                          wg_dtype(out->dtype)->wgsl, srw ? "read_write" : "read", va ? ";VA" : "", vb ? ";VB" : "");
    if (u >= sizeof defs - 1)
        return wg_fail(WGML_ERR_INTERNAL, "%s: grouped GEMM defines too long", a->op);
    /* read-only bindings: x, w, grp unless they share out's buffer; err */
    unsigned ro = (grw ? 0u : 1u) | (wrw ? 0u : 2u) | (srw ? 0u : 4u) | 8u;
    wg_kernel_ref ref = {"gemm.wgsl", "gemm", defs, 5, ro};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    wg_gemm_params p = j->p;
    int64_t ne = it[1], nb = it[2];
    p.dims[1] = (uint32_t)nb;
    p.offs[0] = off[WX], p.offs[1] = off[WW];
    p.misc[0] = off[WO];
    p.gy[1] = (uint32_t)origin[1], p.gy[2] = (uint32_t)(origin[1] + ne);
    p.gz[0] = off[WGRP];
    p.grid[0] = (uint32_t)cdiv(nb, v->bn);
    p.grid[1] = (uint32_t)(cdiv((int64_t)j->pairs, v->bm) + (ne < (int64_t)j->pairs ? ne : (int64_t)j->pairs));
    uint64_t groups = (uint64_t)p.grid[0] * p.grid[1];
    uint32_t g[3];
    wg_split_grid(65535, groups, g);
    return wg_dispatch(ctx, k, b, 5, &p, sizeof p, g[0], g[1], g[2]);
}

/* ------------------------------------------------------------ driver */

wgml_status wg_moe_grouped(const wg_moe_args *a)
{
    wgml_ctx *ctx = a->out->ctx;
    const wgml_tensor *x = a->x, *w = a->w, *ids = a->ids, *out = a->out;
    int64_t P = a->tokens * a->used, E = a->experts, n = a->n, k = a->k;
    uint64_t cap = wg_window_cap(ctx), words = grp_words(P, E);
    /* The gathered rows of x are read along k (A_KC): a strided x (k step
     * > 1) goes to the mat-vec path, which reads any strides. */
    if (k == 0 || n == 0 || (k > 1 && x->strides[2] != 1) || words * 4 > cap || P > 0x7fffffff)
        return WGML_ERR_UNSUPPORTED;
    const wg_dtype_info *wd = wg_dtype(w->dtype), *xd = wg_dtype(x->dtype), *od = wg_dtype(out->dtype);
    bool qb = !wg_dtype_is_float(w->dtype);
    wg_view4 xv = wg_view4_of(x), ov = wg_view4_of(out), wv = wg_view4_of(w);
    uint64_t xt = (uint64_t)(a->tokens - 1) * (uint64_t)x->strides[0] +
                  (uint64_t)(x->shape[1] - 1) * (uint64_t)a->xst_u + (uint64_t)(k - 1);
    uint64_t ot = (uint64_t)(a->tokens - 1) * (uint64_t)out->strides[0] +
                  (uint64_t)(a->used - 1) * (uint64_t)out->strides[1];
    if ((xt + 1) * xd->block_bytes > cap || (ot + 1) * od->block_bytes > cap)
        return WGML_ERR_UNSUPPORTED; /* bound whole (the mat-vec path then says which) */
    const wg_gemm_variant *v;
    wgml_status st = pick_tile(ctx, P, E, n, &v);
    if (st != WGML_OK)
        return st;

    wgml_tensor *gs = NULL;
    if ((st = wg_scratch_tensor_raw(ctx, WGML_U32, 1, (int64_t[]){(int64_t)words}, &gs)) != WGML_OK)
        return st;
    uint64_t rem, irem;
    wg_binding gb = wg_bind_from(gs->st->buf, gs->offset, words * 4, &rem);
    uint64_t ispan = ((uint64_t)(a->tokens - 1) * (uint64_t)ids->strides[0] +
                      (uint64_t)(a->used - 1) * (uint64_t)ids->strides[1] + 1) * 4;
    wg_binding ib = wg_bind_from(ids->st->buf, ids->offset, ispan, &irem);
    grp_params gp = {(uint32_t)P, (uint32_t)a->used, (uint32_t)E, (uint32_t)v->bm, (uint32_t)(irem / 4),
                     (uint32_t)ids->strides[0], (uint32_t)ids->strides[1], (uint32_t)cdiv(P, CHUNK),
                     (uint32_t)(rem / 4), {0, 0, 0}};
    bool irw = ids->st->buf == gs->st->buf;
    if ((st = group_pass(ctx, "chunk", "COUNT", &gp, gb, ib, irw, gp.chunks)) != WGML_OK ||
        (st = group_pass(ctx, "scan", "SCAN", &gp, gb, ib, irw, 1)) != WGML_OK ||
        (st = group_pass(ctx, "chunk", "SCATTER", &gp, gb, ib, irw, gp.chunks)) != WGML_OK) {
        wgml_tensor_free(gs);
        return st;
    }

    moe_job j;
    memset(&j, 0, sizeof j);
    j.a = a, j.v = v, j.qb = qb, j.pairs = (uint64_t)P;
    wg_gemm_params *p = &j.p;
    p->dims[2] = (uint32_t)k, p->dims[3] = 1;
    p->ast[3] = 1;
    p->bst[2] = 1;
    p->ost[3] = (uint32_t)out->strides[2];
    p->misc[1] = (uint32_t)k;
    p->fp[0] = 1.0f;
    p->gx[0] = (uint32_t)x->strides[0], p->gx[1] = (uint32_t)a->xst_u;
    p->gx[2] = (uint32_t)out->strides[0], p->gx[3] = (uint32_t)out->strides[1];
    p->gy[0] = (uint32_t)a->used, p->gy[3] = (uint32_t)E;
    /* B: w[expert] [n, k], k contiguous; quantised in bytes (QB), dense
     * in elements.  z0 is the expert less elo, so bst.x steps experts. */
    wg_win ww;
    if (qb) {
        uint64_t rowb = (uint64_t)k / wd->block_elems * wd->block_bytes;
        ww = (wg_win){w->st->buf, w->offset, {0, (int64_t)a->eb, (int64_t)a->rowb, 0}, 1, rowb - 1, "w"};
        p->bst[0] = (uint32_t)a->eb, p->bst[3] = (uint32_t)a->rowb;
    } else {
        ww = (wg_win){w->st->buf, wv.offset, {0, w->strides[0], w->strides[1], 0}, wd->block_bytes,
                      (uint64_t)(k - 1), "w"};
        p->bst[0] = (uint32_t)w->strides[0], p->bst[3] = (uint32_t)w->strides[1];
    }
    wg_win ws[NW] = {
        {x->st->buf, xv.offset, {0, 0, 0, 0}, xd->block_bytes, xt, "x"},
        ww,
        {gs->st->buf, gs->offset / 4, {0, 0, 0, 0}, 4, words - 1, "grouping scratch"},
        {out->st->buf, ov.offset, {0, 0, out->strides[2], 0}, od->block_bytes, ot, "out"},
    };
    const int64_t it[4] = {1, E, n, 1};
    st = wg_win_split(ctx, ws, NW, it, 3, UINT32_MAX, a->op, gemm_block, &j);
    wgml_tensor_free(gs);
    return st;
}

/* ------------------------------------------------------------ linear_id's check and scratch (its encode: matvec.c) */

static bool desc_float_in(wgml_dtype t) { return t == WGML_F32 || t == WGML_F16; }

wgml_status wg_ck_linear_id(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    const char *op = "wgml_linear_id";
    if (nin < 3 || !in[0] || !in[1] || !in[2])
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: x, w and ids are required", op);
    const wg_desc *x = in[0], *w = in[1], *ids = in[2];
    if (!desc_float_in(x->dtype))
        return wg_fail(WGML_ERR_DTYPE, "%s: x is %s, must be f32 or f16", op, wgml_dtype_name(x->dtype));
    if (!wg_mv_type(w->dtype))
        return wg_fail(WGML_ERR_DTYPE, "%s: w is %s, not a weight dtype of wgml_linear", op, wgml_dtype_name(w->dtype));
    if (ids->dtype != WGML_I32)
        return wg_fail(WGML_ERR_DTYPE, "%s: ids is %s, must be i32", op, wgml_dtype_name(ids->dtype));
    if (!(WG_DT_FLOATS & WG_DT_BIT(p->dtype)))
        return wg_fail(WGML_ERR_DTYPE, "%s: out is %s, must be f32, f16 or bf16", op, wgml_dtype_name(p->dtype));
    char a[96], b[96], c[96];
    if (w->ndim != 3 || ids->ndim != 2 || x->ndim != 3 || x->shape[0] != ids->shape[0] ||
        (x->shape[1] != ids->shape[1] && x->shape[1] != 1) || x->shape[2] != w->shape[2])
        return wg_fail(WGML_ERR_SHAPE, "%s: x %s, w %s, ids %s: need x [tokens, used or 1, k], w [experts, n, k], "
                       "ids [tokens, used]", op, wg_desc_str(x, NULL, a, sizeof a), wg_desc_str(w, NULL, b, sizeof b),
                       wg_desc_str(ids, NULL, c, sizeof c));
    const mv_type *ty = wg_mv_type(w->dtype);
    if (ty->qk > 8 && !wg_is_sym(w->shape[2]) && w->shape[2] % ty->qk)
        return wg_fail(WGML_ERR_SHAPE, "%s: k = %lld is not a multiple of %s's %u-element blocks", op,
                       (long long)w->shape[2], wgml_dtype_name(w->dtype), ty->qk);
    *out = (wg_desc){p->dtype, 3, {ids->shape[0], ids->shape[1], w->shape[1]}};
    return WGML_OK;
}

uint64_t wg_sc_linear_id(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)p, (void)nin, (void)out;
    const wg_desc *w = in[1], *ids = in[2];
    if (w->ndim != 3 || ids->ndim != 2 || wg_is_sym(w->shape[0]) || wg_is_sym(ids->shape[0]) ||
        wg_is_sym(ids->shape[1]))
        return 0;
    /* the dims' maxima (a graph's bound holds for every binding) */
    return wg_moe_scratch(ids->shape[0] * ids->shape[1], w->shape[0]);
}
