/*
 * Host-side element access for CPU references and tests: any plain dtype
 * read as double, written from double with wgml_cast's rules.  The 16-bit
 * float conversions are quant_ref.c's (tested exhaustively there).
 */
#include "ops.h"
#include "quant.h"

#include <math.h>
#include <string.h>

double wg_host_get(wgml_dtype t, const void *data, size_t i)
{
    const uint8_t *p = data;
    switch (t) {
    case WGML_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
    case WGML_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return wgml_fp16_to_fp32(h); }
    case WGML_BF16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return wgml_bf16_to_fp32(h); }
    case WGML_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case WGML_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case WGML_I8: return (int8_t)p[i];
    case WGML_U8: return p[i];
    case WGML_BOOL: return p[i] != 0;
    default: return NAN;
    }
}

/* float -> integer: truncate toward zero, saturate, NaN -> 0 */
static double sat(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

void wg_host_set(wgml_dtype t, void *data, size_t i, double v)
{
    uint8_t *p = data;
    switch (t) {
    case WGML_F32: { float f = (float)v; memcpy(p + 4 * i, &f, 4); break; }
    case WGML_F16: { uint16_t h = wgml_fp32_to_fp16((float)v); memcpy(p + 2 * i, &h, 2); break; }
    case WGML_BF16: { uint16_t h = wgml_fp32_to_bf16((float)v); memcpy(p + 2 * i, &h, 2); break; }
    case WGML_I32: { int32_t x = (int32_t)sat(v, -2147483648.0, 2147483647.0); memcpy(p + 4 * i, &x, 4); break; }
    case WGML_U32: { uint32_t x = (uint32_t)sat(v, 0, 4294967295.0); memcpy(p + 4 * i, &x, 4); break; }
    case WGML_I8: p[i] = (uint8_t)(int8_t)sat(v, -128, 127); break;
    case WGML_U8: p[i] = (uint8_t)sat(v, 0, 255); break;
    case WGML_BOOL: p[i] = v != 0 || isnan(v); break;
    default: break;
    }
}

uint32_t wg_value_bits(wgml_dtype t, double value)
{
    uint8_t tmp[8];
    wg_host_set(t, tmp, 0, value);
    double v = wg_host_get(t, tmp, 0);
    uint32_t bits;
    int kind = wg_dtype(t)->kind;
    if (kind == WG_KIND_FLOAT) {
        float f = (float)v;
        memcpy(&bits, &f, 4);
    } else if (kind == WG_KIND_INT) {
        int32_t i = (int32_t)v;
        memcpy(&bits, &i, 4);
    } else {
        bits = (uint32_t)v;
    }
    return bits;
}
