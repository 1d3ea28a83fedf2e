// x quantised to 8 bits a 32-element block, as llama.cpp's q8_1 (the
// layout matvec_xq.wgsl describes).  Included by matvec_xq.wgsl and
// norm.wgsl (Q8OUT).
// Block blk of a quantised row from its 32 values: the row's words start
// at o, kw = k / 4 of them codes (block b's 8 at o + 8b, code i of a word
// in byte i), then a (d, sum) f32 pair a block at o + kw + 2b.  The
// includer defines fn xq_put(i: u32, v: u32), the word store: matvec_xq.wgsl
// (its storage or, under XS, workgroup memory) and norm.wgsl (Q8OUT: a
// norm writing its one row's codes after the row); q8_block_c gives the
// values without storing them (the norm split: matvec_nsplit.wgsl).
// The codes of a block from its 32 values: its 8 code words (4 codes a
// word, byte i code i) and its (d, sum) pair.
struct Q8B {
    w: array<u32, 8>,
    ds: vec2<f32>,
}

fn q8_block_c(v: array<vec4<f32>, 8>) -> Q8B {
    var r: Q8B;
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
        r.w[i] = pack4xI8(q);
    }
    let d = select(amax / 127.0, bitcast<f32>(0x7fc00000u), bad);
    r.ds = vec2<f32>(d, d * f32(cs.x + cs.y + cs.z + cs.w));
    return r;
}

fn q8_block(o: u32, kw: u32, blk: u32, v: array<vec4<f32>, 8>) {
    let c = q8_block_c(v);
    for (var i = 0u; i < 8u; i++) {
        xq_put(o + 8u * blk + i, c.w[i]);
    }
    xq_put(o + kw + 2u * blk, bitcast<u32>(c.ds.x));
    xq_put(o + kw + 2u * blk + 1u, bitcast<u32>(c.ds.y));
}
