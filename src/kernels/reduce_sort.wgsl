// Stable sort of each row of the last axis (wgml_argsort, wgml_top_k):
// bitonic sort of (key, index) pairs.  Keys are the values mapped to u32 so
// that unsigned order is the wanted order (NaN above +inf, -0 equal to +0,
// complemented for DESC); ties go to the lower index, which makes the sort
// stable and every pair distinct.  Rows are padded to p.n = 2^p.lg with
// (0xffffffff, 0xffffffff), which sorts after every real pair.
//
// The pairs of a group of rows live in a flat array [rows][n]:
//   sort_local  blocks of B = 2048 pairs in workgroup memory: stages
//               k = p.k .. p.kend, starting at distance p.j (every distance
//               of a stage is below B); loads from x (SRC_X) or pairs,
//               stores pairs or the outputs (DST_OUT: indices, VALUES)
//   sort_step   one (stage k, distance j >= B) step over global memory
// A row whose pairs exceed one binding (argsort/top_k of long rows) is
// sorted in chunks of p.n pairs that fit one (indices p.ibase + col),
// then merged by rank: the pairs are distinct, so a pair's place in the
// row is the count of smaller pairs over all chunks:
//   sort_rank    rank[q] (+)= pairs of chunk b below pair q of chunk a,
//                by binary search (RANK_INIT: the first chunk b writes)
//   sort_scatter writes the pairs of chunk a whose rank falls in the
//                output window [p.w0, p.w0 + p.wn) (and below p.kout)
// Short rows share a block; stage k's direction comes from bit k of the
// column, so each row sorts ascending on its own.
#include "prelude.wgsl"
#include "dtype.wgsl"

struct Params {
    sh: vec4<u32>,    // .xyz: leading dims; .w: row length
    xst: vec4<u32>,   // x strides; .w along the row
    ost: vec4<u32>,   // index out strides
    vst: vec4<u32>,   // value out strides
    rows: u32,        // rows in this group
    r0: u32,          // the group's first row
    n: u32,           // padded row length
    lg: u32,          // log2(n)
    kout: u32,        // outputs per row (top k)
    k: u32,
    j: u32,
    kend: u32,
    xoff: u32,
    ooff: u32,
    voff: u32,
    desc: u32,        // 1: descending
    ibase: u32,       // index of column 0 (a chunk of a long row)
    w0: u32,          // sort_scatter: the output window's first rank
    wn: u32,          //               and its length
    pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

#if STEP
@group(0) @binding(1) var<storage, read_write> pr: array<vec2<u32>>;
#else
// PR: the access of the pairs and ranks these passes only read: read, or
// read_write when they share a buffer with a written binding (scratch in a
// graph's arena, next to the ranks and the outputs).
#if RANK
@group(0) @binding(1) var<storage, {{PR}}> pa: array<vec2<u32>>;
@group(0) @binding(2) var<storage, {{PR}}> pb: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> rk: array<u32>;
#else
#if SCATTER
@group(0) @binding(1) var<storage, {{PR}}> pa: array<vec2<u32>>;
@group(0) @binding(2) var<storage, {{PR}}> rk: array<u32>;
#tensor oi 3 i32 w
#if VALUES
#tensor x 4 X_DT X_MODE
#tensor ov 5 V_DT w
#endif
#else
#if SRC_X
#tensor x 1 X_DT X_MODE
#if DST_OUT
#tensor oi 2 i32 w
#if VALUES
#tensor ov 3 V_DT w
#endif
#else
@group(0) @binding(2) var<storage, read_write> pr: array<vec2<u32>>;
#endif
#else
@group(0) @binding(1) var<storage, read_write> pr: array<vec2<u32>>;
#if DST_OUT
#tensor oi 2 i32 w
#if VALUES
#tensor x 3 X_DT X_MODE
#tensor ov 4 V_DT w
#endif
#endif
#endif
#endif
#endif
#endif

const B: u32 = 2048u;
const SENTINEL: u32 = 0xffffffffu;

// (ka, ia) sorts before (kb, ib)
fn lt(ka: u32, ia: u32, kb: u32, ib: u32) -> bool {
    return ka < kb || (ka == kb && ia < ib);
}

fn row_base(r: u32, st: vec4<u32>) -> u32 {
    let q = r / p.sh.z;
    return (q / p.sh.y) * st.x + (q % p.sh.y) * st.y + (r % p.sh.z) * st.z;
}

#if RANK
@compute @workgroup_size(256)
fn sort_rank(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) li: u32) {
    let q = wg_linear(wid, nwg) * 256u + li;
    if (q >= p.n) {
        return;
    }
    let e = pa[q];
    if (e.y == SENTINEL) {
        return;
    }
    // lower bound of e in the sorted chunk b (its padding sorts last)
    var lo = 0u;
    var hi = p.n;
    loop {
        if (lo >= hi) {
            break;
        }
        let mid = (lo + hi) >> 1u;
        let m = pb[mid];
        if (lt(m.x, m.y, e.x, e.y)) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
#if RANK_INIT
    rk[q] = lo;
#else
    rk[q] = rk[q] + lo;
#endif
}
#else
#if SCATTER
@compute @workgroup_size(256)
fn sort_scatter(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    let q = wg_linear(wid, nwg) * 256u + li;
    if (q >= p.n) {
        return;
    }
    let e = pa[q];
    let r = rk[q];
    if (e.y == SENTINEL || r >= p.kout || r < p.w0 || r - p.w0 >= p.wn) {
        return;
    }
    oi_st(p.ooff + (r - p.w0) * p.ost.w, i32(e.y));
#if VALUES
    ov_st(p.voff + (r - p.w0) * p.vst.w, x_ld(p.xoff + (e.y - p.ibase) * p.xst.w));
#endif
}
#else
#if STEP
@compute @workgroup_size(256)
fn sort_step(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) li: u32) {
    let q = wg_linear(wid, nwg) * 256u + li;
    if (q >= (p.rows * p.n) >> 1u) {
        return;
    }
    let j = p.j;
    let i = ((q & ~(j - 1u)) << 1u) | (q & (j - 1u));
    let l = i + j;
    let asc = (i & p.k & (p.n - 1u)) == 0u;
    let a = pr[i];
    let b = pr[l];
    if (select(lt(a.x, a.y, b.x, b.y), lt(b.x, b.y, a.x, a.y), asc)) {
        pr[i] = b;
        pr[l] = a;
    }
}
#else

#if SRC_X
fn key_of(v: x_T) -> u32 {
#if FLOAT
    var b = bitcast<u32>(v);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        b = 0x7fc00000u; // one NaN, above +inf
    }
    if (b == 0x80000000u) {
        b = 0u;          // -0 == +0
    }
    var k = select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
#endif
#if SINT
    var k = bitcast<u32>(v) ^ 0x80000000u;
#endif
#if UINT
    var k = v;
#endif
    return select(k, ~k, p.desc != 0u);
}
#endif

// Loops below have trip counts unknown to the compiler on purpose: a
// fully unrolled loop around barriers made lavapipe take 1.2 s instead of
// 0.2 s to build this pipeline.
var<workgroup> sk: array<vec2<u32>, 2048>;

@compute @workgroup_size(256)
fn sort_local(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    let blk = wg_linear(wid, nwg);
    let total = p.rows * p.n;
    if (blk * B >= total) {
        return; // past the end of a folded grid: the whole workgroup leaves
    }
    let pm = p.n - 1u;
    for (var e = li; e < B; e += 256u) {
        let f = blk * B + e;
        var v = vec2<u32>(SENTINEL, SENTINEL);
#if SRC_X
        let row = f >> p.lg;
        let col = f & pm;
        if (row < p.rows && col < p.sh.w) {
            v = vec2<u32>(key_of(x_ld(p.xoff + row_base(p.r0 + row, p.xst) + col * p.xst.w)), p.ibase + col);
        }
#else
        if (f < total) {
            v = pr[f];
        }
#endif
        sk[e] = v;
    }
    workgroupBarrier();
    // stages k = p.k .. p.kend, distances j = k / 2 .. 1 (p.j for the first)
    var k = p.k;
    var j = p.j;
    loop {
        if (k > p.kend) {
            break;
        }
        for (var q = li; q < B / 2u; q += 256u) {
            let i = ((q & ~(j - 1u)) << 1u) | (q & (j - 1u));
            let l = i + j;
            let asc = ((blk * B + i) & k & pm) == 0u;
            let a = sk[i];
            let b = sk[l];
            if (select(lt(a.x, a.y, b.x, b.y), lt(b.x, b.y, a.x, a.y), asc)) {
                sk[i] = b;
                sk[l] = a;
            }
        }
        workgroupBarrier();
        if (j == 1u) {
            k = k << 1u;
            j = k >> 1u;
        } else {
            j = j >> 1u;
        }
    }
    for (var e = li; e < B; e += 256u) {
        let f = blk * B + e;
#if DST_OUT
        let row = f >> p.lg;
        let col = f & pm;
        if (row < p.rows && col < p.kout) {
            let r = p.r0 + row;
            let idx = sk[e].y;
            oi_st(p.ooff + row_base(r, p.ost) + col * p.ost.w, i32(idx));
#if VALUES
            ov_st(p.voff + row_base(r, p.vst) + col * p.vst.w, x_ld(p.xoff + row_base(r, p.xst) + idx * p.xst.w));
#endif
        }
#else
        if (f < total) {
            pr[f] = sk[e];
        }
#endif
    }
}
#endif
#endif
#endif
