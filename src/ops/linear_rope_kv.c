/*
 * WG_OP_LINEAR_ROPE_KV, made by graph fusion (src/graph/fuse.c) of
 *
 *   c = set_rows(cache, idx, reshape(r[:, h0:h1], [T, (h1 - h0) D]))
 *   with r = rope(reshape(linear(x, w), [T, N / D, D]), pos, ff)
 *
 * (a decoder layer's q|k|v product, roped, its k and v heads written into
 * the KV cache: src/models/llm_graph.c).  The node is the set_rows (it
 * updates the cache); the rope's node r is written by it (its out2), so
 * the graph's other readers of r (q) see the roped product.
 *
 * One activation row with NORMAL rope pairs on the one-dispatch product
 * (sgx_r2: a GPU's table for the integer-path dtypes) writes r and the
 * cache row itself (matvec_rope.wgsl, XS_ROPE): a decode layer runs no
 * rope and no cache-write dispatch.  The linear's bias (qwen2's q|k|v) is
 * added there too, where there are no freq_factors (the two share the
 * epilogue's last binding).  Everything else (more rows, NEOX or M-RoPE
 * pairs, a bias with freq_factors, a CPU adapter's table, operands past
 * one binding) runs the unfused ops: the linear into declared scratch,
 * the rope into r, set_rows from r's heads h0 .. h1 - 1: the unfused
 * graph's values.
 *
 * Inputs: cache, idx, x, w, pos, ff, bias (ff and bias absent or NULL).
 * Params: mm and dtype (the linear's), rope, k = head_dim D, a[0] = h0,
 * a[1] = h1.
 */
#include "matvec.h"
#include "rope.h"

#include <stdio.h>
#include <string.h>

static const char OP[] = "wgml_set_rows (fused with its linear and rope)";

/* The linear's output y [T, N], the rope's r [T, N / D, D] and the rows
 * written kv [T, (h1 - h0) D]. */
static wgml_status descs(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *y, wg_desc *r, wg_desc *kv)
{
    const wg_desc *li[4] = {in[2], in[3], nin > 6 ? in[6] : NULL, NULL};
    wgml_status st = wg_ck_linear(p, li, 4, y);
    if (st != WGML_OK)
        return st;
    int64_t D = p->k, N = y->shape[y->ndim - 1];
    if (y->ndim != 2 || y->dtype != WGML_F32 || D <= 0 || D % 2 || wg_is_sym(N) || N % D || p->a[0] < 0 ||
        p->a[0] >= p->a[1] || p->a[1] > N / D)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: an f32 [T, N] product of whole heads of even head_dim %lld, "
                       "heads [%lld, %lld) written", OP, (long long)D, (long long)p->a[0], (long long)p->a[1]);
    *r = *y;
    r->ndim = 3;
    r->shape[1] = N / D;
    r->shape[2] = D;
    const wg_desc *ri[3] = {r, in[4], nin > 5 ? in[5] : NULL};
    wg_desc ro;
    if ((st = wg_op_def_get(WG_OP_ROPE)->check(p, ri, ri[2] ? 3 : 2, &ro)) != WGML_OK)
        return st;
    *kv = *y;
    kv->shape[1] = (p->a[1] - p->a[0]) * D;
    return WGML_OK;
}

wgml_status wg_ck_linear_rope_kv(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    wg_desc y, r, kv;
    wgml_status st = descs(p, in, nin, &y, &r, &kv);
    if (st != WGML_OK)
        return st;
    const wg_desc *si[3] = {in[0], in[1], &kv};
    return wg_op_def_get(WG_OP_SET_ROWS)->check(p, si, 3, out);
}

uint64_t wg_sc_linear_rope_kv(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    wg_desc y, r, kv;
    if (descs(p, in, nin, &y, &r, &kv) != WGML_OK)
        return 0;
    const wg_desc *li[4] = {in[2], in[3], nin > 6 ? in[6] : NULL, NULL}, *ri[3] = {&r, in[4], nin > 5 ? in[5] : NULL},
                  *si[3] = {in[0], in[1], &kv};
    /* the unfused ops' requests, one after another: y, the linear's own,
     * the rope's, set_rows's */
    return wg_align_up(wg_desc_bytes(&y), 256) + wg_sc_linear(p, li, 4, &y) + wg_sc_rope(p, ri, 3, &r) +
           wg_op_def_get(WG_OP_SET_ROWS)->scratch(p, si, 3, out);
}

static bool same_buf(const wgml_tensor *a, const wgml_tensor *b) { return a && b && a->st->buf == b->st->buf; }

/* The one-dispatch product with its rope epilogue, or WGML_ERR_UNSUPPORTED
 * (no message) where it does not apply. */
static wgml_status one_dispatch(const wg_op_params *p, const wgml_tensor *x, const wgml_tensor *w,
                                const wgml_tensor *pos, const wgml_tensor *ff, const wgml_tensor *bias,
                                const wgml_tensor *idx, wgml_tensor *cache, wgml_tensor *r)
{
    const wgml_rope_params *rp = &p->rope;
    int64_t D = p->k, N = w->ndim == 2 ? w->shape[0] : 0, NH = D ? N / D : 0, W = (p->a[1] - p->a[0]) * D;
    float f0[4], f1[4];
    /* D <= 256: the kernel's angle table (matvec_rope.wgsl) holds <= 128 pairs */
    if (rp->mode != WGML_ROPE_NORMAL || rp->n_dims <= 0 || rp->n_dims % 2 || rp->n_dims > D || D > 256 ||
        rp->n_heads_rot < 0 || rp->n_heads_rot > NH || x->ndim != 2 || x->shape[0] != 1 || r->ndim != 3 ||
        r->shape[1] != NH || r->shape[2] != D || !wgml_tensor_is_contiguous(r) || pos->dtype != WGML_I32 ||
        pos->ndim != 1 || pos->shape[0] != 1 || idx->dtype != WGML_I32 || idx->ndim != 1 || idx->shape[0] != 1 ||
        cache->ndim != 2 || cache->shape[0] < 1 || cache->shape[1] != W || cache->strides[1] != 1 ||
        !wg_dtype_is_float(cache->dtype) ||
        !wg_dtype_is_plain(cache->dtype) || (ff && (ff->dtype != WGML_F32 || ff->ndim != 1 ||
        ff->shape[0] < rp->n_dims / 2)) || (bias && (ff || bias->dtype != WGML_F32 ||
        wgml_tensor_nelem(bias) != N || bias->strides[bias->ndim - 1] != 1)) || same_buf(cache, x) ||
        same_buf(cache, w) ||
        (uint64_t)cache->strides[0] > UINT32_MAX || (uint64_t)N > UINT32_MAX || wg_rope_gpu_consts(rp, f0, f1) != WGML_OK)
        return WGML_ERR_UNSUPPORTED;
    wgml_ctx *ctx = x->ctx;
    /* the cache is written beside r: refused where it overlaps what the
     * dispatch reads or r itself, as set_rows refuses its hazards */
    wgml_status st = wg_check_writes(OP, "cache", cache, false, "x", x, "w", w, "pos", pos, "idx", idx, "the rope's "
                                     "output", r, "freq_factors", ff, "bias", bias, WG_END);
    if (st != WGML_OK)
        return st;
    /* the kernel's workgroup memory: x's codes and the rope table */
    wgml_device_info in;
    if (wgml_device_info_get(ctx, &in) != WGML_OK ||
        wg_q8_row_words(x->shape[1]) * 4 + 64 + (uint64_t)D / 2 * 8 + 16 > in.max_workgroup_storage)
        return WGML_ERR_UNSUPPORTED;
    mv_epi e;
    memset(&e, 0, sizeof e);
    uint32_t pe, ie, ce, fe = 0;
    uint64_t rows = (uint64_t)cache->shape[0];
    if (!wg_bind_elems(pos, 1, &e.b[0], &pe) || !wg_bind_elems(cache, rows ? (rows - 1) * cache->strides[0] + W : 0,
                                                          &e.b[1], &ce) ||
        !wg_bind_elems(idx, 1, &e.b[2], &ie) ||
        (ff && !wg_bind_elems(ff, (uint64_t)(rp->n_dims / 2 - 1) * ff->strides[0] + 1, &e.b[3], &fe)) ||
        (bias && !wg_bind_elems(bias, (uint64_t)N, &e.b[3], &fe)))
        return WGML_ERR_UNSUPPORTED;
    const wgml_tensor *last = ff ? ff : bias; /* the epilogue's last binding: freq_factors or the bias */
    if (!last)
        e.b[3] = e.b[0]; /* unread: FF and QB undefined */
    e.b[4] = wg_errword_bind(ctx);
    e.nb = 5;
    /* a buffer written by the dispatch is bound read_write by every operand
     * that sees it (WebGPU forbids mixing the two) */
    bool prw = same_buf(pos, r) || same_buf(pos, cache), irw = same_buf(idx, r) || same_buf(idx, cache);
    bool frw = last ? same_buf(last, r) || same_buf(last, cache) : prw;
    e.ro = (prw ? 0u : 1u) | (irw ? 0u : 4u) | (frw ? 0u : 8u);
    char defs[160];
    snprintf(defs, sizeof defs, ";XS_ROPE;RT=%lld;KC_DT=%s;POS_MODE=%s;IDX_MODE=%s;FF_MODE=%s%s", (long long)(D / 2),
             wg_dtype(cache->dtype)->wgsl, prw ? "rw" : "r", irw ? "rw" : "r", frw ? "rw" : "r",
             ff ? ";FF" : bias ? ";QB" : "");
    /* an f16 cache whose pairs start on words takes one 32-bit store a
     * pair (the row starts and the step even) */
    if (cache->dtype == WGML_F16 && ce % 2 == 0 && cache->strides[0] % 2 == 0)
        snprintf(defs + strlen(defs), sizeof defs - strlen(defs), ";KC_PAIR");
    e.defs = defs;
    memcpy(e.words, f0, 16);
    memcpy(e.words + 4, f1, 12);
    e.words[7] = (uint32_t)D | (uint32_t)(rp->n_dims / 2) << 16;
    e.words[8] = (uint32_t)((rp->n_heads_rot ? rp->n_heads_rot : NH) * D);
    e.words[9] = (uint32_t)(p->a[0] * D);
    e.words[10] = (uint32_t)(p->a[1] * D);
    e.words[11] = wg_errword_op(ctx, "wgml_set_rows", "idx");
    e.words[12] = pe;
    e.words[13] = ie;
    e.words[14] = (uint32_t)(rows < UINT32_MAX ? rows : UINT32_MAX);
    e.words[15] = ce;
    e.words[16] = (uint32_t)cache->strides[0];
    e.words[17] = fe;
    e.words[18] = ff ? (uint32_t)ff->strides[0] : 0;
    wgml_tensor *y = NULL;
    st = wgml_view_reshape(r, 2, (int64_t[]){1, N}, &y);
    if (st == WGML_OK)
        st = wg_matvec_epi(x, w, &p->mm, &e, wg_xin_of(p), y);
    wgml_tensor_free(y);
    return st;
}

wgml_status wg_en_linear_rope_kv(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                                 wgml_tensor *out2)
{
    const wgml_tensor *idx = in[1], *x = in[2], *w = in[3], *pos = in[4], *ff = nin > 5 ? in[5] : NULL;
    const wgml_tensor *bias = nin > 6 ? in[6] : NULL;
    wgml_status st = WGML_OK;
    const char *what[] = {"cache", "idx", "x", "w", "pos"};
    for (int i = 0; i < 5 && st == WGML_OK; i++)
        st = wg_check_tensor(OP, what[i], in[i]);
    if (st == WGML_OK && ff)
        st = wg_check_tensor(OP, "freq_factors", ff);
    if (st == WGML_OK && bias)
        st = wg_check_tensor(OP, "bias", bias);
    if (st != WGML_OK)
        return st;
    if (!out2)
        return wg_fail(WGML_ERR_INTERNAL, "%s: no tensor for the rope's output", OP);
    st = one_dispatch(p, x, w, pos, ff, bias, idx, out, out2);
    if (st != WGML_ERR_UNSUPPORTED)
        return st;
    /* the unfused ops: y = linear(x, w) in scratch, r = rope(y), then
     * set_rows(cache, idx, r[:, h0:h1]) */
    int64_t T = out2->shape[0], N = w->shape[0], D = p->k; /* r is [T, N / D, D] */
    wgml_tensor *y = NULL, *y3 = NULL, *kv3 = NULL, *kv = NULL;
    const wgml_tensor *li[4] = {x, w, bias, NULL};
    if ((st = wg_scratch_tensor_raw(x->ctx, WGML_F32, 2, (int64_t[]){T, N}, &y)) == WGML_OK &&
        (st = wg_en_linear(p, li, bias ? 3 : 2, y, NULL)) == WGML_OK &&
        (st = wgml_view_reshape(y, 3, (int64_t[]){T, N / D, D}, &y3)) == WGML_OK) {
        const wgml_tensor *ri[3] = {y3, pos, ff};
        st = wg_op_def_get(WG_OP_ROPE)->encode(p, ri, ff ? 3 : 2, out2, NULL);
    }
    if (st == WGML_OK && (st = wgml_view_slice(out2, 1, p->a[0], p->a[1], 1, &kv3)) == WGML_OK &&
        (st = wgml_view_reshape(kv3, 2, (int64_t[]){T, (p->a[1] - p->a[0]) * D}, &kv)) == WGML_OK) {
        const wgml_tensor *si[3] = {out, idx, kv};
        st = wg_op_def_get(WG_OP_SET_ROWS)->encode(p, si, 3, out, NULL);
    }
    wgml_tensor_free(kv);
    wgml_tensor_free(kv3);
    wgml_tensor_free(y3);
    wgml_tensor_free(y);
    return st;
}
