/*
 * Write hazards: an op's output must not overlap what it reads, unless the
 * output is the very same view as an input and the op is safe in place
 * (each element, or each row, is read by the invocation that writes it
 * before it writes).  A partial overlap (unary with x = base[0:999] and
 * out = base[1:1000]; a copy into the source's own transposed view; roll
 * or flip with out == x) would make results depend on the GPU's order of
 * writes, and an output with a stride-0 (broadcast) dim writes each element
 * many times; both are refused with WGML_ERR_INVALID_ARG rather than run.
 *
 * Two views of one storage with one dtype are compared in element (or
 * quantised block) units; a graph arena's tensors of different dtypes by
 * byte hulls.  It is exact for views
 * whose strides nest (each stride exceeds the extent of the smaller ones),
 * which every view made by slicing, stepping, permuting or reshaping a
 * contiguous tensor has: the smaller view's elements are enumerated and each
 * is looked up in the other by greedy decomposition.  Views it cannot decide
 * cheaply (strides that do not nest, or more than 2^22 elements on both
 * sides inside a common byte range) count as overlapping: refusing a legal
 * call says so in its message, while running an illegal one would be
 * silently wrong.
 */
#include "ops.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ENUM_CAP ((int64_t)1 << 22)

/* A view in element units with its size-1 and stride-0 dims dropped (a
 * stride-0 dim of an input only repeats elements), strides positive and
 * sorted descending. */
typedef struct flat_view {
    int n;
    int64_t base;
    int64_t shape[WGML_MAX_DIMS];
    int64_t stride[WGML_MAX_DIMS];
} flat_view;

static flat_view flatten(const wgml_tensor *t)
{
    const wg_dtype_info *d = wg_dtype(t->dtype);
    flat_view f = {0};
    f.base = (int64_t)(t->offset / d->block_bytes);
    for (int i = 0; i < t->ndim; i++) {
        int64_t s = t->strides[i], n = t->shape[i];
        if (n == 1 || s == 0)
            continue;
        if (d->block_elems > 1) { /* quantised: the last dim counts blocks */
            if (i == t->ndim - 1)
                n /= d->block_elems;
            else
                s /= d->block_elems;
            if (n == 1)
                continue;
        }
        f.shape[f.n] = n;
        f.stride[f.n] = s < 0 ? -s : s;
        if (s < 0)
            f.base += s * (n - 1);
        f.n++;
    }
    for (int i = 1; i < f.n; i++) /* insertion sort by stride, descending */
        for (int j = i; j > 0 && f.stride[j] > f.stride[j - 1]; j--) {
            int64_t a = f.stride[j], b = f.shape[j];
            f.stride[j] = f.stride[j - 1];
            f.shape[j] = f.shape[j - 1];
            f.stride[j - 1] = a;
            f.shape[j - 1] = b;
        }
    return f;
}

static int64_t flat_count(const flat_view *f)
{
    int64_t c = 1;
    for (int i = 0; i < f->n; i++)
        c *= f->shape[i];
    return c;
}

static int64_t flat_last(const flat_view *f)
{
    int64_t e = f->base;
    for (int i = 0; i < f->n; i++)
        e += (f->shape[i] - 1) * f->stride[i];
    return e;
}

/* True when every stride exceeds the extent of the dims inside it: then an
 * element's coordinates are unique and found greedily. */
static bool nested(const flat_view *f)
{
    int64_t ext = 0;
    for (int i = f->n - 1; i >= 0; i--) {
        if (f->stride[i] <= ext)
            return false;
        ext += (f->shape[i] - 1) * f->stride[i];
    }
    return true;
}

static bool contains(const flat_view *f, int64_t o)
{
    int64_t r = o - f->base;
    if (r < 0)
        return false;
    for (int i = 0; i < f->n; i++) {
        int64_t k = r / f->stride[i];
        if (k >= f->shape[i])
            return false;
        r -= k * f->stride[i];
    }
    return r == 0;
}

/* Do views a and b of one storage share an element?  Conservative (true)
 * where undecided, see the top of the file. */
static bool views_overlap(const wgml_tensor *a, const wgml_tensor *b)
{
    if (wgml_tensor_nelem(a) == 0 || wgml_tensor_nelem(b) == 0)
        return false;
    flat_view fa = flatten(a), fb = flatten(b);
    int64_t a0 = fa.base, a1 = flat_last(&fa), b0 = fb.base, b1 = flat_last(&fb);
    if (a1 < b0 || b1 < a0)
        return false;
    if (flat_count(&fa) > flat_count(&fb)) { /* enumerate the smaller one */
        flat_view t = fa;
        fa = fb;
        fb = t;
    }
    if (!nested(&fb) || flat_count(&fa) > ENUM_CAP)
        return true;
    int64_t lo = b0 > a0 ? b0 : a0, hi = b1 < a1 ? b1 : a1;
    int64_t idx[WGML_MAX_DIMS] = {0};
    for (int64_t e = 0, n = flat_count(&fa); e < n; e++) {
        int64_t o = fa.base;
        for (int i = 0; i < fa.n; i++)
            o += idx[i] * fa.stride[i];
        if (o >= lo && o <= hi && contains(&fb, o))
            return true;
        for (int i = fa.n - 1; i >= 0; i--) {
            if (++idx[i] < fa.shape[i])
                break;
            idx[i] = 0;
        }
    }
    return false;
}

static bool same_view(const wgml_tensor *a, const wgml_tensor *b)
{
    if (a->offset != b->offset || a->ndim != b->ndim ||
        wg_dtype(a->dtype)->block_bytes != wg_dtype(b->dtype)->block_bytes)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->strides[i] != b->strides[i]))
            return false;
    return true;
}

wgml_status wg_check_out_writable(const char *op, const char *what, const wgml_tensor *out)
{
    if (!out || wgml_tensor_nelem(out) == 0) /* empty: nothing is written (and its strides may be 0) */
        return WGML_OK;
    for (int i = 0; i < out->ndim; i++)
        if (out->strides[i] == 0 && out->shape[i] > 1)
            return wg_fail(WGML_ERR_INVALID_ARG, "%s: %s is a broadcast view (stride 0 on dim %d of size %lld): its "
                           "elements alias, so writes would collide", op, what, i, (long long)out->shape[i]);
    return WGML_OK;
}

wgml_status wg_check_writes(const char *op, const char *out_name, const wgml_tensor *out, bool inplace_ok, ...)
{
    wgml_status st = wg_check_out_writable(op, out_name, out);
    if (st != WGML_OK || !out)
        return st;
    va_list ap;
    va_start(ap, inplace_ok);
    for (const char *name; st == WGML_OK && (name = va_arg(ap, const char *)) != NULL;) {
        const wgml_tensor *x = va_arg(ap, const wgml_tensor *);
        if (!x || x->st != out->st)
            continue;
        if (same_view(x, out)) {
            if (!inplace_ok)
                st = wg_fail(WGML_ERR_INVALID_ARG, "%s: %s is %s itself, which this op cannot compute in place "
                             "(it reads elements other than the one it writes): use another %s", op, out_name, name,
                             out_name);
        } else if (wg_tensors_overlap(x, out)) {
            st = wg_fail(WGML_ERR_INVALID_ARG, "%s: %s overlaps %s in memory without being the same view, so "
                         "results would depend on the order of the GPU's writes: use another %s or copy %s first",
                         op, out_name, name, out_name, name);
        }
    }
    va_end(ap);
    return st;
}

/* Byte hull [first, last] of a non-empty view. */
static void byte_hull(const wgml_tensor *t, uint64_t *first, uint64_t *last)
{
    flat_view f = flatten(t);
    uint64_t bb = wg_dtype(t->dtype)->block_bytes;
    *first = (uint64_t)f.base * bb;
    *last = (uint64_t)flat_last(&f) * bb + bb - 1;
}

bool wg_tensors_overlap(const wgml_tensor *a, const wgml_tensor *b)
{
    if (!a || !b || a->st != b->st)
        return false;
    if (a->dtype == b->dtype)
        return views_overlap(a, b);
    /* A graph's arena holds tensors of every dtype in one storage: views
     * of different dtypes are compared by their byte hulls (conservative:
     * disjoint arena blocks never meet). */
    if (!wgml_tensor_nelem(a) || !wgml_tensor_nelem(b))
        return false;
    uint64_t a0, a1, b0, b1;
    byte_hull(a, &a0, &a1);
    byte_hull(b, &b0, &b1);
    return a0 <= b1 && b0 <= a1;
}
