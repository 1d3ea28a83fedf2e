// Float helpers of the elementwise kernels (ew_unary, ew_binary): NaN and
// infinity tests on the bits, and activations written to keep relative
// accuracy in both tails on any device (wgml.h states what holds).
//
// Bits, because WGSL and Vulkan let a driver assume that no NaN or
// infinity reaches float instructions: what comparisons, clamp, sign or
// tanh do with NaN is the hardware's business (tanh(NaN) gave -1 here).
// Integer tests on the bits cannot be assumed away.
//
// No builtin tanh, because NVIDIA's does not reach +-1 (1 + tanh(u) stays
// ~1e-7 for u << 0, and gelu_tanh multiplied that residue by x) and
// lavapipe's loses relative accuracy near 0.  And exp(z) is subnormal
// below z = -87.3, where a device may flush it (NVIDIA's exp does), so a
// product m e^z that is itself normal goes through ew_exp_mul.
#include "math.wgsl"

fn ew_is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn ew_is_inf(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u;
}

fn ew_nan() -> f32 {
    return bitcast<f32>(0x7fc00000u);
}

// +inf, or -inf when neg
fn ew_inf(neg: bool) -> f32 {
    return bitcast<f32>(select(0x7f800000u, 0xff800000u, neg));
}

// a zero with m's sign
fn ew_zero_like(m: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(m) & 0x80000000u);
}

// 1 / x, +-inf at +-0 (WGSL leaves division by zero indeterminate)
fn ew_recip(x: f32) -> f32 {
    if ((bitcast<u32>(x) & 0x7fffffffu) == 0u) {
        return ew_inf(bitcast<u32>(x) != 0u);
    }
    return 1.0 / x;
}

// m e^g without a subnormal e^g where the product is normal.  Below
// g = -80, e^g = K e^(g + C) with C = f32(64 ln 2) and K = 2^-64 e^(64 ln 2 - C)
// rounded (the 1.2e-7 by which C misses 64 ln 2 is folded into K).  g + C
// is exact for g in [-108, -80) (both are multiples of 2^-18 and the sum
// is below 64 in magnitude), which covers every g where a caller's
// product is normal: their |m| is below ~100 there, so that needs g > -92.
// Below -200 even |m| = 3.4e38 gives 0: a zero of m's sign (also for
// infinite m, where m * 0 would be NaN).
fn ew_exp_mul(g: f32, m: f32) -> f32 {
    if (g >= -80.0) {
        return m * exp(g);
    }
    if (g < -200.0) {
        return ew_zero_like(m);
    }
    return (m * 5.42101022e-20) * exp(g + 44.3614197);
}

// m sigmoid(z) for z = z(x), m = x or 1: for z >= 0 m / (1 + e^-z), where
// e^-z <= 1 cannot cancel; below, m e^z / (1 + e^z), whose numerator keeps
// relative accuracy down to the smallest normal result (ew_exp_mul) and
// whose denominator is 1 once e^z is tiny.  No tanh, no 1 - (...).
fn ew_mul_sigmoid(m: f32, z: f32) -> f32 {
    if (z >= 0.0) {
        return m / (1.0 + exp(-min(z, 200.0)));
    }
    return ew_exp_mul(z, m) / (1.0 + exp(max(z, -200.0)));
}

// tanh to a few ulps with relative accuracy everywhere: an odd polynomial
// on |x| < 0.55 (fitted to tanh's relative error, 0.8 ulp in f32), beyond
// (1 - e)/(1 + e), e = exp(-2|x|) <= 1/3, which loses at most a factor 0.75
// of exp's error and gives exactly 1 once e < 2^-25.
fn ew_tanh(x: f32) -> f32 {
    let a = abs(x);
    if (a < 0.55) {
        let s = x * x;
        let q = -0.33333331 + s * (0.13333292 + s * (-0.053959429 + s * (0.021781452 + s * (-0.0084100394 +
                s * 0.0023916168))));
        return x + x * s * q;
    }
    let e = exp(-2.0 * min(a, 10.0));
    let t = (1.0 - e) / (1.0 + e);
    return select(t, -t, x < 0.0);
}

// log(1 + e^x): for x > 0 x + log1p(e^-x) (no overflow, e^-x <= 1); else
// log1p(e^x) ~ e^x, subnormal (and perhaps flushed) only where the result
// itself is.
fn ew_softplus(x: f32) -> f32 {
    if (x > 0.0) {
        return x + wg_log1p(exp(-min(x, 200.0)));
    }
    // Below -20, log1p(e^x) = e^x (1 - e^x / 2 ...) is e^x to 1e-9, and
    // e^x goes through ew_exp_mul: NVIDIA's exp(-87.33) flushed to 0 a
    // result (1.18e-38) just above the smallest normal f32.
    if (x < -20.0) {
        return ew_exp_mul(x, 1.0);
    }
    return wg_log1p(exp(x));
}

// x tanh(softplus(x)) = x n / (n + 2), n = e^x (e^x + 2), as tanh(log(1 + e^x))
// = ((1 + e^x)^2 - 1) / ((1 + e^x)^2 + 1).  All terms are positive, so
// nothing cancels: for x >= 0 in w = e^-x (n / (n + 2) =
// (1 + 2w) / (1 + 2w + 2w^2)); below, x e^x times (e^x + 2) / (n + 2).
fn ew_mish(x: f32) -> f32 {
    if (x >= 0.0) {
        let w = exp(-min(x, 200.0));
        return x * (1.0 + 2.0 * w) / (1.0 + 2.0 * w * (1.0 + w));
    }
    let e = exp(max(x, -200.0));
    return ew_exp_mul(x, x) * (e + 2.0) / (e * (e + 2.0) + 2.0);
}

// erfc(a) for a >= 0.5 as t e^g (Numerical Recipes' erfcc, fractional
// error < 1.2e-7), returned as (t, g) so that callers can scale e^g.  a
// is capped at 30, where erfc underflows anyway (no inf arithmetic).
fn ew_erfc_tg(a0: f32) -> vec2<f32> {
    let a = min(a0, 30.0);
    let t = 1.0 / (1.0 + 0.5 * a);
    let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
            t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    return vec2<f32>(t, p - a * a);
}

// x Phi(x) = 0.5 x erfc(-x / sqrt 2): near 0 through erf's series; for
// x > 0 x (1 - erfc / 2) (erfc <= 1 there); for x < 0 0.5 x erfc(|x| / sqrt 2)
// directly, never 1 + erf(x / sqrt 2), which cancels to 0 below x = -5.
fn ew_gelu_erf(x: f32) -> f32 {
    let a = abs(x) * 0.70710678;
    if (a < 0.5) {
        return 0.5 * x * (1.0 + wg_erf(x * 0.70710678));
    }
    let tg = ew_erfc_tg(a);
    if (x > 0.0) {
        return x * (1.0 - 0.5 * tg.x * exp(tg.y));
    }
    return ew_exp_mul(tg.y, 0.5 * x * tg.x);
}
