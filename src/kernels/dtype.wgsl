// Conversions between f32 and the 16-bit float formats, done on bits so the
// result is defined for every input (WGSL leaves out-of-range f32 -> f16
// conversions indeterminate and may flush subnormals).

// f32 -> IEEE binary16 bits, round to nearest even, overflow -> inf.
// NaN keeps its sign and the top 10 payload bits (the quiet bit set when
// they are all 0), as the host's wgml_fp32_to_fp16 does: an f16 NaN read
// and written back keeps its bits (get_rows, gather: NaN moves unchanged).
fn wg_f16_bits(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    let s = (b >> 16u) & 0x8000u;
    let a = b & 0x7fffffffu;
    if (a > 0x7f800000u) {
        let m = (a >> 13u) & 0x3ffu;
        return s | 0x7c00u | select(m, 0x200u, m == 0u);
    }
    if (a >= 0x477ff000u) {
        return s | 0x7c00u;                  // >= 65520 rounds to inf
    }
    if (a >= 0x38800000u) {                  // normal binary16
        let r = a + 0xfffu + ((a >> 13u) & 1u);
        return s | ((r - 0x38000000u) >> 13u);
    }
    let e = a >> 23u;
    let shift = 126u - e;                    // |v| = m * 2^-shift units of 2^-24
    if (e == 0u || shift > 24u) {
        return s;                            // below half the smallest subnormal
    }
    let m = (a & 0x7fffffu) | 0x800000u;
    var r = m >> shift;
    let rem = m & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u) == 1u)) {
        r = r + 1u;
    }
    return s | r;
}

// binary16 bits (low 16) -> f32, exact, subnormals kept.
fn wg_f16_to_f32(h: u32) -> f32 {
    let s = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0u) {
        let v = f32(m) * 5.9604644775390625e-8; // m * 2^-24, exact in f32
        return select(v, -v, s != 0u);
    }
    if (e == 31u) {
        return bitcast<f32>(s | 0x7f800000u | (m << 13u));
    }
    return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u));
}

// f32 -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN.
fn wg_bf16_bits(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return ((b >> 16u) | 0x40u) & 0xffffu;
    }
    return ((b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u) & 0xffffu;
}
