// One 32-element block of x quantised to 8 bits (the integer mat-vec
// path's layout, matvec_xq.wgsl's header): 8 code words and (d, sum), sum
// = d * the sum of the codes.  A block holding NaN or +-Inf gets d = NaN.
// Shared by the first pass (matvec_xq.wgsl) and the in-kernel quantising
// of short rows (matvec_wide.wgsl, QIN), which must give the same codes.
struct Q8B {
    w: array<u32, 8>,
    ds: vec2<f32>,
}

fn q8_quant(v: array<vec4<f32>, 8>) -> Q8B {
    var amax = 0.0;
    var bad = false;
    for (var i = 0u; i < 8u; i++) {
        let a = abs(v[i]);
        amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
        // exponent all ones: NaN or Inf (max() may drop a NaN)
        bad = bad || any((bitcast<vec4<u32>>(v[i]) & vec4<u32>(0x7f800000u)) == vec4<u32>(0x7f800000u));
    }
    let id = select(0.0, 127.0 / amax, amax > 0.0 && !bad);
    var r: Q8B;
    var cs = vec4<i32>(0);
    for (var i = 0u; i < 8u; i++) {
        let q = vec4<i32>(round(v[i] * id));
        cs += q;
        r.w[i] = pack4xI8(q);
    }
    let d = select(amax / 127.0, bitcast<f32>(0x7fc00000u), bad);
    r.ds = vec2<f32>(d, d * f32(cs.x + cs.y + cs.z + cs.w));
    return r;
}
