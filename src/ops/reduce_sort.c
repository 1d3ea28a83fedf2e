/*
 * Ops along rows.
 *
 * cumsum (kernel reduce_scan.wgsl): one workgroup per row (or per several
 * short rows) walks the row in chunks with a running carry; few long rows
 * are cut into blocks whose totals are scanned in between (three passes).
 *
 * argsort and top_k (kernel reduce_sort.wgsl): a stable bitonic sort of
 * (key, index) pairs per row of the last axis.  Rows whose padded length
 * fits one block of workgroup memory (2048 pairs, 16 KiB) sort in a single
 * dispatch straight from x to the outputs; longer rows (2^18 and beyond)
 * go through a pair array in global memory: one dispatch sorts blocks,
 * then each merge stage k runs its long distances as global steps and
 * finishes the distances below a block in workgroup memory, so a 2^18 row
 * takes 36 dispatches instead of 171.  top_k sorts descending and keeps
 * the first k.  A row whose pair array or windows exceed one binding is
 * sorted in chunks and merged by rank (sort_long).
 */
#include "reduce.h"
#include "elementwise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK WG_SORT_BLOCK
#define WG 256u
#define TARGET_WG 1024      /* workgroups that fill a large GPU */
#define MAX_ELEMS (1ull << 31)

static uint32_t pow2ceil(uint64_t v)
{
    uint32_t p = 1;
    while (p < v && p < (1u << 31))
        p <<= 1;
    return p;
}

static int64_t strides_of(int ndim, const int64_t *shape, int64_t *s)
{
    int64_t n = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        s[i] = n;
        n *= shape[i];
    }
    return n;
}

/* ------------------------------------------------------------ cumsum */

typedef struct sparams {
    uint32_t sh[4], xst[4], ost[4];
    uint32_t rows, tpr, blk, nblk, xoff, ooff, excl, tb0;
} sparams;

/* One scan dispatch.  xdt/odt: dtypes of the x and o bindings; mode:
 * NULL (plain), "TOTALS" (b[1] receives block totals) or "CARRY_IN"
 * (b[2] holds each block's start). */
static wgml_status scan_dispatch(wgml_ctx *ctx, wgml_dtype xdt, bool x_rw, wgml_dtype odt, const char *mode,
                                 const wg_binding *b, int nb, sparams *p)
{
    char defs[192];
    /* Inside a graph's arena x, the totals and carries (scratch) and out
     * may share one buffer: a read binding sharing it with a written one
     * (b[1], or x bound read_write) is bound read_write too. */
    x_rw = x_rw || b[0].buffer == b[1].buffer;
    bool c_rw = nb == 3 && (b[2].buffer == b[1].buffer || (x_rw && b[2].buffer == b[0].buffer));
    snprintf(defs, sizeof defs, "X_DT=%s;X_MODE=%s;O_DT=%s;CIN_ACCESS=%s%s%s", wg_dtype(xdt)->wgsl,
             x_rw ? "rw" : "r", wg_dtype(odt)->wgsl, c_rw ? "read_write" : "read", mode ? ";" : "", mode ? mode : "");
    unsigned ro = (x_rw ? 0u : 1u) | (nb == 3 && !c_rw ? 4u : 0u);
    wg_kernel_ref ref = {"reduce_scan.wgsl", "scan", defs, nb, ro};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    uint64_t rpw = WG / p->tpr, groups = ((uint64_t)p->rows + rpw - 1) / rpw * p->nblk;
    return wg_dispatch(ctx, k, b, nb, p, sizeof *p, (uint32_t)groups, 1, 1);
}

static wgml_status cumsum_run(const wgml_tensor *x, int a, int exclusive, wgml_tensor *out);

static uint32_t scan_threads(int64_t len)
{
    uint32_t t = pow2ceil((uint64_t)(len + 3) / 4);
    return t > WG ? WG : t;
}

wgml_status wg_cumsum_impl(const wgml_tensor *x, int axis, int exclusive, wgml_tensor *out)
{
    const char *name = "wgml_cumsum";
    wgml_status st = wg_check_tensor(name, "x", x);
    if (st != WGML_OK)
        return st;
    if (!(WG_CUMSUM_DTYPES & WG_DT_BIT(x->dtype)))
        return wg_fail(WGML_ERR_DTYPE, "%s: dtype %s is not supported (floats, i32, u32)", name,
                       wgml_dtype_name(x->dtype));
    int a = wg_axis(x, axis);
    if (a < 0)
        return wg_fail(WGML_ERR_INDEX, "%s: axis %d out of range for %d dims", name, axis, x->ndim);
    if ((st = wg_check_out(name, out, x->dtype, x->ndim, x->shape)) != WGML_OK)
        return st;
    if (!wg_same_ctx(x, out))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", name);
    if ((st = wg_check_writes(name, "out", out, true, "x", x, WG_END)) != WGML_OK)
        return st;
    return cumsum_run(x, a, exclusive, out);
}

/* Halves of x and out along dim d (views). */
static wgml_status halves(const wgml_tensor *t, int d, wgml_tensor **lo, wgml_tensor **hi)
{
    int64_t h = t->shape[d] / 2;
    *lo = *hi = NULL;
    wgml_status st = wgml_view_slice(t, d, 0, h, 1, lo);
    if (st == WGML_OK)
        st = wgml_view_slice(t, d, h, t->shape[d], 1, hi);
    return st;
}

/* Bytes t's window spans (all of t). */
static uint64_t window_bytes(const wgml_tensor *t)
{
    uint64_t w = 1;
    for (int i = 0; i < t->ndim; i++)
        w += (uint64_t)(t->shape[i] - 1) * (uint64_t)t->strides[i];
    return w * wg_dtype(t->dtype)->block_bytes;
}

wgml_status wg_split_rows(const char *name, const wgml_tensor *const *ts, int n, int skip,
                          wgml_status (*run)(void *, wgml_tensor *const *), void *arg)
{
    int d = 0;
    while (d < ts[0]->ndim && (d == skip || ts[0]->shape[d] < 2))
        d++;
    if (d >= ts[0]->ndim) { /* one row left: name its widest operand */
        int w = 0;
        for (int i = 1; i < n; i++)
            w = ts[i] && window_bytes(ts[i]) > window_bytes(ts[w]) ? i : w;
        return wg_fail_window(ts[0]->ctx, window_bytes(ts[w]), "%s: one row of %lld elements (element stride %lld)",
                              name, (long long)ts[w]->shape[skip], (long long)ts[w]->strides[skip]);
    }
    wgml_tensor *lo[4] = {0}, *hi[4] = {0};
    wgml_status st = WGML_OK;
    for (int i = 0; i < n && st == WGML_OK; i++)
        st = halves(ts[i], d, &lo[i], &hi[i]);
    /* The halves run one after the other: the second reuses the first's
     * scratch (wg_scratch_release), so scratch bounds one part, not the sum. */
    uint64_t mark = wg_scratch_mark(ts[0]->ctx);
    if (st == WGML_OK)
        st = run(arg, lo);
    wg_scratch_release(ts[0]->ctx, mark);
    if (st == WGML_OK)
        st = run(arg, hi);
    wg_scratch_release(ts[0]->ctx, mark);
    for (int i = 0; i < n; i++) {
        wgml_tensor_free(lo[i]);
        wgml_tensor_free(hi[i]);
    }
    return st;
}

/* One row longer than one binding: pieces that fit, each scanned on its
 * own (TOTALS: its total -> tot[j]), an exclusive cumsum of the totals,
 * and each piece again from its carry (CARRY_IN: pre[j]).  Every word of
 * tot and pre is bound as a window of its own, so any count of pieces
 * works; the totals' scan recurses through cumsum_run. */
static wgml_status cumsum_long(const wgml_tensor *x, int a, int exclusive, wgml_tensor *out)
{
    wgml_ctx *ctx = x->ctx;
    uint64_t esz = wg_dtype(x->dtype)->block_bytes;
    int64_t len = x->shape[a];
    wg_view4 xv = wg_view4_of(x), ov = wg_view4_of(out);
    wg_win w[2] = {{x->st->buf, xv.offset, {0, 0, 0, x->strides[a]}, esz, 0, "x"},
                   {out->st->buf, ov.offset, {0, 0, 0, out->strides[a]}, esz, 0, "out"}};
    const int64_t row[4] = {1, 1, 1, len};
    int64_t most = wg_win_most(ctx, w, 2, row, 3, MAX_ELEMS);
    if (most == 0)
        return wg_fail_window(ctx, esz, "wgml_cumsum: one element");
    int64_t pieces = (len + most - 1) / most, plen = (len + pieces - 1) / pieces;
    pieces = (len + plen - 1) / plen;
    wgml_dtype at = wg_dtype_is_float(x->dtype) ? WGML_F32 : x->dtype;
    wgml_tensor *tot = NULL, *pre = NULL;
    const int64_t ts[1] = {pieces};
    wgml_status st = wg_scratch_tensor(ctx, at, 1, ts, &tot);
    if (st == WGML_OK)
        st = wg_scratch_tensor(ctx, at, 1, ts, &pre);
    bool x_rw = x->st->buf == out->st->buf;
    for (int pass = 0; pass < 2 && st == WGML_OK; pass++) {
        for (int64_t j = 0; j < pieces && st == WGML_OK; j++) {
            int64_t n = len - j * plen < plen ? len - j * plen : plen;
            const int64_t sub[4] = {1, 1, 1, n};
            wg_win wx = w[0], wo = w[1];
            wx.offset += (uint64_t)(j * plen * x->strides[a]);
            wo.offset += (uint64_t)(j * plen * out->strides[a]);
            sparams p;
            memset(&p, 0, sizeof p);
            p.sh[0] = p.sh[1] = p.sh[2] = 1;
            p.sh[3] = (uint32_t)n;
            p.xst[3] = (uint32_t)x->strides[a];
            p.ost[3] = (uint32_t)out->strides[a];
            p.rows = 1;
            p.tpr = scan_threads(n);
            p.blk = (uint32_t)n;
            p.nblk = 1;
            p.excl = exclusive ? 1 : 0;
            wg_binding b[3];
            b[0] = wg_win_bind(&wx, sub, &p.xoff);
            b[1] = wg_win_bind(&wo, sub, &p.ooff);
            const wgml_tensor *t = pass ? pre : tot;
            uint64_t rem;
            b[pass + 1] = wg_bind_from(t->st->buf, (wg_view4_of(t).offset + (uint64_t)j) * 4, 4, &rem);
            p.tb0 = (uint32_t)(rem / 4);
            st = scan_dispatch(ctx, x->dtype, x_rw, x->dtype, pass ? "CARRY_IN" : "TOTALS", b, pass + 2, &p);
        }
        if (pass == 0 && st == WGML_OK)
            st = cumsum_run(tot, 0, 1, pre);
    }
    wgml_tensor_free(tot);
    wgml_tensor_free(pre);
    return st;
}

typedef struct cumsum_args { int axis, exclusive; } cumsum_args;

static wgml_status cumsum_part(void *arg, wgml_tensor *const *ts)
{
    const cumsum_args *c = arg;
    return cumsum_run(ts[0], c->axis, c->exclusive, ts[1]);
}

static wgml_status cumsum_run(const wgml_tensor *x, int a, int exclusive, wgml_tensor *out)
{
    const char *name = "wgml_cumsum";
    wgml_status st;
    wgml_ctx *ctx = x->ctx;
    int64_t n = wgml_tensor_nelem(x), len = x->shape[a], rows = n / (len ? len : 1);
    if (n == 0)
        return wg_check(ctx);
    sparams p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < 3; i++)
        p.sh[i] = 1;
    int k = 2;
    for (int i = x->ndim - 1; i >= 0; i--)
        if (i != a) {
            p.sh[k] = (uint32_t)x->shape[i];
            p.xst[k] = (uint32_t)x->strides[i];
            p.ost[k] = (uint32_t)out->strides[i];
            k--;
        }
    p.sh[3] = (uint32_t)len;
    p.xst[3] = (uint32_t)x->strides[a];
    p.ost[3] = (uint32_t)out->strides[a];
    uint64_t cap = wg_window_cap(ctx);
    uint64_t xesz = wg_dtype(x->dtype)->block_bytes, xw = 1, ow = 1;
    for (int i = 0; i < x->ndim; i++) {
        xw += (uint64_t)(x->shape[i] - 1) * (uint64_t)x->strides[i];
        ow += (uint64_t)(x->shape[i] - 1) * (uint64_t)out->strides[i];
    }
    if ((uint64_t)n > MAX_ELEMS || xw * xesz > cap || ow * xesz > cap) {
        if (rows == 1)
            return cumsum_long(x, a, exclusive, out);
        /* rows in halves until each part's windows fit */
        cumsum_args c = {a, exclusive};
        const wgml_tensor *ts[2] = {x, out};
        return wg_split_rows(name, ts, 2, a, cumsum_part, &c);
    }
    uint64_t rem;
    wg_binding b[3];
    b[0] = wg_bind_from(x->st->buf, wg_view4_of(x).offset * xesz, xw * xesz, &rem);
    p.xoff = (uint32_t)(rem / xesz);
    b[1] = wg_bind_from(out->st->buf, wg_view4_of(out).offset * xesz, ow * xesz, &rem);
    p.ooff = (uint32_t)(rem / xesz);
    bool x_rw = x->st->buf == out->st->buf; /* in place */
    p.rows = (uint32_t)rows;
    p.tpr = scan_threads(len);
    p.excl = exclusive ? 1 : 0;
    uint64_t rpw = WG / p.tpr, nrb = ((uint64_t)rows + rpw - 1) / rpw, nblk = 1;
    /* Few long rows: blocks of >= 4096 so the GPU fills, joined by an
     * exclusive scan of their totals. */
    if (nrb < TARGET_WG && len > 8192) {
        nblk = (TARGET_WG + nrb - 1) / nrb;
        if (nblk > (uint64_t)(len + 4095) / 4096)
            nblk = (uint64_t)(len + 4095) / 4096;
    }
    uint64_t blk = ((uint64_t)len + nblk - 1) / nblk;
    nblk = ((uint64_t)len + blk - 1) / blk;
    p.blk = (uint32_t)blk;
    p.nblk = (uint32_t)nblk;
    if (nblk == 1)
        return scan_dispatch(ctx, x->dtype, x_rw, x->dtype, NULL, b, 2, &p);
    /* Totals and their exclusive scan in the accumulation type (4 bytes),
     * in scratch (wg_sc_cumsum bounds rows * nblk by 2046: nblk > 1 needs
     * len > 8192, so 256 threads a row, one row a workgroup, nrb = rows
     * < 1024 and nblk <= ceil(1024 / rows)).  Every word is written before
     * it is read. */
    wgml_dtype at = wg_dtype_is_float(x->dtype) ? WGML_F32 : x->dtype;
    wgml_tensor *tot = NULL, *pre = NULL;
    const int64_t ts[1] = {rows * (int64_t)nblk};
    uint64_t bytes = (uint64_t)ts[0] * 4, rt, rp;
    if ((st = wg_scratch_tensor(ctx, at, 1, ts, &tot)) == WGML_OK)
        st = wg_scratch_tensor(ctx, at, 1, ts, &pre);
    wg_binding btot = {0}, bpre = {0};
    if (st == WGML_OK) {
        /* 256-aligned starts: the bindings start there (rt = rp = 0) */
        btot = wg_bind_from(tot->st->buf, wg_view4_of(tot).offset * 4, bytes, &rt);
        bpre = wg_bind_from(pre->st->buf, wg_view4_of(pre).offset * 4, bytes, &rp);
        wg_binding bt[2] = {b[0], btot};
        p.tb0 = (uint32_t)(rt / 4);
        st = scan_dispatch(ctx, x->dtype, x_rw, x->dtype, "TOTALS", bt, 2, &p);
    }
    if (st == WGML_OK) {
        sparams q;
        memset(&q, 0, sizeof q);
        q.sh[0] = q.sh[1] = 1;
        q.sh[2] = (uint32_t)rows;
        q.sh[3] = (uint32_t)nblk;
        q.xst[2] = q.ost[2] = (uint32_t)nblk;
        q.xst[3] = q.ost[3] = 1;
        q.rows = (uint32_t)rows;
        q.tpr = scan_threads((int64_t)nblk);
        q.blk = (uint32_t)nblk;
        q.nblk = 1;
        q.excl = 1;
        q.xoff = (uint32_t)(rt / 4);
        q.ooff = (uint32_t)(rp / 4);
        wg_binding bp[2] = {btot, bpre};
        st = scan_dispatch(ctx, at, false, at, NULL, bp, 2, &q);
    }
    if (st == WGML_OK) {
        b[2] = bpre;
        p.tb0 = (uint32_t)(rp / 4);
        st = scan_dispatch(ctx, x->dtype, x_rw, x->dtype, "CARRY_IN", b, 3, &p);
    }
    wgml_tensor_free(tot);
    wgml_tensor_free(pre);
    return st;
}

void wg_cumsum_ref(wgml_dtype dt, const double *x, int ndim, const int64_t *shape, int axis, int exclusive,
                   double *out)
{
    int64_t s[4];
    int64_t n = strides_of(ndim, shape, s), len = shape[axis];
    bool fl = wg_dtype_is_float(dt);
    for (int64_t i = 0; i < n; i++) {
        if ((i / s[axis]) % len != 0)
            continue;
        double acc = 0;
        uint32_t u = 0;
        for (int64_t j = 0; j < len; j++) {
            double v = x[i + j * s[axis]];
            if (exclusive)
                out[i + j * s[axis]] = fl ? acc : wg_wrap_int(dt == WGML_I32 ? (double)(int32_t)u : u, dt);
            acc += v;
            u += (uint32_t)(int64_t)v;
            if (!exclusive)
                out[i + j * s[axis]] = fl ? acc : wg_wrap_int(dt == WGML_I32 ? (double)(int32_t)u : u, dt);
        }
    }
}

typedef struct oparams {
    uint32_t sh[4], xst[4], ost[4], vst[4];
    uint32_t rows, r0, n, lg, kout, k, j, kend, xoff, ooff, voff, desc;
    uint32_t ibase, w0, wn, pad;
} oparams;

typedef struct sorter {
    wgml_ctx *ctx;
    const wgml_tensor *x;
    const char *kind;   /* FLOAT / SINT / UINT */
    bool values, x_rw;
    wgml_dtype vdt;
    wg_binding bx, bo, bv, bp;
} sorter;

/* src_x: read x (else pairs); dst_out: write the outputs (else pairs). */
static wgml_status local_pass(const sorter *s, bool src_x, bool dst_out, oparams *p)
{
    char defs[200];
    snprintf(defs, sizeof defs, "X_DT=%s;X_MODE=%s;V_DT=%s;%s%s%s%s", wg_dtype(s->x->dtype)->wgsl,
             s->x_rw ? "rw" : "r", wg_dtype(s->vdt)->wgsl, s->kind, src_x ? ";SRC_X" : "",
             dst_out ? ";DST_OUT" : "", dst_out && s->values ? ";VALUES" : "");
    wg_binding b[4];
    int nb = 0;
    unsigned ro = 0, xro = s->x_rw ? 0u : 1u;
    if (src_x) {
        b[nb++] = s->bx;
        ro |= xro;
        if (dst_out) {
            b[nb++] = s->bo;
            if (s->values)
                b[nb++] = s->bv;
        } else {
            b[nb++] = s->bp;
        }
    } else {
        b[nb++] = s->bp;
        if (dst_out) {
            b[nb++] = s->bo;
            if (s->values) {
                b[nb++] = s->bx;
                ro |= xro << 2;
                b[nb++] = s->bv;
            }
        }
    }
    wg_kernel_ref ref = {"reduce_sort.wgsl", "sort_local", defs, nb, ro};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(s->ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    uint64_t groups = ((uint64_t)p->rows * p->n + BLOCK - 1) / BLOCK;
    return wg_dispatch(s->ctx, k, b, nb, p, sizeof *p, (uint32_t)groups, 1, 1);
}

static wgml_status step_pass(const sorter *s, oparams *p)
{
    wg_kernel_ref ref = {"reduce_sort.wgsl", "sort_step", "STEP", 1, 0};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(s->ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    uint64_t groups = ((uint64_t)p->rows * p->n / 2 + WG - 1) / WG;
    return wg_dispatch(s->ctx, k, &s->bp, 1, p, sizeof *p, (uint32_t)groups, 1, 1);
}

/* Window of t (all of it) as one binding; false when it does not fit. */
static bool window(const wgml_tensor *t, uint64_t cap, wg_binding *b, uint32_t *off)
{
    uint64_t esz = wg_dtype(t->dtype)->block_bytes, bytes = window_bytes(t), rem;
    if (bytes > cap)
        return false;
    *b = wg_bind_from(t->st->buf, wg_view4_of(t).offset * esz, bytes, &rem);
    *off = (uint32_t)(rem / esz);
    return true;
}

static void lead_dims(const wgml_tensor *t, uint32_t sh[4], uint32_t st[4])
{
    for (int i = 0; i < 4; i++) {
        int d = t->ndim - 4 + i;
        if (sh)
            sh[i] = d >= 0 ? (uint32_t)t->shape[d] : 1;
        st[i] = d >= 0 ? (uint32_t)t->strides[d] : 0;
    }
}

/* Sorts p->rows rows of p->n > BLOCK pairs from x through the pair array
 * s->bp: blocks in workgroup memory, then each merge stage's long
 * distances as global steps; the last stage writes the outputs (to_out)
 * or leaves the sorted pairs. */
static wgml_status sort_pairs(const sorter *s, oparams *p, bool to_out)
{
    p->k = 2;
    p->j = 1;
    p->kend = p->n < BLOCK ? p->n : BLOCK;
    wgml_status st = local_pass(s, true, to_out && p->n <= BLOCK, p);
    for (uint32_t k = 2 * BLOCK; k <= p->n && st == WGML_OK; k <<= 1) {
        p->k = k;
        for (uint32_t j = k / 2; j >= BLOCK && st == WGML_OK; j >>= 1) {
            p->j = j;
            st = step_pass(s, p);
        }
        p->j = BLOCK / 2;
        p->kend = k;
        if (st == WGML_OK)
            st = local_pass(s, false, to_out && k == p->n, p);
    }
    return st;
}

/* One dispatch of sort_rank or sort_scatter over the C pairs of a chunk. */
static wgml_status merge_pass(const sorter *s, const char *defs, const char *entry, const wg_binding *b, int nb,
                              unsigned ro, oparams *p)
{
    wg_kernel_ref ref = {"reduce_sort.wgsl", entry, defs, nb, ro};
    wgml_kernel *k;
    wgml_status st = wg_kernel_get(s->ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    return wg_dispatch(s->ctx, k, b, nb, p, sizeof *p, (p->n + WG - 1) / WG, 1, 1);
}

/* Chunk a (C elements from a * C) of the contiguous row xs, bound; sets
 * the chunk's offset, length and first index in p. */
static wg_binding chunk_x(const wgml_tensor *xs, uint64_t len, uint64_t C, uint64_t a, oparams *p)
{
    uint64_t esz = wg_dtype(xs->dtype)->block_bytes, n = len - a * C < C ? len - a * C : C, rem;
    wg_binding b = wg_bind_from(xs->st->buf, (wg_view4_of(xs).offset + a * C) * esz, n * esz, &rem);
    p->xoff = (uint32_t)(rem / esz);
    p->sh[3] = (uint32_t)n;
    p->ibase = (uint32_t)(a * C);
    return b;
}

/* The window operand of a one-row tensor's row (absent for NULL). */
static wg_win row_win(const wgml_tensor *t, const char *name)
{
    wg_win w = {NULL, 0, {0, 0, 0, 0}, 4, 0, name};
    if (t) {
        w.buf = t->st->buf;
        w.offset = wg_view4_of(t).offset;
        w.st[3] = t->strides[t->ndim - 1];
        w.esz = wg_dtype(t->dtype)->block_bytes;
    }
    return w;
}

/* One row whose pairs or windows exceed one binding.  A strided row is
 * first copied to a contiguous scratch (the copy walks any windows).
 * The row is sorted in chunks of C pairs (a power of two whose pairs fit
 * one binding) into a pair scratch; a pair's place in the row is then its
 * count of smaller pairs over every chunk (sort_rank, K^2 passes for K
 * chunks: fine while a chunk is a whole binding), and sort_scatter writes
 * each chunk's pairs to the output windows their ranks fall in.  Chunks
 * take at least 64 pairs, so every chunk's pairs (512 bytes) and ranks
 * start on a binding-offset boundary. */
static wgml_status sort_long(const char *name, const wgml_tensor *x, bool desc, int64_t kout, const wgml_tensor *oi,
                             const wgml_tensor *ov)
{
    wgml_ctx *ctx = x->ctx;
    uint64_t cap = wg_window_cap(ctx), rem;
    int ax = x->ndim - 1;
    uint64_t len = (uint64_t)x->shape[ax], C = 64;
    while (C * 16 <= cap && C < len)
        C *= 2;
    if (C * 8 > cap)
        return wg_fail_window(ctx, C * 8, "%s: the (key, index) pairs of a chunk of %llu elements", name,
                              (unsigned long long)C);
    uint64_t K = (len + C - 1) / C;
    /* Scratch (wg_sc_argsort): the copy of a strided row, K * C pairs and
     * ranks; K * C <= max(64, pow2ceil(len)), C being a power of two. */
    wgml_tensor *xc = NULL, *pt = NULL, *rt = NULL;
    wgml_status st = WGML_OK;
    if (x->strides[ax] != 1 && (st = wg_scratch_tensor(ctx, x->dtype, x->ndim, x->shape, &xc)) == WGML_OK)
        st = wg_copy_impl(x, xc);
    const wgml_tensor *xs = xc ? xc : x;
    const int64_t npair[1] = {(int64_t)(K * C * 2)}, nrank[1] = {(int64_t)(K * C)};
    if (st == WGML_OK)
        st = wg_scratch_tensor(ctx, WGML_U32, 1, npair, &pt);
    if (st == WGML_OK)
        st = wg_scratch_tensor(ctx, WGML_U32, 1, nrank, &rt);
    /* byte starts; a chunk's C >= 64 pairs (512 bytes) keep every chunk on
     * a binding-offset boundary from there */
    wgml_buffer *pairs = pt ? pt->st->buf : NULL, *rank = rt ? rt->st->buf : NULL;
    uint64_t p0 = pt ? wg_view4_of(pt).offset * 4 : 0, r0 = rt ? wg_view4_of(rt).offset * 4 : 0;
    sorter s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.x = xs;
    s.values = ov != NULL;
    s.vdt = ov ? ov->dtype : x->dtype;
    s.kind = wg_dtype_is_float(x->dtype) ? "FLOAT" : wg_dtype(x->dtype)->kind == WG_KIND_INT ? "SINT" : "UINT";
    /* Scratch shares the arena with the outputs (and maybe x) in a graph:
     * a binding sharing a buffer with a written one is bound read_write. */
    const wgml_buffer *X = xs->st->buf, *O = oi->st->buf, *OV = ov ? ov->st->buf : NULL;
    bool pr_rw = pairs == rank || pairs == O || pairs == OV || pairs == X || rank == O || rank == OV || rank == X;
    s.x_rw = X == O || X == OV || X == pairs || X == rank;
    const char *pr = pr_rw ? "read_write" : "read";
    unsigned pro = pr_rw ? 0u : 3u;
    oparams p;
    memset(&p, 0, sizeof p);
    p.rows = 1;
    p.n = (uint32_t)C;
    while ((1ull << p.lg) < C)
        p.lg++;
    p.desc = desc ? 1 : 0;
    p.sh[0] = p.sh[1] = p.sh[2] = 1;
    p.xst[3] = 1;
    p.kout = (uint32_t)kout;
    p.ost[3] = (uint32_t)oi->strides[ax];
    p.vst[3] = ov ? (uint32_t)ov->strides[ax] : 0;
    wg_binding bpair[2], brank; /* [0]: chunk a, [1]: chunk b */
    for (uint64_t a = 0; a < K && st == WGML_OK; a++) { /* 1: each chunk to sorted pairs */
        s.bx = chunk_x(xs, len, C, a, &p);
        s.bp = wg_bind_from(pairs, p0 + a * C * 8, C * 8, &rem);
        st = sort_pairs(&s, &p, false);
    }
    for (uint64_t a = 0; a < K && st == WGML_OK; a++) { /* 2: ranks */
        bpair[0] = wg_bind_from(pairs, p0 + a * C * 8, C * 8, &rem);
        brank = wg_bind_from(rank, r0 + a * C * 4, C * 4, &rem);
        for (uint64_t b = 0; b < K && st == WGML_OK; b++) {
            bpair[1] = wg_bind_from(pairs, p0 + b * C * 8, C * 8, &rem);
            wg_binding bs[3] = {bpair[0], bpair[1], brank};
            char rdefs[64];
            snprintf(rdefs, sizeof rdefs, "RANK;PR=%s%s", pr, b ? "" : ";RANK_INIT");
            st = merge_pass(&s, rdefs, "sort_rank", bs, 3, pro, &p);
        }
    }
    /* 3: the output row in windows of ranks that fit */
    wg_win wo[2] = {row_win(oi, "indices"), row_win(ov, "values")};
    const int64_t orow[4] = {1, 1, 1, kout};
    int64_t W = wg_win_most(ctx, wo, 2, orow, 3, MAX_ELEMS);
    if (W == 0 && st == WGML_OK)
        st = wg_fail_window(ctx, wg_win_bytes(&wo[0], (const int64_t[4]){1, 1, 1, 1}), "%s: one output element",
                            name);
    char defs[160];
    snprintf(defs, sizeof defs, "SCATTER;PR=%s;X_DT=%s;X_MODE=%s;V_DT=%s%s", pr, wg_dtype(xs->dtype)->wgsl,
             s.x_rw ? "rw" : "r", wg_dtype(s.vdt)->wgsl, ov ? ";VALUES" : "");
    for (int64_t w0 = 0; w0 < kout && st == WGML_OK; w0 += W) {
        const int64_t sub[4] = {1, 1, 1, kout - w0 < W ? kout - w0 : W};
        wg_win wi = wo[0], wv = wo[1];
        wi.offset += (uint64_t)(w0 * wi.st[3]);
        wv.offset += (uint64_t)(w0 * wv.st[3]);
        wg_binding bs[5];
        bs[2] = wg_win_bind(&wi, sub, &p.ooff);
        if (ov)
            bs[4] = wg_win_bind(&wv, sub, &p.voff);
        p.w0 = (uint32_t)w0;
        p.wn = (uint32_t)sub[3];
        for (uint64_t a = 0; a < K && st == WGML_OK; a++) {
            bs[0] = wg_bind_from(pairs, p0 + a * C * 8, C * 8, &rem);
            bs[1] = wg_bind_from(rank, r0 + a * C * 4, C * 4, &rem);
            bs[3] = chunk_x(xs, len, C, a, &p);
            st = merge_pass(&s, defs, "sort_scatter", bs, ov ? 5 : 3, pro | (s.x_rw ? 0u : 8u), &p);
        }
    }
    wgml_tensor_free(pt);
    wgml_tensor_free(rt);
    wgml_tensor_free(xc);
    return st;
}

static wgml_status sort_rows(const char *name, const wgml_tensor *x, bool desc, int64_t kout, const wgml_tensor *oi,
                             const wgml_tensor *ov);

typedef struct sort_args { const char *name; bool desc; int64_t kout; } sort_args;

static wgml_status sort_part(void *arg, wgml_tensor *const *ts)
{
    const sort_args *a = arg;
    return sort_rows(a->name, ts[0], a->desc, a->kout, ts[1], ts[2]); /* ts[2] NULL without values */
}

static wgml_status sort_rows(const char *name, const wgml_tensor *x, bool desc, int64_t kout, const wgml_tensor *oi,
                             const wgml_tensor *ov)
{
    wgml_ctx *ctx = x->ctx;
    int64_t len = x->shape[x->ndim - 1], rows = wgml_tensor_nelem(x) / (len ? len : 1);
    if (rows == 0 || len == 0 || kout == 0)
        return wg_check(ctx);
    uint64_t cap = wg_window_cap(ctx);
    oparams p;
    memset(&p, 0, sizeof p);
    p.n = 1;
    while (p.n < (uint64_t)len) {
        p.n <<= 1;
        p.lg++;
    }
    sorter s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.x = x;
    p.desc = desc ? 1 : 0;
    s.values = ov != NULL;
    s.vdt = ov ? ov->dtype : x->dtype;
    s.kind = wg_dtype_is_float(x->dtype) ? "FLOAT" : wg_dtype(x->dtype)->kind == WG_KIND_INT ? "SINT" : "UINT";
    s.x_rw = x->st->buf == oi->st->buf || (ov && x->st->buf == ov->st->buf);
    /* Rows of more than one block go through a pair array in one binding. */
    bool pairs_fit = p.n <= BLOCK || (uint64_t)p.n * 8 <= cap;
    if ((uint64_t)rows * (uint64_t)p.n > (1ull << 31) || !pairs_fit || !window(x, cap, &s.bx, &p.xoff) ||
        !window(oi, cap, &s.bo, &p.ooff) || (ov && !window(ov, cap, &s.bv, &p.voff))) {
        if (rows == 1)
            return sort_long(name, x, desc, kout, oi, ov);
        /* rows in halves until each part's windows fit */
        sort_args a = {name, desc, kout};
        const wgml_tensor *ts[3] = {x, oi, ov};
        return wg_split_rows(name, ts, ov ? 3 : 2, x->ndim - 1, sort_part, &a);
    }
    lead_dims(x, p.sh, p.xst);
    lead_dims(oi, NULL, p.ost);
    if (ov)
        lead_dims(ov, NULL, p.vst);
    p.kout = (uint32_t)kout;
    wgml_status st = WGML_OK;
    if (p.n <= BLOCK) { /* one dispatch: x -> sorted -> outputs */
        p.rows = (uint32_t)rows;
        p.k = 2;
        p.j = 1;
        p.kend = p.n;
        return local_pass(&s, true, true, &p);
    }
    /* Rows in groups whose pairs fit one binding; the pair array (scratch,
     * at most rows * n * 8 bytes: wg_sc_argsort) is reused. */
    uint64_t group = cap / ((uint64_t)p.n * 8), rem;
    if (group > (uint64_t)rows)
        group = (uint64_t)rows;
    wgml_tensor *pairs = NULL;
    const int64_t npair[1] = {(int64_t)(group * p.n * 2)};
    if ((st = wg_scratch_tensor(ctx, WGML_U32, 1, npair, &pairs)) != WGML_OK)
        return st;
    /* the kernels index pairs from the binding's start: 256-aligned, so rem = 0 */
    s.bp = wg_bind_from(pairs->st->buf, wg_view4_of(pairs).offset * 4, group * p.n * 8, &rem);
    s.x_rw = s.x_rw || x->st->buf == pairs->st->buf; /* x in the arena beside its pair scratch */
    for (uint64_t r0 = 0; r0 < (uint64_t)rows && st == WGML_OK; r0 += group) {
        p.r0 = (uint32_t)r0;
        p.rows = (uint32_t)((uint64_t)rows - r0 < group ? (uint64_t)rows - r0 : group);
        st = sort_pairs(&s, &p, true);
    }
    wgml_tensor_free(pairs);
    return st;
}

static wgml_status sort_checks(const char *name, const wgml_tensor *x)
{
    wgml_status st = wg_check_tensor(name, "x", x);
    if (st != WGML_OK)
        return st;
    if (!(WG_SORT_DTYPES & WG_DT_BIT(x->dtype)))
        return wg_fail(WGML_ERR_DTYPE, "%s: dtype %s is not supported", name, wgml_dtype_name(x->dtype));
    if (x->ndim == 0)
        return wg_fail(WGML_ERR_SHAPE, "%s: x is a scalar; rows are its last axis", name);
    return WGML_OK;
}

wgml_status wg_argsort_impl(const wgml_tensor *x, int descending, wgml_tensor *out)
{
    const char *name = "wgml_argsort";
    wgml_status st = sort_checks(name, x);
    if (st == WGML_OK)
        st = wg_check_out(name, out, WGML_I32, x->ndim, x->shape);
    if (st != WGML_OK)
        return st;
    if (!wg_same_ctx(x, out))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", name);
    if ((st = wg_check_writes(name, "out", out, false, "x", x, WG_END)) != WGML_OK)
        return st;
    return sort_rows(name, x, descending != 0, x->shape[x->ndim - 1], out, NULL);
}

wgml_status wg_top_k_impl(const wgml_tensor *x, int64_t k, wgml_tensor *values, wgml_tensor *indices)
{
    const char *name = "wgml_top_k";
    wgml_status st = sort_checks(name, x);
    if (st != WGML_OK)
        return st;
    int64_t len = x->shape[x->ndim - 1];
    if (k < 0 || k > len)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: k = %lld outside 0..%lld", name, (long long)k, (long long)len);
    int64_t shape[4];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->ndim - 1] = k;
    if (values && (st = wg_check_out(name, values, x->dtype, x->ndim, shape)) != WGML_OK)
        return st;
    if (indices && (st = wg_check_out(name, indices, WGML_I32, x->ndim, shape)) != WGML_OK)
        return st;
    if (!wg_same_ctx(x, values) || !wg_same_ctx(x, indices))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", name);
    if ((st = wg_check_writes(name, "values", values, false, "x", x, "indices", indices, WG_END)) != WGML_OK ||
        (st = wg_check_writes(name, "indices", indices, false, "x", x, WG_END)) != WGML_OK)
        return st;
    if (!values && !indices)
        return WGML_OK;
    wgml_tensor *tmp = NULL;
    if (!indices && (st = wg_scratch_tensor(x->ctx, WGML_I32, x->ndim, shape, &tmp)) != WGML_OK)
        return st;
    st = sort_rows(name, x, true, k, indices ? indices : tmp, values);
    wgml_tensor_free(tmp);
    return st;
}

/* ------------------------------------------------------------ reference */

typedef struct kv { double v; int64_t i; } kv;
static int g_desc;

/* NaN above everything; ties by index (stable). */
static int cmp_kv(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    bool xn = isnan(x->v), yn = isnan(y->v);
    int c = 0;
    if (xn || yn)
        c = xn && yn ? 0 : xn ? 1 : -1;
    else
        c = x->v < y->v ? -1 : x->v > y->v ? 1 : 0;
    if (g_desc)
        c = -c;
    return c ? c : (x->i < y->i ? -1 : 1);
}

void wg_argsort_ref(const double *x, int64_t rows, int64_t n, int descending, int32_t *idx)
{
    kv *t = malloc(sizeof(kv) * (size_t)(n + 1));
    g_desc = descending;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < n; i++)
            t[i] = (kv){x[r * n + i], i};
        qsort(t, (size_t)n, sizeof *t, cmp_kv);
        for (int64_t i = 0; i < n; i++)
            idx[r * n + i] = (int32_t)t[i].i;
    }
    free(t);
}
