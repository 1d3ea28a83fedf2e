// Device-to-device copy.  A kernel rather than copyBufferToBuffer: on an H100
// the copy engine moved 0.85 TB/s and a vec4 kernel ~2.8 TB/s.
//   copy_units: aligned copies of whole units (vec4<u32> with V4, else u32)
//   copy_bytes: any byte offsets; one thread builds each destination word
// SRC_RW declares the source read_write: a buffer copied into itself must
// not be bound both read-only and writable in one dispatch.
#include "prelude.wgsl"

struct Params {
    src_off: u32,  // in units (copy_units) or bytes (copy_bytes)
    dst_off: u32,
    n: u32,        // units or bytes to copy
    n_threads: u32,// copy_bytes: destination words touched
}

#if V4
alias T = vec4<u32>;
#else
alias T = u32;
#endif

@group(0) @binding(0) var<uniform> p: Params;
#if SRC_RW
@group(0) @binding(1) var<storage, read_write> src: array<T>;
#else
@group(0) @binding(1) var<storage, read> src: array<T>;
#endif
@group(0) @binding(2) var<storage, read_write> dst: array<T>;

const WG: u32 = 256u;

// One unit a thread: on an H100 (`wgml bench variants`) a vec4 copy moved
// 2.87 TB/s so, 2.80 with four units a thread.
@compute @workgroup_size(256)
fn copy_units(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    let i = wg_linear(wid, nwg) * WG + li;
    if (i >= p.n) {
        return;
    }
    dst[p.dst_off + i] = src[p.src_off + i];
}

#ifndef V4
fn src_byte(a: u32) -> u32 {
    return (src[a >> 2u] >> ((a & 3u) * 8u)) & 0xffu;
}

@compute @workgroup_size(256)
fn copy_bytes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    let i = wg_linear(wid, nwg) * WG + li;
    if (i >= p.n_threads) {
        return;
    }
    let w = (p.dst_off >> 2u) + i;
    var v = dst[w];
    for (var k = 0u; k < 4u; k++) {
        let a = w * 4u + k;
        if (a >= p.dst_off && a < p.dst_off + p.n) {
            let b = src_byte(a - p.dst_off + p.src_off);
            v = (v & ~(0xffu << (8u * k))) | (b << (8u * k));
        }
    }
    dst[w] = v;
}
#endif
