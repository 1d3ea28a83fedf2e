// out = f(x) for the unary ops of wgml_unary (one per OP_* define); float
// dtypes compute in f32, integer ones in i32/u32.  p.fp.x / p.fp.y carry
// the op's parameters (slope, alpha, clamp bounds, scale and bias).  The
// NaN, infinity and domain rules are wgml.h's; ew_float.wgsl says why they
// are decided on the bits and why the activations avoid tanh.
#include "ew_common.wgsl"
#include "ew_float.wgsl"
#if FLOAT
#include "ew_unary_fns.wgsl"
#endif
#tensor a 1 A_DT A_MODE
#tensor o 2 O_DT O_MODE

fn f(x: a_T) -> o_T {
    let p0 = p.fp.x;
    let p1 = p.fp.y;
#if FLOAT
#if CHAIN
    // a graph's fused chain of float unary ops (src/graph/fuse.c)
    return {{CHAIN}};
#else
    return u_{{UOP}}(x, p0, p1);
#endif
#else
// integer and bool dtypes
#if OP_ABS
    return abs(x);
#endif
#if OP_NEG
    return -x;
#endif
#if OP_SIGN
    return sign(x);
#endif
#if OP_SQR
    return x * x;
#endif
#if OP_RELU
    return max(x, a_T(0));
#endif
#if OP_CLAMP
    return min(max(x, a_T(p.ip.x)), a_T(p.ip.y));
#endif
#if OP_SCALE
    // in f32, then converted like wgml_cast: truncate toward zero,
    // saturate to the dtype's range, NaN -> 0
    let v = f32(x) * p0 + p1;
    if (ew_is_nan(v)) {
        return 0;
    }
    let t = trunc(v);
    if (t <= f32({{O_MIN}})) {
        return {{O_MIN}};
    }
    if (t >= f32({{O_MAX}})) {
        return {{O_MAX}};
    }
    return i32(t);
#endif
#if OP_NOT
#if BOOL
    return 1u - x;
#else
    return ~x;
#endif
#endif
#endif
}

fn ew_one(i: u32) {
    o_st(ew_index(1u, i), f(a_ld(ew_index(0u, i))));
}

#if VEC4
fn ew_four(v: u32) {
    let x = a_ld4((p.offs[0] >> 2u) + v);
    o_st4((p.offs[1] >> 2u) + v, vec4<o_T>(f(x.x), f(x.y), f(x.z), f(x.w)));
}
#endif

#include "ew_main.wgsl"
