// Shared helpers, pulled into kernels with #include "prelude.wgsl".

// Linear workgroup index.  wgml folds 1-D grids larger than
// maxComputeWorkgroupsPerDimension into y and z, so kernels never read
// workgroup_id.x alone; they must also skip indices past their own end,
// because the folded grid may overshoot by up to one row.
fn wg_linear(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.x + wid.y * nwg.x + wid.z * nwg.x * nwg.y;
}
