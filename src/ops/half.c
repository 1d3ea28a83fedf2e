#include "half.h"

#include <string.h>

static uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float float_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float wg_f16_to_f32(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) {
        float v = (float)m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
        return s ? -v : v;
    }
    if (e == 31)
        return float_of(s | 0x7f800000u | (m << 13));
    return float_of(s | ((e + 112) << 23) | (m << 13));
}

uint16_t wg_f32_to_f16(float f)
{
    uint32_t b = bits_of(f), s = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (uint16_t)(s | 0x7e00u);
    if (a >= 0x477ff000u) /* rounds to >= 65520: inf */
        return (uint16_t)(s | 0x7c00u);
    if (a >= 0x38800000u) { /* normal */
        uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
        return (uint16_t)(s | ((r - 0x38000000u) >> 13));
    }
    uint32_t e = a >> 23, shift = 126 - e;
    if (e == 0 || shift > 24)
        return (uint16_t)s;
    uint32_t m = (a & 0x7fffffu) | 0x800000u, r = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u)))
        r++;
    return (uint16_t)(s | r);
}

float wg_bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

uint16_t wg_f32_to_bf16(float f)
{
    uint32_t b = bits_of(f);
    if ((b & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((b >> 16) | 0x40u);
    return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
