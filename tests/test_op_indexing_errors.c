/* Bad indices and the other work index ops do on the GPU.  No index op
 * reads device data on the host: a bad index makes the call write
 * nothing, and the next sync (wgml_ctx_sync, or any read) returns
 * WGML_ERR_INDEX naming the op, the position, the value and the limit.
 * Cases: every op with too-large, negative and INT32_MAX indices (the
 * destination unchanged); a bad op in the middle of a batch (the others
 * run, one report, then OK); no host wait in an index op; set_rows'
 * duplicates (the last wins) within and across binding windows and
 * batches; quantised tables; indices written on the GPU. */
#include "op_harness.h"
#include "ops/indexing.h"

/* The call returned OK and the next sync reports WGML_ERR_INDEX with a
 * message naming op, the position and the value; the sync after is OK. */
static bool reported(wgml_status call, const char *op, const char *pos, int32_t value)
{
    char v[32];
    snprintf(v, sizeof v, "= %d ", (int)value);
    wgml_status st = wgml_ctx_sync(t_ctx);
    const char *m = wgml_last_error();
    bool ok = call == WGML_OK && st == WGML_ERR_INDEX && strstr(m, op) && strstr(m, pos) && strstr(m, v) &&
              strstr(m, "[0, ");
    if (!ok)
        printf("    call %s, sync %s: %s\n", wgml_status_name(call), wgml_status_name(st), m);
    return ok && wgml_ctx_sync(t_ctx) == WGML_OK;
}

/* ------------------------------------------------------------ bad indices */

static bool unchanged(const wgml_tensor *t, const void *before)
{
    size_t n = wgml_tensor_nbytes(t);
    void *now = malloc(n + 1);
    CHECK_OK(wgml_tensor_download(t, now, n));
    bool same = memcmp(now, before, n) == 0;
    free(now);
    return same;
}

static void t_bad_indices(void)
{
    const int64_t ss[2] = {6, 4}, is[1] = {5}, os[2] = {5, 4};
    const int32_t bad_vals[3] = {6, -1, 2147483647};
    for (int b = 0; b < 3; b++) {
        int32_t iv[5] = {0, 5, 3, 3, 1};
        iv[3] = bad_vals[b];
        t_tensor src = t_random(WGML_F32, 2, ss, -5, 5), rows = t_random(WGML_F32, 2, os, -5, 5);
        wgml_tensor *idx = t_idx(1, is, iv), *out = t_poisoned(WGML_F32, 2, os);
        uint8_t *poison = malloc(wgml_tensor_nbytes(out));
        memset(poison, 0xa5, wgml_tensor_nbytes(out));
        CHECK(reported(wgml_get_rows(src.t, idx, out), "wgml_get_rows", "idx[3]", iv[3]), "get_rows %d: %s", iv[3],
              wgml_last_error());
        CHECK(unchanged(out, poison), "get_rows wrote out");
        CHECK(reported(wgml_index_select(src.t, 0, idx, out), "wgml_index_select", "idx[3]", iv[3]), "index_select %d",
              iv[3]);
        CHECK(reported(wgml_embedding(src.t, idx, out), "wgml_embedding", "ids[3]", iv[3]), "embedding %d", iv[3]);
        CHECK(unchanged(out, poison), "index_select/embedding wrote out");
        CHECK(reported(wgml_set_rows(src.t, idx, rows.t), "wgml_set_rows", "idx[3]", iv[3]), "set_rows %d", iv[3]);
        CHECK(unchanged(src.t, src.host), "set_rows changed dst");
        /* gather / scatter_add along axis 0 with the same values as a [5, 1] idx */
        const int64_t g[2] = {5, 1}, gs[2] = {5, 4};
        wgml_tensor *gi = t_idx(2, g, iv), *go = t_poisoned(WGML_F32, 2, g);
        CHECK(reported(wgml_gather(src.t, 0, gi, go), "wgml_gather", "idx[3, 0]", iv[3]), "gather %d", iv[3]);
        CHECK(unchanged(go, poison), "gather wrote out");
        t_tensor add = t_random(WGML_F32, 2, gs, -5, 5);
        CHECK(reported(wgml_scatter_add(src.t, 0, gi, add.t), "wgml_scatter_add", "idx[3, 0]", iv[3]), "scatter_add %d",
              iv[3]);
        CHECK(unchanged(src.t, src.host), "scatter_add changed dst");
        const int64_t ohs[2] = {5, 6};
        wgml_tensor *oh = t_poisoned(WGML_F32, 2, ohs);
        uint8_t *p2 = malloc(wgml_tensor_nbytes(oh));
        memset(p2, 0xa5, wgml_tensor_nbytes(oh));
        CHECK(reported(wgml_one_hot(idx, oh), "wgml_one_hot", "idx[3]", iv[3]), "one_hot %d", iv[3]);
        CHECK(unchanged(oh, p2), "one_hot wrote out"); /* 6 classes: 5 is valid, 6 / -1 / 2^31-1 are not */
        free(p2);
        wgml_tensor_free(oh);
        t_free(&add);
        wgml_tensor_free(go);
        wgml_tensor_free(gi);
        free(poison);
        wgml_tensor_free(out);
        wgml_tensor_free(idx);
        t_free(&src);
        t_free(&rows);
    }
    /* batched: index 3 is valid for 4 rows but not in [2, 3]-shaped idx with rows 3 */
    const int64_t bs[3] = {2, 3, 4}, bi[2] = {2, 3}, bo[3] = {2, 3, 4};
    int32_t biv[6] = {0, 1, 2, 2, 3, 0};
    t_tensor src = t_random(WGML_F32, 3, bs, -5, 5);
    wgml_tensor *idx = t_idx(2, bi, biv), *out = t_poisoned(WGML_F32, 3, bo);
    CHECK(reported(wgml_get_rows(src.t, idx, out), "wgml_get_rows", "idx[1, 1]", 3), "batched index 3 of 3 rows: %s",
          wgml_last_error());
    wgml_tensor_free(out);
    wgml_tensor_free(idx);
    t_free(&src);
}

/* Indices are read where they are, when the op runs: a new upload or a
 * GPU write (here a fill) is seen by the next call. */
static void t_gpu_written(void)
{
    const int64_t ts[2] = {6, 5}, n = 4, os[2] = {4, 5};
    t_tensor tab = t_random(WGML_F32, 2, ts, -5, 5);
    wgml_tensor *idx = NULL, *out = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_I32, 1, &n, &idx));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, os, &out));
    if (!idx || !out || !tab.t)
        return;
    for (int round = 0; round < 3; round++) {
        int32_t ids[4] = {round, 5 - round, 2, round + 1};
        CHECK_OK(wgml_tensor_upload(idx, ids, sizeof ids));
        CHECK_OK(wgml_get_rows(tab.t, idx, out));
        double *got = t_values(out);
        int bad = 0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++)
                bad += got[i * 5 + j] != tab.val[ids[i] * 5 + j];
        CHECK(bad == 0, "round %d: %d wrong", round, bad);
        free(got);
    }
    CHECK_OK(wgml_fill(idx, 9)); /* a GPU write makes every index out of range */
    CHECK(reported(wgml_get_rows(tab.t, idx, out), "wgml_get_rows", "idx[0]", 9), "indices written on the GPU: %s",
          wgml_last_error());
    wgml_tensor_free(idx);
    wgml_tensor_free(out);
    t_free(&tab);
}

/* A bad index op between good ops of one batch: the others produce their
 * results, the bad one writes nothing, the sync reports it once and the
 * next sync is clean.  None of these ops waits for the GPU. */
static void t_batch(void)
{
    const int64_t ts[2] = {8, 4}, n = 3, os[2] = {3, 4};
    const int32_t good[3] = {1, 2, 7}, badv[3] = {1, 9, 2};
    t_tensor tab = t_random(WGML_F32, 2, ts, -5, 5);
    wgml_tensor *gi = t_idx(1, &n, good), *bi = t_idx(1, &n, badv), *o1 = t_poisoned(WGML_F32, 2, os),
                *o2 = t_poisoned(WGML_F32, 2, os), *o3 = t_poisoned(WGML_F32, 2, os), *f = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_F32, 2, os, &f));
    CHECK_OK(wgml_ctx_sync(t_ctx));
    wgml_ctx_stats s0, s1;
    CHECK_OK(wgml_ctx_stats_get(t_ctx, &s0));
    CHECK_OK(wgml_fill(f, 2.0));
    CHECK_OK(wgml_get_rows(tab.t, gi, o1));
    CHECK_OK(wgml_get_rows(tab.t, bi, o2));
    CHECK_OK(wgml_set_rows(tab.t, bi, o1)); /* a second bad op: still one report, the first named */
    CHECK_OK(wgml_get_rows(tab.t, gi, o3));
    CHECK_OK(wgml_ctx_stats_get(t_ctx, &s1));
    CHECK(s1.waits == s0.waits, "index ops waited for the GPU %llu times", (unsigned long long)(s1.waits - s0.waits));
    wgml_status st = wgml_ctx_sync(t_ctx);
    CHECK(st == WGML_ERR_INDEX && strstr(wgml_last_error(), "wgml_get_rows: idx[1] = 9 is out of range"),
          "sync: %s: %s", wgml_status_name(st), wgml_last_error());
    CHECK_OK(wgml_ctx_sync(t_ctx));
    double *g1 = t_values(o1), *g3 = t_values(o3), *gf = t_values(f), *t2 = t_values(tab.t);
    int bad = 0;
    for (int i = 0; i < 12; i++)
        bad += g1[i] != tab.val[good[i / 4] * 4 + i % 4] || g3[i] != g1[i] || gf[i] != 2.0;
    for (int i = 0; i < 32; i++)
        bad += t2[i] != tab.val[i]; /* the bad set_rows left the table alone */
    CHECK(bad == 0, "%d wrong values around the bad op", bad);
    uint8_t poison[48];
    memset(poison, 0xa5, sizeof poison);
    CHECK(unchanged(o2, poison), "the bad get_rows wrote out");
    free(g1), free(g3), free(gf), free(t2);
    wgml_tensor_free(f), wgml_tensor_free(o1), wgml_tensor_free(o2), wgml_tensor_free(o3);
    wgml_tensor_free(gi), wgml_tensor_free(bi);
    t_free(&tab);
}

/* set_rows with repeated indices: the last occurrence wins, also when the
 * rows lie in different binding windows (WGML_MAX_BINDING=65536 splits
 * these tables into several passes) and per batch. */
static void t_set_rows_dups(void)
{
    const int64_t ds[3] = {2, 40, 300}, is[2] = {2, 6}, ss[3] = {2, 6, 300};
    const int32_t iv[12] = {35, 2, 35, 2, 20, 35, /* batch 1: */ 0, 39, 39, 0, 39, 5};
    for (int batched = 0; batched < 2; batched++) {
        int nd = batched ? 3 : 2;
        const int64_t *dsh = batched ? ds : ds + 1, *ssh = batched ? ss : ss + 1, *ish = batched ? is : is + 1;
        t_tensor dst = t_random(WGML_F32, nd, dsh, -5, 5), src = t_random(WGML_F32, nd, ssh, -5, 5);
        wgml_tensor *idx = t_idx(nd - 1, ish, iv);
        CHECK_OK(wgml_set_rows(dst.t, idx, src.t));
        wg_set_rows_ref(nd, dsh, dst.val, nd - 1, ish, iv, src.val);
        double *got = t_values(dst.t);
        int64_t bad = 0;
        for (int64_t i = 0; i < dst.n; i++)
            bad += got[i] != dst.val[i];
        CHECK(bad == 0, "set_rows dups (%s): %lld wrong", batched ? "batched" : "1-D", (long long)bad);
        free(got);
        wgml_tensor_free(idx);
        t_free(&dst), t_free(&src);
    }
}

/* One index per batch and a writing pass of one workgroup (a decode
 * step's KV-cache write): the writing workgroup checks the indices itself
 * (indexing.c, set_rows_selfcheck; no CHECK dispatch).  Good indices
 * write as the reference; a bad one (too large, negative) writes nothing,
 * is reported naming its position, and a good op after it still runs. */
static void t_set_rows_one(void)
{
    const int64_t ds[3] = {3, 7, 5}, ss[3] = {3, 1, 5}, is[2] = {3, 1};
    const int32_t good[3] = {6, 0, 2};
    for (int batched = 0; batched < 2; batched++) {
        int nd = batched ? 3 : 2;
        const int64_t *dsh = batched ? ds : ds + 1, *ssh = batched ? ss : ss + 1, *ish = batched ? is : is + 1;
        for (int f16 = 0; f16 < 2; f16++) { /* f32 rows into an f16 cache, as a decoder writes */
            t_tensor dst = t_random(f16 ? WGML_F16 : WGML_F32, nd, dsh, -5, 5), src = t_random(WGML_F32, nd, ssh, -5, 5);
            wgml_tensor *idx = t_idx(nd - 1, ish, good);
            size_t nb = wgml_tensor_nbytes(dst.t);
            uint8_t *before = malloc(nb);
            CHECK_OK(wgml_tensor_download(dst.t, before, nb));
            const int32_t badv[2] = {7, -1};
            for (int b = 0; b < 2; b++) {
                int32_t iv[3] = {good[0], good[1], good[2]};
                iv[batched ? 1 : 0] = badv[b];
                wgml_tensor *bi = t_idx(nd - 1, ish, iv);
                CHECK(reported(wgml_set_rows(dst.t, bi, src.t), "wgml_set_rows", batched ? "idx[1, 0]" : "idx[0]",
                               iv[batched ? 1 : 0]), "one-index set_rows %d (%s)", iv[batched ? 1 : 0],
                      batched ? "batched" : "1-D");
                CHECK(unchanged(dst.t, before), "the bad one-index set_rows wrote");
                wgml_tensor_free(bi);
            }
            CHECK_OK(wgml_set_rows(dst.t, idx, src.t));
            wg_set_rows_ref(nd, dsh, dst.val, nd - 1, ish, good, src.val);
            double *got = t_values(dst.t);
            int64_t bad = 0;
            for (int64_t i = 0; i < dst.n; i++) /* f16: the reference rounds as the store does */
                bad += f16 ? fabs(got[i] - dst.val[i]) > 1e-3 * (1 + fabs(dst.val[i])) : got[i] != dst.val[i];
            CHECK(bad == 0, "one-index set_rows (%s, %s): %lld wrong", batched ? "batched" : "1-D", f16 ? "f16" : "f32",
                  (long long)bad);
            free(got), free(before);
            wgml_tensor_free(idx);
            t_free(&dst), t_free(&src);
        }
    }
}

/* One index and a row of several workgroups (2600 elements: a joint k|v
 * cache row is 2048 for an 8B model): the CHECK pass, then the write; a
 * bad index writes nothing anywhere.  (Writing such rows in one dispatch
 * that checks its own index changed nothing on an H200's 8B decode, in
 * one workgroup or in several: bench/NOTES.md.) */
static void t_set_rows_one_long(void)
{
    const int64_t ds[2] = {5, 2600}, ss[2] = {1, 2600}, is = 1;
    t_tensor dst = t_random(WGML_F16, 2, ds, -5, 5), src = t_random(WGML_F32, 2, ss, -5, 5);
    size_t nb = wgml_tensor_nbytes(dst.t);
    uint8_t *before = malloc(nb);
    CHECK_OK(wgml_tensor_download(dst.t, before, nb));
    const int32_t badv[2] = {5, -1}, good = 3;
    for (int b = 0; b < 2; b++) {
        wgml_tensor *bi = t_idx(1, &is, &badv[b]);
        CHECK(reported(wgml_set_rows(dst.t, bi, src.t), "wgml_set_rows", "idx[0]", badv[b]),
              "long one-index set_rows %d", badv[b]);
        CHECK(unchanged(dst.t, before), "the bad long one-index set_rows wrote");
        wgml_tensor_free(bi);
    }
    wgml_tensor *idx = t_idx(1, &is, &good);
    CHECK_OK(wgml_set_rows(dst.t, idx, src.t));
    wg_set_rows_ref(2, ds, dst.val, 1, &is, &good, src.val);
    double *got = t_values(dst.t);
    int64_t bad = 0;
    for (int64_t i = 0; i < dst.n; i++)
        bad += fabs(got[i] - dst.val[i]) > 1e-3 * (1 + fabs(dst.val[i]));
    CHECK(bad == 0, "long one-index set_rows: %lld wrong", (long long)bad);
    free(got), free(before);
    wgml_tensor_free(idx);
    t_free(&dst), t_free(&src);
}

/* Quantised tables: a bad index writes nothing (get_rows' out, set_rows'
 * q8_0 dst); repeated set_rows indices: the last occurrence wins. */
static void t_quant(void)
{
    const int64_t qs[2] = {4, 64}, n3 = 3, rs[2] = {3, 64}, n2 = 2;
    wgml_tensor *q = NULL, *q2 = NULL;
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_Q8_0, 2, qs, &q));
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_Q8_0, 2, qs, &q2));
    t_tensor rows = t_random(WGML_F32, 2, rs, -5, 5);
    const int32_t dup[3] = {2, 2, 0}, last[2] = {2, 0}, badv[3] = {1, -4, 0}, badg[3] = {0, 3, 4};
    wgml_tensor *di = t_idx(1, &n3, dup), *li = t_idx(1, &n2, last), *bi = t_idx(1, &n3, badv),
                *gi = t_idx(1, &n3, badg), *sub = NULL, *out = t_poisoned(WGML_F32, 2, rs);
    if (!q || !q2 || !rows.t)
        return;
    CHECK_OK(wgml_view_slice(rows.t, 0, 1, 3, 1, &sub)); /* rows 1, 2 */
    CHECK_OK(wgml_set_rows(q, di, rows.t));
    CHECK_OK(wgml_set_rows(q2, li, sub));
    size_t nb = wgml_tensor_nbytes(q);
    uint8_t *a = malloc(nb), *b = malloc(nb);
    CHECK_OK(wgml_tensor_download(q, a, nb));
    CHECK_OK(wgml_tensor_download(q2, b, nb));
    CHECK(memcmp(a, b, nb) == 0, "q8_0 set_rows with a repeated index: the last did not win");
    CHECK(reported(wgml_set_rows(q, bi, rows.t), "wgml_set_rows", "idx[1]", -4), "q8_0 set_rows -4");
    CHECK(unchanged(q, a), "the bad q8_0 set_rows wrote");
    CHECK(reported(wgml_get_rows(q, gi, out), "wgml_get_rows", "idx[2]", 4), "q8_0 get_rows 4");
    uint8_t poison[3 * 64 * 4];
    memset(poison, 0xa5, sizeof poison);
    CHECK(unchanged(out, poison), "the bad q8_0 get_rows wrote");
    CHECK(reported(wgml_embedding(q, gi, out), "wgml_embedding", "ids[2]", 4), "q8_0 embedding 4");
    CHECK(unchanged(out, poison), "the bad q8_0 embedding wrote");
    free(a), free(b);
    wgml_tensor_free(sub), wgml_tensor_free(out), wgml_tensor_free(di), wgml_tensor_free(li);
    wgml_tensor_free(bi), wgml_tensor_free(gi), wgml_tensor_free(q), wgml_tensor_free(q2);
    t_free(&rows);
}

int main(int argc, char **argv)
{
    if (t_setup(argc, argv))
        return 1;
    static const t_case cases[] = {
        {"bad_indices_write_nothing", t_bad_indices},
        {"bad_op_in_a_batch", t_batch},
        {"set_rows_dups_windows", t_set_rows_dups},
        {"set_rows_one_index", t_set_rows_one},
        {"set_rows_one_index_long_row", t_set_rows_one_long},
        {"quantised", t_quant},
        {"gpu_written_indices", t_gpu_written},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(t_ctx);
    return rc;
}
