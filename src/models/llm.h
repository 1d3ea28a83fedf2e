/*
 * Decoder-only language models inside src/models (internal to this layer,
 * which sees the public headers alone): hyperparameters and weights as
 * the GGUF loader fills them, and the graph of one evaluation step.
 *
 * One graph serves prefill and decode: its token count T (<= the micro-
 * batch) and its KV length KV (<= the context) are symbolic dims bound per
 * run, so a decode step replays the compiled recording and re-records only
 * the nodes whose shapes involve KV (the cache views and attention).
 * The KV cache lives on the GPU as persistent tensors [n_ctx, Hkv * D]
 * (f16), written at the step's positions with set_rows.
 */
#ifndef WGML_MODELS_LLM_H
#define WGML_MODELS_LLM_H

#include "wgml.h"
#include "wgml_graph.h"

#include <stdbool.h>

/* Returns the status of a failing call (the model layer's error path). */
#define TRY(call)                                                                                                  \
    do {                                                                                                           \
        wgml_status st_ = (call);                                                                                  \
        if (st_ != WGML_OK)                                                                                        \
            return st_;                                                                                            \
    } while (0)

typedef enum llm_arch { LLM_LLAMA, LLM_QWEN2, LLM_QWEN3, LLM_GEMMA3, LLM_ARCH_COUNT } llm_arch;

typedef struct llm_hparams {
    llm_arch arch;
    int n_vocab, n_embd, n_layer, n_ff;
    int n_head, n_head_kv, head_dim;  /* head_dim: attention.key_length, else n_embd / n_head */
    int n_rot;                        /* rope.dimension_count (default head_dim) */
    int n_ctx_train;
    float rms_eps;
    float rope_base, rope_scale;      /* rope.freq_base, 1 / rope.scaling.factor */
    float rope_base_local;            /* gemma3's sliding-window layers (10000) */
    wgml_rope_mode rope_mode;         /* llama: NORMAL (GGUF permutes Q/K), qwen, gemma: NEOX */
    int sliding_window;               /* gemma3: window of local layers (0: none) */
    int swa_period;                   /* gemma3: every swa_period-th layer is global (6) */
    float attn_scale;                 /* 0: 1/sqrt(head_dim) */
    float emb_scale;                  /* gemma: sqrt(n_embd); 0: none */
    wgml_glu_kind glu;                /* SWIGLU, gemma: GEGLU_TANH */
} llm_hparams;

typedef struct llm_layer {
    wgml_tensor *attn_norm, *wq, *wk, *wv, *wo;
    wgml_tensor *bq, *bk, *bv;               /* qwen2 (else NULL) */
    wgml_tensor *q_norm, *k_norm;            /* qwen3, gemma3 */
    wgml_tensor *post_attn_norm, *post_ffn_norm; /* gemma3 */
    wgml_tensor *ffn_norm, *w_gate, *w_up, *w_down;
    wgml_tensor *k_cache, *v_cache;          /* [n_ctx, Hkv * D] f16 */
    /* or, where q|k|v is one product without q/k norms, one cache
     * [n_ctx, 2 Hkv D] (row p: k then v; k_cache and v_cache NULL): the
     * step roped and wrote it with one rope and one set_rows */
    wgml_tensor *kv_cache;
    /* llm_layer_fuse's: q|k|v rows in one weight (and bias), gate|up in
     * one, their rows interleaved (gate row i at 2i, up row i at 2i + 1:
     * the product's even and odd columns, which graph fusion lets one
     * decode product pair into the glu itself); the graph then runs one
     * projection for each group */
    wgml_tensor *wqkv, *bqkv, *wgu;
    bool gu_stacked;  /* wgu holds gate's rows, then up's (rows not on 4 bytes: no interleaved copy) */
    /* where gate, up and down share a dtype: wgu and this copy of w_down
     * are views of one buffer (the persistent FFN, src/ops/ffn.c, binds
     * both weights at once); the loader swaps it for w_down */
    wgml_tensor *wdown_pk;
    /* wqkv's (and bqkv's) q and k rows paired for a NEOX rope: in each
     * head row i of the first n_rot went to 2i and row i + n_rot / 2 to
     * 2i + 1, so the graph ropes them as NORMAL pairs (q . k is unchanged
     * by one reordering of both; the cache holds k so ordered) */
    bool qk_pairs;
} llm_layer;

/* Makes L's fused weights when the parts share a dtype (copies on the
 * GPU; the parts stay, the caller frees what it no longer needs).  Fused,
 * a decode step runs 2 mat-vecs where it ran 5: on an H100 the 1024-row
 * k and v products of an 8B model took 24 µs each at 100 GB/s, the 6144
 * rows of q|k|v together stream at the big products' rate.  A NEOX model
 * without q/k norms (qwen2) gets its q and k rows paired (qk_pairs), so
 * that its decode takes the q|k|v product's rope epilogue, which ropes
 * NORMAL pairs only (src/ops/linear_rope_kv.c); WGML_LLM_NEOX_PAIRS=0
 * (timing) keeps the rows as they are. */
wgml_status llm_layer_fuse(wgml_ctx *ctx, const llm_hparams *hp, llm_layer *L);

typedef struct llm_model {
    wgml_ctx *ctx;
    llm_hparams hp;
    int n_ctx;                               /* KV cache length */
    wgml_precision prec;                     /* the products' (WGML_PREC_F16 unless prefill_f32) */
    wgml_tensor *tok_embd, *out_norm, *output; /* output == tok_embd when tied */
    llm_layer *layers;
} llm_model;

/* One step's graph: inputs ids [T] i32, pos [T] i32 (absolute positions,
 * also the cache rows written), last [1] i32 (the row whose logits are
 * wanted; unused with all_logits), seed [1] i32 (added to the sampling
 * seed: the sampled token's position); outputs logits ([1, V] or [T, V]
 * f32) and token ([1] i32, sampled on the GPU from the last row). */
typedef struct llm_graph {
    wgml_graph *g;
    int64_t T, KV;           /* symbolic dims */
    int max_tokens;
    int n_ctx;               /* KV's bound */
    int64_t kv_bucket;       /* LLM_KV_BUCKET, or WGML_LLM_KV_BUCKET (timing) */
    int64_t window;          /* gemma3's local layers (0: none) */
    bool all_logits;
    wgml_node *ids, *pos, *last, *seed, *logits, *token;
    wgml_node *mask, *mask_swa; /* [T, KV] bool: which cache rows each token sees (mask_swa: local layers) */
    uint8_t *mask_host;      /* max_tokens x n_ctx bytes */
} llm_graph;

wgml_status llm_graph_build(llm_model *m, int max_tokens, bool all_logits, const wgml_sample_params *sp,
                            llm_graph *out);
void llm_graph_free(llm_graph *lg);
/* Binds T = n tokens at positions n_past.. and KV = n_past + n rounded up
 * to LLM_KV_BUCKET (at most n_ctx), writes the inputs (the masks hide the
 * rows past n_past + n) and runs (asynchronously).  ids NULL (n 1, a
 * sampling graph): the token the last run sampled, copied on the GPU. */
wgml_status llm_graph_eval(llm_graph *lg, const int32_t *ids, int n, int n_past);
/* The same, and a read of the sampled token begun in the run's own command
 * buffer (wgml_graph_run_read; end it with wgml_buffer_read_end). */
wgml_status llm_graph_eval_read(llm_graph *lg, const int32_t *ids, int n, int n_past, wgml_pending **token);

/* KV is bound in steps of this many rows: a graph records its dispatches
 * again (bind groups, parameters) for every new binding of its dims, and
 * a decode step that grew KV by one paid that each token (~700 records
 * for an 8B model). */
#define LLM_KV_BUCKET 256

#endif
