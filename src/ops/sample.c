/*
 * Sampling token ids from logits [rows, vocab] (f32, f16 or bf16; any
 * strides) into out [rows] i32: one workgroup per row (sample.wgsl), or
 * for few rows of a large vocabulary one per chunk of a row
 * (sample_chunked.wgsl, sample_chunked below).
 *
 * Per row, in this order:
 *   1. Greedy (temperature 0, top_k 1, or a temperature so small that
 *      1/T overflows f32): the index of the largest logit, first occurrence.
 *      Also taken when the largest logit is not finite (+inf, or every
 *      logit -inf / NaN).
 *   2. Weights w = exp((logit - max) / T); NaN logits are never kept.
 *   3. top_k > 0: keep logits >= the k-th largest logit.  Ties at that
 *      value are all kept, so more than k tokens survive only when several
 *      share exactly the k-th value.
 *   4. top_p < 1: among the survivors, keep the tokens whose logit is >=
 *      the largest value v such that the mass of {logit >= v} is at least
 *      top_p times the survivors' mass: the shortest run of largest
 *      logits reaching top_p, with ties at the boundary value all kept.
 *      top_p 0 keeps only the largest value.
 *   5. min_p > 0: also require logit >= max + T ln(min_p) (that is
 *      p >= min_p * p_max), the threshold rounded to f32 once.
 *   6. Draw: u in [0, 1) from 24 bits of the counter-based stream
 *      wg_sample_bits(seed, row, 0); the first token in index order whose
 *      running mass exceeds u times the kept mass.  seed is params.seed,
 *      plus (wgml_sample_seeded) the seed tensor's first element, read on
 *      the GPU: wg_sample_seed_add, so an element of 0 draws as no tensor.
 *
 * Thresholds are found by binary search over an order-preserving u32 key
 * of the logits (~32 passes per active filter), so nothing is sorted and
 * any vocabulary size works.  top_k and min_p decisions are exact; top_p
 * and the draw compare f32 sums (f64 in the reference), so a row whose
 * boundary lies within the sums' rounding may differ from the reference.
 * Rows longer than one binding window, and few rows of a large vocabulary,
 * run the same steps per chunk (sample_chunked).
 */
#include "rope.h"
#include "optable.h"
#include "mm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { F_GREEDY = 1, F_TOPP = 2, F_MINP = 4 };

typedef struct sample_k {
    unsigned flags;
    float inv_t, top_p, minp_c;
} sample_k;

static wgml_status sample_consts(const wgml_sample_params *p, sample_k *k)
{
    if (!(p->temperature >= 0) || isinf(p->temperature))
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_sample: temperature %g must be finite and >= 0", p->temperature);
    if (p->top_k < 0)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_sample: top_k %d must be >= 0", p->top_k);
    if (!(p->top_p >= 0 && p->top_p <= 1))
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_sample: top_p %g must be in [0, 1]", p->top_p);
    if (!(p->min_p >= 0 && p->min_p <= 1))
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_sample: min_p %g must be in [0, 1]", p->min_p);
    memset(k, 0, sizeof *k);
    float inv = p->temperature > 0 ? (float)(1.0 / p->temperature) : INFINITY;
    if (p->temperature == 0 || p->top_k == 1 || isinf(inv))
        k->flags |= F_GREEDY;
    k->inv_t = isinf(inv) ? 0 : inv;
    k->top_p = p->top_p;
    if (p->top_p < 1)
        k->flags |= F_TOPP;
    if (p->min_p > 0) {
        k->flags |= F_MINP;
        k->minp_c = (float)((double)p->temperature * log((double)p->min_p));
    }
    return WGML_OK;
}

/* ------------------------------------------------------------ RNG */

static uint32_t mix32(uint32_t z)
{
    z ^= z >> 16;
    z *= 0x21f0aaadu;
    z ^= z >> 15;
    z *= 0x735a2d97u;
    z ^= z >> 15;
    return z;
}

/* u32 zero-extended, i32 sign-extended, added mod 2^64: a decoder that
 * passes its step t as the tensor draws what params.seed + t would, and 0
 * leaves the stream as it was (sample.wgsl seed_words is the same). */
uint64_t wg_sample_seed_add(uint64_t seed, uint32_t bits, bool is_i32)
{
    return seed + (is_i32 ? (uint64_t)(int64_t)(int32_t)bits : (uint64_t)bits);
}

uint32_t wg_sample_bits(uint64_t seed, uint64_t row, uint32_t counter)
{
    uint32_t h = mix32((uint32_t)seed + 0x9e3779b9u);
    h = mix32(h ^ (uint32_t)(seed >> 32));
    h = mix32(h ^ (uint32_t)row);
    return mix32(h ^ mix32(counter + 0x6a09e667u));
}

/* ------------------------------------------------------------ dispatch */

typedef struct sample_params {
    uint32_t a[4], b[4], c[4];
    float f[4];
    uint32_t e[4];
    uint32_t g[4]; /* the seed's element in its binding, 1 for i32 */
    uint32_t h[4]; /* chunked: chunk length, list words a chunk, chunks a launch */
} sample_params;

/* The seed tensor's first element as one 4-byte binding (sp->g). */
static wg_binding seed_binding(const wgml_tensor *seed, sample_params *sp)
{
    uint64_t rem;
    wg_binding b = wg_bind_from(seed->st->buf, wg_view4_of(seed).offset * 4, 4, &rem);
    sp->g[0] = (uint32_t)(rem / 4);
    sp->g[1] = seed->dtype == WGML_I32;
    return b;
}

/* Modes of the read bindings (logits, seed): read_write when a written
 * binding (out, scratch) shares the buffer, and then for both when they
 * share one, since a buffer bound read-only and writable in one dispatch
 * is a WebGPU usage conflict. */
static void read_modes(const wgml_buffer *lb, const wgml_buffer *sb, const wgml_buffer *const *w, int nw,
                       bool *lrw, bool *srw)
{
    *lrw = *srw = false;
    for (int i = 0; i < nw; i++) {
        *lrw = *lrw || (w[i] && w[i] == lb);
        *srw = *srw || (sb && w[i] && w[i] == sb);
    }
    if (sb == lb)
        *lrw = *srw = *lrw || *srw;
}

/* Defines and the read-only mask: logits binding 1 (bit 0), the seed the
 * last binding (bit nb - 1) when there is one.  kind: "" (the one-pass
 * kernel), "CHUNKED" or "CHUNKED;STEP": sample_step reads no logit, so it
 * binds them as raw words whatever their dtype and one compiled step
 * serves f32, f16 and bf16 logits, with ShaderF16 or without (lavapipe
 * took ~2 s to compile one). */
static unsigned kernel_defs(char *defs, size_t n, const wgml_tensor *logits, const wgml_tensor *seed, bool lrw,
                            bool srw, int wg, const char *kind, int nb)
{
    bool step = strstr(kind, "STEP") != NULL;
    snprintf(defs, n, "L_DT=%s;L_MODE=%s;WG=%d%s%s%s%s", step ? "u32" : wg_dtype(logits->dtype)->wgsl,
             lrw ? "rw" : "r", wg, *kind ? ";" : "", kind, seed ? ";SEED_IN;S_MODE=" : "",
             seed ? (srw ? "rw" : "r") : "");
    return (lrw ? 0u : 1u) | (seed && !srw ? 1u << (nb - 1) : 0u);
}

/* The parameters every launch of one row shares. */
static void row_params(sample_params *sp, const wgml_sample_params *p, const sample_k *k, int64_t vocab)
{
    memset(sp, 0, sizeof *sp);
    sp->a[0] = 1;
    sp->a[1] = (uint32_t)vocab;
    sp->c[0] = (uint32_t)p->top_k;
    sp->c[1] = k->flags;
    sp->c[2] = (uint32_t)p->seed;
    sp->c[3] = (uint32_t)(p->seed >> 32);
    sp->f[0] = k->inv_t;
    sp->f[1] = k->top_p;
    sp->f[2] = k->minp_c;
    sp->e[0] = 128;
}

/* The chunked kernels (sample_chunked.wgsl) serve two paths:
 *
 *   long rows: a row longer than one binding window runs one row at a
 *     time in K chunks that fit, a sample_part launch per chunk (each
 *     binding its own window);
 *   split (GPUs): up to SAMPLE_SPLIT_ROWS rows of at least
 *     SAMPLE_SPLIT_VOCAB logits whose windows fit one binding run every
 *     chunk of every row in one launch of K x rows workgroups.  One workgroup walking a
 *     128,256-logit row took ~210 us on an H100 for the argmax alone (its
 *     256 threads wait on ~500 loads each, one after another), and every
 *     probe of a threshold search is another such pass.
 *
 * Each reduction of the one-pass kernel is a sample_part launch (partials
 * in pt) and a sample_step launch that merges them and moves the search,
 * whose state (sv) stays on the device: the largest logit, then up to 32
 * probes per threshold search (the host records them all; probes after
 * the search ends exit at once), the chunks' kept masses, the chunk
 * holding the draw and its walk.  On the split path with 1 <= top_k <=
 * SAMPLE_KMAX, stage 0 also lists each chunk's candidates (its k-th
 * largest key kc, that key's count, the keys above it) and the step
 * finds the top-k and top-p thresholds from the lists alone: greedy is 2
 * launches, top-k with or without top-p / min-p 5 (where the probes took
 * 5 + 2 x 65).  Results equal the one-pass kernel's but for f32 sums
 * taken in another order (top-p's masses, the draw's running mass).
 *
 * Scratch, reused by every row of a long-rows call: the search state (16
 * words a row), the chunks' partials (4 words a chunk) and, with
 * candidates, each chunk's list (top_k + 3 words). */
#define SAMPLE_KMAX 256        /* sample_chunked.wgsl KMAX */
#define SAMPLE_SPLIT_ROWS 8
#define SAMPLE_SPLIT_VOCAB 8192

/* Split path chunks: 2048 logits (8 a thread: the candidates' radix
 * passes read them from cache; 63 chunks for 128,256, so the step's lists
 * stay ~10 keys a thread at top_k 40), more when a row would need more
 * than 1024 (the step's merges then do <= 4 chunks a thread). */
static uint64_t split_chunk(uint64_t vocab)
{
    uint64_t c = (vocab + 1023) / 1024;
    return c > 2048 ? c : 2048;
}

static bool split_cands(const wgml_sample_params *p, const sample_k *k)
{
    return !(k->flags & F_GREEDY) && p->top_k >= 1 && p->top_k <= SAMPLE_KMAX;
}

/* Bytes of the split path's scratch (each request rounded to 256). */
static uint64_t split_scratch(const wgml_sample_params *p, const sample_k *k, uint64_t rows, uint64_t vocab)
{
    uint64_t C = split_chunk(vocab), K = (vocab + C - 1) / C;
    uint64_t ls = split_cands(p, k) ? (uint64_t)p->top_k + 3 : 0;
    return wg_align_up(rows * 64, 256) + wg_align_up(rows * K * (4 + ls) * 4, 256);
}

/* WGML_FORCE=sample=split|single: the split path for any vocabulary on
 * any device (up to SAMPLE_SPLIT_ROWS rows), or the one-pass kernel for
 * any row that fits a window (timing old against new; tests run the split
 * path on lavapipe); 0 on a bad name, after failing. */
static int forced_path(bool *split, bool *single)
{
    char buf[16];
    const char *f = wg_forced_variant("sample", buf, sizeof buf);
    *split = f && !strcmp(f, "split");
    *single = f && !strcmp(f, "single");
    if (f && !*split && !*single) {
        wg_fail(WGML_ERR_INVALID_ARG, "WGML_FORCE: sample=%s is not a path; sample paths: split, single", f);
        return 0;
    }
    return 1;
}

static wgml_status sample_chunked(const wgml_tensor *logits, const wgml_tensor *seed, const wgml_sample_params *p,
                                  const sample_k *k, wgml_tensor *out, bool split)
{
    wgml_ctx *ctx = logits->ctx;
    int64_t rows = logits->shape[0], vocab = logits->shape[1];
    uint64_t esz = wg_dtype(logits->dtype)->block_bytes, cap = wg_window_cap(ctx);
    uint64_t rs = (uint64_t)logits->strides[0], cs = (uint64_t)logits->strides[1];
    uint64_t C, K, R = split ? (uint64_t)rows : 1; /* R: rows of one launch */
    if (split) {
        C = split_chunk((uint64_t)vocab);
    } else {
        if (esz > cap)
            return wg_fail_window(ctx, esz, "wgml_sample: one logit");
        uint64_t most = (cap / esz - 1) / cs + 1;
        K = ((uint64_t)vocab + most - 1) / most;
        C = ((uint64_t)vocab + K - 1) / K;
    }
    K = ((uint64_t)vocab + C - 1) / C;
    if (!split && K * 16 > cap)
        return wg_fail_window(ctx, K * 16, "wgml_sample: the partials of %llu chunks of a row of %lld logits",
                              (unsigned long long)K, (long long)vocab);
    bool cands = split && split_cands(p, k);
    uint64_t ls = cands ? (uint64_t)p->top_k + 3 : 0;
    /* Not zeroed (a graph's arena would record a fill): part 0 writes the
     * partials and lists step 0 reads, step 0 the state later stages read,
     * and every later stage writes what its step reads. */
    wgml_tensor *sv = NULL, *pt = NULL;
    const int64_t nsv[1] = {(int64_t)R * 16}, npt[1] = {(int64_t)(R * K * (4 + ls))};
    wgml_status st = wg_scratch_tensor_raw(ctx, WGML_U32, 1, nsv, &sv);
    if (st == WGML_OK)
        st = wg_scratch_tensor_raw(ctx, WGML_U32, 1, npt, &pt);
    wg_binding bsv = {0}, bpt = {0};
    uint64_t rem;
    if (st == WGML_OK) { /* 256-aligned starts: the kernels index both from 0 */
        bsv = wg_bind_from(sv->st->buf, wg_view4_of(sv).offset * 4, R * 64, &rem);
        bpt = wg_bind_from(pt->st->buf, wg_view4_of(pt).offset * 4, R * K * (4 + ls) * 4, &rem);
    }
    /* logits and seed bind read_write when a written binding shares their
     * buffer (out, or the scratch in a graph's arena) */
    const wgml_buffer *w[3] = {out->st->buf, sv ? sv->st->buf : NULL, pt ? pt->st->buf : NULL};
    bool lrw, srw;
    read_modes(logits->st->buf, seed ? seed->st->buf : NULL, w, 3, &lrw, &srw);
    char defs[96], sdefs[96];
    int nb = seed ? 5 : 4; /* logits, out, sv, pt (+ seed) */
    unsigned ro = kernel_defs(defs, sizeof defs, logits, seed, lrw, srw, 256, "CHUNKED", nb);
    kernel_defs(sdefs, sizeof sdefs, logits, seed, lrw, srw, 256, "CHUNKED;STEP", nb);
    wg_kernel_ref rpart = {"sample.wgsl", "sample_part", defs, nb, ro};
    wg_kernel_ref rstep = {"sample.wgsl", "sample_step", sdefs, nb, ro};
    wgml_kernel *kpart = NULL, *kstep = NULL;
    if (st == WGML_OK)
        st = wg_kernel_get(ctx, &rpart, &kpart);
    if (st == WGML_OK)
        st = wg_kernel_get(ctx, &rstep, &kstep);
    /* Probes: 32 at most per search (each halves a u32 key range), one
     * more for top-p's total; none when the candidates give both. */
    int rounds = (k->flags & F_GREEDY) || cands ? 0 : (p->top_k > 0 ? 32 : 0) + ((k->flags & F_TOPP) ? 33 : 0);
    uint64_t l0 = wg_view4_of(logits).offset, o0 = wg_view4_of(out).offset, ost = (uint64_t)out->strides[0];
    uint64_t row_span = ((uint64_t)vocab - 1) * cs + 1;
    for (uint64_t r = 0; r < (uint64_t)rows && st == WGML_OK; r += R) {
        sample_params sp;
        row_params(&sp, p, k, vocab);
        sp.a[0] = (uint32_t)R;
        sp.a[3] = (uint32_t)rs;
        sp.b[0] = (uint32_t)cs;
        sp.b[2] = (uint32_t)ost;
        sp.b[3] = (uint32_t)r;
        sp.e[3] = (uint32_t)K;
        sp.h[0] = (uint32_t)C;
        sp.h[1] = (uint32_t)ls;
        sp.h[2] = split ? (uint32_t)K : 1;
        wg_binding b[5];
        if (seed) /* only sample_step's draw reads it */
            b[4] = seed_binding(seed, &sp);
        b[1] = wg_bind_from(out->st->buf, (o0 + r * ost) * 4, ((R - 1) * ost + 1) * 4, &rem);
        sp.b[1] = (uint32_t)(rem / 4);
        b[2] = bsv;
        b[3] = bpt;
        if (split) {
            b[0] = wg_bind_from(logits->st->buf, l0 * esz, ((R - 1) * rs + row_span) * esz, &rem);
            sp.a[2] = (uint32_t)(rem / esz);
        }
        /* stage, with the parts' stage first: 0 max, then the rounds of
         * stats (1), the masses (2) and the draw (3, no step after it) */
        for (int stage = 0; stage < 3 + rounds && st == WGML_OK; stage++) {
            uint32_t ps = stage == 0 ? 0 : stage <= rounds ? 1 : (uint32_t)(stage - rounds + 1);
            if (ps == 2 && (k->flags & F_GREEDY))
                break; /* greedy rows were written by step 0 */
            sp.e[1] = ps;
            for (uint64_t c = 0; c < (split ? 1 : K) && st == WGML_OK; c++) {
                if (!split) {
                    uint64_t n = (uint64_t)vocab - c * C < C ? (uint64_t)vocab - c * C : C;
                    b[0] = wg_bind_from(logits->st->buf, (l0 + r * rs + c * C * cs) * esz,
                                        ((n - 1) * cs + 1) * esz, &rem);
                    sp.a[2] = (uint32_t)(rem / esz);
                    sp.e[2] = (uint32_t)c;
                }
                st = wg_dispatch(ctx, kpart, b, nb, &sp, sizeof sp, (uint32_t)(split ? K * R : 1), 1, 1);
            }
            if (st == WGML_OK && ps < 3)
                st = wg_dispatch(ctx, kstep, b, nb, &sp, sizeof sp, (uint32_t)R, 1, 1);
        }
    }
    wgml_tensor_free(sv);
    wgml_tensor_free(pt);
    return st;
}

/* Scratch: the long-rows path (64 bytes of state and 16 bytes a chunk,
 * reused by every row), which runs when a row's window exceeds one
 * binding, which a description cannot tell (strides, WGML_MAX_BINDING),
 * so it always counts, with K <= vocab (a row strided past a binding has
 * a chunk per logit); or the split path's, for as many rows as it takes. */
uint64_t wg_sc_sample(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)nin, (void)out;
    const wg_desc *l = in[0];
    if (l->ndim != 2 || l->shape[0] <= 0 || l->shape[1] <= 0)
        return 0;
    uint64_t rows = (uint64_t)l->shape[0], vocab = (uint64_t)l->shape[1];
    uint64_t most = wg_align_up(64, 256) + wg_align_up(vocab * 16, 256);
    sample_k k;
    if (rows <= SAMPLE_SPLIT_ROWS && sample_consts(&p->sample, &k) == WGML_OK) {
        uint64_t sp = split_scratch(&p->sample, &k, rows, vocab);
        most = sp > most ? sp : most;
    }
    return most;
}

/* The optional seed tensor: i32 or u32 with an element to read, on
 * logits' context, not written by out (rows would race its read). */
static wgml_status check_seed(const char *op, const wgml_tensor *seed, const wgml_tensor *logits)
{
    wgml_status st = wg_check_tensor(op, "seed", seed);
    if (st != WGML_OK)
        return st;
    if (seed->dtype != WGML_I32 && seed->dtype != WGML_U32)
        return wg_fail(WGML_ERR_DTYPE, "%s: seed is %s; i32 or u32 is supported (its first element is added to "
                       "params.seed)", op, wgml_dtype_name(seed->dtype));
    if (wgml_tensor_nelem(seed) < 1) {
        char s1[96];
        return wg_fail(WGML_ERR_SHAPE, "%s: seed %s has no elements; its first element is read", op,
                       wg_shape_str(seed, s1, sizeof s1));
    }
    if (!wg_same_ctx(logits, seed))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: seed and logits are from different contexts", op);
    return WGML_OK;
}

wgml_status wg_sample_impl(const wgml_tensor *logits, const wgml_tensor *seed, const wgml_sample_params *p,
                           wgml_tensor *out)
{
    const char *op = "wgml_sample";
    wgml_status st = wg_check_tensor(op, "logits", logits);
    if (st != WGML_OK)
        return st;
    if (!p)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: params are NULL", op);
    if (!(WG_DT_FLOATS & WG_DT_BIT(logits->dtype)))
        return wg_fail(WGML_ERR_DTYPE, "%s: logits are %s; f32, f16 and bf16 are supported", op,
                       wgml_dtype_name(logits->dtype));
    if (seed && (st = check_seed(op, seed, logits)) != WGML_OK)
        return st;
    char s1[96];
    if (logits->ndim != 2)
        return wg_fail(WGML_ERR_SHAPE, "%s: logits %s must be [rows, vocab]", op, wg_shape_str(logits, s1, sizeof s1));
    int64_t rows = logits->shape[0], vocab = logits->shape[1];
    if ((st = wg_check_out(op, out, WGML_I32, 1, &rows)) != WGML_OK ||
        (st = wg_check_writes(op, "out", out, false, "logits", logits, "seed", seed, WG_END)) != WGML_OK)
        return st;
    if (rows > 0 && (vocab == 0 || vocab > INT32_MAX))
        return wg_fail(WGML_ERR_SHAPE, "%s: vocab %lld must be in 1..2^31-1", op, (long long)vocab);
    if (!wg_same_ctx(logits, out))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", op);
    sample_k k;
    if ((st = sample_consts(p, &k)) != WGML_OK)
        return st;
    if (rows == 0)
        return wg_check(logits->ctx);
    wgml_ctx *ctx = logits->ctx;
    uint64_t esz = wg_dtype(logits->dtype)->block_bytes;
    uint64_t cap = wg_window_cap(ctx);
    uint64_t rs = (uint64_t)logits->strides[0], cs = (uint64_t)logits->strides[1];
    uint64_t row_span = (uint64_t)(vocab - 1) * cs + 1; /* elements of one row's window */
    if (row_span * esz > cap)
        return sample_chunked(logits, seed, p, &k, out, false);
    bool fsplit, fsingle;
    if (!forced_path(&fsplit, &fsingle))
        return WGML_ERR_INVALID_ARG;
    /* the split path on GPUs (CPU drivers run a workgroup's barriers as
     * coroutine switches: lavapipe took 2.1 ms where one workgroup took
     * 0.55 for a greedy 128,256-logit row, 11.5 against 8.9 with top-k
     * 40), when its rows' windows fit one binding each (all rows and all
     * ids) */
    bool split = fsplit || (!fsingle && !wg_is_cpu(logits->ctx) && vocab >= SAMPLE_SPLIT_VOCAB);
    if (rows <= SAMPLE_SPLIT_ROWS && split &&
        ((uint64_t)(rows - 1) * rs + row_span) * esz <= cap &&
        ((uint64_t)(rows - 1) * (uint64_t)out->strides[0] + 1) * 4 <= cap)
        return sample_chunked(logits, seed, p, &k, out, true);
    const wgml_buffer *w[1] = {out->st->buf};
    bool lrw, srw;
    read_modes(logits->st->buf, seed ? seed->st->buf : NULL, w, 1, &lrw, &srw);
    char defs[96];
    int nb = seed ? 3 : 2; /* logits, out (+ seed) */
    /* Small vocabularies leave most of a 256-wide workgroup idle at every
     * barrier of the searches: 64 threads serve them. */
    unsigned ro = kernel_defs(defs, sizeof defs, logits, seed, lrw, srw, vocab <= 4096 ? 64 : 256, "", nb);
    wg_kernel_ref ref = {"sample.wgsl", "sample", defs, nb, ro};
    wgml_kernel *kern = NULL;
    if ((st = wg_kernel_get(ctx, &ref, &kern)) != WGML_OK)
        return st;

    /* Rows per launch: as many as fit one binding (rows sharing the window). */
    uint64_t per = rs ? (cap / esz - row_span) / rs + 1 : (uint64_t)rows;
    if (per > (uint64_t)rows)
        per = (uint64_t)rows;
    /* ... and whose ids fit out's window (broadcast logits, stride 0,
     * bound no window at all) */
    uint64_t ost = (uint64_t)out->strides[0];
    if (ost && (cap / 4 - 1) / ost + 1 < per)
        per = (cap / 4 - 1) / ost + 1;
    uint64_t l0 = wg_view4_of(logits).offset, o0 = wg_view4_of(out).offset;
    for (uint64_t r0 = 0; r0 < (uint64_t)rows; r0 += per) {
        uint64_t n = (uint64_t)rows - r0 < per ? (uint64_t)rows - r0 : per;
        uint64_t first = l0 + r0 * rs, last = first + (n - 1) * rs + row_span - 1;
        uint64_t ofirst = o0 + r0 * (uint64_t)out->strides[0], olast = ofirst + (n - 1) * (uint64_t)out->strides[0];
        uint64_t lrem, orem;
        wg_binding b[3];
        b[0] = wg_bind_from(logits->st->buf, first * esz, (last + 1 - first) * esz, &lrem);
        b[1] = wg_bind_from(out->st->buf, ofirst * 4, (olast + 1 - ofirst) * 4, &orem);
        sample_params sp;
        memset(&sp, 0, sizeof sp);
        if (seed) /* every launch of a split reads the same element */
            b[2] = seed_binding(seed, &sp);
        sp.a[0] = (uint32_t)n;
        sp.a[1] = (uint32_t)vocab;
        sp.a[2] = (uint32_t)(lrem / esz);
        sp.a[3] = (uint32_t)rs;
        sp.b[0] = (uint32_t)cs;
        sp.b[1] = (uint32_t)(orem / 4);
        sp.b[2] = (uint32_t)out->strides[0];
        sp.b[3] = (uint32_t)r0;
        sp.c[0] = (uint32_t)p->top_k;
        sp.c[1] = k.flags;
        sp.c[2] = (uint32_t)p->seed;
        sp.c[3] = (uint32_t)(p->seed >> 32);
        sp.f[0] = k.inv_t;
        sp.f[1] = k.top_p;
        sp.f[2] = k.minp_c;
        sp.e[0] = vocab <= 4096 ? 32 : 128;
        if ((st = wg_dispatch(ctx, kern, b, nb, &sp, sizeof sp, (uint32_t)n, 1, 1)) != WGML_OK)
            return st;
    }
    return WGML_OK;
}

/* ------------------------------------------------------------ reference */

static uint32_t skey(float v)
{
    uint32_t b;
    if (isnan(v))
        return 0;
    if (v == 0)
        return 0x80000000u;
    memcpy(&b, &v, 4);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

typedef struct kv {
    uint32_t key;
    double w;
} kv;

static int kv_desc(const void *a, const void *b)
{
    uint32_t x = ((const kv *)a)->key, y = ((const kv *)b)->key;
    return x < y ? 1 : x > y ? -1 : 0;
}

int32_t wg_sample_ref(const double *logits, int64_t vocab, const wgml_sample_params *p, uint64_t row,
                      double *margin)
{
    sample_k k;
    if (margin)
        *margin = INFINITY;
    if (vocab <= 0 || sample_consts(p, &k) != WGML_OK)
        return -1;
    int64_t am = 0;
    for (int64_t i = 1; i < vocab; i++)
        if (skey((float)logits[i]) > skey((float)logits[am]))
            am = i;
    double m = logits[am];
    if ((k.flags & F_GREEDY) || !isfinite(m))
        return (int32_t)am;
    kv *s = malloc(sizeof(kv) * (size_t)vocab);
    double *w = malloc(sizeof(double) * (size_t)vocab);
    if (!s || !w) {
        free(s);
        free(w);
        return -1;
    }
    for (int64_t i = 0; i < vocab; i++) {
        w[i] = isnan(logits[i]) ? 0 : exp((logits[i] - m) / p->temperature);
        s[i] = (kv){skey((float)logits[i]), w[i]};
    }
    qsort(s, (size_t)vocab, sizeof *s, kv_desc);
    int64_t valid = vocab;
    while (valid > 0 && s[valid - 1].key == 0)
        valid--;
    uint32_t t = 1;
    if (p->top_k > 0 && p->top_k < valid)
        t = s[p->top_k - 1].key;
    if (k.flags & F_TOPP) {
        double mass = 0, cum = 0, prev = 0;
        for (int64_t i = 0; i < valid && s[i].key >= t; i++)
            mass += s[i].w;
        double want = (double)k.top_p * mass;
        for (int64_t i = 0; i < valid && s[i].key >= t;) {
            int64_t j = i;
            while (j < valid && s[j].key == s[i].key)
                cum += s[j++].w;
            if (cum >= want) {
                /* the cut moves if `want` crosses this group's or the
                 * previous group's running mass */
                double mg = fmin(cum - want, i > 0 ? want - prev : INFINITY) / mass;
                if (margin && mg < *margin)
                    *margin = mg;
                t = s[i].key;
                break;
            }
            prev = cum;
            i = j;
        }
    }
    if (k.flags & F_MINP) {
        float thr = (float)((float)m + k.minp_c);
        uint32_t tm = skey(thr);
        t = tm > t ? tm : t;
    }
    double total = 0;
    for (int64_t i = 0; i < vocab; i++)
        if (skey((float)logits[i]) >= t)
            total += w[i];
    double u = (double)(wg_sample_bits(p->seed, row, 0) >> 8) * 0x1p-24;
    double target = u * total, cum = 0;
    int32_t pick = -1;
    for (int64_t i = 0; i < vocab; i++) {
        if (skey((float)logits[i]) < t || w[i] == 0)
            continue;
        double before = cum;
        cum += w[i];
        if (cum > target) {
            double mg = fmin(cum - target, target - before) / total;
            if (margin && mg < *margin)
                *margin = mg;
            pick = (int32_t)i;
            break;
        }
    }
    free(s);
    free(w);
    return pick;
}

/* ------------------------------------------------------------ registry */

static const wgml_op_info sample_rows[] = {
    {"SAMPLE", "sample", WG_DT_FLOATS},
};

wg_op_table wg_sample_ops(void) { return (wg_op_table){sample_rows, sizeof sample_rows / sizeof *sample_rows}; }
