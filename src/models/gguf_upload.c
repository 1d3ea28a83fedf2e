/* GGUF tensor -> wgml_tensor.  Kept apart from gguf.c so the GPU-free
 * reader links without the runtime (fuzzing, the ASan replay test). */
#include "wgml_llm.h"

wgml_status wgml_gguf_upload(wgml_ctx *ctx, const wgml_gguf *g, const char *name, wgml_tensor **out)
{
    if (!ctx || !g || !name || !out)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_gguf_upload: NULL argument");
    *out = NULL;
    int64_t i = wgml_gguf_find_tensor(g, name);
    if (i < 0)
        return wgml_error(WGML_ERR_INDEX, "gguf: no tensor '%s'", name);
    wgml_gguf_tensor info;
    const void *data;
    uint64_t nbytes;
    wgml_status st = wgml_gguf_tensor_info(g, i, &info);
    if (st || (st = wgml_gguf_tensor_data(g, i, &data, &nbytes)))
        return st;
    /* GGUF's block types lay rows out exactly as wgml's do, and open()
     * checked that each row (ne[0]) is a whole number of blocks. */
    wgml_tensor *t;
    if ((st = wgml_tensor_new(ctx, info.dtype, info.ndim, info.shape, &t)))
        return st;
    if ((st = wgml_tensor_upload(t, data, nbytes))) {
        wgml_tensor_free(t);
        return st;
    }
    *out = t;
    return WGML_OK;
}
