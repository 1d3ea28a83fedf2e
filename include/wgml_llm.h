/*
 * wgml LLM front-end: GGUF files (llama.cpp's model format), tokenizers
 * and decoder-only language models (llama, qwen2, qwen3, gemma3) run as
 * wgml graphs.
 *
 * Everything here follows wgml.h's error model: calls return a wgml_status
 * and wgml_last_error() says why.  Nothing aborts; a corrupt or truncated
 * file is an error naming the field and its byte offset, never a crash.
 *
 * Threading: a wgml_gguf or wgml_vocab may be read from several threads at
 * once (every accessor is const); open/close/free are not concurrent with
 * anything else on the same handle.
 */
#ifndef WGML_LLM_H
#define WGML_LLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wgml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ GGUF */

/*
 * A parsed GGUF file (versions 2 and 3, little-endian).  Opening checks
 * every count, length, offset, alignment, dim and dtype id against the file
 * size with overflow-safe arithmetic, then indexes the metadata and tensor
 * tables; no tensor data is read or copied.  Errors:
 *   WGML_ERR_IO           the file cannot be opened/mapped, or it ends inside
 *                         a field ("truncated: <field> at offset N ...")
 *   WGML_ERR_INVALID_ARG  a field holds an impossible value (bad magic,
 *                         version, type id, alignment, duplicate key/name,
 *                         a tensor with > 4 dims or data past the end ...)
 *   WGML_ERR_OOM          host memory ran out
 */
typedef struct wgml_gguf wgml_gguf;

/* GGUF metadata value types (the ids the file stores). */
typedef enum wgml_gguf_type {
    WGML_GGUF_U8 = 0, WGML_GGUF_I8 = 1, WGML_GGUF_U16 = 2, WGML_GGUF_I16 = 3,
    WGML_GGUF_U32 = 4, WGML_GGUF_I32 = 5, WGML_GGUF_F32 = 6, WGML_GGUF_BOOL = 7,
    WGML_GGUF_STRING = 8, WGML_GGUF_ARRAY = 9, WGML_GGUF_U64 = 10, WGML_GGUF_I64 = 11,
    WGML_GGUF_F64 = 12
} wgml_gguf_type;

/* Memory-maps `path` read-only and parses it.  The file must not shrink
 * while it is open (reading a mapped page past a file's end faults). */
wgml_status wgml_gguf_open(const char *path, wgml_gguf **out);
/* Parses a GGUF held in memory (for fuzzing, embedded models).  The bytes
 * are borrowed, not copied: they must outlive the handle. */
wgml_status wgml_gguf_open_memory(const void *data, size_t size, wgml_gguf **out);
void wgml_gguf_close(wgml_gguf *g); /* NULL is a no-op */

uint32_t wgml_gguf_version(const wgml_gguf *g);
uint32_t wgml_gguf_alignment(const wgml_gguf *g);   /* general.alignment, default 32 */
uint64_t wgml_gguf_data_offset(const wgml_gguf *g); /* start of the tensor data section */
uint64_t wgml_gguf_file_size(const wgml_gguf *g);

/* --- metadata.  Keys are indexed 0..kv_count-1 in file order. */
int64_t wgml_gguf_kv_count(const wgml_gguf *g);
/* Index of `key`, or -1 when absent. */
int64_t wgml_gguf_find_key(const wgml_gguf *g, const char *key);
/* NUL-terminated key of entry i (NULL if i is out of range). */
const char *wgml_gguf_key(const wgml_gguf *g, int64_t i);
/* Value type of entry i; for arrays also the element type and count
 * (either pointer may be NULL).  Out-of-range i: WGML_ERR_INDEX. */
wgml_status wgml_gguf_kv_type(const wgml_gguf *g, int64_t i, wgml_gguf_type *type,
                              wgml_gguf_type *elem_type, uint64_t *n_elems);
const char *wgml_gguf_type_name(wgml_gguf_type t); /* "u32", "array"; "?" if unknown */

/*
 * Typed getters by key.  An absent key is WGML_ERR_INDEX (callers test for
 * optional keys with wgml_gguf_find_key first); a value of another type is
 * WGML_ERR_DTYPE.  Integer getters accept any integer type whose value fits
 * the target (so a u32 id stored as i32 reads fine); f32 accepts f32 or f64;
 * bool only bool.  Strings are NOT NUL-terminated: they point into the file
 * and are `*len` bytes long (either may be NULL only if unused).
 */
wgml_status wgml_gguf_get_u32(const wgml_gguf *g, const char *key, uint32_t *v);
wgml_status wgml_gguf_get_i32(const wgml_gguf *g, const char *key, int32_t *v);
wgml_status wgml_gguf_get_u64(const wgml_gguf *g, const char *key, uint64_t *v);
wgml_status wgml_gguf_get_f32(const wgml_gguf *g, const char *key, float *v);
wgml_status wgml_gguf_get_bool(const wgml_gguf *g, const char *key, bool *v);
wgml_status wgml_gguf_get_string(const wgml_gguf *g, const char *key, const char **s, size_t *len);

/* Arrays: element type and count of the array at `key` (WGML_ERR_DTYPE if
 * the value is not an array), and bounds-checked element access
 * (WGML_ERR_INDEX past the end, WGML_ERR_DTYPE for another element type;
 * i32 accepts any integer element type whose value fits, f32 accepts f32
 * and f64 elements). */
wgml_status wgml_gguf_get_array(const wgml_gguf *g, const char *key, wgml_gguf_type *elem_type, uint64_t *n);
wgml_status wgml_gguf_array_string(const wgml_gguf *g, const char *key, uint64_t i, const char **s, size_t *len);
wgml_status wgml_gguf_array_i32(const wgml_gguf *g, const char *key, uint64_t i, int32_t *v);
wgml_status wgml_gguf_array_f32(const wgml_gguf *g, const char *key, uint64_t i, float *v);
/* The same by entry index (no key lookup: for loops over big arrays). */
wgml_status wgml_gguf_array_string_at(const wgml_gguf *g, int64_t kv, uint64_t i, const char **s, size_t *len);
wgml_status wgml_gguf_array_i32_at(const wgml_gguf *g, int64_t kv, uint64_t i, int32_t *v);
wgml_status wgml_gguf_array_f32_at(const wgml_gguf *g, int64_t kv, uint64_t i, float *v);
/* Scalar entry i formatted for display ("576", "1e-05", "true", a string
 * clipped to cap); arrays print as "[u32 x 3]".  Always NUL-terminates. */
void wgml_gguf_format_value(const wgml_gguf *g, int64_t i, char *buf, size_t cap);

/* --- tensors */
typedef struct wgml_gguf_tensor {
    const char *name;      /* NUL-terminated, valid while the handle lives   */
    uint32_t ggml_type;    /* the file's type id (GGMLQuantizationType)      */
    wgml_dtype dtype;      /* WGML_DTYPE_COUNT when wgml has no such dtype   */
    int ndim;              /* 1..4                                           */
    int64_t shape[WGML_MAX_DIMS]; /* wgml order: shape[0] outermost, so the
                              file's ne[0] (innermost) is shape[ndim-1]     */
    uint64_t offset;       /* absolute byte offset of the data in the file   */
    uint64_t nbytes;       /* bytes of data                                  */
    const void *data;      /* points into the mapping (read-only)            */
} wgml_gguf_tensor;

/* GGUF ggml type ids -> wgml dtypes (others parse, see ggml_type):
 * F32=0 F16=1 Q4_0=2 Q4_1=3 Q5_0=6 Q5_1=7 Q8_0=8 Q2_K=10 Q3_K=11 Q4_K=12
 * Q5_K=13 Q6_K=14 Q8_K=15 IQ4_NL=20 I8=24 I32=26 BF16=30 MXFP4=39. */
wgml_dtype wgml_gguf_dtype_from_ggml(uint32_t ggml_type); /* WGML_DTYPE_COUNT if none */
const char *wgml_gguf_ggml_type_name(uint32_t ggml_type); /* "q4_K", "iq2_xxs"; "?" if unknown */

int64_t wgml_gguf_tensor_count(const wgml_gguf *g);
int64_t wgml_gguf_find_tensor(const wgml_gguf *g, const char *name); /* -1 if absent */
/* Tensor i (WGML_ERR_INDEX if out of range) or by name (WGML_ERR_INDEX if
 * absent).  Works for every type the file may hold. */
wgml_status wgml_gguf_tensor_info(const wgml_gguf *g, int64_t i, wgml_gguf_tensor *out);
wgml_status wgml_gguf_tensor_by_name(const wgml_gguf *g, const char *name, wgml_gguf_tensor *out);
/* The tensor's bytes, only for types wgml supports: a type with no wgml
 * dtype is WGML_ERR_UNSUPPORTED naming the tensor and the type. */
wgml_status wgml_gguf_tensor_data(const wgml_gguf *g, int64_t i, const void **data, uint64_t *nbytes);

/* New wgml_tensor on ctx holding tensor `name` (wgml_tensor_new +
 * wgml_tensor_upload).  WGML_ERR_INDEX if absent, WGML_ERR_UNSUPPORTED for
 * types wgml lacks; quantised rows are whole blocks (checked at open). */
wgml_status wgml_gguf_upload(wgml_ctx *ctx, const wgml_gguf *g, const char *name, wgml_tensor **out);

/* ------------------------------------------------------------- tokenizer */

/*
 * A tokenizer vocabulary loaded from a GGUF's tokenizer.ggml.* keys, with
 * llama.cpp's two main algorithms:
 *   WGML_VOCAB_SPM  (tokenizer.ggml.model "llama"): SentencePiece-style
 *                   score-driven merges over UTF-8 characters, ' ' -> U+2581,
 *                   a leading space before the text, <0xXX> byte fallback.
 *   WGML_VOCAB_BPE  (model "gpt2"): byte-level BPE; the text is split by the
 *                   pre-tokenizer of tokenizer.ggml.pre (llama-bpe/llama3,
 *                   qwen2, smollm/starcoder, gpt-2; others get the "default"
 *                   splitter, as in llama.cpp), bytes mapped to GPT-2's
 *                   printable code points, merged by rank.
 * The vocab copies what it needs: the wgml_gguf may be closed afterwards.
 */
typedef struct wgml_vocab wgml_vocab;

typedef enum wgml_vocab_kind { WGML_VOCAB_SPM = 1, WGML_VOCAB_BPE = 2 } wgml_vocab_kind;

/* llama.cpp's token types (tokenizer.ggml.token_type). */
typedef enum wgml_token_type {
    WGML_TOKEN_UNDEFINED = 0, WGML_TOKEN_NORMAL = 1, WGML_TOKEN_UNKNOWN = 2, WGML_TOKEN_CONTROL = 3,
    WGML_TOKEN_USER_DEFINED = 4, WGML_TOKEN_UNUSED = 5, WGML_TOKEN_BYTE = 6
} wgml_token_type;

/* Other tokenizer models are WGML_ERR_UNSUPPORTED; missing or malformed
 * tokenizer keys WGML_ERR_INVALID_ARG naming the key. */
wgml_status wgml_vocab_load(const wgml_gguf *g, wgml_vocab **out);
void wgml_vocab_free(wgml_vocab *v); /* NULL is a no-op */

wgml_vocab_kind wgml_vocab_kind_of(const wgml_vocab *v);
int32_t wgml_vocab_n_tokens(const wgml_vocab *v);
/* Special ids; -1 when the vocabulary has none. */
int32_t wgml_vocab_bos(const wgml_vocab *v);
int32_t wgml_vocab_eos(const wgml_vocab *v);
int32_t wgml_vocab_unk(const wgml_vocab *v);
int32_t wgml_vocab_pad(const wgml_vocab *v);
bool wgml_vocab_add_bos(const wgml_vocab *v); /* tokenizer.ggml.add_bos_token, or the model's default */
bool wgml_vocab_add_eos(const wgml_vocab *v);
const char *wgml_vocab_pre(const wgml_vocab *v); /* the pre-tokenizer used ("smollm", "default", ...) */

/* Raw vocabulary text of a token (not NUL-terminated; NULL if id is out of
 * range), its type and its score. */
const char *wgml_vocab_token_text(const wgml_vocab *v, int32_t id, size_t *len);
wgml_token_type wgml_vocab_token_type(const wgml_vocab *v, int32_t id);
float wgml_vocab_token_score(const wgml_vocab *v, int32_t id);
/* Id of the token whose text is exactly text[0..len), or -1. */
int32_t wgml_vocab_find(const wgml_vocab *v, const char *text, size_t len);

/*
 * Text -> token ids.  add_special: prepend BOS / append EOS as the vocab's
 * add_bos/add_eos say.  parse_special: control and unknown-type tokens
 * written in the text ("<|im_start|>") become their ids; user-defined
 * tokens are always matched, as in llama.cpp.
 * Output: always sets *n_ids to the number of ids.  ids == NULL asks for
 * the count only (WGML_OK).  Otherwise ids[0..cap) receives the first
 * min(cap, *n_ids) ids and a short buffer is WGML_ERR_LIMIT.
 */
wgml_status wgml_vocab_tokenize(const wgml_vocab *v, const char *text, size_t len, bool add_special,
                                bool parse_special, int32_t *ids, size_t cap, size_t *n_ids);

/* Bytes a token stands for (SPM: U+2581 -> ' ', <0xXX> -> the byte;
 * BPE: GPT-2 code points -> bytes).  Control/unknown tokens give their
 * text when render_special, else nothing.  Same buffer contract as
 * tokenize (*len always set; text == NULL asks for the size; a short
 * buffer is WGML_ERR_LIMIT).  Not NUL-terminated.  Bad id: WGML_ERR_INDEX. */
wgml_status wgml_vocab_token_piece(const wgml_vocab *v, int32_t id, bool render_special, char *text, size_t cap,
                                   size_t *len);

/* Ids -> text: the pieces concatenated; with an SPM vocab that adds a
 * leading space (tokenizer.ggml.add_space_prefix), the one space the first
 * token starts with is removed, so detokenize(tokenize(s)) == s.  No
 * "clean-up of tokenization spaces" is done.  The text is NUL-terminated
 * when cap > *len; otherwise the buffer contract of tokenize. */
wgml_status wgml_vocab_detokenize(const wgml_vocab *v, const int32_t *ids, size_t n, bool render_special, char *text,
                                  size_t cap, size_t *len);


/* ---------------------------------------------------------------- models */

/*
 * A decoder-only language model loaded from a GGUF file: weights uploaded
 * once (any dtype wgml stores, quantised ones kept quantised), a KV cache
 * of n_ctx positions in f16 on the GPU, and two compiled graphs: one step
 * of up to n_batch tokens that samples the next token on the GPU (prefill
 * in micro-batches, then decode replays it one token at a time), and, made
 * on first use, one that returns the logits of every position
 * (perplexity).  Architectures: llama (SmolLM2, Llama 3.x, TinyLlama),
 * qwen2, qwen3, gemma3.
 *
 *   wgml_model *m;  wgml_model_load(ctx, "model.gguf", NULL, &m);
 *   int32_t ids[256]; size_t n;
 *   wgml_vocab_tokenize(wgml_model_vocab(m), text, len, true, false, ids, 256, &n);
 *   wgml_sample_params sp = {0};                 // greedy
 *   int32_t tok;  wgml_model_decode(m, ids, (int)n, 0, &sp, &tok, NULL);
 *   for (int pos = (int)n; pos < 100 && tok != wgml_vocab_eos(wgml_model_vocab(m)); pos++)
 *       wgml_model_decode(m, &tok, 1, pos, &sp, &tok, NULL);
 *   wgml_model_free(m);
 */
typedef struct wgml_model wgml_model;

typedef struct wgml_model_params {
    int n_ctx;     /* KV cache positions; 0: min(the model's context, 4096) */
    int n_batch;   /* most tokens per evaluation step; 0: 256 */
    /* Called while loading with the fraction done (0..1); returning
     * nonzero cancels the load (WGML_ERR_INVALID_ARG, "cancelled"). */
    int (*progress)(float fraction, void *user);
    void *user;
    /* 1: keep q, k, v and gate, up as separate products.  By default a
     * layer whose q/k/v (gate/up) weights share a dtype gets them stacked
     * into one weight at load, one product each (2 mat-vecs a decode step
     * where there were 5; the same weights, the same results). */
    int no_fuse;
    /* 1: prompt products in f32.  By default the products of more than 8
     * tokens (prefill, perplexity) run with WGML_PREC_F16 where the device
     * has f16 arithmetic: ~1.5x their throughput, at llama.cpp's own error
     * scale (its CUDA prefill quantises activations to 8 bits); decode's
     * mat-vecs are f32 either way. */
    int prefill_f32;
} wgml_model_params;

wgml_status wgml_model_load(wgml_ctx *ctx, const char *path, const wgml_model_params *p, wgml_model **out);
void wgml_model_free(wgml_model *m); /* NULL is a no-op */
const wgml_vocab *wgml_model_vocab(const wgml_model *m);

typedef struct wgml_model_info {
    char arch[32];
    int n_vocab, n_embd, n_layer, n_ff, n_head, n_head_kv, head_dim;
    int n_ctx, n_ctx_train, n_batch;
    uint64_t weight_bytes;   /* uploaded weights */
    uint64_t kv_bytes;       /* the KV cache */
} wgml_model_info;
wgml_status wgml_model_info_get(const wgml_model *m, wgml_model_info *out);

/* Evaluates n tokens at positions n_past .. n_past + n - 1 (n_past: the
 * positions already in the KV cache that the tokens attend to; earlier
 * rows past n_past are overwritten), in steps of at most n_batch, then
 * samples the next token on the GPU from the last position's logits
 * (sp: temperature 0 = greedy; top_k, top_p, min_p, seed; the draw of
 * step n_past + n uses seed + that position, so runs repeat).  token:
 * the sampled id (one 4-byte readback); logits: when not NULL, the last
 * position's n_vocab logits (f32) are read back too.  The sum n_past + n
 * must stay within n_ctx (WGML_ERR_LIMIT). */
wgml_status wgml_model_decode(wgml_model *m, const int32_t *ids, int n, int n_past, const wgml_sample_params *sp,
                              int32_t *token, float *logits);
/* Generates n tokens: evaluates `first` at n_past, then each sampled
 * token at the next position, calling on_token with each sampled token in
 * order (nonzero from it stops).  The same tokens as n wgml_model_decode
 * calls of one token each, but each step's input is the last step's token
 * copied on the GPU and step i + 1 is issued before step i's token is read,
 * so the GPU does not wait for the host between tokens.  Stopping early
 * leaves one step more evaluated (its cache row lies past the kept
 * positions).  *n_done (may be NULL): tokens passed to on_token. */
wgml_status wgml_model_generate(wgml_model *m, int32_t first, int n_past, int n, const wgml_sample_params *sp,
                                int (*on_token)(int32_t token, void *user), void *user, int *n_done);
/* The logits of every position of n tokens at n_past.. into logits
 * ([n, n_vocab] f32), for perplexity and tests. */
wgml_status wgml_model_eval_all(wgml_model *m, const int32_t *ids, int n, int n_past, float *logits);

#ifdef __cplusplus
}
#endif

#endif
