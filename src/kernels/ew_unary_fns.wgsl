// The float unary ops of wgml_unary as functions u_<OP>(x, p0, p1), each
// behind its U_<OP> define: a kernel compiles only the ones it calls (one
// for wgml_unary, several for a graph's fused chain).  Float dtypes
// compute in f32; every op maps NaN to NaN, decided on the bits first
// (ew_float.wgsl says why).

#if U_ABS
fn u_ABS(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return abs(x);
}
#endif
#if U_NEG
fn u_NEG(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return -x;
}
#endif
#if U_SIGN
fn u_SIGN(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return sign(x);
}
#endif
#if U_EXP
fn u_EXP(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return exp(x);
}
#endif
#if U_EXPM1
fn u_EXPM1(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return wg_expm1(x);
}
#endif
#if U_LOG
fn u_LOG(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    if (x <= 0.0) {
        return select(ew_nan(), ew_inf(true), x == 0.0);
    }
    return log(x);
}
#endif
#if U_LOG1P
fn u_LOG1P(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    if (x <= -1.0) {
        return select(ew_nan(), ew_inf(true), x == -1.0);
    }
    return wg_log1p(x);
}
#endif
#if U_SQRT
fn u_SQRT(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return select(sqrt(x), ew_nan(), x < 0.0);
}
#endif
#if U_RSQRT
fn u_RSQRT(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return select(ew_recip(sqrt(x)), ew_nan(), x < 0.0);
}
#endif
#if U_SQR
fn u_SQR(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return x * x;
}
#endif
#if U_SIN
fn u_SIN(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return select(sin(x), ew_nan(), ew_is_inf(x));
}
#endif
#if U_COS
fn u_COS(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return select(cos(x), ew_nan(), ew_is_inf(x));
}
#endif
#if U_TANH
fn u_TANH(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return ew_tanh(x);
}
#endif
#if U_SIGMOID
fn u_SIGMOID(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return ew_mul_sigmoid(1.0, x);
}
#endif
#if U_RELU
fn u_RELU(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return max(x, 0.0);
}
#endif
#if U_LEAKY_RELU
fn u_LEAKY_RELU(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return select(p0 * x, x, x > 0.0);
}
#endif
#if U_ELU
fn u_ELU(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return select(p0 * wg_expm1(x), x, x > 0.0);
}
#endif
#if U_SELU
fn u_SELU(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return 1.0507009873554805 * select(1.6732632423543772 * wg_expm1(x), x, x > 0.0);
}
#endif
#if U_GELU_ERF
fn u_GELU_ERF(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return ew_gelu_erf(x);
}
#endif
#if U_GELU_TANH
fn u_GELU_TANH(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    // 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3)
    return ew_mul_sigmoid(x, x * (1.5957691216057308 + 0.07135481627260025 * x * x));
}
#endif
#if U_GELU_QUICK
fn u_GELU_QUICK(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return ew_mul_sigmoid(x, 1.702 * x);
}
#endif
#if U_SILU
fn u_SILU(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return ew_mul_sigmoid(x, x);
}
#endif
#if U_SOFTPLUS
fn u_SOFTPLUS(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return ew_softplus(x);
}
#endif
#if U_MISH
fn u_MISH(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return ew_mish(x);
}
#endif
#if U_HARDSWISH
fn u_HARDSWISH(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    // the outer pieces explicitly: x * 0 is NaN at -inf, and x * 6 / 6
    // need not give x back
    if (x <= -3.0) {
        return bitcast<f32>(0x80000000u); // -0, the sign of x * 0
    }
    if (x >= 3.0) {
        return x;
    }
    return x * (x + 3.0) * 0.16666667;
}
#endif
#if U_HARDSIGMOID
fn u_HARDSIGMOID(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return clamp((x + 3.0) / 6.0, 0.0, 1.0);
}
#endif
#if U_STEP
fn u_STEP(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return select(0.0, 1.0, x > 0.0);
}
#endif
#if U_CLAMP
fn u_CLAMP(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return min(max(x, p0), p1);
}
#endif
#if U_FLOOR
fn u_FLOOR(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return floor(x);
}
#endif
#if U_CEIL
fn u_CEIL(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return ceil(x);
}
#endif
#if U_ROUND
fn u_ROUND(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return round(x);
}
#endif
#if U_TRUNC
fn u_TRUNC(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return trunc(x);
}
#endif
#if U_RECIPROCAL
fn u_RECIPROCAL(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return ew_recip(x);
}
#endif
#if U_ERF
fn u_ERF(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return wg_erf(x);
}
#endif
#if U_SCALE
fn u_SCALE(x: f32, p0: f32, p1: f32) -> f32 {
    if (ew_is_nan(x)) {
        return x;
    }
    return x * p0 + p1;
}
#endif
