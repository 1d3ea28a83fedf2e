// Reductions (wgml_reduce) over a "box": rows x len, where the host has
// moved the reduced axes to the end logically (a view over strides), so row
// r and reduced index j address x at
//     p.xoff + dot(kept coords of r, p.kst) + dot(reduced coords of j, p.rst).
// A workgroup of 256 threads covers p.cols rows with p.segs = 256 / p.cols
// threads each (cols > 1 when rows are short, or when the kept axis is the
// contiguous one, so neighbouring threads read neighbouring addresses);
// each thread folds a strided slice of its row into a state, then a tree
// over the segs threads merges the states in workgroup memory.
//
// Inputs:  x elements (default) or IN_STATES: states [rows][len] of an
//          earlier pass (raw words), from state p.soff of the binding.
// Outputs: OUT_FINAL the op's value into o; OUT_PARTIAL the state of chunk g
//          to [row][nchunk]; OUT_ACCUM merged into a running state
//          [p.rbase + row] (boxes of an input too big for one binding).
// A state is one op's sufficient statistic (sum, max, (max, argmax),
// (max, sum exp), (n, mean, M2, shift)); every group below defines st_empty,
// st_fold (one element), st_merge (two states), st_final and the packing.
#include "prelude.wgsl"
#include "dtype.wgsl"

struct Params {
    ksh: vec4<u32>,   // kept dims of the box, [0] outermost
    kst: vec4<u32>,   // their x strides
    ost: vec4<u32>,   // their out strides (OUT_FINAL)
    rsh: vec4<u32>,   // reduced dims, [3] innermost
    rst: vec4<u32>,   // their x strides
    rows: u32,
    len: u32,         // reduced length (IN_STATES: states per row)
    cols: u32,        // rows per workgroup (power of two)
    segs: u32,        // threads per row
    chunk: u32,       // reduced elements per workgroup
    nchunk: u32,      // workgroups per row
    xoff: u32,
    ooff: u32,
    jbase: u32,       // reduced index of the box's first element (ARGMAX/ARGMIN)
    rbase: u32,       // the box's first running state within its binding (OUT_ACCUM)
    count: f32,       // whole reduced length (MEAN)
    p0: f32,          // VAR/STD correction
    opx: u32,         // the op within its group
    nrd: u32,         // non-trivial reduced dims (<= 1: one stride)
    soff: u32,        // IN_STATES: the first state within its binding
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

#if IN_STATES
@group(0) @binding(1) var<storage, {{S_ACC}}> sin: array<u32>; // read_write when it shares out's buffer
#else
#tensor x 1 X_DT X_MODE
#endif
#if OUT_FINAL
#tensor o 2 O_DT w
#else
@group(0) @binding(2) var<storage, read_write> sout: array<u32>;
#endif

#if FLOAT
alias A = f32;
#endif
#if SINT
alias A = i32;
#endif
#if UINT
alias A = u32;
#endif

#include "fbits.wgsl"
fn is_pinf(v: f32) -> bool {
    return bitcast<u32>(v) == 0x7f800000u;
}
// Non-constant so no const-expression evaluates to inf or NaN.
fn fbits(b: u32) -> f32 {
    return bitcast<f32>(b);
}

// ------------------------------------------------------------ SUM MEAN L2NORM PROD
// The op within a group is p.opx (not a define: fewer pipelines to build,
// and the branch is uniform).
#if G_SUM
struct St { v: A }
const NW: u32 = 1u;
fn st_empty() -> St {
    return St(select(A(0), A(1), p.opx == 3u));
}
fn st_merge(a: St, b: St) -> St {
    return St(select(a.v + b.v, a.v * b.v, p.opx == 3u));
}
fn st_fold(s: St, v: A, j: u32) -> St {
    return st_merge(s, St(select(v, v * v, p.opx == 2u)));
}
fn st_final(s: St) -> A {
#if FLOAT
    if (p.opx == 1u) { // MEAN
        if (p.count == 0.0) {
            return fbits(0x7fc00000u);
        }
        return s.v / p.count;
    }
    if (p.opx == 2u) { // L2NORM
        return sqrt(s.v);
    }
#endif
    return s.v;
}
fn st_pack(s: St) -> vec4<u32> {
    return vec4<u32>(bitcast<u32>(s.v), 0u, 0u, 0u);
}
fn st_unpack(w: vec4<u32>) -> St {
    return St(bitcast<A>(w.x));
}
#endif

// ------------------------------------------------------------ RMAX RMIN (opx 0, 1)
#if G_MAX
struct St { v: A }
const NW: u32 = 1u;
fn st_empty() -> St {
#if FLOAT
    return St(select(fbits(0xff800000u), fbits(0x7f800000u), p.opx == 1u));
#endif
#if SINT
    return St(select(bitcast<i32>(0x80000000u), 0x7fffffff, p.opx == 1u));
#endif
#if UINT
    return St(select(0u, 0xffffffffu, p.opx == 1u));
#endif
}
fn st_merge(a: St, b: St) -> St {
#if FLOAT
    // numpy: NaN wins
    if (is_nan(a.v)) {
        return a;
    }
    if (is_nan(b.v)) {
        return b;
    }
#endif
    return St(select(max(a.v, b.v), min(a.v, b.v), p.opx == 1u));
}
fn st_fold(s: St, v: A, j: u32) -> St {
    return st_merge(s, St(v));
}
fn st_final(s: St) -> A {
    return s.v;
}
fn st_pack(s: St) -> vec4<u32> {
    return vec4<u32>(bitcast<u32>(s.v), 0u, 0u, 0u);
}
fn st_unpack(w: vec4<u32>) -> St {
    return St(bitcast<A>(w.x));
}
#endif

// ------------------------------------------------------------ ARGMAX ARGMIN (opx 0, 1)
#if G_ARG
// i == NONE marks the empty state (the running state is filled with 0xff).
struct St { v: A, i: u32 }
const NW: u32 = 2u;
const NONE: u32 = 0xffffffffu;
fn st_empty() -> St {
    return St(A(0), NONE);
}
// b beats a: the extreme value, NaN counting as the most extreme (numpy),
// and the first index among equals.
fn better(b: St, a: St) -> bool {
    if (b.i == NONE) {
        return false;
    }
    if (a.i == NONE) {
        return true;
    }
#if FLOAT
    let bn = is_nan(b.v);
    let an = is_nan(a.v);
    if (bn || an) {
        return bn && (!an || b.i < a.i);
    }
#endif
    if (b.v == a.v) {
        return b.i < a.i;
    }
    return select(b.v > a.v, b.v < a.v, p.opx == 1u);
}
fn st_merge(a: St, b: St) -> St {
    if (better(b, a)) {
        return b;
    }
    return a;
}
fn st_fold(s: St, v: A, j: u32) -> St {
    return st_merge(s, St(v, p.jbase + j));
}
fn st_final(s: St) -> i32 {
    return i32(s.i);
}
fn st_pack(s: St) -> vec4<u32> {
    return vec4<u32>(bitcast<u32>(s.v), s.i, 0u, 0u);
}
fn st_unpack(w: vec4<u32>) -> St {
    return St(bitcast<A>(w.x), w.y);
}
#endif

// ------------------------------------------------------------ LOGSUMEXP
#if G_LSE
// (m, s): the values so far sum to s * exp(m); s == 0 is empty.  Scaling by
// the running max keeps every exp() argument <= 0.
struct St { m: f32, s: f32 }
const NW: u32 = 2u;
fn st_empty() -> St {
    return St(0.0, 0.0);
}
fn st_merge(a: St, b: St) -> St {
    if (a.s == 0.0) {
        return b;
    }
    if (b.s == 0.0) {
        return a;
    }
    if (is_nan(a.m) || is_nan(b.m)) {
        return St(fbits(0x7fc00000u), 1.0);
    }
    if (is_pinf(a.m) || is_pinf(b.m)) {
        return St(fbits(0x7f800000u), 1.0);
    }
    if (a.m >= b.m) {
        return St(a.m, a.s + b.s * exp(b.m - a.m));
    }
    return St(b.m, b.s + a.s * exp(a.m - b.m));
}
fn st_fold(s: St, v: f32, j: u32) -> St {
    // exp(-inf) adds nothing
    return st_merge(s, St(v, select(1.0, 0.0, is_ninf(v))));
}
fn st_final(s: St) -> f32 {
    if (s.s == 0.0) {
        return fbits(0xff800000u);
    }
    if (is_nan(s.m) || is_pinf(s.m)) {
        return s.m;
    }
    return s.m + log(s.s);
}
fn st_pack(s: St) -> vec4<u32> {
    return vec4<u32>(bitcast<u32>(s.m), bitcast<u32>(s.s), 0u, 0u);
}
fn st_unpack(w: vec4<u32>) -> St {
    return St(bitcast<f32>(w.x), bitcast<f32>(w.y));
}
#endif

// ------------------------------------------------------------ VAR STD (opx 0, 1)
#if G_VAR
// Welford per thread, Chan et al.'s pairwise update between states, on
// values shifted by k (the state's first element): data far from zero keeps
// its digits, since x - k is exact for x within a factor 2 of k.
struct St { n: f32, mean: f32, m2: f32, k: f32 }
const NW: u32 = 4u;
fn st_empty() -> St {
    return St(0.0, 0.0, 0.0, 0.0);
}
fn st_merge(a: St, b: St) -> St {
    if (a.n == 0.0) {
        return b;
    }
    if (b.n == 0.0) {
        return a;
    }
    let n = a.n + b.n;
    let d = (b.mean + (b.k - a.k)) - a.mean;
    return St(n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * (b.n / n)), a.k);
}
fn st_fold(s: St, v: f32, j: u32) -> St {
    if (s.n == 0.0) {
        return St(1.0, 0.0, 0.0, v);
    }
    let y = v - s.k;
    let n = s.n + 1.0;
    let d = y - s.mean;
    let mean = s.mean + d / n;
    return St(n, mean, s.m2 + d * (y - mean), s.k);
}
fn st_final(s: St) -> f32 {
    // numpy: divisor max(n - ddof, 0); 0/0 is NaN, x/0 is inf
    let den = max(s.n - p.p0, 0.0);
    var v = 0.0;
    if (den == 0.0 || is_nan(s.m2)) {
        v = select(fbits(0x7f800000u), fbits(0x7fc00000u), s.m2 == 0.0 || is_nan(s.m2));
    } else {
        v = s.m2 / den;
    }
    return select(v, sqrt(v), p.opx == 1u);
}
fn st_pack(s: St) -> vec4<u32> {
    return bitcast<vec4<u32>>(vec4<f32>(s.n, s.mean, s.m2, s.k));
}
fn st_unpack(w: vec4<u32>) -> St {
    let f = bitcast<vec4<f32>>(w);
    return St(f.x, f.y, f.z, f.w);
}
#endif

// ------------------------------------------------------------ addressing

fn kept_coords(r: u32) -> vec4<u32> {
    let q2 = r / p.ksh.w;
    let q1 = q2 / p.ksh.z;
    return vec4<u32>(q1 / p.ksh.y, q1 % p.ksh.y, q2 % p.ksh.z, r % p.ksh.w);
}

fn red_offset(j: u32) -> u32 {
    let q2 = j / p.rsh.w;
    let q1 = q2 / p.rsh.z;
    return dot(vec4<u32>(q1 / p.rsh.y, q1 % p.rsh.y, q2 % p.rsh.z, j % p.rsh.w), p.rst);
}

#if IN_STATES
fn st_load(i: u32) -> St {
    var w = vec4<u32>(0u, 0u, 0u, 0u);
    for (var k = 0u; k < NW; k++) {
        w[k] = sin[i * NW + k];
    }
    return st_unpack(w);
}
#endif

#ifndef OUT_FINAL
fn st_store(i: u32, s: St) {
    let w = st_pack(s);
    for (var k = 0u; k < NW; k++) {
        sout[i * NW + k] = w[k];
    }
}
#endif

#if OUT_ACCUM
fn st_load_out(i: u32) -> St {
    var w = vec4<u32>(0u, 0u, 0u, 0u);
    for (var k = 0u; k < NW; k++) {
        w[k] = sout[i * NW + k];
    }
    return st_unpack(w);
}
#endif

var<workgroup> sh: array<St, 256>;

@compute @workgroup_size(256)
fn reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let w = wg_linear(wid, nwg);
    let nrb = (p.rows + p.cols - 1u) / p.cols;
    let g = w / nrb;
    if (g >= p.nchunk) {
        return; // past the end of a folded grid: the whole workgroup leaves
    }
    let c = li % p.cols;
    let s = li / p.cols;
    let row = (w % nrb) * p.cols + c;
    let live = row < p.rows;
    var acc = st_empty();
    if (live) {
        let j0 = g * p.chunk;
        let j1 = min(p.len, j0 + p.chunk);
#if IN_STATES
        let base = p.soff + row * p.len;
        for (var j = j0 + s; j < j1; j += p.segs) {
            acc = st_merge(acc, st_load(base + j));
        }
#else
        let base = p.xoff + dot(kept_coords(row), p.kst);
        if (p.nrd <= 1u) { // one stride: no index arithmetic per element
            let step = p.segs * p.rst.w;
            var at = base + (j0 + s) * p.rst.w;
            for (var j = j0 + s; j < j1; j += p.segs) {
                acc = st_fold(acc, A(x_ld(at)), j);
                at += step;
            }
        } else {
            for (var j = j0 + s; j < j1; j += p.segs) {
                acc = st_fold(acc, A(x_ld(base + red_offset(j))), j);
            }
        }
#endif
    }
    sh[li] = acc;
    workgroupBarrier();
    for (var h = p.segs >> 1u; h > 0u; h >>= 1u) {
        if (s < h) {
            sh[li] = st_merge(sh[li], sh[li + h * p.cols]);
        }
        workgroupBarrier();
    }
    if (s == 0u && live) {
        let r = sh[c];
#if OUT_FINAL
        o_st(p.ooff + dot(kept_coords(row), p.ost), o_T(st_final(r)));
#endif
#if OUT_PARTIAL
        st_store(row * p.nchunk + g, r);
#endif
#if OUT_ACCUM
        st_store(p.rbase + row, st_merge(st_load_out(p.rbase + row), r));
#endif
    }
}
