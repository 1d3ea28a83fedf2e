// gemm.wgsl's k-tile loop (included by it once, or twice with FASTLD:
// `whole` a constant true in the copy for workgroups whose tile is
// interior with every k-tile full, false in the other).  A per-tile
// choice between the edge-checked and the plain loads in one loop cost
// t128 8% on an H200: its compiler copied the loaded vector out of the
// load's registers where the two paths joined, at the top of the k-tile,
// and waited there for the load (bench/NOTES.md 2026-11-28).
    for (var kt = 0u; kt < ntiles; kt++) {
        let cur = kt % {{NBUF}}u;
#ifdef GEMM_NOLOAD
        let more = false;  // timing probe (WGML_GEMM_PROBE=1): the k-tiles' loads and stores skipped
#else
        let more = kt + 1u < ntiles;
#endif
        let nb = (kt + 1u) % {{NBUF}}u;
        // The next tile's global loads are issued before this tile's math
        // (after its first two steps instead, t128 lost 10% on an H200:
        // the loads need the whole tile to land).  They are not in an
        // `if (more)`: NVIDIA's compiler merged such a block with the
        // stores' one after the math, so every k-tile waited a whole DRAM
        // round trip (H200 SASS of h64: the LDGs right before the STS).
        // The last tile loads itself again instead (in bounds), unused.
#ifndef GEMM_NOLOAD
#if GEMM_LDIF
        var t = TileLd();
        if (more) {
            t = tile_ld(abase, bbase, m0, n0, kbeg + (kt + 1u) * {{BK}}u, kend, ga, gb, whole);
        }
#else
        let t = tile_ld(abase, bbase, m0, n0, kbeg + min(kt + 1u, ntiles - 1u) * {{BK}}u, kend, ga, gb, whole);
#endif
#endif
        let ao = cur * ASZ + ty;
        let bo = cur * BSZ + tx;
#ifdef H16T8
        // f16 8 x 8: two passes over the tile, rows 4(ty + hp NTM) + r, on
        // one set of 8 f16 sum vectors (16 registers, not 32).  With 16 sum
        // vectors h128 ran 27 TFLOP/s (H200, 4096^3) against h64's 37: past
        // 128 registers only one 256-thread workgroup fits an SM.
        for (var hp = 0u; hp < 2u; hp++) {
#include "gemm_kloop.wgsl"
            if (hp == 0u) {
                f000 += vec4<f32>(c000);
                c000 = T4();
                f001 += vec4<f32>(c001);
                c001 = T4();
                f010 += vec4<f32>(c010);
                c010 = T4();
                f011 += vec4<f32>(c011);
                c011 = T4();
                f020 += vec4<f32>(c020);
                c020 = T4();
                f021 += vec4<f32>(c021);
                c021 = T4();
                f030 += vec4<f32>(c030);
                c030 = T4();
                f031 += vec4<f32>(c031);
                c031 = T4();
            } else {
                f100 += vec4<f32>(c000);
                c000 = T4();
                f101 += vec4<f32>(c001);
                c001 = T4();
                f110 += vec4<f32>(c010);
                c010 = T4();
                f111 += vec4<f32>(c011);
                c011 = T4();
                f120 += vec4<f32>(c020);
                c020 = T4();
                f121 += vec4<f32>(c021);
                c021 = T4();
                f130 += vec4<f32>(c030);
                c030 = T4();
                f131 += vec4<f32>(c031);
                c031 = T4();
            }
        }
#else
        // The k-step written out KU times (gemm_kloop.wgsl).  Left a loop,
        // NVIDIA's compiler kept t128's 8 steps rolled (H200 SASS,
        // bench/sass.py): each step's 4 LDS.128 right before its 64 FFMA
        // (their latency exposed) and 7 MOVs + 8 address instructions of
        // loop overhead a step, ~77% of its instructions FFMA.  Written
        // out: t128 4096^3 30.0 -> 35.9 TFLOP/s (H200; 4 steps a loop
        // iteration: 28.8), h64 whole 36.8 -> 42.4 (src/ops/gemm.c).
#include "gemm_kloop.wgsl"
#ifdef H16
        // the tile's f16 sums into the f32 totals (h64, h128x64)
        f000 += vec4<f32>(c000);
        c000 = T4();
        f010 += vec4<f32>(c010);
        c010 = T4();
        f020 += vec4<f32>(c020);
        c020 = T4();
        f030 += vec4<f32>(c030);
        c030 = T4();
#if TN8
        f001 += vec4<f32>(c001);
        c001 = T4();
        f011 += vec4<f32>(c011);
        c011 = T4();
        f021 += vec4<f32>(c021);
        c021 = T4();
        f031 += vec4<f32>(c031);
        c031 = T4();
#endif
#if TM8
        f100 += vec4<f32>(c100);
        c100 = T4();
        f110 += vec4<f32>(c110);
        c110 = T4();
        f120 += vec4<f32>(c120);
        c120 = T4();
        f130 += vec4<f32>(c130);
        c130 = T4();
#if TN8
        f101 += vec4<f32>(c101);
        c101 = T4();
        f111 += vec4<f32>(c111);
        c111 = T4();
        f121 += vec4<f32>(c121);
        c121 = T4();
        f131 += vec4<f32>(c131);
        c131 = T4();
#endif
#endif
#endif
#endif
#if SINGLE_BUFFER
        workgroupBarrier();
#endif
        if (more) {
#ifndef GEMM_NOLOAD
            tile_put(nb, ga, gb, t);
#endif
        }
        workgroupBarrier();
    }
