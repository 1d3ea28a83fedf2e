/* Tests for the CPU reference (de)quantisers in src/ops/quant_ref*.c.
 *
 *   test_quant_ref <dir with the vectors from scripts/gen_quant_vectors.py>
 *
 * For every type: dequantisation must be bit-identical to gguf's numpy code
 * (on random valid blocks and on gguf-quantised data), the quantiser must be
 * byte-identical to gguf's where gguf has one, and every quantiser's
 * round-trip error must stay inside a worst-case bound derived below (the
 * inputs include blocks on which an FMA-contracted build of gguf's
 * x*id + bias gives different codes, so such a build fails here).  Plus
 * exhaustive fp16/bf16 checks, argument validation and negative controls
 * proving that the comparisons can fail.  Prints one line per check and ends
 * with "N passed, N failed"; exit status 1 on any failure. */
#include "quant.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_pass, g_fail;

static void check(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(ok ? "[PASS] " : "[FAIL] ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    if (ok)
        ++g_pass;
    else
        ++g_fail;
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ------------------------------------------------------ vector files */

typedef struct vecfile {
    uint32_t type_id, block_elems, block_bytes, n_input, quant_kind, n_rand;
    float *input, *qdeq, *rdeq; /* host floats, decoded from little-endian */
    uint8_t *qbytes, *rbytes;   /* point into raw */
    uint8_t *raw;
} vecfile;

static uint32_t rd_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Consumes n bytes at *pos, or returns NULL when the file is too short. */
static uint8_t *take(vecfile *v, size_t size, size_t *pos, size_t n)
{
    if (n > size - *pos)
        return NULL;
    uint8_t *p = v->raw + *pos;
    *pos += n;
    return p;
}

static float *take_f32(vecfile *v, size_t size, size_t *pos, size_t n)
{
    const uint8_t *p = take(v, size, pos, n * 4);
    float *f = p ? malloc(n * sizeof *f + 1) : NULL;
    for (size_t i = 0; f && i < n; ++i)
        f[i] = bitsf(rd_u32(p + 4 * i));
    return f;
}

static void vec_free(vecfile *v)
{
    free(v->input);
    free(v->qdeq);
    free(v->rdeq);
    free(v->raw);
    memset(v, 0, sizeof *v);
}

/* Returns 0 on success; on failure prints why. */
static int vec_load(const char *dir, const char *name, vecfile *v)
{
    char path[1024];
    memset(v, 0, sizeof *v);
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        printf("cannot open %s\n", path);
        return -1;
    }
    fseek(fp, 0, SEEK_END);
    const long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    v->raw = len > 0 ? malloc((size_t)len) : NULL;
    const int read_ok = v->raw && fread(v->raw, 1, (size_t)len, fp) == (size_t)len;
    fclose(fp);
    const size_t size = read_ok ? (size_t)len : 0;
    size_t pos = 0;
    const uint8_t *h = read_ok ? take(v, size, &pos, 32) : NULL;
    if (!h || memcmp(h, "WGQV", 4) != 0 || rd_u32(h + 4) != 1) {
        printf("%s: not a version-1 WGQV file\n", path);
        vec_free(v);
        return -1;
    }
    v->type_id = rd_u32(h + 8);
    v->block_elems = rd_u32(h + 12);
    v->block_bytes = rd_u32(h + 16);
    v->n_input = rd_u32(h + 20);
    v->quant_kind = rd_u32(h + 24);
    v->n_rand = rd_u32(h + 28);
    const size_t nin = v->n_input, nb = v->block_elems ? nin / v->block_elems : 0;
    int ok = v->block_elems && nin % v->block_elems == 0 && nin <= (1u << 24) &&
             v->n_rand <= (1u << 16) && (v->input = take_f32(v, size, &pos, nin));
    if (ok && v->quant_kind) {
        ok = (v->qbytes = take(v, size, &pos, nb * v->block_bytes)) &&
             (v->qdeq = take_f32(v, size, &pos, nin));
    }
    ok = ok && (v->rbytes = take(v, size, &pos, (size_t)v->n_rand * v->block_bytes)) &&
         (v->rdeq = take_f32(v, size, &pos, (size_t)v->n_rand * v->block_elems)) && pos == size;
    if (!ok) {
        printf("%s: truncated or inconsistent\n", path);
        vec_free(v);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------ comparisons */

/* Number of elements whose bit patterns differ (so -0 != +0 and NaN
 * payloads count); *first gets the first such index. */
static size_t diff_f32(const float *a, const float *b, size_t n, size_t *first)
{
    size_t bad = 0;
    *first = 0;
    for (size_t i = 0; i < n; ++i) {
        if (fbits(a[i]) != fbits(b[i]) && bad++ == 0)
            *first = i;
    }
    return bad;
}

static size_t diff_u8(const uint8_t *a, const uint8_t *b, size_t n, size_t *first)
{
    size_t bad = 0;
    *first = 0;
    for (size_t i = 0; i < n; ++i) {
        if (a[i] != b[i] && bad++ == 0)
            *first = i;
    }
    return bad;
}

static void check_f32_exact(const char *what, const char *name, const float *got,
                            const float *want, size_t n)
{
    size_t first;
    const size_t bad = diff_f32(got, want, n, &first);
    if (bad == 0)
        check(1, "%s %s: %zu floats bit-exact with gguf", name, what, n);
    else
        check(0, "%s %s: %zu/%zu floats differ, first [%zu] got %.9g (0x%08x) want %.9g (0x%08x)",
              name, what, bad, n, first, got[first], fbits(got[first]), want[first],
              fbits(want[first]));
}

/* ------------------------------------------------- round-trip bounds */

/* Worst-case |x - dequant(quant(x))| <= rel * A + abs_units * 2^-25, where A
 * is max|x| over the format's block (the 256-element super-block for
 * K-quants).  Derivations (d: block scale; fp16 storage adds a relative
 * error <= 2^-11, or an absolute one <= 2^-25 for fp16 subnormals, which is
 * where abs_units comes from; each rel below includes that and float slack):
 *  Q4_0/Q5_0 (gguf): d = mx/-8 (/-16), mx mapping to the extra negative code;
 *    an opposite-sign value of size A clips one code short: error <= |d|,
 *    + 8 (16) * 2^-11 |d| for fp16(d): 1.0039 A/8, 1.0079 A/16.
 *  Q4_1/Q5_1 (gguf): d = range/15 (/31) <= 2A/15 (2A/31), trunc(v + 0.5)
 *    rounds: d/2 + 15 (31) * 2^-11 d + 2^-11 |min| for fp16(d), fp16(min).
 *  Q8_0 (gguf): d = A/127, round-half-away: d/2 + 127 * 2^-11 d = 0.5620 d.
 *  Q8_K (ggml): d = A/127 in f32: d/2 plus float slack.
 *  IQ4_NL (wgml): d = mx/-127; an opposite-sign value of size 127|d| meets
 *    the largest positive entry 113: 14|d| + 113 * 2^-11 |d| = 14.06 A/127;
 *    interior gaps are <= 24|d| (half: 12|d|).
 *  MXFP4 (gguf): d = 2^(floor(log2 A) - 3), codes up to 12d = 1.5 * 2^fl:
 *    interior half-gap <= 2d <= A/4; clipping above 12d loses < 0.5 * 2^fl
 *    while A >= 1.5 * 2^fl, i.e. < A/4.
 *  Q2_K/Q4_K/Q5_K (wgml, affine, outward rounding, never clips): error <=
 *    (s + d)/2 with s <= (2A + dmin)/qmax, dmin <= 1.001 A/scmax, d <= 1.001
 *    s/scmax: qmax 3/15/31, scmax 15/63/63 -> 0.36745, 0.06827, 0.03304.
 *  Q3_K/Q6_K (wgml, symmetric): |s| <= A/zero (zero = 4/32), d <= 1.001
 *    |s|/scmax (31/127), |d*sc - s| <= d/2; an opposite-sign value clips
 *    to zero-1 codes: |s| + (zero-1) d/2 -> 0.26211 A, 0.035068 A. */
typedef struct rt_bound {
    double rel;
    double abs_units;
} rt_bound;

static const rt_bound k_bounds[WGML_QT_COUNT] = {
    [WGML_QT_Q4_0] = {0.1255, 8},    [WGML_QT_Q4_1] = {0.0682, 16},
    [WGML_QT_Q5_0] = {0.0630, 16},   [WGML_QT_Q5_1] = {0.03373, 32},
    [WGML_QT_Q8_0] = {0.004426, 128}, [WGML_QT_Q2_K] = {0.3675, 4},
    [WGML_QT_Q3_K] = {0.2622, 8},    [WGML_QT_Q4_K] = {0.06828, 4},
    [WGML_QT_Q5_K] = {0.03305, 4},   [WGML_QT_Q6_K] = {0.03507, 32},
    [WGML_QT_Q8_K] = {0.003938, 0},  [WGML_QT_IQ4_NL] = {0.1107, 128},
    [WGML_QT_MXFP4] = {0.25001, 0},
};

/* Largest error / allowed-error ratio over all blocks (> 1 means out of
 * bound); *worst_block gets the block where it occurs. */
static double roundtrip_ratio(wgml_qtype t, const float *x, const float *y, size_t n,
                              double scale, size_t *worst_block)
{
    const wgml_qtype_traits *tr = wgml_qtype_get(t);
    double worst = 0.0;
    *worst_block = 0;
    for (size_t b = 0; b < n / tr->block_elems; ++b) {
        const float *xb = x + b * tr->block_elems, *yb = y + b * tr->block_elems;
        double amax = 0.0, err = 0.0;
        for (size_t i = 0; i < tr->block_elems; ++i) {
            amax = fmax(amax, fabs((double)xb[i]));
            const double e = fabs((double)xb[i] - (double)yb[i]);
            err = isnan(e) ? INFINITY : fmax(err, e);
        }
        const double allowed =
            scale * (k_bounds[t].rel * amax + k_bounds[t].abs_units * 0x1p-25) + 1e-30;
        if (err / allowed > worst) {
            worst = err / allowed;
            *worst_block = b;
        }
    }
    return worst;
}

/* ------------------------------------------------------- per-type tests */

static void test_type(const char *dir, wgml_qtype t)
{
    const wgml_qtype_traits *tr = wgml_qtype_get(t);
    vecfile v;
    if (!tr || vec_load(dir, tr->name, &v) != 0) {
        check(0, "%s: load vectors", tr ? tr->name : "?");
        return;
    }
    const char *nm = tr->name;
    check(v.type_id == tr->gguf_type_id && v.block_elems == tr->block_elems &&
              v.block_bytes == tr->block_bytes,
          "%s traits: gguf id %u, %u elems, %u bytes (file: %u, %u, %u)", nm, tr->gguf_type_id,
          tr->block_elems, tr->block_bytes, v.type_id, v.block_elems, v.block_bytes);
    if (v.block_elems != tr->block_elems || v.block_bytes != tr->block_bytes) {
        vec_free(&v);
        return; /* sizes disagree: everything below would read out of bounds */
    }
    const size_t nin = v.n_input, nr = (size_t)v.n_rand * tr->block_elems;
    const size_t qsize = nin / tr->block_elems * tr->block_bytes;
    float *y = malloc((nin > nr ? nin : nr) * sizeof *y);
    uint8_t *q = malloc(qsize);
    uint8_t *bad = malloc(qsize > v.n_rand * tr->block_bytes ? qsize : v.n_rand * tr->block_bytes);

    /* 1. decode random valid blocks */
    int rc = wg_dequantize_ref(t, v.rbytes, y, (int64_t)nr);
    check(rc == 0, "%s dequantize(random blocks) returns 0", nm);
    check_f32_exact("dequantize(random blocks)", nm, y, v.rdeq, nr);

    /* 2. decode + re-encode the reference quantiser's output */
    const char *src = v.quant_kind == 1 ? "gguf" : "ggml-ref port";
    if (v.quant_kind) {
        wg_dequantize_ref(t, v.qbytes, y, (int64_t)nin);
        check_f32_exact("dequantize(reference-quantised)", nm, y, v.qdeq, nin);
        rc = wg_quantize_ref(t, v.input, q, (int64_t)nin);
        size_t first;
        const size_t nbad = diff_u8(q, v.qbytes, qsize, &first);
        check(rc == 0 && nbad == 0, "%s quantize: %zu bytes vs %s quantiser, %zu differ (first: %zu)",
              nm, qsize, src, nbad, first);
    } else {
        printf("[INFO] %s: gguf has no quantiser; checking wgml's own by its error bound\n", nm);
        rc = wg_quantize_ref(t, v.input, q, (int64_t)nin);
        check(rc == 0, "%s quantize returns 0", nm);
    }

    /* 3. round-trip error bound of wgml's quantiser */
    wg_dequantize_ref(t, q, y, (int64_t)nin);
    size_t wb;
    const double ratio = roundtrip_ratio(t, v.input, y, nin, 1.0, &wb);
    check(ratio <= 1.0, "%s round-trip max|err| <= %.5g*A + %g*2^-25 (worst block %zu at %.3f of bound)",
          nm, k_bounds[t].rel, k_bounds[t].abs_units, wb, ratio);

    /* 4. all-zero input must decode to exact zeros (every 1/d is guarded) */
    float *zeros = calloc(tr->block_elems * 2, sizeof *zeros);
    float yz[512];
    wg_quantize_ref(t, zeros, q, (int64_t)tr->block_elems * 2);
    wg_dequantize_ref(t, q, yz, (int64_t)tr->block_elems * 2);
    size_t nz = 0;
    for (size_t i = 0; i < tr->block_elems * 2; ++i)
        nz += yz[i] != 0.0f;
    check(nz == 0, "%s all-zero input round-trips to zeros (%zu non-zero)", nm, nz);
    free(zeros);

    /* 5. negative controls: the same comparisons must notice a corruption */
    memcpy(bad, v.rbytes, (size_t)v.n_rand * tr->block_bytes);
    bad[(size_t)(v.n_rand - 1) * tr->block_bytes + tr->block_bytes / 2] ^= 0xff;
    wg_dequantize_ref(t, bad, y, (int64_t)nr);
    size_t first;
    size_t nbad = diff_f32(y, v.rdeq, nr, &first);
    check(nbad > 0, "%s negative control: one flipped byte changes %zu floats, detected", nm, nbad);
    if (v.quant_kind) {
        wg_quantize_ref(t, v.input, q, (int64_t)nin);
        memcpy(bad, v.qbytes, qsize);
        bad[qsize / 3] ^= 0x01;
        nbad = diff_u8(q, bad, qsize, &first);
        check(nbad == 1 && first == qsize / 3,
              "%s negative control: corrupted expected byte %zu detected", nm, qsize / 3);
    }
    /* a bound 100x tighter must be violated, or the check is vacuous */
    wg_quantize_ref(t, v.input, q, (int64_t)nin);
    wg_dequantize_ref(t, q, y, (int64_t)nin);
    check(roundtrip_ratio(t, v.input, y, nin, 0.01, &wb) > 1.0,
          "%s negative control: round-trip check fails at 1%% of the bound", nm);

    free(bad);
    free(q);
    free(y);
    vec_free(&v);
}

/* ------------------------------------------------------ fp16 / bf16 */

/* Exact value of a finite half, computed independently of the library. */
static double half_value(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 0x3ff;
    const double mag = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -mag : mag;
}

/* Is the candidate at distance err (with neighbours at lo, hi) the nearest,
 * and on a tie the one with an even code? */
static int nearest_even(double err, double lo, double hi, uint16_t mag)
{
    if (err > lo || err > hi)
        return 0;
    return (err < lo && err < hi) || (mag & 1) == 0;
}

/* Is h the correctly rounded (RNE, IEEE overflow) fp16 of the finite f? */
static int is_rne_half(float f, uint16_t h)
{
    const double x = f, ax = fabs(x);
    if (!!signbit(x) != !!(h & 0x8000))
        return 0;
    if (ax >= 65520.0) /* 65504 + half ulp: IEEE overflow threshold */
        return (h & 0x7fff) == 0x7c00;
    const uint16_t mag = h & 0x7fff;
    if (mag >= 0x7c00)
        return 0;
    const double err = fabs(ax - half_value(mag));
    const double lo = mag > 0 ? fabs(ax - half_value((uint16_t)(mag - 1))) : INFINITY;
    const double hi = fabs(ax - half_value((uint16_t)(mag + 1)));
    return nearest_even(err, lo, hi, mag);
}

static int is_rne_bf16(float f, uint16_t h)
{
    const uint32_t x = fbits(f);
    if ((x & 0x7fffffffu) >= 0x7f7f8000u) /* halfway FLT_MAX..2^128 and up */
        return h == (uint16_t)((x >> 16 & 0x8000u) | 0x7f80u);
    const double ax = fabs((double)f);
    const uint16_t mag = h & 0x7fff;
    const double v = wgml_bf16_to_fp32(mag);
    const double err = fabs(ax - v);
    const double lo = mag > 0 ? fabs(ax - wgml_bf16_to_fp32((uint16_t)(mag - 1))) : INFINITY;
    const double hi = fabs(ax - wgml_bf16_to_fp32((uint16_t)(mag + 1)));
    return (h & 0x8000) == (x >> 16 & 0x8000u) && nearest_even(err, lo, hi, mag);
}

static void test_half(void)
{
    /* exhaustive: decode every half, check its value, re-encode it */
    int bad_val = 0, bad_rt = 0, bad_nan = 0;
    for (uint32_t i = 0; i < 65536; ++i) {
        const uint16_t h = (uint16_t)i;
        const float f = wgml_fp16_to_fp32(h);
        const int is_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
        if (is_nan)
            bad_nan += !isnan(f);
        else if ((h & 0x7fff) == 0x7c00)
            bad_val += !(isinf(f) && !!signbit(f) == !!(h & 0x8000));
        else
            bad_val += (double)f != half_value(h) || !!signbit(f) != !!(h & 0x8000);
        bad_rt += wgml_fp32_to_fp16(f) != h;
    }
    check(bad_val == 0 && bad_nan == 0, "fp16->fp32 exact for all 65536 halves (%d wrong, %d NaN lost)",
          bad_val, bad_nan);
    check(bad_rt == 0, "fp16->fp32->fp16 identity for all 65536 halves incl. NaN payloads (%d wrong)",
          bad_rt);

    /* every 251st f32 bit pattern (~17M values, all exponents) is rounded to
     * the nearest half, ties to even */
    uint32_t bad_rne = 0, first = 0;
    for (uint64_t u = 0; u < 0x100000000ull; u += 251) {
        const float f = bitsf((uint32_t)u);
        if (isnan(f))
            continue;
        if (!is_rne_half(f, wgml_fp32_to_fp16(f)) && bad_rne++ == 0)
            first = (uint32_t)u;
    }
    check(bad_rne == 0, "fp32->fp16 round-to-nearest-even on 17M sampled floats (%u wrong, first 0x%08x)",
          bad_rne, first);

    static const struct {
        float f;
        uint16_t h;
        const char *why;
    } cases[] = {
        {1.0f + 0x1p-11f, 0x3c00, "tie 1+2^-11 -> even 1.0"},
        {1.0f + 3 * 0x1p-11f, 0x3c02, "tie 1+3*2^-11 -> even 1+2^-9"},
        {-(1.0f + 0x1p-11f), 0xbc00, "negative tie -> even"},
        {1.0f + 0x1p-11f + 0x1p-23f, 0x3c01, "just above a tie rounds up"},
        {65504.0f, 0x7bff, "max half"},
        {65519.99609375f, 0x7bff, "just below overflow threshold"},
        {65520.0f, 0x7c00, "65520 (tie to even) overflows to inf"},
        {1e6f, 0x7c00, "large -> inf"},
        {-FLT_MAX, 0xfc00, "-FLT_MAX -> -inf"},
        {INFINITY, 0x7c00, "inf"},
        {0x1p-24f, 0x0001, "smallest subnormal"},
        {0x1p-25f, 0x0000, "2^-25 tie -> even 0"},
        {0x1p-25f + 0x1p-40f, 0x0001, "just above 2^-25 -> 2^-24"},
        {3 * 0x1p-25f, 0x0002, "tie 1.5*2^-24 -> even 2*2^-24"},
        {0x1p-14f, 0x0400, "smallest normal"},
        {0x1p-14f - 0x1p-30f, 0x0400, "just below 2^-14 rounds up to normal"},
        {-1e-10f, 0x8000, "tiny negative -> -0"},
        {-0.0f, 0x8000, "-0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const uint16_t h = wgml_fp32_to_fp16(cases[i].f);
        check(h == cases[i].h, "fp32->fp16 %s: 0x%04x (want 0x%04x)", cases[i].why, h, cases[i].h);
    }
    const uint16_t n1 = wgml_fp32_to_fp16(bitsf(0x7f800001u)); /* payload only in dropped bits */
    const uint16_t n2 = wgml_fp32_to_fp16(bitsf(0xffc00000u));
    check((n1 & 0x7c00) == 0x7c00 && (n1 & 0x3ff) != 0 && !(n1 & 0x8000),
          "fp32->fp16 NaN with low payload stays NaN: 0x%04x", n1);
    check(n2 == 0xfe00, "fp32->fp16 -qNaN -> 0xfe00: 0x%04x", n2);
}

static void test_bf16(void)
{
    int bad_rt = 0, bad_nan = 0;
    for (uint32_t i = 0; i < 65536; ++i) {
        const uint16_t h = (uint16_t)i;
        const float f = wgml_bf16_to_fp32(h);
        if (fbits(f) != (uint32_t)h << 16)
            ++bad_rt;
        const uint16_t back = wgml_fp32_to_bf16(f);
        if (isnan(f))
            bad_nan += !((back & 0x7f80) == 0x7f80 && (back & 0x40) && (back & 0x8000) == (h & 0x8000));
        else
            bad_rt += back != h;
    }
    check(bad_rt == 0, "bf16->fp32->bf16 identity for all non-NaN bf16 (%d wrong)", bad_rt);
    check(bad_nan == 0, "bf16 NaNs stay NaN, quiet, sign kept (%d wrong)", bad_nan);
    uint32_t bad_rne = 0, first = 0;
    for (uint64_t u = 0; u < 0x100000000ull; u += 251) {
        const float f = bitsf((uint32_t)u);
        if (isnan(f))
            continue;
        if (!is_rne_bf16(f, wgml_fp32_to_bf16(f)) && bad_rne++ == 0)
            first = (uint32_t)u;
    }
    check(bad_rne == 0, "fp32->bf16 round-to-nearest-even on 17M sampled floats (%u wrong, first 0x%08x)",
          bad_rne, first);
    static const struct {
        uint32_t f;
        uint16_t h;
        const char *why;
    } cases[] = {
        {0x3f808000u, 0x3f80, "tie 1+2^-8 -> even 1.0"},
        {0x3f818000u, 0x3f82, "tie 1+3*2^-8 -> even"},
        {0x3f808001u, 0x3f81, "just above a tie rounds up"},
        {0x7f7fffffu, 0x7f80, "FLT_MAX rounds to inf"},
        {0x7f7f7fffu, 0x7f7f, "below the overflow tie stays finite"},
        {0xff800000u, 0xff80, "-inf"},
        {0x00000001u, 0x0000, "smallest f32 subnormal -> 0"},
        {0x7f800001u, 0x7fc0, "sNaN with low payload -> quiet NaN"},
        {0xffc00000u, 0xffc0, "-qNaN keeps sign"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const uint16_t h = wgml_fp32_to_bf16(bitsf(cases[i].f));
        check(h == cases[i].h, "fp32->bf16 %s: 0x%04x (want 0x%04x)", cases[i].why, h, cases[i].h);
    }
}

/* ------------------------------------------------------- bad arguments */

static void test_args(void)
{
    static float xf[512];
    static float yf[512];
    static uint8_t qb[2 * 292];
    check(wgml_qtype_get(WGML_QT_COUNT) == NULL && wgml_qtype_get((wgml_qtype)-1) == NULL,
          "wgml_qtype_get rejects out-of-range types");
    for (int i = 0; i < WGML_QT_COUNT; ++i) {
        const wgml_qtype t = (wgml_qtype)i;
        const wgml_qtype_traits *tr = wgml_qtype_get(t);
        const int64_t be = tr->block_elems;
        int fails = 0;
        memset(yf, 0x5a, sizeof yf);
        memset(qb, 0x5a, sizeof qb);
        fails += wg_dequantize_ref(t, qb, yf, be + 1) != -1;
        fails += wg_dequantize_ref(t, qb, yf, be - 1) != -1;
        fails += wg_dequantize_ref(t, qb, yf, -be) != -1;
        fails += wg_dequantize_ref(t, NULL, yf, be) != -1;
        fails += wg_dequantize_ref(t, qb, NULL, be) != -1;
        fails += wg_quantize_ref(t, xf, qb, be + 1) != -1;
        fails += wg_quantize_ref(t, xf, qb, be / 2) != -1;
        fails += wg_quantize_ref(t, NULL, qb, be) != -1;
        fails += wg_quantize_ref(t, xf, NULL, be) != -1;
        /* rejected calls must not have written anything */
        for (size_t k = 0; k < sizeof qb; ++k)
            fails += qb[k] != 0x5a;
        fails += fbits(yf[0]) != 0x5a5a5a5au;
        fails += wg_dequantize_ref(t, qb, yf, 0) != 0 || wg_quantize_ref(t, xf, qb, 0) != 0;
        fails += wg_quantize_ref(t, xf, qb, 2 * be) != 0 || wg_dequantize_ref(t, qb, yf, 2 * be) != 0;
        check(fails == 0, "%s bad arguments rejected (n %% %lld, n < 0, NULL), n = 0 and 2 blocks accepted",
              tr->name, (long long)be);
    }
    check(wg_dequantize_ref(WGML_QT_COUNT, qb, yf, 32) == -1 &&
              wg_quantize_ref((wgml_qtype)-1, xf, qb, 32) == -1,
          "dequantize/quantize reject out-of-range types");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s <tests/quant_vectors dir>\n", argv[0]);
        return 2;
    }
    test_half();
    test_bf16();
    test_args();
    for (int t = 0; t < WGML_QT_COUNT; ++t)
        test_type(argv[1], (wgml_qtype)t);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
