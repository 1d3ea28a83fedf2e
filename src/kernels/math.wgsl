// Float helpers WGSL lacks or gets wrong at the edges.

// log(1 + x) accurate for tiny x (Goldberg): the rounding error of 1 + x
// cancels in the ratio.
fn wg_log1p(x: f32) -> f32 {
    let u = 1.0 + x;
    if (u == 1.0) {
        return x;
    }
    return log(u) * x / (u - 1.0);
}

// exp(x) - 1 accurate for tiny x (Kahan).
fn wg_expm1(x: f32) -> f32 {
    if (abs(x) < 1e-5) {
        return x + 0.5 * x * x;
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
