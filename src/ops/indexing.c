/*
 * Indexing family: get_rows, set_rows, gather, scatter_add, index_select,
 * one_hot, embedding.  One kernel template (indexing.wgsl) whose iteration
 * space, strides and indexed operand are planned here; quantised tables go
 * to the quant family (indexing.h).  CPU references: indexing_ref.c.
 *
 * Index validation happens on the host, before any work is recorded: the
 * status (WGML_ERR_INDEX with nothing written) must be returned by the call
 * itself, so the host has to see the indices, or a flag computed from them
 * on the GPU, before it returns; either way that is one submit + wait.
 * Reading the indices themselves costs 4 bytes per index more than a flag
 * and gives exact messages, de-duplication for set_rows and the range of
 * rows each pass needs.  Cost per call: a flush and a wait for all work
 * recorded so far (~66 us on an H100), plus the index copy.
 */
#include "indexing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IX_THREADS 1024 /* elements per workgroup: 256 threads x EW_PER_THREAD */

/* ------------------------------------------------------------ indices */

/* Logical position i of idx as "[2, 5]". */
static const char *coords_str(const wgml_tensor *t, int64_t i, char *buf, size_t n)
{
    int64_t c[WGML_MAX_DIMS];
    for (int d = t->ndim - 1; d >= 0; d--) {
        c[d] = t->shape[d] ? i % t->shape[d] : 0;
        i = t->shape[d] ? i / t->shape[d] : 0;
    }
    size_t u = 0;
    int w = snprintf(buf, n, "[");
    u += w > 0 ? (size_t)w : 0;
    for (int d = 0; d < t->ndim && u < n; d++) {
        w = snprintf(buf + u, n - u, "%s%lld", d ? ", " : "", (long long)c[d]);
        u += w > 0 ? (size_t)w : 0;
    }
    if (u < n)
        snprintf(buf + u, n - u, "]");
    return buf;
}

/* Downloads idx (i32, any layout) in logical order into *out (malloc'd,
 * caller frees) and checks every value lies in [0, limit).  The values are
 * kept on the tensor's storage until the buffer is written again, so
 * indices reused across calls (a fixed permutation, token ids read by
 * several ops) cost no GPU wait after the first read. */
static wgml_status load_idx(const char *op, const char *what, const wgml_tensor *idx, int64_t limit, int32_t **out)
{
    *out = NULL;
    if (wg_recording_active(idx->ctx)) /* a replay would run unchecked indices */
        return wg_fail(WGML_ERR_UNSUPPORTED, "%s cannot be recorded: it reads %s on the host to check them", op, what);
    int64_t n = wgml_tensor_nelem(idx);
    int32_t *h = malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (!h)
        return wg_fail(WGML_ERR_OOM, "%s: out of host memory for %lld indices", op, (long long)n);
    wg_index_cache *c = &idx->st->idx;
    uint64_t key = wg_hash_bytes(WG_HASH_SEED, &idx->offset, sizeof idx->offset);
    key = wg_hash_bytes(key, idx->shape, sizeof idx->shape);
    key = wg_hash_bytes(key, idx->strides, sizeof idx->strides);
    key = wg_hash_bytes(key, &idx->ndim, sizeof idx->ndim);
    if (c->vals && c->version == wg_buffer_version(idx->st->buf) && c->key == key && c->n == n) {
        memcpy(h, c->vals, sizeof(int32_t) * (size_t)n);
        if (c->min >= 0 && c->max < limit) {
            *out = h;
            return WGML_OK;
        }
    } else {
        wgml_status st = n ? wgml_tensor_download(idx, h, (uint64_t)n * 4) : WGML_OK;
        if (st != WGML_OK) {
            free(h);
            return wg_failp(st, "%s: reading %s back to check it", op, what);
        }
        free(c->vals);
        c->vals = malloc(sizeof(int32_t) * (size_t)(n + 1));
        c->min = INT32_MAX;
        c->max = INT32_MIN;
        for (int64_t i = 0; i < n; i++) {
            c->min = h[i] < c->min ? h[i] : c->min;
            c->max = h[i] > c->max ? h[i] : c->max;
        }
        if (c->vals) {
            memcpy(c->vals, h, sizeof(int32_t) * (size_t)n);
            c->n = n;
            c->key = key;
            c->version = wg_buffer_version(idx->st->buf);
        }
    }
    for (int64_t i = 0; i < n; i++)
        if (h[i] < 0 || h[i] >= limit) {
            char pos[96];
            int32_t v = h[i];
            coords_str(idx, i, pos, sizeof pos);
            free(h);
            return wg_fail(WGML_ERR_INDEX, "%s: %s%s = %d is %s; indices must lie in [0, %lld)", op, what, pos,
                           (int)v, v < 0 ? "negative" : "out of range", (long long)limit);
        }
    *out = h;
    return WGML_OK;
}

/* ------------------------------------------------------------ launching */

typedef struct ix_slot {
    const wgml_tensor *t; /* NULL: unused (one_hot has no `a`) */
    int64_t off;          /* elements from the buffer start */
    int64_t st[4];        /* strides over the iteration space */
} ix_slot;

/* One planned dispatch family: slots a (read), x (indices), o (written);
 * slot `ix` (0 or 2, -1 for none) moves by `ax` elements per index. */
typedef struct ix_job {
    const char *op;
    wgml_kernel *k;
    int ix;
    int64_t ax;
    int64_t limit;
    const int32_t *idx;   /* host indices (logical order), for pass planning */
    int64_t nidx;
} ix_job;

static uint64_t esz(const ix_slot *s) { return wg_dtype(s->t->dtype)->block_bytes; }

/* Elements slot s spans over `it`, index rows [lo, hi) included. */
static void span(const ix_job *j, const ix_slot *s, int k, const int64_t it[4], int64_t lo, int64_t hi,
                 uint64_t *first, uint64_t *count)
{
    uint64_t f = (uint64_t)s->off, ext = 0;
    for (int d = 0; d < 4; d++)
        ext += (uint64_t)(it[d] - 1) * (uint64_t)s->st[d];
    if (k == j->ix) {
        f += (uint64_t)lo * (uint64_t)j->ax;
        ext += (uint64_t)(hi - 1 - lo) * (uint64_t)j->ax;
    }
    *first = f;
    *count = ext + 1;
}


static wgml_status dispatch(const ix_job *j, const ix_slot s[3], const int64_t it[4], int64_t lo, int64_t hi)
{
    wg_ew_params p;
    memset(&p, 0, sizeof p);
    wg_binding b[3];
    int nb = 0;
    uint64_t n = (uint64_t)wg_nelem4(it);
    for (int d = 0; d < 4; d++)
        p.shape[d] = (uint32_t)it[d];
    p.n = (uint32_t)n;
    for (int k = 0; k < 3; k++) {
        if (!s[k].t)
            continue;
        uint64_t f, c, rem, e = esz(&s[k]);
        span(j, &s[k], k, it, lo, hi, &f, &c);
        b[nb++] = wg_bind_from(s[k].t->st->buf, f * e, c * e, &rem);
        p.offs[k] = (uint32_t)(rem / e);
        for (int d = 0; d < 4; d++)
            p.st[k][d] = (uint32_t)s[k].st[d];
    }
    p.ip[0] = (uint32_t)lo;
    p.ip[1] = (uint32_t)hi;
    p.ip[2] = j->ix == 0 ? (uint32_t)j->ax : 0;
    p.ip[3] = j->ix == 2 ? (uint32_t)j->ax : 0;
    return wg_dispatch(wg_kernel_ctx(j->k), j->k, b, nb, &p, sizeof p, (uint32_t)((n + IX_THREADS - 1) / IX_THREADS), 1, 1);
}

static bool any_index_in(const ix_job *j, int64_t lo, int64_t hi)
{
    for (int64_t i = 0; i < j->nidx; i++)
        if (j->idx[i] >= lo && j->idx[i] < hi)
            return true;
    return false;
}

/* Splits the iteration space (outermost non-trivial dim in halves) until
 * every operand but the indexed one fits one storage binding and indices
 * fit u32; then covers the index range in passes whose rows of the indexed
 * operand fit one binding, skipping passes no index falls in. */
static wgml_status run(const ix_job *j, const ix_slot s[3], const int64_t it[4])
{
    wgml_ctx *ctx = wg_kernel_ctx(j->k);
    uint64_t cap = wg_window_cap(ctx);
    bool fits = (uint64_t)wg_nelem4(it) <= 0xffffffffull - IX_THREADS;
    for (int k = 0; k < 3 && fits; k++) {
        uint64_t f, c;
        if (!s[k].t)
            continue;
        span(j, &s[k], k, it, 0, 1, &f, &c);
        fits = c * esz(&s[k]) <= cap;
    }
    if (!fits) {
        int d = 0;
        while (d < 4 && it[d] == 1)
            d++;
        if (d == 4) {
            uint64_t widest = 0, f, c;
            for (int k = 0; k < 3; k++)
                if (s[k].t && (span(j, &s[k], k, it, 0, 1, &f, &c), c * esz(&s[k]) > widest))
                    widest = c * esz(&s[k]);
            return wg_fail_window(ctx, widest, "%s: one element's window (an index row of a huge non-contiguous "
                                  "view?)", j->op);
        }
        int64_t half = it[d] / 2;
        for (int part = 0; part < 2; part++) {
            int64_t sub[4] = {it[0], it[1], it[2], it[3]};
            int64_t start = part ? half : 0;
            sub[d] = part ? it[d] - half : half;
            ix_slot s2[3] = {s[0], s[1], s[2]};
            for (int k = 0; k < 3; k++)
                s2[k].off += start * s[k].st[d];
            wgml_status st = run(j, s2, sub);
            if (st != WGML_OK)
                return st;
        }
        return WGML_OK;
    }
    int64_t rows = j->limit;
    if (j->ix >= 0 && j->ax > 0) {
        uint64_t f, c, e = esz(&s[j->ix]);
        span(j, &s[j->ix], j->ix, it, 0, 1, &f, &c);
        uint64_t more = (cap / e - c) / (uint64_t)j->ax; /* extra rows beyond the first */
        if (more + 1 < (uint64_t)rows)
            rows = (int64_t)more + 1;
    }
    if (rows >= j->limit || j->ix < 0)
        return dispatch(j, s, it, 0, j->limit);
    for (int64_t lo = 0; lo < j->limit; lo += rows) {
        int64_t hi = lo + rows < j->limit ? lo + rows : j->limit;
        if (!any_index_in(j, lo, hi))
            continue;
        wgml_status st = dispatch(j, s, it, lo, hi);
        if (st != WGML_OK)
            return st;
    }
    return WGML_OK;
}

static bool shares(const wgml_tensor *a, const wgml_tensor *b) { return a && b && a->st->buf == b->st->buf; }

/* Byte range [first, end) a tensor's elements occupy (0, 0 when empty). */
static void byte_range(const wgml_tensor *t, uint64_t *first, uint64_t *end)
{
    uint64_t e = wg_dtype(t->dtype)->block_bytes, last = 0;
    *first = *end = 0;
    if (wgml_tensor_nelem(t) == 0)
        return;
    for (int d = 0; d < t->ndim; d++)
        last += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->strides[d];
    *first = t->offset;
    *end = t->offset + (last + 1) * e;
}

static bool overlaps(const wgml_tensor *w, const wgml_tensor *r)
{
    if (!shares(w, r))
        return false;
    uint64_t a0, a1, b0, b1;
    byte_range(w, &a0, &a1);
    byte_range(r, &b0, &b1);
    return a0 < b1 && b0 < a1;
}

/* #tensor dtype of a COPY slot: a move within one dtype moves raw words
 * of its width, so every bit pattern (a NaN's sign and payload included)
 * arrives unchanged -- f16 through f32 and back lost NaN payloads -- and
 * dtypes of one width share a pipeline. */
static const char *slot_dt(const char *kind, const wgml_tensor *t, const wgml_tensor *other)
{
    const wg_dtype_info *d = wg_dtype(t->dtype);
    if (strcmp(kind, "COPY") != 0 || !other || other->dtype != t->dtype)
        return d->wgsl;
    return d->block_bytes == 4 ? "u32" : d->block_bytes == 2 ? "u16" : "u8";
}

/* Builds the kernel for the slots and runs it.  kind: COPY, ADD, ONE_HOT. */
static wgml_status launch(const char *op, const char *kind, ix_slot s[3], const int64_t it[4], int ix, int64_t ax,
                          int64_t limit, const int32_t *idx, int64_t nidx)
{
    const wgml_tensor *w = s[2].t;
    for (int k = 0; k < 2; k++)
        if (s[k].t && overlaps(w, s[k].t))
            return wg_fail(WGML_ERR_INVALID_ARG, "%s: the written tensor overlaps an input in memory", op);
    if (wg_nelem4(it) == 0)
        return wg_check(w->ctx);
    /* A buffer written in the dispatch must be bound read_write wherever
     * it appears (WebGPU forbids mixing read-only and writable bindings of
     * one buffer); the ranges are disjoint (checked above). */
    char defs[256];
    unsigned ro = 0;
    int nb = 0;
    const char *mode[2];
    for (int k = 0; k < 2; k++) {
        mode[k] = shares(s[k].t, w) ? "rw" : "r";
        if (s[k].t && !shares(s[k].t, w))
            ro |= 1u << nb;
        nb += s[k].t != NULL;
    }
    nb++;
    snprintf(defs, sizeof defs, "%s%s;A_DT=%s;A_MODE=%s;X_MODE=%s;O_DT=%s;O_MODE=w", kind,
             strcmp(kind, "ADD") == 0 && w->dtype == WGML_F32 ? ";ADD_F32" : "",
             s[0].t ? slot_dt(kind, s[0].t, w) : "f32", mode[0], mode[1], slot_dt(kind, w, s[0].t));
    ix_job j = {op, NULL, ix, ax, limit, idx, nidx};
    wg_kernel_ref ref = {"indexing.wgsl", "main", defs, nb, ro};
    wgml_status st = wg_kernel_get(w->ctx, &ref, &j.k);
    if (st != WGML_OK)
        return st;
    return run(&j, s, it);
}

/* Slot over t's own 4-D view (strides padded on the left). */
static ix_slot slot_of(const wgml_tensor *t)
{
    wg_view4 v = wg_view4_of(t);
    ix_slot s = {t, (int64_t)v.offset, {v.strides[0], v.strides[1], v.strides[2], v.strides[3]}};
    return s;
}

/* Slot for idx whose dims 0..idx->ndim-1 map to iteration dims first.. */
static ix_slot idx_slot(const wgml_tensor *idx, int first)
{
    ix_slot s = slot_of(idx);
    memset(s.st, 0, sizeof s.st);
    for (int d = 0; d < idx->ndim; d++)
        s.st[first + d] = idx->strides[d];
    return s;
}

/* ------------------------------------------------------------ checks */

static wgml_status check_args(const char *op, const wgml_tensor *a, const char *an, const wgml_tensor *idx,
                              const char *xn, const wgml_tensor *b, const char *bn)
{
    wgml_status st = an ? wg_check_tensor(op, an, a) : WGML_OK; /* an NULL: no `a` (one_hot) */
    if (st == WGML_OK)
        st = wg_check_tensor(op, xn, idx);
    if (st == WGML_OK)
        st = wg_check_tensor(op, bn, b);
    if (st != WGML_OK)
        return st;
    if (!wg_same_ctx(a, idx) || !wg_same_ctx(idx, b))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", op);
    if (idx->dtype != WGML_I32)
        return wg_fail(WGML_ERR_DTYPE, "%s: %s is %s, indices must be i32", op, xn, wgml_dtype_name(idx->dtype));
    return WGML_OK;
}

/* The written tensor (out, or dst for set_rows/scatter_add) must not share
 * memory with what is read: rows land in an order of the GPU's choosing,
 * so any overlap is refused, in place included.  Called once shapes and
 * dtypes are known good, so those errors come first. */
static wgml_status hazards(const char *op, const wgml_tensor *w, const char *wn, const wgml_tensor *r1,
                           const char *r1n, const wgml_tensor *r2, const char *r2n)
{
    return wg_check_writes(op, wn, w, false, r1n, r1, r2n, r2, WG_END);
}

static wgml_status check_shape(const char *op, const char *what, const wgml_tensor *t, int ndim,
                               const int64_t *shape)
{
    bool ok = t->ndim == ndim;
    for (int d = 0; ok && d < ndim; d++)
        ok = t->shape[d] == shape[d];
    if (ok)
        return WGML_OK;
    char a[96], b[96];
    wgml_tensor tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.ndim = ndim;
    memcpy(tmp.shape, shape, sizeof(int64_t) * (size_t)ndim);
    return wg_fail(WGML_ERR_SHAPE, "%s: %s has shape %s, expected %s", op, what, wg_shape_str(t, a, sizeof a),
                   wg_shape_str(&tmp, b, sizeof b));
}

/* The rows rule (indexing.h): rows (get_rows' out / set_rows' src) must be
 * table's shape with dim idx->ndim-1 replaced by n. */
static wgml_status rows_rule(const char *op, const wgml_tensor *table, const char *tn, const wgml_tensor *idx,
                             const wgml_tensor *rows, const char *rn)
{
    bool quant = !wg_dtype_is_plain(table->dtype);
    int maxd = table->ndim - (quant ? 1 : 0);
    if (idx->ndim < 1 || idx->ndim > maxd)
        return wg_fail(WGML_ERR_SHAPE, "%s: idx has %d dims; with a %d-D %s%s it needs 1..%d", op, idx->ndim,
                       table->ndim, quant ? "quantised " : "", tn, maxd);
    int kb = idx->ndim - 1;
    for (int d = 0; d < kb; d++)
        if (idx->shape[d] != table->shape[d])
            return wg_fail(WGML_ERR_SHAPE, "%s: batch dim %d of idx is %lld but %s's is %lld", op, d,
                           (long long)idx->shape[d], tn, (long long)table->shape[d]);
    int64_t shape[WGML_MAX_DIMS];
    memcpy(shape, table->shape, sizeof shape);
    shape[kb] = idx->shape[kb];
    return check_shape(op, rn, rows, table->ndim, shape);
}

/* ------------------------------------------------------------ get_rows */

/* Plain gather along `axis` of src for the rows-shaped ops: iteration =
 * out; idx dims map to out dims [pad + first, ...). */
static wgml_status gather_rows(const char *op, const wgml_tensor *src, int axis, const wgml_tensor *idx, int first,
                               wgml_tensor *out, const int32_t *h)
{
    wgml_status vst;
    if (axis == 0 && wg_get_rows_vec4(src, idx, out, &vst))
        return vst;
    int64_t it[4];
    wg_shape4(out, it);
    int pad = 4 - out->ndim;
    ix_slot s[3] = {slot_of(src), idx_slot(idx, pad + first), slot_of(out)};
    int64_t ax = src->strides[axis];
    s[0].st[pad + axis] = 0;
    return launch(op, "COPY", s, it, 0, ax, src->shape[axis], h, wgml_tensor_nelem(idx));
}

static wgml_status out_dtype_rule(const char *op, const wgml_tensor *src, const wgml_tensor *out)
{
    if (!wg_dtype_is_plain(src->dtype)) {
        if (!wg_dtype_is_float(out->dtype))
            return wg_fail(WGML_ERR_DTYPE, "%s: out is %s; a quantised %s table gives f32, f16 or bf16", op,
                           wgml_dtype_name(out->dtype), wgml_dtype_name(src->dtype));
        return WGML_OK;
    }
    if (out->dtype != src->dtype && out->dtype != WGML_F32)
        return wg_fail(WGML_ERR_DTYPE, "%s: out is %s; it must be f32 or the table's dtype (%s)", op,
                       wgml_dtype_name(out->dtype), wgml_dtype_name(src->dtype));
    return WGML_OK;
}

wgml_status wgml_get_rows(const wgml_tensor *src, const wgml_tensor *idx, wgml_tensor *out)
{
    const char *op = "wgml_get_rows";
    wgml_status st = check_args(op, src, "src", idx, "idx", out, "out");
    if (st == WGML_OK)
        st = out_dtype_rule(op, src, out);
    if (st == WGML_OK)
        st = rows_rule(op, src, "src", idx, out, "out");
    int32_t *h = NULL;
    int axis = idx ? idx->ndim - 1 : 0;
    if (st == WGML_OK)
        st = hazards(op, out, "out", src, "src", idx, "idx");
    if (st == WGML_OK)
        st = load_idx(op, "idx", idx, src->shape[axis], &h);
    if (st != WGML_OK)
        return st;
    if (!wg_dtype_is_plain(src->dtype))
        st = wg_get_rows_quant(op, src, idx, axis, out);
    else
        st = gather_rows(op, src, axis, idx, 0, out, h);
    free(h);
    return st;
}

/* ------------------------------------------------------------ set_rows */

/* Replaces all but the last occurrence of each index within a batch (n
 * consecutive indices) with -1; true when there was a duplicate. */
static bool dedup_last(int32_t *h, int64_t total, int64_t n, int64_t rows, wgml_status *st)
{
    *st = WGML_OK;
    if (n < 2 || total == 0)
        return false;
    uint32_t *stamp = calloc((size_t)rows, sizeof *stamp);
    if (!stamp) {
        *st = wg_fail(WGML_ERR_OOM, "wgml_set_rows: out of host memory checking duplicate indices");
        return false;
    }
    bool dup = false;
    for (int64_t b = 0; b < total / n; b++)
        for (int64_t i = n - 1; i >= 0; i--) {
            int32_t *v = &h[b * n + i];
            if (stamp[*v] == (uint32_t)b + 1) {
                *v = -1;
                dup = true;
            } else {
                stamp[*v] = (uint32_t)b + 1;
            }
        }
    free(stamp);
    return dup;
}

wgml_status wgml_set_rows(wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src)
{
    const char *op = "wgml_set_rows";
    wgml_status st = check_args(op, dst, "dst", idx, "idx", src, "src");
    if (st != WGML_OK)
        return st;
    if (!wg_dtype_is_plain(dst->dtype)) {
        if (src->dtype != WGML_F32)
            return wg_fail(WGML_ERR_DTYPE, "%s: src is %s; a quantised dst takes f32 rows", op,
                           wgml_dtype_name(src->dtype));
    } else if (src->dtype != dst->dtype && !(wg_dtype_is_float(src->dtype) && wg_dtype_is_float(dst->dtype))) {
        return wg_fail(WGML_ERR_DTYPE, "%s: src is %s, dst is %s: they must match or both be floats", op,
                       wgml_dtype_name(src->dtype), wgml_dtype_name(dst->dtype));
    }
    if ((st = rows_rule(op, dst, "dst", idx, src, "src")) != WGML_OK)
        return st;
    int axis = idx->ndim - 1;
    int32_t *h = NULL;
    if ((st = hazards(op, dst, "dst", src, "src", idx, "idx")) != WGML_OK ||
        (st = load_idx(op, "idx", idx, dst->shape[axis], &h)) != WGML_OK)
        return st;
    int64_t nidx = wgml_tensor_nelem(idx);
    wgml_tensor *eff = NULL; /* de-duplicated indices, when needed */
    if (dedup_last(h, nidx, idx->shape[axis], dst->shape[axis], &st)) {
        st = wgml_tensor_new(dst->ctx, WGML_I32, idx->ndim, idx->shape, &eff);
        if (st == WGML_OK)
            st = wgml_tensor_upload(eff, h, (uint64_t)nidx * 4);
    }
    const wgml_tensor *x = eff ? eff : idx;
    if (st == WGML_OK && !wg_dtype_is_plain(dst->dtype)) {
        st = wg_set_rows_quant(dst, x, src);
    } else if (st == WGML_OK) {
        int64_t it[4];
        wg_shape4(src, it);
        int pad = 4 - src->ndim;
        ix_slot s[3] = {slot_of(src), idx_slot(x, pad), slot_of(dst)};
        s[2].st[pad + axis] = 0;
        st = launch(op, "COPY", s, it, 2, dst->strides[axis], dst->shape[axis], h, nidx);
    }
    wgml_tensor_free(eff);
    free(h);
    return st;
}

/* ------------------------------------------------------------ gather, scatter_add */

/* torch's rule: idx has src's ndim and idx.shape[d] <= shape[d] (every d
 * but `axis` unless `all`). */
static wgml_status fits_within(const char *op, const wgml_tensor *idx, const wgml_tensor *t, const char *tn,
                               int axis, bool all)
{
    if (idx->ndim != t->ndim)
        return wg_fail(WGML_ERR_SHAPE, "%s: idx has %d dims, %s has %d (they must match)", op, idx->ndim, tn,
                       t->ndim);
    for (int d = 0; d < t->ndim; d++)
        if ((all || d != axis) && idx->shape[d] > t->shape[d])
            return wg_fail(WGML_ERR_SHAPE, "%s: idx dim %d is %lld, larger than %s's %lld", op, d,
                           (long long)idx->shape[d], tn, (long long)t->shape[d]);
    return WGML_OK;
}

static int norm_axis(const char *op, const wgml_tensor *t, int axis, wgml_status *st)
{
    int a = wg_axis(t, axis);
    *st = a < 0 ? wg_fail(WGML_ERR_INDEX, "%s: axis %d is out of range for %d dims", op, axis, t->ndim) : WGML_OK;
    return a;
}

static wgml_status need_plain(const char *op, const char *what, const wgml_tensor *t)
{
    if (wg_dtype_is_plain(t->dtype))
        return WGML_OK;
    return wg_fail(WGML_ERR_DTYPE, "%s: %s is quantised (%s): dequantise it first", op, what,
                   wgml_dtype_name(t->dtype));
}

wgml_status wgml_gather(const wgml_tensor *src, int axis, const wgml_tensor *idx, wgml_tensor *out)
{
    const char *op = "wgml_gather";
    wgml_status st = check_args(op, src, "src", idx, "idx", out, "out");
    if (st == WGML_OK)
        st = need_plain(op, "src", src);
    int a = st == WGML_OK ? norm_axis(op, src, axis, &st) : 0;
    if (st == WGML_OK)
        st = fits_within(op, idx, src, "src", a, false);
    if (st == WGML_OK)
        st = wg_check_out(op, out, src->dtype, idx->ndim, idx->shape);
    int32_t *h = NULL;
    if (st == WGML_OK)
        st = hazards(op, out, "out", src, "src", idx, "idx");
    if (st == WGML_OK)
        st = load_idx(op, "idx", idx, src->shape[a], &h);
    if (st != WGML_OK)
        return st;
    int64_t it[4];
    wg_shape4(out, it);
    int pad = 4 - out->ndim;
    ix_slot s[3] = {slot_of(src), slot_of(idx), slot_of(out)};
    s[0].st[pad + a] = 0;
    st = launch(op, "COPY", s, it, 0, src->strides[a], src->shape[a], h, wgml_tensor_nelem(idx));
    free(h);
    return st;
}

wgml_status wgml_scatter_add(wgml_tensor *dst, int axis, const wgml_tensor *idx, const wgml_tensor *src)
{
    const char *op = "wgml_scatter_add";
    wgml_status st = check_args(op, dst, "dst", idx, "idx", src, "src");
    if (st != WGML_OK)
        return st;
    if (dst->dtype != WGML_F32 && dst->dtype != WGML_I32)
        return wg_fail(WGML_ERR_DTYPE, "%s: dst is %s; scatter_add supports f32 and i32", op,
                       wgml_dtype_name(dst->dtype));
    if (src->dtype != dst->dtype)
        return wg_fail(WGML_ERR_DTYPE, "%s: src is %s but dst is %s", op, wgml_dtype_name(src->dtype),
                       wgml_dtype_name(dst->dtype));
    int a = norm_axis(op, dst, axis, &st);
    if (st == WGML_OK)
        st = fits_within(op, idx, src, "src", a, true);
    if (st == WGML_OK)
        st = fits_within(op, idx, dst, "dst", a, false);
    int32_t *h = NULL;
    if (st == WGML_OK)
        st = hazards(op, dst, "dst", src, "src", idx, "idx");
    if (st == WGML_OK)
        st = load_idx(op, "idx", idx, dst->shape[a], &h);
    if (st != WGML_OK)
        return st;
    int64_t it[4];
    wg_shape4(idx, it);
    int pad = 4 - idx->ndim;
    ix_slot s[3] = {slot_of(src), slot_of(idx), slot_of(dst)};
    s[2].st[pad + a] = 0;
    st = launch(op, "ADD", s, it, 2, dst->strides[a], dst->shape[a], h, wgml_tensor_nelem(idx));
    free(h);
    return st;
}

/* ------------------------------------------------------------ index_select, one_hot, embedding */

wgml_status wgml_index_select(const wgml_tensor *src, int axis, const wgml_tensor *idx, wgml_tensor *out)
{
    const char *op = "wgml_index_select";
    wgml_status st = check_args(op, src, "src", idx, "idx", out, "out");
    if (st == WGML_OK)
        st = need_plain(op, "src", src);
    int a = st == WGML_OK ? norm_axis(op, src, axis, &st) : 0;
    if (st == WGML_OK && idx->ndim != 1)
        st = wg_fail(WGML_ERR_SHAPE, "%s: idx has %d dims; it must be 1-D", op, idx->ndim);
    if (st == WGML_OK) {
        int64_t shape[WGML_MAX_DIMS];
        memcpy(shape, src->shape, sizeof shape);
        shape[a] = idx->shape[0];
        st = wg_check_out(op, out, src->dtype, src->ndim, shape);
    }
    int32_t *h = NULL;
    if (st == WGML_OK)
        st = hazards(op, out, "out", src, "src", idx, "idx");
    if (st == WGML_OK)
        st = load_idx(op, "idx", idx, src->shape[a], &h);
    if (st != WGML_OK)
        return st;
    st = gather_rows(op, src, a, idx, a, out, h);
    free(h);
    return st;
}

wgml_status wgml_one_hot(const wgml_tensor *idx, wgml_tensor *out)
{
    const char *op = "wgml_one_hot";
    wgml_status st = check_args(op, NULL, NULL, idx, "idx", out, "out");
    if (st != WGML_OK)
        return st;
    if (!wg_dtype_is_plain(out->dtype))
        return wg_fail(WGML_ERR_DTYPE, "%s: out is quantised (%s)", op, wgml_dtype_name(out->dtype));
    if (idx->ndim >= WGML_MAX_DIMS)
        return wg_fail(WGML_ERR_SHAPE, "%s: idx has %d dims; out needs one more (at most %d)", op, idx->ndim,
                       WGML_MAX_DIMS);
    if (out->ndim != idx->ndim + 1)
        return wg_fail(WGML_ERR_SHAPE, "%s: out has %d dims; it needs idx's %d plus the classes", op, out->ndim,
                       idx->ndim);
    int64_t classes = out->shape[out->ndim - 1];
    int64_t shape[WGML_MAX_DIMS];
    memcpy(shape, idx->shape, sizeof(int64_t) * (size_t)idx->ndim);
    shape[idx->ndim] = classes;
    if ((st = check_shape(op, "out", out, idx->ndim + 1, shape)) != WGML_OK)
        return st;
    int32_t *h = NULL;
    if ((st = hazards(op, out, "out", idx, "idx", NULL, "-")) != WGML_OK ||
        (st = load_idx(op, "idx", idx, classes, &h)) != WGML_OK)
        return st;
    int64_t it[4];
    wg_shape4(out, it);
    ix_slot s[3] = {{NULL, 0, {0}}, idx_slot(idx, 4 - out->ndim), slot_of(out)};
    st = launch(op, "ONE_HOT", s, it, -1, 0, classes, h, wgml_tensor_nelem(idx));
    free(h);
    return st;
}

wgml_status wgml_embedding(const wgml_tensor *table, const wgml_tensor *ids, wgml_tensor *out)
{
    const char *op = "wgml_embedding";
    wgml_status st = check_args(op, table, "table", ids, "ids", out, "out");
    if (st != WGML_OK)
        return st;
    if (table->ndim != 2)
        return wg_fail(WGML_ERR_SHAPE, "%s: table has %d dims; it must be [vocab, dim]", op, table->ndim);
    if (ids->ndim >= WGML_MAX_DIMS)
        return wg_fail(WGML_ERR_SHAPE, "%s: ids has %d dims; out needs one more (at most %d)", op, ids->ndim,
                       WGML_MAX_DIMS);
    if ((st = out_dtype_rule(op, table, out)) != WGML_OK)
        return st;
    int64_t shape[WGML_MAX_DIMS];
    memcpy(shape, ids->shape, sizeof(int64_t) * (size_t)ids->ndim);
    shape[ids->ndim] = table->shape[1];
    if ((st = check_shape(op, "out", out, ids->ndim + 1, shape)) != WGML_OK)
        return st;
    int32_t *h = NULL;
    if ((st = hazards(op, out, "out", table, "table", ids, "ids")) != WGML_OK ||
        (st = load_idx(op, "ids", ids, table->shape[0], &h)) != WGML_OK)
        return st;
    if (!wg_dtype_is_plain(table->dtype)) {
        st = wg_get_rows_quant(op, table, ids, 0, out);
    } else {
        int64_t it[4];
        wg_shape4(out, it);
        ix_slot s[3] = {slot_of(table), idx_slot(ids, 4 - out->ndim), slot_of(out)};
        memset(s[0].st, 0, sizeof s[0].st);
        s[0].st[3] = table->strides[1];
        st = launch(op, "COPY", s, it, 0, table->strides[0], table->shape[0], h, wgml_tensor_nelem(ids));
    }
    free(h);
    return st;
}

/* ------------------------------------------------------------ registry */

static const wgml_op_info rows[] = {
    {"GET_ROWS", "indexing", WG_DT_PLAIN},
    {"SET_ROWS", "indexing", WG_DT_PLAIN},
    {"GATHER", "indexing", WG_DT_PLAIN},
    {"SCATTER_ADD", "indexing", WG_DT_BIT(WGML_F32) | WG_DT_BIT(WGML_I32)},
    {"INDEX_SELECT", "indexing", WG_DT_PLAIN},
    {"ONE_HOT", "indexing", WG_DT_BIT(WGML_I32)},
    {"EMBEDDING", "indexing", WG_DT_PLAIN},
};

wg_op_table wg_indexing_ops(void) { return (wg_op_table){rows, sizeof rows / sizeof *rows}; }
