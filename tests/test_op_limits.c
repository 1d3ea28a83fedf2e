/* Operations whose operands exceed the storage-binding window, run on a
 * context made with WGML_MAX_BINDING=4096 (whatever mode ctest runs this
 * program in): elementwise over any dim, copies of strided views, softmax /
 * norm / cumsum rows longer than one window, quantised tables, indices
 * and outputs, movement ops over many windows; each must match its CPU
 * reference.  test_op_limits_rows.c: reductions, sorts, sample, group and
 * batch norm, rope. */
#include "limits_harness.h"

/* Elementwise ops whose rows exceed the window: a contiguous 1-D [5000]
 * (20000 bytes, over five windows), the same as [2, 2500] plus a
 * broadcast row and a broadcast scalar, and a unary op on a strided view
 * (every other element of a [2, 5000] row). */
static void t_elementwise_split(void)
{
    const int64_t n1[1] = {5000}, n2[2] = {2, 2500}, r1[1] = {2500}, s1[1] = {1}, w2[2] = {2, 5000};
    t_tensor a = rnd(1, n1, -4, 4), b = rnd(1, s1, -4, 4), c = rnd(2, n2, -4, 4), d = rnd(1, r1, -4, 4);
    t_tensor e = rnd(2, w2, -4, 4);
    wgml_tensor *o1 = mk(WGML_F32, 1, n1), *o2 = mk(WGML_F32, 2, n2), *o3 = mk(WGML_F32, 2, n2), *ev = NULL;
    double *want = malloc(sizeof(double) * 5000);
    if (!a.t || !b.t || !c.t || !d.t || !e.t || !o1 || !o2 || !o3 || !want)
        goto done;
    CHECK_OK(wgml_binary(WGML_ADD, a.t, b.t, o1));
    for (int i = 0; i < 5000; i++)
        want[i] = wg_binary_ref(WGML_ADD, a.val[i], b.val[0], WGML_F32);
    expect_values("1-D add of a broadcast scalar", o1, want, 0, 0);
    CHECK_OK(wgml_unary(WGML_ABS, a.t, o1, 0, 0));
    for (int i = 0; i < 5000; i++)
        want[i] = fabs(a.val[i]);
    expect_values("1-D abs", o1, want, 0, 0);
    CHECK_OK(wgml_binary(WGML_MUL, c.t, d.t, o2));
    for (int i = 0; i < 5000; i++)
        want[i] = wg_binary_ref(WGML_MUL, c.val[i], d.val[i % 2500], WGML_F32);
    expect_values("rows times a broadcast row", o2, want, 0, 0);
    /* e[:, 0:5000:2]: [2, 2500] with element stride 2 */
    CHECK_OK(wgml_view_slice(e.t, 1, 0, 5000, 2, &ev));
    if (ev) {
        CHECK_OK(wgml_unary(WGML_NEG, ev, o3, 0, 0));
        for (int i = 0; i < 5000; i++)
            want[i] = -e.val[(i / 2500) * 5000 + (i % 2500) * 2];
        expect_values("neg of a strided view", o3, want, 0, 0);
    }
done:
    free(want);
    wgml_tensor_free(ev);
    wgml_tensor_free(o1);
    wgml_tensor_free(o2);
    wgml_tensor_free(o3);
    t_free(&a);
    t_free(&b);
    t_free(&c);
    t_free(&d);
    t_free(&e);
}

/* Copy of a transposed [64, 65] view: each of its rows (64 elements,
 * stride 65) spans 16 KiB. */
static void t_transposed_copy(void)
{
    const int64_t bs[2] = {64, 65}, os[2] = {65, 64};
    t_tensor b = rnd(2, bs, -4, 4);
    wgml_tensor *x = NULL, *o = mk(WGML_F32, 2, os);
    CHECK_OK(wgml_view_transpose(b.t, 0, 1, &x));
    double *want = malloc(sizeof(double) * 65 * 64);
    if (x && o && want) {
        CHECK_OK(wgml_copy(x, o));
        for (int i = 0; i < 65; i++)
            for (int j = 0; j < 64; j++)
                want[i * 64 + j] = b.val[j * 65 + i];
        expect_values("copy of a transposed view", o, want, 0, 0);
    }
    free(want);
    wgml_tensor_free(x);
    wgml_tensor_free(o);
    t_free(&b);
}

/* Softmax rows longer than the window: along axis 0 of a transposed
 * [40, 300] view (x's rows are contiguous, out's have stride 40 and span
 * 47 KiB), and contiguous rows of 3000 with a mask, ALiBi and sinks,
 * softmax and log_softmax. */
static void t_softmax_long(void)
{
    const int64_t bs[2] = {40, 300}, ts[2] = {300, 40};
    t_tensor b = rnd(2, bs, -6, 6);
    wgml_tensor *x = NULL, *o = mk(WGML_F32, 2, ts);
    CHECK_OK(wgml_view_transpose(b.t, 0, 1, &x));
    double *xv = malloc(sizeof(double) * 300 * 40), *want = malloc(sizeof(double) * 300 * 40);
    if (x && o && xv && want) {
        for (int i = 0; i < 300; i++)
            for (int j = 0; j < 40; j++)
                xv[i * 40 + j] = b.val[j * 300 + i];
        wgml_softmax_params sp = {0, 0.5f, 0, 0};
        CHECK_OK(wgml_softmax(x, NULL, NULL, &sp, o));
        wg_softmax_ref(2, ts, xv, 0, NULL, NULL, NULL, &sp, want);
        expect_values("softmax axis 0 of a transposed view", o, want, 1e-5, 1e-7);
    }
    free(xv);
    free(want);
    wgml_tensor_free(x);
    wgml_tensor_free(o);
    t_free(&b);

    const int64_t xs[3] = {2, 1, 3000}, ms[1] = {3000}, ss[1] = {2};
    t_tensor a = rnd(3, xs, -8, 8), m = rnd(1, ms, -2, 2), sk = rnd(1, ss, -1, 1);
    wgml_tensor *out = mk(WGML_F32, 3, xs);
    want = malloc(sizeof(double) * 6000);
    for (int lg = 0; lg < 2 && a.t && m.t && sk.t && out && want; lg++) {
        wgml_softmax_params sp = {-1, 0.7f, lg ? 0.0f : 8.0f, lg};
        CHECK_OK(wgml_softmax(a.t, m.t, sk.t, &sp, out));
        wg_softmax_ref(3, xs, a.val, 1, ms, m.val, sk.val, &sp, want);
        expect_values(lg ? "log_softmax of long rows, mask and sinks" : "softmax of long rows, ALiBi and sinks", out,
                      want, 1e-5, 1e-7);
    }
    free(want);
    wgml_tensor_free(out);
    t_free(&a);
    t_free(&m);
    t_free(&sk);
}

/* LAYER and RMS norm of rows of 3000 (12000 bytes) with residual, weight,
 * bias and sum_out. */
static void t_norm_long(void)
{
    const int64_t xs[2] = {3, 3000}, ws[1] = {3000};
    t_tensor x = rnd(2, xs, 1, 3), r = rnd(2, xs, -1, 1), w = rnd(1, ws, -2, 2), b = rnd(1, ws, -1, 1);
    wgml_tensor *o = mk(WGML_F32, 2, xs), *so = mk(WGML_F32, 2, xs);
    double *want = malloc(sizeof(double) * 9000), *sum = malloc(sizeof(double) * 9000);
    double *wv = malloc(sizeof(double) * 9000), *bv = malloc(sizeof(double) * 9000);
    if (x.t && r.t && w.t && b.t && o && so && want && sum && wv && bv) {
        for (int i = 0; i < 9000; i++) {
            wv[i] = w.val[i % 3000];
            bv[i] = b.val[i % 3000];
        }
        static const wgml_norm_kind kinds[2] = {WGML_LAYER_NORM, WGML_RMS_NORM};
        for (int k = 0; k < 2; k++) {
            wgml_norm_params np = {kinds[k], 1e-5f, 0, w.t, b.t, r.t, NULL, NULL, so};
            CHECK_OK(wgml_norm(x.t, &np, o));
            wg_norm_ref(2, xs, x.val, r.val, wv, bv, NULL, NULL, &np, want, sum);
            expect_values(k ? "rms_norm of long rows" : "layer_norm of long rows", o, want, 1e-4, 1e-5);
            expect_values("norm's sum_out", so, sum, 1e-6, 0);
        }
    }
    free(want);
    free(sum);
    free(wv);
    free(bv);
    wgml_tensor_free(o);
    wgml_tensor_free(so);
    t_free(&x);
    t_free(&r);
    t_free(&w);
    t_free(&b);
}

/* cumsum along rows longer than the window: contiguous rows of 3000, and
 * axis 1 of a transposed [256, 4] view (rows of 256 with stride 4). */
static void t_cumsum_long(void)
{
    const int64_t xs[2] = {2, 3000};
    t_tensor x = rnd(2, xs, -2, 2);
    wgml_tensor *o = mk(WGML_F32, 2, xs);
    double *want = malloc(sizeof(double) * 6000);
    for (int ex = 0; ex < 2 && x.t && o && want; ex++) {
        CHECK_OK(wgml_cumsum(x.t, 1, ex, o));
        wg_cumsum_ref(WGML_F32, x.val, 2, xs, 1, ex, want);
        expect_values(ex ? "exclusive cumsum of long rows" : "cumsum of long rows", o, want, 1e-5, 1e-4);
    }
    free(want);
    wgml_tensor_free(o);
    t_free(&x);

    const int64_t bs[2] = {256, 4}, ts[2] = {4, 256};
    t_tensor b = rnd(2, bs, -2, 2);
    wgml_tensor *v = NULL, *cs = mk(WGML_F32, 2, ts);
    CHECK_OK(wgml_view_transpose(b.t, 0, 1, &v));
    double *xv = malloc(sizeof(double) * 1024);
    want = malloc(sizeof(double) * 1024);
    if (v && cs && xv && want) {
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 256; j++)
                xv[i * 256 + j] = b.val[j * 4 + i];
        CHECK_OK(wgml_cumsum(v, 1, 0, cs));
        wg_cumsum_ref(WGML_F32, xv, 2, ts, 1, 0, want);
        expect_values("cumsum of strided rows", cs, want, 1e-5, 1e-4);
    }
    free(xv);
    free(want);
    wgml_tensor_free(v);
    wgml_tensor_free(cs);
    t_free(&b);
}

/* ------------------------------------------------ quant: windows of tables, indices and outputs
 * Quantised tables spanning several windows (and rows wider than one),
 * index tensors and dequantised outputs spanning many: cut by the window
 * binder, the tables bound in windows of rows (quant_gpu.c). */

/* A quantised tensor (and its CPU dequantisation) on the small context. */
static wgml_tensor *small_quant(wgml_dtype t, int ndim, const int64_t *shape, float **deq, uint8_t **raw)
{
    wgml_ctx *keep = t_ctx;
    t_ctx = small;
    wgml_tensor *q = quant_tensor(t, ndim, shape, deq, raw);
    t_ctx = keep;
    return q;
}

/* An i32 tensor on the small context. */
static wgml_tensor *small_idx(int ndim, const int64_t *shape, const int32_t *v)
{
    wgml_ctx *keep = t_ctx;
    t_ctx = small;
    wgml_tensor *t = t_idx(ndim, shape, v);
    t_ctx = keep;
    return t;
}

/* Rows idx[i] of a [rows, cols] dequantised table (rows per batch: nbat
 * batches of n indices each). */
static double *picked(const float *deq, int64_t rows, int64_t cols, const int32_t *idx, int64_t nbat, int64_t n)
{
    double *w = malloc(sizeof(double) * (size_t)(nbat * n * cols));
    for (int64_t b = 0; b < nbat; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = 0; c < cols; c++)
                w[(b * n + i) * cols + c] = deq[(b * rows + idx[b * n + i]) * cols + c];
    return w;
}

/* get_rows (1-D indices) and embedding (2-D ids, f16 out) from tables of
 * 4 windows (q8_0, q4_K) and of rows wider than a window (q6_K), every
 * row picked; batched get_rows from a q8_0 table of 3 windows. */
static void t_quant_get_rows_windows(void)
{
    static const struct { wgml_dtype t; int64_t rows, cols; } cs[3] = {
        {WGML_Q8_0, 200, 64}, {WGML_Q4_K, 48, 512}, {WGML_Q6_K, 5, 8192}};
    for (int k = 0; k < 3; k++) {
        const int64_t ts[2] = {cs[k].rows, cs[k].cols}, n = cs[k].rows + 6, ns[1] = {n};
        const int64_t es[3] = {2, n / 2, cs[k].cols}, is2[2] = {2, n / 2}, os[2] = {n, cs[k].cols};
        float *deq = NULL;
        wgml_tensor *q = small_quant(cs[k].t, 2, ts, &deq, NULL);
        int32_t *iv = malloc(sizeof(int32_t) * (size_t)n);
        for (int64_t i = 0; i < n; i++) /* a stride coprime with every row count here: all rows, some twice */
            iv[i] = (int32_t)((i * 7 + 3) % cs[k].rows);
        wgml_tensor *idx = small_idx(1, ns, iv), *ids = small_idx(2, is2, iv);
        wgml_tensor *o = mk(WGML_F32, 2, os), *e = mk(WGML_F16, 3, es);
        double *want = picked(deq, cs[k].rows, cs[k].cols, iv, 1, n);
        char what[64];
        if (q && idx && ids && o && e) {
            double atol = block_atol(deq, cs[k].rows * cs[k].cols);
            CHECK_OK(wgml_get_rows(q, idx, o));
            snprintf(what, sizeof what, "get_rows %s", wgml_dtype_name(cs[k].t));
            expect_values(what, o, want, 5e-7, atol);
            CHECK_OK(wgml_embedding(q, ids, e));
            snprintf(what, sizeof what, "embedding %s", wgml_dtype_name(cs[k].t));
            expect_values(what, e, want, 5e-7, atol);
        }
        free(want);
        free(iv);
        free(deq);
        wgml_tensor *all[] = {q, idx, ids, o, e};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            wgml_tensor_free(all[i]);
    }
    const int64_t ts[3] = {3, 40, 64}, is[2] = {3, 25}, os[3] = {3, 25, 64};
    float *deq = NULL;
    wgml_tensor *q = small_quant(WGML_Q8_0, 3, ts, &deq, NULL), *o = mk(WGML_F32, 3, os);
    int32_t iv[75];
    for (int i = 0; i < 75; i++)
        iv[i] = (int32_t)((i * 13 + i / 25) % 40);
    wgml_tensor *idx = small_idx(2, is, iv);
    double *want = picked(deq, 40, 64, iv, 3, 25);
    if (q && o && idx) {
        CHECK_OK(wgml_get_rows(q, idx, o));
        expect_values("batched get_rows q8_0", o, want, 5e-7, block_atol(deq, 3 * 40 * 64));
    }
    free(want);
    free(deq);
    wgml_tensor_free(q);
    wgml_tensor_free(o);
    wgml_tensor_free(idx);
}

/* A bad index into a table of 4 windows is still reported by the next
 * sync, and out is left as it was. */
static void t_quant_bad_index(void)
{
    const int64_t ts[2] = {200, 64}, ns[1] = {300}, os[2] = {300, 64};
    float *deq = NULL;
    wgml_tensor *q = small_quant(WGML_Q8_0, 2, ts, &deq, NULL), *o = mk(WGML_F32, 2, os);
    int32_t iv[300];
    for (int i = 0; i < 300; i++)
        iv[i] = i % 200;
    iv[250] = 200;
    wgml_tensor *idx = small_idx(1, ns, iv);
    if (q && o && idx) {
        CHECK_OK(wgml_buffer_fill(o->st->buf, o->offset, wgml_tensor_nbytes(o), 0x3f800000u)); /* 1.0f */
        CHECK_OK(wgml_get_rows(q, idx, o));
        wgml_status st = wgml_ctx_sync(small);
        const char *m = wgml_last_error();
        printf("    bad index: %s\n", m);
        CHECK(st == WGML_ERR_INDEX && strstr(m, "wgml_get_rows") && strstr(m, "= 200"),
              "bad index: got %s: %s", wgml_status_name(st), m);
        CHECK_OK(wgml_ctx_sync(small));
        double *ones = malloc(sizeof(double) * 300 * 64);
        for (int i = 0; i < 300 * 64; i++)
            ones[i] = 1.0;
        expect_values("out after a bad index", o, ones, 0, 0);
        free(ones);
    }
    free(deq);
    wgml_tensor_free(q);
    wgml_tensor_free(o);
    wgml_tensor_free(idx);
}

/* dequantize over many windows of output: q4_0 [16, 1024] to f32 (64
 * KiB) and q5_K [3, 4, 512] to f16. */
static void t_quant_dequantize_windows(void)
{
    const int64_t s2[2] = {16, 1024}, s3[3] = {3, 4, 512};
    float *d2 = NULL, *d3 = NULL;
    wgml_tensor *a = small_quant(WGML_Q4_0, 2, s2, &d2, NULL), *b = small_quant(WGML_Q5_K, 3, s3, &d3, NULL);
    wgml_tensor *oa = mk(WGML_F32, 2, s2), *ob = mk(WGML_F16, 3, s3);
    double *want = malloc(sizeof(double) * 16 * 1024);
    if (a && b && oa && ob && want) {
        CHECK_OK(wgml_dequantize(a, oa));
        for (int i = 0; i < 16 * 1024; i++)
            want[i] = d2[i];
        expect_values("dequantize q4_0", oa, want, 5e-7, block_atol(d2, 16 * 1024));
        CHECK_OK(wgml_dequantize(b, ob));
        for (int i = 0; i < 3 * 4 * 512; i++)
            want[i] = d3[i];
        expect_values("dequantize q5_K to f16", ob, want, 5e-7, block_atol(d3, 3 * 4 * 512));
    }
    free(want);
    free(d2);
    free(d3);
    wgml_tensor *all[] = {a, b, oa, ob};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        wgml_tensor_free(all[i]);
}

/* set_rows into a q8_0 table of 3 windows from source rows of 19 windows,
 * with repeated indices (the last occurrence wins), and batched into
 * q4_0: the bytes written equal those written on the default context. */
static void t_quant_set_rows_windows(void)
{
    static const struct { wgml_dtype t; int nd; int64_t ds[3], is[2], ss[3]; } cs[2] = {
        {WGML_Q8_0, 2, {160, 64}, {300}, {300, 64}}, {WGML_Q4_0, 3, {2, 100, 64}, {2, 120}, {2, 120, 64}}};
    for (int k = 0; k < 2; k++) {
        int ind = cs[k].nd - 1;
        int64_t nidx = ind == 1 ? cs[k].is[0] : cs[k].is[0] * cs[k].is[1], rows = cs[k].ds[cs[k].nd - 2];
        int32_t *iv = malloc(sizeof(int32_t) * (size_t)nidx);
        for (int64_t i = 0; i < nidx; i++)
            iv[i] = (int32_t)t_range(0, (uint64_t)rows - 1);
        float *deq = NULL;
        uint8_t *raw = NULL;
        wgml_tensor *dq[2] = {small_quant(cs[k].t, cs[k].nd, cs[k].ds, &deq, &raw), NULL};
        size_t bytes = wgml_tensor_nbytes(dq[0]);
        CHECK_OK(wgml_tensor_new(t_ctx, cs[k].t, cs[k].nd, cs[k].ds, &dq[1]));
        if (dq[1])
            CHECK_OK(wgml_tensor_upload(dq[1], raw, bytes));
        t_tensor src = rnd(cs[k].nd, cs[k].ss, -3, 3);
        wgml_tensor *sb = NULL, *ib = NULL, *is = small_idx(ind, cs[k].is, iv);
        CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, cs[k].nd, cs[k].ss, &sb));
        ib = t_idx(ind, cs[k].is, iv);
        uint8_t *got[2] = {malloc(bytes), malloc(bytes)};
        if (dq[0] && dq[1] && src.t && sb && ib && is) {
            CHECK_OK(wgml_tensor_upload(sb, src.host, wgml_tensor_nbytes(sb)));
            CHECK_OK(wgml_set_rows(dq[0], is, src.t));
            CHECK_OK(wgml_set_rows(dq[1], ib, sb));
            CHECK_OK(wgml_tensor_download(dq[0], got[0], bytes));
            CHECK_OK(wgml_tensor_download(dq[1], got[1], bytes));
            CHECK(memcmp(got[0], got[1], bytes) == 0, "set_rows %s: windowed bytes differ", wgml_dtype_name(cs[k].t));
            CHECK(memcmp(got[0], raw, bytes) != 0, "set_rows %s wrote nothing", wgml_dtype_name(cs[k].t));
        }
        free(got[0]);
        free(got[1]);
        free(iv);
        free(deq);
        free(raw);
        t_free(&src);
        wgml_tensor *all[] = {dq[0], dq[1], sb, ib, is};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            wgml_tensor_free(all[i]);
    }
}

/* ------------------------------------------------ movement: tensors over many windows
 * x: f32 [12, 30, 40] (48000 bytes, 12 windows); each op's output spans
 * many windows too and must match its CPU reference exactly. */

static void t_movement_windows(void)
{
    const int64_t xs[3] = {12, 30, 40}, ys[3] = {12, 30, 17};
    t_tensor x = rnd(3, xs, -4, 4), y = rnd(3, ys, -4, 4);
    double *want = malloc(sizeof(double) * 120000);
    wgml_tensor *o = NULL;
    if (!x.t || !y.t || !want)
        goto done;
    /* permute (2, 0, 1) */
    const int perm[3] = {2, 0, 1};
    const int64_t ps[3] = {40, 12, 30};
    o = mk(WGML_F32, 3, ps);
    CHECK_OK(wgml_permute(x.t, perm, o));
    wg_permute_ref(x.val, 3, xs, perm, want);
    expect_values("permute", o, want, 0, 0);
    wgml_tensor_free(o);
    /* concat along the last axis */
    const int64_t cs[3] = {12, 30, 57};
    const wgml_tensor *xy[2] = {x.t, y.t};
    const double *xyv[2] = {x.val, y.val};
    const int64_t *xysh[2] = {xs, ys};
    o = mk(WGML_F32, 3, cs);
    CHECK_OK(wgml_concat(xy, 2, 2, o));
    wg_concat_ref(xyv, xysh, 2, 3, 2, want);
    expect_values("concat", o, want, 0, 0);
    wgml_tensor_free(o);
    /* pad: reflect and constant */
    const int64_t before[3] = {1, 2, 3}, after[3] = {2, 1, 4}, pds[3] = {15, 33, 47};
    o = mk(WGML_F32, 3, pds);
    for (int mode = 0; mode < 2; mode++) {
        wgml_pad_mode pm = mode ? WGML_PAD_CONSTANT : WGML_PAD_REFLECT;
        CHECK_OK(wgml_pad(x.t, before, after, pm, 2.5, o));
        wg_pad_ref(x.val, 3, xs, before, after, pm, 2.5, want);
        expect_values(mode ? "pad constant" : "pad reflect", o, want, 0, 0);
    }
    wgml_tensor_free(o);
    /* roll and flip */
    const int64_t shifts[3] = {5, -7, 13};
    o = mk(WGML_F32, 3, xs);
    CHECK_OK(wgml_roll(x.t, shifts, o));
    wg_roll_ref(x.val, 3, xs, shifts, want);
    expect_values("roll", o, want, 0, 0);
    CHECK_OK(wgml_flip(x.t, 5u, o));
    wg_flip_ref(x.val, 3, xs, 5u, want);
    expect_values("flip", o, want, 0, 0);
    wgml_tensor_free(o);
    /* repeat: [12, 30, 40] tiled to [2, 12, 60, 80] */
    const int64_t rs[4] = {2, 12, 60, 80};
    o = mk(WGML_F32, 4, rs);
    CHECK_OK(wgml_repeat(x.t, o));
    wg_repeat_ref(x.val, 3, xs, 4, rs, want);
    expect_values("repeat", o, want, 0, 0);
    wgml_tensor_free(o);
    /* diag: x's first 60 rows of 40 as vectors -> [60, 40, 40] matrices,
     * and the diagonals of x's [30, 40] matrices cut to [30, 30] */
    const int64_t vs[2] = {360, 40}, v60[2] = {60, 40}, ms[3] = {60, 40, 40};
    wgml_tensor *xr = NULL, *xv = NULL, *xm = NULL;
    CHECK_OK(wgml_view_reshape(x.t, 2, vs, &xr));
    if (xr)
        CHECK_OK(wgml_view_slice(xr, 0, 0, 60, 1, &xv));
    o = mk(WGML_F32, 3, ms);
    if (xv) {
        CHECK_OK(wgml_diag(xv, o));
        wg_diag_ref(x.val, 2, v60, 1, want);
        expect_values("diag vector -> matrix", o, want, 0, 0);
    }
    wgml_tensor_free(o);
    const int64_t ds[2] = {12, 30}, sq[3] = {12, 30, 30};
    CHECK_OK(wgml_view_slice(x.t, 2, 0, 30, 1, &xm));
    o = mk(WGML_F32, 2, ds);
    if (xm) {
        double *sqv = malloc(sizeof(double) * 12 * 30 * 30);
        for (int64_t i = 0; i < 12 * 30 * 30; i++)
            sqv[i] = x.val[(i / 30) * 40 + i % 30];
        CHECK_OK(wgml_diag(xm, o));
        wg_diag_ref(sqv, 3, sq, 0, want);
        expect_values("diag matrix -> vector", o, want, 0, 0);
        free(sqv);
    }
    wgml_tensor_free(o);
    wgml_tensor_free(xr);
    wgml_tensor_free(xv);
    wgml_tensor_free(xm);
done:
    free(want);
    t_free(&x);
    t_free(&y);
}

/* ------------------------------------------------ reduce (issue 8) */

int main(int argc, char **argv)
{
    static const t_case cases[] = {
        {"elementwise_split", t_elementwise_split},
        {"transposed_copy", t_transposed_copy},
        {"softmax_long_rows", t_softmax_long},
        {"norm_long_rows", t_norm_long},
        {"cumsum_long_rows", t_cumsum_long},
        {"quant_get_rows_windows", t_quant_get_rows_windows},
        {"quant_bad_index", t_quant_bad_index},
        {"quant_dequantize_windows", t_quant_dequantize_windows},
        {"quant_set_rows_windows", t_quant_set_rows_windows},
        {"movement_windows", t_movement_windows},
    };
    return limits_main(argc, argv, cases, sizeof cases / sizeof *cases);
}
