// ---- A decoder's feed-forward block as one persistent dispatch (XS_PFFN;
// matvec_xs.wgsl includes it; host: src/ops/ffn.c, graph fusion
// src/graph/fuse.c fuse_ffn).
//
//   h = glu(gate, up) of gate|up = w_gu . x    (stage 0: XS_GLU's rows)
//   out = h . w_down + c                       (stage 1: emit's rows, with
//                                               XS_NSPLIT the next norm's
//                                               codes and sums of squares)
//
// for one activation row, where x is a split norm's codes (the o
// product's, matvec_nsplit.wgsl) and both weights lie in one binding.
//
// Why.  As two dispatches the down product waits for the whole gate|up
// dispatch to drain and then ramps up again; a probe had put each such
// boundary at ~4-9 µs on an H200 against ~2 µs for a grid barrier
// (bench/NOTES.md 2026-11-27 (7)).  Here the workgroups (no more than
// grid_discover counted for this pipeline) run stage 0's row groups, meet
// at one grid barrier, quantise h into their workgroup memory and run
// stage 1's.  Measured in the pipelined decode it is slower (8B tg128
// -1.3% at equal shapes, -2.4% at the table's; this kernel's 61-70
// registers leave 2 workgroups an SM), so the host takes it only when
// forced (WGML_FORCE=ffn=persist; NOTES 2026-11-27 (8)).
//
// Parameters: pst[0] and pst[1], one Params a stage (matvec.wgsl), copied
// into the private p each stage so the shared helpers (accq, emit,
// xs_quantise, ns_block) read the stage's own; loops that hold a barrier
// take their bounds from pst (uniform) instead.  pst[0].act 1: the
// discovery pass (grid_discover, nothing else).  Bindings: w 1 (both
// weights), h 2 (x's binding: stage 0 writes it, stage 1 reads it), out 3,
// x's codes 4, c 5, the split's y and g 6 and 7, grid_ctl 8.
//
// Coherence: h is written by other workgroups in stage 0 and read with
// plain loads in stage 1.  Nothing in this dispatch read h's lines before
// the barrier, so no workgroup's L1 should hold a stale copy, and the
// barrier's fences order the stores before the loads; every H200 run was
// bit-exact against the two dispatches, but README's hazards record a
// norm tail that read the same way and was wrong once: settle that (an
// atomic-load form) before this becomes a default.
@group(0) @binding(4) var<storage, {{XQI_ACC}}> xqi: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read_write> grid_ctl: array<atomic<u32>>;
#include "grid.wgsl"

// Stage s's parameters into p, and the slot counter reset.
fn pffn_stage(s: u32, li: u32) {
    p = pst[s];
    if (li == 0u) {
        atomicStore(&xslot, 0u);
    }
}

@compute @workgroup_size(WG)
fn main_pffn(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sgs: u32,
             @builtin(subgroup_id) sid: u32, @builtin(num_subgroups) nsub: u32,
             @builtin(local_invocation_index) li: u32) {
    if (pst[0].act == 1u) {
        grid_discover(li);
        return;
    }
    let g = wg_linear(wid, nwg);
    let nw = pst[0].pad0;  // workgroups launched (every one meets the barrier)
    let nsg = max(WG / sgs, 1u);

    // ---- stage 0: gate|up and the glu
    pffn_stage(0u, li);
    // x's codes, (d, sum) pairs and the split's sums of squares into
    // workgroup memory (the XS layout, then wg_q8_split_words' tail)
    let xw = ((p.k / 4u + p.k / 16u + 3u) / 4u) * 4u;  // wg_q8_row_words(k)
    for (var i = li; i < (xw + p.k / 32u + 3u) / 4u; i += WG) {
        xq[i] = xqi[p.xo[0].x / 4u + i];
    }
    workgroupBarrier();
    let nsc = xs_nscale(xw, lane, sgs);
    var slot = 0u;
    if (lane == 0u) {
        slot = atomicAdd(&xslot, 1u);
    }
    var first = subgroupBroadcastFirst(slot);
    var xr: array<u32, M>;
    for (var gg = g; gg < pst[0].ngroups; gg += nw) {
        for (var rs = first; rs < RSETS; rs += nsg) {
            let row0 = (gg * RSETS + rs) * RPW;
            if (row0 >= p.n) {
                break;
            }
            let s = xs_sums(row0, lane, sgs, xr, 0u, p.k / CH)[0] * nsc;  // as main_xs's XS_NRMS, XS_GLU
            if (lane == 0u) {
                x_st(p.oo[0].x + (row0 / 2u) * p.os, glu_act(p.pad1, p.alpha * s.x) * (p.alpha * s.y));
            }
        }
    }
    grid_sync(li, sid, lane, sgs, g, nw);

    // ---- stage 1: the down product, c, and the next norm's split
    pffn_stage(1u, li);
    if (g < pst[1].ngroups) {
        xs_quantise(li, lane, sid, nsub, sgs, p.xo[0].x);  // only where there are rows to run
    }
    workgroupBarrier();
    slot = 0u;
    if (lane == 0u) {
        slot = atomicAdd(&xslot, 1u);
    }
    first = subgroupBroadcastFirst(slot);
    for (var gg = g; gg < pst[1].ngroups; gg += nw) {
        for (var rs = first; rs < RSETS; rs += nsg) {
            let row0 = (gg * RSETS + rs) * RPW;
            if (row0 >= p.n) {
                break;
            }
            xs_emit(row0, gg, lane, xs_sums(row0, lane, sgs, xr, 0u, p.k / CH));
        }
#ifdef XS_NSPLIT
        xs_block(gg, li, lane, sid, sgs);
#endif
    }
    grid_exit(li, nw);
}
