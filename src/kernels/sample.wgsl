// Token sampling, one workgroup per row of logits (rules and tie handling:
// src/ops/sample.c).  Logits are compared through an order-preserving u32
// key, so every filter is "keep key >= t" and the thresholds are found by
// binary search over keys with workgroup reductions: no sorting, no scratch
// memory, any vocabulary size.
//
// CHUNKED (sample_chunked in sample.c; sample_chunked.wgsl): the same
// steps, but each reduction runs per chunk of the row in sample_part (one
// workgroup a chunk, stage P.e.y), writing partials to pt[], and
// sample_step (one workgroup a row) merges them and moves the search,
// whose state lives in sv[] between dispatches: for rows longer than one
// binding window (a dispatch a chunk) and for few rows of a large
// vocabulary (every chunk of every row in one dispatch).  The search
// itself (search_next / search_update) is shared with the one-pass kernel.
//
// SEED_IN (wgml_sample_seeded): one more read-only binding, the seed
// tensor, whose element P.g.x is added to the 64-bit seed P.c.zw on the
// GPU (seed_words), so a replayed graph draws anew when only that tensor
// changes between runs.
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
                    // CHUNKED: .y stage, .z the launch's first chunk, .w chunks a row.
    g: vec4<u32>,   // SEED_IN: the seed's element in its binding, 1 when i32 (sign-extended)
    h: vec4<u32>,   // CHUNKED: chunk length, candidate list words a chunk (0: no
                    // lists), chunks a row in this launch
}

@group(0) @binding(0) var<uniform> P: SampleParams;

#tensor l 1 L_DT L_MODE
#tensor o 2 i32 w
#if CHUNKED
@group(0) @binding(3) var<storage, read_write> sv: array<u32>;  // search state (SV_*)
@group(0) @binding(4) var<storage, read_write> pt: array<u32>;  // per-chunk partials
#endif
#ifdef SEED_IN
// i32 or u32, read as raw bits; rw only when a written binding shares
// its buffer (WebGPU refuses one buffer bound read-only and writable)
#ifdef CHUNKED
#tensor sd 5 u32 S_MODE
#else
#tensor sd 3 u32 S_MODE
#endif
#endif

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

// The 64-bit seed as (low, high) words: params.seed, plus the seed
// input's first element (u32 zero-extended, i32 sign-extended) mod 2^64,
// as wg_sample_seed_add in sample.c.  An input of 0 adds nothing, so the
// stream is exactly the one without an input.
fn seed_words() -> vec2<u32> {
#ifdef SEED_IN
    let s = sd_ld(P.g.x);
    let lo = P.c.z + s;
    let carry = select(0u, 1u, lo < s);   // the low words' sum wrapped
    let ext = select(0u, 0xffffffffu, P.g.y != 0u && (s & 0x80000000u) != 0u);
    return vec2<u32>(lo, P.c.w + carry + ext);
#else
    return P.c.zw;
#endif
}

// Counter-based stream: bits for (seed, row, draw counter); wg_sample_bits
// in sample.c is the same function.
fn rand_bits(row: u32, ctr: u32) -> u32 {
    let sw = seed_words();
    var h = mix32(sw.x + 0x9e3779b9u);
    h = mix32(h ^ sw.y);
    h = mix32(h ^ row);
    return mix32(h ^ mix32(ctr + 0x6a09e667u));
}

fn logit(rb: u32, i: u32) -> f32 {
#ifdef STEP
    return bitcast<f32>(l_ld(rb + i * P.b.x));   // never called: logits bound as raw words
#else
    return l_ld(rb + i * P.b.x);
#endif
}

// Over the tokens with key >= t: mass (weights when `weigh`) and count of
// those with key >= u, the smallest key >= u and the largest key < u (0
// when none), over the n logits from rb.  Every thread gets the result
// (uniform); the trailing barrier keeps the next reduction from
// overwriting sh_* early.
fn stats(li: u32, rb: u32, n: u32, t: u32, u: u32, m: f32, weigh: bool) -> Stats {
    var f = 0.0;
    var fc = 0.0;   // Kahan compensation: f32 sums of ~1000 terms per thread
    var c = 0u;
    var above = NONE;
    var below = 0u;
    for (var i = li; i < n; i += WG) {
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
    return stats_tree(li, Stats(f, c, above, below));
}

// The workgroup's Stats merged (sums, min of above, max of below).
fn stats_tree(li: u32, x: Stats) -> Stats {
    sh_f[li] = x.mass;
    sh_c[li] = x.count;
    sh_a[li] = x.above;
    sh_b[li] = x.below;
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

// The largest key of the n logits from rb and its first index (NONE:
// empty range).
fn range_max(li: u32, rb: u32, n: u32) -> vec2<u32> {
    var bk = 0u;
    var bi = NONE;
    for (var i = li; i < n; i += WG) {
        let k = skey(logit(rb, i));
        if (bi == NONE || k > bk) {
            bk = k;
            bi = i;
        }
    }
    return argmax_tree(li, bk, bi);
}

// The workgroup's (key, index) pairs merged: the largest key, the lowest
// index among its holders (NONE: no thread had one).
fn argmax_tree(li: u32, bk: u32, bi: u32) -> vec2<u32> {
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
        res.above = sh_a[0];
        res.below = sh_b[0];
    }
    let r = workgroupUniformLoad(&res);
    workgroupBarrier();
    return vec2<u32>(r.above, r.below);
}

// top-k, then top-p: each looks for the largest threshold whose kept set
// still passes.  A probe that passes moves lo up to the smallest key
// present at or above it, one that fails moves hi down to the largest key
// present below it (or to lo), so a search ends after at most 32 probes,
// and after about log2(distinct keys) on few values.
//   top-k: count(key >= t) >= k; stops early at exactly k (the kept set is
//          then the same).  Ties at the k-th value are all kept.
//   top-p: mass(key >= t') >= top_p * mass(key >= t) for t' >= t (the mass
//          is monotone in t', also in f32).
// phase 0: top-k search, 1: top-p total, 2: top-p search, 3: done (t).
struct Search {
    phase: u32,
    t: u32,
    lo: u32,
    hi: u32,
    mid: u32,
    want: f32,
}

fn search_start(mk: u32) -> Search {
    return search_next(Search(select(1u, 0u, P.c.x > 0u), 1u, 1u, mk, 0u, 0.0));
}

// Advances to the next probe (stats(t, mid), weighed unless phase 0) or
// to phase 3.
fn search_next(s0: Search) -> Search {
    var s = s0;
    loop {
        if (s.phase == 1u && (P.c.y & F_TOPP) == 0u) {
            s.phase = 3u;
            break;
        }
        if (s.phase != 1u && s.lo >= s.hi) {
            s.t = s.lo;
            if (s.phase == 2u) {
                s.phase = 3u;
                break;
            }
            s.phase = 1u;
            continue;
        }
        s.mid = select(s.lo + (s.hi - s.lo + 1u) / 2u, s.t, s.phase == 1u);
        break;
    }
    return s;
}

// The probe's result applied (mk: the row's largest key).
fn search_update(s0: Search, st: Stats, mk: u32) -> Search {
    var s = s0;
    if (s.phase == 1u) {
        s.want = P.f.y * st.mass;
        s.lo = s.t;
        s.hi = mk;
        s.phase = 2u;
    } else if ((s.phase == 0u && st.count >= P.c.x) || (s.phase == 2u && st.mass >= s.want)) {
        s.lo = min(st.above, s.hi);
        if (s.phase == 0u && st.count == P.c.x) {
            s.hi = s.lo;
        }
    } else {
        s.hi = max(s.lo, st.below);
    }
    return search_next(s);
}

// min-p: p >= min_p * p_max  <=>  logit >= m + T ln(min_p).
fn minp_threshold(t: u32, m: f32) -> u32 {
    if ((P.c.y & F_MINP) != 0u) {
        return max(t, skey(m + P.f.z));
    }
    return t;
}

// The weight of item i of a draw's range: (src 0) a logit's
// exp((v - m) / T) when its key is >= t, -1 when it is not kept; (src 1,
// CHUNKED) the kept mass of chunk i, from the partials at rb.
fn draw_w(src: u32, rb: u32, i: u32, t: u32, m: f32) -> f32 {
#if CHUNKED
    if (src == 1u) {
        return bitcast<f32>(pt[rb + 4u * i]);
    }
#endif
    let v = logit(rb, i);
    if (skey(v) >= t) {
        return exp((v - m) * P.f.x);
    }
    return -1.0;
}

// Categorical draw in index order over n items: each thread owns a
// contiguous block of the range, and the block sums are scanned in index
// order (so the intervals tile [0, total) exactly and only non-empty
// blocks own one).  Returns the range's total; sh_f holds the inclusive
// block sums.
fn block_sums(li: u32, src: u32, rb: u32, n: u32, t: u32, m: f32) -> f32 {
    let C = (n + WG - 1u) / WG;
    let b0 = min(li * C, n);
    let b1 = min(b0 + C, n);
    var s = 0.0;
    var sc = 0.0;   // Kahan, as in the walk below (same operations, same sums)
    for (var i = b0; i < b1; i++) {
        let w = draw_w(src, rb, i, t, m);
        if (w >= 0.0) {
            let y = w - sc;
            let ns = s + y;
            sc = (ns - s) - y;
            s = ns;
        }
    }
    sh_f[li] = s;
    workgroupBarrier();
#if CHUNKED
    return scan_16x16(li);
#else
    // thread 0 scans serially
    if (li == 0u) {
        var acc = 0.0;
        for (var j = 0u; j < WG; j++) {
            acc = acc + sh_f[j];
            sh_f[j] = acc;
        }
        res_f = acc;
    }
    return workgroupUniformLoad(&res_f);
#endif
}

// The item at `goal` (< total) of the range after block_sums, and the
// goal's offset within that item's weight (as f32 bits; the item's whole
// weight where rounding left the walk short); NONE for the threads that do
// not own it.
fn walk(li: u32, src: u32, rb: u32, n: u32, t: u32, m: f32, goal: f32) -> vec2<u32> {
    let C = (n + WG - 1u) / WG;
    let b0 = min(li * C, n);
    let b1 = min(b0 + C, n);
    let incl = sh_f[li];
    var excl = 0.0;
    if (li > 0u) {
        excl = sh_f[li - 1u];
    }
    if (!(excl <= goal && goal < incl)) {
        return vec2<u32>(NONE, 0u);
    }
    let rel = goal - excl;
    var acc = 0.0;
    var ac = 0.0;
    var pick = NONE;
    var at = 0.0;
    var last = b0;
    var lastw = 0.0;
    for (var i = b0; i < b1; i++) {
        let w = draw_w(src, rb, i, t, m);
        if (w >= 0.0) {
            if (w > 0.0) {
                last = i;
                lastw = w;
            }
            let before = acc;
            let y = w - ac;
            let na = acc + y;
            ac = (na - acc) - y;
            acc = na;
            if (acc > rel) {
                pick = i;
                at = rel - before;
                break;
            }
        }
    }
    // Rounding can leave acc just short of rel: the block's last item
    // with weight is then the one.
    if (pick == NONE) {
        return vec2<u32>(last, bitcast<u32>(lastw));
    }
    return vec2<u32>(pick, bitcast<u32>(at));
}

// u * total for the row's draw, kept below total (u < 1, but the product
// may round up to it).
fn draw_goal(row: u32, total: f32) -> f32 {
    let u = f32(rand_bits(row, 0u) >> 8u) * 5.9604644775390625e-8;
    return min(u * total, bitcast<f32>(bitcast<u32>(total) - 1u));
}

#ifndef CHUNKED
@compute @workgroup_size({{WG}})
fn sample(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let r = wg_linear(wid, nwg);
    if (r >= P.a.x) {
        return;
    }
    let rb = P.a.z + r * P.a.w;
    let oi = P.b.y + r * P.b.z;

    // Largest key, first occurrence.
    let best = range_max(li, rb, P.a.y);
    let mk = best.x;
    let m = unkey(mk);
    if ((P.c.y & F_GREEDY) != 0u || (bitcast<u32>(m) & 0x7f800000u) == 0x7f800000u) {
        if (li == 0u) {
            o_st(oi, i32(best.y));
        }
        return;
    }
    // One loop with one reduction call site keeps the shader small (every
    // inlined copy costs compile time).
    var s = search_start(mk);
    loop {
        if (s.phase == 3u) {
            break;
        }
        s = search_update(s, stats(li, rb, P.a.y, s.t, s.mid, m, s.phase != 0u), mk);
    }
    let t = minp_threshold(s.t, m);
    let total = block_sums(li, 0u, rb, P.a.y, t, m);
    let pick = walk(li, 0u, rb, P.a.y, t, m, draw_goal(P.b.w + r, total)).x;
    if (pick != NONE) {
        o_st(oi, i32(pick));
    }
}
#else
#include "sample_chunked.wgsl"
#endif
