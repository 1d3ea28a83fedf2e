// Shared by the row kernels (softmax.wgsl, norm.wgsl); the host side is
// wg_rows_launch (src/ops/rows.h).  One workgroup of {{WG}} threads owns
// one row of the 4-D iteration space p.shape = [R0, R1, R2, L] (the
// reduced axis last).  Operand k's element (r0, r1, r2, j) lives at
//     offs[k] + r0 * st[k].x + r1 * st[k].y + r2 * st[k].z + j * st[k].w
// of its binding, so permuted, sliced and broadcast (stride 0) views are
// read in place, and per-row parameters (a sink per head, a mean per
// channel) are operands whose element stride is 0.
#include "prelude.wgsl"
#include "dtype.wgsl"

struct RowParams {
    shape: vec4<u32>,
    offs: array<vec4<u32>, 2>,
    st: array<vec4<u32>, 8>,
    fp: vec4<f32>,
    ip: vec4<u32>,
    origin: vec4<u32>,  // this launch's first row coordinates in the op (rows split to fit bindings)
    // CHUNKED rows (longer than one binding window, see rows_chunked in
    // src/ops/rows.c): x chunks per row K, y chunk length, z row length,
    // w this chunk.  PARTIAL writes the chunk's statistics to element w of
    // the row's run of K in two f32 slots; COMBINE merges the run.
    chunk: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: RowParams;

const WG: u32 = {{WG}}u;

var<workgroup> red0: array<f32, WG>;
var<workgroup> red1: array<f32, WG>;
var<workgroup> red2: array<f32, WG>;

// -inf (WGSL forbids infinite const-expressions).
fn neg_inf() -> f32 {
    return bitcast<f32>(0xff800000u);
}

fn row_count() -> u32 {
    return p.shape.x * p.shape.y * p.shape.z;
}

fn row_coords(row: u32) -> vec3<u32> {
    let q = row / p.shape.z;
    return vec3<u32>(q / p.shape.y, q % p.shape.y, row % p.shape.z);
}

// First element of operand k's row r (its element j is at + j * st[k].w).
fn row_base(k: u32, r: vec3<u32>) -> u32 {
    let s = p.st[k];
    return p.offs[k / 4u][k % 4u] + r.x * s.x + r.y * s.y + r.z * s.z;
}

#ifdef HAS_SUBGROUPS
// Subgroup partials: one lane of each subgroup takes the next slot of
// red0..2 (a counter, so nothing is assumed about how invocations map to
// subgroups).  One barrier in all, where a tree over WG threads needs
// log2(WG): fewer barriers run faster and compile much faster (lavapipe).
// Each kernel reduces once per row.  Workgroup memory is not zeroed for
// trusted modules: kernels call parts_reset first.
var<workgroup> nparts: atomic<u32>;

fn parts_reset(li: u32) {
    if (li == 0u) {
        atomicStore(&nparts, 0u);
    }
    workgroupBarrier();
}

fn parts_put(lane: u32, v: vec3<f32>) -> u32 {
    if (lane == 0u) {
        let k = atomicAdd(&nparts, 1u);
        red0[k] = v.x;
        red1[k] = v.y;
        red2[k] = v.z;
    }
    workgroupBarrier();
    return atomicLoad(&nparts);
}
#endif

// First step of every row kernel, once its row is known to exist.
fn row_begin(li: u32) {
#ifdef HAS_SUBGROUPS
    parts_reset(li);
#endif
}

// Sum over the workgroup; every thread gets the result.  Call once per
// kernel (see nparts).
fn row_sum(li: u32, lane: u32, v: f32) -> f32 {
#ifdef HAS_SUBGROUPS
    let n = parts_put(lane, vec3<f32>(subgroupAdd(v), 0.0, 0.0));
    var t = 0.0;
    for (var k = 0u; k < n; k = k + 1u) {
        t = t + red0[k];
    }
    return t;
#else
    red0[li] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (li < s) {
            red0[li] = red0[li] + red0[li + s];
        }
        workgroupBarrier();
    }
    return red0[0];
#endif
}

// Indices j, j + WG, j + 2 WG, j + 3 WG of a thread's chunk of K = 4, and
// the same clamped into the row (n >= 1): kernels load all four
// unconditionally (a duplicate read is harmless) so the loads issue back
// to back in one basic block instead of each waiting behind a branch.
const K: u32 = 4u;

fn chunk(base: u32) -> vec4<u32> {
    return vec4<u32>(base) + vec4<u32>(0u, WG, 2u * WG, 3u * WG);
}

fn chunk_clamped(base: u32, n: u32) -> vec4<u32> {
    return min(chunk(base), vec4<u32>(n - 1u));
}

#include "fbits.wgsl"
