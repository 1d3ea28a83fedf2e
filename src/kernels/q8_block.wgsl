// x quantised to 8 bits a 32-element block, as llama.cpp's q8_1 (the
// layout matvec_xq.wgsl describes).  Included by matvec_xq.wgsl and
// norm.wgsl (Q8OUT).
// Block blk of a quantised row from its 32 values: the row's words start
// at o, kw = k / 4 of them codes (block b's 8 at o + 8b, code i of a word
// in byte i), then a (d, sum) f32 pair a block at o + kw + 2b.  The
// includer defines fn xq_put(i: u32, v: u32), the word store: matvec_xq.wgsl
// (its storage or, under XS, workgroup memory) and norm.wgsl (Q8OUT: a
// norm writing its one row's codes after the row).
fn q8_block(o: u32, kw: u32, blk: u32, v: array<vec4<f32>, 8>) {
    var amax = 0.0;
    var bad = false;
    for (var i = 0u; i < 8u; i++) {
        let a = abs(v[i]);
        amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
        // exponent all ones: NaN or Inf (max() may drop a NaN)
        bad = bad || any((bitcast<vec4<u32>>(v[i]) & vec4<u32>(0x7f800000u)) == vec4<u32>(0x7f800000u));
    }
    let id = select(0.0, 127.0 / amax, amax > 0.0 && !bad);
    var cs = vec4<i32>(0);
    for (var i = 0u; i < 8u; i++) {
        let q = vec4<i32>(round(v[i] * id));
        cs += q;
        xq_put(o + 8u * blk + i, pack4xI8(q));
    }
    let d = select(amax / 127.0, bitcast<f32>(0x7fc00000u), bad);
    let s = d * f32(cs.x + cs.y + cs.z + cs.w);
    xq_put(o + kw + 2u * blk, bitcast<u32>(d));
    xq_put(o + kw + 2u * blk + 1u, bitcast<u32>(s));
}
