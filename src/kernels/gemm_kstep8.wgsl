// Eight k-steps of gemm.wgsl's register tile, k8 .. k8 + 7 (included by
// it when the k loop is unrolled 8, 16 or 32 times): two gemm_kstep4.wgsl.
{
    let k4 = k8;
#include "gemm_kstep4.wgsl"
}
{
    let k4 = k8 + 4u;
#include "gemm_kstep4.wgsl"
}
