// The wide path of the mat-vec kernel (matvec.wgsl includes it under
// WIDE; it uses that file's Params, bindings, constants and helpers).
// ---- The wide path (WIDE): a thread's step is a CH-element "chunk" of a
// row, read in 16-byte loads.  An H100 ran the unit path at ~0.3 of the
// copy bandwidth per 32-bit load instruction per weight byte (q4_K took ~8
// loads a unit of 4.5 bytes: 0.20); here a q4_K chunk (64 elements, 36
// bytes) is one header load (the block's 16 bytes, an L1 broadcast to the
// block's 4 threads) and two 16-byte code loads, and x's 16 vec4s are
// loaded once for every weight row of the workgroup.  Neighbouring threads
// take neighbouring chunks, so a warp's code loads cover a contiguous run.
const CH: u32 = {{CH}}u;     // elements per chunk: 64 (K-quants) or 32
const XN: u32 = CH / 4u;     // x vec4s per chunk and activation row
const XQ: u32 = XN / 4u;     // x vec4s per quarter of a chunk (one scale)
const WQK: u32 = {{WQK}}u;   // elements per block (plain dtypes: 32, one chunk)
const WBB: u32 = {{WBB}}u;   // bytes per block
const CPB: u32 = WQK / CH;   // chunks per block

struct W8 {
    lo: vec4<u32>,
    hi: vec4<u32>,
}

// ((hi:lo) >> sh) per word pair, sh in [0, 32) (no shift by 32).
fn funnel(lo: vec4<u32>, hi: vec4<u32>, sh: u32) -> vec4<u32> {
    return (lo >> vec4<u32>(sh)) | ((hi << vec4<u32>(1u)) << vec4<u32>(31u - sh));
}

// The 32 bytes from byte s (< 16) of the 48 in a, b, c: a word shift (two
// selects of whole vectors) and a funnel shift.  Blocks of 18, 34 and 210
// bytes start anywhere (even) in a 16-byte piece; the loads stay aligned.
fn barrel(a: vec4<u32>, b: vec4<u32>, c: vec4<u32>, s: u32) -> W8 {
    let o1 = (s & 4u) != 0u;
    let o2 = (s & 8u) != 0u;
    let a1 = select(a, vec4<u32>(a.yzw, b.x), o1);
    let b1 = select(b, vec4<u32>(b.yzw, c.x), o1);
    let c1 = select(c, vec4<u32>(c.yzw, 0u), o1);
    let t0 = select(a1, vec4<u32>(a1.zw, b1.xy), o2);
    let t1 = select(b1, vec4<u32>(b1.zw, c1.xy), o2);
    let t8 = select(c1.x, c1.z, o2);
    let sh = (s & 3u) * 8u;
    return W8(funnel(t0, vec4<u32>(t0.yzw, t1.x), sh), funnel(t1, vec4<u32>(t1.yzw, t8), sh));
}

// 32 and 16 bytes at byte a: with ALIGN16 (a % 16 == 0: every block, row
// and window start on 16 bytes) the loads themselves; else the 16-byte
// pieces holding them (2 or 3, never one past the last byte read).
fn ld8(a: u32) -> W8 {
    let i = a >> 4u;
#ifdef ALIGN16
    return W8(piece(i), piece(i + 1u));
#else
    return barrel(piece(i), piece(i + 1u), piece((a + 31u) >> 4u), a & 15u);
#endif
}

fn ld4(a: u32) -> vec4<u32> {
    let i = a >> 4u;
#ifdef ALIGN16
    return piece(i);
#else
    let v = piece((a + 15u) >> 4u);
    return barrel(piece(i), v, v, a & 15u).lo;
#endif
}

// The f16 at even byte a: one load.
fn f16w(a: u32) -> f32 {
    return unpack2x16float(word(a >> 2u))[(a >> 1u) & 1u];
}

// Four bytes of w as f32 (the 2^23 trick).
fn b4f(w: u32) -> vec4<f32> {
    return u2f4(fld4(w, 0u, 255u));
}

// Signed byte j of w.
fn i8at(w: u32, j: u32) -> f32 {
    return f32(bitcast<i32>(w << (24u - 8u * j)) >> 24u);
}

// A decoded chunk: weight i of x vec4 v's 4 = d[v / XQ] * q[v][i] + m[v / XQ]
// (one scale per quarter of the chunk).
struct Chunk {
    q: array<vec4<f32>, XN>,
    d: vec4<f32>,
    m: vec4<f32>,
}

// First elements (within the block) of chunk j's two runs of CH / 2: x
// vec4s 0 .. XN/2 - 1 are the first run's, the rest the second's.
fn chunk_e(j: u32) -> vec2<u32> {
    var e = vec2<u32>(0u, CH / 2u);
#if QT_Q4_K
    e = vec2<u32>(64u * j, 64u * j + 32u);          // groups 2j and 2j + 1
#endif
#if QT_Q6_K
    // half h = j / 2 of the block: ql bytes 32 (j % 2) .. +31 of its 64
    // hold elements 128 h + 32 (j % 2) + l (low nibbles) and + 64 (high)
    let e0 = 128u * (j >> 1u) + 32u * (j & 1u);
    e = vec2<u32>(e0, e0 + 64u);
#endif
    return e;
}

#ifdef CODES
// The integer codes of chunk j of the block at byte b (q4_0, q8_0, q4_K,
// q6_K): word i holds the codes of the chunk's elements that x vec4 i
// meets (Chunk.q's order), a byte each, unsigned but for q8_0's signed
// ones; weight = d[v / XQ] * code + m[v / XQ].  The float path converts
// them (b4f, i8x4); the integer path (Q8X) takes them to dot4I8Packed.
struct Codes {
    w: array<u32, XN>,
    d: vec4<f32>,
    m: vec4<f32>,
}

fn codes(b: u32, j: u32) -> Codes {
    var r = Codes(array<u32, XN>(), vec4<f32>(1.0), vec4<f32>(0.0));
#if QT_Q4_0
    // byte j of qs: elements j (low nibble) and j + 16
    let c = ld4(b + 2u);
    r.d = vec4<f32>(f16w(b));
    r.m = -8.0 * r.d;
    for (var i = 0u; i < 4u; i++) {
        r.w[i] = c[i] & 0x0f0f0f0fu;
        r.w[i + 4u] = (c[i] >> 4u) & 0x0f0f0f0fu;
    }
#endif
#if QT_Q8_0
    let c = ld8(b + 2u);
    r.d = vec4<f32>(f16w(b));
    for (var i = 0u; i < 4u; i++) {
        r.w[i] = c.lo[i];
        r.w[i + 4u] = c.hi[i];
    }
#endif
#if QT_Q4_K
    // header: d, dmin; 12 bytes s0..s11 of 6-bit scales and mins (words y,
    // z, w).  Group g < 4: scale s[g] & 63, min s[g + 4] & 63; g >= 4: the
    // low 4 bits from s[g + 4] (scale: low nibble, min: high) and the high
    // 2 from the top bits of s[g - 4] (scale) and s[g] (min).
    let h = ld4(b);
    let dm = unpack2x16float(h.x);
    let first = j < 2u;
    let scw = select((h.w & 0x0f0f0f0fu) | ((h.y >> 2u) & 0x30303030u), h.y & 0x3f3f3f3fu, first);
    let mnw = select(((h.w >> 4u) & 0x0f0f0f0fu) | ((h.z >> 2u) & 0x30303030u), h.z & 0x3f3f3f3fu, first);
    let sh = (j & 1u) * 16u;          // groups 2j, 2j + 1: bytes 2 (j % 2), +1 of the word
    let d0 = dm.x * f32((scw >> sh) & 63u);
    let d1 = dm.x * f32((scw >> (sh + 8u)) & 63u);
    let m0 = -dm.y * f32((mnw >> sh) & 63u);
    let m1 = -dm.y * f32((mnw >> (sh + 8u)) & 63u);
    r.d = vec4<f32>(d0, d0, d1, d1);
    r.m = vec4<f32>(m0, m0, m1, m1);
    // qs: chunk j's 32 bytes, byte l holding elements 64j + l and + 32
    let c = ld8(b + 16u + 32u * j);
    for (var i = 0u; i < 4u; i++) {
        r.w[i] = c.lo[i] & 0x0f0f0f0fu;
        r.w[i + 4u] = c.hi[i] & 0x0f0f0f0fu;
        r.w[i + 8u] = (c.lo[i] >> 4u) & 0x0f0f0f0fu;
        r.w[i + 12u] = (c.hi[i] >> 4u) & 0x0f0f0f0fu;
    }
#endif
#if QT_Q6_K
    // ql: 32 bytes at 64 h + 32 q (low nibbles: run 1, high: run 2); qh:
    // the half's 32 bytes at 128 + 32 h, bits 2q (run 1) and 2q + 4 (run 2);
    // scales (i8): bytes 8h + 2q, +1 (run 1's quarters) and +4, +5 (run 2's)
    let hh = j >> 1u;
    let qq = j & 1u;
    let l = ld8(b + 64u * hh + 32u * qq);
    let hb = ld8(b + 128u + 32u * hh);
    let sc = ld4(b + 192u);
    let d = f16w(b + 208u);
    let sa = select(sc.x, sc.z, hh != 0u);
    let sb = select(sc.y, sc.w, hh != 0u);
    r.d = d * vec4<f32>(i8at(sa, 2u * qq), i8at(sa, 2u * qq + 1u), i8at(sb, 2u * qq), i8at(sb, 2u * qq + 1u));
    r.m = -32.0 * r.d;
    let s1 = 2u * qq;
    let s2 = s1 + 4u;
    for (var i = 0u; i < 4u; i++) {
        r.w[i] = (l.lo[i] & 0x0f0f0f0fu) | (((hb.lo[i] >> s1) & 0x03030303u) << 4u);
        r.w[i + 4u] = (l.hi[i] & 0x0f0f0f0fu) | (((hb.hi[i] >> s1) & 0x03030303u) << 4u);
        r.w[i + 8u] = ((l.lo[i] >> 4u) & 0x0f0f0f0fu) | (((hb.lo[i] >> s2) & 0x03030303u) << 4u);
        r.w[i + 12u] = ((l.hi[i] >> 4u) & 0x0f0f0f0fu) | (((hb.hi[i] >> s2) & 0x03030303u) << 4u);
    }
#endif
    return r;
}
#endif

// Chunk j of the block at byte b.
fn chunk(b: u32, j: u32) -> Chunk {
    var r = Chunk(array<vec4<f32>, XN>(), vec4<f32>(1.0), vec4<f32>(0.0));
#if QT_F32
    let w0 = ld8(b);
    let w1 = ld8(b + 32u);
    let w2 = ld8(b + 64u);
    let w3 = ld8(b + 96u);
    r.q = array<vec4<f32>, XN>(bitcast<vec4<f32>>(w0.lo), bitcast<vec4<f32>>(w0.hi), bitcast<vec4<f32>>(w1.lo),
                               bitcast<vec4<f32>>(w1.hi), bitcast<vec4<f32>>(w2.lo), bitcast<vec4<f32>>(w2.hi),
                               bitcast<vec4<f32>>(w3.lo), bitcast<vec4<f32>>(w3.hi));
#endif
#if QT_F16
    let w0 = ld8(b);
    let w1 = ld8(b + 32u);
    let v = array<vec4<u32>, 4>(w0.lo, w0.hi, w1.lo, w1.hi);
    for (var i = 0u; i < 4u; i++) {
        r.q[2u * i] = vec4<f32>(unpack2x16float(v[i].x), unpack2x16float(v[i].y));
        r.q[2u * i + 1u] = vec4<f32>(unpack2x16float(v[i].z), unpack2x16float(v[i].w));
    }
#endif
#if QT_BF16
    let w0 = ld8(b);
    let w1 = ld8(b + 32u);
    let v = array<vec4<u32>, 4>(w0.lo, w0.hi, w1.lo, w1.hi);
    for (var i = 0u; i < 4u; i++) {
        let lo = bitcast<vec4<f32>>(v[i] << vec4<u32>(16u));
        let hi = bitcast<vec4<f32>>(v[i] & vec4<u32>(0xffff0000u));
        r.q[2u * i] = vec4<f32>(lo.x, hi.x, lo.y, hi.y);
        r.q[2u * i + 1u] = vec4<f32>(lo.z, hi.z, lo.w, hi.w);
    }
#endif
#ifdef CODES
    let cw = codes(b, j);
    r.d = cw.d;
    r.m = cw.m;
    for (var i = 0u; i < XN; i++) {
#if QT_Q8_0
        r.q[i] = i8x4(cw.w[i]);
#else
        r.q[i] = b4f(cw.w[i]);
#endif
    }
#endif
    return r;
}

#ifndef Q8X
// Chunk c of every weight row of the workgroup: x's CH elements (and
// their quarter sums, for the m terms) are loaded once for all RPW rows.
fn accw(acc: ptr<function, array<f32, NV>>, rb: array<u32, RPW>, xr: array<u32, M>, c: u32) {
    let blk = c / CPB;
    let j = c - blk * CPB;
    let e = chunk_e(j) + vec2<u32>(blk * WQK);
    var xw = array<vec4<f32>, M * XN>();
    var sq = array<vec4<f32>, M>();
    for (var r = 0u; r < M; r++) {
        for (var i = 0u; i < XN / 2u; i++) {
            xw[r * XN + i] = xv4(xr[r], e.x + 4u * i);
            xw[r * XN + XN / 2u + i] = xv4(xr[r], e.y + 4u * i);
        }
        var s = vec4<f32>(0.0);
        for (var i = 0u; i < XN; i++) {
            s[i / XQ] += dot(xw[r * XN + i], vec4<f32>(1.0));
        }
        sq[r] = s;
    }
    for (var rr = 0u; rr < RPW; rr++) {
        let ch = chunk(rb[rr] + blk * WBB, j);
        for (var r = 0u; r < M; r++) {
            var t = vec4<f32>(0.0);
            for (var i = 0u; i < XN; i++) {
                t[i / XQ] += dot(ch.q[i], xw[r * XN + i]);
            }
            (*acc)[rr * M + r] += dot(ch.d, t) + dot(ch.m, sq[r]);
        }
    }
}
#endif

#ifdef Q8X
// ---- The integer path (Q8X): x quantised to 8 bits a 32-element block
// (matvec_xq.wgsl: code words, then a (d, sum) f32 pair a block), each
// code word met by a weight code word in one dot4I8Packed (4 multiply-adds
// an instruction, against ~5 instructions an element to decode and scale
// floats on the wide path: an H100 ran q4_K there at ~20 issued
// instructions an element, 0.26 of the copy bandwidth).  Per quarter of a
// chunk: sum w x = d_w d_x (codes . codes) + m_w sum x, the integer sum
// exact (|sum| <= 32 * 127 * 127 < 2^24).

// Eight code words of x at word a (a multiple of 4).
fn xq8(a: u32) -> W8 {
    return W8(xq[a >> 2u], xq[(a >> 2u) + 1u]);
}

// (d, sum) of x block blk of the row at word xr.
fn xqds(xr: u32, blk: u32) -> vec2<f32> {
    let h = xq[(xr + p.k / 4u) / 4u + blk / 2u];
    return bitcast<vec2<f32>>(select(h.xy, h.zw, (blk & 1u) != 0u));
}

// Chunk c of every weight row of the workgroup against x's code words.
fn accq(acc: ptr<function, array<f32, NV>>, rb: array<u32, RPW>, xr: array<u32, M>, c: u32) {
    let blk = c / CPB;
    let j = c - blk * CPB;
#ifdef MV_PROBE_LOADS
    // timing probe (WGML_MV_PROBE=1, results wrong): the weight loads
    // alone, folded into the sums so none is dropped (q4_K's three)
    for (var rr = 0u; rr < RPW; rr++) {
        let b = rb[rr] + blk * WBB;
        let v = ld4(b) ^ ld4(b + 16u + 32u * j) ^ ld4(b + 32u + 32u * j);
        (*acc)[rr * M] += f32(v.x ^ v.y ^ v.z ^ v.w);
    }
    return;
#endif
    let e = chunk_e(j) + vec2<u32>(blk * WQK);
    // the x blocks of the chunk's two runs: CH 64, one each; CH 32, both
    // runs in one block (b1 == b0)
    let b0 = e.x / 32u;
    let b1 = e.y / 32u;
    var xw = array<u32, M * XN>();
    var h0 = array<vec2<f32>, M>();
    var h1 = array<vec2<f32>, M>();
    for (var r = 0u; r < M; r++) {
        let a = xq8(xr[r] + 8u * b0);
        let z = xq8(xr[r] + 8u * b1);
        for (var i = 0u; i < 4u; i++) {
            xw[r * XN + i] = a.lo[i];
            xw[r * XN + 4u + i] = a.hi[i];
            if (CH == 64u) {
                xw[r * XN + 8u + i] = z.lo[i];
                xw[r * XN + 12u + i] = z.hi[i];
            }
        }
        h0[r] = xqds(xr[r], b0);
        h1[r] = xqds(xr[r], b1);
    }
    for (var rr = 0u; rr < RPW; rr++) {
#ifdef MV_PROBE_ALU
        // timing probe (WGML_MV_PROBE=2, results wrong): every chunk
        // from its row's first block (L1 hits): the arithmetic alone
        var cw = codes(rb[rr], j);
#else
        var cw = codes(rb[rr] + blk * WBB, j);
#endif
#if QT_Q6_K
        // codes less 32, signed bytes (v + 96 stays in its byte; its top
        // bit flipped is v - 32 in two's complement): no m term
        for (var i = 0u; i < XN; i++) {
            cw.w[i] = (cw.w[i] + 0x60606060u) ^ 0x80808080u;
        }
        cw.m = vec4<f32>(0.0);
#endif
        for (var r = 0u; r < M; r++) {
            var t = vec4<i32>(0);
            for (var i = 0u; i < XN; i++) {
                t[i / XQ] += dot4I8Packed(cw.w[i], xw[r * XN + i]);
            }
            let dx = vec4<f32>(h0[r].x, h0[r].x, h1[r].x, h1[r].x);
            // q4_K's m is one per run (quarters 0-1, 2-3); q4_0's one per chunk
            let mt = select(cw.m.x * h0[r].y, cw.m.x * h0[r].y + cw.m.z * h1[r].y, CH == 64u);
            (*acc)[rr * M + r] += dot(vec4<f32>(t), cw.d * dx) + mt;
        }
    }
}
#endif
