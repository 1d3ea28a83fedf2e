/*
 * Tensors: dtype facts, creation, views, upload/download, and the shape
 * helpers every op family uses.
 */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const wg_dtype_info dtype_table[WGML_DTYPE_COUNT] = {
    [WGML_F32] = {"f32", 4, 1, WG_KIND_FLOAT, "f32"},
    [WGML_F16] = {"f16", 2, 1, WG_KIND_FLOAT, "f16"},
    [WGML_BF16] = {"bf16", 2, 1, WG_KIND_FLOAT, "bf16"},
    [WGML_I32] = {"i32", 4, 1, WG_KIND_INT, "i32"},
    [WGML_U32] = {"u32", 4, 1, WG_KIND_UINT, "u32"},
    [WGML_I8] = {"i8", 1, 1, WG_KIND_INT, "i8"},
    [WGML_U8] = {"u8", 1, 1, WG_KIND_UINT, "u8"},
    [WGML_BOOL] = {"bool", 1, 1, WG_KIND_BOOL, "bool"},
    /* GGUF block layouts: bytes per block, elements per block */
    [WGML_Q4_0] = {"q4_0", 18, 32, WG_KIND_QUANT, NULL},
    [WGML_Q4_1] = {"q4_1", 20, 32, WG_KIND_QUANT, NULL},
    [WGML_Q5_0] = {"q5_0", 22, 32, WG_KIND_QUANT, NULL},
    [WGML_Q5_1] = {"q5_1", 24, 32, WG_KIND_QUANT, NULL},
    [WGML_Q8_0] = {"q8_0", 34, 32, WG_KIND_QUANT, NULL},
    [WGML_Q2_K] = {"q2_K", 84, 256, WG_KIND_QUANT, NULL},
    [WGML_Q3_K] = {"q3_K", 110, 256, WG_KIND_QUANT, NULL},
    [WGML_Q4_K] = {"q4_K", 144, 256, WG_KIND_QUANT, NULL},
    [WGML_Q5_K] = {"q5_K", 176, 256, WG_KIND_QUANT, NULL},
    [WGML_Q6_K] = {"q6_K", 210, 256, WG_KIND_QUANT, NULL},
    [WGML_Q8_K] = {"q8_K", 292, 256, WG_KIND_QUANT, NULL},
    [WGML_IQ4_NL] = {"iq4_nl", 18, 32, WG_KIND_QUANT, NULL},
    [WGML_MXFP4] = {"mxfp4", 17, 32, WG_KIND_QUANT, NULL},
};

const wg_dtype_info *wg_dtype(wgml_dtype t)
{
    return (unsigned)t < WGML_DTYPE_COUNT ? &dtype_table[t] : NULL;
}

bool wg_dtype_is_float(wgml_dtype t) { return wg_dtype(t) && wg_dtype(t)->kind == WG_KIND_FLOAT; }
bool wg_dtype_is_plain(wgml_dtype t) { return wg_dtype(t) && wg_dtype(t)->kind != WG_KIND_QUANT; }

const char *wgml_dtype_name(wgml_dtype t) { return wg_dtype(t) ? wg_dtype(t)->name : NULL; }
size_t wgml_dtype_block_bytes(wgml_dtype t) { return wg_dtype(t) ? wg_dtype(t)->block_bytes : 0; }
size_t wgml_dtype_block_elems(wgml_dtype t) { return wg_dtype(t) ? wg_dtype(t)->block_elems : 0; }

/* ------------------------------------------------------------ create */

/* Dims and element counts are capped so that every product wgml forms from
 * them (elements x bytes per element, index x stride) fits in 64 bits with
 * room to spare: a dim at most 2^40, a tensor at most 2^42 elements (16 TiB
 * of f32, far past any device's maxBufferSize).  The count is checked
 * before each multiplication, so a shape whose product wraps 64 bits (u8
 * [694428065361, 26563938] wraps to 2) is refused, not given 2 bytes. */
#define WG_MAX_DIM ((int64_t)1 << 40)
#define WG_MAX_ELEMS ((uint64_t)1 << 42)

static wgml_status check_dims(const char *fn, int ndim, const int64_t *shape)
{
    if (ndim && !shape)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: shape is NULL for %d dims", fn, ndim);
    if (ndim < 0 || ndim > WGML_MAX_DIMS)
        return wg_fail(WGML_ERR_SHAPE, "%s: ndim %d: must be 0..%d", fn, ndim, WGML_MAX_DIMS);
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0 || shape[i] > WG_MAX_DIM)
            return wg_fail(WGML_ERR_SHAPE, "%s: dim %d is %lld (must be 0..2^40)", fn, i, (long long)shape[i]);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0)
            return WGML_OK; /* an empty tensor, whatever the other dims */
        if (n > WG_MAX_ELEMS / (uint64_t)shape[i])
            return wg_fail(WGML_ERR_SHAPE, "%s: more than 2^42 elements", fn);
        n *= (uint64_t)shape[i];
    }
    return WGML_OK;
}

static wgml_status check_shape(const char *fn, wgml_dtype t, int ndim, const int64_t *shape)
{
    if (!wg_dtype(t))
        return wg_fail(WGML_ERR_DTYPE, "%s: unknown dtype %d", fn, (int)t);
    wgml_status st = check_dims(fn, ndim, shape);
    if (st != WGML_OK)
        return st;
    uint32_t be = wg_dtype(t)->block_elems;
    if (be > 1 && (ndim == 0 || shape[ndim - 1] % be != 0))
        return wg_fail(WGML_ERR_SHAPE, "%s: %s rows must be a multiple of %u elements", fn, wg_dtype(t)->name, be);
    return WGML_OK;
}

static void set_contiguous(wgml_tensor *t)
{
    /* An empty tensor may have dims whose product passes 2^63 ([0, 2^40,
     * 2^40]): its strides are never used to address anything, so the
     * running product stops at 0 instead of overflowing. */
    int64_t s = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        t->strides[i] = s;
        s = t->shape[i] && s <= INT64_MAX / t->shape[i] ? s * t->shape[i] : 0;
    }
}

uint64_t wgml_tensor_nbytes(const wgml_tensor *t)
{
    if (!t)
        return 0;
    const wg_dtype_info *d = wg_dtype(t->dtype);
    return (uint64_t)wgml_tensor_nelem(t) / d->block_elems * d->block_bytes;
}

wgml_status wgml_tensor_new(wgml_ctx *ctx, wgml_dtype dt, int ndim, const int64_t *shape, wgml_tensor **out)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!out)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_tensor_new: out is NULL");
    *out = NULL;
    if ((st = check_shape("wgml_tensor_new", dt, ndim, shape)) != WGML_OK)
        return st;
    wgml_tensor *t = calloc(1, sizeof *t);
    wg_storage *s = calloc(1, sizeof *s);
    if (!t || !s) {
        free(t);
        free(s);
        return wg_fail(WGML_ERR_OOM, "out of host memory");
    }
    t->ctx = ctx;
    t->dtype = dt;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    set_contiguous(t);
    if ((st = wgml_buffer_create(ctx, wgml_tensor_nbytes(t), &s->buf)) != WGML_OK) {
        free(t);
        free(s);
        return st;
    }
    s->refs = 1;
    t->st = s;
    *out = t;
    return WGML_OK;
}

void wgml_tensor_free(wgml_tensor *t)
{
    if (!t)
        return;
    if (t->st && --t->st->refs == 0) {
        wgml_buffer_destroy(t->st->buf);
        free(t->st);
    }
    free(t);
}

wgml_dtype wgml_tensor_dtype(const wgml_tensor *t) { return t ? t->dtype : WGML_DTYPE_COUNT; }
int wgml_tensor_ndim(const wgml_tensor *t) { return t ? t->ndim : 0; }

int wg_axis(const wgml_tensor *t, int axis)
{
    if (axis < 0)
        axis += t->ndim;
    return axis >= 0 && axis < t->ndim ? axis : -1;
}

int64_t wgml_tensor_dim(const wgml_tensor *t, int axis)
{
    int a = t ? wg_axis(t, axis) : -1;
    return a < 0 ? 0 : t->shape[a];
}

int64_t wgml_tensor_stride(const wgml_tensor *t, int axis)
{
    int a = t ? wg_axis(t, axis) : -1;
    return a < 0 ? 0 : t->strides[a];
}

int64_t wgml_tensor_nelem(const wgml_tensor *t)
{
    if (!t)
        return 0;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0)
            return 0; /* before any product can pass 2^63 (empty tensors allow 2^40 dims) */
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

int wgml_tensor_is_contiguous(const wgml_tensor *t)
{
    if (!t)
        return 0;
    if (wgml_tensor_nelem(t) == 0) /* nothing to address (and dims may multiply past 2^63) */
        return 1;
    int64_t s = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != s)
            return 0;
        s *= t->shape[i];
    }
    return 1;
}

/* ------------------------------------------------------------ views */

static wgml_status view_new(const wgml_tensor *t, wgml_tensor **out)
{
    if (!t || !out)
        return wg_fail(WGML_ERR_INVALID_ARG, "view: tensor or out is NULL");
    wgml_tensor *v = malloc(sizeof *v);
    if (!v)
        return wg_fail(WGML_ERR_OOM, "out of host memory");
    *v = *t;
    v->st->refs++;
    *out = v;
    return WGML_OK;
}

wgml_status wg_tensor_dup(const wgml_tensor *t, wgml_tensor **out) { return view_new(t, out); }

static wgml_status scratch_tensor(wgml_ctx *ctx, wgml_dtype dt, int ndim, const int64_t *shape, bool zero,
                                  wgml_tensor **out)
{
    wgml_status st = check_shape("scratch", dt, ndim, shape);
    if (st != WGML_OK)
        return st;
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (uint64_t)shape[i];
    uint64_t bytes = n / wg_dtype(dt)->block_elems * wg_dtype(dt)->block_bytes;
    const wgml_tensor *base = NULL;
    uint64_t off = 0;
    if ((st = wg_scratch_take(ctx, bytes, &base, &off)) == WGML_ERR_LIMIT)
        return wgml_tensor_new(ctx, dt, ndim, shape, out); /* the pool: zeroed */
    if (st != WGML_OK || (st = wg_tensor_alias(base, off, dt, ndim, shape, out)) != WGML_OK)
        return st;
    /* Zeroed like a new tensor, by a fill that replays with the op. */
    if (zero && (st = wgml_buffer_fill(base->st->buf, (*out)->offset, bytes, 0)) != WGML_OK) {
        wgml_tensor_free(*out);
        *out = NULL;
    }
    return st;
}

wgml_status wg_scratch_tensor(wgml_ctx *ctx, wgml_dtype dt, int ndim, const int64_t *shape, wgml_tensor **out)
{
    return scratch_tensor(ctx, dt, ndim, shape, true, out);
}

wgml_status wg_scratch_tensor_raw(wgml_ctx *ctx, wgml_dtype dt, int ndim, const int64_t *shape, wgml_tensor **out)
{
    return scratch_tensor(ctx, dt, ndim, shape, false, out);
}

wgml_status wg_tensor_alias(const wgml_tensor *base, uint64_t byte_offset, wgml_dtype dt, int ndim,
                            const int64_t *shape, wgml_tensor **out)
{
    wgml_status st = check_shape("wg_tensor_alias", dt, ndim, shape);
    if (st != WGML_OK || (st = view_new(base, out)) != WGML_OK)
        return st;
    wgml_tensor *v = *out;
    v->dtype = dt;
    v->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        v->shape[i] = shape[i];
    set_contiguous(v);
    const wg_dtype_info *d = wg_dtype(dt);
    uint64_t bytes = wgml_tensor_nbytes(v);
    byte_offset += base->offset;
    if (byte_offset % d->block_bytes || byte_offset + bytes > wgml_buffer_size(base->st->buf)) {
        wgml_tensor_free(v);
        *out = NULL;
        return wg_fail(WGML_ERR_INTERNAL, "wg_tensor_alias: %llu bytes at %llu do not fit a %llu-byte buffer",
                       (unsigned long long)bytes, (unsigned long long)byte_offset,
                       (unsigned long long)wgml_buffer_size(base->st->buf));
    }
    v->offset = byte_offset;
    return WGML_OK;
}

static bool quant_inner_axis(const wgml_tensor *t, int axis)
{
    return wg_dtype(t->dtype)->kind == WG_KIND_QUANT && axis == t->ndim - 1;
}

wgml_status wgml_view_permute(const wgml_tensor *t, const int *perm, wgml_tensor **out)
{
    if (!t || !perm)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_view_permute: NULL argument");
    unsigned seen = 0;
    for (int i = 0; i < t->ndim; i++) {
        int p = perm[i] < 0 ? perm[i] + t->ndim : perm[i];
        if (p < 0 || p >= t->ndim || (seen >> p) & 1)
            return wg_fail(WGML_ERR_INDEX, "wgml_view_permute: perm is not a permutation of 0..%d", t->ndim - 1);
        seen |= 1u << p;
    }
    if (wg_dtype(t->dtype)->kind == WG_KIND_QUANT && perm[t->ndim - 1] != t->ndim - 1 &&
        perm[t->ndim - 1] != -1)
        return wg_fail(WGML_ERR_DTYPE, "wgml_view_permute: quantised rows cannot move off the last axis");
    wgml_status st = view_new(t, out);
    if (st != WGML_OK)
        return st;
    for (int i = 0; i < t->ndim; i++) {
        int p = perm[i] < 0 ? perm[i] + t->ndim : perm[i];
        (*out)->shape[i] = t->shape[p];
        (*out)->strides[i] = t->strides[p];
    }
    return WGML_OK;
}

wgml_status wgml_view_transpose(const wgml_tensor *t, int a0, int a1, wgml_tensor **out)
{
    if (!t)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_view_transpose: tensor is NULL");
    int x = wg_axis(t, a0), y = wg_axis(t, a1);
    if (x < 0 || y < 0)
        return wg_fail(WGML_ERR_INDEX, "wgml_view_transpose: axes %d, %d out of range for %d dims", a0, a1, t->ndim);
    int perm[WGML_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        perm[i] = i;
    perm[x] = y;
    perm[y] = x;
    return wgml_view_permute(t, perm, out);
}

wgml_status wgml_view_slice(const wgml_tensor *t, int axis, int64_t start, int64_t stop, int64_t step,
                            wgml_tensor **out)
{
    if (!t)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_view_slice: tensor is NULL");
    int a = wg_axis(t, axis);
    if (a < 0)
        return wg_fail(WGML_ERR_INDEX, "wgml_view_slice: axis %d out of range for %d dims", axis, t->ndim);
    if (step < 1)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_view_slice: step %lld must be >= 1", (long long)step);
    if (start < 0 || stop < start || stop > t->shape[a])
        return wg_fail(WGML_ERR_INDEX, "wgml_view_slice: [%lld, %lld) outside 0..%lld", (long long)start,
                       (long long)stop, (long long)t->shape[a]);
    if (quant_inner_axis(t, a))
        return wg_fail(WGML_ERR_DTYPE, "wgml_view_slice: quantised rows cannot be sliced inside");
    wgml_status st = view_new(t, out);
    if (st != WGML_OK)
        return st;
    const wg_dtype_info *d = wg_dtype(t->dtype);
    (*out)->offset += (uint64_t)(start * t->strides[a]) / d->block_elems * d->block_bytes;
    /* (stop - start - 1) / step + 1, not (stop - start + step - 1) / step,
     * which overflows for a step near INT64_MAX; a dim of at most one
     * element keeps its stride, so stride x step is formed only when
     * step < shape, where it stays inside the storage's extent. */
    int64_t n = stop > start ? (stop - start - 1) / step + 1 : 0;
    (*out)->shape[a] = n;
    (*out)->strides[a] = n > 1 ? t->strides[a] * step : t->strides[a];
    return WGML_OK;
}

/* Strides for shape ns over t's elements without moving them, when they
 * exist (numpy's rule): each run of old dims that multiplies out to a run
 * of new dims must be contiguous within itself.  Splitting the last dim
 * of a column slice ([T, Q] of a fused [T, Q + 2 KV] projection into [T,
 * H, D]) is such a case. */
static bool nocopy_strides(const wgml_tensor *t, int ndim, const int64_t *ns, int64_t *nst)
{
    int64_t od[WGML_MAX_DIMS], os[WGML_MAX_DIMS];
    int on = 0;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] != 1)
            od[on] = t->shape[i], os[on++] = t->strides[i];
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < ndim && oi < on) {
        int64_t np = ns[ni], op = od[oi];
        while (np != op) {
            if (np < op) {
                if (nj >= ndim)
                    return false;
                np *= ns[nj++];
            } else {
                if (oj >= on)
                    return false;
                op *= od[oj++];
            }
        }
        for (int ok = oi; ok < oj - 1; ok++)
            if (os[ok] != od[ok + 1] * os[ok + 1])
                return false;
        nst[nj - 1] = os[oj - 1];
        for (int nk = nj - 1; nk > ni; nk--)
            nst[nk - 1] = nst[nk] * ns[nk];
        ni = nj++;
        oi = oj++;
    }
    for (; ni < ndim; ni++) /* trailing dims of 1 */
        nst[ni] = 1;
    return true;
}

wgml_status wgml_view_reshape(const wgml_tensor *t, int ndim, const int64_t *shape, wgml_tensor **out)
{
    if (!t)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_view_reshape: tensor is NULL");
    bool contig = wgml_tensor_is_contiguous(t);
    if (!contig && !wg_dtype_is_plain(t->dtype))
        return wg_fail(WGML_ERR_SHAPE, "wgml_view_reshape: a quantised view must be contiguous (copy it first)");
    int64_t s[WGML_MAX_DIMS];
    int infer = -1;
    int64_t n = 1;
    if (ndim && !shape)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_view_reshape: shape is NULL for %d dims", ndim);
    if (ndim < 0 || ndim > WGML_MAX_DIMS)
        return wg_fail(WGML_ERR_SHAPE, "wgml_view_reshape: ndim %d: must be 0..%d", ndim, WGML_MAX_DIMS);
    for (int i = 0; i < ndim; i++) {
        s[i] = shape[i];
        if (s[i] == -1 && infer < 0)
            infer = i;
        else if (s[i] < 0 || s[i] > WG_MAX_DIM)
            return wg_fail(WGML_ERR_SHAPE, "wgml_view_reshape: dim %d is %lld", i, (long long)s[i]);
        else if (s[i] && n > (int64_t)WG_MAX_ELEMS / s[i])
            return wg_fail(WGML_ERR_SHAPE, "wgml_view_reshape: more than 2^42 elements");
        else
            n *= s[i];
    }
    int64_t total = wgml_tensor_nelem(t);
    if (infer >= 0) {
        if (n == 0 || total % n)
            return wg_fail(WGML_ERR_SHAPE, "wgml_view_reshape: cannot infer dim %d", infer);
        s[infer] = total / n;
        n *= s[infer];
    }
    if (n != total)
        return wg_fail(WGML_ERR_SHAPE, "wgml_view_reshape: %lld elements cannot become %lld", (long long)total,
                       (long long)n);
    wgml_status st = check_shape("wgml_view_reshape", t->dtype, ndim, s);
    if (st != WGML_OK)
        return st;
    int64_t ns[WGML_MAX_DIMS];
    if (!contig && total && !nocopy_strides(t, ndim, s, ns))
        return wg_fail(WGML_ERR_SHAPE, "wgml_view_reshape: this view's strides cannot take the new shape without a "
                       "copy (copy it first)");
    if ((st = view_new(t, out)) != WGML_OK)
        return st;
    (*out)->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        (*out)->shape[i] = s[i];
    set_contiguous(*out);
    if (!contig && total)
        memcpy((*out)->strides, ns, sizeof(int64_t) * (size_t)ndim);
    return WGML_OK;
}

wgml_status wgml_view_broadcast(const wgml_tensor *t, int ndim, const int64_t *shape, wgml_tensor **out)
{
    if (!t || (ndim && !shape))
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_view_broadcast: NULL argument");
    wgml_status st = check_dims("wgml_view_broadcast", ndim, shape);
    if (st != WGML_OK)
        return st;
    if (ndim < t->ndim)
        return wg_fail(WGML_ERR_SHAPE, "wgml_view_broadcast: cannot go from %d to %d dims", t->ndim, ndim);
    if (wg_dtype(t->dtype)->kind == WG_KIND_QUANT)
        return wg_fail(WGML_ERR_DTYPE, "wgml_view_broadcast: quantised tensors cannot broadcast");
    int64_t st_[WGML_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        int j = i - (ndim - t->ndim);
        int64_t d = j >= 0 ? t->shape[j] : 1;
        if (d != shape[i] && d != 1)
            return wg_fail(WGML_ERR_SHAPE, "wgml_view_broadcast: dim %d is %lld, cannot become %lld", i,
                           (long long)d, (long long)shape[i]);
        st_[i] = d == shape[i] && j >= 0 ? t->strides[j] : 0;
    }
    st = view_new(t, out);
    if (st != WGML_OK)
        return st;
    (*out)->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        (*out)->shape[i] = shape[i];
        (*out)->strides[i] = st_[i];
    }
    return WGML_OK;
}

/* ------------------------------------------------------------ helpers */

wg_view4 wg_view4_of(const wgml_tensor *t)
{
    wg_view4 v;
    int pad = 4 - t->ndim;
    const wg_dtype_info *d = wg_dtype(t->dtype);
    for (int i = 0; i < 4; i++) {
        v.shape[i] = i < pad ? 1 : t->shape[i - pad];
        v.strides[i] = i < pad ? 0 : t->strides[i - pad];
    }
    v.offset = t->offset / d->block_bytes * d->block_elems;
    return v;
}

bool wg_view4_bcast(const wgml_tensor *t, const int64_t iter[4], wg_view4 *out)
{
    wg_view4 v = wg_view4_of(t);
    for (int i = 0; i < 4; i++) {
        if (v.shape[i] == iter[i])
            continue;
        if (v.shape[i] != 1)
            return false;
        v.shape[i] = iter[i];
        v.strides[i] = 0;
    }
    *out = v;
    return true;
}

void wg_shape4(const wgml_tensor *t, int64_t out[4])
{
    int pad = 4 - t->ndim;
    for (int i = 0; i < 4; i++)
        out[i] = i < pad ? 1 : t->shape[i - pad];
}

int64_t wg_nelem4(const int64_t s[4]) { return s[0] * s[1] * s[2] * s[3]; }

uint64_t wg_span_last(uint64_t offset, const int64_t strides[4], const int64_t iter[4])
{
    uint64_t e = offset;
    for (int i = 0; i < 4; i++)
        e += (uint64_t)(iter[i] - 1) * (uint64_t)strides[i];
    return e;
}

bool wg_view4_contiguous(const wg_view4 *v)
{
    if (!v->shape[0] || !v->shape[1] || !v->shape[2] || !v->shape[3])
        return true; /* empty: nothing to address */
    int64_t s = 1;
    for (int i = 3; i >= 0; i--) {
        if (v->shape[i] != 1 && v->strides[i] != s)
            return false;
        s *= v->shape[i];
    }
    return true;
}

bool wg_broadcast_shapes(const wgml_tensor *a, const wgml_tensor *b, int *ndim, int64_t shape[4])
{
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - a->ndim), ib = i - (n - b->ndim);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        shape[i] = da == 1 ? db : da;
    }
    *ndim = n;
    return true;
}

const char *wg_shape_str(const wgml_tensor *t, char *buf, size_t n)
{
    size_t u = 0;
    int w = snprintf(buf, n, "[");
    u += w > 0 ? (size_t)w : 0;
    for (int i = 0; i < t->ndim && u < n; i++) {
        w = snprintf(buf + u, n - u, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
        u += w > 0 ? (size_t)w : 0;
    }
    if (u < n)
        snprintf(buf + u, n - u, "]");
    return buf;
}

wgml_status wg_check_tensor(const char *op, const char *what, const wgml_tensor *t)
{
    if (!t)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: %s is NULL", op, what);
    return wg_check(t->ctx);
}

bool wg_same_ctx(const wgml_tensor *a, const wgml_tensor *b) { return !a || !b || a->ctx == b->ctx; }

wgml_status wg_check_out(const char *op, const wgml_tensor *out, int dtype, int ndim, const int64_t *shape)
{
    wgml_status st = wg_check_tensor(op, "out", out);
    if (st != WGML_OK)
        return st;
    if (dtype >= 0 && out->dtype != (wgml_dtype)dtype)
        return wg_fail(WGML_ERR_DTYPE, "%s: out is %s, expected %s", op, wgml_dtype_name(out->dtype),
                       wgml_dtype_name((wgml_dtype)dtype));
    if (shape) {
        bool ok = out->ndim == ndim;
        for (int i = 0; ok && i < ndim; i++)
            ok = out->shape[i] == shape[i];
        if (!ok) {
            char a[96], b[96];
            wgml_tensor tmp = {0};
            tmp.ndim = ndim;
            for (int i = 0; i < ndim; i++)
                tmp.shape[i] = shape[i];
            return wg_fail(WGML_ERR_SHAPE, "%s: out has shape %s, expected %s", op, wg_shape_str(out, a, sizeof a),
                           wg_shape_str(&tmp, b, sizeof b));
        }
    }
    return WGML_OK;
}
