// softmax / log_softmax of one row per workgroup (host: src/ops/softmax.c).
// Logit v_j = scale * x_j (+ slope * mask_j, slope = 1 without ALiBi).
// One pass keeps a running (max, sum of exp(v - max)) per thread (online
// softmax), a merge over the workgroup combines them, and the sink logit
// joins as one more pair; a second pass writes exp(v - max) / sum or
// v - max - log(sum).
// Masked logits (-inf in x or mask) become the finite sentinel NEG =
// -FLT_MAX, so no step computes -inf - -inf: a sentinel's term is
// exp(NEG - max) = 0 once any real logit sets the max.  A row whose max
// stays NEG (every logit masked, no finite sink) is written as 0 (softmax)
// or -inf (log_softmax); masked entries of other rows as 0 or -inf.
// NaN: a NaN logit (x, mask or sink) or a +inf one (exp(inf - inf)) makes
// the row's sum NaN, and a NaN sum writes the whole row as NaN.  NaN is
// never clamped: WGSL's max() of a NaN may return the other operand, which
// used to turn a NaN logit into a masked one.  The sum is the carrier
// because it survives every merge (NaN * w and NaN + w are NaN) whatever
// the max of a NaN gives; one test of its bits per row finds it.
// Each thread loads K = 4 elements before using any (chunk_clamped in
// rows.wgsl): the loads overlap instead of each waiting on the last.
// ROWS4 (rows of contiguous, 16-byte aligned vectors, at most 4 WG R
// elements): each thread keeps its R vectors of logits in registers, so x
// and the mask are read once instead of twice (on an H100 the second
// read cost ~15% against torch, which reads once).
//   p.fp: x scale, y log2(m0), z log2(m1)    p.ip: x head coordinate (0..2)
//   of the row, y n_head_log2, z flags (1 log_softmax, 2 ALiBi, 4 mask,
//   8 sinks): uniform branches, so options cost no kernel variants
#include "rows.wgsl"
#tensor x 1 X_DT X_MODE
#tensor m 2 M_DT M_MODE
#tensor s 3 S_DT S_MODE
#tensor o 4 O_DT O_MODE
#ifdef CHUNKED
#tensor qa 5 QA_DT QA_MODE
#tensor qb 6 QB_DT QB_MODE
#endif

const NEG: f32 = -3.4028234663852886e38;

// ggml's ALiBi slope of head h: m0^(h+1) for the first n_head_log2 heads,
// then m1^(2(h - n_head_log2) + 1), as powers of two.
fn slope_of(r: vec3<u32>) -> f32 {
    if ((p.ip.z & 2u) == 0u) {
        return 1.0;
    }
    let h = r[p.ip.x] + p.origin[p.ip.x];
    let k = p.ip.y;
    if (h < k) {
        return exp2(p.fp.y * f32(h + 1u));
    }
    return exp2(p.fp.z * f32(2u * (h - k) + 1u));
}

// The logits of a chunk (rows.wgsl); masked ones (-inf, tested on bits:
// compilers may assume no infinities) and those past the row are NEG.
fn logits(xb: u32, mb: u32, base: u32, n: u32, slope: f32) -> vec4<f32> {
    let j = chunk_clamped(base, n) * p.st[0].w + vec4<u32>(xb);
    let x = vec4<f32>(x_ld(j.x), x_ld(j.y), x_ld(j.z), x_ld(j.w));
    var v = x * p.fp.x;
    if ((p.ip.z & 4u) != 0u) {
        let k = chunk_clamped(base, n) * p.st[1].w + vec4<u32>(mb);
        let m = vec4<f32>(m_ld(k.x), m_ld(k.y), m_ld(k.z), m_ld(k.w));
        v = select(v + slope * m, vec4<f32>(NEG), ninf4(m));
    }
    return select(v, vec4<f32>(NEG), ninf4(x) | ninf4(v) | chunk(base) >= vec4<u32>(n));
}

fn ninf4(v: vec4<f32>) -> vec4<bool> {
    return bitcast<vec4<u32>>(v) == vec4<u32>(0xff800000u);
}

fn merge(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let m = max(a.x, b.x);
    return vec2<f32>(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}

// The row's (max, sum) from each thread's.
fn row_pair(li: u32, lane: u32, acc: vec2<f32>) -> vec2<f32> {
#ifdef HAS_SUBGROUPS
    let m = subgroupMax(acc.x);
    let np = parts_put(lane, vec3<f32>(m, subgroupAdd(acc.y * exp(acc.x - m)), 0.0));
    var t = vec2<f32>(NEG, 0.0);
    for (var k = 0u; k < np; k = k + 1u) {
        t = merge(t, vec2<f32>(red0[k], red1[k]));
    }
    return t;
#else
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
    return vec2<f32>(red0[0], red1[0]);
#endif
}

// The row's totals from each thread's (max, sum): sinks joined, and what
// the output pass needs.
struct Totals {
    mx: f32,
    inv: f32,     // 1 / sum
    lse: f32,     // log(sum)
    lg: bool,     // log_softmax
    none: bool,   // every logit masked
    nan: bool,    // a NaN or +inf logit: the row is NaN
}

fn totals(li: u32, lane: u32, r: vec3<u32>, acc: vec2<f32>) -> Totals {
    var tot = row_pair(li, lane, acc);
    if ((p.ip.z & 8u) != 0u) {
        let sk = s_ld(row_base(2u, r));
        tot = merge(tot, vec2<f32>(select(sk, NEG, is_ninf(sk)), 1.0));
    }
    let nan = is_nan(tot.y) || is_nan(tot.x);
    return Totals(tot.x, 1.0 / tot.y, log(tot.y), (p.ip.z & 1u) != 0u, tot.x == NEG, nan);
}

// Outputs of four logits.
fn outputs(l: vec4<f32>, t: Totals) -> vec4<f32> {
    let d = l - vec4<f32>(t.mx);
    let e = select(exp(d) * t.inv, d - vec4<f32>(t.lse), vec4<bool>(t.lg));
    let r = select(e, vec4<f32>(select(0.0, neg_inf(), t.lg)), vec4<bool>(t.none) | l == vec4<f32>(NEG));
    return select(r, vec4<f32>(nan_of(0u)), vec4<bool>(t.nan));
}

#ifdef ROWS4
const R: u32 = {{R}}u;

// Logits of vector v of the row (operands' first vectors xb, mb).
fn logits4(xb: u32, mb: u32, v: u32, slope: f32) -> vec4<f32> {
    let x = x_ld4(xb + v);
    var l = x * p.fp.x;
    if ((p.ip.z & 4u) != 0u) {
        let m = m_ld4(mb + v);
        l = select(l + slope * m, vec4<f32>(NEG), ninf4(m));
    }
    return select(l, vec4<f32>(NEG), ninf4(x) | ninf4(l));
}

fn row_kernel(li: u32, lane: u32, r: vec3<u32>) {
    let n4 = p.shape.w / 4u;
    let xb = row_base(0u, r) / 4u;
    let mb = row_base(1u, r) / 4u;
    let ob = row_base(3u, r) / 4u;
    let slope = slope_of(r);
    // Every load is issued (clamped into the row) before any is used.
    var c = array<vec4<f32>, R>();
    for (var k = 0u; k < R; k = k + 1u) {
        let v = li + k * WG;
        c[k] = select(vec4<f32>(NEG), logits4(xb, mb, min(v, n4 - 1u), slope), vec4<bool>(v < n4));
    }
    var mx = NEG;
    for (var k = 0u; k < R; k = k + 1u) {
        mx = max(mx, max(max(c[k].x, c[k].y), max(c[k].z, c[k].w)));
    }
    var sum = 0.0;
    for (var k = 0u; k < R; k = k + 1u) {
        let e = exp(c[k] - vec4<f32>(mx));
        sum = sum + ((e.x + e.y) + (e.z + e.w));
    }
    let t = totals(li, lane, r, vec2<f32>(mx, sum));
    for (var k = 0u; k < R; k = k + 1u) {
        let v = li + k * WG;
        if (v < n4) {
            o_st4(ob + v, outputs(c[k], t));
        }
    }
}
#else
fn row_kernel(li: u32, lane: u32, r: vec3<u32>) {
    let n = p.shape.w;
    let xb = row_base(0u, r);
    let mb = row_base(1u, r);
    let ob = row_base(3u, r);
    let slope = slope_of(r);
    var acc = vec2<f32>(NEG, 0.0);
#if COMBINE
    // the row's chunk pairs (written by PARTIAL), merged like threads'
    let qa0 = row_base(4u, r);
    let qb0 = row_base(5u, r);
    for (var k = li; k < p.chunk.x; k = k + WG) {
        acc = merge(acc, vec2<f32>(qa_ld(qa0 + k), qb_ld(qb0 + k)));
    }
#else
    for (var base = li; base < n; base = base + WG * K) {
        let v = logits(xb, mb, base, n, slope);
        let mx = max(acc.x, max(max(v.x, v.y), max(v.z, v.w)));
        let e = exp(v - vec4<f32>(mx));
        acc = vec2<f32>(mx, acc.y * exp(acc.x - mx) + ((e.x + e.y) + (e.z + e.w)));
    }
#endif
#if PARTIAL
    // this chunk's (max, sum) only: sinks join once, in COMBINE's totals
    let pr = row_pair(li, lane, acc);
    if (li == 0u) {
        qa_st(row_base(4u, r), pr.x);
        qb_st(row_base(5u, r), pr.y);
    }
    return;
#else
    let t = totals(li, lane, r, acc);
    for (var base = li; base < n; base = base + WG * K) {
        let e = outputs(logits(xb, mb, base, n, slope), t);
        let j = chunk(base);
        let o = j * p.st[3].w + vec4<u32>(ob);
        o_st(o.x, e.x);
        if (j.y < n) {
            o_st(o.y, e.y);
        }
        if (j.z < n) {
            o_st(o.z, e.z);
        }
        if (j.w < n) {
            o_st(o.w, e.w);
        }
    }
#endif
}
#endif

#include "rows_main.wgsl"
