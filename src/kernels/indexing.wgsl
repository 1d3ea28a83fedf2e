// Indexing family (host side: src/ops/indexing.c).  One template over a
// 4-D iteration space with three operand slots, addressed like ew_common:
// slot 0 `a` (read), slot 1 `x` (i32 indices), slot 2 `o` (written).  The
// index read at x[c] replaces one coordinate of either a (gather: get_rows,
// gather, index_select, embedding) or o (scatter: set_rows, scatter_add):
//     o[offs.z + c.st_o + r * ip.w] = a[offs.x + c.st_a + r * ip.z],
//     r = x[offs.y + c.st_x] - ip.x
// where the host sets one of ip.z / ip.w to the indexed stride and the
// other to 0.  The indexed operand is bound only over index rows
// [ip.x, ip.y) (huge tables take several such passes); indices outside the
// pass, and -1 ("skip", used by set_rows for earlier duplicates), are
// skipped.  The host has already rejected out-of-range indices; the range
// test also keeps every access inside its binding.
//
// Variants: COPY (o = a converted to o's dtype), ADD (scatter_add: atomic
// o += a, f32 through a compare-exchange loop on the bits, i32 through
// atomicAdd), ONE_HOT (o[c] = x[c without its last coordinate] == c.w; no
// `a`, so x and o are bindings 1 and 2).
#include "ew_common.wgsl"

#ifdef ONE_HOT
#tensor x 1 i32 X_MODE
#tensor o 2 O_DT O_MODE
#else
#tensor a 1 A_DT A_MODE
#tensor x 2 i32 X_MODE
#ifdef ADD
// #tensor has no atomic read-modify-write: f32 and i32 words as atomics.
@group(0) @binding(3) var<storage, read_write> o_buf: array<atomic<u32>>;

fn o_add(k: u32, v: a_T) {
#ifdef ADD_F32
    var old = atomicLoad(&o_buf[k]);
    loop {
        let r = atomicCompareExchangeWeak(&o_buf[k], old, bitcast<u32>(bitcast<f32>(old) + v));
        if (r.exchanged) {
            break;
        }
        old = r.old_value;
    }
#else
    atomicAdd(&o_buf[k], bitcast<u32>(v)); // two's complement: signed add
#endif
}
#else
#tensor o 3 O_DT O_MODE
#endif
#endif

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let base = ew_base(wid, nwg, li);
    let lo = bitcast<i32>(p.ip.x);
    let hi = bitcast<i32>(p.ip.y);
    for (var j = 0u; j < EW_PER_THREAD; j++) {
        let i = base + j * EW_WG;
        if (i >= p.n) {
            return;
        }
        let c = ew_coords(i);
        let v = x_ld(ew_at(1u, c));
#ifdef ONE_HOT
        o_st(ew_at(2u, c), select(o_T(0), o_T(1), v == i32(c.w)));
#else
        if (v < lo || v >= hi) {
            continue;
        }
        let r = u32(v - lo);
        let val = a_ld(ew_at(0u, c) + r * p.ip.z);
#ifdef ADD
        o_add(ew_at(2u, c) + r * p.ip.w, val);
#else
        o_st(ew_at(2u, c) + r * p.ip.w, o_T(val));
#endif
#endif
    }
}
