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

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
#if VEC4
#ifdef CAST
    let v = ew_vec(wid, nwg, li);
    if (ew_full(v)) {
        let x = a_ld4((p.offs[0] >> 2u) + v);
        o_st4((p.offs[1] >> 2u) + v, vec4<o_T>(conv(x.x), conv(x.y), conv(x.z), conv(x.w)));
        return;
    }
    for (var k = 0u; k < 4u; k++) {
        let i = v * 4u + k;
        if (i < p.n) {
            o_st(p.offs[1] + i, conv(a_ld(p.offs[0] + i)));
        }
    }
    return;
#endif
#endif
    let base = ew_base(wid, nwg, li);
    for (var j = 0u; j < EW_PER_THREAD; j++) {
        let i = base + j * EW_WG;
        if (i >= p.n) {
            return;
        }
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
}
