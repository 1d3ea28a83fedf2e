/*
 * The mat-vec kernel's choice (matvec.c's header says what the variants
 * are): its weight layouts, its variants and the table that picks one per
 * device and shape, with the measurements behind each rule.
 */
#include "matvec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const mv_type types[] = {
    {WGML_F32, "QT_F32", "PLAIN", 8, 32, 32, false},     {WGML_F16, "QT_F16", "PLAIN", 8, 16, 32, false},
    {WGML_BF16, "QT_BF16", "PLAIN", 8, 16, 32, false},   {WGML_Q4_0, "QT_Q4_0;CODES", "NIB16", 32, 18, 32, true},
    {WGML_Q4_1, "QT_Q4_1", "NIB16", 32, 20, 0, false},   {WGML_Q5_0, "QT_Q5_0", "NIB16", 32, 22, 0, false},
    {WGML_Q5_1, "QT_Q5_1", "NIB16", 32, 24, 0, false},   {WGML_Q8_0, "QT_Q8_0;CODES", "Q8", 32, 34, 32, true},
    {WGML_Q2_K, "QT_Q2_K", "KQUANT", 256, 84, 0, false}, {WGML_Q3_K, "QT_Q3_K", "KQUANT", 256, 110, 0, false},
    {WGML_Q4_K, "QT_Q4_K;CODES", "KQUANT;K45", 256, 144, 64, true},
    {WGML_Q5_K, "QT_Q5_K", "KQUANT;K45", 256, 176, 0, false},
    {WGML_Q6_K, "QT_Q6_K;CODES", "KQUANT", 256, 210, 64, true}, {WGML_IQ4_NL, "QT_IQ4_NL", "NIB16", 32, 18, 0, false},
    {WGML_MXFP4, "QT_MXFP4", "NIB16", 32, 17, 0, false},
};

const mv_type *wg_mv_type(wgml_dtype dt)
{
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (types[i].dt == dt)
            return &types[i];
    return NULL;
}

/* The first eighteen are the table's; the rest exist to be forced and
 * timed against them (bench/NOTES.md). */
static const mv_variant variants[] = {
    {"sg_r1", 1, 128, true, 4, false, false, false, 0},  {"sg_r2", 2, 64, true, 4, false, false, false, 0},
    {"sg_r4", 4, 64, true, 2, false, false, false, 0},   {"wg_r1", 1, 128, false, 4, false, false, false, 0},
    {"wg_r2", 2, 64, false, 4, false, false, false, 0},  {"wg_r4", 4, 64, false, 2, false, false, false, 0},
    {"sgw_r1", 1, 128, true, 1, true, false, false, 0},  {"sgw_r2", 2, 64, true, 1, true, false, false, 0},
    {"sgw_r4", 4, 64, true, 1, true, false, false, 0},   {"wgw_r1", 1, 128, false, 1, true, false, false, 0},
    {"wgw_r2", 2, 64, false, 1, true, false, false, 0},  {"wgw_r4", 4, 64, false, 1, true, false, false, 0},
    {"sgq_r1", 1, 128, true, 1, true, true, false, 0},   {"sgq_r2", 2, 64, true, 1, true, true, false, 0},
    {"sgq_r4", 4, 64, true, 1, true, true, false, 0},    {"wgq_r1", 1, 128, false, 1, true, true, false, 0},
    {"wgq_r2", 2, 64, false, 1, true, true, false, 0},   {"wgq_r4", 4, 64, false, 1, true, true, false, 0},
    {"sg_r4u1", 4, 64, true, 1, false, false, false, 0}, {"sg_r4u4", 4, 64, true, 4, false, false, false, 0},
    {"sg_r2u8", 2, 64, true, 8, false, false, false, 0}, {"sg_r8u2", 8, 32, true, 2, false, false, false, 0},
    {"sgw_r4u2", 4, 64, true, 2, true, false, false, 0}, {"sgw_r8", 8, 32, true, 1, true, false, false, 0},
    {"sgq_r4u2", 4, 64, true, 2, true, true, false, 0},  {"sgq_r8", 8, 32, true, 1, true, true, false, 0},
    {"sgq_r2u2", 2, 64, true, 2, true, true, false, 0},  {"sgq_r4t32", 4, 32, true, 2, true, true, false, 0},
    {"sgq_r2t32", 2, 32, true, 2, true, true, false, 0}, {"sgq_r8u2", 8, 32, true, 2, true, true, false, 0},
    {"sgq_r8t64", 8, 64, true, 1, true, true, false, 0}, {"sgw_r4t32", 4, 32, true, 2, true, false, false, 0},
    {"sgw_r8u2", 8, 32, true, 2, true, false, false, 0},  {"sgq_r16", 16, 32, true, 1, true, true, false, 0},
    {"sgq_r4t128", 4, 128, true, 1, true, true, false, 0}, {"sgq_r4t256", 4, 256, true, 1, true, true, false, 0},
    {"sgq_r2t128", 2, 128, true, 1, true, true, false, 0}, {"sgq_r2t256", 2, 256, true, 1, true, true, false, 0},
    {"sgq_r1t256", 1, 256, true, 1, true, true, false, 0}, {"sgq_r8t128", 8, 128, true, 1, true, true, false, 0},
    {"sgx_r1", 1, 256, true, 1, true, true, true, 0}, {"sgx_r2", 2, 256, true, 1, true, true, true, 0},
    {"sgx_r4", 4, 256, true, 1, true, true, true, 0}, {"sgx_r2t128", 2, 128, true, 1, true, true, true, 0},
    {"sgx_r2t512", 2, 512, true, 1, true, true, true, 0}, {"sgx_r1t1024", 1, 1024, true, 1, true, true, true, 0},
    {"sgx_r2t512k2", 2, 512, true, 1, true, true, true, 2}, {"sgx_r2t1024k2", 2, 1024, true, 1, true, true, true, 2},
    {"sgx_r2t1024k4", 2, 1024, true, 1, true, true, true, 4},
};
#define NTABLE 18 /* variants the table picks from (and sgq_r4t256 for long rows) */

const mv_variant *wg_mv_named(const char *name)
{
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++)
        if (strcmp(variants[i].name, name) == 0)
            return &variants[i];
    return NULL;
}

/* main_xs's workgroups at most (xs_wgs). */
/* 528 = 4 a SM of an H100 / H200 (132 SMs).  H200, 32 products, sgx_r2 (µs)
 * for caps 264 / 528 / 1056 / 2112: 14336x4096 q4_K 663 / 609 / 719 / 668,
 * 128256x4096 q4_K 3575 / 2740 / 2870 / 3015; the 8B decode 276 at 528,
 * 270 at 1056 (bench/NOTES.md). */
#define XS_WGS 528u

/* Workgroups of a main_xs dispatch at most: past them each walks several
 * groups of rows.  WGML_MV_XS_WGS=n overrides (timing). */
uint32_t wg_mv_xs_wgs(void)
{
    const char *e = getenv("WGML_MV_XS_WGS");
    long v = e && *e ? strtol(e, NULL, 10) : 0;
    return v > 0 ? (uint32_t)v : XS_WGS;
}

/* WGML_MV_PROBE=1..9 (timing probes of main_xs, results wrong; README):
 * matvec_wide.wgsl's weight loads alone, its arithmetic alone (every load
 * an L1 hit), the dispatch alone, x's quantising alone, that with no
 * loads of x, that with one vector a lane, the dispatch and one store a
 * workgroup, that after a barrier (9: and x's workgroup memory written). */
const char *wg_mv_probe_defs(void)
{
    static const char *const probes[] = {";MV_PROBE_LOADS", ";MV_PROBE_ALU", ";MV_PROBE_EMPTY", ";MV_PROBE_QONLY",
                                         ";MV_PROBE_QONLY;MV_PROBE_NOX", ";MV_PROBE_QONLY;MV_PROBE_ONEV",
                                         ";MV_PROBE_STORE", ";MV_PROBE_BAR", ";MV_PROBE_BAR;MV_PROBE_SMEM"};
    const char *pe = getenv("WGML_MV_PROBE");
    int pi = pe ? atoi(pe) : 0;
    return pi >= 1 && pi <= 9 ? probes[pi - 1] : "";
}

/* Whether x's codes for k fit the device's workgroup memory beside the
 * kernel's few other words and `extra` bytes more (main_xs; the k split's
 * sums: wg_mv_ksum_bytes): k 4096 takes 5 KiB, 14336 17.5. */
bool wg_mv_xs_fits(wgml_ctx *ctx, int64_t k, uint64_t extra)
{
    wgml_device_info in;
    return wgml_device_info_get(ctx, &in) == WGML_OK &&
           wg_q8_row_words(k) * 4 + 64 + extra <= in.max_workgroup_storage;
}

/* 1: the table takes the integer path (sgq_ / wgq_) on GPUs for one
 * activation row of q4_0, q8_0, q4_K and q6_K; 0: the wide float path.
 * H100, Llama-3-8B-shaped q4_K decode (tg128, bench/NOTES.md): sgw_r4
 * 138.8 tokens/s, sgq_r4 176.2 (+27%), though `wgml bench matvec` (eager
 * calls: two dispatches and a scratch request each) shows it no faster. */
#define Q8_TABLE 1

/* The table's variant (unless WGML_FORCE names one): wide on GPUs for
 * one activation row of a dtype that has the wide path (block() still
 * falls back per window where alignment forbids it). */
wgml_status wg_mv_pick(wgml_ctx *ctx, const char *op, int64_t n, int64_t k, const mv_type *ty, int64_t rows,
                        const mv_variant **out, int *upt)
{
    char buf[32], names[512] = "";
    const char *f = wg_forced_variant("matvec", buf, sizeof buf);
    bool sg = wg_has(ctx, WGML_FEATURE_SUBGROUPS);
    if (!f) {
        /* The unit path on CPU adapters: lavapipe compiles each unrolled
         * unit's decode (test_op_matvec took 23 s with one a step, 105 s
         * with UPT 4), and a CPU has no memory latency to hide this way
         * (nor an L1 that the load count matters to). */
        bool cpu = wg_is_cpu(ctx);
        bool wide = !cpu && ty->ch && rows == 1;
        bool q8 = wide && ty->q8 && Q8_TABLE;
        /* WGML_MV_FLOAT_BELOW=m (timing): products of at most m million
         * weights take the wide float path (no x-quantising pass).  H200,
         * graph replay of 32 q4_K products, integer / float (µs): 2048x2048
         * 367 / 290 (rpw 2), 3072x2048 386-421 / 341, but 16384x2048 626 /
         * 986 and 6144x4096 552 / 700; all of k <= 2048 on the float path
         * made the 1B decode 20% slower (its 16384x2048 gate|up), and
         * test_graph_api's graph-against-eager check failed on the GPU
         * with it (2 of 9000 elements; not run down): not in the table. */
        const char *fb = getenv("WGML_MV_FLOAT_BELOW");
        if (q8 && fb && (double)n * (double)k <= atof(fb) * 1e6)
            q8 = false;
        int rpw = n >= 4096 ? 4 : n >= 1024 ? 2 : 1;
        for (size_t i = 0; i < NTABLE; i++)
            if (variants[i].rpw == rpw && variants[i].sg == sg && variants[i].wide == wide && variants[i].q8 == q8)
                *out = &variants[i];
        /* Long rows on the integer path: 256 threads (one 64-element chunk
         * each at k 14336) instead of 64 walking 3-4 chunks one round trip
         * at a time.  H200, graph replay, 32 x [4096, 14336] q4_K (the 8B
         * down projection): 810 -> 666 us (sgq_r4t256); at k 4096 it was
         * 2x slower (64 chunks a row leave 3/4 of the threads idle). */
        if (q8 && sg && rpw == 4 && ty->ch && k / ty->ch >= 128)
            *out = wg_mv_named("sgq_r4t256");
        /* Short rows of many rows on the integer path: 8 rows a workgroup
         * of 32 threads, one chunk a row each, where 64 threads would leave
         * half idle (k 2048: 32 chunks a row).  H200, graph replay of 32
         * products, sgq_r4 -> sgq_r8 (µs): 128256 x 2048 q6_K (a 1B's
         * vocabulary product) 5330 -> 3082 (0.31 -> 0.53 of copy), 16384 x
         * 2048 q4_K 577 -> 545, 16384 x 1024 553 -> 478; the 1B decode
         * (tg128) 624 -> 644-653 tokens/s (bench/NOTES.md); for fewer rows
         * it was slower (the 1B's 3072 x 2048: 432 -> 503, as were sgq_r2t32
         * and sgq_r4t32).  WGML_MV_SHORT (timing): r4 keeps sgq_r4 here, a
         * variant name takes that variant for short rows of fewer rows. */
        const char *sh = getenv("WGML_MV_SHORT");
        if (q8 && sg && ty->ch && k / ty->ch <= 32) {
            const mv_variant *v = sh && n < 16384 ? wg_mv_named(sh) : NULL;
            if (n >= 16384 && !(sh && !strcmp(sh, "r4")))
                *out = wg_mv_named("sgq_r8");
            else if (v && v->q8)
                *out = v;
        }
        /* One activation row: x quantised by each workgroup, no first pass
         * (sgx_r2, at most XS_WGS workgroups).  H200, graph replay of 32
         * products (µs, table -> sgx_r2; bench/NOTES.md): q4_K 4096x4096
         * 435 -> 342, 14336x4096 713 -> 609, 28672x4096 930 -> 907,
         * 4096x14336 723 -> 688, 16384x2048 602 -> 451; tg128 8B 270 ->
         * 276, 1B 726 -> 816.  Not q6_K vocabulary products (n >= 65536):
         * 128256x4096 5388 -> 5748. */
        bool vocab = ty->dt == WGML_Q6_K && n >= 65536, xs = q8 && sg && rows == 1 && wg_mv_xs_fits(ctx, k, 0);
        if (xs && !vocab)
            *out = wg_mv_named("sgx_r2");
        /* Long rows of many rows: 512 threads, 32 rows a workgroup, so half
         * as many workgroups each quantise x (14336 values: 448 blocks, one
         * round of threads) for twice the rows.  H200, tg128 (bench/NOTES.md):
         * the 8B's down product (4096 x 14336: 128 workgroups) 329.1 ->
         * 337.9 tokens/s; the 1B's (2048 x 8192: 64 workgroups, half the
         * SMs idle) 1,001 -> 972, and every product of the 8B on 512
         * threads 331.8: long rows of at least 4096 rows only.
         * WGML_MV_T512_CHUNKS (timing): the chunks a row from which. */
        wgml_device_info di;
        bool t512 = wgml_device_info_get(ctx, &di) == WGML_OK && di.max_invocations_per_workgroup >= 512;
        const char *tc = getenv("WGML_MV_T512_CHUNKS");
        int64_t long_row = tc && atoi(tc) > 0 ? atoi(tc) : 128;
        if (*out == wg_mv_named("sgx_r2") && n >= 4096 && ty->ch && k / ty->ch >= long_row && t512)
            *out = wg_mv_named("sgx_r2t512");
        /* q6_K vocabulary products on 512 threads too, rows of 64+ chunks:
         * H200, tg128 of the 8B (128256 x 4096 q6_K) 402.5 -> 409.3
         * tokens/s, the greedy text the same; the 1B's (128256 x 2048)
         * within noise, so not below 64 chunks (bench/NOTES.md 2026-11-27
         * (8), call 6).  WGML_MV_VOCAB (timing): "t512" at any k, "sgq"
         * never. */
        const char *vt = getenv("WGML_MV_VOCAB");
        bool vt512 = vt && *vt ? !strcmp(vt, "t512") : ty->ch && k / ty->ch >= 64;
        if (xs && vocab && vt512 && t512)
            *out = wg_mv_named("sgx_r2t512");
        /* Float weights (f16, bf16, f32), one row: the unit path, whose
         * lanes read consecutive 16-byte pieces, not the wide path's
         * 32-128-byte chunks a lane.  H200, 32 products (µs, f16 / bf16 /
         * f32, wide -> unit; bench/NOTES.md): 4096x4096 584 / 572 / 993 ->
         * 494 / 510 / 844 (sg_r2u8), 14336x4096 1583 / 1588 / 3382 -> 1169
         * / 1185 / 2432 (sg_r4u4), 4096x14336 1413 / 1414 / 2967 -> 1167 /
         * 1230 / 2463 (sg_r2u8), 128256x2048 5193 / 5170 / 11409 -> 4496 /
         * 4713 / 9769 (sg_r4u4): better on every shape timed. */
        bool flt = ty->dt == WGML_F16 || ty->dt == WGML_BF16 || ty->dt == WGML_F32;
        if (!cpu && sg && rows == 1 && flt)
            *out = wg_mv_named(n >= 8192 ? "sg_r4u4" : "sg_r2u8");
        *upt = cpu ? 1 : (*out)->upt;
        return WGML_OK;
    }
    const mv_variant *v = wg_mv_named(f);
    if (v && v->sg && !sg)
        return wg_fail(WGML_ERR_UNSUPPORTED, "%s: WGML_FORCE matvec=%s needs subgroups, which this device "
                       "does not have (use a wg_ variant)", op, f);
    if (v) {
        *out = v;
        *upt = v->upt;
        return WGML_OK;
    }
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", variants[i].name);
    return wg_fail(WGML_ERR_INVALID_ARG, "%s: WGML_FORCE matvec=%s is not a variant (variants: %s)", op, f, names);
}

