// out = a (op) b with broadcasting already folded into the strides.
// Arithmetic keeps the operands' compute type; comparisons (CMP) write
// bool.  NaN rules and MOD semantics are wgml.h's.
#include "ew_common.wgsl"
#include "ew_float.wgsl"
#tensor a 1 A_DT A_MODE
#tensor b 2 B_DT B_MODE
#tensor o 3 O_DT O_MODE

#if FLOAT
// The result when x or y is NaN, decided before the op (on the bits: see
// ew_float.wgsl): comparisons are false except NE; POW(x, 0) and
// POW(1, y) are 1; everything else returns the NaN operand.
fn nan_case(x: f32, y: f32) -> o_T {
#if CMP
#if OP_NE
    return 1u;
#else
    return 0u;
#endif
#else
#if OP_POW
    if ((bitcast<u32>(y) & 0x7fffffffu) == 0u || bitcast<u32>(x) == 0x3f800000u) {
        return 1.0;
    }
#endif
    return select(y, x, ew_is_nan(x));
#endif
}

fn fpow(x: f32, y: f32) -> f32 {
    // pow(+-0 exponent) and pow(1, y) are 1, and so is pow(-1, +-inf)
    // (C, numpy): WGSL's pow is exp2(y log2 x), NaN for inf * 0.
    if (y == 0.0 || x == 1.0 || (x == -1.0 && ew_is_inf(y))) {
        return 1.0;
    }
    if (x == 0.0) {
        return select(0.0, bitcast<f32>(0x7f800000u), y < 0.0);
    }
    let m = pow(abs(x), y);
    if (x > 0.0) {
        return m;
    }
    if (y != trunc(y)) {
        return bitcast<f32>(0x7fc00000u);   // negative base, fractional power
    }
    let odd = abs(y) < 16777216.0 && (i32(y) & 1) == 1;
    return select(m, -m, odd);
}
#else
fn ipow(x: a_T, y: a_T) -> a_T {
    var r = a_T(1);
    var b = x;
#if SIGNED
    if (y < 0) {
        if (x == 1) { return 1; }
        if (x == -1) { return select(1, -1, (y & 1) == 1); }
        return 0;
    }
#endif
    var e = u32(y);
    for (var k = 0u; k < 32u; k++) {
        if (e == 0u) {
            break;
        }
        if ((e & 1u) == 1u) {
            r = r * b;
        }
        b = b * b;
        e = e >> 1u;
    }
    return r;
}
#endif

#if FLOAT
#if OP_MOD
// fmod(x, y) exactly, on the bits: the remainder of two floats is always
// representable, but x - y * floor(x / y) in f32 is not computed exactly
// (WGSL's division is good to 2.5 ulp, the product rounds) and was a
// whole period off wherever x / y rounded to an integer.  Long division of
// the significands instead: with x = mx 2^ex, y = my 2^ey (mx, my < 2^24
// integers), r = mx 2^(ex - ey) mod my, taking the exponent gap 8 bits at
// a time (r < my < 2^24, so r << 8 fits a u32; at most 32 steps, 0 to 3
// for |x / y| < 2^24).  x finite, y nonzero (inf allowed), neither NaN.
fn fmod_exact(x: f32, y: f32) -> f32 {
    let ax = bitcast<u32>(x) & 0x7fffffffu;
    let ay = bitcast<u32>(y) & 0x7fffffffu;
    let sx = bitcast<u32>(x) & 0x80000000u;
    if (ax < ay) {
        return x;
    }
    // m 2^(e - 150) with e >= 1; subnormals have e = 1 and no hidden bit
    let fx = ax >> 23u;
    let fy = ay >> 23u;
    let mx = (ax & 0x7fffffu) | select(0x800000u, 0u, fx == 0u);
    let my = (ay & 0x7fffffu) | select(0x800000u, 0u, fy == 0u);
    let ey = max(fy, 1u);
    var d = max(fx, 1u) - ey;  // ax >= ay, so ex >= ey
    var r = mx % my;
    loop {
        if (d == 0u || r == 0u) {
            break;
        }
        let s = min(d, 8u);
        r = (r << s) % my;
        d = d - s;
    }
    if (r == 0u) {
        return bitcast<f32>(sx);
    }
    // r 2^(ey - 150): normalise (top bit to bit 23), or subnormal
    let lz = countLeadingZeros(r) - 8u;
    if (ey > lz) {
        return bitcast<f32>(sx | ((ey - lz) << 23u) | ((r << lz) & 0x7fffffu));
    }
    return bitcast<f32>(sx | (r << (ey - 1u)));
}

// numpy's remainder: fmod moved to the divisor's sign by one f32 add
// (numpy adds in the dtype too), a zero result with the divisor's sign;
// NaN for x = +-inf or y = +-0 (NaN operands were handled before).
fn fmod_numpy(x: f32, y: f32) -> f32 {
    let sy = bitcast<u32>(y) & 0x80000000u;
    if (ew_is_inf(x) || (bitcast<u32>(y) & 0x7fffffffu) == 0u) {
        return ew_nan();
    }
    let r = fmod_exact(x, y);
    let br = bitcast<u32>(r);
    if ((br & 0x7fffffffu) == 0u) {
        return bitcast<f32>(sy);
    }
    if ((br & 0x80000000u) != sy) {
        return r + y;
    }
    return r;
}
#endif
#endif

fn f(x: a_T, y: a_T) -> o_T {
#if FLOAT
    if (ew_is_nan(x) || ew_is_nan(y)) {
        return nan_case(x, y);
    }
#endif
#if OP_ADD
    return x + y;
#endif
#if OP_SUB
    return x - y;
#endif
#if OP_MUL
    return x * y;
#endif
#if OP_DIV
#if FLOAT
    return x / y;
#else
    // floor division (numpy //); division by 0 gives 0
    if (y == a_T(0)) {
        return a_T(0);
    }
    var q = x / y;
#if SIGNED
    if (q * y != x && ((x < 0) != (y < 0))) {
        q = q - 1;
    }
#endif
    return q;
#endif
#endif
#if OP_POW
#if FLOAT
    return fpow(x, y);
#else
    return ipow(x, y);
#endif
#endif
#if OP_MAX
    return max(x, y);
#endif
#if OP_MIN
    return min(x, y);
#endif
#if OP_MOD
    // result takes the sign of the divisor (numpy / Python)
#if FLOAT
    return fmod_numpy(x, y);
#else
    if (y == a_T(0)) {
        return a_T(0);
    }
    // Not `%`: Vulkan leaves OpSRem undefined for negative operands (an
    // H100 returned wrong values); truncating division is defined.
    var r = x - (x / y) * y;
#if SIGNED
    if (r != 0 && ((r < 0) != (y < 0))) {
        r = r + y;
    }
#endif
    return r;
#endif
#endif
#if OP_AND
    return x & y;
#endif
#if OP_OR
    return x | y;
#endif
#if OP_XOR
    return x ^ y;
#endif
#if OP_EQ
    return select(0u, 1u, x == y);
#endif
#if OP_NE
    return select(0u, 1u, x != y);
#endif
#if OP_LT
    return select(0u, 1u, x < y);
#endif
#if OP_LE
    return select(0u, 1u, x <= y);
#endif
#if OP_GT
    return select(0u, 1u, x > y);
#endif
#if OP_GE
    return select(0u, 1u, x >= y);
#endif
}

fn ew_one(i: u32) {
#if CONTIG
    o_st(p.offs[2] + i, f(a_ld(p.offs[0] + i), b_ld(p.offs[1] + i)));
#else
    let c = ew_coords(i);
    o_st(ew_at(2u, c), f(a_ld(ew_at(0u, c)), b_ld(ew_at(1u, c))));
#endif
}

#if VEC4
fn ew_four(v: u32) {
    let x = a_ld4((p.offs[0] >> 2u) + v);
    let y = b_ld4((p.offs[1] >> 2u) + v);
    o_st4((p.offs[2] >> 2u) + v, vec4<o_T>(f(x.x, y.x), f(x.y, y.y), f(x.z, y.z), f(x.w, y.w)));
}
#endif

#include "ew_main.wgsl"
