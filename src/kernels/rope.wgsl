// Rotary position embedding (ggml semantics; host side and CPU reference in
// src/ops/rope.c).  x/out are [B, S, H, D] views; one thread per work item
// of a group of up to e.x heads at one position: items 0 .. n_dims/2-1
// rotate one pair, the rest copy one of the D - n_dims trailing elements.
// A pair's angle is the same for every head, so a thread computes its
// sin/cos once for the group (one per element made the kernel ALU-bound
// on an H100, 0.25-0.7 of copy bandwidth).  Defines: X_DT/X_MODE,
// O_DT/O_MODE, HEADS.  The mode and whether freq_factors are given are
// uniform parameters rather than defines: one pipeline per dtype serves
// every mode (each pipeline costs compile time; the branches cost
// nothing).  Without freq_factors, binding 4 is the positions buffer again
// and is not read.
#include "prelude.wgsl"
#include "dtype.wgsl"

struct RopeParams {
    dims: vec4<u32>,   // B, S, H, D of this launch
    xs: vec4<u32>,     // x strides (elements) over b, s, h, d
    os: vec4<u32>,     // out strides
    a: vec4<u32>,      // items, items per row, n_dims/2, x offset
    b: vec4<u32>,      // out offset, pos offset, pos stride over s, elements between M-RoPE streams
    c: vec4<u32>,      // ff offset, ff stride, end of section 0, end of section 1
    d: vec4<u32>,      // end of section 2, sum of sections, mode (wgml_rope_mode), has freq_factors
    f0: vec4<f32>,     // k_hi, k_lo (log2 of the per-pair frequency ratio), freq_scale, ext_factor
    f1: vec4<f32>,     // corr_lo, corr_hi (YaRN ramp), mscale
    e: vec4<u32>,      // heads per thread, head groups, first pair (a piece of a long row),
                       // first head copied unrotated (the launch's heads: all rotated)
}

@group(0) @binding(0) var<uniform> P: RopeParams;

// Heads per thread at most (the host's ROPE_HEADS; e.x is this launch's).
const HEADS: u32 = {{HEADS}}u;

#tensor x 1 X_DT X_MODE
#tensor o 2 O_DT O_MODE
// pos and ff are bound read_write when they share out's buffer (a graph's
// arena): WebGPU forbids read-only and writable bindings of one buffer.
#tensor pos 3 i32 POS_MODE
#tensor ff 4 f32 FF_MODE

#include "rope_fns.wgsl"

// Which position stream drives pair i (M-RoPE: t, h, w, e by sections).
fn rope_stream(i: u32) -> u32 {
    if (P.d.z != 2u) {
        return 0u;
    }
    let sector = i % P.d.y;
    return select(select(select(3u, 2u, sector < P.d.x), 1u, sector < P.c.w), 0u, sector < P.c.z);
}

@compute @workgroup_size(256)
fn rope(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let t = wg_linear(wid, nwg) * 256u + li;
    if (t >= P.a.x) {
        return;
    }
    let q0 = t / P.a.y;
    let j = t % P.a.y;
    let h0 = (q0 % P.e.y) * P.e.x;
    let h1 = min(h0 + P.e.x, P.dims.z);
    let q = q0 / P.e.y;
    let s = q % P.dims.y;
    let b = q / P.dims.y;
    let xb = P.a.w + b * P.xs.x + s * P.xs.y;
    let ob = P.b.x + b * P.os.x + s * P.os.y;
    let nh = P.a.z;
    if (j >= nh) {
        let d = j + nh;   // element n_dims + (j - n_dims/2)
        var c = array<f32, HEADS>();
        for (var k = 0u; k < HEADS; k = k + 1u) {
            c[k] = x_ld(xb + min(h0 + k, h1 - 1u) * P.xs.z + d * P.xs.w);
        }
        for (var k = 0u; k < HEADS; k = k + 1u) {
            if (h0 + k < h1) {
                o_st(ob + (h0 + k) * P.os.z + d * P.os.w, c[k]);
            }
        }
        return;
    }
    // NORMAL pairs (2j, 2j+1); NEOX and M-RoPE pair (j, j + n_dims/2).
    let normal = P.d.z == 0u;
    let d0 = select(j, 2u * j, normal);
    let d1 = select(j + nh, 2u * j + 1u, normal);
    // The pair's index in the whole row: a row longer than one window
    // runs in pieces of pairs (rope_long in rope.c), P.e.z the first.
    let ja = j + P.e.z;
    let p = f32(pos_ld(P.b.y + s * P.b.z + rope_stream(ja) * P.b.w));
    // theta = p * rate(ja) / ff_j (rope_fns.wgsl)
    var w = rope_rate(ja, P.f0, P.f1);
    if (P.d.w != 0u) {
        w = w / ff_ld(P.c.x + j * P.c.y);
    }
    let sc = rope_sincos(p * w) * P.f1.z;
    // Every head's pair is loaded (clamped into the group: a duplicate read
    // is harmless) before any is stored, so the loads overlap: stores may
    // alias the loads as far as the compiler knows, which kept a
    // load-store loop waiting on each head in turn.
    var x0 = array<f32, HEADS>();
    var x1 = array<f32, HEADS>();
    for (var k = 0u; k < HEADS; k = k + 1u) {
        let xh = xb + min(h0 + k, h1 - 1u) * P.xs.z;
        x0[k] = x_ld(xh + d0 * P.xs.w);
        x1[k] = x_ld(xh + d1 * P.xs.w);
    }
    for (var k = 0u; k < HEADS; k = k + 1u) {
        if (h0 + k < h1) {
            let oh = ob + (h0 + k) * P.os.z;
            let rot = h0 + k < P.e.w;  // n_heads_rot: later heads pass through
            o_st(oh + d0 * P.os.w, select(x0[k], x0[k] * sc.y - x1[k] * sc.x, rot));
            o_st(oh + d1 * P.os.w, select(x1[k], x0[k] * sc.x + x1[k] * sc.y, rot));
        }
    }
}
