// get_rows fast path: contiguous rows of a table copied 16 bytes at a time
// (one thread per vec4<u32> of the output, one division per vector); the
// bytes move untouched whatever the dtype.
// The generic indexing kernel decomposes every element's 4-D coordinate
// and re-reads its index; on an H100 that ran at half of copy bandwidth.
#include "prelude.wgsl"

struct Params {
    n4: u32,         // output vectors
    row4: u32,       // vectors per row
    src_off4: u32,   // table start, in vectors within its binding
    out_off4: u32,
    idx_off: u32,    // first index, in elements within its binding
    rows: u32,       // table rows
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> idx: array<i32>;
@group(0) @binding(3) var<storage, read_write> dst: array<vec4<u32>>;
// The device error word (src/gpu/runtime.h): word 1 is set when the op's
// check of the indices failed; then nothing is written.
@group(0) @binding(4) var<storage, read> err: array<u32>;

@compute @workgroup_size(256)
fn rows_vec4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) li: u32) {
    let v = wg_linear(wid, nwg) * 256u + li;
    if (v >= p.n4 || err[1] != 0u) {
        return;
    }
    let r = v / p.row4;
    let c = v - r * p.row4;
    let row = idx[p.idx_off + r];
    if (row < 0 || u32(row) >= p.rows) {
        return; // never reached after a passed check; keeps reads in range
    }
    dst[p.out_off4 + v] = src[p.src_off4 + u32(row) * p.row4 + c];
}
