/*
 * Norm family (wgml_norm): layer, RMS, L2, group and batch normalisation
 * with optional affine weight/bias and a fused residual add, each one
 * kernel pass (norm.wgsl through wg_rows_launch; reference wg_norm_ref).
 *
 * Semantics (sharpening wgml.h).  v = x (+ residual); when sum_out is
 * given, v is also written there (the f32 sum, rounded to sum_out's dtype;
 * the normalisation uses the unrounded f32 sum).
 *   LAYER_NORM  last axis: (v - mean) / sqrt(var + eps), var biased (1/n)
 *   RMS_NORM    last axis: v / sqrt(mean(v^2) + eps)
 *   L2_NORM     last axis: v / max(sqrt(sum v^2), eps)  (ggml, torch
 *               F.normalize)
 *   GROUP_NORM  x [N, C, ...] (2 to 4 dims), C % groups == 0: each (n, g)
 *               is normalised like LAYER_NORM over its C/groups channels
 *               times every remaining dim
 *   BATCH_NORM  x [N, C, ...] inference: (v - mean[c]) / sqrt(var[c] + eps)
 * then y = y * weight + bias.  Weight and bias are optional and
 * independent.  For LAYER/RMS/L2 they (and residual) broadcast to x's shape
 * (usually [L]; a per-row [.., L] works too); for GROUP/BATCH they are
 * 1-D [C], as are mean and var (required for BATCH_NORM, refused
 * otherwise).  eps is used as given (>= 0).  groups is read only by
 * GROUP_NORM.  Statistics are f32; x, out, residual, sum_out, weight, bias,
 * mean, var may each be f32, f16 or bf16.  out (and sum_out) may alias x.
 * Any layout is read in place, except GROUP_NORM, whose operands must hold
 * each sample's [C, ...] block contiguously; others are copied through a
 * contiguous temporary.
 */
#include "matvec.h" /* wg_q8_row_words, wg_xquant_tail: the codes' layout is the mat-vec path's */
#include "rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_names[] = {"LAYER_NORM", "RMS_NORM", "L2_NORM", "GROUP_NORM", "BATCH_NORM"};

static wgml_status need_float(const char *op, const char *what, const wgml_tensor *t)
{
    if (t && !wg_dtype_is_float(t->dtype))
        return wg_fail(WGML_ERR_DTYPE, "%s: %s is %s, must be f32, f16 or bf16", op, what,
                       wgml_dtype_name(t->dtype));
    return WGML_OK;
}

static wgml_status need_bcast(const char *op, const char *what, const wgml_tensor *t, const wgml_tensor *x)
{
    int64_t s4[4];
    wg_view4 v;
    wg_shape4(x, s4);
    if (t && (t->ndim > x->ndim || !wg_view4_bcast(t, s4, &v))) {
        char a[96], b[96];
        return wg_fail(WGML_ERR_SHAPE, "%s: %s %s does not broadcast to x %s", op, what, wg_shape_str(t, a, sizeof a),
                       wg_shape_str(x, b, sizeof b));
    }
    return WGML_OK;
}

static wgml_status need_channels(const char *op, const char *what, const wgml_tensor *t, int64_t c)
{
    if (t && (t->ndim != 1 || t->shape[0] != c)) {
        char a[96];
        return wg_fail(WGML_ERR_SHAPE, "%s: %s is %s, must be [%lld] (one per channel)", op, what,
                       wg_shape_str(t, a, sizeof a), (long long)c);
    }
    return WGML_OK;
}

static wgml_status validate(const char *name, const wgml_tensor *x, const wgml_norm_params *p, const wgml_tensor *out)
{
    wgml_status st = wg_check_tensor(name, "x", x);
    if (st != WGML_OK)
        return st;
    if (!p)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: params is NULL", name);
    if ((unsigned)p->kind > WGML_BATCH_NORM)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: unknown norm kind %d", name, (int)p->kind);
    if (!(p->eps >= 0) || !isfinite(p->eps))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: eps %g must be finite and >= 0", name, (double)p->eps);
    const wgml_tensor *all[] = {x, out, p->residual, p->sum_out, p->weight, p->bias, p->mean, p->var};
    const char *what[] = {"x", "out", "residual", "sum_out", "weight", "bias", "mean", "var"};
    if ((st = wg_check_out(name, out, -1, x->ndim, x->shape)) != WGML_OK)
        return st;
    if (p->sum_out && (st = wg_check_out(name, p->sum_out, -1, x->ndim, x->shape)) != WGML_OK)
        return st;
    for (int i = 0; i < 8; i++) {
        if ((st = need_float(name, what[i], all[i])) != WGML_OK)
            return st;
        if (!wg_same_ctx(x, all[i]))
            return wg_fail(WGML_ERR_INVALID_ARG, "%s: %s is from another context", name, what[i]);
    }
    if ((st = need_bcast(name, "residual", p->residual, x)) != WGML_OK)
        return st;
    bool per_channel = p->kind == WGML_GROUP_NORM || p->kind == WGML_BATCH_NORM;
    if (p->kind == WGML_BATCH_NORM && (!p->mean || !p->var))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: BATCH_NORM needs mean and var", name);
    if (p->kind != WGML_BATCH_NORM && (p->mean || p->var))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: mean/var are for BATCH_NORM only", name);
    if (!per_channel) {
        if ((st = need_bcast(name, "weight", p->weight, x)) == WGML_OK)
            st = need_bcast(name, "bias", p->bias, x);
        return st;
    }
    if (x->ndim < 2)
        return wg_fail(WGML_ERR_SHAPE, "%s: %s needs x [N, C, ...], got %d dims", name, kind_names[p->kind], x->ndim);
    int64_t c = x->shape[1];
    if (p->kind == WGML_GROUP_NORM) {
        if (p->groups < 1)
            return wg_fail(WGML_ERR_INVALID_ARG, "%s: groups is %d, must be >= 1", name, p->groups);
        if (c % p->groups)
            return wg_fail(WGML_ERR_SHAPE, "%s: %d groups do not divide %lld channels", name, p->groups, (long long)c);
    }
    const wgml_tensor *chan[] = {p->weight, p->bias, p->mean, p->var};
    for (int i = 0; i < 4; i++)
        if ((st = need_channels(name, what[4 + i], chan[i], c)) != WGML_OK)
            return st;
    return WGML_OK;
}

/* Operand of a [C] tensor indexed by the channel at iteration dim ci. */
static wg_row_operand channel_operand(const wgml_tensor *t, int ci, const char *name)
{
    wg_row_operand o = {NULL, 0, {0, 0, 0, 0}, name, false, false, 0};
    if (!t)
        return o;
    o.t = t;
    o.offset = wg_view4_of(t).offset;
    o.st[ci] = t->strides[0];
    return o;
}

/* ------------------------------------------------------------ group norm */

/* Dims 1.. of t are row-major contiguous (dim 0 may have any stride). */
static bool sample_contiguous(const wgml_tensor *t)
{
    int64_t s = 1;
    for (int i = t->ndim - 1; i >= 1; i--) {
        if (t->shape[i] != 1 && t->strides[i] != s)
            return false;
        s *= t->shape[i];
    }
    return true;
}

/* t itself when sample-contiguous with x's shape, else a contiguous copy
 * in *tmp (filled from t, broadcast to x's shape, when `fill`). */
static wgml_status group_view(const wgml_tensor *t, const wgml_tensor *x, bool fill, wgml_tensor **tmp,
                              const wgml_tensor **use)
{
    *use = t;
    bool same = t && t->ndim == x->ndim;
    for (int i = 0; same && i < x->ndim; i++)
        same = t->shape[i] == x->shape[i];
    if (!t || (same && sample_contiguous(t)))
        return WGML_OK;
    wgml_status st = wg_scratch_tensor(x->ctx, t->dtype, x->ndim, x->shape, tmp);
    if (st != WGML_OK || !fill) {
        *use = *tmp;
        return st;
    }
    wgml_tensor *b = NULL;
    if ((st = wgml_view_broadcast(t, x->ndim, x->shape, &b)) == WGML_OK)
        st = wg_copy_impl(b, *tmp);
    wgml_tensor_free(b);
    *use = *tmp;
    return st;
}

static wg_row_operand group_operand(const wgml_tensor *t, int64_t block, const char *name, bool write)
{
    wg_row_operand o = {t, wg_view4_of(t).offset, {0, t->strides[0], block, 1}, name, write, false, 0};
    return o;
}

/* A [C] weight or bias: row (n, g) starts at channel g * C/groups and its
 * element j is channel j / spatial of the group (WDIV). */
static wg_row_operand group_channels(const wgml_tensor *t, int64_t per_group, const char *name)
{
    wg_row_operand o = channel_operand(t, 2, name);
    if (t) {
        o.st[2] = t->strides[0] * per_group;
        o.st[3] = t->strides[0];
    }
    return o;
}

static wgml_status group_norm(const wgml_tensor *x, const wgml_norm_params *p, wgml_tensor *out,
                              const float fp[4], uint32_t ip[4])
{
    int64_t n = x->shape[0], c = x->shape[1], g = p->groups, s = 1;
    for (int i = 2; i < x->ndim; i++)
        s *= x->shape[i];
    const wgml_tensor *src[4] = {x, p->residual, out, p->sum_out};
    const wgml_tensor *use[4];
    wgml_tensor *tmp[4] = {NULL, NULL, NULL, NULL};
    wgml_status st = WGML_OK;
    for (int i = 0; i < 4 && st == WGML_OK; i++)
        st = group_view(src[i], x, i < 2, &tmp[i], &use[i]);
    if (st == WGML_OK) {
        int64_t block = c / g * s;
        wg_row_operand ops[8] = {
            group_operand(use[0], block, "x", false),
            {NULL, 0, {0, 0, 0, 0}, "r", false, false, 0},
            group_channels(p->weight, c / g, "w"),
            group_channels(p->bias, c / g, "b"),
            {NULL, 0, {0, 0, 0, 0}, "mn", false, false, 0},
            {NULL, 0, {0, 0, 0, 0}, "vr", false, false, 0},
            group_operand(use[2], block, "o", true),
            {NULL, 0, {0, 0, 0, 0}, "so", true, false, 0},
        };
        if (use[1])
            ops[1] = group_operand(use[1], block, "r", false);
        if (use[3])
            ops[7] = group_operand(use[3], block, "so", true);
        int64_t iter[4] = {1, n, g, block};
        ip[0] = (uint32_t)s;
        /* Rows longer than one window run chunked (LAYER's partials in the
         * mean/var slots).  The per-channel weight and bias index j / s
         * from the row's start there (norm.wgsl chan, p.ip.w): they are
         * bound from the row's first channel through the group's last (row
         * stride 0 plus a tail), so they must be contiguous; others are
         * copied first (C elements). */
        wgml_tensor *wc[2] = {NULL, NULL};
        if (!wg_rows_fit(x->ctx, ops, 8, block)) {
            const wgml_tensor *wb[2] = {p->weight, p->bias};
            for (int i = 0; i < 2 && st == WGML_OK; i++) {
                if (!wb[i])
                    continue;
                if (wb[i]->strides[0] != 1 && (st = wg_scratch_tensor(x->ctx, wb[i]->dtype, 1, &c, &wc[i])) == WGML_OK)
                    st = wg_copy_impl(wb[i], wc[i]);
                const wgml_tensor *t = wc[i] ? wc[i] : wb[i];
                wg_row_operand o = {t, wg_view4_of(t).offset, {0, 0, c / g, 0}, i ? "b" : "w", false, false,
                                    (uint64_t)(c / g - 1)};
                ops[2 + i] = o;
            }
            ip[3] = 1;
        }
        if (st == WGML_OK)
            st = wg_rows_launch(x->ctx, "norm.wgsl", "rows_main", NULL, ops, 8, iter, fp, ip, 4);
        wgml_tensor_free(wc[0]);
        wgml_tensor_free(wc[1]);
    }
    if (st == WGML_OK && tmp[2])
        st = wg_copy_impl(tmp[2], out);
    if (st == WGML_OK && tmp[3])
        st = wg_copy_impl(tmp[3], p->sum_out);
    for (int i = 0; i < 4; i++)
        wgml_tensor_free(tmp[i]);
    return st;
}

/* ------------------------------------------------------------ entry */

/* t [N, C, H, W] as [N, C, H*W] when H and W merge into one stride. */
static bool merge_hw(const wgml_tensor *t, const wgml_tensor *x, wgml_tensor *m)
{
    if (!t)
        return true;
    bool same = t->ndim == 4;
    for (int i = 0; same && i < 4; i++)
        same = t->shape[i] == x->shape[i];
    if (!same || (t->shape[2] > 1 && t->shape[3] > 1 && t->strides[2] != t->shape[3] * t->strides[3]))
        return false;
    *m = *t;
    m->ndim = 3;
    m->shape[2] = t->shape[2] * t->shape[3];
    m->strides[2] = t->shape[3] > 1 ? t->strides[3] : t->strides[2];
    return true;
}

/* codes: 0, or with one row x's codes after out's row (rw words, Q8OUT:
 * wg_norm_xq); WGML_ERR_UNSUPPORTED, no message, where the one-dispatch
 * path for them does not apply. */
static wgml_status norm_run(const wgml_tensor *x, const wgml_norm_params *p, wgml_tensor *out, uint64_t codes)
{
    const char *name = "wgml_norm";
    wgml_status st = validate(name, x, p, out);
    if (st != WGML_OK)
        return st;
    /* Each element of out and sum_out is written by the invocation that
     * last reads it from x and residual (after the row's statistics), so
     * those may be the same views; the per-channel inputs may not be
     * written, and out and sum_out must be apart. */
    const wgml_tensor *w = p->weight, *b = p->bias, *mn = p->mean, *vr = p->var, *so = p->sum_out;
    if ((st = wg_check_writes(name, "out", out, true, "x", x, "residual", p->residual, WG_END)) != WGML_OK ||
        (st = wg_check_writes(name, "out", out, false, "weight", w, "bias", b, "mean", mn, "var", vr, "sum_out", so,
                              WG_END)) != WGML_OK ||
        (st = wg_check_writes(name, "sum_out", so, true, "x", x, "residual", p->residual, WG_END)) != WGML_OK ||
        (st = wg_check_writes(name, "sum_out", so, false, "weight", w, "bias", b, "mean", mn, "var", vr, WG_END)) !=
            WGML_OK)
        return st;
    if (wgml_tensor_nelem(x) == 0)
        return wg_check(x->ctx);
    /* The kernel's kind codes: group norm is layer norm over groups. */
    static const uint32_t kind_code[] = {0, 1, 2, 0, 3};
    float fp[4] = {p->eps, 0, 0, 0};
    uint32_t flags = (p->residual ? 1u : 0u) | (p->weight ? 2u : 0u) | (p->bias ? 4u : 0u) | (p->sum_out ? 8u : 0u);
    uint32_t ip[4] = {1, flags, kind_code[p->kind], 0};
    if (p->kind == WGML_GROUP_NORM)
        return group_norm(x, p, out, fp, ip);
    /* Batch norm rows run along the spatial dims: merged, they are long
     * enough to keep a workgroup busy (28 x 28 rather than rows of 28). */
    wgml_tensor mx, mo, mr, ms;
    wgml_norm_params q = *p;
    if (p->kind == WGML_BATCH_NORM && x->ndim == 4 && merge_hw(x, x, &mx) && merge_hw(out, x, &mo) &&
        merge_hw(p->residual, x, &mr) && merge_hw(p->sum_out, x, &ms)) {
        q.residual = p->residual ? &mr : NULL;
        q.sum_out = p->sum_out ? &ms : NULL;
        x = &mx;
        out = &mo;
        p = &q;
    }

    int64_t s4[4];
    wg_shape4(x, s4);
    const int id[4] = {0, 1, 2, 3};
    wg_row_operand ops[8] = {
        wg_row_operand_of(x, s4, id, "x", false),
        {NULL, 0, {0, 0, 0, 0}, "r", false, false, 0},
        {NULL, 0, {0, 0, 0, 0}, "w", false, false, 0},
        {NULL, 0, {0, 0, 0, 0}, "b", false, false, 0},
        {NULL, 0, {0, 0, 0, 0}, "mn", false, false, 0},
        {NULL, 0, {0, 0, 0, 0}, "vr", false, false, 0},
        wg_row_operand_of(out, s4, id, "o", true),
        {NULL, 0, {0, 0, 0, 0}, "so", true, false, 0},
    };
    if (p->residual)
        ops[1] = wg_row_operand_of(p->residual, s4, id, "r", false);
    if (p->sum_out)
        ops[7] = wg_row_operand_of(p->sum_out, s4, id, "so", true);
    if (p->kind == WGML_BATCH_NORM) {
        int ci = 4 - x->ndim + 1; /* the channel axis in the 4-D space */
        ops[2] = channel_operand(p->weight, ci, "w");
        ops[3] = channel_operand(p->bias, ci, "b");
        ops[4] = channel_operand(p->mean, ci, "mn");
        ops[5] = channel_operand(p->var, ci, "vr");
    } else {
        if (p->weight)
            ops[2] = wg_row_operand_of(p->weight, s4, id, "w", false);
        if (p->bias)
            ops[3] = wg_row_operand_of(p->bias, s4, id, "b", false);
    }
    /* LAYER/RMS/L2 have a register-cached vector path (norm.wgsl ROWS4)
     * that the launcher takes where the layout allows. */
    bool vec = p->kind != WGML_BATCH_NORM;
    for (int j = 0; j < 8; j++)
        ops[j].vec = vec && j != 4 && j != 5;
    ops[6].tail = codes; /* the codes' words follow the row */
    /* Rows longer than one window: LAYER/RMS/L2 run chunked passes with
     * partial statistics in the mean/var slots, which only BATCH uses
     * (norm.wgsl PARTIAL / COMBINE); BATCH reduces nothing along a row,
     * so its pieces run as launches of their own (its per-channel operands
     * are constant along a row, or per-element for x [N, C]). */
    return wg_rows_launch(x->ctx, "norm.wgsl", "rows_main", codes ? "ROWS4OK;Q8OUT" : vec ? "ROWS4OK" : NULL, ops, 8,
                          s4, fp, ip, vec ? 4 : WG_ROWS_PIECES);
}

wgml_status wg_norm_impl(const wgml_tensor *x, const wgml_norm_params *p, wgml_tensor *out)
{
    return norm_run(x, p, out, 0);
}

/* ------------------------------------------------------------ the xq tail */

/* Graph fusion's xq tail (src/graph/fuse.c, wg_op_params.xq_tail): a
 * LAYER / RMS / L2 norm feeding a one-row integer product writes x's 8-bit
 * codes itself, right after its row, so the product (matvec_xs.wgsl
 * XS_PREQ) starts on its weights instead of quantising x in each of its
 * workgroups.  out is [.., k + rw] f32 (rw = wg_q8_row_words(k)): the
 * norm's values in [.., :k], then, for a one-row x, the codes (other row
 * counts leave the tail unwritten: the products read codes only for one
 * row).  The codes are q8_block's of the very f32 values written, so the
 * product's result is the unfused graph's bit for bit. */
wgml_status wg_ck_norm_xq(const wg_op_params *p, const wg_desc *x, wg_desc *out)
{
    int64_t k = x->ndim ? x->shape[x->ndim - 1] : 0;
    if (p->norm.kind != WGML_LAYER_NORM && p->norm.kind != WGML_RMS_NORM && p->norm.kind != WGML_L2_NORM)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_norm: x's codes follow only LAYER, RMS and L2 norms");
    if (x->ndim < 1 || wg_is_sym(k) || k <= 0 || k % 32)
        return wg_fail(WGML_ERR_SHAPE, "wgml_norm: x's codes need rows of a fixed multiple of 32 elements");
    *out = *x;
    out->dtype = WGML_F32;
    out->shape[x->ndim - 1] = k + (int64_t)wg_q8_row_words(k);
    return WGML_OK;
}

wgml_status wg_norm_xq(const wgml_tensor *x, const wgml_norm_params *p, wgml_tensor *out)
{
    const char *name = "wgml_norm (x's codes after its rows)";
    int64_t k = x->ndim ? x->shape[x->ndim - 1] : 0;
    uint64_t rw = wg_q8_row_words(k);
    if (x->ndim < 1 || k <= 0 || k % 32 || out->dtype != WGML_F32 || out->ndim != x->ndim ||
        out->shape[x->ndim - 1] != k + (int64_t)rw || out->strides[x->ndim - 1] != 1)
        return wg_fail(WGML_ERR_INTERNAL, "%s: out must be f32 [.., k + %llu] for x [.., k], k a multiple of 32",
                       name, (unsigned long long)rw);
    wgml_tensor *y = NULL;
    wgml_status st = wgml_view_slice(out, x->ndim - 1, 0, k, 1, &y);
    if (st != WGML_OK)
        return st;
    int64_t rows = wgml_tensor_nelem(x) / k;
    /* one dispatch: the row's values kept in workgroup memory to be
     * quantised after the row's statistics (norm.wgsl Q8OUT; the row
     * launcher refuses it where that memory is short) */
    st = WGML_ERR_UNSUPPORTED;
    if (rows == 1)
        st = norm_run(x, p, y, rw);
    if (st == WGML_ERR_UNSUPPORTED) { /* the norm, then x's codes in a pass of their own */
        st = norm_run(x, p, y, 0);
        if (st == WGML_OK && rows == 1)
            st = wg_xquant_tail(y);
    }
    wgml_tensor_free(y);
    return st;
}

/* ------------------------------------------------------------ reference */

void wg_norm_ref(int ndim, const int64_t *shape, const double *x, const double *residual, const double *weight,
                 const double *bias, const double *mean, const double *var, const wgml_norm_params *p, double *out,
                 double *sum_out)
{
    int64_t total = 1;
    for (int i = 0; i < ndim; i++)
        total *= shape[i];
    if (total == 0)
        return;
    double *v = malloc(sizeof(double) * (size_t)total);
    for (int64_t i = 0; i < total; i++) {
        v[i] = x[i] + (residual ? residual[i] : 0);
        if (sum_out)
            sum_out[i] = v[i];
    }
    /* Rows of `len` elements; BATCH: the channel of element i. */
    bool chan = p->kind == WGML_GROUP_NORM || p->kind == WGML_BATCH_NORM;
    int64_t c = chan ? shape[1] : 1, s = 1;
    for (int i = 2; chan && i < ndim; i++)
        s *= shape[i];
    int64_t len = p->kind == WGML_GROUP_NORM ? c / p->groups * s : ndim ? shape[ndim - 1] : 1;
    double eps = p->eps;
    for (int64_t r = 0; r < total / len; r++) {
        const double *a = v + r * len;
        double m = 0, q = 0, sc = 1;
        for (int64_t j = 0; j < len; j++)
            m += a[j];
        m /= (double)len;
        for (int64_t j = 0; j < len; j++)
            q += p->kind == WGML_LAYER_NORM || p->kind == WGML_GROUP_NORM ? (a[j] - m) * (a[j] - m) : a[j] * a[j];
        switch (p->kind) {
        case WGML_LAYER_NORM: case WGML_GROUP_NORM: sc = 1 / sqrt(q / (double)len + eps); break;
        case WGML_RMS_NORM: sc = 1 / sqrt(q / (double)len + eps); m = 0; break;
        case WGML_L2_NORM: sc = isnan(q) ? NAN : 1 / fmax(sqrt(q), eps); m = 0; break; /* fmax drops NaN */
        default: break;
        }
        for (int64_t j = 0; j < len; j++) {
            int64_t i = r * len + j;
            double y;
            if (p->kind == WGML_BATCH_NORM) {
                int64_t ch = (i / s) % c;
                y = (a[j] - mean[ch]) / sqrt(var[ch] + eps);
            } else {
                y = (a[j] - m) * sc;
            }
            out[i] = y * (weight ? weight[i] : 1) + (bias ? bias[i] : 0);
        }
    }
    free(v);
}

/* ------------------------------------------------------------ registry */

static const wgml_op_info norm_rows[] = {
    {"LAYER_NORM", "norm", WG_DT_FLOATS}, {"RMS_NORM", "norm", WG_DT_FLOATS}, {"L2_NORM", "norm", WG_DT_FLOATS},
    {"GROUP_NORM", "norm", WG_DT_FLOATS}, {"BATCH_NORM", "norm", WG_DT_FLOATS},
};

wg_op_table wg_norm_ops(void) { return (wg_op_table){norm_rows, sizeof norm_rows / sizeof *norm_rows}; }
