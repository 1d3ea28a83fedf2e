// Float helpers WGSL lacks or gets wrong at the edges.

// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]: 2 atanh(s), s = f / (2 + f),
// |s| <= 0.172, as its odd series to s^13 (the next term is ~1e-11 of the
// sum).  Plain arithmetic only: WGSL's log is specified to an absolute
// 2^-21 on [0.5, 2], which is no relative accuracy at all near 1 (an H100
// gave log1p(4.5e-4) 2.6e-4 off through log(1 + x)).
fn wg_log1p_core(f: f32) -> f32 {
    let s = f / (2.0 + f);
    let z = s * s;
    let q = 0.33333333 + z * (0.2 + z * (0.14285714 + z * (0.11111111 + z * (0.09090909 + z * 0.07692308))));
    return 2.0 * (s + s * z * q);
}

// log(1 + x) to a few ulps: the core series near 0; elsewhere u = 1 + x
// split as 2^e m, m in [sqrt(1/2), sqrt(2)), log1p = e ln 2 + core(m - 1)
// (m - 1 is exact) + what the rounding of 1 + x lost, (x - (u - 1)) / u.
fn wg_log1p(x: f32) -> f32 {
    if (x > -0.29289322 && x < 0.41421356) {
        return wg_log1p_core(x);
    }
    let u = 1.0 + x;
    if (!(u > 0.0) || bitcast<u32>(u) == 0x7f800000u) {
        return log(u); // -inf at -1, NaN below, inf at inf
    }
    let fr = frexp(u);
    var m = fr.fract;
    var e = fr.exp;
    if (m < 0.70710678) {
        m = 2.0 * m;
        e = e - 1;
    }
    return f32(e) * 0.69314718 + (wg_log1p_core(m - 1.0) + (x - (u - 1.0)) / u);
}

// exp(x) - 1 to a few ulps: Taylor to x^9 for |x| < ln(2) / 2 (the next
// term is < 1e-11 of the sum), where exp(x) - 1 would cancel; else exp(x) - 1
// loses at most a factor 3.4 of exp's error.
fn wg_expm1(x: f32) -> f32 {
    if (abs(x) < 0.34657359) {
        return x * (1.0 + x * (0.5 + x * (0.16666667 + x * (0.041666668 + x * (0.008333334 + x * (0.0013888889 +
               x * (0.0001984127 + x * (2.4801588e-05 + x * 2.7557319e-06))))))));
    }
    if (x > 88.0) {
        return exp(x);
    }
    return exp(x) - 1.0;
}

// tanh without inf/inf for large |x|: tanh(9) rounds to 1 in f32.
fn wg_tanh(x: f32) -> f32 {
    return tanh(clamp(x, -9.0, 9.0));
}

fn wg_sigmoid(x: f32) -> f32 {
    return 1.0 / (1.0 + exp(-x));
}

// log(1 + e^x), without overflow for large x or loss for very negative x.
fn wg_softplus(x: f32) -> f32 {
    if (x > 20.0) {
        return x;
    }
    return wg_log1p(exp(x));
}

// erf: a Taylor series near 0 (keeps relative accuracy for tiny x), else
// 1 - erfc from a Chebyshev fit with fractional error < 1.2e-7.
fn wg_erf(x: f32) -> f32 {
    let a = abs(x);
    if (a < 0.5) {
        let x2 = x * x;
        return 1.1283791670955126 * x * (1.0 + x2 * (-0.3333333333333333 + x2 * (0.1 + x2 * (-0.023809523809523808 +
               x2 * (0.004629629629629629 + x2 * (-0.0007575757575757576))))));
    }
    let t = 1.0 / (1.0 + 0.5 * a);
    let y = t * exp(-a * a - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
            t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
            t * (-0.82215223 + t * 0.17087277)))))))));
    return select(y - 1.0, 1.0 - y, x >= 0.0);
}
