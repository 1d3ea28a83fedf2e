// Writing the context's device error word (src/gpu/runtime.h, WG_ERRW_*)
// from a kernel's index check: the including kernel declares
//     var<storage, read_write> err: array<atomic<u32>>
// and calls errword_put for each bad index.  CUR tells the op's writing
// passes to write nothing; the first bad index since the last sync keeps
// its op code, logical position, value, limit and the index tensor's
// shape (4 dims, left-padded) for the host's message.  Same protocol as
// indexing.wgsl's CHECK pass.
fn errword_put(op: u32, pos: u32, value: i32, limit: u32, ndim: u32, shape: vec4<u32>) {
    atomicStore(&err[1], 1u);
    if (atomicAdd(&err[0], 1u) == 0u) {
        atomicStore(&err[2], op);
        atomicStore(&err[3], pos);
        atomicStore(&err[4], bitcast<u32>(value));
        atomicStore(&err[5], limit);
        atomicStore(&err[6], ndim);
        atomicStore(&err[8], shape.x);
        atomicStore(&err[9], shape.y);
        atomicStore(&err[10], shape.z);
        atomicStore(&err[11], shape.w);
    }
}
