// Subgroup split-KV decode: entry attn_dsg (variants dsg and dsg_np),
// included by attention_decode.wgsl with DSG; host: src/ops/attention_run.c;
// its chunks' runs merge in attn_merge (attention.wgsl).
//
// Why a second decode kernel.  attn_dec (splitkv) on an H100, Llama-3-8B
// decode (32 q heads, 8 KV heads, D 128, f16 K/V, 4 rows a KV head, 4 keys
// a thread, 32-key tiles of 16 octet lanes x 8 key lanes):
//   KV 550, bound as 768 keys (buckets of 256; a bool mask hides 218):
//     12 chunks of 64 keys x 8 KV heads = 96 workgroups of 4 warps (132
//     SMs: 36 idle, one workgroup on each other), 2 tiles each, 3.1 MB
//     read (1 us at copy bandwidth): 37 us, then attn_reduce (128
//     workgroups of 256 threads, 12 runs a row, 7 barriers and ~3
//     dependent L2 round trips) 11 us (timestamps inflate both);
//   KV 8192: 128 chunks of 64 keys = 1024 workgroups (~2.6 waves at ~3 a
//     SM), 33.5 MB: 88 us (0.13 of copy); 32768: 1024 workgroups of 256
//     keys (8 tiles), 134 MB: 201 us.
// All three fit one model: a workgroup lives ~15 us + ~7.5 us a tile
// (550: 15 + 2 x 7.5 = 30 us in one wave; 8192: 2.6 waves x 30 = 78 us +
// the reduce; 32768: 2.6 x (15 + 8 x 7.5) = 195 + the reduce).  7.5 us is
// ~15k cycles for a tile whose memory is 16 KB (8 loads of 16 bytes a
// thread: one DRAM round trip, ~1 us) and whose arithmetic is ~1k
// instructions a thread, on 4 warps an SM that hide nothing: the time is
// a dependent chain, not bytes.  Per tile the chain holds two workgroup
// barriers with the score pass between them (one thread per (row, key)
// summing 16 octet partials from workgroup memory and reading the mask),
// the softmax reading the scores back, and every per-thread array (q,
// acc, m, l: 4 rows; K/V octets: 4 keys) indexed by loop counters: the
// README's hazard (NVIDIA kept such a GEMM tile in local memory, 15x
// slower), which turns each step into L1 round trips (the K/V octets'
// element path also indexes vector components by a counter).  GQA is not
// the problem: K/V are read once for the 4 heads of a KV head.
//
// This kernel: a workgroup owns one KV head's block of up to 4 rows (its
// grouped q heads x queries: each K/V byte is loaded once for the 4 heads
// sharing it) and one chunk of keys.  A key is read by LPK lanes of one
// subgroup (a "key group"), lane ol holding octet ol of D (8 elements:
// one 16-byte load of f16 K and one of V; LPK 16 for D 128, so a warp's
// load covers 2 whole 256-byte rows).  Per key, each lane forms its 8-dim
// partial dot for the 4 rows as two mat4x4 x vec4 products (rows in
// vector lanes), then log2(LPK) subgroupShuffleXor steps sum them (every
// lane ends with the same bits: each step adds the same two values);
// lane ol scores row ol % 4 and runs its online softmax in registers
// (the tile's KPT keys share one max and one rescale), and 4 shuffles
// hand each lane the 4 rows' p.  No barrier and no array in the key
// loop: state is two mat4x4 (acc: 8 dims x 4 rows), the row's m and l, q
// (two mat4x4, or read from workgroup memory: QSM), the tile's octets
// (named fields).  dsg
// loads the next tile before computing this one (pf(); estimated ~150
// registers at 4 keys), dsg_np after it (~110).  At the end the WG / LPK
// key groups merge through workgroup memory (3 barriers in all) and
// write the chunk's run (max, sum, acc[Dv]), or with one chunk the
// normalised output itself (no merge pass).  Per key and lane, D 128:
// 2 loads, 16 f16 conversions, 32 FMA (dot), 5 shuffles + adds, ~15 for
// the row's score and exp, 4 shuffles for the rows' p, 32 FMA (p.v).
// What bounds it (H200, bench/NOTES.md 2026-11-27 (4)): each workgroup's
// key loop is a dependent chain of ~1 µs a tile, so the time goes with
// how many workgroups share an SM (119 registers and ~10.6 KB: 4; with
// 172 and 18.8 KB, 2)
// and with the instructions of a tile (the row split and the reduce-
// scatter cut them ~25%: 32768 keys 74-86 -> 51-53 µs, 8192 33 -> 24).
// Grid (attention_run.c): chunks fill ~64K threads (~16 warps an SM on
// 132 SMs), at least 32 keys and at most 64 a row:
//   8B at KV 768: 24 chunks of one 32-key tile = 192 workgroups in one
//     wave; each is one DRAM round trip (q, K, V loads issued together),
//     ~4 x 170 instructions a lane and the merge: ~2-3 us, then attn_merge
//     (256 workgroups, one L2 round trip, one barrier) ~2-3 us;
//   8192: 64 chunks of 128 keys = 512 workgroups, ~4 a SM; issue ~65536
//     keys x 85 / 132 SMs / 4 schedulers ~ 10k cycles (5 us at 1.98 GHz)
//     under the 11 us of bytes at copy speed, if ~35 KB an SM stay in
//     flight (12 warps x 4 KB prefetched);
//   32768: 64 chunks of 512 keys.
//
// Lanes of a key group must share a subgroup (attention_sg.wgsl): a subgroup takes a slot from
// a workgroup counter (nothing assumed about how invocations map to
// subgroups), and the host takes this kernel only where LPK <= the
// measured subgroup size.

const LPK: u32 = {{LPK}}u;  // lanes per key: a power of 2 >= octets of max(D, Dv)
const NKG: u32 = WG / LPK;  // key groups
const KPT: u32 = {{KPT}}u;  // keys per key group per tile: 1, 2 or 4 (KPT2, KPT4)
const TILE: u32 = NKG * KPT;
const F_MROW: u32 = 4096u;  // one mask element serves every row of a block
const F_PF: u32 = 8192u;    // prefetch (dsg): PF's value on CPU drivers

// Whether the next tile is loaded before this one is computed: a constant
// on GPUs (dsg true, dsg_np false), on CPU drivers a uniform (flag F_PF),
// so one compiled kernel serves both variants there.
fn pf() -> bool {
    return {{PF}};
}

#include "attention_sg.wgsl"
#ifdef QSM
var<workgroup> Qs: array<vec4<f32>, 8u * LPK>;  // q [dim % 8][dim / 8] x rows (QSM: see q_cols)
#endif
var<workgroup> Ri: array<vec4<u32>, 5>;         // [field] x rows: ok, i, mask element of key 0, slope, q
var<workgroup> Mw: array<vec4<f32>, NKG>;      // key groups' max per row
var<workgroup> Lw: array<vec4<f32>, NKG>;      // and sum
var<workgroup> Aw: array<vec4<f32>, 4u * WG>;  // acc, half a lane's dims: [dim % 4][key group][dim / 8] x rows

// The block's rows (up to 4) and what scoring needs of each (Ri: valid,
// absolute query index, mask element of key 0, ALiBi slope, q's first
// element): thread r < 4 stages row r's before the first barrier, and
// score1 reads its row's from workgroup memory.  With QSM (CPU drivers,
// and GPUs unless WGML_ATTN_QREG=1) the threads also stage q in Qs, and
// each tile reads q from workgroup memory: q and the rows held in
// registers through the key loop took 48 of dsg's 172 on the H200 (with
// the 16 KB merge buffer, 2 workgroups of 128 an SM; bench/NOTES.md
// 2026-11-27 (4)).  On CPU drivers q per thread (four rows of q_row) took
// lavapipe seconds more to compile.  Without QSM each lane loads its q
// octets into registers after the barrier, with the first tile's K and V.

#ifdef QSM
// q of dims 8 ol + c .. 8 ol + c + 3 as the columns (rows in vector
// lanes) of a mat4x4.  Qs is [dim % 8][dim / 8] so that a key group's
// lanes read 16 consecutive vectors: as [dim] their 128-byte stride put
// all 16 in the same banks (16-way conflicts, 2x slower, H200 call 1).
fn q_cols(ol: u32, c: u32) -> mat4x4<f32> {
    return mat4x4<f32>(Qs[c * LPK + ol], Qs[(c + 1u) * LPK + ol], Qs[(c + 2u) * LPK + ol], Qs[(c + 3u) * LPK + ol]);
}
#endif

fn stage_rows(b: u32, hk: u32, rb: u32, li: u32) {
    if (li < 4u) {
        let rw = row_of(rb, li);
        Ri[0][li] = select(0u, 1u, li < BQ && rw.ok);
        Ri[1][li] = p.org.w + rw.i;
        Ri[2][li] = b * p.ms.x + hk * p.ms.y + rw.g * p.ms.z + rw.i * p.ms.w;
        Ri[3][li] = bitcast<u32>(row_slope(hk, rw));
        Ri[4][li] = p.offs.x + b * p.qs.x + hk * p.qs.y + rw.g * p.qs.z + rw.i * p.qs.w;
    }
#ifdef QSM
    for (var e = li; e < 32u * LPK; e += WG) {
        let r = e % 4u;
        let d = e / 4u;
        let rw = row_of(rb, r);
        var x = 0.0;
        if (r < BQ && rw.ok && d < d_k()) {
            x = f32(q_ld(p.offs.x + b * p.qs.x + hk * p.qs.y + rw.g * p.qs.z + rw.i * p.qs.w + d * p.in1.x));
        }
        Qs[(d % 8u) * LPK + d / 8u][r] = x;
    }
#endif
}

// Dims d0 .. d0 + 7 of the q row at qo (zeros past D; all zero unless ok).
fn q_row(qo: u32, ok: bool, d0: u32) -> Oct {
    var a = vec4<f32>(0.0);
    var c = vec4<f32>(0.0);
    for (var x = 0u; x < 8u; x++) {
        var v = 0.0;
        if (ok && d0 + x < d_k()) {
            v = f32(q_ld(qo + (d0 + x) * p.in1.x));
        }
        a = select(a, vec4<f32>(v), at4(x));
        c = select(c, vec4<f32>(v), at4(x - 4u));
    }
    return Oct(a, c);
}

// Lane x of a vector built in a loop: where the loop counter x lands
// (select, not v[x]: a component indexed by a counter may put the vector
// in local memory; the loops stay rolled for lavapipe's compiler, which
// took seconds for each unrolled copy of these loads).
fn at4(x: u32) -> vec4<bool> {
    return vec4<u32>(x) == vec4<u32>(0u, 1u, 2u, 3u);
}

// Element x of an f16 / f32 octet (0 from x = n): f16 bits, else f32 bits.
fn el_bits(v: bool, kind: u32, base: u32, e: u32, st: u32, n: u32, x: u32) -> u32 {
    if (x >= n) {
        return 0u;
    }
    let el = e + x * st;
    if (kind == KIND_F16) {
        let by = base + 2u * el;
        return (kv_word(v, by >> 2u) >> ((by & 2u) * 8u)) & 0xffffu;
    }
    return kv_word(v, (base >> 2u) + el);
}

// Bytes by .. by + 3 (no word past the one holding by + 3 is read).
fn bytes4(v: bool, by: u32) -> u32 {
    let w = kv_word(v, by >> 2u);
    let sh = (by & 3u) * 8u;
    if (sh == 0u) {
        return w;
    }
    return (w >> sh) | (kv_word(v, (by >> 2u) + 1u) << (32u - sh));
}

fn i8x4(w: u32) -> vec4<f32> {
    return vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(w << 24u, w << 16u, w << 8u, w)) >> vec4<u32>(24u));
}

// A q8_0 octet (elements e .. e + 7: D % 32 == 0 keeps it in one block of
// 34 bytes, f16 scale + 32 int8) as f32 bits: at most 6 word loads, not
// attn_dec's 24.
fn q8_oct(v: bool, base: u32, e: u32) -> Raw {
    let b = base + (e / 32u) * 34u;
    let s = wg_f16_to_f32(bytes4(v, b) & 0xffffu);
    let by = b + 2u + e % 32u;
    return Raw(bitcast<vec4<u32>>(s * i8x4(bytes4(v, by))), bitcast<vec4<u32>>(s * i8x4(bytes4(v, by + 4u))));
}

// Octet of K (v false) or V, as attn_dec's oct_raw loads it (n = 0: no
// load), but no vector component is indexed by a loop counter.
fn oct_ld(v: bool, kind: u32, base: u32, e: u32, st: u32, n: u32, vec: bool) -> Raw {
    if (n == 0u) {
        return Raw(vec4<u32>(0u), vec4<u32>(0u));
    }
    if (vec) {
        if (kind == KIND_F16) {
            return Raw(kv_vec(v, (base + 2u * e) >> 4u), vec4<u32>(0u));
        }
        let i = (base + 4u * e) >> 4u;
        return Raw(kv_vec(v, i), kv_vec(v, i + 1u));
    }
    if (kind == KIND_Q8) {
        return q8_oct(v, base, e);
    }
    var r = Raw(vec4<u32>(0u), vec4<u32>(0u));
    for (var x = 0u; x < 8u; x++) {
        let w = el_bits(v, kind, base, e, st, n, x);
        if (kind == KIND_F16) {  // f16 pairs in .a, as a 16-byte load leaves them
            r.a = r.a | select(vec4<u32>(0u), vec4<u32>(w << ((x & 1u) * 16u)), at4(x / 2u));
        } else {
            r.a = select(r.a, vec4<u32>(w), at4(x));
            r.b = select(r.b, vec4<u32>(w), at4(x - 4u));
        }
    }
    return r;
}

// This lane's octet: first K and V elements of key 0, dims of each; the
// mask element of key 0 of row 0.
struct Lane {
    kb: u32,
    vb: u32,
    nkd: u32,
    nvd: u32,
    mb: u32,
}
// A key's octets and, with F_MROW, its mask addend for every row (loaded
// with the octets: otherwise an L2 round trip of its own in each tile).
struct KV {
    k: Raw,
    v: Raw,
    mv: f32,
}
// A tile's keys for one key group (KPT of them; the rest stay zero and
// unused): named fields, not an array.
struct Tile {
    c0: KV,
    c1: KV,
    c2: KV,
    c3: KV,
}

fn ld_kv(ln: Lane, j: u32, kend: u32) -> KV {
    let ok = j < kend;
    var mv = 0.0;
    if (flag(F_MASK) && flag(F_MROW)) {
        mv = mask_val(ln.mb + j * p.in2.y, ok);
    }
#ifdef ROLLED
    // CPU drivers: K and V through one copy of the loads (lavapipe took
    // ~0.7 s of CPU to compile each)
    var r = KV(Raw(vec4<u32>(0u), vec4<u32>(0u)), Raw(vec4<u32>(0u), vec4<u32>(0u)), mv);
    for (var w = 0u; w < 2u; w++) {
        let v = w == 1u;
        let o = oct_ld(v, select(k_kind(), v_kind(), v), select(p.offs.y, p.offs.z, v),
                       select(ln.kb + j * p.in1.y, ln.vb + j * p.in1.w, v), select(p.in1.z, p.in2.x, v),
                       select(0u, select(ln.nkd, ln.nvd, v), ok), select({{KVEC}}, {{VVEC}}, v));
        if (v) {
            r.v = o;
        } else {
            r.k = o;
        }
    }
    return r;
#else
    return KV(oct_ld(false, k_kind(), p.offs.y, ln.kb + j * p.in1.y, p.in1.z, select(0u, ln.nkd, ok), {{KVEC}}),
              oct_ld(true, v_kind(), p.offs.z, ln.vb + j * p.in1.w, p.in2.x, select(0u, ln.nvd, ok), {{VVEC}}), mv);
#endif
}

// Keys j, j + NKG, ... of a tile.
fn ld_tile(ln: Lane, j: u32, kend: u32) -> Tile {
    var t = Tile();
    t.c0 = ld_kv(ln, j, kend);
#if KPT2
    t.c1 = ld_kv(ln, j + NKG, kend);
#endif
#if KPT4
    t.c2 = ld_kv(ln, j + 2u * NKG, kend);
    t.c3 = ld_kv(ln, j + 3u * NKG, kend);
#endif
    return t;
}

// q.k for the 4 rows, this lane's 8 dims.
fn key_part(qa: mat4x4<f32>, qb: mat4x4<f32>, kr: Raw) -> vec4<f32> {
    let ko = oct_f32(k_kind(), kr);
    return qa * ko.a + qb * ko.b;
}

// The tile's dots of this lane's row r (lane % 4), summed over the key
// group's LPK lanes: a reduce-scatter in each quad of lanes (xor 2 keeps
// 2 of the 4 rows' partials, xor 1 one: lane r of a quad ends with row
// r's sum over the quad), then log2(LPK / 4) xor steps across the quads,
// written out and all keys in each step.  Summing the 4 rows' vec4 in
// every lane took 4 shuffles and adds a step (16 + 16 a key at LPK 16;
// now 5 + 5).  A loop over the steps stayed a loop in NVIDIA's code (H200
// SASS, bench/sass.py).  Lanes of one row add the same two values at each
// step, so they hold the same bits.
struct Dots {
    x0: f32,
    x1: f32,
    x2: f32,
    x3: f32,
}

// Rows 0-1 (lo) or 2-3 (hi) of v summed with the partner's (lane ^ 2).
fn half2(v: vec4<f32>, hi: bool) -> vec2<f32> {
    return select(v.xy, v.zw, hi) + subgroupShuffleXor(select(v.zw, v.xy, hi), 2u);
}

// Row 0 (even lane) or 1 (odd) of v summed with the partner's (lane ^ 1).
fn half1(v: vec2<f32>, odd: bool) -> f32 {
    return select(v.x, v.y, odd) + subgroupShuffleXor(select(v.y, v.x, odd), 1u);
}

fn quad_step(t: ptr<function, Dots>, o: u32) {
    if (LPK > o) {
        (*t).x0 = (*t).x0 + subgroupShuffleXor((*t).x0, o);
#if KPT2
        (*t).x1 = (*t).x1 + subgroupShuffleXor((*t).x1, o);
#endif
#if KPT4
        (*t).x2 = (*t).x2 + subgroupShuffleXor((*t).x2, o);
        (*t).x3 = (*t).x3 + subgroupShuffleXor((*t).x3, o);
#endif
    }
}

fn tile_dots(qa: mat4x4<f32>, qb: mat4x4<f32>, t: Tile, r: u32) -> Dots {
    let hi = (r & 2u) != 0u;
    let odd = (r & 1u) != 0u;
    var d = Dots();
    d.x0 = half1(half2(key_part(qa, qb, t.c0.k), hi), odd);
#if KPT2
    d.x1 = half1(half2(key_part(qa, qb, t.c1.k), hi), odd);
#endif
#if KPT4
    d.x2 = half1(half2(key_part(qa, qb, t.c2.k), hi), odd);
    d.x3 = half1(half2(key_part(qa, qb, t.c3.k), hi), odd);
#endif
    quad_step(&d, 16u);
    quad_step(&d, 8u);
    quad_step(&d, 4u);
    return d;
}

// Mask entry e as an addend: 0 (bool, kept), the additive value, or NEG
// (masked); k false: NEG without reading.
fn mask_val(e: u32, k: bool) -> f32 {
    if (!k) {
        return NEG;
    }
    if (flag(F_MASK8)) {
        return select(NEG, 0.0, mask_u8(e) != 0u);
    }
    let mv = mask_f(e);
    return select(mv, NEG, is_ninf(mv));
}

// score_of for row r of the block (this lane's: lane % 4), dispatch-local
// key j (mv1: its KV.mv).  One row a lane, not the 4 rows as a vec4 in
// each of the key group's lanes: the score and softmax were ~100 of a
// lane's ~300 instructions a key, repeated by all LPK lanes of the key.
fn score1(qk: f32, r: u32, j: u32, kend: u32, mv1: f32) -> f32 {
    var s = qk * p.fp.x;
    if (flag(F_SOFTCAP)) {
        s = p.fp.y * tanh_(s / p.fp.y);
    }
    let jq = p.offs2.z + j + p.ip.x;  // visible: j0 + j + Sq <= i + Skv (causal)
    let ik = Ri[1][r] + p.ip.y;        //          j0 + j + Sq + W > i + Skv (window)
    var keep = Ri[0][r] != 0u && j < kend;
    if (flag(F_CAUSAL)) {
        keep = keep && jq <= ik;
    }
    if (flag(F_WINDOW)) {
        keep = keep && jq + p.ip.z > ik;
    }
    if (flag(F_MASK)) {
        var mv = mv1;  // F_MROW: row 0's element serves all
        if (!flag(F_MROW)) {
            mv = mask_val(Ri[2][r] + j * p.in2.y, keep);
        }
        keep = keep && mv != NEG;
        s = s + bitcast<f32>(Ri[3][r]) * mv;
    }
    return select(NEG, s, keep);
}

// x of lanes base .. base + 3 (rows 0..3 of a key group) in vector lanes.
fn gather4(x: f32, base: u32) -> vec4<f32> {
    return vec4<f32>(subgroupShuffle(x, base), subgroupShuffle(x, base + 1u), subgroupShuffle(x, base + 2u),
                     subgroupShuffle(x, base + 3u));
}

// A key group's online softmax state: max and sum of this lane's row
// (lane % 4), acc of this lane's 8 dims for all 4 rows (columns: a dims
// 0..3, b 4..7; vector lanes: rows).
struct St {
    m: f32,
    l: f32,
    a: mat4x4<f32>,
    b: mat4x4<f32>,
}

// p (of this lane's row) of a score under the max mt.
fn pexp(s: f32, mt: f32) -> f32 {
    return select(exp(s - mt), 0.0, s == NEG);
}

// acc += p * v, p of the 4 rows.
fn add_pv(st: ptr<function, St>, pp: vec4<f32>, vr: Raw) {
    let vo = oct_f32(v_kind(), vr);
    let a = (*st).a;
    let c = (*st).b;
    (*st).a = mat4x4<f32>(fma(pp, vec4<f32>(vo.a.x), a[0]), fma(pp, vec4<f32>(vo.a.y), a[1]),
                          fma(pp, vec4<f32>(vo.a.z), a[2]), fma(pp, vec4<f32>(vo.a.w), a[3]));
    (*st).b = mat4x4<f32>(fma(pp, vec4<f32>(vo.b.x), c[0]), fma(pp, vec4<f32>(vo.b.y), c[1]),
                          fma(pp, vec4<f32>(vo.b.z), c[2]), fma(pp, vec4<f32>(vo.b.w), c[3]));
}

// One tile of a key group: each lane scores its row r of the tile's keys,
// takes one max and rescale for them and their p; lanes base .. base + 3
// hand the 4 rows' rescale and p to every lane for p * v.  acc is
// rescaled only where a row's max grew (the factor is then not 1: once a
// long run's max settles, most tiles skip the 32 multiplies).  j: the
// group's first key.
fn tile_step(st: ptr<function, St>, qa: mat4x4<f32>, qb: mat4x4<f32>, t: Tile, j: u32, kend: u32, r: u32,
             base: u32) {
    let d = tile_dots(qa, qb, t, r);
    let s0 = score1(d.x0, r, j, kend, t.c0.mv);
    var mt = max((*st).m, s0);
#if KPT2
    let s1 = score1(d.x1, r, j + NKG, kend, t.c1.mv);
    mt = max(mt, s1);
#endif
#if KPT4
    let s2 = score1(d.x2, r, j + 2u * NKG, kend, t.c2.mv);
    let s3 = score1(d.x3, r, j + 3u * NKG, kend, t.c3.mv);
    mt = max(mt, max(s2, s3));
#endif
    let al = exp((*st).m - mt);  // NEG - NEG: 1 on an empty acc
    let p0 = pexp(s0, mt);
    var ps = p0;
#if KPT2
    let p1 = pexp(s1, mt);
    ps = ps + p1;
#endif
#if KPT4
    let p2 = pexp(s2, mt);
    let p3 = pexp(s3, mt);
    ps = ps + p2 + p3;
#endif
    (*st).l = (*st).l * al + ps;
    (*st).m = mt;
    let alv = gather4(al, base);
    if (any(alv != vec4<f32>(1.0))) {
        let a = (*st).a;
        let c = (*st).b;
        (*st).a = mat4x4<f32>(a[0] * alv, a[1] * alv, a[2] * alv, a[3] * alv);
        (*st).b = mat4x4<f32>(c[0] * alv, c[1] * alv, c[2] * alv, c[3] * alv);
    }
    add_pv(st, gather4(p0, base), t.c0.v);
#if KPT2
    add_pv(st, gather4(p1, base), t.c1.v);
#endif
#if KPT4
    add_pv(st, gather4(p2, base), t.c2.v);
    add_pv(st, gather4(p3, base), t.c3.v);
#endif
}

// Row r's run merged over the key groups and, with CARRY, the run an
// earlier piece of the keys left: (max M, sum, the carried acc's factor
// e^(m2 - M), the output's factor: out_scale whole, else 1).  The groups'
// acc weigh e^(m_g - M).
fn row_merge(b: u32, hk: u32, rw: Row, sp: u32, r: u32) -> vec4<f32> {
    var m2 = NEG;  // the carried run's max and sum
    var l2 = 0.0;
    if (flag(F_SPLIT) && flag(F_CARRY)) {
        let pb = run_of(b, hk, rw, sp);
        m2 = o_ld(pb);
        l2 = o_ld(pb + 1u);
    }
    var mx = m2;
    for (var g = 0u; g < NKG; g++) {
        mx = max(mx, Mw[g][r]);
    }
    let fb = select(exp(m2 - mx), 0.0, m2 == NEG);
    var sum = l2 * fb;
    for (var g = 0u; g < NKG; g++) {
        sum = sum + select(Lw[g][r] * exp(Mw[g][r] - mx), 0.0, Mw[g][r] == NEG);
    }
    var f = 1.0;
    if (!flag(F_SPLIT)) {
        f = out_scale(hk, rw.g, mx, sum);
    }
    return vec4<f32>(mx, sum, fb, f);
}

// Half a lane's acc (4 dims x rows) into Aw at ai, ai + WG, ...
fn aw_put(ai: u32, m: mat4x4<f32>) {
    Aw[ai] = m[0];
    Aw[WG + ai] = m[1];
    Aw[2u * WG + ai] = m[2];
    Aw[3u * WG + ai] = m[3];
}

@compute @workgroup_size(WG)
fn attn_dsg(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32, @builtin(subgroup_invocation_id) lane: u32,
            @builtin(subgroup_size) sgs: u32) {
    let bl = blk_of(wid, nwg);
    if (!bl.live) {
        return;
    }
    let sp = bl.sp;
    let rb = bl.rb;
    let hk = bl.hk;
    let b = bl.b;
    // (Nothing computed before a barrier lives across it: lavapipe
    // compiles barriers as coroutines, and its compile time grows with the
    // values live across them.)
    stage_rows(b, hk, rb, li);
    let kg = sg_group(li, lane, sgs, LPK);  // its barrier also publishes stage_rows' writes
    let D = d_k();
    let Dv = d_v();
    let ol = lane % LPK;
    let d0 = ol * 8u;
    let r4 = lane % 4u;      // this lane's row in the softmax (score1)
    let b4 = lane - r4;      // the lane holding row 0 of its key group
#ifndef QSM
    // q as columns of dims over rows: the transposes of rows over dims
    let qo = Ri[4];
    let ok = Ri[0] != vec4<u32>(0u);
    let q0 = q_row(qo.x, ok.x, d0);
    let q1 = q_row(qo.y, ok.y, d0);
    let q2 = q_row(qo.z, ok.z, d0);
    let q3 = q_row(qo.w, ok.w, d0);
    let qa = transpose(mat4x4<f32>(q0.a, q1.a, q2.a, q3.a));
    let qb = transpose(mat4x4<f32>(q0.b, q1.b, q2.b, q3.b));
#endif
    let kr = key_range(sp, rb);
    let kbeg = kr.x;
    let kend = kr.y;
    let ln = Lane(b * p.kv.x + hk * p.kv.y + d0 * p.in1.z, b * p.kv.z + hk * p.kv.w + d0 * p.in2.x,
                  select(0u, min(8u, D - d0), d0 < D), select(0u, min(8u, Dv - d0), d0 < Dv), Ri[2].x);
    var st = St(NEG, 0.0, mat4x4<f32>(), mat4x4<f32>());
    // One load site and one compute site (lavapipe compiles each copy):
    // with pf() tile kt is loaded and the one before computed (an
    // iteration past the keys), else tile kt is loaded and computed.
    let lag = select(0u, TILE, pf());
    var cur = Tile();
    for (var kt = kbeg; kt < kend + lag; kt += TILE) {
        let nxt = ld_tile(ln, kt + kg, kend);
        if (!pf()) {
            cur = nxt;
        }
        if (kt >= kbeg + lag) {
#ifdef QSM
            // q read here, each tile (QSM says why)
            tile_step(&st, q_cols(ol, 0u), q_cols(ol, 4u), cur, kt - lag + kg, kend, r4, b4);
#else
            tile_step(&st, qa, qb, cur, kt - lag + kg, kend, r4, b4);
#endif
        }
        if (pf()) {
            cur = nxt;
        }
    }

    // Merge the key groups: their (max, sum) to Mw / Lw and acc to Aw, in
    // two halves (dims 0-3 of each lane's octet, then 4-7: Aw is 8 KB at
    // WG 128, not 16, which let fewer workgroups share an SM); a warp's
    // stores are consecutive vec4s.  Thread li serves row li % 4
    // (row_merge, once a thread) and the dims d = 8 ol + x for n = li / 4,
    // li / 4 + WG / 4, ... of each half (ol = n % LPK, x = 4 h + n / LPK:
    // a warp's loads of Aw are 32 consecutive words).  The carried values
    // are read before the last barrier and the row's new (max, sum)
    // written after it.
    let m4 = gather4(st.m, b4);
    let l4 = gather4(st.l, b4);
    if (ol == 0u) {
        Mw[kg] = m4;
        Lw[kg] = l4;
    }
    let ai = kg * LPK + ol;
    let r = li % 4u;
    let rw = row_of(rb, r);
    let live = r < BQ && rw.ok;
    var run = vec4<f32>(0.0);
    for (var h = 0u; h < 2u; h++) {
        if (h == 0u) {
            aw_put(ai, st.a);
        } else {
            aw_put(ai, st.b);
        }
        workgroupBarrier();
        if (live) {
            if (h == 0u) {
                run = row_merge(b, hk, rw, sp, r);
            }
            for (var n = li / 4u; n < 4u * LPK; n += WG / 4u) {
                let d = 8u * (n % LPK) + 4u * h + n / LPK;
                if (d >= Dv) {
                    continue;
                }
                let a0 = (n / LPK) * WG + n % LPK;
                var v = 0.0;
                for (var g = 0u; g < NKG; g++) {
                    let mg = Mw[g][r];
                    v = v + select(exp(mg - run.x), 0.0, mg == NEG) * Aw[a0 + g * LPK][r];
                }
                if (flag(F_SPLIT)) {
                    let pb = run_of(b, hk, rw, sp) + 2u + d;
                    if (flag(F_CARRY)) {
                        v = v + o_ld(pb) * run.z;
                    }
                    o_st(pb, v);
                } else {
                    o_st(p.offs2.y + b * p.os.x + hk * p.os.y + rw.g * p.os.z + rw.i * p.os.w + d * p.in2.z,
                         v * run.w);
                }
            }
        }
        workgroupBarrier();
    }
    if (live && li < 4u && flag(F_SPLIT)) {
        let pb = run_of(b, hk, rw, sp);
        o_st(pb, run.x);
        o_st(pb + 1u, run.y);
    }
}
