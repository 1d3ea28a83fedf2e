/* Grid-wide barriers (src/kernels/grid.wgsl) through their probe, a chain
 * of dependent int8 mat-vecs (src/kernels/grid_probe.wgsl):
 * - occupancy discovery counts at least one resident workgroup and its
 *   count is reproducible enough to launch;
 * - the persistent chain (with and without the next stage's weights loaded
 *   before each barrier) and the one-dispatch-a-stage chain both match a
 *   double-precision CPU chain, with the fail word clear, twice in a row
 *   (the control words reset themselves);
 * - `test_grid --bench N K S R [DEFS]` times the three forms and a bare barrier
 *   loop on the device (bench/run_h100.sh gridprobe; bench/NOTES.md);
 *   `test_grid --layer 8b|1b L R [DEFS]` a decode layer's product shapes
 *   (int8, x as 8-bit codes: XI8 + LAYER) L layers in a chain.
 * Needs subgroups (the probe's rows are subgroup sums); skips without. */
#include "gpu/runtime.h"
#include "harness.h"

#include <math.h>

static wgml_ctx *ctx;
static uint32_t sgs;

typedef struct gp_params {
    uint32_t n, k, stages, mode, nwg, first, wstride, ystride, pf;
    float scale;
    uint32_t pad[2];
} gp_params;

enum { GP_PERSIST = 0, GP_STAGE = 1, GP_DISCOVER = 2, GP_BARRIERS = 3 };
/* grid.wgsl's control words: GC_EXIT, GC_FAIL, GC_COUNT, and 16 arrival
 * stripes at words 32, 64, .. 512 (each on its own line) */
#define GC_WORDS (32 * 17)
enum { GC_EXIT = 1, GC_FAIL = 2, GC_COUNT = 4, GC_STRIPES = 16 };

typedef struct chain {
    uint32_t n, k, stages;
    wgml_buffer *w, *y, *ctl;
    int8_t *hw;   /* host copy of the weights */
    float *x0;
    uint32_t nwg; /* discovered */
    /* LAYER: stage s is sn[s] x sk[s] at byte sw[s] of w (shp: the same
     * for the kernel, with the scale) */
    wgml_buffer *shp;
    uint32_t sn[64], sk[64];
    uint64_t sw[64];
} chain;

/* Keeps the chain's values O(1): int8 weights uniform on [-128, 127] have
 * a standard deviation of ~74, so a sum of k terms grows by 74 sqrt(k). */
static float gp_scale(uint32_t k) { return (float)(1.0 / (74.0 * sqrt((double)k))); }

/* The probe's template defines (grid_probe.wgsl): WG=256 or 1024; WF32
 * (f32 weights), W4 (int4), XI8 (x as 8-bit codes), LAYER (per-stage
 * shapes: binding 5), XPLAIN (x staged by plain loads: binding 4). */
static char g_defs[128] = "WG=256";

static int has_def(const char *d) { return strstr(g_defs, d) != NULL; }

static wgml_kernel *kernel(void)
{
    wg_kernel_ref ref = {"grid_probe.wgsl", "gp_chain", g_defs, has_def("LAYER") ? 5 : has_def("XPLAIN") ? 4 : 3,
                         1u << 0 | 1u << 4};
    wgml_kernel *k = NULL;
    CHECK_OK(wg_kernel_get(ctx, &ref, &k));
    return k;
}

static uint32_t wg_threads(void) { return has_def("WG=1024") ? 1024 : 256; }
static uint32_t epv(void) { return has_def("WF32") ? 4 : has_def("W4") ? 32 : 16; } /* weights a vec4<u32> */
/* Bytes of n x k weights: f32, int8 or int4 (two a byte). */
static uint64_t wbytes_of(uint64_t n, uint64_t k) { return n * k * (has_def("WF32") ? 4 : 1) / (has_def("W4") ? 2 : 1); }

static wgml_status dispatch(chain *c, const gp_params *p, uint32_t groups)
{
    wg_binding b[5] = {wg_bind_all(c->w), wg_bind_all(c->y), wg_bind_all(c->ctl), wg_bind_all(c->y), {0}};
    if (c->shp)
        b[4] = wg_bind_all(c->shp);
    uint32_t g[3];
    wg_split_grid(65535, groups, g);
    return wg_dispatch(ctx, kernel(), b, c->shp ? 5 : has_def("XPLAIN") ? 4 : 3, p, sizeof *p, g[0], g[1], g[2]);
}

static gp_params base(const chain *c, uint32_t mode)
{
    gp_params p = {0};
    p.n = c->n;
    p.k = c->k;
    p.stages = c->stages;
    p.mode = mode;
    p.nwg = c->nwg;
    p.wstride = c->n * (c->k / epv());
    p.ystride = c->n > c->k ? c->n : c->k;
    p.scale = gp_scale(c->k);
    return p;
}

/* The barrier's arrival stripes, summed (0 once a dispatch has ended). */
static uint32_t arrivals(const uint32_t *v)
{
    uint32_t n = 0;
    for (int i = 1; i <= GC_STRIPES; i++)
        n += v[32 * i];
    return n;
}

static uint32_t ctl_word(chain *c, int i)
{
    uint32_t v[GC_WORDS] = {0};
    CHECK_OK(wgml_buffer_read(c->ctl, 0, v, sizeof v));
    return v[i];
}

/* Counts resident workgroups of the probe's pipeline on a large grid. */
static uint32_t discover(chain *c, uint32_t grid)
{
    CHECK_OK(wgml_buffer_fill(c->ctl, 0, GC_WORDS * 4, 0));
    gp_params p = base(c, GP_DISCOVER);
    CHECK_OK(dispatch(c, &p, grid));
    return ctl_word(c, GC_COUNT);
}

/* Both chains' buffers (shp: LAYER's, made by layer_init), x0 random and
 * uploaded, the weights random (kept in hw for the CPU) when upload_w,
 * else a fill (timing: no host copy). */
static int chain_alloc(chain *c, uint64_t wbytes, uint64_t ywords, int upload_w)
{
    CHECK_OK(wgml_buffer_create(ctx, wbytes, &c->w));
    CHECK_OK(wgml_buffer_create(ctx, ywords * 4, &c->y));
    CHECK_OK(wgml_buffer_create(ctx, GC_WORDS * 4, &c->ctl));
    c->hw = upload_w ? malloc(wbytes) : NULL;
    c->x0 = malloc((size_t)c->k * 4);
    if (!c->w || !c->y || !c->ctl || (upload_w && !c->hw) || !c->x0)
        return 1;
    if (upload_w) {
        for (uint64_t i = 0; i < wbytes; i++)
            c->hw[i] = (int8_t)(t_rand() & 0xff);
        CHECK_OK(wgml_buffer_write(c->w, 0, c->hw, wbytes));
    } else {
        CHECK_OK(wgml_buffer_fill(c->w, 0, wbytes, 0x01ff02feu));
    }
    for (uint32_t i = 0; i < c->k; i++)
        c->x0[i] = (float)((double)(t_rand() % 20001) / 10000.0 - 1.0);
    CHECK_OK(wgml_buffer_write(c->y, 0, c->x0, (uint64_t)c->k * 4));
    return 0;
}

static int chain_init(chain *c, uint32_t n, uint32_t k, uint32_t stages, int upload_w)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->k = k;
    c->stages = stages;
    if (n < k) { /* a stage's x is the first k of the previous stage's n */
        printf("    chain %ux%u: n must be at least k\n", n, k);
        return 1;
    }
    return chain_alloc(c, stages * wbytes_of(n, k), (uint64_t)(stages + 1) * n, upload_w);
}

static void chain_free(chain *c)
{
    wgml_buffer_destroy(c->w);
    wgml_buffer_destroy(c->y);
    wgml_buffer_destroy(c->ctl);
    wgml_buffer_destroy(c->shp);
    free(c->hw);
    free(c->x0);
}

/* Records the chain in one form: persistent (pf 0/1) or a dispatch a stage. */
static wgml_status run_form(chain *c, int form)
{
    wgml_status st = WGML_OK;
    if (form == 2) {
        uint32_t nsub = wg_threads() / sgs;
        for (uint32_t s = 0; s < c->stages && st == WGML_OK; s++) {
            gp_params p = base(c, GP_STAGE);
            p.first = s;
            uint32_t n = c->shp ? c->sn[s] : c->n;
            st = dispatch(c, &p, (n + nsub - 1) / nsub);
        }
        return st;
    }
    gp_params p = base(c, GP_PERSIST);
    p.pf = (uint32_t)form;
    return dispatch(c, &p, c->nwg);
}

/* A decode layer's shapes (n, k) in turn, L times (LAYER): stage s reads
 * the first k of the previous stage's n.  y's stages are the largest n
 * apart.  upload_w 0: the weights are a fill (timing). */
static int layer_init(chain *c, const uint32_t (*shapes)[2], int ns, int layers, int upload_w)
{
    memset(c, 0, sizeof *c);
    c->stages = (uint32_t)(ns * layers);
    if (c->stages > 64)
        return 1;
    uint64_t wbytes = 0;
    uint32_t shp[64][4] = {{0}};
    for (uint32_t s = 0; s < c->stages; s++) {
        c->sn[s] = shapes[s % ns][0];
        c->sk[s] = shapes[s % ns][1];
        c->sw[s] = wbytes;
        if (s && c->sk[s] > c->sn[s - 1]) {
            printf("    stage %u reads %u of the %u values stage %u wrote\n", s, c->sk[s], c->sn[s - 1], s - 1);
            return 1;
        }
        float sc = gp_scale(c->sk[s]);
        shp[s][0] = c->sn[s];
        shp[s][1] = c->sk[s];
        shp[s][2] = (uint32_t)(wbytes / 16);
        memcpy(&shp[s][3], &sc, 4);
        wbytes += wbytes_of(c->sn[s], c->sk[s]);
        c->n = c->n > c->sn[s] ? c->n : c->sn[s];
    }
    c->k = c->sk[0];
    CHECK_OK(wgml_buffer_create(ctx, sizeof shp, &c->shp));
    if (!c->shp || chain_alloc(c, wbytes, (uint64_t)(c->stages + 1) * c->n, upload_w))
        return 1;
    CHECK_OK(wgml_buffer_write(c->shp, 0, shp, sizeof shp));
    return 0;
}

/* Element j of a weight row: an int8, or (W4) a nibble n as n - 8, word
 * i's low nibbles elements 8i .. 8i + 3 and its high ones 8i + 4 .. 8i + 7. */
static int weight(const int8_t *wr, uint32_t j)
{
    if (!has_def("W4"))
        return wr[j];
    uint8_t b = (uint8_t)wr[4 * (j / 8) + j % 4];
    return (int)(j % 8 < 4 ? b & 15 : b >> 4) - 8;
}

/* XI8 + LAYER, each stage against the CPU from the device's own input to
 * it (the same f32 x, so the same 8-bit codes: round half to even, as
 * WGSL's round): y = scale sum_j w_j code_j / 32, the integer sum exact,
 * so within 1e-4 of values O(1) (float sums of 16-element partials). */
static void layer_check(chain *c, const char *what)
{
    uint64_t words = (uint64_t)(c->stages + 1) * c->n;
    float *y = malloc(words * 4);
    if (!y)
        return;
    CHECK_OK(wgml_buffer_read(c->y, 0, y, words * 4));
    int bad = 0;
    double mag = 0;
    for (uint32_t s = 0; s < c->stages; s++)
        for (uint32_t r = 0; r < c->sn[s]; r++) {
            const int8_t *wr = c->hw + c->sw[s] + wbytes_of(r, c->sk[s]);
            const float *x = y + (uint64_t)s * c->n;
            double acc = 0;
            for (uint32_t j = 0; j < c->sk[s]; j++) {
                float q = nearbyintf(x[j] * 32.0f);
                q = q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q;
                acc += (double)weight(wr, j) * (double)q;
            }
            double want = (double)gp_scale(c->sk[s]) * acc / 32.0, got = y[(uint64_t)(s + 1) * c->n + r];
            mag = fmax(mag, fabs(want));
            if (!(fabs(got - want) <= 1e-4) && bad++ < 3)
                printf("    %s: stage %u row %u: %.9g, want %.9g\n", what, s, r, got, want);
        }
    CHECK(bad == 0, "%s: %d values off", what, bad);
    CHECK(mag > 1e-2, "%s: the chain's values vanished (%.3g)", what, mag);
    free(y);
}

/* A small layer-shaped chain through the XI8 + LAYER probe, in all three
 * forms, twice each. */
static void layer_case(const char *defs)
{
    static const uint32_t shapes[4][2] = {{96, 64}, {64, 64}, {256, 64}, {64, 192}};
    snprintf(g_defs, sizeof g_defs, "%s", defs);
    chain c;
    if (layer_init(&c, shapes, 4, 2, 1))
        goto out;
    c.nwg = discover(&c, 4096);
    static const char *const names[] = {"persistent", "persistent+prefetch", "a dispatch a stage"};
    for (int form = 0; form < 3; form++)
        for (int rep = 0; rep < 2; rep++) {
            char what[96];
            snprintf(what, sizeof what, "layer chain %s %s (%u workgroups) run %d", defs, names[form], c.nwg, rep);
            CHECK_OK(wgml_buffer_fill(c.y, (uint64_t)c.k * 4, wgml_buffer_size(c.y) - (uint64_t)c.k * 4, 0x7fc00000u));
            CHECK_OK(run_form(&c, form));
            layer_check(&c, what);
            CHECK(ctl_word(&c, GC_FAIL) == 0, "%s: the fail word is set", what);
        }
out:
    chain_free(&c);
    snprintf(g_defs, sizeof g_defs, "WG=256");
}

static void t_layer_i8(void) { layer_case("WG=256;XI8;LAYER"); }
static void t_layer_i4(void) { layer_case("WG=256;XI8;LAYER;W4"); }

/* The chain on the CPU in double, each stage rounded to f32 as stored. */
static float *chain_ref(const chain *c)
{
    uint32_t ys = c->n > c->k ? c->n : c->k;
    float *y = calloc((size_t)(c->stages + 1) * ys, 4);
    if (!y)
        return NULL;
    memcpy(y, c->x0, (size_t)c->k * 4);
    double scale = (double)gp_scale(c->k);
    for (uint32_t s = 0; s < c->stages; s++)
        for (uint32_t r = 0; r < c->n; r++) {
            const int8_t *wr = c->hw + ((uint64_t)s * c->n + r) * c->k;
            double acc = 0;
            for (uint32_t j = 0; j < c->k; j++)
                acc += (double)wr[j] * (double)y[(size_t)s * ys + j];
            y[(size_t)(s + 1) * ys + r] = (float)(scale * acc);
        }
    return y;
}

/* Compares the last stage.  Tolerance: each stage sums k products of an
 * int8 and an f32 in f32 (relative error <= ~k * 2^-24 of the sum of
 * |terms|, which is ~sqrt(k) x the result's typical size here), and the
 * error carries through later stages scaled like the values (the scale
 * keeps them O(1)): 1e-3 absolute for k <= 1024, stages <= 8. */
static int chain_check(chain *c, const float *ref, const char *what)
{
    uint32_t ys = c->n > c->k ? c->n : c->k;
    float *got = malloc((size_t)c->n * 4);
    if (!got)
        return 1;
    CHECK_OK(wgml_buffer_read(c->y, (uint64_t)c->stages * ys * 4, got, (uint64_t)c->n * 4));
    int bad = 0;
    double worst = 0, mag = 0;
    for (uint32_t r = 0; r < c->n; r++) {
        double want = ref[(size_t)c->stages * ys + r], d = fabs((double)got[r] - want);
        mag = fmax(mag, fabs(want));
        if (!(d <= 1e-3)) {
            if (bad++ < 3)
                printf("    %s: row %u: %.9g, want %.9g\n", what, r, got[r], want);
        }
        worst = fmax(worst, d);
    }
    CHECK(bad == 0, "%s: %d of %u rows off (worst %.3g; values up to %.3g)", what, bad, c->n, worst, mag);
    CHECK(mag > 1e-2, "%s: the chain's values vanished (%.3g): the test would not see a wrong row", what, mag);
    free(got);
    return bad;
}

static void t_discover(void)
{
    chain c;
    if (chain_init(&c, 64, 64, 1, 1))
        return;
    uint32_t a = discover(&c, 4096), b = discover(&c, 4096);
    printf("    resident workgroups of the probe: %u, then %u (subgroups of %u)\n", a, b, sgs);
    CHECK(a >= 1 && a <= 4096 && b >= 1 && b <= 4096, "discovered %u / %u of 4096", a, b);
    chain_free(&c);
}

static void chain_case(uint32_t n, uint32_t k, uint32_t stages)
{
    chain c;
    if (chain_init(&c, n, k, stages, 1))
        goto out;
    c.nwg = discover(&c, 4096);
    if (c.nwg > 64)
        c.nwg = 64; /* fewer than resident is always allowed (and walks rows) */
    float *ref = chain_ref(&c);
    if (!ref)
        goto out;
    static const char *const names[] = {"persistent", "persistent+prefetch", "a dispatch a stage"};
    for (int form = 0; form < 3; form++)
        for (int rep = 0; rep < 2; rep++) {
            char what[96];
            snprintf(what, sizeof what, "%ux%u x%u %s (%u workgroups) run %d", n, k, stages, names[form], c.nwg,
                     rep);
            CHECK_OK(wgml_buffer_fill(c.y, (uint64_t)k * 4, wgml_buffer_size(c.y) - (uint64_t)k * 4, 0x7fc00000u));
            CHECK_OK(run_form(&c, form));
            chain_check(&c, ref, what);
            uint32_t v[GC_WORDS];
            CHECK_OK(wgml_buffer_read(c.ctl, 0, v, sizeof v));
            CHECK(v[GC_FAIL] == 0 && arrivals(v) == 0 && v[GC_EXIT] == 0,
                  "%s: control words %u %u %u after the run (fail, arrivals, exit)", what, v[GC_FAIL], arrivals(v),
                  v[GC_EXIT]);
        }
    free(ref);
out:
    chain_free(&c);
}

/* More workgroups than are resident: the barrier's waits give up, set the
 * fail word, and the dispatch still ends (no hang); the words reset, and a
 * right-sized run afterwards is right.  Only where few workgroups are
 * resident (a CPU driver): on a GPU each give-up takes ~GRID_SPIN polls. */
static void t_overcommit(void)
{
    chain c;
    if (chain_init(&c, 96, 64, 2, 1))
        goto out;
    uint32_t res = discover(&c, 4096);
    if (res > 4) {
        printf("    %u workgroups resident: skipped (a GPU; the give-ups would take seconds)\n", res);
        goto out;
    }
    c.nwg = res + 6;
    double t0 = t_now();
    CHECK_OK(run_form(&c, 0));
    uint32_t v[GC_WORDS];
    CHECK_OK(wgml_buffer_read(c.ctl, 0, v, sizeof v));
    printf("    %u workgroups launched, %u resident: fail word %u after %.2f s\n", c.nwg, res, v[GC_FAIL],
           t_now() - t0);
    CHECK(v[GC_FAIL] == 1, "the fail word is not set with %u workgroups launched and %u resident", c.nwg, res);
    CHECK(arrivals(v) == 0 && v[GC_EXIT] == 0, "arrivals %u, exit %u after the run", arrivals(v), v[GC_EXIT]);
    CHECK_OK(wgml_buffer_fill(c.ctl, 0, GC_WORDS * 4, 0));
    c.nwg = res;
    float *ref = chain_ref(&c);
    if (ref) {
        CHECK_OK(run_form(&c, 1));
        chain_check(&c, ref, "after an overcommitted run");
        CHECK(ctl_word(&c, GC_FAIL) == 0, "the fail word is set after a right-sized run");
    }
    free(ref);
out:
    chain_free(&c);
}

static void t_chain_small(void) { chain_case(96, 64, 3); }
static void t_chain_rows(void) { chain_case(1000, 512, 5); }  /* rows walked by each subgroup; n > k */
static void t_chain_long_k(void) { chain_case(1030, 1024, 3); } /* k past the vec4s 4-8 lanes prefetch */

/* ---- timing (--bench N K S R): µs a stage for each form */
static double time_it(chain *c, int form, int reps)
{
    wg_recording r;
    if (wg_recorder_begin(ctx, &r) != WGML_OK)
        return -1;
    wgml_status st = form == 3 ? WGML_OK : run_form(c, form);
    if (form == 3) {
        gp_params p = base(c, GP_BARRIERS);
        st = dispatch(c, &p, c->nwg);
    }
    wg_recorder_end(ctx);
    if (st != WGML_OK) {
        wg_recording_free(&r);
        return -1;
    }
    double t0 = t_now();
    for (int i = 0; i < reps && st == WGML_OK; i++)
        st = wg_recording_replay(ctx, &r);
    if (st == WGML_OK)
        st = wgml_ctx_sync(ctx);
    double dt = t_now() - t0;
    wg_recording_free(&r);
    return st == WGML_OK ? dt / reps : -1;
}

/* ~0.3 s of back-to-back work first (README hazard: the H100's clock). */
static void warm_up(chain *c)
{
    double tw = t_now();
    while (t_now() - tw < 0.3)
        time_it(c, 2, 3);
}

/* time_it, and whether the run set the fail word (cleared for the next). */
static double timed(chain *c, int form, int reps, uint32_t *fail)
{
    double t = time_it(c, form, reps);
    *fail = ctl_word(c, GC_FAIL);
    if (*fail)
        CHECK_OK(wgml_buffer_fill(c->ctl, 0, GC_WORDS * 4, 0));
    return t;
}

static int bench(int argc, char **argv)
{
    uint32_t n = (uint32_t)strtoul(argv[2], NULL, 0), k = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : n;
    uint32_t stages = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : 32;
    int reps = argc > 5 ? atoi(argv[5]) : 20;
    if (argc > 6)
        snprintf(g_defs, sizeof g_defs, "%s", argv[6]);
    chain c;
    if (k % 16 || k > 4096 || chain_init(&c, n, k, stages, 0)) {
        printf("bad shape (k a multiple of 16, at most 4096)\n");
        return 1;
    }
    c.nwg = discover(&c, 16384);
    uint32_t again = discover(&c, 16384);
    double gb = (double)(stages * wbytes_of(n, k)) / 1e9;
    printf("gridprobe: %u x %u %s x %u stages (%.1f MB a stage; %s), subgroups %u, resident workgroups %u / %u\n", n,
           k, has_def("WF32") ? "f32" : "int8", stages, gb * 1e3 / stages, g_defs, sgs, c.nwg, again);
    static const char *const names[] = {"persistent", "persistent+prefetch", "dispatch a stage", "barriers only"};
    warm_up(&c);
    for (int round = 0; round < 2; round++)
        for (int form = 0; form < 4; form++) {
            uint32_t fail;
            double t = timed(&c, form, reps, &fail);
            if (form < 3)
                printf("gridprobe %-20s %9.2f us a chain  %7.2f us a stage  %7.1f GB/s%s\n", names[form], t * 1e6,
                       t * 1e6 / stages, gb / t, fail ? "  FAIL WORD SET" : "");
            else
                printf("gridprobe %-20s %9.2f us for %u barriers: %.3f us each%s\n", names[form], t * 1e6, stages,
                       t * 1e6 / stages, fail ? "  FAIL WORD SET" : "");
        }
    chain_free(&c);
    return t_failed_checks ? 1 : 0;
}

/* --layer 8b|1b L R [DEFS]: L decode layers' int8 products (q|k|v, o,
 * gate|up, down shapes) as one chain: µs a layer and GB/s per form. */
static int bench_layer(int argc, char **argv)
{
    static const uint32_t s8b[4][2] = {{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}};
    static const uint32_t s1b[4][2] = {{3072, 2048}, {2048, 2048}, {16384, 2048}, {2048, 8192}};
    int is8 = !strcmp(argv[2], "8b"), layers = argc > 3 ? atoi(argv[3]) : 4, reps = argc > 4 ? atoi(argv[4]) : 20;
    snprintf(g_defs, sizeof g_defs, "%s", argc > 5 ? argv[5] : "WG=256;XI8;LAYER");
    chain c;
    if (layers < 1 || layers > 16 || layer_init(&c, is8 ? s8b : s1b, 4, layers, 0)) {
        printf("bad layer count (1-16) or no memory\n");
        return 1;
    }
    c.nwg = discover(&c, 16384);
    double gb = 0;
    for (uint32_t s = 0; s < c.stages; s++)
        gb += (double)wbytes_of(c.sn[s], c.sk[s]) / 1e9;
    printf("gridlayer: %s-shaped, %d layers of %s products (%.1f MB a layer; %s), resident workgroups %u\n",
           is8 ? "8B" : "1B", layers, has_def("W4") ? "int4" : "int8", gb * 1e3 / layers, g_defs, c.nwg);
    static const char *const names[] = {"persistent", "persistent+prefetch", "dispatch a stage"};
    warm_up(&c);
    for (int round = 0; round < 2; round++)
        for (int form = 0; form < 3; form++) {
            uint32_t fail;
            double t = timed(&c, form, reps, &fail);
            printf("gridlayer %-20s %9.2f us a layer  %7.1f GB/s%s\n", names[form], t * 1e6 / layers, gb / t,
                   fail ? "  FAIL WORD SET" : "");
        }
    chain_free(&c);
    return t_failed_checks ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (t_open_ctx(&ctx))
        return 1;
    wgml_device_info info;
    CHECK_OK(wgml_device_info_get(ctx, &info));
    sgs = info.subgroup_size;
    int rc = 0;
    if (!sgs) {
        printf("no subgroups: the grid probe needs them\n0 passed, 0 failed\n");
    } else if (argc > 2 && !strcmp(argv[1], "--layer")) {
        rc = bench_layer(argc, argv);
    } else if (argc > 2 && !strcmp(argv[1], "--bench")) {
        rc = bench(argc, argv);
    } else {
        static const t_case cases[] = {
            {"discover_resident_workgroups", t_discover},
            {"chain_small", t_chain_small},
            {"chain_rows_walked", t_chain_rows},
            {"chain_long_k", t_chain_long_k},
            {"overcommit_gives_up", t_overcommit},
            {"layer_chain_i8", t_layer_i8},
            {"layer_chain_i4", t_layer_i4},
        };
        rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    }
    wgml_ctx_destroy(ctx);
    return rc;
}
