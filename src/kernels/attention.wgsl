// Flash attention forward (host: src/ops/attention.c, attention_run.c).
// One template for every variant; the host picks the tile shape:
//   BQ query rows per workgroup, RQ rows per thread, BK keys per tile,
//   TN threads along keys (S phase) and along value dims (O phase),
//   WG = BQ / RQ * TN threads, DK / DV the (padded) head dims held in
//   workgroup memory; DEXACT: DK and DV are the real dims (the 64, 80,
//   96, 128 and 256 specialisations, GPUs only), else p.dims.z / p.dims.w
//   bound them (CPU drivers: DK / DV are a class, 64, 128 or 256).
// Features (causal, window, softcap, ALiBi, sinks, the mask and its dtype,
// split runs) are flags in p.offs2.w, uniform per dispatch: one compiled
// kernel per tile, head dim class and K/V/q/out dtypes serves them all.
// A workgroup's rows are (head within the KV head's group, query) pairs,
// R = g * Sq + i, so GQA heads sharing a KV head read each K/V tile once
// (one query of 4 grouped heads is 4 rows over one K/V stream: decode).
// Per K/V tile: load K (converted to f32, q8_0 decoded) -> S = q.k^T for
// BQ x BK, scaled, soft-capped, masked (NEG sentinel) -> row max/sum
// update (online softmax) by BQ threads while all load V into K's place
// -> O = O * alpha + P.V.  Nothing of size Sq x Skv is stored.
// Flag F_SPLIT (a uniform, not a define, so a tile's split and whole runs
// share one compiled kernel; out is then f32): instead of the normalised
// output, each row writes (max, sum,
// acc[Dv]) for its key chunk (one of p.ss.y per dispatch) to a partial
// run; flag CARRY merges into what an earlier dispatch (a previous piece
// of a KV cache too long for one binding) left there.  Entry attn_reduce
// (define REDUCE) merges a row's runs, adds the sink, normalises, writes.
// Entries attn_dec (define DECODE, attention_decode.wgsl: variant splitkv)
// and attn_dsg (DECODE and DSG, attention_dsg.wgsl: dsg, dsg_np) are the
// decode kernels: attn_dec always writes partial runs, for attn_reduce;
// attn_dsg writes runs for attn_merge, or with one chunk the output.
// They share the mask, score and row helpers below with the tiled attn.
#include "prelude.wgsl"
#include "dtype.wgsl"

struct Params {
    dims: vec4<u32>,   // Sq of the op, keys of this dispatch, D, Dv
    blk: vec4<u32>,    // block extents: B, Hkv, G, Sq
    org: vec4<u32>,    // block origin in the op: b, hkv, g, i
    offs: vec4<u32>,   // q, k, v, mask: first element in binding (q8_0: byte)
    offs2: vec4<u32>,  // sinks, out (or partials), key origin j0 of this dispatch, flags
    ss: vec4<u32>,     // x -, y splits per dispatch, z keys per split, w -
    fp: vec4<f32>,     // scale, softcap, log2 m0, log2 m1
    ip: vec4<u32>,     // Sq of the op, Skv of the op, window, n_head_log2
    hq: vec4<u32>,     // G of the op, sinks stride per KV head, per group head, -
    qs: vec4<u32>,     // q strides over (b, hkv, g, i)
    ms: vec4<u32>,     // mask strides
    os: vec4<u32>,     // out (or partial run) strides
    kv: vec4<u32>,     // k b, k hkv, v b, v hkv strides
    in1: vec4<u32>,    // q d, k j, k d, v j strides
    in2: vec4<u32>,    // v d, mask j, out d strides
}
@group(0) @binding(0) var<uniform> p: Params;

const F_CAUSAL: u32 = 1u;
const F_WINDOW: u32 = 2u;
const F_SOFTCAP: u32 = 4u;
const F_MASK: u32 = 8u;
const F_ALIBI: u32 = 16u;
const F_SINKS: u32 = 32u;
const F_CARRY: u32 = 64u;
const F_MASK16: u32 = 128u;  // the mask is f16
const F_MASK8: u32 = 256u;   // the mask is bool / u8 (nonzero keeps)
const F_SPLIT: u32 = 512u;   // write partial runs (out is the f32 scratch)

const NEG: f32 = -3.4028234663852886e38;

#include "fbits.wgsl"

fn flag(f: u32) -> bool {
    return (p.offs2.w & f) != 0u;
}

// ggml's ALiBi slope of head h (softmax.wgsl's formula).
fn slope_of(h: u32) -> f32 {
    if (!flag(F_ALIBI)) {
        return 1.0;
    }
    let k = p.ip.w;
    if (h < k) {
        return exp2(p.fp.z * f32(h + 1u));
    }
    return exp2(p.fp.w * f32(2u * (h - k) + 1u));
}

// The factor a row's acc (kept as exp(. - mx)) takes for the output:
// 1 / sum, with the sink of head (hk, g) joined (F_SINKS); 0 for no
// weight at all.
fn out_scale(hk: u32, g: u32, mx: f32, sum: f32) -> f32 {
    var fin = 1.0;
    var sm = sum;
    if (flag(F_SINKS)) {
        let sk = s_ld(p.offs2.x + hk * p.hq.y + g * p.hq.z);
        if (!is_ninf(sk)) {
            let m2 = max(mx, sk);
            fin = select(exp(mx - m2), 0.0, mx == NEG);
            sm = sm * fin + exp(sk - m2);  // acc keeps exp(. - mx): fin rescales it
        }
    }
    return select(fin / sm, 0.0, sm == 0.0);
}

#if REDUCE
// ---------------------------------------------------------------- reduce
#tensor part 1 f32 PART_MODE
#tensor s 2 S_DT S_MODE
#tensor o 3 O_DT O_MODE

const WGR: u32 = 256u;  // threads; also the most runs a row may have (p.ss.y)
const RDS: u32 = 32u;   // value dims per workgroup: 8 lanes of runs x 32 dims

// A reduce workgroup's row (b, hk, g, i) and slice ds of value dims (nds
// a row), its partial runs' first element pb and its output's ob; none
// past the grid.
struct RRow {
    ds: u32,
    i: u32,
    g: u32,
    hk: u32,
    b: u32,
    pb: u32,
    ob: u32,
    live: bool,
}

fn rrow_of(wid: vec3<u32>, nwg: vec3<u32>, nds: u32) -> RRow {
    var t = wg_linear(wid, nwg);
    let live = t < p.blk.x * p.blk.y * p.blk.z * p.blk.w * nds;
    let ds = t % nds;
    t = t / nds;
    let i = t % p.blk.w;
    t = t / p.blk.w;
    let g = t % p.blk.z;
    t = t / p.blk.z;
    let hk = t % p.blk.y;
    let b = t / p.blk.y;
    return RRow(ds, i, g, hk, b, p.offs2.y + b * p.os.x + hk * p.os.y + g * p.os.z + i * p.os.w,
                p.offs.w + b * p.ms.x + hk * p.ms.y + g * p.ms.z + i * p.ms.w, live);
}

var<workgroup> Rw: array<f32, WGR>;  // each run's weight exp(m_s - max)
var<workgroup> Rr: array<f32, WGR>;  // a value per thread, then the acc lanes
var<workgroup> Rq: array<f32, 16>;   // 16 partial reductions

// Max (mx) or sum of the WGR threads' x, in two levels of 16 (barriers in
// a loop, as a tree needs, took lavapipe seconds to compile).
fn wg_reduce(li: u32, x: f32, mx: bool) -> f32 {
    Rr[li] = x;
    workgroupBarrier();
    if (li < 16u) {
        var a = Rr[li * 16u];
        for (var k = 1u; k < 16u; k++) {
            let y = Rr[li * 16u + k];
            a = select(a + y, max(a, y), mx);
        }
        Rq[li] = a;
    }
    workgroupBarrier();
    var a = Rq[0];
    for (var k = 1u; k < 16u; k++) {
        a = select(a + Rq[k], max(a, Rq[k]), mx);
    }
    workgroupBarrier();  // Rr and Rq are free again
    return a;
}

// One workgroup per (row, 32 value dims): merges the row's p.ss.y partial
// runs (max, sum, acc) like online-softmax states, joins the sink, writes
// acc / sum.  The runs are read in parallel (one thread per run for the
// max and sum, 8 run lanes x 32 dims for acc, 4 loads in flight each): a
// serial walk over the runs was ~3 dependent L2 round trips per run.
@compute @workgroup_size(256)
fn attn_reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let dv = p.dims.w;
    let rr = rrow_of(wid, nwg, (dv + RDS - 1u) / RDS);
    if (!rr.live) {
        return;
    }
    let nsp = p.ss.y;
    let run = dv + 2u;
    let pb = rr.pb;
    var ms = NEG;
    if (li < nsp) {
        ms = part_ld(pb + li * run);
    }
    let mx = wg_reduce(li, ms, true);
    let wt = select(exp(ms - mx), 0.0, ms == NEG);
    Rw[li] = wt;
    var ls = 0.0;
    if (li < nsp) {
        ls = part_ld(pb + li * run + 1u) * wt;
    }
    let sum = wg_reduce(li, ls, false);  // its barriers also complete Rw
    let inv = out_scale(rr.hk, rr.g, mx, sum);
    let dd = li % RDS;
    let sl = li / RDS;
    let d = rr.ds * RDS + dd;
    var a0 = 0.0;
    var a1 = 0.0;
    var a2 = 0.0;
    var a3 = 0.0;
    if (d < dv) {
        let ab = pb + 2u + d;
        for (var s = sl; s < nsp; s += 32u) {
            a0 = fma(Rw[s], part_ld(ab + s * run), a0);
            if (s + 8u < nsp) {
                a1 = fma(Rw[s + 8u], part_ld(ab + (s + 8u) * run), a1);
            }
            if (s + 16u < nsp) {
                a2 = fma(Rw[s + 16u], part_ld(ab + (s + 16u) * run), a2);
            }
            if (s + 24u < nsp) {
                a3 = fma(Rw[s + 24u], part_ld(ab + (s + 24u) * run), a3);
            }
        }
    }
    Rr[li] = (a0 + a1) + (a2 + a3);
    workgroupBarrier();
    if (li < RDS && d < dv) {
        var acc = 0.0;
        for (var k = 0u; k < WGR / RDS; k++) {
            acc = acc + Rr[k * RDS + li];
        }
        o_st(rr.ob + d * p.in2.z, acc * inv);
    }
}

// attn_merge: the subgroup decode kernel's reduce (attn_dsg's runs, at
// most WG_ATTN_DSG_MAX_CHUNKS = 64 a row).  One workgroup per (row, MDS
// value dims): run lane sl merges runs sl, sl + MRL, ... four at a time
// (all loads of a round in flight: 64 runs are one L2 round trip), then
// one barrier and MDS threads merge the MRL lanes.  attn_reduce's chain
// is ~3 dependent round trips and 7 barriers (its reductions come before
// its loads).
const MRL: u32 = 16u;  // run lanes
const MDS: u32 = 16u;  // value dims per workgroup (MRL x MDS = WGR threads)

var<workgroup> Wm: array<f32, MRL>;
var<workgroup> Wl: array<f32, MRL>;
var<workgroup> Wa: array<f32, WGR>;

// Run s of the row at pb: (max, sum, acc[d]); past the runs: empty.
fn run_at(pb: u32, s: u32, d: u32) -> vec3<f32> {
    if (s >= p.ss.y) {
        return vec3<f32>(NEG, 0.0, 0.0);
    }
    let rb = pb + s * (p.dims.w + 2u);
    var a = 0.0;
    if (d < p.dims.w) {
        a = part_ld(rb + 2u + d);
    }
    return vec3<f32>(part_ld(rb), part_ld(rb + 1u), a);
}

// Weight of a run of max m under max mx (0 for an empty run).
fn run_w(m: f32, mx: f32) -> f32 {
    return select(exp(m - mx), 0.0, m == NEG);
}

@compute @workgroup_size(256)
fn attn_merge(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    let dv = p.dims.w;
    let rr = rrow_of(wid, nwg, (dv + MDS - 1u) / MDS);
    if (!rr.live) {
        return;
    }
    let pb = rr.pb;
    let dd = li % MDS;
    let sl = li / MDS;
    let d = rr.ds * MDS + dd;
    var m = NEG;
    var l = 0.0;
    var a = 0.0;
    for (var s = sl; s < p.ss.y; s += 4u * MRL) {
        let r0 = run_at(pb, s, d);
        let r1 = run_at(pb, s + MRL, d);
        let r2 = run_at(pb, s + 2u * MRL, d);
        let r3 = run_at(pb, s + 3u * MRL, d);
        let mn = max(max(m, max(r0.x, r1.x)), max(r2.x, r3.x));
        let w = vec4<f32>(run_w(r0.x, mn), run_w(r1.x, mn), run_w(r2.x, mn), run_w(r3.x, mn));
        let wo = run_w(m, mn);
        l = l * wo + dot(w, vec4<f32>(r0.y, r1.y, r2.y, r3.y));
        a = a * wo + dot(w, vec4<f32>(r0.z, r1.z, r2.z, r3.z));
        m = mn;
    }
    if (dd == 0u) {  // every dim lane of a run lane holds the same max and sum
        Wm[sl] = m;
        Wl[sl] = l;
    }
    Wa[li] = a;
    workgroupBarrier();
    if (li >= MDS || d >= dv) {
        return;
    }
    var mx = NEG;
    for (var k = 0u; k < MRL; k++) {
        mx = max(mx, Wm[k]);
    }
    var sum = 0.0;
    var acc = 0.0;
    for (var k = 0u; k < MRL; k++) {
        let w = run_w(Wm[k], mx);
        sum = sum + Wl[k] * w;
        acc = acc + Wa[k * MDS + li] * w;
    }
    o_st(rr.ob + d * p.in2.z, acc * out_scale(rr.hk, rr.g, mx, sum));
}
#else
// ---------------------------------------------------------------- attention
#tensor q 1 Q_DT Q_MODE
#tensor m 4 u32 M_MODE
#tensor s 5 S_DT S_MODE
#tensor o 6 O_DT O_MODE

// KRAW / VRAW: K / V bound as raw words (q8_0 blocks; the decode kernel
// binds every dtype so, in 16-byte vectors: K_MODE "r4" or "rw4").
// p.offs.y / z is then the byte of the first element (q8_0: block).
#ifdef KRAW
#tensor k 2 u32 K_MODE
fn k_byte(b: u32) -> u32 {
    return (k_ld(b >> 2u) >> ((b & 3u) * 8u)) & 0xffu;
}
// q8_0 blocks along D: 34 bytes = f16 scale + 32 int8; e is the element's
// index from the binding's first block.
fn k_q8(e: u32) -> f32 {
    let b = p.offs.y + (e / 32u) * 34u;
    let d = wg_f16_to_f32(k_byte(b) | (k_byte(b + 1u) << 8u));
    return d * f32(bitcast<i32>(k_byte(b + 2u + e % 32u) << 24u) >> 24u);
}
#else
#tensor k 2 K_DT K_MODE
#endif
#ifdef VRAW
#tensor v 3 u32 V_MODE
fn v_byte(b: u32) -> u32 {
    return (v_ld(b >> 2u) >> ((b & 3u) * 8u)) & 0xffu;
}
fn v_q8(e: u32) -> f32 {
    let b = p.offs.z + (e / 32u) * 34u;
    let d = wg_f16_to_f32(v_byte(b) | (v_byte(b + 1u) << 8u));
    return d * f32(bitcast<i32>(v_byte(b + 2u + e % 32u) << 24u) >> 24u);
}
#else
#tensor v 3 V_DT V_MODE
#endif
#ifndef DECODE
// The tiled kernel's element loads (e from the binding's first element).
#ifdef K_Q8
fn k_val(e: u32) -> f32 {
    return k_q8(e);
}
#else
fn k_val(e: u32) -> f32 {
    return f32(k_ld(p.offs.y + e));
}
#endif
#ifdef V_Q8
fn v_val(e: u32) -> f32 {
    return v_q8(e);
}
#else
fn v_val(e: u32) -> f32 {
    return f32(v_ld(p.offs.z + e));
}
#endif
#endif

// The mask is bound as raw words (its first element at byte p.offs.w)
// and its dtype is a flag, so one compiled kernel serves f32, f16, bool
// and u8 masks and none (lavapipe takes seconds to compile each kernel).
// Element e of a bool / u8 mask: nonzero keeps.
fn mask_u8(e: u32) -> u32 {
    let by = p.offs.w + e;
    return (m_ld(by >> 2u) >> ((by & 3u) * 8u)) & 0xffu;
}
// Element e of an additive (f32 / f16) mask.
fn mask_f(e: u32) -> f32 {
    if (flag(F_MASK16)) {
        let by = p.offs.w + 2u * e;
        return wg_f16_to_f32((m_ld(by >> 2u) >> ((by & 2u) * 8u)) & 0xffffu);
    }
    return bitcast<f32>(m_ld((p.offs.w >> 2u) + e));
}

const BQ: u32 = {{BQ}}u;       // query rows per workgroup
const WG: u32 = {{WG}}u;       // threads
const DK: u32 = {{DK}}u;
const DV: u32 = {{DV}}u;

// ROLLED (CPU devices): the per-thread loops get a bound the compiler
// cannot see (p.ss.x is 1), so they stay loops: lavapipe compiles
// barriers as coroutines, and the unrolled S and output blocks made one
// kernel take 4-10 s to compile there.  GPUs get them unrolled (the
// private arrays then live in registers).
fn n_(c: u32) -> u32 {
#ifdef ROLLED
    return c * p.ss.x;
#else
    return c;
#endif
}

fn d_k() -> u32 {
#ifdef DEXACT
    return DK;
#else
    return p.dims.z;
#endif
}
fn d_v() -> u32 {
#ifdef DEXACT
    return DV;
#else
    return p.dims.w;
#endif
}

// tanh without the builtin (README hazards: lavapipe's has no relative
// accuracy near 0, NVIDIA's does not reach +-1): a series below 0.125,
// else from exp(-2|x|).  Four at once (the subgroup decode kernel's rows);
// tanh_ takes one.
fn tanh4(x: vec4<f32>) -> vec4<f32> {
    let a = abs(x);
    let x2 = x * x;
    let ser = x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0))));
    let e = exp(-2.0 * a);
    return select(sign(x) * (1.0 - e) / (1.0 + e), ser, a < vec4<f32>(0.125));
}
fn tanh_(x: f32) -> f32 {
    return tanh4(vec4<f32>(x)).x;
}

struct Row {
    ok: bool,
    g: u32,     // head within the group (block-local)
    i: u32,     // query (block-local)
}

fn row_of(rb: u32, r: u32) -> Row {
    let rr = rb * BQ + r;
    let sq = p.blk.w;
    return Row(rr < p.blk.z * sq, rr / sq, rr % sq);
}

// ALiBi slope of a block row's head.
fn row_slope(hk: u32, rw: Row) -> f32 {
    return slope_of((p.org.y + hk) * p.hq.x + p.org.z + rw.g);
}

// The dispatch-local keys [x, y) that split sp of row block rb needs:
// its chunk, cut to what causal masking and the window leave visible.
fn key_range(sp: u32, rb: u32) -> vec2<u32> {
    let rows = p.blk.z * p.blk.w;
    let r0 = rb * BQ;
    let r1 = min(r0 + BQ, rows) - 1u;
    var imin = 0u;
    var imax = p.blk.w - 1u;
    if (r0 / p.blk.w == r1 / p.blk.w) {
        imin = r0 % p.blk.w;
        imax = r1 % p.blk.w;
    }
    let j0 = p.offs2.z;
    var kbeg = min(sp * p.ss.z, p.dims.y);
    var kend = min(kbeg + p.ss.z, p.dims.y);
    if (flag(F_CAUSAL)) {
        // visible: j0 + j + Sq <= i + Skv  (i absolute)
        let lim = p.org.w + imax + p.ip.y + 1u;
        let base = p.ip.x + j0;
        kend = select(0u, min(kend, lim - base), lim > base);
    }
    if (flag(F_WINDOW)) {
        // visible: j0 + j + Sq + W > i + Skv
        let lo = p.org.w + imin + p.ip.y + 1u;
        let need = p.ip.x + p.ip.z + j0;
        if (lo > need) {
            kbeg = max(kbeg, lo - need);
        }
    }
    return vec2<u32>(kbeg, kend);
}

// Score of block row rw against dispatch-local key j from its dot product:
// scaled, soft-capped, masked (causal, window, mask); NEG when hidden.
fn score_of(dot: f32, b: u32, hk: u32, rw: Row, j: u32, kend: u32, slope: f32) -> f32 {
    var s = dot * p.fp.x;
    if (flag(F_SOFTCAP)) {
        s = p.fp.y * tanh_(s / p.fp.y);
    }
    let ia = p.org.w + rw.i;
    let j0 = p.offs2.z;
    var keep = rw.ok && j < kend;
    if (flag(F_CAUSAL)) {
        keep = keep && j0 + j + p.ip.x <= ia + p.ip.y;
    }
    if (flag(F_WINDOW)) {
        keep = keep && j0 + j + p.ip.x + p.ip.z > ia + p.ip.y;
    }
    if (keep && flag(F_MASK)) {
        let me = b * p.ms.x + hk * p.ms.y + rw.g * p.ms.z + rw.i * p.ms.w + j * p.in2.y;
        if (flag(F_MASK8)) {
            keep = mask_u8(me) != 0u;
        } else {
            let mv = mask_f(me);
            keep = !is_ninf(mv);
            s = s + slope * mv;
        }
    }
    return select(NEG, s, keep);
}

// The partial run of block row rw, split sp: (max, sum, acc[Dv]) f32.
fn run_of(b: u32, hk: u32, rw: Row, sp: u32) -> u32 {
    return p.offs2.y + b * p.os.x + hk * p.os.y + rw.g * p.os.z + rw.i * p.os.w + sp * (d_v() + 2u);
}

// The workgroup's (split, row block, KV head, batch), or none past the grid.
struct Blk {
    sp: u32,
    rb: u32,
    hk: u32,
    b: u32,
    live: bool,
}

fn blk_of(wid: vec3<u32>, nwg: vec3<u32>) -> Blk {
    let rows = p.blk.z * p.blk.w;
    let nrb = (rows + BQ - 1u) / BQ;
    let nsp = p.ss.y;
    var t = wg_linear(wid, nwg);
    let live = t < p.blk.x * p.blk.y * nrb * nsp;
    let sp = t % nsp;
    t = t / nsp;
    let rb = t % nrb;
    t = t / nrb;
    return Blk(sp, rb, t % p.blk.y, t / p.blk.y, live);
}

#ifdef DECODE
#include "attention_decode.wgsl"
#else
#ifdef FA
#include "attention_fa.wgsl"
#else
const RQ: u32 = {{RQ}}u;      // query rows per thread
const BK: u32 = {{BK}}u;      // keys per tile
const TN: u32 = {{TN}}u;      // threads along keys / value dims
const KVW: u32 = {{KVW}}u;    // max(DK, DV)
const KS: u32 = {{KVW}}u + 1u; // K/V row stride: odd, so the S phase's
                               // TN threads (one key each) hit distinct banks
const RKS: u32 = BK / TN;      // keys per thread (S phase)
const RD: u32 = DV / TN;       // value dims per thread (O phase)

// Value dims per thread in the O phase: RD, or on CPU drivers (whose DV
// is a class of 64/128/256, see attention_run.c) only those below Dv.
fn n_rd() -> u32 {
#ifdef ROLLED
    return (p.dims.w + TN - 1u) / TN;
#else
    return RD;
#endif
}

var<workgroup> Qs: array<f32, BQ * DK>;
var<workgroup> KVs: array<f32, BK * KS>;
var<workgroup> Ps: array<f32, BQ * BK>;
var<workgroup> Ms: array<f32, BQ>;
var<workgroup> Ls: array<f32, BQ>;
var<workgroup> As: array<f32, BQ>;

@compute @workgroup_size({{WG}})
fn attn(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let bl = blk_of(wid, nwg);
    if (!bl.live) {
        return;
    }
    let sp = bl.sp;
    let rb = bl.rb;
    let hk = bl.hk;
    let b = bl.b;
    let D = d_k();
    let Dv = d_v();
    let tq = li / TN;
    let tk = li % TN;
    let kr = key_range(sp, rb);
    let kbeg = kr.x;
    let kend = kr.y;

    // Q tile (zeros past the rows and past D).
    // Loops bounded by runtime values (D, kn): lavapipe compiles barriers
    // as coroutines, and unrolled loops made a kernel take seconds to
    // compile there.  Nothing reads Q, K or V past D / Dv or kn.
    for (var e = li; e < BQ * D; e += WG) {
        let r = e / D;
        let d = e - r * D;
        let rw = row_of(rb, r);
        var x = 0.0;
        if (rw.ok) {
            x = f32(q_ld(p.offs.x + b * p.qs.x + hk * p.qs.y + rw.g * p.qs.z + rw.i * p.qs.w + d * p.in1.x));
        }
        Qs[r * DK + d] = x;
    }
    if (li < BQ) {
        Ms[li] = NEG;
        Ls[li] = 0.0;
        As[li] = 1.0;
    }
    var acc = array<f32, RQ * RD>();
    for (var x = 0u; x < n_(RQ * RD); x++) {
        acc[x] = 0.0;
    }
    var slope = array<f32, RQ>();
    for (var a = 0u; a < n_(RQ); a++) {
        slope[a] = row_slope(hk, row_of(rb, tq * RQ + a));
    }
    let kb = b * p.kv.x + hk * p.kv.y;
    let vb = b * p.kv.z + hk * p.kv.w;

    for (var kt = kbeg; kt < kend; kt += BK) {
        workgroupBarrier();  // the last tile's P.V is done with KVs and Ps
        let kn = min(BK, kend - kt);
        for (var e = li; e < kn * D; e += WG) {
            let c = e / D;
            let d = e - c * D;
            KVs[c * KS + d] = k_val(kb + (kt + c) * p.in1.y + d * p.in1.z);
        }
        workgroupBarrier();
        // S block: rows tq*RQ + a, keys tk + TN*c.
        var sc = array<f32, RQ * RKS>();
        for (var x = 0u; x < n_(RQ * RKS); x++) {
            sc[x] = 0.0;
        }
        for (var d = 0u; d < D; d++) {
            var kx = array<f32, RKS>();
            for (var c = 0u; c < n_(RKS); c++) {
                kx[c] = KVs[(tk + TN * c) * KS + d];
            }
            for (var a = 0u; a < n_(RQ); a++) {
                let qx = Qs[(tq * RQ + a) * DK + d];
                for (var c = 0u; c < n_(RKS); c++) {
                    sc[a * RKS + c] = fma(qx, kx[c], sc[a * RKS + c]);
                }
            }
        }
        for (var a = 0u; a < n_(RQ); a++) {
            let r = tq * RQ + a;
            let rw = row_of(rb, r);
            for (var c = 0u; c < n_(RKS); c++) {
                let kc = tk + TN * c;
                Ps[r * BK + kc] = score_of(sc[a * RKS + c], b, hk, rw, kt + kc, kend, slope[a]);
            }
        }
        workgroupBarrier();
        // Online softmax, one row per thread; meanwhile V replaces K.
        if (li < BQ) {
            let mo = Ms[li];
            var mx = mo;
            for (var c = 0u; c < kn; c++) {
                mx = max(mx, Ps[li * BK + c]);
            }
            var sum = 0.0;
            for (var c = 0u; c < kn; c++) {
                let s = Ps[li * BK + c];
                let e = select(exp(s - mx), 0.0, s == NEG);
                Ps[li * BK + c] = e;
                sum = sum + e;
            }
            let al = exp(mo - mx);
            As[li] = al;
            Ls[li] = Ls[li] * al + sum;
            Ms[li] = mx;
        }
        for (var e = li; e < kn * Dv; e += WG) {
            let c = e / Dv;
            let d = e - c * Dv;
            KVs[c * KS + d] = v_val(vb + (kt + c) * p.in1.w + d * p.in2.x);
        }
        workgroupBarrier();
        for (var a = 0u; a < n_(RQ); a++) {
            let r = tq * RQ + a;
            let al = As[r];
            for (var x = 0u; x < n_rd(); x++) {
                acc[a * RD + x] = acc[a * RD + x] * al;
            }
        }
        for (var c = 0u; c < kn; c++) {
            var vx = array<f32, RD>();
            for (var x = 0u; x < n_rd(); x++) {
                vx[x] = KVs[c * KS + tk + TN * x];
            }
            for (var a = 0u; a < n_(RQ); a++) {
                let pv = Ps[(tq * RQ + a) * BK + c];
                for (var x = 0u; x < n_rd(); x++) {
                    acc[a * RD + x] = fma(pv, vx[x], acc[a * RD + x]);
                }
            }
        }
    }
    workgroupBarrier();

    // The carried (max, sum) of every row is read before any thread
    // writes its row's new pair (thread tk = 0 writes it, others read it).
    var fa = array<f32, RQ>();
    var fb = array<f32, RQ>();
    var mxs = array<f32, RQ>();
    var sums = array<f32, RQ>();
    for (var a = 0u; a < n_(RQ); a++) {
        let r = tq * RQ + a;
        let rw = row_of(rb, r);
        fa[a] = 1.0;
        fb[a] = 0.0;
        mxs[a] = Ms[r];
        sums[a] = Ls[r];
        if (rw.ok && flag(F_SPLIT) && flag(F_CARRY)) {
            // merge with the run an earlier piece of the keys left here
            let pb = run_of(b, hk, rw, sp);
            let m2 = o_ld(pb);
            let mn = max(mxs[a], m2);
            fa[a] = select(exp(mxs[a] - mn), 0.0, mxs[a] == NEG);
            fb[a] = select(exp(m2 - mn), 0.0, m2 == NEG);
            sums[a] = sums[a] * fa[a] + o_ld(pb + 1u) * fb[a];
            mxs[a] = mn;
        }
    }
    workgroupBarrier();
    for (var a = 0u; a < n_(RQ); a++) {
        let r = tq * RQ + a;
        let rw = row_of(rb, r);
        if (!rw.ok) {
            continue;
        }
        if (flag(F_SPLIT)) {
            let pb = run_of(b, hk, rw, sp);
            for (var x = 0u; x < n_rd(); x++) {
                let d = tk + TN * x;
                if (d < Dv) {
                    var v = acc[a * RD + x] * fa[a];
                    if (flag(F_CARRY)) {
                        v = v + o_ld(pb + 2u + d) * fb[a];
                    }
                    o_st(pb + 2u + d, v);
                }
            }
            if (tk == 0u) {
                o_st(pb, mxs[a]);
                o_st(pb + 1u, sums[a]);
            }
            continue;
        }
        let inv = out_scale(hk, rw.g, Ms[r], Ls[r]);
        let ob = p.offs2.y + b * p.os.x + hk * p.os.y + rw.g * p.os.z + rw.i * p.os.w;
        for (var x = 0u; x < n_rd(); x++) {
            let d = tk + TN * x;
            if (d < Dv) {
                o_st(ob + d * p.in2.z, acc[a * RD + x] * inv);
            }
        }
    }
}
#endif
#endif
#endif
