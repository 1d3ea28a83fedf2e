/*
 * Reductions over any set of axes (kernel reduce.wgsl).
 *
 * The reduced axes are moved to the end logically: after dropping size-1
 * dims, sorting each group by x stride (outermost first) and merging dims
 * that are contiguous with each other, the problem is rows x len over
 * strides, with no copy.  One workgroup covers one row (or several short
 * rows); when few rows have long reductions, pass 1 splits each row into
 * chunks that write partial states and pass 2 merges them, so a reduction
 * to a scalar still fills the GPU.
 *
 * An input whose window exceeds one storage binding is cut into boxes
 * along its largest-stride dims: boxes that cut kept dims are independent
 * reductions; once a reduced dim is cut, every box merges its states into
 * a running state per row and a last pass writes out.  A box's states
 * (running or partial) must fit one binding too, which bounds its rows
 * and chunks; the last pass walks the running states and out in windows
 * (wg_win_split), so no state array or out has to fit one binding.
 */
#include "reduce.h"
#include "elementwise.h"
#include "optable.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WG 256
/* Workgroups that fill a large GPU (an H100 holds ~8 x 132 at a time). */
#define TARGET_WG 1024
/* Split rows into chunks only when every thread keeps this many elements. */
#define MIN_PER_THREAD 64
#define MAX_ELEMS (1ull << 31)

static const char *names[WGML_REDUCE_COUNT] = {
    "SUM", "MEAN", "RMAX", "RMIN", "PROD", "ARGMAX", "ARGMIN", "LOGSUMEXP", "VAR", "STD", "L2NORM",
};

const char *wg_reduce_name(wgml_reduce_op op) { return (unsigned)op < WGML_REDUCE_COUNT ? names[op] : "?"; }

uint32_t wg_reduce_dtypes(wgml_reduce_op op)
{
    switch (op) {
    case WGML_SUM: case WGML_PROD: case WGML_RMAX: case WGML_RMIN: case WGML_ARGMAX: case WGML_ARGMIN:
        return WG_DT_FLOATS | WG_DT_INTS;
    default:
        return WG_DT_FLOATS;
    }
}

static const char *group_of(wgml_reduce_op op)
{
    switch (op) {
    case WGML_RMAX: case WGML_RMIN: return "G_MAX";
    case WGML_ARGMAX: case WGML_ARGMIN: return "G_ARG";
    case WGML_LOGSUMEXP: return "G_LSE";
    case WGML_VAR: case WGML_STD: return "G_VAR";
    default: return "G_SUM";
    }
}

/* The op's index within its group (reduce.wgsl's p.opx). */
static uint32_t op_index(wgml_reduce_op op)
{
    switch (op) {
    case WGML_MEAN: case WGML_RMIN: case WGML_ARGMIN: case WGML_STD: return 1;
    case WGML_L2NORM: return 2;
    case WGML_PROD: return 3;
    default: return 0;
    }
}

static int state_words(wgml_reduce_op op)
{
    switch (op) {
    case WGML_ARGMAX: case WGML_ARGMIN: case WGML_LOGSUMEXP: return 2;
    case WGML_VAR: case WGML_STD: return 4;
    default: return 1;
    }
}

/* Word pattern of the empty state (the running state starts as it; for
 * ARGMAX/ARGMIN only the index word matters, for VAR/LOGSUMEXP the count
 * or sum word). */
static uint32_t empty_pattern(wgml_reduce_op op, int kind)
{
    bool fl = kind == WG_KIND_FLOAT, si = kind == WG_KIND_INT;
    switch (op) {
    case WGML_PROD: return fl ? 0x3f800000u : 1u;
    case WGML_RMAX: return fl ? 0xff800000u : si ? 0x80000000u : 0u;
    case WGML_RMIN: return fl ? 0x7f800000u : si ? 0x7fffffffu : 0xffffffffu;
    case WGML_ARGMAX: case WGML_ARGMIN: return 0xffffffffu; /* index NONE */
    default: return 0;
    }
}

static const char *acc_kind(wgml_dtype t)
{
    switch (wg_dtype(t)->kind) {
    case WG_KIND_FLOAT: return "FLOAT";
    case WG_KIND_INT: return "SINT";
    default: return "UINT";
    }
}

/* ------------------------------------------------------------ plan */

/* Kept and reduced dims, 4 each, padded in front with size 1 / stride 0. */
typedef struct rplan {
    wgml_reduce_op op;
    const wgml_tensor *x;
    wgml_tensor *out;
    float p0;
    int64_t kn[4], kxs[4], kos[4];
    int64_t rn[4], rxs[4];
    int64_t rows, len;
    uint64_t xesz, oesz, cap;
} rplan;

/* A box of the problem: sub-ranges of the dims, a contiguous range of
 * rows [r0, ...) and of reduced indices [j0, ...) (only the outermost
 * non-trivial dim of a group is ever cut). */
typedef struct rbox {
    int64_t kn[4], rn[4];
    uint64_t xoff, ooff;  /* elements from the buffers' starts */
    int64_t r0, j0;
} rbox;

typedef struct rdim { int64_t n, xs, os; } rdim;

/* Sorts dims by x stride (outermost first), merges neighbours that are
 * contiguous in x (and out), pads to 4. */
static void pack_dims(rdim *d, int n, bool with_out, int64_t *sn, int64_t *sxs, int64_t *sos)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && d[j].xs > d[j - 1].xs; j--) {
            rdim t = d[j];
            d[j] = d[j - 1];
            d[j - 1] = t;
        }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0 && d[m - 1].xs == d[i].xs * d[i].n && (!with_out || d[m - 1].os == d[i].os * d[i].n)) {
            d[m - 1].n *= d[i].n;
            d[m - 1].xs = d[i].xs;
            d[m - 1].os = d[i].os;
        } else {
            d[m++] = d[i];
        }
    }
    for (int i = 0; i < 4; i++) {
        int k = i - (4 - m);
        sn[i] = k >= 0 ? d[k].n : 1;
        sxs[i] = k >= 0 ? d[k].xs : 0;
        if (sos)
            sos[i] = k >= 0 ? d[k].os : 0;
    }
}

static int64_t prod4(const int64_t n[4]) { return n[0] * n[1] * n[2] * n[3]; }

static uint64_t span(const int64_t n[4], const int64_t s[4])
{
    uint64_t e = 0;
    for (int i = 0; i < 4; i++)
        e += (uint64_t)(n[i] - 1) * (uint64_t)s[i];
    return e;
}

static uint32_t pow2ceil(uint64_t v)
{
    uint32_t p = 1;
    while (p < v && p < (1u << 31))
        p <<= 1;
    return p;
}

/* ------------------------------------------------------------ dispatch */

typedef struct rparams {
    uint32_t ksh[4], kst[4], ost[4], rsh[4], rst[4];
    uint32_t rows, len, cols, segs, chunk, nchunk, xoff, ooff, jbase, rbase;
    float count, p0;
    uint32_t opx, nrd, soff, pad1;
} rparams;

enum { IN_X, IN_STATES };
enum { OUT_FINAL, OUT_PARTIAL, OUT_ACCUM };

/* shared: the read binding (x or states) and the written one are one
 * buffer (x in place, or scratch beside out in a graph's arena), so both
 * bind read_write: a buffer may not be read-only and writable at once. */
static wgml_status kernel_for(const rplan *pl, int in, int out, bool shared, wgml_kernel **k)
{
    char defs[256];
    wgml_dtype xt = pl->x->dtype;
    snprintf(defs, sizeof defs, "X_DT=%s;X_MODE=%s;S_ACC=%s;O_DT=%s;%s;%s%s;%s", wg_dtype(xt)->wgsl,
             shared ? "rw" : "r", shared ? "read_write" : "read", wg_dtype(pl->out->dtype)->wgsl, group_of(pl->op),
             acc_kind(xt), in == IN_STATES ? ";IN_STATES" : "",
             out == OUT_FINAL ? "OUT_FINAL" : out == OUT_PARTIAL ? "OUT_PARTIAL" : "OUT_ACCUM");
    wg_kernel_ref ref = {"reduce.wgsl", "reduce", defs, 2, shared ? 0u : 1u};
    return wg_kernel_get(pl->x->ctx, &ref, k);
}

static void set_kept(rparams *p, const int64_t kn[4], const int64_t kxs[4], const int64_t kos[4])
{
    for (int i = 0; i < 4; i++) {
        p->ksh[i] = (uint32_t)kn[i];
        p->kst[i] = (uint32_t)kxs[i];
        p->ost[i] = kos ? (uint32_t)kos[i] : 0;
    }
}

/* The running states of rows [r0, r0 + rows) as one binding; *rbase:
 * the first one's index within it (the kernel's p.rbase). */
static wg_binding bind_acc(const rplan *pl, const wgml_tensor *acc, int64_t r0, int64_t rows, uint32_t *rbase)
{
    uint64_t ssz = (uint64_t)state_words(pl->op) * 4, rem;
    wg_binding b = wg_bind_from(acc->st->buf, wg_view4_of(acc).offset * 4 + (uint64_t)r0 * ssz, (uint64_t)rows * ssz,
                                &rem);
    *rbase = (uint32_t)(rem / ssz);
    return b;
}

/* States in -> out: pass 2 of a split box (sb: its [rows][nper] states,
 * from state soff), or a block of the last pass after boxes. */
static wgml_status merge_states(const rplan *pl, wg_binding sb, uint32_t soff, int64_t nper, const int64_t kn[4],
                                uint64_t ooff, int64_t r0, const wgml_tensor *acc)
{
    rparams p;
    memset(&p, 0, sizeof p);
    int64_t rows = prod4(kn);
    set_kept(&p, kn, pl->kxs, pl->kos);
    for (int i = 0; i < 4; i++)
        p.rsh[i] = 1;
    p.rows = (uint32_t)rows;
    p.len = (uint32_t)nper;
    p.segs = pow2ceil((uint64_t)nper);
    if (p.segs > WG)
        p.segs = WG;
    p.cols = WG / p.segs;
    p.chunk = (uint32_t)nper;
    p.nchunk = 1;
    p.soff = soff;
    p.count = (float)pl->len;
    p.p0 = pl->p0;
    p.opx = op_index(pl->op);
    wg_binding b[2];
    b[0] = sb;
    if (acc) {
        b[1] = bind_acc(pl, acc, r0, rows, &p.rbase);
    } else {
        uint64_t rem;
        b[1] = wg_bind_from(pl->out->st->buf, ooff * pl->oesz, (span(kn, pl->kos) + 1) * pl->oesz, &rem);
        p.ooff = (uint32_t)(rem / pl->oesz);
    }
    wgml_kernel *k;
    wgml_status st = kernel_for(pl, IN_STATES, acc ? OUT_ACCUM : OUT_FINAL, b[0].buffer == b[1].buffer, &k);
    if (st != WGML_OK)
        return st;
    uint64_t groups = ((uint64_t)rows + p.cols - 1) / p.cols;
    return wg_dispatch(pl->x->ctx, k, b, 2, &p, sizeof p, (uint32_t)groups, 1, 1);
}

typedef struct final_job {
    const rplan *pl;
} final_job;

/* One block of the last pass: the window binder moved the states (w[0])
 * and out (w[1]) to the block's first row. */
static wgml_status final_block(void *user, const wg_win *w, const int64_t iter[4], const int64_t origin[4])
{
    (void)origin;
    const final_job *j = user;
    uint32_t soff;
    wg_binding sb = wg_win_bind(&w[0], iter, &soff);
    return merge_states(j->pl, sb, soff, 1, iter, w[1].offset, 0, NULL);
}

/* The running states [rows] -> out.  Both are cut into blocks of kept
 * dims whose windows fit: the states as a virtual row-major operand of
 * one state per row, so each block is a contiguous run of them. */
static wgml_status final_pass(const rplan *pl, const wgml_tensor *acc, uint64_t ooff)
{
    int64_t rs = 1;
    uint64_t ssz = (uint64_t)state_words(pl->op) * 4; /* divides acc's 256-aligned start */
    wg_win w[2] = {{acc->st->buf, wg_view4_of(acc).offset * 4 / ssz, {0, 0, 0, 0}, ssz, 0, "running states"},
                   {pl->out->st->buf, ooff, {pl->kos[0], pl->kos[1], pl->kos[2], pl->kos[3]}, pl->oesz, 0, "out"}};
    for (int i = 3; i >= 0; i--) {
        w[0].st[i] = pl->kn[i] > 1 ? rs : 0;
        rs *= pl->kn[i];
    }
    final_job j = {pl};
    char who[48];
    snprintf(who, sizeof who, "wgml_reduce(%s)", names[pl->op]);
    return wg_win_split(pl->x->ctx, w, 2, pl->kn, 4, MAX_ELEMS, who, final_block, &j);
}

/* How run_box lays out a box: segs threads per row, cols rows per
 * workgroup, nrb workgroups of rows, and the row cut into nchunk chunks
 * of chunk elements (nchunk > 1: a pass of partial states, then a merge). */
typedef struct rsplit {
    uint32_t segs, cols;
    uint64_t nrb, nchunk, chunk;
} rsplit;

static rsplit box_split(const rplan *pl, const rbox *bx)
{
    int64_t rows = prod4(bx->kn), len = prod4(bx->rn);
    int64_t kin = 0, rin = -1; /* innermost non-trivial strides */
    for (int i = 0; i < 4; i++) {
        if (bx->kn[i] > 1)
            kin = pl->kxs[i];
        if (bx->rn[i] > 1)
            rin = pl->rxs[i];
    }
    /* Kept axis contiguous and reduced one not: neighbouring threads take
     * neighbouring rows so their loads coalesce. */
    bool col = kin == 1 && rin != 1 && rows > 1;
    uint32_t most_segs = WG;
    if (col) /* up to 32 rows side by side: 128-byte loads of f32 */
        most_segs = WG / (rows < 32 ? pow2ceil((uint64_t)rows) : 32u);
    /* >= 8 elements per thread when the row allows (short rows share a
     * workgroup instead of idling 256 threads through 8 tree levels), and
     * up to 32 while there are far more workgroups than fill a GPU: fewer
     * workgroups and tree levels for the same loads. */
    uint32_t segs = pow2ceil(len ? ((uint64_t)len + 7) / 8 : 1);
    if (segs > most_segs)
        segs = most_segs;
    while (segs > 1 && ((uint64_t)rows * segs + WG - 1) / WG > 4 * TARGET_WG && (uint64_t)len <= 16ull * segs)
        segs /= 2;
    rsplit r = {segs, WG / segs, 0, 1, (uint64_t)len};
    r.nrb = ((uint64_t)rows + r.cols - 1) / r.cols;
    /* A split needs len >= 2 * segs * 64, so segs is most_segs >= 8 there
     * (pow2ceil(len / 8) is larger): nchunk <= len / 512, and with
     * rows <= nrb * 32, rows * nchunk <= 32 * (1024 + nrb - 1) < 65504
     * (wg_sc_reduce's bound on the partial states). */
    if ((uint64_t)len >= 2ull * segs * MIN_PER_THREAD && r.nrb < TARGET_WG) {
        uint64_t nchunk = (TARGET_WG + r.nrb - 1) / r.nrb;
        uint64_t most = (uint64_t)len / ((uint64_t)segs * MIN_PER_THREAD);
        if (nchunk > most)
            nchunk = most;
        /* the partial states [rows][nchunk] are one binding */
        uint64_t fit = pl->cap / ((uint64_t)rows * (uint64_t)state_words(pl->op) * 4);
        if (nchunk > fit)
            nchunk = fit ? fit : 1;
        r.chunk = ((uint64_t)len + nchunk - 1) / nchunk;
        r.nchunk = ((uint64_t)len + r.chunk - 1) / r.chunk;
    }
    return r;
}

/* One box whose windows fit a binding: one pass, or two when split (the
 * partial states in part, shared by every box: boxes run in order). */
static wgml_status run_box(const rplan *pl, const rbox *bx, const wgml_tensor *acc, const wgml_tensor *part)
{
    wgml_ctx *ctx = pl->x->ctx;
    int64_t rows = prod4(bx->kn), len = prod4(bx->rn);
    rparams p;
    memset(&p, 0, sizeof p);
    set_kept(&p, bx->kn, pl->kxs, pl->kos);
    /* Reduced dims squeezed to the end: one left means a single stride. */
    int nrd = 0;
    for (int i = 0; i < 4; i++)
        p.rsh[i] = 1;
    for (int i = 3; i >= 0; i--)
        if (bx->rn[i] > 1) {
            p.rsh[3 - nrd] = (uint32_t)bx->rn[i];
            p.rst[3 - nrd] = (uint32_t)pl->rxs[i];
            nrd++;
        }
    rsplit sp = box_split(pl, bx);
    uint32_t segs = sp.segs, cols = sp.cols;
    uint64_t nrb = sp.nrb, nchunk = sp.nchunk, chunk = sp.chunk;
    p.rows = (uint32_t)rows;
    p.len = (uint32_t)len;
    p.cols = cols;
    p.segs = segs;
    p.chunk = (uint32_t)(chunk ? chunk : 1);
    p.nchunk = (uint32_t)nchunk;
    p.jbase = (uint32_t)bx->j0;
    p.count = (float)pl->len;
    p.p0 = pl->p0;
    p.opx = op_index(pl->op);
    p.nrd = (uint32_t)nrd;
    bool split = nchunk > 1;
    int out = split ? OUT_PARTIAL : acc ? OUT_ACCUM : OUT_FINAL;
    wgml_status st = WGML_OK;
    wg_binding b[2];
    uint64_t rem;
    if (len == 0)
        b[0] = wg_bind_from(pl->x->st->buf, 0, 4, &rem);
    else
        b[0] = wg_bind_from(pl->x->st->buf, bx->xoff * pl->xesz,
                            (span(bx->kn, pl->kxs) + span(bx->rn, pl->rxs) + 1) * pl->xesz, &rem);
    p.xoff = (uint32_t)(rem / pl->xesz);
    /* Partial states at part's start: 256-aligned in the pool and in a
     * graph's arena alike, so the binding starts there (soff 0). */
    uint64_t pbytes = (uint64_t)rows * nchunk * (uint64_t)state_words(pl->op) * 4, poff = 0;
    if (split) {
        poff = wg_view4_of(part).offset * 4;
        b[1] = wg_bind_from(part->st->buf, poff, pbytes, &rem);
    } else if (acc) {
        b[1] = bind_acc(pl, acc, bx->r0, rows, &p.rbase);
    } else {
        b[1] = wg_bind_from(pl->out->st->buf, bx->ooff * pl->oesz, (span(bx->kn, pl->kos) + 1) * pl->oesz, &rem);
        p.ooff = (uint32_t)(rem / pl->oesz);
    }
    wgml_kernel *k;
    if ((st = kernel_for(pl, IN_X, out, b[0].buffer == b[1].buffer, &k)) == WGML_OK)
        st = wg_dispatch(ctx, k, b, 2, &p, sizeof p, (uint32_t)(nrb * nchunk), 1, 1);
    if (st == WGML_OK && split)
        st = merge_states(pl, wg_bind_from(part->st->buf, poff, pbytes, &rem), 0, (int64_t)nchunk,
                          bx->kn, bx->ooff, bx->r0, acc);
    return st;
}

static bool box_fits(const rplan *pl, const rbox *b, bool final_out)
{
    uint64_t rows = (uint64_t)prod4(b->kn), len = (uint64_t)prod4(b->rn);
    if (rows * len > MAX_ELEMS || rows > MAX_ELEMS || len > MAX_ELEMS)
        return false;
    if ((span(b->kn, pl->kxs) + span(b->rn, pl->rxs) + 1) * pl->xesz > pl->cap)
        return false;
    /* the box's running (or partial) states are one binding too */
    if (rows * (uint64_t)state_words(pl->op) * 4 > pl->cap)
        return false;
    return !final_out || (span(b->kn, pl->kos) + 1) * pl->oesz <= pl->cap;
}

typedef struct boxlist {
    rbox *v;
    size_t n, cap;
    bool cut_reduced;
} boxlist;

/* Cuts b in halves along its largest-stride non-trivial dim until every
 * piece fits; kept dims win ties (their pieces stay independent). */
static wgml_status plan_boxes(const rplan *pl, rbox b, boxlist *L)
{
    if (box_fits(pl, &b, true)) {
        if (L->n == L->cap) {
            size_t cap = L->cap ? L->cap * 2 : 16;
            rbox *v = realloc(L->v, cap * sizeof *v);
            if (!v)
                return wg_fail(WGML_ERR_OOM, "out of host memory");
            L->v = v;
            L->cap = cap;
        }
        L->v[L->n++] = b;
        return WGML_OK;
    }
    int kd = -1, rd = -1;
    for (int i = 3; i >= 0; i--) {
        if (b.kn[i] > 1)
            kd = i;
        if (b.rn[i] > 1)
            rd = i;
    }
    bool cut_kept = kd >= 0 && (rd < 0 || pl->kxs[kd] >= pl->rxs[rd]);
    if (!cut_kept && rd < 0)
        return wg_fail_window(pl->x->ctx, (span(b.kn, pl->kxs) + span(b.rn, pl->rxs) + 1) * pl->xesz,
                              "wgml_reduce(%s): one element's window", names[pl->op]);
    int64_t *n = cut_kept ? b.kn : b.rn;
    int d = cut_kept ? kd : rd;
    int64_t half = n[d] / 2, inner = 1;
    for (int i = d + 1; i < 4; i++)
        inner *= n[i];
    rbox a = b;
    (cut_kept ? a.kn : a.rn)[d] = half;
    rbox c = b;
    (cut_kept ? c.kn : c.rn)[d] = n[d] - half;
    c.xoff += (uint64_t)(half * (cut_kept ? pl->kxs[d] : pl->rxs[d]));
    if (cut_kept) {
        c.ooff += (uint64_t)(half * pl->kos[d]);
        c.r0 += half * inner;
    } else {
        c.j0 += half * inner;
        L->cut_reduced = true;
    }
    wgml_status st = plan_boxes(pl, a, L);
    return st == WGML_OK ? plan_boxes(pl, c, L) : st;
}

/* ------------------------------------------------------------ API */

wgml_status wg_reduce_impl(wgml_reduce_op op, const wgml_tensor *x, unsigned axes_mask, float p0, wgml_tensor *out)
{
    char name[48];
    snprintf(name, sizeof name, "wgml_reduce(%s)", wg_reduce_name(op));
    wgml_status st = wg_check_tensor(name, "x", x);
    if (st != WGML_OK)
        return st;
    if ((unsigned)op >= WGML_REDUCE_COUNT)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_reduce: unknown op %d", (int)op);
    if (!(wg_reduce_dtypes(op) & WG_DT_BIT(x->dtype)))
        return wg_fail(WGML_ERR_DTYPE, "%s: dtype %s is not supported", name, wgml_dtype_name(x->dtype));
    if (axes_mask >> x->ndim)
        return wg_fail(WGML_ERR_INDEX, "%s: axes mask 0x%x names an axis past the %d dims of x", name, axes_mask,
                       x->ndim);
    bool arg = op == WGML_ARGMAX || op == WGML_ARGMIN;
    if (arg && (axes_mask == 0 || (axes_mask & (axes_mask - 1))))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: needs exactly one axis (mask 0x%x)", name, axes_mask);
    int64_t oshape[4];
    for (int i = 0; i < x->ndim; i++)
        oshape[i] = (axes_mask >> i) & 1 ? 1 : x->shape[i];
    if ((st = wg_check_out(name, out, arg ? WGML_I32 : (int)x->dtype, x->ndim, oshape)) != WGML_OK)
        return st;
    if ((st = wg_check_writes(name, "out", out, false, "x", x, WG_END)) != WGML_OK)
        return st;
    if (!wg_same_ctx(x, out))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", name);
    rplan pl;
    memset(&pl, 0, sizeof pl);
    pl.op = op;
    pl.x = x;
    pl.out = out;
    pl.p0 = p0;
    rdim kd[4], rd[4];
    int nk = 0, nr = 0;
    pl.rows = pl.len = 1;
    for (int i = 0; i < x->ndim; i++) {
        if ((axes_mask >> i) & 1)
            pl.len *= x->shape[i];
        else
            pl.rows *= x->shape[i];
        if (x->shape[i] == 1)
            continue;
        if ((axes_mask >> i) & 1)
            rd[nr++] = (rdim){x->shape[i], x->strides[i], 0};
        else
            kd[nk++] = (rdim){x->shape[i], x->strides[i], out->strides[i]};
    }
    if (pl.rows == 0)
        return wg_check(x->ctx);
    if (pl.len == 0 && (op == WGML_RMAX || op == WGML_RMIN || arg))
        return wg_fail(WGML_ERR_SHAPE, "%s: reduction over a zero-size axis has no identity", name);
    if (pl.len == 0)
        nr = 0;
    pack_dims(kd, nk, true, pl.kn, pl.kxs, pl.kos);
    pack_dims(rd, nr, false, pl.rn, pl.rxs, NULL);
    if (pl.len == 0)
        pl.rn[3] = 0;
    pl.xesz = wg_dtype(x->dtype)->block_bytes;
    pl.oesz = wg_dtype(out->dtype)->block_bytes;
    pl.cap = wg_window_cap(x->ctx);

    rbox whole;
    memset(&whole, 0, sizeof whole);
    memcpy(whole.kn, pl.kn, sizeof whole.kn);
    memcpy(whole.rn, pl.rn, sizeof whole.rn);
    whole.xoff = wg_view4_of(x).offset;
    whole.ooff = wg_view4_of(out).offset;
    boxlist L = {0};
    if ((st = plan_boxes(&pl, whole, &L)) != WGML_OK) {
        free(L.v);
        return st;
    }
    /* Scratch (wg_sc_reduce bounds it): the running states when a reduced
     * dim was cut, and one array of partial states that every split box
     * reuses, sized for the largest. */
    wgml_tensor *acc = NULL, *part = NULL;
    int sw = state_words(op);
    if (L.cut_reduced) {
        /* Running states, bound per box and cut into windows by the
         * last pass (final_pass), so neither they nor out need to fit. */
        const int64_t n = pl.rows * sw;
        st = wg_scratch_tensor(x->ctx, WGML_U32, 1, &n, &acc);
        uint32_t pat = empty_pattern(op, wg_dtype(x->dtype)->kind);
        if (st == WGML_OK && pat) /* zeroed already: other empty states need their pattern */
            st = wgml_buffer_fill(acc->st->buf, wg_view4_of(acc).offset * 4, (uint64_t)n * 4, pat);
    }
    int64_t most = 0;
    for (size_t i = 0; i < L.n; i++) {
        rsplit r = box_split(&pl, &L.v[i]);
        int64_t n = r.nchunk > 1 ? prod4(L.v[i].kn) * (int64_t)r.nchunk * sw : 0;
        most = n > most ? n : most;
    }
    if (st == WGML_OK && most) /* every state is written before it is read: zeroing is not needed, but harmless */
        st = wg_scratch_tensor(x->ctx, WGML_U32, 1, &most, &part);
    for (size_t i = 0; st == WGML_OK && i < L.n; i++)
        st = run_box(&pl, &L.v[i], acc, part);
    if (st == WGML_OK && acc)
        st = final_pass(&pl, acc, whole.ooff);
    wgml_tensor_free(acc);
    wgml_tensor_free(part);
    free(L.v);
    return st;
}

/* ------------------------------------------------------------ scratch */

/* R kept rows of L reduced elements, states of sw words.  The running
 * states (R * sw words) exist only once a reduced dim is cut for windows,
 * which depends on x's layout and the binding size that a description
 * does not carry: they count whenever L > 1.  The partial states of split
 * boxes (one array, shared): rows * nchunk <= R * min(1024, L / 512) and
 * < 32 * 2047 (box_split), and a split needs L >= 2 * 8 * 64. */
uint64_t wg_sc_reduce(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)nin, (void)out;
    const wg_desc *x = in[0];
    uint64_t R = 1, L = 1;
    for (int i = 0; i < x->ndim; i++)
        *((p->mask >> i) & 1 ? &L : &R) *= x->shape[i] < 0 ? 0 : (uint64_t)x->shape[i];
    if ((unsigned)p->sub >= WGML_REDUCE_COUNT || R == 0 || L <= 1)
        return 0;
    uint64_t ssz = (uint64_t)state_words((wgml_reduce_op)p->sub) * 4, acc = wg_align_up(R * ssz, 256), part = 0;
    if (L >= 2 * 8 * MIN_PER_THREAD) {
        uint64_t per = L / (8 * MIN_PER_THREAD) < TARGET_WG ? L / (8 * MIN_PER_THREAD) : TARGET_WG;
        uint64_t n = R < 32 * 2047 / per ? R * per : 32 * 2047;
        part = wg_align_up(n * ssz, 256);
    }
    return acc + part;
}

/* ------------------------------------------------------------ reference */

static int64_t strides_of(int ndim, const int64_t *shape, int64_t *s)
{
    int64_t n = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        s[i] = n;
        n *= shape[i];
    }
    return n;
}

static bool is_nan_d(double v) { return v != v; }

void wg_reduce_ref(wgml_reduce_op op, wgml_dtype dt, const double *x, int ndim, const int64_t *shape,
                   unsigned mask, double p0, double *out)
{
    int64_t xs[4], oshape[4], os[4], rshape[4], rs[4];
    strides_of(ndim, shape, xs);
    for (int i = 0; i < ndim; i++) {
        oshape[i] = (mask >> i) & 1 ? 1 : shape[i];
        rshape[i] = (mask >> i) & 1 ? shape[i] : 1;
    }
    int64_t no = strides_of(ndim, oshape, os), nr = strides_of(ndim, rshape, rs);
    int64_t r4[4], s4[4]; /* reduced dims padded to 4, for plain nested loops */
    for (int i = 0; i < 4; i++) {
        int d = ndim - 4 + i;
        r4[i] = d >= 0 ? rshape[d] : 1;
        s4[i] = d >= 0 ? xs[d] : 0;
    }
    bool fl = wg_dtype_is_float(dt), si = wg_dtype(dt)->kind == WG_KIND_INT;
    double *v = malloc(sizeof(double) * (size_t)(nr + 1));
    for (int64_t o = 0; o < no; o++) {
        int64_t base = 0, at = 0;
        for (int i = 0; i < ndim; i++)
            base += (o / os[i]) % oshape[i] * xs[i];
        for (int64_t a = 0; a < r4[0]; a++)
            for (int64_t b = 0; b < r4[1]; b++)
                for (int64_t c = 0; c < r4[2]; c++)
                    for (int64_t d = 0; d < r4[3]; d++)
                        v[at++] = x[base + a * s4[0] + b * s4[1] + c * s4[2] + d * s4[3]];
        double res = 0, s = 0, m;
        uint32_t u = op == WGML_PROD ? 1 : 0;
        int64_t best = -1;
        switch (op) {
        case WGML_SUM: case WGML_PROD:
            if (!fl) { /* 32-bit wrapping like the kernel; narrow types keep the low bits */
                for (int64_t r = 0; r < nr; r++)
                    u = op == WGML_SUM ? u + (uint32_t)(int64_t)v[r] : u * (uint32_t)(int64_t)v[r];
                res = wg_wrap_int(si ? (double)(int32_t)u : (double)u, dt);
                break;
            }
            res = op == WGML_PROD ? 1 : 0;
            for (int64_t r = 0; r < nr; r++)
                res = op == WGML_SUM ? res + v[r] : res * v[r];
            break;
        case WGML_MEAN:
            for (int64_t r = 0; r < nr; r++)
                s += v[r];
            res = nr ? s / (double)nr : NAN;
            break;
        case WGML_L2NORM:
            for (int64_t r = 0; r < nr; r++)
                s += v[r] * v[r];
            res = sqrt(s);
            break;
        case WGML_RMAX: case WGML_RMIN:
            res = v[0];
            for (int64_t r = 1; r < nr && !is_nan_d(res); r++)
                res = is_nan_d(v[r]) ? v[r] : op == WGML_RMAX ? fmax(res, v[r]) : fmin(res, v[r]);
            break;
        case WGML_ARGMAX: case WGML_ARGMIN:
            for (int64_t r = 0; r < nr; r++) {
                if (best >= 0 && is_nan_d(v[best]))
                    break;
                if (best < 0 || is_nan_d(v[r]) || (op == WGML_ARGMAX ? v[r] > v[best] : v[r] < v[best]))
                    best = r;
            }
            res = (double)best;
            break;
        case WGML_LOGSUMEXP:
            m = -INFINITY;
            for (int64_t r = 0; r < nr; r++)
                m = is_nan_d(v[r]) || is_nan_d(m) ? NAN : fmax(m, v[r]);
            if (isinf(m) || is_nan_d(m)) {
                res = m;
                break;
            }
            for (int64_t r = 0; r < nr; r++)
                s += exp(v[r] - m);
            res = m + log(s);
            break;
        case WGML_VAR: case WGML_STD: {
            for (int64_t r = 0; r < nr; r++)
                s += v[r];
            double mean = s / (double)nr, m2 = 0;
            for (int64_t r = 0; r < nr; r++)
                m2 += (v[r] - mean) * (v[r] - mean);
            double den = fmax((double)nr - p0, 0);
            if (nr == 0)
                m2 = 0;
            res = den == 0 ? (m2 == 0 || is_nan_d(m2) ? NAN : INFINITY) : m2 / den;
            if (op == WGML_STD)
                res = sqrt(res);
            break;
        }
        default:
            res = NAN;
        }
        out[o] = res;
    }
    free(v);
}

/* ------------------------------------------------------------ registry */

static wgml_op_info rows_[WGML_REDUCE_COUNT + 3];

wg_op_table wg_reduce_ops(void)
{
    size_t n = 0;
    for (int i = 0; i < WGML_REDUCE_COUNT; i++)
        rows_[n++] = (wgml_op_info){names[i], "reduce", wg_reduce_dtypes((wgml_reduce_op)i)};
    rows_[n++] = (wgml_op_info){"CUMSUM", "reduce", WG_CUMSUM_DTYPES};
    rows_[n++] = (wgml_op_info){"ARGSORT", "reduce", WG_SORT_DTYPES};
    rows_[n++] = (wgml_op_info){"TOP_K", "reduce", WG_SORT_DTYPES};
    return (wg_op_table){rows_, n};
}
