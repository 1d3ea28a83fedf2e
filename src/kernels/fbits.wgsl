// Float tests on bits, and a NaN (rows.wgsl, reduce.wgsl, attention.wgsl;
// the product's norm tail).
// Tests on bits: compilers may assume floats are never infinite or NaN
// (and WGSL's max/min/clamp of a NaN may return the other operand).
fn is_ninf(v: f32) -> bool {
    return bitcast<u32>(v) == 0xff800000u;
}
fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}
// A quiet NaN, from a parameter so no const-expression evaluates to NaN.
fn nan_of(bits: u32) -> f32 {
    return bitcast<f32>(bits | 0x7fc00000u);
}
