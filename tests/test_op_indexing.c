/* Indexing family against its CPU references: get_rows (plain sources to
 * f32 and to their own dtype, batched, views), set_rows (float conversions,
 * duplicates: the last wins), gather, scatter_add (duplicates summed,
 * heavy contention), index_select, one_hot, embedding; zero sizes; more
 * than 65,535 rows gathered (and workgroups); tables larger than one
 * storage binding and invalid calls (bad index values, which the next
 * sync reports: test_op_indexing_errors.c).
 *
 * Tolerances: every op but scatter_add moves values without arithmetic,
 * so results must equal the reference rounded to the output dtype
 * (t_compare with rtol = atol = 0; f16/bf16 outputs of f32 values round to
 * nearest even on both sides, so t_compare's extra unit of the 16-bit
 * format is slack these ops never need).  scatter_add in f32
 * adds in an unspecified order: each element's error is bounded by
 * k * 2^-24 * (|dst| + sum |added terms|) for k additions (k roundings of
 * at most half an ulp of a partial sum bounded by that total); i32 is
 * exact (wrapping add). */
#include "op_harness.h"
#include "ops/indexing.h"

static const wgml_dtype plain[] = {WGML_F32, WGML_F16, WGML_BF16, WGML_I32, WGML_U32, WGML_I8, WGML_U8, WGML_BOOL};
#define NPLAIN (sizeof plain / sizeof *plain)

static double lo_of(wgml_dtype dt) { return dt == WGML_U8 || dt == WGML_U32 || dt == WGML_BOOL ? 0 : -100; }

/* A call with a bad index returns OK (indices are checked on the GPU);
 * the next sync reports WGML_ERR_INDEX naming op. */
static bool reported(wgml_status call, const char *op)
{
    wgml_status st = wgml_ctx_sync(t_ctx);
    return call == WGML_OK && st == WGML_ERR_INDEX && strstr(wgml_last_error(), op) != NULL;
}

static int32_t *rand_idx(int64_t n, int64_t lo, int64_t hi) /* values in [lo, hi] */
{
    int32_t *v = malloc(sizeof(int32_t) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        v[i] = (int32_t)t_range((uint64_t)lo, (uint64_t)hi);
    return v;
}

static int64_t nelem(int ndim, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= s[d];
    return n;
}

/* Checks t equals want (rounded to t's dtype), exactly. */
static void expect(const char *what, const wgml_tensor *t, const double *want)
{
    double *got = t_values(t);
    CHECK(t_compare(what, t->dtype, got, want, wgml_tensor_nelem(t), 0, 0) == 0, "%s", what);
    free(got);
}

/* ------------------------------------------------------------ get_rows */

static void check_get_rows(wgml_dtype sdt, wgml_dtype odt, int ndim, const int64_t *sshape, int indim,
                           const int64_t *ishape)
{
    t_tensor src = t_random(sdt, ndim, sshape, lo_of(sdt), 100);
    int kb = indim - 1;
    int64_t ni = nelem(indim, ishape), oshape[4];
    int32_t *iv = rand_idx(ni, 0, sshape[kb] - 1); /* duplicates likely */
    wgml_tensor *idx = t_idx(indim, ishape, iv);
    memcpy(oshape, sshape, sizeof(int64_t) * (size_t)ndim);
    oshape[kb] = ishape[kb];
    wgml_tensor *out = t_poisoned(odt, ndim, oshape);
    wgml_status st = wgml_get_rows(src.t, idx, out);
    char what[96];
    snprintf(what, sizeof what, "get_rows %s->%s %dD idx %dD", wgml_dtype_name(sdt), wgml_dtype_name(odt), ndim,
             indim);
    CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
    double *want = malloc(sizeof(double) * (size_t)(nelem(ndim, oshape) + 1));
    wg_get_rows_ref(ndim, sshape, src.val, indim, ishape, iv, want);
    expect(what, out, want);
    free(want);
    free(iv);
    wgml_tensor_free(out);
    wgml_tensor_free(idx);
    t_free(&src);
}

static void t_get_rows_dtypes(void)
{
    const int64_t s2[2] = {37, 19}, i1[1] = {23};
    const int64_t s3[3] = {3, 11, 5}, i2[2] = {3, 7};
    const int64_t s4[4] = {2, 3, 6, 4}, i3[3] = {2, 3, 9};
    const int64_t s1[1] = {50}, i1b[1] = {1};
    for (size_t d = 0; d < NPLAIN; d++) {
        wgml_dtype outs[2] = {plain[d], WGML_F32};
        for (int o = 0; o < (plain[d] == WGML_F32 ? 1 : 2); o++) {
            check_get_rows(plain[d], outs[o], 2, s2, 1, i1);
            check_get_rows(plain[d], outs[o], 3, s3, 2, i2); /* batched */
            check_get_rows(plain[d], outs[o], 3, s3, 1, i1); /* 1-D idx, 3-D rows */
            check_get_rows(plain[d], outs[o], 4, s4, 3, i3);
            check_get_rows(plain[d], outs[o], 1, s1, 1, i1b); /* one element */
        }
    }
}

/* Transposed and sliced sources, a strided idx, a strided out. */
static void t_get_rows_views(void)
{
    const wgml_dtype dts[3] = {WGML_F32, WGML_F16, WGML_U8};
    for (int k = 0; k < 3; k++) {
        wgml_dtype dt = dts[k];
        const int64_t base[2] = {9, 40}; /* transposed: [40, 9] */
        t_tensor b = t_random(dt, 2, base, lo_of(dt), 100);
        wgml_tensor *tv = NULL, *sv = NULL;
        CHECK_OK(wgml_view_transpose(b.t, 0, 1, &tv));
        CHECK_OK(wgml_view_slice(b.t, 1, 1, 40, 3, &sv)); /* [9, 13], column stride 3 */
        int32_t iv[14];
        for (int i = 0; i < 14; i++)
            iv[i] = (int32_t)t_range(0, 8);
        iv[0] = 8;
        const int64_t ish[1] = {14};
        wgml_tensor *ib = t_idx(1, ish, iv), *ix = NULL;
        CHECK_OK(wgml_view_slice(ib, 0, 1, 14, 2, &ix)); /* 7 strided indices iv[1], iv[3], ... */
        int32_t sel[7];
        for (int i = 0; i < 7; i++)
            sel[i] = iv[2 * i + 1];
        /* rows of the transposed view: indices must be < 40; reuse sel */
        for (int v = 0; v < 2; v++) {
            wgml_tensor *src = v ? sv : tv;
            double *sval = t_values(src);
            int64_t ss[2] = {src->shape[0], src->shape[1]}, big[2] = {7, 2 * ss[1]};
            wgml_tensor *ob = t_poisoned(dt, 2, big), *ov = NULL;
            CHECK_OK(wgml_view_slice(ob, 1, 0, 2 * ss[1], 2, &ov)); /* out: every other column */
            CHECK_OK(wgml_get_rows(src, ix, ov));
            const int64_t is1[1] = {7};
            double *want = malloc(sizeof(double) * (size_t)(7 * ss[1]));
            wg_get_rows_ref(2, ss, sval, 1, is1, sel, want);
            char what[64];
            snprintf(what, sizeof what, "get_rows %s view %d", wgml_dtype_name(dt), v);
            expect(what, ov, want);
            /* the other columns of the out buffer stay poisoned */
            wgml_tensor *gap = NULL;
            CHECK_OK(wgml_view_slice(ob, 1, 1, 2 * ss[1], 2, &gap));
            uint8_t *raw = malloc(wgml_tensor_nbytes(gap));
            CHECK_OK(wgml_tensor_download(gap, raw, wgml_tensor_nbytes(gap)));
            int bad = 0;
            for (uint64_t i = 0; i < wgml_tensor_nbytes(gap); i++)
                bad += raw[i] != 0xa5;
            CHECK(bad == 0, "%s: %d bytes written outside out", what, bad);
            free(raw);
            wgml_tensor_free(gap);
            free(want);
            free(sval);
            wgml_tensor_free(ov);
            wgml_tensor_free(ob);
        }
        wgml_tensor_free(ix);
        wgml_tensor_free(ib);
        wgml_tensor_free(sv);
        wgml_tensor_free(tv);
        t_free(&b);
    }
}

/* 70,001 rows gathered into a u8 out of 67.2M elements: more than 65,535
 * rows and 65,535 workgroups (folded grid) in one binding. */
static void t_get_rows_many(void)
{
    const int64_t ss[2] = {300, 960}, is[1] = {70001}, os[2] = {70001, 960};
    t_tensor src = t_random(WGML_U8, 2, ss, 0, 255);
    int32_t *iv = rand_idx(is[0], 0, ss[0] - 1);
    iv[0] = 299;
    iv[is[0] - 1] = 0;
    wgml_tensor *idx = t_idx(1, is, iv);
    wgml_tensor *out = t_poisoned(WGML_U8, 2, os);
    CHECK_OK(wgml_get_rows(src.t, idx, out));
    size_t bytes = wgml_tensor_nbytes(out);
    uint8_t *got = malloc(bytes);
    CHECK_OK(wgml_tensor_download(out, got, bytes));
    int64_t bad = 0;
    for (int64_t r = 0; r < os[0]; r++)
        bad += memcmp(got + r * 960, (uint8_t *)src.host + (int64_t)iv[r] * 960, 960) != 0;
    CHECK(bad == 0, "%lld of %lld rows wrong", (long long)bad, (long long)os[0]);
    free(got);
    free(iv);
    wgml_tensor_free(out);
    wgml_tensor_free(idx);
    t_free(&src);
}

/* A 145 MB f32 table exceeds lavapipe's 128 MiB storage binding: get_rows
 * and set_rows bind it in passes over index ranges. */
static void t_big_table(void)
{
    const int64_t ts[2] = {33000, 1100}, is[1] = {40};
    wgml_tensor *table = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, ts, &table));
    if (!table)
        return;
    size_t bytes = wgml_tensor_nbytes(table);
    float *h = malloc(bytes);
    for (int64_t i = 0; i < ts[0] * ts[1]; i++)
        h[i] = (float)(i % 1000003) * 0.5f;
    CHECK_OK(wgml_tensor_upload(table, h, bytes));
    int32_t *iv = rand_idx(is[0], 0, ts[0] - 1);
    iv[0] = 0;
    iv[1] = (int32_t)ts[0] - 1;
    iv[2] = 16000;
    wgml_tensor *idx = t_idx(1, is, iv);
    const int64_t os[2] = {is[0], ts[1]};
    wgml_tensor *out = t_poisoned(WGML_F32, 2, os);
    CHECK_OK(wgml_get_rows(table, idx, out));
    float *got = malloc(sizeof(float) * (size_t)(os[0] * os[1]));
    CHECK_OK(wgml_tensor_download(out, got, wgml_tensor_nbytes(out)));
    int bad = 0;
    for (int64_t r = 0; r < os[0]; r++)
        bad += memcmp(got + r * ts[1], h + (int64_t)iv[r] * ts[1], sizeof(float) * (size_t)ts[1]) != 0;
    CHECK(bad == 0, "big table get_rows: %d rows wrong", bad);
    /* set_rows: write rows 3, 32999, 17000 (negated) and read them back */
    int32_t sv[3] = {3, 32999, 17000};
    const int64_t s3[1] = {3}, r3[2] = {3, 1100};
    wgml_tensor *sidx = t_idx(1, s3, sv), *rows = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, r3, &rows));
    float *rv = malloc(sizeof(float) * 3 * 1100);
    for (int i = 0; i < 3 * 1100; i++)
        rv[i] = -(float)i;
    CHECK_OK(wgml_tensor_upload(rows, rv, sizeof(float) * 3 * 1100));
    CHECK_OK(wgml_set_rows(table, sidx, rows));
    float *back = malloc(sizeof(float) * 1100);
    for (int r = 0; r < 3; r++) {
        wgml_tensor *v = NULL;
        CHECK_OK(wgml_view_slice(table, 0, sv[r], sv[r] + 1, 1, &v));
        CHECK_OK(wgml_tensor_download(v, back, sizeof(float) * 1100));
        CHECK(memcmp(back, rv + r * 1100, sizeof(float) * 1100) == 0, "big table set_rows row %d", sv[r]);
        wgml_tensor_free(v);
    }
    wgml_tensor *v = NULL; /* a neighbour is untouched */
    CHECK_OK(wgml_view_slice(table, 0, 4, 5, 1, &v));
    CHECK_OK(wgml_tensor_download(v, back, sizeof(float) * 1100));
    CHECK(memcmp(back, h + 4 * 1100, sizeof(float) * 1100) == 0, "big table set_rows touched row 4");
    wgml_tensor_free(v);
    free(back);
    free(rv);
    wgml_tensor_free(rows);
    wgml_tensor_free(sidx);
    free(got);
    free(iv);
    free(h);
    wgml_tensor_free(out);
    wgml_tensor_free(idx);
    wgml_tensor_free(table);
}

/* ------------------------------------------------------------ set_rows */

static void check_set_rows(wgml_dtype sdt, wgml_dtype ddt, int ndim, const int64_t *dshape, int indim,
                           const int64_t *ishape, bool dups, bool views)
{
    int kb = indim - 1;
    int64_t sshape[4];
    memcpy(sshape, dshape, sizeof(int64_t) * (size_t)ndim);
    sshape[kb] = ishape[kb];
    /* views: dst is a transposed view of a contiguous tensor (last two dims) */
    int64_t dphys[4];
    memcpy(dphys, dshape, sizeof(int64_t) * (size_t)ndim);
    if (views) {
        dphys[ndim - 1] = dshape[ndim - 2];
        dphys[ndim - 2] = dshape[ndim - 1];
    }
    t_tensor dst = t_random(ddt, ndim, dphys, lo_of(ddt), 100), src = t_random(sdt, ndim, sshape, lo_of(sdt), 100);
    wgml_tensor *dv = NULL;
    if (views)
        CHECK_OK(wgml_view_transpose(dst.t, -1, -2, &dv));
    else
        CHECK_OK(wgml_view_reshape(dst.t, ndim, dshape, &dv));
    double *dval = t_values(dv);
    int64_t ni = nelem(indim, ishape), n = ishape[kb];
    int32_t *iv = malloc(sizeof(int32_t) * (size_t)(ni + 1));
    for (int64_t b = 0; b < ni / n; b++) { /* a permutation prefix, or random with repeats */
        for (int64_t i = 0; i < n; i++)
            iv[b * n + i] = dups ? (int32_t)t_range(0, 2) : (int32_t)i;
        for (int64_t i = n - 1; i > 0 && !dups; i--) {
            int64_t k = (int64_t)t_range(0, (uint64_t)i);
            int32_t tmp = iv[b * n + i];
            iv[b * n + i] = iv[b * n + k];
            iv[b * n + k] = tmp;
        }
    }
    wgml_tensor *idx = t_idx(indim, ishape, iv);
    wgml_status st = wgml_set_rows(dv, idx, src.t);
    char what[96];
    snprintf(what, sizeof what, "set_rows %s->%s %dD%s%s", wgml_dtype_name(sdt), wgml_dtype_name(ddt), ndim,
             dups ? " dups" : "", views ? " view" : "");
    CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
    wg_set_rows_ref(ndim, dshape, dval, indim, ishape, iv, src.val);
    expect(what, dv, dval);
    free(iv);
    free(dval);
    wgml_tensor_free(idx);
    wgml_tensor_free(dv);
    t_free(&dst);
    t_free(&src);
}

static void t_set_rows(void)
{
    const int64_t d2[2] = {41, 13}, i1[1] = {29};
    const int64_t d3[3] = {3, 17, 6}, i2[2] = {3, 11};
    const wgml_dtype fl[3] = {WGML_F32, WGML_F16, WGML_BF16};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            check_set_rows(fl[a], fl[b], 2, d2, 1, i1, false, false);
            check_set_rows(fl[a], fl[b], 3, d3, 2, i2, false, b == 1);
        }
    const wgml_dtype same[5] = {WGML_I32, WGML_U32, WGML_I8, WGML_U8, WGML_BOOL};
    for (int a = 0; a < 5; a++) {
        check_set_rows(same[a], same[a], 2, d2, 1, i1, false, true);
        check_set_rows(same[a], same[a], 3, d3, 2, i2, true, false);
    }
    /* duplicates: the last occurrence wins (16-bit dst: sub-word stores) */
    for (int b = 0; b < 3; b++) {
        check_set_rows(WGML_F32, fl[b], 2, d2, 1, i1, true, false);
        check_set_rows(WGML_F32, fl[b], 3, d3, 2, i2, true, true);
    }
}

/* ------------------------------------------------------------ gather, index_select */

static void t_gather(void)
{
    const int64_t ss[3] = {5, 7, 9};
    const int64_t is[3][3] = {{4, 7, 9}, {5, 12, 3}, {2, 3, 20}};
    for (size_t d = 0; d < NPLAIN; d++)
        for (int axis = 0; axis < 3; axis++)
            for (int view = 0; view < 2; view++) {
                /* view 1: src is a permuted view of a [9, 5, 7] tensor */
                int64_t phys[3] = {9, 5, 7};
                t_tensor b = t_random(plain[d], 3, view ? phys : ss, lo_of(plain[d]), 100);
                wgml_tensor *src = NULL;
                int perm[3] = {1, 2, 0};
                if (view)
                    CHECK_OK(wgml_view_permute(b.t, perm, &src));
                else
                    CHECK_OK(wgml_view_reshape(b.t, 3, ss, &src));
                double *sval = t_values(src);
                int64_t ni = nelem(3, is[axis]);
                int32_t *iv = rand_idx(ni, 0, ss[axis] - 1);
                wgml_tensor *idx = t_idx(3, is[axis], iv);
                wgml_tensor *out = t_poisoned(plain[d], 3, is[axis]);
                wgml_status st = wgml_gather(src, view ? axis - 3 : axis, idx, out);
                char what[64];
                snprintf(what, sizeof what, "gather %s axis %d view %d", wgml_dtype_name(plain[d]), axis, view);
                CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
                double *want = malloc(sizeof(double) * (size_t)ni);
                wg_gather_ref(3, ss, sval, axis, is[axis], iv, want);
                expect(what, out, want);
                free(want);
                free(iv);
                free(sval);
                wgml_tensor_free(out);
                wgml_tensor_free(idx);
                wgml_tensor_free(src);
                t_free(&b);
            }
}

static void t_index_select(void)
{
    const int64_t ss[3] = {6, 8, 5};
    for (size_t d = 0; d < NPLAIN; d++)
        for (int axis = 0; axis < 3; axis++) {
            t_tensor src = t_random(plain[d], 3, ss, lo_of(plain[d]), 100);
            int64_t big[1] = {22}, os[3] = {ss[0], ss[1], ss[2]};
            int32_t *iv = rand_idx(big[0], 0, ss[axis] - 1);
            wgml_tensor *ib = t_idx(1, big, iv), *idx = NULL;
            CHECK_OK(wgml_view_slice(ib, 0, 0, 22, 2, &idx)); /* 11 strided indices */
            int32_t sel[11];
            for (int i = 0; i < 11; i++)
                sel[i] = iv[2 * i];
            os[axis] = 11;
            wgml_tensor *out = t_poisoned(plain[d], 3, os);
            char what[64];
            snprintf(what, sizeof what, "index_select %s axis %d", wgml_dtype_name(plain[d]), axis);
            wgml_status st = wgml_index_select(src.t, axis, idx, out);
            CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
            double *want = malloc(sizeof(double) * (size_t)nelem(3, os));
            wg_index_select_ref(3, ss, src.val, axis, 11, sel, want);
            expect(what, out, want);
            free(want);
            free(iv);
            wgml_tensor_free(out);
            wgml_tensor_free(idx);
            wgml_tensor_free(ib);
            t_free(&src);
        }
}

/* ------------------------------------------------------------ scatter_add */

static void check_scatter_add(wgml_dtype dt, int axis, const int64_t *ds, const int64_t *is, const int64_t *ss,
                              int64_t maxidx, bool view, bool integral)
{
    int64_t dphys[3] = {ds[0], ds[1], ds[2]};
    if (view) {
        dphys[1] = ds[2];
        dphys[2] = ds[1];
    }
    t_tensor dst = t_random(dt, 3, dphys, -50, 50), src = t_random(dt, 3, ss, -50, 50);
    for (int k = 0; k < 2 && integral; k++) { /* integer-valued floats: exact in any order */
        t_tensor *t = k ? &src : &dst;
        for (int64_t i = 0; i < t->n; i++) {
            t->val[i] = floor(t->val[i]);
            wg_host_set(dt, t->host, (size_t)i, t->val[i]);
        }
        CHECK_OK(wgml_tensor_upload(t->t, t->host, wgml_tensor_nbytes(t->t)));
    }
    wgml_tensor *dv = NULL;
    if (view)
        CHECK_OK(wgml_view_transpose(dst.t, 1, 2, &dv));
    else
        CHECK_OK(wgml_view_reshape(dst.t, 3, ds, &dv));
    double *want = t_values(dv);
    int64_t nd = nelem(3, ds), ni = nelem(3, is);
    double *mag = malloc(sizeof(double) * (size_t)nd), *cnt = calloc((size_t)nd, sizeof(double));
    for (int64_t i = 0; i < nd; i++)
        mag[i] = fabs(want[i]);
    int32_t *iv = rand_idx(ni, 0, maxidx);
    wgml_tensor *idx = t_idx(3, is, iv);
    wgml_status st = wgml_scatter_add(dv, axis, idx, src.t);
    char what[80];
    snprintf(what, sizeof what, "scatter_add %s axis %d view %d", wgml_dtype_name(dt), axis, view);
    CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
    /* per-element bound: k additions, |partial sums| <= mag */
    double *absrc = malloc(sizeof(double) * (size_t)src.n), *ones = malloc(sizeof(double) * (size_t)src.n);
    for (int64_t i = 0; i < src.n; i++) {
        absrc[i] = fabs(src.val[i]);
        ones[i] = 1;
    }
    wg_scatter_add_ref(3, ds, want, axis, is, iv, ss, src.val);
    wg_scatter_add_ref(3, ds, mag, axis, is, iv, ss, absrc);
    wg_scatter_add_ref(3, ds, cnt, axis, is, iv, ss, ones);
    double *got = t_values(dv);
    int bad = 0;
    for (int64_t i = 0; i < nd; i++) {
        double tol = dt == WGML_F32 && !integral ? cnt[i] * ldexp(1, -24) * mag[i] : 0;
        if (fabs(got[i] - want[i]) > tol && bad++ < 4)
            printf("    %s [%lld]: got %.9g want %.9g (tol %.3g)\n", what, (long long)i, got[i], want[i], tol);
    }
    CHECK(bad == 0, "%s: %d wrong", what, bad);
    free(got);
    free(absrc);
    free(ones);
    free(mag);
    free(cnt);
    free(want);
    free(iv);
    wgml_tensor_free(idx);
    wgml_tensor_free(dv);
    t_free(&dst);
    t_free(&src);
}

static void t_scatter_add(void)
{
    const int64_t ds[3] = {4, 6, 5};
    const int64_t is[3][3] = {{9, 6, 5}, {4, 13, 3}, {2, 6, 17}}; /* axis dim larger than dst's: many collisions */
    const int64_t ss[3][3] = {{9, 7, 6}, {5, 13, 3}, {2, 6, 18}}; /* src at least idx's shape */
    const wgml_dtype dts[2] = {WGML_F32, WGML_I32};
    for (int d = 0; d < 2; d++)
        for (int axis = 0; axis < 3; axis++) {
            check_scatter_add(dts[d], axis, ds, is[axis], ss[axis], ds[axis] - 1, false, false);
            check_scatter_add(dts[d], axis, ds, is[axis], ss[axis], 1, axis != 1, false); /* heavy duplicates */
        }
    /* contention: 300,000 adds into 3 elements, exact (integer-valued) */
    const int64_t cd[3] = {1, 1, 3}, ci[3] = {1, 1, 300000};
    check_scatter_add(WGML_F32, 2, cd, ci, ci, 2, false, true);
    check_scatter_add(WGML_I32, 2, cd, ci, ci, 2, false, true);
}

/* ------------------------------------------------------------ one_hot, embedding */

static void t_one_hot(void)
{
    const int64_t s1[1] = {37}, s3[3] = {2, 3, 5};
    for (size_t d = 0; d < NPLAIN; d++)
        for (int c = 0; c < 3; c++) {
            int64_t classes = c == 0 ? 1 : c == 1 ? 10 : 300;
            bool three = c == 2;
            int nd = three ? 3 : 1;
            const int64_t *is = three ? s3 : s1;
            int64_t ni = nelem(nd, is), os[4];
            memcpy(os, is, sizeof(int64_t) * (size_t)nd);
            os[nd] = classes;
            int32_t *iv = rand_idx(ni, 0, classes - 1);
            wgml_tensor *idx = t_idx(nd, is, iv);
            wgml_tensor *out = t_poisoned(plain[d], nd + 1, os);
            char what[64];
            snprintf(what, sizeof what, "one_hot %s classes %lld", wgml_dtype_name(plain[d]), (long long)classes);
            wgml_status st = wgml_one_hot(idx, out);
            CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
            double *want = malloc(sizeof(double) * (size_t)(ni * classes));
            wg_one_hot_ref(ni, iv, classes, want);
            expect(what, out, want);
            free(want);
            free(iv);
            wgml_tensor_free(out);
            wgml_tensor_free(idx);
        }
}

static void t_embedding(void)
{
    const int64_t ts[2] = {50, 24};
    const wgml_dtype dts[3] = {WGML_F32, WGML_F16, WGML_BF16};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 2; o++)
            for (int nd = 0; nd <= 3; nd++) {
                wgml_dtype odt = o ? WGML_F32 : dts[d];
                t_tensor table = t_random(dts[d], 2, ts, -3, 3);
                int64_t is[3] = {3, 4, 5}, os[4];
                /* nd 3: ids are a transposed view of a [3, 5, 4] tensor */
                int64_t phys[3] = {3, 5, 4};
                int64_t ni = nelem(nd, is);
                int32_t *iv = rand_idx(ni, 0, 49);
                wgml_tensor *ib = t_idx(nd, nd == 3 ? phys : is, iv), *ids = NULL;
                if (nd == 3) { /* iv in the view's logical order */
                    CHECK_OK(wgml_view_transpose(ib, 1, 2, &ids));
                    int32_t *raw = malloc(sizeof(int32_t) * (size_t)ni);
                    CHECK_OK(wgml_tensor_download(ids, raw, (uint64_t)ni * 4));
                    memcpy(iv, raw, sizeof(int32_t) * (size_t)ni);
                    free(raw);
                } else {
                    CHECK_OK(wgml_view_reshape(ib, nd, is, &ids));
                }
                memcpy(os, is, sizeof(int64_t) * (size_t)nd);
                os[nd] = ts[1];
                wgml_tensor *out = t_poisoned(odt, nd + 1, os);
                char what[64];
                snprintf(what, sizeof what, "embedding %s->%s ids %dD", wgml_dtype_name(dts[d]),
                         wgml_dtype_name(odt), nd);
                wgml_status st = wgml_embedding(table.t, ids, out);
                CHECK(st == WGML_OK, "%s: %s", what, wgml_last_error());
                const int64_t flat[1] = {ni};
                double *want = malloc(sizeof(double) * (size_t)(ni * ts[1]));
                wg_get_rows_ref(2, ts, table.val, 1, flat, iv, want);
                expect(what, out, want);
                free(want);
                free(iv);
                wgml_tensor_free(out);
                wgml_tensor_free(ids);
                wgml_tensor_free(ib);
                t_free(&table);
            }
}

/* ------------------------------------------------------------ zero sizes */

static void t_zero_sizes(void)
{
    const int64_t s2[2] = {5, 3}, z1[1] = {0}, o0[2] = {0, 3}, s0[2] = {5, 0}, i2[1] = {2}, o20[2] = {2, 0};
    int32_t iv[2] = {4, 0};
    wgml_tensor *src = NULL, *src0 = NULL, *e = NULL, *i = t_idx(1, i2, iv), *o = NULL, *o2 = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s2, &src));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s0, &src0));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, z1, &e));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, o0, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, o20, &o2));
    CHECK_OK(wgml_get_rows(src, e, o));      /* no indices */
    CHECK_OK(wgml_get_rows(src0, i, o2));    /* rows of zero width */
    CHECK_OK(wgml_set_rows(src, e, o));
    CHECK_OK(wgml_index_select(src, 0, e, o));
    CHECK_OK(wgml_embedding(src, e, o));
    const int64_t e2[2] = {0, 3}, oh[2] = {0, 4};
    wgml_tensor *e23 = NULL, *ohot = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, e2, &e23));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, oh, &ohot));
    CHECK_OK(wgml_gather(src, 0, e23, o));
    CHECK_OK(wgml_scatter_add(src, 1, e23, o));
    CHECK_OK(wgml_one_hot(e, ohot));
    /* indices into an empty axis are all out of range */
    const int64_t s23[2] = {2, 3};
    wgml_tensor *o23 = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s23, &o23));
    wgml_status zst = wgml_get_rows(o, i, o23);
    CHECK(zst == WGML_OK, "index into 0 rows: %s", wgml_last_error());
    CHECK(reported(zst, "wgml_get_rows"), "index into 0 rows: %s", wgml_last_error());
    wgml_tensor_free(o23);
    wgml_tensor_free(e23);
    wgml_tensor_free(ohot);
    wgml_tensor_free(o2);
    wgml_tensor_free(o);
    wgml_tensor_free(i);
    wgml_tensor_free(e);
    wgml_tensor_free(src0);
    wgml_tensor_free(src);
}

/* ------------------------------------------------------------ invalid calls */

static void t_invalid(void)
{
    const int64_t s2[2] = {6, 4}, i1[1] = {3}, o2[2] = {3, 4}, o3[2] = {3, 5}, i2[2] = {2, 3}, q[2] = {4, 32};
    int32_t iv[6] = {0, 1, 2, 0, 1, 2};
    wgml_tensor *src = NULL, *idx = t_idx(1, i1, iv), *idx2 = t_idx(2, i2, iv), *out = NULL, *bad = NULL,
                *fi = NULL, *oi = NULL, *qs = NULL, *qo = NULL, *u8 = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, s2, &src));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, o2, &out));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, o3, &bad));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 1, i1, &fi));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, o2, &oi));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_U8, 2, o2, &u8));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_Q8_0, 2, q, &qs));
    const int64_t qo_s[2] = {3, 32};
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, qo_s, &qo));
    /* get_rows */
    CHECK(wgml_get_rows(src, fi, out) == WGML_ERR_DTYPE, "f32 indices accepted");
    CHECK(wgml_get_rows(src, idx, bad) == WGML_ERR_SHAPE, "wrong out shape accepted");
    CHECK(wgml_get_rows(src, idx, oi) == WGML_ERR_DTYPE, "f32 -> i32 out accepted");
    CHECK(wgml_get_rows(src, idx2, out) == WGML_ERR_SHAPE, "batch dim 2 vs 6 accepted");
    CHECK(wgml_get_rows(NULL, idx, out) == WGML_ERR_INVALID_ARG, "NULL src accepted");
    CHECK(wgml_get_rows(src, idx, NULL) == WGML_ERR_INVALID_ARG, "NULL out accepted");
    CHECK(wgml_get_rows(src, idx, src) == WGML_ERR_SHAPE, "out = src accepted");
    /* quantised table: validated here, then the quant family (or UNSUPPORTED) */
    CHECK(wgml_get_rows(qs, idx, oi) == WGML_ERR_DTYPE, "q8_0 -> i32 accepted");
    CHECK(wgml_get_rows(qs, idx2, qo) == WGML_ERR_SHAPE, "2-D idx over 2-D q8_0 accepted");
    int32_t big[3] = {0, 4, 1};
    wgml_tensor *ib = t_idx(1, i1, big);
    CHECK(reported(wgml_get_rows(qs, ib, qo), "wgml_get_rows"), "q8_0 row 4 of 4 accepted");
    wgml_status st = wgml_get_rows(qs, idx, qo);
    CHECK(st == WGML_OK, "q8_0 get_rows: %s", wgml_status_name(st));
    st = wgml_set_rows(qs, idx, qo);
    CHECK(st == WGML_OK, "q8_0 set_rows: %s", wgml_status_name(st));
    CHECK(wgml_set_rows(qs, idx, qs) == WGML_ERR_DTYPE, "q8_0 src for set_rows accepted");
    /* set_rows */
    CHECK(wgml_set_rows(src, idx, oi) == WGML_ERR_DTYPE, "i32 rows into f32 accepted");
    CHECK(wgml_set_rows(oi, idx, u8) == WGML_ERR_DTYPE, "u8 rows into i32 accepted");
    CHECK(wgml_set_rows(src, idx, bad) == WGML_ERR_SHAPE, "rows of 5 into rows of 4 accepted");
    CHECK(wgml_set_rows(src, fi, out) == WGML_ERR_DTYPE, "f32 indices accepted");
    /* gather / scatter_add */
    const int64_t g2[2] = {3, 4}, g3[3] = {1, 3, 4}, gbig[2] = {7, 4};
    wgml_tensor *gi = NULL, *gi3 = NULL, *gib = NULL, *go = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, g2, &gi));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 3, g3, &gi3));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, gbig, &gib));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, g2, &go));
    CHECK(wgml_gather(src, 2, gi, go) == WGML_ERR_INDEX, "axis 2 of 2-D accepted");
    CHECK(wgml_gather(src, -3, gi, go) == WGML_ERR_INDEX, "axis -3 of 2-D accepted");
    CHECK(wgml_gather(src, 0, gi3, go) == WGML_ERR_SHAPE, "3-D idx for 2-D src accepted");
    CHECK(wgml_gather(src, 1, gib, out) == WGML_ERR_SHAPE, "idx dim 0 of 7 > 6 accepted");
    CHECK(wgml_gather(src, 0, gi, oi) == WGML_ERR_DTYPE, "gather f32 -> i32 accepted");
    CHECK_OK(wgml_gather(src, 0, gi, go));
    CHECK(wgml_gather(qs, 0, gi, go) == WGML_ERR_DTYPE, "quantised gather accepted");
    CHECK(wgml_scatter_add(u8, 0, gi, u8) == WGML_ERR_DTYPE, "u8 scatter_add accepted");
    CHECK(wgml_scatter_add(src, 0, gi, oi) == WGML_ERR_DTYPE, "i32 src into f32 accepted");
    CHECK(wgml_scatter_add(src, 5, gi, go) == WGML_ERR_INDEX, "scatter_add axis 5 accepted");
    CHECK(wgml_scatter_add(src, 0, gib, go) == WGML_ERR_SHAPE, "idx larger than src accepted");
    CHECK(wgml_scatter_add(go, 1, gib, src) == WGML_ERR_SHAPE, "idx larger than src (axis 1) accepted");
    CHECK_OK(wgml_scatter_add(go, 0, gi, src));
    /* overlap: dst and src views of one buffer */
    wgml_tensor *a = NULL, *b2 = NULL;
    CHECK_OK(wgml_view_slice(src, 0, 0, 3, 1, &a));
    CHECK_OK(wgml_view_slice(src, 0, 2, 5, 1, &b2));
    CHECK(wgml_scatter_add(a, 0, gi, b2) == WGML_ERR_INVALID_ARG, "overlapping dst/src accepted");
    wgml_tensor_free(b2);
    CHECK_OK(wgml_view_slice(src, 0, 3, 6, 1, &b2));
    CHECK_OK(wgml_scatter_add(a, 0, gi, b2)); /* one buffer, disjoint: fine */
    CHECK_OK(wgml_get_rows(a, idx, b2));
    /* index_select / one_hot / embedding */
    CHECK(wgml_index_select(src, 0, idx2, out) == WGML_ERR_SHAPE, "2-D idx for index_select accepted");
    CHECK(wgml_index_select(src, 2, idx, out) == WGML_ERR_INDEX, "index_select axis 2 accepted");
    CHECK(wgml_index_select(src, 1, idx, out) == WGML_ERR_SHAPE, "index_select wrong out accepted");
    CHECK(wgml_one_hot(idx, src) == WGML_ERR_SHAPE, "one_hot [3] -> [6, 4] accepted");
    CHECK(wgml_one_hot(fi, out) == WGML_ERR_DTYPE, "one_hot f32 idx accepted");
    CHECK(wgml_one_hot(idx, qo) == WGML_OK, "one_hot 32 classes: %s", wgml_last_error());
    CHECK(wgml_embedding(gi3, idx, out) == WGML_ERR_SHAPE, "3-D table accepted");
    CHECK(wgml_embedding(src, idx, bad) == WGML_ERR_SHAPE, "embedding wrong out accepted");
    CHECK(wgml_embedding(src, idx, oi) == WGML_ERR_DTYPE, "embedding f32 -> i32 accepted");
    wgml_tensor *ids4 = NULL;
    const int64_t s4[4] = {1, 1, 1, 3};
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 4, s4, &ids4));
    CHECK(wgml_embedding(src, ids4, out) == WGML_ERR_SHAPE, "4-D ids accepted");
    CHECK(wgml_one_hot(ids4, out) == WGML_ERR_SHAPE, "one_hot of 4-D idx accepted");
    wgml_tensor_free(ids4);
    wgml_tensor_free(a);
    wgml_tensor_free(b2);
    wgml_tensor_free(gi);
    wgml_tensor_free(gi3);
    wgml_tensor_free(gib);
    wgml_tensor_free(go);
    wgml_tensor_free(ib);
    wgml_tensor_free(qo);
    wgml_tensor_free(qs);
    wgml_tensor_free(u8);
    wgml_tensor_free(oi);
    wgml_tensor_free(fi);
    wgml_tensor_free(bad);
    wgml_tensor_free(out);
    wgml_tensor_free(idx2);
    wgml_tensor_free(idx);
    wgml_tensor_free(src);
}

static void t_registry(void)
{
    const char *names[] = {"GET_ROWS", "SET_ROWS", "GATHER", "SCATTER_ADD", "INDEX_SELECT", "ONE_HOT", "EMBEDDING"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        bool found = false;
        for (size_t i = 0; i < wgml_op_count(); i++)
            found = found || (strcmp(wgml_op_get(i)->name, names[k]) == 0 &&
                              strcmp(wgml_op_get(i)->family, "indexing") == 0);
        CHECK(found, "registry lacks %s", names[k]);
    }
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"get_rows_dtypes_batched", t_get_rows_dtypes},
        {"get_rows_views", t_get_rows_views},
        {"get_rows_70001_rows", t_get_rows_many},
        {"table_over_one_binding", t_big_table},
        {"set_rows_dtypes_dups_views", t_set_rows},
        {"gather_axes_views", t_gather},
        {"index_select", t_index_select},
        {"scatter_add_dups_contention", t_scatter_add},
        {"one_hot", t_one_hot},
        {"embedding", t_embedding},
        {"zero_sizes", t_zero_sizes},
        {"invalid_calls", t_invalid},
        {"registry", t_registry},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
