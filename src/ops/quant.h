/* CPU reference (de)quantisation for GGUF block-quantised tensors.
 *
 * This is the host-side ground truth that GPU dequant/matmul kernels are
 * tested against, and the way wgml turns f32 data into GGUF blocks, so block
 * layouts are bit-exact with ggml/GGUF (the `gguf` PyPI package's numpy code
 * is the oracle in tests/test_quant_ref.c).  Plain C11, no WebGPU types, so
 * it can be linked into tools and tests without the runtime.
 *
 * Floating-point contract: every f32 operation is done in f32 in the same
 * order as the reference, without FMA contraction (quant_ref.c forbids it),
 * so results are identical on every IEEE-754 host.  Inputs to the quantisers
 * must be finite; non-finite inputs give unspecified (but memory-safe) blocks.
 */
#ifndef WGML_QUANT_H
#define WGML_QUANT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum wgml_qtype {
    WGML_QT_Q4_0,
    WGML_QT_Q4_1,
    WGML_QT_Q5_0,
    WGML_QT_Q5_1,
    WGML_QT_Q8_0,
    WGML_QT_Q2_K,
    WGML_QT_Q3_K,
    WGML_QT_Q4_K,
    WGML_QT_Q5_K,
    WGML_QT_Q6_K,
    WGML_QT_Q8_K,
    WGML_QT_IQ4_NL,
    WGML_QT_MXFP4,
    WGML_QT_COUNT
} wgml_qtype;

typedef struct wgml_qtype_traits {
    const char *name;      /* ggml's lower-case name, e.g. "q4_K" */
    uint32_t block_elems;  /* elements per block (32, or QK_K = 256) */
    uint32_t block_bytes;  /* bytes per block, as laid out in a GGUF file */
    uint32_t gguf_type_id; /* ggml_type enum value stored in GGUF tensor info */
} wgml_qtype_traits;

/* Traits of t, or NULL when t is out of range. */
const wgml_qtype_traits *wgml_qtype_get(wgml_qtype t);

/* Decode n elements (n / block_elems whole blocks) from src into dst.
 * Returns 0 on success, -1 on bad arguments (NULL pointer, unknown type,
 * n negative or not a multiple of block_elems).  Bit-exact with ggml. */
int wg_dequantize_ref(wgml_qtype t, const void *src, float *dst, int64_t n);

/* Encode n finite floats into n / block_elems blocks at dst; same argument
 * rules as wg_dequantize_ref.  For Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and MXFP4 the
 * output is byte-identical to gguf's numpy quantiser; Q8_K matches ggml's
 * quantize_row_q8_K_ref.  gguf 0.19.0 has no quantiser for Q2_K..Q6_K and
 * IQ4_NL, so those use wgml's own simple round-to-nearest schemes documented
 * in quant_ref_k.c / quant_ref.c (valid blocks, not ggml's search-based
 * output). */
int wg_quantize_ref(wgml_qtype t, const float *src, void *dst, int64_t n);

/* IEEE binary16 <-> binary32.  Round to nearest even, overflow to inf,
 * subnormals both ways, NaN stays NaN (payload kept where it fits, quiet bit
 * forced when the payload would otherwise vanish). */
float wgml_fp16_to_fp32(uint16_t h);
uint16_t wgml_fp32_to_fp16(float f);

/* bfloat16 <-> binary32.  Round to nearest even; NaN becomes a quiet NaN
 * (same rule as ggml_compute_fp32_to_bf16 and gguf's BF16 quantiser). */
float wgml_bf16_to_fp32(uint16_t h);
uint16_t wgml_fp32_to_bf16(float f);

/* ------------------------------------------------------------------------
 * Internal: shared by quant_ref.c and quant_ref_k.c only.  Kept here rather
 * than in a second header so the quantisation code stays in the files it
 * owns; users of the public API never define WGML_QUANT_INTERNAL.
 * ---------------------------------------------------------------------- */
#ifdef WGML_QUANT_INTERNAL

/* Every GGUF layout stores w-bit fields (w = 1, 2 or 4) so that one byte
 * holds fields of 8/w *different* elements that are `group` apart:
 *   element e = g*(8/w)*group + s*group + l   (0 <= l < group, 0 <= s < 8/w)
 *   lives in byte g*group + l at bit offset s*w.
 * E.g. Q4_0 nibbles: w=4, group=16 (byte j holds elements j and j+16);
 * Q4_K nibbles: w=4, group=32; Q6_K low nibbles: w=4, group=64; Q2_K/Q3_K
 * 2-bit fields and Q6_K high bits: w=2, group=32; Q3_K hmask / Q5_K qh:
 * w=1, group=32; Q5_0/Q5_1 qh (a little-endian u32 with bit j for element
 * j): w=1, group=1.  Writing all of them through these two helpers is what
 * keeps the formats from having hand-unrolled, copy-pasted bit twiddling. */
static inline unsigned wgml_q_field_get(const uint8_t *p, int e, int w, int group)
{
    const int per = 8 / w;
    const int g = e / (per * group), s = (e / group) % per, l = e % group;
    return (unsigned)(p[g * group + l] >> (s * w)) & ((1u << w) - 1u);
}

/* ORs the field in: callers zero the destination bytes first. */
static inline void wgml_q_field_set(uint8_t *p, int e, int w, int group, unsigned v)
{
    const int per = 8 / w;
    const int g = e / (per * group), s = (e / group) % per, l = e % group;
    p[g * group + l] |= (uint8_t)((v & ((1u << w) - 1u)) << (s * w));
}

/* Little-endian scalar fields, independent of host byte order. */
static inline uint16_t wgml_q_rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline void wgml_q_wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline float wgml_q_rdh(const uint8_t *p) /* fp16 field -> f32 */
{
    return wgml_fp16_to_fp32(wgml_q_rd16(p));
}

/* fp16 that is >= f (f >= 0), so that a scale chosen as "range / max_code"
 * still covers the range after it is stored as fp16. */
uint16_t wgml_q_fp16_ceil(float f);

/* Block codecs; `x`/`y` are one block of elements, `b` one block of bytes. */
typedef void (*wgml_q_deq_fn)(const uint8_t *b, float *y);
typedef void (*wgml_q_quant_fn)(const float *x, uint8_t *b);

void wgml_q2_K_deq(const uint8_t *b, float *y);
void wgml_q3_K_deq(const uint8_t *b, float *y);
void wgml_q4_K_deq(const uint8_t *b, float *y);
void wgml_q5_K_deq(const uint8_t *b, float *y);
void wgml_q6_K_deq(const uint8_t *b, float *y);
void wgml_q8_K_deq(const uint8_t *b, float *y);
void wgml_q2_K_quant(const float *x, uint8_t *b);
void wgml_q3_K_quant(const float *x, uint8_t *b);
void wgml_q4_K_quant(const float *x, uint8_t *b);
void wgml_q5_K_quant(const float *x, uint8_t *b);
void wgml_q6_K_quant(const float *x, uint8_t *b);
void wgml_q8_K_quant(const float *x, uint8_t *b);

/* Float ops in both files must round after every operation, exactly like
 * numpy.  Where it matters: gguf's legacy quantisers compute
 * trunc(x*id + bias), and an FMA there flips codes on near-ties (the vector
 * files contain blocks built to catch exactly that).  The dequantisers are
 * immune: their products (fp16 scale x small integers) are exact in f32.
 * GCC honours this pragma even under -ffp-contract=fast; clang honours it
 * unless -ffp-contract=fast is given explicitly (don't build these files
 * with that, nor with -ffast-math; test_quant_ref fails if you do). */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#endif /* WGML_QUANT_INTERNAL */

#ifdef __cplusplus
}
#endif

#endif /* WGML_QUANT_H */
