// Token sampling, one workgroup per row of logits (rules and tie handling:
// src/ops/sample.c).  Logits are compared through an order-preserving u32
// key, so every filter is "keep key >= t" and the thresholds are found by
// binary search over keys with workgroup reductions: no sorting, no scratch
// memory, any vocabulary size.
#include "prelude.wgsl"
#include "dtype.wgsl"

struct SampleParams {
    a: vec4<u32>,   // rows in this launch, vocab, logits offset, logits row stride
    b: vec4<u32>,   // logits column stride, out offset, out stride, row index of this launch's first row
    c: vec4<u32>,   // top_k (0: off), flags, seed low word, seed high word
    f: vec4<f32>,   // 1 / temperature, top_p, temperature * ln(min_p)
    e: vec4<u32>,   // WG / 2: where the reduction trees start.  A uniform, not a
                    // constant, so the tree loops are not unrolled: each
                    // unrolled barrier made lavapipe's compile much slower.
}

@group(0) @binding(0) var<uniform> P: SampleParams;

#tensor l 1 L_DT L_MODE
#tensor o 2 i32 w

const WG: u32 = {{WG}}u;
const NONE: u32 = 0xffffffffu;
const F_GREEDY: u32 = 1u;
const F_TOPP: u32 = 2u;
const F_MINP: u32 = 4u;

// One reduction step's results: a mass, a count, the smallest key >= the
// probe and the largest key below it.
struct Stats {
    mass: f32,
    count: u32,
    above: u32,
    below: u32,
}

var<workgroup> sh_f: array<f32, {{WG}}>;
var<workgroup> sh_c: array<u32, {{WG}}>;
var<workgroup> sh_a: array<u32, {{WG}}>;
var<workgroup> sh_b: array<u32, {{WG}}>;
var<workgroup> res: Stats;
var<workgroup> res_f: f32;

// Order-preserving key of a logit: NaN -> 0 (below -inf), -0 and +0 equal.
fn skey(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return 0u;
    }
    if (v == 0.0) {
        return 0x80000000u;
    }
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn unkey(k: u32) -> f32 {
    return bitcast<f32>(select(~k, k & 0x7fffffffu, k >= 0x80000000u));
}

// 32-bit avalanche mix (xor-shift-multiply); a bijection on u32.
fn mix32(x: u32) -> u32 {
    var z = x;
    z = z ^ (z >> 16u);
    z = z * 0x21f0aaadu;
    z = z ^ (z >> 15u);
    z = z * 0x735a2d97u;
    z = z ^ (z >> 15u);
    return z;
}

// Counter-based stream: bits for (seed, row, draw counter); wg_sample_bits
// in sample.c is the same function.
fn rand_bits(row: u32, ctr: u32) -> u32 {
    var h = mix32(P.c.z + 0x9e3779b9u);
    h = mix32(h ^ P.c.w);
    h = mix32(h ^ row);
    return mix32(h ^ mix32(ctr + 0x6a09e667u));
}

fn logit(rb: u32, i: u32) -> f32 {
    return l_ld(rb + i * P.b.x);
}

// Over the tokens with key >= t: mass (weights when `weigh`) and count of
// those with key >= u, the smallest key >= u and the largest key < u (0
// when none).  Every thread gets the result (uniform); the trailing
// barrier keeps the next reduction from overwriting sh_* early.
fn stats(li: u32, rb: u32, t: u32, u: u32, m: f32, weigh: bool) -> Stats {
    var f = 0.0;
    var fc = 0.0;   // Kahan compensation: f32 sums of ~1000 terms per thread
    var c = 0u;
    var above = NONE;
    var below = 0u;
    for (var i = li; i < P.a.y; i += WG) {
        let v = logit(rb, i);
        let k = skey(v);
        if (k >= u) {
            above = min(above, k);
            if (k >= t) {
                c += 1u;
                if (weigh) {
                    let y = exp((v - m) * P.f.x) - fc;
                    let nf = f + y;
                    fc = (nf - f) - y;
                    f = nf;
                }
            }
        } else {
            below = max(below, k);
        }
    }
    sh_f[li] = f;
    sh_c[li] = c;
    sh_a[li] = above;
    sh_b[li] = below;
    workgroupBarrier();
    for (var s = P.e.x; s > 0u; s = s >> 1u) {
        if (li < s) {
            sh_f[li] = sh_f[li] + sh_f[li + s];
            sh_c[li] = sh_c[li] + sh_c[li + s];
            sh_a[li] = min(sh_a[li], sh_a[li + s]);
            sh_b[li] = max(sh_b[li], sh_b[li + s]);
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        res = Stats(sh_f[0], sh_c[0], sh_a[0], sh_b[0]);
    }
    let r = workgroupUniformLoad(&res);
    workgroupBarrier();
    return r;
}

@compute @workgroup_size({{WG}})
fn sample(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let r = wg_linear(wid, nwg);
    if (r >= P.a.x) {
        return;
    }
    let V = P.a.y;
    let rb = P.a.z + r * P.a.w;
    let oi = P.b.y + r * P.b.z;

    // Largest key, first occurrence.
    var bk = 0u;
    var bi = NONE;
    for (var i = li; i < V; i += WG) {
        let k = skey(logit(rb, i));
        if (bi == NONE || k > bk) {
            bk = k;
            bi = i;
        }
    }
    sh_a[li] = bk;
    sh_b[li] = bi;
    workgroupBarrier();
    for (var s = P.e.x; s > 0u; s = s >> 1u) {
        if (li < s) {
            let k2 = sh_a[li + s];
            let i2 = sh_b[li + s];
            let i1 = sh_b[li];
            if (i2 != NONE && (i1 == NONE || k2 > sh_a[li] || (k2 == sh_a[li] && i2 < i1))) {
                sh_a[li] = k2;
                sh_b[li] = i2;
            }
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        res.count = sh_a[0];
    }
    let mk = workgroupUniformLoad(&res).count;
    let m = unkey(mk);
    if ((P.c.y & F_GREEDY) != 0u || (bitcast<u32>(m) & 0x7f800000u) == 0x7f800000u) {
        if (li == 0u) {
            o_st(oi, i32(sh_b[0]));
        }
        return;
    }
    workgroupBarrier();

    // top-k, then top-p: each looks for the largest threshold whose kept
    // set still passes.  A probe that passes moves lo up to the smallest
    // key present at or above it, one that fails moves hi down to the
    // largest key present below it (or to lo), so a search ends after at
    // most 32 probes, and after about log2(distinct keys) on few values.
    //   top-k: count(key >= t) >= k; stops early at exactly k (the kept
    //          set is then the same).  Ties at the k-th value are all kept.
    //   top-p: mass(key >= t') >= top_p * mass(key >= t) for t' >= t (the
    //          mass is monotone in t', also in f32).
    // One loop with one reduction call site keeps the shader small (every
    // inlined copy costs compile time).  phase 0: top-k search, 1: top-p
    // total, 2: top-p search.
    let kk = P.c.x;
    var t = 1u;
    var phase = select(1u, 0u, kk > 0u);
    var lo = 1u;
    var hi = mk;
    var want = 0.0;
    loop {
        if (phase == 1u && (P.c.y & F_TOPP) == 0u) {
            break;
        }
        if (phase != 1u && lo >= hi) {
            t = lo;
            if (phase == 2u) {
                break;
            }
            phase = 1u;
            continue;
        }
        let mid = select(lo + (hi - lo + 1u) / 2u, t, phase == 1u);
        let st = stats(li, rb, t, mid, m, phase != 0u);
        if (phase == 1u) {
            want = P.f.y * st.mass;
            lo = t;
            hi = mk;
            phase = 2u;
        } else if ((phase == 0u && st.count >= kk) || (phase == 2u && st.mass >= want)) {
            lo = min(st.above, hi);
            if (phase == 0u && st.count == kk) {
                hi = lo;
            }
        } else {
            hi = max(lo, st.below);
        }
    }

    // min-p: p >= min_p * p_max  <=>  logit >= m + T ln(min_p).
    if ((P.c.y & F_MINP) != 0u) {
        t = max(t, skey(m + P.f.z));
    }

    // Categorical draw in index order: each thread owns a contiguous block,
    // thread 0 scans the block sums serially (so the intervals tile
    // [0, total) exactly and only non-empty blocks own one), and the owner
    // of u * total walks its block.
    let C = (V + WG - 1u) / WG;
    let b0 = min(li * C, V);
    let b1 = min(b0 + C, V);
    var s = 0.0;
    var sc = 0.0;   // Kahan, as in the walk below (same operations, same sums)
    for (var i = b0; i < b1; i++) {
        let v = logit(rb, i);
        if (skey(v) >= t) {
            let y = exp((v - m) * P.f.x) - sc;
            let ns = s + y;
            sc = (ns - s) - y;
            s = ns;
        }
    }
    sh_f[li] = s;
    workgroupBarrier();
    if (li == 0u) {
        var acc = 0.0;
        for (var j = 0u; j < WG; j++) {
            acc = acc + sh_f[j];
            sh_f[j] = acc;
        }
        res_f = acc;
    }
    let total = workgroupUniformLoad(&res_f);
    let incl = sh_f[li];
    var excl = 0.0;
    if (li > 0u) {
        excl = sh_f[li - 1u];
    }
    let u = f32(rand_bits(P.b.w + r, 0u) >> 8u) * 5.9604644775390625e-8;
    // u < 1, but u * total may round up to total: stay below it.
    let goal = min(u * total, bitcast<f32>(bitcast<u32>(total) - 1u));
    if (excl <= goal && goal < incl) {
        let rel = goal - excl;
        var acc = 0.0;
        var ac = 0.0;
        var pick = NONE;
        var last = b0;
        for (var i = b0; i < b1; i++) {
            let v = logit(rb, i);
            if (skey(v) >= t) {
                let w = exp((v - m) * P.f.x);
                if (w > 0.0) {
                    last = i;
                }
                let y = w - ac;
                let na = acc + y;
                ac = (na - acc) - y;
                acc = na;
                if (acc > rel) {
                    pick = i;
                    break;
                }
            }
        }
        // Rounding can leave acc just short of rel: the block's last token
        // with weight is then the one.
        o_st(oi, i32(select(pick, last, pick == NONE)));
    }
}
