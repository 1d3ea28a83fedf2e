// Gated linear units: out = act(a) * g over the 4-D iteration space of out,
// through the strided launcher (src/ops/launch.c).  a and g are any views:
// the two halves of one packed tensor or two separate tensors.  The kind
// (wgml_glu_kind order) is p.ip.x: a uniform branch, so the four kinds
// share one pipeline per dtype and layout (each pipeline costs compile time).
#include "ew_common.wgsl"
#include "ew_float.wgsl"
#tensor a 1 A_DT A_MODE
#tensor b 2 B_DT B_MODE
#tensor o 3 O_DT O_MODE

#include "glu_act.wgsl"

fn act(x: f32) -> f32 {
    return glu_act(p.ip.x, x);
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
