// The entry point of the row kernels, included at their end (softmax.wgsl,
// norm.wgsl; the host passes entry "rows_main").  One workgroup per row; the
// kernel defines
//     fn row_kernel(li: u32, lane: u32, r: vec3<u32>)
// for row coordinates r (row_coords); lane is the subgroup invocation id,
// 0 without subgroups.
@compute @workgroup_size({{WG}})
fn rows_main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
#ifdef HAS_SUBGROUPS
             @builtin(subgroup_invocation_id) lane: u32,
#endif
             @builtin(local_invocation_index) li: u32) {
#ifndef HAS_SUBGROUPS
    let lane = 0u;
#endif
    let row = wg_linear(wid, nwg);
    if (row >= row_count()) {
        return;
    }
    row_begin(li);
    row_kernel(li, lane, row_coords(row));
}
