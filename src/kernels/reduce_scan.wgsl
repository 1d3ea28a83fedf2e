// Prefix sums along one axis (wgml_cumsum).  Row r (the other axes, up to
// three) starts at p.xoff + dot(coords, p.xst.xyz) and steps p.xst.w.
// A workgroup covers 256 / p.tpr rows with p.tpr threads each, and one
// block [b * p.blk, (b + 1) * p.blk) of each: it walks the block in chunks
// of 4 * tpr elements (4 consecutive per thread), scans the thread totals
// in workgroup memory (Hillis-Steele) and carries the chunk total on.
// Floats add in f32, integers in i32/u32 (wrapping).
//
// Long rows with few of them use three passes so the GPU fills:
//   TOTALS    each block's total -> tot[row][b]
//   (this kernel again, exclusive, over tot)
//   CARRY_IN  each block starts from cin[row][b]
// A row longer than one binding is cut into pieces that fit, one dispatch
// each, with the same three passes over the pieces (p.tb0: the piece).
#include "prelude.wgsl"
#include "dtype.wgsl"

struct Params {
    sh: vec4<u32>,    // .xyz: row dims, outermost first; .w: axis length
    xst: vec4<u32>,   // x strides of the row dims; .w: along the axis
    ost: vec4<u32>,   // out strides likewise
    rows: u32,
    tpr: u32,         // threads per row (power of two)
    blk: u32,         // elements per block
    nblk: u32,        // blocks per row
    xoff: u32,
    ooff: u32,
    excl: u32,        // 1: exclusive
    tb0: u32,         // first tot/cin word of this dispatch (a row longer
                      // than one binding runs a dispatch per piece)
}

@group(0) @binding(0) var<uniform> p: Params;
#tensor x 1 X_DT X_MODE
#if TOTALS
@group(0) @binding(2) var<storage, read_write> tot: array<u32>;
#else
#tensor o 2 O_DT w
#endif
#if CARRY_IN
@group(0) @binding(3) var<storage, {{CIN_ACCESS}}> cin: array<u32>;
#endif

alias A = x_T;

var<workgroup> tsum: array<A, 256>;

fn row_base(r: u32, st: vec4<u32>) -> u32 {
    let q = r / p.sh.z;
    return (q / p.sh.y) * st.x + (q % p.sh.y) * st.y + (r % p.sh.z) * st.z;
}

@compute @workgroup_size(256)
fn scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let w = wg_linear(wid, nwg);
    let T = p.tpr;
    let rpw = 256u / T;
    let nrb = (p.rows + rpw - 1u) / rpw;
    let b = w / nrb;
    if (b >= p.nblk) {
        return; // past the end of a folded grid: the whole workgroup leaves
    }
    let t = li % T;
    let row = (w % nrb) * rpw + li / T;
    let live = row < p.rows;
    var xb = 0u;
    var ob = 0u;
    if (live) {
        xb = p.xoff + row_base(row, p.xst);
        ob = p.ooff + row_base(row, p.ost);
    }
    var carry = A(0);
#if CARRY_IN
    if (live) {
        carry = bitcast<A>(cin[p.tb0 + row * p.nblk + b]);
    }
#endif
    let j0 = b * p.blk;
    let j1 = min(p.sh.w, j0 + p.blk);
    for (var c0 = j0; c0 < j1; c0 += 4u * T) {
        let jt = c0 + 4u * t;
        // (loops bounded at run time: lavapipe unrolls constant ones around
        // the barriers into much slower pipeline builds)
        let nm = min(4u, j1 - min(jt, j1));
        var e = array<A, 4>(A(0), A(0), A(0), A(0));
        if (live) {
            for (var m = 0u; m < nm; m++) {
                e[m] = x_ld(xb + (jt + m) * p.xst.w);
            }
        }
        var inc = array<A, 4>(e[0], e[0] + e[1], A(0), A(0));
        inc[2] = inc[1] + e[2];
        inc[3] = inc[2] + e[3];
        tsum[li] = inc[3];
        workgroupBarrier();
        for (var off = 1u; off < T; off <<= 1u) {
            var add = A(0);
            if (t >= off) {
                add = tsum[li - off];
            }
            workgroupBarrier();
            tsum[li] = tsum[li] + add;
            workgroupBarrier();
        }
        var pre = carry;
        if (t > 0u) {
            pre = carry + tsum[li - 1u];
        }
#ifndef TOTALS
        if (live) {
            for (var m = 0u; m < nm; m++) {
                var v = pre + inc[m];
                if (p.excl != 0u) {
                    v = select(pre + inc[max(m, 1u) - 1u], pre, m == 0u);
                }
                o_st(ob + (jt + m) * p.ost.w, v);
            }
        }
#endif
        carry = carry + tsum[li - t + T - 1u];
        workgroupBarrier();
    }
#if TOTALS
    if (live && t == 0u) {
        tot[p.tb0 + row * p.nblk + b] = bitcast<u32>(carry);
    }
#endif
}
