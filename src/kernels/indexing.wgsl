// Indexing family (host side: src/ops/indexing.c).  One template over a
// 4-D iteration space with operand slots addressed like ew_common:
// slot 0 `a` (read), 1 `x` (i32 indices), 2 `o` (written), 3 `w` (set_rows'
// winners scratch) and a virtual slot `j` that is never bound: its offset
// and strides give an index's logical position (CHECK: in the whole index
// tensor; CLAIM / WIN: along idx's last dim).  The index read at x[c]
// replaces one coordinate of a (gather: get_rows, gather, index_select,
// embedding) or of o and w (scatter: set_rows, scatter_add):
//     o[offs.z + c.st_o + r * ax.z] = a[offs.x + c.st_a + r * ax.x],
//     r = x[offs.y + c.st_x] - lo
// where the host sets ax (elements per index row) for the indexed slots
// and 0 for the others.  Indexed operands are bound over index rows
// [lo, hi) only (tables larger than one binding take several passes, each
// reading every index and handling those in its rows); indices outside
// the pass are skipped, which also keeps every access inside its binding.
//
// Indices are checked on the GPU (no op reads them on the host):
//   CHECK    one pass over the index tensor before the op's other passes:
//            an index outside [0, limit) sets the error word's CUR word
//            (cleared by the host just before) and, if it is the first
//            since the last sync, records op, position, value and shape
//            for the message the next sync gives (src/gpu/memory.c).
//   writing passes (COPY, ADD, ONE_HOT) read CUR first and write nothing
//            when it is set: a call with a bad index writes nothing.
//   CLAIM    set_rows with repeated indices: w[slot of (batch, row v)] =
//            max over the positions j pointing at it of j + 1 (w starts
//            zeroed), so with WIN the COPY pass writes only the last
//            occurrence, as sequential assignment would.
//
// Variants: COPY (o = a converted to o's dtype), ADD (scatter_add: atomic
// o += a, f32 through a compare-exchange loop on the bits, i32 through
// atomicAdd), ONE_HOT (o[c] = x[c without its last coordinate] == c.w; no
// `a`, so x and o are bindings 1 and 2).
#include "ew_common.wgsl"

struct IxParams {
    shape: vec4<u32>,
    n: u32,
    lo: u32,
    hi: u32,
    pad0: u32,          // SELFCHECK: the indexed iteration dim
    offs: vec4<u32>,
    st: array<vec4<u32>, 4>,
    ax: vec4<u32>,      // elements per index row, per slot (0: not indexed)
    jst: vec4<u32>,     // the virtual slot j's strides
    joff: u32,          // and offset
    limit: u32,         // CHECK: indices must lie in [0, limit)
    op: u32,            // CHECK: op code for the message (wg_errword_op)
    ndim: u32,          // CHECK: the index tensor's dims and shape
    full: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: IxParams;

// Words of the device error word (runtime.h, WG_ERRW_*).
const ERR_COUNT: u32 = 0u;
const ERR_CUR: u32 = 1u;

fn j_at(c: vec4<u32>) -> u32 {
    return p.joff + dot(c, p.jst);
}

#ifdef CHECK
#tensor x 1 i32 X_MODE
@group(0) @binding(2) var<storage, read_write> err: array<atomic<u32>>;

#ifdef ONE_WG
// ONE_WG (at most EW_WG * EW_PER_THREAD indices: one workgroup): the
// verdict is known inside the dispatch, so the workgroup writes CUR whole
// (0 or 1) and the host arms nothing: a decode step's two KV-cache writes
// each save a fill dispatch (~2.3 µs of GPU floor on an H100).
var<workgroup> wbad: atomic<u32>;
#endif

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
#ifdef ONE_WG
    if (li == 0u) {
        atomicStore(&wbad, 0u);
    }
    workgroupBarrier();
#endif
    let base = ew_base(wid, nwg, li);
    for (var j = 0u; j < EW_PER_THREAD; j++) {
        let i = base + j * EW_WG;
        if (i >= p.n) {
            break;
        }
        let c = ew_coords(i);
        let v = x_ld(ew_at(1u, c));
        if (v < 0 || u32(v) >= p.limit) {
#ifdef ONE_WG
            atomicStore(&wbad, 1u);
#else
            atomicStore(&err[ERR_CUR], 1u);
#endif
            if (atomicAdd(&err[ERR_COUNT], 1u) == 0u) {
                atomicStore(&err[2], p.op);
                atomicStore(&err[3], j_at(c));
                atomicStore(&err[4], bitcast<u32>(v));
                atomicStore(&err[5], p.limit);
                atomicStore(&err[6], p.ndim);
                atomicStore(&err[8], p.full.x);
                atomicStore(&err[9], p.full.y);
                atomicStore(&err[10], p.full.z);
                atomicStore(&err[11], p.full.w);
            }
        }
    }
#ifdef ONE_WG
    workgroupBarrier();
    if (li == 0u) {
        atomicStore(&err[ERR_CUR], atomicLoad(&wbad));
    }
#endif
}
#endif

#ifdef CLAIM
// x is read_write when it shares the winners' buffer (a graph's arena)
#tensor x 1 i32 X_MODE
@group(0) @binding(2) var<storage, read_write> win: array<atomic<i32>>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let base = ew_base(wid, nwg, li);
    let lo = bitcast<i32>(p.lo);
    let hi = bitcast<i32>(p.hi);
    for (var j = 0u; j < EW_PER_THREAD; j++) {
        let i = base + j * EW_WG;
        if (i >= p.n) {
            return;
        }
        let c = ew_coords(i);
        let v = x_ld(ew_at(1u, c));
        if (v >= lo && v < hi) {
            atomicMax(&win[ew_at(3u, c) + u32(v - lo) * p.ax.w], i32(j_at(c) + 1u));
        }
    }
}
#endif

#ifdef ONE_HOT
#tensor x 1 i32 X_MODE
#tensor o 2 O_DT O_MODE
@group(0) @binding(3) var<storage, read> err: array<u32>;
#endif
#ifdef GATHER_SCATTER
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
#ifdef WIN
@group(0) @binding(4) var<storage, {{WIN_ACCESS}}> win: array<i32>;
@group(0) @binding(5) var<storage, read> err: array<u32>;
#else
#ifdef SELFCHECK
@group(0) @binding(4) var<storage, read_write> err: array<atomic<u32>>;
#include "errword.wgsl"
var<workgroup> wbad: atomic<u32>;
#else
@group(0) @binding(4) var<storage, read> err: array<u32>;
#endif
#endif
#endif

#ifdef WRITES
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let base = ew_base(wid, nwg, li);
#ifdef SELFCHECK
    // One workgroup meets every index (src/ops/indexing.c, one_pass): it
    // checks them itself and writes nothing if one is bad, recording it as
    // CHECK would (no CHECK dispatch before this one).
    if (li == 0u) {
        atomicStore(&wbad, 0u);
    }
    workgroupBarrier();
    for (var j = 0u; j < EW_PER_THREAD; j++) {
        let i = base + j * EW_WG;
        if (i < p.n) {
            let c = ew_coords(i);
            let v = x_ld(ew_at(1u, c));
            if (v < 0 || u32(v) >= p.limit) {
                atomicStore(&wbad, 1u);
                // counted once an index: by its row's first element (dims
                // past p.pad0, the indexed one, all 0)
                if (all(select(c, vec4<u32>(0u), vec4<u32>(0u, 1u, 2u, 3u) <= vec4<u32>(p.pad0)) == vec4<u32>(0u))) {
                    errword_put(p.op, j_at(c), v, p.limit, p.ndim, p.full);
                }
            }
        }
    }
    workgroupBarrier();
    if (atomicLoad(&wbad) != 0u) {
        return; // no barrier follows: a non-uniform return is fine
    }
#else
    // The op's CHECK pass found a bad index: write nothing.
    if (err[ERR_CUR] != 0u) {
        return;
    }
#endif
    let lo = bitcast<i32>(p.lo);
    let hi = bitcast<i32>(p.hi);
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
#ifdef WIN
        if (win[ew_at(3u, c) + r * p.ax.w] != i32(j_at(c) + 1u)) {
            continue; // a later occurrence of this index wins
        }
#endif
        let val = a_ld(ew_at(0u, c) + r * p.ax.x);
#ifdef ADD
        o_add(ew_at(2u, c) + r * p.ax.z, val);
#else
        o_st(ew_at(2u, c) + r * p.ax.z, o_T(val));
#endif
#endif
    }
}
#endif
