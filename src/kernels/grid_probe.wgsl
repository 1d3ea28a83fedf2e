// ---- A chain of dependent mat-vecs, persistent or a dispatch a stage
// (tests/test_grid.c: its correctness tests on any device, and with
// --bench / --layer the timings of bench/NOTES.md 2026-11-27 (7)).
//
// Stage s: y_{s+1}[r] = scale * sum_j w_s[r, j] * y_s[j] (j < k), w_s int8
// (a vec4<u32> holds 16; WF32: f32, 4; W4: int4, 32), y_0 the input; y_s
// lives at word s * ystride of `y` (so a stage's x is the first k values
// of the previous stage's n).  A subgroup owns a row at a time: lane l
// takes the row's vec4s l, l + sgs, ...; x is staged in workgroup memory
// first (atomic loads: it was written by other workgroups in this
// dispatch; XPLAIN: plain loads, a timing probe).
//
// Modes (p.mode): 0 persistent: p.nwg workgroups (at most what
// grid_discover counted) run every stage, a grid barrier between stages;
// with p.pf each subgroup loads its first row of a stage before the
// barrier (weights do not depend on it); 1 one stage (p.first) a dispatch,
// a subgroup a row; 2 grid_discover only; 3 p.stages barriers and nothing
// else (their cost).
//
// XI8: x staged as 8-bit codes (x * 32 rounded, clamped to +-127: the
// chain's values are O(1)) and met by dot4I8Packed, as the production
// kernels' integer path does, so the product is not bound by int-to-float
// conversions (calls 1-2).  LAYER: stage s's (n, k, first vec4 of w,
// scale's f32 bits) from shp[s] (a decode layer's shapes in turn), y's
// stages still p.ystride words apart.
#include "prelude.wgsl"

struct Params {
    n: u32,
    k: u32,
    stages: u32,
    mode: u32,
    nwg: u32,
    first: u32,
    wstride: u32,  // vec4s of w a stage
    ystride: u32,  // words of y a stage
    pf: u32,
    scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> w: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> grid_ctl: array<atomic<u32>>;

#include "grid.wgsl"
#ifdef XPLAIN
@group(0) @binding(4) var<storage, read_write> yp: array<u32>;
#endif
#ifdef LAYER
@group(0) @binding(5) var<storage, read> shp: array<vec4<u32>>;
#endif

const WG: u32 = {{WG}}u;  // 256 (the tests), or 1024 (--bench, WG=1024)
const KMAX: u32 = 4096u;   // x's elements in workgroup memory

#ifdef XI8
const XC: u32 = 4096u;  // x's code words in workgroup memory: k <= 16384
var<workgroup> xc: array<u32, XC>;
#else
var<workgroup> xs: array<vec4<f32>, KMAX / 4u>;
#endif

// Stage s's (rows, columns, first vec4 of w, scale's f32 bits).
fn stage(s: u32) -> vec4<u32> {
#ifdef LAYER
    return shp[s];
#else
    return vec4<u32>(p.n, p.k, s * p.wstride, bitcast<u32>(p.scale));
#endif
}

fn i8x4(q: u32) -> vec4<f32> {
    return vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(q << 24u, q << 16u, q << 8u, q)) >> vec4<u32>(24u));
}

#ifdef W4
// W4 (with XI8): 4-bit weights, a nibble n standing for n - 8, 32 a
// vec4<u32>: word i's low nibbles are elements 8i .. 8i + 3, its high
// ones 8i + 4 .. 8i + 7 (q4-like bytes: half int8's).  v + 0x78 flipped
// at bit 7 is v - 8 as a signed byte.
fn nib(w: u32) -> u32 {
    return ((w & 0x0f0f0f0fu) + 0x78787878u) ^ 0x80808080u;
}
fn dot4w(w: u32, a: u32) -> i32 {
    return dot4I8Packed(nib(w), xc[a]) + dot4I8Packed(nib(w >> 4u), xc[a + 1u]);
}
fn dot16(q: vec4<u32>, c: u32) -> f32 {
    let t = dot4w(q.x, 8u * c) + dot4w(q.y, 8u * c + 2u) + dot4w(q.z, 8u * c + 4u) + dot4w(q.w, 8u * c + 6u);
    return f32(t) * (1.0 / 32.0);
}
#else
#ifdef XI8
fn dot16(q: vec4<u32>, c: u32) -> f32 {
    let t = dot4I8Packed(q.x, xc[4u * c]) + dot4I8Packed(q.y, xc[4u * c + 1u]) +
            dot4I8Packed(q.z, xc[4u * c + 2u]) + dot4I8Packed(q.w, xc[4u * c + 3u]);
    return f32(t) * (1.0 / 32.0);
}
#else
#ifdef WF32
// WF32 (--bench): f32 weights, a vec4<u32> 4 of them, so the chain is
// bound by its bytes, not by int8 conversions (calls 1-2)
fn dot16(q: vec4<u32>, c: u32) -> f32 {
    return dot(bitcast<vec4<f32>>(q), xs[c]);
}
#else
fn dot16(q: vec4<u32>, c: u32) -> f32 {
    return dot(i8x4(q.x), xs[4u * c]) + dot(i8x4(q.y), xs[4u * c + 1u]) + dot(i8x4(q.z), xs[4u * c + 2u]) +
           dot(i8x4(q.w), xs[4u * c + 3u]);
}
#endif
#endif
#endif
// elements a vec4<u32> of w holds
#ifdef WF32
const EPV: u32 = 4u;
#else
#ifdef W4
const EPV: u32 = 32u;
#else
const EPV: u32 = 16u;
#endif
#endif

fn x_at(s: u32, i: u32) -> f32 {
#ifdef XPLAIN
    // plain loads (a timing probe: an L1 line could be stale)
    return bitcast<f32>(yp[s * p.ystride + i]);
#else
    return bitcast<f32>(atomicLoad(&y[s * p.ystride + i]));
#endif
}

fn stage_x(li: u32, s: u32) {
#ifdef XI8
    for (var i = li; 4u * i < stage(s).y; i += WG) {
        let v = vec4<f32>(x_at(s, 4u * i), x_at(s, 4u * i + 1u), x_at(s, 4u * i + 2u), x_at(s, 4u * i + 3u));
        let c = vec4<i32>(clamp(round(v * 32.0), vec4<f32>(-127.0), vec4<f32>(127.0)));
        xc[i] = pack4xI8(c);
    }
#else
    for (var i = li; i < stage(s).y; i += WG) {
        xs[i / 4u][i % 4u] = x_at(s, i);
    }
#endif
    workgroupBarrier();
}

// A lane's 8 vec4s of a row as named fields: an array indexed by a loop
// counter is kept in local memory by NVIDIA's compiler (README hazard).
struct Row8 {
    a: vec4<u32>, b: vec4<u32>, c: vec4<u32>, d: vec4<u32>,
    e: vec4<u32>, f: vec4<u32>, g: vec4<u32>, h: vec4<u32>,
}
const PFN: u32 = 8u;  // vec4s a lane holds: k <= 16 * 8 * sgs, the rest loaded as it goes

fn ldw(base: u32, j: u32, kv: u32) -> vec4<u32> {
    if (j < kv) {
        return w[base + j];
    }
    return vec4<u32>(0u);
}

fn row_load(s: u32, r: u32, lane: u32, sgs: u32) -> Row8 {
    let kv = stage(s).y / EPV;
    let b = stage(s).z + r * kv;
    return Row8(ldw(b, lane, kv), ldw(b, lane + sgs, kv), ldw(b, lane + 2u * sgs, kv), ldw(b, lane + 3u * sgs, kv),
                ldw(b, lane + 4u * sgs, kv), ldw(b, lane + 5u * sgs, kv), ldw(b, lane + 6u * sgs, kv),
                ldw(b, lane + 7u * sgs, kv));
}

fn dotj(q: vec4<u32>, j: u32, kv: u32) -> f32 {
    if (j < kv) {
        return dot16(q, j);
    }
    return 0.0;
}

fn row_finish(s: u32, r: u32, q: Row8, lane: u32, sgs: u32) {
    let kv = stage(s).y / EPV;
    var acc = dotj(q.a, lane, kv) + dotj(q.b, lane + sgs, kv) + dotj(q.c, lane + 2u * sgs, kv) +
              dotj(q.d, lane + 3u * sgs, kv);
    acc += dotj(q.e, lane + 4u * sgs, kv) + dotj(q.f, lane + 5u * sgs, kv) + dotj(q.g, lane + 6u * sgs, kv) +
           dotj(q.h, lane + 7u * sgs, kv);
    // the rest of a long row (k > 16 * PFN * sgs), loaded as it goes
    for (var j = lane + PFN * sgs; j < kv; j += sgs) {
        acc += dot16(w[stage(s).z + r * kv + j], j);
    }
    let t = subgroupAdd(acc);
    if (lane == 0u) {
        atomicStore(&y[(s + 1u) * p.ystride + r], bitcast<u32>(bitcast<f32>(stage(s).w) * t));
    }
}

@compute @workgroup_size(WG)
fn gp_chain(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sgs: u32,
            @builtin(subgroup_id) sid: u32, @builtin(num_subgroups) nsub: u32,
            @builtin(local_invocation_index) li: u32) {
    let g = wg_linear(wid, nwg);
    if (p.mode == 2u) {
        grid_discover(li);
        return;
    }
    if (p.mode == 1u) {
        stage_x(li, p.first);
        let r = g * nsub + sid;
        if (r < stage(p.first).x) {
            row_finish(p.first, r, row_load(p.first, r, lane, sgs), lane, sgs);
        }
        return;
    }
    if (g >= p.nwg) {
        return;  // past the resident count: never taken, but harmless
    }
    if (p.mode == 3u) {
        for (var b = 0u; b < p.stages; b++) {
            grid_sync(li, sid, lane, sgs, g, (b + 1u) * p.nwg);
        }
        grid_exit(li, p.nwg);
        return;
    }
    let gs = g * nsub + sid;
    let ts = p.nwg * nsub;
    var q = Row8();
    for (var s = 0u; s < p.stages; s++) {
        if (p.pf != 0u && gs < stage(s).x) {
            q = row_load(s, gs, lane, sgs);  // before the barrier (pf)
        }
        if (s > 0u) {
            grid_sync(li, sid, lane, sgs, g, s * p.nwg);
        }
        stage_x(li, s);
        for (var r = gs; r < stage(s).x; r += ts) {
            if (r != gs || p.pf == 0u) {
                q = row_load(s, r, lane, sgs);
            }
            row_finish(s, r, q, lane, sgs);
        }
    }
    grid_exit(li, p.nwg);
}
