/*
 * Quantised tensors on the GPU: wgml_dequantize, get_rows from quantised
 * tables and set_rows into q8_0 / q4_0 (the hooks of indexing.h).  Kernel:
 * dequant.wgsl.  The CPU reference is quant_ref.c / quant_ref_k.c, checked
 * bit for bit against the gguf package; tests/test_op_quant.c compares the
 * two.
 *
 * The quantised table must fit one storage binding (2 GiB on an H100,
 * 128 MiB on lavapipe); larger tables return WGML_ERR_LIMIT.  Non-contiguous
 * plain operands go through a contiguous temporary.
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
        st = wgml_copy(t, *out);
    return st;
}

static void release(const wgml_tensor *orig, wgml_tensor *tmp)
{
    if (tmp != orig)
        wgml_tensor_free(tmp);
}

static wgml_status bind_table(const wgml_tensor *q, wg_binding *b, uint32_t *off)
{
    uint64_t bytes = wgml_tensor_nbytes(q), rem;
    *b = wg_bind_from(q->st->buf, q->offset, bytes, &rem);
    if (b->size < rem + bytes)
        return wg_fail(WGML_ERR_LIMIT, "%s table of %llu bytes exceeds one storage binding (%llu bytes)",
                       wgml_dtype_name(q->dtype), (unsigned long long)bytes,
                       (unsigned long long)wg_max_storage_binding(q->ctx));
    *off = (uint32_t)rem;
    return WGML_OK;
}

typedef struct qparams {
    uint32_t n, cols, n_idx, rows, src_off, out_off, pad0, pad1;
} qparams;

/* Dequantises (rows of) q into the contiguous float tensor out; with idx,
 * out row r is table row idx[r] of its batch. */
static wgml_status run_dequant(const wgml_tensor *q, const wgml_tensor *idx, wgml_tensor *out, uint32_t cols,
                               uint32_t n_idx, uint32_t rows)
{
    wgml_ctx *ctx = q->ctx;
    uint64_t n = (uint64_t)wgml_tensor_nelem(out);
    if (n == 0)
        return WGML_OK;
    if (n > 0xffffff00ull)
        return wg_fail(WGML_ERR_LIMIT, "dequantising more than 2^32 elements in one call");
    const wg_dtype_info *d = wg_dtype(q->dtype);
    char defs[160];
    snprintf(defs, sizeof defs, "DEQUANT;%s;QK=%u;BB=%u;O_DT=%s;O_MODE=w%s", qt_define(q->dtype), d->block_elems,
             d->block_bytes, wg_dtype(out->dtype)->wgsl, idx ? ";GET_ROWS" : "");
    wg_kernel_ref ref = {"dequant.wgsl", "dequant", defs, idx ? 3 : 2, idx ? 5u : 1u};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    qparams p = {(uint32_t)n, cols, n_idx, rows, 0, 0, 0, 0};
    wg_binding b[3];
    if ((st = bind_table(q, &b[0], &p.src_off)) != WGML_OK)
        return st;
    uint64_t esz = wg_dtype(out->dtype)->block_bytes, rem;
    b[1] = wg_bind_from(out->st->buf, out->offset, n * esz, &rem);
    if (b[1].size < rem + n * esz)
        return wg_fail(WGML_ERR_LIMIT, "dequantised output exceeds one storage binding");
    p.out_off = (uint32_t)(rem / esz);
    if (idx) {
        uint64_t ib = (uint64_t)wgml_tensor_nelem(idx) * 4;
        b[2] = wg_bind_from(idx->st->buf, idx->offset, ib, &rem);
        if (rem) /* i32 indices start on their own word; rem is a multiple of 4 */
            return wg_fail(WGML_ERR_INTERNAL, "index tensor is not aligned to its binding");
    }
    return wg_dispatch(ctx, k, b, idx ? 3 : 2, &p, sizeof p, (uint32_t)((n + 255) / 256), 1, 1);
}

wgml_status wgml_dequantize(const wgml_tensor *x, wgml_tensor *out)
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
        return wgml_cast(x, out);
    if (!wgml_tensor_is_contiguous(x))
        return wg_fail(WGML_ERR_UNSUPPORTED, "%s: quantised views must be contiguous (copy the rows first)", name);
    wgml_tensor *o;
    if ((st = contiguous(out, false, &o)) != WGML_OK)
        return st;
    int64_t cols = x->ndim ? x->shape[x->ndim - 1] : 1;
    st = run_dequant(x, NULL, o, (uint32_t)cols, 1, 1);
    if (st == WGML_OK && o != out)
        st = wgml_copy(o, out);
    release(out, o);
    return st;
}

wgml_status wg_get_rows_quant(const wgml_tensor *src, const wgml_tensor *idx, wgml_tensor *out)
{
    if (!wgml_tensor_is_contiguous(src))
        return wg_fail(WGML_ERR_UNSUPPORTED, "wgml_get_rows: quantised tables must be contiguous");
    int nb = idx->ndim - 1;
    int64_t rowlen = 1;
    for (int i = nb + 1; i < src->ndim; i++)
        rowlen *= src->shape[i];
    wgml_tensor *ic, *o;
    wgml_status st = contiguous(idx, true, &ic);
    if (st != WGML_OK)
        return st;
    if ((st = contiguous(out, false, &o)) == WGML_OK) {
        st = run_dequant(src, ic, o, (uint32_t)rowlen, (uint32_t)idx->shape[nb], (uint32_t)src->shape[nb]);
        if (st == WGML_OK && o != out)
            st = wgml_copy(o, out);
        release(out, o);
    }
    release(idx, ic);
    return st;
}

wgml_status wg_set_rows_quant(wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src)
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
    wgml_tensor *ic, *sc;
    wgml_status st = contiguous(idx, true, &ic);
    if (st != WGML_OK)
        return st;
    if ((st = contiguous(src, true, &sc)) != WGML_OK) {
        release(idx, ic);
        return st;
    }
    char defs[96];
    snprintf(defs, sizeof defs, "QUANT;%s;QK=%u;BB=%u", qt_define(dst->dtype), d->block_elems, d->block_bytes);
    wg_kernel_ref ref = {"dequant.wgsl", "quant", defs, 3, 6u};
    wgml_kernel *k;
    qparams p = {(uint32_t)blocks, (uint32_t)rowlen, (uint32_t)idx->shape[nb], (uint32_t)dst->shape[nb], 0, 0, 0, 0};
    wg_binding b[3];
    uint64_t rem;
    if ((st = wg_kernel_get(dst->ctx, &ref, &k)) == WGML_OK && (st = bind_table(dst, &b[0], &p.src_off)) == WGML_OK) {
        uint64_t sb = (uint64_t)wgml_tensor_nelem(sc) * 4;
        b[1] = wg_bind_from(sc->st->buf, sc->offset, sb, &rem);
        p.out_off = (uint32_t)(rem / 4);
        b[2] = wg_bind_from(ic->st->buf, ic->offset, (uint64_t)wgml_tensor_nelem(ic) * 4, &rem);
        if (b[1].size < p.out_off * 4ull + sb || rem)
            st = wg_fail(WGML_ERR_LIMIT, "%s: source rows exceed one storage binding", name);
        else
            st = wg_dispatch(dst->ctx, k, b, 3, &p, sizeof p, (uint32_t)((blocks + 63) / 64), 1, 1);
    }
    release(src, sc);
    release(idx, ic);
    return st;
}

static const wgml_op_info rows[] = {
    {"DEQUANTIZE", "quant", 0x1fffffu},
    {"GET_ROWS_Q", "quant", 0x1fff00u},
    {"SET_ROWS_Q", "quant", WG_DT_BIT(WGML_Q8_0) | WG_DT_BIT(WGML_Q4_0)},
};

wg_op_table wg_quant_ops(void) { return (wg_op_table){rows, sizeof rows / sizeof *rows}; }
