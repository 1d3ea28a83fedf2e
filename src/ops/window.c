/*
 * The window binder (see ops.h): fits operands' windows into storage
 * bindings and cuts an iteration space into blocks where they do not fit.
 * The strided launcher (launch.c), the row launcher (rows.c) and rope use
 * it, so there is one place that knows how a cut moves an operand.
 */
#include "ops.h"

#include <string.h>

wg_win wg_win_of(const wgml_tensor *t, const wg_view4 *v, const char *name)
{
    wg_win w = {t->st->buf, v->offset, {v->strides[0], v->strides[1], v->strides[2], v->strides[3]},
                wg_dtype(t->dtype)->block_bytes, 0, name};
    return w;
}

/* Elements from w's first to its last (tail included), minus one. */
static uint64_t span(const wg_win *w, const int64_t iter[4])
{
    return wg_span_last(0, w->st, iter) + w->tail;
}

uint64_t wg_win_bytes(const wg_win *w, const int64_t iter[4]) { return (span(w, iter) + 1) * w->esz; }

bool wg_win_fits(const wgml_ctx *ctx, const wg_win *w, int n, const int64_t iter[4], uint64_t max_elems)
{
    uint64_t cap = wg_window_cap(ctx);
    if ((uint64_t)wg_nelem4(iter) > max_elems)
        return false;
    for (int j = 0; j < n; j++)
        if (w[j].buf && wg_win_bytes(&w[j], iter) > cap)
            return false;
    return true;
}

wg_binding wg_win_bind(const wg_win *w, const int64_t iter[4], uint32_t *off)
{
    uint64_t rem;
    wg_binding b = wg_bind_from(w->buf, w->offset * w->esz, wg_win_bytes(w, iter), &rem);
    *off = (uint32_t)(rem / w->esz);
    return b;
}

int64_t wg_win_most(const wgml_ctx *ctx, const wg_win *w, int n, const int64_t iter[4], int d, uint64_t max_elems)
{
    uint64_t cap = wg_window_cap(ctx);
    int64_t one[4] = {iter[0], iter[1], iter[2], iter[3]};
    one[d] = 1;
    uint64_t slice = (uint64_t)wg_nelem4(one);
    if (slice > max_elems)
        return 0;
    uint64_t k = max_elems / slice;
    for (int j = 0; j < n; j++) {
        if (!w[j].buf)
            continue;
        uint64_t room = cap / w[j].esz, used = span(&w[j], one) + 1;
        if (used > room)
            return 0;
        if (w[j].st[d] > 0 && (room - used) / (uint64_t)w[j].st[d] + 1 < k)
            k = (room - used) / (uint64_t)w[j].st[d] + 1;
    }
    return k < (uint64_t)iter[d] ? (int64_t)k : iter[d];
}

typedef struct splitter {
    wgml_ctx *ctx;
    int n, nsplit;
    uint64_t max_elems;
    const char *who;
    wg_win_fn fn;
    void *user;
} splitter;

static wgml_status split(const splitter *s, const wg_win *w, const int64_t iter[4], const int64_t origin[4])
{
    if (wg_win_fits(s->ctx, w, s->n, iter, s->max_elems))
        return s->fn(s->user, w, iter, origin);
    int d = 0;
    while (d < s->nsplit && iter[d] == 1)
        d++;
    if (d == s->nsplit) { /* nothing left to cut: name the widest operand */
        int wide = 0;
        for (int j = 0; j < s->n; j++)
            if (w[j].buf && (!w[wide].buf || wg_win_bytes(&w[j], iter) > wg_win_bytes(&w[wide], iter)))
                wide = j;
        if (s->nsplit < 4)
            return wg_fail_window(s->ctx, wg_win_bytes(&w[wide], iter), "%s: operand '%s' over one row of %lld "
                                  "elements", s->who, w[wide].name, (long long)iter[3]);
        return wg_fail_window(s->ctx, wg_win_bytes(&w[wide], iter), "%s: operand '%s' over one element", s->who,
                              w[wide].name);
    }
    /* As few equal chunks as fit; single slices when none does. */
    int64_t most = wg_win_most(s->ctx, w, s->n, iter, d, s->max_elems);
    int64_t chunks = most ? (iter[d] + most - 1) / most : iter[d];
    int64_t len = (iter[d] + chunks - 1) / chunks;
    for (int64_t start = 0; start < iter[d]; start += len) {
        int64_t sub[4] = {iter[0], iter[1], iter[2], iter[3]}, org[4] = {origin[0], origin[1], origin[2], origin[3]};
        sub[d] = iter[d] - start < len ? iter[d] - start : len;
        org[d] += start;
        wg_win w2[WG_MAX_BUFFERS];
        for (int j = 0; j < s->n; j++) { /* absent ones too: a virtual operand's position moves */
            w2[j] = w[j];
            w2[j].offset += (uint64_t)(start * w[j].st[d]);
        }
        wgml_status st = split(s, w2, sub, org);
        if (st != WGML_OK)
            return st;
    }
    return WGML_OK;
}

wgml_status wg_win_split(wgml_ctx *ctx, const wg_win *w, int n, const int64_t iter[4], int nsplit, uint64_t max_elems,
                         const char *who, wg_win_fn fn, void *user)
{
    if (n > WG_MAX_BUFFERS)
        return wg_fail(WGML_ERR_INTERNAL, "%s: %d operands, the window binder takes %d", who, n, WG_MAX_BUFFERS);
    splitter s = {ctx, n, nsplit, max_elems, who, fn, user};
    const int64_t origin[4] = {0, 0, 0, 0};
    return split(&s, w, iter, origin);
}

bool wg_bind_elems(const wgml_tensor *t, uint64_t span, wg_binding *b, uint32_t *first)
{
    uint64_t esz = wg_dtype(t->dtype)->block_bytes, at = wg_view4_of(t).offset * esz, rem;
    *b = wg_bind_from(t->st->buf, at, span * esz, &rem);
    *first = (uint32_t)(rem / esz);
    return b->size >= rem + span * esz && rem % esz == 0 && rem / esz + span <= UINT32_MAX;
}
