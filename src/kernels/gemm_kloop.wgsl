// gemm.wgsl's k loop over one k-tile (BK steps; included by it for the
// register tile, and twice, once a pass, for H16T8's): the step of
// gemm_kstep.wgsl written out KU times (KU32 / KU16 / KU8 / KU4, through
// gemm_kstep8.wgsl and gemm_kstep4.wgsl), else a loop.
#if KU32
for (var k32 = 0u; k32 < {{BK}}u; k32 += 32u) {
    {
        let k8 = k32;
#include "gemm_kstep8.wgsl"
    }
    {
        let k8 = k32 + 8u;
#include "gemm_kstep8.wgsl"
    }
    {
        let k8 = k32 + 16u;
#include "gemm_kstep8.wgsl"
    }
    {
        let k8 = k32 + 24u;
#include "gemm_kstep8.wgsl"
    }
}
#else
#if KU16
for (var k16 = 0u; k16 < {{BK}}u; k16 += 16u) {
    {
        let k8 = k16;
#include "gemm_kstep8.wgsl"
    }
    {
        let k8 = k16 + 8u;
#include "gemm_kstep8.wgsl"
    }
}
#else
#if KU8
for (var k8 = 0u; k8 < {{BK}}u; k8 += 8u) {
#include "gemm_kstep8.wgsl"
}
#else
#if KU4
for (var k4 = 0u; k4 < {{BK}}u; k4 += 4u) {
#include "gemm_kstep4.wgsl"
}
#else
for (var kk = 0u; kk < {{BK}}u; kk++) {
#include "gemm_kstep.wgsl"
}
#endif
#endif
#endif
#endif
