/*
 * Matrix products (wgml_matmul, wgml_linear): the op table rows (check,
 * scratch, encode), the CPU reference and the registry rows.  The GEMM
 * itself is gemm.c (kernel gemm.wgsl).
 *
 * Semantics (sharpening wgml.h):
 *   matmul  a [..., m, k] . b [..., k, n] -> out [..., m, n]; a, b, out
 *           f32/f16/bf16 in any mix; 2 to 4 dims each, the leading (batch)
 *           dims numpy-broadcast between a and b.
 *   linear  x [..., k] (1 to 4 dims, f32/f16) . w [n, k]^T -> out
 *           [..., n]; w f32/f16/bf16 or a GGUF block type (q4_0, q4_1,
 *           q5_0, q5_1, q8_0, q2_K ... q6_K, iq4_nl, mxfp4) with k a
 *           multiple of its block; rows of x up to WG_MATVEC_MAX_ROWS go
 *           to wg_matvec first, the GEMM when it has no kernel for them.
 *   out = act(alpha * product + beta * c + bias), f32 accumulation; c
 *   (the eager call's out itself, or a graph node) and bias broadcast to
 *   out; beta 0 never reads c; k = 0 gives act(beta c + bias); an empty
 *   out is a no-op.  act: none, relu, gelu (erf form), silu.
 */
#include "gemm.h"

#include <math.h>
#include <string.h>

#define FAIL(code, ...) return wg_fail(code, __VA_ARGS__)

/* ------------------------------------------------------------ checks */

static bool is_wquant(wgml_dtype t)
{
    switch (t) {
    case WGML_Q4_0: case WGML_Q4_1: case WGML_Q5_0: case WGML_Q5_1: case WGML_Q8_0: case WGML_Q2_K:
    case WGML_Q3_K: case WGML_Q4_K: case WGML_Q5_K: case WGML_Q6_K: case WGML_IQ4_NL: case WGML_MXFP4:
        return true;
    default:
        return false;
    }
}

static wgml_status need_float(const char *op, const char *what, const wg_desc *d)
{
    if (!wg_dtype_is_float(d->dtype))
        FAIL(WGML_ERR_DTYPE, "%s: %s is %s, must be f32, f16 or bf16", op, what, wgml_dtype_name(d->dtype));
    return WGML_OK;
}

/* Dims equal, or broadcast against 1 (symbolic dims only against 1 or
 * themselves). */
static bool dims_bcast(int64_t x, int64_t y, int64_t *r)
{
    if (x == y || y == 1) {
        *r = x;
        return true;
    }
    if (x == 1) {
        *r = y;
        return true;
    }
    return false;
}

/* bias or c: broadcastable to out. */
static wgml_status need_bcast_to(const char *op, const char *what, const wg_desc *d, const wg_desc *out)
{
    wgml_status st = need_float(op, what, d);
    if (st != WGML_OK)
        return st;
    char a[96], b[96];
    bool ok = d->ndim <= out->ndim;
    for (int i = 0; ok && i < d->ndim; i++) {
        int64_t s = d->shape[d->ndim - 1 - i];
        ok = s == 1 || s == out->shape[out->ndim - 1 - i];
    }
    if (!ok)
        FAIL(WGML_ERR_SHAPE, "%s: %s %s does not broadcast to out %s", op, what, wg_desc_str(d, NULL, a, sizeof a),
             wg_desc_str(out, NULL, b, sizeof b));
    return WGML_OK;
}

static wgml_status ck_tail(const char *op, const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    wgml_status st;
    if (!wg_dtype_is_float(p->dtype))
        FAIL(WGML_ERR_DTYPE, "%s: out dtype %s, must be f32, f16 or bf16", op, wgml_dtype_name(p->dtype));
    out->dtype = p->dtype;
    if ((unsigned)p->mm.act > WGML_ACT_SILU)
        FAIL(WGML_ERR_INVALID_ARG, "%s: unknown activation %d", op, (int)p->mm.act);
    if ((unsigned)p->mm.precision > WGML_PREC_F16)
        FAIL(WGML_ERR_INVALID_ARG, "%s: unknown precision %d (WGML_PREC_F32 or WGML_PREC_F16)", op,
             (int)p->mm.precision);
    if (nin > 2 && in[2] && (st = need_bcast_to(op, "bias", in[2], out)) != WGML_OK)
        return st;
    const wg_desc *c = nin > 3 ? in[3] : NULL;
    if (p->mm.beta != 0.0f && !c)
        FAIL(WGML_ERR_INVALID_ARG, "%s: beta is %g but there is no c operand to scale", op, (double)p->mm.beta);
    if (c && p->mm.beta != 0.0f && (st = need_bcast_to(op, "c", c, out)) != WGML_OK)
        return st;
    return WGML_OK;
}

wgml_status wg_ck_matmul(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    const char *op = "wgml_matmul";
    const wg_desc *a = in[0], *b = in[1];
    wgml_status st;
    if ((st = need_float(op, "a", a)) != WGML_OK || (st = need_float(op, "b", b)) != WGML_OK)
        return st;
    char x[96], y[96];
    if (a->ndim < 2 || b->ndim < 2)
        FAIL(WGML_ERR_SHAPE, "%s: a %s and b %s need at least 2 dims ([..., m, k] and [..., k, n])", op,
             wg_desc_str(a, NULL, x, sizeof x), wg_desc_str(b, NULL, y, sizeof y));
    if (a->shape[a->ndim - 1] != b->shape[b->ndim - 2])
        FAIL(WGML_ERR_SHAPE, "%s: a %s and b %s: a's last dim (k) must equal b's second last", op,
             wg_desc_str(a, NULL, x, sizeof x), wg_desc_str(b, NULL, y, sizeof y));
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    out->ndim = nd;
    for (int i = 0; i < nd - 2; i++) {
        int ia = a->ndim - nd + i, ib = b->ndim - nd + i;
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (!dims_bcast(da, db, &out->shape[i]))
            FAIL(WGML_ERR_SHAPE, "%s: batch dims of a %s and b %s do not broadcast (dim %d)", op,
                 wg_desc_str(a, NULL, x, sizeof x), wg_desc_str(b, NULL, y, sizeof y), i);
    }
    out->shape[nd - 2] = a->shape[a->ndim - 2];
    out->shape[nd - 1] = b->shape[b->ndim - 1];
    return ck_tail(op, p, in, nin, out);
}

wgml_status wg_ck_linear(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    const char *op = "wgml_linear";
    const wg_desc *x = in[0], *w = in[1];
    char s1[96], s2[96];
    if (x->dtype != WGML_F32 && x->dtype != WGML_F16)
        FAIL(WGML_ERR_DTYPE, "%s: x is %s, must be f32 or f16", op, wgml_dtype_name(x->dtype));
    if (!wg_dtype_is_float(w->dtype) && !is_wquant(w->dtype))
        FAIL(WGML_ERR_DTYPE, "%s: w is %s, must be f32, f16, bf16 or a GGUF block type (q4_0, q4_1, q5_0, q5_1, "
             "q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, mxfp4)", op, wgml_dtype_name(w->dtype));
    if (x->ndim < 1 || w->ndim != 2 || x->shape[x->ndim - 1] != w->shape[1])
        FAIL(WGML_ERR_SHAPE, "%s: x %s and w %s: w must be [n, k] and x [..., k]", op,
             wg_desc_str(x, NULL, s1, sizeof s1), wg_desc_str(w, NULL, s2, sizeof s2));
    if (is_wquant(w->dtype)) {
        uint32_t qk = wg_dtype(w->dtype)->block_elems;
        if (wg_is_sym(w->shape[1]))
            FAIL(WGML_ERR_SHAPE, "%s: k is a symbolic dim: a quantised w needs a fixed k", op);
        if (w->shape[1] % qk)
            FAIL(WGML_ERR_SHAPE, "%s: k = %lld is not a multiple of %s's block of %u", op, (long long)w->shape[1],
                 wgml_dtype_name(w->dtype), qk);
    }
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof out->shape);
    out->shape[x->ndim - 1] = w->shape[0];
    return ck_tail(op, p, in, nin, out);
}

/* ------------------------------------------------------------ scratch */

static uint64_t plain_bytes(const wg_desc *d) { return wg_dtype_is_float(d->dtype) ? wg_desc_bytes(d) : 0; }

/* (batches, m, n, k) of a product with this output */
static void mnk(const wg_desc *out, int64_t k, int64_t *batches, int64_t *m, int64_t *n)
{
    *batches = 1;
    for (int i = 0; i < out->ndim - 2; i++)
        *batches *= wg_is_sym(out->shape[i]) ? 0 : out->shape[i];
    *m = out->ndim >= 2 && !wg_is_sym(out->shape[out->ndim - 2]) ? out->shape[out->ndim - 2] : 1;
    *n = wg_is_sym(out->shape[out->ndim - 1]) ? 0 : out->shape[out->ndim - 1];
    (void)k;
}

uint64_t wg_sc_matmul(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)p, (void)nin;
    int64_t bt, m, n, k = in[0]->shape[in[0]->ndim - 1];
    mnk(out, k, &bt, &m, &n);
    return wg_gemm_scratch_bytes(plain_bytes(in[0]), plain_bytes(in[1]), bt, m, n, wg_is_sym(k) ? 0 : k);
}

/* Quantised weights times more than QDEQ_ROWS activation rows: the weight
 * is dequantised once into f32 scratch and the dense GEMM runs on it, the
 * weights exactly the values the in-tile decoder would give.  On the H100
 * the in-tile decoder ran q4_K at 10.0 TFLOP/s and q4_0 at 16.5 against
 * 29.3 for f32 (512 x 14336 x 4096): its per-element decode in the tile
 * loads starves the FMA pipes.  Dequantising 14336 x 4096 is ~270 MB of
 * traffic (~0.1 ms at copy bandwidth) against ~2 ms of GEMM at 512 rows;
 * from ~32 rows the pair wins.  WGML_FORCE=qgemm=fused|dequant forces
 * either path. */
#define QDEQ_ROWS 32

/* 1: dequantise, 0: decode in tiles, -1: a bad WGML_FORCE value (the
 * message is set only when report: the scratch declaration stays pure). */
static int qdeq_path(int64_t rows, bool rows_known, bool report)
{
    int f = wg_forced_path("wgml_linear", "qgemm", "fused", "dequant", report);
    if (f != WG_NOT_FORCED)
        return f;
    return !rows_known || rows >= QDEQ_ROWS;
}

uint64_t wg_sc_linear(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)p, (void)nin;
    int64_t bt, m, n, k = in[0]->shape[in[0]->ndim - 1];
    mnk(out, k, &bt, &m, &n);
    uint64_t deq = 0;
    const wg_desc *w = in[1];
    if (is_wquant(w->dtype) && !wg_is_sym(w->shape[0]) && !wg_is_sym(w->shape[1])) {
        int64_t rows = 1;
        bool known = true;
        for (int i = 0; i < in[0]->ndim - 1; i++) {
            known = known && !wg_is_sym(in[0]->shape[i]);
            rows *= wg_is_sym(in[0]->shape[i]) ? 1 : in[0]->shape[i];
        }
        /* an upper bound: a symbolic row count may bind above the threshold,
         * and a forced dequant is declared even where the mat-vec path
         * will take the rows */
        if (qdeq_path(rows, known, false) != 0)
            deq = wg_align_up((uint64_t)w->shape[0] * (uint64_t)w->shape[1] * 4u, 256);
    }
    /* the integer mat-vec path's quantised x (an upper bound: the table may
     * take the float path on this device) */
    uint64_t q8 = 0;
    if (!wg_is_sym(w->shape[1])) {
        int64_t rows = 1;
        bool sym = false;
        for (int i = 0; i < in[0]->ndim - 1; i++) {
            sym = sym || wg_is_sym(in[0]->shape[i]);
            rows *= wg_is_sym(in[0]->shape[i]) ? 1 : in[0]->shape[i];
        }
        /* a symbolic row count may bind to any count the path takes */
        q8 = wg_matvec_q8_scratch(w->dtype, sym ? 2 : rows, w->shape[1]);
    }
    return deq + q8 + wg_gemm_scratch_bytes(plain_bytes(in[0]), plain_bytes(in[1]), bt, m, n, wg_is_sym(k) ? 0 : k);
}

/* ------------------------------------------------------------ encode */

static void desc_of(const wgml_tensor *t, wg_desc *d)
{
    d->dtype = t->dtype;
    d->ndim = t->ndim;
    memcpy(d->shape, t->shape, sizeof d->shape);
}

/* The concrete operands: the row's check on their descriptions, then
 * layout, contexts and aliasing. */
static wgml_status prepare(const char *op, bool linear, const wg_op_params *p, const wgml_tensor *const *in, int nin,
                           wgml_tensor *out, const wgml_tensor **c)
{
    wgml_status st = WGML_OK;
    const char *names[4] = {linear ? "x" : "a", linear ? "w" : "b", "bias", "c"};
    for (int i = 0; i < 2 && st == WGML_OK; i++)
        st = wg_check_tensor(op, names[i], in[i]);
    for (int i = 2; i < nin && st == WGML_OK; i++)
        if (in[i])
            st = wg_check_tensor(op, names[i], in[i]);
    if (st == WGML_OK)
        st = wg_check_tensor(op, "out", out);
    if (st != WGML_OK)
        return st;
    *c = nin > 3 && p->mm.beta != 0.0f ? in[3] : NULL;
    wg_desc d[4], o;
    const wg_desc *dp[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < nin && i < 4; i++)
        if (in[i] && (i != 3 || *c)) {
            desc_of(in[i], &d[i]);
            dp[i] = &d[i];
        }
    st = linear ? wg_ck_linear(p, dp, 4, &o) : wg_ck_matmul(p, dp, 4, &o);
    if (st != WGML_OK)
        return st;
    if ((st = wg_check_out(op, out, (int)o.dtype, o.ndim, o.shape)) != WGML_OK)
        return st;
    for (int i = 0; i < 4; i++)
        if (in[i] && !wg_same_ctx(in[i], out))
            FAIL(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", op);
    /* c is read by the thread that writes the same element: out may be c
     * itself (the eager call), no other overlap */
    if ((st = wg_check_writes(op, "out", out, false, names[0], in[0], names[1], in[1], "bias", nin > 2 ? in[2] : NULL,
                              WG_END)) != WGML_OK ||
        (st = wg_check_writes(op, "out", out, true, "c", *c, WG_END)) != WGML_OK)
        return st;
    if (linear && is_wquant(in[1]->dtype) && (in[1]->strides[1] != 1 || in[1]->strides[0] % (int64_t)wg_dtype(in[1]->dtype)->block_elems))
        FAIL(WGML_ERR_INVALID_ARG, "%s: a quantised w must have contiguous rows of whole blocks", op);
    return WGML_OK;
}

wgml_status wg_en_matmul(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                         wgml_tensor *out2)
{
    (void)out2;
    const wgml_tensor *c = NULL;
    wgml_status st = prepare("wgml_matmul", false, p, in, nin, out, &c);
    if (st != WGML_OK)
        return st;
    wg_gemm_args g = {"wgml_matmul", in[0], in[1], nin > 2 ? in[2] : NULL, c, out, p->mm, false};
    return wg_gemm_run(&g);
}

wgml_status wg_en_linear(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out,
                         wgml_tensor *out2)
{
    (void)out2;
    const wgml_tensor *c = NULL, *x = in[0], *w = in[1], *bias = nin > 2 ? in[2] : NULL;
    wgml_status st = prepare("wgml_linear", true, p, in, nin, out, &c);
    if (st != WGML_OK)
        return st;
    int64_t rows = 1;
    for (int i = 0; i < x->ndim - 1; i++)
        rows *= x->shape[i];
    if (rows <= WG_MATVEC_MAX_ROWS) {
        st = wg_matvec_xqt(x, w, bias, c, &p->mm, wg_xin_of(p), out);
        if (st != WGML_ERR_UNSUPPORTED)
            return st;
    }
    if (wg_xin_of(p).norm && rows == 1)
        return wg_xin_refused("wgml_linear");
    /* x [k] is a row of one */
    wgml_tensor xv = *x, bv = *w;
    if (x->ndim == 1) {
        xv.ndim = 2;
        xv.shape[1] = x->shape[0], xv.strides[1] = x->strides[0];
        xv.shape[0] = 1, xv.strides[0] = x->shape[0];
    }
    wgml_tensor ov = *out;
    if (out->ndim == 1) {
        ov.ndim = 2;
        ov.shape[1] = out->shape[0], ov.strides[1] = out->strides[0];
        ov.shape[0] = 1, ov.strides[0] = out->shape[0];
    }
    bool q = is_wquant(w->dtype);
    wgml_tensor *wd = NULL; /* the dequantised weight (scratch) */
    if (q && wgml_tensor_is_contiguous(w) && w->shape[0] * w->shape[1] > 0) {
        int path = qdeq_path(rows, true, true);
        if (path < 0)
            return WGML_ERR_INVALID_ARG;
        if (path == 1) {
            /* every element is written before the GEMM reads it: no zeroing.
             * A product in f16 (WGML_PREC_F16) rounds w to f16 in its tiles
             * anyway: dequantised to f16, half the bytes written and read. */
            int64_t batches = 1;
            for (int i = 0; i < ov.ndim - 2; i++)
                batches *= ov.shape[i];
            bool h = wg_gemm_takes_h16(out->ctx, batches, ov.shape[ov.ndim - 2], w->shape[0], w->shape[1],
                                       p->mm.precision);
            if ((st = wg_scratch_tensor_raw(out->ctx, h ? WGML_F16 : WGML_F32, 2, w->shape, &wd)) != WGML_OK ||
                (st = wg_dequantize_impl(w, wd)) != WGML_OK) {
                wgml_tensor_free(wd);
                return st;
            }
            bv = *wd;
            q = false;
        }
    }
    if (!q) { /* a dense w [n, k] is b = w^T, read in place */
        wgml_tensor src = bv;
        bv.shape[0] = src.shape[1], bv.shape[1] = src.shape[0];
        bv.strides[0] = src.strides[1], bv.strides[1] = src.strides[0];
    }
    if (c && c == out)
        c = &ov;
    wg_gemm_args g = {"wgml_linear", &xv, &bv, bias, c, &ov, p->mm, q};
    st = wg_gemm_run(&g);
    wgml_tensor_free(wd);
    return st;
}

/* ------------------------------------------------------------ reference */

static double act_ref(wgml_activation a, double v)
{
    switch (a) {
    case WGML_ACT_RELU: return v > 0 ? v : (isnan(v) ? v : 0.0);
    case WGML_ACT_GELU: return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    case WGML_ACT_SILU: return v / (1.0 + exp(-v));
    default: return v;
    }
}

void wg_gemm_ref(int64_t batches, int64_t m, int64_t n, int64_t k, const double *a, const double *b,
                 const double *c, const double *bias, const wgml_matmul_params *p, double *out)
{
    for (int64_t z = 0; z < batches; z++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t q = 0; q < k; q++)
                    s += a[(z * m + i) * k + q] * b[(z * k + q) * n + j];
                int64_t o = (z * m + i) * n + j;
                double v = p->alpha * s;
                if (c && p->beta != 0)
                    v += p->beta * c[o];
                if (bias)
                    v += bias[o];
                out[o] = act_ref(p->act, v);
            }
}

/* ------------------------------------------------------------ registry */

#define WQ (WG_DT_BIT(WGML_Q4_0) | WG_DT_BIT(WGML_Q4_1) | WG_DT_BIT(WGML_Q5_0) | WG_DT_BIT(WGML_Q5_1) | \
            WG_DT_BIT(WGML_Q8_0) | WG_DT_BIT(WGML_Q2_K) | WG_DT_BIT(WGML_Q3_K) | WG_DT_BIT(WGML_Q4_K) |     \
            WG_DT_BIT(WGML_Q5_K) | WG_DT_BIT(WGML_Q6_K) | WG_DT_BIT(WGML_IQ4_NL) | WG_DT_BIT(WGML_MXFP4))

static const wgml_op_info matmul_rows[] = {
    {"MATMUL", "matmul", WG_DT_FLOATS},
    /* the main input of linear is its weight: dense floats and GGUF blocks */
    {"LINEAR", "matmul", WG_DT_FLOATS | WQ},
};

wg_op_table wg_matmul_ops(void) { return (wg_op_table){matmul_rows, sizeof matmul_rows / sizeof *matmul_rows}; }
