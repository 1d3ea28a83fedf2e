// ---- The norm tail of the one-dispatch product (XS_NTAIL; matvec_xs.wgsl
// includes it; host: src/ops/linear_norm.c).
//
// Graph fusion's y = rms_norm(h) * g (or l2_norm) of h = linear(x, w) (+ c)
// for one activation row: a decoder's residual stream after its o and down
// products, normalised for the next products.  The norm needs all n of h,
// which the dispatch's workgroups make a few rows each, so the last
// workgroup to finish does it: each workgroup, its rows stored, passes a
// device-scope storageBarrier (release) and takes a ticket from a counter
// of the context (src/gpu/memory.c, wg_tickets_bind); the one that takes
// ticket p.pad0 - 1 knows every row is stored, passes a second barrier
// (acquire), reads h through atomic loads (from L2, never a stale L1 line)
// and writes y, then x's 8-bit codes after it for the next product (NT_Q8,
// the xq tail's layout: q8_block.wgsl), and sets the counter back to 0 for
// the next dispatch that binds it (every such dispatch is ordered after this
// one: the counter is bound read_write by each).  No workgroup waits for
// another, so nothing rests on workgroups running at the same time.
//
// Why: a decode's norms are dispatches of one workgroup each.  Dropping
// both of a layer's made the 8B tg128 +21% on an H200 (bench/NOTES.md
// 2026-11-27 (3), call 14), and the tickets alone (this tail with no body)
// +12.4%; but the body itself, a chain of L2 round trips, barriers and
// the codes on one SM, costs ~5 us a tail there (2026-11-27 (5), calls
// 2-9), so the fusion is opt-in (WGML_GRAPH_FUSE=normtail): 8B 360.3 ->
// 353.4, 1B 1,050.9 -> 1,075.6 tokens/s.
//
// Parameters, in the product's chk words (ids only): chk = (y's first
// word in its binding, g's first element (NT_G: g is bound), eps (f32
// bits), kind (1 RMS, 2 L2)).  h is the product's out (p.oo[0].x,
// contiguous f32), n = p.n a multiple of 32, read back through binding NTH:
// the bias's (4) or, where the product has a bias (a one-row residual
// add), c's (5).
@group(0) @binding({{NTH}}) var<storage, read_write> nt_h: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> nt_y: array<u32>;
@group(0) @binding(7) var<storage, {{NTG_ACC}}> nt_g: array<f32>;
@group(0) @binding(8) var<storage, read_write> nt_tk: array<atomic<u32>>;

const NTN: u32 = {{NTN}}u;  // n, the row's length

var<workgroup> nt_last: u32;
var<workgroup> nt_np: atomic<u32>;
var<workgroup> nt_red: array<f32, WG>;
// vec4s of the row a thread: nsub x sgs = WG (WG a multiple of 32)
const NTR: u32 = (NTN + 4u * WG - 1u) / (4u * WG);

// y's element 4q's slot at step r: consecutive lanes on consecutive
// vectors, so the codes' blocks are 8 lanes of a subgroup (q8_lanes.wgsl)
fn nt_q(r: u32, sid: u32, nsub: u32, lane: u32, sgs: u32) -> u32 {
    return (r * nsub + sid) * sgs + lane;
}

fn ntail(li: u32, lane: u32, sid: u32, nsub: u32, sgs: u32) {
    storageBarrier();  // release: this workgroup's rows before its ticket
    if (li == 0u) {
        atomicStore(&nt_np, 0u);
        nt_last = select(0u, 1u, atomicAdd(&nt_tk[0], 1u) + 1u == p.pad0);
    }
    if (workgroupUniformLoad(&nt_last) == 0u) {
        return;
    }
    storageBarrier();  // acquire: every workgroup's rows
    // h (and g) into registers, a vec4 a thread a step (consecutive lanes,
    // consecutive words: a thread's own 32-element block made every load
    // instruction of a warp touch 32 L2 lines, ~20 us a tail on an H200),
    // and the sum of squares
    let h0 = p.oo[0].x;
    let w = p.chk;
    var hv: array<vec4<f32>, NTR>;
#ifdef NT_G
    var gv: array<vec4<f32>, NTR>;
#endif
    for (var r = 0u; r < NTR; r++) {
        let j = min(4u * nt_q(r, sid, nsub, lane, sgs), NTN - 4u);  // clamped: a duplicate read is never used
        hv[r] = bitcast<vec4<f32>>(vec4<u32>(atomicLoad(&nt_h[h0 + j]), atomicLoad(&nt_h[h0 + j + 1u]),
                                             atomicLoad(&nt_h[h0 + j + 2u]), atomicLoad(&nt_h[h0 + j + 3u])));
#ifdef NT_G
        gv[r] = vec4<f32>(nt_g[w.y + j], nt_g[w.y + j + 1u], nt_g[w.y + j + 2u], nt_g[w.y + j + 3u]);
#endif
    }
    var ss = 0.0;
    for (var r = 0u; r < NTR; r++) {
        if (4u * nt_q(r, sid, nsub, lane, sgs) < NTN) {
            ss += dot(hv[r], hv[r]);
        }
    }
    let t = subgroupAdd(ss);
    if (lane == 0u) {
        nt_red[atomicAdd(&nt_np, 1u)] = t;
    }
    workgroupBarrier();
    let np = atomicLoad(&nt_np);
    ss = 0.0;
    for (var s = 0u; s < np; s++) {
        ss += nt_red[s];
    }
    let scale = ss_scale(ss, NTN, bitcast<f32>(w.z), w.w == 1u);
    // y = h * scale (* g), stored as h was read, and x's codes for the
    // next product (q8_block's values, a vec4 a lane: q8_lanes.wgsl; a
    // 32-element block a thread, from a copy of y in workgroup memory, cost
    // ~3 us a tail more on an H200: bench/NOTES.md)
    for (var r = 0u; r < NTR; r++) {
        let q = nt_q(r, sid, nsub, lane, sgs);
        var v = hv[r] * scale;
#ifdef NT_G
        v *= gv[r];
#endif
        if (4u * q < NTN) {
            let yi = w.x + 4u * q;
            nt_y[yi] = bitcast<u32>(v.x);
            nt_y[yi + 1u] = bitcast<u32>(v.y);
            nt_y[yi + 2u] = bitcast<u32>(v.z);
            nt_y[yi + 3u] = bitcast<u32>(v.w);
        }
#ifdef NT_Q8
        // (the host takes this tail only where the measured subgroups are a
        // multiple of 8 lanes; should a pipeline run at another size, the
        // blocks' scales come out NaN, so the next product's output shows
        // it instead of being quietly wrong)
        var c = q8_lanes(v);
        if (sgs % 8u != 0u) {
            c.ds = vec2<f32>(bitcast<f32>(0x7fc00000u));
        }
        if (4u * q < NTN) {
            let qo = w.x + NTN;
            nt_y[qo + q] = c.w;
            if ((q & 7u) == 0u) {
                nt_y[qo + NTN / 4u + q / 4u] = bitcast<u32>(c.ds.x);
                nt_y[qo + NTN / 4u + q / 4u + 1u] = bitcast<u32>(c.ds.y);
            }
        }
#endif
    }
    if (li == 0u) {
        atomicStore(&nt_tk[0], 0u);
    }
}
