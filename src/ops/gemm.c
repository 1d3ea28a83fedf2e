/*
 * The GEMM driver (gemm.h): operand layouts, the variant table, split-K,
 * windows, dispatch.  Kernel: gemm.wgsl.
 *
 * Operands are seen in one canonical 4-D space (b0, b1, m, n), the two
 * batch dims numpy-broadcast (stride 0).  A is read in place when its k or
 * its m stride is 1 (A_KC / m-contiguous kernels), B when its k or n
 * stride is 1; any other layout is first copied into a contiguous scratch
 * tensor.  Quantised w [n, k] is B with k contiguous, in bytes.
 *
 * Operands larger than one storage binding: the window binder (window.c)
 * cuts the space twice: first the batch dims and m with w/B left out (so
 * A, c, bias and out fit over whole rows), then, for each such block, n
 * before m (so B, which does not depend on m, is cut along n instead of
 * the block being cut into single rows).  A 49k x 4096 f16 vocabulary
 * projection (400 MB of w) with 128 MiB bindings runs as 4 dispatches.
 */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ variants */

/* Workgroup memory: 2 tiles of BK x (BM or BN) f32, times nbuf.
 *   t128     128x128, BK 8, 8x8 per thread, 256 threads, double buffered (16 KiB)
 *   t128k16  the same with BK 16 (32 KiB): half the barriers per k
 *   t128s    t128 single buffered (8 KiB) for devices with little workgroup memory
 *   t64      64x64, BK 16, 4x4 per thread, 256 threads, double buffered (16 KiB)
 *   t32      32x32, BK 16, 4x4 per thread, 64 threads (4 KiB): tiny and odd shapes
 *   splitk   t64 tiles over k slices into f32 partials, then gemm_reduce
 *   h128     t128's tile in f16 (WGML_PREC_F16): BK 16, a tile sum of 16
 *            products in f16, the 8 x 8 thread tile in two passes of 4
 *            rows (16 KiB)
 *   h64      t64's in f16: BK 32 (so each thread still loads two vectors
 *            of each operand a tile), sums of 32 (16 KiB): the table's
 *   h128x64  128 x 64 in f16, BK 32, 8 x 4 per thread (256 threads, 24
 *            KiB): per k-step 16 HFMA2 for 3 vector reads (h64: 8 for
 *            2), and each B vector (a dequantised weight) serves 128
 *            rows; four vectors of A a thread, two of B
 * The h variants need BM BK / 4 and BN BK / 4 to be 2 or 4 x threads (row
 * pairs). */
static const wg_gemm_variant variants[] = {
    {"t128", 128, 128, 8, 8, 8, 2, false, false},
    {"t128k16", 128, 128, 16, 8, 8, 2, false, false},
    {"t128s", 128, 128, 8, 8, 8, 1, false, false},
    {"t64", 64, 64, 16, 4, 4, 2, false, false},
    {"t32", 32, 32, 16, 4, 4, 1, false, false},
    {"splitk", 64, 64, 16, 4, 4, 2, true, false},
    {"h128", 128, 128, 16, 8, 8, 2, false, true},
    {"h64", 64, 64, 32, 4, 4, 2, false, true},
    {"h128x64", 128, 64, 32, 8, 4, 2, false, true},
};
#define NVAR (sizeof variants / sizeof *variants)
#define SPLITK_BK 16

uint32_t wg_gemm_wg_mem(const wg_gemm_variant *v)
{
    return (uint32_t)(v->nbuf * v->bk * (v->bm + v->bn) * (v->h16 ? 2 : 4));
}

const wg_gemm_variant *wg_gemm_variant_named(const char *name)
{
    for (size_t i = 0; i < NVAR; i++)
        if (!strcmp(variants[i].name, name))
            return &variants[i];
    return NULL;
}

wgml_status wg_gemm_forced(const wg_gemm_variant **v)
{
    char buf[32];
    const char *f = wg_forced_variant("gemm", buf, sizeof buf);
    *v = NULL;
    if (!f)
        return WGML_OK;
    if ((*v = wg_gemm_variant_named(f)) != NULL)
        return WGML_OK;
    char list[160] = "";
    for (size_t i = 0; i < NVAR; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", variants[i].name);
    return wg_fail(WGML_ERR_INVALID_ARG, "WGML_FORCE: gemm variant '%s' is unknown; the variants are %s", f, list);
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int wg_gemm_splits(int64_t batches, int64_t m, int64_t n, int64_t k, int64_t *chunk)
{
    const wg_gemm_variant *f = NULL;
    *chunk = k;
    if (wg_gemm_forced(&f) != WGML_OK || k < 2 * SPLITK_BK || batches <= 0 || m <= 0 || n <= 0)
        return 1;
    int64_t s;
    if (f) { /* forced: a few slices whatever the shape (tests) */
        if (!f->splitk)
            return 1;
        s = cdiv(k, 4 * SPLITK_BK);
        s = s < 2 ? 2 : s > 8 ? 8 : s;
    } else {
        /* Split when the t64 tiles cannot fill the device (~256 workgroups
         * keep an H100's 132 SMs busy) and each slice keeps >= 256 of k:
         * below 256 tiles where t64 would run (min(m, n) >= 64; H200,
         * 127 x 4096 x 4096: 128 tiles, 14.5 -> 18.4 TFLOP/s split in 2,
         * bench/NOTES.md 2026-11-28), below 64 for thinner products, whose
         * t32 tiles would become splitk's 64-row ones (not measured).
         * Timing knob WGML_GEMM_SPLIT_TILES=n: below n for every shape. */
        const char *se = getenv("WGML_GEMM_SPLIT_TILES");
        int64_t lim = se && *se ? atoll(se) : (m < n ? m : n) >= 64 ? 256 : 64;
        int64_t tiles = cdiv(m, 64) * cdiv(n, 64) * batches;
        if (tiles >= lim || k < 1024)
            return 1;
        s = cdiv(256, tiles);
        if (s > k / 256)
            s = k / 256;
        if (s > 32)
            s = 32;
        if (s < 2)
            return 1;
    }
    int64_t c = cdiv(cdiv(k, s), SPLITK_BK) * SPLITK_BK;
    *chunk = c;
    return (int)cdiv(k, c);
}

uint64_t wg_gemm_scratch_bytes(uint64_t a_bytes, uint64_t b_bytes, int64_t batches, int64_t m, int64_t n, int64_t k)
{
    int64_t chunk;
    int s = wg_gemm_splits(batches, m, n, k, &chunk);
    uint64_t p = s > 1 ? wg_align_up((uint64_t)(batches * s * m * n) * 4, 256) : 0;
    return wg_align_up(a_bytes, 256) + wg_align_up(b_bytes, 256) + p;
}

/* The kernel choice: the first row whose conditions hold.  Keys: the
 * device's workgroup memory, whether it is a CPU, and the shape (the
 * smaller of m and n, and how many 128x128 tiles there are). */
typedef struct choice {
    int64_t min_mn;       /* min(m, n) at least */
    int64_t min_tiles;    /* 128x128 tiles (times batches) at least */
    bool gpu_only;
    const char *variant;
} choice;

static const choice table[] = {
    /* big products: the 128x128 tile, BK 8, double buffered.  H100
     * (Vulkan), 4096^3 f32: t128 29.5 TFLOP/s, t64 27.8, t128k16 20.7
     * (two loads a thread and 32 KiB: fewer workgroups per SM), so
     * t128k16 is left to WGML_FORCE.  Not on CPU adapters: lavapipe
     * takes minutes to compile the 8x8 register tile, and t64 is as fast
     * there. */
    {128, 96, true, "t128"},
    {128, 96, true, "t128s"},
    {64, 1, false, "t64"},
    {0, 0, false, "t32"},
};

static const wg_gemm_variant *choose_f32(wgml_ctx *ctx, const wgml_device_info *dev, int64_t batches, int64_t m,
                                         int64_t n)
{
    const wgml_device_info info = *dev;
    bool cpu = wg_is_cpu(ctx);
    int64_t mn = m < n ? m : n, tiles = cdiv(m, 128) * cdiv(n, 128) * batches;
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        const wg_gemm_variant *v = wg_gemm_variant_named(table[i].variant);
        if (mn >= table[i].min_mn && tiles >= table[i].min_tiles && !(table[i].gpu_only && cpu) &&
            wg_gemm_wg_mem(v) <= info.max_workgroup_storage && (uint32_t)(v->bm / v->tm * v->bn / v->tn) <=
            info.max_invocations_per_workgroup)
            return v;
    }
    return wg_gemm_variant_named("t32");
}

/* WGML_PREC_F16 takes h64 wherever the f32 choice is t128, t128s or t64
 * and the device has ShaderF16; t32's small products stay f32.  H200
 * (Vulkan), TFLOP/s at 4096^3 / linear 512 x 14336 x 4096 f32 / q4_K:
 * h64 36.98 / 32.98 / 28.84, h128 32.71 / 26.64 / 24.66, t128 (f32)
 * 30.07 / 25.91 / 23.77; pp512 of an 8B q4_K: h64 1,834 tokens/s, h128
 * 1,487, f32 1,341.  h128 is left to WGML_FORCE. */
static const wg_gemm_variant *choose(wgml_ctx *ctx, int64_t batches, int64_t m, int64_t n, wgml_precision prec)
{
    wgml_device_info info;
    memset(&info, 0, sizeof info);
    wgml_device_info_get(ctx, &info);
    const wg_gemm_variant *v = choose_f32(ctx, &info, batches, m, n);
    if (prec != WGML_PREC_F16 || !wg_has(ctx, WGML_FEATURE_F16))
        return v;
    const wg_gemm_variant *h = wg_gemm_variant_named(v->bm >= 64 ? "h64" : "");
    return h && wg_gemm_wg_mem(h) <= info.max_workgroup_storage ? h : v;
}

/* The variant a product of s k-slices runs: splitk when split, else a
 * forced non-split variant, else the table's.  One rule for the run and
 * for wgml_linear's choice of the dequantised weight's dtype. */
static const wg_gemm_variant *pick(wgml_ctx *ctx, const wg_gemm_variant *forced, int s, int64_t batches, int64_t m,
                                   int64_t n, wgml_precision prec)
{
    if (s > 1)
        return wg_gemm_variant_named("splitk");
    if (forced && !forced->splitk)
        return forced;
    return choose(ctx, batches, m, n, prec);
}

bool wg_gemm_takes_h16(wgml_ctx *ctx, int64_t batches, int64_t m, int64_t n, int64_t k, wgml_precision prec)
{
    const wg_gemm_variant *forced = NULL;
    int64_t chunk;
    if (wg_gemm_forced(&forced) != WGML_OK)
        return false;
    return pick(ctx, forced, wg_gemm_splits(batches, m, n, k, &chunk), batches, m, n, prec)->h16;
}

/* The k-step unroll (gemm.wgsl's KU4 ... KU32): on GPUs the whole k-tile
 * (BK steps, at most 32), none on CPU drivers, whose compile time grows
 * with every copy (lavapipe).  H200, TFLOP/s against the loop (bench
 * gemm; bench/NOTES.md 2026-11-26 (7)): t128 (BK 8) 4096^3 30.0 -> 35.9;
 * h64 (BK 32) 36.8 -> 38.9 at 8 steps, 42.4 whole, its q4_K linear 27.3
 * -> 34.7; 4 steps were slower than the loop.  WGML_GEMM_KU=1|4|8|16|32
 * forces it where BK allows, for timing. */
static int k_unroll(wgml_ctx *ctx, const wg_gemm_variant *v)
{
    /* h128 keeps its loop: written out it took 148 registers (one
     * 256-thread workgroup an SM; ~128 as a loop) and the table's h128
     * ran an 8B pp512 at 1,512 tokens/s against h64's 2,113 (H200) */
    const char *e = getenv("WGML_GEMM_KU");
    int ku = e && *e ? atoi(e) : wg_is_cpu(ctx) || (v->h16 && v->tm == 8 && v->tn == 8) ? 1 : 32;
    if (ku > 32)
        ku = 32;
    while (ku > 1 && (ku > v->bk || v->bk % ku != 0 || (ku & (ku - 1)) != 0 || ku == 2))
        ku /= 2;
    return ku;
}

/* Whether the next k-tile's loads stay in an `if (more)` (GEMM_LDIF,
 * gemm_ktiles.wgsl; the callers' default dflt, WGML_GEMM_LDIF=0|1
 * forces) rather than load every k-tile.  Unconditional, t128's loads
 * are issued ahead of the math; in the `if`, NVIDIA's compiler merged
 * them with the stores after it.  H200, TFLOP/s, `if` -> unconditional
 * (bench/NOTES.md 2026-11-28 (2), calls 3 and 6): f32 4096^3 39.7 ->
 * 41.5, 8192^3 40.5 -> 42.7, 1000^3 20.0 -> 22.1, the f32 linear 512 x
 * 14336 x 4096 31.3 -> 34.2 (and 28.2 -> 30.6 with a q4_0 weight made
 * f32), 127 x 4096 x 4096 (split-K) 18.7 -> 23.2, the grouped MoE's f16
 * experts 19.1 -> 20.2.  The `if` stays faster for f16 tiles (h64 4096^3
 * 44.7 / 44.1: their loads sit after the math either way, the compiler
 * keeping three workgroups an SM), f16 operands in t128's interior copy
 * (42.0 / 41.1) and scalar loads (4095 x 4097 x 1023 37.1 / 34.8). */
bool wg_gemm_ldif(bool dflt)
{
    const char *e = getenv("WGML_GEMM_LDIF");
    return e && *e ? !strcmp(e, "1") : dflt;
}

size_t wg_gemm_tile_defs(wgml_ctx *ctx, const wg_gemm_variant *v, wgml_dtype wdt, bool qb, char *defs, size_t cap)
{
    /* vectors of A's and B's tile a thread loads: 1, 2 or 4 (LA2 / LA4, LB2 / LB4) */
    int wg = v->bm / v->tm * v->bn / v->tn, la = v->bm * v->bk / 4 / wg, lb = v->bn * v->bk / 4 / wg;
    int ku = k_unroll(ctx, v);
    int u = snprintf(defs, cap, "BM=%d;BN=%d;BK=%d;WG=%d;NBUF=%d;AS_N=%d;BS_N=%d%s%s%s%s%s%s%s", v->bm, v->bn, v->bk,
                     wg, v->nbuf, v->nbuf * v->bk * v->bm / 4, v->nbuf * v->bk * v->bn / 4,
                     v->tm == 8 ? ";TM8" : "", v->tn == 8 ? ";TN8" : "", v->tm == 8 && v->tn == 8 ? ";TILE8" : "",
                     la >= 2 ? ";LA2" : "", la == 4 ? ";LA4" : "", lb >= 2 ? ";LB2" : "", lb == 4 ? ";LB4" : "");
    if (u > 0 && (size_t)u < cap)
        u += snprintf(defs + u, cap - (size_t)u, "%s%s%s", v->nbuf == 1 ? ";SINGLE_BUFFER" : "",
                      ku == 32 ? ";KU32" : ku == 16 ? ";KU16" : ku == 8 ? ";KU8" : ku == 4 ? ";KU4" : "",
                      v->h16 ? ";H16;ENABLE_F16;R=f" : ";R=c");
    if (u > 0 && (size_t)u < cap)
        u += snprintf(defs + u, cap - (size_t)u, "%s", v->h16 && v->tm == 8 && v->tn == 8 ? ";H16T8" : "");
    /* A warp of 8 x 4 thread tiles, not 16 x 2 (GEMM_W84; f32 4096^3 35.8
     * -> 39.5 TFLOP/s on an H200, bench/NOTES.md 2026-11-28; threads along
     * n a multiple of 8; 4 x 8 ran the same).  Timing knobs:
     * WGML_GEMM_WARP=16 the old warp; WGML_GEMM_PROBE=1 no loads after
     * the first k-tile (results wrong: the arithmetic and barriers). */
    const char *w = getenv("WGML_GEMM_WARP"), *pr = getenv("WGML_GEMM_PROBE");
    if (u > 0 && (size_t)u < cap)
        u += snprintf(defs + u, cap - (size_t)u, "%s%s", !(w && !strcmp(w, "16")) && v->bn / v->tn % 8 == 0 ? ";GEMM_W84" : "",
                      pr && !strcmp(pr, "1") ? ";GEMM_NOLOAD" : "");
    if (qb && u > 0 && (size_t)u < cap) {
        const wg_dtype_info *d = wg_dtype(wdt);
        char qt[16];
        snprintf(qt, sizeof qt, "%s", d->name);
        for (char *c = qt; *c; c++)
            *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
        u += snprintf(defs + u, cap - (size_t)u, ";QB;QT_%s;QK=%u;BB=%u", qt, d->block_elems, d->block_bytes);
    }
    return u < 0 ? 0 : (size_t)u < cap ? (size_t)u : cap - 1;
}

/* ------------------------------------------------------------ the plan */

enum { OA, OB, OC, OD, OO, OP, NOPS }; /* a, b (or w), c, bias, out, partials */

typedef struct plan {
    wgml_ctx *ctx;
    const wg_gemm_args *g;
    const wgml_tensor *t[NOPS];
    int64_t b0, b1, m, n, k;
    int64_t ask, bsk;       /* k strides of A and B (elements) */
    bool a_kc, b_kc;
    const wg_gemm_variant *v;
    int s;                  /* k slices */
    int64_t chunk;
    int pass;               /* 0: gemm, 1: gemm_reduce */
    wgml_buffer *bbuf;      /* B's buffer in this pass (NULL: not read) */
    uint32_t act, flags;
} plan;

/* t's 4-D view broadcast to (b0, b1, m, n) as the canonical window (dims
 * of size 1 against a larger iteration dim get stride 0). */
static wg_win canon(const wgml_tensor *t, const char *name)
{
    wg_view4 v = wg_view4_of(t);
    wg_win w = wg_win_of(t, &v, name);
    for (int d = 0; d < 4; d++)
        if (v.shape[d] == 1)
            w.st[d] = 0;
    return w;
}

static void set_key(char *defs, size_t cap, size_t *u, const char *fmt, const char *a, const char *b)
{
    int w = snprintf(defs + *u, cap > *u ? cap - *u : 0, fmt, a, b);
    *u += w > 0 ? (size_t)w : 0;
}

/* Whether 4-element loads along the unit-stride dim stay aligned: the
 * first element, the batch steps and the other dim's step (lead) are
 * multiples of 4. */
static bool vec_ok(const plan *pl, const wgml_tensor *t, uint32_t off, const int64_t *st, int64_t lead)
{
    if (!t || !wg_vec4_dtype(pl->ctx, t->dtype) || off % 4)
        return false;
    return st[0] % 4 == 0 && st[1] % 4 == 0 && lead % 4 == 0;
}

/* One dispatch of the current pass over a block (canonical windows). */
static wgml_status dispatch(plan *pl, const wg_win *w, const int64_t it[4])
{
    const wg_gemm_variant *v = pl->v;
    bool split = pl->s > 1 || pl->k == 0;   /* the result goes through gemm_reduce */
    bool main = pl->pass == 0;
    int wr = main && split ? OP : OO;       /* the written operand */
    /* slots bound, in binding order */
    int slots[5], ns = 0;
    if (main) {
        slots[ns++] = OA;
        slots[ns++] = OB;
        if (split)
            slots[ns++] = OP;
        else
            slots[ns++] = OC, slots[ns++] = OD, slots[ns++] = OO;
    } else {
        slots[ns++] = OP, slots[ns++] = OC, slots[ns++] = OD, slots[ns++] = OO;
    }
    wg_binding b[5];
    uint32_t off[NOPS] = {0};
    char defs[640];
    size_t u = 0;
    unsigned ro = 0;
    int first_read = -1;
    for (int i = 0; i < ns; i++)
        if (slots[i] != wr && w[slots[i]].buf && first_read < 0)
            first_read = slots[i];
    bool va = false, vb = false;
    for (int i = 0; i < ns; i++) {
        int o = slots[i];
        bool present = w[o].buf != NULL;
        int src = present ? o : (first_read >= 0 ? first_read : wr); /* placeholder */
        b[i] = wg_win_bind(&w[src], it, &off[o]);
        if (!present)
            off[o] = 0;
        bool rw = o == wr || w[src].buf == w[wr].buf;
        if (!rw)
            ro |= 1u << i;
        static const char *const nm[NOPS] = {"A", "B", "C", "BIAS", "O", "PT"};
        const char *dt = present && pl->t[o] ? wg_dtype(pl->t[o]->dtype)->wgsl : "f32";
        bool vec = false;
        if (o == OA && present)
            vec = vec_ok(pl, pl->t[OA], off[o], w[OA].st, pl->a_kc ? w[OA].st[2] : pl->ask);
        if (o == OB && present && !pl->g->bq)
            vec = vec_ok(pl, pl->t[OB], off[o], w[OB].st, pl->b_kc ? w[OB].st[3] : pl->bsk);
        if (vec) /* whole vectors: round the binding up to 16 where the buffer has it */
            b[i].size = wg_align_up(b[i].size, 16) <= wg_buffer_alloc(w[src].buf) - b[i].offset
                            ? wg_align_up(b[i].size, 16) : b[i].size;
        vec = vec && b[i].size % 16 == 0;
        if (o == OA)
            va = vec;
        if (o == OB)
            vb = vec;
        if (o == OB && pl->g->bq) {
            set_key(defs, sizeof defs, &u, "QACC=%s;%s", rw ? "read_write" : "read", "");
            continue;
        }
        if (o == OP && main)
            set_key(defs, sizeof defs, &u, "O_MODE=%s%s;", "w", "");
        else if (o == OP)
            set_key(defs, sizeof defs, &u, "PT_MODE=%s%s;", rw ? "rw" : "r", "");
        else {
            u += (size_t)snprintf(defs + u, sizeof defs - u, "%s_DT=%s;%s_MODE=%s%s;", nm[o], dt, nm[o],
                                  o == wr ? "w" : rw ? "rw" : "r", vec ? "4" : "");
        }
    }
    if (main) {
        const wgml_tensor *q = pl->g->bq ? pl->t[OB] : NULL;
        u += wg_gemm_tile_defs(pl->ctx, v, q ? q->dtype : WGML_F32, q != NULL, defs + u, sizeof defs - u);
        /* f16 operands loaded as vectors go into f16 tiles as they are */
        bool ah = v->h16 && va && pl->t[OA]->dtype == WGML_F16, bh = v->h16 && vb && pl->t[OB]->dtype == WGML_F16;
        /* Interior tiles' loads without edge branches (FASTLD, a second
         * copy of the k loop: gemm_ktiles.wgsl; vector loads of both
         * operands, B dense) on GPUs for the f16 tiles, 16-bit operands
         * and linears (A and B k-contiguous).  H200, TFLOP/s
         * (bench/NOTES.md 2026-11-28): h64's q4_K linear 512 x 14336 x
         * 4096 33.8 -> 37.9, f32 in f16 arithmetic 4096^3 43.1 -> 44.5,
         * f16 operands 45.5 -> 45.0; t128's f16 operands 4096^3 34.4 ->
         * 40.6, its f32 linear 29.7 -> 31.0, but its f32 4096^3 (B
         * n-contiguous) 39.4 -> 37.4.  Timing knob WGML_GEMM_FAST=0|1:
         * none, or every variant. */
        const char *fe = getenv("WGML_GEMM_FAST");
        bool w16 = pl->t[OA]->dtype != WGML_F32 || pl->t[OB]->dtype != WGML_F32;
        bool fdef = (v->h16 || (pl->a_kc && pl->b_kc) || w16) && !wg_is_cpu(pl->ctx);
        bool fast = va && vb && !pl->g->bq && (fe && *fe ? !strcmp(fe, "1") : fdef);
        if (fast)
            u += (size_t)snprintf(defs + u, sizeof defs - u, ";FASTLD");
        if (wg_gemm_ldif(v->h16 || !va || !vb || (w16 && fast)))
            u += (size_t)snprintf(defs + u, sizeof defs - u, ";GEMM_LDIF");
        u += (size_t)snprintf(defs + u, sizeof defs - u, "%s%s%s%s%s%s%s%s%s", pl->a_kc ? ";A_KC" : "",
                              pl->b_kc ? ";B_KC" : "", va ? ";VA" : "", vb ? ";VB" : "", split ? ";SPLITK" : "",
                              v->h16 && pl->a_kc ? ";H16_AKC" : "", v->h16 && pl->b_kc ? ";H16_BKC" : "",
                              ah ? ";VAH" : "", bh ? ";VBH" : "");
    } else {
        u += (size_t)snprintf(defs + u, sizeof defs - u, "REDUCE");
    }
    snprintf(defs + u, sizeof defs - u, ";U_RELU;U_GELU_ERF;U_SILU");
    wg_kernel_ref ref = {"gemm.wgsl", main ? "gemm" : "gemm_reduce", defs, ns, ro};
    wgml_kernel *kern = NULL;
    wgml_status st = wg_kernel_get(pl->ctx, &ref, &kern);
    if (st != WGML_OK)
        return st;

    wg_gemm_params prm;
    memset(&prm, 0, sizeof prm);
    int64_t bm = it[2], bn = it[3], nb = it[0] * it[1];
    int64_t kc = pl->k == 0 ? 0 : pl->s > 1 ? pl->chunk : pl->k;
    prm.dims[0] = (uint32_t)bm, prm.dims[1] = (uint32_t)bn, prm.dims[2] = (uint32_t)pl->k;
    prm.dims[3] = (uint32_t)(pl->k == 0 ? 0 : pl->s);
    prm.grid[2] = (uint32_t)it[1], prm.grid[3] = (uint32_t)nb;
    for (int d = 0; d < 4; d++) {
        prm.ast[d] = (uint32_t)w[OA].st[d];
        prm.bst[d] = (uint32_t)w[OB].st[d];
        prm.cst[d] = (uint32_t)w[OC].st[d];
        prm.dst[d] = (uint32_t)w[OD].st[d];
        prm.ost[d] = (uint32_t)(main && split ? w[OP].st[d] : w[OO].st[d]);
    }
    /* A: (b0, b1, m, k); B: (b0, b1, k, n), quantised and k-contiguous B
     * keep their per-n stride in w (the canonical window's n stride) */
    prm.ast[3] = (uint32_t)pl->ask;
    prm.bst[2] = (uint32_t)pl->bsk;
    prm.offs[0] = off[OA], prm.offs[1] = off[OB], prm.offs[2] = off[OC], prm.offs[3] = off[OD];
    prm.misc[0] = off[OO];
    prm.misc[1] = (uint32_t)(main ? kc : (pl->n));
    prm.misc[2] = pl->flags;
    prm.misc[3] = pl->act;
    prm.pst[0] = off[OP];
    prm.pst[1] = (uint32_t)w[OP].st[0], prm.pst[2] = (uint32_t)w[OP].st[1];
    prm.pst[3] = 1;
    if (!main)
        prm.misc[1] = (uint32_t)w[OP].st[2];
    prm.fp[0] = pl->g->p.alpha, prm.fp[1] = pl->g->p.beta;
    uint64_t groups;
    if (main) {
        prm.grid[0] = (uint32_t)cdiv(bn, v->bn), prm.grid[1] = (uint32_t)cdiv(bm, v->bm);
        groups = (uint64_t)prm.grid[0] * prm.grid[1] * (uint64_t)nb * (uint64_t)pl->s;
    } else {
        groups = (uint64_t)cdiv(bm * bn * nb, 256);
    }
    return wg_dispatch(pl->ctx, kern, b, ns, &prm, sizeof prm, (uint32_t)groups, 1, 1);
}

/* Stage 2: the block's space is (b0, b1, n, m) so that n is cut before m. */
static void swap_mn(wg_win *w, int64_t it[4])
{
    int64_t t = it[2];
    it[2] = it[3], it[3] = t;
    for (int j = 0; j < NOPS; j++) {
        t = w[j].st[2];
        w[j].st[2] = w[j].st[3], w[j].st[3] = t;
    }
}

static wgml_status stage2_fn(void *user, const wg_win *w, const int64_t iter[4], const int64_t origin[4])
{
    (void)origin;
    wg_win c[NOPS];
    int64_t it[4] = {iter[0], iter[1], iter[2], iter[3]};
    memcpy(c, w, sizeof c);
    swap_mn(c, it);
    return dispatch(user, c, it);
}

#define MAX_ELEMS (0xffffffffull - 65536) /* indices stay u32 */

static wgml_status stage1_fn(void *user, const wg_win *w, const int64_t iter[4], const int64_t origin[4])
{
    (void)origin;
    plan *pl = user;
    wg_win c[NOPS];
    int64_t it[4] = {iter[0], iter[1], iter[2], iter[3]};
    memcpy(c, w, sizeof c);
    c[OB].buf = pl->bbuf; /* stage 1 left it out */
    if (wg_win_fits(pl->ctx, c, NOPS, it, MAX_ELEMS))
        return dispatch(pl, c, it);
    swap_mn(c, it);
    return wg_win_split(pl->ctx, c, NOPS, it, 4, MAX_ELEMS, pl->g->name, stage2_fn, pl);
}

/* Runs the current pass over the whole space. */
static wgml_status run_pass(plan *pl, const wg_win *w0)
{
    wg_win w[NOPS];
    memcpy(w, w0, sizeof w);
    if (pl->pass == 1) /* gemm_reduce reads neither A nor B */
        w[OA].buf = w[OB].buf = NULL;
    else if (pl->s > 1) /* the gemm pass of split-K writes partials only */
        w[OC].buf = w[OD].buf = w[OO].buf = NULL;
    pl->bbuf = w[OB].buf;
    int64_t it[4] = {pl->b0, pl->b1, pl->m, pl->n};
    if (wg_win_fits(pl->ctx, w, NOPS, it, MAX_ELEMS))
        return dispatch(pl, w, it);
    /* stage 1: batch dims and m, with B left out, when one whole row of
     * every other operand fits */
    wg_win s1[NOPS];
    memcpy(s1, w, sizeof s1);
    s1[OB].buf = NULL;
    int64_t row[4] = {1, 1, 1, pl->n};
    if (wg_win_fits(pl->ctx, s1, NOPS, row, MAX_ELEMS))
        return wg_win_split(pl->ctx, s1, NOPS, it, 3, MAX_ELEMS, pl->g->name, stage1_fn, pl);
    swap_mn(w, it);
    return wg_win_split(pl->ctx, w, NOPS, it, 4, MAX_ELEMS, pl->g->name, stage2_fn, pl);
}

/* ------------------------------------------------------------ driver */

static wgml_status contiguous_copy(wgml_ctx *ctx, const wgml_tensor *t, wgml_tensor **copy)
{
    wgml_status st = wg_scratch_tensor(ctx, t->dtype, t->ndim, t->shape, copy);
    if (st == WGML_OK && (st = wg_copy_impl(t, *copy)) != WGML_OK) {
        wgml_tensor_free(*copy);
        *copy = NULL;
    }
    return st;
}

wgml_status wg_gemm_run(const wg_gemm_args *g)
{
    wgml_ctx *ctx = g->out->ctx;
    plan pl;
    memset(&pl, 0, sizeof pl);
    pl.ctx = ctx;
    pl.g = g;
    int64_t o4[4];
    wg_shape4(g->out, o4);
    pl.b0 = o4[0], pl.b1 = o4[1], pl.m = o4[2], pl.n = o4[3];
    pl.k = g->a->shape[g->a->ndim - 1];
    if (pl.b0 * pl.b1 * pl.m * pl.n == 0)
        return wg_check(ctx);
    const wg_gemm_variant *forced;
    wgml_status st = wg_gemm_forced(&forced);
    if (st != WGML_OK)
        return st;
    pl.s = wg_gemm_splits(pl.b0 * pl.b1, pl.m, pl.n, pl.k, &pl.chunk);
    pl.v = pick(ctx, forced, pl.s, pl.b0 * pl.b1, pl.m, pl.n, g->p.precision);
    if (pl.v->h16 && !wg_has(ctx, WGML_FEATURE_F16))
        return wg_fail(WGML_ERR_UNSUPPORTED, "%s: WGML_FORCE: gemm variant %s computes in f16, which this device "
                       "lacks (no ShaderF16)", g->name, pl.v->name);
    pl.act = (uint32_t)g->p.act;
    pl.flags = (g->c ? 1u : 0u) | (g->bias ? 2u : 0u);

    wgml_tensor *ca = NULL, *cb = NULL, *parts = NULL;
    const wgml_tensor *a = g->a, *b = g->b;
    if (pl.k > 0) {
        /* A: k stride 1 (read along k) or m stride 1; else a contiguous copy */
        int na = a->ndim;
        int64_t sk = a->strides[na - 1], sm = a->strides[na - 2];
        if (!(sk == 1 || pl.k == 1) && !(sm == 1 || a->shape[na - 2] == 1)) {
            if ((st = contiguous_copy(ctx, a, &ca)) != WGML_OK)
                return st;
            a = ca;
            sk = 1;
        }
        pl.a_kc = sk == 1 || pl.k == 1;
        pl.ask = pl.a_kc ? 1 : a->strides[na - 1];
        if (!g->bq) {
            int nb = b->ndim;
            int64_t bk = b->strides[nb - 2], bn = b->strides[nb - 1];
            if (!(bn == 1 || b->shape[nb - 1] == 1) && !(bk == 1 || pl.k == 1)) {
                if ((st = contiguous_copy(ctx, b, &cb)) != WGML_OK) {
                    wgml_tensor_free(ca);
                    return st;
                }
                b = cb;
                bn = 1;
            }
            pl.b_kc = !(bn == 1 || b->shape[nb - 1] == 1);
            pl.bsk = pl.b_kc ? 1 : b->strides[nb - 2];
        } else {
            pl.b_kc = true;
            pl.bsk = 1;
        }
    }
    pl.t[OA] = a, pl.t[OB] = b, pl.t[OC] = g->c, pl.t[OD] = g->bias, pl.t[OO] = g->out;

    wg_win w[NOPS];
    memset(w, 0, sizeof w);
    for (int j = 0; j < NOPS; j++)
        w[j].esz = 4, w[j].name = "?";
    if (pl.k > 0) {
        w[OA] = canon(a, "a");
        w[OA].tail = (uint64_t)((pl.k - 1) * (pl.a_kc ? 1 : pl.ask));
        w[OA].st[3] = 0;
        if (g->bq) {
            const wg_dtype_info *d = wg_dtype(b->dtype);
            uint64_t rowb = (uint64_t)pl.k / d->block_elems * d->block_bytes;
            int64_t step = b->strides[0] / d->block_elems * d->block_bytes; /* bytes from row to row */
            wg_win q = {b->st->buf, b->offset, {0, 0, 0, step}, 1, rowb - 1, "w"};
            if (b->shape[0] == 1)
                q.st[3] = 0;
            w[OB] = q;
        } else {
            /* canonical (b0, b1, m: 0, n) with k in the tail */
            w[OB] = canon(b, "b");
            w[OB].st[2] = 0;
            w[OB].tail = (uint64_t)((pl.k - 1) * pl.bsk);
        }
    }
    if (g->c)
        w[OC] = canon(g->c, "c");
    if (g->bias)
        w[OD] = canon(g->bias, "bias");
    w[OO] = canon(g->out, "out");
    if (pl.s > 1 || pl.k == 0) {
        if (pl.s > 1) {
            int64_t shape[1] = {pl.b0 * pl.b1 * pl.s * pl.m * pl.n};
            if ((st = wg_scratch_tensor(ctx, WGML_F32, 1, shape, &parts)) != WGML_OK)
                goto done;
            /* [b0, b1, m, n, s]: the slices of one output adjacent */
            wg_win pw = {parts->st->buf, parts->offset / 4,
                         {pl.b1 * pl.s * pl.m * pl.n, pl.s * pl.m * pl.n, pl.n * pl.s, pl.s}, 4,
                         (uint64_t)(pl.s - 1), "partials"};
            if (pl.b0 == 1)
                pw.st[0] = 0;
            if (pl.b1 == 1)
                pw.st[1] = 0;
            w[OP] = pw;
            pl.pass = 0;
            if ((st = run_pass(&pl, w)) != WGML_OK)
                goto done;
        }
        pl.pass = 1;
        st = run_pass(&pl, w);
    } else {
        pl.pass = 0;
        st = run_pass(&pl, w);
    }
done:
    wgml_tensor_free(ca);
    wgml_tensor_free(cb);
    wgml_tensor_free(parts);
    return st;
}
