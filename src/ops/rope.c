/*
 * Rotary position embedding with ggml's semantics (ggml_rope_ext /
 * ggml_rope_multi).  x is [..., seq, heads, head_dim] (3-D or 4-D, any
 * strides), one position per seq index.  For pair i < n_dims/2:
 *
 *   theta_extrap = pos * freq_base^(-2i/n_dims) / freq_factor[i]
 *   theta_interp = freq_scale * theta_extrap
 *   YaRN off (ext_factor 0): theta = theta_interp, mscale = attn_factor
 *   YaRN on: ramp(i) = 1 - clamp((i - lo) / max(0.001, hi - lo), 0, 1),
 *            mix = ramp * ext_factor,
 *            theta = theta_interp * (1 - mix) + theta_extrap * mix,
 *            mscale = attn_factor * (1 + 0.1 ln(1 / freq_scale)),
 *   where [lo, hi] = [max(0, floor(c(beta_fast))), min(n_dims-1, ceil(c(beta_slow)))]
 *   and c(b) = n_dims ln(n_ctx_orig / (2 pi b)) / (2 ln freq_base).
 *   (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos) * mscale.
 *
 * NORMAL pairs elements (2i, 2i+1); NEOX and M-RoPE pair (i, i + n_dims/2);
 * elements from n_dims on are copied.  M-RoPE reads four position streams
 * (pos has 4*seq entries: t, h, w, e) and pair i uses the stream of sector
 * i % (s0+s1+s2+s3): [0, s0) t, [s0, s0+s1) h, then w, then e.
 *
 * Zero-initialised fields take ggml's usual values: freq_base 10000,
 * freq_scale 1, attn_factor 1 and, with YaRN on, beta_fast 32 / beta_slow 1
 * when both are 0.  freq_factors may have more than n_dims/2 entries (as in
 * ggml); only the first n_dims/2 are read.  out may be x itself.
 *
 * The kernel (rope.wgsl) computes the angle in f32 but more carefully than
 * ggml's running product: the frequency is one exp2 of a fraction, and
 * sin/cos use their own range reduction (see there).  The CPU reference
 * below evaluates the formulas above in double.
 */
#include "rope.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ROPE_WG 256

typedef struct rope_k {
    double base, scale, ext, attn, mscale;
    double corr[2];
} rope_k;

static double corr_dim(int n_dims, int n_ctx_orig, double n_rot, double base)
{
    return n_dims * log(n_ctx_orig / (n_rot * 2 * 3.14159265358979323846)) / (2 * log(base));
}

/* Defaults, checks and the derived YaRN constants. */
static wgml_status rope_consts(const wgml_rope_params *p, rope_k *k)
{
    k->base = p->freq_base == 0 ? 10000 : p->freq_base;
    k->scale = p->freq_scale == 0 ? 1 : p->freq_scale;
    k->attn = p->attn_factor == 0 ? 1 : p->attn_factor;
    k->ext = p->ext_factor;
    double bf = p->beta_fast, bs = p->beta_slow;
    if (bf == 0 && bs == 0) {
        bf = 32;
        bs = 1;
    }
    if (!(k->base > 0) || isinf(k->base) || k->base == 1)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_rope: freq_base %g must be positive, finite and not 1", k->base);
    if (!(k->scale > 0) || isinf(k->scale))
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_rope: freq_scale %g must be positive and finite", k->scale);
    if (!isfinite(k->attn) || !isfinite(k->ext))
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_rope: attn_factor and ext_factor must be finite");
    k->mscale = k->attn;
    k->corr[0] = k->corr[1] = 0;
    if (k->ext != 0) {
        if (p->n_ctx_orig <= 0)
            return wg_fail(WGML_ERR_INVALID_ARG, "wgml_rope: YaRN (ext_factor %g) needs n_ctx_orig > 0, got %d",
                           k->ext, p->n_ctx_orig);
        if (!(bf > 0) || !(bs > 0) || isinf(bf) || isinf(bs))
            return wg_fail(WGML_ERR_INVALID_ARG, "wgml_rope: beta_fast %g and beta_slow %g must be positive", bf, bs);
        double lo = floor(corr_dim(p->n_dims, p->n_ctx_orig, bf, k->base));
        double hi = ceil(corr_dim(p->n_dims, p->n_ctx_orig, bs, k->base));
        k->corr[0] = lo > 0 ? lo : 0;
        k->corr[1] = hi < p->n_dims - 1 ? hi : p->n_dims - 1;
        k->mscale *= 1 + 0.1 * log(1 / k->scale);
    }
    return WGML_OK;
}

/* Stream (0..3) of pair i for M-RoPE; 0 otherwise. */
static int rope_stream(const wgml_rope_params *p, int64_t i)
{
    if (p->mode != WGML_ROPE_MROPE)
        return 0;
    const int *s = p->sections;
    int64_t sector = i % (s[0] + s[1] + s[2] + s[3]);
    return sector < s[0] ? 0 : sector < s[0] + s[1] ? 1 : sector < s[0] + s[1] + s[2] ? 2 : 3;
}

/* The kernels' constants (rope_fns.wgsl): f0 = k_hi, k_lo, freq_scale,
 * ext_factor; f1 = corr_lo, corr_hi, mscale.  k = k_hi + k_lo is log2 of
 * the frequency ratio between pairs, split so that i * k_hi is exact in
 * f32 for i < 2^12. */
static void gpu_consts(const wgml_rope_params *p, const rope_k *kc, float f0[4], float f1[4])
{
    double kk = -2.0 * log2(kc->base) / p->n_dims;
    int e;
    double m = frexp(kk, &e);
    double k_hi = ldexp(nearbyint(m * 4096), e - 12);
    f0[0] = (float)k_hi;
    f0[1] = (float)(kk - k_hi);
    f0[2] = (float)kc->scale;
    f0[3] = (float)kc->ext;
    f1[0] = (float)kc->corr[0];
    f1[1] = (float)kc->corr[1];
    f1[2] = (float)kc->mscale;
    f1[3] = 0;
}

wgml_status wg_rope_gpu_consts(const wgml_rope_params *p, float f0[4], float f1[4])
{
    rope_k kc = {0};
    wgml_status st = rope_consts(p, &kc);
    if (st == WGML_OK)
        gpu_consts(p, &kc, f0, f1);
    return st;
}

/* ------------------------------------------------------------ validation */

static wgml_status rope_check(const wgml_tensor *x, const wgml_tensor *pos, const wgml_rope_params *p,
                              const wgml_tensor *out, rope_k *k)
{
    const char *op = "wgml_rope";
    wgml_status st = wg_check_tensor(op, "x", x);
    if (st == WGML_OK)
        st = wg_check_tensor(op, "pos", pos);
    if (st != WGML_OK)
        return st;
    if (!p)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: params are NULL", op);
    if ((unsigned)p->mode > WGML_ROPE_MROPE)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: unknown mode %d", op, (int)p->mode);
    if (!(WG_DT_FLOATS & WG_DT_BIT(x->dtype)))
        return wg_fail(WGML_ERR_DTYPE, "%s: x is %s; f32, f16 and bf16 are supported", op, wgml_dtype_name(x->dtype));
    if (x->ndim < 3) {
        char s[96];
        return wg_fail(WGML_ERR_SHAPE, "%s: x %s must be [..., seq, heads, head_dim] (3 or 4 dims)", op,
                       wg_shape_str(x, s, sizeof s));
    }
    if ((st = wg_check_out(op, out, x->dtype, x->ndim, x->shape)) != WGML_OK)
        return st;
    /* An invocation reads its pair of x before writing it: in place is fine. */
    if ((st = wg_check_writes(op, "out", out, true, "x", x, WG_END)) != WGML_OK)
        return st;
    int64_t head_dim = x->shape[x->ndim - 1], seq = x->shape[x->ndim - 3];
    if (p->n_dims <= 0 || p->n_dims % 2 || p->n_dims > head_dim)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: n_dims %d must be even, positive and <= head_dim %lld", op,
                       p->n_dims, (long long)head_dim);
    if (pos->dtype != WGML_I32)
        return wg_fail(WGML_ERR_DTYPE, "%s: pos is %s, must be i32", op, wgml_dtype_name(pos->dtype));
    int64_t want = p->mode == WGML_ROPE_MROPE ? 4 * seq : seq;
    if (pos->ndim != 1 || pos->shape[0] != want)
        return wg_fail(WGML_ERR_SHAPE, "%s: pos must be 1-D with %lld entries (%s seq %lld), got %lld elements in %d dims",
                       op, (long long)want, p->mode == WGML_ROPE_MROPE ? "4 x" : "one per", (long long)seq,
                       (long long)wgml_tensor_nelem(pos), pos->ndim);
    if (p->mode == WGML_ROPE_MROPE) {
        const int *s = p->sections;
        if (s[0] < 0 || s[1] < 0 || s[2] < 0 || s[3] < 0 || (int64_t)s[0] + s[1] + s[2] + s[3] <= 0 ||
            (int64_t)s[0] + s[1] + s[2] + s[3] > 1 << 20)
            return wg_fail(WGML_ERR_INVALID_ARG, "%s: M-RoPE sections {%d, %d, %d, %d} must be >= 0 with a positive sum",
                           op, s[0], s[1], s[2], s[3]);
    }
    int64_t heads = x->shape[x->ndim - 2];
    if (p->n_heads_rot < 0 || p->n_heads_rot > heads)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: n_heads_rot %d must be 0 (every head) or 1..%lld", op,
                       p->n_heads_rot, (long long)heads);
    const wgml_tensor *ff = p->freq_factors;
    if (ff) {
        if ((st = wg_check_tensor(op, "freq_factors", ff)) != WGML_OK)
            return st;
        if (ff->dtype != WGML_F32)
            return wg_fail(WGML_ERR_DTYPE, "%s: freq_factors is %s, must be f32", op, wgml_dtype_name(ff->dtype));
        if (ff->ndim != 1 || ff->shape[0] < p->n_dims / 2)
            return wg_fail(WGML_ERR_SHAPE, "%s: freq_factors must be 1-D with n_dims/2 = %d entries", op,
                           p->n_dims / 2);
    }
    if (!wg_same_ctx(x, out) || !wg_same_ctx(x, pos) || !wg_same_ctx(x, ff))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", op);
    return rope_consts(p, k);
}

/* ------------------------------------------------------------ dispatch */

typedef struct rope_params {
    uint32_t dims[4], xs[4], os[4], a[4], b[4], c[4], d[4];
    float f0[4], f1[4];
    uint32_t e[4];
} rope_params;

/* Heads per thread: the pair's sin/cos is computed once for them
 * (rope.wgsl, define HEADS).  4 keeps enough threads for short
 * sequences. */
#define ROPE_HEADS 4

typedef struct rope_job {
    const wgml_tensor *x, *out, *pos, *ff;
    wg_view4 xv, ov;       /* [B, S, H, D] */
    uint64_t pos_off;      /* elements */
    int64_t pos_st, pos_stream, ff_off, ff_st;
    int nstreams;
    int64_t rot_heads;     /* n_heads_rot (0: every head) */
} rope_job;

typedef struct rope_run_args {
    wgml_ctx *ctx;
    wgml_kernel *k;
    const rope_job *j;
    const rope_params *base;
} rope_run_args;

/* One dispatch over a block [B, S, H, D] whose windows fit (w: x, out and
 * pos moved to the block's start). */
static wgml_status rope_one(void *user, const wg_win *w, const int64_t dm[4], const int64_t origin[4])
{
    const rope_run_args *a = user;
    const rope_job *j = a->j;
    int64_t nh = a->base->a[2], per_row = dm[3] - nh;
    int64_t hpt = dm[2] < ROPE_HEADS ? dm[2] : ROPE_HEADS, groups_h = (dm[2] + hpt - 1) / hpt;
    uint64_t items = (uint64_t)(dm[0] * dm[1] * groups_h) * (uint64_t)per_row;
    rope_params p = *a->base;
    wg_binding b[4];
    uint32_t xo, oo, po, fo = 0;
    b[0] = wg_win_bind(&w[0], dm, &xo);
    b[1] = wg_win_bind(&w[1], dm, &oo);
    b[2] = wg_win_bind(&w[2], dm, &po);
    if (j->ff) {
        const int64_t one[4] = {1, 1, 1, 1};
        wg_win f = {j->ff->st->buf, (uint64_t)j->ff_off, {0, 0, 0, 0}, wg_dtype(j->ff->dtype)->block_bytes,
                    (uint64_t)((nh - 1) * j->ff_st), "freq_factors"};
        b[3] = wg_win_bind(&f, one, &fo);
    } else {
        b[3] = b[2]; /* unread: the kernel checks the has-freq_factors flag */
    }
    for (int i = 0; i < 4; i++) {
        p.dims[i] = (uint32_t)dm[i];
        p.xs[i] = (uint32_t)j->xv.strides[i];
        p.os[i] = (uint32_t)j->ov.strides[i];
    }
    p.a[0] = (uint32_t)items;
    p.a[1] = (uint32_t)per_row;
    p.a[3] = xo;
    p.b[0] = oo;
    p.b[1] = po;
    p.b[2] = (uint32_t)j->pos_st;
    p.b[3] = (uint32_t)j->pos_stream;
    p.c[0] = fo;
    p.c[1] = (uint32_t)j->ff_st;
    p.e[0] = (uint32_t)hpt;
    p.e[1] = (uint32_t)groups_h;
    /* heads from e.w on (in this window) pass through unrotated */
    int64_t rot = j->rot_heads ? j->rot_heads - origin[2] : dm[2];
    p.e[3] = (uint32_t)(rot < 0 ? 0 : rot > dm[2] ? dm[2] : rot);
    uint64_t groups = (items + ROPE_WG - 1) / ROPE_WG;
    return wg_dispatch(a->ctx, a->k, b, 4, &p, sizeof p, (uint32_t)groups, 1, 1);
}

/* Cuts B, S and H (never a row: a thread rotates pairs across it) until
 * the windows fit; positions move with S, and their streams are the pos
 * window's tail. */
static wgml_status rope_run(wgml_ctx *ctx, wgml_kernel *k, const rope_job *j, const rope_params *base)
{
    wg_win w[3] = {wg_win_of(j->x, &j->xv, "x"), wg_win_of(j->out, &j->ov, "out"),
                   {j->pos->st->buf, j->pos_off, {0, j->pos_st, 0, 0}, 4,
                    (uint64_t)((j->nstreams - 1) * j->pos_stream), "pos"}};
    rope_run_args a = {ctx, k, j, base};
    return wg_win_split(ctx, w, 3, j->xv.shape, 3, 0xffffffffull - ROPE_WG, "wgml_rope", rope_one, &a);
}

static bool same_buf(const wgml_tensor *a, const wgml_tensor *b) { return a && b && a->st->buf == b->st->buf; }

/* Pairs [j0, j0 + n) of the rows of x -> out, views holding just them:
 * the kernel sees n pairs (no copied tail) starting at pair j0. */
static wgml_status rope_piece(wgml_ctx *ctx, wgml_kernel *k, const rope_job *j, const rope_params *base,
                              const wgml_tensor *x, const wgml_tensor *out, int64_t n, int64_t j0)
{
    rope_job jp = *j;
    rope_params bp = *base;
    jp.x = x;
    jp.out = out;
    jp.xv = wg_view4_of(x);
    jp.ov = wg_view4_of(out);
    jp.ff_off += j0 * j->ff_st;
    bp.a[2] = (uint32_t)n;
    bp.e[2] = (uint32_t)j0;
    return rope_run(ctx, k, &jp, &bp);
}

/* Slice [a, b) of t's last dim (a view). */
static wgml_status last_slice(const wgml_tensor *t, int64_t a, int64_t b, wgml_tensor **v)
{
    return wgml_view_slice(t, t->ndim - 1, a, b, 1, v);
}

/* Rows (head_dim) longer than one window.  The elements past n_dims are
 * a copy; the pairs run in pieces that fit (the kernel's P.e.z gives a
 * piece's first pair).  NORMAL pairs are neighbours: a piece is a slice
 * of x and out.  NEOX / M-RoPE pair j with j + n_dims/2, which may lie
 * windows apart: a piece's two halves are gathered into a contiguous
 * scratch [.., 2n], rotated there as n pairs, and copied back (in place
 * is safe: a piece writes only the elements it has read). */
static wgml_status rope_long(wgml_ctx *ctx, wgml_kernel *k, const rope_job *j, const rope_params *base,
                             const wgml_rope_params *p)
{
    const wgml_tensor *x = j->x, *out = j->out;
    int64_t D = x->shape[x->ndim - 1], nh = p->n_dims / 2;
    wgml_status st = WGML_OK;
    wgml_tensor *v[4] = {NULL, NULL, NULL, NULL};
    bool same = x->st->buf == out->st->buf && j->xv.offset == j->ov.offset &&
                memcmp(j->xv.strides, j->ov.strides, sizeof j->xv.strides) == 0;
    if (p->n_dims < D && !same) {
        if ((st = last_slice(x, p->n_dims, D, &v[0])) == WGML_OK && (st = last_slice(out, p->n_dims, D, &v[1])) ==
            WGML_OK)
            st = wg_copy_impl(v[0], v[1]);
        wgml_tensor_free(v[0]);
        wgml_tensor_free(v[1]);
    }
    uint64_t esz = wg_dtype(x->dtype)->block_bytes > wg_dtype(out->dtype)->block_bytes
                       ? wg_dtype(x->dtype)->block_bytes : wg_dtype(out->dtype)->block_bytes;
    int64_t len;
    if (p->mode == WGML_ROPE_NORMAL) {
        wg_win w[2] = {wg_win_of(x, &j->xv, "x"), wg_win_of(out, &j->ov, "out")};
        const int64_t row[4] = {1, 1, 1, p->n_dims};
        len = wg_win_most(ctx, w, 2, row, 3, UINT32_MAX) / 2;
    } else {
        len = (int64_t)(wg_window_cap(ctx) / esz / 2);
    }
    if (len == 0 && st == WGML_OK)
        st = wg_fail_window(ctx, 2 * esz, "wgml_rope: one pair of a row of %lld elements", (long long)D);
    for (int64_t j0 = 0; j0 < nh && st == WGML_OK; j0 += len) {
        int64_t n = nh - j0 < len ? nh - j0 : len;
        if (p->mode == WGML_ROPE_NORMAL) {
            if ((st = last_slice(x, 2 * j0, 2 * (j0 + n), &v[0])) == WGML_OK &&
                (st = last_slice(out, 2 * j0, 2 * (j0 + n), &v[1])) == WGML_OK)
                st = rope_piece(ctx, k, j, base, v[0], v[1], n, j0);
        } else {
            int64_t shape[WGML_MAX_DIMS];
            memcpy(shape, x->shape, sizeof shape);
            shape[x->ndim - 1] = 2 * n;
            wgml_tensor *sx = NULL, *so = NULL, *h[2] = {NULL, NULL};
            /* Pieces run in order: each reuses the last one's scratch, so
             * rope's declaration (wg_sc_rope) bounds one piece, not all. */
            uint64_t mark = wg_scratch_mark(ctx);
            if ((st = wg_scratch_tensor(ctx, x->dtype, x->ndim, shape, &sx)) == WGML_OK)
                st = wg_scratch_tensor(ctx, out->dtype, x->ndim, shape, &so);
            for (int half = 0; half < 2 && st == WGML_OK; half++) { /* x's halves -> sx */
                if ((st = last_slice(x, half * nh + j0, half * nh + j0 + n, &v[half])) == WGML_OK &&
                    (st = last_slice(sx, half * n, (half + 1) * n, &h[half])) == WGML_OK)
                    st = wg_copy_impl(v[half], h[half]);
            }
            if (st == WGML_OK)
                st = rope_piece(ctx, k, j, base, sx, so, n, j0);
            for (int half = 0; half < 2; half++) {
                wgml_tensor_free(v[half]);
                wgml_tensor_free(h[half]);
                v[half] = h[half] = NULL;
            }
            for (int half = 0; half < 2 && st == WGML_OK; half++) { /* so -> out's halves */
                if ((st = last_slice(so, half * n, (half + 1) * n, &h[half])) == WGML_OK &&
                    (st = last_slice(out, half * nh + j0, half * nh + j0 + n, &v[half])) == WGML_OK)
                    st = wg_copy_impl(h[half], v[half]);
            }
            for (int half = 0; half < 2; half++)
                wgml_tensor_free(h[half]);
            wgml_tensor_free(sx);
            wgml_tensor_free(so);
            wg_scratch_release(ctx, mark);
        }
        wgml_tensor_free(v[0]);
        wgml_tensor_free(v[1]);
        v[0] = v[1] = NULL;
    }
    return st;
}

wgml_status wg_rope_impl(const wgml_tensor *x, const wgml_tensor *pos, const wgml_rope_params *p, wgml_tensor *out)
{
    rope_k kc;
    wgml_status st = rope_check(x, pos, p, out, &kc);
    if (st != WGML_OK)
        return st;
    if (wgml_tensor_nelem(x) == 0)
        return wg_check(x->ctx);
    const wgml_tensor *ff = p->freq_factors;
    /* A buffer written by the dispatch must be bound read_write by every
     * operand that sees it (WebGPU forbids mixing the two). */
    const char *xm = same_buf(x, out) ? "rw" : "r";
    bool pos_rw = same_buf(pos, out), ff_rw = ff ? same_buf(ff, out) : pos_rw; /* no ff: pos is bound twice */
    char defs[128];
    snprintf(defs, sizeof defs, "X_DT=%s;X_MODE=%s;O_DT=%s;O_MODE=w;HEADS=%d;POS_MODE=%s;FF_MODE=%s",
             wg_dtype(x->dtype)->wgsl, xm, wg_dtype(out->dtype)->wgsl, ROPE_HEADS, pos_rw ? "rw" : "r",
             ff_rw ? "rw" : "r");
    unsigned ro = (strcmp(xm, "r") == 0 ? 1u : 0u) | (pos_rw ? 0u : 4u) | (ff_rw ? 0u : 8u);
    wg_kernel_ref ref = {"rope.wgsl", "rope", defs, 4, ro};
    wgml_kernel *k = NULL;
    if ((st = wg_kernel_get(x->ctx, &ref, &k)) != WGML_OK)
        return st;

    rope_params base;
    memset(&base, 0, sizeof base);
    int nh = p->n_dims / 2;
    base.a[2] = (uint32_t)nh;
    base.d[2] = (uint32_t)p->mode;
    base.d[3] = ff != NULL;
    if (p->mode == WGML_ROPE_MROPE) {
        const int *s = p->sections;
        base.c[2] = (uint32_t)s[0];
        base.c[3] = (uint32_t)(s[0] + s[1]);
        base.d[0] = (uint32_t)(s[0] + s[1] + s[2]);
        base.d[1] = (uint32_t)(s[0] + s[1] + s[2] + s[3]);
    }
    gpu_consts(p, &kc, base.f0, base.f1);

    rope_job j;
    memset(&j, 0, sizeof j);
    j.x = x;
    j.out = out;
    j.pos = pos;
    j.ff = ff;
    j.xv = wg_view4_of(x);
    j.ov = wg_view4_of(out);
    wg_view4 pv = wg_view4_of(pos);
    j.pos_off = pv.offset;
    j.pos_st = pos->strides[0];
    j.pos_stream = pos->strides[0] * x->shape[x->ndim - 3];
    j.nstreams = p->mode == WGML_ROPE_MROPE ? 4 : 1;
    j.rot_heads = p->n_heads_rot;
    if (ff) {
        j.ff_off = (int64_t)wg_view4_of(ff).offset;
        j.ff_st = ff->strides[0];
    }
    wg_win w[2] = {wg_win_of(x, &j.xv, "x"), wg_win_of(out, &j.ov, "out")};
    const int64_t row[4] = {1, 1, 1, j.xv.shape[3]};
    if (!wg_win_fits(x->ctx, w, 2, row, UINT32_MAX))
        return rope_long(x->ctx, k, &j, &base, p);
    return rope_run(x->ctx, k, &j, &base);
}

/* ------------------------------------------------------------ reference */

void wg_rope_ref(const wgml_rope_params *p, const int64_t shape[4], const double *x, const int32_t *pos,
                 const double *ff, double *out, double *theta)
{
    rope_k k;
    if (rope_consts(p, &k) != WGML_OK)
        return;
    int64_t B = shape[0], S = shape[1], H = shape[2], D = shape[3], nh = p->n_dims / 2;
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++)
            for (int64_t h = 0; h < H; h++) {
                int64_t row = ((b * S + s) * H + h) * D;
                /* dims past n_dims, and every dim of a head past n_heads_rot, as they are */
                bool pass = p->n_heads_rot && h >= p->n_heads_rot;
                for (int64_t d = pass ? 0 : p->n_dims; d < D; d++) {
                    out[row + d] = x[row + d];
                    if (theta)
                        theta[row + d] = 0;
                }
                for (int64_t i = 0; i < nh && !pass; i++) {
                    double ps = pos[s + S * rope_stream(p, i)];
                    double extrap = ps * pow(k.base, -2.0 * (double)i / p->n_dims) / (ff ? ff[i] : 1.0);
                    double interp = k.scale * extrap, th = interp;
                    if (k.ext != 0) {
                        double y = ((double)i - k.corr[0]) / fmax(0.001, k.corr[1] - k.corr[0]);
                        double mix = (1 - fmin(1, fmax(0, y))) * k.ext;
                        th = interp * (1 - mix) + extrap * mix;
                    }
                    double c = cos(th) * k.mscale, sn = sin(th) * k.mscale;
                    int64_t d0 = p->mode == WGML_ROPE_NORMAL ? 2 * i : i;
                    int64_t d1 = p->mode == WGML_ROPE_NORMAL ? 2 * i + 1 : i + nh;
                    double x0 = x[row + d0], x1 = x[row + d1];
                    out[row + d0] = x0 * c - x1 * sn;
                    out[row + d1] = x0 * sn + x1 * c;
                    if (theta)
                        theta[row + d0] = theta[row + d1] = fabs(th);
                }
            }
}

/* ------------------------------------------------------------ registry */

static const wgml_op_info rope_rows[] = {
    {"ROPE", "rope", WG_DT_FLOATS},
};

wg_op_table wg_rope_ops(void) { return (wg_op_table){rope_rows, sizeof rope_rows / sizeof *rope_rows}; }
