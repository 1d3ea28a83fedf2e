// Conversion between plain dtypes (rules in wgml.h, wgml_cast), strided
// copy (same dtype), fill and where.  A_KIND / O_KIND: F float, I signed,
// U unsigned, B bool.  O_MIN / O_MAX bound float -> int saturation.
#include "ew_common.wgsl"

#ifdef WHERE
#tensor c 1 C_DT C_MODE
#tensor a 2 A_DT A_MODE
#tensor b 3 B_DT B_MODE
#tensor o 4 O_DT O_MODE
#endif
#ifdef CAST
#tensor a 1 A_DT A_MODE
#tensor o 2 O_DT O_MODE
#endif
#ifdef FILL
#tensor o 1 O_DT O_MODE
#endif

#ifdef CAST
fn conv(x: a_T) -> o_T {
#if O_BOOL
#if A_FLOAT
    return select(0u, 1u, x != 0.0 || (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u);
#else
    return select(0u, 1u, x != a_T(0));
#endif
#endif
#if O_FLOAT
    return f32(x);
#endif
#if O_INT
#if A_FLOAT
    // truncate toward zero, saturate, NaN -> 0
    if ((bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u) {
        return o_T(0);
    }
    let t = trunc(x);
    if (t <= f32({{O_MIN}})) {
        return o_T({{O_MIN}});
    }
    if (t >= f32({{O_MAX}})) {
        return o_T({{O_MAX}});
    }
    return o_T(t);
#else
    // integers wrap modulo 2^bits: reinterpret, the store keeps low bits
    return bitcast<o_T>(x);
#endif
#endif
}
#endif

fn ew_one(i: u32) {
#ifdef CAST
    o_st(ew_index(1u, i), conv(a_ld(ew_index(0u, i))));
#endif
#ifdef FILL
    o_st(ew_index(0u, i), bitcast<o_T>(p.ip.x));
#endif
#ifdef WHERE
    let k = ew_coords(i);
    o_st(ew_at(3u, k), select(b_ld(ew_at(2u, k)), a_ld(ew_at(1u, k)), c_ld(ew_at(0u, k)) != 0u));
#endif
}

#if VEC4
fn ew_four(v: u32) {
    let x = a_ld4((p.offs[0] >> 2u) + v);
    o_st4((p.offs[1] >> 2u) + v, vec4<o_T>(conv(x.x), conv(x.y), conv(x.z), conv(x.w)));
}
#endif

#include "ew_main.wgsl"
