// ---- The rope and cache-write epilogue of the one-dispatch product
// (XS_ROPE; matvec_xs.wgsl includes it; host: src/ops/linear_rope_kv.c).
//
// Graph fusion's set_rows(cache, idx, rope(linear(x, w))[:, h0:h1]) for
// one activation row.  A subgroup's two rows (RPW 2, row0 even, head_dim
// even) are one NORMAL rope pair, elements 2i and 2i + 1 of a head, so
// lane 0 rotates them with the rope kernel's own angle code
// (rope_fns.wgsl) and writes both to out (the roped product: what the
// graph's other readers of the rope, q, see) and, for the columns of heads
// h0 .. h1 - 1, to cache row idx[0] (k and v).  A decode layer then runs no
// rope and no cache-write dispatch: on an H200, dropping those dispatches
// made the 8B decode 17% faster, the 1B 20% (bench/NOTES.md, 2026-11-27
// (2)).  An idx outside [0, cache rows) writes nothing to the cache and is
// recorded in the error word as set_rows's own check would (the next sync
// returns WGML_ERR_INDEX naming wgml_set_rows).
//
// Parameters, in the product's bias / c / chk words (a product with this
// epilogue has no bias, no c and no ids of its own: QB adds the linear's
// bias here, before the rotation; linear_rope_kv.c fills them):
//   bo[0]  k_hi, k_lo, freq_scale, ext_factor (f32, rope.wgsl's f0)
//   bo[1]  corr_lo, corr_hi, mscale (f32), head_dim | n_dims / 2 << 16
//   co[0]  columns rotated (n_heads_rot x head_dim), the cache's columns
//          [lo, hi) of out, the error word's op code
//   co[1]  pos's element, idx's element, cache rows, the cache's element
//          of row 0 column lo
//   chk    the cache's row step, freq_factors' (or with QB the bias's)
//          element and freq_factors' step (elements)
#tensor pos 4 i32 POS_MODE
#ifdef KC_PAIR
// An f16 cache whose pairs start on words: one 32-bit store a pair
@group(0) @binding(5) var<storage, read_write> kcw: array<u32>;
#else
#tensor kc 5 KC_DT w
#endif
#tensor idx 6 i32 IDX_MODE
#ifdef QB
// The linear's bias (a q|k|v product's: qwen2), in freq_factors' place
#tensor qb 7 f32 FF_MODE
#else
#tensor ff 7 f32 FF_MODE
#endif
@group(0) @binding(8) var<storage, read_write> err: array<atomic<u32>>;
#include "errword.wgsl"
#include "rope_fns.wgsl"

const RT: u32 = {{RT}}u;  // rope pairs of a head: head_dim / 2 (the host keeps it <= 128)

// Each pair's (sin, cos) x mscale at the step's position, and the cache
// row idx[0]: made while x is quantised, by threads that quantise nothing
// at k <= 4096 (k / 32 blocks for 256 threads), and read after the
// barrier, so lane 0's epilogue is a rotation and its stores.  (Loading
// pos and idx and computing the angle after the sums put two memory round
// trips and ~100 dependent instructions at the end of every row set: the
// 8B's q|k|v product took 18.7 us a call against 16.0 unfused, H200
// timestamps, bench/NOTES.md 2026-11-27 (2).)
var<workgroup> rtab: array<vec2<f32>, RT>;
var<workgroup> ridx: i32;

// Thread li's part of the table: pair WG - 1 - li; thread 0 reads idx.
fn rope_setup(li: u32) {
    if (li == 0u) {
        ridx = idx_ld(p.co[1].y);
    }
    let i = WG - 1u - li;
    if (i < RT) {
        let f0 = bitcast<vec4<f32>>(p.bo[0]);
        let f1 = bitcast<vec4<f32>>(p.bo[1]);
        var w = rope_rate(i, f0, f1);
#ifdef FF
        if (i < (p.bo[1].w >> 16u)) {
            w = w / ff_ld(p.chk.y + i * p.chk.z);
        }
#endif
        rtab[i] = rope_sincos(f32(pos_ld(p.co[1].x)) * w) * f1.z;
    }
}

// Columns c and c + 1 of the product (c even), y their values: rotated
// unless rope copies them (dims past n_dims, heads past n_heads_rot).
fn rope_out(c: u32, y: vec2<f32>) {
    let i = (c % (p.bo[1].w & 0xffffu)) / 2u;
    var v = y;
#ifdef QB
    v = v + vec2<f32>(qb_ld(p.chk.y + c), qb_ld(p.chk.y + c + 1u));
#endif
    if (c < p.co[0].x && i < (p.bo[1].w >> 16u)) {
        let sc = rtab[i];
        v = vec2<f32>(v.x * sc.y - v.y * sc.x, v.x * sc.x + v.y * sc.y);
    }
    let oi = p.oo[0].x + c * p.os;
    o_st(oi, v.x);
    o_st(oi + p.os, v.y);
    if (c >= p.co[0].y && c < p.co[0].z) {
        let r = ridx;
        if (r < 0 || u32(r) >= p.co[1].z) {
            if (c == p.co[0].y) {
                errword_put(p.co[0].w, 0u, r, p.co[1].z, 1u, vec4<u32>(1u));
            }
            return;
        }
        let ki = p.co[1].w + u32(r) * p.chk.x + (c - p.co[0].y);
#ifdef KC_PAIR
        kcw[ki >> 1u] = pack2x16float(v);
#else
        kc_st(ki, v.x);
        kc_st(ki + 1u, v.y);
#endif
    }
}
