// out = f(x) for the unary ops of wgml_unary (one per OP_* define); float
// dtypes compute in f32, integer ones in i32/u32.  p.fp.x / p.fp.y carry
// the op's parameters (slope, alpha, clamp bounds, scale and bias).  The
// NaN, infinity and domain rules are wgml.h's; ew_float.wgsl says why they
// are decided on the bits and why the activations avoid tanh.
#include "ew_common.wgsl"
#include "ew_float.wgsl"
#tensor a 1 A_DT A_MODE
#tensor o 2 O_DT O_MODE

fn f(x: a_T) -> o_T {
    let p0 = p.fp.x;
    let p1 = p.fp.y;
#if FLOAT
    // every float op maps NaN to NaN
    if (ew_is_nan(x)) {
        return x;
    }
#if OP_ABS
    return abs(x);
#endif
#if OP_NEG
    return -x;
#endif
#if OP_SIGN
    return sign(x);
#endif
#if OP_EXP
    return exp(x);
#endif
#if OP_EXPM1
    return wg_expm1(x);
#endif
#if OP_LOG
    if (x <= 0.0) {
        return select(ew_nan(), ew_inf(true), x == 0.0);
    }
    return log(x);
#endif
#if OP_LOG1P
    if (x <= -1.0) {
        return select(ew_nan(), ew_inf(true), x == -1.0);
    }
    return wg_log1p(x);
#endif
#if OP_SQRT
    return select(sqrt(x), ew_nan(), x < 0.0);
#endif
#if OP_RSQRT
    return select(ew_recip(sqrt(x)), ew_nan(), x < 0.0);
#endif
#if OP_SQR
    return x * x;
#endif
#if OP_SIN
    return select(sin(x), ew_nan(), ew_is_inf(x));
#endif
#if OP_COS
    return select(cos(x), ew_nan(), ew_is_inf(x));
#endif
#if OP_TANH
    return ew_tanh(x);
#endif
#if OP_SIGMOID
    return ew_mul_sigmoid(1.0, x);
#endif
#if OP_RELU
    return max(x, 0.0);
#endif
#if OP_LEAKY_RELU
    return select(p0 * x, x, x > 0.0);
#endif
#if OP_ELU
    return select(p0 * wg_expm1(x), x, x > 0.0);
#endif
#if OP_SELU
    return 1.0507009873554805 * select(1.6732632423543772 * wg_expm1(x), x, x > 0.0);
#endif
#if OP_GELU_ERF
    return ew_gelu_erf(x);
#endif
#if OP_GELU_TANH
    // 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3)
    return ew_mul_sigmoid(x, x * (1.5957691216057308 + 0.07135481627260025 * x * x));
#endif
#if OP_GELU_QUICK
    return ew_mul_sigmoid(x, 1.702 * x);
#endif
#if OP_SILU
    return ew_mul_sigmoid(x, x);
#endif
#if OP_SOFTPLUS
    return ew_softplus(x);
#endif
#if OP_MISH
    return ew_mish(x);
#endif
#if OP_HARDSWISH
    // the outer pieces explicitly: x * 0 is NaN at -inf, and x * 6 / 6
    // need not give x back
    if (x <= -3.0) {
        return bitcast<f32>(0x80000000u); // -0, the sign of x * 0
    }
    if (x >= 3.0) {
        return x;
    }
    return x * (x + 3.0) * 0.16666667;
#endif
#if OP_HARDSIGMOID
    return clamp((x + 3.0) / 6.0, 0.0, 1.0);
#endif
#if OP_STEP
    return select(0.0, 1.0, x > 0.0);
#endif
#if OP_CLAMP
    return min(max(x, p0), p1);
#endif
#if OP_FLOOR
    return floor(x);
#endif
#if OP_CEIL
    return ceil(x);
#endif
#if OP_ROUND
    return round(x);
#endif
#if OP_TRUNC
    return trunc(x);
#endif
#if OP_RECIPROCAL
    return ew_recip(x);
#endif
#if OP_ERF
    return wg_erf(x);
#endif
#if OP_SCALE
    return x * p0 + p1;
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
