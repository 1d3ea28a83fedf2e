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

