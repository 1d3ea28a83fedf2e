// Kernels for `wgml selfcheck`, `wgml bench dispatch` and the runtime tests.
#include "prelude.wgsl"

struct Params {
    n: u32,
    a: u32,
    b: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

#ifdef ADD
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> z: array<f32>;

@compute @workgroup_size(256)
fn add_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let i = wg_linear(wid, nwg) * 256u + li;
    if (i < p.n) {
        z[i] = x[i] + y[i];
    }
}
#endif

#ifdef REDUCE
// Sum of n floats: each workgroup strides over the input and writes one
// partial; a second dispatch with one workgroup sums the partials.
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> partial: array<f32>;

var<workgroup> acc: array<f32, 256>;

@compute @workgroup_size(256)
fn reduce_sum_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) li: u32) {
    let g = wg_linear(wid, nwg);
    let stride = nwg.x * nwg.y * nwg.z * 256u;
    var s = 0.0;
    for (var i = g * 256u + li; i < p.n; i += stride) {
        s += x[i];
    }
    acc[li] = s;
    workgroupBarrier();
    for (var w = 128u; w > 0u; w >>= 1u) {
        if (li < w) {
            acc[li] += acc[li + w];
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        partial[g] = acc[0];
    }
}
#endif

#ifdef AFFINE
// x[i] = x[i] * a + b (wrapping u32): each dispatch depends on the previous,
// so a wrong order or a lost dispatch changes the result.
@group(0) @binding(1) var<storage, read_write> x: array<u32>;

@compute @workgroup_size(64)
fn affine_u32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    let i = wg_linear(wid, nwg) * 64u + li;
    if (i < p.n) {
        x[i] = x[i] * p.a + p.b;
    }
}
#endif

#ifdef MARK
// out[i] = i + a for a 1-D grid of any size: tests the grid folding.
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn mark_u32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    let i = wg_linear(wid, nwg) * 64u + li;
    if (i < p.n) {
        out[i] = i + p.a;
    }
}
#endif
