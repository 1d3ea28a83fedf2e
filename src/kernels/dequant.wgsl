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
    n: u32,           // threads: element quads (dequant) or quant blocks (quant)
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
#ifdef IDX_RW
// Indices in out's buffer (a graph input in the arena): read_write, since
// WebGPU refuses read-only and writable bindings of one buffer.
@group(0) @binding(3) var<storage, read_write> idx: array<i32>;
#else
@group(0) @binding(3) var<storage, read> idx: array<i32>;
#endif
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
#ifdef Q_RW
// The table shares a buffer with out (a gathered copy in a graph's arena):
// WebGPU refuses a read-only and a writable binding of one buffer.
@group(0) @binding(1) var<storage, read_write> q: array<u32>;
#else
@group(0) @binding(1) var<storage, read> q: array<u32>;
#endif
#tensor o 2 O_DT O_MODE

#include "dequant_fns.wgsl"
#include "codes.wgsl"

#ifdef OV4
fn put_quad(ob: u32, v: vec4<f32>) {
    o_st4(ob >> 2u, v);
}
#else
fn put_quad(ob: u32, v: vec4<f32>) {
    o_st(ob, v.x);
    o_st(ob + 1u, v.y);
    o_st(ob + 2u, v.z);
    o_st(ob + 3u, v.w);
}
#endif

// byte i of word w
fn bsel(w: u32, i: u32) -> u32 {
    return (w >> (8u * i)) & 0xffu;
}

#ifdef Q4K_WIDE
// Q4_K, 32 elements a thread (a prefill's weights dequantised to f16 for
// the GEMM): thread t of a block takes word t of each of the four 32-byte
// groups g of qs, whose low nibbles are elements 64 g + 4 t + 0..3
// (sub-block 2 g) and high ones those + 32 (sub-block 2 g + 1), so at each
// step the block's 8 threads read 8 consecutive words and write two runs
// of 8 consecutive quads.  Blocks start on a word (the host checks): d
// and dmin are one load, the 12 scale bytes three.  The 4-a-thread path
// re-read the header and the scales byte by byte for every 4 elements
// (~60 instructions an element); 16 bytes a thread (each thread's quads
// 16 elements apart) ran 7% slower than it, its stores uncoalesced (H200,
// bench/NOTES.md 2026-11-27).  The codes become floats through the
// mantissa (codes.wgsl's u2f4), not a conversion instruction.
fn nib4(w: u32, sh: u32) -> vec4<f32> {
    return u2f4(fld4(w, sh, 15u));
}

// (scale, min) j of the 12 scale bytes held as three words (scale_min_k4)
fn sm_words(s: vec3<u32>, j: u32) -> vec2<f32> {
    if (j < 4u) {
        return vec2<f32>(f32(bsel(s.x, j) & 63u), f32(bsel(s.y, j) & 63u));
    }
    let i = j - 4u;
    let sc = (bsel(s.z, i) & 15u) | ((bsel(s.x, i) >> 6u) << 4u);
    let m = (bsel(s.z, i) >> 4u) | ((bsel(s.y, i) >> 6u) << 4u);
    return vec2<f32>(f32(sc), f32(m));
}

fn deq_wide(b: u32, t: u32, ob0: u32) {
    let w0 = b >> 2u;
    let dm = unpack2x16float(q[w0]);
    let s = vec3<u32>(q[w0 + 1u], q[w0 + 2u], q[w0 + 3u]);
    for (var g = 0u; g < 4u; g++) {
        let sl = sm_words(s, 2u * g);
        let sh = sm_words(s, 2u * g + 1u);
        let w = q[w0 + 4u + 8u * g + t];
        let ob = ob0 + 64u * g + 4u * t;
        put_quad(ob, dm.x * sl.x * nib4(w, 0u) - dm.y * sl.y);
        put_quad(ob + 32u, dm.x * sh.x * nib4(w, 4u) - dm.y * sh.y);
    }
}
#endif

#ifdef Q6K_WIDE
// Q6_K, 32 elements a thread: thread t of a block takes half h = t / 4 of
// the block (128 elements) and quad columns s = 4 (t % 4) and s + 16 of
// it.  Column s's element 32 m + s (m 0..3) has its low 4 bits in ql byte
// 64 h + (32 m + s) % 64 (high nibble for m >= 2), its top 2 in qh byte
// 128 + 32 h + s (bits 2m), its int8 scale at 192 + 8 h + 2 m + s / 16: so
// three words give 16 elements.  Blocks are 210 bytes: every other one
// starts 2 bytes into a word (the host checks q starts on 2), so words
// are funnelled from two loads there.
fn wrd(a: u32) -> u32 {
    let lo = q[a >> 2u];
    if ((a & 2u) == 0u) {
        return lo;
    }
    return (lo >> 16u) | (q[(a >> 2u) + 1u] << 16u);
}

// the 6-bit codes (low nibbles of l, 2 low bits of each byte of h) - 32
fn codes6(l: u32, h: u32) -> vec4<f32> {
    return u2f4(fld4(l, 0u, 15u) | (fld4(h, 0u, 3u) << vec4<u32>(4u))) - vec4<f32>(32.0);
}

fn deq_wide(b: u32, t: u32, ob0: u32) {
    let h = t / 4u;
    // d, the block's last 2 bytes: from the word holding them (a funnel
    // would read past a last block that ends a binding)
    let dw = unpack2x16float(q[(b + 208u) >> 2u]);
    let d = select(dw.x, dw.y, ((b + 208u) & 2u) != 0u);
    // the 8 scales of this half as 8 bytes
    let sc0 = wrd(b + 192u + 8u * h);
    let sc1 = wrd(b + 196u + 8u * h);
    for (var c = 0u; c < 2u; c++) {
        let s = 4u * (t % 4u) + 16u * c;
        let l0 = wrd(b + 64u * h + s);
        let l1 = wrd(b + 64u * h + 32u + s);
        let hh = wrd(b + 128u + 32u * h + s);
        let ob = ob0 + 128u * h + s;
        for (var m = 0u; m < 4u; m++) {
            let k = 2u * m + c; // scale byte: 2 m + s / 16
            let sw = select(sc1, sc0, k < 4u);
            let sv = f32(bitcast<i32>(bsel(sw, k % 4u) << 24u) >> 24u);
            let l = select(l1, l0, m % 2u == 0u) >> (4u * (m / 2u));
            put_quad(ob + 32u * m, d * sv * codes6(l, hh >> (2u * m)));
        }
    }
}
#endif

#ifdef WIDE
const PER: u32 = 8u;    // threads a block (Q4K_WIDE, Q6K_WIDE)
#else
const PER: u32 = QK / 4u;
#endif

// Four consecutive elements a thread (WIDE: 32), all decoded before any is stored
// (so the block's scales and header are loaded once, not per element: one
// element a thread, each rereading them byte by byte, dequantised q4_K at
// ~0.25 TB/s of f32 on an H100, 521 us for a 14336 x 4096 matrix inside
// an 8B prefill, bench/NOTES.md 2026-11-26 (5)).
@compute @workgroup_size(256)
fn dequant(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let i = wg_linear(wid, nwg) * 256u + li;
    if (i >= p.n) {
        return;
    }
    let blk = i / PER;
    let e = i - blk * PER; // WIDE: the thread in the block, else its first element / 4
    let c = coords(blk);
    var b = p.t_off + dot(c, p.tst);
#ifdef GET_ROWS
    let r = pass_row(c);
    if (r < 0) {
        return;
    }
    b += u32(r) * p.rowb;
#endif
#ifdef WIDE
    deq_wide(b, e, p.o_off + dot(c, p.ost));
#else
    put_quad(p.o_off + dot(c, p.ost) + 4u * e, deq4(b, 4u * e));
#endif
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
