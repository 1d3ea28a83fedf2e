// Split-KV decode: two kernels (included by attention.wgsl with DECODE,
// host: src/ops/attention_run.c).  This file holds the first kernel
// (what both use, the K/V dtype kinds, raw octet loads and their f32
// conversion, is attention_kv.wgsl, shared with attention_fa.wgsl), entry attn_dec (variant splitkv, the old one: workgroup
// barriers per key tile); with DSG it includes attention_dsg.wgsl instead
// (entry attn_dsg, variants dsg and dsg_np: subgroup reductions, no
// barrier in the key loop).
//
// attn_dec:
// A workgroup owns one KV head's BQ rows (its grouped query heads x
// queries: decode's 4 heads of a GQA group read each K/V byte once) and
// one chunk of p.ss.z keys.  D is cut into octets of 8 elements, one per
// "octet lane" ol (16 for D 128); the WG threads are octet lanes x key
// lanes kl (8 for D 128, at most KLM), and a tile is kln * KPT keys:
// thread (ol, kl) loads octet ol of keys kl, kl + kln, ... of K and V,
// one 16-byte vec4<u32> load each for f16 (two for f32) when the layout
// allows it (F_KVEC / F_VVEC: contiguous along D, 16-byte aligned), else
// element by element (strided views, D % 8 != 0, q8_0).  A warp's load
// then covers 2 whole 256-byte key rows (D 128 f16).
// Per tile:
//   1. each thread: q.k over its octet for every row -> Sp (workgroup);
//      then it issues the next tile's K loads, which stay in flight
//      through the barriers;
//   2. one thread per (row, key) sums the octets' partial dots and makes
//      the score (scale, softcap, masks, causal, window: score_of) -> Ss;
//   3. each thread runs an online softmax over its own keys (every thread
//      of a key lane computes the same max and sum from Ss) and adds
//      p * v to its acc (BQ rows x 8 dims in registers); then it issues
//      the next tile's V loads.
// At the chunk's end the key lanes' (max, sum, acc) merge through
// workgroup memory into the chunk's partial run (max, sum, acc[Dv]);
// attn_reduce merges the runs.  Two barriers per tile: nothing of the
// tile is reread after the second, and the next tile's first writes come
// after it.

#ifndef DSG
const KPT: u32 = {{KPT}}u;   // keys per thread per tile
const KLM: u32 = 16u;        // key lanes at most (D <= 56 leaves threads idle)
const SPN: u32 = {{SPN}}u;   // Sp floats: max(BQ KPT WG + 1024, RPR 8 WG)
const RPR: u32 = {{RPR}}u;   // rows per round of the final merge (divides BQ)
#endif

#include "attention_kv.wgsl"

#ifndef DSG
var<workgroup> Sp: array<f32, SPN>;             // partial dots [ol][row][key]; final merge
var<workgroup> Ss: array<f32, BQ * KLM * KPT>;  // scores [row][key]
var<workgroup> Ml: array<f32, 2u * KLM * BQ>;   // key lanes' (max, sum) per row
var<workgroup> Rs: array<f32, 6u * BQ>;         // per row: ALiBi slope; merged max, sum;
                                                // lanes' max, carry factors (see the end)
#endif

#ifdef DSG
#include "attention_dsg.wgsl"
#else
// Block row r's q over dims d0 .. d0 + n - 1 (zeros past them and the rows).
fn q_oct(b: u32, hk: u32, rb: u32, r: u32, d0: u32, n: u32) -> Oct {
    let rw = row_of(rb, r);
    let qo = p.offs.x + b * p.qs.x + hk * p.qs.y + rw.g * p.qs.z + rw.i * p.qs.w;
    var qa = vec4<f32>(0.0);
    var qb = vec4<f32>(0.0);
    for (var x = 0u; x < 4u; x++) {
        if (rw.ok && x < n) {
            qa[x] = f32(q_ld(qo + (d0 + x) * p.in1.x));
        }
        if (rw.ok && x + 4u < n) {
            qb[x] = f32(q_ld(qo + (d0 + x + 4u) * p.in1.x));
        }
    }
    return Oct(qa, qb);
}

@compute @workgroup_size({{WG}})
fn attn_dec(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    let bl = blk_of(wid, nwg);
    if (!bl.live) {
        return;
    }
    let sp = bl.sp;
    let rb = bl.rb;
    let hk = bl.hk;
    let b = bl.b;
    let D = d_k();
    let Dv = d_v();
    let nok = (D + 7u) / 8u;                // K octets of a key
    let no = max(nok, (Dv + 7u) / 8u);      // octet lanes
    let kln = min(WG / no, KLM);            // key lanes
    let bk = kln * KPT;                     // keys per tile
    // Sp stride per octet lane: a warp's partial-dot store (lanes ol, and
    // 32 / no key lanes kl + 0, 1, ...) then hits 32 distinct banks
    // (D 128: 16 octet lanes at 2-bank steps, 2 key lanes).
    let sps = (BQ * bk + 31u) / 32u * 32u + max(1u, 32u / no);
    let ol = li % no;
    let kl = li / no;
    let act = kl < kln;
    let d0 = ol * 8u;
    let nkd = select(0u, min(8u, D - d0), d0 < D);    // dims of this octet
    let nvd = select(0u, min(8u, Dv - d0), d0 < Dv);
    let kr = key_range(sp, rb);
    let kbeg = kr.x;
    let kend = kr.y;
    let kvec = flag(F_KVEC);
    let vvec = flag(F_VVEC);
    let kb = b * p.kv.x + hk * p.kv.y + d0 * p.in1.z;  // this octet of key 0
    let vb = b * p.kv.z + hk * p.kv.w + d0 * p.in2.x;

    // Per row, once: its ALiBi slope (exp2s in the score loop took
    // lavapipe ~1.6 s more to compile).
    if (li < BQ) {
        Rs[li] = row_slope(hk, row_of(rb, li));
    }
#ifndef ROLLED
    // GPUs: this thread's octet of every row's q in registers.  (CPU
    // drivers reread it each tile: lavapipe compiles barriers as
    // coroutines, and its compile time grows with the state that lives
    // across them.)
    var qr = array<Oct, BQ>();
    for (var r = 0u; r < BQ; r++) {
        qr[r] = q_oct(b, hk, rb, r, d0, nkd);
    }
#endif
    var m = array<f32, BQ>();
    var l = array<f32, BQ>();
    var acc = array<Oct, BQ>();
    for (var r = 0u; r < n_(BQ); r++) {
        m[r] = NEG;
        l[r] = 0.0;
        acc[r] = Oct(vec4<f32>(0.0), vec4<f32>(0.0));
    }
    var kx = array<Raw, KPT>();
    var vx = array<Raw, KPT>();
#ifndef ROLLED
    // GPUs: the first tile's K and V now, each later tile's K and V while
    // the tile before is scored and summed (in flight through the barriers)
    for (var i = 0u; i < KPT; i++) {
        let j = kbeg + kl + kln * i;
        let ok = act && j < kend;
        kx[i] = oct_raw(false, k_kind(), p.offs.y, kb + j * p.in1.y, p.in1.z, select(0u, nkd, ok), kvec);
        vx[i] = oct_raw(true, v_kind(), p.offs.z, vb + j * p.in1.w, p.in2.x, select(0u, nvd, ok), vvec);
    }
#endif

    for (var kt = kbeg; kt < kend; kt += bk) {
#ifdef ROLLED
        // CPU drivers: each tile's K here and V after the scores, so no
        // loaded value lives across a barrier (see qr above)
        for (var i = 0u; i < n_(KPT); i++) {
            let j = kt + kl + kln * i;
            let ok = act && j < kend;
            kx[i] = oct_raw(false, k_kind(), p.offs.y, kb + j * p.in1.y, p.in1.z, select(0u, nkd, ok), kvec);
        }
#endif
        if (act) {
            for (var i = 0u; i < n_(KPT); i++) {
                let ko = oct_f32(k_kind(), kx[i]);
                let c = kl + kln * i;
                for (var r = 0u; r < n_(BQ); r++) {
#ifdef ROLLED
                    let qv = q_oct(b, hk, rb, r, d0, nkd);
#else
                    let qv = qr[r];
#endif
                    Sp[ol * sps + r * bk + c] = dot(qv.a, ko.a) + dot(qv.b, ko.b);
                }
            }
        }
#ifndef ROLLED
        for (var i = 0u; i < KPT; i++) {
            let j = kt + bk + kl + kln * i;
            let ok = act && j < kend;
            kx[i] = oct_raw(false, k_kind(), p.offs.y, kb + j * p.in1.y, p.in1.z, select(0u, nkd, ok), kvec);
        }
#endif
        workgroupBarrier();
        for (var e = li; e < BQ * bk; e += WG) {
            let r = e / bk;
            let c = e - r * bk;
            var dt = 0.0;
            for (var o = 0u; o < nok; o++) {
                dt = dt + Sp[o * sps + e];
            }
            Ss[e] = score_of(dt, b, hk, row_of(rb, r), kt + c, kend, Rs[r]);
        }
        workgroupBarrier();
#ifdef ROLLED
        for (var i = 0u; i < n_(KPT); i++) {
            let j = kt + kl + kln * i;
            let ok = act && j < kend;
            vx[i] = oct_raw(true, v_kind(), p.offs.z, vb + j * p.in1.w, p.in2.x, select(0u, nvd, ok), vvec);
        }
#endif
        if (act) {
            for (var r = 0u; r < n_(BQ); r++) {
                var mt = m[r];
                for (var i = 0u; i < n_(KPT); i++) {
                    mt = max(mt, Ss[r * bk + kl + kln * i]);
                }
                let al = exp(m[r] - mt);
                l[r] = l[r] * al;
                acc[r] = Oct(acc[r].a * al, acc[r].b * al);
                m[r] = mt;
            }
            for (var i = 0u; i < n_(KPT); i++) {
                let vo = oct_f32(v_kind(), vx[i]);
                let c = kl + kln * i;
                for (var r = 0u; r < n_(BQ); r++) {
                    let sc = Ss[r * bk + c];
                    let pp = select(exp(sc - m[r]), 0.0, sc == NEG);
                    l[r] = l[r] + pp;
                    acc[r] = Oct(fma(vec4<f32>(pp), vo.a, acc[r].a), fma(vec4<f32>(pp), vo.b, acc[r].b));
                }
            }
        }
#ifndef ROLLED
        for (var i = 0u; i < KPT; i++) {
            let j = kt + bk + kl + kln * i;
            let ok = act && j < kend;
            vx[i] = oct_raw(true, v_kind(), p.offs.z, vb + j * p.in1.w, p.in2.x, select(0u, nvd, ok), vvec);
        }
#endif
    }

    // Merge the key lanes.  Their (max, sum) go through Ml; one thread per
    // row merges them (max M, sum), and with CARRY the run an earlier
    // piece of the keys left (max m2, sum l2: factors fa = e^(M - max),
    // fb = e^(m2 - max)), into Rs: [BQ..2BQ) max, [2BQ..3BQ) sum,
    // [3BQ..4BQ) M, [4BQ..5BQ) fa, [5BQ..6BQ) fb.  That thread writes the
    // row's (max, sum) after the acc rounds' barriers, so every carried
    // value is read before it is overwritten.
    if (act && ol == 0u) {
        for (var r = 0u; r < n_(BQ); r++) {
            Ml[(kl * BQ + r) * 2u] = m[r];
            Ml[(kl * BQ + r) * 2u + 1u] = l[r];
        }
    }
    workgroupBarrier();
    if (li < BQ) {
        var mx = NEG;
        for (var k = 0u; k < kln; k++) {
            mx = max(mx, Ml[(k * BQ + li) * 2u]);
        }
        var sum = 0.0;
        for (var k = 0u; k < kln; k++) {
            let mk = Ml[(k * BQ + li) * 2u];
            sum = sum + select(Ml[(k * BQ + li) * 2u + 1u] * exp(mk - mx), 0.0, mk == NEG);
        }
        Rs[3u * BQ + li] = mx;
        var fa = 1.0;
        var fb = 0.0;
        let rw = row_of(rb, li);
        if (rw.ok && flag(F_CARRY)) {
            let pb = run_of(b, hk, rw, sp);
            let m2 = o_ld(pb);
            let mn = max(mx, m2);
            fa = select(exp(mx - mn), 0.0, mx == NEG);
            fb = select(exp(m2 - mn), 0.0, m2 == NEG);
            sum = sum * fa + o_ld(pb + 1u) * fb;
            mx = mn;
        }
        Rs[BQ + li] = mx;
        Rs[2u * BQ + li] = sum;
        Rs[4u * BQ + li] = fa;
        Rs[5u * BQ + li] = fb;
    }
    workgroupBarrier();
    // acc: RPR rows a round, each key lane's scaled octets to Sp, then one
    // thread per (row, dim) sums the lanes into the run.
    let ow = no * 8u;
    // (n_: a runtime bound on CPU drivers; unrolled, the rounds' barriers
    // made lavapipe take seconds more to compile this kernel)
    for (var r0 = 0u; r0 < n_(BQ); r0 += RPR) {
        if (act) {
            for (var q = 0u; q < n_(RPR); q++) {
                let r = r0 + q;
                let f = select(exp(m[r] - Rs[3u * BQ + r]), 0.0, m[r] == NEG) * Rs[4u * BQ + r];
                let a = acc[r].a * f;
                let c = acc[r].b * f;
                let o = (q * kln + kl) * ow + d0;
                for (var x = 0u; x < 4u; x++) {
                    Sp[o + x] = a[x];
                    Sp[o + 4u + x] = c[x];
                }
            }
        }
        workgroupBarrier();
        for (var e = li; e < RPR * Dv; e += WG) {
            let q = e / Dv;
            let d = e - q * Dv;
            let r = r0 + q;
            let rw = row_of(rb, r);
            if (rw.ok) {
                var v = 0.0;
                for (var k = 0u; k < kln; k++) {
                    v = v + Sp[(q * kln + k) * ow + d];
                }
                let pb = run_of(b, hk, rw, sp);
                if (flag(F_CARRY)) {
                    v = v + o_ld(pb + 2u + d) * Rs[5u * BQ + r];
                }
                o_st(pb + 2u + d, v);
            }
        }
        workgroupBarrier();
    }
    if (li < BQ) {
        let rw = row_of(rb, li);
        if (rw.ok) {
            let pb = run_of(b, hk, rw, sp);
            o_st(pb, Rs[BQ + li]);
            o_st(pb + 1u, Rs[2u * BQ + li]);
        }
    }
}
#endif
