/* Byte-level BPE (llama.cpp's "gpt2" vocab type).
 *
 * 1. Pre-tokenisation splits the text into words with the regexes of
 *    tokenizer.ggml.pre, written out by hand over code point classes
 *    (\p{L}, \p{N}, \p{P}, \s from unicode_data.c).  Several regexes apply
 *    in turn, each to the pieces of the one before; as a regex split does,
 *    text no alternative matches stays a piece of its own.
 * 2. Each word's UTF-8 bytes are mapped to GPT-2's printable code points
 *    (byte b -> U+00xx for the 188 printable ones, U+0100.. for the rest).
 * 3. Adjacent symbols are merged by merge rank (lowest first; ties: the
 *    leftmost), as long as "left right" is a merge. */
#include "tok_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- byte mapping */

static bool printable(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; }

/* The 68 non-printable bytes, in order, map to U+0100..U+0143: 0x00-0x20
 * (33 of them), 0x7F-0xA0 (34) and 0xAD. */
uint32_t tok_byte_to_cp(uint8_t b)
{
    if (printable(b))
        return b;
    return 0x100 + (b <= 0x20 ? b : b <= 0xA0 ? 33u + (b - 0x7Fu) : 67u);
}

int tok_cp_to_byte(uint32_t cp)
{
    if (cp < 0x100)
        return printable(cp) ? (int)cp : -1;
    uint32_t k = cp - 0x100;
    return k < 33 ? (int)k : k < 67 ? (int)(0x7F + k - 33) : k == 67 ? 0xAD : -1;
}

size_t tok_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const uint8_t *u = (const uint8_t *)s;
    size_t k = tok_utf8_len(u[0]);
    /* a stray continuation byte, or a sequence cut short or with a bad
     * continuation, is one U+FFFD for its first byte (as llama.cpp) */
    if ((u[0] & 0xC0) == 0x80 || (u[0] & 0xF8) == 0xF8 || k > n) {
        *cp = 0xFFFD;
        return 1;
    }
    for (size_t i = 1; i < k; i++)
        if ((u[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
    static const uint8_t lead_mask[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t c = u[0] & lead_mask[k];
    for (size_t i = 1; i < k; i++)
        c = (c << 6) | (u[i] & 0x3F);
    *cp = c;
    return k;
}

size_t tok_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | ((cp >> 18) & 0x07));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ------------------------------------------------------ pre-tokenizers */

/* Every matcher sees one piece c[0..n) (its end is the end of text for
 * lookaheads) and returns the length of the match at i, 0 for none. */
typedef size_t (*matcher)(const uint32_t *c, const uint8_t *f, size_t n, size_t i);

#define IS_L(i) (f[i] & TOK_L)
#define IS_N(i) (f[i] & TOK_N)
#define IS_WS(i) (f[i] & TOK_WS)
#define IS_OTHER(i) (!(f[i] & (TOK_L | TOK_N | TOK_WS))) /* [^\s\p{L}\p{N}] */

static size_t run(const uint8_t *f, size_t n, size_t i, unsigned cls)
{
    size_t j = i;
    while (j < n && (f[j] & cls))
        j++;
    return j - i;
}

static size_t run_other(const uint8_t *f, size_t n, size_t i)
{
    size_t j = i;
    while (j < n && IS_OTHER(j))
        j++;
    return j - i;
}

static uint32_t lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* 's 't 're 've 'm 'll 'd, ASCII case-insensitive when nocase */
static size_t contraction(const uint32_t *c, size_t n, size_t i, bool nocase)
{
    if (c[i] != '\'' || i + 1 >= n)
        return 0;
    uint32_t a = nocase ? lower(c[i + 1]) : c[i + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 2;
    if (i + 2 >= n)
        return 0;
    uint32_t b = nocase ? lower(c[i + 2]) : c[i + 2];
    return (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l') ? 3 : 0;
}

/* \s+(?!\S) then \s+: a whitespace run keeps its last character for the
 * word after it, unless the run ends the text or is one character long */
static size_t ws_tail(const uint8_t *f, size_t n, size_t i)
{
    size_t k = run(f, n, i, TOK_WS);
    if (k == 0)
        return 0;
    return i + k == n || k == 1 ? k : k - 1;
}

/* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t m_gpt2(const uint32_t *c, const uint8_t *f, size_t n, size_t i)
{
    size_t k = contraction(c, n, i, false);
    if (k)
        return k;
    size_t j = c[i] == ' ' && i + 1 < n ? i + 1 : i; /* the optional leading space */
    if (IS_L(j) && (j > i || IS_L(i)))
        return j - i + run(f, n, j, TOK_L);
    if (IS_N(j))
        return j - i + run(f, n, j, TOK_N);
    if (IS_OTHER(j))
        return j - i + run_other(f, n, j);
    return ws_tail(f, n, i);
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
 *  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+   (Llama 3; Qwen2: one digit) */
static size_t m_llama3_like(const uint32_t *c, const uint8_t *f, size_t n, size_t i, size_t max_digits)
{
    size_t k = contraction(c, n, i, true);
    if (k)
        return k;
    bool nl = c[i] == '\r' || c[i] == '\n';
    if (!nl && !IS_L(i) && !IS_N(i) && i + 1 < n && IS_L(i + 1))
        return 1 + run(f, n, i + 1, TOK_L);
    if (IS_L(i))
        return run(f, n, i, TOK_L);
    if (IS_N(i)) {
        k = run(f, n, i, TOK_N);
        return k < max_digits ? k : max_digits;
    }
    size_t j = c[i] == ' ' && i + 1 < n && IS_OTHER(i + 1) ? i + 1 : i;
    if (IS_OTHER(j)) {
        j += run_other(f, n, j);
        while (j < n && (c[j] == '\r' || c[j] == '\n'))
            j++;
        return j - i;
    }
    k = run(f, n, i, TOK_WS);
    for (size_t e = i + k; e > i; e--) /* \s*[\r\n]+ ends after the run's last newline */
        if (c[e - 1] == '\r' || c[e - 1] == '\n')
            return e - i;
    return ws_tail(f, n, i);
}

static size_t m_llama3(const uint32_t *c, const uint8_t *f, size_t n, size_t i)
{
    return m_llama3_like(c, f, n, i, 3);
}

static size_t m_qwen2(const uint32_t *c, const uint8_t *f, size_t n, size_t i)
{
    return m_llama3_like(c, f, n, i, 1);
}

/* \p{N} */
static size_t m_digit(const uint32_t *c, const uint8_t *f, size_t n, size_t i) { return IS_N(i) ? 1 : 0; }

/* \p{N}+ */
static size_t m_digits(const uint32_t *c, const uint8_t *f, size_t n, size_t i) { return run(f, n, i, TOK_N); }

/* [\p{P}\$\+<=>\^~\|]+ */
static size_t m_punct(const uint32_t *c, const uint8_t *f, size_t n, size_t i)
{
    size_t j = i;
    while (j < n && ((f[j] & TOK_P) || (c[j] < 128 && strchr("$+<=>^~|", (int)c[j]) && c[j])))
        j++;
    return j - i;
}

/* [0-9][0-9][0-9] */
static size_t m_three(const uint32_t *c, const uint8_t *f, size_t n, size_t i)
{
    for (size_t k = 0; k < 3; k++)
        if (i + k >= n || c[i + k] < '0' || c[i + k] > '9')
            return 0;
    return 3;
}

typedef struct cuts {
    size_t *at; /* piece ends, increasing */
    size_t n, cap;
    bool oom;
} cuts;

static void cut(cuts *o, size_t end)
{
    if (o->oom || (o->n ? o->at[o->n - 1] == end : end == 0))
        return;
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        size_t *p = realloc(o->at, cap * sizeof *p);
        if (!p) {
            o->oom = true;
            return;
        }
        o->at = p;
        o->cap = cap;
    }
    o->at[o->n++] = end;
}

/* Applies one regex to every piece of `in`, writing the finer pieces. */
static void split(const uint32_t *c, const uint8_t *f, const cuts *in, matcher m, cuts *out)
{
    out->n = 0;
    for (size_t p = 0, a = 0; p < in->n; a = in->at[p++]) {
        size_t b = in->at[p], i = a;
        while (i < b) {
            size_t k = m(c + a, f + a, b - a, i - a);
            if (k) {
                cut(out, i); /* the unmatched text before, if any */
                cut(out, i + k);
                i += k;
            } else
                i++;
        }
        cut(out, b);
    }
}

static void pre_tokenize(tok_pre pre, const uint32_t *c, const uint8_t *f, size_t n, cuts *a, cuts *b)
{
    static const matcher stages[][4] = {
        [TOK_PRE_DEFAULT] = {m_punct, m_gpt2, m_digits, m_three},
        [TOK_PRE_GPT2] = {m_gpt2},
        [TOK_PRE_LLAMA3] = {m_llama3},
        [TOK_PRE_QWEN2] = {m_qwen2},
        [TOK_PRE_SMOLLM] = {m_digit, m_gpt2},
    };
    a->n = 0;
    cut(a, n);
    for (int s = 0; s < 4 && stages[pre][s]; s++) {
        split(c, f, a, stages[pre][s], b);
        cuts t = *a;
        *a = *b;
        *b = t;
    }
}

/* ---------------------------------------------------------------- BPE */

typedef struct bsym {
    size_t off, n;
    int prev, next;
} bsym;

typedef struct bpe_ws {
    char *key; /* "left right" scratch */
    size_t key_cap;
    bsym *sy;
    size_t sy_cap;
    tok_heap q;
    bool oom;
} bpe_ws;

static void try_merge(const wgml_vocab *v, const char *w, bpe_ws *ws, int l, int r)
{
    if (l < 0 || r < 0)
        return;
    const bsym *a = &ws->sy[l], *b = &ws->sy[r];
    size_t kl = a->n + 1 + b->n;
    if (kl > ws->key_cap) {
        char *p = realloc(ws->key, kl * 2);
        if (!p) {
            ws->oom = true;
            return;
        }
        ws->key = p;
        ws->key_cap = kl * 2;
    }
    memcpy(ws->key, w + a->off, a->n);
    ws->key[a->n] = ' ';
    memcpy(ws->key + a->n + 1, w + b->off, b->n);
    int32_t rank = tok_map_get(&v->mmap, v->mtext, ws->key, kl);
    if (rank >= 0)
        tok_heap_push(&ws->q, (tok_merge){rank, l, r, a->n + b->n});
}

/* One pre-tokenized word, already in GPT-2 code points (w[0..n) UTF-8). */
static void bpe_word(const wgml_vocab *v, const char *w, size_t n, bpe_ws *ws, tok_vec *out)
{
    if (v->ignore_merges) { /* Llama 3: a word that is a token is taken whole */
        int32_t id = tok_find(v, w, n);
        if (id >= 0) {
            tok_push(out, id);
            return;
        }
    }
    if (n > ws->sy_cap) {
        bsym *p = realloc(ws->sy, n * sizeof *p);
        if (!p) {
            ws->oom = true;
            return;
        }
        ws->sy = p;
        ws->sy_cap = n;
    }
    size_t ns = 0;
    for (size_t off = 0; off < n; ns++) {
        size_t k = tok_utf8_len((uint8_t)w[off]);
        if (k > n - off)
            k = n - off;
        ws->sy[ns] = (bsym){off, k, (int)ns - 1, off + k < n ? (int)ns + 1 : -1};
        off += k;
    }
    ws->q.n = 0;
    for (size_t i = 1; i < ns; i++)
        try_merge(v, w, ws, (int)i - 1, (int)i);
    while (ws->q.n && !ws->q.oom && !ws->oom) {
        tok_merge b = tok_heap_pop(&ws->q);
        bsym *l = &ws->sy[b.left], *r = &ws->sy[b.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != b.size)
            continue; /* stale */
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0)
            ws->sy[r->next].prev = b.left;
        try_merge(v, w, ws, l->prev, b.left);
        try_merge(v, w, ws, b.left, l->next);
    }
    if (ws->q.oom)
        ws->oom = true;
    for (int i = ns ? 0 : -1; i >= 0; i = ws->sy[i].next) {
        int32_t id = tok_find(v, w + ws->sy[i].off, ws->sy[i].n);
        if (id >= 0) {
            tok_push(out, id);
            continue;
        }
        /* no such token: each byte as a one-byte token if there is one */
        for (size_t j = 0; j < ws->sy[i].n; j++) {
            id = tok_find(v, w + ws->sy[i].off + j, 1);
            if (id >= 0)
                tok_push(out, id);
        }
    }
}

void tok_bpe_fragment(const wgml_vocab *v, const char *s, size_t len, tok_vec *out)
{
    uint32_t *c = malloc((len ? len : 1) * sizeof *c);
    uint8_t *f = malloc(len ? len : 1);
    char *w = NULL;
    cuts a = {0}, b = {0};
    bpe_ws ws = {0};
    size_t n = 0;
    if (!c || !f)
        goto done;
    for (size_t i = 0; i < len; n++) {
        i += tok_utf8_decode(s + i, len - i, &c[n]);
        f[n] = (uint8_t)tok_cp_flags(c[n]);
    }
    if (n == 0)
        goto done;
    pre_tokenize(v->pre, c, f, n, &a, &b);
    if (a.oom || b.oom)
        goto done;
    size_t longest = 0;
    for (size_t p = 0, start = 0; p < a.n; start = a.at[p++])
        longest = a.at[p] - start > longest ? a.at[p] - start : longest;
    /* a code point re-encodes to <= 4 bytes, each mapped to a code point of <= 2 */
    if (!(w = malloc(longest * 8 + 8)))
        goto done;
    for (size_t p = 0, start = 0; p < a.n; start = a.at[p++]) {
        size_t wl = 0;
        for (size_t i = start; i < a.at[p]; i++) {
            char u[4];
            size_t k = tok_utf8_encode(c[i], u);
            for (size_t j = 0; j < k; j++)
                wl += tok_utf8_encode(tok_byte_to_cp((uint8_t)u[j]), w + wl);
        }
        bpe_word(v, w, wl, &ws, out);
        if (ws.oom)
            break;
    }
done:
    if (!c || !f || (n && !w) || a.oom || b.oom || ws.oom)
        out->oom = true;
    free(c);
    free(f);
    free(w);
    free(a.at);
    free(b.at);
    free(ws.key);
    free(ws.sy);
    free(ws.q.h);
}
