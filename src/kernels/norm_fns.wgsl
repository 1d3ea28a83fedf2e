// The RMS and L2 norms' scale, shared by norm.wgsl and the product's norm
// tail (matvec_ntail.wgsl), so both treat a NaN row alike.
// The row's scale, NaN when its statistic is (a NaN in the row).
fn nan_scale(scale: f32, stat_nan: bool) -> f32 {
    return select(scale, nan_of(0u), stat_nan);
}

// RMS (rms = true) or L2 scale from the row's sum of squares.
fn ss_scale(ss: f32, n: u32, eps: f32, rms: bool) -> f32 {
    return nan_scale(select(1.0 / max(sqrt(ss), eps), inverseSqrt(ss / f32(n) + eps), rms), is_nan(ss));
}
