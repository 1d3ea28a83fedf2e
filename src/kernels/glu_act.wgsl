// The gate activations of the gated linear units (wgml_glu_kind order:
// swiglu, geglu (erf), geglu (tanh), reglu), shared by glu.wgsl and the
// mat-vec's fused first pass (matvec_xq.wgsl, PRE_GLU), which must give
// the glu op's values bit for bit.  Needs ew_float.wgsl.
fn glu_act(kind: u32, x: f32) -> f32 {
    // NaN on bits: compilers may assume no NaN, and WGSL's max(NaN, 0) may
    // return 0, where relu(NaN) must stay NaN (wgml.h's NaN rule for glu).
    if (ew_is_nan(x)) {
        return x;
    }
    switch (kind) {
        case 0u: {
            return ew_mul_sigmoid(x, x);
        }
        case 1u: {
            return ew_gelu_erf(x);
        }
        case 2u: {
            // the unary ops' tail-accurate forms (ew_float.wgsl): x sigmoid(2u),
            // not 0.5 x (1 + tanh u), whose residue NVIDIA's tanh leaves at -1
            return ew_mul_sigmoid(x, x * (1.5957691216057308 + 0.07135481627260025 * x * x));
        }
        default: {
            return max(x, 0.0);
        }
    }
}
