/*
 * Movement family: permute, repeat (tile / expand), concat, pad, flip,
 * roll, tri, diag.
 *
 * Ops that are a copy of some strided view of their input (permute, concat
 * into slices of out, diag matrix -> vector) go through wgml_copy.  The
 * others run movement.wgsl: one thread per output element maps its
 * coordinate dim by dim to a coordinate of x (or to the pad value / zero).
 * Such index maps need x's own shape and strides, which wg_ew_launch does
 * not give (it views every operand over the output space), so this file
 * has its own small launcher: it splits the output into blocks while the
 * output window or the window of x that a block reads exceeds one storage
 * binding, the read window being the bounding box of the map's image.
 * That box is not an affine function of the block (flips run backwards,
 * rolls and circular pads wrap), which is why this is not the shared
 * window binder (window.c); since one output element reads at most one
 * element of x, the halving always ends in blocks that fit, so no operand
 * that fits a buffer is refused.
 * CPU references (`*_ref`, on contiguous host arrays) are at the end.
 */
#include "movement.h"

#include <stdio.h>
#include <string.h>

/* Dims (and padded dims) stay below this so the kernel's i32 coordinate
 * arithmetic (t = c - before, j - i against k, -1 for "padding") cannot
 * overflow.  It bounds index arithmetic, not bindings: only a single dim
 * of 2^31 - 1 or more elements (2 GiB even in u8) is refused. */
#define MV_MAX_DIM (((int64_t)1 << 31) - 2)

enum { MV_PAD, MV_FLIP, MV_ROLL, MV_REPEAT, MV_TRI, MV_DIAG };

typedef struct mv_plan {
    const char *name;      /* the op, for messages */
    int mode;
    wgml_pad_mode pad;
    int upper;
    int64_t k;
    int64_t arg[4];        /* per 4-D dim: pad before (circular: (n - before) mod n), flip
                            * flag, roll (n - shift) mod n */
    int64_t xshape[4];     /* x's 4-D shape as the map sees it */
    int64_t xst[4];
    uint64_t xoff;         /* elements from x's buffer start */
    uint32_t value;        /* PAD_CONSTANT value bits in the compute type */
    const wgml_tensor *x;
    wgml_tensor *out;
    wg_view4 ov;
    wgml_kernel *kern;
} mv_plan;

typedef struct mv_params {
    uint32_t oshape[4], obase[4], ost[4], xshape[4], xst[4], xlo[4], arg[4];
    uint32_t n, ooff, xoff, value;
    int32_t k;
    uint32_t pad[3];
} mv_params;

/* ------------------------------------------------------------ host map */

/* The kernel's xmap: x coordinate along dim d for output coordinate c,
 * -1 for none (constant padding). */
static int64_t mv_map(const mv_plan *m, int d, int64_t c)
{
    int64_t n = m->xshape[d];
    switch (m->mode) {
    case MV_PAD: {
        int64_t t = c - m->arg[d];
        switch (m->pad) {
        case WGML_PAD_CONSTANT: return t >= 0 && t < n ? t : -1;
        case WGML_PAD_REFLECT: {
            int64_t r = t < 0 ? -t : t;
            return r >= n ? 2 * (n - 1) - r : r;
        }
        case WGML_PAD_EDGE: return t < 0 ? 0 : t >= n ? n - 1 : t;
        default: return (c + m->arg[d]) % n; /* circular: arg is a forward shift */
        }
    }
    case MV_FLIP: return m->arg[d] ? n - 1 - c : c;
    case MV_ROLL: return (c + m->arg[d]) % n;
    case MV_REPEAT: return c % n;
    default: return c;
    }
}

/* Bounding range [*lo, *hi) of the x coordinates that output coordinates
 * [a, b) read along dim d (*lo == *hi: none).  Each map is monotonic
 * between the candidate points below, so its extremes lie on them. */
static void mv_range(const mv_plan *m, int d, int64_t a, int64_t b, int64_t *lo, int64_t *hi)
{
    int64_t n = m->xshape[d];
    bool periodic = m->mode == MV_ROLL || m->mode == MV_REPEAT || (m->mode == MV_PAD && m->pad == WGML_PAD_CIRCULAR);
    if (periodic && b - a >= n) {
        *lo = 0;
        *hi = n;
        return;
    }
    int64_t cand[6];
    int nc = 0;
    cand[nc++] = a;
    cand[nc++] = b - 1;
    if (periodic) { /* (c + const) mod n wraps at most once in [a, b) */
        int64_t w = a + (n - mv_map(m, d, a)) % n;
        cand[nc++] = w;
        cand[nc++] = w - 1;
    } else if (m->mode == MV_PAD) { /* pieces: before, inside, after */
        int64_t s = m->arg[d];
        cand[nc++] = s - 1;
        cand[nc++] = s;
        cand[nc++] = s + n - 1;
        cand[nc++] = s + n;
    }
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (int i = 0; i < nc; i++) {
        if (cand[i] < a || cand[i] >= b)
            continue;
        int64_t v = mv_map(m, d, cand[i]);
        if (v < 0)
            continue;
        if (v < *lo)
            *lo = v;
        if (v + 1 > *hi)
            *hi = v + 1;
    }
    if (*lo >= *hi)
        *lo = *hi = 0;
}

/* ------------------------------------------------------------ launcher */

static wgml_status mv_block(mv_plan *m, const int64_t base[4], const int64_t shape[4])
{
    wgml_ctx *ctx = m->x->ctx;
    uint64_t n = (uint64_t)wg_nelem4(shape);
    if (n == 0)
        return WGML_OK;
    uint64_t esz = wg_dtype(m->x->dtype)->block_bytes;
    uint64_t cap = wg_window_cap(ctx);
    uint64_t ofirst = m->ov.offset, olast;
    for (int d = 0; d < 4; d++)
        ofirst += (uint64_t)(base[d] * m->ov.strides[d]);
    olast = ofirst;
    for (int d = 0; d < 4; d++)
        olast += (uint64_t)((shape[d] - 1) * m->ov.strides[d]);
    int64_t xlo[4], xhi[4];
    bool xnone = false;
    for (int d = 0; d < 4; d++) {
        mv_range(m, d, base[d], base[d] + shape[d], &xlo[d], &xhi[d]);
        xnone = xnone || xlo[d] >= xhi[d];
    }
    uint64_t xfirst = m->xoff, xlast = m->xoff;
    if (xnone) { /* the block is all padding: bind x's first element, never read */
        memset(xlo, 0, sizeof xlo);
    } else {
        for (int d = 0; d < 4; d++) {
            xfirst += (uint64_t)(xlo[d] * m->xst[d]);
            xlast += (uint64_t)((xhi[d] - 1) * m->xst[d]);
        }
    }
    bool fits = n <= 0xffffffffull - 256 && (olast - ofirst + 1) * esz <= cap && (xlast - xfirst + 1) * esz <= cap;
    if (!fits) {
        /* Halve the outermost dim longer than one; a single element always
         * fits, so this ends. */
        int d = 0;
        while (d < 4 && shape[d] == 1)
            d++;
        if (d == 4) /* one output element reads at most one element of x: both fit any window */
            return wg_fail(WGML_ERR_INTERNAL, "%s: one element does not fit a storage binding", m->name);
        int64_t half = shape[d] / 2;
        for (int part = 0; part < 2; part++) {
            int64_t b2[4], s2[4];
            memcpy(b2, base, sizeof b2);
            memcpy(s2, shape, sizeof s2);
            b2[d] = part ? base[d] + half : base[d];
            s2[d] = part ? shape[d] - half : half;
            wgml_status st = mv_block(m, b2, s2);
            if (st != WGML_OK)
                return st;
        }
        return WGML_OK;
    }
    mv_params p;
    memset(&p, 0, sizeof p);
    wg_binding b[2];
    uint64_t rem;
    b[0] = wg_bind_from(m->x->st->buf, xfirst * esz, (xlast - xfirst + 1) * esz, &rem);
    p.xoff = (uint32_t)(rem / esz);
    b[1] = wg_bind_from(m->out->st->buf, ofirst * esz, (olast - ofirst + 1) * esz, &rem);
    p.ooff = (uint32_t)(rem / esz);
    for (int d = 0; d < 4; d++) {
        p.oshape[d] = (uint32_t)shape[d];
        p.obase[d] = (uint32_t)base[d];
        p.ost[d] = (uint32_t)m->ov.strides[d];
        p.xshape[d] = (uint32_t)m->xshape[d];
        p.xst[d] = (uint32_t)m->xst[d];
        p.xlo[d] = (uint32_t)xlo[d];
        p.arg[d] = (uint32_t)m->arg[d];
    }
    p.n = (uint32_t)n;
    p.value = m->value;
    p.k = (int32_t)m->k;
    return wg_dispatch(ctx, m->kern, b, 2, &p, sizeof p, (uint32_t)((n + 255) / 256), 1, 1);
}

static const char *mode_defines(const mv_plan *m)
{
    static const char *pads[] = {"PAD;PAD_CONSTANT", "PAD;PAD_REFLECT", "PAD;PAD_EDGE", "PAD;PAD_CIRCULAR"};
    switch (m->mode) {
    case MV_PAD: return pads[m->pad];
    case MV_FLIP: return "FLIP";
    case MV_ROLL: return "ROLL";
    case MV_REPEAT: return "REPEAT";
    case MV_TRI: return m->upper ? "TRI_UPPER" : "TRI_LOWER";
    default: return "DIAG";
    }
}

/* Runs the plan over all of out (x's fields of the plan already set). */
static wgml_status mv_run(const char *name, mv_plan *m)
{
    /* Only tri is elementwise (reads the element it writes): the others
     * may not write over x, not even as the same view. */
    wgml_status st = wg_check_writes(name, "out", m->out, m->mode == MV_TRI, "x", m->x, WG_END);
    if (st != WGML_OK)
        return st;
    int64_t iter[4];
    wg_shape4(m->out, iter);
    for (int d = 0; d < 4; d++)
        if (iter[d] > MV_MAX_DIM || m->xshape[d] > MV_MAX_DIM)
            return wg_fail(WGML_ERR_LIMIT, "%s: dims must stay below 2^31 - 1", name);
    if (wg_nelem4(iter) == 0)
        return wg_check(m->x->ctx);
    m->ov = wg_view4_of(m->out);
    /* x and out in one buffer: WebGPU forbids binding it read-only and
     * writable in one dispatch, so x is bound read_write too. */
    bool shared = m->x->st->buf == m->out->st->buf;
    const char *dt = wg_dtype(m->x->dtype)->wgsl;
    char defs[160];
    snprintf(defs, sizeof defs, "X_DT=%s;X_MODE=%s;O_DT=%s;O_MODE=w;%s", dt, shared ? "rw" : "r", dt,
             mode_defines(m));
    wg_kernel_ref ref = {"movement.wgsl", "main", defs, 2, shared ? 0u : 1u};
    if ((st = wg_kernel_get(m->x->ctx, &ref, &m->kern)) != WGML_OK)
        return st;
    int64_t base[4] = {0, 0, 0, 0};
    m->name = name;
    return mv_block(m, base, iter);
}

/* A plan whose map sees x as its own 4-D view. */
static mv_plan mv_plan_of(int mode, const wgml_tensor *x, wgml_tensor *out)
{
    mv_plan m;
    memset(&m, 0, sizeof m);
    m.mode = mode;
    m.x = x;
    m.out = out;
    wg_view4 v = wg_view4_of(x);
    memcpy(m.xshape, v.shape, sizeof m.xshape);
    memcpy(m.xst, v.strides, sizeof m.xst);
    m.xoff = v.offset;
    return m;
}

/* ------------------------------------------------------------ validation */

/* x and out given, one context, one plain dtype. */
static wgml_status mv_check(const char *name, const wgml_tensor *x, const wgml_tensor *out)
{
    wgml_status st = wg_check_tensor(name, "x", x);
    if (st == WGML_OK)
        st = wg_check_tensor(name, "out", out);
    if (st != WGML_OK)
        return st;
    if (!wg_same_ctx(x, out))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", name);
    if (!wg_dtype_is_plain(x->dtype))
        return wg_fail(WGML_ERR_DTYPE, "%s: dtype %s is not supported (dequantise first)", name,
                       wgml_dtype_name(x->dtype));
    if (out->dtype != x->dtype)
        return wg_fail(WGML_ERR_DTYPE, "%s: out is %s but x is %s (cast first)", name, wgml_dtype_name(out->dtype),
                       wgml_dtype_name(x->dtype));
    return WGML_OK;
}

/* ------------------------------------------------------------ ops */

wgml_status wg_permute_impl(const wgml_tensor *x, const int *perm, wgml_tensor *out)
{
    const char *name = "wgml_permute";
    wgml_status st = mv_check(name, x, out);
    if (st != WGML_OK)
        return st;
    if (!perm && x->ndim)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: perm is NULL", name);
    wgml_tensor v = *x;
    unsigned seen = 0;
    for (int i = 0; i < x->ndim; i++) {
        int p = perm[i] < 0 ? perm[i] + x->ndim : perm[i];
        if (p < 0 || p >= x->ndim || (seen >> p) & 1)
            return wg_fail(WGML_ERR_INDEX, "%s: perm is not a permutation of 0..%d", name, x->ndim - 1);
        seen |= 1u << p;
        v.shape[i] = x->shape[p];
        v.strides[i] = x->strides[p];
    }
    if ((st = wg_check_out(name, out, x->dtype, v.ndim, v.shape)) != WGML_OK ||
        (st = wg_check_writes(name, "out", out, false, "x", x, WG_END)) != WGML_OK)
        return st;
    return wg_copy_impl(&v, out);
}

wgml_status wg_repeat_impl(const wgml_tensor *x, wgml_tensor *out)
{
    const char *name = "wgml_repeat";
    wgml_status st = mv_check(name, x, out);
    if (st != WGML_OK)
        return st;
    if (x->ndim > out->ndim)
        return wg_fail(WGML_ERR_SHAPE, "%s: x has %d dims, out only %d", name, x->ndim, out->ndim);
    for (int d = 0; d < out->ndim; d++) {
        int j = d - (out->ndim - x->ndim);
        int64_t xd = j >= 0 ? x->shape[j] : 1, od = out->shape[d];
        if (xd == 0 ? od != 0 : od % xd != 0) {
            char a[96], b[96];
            return wg_fail(WGML_ERR_SHAPE, "%s: out %s is not a tiling of x %s (dim %d: %lld is not a multiple of %lld)",
                           name, wg_shape_str(out, a, sizeof a), wg_shape_str(x, b, sizeof b), d, (long long)od,
                           (long long)xd);
        }
    }
    mv_plan m = mv_plan_of(MV_REPEAT, x, out);
    return mv_run(name, &m);
}

wgml_status wg_concat_impl(const wgml_tensor *const *xs, int n, int axis, wgml_tensor *out)
{
    const char *name = "wgml_concat";
    if (!xs || n < 1)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: needs at least one input (got %d)", name, n);
    wgml_status st;
    for (int i = 0; i < n; i++) {
        char what[24];
        snprintf(what, sizeof what, "xs[%d]", i);
        if ((st = wg_check_tensor(name, what, xs[i])) != WGML_OK)
            return st;
        if ((st = mv_check(name, xs[i], out)) != WGML_OK)
            return st;
    }
    const wgml_tensor *x0 = xs[0];
    int a = wg_axis(x0, axis);
    if (a < 0)
        return wg_fail(WGML_ERR_INDEX, "%s: axis %d out of range for %d dims", name, axis, x0->ndim);
    int64_t shape[WGML_MAX_DIMS];
    memcpy(shape, x0->shape, sizeof shape);
    shape[a] = 0;
    for (int i = 0; i < n; i++) {
        bool ok = xs[i]->ndim == x0->ndim;
        for (int d = 0; ok && d < x0->ndim; d++)
            ok = d == a || xs[i]->shape[d] == x0->shape[d];
        if (!ok) {
            char s0[96], si[96];
            return wg_fail(WGML_ERR_SHAPE, "%s: xs[%d] %s does not match xs[0] %s outside axis %d", name, i,
                           wg_shape_str(xs[i], si, sizeof si), wg_shape_str(x0, s0, sizeof s0), a);
        }
        shape[a] += xs[i]->shape[a];
    }
    if ((st = wg_check_out(name, out, x0->dtype, x0->ndim, shape)) != WGML_OK)
        return st;
    for (int i = 0; i < n; i++) {
        char what[24];
        snprintf(what, sizeof what, "xs[%d]", i);
        if ((st = wg_check_writes(name, "out", out, false, what, xs[i], WG_END)) != WGML_OK)
            return st;
    }
    uint64_t esz = wg_dtype(out->dtype)->block_bytes;
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        wgml_tensor slot = *out;
        slot.shape[a] = xs[i]->shape[a];
        slot.offset += (uint64_t)(at * out->strides[a]) * esz;
        at += xs[i]->shape[a];
        if (wgml_tensor_nelem(&slot) == 0)
            continue;
        if ((st = wg_copy_impl(xs[i], &slot)) != WGML_OK)
            return st;
    }
    return wg_check(out->ctx);
}

wgml_status wg_pad_impl(const wgml_tensor *x, const int64_t *before, const int64_t *after, wgml_pad_mode mode,
                     double value, wgml_tensor *out)
{
    const char *name = "wgml_pad";
    static const char *mode_names[] = {"constant", "reflect", "edge", "circular"};
    wgml_status st = mv_check(name, x, out);
    if (st != WGML_OK)
        return st;
    if ((unsigned)mode > WGML_PAD_CIRCULAR)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: unknown mode %d", name, (int)mode);
    if (x->ndim && (!before || !after))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: before/after is NULL", name);
    int64_t shape[WGML_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        int64_t n = x->shape[d], b = before[d], e = after[d];
        if (b < 0 || e < 0 || b > MV_MAX_DIM || e > MV_MAX_DIM)
            return wg_fail(WGML_ERR_INVALID_ARG, "%s: dim %d: pad amounts %lld, %lld must be in 0..2^31-2", name, d,
                           (long long)b, (long long)e);
        if (mode != WGML_PAD_CONSTANT && n == 0 && (b || e))
            return wg_fail(WGML_ERR_SHAPE, "%s: dim %d is empty: %s padding has nothing to repeat", name, d,
                           mode_names[mode]);
        if (mode == WGML_PAD_REFLECT && (b >= n || e >= n) && (b || e))
            return wg_fail(WGML_ERR_SHAPE, "%s: reflect padding (%lld, %lld) of dim %d must be below its size %lld",
                           name, (long long)b, (long long)e, d, (long long)n);
        shape[d] = n + b + e;
    }
    if ((st = wg_check_out(name, out, x->dtype, x->ndim, shape)) != WGML_OK)
        return st;
    if (wgml_tensor_nelem(out) == 0)
        return wg_check(x->ctx);
    if (wgml_tensor_nelem(x) == 0) /* constant: nothing but padding */
        return wg_fill_impl(out, value);
    mv_plan m = mv_plan_of(MV_PAD, x, out);
    m.pad = mode;
    for (int d = 0; d < x->ndim; d++) {
        int64_t n = x->shape[d];
        m.arg[4 - x->ndim + d] = mode != WGML_PAD_CIRCULAR ? before[d] : n ? (n - before[d] % n) % n : 0;
    }
    m.value = wg_value_bits(x->dtype, value);
    return mv_run(name, &m);
}

wgml_status wg_flip_impl(const wgml_tensor *x, unsigned axes_mask, wgml_tensor *out)
{
    const char *name = "wgml_flip";
    wgml_status st = mv_check(name, x, out);
    if (st != WGML_OK)
        return st;
    if (axes_mask >> x->ndim)
        return wg_fail(WGML_ERR_INDEX, "%s: axes mask 0x%x names axes beyond the %d dims", name, axes_mask, x->ndim);
    if ((st = wg_check_out(name, out, x->dtype, x->ndim, x->shape)) != WGML_OK)
        return st;
    mv_plan m = mv_plan_of(MV_FLIP, x, out);
    for (int d = 0; d < x->ndim; d++)
        m.arg[4 - x->ndim + d] = (axes_mask >> d) & 1;
    return mv_run(name, &m);
}

wgml_status wg_roll_impl(const wgml_tensor *x, const int64_t *shifts, wgml_tensor *out)
{
    const char *name = "wgml_roll";
    wgml_status st = mv_check(name, x, out);
    if (st != WGML_OK)
        return st;
    if (x->ndim && !shifts)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: shifts is NULL", name);
    if ((st = wg_check_out(name, out, x->dtype, x->ndim, x->shape)) != WGML_OK)
        return st;
    mv_plan m = mv_plan_of(MV_ROLL, x, out);
    for (int d = 0; d < x->ndim; d++) {
        int64_t n = x->shape[d];
        /* out[c] = x[(c - shift) mod n] = x[(c + arg) mod n] */
        m.arg[4 - x->ndim + d] = n ? (n - ((shifts[d] % n) + n) % n) % n : 0;
    }
    return mv_run(name, &m);
}

wgml_status wg_tri_impl(const wgml_tensor *x, int upper, int64_t k, wgml_tensor *out)
{
    const char *name = upper ? "wgml_tri(upper)" : "wgml_tri(lower)";
    wgml_status st = mv_check(name, x, out);
    if (st != WGML_OK)
        return st;
    if (x->ndim < 2)
        return wg_fail(WGML_ERR_SHAPE, "%s: needs at least 2 dims, x has %d", name, x->ndim);
    if ((st = wg_check_out(name, out, x->dtype, x->ndim, x->shape)) != WGML_OK)
        return st;
    mv_plan m = mv_plan_of(MV_TRI, x, out);
    m.upper = upper != 0;
    /* Past -(rows + 1) or cols + 1 every k gives the same mask: clamp into i32. */
    int64_t rows = x->shape[x->ndim - 2], cols = x->shape[x->ndim - 1];
    m.k = k < -(rows + 1) ? -(rows + 1) : k > cols + 1 ? cols + 1 : k;
    return mv_run(name, &m);
}

wgml_status wg_diag_impl(const wgml_tensor *x, wgml_tensor *out)
{
    const char *name = "wgml_diag";
    wgml_status st = mv_check(name, x, out);
    if (st != WGML_OK)
        return st;
    int nd = x->ndim;
    int64_t shape[WGML_MAX_DIMS];
    if (out->ndim == nd + 1 && nd >= 1) { /* vector -> diagonal matrix */
        int64_t n = x->shape[nd - 1];
        memcpy(shape, x->shape, sizeof(int64_t) * (size_t)nd);
        shape[nd] = n;
        if ((st = wg_check_out(name, out, x->dtype, nd + 1, shape)) != WGML_OK)
            return st;
        /* x seen over out's space: row i of matrix b reads x[b, i]
         * (stride 0 along the columns); the kernel keeps i == j. */
        mv_plan m = mv_plan_of(MV_DIAG, x, out);
        wg_view4 xv = wg_view4_of(x);
        wg_shape4(out, m.xshape);
        for (int d = 0; d < 3; d++)
            m.xst[d] = xv.strides[d + 1];
        m.xst[3] = 0;
        return mv_run(name, &m);
    }
    if (out->ndim == nd - 1 && nd >= 2) { /* matrix -> its diagonal: a strided view */
        if (x->shape[nd - 1] != x->shape[nd - 2]) {
            char s[96];
            return wg_fail(WGML_ERR_SHAPE, "%s: x %s: the last two dims must be square", name,
                           wg_shape_str(x, s, sizeof s));
        }
        wgml_tensor v = *x;
        v.ndim = nd - 1;
        v.strides[nd - 2] = x->strides[nd - 2] + x->strides[nd - 1];
        if ((st = wg_check_out(name, out, x->dtype, v.ndim, v.shape)) != WGML_OK)
            return st;
        return wg_copy_impl(&v, out);
    }
    return wg_fail(WGML_ERR_SHAPE, "%s: out has %d dims; x has %d, so out needs %d (vector -> matrix) or %d "
                   "(matrix -> diagonal)", name, out->ndim, nd, nd + 1, nd - 1);
}

/* ------------------------------------------------------------ CPU references */

static int64_t prod(int nd, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= s[d];
    return n;
}

static void unravel(int64_t i, int nd, const int64_t *shape, int64_t *c)
{
    for (int d = nd - 1; d >= 0; d--) {
        c[d] = i % shape[d];
        i /= shape[d];
    }
}

static int64_t ravel(const int64_t *c, int nd, const int64_t *shape)
{
    int64_t r = 0;
    for (int d = 0; d < nd; d++)
        r = r * shape[d] + c[d];
    return r;
}

void wg_permute_ref(const double *x, int ndim, const int64_t *shape, const int *perm, double *out)
{
    int64_t os[WGML_MAX_DIMS], c[WGML_MAX_DIMS], xc[WGML_MAX_DIMS];
    for (int d = 0; d < ndim; d++)
        os[d] = shape[perm[d] < 0 ? perm[d] + ndim : perm[d]];
    int64_t n = prod(ndim, os);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, ndim, os, c);
        for (int d = 0; d < ndim; d++)
            xc[perm[d] < 0 ? perm[d] + ndim : perm[d]] = c[d];
        out[i] = x[ravel(xc, ndim, shape)];
    }
}

void wg_repeat_ref(const double *x, int xndim, const int64_t *xshape, int ondim, const int64_t *oshape, double *out)
{
    int64_t c[WGML_MAX_DIMS], xc[WGML_MAX_DIMS];
    int64_t n = prod(ondim, oshape);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, ondim, oshape, c);
        for (int d = 0; d < xndim; d++)
            xc[d] = c[d + ondim - xndim] % xshape[d];
        out[i] = x[ravel(xc, xndim, xshape)];
    }
}

void wg_concat_ref(const double *const *xs, const int64_t *const *shapes, int n, int ndim, int axis, double *out)
{
    /* out = for each outer index: the inputs' blocks one after the other */
    int64_t outer = prod(axis, shapes[0]), inner = prod(ndim - axis - 1, shapes[0] + axis + 1);
    size_t u = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int i = 0; i < n; i++) {
            int64_t blk = shapes[i][axis] * inner;
            for (int64_t e = 0; e < blk; e++)
                out[u++] = xs[i][o * blk + e];
        }
}

void wg_pad_ref(const double *x, int ndim, const int64_t *shape, const int64_t *before, const int64_t *after,
                wgml_pad_mode mode, double value, double *out)
{
    int64_t os[WGML_MAX_DIMS], c[WGML_MAX_DIMS];
    for (int d = 0; d < ndim; d++)
        os[d] = shape[d] + before[d] + after[d];
    int64_t n = prod(ndim, os);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, ndim, os, c);
        bool pad = false;
        for (int d = 0; d < ndim; d++) {
            int64_t t = c[d] - before[d], m = shape[d];
            if (t >= 0 && t < m) {
                c[d] = t;
                continue;
            }
            switch (mode) {
            case WGML_PAD_CONSTANT: pad = true; break;
            case WGML_PAD_REFLECT: { /* period 2(m - 1) mirror without repeating the edge */
                int64_t per = 2 * (m - 1);
                int64_t r = per ? ((t % per) + per) % per : 0;
                c[d] = r < m ? r : per - r;
                break;
            }
            case WGML_PAD_EDGE: c[d] = t < 0 ? 0 : m - 1; break;
            default: c[d] = ((t % m) + m) % m; break;
            }
        }
        out[i] = pad ? value : x[ravel(c, ndim, shape)];
    }
}

void wg_flip_ref(const double *x, int ndim, const int64_t *shape, unsigned axes_mask, double *out)
{
    int64_t c[WGML_MAX_DIMS];
    int64_t n = prod(ndim, shape);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, ndim, shape, c);
        for (int d = 0; d < ndim; d++)
            if ((axes_mask >> d) & 1)
                c[d] = shape[d] - 1 - c[d];
        out[i] = x[ravel(c, ndim, shape)];
    }
}

void wg_roll_ref(const double *x, int ndim, const int64_t *shape, const int64_t *shifts, double *out)
{
    /* scatter form: x[i] lands at (i + shift) mod n */
    int64_t c[WGML_MAX_DIMS];
    int64_t n = prod(ndim, shape);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, ndim, shape, c);
        for (int d = 0; d < ndim; d++)
            c[d] = (((c[d] + shifts[d]) % shape[d]) + shape[d]) % shape[d];
        out[ravel(c, ndim, shape)] = x[i];
    }
}

void wg_tri_ref(const double *x, int ndim, const int64_t *shape, int upper, int64_t k, double *out)
{
    int64_t n = prod(ndim, shape), rows = shape[ndim - 2], cols = shape[ndim - 1];
    for (int64_t i = 0; i < n; i++) {
        int64_t r = (i / cols) % rows, c = i % cols;
        bool keep = upper ? c - r >= k : c - r <= k;
        out[i] = keep ? x[i] : 0;
    }
}

void wg_diag_ref(const double *x, int ndim, const int64_t *shape, int to_matrix, double *out)
{
    if (to_matrix) {
        int64_t m = shape[ndim - 1], batch = prod(ndim - 1, shape);
        for (int64_t b = 0; b < batch; b++)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < m; j++)
                    out[(b * m + i) * m + j] = i == j ? x[b * m + i] : 0;
    } else {
        int64_t m = shape[ndim - 1], batch = prod(ndim - 2, shape);
        for (int64_t b = 0; b < batch; b++)
            for (int64_t i = 0; i < m; i++)
                out[b * m + i] = x[(b * m + i) * m + i];
    }
}

/* ------------------------------------------------------------ registry */

static const wgml_op_info rows[] = {
    {"PERMUTE", "movement", WG_DT_PLAIN}, {"REPEAT", "movement", WG_DT_PLAIN},
    {"CONCAT", "movement", WG_DT_PLAIN},  {"PAD", "movement", WG_DT_PLAIN},
    {"FLIP", "movement", WG_DT_PLAIN},    {"ROLL", "movement", WG_DT_PLAIN},
    {"TRI", "movement", WG_DT_PLAIN},     {"DIAG", "movement", WG_DT_PLAIN},
};

wg_op_table wg_movement_ops(void) { return (wg_op_table){rows, sizeof rows / sizeof *rows}; }
