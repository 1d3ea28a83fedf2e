/* Tokenizer: ids equal llama.cpp's for every case of every fixture, and
 * detokenize(tokenize(s)) == s.  A fixture is JSON:
 *   {"model": "<gguf file name>",
 *    "cases": [{"text": "...", "add_special": bool, "parse_special": bool, "ids": [...]}]}
 * (scripts/tokenizer_reference.py writes them with llama.cpp through
 * xllamacpp).  The model is looked up by name in $WGML_MODEL_DIR, models/
 * and the corpus folder; a fixture whose model is absent prints SKIP.
 * usage: test_tokenizer CORPUS_DIR [FIXTURE.json ...] */
#include "harness.h"
#include "wgml_llm.h"

#include <time.h>

static const char *corpus_dir = "tests/gguf_corpus";
static char **fixtures;
static int n_fixtures;

/* ------------------------------------------------------- a JSON subset */

typedef struct jcase {
    char *text;
    size_t len;
    bool add_special, parse_special;
    int32_t *ids;
    size_t n_ids;
} jcase;

typedef struct jfix {
    char model[256];
    jcase *cases;
    size_t n;
} jfix;

typedef struct jp {
    const char *p, *end;
    bool bad;
} jp;

static void ws(jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static bool lit(jp *j, const char *s)
{
    ws(j);
    size_t n = strlen(s);
    if ((size_t)(j->end - j->p) >= n && memcmp(j->p, s, n) == 0) {
        j->p += n;
        return true;
    }
    return false;
}

static unsigned hex4(jp *j)
{
    unsigned v = 0;
    for (int i = 0; i < 4 && j->p < j->end; i++, j->p++) {
        char c = *j->p;
        v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 32) - 'a' + 10);
    }
    return v;
}

static size_t put_utf8(unsigned cp, char *o)
{
    if (cp < 0x80)
        return o[0] = (char)cp, 1;
    if (cp < 0x800)
        return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 63)), 2;
    if (cp < 0x10000)
        return o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 63)), o[2] = (char)(0x80 | (cp & 63)), 3;
    o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 63));
    o[2] = (char)(0x80 | (cp >> 6 & 63)), o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* A string (escapes and \uXXXX surrogate pairs decoded); malloc'd. */
static char *jstring(jp *j, size_t *len)
{
    ws(j);
    if (j->p >= j->end || *j->p != '"') {
        j->bad = true;
        return NULL;
    }
    j->p++;
    char *o = malloc((size_t)(j->end - j->p) + 1);
    size_t n = 0;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c != '\\') {
            o[n++] = c;
            continue;
        }
        if (j->p >= j->end)
            break;
        c = *j->p++;
        switch (c) {
        case 'n': o[n++] = '\n'; break;
        case 't': o[n++] = '\t'; break;
        case 'r': o[n++] = '\r'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'u': {
            unsigned cp = hex4(j);
            if (cp >= 0xD800 && cp < 0xDC00 && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
                j->p += 2;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4(j) - 0xDC00);
            }
            n += put_utf8(cp, o + n);
            break;
        }
        default: o[n++] = c;
        }
    }
    if (j->p < j->end)
        j->p++;
    else
        j->bad = true;
    o[n] = 0;
    *len = n;
    return o;
}

static void skip_value(jp *j);

static void parse_case(jp *j, jcase *c)
{
    if (!lit(j, "{")) {
        j->bad = true;
        return;
    }
    size_t cap = 0;
    do {
        size_t kl;
        char *key = jstring(j, &kl);
        if (!key || !lit(j, ":")) {
            free(key);
            j->bad = true;
            return;
        }
        if (!strcmp(key, "text"))
            c->text = jstring(j, &c->len);
        else if (!strcmp(key, "add_special"))
            c->add_special = lit(j, "true") || (lit(j, "false") && false);
        else if (!strcmp(key, "parse_special"))
            c->parse_special = lit(j, "true") || (lit(j, "false") && false);
        else if (!strcmp(key, "ids")) {
            if (!lit(j, "["))
                j->bad = true;
            while (!j->bad && !lit(j, "]")) {
                ws(j);
                char *e;
                long v = strtol(j->p, &e, 10);
                if (e == j->p) {
                    j->bad = true;
                    break;
                }
                j->p = e;
                if (c->n_ids == cap) {
                    cap = cap ? cap * 2 : 16;
                    c->ids = realloc(c->ids, cap * sizeof *c->ids);
                }
                c->ids[c->n_ids++] = (int32_t)v;
                lit(j, ",");
            }
        } else
            skip_value(j);
        free(key);
    } while (!j->bad && lit(j, ","));
    if (!lit(j, "}"))
        j->bad = true;
}

/* Any value, nested arrays and objects included (fixtures may carry
 * fields this test does not read, e.g. pieces or generator info). */
static void skip_value(jp *j)
{
    ws(j);
    size_t n;
    int depth = 0;
    while (j->p < j->end) {
        char c = *j->p;
        if (c == '"') {
            free(jstring(j, &n));
        } else if (c == '[' || c == '{') {
            depth++;
            j->p++;
        } else if (c == ']' || c == '}') {
            if (depth == 0)
                return;
            depth--;
            j->p++;
        } else if (c == ',' && depth == 0) {
            return;
        } else
            j->p++;
        if (depth == 0 && (c == '"' || c == ']' || c == '}'))
            return;
    }
}

static void fix_free(jfix *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->cases[i].text);
        free(f->cases[i].ids);
    }
    free(f->cases);
}

static bool load_fixture(const char *path, jfix *f)
{
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return false;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, fp);
    fclose(fp);
    jp j = {buf, buf + got, false};
    size_t cap = 0;
    if (!lit(&j, "{"))
        j.bad = true;
    while (!j.bad) {
        size_t kl;
        char *key = jstring(&j, &kl);
        if (!key || !lit(&j, ":")) {
            free(key);
            j.bad = true;
            break;
        }
        if (!strcmp(key, "model")) {
            size_t ml;
            char *m = jstring(&j, &ml);
            snprintf(f->model, sizeof f->model, "%s", m ? m : "");
            free(m);
        } else if (!strcmp(key, "cases")) {
            if (!lit(&j, "["))
                j.bad = true;
            while (!j.bad && !lit(&j, "]")) {
                if (f->n == cap) {
                    cap = cap ? cap * 2 : 64;
                    f->cases = realloc(f->cases, cap * sizeof *f->cases);
                }
                memset(&f->cases[f->n], 0, sizeof *f->cases);
                parse_case(&j, &f->cases[f->n++]);
                lit(&j, ",");
            }
        } else
            skip_value(&j);
        free(key);
        if (!lit(&j, ","))
            break;
    }
    free(buf);
    return !j.bad;
}

/* --------------------------------------------------------------- cases */

static bool find_model(const char *name, char *path, size_t cap)
{
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
#ifdef WGML_SOURCE_DIR /* ctest runs in build/tests: models/ of the checkout */
    const char *repo_models = WGML_SOURCE_DIR "/models";
#else
    const char *repo_models = "models";
#endif
    const char *dirs[4] = {getenv("WGML_MODEL_DIR"), repo_models, "models", corpus_dir};
    for (int i = 0; i < 4; i++) {
        if (!dirs[i] || !*dirs[i])
            continue;
        snprintf(path, cap, "%s/%s", dirs[i], base);
        FILE *f = fopen(path, "rb");
        if (f) {
            fclose(f);
            return true;
        }
    }
    return false;
}

static void print_ids(const char *what, const int32_t *ids, size_t n)
{
    printf("      %s:", what);
    for (size_t i = 0; i < n && i < 40; i++)
        printf(" %d", ids[i]);
    printf("%s\n", n > 40 ? " ..." : "");
}

static void run_fixture(const char *path)
{
    jfix f;
    if (!load_fixture(path, &f)) {
        CHECK(0, "cannot parse fixture %s", path);
        fix_free(&f);
        return;
    }
    char model[1024];
    if (!find_model(f.model, model, sizeof model)) {
        printf("    SKIP %s: model %s not found ($WGML_MODEL_DIR, models/, %s)\n", path, f.model, corpus_dir);
        fix_free(&f);
        return;
    }
    wgml_gguf *g = NULL;
    wgml_vocab *v = NULL;
    CHECK_OK(wgml_gguf_open(model, &g));
    if (g)
        CHECK_OK(wgml_vocab_load(g, &v));
    wgml_gguf_close(g); /* the vocab keeps its own copy */
    size_t bad = 0, round = 0;
    for (size_t i = 0; v && i < f.n; i++) {
        jcase *c = &f.cases[i];
        size_t n = 0;
        wgml_status st = wgml_vocab_tokenize(v, c->text, c->len, c->add_special, c->parse_special, NULL, 0, &n);
        int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
        if (st == WGML_OK)
            st = wgml_vocab_tokenize(v, c->text, c->len, c->add_special, c->parse_special, ids, n, &n);
        bool same = st == WGML_OK && n == c->n_ids && (n == 0 || memcmp(ids, c->ids, n * sizeof *ids) == 0);
        if (!same && bad++ < 8) {
            printf("    MISMATCH %s case %zu (add_special %d, parse_special %d): \"%.60s\"\n", f.model, i,
                   c->add_special, c->parse_special, c->text);
            print_ids("llama.cpp", c->ids, c->n_ids);
            print_ids("wgml     ", ids, n);
        }
        /* round trip: without added BOS/EOS; an SPM vocab puts a space
         * before text that follows a special token, which decode keeps,
         * and writes ' ' as U+2581, so a U+2581 in the text decodes as ' ' */
        bool has_special = false;
        for (size_t k = 0; k < n; k++) {
            wgml_token_type t = wgml_vocab_token_type(v, ids[k]);
            has_special |= t == WGML_TOKEN_CONTROL || t == WGML_TOKEN_USER_DEFINED || t == WGML_TOKEN_UNKNOWN;
        }
        bool spm = wgml_vocab_kind_of(v) == WGML_VOCAB_SPM;
        if (st == WGML_OK && !c->add_special && !(spm && (has_special || strstr(c->text, "\xe2\x96\x81")))) {
            size_t len = 0;
            CHECK_OK(wgml_vocab_detokenize(v, ids, n, true, NULL, 0, &len));
            char *text = malloc(len + 1);
            CHECK_OK(wgml_vocab_detokenize(v, ids, n, true, text, len + 1, &len));
            CHECK(len == c->len && memcmp(text, c->text, len) == 0, "%s case %zu: decode gives \"%.*s\" for \"%s\"",
                  f.model, i, (int)len, text, c->text);
            free(text);
            round++;
        }
        free(ids);
    }
    CHECK(bad == 0, "%s: %zu of %zu cases differ from llama.cpp", path, bad, f.n);
    printf("    %s (%s, pre %s): %zu cases, %zu differ, %zu round trips\n", f.model,
           v && wgml_vocab_kind_of(v) == WGML_VOCAB_SPM ? "spm" : "bpe", v ? wgml_vocab_pre(v) : "?", f.n, bad,
           round);
    wgml_vocab_free(v);
    fix_free(&f);
}

static void test_fixtures(void)
{
    if (n_fixtures == 0)
        printf("    SKIP: no fixture files given\n");
    for (int i = 0; i < n_fixtures; i++)
        run_fixture(fixtures[i]);
}

static wgml_vocab *corpus_vocab(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", corpus_dir, name);
    wgml_gguf *g = NULL;
    wgml_vocab *v = NULL;
    CHECK_OK(wgml_gguf_open(path, &g));
    if (g)
        CHECK_OK(wgml_vocab_load(g, &v));
    wgml_gguf_close(g);
    return v;
}

static void test_api(void)
{
    wgml_vocab *v = corpus_vocab("vocab_bpe.gguf");
    if (!v)
        return;
    CHECK(wgml_vocab_kind_of(v) == WGML_VOCAB_BPE && !strcmp(wgml_vocab_pre(v), "smollm"), "kind/pre");
    CHECK(wgml_vocab_bos(v) == 1 && wgml_vocab_eos(v) == 2 && wgml_vocab_unk(v) == 0 && wgml_vocab_pad(v) == 2,
          "special ids");
    CHECK(!wgml_vocab_add_bos(v) && !wgml_vocab_add_eos(v), "add_bos/add_eos");
    const char *text = "Hello world hello";
    int32_t ids[64];
    size_t n = 0, n2 = 0;
    CHECK_OK(wgml_vocab_tokenize(v, text, strlen(text), false, false, NULL, 0, &n));
    CHECK(n >= 3, "%zu ids", n);
    CHECK(wgml_vocab_tokenize(v, text, strlen(text), false, false, ids, 1, &n2) == WGML_ERR_LIMIT && n2 == n,
          "short buffer: %zu", n2);
    CHECK_OK(wgml_vocab_tokenize(v, text, strlen(text), false, false, ids, 64, &n2));
    char buf[64];
    size_t len;
    CHECK(wgml_vocab_token_piece(v, -1, true, buf, sizeof buf, &len) == WGML_ERR_INDEX, "bad id");
    CHECK(wgml_vocab_token_piece(v, wgml_vocab_n_tokens(v), true, buf, sizeof buf, &len) == WGML_ERR_INDEX,
          "id past the end");
    CHECK_OK(wgml_vocab_token_piece(v, 1, false, buf, sizeof buf, &len));
    CHECK(len == 0, "control token without render_special: %zu bytes", len);
    CHECK_OK(wgml_vocab_token_piece(v, 1, true, buf, sizeof buf, &len));
    CHECK(len == 12 && memcmp(buf, "<|im_start|>", 12) == 0, "%.*s", (int)len, buf);
    CHECK(wgml_vocab_detokenize(v, ids, n, true, buf, 4, &len) == WGML_ERR_LIMIT && len == strlen(text),
          "short text buffer: %zu", len);
    int32_t bad_id = 1 << 30;
    CHECK(wgml_vocab_detokenize(v, &bad_id, 1, true, buf, sizeof buf, &len) == WGML_ERR_INDEX, "bad id");
    CHECK(wgml_vocab_find(v, "<tool>", 6) == 3, "find");
    wgml_vocab_free(v);

    /* a GGUF without a tokenizer */
    char path[1024];
    snprintf(path, sizeof path, "%s/types_v3.gguf", corpus_dir);
    wgml_gguf *g = NULL;
    CHECK_OK(wgml_gguf_open(path, &g));
    CHECK(wgml_vocab_load(g, &v) == WGML_ERR_INVALID_ARG && !v, "no tokenizer");
    CHECK(strstr(wgml_last_error(), "tokenizer.ggml.model") != NULL, "%s", wgml_last_error());
    wgml_gguf_close(g);
}

/* A long text must tokenize in time linear-ish in its length (the heap
 * merge, not a rescan per merge). */
static void test_long_text(void)
{
    const char *names[] = {"vocab_spm.gguf", "vocab_bpe_llama3.gguf"};
    size_t n = 1 << 20;
    char *text = malloc(n);
    for (size_t i = 0; i < n; i++)
        text[i] = "The quick brown fox, 123 jumps!\n"[i % 32];
    for (int k = 0; k < 2; k++) {
        wgml_vocab *v = corpus_vocab(names[k]);
        if (!v)
            continue;
        clock_t t0 = clock();
        size_t m = 0;
        CHECK_OK(wgml_vocab_tokenize(v, text, n, true, true, NULL, 0, &m));
        double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
        printf("    %s: 1 MiB -> %zu ids in %.2f s\n", names[k], m, s);
        CHECK(m > 0 && s < 20, "%zu ids, %.2f s", m, s);
        /* and one 64 KiB word without spaces: merges deep in one symbol list */
        memset(text, 'a', 65536);
        t0 = clock();
        CHECK_OK(wgml_vocab_tokenize(v, text, 65536, false, false, NULL, 0, &m));
        s = (double)(clock() - t0) / CLOCKS_PER_SEC;
        CHECK(s < 10, "one long word: %.2f s", s);
        for (size_t i = 0; i < 65536; i++)
            text[i] = "The quick brown fox, 123 jumps!\n"[i % 32];
        wgml_vocab_free(v);
    }
    free(text);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        corpus_dir = argv[1];
    fixtures = argv + 2;
    n_fixtures = argc > 2 ? argc - 2 : 0;
    static const t_case cases[] = {
        {"api", test_api},
        {"fixtures", test_fixtures},
        {"long_text", test_long_text},
    };
    return t_run(cases, sizeof cases / sizeof *cases, getenv("WGML_TEST_ONLY"));
}
