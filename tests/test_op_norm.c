/* Norm family against its CPU reference (wg_norm_ref, double): layer, RMS
 * and L2 norms over the last axis with every combination of weight, bias,
 * residual and sum_out; f32/f16/bf16 (weights f32 or x's dtype); rows of
 * 1, 7, 1000, 4097; strided views; group norm (3 groups over C = 6, 2- to
 * 4-D, strided); batch norm; the effect of eps; more than 65,535 rows;
 * zero-size tensors; in place; the NaN rule; and the error paths.
 *
 * Tolerance, relative to the largest magnitude of the row (|value|, or
 * |value - bias| + |bias| where a bias can cancel the rest): f32 1e-5.  The
 * statistics are f32 sums over up to 4097 elements merged in a tree (depth
 * ~12 plus the per-thread runs of <= 17): mean and variance carry ~1e-6
 * relative error (Welford's updates are backward stable); inverseSqrt is
 * good to 2 ulps; (v - mean) * scale * weight + bias adds ~4 roundings of
 * values bounded by the row's max.  That is ~3e-6 of the row max.
 * 16-bit outputs add one unit of their rounding relative to |value|
 * (f16 2^-10, bf16 2^-7); sum_out is x + residual rounded once, compared
 * the same way.
 */
#include "nan_table.h"
#include "ops/rows.h"

static const wgml_dtype floats[] = {WGML_F32, WGML_F16, WGML_BF16};

/* |got - want| <= rtol * (max of the row's magnitudes) + dtype rounding.
 * The magnitude of an element is |want| unless `bias` is given: then it is
 * |want - bias| + |bias|, because y * weight + bias can cancel to far below
 * either term (a row of length 1 normalises to +-1, so every row computes
 * +-w + b) while the rounding error stays relative to the terms. */
static int row_compare(const char *what, wgml_dtype dt, const double *got, const double *want, const double *bias,
                       int64_t n, int64_t len, double rtol)
{
    double drel = 0, dabs = 0;
    t_tol(dt, &drel, &dabs);
    int bad = 0;
    for (int64_t r = 0; len && r < n / len; r++) {
        double rm = 0;
        for (int64_t j = 0; j < len; j++)
            rm = fmax(rm, bias ? fabs(want[r * len + j] - bias[r * len + j]) + fabs(bias[r * len + j])
                               : fabs(want[r * len + j]));
        for (int64_t j = 0; j < len; j++) {
            int64_t i = r * len + j;
            uint8_t tmp[8];
            wg_host_set(dt, tmp, 0, want[i]);
            double w = wg_host_get(dt, tmp, 0), g = got[i];
            bool ok = g == w || (isnan(g) && isnan(w)) || fabs(g - w) <= rtol * rm + drel * fabs(w) + dabs;
            if (!ok && bad++ < 4)
                printf("    %s [%lld]: got %.9g want %.9g (row max %.3g)\n", what, (long long)i, g, w, rm);
        }
    }
    if (bad > 4)
        printf("    %s: %d mismatches of %lld\n", what, bad, (long long)n);
    return bad;
}

enum { F_W = 1, F_B = 2, F_RES = 4, F_SUM = 8, F_WX = 16 /* weight/bias in x's dtype */, F_VIEW = 32 /* strided */ };

typedef struct nm_case {
    wgml_norm_kind kind;
    wgml_dtype dt;
    int ndim;
    int64_t shape[4];
    unsigned flags;
    int groups;
    float eps;
    int path;   /* 1: must take the vector path (ROWS4), 2: must not; 0: either */
} nm_case;

/* x (or a residual/out) of `shape`, as a view with dims 0 and 1 swapped
 * of a contiguous tensor when `view`; random or poisoned. */
static wgml_tensor *make(wgml_dtype dt, int ndim, const int64_t *shape, bool view, bool poison, double lo, double hi,
                         t_tensor *own)
{
    int64_t s[4];
    memcpy(s, shape, sizeof(int64_t) * (size_t)ndim);
    view = view && ndim >= 2;
    if (view) {
        s[0] = shape[1];
        s[1] = shape[0];
    }
    if (poison)
        own->t = t_poisoned(dt, ndim, s);
    else
        *own = t_random(dt, ndim, s, lo, hi);
    wgml_tensor *v = NULL;
    if (view)
        CHECK_OK(wgml_view_transpose(own->t, 0, 1, &v));
    else
        CHECK_OK(wgml_view_reshape(own->t, ndim, s, &v));
    return v;
}

/* Host values of a per-channel or per-last-axis parameter, broadcast to x. */
static double *expand(const t_tensor *t, const nm_case *c, int64_t n)
{
    if (!t->t)
        return NULL;
    double *e = malloc(sizeof(double) * (size_t)(n + 1));
    bool chan = c->kind == WGML_GROUP_NORM || c->kind == WGML_BATCH_NORM;
    int64_t inner = 1, len = c->ndim ? c->shape[c->ndim - 1] : 1;
    for (int i = 2; chan && i < c->ndim; i++)
        inner *= c->shape[i];
    for (int64_t i = 0; i < n; i++)
        e[i] = chan ? t->val[(i / inner) % c->shape[1]] : t->val[i % len];
    return e;
}

static void run(const char *what, const nm_case *c)
{
    bool view = c->flags & F_VIEW;
    t_tensor xo = {0}, ro = {0}, oo = {0}, so = {0}, w = {0}, b = {0}, mn = {0}, vr = {0};
    wgml_tensor *x = make(c->dt, c->ndim, c->shape, view, false, -3, 5, &xo);
    wgml_tensor *o = make(c->dt, c->ndim, c->shape, view, true, 0, 0, &oo);
    wgml_tensor *r = c->flags & F_RES ? make(c->dt, c->ndim, c->shape, false, false, -2, 2, &ro) : NULL;
    wgml_tensor *s = c->flags & F_SUM ? make(c->dt, c->ndim, c->shape, view, true, 0, 0, &so) : NULL;
    bool chan = c->kind == WGML_GROUP_NORM || c->kind == WGML_BATCH_NORM;
    int64_t pn = c->ndim ? (chan ? c->shape[1] : c->shape[c->ndim - 1]) : 1;
    wgml_dtype pdt = c->flags & F_WX ? c->dt : WGML_F32;
    if (c->flags & F_W)
        w = t_random(pdt, 1, &pn, -2, 2);
    if (c->flags & F_B)
        b = t_random(pdt, 1, &pn, -1, 1);
    if (c->kind == WGML_BATCH_NORM) {
        mn = t_random(c->dt, 1, &pn, -1, 1);
        vr = t_random(c->dt, 1, &pn, 0.1, 4);
    }
    wgml_norm_params p = {c->kind, c->eps, c->groups, w.t, b.t, r, mn.t, vr.t, s};
    wgml_status st = wgml_norm(x, &p, o);
    CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
    const char *kn = wg_last_dispatch(t_ctx) ? wg_last_dispatch(t_ctx) : "";
    CHECK(c->path != 1 || strstr(kn, "ROWS4"), "%s: vector path not taken (%s)", what, kn);
    CHECK(c->path != 2 || !strstr(kn, "ROWS4"), "%s: vector path taken (%s)", what, kn);
    int64_t n = wgml_tensor_nelem(x);
    double *xv = t_values(x), *rv = r ? t_values(r) : NULL, *we = expand(&w, c, n), *be = expand(&b, c, n);
    double *want = malloc(sizeof(double) * (size_t)(n + 1)), *wsum = malloc(sizeof(double) * (size_t)(n + 1));
    wg_norm_ref(c->ndim, c->shape, xv, rv, we, be, mn.val, vr.val, &p, want, wsum);
    int64_t len = c->ndim ? c->shape[c->ndim - 1] : 1;
    if (c->kind == WGML_GROUP_NORM) {
        len = c->shape[1] / c->groups;
        for (int i = 2; i < c->ndim; i++)
            len *= c->shape[i];
    }
    double *got = t_values(o);
    CHECK(row_compare(what, c->dt, got, want, be, n, len, 1e-5) == 0, "%s", what);
    free(got);
    if (s) {
        got = t_values(s);
        CHECK(row_compare(what, c->dt, got, wsum, NULL, n, len, 1e-6) == 0, "%s: sum_out", what);
        free(got);
    }
    free(xv), free(rv), free(we), free(be), free(want), free(wsum);
    wgml_tensor_free(x), wgml_tensor_free(o), wgml_tensor_free(r), wgml_tensor_free(s);
    t_tensor *all[] = {&xo, &ro, &oo, &so, &w, &b, &mn, &vr};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        t_free(all[i]);
}

static nm_case mk(wgml_norm_kind kind, wgml_dtype dt, int ndim, const int64_t *shape, unsigned flags)
{
    nm_case c = {kind, dt, ndim, {0, 0, 0, 0}, flags, 0, 1e-5f, 0};
    memcpy(c.shape, shape, sizeof(int64_t) * (size_t)ndim);
    return c;
}

static const char *kname(wgml_norm_kind k)
{
    static const char *n[] = {"layer", "rms", "l2", "group", "batch"};
    return n[k];
}

/* LAYER/RMS/L2: every flag combination in f32, each dtype over row
 * lengths 1, 7, 1000, 4097, mixed dtypes, strided views.  (Options are
 * uniform flags in the kernel; dtypes and the workgroup size are kernel
 * variants, each a ~0.5 s compile on lavapipe, so the 16-bit grid is
 * thinner.) */
static void t_last_axis(void)
{
    const int64_t s[3] = {2, 3, 37};
    const int64_t lens[] = {1, 7, 1000, 4097};
    for (int k = 0; k <= WGML_L2_NORM; k++) {
        for (unsigned f = 0; f < 16; f++) {
            char what[64];
            snprintf(what, sizeof what, "%s f32 flags %u", kname((wgml_norm_kind)k), f);
            nm_case c = mk((wgml_norm_kind)k, WGML_F32, 3, s, f);
            run(what, &c);
        }
        for (size_t d = 0; d < 3; d++)
            for (size_t l = 0; l < 4; l++) {
                if (d && k != WGML_LAYER_NORM && l != (k == WGML_RMS_NORM ? 1u : 3u))
                    continue;
                int64_t shape[2] = {3, lens[l]};
                char what[64];
                snprintf(what, sizeof what, "%s %s len %lld", kname((wgml_norm_kind)k), wgml_dtype_name(floats[d]),
                         (long long)lens[l]);
                nm_case c = mk((wgml_norm_kind)k, floats[d], 2, shape, F_W | F_B | F_RES | F_SUM | (d ? F_WX : 0));
                run(what, &c);
            }
    }
    /* strided x, out, sum_out; the fused rms_norm x weight */
    const int64_t v[3] = {5, 4, 200};
    for (int k = 0; k <= WGML_L2_NORM; k++) {
        nm_case c = mk((wgml_norm_kind)k, WGML_F16, 3, v, F_VIEW | F_W | F_RES | F_SUM | F_WX);
        run("strided views", &c);
    }
    nm_case c = mk(WGML_RMS_NORM, WGML_BF16, 3, v, F_W | F_WX);
    run("rms x weight bf16", &c);
}

/* The register-cached vector path (ROWS4) of LAYER/RMS/L2: every
 * vectors-per-thread count (R = 1, 2, 4, 8 over both workgroup sizes)
 * with residual, weight, bias and sum_out, the longest row it takes and
 * the first it leaves; f16 (a vector type only with ShaderF16); a length
 * that is not a multiple of 4 falls back. */
static void t_vector_rows(void)
{
    bool f16v = wg_has(t_ctx, WGML_FEATURE_F16);
    const int64_t lens[] = {4, 256, 1024, 2048, 5000, 8192, 8196, 1022};
    for (int k = 0; k <= WGML_L2_NORM; k++)
        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
            int64_t shape[3] = {2, 3, lens[l]};
            nm_case c = mk((wgml_norm_kind)k, WGML_F32, 3, shape, l % 2 ? F_W | F_B | F_RES | F_SUM : F_W | F_SUM);
            c.path = lens[l] >= 8196 || lens[l] % 4 ? 2 : 1;
            char what[64];
            snprintf(what, sizeof what, "vector %s len %lld", kname((wgml_norm_kind)k), (long long)lens[l]);
            run(what, &c);
        }
    /* above 2^24 elements, on the vector path */
    const int64_t huge[2] = {4097, 4096};
    nm_case c = mk(WGML_RMS_NORM, WGML_F32, 2, huge, F_W);
    c.path = 1;
    run("16.8M elements", &c);
    const int64_t s2[2] = {3, 1024};
    c = mk(WGML_RMS_NORM, WGML_F16, 2, s2, F_W | F_RES | F_SUM | F_WX);
    c.path = f16v ? 1 : 2;
    run("vector rms f16", &c);
    c = mk(WGML_LAYER_NORM, WGML_F32, 2, s2, F_W | F_VIEW);
    c.path = 2; /* strided */
    run("strided falls back", &c);
}

/* Every operand in its own dtype. */
static void t_mixed(void)
{
    const int64_t s[2] = {3, 45};
    t_tensor x = t_random(WGML_F32, 2, s, -3, 3), r = t_random(WGML_F16, 2, s, -3, 3),
             w = t_random(WGML_BF16, 1, s + 1, -2, 2), b = t_random(WGML_F16, 1, s + 1, -1, 1);
    wgml_tensor *o = t_poisoned(WGML_BF16, 2, s), *so = t_poisoned(WGML_F16, 2, s);
    double we[135], be[135], want[135], wsum[135];
    for (int i = 0; i < 135; i++) {
        we[i] = w.val[i % 45];
        be[i] = b.val[i % 45];
    }
    wgml_norm_params p = {WGML_LAYER_NORM, 1e-5f, 0, w.t, b.t, r.t, NULL, NULL, so};
    CHECK_OK(wgml_norm(x.t, &p, o));
    wg_norm_ref(2, s, x.val, r.val, we, be, NULL, NULL, &p, want, wsum);
    double *got = t_values(o), *gs = t_values(so);
    CHECK(row_compare("mixed out", WGML_BF16, got, want, be, 135, 45, 1e-5) == 0, "mixed dtypes out");
    CHECK(row_compare("mixed sum", WGML_F16, gs, wsum, NULL, 135, 45, 1e-6) == 0, "mixed dtypes sum_out");
    free(got), free(gs);
    wgml_tensor_free(o), wgml_tensor_free(so);
    t_free(&x), t_free(&r), t_free(&w), t_free(&b);
}

/* Weights in x's dtype throughout: each other dtype would be one more
 * kernel variant to compile (the last-axis cases cover f32 weights). */
static const unsigned chan_flags[] = {F_WX, F_W | F_B | F_WX, F_RES | F_SUM, F_W | F_B | F_RES | F_SUM | F_WX,
                                      F_VIEW | F_W | F_RES | F_SUM | F_WX, F_VIEW | F_B | F_WX};

/* Group norm: 3 groups over C = 6, 2- to 4-D, options, strided. */
static void t_group(void)
{
    const int64_t s4[4] = {2, 6, 5, 7}, s3[3] = {3, 6, 11}, s2[2] = {4, 6};
    const int64_t *shapes[3] = {s2, s3, s4};
    for (int nd = 2; nd <= 4; nd++)
        for (size_t f = 0; f < sizeof chan_flags / sizeof *chan_flags; f++) {
            nm_case c = mk(WGML_GROUP_NORM, floats[4 - nd], nd, shapes[nd - 2], chan_flags[f]);
            c.groups = 3;
            char what[64];
            snprintf(what, sizeof what, "group %d-D %s flags %u", nd, wgml_dtype_name(c.dt), chan_flags[f]);
            run(what, &c);
        }
    nm_case c = mk(WGML_GROUP_NORM, WGML_F32, 4, s4, F_W | F_B);
    c.groups = 1;
    run("group 1 (layer over C, H, W)", &c);
    c.groups = 6;
    run("group 6 (instance norm)", &c);
}

static void t_batch(void)
{
    const int64_t s4[4] = {2, 6, 5, 7}, s3[3] = {3, 6, 11}, s2[2] = {4, 6};
    const int64_t *shapes[3] = {s2, s3, s4};
    for (int nd = 2; nd <= 4; nd++)
        for (size_t f = 0; f < sizeof chan_flags / sizeof *chan_flags; f++) {
            nm_case c = mk(WGML_BATCH_NORM, floats[4 - nd], nd, shapes[nd - 2], chan_flags[f]);
            c.eps = 1e-3f;
            char what[64];
            snprintf(what, sizeof what, "batch %d-D %s flags %u", nd, wgml_dtype_name(c.dt), chan_flags[f]);
            run(what, &c);
        }
}

/* eps changes the result as the reference says (small values, where eps
 * dominates the variance), and eps = 0 is used as given. */
static void t_eps(void)
{
    const int64_t s[2] = {4, 64};
    t_tensor x = t_random(WGML_F32, 2, s, -0.01, 0.01);
    wgml_tensor *o = t_poisoned(WGML_F32, 2, s);
    double *first = NULL;
    const float eps[3] = {0, 0.1f, 1};
    for (int k = 0; k <= WGML_L2_NORM; k++)
        for (int e = 0; e < 3; e++) {
            wgml_norm_params p = {(wgml_norm_kind)k, eps[e], 0, NULL, NULL, NULL, NULL, NULL, NULL};
            CHECK_OK(wgml_norm(x.t, &p, o));
            double *got = t_values(o), want[256];
            wg_norm_ref(2, s, x.val, NULL, NULL, NULL, NULL, NULL, &p, want, NULL);
            char what[48];
            snprintf(what, sizeof what, "%s eps %g", kname((wgml_norm_kind)k), eps[e]);
            CHECK(row_compare(what, WGML_F32, got, want, NULL, 256, 64, 1e-5) == 0, "%s", what);
            if (e == 0) {
                free(first);
                first = got;
            } else {
                CHECK(fabs(got[0] - first[0]) > 1e-3 * fabs(first[0]), "%s: eps had no effect (%g vs %g)", what,
                      got[0], first[0]);
                free(got);
            }
        }
    free(first);
    wgml_tensor_free(o);
    t_free(&x);
}

/* In place (out == x, sum_out == residual), > 65,535 rows, zero-size. */
static void t_sizes_in_place(void)
{
    const int64_t s[2] = {6, 129};
    t_tensor x = t_random(WGML_BF16, 2, s, -3, 3), r = t_random(WGML_BF16, 2, s, -3, 3), w = t_random(WGML_F32, 1, s + 1, -2, 2);
    double want[6 * 129], wsum[6 * 129];
    wgml_norm_params p = {WGML_LAYER_NORM, 1e-5f, 0, w.t, NULL, r.t, NULL, NULL, r.t};
    double *we = malloc(sizeof want);
    for (int i = 0; i < 6 * 129; i++)
        we[i] = w.val[i % 129];
    wg_norm_ref(2, s, x.val, r.val, we, NULL, NULL, NULL, &p, want, wsum);
    CHECK_OK(wgml_norm(x.t, &p, x.t));
    double *got = t_values(x.t), *gs = t_values(r.t);
    CHECK(row_compare("in place", WGML_BF16, got, want, NULL, 6 * 129, 129, 1e-5) == 0, "in place out");
    CHECK(row_compare("in place sum", WGML_BF16, gs, wsum, NULL, 6 * 129, 129, 1e-6) == 0, "in place sum_out");
    free(got), free(gs), free(we);
    t_free(&x), t_free(&r), t_free(&w);

    const int64_t big[2] = {70001, 6};
    nm_case c = mk(WGML_RMS_NORM, WGML_F32, 2, big, F_W);
    run("70001 rows", &c);
    const int64_t z[2][3][3] = {{{0, 16}, {4, 0}, {0, 6, 3}}, {{0, 6}, {0, 6, 3}, {2, 6, 0}}};
    const int zn[3] = {2, 2, 3};
    for (int k = 0; k <= WGML_BATCH_NORM; k++)
        for (int i = 0; i < 3; i++) {
            c = mk((wgml_norm_kind)k, WGML_F32, k >= WGML_GROUP_NORM ? 3 - (i == 0) : zn[i],
                   z[k >= WGML_GROUP_NORM][i], F_W | F_B | F_RES | F_SUM);
            c.groups = 3;
            run("zero-size", &c);
        }
    const int64_t one[1] = {1};
    c = mk(WGML_LAYER_NORM, WGML_F32, 0, one, 0);
    run("scalar", &c);
}

/* NaN rule (wgml.h): LAYER/RMS/L2 write a row containing a NaN (in x or
 * the residual) as all NaN, GROUP a group; BATCH and weight/bias are per
 * element, so a NaN there (or a NaN running mean/var) reaches only the
 * outputs that read it; sum_out is x + residual per element.  Table:
 * x [4, L] (L = 7: scalar path, 8: vector path where it applies; GROUP
 * [2, 2, L] in 2 groups, BATCH [1, 4, L]) with a NaN in row 0, a row of
 * NaN, a NaN residual in row 2 and a clean row 3; the weight is NaN at
 * column 5 (per channel: channel 1); BATCH's mean is NaN for channel 1,
 * its var for channel 2. */
static void nan_case(wgml_norm_kind kind, wgml_dtype dt, int64_t L, bool opts)
{
    bool chan = kind == WGML_GROUP_NORM || kind == WGML_BATCH_NORM;
    int64_t C = kind == WGML_BATCH_NORM ? 4 : 2;
    const int64_t s[2] = {4, L}, bs[3] = {4 / C, C, L};
    int64_t n = 4 * L, pn = chan ? C : L;
    double xv[32], rv[32], wv[8], bv[8], mv[4] = {0.5, NAN, 0.5, -1}, vv[4] = {2, 1, NAN, 1};
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i / L, j = i % L;
        xv[i] = (r == 0 && j == 2) || r == 1 ? NAN : 0.3 * (double)j - 1 + 0.1 * (double)r;
        rv[i] = r == 2 && j == 4 ? NAN : 0.25;
    }
    for (int64_t j = 0; j < pn; j++) {
        wv[j] = j == (chan ? 1 : 5) ? NAN : 1.5;
        bv[j] = 0.5;
    }
    wgml_tensor *x = t_from(dt, chan ? 3 : 2, chan ? bs : s, xv), *o = t_poisoned(dt, chan ? 3 : 2, chan ? bs : s);
    wgml_tensor *r = opts ? t_from(dt, chan ? 3 : 2, chan ? bs : s, rv) : NULL;
    wgml_tensor *so = opts ? t_poisoned(dt, chan ? 3 : 2, chan ? bs : s) : NULL;
    wgml_tensor *w = opts ? t_from(WGML_F32, 1, &pn, wv) : NULL, *b = opts ? t_from(WGML_F32, 1, &pn, bv) : NULL;
    wgml_tensor *mn = kind == WGML_BATCH_NORM ? t_from(dt, 1, &pn, mv) : NULL;
    wgml_tensor *vr = kind == WGML_BATCH_NORM ? t_from(dt, 1, &pn, vv) : NULL;
    wgml_norm_params p = {kind, 1e-5f, 2, w, b, r, mn, vr, so};
    char what[64];
    snprintf(what, sizeof what, "NaN %s %s len %lld%s", kname(kind), wgml_dtype_name(dt), (long long)L,
             opts ? " residual weight bias sum_out" : "");
    CHECK_OK(wgml_norm(x, &p, o));
    /* the rule, element by element: which outputs must be NaN */
    bool vn[32], want_nan[32];
    for (int64_t i = 0; i < n; i++)
        vn[i] = isnan(xv[i]) || (opts && isnan(rv[i]));
    for (int64_t i = 0; i < n; i++) {
        int64_t row = i / L, ch = (i / L) % C, j = i % L;
        bool any = false; /* a NaN among the values normalised together */
        for (int64_t k = 0; k < L; k++)
            any = any || vn[row * L + k];
        if (kind == WGML_BATCH_NORM)
            any = vn[i] || isnan(mv[ch]) || isnan(vv[ch]);
        want_nan[i] = any || (opts && isnan(wv[chan ? ch : j]));
    }
    double *got = t_values(o), want[32], sum[32];
    double *xr = t_values(x), *rr = r ? t_values(r) : NULL, we[32], be[32], *mr = mn ? t_values(mn) : NULL,
           *vrr = vr ? t_values(vr) : NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = chan ? (i / L) % C : i % L;
        we[i] = wv[k];
        be[i] = bv[k];
    }
    wg_norm_ref(chan ? 3 : 2, chan ? bs : s, xr, rr, opts ? we : NULL, opts ? be : NULL, mr, vrr, &p, want, sum);
    int bad = 0, bad_ref = 0;
    for (int64_t i = 0; i < n; i++) {
        bad += want_nan[i] != (bool)isnan(got[i]);
        bad_ref += want_nan[i] != (bool)isnan(want[i]);
    }
    CHECK(bad == 0, "%s: %d outputs break the NaN rule", what, bad);
    CHECK(bad_ref == 0, "%s: the reference breaks the NaN rule at %d outputs", what, bad_ref);
    CHECK(row_compare(what, dt, got, want, opts ? be : NULL, n, L, 1e-5) == 0, "%s", what);
    if (so) {
        double *gs = t_values(so);
        CHECK(row_compare(what, dt, gs, sum, NULL, n, L, 1e-6) == 0, "%s: sum_out", what);
        free(gs);
    }
    free(got), free(xr), free(rr), free(mr), free(vrr);
    wgml_tensor *all[] = {x, o, r, so, w, b, mn, vr};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        wgml_tensor_free(all[i]);
}

static void t_nan(void)
{
    for (int k = WGML_LAYER_NORM; k <= WGML_BATCH_NORM; k++)
        for (size_t d = 0; d < 3; d++)
            for (int64_t L = 7; L <= 8; L++)
                for (int opts = 0; opts < 2; opts++)
                    nan_case((wgml_norm_kind)k, floats[d], L, opts);
}

static void t_errors(void)
{
    const int64_t s[3] = {2, 6, 5}, s7[1] = {7}, s6[1] = {6}, s5[1] = {5}, s1[1] = {1};
    wgml_tensor *x, *o, *w7, *w6, *w5, *i32, *x1;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 3, s, &x));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 3, s, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, s7, &w7));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, s6, &w6));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, s5, &w5));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 3, s, &i32));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, s1, &x1));
    wgml_norm_params p = {WGML_LAYER_NORM, 1e-5f, 0, w5, w5, NULL, NULL, NULL, NULL};
    CHECK_OK(wgml_norm(x, &p, o));
    p.weight = w7;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_SHAPE, "weight [7] for rows of 5 accepted");
    p.weight = NULL;
    CHECK(wgml_norm(x, &p, w6) == WGML_ERR_SHAPE, "wrong out shape accepted");
    CHECK(wgml_norm(x, &p, i32) == WGML_ERR_DTYPE, "i32 out accepted");
    CHECK(wgml_norm(i32, &p, o) == WGML_ERR_DTYPE, "i32 x accepted");
    p.residual = w7;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_SHAPE, "residual [7] accepted");
    p.residual = NULL;
    p.sum_out = w5;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_SHAPE, "sum_out [5] accepted");
    p.sum_out = NULL;
    CHECK(wgml_norm(NULL, &p, o) == WGML_ERR_INVALID_ARG, "NULL x accepted");
    CHECK(wgml_norm(x, NULL, o) == WGML_ERR_INVALID_ARG, "NULL params accepted");
    p.eps = -1;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_INVALID_ARG, "negative eps accepted");
    p.eps = 1e-5f;
    p.kind = (wgml_norm_kind)9;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_INVALID_ARG, "unknown kind accepted");
    p.kind = WGML_GROUP_NORM;
    p.groups = 4;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_SHAPE, "4 groups over 6 channels accepted");
    CHECK(strstr(wgml_last_error(), "groups") != NULL, "message: %s", wgml_last_error());
    p.groups = 0;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_INVALID_ARG, "0 groups accepted");
    p.groups = 3;
    p.weight = w5;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_SHAPE, "group weight [5] for C = 6 accepted");
    p.weight = w6;
    p.bias = w6;
    CHECK_OK(wgml_norm(x, &p, o));
    CHECK(wgml_norm(x1, &p, x1) == WGML_ERR_SHAPE, "group norm of 1-D accepted");
    p.kind = WGML_BATCH_NORM;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_INVALID_ARG, "batch norm without mean/var accepted");
    p.mean = w6;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_INVALID_ARG, "batch norm without var accepted");
    p.var = w5;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_SHAPE, "var [5] for C = 6 accepted");
    p.var = w6;
    CHECK_OK(wgml_norm(x, &p, o));
    p.kind = WGML_RMS_NORM;
    p.weight = p.bias = NULL;
    CHECK(wgml_norm(x, &p, o) == WGML_ERR_INVALID_ARG, "mean/var for RMS_NORM accepted");
    wgml_tensor *all[] = {x, o, w7, w6, w5, i32, x1};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        wgml_tensor_free(all[k]);
}

static void t_registry(void)
{
    int found = 0;
    for (size_t i = 0; i < wgml_op_count(); i++)
        found += strcmp(wgml_op_get(i)->family, "norm") == 0;
    CHECK(found == 5, "norm registry rows: %d", found);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"layer_rms_l2_options_dtypes_lengths", t_last_axis},
        {"vector_rows", t_vector_rows},
        {"mixed_dtypes", t_mixed},
        {"group_norm", t_group},
        {"batch_norm", t_batch},
        {"eps_effect", t_eps},
        {"in_place_many_rows_zero_size", t_sizes_in_place},
        {"nan_rule", t_nan},
        {"invalid_calls", t_errors},
        {"registry", t_registry},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_stats cs;
    if (wgml_ctx_stats_get(t_ctx, &cs) == WGML_OK) /* compiles dominate the run time on lavapipe */
        printf("pipelines compiled: %llu\n", (unsigned long long)cs.pipelines_compiled);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
