// Device probes.  wgpu-native reports subgroupMin/MaxSize as 0, so the
// subgroup size is measured by asking a kernel.  (This naga rejects
// `enable subgroups;`: the Subgroup device feature alone enables them.)

@group(0) @binding(1) var<storage, read_write> out: array<u32>;

#ifdef HAS_SUBGROUPS
@compute @workgroup_size(64)
fn subgroup_size(@builtin(subgroup_size) s: u32, @builtin(local_invocation_index) i: u32) {
    if (i == 0u) {
        out[0] = s;
    }
}
#endif
