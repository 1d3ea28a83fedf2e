// Rotary embedding's angle arithmetic, shared by the rope kernel
// (rope.wgsl) and the one-dispatch product's rope epilogue
// (matvec_rope.wgsl), so that a fused decode step rotates by the very
// angles the unfused rope would.

// sin and cos of t, both accurate to about one f32 ulp for any |t| up to
// ~1e5 (WGSL's own sin/cos are only specified to 2^-11 inside [-pi, pi]
// and not at all outside).  Reduction by pi/2 in two parts: PIO2_HI has 8
// significant bits, so q * PIO2_HI is exact for |q| < 2^16 and t - q * HI
// is exact too (Sterbenz); Taylor series on |r| <= pi/4 then truncate below
// 2e-9.
fn rope_sincos(t: f32) -> vec2<f32> {
    let q = round(t * 0.6366197723675814);
    let r = (t - q * 1.5703125) - q * 4.8382679489661923e-4;
    let z = r * r;
    let sn = r + r * z * (-0.16666666666666666 + z * (0.008333333333333333 + z * (-1.984126984126984e-4 +
             z * 2.7557319223985893e-6)));
    let cs = 1.0 + z * (-0.5 + z * (0.041666666666666664 + z * (-0.001388888888888889 +
             z * (2.48015873015873e-5 + z * (-2.755731922398589e-7)))));
    // quadrant q mod 4 by selects, not a switch: no divergent branches
    let k = u32(i32(q) & 3);
    let swap = (k & 1u) == 1u;
    let v = select(vec2<f32>(sn, cs), vec2<f32>(cs, sn), swap);
    let sg = vec2<f32>(select(1.0, -1.0, k >= 2u), select(1.0, -1.0, k == 1u || k == 2u));
    return v * sg;
}

// freq_base^(-2i/n_dims) = 2^(i*k): k is split so that i * k_hi is exact
// (k_hi has 12 significant bits and i < 2^12); exp2 then only sees the
// fraction, where its error is a few ulp instead of growing with |i*k|.
fn rope_inv_freq(i: u32, k: vec2<f32>) -> f32 {
    let fi = f32(i);
    let e = fi * k.x;
    let n = floor(e);
    return ldexp(exp2((e - n) + fi * k.y), i32(n));
}

// theta = pos * rope_rate(i) (before freq_factors) for pair i: the
// frequency scaled by freq_scale, then YaRN: theta_interp * (1 - mix) +
// theta_extrap * mix = theta_extrap * (freq_scale * (1 - mix) + mix).
// f0: k_hi, k_lo, freq_scale, ext_factor; f1: corr_lo, corr_hi (the host's
// rope constants, src/ops/rope.c).
fn rope_rate(i: u32, f0: vec4<f32>, f1: vec4<f32>) -> f32 {
    var g = f0.z;
    if (f0.w != 0.0) {
        let y = (f32(i) - f1.x) / max(0.001, f1.y - f1.x);
        let mix = (1.0 - clamp(y, 0.0, 1.0)) * f0.w;
        g = f0.z * (1.0 - mix) + mix;
    }
    return rope_inv_freq(i, f0.xy) * g;
}
