/* The NaN rule of the indexing family (include/wgml.h): ops that move
 * values move NaN unchanged -- bit for bit (sign and payload) when the
 * dtype stays the same, as a NaN when converted (f16/bf16 -> f32, f32 ->
 * f16/bf16); scatter_add adds, so a NaN on either side makes the sum NaN.
 * Tables hold negative quiet NaNs with payloads next to ordinary values,
 * in f32, f16 and bf16; get_rows (both its kernels), gather, index_select,
 * embedding, set_rows, scatter_add. */
#include "nan_table.h"

/* The bits of a negative quiet NaN with a payload, per dtype. */
static uint32_t nan_bits(wgml_dtype dt)
{
    return dt == WGML_F32 ? 0xffc00123u : dt == WGML_F16 ? 0xfe05u : 0xffc3u;
}

/* A [rows, cols] table whose element i is NaN (nan_bits) when i % 3 == 1,
 * else i / 4; *raw gets its bytes (caller frees). */
static wgml_tensor *nan_table(wgml_dtype dt, int64_t rows, int64_t cols, uint8_t **raw)
{
    const int64_t s[2] = {rows, cols};
    size_t e = wgml_dtype_block_bytes(dt);
    uint8_t *h = malloc((size_t)(rows * cols) * e);
    for (int64_t i = 0; i < rows * cols; i++) {
        uint32_t b = nan_bits(dt);
        if (i % 3 == 1)
            memcpy(h + (size_t)i * e, &b, e); /* little-endian: the low bytes */
        else
            wg_host_set(dt, h, (size_t)i, (double)i / 4);
    }
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, dt, 2, s, &t));
    if (t)
        CHECK_OK(wgml_tensor_upload(t, h, (uint64_t)(rows * cols) * e));
    *raw = h;
    return t;
}

/* out's element i must be table element src[i]: the same bytes when the
 * dtypes match, else NaN exactly where the source is NaN (and the value
 * otherwise). */
static void expect_moved(const char *what, const wgml_tensor *out, wgml_dtype tdt, const uint8_t *table,
                         const int64_t *src, int64_t n)
{
    size_t e = wgml_dtype_block_bytes(out->dtype);
    uint8_t *got = malloc(wgml_tensor_nbytes(out));
    CHECK_OK(wgml_tensor_download(out, got, wgml_tensor_nbytes(out)));
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *w = table + (size_t)src[i] * wgml_dtype_block_bytes(tdt);
        if (out->dtype == tdt) {
            uint32_t gb = 0, wb = 0;
            memcpy(&gb, got + (size_t)i * e, e);
            memcpy(&wb, w, e);
            if (gb != wb && bad++ < 2)
                printf("    %s [%lld]: bits 0x%x, want 0x%x\n", what, (long long)i, (unsigned)gb, (unsigned)wb);
        } else {
            double g = wg_host_get(out->dtype, got, (size_t)i), v = wg_host_get(tdt, w, 0);
            bad += isnan(v) ? !isnan(g) : g != v;
        }
    }
    CHECK(bad == 0, "%s: %d of %lld elements not moved unchanged", what, bad, (long long)n);
    free(got);
}

static void t_moves(void)
{
    const int64_t R = 6, C = 8;
    for (size_t d = 0; d < N_NAN_DTS; d++) {
        wgml_dtype dt = nan_dts[d];
        uint8_t *raw = NULL;
        wgml_tensor *tab = nan_table(dt, R, C, &raw);
        char what[64];
        /* get_rows: rows 4, 0, 4 (f32: the vec4 path; 16-bit: the generic one) */
        const int32_t rv[3] = {4, 0, 4};
        const int64_t n3 = 3, os[2] = {3, C};
        wgml_tensor *idx = t_idx(1, &n3, rv);
        int64_t src[64];
        for (int64_t i = 0; i < 3 * C; i++)
            src[i] = rv[i / C] * C + i % C;
        for (int o = 0; o < 2; o++) {
            wgml_tensor *out = t_poisoned(o ? WGML_F32 : dt, 2, os);
            CHECK_OK(wgml_get_rows(tab, idx, out));
            snprintf(what, sizeof what, "get_rows %s -> %s", wgml_dtype_name(dt), o ? "f32" : "same");
            expect_moved(what, out, dt, raw, src, 3 * C);
            CHECK_OK(wgml_embedding(tab, idx, out));
            snprintf(what, sizeof what, "embedding %s -> %s", wgml_dtype_name(dt), o ? "f32" : "same");
            expect_moved(what, out, dt, raw, src, 3 * C);
            wgml_tensor_free(out);
        }
        /* index_select along axis 1: columns 7, 1, 1 */
        const int32_t cv[3] = {7, 1, 1};
        const int64_t ss[2] = {R, 3};
        wgml_tensor *ci = t_idx(1, &n3, cv), *out = t_poisoned(dt, 2, ss);
        for (int64_t i = 0; i < R * 3; i++)
            src[i] = i / 3 * C + cv[i % 3];
        CHECK_OK(wgml_index_select(tab, 1, ci, out));
        snprintf(what, sizeof what, "index_select %s", wgml_dtype_name(dt));
        expect_moved(what, out, dt, raw, src, R * 3);
        /* gather along axis 1: out[i][j] = tab[i][g[i][j]] */
        int32_t gv[18];
        for (int i = 0; i < 18; i++)
            gv[i] = (int32_t)((i * 5 + 1) % C);
        wgml_tensor *gi = t_idx(2, ss, gv);
        for (int64_t i = 0; i < R * 3; i++)
            src[i] = i / 3 * C + gv[i];
        CHECK_OK(wgml_gather(tab, 1, gi, out));
        snprintf(what, sizeof what, "gather %s", wgml_dtype_name(dt));
        expect_moved(what, out, dt, raw, src, R * 3);
        wgml_tensor_free(gi);
        wgml_tensor_free(out);
        wgml_tensor_free(ci);
        /* set_rows from an f32 table's rows into this dtype's rows 1, 3 */
        uint8_t *fraw = NULL;
        wgml_tensor *ftab = nan_table(WGML_F32, 2, C, &fraw), *dst = t_poisoned(dt, 2, (const int64_t[2]){R, C});
        const int32_t sv[2] = {1, 3};
        const int64_t n2 = 2;
        wgml_tensor *si = t_idx(1, &n2, sv), *d1 = NULL;
        CHECK_OK(wgml_set_rows(dst, si, ftab));
        CHECK_OK(wgml_view_slice(dst, 0, 1, 4, 2, &d1));
        int64_t fs[16];
        for (int64_t i = 0; i < 2 * C; i++)
            fs[i] = i;
        snprintf(what, sizeof what, "set_rows f32 -> %s", wgml_dtype_name(dt));
        expect_moved(what, d1, WGML_F32, fraw, fs, 2 * C);
        wgml_tensor_free(d1);
        wgml_tensor_free(si);
        wgml_tensor_free(dst);
        wgml_tensor_free(ftab);
        free(fraw);
        wgml_tensor_free(idx);
        wgml_tensor_free(tab);
        free(raw);
    }
}

/* scatter_add in f32: dst[idx[i]] += src[i]; NaN in dst or in any added
 * term gives NaN, everything else its sum. */
static void t_scatter_add_nan(void)
{
    const double N = NAN;
    const double dv[4] = {1, N, 2, 3}, sv[6] = {0.5, 0.25, N, 1, 2, 4};
    const int32_t iv[6] = {0, 1, 2, 0, 3, 3};
    const double want[4] = {2.5, N, N, 9};
    const int64_t n4 = 4, n6 = 6;
    wgml_tensor *dst = t_from(WGML_F32, 1, &n4, dv), *src = t_from(WGML_F32, 1, &n6, sv), *idx = t_idx(1, &n6, iv);
    CHECK_OK(wgml_scatter_add(dst, 0, idx, src));
    t_expect("scatter_add f32 NaN", dst, want, 0);
    wgml_tensor_free(dst);
    wgml_tensor_free(src);
    wgml_tensor_free(idx);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"nan_moved_unchanged", t_moves},
        {"scatter_add_nan", t_scatter_add_nan},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
