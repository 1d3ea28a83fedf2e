/* GGUF reader: the corpus parses with the values make_gguf_corpus.py
 * wrote; hand-made corrupt files fail with the right status and a message
 * naming the field; every truncation and a few thousand fixed-seed bit
 * flips of every corpus file fail cleanly (the fuzzer's body, replayed).
 * usage: test_gguf CORPUS_DIR [case-substring]
 * Built twice: test_gguf (with the GPU upload case) and test_gguf_asan
 * (reader + tokenizer + error.c only, under ASan/UBSan). */
#include "harness.h"
#include "wgml_llm.h"
#include "gguf_exercise.h"

#include <math.h>
#include <time.h>

static const char *corpus_dir = "tests/gguf_corpus";

static const char *const corpus_files[] = {"types_v3.gguf", "align64_v2.gguf", "vocab_spm.gguf", "vocab_bpe.gguf",
                                           "vocab_bpe_llama3.gguf", "vocab_bpe_qwen2.gguf", "vocab_bpe_gpt2.gguf",
                                           "vocab_bpe_default.gguf"};
#define N_CORPUS (sizeof corpus_files / sizeof *corpus_files)

static unsigned char *slurp(const char *name, size_t *size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", corpus_dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(n > 0 ? (size_t)n : 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return p;
}

static wgml_gguf *open_corpus(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", corpus_dir, name);
    wgml_gguf *g = NULL;
    CHECK_OK(wgml_gguf_open(path, &g));
    return g;
}

static void test_types(void)
{
    wgml_gguf *g = open_corpus("types_v3.gguf");
    if (!g)
        return;
    CHECK(wgml_gguf_version(g) == 3, "%u", wgml_gguf_version(g));
    CHECK(wgml_gguf_alignment(g) == 32, "%u", wgml_gguf_alignment(g));
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    float f;
    bool b;
    const char *s;
    size_t len;
    CHECK_OK(wgml_gguf_get_u32(g, "t.u8", &u32));
    CHECK(u32 == 200, "%u", u32);
    CHECK_OK(wgml_gguf_get_i32(g, "t.i8", &i32));
    CHECK(i32 == -100, "%d", i32);
    CHECK_OK(wgml_gguf_get_u32(g, "t.u16", &u32));
    CHECK(u32 == 60000, "%u", u32);
    CHECK_OK(wgml_gguf_get_i32(g, "t.i16", &i32));
    CHECK(i32 == -30000, "%d", i32);
    CHECK_OK(wgml_gguf_get_u32(g, "t.u32", &u32));
    CHECK(u32 == 4000000000u, "%u", u32);
    CHECK(wgml_gguf_get_i32(g, "t.u32", &i32) == WGML_ERR_DTYPE, "4e9 does not fit i32");
    CHECK_OK(wgml_gguf_get_i32(g, "t.i32", &i32));
    CHECK(i32 == -2000000000, "%d", i32);
    CHECK(wgml_gguf_get_u32(g, "t.i32", &u32) == WGML_ERR_DTYPE, "negative into u32");
    CHECK_OK(wgml_gguf_get_f32(g, "t.f32", &f));
    CHECK(f == 1.5f, "%g", (double)f);
    CHECK_OK(wgml_gguf_get_bool(g, "t.bool", &b));
    CHECK(b, "bool");
    CHECK_OK(wgml_gguf_get_string(g, "t.string", &s, &len));
    CHECK(len == 6 && memcmp(s, "h\xc3\xa9llo", 6) == 0, "%.*s", (int)len, s);
    CHECK_OK(wgml_gguf_get_u64(g, "t.u64", &u64));
    CHECK(u64 == 1ull << 40, "%llu", (unsigned long long)u64);
    CHECK(wgml_gguf_get_u32(g, "t.u64", &u32) == WGML_ERR_DTYPE, "2^40 into u32");
    CHECK(wgml_gguf_get_u64(g, "t.i64", &u64) == WGML_ERR_DTYPE, "negative i64 into u64");
    CHECK_OK(wgml_gguf_get_f32(g, "t.f64", &f));
    CHECK(f == 0.25f, "%g", (double)f);
    CHECK(wgml_gguf_get_f32(g, "t.string", &f) == WGML_ERR_DTYPE, "string as f32");
    CHECK(wgml_gguf_get_bool(g, "t.u8", &b) == WGML_ERR_DTYPE, "u8 as bool");
    CHECK(wgml_gguf_get_u32(g, "no.such.key", &u32) == WGML_ERR_INDEX, "absent key");
    CHECK(wgml_gguf_find_key(g, "no.such.key") == -1, "find absent");
    CHECK(wgml_gguf_get_u32(g, "t.arr_i32", &u32) == WGML_ERR_DTYPE, "array as scalar");

    wgml_gguf_type et;
    uint64_t n;
    CHECK_OK(wgml_gguf_get_array(g, "t.arr_i32", &et, &n));
    CHECK(et == WGML_GGUF_I32 && n == 3, "%d %llu", et, (unsigned long long)n);
    static const int32_t want_i[] = {1, -2, 3};
    for (uint64_t i = 0; i < 3; i++) {
        CHECK_OK(wgml_gguf_array_i32(g, "t.arr_i32", i, &i32));
        CHECK(i32 == want_i[i], "[%llu] %d", (unsigned long long)i, i32);
    }
    CHECK(wgml_gguf_array_i32(g, "t.arr_i32", 3, &i32) == WGML_ERR_INDEX, "past the end");
    CHECK_OK(wgml_gguf_array_f32(g, "t.arr_f32", 1, &f));
    CHECK(f == -1.0f, "%g", (double)f);
    CHECK(wgml_gguf_array_f32(g, "t.arr_i32", 0, &f) == WGML_ERR_DTYPE, "i32 elements as f32");
    CHECK_OK(wgml_gguf_array_string(g, "t.arr_str", 1, &s, &len));
    CHECK(len == 0, "%zu", len);
    CHECK_OK(wgml_gguf_array_string(g, "t.arr_str", 2, &s, &len));
    CHECK(len == 4 && memcmp(s, "\xe2\x96\x81" "b", 4) == 0, "%.*s", (int)len, s);
    CHECK(wgml_gguf_array_string(g, "t.arr_str", 3, &s, &len) == WGML_ERR_INDEX, "past the end");
    CHECK_OK(wgml_gguf_array_i32(g, "t.arr_u8", 2, &i32));
    CHECK(i32 == 255, "%d", i32);
    char buf[64];
    wgml_gguf_format_value(g, wgml_gguf_find_key(g, "t.i64"), buf, sizeof buf);
    CHECK(strcmp(buf, "-1099511627776") == 0, "%s", buf);

    /* tensors: shapes in wgml order (the file's ne reversed) */
    static const struct {
        const char *name;
        wgml_dtype dtype;
        int ndim;
        int64_t shape[4];
        uint64_t nbytes;
    } want[] = {
        {"f32_2d", WGML_F32, 2, {2, 3}, 24},       {"f16_1d", WGML_F16, 1, {4}, 8},
        {"q4_0_2d", WGML_Q4_0, 2, {2, 64}, 72},    {"q8_0_2d", WGML_Q8_0, 2, {3, 32}, 102},
        {"bf16_3d", WGML_BF16, 3, {2, 1, 4}, 16},  {"i32_1d", WGML_I32, 1, {2}, 8},
        {"q8_1_unsupported", WGML_DTYPE_COUNT, 2, {1, 32}, 40},
    };
    CHECK(wgml_gguf_tensor_count(g) == 7, "%lld", (long long)wgml_gguf_tensor_count(g));
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        wgml_gguf_tensor t;
        CHECK_OK(wgml_gguf_tensor_by_name(g, want[i].name, &t));
        CHECK(t.dtype == want[i].dtype && t.ndim == want[i].ndim && t.nbytes == want[i].nbytes, "%s: %d %d %llu",
              want[i].name, t.dtype, t.ndim, (unsigned long long)t.nbytes);
        for (int d = 0; d < t.ndim; d++)
            CHECK(t.shape[d] == want[i].shape[d], "%s dim %d: %lld", want[i].name, d, (long long)t.shape[d]);
        CHECK(t.offset % 32 == 0, "%s offset %llu", want[i].name, (unsigned long long)t.offset);
    }
    wgml_gguf_tensor t;
    CHECK_OK(wgml_gguf_tensor_by_name(g, "f32_2d", &t));
    const float *fp = t.data;
    CHECK(fp[0] == 0.0f && fp[5] == 5.0f, "%g %g", (double)fp[0], (double)fp[5]);
    const void *p;
    uint64_t nb;
    int64_t qi = wgml_gguf_find_tensor(g, "q8_1_unsupported");
    CHECK(wgml_gguf_tensor_data(g, qi, &p, &nb) == WGML_ERR_UNSUPPORTED, "q8_1 data");
    CHECK(strstr(wgml_last_error(), "q8_1_unsupported") && strstr(wgml_last_error(), "q8_1"), "%s",
          wgml_last_error());
    CHECK(wgml_gguf_tensor_by_name(g, "nope", &t) == WGML_ERR_INDEX, "absent tensor");
    CHECK(wgml_gguf_tensor_info(g, 7, &t) == WGML_ERR_INDEX, "index past the end");
    CHECK(strcmp(wgml_gguf_ggml_type_name(12), "q4_K") == 0 && wgml_gguf_dtype_from_ggml(39) == WGML_MXFP4 &&
              wgml_gguf_dtype_from_ggml(20) == WGML_IQ4_NL && wgml_gguf_dtype_from_ggml(4) == WGML_DTYPE_COUNT,
          "type table");
    wgml_gguf_close(g);
}

static void test_align_v2(void)
{
    wgml_gguf *g = open_corpus("align64_v2.gguf");
    if (!g)
        return;
    CHECK(wgml_gguf_version(g) == 2 && wgml_gguf_alignment(g) == 64, "v%u align %u", wgml_gguf_version(g),
          wgml_gguf_alignment(g));
    CHECK(wgml_gguf_data_offset(g) % 64 == 0, "%llu", (unsigned long long)wgml_gguf_data_offset(g));
    wgml_gguf_tensor t;
    CHECK_OK(wgml_gguf_tensor_by_name(g, "a4d", &t));
    CHECK(t.ndim == 4 && t.shape[0] == 2 && t.shape[1] == 3 && t.shape[2] == 1 && t.shape[3] == 5, "shape");
    CHECK(((const float *)t.data)[29] == 29.0f, "last element");
    CHECK_OK(wgml_gguf_tensor_by_name(g, "b", &t));
    CHECK(t.offset % 64 == 0 && ((const float *)t.data)[0] == 1.0f, "b");
    wgml_gguf_close(g);
}

/* ------------------------------------------------ hand-made bad files */

typedef struct wbuf {
    unsigned char b[512];
    size_t n;
} wbuf;

static void put(wbuf *w, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        w->b[w->n++] = (unsigned char)(v >> (8 * i));
}

static void put_str(wbuf *w, const char *s)
{
    put(w, strlen(s), 8);
    memcpy(w->b + w->n, s, strlen(s));
    w->n += strlen(s);
}

static void header(wbuf *w, uint32_t version, uint64_t n_t, uint64_t n_kv)
{
    w->n = 0;
    memcpy(w->b, "GGUF", 4);
    w->n = 4;
    put(w, version, 4);
    put(w, n_t, 8);
    put(w, n_kv, 8);
}

static void tensor(wbuf *w, const char *name, uint32_t ndim, const uint64_t *ne, uint32_t type, uint64_t off)
{
    put_str(w, name);
    put(w, ndim, 4);
    for (uint32_t d = 0; d < ndim; d++)
        put(w, ne[d], 8);
    put(w, type, 4);
    put(w, off, 8);
}

static void expect(const wbuf *w, wgml_status want, const char *needle, const char *what)
{
    wgml_gguf *g = NULL;
    wgml_status st = wgml_gguf_open_memory(w->b, w->n, &g);
    CHECK(st == want, "%s: got %s (%s)", what, wgml_status_name(st), wgml_last_error());
    CHECK(!needle || strstr(wgml_last_error(), needle), "%s: message '%s' lacks '%s'", what, wgml_last_error(),
          needle);
    CHECK((st == WGML_OK) == (g != NULL), "%s: handle", what);
    wgml_gguf_close(g);
}

static void test_corrupt(void)
{
    wbuf w;
    uint64_t ne[5] = {4, 1, 1, 1, 1};
    header(&w, 3, 0, 0);
    expect(&w, WGML_OK, NULL, "empty v3");
    w.b[0] = 'X';
    expect(&w, WGML_ERR_INVALID_ARG, "magic", "bad magic");
    header(&w, 1, 0, 0);
    expect(&w, WGML_ERR_INVALID_ARG, "version 1", "v1");
    header(&w, 4, 0, 0);
    expect(&w, WGML_ERR_INVALID_ARG, "version 4", "v4");
    header(&w, 0x03000000, 0, 0);
    expect(&w, WGML_ERR_INVALID_ARG, "big-endian", "big-endian");
    w.n = 0;
    expect(&w, WGML_ERR_IO, "magic", "empty file");
    header(&w, 3, 0, 0);
    w.n = 20;
    expect(&w, WGML_ERR_IO, "kv_count at offset 16", "cut in kv_count");
    header(&w, 3, 0, 1u << 30);
    expect(&w, WGML_ERR_IO, "kv_count", "huge kv_count");
    header(&w, 3, UINT64_MAX, 0);
    expect(&w, WGML_ERR_IO, "tensor_count", "huge tensor_count");

    header(&w, 3, 0, 1);
    put_str(&w, "k");
    put(&w, WGML_GGUF_ARRAY, 4);
    put(&w, WGML_GGUF_STRING, 4);
    put(&w, 0, 8);
    expect(&w, WGML_OK, NULL, "empty string array");
    header(&w, 3, 0, 1);
    put_str(&w, "k");
    put(&w, 13, 4);
    expect(&w, WGML_ERR_INVALID_ARG, "type id 13", "bad value type");
    header(&w, 3, 0, 1);
    put_str(&w, "k");
    put(&w, WGML_GGUF_ARRAY, 4);
    put(&w, WGML_GGUF_ARRAY, 4);
    put(&w, 0, 8);
    expect(&w, WGML_ERR_INVALID_ARG, "arrays of arrays", "nested array");
    header(&w, 3, 0, 1);
    put_str(&w, "k");
    put(&w, WGML_GGUF_ARRAY, 4);
    put(&w, WGML_GGUF_U64, 4);
    put(&w, UINT64_MAX / 4, 8);
    expect(&w, WGML_ERR_IO, "key 'k'", "array count past the file");
    header(&w, 3, 0, 1);
    put_str(&w, "k");
    put(&w, WGML_GGUF_STRING, 4);
    put(&w, UINT64_MAX, 8);
    expect(&w, WGML_ERR_IO, "string value", "string length overflow");
    header(&w, 3, 0, 2);
    put_str(&w, "k");
    put(&w, WGML_GGUF_U8, 4);
    put(&w, 1, 1);
    put_str(&w, "k");
    put(&w, WGML_GGUF_U8, 4);
    put(&w, 1, 1);
    expect(&w, WGML_ERR_INVALID_ARG, "duplicate key", "duplicate key");
    header(&w, 3, 0, 1);
    put_str(&w, "general.alignment");
    put(&w, WGML_GGUF_U32, 4);
    put(&w, 48, 4);
    expect(&w, WGML_ERR_INVALID_ARG, "power of two", "alignment 48");
    header(&w, 3, 0, 1);
    put_str(&w, "general.alignment");
    put(&w, WGML_GGUF_U64, 4);
    put(&w, 64, 8);
    expect(&w, WGML_ERR_INVALID_ARG, "must be u32", "alignment as u64");

    header(&w, 3, 1, 0);
    tensor(&w, "five_d", 5, ne, 0, 0);
    expect(&w, WGML_ERR_INVALID_ARG, "five_d", "5 dims");
    header(&w, 3, 1, 0);
    tensor(&w, "bad_type", 1, ne, 4, 0);
    expect(&w, WGML_ERR_INVALID_ARG, "unknown ggml type id 4", "removed type 4");
    header(&w, 3, 1, 0);
    tensor(&w, "partial_block", 1, ne, 2 /* q4_0: 32 a block */, 0);
    expect(&w, WGML_ERR_INVALID_ARG, "block", "ne[0] not whole blocks");
    uint64_t neg[2] = {4, UINT64_MAX};
    header(&w, 3, 1, 0);
    tensor(&w, "negative", 2, neg, 0, 0);
    expect(&w, WGML_ERR_INVALID_ARG, "negative", "negative dim");
    uint64_t big[4] = {1ull << 32, 1ull << 32, 1, 1};
    header(&w, 3, 1, 0);
    tensor(&w, "overflow", 2, big, 0, 0);
    expect(&w, WGML_ERR_INVALID_ARG, "overflow", "element count overflow");
    header(&w, 3, 1, 0);
    tensor(&w, "misaligned", 1, ne, 0, 4);
    expect(&w, WGML_ERR_INVALID_ARG, "alignment", "misaligned offset");
    header(&w, 3, 2, 0);
    tensor(&w, "same", 1, ne, 0, 0);
    tensor(&w, "same", 1, ne, 0, 32);
    expect(&w, WGML_ERR_INVALID_ARG, "duplicate tensor", "duplicate tensor");
    header(&w, 3, 1, 0);
    tensor(&w, "past_end", 1, ne, 0, 0);
    while (w.n % 32)
        put(&w, 0, 1);
    put(&w, 0, 8); /* 8 of the 16 bytes */
    expect(&w, WGML_ERR_IO, "past_end", "data past the end");
    put(&w, 0, 8);
    expect(&w, WGML_OK, NULL, "data exactly to the end");
    header(&w, 3, 1, 0);
    tensor(&w, "far", 1, ne, 0, UINT64_MAX - 31);
    while (w.n % 32)
        put(&w, 0, 1);
    expect(&w, WGML_ERR_IO, "far", "offset near 2^64");

    wgml_gguf *g = (wgml_gguf *)1;
    CHECK(wgml_gguf_open("/nonexistent/x.gguf", &g) == WGML_ERR_IO && g == NULL, "missing file");
    CHECK(strstr(wgml_last_error(), "/nonexistent/x.gguf") != NULL, "%s", wgml_last_error());
    CHECK(wgml_gguf_open(corpus_dir, &g) == WGML_ERR_IO, "a directory");
    CHECK(wgml_gguf_open_memory(NULL, 4, &g) == WGML_ERR_INVALID_ARG, "NULL data");
}

/* --------------------------------------------- the fuzzer's body, replayed */

static void test_corpus_parses(void)
{
    for (size_t i = 0; i < N_CORPUS; i++) {
        size_t n;
        unsigned char *d = slurp(corpus_files[i], &n);
        CHECK(d != NULL, "cannot read %s/%s", corpus_dir, corpus_files[i]);
        if (!d)
            continue;
        wgml_status st = gguf_exercise(d, n);
        CHECK(st == WGML_OK, "%s: %s", corpus_files[i], wgml_last_error());
        if (strncmp(corpus_files[i], "vocab", 5) == 0) {
            wgml_gguf *g;
            wgml_vocab *v = NULL;
            CHECK_OK(wgml_gguf_open_memory(d, n, &g));
            CHECK_OK(wgml_vocab_load(g, &v));
            wgml_vocab_free(v);
            wgml_gguf_close(g);
        }
        free(d);
    }
}

static void test_truncations(void)
{
    size_t total = 0;
    for (size_t i = 0; i < N_CORPUS; i++) {
        size_t n;
        unsigned char *d = slurp(corpus_files[i], &n);
        if (!d)
            continue;
        /* a prefix that still holds every tensor's data (the cut is in the
         * trailing padding) or that cuts a tensor-less file in its padding
         * may parse; anything else is truncated */
        size_t data_end = 0;
        wgml_gguf *full;
        CHECK_OK(wgml_gguf_open_memory(d, n, &full));
        for (int64_t t = 0; full && t < wgml_gguf_tensor_count(full); t++) {
            wgml_gguf_tensor info;
            wgml_gguf_tensor_info(full, t, &info);
            if (info.offset + info.nbytes > data_end)
                data_end = (size_t)(info.offset + info.nbytes);
        }
        wgml_gguf_close(full);
        /* every prefix, each in its own allocation so ASan sees reads past it */
        for (size_t cutlen = 0; cutlen < n; cutlen++) {
            unsigned char *p = malloc(cutlen ? cutlen : 1);
            memcpy(p, d, cutlen);
            wgml_gguf *g = NULL;
            wgml_status st = wgml_gguf_open_memory(p, cutlen, &g);
            CHECK(st == WGML_ERR_IO || (st == WGML_OK && (data_end ? cutlen >= data_end : !wgml_gguf_tensor_count(g))),
                  "%s cut at %zu: %s: %s",
                  corpus_files[i], cutlen, wgml_status_name(st), wgml_last_error());
            CHECK(st == WGML_OK || strstr(wgml_last_error(), "offset"), "%s", wgml_last_error());
            wgml_gguf_close(g);
            free(p);
            total++;
        }
        free(d);
    }
    printf("    %zu truncations\n", total);
}

static void test_bit_flips(void)
{
    uint64_t state = 0x9E3779B97F4A7C15ull; /* fixed seed: CI replays the same variants */
    size_t total = 0, ok = 0;
    for (size_t i = 0; i < N_CORPUS; i++) {
        size_t n;
        unsigned char *d = slurp(corpus_files[i], &n);
        if (!d)
            continue;
        unsigned char *p = malloc(n);
        for (int v = 0; v < 600; v++) {
            memcpy(p, d, n);
            int flips = 1 + v % 3;
            for (int k = 0; k < flips; k++) {
                state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
                uint64_t r = state * 2685821657736338717ull;
                /* half the flips in the first 256 bytes, where the header and counts are */
                size_t at = (size_t)((r >> 8) % (v % 2 ? n : (n < 256 ? n : 256)));
                p[at] ^= (unsigned char)(1u << (r & 7));
            }
            wgml_status st = gguf_exercise(p, n);
            CHECK(st == WGML_OK || st == WGML_ERR_IO || st == WGML_ERR_INVALID_ARG, "%s variant %d: %s",
                  corpus_files[i], v, wgml_status_name(st));
            ok += st == WGML_OK;
            total++;
        }
        free(p);
        free(d);
    }
    printf("    %zu bit-flip variants, %zu still parse\n", total, ok);
}

#ifdef WGML_TEST_GPU
static void test_upload(void)
{
    wgml_ctx *ctx;
    if (wgml_ctx_create(NULL, &ctx) != WGML_OK) {
        printf("    SKIP: no GPU context: %s\n", wgml_last_error());
        return;
    }
    wgml_gguf *g = open_corpus("types_v3.gguf");
    static const char *const names[] = {"f32_2d", "f16_1d", "q4_0_2d", "q8_0_2d", "bf16_3d", "i32_1d"};
    for (size_t i = 0; g && i < sizeof names / sizeof *names; i++) {
        wgml_tensor *t = NULL;
        wgml_gguf_tensor info;
        CHECK_OK(wgml_gguf_tensor_by_name(g, names[i], &info));
        CHECK_OK(wgml_gguf_upload(ctx, g, names[i], &t));
        if (!t)
            continue;
        CHECK(wgml_tensor_dtype(t) == info.dtype && wgml_tensor_ndim(t) == info.ndim, "%s", names[i]);
        unsigned char *back = malloc(info.nbytes);
        CHECK_OK(wgml_tensor_download(t, back, info.nbytes));
        CHECK(memcmp(back, info.data, info.nbytes) == 0, "%s: bytes differ after upload", names[i]);
        free(back);
        wgml_tensor_free(t);
    }
    wgml_tensor *t = NULL;
    if (g) {
        CHECK(wgml_gguf_upload(ctx, g, "q8_1_unsupported", &t) == WGML_ERR_UNSUPPORTED && !t, "unsupported");
        CHECK(wgml_gguf_upload(ctx, g, "nope", &t) == WGML_ERR_INDEX && !t, "absent");
    }
    wgml_gguf_close(g);
    wgml_ctx_destroy(ctx);
}
#endif

int main(int argc, char **argv)
{
    if (argc > 1)
        corpus_dir = argv[1];
    static const t_case cases[] = {
        {"types_v3", test_types},
        {"align64_v2", test_align_v2},
        {"corrupt_fields", test_corrupt},
        {"corpus_parses", test_corpus_parses},
        {"truncations", test_truncations},
        {"bit_flips", test_bit_flips},
#ifdef WGML_TEST_GPU
        {"upload", test_upload},
#endif
    };
    return t_run(cases, sizeof cases / sizeof *cases, argc > 2 ? argv[2] : NULL);
}
