/* Attention (wgml_attention) against a double-precision CPU reference
 * (wg_attention_ref: softmax(scale q.k^T + mask) v, masks and sinks as
 * wgml.h states): head dims 64, 80, 96, 128, 256 and generic 40 / 72 /
 * (48, 32); GQA and MQA; causal with Sq < Skv, Sq = Skv and Sq = 1;
 * additive (f32, f16) and boolean (bool, u8) masks broadcast from fewer
 * dims; sliding window; sinks; soft-capping; ALiBi; [B, S, H, D] layouts
 * as permuted views (out too); f16 and q8_0 K/V (the reference uses the
 * dequantised values, bit-exact); f16 q and out; fully masked rows; odd
 * Skv; every variant forced (WGML_FORCE=attn=..., the subgroup decode
 * kernel where the subgroups are wide enough); invalid calls; one graph.
 * Inputs uniform in [-1, 1] from the fixed seed.
 *
 * Tolerance (absolute; outputs are convex combinations of v, |v| <= 1):
 *   atol = 2e-6 + 3 * 2^-24 * (D + Skv).  The score scale * q.k sums D
 *   products of |.| <= 1 in f32: at most D * 2^-24 * sum|q_d k_d| * scale
 *   <= D * 2^-24 * sqrt(D) in the worst case, but the fma chain's errors
 *   are random-signed, ~sqrt(D) * 2^-24 * |terms| ~ D * 2^-24 here; a
 *   score error e changes a probability by a factor exp(e) ~ 1 + e, i.e.
 *   the output by <= e.  The online sum of Skv terms (rescaled per tile)
 *   and the P.V sum add ~Skv * 2^-24 relative; WGSL's exp is good to
 *   3 + 2|x| ulps (|x| <= ~12 here: 27 ulps = 1.6e-6, in the 2e-6).
 *   Soft-capping adds the tanh's few ulps, ALiBi the slope's exp2 (~1e-6
 *   relative, times |mask| <= 1).  f16 outputs add one f16 rounding
 *   (op_harness.h's t_tol).
 */
#include "op_harness.h"
#include "ops/attention.h"
#include "ops/quant.h"
#include "wgml_graph.h"

#include <stdlib.h>

typedef struct at_case {
    int64_t b, hq, hkv, sq, skv, d, dv;
    wgml_dtype qdt, kdt, vdt, odt;
    wgml_dtype mdt;
    int mndim;               /* 0: no mask */
    int64_t mshape[4];
    double masked;           /* fraction of mask entries masked */
    bool dead_rows;          /* every third query row fully masked */
    bool sinks;
    wgml_attn_params p;
    bool bshd;               /* q, k, v, out are [B, S, H, D] permuted views */
    const char *force;       /* WGML_FORCE value, or NULL */
    const char *expect_var;  /* the table must pick this variant's kernel (NULL: any) */
} at_case;

/* A [b, h, s, d] input of dtype dt (a permuted [b, s, h, d] tensor when
 * bshd); vals receives its values in [b, h, s, d] order. */
static wgml_tensor *make_in(wgml_dtype dt, int64_t b, int64_t h, int64_t s, int64_t d, bool bshd, wgml_tensor **own,
                            double *vals)
{
    int64_t n = b * h * s * d;
    int64_t shape[4] = {b, bshd ? s : h, bshd ? h : s, d};
    float *f = malloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)t_uniform(-1, 1);
    size_t bytes = (size_t)(n / (int64_t)wgml_dtype_block_elems(dt) * (int64_t)wgml_dtype_block_bytes(dt));
    void *host = malloc(bytes + 8);
    if (dt == WGML_Q8_0) {
        wg_quantize_ref(WGML_QT_Q8_0, f, host, n);
        wg_dequantize_ref(WGML_QT_Q8_0, host, f, n);
    }
    for (int64_t i = 0; i < n; i++) { /* i in storage order */
        double x = f[i];
        if (dt != WGML_Q8_0) {
            wg_host_set(dt, host, (size_t)i, x);
            x = wg_host_get(dt, host, (size_t)i);
        }
        int64_t dd = i % d, r = i / d, c2 = r % shape[2], c1 = (r / shape[2]) % shape[1], bb = r / (shape[1] * shape[2]);
        int64_t hh = bshd ? c2 : c1, ss = bshd ? c1 : c2;
        vals[((bb * h + hh) * s + ss) * d + dd] = x;
    }
    CHECK_OK(wgml_tensor_new(t_ctx, dt, 4, shape, own));
    CHECK_OK(wgml_tensor_upload(*own, host, bytes));
    free(host);
    free(f);
    wgml_tensor *v = NULL;
    if (bshd)
        CHECK_OK(wgml_view_permute(*own, (const int[]){0, 2, 1, 3}, &v));
    else
        CHECK_OK(wgml_view_permute(*own, (const int[]){0, 1, 2, 3}, &v));
    return v;
}

static double tol_of(const at_case *c) { return 2e-6 + 3 * ldexp(1.0, -24) * (double)(c->d + c->skv); }

static void run_case(const char *what, const at_case *c)
{
    int64_t B = c->b, Hq = c->hq, Hkv = c->hkv, Sq = c->sq, Skv = c->skv, D = c->d, Dv = c->dv;
    double *qv = malloc(sizeof(double) * (size_t)(B * Hq * Sq * D + 1));
    double *kv = malloc(sizeof(double) * (size_t)(B * Hkv * Skv * D + 1));
    double *vv = malloc(sizeof(double) * (size_t)(B * Hkv * Skv * Dv + 1));
    double *mv = NULL, *sv = NULL, *want = malloc(sizeof(double) * (size_t)(B * Hq * Sq * Dv + 1));
    wgml_tensor *own[6] = {0}, *q, *k, *v, *m = NULL, *s = NULL, *o;
    q = make_in(c->qdt, B, Hq, Sq, D, c->bshd, &own[0], qv);
    k = make_in(c->kdt, B, Hkv, Skv, D, c->bshd, &own[1], kv);
    v = make_in(c->vdt, B, Hkv, Skv, Dv, c->bshd, &own[2], vv);
    bool mbool = c->mdt == WGML_BOOL || c->mdt == WGML_U8;
    if (c->mndim) {
        t_tensor mt = t_random(c->mdt, c->mndim, c->mshape, -1, 1);
        const int64_t full[4] = {B, Hq, Sq, Skv};
        int64_t nf = B * Hq * Sq * Skv;
        mv = malloc(sizeof(double) * (size_t)(nf + 1));
        /* masked entries: -inf / 0, chosen on the stored tensor */
        for (int64_t i = 0; i < mt.n; i++) {
            int64_t qi = c->mndim >= 2 ? (i / c->mshape[c->mndim - 1]) % c->mshape[c->mndim - 2] : 0;
            bool dead = c->dead_rows && qi % 3 == 0;
            bool off = dead || t_uniform(0, 1) < c->masked;
            double x = mbool ? (off ? 0 : 1 + (double)(t_rand() % 3)) : off ? -INFINITY : mt.val[i];
            wg_host_set(c->mdt, mt.host, (size_t)i, x);
            mt.val[i] = wg_host_get(c->mdt, mt.host, (size_t)i);
        }
        CHECK_OK(wgml_tensor_upload(mt.t, mt.host, wgml_tensor_nbytes(mt.t)));
        for (int64_t i = 0; i < nf; i++)
            mv[i] = mt.val[t_bcast_index(c->mndim, c->mshape, full, i)];
        m = mt.t;
        mt.t = NULL;
        t_free(&mt);
    }
    if (c->sinks) {
        t_tensor st = t_random(WGML_F32, 1, (int64_t[]){Hq}, -2, 2);
        sv = st.val;
        st.val = NULL;
        s = st.t;
        st.t = NULL;
        t_free(&st);
    }
    int64_t oshape[4] = {B, c->bshd ? Sq : Hq, c->bshd ? Hq : Sq, Dv};
    own[3] = t_poisoned(c->odt, 4, oshape);
    CHECK_OK(wgml_view_permute(own[3], c->bshd ? (const int[]){0, 2, 1, 3} : (const int[]){0, 1, 2, 3}, &o));
    if (c->force)
        t_env("WGML_FORCE", c->force);
    wgml_status st = wgml_attention(q, k, v, m, s, &c->p, o);
    if (c->force)
        t_env("WGML_FORCE", NULL);
    CHECK(st == WGML_OK, "%s: %s: %s", what, wgml_status_name(st), wgml_last_error());
    if (st == WGML_OK && c->expect_var) {
        const char *kn = wg_last_dispatch(t_ctx);
        CHECK(kn && strstr(kn, c->expect_var), "%s: last kernel %s, expected %s", what, kn ? kn : "-", c->expect_var);
    }
    if (st == WGML_OK) {
        wg_attn_ref_args r = {B, Hq, Hkv, Sq, Skv, D, Dv, qv, kv, vv, mv, sv, mbool, c->p};
        wg_attention_ref(&r, want);
        double *got = t_values(o);
        CHECK(t_compare(what, c->odt, got, want, B * Hq * Sq * Dv, 0, tol_of(c)) == 0, "%s: mismatches", what);
        free(got);
    }
    wgml_tensor_free(q);
    wgml_tensor_free(k);
    wgml_tensor_free(v);
    wgml_tensor_free(o);
    wgml_tensor_free(m);
    wgml_tensor_free(s);
    for (int i = 0; i < 4; i++)
        wgml_tensor_free(own[i]);
    free(qv);
    free(kv);
    free(vv);
    free(mv);
    free(sv);
    free(want);
}

#define F32 WGML_F32
#define F16 WGML_F16
#define Q8 WGML_Q8_0

static void set_shape(int64_t dst[4], const int64_t src[4]) { memcpy(dst, src, sizeof(int64_t) * 4); }

static at_case basic(int64_t b, int64_t hq, int64_t hkv, int64_t sq, int64_t skv, int64_t d)
{
    at_case c;
    memset(&c, 0, sizeof c);
    c.b = b, c.hq = hq, c.hkv = hkv, c.sq = sq, c.skv = skv, c.d = c.dv = d;
    c.qdt = c.kdt = c.vdt = c.odt = c.mdt = F32;
    return c;
}

/* The cases share compiled kernels (lavapipe takes 2-4 s of CPU to
 * compile each one, and CI runs this test in four modes on two cores).
 * Feature switches, the mask dtype and split runs are uniform flags, and
 * a CPU driver's kernels take head dim classes (64, 128, 256) with D a
 * runtime bound, so for f32 q/k/v/out the table's picks are
 *   A  t32, class 64 (D <= 64, 16..31 rows = grouped heads x queries):
 *      head dims 64 and generic, every mask and feature;
 *   B  t16, class 128 (D 65..128; t32 does not fit 32 KiB there);
 *   C  t8, class 256, which is also splitkv's fallback tile;
 *   S  splitkv (the decode kernel), class 128, any K/V dtype (a uniform
 *      on CPU drivers), and R, attn_reduce;
 * plus t64 (forced), the f16 q/out + q8_0 K/V kernel and the graph's
 * (its operands share the arena: read_write bindings), and with subgroups
 * D  dsg / dsg_np (one kernel on CPU drivers, class 64, any K/V dtype)
 *    and M, attn_merge:
 * 10 attention kernels in every mode, and fa_prefill's 3 (t_fa).  Under WGML_MAX_BINDING=65536 the
 * splitkv cases, one dsg case and one A case (300 keys of D 64 f32: 75
 * KiB a head) run their keys in pieces (CARRY) on those same kernels.
 * Shapes below are picked for those tiles: a new case should land on one
 * of them. */

/* Each head dim class, f32, causal prefill with Sq < Skv (A, B, C). */
static void t_head_dims(void)
{
    static const int64_t ds[] = {64, 80, 96, 128, 256, 40, 72};
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) {
        at_case c = basic(1, 2, 1, 9, 21, ds[i]);
        c.p.causal = 1;
        char w[64];
        snprintf(w, sizeof w, "D=%lld causal GQA", (long long)ds[i]);
        run_case(w, &c);
    }
    at_case c = basic(1, 2, 2, 17, 19, 48); /* D != Dv, generic */
    c.dv = 32;
    run_case("D=48 Dv=32", &c);
}

/* GQA / MQA, Sq = Skv, Sq > Skv, both layouts, dtypes (A unless noted). */
static void t_shapes_dtypes(void)
{
    at_case c = basic(2, 4, 1, 7, 7, 64); /* MQA, Sq = Skv causal */
    c.p.causal = 1;
    c.bshd = true;
    run_case("MQA Sq=Skv causal bshd", &c);
    c = basic(1, 2, 1, 9, 45, 64); /* its own kernel: the dtypes (f16 K/V: S) */
    c.qdt = F16;
    c.odt = F16;
    c.kdt = c.vdt = Q8;
    c.p.scale = 0.3f;
    c.bshd = true;
    run_case("f16 q/out, q8_0 K/V, scale, bshd", &c);
    c = basic(1, 2, 1, 12, 5, 64); /* Sq > Skv, causal: early rows see nothing */
    c.p.causal = 1;
    run_case("Sq > Skv causal (empty rows)", &c);
}

/* Masks (additive f32 / f16, bool, u8; broadcast), window, sinks,
 * softcap, ALiBi, fully masked rows: all on A. */
static void t_masks_features(void)
{
    at_case c = basic(2, 3, 1, 7, 33, 64);
    c.mndim = 4;
    set_shape(c.mshape, (int64_t[4]){2, 3, 7, 33});
    c.masked = 0.2;
    run_case("additive f32 mask full", &c);
    c.mdt = F16;
    c.mndim = 2;
    set_shape(c.mshape, (int64_t[4]){7, 33});
    c.dead_rows = true;
    c.p.max_bias = 8;
    run_case("f16 mask [Sq, Skv], ALiBi, dead rows", &c);
    c.mdt = WGML_U8;
    c.mndim = 3;
    set_shape(c.mshape, (int64_t[4]){3, 7, 33});
    c.p.max_bias = 0;
    run_case("u8 mask, dead rows", &c);
    /* 300 keys: pieces under WGML_MAX_BINDING=65536 (CARRY, then reduce
     * with the sinks) */
    c.mdt = WGML_BOOL;
    c.skv = 300;
    c.mndim = 4;
    set_shape(c.mshape, (int64_t[4]){1, 3, 1, 300});
    c.dead_rows = false;
    c.masked = 0.5;
    c.sinks = true;
    run_case("bool mask [1, H, 1, Skv], sinks, 300 keys", &c);
    c = basic(1, 4, 2, 12, 30, 64);
    c.p.causal = 1;
    c.p.window = 5;
    c.sinks = true;
    run_case("window 5 causal, sinks", &c);
    c.p.softcap = 2.5f;
    c.p.scale = 2.0f;
    run_case("softcap", &c);
    c = basic(1, 12, 3, 4, 20, 32);
    c.mndim = 2;
    set_shape(c.mshape, (int64_t[4]){4, 20});
    c.p.max_bias = 8;
    run_case("ALiBi 12 heads", &c);
}

/* The last kernel of the table's decode: dsg's merge pass on GPUs whose
 * subgroups hold a key's octets of head dim d, else splitkv's reduce. */
static const char *table_reduce(int64_t d)
{
    wgml_device_info i;
    CHECK_OK(wgml_device_info_get(t_ctx, &i));
    bool dsg = strcmp(i.device_type, "cpu") != 0 && i.subgroup_size >= (uint32_t)wg_attn_lpk(d, d);
    return dsg ? "attn_merge" : "attn_reduce";
}

/* Every variant forced, on the head dim whose kernel the table already
 * built (t32: A, t16: B, t8: C, splitkv: S), then the decode kernel's
 * paths: 16-byte and element loads, many chunks, f32 and q8_0 K/V. */
static void t_variants(void)
{
    static const struct {
        const char *force;
        int64_t d;
        wgml_dtype kv;
    } vs[] = {{"attn=t64", 64, F32}, {"attn=t32", 64, F32}, {"attn=t16", 128, F32},
              {"attn=t8", 256, F32}, {"attn=splitkv", 128, F16}};
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++) {
        /* 61 keys: D 256 f32 K stays in one 64 KiB binding */
        at_case c = basic(1, 4, 2, 13, 61, vs[i].d);
        c.kdt = c.vdt = vs[i].kv;
        c.p.causal = 1;
        c.sinks = true;
        c.mndim = 2;
        set_shape(c.mshape, (int64_t[4]){13, 61});
        c.masked = 0.1;
        c.force = vs[i].force;
        run_case(vs[i].force, &c);
    }
    /* decode, odd Skv: the table's decode kernel (CPU drivers: splitkv) */
    at_case c = basic(1, 8, 2, 1, 301, 128);
    c.kdt = c.vdt = F16;
    c.sinks = true;
    c.p.causal = 1;
    c.expect_var = table_reduce(128);
    run_case("decode 1 query, 301 keys, causal (the table's)", &c);
    /* A long cache: 65 chunks of 64 keys, the last one 3 keys (4099 = 64 *
     * 64 + 3), the [B, S, H, D] layout (keys 256 elements apart, still
     * 16-byte vectors), every score feature at once; under 64 KiB windows
     * 17 pieces of 255 keys, each merged into the runs (CARRY). */
    c = basic(1, 8, 2, 1, 4099, 128);
    c.kdt = c.vdt = F16;
    c.bshd = true;
    c.sinks = true;
    c.mdt = F16;
    c.mndim = 1;
    set_shape(c.mshape, (int64_t[4]){4099});
    c.masked = 0.3;
    c.p.max_bias = 8;
    c.p.softcap = 20;
    c.expect_var = table_reduce(128);
    run_case("decode 4099 keys bshd, f16 mask, ALiBi, softcap, sinks", &c);
    /* D 100: octets of 8 do not tile D, so K/V load element by element
     * (the path of strided and unaligned views too), the last octet 4 long */
    c = basic(1, 4, 1, 2, 700, 100);
    c.kdt = c.vdt = F16;
    c.p.causal = 1;
    c.p.window = 500;
    c.expect_var = table_reduce(100);
    run_case("decode D=100 (element loads), 2 queries, window", &c);
    /* f32 K (two 16-byte vectors an octet) with q8_0 V (element decode):
     * on CPU drivers the same kernel (the K/V dtypes are uniforms there) */
    c = basic(1, 2, 1, 2, 260, 96);
    c.vdt = Q8;
    c.force = "attn=splitkv";
    c.p.window = 100;
    c.p.causal = 1;
    run_case("splitkv D=96 f32 K, q8_0 V, window", &c);
}

/* The subgroup decode kernel (dsg, dsg_np) forced, where the device has
 * subgroups wide enough (on lavapipe, 8 lanes: D <= 64, head dim class
 * 64, one kernel per variant for every K/V dtype; q and out f32 so the
 * cases share it; its merge pass is one more).  Covered: 16-byte and
 * element loads (D 60), f16 / f32 / q8_0 K/V, several chunks and the merge
 * pass, one chunk writing the output itself (sinks joined there), a mask
 * shared by the rows (F_MROW) and one per row, two row blocks (8 rows), 2
 * queries, causal, window, softcap, ALiBi, sinks; under 64 KiB windows
 * the 600-key case runs in 3 pieces (CARRY). */
static void t_dsg(void)
{
    wgml_device_info info;
    CHECK_OK(wgml_device_info_get(t_ctx, &info));
    if (info.subgroup_size < 8) {
        printf("  (dsg skipped: subgroups of %u lanes)\n", info.subgroup_size);
        return;
    }
    /* GQA decode as an LLM binds it: a bool [1, Skv] mask, [B, S, H, D]
     * cache layout, several chunks (lavapipe: 5 of 64 keys) + attn_merge */
    at_case c = basic(1, 8, 2, 1, 300, 64);
    c.kdt = c.vdt = F16;
    c.bshd = true;
    c.mdt = WGML_BOOL;
    c.mndim = 2;
    set_shape(c.mshape, (int64_t[4]){1, 300});
    c.masked = 0.3;
    c.sinks = true;
    c.p.causal = 1;
    c.force = "attn=dsg";
    c.expect_var = "attn_merge";
    run_case("dsg GQA decode, bool mask, sinks, chunks", &c);
    c.force = "attn=dsg_np";
    run_case("dsg_np GQA decode, bool mask, sinks, chunks", &c);
    c.force = "attn=dsg_t256"; /* 256 threads: twice the key groups (timing variant) */
    run_case("dsg_t256 GQA decode, bool mask, sinks, chunks", &c);
    /* one chunk (30 keys, below WG_ATTN_DSG_MIN_CHUNK): the output
     * written by attn_dsg, sinks there; 8 rows (two blocks), D 60
     * (element loads, a 4-element octet), a per-row f16 mask with ALiBi,
     * softcap, window */
    c = basic(1, 8, 1, 1, 30, 60);
    c.kdt = c.vdt = F16;
    c.mdt = F16;
    c.mndim = 4;
    set_shape(c.mshape, (int64_t[4]){1, 8, 1, 30});
    c.masked = 0.2;
    c.p.max_bias = 8;
    c.p.softcap = 3;
    c.p.window = 20;
    c.p.causal = 1;
    c.sinks = true;
    c.force = "attn=dsg";
    c.expect_var = "attn_dsg";
    run_case("dsg one chunk D=60, per-row f16 mask, ALiBi, softcap, window, sinks", &c);
    /* f32 K, q8_0 V, 2 queries x 4 heads, 600 keys (3 pieces of 64 KiB) */
    c = basic(1, 4, 1, 2, 600, 64);
    c.vdt = Q8;
    c.p.causal = 1;
    c.p.window = 450;
    c.force = "attn=dsg";
    c.expect_var = "attn_merge";
    run_case("dsg f32 K, q8_0 V, 2 queries, window", &c);
    /* D 256 (gemma3's): 32 lanes a key, so the dots' reduce-scatter runs
     * its xor 16 step; GPUs with subgroups of 32+ lanes only (not lavapipe) */
    if (info.subgroup_size >= 32) {
        c = basic(1, 8, 2, 1, 300, 256);
        c.kdt = c.vdt = F16;
        c.p.causal = 1;
        c.sinks = true;
        c.force = "attn=dsg";
        c.expect_var = "attn_merge";
        run_case("dsg D=256 GQA decode, sinks, chunks", &c);
    }
}

/* The register-tiled prefill kernel (attention_fa.wgsl), forced: fa64 and
 * fa64k32 (32 keys a tile) at head dim class 64 (f32) and fa32 at class 128 (f16 q and out, q8_0 K,
 * f16 V; lavapipe's 32 KiB holds fa64 only up to D 64).  Several
 * row blocks (heaviest first) and 16-key tiles, a last tile cut short,
 * [B, S, H, D] views, every score feature; D 40 / Dv 56 pads both to 64
 * (zeros past D, outputs past Dv unwritten); tiles that need the scale
 * alone (tile_plain) in fa64 and fa32, the others through score_of; the
 * fa64 cases load each tile a phase ahead (PF), fa32 at D 128 does not;
 * under WGML_MAX_BINDING=65536
 * the 300-key case runs in pieces (F_SPLIT, CARRY, then attn_reduce). */
static void t_fa(void)
{
    wgml_device_info info;
    CHECK_OK(wgml_device_info_get(t_ctx, &info));
    if (info.subgroup_size < 8) { /* refused by name then: invalid_calls */
        printf("  (fa skipped: subgroups of %u lanes)\n", info.subgroup_size);
        return;
    }
    at_case c = basic(2, 4, 2, 50, 300, 64); /* rows 2 x 50: two blocks */
    c.p.causal = 1;
    c.bshd = true;
    c.sinks = true;
    c.mndim = 4;
    set_shape(c.mshape, (int64_t[4]){2, 4, 50, 300});
    c.masked = 0.1;
    c.force = "attn=fa64";
    run_case("fa64 causal GQA bshd, f32 mask, sinks, 300 keys", &c);
    c = basic(1, 2, 1, 70, 308, 64); /* no mask: tiles below the diagonal take the scale alone (row 0 sees
                                      * keys 0..238, the tile of 224..239 is the first that may not) */
    c.p.causal = 1;
    c.force = "attn=fa64";
    run_case("fa64 causal GQA, plain tiles", &c);
    c.force = "attn=fa64k32"; /* 32 keys a tile (the 224..239 tile's half) */
    run_case("fa64k32 causal GQA, plain tiles", &c);
    c = basic(1, 3, 1, 21, 45, 40); /* MQA, 63 rows, padded dims */
    c.dv = 56;
    c.p.window = 9;
    c.p.causal = 1;
    c.p.softcap = 3;
    c.p.max_bias = 8;
    c.mdt = F16;
    c.mndim = 2;
    set_shape(c.mshape, (int64_t[4]){21, 45});
    c.masked = 0.2;
    c.dead_rows = true;
    c.force = "attn=fa64";
    c.expect_var = "attn[FA;BQ=64";
    run_case("fa64 D=40 Dv=56, window, softcap, ALiBi, dead rows", &c);
    c = basic(1, 8, 2, 33, 130, 128); /* rows 4 x 33: five blocks of 32 */
    c.qdt = c.odt = F16;
    c.kdt = Q8;
    c.vdt = F16;
    c.p.causal = 1;
    c.force = "attn=fa32";
    c.expect_var = "attn[FA;BQ=32";
    run_case("fa32 D=128 f16 q/out, q8_0 K, f16 V, causal", &c);
}

/* A forced variant refused for q = k = v [1, 2, sq, 256] f32: UNSUPPORTED
 * with a message naming why (one of two phrases). */
static void refused(const char *force, int64_t sq, const char *why, const char *or_why)
{
    wgml_tensor *q = NULL, *o = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, F32, 4, (int64_t[]){1, 2, sq, 256}, &q));
    CHECK_OK(wgml_tensor_new(t_ctx, F32, 4, (int64_t[]){1, 2, sq, 256}, &o));
    t_env("WGML_FORCE", force);
    wgml_status st = wgml_attention(q, q, q, NULL, NULL, NULL, o);
    t_env("WGML_FORCE", NULL);
    const char *e = wgml_last_error();
    CHECK(st == WGML_ERR_UNSUPPORTED && (strstr(e, why) || (or_why && strstr(e, or_why))), "%s at D 256: %s", force,
          e);
    wgml_tensor_free(q);
    wgml_tensor_free(o);
}

static void t_errors(void)
{
    wgml_tensor *q = NULL, *k = NULL, *v = NULL, *o = NULL, *bad = NULL, *i32 = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, F32, 4, (int64_t[]){1, 4, 8, 16}, &q)); /* 16 rows: A */
    CHECK_OK(wgml_tensor_new(t_ctx, F32, 4, (int64_t[]){1, 3, 5, 16}, &k)); /* 4 heads not a multiple of 3 */
    CHECK_OK(wgml_tensor_new(t_ctx, F32, 4, (int64_t[]){1, 2, 5, 16}, &v));
    CHECK_OK(wgml_tensor_new(t_ctx, F32, 4, (int64_t[]){1, 4, 8, 16}, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, F32, 3, (int64_t[]){4, 3, 16}, &bad));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 4, (int64_t[]){1, 2, 5, 16}, &i32));
    CHECK(wgml_attention(q, k, v, NULL, NULL, NULL, o) == WGML_ERR_SHAPE, "GQA ratio accepted: %s",
          wgml_last_error());
    CHECK(wgml_attention(bad, v, v, NULL, NULL, NULL, o) == WGML_ERR_SHAPE, "3-D q accepted");
    CHECK(wgml_attention(q, i32, v, NULL, NULL, NULL, o) == WGML_ERR_DTYPE, "i32 k accepted");
    CHECK(wgml_attention(q, v, v, i32, NULL, NULL, o) == WGML_ERR_DTYPE, "i32 mask accepted");
    CHECK(wgml_attention(q, v, v, NULL, bad, NULL, o) == WGML_ERR_SHAPE, "3-D sinks accepted");
    CHECK(wgml_attention(q, v, v, NULL, NULL, NULL, bad) == WGML_ERR_SHAPE, "wrong out accepted");
    CHECK(wgml_attention(q, v, v, NULL, NULL, NULL, q) == WGML_ERR_INVALID_ARG, "out = q accepted");
    wgml_attn_params p = {0};
    p.softcap = -1;
    CHECK(wgml_attention(q, v, v, NULL, NULL, &p, o) == WGML_ERR_INVALID_ARG, "negative softcap accepted");
    p.softcap = 0;
    p.out_bshd = 2;
    CHECK(wgml_attention(q, v, v, NULL, NULL, &p, o) == WGML_ERR_INVALID_ARG, "out_bshd 2 accepted");
    p.out_bshd = 1; /* out must then be [1, 8, 4, 16]: o is [1, 4, 8, 16] */
    CHECK(wgml_attention(q, v, v, NULL, NULL, &p, o) == WGML_ERR_SHAPE, "out_bshd with a [B, H, S, D] out accepted");
    t_env("WGML_FORCE", "attn=nope");
    wgml_status st = wgml_attention(q, v, v, NULL, NULL, NULL, o);
    t_env("WGML_FORCE", NULL);
    CHECK(st == WGML_ERR_INVALID_ARG && strstr(wgml_last_error(), "splitkv") && strstr(wgml_last_error(), "dsg_np"),
          "unknown variant: %s", wgml_last_error());
    /* dsg needs subgroups of 32 lanes at D 256 (one lane per 8 dims): refused
     * by name where the device's are narrower (lavapipe's 8, none) */
    wgml_device_info info;
    CHECK_OK(wgml_device_info_get(t_ctx, &info));
    if (info.subgroup_size < 32)
        refused("attn=dsg", 1, "subgroups", NULL);
    /* fa64 takes head dims up to 128: refused by name at 256 (or for
     * subgroups narrower than 8 lanes) */
    refused("attn=fa64", 3, "up to 128", "subgroups");
    CHECK_OK(wgml_attention(q, v, v, NULL, NULL, NULL, o));
    wgml_tensor *all[] = {q, k, v, o, bad, i32};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        wgml_tensor_free(all[i]);
}

/* wgml_g_attention through compile and run, against the reference: the
 * [B, H, S, D] node and the out_bshd one ([B, S, H, D], written through a
 * permuted view), for 5 queries (tiled kernel) and 1 (a decode kernel). */
static void graph_case(int64_t sq, int bshd)
{
    const int64_t qs[4] = {1, 4, sq, 32}, ks[4] = {1, 2, 37, 32};
    wgml_graph *g = NULL;
    wgml_node *q, *k, *v, *y;
    CHECK_OK(wgml_graph_create(t_ctx, &g));
    CHECK_OK(wgml_graph_input(g, "q", F32, 4, qs, &q));
    CHECK_OK(wgml_graph_input(g, "k", F32, 4, ks, &k));
    CHECK_OK(wgml_graph_input(g, "v", F32, 4, ks, &v));
    wgml_attn_params p = {0};
    p.causal = 1;
    p.out_bshd = bshd;
    CHECK_OK(wgml_g_attention(g, q, k, v, NULL, NULL, &p, F32, &y));
    CHECK(wgml_node_dim(y, 1) == (bshd ? sq : 4) && wgml_node_dim(y, 2) == (bshd ? 4 : sq), "out_bshd %d: node shape",
          bshd);
    CHECK_OK(wgml_graph_output(g, y));
    CHECK_OK(wgml_graph_compile(g, NULL));
    t_tensor tq = t_random(F32, 4, qs, -1, 1), tk = t_random(F32, 4, ks, -1, 1), tv = t_random(F32, 4, ks, -1, 1);
    CHECK_OK(wgml_graph_write(g, q, tq.host, wgml_tensor_nbytes(tq.t)));
    CHECK_OK(wgml_graph_write(g, k, tk.host, wgml_tensor_nbytes(tk.t)));
    CHECK_OK(wgml_graph_write(g, v, tv.host, wgml_tensor_nbytes(tv.t)));
    CHECK_OK(wgml_graph_run(g));
    int64_t n = 4 * sq * 32;
    float *got = malloc(sizeof(float) * (size_t)n);
    double *gd = malloc(sizeof(double) * (size_t)n), *want = malloc(sizeof(double) * (size_t)n);
    CHECK_OK(wgml_graph_read(g, y, got, sizeof(float) * (size_t)n));
    for (int64_t h = 0; h < 4; h++) /* gd in [B, H, S, D] order */
        for (int64_t i = 0; i < sq; i++)
            for (int64_t d = 0; d < 32; d++)
                gd[(h * sq + i) * 32 + d] = got[bshd ? (i * 4 + h) * 32 + d : (h * sq + i) * 32 + d];
    p.out_bshd = 0;
    wg_attn_ref_args r = {1, 4, 2, sq, 37, 32, 32, tq.val, tk.val, tv.val, NULL, NULL, false, p};
    wg_attention_ref(&r, want);
    at_case c = basic(1, 4, 2, sq, 37, 32);
    CHECK(t_compare("graph", F32, gd, want, n, 0, tol_of(&c)) == 0, "graph attention mismatches (sq %lld, out_bshd %d)",
          (long long)sq, bshd);
    free(got);
    free(gd);
    free(want);
    t_free(&tq);
    t_free(&tk);
    t_free(&tv);
    wgml_graph_free(g);
}

static void t_graph(void)
{
    for (int bshd = 0; bshd < 2; bshd++) {
        graph_case(5, bshd);
        graph_case(1, bshd);
    }
}

static void t_registry(void)
{
    int found = 0;
    for (size_t i = 0; i < wgml_op_count(); i++)
        found += strcmp(wgml_op_get(i)->family, "attention") == 0;
    CHECK(found == 1, "attention registry rows: %d", found);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"head_dims", t_head_dims},
        {"shapes_dtypes_layouts", t_shapes_dtypes},
        {"masks_window_sinks_softcap_alibi", t_masks_features},
        {"variants_splitkv", t_variants},
        {"decode_dsg", t_dsg},
        {"fa_prefill", t_fa},
        {"invalid_calls", t_errors},
        {"graph", t_graph},
        {"registry", t_registry},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_stats cs;
    if (wgml_ctx_stats_get(t_ctx, &cs) == WGML_OK)
        printf("pipelines compiled: %llu\n", (unsigned long long)cs.pipelines_compiled);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
