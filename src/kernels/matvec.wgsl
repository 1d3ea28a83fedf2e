// Mat-vec (decode) products out[r, n] = act(alpha x[r] . w[n] + beta c + bias)
// for M <= 8 activation rows, and linear_id (IDS: one row per (token,
// used) pair, w picked by ids).  Host: src/ops/matvec.c.
//
// Memory-bound: every weight byte is read once for all M rows.  A
// workgroup owns RPW consecutive weight rows; its WG threads walk each row
// in 8-element "units", thread li taking units li, li + WG, ... so that
// neighbouring threads read neighbouring bytes (a warp's loads cover one
// contiguous run of the row).  A unit is two runs of 4 elements (e0..e0+3
// and e1..e1+3) sharing one scale: weight = d * q + m, so
//     sum w x = d * (q_lo . x_lo + q_hi . x_hi) + m * (sum x_lo + sum x_hi)
// and the integer codes are never scaled one by one.  Every GGUF layout
// (src/ops/quant.h) keeps 8 such elements in 8 consecutive bytes of each
// bit plane (or 4 bytes of low and high nibbles for the 16-element-group
// types), so a unit is two 32-bit loads per plane.  x is small (<= 8 rows
// of k) and read through the L1 cache in vec4s when its rows are
// contiguous and aligned (XV4), else element by element through strides.
//
// Per thread: RPW * M partial sums, reduced over the workgroup with
// subgroupAdd and one slot per subgroup (SG: slots taken with a counter,
// so nothing is assumed about how invocations map to subgroups), or
// through workgroup memory (one barrier; thread j < RPW * M then adds
// the WG partials of its output).
#include "prelude.wgsl"
#include "dtype.wgsl"
#include "ew_float.wgsl"

struct Params {
    n: u32,        // weight rows in this window
    units: u32,    // 8-element units per row: ceil(k / 8)
    k: u32,
    rowb: u32,     // bytes per weight row
    w_off: u32,    // bytes into w's binding of row 0 (IDS: expert elo's row 0)
    xs: u32,       // x: elements per step along k
    os: u32,       // out / bias / c: elements per step along n
    bs: u32,
    cs: u32,
    ngroups: u32,  // workgroups per (IDS: pair's) window of rows
    m: u32,        // activation rows (<= M; rows m..M-1 are computed from row 0 and not written)
    act: u32,
    pad0: u32,
    pad1: u32,
    alpha: f32,
    beta: f32,
    eb: u32,       // IDS: bytes per expert
    elo: u32,      // IDS: experts [elo, ehi) are bound in this pass
    ehi: u32,
    used: u32,     // IDS: ids' dim 1
    ids_off: u32,  // IDS / CHECK: ids' elements: offset, steps along t and u
    ist_t: u32,
    ist_u: u32,
    pairs: u32,    // IDS / CHECK: tokens * used
    xst_t: u32,    // IDS: x and out steps along t and u (x's u step 0 when broadcast)
    xst_u: u32,
    ost_t: u32,
    ost_u: u32,
    xo: array<vec4<u32>, 2>,  // per activation row: first element of x, out, bias, c
    oo: array<vec4<u32>, 2>,
    bo: array<vec4<u32>, 2>,
    co: array<vec4<u32>, 2>,
    chk: vec4<u32>,           // CHECK: op code, experts, tokens, -
}

#ifdef XS_PFFN
// one Params a stage (matvec_pffn.wgsl), the current one copied into p
@group(0) @binding(0) var<uniform> pst: array<Params, 2>;
var<private> p: Params;
#else
@group(0) @binding(0) var<uniform> p: Params;
#endif

#ifdef CHECK
@group(0) @binding(1) var<storage, {{IDS_ACC}}> ids: array<i32>;
@group(0) @binding(2) var<storage, read_write> err: array<atomic<u32>>;
#include "errword.wgsl"

// Every id against [0, experts), before the writing pass.
@compute @workgroup_size(64)
fn check(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let q = wg_linear(wid, nwg) * 64u + li;
    if (q >= p.pairs) {
        return;
    }
    let t = q / p.used;
    let u = q - t * p.used;
    let v = ids[p.ids_off + t * p.ist_t + u * p.ist_u];
    if (v < 0 || u32(v) >= p.chk.y) {
        errword_put(p.chk.x, q, v, p.chk.y, 2u, vec4<u32>(1u, 1u, p.chk.z, p.used));
    }
}
#else

const M: u32 = {{M}}u;       // activation rows: 1, 2, 4 or 8 (p.m of them real)
const RPW: u32 = {{RPW}}u;   // weight rows per workgroup
const WG: u32 = {{WG}}u;     // threads
const NV: u32 = M * RPW;     // sums per thread (1, 2 or a multiple of 4)
const QK: u32 = {{QK}}u;     // elements per block (8 for plain dtypes)
const BB: u32 = {{BB}}u;     // bytes per block
const UPB: u32 = QK / 8u;    // units per block
const UPT: u32 = {{UPT}}u;   // units a thread takes per step

#ifdef XQUANT
// The integer path's first pass (matvec_xq.wgsl) writes x's 8-bit rows.
@group(0) @binding(1) var<storage, read_write> xqo: array<u32>;
#else
#ifdef WIDE
#ifdef PIECE32
// A binding that ends inside w's last 16-byte piece (the integer path,
// which has no unit-path fallback once x is quantised): pieces from words,
// the index clamped to the binding (kernels run without bounds checks);
// the clamped words are never used, the loads keep only the block's bytes.
@group(0) @binding(1) var<storage, {{W_ACC}}> wq: array<u32>;
fn word(i: u32) -> u32 {
    return wq[i];
}
fn piece(i: u32) -> vec4<u32> {
    let l = arrayLength(&wq) - 1u;
    return vec4<u32>(wq[min(4u * i, l)], wq[min(4u * i + 1u, l)], wq[min(4u * i + 2u, l)], wq[min(4u * i + 3u, l)]);
}
#else
// The wide path reads the weights in 16-byte pieces (matvec_wide.wgsl).
@group(0) @binding(1) var<storage, {{W_ACC}}> wv: array<vec4<u32>>;
fn word(i: u32) -> u32 {
    return wv[i >> 2u][i & 3u];
}
fn piece(i: u32) -> vec4<u32> {
    return wv[i];
}
#endif
#else
@group(0) @binding(1) var<storage, {{W_ACC}}> wq: array<u32>;
fn word(i: u32) -> u32 {
    return wq[i];
}
#endif
#endif
#ifdef Q8X
#ifdef XS
#ifdef XS_PREQ
// x's codes made before the product, in the XQUANT pass's layout, at word
// p.xo[0].x of this binding (a one-row norm's, graph fusion's xq tail)
@group(0) @binding(2) var<storage, {{XQ_ACC}}> xq: array<vec4<u32>>;
fn xq_put(i: u32, v: u32) {}  // nothing quantised into xq here (q8_block unused)
fn xq_row(r: u32) -> u32 {
    return 0u;
}
#else
// x quantised by each workgroup (matvec_xs.wgsl) into workgroup memory,
// in the XQUANT pass's layout: XSW words, row 0's
var<workgroup> xq: array<vec4<u32>, {{XSW}}u / 4u>;
fn xq_put(i: u32, v: u32) {
    xq[i >> 2u][i & 3u] = v;
}
fn xq_row(r: u32) -> u32 {
    return 0u;
}
#include "matvec_x.wgsl"
#endif
#else
// x quantised by the XQUANT pass (matvec_xq.wgsl says the layout)
@group(0) @binding(2) var<storage, {{XQ_ACC}}> xq: array<vec4<u32>>;
#endif
#else
#include "matvec_x.wgsl"
#endif
#ifdef XQUANT
fn xq_put(i: u32, v: u32) {
    xqo[i] = v;
}
fn xq_row(r: u32) -> u32 {
    return p.oo[r / 4u][r % 4u];
}
#include "matvec_xq.wgsl"
#else
#tensor o 3 O_DT O_MODE
#ifdef BIAS
#tensor b 4 B_DT B_MODE
#endif
#ifdef BETA
#tensor c 5 C_DT C_MODE
#endif
#ifdef IDS
@group(0) @binding(4) var<storage, {{IDS_ACC}}> ids: array<i32>;
@group(0) @binding(5) var<storage, read> err: array<u32>;
#endif

// The 32 bits at byte a.  Blocks of 17, 18, 22, 34, 110 and 210 bytes
// start inside words; ALIGN4 (every block and row start on a word: q4_1,
// q5_1, q2_K, q4_K, q5_K, f32, and f16/bf16 rows of even length) makes it
// one load.
fn w32(a: u32) -> u32 {
    let i = a >> 2u;
#ifdef ALIGN4
    return word(i);
#else
    let s = (a & 3u) * 8u;
    let lo = word(i);
    if (s == 0u) {
        return lo;
    }
    return (lo >> s) | (word(i + 1u) << (32u - s));
#endif
}

fn byte(a: u32) -> u32 {
    return (word(a >> 2u) >> ((a & 3u) * 8u)) & 0xffu;
}

fn f16at(a: u32) -> f32 {
    return unpack2x16float(w32(a)).x;
}

#include "codes.wgsl"

// Four signed bytes: the byte plus 128 (its sign bit flipped) as above.
fn i8x4(w: u32) -> vec4<f32> {
    return bitcast<vec4<f32>>(fld4(w, 0u, 255u) ^ vec4<u32>(0x4b000080u)) - vec4<f32>(8388736.0);
}

// Bits j0..j0+3 of qh, as bit 4 of a 5-bit code.
fn hbit4(qh: u32, j0: u32) -> vec4<u32> {
    return ((vec4<u32>(qh) >> (vec4<u32>(0u, 1u, 2u, 3u) + vec4<u32>(j0))) & vec4<u32>(1u)) << vec4<u32>(4u);
}

const IQ4NL = array<f32, 16>(-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                             1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
const MXFP4 = array<f32, 16>(0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0,
                             0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);

fn lut4(q: vec4<u32>, mx: bool) -> vec4<f32> {
    if (mx) {
        return vec4<f32>(MXFP4[q.x], MXFP4[q.y], MXFP4[q.z], MXFP4[q.w]);
    }
    return vec4<f32>(IQ4NL[q.x], IQ4NL[q.y], IQ4NL[q.z], IQ4NL[q.w]);
}

// Q4_K / Q5_K: (scale, min) j of the 12 packed bytes at a.
fn scale_min_k4(a: u32, j: u32) -> vec2<f32> {
    if (j < 4u) {
        return vec2<f32>(f32(byte(a + j) & 63u), f32(byte(a + j + 4u) & 63u));
    }
    let sc = (byte(a + j + 4u) & 15u) | ((byte(a + j - 4u) >> 6u) << 4u);
    let m = (byte(a + j + 4u) >> 4u) | ((byte(a + j) >> 6u) << 4u);
    return vec2<f32>(f32(sc), f32(m));
}

struct Unit {
    lo: vec4<f32>,  // codes of elements e0..e0+3
    hi: vec4<f32>,  // and e1..e1+3
    d: f32,         // weight = d * code + m
    m: f32,
    e0: u32,        // within the block
    e1: u32,
}

// First elements (within the block) of unit u's two runs of 4.
fn unit_e(u: u32) -> vec2<u32> {
    var e = vec2<u32>(0u, 4u);
#ifdef NIB16
    e = vec2<u32>(4u * u, 4u * u + 16u);  // byte j of qs: elements j and j + 16
#endif
#ifdef KQUANT
    e = vec2<u32>(8u * u, 8u * u + 4u);
#endif
#ifdef Q8
    e = vec2<u32>(8u * u, 8u * u + 4u);
#endif
    return e;
}

// Unit u (0 .. UPB-1) of the block at byte b.
fn unit(b: u32, u: u32) -> Unit {
    let ue = unit_e(u);
    var r = Unit(vec4<f32>(0.0), vec4<f32>(0.0), 1.0, 0.0, ue.x, ue.y);
#if QT_F32
    r.lo = bitcast<vec4<f32>>(vec4<u32>(w32(b), w32(b + 4u), w32(b + 8u), w32(b + 12u)));
    r.hi = bitcast<vec4<f32>>(vec4<u32>(w32(b + 16u), w32(b + 20u), w32(b + 24u), w32(b + 28u)));
#endif
#if QT_F16
    r.lo = vec4<f32>(unpack2x16float(w32(b)), unpack2x16float(w32(b + 4u)));
    r.hi = vec4<f32>(unpack2x16float(w32(b + 8u)), unpack2x16float(w32(b + 12u)));
#endif
#if QT_BF16
    let v = vec4<u32>(w32(b), w32(b + 4u), w32(b + 8u), w32(b + 12u));
    let lo = bitcast<vec4<f32>>(v << vec4<u32>(16u));
    let hi = bitcast<vec4<f32>>(v & vec4<u32>(0xffff0000u));
    r.lo = vec4<f32>(lo.x, hi.x, lo.y, hi.y);
    r.hi = vec4<f32>(lo.z, hi.z, lo.w, hi.w);
#endif
    // 4-bit types with 16-element nibble groups: byte j of qs holds
    // elements j and j + 16, so word u holds 4u.. (low) and 4u + 16.. (high).
#if QT_Q4_0
    let q = w32(b + 2u + 4u * u);
    r.d = f16at(b);
    r.m = -8.0 * r.d;
    r.lo = u2f4(fld4(q, 0u, 15u));
    r.hi = u2f4(fld4(q, 4u, 15u));
#endif
#if QT_Q4_1
    let dm = unpack2x16float(w32(b));
    let q = w32(b + 4u + 4u * u);
    r.d = dm.x;
    r.m = dm.y;
    r.lo = u2f4(fld4(q, 0u, 15u));
    r.hi = u2f4(fld4(q, 4u, 15u));
#endif
#if QT_Q5_0
    let qh = w32(b + 2u);
    let q = w32(b + 6u + 4u * u);
    r.d = f16at(b);
    r.m = -16.0 * r.d;
    r.lo = u2f4(fld4(q, 0u, 15u) | hbit4(qh, 4u * u));
    r.hi = u2f4(fld4(q, 4u, 15u) | hbit4(qh, 4u * u + 16u));
#endif
#if QT_Q5_1
    let dm = unpack2x16float(w32(b));
    let qh = w32(b + 4u);
    let q = w32(b + 8u + 4u * u);
    r.d = dm.x;
    r.m = dm.y;
    r.lo = u2f4(fld4(q, 0u, 15u) | hbit4(qh, 4u * u));
    r.hi = u2f4(fld4(q, 4u, 15u) | hbit4(qh, 4u * u + 16u));
#endif
#if QT_IQ4_NL
    let q = w32(b + 2u + 4u * u);
    r.d = f16at(b);
    r.lo = lut4(fld4(q, 0u, 15u), false);
    r.hi = lut4(fld4(q, 4u, 15u), false);
#endif
#if QT_MXFP4
    // E8M0 scale, halved because the table holds doubled e2m1 values.
    let e = byte(b);
    let q = w32(b + 1u + 4u * u);
    r.d = bitcast<f32>(select((e - 1u) << 23u, 0x00200000u << e, e < 2u));
    r.lo = lut4(fld4(q, 0u, 15u), true);
    r.hi = lut4(fld4(q, 4u, 15u), true);
#endif
#if QT_Q8_0
    r.d = f16at(b);
    r.lo = i8x4(w32(b + 2u + 8u * u));
    r.hi = i8x4(w32(b + 6u + 8u * u));
#endif
    // K-quants: unit u is elements 8u .. 8u+7 of a 256-element block, in
    // one 16- (q2_K, q3_K, q6_K) or 32-element (q4_K, q5_K) scale group.
#ifdef KQUANT
    let l32 = (u % 4u) * 8u;       // byte of element 8u within its 32-byte plane
#endif
#if QT_Q2_K
    // 2-bit codes: byte (e / 128) * 32 + e % 32 of qs, shift 2 ((e / 32) % 4)
    let a = b + 16u + (u / 16u) * 32u + l32;
    let sh = 2u * ((u / 4u) % 4u);
    let sc = byte(b + u / 2u);
    let dd = unpack2x16float(w32(b + 80u));
    r.d = dd.x * f32(sc & 15u);
    r.m = -dd.y * f32(sc >> 4u);
    r.lo = u2f4(fld4(w32(a), sh, 3u));
    r.hi = u2f4(fld4(w32(a + 4u), sh, 3u));
#endif
#if QT_Q3_K
    // 2-bit codes as q2_K's, minus 4 unless hmask's bit (e / 32) of byte e % 32
    let a = b + 32u + (u / 16u) * 32u + l32;
    let sh = 2u * ((u / 4u) % 4u);
    let hb = u / 4u;
    let i = u / 2u;
    let lo6 = select(byte(b + 96u + i - 8u) >> 4u, byte(b + 96u + i) & 15u, i < 8u);
    let hi2 = (byte(b + 104u + (i % 4u)) >> (2u * (i / 4u))) & 3u;
    r.d = f16at(b + 108u) * (f32(lo6 | (hi2 << 4u)) - 32.0);
    r.lo = u2f4(fld4(w32(a), sh, 3u) | (fld4(w32(b + l32), hb, 1u) << vec4<u32>(2u))) - vec4<f32>(4.0);
    r.hi = u2f4(fld4(w32(a + 4u), sh, 3u) | (fld4(w32(b + l32 + 4u), hb, 1u) << vec4<u32>(2u))) - vec4<f32>(4.0);
#endif
#ifdef K45
    // nibbles: byte (e / 64) * 32 + e % 32 of qs, shift 4 ((e / 32) % 2)
    let j = u / 4u;
    let sm = scale_min_k4(b + 4u, j);
    let dd = unpack2x16float(w32(b));
    r.d = dd.x * sm.x;
    r.m = -dd.y * sm.y;
    let sh = 4u * (j % 2u);
#endif
#if QT_Q4_K
    let a = b + 16u + (u / 8u) * 32u + l32;
    r.lo = u2f4(fld4(w32(a), sh, 15u));
    r.hi = u2f4(fld4(w32(a + 4u), sh, 15u));
#endif
#if QT_Q5_K
    // fifth bit: bit e / 32 of qh byte e % 32
    let a = b + 48u + (u / 8u) * 32u + l32;
    r.lo = u2f4(fld4(w32(a), sh, 15u) | (fld4(w32(b + 16u + l32), j, 1u) << vec4<u32>(4u)));
    r.hi = u2f4(fld4(w32(a + 4u), sh, 15u) | (fld4(w32(b + 20u + l32), j, 1u) << vec4<u32>(4u)));
#endif
#if QT_Q6_K
    // low nibbles: byte (e / 128) * 64 + e % 64 of ql, shift 4 ((e / 64) % 2);
    // high 2 bits: byte 128 + (e / 128) * 32 + e % 32, shift 2 ((e / 32) % 4)
    let a = b + (u / 16u) * 64u + (u % 8u) * 8u;
    let h = b + 128u + (u / 16u) * 32u + l32;
    let s4 = 4u * ((u / 8u) % 2u);
    let s2 = 2u * ((u / 4u) % 4u);
    r.d = f16at(b + 208u) * f32(bitcast<i32>(byte(b + 192u + u / 2u) << 24u) >> 24u);
    r.m = -32.0 * r.d;
    r.lo = u2f4(fld4(w32(a), s4, 15u) | (fld4(w32(h), s2, 3u) << vec4<u32>(4u)));
    r.hi = u2f4(fld4(w32(a + 4u), s4, 15u) | (fld4(w32(h + 4u), s2, 3u) << vec4<u32>(4u)));
#endif
    return r;
}

#ifdef PLAIN
// Row r's dot with the last, partial unit of a plain row (k % 8 != 0),
// element by element: nothing past the row or x's last element is read.
// One copy, outside the unrolled loops (each inlined copy cost compile
// time on lavapipe).
fn tail_dot(rb: u32, xr: u32, e0: u32) -> f32 {
    var s = 0.0;
    for (var e = e0; e < p.k; e++) {
        let a = rb + e * (BB / 8u);
        let w = word(a >> 2u);
#if QT_F32
        let v = bitcast<f32>(w);
#endif
#if QT_F16
        let v = unpack2x16float(w)[(a >> 1u) & 1u];
#endif
#if QT_BF16
        let v = bitcast<f32>(select(w << 16u, w & 0xffff0000u, (a & 2u) != 0u));
#endif
        s += v * f32(x_ld(xr + e * p.xs));
    }
    return s;
}
#endif

// p.act: 0 none, 1 relu, 2 gelu (erf), 3 silu; a uniform branch rather
// than a define, since every kernel variant costs a compile (~1-2 s on
// lavapipe).
fn act(v: f32) -> f32 {
    if (ew_is_nan(v) || p.act == 0u) {
        return v;
    }
    if (p.act == 1u) {
        return select(v, 0.0, v < 0.0);
    }
    if (p.act == 2u) {
        return ew_gelu_erf(v);
    }
    return ew_mul_sigmoid(v, v);
}

#ifndef Q8X
// Unit tu of every weight row of the workgroup: x's 8 elements are loaded
// once for all RPW rows (RPW times fewer x loads than a row at a time).
fn accum(acc: ptr<function, array<f32, NV>>, rb: array<u32, RPW>, xr: array<u32, M>, tu: u32) {
    let blk = tu / UPB;
    let ub = tu - blk * UPB;
    let e = unit_e(ub);
    var xl: array<vec4<f32>, M>;
    var xh: array<vec4<f32>, M>;
    var sx: array<f32, M>;
    for (var r = 0u; r < M; r++) {
        xl[r] = xv4(xr[r], blk * QK + e.x);
        xh[r] = xv4(xr[r], blk * QK + e.y);
        sx[r] = dot(xl[r] + xh[r], vec4<f32>(1.0));
    }
    for (var rr = 0u; rr < RPW; rr++) {
        let un = unit(rb[rr] + blk * BB, ub);
        for (var r = 0u; r < M; r++) {
            (*acc)[rr * M + r] += un.d * (dot(un.lo, xl[r]) + dot(un.hi, xh[r])) + un.m * sx[r];
        }
    }
}
#endif

#ifdef WIDE
#include "matvec_wide.wgsl"
#endif

// out[r, row] = act(alpha sum + beta c + bias); oi: out's element for row
// r of the product (IDS: the pair's offset added).
// The row's value, stored at oi and returned (the norm split keeps it).
fn emit(row: u32, r: u32, sum: f32, oi: u32) -> f32 {
    var v = p.alpha * sum;
#ifdef BETA
    v += p.beta * f32(c_ld(p.co[r / 4u][r % 4u] + row * p.cs));
#endif
#ifdef BIAS
    v += f32(b_ld(p.bo[r / 4u][r % 4u] + row * p.bs));
#endif
    let y = act(v);
    o_st(oi, y);
    return y;
}

#ifdef XS
#include "matvec_xq.wgsl"
#include "matvec_xs.wgsl"
#else

#ifdef SG
var<workgroup> nparts: atomic<u32>;
#endif
var<workgroup> red: array<f32, WG * NV>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
#ifdef SG
        @builtin(subgroup_invocation_id) lane: u32,
#endif
        @builtin(local_invocation_index) li: u32) {
    let g = wg_linear(wid, nwg);
    let pair = g / p.ngroups;          // IDS: the (token, used) pair; else 0
    let row0 = (g - pair * p.ngroups) * RPW;
    var xr: array<u32, M>;
    for (var r = 0u; r < M; r++) {
        xr[r] = p.xo[r / 4u][r % 4u];
    }
    var wb = p.w_off;
    var live = pair < max(p.pairs, 1u);
#ifdef IDS
    let t = pair / p.used;
    let uu = pair - t * p.used;
    let id = ids[p.ids_off + t * p.ist_t + uu * p.ist_u];
    // nothing when the op's id check failed, or when another pass binds this expert
    live = live && err[1] == 0u && id >= i32(p.elo) && id < i32(p.ehi);
    wb += u32(max(id - i32(p.elo), 0)) * p.eb;
    xr[0] += t * p.xst_t + uu * p.xst_u;
#endif
    var acc: array<f32, NV>;
    for (var j = 0u; j < NV; j++) {
        acc[j] = 0.0;
    }
    let units = select(0u, p.units, live);
    // Rows past n (the last group's) read row n - 1 and are never written,
    // so the unit loops below have no branch between their loads.
    var rb: array<u32, RPW>;
    for (var rr = 0u; rr < RPW; rr++) {
        rb[rr] = wb + min(row0 + rr, max(p.n, 1u) - 1u) * p.rowb;
    }
#ifdef PLAIN
    let full = min(units, p.k / 8u);   // a plain row of k % 8 != 0 ends in a partial unit
#else
    let full = units;
#endif
    // UPT units a step, WG apart (a warp's loads stay contiguous): their
    // loads are independent, so UPT * RPW units' bytes are in flight per
    // thread.  One unit each (4-5 bytes of q4 codes) left the H100 waiting
    // on memory latency: q4_0 reached 0.20 of copy, f16 (16 bytes a unit) 0.73.
    var t8 = li;
#ifdef WIDE
    // UPT chunks a step, WG apart
    let nch = select(0u, p.k / CH, live);
    var c = li;
    for (; c + (UPT - 1u) * WG < nch; c += UPT * WG) {
        for (var q = 0u; q < UPT; q++) {
            {{ACCW}}(&acc, rb, xr, c + q * WG);
        }
    }
    for (; c < nch; c += WG) {
        {{ACCW}}(&acc, rb, xr, c);
    }
#ifdef PLAIN
    // a plain row's last k % CH elements: units, then the partial one
    // (block types have none: CH divides their blocks)
    for (t8 = nch * (CH / 8u) + li; t8 < full; t8 += WG) {
        accum(&acc, rb, xr, t8);
    }
#endif
#else
    for (; t8 + (UPT - 1u) * WG < full; t8 += UPT * WG) {
        for (var q = 0u; q < UPT; q++) {
            accum(&acc, rb, xr, t8 + q * WG);
        }
    }
    for (; t8 < full; t8 += WG) {
        accum(&acc, rb, xr, t8);
    }
#endif
#ifdef PLAIN
    if (t8 < units) {
        for (var rr = 0u; rr < RPW; rr++) {
            for (var r = 0u; r < M; r++) {
                acc[rr * M + r] += tail_dot(rb[rr], xr[r], t8 * 8u);
            }
        }
    }
#endif

    // The workgroup's sums: thread j < NV gets output j (row j / M, x row j % M).
#ifdef SG
    if (li == 0u) {
        atomicStore(&nparts, 0u);
    }
    workgroupBarrier();
    // four sums per subgroupAdd: each is a long sequence on lavapipe
    var s: array<vec4<f32>, (NV + 3u) / 4u>;
    for (var j = 0u; j < NV; j += 4u) {
        s[j / 4u] = subgroupAdd(vec4<f32>(acc[j], acc[min(j + 1u, NV - 1u)], acc[min(j + 2u, NV - 1u)],
                                          acc[min(j + 3u, NV - 1u)]));
    }
    if (lane == 0u) {
        let k = atomicAdd(&nparts, 1u);
        for (var j = 0u; j < NV; j++) {
            red[k * NV + j] = s[j / 4u][j % 4u];
        }
    }
    workgroupBarrier();
    let np = atomicLoad(&nparts);
#else
    for (var j = 0u; j < NV; j++) {
        red[li * NV + j] = acc[j];
    }
    workgroupBarrier();
    let np = WG;
#endif
    if (li >= NV || !live) {
        return;
    }
    let row = row0 + li / M;
    let r = li % M;
    if (row >= p.n || r >= p.m) {
        return;
    }
    var sum = 0.0;
    for (var k = 0u; k < np; k++) {
        sum += red[k * NV + li];
    }
    var oi = p.oo[r / 4u][r % 4u] + row * p.os;
#ifdef IDS
    oi += t * p.ost_t + uu * p.ost_u;
#endif
    _ = emit(row, r, sum, oi);
}
#endif
#endif
#endif
