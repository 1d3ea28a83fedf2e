/* SentencePiece-style tokenisation (llama.cpp's "llama" vocab type).
 *
 * The text, with ' ' written as U+2581 and a leading U+2581 when the caller
 * asks for one, is cut into UTF-8 characters; then, repeatedly, the
 * adjacent pair whose concatenation is a vocabulary token with the highest
 * score is merged (ties: the leftmost pair).  A final piece that is no
 * token (only single characters can be: merges only make tokens) becomes
 * byte tokens <0xXX>. */
#include "tok_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct sym {
    size_t off, n; /* bytes of the text; n == 0 once merged away */
    int prev, next;
} sym;

static void try_bigram(const wgml_vocab *v, const char *t, const sym *s, int l, int r, tok_heap *q)
{
    if (l < 0 || r < 0)
        return;
    size_t size = s[l].n + s[r].n;
    int32_t id = tok_find(v, t + s[l].off, size);
    if (id < 0)
        return;
    tok_heap_push(q, (tok_merge){-(double)v->score[id], l, r, size});
}

static void byte_fallback(const wgml_vocab *v, const char *p, size_t n, tok_vec *out)
{
    for (size_t j = 0; j < n; j++) {
        uint8_t b = (uint8_t)p[j];
        int32_t id = v->byte_tok[b];
        if (id < 0) /* no <0xXX>: the byte as a one-character token, else unknown */
            id = tok_find(v, (const char *)&p[j], 1);
        if (id < 0)
            id = v->unk;
        if (id >= 0)
            tok_push(out, id);
    }
}

void tok_spm_fragment(const wgml_vocab *v, const char *s, size_t len, bool prefix_space, tok_vec *out)
{
    /* escaped text: each ' ' becomes 3 bytes; plus the prefix */
    size_t cap = 3 * len + 3;
    char *t = malloc(cap ? cap : 1);
    sym *sy = NULL;
    tok_heap q = {0};
    size_t n = 0, ns = 0;
    if (!t)
        goto oom;
    if (prefix_space)
        memcpy(t, "\xe2\x96\x81", 3), n = 3;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ')
            memcpy(t + n, "\xe2\x96\x81", 3), n += 3;
        else
            t[n++] = s[i];
    }
    if (n == 0) {
        free(t);
        return;
    }
    sy = malloc(n * sizeof *sy);
    if (!sy)
        goto oom;
    for (size_t off = 0; off < n; ns++) {
        size_t k = tok_utf8_len((uint8_t)t[off]);
        if (k > n - off)
            k = n - off;
        sy[ns] = (sym){off, k, (int)ns - 1, off + k < n ? (int)ns + 1 : -1};
        off += k;
    }
    for (size_t i = 1; i < ns; i++)
        try_bigram(v, t, sy, (int)i - 1, (int)i, &q);
    while (q.n && !q.oom) {
        tok_merge b = tok_heap_pop(&q);
        sym *l = &sy[b.left], *r = &sy[b.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != b.size)
            continue; /* stale: one side was merged since */
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0)
            sy[r->next].prev = b.left;
        try_bigram(v, t, sy, l->prev, b.left, &q);
        try_bigram(v, t, sy, b.left, l->next, &q);
    }
    if (q.oom)
        goto oom;
    for (int i = 0; i >= 0; i = sy[i].next) {
        int32_t id = tok_find(v, t + sy[i].off, sy[i].n);
        if (id >= 0)
            tok_push(out, id);
        else
            byte_fallback(v, t + sy[i].off, sy[i].n, out);
    }
    free(q.h);
    free(sy);
    free(t);
    return;
oom:
    free(q.h);
    free(sy);
    free(t);
    out->oom = true;
}
