// The integer mat-vec path's first pass (matvec.wgsl includes it under
// XQUANT; Params, x's accessors and xv4 come from there): each activation
// row of x quantised to 8 bits a 32-element block, as llama.cpp's q8_1:
//     d = max |x_i| / 127,  code_i = round(x_i / d),  sum = d * sum code_i
// (the sum of the rounded values, so the product is exactly w . x~ for
// x~ = d * code: the m terms see the x the codes do)
// Row r's words start at p.oo[r] (a multiple of 4: 16-byte loads): k / 4
// code words (block b's 8 at 8b, code i of a word in byte i), then a
// (d, sum) f32 pair a block.  The second pass (matvec_wide.wgsl, Q8X)
// reads x's codes 4x smaller than f32 and meets each weight code word in
// one dot4I8Packed.  A block holding NaN or +-Inf gets d = NaN, so the
// products it meets are NaN (the float path would give NaN or +-Inf).
// One thread a block: k / 32 threads a row (448 at k = 14336), a few
// microseconds against the weight read it serves.

@compute @workgroup_size(64)
fn xquant(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let nb = p.k / 32u;
    let t = wg_linear(wid, nwg) * 64u + li;
    if (t >= nb * p.m) {
        return;
    }
    let r = t / nb;
    let blk = t - r * nb;
    let xr = p.xo[r / 4u][r % 4u];
    var v: array<vec4<f32>, 8>;
    var amax = 0.0;
    var bad = false;
    for (var i = 0u; i < 8u; i++) {
        v[i] = xv4(xr, blk * 32u + 4u * i);
        let a = abs(v[i]);
        amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
        // exponent all ones: NaN or Inf (max() may drop a NaN)
        bad = bad || any((bitcast<vec4<u32>>(v[i]) & vec4<u32>(0x7f800000u)) == vec4<u32>(0x7f800000u));
    }
    let id = select(0.0, 127.0 / amax, amax > 0.0 && !bad);
    let o = p.oo[r / 4u][r % 4u];
    var cs = vec4<i32>(0);
    for (var i = 0u; i < 8u; i++) {
        let q = vec4<i32>(round(v[i] * id));
        cs += q;
        xqo[o + 8u * blk + i] = pack4xI8(q);
    }
    let d = select(amax / 127.0, bitcast<f32>(0x7fc00000u), bad);
    let s = d * f32(cs.x + cs.y + cs.z + cs.w);
    xqo[o + p.k / 4u + 2u * blk] = bitcast<u32>(d);
    xqo[o + p.k / 4u + 2u * blk + 1u] = bitcast<u32>(s);
}
