// GGUF block formats on the GPU: dequantise rows (wgml_dequantize,
// get_rows of quantised tables) and quantise f32 rows into q8_0 / q4_0
// blocks (set_rows).  The quantised tensor is bound as raw words and read a
// byte at a time: blocks are 17..292 bytes, so most start inside a word.
//
// Every layout stores w-bit fields so that one byte holds 8/w different
// elements `group` apart (see src/ops/quant.h): qfield() reads them all,
// which keeps the formats from each having their own bit twiddling.
#include "prelude.wgsl"
#include "dtype.wgsl"

// The host (src/ops/quant_gpu.c) cuts the work into blocks whose
// operands each fit one storage binding (the window binder, ops.h).  A
// block is a 4-D iteration space: the index positions (or the quantised
// tensor's rows) in dims 0..2 and the quant blocks of a row in dim 3; each
// operand is addressed from its window's start through its strides.
// Tables larger than one binding are bound in windows of table rows
// [lo, hi): each pass reads every index of the block and handles those
// that fall in its rows, so every output is written by exactly one pass.
struct Params {
    shape: vec4<u32>, // the block's iteration space
    tst: vec4<u32>,   // quantised operand: bytes per step of each dim
    ost: vec4<u32>,   // plain operand (dequant's out, set_rows' src): elements per step
    ist: vec4<u32>,   // IDX: index elements per step (0 where broadcast)
    wst: vec4<u32>,   // WIN: winner slots per step (batch dims)
    jst: vec4<u32>,   // WIN: position along idx's last dim per step
    n: u32,           // threads: elements (dequant) or quant blocks (quant)
    t_off: u32,       // bytes into q's binding: the block's first quant block (of table row lo)
    o_off: u32,       // elements into the plain operand's binding
    i_off: u32,       // IDX: elements into idx's binding
    w_off: u32,       // WIN: elements into the winners' binding (table row lo)
    j_off: u32,       // WIN: the block's first position along idx's last dim
    lo: u32,          // IDX: the table rows [lo, hi) this pass has bound
    hi: u32,
    rowb: u32,        // IDX: bytes per table row
    wax: u32,         // WIN: winner slots per table row (the batches)
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

const QK: u32 = {{QK}}u;
const BB: u32 = {{BB}}u;

// Coordinates of thread-item k in the block's iteration space.
fn coords(k: u32) -> vec4<u32> {
    let s = p.shape;
    let q0 = k / s.w;
    let q1 = q0 / s.z;
    let q2 = q1 / s.y;
    return vec4<u32>(q2, q1 - q2 * s.y, q0 - q1 * s.z, k - q0 * s.w);
}

#ifdef IDX
// The i32 indices, bound from the block's first one.  Any view (an offset
// that is not a multiple of the storage-offset alignment, steps, permuted
// or broadcast dims) is read in place through i_off and the strides,
// like the indexing kernels do, rather than through a contiguous copy.
@group(0) @binding(3) var<storage, read> idx: array<i32>;
// The device error word (src/gpu/runtime.h): word 1 is set when the op's
// check of the indices failed; then nothing is written.
@group(0) @binding(4) var<storage, read> err: array<u32>;
#ifdef WIN
// set_rows' winners (indexing.c): 1 + the last position along idx's last
// dim that points at table row r of batch b, at r * batches + b.
@group(0) @binding(5) var<storage, read> win: array<i32>;
#endif

// The table row the index at c picks, as a row of this pass's window;
// -1 when it lies outside [lo, hi) (another pass handles it) or the op's
// index check failed.
fn pass_row(c: vec4<u32>) -> i32 {
    let r = idx[p.i_off + dot(c, p.ist)];
    if (err[1] != 0u || r < 0 || u32(r) < p.lo || u32(r) >= p.hi) {
        return -1;
    }
    return r - i32(p.lo);
}
#endif

#ifdef DEQUANT
@group(0) @binding(1) var<storage, read> q: array<u32>;
#tensor o 2 O_DT O_MODE

fn qbyte(a: u32) -> u32 {
    return (q[a >> 2u] >> ((a & 3u) * 8u)) & 0xffu;
}

fn qi8(a: u32) -> f32 {
    return f32(bitcast<i32>(qbyte(a) << 24u) >> 24u);
}

fn qf16(a: u32) -> f32 {
    return wg_f16_to_f32(qbyte(a) | (qbyte(a + 1u) << 8u));
}

fn qu32(a: u32) -> u32 {
    return qbyte(a) | (qbyte(a + 1u) << 8u) | (qbyte(a + 2u) << 16u) | (qbyte(a + 3u) << 24u);
}

// Field of element e (w bits, `group` apart) in the bytes starting at a.
fn qfield(a: u32, e: u32, w: u32, group: u32) -> u32 {
    let per = 8u / w;
    let g = e / (per * group);
    let s = (e / group) % per;
    let l = e % group;
    return (qbyte(a + g * group + l) >> (s * w)) & ((1u << w) - 1u);
}

// Q4_K / Q5_K: eight 6-bit (scale, min) pairs packed in 12 bytes at a.
fn scale_min_k4(a: u32, i: u32) -> vec2<f32> {
    if (i < 4u) {
        return vec2<f32>(f32(qbyte(a + i) & 63u), f32(qbyte(a + i + 4u) & 63u));
    }
    let sc = (qbyte(a + i + 4u) & 15u) | ((qbyte(a + i - 4u) >> 6u) << 4u);
    let m = (qbyte(a + i + 4u) >> 4u) | ((qbyte(a + i) >> 6u) << 4u);
    return vec2<f32>(f32(sc), f32(m));
}

const IQ4NL = array<f32, 16>(-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                             1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
const MXFP4 = array<f32, 16>(0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0,
                             0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);

// Element j of the block starting at byte b.
fn deq(b: u32, j: u32) -> f32 {
#if QT_Q4_0
    return qf16(b) * (f32(qfield(b + 2u, j, 4u, 16u)) - 8.0);
#endif
#if QT_Q4_1
    return qf16(b) * f32(qfield(b + 4u, j, 4u, 16u)) + qf16(b + 2u);
#endif
#if QT_Q5_0
    let hi = (qu32(b + 2u) >> j) & 1u;
    return qf16(b) * (f32(qfield(b + 6u, j, 4u, 16u) | (hi << 4u)) - 16.0);
#endif
#if QT_Q5_1
    let hi = (qu32(b + 4u) >> j) & 1u;
    return qf16(b) * f32(qfield(b + 8u, j, 4u, 16u) | (hi << 4u)) + qf16(b + 2u);
#endif
#if QT_Q8_0
    return qf16(b) * qi8(b + 2u + j);
#endif
#if QT_Q2_K
    let sc = qbyte(b + j / 16u);
    return qf16(b + 80u) * f32(sc & 15u) * f32(qfield(b + 16u, j, 2u, 32u)) - qf16(b + 82u) * f32(sc >> 4u);
#endif
#if QT_Q3_K
    // 16 six-bit scales: low 4 bits in bytes 0..7 (two per byte), high 2
    // bits in bytes 8..11 (four per byte).
    let i = j / 16u;
    let lo = select(qbyte(b + 96u + i - 8u) >> 4u, qbyte(b + 96u + i) & 15u, i < 8u);
    let hi = (qbyte(b + 104u + (i % 4u)) >> (2u * (i / 4u))) & 3u;
    let scale = f32(lo | (hi << 4u)) - 32.0;
    let v = f32(qfield(b + 32u, j, 2u, 32u)) - select(4.0, 0.0, qfield(b, j, 1u, 32u) == 1u);
    return qf16(b + 108u) * scale * v;
#endif
#if QT_Q4_K
    let sm = scale_min_k4(b + 4u, j / 32u);
    return qf16(b) * sm.x * f32(qfield(b + 16u, j, 4u, 32u)) - qf16(b + 2u) * sm.y;
#endif
#if QT_Q5_K
    let sm = scale_min_k4(b + 4u, j / 32u);
    let v = qfield(b + 48u, j, 4u, 32u) | (qfield(b + 16u, j, 1u, 32u) << 4u);
    return qf16(b) * sm.x * f32(v) - qf16(b + 2u) * sm.y;
#endif
#if QT_Q6_K
    let v = qfield(b, j, 4u, 64u) | (qfield(b + 128u, j, 2u, 32u) << 4u);
    return qf16(b + 208u) * qi8(b + 192u + j / 16u) * (f32(v) - 32.0);
#endif
#if QT_Q8_K
    return bitcast<f32>(qu32(b)) * qi8(b + 4u + j);
#endif
#if QT_IQ4_NL
    return qf16(b) * IQ4NL[qfield(b + 2u, j, 4u, 16u)];
#endif
#if QT_MXFP4
    // E8M0 scale, halved because the table holds doubled e2m1 values.
    let e = qbyte(b);
    let d = bitcast<f32>(select((e - 1u) << 23u, 0x00200000u << e, e < 2u));
    return MXFP4[qfield(b + 1u, j, 4u, 16u)] * d;
#endif
}

@compute @workgroup_size(256)
fn dequant(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let i = wg_linear(wid, nwg) * 256u + li;
    if (i >= p.n) {
        return;
    }
    let blk = i / QK;
    let e = i - blk * QK;
    let c = coords(blk);
    var b = p.t_off + dot(c, p.tst);
#ifdef GET_ROWS
    let r = pass_row(c);
    if (r < 0) {
        return;
    }
    b += u32(r) * p.rowb;
#endif
    o_st(p.o_off + dot(c, p.ost) + e, deq(b, e));
}
#endif

#ifdef QUANT
// One thread per source block: quantise 32 floats of a src row into the
// same block of table row idx[...] (skipped unless it is that row's last
// occurrence, and when the op's index check failed).  Blocks share
// words with their neighbours, so bytes are merged atomically.
@group(0) @binding(1) var<storage, read_write> q: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> src: array<f32>;

fn put_byte(a: u32, v: u32) {
    let sh = (a & 3u) * 8u;
    atomicAnd(&q[a >> 2u], ~(0xffu << sh));
    atomicOr(&q[a >> 2u], (v & 0xffu) << sh);
}

@compute @workgroup_size(64)
fn quant(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let t = wg_linear(wid, nwg) * 64u + li;
    if (t >= p.n) {
        return;
    }
    let c = coords(t);
    let r = pass_row(c);
    if (r < 0) {
        return;
    }
#ifdef WIN
    let pos = p.j_off + dot(c, p.jst);
    if (win[p.w_off + dot(c, p.wst) + u32(r) * p.wax] != i32(pos + 1u)) {
        return; // a later occurrence of this row wins
    }
#endif
    let s0 = p.o_off + dot(c, p.ost);
    let b = p.t_off + dot(c, p.tst) + u32(r) * p.rowb;
    // the value of largest magnitude, keeping its sign (ggml's rule)
    var amax = 0.0;
    var vmax = 0.0;
    for (var j = 0u; j < QK; j++) {
        let x = src[s0 + j];
        if (abs(x) > amax) {
            amax = abs(x);
            vmax = x;
        }
    }
#if QT_Q8_0
    let d = amax / 127.0;
    let id = select(0.0, 1.0 / d, d != 0.0);
    let dh = wg_f16_bits(d);
    put_byte(b, dh & 0xffu);
    put_byte(b + 1u, dh >> 8u);
    for (var j = 0u; j < 32u; j++) {
        let v = i32(round(src[s0 + j] * id));
        put_byte(b + 2u + j, bitcast<u32>(clamp(v, -127, 127)) & 0xffu);
    }
#endif
#if QT_Q4_0
    let d = vmax / -8.0;
    let id = select(0.0, 1.0 / d, d != 0.0);
    let dh = wg_f16_bits(d);
    put_byte(b, dh & 0xffu);
    put_byte(b + 1u, dh >> 8u);
    for (var j = 0u; j < 16u; j++) {
        let x0 = u32(clamp(trunc(src[s0 + j] * id + 8.5), 0.0, 15.0));
        let x1 = u32(clamp(trunc(src[s0 + j + 16u] * id + 8.5), 0.0, 15.0));
        put_byte(b + 2u + j, x0 | (x1 << 4u));
    }
#endif
}
#endif
