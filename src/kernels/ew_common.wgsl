// Parameters and indexing shared by elementwise-shaped kernels; the host
// side is wg_ew_params / wg_ew_launch (src/ops/launch.c).  Operand k has
// element offset p.offs[k] and strides p.st[k] over the 4-D iteration space
// p.shape ([0] outermost).  With CONTIG every operand is contiguous over
// that space, so the flat index needs no division.
#include "prelude.wgsl"
#include "dtype.wgsl"

// EW_OWN_PARAMS: the including kernel declares `p` itself, with at least
// shape, n, offs and st (indexing.wgsl adds per-slot index strides).
#ifndef EW_OWN_PARAMS
struct EwParams {
    shape: vec4<u32>,
    n: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    offs: vec4<u32>,
    st: array<vec4<u32>, 4>,
    fp: vec4<f32>,
    ip: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: EwParams;
#endif

fn ew_coords(i: u32) -> vec4<u32> {
    let s = p.shape;
    let q0 = i / s.w;
    let q1 = q0 / s.z;
    return vec4<u32>(q1 / s.y, q1 % s.y, q0 % s.z, i % s.w);
}

fn ew_at(k: u32, c: vec4<u32>) -> u32 {
    return p.offs[k] + dot(c, p.st[k]);
}

fn ew_index(k: u32, i: u32) -> u32 {
#if CONTIG
    return p.offs[k] + i;
#else
    return ew_at(k, ew_coords(i));
#endif
}

const EW_WG: u32 = 256u;
const EW_PER_THREAD: u32 = 4u;

// Element indices this thread handles: base + j * EW_WG, j < EW_PER_THREAD
// (strided by the workgroup so neighbouring threads touch neighbouring
// elements).
fn ew_base(wid: vec3<u32>, nwg: vec3<u32>, li: u32) -> u32 {
    return wg_linear(wid, nwg) * (EW_WG * EW_PER_THREAD) + li;
}

// VEC4 kernels: thread t owns elements 4t .. 4t+3 (one vector).  Returns
// the vector index; ew_full(v) says all four elements exist (else the
// kernel finishes the tail with scalar accesses).
fn ew_vec(wid: vec3<u32>, nwg: vec3<u32>, li: u32) -> u32 {
    return wg_linear(wid, nwg) * EW_WG + li;
}

fn ew_full(v: u32) -> bool {
    return v * 4u + 3u < p.n;
}
