/*
 * Quantised tensors on the GPU: wgml_dequantize, get_rows from quantised
 * tables and set_rows into q8_0 / q4_0 (the hooks of indexing.h).  Kernel:
 * dequant.wgsl.  The CPU reference is quant_ref.c / quant_ref_k.c, checked
 * bit for bit against the gguf package; tests/test_op_quant.c compares the
 * two.
 *
 * Operands larger than one storage binding are cut with the window
 * binder (window.c) into blocks of index positions / rows and whole quant
 * blocks of a row; a table larger than one binding is bound in windows of
 * table rows, each pass reading every index of its block (the plan needs
 * no index values).  Index tensors are read in place in any layout (never
 * on the host: indexing.c checks them on the GPU, and the kernels write
 * nothing when that check failed); non-contiguous float operands go
 * through a contiguous temporary.
 */
#include "indexing.h"

#include <stdio.h>
#include <string.h>

static const char *qt_define(wgml_dtype t)
{
    switch (t) {
    case WGML_Q4_0: return "QT_Q4_0";
    case WGML_Q4_1: return "QT_Q4_1";
    case WGML_Q5_0: return "QT_Q5_0";
    case WGML_Q5_1: return "QT_Q5_1";
    case WGML_Q8_0: return "QT_Q8_0";
    case WGML_Q2_K: return "QT_Q2_K";
    case WGML_Q3_K: return "QT_Q3_K";
    case WGML_Q4_K: return "QT_Q4_K";
    case WGML_Q5_K: return "QT_Q5_K";
    case WGML_Q6_K: return "QT_Q6_K";
    case WGML_Q8_K: return "QT_Q8_K";
    case WGML_IQ4_NL: return "QT_IQ4_NL";
    case WGML_MXFP4: return "QT_MXFP4";
    default: return NULL;
    }
}

/* A contiguous stand-in for t (t itself when already contiguous). */
static wgml_status contiguous(const wgml_tensor *t, bool copy_in, wgml_tensor **out)
{
    if (wgml_tensor_is_contiguous(t)) {
        *out = (wgml_tensor *)t;
        return WGML_OK;
    }
    wgml_status st = wg_scratch_tensor(t->ctx, t->dtype, t->ndim, t->shape, out);
    if (st == WGML_OK && copy_in)
        st = wg_copy_impl(t, *out);
    return st;
}

static void release(const wgml_tensor *orig, wgml_tensor *tmp)
{
    if (tmp != orig)
        wgml_tensor_free(tmp);
}

/* Mirrors Params in dequant.wgsl. */
typedef struct qparams {
    uint32_t shape[4], tst[4], ost[4], ist[4], wst[4], jst[4];
    uint32_t n, t_off, o_off, i_off, w_off, j_off, lo, hi, rowb, wax, pad0, pad1;
} qparams;

/* Operand slots, in binding order: the quantised tensor (bytes), the
 * plain one (dequant's out, set_rows' src), the indices, set_rows'
 * winners, and j, a virtual slot whose offset is a block's first position
 * along idx's last dim. */
enum { QT, QO, QX, QW, QJ, NQ };

/* One planned kernel.  ax: per slot, elements per table row (0: not
 * indexed by the table row); limit: table rows (0: no indices). */
typedef struct q_job {
    wgml_kernel *k;
    uint32_t per;         /* threads per iteration item: QK / 4 (dequant) or 1 */
    uint32_t group;       /* threads per workgroup */
    int64_t limit;
    uint64_t ax[NQ];
} q_job;

static void put4(uint32_t dst[4], const int64_t st[4], const int64_t it[4])
{
    for (int d = 0; d < 4; d++) /* a dim of one never steps: its stride may exceed u32 */
        dst[d] = it[d] > 1 ? (uint32_t)st[d] : 0;
}

/* One pass over table rows [lo, hi) of a block whose windows fit. */
static wgml_status q_pass(const q_job *j, const wg_win *w, const int64_t it[4], int64_t lo, int64_t hi)
{
    qparams p;
    memset(&p, 0, sizeof p);
    wg_binding b[NQ + 1];
    uint32_t off[NQ] = {0};
    int nb = 0;
    for (int k = 0; k < QJ; k++) { /* binding order: table, plain, idx, the error word, winners */
        if (!w[k].buf)
            continue;
        wg_win x = w[k];
        if (j->ax[k]) { /* the pass's rows of a table-indexed operand */
            x.offset += (uint64_t)lo * j->ax[k];
            x.tail += (uint64_t)(hi - 1 - lo) * j->ax[k];
        }
        b[nb++] = wg_win_bind(&x, it, &off[k]);
        if (k == QX)
            b[nb++] = wg_errword_bind(wg_kernel_ctx(j->k));
    }
    for (int d = 0; d < 4; d++)
        p.shape[d] = (uint32_t)it[d];
    put4(p.tst, w[QT].st, it);
    put4(p.ost, w[QO].st, it);
    put4(p.ist, w[QX].st, it);
    put4(p.wst, w[QW].st, it);
    put4(p.jst, w[QJ].st, it);
    uint64_t n = (uint64_t)wg_nelem4(it) * j->per;
    p.n = (uint32_t)n;
    p.t_off = off[QT];
    p.o_off = off[QO];
    p.i_off = off[QX];
    p.w_off = off[QW];
    p.j_off = (uint32_t)w[QJ].offset;
    p.lo = (uint32_t)lo;
    p.hi = (uint32_t)hi;
    p.rowb = (uint32_t)j->ax[QT];
    p.wax = (uint32_t)j->ax[QW];
    return wg_dispatch(wg_kernel_ctx(j->k), j->k, b, nb, &p, sizeof p, (uint32_t)((n + j->group - 1) / j->group), 1,
                       1);
}

/* A block whose operands (one table row of the table-indexed ones) fit
 * one binding: covers the table rows [0, limit) in as few passes as fit.
 * The plan needs no index values: each pass reads every index of the
 * block and handles only those in its rows (indexing.c does the same). */
static wgml_status q_block(void *user, const wg_win *w, const int64_t it[4], const int64_t origin[4])
{
    const q_job *j = user;
    (void)origin;
    if (!j->limit)
        return q_pass(j, w, it, 0, 1);
    uint64_t cap = wg_window_cap(wg_kernel_ctx(j->k));
    int64_t rows = j->limit;
    for (int k = 0; k < QJ; k++) {
        if (!w[k].buf || !j->ax[k])
            continue;
        uint64_t used = wg_win_bytes(&w[k], it) / w[k].esz;
        uint64_t more = (cap / w[k].esz - used) / j->ax[k]; /* rows beyond the first */
        if (more + 1 < (uint64_t)rows)
            rows = (int64_t)more + 1;
    }
    for (int64_t lo = 0; lo < j->limit; lo += rows) {
        wgml_status st = q_pass(j, w, it, lo, lo + rows < j->limit ? lo + rows : j->limit);
        if (st != WGML_OK)
            return st;
    }
    return WGML_OK;
}

/* The slot of a contiguous quantised tensor q (bytes) over an iteration
 * space whose dim 3 is the quant blocks of a row: dims 0..2 take q's
 * strides from qdim[d] (-1: none, a stride-0 position dim). */
static wg_win q_slot(const wgml_tensor *q, const int qdim[3])
{
    const wg_dtype_info *d = wg_dtype(q->dtype);
    wg_win w = {q->st->buf, q->offset, {0, 0, 0, d->block_bytes}, 1, d->block_bytes - 1, "table"};
    for (int k = 0; k < 3; k++)
        if (qdim[k] >= 0)
            w.st[k] = q->strides[qdim[k]] / d->block_elems * d->block_bytes;
    return w;
}

/* The slot of a contiguous plain tensor t holding `rowlen` elements per
 * row of an iteration space whose dim 3 is the quant blocks (qk
 * elements) of a row: an item is a run of qk elements. */
static wg_win plain_slot(const wgml_tensor *t, const int64_t it[4], int64_t rowlen, uint32_t qk, const char *name)
{
    uint64_t esz = wg_dtype(t->dtype)->block_bytes;
    wg_win w = {t->st->buf, t->offset / esz, {it[1] * it[2] * rowlen, it[2] * rowlen, rowlen, qk}, esz, qk - 1, name};
    return w;
}

/* The index view as a slot over dims 0..2 (idx has at most 3 dims: a
 * quantised table keeps its last dim for the row). */
static wg_win idx_slot(const wgml_tensor *idx, int64_t it[4])
{
    wg_view4 v = wg_view4_of(idx);
    wg_win w = {idx->st->buf, v.offset, {v.strides[1], v.strides[2], v.strides[3], 0}, 4, 0, "idx"};
    for (int d = 0; d < 3; d++)
        it[d] = v.shape[d + 1];
    return w;
}

/* Runs job j over `it` (in quant blocks), cutting it with the window
 * binder until every operand, one table row of the table-indexed ones,
 * fits one binding and a block's threads fit u32. */
static wgml_status q_run(const char *op, q_job *j, const wg_win *w, const int64_t it[4])
{
    if (wg_nelem4(it) == 0)
        return wg_check(wg_kernel_ctx(j->k));
    return wg_win_split(wg_kernel_ctx(j->k), w, NQ, it, 4, (0xffffffffull - 1024) / j->per, op, q_block, j);
}

static wgml_status q_kernel(wgml_ctx *ctx, const char *entry, const char *defs, int nbuf, unsigned ro, q_job *j)
{
    wg_kernel_ref ref = {"dequant.wgsl", entry, defs, nbuf, ro};
    return wg_kernel_get(ctx, &ref, &j->k);
}

/* Dequantises q (contiguous) into the contiguous float tensor out; with
 * idx, out row r is table row number r of idx (logical order) of its
 * batch, idx's first nb dims being batch dims shared with q. */
static wgml_status run_dequant(const wgml_tensor *q, const wgml_tensor *idx, int nb, wgml_tensor *out,
                               const char *op)
{
    const wg_dtype_info *d = wg_dtype(q->dtype);
    char defs[160];
    bool shared = q->st->buf == out->st->buf, ishared = idx && idx->st->buf == out->st->buf;
    /* OV4: an f32 out starting on 16 bytes (f16 with ShaderF16: on 8)
     * takes each thread's 4 elements as one vector store (rows are whole
     * blocks of 32 or 256, so every quad of every window then starts on a
     * vector too).  f16 as four 2-byte stores dequantised 14336 x 4096
     * q4_K in ~250 us on an H200 (a prefill's f16 weights, WGML_PREC_F16) */
    bool v4 = (out->dtype == WGML_F32 && out->offset % 16 == 0) ||
              (out->dtype == WGML_F16 && wg_has(out->ctx, WGML_FEATURE_F16) && out->offset % 8 == 0);
    /* WIDE: q4_K / q6_K 32 elements a thread, where q4_K's blocks start on
     * words (144-byte blocks: when q does; bindings start on 256 bytes),
     * q6_K's on 2 bytes (210-byte blocks).  H200,
     * 14336 x 4096 q4_K to f16 (an 8B prefill's weights): see
     * bench/NOTES.md 2026-11-27. */
    bool wide4 = q->dtype == WGML_Q4_K && q->offset % 4 == 0, wide6 = q->dtype == WGML_Q6_K && q->offset % 2 == 0;
    bool wide = wide4 || wide6;
    snprintf(defs, sizeof defs, "DEQUANT;%s;QK=%u;BB=%u;O_DT=%s;O_MODE=w%s%s%s%s%s", qt_define(q->dtype),
             d->block_elems, d->block_bytes, wg_dtype(out->dtype)->wgsl, v4 ? "4;OV4" : "", idx ? ";GET_ROWS;IDX" : "",
             shared ? ";Q_RW" : "", ishared ? ";IDX_RW" : "", wide4 ? ";WIDE;Q4K_WIDE" : wide6 ? ";WIDE;Q6K_WIDE" : "");
    q_job j;
    memset(&j, 0, sizeof j);
    j.per = wide ? 8 : d->block_elems / 4; /* threads a block (dequant.wgsl) */
    j.group = 256;
    /* with idx: table, out, idx, the error word (read-only but out; the
     * table too unless it shares out's buffer) */
    unsigned ro = (idx ? 13u : 1u) & (shared ? ~1u : ~0u) & (ishared ? ~4u : ~0u);
    wgml_status st = q_kernel(q->ctx, "dequant", defs, idx ? 4 : 2, ro, &j);
    if (st != WGML_OK)
        return st;
    wg_win w[NQ];
    memset(w, 0, sizeof w);
    w[QW].esz = w[QJ].esz = 4; /* absent */
    int64_t it[4], rowlen;
    if (idx) {
        if (idx->ndim > 3)
            return wg_fail(WGML_ERR_INTERNAL, "%s: %d-D indices into a quantised table", op, idx->ndim);
        w[QX] = idx_slot(idx, it);
        int qdim[3] = {-1, -1, -1};
        for (int k = 0; k < nb; k++) /* batch dims: idx dim k is it dim 3 - ndim + k */
            qdim[3 - idx->ndim + k] = k;
        w[QT] = q_slot(q, qdim);
        rowlen = 1;
        for (int k = nb + 1; k < q->ndim; k++)
            rowlen *= q->shape[k];
        j.limit = q->shape[nb];
        j.ax[QT] = (uint64_t)(q->strides[nb] / d->block_elems * d->block_bytes);
    } else { /* q's rows: dims 0..2 of its 4-D view */
        int pad = 4 - (q->ndim ? q->ndim : 1), qdim[3];
        rowlen = q->ndim ? q->shape[q->ndim - 1] : 1;
        for (int k = 0; k < 3; k++) {
            qdim[k] = k - pad >= 0 ? k - pad : -1;
            it[k] = qdim[k] >= 0 ? q->shape[qdim[k]] : 1;
        }
        w[QT] = q_slot(q, qdim);
    }
    it[3] = rowlen / d->block_elems;
    w[QO] = plain_slot(out, it, rowlen, d->block_elems, "out");
    return q_run(op, &j, w, it);
}

wgml_status wg_dequantize_impl(const wgml_tensor *x, wgml_tensor *out)
{
    const char *name = "wgml_dequantize";
    wgml_status st = wg_check_tensor(name, "x", x);
    if (st != WGML_OK)
        return st;
    if (out && !wg_dtype_is_float(out->dtype))
        return wg_fail(WGML_ERR_DTYPE, "%s: out is %s, must be f32, f16 or bf16", name, wgml_dtype_name(out->dtype));
    if ((st = wg_check_out(name, out, -1, x->ndim, x->shape)) != WGML_OK)
        return st;
    if ((st = wg_check_writes(name, "out", out, true, "x", x, WG_END)) != WGML_OK)
        return st;
    if (wg_dtype_is_plain(x->dtype))
        return wg_cast_impl(x, out);
    if (!wgml_tensor_is_contiguous(x))
        return wg_fail(WGML_ERR_UNSUPPORTED, "%s: quantised views must be contiguous (copy the rows first)", name);
    wgml_tensor *o;
    if ((st = contiguous(out, false, &o)) != WGML_OK)
        return st;
    st = run_dequant(x, NULL, 0, o, name);
    if (st == WGML_OK && o != out)
        st = wg_copy_impl(o, out);
    release(out, o);
    return st;
}

wgml_status wg_get_rows_quant(const char *op, const wgml_tensor *src, const wgml_tensor *idx, int nb,
                              wgml_tensor *out)
{
    if (!wgml_tensor_is_contiguous(src))
        return wg_fail(WGML_ERR_UNSUPPORTED, "%s: quantised tables must be contiguous", op);
    /* A non-contiguous out goes through a temporary that starts as a copy
     * of out: when the index check fails the kernel writes nothing, and
     * copying the temporary back leaves out as it was. */
    wgml_tensor *o;
    wgml_status st = contiguous(out, true, &o);
    if (st != WGML_OK)
        return st;
    st = run_dequant(src, idx, nb, o, op);
    if (st == WGML_OK && o != out)
        st = wg_copy_impl(o, out);
    release(out, o);
    return st;
}

wgml_status wg_set_rows_quant(wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src,
                              const wgml_tensor *win)
{
    const char *name = "wgml_set_rows";
    if (dst->dtype != WGML_Q8_0 && dst->dtype != WGML_Q4_0)
        return wg_fail(WGML_ERR_DTYPE, "%s: quantised destination %s (q8_0 and q4_0 are supported)", name,
                       wgml_dtype_name(dst->dtype));
    if (!wgml_tensor_is_contiguous(dst))
        return wg_fail(WGML_ERR_UNSUPPORTED, "%s: quantised destinations must be contiguous", name);
    int nb = idx->ndim - 1;
    if (idx->ndim > 3)
        return wg_fail(WGML_ERR_INTERNAL, "%s: %d-D indices into a quantised table", name, idx->ndim);
    int64_t rowlen = 1;
    for (int i = nb + 1; i < dst->ndim; i++)
        rowlen *= dst->shape[i];
    const wg_dtype_info *d = wg_dtype(dst->dtype);
    if (wgml_tensor_nelem(src) == 0)
        return WGML_OK;
    wgml_tensor *sc;
    wgml_status st = contiguous(src, true, &sc);
    if (st != WGML_OK)
        return st;
    char defs[96];
    snprintf(defs, sizeof defs, "QUANT;IDX;%s;QK=%u;BB=%u%s", qt_define(dst->dtype), d->block_elems, d->block_bytes,
             win ? ";WIN" : "");
    q_job j;
    memset(&j, 0, sizeof j);
    j.per = 1;
    j.group = 64;
    j.limit = dst->shape[nb];
    /* table (written), src, idx, the error word, [winners]: all read-only but the table */
    if ((st = q_kernel(dst->ctx, "quant", defs, win ? 5 : 4, win ? 30u : 14u, &j)) == WGML_OK) {
        wg_win w[NQ];
        memset(w, 0, sizeof w);
        int64_t it[4];
        w[QX] = idx_slot(idx, it);
        it[3] = rowlen / d->block_elems;
        int qdim[3] = {-1, -1, -1}, pad = 3 - idx->ndim;
        for (int k = 0; k < nb; k++)
            qdim[pad + k] = k;
        w[QT] = q_slot(dst, qdim);
        j.ax[QT] = (uint64_t)(dst->strides[nb] / d->block_elems * d->block_bytes);
        w[QO] = plain_slot(sc, it, rowlen, d->block_elems, "src");
        w[QJ].esz = 4; /* virtual: the position along idx's last dim */
        w[QJ].st[2] = 1;
        if (win) { /* slot r * batches + b; b: idx's batch dims, row-major */
            int64_t step = 1;
            w[QW] = (wg_win){win->st->buf, win->offset / 4, {0, 0, 0, 0}, 4, 0, "winners"};
            for (int k = nb - 1; k >= 0; k--) {
                w[QW].st[pad + k] = step;
                step *= idx->shape[k];
            }
            j.ax[QW] = (uint64_t)step;
        }
        st = q_run(name, &j, w, it);
    }
    release(src, sc);
    return st;
}

static const wgml_op_info rows[] = {
    {"DEQUANTIZE", "quant", 0x1fffffu},
    {"GET_ROWS_Q", "quant", 0x1fff00u},
    {"SET_ROWS_Q", "quant", WG_DT_BIT(WGML_Q8_0) | WG_DT_BIT(WGML_Q4_0)},
};

wg_op_table wg_quant_ops(void) { return (wg_op_table){rows, sizeof rows / sizeof *rows}; }
