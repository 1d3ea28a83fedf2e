/*
 * Moving tensor data between host and device.  Contiguous tensors go
 * straight through the buffer; views go through a contiguous staging
 * tensor and a strided copy kernel, so any layout can be read or written.
 */
#include "ops.h"

#include <stdlib.h>
#include <string.h>

static wgml_status io_check(const wgml_tensor *t, const void *p, uint64_t bytes, const char *fn)
{
    wgml_status st = wg_check_tensor(fn, "tensor", t);
    if (st != WGML_OK)
        return st;
    if (!p && bytes)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: host pointer is NULL", fn);
    if (bytes != wgml_tensor_nbytes(t))
        return wg_fail(WGML_ERR_SHAPE, "%s: %llu bytes given, the %s tensor holds %llu", fn,
                       (unsigned long long)bytes, wgml_dtype_name(t->dtype),
                       (unsigned long long)wgml_tensor_nbytes(t));
    return WGML_OK;
}

/* Quantised views: rows are contiguous blocks; walk the outer dims. */
static wgml_status quant_rows(const wgml_tensor *t, uint8_t *host, bool upload)
{
    const wg_dtype_info *d = wg_dtype(t->dtype);
    int64_t shape[4];
    wg_shape4(t, shape);
    wg_view4 v = wg_view4_of(t);
    uint64_t row = (uint64_t)shape[3] / d->block_elems * d->block_bytes;
    uint64_t k = 0;
    for (int64_t i = 0; i < shape[0]; i++)
        for (int64_t j = 0; j < shape[1]; j++)
            for (int64_t l = 0; l < shape[2]; l++, k++) {
                uint64_t el = v.offset + (uint64_t)(i * v.strides[0] + j * v.strides[1] + l * v.strides[2]);
                uint64_t off = el / d->block_elems * d->block_bytes;
                wgml_status st = upload ? wgml_buffer_write(t->st->buf, off, host + k * row, row)
                                        : wgml_buffer_read(t->st->buf, off, host + k * row, row);
                if (st != WGML_OK)
                    return st;
            }
    return WGML_OK;
}

static wgml_status staging(const wgml_tensor *t, wgml_tensor **out)
{
    return wgml_tensor_new(t->ctx, t->dtype, t->ndim, t->shape, out);
}

wgml_status wgml_tensor_upload(wgml_tensor *t, const void *src, uint64_t bytes)
{
    wgml_status st = io_check(t, src, bytes, "wgml_tensor_upload");
    if (st == WGML_OK)
        st = wg_check_out_writable("wgml_tensor_upload", "t", t);
    if (st != WGML_OK || bytes == 0)
        return st;
    if (wgml_tensor_is_contiguous(t))
        return wgml_buffer_write(t->st->buf, t->offset, src, bytes);
    if (!wg_dtype_is_plain(t->dtype))
        return quant_rows(t, (uint8_t *)src, true);
    wgml_tensor *tmp;
    if ((st = staging(t, &tmp)) != WGML_OK)
        return st;
    st = wgml_buffer_write(tmp->st->buf, 0, src, bytes);
    if (st == WGML_OK)
        st = wg_copy_impl(tmp, t);
    wgml_tensor_free(tmp);
    return st;
}

wgml_status wgml_tensor_download(const wgml_tensor *t, void *dst, uint64_t bytes)
{
    wgml_status st = io_check(t, dst, bytes, "wgml_tensor_download");
    if (st != WGML_OK)
        return st;
    if (bytes == 0)
        return wgml_ctx_sync(t->ctx);
    if (wgml_tensor_is_contiguous(t))
        return wgml_buffer_read(t->st->buf, t->offset, dst, bytes);
    if (!wg_dtype_is_plain(t->dtype))
        return quant_rows(t, dst, false);
    wgml_tensor *tmp;
    if ((st = staging(t, &tmp)) != WGML_OK)
        return st;
    st = wg_copy_impl(t, tmp);
    if (st == WGML_OK)
        st = wgml_buffer_read(tmp->st->buf, 0, dst, bytes);
    wgml_tensor_free(tmp);
    return st;
}
