// Four k-steps of gemm.wgsl's register tile, k4 .. k4 + 3 (included by it
// when the k loop is unrolled: KU4, or by gemm_kstep8.wgsl): each in its own block so that
// the compiler sees four independent copies to schedule.
{
    let kk = k4;
#include "gemm_kstep.wgsl"
}
{
    let kk = k4 + 1u;
#include "gemm_kstep.wgsl"
}
{
    let kk = k4 + 2u;
#include "gemm_kstep.wgsl"
}
{
    let kk = k4 + 3u;
#include "gemm_kstep.wgsl"
}
