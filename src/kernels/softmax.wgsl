// softmax / log_softmax of one row per workgroup (host: src/ops/softmax.c).
// Logit v_j = scale * x_j (+ slope * mask_j, slope = 1 without ALIBI).
// One pass keeps a running (max, sum of exp(v - max)) per thread (online
// softmax), a tree merges them, and the sink logit (SINKS) joins as one
// more pair; a second pass writes exp(v - max) / sum or v - max - log(sum).
// A row whose every logit is -inf (and no finite sink) has sum 0: it is
// written as 0 (softmax) or -inf (log_softmax) instead of 0/0.
//   p.fp: x scale, y log2(m0), z log2(m1)    p.ip: x head coordinate (0..2)
//   of the row, y n_head_log2
#include "rows.wgsl"
#tensor x 1 X_DT X_MODE
#ifdef MASK
#tensor m 2 M_DT M_MODE
#endif
#ifdef SINKS
#tensor s 3 S_DT S_MODE
#endif
#tensor o 4 O_DT O_MODE

// ggml's ALiBi slope of head h: m0^(h+1) for the first n_head_log2 heads,
// then m1^(2(h - n_head_log2) + 1), as powers of two.
fn slope_of(r: vec3<u32>) -> f32 {
#ifdef ALIBI
    let h = r[p.ip.x];
    let k = p.ip.y;
    if (h < k) {
        return exp2(p.fp.y * f32(h + 1u));
    }
    return exp2(p.fp.z * f32(2u * (h - k) + 1u));
#else
    return 1.0;
#endif
}

fn logit(xb: u32, mb: u32, j: u32, slope: f32) -> f32 {
    var v = x_ld(xb + j * p.st[0].w) * p.fp.x;
#ifdef MASK
    v = v + slope * m_ld(mb + j * p.st[1].w);
#endif
    return v;
}

// Merges two (max, sum) pairs; a pair with sum 0 holds no finite logit
// and adds nothing (its max may be -inf: no exp(-inf - -inf)).
fn merge(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let m = max(a.x, b.x);
    var s = 0.0;
    if (a.y > 0.0) {
        s = s + a.y * exp(a.x - m);
    }
    if (b.y > 0.0) {
        s = s + b.y * exp(b.x - m);
    }
    return vec2<f32>(m, s);
}

@compute @workgroup_size({{WG}})
fn softmax(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let row = wg_linear(wid, nwg);
    if (row >= row_count()) {
        return;
    }
    let r = row_coords(row);
    let n = p.shape.w;
    let xb = row_base(0u, r);
    let mb = row_base(1u, r);
    let ob = row_base(3u, r);
    let slope = slope_of(r);

    var acc = vec2<f32>(neg_inf(), 0.0);
    for (var j = li; j < n; j = j + WG) {
        let v = logit(xb, mb, j, slope);
        if (v > acc.x) {
            var s = 1.0;
            if (acc.y > 0.0) {
                s = s + acc.y * exp(acc.x - v);
            }
            acc = vec2<f32>(v, s);
        } else if (v > neg_inf()) {
            acc.y = acc.y + exp(v - acc.x);
        }
    }
    red0[li] = acc.x;
    red1[li] = acc.y;
    workgroupBarrier();
    for (var h = WG / 2u; h > 0u; h = h / 2u) {
        if (li < h) {
            let q = merge(vec2<f32>(red0[li], red1[li]), vec2<f32>(red0[li + h], red1[li + h]));
            red0[li] = q.x;
            red1[li] = q.y;
        }
        workgroupBarrier();
    }
    var tot = vec2<f32>(red0[0], red1[0]);
#ifdef SINKS
    let sk = s_ld(row_base(2u, r));
    if (sk > neg_inf()) {
        tot = merge(tot, vec2<f32>(sk, 1.0));
    }
#endif

    if (tot.y == 0.0) {
        for (var j = li; j < n; j = j + WG) {
#ifdef LOG
            o_st(ob + j * p.st[3].w, neg_inf());
#else
            o_st(ob + j * p.st[3].w, 0.0);
#endif
        }
        return;
    }
#ifdef LOG
    let lse = log(tot.y);
#else
    let inv = 1.0 / tot.y;
#endif
    for (var j = li; j < n; j = j + WG) {
        let v = logit(xb, mb, j, slope);
#ifdef LOG
        o_st(ob + j * p.st[3].w, (v - tot.x) - lse);
#else
        var e = 0.0;
        if (v > neg_inf()) {
            e = exp(v - tot.x) * inv;
        }
        o_st(ob + j * p.st[3].w, e);
#endif
    }
}
