/*
 * Indexing family: get_rows, set_rows, gather, scatter_add, index_select,
 * one_hot, embedding.  One kernel template (indexing.wgsl) whose iteration
 * space, strides and indexed operands are planned here; quantised tables go
 * to the quant family (indexing.h).  CPU references: indexing_ref.c.
 *
 * No op reads the indices on the host, so index ops cost no GPU wait and
 * record and replay like any other op.  Every call runs, in the stream:
 *   1. wg_errword_arm + a CHECK pass over the indices, which records an
 *      index outside [0, limit) in the context's device error word;
 *   2. (set_rows with several indices per batch) a CLAIM pass computing,
 *      per destination row, the last position pointing at it;
 *   3. the writing passes, which write nothing when their CHECK failed.
 * The next sync reports the bad index as WGML_ERR_INDEX (runtime.h).
 * Passes are planned from shapes alone: a table larger than one storage
 * binding is bound in windows of index rows, and each window's pass reads
 * every index and handles those that fall inside it.
 */
#include "indexing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IX_THREADS 1024 /* elements per workgroup: 256 threads x EW_PER_THREAD */

/* ------------------------------------------------------------ launching */

/* Operand slots of indexing.wgsl: a (read), x (indices), o (written), w
 * (set_rows' winners), and j, a virtual slot never bound whose offset and
 * strides give an index's logical position. */
enum { SA, SX, SO, SW, SJ, NSLOT };

typedef struct ix_slot {
    const wgml_tensor *t; /* NULL: unused or virtual */
    int64_t off;          /* elements from the buffer start */
    int64_t st[4];        /* strides over the iteration space */
    int64_t ax;           /* elements per index row (0: not indexed) */
} ix_slot;

/* Mirrors IxParams in indexing.wgsl. */
typedef struct ix_params {
    uint32_t shape[4];
    uint32_t n, lo, hi, pad0;
    uint32_t offs[4];
    uint32_t st[4][4];
    uint32_t ax[4];
    uint32_t jst[4];
    uint32_t joff, limit, op, ndim;
    uint32_t full[4];
} ix_params;

/* One planned kernel: indices lie in [0, limit); err: binds the error
 * word (last binding); CHECK's message fields. */
typedef struct ix_job {
    const char *op;
    wgml_kernel *k;
    int64_t limit;
    bool err;
    uint32_t opcode, ndim, full[4];
    bool selfcheck; /* a one-workgroup writing pass that checks its own indices (SELFCHECK) */
    uint32_t idim;  /* SELFCHECK: the indexed iteration dim */
} ix_job;

typedef struct ix_run {
    const ix_job *j;
    const ix_slot *s;
} ix_run;

static uint64_t esz(const ix_slot *s) { return wg_dtype(s->t->dtype)->block_bytes; }

/* Elements slot s spans over `it`, index rows [lo, hi) included. */
static void span(const ix_slot *s, const int64_t it[4], int64_t lo, int64_t hi, uint64_t *first, uint64_t *count)
{
    uint64_t f = (uint64_t)s->off, ext = 0;
    for (int d = 0; d < 4; d++)
        ext += (uint64_t)(it[d] - 1) * (uint64_t)s->st[d];
    if (s->ax) {
        f += (uint64_t)lo * (uint64_t)s->ax;
        ext += (uint64_t)(hi - 1 - lo) * (uint64_t)s->ax;
    }
    *first = f;
    *count = ext + 1;
}

static wgml_status dispatch(const ix_job *j, const ix_slot s[NSLOT], const int64_t it[4], int64_t lo, int64_t hi)
{
    ix_params p;
    memset(&p, 0, sizeof p);
    wg_binding b[WG_MAX_BUFFERS];
    int nb = 0;
    uint64_t n = (uint64_t)wg_nelem4(it);
    for (int d = 0; d < 4; d++)
        p.shape[d] = (uint32_t)it[d];
    p.n = (uint32_t)n;
    for (int k = 0; k < SJ; k++) {
        if (!s[k].t)
            continue;
        uint64_t f, c, rem, e = esz(&s[k]);
        span(&s[k], it, lo, hi, &f, &c);
        b[nb++] = wg_bind_from(s[k].t->st->buf, f * e, c * e, &rem);
        p.offs[k] = (uint32_t)(rem / e);
        for (int d = 0; d < 4; d++)
            p.st[k][d] = (uint32_t)s[k].st[d];
        p.ax[k] = (uint32_t)s[k].ax;
    }
    if (j->err)
        b[nb++] = wg_errword_bind(wg_kernel_ctx(j->k));
    for (int d = 0; d < 4; d++) {
        p.jst[d] = (uint32_t)s[SJ].st[d];
        p.full[d] = j->full[d];
    }
    p.joff = (uint32_t)s[SJ].off;
    p.lo = (uint32_t)lo;
    p.hi = (uint32_t)hi;
    p.limit = j->limit > 0x7fffffff ? 0x80000000u : (uint32_t)j->limit;
    p.op = j->opcode;
    p.ndim = j->ndim;
    p.pad0 = j->idim;
    return wg_dispatch(wg_kernel_ctx(j->k), j->k, b, nb, &p, sizeof p, (uint32_t)((n + IX_THREADS - 1) / IX_THREADS), 1, 1);
}

/* Covers the index rows [0, limit) of a block whose operands (one index
 * row of the indexed ones) fit one binding, in passes whose rows of the
 * indexed operands fit one binding.  The plan needs no index values: each
 * pass reads every index and skips those outside its rows, so each index
 * is handled by exactly one pass. */
static wgml_status run_rows(void *user, const wg_win *w, const int64_t it[4], const int64_t origin[4])
{
    const ix_run *r = user;
    const ix_job *j = r->j;
    (void)origin;
    ix_slot s[NSLOT];
    for (int k = 0; k < NSLOT; k++) {
        s[k] = r->s[k];
        s[k].off = (int64_t)w[k].offset;
    }
    uint64_t cap = wg_window_cap(wg_kernel_ctx(j->k));
    int64_t rows = j->limit;
    for (int k = 0; k < SJ; k++) {
        if (!s[k].t || !s[k].ax)
            continue;
        uint64_t f, c, e = esz(&s[k]);
        span(&s[k], it, 0, 1, &f, &c);
        uint64_t more = (cap / e - c) / (uint64_t)s[k].ax; /* extra rows beyond the first */
        if (more + 1 < (uint64_t)rows)
            rows = (int64_t)more + 1;
    }
    if (rows >= j->limit)
        return dispatch(j, s, it, 0, j->limit);
    for (int64_t lo = 0; lo < j->limit; lo += rows) {
        wgml_status st = dispatch(j, s, it, lo, lo + rows < j->limit ? lo + rows : j->limit);
        if (st != WGML_OK)
            return st;
    }
    return WGML_OK;
}

/* Cuts the iteration space (wg_win_split) until every operand, one index
 * row of the indexed ones, fits one storage binding and positions fit
 * u32; the virtual slot j moves with the cuts like the others. */
static wgml_status run(const ix_job *j, const ix_slot s[NSLOT], const int64_t it[4])
{
    static const char *names[NSLOT] = {"a", "x", "out", "w", "j"};
    wg_win w[NSLOT];
    for (int k = 0; k < NSLOT; k++) {
        wg_win x = {s[k].t ? s[k].t->st->buf : NULL, (uint64_t)s[k].off,
                    {s[k].st[0], s[k].st[1], s[k].st[2], s[k].st[3]}, s[k].t ? esz(&s[k]) : 4, 0, names[k]};
        w[k] = x;
    }
    ix_run r = {j, s};
    return wg_win_split(wg_kernel_ctx(j->k), w, NSLOT, it, 4, 0xffffffffull - IX_THREADS, j->op, run_rows, &r);
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

/* Builds the kernel for the slots and runs it.  kind: CHECK, CLAIM (no
 * written tensor: the error word / w are written), or a writing pass:
 * COPY, ADD, ONE_HOT (with w: only winners write). */
static wgml_status launch(ix_job *j, const char *kind, ix_slot s[NSLOT], const int64_t it[4])
{
    bool check = strncmp(kind, "CHECK", 5) == 0, claim = strcmp(kind, "CLAIM") == 0;
    const wgml_tensor *w = s[SO].t;
    for (int k = SA; k < SO && w; k++)
        if (s[k].t && overlaps(w, s[k].t))
            return wg_fail(WGML_ERR_INVALID_ARG, "%s: the written tensor overlaps an input in memory", j->op);
    if (wg_nelem4(it) == 0)
        return wg_check(s[SX].t->ctx);
    /* Bindings: the slots present, in slot order, then the error word.  A
     * buffer written in the dispatch must be bound read_write wherever
     * it appears (WebGPU forbids mixing read-only and writable bindings of
     * one buffer); the ranges are disjoint (checked above). */
    char defs[320];
    unsigned ro = 0;
    int nb = 0;
    const char *mode[SJ] = {"r", "r", "w", "r"};
    /* The written tensor: out (or dst), or CLAIM's winners table, which a
     * graph may place in the arena with the indices. */
    const wgml_tensor *written = claim ? s[SW].t : w;
    for (int k = SA; k < SJ; k++) {
        if (!s[k].t)
            continue;
        bool wr = k == SO || (k == SW && claim) || shares(s[k].t, written);
        mode[k] = k == SO ? "w" : wr ? "rw" : "r";
        ro |= wr ? 0u : 1u << nb;
        nb++;
    }
    j->err = !claim;
    if (j->err) {
        ro |= check || j->selfcheck ? 0u : 1u << nb; /* CHECK (and SELFCHECK) write it, the others read it */
        nb++;
    }
    if (check || claim)
        snprintf(defs, sizeof defs, "EW_OWN_PARAMS;%s;X_MODE=%s", kind, mode[SX]);
    else if (strcmp(kind, "ONE_HOT") == 0)
        snprintf(defs, sizeof defs, "EW_OWN_PARAMS;WRITES;ONE_HOT;X_MODE=%s;O_DT=%s;O_MODE=w", mode[SX],
                 wg_dtype(w->dtype)->wgsl);
    else
        snprintf(defs, sizeof defs, "EW_OWN_PARAMS;WRITES;GATHER_SCATTER;%s%s%s%s;A_DT=%s;A_MODE=%s;X_MODE=%s;"
                 "O_DT=%s;O_MODE=w;WIN_ACCESS=%s", kind, strcmp(kind, "ADD") == 0 && w->dtype == WGML_F32 ? ";ADD_F32" : "",
                 s[SW].t ? ";WIN" : "", j->selfcheck ? ";SELFCHECK" : "", slot_dt(kind, s[SA].t, w), mode[SA],
                 mode[SX], slot_dt(kind, w, s[SA].t), strcmp(mode[SW], "rw") == 0 ? "read_write" : "read");
    wg_kernel_ref ref = {"indexing.wgsl", "main", defs, nb, ro};
    wgml_status st = wg_kernel_get(s[SX].t->ctx, &ref, &j->k);
    return st != WGML_OK ? st : run(j, s, it);
}

/* Slot over t's own 4-D view (strides padded on the left). */
static ix_slot slot_of(const wgml_tensor *t)
{
    wg_view4 v = wg_view4_of(t);
    ix_slot s = {t, (int64_t)v.offset, {v.strides[0], v.strides[1], v.strides[2], v.strides[3]}, 0};
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

/* Steps 1 of every index op (see the top): arms the error word and
 * checks every index of idx against [0, limit) on the GPU.  `what` names
 * idx in the message ("idx", "ids"); op and what must be literals. */
static wgml_status check_idx(const char *op, const char *what, const wgml_tensor *idx, int64_t limit)
{
    wgml_ctx *ctx = idx->ctx;
    if (wgml_tensor_nelem(idx) == 0)
        return WGML_OK;
    /* up to IX_THREADS indices in one binding (their span within 64 KiB,
     * the smallest window): one workgroup, one dispatch, writes the verdict
     * whole and nothing is armed (indexing.wgsl, ONE_WG) */
    uint64_t i0, i1;
    byte_range(idx, &i0, &i1);
    bool one = wgml_tensor_nelem(idx) <= IX_THREADS && i1 - i0 <= 65536;
    wgml_status st = one ? WGML_OK : wg_errword_arm(ctx);
    if (st != WGML_OK)
        return st;
    ix_job j = {op, NULL, limit, true, wg_errword_op(ctx, op, what), (uint32_t)idx->ndim, {0}, false, 0};
    ix_slot s[NSLOT];
    memset(s, 0, sizeof s);
    s[SX] = slot_of(idx);
    int64_t it[4], step = 1;
    wg_shape4(idx, it);
    for (int d = 3; d >= 0; d--) { /* j: the logical (row-major) position */
        j.full[d] = (uint32_t)it[d];
        s[SJ].st[d] = step;
        step *= it[d];
    }
    return launch(&j, one ? "CHECK;ONE_WG" : "CHECK", s, it);
}

/* A writing pass (after check_idx) over index rows [0, limit). */
static wgml_status write_pass(const char *op, const char *kind, ix_slot s[NSLOT], const int64_t it[4], int64_t limit)
{
    if (limit == 0) /* no index is valid: CHECK has reported them all */
        return wg_check(s[SX].t->ctx);
    ix_job j = {op, NULL, limit, true, 0, 0, {0}, false, 0};
    return launch(&j, kind, s, it);
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
                               wgml_tensor *out)
{
    wgml_status vst;
    if (axis == 0 && wg_get_rows_vec4(src, idx, out, &vst))
        return vst;
    int64_t it[4];
    wg_shape4(out, it);
    int pad = 4 - out->ndim;
    ix_slot s[NSLOT] = {slot_of(src), idx_slot(idx, pad + first), slot_of(out)};
    s[SA].ax = src->strides[axis];
    s[SA].st[pad + axis] = 0;
    return write_pass(op, "COPY", s, it, src->shape[axis]);
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

wgml_status wg_get_rows_impl(const wgml_tensor *src, const wgml_tensor *idx, wgml_tensor *out)
{
    const char *op = "wgml_get_rows";
    wgml_status st = check_args(op, src, "src", idx, "idx", out, "out");
    if (st == WGML_OK)
        st = out_dtype_rule(op, src, out);
    if (st == WGML_OK)
        st = rows_rule(op, src, "src", idx, out, "out");
    int axis = idx ? idx->ndim - 1 : 0;
    if (st == WGML_OK)
        st = hazards(op, out, "out", src, "src", idx, "idx");
    if (st == WGML_OK)
        st = check_idx(op, "idx", idx, src->shape[axis]);
    if (st != WGML_OK)
        return st;
    if (!wg_dtype_is_plain(src->dtype))
        return wg_get_rows_quant(op, src, idx, axis, out);
    return gather_rows(op, src, axis, idx, 0, out);
}

/* ------------------------------------------------------------ set_rows */

/* set_rows' winners scratch (see wg_set_rows_scratch_bytes): i32 slot
 * v * B + b for table row v of batch b (B batches: idx's dims but the
 * last), rows-major so a window of table rows is a window of slots.  The
 * strides of b over iteration dims first.. (idx's batch dims). */
static void batch_strides(const wgml_tensor *idx, int first, int64_t st[4])
{
    int64_t step = 1;
    memset(st, 0, sizeof(int64_t) * 4);
    for (int d = idx->ndim - 2; d >= 0; d--) {
        st[first + d] = step;
        step *= idx->shape[d];
    }
}

uint64_t wg_set_rows_scratch_bytes(const wgml_tensor *dst, const wgml_tensor *idx)
{
    int axis = idx->ndim - 1;
    int64_t n = idx->shape[axis], nidx = wgml_tensor_nelem(idx);
    /* one index per batch cannot repeat: no scratch, no CLAIM pass */
    return n < 2 ? 0 : (uint64_t)(nidx / n) * (uint64_t)dst->shape[axis] * 4;
}

/* Step 2 (top of the file): w[v * B + b] = 1 + the last position along
 * idx's last dim that points at row v in batch b (0: none). */
static wgml_status claim_rows(const char *op, const wgml_tensor *idx, wgml_tensor *win, int64_t rows)
{
    int axis = idx->ndim - 1, pad = 4 - idx->ndim;
    int64_t it[4];
    wg_shape4(idx, it);
    ix_slot s[NSLOT];
    memset(s, 0, sizeof s);
    s[SX] = slot_of(idx);
    s[SW] = slot_of(win);
    batch_strides(idx, pad, s[SW].st);
    s[SW].ax = wgml_tensor_nelem(idx) / idx->shape[axis];
    s[SJ].st[pad + axis] = 1;
    ix_job j = {op, NULL, rows, false, 0, 0, {0}, false, 0};
    return launch(&j, "CLAIM", s, it);
}

/* set_rows' writing slots: src read in place, dst indexed along the axis. */
static void copy_slots(const wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src, ix_slot s[NSLOT])
{
    int axis = idx->ndim - 1, pad = 4 - src->ndim;
    memset(s, 0, sizeof(ix_slot) * NSLOT);
    s[SA] = slot_of(src);
    s[SX] = idx_slot(idx, pad);
    s[SO] = slot_of(dst);
    s[SO].st[pad + axis] = 0;
    s[SO].ax = dst->strides[axis];
}

/* Whether set_rows' writing pass is one workgroup over operands that each
 * fit one binding (so it is one dispatch whose workgroup meets every
 * index): a decode step's KV-cache write, one row of Hkv * D elements. */
static bool one_pass(const wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src)
{
    uint64_t cap = wg_window_cap(dst->ctx), a0, a1;
    const wgml_tensor *t[3] = {dst, idx, src};
    if (wgml_tensor_nelem(src) == 0 || wgml_tensor_nelem(src) > IX_THREADS)
        return false;
    for (int i = 0; i < 3; i++) {
        byte_range(t[i], &a0, &a1);
        if (a1 - a0 + 256 > cap) /* + the binding offset's alignment slack */
            return false;
    }
    return true;
}

/* set_rows in one dispatch: the writing workgroup checks the indices it
 * uses (every index, see one_pass) and writes nothing if one is bad,
 * recording it for the next sync as the CHECK pass would.  The separate
 * CHECK dispatch cost a decode step ~5 us a KV-cache write on an H200
 * (bench/NOTES.md, WGML_SKIP_KERNELS): 64 of them a Llama-3-8B token. */
static wgml_status set_rows_selfcheck(const char *op, wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src)
{
    int axis = idx->ndim - 1, pad = 4 - src->ndim;
    int64_t it[4], ii[4], step = 1;
    wg_shape4(src, it);
    wg_shape4(idx, ii);
    ix_slot s[NSLOT];
    copy_slots(dst, idx, src, s);
    ix_job j = {op, NULL, dst->shape[axis], true, wg_errword_op(dst->ctx, op, "idx"), (uint32_t)idx->ndim, {0},
                true, (uint32_t)(pad + axis)};
    for (int d = idx->ndim - 1; d >= 0; d--) { /* j: the index's row-major position in idx */
        s[SJ].st[pad + d] = step;
        step *= idx->shape[d];
    }
    for (int d = 0; d < 4; d++)
        j.full[d] = (uint32_t)ii[d];
    return launch(&j, "COPY", s, it);
}

wgml_status wg_set_rows_impl(wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src)
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
    if ((st = hazards(op, dst, "dst", src, "src", idx, "idx")) != WGML_OK)
        return st;
    /* Repeated indices need the CLAIM pass; a quantised dst its own path. */
    uint64_t wb = wg_set_rows_scratch_bytes(dst, idx);
    if (!wb && wg_dtype_is_plain(dst->dtype) && dst->shape[axis] > 0 && one_pass(dst, idx, src))
        return set_rows_selfcheck(op, dst, idx, src);
    if ((st = check_idx(op, "idx", idx, dst->shape[axis])) != WGML_OK)
        return st;
    if (wgml_tensor_nelem(src) == 0)
        return WGML_OK;
    /* Repeated indices: the last occurrence wins, decided on the GPU. */
    wgml_tensor *win = NULL;
    if (wb) {
        int64_t n = (int64_t)(wb / 4);
        st = wg_scratch_tensor(dst->ctx, WGML_I32, 1, &n, &win); /* zeroed: the pool, or a graph arena */
        if (st == WGML_OK)
            st = claim_rows(op, idx, win, dst->shape[axis]);
    }
    if (st == WGML_OK && !wg_dtype_is_plain(dst->dtype)) {
        st = wg_set_rows_quant(dst, idx, src, win);
    } else if (st == WGML_OK) {
        int64_t it[4];
        wg_shape4(src, it);
        int pad = 4 - src->ndim;
        ix_slot s[NSLOT];
        copy_slots(dst, idx, src, s);
        if (win) {
            s[SW] = slot_of(win);
            batch_strides(idx, pad, s[SW].st);
            s[SW].ax = wgml_tensor_nelem(idx) / idx->shape[axis];
            s[SJ].st[pad + axis] = 1;
        }
        st = write_pass(op, "COPY", s, it, dst->shape[axis]);
    }
    wgml_tensor_free(win);
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

wgml_status wg_gather_impl(const wgml_tensor *src, int axis, const wgml_tensor *idx, wgml_tensor *out)
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
    if (st == WGML_OK)
        st = hazards(op, out, "out", src, "src", idx, "idx");
    if (st == WGML_OK)
        st = check_idx(op, "idx", idx, src->shape[a]);
    if (st != WGML_OK)
        return st;
    int64_t it[4];
    wg_shape4(out, it);
    int pad = 4 - out->ndim;
    ix_slot s[NSLOT] = {slot_of(src), slot_of(idx), slot_of(out)};
    s[SA].st[pad + a] = 0;
    s[SA].ax = src->strides[a];
    return write_pass(op, "COPY", s, it, src->shape[a]);
}

wgml_status wg_scatter_add_impl(wgml_tensor *dst, int axis, const wgml_tensor *idx, const wgml_tensor *src)
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
    if (st == WGML_OK)
        st = hazards(op, dst, "dst", src, "src", idx, "idx");
    if (st == WGML_OK)
        st = check_idx(op, "idx", idx, dst->shape[a]);
    if (st != WGML_OK)
        return st;
    int64_t it[4];
    wg_shape4(idx, it);
    int pad = 4 - idx->ndim;
    ix_slot s[NSLOT] = {slot_of(src), slot_of(idx), slot_of(dst)};
    s[SO].st[pad + a] = 0;
    s[SO].ax = dst->strides[a];
    return write_pass(op, "ADD", s, it, dst->shape[a]);
}

/* ------------------------------------------------------------ index_select, one_hot, embedding */

wgml_status wg_index_select_impl(const wgml_tensor *src, int axis, const wgml_tensor *idx, wgml_tensor *out)
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
    if (st == WGML_OK)
        st = hazards(op, out, "out", src, "src", idx, "idx");
    if (st == WGML_OK)
        st = check_idx(op, "idx", idx, src->shape[a]);
    return st != WGML_OK ? st : gather_rows(op, src, a, idx, a, out);
}

wgml_status wg_one_hot_impl(const wgml_tensor *idx, wgml_tensor *out)
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
    if ((st = hazards(op, out, "out", idx, "idx", NULL, "-")) != WGML_OK ||
        (st = check_idx(op, "idx", idx, classes)) != WGML_OK)
        return st;
    int64_t it[4];
    wg_shape4(out, it);
    ix_slot s[NSLOT] = {{NULL, 0, {0}, 0}, idx_slot(idx, 4 - out->ndim), slot_of(out)};
    return write_pass(op, "ONE_HOT", s, it, classes);
}

wgml_status wg_embedding_impl(const wgml_tensor *table, const wgml_tensor *ids, wgml_tensor *out)
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
    if ((st = hazards(op, out, "out", table, "table", ids, "ids")) != WGML_OK ||
        (st = check_idx(op, "ids", ids, table->shape[0])) != WGML_OK)
        return st;
    if (!wg_dtype_is_plain(table->dtype))
        return wg_get_rows_quant(op, table, ids, 0, out);
    int64_t it[4];
    wg_shape4(out, it);
    ix_slot s[NSLOT] = {slot_of(table), idx_slot(ids, 4 - out->ndim), slot_of(out)};
    memset(s[SA].st, 0, sizeof s[SA].st);
    s[SA].st[3] = table->strides[1];
    s[SA].ax = table->strides[0];
    return write_pass(op, "COPY", s, it, table->shape[0]);
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
