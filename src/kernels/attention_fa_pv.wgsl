// One key c of attention_fa.wgsl's P.V product (included by it: Ps, KVs,
// ty, tx and the o<r><v> accumulators are the includer's): this lane's
// rows' probabilities of key c times its V vectors.
    let pv = Ps[c * TY + ty];
    let vr = c * KVW4 + tx;
    let v0 = KVs[vr];
    o00 = fma(vec4<f32>(pv.x), v0, o00);
    o10 = fma(vec4<f32>(pv.y), v0, o10);
    o20 = fma(vec4<f32>(pv.z), v0, o20);
    o30 = fma(vec4<f32>(pv.w), v0, o30);
#if NV2
    let v1 = KVs[vr + 8u];
    o01 = fma(vec4<f32>(pv.x), v1, o01);
    o11 = fma(vec4<f32>(pv.y), v1, o11);
    o21 = fma(vec4<f32>(pv.z), v1, o21);
    o31 = fma(vec4<f32>(pv.w), v1, o31);
#endif
#if NV3
    let v2 = KVs[vr + 16u];
    o02 = fma(vec4<f32>(pv.x), v2, o02);
    o12 = fma(vec4<f32>(pv.y), v2, o12);
    o22 = fma(vec4<f32>(pv.z), v2, o22);
    o32 = fma(vec4<f32>(pv.w), v2, o32);
#endif
#if NV4
    let v3 = KVs[vr + 24u];
    o03 = fma(vec4<f32>(pv.x), v3, o03);
    o13 = fma(vec4<f32>(pv.y), v3, o13);
    o23 = fma(vec4<f32>(pv.z), v3, o23);
    o33 = fma(vec4<f32>(pv.w), v3, o33);
#endif
