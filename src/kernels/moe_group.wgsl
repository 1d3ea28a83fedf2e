// Grouping of wgml_linear_id's (token, used) pairs by expert for the
// grouped GEMM (host src/ops/moe.c, GEMM gemm.wgsl's MOE): a stable
// counting sort in three passes over chunks of 256 pairs (pair q = t *
// used + u, in order):
//   count    one workgroup a chunk: hist[c][e] = pairs of chunk c on expert e
//   scan     one workgroup: hist[c][e] becomes expert e's first slot for
//            chunk c's pairs; off[e] (expert e's first slot in perm, off[E]
//            = pairs), toff[e] (its first BM-row tile, toff[E] = tiles)
//   scatter  one workgroup a chunk: perm[hist[c][id] + rank of the pair
//            among the chunk's earlier pairs on that expert] = q
// The scratch grp (u32 words from p.base): off[E + 1], toff[E + 1],
// perm[pairs], hist[chunks][E].  The ids were checked by matvec.wgsl's
// CHECK pass; when it failed (err[1]) count and scatter write nothing and
// the GEMM returns at once, so an id outside [0, E) never indexes hist or
// perm.  Every word the GEMM reads is written here first (the scratch is
// not zeroed).
#include "prelude.wgsl"

struct Params {
    pairs: u32,
    used: u32,
    experts: u32,
    bm: u32,       // the GEMM's rows per tile
    ids_off: u32,  // ids: first element, steps along t and u
    ist_t: u32,
    ist_u: u32,
    chunks: u32,   // ceil(pairs / 256)
    base: u32,     // grp's first word
    pad0: u32,
    pad1: u32,
    pad2: u32,
}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, {{GRP_ACC}}> grp: array<u32>;
@group(0) @binding(2) var<storage, read> err: array<u32>;
fn hist_at(c: u32, e: u32) -> u32 {
    return p.base + 2u * (p.experts + 1u) + p.pairs + c * p.experts + e;
}

#ifndef SCAN
@group(0) @binding(3) var<storage, {{IDS_ACC}}> ids: array<i32>;

var<workgroup> cid: array<i32, 256>;

// count (COUNT) or scatter (SCATTER): one workgroup a chunk, its ids in
// cid (-1 past the last pair).
@compute @workgroup_size(256)
fn chunk(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let c = wg_linear(wid, nwg);
    if (c >= p.chunks) {
        return; // a folded grid's overshoot (uniform)
    }
    let q = c * 256u + li;
    var id = -1;
    if (q < p.pairs) {
        let t = q / p.used;
        let u = q - t * p.used;
        id = ids[p.ids_off + t * p.ist_t + u * p.ist_u];
    }
    cid[li] = id;
    workgroupBarrier();
    if (err[1] != 0u) {
        return;
    }
#ifdef COUNT
    for (var e = li; e < p.experts; e += 256u) {
        var n = 0u;
        for (var j = 0u; j < 256u; j++) {
            n += select(0u, 1u, cid[j] == i32(e));
        }
        grp[hist_at(c, e)] = n;
    }
#else
    if (id < 0 || u32(id) >= p.experts) {
        return;
    }
    var rank = 0u;
    for (var j = 0u; j < li; j++) {
        rank += select(0u, 1u, cid[j] == id);
    }
    grp[p.base + 2u * (p.experts + 1u) + grp[hist_at(c, u32(id))] + rank] = q;
#endif
}
#endif

#ifdef SCAN
// One workgroup.  Thread li walks experts li, li + 256, ... down the
// chunks; thread 0 then scans the experts (a few hundred at most: a
// serial loop is shorter than a tree's barriers at this size).
@compute @workgroup_size(256)
fn scan(@builtin(local_invocation_index) li: u32) {
    let off = p.base;
    let toff = p.base + p.experts + 1u;
    for (var e = li; e < p.experts; e += 256u) {
        var run = 0u;
        for (var c = 0u; c < p.chunks; c++) {
            let h = grp[hist_at(c, e)];
            grp[hist_at(c, e)] = run;
            run += h;
        }
        grp[off + e] = run;
    }
    storageBarrier();
    workgroupBarrier();
    if (li == 0u) {
        var slot = 0u;
        var tile = 0u;
        for (var e = 0u; e < p.experts; e++) {
            let n = grp[off + e];
            grp[off + e] = slot;
            grp[toff + e] = tile;
            slot += n;
            tile += (n + p.bm - 1u) / p.bm;
        }
        grp[off + p.experts] = slot;
        grp[toff + p.experts] = tile;
    }
    storageBarrier();
    workgroupBarrier();
    for (var e = li; e < p.experts; e += 256u) {
        let first = grp[off + e];
        for (var c = 0u; c < p.chunks; c++) {
            grp[hist_at(c, e)] += first;
        }
    }
}
#endif
