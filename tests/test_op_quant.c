/* Quantised tensors on the GPU against the CPU reference (quant_ref*.c,
 * itself bit-exact with the gguf package): dequantise every GGUF type to
 * f32/f16/bf16 (f32 also at an element offset off 16 bytes: the store
 * path without vectors), get_rows from quantised tables, set_rows into
 * q8_0/q4_0.
 *
 * Tolerance for dequantisation: each element is one or two products of
 * exactly representable factors (block scale x sub-scale x quant, minus
 * min x sub-min); the GPU may fuse them into an FMA, which changes the
 * rounding by at most an ulp of each product: rtol 5e-7 plus 2^-20 of the
 * block's largest |value| absolute. */
#include "quant_table.h"

/* wgml_dequantize(q) into out (n elements) against the CPU's deq. */
static void check_deq(const char *what, wgml_tensor *q, wgml_tensor *out, const float *deq, int64_t n)
{
    CHECK_OK(wgml_dequantize(q, out));
    double *got = t_values(out), *want = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        want[i] = deq[i];
    CHECK(t_compare(what, wgml_tensor_dtype(out), got, want, n, 5e-7, block_atol(deq, n)) == 0, "%s", what);
    free(got);
    free(want);
}

static void t_dequantize_all(void)
{
    const wgml_dtype outs[] = {WGML_F32, WGML_F16, WGML_BF16};
    for (size_t k = 0; k < NQ; k++) {
        wgml_dtype t = qtypes[k];
        int64_t rows = 7, cols = 2 * (int64_t)wgml_dtype_block_elems(t);
        float *deq = NULL;
        wgml_tensor *q = quant_table(t, rows, cols, &deq, NULL);
        char what[48];
        for (size_t o = 0; o < 3 && q; o++) {
            const int64_t shape[2] = {rows, cols};
            wgml_tensor *out = t_poisoned(outs[o], 2, shape);
            snprintf(what, sizeof what, "dequantize %s->%s", wgml_dtype_name(t), wgml_dtype_name(outs[o]));
            check_deq(what, q, out, deq, rows * cols);
            wgml_tensor_free(out);
        }
        /* f32 out one element into its buffer: not on 16 bytes, so the
         * kernel stores element by element (OV4 off) */
        if (q) {
            wgml_tensor *big = t_poisoned(WGML_F32, 1, (const int64_t[]){rows * cols + 1}), *sl = NULL, *out = NULL;
            CHECK_OK(wgml_view_slice(big, 0, 1, rows * cols + 1, 1, &sl));
            CHECK_OK(wgml_view_reshape(sl, 2, (const int64_t[]){rows, cols}, &out));
            snprintf(what, sizeof what, "dequantize %s->f32 at element 1", wgml_dtype_name(t));
            check_deq(what, q, out, deq, rows * cols);
            wgml_tensor_free(out);
            wgml_tensor_free(sl);
            wgml_tensor_free(big);
        }
        free(deq);
        wgml_tensor_free(q);
    }
}

/* Batched and plain get_rows from every quantised type; > 65,535
 * workgroups for one type. */
static void t_get_rows_quant(void)
{
    for (size_t k = 0; k < NQ; k++) {
        wgml_dtype t = qtypes[k];
        int64_t rows = 50, cols = (int64_t)wgml_dtype_block_elems(t) * (k == 0 ? 2 : 1), n = 33;
        if (t == WGML_Q8_0) { /* 70,000 rows x 256 columns: 70,000 workgroups */
            rows = 300;
            cols = 256;
            n = 70000;
        }
        float *deq = NULL;
        wgml_tensor *q = quant_table(t, rows, cols, &deq, NULL);
        int32_t *ids = malloc(sizeof(int32_t) * (size_t)n);
        for (int64_t i = 0; i < n; i++)
            ids[i] = (int32_t)t_range(0, (uint64_t)rows - 1);
        wgml_tensor *idx = NULL, *out = NULL;
        CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &n, &idx));
        if (idx)
            CHECK_OK(wgml_tensor_upload(idx, ids, (uint64_t)n * 4));
        const int64_t oshape[2] = {n, cols};
        out = t_poisoned(WGML_F32, 2, oshape);
        CHECK_OK(wgml_get_rows(q, idx, out));
        double *got = t_values(out), *want = malloc(sizeof(double) * (size_t)(n * cols));
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < cols; j++)
                want[i * cols + j] = deq[ids[i] * cols + j];
        char what[48];
        snprintf(what, sizeof what, "get_rows %s", wgml_dtype_name(t));
        CHECK(t_compare(what, WGML_F32, got, want, n * cols, 5e-7, block_atol(deq, rows * cols)) == 0, "%s", what);
        free(got);
        free(want);
        free(ids);
        free(deq);
        wgml_tensor_free(out);
        wgml_tensor_free(idx);
        wgml_tensor_free(q);
    }
}

/* set_rows f32 -> q8_0 / q4_0 against the CPU quantiser (ggml's rules, as
 * in gguf): written rows must dequantise to what the CPU's blocks give,
 * except that an element whose scaled value lies on a rounding boundary
 * may land one quantisation step away (GPU division is approximate and
 * WGSL rounds ties to even where C rounds them away from zero); such
 * elements must be under 1%.  Rows not indexed keep their bytes. */
static void t_set_rows_quant(void)
{
    const wgml_dtype ts[2] = {WGML_Q8_0, WGML_Q4_0};
    for (int k = 0; k < 2; k++) {
        wgml_dtype t = ts[k];
        int64_t rows = 40, cols = 96, n = 9;
        float *deq0 = NULL;
        uint8_t *raw0 = NULL;
        wgml_tensor *dst = quant_table(t, rows, cols, &deq0, &raw0);
        const int64_t sshape[2] = {n, cols};
        t_tensor src = t_random(WGML_F32, 2, sshape, -4, 4);
        int32_t ids[9];
        for (int i = 0; i < 9; i++)
            ids[i] = (int32_t)(i * 4 + 1); /* distinct rows */
        wgml_tensor *idx = NULL;
        CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &n, &idx));
        if (idx)
            CHECK_OK(wgml_tensor_upload(idx, ids, sizeof ids));
        CHECK_OK(wgml_set_rows(dst, idx, src.t));
        size_t bytes = wgml_tensor_nbytes(dst), rowb = bytes / (size_t)rows;
        uint8_t *raw = malloc(bytes), *cpu = malloc(rowb);
        CHECK_OK(wgml_tensor_download(dst, raw, bytes));
        float *got = malloc(sizeof(float) * (size_t)cols), *want = malloc(sizeof(float) * (size_t)cols),
              *x = malloc(sizeof(float) * (size_t)cols);
        int bad = 0, off_by_step = 0;
        for (int64_t r = 0; r < rows; r++) {
            int which = -1;
            for (int i = 0; i < 9; i++)
                if (ids[i] == r)
                    which = i;
            if (which < 0) {
                bad += memcmp(raw + r * rowb, raw0 + r * rowb, rowb) != 0;
                continue;
            }
            for (int64_t j = 0; j < cols; j++)
                x[j] = (float)src.val[which * cols + j];
            wg_quantize_ref(qt_of(t), x, cpu, cols);
            wg_dequantize_ref(qt_of(t), cpu, want, cols);
            wg_dequantize_ref(qt_of(t), raw + r * rowb, got, cols);
            for (int64_t j = 0; j < cols; j++) {
                double amax = 0;
                for (int64_t m = j / 32 * 32; m < j / 32 * 32 + 32; m++)
                    amax = fmax(amax, fabs(x[m]));
                double step = t == WGML_Q8_0 ? amax / 127 : amax / 8;
                double d = fabs(got[j] - want[j]);
                if (d == 0)
                    continue;
                if (d <= step * 1.01)
                    off_by_step++;
                else if (bad++ < 4)
                    printf("    %s row %lld [%lld]: %g -> %g, CPU %g\n", wgml_dtype_name(t), (long long)r, (long long)j,
                           x[j], got[j], want[j]);
            }
        }
        CHECK(bad == 0, "set_rows %s: %d wrong", wgml_dtype_name(t), bad);
        CHECK(off_by_step * 100 <= n * cols, "set_rows %s: %d of %lld one step off", wgml_dtype_name(t), off_by_step,
              (long long)(n * cols));
        free(raw);
        free(cpu);
        free(raw0);
        free(got);
        free(want);
        free(x);
        free(deq0);
        wgml_tensor_free(idx);
        wgml_tensor_free(dst);
        t_free(&src);
    }
}

/* wgml_copy of quantised rows into views of any row stride (a model's
 * gate and up rows interleaved, src/models/llm_graph.c): copied as u32
 * words, bit for bit; a row not on 4 bytes is refused. */
static void t_copy_rows(void)
{
    static const wgml_dtype dts[] = {WGML_Q4_K, WGML_Q6_K, WGML_Q8_0, WGML_Q4_0};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
        const int64_t R = 5, C = 512;
        uint8_t *ra = NULL, *rb = NULL;
        float *da = NULL, *db = NULL;
        wgml_tensor *a = quant_table(dts[d], R, C, &da, &ra), *b = quant_table(dts[d], R, C, &db, &rb);
        wgml_tensor *t = NULL, *even = NULL, *odd = NULL;
        CHECK_OK(wgml_tensor_new(t_ctx, dts[d], 2, (int64_t[]){2 * R, C}, &t));
        CHECK_OK(wgml_view_slice(t, 0, 0, 2 * R, 2, &even));
        CHECK_OK(wgml_view_slice(t, 0, 1, 2 * R, 2, &odd));
        CHECK_OK(wgml_copy(a, even));
        CHECK_OK(wgml_copy(b, odd));
        uint64_t rowb = wgml_tensor_nbytes(a) / (uint64_t)R;
        uint8_t *got = malloc(2 * R * rowb);
        CHECK_OK(wgml_tensor_download(t, got, 2 * R * rowb));
        int bad = 0;
        for (int64_t r = 0; r < 2 * R; r++)
            bad += memcmp(got + r * rowb, (r % 2 ? rb : ra) + r / 2 * rowb, rowb) != 0;
        CHECK(bad == 0, "%s: %d of %lld interleaved rows differ", wgml_dtype_name(dts[d]), bad, (long long)(2 * R));
        free(got), free(ra), free(rb), free(da), free(db);
        wgml_tensor_free(even), wgml_tensor_free(odd), wgml_tensor_free(t);
        wgml_tensor_free(a), wgml_tensor_free(b);
    }
    /* q5_0 rows of 3 blocks are 66 bytes: not on 4 */
    wgml_tensor *q = NULL, *t = NULL, *v = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_Q5_0, 2, (int64_t[]){2, 96}, &q));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_Q5_0, 2, (int64_t[]){4, 96}, &t));
    CHECK_OK(wgml_view_slice(t, 0, 0, 4, 2, &v));
    CHECK(wgml_copy(q, v) == WGML_ERR_DTYPE, "a q5_0 copy of 66-byte rows into a strided view accepted");
    wgml_tensor_free(q), wgml_tensor_free(t), wgml_tensor_free(v);
}

static void t_errors(void)
{
    const int64_t s[2] = {4, 32}, sf[2] = {4, 16};
    wgml_tensor *q = NULL, *o = NULL, *oi = NULL, *v = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_Q4_0, 2, s, &q));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, sf, &o));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 2, s, &oi));
    CHECK(wgml_dequantize(q, o) == WGML_ERR_SHAPE, "wrong out shape accepted");
    CHECK(wgml_dequantize(q, oi) == WGML_ERR_DTYPE, "i32 out accepted");
    CHECK(wgml_view_slice(q, 1, 0, 16, 1, &v) == WGML_ERR_DTYPE, "slicing inside a quantised row accepted");
    CHECK(wgml_cast(q, oi) == WGML_ERR_DTYPE, "cast of a quantised tensor accepted");
    wgml_tensor_free(q);
    wgml_tensor_free(o);
    wgml_tensor_free(oi);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"dequantize_every_type", t_dequantize_all},
        {"get_rows_quantised", t_get_rows_quant},
        {"set_rows_q8_0_q4_0", t_set_rows_quant},
        {"copy_rows", t_copy_rows},
        {"invalid_calls", t_errors},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
