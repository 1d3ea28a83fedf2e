/* RoPE against its double-precision reference (src/ops/rope.c): NORMAL,
 * NEOX and M-RoPE on f32/f16/bf16, partial rotation, freq_factors, YaRN,
 * strided views in and out, in place, shuffled positions, zero-size, a
 * launch of more than 65,535 workgroups, hand-computed values, the NaN
 * rule, and the error paths. */
#include "nan_table.h"
#include "ops/rope.h"

static const wgml_dtype floats[] = {WGML_F32, WGML_F16, WGML_BF16};

/* Tolerance per element.  The kernel's angle is an f32 product of the
 * position and a frequency from exp2 (a few ulp), so its absolute error
 * grows with the angle: we allow 2^-20 * (|theta| + 1) radians (about 8
 * ulp of theta, plus the sin/cos polynomials' ~1e-7), scaled by the rotated
 * pair's magnitude bound 2 * mscale (inputs lie in [-1, 1]).  16-bit outputs
 * add one rounding of their format (t_tol).  Copied elements (theta 0)
 * then get 2^-19 * mscale, far below any indexing mistake. */
static int rope_compare(const char *what, wgml_dtype dt, const double *got, const double *want, const double *theta,
                        int64_t n, double mscale)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double rtol = 0, atol = 2 * fabs(mscale) * ldexp(1.0, -20) * (theta[i] + 1);
        t_tol(dt, &rtol, &atol);
        uint8_t tmp[8];
        wg_host_set(dt, tmp, 0, want[i]);
        double w = wg_host_get(dt, tmp, 0);
        if (!(fabs(got[i] - w) <= atol + rtol * fabs(w))) {
            if (bad < 4)
                printf("    %s [%lld]: got %.9g want %.9g (theta %.4g, atol %.2g)\n", what, (long long)i, got[i], w,
                       theta[i], atol);
            bad++;
        }
    }
    if (bad > 4)
        printf("    %s: %d mismatches of %lld\n", what, bad, (long long)n);
    return bad;
}

/* Random distinct-ish positions in [lo, hi], in no particular order. */
static int32_t *random_pos(int64_t n, int lo, int hi)
{
    int32_t *p = malloc(sizeof(int32_t) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        p[i] = (int32_t)t_range(0, (uint64_t)(hi - lo)) + lo;
    return p;
}

static double mscale_of(const wgml_rope_params *p)
{
    double a = p->attn_factor == 0 ? 1 : p->attn_factor, s = p->freq_scale == 0 ? 1 : p->freq_scale;
    return p->ext_factor != 0 ? a * (1 + 0.1 * log(1 / s)) : a;
}

typedef struct rope_case {
    wgml_dtype dt;
    int ndim;           /* 3 or 4 */
    int64_t s[4];       /* B, S, H, D */
    wgml_rope_params p;
    bool ff;
    int x_layout;       /* 0 contiguous, 1 slice of a wider last dim, 2 transposed seq/heads */
    int out_layout;     /* 0 contiguous, 1 slice of a wider last dim, 2 in place (out = x) */
    int pos_hi;
} rope_case;

static void run_case(const rope_case *c)
{
    int64_t B = c->s[0], S = c->s[1], H = c->s[2], D = c->s[3];
    int64_t vs[4] = {B, S, H, D};
    const int64_t *vshape = c->ndim == 4 ? vs : vs + 1;
    /* storage for x */
    int64_t xs[4] = {B, S, H, D};
    if (c->x_layout == 1)
        xs[3] = D + 5;
    if (c->x_layout == 2) {
        xs[1] = H;
        xs[2] = S;
    }
    t_tensor xt = t_random(c->dt, c->ndim, c->ndim == 4 ? xs : xs + 1, -1, 1);
    wgml_tensor *x = NULL;
    if (c->x_layout == 1)
        CHECK_OK(wgml_view_slice(xt.t, -1, 3, 3 + D, 1, &x));
    else if (c->x_layout == 2)
        CHECK_OK(wgml_view_transpose(xt.t, -3, -2, &x));
    else
        CHECK_OK(wgml_view_reshape(xt.t, c->ndim, vshape, &x));
    double *xv = t_values(x); /* logical [B, S, H, D] */

    int64_t np = c->p.mode == WGML_ROPE_MROPE ? 4 * S : S;
    int32_t *pos = random_pos(np, -20, c->pos_hi);
    wgml_tensor *pt = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &np, &pt));
    CHECK_OK(wgml_tensor_upload(pt, pos, sizeof(int32_t) * (size_t)np));

    wgml_rope_params p = c->p;
    t_tensor ff = {0};
    if (c->ff) {
        int64_t nf = p.n_dims / 2;
        ff = t_random(WGML_F32, 1, &nf, 0.5, 4);
        p.freq_factors = ff.t;
    }

    wgml_tensor *ob = NULL, *o = NULL;
    if (c->out_layout == 1) {
        int64_t os_[4] = {B, S, H, D + 3};
        ob = t_poisoned(c->dt, c->ndim, c->ndim == 4 ? os_ : os_ + 1);
        CHECK_OK(wgml_view_slice(ob, -1, 1, 1 + D, 1, &o));
    } else if (c->out_layout == 2) {
        CHECK_OK(wgml_view_slice(x, -1, 0, D, 1, &o)); /* the same view of the same storage */
    } else {
        o = t_poisoned(c->dt, c->ndim, vshape);
    }
    int64_t n = B * S * H * D;
    double *want = malloc(sizeof(double) * (size_t)(n + 1)), *theta = malloc(sizeof(double) * (size_t)(n + 1));
    wg_rope_ref(&p, c->s, xv, pos, c->ff ? ff.val : NULL, want, theta);
    wgml_status st = wgml_rope(x, pt, &p, o);
    CHECK(st == WGML_OK, "rope: %s", wgml_last_error());
    double *got = t_values(o);
    char what[128];
    snprintf(what, sizeof what, "%s/%s/%dd[%lld,%lld,%lld,%lld]/n_dims %d/ff %d/yarn %d/x%d/out%d/rot %d",
             c->p.mode == WGML_ROPE_NORMAL ? "normal" : c->p.mode == WGML_ROPE_NEOX ? "neox" : "mrope",
             wgml_dtype_name(c->dt), c->ndim, (long long)B, (long long)S, (long long)H, (long long)D, p.n_dims, c->ff,
             p.ext_factor != 0, c->x_layout, c->out_layout, p.n_heads_rot);
    CHECK(rope_compare(what, c->dt, got, want, theta, n, mscale_of(&p)) == 0, "%s", what);
    if (c->out_layout == 1 && ob) { /* the padding around the view stays poisoned */
        double *all = t_values(ob);
        uint8_t poison[8];
        memset(poison, 0xa5, sizeof poison);
        double pv = wg_host_get(c->dt, poison, 0);
        int touched = 0;
        for (int64_t r = 0; r < B * S * H; r++)
            touched += all[r * (D + 3)] != pv || all[r * (D + 3) + D + 1] != pv || all[r * (D + 3) + D + 2] != pv;
        CHECK(touched == 0, "%s: %d rows written outside the out view", what, touched);
        free(all);
    }
    free(got);
    free(want);
    free(theta);
    free(xv);
    free(pos);
    wgml_tensor_free(o);
    wgml_tensor_free(ob);
    wgml_tensor_free(pt);
    wgml_tensor_free(x);
    t_free(&ff);
    t_free(&xt);
}

static wgml_rope_params base_params(wgml_rope_mode mode, int n_dims)
{
    wgml_rope_params p;
    memset(&p, 0, sizeof p);
    p.mode = mode;
    p.n_dims = n_dims;
    p.freq_base = 10000;
    p.freq_scale = 1;
    p.attn_factor = 1;
    return p;
}

static void set_yarn(wgml_rope_params *p)
{
    p->freq_scale = 0.25f;
    p->ext_factor = 1;
    p->attn_factor = 0.9f;
    p->beta_fast = 32;
    p->beta_slow = 1;
    p->n_ctx_orig = 256;
}

/* Every mode x dtype x partial rotation x freq_factors x YaRN, cycling
 * through the input/output layouts, 3-D / 4-D shapes, head sizes and bases
 * (indices chosen so that none of these moves in step with another). */
static void t_grid(void)
{
    int idx = 0;
    for (int mode = 0; mode < 3; mode++)
        for (size_t d = 0; d < 3; d++)
            for (int partial = 0; partial < 2; partial++)
                for (int ff = 0; ff < 2; ff++)
                    for (int yarn = 0; yarn < 2; yarn++, idx++) {
                        rope_case c;
                        memset(&c, 0, sizeof c);
                        c.dt = floats[d];
                        c.ndim = (idx / 3) % 2 ? 4 : 3;
                        int64_t D = 24 + 2 * ((idx / 2) % 3);
                        c.s[0] = c.ndim == 4 ? 2 : 1;
                        c.s[1] = 7;
                        c.s[2] = idx % 7 < 3 ? 3 : 6; /* 6: head groups of 4 and 2 */
                        c.s[3] = D;
                        int nd = partial ? (int)D - 8 : (int)D;
                        c.p = base_params((wgml_rope_mode)mode, nd);
                        if (mode == WGML_ROPE_MROPE) {
                            /* the sum wraps around the pairs when smaller than n_dims/2 */
                            int s0[4] = {2, 3, 3, 1}, s1[4] = {3, 2, 2, 0};
                            memcpy(c.p.sections, idx % 5 < 2 ? s0 : s1, sizeof s0);
                        }
                        if (yarn)
                            set_yarn(&c.p);
                        if (idx % 5 == 1)
                            c.p.freq_base = 500000;
                        c.ff = ff;
                        c.x_layout = idx % 3;
                        c.out_layout = (idx / 3) % 3;
                        c.pos_hi = 2000;
                        /* a q|k|v-like block: the last head(s) pass through */
                        if (idx % 4 == 3)
                            c.p.n_heads_rot = (int)c.s[2] - 1 - idx % 2;
                        run_case(&c);
                    }
}

/* Zero-initialised optional fields take ggml's usual values. */
static void t_defaults(void)
{
    rope_case c;
    memset(&c, 0, sizeof c);
    c.dt = WGML_F32;
    c.ndim = 3;
    c.s[0] = 1;
    c.s[1] = 5;
    c.s[2] = 2;
    c.s[3] = 8;
    c.p.mode = WGML_ROPE_NEOX;
    c.p.n_dims = 8;
    c.pos_hi = 100;
    run_case(&c);
}

/* Against values worked out by hand: x = (1, 0, 1, 0), pos 1, base 10000,
 * n_dims 4: pair 0 turns by 1 rad, pair 1 by 10000^-0.5 = 0.01 rad. */
static void t_known(void)
{
    const int64_t s[3] = {1, 1, 4}, one = 1;
    wgml_tensor *x = NULL, *o = NULL, *pt = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 3, s, &x));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 3, s, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &one, &pt));
    float xv[4] = {1, 0, 1, 0}, got[4];
    int32_t pos = 1;
    CHECK_OK(wgml_tensor_upload(x, xv, sizeof xv));
    CHECK_OK(wgml_tensor_upload(pt, &pos, 4));
    wgml_rope_params p = base_params(WGML_ROPE_NORMAL, 4);
    CHECK_OK(wgml_rope(x, pt, &p, o));
    CHECK_OK(wgml_tensor_download(o, got, sizeof got));
    double want[4] = {cos(1.0), sin(1.0), cos(0.01), sin(0.01)};
    for (int i = 0; i < 4; i++)
        CHECK(fabs(got[i] - want[i]) < 3e-7, "normal [%d]: %.9g vs %.9g", i, got[i], want[i]);
    /* NEOX pairs (0, 2) and (1, 3): x = (1, 1, 0, 0) */
    float xn[4] = {1, 1, 0, 0};
    CHECK_OK(wgml_tensor_upload(x, xn, sizeof xn));
    p.mode = WGML_ROPE_NEOX;
    CHECK_OK(wgml_rope(x, pt, &p, o));
    CHECK_OK(wgml_tensor_download(o, got, sizeof got));
    double wn[4] = {cos(1.0), cos(0.01), sin(1.0), sin(0.01)};
    for (int i = 0; i < 4; i++)
        CHECK(fabs(got[i] - wn[i]) < 3e-7, "neox [%d]: %.9g vs %.9g", i, got[i], wn[i]);
    /* the reference agrees with the same hand values */
    double xd[4] = {1, 1, 0, 0}, rd[4], th[4];
    const int64_t s4[4] = {1, 1, 1, 4};
    wg_rope_ref(&p, s4, xd, &pos, NULL, rd, th);
    for (int i = 0; i < 4; i++)
        CHECK(fabs(rd[i] - wn[i]) < 1e-15, "reference [%d]: %.17g vs %.17g", i, rd[i], wn[i]);
    wgml_tensor_free(x);
    wgml_tensor_free(o);
    wgml_tensor_free(pt);
}

/* Large angles (positions up to 60,000) and one element, zero-size. */
static void t_edges(void)
{
    rope_case c;
    memset(&c, 0, sizeof c);
    c.dt = WGML_F32;
    c.ndim = 3;
    c.s[0] = 1;
    c.s[1] = 33;
    c.s[2] = 1;
    c.s[3] = 64;
    c.p = base_params(WGML_ROPE_NORMAL, 64);
    c.pos_hi = 60000;
    run_case(&c);
    c.s[1] = 1;
    c.s[3] = 2;
    c.p.n_dims = 2;
    c.pos_hi = 5;
    run_case(&c);
    const int64_t z[3] = {0, 4, 8}, zp = 0;
    wgml_tensor *x = NULL, *o = NULL, *pt = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F16, 3, z, &x));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F16, 3, z, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &zp, &pt));
    wgml_rope_params p = base_params(WGML_ROPE_NEOX, 8);
    CHECK_OK(wgml_rope(x, pt, &p, o));
    wgml_tensor_free(x);
    wgml_tensor_free(o);
    wgml_tensor_free(pt);
}

/* 2^24 + 7 positions x 1 head x 1 pair: one work item each, 65,537
 * workgroups of 256 (a folded grid); then 64 heads (16 groups of 4). */
static void t_large(void)
{
    rope_case c;
    memset(&c, 0, sizeof c);
    c.dt = WGML_F16;
    c.ndim = 3;
    c.s[0] = 1;
    c.s[1] = (1 << 24) + 7;
    c.s[2] = 1;
    c.s[3] = 2;
    c.p = base_params(WGML_ROPE_NEOX, 2);
    c.pos_hi = 4096;
    run_case(&c);
    c.s[1] = 1100;
    c.s[2] = 64;
    c.s[3] = 128;
    c.p = base_params(WGML_ROPE_NEOX, 128);
    c.pos_hi = 4096;
    run_case(&c);
}

/* NaN rule (wgml.h): rotation mixes the two elements of a pair, so a NaN
 * in either makes both outputs of that pair (at that position and head)
 * NaN, even where the angle is 0 (NaN * sin 0 is NaN); a NaN in a copied
 * element (past n_dims) stays where it is; a NaN freq_factor makes its
 * pair NaN everywhere.  Nothing else changes.  x [S 3, H 2, D 8], n_dims
 * 6, positions 0, 1, 5; every mode and float dtype. */
static void t_nan(void)
{
    const int64_t S = 3, H = 2, D = 8, n = S * H * D, xs[3] = {3, 2, 8}, s4[4] = {1, 3, 2, 8}, nf = 3;
    const int nan_at[3] = {0 * 16 + 0 * 8 + 1, 1 * 16 + 1 * 8 + 7, 2 * 16 + 0 * 8 + 4}; /* (s, h, d) */
    for (int mode = WGML_ROPE_NORMAL; mode <= WGML_ROPE_MROPE; mode++)
        for (size_t d = 0; d < 3; d++)
            for (int with_ff = 0; with_ff < 2; with_ff++) {
                double xv[48], ffv[3] = {1, 2, NAN}, want[48], theta[48];
                for (int64_t i = 0; i < n; i++)
                    xv[i] = 0.125 * (double)(i % 9) - 0.5;
                for (int k = 0; k < 3; k++)
                    xv[nan_at[k]] = NAN;
                int32_t pos[12] = {0, 1, 5, 0, 1, 5, 0, 1, 5, 0, 1, 5}; /* M-RoPE: 4 streams */
                int64_t np = mode == WGML_ROPE_MROPE ? 4 * S : S;
                wgml_tensor *x = t_from(floats[d], 3, xs, xv), *o = t_poisoned(floats[d], 3, xs), *pt = NULL;
                wgml_tensor *ff = with_ff ? t_from(WGML_F32, 1, &nf, ffv) : NULL;
                CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &np, &pt));
                CHECK_OK(wgml_tensor_upload(pt, pos, sizeof(int32_t) * (size_t)np));
                wgml_rope_params p = base_params((wgml_rope_mode)mode, 6);
                if (mode == WGML_ROPE_MROPE) {
                    p.sections[0] = 1;
                    p.sections[1] = p.sections[2] = 1;
                }
                p.freq_factors = ff;
                char what[64];
                snprintf(what, sizeof what, "NaN rope mode %d %s ff %d", mode, wgml_dtype_name(floats[d]), with_ff);
                CHECK_OK(wgml_rope(x, pt, &p, o));
                double *xr = t_values(x), *got = t_values(o);
                wg_rope_ref(&p, s4, xr, pos, with_ff ? ffv : NULL, want, theta);
                /* the rule: the partner of element e within its pair */
                int bad = 0, bad_ref = 0;
                for (int64_t i = 0; i < n; i++) {
                    int64_t e = i % D, partner = e, pair = -1;
                    if (e < 6) {
                        pair = mode == WGML_ROPE_NORMAL ? e / 2 : e % 3;
                        partner = mode == WGML_ROPE_NORMAL ? e ^ 1 : (e + 3) % 6;
                    }
                    bool nan = isnan(xv[i]) || isnan(xv[i - e + partner]) || (with_ff && pair == 2);
                    bad += nan != (bool)isnan(got[i]);
                    bad_ref += nan != (bool)isnan(want[i]);
                    if (nan)
                        got[i] = want[i] = theta[i] = 0; /* the finite rest is compared below */
                }
                CHECK(bad == 0, "%s: %d outputs break the NaN rule", what, bad);
                CHECK(bad_ref == 0, "%s: the reference breaks the NaN rule at %d outputs", what, bad_ref);
                CHECK(rope_compare(what, floats[d], got, want, theta, n, 1) == 0, "%s", what);
                free(xr);
                free(got);
                wgml_tensor_free(ff);
                wgml_tensor_free(pt);
                wgml_tensor_free(o);
                wgml_tensor_free(x);
            }
}

static void t_errors(void)
{
    const int64_t s[3] = {4, 2, 8}, s2[2] = {4, 8}, n4 = 4, n5 = 5, n16 = 16, n3 = 3;
    wgml_tensor *x = NULL, *o = NULL, *pt = NULL, *p5 = NULL, *pf = NULL, *x2 = NULL, *xi = NULL, *oh = NULL,
                *m16 = NULL, *ff3 = NULL, *ffi = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 3, s, &x));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 3, s, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F16, 3, s, &oh));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 3, s, &xi));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s2, &x2));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &n4, &pt));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &n5, &p5));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &n16, &m16));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, &n4, &pf));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, &n3, &ff3));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &n4, &ffi));
    wgml_rope_params p = base_params(WGML_ROPE_NORMAL, 8);
    CHECK_OK(wgml_rope(x, pt, &p, o));
    p.n_heads_rot = 3; /* x has 2 heads */
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_INVALID_ARG, "n_heads_rot past the heads accepted");
    p.n_heads_rot = -1;
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_INVALID_ARG, "negative n_heads_rot accepted");
    p.n_heads_rot = 0;
    p.n_dims = 7;
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_INVALID_ARG, "odd n_dims accepted");
    CHECK(strstr(wgml_last_error(), "n_dims") != NULL, "message: %s", wgml_last_error());
    p.n_dims = 10;
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_INVALID_ARG, "n_dims > head_dim accepted");
    p.n_dims = 0;
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_INVALID_ARG, "n_dims 0 accepted");
    p.n_dims = 8;
    CHECK(wgml_rope(x, p5, &p, o) == WGML_ERR_SHAPE, "5 positions for seq 4 accepted");
    CHECK(strstr(wgml_last_error(), "pos") != NULL, "message: %s", wgml_last_error());
    CHECK(wgml_rope(x, pf, &p, o) == WGML_ERR_DTYPE, "f32 positions accepted");
    CHECK(wgml_rope(xi, pt, &p, xi) == WGML_ERR_DTYPE, "i32 x accepted");
    CHECK(wgml_rope(x, pt, &p, oh) == WGML_ERR_DTYPE, "f32 -> f16 out accepted");
    CHECK(wgml_rope(x2, pt, &p, x2) == WGML_ERR_SHAPE, "2-D x accepted");
    CHECK(wgml_rope(x, pt, &p, x2) == WGML_ERR_SHAPE, "out of the wrong shape accepted");
    p.mode = WGML_ROPE_MROPE;
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_SHAPE, "M-RoPE with seq positions (not 4*seq) accepted");
    CHECK(wgml_rope(x, m16, &p, o) == WGML_ERR_INVALID_ARG, "M-RoPE with all-zero sections accepted");
    p.sections[0] = 2;
    p.sections[1] = -1;
    CHECK(wgml_rope(x, m16, &p, o) == WGML_ERR_INVALID_ARG, "negative section accepted");
    p.sections[1] = 2;
    CHECK_OK(wgml_rope(x, m16, &p, o));
    p.mode = (wgml_rope_mode)7;
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_INVALID_ARG, "unknown mode accepted");
    p.mode = WGML_ROPE_NORMAL;
    p.freq_factors = ff3;
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_SHAPE, "3 freq_factors for 4 pairs accepted");
    p.freq_factors = ffi;
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_DTYPE, "i32 freq_factors accepted");
    p.freq_factors = NULL;
    p.ext_factor = 1;
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_INVALID_ARG, "YaRN without n_ctx_orig accepted");
    p.ext_factor = 0;
    p.freq_base = -5;
    CHECK(wgml_rope(x, pt, &p, o) == WGML_ERR_INVALID_ARG, "negative freq_base accepted");
    p.freq_base = 10000;
    CHECK(wgml_rope(NULL, pt, &p, o) == WGML_ERR_INVALID_ARG, "NULL x accepted");
    CHECK(wgml_rope(x, NULL, &p, o) == WGML_ERR_INVALID_ARG, "NULL pos accepted");
    CHECK(wgml_rope(x, pt, NULL, o) == WGML_ERR_INVALID_ARG, "NULL params accepted");
    CHECK(wgml_rope(x, pt, &p, NULL) == WGML_ERR_INVALID_ARG, "NULL out accepted");
    wgml_tensor *all[] = {x, o, pt, p5, pf, x2, xi, oh, m16, ff3, ffi};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        wgml_tensor_free(all[i]);
}

static void t_registry(void)
{
    bool found = false;
    for (size_t i = 0; i < wgml_op_count(); i++) {
        const wgml_op_info *r = wgml_op_get(i);
        if (r && strcmp(r->name, "ROPE") == 0 && strcmp(r->family, "rope") == 0)
            found = r->dtypes == WG_DT_FLOATS;
    }
    CHECK(found, "ROPE row missing from the registry");
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"known_values", t_known},
        {"modes_dtypes_partial_ff_yarn_views", t_grid},
        {"zero_defaults", t_defaults},
        {"large_angles_one_pair_zero_size", t_edges},
        {"over_65535_workgroups", t_large},
        {"nan_rule", t_nan},
        {"invalid_calls", t_errors},
        {"registry", t_registry},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
