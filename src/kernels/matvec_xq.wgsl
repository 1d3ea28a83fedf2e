// The integer mat-vec path's first pass (matvec.wgsl includes it under
// XQUANT; Params, x's accessors and xv4 come from there): each activation
// row of x quantised to 8 bits a 32-element block, as llama.cpp's q8_1:
//     d = max |x_i| / 127,  code_i = round(x_i / d),  sum = d * sum code_i
// (the sum of the rounded values, so the product is exactly w . x~ for
// x~ = d * code: the m terms see the x the codes do)
// Row r's words start at p.oo[r] (a multiple of 4: 16-byte loads): k / 4
// code words (block b's 8 at 8b, code i of a word in byte i), then a
// (d, sum) f32 pair a block.  The second pass (matvec_wide.wgsl, Q8X)
// reads x's codes 4x smaller than f32 and meets each weight code word in
// one dot4I8Packed.  A block holding NaN or +-Inf gets d = NaN, so the
// products it meets are NaN (the float path would give NaN or +-Inf).
//
// Entries:
//   xquant       x read as it is: one thread a block, k / 32 threads a row
//                (448 at k = 14336), a few microseconds against the
//                weight read it serves.
//   xquant       (PRE_GLU) x = glu(a, u) computed here (x is a, u the up
//                half): graph fusion's linear(glu(a, u)) (src/graph/fuse.c,
//                src/ops/matvec_pre.c), so a decode step runs no glu
//                dispatch (a dependent dispatch costs an H200 ~3-7 us;
//                bench/NOTES.md).
//   xquant_norm  (PRE_NORM) x = rms_norm(a (+ u)) * g computed here, the
//                sum a + u written to so when asked (the residual fusion's
//                sum_out): one workgroup a row, a sum-of-squares pass, then
//                the quantising pass rereading the row (L1/L2 hits).
// p.pad1 flags (PRE_*): 1 u present, 2 g present, 4 so written; p.alpha
// holds eps, p.act the glu kind, p.bo / p.co the rows of u and so, p.pad0
// g's first element.

#ifdef PRE_GLU
#tensor u 3 U_DT U_MODE
#include "glu_act.wgsl"
#endif
#ifdef PRE_NORM
#tensor u 3 U_DT U_MODE
#tensor g 4 G_DT G_MODE
#tensor so 5 SO_DT SO_MODE
#endif

#include "q8_block.wgsl"

// The XQUANT pass's entries (matvec_xs.wgsl includes this file for
// q8_block alone).
#ifdef XQUANT
#ifdef PRE_ANY
// u[ub + e .. + 3] (rows of u are contiguous: the host takes PRE_* only
// then); UV4: one vector load (rows on 16 bytes, a 32-bit or vec4 dtype)
fn uv4(ub: u32, e: u32) -> vec4<f32> {
    let i = ub + e;
#ifdef UV4
    return vec4<f32>(u_ld4(i / 4u));
#else
    return vec4<f32>(f32(u_ld(i)), f32(u_ld(i + 1u)), f32(u_ld(i + 2u)), f32(u_ld(i + 3u)));
#endif
}
#endif

#ifdef PRE_NORM
const NWG: u32 = 128u;
var<workgroup> nred: array<f32, NWG>;

// a (+ u) at elements e .. e + 3 of row r
fn norm_in(r: u32, e: u32) -> vec4<f32> {
    var v = xv4(p.xo[r / 4u][r % 4u], e);
    if ((p.pad1 & 1u) != 0u) {
        v += uv4(p.bo[r / 4u][r % 4u], e);
    }
    return v;
}

fn gv4(e: u32) -> vec4<f32> {
    let i = p.pad0 + e;
#ifdef GV4
    return vec4<f32>(g_ld4(i / 4u));
#else
    return vec4<f32>(f32(g_ld(i)), f32(g_ld(i + 1u)), f32(g_ld(i + 2u)), f32(g_ld(i + 3u)));
#endif
}

// Every load of a block is issued before any store: a, u and so may share
// the arena's buffer (bound read_write), and a store before a load keeps
// the load waiting behind it (on an H200 the first version, storing the
// sum as it went, made the 8B decode 12% slower than unfused).
@compute @workgroup_size(NWG)
fn xquant_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let r = wg_linear(wid, nwg);  // one workgroup a row: uniform
    let nb = p.k / 32u;
    let sb = p.co[r / 4u][r % 4u];
    var ss = 0.0;
    for (var blk = li; blk < nb; blk += NWG) {
        var v: array<vec4<f32>, 8>;
        for (var i = 0u; i < 8u; i++) {
            v[i] = norm_in(r, blk * 32u + 4u * i);
        }
        for (var i = 0u; i < 8u; i++) {
            let e = blk * 32u + 4u * i;
            if ((p.pad1 & 4u) != 0u) {
#ifdef SOV4
                so_st4((sb + e) / 4u, v[i]);
#else
                so_st(sb + e, so_T(v[i].x));
                so_st(sb + e + 1u, so_T(v[i].y));
                so_st(sb + e + 2u, so_T(v[i].z));
                so_st(sb + e + 3u, so_T(v[i].w));
#endif
            }
            ss += dot(v[i], v[i]);
        }
    }
    nred[li] = ss;
    workgroupBarrier();
    for (var h = NWG / 2u; h > 0u; h = h / 2u) {
        if (li < h) {
            nred[li] += nred[li + h];
        }
        workgroupBarrier();
    }
    let tot = nred[0];
    // norm.wgsl's RMS scale (a NaN sum: NaN, which inverseSqrt need not give)
    let scale = select(inverseSqrt(tot / f32(p.k) + p.alpha), bitcast<f32>(0x7fc00000u), ew_is_nan(tot));
    for (var blk = li; blk < nb; blk += NWG) {
        var v: array<vec4<f32>, 8>;
        var gw: array<vec4<f32>, 8>;
        for (var i = 0u; i < 8u; i++) {
            let e = blk * 32u + 4u * i;
            v[i] = norm_in(r, e);
            gw[i] = select(vec4<f32>(1.0), gv4(e), (p.pad1 & 2u) != 0u);
        }
        for (var i = 0u; i < 8u; i++) {
            v[i] = v[i] * scale * gw[i];
        }
        q8_block(xq_row(r), p.k / 4u, blk, v);
    }
}
#else
@compute @workgroup_size(64)
fn xquant(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let nb = p.k / 32u;
    let t = wg_linear(wid, nwg) * 64u + li;
    if (t >= nb * p.m) {
        return;
    }
    let r = t / nb;
    let blk = t - r * nb;
    let xr = p.xo[r / 4u][r % 4u];
    var v: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) {
        v[i] = xv4(xr, blk * 32u + 4u * i);
    }
#ifdef PRE_GLU
    var u: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) {
        u[i] = uv4(p.bo[r / 4u][r % 4u], blk * 32u + 4u * i);
    }
    for (var i = 0u; i < 8u; i++) {
        let a = v[i];
        v[i] = vec4<f32>(glu_act(p.act, a.x), glu_act(p.act, a.y), glu_act(p.act, a.z), glu_act(p.act, a.w)) * u[i];
    }
#endif
    q8_block(xq_row(r), p.k / 4u, blk, v);
}
#endif
#endif
