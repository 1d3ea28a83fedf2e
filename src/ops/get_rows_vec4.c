/*
 * get_rows fast path (rows_vec4.wgsl): whole contiguous rows gathered by a
 * 1-D index 16 bytes at a time, for any plain dtype whose rows are whole
 * 16-byte vectors (f32 rows of 4k elements, f16 of 8k, u8 of 16k): the
 * bytes move untouched.  The generic indexing kernel decomposes every
 * element's coordinate and re-reads its index; on an H100 that ran at half
 * of copy bandwidth, this path at 0.97 of it.  The caller (indexing.c)
 * has recorded the indices' CHECK pass; the kernel writes nothing when it
 * failed (the error word, bound last).
 */
#include "indexing.h"

/* The common embedding / gather-tokens case. */
bool wg_get_rows_vec4(const wgml_tensor *src, const wgml_tensor *idx, wgml_tensor *out, wgml_status *st)
{
    wgml_ctx *ctx = src->ctx;
    if (idx->ndim != 1 || src->dtype != out->dtype || !wg_dtype_is_plain(src->dtype) ||
        src->st == out->st || idx->st == out->st || /* one buffer read-only and writable: not allowed */
        !wgml_tensor_is_contiguous(src) || !wgml_tensor_is_contiguous(out) || !wgml_tensor_is_contiguous(idx))
        return false;
    uint64_t row = (uint64_t)(wgml_tensor_nelem(src) / (src->shape[0] ? src->shape[0] : 1));
    uint64_t rb = row * wg_dtype(src->dtype)->block_bytes; /* bytes per row */
    uint64_t tb = wgml_tensor_nbytes(src), ob = wgml_tensor_nbytes(out), n4 = ob / 16;
    uint64_t cap = wg_window_cap(ctx);
    if (tb == 0 || rb % 16 || src->offset % 16 || out->offset % 16 || tb > cap || ob > cap || n4 == 0 || n4 > 0xffffff00ull)
        return false;
    static const wg_kernel_ref ref = {"rows_vec4.wgsl", "rows_vec4", NULL, 4, 11};
    wgml_kernel *k;
    if ((*st = wg_kernel_get(ctx, &ref, &k)) != WGML_OK)
        return true;
    uint64_t rem[3];
    wg_binding b[4] = {wg_bind_from(src->st->buf, src->offset, tb, &rem[0]),
                       wg_bind_from(idx->st->buf, idx->offset, (uint64_t)idx->shape[0] * 4, &rem[1]),
                       wg_bind_from(out->st->buf, out->offset, ob, &rem[2]), wg_errword_bind(ctx)};
    uint32_t prm[8] = {(uint32_t)n4, (uint32_t)(rb / 16), (uint32_t)(rem[0] / 16), (uint32_t)(rem[2] / 16),
                       (uint32_t)(rem[1] / 4), (uint32_t)src->shape[0], 0, 0};
    *st = wg_dispatch(ctx, k, b, 4, prm, sizeof prm, (uint32_t)((n4 + 255) / 256), 1, 1);
    return true;
}

