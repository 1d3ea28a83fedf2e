// Gated linear units: out = act(a) * g over the 4-D iteration space of out,
// through the strided launcher (src/ops/launch.c).  a and g are any views:
// the two halves of one packed tensor or two separate tensors.  The kind
// (wgml_glu_kind order) is p.ip.x: a uniform branch, so the four kinds
// share one pipeline per dtype and layout (each pipeline costs compile time).
#include "ew_common.wgsl"
#include "math.wgsl"
#tensor a 1 A_DT A_MODE
#tensor b 2 B_DT B_MODE
#tensor o 3 O_DT O_MODE

// NaN on bits: compilers may assume no NaN, and WGSL's max(NaN, 0) may
// return 0, where relu(NaN) must stay NaN (wgml.h's NaN rule for glu).
fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

fn act(x: f32) -> f32 {
    switch (p.ip.x) {
        case 0u: {
            return x * wg_sigmoid(x);
        }
        case 1u: {
            return 0.5 * x * (1.0 + wg_erf(x * 0.7071067811865476));
        }
        case 2u: {
            return 0.5 * x * (1.0 + wg_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
        }
        default: {
            return select(max(x, 0.0), x, is_nan(x));
        }
    }
}

@compute @workgroup_size(256)
fn glu(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) li: u32) {
    let base = ew_base(wid, nwg, li);
    for (var j = 0u; j < EW_PER_THREAD; j++) {
        let i = base + j * EW_WG;
        if (i >= p.n) {
            return;
        }
#if CONTIG
        o_st(p.offs[2] + i, act(a_ld(p.offs[0] + i)) * b_ld(p.offs[1] + i));
#else
        let c = ew_coords(i);
        o_st(ew_at(2u, c), act(a_ld(ew_at(0u, c))) * b_ld(ew_at(1u, c)));
#endif
    }
}
