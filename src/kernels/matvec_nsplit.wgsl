// ---- The norm split, producer side (XS_NSPLIT; matvec_xs.wgsl includes
// it; host: src/ops/linear_norm.c, graph fusion src/graph/fuse.c).
//
// Graph fusion's y = rms_norm(h) * g (or l2_norm) of h = linear(x, w) (+ c)
// for one activation row, where y's only reader is the next one-row
// product (a decoder's o product feeding the gate|up product through the
// ffn norm, its down product feeding the next layer's q|k|v).  The norm's
// statistic is one scalar, and 8-bit codes do not depend on a block's
// scale, so the work is split: each workgroup of this product owns 32
// consecutive rows (one block of y), and once they are stored it writes
// the block's codes of u = h * g (q8_block's values: q8_lanes.wgsl, or
// q8_block_c where subgroups are not a multiple of 8 lanes) and the
// block's sum of squares of h; the next product sums the n / 32 partial
// sums in each subgroup, off its critical path, and scales its dot
// products by the norm's factor (matvec_xs.wgsl XS_NRMS).  No dispatch
// for the norm and no last-workgroup tail (matvec_ntail.wgsl's, whose
// chain on one SM cost ~5 us on an H200).  Dropping the norms' dispatches
// was worth +15% on the 8B decode (bench/NOTES.md 2026-11-27 (6)).
//
// y's row (the norm's node, f32 words): [n values, never written here |
// the codes, n / 4 words | a (d, sum) pair a block, padded: the xq tail's
// layout, wg_q8_row_words(n) words in all | a sum of squares a block,
// n / 32 words].  Parameters, in the product's chk words: chk = (the
// codes' first word in y's binding, g's first element (NS_G: g is bound)).
@group(0) @binding(6) var<storage, read_write> ns_y: array<u32>;
@group(0) @binding(7) var<storage, {{NSG_ACC}}> ns_g: array<f32>;

const NSN: u32 = {{NSN}}u;  // n, the row's length (a multiple of 32)
const NSQW: u32 = {{NSQW}}u;  // wg_q8_row_words(n): the sums of squares follow

// The group's 32 rows of h, stored by the lanes that wrote them.
var<workgroup> ns_h: array<vec4<f32>, 8>;

fn ns_put(i: u32, v: f32) {
    ns_h[i >> 2u][i & 3u] = v;
}

// g over the block's vec4 i (1 without NS_G).
fn ns_gv(r0: u32, i: u32) -> vec4<f32> {
#ifdef NS_G
    let e = p.chk.y + r0 + 4u * i;
    return vec4<f32>(ns_g[e], ns_g[e + 1u], ns_g[e + 2u], ns_g[e + 3u]);
#else
    return vec4<f32>(1.0);
#endif
}

fn ns_store(gg: u32, i: u32, w: u32, ds: vec2<f32>, ss: f32) {
    let qo = p.chk.x;
    ns_y[qo + 8u * gg + i] = w;
    if (i == 0u) {
        ns_y[qo + NSN / 4u + 2u * gg] = bitcast<u32>(ds.x);
        ns_y[qo + NSN / 4u + 2u * gg + 1u] = bitcast<u32>(ds.y);
        ns_y[qo + NSQW + gg] = bitcast<u32>(ss);
    }
}

// Block gg's codes and sum of squares; every invocation calls it, between
// two workgroup barriers (ns_h holds the block's rows).
fn ns_block(gg: u32, li: u32, lane: u32, sid: u32, sgs: u32) {
    let r0 = 32u * gg;
#ifdef XS_LANES
    if (sgs % 8u == 0u) {
        // lanes 0 .. 7 of subgroup 0 a vec4 each (lanes past 7 repeat
        // them: a shuffle partner's block is the same values)
        if (sid == 0u) {
            let i = lane & 7u;
            let h = ns_h[i];
            let c = q8_lanes(h * ns_gv(r0, i));
            var ss = dot(h, h);
            ss += subgroupShuffleXor(ss, 1u);
            ss += subgroupShuffleXor(ss, 2u);
            ss += subgroupShuffleXor(ss, 4u);
            if (lane < 8u) {
                ns_store(gg, i, c.w, c.ds, ss);
            }
        }
        return;
    }
#endif
    if (li == 0u) {
        var v: array<vec4<f32>, 8>;
        var ss = 0.0;
        for (var i = 0u; i < 8u; i++) {
            let h = ns_h[i];
            ss += dot(h, h);
            v[i] = h * ns_gv(r0, i);
        }
        let c = q8_block_c(v);
        for (var i = 0u; i < 8u; i++) {
            ns_store(gg, i, c.w[i], c.ds, ss);
        }
    }
}
