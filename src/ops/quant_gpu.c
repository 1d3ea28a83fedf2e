/*
 * Quantised tensors on the GPU: wgml_dequantize, get_rows from quantised
 * tables and set_rows into q8_0 / q4_0 (the hooks of indexing.h).  Kernel:
 * dequant.wgsl.  The CPU reference is quant_ref.c / quant_ref_k.c, checked
 * bit for bit against the gguf package; tests/test_op_quant.c compares the
 * two.
 *
 * The quantised table must fit one storage binding (2 GiB on an H100,
 * 128 MiB on lavapipe); larger tables return WGML_ERR_LIMIT.  Index
 * tensors are read in place in any layout (never on the host: indexing.c
 * checks them on the GPU, and the kernels write nothing when that check
 * failed); non-contiguous float operands go through a contiguous
 * temporary.
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
    wgml_status st = wgml_tensor_new(t->ctx, t->dtype, t->ndim, t->shape, out);
    if (st == WGML_OK && copy_in)
        st = wg_copy_impl(t, *out);
    return st;
}

static void release(const wgml_tensor *orig, wgml_tensor *tmp)
{
    if (tmp != orig)
        wgml_tensor_free(tmp);
}

static wgml_status bind_table(const char *op, const wgml_tensor *q, wg_binding *b, uint32_t *off)
{
    uint64_t bytes = wgml_tensor_nbytes(q), rem;
    *b = wg_bind_from(q->st->buf, q->offset, bytes, &rem);
    if (b->size < rem + bytes)
        return wg_fail_window(q->ctx, bytes, "%s: the %s table", op, wgml_dtype_name(q->dtype));
    *off = (uint32_t)rem;
    return WGML_OK;
}

typedef struct qparams {
    uint32_t n, cols, n_idx, rows, src_off, out_off, idx_off, nbat;
    uint32_t ish[4], ist[4]; /* the index view (dequant.wgsl's IDX) */
} qparams;

/* Binds the i32 index view from its first element, whatever its layout:
 * the kernel reads it through idx_off and the view's strides (idx_at in
 * dequant.wgsl), the way the indexing kernels address any view, so an
 * offset that is not a multiple of the storage-offset alignment, a step
 * slice, a permutation or a broadcast needs no contiguous copy. */
static wgml_status bind_idx(const char *op, const wgml_tensor *idx, wg_binding *b, qparams *p)
{
    wg_view4 v = wg_view4_of(idx);
    uint64_t bytes = (wg_span_last(v.offset, v.strides, v.shape) + 1 - v.offset) * 4, rem;
    *b = wg_bind_from(idx->st->buf, v.offset * 4, bytes, &rem);
    if (b->size < rem + bytes)
        return wg_fail_window(idx->ctx, bytes, "%s: the index tensor", op);
    p->idx_off = (uint32_t)(rem / 4);
    for (int d = 0; d < 4; d++) {
        p->ish[d] = (uint32_t)v.shape[d];
        p->ist[d] = (uint32_t)v.strides[d];
    }
    return WGML_OK;
}

/* Dequantises (rows of) q into the contiguous float tensor out; with idx,
 * out row r is table row number r of idx (logical order) of its batch. */
static wgml_status run_dequant(const char *op, const wgml_tensor *q, const wgml_tensor *idx, wgml_tensor *out,
                               uint32_t cols, uint32_t n_idx, uint32_t rows)
{
    wgml_ctx *ctx = q->ctx;
    uint64_t n = (uint64_t)wgml_tensor_nelem(out);
    if (n == 0)
        return WGML_OK;
    if (n > 0xffffff00ull)
        return wg_fail(WGML_ERR_LIMIT, "%s: dequantising more than 2^32 elements in one call", op);
    const wg_dtype_info *d = wg_dtype(q->dtype);
    char defs[160];
    snprintf(defs, sizeof defs, "DEQUANT;%s;QK=%u;BB=%u;O_DT=%s;O_MODE=w%s", qt_define(q->dtype), d->block_elems,
             d->block_bytes, wg_dtype(out->dtype)->wgsl, idx ? ";GET_ROWS;IDX" : "");
    /* with idx: table, out, idx, the error word (read-only but out) */
    wg_kernel_ref ref = {"dequant.wgsl", "dequant", defs, idx ? 4 : 2, idx ? 13u : 1u};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    qparams p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)n;
    p.cols = cols;
    p.n_idx = n_idx;
    p.rows = rows;
    wg_binding b[4];
    if ((st = bind_table(op, q, &b[0], &p.src_off)) != WGML_OK)
        return st;
    uint64_t esz = wg_dtype(out->dtype)->block_bytes, rem;
    b[1] = wg_bind_from(out->st->buf, out->offset, n * esz, &rem);
    if (b[1].size < rem + n * esz)
        return wg_fail_window(ctx, n * esz, "%s: the dequantised output", op);
    p.out_off = (uint32_t)(rem / esz);
    if (idx && (st = bind_idx(op, idx, &b[2], &p)) != WGML_OK)
        return st;
    if (idx)
        b[3] = wg_errword_bind(ctx);
    return wg_dispatch(ctx, k, b, idx ? 4 : 2, &p, sizeof p, (uint32_t)((n + 255) / 256), 1, 1);
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
    int64_t cols = x->ndim ? x->shape[x->ndim - 1] : 1;
    st = run_dequant(name, x, NULL, o, (uint32_t)cols, 1, 1);
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
    int64_t rowlen = 1, n_idx = 1;
    for (int i = nb + 1; i < src->ndim; i++)
        rowlen *= src->shape[i];
    for (int i = nb; i < idx->ndim; i++)
        n_idx *= idx->shape[i];
    /* A non-contiguous out goes through a temporary that starts as a copy
     * of out: when the index check fails the kernel writes nothing, and
     * copying the temporary back leaves out as it was. */
    wgml_tensor *o;
    wgml_status st = contiguous(out, true, &o);
    if (st != WGML_OK)
        return st;
    st = run_dequant(op, src, idx, o, (uint32_t)rowlen, (uint32_t)n_idx, (uint32_t)src->shape[nb]);
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
    int64_t rowlen = 1;
    for (int i = nb + 1; i < dst->ndim; i++)
        rowlen *= dst->shape[i];
    const wg_dtype_info *d = wg_dtype(dst->dtype);
    uint64_t blocks = (uint64_t)wgml_tensor_nelem(src) / d->block_elems;
    if (blocks == 0)
        return WGML_OK;
    wgml_tensor *sc;
    wgml_status st = contiguous(src, true, &sc);
    if (st != WGML_OK)
        return st;
    char defs[96];
    snprintf(defs, sizeof defs, "QUANT;IDX;%s;QK=%u;BB=%u%s", qt_define(dst->dtype), d->block_elems, d->block_bytes,
             win ? ";WIN" : "");
    /* table (written), src, idx, the error word, [winners]: all read-only but the table */
    wg_kernel_ref ref = {"dequant.wgsl", "quant", defs, win ? 5 : 4, win ? 30u : 14u};
    wgml_kernel *k;
    qparams p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)blocks;
    p.cols = (uint32_t)rowlen;
    p.n_idx = (uint32_t)idx->shape[nb];
    p.rows = (uint32_t)dst->shape[nb];
    p.nbat = (uint32_t)(wgml_tensor_nelem(idx) / (idx->shape[nb] ? idx->shape[nb] : 1));
    wg_binding b[5];
    uint64_t rem;
    if ((st = wg_kernel_get(dst->ctx, &ref, &k)) == WGML_OK && (st = bind_table(name, dst, &b[0], &p.src_off)) == WGML_OK &&
        (st = bind_idx(name, idx, &b[2], &p)) == WGML_OK) {
        b[3] = wg_errword_bind(dst->ctx);
        if (win) /* one i32 per (row, batch): smaller than the table, which fits a binding */
            b[4] = wg_bind_from(win->st->buf, win->offset, wgml_tensor_nbytes(win), &rem);
        uint64_t sb = (uint64_t)wgml_tensor_nelem(sc) * 4;
        b[1] = wg_bind_from(sc->st->buf, sc->offset, sb, &rem);
        p.out_off = (uint32_t)(rem / 4);
        if (b[1].size < p.out_off * 4ull + sb)
            st = wg_fail_window(dst->ctx, sb, "%s: the source rows", name);
        else
            st = wg_dispatch(dst->ctx, k, b, win ? 5 : 4, &p, sizeof p, (uint32_t)((blocks + 63) / 64), 1, 1);
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
