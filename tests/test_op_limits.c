/* Messages of operations that hit the storage-binding window, run on a
 * context made with WGML_MAX_BINDING=4096 (whatever mode ctest runs this
 * program in): each must be WGML_ERR_LIMIT with a message that carries its
 * op's prefix exactly once (the split paths used to add "wgml_top_k: : "
 * once per halving), names the active window (4096 bytes, from
 * WGML_MAX_BINDING, not the device's maxStorageBufferBindingSize) and
 * says how many bytes did not fit. */
#include "op_harness.h"

#define WINDOW 4096

static wgml_ctx *small; /* WGML_MAX_BINDING = WINDOW */

static int count(const char *s, const char *sub)
{
    int n = 0;
    for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub))
        n++;
    return n;
}

/* st and the message of a call that overflowed the window by `bytes`. */
static void expect_limit(const char *what, wgml_status st, const char *prefix, uint64_t bytes)
{
    const char *m = wgml_last_error();
    char spans[64], win[96];
    snprintf(spans, sizeof spans, "spans %llu bytes", (unsigned long long)bytes);
    snprintf(win, sizeof win, "%d-byte storage binding window (WGML_MAX_BINDING)", WINDOW);
    printf("    %s: %s\n", what, m);
    CHECK(st == WGML_ERR_LIMIT, "%s: got %s: %s", what, wgml_status_name(st), m);
    CHECK(strncmp(m, prefix, strlen(prefix)) == 0 && count(m, prefix) == 1,
          "%s: message does not carry '%s' exactly once, at its start: %s", what, prefix, m);
    CHECK(!strstr(m, ": :"), "%s: an empty prefix in: %s", what, m);
    CHECK(strstr(m, win), "%s: message does not name the window: %s", what, m);
    CHECK(strstr(m, spans), "%s: message does not say what exceeded the window (%s): %s", what, spans, m);
}

/* A tensor of `shape` on the small-window context. */
static wgml_tensor *mk(wgml_dtype dt, int ndim, const int64_t *shape)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(small, dt, ndim, shape, &t));
    return t;
}

/* x = transpose of [256, 4] f32: rows of 256 elements with stride 4, each
 * spanning 1021 elements (4084 bytes) of the 4096-byte window, which
 * leaves less (wg_window_cap): row ops split down to one row and fail. */
static void t_strided_rows(void)
{
    const int64_t bs[2] = {256, 4}, os[2] = {4, 256}, o4[2] = {4, 4}, rows[1] = {4};
    wgml_tensor *b = mk(WGML_F32, 2, bs), *x = NULL, *idx = mk(WGML_I32, 2, os), *cs = mk(WGML_F32, 2, os);
    wgml_tensor *kv = mk(WGML_F32, 2, o4), *ki = mk(WGML_I32, 2, o4), *tok = mk(WGML_I32, 1, rows);
    CHECK_OK(wgml_view_transpose(b, 0, 1, &x));
    if (!x || !idx || !cs || !kv || !ki || !tok)
        return;
    expect_limit("top_k", wgml_top_k(x, 4, kv, ki), "wgml_top_k: ", 4084);
    expect_limit("argsort", wgml_argsort(x, 0, idx), "wgml_argsort: ", 4084);
    expect_limit("cumsum", wgml_cumsum(x, 1, 0, cs), "wgml_cumsum: ", 4084);
    wgml_sample_params sp = {1.0f, 0, 1.0f, 0.0f, 7};
    expect_limit("sample", wgml_sample(x, &sp, tok), "wgml_sample: ", 4084);
    wgml_tensor *all[] = {b, x, idx, cs, kv, ki, tok};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        wgml_tensor_free(all[i]);
}

/* Contiguous rows of 2048 f32 (8192 bytes): top_k's (key, index) pairs,
 * softmax and RMS norm rows, a rope row, an elementwise row. */
static void t_long_rows(void)
{
    const int64_t s2[2] = {2, 2048}, s3[3] = {1, 1, 2048}, o2[2] = {2, 2}, one[1] = {1};
    wgml_tensor *x = mk(WGML_F32, 2, s2), *o = mk(WGML_F32, 2, s2), *kv = mk(WGML_F32, 2, o2);
    wgml_tensor *r = mk(WGML_F32, 3, s3), *ro = mk(WGML_F32, 3, s3), *pos = mk(WGML_I32, 1, one);
    if (!x || !o || !kv || !r || !ro || !pos)
        return;
    expect_limit("top_k pairs", wgml_top_k(x, 2, kv, NULL), "wgml_top_k: ", 2048 * 8);
    expect_limit("softmax", wgml_softmax(x, NULL, NULL, NULL, o), "kernel '", 8192);
    wgml_norm_params np = {WGML_RMS_NORM, 1e-5f, 0, NULL, NULL, NULL, NULL, NULL, NULL};
    expect_limit("rms_norm", wgml_norm(x, &np, o), "kernel '", 8192);
    wgml_rope_params rp = {WGML_ROPE_NORMAL, 2048, 10000.0f, 1.0f, 0, 1.0f, 32, 1, 0, {0}, NULL};
    expect_limit("rope", wgml_rope(r, pos, &rp, ro), "wgml_rope: ", 8192);
    expect_limit("unary", wgml_unary(WGML_ABS, x, o, 0, 0), "kernel '", 8192);
    wgml_tensor *all[] = {x, o, kv, r, ro, pos};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        wgml_tensor_free(all[i]);
}

/* A q8_0 table of 200 x 32 (6800 bytes) must fit one binding. */
static void t_quant_table(void)
{
    const int64_t ts[2] = {200, 32}, n[1] = {3}, os[2] = {3, 32};
    wgml_tensor *q = mk(WGML_Q8_0, 2, ts), *idx = mk(WGML_I32, 1, n), *o = mk(WGML_F32, 2, os);
    if (!q || !idx || !o)
        return;
    expect_limit("get_rows q8_0", wgml_get_rows(q, idx, o), "wgml_get_rows: ", 6800);
    expect_limit("embedding q8_0", wgml_embedding(q, idx, o), "wgml_embedding: ", 6800);
    wgml_tensor_free(q);
    wgml_tensor_free(idx);
    wgml_tensor_free(o);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    const char *prev = getenv("WGML_MAX_BINDING");
    char *saved = prev ? strdup(prev) : NULL;
    char w[16];
    snprintf(w, sizeof w, "%d", WINDOW);
    setenv("WGML_MAX_BINDING", w, 1); /* read once, when a context is made */
    wgml_status st = wgml_ctx_create(NULL, &small);
    if (saved)
        setenv("WGML_MAX_BINDING", saved, 1);
    else
        unsetenv("WGML_MAX_BINDING");
    free(saved);
    if (st != WGML_OK) {
        printf("cannot create a %d-byte-window context: %s\n0 passed, 1 failed\n", WINDOW, wgml_last_error());
        return 1;
    }
    static const t_case cases[] = {
        {"strided_rows_split_to_one_row", t_strided_rows},
        {"long_rows", t_long_rows},
        {"quantised_table", t_quant_table},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(small);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
