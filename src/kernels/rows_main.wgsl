// The entry point of the row kernels, included at their end (softmax.wgsl,
// norm.wgsl; the host passes entry "rows_main").  One workgroup per row; the
// kernel defines
//     fn row_kernel(li: u32, lane: u32, r: vec3<u32>)
// for row coordinates r (row_coords); lane is the subgroup invocation id,
// 0 without subgroups.
#ifdef HAS_SUBGROUPS
// the invocation's subgroup, its count and size (rows_main sets them for
// kernels that place work by subgroup: norm.wgsl's Q8OUT codes)
var<private> sg_id: u32;
var<private> sg_count: u32;
var<private> sg_size: u32;
#endif
@compute @workgroup_size({{WG}})
fn rows_main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
#ifdef HAS_SUBGROUPS
             @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_id) sid: u32,
             @builtin(num_subgroups) nsub: u32, @builtin(subgroup_size) sgs: u32,
#endif
             @builtin(local_invocation_index) li: u32) {
#ifdef HAS_SUBGROUPS
    sg_id = sid;
    sg_count = nsub;
    sg_size = sgs;
#else
    let lane = 0u;
#endif
    let row = wg_linear(wid, nwg);
    if (row >= row_count()) {
        return;
    }
    row_begin(li);
    row_kernel(li, lane, row_coords(row));
}
