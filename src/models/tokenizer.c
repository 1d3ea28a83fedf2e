/* Tokenizer vocabulary: loading from GGUF metadata, special-token
 * splitting, the tokenize driver, pieces and detokenisation.  The two
 * algorithms are in tok_spm.c and tok_bpe.c.  Behaviour follows llama.cpp's
 * llama-vocab (facts, not code): which tokens are "special", the defaults
 * per model, the leading-space rule. */
#include "tok_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- helpers */

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

bool tok_map_build(tok_map *m, const char *arena, const tok_ent *ent, size_t n, bool last_wins)
{
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2)
        cap <<= 1;
    m->ent = ent;
    m->cap = cap;
    m->tab = calloc(cap, sizeof *m->tab);
    if (!m->tab)
        return false;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = fnv1a(arena + ent[i].off, ent[i].len) & (cap - 1);
        for (;; h = (h + 1) & (cap - 1)) {
            uint32_t e = m->tab[h];
            if (e == 0) {
                m->tab[h] = (uint32_t)i + 1;
                break;
            }
            const tok_ent *o = &ent[e - 1];
            if (o->len == ent[i].len && memcmp(arena + o->off, arena + ent[i].off, o->len) == 0) {
                if (last_wins)
                    m->tab[h] = (uint32_t)i + 1;
                break;
            }
        }
    }
    return true;
}

int32_t tok_map_get(const tok_map *m, const char *arena, const char *s, size_t len)
{
    if (!m->tab)
        return -1;
    for (uint64_t h = fnv1a(s, len) & (m->cap - 1);; h = (h + 1) & (m->cap - 1)) {
        uint32_t e = m->tab[h];
        if (e == 0)
            return -1;
        const tok_ent *o = &m->ent[e - 1];
        if (o->len == len && memcmp(arena + o->off, s, len) == 0)
            return o->val;
    }
}

void tok_push(tok_vec *o, int32_t id)
{
    if (o->oom)
        return;
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        int32_t *p = realloc(o->v, cap * sizeof *p);
        if (!p) {
            o->oom = true;
            return;
        }
        o->v = p;
        o->cap = cap;
    }
    o->v[o->n++] = id;
}

/* ------------------------------------------------------------ loading */

static wgml_status bad_key(const char *key, const char *why)
{
    return wgml_error(WGML_ERR_INVALID_ARG, "tokenizer: %s: %s", key, why);
}

static void read_id(const wgml_gguf *g, const char *key, int32_t n, int32_t *id)
{
    uint32_t v;
    /* as llama.cpp: an absent or out-of-range id keeps the default */
    if (wgml_gguf_find_key(g, key) >= 0 && wgml_gguf_get_u32(g, key, &v) == WGML_OK && v < (uint32_t)n)
        *id = (int32_t)v;
}

static void read_bool(const wgml_gguf *g, const char *key, bool *b)
{
    bool v;
    if (wgml_gguf_find_key(g, key) >= 0 && wgml_gguf_get_bool(g, key, &v) == WGML_OK)
        *b = v;
}

static const struct {
    const char *name;
    tok_pre pre;
    bool ignore_merges, add_bos;
} pre_names[] = {
    /* llama.cpp's tokenizer.ggml.pre names, grouped by the splitter they use */
    {"llama3", TOK_PRE_LLAMA3, true, true},   {"llama-v3", TOK_PRE_LLAMA3, true, true},
    {"llama-bpe", TOK_PRE_LLAMA3, true, true}, {"falcon3", TOK_PRE_LLAMA3, true, true},
    {"dbrx", TOK_PRE_LLAMA3, false, false},   {"smaug-bpe", TOK_PRE_LLAMA3, false, false},
    {"qwen2", TOK_PRE_QWEN2, false, false},   {"deepseek-r1-qwen", TOK_PRE_QWEN2, false, false},
    {"stablelm2", TOK_PRE_QWEN2, false, false}, {"megrez", TOK_PRE_QWEN2, false, false},
    {"smollm", TOK_PRE_SMOLLM, false, false}, {"starcoder", TOK_PRE_SMOLLM, false, false},
    {"refact", TOK_PRE_SMOLLM, false, false}, {"command-r", TOK_PRE_SMOLLM, false, false},
    {"codeshell", TOK_PRE_SMOLLM, false, false}, {"exaone", TOK_PRE_SMOLLM, false, false},
    {"minerva-7b", TOK_PRE_SMOLLM, false, false}, {"gpt-2", TOK_PRE_GPT2, false, false},
    {"phi-2", TOK_PRE_GPT2, false, false},    {"mpt", TOK_PRE_GPT2, false, false},
    {"olmo", TOK_PRE_GPT2, false, false},     {"jais", TOK_PRE_GPT2, false, false},
    {"exaone4", TOK_PRE_GPT2, false, false},  {"default", TOK_PRE_DEFAULT, false, false},
};

/* Texts llama.cpp forces to control type (end-of-generation and FIM
 * tokens found by text) and to user-defined (gpt-oss's channel tokens). */
static const char *const force_control[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>", "<|endoftext|>",
    "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>", "<|fim_prefix|>",
    "<fim-prefix>", "<fim_prefix>", "<PRE>", "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|fim_suffix|>",
    "<fim-suffix>", "<fim_suffix>", "<SUF>", "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|fim_middle|>",
    "<fim-middle>", "<fim_middle>", "<MID>", "\xe2\x96\x81<MID>", "<|code_middle|>", "<|fim_pad|>",
    "<fim-pad>", "<fim_pad>", "<PAD>", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
    "<reponame>", "<|file_sep|>"};
static const char *const force_user[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

static wgml_status load_tokens(wgml_vocab *v, const wgml_gguf *g)
{
    const char *key = "tokenizer.ggml.tokens";
    int64_t k = wgml_gguf_find_key(g, key);
    wgml_gguf_type et;
    uint64_t n;
    if (k < 0)
        return bad_key(key, "missing");
    if (wgml_gguf_get_array(g, key, &et, &n) || et != WGML_GGUF_STRING)
        return bad_key(key, "not an array of strings");
    if (n > INT32_MAX)
        return bad_key(key, "more than 2^31 tokens");
    v->n = (int32_t)n;
    /* text bytes: the sum of lengths is bounded by the file size */
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        wgml_gguf_array_string_at(g, k, i, &s, &len);
        total += (len ? len : 24) + 1; /* empty -> "[EMPTY_<i>]" */
        if (len > UINT32_MAX)
            return bad_key(key, "a token longer than 4 GiB");
    }
    v->text = malloc(total ? total : 1);
    v->tok = malloc((n ? n : 1) * sizeof *v->tok);
    v->score = calloc(n ? n : 1, sizeof *v->score);
    v->type = malloc(n ? n : 1);
    if (!v->text || !v->tok || !v->score || !v->type)
        return wgml_error(WGML_ERR_OOM, "tokenizer: out of host memory for %" PRIu64 " tokens", n);
    uint64_t off = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        wgml_gguf_array_string_at(g, k, i, &s, &len);
        if (len == 0) /* llama.cpp names empty tokens so they cannot match text */
            len = (size_t)snprintf(v->text + off, 25, "[EMPTY_%" PRIu64 "]", i);
        else
            memcpy(v->text + off, s, len);
        v->text[off + len] = 0;
        v->tok[i] = (tok_ent){off, (uint32_t)len, (int32_t)i};
        v->type[i] = WGML_TOKEN_NORMAL;
        off += len + 1;
    }
    const char *skey = "tokenizer.ggml.scores";
    int64_t ks = wgml_gguf_find_key(g, skey);
    if (ks >= 0) {
        if (wgml_gguf_get_array(g, skey, &et, &n) || (et != WGML_GGUF_F32 && et != WGML_GGUF_F64) ||
            n != (uint64_t)v->n)
            return bad_key(skey, "not an f32 array with one score per token");
        for (int32_t i = 0; i < v->n; i++)
            wgml_gguf_array_f32_at(g, ks, (uint64_t)i, &v->score[i]);
    }
    const char *tkey = "tokenizer.ggml.token_type";
    int64_t kt = wgml_gguf_find_key(g, tkey);
    if (kt >= 0) {
        if (wgml_gguf_get_array(g, tkey, &et, &n) || n != (uint64_t)v->n)
            return bad_key(tkey, "not an integer array with one type per token");
        for (int32_t i = 0; i < v->n; i++) {
            int32_t t;
            if (wgml_gguf_array_i32_at(g, kt, (uint64_t)i, &t))
                return bad_key(tkey, "not an integer array");
            v->type[i] = t >= WGML_TOKEN_NORMAL && t <= WGML_TOKEN_BYTE ? (uint8_t)t : WGML_TOKEN_UNDEFINED;
        }
    }
    if (!tok_map_build(&v->map, v->text, v->tok, (size_t)v->n, true))
        return wgml_error(WGML_ERR_OOM, "tokenizer: out of host memory for the token map");
    for (size_t i = 0; i < sizeof force_control / sizeof *force_control; i++) {
        int32_t id = tok_find(v, force_control[i], strlen(force_control[i]));
        if (id >= 0)
            v->type[id] = WGML_TOKEN_CONTROL;
    }
    for (size_t i = 0; i < sizeof force_user / sizeof *force_user; i++) {
        int32_t id = tok_find(v, force_user[i], strlen(force_user[i]));
        if (id >= 0)
            v->type[id] = WGML_TOKEN_USER_DEFINED;
    }
    return WGML_OK;
}

static wgml_status load_merges(wgml_vocab *v, const wgml_gguf *g)
{
    const char *key = "tokenizer.ggml.merges";
    int64_t k = wgml_gguf_find_key(g, key);
    wgml_gguf_type et;
    uint64_t n, total = 0;
    if (k < 0)
        return bad_key(key, "missing (a gpt2 tokenizer needs its merges)");
    if (wgml_gguf_get_array(g, key, &et, &n) || et != WGML_GGUF_STRING)
        return bad_key(key, "not an array of strings");
    if (n > INT32_MAX)
        return bad_key(key, "more than 2^31 merges");
    for (uint64_t i = 0; i < n; i++) {
        size_t len;
        wgml_gguf_array_string_at(g, k, i, NULL, &len);
        if (len > UINT32_MAX)
            return bad_key(key, "a merge longer than 4 GiB");
        total += len + 1;
    }
    v->mtext = malloc(total ? total : 1);
    v->merge = malloc((n ? n : 1) * sizeof *v->merge);
    if (!v->mtext || !v->merge)
        return wgml_error(WGML_ERR_OOM, "tokenizer: out of host memory for %" PRIu64 " merges", n);
    uint64_t off = 0;
    size_t m = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        wgml_gguf_array_string_at(g, k, i, &s, &len);
        /* "left right", split at the first space after the first byte;
         * a line without one has no effect (llama.cpp stores an empty pair) */
        if (len < 2 || !memchr(s + 1, ' ', len - 1))
            continue;
        memcpy(v->mtext + off, s, len);
        v->mtext[off + len] = 0;
        v->merge[m++] = (tok_ent){off, (uint32_t)len, (int32_t)i};
        off += len + 1;
    }
    v->n_merges = m;
    if (!tok_map_build(&v->mmap, v->mtext, v->merge, m, false))
        return wgml_error(WGML_ERR_OOM, "tokenizer: out of host memory for the merge map");
    return WGML_OK;
}

typedef struct special_key {
    uint32_t len;
    int32_t id;
} special_key;

static int by_length_desc(const void *a, const void *b)
{
    const special_key *x = a, *y = b;
    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static wgml_status load_specials(wgml_vocab *v)
{
    size_t n = 0;
    for (int32_t i = 0; i < v->n; i++)
        n += v->type[i] == WGML_TOKEN_CONTROL || v->type[i] == WGML_TOKEN_USER_DEFINED ||
             v->type[i] == WGML_TOKEN_UNKNOWN;
    v->special = malloc((n ? n : 1) * sizeof *v->special);
    special_key *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!v->special || !keys) {
        free(keys);
        return wgml_error(WGML_ERR_OOM, "tokenizer: out of host memory");
    }
    for (int32_t i = 0; i < v->n; i++)
        if (v->type[i] == WGML_TOKEN_CONTROL || v->type[i] == WGML_TOKEN_USER_DEFINED ||
            v->type[i] == WGML_TOKEN_UNKNOWN)
            keys[v->n_special++] = (special_key){v->tok[i].len, i};
    /* longest first, so "<|im_start|>" wins over a shorter token inside it */
    qsort(keys, v->n_special, sizeof *keys, by_length_desc);
    for (size_t i = 0; i < v->n_special; i++)
        v->special[i] = keys[i].id;
    free(keys);
    return WGML_OK;
}

static wgml_status load(wgml_vocab *v, const wgml_gguf *g)
{
    const char *model;
    size_t mlen;
    const char *key = "tokenizer.ggml.model";
    if (wgml_gguf_find_key(g, key) < 0)
        return bad_key(key, "missing: the file has no tokenizer");
    if (wgml_gguf_get_string(g, key, &model, &mlen))
        return bad_key(key, "not a string");
    if (mlen == 5 && memcmp(model, "llama", 5) == 0) {
        v->kind = WGML_VOCAB_SPM;
        v->bos = 1, v->eos = 2, v->unk = 0, v->pad = -1;
        v->add_bos = true, v->add_space_prefix = true;
        snprintf(v->pre_name, sizeof v->pre_name, "spm");
    } else if (mlen == 4 && memcmp(model, "gpt2", 4) == 0) {
        v->kind = WGML_VOCAB_BPE;
        v->bos = 11, v->eos = 11, v->unk = -1, v->pad = -1; /* llama.cpp's gpt2 defaults */
        const char *pre = "default";
        size_t plen = 7;
        if (wgml_gguf_find_key(g, "tokenizer.ggml.pre") >= 0 &&
            wgml_gguf_get_string(g, "tokenizer.ggml.pre", &pre, &plen))
            return bad_key("tokenizer.ggml.pre", "not a string");
        v->pre = TOK_PRE_DEFAULT;
        snprintf(v->pre_name, sizeof v->pre_name, "default");
        for (size_t i = 0; i < sizeof pre_names / sizeof *pre_names; i++)
            if (strlen(pre_names[i].name) == plen && memcmp(pre_names[i].name, pre, plen) == 0) {
                v->pre = pre_names[i].pre;
                v->ignore_merges = pre_names[i].ignore_merges;
                v->add_bos = pre_names[i].add_bos;
                snprintf(v->pre_name, sizeof v->pre_name, "%s", pre_names[i].name);
            }
    } else
        return wgml_error(WGML_ERR_UNSUPPORTED, "tokenizer: model '%.*s' is not supported (llama and gpt2 are)",
                          (int)(mlen > 64 ? 64 : mlen), model);
    wgml_status st = load_tokens(v, g);
    if (st || (v->kind == WGML_VOCAB_BPE && (st = load_merges(v, g))) || (st = load_specials(v)))
        return st;
    if (v->bos >= v->n)
        v->bos = -1;
    if (v->eos >= v->n)
        v->eos = -1;
    if (v->unk >= v->n)
        v->unk = -1;
    read_id(g, "tokenizer.ggml.bos_token_id", v->n, &v->bos);
    read_id(g, "tokenizer.ggml.eos_token_id", v->n, &v->eos);
    read_id(g, "tokenizer.ggml.unknown_token_id", v->n, &v->unk);
    read_id(g, "tokenizer.ggml.padding_token_id", v->n, &v->pad);
    read_bool(g, "tokenizer.ggml.add_bos_token", &v->add_bos);
    read_bool(g, "tokenizer.ggml.add_eos_token", &v->add_eos);
    read_bool(g, "tokenizer.ggml.add_space_prefix", &v->add_space_prefix);
    for (int b = 0; b < 256; b++) {
        char hex[8];
        snprintf(hex, sizeof hex, "<0x%02X>", b);
        v->byte_tok[b] = v->kind == WGML_VOCAB_SPM ? tok_find(v, hex, 6) : -1;
    }
    return WGML_OK;
}

wgml_status wgml_vocab_load(const wgml_gguf *g, wgml_vocab **out)
{
    if (!g || !out)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_vocab_load: NULL argument");
    *out = NULL;
    wgml_vocab *v = calloc(1, sizeof *v);
    if (!v)
        return wgml_error(WGML_ERR_OOM, "tokenizer: out of host memory");
    wgml_status st = load(v, g);
    if (st) {
        wgml_vocab_free(v);
        return st;
    }
    *out = v;
    return WGML_OK;
}

void wgml_vocab_free(wgml_vocab *v)
{
    if (!v)
        return;
    free(v->text);
    free(v->tok);
    free(v->score);
    free(v->type);
    free(v->map.tab);
    free(v->mtext);
    free(v->merge);
    free(v->mmap.tab);
    free(v->special);
    free(v);
}

/* ---------------------------------------------------------- accessors */

wgml_vocab_kind wgml_vocab_kind_of(const wgml_vocab *v) { return v ? v->kind : (wgml_vocab_kind)0; }
int32_t wgml_vocab_n_tokens(const wgml_vocab *v) { return v ? v->n : 0; }
int32_t wgml_vocab_bos(const wgml_vocab *v) { return v ? v->bos : -1; }
int32_t wgml_vocab_eos(const wgml_vocab *v) { return v ? v->eos : -1; }
int32_t wgml_vocab_unk(const wgml_vocab *v) { return v ? v->unk : -1; }
int32_t wgml_vocab_pad(const wgml_vocab *v) { return v ? v->pad : -1; }
bool wgml_vocab_add_bos(const wgml_vocab *v) { return v && v->add_bos; }
bool wgml_vocab_add_eos(const wgml_vocab *v) { return v && v->add_eos; }
const char *wgml_vocab_pre(const wgml_vocab *v) { return v ? v->pre_name : ""; }

const char *wgml_vocab_token_text(const wgml_vocab *v, int32_t id, size_t *len)
{
    if (!v || id < 0 || id >= v->n)
        return NULL;
    if (len)
        *len = v->tok[id].len;
    return tok_text(v, id);
}

wgml_token_type wgml_vocab_token_type(const wgml_vocab *v, int32_t id)
{
    return v && id >= 0 && id < v->n ? (wgml_token_type)v->type[id] : WGML_TOKEN_UNDEFINED;
}

float wgml_vocab_token_score(const wgml_vocab *v, int32_t id)
{
    return v && id >= 0 && id < v->n ? v->score[id] : 0.0f;
}

int32_t wgml_vocab_find(const wgml_vocab *v, const char *text, size_t len)
{
    return v && (text || !len) ? tok_find(v, text ? text : "", len) : -1;
}

/* ----------------------------------------------------------- tokenize */

typedef struct frag {
    size_t off, len;
    int32_t id; /* -1: raw text */
} frag;

typedef struct frag_vec {
    frag *f;
    size_t n, cap;
} frag_vec;

static bool frag_push(frag_vec *o, size_t off, size_t len, int32_t id)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 16;
        frag *p = realloc(o->f, cap * sizeof *p);
        if (!p)
            return false;
        o->f = p;
        o->cap = cap;
    }
    o->f[o->n++] = (frag){off, len, id};
    return true;
}

/* Splits the raw-text fragments at every occurrence of each special token
 * (longest first; control/unknown ones only when parse_special). */
static bool split_specials(const wgml_vocab *v, const char *text, size_t len, bool parse_special, frag_vec *fv)
{
    frag_vec tmp = {0};
    if (len && !frag_push(fv, 0, len, -1))
        return false;
    for (size_t s = 0; s < v->n_special; s++) {
        int32_t id = v->special[s];
        if (!parse_special && v->type[id] != WGML_TOKEN_USER_DEFINED)
            continue;
        const char *t = tok_text(v, id);
        size_t tl = v->tok[id].len;
        tmp.n = 0;
        for (size_t i = 0; i < fv->n; i++) {
            frag f = fv->f[i];
            if (f.id >= 0 || f.len < tl) {
                if (!frag_push(&tmp, f.off, f.len, f.id))
                    goto oom;
                continue;
            }
            size_t start = f.off, end = f.off + f.len;
            for (size_t p = f.off; p + tl <= end;) {
                const char *hit = memchr(text + p, t[0], end - tl + 1 - p); /* candidates by first byte */
                if (!hit)
                    break;
                p = (size_t)(hit - text);
                if (memcmp(text + p, t, tl) == 0) {
                    if ((p > start && !frag_push(&tmp, start, p - start, -1)) || !frag_push(&tmp, p, tl, id))
                        goto oom;
                    p += tl;
                    start = p;
                } else
                    p++;
            }
            if (start < end && !frag_push(&tmp, start, end - start, -1))
                goto oom;
        }
        frag_vec sw = *fv;
        *fv = tmp;
        tmp = sw;
    }
    free(tmp.f);
    return true;
oom:
    free(tmp.f);
    return false;
}

static wgml_status copy_out(const char *what, const void *src, size_t n, size_t elem, void *dst, size_t cap,
                            size_t *count)
{
    if (count)
        *count = n;
    if (!dst)
        return WGML_OK;
    if (n && cap)
        memcpy(dst, src, (n < cap ? n : cap) * elem);
    if (n > cap)
        return wgml_error(WGML_ERR_LIMIT, "tokenizer: %s needs room for %zu, the buffer holds %zu", what, n, cap);
    return WGML_OK;
}

wgml_status wgml_vocab_tokenize(const wgml_vocab *v, const char *text, size_t len, bool add_special,
                                bool parse_special, int32_t *ids, size_t cap, size_t *n_ids)
{
    if (n_ids)
        *n_ids = 0;
    if (!v || (!text && len) || !n_ids)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_vocab_tokenize: NULL argument");
    frag_vec fv = {0};
    tok_vec out = {0};
    if (!split_specials(v, text ? text : "", len, parse_special, &fv))
        goto oom;
    if (add_special && v->add_bos && v->bos >= 0)
        tok_push(&out, v->bos);
    bool prev_special = true; /* SPM: a space goes before text that starts the input or follows a special */
    for (size_t i = 0; i < fv.n; i++) {
        frag f = fv.f[i];
        if (f.id >= 0) {
            tok_push(&out, f.id);
            prev_special = true;
        } else if (v->kind == WGML_VOCAB_SPM) {
            tok_spm_fragment(v, text + f.off, f.len, v->add_space_prefix && prev_special, &out);
            prev_special = false;
        } else
            tok_bpe_fragment(v, text + f.off, f.len, &out);
    }
    if (add_special && v->add_eos && v->eos >= 0)
        tok_push(&out, v->eos);
    if (out.oom)
        goto oom;
    free(fv.f);
    wgml_status st = copy_out("the token ids", out.v, out.n, sizeof *out.v, ids, cap, n_ids);
    free(out.v);
    return st;
oom:
    free(fv.f);
    free(out.v);
    return wgml_error(WGML_ERR_OOM, "tokenizer: out of host memory tokenizing %zu bytes", len);
}

/* ------------------------------------------------------------- pieces */

/* Appends token id's bytes to buf (room for 4 x its text + 1 is enough). */
static size_t piece(const wgml_vocab *v, int32_t id, bool render_special, char *buf)
{
    uint8_t t = v->type[id];
    const char *s = tok_text(v, id);
    size_t len = v->tok[id].len, n = 0;
    if (t == WGML_TOKEN_CONTROL || t == WGML_TOKEN_UNKNOWN) {
        if (!render_special)
            return 0;
        memcpy(buf, s, len);
        return len;
    }
    if (t == WGML_TOKEN_USER_DEFINED) {
        memcpy(buf, s, len);
        return len;
    }
    if (v->kind == WGML_VOCAB_SPM) {
        if (t == WGML_TOKEN_BYTE) {
            unsigned b;
            char tail;
            /* "<0xXX>": the byte it stands for; anything else is dropped */
            if (len == 6 && sscanf(s, "<0x%2X%c", &b, &tail) == 2 && tail == '>')
                buf[n++] = (char)b;
            return n;
        }
        if (t != WGML_TOKEN_NORMAL)
            return 0;
        for (size_t i = 0; i < len; i++) {
            if (i + 2 < len && memcmp(s + i, "\xe2\x96\x81", 3) == 0) { /* U+2581 -> ' ' */
                buf[n++] = ' ';
                i += 2;
            } else
                buf[n++] = s[i];
        }
        return n;
    }
    if (t != WGML_TOKEN_NORMAL)
        return 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = tok_utf8_decode(s + i, len - i, &cp);
        int b = tok_cp_to_byte(cp);
        if (b >= 0)
            buf[n++] = (char)b;
        else /* not a GPT-2 byte code point: keep its UTF-8 */
            n += tok_utf8_encode(cp, buf + n);
        i += k;
    }
    return n;
}

wgml_status wgml_vocab_token_piece(const wgml_vocab *v, int32_t id, bool render_special, char *text, size_t cap,
                                   size_t *len)
{
    if (len)
        *len = 0;
    if (!v || !len)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_vocab_token_piece: NULL argument");
    if (id < 0 || id >= v->n)
        return wgml_error(WGML_ERR_INDEX, "tokenizer: token id %d is outside 0..%d", id, v->n - 1);
    /* a U+FFFD (3 bytes) per input byte at most */
    char *buf = malloc((size_t)v->tok[id].len * 3 + 4);
    if (!buf)
        return wgml_error(WGML_ERR_OOM, "tokenizer: out of host memory");
    size_t n = piece(v, id, render_special, buf);
    wgml_status st = copy_out("the piece", buf, n, 1, text, cap, len);
    free(buf);
    return st;
}

wgml_status wgml_vocab_detokenize(const wgml_vocab *v, const int32_t *ids, size_t n, bool render_special, char *text,
                                  size_t cap, size_t *len)
{
    if (len)
        *len = 0;
    if (!v || (!ids && n) || !len)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_vocab_detokenize: NULL argument");
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= v->n)
            return wgml_error(WGML_ERR_INDEX, "tokenizer: ids[%zu] = %d is outside 0..%d", i, ids[i], v->n - 1);
        total += (size_t)v->tok[ids[i]].len * 3 + 4; /* piece() writes at most 3 bytes per text byte */
    }
    char *buf = malloc(total + 1);
    if (!buf)
        return wgml_error(WGML_ERR_OOM, "tokenizer: out of host memory detokenizing %zu ids", n);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = piece(v, ids[i], render_special, buf + m);
        /* the leading space the tokenizer added comes off the first piece */
        if (i == 0 && v->add_space_prefix && k && buf[m] == ' ') {
            memmove(buf + m, buf + m + 1, k - 1);
            k--;
        }
        m += k;
    }
    wgml_status st = copy_out("the text", buf, m, 1, text, cap, len);
    if (text && m < cap)
        text[m] = 0;
    free(buf);
    return st;
}

static bool merge_before(const tok_merge *a, const tok_merge *b)
{
    return a->prio < b->prio || (a->prio == b->prio && a->left < b->left);
}

void tok_heap_push(tok_heap *q, tok_merge b)
{
    if (q->oom)
        return;
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        tok_merge *p = realloc(q->h, cap * sizeof *p);
        if (!p) {
            q->oom = true;
            return;
        }
        q->h = p;
        q->cap = cap;
    }
    size_t i = q->n++;
    while (i > 0 && merge_before(&b, &q->h[(i - 1) / 2])) {
        q->h[i] = q->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->h[i] = b;
}

tok_merge tok_heap_pop(tok_heap *q)
{
    tok_merge top = q->h[0], last = q->h[--q->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && merge_before(&q->h[c + 1], &q->h[c]))
            c++;
        if (!merge_before(&q->h[c], &last))
            break;
        q->h[i] = q->h[c];
        i = c;
    }
    if (q->n)
        q->h[i] = last;
    return top;
}
