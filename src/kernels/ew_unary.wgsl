// out = f(x) for the unary ops of wgml_unary (one per OP_* define); float
// dtypes compute in f32, integer ones in i32/u32.  p.fp.x / p.fp.y carry
// the op's parameters (slope, alpha, clamp bounds, scale and bias).
#include "ew_common.wgsl"
#include "math.wgsl"
#tensor a 1 A_DT A_MODE
#tensor o 2 O_DT O_MODE

fn f(x: a_T) -> o_T {
    let p0 = p.fp.x;
    let p1 = p.fp.y;
#if FLOAT
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
    return log(x);
#endif
#if OP_LOG1P
    return wg_log1p(x);
#endif
#if OP_SQRT
    return sqrt(x);
#endif
#if OP_RSQRT
    return 1.0 / sqrt(x);
#endif
#if OP_SQR
    return x * x;
#endif
#if OP_SIN
    return sin(x);
#endif
#if OP_COS
    return cos(x);
#endif
#if OP_TANH
    return wg_tanh(x);
#endif
#if OP_SIGMOID
    return wg_sigmoid(x);
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
    return 0.5 * x * (1.0 + wg_erf(x * 0.7071067811865476));
#endif
#if OP_GELU_TANH
    return 0.5 * x * (1.0 + wg_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
#endif
#if OP_GELU_QUICK
    return x * wg_sigmoid(1.702 * x);
#endif
#if OP_SILU
    return x * wg_sigmoid(x);
#endif
#if OP_SOFTPLUS
    return wg_softplus(x);
#endif
#if OP_MISH
    return x * wg_tanh(wg_softplus(x));
#endif
#if OP_HARDSWISH
    return x * clamp(x + 3.0, 0.0, 6.0) / 6.0;
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
    return 1.0 / x;
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
