// Gather-style data movement (src/ops/movement.c): one thread per OUTPUT
// element maps its coordinate, dim by dim, to a coordinate of x, or to the
// pad value / zero.  The map is picked by defines:
//   PAD + PAD_CONSTANT | PAD_REFLECT | PAD_EDGE  (arg = before)
//   PAD + PAD_CIRCULAR (arg = (n - before mod n) mod n)
//   FLIP (arg != 0: dim flipped)   ROLL (arg = (n - shift) mod n)
//   REPEAT (tile / broadcast: c mod n)
//   TRI_LOWER | TRI_UPPER (keep j - i <= k / >= k)   DIAG (keep i == j)
// Large outputs are launched in blocks: p.oshape is the block, p.obase its
// first coordinate in the whole output (the maps need global coordinates),
// and x is bound from the element at coordinate p.xlo onward.
#include "prelude.wgsl"
#include "dtype.wgsl"
#tensor x 1 X_DT X_MODE
#tensor o 2 O_DT O_MODE

struct MvParams {
    oshape: vec4<u32>,
    obase: vec4<u32>,
    ost: vec4<u32>,
    xshape: vec4<u32>,
    xst: vec4<u32>,
    xlo: vec4<u32>,
    arg: vec4<u32>,
    n: u32,       // elements in this block
    ooff: u32,    // element offset of the block's first element in o's binding
    xoff: u32,    // element offset of x at xlo in x's binding
    value: u32,   // PAD_CONSTANT: the value's bits in o_T
    k: i32,       // TRI diagonal
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: MvParams;

// x coordinate along dim d for global output coordinate c; -1: none (pad).
fn xmap(d: u32, c: u32) -> i32 {
    let n = i32(p.xshape[d]);
#ifdef PAD
#ifndef PAD_CIRCULAR
    let t = i32(c) - i32(p.arg[d]);
#endif
#ifdef PAD_CONSTANT
    return select(-1, t, t >= 0 && t < n);
#endif
#ifdef PAD_REFLECT
    // validation keeps every pad below the dim: one reflection suffices
    // (written so that no intermediate exceeds n: dims reach 2^31 - 2)
    var r = abs(t);
    if (r >= n) {
        r = (n - 1) - (r - (n - 1));
    }
    return r;
#endif
#ifdef PAD_EDGE
    return clamp(t, 0, n - 1);
#endif
#ifdef PAD_CIRCULAR
    // arg = (n - before mod n) mod n, all unsigned: i32 % of a negative
    // value is wrong on NVIDIA's Vulkan driver (-1 % 7 gave 3, as if u32)
    return i32((c + p.arg[d]) % p.xshape[d]);
#endif
#endif
#ifdef FLIP
    return select(i32(c), n - 1 - i32(c), p.arg[d] != 0u);
#endif
#ifdef ROLL
    // c, arg < n: one conditional subtraction instead of a modulo
    let r = c + p.arg[d];
    return i32(select(r, r - p.xshape[d], r >= p.xshape[d]));
#endif
#ifdef REPEAT
    return i32(c % p.xshape[d]);
#endif
#ifndef PAD
#ifndef FLIP
#ifndef ROLL
#ifndef REPEAT
    return i32(c);
#endif
#endif
#endif
#endif
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = wg_linear(wid, nwg) * 256u + li;
    if (i >= p.n) {
        return;
    }
    let s = p.oshape;
    let q0 = i / s.w;
    let q1 = q0 / s.z;
    let q2 = q1 / s.y;
    let c = vec4<u32>(q2, q1 - q2 * s.y, q0 - q1 * s.z, i - q0 * s.w);
    let g = c + p.obase;
    var v = o_T(0);
    var inside = true;
#ifdef TRI_LOWER
    inside = i32(g.w) - i32(g.z) <= p.k;
#endif
#ifdef TRI_UPPER
    inside = i32(g.w) - i32(g.z) >= p.k;
#endif
#ifdef DIAG
    inside = g.z == g.w;
#endif
#ifdef PAD_CONSTANT
    v = bitcast<o_T>(p.value);
#endif
    let xc = vec4<i32>(xmap(0u, g.x), xmap(1u, g.y), xmap(2u, g.z), xmap(3u, g.w));
    if (inside && all(xc >= vec4<i32>(0))) {
        v = x_ld(p.xoff + dot(vec4<u32>(xc) - p.xlo, p.xst));
    }
    o_st(p.ooff + dot(c, p.ost), v);
}
