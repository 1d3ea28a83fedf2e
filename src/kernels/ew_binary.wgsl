// out = a (op) b with broadcasting already folded into the strides.
// Arithmetic keeps the operands' compute type; comparisons write bool.
#include "ew_common.wgsl"
#tensor a 1 A_DT A_MODE
#tensor b 2 B_DT B_MODE
#tensor o 3 O_DT O_MODE

fn is_nan(x: f32) -> bool {
    // NaN is the only value whose exponent is all ones with a mantissa.
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

#if FLOAT
fn fpow(x: f32, y: f32) -> f32 {
    if (y == 0.0) {
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

fn f(x: a_T, y: a_T) -> o_T {
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
#if FLOAT
    if (is_nan(x) || is_nan(y)) {
        return x + y;
    }
#endif
    return max(x, y);
#endif
#if OP_MIN
#if FLOAT
    if (is_nan(x) || is_nan(y)) {
        return x + y;
    }
#endif
    return min(x, y);
#endif
#if OP_MOD
    // result takes the sign of the divisor (numpy / Python)
#if FLOAT
    // WGSL division is approximate (2.5 ulp), so floor(x / y) can be off by
    // one near integers: bring the remainder back into [0, |y|) * sign(y).
    var r = x - y * floor(x / y);
    if (y > 0.0) {
        if (r < 0.0) { r = r + y; }
        if (r >= y) { r = r - y; }
    } else {
        if (r > 0.0) { r = r + y; }
        if (r <= y) { r = r - y; }
    }
    return r;
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
