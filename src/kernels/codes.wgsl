// Quant codes packed in bytes, to floats: shared by the mat-vec decoders
// (matvec.wgsl) and the wide dequantisers (dequant.wgsl).
// Fields of four consecutive bytes of word w: (byte j >> sh) & mask.
fn fld4(w: u32, sh: u32, mask: u32) -> vec4<u32> {
    return (vec4<u32>(w) >> (vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(sh))) & vec4<u32>(mask);
}

// Small unsigned codes (< 2^23) to f32 exactly without a conversion
// instruction: 2^23 + c has c in its low mantissa bits.  An H100 converts
// integers at 16 per clock per SM (1/8 of its FMA rate); the 8 conversions
// a q4 unit needed capped the decoders below the copy bandwidth.
fn u2f4(c: vec4<u32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(c | vec4<u32>(0x4b000000u)) - vec4<f32>(8388608.0);
}
