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

// Sum over the workgroup; every thread gets the result.  The trailing
// barrier lets the caller reuse red0 at once.
fn tree_sum(li: u32, v: f32) -> f32 {
    red0[li] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (li < s) {
            red0[li] = red0[li] + red0[li + s];
        }
        workgroupBarrier();
    }
    let r = red0[0];
    workgroupBarrier();
    return r;
}
