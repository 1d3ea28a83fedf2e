// x of the mat-vec kernel (matvec.wgsl): its binding and vector reads.
#tensor x 2 X_DT X_MODE

// x[r, e .. e+3]; xr: row r's first element.
fn xv4(xr: u32, e: u32) -> vec4<f32> {
#ifdef XV4
    return vec4<f32>(x_ld4((xr + e) / 4u));
#else
    let i = xr + e * p.xs;
    return vec4<f32>(f32(x_ld(i)), f32(x_ld(i + p.xs)), f32(x_ld(i + 2u * p.xs)), f32(x_ld(i + 3u * p.xs)));
#endif
}
