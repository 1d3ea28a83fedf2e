/* Walks everything a GGUF offers through the public API: every key with
 * every getter, every array element, every tensor, and, when the file has
 * a tokenizer, the vocabulary (a few texts tokenized and detokenized).
 * Shared by the libFuzzer target (fuzz_gguf.c) and the CI replay
 * (test_gguf.c), so CI runs exactly what the fuzzer runs.  Returns the
 * open status; anything else wrong is a crash or a sanitizer report. */
#ifndef WGML_GGUF_EXERCISE_H
#define WGML_GGUF_EXERCISE_H

#include <stdlib.h>
#include <string.h>

#include "wgml_llm.h"

static void gguf_exercise_vocab(const wgml_gguf *g)
{
    wgml_vocab *v;
    if (wgml_vocab_load(g, &v) != WGML_OK)
        return;
    static const char *const texts[] = {"Hello world, it's 2024!\n\tcaf\xc3\xa9 \xf0\x9f\x98\x80  x",
                                        "<|im_start|>user <s> \xff\xfe broken \xe2\x82", ""};
    int32_t ids[256];
    char out[4096];
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        size_t n = 0, len = 0;
        wgml_status st = wgml_vocab_tokenize(v, texts[i], strlen(texts[i]), i == 0, i == 1, ids, 256, &n);
        if (st == WGML_OK)
            wgml_vocab_detokenize(v, ids, n, true, out, sizeof out, &len);
    }
    int32_t nt = wgml_vocab_n_tokens(v);
    for (int32_t id = 0; id < nt && id < 1024; id++) {
        size_t len;
        wgml_vocab_token_piece(v, id, true, out, sizeof out, &len);
    }
    wgml_vocab_free(v);
}

static wgml_status gguf_exercise(const void *data, size_t size)
{
    wgml_gguf *g;
    wgml_status st = wgml_gguf_open_memory(data, size, &g);
    if (st != WGML_OK)
        return st;
    for (int64_t i = 0; i < wgml_gguf_kv_count(g); i++) {
        const char *key = wgml_gguf_key(g, i);
        wgml_gguf_type t, et;
        uint64_t n;
        char buf[128];
        uint32_t u32;
        int32_t i32;
        uint64_t u64;
        float f;
        bool b;
        const char *s;
        size_t len;
        wgml_gguf_kv_type(g, i, &t, &et, &n);
        wgml_gguf_format_value(g, i, buf, sizeof buf);
        int64_t j = wgml_gguf_find_key(g, key); /* -1 for a key with a NUL inside */
        if (j >= 0 && strcmp(wgml_gguf_key(g, j), key) != 0)
            abort();
        wgml_gguf_get_u32(g, key, &u32);
        wgml_gguf_get_i32(g, key, &i32);
        wgml_gguf_get_u64(g, key, &u64);
        wgml_gguf_get_f32(g, key, &f);
        wgml_gguf_get_bool(g, key, &b);
        wgml_gguf_get_string(g, key, &s, &len);
        if (t == WGML_GGUF_ARRAY) {
            for (uint64_t e = 0; e < n && e < 4096; e++) {
                wgml_gguf_array_string_at(g, i, e, &s, &len);
                wgml_gguf_array_i32_at(g, i, e, &i32);
                wgml_gguf_array_f32_at(g, i, e, &f);
            }
            wgml_gguf_array_i32_at(g, i, n, &i32); /* one past the end: an error, not a read */
        }
    }
    uint64_t sum = 0;
    for (int64_t i = 0; i < wgml_gguf_tensor_count(g); i++) {
        wgml_gguf_tensor t;
        const void *p;
        uint64_t nb;
        if (wgml_gguf_tensor_info(g, i, &t) != WGML_OK)
            abort();
        int64_t j = wgml_gguf_find_tensor(g, t.name); /* -1 for a name with a NUL inside */
        wgml_gguf_tensor tj;
        if (j >= 0 && (wgml_gguf_tensor_info(g, j, &tj) != WGML_OK || strcmp(tj.name, t.name) != 0))
            abort();
        if (wgml_gguf_tensor_data(g, i, &p, &nb) == WGML_OK && nb) /* touch first and last byte */
            sum += ((const unsigned char *)p)[0] + ((const unsigned char *)p)[nb - 1];
    }
    (void)sum;
    gguf_exercise_vocab(g);
    wgml_gguf_close(g);
    return WGML_OK;
}

#endif
