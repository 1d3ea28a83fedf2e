/*
 * Mat-vec path of wgml_linear (decode: at most WG_MATVEC_MAX_ROWS
 * activation rows) and wgml_linear_id (mixture of experts).  Kernel:
 * matvec.wgsl, one template for every weight dtype, row count and variant.
 *
 *   wg_matvec   out[r, j] = act(alpha x[r] . w[j] + beta c[r, j] + bias[r, j])
 *               for the R <= 8 rows of x [..., m, k] (batch dims flattened:
 *               each row's first element goes to the kernel, so any strides
 *               of x, out, bias and c are read in place, no copy).
 *   linear_id   out[t, u] = w[ids[t, u]] . x[t, u or 0]: the same kernel,
 *               one workgroup row-group per (t, u) pair, the expert picked
 *               on the GPU; from wg_moe_path's pair count (prefill) the
 *               grouped GEMM of moe.c instead, one GEMM per expert.  A
 *               CHECK pass first records an id outside
 *               [0, experts) in the device error word (runtime.h); the
 *               writing pass then writes nothing, and the next sync
 *               returns WGML_ERR_INDEX naming wgml_linear_id.
 *
 * Weights larger than one storage binding (a 49k x 4096 f16 vocabulary
 * projection is 400 MB, bindings are 128 MiB on lavapipe) are cut by the
 * window binder (window.c) into blocks of weight rows (and of experts),
 * each one dispatch; x, out, bias, c and ids are bound whole per block.
 *
 * Variants (matvec.wgsl and matvec_wide.wgsl say what they do; their
 * measurements are in bench/NOTES.md):
 *   sg_r1/r2/r4, wg_r1/r2/r4   the unit path (8-element units, 32-bit loads),
 *                              subgroup or workgroup-memory reduction;
 *   sgw_*, wgw_*               the wide path (64- or 32-element chunks in
 *                              16-byte loads; f32, f16, bf16, q4_0, q8_0,
 *                              q4_K, q6_K), other dtypes fall back to units;
 *   sgq_*, wgq_*               the integer path: x quantised to 8 bits by a
 *                              first pass (XQUANT), dot4I8Packed;
 *   sgx_*                      the integer path with x quantised by each
 *                              workgroup (matvec_xs.wgsl): one dispatch;
 *   the rest (u<n>: units a step, t<n>: threads) exist to be timed.
 * The table: subgroups when the device has them; on CPU adapters the unit
 * path (lavapipe's compile time); on GPUs, one activation row of an
 * integer-path dtype takes sgx_r2 (sgq_* for q6_K vocabulary products and
 * where x's codes do not fit workgroup memory: sgq_r4t256 for rows of 128+
 * chunks, sgq_r8 for short rows of 16384+ rows), f16, bf16 and f32 the
 * unit path's sg_r2u8 (sg_r4u4 from 8192 rows), other dtypes the unit path;
 * 4 rows a workgroup from 4096 weight rows, 2 from 1024, else 1.
 * WGML_FORCE=matvec=<name> forces one.
 */
#include "matvec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ launching */

/* Bytes w's window reaches past its data: the wide path reads the 16-byte
 * pieces holding its bytes. */
#define WIDE_SLACK 15

/* Activation rows the integer path takes (the wide path's limit: x's
 * code words are 16 registers a row a chunk). */
#define Q8_MAX_ROWS 2

/* Window-binder operands, in binding order. */
enum { SW, SX, SO, SB, SC, SI, NS };

typedef struct mv_job {
    wgml_ctx *ctx;
    const char *op;
    const mv_type *ty;
    const mv_variant *var;
    int upt;                   /* the variant's units per step, or 1 (pick) */
    const wgml_tensor *t[NS];  /* w, x, out, bias, c, ids (NULL: absent) */
    int m;                     /* activation rows per workgroup */
    bool q8;                   /* the integer path: t[SX] is x quantised (xquant()) */
    bool xs;                   /* the integer path, x quantised by each workgroup (main_xs) */
    bool preq;                 /* with xs: x's codes follow its row (a norm's xq tail): t[SX]'s window
                                * is the codes, nothing quantised (XS_PREQ) */
    int glu;                   /* with xs: out = glu of row pairs, this wgml_glu_kind (XS_GLU); -1 none */
    const mv_epi *epi;         /* with xs: a fused op's epilogue (NULL: none) */
    const mv_ntail *nt;        /* with xs: a norm of the output row by the last workgroup, or the norm split's
                                * codes by every workgroup (NULL: none) */
    wg_xin xi;                 /* with preq: x's codes' kind (norm: the norm split's, XS_NRMS) */
    uint64_t row[4][8];        /* x, out, bias, c: rows' first elements, less the window's offset */
    mv_params p;               /* everything but the window's offsets */
} mv_job;

static bool shares(const wgml_tensor *a, const wgml_tensor *b) { return a && b && a->st->buf == b->st->buf; }

/* Whether the device's subgroups hold whole 8-lane blocks of x's codes
 * (q8_lanes.wgsl: the one-dispatch product's quantising, the norm tail). */
static bool sg8(wgml_ctx *ctx)
{
    wgml_device_info in;
    return wgml_device_info_get(ctx, &in) == WGML_OK && in.subgroup_size >= 8 && in.subgroup_size % 8 == 0;
}

/* Whether t shares a buffer the dispatch writes (out, or a norm tail's y):
 * such an operand is bound read_write (WebGPU forbids mixing the two). */
static bool wr(const mv_job *j, const wgml_tensor *t)
{
    return shares(t, j->t[SO]) || (j->nt && shares(t, j->nt->yt));
}

static const char *dt_name(const wgml_tensor *t) { return wg_dtype(t->dtype)->wgsl; }

static wgml_status block(void *user, const wg_win *w, const int64_t it[4], const int64_t origin[4])
{
    mv_job *j = user;
    const wgml_tensor *out = j->t[SO];
    mv_params p = j->p;
    wg_binding b[WG_MAX_BUFFERS];
    uint32_t off[NS] = {0};
    for (int k = 0; k < NS; k++)
        if (w[k].buf)
            b[k < SI ? k : 3] = wg_win_bind(&w[k], it, &off[k]);
    wg_binding dummy = wg_errword_bind(j->ctx); /* absent bias / c: read-only, unused */
    if (!j->t[SB] && !j->t[SI])
        b[3] = dummy;
    if (!j->t[SC] || j->t[SI])
        b[4] = dummy;
    p.n = (uint32_t)it[2];
    p.w_off = off[SW];
    p.elo = (uint32_t)origin[1];
    p.ehi = (uint32_t)(origin[1] + it[1]);
    p.ids_off = off[SI];
    bool xv4 = p.xs == 1 && p.k % 4 == 0 && wg_vec4_dtype(j->ctx, j->t[SX]->dtype);
    for (int r = 0; r < 8; r++) { /* padding rows read x row 0 */
        p.xo[r] = off[SX] + (uint32_t)j->row[0][r < j->m ? r : 0];
        p.oo[r] = off[SO] + (uint32_t)j->row[1][r];
        p.bo[r] = off[SB] + (uint32_t)j->row[2][r];
        p.co[r] = off[SC] + (uint32_t)j->row[3][r];
        xv4 = xv4 && p.xo[r] % 4 == 0;
    }
    bool align4 = j->ty->bb % 4 == 0 && p.rowb % 4 == 0 && p.w_off % 4 == 0 && p.eb % 4 == 0;
    /* Rows padded to 1, 2, 4 or 8: four kernels per weight layout, not eight.
     * The wide path takes 1 or 2 (x is 16 vec4 registers a row a chunk);
     * blocks and rows at even bytes (f16 fields in one
     * word), and w's binding covering the 16-byte pieces that hold its
     * window (win()'s tail asks 15 bytes more; a binding cut short at its
     * buffer's end falls back).  ALIGN16: every chunk on 16 bytes. */
    int mk = j->m <= 1 ? 1 : j->m <= 2 ? 2 : j->m <= 4 ? 4 : 8;
    bool covered = b[SW].size / 16 * 16 >= (off[SW] + wg_win_bytes(&w[SW], it) - WIDE_SLACK + 15) / 16 * 16;
    bool wide = j->var->wide && j->ty->ch && mk <= 2 && p.rowb % 2 == 0 && p.w_off % 2 == 0 && p.eb % 2 == 0 &&
                (covered || j->q8 || j->xs);
    uint32_t wqk = wg_mv_wqk(j->ty), wbb = wg_mv_wbb(j->ty);
    bool align16 = wbb % 16 == 0 && p.rowb % 16 == 0 && p.w_off % 16 == 0 && p.eb % 16 == 0;
    const char *xm = wr(j, j->t[SX]) ? "rw" : "r";
    char defs[512];
    /* x takes 8 registers a row a unit: fewer units per step for more rows */
    int upt = j->upt / mk > 1 ? j->upt / mk : 1;
    int n = snprintf(defs, sizeof defs, "M=%d;RPW=%d;WG=%d;UPT=%d;QK=%u;BB=%u;%s;%s;X_DT=%s;X_MODE=%s%s;O_DT=%s;"
                     "O_MODE=w;W_ACC=%s%s%s%s", mk, j->var->rpw, j->var->wg, upt, j->ty->qk, j->ty->bb, j->ty->def,
                     j->ty->group,
                     dt_name(j->t[SX]), xm, xv4 ? "4" : "", dt_name(out),
                     wr(j, j->t[SW]) ? "read_write" : "read", j->var->sg ? ";SG" : "",
                     xv4 ? ";XV4" : "", align4 ? ";ALIGN4" : "");
    if (wide)
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";WIDE;CH=%u;WQK=%u;WBB=%u;ACCW=%s%s%s", j->ty->ch, wqk,
                      wbb, j->q8 || j->xs ? "accq;Q8X" : "accw", align16 ? ";ALIGN16" : "", covered ? "" : ";PIECE32");
    if (j->xs) {
        n += snprintf(defs + n, sizeof defs - (size_t)n, "%s", wg_mv_probe_defs());
        /* x's codes a vec4 a lane where subgroups hold whole 8-lane blocks
         * (q8_lanes.wgsl; the measured size: WebGPU on Vulkan runs every
         * compute pipeline at it), else a block a thread (q8_block) */
        const char *le = getenv("WGML_MV_XS_LANES"); /* "0": a block a thread anyway (tests) */
        bool lanes = sg8(j->ctx) && !(le && !strcmp(le, "0"));
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";XS;XSW=%llu;RSETS=%d%s%s",
                      (unsigned long long)wg_q8_row_words(p.k), wg_mv_sets(j->var), j->glu >= 0 ? ";XS_GLU" : "",
                      lanes ? ";XS_LANES" : "");
        if (j->var->ks > 1)
            n += snprintf(defs + n, sizeof defs - (size_t)n, ";KS=%d", j->var->ks);
    }
    if (j->preq)
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";XS_PREQ;XQ_ACC=%s%s",
                      wr(j, j->t[SX]) ? "read_write" : "read", j->xi.norm ? ";XS_NRMS" : "");
    if (j->preq && j->xi.norm) { /* the norm's eps and kind (matvec_xs.wgsl XS_NRMS) */
        memcpy(&p.xst_t, &j->xi.eps, 4);
        p.xst_u = j->xi.norm == WGML_RMS_NORM ? 1u : 2u;
    }
    if (j->glu >= 0)
        p.pad1 = (uint32_t)j->glu;
    int nb = 5;
    if (j->epi) { /* its bindings replace bias and c; its words their fields */
        n += snprintf(defs + n, sizeof defs - (size_t)n, "%s", j->epi->defs);
        nb = 3 + j->epi->nb;
        for (int i = 0; i < j->epi->nb; i++)
            b[3 + i] = j->epi->b[i];
        memcpy(p.bo, j->epi->words, 8 * 4);
        memcpy(p.co, j->epi->words + 8, 8 * 4);
        memcpy(p.chk, j->epi->words + 16, 4 * 4);
    }
    /* the norm tail: out read back through the bias's binding (4) or, with
     * a bias, c's (5), then y, g and the tickets (matvec_ntail.wgsl) */
    int nth = j->t[SB] ? SC : SB;
    if (j->nt && j->nt->split) { /* the norm split: y and g after c (matvec_nsplit.wgsl) */
        const mv_ntail *t = j->nt;
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";XS_NSPLIT;NSN=%u;NSQW=%llu;NSG_ACC=%s%s", p.n,
                      (unsigned long long)wg_q8_row_words(p.n), wr(j, t->gt) ? "read_write" : "read",
                      t->gt ? ";NS_G" : "");
        nb = 7;
        b[5] = t->y;
        b[6] = t->gt ? t->g : dummy;
        p.chk[0] = t->y0;
        p.chk[1] = t->g0;
    } else if (j->nt) {
        const mv_ntail *t = j->nt;
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";XS_NTAIL;NTN=%u;NTH=%d;NTG_ACC=%s%s%s", p.n, nth + 1,
                      wr(j, t->gt) ? "read_write" : "read", t->q8 ? ";NT_Q8" : "", t->gt ? ";NT_G" : "");
        nb = 8;
        b[nth] = b[SO];
        b[5] = t->y;
        b[6] = t->gt ? t->g : dummy;
        b[7] = wg_tickets_bind(j->ctx);
        p.chk[0] = t->y0;
        p.chk[1] = t->g0;
        memcpy(&p.chk[2], &t->eps, 4);
        p.chk[3] = (uint32_t)t->kind;
    }
    if (j->q8)
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";XQ_ACC=%s", wr(j, j->t[SX]) ? "read_write" : "read");
    unsigned ro = 1u << 4;
    ro |= wr(j, j->t[SW]) ? 0u : 1u << 0;
    ro |= wr(j, j->t[SX]) ? 0u : 1u << 1;
    if (j->t[SB])
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";BIAS;B_DT=%s;B_MODE=%s", dt_name(j->t[SB]),
                      wr(j, j->t[SB]) ? "rw" : "r");
    if (j->t[SC])
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";BETA;C_DT=%s;C_MODE=%s", dt_name(j->t[SC]),
                      wr(j, j->t[SC]) ? "rw" : "r");
    if (j->t[SI])
        n += snprintf(defs + n, sizeof defs - (size_t)n, ";IDS;IDS_ACC=%s", wr(j, j->t[SI]) ? "read_write" : "read");
    const wgml_tensor *s3 = j->t[SI] ? j->t[SI] : j->t[SB];
    ro |= wr(j, s3) ? 0u : 1u << 3;
    if (wr(j, j->t[SC]) && !j->t[SI])
        ro &= ~(1u << 4);
    if (j->epi)
        ro = (ro & 7u) | j->epi->ro << 3;
    if (j->nt && j->nt->split) /* y is written; g maybe not */
        ro = (ro & 0x1fu) | (wr(j, j->nt->gt) ? 0u : 1u << 6);
    else if (j->nt) /* h's atomic view, y and the tickets are written; g maybe not */
        ro = (ro & ~(1u << nth)) | (wr(j, j->nt->gt) ? 0u : 1u << 6);
    if (n >= (int)sizeof defs || ((j->q8 || j->xs) && !wide))
        return wg_fail(WGML_ERR_INTERNAL, "%s: kernel defines too long, or the integer path without its loads", j->op);
    wg_kernel_ref ref = {"matvec.wgsl", j->xs ? "main_xs" : "main", defs, nb, ro};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(j->ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    int rows_wg = j->xs ? wg_mv_xs_rows(j->var) : j->var->rpw;
    p.ngroups = (uint32_t)((it[2] + rows_wg - 1) / rows_wg);
    uint64_t groups = (uint64_t)p.ngroups * (p.pairs ? p.pairs : 1);
    if (j->xs) {
        /* main_xs: at most wg_mv_xs_wgs() workgroups, each walking several row
         * groups with x quantised once (p.pad0: how many were dispatched) */
        uint32_t cap = wg_mv_xs_wgs() * 256 / (uint32_t)j->var->wg; /* as many threads */
        cap = cap ? cap : 1;
        groups = p.ngroups < cap ? p.ngroups : cap;
        p.pad0 = (uint32_t)groups;
    }
    uint32_t g[3];
    wg_split_grid(65535, groups, g);
    return wg_dispatch(j->ctx, k, b, nb, &p, sizeof p, g[0], g[1], g[2]);
}

/* ------------------------------------------------------------ the integer path */

static bool q8_ok(const mv_type *ty, int64_t rows, int64_t k, uint64_t rowb, uint64_t w_offset)
{
    return ty && ty->q8 && rows <= Q8_MAX_ROWS && k > 0 && k % 32 == 0 && rowb % 2 == 0 && w_offset % 2 == 0;
}

/* Whether main_xs (x quantised by each workgroup) takes the product on
 * variant var: the integer path's operands, one row, x's codes in
 * workgroup memory. */
static bool xs_takes(wgml_ctx *ctx, const mv_type *ty, const mv_variant *var, int64_t rows, int64_t k, uint64_t rowb,
                     uint64_t w_offset)
{
    return var->xs && rows == 1 && q8_ok(ty, rows, k, rowb, w_offset) && wg_mv_xs_fits(ctx, k, wg_mv_ksum_bytes(var));
}

/* The XQUANT pass over p->m rows of p->k (p's xo and oo set): b[0] the
 * codes, b[1] x of wgsl type xdt; one: both in one buffer (bound rw). */
static wgml_status xquant_run(wgml_ctx *ctx, const wg_binding b[2], const mv_params *p, const char *xdt, bool one,
                              bool v4)
{
    char defs[160];
    snprintf(defs, sizeof defs, "XQUANT;M=1;RPW=1;WG=64;UPT=1;QK=32;BB=34;X_DT=%s;X_MODE=%s%s%s", xdt,
             one ? "rw" : "r", v4 ? "4" : "", v4 ? ";XV4" : "");
    wg_kernel_ref ref = {"matvec.wgsl", "xquant", defs, 2, one ? 0u : 1u << 1};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    uint32_t g[3];
    wg_split_grid(65535, ((uint64_t)p->k / 32 * (uint64_t)p->m + 63) / 64, g);
    return wg_dispatch(ctx, k, b, 2, p, sizeof *p, g[0], g[1], g[2]);
}

/* The first pass: x's rows (j->row[0], less xmin; xext elements from xmin
 * reach the last one read) quantised into scratch *xq. */
static wgml_status xquant(mv_job *j, const wgml_tensor *x, uint64_t xmin, uint64_t xext, wgml_tensor **xq)
{
    wgml_ctx *ctx = j->ctx;
    uint64_t rw = wg_q8_row_words(j->p.k), esz = wg_dtype(x->dtype)->block_bytes, xrem, qrem;
    wgml_status st = wg_scratch_tensor_raw(ctx, WGML_U32, 1, (int64_t[]){(int64_t)(rw * (uint64_t)j->m)}, xq);
    if (st != WGML_OK)
        return st;
    wg_binding b[2] = {wg_bind_from((*xq)->st->buf, (*xq)->offset, rw * (uint64_t)j->m * 4, &qrem),
                       wg_bind_from(x->st->buf, xmin * esz, (xext + 1) * esz, &xrem)};
    if (b[1].size < xrem + (xext + 1) * esz)
        return wg_fail_window(ctx, (xext + 1) * esz, "%s: the rows of x", j->op);
    mv_params p = j->p;
    bool v4 = p.xs == 1 && p.k % 4 == 0 && wg_vec4_dtype(ctx, x->dtype);
    for (int r = 0; r < 8; r++) {
        p.xo[r] = (uint32_t)(xrem / esz + j->row[0][r < j->m ? r : 0]);
        p.oo[r] = (uint32_t)(qrem / 4 + (uint64_t)(r < j->m ? r : 0) * rw);
        v4 = v4 && p.xo[r] % 4 == 0;
    }
    /* a graph's arena may hold x and the scratch in one buffer: one
     * buffer is bound writable or not at all in a dispatch */
    return xquant_run(ctx, b, &p, dt_name(x), x->st->buf == (*xq)->st->buf, v4);
}

wgml_status wg_xquant_tail(const wgml_tensor *y)
{
    int64_t k = y->ndim ? y->shape[y->ndim - 1] : 0;
    uint64_t rw = wg_q8_row_words(k), rem;
    wg_view4 v = wg_view4_of(y);
    if (y->dtype != WGML_F32 || k <= 0 || k % 32 || wgml_tensor_nelem(y) != k || v.strides[3] != 1)
        return wg_fail(WGML_ERR_INTERNAL, "x's codes: one f32 row of a multiple of 32 elements");
    /* the row and its codes, one binding (read and written: bound rw) */
    wg_binding b = wg_bind_from(y->st->buf, v.offset * 4, ((uint64_t)k + rw) * 4, &rem);
    if (b.size < rem + ((uint64_t)k + rw) * 4)
        return wg_fail_window(y->ctx, ((uint64_t)k + rw) * 4, "x's codes");
    mv_params p;
    memset(&p, 0, sizeof p);
    p.k = (uint32_t)k;
    p.m = 1;
    p.xs = 1;
    for (int r = 0; r < 8; r++) {
        p.xo[r] = (uint32_t)(rem / 4);
        p.oo[r] = (uint32_t)(rem / 4 + (uint64_t)k);
    }
    wg_binding bb[2] = {b, b};
    return xquant_run(y->ctx, bb, &p, "f32", true, p.xo[0] % 4 == 0);
}

uint64_t wg_matvec_q8_scratch(wgml_dtype w, int64_t rows, int64_t k)
{
    const mv_type *ty = wg_mv_type(w);
    if (!ty || !ty->q8 || rows > Q8_MAX_ROWS || k <= 0 || k % 32)
        return 0;
    return wg_align_up(wg_q8_row_words(k) * 4 * (uint64_t)(rows < 1 ? 1 : rows), 256);
}

bool wg_matvec_int8(wgml_ctx *ctx, wgml_dtype w, int64_t rows, int64_t n, int64_t k)
{
    const mv_type *ty = wg_mv_type(w);
    const mv_variant *var;
    int upt;
    return ty && q8_ok(ty, rows, k, 0, 0) && wg_mv_pick(ctx, "wg_matvec_int8", n, k, ty, rows, &var, &upt) == WGML_OK &&
           var->q8;
}

bool wg_matvec_xs(wgml_ctx *ctx, wgml_dtype w, int64_t rows, int64_t n, int64_t k)
{
    const mv_type *ty = wg_mv_type(w);
    const mv_variant *var;
    int upt;
    return ty && q8_ok(ty, rows, k, 0, 0) && wg_mv_pick(ctx, "wg_matvec_xs", n, k, ty, rows, &var, &upt) == WGML_OK &&
           xs_takes(ctx, ty, var, rows, k, 0, 0);
}

/* Window operand of a tensor at element offset `first` (esz-byte
 * elements), stepping st2 per weight row (dim 2) and st1 per expert
 * (dim 1), reading `tail` elements past its first. */
static wg_win win(const wgml_tensor *t, uint64_t first, int64_t st1, int64_t st2, uint64_t tail, uint64_t esz,
                  const char *name)
{
    wg_win w = {t ? t->st->buf : NULL, first, {0, st1, st2, 0}, esz, tail, name};
    return w;
}

/* Rows r of a tensor viewed as v (4-D, rows = dims 0..2 flattened):
 * first elements into rows[], returns the smallest; *span: the largest
 * less the smallest. */
static uint64_t row_starts(const wg_view4 *v, int nrows, uint64_t rows[8], uint64_t *span)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int r = 0; r < nrows; r++) {
        int64_t i2 = r % v->shape[2], i1 = r / v->shape[2] % v->shape[1], i0 = r / v->shape[2] / v->shape[1];
        rows[r] = v->offset + (uint64_t)(i0 * v->strides[0] + i1 * v->strides[1] + i2 * v->strides[2]);
        lo = rows[r] < lo ? rows[r] : lo;
        hi = rows[r] > hi ? rows[r] : hi;
    }
    for (int r = 0; r < 8; r++)
        rows[r] = r < nrows ? rows[r] - lo : 0;
    *span = hi - lo;
    return lo;
}

static bool fits32(int64_t v) { return v >= 0 && v <= (int64_t)UINT32_MAX; }

/* The weight facts shared by both ops: w's last two dims [n, k]. */
static wgml_status weight_rows(const char *op, const wgml_tensor *w, const mv_type **ty, uint64_t *rowb)
{
    *ty = wg_mv_type(w->dtype);
    if (!*ty)
        return wg_fail(WGML_ERR_DTYPE, "%s: w is %s; the mat-vec path takes f32, f16, bf16, q4_0, q4_1, q5_0, "
                       "q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl and mxfp4", op, wgml_dtype_name(w->dtype));
    const wg_dtype_info *d = wg_dtype(w->dtype);
    int nd = w->ndim;
    if (w->shape[nd - 1] > 1 && w->strides[nd - 1] != 1)
        return wg_fail(WGML_ERR_UNSUPPORTED, "%s: w must be contiguous along k (blocks along k)", op);
    *rowb = (uint64_t)w->strides[nd - 2] / d->block_elems * d->block_bytes;
    if (w->shape[nd - 1] % (*ty)->qk && (*ty)->qk > 8)
        return wg_fail(WGML_ERR_SHAPE, "%s: k = %lld is not a multiple of %s's %u-element blocks", op,
                       (long long)w->shape[nd - 1], d->name, (*ty)->qk);
    return WGML_OK;
}

static wgml_status need(const char *op, const char *what, const wgml_tensor *t, uint32_t dts, const char *list)
{
    if (!(dts & WG_DT_BIT(t->dtype)))
        return wg_fail(WGML_ERR_DTYPE, "%s: %s is %s, must be %s", op, what, wgml_dtype_name(t->dtype), list);
    return WGML_OK;
}

#define XDTS (WG_DT_BIT(WGML_F32) | WG_DT_BIT(WGML_F16))

/* ------------------------------------------------------------ mat-vec */

/* glu >= 0: out [..., n / 2] = glu of w's row pairs (XS_GLU), or
 * WGML_ERR_UNSUPPORTED with no message where main_xs does not take the
 * product in one dispatch (the caller runs the linear, then the glu).
 * xi: x's 8-bit codes follow its row (graph fusion's xq tail); main_xs
 * with one row reads them (XS_PREQ), every other path reads x itself, but
 * for the norm split's codes (xi.norm), which only main_xs can read. */
static wgml_status matvec_run(const wgml_tensor *x, const wg_xpre *pre, const wgml_tensor *w, const wgml_tensor *bias,
                              const wgml_tensor *c, const wgml_matmul_params *pp, int glu, const mv_epi *epi,
                              const mv_ntail *nt, wg_xin xi, wgml_tensor *out)
{
    const char *op = "wgml_linear";
    wgml_matmul_params prm = pp ? *pp : (wgml_matmul_params){1.0f, 0.0f, WGML_ACT_NONE, WGML_PREC_F32};
    if (prm.beta == 0.0f)
        c = NULL; /* beta 0: c is never read (NaN there must not leak) */
    wgml_status st = wg_check_tensor(op, "x", x);
    if (st == WGML_OK)
        st = wg_check_tensor(op, "w", w);
    if (st == WGML_OK)
        st = wg_check_tensor(op, "out", out);
    if (st != WGML_OK)
        return st;
    if (!wg_same_ctx(x, w) || !wg_same_ctx(x, out) || !wg_same_ctx(x, bias) || !wg_same_ctx(x, c))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", op);
    if ((unsigned)prm.act > WGML_ACT_SILU)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: unknown activation %d", op, (int)prm.act);
    if ((st = need(op, "x", x, XDTS, "f32 or f16")) != WGML_OK || (st = need(op, "out", out, WG_DT_FLOATS, "f32, "
        "f16 or bf16")) != WGML_OK || (bias && (st = need(op, "bias", bias, WG_DT_FLOATS, "a float")) != WGML_OK) ||
        (c && (st = need(op, "c", c, WG_DT_FLOATS, "a float")) != WGML_OK))
        return st;
    char a[96], bb[96];
    if (w->ndim != 2 || x->ndim < 1 || x->ndim > 4 || x->shape[x->ndim - 1] != w->shape[1])
        return wg_fail(WGML_ERR_SHAPE, "%s: x %s and w %s: need x [..., m, k] and w [n, k]", op,
                       wg_shape_str(x, a, sizeof a), wg_shape_str(w, bb, sizeof bb));
    int64_t oshape[4];
    for (int i = 0; i < x->ndim; i++)
        oshape[i] = x->shape[i];
    oshape[x->ndim - 1] = glu >= 0 ? w->shape[0] / 2 : w->shape[0];
    if ((st = wg_check_out(op, out, -1, x->ndim, oshape)) != WGML_OK)
        return st;
    int64_t rows = wgml_tensor_nelem(x) / (x->shape[x->ndim - 1] ? x->shape[x->ndim - 1] : 1);
    if (x->shape[x->ndim - 1] == 0)
        rows = wgml_tensor_nelem(out) / (w->shape[0] ? w->shape[0] : 1);
    if (rows > WG_MATVEC_MAX_ROWS)
        return wg_fail(WGML_ERR_UNSUPPORTED, "%s: %lld activation rows, the mat-vec path takes at most %d", op,
                       (long long)rows, WG_MATVEC_MAX_ROWS);
    const mv_type *ty;
    uint64_t rowb;
    if ((st = weight_rows(op, w, &ty, &rowb)) != WGML_OK)
        return st;
    int64_t o4[4];
    wg_shape4(out, o4);
    wg_view4 xv = wg_view4_of(x), ov = wg_view4_of(out), bv, cv;
    memset(&bv, 0, sizeof bv);
    memset(&cv, 0, sizeof cv);
    if (bias && !wg_view4_bcast(bias, o4, &bv))
        return wg_fail(WGML_ERR_SHAPE, "%s: bias %s does not broadcast to out %s", op, wg_shape_str(bias, a, sizeof a),
                       wg_shape_str(out, bb, sizeof bb));
    if (c && !wg_view4_bcast(c, o4, &cv))
        return wg_fail(WGML_ERR_SHAPE, "%s: c %s does not broadcast to out %s", op, wg_shape_str(c, a, sizeof a),
                       wg_shape_str(out, bb, sizeof bb));
    if ((st = wg_check_out_writable(op, "out", out)) != WGML_OK ||
        (st = wg_check_writes(op, "out", out, false, "x", x, "w", w, "bias", bias, WG_END)) != WGML_OK ||
        (st = wg_check_writes(op, "out", out, true, "c", c, WG_END)) != WGML_OK)
        return st;
    int64_t n = w->shape[0], k = w->shape[1];
    if (!fits32(k) || !fits32(n) || !fits32(xv.strides[3]) || !fits32(ov.strides[3]) || !fits32(bv.strides[3]) ||
        !fits32(cv.strides[3]) || !fits32((int64_t)rowb))
        return wg_fail(WGML_ERR_LIMIT, "%s: a size or stride beyond 32 bits", op);
    if (rows == 0 || n == 0)
        return wg_check(x->ctx);
    const mv_variant *var;
    int upt = 1;
    if ((st = wg_mv_pick(x->ctx, op, n, k, ty, rows, &var, &upt)) != WGML_OK)
        return st;
    /* the norm split's blocks: 32 rows a workgroup (the o product's
     * sgx_r2 has 16; 512 threads cost the 8B decode <2%: NOTES), or the
     * variant WGML_FORCE=nsplit=<name> names (timing) */
    if (nt && nt->split) {
        char fb[32];
        const char *f = wg_forced_variant("nsplit", fb, sizeof fb);
        const mv_variant *fv = f ? wg_mv_named(f) : NULL;
        if (f && (!fv || !fv->xs || wg_mv_xs_rows(fv) != 32))
            return wg_fail(WGML_ERR_INVALID_ARG, "%s: WGML_FORCE nsplit=%s is not a one-dispatch variant of 32 rows "
                           "a workgroup (sgx_r2t512, sgx_r4, sgx_r1t1024, sgx_r2t1024k2)", op, f);
        var = fv ? fv : wg_mv_xs_rows(var) == 32 ? var : wg_mv_named("sgx_r2t512");
    }
    bool xs = !pre && xs_takes(x->ctx, ty, var, rows, k, rowb, w->offset);
    if (xi.norm && rows == 1 && (!xs || !xi.codes || x->dtype != WGML_F32))
        return wg_xin_refused(op);
    if ((glu >= 0 || epi) && (!xs || n % 2 || bias || c || prm.act != WGML_ACT_NONE || var->rpw != 2))
        return WGML_ERR_UNSUPPORTED;
    /* the norm tail (or split): one contiguous f32 row of whole 32-element blocks */
    if (nt && (!xs || glu >= 0 || epi || (bias && c) || prm.act != WGML_ACT_NONE || n % 32 || out->dtype != WGML_F32 ||
               ov.strides[3] != 1))
        return WGML_ERR_UNSUPPORTED;

    mv_job j = {x->ctx, op, ty, var, upt, {w, x, out, bias, c, NULL}, (int)rows, false, false, false, -1, NULL,
                NULL, {false, 0, 0.0f}, {{0}}, {0}};
    uint64_t xspan, ospan, bspan = 0, cspan = 0, bmin = 0, cmin = 0;
    uint64_t xmin = row_starts(&xv, (int)rows, j.row[0], &xspan);
    uint64_t omin = row_starts(&ov, (int)rows, j.row[1], &ospan);
    if (bias)
        bmin = row_starts(&bv, (int)rows, j.row[2], &bspan);
    if (c)
        cmin = row_starts(&cv, (int)rows, j.row[3], &cspan);
    mv_params *p = &j.p;
    p->units = (uint32_t)((k + 7) / 8);
    p->k = (uint32_t)k;
    p->rowb = (uint32_t)rowb;
    p->xs = (uint32_t)xv.strides[3];
    p->os = (uint32_t)ov.strides[3];
    p->bs = (uint32_t)bv.strides[3];
    p->cs = (uint32_t)cv.strides[3];
    p->alpha = prm.alpha;
    p->beta = prm.beta;
    p->m = (uint32_t)rows;
    p->act = (uint32_t)prm.act;
    uint64_t kx = k ? (uint64_t)(k - 1) * (uint64_t)xv.strides[3] : 0;
    uint64_t wbytes = (uint64_t)k / ty->qk * ty->bb + (ty->qk == 8 ? (uint64_t)(k % 8) * (ty->bb / 8) : 0);
    wg_win xw = win(x, xmin, 0, 0, xspan + kx, wg_dtype(x->dtype)->block_bytes, "x");
    wgml_tensor *xq = NULL;
    bool q8 = var->q8 && q8_ok(ty, rows, k, rowb, w->offset);
    if (pre && !q8)
        return WGML_ERR_UNSUPPORTED; /* the caller makes x and calls wg_matvec */
    if (xs) {
        j.xs = true; /* x stays as it is: each workgroup quantises it */
        q8 = false;
    }
    if (xs && xi.codes && x->dtype == WGML_F32) {
        /* ... or its codes, right after its one row (an xq-tail norm's:
         * norm.c), are bound in its place; the norm split's sums of
         * squares follow them */
        j.preq = true;
        j.xi = xi;
        j.row[0][0] = 0;
        xw = win(x, xmin + (uint64_t)k, 0, 0, (xi.norm ? wg_q8_split_words(k) : wg_q8_row_words(k)) - 1, 4, "x");
    }
    if (nt) { /* the tail's reduction (the split's block: 128 bytes) beside x's codes in workgroup memory */
        wgml_device_info in;
        uint64_t wgm = (j.preq ? 0 : wg_q8_row_words(k) * 4) + (nt->split ? 128 : (uint64_t)var->wg * 4 + 64) +
                       wg_mv_ksum_bytes(var);
        /* the tail's codes take a vec4 a lane, 8 lanes a block (q8_lanes.wgsl) */
        if (wgml_device_info_get(x->ctx, &in) != WGML_OK || wgm > in.max_workgroup_storage ||
            (!nt->split && !sg8(x->ctx)))
            return WGML_ERR_UNSUPPORTED;
    }
    if (q8) {
        /* x quantised once (or made and quantised: pre); the product reads
         * its codes in place of x */
        st = pre ? wg_xquant_pre(x->ctx, op, pre, &j.p, (int)rows, &xq) : xquant(&j, x, xmin, xspan + kx, &xq);
        if (st != WGML_OK) {
            wgml_tensor_free(xq);
            return st;
        }
        j.q8 = true;
        j.t[SX] = xq;
        for (int r = 0; r < 8; r++)
            j.row[0][r] = (uint64_t)(r < rows ? r : 0) * wg_q8_row_words(k);
        xw = win(xq, xq->offset / 4, 0, 0, wg_q8_row_words(k) * (uint64_t)rows - 1, 4, "x");
    }
    wg_win ws[NS] = {
        win(w, w->offset, 0, (int64_t)rowb, wbytes ? wbytes - 1 + WIDE_SLACK : 0, 1, "w"),
        xw,
        win(out, omin, 0, ov.strides[3], ospan, wg_dtype(out->dtype)->block_bytes, "out"),
        win(bias, bmin, 0, bv.strides[3], bspan, bias ? wg_dtype(bias->dtype)->block_bytes : 1, "bias"),
        win(c, cmin, 0, cv.strides[3], cspan, c ? wg_dtype(c->dtype)->block_bytes : 1, "c"),
        win(NULL, 0, 0, 0, 0, 1, "ids"),
    };
    const int64_t it[4] = {1, 1, n, 1};
    if (glu >= 0) { /* one window: a cut could part a gate row from its up row */
        ws[SO] = win(out, omin, 0, 0, (uint64_t)(n / 2 - 1) * (uint64_t)ov.strides[3] + ospan,
                     wg_dtype(out->dtype)->block_bytes, "out");
        if (!wg_win_fits(x->ctx, ws, NS, it, UINT32_MAX))
            return WGML_ERR_UNSUPPORTED;
        j.glu = glu;
    }
    if (epi || nt) { /* one window: its bindings are whole tensors (the tail: one dispatch) */
        if (!wg_win_fits(x->ctx, ws, NS, it, UINT32_MAX))
            return WGML_ERR_UNSUPPORTED;
        j.epi = epi;
        j.nt = nt;
    }
    st = wg_win_split(x->ctx, ws, NS, it, 3, UINT32_MAX, op, block, &j);
    wgml_tensor_free(xq);
    return st;
}


wgml_status wg_matvec(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *bias, const wgml_tensor *c,
                      const wgml_matmul_params *p, wgml_tensor *out)
{
    return matvec_run(x, NULL, w, bias, c, p, -1, NULL, NULL, (wg_xin){false, 0, 0.0f}, out);
}

wgml_status wg_matvec_xqt(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *bias, const wgml_tensor *c,
                          const wgml_matmul_params *p, wg_xin xi, wgml_tensor *out)
{
    return matvec_run(x, NULL, w, bias, c, p, -1, NULL, NULL, xi, out);
}

wgml_status wg_matvec_glu(const wgml_tensor *x, const wgml_tensor *w, const wgml_matmul_params *p, int glu, wg_xin xi,
                          wgml_tensor *out)
{
    return matvec_run(x, NULL, w, NULL, NULL, p, glu, NULL, NULL, xi, out);
}

wgml_status wg_matvec_epi(const wgml_tensor *x, const wgml_tensor *w, const wgml_matmul_params *p, const mv_epi *e,
                          wg_xin xi, wgml_tensor *out)
{
    return matvec_run(x, NULL, w, NULL, NULL, p, -1, e, NULL, xi, out);
}

wgml_status wg_matvec_ntail(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *bias, const wgml_tensor *c,
                            const wgml_matmul_params *p, const mv_ntail *nt, wg_xin xi, wgml_tensor *out)
{
    return matvec_run(x, NULL, w, bias, c, p, -1, NULL, nt, xi, out);
}

wgml_status wg_matvec_pre(const wgml_tensor *x, const wg_xpre *pre, const wgml_tensor *w, const wgml_tensor *bias,
                          const wgml_matmul_params *p, wgml_tensor *out)
{
    return matvec_run(x, pre, w, bias, NULL, p, -1, NULL, NULL, (wg_xin){false, 0, 0.0f}, out);
}

wgml_status wg_xin_refused(const char *op)
{
    return wg_fail(WGML_ERR_INTERNAL, "%s: x is a split norm's codes (graph fusion), which only the one-row "
                   "one-dispatch product reads, and it does not take these operands", op);
}

/* ------------------------------------------------------------ linear_id */

static wgml_status check_ids(mv_job *j, const wgml_tensor *ids, int64_t experts, int64_t tokens)
{
    wgml_ctx *ctx = j->ctx;
    wgml_status st = wg_errword_arm(ctx);
    if (st != WGML_OK)
        return st;
    mv_params p = j->p;
    uint64_t rem, span = (uint64_t)(tokens - 1) * p.ist_t + (uint64_t)(p.used - 1) * p.ist_u + 1;
    wg_binding b[2] = {wg_bind_from(ids->st->buf, ids->offset, span * 4, &rem), wg_errword_bind(ctx)};
    if (b[0].size < rem + span * 4)
        return wg_fail_window(ctx, span * 4, "%s: ids", j->op);
    p.ids_off = (uint32_t)(rem / 4);
    p.chk[0] = wg_errword_op(ctx, "wgml_linear_id", "ids");
    p.chk[1] = (uint32_t)(experts > 0x7fffffff ? 0x7fffffff : experts);
    p.chk[2] = (uint32_t)tokens;
    wg_kernel_ref ref = {"matvec.wgsl", "check", "CHECK;IDS_ACC=read", 2, 1u};
    wgml_kernel *k;
    if ((st = wg_kernel_get(ctx, &ref, &k)) != WGML_OK)
        return st;
    uint32_t g[3];
    wg_split_grid(65535, (p.pairs + 63) / 64, g);
    return wg_dispatch(ctx, k, b, 2, &p, sizeof p, g[0], g[1], g[2]);
}

static wgml_status linear_id(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *ids, wgml_tensor *out)
{
    const char *op = "wgml_linear_id";
    wgml_status st = wg_check_tensor(op, "x", x);
    if (st == WGML_OK)
        st = wg_check_tensor(op, "w", w);
    if (st == WGML_OK)
        st = wg_check_tensor(op, "ids", ids);
    if (st == WGML_OK)
        st = wg_check_tensor(op, "out", out);
    if (st != WGML_OK)
        return st;
    if (!wg_same_ctx(x, w) || !wg_same_ctx(x, ids) || !wg_same_ctx(x, out))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", op);
    if ((st = need(op, "x", x, XDTS, "f32 or f16")) != WGML_OK ||
        (st = need(op, "ids", ids, WG_DT_BIT(WGML_I32), "i32")) != WGML_OK ||
        (st = need(op, "out", out, WG_DT_FLOATS, "f32, f16 or bf16")) != WGML_OK)
        return st;
    char a[96], b[96], c[96];
    if (w->ndim != 3 || ids->ndim != 2 || x->ndim != 3 || x->shape[0] != ids->shape[0] ||
        (x->shape[1] != ids->shape[1] && x->shape[1] != 1) || x->shape[2] != w->shape[2])
        return wg_fail(WGML_ERR_SHAPE, "%s: x %s, w %s, ids %s: need x [tokens, used or 1, k], w [experts, n, k], "
                       "ids [tokens, used]", op, wg_shape_str(x, a, sizeof a), wg_shape_str(w, b, sizeof b),
                       wg_shape_str(ids, c, sizeof c));
    int64_t T = ids->shape[0], U = ids->shape[1], E = w->shape[0], n = w->shape[1], k = w->shape[2];
    if ((st = wg_check_out(op, out, -1, 3, (int64_t[]){T, U, n})) != WGML_OK)
        return st;
    const mv_type *ty;
    uint64_t rowb;
    if ((st = weight_rows(op, w, &ty, &rowb)) != WGML_OK)
        return st;
    if ((st = wg_check_out_writable(op, "out", out)) != WGML_OK ||
        (st = wg_check_writes(op, "out", out, false, "x", x, "w", w, "ids", ids, WG_END)) != WGML_OK)
        return st;
    uint64_t eb = (uint64_t)w->strides[0] / wg_dtype(w->dtype)->block_elems * wg_dtype(w->dtype)->block_bytes;
    int64_t xst_u = x->shape[1] == 1 ? 0 : x->strides[1];
    if (!fits32(k) || !fits32(n) || !fits32(T * U) || !fits32((int64_t)eb) || !fits32(x->strides[0]) ||
        !fits32(xst_u) || !fits32(x->strides[2]) || !fits32(out->strides[0]) || !fits32(out->strides[1]) ||
        !fits32(out->strides[2]) || !fits32(ids->strides[0]) || !fits32(ids->strides[1]))
        return wg_fail(WGML_ERR_LIMIT, "%s: a size or stride beyond 32 bits", op);
    if (T * U == 0)
        return wg_check(x->ctx);
    const mv_variant *var;
    int upt = 1;
    if ((st = wg_mv_pick(x->ctx, op, n, k, ty, 1, &var, &upt)) != WGML_OK)
        return st;
    mv_job j = {x->ctx, op, ty, var, upt, {w, x, out, NULL, NULL, ids}, 1, false, false, false, -1, NULL, NULL,
                {false, 0, 0.0f}, {{0}}, {0}};
    mv_params *p = &j.p;
    p->units = (uint32_t)((k + 7) / 8);
    p->k = (uint32_t)k;
    p->rowb = (uint32_t)rowb;
    p->xs = (uint32_t)x->strides[2];
    p->os = (uint32_t)out->strides[2];
    p->alpha = 1.0f;
    p->m = 1;
    p->eb = (uint32_t)eb;
    p->used = (uint32_t)U;
    p->pairs = (uint32_t)(T * U);
    p->ist_t = (uint32_t)ids->strides[0];
    p->ist_u = (uint32_t)ids->strides[1];
    p->xst_t = (uint32_t)x->strides[0];
    p->xst_u = (uint32_t)xst_u;
    p->ost_t = (uint32_t)out->strides[0];
    p->ost_u = (uint32_t)out->strides[1];
    int path = wg_moe_path(T * U, E, true);
    if (path < 0)
        return WGML_ERR_INVALID_ARG;
    /* Ids first: the writing pass reads the verdict. */
    if ((st = check_ids(&j, ids, E, T)) != WGML_OK)
        return st;
    if (E == 0 || n == 0)
        return WGML_OK;
    if (path == 1) { /* prefill: each expert's pairs one GEMM (moe.c) */
        wg_moe_args ga = {op, x, w, ids, out, T, U, E, n, k, rowb, eb, xst_u};
        if ((st = wg_moe_grouped(&ga)) != WGML_ERR_UNSUPPORTED)
            return st;
    }
    uint64_t wbytes = (uint64_t)k / ty->qk * ty->bb + (ty->qk == 8 ? (uint64_t)(k % 8) * (ty->bb / 8) : 0);
    uint64_t xt = (uint64_t)(T - 1) * p->xst_t + (uint64_t)(x->shape[1] - 1) * p->xst_u +
                  (uint64_t)(k ? k - 1 : 0) * p->xs;
    uint64_t ot = (uint64_t)(T - 1) * p->ost_t + (uint64_t)(U - 1) * p->ost_u;
    uint64_t it_ = (uint64_t)(T - 1) * p->ist_t + (uint64_t)(U - 1) * p->ist_u;
    wg_view4 xv = wg_view4_of(x), ov = wg_view4_of(out), iv = wg_view4_of(ids);
    wg_win ws[NS] = {
        win(w, w->offset, (int64_t)eb, (int64_t)rowb, wbytes ? wbytes - 1 + WIDE_SLACK : 0, 1, "w"),
        win(x, xv.offset, 0, 0, xt, wg_dtype(x->dtype)->block_bytes, "x"),
        win(out, ov.offset, 0, out->strides[2], ot, wg_dtype(out->dtype)->block_bytes, "out"),
        win(NULL, 0, 0, 0, 0, 1, "bias"),
        win(NULL, 0, 0, 0, 0, 1, "c"),
        win(ids, iv.offset, 0, 0, it_, 4, "ids"),
    };
    const int64_t it[4] = {1, E, n, 1};
    return wg_win_split(x->ctx, ws, NS, it, 3, UINT32_MAX, op, block, &j);
}

/* ------------------------------------------------------------ op table */

wgml_status wg_en_linear_id(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                            wgml_tensor *out2)
{
    (void)p, (void)nin, (void)out2;
    return linear_id(in[0], in[1], in[2], out);
}

/* ------------------------------------------------------------ registry */

/* dtypes: those of w, the operand that picks the kernel (x is f32 or f16). */
#define W_DTS (WG_DT_FLOATS | WG_DT_BIT(WGML_Q4_0) | WG_DT_BIT(WGML_Q4_1) | WG_DT_BIT(WGML_Q5_0) | \
               WG_DT_BIT(WGML_Q5_1) | WG_DT_BIT(WGML_Q8_0) | WG_DT_BIT(WGML_Q2_K) | WG_DT_BIT(WGML_Q3_K) | \
               WG_DT_BIT(WGML_Q4_K) | WG_DT_BIT(WGML_Q5_K) | WG_DT_BIT(WGML_Q6_K) | WG_DT_BIT(WGML_IQ4_NL) | \
               WG_DT_BIT(WGML_MXFP4))

static const wgml_op_info matvec_rows[] = {
    {"LINEAR_ID", "matvec", W_DTS},
};

wg_op_table wg_matvec_ops(void) { return (wg_op_table){matvec_rows, sizeof matvec_rows / sizeof *matvec_rows}; }
