// The entry point of elementwise kernels.  A kernel including this file
// defines ew_one(i) (element i of the iteration space, any layout) and,
// under VEC4, ew_four(v) (the four contiguous elements 4v .. 4v+3).
// Scalar kernels give each thread EW_PER_THREAD elements strided by the
// workgroup; VEC4 kernels one vector (the fastest shape measured on an
// H100, `wgml bench variants`).
@compute @workgroup_size(256)
fn ew_main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
#if VEC4
    let v = ew_vec(wid, nwg, li);
    if (ew_full(v)) {
        ew_four(v);
        return;
    }
    for (var k = 0u; k < 4u; k++) {
        if (v * 4u + k < p.n) {
            ew_one(v * 4u + k);
        }
    }
#else
    let base = ew_base(wid, nwg, li);
    for (var j = 0u; j < EW_PER_THREAD; j++) {
        let i = base + j * EW_WG;
        if (i >= p.n) {
            return;
        }
        ew_one(i);
    }
#endif
}
