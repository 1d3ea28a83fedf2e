/*
 * Scratch declarations of cumsum, argsort and top_k (optable.h's
 * `scratch`; optable.c's first comment lists every declaring row), and
 * wg_desc_bytes, which declarations and the planner size with (moved here
 * to keep optable.c under 800 lines).  Each bound follows the requests of
 * reduce_sort.c: cumsum_run's block totals (blocks of >= 4096 for rows
 * over 8192, at most 1024 workgroups of one row), cumsum_long's piece
 * totals, sort_rows' pair array and sort_long's copy, pairs and ranks.
 * Kept apart so reduce_sort.c stays under 800 lines.
 */
#include "reduce.h"
#include "optable.h"

uint64_t wg_desc_bytes(const wg_desc *d)
{
    uint64_t n = 1;
    for (int i = 0; i < d->ndim; i++)
        n *= d->shape[i] < 0 ? 0 : (uint64_t)d->shape[i];
    return n / wg_dtype(d->dtype)->block_elems * wg_dtype(d->dtype)->block_bytes;
}

/* Which path a call takes depends on layouts and the binding size, which
 * a description does not carry, so each bound is the most over the paths;
 * a split into halves (wg_split_rows) releases each half's scratch, so
 * only one part counts.  Requests round up to 256 like wg_scratch_tensor. */
static uint64_t a256(uint64_t b) { return wg_align_up(b, 256); }

static void rows_len(const wg_desc *x, uint64_t *rows, uint64_t *len)
{
    uint64_t n = 1;
    for (int i = 0; i < x->ndim; i++)
        n *= x->shape[i] < 0 ? 0 : (uint64_t)x->shape[i];
    *len = x->ndim ? (x->shape[x->ndim - 1] < 0 ? 0 : (uint64_t)x->shape[x->ndim - 1]) : 1;
    *rows = *len ? n / *len : 0;
}

/* cumsum_run's totals on r rows of len fitting one binding: rows * nblk
 * <= min(r * ceil(len / 4096), 2046) words each for tot and pre. */
static uint64_t cumsum_blocks(uint64_t r, uint64_t len)
{
    if (len <= 8192)
        return 0;
    uint64_t w = r * ((len + 4095) / 4096);
    return 2 * a256((w < 2046 ? w : 2046) * 4);
}

/* cumsum_run on a contiguous row of m 4-byte words (the totals' scan):
 * blocks, or pieces of >= 960 words (the smallest window, 4096 - 256
 * bytes) whose totals are scanned again. */
static uint64_t cumsum_words(uint64_t m)
{
    uint64_t b = cumsum_blocks(1, m), l = 0;
    if (m > 960) {
        uint64_t k = (m + 959) / 960;
        l = 2 * a256(k * 4) + cumsum_words(k);
    }
    return b > l ? b : l;
}

/* Blocks of rows that fit, or one row in pieces (cumsum_long: up to one
 * piece per element of a strided row, then the pieces' totals scanned). */
uint64_t wg_sc_cumsum(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)nin, (void)out;
    const wg_desc *x = in[0];
    int a = p->axis < 0 ? p->axis + x->ndim : p->axis;
    if (a < 0 || a >= x->ndim)
        return 0;
    uint64_t n = 1, len = x->shape[a] < 0 ? 0 : (uint64_t)x->shape[a];
    for (int i = 0; i < x->ndim; i++)
        n *= x->shape[i] < 0 ? 0 : (uint64_t)x->shape[i];
    if (n == 0)
        return 0;
    uint64_t b = cumsum_blocks(n / len, len), l = 2 * a256(len * 4) + cumsum_words(len);
    return b > l ? b : l;
}

/* sort_rows: pairs for rows * n (n = pow2ceil(len) > BLOCK); sort_long on
 * one row: a contiguous copy, pairs and ranks of K * C <= max(64, n). */
static uint64_t sort_scratch(const wg_desc *x)
{
    uint64_t rows, len, n = 1;
    rows_len(x, &rows, &len);
    if (rows == 0 || len == 0)
        return 0;
    while (n < len)
        n <<= 1;
    uint64_t kc = n > 64 ? n : 64;
    uint64_t lng = a256(len * wg_dtype(x->dtype)->block_bytes) + a256(kc * 8) + a256(kc * 4);
    uint64_t fit = n > WG_SORT_BLOCK ? rows * n * 8 : 0;
    return fit > lng ? fit : lng;
}

uint64_t wg_sc_argsort(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)p, (void)nin, (void)out;
    return in[0]->ndim ? sort_scratch(in[0]) : 0;
}

/* top_k of values alone sorts into an index scratch shaped like out. */
uint64_t wg_sc_top_k(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)nin;
    if (!in[0]->ndim || p->k == 0)
        return 0;
    uint64_t rows, len;
    rows_len(in[0], &rows, &len);
    return (p->flag ? 0 : a256(rows * (uint64_t)p->k * 4)) + sort_scratch(in[0]);
}


/* ------------------------------------------------------------ rows, rope */

static uint64_t elems(const wg_desc *d)
{
    uint64_t n = 1;
    for (int i = 0; i < d->ndim; i++)
        n *= d->shape[i] < 0 ? 0 : (uint64_t)d->shape[i];
    return n;
}

/* Bytes of n elements of a float dtype (1 element a block). */
static uint64_t fbytes(uint64_t n, wgml_dtype t) { return n * wg_dtype(t)->block_bytes; }

/* rows.c rows_chunked, on n elements in rows of len: two f32 partials
 * [rows x K] once a row does not fit one window.  K <= len: a strided row
 * (a softmax over a non-last axis, a view) may fit one element a window
 * (wg_win_most returns 1), K = ceil(len / 1) = len; so rows x K <= n.  A
 * row of one element that does not fit fits no piece either (most 0: no
 * scratch, the launcher names the operand), so len < 2 takes none. */
static uint64_t row_partials(uint64_t n, uint64_t len) { return len >= 2 ? 2 * a256(n * 4) : 0; }

/* softmax: the chunked partials over its axis (a scalar is a row of one). */
uint64_t wg_sc_softmax(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)nin, (void)out;
    const wg_desc *x = in[0];
    int a = p->softmax.axis < 0 ? p->softmax.axis + x->ndim : p->softmax.axis;
    if (x->ndim == 0 || a < 0 || a >= x->ndim)
        return 0;
    return row_partials(elems(x), x->shape[a] < 0 ? 0 : (uint64_t)x->shape[a]);
}

/* norm (norm.c): LAYER/RMS/L2 read every layout in place, so only the
 * chunked partials of rows along the last dim; BATCH runs a long row in
 * pieces (none).  GROUP holds at once: contiguous stand-ins at x's shape
 * for x, residual, out and sum_out (group_view: any of them may be
 * strided or broadcast), copies of a strided [C] weight and bias once the
 * group's row (C / groups x spatial) runs chunked, and that row's
 * partials.  sum_out is no input here (an eager call's params carry it; a
 * graph fuses one into LAYER/RMS/L2 only): f32, the widest float. */
uint64_t wg_sc_norm(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    const wg_desc *x = in[0];
    uint64_t n = elems(x);
    if (n == 0 || p->norm.kind == WGML_BATCH_NORM)
        return 0;
    if (p->norm.kind != WGML_GROUP_NORM)
        return row_partials(n, x->ndim ? (uint64_t)x->shape[x->ndim - 1] : 1);
    if (x->ndim < 2 || p->norm.groups < 1 || x->shape[0] < 1)
        return 0;
    uint64_t c = (uint64_t)x->shape[1], b = a256(fbytes(n, x->dtype)) + a256(fbytes(n, out->dtype));
    if (nin > 3 && in[3])
        b += a256(fbytes(n, in[3]->dtype));
    if (p->norm.sum_out)
        b += a256(n * 4);
    for (int i = 1; i < 3 && i < nin; i++)
        if (in[i])
            b += a256(fbytes(c, in[i]->dtype));
    return b + row_partials(n, n / (uint64_t)x->shape[0] / (uint64_t)p->norm.groups);
}

/* rope (rope.c rope_long): NEOX and M-RoPE rows that do not fit one window
 * gather each piece's two halves into scratch [.., 2n] of x's dtype and
 * one of out's, n <= n_dims / 2 pairs; pieces release theirs before the
 * next (wg_scratch_release), so the largest piece bounds it: rows x
 * 2 (n_dims / 2) elements each.  A row may be too wide at any length (a
 * strided view), so every NEOX / M-RoPE row counts. */
uint64_t wg_sc_rope(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)nin;
    const wg_desc *x = in[0];
    uint64_t n = elems(x), d = x->ndim ? (uint64_t)x->shape[x->ndim - 1] : 0;
    if (p->rope.mode == WGML_ROPE_NORMAL || n == 0 || d == 0 || p->rope.n_dims < 2)
        return 0;
    uint64_t m = n / d * (uint64_t)(p->rope.n_dims / 2 * 2);
    return a256(fbytes(m, x->dtype)) + a256(fbytes(m, out->dtype));
}
