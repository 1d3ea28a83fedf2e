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

// sin and cos of t, both accurate to about one f32 ulp for any |t| up to
// ~1e5 (WGSL's own sin/cos are only specified to 2^-11 inside [-pi, pi]
// and not at all outside).  Reduction by pi/2 in two parts: PIO2_HI has 8
// significant bits, so q * PIO2_HI is exact for |q| < 2^16 and t - q * HI
// is exact too (Sterbenz); Taylor series on |r| <= pi/4 then truncate below
// 2e-9.
fn rope_sincos(t: f32) -> vec2<f32> {
    let q = round(t * 0.6366197723675814);
    let r = (t - q * 1.5703125) - q * 4.8382679489661923e-4;
    let z = r * r;
    let sn = r + r * z * (-0.16666666666666666 + z * (0.008333333333333333 + z * (-1.984126984126984e-4 +
             z * 2.7557319223985893e-6)));
    let cs = 1.0 + z * (-0.5 + z * (0.041666666666666664 + z * (-0.001388888888888889 +
             z * (2.48015873015873e-5 + z * (-2.755731922398589e-7)))));
    // quadrant q mod 4 by selects, not a switch: no divergent branches
    let k = u32(i32(q) & 3);
    let swap = (k & 1u) == 1u;
    let v = select(vec2<f32>(sn, cs), vec2<f32>(cs, sn), swap);
    let sg = vec2<f32>(select(1.0, -1.0, k >= 2u), select(1.0, -1.0, k == 1u || k == 2u));
    return v * sg;
}

// freq_base^(-2i/n_dims) = 2^(i*k): k is split so that i * k_hi is exact
// (k_hi has 12 significant bits and i < 2^12); exp2 then only sees the
// fraction, where its error is a few ulp instead of growing with |i*k|.
fn rope_inv_freq(i: u32) -> f32 {
    let fi = f32(i);
    let e = fi * P.f0.x;
    let n = floor(e);
    return ldexp(exp2((e - n) + fi * P.f0.y), i32(n));
}

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
    // theta = p * base^(-2j/n) / ff_j, then YaRN: theta_interp * (1 - mix) +
    // theta_extrap * mix = theta_extrap * (freq_scale * (1 - mix) + mix).
    var g = P.f0.z;
    if (P.f0.w != 0.0) {
        let y = (f32(ja) - P.f1.x) / max(0.001, P.f1.y - P.f1.x);
        let mix = (1.0 - clamp(y, 0.0, 1.0)) * P.f0.w;
        g = P.f0.z * (1.0 - mix) + mix;
    }
    var w = rope_inv_freq(ja) * g;
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
