// The register-tiled prefill kernel (variants fa64 / fa32 / fa64k32;
// included by attention.wgsl under FA, entry attn; host: attention.c's
// table).  attention.wgsl's tiled kernel keeps its S and O blocks in
// private arrays indexed in loops and reads one float of Q and K per FMA:
// 9.7 TFLOP/s at 4096 causal f32 on an H200 (torch SDPA 42); this one
// 26-27 on an H200 and an H100.  Here:
//   - BQ rows a workgroup, 4 a thread, 8 threads (tx, lanes of one
//     subgroup) across keys and dims: WG = 2 BQ threads; BK = 16 keys a
//     tile (32: fa64k32, slower on an H200: 17 TFLOP/s); thread tx owns the dim vectors tx + 8j (j < NQ = DK / 32 of Q
//     and K, j < NV = DV / 32 of V and O), so a quarter-warp's loads of one
//     key row hit 8 different banks;
//   - Q stays in registers (a mat4x4 per j: its 4 rows' vectors), so per
//     key a thread reads NQ vectors of K for 16 NQ FMAs of partial dots
//     over its dims; the 8 lanes' partials of 8 keys are then summed by a
//     reduce-scatter of 3 subgroupShuffleXor steps (7 vector shuffles),
//     after which lane tx holds its 4 rows' scores of keys tx and tx + 8.
//     (The first version kept Q in workgroup memory and read 6 vectors
//     per 32 FMAs: shared-memory bound, 16.4 TFLOP/s; bench/NOTES.md.)
//   - the row max of a tile: 3 shuffle steps across the 8 lanes; the row
//     sums stay per thread until the end;
//   - P goes to Ps[key][row] as vectors and V replaces K; O (4 rows x NV
//     vectors, named registers: an array indexed in a loop stays in local
//     memory on NVIDIA, see gemm.wgsl) takes per key one vector of P and
//     NV of V for 16 NV FMAs;
//   - PF: each thread's two (PU4: four) octets of the next K tile are
//     loaded into registers during the P.V products, and this tile's V
//     during the S products (+14% on an H100);
//   - tiles below the causal diagonal with no mask, window or soft-capping
//     (tile_plain) take the scale alone instead of score_of's checks.
// Subgroups of at least 8 lanes are required; a subgroup's lanes take row
// groups in the order the subgroups arrive (attention_sg.wgsl).
// Workgroup memory: K/V BK.KVW floats and P BK.BQ (12 KiB at D 128 for
// fa64).  DK and DV are multiples of 32; past D and Dv the loads give 0.
const BK: u32 = {{BK}}u;            // keys a tile: 16, or 32 (NK4)
const NK: u32 = BK / 8u;            // groups of 8 keys a tile
const TX: u32 = 8u;                 // threads across keys / value dims
const TY: u32 = BQ / 4u;            // threads across rows (4 rows each)
const DK4: u32 = DK / 4u;
const DV4: u32 = DV / 4u;
const NQ: u32 = DK / 32u;           // Q / K vectors a row per thread
const KVW4: u32 = {{KVW}}u / 4u;    // max(DK, DV) / 4: a K/V row in vectors
const NV: u32 = DV / 32u;           // accumulator vectors a row
const DK8: u32 = DK / 8u;           // octets a K row
const DV8: u32 = DV / 8u;

#include "attention_kv.wgsl"
#include "attention_sg.wgsl"

var<workgroup> KVs: array<vec4<f32>, BK * KVW4>;
var<workgroup> Ps: array<vec4<f32>, BK * TY>;

// Lane tx's partial dots of key row `at` of KVs with its 4 rows' Q over
// its dims (component a: row a).
fn kdot(at: u32, tx: u32, q0: mat4x4<f32>, q1: mat4x4<f32>, q2: mat4x4<f32>, q3: mat4x4<f32>) -> vec4<f32> {
    var s = KVs[at + tx] * q0;
#if NQ2
    s = s + KVs[at + tx + 8u] * q1;
#endif
#if NQ3
    s = s + KVs[at + tx + 16u] * q2;
#endif
#if NQ4
    s = s + KVs[at + tx + 24u] * q3;
#endif
    return s;
}

// The 8 lanes' partials p0..p7 of 8 keys summed: lane tx gets key tx's.
// Each step halves the keys a lane keeps (those whose bit matches its own)
// and adds its partner's share of them.
fn rs8(p0: vec4<f32>, p1: vec4<f32>, p2: vec4<f32>, p3: vec4<f32>, p4: vec4<f32>, p5: vec4<f32>,
       p6: vec4<f32>, p7: vec4<f32>, tx: u32) -> vec4<f32> {
    let h = (tx & 4u) != 0u;
    let a0 = select(p0, p4, h) + subgroupShuffleXor(select(p4, p0, h), 4u);
    let a1 = select(p1, p5, h) + subgroupShuffleXor(select(p5, p1, h), 4u);
    let a2 = select(p2, p6, h) + subgroupShuffleXor(select(p6, p2, h), 4u);
    let a3 = select(p3, p7, h) + subgroupShuffleXor(select(p7, p3, h), 4u);
    let m = (tx & 2u) != 0u;
    let c0 = select(a0, a2, m) + subgroupShuffleXor(select(a2, a0, m), 2u);
    let c1 = select(a1, a3, m) + subgroupShuffleXor(select(a3, a1, m), 2u);
    let l = (tx & 1u) != 0u;
    return select(c0, c1, l) + subgroupShuffleXor(select(c1, c0, l), 1u);
}

// Row r's Q over dims 4 d4 ..+3 (zeros past the rows and D).
fn q_vec(b: u32, hk: u32, rw: Row, d4: u32) -> vec4<f32> {
    var x = vec4<f32>(0.0);
    if (rw.ok) {
        let qb = p.offs.x + b * p.qs.x + hk * p.qs.y + rw.g * p.qs.z + rw.i * p.qs.w;
        for (var c = 0u; c < 4u; c++) {
            if (4u * d4 + c < p.dims.z) {
                x[c] = f32(q_ld(qb + (4u * d4 + c) * p.in1.x));
            }
        }
    }
    return x;
}

// Dims 4 d4 ..+3 of Q of block rows 4 ty ..+3: a column each.
fn q_mat(b: u32, hk: u32, rb: u32, ty: u32, d4: u32) -> mat4x4<f32> {
#ifdef ROLLED
    var m = mat4x4<f32>();
    for (var a = 0u; a < 4u * p.ss.x; a++) {
        m[a] = q_vec(b, hk, row_of(rb, 4u * ty + a), d4);
    }
    return m;
#else
    return mat4x4<f32>(q_vec(b, hk, row_of(rb, 4u * ty), d4), q_vec(b, hk, row_of(rb, 4u * ty + 1u), d4),
                       q_vec(b, hk, row_of(rb, 4u * ty + 2u), d4), q_vec(b, hk, row_of(rb, 4u * ty + 3u), d4));
#endif
}

// Octet unit e of a K (v false) or V (v true) tile at key kt: key e / DK8
// (DV8), dims 8 (e % DK8) ..+7; zeros past kend, the head dim and the units.
// base: the head's first element (kb, vb).  Whether octets are whole
// 16-byte vectors (KVEC, VVEC) is a constant on GPUs (as in dsg: with
// the flags as uniforms each octet load sat in a branch beside its scalar
// path), the flags F_KVEC / F_VVEC on CPU drivers (one compiled kernel).
fn kv_oct(v: bool, base: u32, kt: u32, kend: u32, e: u32) -> Raw {
    let n8 = select(DK8, DV8, v);
    let c = e / n8;
    let d0 = 8u * (e - c * n8);
    let D = select(p.dims.z, p.dims.w, v);
    let st = select(p.in1.z, p.in2.x, v);
    if (e >= BK * n8 || kt + c >= kend) {
        return Raw(vec4<u32>(0u), vec4<u32>(0u));
    }
    return oct_raw(v, select(k_kind(), v_kind(), v), select(p.offs.y, p.offs.z, v),
                   base + (kt + c) * select(p.in1.y, p.in1.w, v) + d0 * st, st, min(8u, D - min(d0, D)),
                   select({{KVEC}}, {{VVEC}}, v));
}
// Puts it in KVs, as two vectors of key row e / DK8 (DV8).
fn kv_put(v: bool, r: Raw, e: u32) {
    let n8 = select(DK8, DV8, v);
    if (e < BK * n8) {
        let c = e / n8;
        let d4 = 2u * (e - c * n8);
        let x = oct_f32(select(k_kind(), v_kind(), v), r);
        KVs[c * KVW4 + d4] = x.a;
        KVs[c * KVW4 + d4 + 1u] = x.b;
    }
}

#if PF
// A thread's octet units li + x WG (x < 2, or 4: PU4) of one tile, held in
// registers between the load and the put.
struct Pf {
    a: Raw,
    b: Raw,
    c: Raw,
    d: Raw,
}
fn pf_load(v: bool, base: u32, kt: u32, kend: u32, li: u32) -> Pf {
    let z = Raw(vec4<u32>(0u), vec4<u32>(0u));
    var f = Pf(kv_oct(v, base, kt, kend, li), kv_oct(v, base, kt, kend, li + WG), z, z);
#if PU4
    f.c = kv_oct(v, base, kt, kend, li + 2u * WG);
    f.d = kv_oct(v, base, kt, kend, li + 3u * WG);
#endif
    return f;
}
fn pf_put(v: bool, f: Pf, li: u32) {
    kv_put(v, f.a, li);
    kv_put(v, f.b, li + WG);
#if PU4
    kv_put(v, f.c, li + 2u * WG);
    kv_put(v, f.d, li + 3u * WG);
#endif
}
#else
// Without PF: the tile's units loaded and put in one go.
fn tile_put(v: bool, base: u32, kt: u32, kend: u32, li: u32) {
    for (var e = li; e < BK * select(DK8, DV8, v); e += WG) {
        kv_put(v, kv_oct(v, base, kt, kend, e), e);
    }
}
#endif

// Whether no score of the tile at kt needs more than the scale: no mask,
// window or soft-capping, every row real, every key below kend and, with
// causal masking, visible to the block's first query (key_range's rule).
// Uniform; most tiles of a causal prefill are (only those on the diagonal
// are not), and score_of's eight calls cost ~10% of the kernel's time.
fn tile_plain(rb: u32, kt: u32, kend: u32) -> bool {
    if ((p.offs2.w & (F_MASK | F_WINDOW | F_SOFTCAP)) != 0u || kt + BK > kend) {
        return false;
    }
    let r0 = rb * BQ;
    if (r0 + BQ > p.blk.z * p.blk.w) {
        return false;
    }
    if (!flag(F_CAUSAL)) {
        return true;
    }
    var imin = 0u;
    if (r0 / p.blk.w == (r0 + BQ - 1u) / p.blk.w) {
        imin = r0 % p.blk.w;
    }
    return p.offs2.z + kt + BK - 1u + p.ip.x <= p.org.w + imin + p.ip.y;
}

// The workgroup's block, heaviest row blocks first: with causal masking a
// block's keys grow with its rows, and the last blocks to start should be
// the short ones (row blocks slowest, then batch, KV head, split).
fn fa_blk(wid: vec3<u32>, nwg: vec3<u32>) -> Blk {
    let rows = p.blk.z * p.blk.w;
    let nrb = (rows + BQ - 1u) / BQ;
    let per = p.blk.x * p.blk.y * p.ss.y;
    let t = wg_linear(wid, nwg);
    let live = t < per * nrb;
    let ri = t / per;
    var u = t - ri * per;
    let sp = u % p.ss.y;
    u = u / p.ss.y;
    return Blk(sp, nrb - 1u - min(ri, nrb - 1u), u % p.blk.y, u / p.blk.y, live);
}

// One output vector (dims 4 d4 ..+3) of block row rw: normalised into out,
// or (F_SPLIT) the run's acc merged with the carried one (fa, fb).
fn fa_put(b: u32, hk: u32, rw: Row, sp: u32, d4: u32, v: vec4<f32>, inv: f32, fa: f32, fb: f32) {
    if (!rw.ok) {
        return;
    }
    let dv = p.dims.w;
    if (flag(F_SPLIT)) {
        let pb = run_of(b, hk, rw, sp) + 2u;
        for (var e = 0u; e < 4u; e++) {
            let d = 4u * d4 + e;
            if (d < dv) {
                var x = v[e] * fa;
                if (flag(F_CARRY)) {
                    x = x + o_ld(pb + d) * fb;
                }
                o_st(pb + d, x);
            }
        }
        return;
    }
    let ob = p.offs2.y + b * p.os.x + hk * p.os.y + rw.g * p.os.z + rw.i * p.os.w;
    for (var e = 0u; e < 4u; e++) {
        let d = 4u * d4 + e;
        if (d < dv) {
            o_st(ob + d * p.in2.z, v[e] * inv);
        }
    }
}

// Row a's carried run (F_SPLIT and F_CARRY): (fa, fb, max, sum) with which
// its (mx, sum) and acc merge into what an earlier dispatch left there.
fn fa_carry(b: u32, hk: u32, rw: Row, sp: u32, mx: f32, sum: f32) -> vec4<f32> {
    if (!rw.ok || !flag(F_SPLIT) || !flag(F_CARRY)) {
        return vec4<f32>(1.0, 0.0, mx, sum);
    }
    let pb = run_of(b, hk, rw, sp);
    let m2 = o_ld(pb);
    let mn = max(mx, m2);
    let fa = select(exp(mx - mn), 0.0, mx == NEG);
    let fb = select(exp(m2 - mn), 0.0, m2 == NEG);
    return vec4<f32>(fa, fb, mn, sum * fa + o_ld(pb + 1u) * fb);
}

@compute @workgroup_size({{WG}})
fn attn(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32, @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) sgs: u32) {
    let bl = fa_blk(wid, nwg);
    if (!bl.live) {
        return;
    }
    let sp = bl.sp;
    let rb = bl.rb;
    let hk = bl.hk;
    let b = bl.b;
    let D = p.dims.z;
    let Dv = p.dims.w;
    let ty = sg_group(li, lane, sgs, TX);  // a row group's 8 lanes share a subgroup
    let tx = lane % TX;
    let kr = key_range(sp, rb);
    let kbeg = kr.x;
    let kend = kr.y;
    let r0 = row_of(rb, 4u * ty);
    let r1 = row_of(rb, 4u * ty + 1u);
    let r2 = row_of(rb, 4u * ty + 2u);
    let r3 = row_of(rb, 4u * ty + 3u);
    let sl = vec4<f32>(row_slope(hk, r0), row_slope(hk, r1), row_slope(hk, r2), row_slope(hk, r3));
    // Q slices j = 0..NQ-1 (dims 4 (tx + 8j) ..+3), held for the whole key loop
    var q0 = mat4x4<f32>();
    var q1 = mat4x4<f32>();
    var q2 = mat4x4<f32>();
    var q3 = mat4x4<f32>();
    for (var j = 0u; j < n_(NQ); j++) {
        let m = q_mat(b, hk, rb, ty, tx + 8u * j);
        switch j {
            case 0u: { q0 = m; }
            case 1u: { q1 = m; }
            case 2u: { q2 = m; }
            default: { q3 = m; }
        }
    }
    var m = vec4<f32>(NEG);   // the rows' maxima (the same in the 8 tx lanes)
    var l = vec4<f32>(0.0);   // this thread's share of the rows' sums
    var o00 = vec4<f32>(0.0);
    var o10 = vec4<f32>(0.0);
    var o20 = vec4<f32>(0.0);
    var o30 = vec4<f32>(0.0);
#if NV2
    var o01 = vec4<f32>(0.0);
    var o11 = vec4<f32>(0.0);
    var o21 = vec4<f32>(0.0);
    var o31 = vec4<f32>(0.0);
#endif
#if NV3
    var o02 = vec4<f32>(0.0);
    var o12 = vec4<f32>(0.0);
    var o22 = vec4<f32>(0.0);
    var o32 = vec4<f32>(0.0);
#endif
#if NV4
    var o03 = vec4<f32>(0.0);
    var o13 = vec4<f32>(0.0);
    var o23 = vec4<f32>(0.0);
    var o33 = vec4<f32>(0.0);
#endif
    let kb = b * p.kv.x + hk * p.kv.y;
    let vb = b * p.kv.z + hk * p.kv.w;

#if PF
    var pf = pf_load(false, kb, kbeg, kend, li);  // the first tile's K
#endif
    for (var kt = kbeg; kt < kend; kt += BK) {
#if PF
        pf_put(false, pf, li);
#else
        tile_put(false, kb, kt, kend, li);
#endif
        workgroupBarrier();
#if PF
        // this tile's V in flight through the S products
        pf = pf_load(true, vb, kt, kend, li);
#endif
        // S: lane tx's partials of 8 keys at a time, summed across the 8 lanes
        var s0 = vec4<f32>(0.0);  // rows 0..3 against key tx
        var s1 = vec4<f32>(0.0);  // against key tx + 8
#if NK4
        var s2 = vec4<f32>(0.0);  // against keys tx + 16, tx + 24
        var s3 = vec4<f32>(0.0);
#endif
        for (var kc = 0u; kc < n_(NK); kc++) {
            let at = 8u * kc * KVW4;
#ifdef ROLLED
            // CPU drivers: one inlined kdot, not eight (lavapipe's compile time)
            var pa = array<vec4<f32>, 8>();
            for (var k = 0u; k < 8u * p.ss.x; k++) {
                pa[k] = kdot(at + k * KVW4, tx, q0, q1, q2, q3);
            }
            let sk = rs8(pa[0], pa[1], pa[2], pa[3], pa[4], pa[5], pa[6], pa[7], tx);
#else
            let sk = rs8(kdot(at, tx, q0, q1, q2, q3), kdot(at + KVW4, tx, q0, q1, q2, q3),
                         kdot(at + 2u * KVW4, tx, q0, q1, q2, q3), kdot(at + 3u * KVW4, tx, q0, q1, q2, q3),
                         kdot(at + 4u * KVW4, tx, q0, q1, q2, q3), kdot(at + 5u * KVW4, tx, q0, q1, q2, q3),
                         kdot(at + 6u * KVW4, tx, q0, q1, q2, q3), kdot(at + 7u * KVW4, tx, q0, q1, q2, q3), tx);
#endif
            if (kc == 0u) {
                s0 = sk;
            } else if (kc == 1u) {
                s1 = sk;
            }
#if NK4
            else if (kc == 2u) {
                s2 = sk;
            } else {
                s3 = sk;
            }
#endif
        }
        let j0 = kt + tx;
        let j1 = j0 + 8u;
        if (tile_plain(rb, kt, kend)) {
            s0 = s0 * p.fp.x;
            s1 = s1 * p.fp.x;
#if NK4
            s2 = s2 * p.fp.x;
            s3 = s3 * p.fp.x;
#endif
        } else {
#ifdef ROLLED
            // CPU drivers: one inlined score_of, not 4 NK (lavapipe's compile time)
#if NK4
            var sa = array<vec4<f32>, 4>(s0, s1, s2, s3);
#else
            var sa = array<vec4<f32>, 2>(s0, s1);
#endif
            for (var x = 0u; x < 4u * NK * p.ss.x; x++) {
                let a = x & 3u;
                let c = x >> 2u;
                sa[c][a] = score_of(sa[c][a], b, hk, row_of(rb, 4u * ty + a), j0 + 8u * c, kend, sl[a]);
            }
            s0 = sa[0];
            s1 = sa[1];
#if NK4
            s2 = sa[2];
            s3 = sa[3];
#endif
#else
            s0 = vec4<f32>(score_of(s0.x, b, hk, r0, j0, kend, sl.x), score_of(s0.y, b, hk, r1, j0, kend, sl.y),
                           score_of(s0.z, b, hk, r2, j0, kend, sl.z), score_of(s0.w, b, hk, r3, j0, kend, sl.w));
            s1 = vec4<f32>(score_of(s1.x, b, hk, r0, j1, kend, sl.x), score_of(s1.y, b, hk, r1, j1, kend, sl.y),
                           score_of(s1.z, b, hk, r2, j1, kend, sl.z), score_of(s1.w, b, hk, r3, j1, kend, sl.w));
#if NK4
            let j2 = j0 + 16u;
            let j3 = j0 + 24u;
            s2 = vec4<f32>(score_of(s2.x, b, hk, r0, j2, kend, sl.x), score_of(s2.y, b, hk, r1, j2, kend, sl.y),
                           score_of(s2.z, b, hk, r2, j2, kend, sl.z), score_of(s2.w, b, hk, r3, j2, kend, sl.w));
            s3 = vec4<f32>(score_of(s3.x, b, hk, r0, j3, kend, sl.x), score_of(s3.y, b, hk, r1, j3, kend, sl.y),
                           score_of(s3.z, b, hk, r2, j3, kend, sl.z), score_of(s3.w, b, hk, r3, j3, kend, sl.w));
#endif
#endif
        }
        // the rows' tile max across the 8 lanes (the same in each: max is exact)
#if NK4
        var mt = max(max(s0, s1), max(s2, s3));
#else
        var mt = max(s0, s1);
#endif
        mt = max(mt, subgroupShuffleXor(mt, 1u));
        mt = max(mt, subgroupShuffleXor(mt, 2u));
        mt = max(mt, subgroupShuffleXor(mt, 4u));
        workgroupBarrier();  // every thread is done with K (V replaces it below)
        let mn = max(m, mt);
        let al = exp(m - mn);  // NEG - NEG: 1 (acc and l are still 0)
        m = mn;
        let p0 = select(exp(s0 - mn), vec4<f32>(0.0), s0 == vec4<f32>(NEG));
        let p1 = select(exp(s1 - mn), vec4<f32>(0.0), s1 == vec4<f32>(NEG));
        l = l * al + p0 + p1;
        Ps[tx * TY + ty] = p0;
        Ps[(tx + 8u) * TY + ty] = p1;
#if NK4
        let p2 = select(exp(s2 - mn), vec4<f32>(0.0), s2 == vec4<f32>(NEG));
        let p3 = select(exp(s3 - mn), vec4<f32>(0.0), s3 == vec4<f32>(NEG));
        l = l + p2 + p3;
        Ps[(tx + 16u) * TY + ty] = p2;
        Ps[(tx + 24u) * TY + ty] = p3;
#endif
        // V rows (zeros past kend and Dv) into K's place
#if PF
        pf_put(true, pf, li);
#else
        tile_put(true, vb, kt, kend, li);
#endif
        o00 = o00 * al.x;
        o10 = o10 * al.y;
        o20 = o20 * al.z;
        o30 = o30 * al.w;
#if NV2
        o01 = o01 * al.x;
        o11 = o11 * al.y;
        o21 = o21 * al.z;
        o31 = o31 * al.w;
#endif
#if NV3
        o02 = o02 * al.x;
        o12 = o12 * al.y;
        o22 = o22 * al.z;
        o32 = o32 * al.w;
#endif
#if NV4
        o03 = o03 * al.x;
        o13 = o13 * al.y;
        o23 = o23 * al.z;
        o33 = o33 * al.w;
#endif
        workgroupBarrier();  // P and V are in place
#if PF
        // the next tile's K in flight through the P.V products
        pf = pf_load(false, kb, kt + BK, kend, li);
#endif
#ifdef ROLLED
        for (var c = 0u; c < n_(BK); c++) {
#include "attention_fa_pv.wgsl"
        }
#else
        // written out 16 keys at a time (4 x attention_fa_pv4.wgsl): NVIDIA's
        // compiler keeps WGSL loops rolled (README hazards), each key's
        // workgroup loads then right before its FMAs
        for (var c16 = 0u; c16 < BK; c16 += 16u) {
            {
                let c4 = c16;
#include "attention_fa_pv4.wgsl"
            }
            {
                let c4 = c16 + 4u;
#include "attention_fa_pv4.wgsl"
            }
            {
                let c4 = c16 + 8u;
#include "attention_fa_pv4.wgsl"
            }
            {
                let c4 = c16 + 12u;
#include "attention_fa_pv4.wgsl"
            }
        }
#endif
        workgroupBarrier();  // done with P and V before the next K
    }

    // The rows' sums: the 8 lanes' shares (a butterfly: each step adds the
    // same two values in either lane, so every lane ends with one sum).
    var ls = l + subgroupShuffleXor(l, 1u);
    ls = ls + subgroupShuffleXor(ls, 2u);
    ls = ls + subgroupShuffleXor(ls, 4u);
    // Every carried run is read before any lane writes its row's new one.
    let c0 = fa_carry(b, hk, r0, sp, m.x, ls.x);
    let c1 = fa_carry(b, hk, r1, sp, m.y, ls.y);
    let c2 = fa_carry(b, hk, r2, sp, m.z, ls.z);
    let c3 = fa_carry(b, hk, r3, sp, m.w, ls.w);
    workgroupBarrier();
    let inv = vec4<f32>(out_scale(hk, r0.g, m.x, ls.x), out_scale(hk, r1.g, m.y, ls.y),
                        out_scale(hk, r2.g, m.z, ls.z), out_scale(hk, r3.g, m.w, ls.w));
    if (flag(F_SPLIT) && tx == 0u) {
        let rs = array<Row, 4>(r0, r1, r2, r3);
        let cs = array<vec4<f32>, 4>(c0, c1, c2, c3);
        for (var a = 0u; a < 4u; a++) {
            if (rs[a].ok) {
                let pb = run_of(b, hk, rs[a], sp);
                o_st(pb, cs[a].z);
                o_st(pb + 1u, cs[a].w);
            }
        }
    }
#ifdef ROLLED
    // CPU drivers: one inlined fa_put, not 4 NV (lavapipe's compile time)
    let cs = array<vec4<f32>, 4>(c0, c1, c2, c3);
    for (var x = 0u; x < 4u * NV * p.ss.x; x++) {
        let a = x & 3u;
        var v = vec4<f32>(0.0);
        switch x {
            case 0u: { v = o00; }
            case 1u: { v = o10; }
            case 2u: { v = o20; }
            case 3u: { v = o30; }
#if NV2
            case 4u: { v = o01; }
            case 5u: { v = o11; }
            case 6u: { v = o21; }
            case 7u: { v = o31; }
#endif
#if NV3
            case 8u: { v = o02; }
            case 9u: { v = o12; }
            case 10u: { v = o22; }
            case 11u: { v = o32; }
#endif
#if NV4
            case 12u: { v = o03; }
            case 13u: { v = o13; }
            case 14u: { v = o23; }
            case 15u: { v = o33; }
#endif
            default: {}
        }
        fa_put(b, hk, row_of(rb, 4u * ty + a), sp, tx + 8u * (x >> 2u), v, inv[a], cs[a].x, cs[a].y);
    }
#else
    fa_put(b, hk, r0, sp, tx, o00, inv.x, c0.x, c0.y);
    fa_put(b, hk, r1, sp, tx, o10, inv.y, c1.x, c1.y);
    fa_put(b, hk, r2, sp, tx, o20, inv.z, c2.x, c2.y);
    fa_put(b, hk, r3, sp, tx, o30, inv.w, c3.x, c3.y);
#if NV2
    fa_put(b, hk, r0, sp, tx + 8u, o01, inv.x, c0.x, c0.y);
    fa_put(b, hk, r1, sp, tx + 8u, o11, inv.y, c1.x, c1.y);
    fa_put(b, hk, r2, sp, tx + 8u, o21, inv.z, c2.x, c2.y);
    fa_put(b, hk, r3, sp, tx + 8u, o31, inv.w, c3.x, c3.y);
#endif
#if NV3
    fa_put(b, hk, r0, sp, tx + 16u, o02, inv.x, c0.x, c0.y);
    fa_put(b, hk, r1, sp, tx + 16u, o12, inv.y, c1.x, c1.y);
    fa_put(b, hk, r2, sp, tx + 16u, o22, inv.z, c2.x, c2.y);
    fa_put(b, hk, r3, sp, tx + 16u, o32, inv.w, c3.x, c3.y);
#endif
#if NV4
    fa_put(b, hk, r0, sp, tx + 24u, o03, inv.x, c0.x, c0.y);
    fa_put(b, hk, r1, sp, tx + 24u, o13, inv.y, c1.x, c1.y);
    fa_put(b, hk, r2, sp, tx + 24u, o23, inv.z, c2.x, c2.y);
    fa_put(b, hk, r3, sp, tx + 24u, o33, inv.w, c3.x, c3.y);
#endif
#endif
}
