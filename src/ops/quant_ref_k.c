/* CPU reference (de)quantisation of the K-quants: 256-element super-blocks
 * split into 16- or 32-element sub-blocks whose scales (and, for the affine
 * ones, minimums) are themselves quantised against one or two fp16
 * super-block scales.  Layouts are ggml's (GGUF spec, gguf/quants.py):
 *
 *   Q2_K  84 B: scales[16] (lo nibble scale, hi nibble min), qs[64] (2-bit),
 *               fp16 d, fp16 dmin.           x = d*sc*q - dmin*m,  q in 0..3
 *   Q3_K 110 B: hmask[32] (3rd bit), qs[64] (2-bit), scales[12] (16 x 6-bit,
 *               stored +32), fp16 d.         x = d*sc*(q - 4),    q in 0..7
 *   Q4_K 144 B: fp16 d, fp16 dmin, scales[12] (8 x 6-bit scale + 8 x 6-bit
 *               min), qs[128] (4-bit).       x = d*sc*q - dmin*m,  q in 0..15
 *   Q5_K 176 B: as Q4_K plus qh[32] (5th bit) before qs.          q in 0..31
 *   Q6_K 210 B: ql[128] (low 4 bits), qh[64] (high 2 bits), int8 scales[16],
 *               fp16 d.                      x = d*sc*(q - 32),   q in 0..63
 *   Q8_K 292 B: f32 d, int8 qs[256], int16 bsums[16] (sums of 16 quants, for
 *               dot products only).          x = d*q
 *
 * Q2_K..Q6_K are all described by one table row (kq_fmt) and decoded by one
 * loop, so a layout detail is written once.  The float ops follow gguf's
 * order (dl = d*sc; ml = dmin*m; y = dl*q - ml) to be bit-exact.
 *
 * Quantisers: gguf 0.19.0 only dequantises these types, and ggml's
 * quantisers are iterative weighted searches.  wgml's references are
 * deliberately simple, deterministic round-to-nearest schemes (described
 * above kq_quant_affine / kq_quant_sym) whose worst-case error can be bounded
 * on paper; tests/test_quant_ref.c checks those bounds.  Q8_K follows ggml's
 * quantize_row_q8_K_ref exactly. */
#define WGML_QUANT_INTERNAL
#include "quant.h"

#include <math.h>
#include <string.h>

#define QK_K 256

typedef struct kq_fmt {
    int bytes;                /* block size in bytes */
    int sub_len;              /* elements per sub-block: 16 or 32 */
    int off_d, off_dmin;      /* fp16 super-scales; off_dmin < 0: symmetric */
    int off_sc;               /* packed sub-block scales (and mins) */
    int off_ql, ql_w, ql_g;   /* low code bits (see wgml_q_field_get) */
    int off_qh, qh_w, qh_g;   /* high code bits; off_qh < 0: none */
    int zero;                 /* code of the value 0 (symmetric formats) */
    int sc_max;               /* largest |sub-block scale| (and min) code */
    void (*get_sc)(const uint8_t *p, int j, int *sc, int *m);
    void (*set_sc)(uint8_t *p, int j, int sc, int m); /* ORs into zeroed bytes */
} kq_fmt;

/* --------------------------------------------- sub-block scale packings */

/* Q2_K: one byte per sub-block, scale in the low nibble, min in the high. */
static void q2_get_sc(const uint8_t *p, int j, int *sc, int *m)
{
    *sc = p[j] & 0xf;
    *m = p[j] >> 4;
}
static void q2_set_sc(uint8_t *p, int j, int sc, int m)
{
    p[j] = (uint8_t)(sc | (m << 4));
}

/* Q3_K: 16 six-bit values stored +32: low nibbles in bytes 0..7 (sub-block
 * j and j+8 share byte j%8), top 2 bits in bytes 8..11 (byte 8 + j%4, bit
 * offset 2*(j/4)).  Both halves are plain bit-field layouts. */
static void q3_get_sc(const uint8_t *p, int j, int *sc, int *m)
{
    const unsigned v = wgml_q_field_get(p, j, 4, 8) | (wgml_q_field_get(p + 8, j, 2, 4) << 4);
    *sc = (int)v - 32;
    *m = 0;
}
static void q3_set_sc(uint8_t *p, int j, int sc, int m)
{
    (void)m;
    wgml_q_field_set(p, j, 4, 8, (unsigned)(sc + 32));
    wgml_q_field_set(p + 8, j, 2, 4, (unsigned)(sc + 32) >> 4);
}

/* Q4_K / Q5_K (ggml's get_scale_min_k4): 8 six-bit scales and 8 six-bit mins
 * in 12 bytes.  Sub-blocks 0..3 keep both in the low 6 bits of bytes 0..3
 * (scale) and 4..7 (min); sub-blocks 4..7 keep their low nibbles in bytes
 * 8..11 (scale low, min high) and their top 2 bits in the spare top bits of
 * bytes 0..3 (scale) and 4..7 (min). */
static void k4_get_sc(const uint8_t *p, int j, int *sc, int *m)
{
    if (j < 4) {
        *sc = p[j] & 63;
        *m = p[j + 4] & 63;
    } else {
        *sc = (p[j + 4] & 0xf) | ((p[j - 4] >> 6) << 4);
        *m = (p[j + 4] >> 4) | ((p[j] >> 6) << 4);
    }
}
static void k4_set_sc(uint8_t *p, int j, int sc, int m)
{
    if (j < 4) {
        p[j] |= (uint8_t)(sc & 63);
        p[j + 4] |= (uint8_t)(m & 63);
    } else {
        p[j + 4] |= (uint8_t)((sc & 0xf) | ((m & 0xf) << 4));
        p[j - 4] |= (uint8_t)((sc >> 4) << 6);
        p[j] |= (uint8_t)((m >> 4) << 6);
    }
}

/* Q6_K: one int8 per sub-block. */
static void q6_get_sc(const uint8_t *p, int j, int *sc, int *m)
{
    *sc = (int8_t)p[j];
    *m = 0;
}
static void q6_set_sc(uint8_t *p, int j, int sc, int m)
{
    (void)m;
    p[j] = (uint8_t)(int8_t)sc;
}

static const kq_fmt k_q2_K = {.bytes = 84, .sub_len = 16, .off_d = 80, .off_dmin = 82, .off_sc = 0,
                              .off_ql = 16, .ql_w = 2, .ql_g = 32, .off_qh = -1,
                              .zero = 0, .sc_max = 15,
                              .get_sc = q2_get_sc, .set_sc = q2_set_sc};
static const kq_fmt k_q3_K = {.bytes = 110, .sub_len = 16, .off_d = 108, .off_dmin = -1, .off_sc = 96,
                              .off_ql = 32, .ql_w = 2, .ql_g = 32, .off_qh = 0, .qh_w = 1, .qh_g = 32,
                              .zero = 4, .sc_max = 31,
                              .get_sc = q3_get_sc, .set_sc = q3_set_sc};
static const kq_fmt k_q4_K = {.bytes = 144, .sub_len = 32, .off_d = 0, .off_dmin = 2, .off_sc = 4,
                              .off_ql = 16, .ql_w = 4, .ql_g = 32, .off_qh = -1,
                              .zero = 0, .sc_max = 63,
                              .get_sc = k4_get_sc, .set_sc = k4_set_sc};
static const kq_fmt k_q5_K = {.bytes = 176, .sub_len = 32, .off_d = 0, .off_dmin = 2, .off_sc = 4,
                              .off_ql = 48, .ql_w = 4, .ql_g = 32, .off_qh = 16, .qh_w = 1, .qh_g = 32,
                              .zero = 0, .sc_max = 63,
                              .get_sc = k4_get_sc, .set_sc = k4_set_sc};
static const kq_fmt k_q6_K = {.bytes = 210, .sub_len = 16, .off_d = 208, .off_dmin = -1, .off_sc = 192,
                              .off_ql = 0, .ql_w = 4, .ql_g = 64, .off_qh = 128, .qh_w = 2, .qh_g = 32,
                              .zero = 32, .sc_max = 127,
                              .get_sc = q6_get_sc, .set_sc = q6_set_sc};

static int kq_code_bits(const kq_fmt *f)
{
    return f->ql_w + (f->off_qh >= 0 ? f->qh_w : 0);
}

static void kq_set_code(const kq_fmt *f, uint8_t *b, int e, unsigned c)
{
    wgml_q_field_set(b + f->off_ql, e, f->ql_w, f->ql_g, c);
    if (f->off_qh >= 0)
        wgml_q_field_set(b + f->off_qh, e, f->qh_w, f->qh_g, c >> f->ql_w);
}

/* ------------------------------------------------------- dequantisation */

static void kq_deq(const kq_fmt *f, const uint8_t *b, float *y)
{
    const float d = wgml_q_rdh(b + f->off_d);
    const float dmin = f->off_dmin >= 0 ? wgml_q_rdh(b + f->off_dmin) : 0.0f;
    for (int j = 0; j < QK_K / f->sub_len; ++j) {
        int sc, m;
        f->get_sc(b + f->off_sc, j, &sc, &m);
        const float dl = d * (float)sc;
        const float ml = dmin * (float)m;
        for (int e = j * f->sub_len; e < (j + 1) * f->sub_len; ++e) {
            unsigned c = wgml_q_field_get(b + f->off_ql, e, f->ql_w, f->ql_g);
            if (f->off_qh >= 0)
                c |= wgml_q_field_get(b + f->off_qh, e, f->qh_w, f->qh_g) << f->ql_w;
            const float q = (float)((int)c - f->zero);
            /* gguf has no "- ml" term for the symmetric formats; keep the
             * two expressions literal rather than rely on x - 0.0f == x */
            y[e] = f->off_dmin >= 0 ? dl * q - ml : dl * q;
        }
    }
}

/* ------------------------------------------------------- quantisation */

static float clampf(float v, float lo, float hi)
{
    return !(v >= lo) ? lo : (v > hi ? hi : v); /* NaN -> lo */
}

/* Affine K-quants (Q2_K, Q4_K, Q5_K): x ~ dl_j*q - ml_j with q in 0..qmax,
 * dl_j = d*sc_j, ml_j = dmin*m_j, 0 <= sc_j, m_j <= sc_max.
 *
 * Every rounding that decides the representable range rounds *outward*
 * (fp16_ceil for d/dmin, ceil for sc_j/m_j) so each sub-block's range
 * [-ml_j, -ml_j + qmax*dl_j] contains all of its values; the codes never
 * clip and the error is at most dl_j / 2.  Steps in order:
 *   1. lo_j = min(0, min x) (ml_j >= 0 can only shift down), hi_j = max x;
 *   2. dmin = fp16_ceil(max_j(-lo_j) / sc_max), m_j = ceil(-lo_j / dmin);
 *   3. s_j = (hi_j + ml_j) / qmax, the step the sub-block needs;
 *      d = fp16_ceil(max_j s_j / sc_max), sc_j = ceil(s_j / d);
 *   4. q = round((x + ml_j) / dl_j), using the stored (decoded) dl_j, ml_j.
 * With A = max|x| over the super-block: ml_j < A + dmin, s_j <= (2A + dmin)
 * / qmax, dl_j < s_j + d, which gives the bound quoted in the test. */
static void kq_quant_affine(const kq_fmt *f, const float *x, uint8_t *b)
{
    enum { MAX_SUB = 16 };
    const int nsub = QK_K / f->sub_len;
    const float qmax = (float)((1 << kq_code_bits(f)) - 1), smax = (float)f->sc_max;
    float lo[MAX_SUB], hi[MAX_SUB], ml[MAX_SUB], need[MAX_SUB];
    int m[MAX_SUB];
    float max_lo = 0.0f, max_need = 0.0f;
    for (int j = 0; j < nsub; ++j) {
        lo[j] = 0.0f;
        hi[j] = x[j * f->sub_len];
        for (int e = j * f->sub_len; e < (j + 1) * f->sub_len; ++e) {
            lo[j] = x[e] < lo[j] ? x[e] : lo[j];
            hi[j] = x[e] > hi[j] ? x[e] : hi[j];
        }
        max_lo = -lo[j] > max_lo ? -lo[j] : max_lo;
    }
    const uint16_t dmin_h = wgml_q_fp16_ceil(max_lo / smax);
    const float dmin = wgml_fp16_to_fp32(dmin_h);
    for (int j = 0; j < nsub; ++j) {
        m[j] = dmin > 0.0f ? (int)clampf(ceilf(-lo[j] / dmin), 0.0f, smax) : 0;
        ml[j] = dmin * (float)m[j];
        need[j] = clampf((hi[j] + ml[j]) / qmax, 0.0f, INFINITY);
        max_need = need[j] > max_need ? need[j] : max_need;
    }
    const uint16_t d_h = wgml_q_fp16_ceil(max_need / smax);
    const float d = wgml_fp16_to_fp32(d_h);
    memset(b, 0, (size_t)f->bytes);
    wgml_q_wr16(b + f->off_d, d_h);
    wgml_q_wr16(b + f->off_dmin, dmin_h);
    for (int j = 0; j < nsub; ++j) {
        const int sc = d > 0.0f ? (int)clampf(ceilf(need[j] / d), 0.0f, smax) : 0;
        const float dl = d * (float)sc;
        f->set_sc(b + f->off_sc, j, sc, m[j]);
        for (int e = j * f->sub_len; e < (j + 1) * f->sub_len; ++e) {
            const float q = dl > 0.0f ? nearbyintf((x[e] + ml[j]) / dl) : 0.0f;
            kq_set_code(f, b, e, (unsigned)clampf(q, 0.0f, qmax));
        }
    }
}

/* Symmetric K-quants (Q3_K, Q6_K): x ~ d*sc_j*(q - zero), q - zero in
 * [-zero, zero-1], sc_j in [-sc_max, sc_max].  Like gguf's Q4_0/Q5_0, each
 * sub-block's scale s_j = mx_j / -zero is signed so that its value of largest
 * magnitude mx_j lands on the one extra negative code; then
 *   d = fp16_ceil(max_j |s_j| / sc_max), sc_j = round(s_j / d),
 *   q = round(x / (d*sc_j)) clamped to the code range.
 * Values of the opposite sign to mx_j may clip by up to one step, which
 * dominates the error bound in the test. */
static void kq_quant_sym(const kq_fmt *f, const float *x, uint8_t *b)
{
    enum { MAX_SUB = 16 };
    const int nsub = QK_K / f->sub_len;
    const float zero = (float)f->zero, smax = (float)f->sc_max;
    float s[MAX_SUB], max_s = 0.0f;
    for (int j = 0; j < nsub; ++j) {
        const float *xs = x + j * f->sub_len;
        int imax = 0;
        for (int l = 1; l < f->sub_len; ++l)
            imax = fabsf(xs[l]) > fabsf(xs[imax]) ? l : imax;
        s[j] = xs[imax] / -zero;
        max_s = fabsf(s[j]) > max_s ? fabsf(s[j]) : max_s;
    }
    const uint16_t d_h = wgml_q_fp16_ceil(max_s / smax);
    const float d = wgml_fp16_to_fp32(d_h);
    memset(b, 0, (size_t)f->bytes);
    wgml_q_wr16(b + f->off_d, d_h);
    for (int j = 0; j < nsub; ++j) {
        const int sc = d > 0.0f ? (int)clampf(nearbyintf(s[j] / d), -smax, smax) : 0;
        const float dl = d * (float)sc;
        f->set_sc(b + f->off_sc, j, sc, 0);
        for (int e = j * f->sub_len; e < (j + 1) * f->sub_len; ++e) {
            const float q = dl != 0.0f ? nearbyintf(x[e] / dl) : 0.0f;
            kq_set_code(f, b, e, (unsigned)(clampf(q, -zero, zero - 1.0f) + zero));
        }
    }
}

void wgml_q2_K_deq(const uint8_t *b, float *y) { kq_deq(&k_q2_K, b, y); }
void wgml_q3_K_deq(const uint8_t *b, float *y) { kq_deq(&k_q3_K, b, y); }
void wgml_q4_K_deq(const uint8_t *b, float *y) { kq_deq(&k_q4_K, b, y); }
void wgml_q5_K_deq(const uint8_t *b, float *y) { kq_deq(&k_q5_K, b, y); }
void wgml_q6_K_deq(const uint8_t *b, float *y) { kq_deq(&k_q6_K, b, y); }
void wgml_q2_K_quant(const float *x, uint8_t *b) { kq_quant_affine(&k_q2_K, x, b); }
void wgml_q3_K_quant(const float *x, uint8_t *b) { kq_quant_sym(&k_q3_K, x, b); }
void wgml_q4_K_quant(const float *x, uint8_t *b) { kq_quant_affine(&k_q4_K, x, b); }
void wgml_q5_K_quant(const float *x, uint8_t *b) { kq_quant_affine(&k_q5_K, x, b); }
void wgml_q6_K_quant(const float *x, uint8_t *b) { kq_quant_sym(&k_q6_K, x, b); }

/* ---------------------------------------------------------------- Q8_K */

static float rd_f32(const uint8_t *p)
{
    const uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                       (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void wr_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    for (int i = 0; i < 4; ++i)
        p[i] = (uint8_t)(u >> (8 * i));
}

void wgml_q8_K_deq(const uint8_t *b, float *y)
{
    const float d = rd_f32(b);
    for (int e = 0; e < QK_K; ++e)
        y[e] = d * (float)(int8_t)b[4 + e];
}

/* ggml's quantize_row_q8_K_ref: mx = signed value of largest magnitude,
 * iscale = -127/mx, q = min(127, round-half-even(iscale*x)) (ggml's
 * nearest_int is the 1.5*2^23 magic-number trick == nearbyintf in the
 * default rounding mode), d = 1/iscale, bsums = sums of 16 consecutive q.
 * Only deviation: an all-zero block also zeroes bsums (ggml leaves them
 * unwritten). */
void wgml_q8_K_quant(const float *x, uint8_t *b)
{
    float amax = 0.0f, mx = 0.0f;
    for (int e = 0; e < QK_K; ++e) {
        if (fabsf(x[e]) > amax) {
            amax = fabsf(x[e]);
            mx = x[e];
        }
    }
    memset(b, 0, 292);
    if (amax == 0.0f)
        return; /* d = 0, q = 0, bsums = 0 */
    const float iscale = -127.0f / mx;
    for (int g = 0; g < QK_K / 16; ++g) {
        int sum = 0;
        for (int e = g * 16; e < g * 16 + 16; ++e) {
            const int q = (int)clampf(nearbyintf(iscale * x[e]), -128.0f, 127.0f);
            b[4 + e] = (uint8_t)(int8_t)q;
            sum += q;
        }
        wgml_q_wr16(b + 4 + QK_K + 2 * g, (uint16_t)(int16_t)sum);
    }
    wr_f32(b, 1.0f / iscale);
}
