// ---- The integer path with x quantised by each workgroup (XS; matvec.wgsl
// includes this with Q8X, WIDE and SG; host: src/ops/matvec.c, the sgx_*
// variants).  One dispatch a product instead of two.
//
// Why.  Timed as 32 products back to back in a graph (H200, bench/NOTES.md,
// `run_h100.sh mvfixed mvlat`), a q4_K product over k 4096 costs a fixed
// ~13 us plus its bytes at ~3.5 TB/s, and ~4.6 us of the fixed part is the
// XQUANT pass: a dispatch of its own that the product waits for.  A
// Llama-3-8B decode layer runs four such products.  An earlier try that
// quantised x inside every workgroup of the sgq_r4 shape (7168 workgroups
// of 64 threads at 28672 rows, each quantising all of x for 4 rows) was 2x
// slower: here a workgroup of 256 threads owns RSETS x RPW rows (16 with
// RSETS 8, RPW 2), so x's quantising (k / 32 blocks, one a thread, from L2)
// is shared by 4-8x more weight bytes.
//
// Shape.  Thread li quantises blocks li, li + WG, ... of x row 0 into
// workgroup memory (the XQUANT layout, so matvec_wide.wgsl's accq reads it
// unchanged); after one barrier each subgroup takes a slot from a counter
// (nothing assumed about how invocations map to subgroups) and owns row
// sets slot, slot + WG / sgs, ... of RPW rows: its lanes walk the chunks of
// those rows (two a step, their loads issued together) and subgroupAdd
// gives each row's sum: no workgroup memory and no barrier after x's.
// RSETS is WG / 32, one set a subgroup on 32-lane GPUs; subgroups of other
// sizes leave some idle (4-lane lavapipe) or take two sets (64 lanes).
// One activation row (M 1), k a multiple of 32 whose codes fit workgroup
// memory (the host checks both).
//
// XS_GLU (graph fusion's glu(y[:, 0::2], y[:, 1::2]) of y = linear(x, w),
// src/ops/linear_glu.c): w's rows are gate and up rows interleaved (a
// model's gate|up, src/models/llm_graph.c), RPW 2, so a subgroup's two rows
// are one gate and its up: lane 0 writes glu_act(p.pad1, gate) * up to out
// column row0 / 2, and a decode layer runs no glu dispatch.
//
// XS_PREQ (graph fusion's xq tail, src/ops/norm.c): x's codes were written
// after its row by the norm that made it; they are bound in x's place and
// read from memory, and nothing is quantised: the workgroups start on
// their weights at once.  On an H200 the quantising cost a dependent
// decode product ~5 us (skipping it: 8B tg128 +21%; the norms' codes for
// the q|k|v and gate|up products: +6.4%; bench/NOTES.md).
//
// XS_ROPE (graph fusion's linear + rope + set_rows, src/ops/linear_rope_kv.c):
// a subgroup's two rows are one rope pair; lane 0 rotates them and writes
// them to out and to the cache (matvec_rope.wgsl).
//
// XS_NTAIL (graph fusion's linear (+ c) + rms_norm, src/ops/linear_norm.c):
// the last workgroup to finish normalises the whole output row
// (matvec_ntail.wgsl).
//
// XS_NSPLIT (graph fusion's norm split, src/ops/linear_norm.c): a
// workgroup's 32 rows are one block of the norm's input; it writes the
// block's codes of h * g and its sum of squares (matvec_nsplit.wgsl).
// XS_NRMS (with XS_PREQ: the other side of the split): x's codes are of
// an unscaled row, the blocks' sums of squares after them; each subgroup
// sums those and scales its rows' dot products by the norm's factor
// (eps's f32 bits in p.xst_t, p.xst_u 1 for RMS, 2 for L2: fields of the
// IDS path, which one-row products never take).
const RSETS: u32 = {{RSETS}}u;
const NVV: u32 = (NV + 3u) / 4u;  // vec4s of a subgroup's sums
#ifdef KS
// XS with KS (the k split: sgx_*k<n>, forced only): KS subgroups share a
// row set, each taking a contiguous KS-th of its chunks; their sums meet
// in workgroup memory (one barrier a row group) and the part-0 slot's
// subgroup runs the epilogue.  KS 2 on 1024 threads keeps 32 rows a
// workgroup (the norm split's block).  Tried for the 8B's down product
// (128 workgroups of 16 subgroups, one an SM): twice the warps made it
// slower on an H200 (32 products 599 -> 711 µs), a 4096 x 4096 product
// faster (355 -> 315) and the decode no faster (bench/NOTES.md
// 2026-11-27 (9)), so the table does not take it.
const KS: u32 = {{KS}}u;
var<workgroup> ksum: array<vec4<f32>, RSETS * KS * NVV>;
#endif
#include "q8_lanes.wgsl"
#ifdef XS_GLU
#include "glu_act.wgsl"
#endif
#ifdef XS_ROPE
#include "matvec_rope.wgsl"
#endif
#ifdef XS_NTAIL
#include "fbits.wgsl"
#include "norm_fns.wgsl"
#include "matvec_ntail.wgsl"
#endif
#ifdef XS_NSPLIT
#include "matvec_nsplit.wgsl"
#endif
#ifdef XS_NRMS
#include "fbits.wgsl"
#include "norm_fns.wgsl"
#endif

var<workgroup> xslot: atomic<u32>;

#ifndef XS_PREQ
// x's codes a 32-element block a thread (q8_block)
fn xs_blocks(li: u32, xr0: u32) {
    for (var blk = li; blk < p.k / 32u; blk += WG) {
        var v: array<vec4<f32>, 8>;
        for (var i = 0u; i < 8u; i++) {
            v[i] = xv4(xr0, blk * 32u + 4u * i);
        }
        q8_block(0u, p.k / 4u, blk, v);
    }
}

// x's row at element xr0 quantised into workgroup memory (all threads).
fn xs_quantise(li: u32, lane: u32, sid: u32, nsub: u32, sgs: u32, xr0: u32) {
#ifdef XS_LANES
    if (sgs % 8u == 0u) {
        // a vec4 a lane, consecutive lanes on consecutive vectors
        // (q8_lanes.wgsl; the host compiles this where the measured
        // subgroups are a multiple of 8 lanes, and the size is checked
        // again here: a cached pipeline may run at another, see README
        // hazards); the loop is subgroup-uniform
        let nq = p.k / 4u;
        for (var q0 = sid * sgs; q0 < nq; q0 += nsub * sgs) {
            let q = q0 + lane;
#ifdef MV_PROBE_NOX
            // timing probe (WGML_MV_PROBE=5): the quantising with no loads
            q8_lanes_put(0u, nq, q, vec4<f32>(f32(q), 1.0, -2.0, 0.5), q < nq);
#else
            q8_lanes_put(0u, nq, q, xv4(xr0, 4u * min(q, nq - 1u)), q < nq);
#endif
#ifdef MV_PROBE_ONEV
            break;  // timing probe (WGML_MV_PROBE=6): one vector a lane
#endif
        }
    } else {
        xs_blocks(li, xr0);
    }
#else
    xs_blocks(li, xr0);
#endif
}
#endif

#ifdef XS_NRMS
// The split norm's factor from the n / 32 blocks' sums of squares at word
// a0 of xq (every subgroup its own: no barrier; needed only once the rows'
// sums are in).
fn xs_nscale(a0: u32, lane: u32, sgs: u32) -> f32 {
    var nss = 0.0;
    for (var i = lane; i < p.k / 32u; i += sgs) {
        let a = a0 + i;
        nss += bitcast<f32>(xq[a >> 2u][a & 3u]);
    }
    return ss_scale(subgroupAdd(nss), p.k, bitcast<f32>(p.xst_t), p.xst_u == 1u);
}
#endif

// The RPW rows from row0 of the current stage's weights (p) against x's
// codes at word xr, chunks [c0, c1) of each: the subgroup's sums, every
// lane holding them all.  Rows past n read row n - 1 and are never
// written (as main's).
fn xs_sums(row0: u32, lane: u32, sgs: u32, xr: array<u32, M>, c0: u32, c1: u32) -> array<vec4<f32>, NVV> {
    var rb: array<u32, RPW>;
    for (var rr = 0u; rr < RPW; rr++) {
        rb[rr] = p.w_off + min(row0 + rr, p.n - 1u) * p.rowb;
    }
    var acc: array<f32, NV>;
    for (var j = 0u; j < NV; j++) {
        acc[j] = 0.0;
    }
    var c = c0 + lane;
    for (; c + sgs < c1; c += 2u * sgs) {
        accq(&acc, rb, xr, c);
        accq(&acc, rb, xr, c + sgs);
    }
    if (c < c1) {
        accq(&acc, rb, xr, c);
    }
    var s: array<vec4<f32>, NVV>;
    for (var j = 0u; j < NV; j += 4u) {
        s[j / 4u] = subgroupAdd(vec4<f32>(acc[j], acc[min(j + 1u, NV - 1u)], acc[min(j + 2u, NV - 1u)],
                                          acc[min(j + 3u, NV - 1u)]));
    }
    return s;
}

// The subgroup's rows' outputs (emit: c, bias, activation) and, with the
// norm split, their values kept for the group's block.
fn xs_emit(row0: u32, gg: u32, lane: u32, s: array<vec4<f32>, NVV>) {
    let row = row0 + lane;
    if (lane < NV && row < p.n) {
        let v = emit(row, 0u, s[lane / 4u][lane % 4u], p.oo[0].x + row * p.os);
#ifdef XS_NSPLIT
        ns_put(row - 32u * gg, v);
#endif
    }
}

#ifdef XS_NSPLIT
// Group gg's 32 rows are stored: its block's codes and sum of squares (all
// threads; the host gives the split a variant of 32 rows a group).
fn xs_block(gg: u32, li: u32, lane: u32, sid: u32, sgs: u32) {
    workgroupBarrier();
    ns_block(gg, li, lane, sid, sgs);
    workgroupBarrier();
}
#endif

// A row set's sums s out: the split norm's factor nsc (XS_NRMS; else 1),
// then the fused epilogue's store (rope pair, glu) or the plain emit.
fn xs_out(row0: u32, gg: u32, lane: u32, s0: array<vec4<f32>, NVV>, nsc: f32) {
    var s = s0;
#ifdef XS_NRMS
    for (var j = 0u; j < NVV; j++) {
        s[j] *= nsc;
    }
#endif
#ifdef XS_ROPE
    if (lane == 0u) {
        rope_out(row0, p.alpha * s[0].xy);
    }
#else
#ifdef XS_GLU
    if (lane == 0u) {
        o_st(p.oo[0].x + (row0 / 2u) * p.os, glu_act(p.pad1, p.alpha * s[0].x) * (p.alpha * s[0].y));
    }
#else
    xs_emit(row0, gg, lane, s);
#endif
#endif
}

#ifdef XS_PFFN
#include "matvec_pffn.wgsl"
#else
@compute @workgroup_size(WG)
fn main_xs(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sgs: u32,
           @builtin(subgroup_id) sid: u32, @builtin(num_subgroups) nsub: u32,
           @builtin(local_invocation_index) li: u32) {
    let g = wg_linear(wid, nwg);
    if (g >= p.pad0) {
        return;  // a folded grid's overshoot (the whole workgroup: uniform)
    }
#ifdef MV_PROBE_EMPTY
    return;  // timing probe (WGML_MV_PROBE=3): the dispatch alone
#endif
#ifdef MV_PROBE_STORE
    // timing probe (WGML_MV_PROBE=7): the dispatch and one store a workgroup
    if (li == 0u) {
        o_st(p.oo[0].x + g, f32(g));
    }
    return;
#endif
#ifdef MV_PROBE_BAR
    // timing probes (WGML_MV_PROBE=8, 9): one barrier (9: after a store a
    // thread into x's codes, so their workgroup memory is allocated)
    if (li == 0u) {
        atomicStore(&xslot, g);
    }
#ifdef MV_PROBE_SMEM
    xq[li % ({{XSW}}u / 4u)].x = li;
#endif
    workgroupBarrier();
    if (li == 0u) {
#ifdef MV_PROBE_SMEM
        o_st(p.oo[0].x + g, f32(atomicLoad(&xslot) + xq[g % ({{XSW}}u / 4u)].x));
#else
        o_st(p.oo[0].x + g, f32(atomicLoad(&xslot)));
#endif
    }
    return;
#endif
    if (li == 0u) {
        atomicStore(&xslot, 0u);
    }
#ifdef XS_ROPE
    rope_setup(li);
#endif
#ifndef XS_PREQ
    xs_quantise(li, lane, sid, nsub, sgs, p.xo[0].x);
#endif
    workgroupBarrier();
#ifdef MV_PROBE_QONLY
    // timing probes (WGML_MV_PROBE=4, 5, 6): x's codes made, one word kept
    if (li == 0u) {
        o_st(p.oo[0].x, f32(xq[g % ({{XSW}}u / 4u)].x));
    }
    return;
#endif
    var slot = 0u;
    if (lane == 0u) {
        slot = atomicAdd(&xslot, 1u);
    }
    let first = subgroupBroadcastFirst(slot);
    let nsg = max(WG / sgs, 1u);
    var xr: array<u32, M>;  // x's codes start at word 0 (xq_row)
#ifdef XS_PREQ
    xr[0] = p.xo[0].x;      // or where the norm wrote them
#endif
#ifdef XS_NRMS
    let nsc = xs_nscale(xr[0] + {{XSW}}u, lane, sgs);
#else
    let nsc = 1.0;  // xs_out scales only with XS_NRMS
#endif
    // p.pad0 workgroups serve p.ngroups groups of RSETS sets: past about a
    // wave of them each walks several groups, its x quantised once
    for (var gg = g; gg < p.ngroups; gg += p.pad0) {
#ifdef KS
    let kc = (p.k / CH + KS - 1u) / KS;
    for (var t = first; t < RSETS * KS; t += nsg) {
        let rs = t / KS;
        let kp = t - rs * KS;
        let row0 = (gg * RSETS + rs) * RPW;
        if (row0 >= p.n) {
            break;  // subgroup-uniform (t only grows)
        }
        let s = xs_sums(row0, lane, sgs, xr, kp * kc, min(kp * kc + kc, p.k / CH));
        if (lane == 0u) {
            for (var j = 0u; j < NVV; j++) {
                ksum[t * NVV + j] = s[j];
            }
        }
    }
    workgroupBarrier();
    for (var rs = first; rs < RSETS; rs += nsg) {
        let row0 = (gg * RSETS + rs) * RPW;
        if (row0 >= p.n) {
            break;
        }
        var s: array<vec4<f32>, NVV>;
        for (var j = 0u; j < NVV; j++) {
            s[j] = ksum[rs * KS * NVV + j];
            for (var kp = 1u; kp < KS; kp++) {
                s[j] += ksum[(rs * KS + kp) * NVV + j];
            }
        }
        xs_out(row0, gg, lane, s, nsc);
    }
    workgroupBarrier();  // ksum is the next group's
#else
    for (var rs = first; rs < RSETS; rs += nsg) {
        let row0 = (gg * RSETS + rs) * RPW;
        if (row0 >= p.n) {
            break;  // subgroup-uniform: the last group's spare sets
        }
        let s = xs_sums(row0, lane, sgs, xr, 0u, p.k / CH);
        xs_out(row0, gg, lane, s, nsc);
    }
#endif
#ifdef XS_NSPLIT
    xs_block(gg, li, lane, sid, sgs);
#endif
    }
#ifdef XS_NTAIL
    ntail(li, lane, sid, nsub, sgs);
#endif
}
#endif
