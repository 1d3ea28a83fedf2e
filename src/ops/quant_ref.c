/* CPU reference (de)quantisation: fp16/bf16, the 32-element GGUF formats
 * (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4) and the public dispatch.
 * K-quants (256-element super-blocks) live in quant_ref_k.c.
 *
 * Layouts and formulas are those of ggml as described by the GGUF spec and
 * implemented by the `gguf` PyPI package (gguf/quants.py).  Where gguf has a
 * quantiser we reproduce its numpy arithmetic operation by operation (all in
 * f32, one rounding per operation, same order, same tie-breaking), because
 * that is the only way to get the same bytes: a different but "equally good"
 * formula flips codes on rounding ties and near-ties. */
#define WGML_QUANT_INTERNAL
#include "quant.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- fp16 */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float wgml_fp16_to_fp32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24 is exact in f32 (it is >= 2^-24,
         * far above f32's subnormal range), so let the FPU normalise it. */
        const float mag = (float)mant * 0x1p-24f;
        return sign ? -mag : mag;
    }
    if (exp == 31) /* inf / NaN: keep the payload bits */
        return bits_f32(sign | 0x7f800000u | (mant << 13));
    return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* Round the low `shift` bits of v away, to nearest, ties to even. */
static uint32_t shr_rne(uint32_t v, int shift)
{
    const uint32_t q = v >> shift;
    const uint32_t rem = v & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    return q + (rem > half || (rem == half && (q & 1u)));
}

uint16_t wgml_fp32_to_fp16(float f)
{
    const uint32_t x = f32_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) {
        /* NaN: keep the top payload bits; if they are all zero the result
         * would read as inf, so set the quiet bit instead. */
        uint16_t m = (uint16_t)((ax >> 13) & 0x3ffu);
        return (uint16_t)(sign | 0x7c00u | (m ? m : 0x200u));
    }
    if (ax >= 0x477ff000u) /* >= 65520 = halfway 65504..65536: RNE goes up */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) /* >= 2^-14: normal half; a carry out of the
                              mantissa correctly bumps the exponent */
        return (uint16_t)(sign | shr_rne(ax - (112u << 23), 13));
    if (ax < 0x33000000u) /* < 2^-25: below half the smallest subnormal */
        return sign;
    /* subnormal half: value = m * 2^(e-150) with the implicit bit, in units
     * of 2^-24 that is m >> (126 - e); shift is 14..24 here. */
    return (uint16_t)(sign | shr_rne((ax & 0x7fffffu) | 0x800000u, 126 - (int)(ax >> 23)));
}

float wgml_bf16_to_fp32(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

uint16_t wgml_fp32_to_bf16(float f)
{
    const uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: truncate, force quiet bit */
        return (uint16_t)((x >> 16) | 0x40u);
    /* RNE on the dropped 16 bits; overflow rounds into the inf encoding. */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

uint16_t wgml_q_fp16_ceil(float f)
{
    uint16_t h = wgml_fp32_to_fp16(f);
    if (wgml_fp16_to_fp32(h) < f && h < 0x7bffu) /* positive: next code is next value */
        ++h;
    return h;
}

/* ------------------------------------------------------- shared helpers */

/* Index of the first element with the largest |x| (numpy argmax and ggml's
 * "if (amax < fabsf(v))" loops both keep the first on ties). */
static int argmax_abs(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; ++i)
        if (fabsf(x[i]) > fabsf(x[best]))
            best = i;
    return best;
}

/* Code from numpy's `trunc(v).astype(uint8).clip(0, cmax)`; v is >= -1 for
 * all finite inputs, and the `!(v > 0)` test also turns NaN into 0 instead
 * of undefined behaviour. */
static unsigned trunc_code(float v, unsigned cmax)
{
    if (!(v > 0.0f))
        return 0;
    if (v >= (float)cmax)
        return cmax;
    return (unsigned)v;
}

/* Index into a 16-entry value table minimising |d*tab[k] - x|, first index
 * on ties (numpy argmin / ggml best_index_mxfp4).  Shared by IQ4_NL and
 * MXFP4, whose code books are non-uniform. */
static unsigned nearest_in_table(const int8_t tab[16], float d, float x)
{
    unsigned best = 0;
    float best_err = fabsf(d * (float)tab[0] - x);
    for (unsigned k = 1; k < 16; ++k) {
        const float err = fabsf(d * (float)tab[k] - x);
        if (err < best_err) {
            best_err = err;
            best = k;
        }
    }
    return best;
}

/* 16 nibble codes of a 32-element block: byte j holds elements j and j+16. */
#define NIB_W 4
#define NIB_G 16

/* --------------------------------------------- Q4_0, Q4_1, Q5_0, Q5_1 */

/* The four "legacy" formats differ only in code width (4 or 5 bits) and in
 * being symmetric (x = d*(q - 2^(bits-1))) or affine (x = d*q + m):
 *   [fp16 d][fp16 m if affine][u32 qh if 5-bit][16 bytes of low nibbles] */
typedef struct legacy_fmt {
    int bits;
    int affine;
} legacy_fmt;

static const legacy_fmt k_q4_0 = {4, 0}, k_q4_1 = {4, 1}, k_q5_0 = {5, 0}, k_q5_1 = {5, 1};

/* byte offsets of the high-bit word and of the nibbles within a block */
static int legacy_qh_off(const legacy_fmt *f)
{
    return 2 + (f->affine ? 2 : 0);
}

static int legacy_qs_off(const legacy_fmt *f)
{
    return legacy_qh_off(f) + (f->bits == 5 ? 4 : 0);
}

static void legacy_deq(const legacy_fmt *f, const uint8_t *b, float *y)
{
    const float d = wgml_q_rdh(b);
    const float m = f->affine ? wgml_q_rdh(b + 2) : 0.0f;
    const uint8_t *qh = b + legacy_qh_off(f), *qs = b + legacy_qs_off(f);
    const int zero = f->affine ? 0 : 1 << (f->bits - 1);
    for (int e = 0; e < 32; ++e) {
        unsigned c = wgml_q_field_get(qs, e, NIB_W, NIB_G);
        if (f->bits == 5)
            c |= wgml_q_field_get(qh, e, 1, 1) << 4;
        if (f->affine)
            y[e] = d * (float)c + m; /* gguf: (d * qs) + m, two roundings */
        else
            y[e] = d * (float)((int)c - zero);
    }
}

/* gguf's numpy quantisers, step for step:
 *  symmetric: max = x[argmax|x|]; d = max / -2^(bits-1); id = d ? 1/d : 0;
 *             q = trunc(x*id + (2^(bits-1) + 0.5)) clipped to the code range
 *             (the extreme value lands on the most negative code, so the
 *             asymmetric code range is used fully);
 *  affine:    d = (max - min) / (2^bits - 1); q = trunc((x - min)*id + 0.5);
 *             m = min. */
static void legacy_quant(const legacy_fmt *f, const float *x, uint8_t *b)
{
    const unsigned cmax = (1u << f->bits) - 1u;
    float d, id, bias, off;
    memset(b, 0, (size_t)legacy_qs_off(f) + 16);
    if (f->affine) {
        float mn = x[0], mx = x[0];
        for (int e = 1; e < 32; ++e) {
            mn = x[e] < mn ? x[e] : mn;
            mx = x[e] > mx ? x[e] : mx;
        }
        d = (mx - mn) / (float)cmax;
        off = mn;
        bias = 0.5f;
        wgml_q_wr16(b + 2, wgml_fp32_to_fp16(mn));
    } else {
        const float half = (float)(1 << (f->bits - 1));
        d = x[argmax_abs(x, 32)] / -half;
        off = 0.0f;
        bias = half + 0.5f;
    }
    id = d == 0.0f ? 0.0f : 1.0f / d;
    wgml_q_wr16(b, wgml_fp32_to_fp16(d));
    uint8_t *qh = b + legacy_qh_off(f), *qs = b + legacy_qs_off(f);
    for (int e = 0; e < 32; ++e) {
        /* affine: (x - min) * id + 0.5; symmetric: x * id + bias.  Subtracting
         * off = 0 would be exact, but keep the two forms literally as gguf. */
        const float v = f->affine ? (x[e] - off) * id + bias : x[e] * id + bias;
        const unsigned c = trunc_code(v, cmax);
        wgml_q_field_set(qs, e, NIB_W, NIB_G, c);
        if (f->bits == 5)
            wgml_q_field_set(qh, e, 1, 1, c >> 4);
    }
}

static void q4_0_deq(const uint8_t *b, float *y) { legacy_deq(&k_q4_0, b, y); }
static void q4_1_deq(const uint8_t *b, float *y) { legacy_deq(&k_q4_1, b, y); }
static void q5_0_deq(const uint8_t *b, float *y) { legacy_deq(&k_q5_0, b, y); }
static void q5_1_deq(const uint8_t *b, float *y) { legacy_deq(&k_q5_1, b, y); }
static void q4_0_quant(const float *x, uint8_t *b) { legacy_quant(&k_q4_0, x, b); }
static void q4_1_quant(const float *x, uint8_t *b) { legacy_quant(&k_q4_1, x, b); }
static void q5_0_quant(const float *x, uint8_t *b) { legacy_quant(&k_q5_0, x, b); }
static void q5_1_quant(const float *x, uint8_t *b) { legacy_quant(&k_q5_1, x, b); }

/* ---------------------------------------------------------------- Q8_0 */

/* [fp16 d][32 x int8]; x = d * q. */
static void q8_0_deq(const uint8_t *b, float *y)
{
    const float d = wgml_q_rdh(b);
    for (int e = 0; e < 32; ++e)
        y[e] = (float)(int8_t)b[2 + e] * d;
}

/* gguf (== ggml quantize_row_q8_0_ref): d = max|x| / 127, id = 1/d,
 * q = round-half-away-from-zero(x * id).  roundf is exactly gguf's np_roundf
 * for every finite f32, and |x*id| <= 127 + a few ulp, so q fits int8. */
static void q8_0_quant(const float *x, uint8_t *b)
{
    const float d = fabsf(x[argmax_abs(x, 32)]) / 127.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    wgml_q_wr16(b, wgml_fp32_to_fp16(d));
    for (int e = 0; e < 32; ++e) {
        float q = roundf(x[e] * id);
        if (!(q >= -127.0f)) /* also catches NaN, whose int cast is UB */
            q = -127.0f;
        else if (q > 127.0f)
            q = 127.0f;
        b[2 + e] = (uint8_t)(int8_t)q;
    }
}

/* -------------------------------------------------------------- IQ4_NL */

/* [fp16 d][16 nibble bytes], x = d * kvalues[q]: a fixed non-uniform code
 * book (denser near zero, matching the bell-shaped weight distribution). */
static const int8_t k_iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

static void iq4_nl_deq(const uint8_t *b, float *y)
{
    const float d = wgml_q_rdh(b);
    for (int e = 0; e < 32; ++e)
        y[e] = d * (float)k_iq4nl_values[wgml_q_field_get(b + 2, e, NIB_W, NIB_G)];
}

/* gguf 0.19.0 has no IQ4_NL quantiser, and ggml's (quantize_row_iq4_nl_impl)
 * runs a weighted search over candidate scales.  wgml's reference is the
 * plain round-to-nearest starting point of that search: d = max / -127 with
 * max the signed value of largest magnitude (so it lands exactly on the
 * -127 entry), stored as fp16, then each element takes the table entry
 * nearest to x using the *stored* scale. */
static void iq4_nl_quant(const float *x, uint8_t *b)
{
    const uint16_t dh = wgml_fp32_to_fp16(x[argmax_abs(x, 32)] / -127.0f);
    const float d = wgml_fp16_to_fp32(dh);
    memset(b, 0, 18);
    wgml_q_wr16(b, dh);
    for (int e = 0; e < 32; ++e)
        wgml_q_field_set(b + 2, e, NIB_W, NIB_G, nearest_in_table(k_iq4nl_values, d, x[e]));
}

/* --------------------------------------------------------------- MXFP4 */

/* OCP microscaling FP4: [u8 E8M0 exponent e][16 nibble bytes]; the nibble is
 * an E2M1 value.  ggml stores the E2M1 values doubled (as integers) and
 * halves the scale instead, so x = 2^(e-128) * kvalues[q]. */
static const int8_t k_mxfp4_values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* 2^(e-127) / 2 as f32 bits; e = 0 and 1 give f32 subnormals.  e = 255 is
 * NaN in the OCP spec, but ggml/gguf decode it as 2^127 and so do we. */
static float e8m0_half(uint8_t e)
{
    return bits_f32(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

static void mxfp4_deq(const uint8_t *b, float *y)
{
    const float d = e8m0_half(b[0]);
    for (int e = 0; e < 32; ++e)
        y[e] = d * (float)k_mxfp4_values[wgml_q_field_get(b + 1, e, NIB_W, NIB_G)];
}

/* gguf / ggml: e = floor(log2(max|x|)) - 2 + 127 (0 for an all-zero block),
 * then each element takes the nearest table entry at d = e8m0_half(e).
 * log2 is evaluated as f32, i.e. correctly rounded to f32, exactly as numpy
 * does: for the largest floats just below 2^k (k >= 3 or k <= -2) that rounds
 * to k, so the exponent is one higher than frexp would give.  We reproduce
 * that through a double log2 rounded to float (verified against numpy near
 * every power of two when the vectors were generated).  Out-of-range
 * exponents (max|x| < 2^-126) clamp to 0, where ggml's cast is undefined. */
static void mxfp4_quant(const float *x, uint8_t *b)
{
    const float amax = fabsf(x[argmax_abs(x, 32)]);
    float ef = amax > 0.0f ? floorf((float)log2((double)amax)) - 2.0f + 127.0f : 0.0f;
    ef = !(ef >= 0.0f) ? 0.0f : (ef > 255.0f ? 255.0f : ef); /* NaN -> 0 */
    const uint8_t e = (uint8_t)ef;
    const float d = e8m0_half(e);
    memset(b, 0, 17);
    b[0] = e;
    for (int i = 0; i < 32; ++i)
        wgml_q_field_set(b + 1, i, NIB_W, NIB_G, nearest_in_table(k_mxfp4_values, d, x[i]));
}

/* ------------------------------------------------------------- dispatch */

typedef struct qtype_impl {
    wgml_qtype_traits traits;
    wgml_q_deq_fn deq;
    wgml_q_quant_fn quant;
} qtype_impl;

/* Sizes and ids as in gguf's GGML_QUANT_SIZES / GGMLQuantizationType; the
 * test cross-checks them against the headers of the generated vectors. */
static const qtype_impl k_impl[WGML_QT_COUNT] = {
    [WGML_QT_Q4_0] = {{"q4_0", 32, 18, 2}, q4_0_deq, q4_0_quant},
    [WGML_QT_Q4_1] = {{"q4_1", 32, 20, 3}, q4_1_deq, q4_1_quant},
    [WGML_QT_Q5_0] = {{"q5_0", 32, 22, 6}, q5_0_deq, q5_0_quant},
    [WGML_QT_Q5_1] = {{"q5_1", 32, 24, 7}, q5_1_deq, q5_1_quant},
    [WGML_QT_Q8_0] = {{"q8_0", 32, 34, 8}, q8_0_deq, q8_0_quant},
    [WGML_QT_Q2_K] = {{"q2_K", 256, 84, 10}, wgml_q2_K_deq, wgml_q2_K_quant},
    [WGML_QT_Q3_K] = {{"q3_K", 256, 110, 11}, wgml_q3_K_deq, wgml_q3_K_quant},
    [WGML_QT_Q4_K] = {{"q4_K", 256, 144, 12}, wgml_q4_K_deq, wgml_q4_K_quant},
    [WGML_QT_Q5_K] = {{"q5_K", 256, 176, 13}, wgml_q5_K_deq, wgml_q5_K_quant},
    [WGML_QT_Q6_K] = {{"q6_K", 256, 210, 14}, wgml_q6_K_deq, wgml_q6_K_quant},
    [WGML_QT_Q8_K] = {{"q8_K", 256, 292, 15}, wgml_q8_K_deq, wgml_q8_K_quant},
    [WGML_QT_IQ4_NL] = {{"iq4_nl", 32, 18, 20}, iq4_nl_deq, iq4_nl_quant},
    [WGML_QT_MXFP4] = {{"mxfp4", 32, 17, 39}, mxfp4_deq, mxfp4_quant},
};

const wgml_qtype_traits *wgml_qtype_get(wgml_qtype t)
{
    /* compare as unsigned: an enum may be signed, and (wgml_qtype)-1 must
     * not index the table */
    if ((unsigned)t >= (unsigned)WGML_QT_COUNT)
        return NULL;
    return &k_impl[t].traits;
}

/* Shared argument validation; returns the impl or NULL. */
static const qtype_impl *check_args(wgml_qtype t, const void *a, const void *b, int64_t n)
{
    if ((unsigned)t >= (unsigned)WGML_QT_COUNT || !a || !b || n < 0)
        return NULL;
    const qtype_impl *q = &k_impl[t];
    if (n % q->traits.block_elems != 0)
        return NULL;
    return q;
}

int wg_dequantize_ref(wgml_qtype t, const void *src, float *dst, int64_t n)
{
    const qtype_impl *q = check_args(t, src, dst, n);
    if (!q)
        return -1;
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / q->traits.block_elems; ++i)
        q->deq(b + i * q->traits.block_bytes, dst + i * q->traits.block_elems);
    return 0;
}

int wg_quantize_ref(wgml_qtype t, const float *src, void *dst, int64_t n)
{
    const qtype_impl *q = check_args(t, src, dst, n);
    if (!q)
        return -1;
    uint8_t *b = dst;
    for (int64_t i = 0; i < n / q->traits.block_elems; ++i)
        q->quant(src + i * q->traits.block_elems, b + i * q->traits.block_bytes);
    return 0;
}
