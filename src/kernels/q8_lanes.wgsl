// x quantised to 8 bits (q8_block.wgsl's layout and values, code for
// code), a vec4 a lane: lanes 8m .. 8m + 7 of a subgroup hold the eight
// vec4s of one 32-element block (the subgroup's size a multiple of 8), so
// the block's |max| and code sum are three subgroupShuffleXor steps, each
// lane stores its vec4's code word beside its neighbours', and the block's
// first lane its (d, sum).  Every lane of the subgroup calls it together,
// lane l of a subgroup with vec4 l of its run of 8 (lanes l ^ 1, 2, 4
// hold its block's others).  Why:
// q8_block's block a thread reads x 32 elements a lane apart (a warp's
// load touching 32 lines) and runs its 32 values' chain alone; on an H200
// such a pass in one workgroup cost ~4 us (bench/NOTES.md 2026-11-27 (5)).
// Returns the lane's code word (its vec4's four codes) and the block's
// (d, sum); the caller stores the word at code word q of the row and,
// from the block's first lane (q % 8 == 0), the pair at pair q / 8.
struct Q8L {
    w: u32,
    ds: vec2<f32>,
}

fn q8_lanes(v: vec4<f32>) -> Q8L {
    let a = abs(v);
    // exponent all ones: NaN or Inf (max() may drop a NaN): the block's
    // |max| as u32 bits (order-preserving for |x|), 0xffffffff for those
    let bad = any((bitcast<vec4<u32>>(v) & vec4<u32>(0x7f800000u)) == vec4<u32>(0x7f800000u));
    var m = select(bitcast<u32>(max(max(a.x, a.y), max(a.z, a.w))), 0xffffffffu, bad);
    m = max(m, subgroupShuffleXor(m, 1u));
    m = max(m, subgroupShuffleXor(m, 2u));
    m = max(m, subgroupShuffleXor(m, 4u));
    let nan = m == 0xffffffffu;
    let amax = bitcast<f32>(m);
    let id = select(0.0, 127.0 / amax, amax > 0.0 && !nan);
    let c = vec4<i32>(round(v * id));
    var cs = c.x + c.y + c.z + c.w;
    cs += subgroupShuffleXor(cs, 1u);
    cs += subgroupShuffleXor(cs, 2u);
    cs += subgroupShuffleXor(cs, 4u);
    let d = select(amax / 127.0, bitcast<f32>(0x7fc00000u), nan);
    return Q8L(pack4xI8(c), vec2<f32>(d, d * f32(cs)));
}

// q8_lanes of vec4 q of a row whose code words start at o, kw of them
// before the (d, sum) pairs, stored through the includer's xq_put (as
// q8_block's) when live.
fn q8_lanes_put(o: u32, kw: u32, q: u32, v: vec4<f32>, live: bool) {
    let c = q8_lanes(v);
    if (live) {
        xq_put(o + q, c.w);
        if ((q & 7u) == 0u) {
            xq_put(o + kw + q / 4u, bitcast<u32>(c.ds.x));
            xq_put(o + kw + q / 4u + 1u, bitcast<u32>(c.ds.y));
        }
    }
}
