/* Command recordings (src/gpu/record.c): real ops recorded instead of run,
 * replayed on the inputs' contents at replay time and matching the eager
 * results bit for bit; commands that are not dispatches refused while
 * recording. */
#include "gpu/runtime.h"
#include "harness.h"

static wgml_ctx *ctx;

enum { ROWS = 8, COLS = 128, N = ROWS * COLS };
static const int64_t SHAPE[2] = {ROWS, COLS};
static const int64_t SUM_SHAPE[2] = {ROWS, 1};
#define SENTINEL (-7.0)

/* The outputs of one run of the sequence. */
enum { O_ADD, O_SCALE, O_SOFTMAX, O_COPY, O_SUM, O_FRESH, N_OUT };

typedef struct outs {
    wgml_tensor *t[N_OUT];
} outs;

static wgml_tensor *tensor(const int64_t *shape)
{
    wgml_tensor *t = NULL;
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 2, shape, &t));
    return t;
}

static outs outs_new(void)
{
    outs o;
    for (int i = 0; i < N_OUT; i++)
        o.t[i] = tensor(i == O_SUM ? SUM_SHAPE : SHAPE);
    return o;
}

static void outs_free(outs *o)
{
    for (int i = 0; i < N_OUT; i++)
        wgml_tensor_free(o->t[i]);
}

static void upload_random(wgml_tensor *t)
{
    float h[N];
    for (int i = 0; i < N; i++)
        h[i] = (float)((double)(t_rand() >> 11) / 9007199254740992.0 * 4.0 - 2.0);
    CHECK_OK(wgml_tensor_upload(t, h, sizeof h));
}

/* The sequence: elementwise, a row op, a copy, a reduction, and a tensor
 * created mid-sequence and accumulated into.  Every step writes only into
 * o (and the mid-sequence tensor). */
static wgml_status run_ops(wgml_tensor *a, wgml_tensor *b, const outs *o)
{
    wgml_status st = wgml_binary(WGML_ADD, a, b, o->t[O_ADD]);
    if (st == WGML_OK)
        st = wgml_unary(WGML_SCALE, o->t[O_ADD], o->t[O_SCALE], 0.5f, 1.0f);
    if (st == WGML_OK)
        st = wgml_softmax(o->t[O_SCALE], NULL, NULL, NULL, o->t[O_SOFTMAX]);
    if (st == WGML_OK)
        st = wgml_copy(o->t[O_SOFTMAX], o->t[O_COPY]);
    if (st == WGML_OK)
        st = wgml_reduce(WGML_SUM, o->t[O_SCALE], 2u, 0.0f, o->t[O_SUM]);
    /* Created zeroed here: each replay must find it zeroed again, or the
     * in-place add below would accumulate a over the replays. */
    wgml_tensor *fresh = NULL;
    if (st == WGML_OK)
        st = wgml_tensor_new(ctx, WGML_F32, 2, SHAPE, &fresh);
    if (st == WGML_OK)
        st = wgml_binary(WGML_ADD, fresh, a, fresh);
    if (st == WGML_OK)
        st = wgml_copy(fresh, o->t[O_FRESH]);
    wgml_tensor_free(fresh);
    return st;
}

static void fill_sentinel(const outs *o)
{
    for (int i = 0; i < N_OUT; i++)
        CHECK_OK(wgml_fill(o->t[i], SENTINEL));
    CHECK_OK(wgml_ctx_sync(ctx));
}

/* Bitwise comparison of every output (same kernels on the same inputs). */
static int compare(const outs *got, const outs *want, const char *what)
{
    static float g[N], w[N];
    int bad = 0;
    for (int i = 0; i < N_OUT; i++) {
        uint64_t bytes = wgml_tensor_nbytes(want->t[i]);
        CHECK_OK(wgml_tensor_download(got->t[i], g, bytes));
        CHECK_OK(wgml_tensor_download(want->t[i], w, bytes));
        if (memcmp(g, w, bytes) != 0 && bad++ < 3)
            printf("    %s: output %d differs (got %g, want %g at 0)\n", what, i, g[0], w[0]);
    }
    return bad;
}

static int all_sentinel(const outs *o)
{
    static float g[N];
    int bad = 0;
    for (int i = 0; i < N_OUT; i++) {
        uint64_t bytes = wgml_tensor_nbytes(o->t[i]);
        CHECK_OK(wgml_tensor_download(o->t[i], g, bytes));
        for (uint64_t j = 0; j < bytes / 4; j++)
            bad += g[j] != (float)SENTINEL;
    }
    return bad;
}

static void t_record_replay(void)
{
    wgml_tensor *a = tensor(SHAPE), *b = tensor(SHAPE);
    outs want = outs_new(), got = outs_new();
    if (!a || !b)
        return;
    upload_random(a);
    upload_random(b);
    CHECK_OK(run_ops(a, b, &want)); /* eager reference */
    fill_sentinel(&got);

    wg_recording r;
    wgml_ctx_stats s0, s1;
    wgml_ctx_stats_get(ctx, &s0);
    CHECK_OK(wg_recorder_begin(ctx, &r));
    CHECK(wg_recording_active(ctx), "recorder not active");
    CHECK_OK(run_ops(a, b, &got));
    CHECK_OK(wg_recorder_end(ctx));
    wgml_ctx_stats_get(ctx, &s1);
    CHECK(!wg_recording_active(ctx), "recorder still active");
    CHECK(r.n >= 8, "only %zu records", r.n);
    /* (a buffer taken from the pool is zeroed in the stream at once) */
    CHECK(s1.dispatches - s0.dispatches == s1.buffers_reused - s0.buffers_reused,
          "%llu dispatches ran while recording", (unsigned long long)(s1.dispatches - s0.dispatches));
    CHECK_OK(wgml_ctx_sync(ctx));
    int untouched = all_sentinel(&got);
    CHECK(untouched == 0, "%d output elements changed while recording", untouched);

    for (int rep = 0; rep < 3; rep++) {
        char what[32];
        snprintf(what, sizeof what, "replay %d", rep);
        CHECK_OK(wg_recording_replay(ctx, &r));
        CHECK_OK(wgml_ctx_sync(ctx));
        CHECK(compare(&got, &want, what) == 0, "%s differs from the eager run", what);
        fill_sentinel(&got);
    }
    wgml_ctx_stats_get(ctx, &s0);
    /* New input contents: the replay reads them, as an eager run would. */
    upload_random(a);
    upload_random(b);
    CHECK_OK(run_ops(a, b, &want));
    CHECK_OK(wg_recording_replay(ctx, &r));
    CHECK(compare(&got, &want, "replay on new inputs") == 0, "replay on new inputs differs from the eager run");
    wgml_ctx_stats_get(ctx, &s1);
    CHECK(s1.pipelines_compiled == s0.pipelines_compiled, "replays compiled %llu pipelines",
          (unsigned long long)(s1.pipelines_compiled - s0.pipelines_compiled));

    /* Replaying while recording appends the records to the new recording. */
    wg_recording r2;
    CHECK_OK(wg_recorder_begin(ctx, &r2));
    CHECK(wg_recording_replay(ctx, &r2) == WGML_ERR_INVALID_ARG, "replaying the recording being made was accepted");
    CHECK_OK(wg_recording_replay(ctx, &r));
    CHECK_OK(wg_recorder_end(ctx));
    CHECK(r2.n == r.n, "nested replay recorded %zu of %zu records", r2.n, r.n);
    wg_recording_free(&r2);

    wg_recording_free(&r);
    CHECK(r.n == 0 && r.recs == NULL, "free left records");
    outs_free(&want);
    outs_free(&got);
    wgml_tensor_free(a);
    wgml_tensor_free(b);
}

static void expect_refused(wgml_status st, const char *what)
{
    CHECK(st == WGML_ERR_UNSUPPORTED, "%s while recording: got %s", what, wgml_status_name(st));
    CHECK(strstr(wgml_last_error(), "cannot be recorded") != NULL, "%s: message '%s'", what, wgml_last_error());
}

/* Uploads, downloads and syncs while recording fail
 * with a clear status instead of running eagerly out of order. */
static void t_refused_while_recording(void)
{
    int64_t rows = 16, tshape[2] = {16, 4}, ishape[1] = {3}, oshape[2] = {3, 4};
    wgml_tensor *tab = NULL, *idx = NULL, *out = NULL;
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 2, tshape, &tab));
    CHECK_OK(wgml_tensor_new(ctx, WGML_I32, 1, ishape, &idx));
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 2, oshape, &out));
    if (!tab || !idx || !out)
        return;
    int32_t ids[3] = {2, 0, (int32_t)rows - 1};
    float host[64] = {0};
    CHECK_OK(wgml_tensor_upload(idx, ids, sizeof ids));
    CHECK_OK(wgml_get_rows(tab, idx, out));
    wgml_buffer *buf = NULL;
    CHECK_OK(wgml_buffer_create(ctx, 64, &buf));

    wg_recording r, r2;
    CHECK_OK(wg_recorder_begin(ctx, &r));
    CHECK(wg_recorder_begin(ctx, &r2) == WGML_ERR_UNSUPPORTED, "a second recorder was accepted");
    expect_refused(wgml_tensor_upload(tab, host, wgml_tensor_nbytes(tab)), "wgml_tensor_upload");
    expect_refused(wgml_tensor_download(tab, host, wgml_tensor_nbytes(tab)), "wgml_tensor_download");
    expect_refused(wgml_buffer_write(buf, 0, host, 64), "wgml_buffer_write");
    expect_refused(wgml_buffer_read(buf, 0, host, 64), "wgml_buffer_read");
    expect_refused(wgml_ctx_sync(ctx), "wgml_ctx_sync");
    expect_refused(wgml_ctx_flush(ctx), "wgml_ctx_flush");
    CHECK(r.n == 0, "refused calls left %zu records", r.n);
    CHECK_OK(wgml_buffer_fill(buf, 0, 64, 0x01020304u)); /* a kernel: recorded */
    CHECK(r.n == 1, "%zu records after a fill", r.n);
    CHECK_OK(wg_recorder_end(ctx));
    CHECK(wg_recorder_end(ctx) == WGML_ERR_INVALID_ARG, "ending twice was accepted");

    /* After the recording everything works again. */
    uint32_t w[16] = {0};
    CHECK_OK(wgml_buffer_read(buf, 0, w, sizeof w));
    CHECK(w[0] == 0, "the recorded fill ran: %08x", w[0]);
    CHECK_OK(wg_recording_replay(ctx, &r));
    CHECK_OK(wgml_buffer_read(buf, 0, w, sizeof w));
    CHECK(w[0] == 0x01020304u && w[15] == 0x01020304u, "the replayed fill wrote %08x", w[0]);
    CHECK_OK(wgml_get_rows(tab, idx, out));
    wg_recording_free(&r);
    wgml_buffer_destroy(buf);
    wgml_tensor_free(tab);
    wgml_tensor_free(idx);
    wgml_tensor_free(out);
}

/* Index ops record like any other (their indices are checked on the GPU):
 * a get_rows and a set_rows with repeated indices recorded once, replayed
 * on new indices, give the new rows; a replay with a bad index writes
 * nothing and the next sync reports WGML_ERR_INDEX once. */
static void t_index_ops_replay(void)
{
    int64_t tshape[2] = {16, 4}, ishape[1] = {3}, oshape[2] = {3, 4};
    wgml_tensor *tab = NULL, *idx = NULL, *out = NULL, *dst = NULL;
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 2, tshape, &tab));
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 2, tshape, &dst));
    CHECK_OK(wgml_tensor_new(ctx, WGML_I32, 1, ishape, &idx));
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 2, oshape, &out));
    if (!tab || !idx || !out || !dst)
        return;
    float t[64], o[12], d[64];
    for (int i = 0; i < 64; i++)
        t[i] = (float)i;
    CHECK_OK(wgml_tensor_upload(tab, t, sizeof t));
    int32_t ids[3] = {0, 0, 0};
    CHECK_OK(wgml_tensor_upload(idx, ids, sizeof ids));
    wg_recording r;
    CHECK_OK(wg_recorder_begin(ctx, &r));
    CHECK_OK(wgml_get_rows(tab, idx, out));
    CHECK_OK(wgml_set_rows(dst, idx, out)); /* repeated indices: the last wins */
    CHECK_OK(wg_recorder_end(ctx));
    const int32_t sets[3][3] = {{5, 1, 15}, {7, 7, 2}, {3, 16, 4}};
    for (int k = 0; k < 3; k++) {
        CHECK_OK(wgml_tensor_upload(idx, sets[k], sizeof sets[k]));
        CHECK_OK(wgml_fill(out, -1.0));
        CHECK_OK(wgml_fill(dst, -1.0));
        wgml_ctx_stats s0, s1;
        CHECK_OK(wgml_ctx_stats_get(ctx, &s0));
        CHECK_OK(wg_recording_replay(ctx, &r));
        CHECK_OK(wgml_ctx_stats_get(ctx, &s1));
        CHECK(s1.waits == s0.waits, "replay %d waited", k);
        wgml_status st = wgml_ctx_sync(ctx);
        bool bad = k == 2;
        CHECK(st == (bad ? WGML_ERR_INDEX : WGML_OK), "replay %d: sync %s: %s", k, wgml_status_name(st),
              wgml_last_error());
        if (bad)
            CHECK(strstr(wgml_last_error(), "wgml_get_rows: idx[1] = 16") != NULL, "message: %s", wgml_last_error());
        CHECK_OK(wgml_ctx_sync(ctx));
        CHECK_OK(wgml_tensor_download(out, o, sizeof o));
        CHECK_OK(wgml_tensor_download(dst, d, sizeof d));
        int wrong = 0;
        for (int i = 0; i < 12; i++)
            wrong += o[i] != (bad ? -1.0f : t[sets[k][i / 4] * 4 + i % 4]);
        for (int row = 0; row < 16; row++) {
            int last = -1; /* the last position writing this row */
            for (int i = 0; i < 3 && !bad; i++)
                last = sets[k][i] == row ? i : last;
            for (int c = 0; c < 4; c++)
                wrong += d[row * 4 + c] != (last < 0 ? -1.0f : t[sets[k][last] * 4 + c]);
        }
        CHECK(wrong == 0, "replay %d: %d wrong values", k, wrong);
    }
    wg_recording_free(&r);
    wgml_tensor_free(tab);
    wgml_tensor_free(dst);
    wgml_tensor_free(idx);
    wgml_tensor_free(out);
}

/* The recording keeps the buffers it binds: destroying the caller's
 * handle leaves the recording able to replay, and so does the temporary
 * buffer an overlapping copy bounces through (made and dropped while
 * recording). */
static void t_recording_holds_buffers(void)
{
    wgml_buffer *b = NULL, *keep = NULL;
    CHECK_OK(wgml_buffer_create(ctx, 256, &b));
    CHECK_OK(wgml_buffer_create(ctx, 256, &keep));
    if (!b || !keep)
        return;
    wg_recording r;
    CHECK_OK(wg_recorder_begin(ctx, &r));
    CHECK_OK(wgml_buffer_fill(b, 0, 128, 0x11111111u));
    CHECK_OK(wgml_buffer_fill(b, 128, 128, 0x22222222u));
    CHECK_OK(wgml_buffer_copy(keep, 0, b, 0, 256));
    CHECK_OK(wgml_buffer_copy(keep, 4, keep, 0, 252)); /* overlapping: words move up by one */
    CHECK_OK(wg_recorder_end(ctx));
    wgml_buffer_destroy(b);
    for (int rep = 0; rep < 2; rep++) {
        CHECK_OK(wgml_buffer_fill(keep, 0, 256, 0));
        CHECK_OK(wg_recording_replay(ctx, &r));
        uint32_t w[64] = {0};
        CHECK_OK(wgml_buffer_read(keep, 0, w, sizeof w));
        CHECK(w[0] == 0x11111111u && w[32] == 0x11111111u && w[33] == 0x22222222u && w[63] == 0x22222222u,
              "replay %d: words 0, 32, 33, 63 = %08x %08x %08x %08x", rep, w[0], w[32], w[33], w[63]);
    }
    wg_recording_free(&r);
    wgml_buffer_destroy(keep);
}

/* A buffer made while recording is zeroed for eager use after the
 * recording (even one from the pool, whose memory held other data) and
 * again at each replay. */
static void t_buffer_made_while_recording(void)
{
    wgml_buffer *old = NULL, *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, 256, &old));
    if (!old)
        return;
    CHECK_OK(wgml_buffer_fill(old, 0, 256, 0xffffffffu));
    wgml_buffer_destroy(old); /* to the pool */
    wgml_ctx_stats s0, s1;
    wgml_ctx_stats_get(ctx, &s0);
    wg_recording r;
    CHECK_OK(wg_recorder_begin(ctx, &r));
    CHECK_OK(wgml_buffer_create(ctx, 256, &b));
    CHECK_OK(wg_recorder_end(ctx));
    wgml_ctx_stats_get(ctx, &s1);
    if (s1.buffers_reused == s0.buffers_reused) /* WGML_POOL_MB=0 */
        printf("    the pool is off: a fresh buffer was made instead\n");
    uint32_t w[64];
    memset(w, 0xee, sizeof w);
    if (b)
        CHECK_OK(wgml_buffer_read(b, 0, w, sizeof w));
    CHECK(w[0] == 0 && w[63] == 0, "pooled buffer made while recording holds %08x %08x", w[0], w[63]);
    if (b) {
        CHECK_OK(wgml_buffer_fill(b, 0, 256, 0xababababu));
        CHECK_OK(wg_recording_replay(ctx, &r));
        CHECK_OK(wgml_buffer_read(b, 0, w, sizeof w));
    }
    CHECK(w[0] == 0 && w[63] == 0, "replay did not zero the buffer: %08x %08x", w[0], w[63]);
    wgml_buffer_destroy(b);
    wg_recording_free(&r);
}

int main(int argc, char **argv)
{
    if (t_open_ctx(&ctx))
        return 1;
    static const t_case cases[] = {
        {"record_then_replay_matches_eager", t_record_replay},
        {"non_dispatch_commands_refused", t_refused_while_recording},
        {"index_ops_record_and_replay", t_index_ops_replay},
        {"recording_holds_its_buffers", t_recording_holds_buffers},
        {"buffer_made_while_recording_is_zeroed", t_buffer_made_while_recording},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(ctx);
    return rc;
}
