/*
 * wgml_model: a GGUF language model loaded for llm_graph.c.  Reads the
 * architecture's hyperparameters ("<arch>.embedding_length", ...), checks
 * every weight's presence, dtype and shape against them (a wrong file is a
 * message naming the tensor, not a bad graph), uploads the weights, makes
 * the f16 KV cache and compiles the step graph.
 */
#include "llm.h"
#include "wgml_llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wgml_model {
    wgml_ctx *ctx;
    wgml_gguf *gguf;
    wgml_vocab *vocab;
    llm_model m;
    int n_batch;
    llm_graph step, all;            /* .g NULL until built */
    wgml_sample_params step_sp;     /* what `step` samples with (seed aside) */
    wgml_tensor **owned;            /* every tensor made here, freed at the end */
    size_t n_owned, cap_owned;
    uint64_t weight_bytes, kv_bytes;
    char arch[32];
};

static const char *const arch_names[LLM_ARCH_COUNT] = {"llama", "qwen2", "qwen3", "gemma3"};

static wgml_status own(wgml_model *mm, wgml_tensor *t)
{
    if (mm->n_owned == mm->cap_owned) {
        size_t cap = mm->cap_owned ? 2 * mm->cap_owned : 64;
        wgml_tensor **p = realloc(mm->owned, cap * sizeof *p);
        if (!p) {
            wgml_tensor_free(t);
            return wgml_error(WGML_ERR_OOM, "model load: out of host memory");
        }
        mm->owned = p, mm->cap_owned = cap;
    }
    mm->owned[mm->n_owned++] = t;
    return WGML_OK;
}

/* Frees t, one of the model's own tensors, and forgets it (NULL: no-op). */
static void release(wgml_model *mm, wgml_tensor **t)
{
    for (size_t i = 0; *t && i < mm->n_owned; i++)
        if (mm->owned[i] == *t) {
            mm->owned[i] = mm->owned[--mm->n_owned];
            wgml_tensor_free(*t);
        }
    *t = NULL;
}

/* The layer's stacked weights (llm_layer_fuse) replace their parts.  What
 * it made is owned even when it failed part way, so the model's free
 * releases it. */
static wgml_status fuse_layer(wgml_model *mm, llm_layer *L)
{
    wgml_status fst = llm_layer_fuse(mm->ctx, &mm->m.hp, L);
    wgml_tensor **made[] = {&L->wqkv, &L->bqkv, &L->wgu, &L->wdown_pk};
    for (size_t i = 0; i < sizeof made / sizeof *made; i++)
        if (*made[i]) {
            wgml_status st = own(mm, *made[i]);
            if (st != WGML_OK) {
                *made[i] = NULL; /* own() freed it */
                fst = fst != WGML_OK ? fst : st;
            }
        }
    if (fst != WGML_OK)
        return fst;
    if (L->wqkv) {
        release(mm, &L->wq), release(mm, &L->wk), release(mm, &L->wv);
        release(mm, &L->bq), release(mm, &L->bk), release(mm, &L->bv);
    }
    if (L->wgu)
        release(mm, &L->w_gate), release(mm, &L->w_up);
    if (L->wdown_pk) { /* the packed copy replaces it */
        release(mm, &L->w_down);
        L->w_down = L->wdown_pk;
        L->wdown_pk = NULL;
    }
    return WGML_OK;
}

/* "<arch>.<key>" as an int (required, or def when def >= 0 and absent). */
static wgml_status hp_int(const wgml_model *mm, const char *key, int64_t def, int *v)
{
    char k[128];
    snprintf(k, sizeof k, "%s.%s", mm->arch, key);
    uint64_t u = 0;
    wgml_status st = wgml_gguf_get_u64(mm->gguf, k, &u);
    if (st == WGML_ERR_INDEX && def >= 0) {
        *v = (int)def;
        return WGML_OK;
    }
    if (st != WGML_OK)
        return wgml_error(st, "model: metadata %s: %s", k, wgml_last_error());
    if (u == 0 || u > (1u << 30))
        return wgml_error(WGML_ERR_INVALID_ARG, "model: metadata %s = %llu is out of range", k, (unsigned long long)u);
    *v = (int)u;
    return WGML_OK;
}

static wgml_status hp_f32(const wgml_model *mm, const char *key, float def, float *v)
{
    char k[128];
    snprintf(k, sizeof k, "%s.%s", mm->arch, key);
    wgml_status st = wgml_gguf_get_f32(mm->gguf, k, v);
    if (st == WGML_ERR_INDEX) {
        *v = def;
        return WGML_OK;
    }
    if (st != WGML_OK || !isfinite(*v))
        return wgml_error(st ? st : WGML_ERR_INVALID_ARG, "model: metadata %s: %s", k,
                          st ? wgml_last_error() : "not finite");
    return WGML_OK;
}

static wgml_status read_hparams(wgml_model *mm)
{
    const char *a;
    size_t alen;
    TRY(wgml_gguf_get_string(mm->gguf, "general.architecture", &a, &alen));
    llm_hparams *hp = &mm->m.hp;
    hp->arch = LLM_ARCH_COUNT;
    for (int i = 0; i < LLM_ARCH_COUNT; i++)
        if (strlen(arch_names[i]) == alen && !memcmp(a, arch_names[i], alen))
            hp->arch = (llm_arch)i;
    if (hp->arch == LLM_ARCH_COUNT)
        return wgml_error(WGML_ERR_UNSUPPORTED, "model: architecture '%.*s' is not supported (llama, qwen2, qwen3, "
                          "gemma3 are)", (int)(alen < 32 ? alen : 32), a);
    snprintf(mm->arch, sizeof mm->arch, "%s", arch_names[hp->arch]);
    TRY(hp_int(mm, "embedding_length", -1, &hp->n_embd));
    TRY(hp_int(mm, "block_count", -1, &hp->n_layer));
    TRY(hp_int(mm, "feed_forward_length", -1, &hp->n_ff));
    TRY(hp_int(mm, "attention.head_count", -1, &hp->n_head));
    TRY(hp_int(mm, "attention.head_count_kv", hp->n_head, &hp->n_head_kv));
    TRY(hp_int(mm, "context_length", 4096, &hp->n_ctx_train));
    if (hp->n_embd % hp->n_head || hp->n_head % hp->n_head_kv)
        return wgml_error(WGML_ERR_INVALID_ARG, "model: %d heads over %d KV heads and width %d do not divide",
                          hp->n_head, hp->n_head_kv, hp->n_embd);
    TRY(hp_int(mm, "attention.key_length", hp->n_embd / hp->n_head, &hp->head_dim));
    int vlen;
    TRY(hp_int(mm, "attention.value_length", hp->head_dim, &vlen));
    if (vlen != hp->head_dim)
        return wgml_error(WGML_ERR_UNSUPPORTED, "model: value heads of %d != key heads of %d", vlen, hp->head_dim);
    TRY(hp_int(mm, "rope.dimension_count", hp->head_dim, &hp->n_rot));
    TRY(hp_f32(mm, "attention.layer_norm_rms_epsilon", 1e-6f, &hp->rms_eps));
    TRY(hp_f32(mm, "rope.freq_base", 10000.0f, &hp->rope_base));
    float factor;
    TRY(hp_f32(mm, "rope.scaling.factor", 1.0f, &factor));
    hp->rope_scale = factor > 0 ? 1.0f / factor : 1.0f;
    hp->rope_mode = hp->arch == LLM_LLAMA ? WGML_ROPE_NORMAL : WGML_ROPE_NEOX;
    hp->glu = WGML_SWIGLU;
    if (hp->arch == LLM_GEMMA3) {
        /* gemma3: GELU (tanh) GLU, embeddings scaled by sqrt(width), 5 of
         * every 6 layers local (sliding window, rope base 10000). */
        hp->glu = WGML_GEGLU_TANH;
        hp->emb_scale = sqrtf((float)hp->n_embd);
        TRY(hp_int(mm, "attention.sliding_window", 512, &hp->sliding_window));
        hp->swa_period = 6;
        hp->rope_base_local = 10000.0f;
    }
    return WGML_OK;
}

/* Uploads tensor `name` (optional: absent gives NULL) after checking its
 * shape is [rows, cols] (cols 0: 1-D [rows]). */
static wgml_status weight(wgml_model *mm, const char *name, int64_t rows, int64_t cols, bool optional,
                          wgml_tensor **out)
{
    *out = NULL;
    wgml_gguf_tensor ti;
    wgml_status st = wgml_gguf_tensor_by_name(mm->gguf, name, &ti);
    if (st == WGML_ERR_INDEX && optional)
        return WGML_OK;
    if (st != WGML_OK)
        return wgml_error(st, "model: tensor %s is missing (%s architecture)", name, mm->arch);
    bool ok = cols ? ti.ndim == 2 && ti.shape[0] == rows && ti.shape[1] == cols : ti.ndim == 1 && ti.shape[0] == rows;
    if (!ok)
        return wgml_error(WGML_ERR_SHAPE, "model: tensor %s has %d dims [%lld, %lld], the hyperparameters say [%lld%s%lld]",
                          name, ti.ndim, (long long)ti.shape[0], (long long)(ti.ndim > 1 ? ti.shape[1] : 0),
                          (long long)rows, cols ? ", " : "", (long long)cols);
    TRY(wgml_gguf_upload(mm->ctx, mm->gguf, name, out));
    mm->weight_bytes += ti.nbytes;
    return own(mm, *out);
}

static wgml_status load_weights(wgml_model *mm, const wgml_model_params *p)
{
    const llm_hparams *hp = &mm->m.hp;
    int64_t E = hp->n_embd, Q = (int64_t)hp->n_head * hp->head_dim, KV = (int64_t)hp->n_head_kv * hp->head_dim;
    TRY(weight(mm, "token_embd.weight", hp->n_vocab, E, false, &mm->m.tok_embd));
    TRY(weight(mm, "output_norm.weight", E, 0, false, &mm->m.out_norm));
    TRY(weight(mm, "output.weight", hp->n_vocab, E, true, &mm->m.output));
    if (!mm->m.output)
        mm->m.output = mm->m.tok_embd; /* tied embeddings (SmolLM2, gemma3) */
    mm->m.layers = calloc((size_t)hp->n_layer, sizeof *mm->m.layers);
    if (!mm->m.layers)
        return wgml_error(WGML_ERR_OOM, "model load: out of host memory");
    bool qk_norm = hp->arch == LLM_QWEN3 || hp->arch == LLM_GEMMA3, bias = hp->arch == LLM_QWEN2;
    for (int il = 0; il < hp->n_layer; il++) {
        llm_layer *L = &mm->m.layers[il];
        char n[96];
#define W(field, nm, r, c, opt)                                                                                    \
    snprintf(n, sizeof n, "blk.%d.%s", il, nm);                                                                    \
    TRY(weight(mm, n, r, c, opt, &L->field))
        W(attn_norm, "attn_norm.weight", E, 0, false);
        W(wq, "attn_q.weight", Q, E, false);
        W(wk, "attn_k.weight", KV, E, false);
        W(wv, "attn_v.weight", KV, E, false);
        W(wo, "attn_output.weight", E, Q, false);
        W(bq, "attn_q.bias", Q, 0, !bias);
        W(bk, "attn_k.bias", KV, 0, !bias);
        W(bv, "attn_v.bias", KV, 0, !bias);
        W(q_norm, "attn_q_norm.weight", hp->head_dim, 0, !qk_norm);
        W(k_norm, "attn_k_norm.weight", hp->head_dim, 0, !qk_norm);
        W(ffn_norm, "ffn_norm.weight", E, 0, false);
        W(w_gate, "ffn_gate.weight", hp->n_ff, E, false);
        W(w_up, "ffn_up.weight", hp->n_ff, E, false);
        W(w_down, "ffn_down.weight", E, hp->n_ff, false);
        W(post_attn_norm, "post_attention_norm.weight", E, 0, hp->arch != LLM_GEMMA3);
        W(post_ffn_norm, "post_ffw_norm.weight", E, 0, hp->arch != LLM_GEMMA3);
#undef W
        if (!p || !p->no_fuse)
            TRY(fuse_layer(mm, L));
        /* one cache where the graph ropes and writes k|v jointly (one
         * set_rows a layer, not two); WGML_LLM_SPLIT_KV=1 (timing) keeps two */
        const char *split = getenv("WGML_LLM_SPLIT_KV");
        if (L->wqkv && !L->q_norm && !L->k_norm && !(split && !strcmp(split, "1"))) {
            TRY(wgml_tensor_new(mm->ctx, WGML_F16, 2, (int64_t[]){mm->m.n_ctx, 2 * KV}, &L->kv_cache));
            TRY(own(mm, L->kv_cache));
            mm->kv_bytes += (uint64_t)mm->m.n_ctx * (uint64_t)KV * 4;
        } else {
            for (int c = 0; c < 2; c++) {
                wgml_tensor **t = c ? &L->v_cache : &L->k_cache;
                TRY(wgml_tensor_new(mm->ctx, WGML_F16, 2, (int64_t[]){mm->m.n_ctx, KV}, t));
                TRY(own(mm, *t));
                mm->kv_bytes += (uint64_t)mm->m.n_ctx * (uint64_t)KV * 2;
            }
        }
        if (p && p->progress && p->progress((float)(il + 1) / (float)hp->n_layer, p->user))
            return wgml_error(WGML_ERR_INVALID_ARG, "model load: cancelled");
    }
    return WGML_OK;
}

void wgml_model_free(wgml_model *mm)
{
    if (!mm)
        return;
    llm_graph_free(&mm->step);
    llm_graph_free(&mm->all);
    for (size_t i = 0; i < mm->n_owned; i++)
        wgml_tensor_free(mm->owned[i]);
    free(mm->owned);
    free(mm->m.layers);
    wgml_vocab_free(mm->vocab);
    wgml_gguf_close(mm->gguf);
    free(mm);
}

wgml_status wgml_model_load(wgml_ctx *ctx, const char *path, const wgml_model_params *p, wgml_model **out)
{
    if (!out)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_model_load: out is NULL");
    *out = NULL;
    if (!ctx || !path)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_model_load: context or path is NULL");
    if (p && (p->n_ctx < 0 || p->n_batch < 0))
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_model_load: negative n_ctx or n_batch");
    wgml_model *mm = calloc(1, sizeof *mm);
    if (!mm)
        return wgml_error(WGML_ERR_OOM, "wgml_model_load: out of host memory");
    mm->ctx = mm->m.ctx = ctx;
    wgml_status st = wgml_gguf_open(path, &mm->gguf);
    if (st == WGML_OK)
        st = wgml_vocab_load(mm->gguf, &mm->vocab);
    if (st == WGML_OK)
        st = read_hparams(mm);
    if (st == WGML_OK) {
        llm_hparams *hp = &mm->m.hp;
        hp->n_vocab = wgml_vocab_n_tokens(mm->vocab);
        int n_ctx = p && p->n_ctx ? p->n_ctx : (hp->n_ctx_train < 4096 ? hp->n_ctx_train : 4096);
        mm->m.n_ctx = n_ctx;
        mm->m.prec = p && p->prefill_f32 ? WGML_PREC_F32 : WGML_PREC_F16;
        mm->n_batch = p && p->n_batch ? p->n_batch : 256;
        if (mm->n_batch > n_ctx)
            mm->n_batch = n_ctx;
        if (mm->n_batch > 512) /* llm_graph_eval's position buffer */
            mm->n_batch = 512;
        st = load_weights(mm, p);
    }
    if (st != WGML_OK) {
        st = wgml_error(st, "%s: %s", path, wgml_last_error());
        wgml_model_free(mm);
        return st;
    }
    *out = mm;
    return WGML_OK;
}

const wgml_vocab *wgml_model_vocab(const wgml_model *mm) { return mm ? mm->vocab : NULL; }

wgml_status wgml_model_info_get(const wgml_model *mm, wgml_model_info *out)
{
    if (!mm || !out)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_model_info_get: NULL argument");
    const llm_hparams *hp = &mm->m.hp;
    memset(out, 0, sizeof *out);
    snprintf(out->arch, sizeof out->arch, "%s", mm->arch);
    out->n_vocab = hp->n_vocab, out->n_embd = hp->n_embd, out->n_layer = hp->n_layer, out->n_ff = hp->n_ff;
    out->n_head = hp->n_head, out->n_head_kv = hp->n_head_kv, out->head_dim = hp->head_dim;
    out->n_ctx = mm->m.n_ctx, out->n_ctx_train = hp->n_ctx_train, out->n_batch = mm->n_batch;
    out->weight_bytes = mm->weight_bytes, out->kv_bytes = mm->kv_bytes;
    return WGML_OK;
}

static bool same_sampling(const wgml_sample_params *a, const wgml_sample_params *b)
{
    return a->temperature == b->temperature && a->top_k == b->top_k && a->top_p == b->top_p && a->min_p == b->min_p;
}

/* Runs ids on graph lg in steps of at most n_batch tokens; with all_logits
 * (lg's graph gives every row's logits) each step's rows are read there. */
static wgml_status run_steps(wgml_model *mm, llm_graph *lg, const int32_t *ids, int n, int n_past, float *all_logits)
{
    uint64_t V = (uint64_t)mm->m.hp.n_vocab;
    for (int done = 0; done < n;) {
        int k = n - done < mm->n_batch ? n - done : mm->n_batch;
        TRY(llm_graph_eval(lg, ids + done, k, n_past + done));
        if (all_logits)
            TRY(wgml_graph_read(lg->g, lg->logits, all_logits + (uint64_t)done * V, (uint64_t)k * V * 4));
        done += k;
    }
    return WGML_OK;
}

static wgml_status check_span(const wgml_model *mm, const int32_t *ids, int n, int n_past, const char *fn)
{
    if (!mm || !ids || n < 1 || n_past < 0)
        return wgml_error(WGML_ERR_INVALID_ARG, "%s: bad arguments (%d tokens at %d)", fn, n, n_past);
    if ((int64_t)n_past + n > mm->m.n_ctx)
        return wgml_error(WGML_ERR_LIMIT, "%s: positions up to %lld exceed the context of %d", fn,
                          (long long)n_past + n, mm->m.n_ctx);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= mm->m.hp.n_vocab)
            return wgml_error(WGML_ERR_INDEX, "%s: token %d at %d is not in the vocabulary of %d", fn, ids[i], i,
                              mm->m.hp.n_vocab);
    return WGML_OK;
}

/* The sampling step's graph for sp (greedy when NULL), rebuilt when the
 * sampling changed. */
static wgml_status step_graph(wgml_model *mm, const wgml_sample_params *sp)
{
    wgml_sample_params greedy = {0};
    if (!sp)
        sp = &greedy;
    if (mm->step.g && !same_sampling(&mm->step_sp, sp))
        llm_graph_free(&mm->step);
    if (!mm->step.g) {
        TRY(llm_graph_build(&mm->m, mm->n_batch, false, sp, &mm->step));
        mm->step_sp = *sp;
    }
    return WGML_OK;
}

wgml_status wgml_model_decode(wgml_model *mm, const int32_t *ids, int n, int n_past, const wgml_sample_params *sp,
                              int32_t *token, float *logits)
{
    TRY(check_span(mm, ids, n, n_past, "wgml_model_decode"));
    TRY(step_graph(mm, sp));
    TRY(run_steps(mm, &mm->step, ids, n, n_past, NULL));
    if (token)
        TRY(wgml_graph_read(mm->step.g, mm->step.token, token, 4));
    if (logits)
        TRY(wgml_graph_read(mm->step.g, mm->step.logits, logits, (uint64_t)mm->m.hp.n_vocab * 4));
    return WGML_OK;
}

wgml_status wgml_model_eval_all(wgml_model *mm, const int32_t *ids, int n, int n_past, float *logits)
{
    TRY(check_span(mm, ids, n, n_past, "wgml_model_eval_all"));
    if (!logits)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_model_eval_all: logits is NULL");
    if (!mm->all.g) {
        wgml_sample_params greedy = {0};
        TRY(llm_graph_build(&mm->m, mm->n_batch, true, &greedy, &mm->all));
    }
    return run_steps(mm, &mm->all, ids, n, n_past, logits);
}

/* Step i (position n_past + i) is issued before step i - 1's token is read:
 * its input is that token, copied on the GPU (llm_graph_eval with no ids),
 * so the GPU goes from step to step without waiting for the host's read,
 * write and encoding in between (the host does them while step i runs).
 * A step issued past a stop only wrote its KV row at a position the caller
 * does not keep. */
wgml_status wgml_model_generate(wgml_model *mm, int32_t first, int n_past, int n, const wgml_sample_params *sp,
                                int (*on_token)(int32_t token, void *user), void *user, int *n_done)
{
    if (n_done)
        *n_done = 0;
    TRY(check_span(mm, &first, 1, n_past, "wgml_model_generate"));
    if (n < 1 || !on_token)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_model_generate: %d tokens%s", n,
                          on_token ? "" : ", on_token is NULL");
    if ((int64_t)n_past + n > mm->m.n_ctx)
        return wgml_error(WGML_ERR_LIMIT, "wgml_model_generate: positions up to %lld exceed the context of %d",
                          (long long)n_past + n, mm->m.n_ctx);
    TRY(step_graph(mm, sp));
    llm_graph *lg = &mm->step;
    wgml_pending *rd[2] = {NULL, NULL};
    wgml_status st = llm_graph_eval_read(lg, &first, 1, n_past, &rd[0]);
    int done = 0;
    for (int i = 1; st == WGML_OK && i <= n; i++) {
        if (i < n)
            st = llm_graph_eval_read(lg, NULL, 1, n_past + i, &rd[i % 2]);
        int32_t tok = 0;
        wgml_pending *r = rd[(i - 1) % 2];
        rd[(i - 1) % 2] = NULL;
        wgml_status rs = wgml_buffer_read_end(r, &tok);
        if (st == WGML_OK)
            st = rs;
        if (st != WGML_OK)
            break;
        done++;
        if (on_token(tok, user))
            break;
    }
    for (int k = 0; k < 2; k++)
        if (rd[k]) {
            wgml_status rs = wgml_buffer_read_end(rd[k], NULL);
            if (st == WGML_OK)
                st = rs;
        }
    if (n_done)
        *n_done = done;
    return st;
}
