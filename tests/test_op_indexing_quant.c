/* get_rows and embedding on quantised tables, for every GGUF type, with
 * index tensors in every layout a view can have: contiguous, at an offset
 * that is not a multiple of the storage-offset alignment, step-sliced,
 * permuted and broadcast (stride 0), as 1-D, batched 2-D and 3-D indices.
 * The reference is the CPU dequantiser (quant_ref*.c) followed by the
 * plain get_rows reference.  set_rows into q8_0 / q4_0 through the same
 * layouts must write what contiguous indices write.
 *
 * Tolerance: as test_op_quant.c (rtol 5e-7 plus 2^-20 of the table's
 * largest |value|, the GPU may fuse the dequantiser's products), plus one
 * unit of a 16-bit output's rounding (t_compare). */
#include "ops/indexing.h"
#include "quant_table.h"

typedef enum ix_layout { L_CONTIG, L_OFFSET, L_STEP, L_PERMUTED, L_BROADCAST, L_COUNT } ix_layout;
static const char *const layout_names[L_COUNT] = {"contiguous", "offset", "step", "permuted", "broadcast"};

static int64_t nelem(int ndim, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= s[d];
    return n;
}

/* An i32 view of logical `shape` in `layout` over a fresh base tensor
 * (*base, freed by the caller) holding random values in [0, limit), all
 * different when `distinct` (limit must then cover the base); *vals gets
 * the view's values in logical order (caller frees). */
static wgml_tensor *idx_view(ix_layout layout, int ndim, const int64_t *shape, int64_t limit, bool distinct,
                             wgml_tensor **base, int32_t **vals)
{
    int64_t n = nelem(ndim, shape), bs[4];
    int bnd = ndim;
    memcpy(bs, shape, sizeof(int64_t) * (size_t)ndim);
    switch (layout) {
    case L_OFFSET: /* 3 elements in: 12 bytes, under any storage-offset alignment */
        bnd = 1;
        bs[0] = n + 3;
        break;
    case L_STEP:
        bs[ndim - 1] = 2 * shape[ndim - 1] + 1;
        break;
    case L_PERMUTED:
        for (int d = 0; d < ndim; d++)
            bs[d] = shape[ndim - 1 - d];
        break;
    case L_BROADCAST:
        bs[0] = 1;
        break;
    default:
        break;
    }
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, bnd, bs, base));
    int64_t bn = nelem(bnd, bs);
    int32_t *bv = malloc(sizeof(int32_t) * (size_t)(distinct ? limit : bn));
    for (int64_t i = 0; i < (distinct ? limit : bn); i++)
        bv[i] = (int32_t)(distinct ? i : (int64_t)t_range(0, (uint64_t)limit - 1));
    for (int64_t i = 0; distinct && i < bn; i++) { /* a random prefix of a permutation */
        int64_t j = i + (int64_t)t_range(0, (uint64_t)(limit - 1 - i));
        int32_t t = bv[i];
        bv[i] = bv[j];
        bv[j] = t;
    }
    CHECK_OK(wgml_tensor_upload(*base, bv, (uint64_t)bn * 4));
    free(bv);
    wgml_tensor *v = NULL, *tmp = NULL;
    const int rev[4] = {ndim - 1, ndim - 2, ndim - 3, ndim - 4};
    switch (layout) {
    case L_CONTIG: CHECK_OK(wgml_view_reshape(*base, ndim, shape, &v)); break;
    case L_OFFSET:
        CHECK_OK(wgml_view_slice(*base, 0, 3, 3 + n, 1, &tmp));
        CHECK_OK(wgml_view_reshape(tmp, ndim, shape, &v));
        wgml_tensor_free(tmp);
        break;
    case L_STEP: CHECK_OK(wgml_view_slice(*base, ndim - 1, 1, bs[ndim - 1], 2, &v)); break;
    case L_PERMUTED: CHECK_OK(wgml_view_permute(*base, rev, &v)); break;
    case L_BROADCAST: CHECK_OK(wgml_view_broadcast(*base, ndim, shape, &v)); break;
    default: break;
    }
    *vals = malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (v)
        CHECK_OK(wgml_tensor_download(v, *vals, (uint64_t)n * 4));
    return v;
}

/* One call: get_rows of table [B..., rows, cols] (tndim dims) by an idx
 * of indim dims, or (emb) embedding of a [rows, cols] table by ids of
 * indim dims; out dtype odt. */
static void check_one(wgml_dtype qt, bool emb, int tndim, int indim, ix_layout layout, wgml_dtype odt)
{
    const int64_t cols = (int64_t)wgml_dtype_block_elems(qt), rows = 5;
    int64_t ts[4] = {2, 3, rows, cols}, is[3] = {2, 3, 4}, os[4];
    int64_t *tsh = ts + (emb ? 2 : 4 - tndim), *ish = is + 3 - indim;
    int kb = emb ? 0 : indim - 1; /* table dim the indices pick */
    float *deq = NULL;
    wgml_tensor *table = quant_tensor(qt, emb ? 2 : tndim, tsh, &deq, NULL);
    wgml_tensor *base = NULL;
    int32_t *iv = NULL;
    wgml_tensor *idx = idx_view(layout, indim, ish, rows, false, &base, &iv);
    int ondim;
    if (emb) {
        memcpy(os, ish, sizeof(int64_t) * (size_t)indim);
        os[indim] = cols;
        ondim = indim + 1;
    } else {
        memcpy(os, tsh, sizeof(int64_t) * (size_t)tndim);
        os[kb] = ish[kb];
        ondim = tndim;
    }
    wgml_tensor *out = t_poisoned(odt, ondim, os);
    char what[96];
    snprintf(what, sizeof what, "%s %s->%s idx %dD %s", emb ? "embedding" : "get_rows", wgml_dtype_name(qt),
             wgml_dtype_name(odt), indim, layout_names[layout]);
    wgml_status st = emb ? wgml_embedding(table, idx, out) : wgml_get_rows(table, idx, out);
    CHECK(st == WGML_OK, "%s: %s: %s", what, wgml_status_name(st), wgml_last_error());
    if (st == WGML_OK) {
        int64_t tn = nelem(emb ? 2 : tndim, tsh), on = nelem(ondim, os), ni = nelem(indim, ish);
        double *src = malloc(sizeof(double) * (size_t)tn), *want = malloc(sizeof(double) * (size_t)on);
        for (int64_t i = 0; i < tn; i++)
            src[i] = deq[i];
        if (emb)
            wg_get_rows_ref(2, tsh, src, 1, &ni, iv, want);
        else
            wg_get_rows_ref(tndim, tsh, src, indim, ish, iv, want);
        double *got = t_values(out);
        CHECK(t_compare(what, odt, got, want, on, 5e-7, block_atol(deq, tn)) == 0, "%s", what);
        free(got);
        free(want);
        free(src);
    }
    free(iv);
    free(deq);
    wgml_tensor_free(out);
    wgml_tensor_free(idx);
    wgml_tensor_free(base);
    wgml_tensor_free(table);
}

static const wgml_dtype outs[3] = {WGML_F32, WGML_F16, WGML_BF16};

/* get_rows: [rows, cols] by 1-D idx, [2, rows, cols] by 2-D idx and
 * [2, 3, rows, cols] by 3-D idx, every layout. */
static void t_get_rows_layouts(void)
{
    for (size_t k = 0; k < NQ; k++)
        for (int l = 0; l < L_COUNT; l++)
            for (int nd = 1; nd <= 3; nd++)
                check_one(qtypes[k], false, nd + 1, nd, (ix_layout)l, outs[(k + (size_t)l) % 3]);
}

/* embedding: a [rows, cols] table by 1-D, 2-D and 3-D ids, every layout. */
static void t_embedding_layouts(void)
{
    for (size_t k = 0; k < NQ; k++)
        for (int l = 0; l < L_COUNT; l++)
            for (int nd = 1; nd <= 3; nd++)
                check_one(qtypes[k], true, 2, nd, (ix_layout)l, outs[(k + (size_t)l + 1) % 3]);
}

/* set_rows into q8_0 / q4_0 through every index layout writes the same
 * bytes as through a contiguous copy of the same indices (the quantiser
 * itself is tested in test_op_quant.c).  Indices are distinct, so the
 * view itself reaches the kernel (duplicates go through a de-duplicated
 * contiguous copy). */
static void t_set_rows_layouts(void)
{
    const wgml_dtype ts[2] = {WGML_Q8_0, WGML_Q4_0};
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < L_COUNT; l++) {
            const int64_t rows = 24, cols = 64, is[2] = {2, 4}, ss[3] = {2, 4, cols}, ds[3] = {2, rows, cols};
            float *deq = NULL;
            uint8_t *raw = NULL;
            wgml_tensor *dst[2] = {quant_tensor(ts[k], 3, ds, &deq, &raw), NULL}, *base = NULL, *flat = NULL;
            CHECK_OK(wgml_tensor_new(t_ctx, ts[k], 3, ds, &dst[1]));
            size_t bytes = wgml_tensor_nbytes(dst[0]);
            if (dst[1])
                CHECK_OK(wgml_tensor_upload(dst[1], raw, bytes));
            t_tensor src = t_random(WGML_F32, 3, ss, -4, 4);
            int32_t *iv = NULL;
            wgml_tensor *idx = idx_view((ix_layout)l, 2, is, rows, true, &base, &iv);
            CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, is, &flat));
            if (flat)
                CHECK_OK(wgml_tensor_upload(flat, iv, sizeof(int32_t) * 8));
            wgml_status st = wgml_set_rows(dst[0], idx, src.t);
            CHECK(st == WGML_OK, "set_rows %s idx %s: %s: %s", wgml_dtype_name(ts[k]), layout_names[l],
                  wgml_status_name(st), wgml_last_error());
            CHECK_OK(wgml_set_rows(dst[1], flat, src.t));
            uint8_t *got[2] = {malloc(bytes), malloc(bytes)};
            for (int i = 0; i < 2; i++)
                CHECK_OK(wgml_tensor_download(dst[i], got[i], bytes));
            CHECK(memcmp(got[0], got[1], bytes) == 0, "set_rows %s idx %s differs from contiguous indices",
                  wgml_dtype_name(ts[k]), layout_names[l]);
            free(got[0]);
            free(got[1]);
            free(iv);
            free(raw);
            free(deq);
            t_free(&src);
            wgml_tensor_free(flat);
            wgml_tensor_free(idx);
            wgml_tensor_free(base);
            wgml_tensor_free(dst[0]);
            wgml_tensor_free(dst[1]);
        }
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"get_rows_quant_index_layouts", t_get_rows_layouts},
        {"embedding_quant_index_layouts", t_embedding_layouts},
        {"set_rows_quant_index_layouts", t_set_rows_layouts},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
