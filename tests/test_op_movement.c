/* Movement family against its CPU reference: permute, repeat, concat, pad,
 * flip, roll, tri and diag on every plain dtype, over odd sizes, one
 * element, zero-size dims and 4-D shapes, reading transposed / strided
 * views and writing into transposed / strided views of the output; plus
 * grids over 65,535 workgroups, tensors larger than one storage binding,
 * x and out in one buffer, and the error paths.
 *
 * Tolerance: none.  Every op only moves values (or writes a pad value or
 * zero converted to the dtype), so results must equal the reference bit
 * for bit after rounding the reference to the dtype. */
#include "op_harness.h"
#include "ops/movement.h"

static const wgml_dtype plain[] = {WGML_F32, WGML_F16, WGML_BF16, WGML_I32, WGML_U32, WGML_I8, WGML_U8, WGML_BOOL};
#define NPLAIN (sizeof plain / sizeof *plain)

/* ------------------------------------------------------------ helpers */

static void dt_range(wgml_dtype dt, double *lo, double *hi)
{
    *lo = dt == WGML_U8 || dt == WGML_U32 || dt == WGML_BOOL ? 0 : -100;
    *hi = dt == WGML_U8 ? 250 : 100;
}

/* An input as a view: layout 0 contiguous, 1 the transpose of the last two
 * dims of a contiguous tensor, 2 every other element of the last dim.
 * val holds the view's values in logical order. */
typedef struct in_t {
    t_tensor base;
    wgml_tensor *v;
    double *val;
} in_t;

static in_t make_in(wgml_dtype dt, int nd, const int64_t *shape, int layout)
{
    in_t r = {0};
    int64_t bs[4];
    memcpy(bs, shape, sizeof(int64_t) * (size_t)nd);
    if (layout == 1 && nd < 2)
        layout = 2;
    if (layout == 2 && nd < 1)
        layout = 0;
    if (layout == 1) {
        bs[nd - 1] = shape[nd - 2];
        bs[nd - 2] = shape[nd - 1];
    } else if (layout == 2) {
        bs[nd - 1] = 2 * shape[nd - 1] + 1;
    }
    double lo, hi;
    dt_range(dt, &lo, &hi);
    r.base = t_random(dt, nd, bs, lo, hi);
    if (!r.base.t)
        return r;
    if (layout == 1)
        CHECK_OK(wgml_view_transpose(r.base.t, -1, -2, &r.v));
    else if (layout == 2)
        CHECK_OK(wgml_view_slice(r.base.t, -1, 1, bs[nd - 1], 2, &r.v));
    else
        CHECK_OK(wgml_view_reshape(r.base.t, nd, shape, &r.v));
    if (!r.v)
        return r;
    int64_t n = wgml_tensor_nelem(r.v);
    r.val = malloc(sizeof(double) * (size_t)(n + 1));
    int64_t off = (int64_t)((r.v->offset - r.base.t->offset) / wgml_dtype_block_bytes(dt));
    for (int64_t i = 0; i < n; i++) { /* gather through the view's own strides */
        int64_t k = i, at = off;
        for (int d = nd - 1; d >= 0; d--) {
            at += (k % shape[d]) * r.v->strides[d];
            k /= shape[d];
        }
        r.val[i] = r.base.val[at];
    }
    return r;
}

static void free_in(in_t *r)
{
    wgml_tensor_free(r->v);
    t_free(&r->base);
    free(r->val);
}

/* An output view over a poisoned tensor, same layouts as make_in. */
typedef struct out_t {
    wgml_tensor *base, *v;
    int layout;
} out_t;

static out_t make_out(wgml_dtype dt, int nd, const int64_t *shape, int layout)
{
    out_t r = {0};
    int64_t bs[4];
    memcpy(bs, shape, sizeof(int64_t) * (size_t)nd);
    if (layout == 1 && nd < 2)
        layout = 2;
    if (layout == 2 && nd < 1)
        layout = 0;
    if (layout == 1) {
        bs[nd - 1] = shape[nd - 2];
        bs[nd - 2] = shape[nd - 1];
    } else if (layout == 2) {
        bs[nd - 1] = 2 * shape[nd - 1] + 1;
    }
    r.layout = layout;
    r.base = t_poisoned(dt, nd, bs);
    if (!r.base)
        return r;
    if (layout == 1)
        CHECK_OK(wgml_view_transpose(r.base, -1, -2, &r.v));
    else if (layout == 2)
        CHECK_OK(wgml_view_slice(r.base, -1, 1, bs[nd - 1], 2, &r.v));
    else
        CHECK_OK(wgml_view_reshape(r.base, nd, shape, &r.v));
    return r;
}

/* Layout 2 leaves the even columns of the base alone: they must still be poison. */
static int poison_intact(const out_t *o)
{
    if (o->layout != 2)
        return 0;
    size_t bytes = wgml_tensor_nbytes(o->base), esz = wgml_dtype_block_bytes(o->base->dtype);
    uint8_t *raw = malloc(bytes + 1);
    CHECK_OK(wgml_tensor_download(o->base, raw, bytes));
    int64_t w = o->base->shape[o->base->ndim - 1], bad = 0;
    for (size_t e = 0; e < bytes / esz; e++)
        if ((int64_t)e % w % 2 == 0)
            for (size_t b = 0; b < esz; b++)
                bad += raw[e * esz + b] != 0xa5;
    free(raw);
    return (int)bad;
}

static void free_out(out_t *o)
{
    wgml_tensor_free(o->v);
    wgml_tensor_free(o->base);
}

/* Exact comparison after rounding want to the dtype (t_compare's 16-bit
 * allowance never matters: the values are already of the dtype). */
static int cmp_exact(const char *what, wgml_dtype dt, const double *got, const double *want, int64_t n)
{
    return t_compare(what, dt, got, want, n, 0, 0);
}

/* ------------------------------------------------------------ the op grid */

enum { OP_PERMUTE, OP_REPEAT, OP_PAD, OP_FLIP, OP_ROLL, OP_TRI, OP_DIAG };

typedef struct op_arg {
    int op;
    int perm[4];
    int64_t before[4], after[4], shifts[4];
    wgml_pad_mode mode;
    double value;
    unsigned mask;
    int upper;
    int64_t k;
    int to_matrix;
    int ond;
    int64_t oshape[4]; /* repeat: out shape */
} op_arg;

static const char *op_names[] = {"permute", "repeat", "pad", "flip", "roll", "tri", "diag"};

/* Output shape of the op on x [nd, shape]. */
static int out_shape(const op_arg *a, int nd, const int64_t *s, int64_t *os)
{
    switch (a->op) {
    case OP_PERMUTE:
        for (int d = 0; d < nd; d++)
            os[d] = s[a->perm[d]];
        return nd;
    case OP_REPEAT:
        memcpy(os, a->oshape, sizeof(int64_t) * 4);
        return a->ond;
    case OP_PAD:
        for (int d = 0; d < nd; d++)
            os[d] = s[d] + a->before[d] + a->after[d];
        return nd;
    case OP_DIAG:
        memcpy(os, s, sizeof(int64_t) * (size_t)nd);
        if (a->to_matrix) {
            os[nd] = s[nd - 1];
            return nd + 1;
        }
        return nd - 1;
    default:
        memcpy(os, s, sizeof(int64_t) * (size_t)nd);
        return nd;
    }
}

static wgml_status run_op(const op_arg *a, const wgml_tensor *x, wgml_tensor *o)
{
    switch (a->op) {
    case OP_PERMUTE: return wgml_permute(x, a->perm, o);
    case OP_REPEAT: return wgml_repeat(x, o);
    case OP_PAD: return wgml_pad(x, a->before, a->after, a->mode, a->value, o);
    case OP_FLIP: return wgml_flip(x, a->mask, o);
    case OP_ROLL: return wgml_roll(x, a->shifts, o);
    case OP_TRI: return wgml_tri(x, a->upper, a->k, o);
    default: return wgml_diag(x, o);
    }
}

static void ref_op(const op_arg *a, const double *x, int nd, const int64_t *s, double *out)
{
    switch (a->op) {
    case OP_PERMUTE: wg_permute_ref(x, nd, s, a->perm, out); break;
    case OP_REPEAT: wg_repeat_ref(x, nd, s, a->ond, a->oshape, out); break;
    case OP_PAD: wg_pad_ref(x, nd, s, a->before, a->after, a->mode, a->value, out); break;
    case OP_FLIP: wg_flip_ref(x, nd, s, a->mask, out); break;
    case OP_ROLL: wg_roll_ref(x, nd, s, a->shifts, out); break;
    case OP_TRI: wg_tri_ref(x, nd, s, a->upper, a->k, out); break;
    default: wg_diag_ref(x, nd, s, a->to_matrix, out); break;
    }
}

static int n_checked;

static void check_op(const op_arg *a, wgml_dtype dt, int nd, const int64_t *shape, int in_layout, int out_layout)
{
    int64_t os[4] = {0};
    int ond = out_shape(a, nd, shape, os);
    in_t x = make_in(dt, nd, shape, in_layout);
    out_t o = make_out(dt, ond, os, out_layout);
    if (!x.v || !o.v) {
        free_in(&x);
        free_out(&o);
        return;
    }
    char what[160];
    static const char *pad_names[] = {"constant", "reflect", "edge", "circular"};
    int u = snprintf(what, sizeof what, "%s%s%s/%s/[", op_names[a->op], a->op == OP_PAD ? "-" : "",
                     a->op == OP_PAD ? pad_names[a->mode] : "", wgml_dtype_name(dt));
    for (int d = 0; d < nd; d++)
        u += snprintf(what + u, sizeof what - (size_t)u, "%s%lld", d ? "," : "", (long long)shape[d]);
    snprintf(what + u, sizeof what - (size_t)u, "]/in%d/out%d", in_layout, out_layout);
    wgml_status st = run_op(a, x.v, o.v);
    CHECK(st == WGML_OK, "%s: %s: %s", what, wgml_status_name(st), wgml_last_error());
    int64_t n = wgml_tensor_nelem(o.v);
    double *want = malloc(sizeof(double) * (size_t)(n + 1));
    ref_op(a, x.val, nd, shape, want);
    double *got = t_values(o.v);
    CHECK(cmp_exact(what, dt, got, want, n) == 0, "%s", what);
    int spoiled = poison_intact(&o);
    CHECK(spoiled == 0, "%s: %d bytes written outside the out view", what, spoiled);
    n_checked++;
    free(got);
    free(want);
    free_in(&x);
    free_out(&o);
}

/* Shapes every op runs on: odd 1-D, odd 3-D, one element, a zero-size
 * dim, 4-D. */
static const int64_t sh_odd1[1] = {1031}, sh_odd3[3] = {3, 5, 17}, sh_one[1] = {1}, sh_zero[2] = {0, 5},
                     sh_4d[4] = {2, 3, 4, 5}, sh_one2[2] = {1, 1};
static const struct { int nd; const int64_t *s; } shapes[] = {
    {1, sh_odd1}, {3, sh_odd3}, {1, sh_one}, {2, sh_zero}, {4, sh_4d}, {2, sh_one2},
};
#define NSHAPES (sizeof shapes / sizeof *shapes)

/* Each dtype x shape with the input and output layouts cycling through
 * contiguous, transposed and strided. */
static void grid(op_arg *a, void (*setup)(op_arg *, int, const int64_t *, int), int need_nd)
{
    for (size_t d = 0; d < NPLAIN; d++)
        for (size_t s = 0; s < NSHAPES; s++) {
            int nd = shapes[s].nd;
            if (nd < need_nd)
                continue;
            for (int v = 0; v < 2; v++) {
                if (setup)
                    setup(a, nd, shapes[s].s, v);
                int lin = (int)((d + s + (size_t)v) % 3), lout = (int)((d + 2 * s + (size_t)v + 1) % 3);
                check_op(a, plain[d], nd, shapes[s].s, lin, lout);
            }
        }
}

static void setup_permute(op_arg *a, int nd, const int64_t *s, int v)
{
    static const int p1[1] = {0}, p2[2] = {1, 0}, p3[2][3] = {{1, 2, 0}, {2, 0, 1}},
                     p4[2][4] = {{2, 0, 3, 1}, {3, 2, 1, 0}};
    const int *p = nd == 1 ? p1 : nd == 2 ? p2 : nd == 3 ? p3[v] : p4[v];
    memcpy(a->perm, p, sizeof(int) * (size_t)nd);
}

static void t_permute(void)
{
    op_arg a = {.op = OP_PERMUTE};
    grid(&a, setup_permute, 0);
}

/* v 0: tile (2 or 3 copies on alternate dims, plus a new leading dim when
 * there is room); v 1: expand (x's dim 0 made 1 elsewhere is not possible
 * on a fixed x, so tile by 1 and add leading dims). */
static void setup_repeat(op_arg *a, int nd, const int64_t *s, int v)
{
    int lead = nd < 4 ? 1 : 0;
    a->ond = nd + lead;
    if (lead)
        a->oshape[0] = v ? 4 : 2;
    for (int d = 0; d < nd; d++)
        a->oshape[lead + d] = s[d] * (v ? 1 : (d % 2 ? 3 : 2));
}

static void t_repeat(void)
{
    op_arg a = {.op = OP_REPEAT};
    grid(&a, setup_repeat, 0);
    /* expand of size-1 dims (broadcast) mixed with a tiled dim */
    const int64_t xs[3] = {3, 1, 2};
    for (size_t d = 0; d < NPLAIN; d++) {
        op_arg b = {.op = OP_REPEAT, .ond = 4, .oshape = {2, 3, 7, 6}};
        check_op(&b, plain[d], 3, xs, (int)(d % 3), (int)((d + 1) % 3));
    }
}

/* Asymmetric amounts on several dims; reflect stays below each dim and no
 * mode but constant pads an empty dim. */
static void setup_pad(op_arg *a, int nd, const int64_t *s, int v)
{
    static const int64_t b0[4] = {1, 0, 2, 3}, e0[4] = {2, 3, 0, 1};
    for (int d = 0; d < nd; d++) {
        int64_t b = v ? e0[d] : b0[d], e = v ? b0[d] + 1 : e0[d];
        if (a->mode == WGML_PAD_REFLECT) {
            b = b < s[d] ? b : s[d] - 1;
            e = e < s[d] ? e : s[d] - 1;
        }
        if (a->mode != WGML_PAD_CONSTANT && s[d] == 0)
            b = e = 0;
        if (b < 0)
            b = 0;
        if (e < 0)
            e = 0;
        a->before[d] = b;
        a->after[d] = e;
    }
}

static void t_pad(void)
{
    for (int m = WGML_PAD_CONSTANT; m <= WGML_PAD_CIRCULAR; m++) {
        op_arg a = {.op = OP_PAD, .mode = (wgml_pad_mode)m, .value = -5.25};
        grid(&a, setup_pad, 0);
    }
    /* amounts larger than the dim: edge and circular (wrapping more than once) */
    const int64_t xs[2] = {3, 2};
    for (int m = WGML_PAD_EDGE; m <= WGML_PAD_CIRCULAR; m++) {
        op_arg a = {.op = OP_PAD, .mode = (wgml_pad_mode)m, .before = {7, 0}, .after = {2, 5}};
        check_op(&a, WGML_I32, 2, xs, 1, 2);
    }
    /* constant pad of an empty x: all padding; value converted like fill */
    const int64_t zs[2] = {0, 3};
    for (size_t d = 0; d < NPLAIN; d++) {
        op_arg a = {.op = OP_PAD, .mode = WGML_PAD_CONSTANT, .before = {2, 1}, .after = {1, 0}, .value = 300.75};
        check_op(&a, plain[d], 2, zs, 0, 1);
    }
}

static void setup_flip(op_arg *a, int nd, const int64_t *s, int v)
{
    unsigned all = (1u << nd) - 1;
    a->mask = v ? all : (0x5u & all) | (nd > 1 ? 0 : 1u);
}

static void t_flip(void)
{
    op_arg a = {.op = OP_FLIP};
    grid(&a, setup_flip, 0);
}

/* Negative shifts and shifts past the dim (several times over). */
static void setup_roll(op_arg *a, int nd, const int64_t *s, int v)
{
    static const int64_t s0[4] = {-3, 7, 1000003, -2}, s1[4] = {2062, -1, -35, 11};
    memcpy(a->shifts, v ? s1 : s0, sizeof(int64_t) * 4);
}

static void t_roll(void)
{
    op_arg a = {.op = OP_ROLL};
    grid(&a, setup_roll, 0);
}

static void t_tri(void)
{
    static const int64_t ks[] = {-1, 0, 2, -100, 100};
    const int64_t wide[3] = {2, 5, 9}, tall[2] = {9, 4};
    for (int up = 0; up < 2; up++)
        for (size_t k = 0; k < sizeof ks / sizeof *ks; k++) {
            op_arg a = {.op = OP_TRI, .upper = up, .k = ks[k]};
            if (k < 3) {
                grid(&a, NULL, 2);
            }
            check_op(&a, WGML_F32, 3, wide, 1, 2);
            check_op(&a, WGML_I8, 2, tall, 2, 1);
        }
}

static void t_diag(void)
{
    /* vector -> matrix, batched */
    const int64_t v1[1] = {7}, v2[2] = {3, 5}, v3[3] = {2, 3, 4}, v0[2] = {0, 3}, vone[1] = {1};
    const struct { int nd; const int64_t *s; } vs[] = {{1, v1}, {2, v2}, {3, v3}, {2, v0}, {1, vone}};
    /* matrix -> diagonal, batched */
    const int64_t m2[2] = {7, 7}, m3[3] = {3, 5, 5}, m4[4] = {2, 1, 4, 4}, m0[3] = {3, 0, 0}, mone[2] = {1, 1};
    const struct { int nd; const int64_t *s; } ms[] = {{2, m2}, {3, m3}, {4, m4}, {3, m0}, {2, mone}};
    for (size_t d = 0; d < NPLAIN; d++)
        for (size_t i = 0; i < 5; i++) {
            op_arg a = {.op = OP_DIAG, .to_matrix = 1};
            check_op(&a, plain[d], vs[i].nd, vs[i].s, (int)((d + i) % 3), (int)((d + 2 * i + 1) % 3));
            a.to_matrix = 0;
            check_op(&a, plain[d], ms[i].nd, ms[i].s, (int)((d + i + 1) % 3), (int)((d + i) % 3));
        }
}

/* ------------------------------------------------------------ concat */

static void check_concat(wgml_dtype dt, int nd, const int64_t (*shapes3)[4], int axis, int lin, int lout)
{
    in_t x[3];
    const double *vals[3];
    const int64_t *sh[3];
    const wgml_tensor *xs[3];
    int64_t os[4];
    memcpy(os, shapes3[0], sizeof os);
    os[axis] = 0;
    for (int i = 0; i < 3; i++) {
        x[i] = make_in(dt, nd, shapes3[i], i == 1 ? lin : 0);
        vals[i] = x[i].val;
        sh[i] = shapes3[i];
        xs[i] = x[i].v;
        os[axis] += shapes3[i][axis];
    }
    out_t o = make_out(dt, nd, os, lout);
    CHECK_OK(wgml_concat(xs, 3, axis - nd, o.v)); /* negative axis */
    int64_t n = wgml_tensor_nelem(o.v);
    double *want = malloc(sizeof(double) * (size_t)(n + 1));
    wg_concat_ref(vals, sh, 3, nd, axis, want);
    double *got = t_values(o.v);
    char what[64];
    snprintf(what, sizeof what, "concat/%s/axis%d/in%d/out%d", wgml_dtype_name(dt), axis, lin, lout);
    CHECK(cmp_exact(what, dt, got, want, n) == 0, "%s", what);
    CHECK(poison_intact(&o) == 0, "%s: wrote outside the out view", what);
    free(got);
    free(want);
    free_out(&o);
    for (int i = 0; i < 3; i++)
        free_in(&x[i]);
}

static void t_concat(void)
{
    const int64_t ax0[3][4] = {{2, 5, 3}, {0, 5, 3}, {4, 5, 3}};
    const int64_t axl[3][4] = {{3, 4, 2}, {3, 4, 0}, {3, 4, 5}};
    const int64_t mid[3][4] = {{2, 1, 3, 3}, {2, 6, 3, 3}, {2, 2, 3, 3}};
    for (size_t d = 0; d < NPLAIN; d++) {
        check_concat(plain[d], 3, ax0, 0, (int)(d % 3), (int)((d + 1) % 3));
        check_concat(plain[d], 3, axl, 2, (int)((d + 1) % 3), (int)(d % 3));
        check_concat(plain[d], 4, mid, 1, 1, 2);
    }
}

/* ------------------------------------------------------------ big cases */

/* Reflect pad of a 2^24-element f32 into 4099 x 4101: 65,664 workgroups of
 * 256 threads, past the 65,535 limit of one grid dimension. */
static void t_large_pad(void)
{
    const int64_t s[2] = {4096, 4096};
    const int64_t b[2] = {1, 3}, e[2] = {2, 2};
    const int64_t os[2] = {4099, 4101};
    t_tensor x = t_random(WGML_F32, 2, s, -1, 1);
    wgml_tensor *o = t_poisoned(WGML_F32, 2, os);
    CHECK_OK(wgml_pad(x.t, b, e, WGML_PAD_REFLECT, 0, o));
    int64_t n = os[0] * os[1];
    double *want = malloc(sizeof(double) * (size_t)n);
    wg_pad_ref(x.val, 2, s, b, e, WGML_PAD_REFLECT, 0, want);
    float *got = malloc(sizeof(float) * (size_t)n);
    CHECK_OK(wgml_tensor_download(o, got, sizeof(float) * (uint64_t)n));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += got[i] != (float)want[i];
    CHECK(bad == 0, "large pad: %lld wrong of %lld", (long long)bad, (long long)n);
    free(want);
    free(got);
    wgml_tensor_free(o);
    t_free(&x);
}

/* Roll of a 1-D f32 of 2^25 + 7 elements: x and out each just exceed
 * lavapipe's 128 MiB storage binding, so the launcher splits the one dim
 * and binds, per block, only the (wrapping) part of x it reads.  It runs
 * on a context with WebGPU's shader bounds checks, so a read window that
 * missed an element would read a clamped index, not the right memory. */
static void t_large_roll(void)
{
    const int64_t m = ((int64_t)1 << 25) + 7, sh[1] = {-5000001};
    size_t n = (size_t)m;
    wgml_ctx_options opt = {.shader_checks = 1};
    wgml_ctx *ctx = NULL;
    CHECK_OK(wgml_ctx_create(&opt, &ctx));
    if (!ctx)
        return;
    float *h = malloc(sizeof(float) * n), *got = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++)
        h[i] = (float)(int32_t)(t_rand() >> 40) + 0.5f;
    wgml_tensor *x = NULL, *o = NULL;
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 1, &m, &x));
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 1, &m, &o));
    CHECK_OK(wgml_tensor_upload(x, h, sizeof(float) * n));
    CHECK_OK(wgml_roll(x, sh, o));
    CHECK_OK(wgml_tensor_download(o, got, sizeof(float) * n));
    int64_t bad = 0;
    for (int64_t j = 0, sj = ((-sh[0]) % m + m) % m; j < m; j++, sj = sj + 1 == m ? 0 : sj + 1)
        bad += got[j] != h[sj];
    CHECK(bad == 0, "large roll: %lld wrong", (long long)bad);
    free(h);
    free(got);
    wgml_tensor_free(x);
    wgml_tensor_free(o);
    wgml_ctx_destroy(ctx);
}

/* x and out are two rows of one tensor: one buffer bound read_write twice. */
static void t_same_buffer(void)
{
    const int64_t s[2] = {2, 37};
    t_tensor t = t_random(WGML_I8, 2, s, -100, 100);
    wgml_tensor *r0 = NULL, *r1 = NULL;
    CHECK_OK(wgml_view_slice(t.t, 0, 0, 1, 1, &r0));
    CHECK_OK(wgml_view_slice(t.t, 0, 1, 2, 1, &r1));
    CHECK_OK(wgml_flip(r0, 3, r1));
    double *got = t_values(t.t);
    int bad = 0;
    for (int j = 0; j < 37; j++)
        bad += got[j] != t.val[j] || got[37 + j] != t.val[36 - j];
    CHECK(bad == 0, "flip into the same buffer: %d wrong", bad);
    free(got);
    wgml_tensor_free(r0);
    wgml_tensor_free(r1);
    t_free(&t);
}

/* ------------------------------------------------------------ errors */

static void t_errors(void)
{
    const int64_t s34[2] = {3, 4}, s43[2] = {4, 3}, s33[2] = {3, 3}, s3[1] = {3}, s24[2] = {2, 4}, s68[2] = {6, 8},
                  s32[1] = {32}, s74[2] = {7, 4}, s54[2] = {5, 4};
    wgml_tensor *a = t_poisoned(WGML_F32, 2, s34), *b = t_poisoned(WGML_F32, 2, s24), *ai = t_poisoned(WGML_I32, 2, s34),
                *o43 = t_poisoned(WGML_F32, 2, s43), *o33 = t_poisoned(WGML_F32, 2, s33),
                *o3 = t_poisoned(WGML_F32, 1, s3), *o68 = t_poisoned(WGML_F32, 2, s68),
                *o74 = t_poisoned(WGML_F32, 2, s74), *o54 = t_poisoned(WGML_F32, 2, s54), *q = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_Q4_0, 1, s32, &q));
    /* concat */
    const wgml_tensor *xs[2] = {a, b};
    CHECK(wgml_concat(xs, 2, 0, o54) == WGML_OK, "concat [3,4]+[2,4] on axis 0: %s", wgml_last_error());
    CHECK(wgml_concat(xs, 2, 1, o74) == WGML_ERR_SHAPE, "concat shape mismatch off the axis accepted");
    CHECK(strstr(wgml_last_error(), "xs[1]") != NULL, "message: %s", wgml_last_error());
    CHECK(wgml_concat(xs, 2, 2, o74) == WGML_ERR_INDEX, "concat axis 2 of 2-D accepted");
    CHECK(wgml_concat(xs, 2, -3, o74) == WGML_ERR_INDEX, "concat axis -3 of 2-D accepted");
    CHECK(wgml_concat(xs, 0, 0, o74) == WGML_ERR_INVALID_ARG, "concat of nothing accepted");
    const wgml_tensor *xm[2] = {a, ai};
    CHECK(wgml_concat(xm, 2, 0, o74) == WGML_ERR_DTYPE, "concat f32 + i32 accepted");
    const wgml_tensor *xn[2] = {a, NULL};
    CHECK(wgml_concat(xn, 2, 0, o74) == WGML_ERR_INVALID_ARG, "concat with NULL input accepted");
    /* pad */
    const int64_t r3[2] = {3, 0}, r0[2] = {0, 0}, neg[2] = {-1, 0}, r1[2] = {1, 1};
    const int64_t o6[2] = {6, 4};
    wgml_tensor *o64 = t_poisoned(WGML_F32, 2, o6);
    CHECK(wgml_pad(a, r3, r0, WGML_PAD_REFLECT, 0, o64) == WGML_ERR_SHAPE, "reflect pad 3 of dim 3 accepted");
    CHECK(strstr(wgml_last_error(), "reflect") != NULL, "message: %s", wgml_last_error());
    CHECK(wgml_pad(a, r3, r0, WGML_PAD_CONSTANT, 0, o33) == WGML_ERR_SHAPE, "pad into the wrong shape accepted");
    CHECK(wgml_pad(a, neg, r0, WGML_PAD_CONSTANT, 0, o64) == WGML_ERR_INVALID_ARG, "negative pad accepted");
    CHECK(wgml_pad(a, r3, r0, (wgml_pad_mode)9, 0, o64) == WGML_ERR_INVALID_ARG, "unknown pad mode accepted");
    CHECK(wgml_pad(a, NULL, r0, WGML_PAD_CONSTANT, 0, o64) == WGML_ERR_INVALID_ARG, "NULL before accepted");
    const int64_t e0[2] = {0, 4}, e2[2] = {2, 4};
    wgml_tensor *empty = t_poisoned(WGML_F32, 2, e0), *oe = t_poisoned(WGML_F32, 2, e2);
    CHECK(wgml_pad(empty, r1, r0, WGML_PAD_EDGE, 0, oe) == WGML_ERR_SHAPE, "edge pad of an empty dim accepted");
    CHECK(wgml_pad(empty, r1, r0, WGML_PAD_CIRCULAR, 0, oe) == WGML_ERR_SHAPE, "circular pad of an empty dim accepted");
    /* nothing was written by any failed call */
    int touched = 0;
    uint32_t raw[24];
    CHECK_OK(wgml_tensor_download(o64, raw, sizeof raw));
    for (int i = 0; i < 24; i++)
        touched += raw[i] != 0xa5a5a5a5u;
    CHECK(touched == 0, "failed calls wrote %d elements", touched);
    /* repeat */
    CHECK(wgml_repeat(a, o74) == WGML_ERR_SHAPE, "repeat [3,4] -> [7,4] accepted");
    CHECK(strstr(wgml_last_error(), "multiple") != NULL, "message: %s", wgml_last_error());
    CHECK(wgml_repeat(a, o3) == WGML_ERR_SHAPE, "repeat to fewer dims accepted");
    CHECK(wgml_repeat(a, o68) == WGML_OK, "repeat [3,4] -> [6,8]: %s", wgml_last_error());
    /* diag */
    CHECK(wgml_diag(a, o3) == WGML_ERR_SHAPE, "diag of a 3x4 matrix accepted");
    CHECK(wgml_diag(a, o43) == WGML_ERR_SHAPE, "diag into same ndim accepted");
    CHECK(wgml_diag(o33, o68) == WGML_ERR_SHAPE, "diag [3,3] -> [6,8] accepted");
    /* flip, permute, tri, roll */
    CHECK(wgml_flip(a, 4u, o43) == WGML_ERR_INDEX, "flip of axis 2 on 2-D accepted");
    const int badp[2] = {0, 0}, badq[2] = {0, 2}, okp[2] = {1, 0};
    CHECK(wgml_permute(a, badp, o43) == WGML_ERR_INDEX, "perm {0,0} accepted");
    CHECK(wgml_permute(a, badq, o43) == WGML_ERR_INDEX, "perm {0,2} accepted");
    CHECK(wgml_permute(a, okp, a) == WGML_ERR_SHAPE, "permute into the unpermuted shape accepted");
    CHECK(wgml_permute(a, NULL, o43) == WGML_ERR_INVALID_ARG, "NULL perm accepted");
    CHECK(wgml_tri(o3, 0, 0, o3) == WGML_ERR_SHAPE, "tri of 1-D accepted");
    CHECK(wgml_roll(a, NULL, o43) == WGML_ERR_INVALID_ARG, "NULL shifts accepted");
    /* dtypes, NULLs */
    CHECK(wgml_flip(a, 1, ai) == WGML_ERR_DTYPE, "flip f32 -> i32 accepted");
    CHECK(wgml_tri(a, 0, 0, ai) == WGML_ERR_DTYPE, "tri f32 -> i32 accepted");
    CHECK(wgml_flip(q, 1, q) == WGML_ERR_DTYPE, "flip of q4_0 accepted");
    CHECK(wgml_flip(NULL, 1, a) == WGML_ERR_INVALID_ARG, "NULL x accepted");
    CHECK(wgml_roll(a, r0, NULL) == WGML_ERR_INVALID_ARG, "NULL out accepted");
    wgml_tensor *list[] = {a, b, ai, o43, o33, o3, o68, o74, o54, q, o64, empty, oe};
    for (size_t i = 0; i < sizeof list / sizeof *list; i++)
        wgml_tensor_free(list[i]);
}

static void t_registry(void)
{
    static const char *want[] = {"PERMUTE", "REPEAT", "CONCAT", "PAD", "FLIP", "ROLL", "TRI", "DIAG"};
    for (size_t w = 0; w < sizeof want / sizeof *want; w++) {
        int found = 0;
        for (size_t i = 0; i < wgml_op_count(); i++) {
            const wgml_op_info *r = wgml_op_get(i);
            if (strcmp(r->name, want[w]) == 0 && strcmp(r->family, "movement") == 0) {
                found++;
                CHECK(r->dtypes == WG_DT_PLAIN, "%s dtypes 0x%x", want[w], r->dtypes);
            }
        }
        CHECK(found == 1, "registry row %s found %d times", want[w], found);
    }
}

/* Reshapes of strided views without a copy (numpy's rule): a column
 * slice [4, 6] of [4, 10] splits its last dim ([4, 2, 3], strides [10, 3,
 * 1]: the fused q|k|v projection's heads); a transposed [10, 4] view splits
 * its second dim; runs that are not contiguous within themselves refuse. */
static void t_reshape_strided(void)
{
    t_tensor x = t_random(WGML_F32, 2, (int64_t[]){4, 10}, -1, 1);
    wgml_tensor *sl = NULL, *r = NULL, *tr = NULL;
    CHECK_OK(wgml_view_slice(x.t, 1, 2, 8, 1, &sl));
    CHECK_OK(wgml_view_reshape(sl, 3, (int64_t[]){4, 2, 3}, &r));
    if (r) {
        CHECK(r->strides[0] == 10 && r->strides[1] == 3 && r->strides[2] == 1, "split strides %lld %lld %lld",
              (long long)r->strides[0], (long long)r->strides[1], (long long)r->strides[2]);
        double *got = t_values(r);
        int bad = 0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 6; j++)
                bad += got[i * 6 + j] != x.val[i * 10 + 2 + j];
        CHECK(bad == 0, "split slice: %d values differ", bad);
        free(got);
        wgml_tensor_free(r);
        r = NULL;
    }
    CHECK(wgml_view_reshape(sl, 1, (int64_t[]){24}, &r) == WGML_ERR_SHAPE && !r, "merging a column slice's rows");
    CHECK_OK(wgml_view_transpose(x.t, 0, 1, &tr));
    CHECK_OK(wgml_view_reshape(tr, 3, (int64_t[]){10, 2, 2}, &r));
    if (r) {
        double *got = t_values(r);
        int bad = 0;
        for (int i = 0; i < 10; i++)
            for (int j = 0; j < 4; j++)
                bad += got[i * 4 + j] != x.val[j * 10 + i];
        CHECK(bad == 0, "split transpose: %d values differ", bad);
        free(got);
        wgml_tensor_free(r);
        r = NULL;
    }
    CHECK(wgml_view_reshape(tr, 1, (int64_t[]){40}, &r) == WGML_ERR_SHAPE && !r, "flattening a transpose");
    CHECK_OK(wgml_view_reshape(sl, 4, (int64_t[]){1, 4, 6, 1}, &r)); /* dims of 1 anywhere */
    wgml_tensor_free(r);
    wgml_tensor_free(tr);
    wgml_tensor_free(sl);
    t_free(&x);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"permute_dtypes_shapes_layouts", t_permute},
        {"repeat_tile_and_expand", t_repeat},
        {"concat_three_inputs_axis0_last_mid", t_concat},
        {"pad_every_mode_asymmetric", t_pad},
        {"flip_axes", t_flip},
        {"roll_negative_and_oversize", t_roll},
        {"tri_lower_upper_k", t_tri},
        {"diag_both_directions_batched", t_diag},
        {"same_buffer_in_and_out", t_same_buffer},
        {"large_pad_over_65535_workgroups", t_large_pad},
        {"large_roll_over_one_binding", t_large_roll},
        {"reshape_strided_views", t_reshape_strided},
        {"invalid_calls", t_errors},
        {"registry_rows", t_registry},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    printf("(%d op results compared)\n", n_checked);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
