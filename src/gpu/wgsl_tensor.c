/*
 * The `#tensor` template directive: typed element access for one kernel
 * operand, generated on the host so one kernel template serves every dtype.
 *
 *   #tensor NAME BINDING DTYPE MODE
 *
 * DTYPE is a dtype name or a define key holding one ("f32" ... "bool"), or
 * "u16": raw 16-bit words (compute type u32), for kernels that move f16 or
 * bf16 elements without converting them, so every bit pattern survives;
 * MODE is r, w or rw (or a define key holding one).  It declares the
 * binding and
 *   alias NAME_T = f32 | i32 | u32;      compute type
 *   fn NAME_ld(i: u32) -> NAME_T         element i of the binding
 *   fn NAME_st(i: u32, v: NAME_T)        (w / rw only)
 * and, when the VEC4 define is set or MODE ends in 4 ("r4", "w4", "rw4"),
 * NAME_ld4 / NAME_st4 on vector v (elements 4v .. 4v+3).
 *
 * Kernels using it #include "dtype.wgsl" (the f16/bf16 conversions).
 * Storage is array<u32> so 16- and 8-bit types work without ShaderF16.
 * Sub-word stores go through atomicAnd/atomicOr on the containing word:
 * neighbouring elements written by other threads share that word, and a
 * plain read-modify-write would lose their updates.  With ShaderF16, f16 is
 * declared array<f16> and needs neither unpacking nor atomics.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

typedef struct dt_desc {
    const char *name;
    const char *ct;   /* compute type */
    int bits;
} dt_desc;

static const dt_desc dts[] = {
    {"f32", "f32", 32}, {"f16", "f32", 16}, {"bf16", "f32", 16}, {"i32", "i32", 32},
    {"u32", "u32", 32}, {"i8", "i32", 8},   {"u8", "u32", 8},    {"bool", "u32", 8},
    {"u16", "u32", 16},
};

static const dt_desc *dt_find(const char *name)
{
    for (size_t i = 0; i < sizeof dts / sizeof *dts; i++)
        if (strcmp(dts[i].name, name) == 0)
            return &dts[i];
    return NULL;
}

#define EMIT(...)                                                    \
    do {                                                             \
        int w_ = snprintf(out + n, cap > n ? cap - n : 0, __VA_ARGS__); \
        if (w_ > 0)                                                  \
            n += (size_t)w_;                                         \
    } while (0)

/* VEC4: the binding is an array of 4-element vectors, so contiguous
 * kernels move 16 bytes per access (measured on an H100: a vec4 f32 add
 * ran at 2.90 TB/s against 2.66 for scalar accesses).  NAME_ld/NAME_st
 * still address single elements (the kernels' tails use them); only 32-bit
 * types and native f16 qualify. */
static size_t vec4_accessors(char *out, size_t cap, const char *N, int binding, const dt_desc *d, bool rd, bool wr,
                             bool native_f16, bool *needs_f16)
{
    size_t n = 0;
    const char *acc = rd ? "read" : "read_write";
    if (strcmp(d->name, "f16") == 0) {
        if (!native_f16)
            return 0;
        *needs_f16 = true;
        EMIT("@group(0) @binding(%d) var<storage, %s> %s_buf: array<vec4<f16>>;\n", binding, acc, N);
        EMIT("alias %s_T = f32;\n", N);
        EMIT("fn %s_ld(i: u32) -> f32 { return f32(%s_buf[i >> 2u][i & 3u]); }\n", N, N);
        EMIT("fn %s_ld4(v: u32) -> vec4<f32> { return vec4<f32>(%s_buf[v]); }\n", N, N);
        /* as stored: for kernels computing in f16 (gemm.wgsl's H16) */
        EMIT("fn %s_ld4h(v: u32) -> vec4<f16> { return %s_buf[v]; }\n", N, N);
        if (wr) {
            EMIT("fn %s_h(v: f32) -> f16 {\n"
                 "    if (abs(v) <= 65504.0) { return f16(v); }\n"
                 "    return f16(wg_f16_to_f32(wg_f16_bits(v)));\n"
                 "}\n", N);
            EMIT("fn %s_st(i: u32, v: f32) { %s_buf[i >> 2u][i & 3u] = %s_h(v); }\n", N, N, N);
            /* one test for the vector, not a branch per element: the
             * per-element form cost the f32 -> f16 cast ~3% on an H100 */
            EMIT("fn %s_st4(i: u32, v: vec4<f32>) {\n"
                 "    if (all(abs(v) <= vec4<f32>(65504.0))) { %s_buf[i] = vec4<f16>(v); return; }\n"
                 "    %s_buf[i] = vec4<f16>(%s_h(v.x), %s_h(v.y), %s_h(v.z), %s_h(v.w));\n"
                 "}\n", N, N, N, N, N, N, N);
        }
        return n;
    }
    if (d->bits != 32)
        return 0;
    EMIT("@group(0) @binding(%d) var<storage, %s> %s_buf: array<vec4<u32>>;\n", binding, acc, N);
    EMIT("alias %s_T = %s;\n", N, d->ct);
    EMIT("fn %s_ld(i: u32) -> %s { return bitcast<%s>(%s_buf[i >> 2u][i & 3u]); }\n", N, d->ct, d->ct, N);
    EMIT("fn %s_ld4(v: u32) -> vec4<%s> { return bitcast<vec4<%s>>(%s_buf[v]); }\n", N, d->ct, d->ct, N);
    if (wr) {
        EMIT("fn %s_st(i: u32, v: %s) { %s_buf[i >> 2u][i & 3u] = bitcast<u32>(v); }\n", N, d->ct, N);
        EMIT("fn %s_st4(i: u32, v: vec4<%s>) { %s_buf[i] = bitcast<vec4<u32>>(v); }\n", N, d->ct, N);
    }
    return n;
}

/* Returns the bytes written (or needed), 0 if the dtype or mode is unknown. */
size_t wg_tensor_accessors(char *out, size_t cap, const char *name, int binding, const char *dtype,
                           const char *mode, bool native_f16, bool vec4, bool *needs_f16)
{
    const dt_desc *d = dt_find(dtype);
    bool rd = strcmp(mode, "r") == 0, wr = strcmp(mode, "w") == 0 || strcmp(mode, "rw") == 0;
    if (!d || (!rd && !wr))
        return 0;
    size_t n = 0;
    const char *N = name;
    if (vec4)
        return vec4_accessors(out, cap, N, binding, d, rd, wr, native_f16, needs_f16);
    if (d->bits == 16 && strcmp(d->name, "f16") == 0 && native_f16) {
        *needs_f16 = true;
        EMIT("@group(0) @binding(%d) var<storage, %s> %s_buf: array<f16>;\n", binding, rd ? "read" : "read_write", N);
        EMIT("alias %s_T = f32;\n", N);
        EMIT("fn %s_ld(i: u32) -> f32 { return f32(%s_buf[i]); }\n", N, N);
        /* WGSL leaves out-of-range f32 -> f16 conversion indeterminate: in
         * range the hardware converts (round to nearest even); outside it
         * (and NaN, which fails the test) round by hand, after which the
         * value converts exactly.  (This naga rejects
         * bitcast<vec2<f16>>(u32).x, which would be simpler.) */
        if (wr)
            EMIT("fn %s_st(i: u32, v: f32) {\n"
                 "    if (abs(v) <= 65504.0) { %s_buf[i] = f16(v); return; }\n"
                 "    %s_buf[i] = f16(wg_f16_to_f32(wg_f16_bits(v)));\n"
                 "}\n", N, N, N);
        return n;
    }
    bool atomic = wr && d->bits < 32;
    EMIT("@group(0) @binding(%d) var<storage, %s> %s_buf: array<%s>;\n", binding, rd ? "read" : "read_write", N,
         atomic ? "atomic<u32>" : "u32");
    EMIT("alias %s_T = %s;\n", N, d->ct);
    /* word holding element i */
    if (atomic)
        EMIT("fn %s_word(w: u32) -> u32 { return atomicLoad(&%s_buf[w]); }\n", N, N);
    else
        EMIT("fn %s_word(w: u32) -> u32 { return %s_buf[w]; }\n", N, N);
    if (d->bits == 32) {
        if (strcmp(d->ct, "u32") == 0)
            EMIT("fn %s_ld(i: u32) -> u32 { return %s_buf[i]; }\n", N, N);
        else
            EMIT("fn %s_ld(i: u32) -> %s { return bitcast<%s>(%s_buf[i]); }\n", N, d->ct, d->ct, N);
        if (wr)
            EMIT("fn %s_st(i: u32, v: %s) { %s_buf[i] = bitcast<u32>(v); }\n", N, d->ct, N);
        return n;
    }
    int per = 32 / d->bits;
    EMIT("fn %s_bits(i: u32) -> u32 { return (%s_word(i / %du) >> ((i %% %du) * %du)) & 0x%xu; }\n", N, N, per, per,
         d->bits, (1u << d->bits) - 1);
    if (strcmp(d->name, "f16") == 0)
        EMIT("fn %s_ld(i: u32) -> f32 { return wg_f16_to_f32(%s_bits(i)); }\n", N, N);
    else if (strcmp(d->name, "bf16") == 0)
        EMIT("fn %s_ld(i: u32) -> f32 { return bitcast<f32>(%s_bits(i) << 16u); }\n", N, N);
    else if (strcmp(d->name, "i8") == 0)
        EMIT("fn %s_ld(i: u32) -> i32 { return (bitcast<i32>(%s_bits(i) << 24u)) >> 24u; }\n", N, N);
    else if (strcmp(d->name, "bool") == 0)
        EMIT("fn %s_ld(i: u32) -> u32 { return select(0u, 1u, %s_bits(i) != 0u); }\n", N, N);
    else
        EMIT("fn %s_ld(i: u32) -> u32 { return %s_bits(i); }\n", N, N);
    if (!wr)
        return n;
    /* value -> raw bits */
    if (strcmp(d->name, "f16") == 0)
        EMIT("fn %s_raw(v: f32) -> u32 { return wg_f16_bits(v); }\n", N);
    else if (strcmp(d->name, "bf16") == 0)
        EMIT("fn %s_raw(v: f32) -> u32 { return wg_bf16_bits(v); }\n", N);
    else if (strcmp(d->name, "i8") == 0)
        EMIT("fn %s_raw(v: i32) -> u32 { return bitcast<u32>(v) & 0xffu; }\n", N);
    else if (strcmp(d->name, "bool") == 0)
        EMIT("fn %s_raw(v: u32) -> u32 { return select(0u, 1u, v != 0u); }\n", N);
    else
        EMIT("fn %s_raw(v: u32) -> u32 { return v & 0x%xu; }\n", N, (1u << d->bits) - 1);
    EMIT("fn %s_st(i: u32, v: %s) {\n"
         "    let sh = (i %% %du) * %du;\n"
         "    atomicAnd(&%s_buf[i / %du], ~(0x%xu << sh));\n"
         "    atomicOr(&%s_buf[i / %du], %s_raw(v) << sh);\n"
         "}\n", N, d->ct, per, d->bits, N, per, (1u << d->bits) - 1, N, per, N);
    return n;
}
