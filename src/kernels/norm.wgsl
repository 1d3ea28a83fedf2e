// Normalisations, one row per workgroup (host: src/ops/norm.c).  The row
// value is v = x (+ residual r), also written to `so` on request.  Kinds
// (p.ip.z; uniform branches, so one kernel variant serves them all):
//   0 LAYER  (v - mean) / sqrt(var + eps), statistics by per-thread
//            Welford merged exactly (Chan et al.), so no cancellation as
//            in E[v^2] - E[v]^2; GROUP_NORM is LAYER over rows of
//            (C/groups) x spatial elements
//   1 RMS    v / sqrt(mean(v^2) + eps)
//   2 L2     v / max(|v|_2, eps)
//   3 BATCH  (v - mean[c]) / sqrt(var[c] + eps) from running statistics:
//            no reduction, one pass
// then * weight + bias.  Weight/bias/mean/var are read at element j of
// their row, or at j / p.ip.x when p.ip.x > 1 (group norm: the channel of
// element j when a row is channels x spatial).
// NaN: a NaN among a row's values makes its statistic NaN, and nan_scale
// then makes the scale NaN, so the whole row comes out NaN -- for L2 too,
// where max(NaN, eps) may return eps, and whatever inverseSqrt makes of a
// NaN.
//   p.fp.x eps   p.ip.y flags: 1 residual, 2 weight, 4 bias, 8 sum_out
//   (optional operands cost no kernel variants either)
#include "rows.wgsl"
#tensor x 1 X_DT X_MODE
#tensor r 2 R_DT R_MODE
#tensor w 3 W_DT W_MODE
#tensor b 4 B_DT B_MODE
#tensor mn 5 MN_DT MN_MODE
#tensor vr 6 VR_DT VR_MODE
#tensor o 7 O_DT O_MODE
#tensor so 8 SO_DT SO_MODE

fn has(flag: u32) -> bool {
    return (p.ip.y & flag) != 0u;
}

#include "norm_fns.wgsl"

// v = x (+ residual) at a chunk's clamped indices (rows.wgsl).
fn values(xb: u32, rb: u32, base: u32, n: u32) -> vec4<f32> {
    let c = chunk_clamped(base, n);
    let j = c * p.st[0].w + vec4<u32>(xb);
    var v = vec4<f32>(x_ld(j.x), x_ld(j.y), x_ld(j.z), x_ld(j.w));
    if (has(1u)) {
        let k = c * p.st[1].w + vec4<u32>(rb);
        v = v + vec4<f32>(r_ld(k.x), r_ld(k.y), r_ld(k.z), r_ld(k.w));
    }
    return v;
}

// Index of element j in a per-channel operand's row.  A chunked group
// norm row (p.ip.w = 1) counts channels from the row's start, since its
// weight and bias stay at the row's first channel (stride 1, not moved
// with the chunk: the host sets their row stride 0 and a tail).
fn chan(j: vec4<u32>) -> vec4<u32> {
    if (p.ip.x == 1u) {
        return j;
    }
#ifdef CHUNKED
    return (j + vec4<u32>(p.chunk.y * p.chunk.w)) / vec4<u32>(p.ip.x);
#else
    return j / vec4<u32>(p.ip.x);
#endif
}

// Element stride of weight (k = 2) or bias (3) at chan(j).
fn wstride(k: u32) -> u32 {
    return select(p.st[k].w, 1u, p.ip.w == 1u);
}

// Operand k (per-element or per-channel, read at chan(j)) over a chunk.
fn w4(base: u32, c: vec4<u32>) -> vec4<f32> {
    let i = c * wstride(2u) + vec4<u32>(base);
    return vec4<f32>(w_ld(i.x), w_ld(i.y), w_ld(i.z), w_ld(i.w));
}
fn b4(base: u32, c: vec4<u32>) -> vec4<f32> {
    let i = c * wstride(3u) + vec4<u32>(base);
    return vec4<f32>(b_ld(i.x), b_ld(i.y), b_ld(i.z), b_ld(i.w));
}
#ifndef PARTIAL
// (PARTIAL binds the mean/var slots write-only, for its partials.)
fn mn4(base: u32, c: vec4<u32>) -> vec4<f32> {
    let i = c * p.st[4].w + vec4<u32>(base);
    return vec4<f32>(mn_ld(i.x), mn_ld(i.y), mn_ld(i.z), mn_ld(i.w));
}
fn vr4(base: u32, c: vec4<u32>) -> vec4<f32> {
    let i = c * p.st[5].w + vec4<u32>(base);
    return vec4<f32>(vr_ld(i.x), vr_ld(i.y), vr_ld(i.z), vr_ld(i.w));
}
#endif

// Chan's merge of two (count, mean, M2) partial statistics.
fn merge(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
    let c = a.x + b.x;
    if (b.x == 0.0) {
        return a;
    }
    if (a.x == 0.0) {
        return b;
    }
    let d = b.y - a.y;
    let f = b.x / c;
    return vec3<f32>(c, a.y + d * f, a.z + b.z + d * d * a.x * f);
}

// The row's (count, mean, M2) from each thread's.
fn row_stats(li: u32, lane: u32, acc: vec3<f32>) -> vec3<f32> {
#ifdef HAS_SUBGROUPS
    // Within a subgroup: the pooled mean, then M2 = sum of M2_i plus
    // n_i (mean_i - mean)^2 (an exact decomposition, no cancellation).
    let n = subgroupAdd(acc.x);
    let mean = select(subgroupAdd(acc.x * acc.y) / n, 0.0, n == 0.0);
    let d = acc.y - mean;
    let m2 = subgroupAdd(acc.z + acc.x * d * d);
    let np = parts_put(lane, vec3<f32>(n, mean, m2));
    var t = vec3<f32>(0.0, 0.0, 0.0);
    for (var k = 0u; k < np; k = k + 1u) {
        t = merge(t, vec3<f32>(red0[k], red1[k], red2[k]));
    }
    return t;
#else
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
    return vec3<f32>(red0[0], red1[0], red2[0]);
#endif
}

// Four elements per thread are loaded before any is used, so the loads
// overlap; lanes past the row (live = false) are skipped.
fn layer_acc(li: u32, xb: u32, rb: u32, n: u32) -> vec3<f32> {
    var acc = vec3<f32>(0.0, 0.0, 0.0);
    for (var base = li; base < n; base = base + WG * K) {
        let v = values(xb, rb, base, n);
        let live = chunk(base) < vec4<u32>(n);
        for (var u = 0u; u < K; u = u + 1u) {
            if (live[u]) {
                acc.x = acc.x + 1.0;
                let d = v[u] - acc.y;
                acc.y = acc.y + d / acc.x;
                acc.z = acc.z + d * (v[u] - acc.y);
            }
        }
    }
    return acc;
}

// (mean, scale) from the row's (count, mean, M2) over n elements.
fn layer_scale(t: vec3<f32>, n: u32, eps: f32) -> vec2<f32> {
    return vec2<f32>(t.y, nan_scale(inverseSqrt(t.z / f32(n) + eps), is_nan(t.y) || is_nan(t.z)));
}

// This thread's sum of squares.
fn sumsq_acc(li: u32, xb: u32, rb: u32, n: u32) -> f32 {
    var ss = 0.0;
    for (var base = li; base < n; base = base + WG * K) {
        let v = select(vec4<f32>(0.0), values(xb, rb, base, n), chunk(base) < vec4<u32>(n));
        ss = ss + dot(v, v);
    }
    return ss;
}

#ifdef CHUNKED
// The (mean, scale) of a row from its chunks' partials (COMBINE), read
// from the mean/var slots: a chunk's (mean, M2) for LAYER, with its count
// from the chunk length, or its sum of squares for RMS/L2.
fn combined(li: u32, lane: u32, r: vec3<u32>, kind: u32, eps: f32) -> vec2<f32> {
    let a0 = row_base(4u, r);
    let b0 = row_base(5u, r);
    if (kind == 0u) {
        var acc = vec3<f32>(0.0, 0.0, 0.0);
        for (var k = li; k < p.chunk.x; k = k + WG) {
            let cnt = f32(min(p.chunk.y, p.chunk.z - k * p.chunk.y));
            acc = merge(acc, vec3<f32>(cnt, mn_ld(a0 + k), vr_ld(b0 + k)));
        }
        return layer_scale(row_stats(li, lane, acc), p.chunk.z, eps);
    }
    var ss = 0.0;
    for (var k = li; k < p.chunk.x; k = k + WG) {
        ss = ss + mn_ld(a0 + k);
    }
    return vec2<f32>(0.0, ss_scale(row_sum(li, lane, ss), p.chunk.z, eps, kind == 1u));
}
#endif

#ifdef ROWS4
// LAYER/RMS/L2 over rows of contiguous, aligned vectors (the launcher's
// ROWS4 path): each thread keeps its R vectors of v in registers, so x and
// the residual are read once; the thread's own statistics are exact two-
// pass ones over its registers, merged as in the scalar path.
const R: u32 = {{R}}u;

#ifdef Q8OUT
// A one-row norm whose 8-bit codes follow its row (graph fusion's xq tail,
// norm.c wg_norm_xq): the values also go to workgroup memory, and after a
// barrier each thread quantises blocks of 32 of them (q8_block.wgsl) into
// the words after the row, which the next one-row product reads instead
// of quantising x in each of its workgroups (matvec_xs.wgsl XS_PREQ);
// with subgroups of a multiple of 8 lanes, a vec4 a lane (q8_lanes.wgsl).
// (A block a thread in registers, WG = k / 32, needs no barrier but was
// slower on an H200, 17.2 us a call against 13.7, and its fewer threads
// sum the squares in another order: the codes then differ from the
// unfused graph's by an ulp now and then; bench/NOTES.md.)
var<workgroup> ys: array<vec4<f32>, R * WG>;
fn xq_put(i: u32, v: u32) {
    o_buf[i >> 2u][i & 3u] = v;
}
#include "q8_block.wgsl"
#ifdef HAS_SUBGROUPS
#include "q8_lanes.wgsl"
#endif
#endif

fn row_kernel(li: u32, lane: u32, r: vec3<u32>) {
    let n4 = p.shape.w / 4u;
    let eps = p.fp.x;
    let kind = p.ip.z;
    let xb = row_base(0u, r) / 4u;
    let rb = row_base(1u, r) / 4u;
    var c = array<vec4<f32>, R>();
    // weight and bias loaded with x, before the row's reduction: one DRAM
    // round trip a row instead of two (a decode step's norm is one row,
    // one workgroup: its latency is the dispatch's)
    var wv = array<vec4<f32>, R>();
    var bv = array<vec4<f32>, R>();
    let wb = row_base(2u, r) / 4u;
    let bb = row_base(3u, r) / 4u;
    var sum = 0.0;
    var cnt = 0.0;
    for (var k = 0u; k < R; k = k + 1u) {
        let v = li + k * WG;
        let vc = min(v, n4 - 1u);
        var x = x_ld4(xb + vc);
        if (has(1u)) {
            x = x + r_ld4(rb + vc);
        }
        if (has(2u)) {
            wv[k] = w_ld4(wb + vc);
        }
        if (has(4u)) {
            bv[k] = b_ld4(bb + vc);
        }
        c[k] = select(vec4<f32>(0.0), x, vec4<bool>(v < n4));
        sum = sum + dot(c[k], vec4<f32>(1.0));
        cnt = cnt + select(0.0, 4.0, v < n4);
    }
    var mean = 0.0;
    var scale = 1.0;
    if (kind == 0u) {
        let m = select(sum / cnt, 0.0, cnt == 0.0);
        var m2 = 0.0;
        for (var k = 0u; k < R; k = k + 1u) {
            let d = select(vec4<f32>(0.0), c[k] - vec4<f32>(m), vec4<bool>(li + k * WG < n4));
            m2 = m2 + dot(d, d);
        }
        let t = row_stats(li, lane, vec3<f32>(cnt, m, m2));
        mean = t.y;
        scale = nan_scale(inverseSqrt(t.z / f32(p.shape.w) + eps), is_nan(t.y) || is_nan(t.z));
    } else {
        var ss = 0.0;
        for (var k = 0u; k < R; k = k + 1u) {
            ss = ss + dot(c[k], c[k]);
        }
        scale = ss_scale(row_sum(li, lane, ss), p.shape.w, eps, kind == 1u);
    }
    let ob = row_base(6u, r) / 4u;
    let sob = row_base(7u, r) / 4u;
    for (var k = 0u; k < R; k = k + 1u) {
        let v = li + k * WG;
        if (v < n4) {
            var y = (c[k] - vec4<f32>(mean)) * scale;
            if (has(2u)) {
                y = y * wv[k];
            }
            if (has(4u)) {
                y = y + bv[k];
            }
            if (has(8u)) {
                so_st4(sob + v, c[k]);
            }
            o_st4(ob + v, y);
#ifdef Q8OUT
            ys[v] = y;
#endif
        }
    }
#ifdef Q8OUT
    workgroupBarrier();
    let qo = row_base(6u, r) + p.shape.w;
#ifdef HAS_SUBGROUPS
    if (sg_size % 8u == 0u) {
        // a vec4 a lane (q8_lanes.wgsl), the subgroup-uniform loop
        for (var q0 = sg_id * sg_size; q0 < n4; q0 += sg_count * sg_size) {
            let q = q0 + lane;
            q8_lanes_put(qo, n4, q, ys[min(q, n4 - 1u)], q < n4);
        }
        return;
    }
#endif
    for (var blk = li; blk < n4 / 8u; blk += WG) {
        var a: array<vec4<f32>, 8>;
        for (var i = 0u; i < 8u; i++) {
            a[i] = ys[8u * blk + i];
        }
        q8_block(qo, p.shape.w / 4u, blk, a);
    }
#endif
}
#else
fn row_kernel(li: u32, lane: u32, r: vec3<u32>) {
    let n = p.shape.w;
    let eps = p.fp.x;
    let xb = row_base(0u, r);
    let rb = row_base(1u, r);

    // (mean, 1 / scale) of the row; batch norm reads its statistics later.
    var ms = vec2<f32>(0.0, 1.0);
    let kind = p.ip.z;
#if PARTIAL
    // this chunk's statistics only (kinds 0..2; BATCH is never chunked)
    if (kind == 0u) {
        let t = row_stats(li, lane, layer_acc(li, xb, rb, n));
        if (li == 0u) {
            mn_st(row_base(4u, r), t.y);
            vr_st(row_base(5u, r), t.z);
        }
    } else {
        let ss = row_sum(li, lane, sumsq_acc(li, xb, rb, n));
        if (li == 0u) {
            mn_st(row_base(4u, r), ss);
        }
    }
#else
#if COMBINE
    ms = combined(li, lane, r, kind, eps);
#else
    if (kind == 0u) {
        ms = layer_scale(row_stats(li, lane, layer_acc(li, xb, rb, n)), n, eps);
    } else if (kind < 3u) {
        ms = vec2<f32>(0.0, ss_scale(row_sum(li, lane, sumsq_acc(li, xb, rb, n)), n, eps, kind == 1u));
    }
#endif
    let mean = ms.x;
    let scale = ms.y;

    let wb = row_base(2u, r);
    let bb = row_base(3u, r);
    let mnb = row_base(4u, r);
    let vrb = row_base(5u, r);
    let ob = row_base(6u, r);
    let sob = row_base(7u, r);
    for (var base = li; base < n; base = base + WG * K) {
        let v = values(xb, rb, base, n);
        let c = chan(chunk_clamped(base, n));
        var y = (v - vec4<f32>(mean)) * scale;
        if (kind == 3u) {
            // a NaN var gives NaN: WGSL does not promise inverseSqrt(NaN) is
            let vr = vr4(vrb, c);
            let nanv = (bitcast<vec4<u32>>(vr) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u);
            y = (v - mn4(mnb, c)) * select(inverseSqrt(vr + vec4<f32>(eps)), vec4<f32>(nan_of(0u)), nanv);
        }
        if (has(2u)) {
            y = y * w4(wb, c);
        }
        if (has(4u)) {
            y = y + b4(bb, c);
        }
        let jj = chunk(base);
        for (var u = 0u; u < K; u = u + 1u) {
            let j = jj[u];
            if (j >= n) {
                break;
            }
            if (has(8u)) {
                so_st(sob + j * p.st[7].w, v[u]);
            }
            o_st(ob + j * p.st[6].w, y[u]);
        }
    }
#endif
}
#endif

#include "rows_main.wgsl"
