/*
 * The graph of one evaluation step of a decoder-only model (llm.h), built
 * from the public graph API alone.  Per layer (pre-norm transformer):
 *
 *   h  = rms_norm(x) * attn_norm
 *   q, k, v = linear(h, Wq|Wk|Wv) (+ bias: qwen2), per-head rms_norm
 *            (qwen3, gemma3), rope on q and k at the tokens' positions
 *   K, V caches [n_ctx, Hkv * D] f16 <- set_rows at the positions
 *   a  = attention(q, K[:KV], V[:KV], mask): KV is the cache length rounded
 *        up to LLM_KV_BUCKET rows, and a [T, KV] boolean mask written each
 *        step gives causality on the true length (and gemma3's window on
 *        its local layers)
 *   x += linear(a, Wo)              (gemma3: post_attention_norm first)
 *   x += down(glu(gate(h'), up(h'))) with h' = rms_norm(x) * ffn_norm
 *
 * then the final norm and the output projection of the last row (or all
 * rows, for perplexity) and a sampled token.  Graph fusion folds each
 * residual add into the next norm.
 */
#include "llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct builder {
    llm_model *m;
    wgml_graph *g;
    int64_t T, KV;
    wgml_node *pos, *mask, *mask_swa;
} builder;

/* A weight as a graph leaf (NULL stays NULL: optional weights). */
static wgml_status leaf(builder *b, wgml_tensor *t, const char *name, int il, wgml_node **out)
{
    *out = NULL;
    if (!t)
        return WGML_OK;
    char nm[64];
    if (il >= 0)
        snprintf(nm, sizeof nm, "blk.%d.%s", il, name);
    else
        snprintf(nm, sizeof nm, "%s", name);
    return wgml_graph_tensor(b->g, nm, t, out);
}

static wgml_status rms(builder *b, wgml_node *x, wgml_node *w, wgml_node **out)
{
    wgml_norm_params p = {.kind = WGML_RMS_NORM, .eps = b->m->hp.rms_eps};
    return wgml_g_norm(b->g, x, &p, w, NULL, NULL, out);
}

static wgml_status proj(builder *b, wgml_node *x, wgml_node *w, wgml_node *bias, wgml_node **out)
{
    wgml_matmul_params p = {1.0f, 0.0f, WGML_ACT_NONE, b->m->prec};
    return wgml_g_linear(b->g, x, w, bias, NULL, &p, WGML_F32, out);
}

/* x [T, H * D] -> [T, H, D], per-head norm (optional), rope of the first
 * rot heads (0: all; later heads pass through: v in a q|k|v block). */
static wgml_status heads_rot(builder *b, wgml_node *x, int h, wgml_node *norm_w, bool rope, float base, int rot,
                             bool pairs, wgml_node **out)
{
    const llm_hparams *hp = &b->m->hp;
    wgml_node *y;
    TRY(wgml_g_reshape(b->g, x, 3, (int64_t[]){b->T, h, hp->head_dim}, &y));
    if (norm_w)
        TRY(rms(b, y, norm_w, &y));
    if (rope) {
        /* pairs: rows paired at load (llm_layer's qk_pairs) */
        wgml_rope_params rp = {.mode = pairs ? WGML_ROPE_NORMAL : hp->rope_mode, .n_dims = hp->n_rot, .freq_base = base,
                               .freq_scale = hp->rope_scale > 0 ? hp->rope_scale : 1.0f, .attn_factor = 1.0f,
                               .n_ctx_orig = hp->n_ctx_train, .n_heads_rot = rot};
        TRY(wgml_g_rope(b->g, y, b->pos, &rp, NULL, &y));
    }
    *out = y;
    return WGML_OK;
}

static wgml_status heads(builder *b, wgml_node *x, int h, wgml_node *norm_w, bool rope, float base, wgml_node **out)
{
    return heads_rot(b, x, h, norm_w, rope, base, 0, false, out);
}

/* Columns [c0, c0 + Hkv * D) of a cache after the step's write, viewed
 * [1, Hkv, KV, D] (a joint k|v cache's halves: strided views, their rows
 * 2 Hkv D long). */
static wgml_status joint_view(builder *b, wgml_node *c, int64_t c0, wgml_node **out)
{
    const llm_hparams *hp = &b->m->hp;
    int64_t KVD = (int64_t)hp->n_head_kv * hp->head_dim;
    wgml_node *s, *r;
    TRY(wgml_g_slice(b->g, c, 0, 0, b->KV, 1, &s));
    TRY(wgml_g_slice(b->g, s, 1, c0, c0 + KVD, 1, &s));
    TRY(wgml_g_reshape(b->g, s, 4, (int64_t[]){1, b->KV, hp->n_head_kv, hp->head_dim}, &r));
    return wgml_g_permute(b->g, r, (const int[]){0, 2, 1, 3}, out);
}

/* The cache after writing the step's rows, viewed [1, Hkv, KV, D]. */
static wgml_status cache_view(builder *b, wgml_node *cache, wgml_node *rows, wgml_node **out)
{
    const llm_hparams *hp = &b->m->hp;
    wgml_node *flat, *c;
    TRY(wgml_g_reshape(b->g, rows, 2, (int64_t[]){b->T, (int64_t)hp->n_head_kv * hp->head_dim}, &flat));
    TRY(wgml_g_set_rows(b->g, cache, b->pos, flat, &c));
    return joint_view(b, c, 0, out);
}

static wgml_status layer(builder *b, int il, wgml_node *x, wgml_node **out)
{
    const llm_hparams *hp = &b->m->hp;
    const llm_layer *L = &b->m->layers[il];
    wgml_node *w_an, *wq, *wk, *wv, *wo, *bq, *bk, *bv, *qn, *kn, *pan, *pfn, *fn, *wg, *wu, *wd, *kc, *vc;
    TRY(leaf(b, L->attn_norm, "attn_norm", il, &w_an));
    TRY(leaf(b, L->wq, "attn_q", il, &wq));
    TRY(leaf(b, L->wk, "attn_k", il, &wk));
    TRY(leaf(b, L->wv, "attn_v", il, &wv));
    TRY(leaf(b, L->wo, "attn_output", il, &wo));
    TRY(leaf(b, L->bq, "attn_q.bias", il, &bq));
    TRY(leaf(b, L->bk, "attn_k.bias", il, &bk));
    TRY(leaf(b, L->bv, "attn_v.bias", il, &bv));
    TRY(leaf(b, L->q_norm, "attn_q_norm", il, &qn));
    TRY(leaf(b, L->k_norm, "attn_k_norm", il, &kn));
    TRY(leaf(b, L->post_attn_norm, "post_attention_norm", il, &pan));
    TRY(leaf(b, L->post_ffn_norm, "post_ffw_norm", il, &pfn));
    TRY(leaf(b, L->ffn_norm, "ffn_norm", il, &fn));
    TRY(leaf(b, L->w_gate, "ffn_gate", il, &wg));
    TRY(leaf(b, L->w_up, "ffn_up", il, &wu));
    TRY(leaf(b, L->w_down, "ffn_down", il, &wd));
    TRY(leaf(b, L->k_cache, "cache_k", il, &kc));
    TRY(leaf(b, L->v_cache, "cache_v", il, &vc));
    wgml_node *kvc;
    TRY(leaf(b, L->kv_cache, "cache_kv", il, &kvc));

    /* gemma3: every swa_period-th layer is global, the others see a window
     * and use the local rope base */
    bool local = hp->sliding_window > 0 && hp->swa_period > 0 && (il + 1) % hp->swa_period != 0;
    float base = local && hp->rope_base_local > 0 ? hp->rope_base_local : hp->rope_base;

    int64_t Q = (int64_t)hp->n_head * hp->head_dim, KVD = (int64_t)hp->n_head_kv * hp->head_dim;
    wgml_node *h, *q, *k, *v, *K, *V, *a, *o;
    TRY(rms(b, x, w_an, &h));
    bool roped = false, stored = false;
    if (L->wqkv) { /* one product, three column slices */
        wgml_node *wqkv, *bqkv, *qkv;
        TRY(leaf(b, L->wqkv, "attn_qkv", il, &wqkv));
        TRY(leaf(b, L->bqkv, "attn_qkv.bias", il, &bqkv));
        TRY(proj(b, h, wqkv, bqkv, &qkv));
        if (!qn && !kn && kvc) {
            /* One rope over all H + 2 Hkv heads, v's passing through, and
             * one set_rows of the k|v columns into the joint cache: a
             * decode layer's rope and cache writes in two dispatches (were
             * three: the v write of its own). */
            wgml_node *all, *kv, *c;
            TRY(heads_rot(b, qkv, hp->n_head + 2 * hp->n_head_kv, NULL, true, base, hp->n_head + hp->n_head_kv,
                          L->qk_pairs, &all));
            TRY(wgml_g_slice(b->g, all, 1, 0, hp->n_head, 1, &q));
            TRY(wgml_g_slice(b->g, all, 1, hp->n_head, hp->n_head + 2 * hp->n_head_kv, 1, &kv));
            TRY(wgml_g_reshape(b->g, kv, 2, (int64_t[]){b->T, 2 * KVD}, &kv));
            TRY(wgml_g_set_rows(b->g, kvc, b->pos, kv, &c));
            TRY(joint_view(b, c, 0, &K));
            TRY(joint_view(b, c, KVD, &V));
            roped = stored = true;
        } else if (!qn && !kn) {
            /* q and k are adjacent columns with the same rope: one rope over
             * their H + Hkv heads, then head slices (a decode layer's
             * dispatches: one fewer) */
            wgml_node *qk;
            TRY(wgml_g_slice(b->g, qkv, 1, 0, Q + KVD, 1, &qk));
            TRY(heads_rot(b, qk, hp->n_head + hp->n_head_kv, NULL, true, base, 0, L->qk_pairs, &qk));
            TRY(wgml_g_slice(b->g, qk, 1, 0, hp->n_head, 1, &q));
            TRY(wgml_g_slice(b->g, qk, 1, hp->n_head, hp->n_head + hp->n_head_kv, 1, &k));
            roped = true;
        } else {
            TRY(wgml_g_slice(b->g, qkv, 1, 0, Q, 1, &q));
            TRY(wgml_g_slice(b->g, qkv, 1, Q, Q + KVD, 1, &k));
        }
        if (!stored)
            TRY(wgml_g_slice(b->g, qkv, 1, Q + KVD, Q + 2 * KVD, 1, &v));
    } else {
        TRY(proj(b, h, wq, bq, &q));
        TRY(proj(b, h, wk, bk, &k));
        TRY(proj(b, h, wv, bv, &v));
    }
    if (!roped) {
        TRY(heads(b, q, hp->n_head, qn, true, base, &q));
        TRY(heads(b, k, hp->n_head_kv, kn, true, base, &k));
    }
    if (!stored) {
        TRY(heads(b, v, hp->n_head_kv, NULL, false, base, &v));
        TRY(cache_view(b, kc, k, &K));
        TRY(cache_view(b, vc, v, &V));
    }
    wgml_node *q4;
    TRY(wgml_g_reshape(b->g, q, 4, (int64_t[]){1, b->T, hp->n_head, hp->head_dim}, &q4));
    TRY(wgml_g_permute(b->g, q4, (const int[]){0, 2, 1, 3}, &q4));
    /* causality and the window are in the masks: KV is bucketed, so the
     * new tokens are not the last rows of K and V (llm_graph_eval) */
    wgml_attn_params ap = {.scale = hp->attn_scale, .out_bshd = 1};
    TRY(wgml_g_attention(b->g, q4, K, V, local ? b->mask_swa : b->mask, NULL, &ap, WGML_F32, &a));
    /* [1, T, H, D] -> [T, H * D]: a view (out_bshd) */
    TRY(wgml_g_reshape(b->g, a, 2, (int64_t[]){b->T, (int64_t)hp->n_head * hp->head_dim}, &a));
    TRY(proj(b, a, wo, NULL, &o));
    if (pan)
        TRY(rms(b, o, pan, &o));
    TRY(wgml_g_binary(b->g, WGML_ADD, x, o, &x));

    wgml_node *f, *gt, *up, *d;
    TRY(rms(b, x, fn, &f));
    if (L->wgu) {
        wgml_node *wgu, *gu;
        TRY(leaf(b, L->wgu, "ffn_gate_up", il, &wgu));
        TRY(proj(b, f, wgu, NULL, &gu));
        if (L->gu_stacked) {
            TRY(wgml_g_slice(b->g, gu, 1, 0, hp->n_ff, 1, &gt));
            TRY(wgml_g_slice(b->g, gu, 1, hp->n_ff, 2 * (int64_t)hp->n_ff, 1, &up));
        } else {
            TRY(wgml_g_slice(b->g, gu, 1, 0, 2 * (int64_t)hp->n_ff, 2, &gt));
            TRY(wgml_g_slice(b->g, gu, 1, 1, 2 * (int64_t)hp->n_ff, 2, &up));
        }
    } else {
        TRY(proj(b, f, wg, NULL, &gt));
        TRY(proj(b, f, wu, NULL, &up));
    }
    TRY(wgml_g_glu(b->g, hp->glu, gt, up, 0, &f));
    TRY(proj(b, f, wd, NULL, &d));
    if (pfn)
        TRY(rms(b, d, pfn, &d));
    return wgml_g_binary(b->g, WGML_ADD, x, d, out);
}

static wgml_status build(builder *b, llm_graph *lg, const wgml_sample_params *sp)
{
    llm_model *m = b->m;
    const llm_hparams *hp = &m->hp;
    TRY(wgml_graph_dim(b->g, "T", lg->max_tokens, &b->T));
    TRY(wgml_graph_dim(b->g, "KV", m->n_ctx, &b->KV));
    lg->T = b->T, lg->KV = b->KV;
    TRY(wgml_graph_input(b->g, "ids", WGML_I32, 1, (int64_t[]){b->T}, &lg->ids));
    TRY(wgml_graph_input(b->g, "pos", WGML_I32, 1, (int64_t[]){b->T}, &lg->pos));
    b->pos = lg->pos;
    TRY(wgml_graph_input(b->g, "mask", WGML_BOOL, 2, (int64_t[]){b->T, b->KV}, &lg->mask));
    b->mask = lg->mask;
    if (hp->sliding_window > 0 && hp->swa_period > 0) {
        TRY(wgml_graph_input(b->g, "mask_swa", WGML_BOOL, 2, (int64_t[]){b->T, b->KV}, &lg->mask_swa));
        b->mask_swa = lg->mask_swa;
        lg->window = hp->sliding_window;
    }
    wgml_node *emb, *x, *on, *out;
    TRY(leaf(b, m->tok_embd, "token_embd", -1, &emb));
    TRY(wgml_g_get_rows(b->g, emb, lg->ids, WGML_F32, &x));
    if (hp->emb_scale > 0)
        TRY(wgml_g_unary(b->g, WGML_SCALE, x, hp->emb_scale, 0, &x));
    for (int il = 0; il < hp->n_layer; il++)
        TRY(layer(b, il, x, &x));
    TRY(leaf(b, m->out_norm, "output_norm", -1, &on));
    if (!lg->all_logits) {
        TRY(wgml_graph_input(b->g, "last", WGML_I32, 1, (int64_t[]){1}, &lg->last));
        TRY(wgml_g_get_rows(b->g, x, lg->last, WGML_F32, &x));
    }
    TRY(rms(b, x, on, &x));
    if (m->output == m->tok_embd)
        out = emb;
    else
        TRY(leaf(b, m->output, "output", -1, &out));
    TRY(proj(b, x, out, NULL, &lg->logits));
    TRY(wgml_graph_output(b->g, lg->logits));
    wgml_node *row = lg->logits;
    if (lg->all_logits)
        row = NULL; /* no sampling over a whole batch */
    if (row) {
        /* the draw's seed is sp->seed + the sampled token's position, written
         * each run: a replayed graph samples afresh every step, and a run
         * repeats given the same seed */
        TRY(wgml_graph_input(b->g, "seed", WGML_I32, 1, (int64_t[]){1}, &lg->seed));
        TRY(wgml_g_sample(b->g, row, lg->seed, sp, &lg->token));
        TRY(wgml_graph_output(b->g, lg->token));
    }
    return wgml_graph_compile(b->g, NULL);
}

wgml_status llm_graph_build(llm_model *m, int max_tokens, bool all_logits, const wgml_sample_params *sp,
                            llm_graph *out)
{
    memset(out, 0, sizeof *out);
    if (!m || max_tokens < 1 || !sp)
        return wgml_error(WGML_ERR_INVALID_ARG, "llm_graph_build: bad arguments");
    out->max_tokens = max_tokens;
    const char *eb = getenv("WGML_LLM_KV_BUCKET"); /* timing */
    out->kv_bucket = eb && atoi(eb) >= 1 ? atoi(eb) : LLM_KV_BUCKET;
    out->all_logits = all_logits;
    out->n_ctx = m->n_ctx;
    out->mask_host = malloc((size_t)max_tokens * (size_t)m->n_ctx);
    if (!out->mask_host)
        return wgml_error(WGML_ERR_OOM, "llm_graph_build: out of host memory for a %d x %d mask", max_tokens, m->n_ctx);
    wgml_status st = wgml_graph_create(m->ctx, &out->g);
    if (st == WGML_OK) {
        builder b = {.m = m, .g = out->g};
        st = build(&b, out, sp);
    }
    if (st != WGML_OK)
        llm_graph_free(out); /* nothing half-made stays */
    return st;
}

/* A part's rows to pair for a NEOX rope (H heads of D rows, the first R of
 * each roped); H 0: copied as they are. */
typedef struct row_pairs {
    int64_t H, D, R;
} row_pairs;

/* n rows of src from row s into dst's rows d, d + step, ... */
static wgml_status copy_rows(const wgml_tensor *src, wgml_tensor *dst, int64_t s, int64_t n, int64_t d, int64_t step)
{
    wgml_tensor *sv = NULL, *dv = NULL;
    wgml_status st = wgml_view_slice(src, 0, s, s + n, 1, &sv);
    if (st == WGML_OK)
        st = wgml_view_slice(dst, 0, d, d + (n - 1) * step + 1, step, &dv);
    if (st == WGML_OK)
        st = wgml_copy(sv, dv);
    wgml_tensor_free(sv);
    wgml_tensor_free(dv);
    return st;
}

/* src [H D, ...] into dst's rows r0 .. r0 + H D - 1, each head's pairs
 * adjacent: row i (i < R / 2) to 2i, row i + R / 2 to 2i + 1, rows R .. D
 * - 1 where they were (llm_layer's qk_pairs).  A head's pairs are two step
 * copies; quantised rows not on 4 bytes (which wgml_copy's strided copy
 * refuses, WGML_ERR_DTYPE) go a row at a time. */
static wgml_status copy_paired(const wgml_tensor *src, wgml_tensor *dst, int64_t r0, const row_pairs *pr)
{
    wgml_status st = WGML_OK;
    for (int64_t h = 0; h < pr->H && st == WGML_OK; h++) {
        int64_t s = h * pr->D, d = r0 + h * pr->D, half = pr->R / 2;
        /* {first source row, rows, first destination row, its step} */
        const int64_t part[3][4] = {{s, half, d, 2}, {s + half, half, d + 1, 2}, {s + pr->R, pr->D - pr->R, d + pr->R, 1}};
        for (int i = 0; i < 3 && st == WGML_OK; i++) {
            if (part[i][1] <= 0)
                continue;
            st = copy_rows(src, dst, part[i][0], part[i][1], part[i][2], part[i][3]);
            if (st != WGML_ERR_DTYPE)
                continue;
            st = WGML_OK; /* refused before anything ran: a row at a time */
            for (int64_t j = 0; st == WGML_OK && j < part[i][1]; j++)
                st = copy_rows(src, dst, part[i][0] + j, 1, part[i][2] + j * part[i][3], 1);
        }
    }
    return st;
}

/* parts' rows stacked along dim 0 into a new tensor (n > 0; pairs: per
 * part, or NULL), or -n parts of equal rows interleaved row by row; the
 * same dtype and row length, else WGML_ERR_UNSUPPORTED, no message.  The
 * tensor has `extra` more rows after them, left for the caller. */
static wgml_status stack_rows(wgml_ctx *ctx, wgml_tensor *const *parts, int n, const row_pairs *pairs, int64_t extra,
                              wgml_tensor **out)
{
    *out = NULL;
    bool inter = n < 0; /* -n parts of equal rows, interleaved row by row */
    n = inter ? -n : n;
    int64_t rows = 0;
    for (int i = 0; i < n; i++) {
        if (!parts[i] || (inter && wgml_tensor_dim(parts[i], 0) != wgml_tensor_dim(parts[0], 0)))
            return WGML_ERR_UNSUPPORTED;
        int k = wgml_tensor_ndim(parts[i]);
        if (k < 1 || k > 2 || k != wgml_tensor_ndim(parts[0]) ||
            wgml_tensor_dtype(parts[i]) != wgml_tensor_dtype(parts[0]) ||
            (k == 2 && wgml_tensor_dim(parts[i], 1) != wgml_tensor_dim(parts[0], 1)))
            return WGML_ERR_UNSUPPORTED;
        if (pairs && pairs[i].H && pairs[i].H * pairs[i].D != wgml_tensor_dim(parts[i], 0))
            return WGML_ERR_UNSUPPORTED;
        rows += wgml_tensor_dim(parts[i], 0);
    }
    int nd = wgml_tensor_ndim(parts[0]);
    wgml_tensor *t;
    TRY(wgml_tensor_new(ctx, wgml_tensor_dtype(parts[0]), nd,
                        (int64_t[]){rows + extra, nd == 2 ? wgml_tensor_dim(parts[0], 1) : 1}, &t));
    wgml_status st = WGML_OK;
    for (int64_t i = 0, r = 0; i < n && st == WGML_OK; i++) {
        int64_t m = wgml_tensor_dim(parts[i], 0);
        if (!inter && pairs && pairs[i].H)
            st = copy_paired(parts[i], t, r, &pairs[i]);
        else /* interleaved: part i's rows to i, i + n, ... */
            st = copy_rows(parts[i], t, 0, m, inter ? i : r, inter ? n : 1);
        r += m;
    }
    if (st != WGML_OK) {
        wgml_tensor_free(t);
        return st;
    }
    *out = t;
    return WGML_OK;
}

/* Rows of gate|up's width that hold w_down, where gate, up and down share
 * a dtype and w_down's n x F values reshape to them (F a whole number of
 * blocks): then gate|up is stacked with that many rows more and w_down
 * copied into them (pack_down), one buffer for both; else 0. */
static int64_t down_rows(const llm_layer *L)
{
    wgml_tensor *g = L->w_gate, *dn = L->w_down;
    if (!g || !dn || wgml_tensor_ndim(g) != 2 || wgml_tensor_ndim(dn) != 2 ||
        wgml_tensor_dtype(g) != wgml_tensor_dtype(dn) || wgml_tensor_dtype(L->w_up) != wgml_tensor_dtype(g))
        return 0;
    int64_t E = wgml_tensor_dim(g, 1), n = wgml_tensor_dim(dn, 0), F = wgml_tensor_dim(dn, 1);
    return E > 0 && (n * F) % E == 0 && F % wgml_dtype_block_elems(wgml_tensor_dtype(dn)) == 0 ? n * F / E : 0;
}

/* L->wgu, stacked with `extra` rows after gate|up's: views of the two
 * parts become L->wgu and L->wdown_pk, w_down copied into the second (the
 * persistent FFN, src/ops/ffn.c, binds both weights at once).  A view or
 * copy refused leaves the weights apart (packing is an optimisation; the
 * extra rows then go unused). */
static wgml_status pack_down(llm_layer *L, int64_t extra)
{
    wgml_tensor *t = L->wgu, *a = NULL, *b = NULL, *bv = NULL;
    int64_t R = wgml_tensor_dim(t, 0) - extra;
    wgml_status st = wgml_view_slice(t, 0, 0, R, 1, &a);
    if (st != WGML_OK)
        return st;
    st = wgml_view_slice(t, 0, R, R + extra, 1, &b);
    if (st == WGML_OK)
        st = wgml_view_reshape(b, 2, (int64_t[]){wgml_tensor_dim(L->w_down, 0), wgml_tensor_dim(L->w_down, 1)}, &bv);
    if (st == WGML_OK)
        st = wgml_copy(L->w_down, bv);
    wgml_tensor_free(b);
    wgml_tensor_free(t);
    L->wgu = a;
    if (st != WGML_OK) {
        wgml_tensor_free(bv);
        return st == WGML_ERR_OOM || st == WGML_ERR_DEVICE ? st : WGML_OK;
    }
    L->wdown_pk = bv;
    return WGML_OK;
}

wgml_status llm_layer_fuse(wgml_ctx *ctx, const llm_hparams *hp, llm_layer *L)
{
    wgml_tensor *qkv[3] = {L->wq, L->wk, L->wv}, *bias[3] = {L->bq, L->bk, L->bv}, *gu[2] = {L->w_gate, L->w_up};
    bool biased = L->bq || L->bk || L->bv;
    const char *e = getenv("WGML_LLM_NEOX_PAIRS");
    bool pair = hp->rope_mode == WGML_ROPE_NEOX && !L->q_norm && !L->k_norm && hp->n_rot > 0 && hp->n_rot % 2 == 0 &&
                hp->n_rot <= hp->head_dim && !(e && !strcmp(e, "0"));
    const row_pairs pr[3] = {{hp->n_head, hp->head_dim, hp->n_rot}, {hp->n_head_kv, hp->head_dim, hp->n_rot}, {0, 0, 0}};
    L->qk_pairs = false;
    wgml_status st = stack_rows(ctx, qkv, 3, pair ? pr : NULL, 0, &L->wqkv);
    if (st == WGML_OK && biased && (st = stack_rows(ctx, bias, 3, pair ? pr : NULL, 0, &L->bqkv)) != WGML_OK) {
        wgml_tensor_free(L->wqkv); /* biases that do not stack: no fusion */
        L->wqkv = NULL;
    }
    if (st != WGML_OK && st != WGML_ERR_UNSUPPORTED)
        return st;
    L->qk_pairs = pair && L->wqkv;
    /* interleaved; quantised rows not on 4 bytes (wgml_copy's strided
     * copy refuses them: WGML_ERR_DTYPE) stacked one after the other */
    int64_t extra = down_rows(L);
    st = stack_rows(ctx, gu, -2, NULL, extra, &L->wgu);
    L->gu_stacked = st == WGML_ERR_DTYPE;
    if (L->gu_stacked)
        st = stack_rows(ctx, gu, 2, NULL, 0, &L->wgu);
    else if (st == WGML_OK && extra)
        st = pack_down(L, extra);
    return st == WGML_ERR_UNSUPPORTED ? WGML_OK : st;
}

void llm_graph_free(llm_graph *lg)
{
    if (lg && lg->g)
        wgml_graph_free(lg->g);
    if (lg) {
        free(lg->mask_host);
        lg->mask_host = NULL;
        lg->g = NULL;
    }
}

/* Row i (position n_past + i) sees cache row j when j <= n_past + i and,
 * with a window W, j > n_past + i - W: bottom-right causal alignment on
 * the true length, whatever KV is bound to. */
static wgml_status write_mask(llm_graph *lg, wgml_node *mask, int n, int n_past, int64_t kv, int64_t window)
{
    for (int i = 0; i < n; i++) {
        uint8_t *row = lg->mask_host + (size_t)i * (size_t)kv;
        int64_t p = (int64_t)n_past + i;
        for (int64_t j = 0; j < kv; j++)
            row[j] = j <= p && (window <= 0 || j > p - window);
    }
    return wgml_graph_write(lg->g, mask, lg->mask_host, (uint64_t)n * (uint64_t)kv);
}

wgml_status llm_graph_eval(llm_graph *lg, const int32_t *ids, int n, int n_past)
{
    return llm_graph_eval_read(lg, ids, n, n_past, NULL);
}

wgml_status llm_graph_eval_read(llm_graph *lg, const int32_t *ids, int n, int n_past, wgml_pending **token)
{
    if (!lg || !lg->g || (!ids && (n != 1 || !lg->token)) || n < 1 || n > lg->max_tokens || n_past < 0)
        return wgml_error(WGML_ERR_INVALID_ARG, "llm_graph_eval: %d tokens at %d (at most %d a step)", n, n_past,
                          lg ? lg->max_tokens : 0);
    int32_t pos[512];
    int32_t *p = n <= 512 ? pos : NULL;
    if (!p)
        return wgml_error(WGML_ERR_INVALID_ARG, "llm_graph_eval: %d tokens in one step (at most 512)", n);
    for (int i = 0; i < n; i++)
        p[i] = n_past + i;
    int64_t kv = ((int64_t)n_past + n + lg->kv_bucket - 1) / lg->kv_bucket * lg->kv_bucket;
    if (kv > lg->n_ctx)
        kv = lg->n_ctx;
    if (n_past + n > kv)
        return wgml_error(WGML_ERR_LIMIT, "llm_graph_eval: positions up to %d exceed the context of %d", n_past + n,
                          lg->n_ctx);
    TRY(wgml_graph_bind_dim(lg->g, lg->T, n));
    TRY(wgml_graph_bind_dim(lg->g, lg->KV, kv));
    TRY(write_mask(lg, lg->mask, n, n_past, kv, 0));
    if (lg->mask_swa)
        TRY(write_mask(lg, lg->mask_swa, n, n_past, kv, lg->window));
    TRY(wgml_graph_write(lg->g, lg->pos, p, (uint64_t)n * 4));
    if (lg->last) {
        int32_t last = n - 1;
        TRY(wgml_graph_write(lg->g, lg->last, &last, 4));
    }
    if (lg->seed) {
        int32_t seed = n_past + n;
        TRY(wgml_graph_write(lg->g, lg->seed, &seed, 4));
    }
    /* ids last: a host write submits the work recorded before it (to stay
     * ordered after it), so the token's copy, recorded after the writes,
     * shares the replay's command buffer (each one costs the GPU time:
     * src/gpu/record.c, whole()) */
    if (ids)
        TRY(wgml_graph_write(lg->g, lg->ids, ids, (uint64_t)n * 4));
    else /* fed by the last run's sampled token, on the GPU */
        TRY(wgml_graph_copy(lg->g, lg->ids, lg->token, 4));
    if (token) {
        if (!lg->token)
            return wgml_error(WGML_ERR_INVALID_ARG, "llm_graph_eval_read: the graph samples no token");
        return wgml_graph_run_read(lg->g, lg->token, 4, token);
    }
    return wgml_graph_run(lg->g);
}
