// Tiled GEMM of wgml_matmul / wgml_linear (host: src/ops/matmul.c):
//   out[z, m, n] = act(alpha * sum_k A[z, m, k] B[z, k, n] + beta * c + bias)
// with f32 accumulation.  Every variant comes from this one template:
//   BM x BN  block tile, BK  k-step, thread tile TM x TN of 8 or 4 each
//   (TM8, TN8; TILE8 8 x 8), WG threads (one per thread tile), LA2 / LA4
//   (LB2 / LB4): two or four vectors of A's (B's) tile per thread (else
//   one), NBUF 1 or 2 (double buffering);
//   A_KC: A's k stride is 1 (else its m stride is 1); B_KC: B's k stride
//   is 1 (else its n stride is 1); A_MODE/B_MODE ending in 4: vec4 loads
//   (the host checks the 4-element alignment of every row start);
//   QB + QT_<type>: B is a GGUF-quantised w [n, k] (B_KC), decoded while
//   the tile loads (dequant_fns.wgsl); ROLLED: its 4-element loop kept a
//   loop (CPU drivers, whose compile time grows with every inlined copy);
//   SPLITK: the k range is cut into S slices, each writing raw f32 sums
//   into partials that gemm_reduce adds up (small m.n, large k);
//   REDUCE: gemm_reduce, one thread per output: the sum of the S partials
//   (S = 0: k = 0) and the epilogue;
//   H16: f16 arithmetic (wgml_matmul_params.precision WGML_PREC_F16, or
//   an h variant forced): tiles held in workgroup memory as vec4<f16>
//   (k-contiguous operands stored in row pairs: H16_AKC, H16_BKC), products and the sums of one k-tile (BK
//   terms) in f16 vectors (two FMAs an instruction where the GPU packs
//   them, HFMA2 on NVIDIA), then added into f32 totals (f<i><r><j>) at the
//   end of every tile: half the instructions of the f32 k-step and half
//   its workgroup-memory bytes, for ~BK f16 roundings a sum;
//   KU4 / KU8 / KU16 / KU32: the k-step written out that many times
//   (gemm_kloop.wgsl; the host's k_unroll picks, none on CPU drivers);
//   MOE: the grouped GEMM of wgml_linear_id (host src/ops/moe.c, grouping
//   passes moe_group.wgsl): a workgroup takes one tile of BM (token, used)
//   pairs of one expert, gathered through the permutation in grp, times
//   w[expert] (B_KC, dense or QB, z0 = the expert), and scatters its rows
//   to out[t, u, :].  No c, bias, split-K or activation.
// Tiles live in workgroup memory as f32 vec4s, both k-major (As[k][m],
// Bs[k][n]), so the inner step reads TM/4 + TN/4 vectors and does TM.TN
// FMAs.  Thread (tx, ty) owns rows 4(ty + i NTM) + r and columns
// 4(tx + j NTN) + c: consecutive threads read consecutive vectors of Bs
// and a warp reads at most two vectors of As (a broadcast).  Edges: loads
// outside [m, n, k] give 0 (branches, never a clamped index: trusted
// modules have no bounds checks), and stores are guarded.
#include "prelude.wgsl"
#include "dtype.wgsl"
#include "ew_float.wgsl"
#include "ew_unary_fns.wgsl"

struct Params {
    dims: vec4<u32>,  // M, N, K, S (splits; 1 without split-K)
    grid: vec4<u32>,  // tiles along n, tiles along m, batch dim 1 extent, batches
    ast: vec4<u32>,   // A strides: batch 0, batch 1, m, k
    bst: vec4<u32>,   // B strides: batch 0, batch 1, k, n (QB: bytes; w = bytes per row of w)
    cst: vec4<u32>,   // c: batch 0, batch 1, m, n
    dst: vec4<u32>,   // bias: batch 0, batch 1, m, n
    ost: vec4<u32>,   // out (SPLITK, REDUCE: the partials): batch 0, batch 1, m, n
    offs: vec4<u32>,  // a, b, c, bias: first element within the binding
    misc: vec4<u32>,  // out offset, k per split (REDUCE: partials' m stride), flags (1 c, 2 bias),
                      // act (1 relu, 2 gelu, 3 silu)
    pst: vec4<u32>,   // partials: offset, batch 0 and batch 1 strides (REDUCE), split stride (1)
    fp: vec4<f32>,    // alpha, beta
    gx: vec4<u32>,    // MOE: x's steps along t and u, out's steps along t and u
    gy: vec4<u32>,    // MOE: used, experts [elo, ehi) bound in this pass, experts
    gz: vec4<u32>,    // MOE: grp's first word (moe.c: off[E + 1], toff[E + 1], perm[pairs]), -, -, -
}
@group(0) @binding(0) var<uniform> p: Params;

#ifdef REDUCE
#tensor pt 1 f32 PT_MODE
#tensor c 2 C_DT C_MODE
#tensor bias 3 BIAS_DT BIAS_MODE
#tensor o 4 O_DT O_MODE
#else
#tensor a 1 A_DT A_MODE
#ifdef QB
@group(0) @binding(2) var<storage, {{QACC}}> q: array<u32>;
#include "dequant_fns.wgsl"
const QK: u32 = {{QK}}u;
const BB: u32 = {{BB}}u;
#else
#tensor b 2 B_DT B_MODE
#endif
#ifdef SPLITK
#tensor o 3 f32 O_MODE
#else
#ifdef MOE
@group(0) @binding(3) var<storage, {{GRP_ACC}}> grp: array<u32>;
@group(0) @binding(4) var<storage, read> err: array<u32>;
#tensor o 5 O_DT O_MODE
#else
#tensor c 3 C_DT C_MODE
#tensor bias 4 BIAS_DT BIAS_MODE
#tensor o 5 O_DT O_MODE
#endif
#endif
#endif

#ifdef MOE
// The tile's rows: element offsets of each gathered row of x and of its
// out row (filled once per workgroup from the permutation), and how many
// of the BM rows are real.
var<workgroup> xrow: array<u32, {{BM}}>;
var<workgroup> orow: array<u32, {{BM}}>;
var<workgroup> tinfo: vec4<u32>;
var<private> mrows: u32;
fn m_lim() -> u32 {
    return mrows;
}
fn a_row(m: u32) -> u32 {
    return xrow[m];
}
fn o_row(z0: u32, z1: u32, m: u32) -> u32 {
    return orow[m];
}
#else
fn m_lim() -> u32 {
    return p.dims.x;
}
fn a_row(m: u32) -> u32 {
    return m * p.ast.z;
}
fn o_row(z0: u32, z1: u32, m: u32) -> u32 {
    return z0 * p.ost.x + z1 * p.ost.y + m * p.ost.z;
}
#endif

#ifndef SPLITK
// act(alpha acc + beta c + bias) into out[z0, z1, m, n].  beta = 0 never
// reads c (flag 1 is off), so NaN there cannot leak.
fn epilogue(acc: f32, z0: u32, z1: u32, m: u32, n: u32) {
    var v = p.fp.x * acc;
#ifndef MOE
    if ((p.misc.z & 1u) != 0u) {
        v = v + p.fp.y * f32(c_ld(p.offs.z + z0 * p.cst.x + z1 * p.cst.y + m * p.cst.z + n * p.cst.w));
    }
    if ((p.misc.z & 2u) != 0u) {
        v = v + f32(bias_ld(p.offs.w + z0 * p.dst.x + z1 * p.dst.y + m * p.dst.z + n * p.dst.w));
    }
    switch p.misc.w {
        case 1u: { v = u_RELU(v, 0.0, 0.0); }
        case 2u: { v = u_GELU_ERF(v, 0.0, 0.0); }
        case 3u: { v = u_SILU(v, 0.0, 0.0); }
        default: {}
    }
#endif
    o_st(p.misc.x + o_row(z0, z1, m) + n * p.ost.w, v);
}
#endif

#ifdef REDUCE
@compute @workgroup_size(256)
fn gemm_reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let i = wg_linear(wid, nwg) * 256u + li;
    let mn = p.dims.x * p.dims.y;
    if (i >= mn * p.grid.w) {
        return;
    }
    let z = i / mn;
    let r = i - z * mn;
    let m = r / p.dims.y;
    let n = r - m * p.dims.y;
    let z0 = z / p.grid.z;
    let z1 = z - z0 * p.grid.z;
    var acc = 0.0;
    // partials [b0, b1, m, n, S]: a block's S sums are adjacent, so cutting
    // m or n for the window binder cuts the partials too
    var at = p.pst.x + z0 * p.pst.y + z1 * p.pst.z + m * p.misc.y + n * p.dims.w;
    for (var s = 0u; s < p.dims.w; s++) {
        acc = acc + pt_ld(at);
        at = at + p.pst.w;
    }
    epilogue(acc, z0, z1, m, n);
}
#else

// A thread's tile: TM x TN outputs, each 4 or 8 (TM8, TN8; TILE8 both)
#if TM8
const NTM: u32 = {{BM}}u / 8u;        // threads along m (8 rows each)
#else
const NTM: u32 = {{BM}}u / 4u;        // 4 rows each
#endif
#if TN8
const NTN: u32 = {{BN}}u / 8u;        // threads along n (8 columns each)
#else
const NTN: u32 = {{BN}}u / 4u;
#endif
const AV: u32 = {{BM}}u / 4u;         // vectors per k row of As
const BV: u32 = {{BN}}u / 4u;
const BK4: u32 = {{BK}}u / 4u;
const ASZ: u32 = {{BK}}u * AV;        // vectors per buffer
const BSZ: u32 = {{BK}}u * BV;

#ifdef H16
// the same indices as the f32 tiles' vec4s, 8 bytes each; the next
// tile's vectors wait in registers as f16 too (P4: 8 registers fewer)
alias T4 = vec4<f16>;
alias P4 = vec4<f16>;
var<workgroup> As: array<vec4<f16>, {{AS_N}}>;
var<workgroup> Bs: array<vec4<f16>, {{BS_N}}>;
fn tv(w: vec4<f16>) -> T4 {
    return w;
}
#else
alias T4 = vec4<f32>;
alias P4 = vec4<f32>;
var<workgroup> As: array<vec4<f32>, {{AS_N}}>;
var<workgroup> Bs: array<vec4<f32>, {{BS_N}}>;
fn tv(w: vec4<f32>) -> T4 {
    return w;
}
#endif

// A's (B's) vectors in f32, or, with VAH (VBH: f16 data with vector
// loads, for f16 tiles), in f16 as loaded.  Converting f16 -> f32 -> f16
// cost h64 ~3-13% (H200: linear 512 x 14336 x 4096 with an f16 w 31.8
// TFLOP/s against 32.9 with an f32 one); returning f16 from every path
// of f32 data cost 12% (the conversions stay in the caller for those).
#ifdef VAH
alias AT4 = P4;
#else
alias AT4 = vec4<f32>;
#endif
#ifdef VBH
alias BT4 = P4;
#else
alias BT4 = vec4<f32>;
#endif
#ifdef VA
fn a_v4(v: u32) -> AT4 {
#ifdef VAH
    return a_ld4h(v);
#else
    return vec4<f32>(a_ld4(v));
#endif
}
#endif
#ifdef VB
fn b_v4(v: u32) -> BT4 {
#ifdef VBH
    return b_ld4h(v);
#else
    return vec4<f32>(b_ld4(v));
#endif
}
#endif

// Where vector g of a k-contiguous operand's tile lies: (row, first k).
// A row's vectors are adjacent lanes, so a warp's loads cover whole
// 32-byte sectors.  (A warp on 32 rows of one k quad instead, so that
// a_put's four scalar stores fall in 32 banks, cost t128 6% and the q4_K
// linear 11% on an H200: half-sector loads; bench/NOTES.md 2026-11-28.)
fn kc_rk(g: u32) -> vec2<u32> {
    let r = g / BK4;
    return vec2<u32>(r, 4u * (g - r * BK4));
}

// Vector g (0 .. BM BK / 4) of A's tile at (m0, k0): 4 elements along A's
// unit-stride dim; elements past M or kend are 0; in the tiles' type.
fn a_vec(base: u32, m0: u32, k0: u32, kend: u32, g: u32) -> AT4 {
    var v = vec4<f32>(0.0);
#ifdef A_KC
    let rk = kc_rk(g);
    let m = m0 + rk.x;
    let k = k0 + rk.y;
    if (m < m_lim()) {
        let i = base + a_row(m) + k;
#ifdef VA
        if (k + 3u < kend) {
            return a_v4(i >> 2u);
        }
#endif
        for (var e = 0u; e < 4u; e++) {
            if (k + e < kend) {
                v[e] = f32(a_ld(i + e));
            }
        }
    }
#else
    let r = g / AV;
    let k = k0 + r;
    let m = m0 + 4u * (g - r * AV);
    if (k < kend) {
        let i = base + k * p.ast.w + m;
#ifdef VA
        if (m + 3u < m_lim()) {
            return a_v4(i >> 2u);
        }
#endif
        for (var e = 0u; e < 4u; e++) {
            if (m + e < m_lim()) {
                v[e] = f32(a_ld(i + e));
            }
        }
    }
#endif
    return AT4(v);
}

// Vector g of B's tile at (k0, n0), likewise.
fn b_vec(base: u32, n0: u32, k0: u32, kend: u32, g: u32) -> BT4 {
    var v = vec4<f32>(0.0);
#ifdef B_KC
    let rk = kc_rk(g);
    let n = n0 + rk.x;
    let k = k0 + rk.y;
    if (n < p.dims.y) {
#ifdef QB
        // k0 and BK are multiples of 4 and QK of 32: the 4 elements share a block
        let blk = k / QK;
        let at = base + n * p.bst.w + blk * BB;
        let j = k - blk * QK;
#ifdef ROLLED
        // a trip count the compiler cannot see: one copy of the decoder
        // instead of four (CPU drivers: lavapipe's compile time)
        let ne = min(4u, kend - min(k, kend));
        for (var e = 0u; e < ne; e++) {
            v[e] = deq(at, j + e);
        }
#else
        for (var e = 0u; e < 4u; e++) {
            if (k + e < kend) {
                v[e] = deq(at, j + e);
            }
        }
#endif
#else
        let i = base + n * p.bst.w + k;
#ifdef VB
        if (k + 3u < kend) {
            return b_v4(i >> 2u);
        }
#endif
        for (var e = 0u; e < 4u; e++) {
            if (k + e < kend) {
                v[e] = f32(b_ld(i + e));
            }
        }
#endif
    }
#else
    let r = g / BV;
    let k = k0 + r;
    let n = n0 + 4u * (g - r * BV);
    if (k < kend) {
        let i = base + k * p.bst.z + n;
#ifdef VB
        if (n + 3u < p.dims.y) {
            return b_v4(i >> 2u);
        }
#endif
        for (var e = 0u; e < 4u; e++) {
            if (n + e < p.dims.y) {
                v[e] = f32(b_ld(i + e));
            }
        }
    }
#endif
    return BT4(v);
}

#ifdef FASTLD
// a_vec / b_vec of an interior tile (FASTLD, the host's choice where both
// operands take vector loads and B is dense: the tile inside m, n and
// kend, so no element needs its edge branch).
fn a_vecf(base: u32, m0: u32, k0: u32, g: u32) -> AT4 {
#ifdef A_KC
    let rk = kc_rk(g);
    return a_v4((base + a_row(m0 + rk.x) + k0 + rk.y) >> 2u);
#else
    let r = g / AV;
    return a_v4((base + (k0 + r) * p.ast.w + m0 + 4u * (g - r * AV)) >> 2u);
#endif
}

fn b_vecf(base: u32, n0: u32, k0: u32, g: u32) -> BT4 {
#ifdef B_KC
    let rk = kc_rk(g);
    return b_v4((base + (n0 + rk.x) * p.bst.w + k0 + rk.y) >> 2u);
#else
    let r = g / BV;
    return b_v4((base + (k0 + r) * p.bst.z + n0 + 4u * (g - r * BV)) >> 2u);
#endif
}
#endif

// A thread's vectors of the k-tile at k0: A's ga (ga + A_G1 with LA2,
// then ga + A_G2 and ga + A_G2 + A_G1 with LA4) and B's gb likewise; fast:
// an interior tile (FASTLD).
struct TileLd {
    a0: P4,
    b0: P4,
    a1: P4,
    b1: P4,
    a2: P4,
    b2: P4,
    a3: P4,
    b3: P4,
}

fn tile_ld(abase: u32, bbase: u32, m0: u32, n0: u32, k0: u32, kend: u32, ga: u32, gb: u32, fast: bool) -> TileLd {
    var t = TileLd();
#ifdef FASTLD
    if (fast) {
        t.a0 = P4(a_vecf(abase, m0, k0, ga));
        t.b0 = P4(b_vecf(bbase, n0, k0, gb));
#if LA2
        t.a1 = P4(a_vecf(abase, m0, k0, ga + A_G1));
#endif
#if LA4
        t.a2 = P4(a_vecf(abase, m0, k0, ga + A_G2));
        t.a3 = P4(a_vecf(abase, m0, k0, ga + A_G2 + A_G1));
#endif
#if LB2
        t.b1 = P4(b_vecf(bbase, n0, k0, gb + B_G1));
#endif
#if LB4
        t.b2 = P4(b_vecf(bbase, n0, k0, gb + B_G2));
        t.b3 = P4(b_vecf(bbase, n0, k0, gb + B_G2 + B_G1));
#endif
        return t;
    }
#endif
    t.a0 = P4(a_vec(abase, m0, k0, kend, ga));
    t.b0 = P4(b_vec(bbase, n0, k0, kend, gb));
#if LA2
    t.a1 = P4(a_vec(abase, m0, k0, kend, ga + A_G1));
#endif
#if LA4
    t.a2 = P4(a_vec(abase, m0, k0, kend, ga + A_G2));
    t.a3 = P4(a_vec(abase, m0, k0, kend, ga + A_G2 + A_G1));
#endif
#if LB2
    t.b1 = P4(b_vec(bbase, n0, k0, kend, gb + B_G1));
#endif
#if LB4
    t.b2 = P4(b_vec(bbase, n0, k0, kend, gb + B_G2));
    t.b3 = P4(b_vec(bbase, n0, k0, kend, gb + B_G2 + B_G1));
#endif
    return t;
}

// A tile's vectors into buffer buf of As and Bs (one, two or four a
// thread: LA2 / LA4, LB2 / LB4).
fn tile_put(buf: u32, ga: u32, gb: u32, t: TileLd) {
#if LA2
    a_put2(buf, ga, t.a0, t.a1);
#else
    a_put(buf, ga, t.a0);
#endif
#if LA4
    a_put2(buf, ga + A_G2, t.a2, t.a3);
#endif
#if LB2
    b_put2(buf, gb, t.b0, t.b1);
#else
    b_put(buf, gb, t.b0);
#endif
#if LB4
    b_put2(buf, gb + B_G2, t.b2, t.b3);
#endif
}

// Puts vector g of A's tile into buffer `buf` of As (k-major).
fn a_put(buf: u32, g: u32, v: P4) {
#ifdef H16
#ifdef A_KC
    // never called: k-contiguous f16 tiles are stored in row pairs (a_put2)
#else
    As[buf * ASZ + g] = v;
#endif
#else
#ifdef A_KC
    let rk = kc_rk(g);
    let at = buf * ASZ + rk.y * AV + (rk.x >> 2u);
    let c = rk.x & 3u;
    As[at][c] = v.x;
    As[at + AV][c] = v.y;
    As[at + 2u * AV][c] = v.z;
    As[at + 3u * AV][c] = v.w;
#else
    As[buf * ASZ + g] = v;
#endif
#endif
}

fn b_put(buf: u32, g: u32, v: P4) {
#ifdef H16
#ifndef B_KC
    Bs[buf * BSZ + g] = v;
#endif
#else
#ifdef B_KC
    let rk = kc_rk(g);
    let at = buf * BSZ + rk.y * BV + (rk.x >> 2u);
    let c = rk.x & 3u;
    Bs[at][c] = v.x;
    Bs[at + BV][c] = v.y;
    Bs[at + 2u * BV][c] = v.z;
    Bs[at + 3u * BV][c] = v.w;
#else
    Bs[buf * BSZ + g] = v;
#endif
#endif
}

// The two vectors a thread loads a tile (LA2): g0 = a_g0(li) and g0 +
// A_G1.  f16 tiles with k contiguous take two adjacent rows' 4 k each
// (pair_g0), so that each (k, row pair) is two adjacent f16 of one
// vector; otherwise vectors li and li + WG.  With LA4 the same again
// 2 WG vectors on (A_G2: the next 2 WG / BK4 rows, or vectors li + 2 WG
// and li + 3 WG).
const A_G2: u32 = 2u * {{WG}}u;
const B_G2: u32 = 2u * {{WG}}u;
fn pair_g0(li: u32) -> u32 {
    return 2u * BK4 * (li / BK4) + li % BK4;
}
#ifdef H16_AKC
fn a_g0(li: u32) -> u32 {
    return pair_g0(li);
}
const A_G1: u32 = BK4;
#else
fn a_g0(li: u32) -> u32 {
    return li;
}
const A_G1: u32 = {{WG}}u;
#endif
#ifdef H16_BKC
fn b_g0(li: u32) -> u32 {
    return pair_g0(li);
}
const B_G1: u32 = BK4;
#else
fn b_g0(li: u32) -> u32 {
    return li;
}
const B_G1: u32 = {{WG}}u;
#endif

#ifdef H16
// Rows r, r + 1 (vectors g, g + BK4: 4 k each): each k's two rows are
// adjacent f16 of one vector.
fn pair_put(A: bool, buf: u32, g: u32, h0: P4, h1: P4) {
    let r = g / BK4;
    let k = 4u * (g - r * BK4);
    let c = r & 3u;
    if (A) {
        let at = buf * ASZ + k * AV + (r >> 2u);
        As[at][c] = h0.x;
        As[at][c + 1u] = h1.x;
        As[at + AV][c] = h0.y;
        As[at + AV][c + 1u] = h1.y;
        As[at + 2u * AV][c] = h0.z;
        As[at + 2u * AV][c + 1u] = h1.z;
        As[at + 3u * AV][c] = h0.w;
        As[at + 3u * AV][c + 1u] = h1.w;
    } else {
        let at = buf * BSZ + k * BV + (r >> 2u);
        Bs[at][c] = h0.x;
        Bs[at][c + 1u] = h1.x;
        Bs[at + BV][c] = h0.y;
        Bs[at + BV][c + 1u] = h1.y;
        Bs[at + 2u * BV][c] = h0.z;
        Bs[at + 2u * BV][c + 1u] = h1.z;
        Bs[at + 3u * BV][c] = h0.w;
        Bs[at + 3u * BV][c + 1u] = h1.w;
    }
}
#endif

// Stores a thread's two vectors of A's tile (LA2).
fn a_put2(buf: u32, g0: u32, v0: P4, v1: P4) {
#ifdef H16_AKC
    pair_put(true, buf, g0, v0, v1);
#else
    a_put(buf, g0, v0);
    a_put(buf, g0 + A_G1, v1);
#endif
}

fn b_put2(buf: u32, g0: u32, v0: P4, v1: P4) {
#ifdef H16_BKC
    pair_put(false, buf, g0, v0, v1);
#else
    b_put(buf, g0, v0);
    b_put(buf, g0 + B_G1, v1);
#endif
}

// Four outputs of row m from column n on (guarded): the epilogue, or the
// raw sums into the split-K partials.
fn put4(m: u32, n: u32, v: vec4<f32>, z0: u32, z1: u32, s: u32) {
    if (m >= m_lim() || n >= p.dims.y) {
        return;
    }
    // a trip count the compiler cannot see: one copy of the epilogue per
    // call, not four (lavapipe compiled t32 in 12 s instead of ~1.5 with
    // the loop unrolled into 16 activations)
    let cn = min(4u, p.dims.y - n);
    for (var c = 0u; c < cn; c++) {
        {
#ifdef SPLITK
            o_st(p.pst.x + z0 * p.ost.x + z1 * p.ost.y + s * p.pst.w + m * p.ost.z + (n + c) * p.ost.w, v[c]);
#else
            epilogue(v[c], z0, z1, m, n + c);
#endif
        }
    }
}

#ifdef MOE
// Tile tm of this pass (experts [elo, ehi)): (expert - elo, its first
// slot in perm, rows), rows 0 when there is none or the ids check failed.
// toff[e] is expert e's first tile: the expert is the last e with
// toff[e] <= tile (empty experts share their successor's toff).
fn moe_tile(tm: u32) -> vec4<u32> {
    let toff = p.gz.x + p.gy.w + 1u;
    let t = grp[toff + p.gy.y] + tm;
    if (err[1] != 0u || t >= grp[toff + p.gy.z]) {
        return vec4<u32>(0u);
    }
    var lo = p.gy.y;
    var hi = p.gy.z;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (grp[toff + mid] <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let first = grp[p.gz.x + lo] + (t - grp[toff + lo]) * {{BM}}u;
    return vec4<u32>(lo - p.gy.y, first, min({{BM}}u, grp[p.gz.x + lo + 1u] - first), 0u);
}
#endif

@compute @workgroup_size({{WG}})
fn gemm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let wgi = wg_linear(wid, nwg);
#ifdef MOE
    // m-tiles fastest: the tiles of one expert that run together read the
    // same n-slice of w[expert] (an expert of 14336 x 4096 q4_K is 33 MB,
    // f16 117 MB: re-read from DRAM per m-tile if its tiles ran apart)
    let tn = wgi / p.grid.y;
    if (tn >= p.grid.x) {
        return; // past the last n-tile (uniform)
    }
    if (li == 0u) {
        tinfo = moe_tile(wgi - tn * p.grid.y);
    }
    let ti = workgroupUniformLoad(&tinfo);
    if (ti.z == 0u) {
        return; // no tile here: the grid is sized for the worst case
    }
    mrows = ti.z;
    for (var r = li; r < ti.z; r += {{WG}}u) {
        let q = grp[p.gz.x + 2u * (p.gy.w + 1u) + ti.y + r];
        let t = q / p.gy.x;
        let u = q - t * p.gy.x;
        xrow[r] = t * p.gx.x + u * p.gx.y;
        orow[r] = t * p.gx.z + u * p.gx.w;
    }
    workgroupBarrier();
    let m0 = 0u;
    let n0 = tn * {{BN}}u;
    let z0 = ti.x;
    let z1 = 0u;
    let s = 0u;
    let kbeg = 0u;
    let kend = p.dims.z;
#else
    let tiles = p.grid.x * p.grid.y;
    let zt = wgi / tiles;
    if (zt >= p.grid.w * p.dims.w) {
        return; // a folded grid's overshoot (the whole workgroup: uniform)
    }
    let rem = wgi - zt * tiles;
    let tm = rem / p.grid.x;
    let m0 = tm * {{BM}}u;
    let n0 = (rem - tm * p.grid.x) * {{BN}}u;
    let z = zt / p.dims.w;
    let s = zt - z * p.dims.w;
    let z0 = z / p.grid.z;
    let z1 = z - z0 * p.grid.z;
    let kbeg = s * p.misc.y;
    let kend = min(p.dims.z, kbeg + p.misc.y);
#endif
    let abase = p.offs.x + z0 * p.ast.x + z1 * p.ast.y;
    let bbase = p.offs.y + z0 * p.bst.x + z1 * p.bst.y;
#ifdef GEMM_W84
    // a 32-lane warp covers 8 x 4 thread tiles (a k-step's B vectors 8
    // distinct: one wavefront), not 16 x 2: f32 4096^3 35.8 -> 39.5 TFLOP/s
    // on an H200, and 4 x 8 ran the same (src/ops/gemm.c)
    let wq = li / 32u;
    let wl = li % 32u;
    let tx = wl % 8u + 8u * (wq % (NTN / 8u));
    let ty = wl / 8u + 4u * (wq / (NTN / 8u));
#else
    let tx = li % NTN;
    let ty = li / NTN;
#endif

    // the register tile as named vectors (c<i><r><j>: rows 4(ty + i NTM) + r,
    // columns 4(tx + j NTN) ..+3): an array indexed in loops was left in
    // local memory by NVIDIA's compiler (t128 ran at 2 TFLOP/s)
    var c000 = T4();
    var c010 = T4();
    var c020 = T4();
    var c030 = T4();
#if TN8
    var c001 = T4();
    var c011 = T4();
    var c021 = T4();
    var c031 = T4();
#endif
#if TM8
    var c100 = T4();
    var c110 = T4();
    var c120 = T4();
    var c130 = T4();
#if TN8
    var c101 = T4();
    var c111 = T4();
    var c121 = T4();
    var c131 = T4();
#endif
#endif
#ifdef H16
    // f32 totals of the f16 tile sums
    var f000 = vec4<f32>(0.0);
    var f010 = vec4<f32>(0.0);
    var f020 = vec4<f32>(0.0);
    var f030 = vec4<f32>(0.0);
#if TN8
    var f001 = vec4<f32>(0.0);
    var f011 = vec4<f32>(0.0);
    var f021 = vec4<f32>(0.0);
    var f031 = vec4<f32>(0.0);
#endif
#if TM8
    var f100 = vec4<f32>(0.0);
    var f110 = vec4<f32>(0.0);
    var f120 = vec4<f32>(0.0);
    var f130 = vec4<f32>(0.0);
#if TN8
    var f101 = vec4<f32>(0.0);
    var f111 = vec4<f32>(0.0);
    var f121 = vec4<f32>(0.0);
    var f131 = vec4<f32>(0.0);
#endif
#endif
#endif
    let ntiles = (kend - min(kbeg, kend) + {{BK}}u - 1u) / {{BK}}u;
    let ga = a_g0(li);
    let gb = b_g0(li);
    if (ntiles > 0u) {
        tile_put(0u, ga, gb, tile_ld(abase, bbase, m0, n0, kbeg, kend, ga, gb, false));
    }
    workgroupBarrier();
#ifdef FASTLD
    // interior tiles (uniform) whose k-tiles are all full take a copy of
    // the loop with plain vector loads (gemm_ktiles.wgsl says why two)
    let inner = m0 + {{BM}}u <= m_lim() && n0 + {{BN}}u <= p.dims.y;
    if (inner && (kend - min(kbeg, kend)) % {{BK}}u == 0u) {
        let whole = true;
#include "gemm_ktiles.wgsl"
    } else {
        let whole = false;
#include "gemm_ktiles.wgsl"
    }
#else
    let whole = false;
#include "gemm_ktiles.wgsl"
#endif

    put4(m0 + 4u * (ty + 0u * NTM) + 0u, n0 + 4u * (tx + 0u * NTN), {{R}}000, z0, z1, s);
    put4(m0 + 4u * (ty + 0u * NTM) + 1u, n0 + 4u * (tx + 0u * NTN), {{R}}010, z0, z1, s);
    put4(m0 + 4u * (ty + 0u * NTM) + 2u, n0 + 4u * (tx + 0u * NTN), {{R}}020, z0, z1, s);
    put4(m0 + 4u * (ty + 0u * NTM) + 3u, n0 + 4u * (tx + 0u * NTN), {{R}}030, z0, z1, s);
#if TN8
    put4(m0 + 4u * (ty + 0u * NTM) + 0u, n0 + 4u * (tx + 1u * NTN), {{R}}001, z0, z1, s);
    put4(m0 + 4u * (ty + 0u * NTM) + 1u, n0 + 4u * (tx + 1u * NTN), {{R}}011, z0, z1, s);
    put4(m0 + 4u * (ty + 0u * NTM) + 2u, n0 + 4u * (tx + 1u * NTN), {{R}}021, z0, z1, s);
    put4(m0 + 4u * (ty + 0u * NTM) + 3u, n0 + 4u * (tx + 1u * NTN), {{R}}031, z0, z1, s);
#endif
#if TM8
    put4(m0 + 4u * (ty + 1u * NTM) + 0u, n0 + 4u * (tx + 0u * NTN), {{R}}100, z0, z1, s);
    put4(m0 + 4u * (ty + 1u * NTM) + 1u, n0 + 4u * (tx + 0u * NTN), {{R}}110, z0, z1, s);
    put4(m0 + 4u * (ty + 1u * NTM) + 2u, n0 + 4u * (tx + 0u * NTN), {{R}}120, z0, z1, s);
    put4(m0 + 4u * (ty + 1u * NTM) + 3u, n0 + 4u * (tx + 0u * NTN), {{R}}130, z0, z1, s);
#if TN8
    put4(m0 + 4u * (ty + 1u * NTM) + 0u, n0 + 4u * (tx + 1u * NTN), {{R}}101, z0, z1, s);
    put4(m0 + 4u * (ty + 1u * NTM) + 1u, n0 + 4u * (tx + 1u * NTN), {{R}}111, z0, z1, s);
    put4(m0 + 4u * (ty + 1u * NTM) + 2u, n0 + 4u * (tx + 1u * NTN), {{R}}121, z0, z1, s);
    put4(m0 + 4u * (ty + 1u * NTM) + 3u, n0 + 4u * (tx + 1u * NTN), {{R}}131, z0, z1, s);
#endif
#endif
}
#endif
