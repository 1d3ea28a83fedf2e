// Normalisations, one row per workgroup (host: src/ops/norm.c).  The row
// value is v = x (+ residual with RES; written to `so` with SUM).  Kinds:
//   LAYER  (v - mean) / sqrt(var + eps), statistics by per-thread Welford
//          merged in a tree (Chan et al.), so no cancellation in E[v^2] - E[v]^2;
//          GROUP_NORM is LAYER over rows of (C/groups) x spatial elements
//   RMS    v / sqrt(mean(v^2) + eps)
//   L2     v / max(|v|_2, eps)
//   BATCH  (v - mean[c]) / sqrt(var[c] + eps) from running statistics: no
//          reduction, one pass
// then * weight (WEIGHT) + bias (BIAS).  Weight/bias/mean/var are read at
// element j of their row, or at j / p.ip.x with WDIV (group norm: the
// channel of element j when a row is channels x spatial).
//   p.fp.x eps
#include "rows.wgsl"
#tensor x 1 X_DT X_MODE
#ifdef RES
#tensor r 2 R_DT R_MODE
#endif
#ifdef WEIGHT
#tensor w 3 W_DT W_MODE
#endif
#ifdef BIAS
#tensor b 4 B_DT B_MODE
#endif
#ifdef BATCH
#tensor mn 5 MN_DT MN_MODE
#tensor vr 6 VR_DT VR_MODE
#endif
#tensor o 7 O_DT O_MODE
#ifdef SUM
#tensor so 8 SO_DT SO_MODE
#endif

fn value(xb: u32, rb: u32, j: u32) -> f32 {
    var v = x_ld(xb + j * p.st[0].w);
#ifdef RES
    v = v + r_ld(rb + j * p.st[1].w);
#endif
    return v;
}

// Index of element j in a per-channel operand's row.
fn chan(j: u32) -> u32 {
#ifdef WDIV
    return j / p.ip.x;
#else
    return j;
#endif
}

// Chan's merge of two (count, mean, M2) partial statistics.
fn merge(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
    let c = a.x + b.x;
    if (c == 0.0) {
        return a;
    }
    let d = b.y - a.y;
    let f = b.x / c;
    return vec3<f32>(c, a.y + d * f, a.z + b.z + d * d * a.x * f);
}

@compute @workgroup_size({{WG}})
fn norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let row = wg_linear(wid, nwg);
    if (row >= row_count()) {
        return;
    }
    let r = row_coords(row);
    let n = p.shape.w;
    let eps = p.fp.x;
    let xb = row_base(0u, r);
    let rb = row_base(1u, r);

    var mean = 0.0;
    var scale = 1.0;
#ifdef LAYER
    var acc = vec3<f32>(0.0, 0.0, 0.0);
    for (var j = li; j < n; j = j + WG) {
        let v = value(xb, rb, j);
        acc.x = acc.x + 1.0;
        let d = v - acc.y;
        acc.y = acc.y + d / acc.x;
        acc.z = acc.z + d * (v - acc.y);
    }
    red0[li] = acc.x;
    red1[li] = acc.y;
    red2[li] = acc.z;
    workgroupBarrier();
    for (var h = WG / 2u; h > 0u; h = h / 2u) {
        if (li < h) {
            let q = merge(vec3<f32>(red0[li], red1[li], red2[li]), vec3<f32>(red0[li + h], red1[li + h], red2[li + h]));
            red0[li] = q.x;
            red1[li] = q.y;
            red2[li] = q.z;
        }
        workgroupBarrier();
    }
    mean = red1[0];
    scale = inverseSqrt(red2[0] / f32(n) + eps);
#endif
#ifdef SUMSQ
    var ss = 0.0;
    for (var j = li; j < n; j = j + WG) {
        let v = value(xb, rb, j);
        ss = ss + v * v;
    }
    ss = tree_sum(li, ss);
#ifdef RMS
    scale = inverseSqrt(ss / f32(n) + eps);
#else
    scale = 1.0 / max(sqrt(ss), eps);
#endif
#endif

    let wb = row_base(2u, r);
    let bb = row_base(3u, r);
    let mnb = row_base(4u, r);
    let vrb = row_base(5u, r);
    let ob = row_base(6u, r);
    let sob = row_base(7u, r);
    for (var j = li; j < n; j = j + WG) {
        let v = value(xb, rb, j);
#ifdef SUM
        so_st(sob + j * p.st[7].w, v);
#endif
        let c = chan(j);
#ifdef BATCH
        var y = (v - mn_ld(mnb + c * p.st[4].w)) * inverseSqrt(vr_ld(vrb + c * p.st[5].w) + eps);
#else
        var y = (v - mean) * scale;
#endif
#ifdef WEIGHT
        y = y * w_ld(wb + c * p.st[2].w);
#endif
#ifdef BIAS
        y = y + b_ld(bb + c * p.st[3].w);
#endif
        o_st(ob + j * p.st[6].w, y);
    }
}
