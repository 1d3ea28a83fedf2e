// One k-step of gemm.wgsl's register tile (included by it, inside the
// k-tile loop: kk, ao, bo and the c<i><r><j> sums are the includer's):
// the thread's A and B vectors of step kk from workgroup memory, then
// TM x TN FMAs (H16T8: rows 4(ty + hp NTM) + r of pass hp, 4 x 8).
#ifdef H16T8
        let a0 = tv(As[ao + kk * AV + hp * NTM]);
#else
        let a0 = tv(As[ao + kk * AV + 0u * NTM]);
#if TM8
        let a1 = tv(As[ao + kk * AV + 1u * NTM]);
#endif
#endif
        let b0 = tv(Bs[bo + kk * BV + 0u * NTN]);
#if TN8
        let b1 = tv(Bs[bo + kk * BV + 1u * NTN]);
#endif
        c000 = fma(T4(a0.x), b0, c000);
        c010 = fma(T4(a0.y), b0, c010);
        c020 = fma(T4(a0.z), b0, c020);
        c030 = fma(T4(a0.w), b0, c030);
#if TN8
        c001 = fma(T4(a0.x), b1, c001);
        c011 = fma(T4(a0.y), b1, c011);
        c021 = fma(T4(a0.z), b1, c021);
        c031 = fma(T4(a0.w), b1, c031);
#endif
#ifndef H16T8
#if TM8
        c100 = fma(T4(a1.x), b0, c100);
        c110 = fma(T4(a1.y), b0, c110);
        c120 = fma(T4(a1.z), b0, c120);
        c130 = fma(T4(a1.w), b0, c130);
#if TN8
        c101 = fma(T4(a1.x), b1, c101);
        c111 = fma(T4(a1.y), b1, c111);
        c121 = fma(T4(a1.z), b1, c121);
        c131 = fma(T4(a1.w), b1, c131);
#endif
#endif
#endif
