/*
 * The decoder graph of src/models (llm_graph.c) against a CPU reference
 * forward pass in double precision, on tiny random models of each
 * architecture (llama, qwen2's biases, qwen3's per-head norms, gemma3's
 * extra norms, sliding window, GEGLU and embedding scale): a 5-token
 * prefill with every row's logits, then the same prefill and 3 decode
 * steps with the last row's logits and a greedy token sampled on the GPU;
 * each architecture also with llm_layer_fuse's q|k|v and gate|up weights
 * (one product and column slices each; without q/k norms also one rope
 * over q|k|v, v passing through, and one k|v cache written by one
 * set_rows, as the loader sets such layers up), and llama so with its k-32
 * products in q8_0 on the one-dispatch product (forced), whose fused
 * epilogues then write the rope, the cache row and the glu.
 *
 * The KV cache is f16 on the GPU, so the reference rounds k and v to f16
 * as it caches them.  Tolerance: |got - want| <= 2e-3 * (1 + max|want|):
 * f32 products over k <= 48 terms (~48 * 2^-24 relative each) and the f16
 * cache (2^-11 relative, rounded identically on both sides but for ties
 * moved by an f32 vs double difference: one f16 ulp on a few elements,
 * ~5e-4 relative after attention averages them) stay well inside it.
 */
#include "graph_harness.h"
#include "models/llm.h"
#include "quant_table.h"

enum { V = 50, E = 32, L = 2, F = 64, H = 4, HKV = 2, D = 8, CTX = 16, T0 = 5, STEPS = 3 };

typedef struct refw {
    t_tensor emb, out_norm, attn_norm[L], wq[L], wk[L], wv[L], wo[L], bq[L], bk[L], bv[L], qn[L], kn[L], pan[L],
        pfn[L], fn[L], wg[L], wu[L], wd[L];
} refw;

static double f16r(double v)
{
    uint16_t h;
    wg_host_set(WGML_F16, &h, 0, v);
    return wg_host_get(WGML_F16, &h, 0);
}

static void rmsn(double *v, int n, const t_tensor *w, double eps)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] * v[i];
    double r = 1.0 / sqrt(s / n + eps);
    for (int i = 0; i < n; i++)
        v[i] = v[i] * r * (w && w->t ? w->val[i] : 1.0);
}

static void lin(const double *x, int k, const t_tensor *w, const t_tensor *b, int n, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = b && b->t ? b->val[i] : 0;
        for (int j = 0; j < k; j++)
            s += x[j] * w->val[(int64_t)i * k + j];
        y[i] = s;
    }
}

static void rope(double *v, int pos, const llm_hparams *hp, float base)
{
    int nd = hp->n_rot;
    for (int i = 0; i < nd / 2; i++) {
        double th = pos * pow(base, -2.0 * i / nd), c = cos(th), s = sin(th);
        int a = hp->rope_mode == WGML_ROPE_NEOX ? i : 2 * i, b = hp->rope_mode == WGML_ROPE_NEOX ? i + nd / 2 : 2 * i + 1;
        double x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x0 * s + x1 * c;
    }
}

/* Reference state: caches [L][CTX][HKV * D]. */
static double kc[L][CTX][HKV * D], vc[L][CTX][HKV * D];

static void ref_forward(const llm_hparams *hp, const refw *w, const int32_t *ids, int n, int n_past, double *logits)
{
    double x[T0][E];
    for (int t = 0; t < n; t++)
        for (int i = 0; i < E; i++)
            x[t][i] = w->emb.val[ids[t] * E + i] * (hp->emb_scale > 0 ? hp->emb_scale : 1);
    for (int l = 0; l < L; l++) {
        bool local = hp->sliding_window > 0 && (l + 1) % hp->swa_period != 0;
        float base = local ? hp->rope_base_local : hp->rope_base;
        double q[T0][H * D];
        for (int t = 0; t < n; t++) {
            double h[E], k[HKV * D], v[HKV * D];
            memcpy(h, x[t], sizeof h);
            rmsn(h, E, &w->attn_norm[l], hp->rms_eps);
            lin(h, E, &w->wq[l], &w->bq[l], H * D, q[t]);
            lin(h, E, &w->wk[l], &w->bk[l], HKV * D, k);
            lin(h, E, &w->wv[l], &w->bv[l], HKV * D, v);
            for (int hh = 0; hh < H; hh++) {
                if (w->qn[l].t)
                    rmsn(q[t] + hh * D, D, &w->qn[l], hp->rms_eps);
                rope(q[t] + hh * D, n_past + t, hp, base);
            }
            for (int hh = 0; hh < HKV; hh++) {
                if (w->kn[l].t)
                    rmsn(k + hh * D, D, &w->kn[l], hp->rms_eps);
                rope(k + hh * D, n_past + t, hp, base);
            }
            for (int i = 0; i < HKV * D; i++) {
                kc[l][n_past + t][i] = f16r(k[i]);
                vc[l][n_past + t][i] = f16r(v[i]);
            }
        }
        for (int t = 0; t < n; t++) {
            int p = n_past + t;
            double a[H * D] = {0}, o[E];
            for (int hh = 0; hh < H; hh++) {
                int g = hh / (H / HKV);
                double s[CTX], mx = -INFINITY, sum = 0;
                double scale = hp->attn_scale > 0 ? hp->attn_scale : 1.0 / sqrt(D);
                for (int j = 0; j <= p; j++) {
                    s[j] = -INFINITY;
                    if (local && j <= p - hp->sliding_window)
                        continue;
                    double d = 0;
                    for (int i = 0; i < D; i++)
                        d += q[t][hh * D + i] * kc[l][j][g * D + i];
                    s[j] = d * scale;
                    mx = fmax(mx, s[j]);
                }
                for (int j = 0; j <= p; j++)
                    sum += s[j] == -INFINITY ? 0 : exp(s[j] - mx);
                for (int j = 0; j <= p; j++) {
                    double pj = s[j] == -INFINITY ? 0 : exp(s[j] - mx) / sum;
                    for (int i = 0; i < D; i++)
                        a[hh * D + i] += pj * vc[l][j][g * D + i];
                }
            }
            lin(a, H * D, &w->wo[l], NULL, E, o);
            if (w->pan[l].t)
                rmsn(o, E, &w->pan[l], hp->rms_eps);
            for (int i = 0; i < E; i++)
                x[t][i] += o[i];
            double f[E], gt[F], up[F], d[E];
            memcpy(f, x[t], sizeof f);
            rmsn(f, E, &w->fn[l], hp->rms_eps);
            lin(f, E, &w->wg[l], NULL, F, gt);
            lin(f, E, &w->wu[l], NULL, F, up);
            for (int i = 0; i < F; i++) {
                double z = gt[i];
                double act = hp->glu == WGML_SWIGLU ? z / (1 + exp(-z))
                                                    : 0.5 * z * (1 + tanh(0.7978845608028654 * (z + 0.044715 * z * z * z)));
                gt[i] = act * up[i];
            }
            lin(gt, F, &w->wd[l], NULL, E, d);
            if (w->pfn[l].t)
                rmsn(d, E, &w->pfn[l], hp->rms_eps);
            for (int i = 0; i < E; i++)
                x[t][i] += d[i];
        }
    }
    for (int t = 0; t < n; t++) {
        rmsn(x[t], E, &w->out_norm, hp->rms_eps);
        lin(x[t], E, &w->emb, NULL, V, logits + (int64_t)t * V);
    }
}

static t_tensor rnd(int64_t rows, int64_t cols, double a)
{
    return cols ? t_random(WGML_F32, 2, (int64_t[]){rows, cols}, -a, a) : t_random(WGML_F32, 1, (int64_t[]){rows}, -a, a);
}

/* rnd's values quantised to q8_0 (blocks of 32 along cols): the model runs
 * the codes, the reference their bit-exact CPU dequantisation. */
static t_tensor qrnd(int64_t rows, int64_t cols, double a)
{
    int64_t n = rows * cols;
    t_tensor r = {0};
    float *src = malloc((size_t)n * 4), *back = malloc((size_t)n * 4);
    uint8_t *q = malloc((size_t)(n / 32 * 34));
    for (int64_t i = 0; i < n; i++)
        src[i] = (float)t_uniform(-a, a);
    CHECK(wg_quantize_ref(qt_of(WGML_Q8_0), src, q, n) == 0 && wg_dequantize_ref(qt_of(WGML_Q8_0), q, back, n) == 0,
          "q8_0 reference quantising");
    CHECK_OK(wgml_tensor_new(t_ctx, WGML_Q8_0, 2, (int64_t[]){rows, cols}, &r.t));
    if (r.t)
        CHECK_OK(wgml_tensor_upload(r.t, q, (uint64_t)(n / 32 * 34)));
    r.n = n;
    r.val = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        r.val[i] = back[i];
    free(src), free(back), free(q);
    return r;
}

/* The tolerance against the reference, relative to 1 + max|want|: 2e-3
 * (the file's first comment); 3e-2 where the decode's products quantise
 * their activations to 8 bits (q8 runs: each x element is rounded to
 * 1/254 of its 32-block's largest |x|, through 2 layers' three such
 * products and their norms; this model's logits moved by <= 1.1% of
 * 1 + max|logit|, fused and unfused alike, so 3% leaves ~3x). */
static double tol = 2e-3;

/* How close to the reference's best logit a sampled token's may be: 1e-3
 * (f32 logits within 2e-3 of the reference: only exact ties flip); with
 * 8-bit activations each logit may be off by tol (1 + max|logit|), so two
 * may swap within twice that. */
static double tie_of(const double *row)
{
    double mx = 0;
    for (int i = 0; i < V; i++)
        mx = fmax(mx, fabs(row[i]));
    return tol > 2e-3 ? 2 * tol * (1 + mx) : 1e-3;
}

static int compare(const char *what, const float *got, const double *want, int n)
{
    double mx = 0;
    for (int i = 0; i < n; i++)
        mx = fmax(mx, fabs(want[i]));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= tol * (1 + mx))) {
            if (bad++ < 3)
                printf("    %s[%d]: got %.6f want %.6f\n", what, i, got[i], want[i]);
        }
    CHECK(!bad, "%s: %d of %d logits off", what, bad, n);
    return bad;
}

/* q8: the products (q, k, v, o, gate, up, down) in q8_0, so that a
 * decode step takes the integer path's one-dispatch product (forced:
 * sgx_r2) and graph fusion's epilogues on it (the q|k|v product's rope
 * and k|v cache row, the gate|up product's glu), as on a GPU. */
static void run_arch_q(llm_arch arch, bool fuse, bool q8)
{
    llm_hparams hp = {.arch = arch, .n_vocab = V, .n_embd = E, .n_layer = L, .n_ff = F, .n_head = H,
                      .n_head_kv = HKV, .head_dim = D, .n_rot = D, .n_ctx_train = 64, .rms_eps = 1e-5f,
                      .rope_base = 10000.0f, .rope_scale = 1.0f, .rope_mode = WGML_ROPE_NEOX, .glu = WGML_SWIGLU};
    if (arch == LLM_LLAMA)
        hp.rope_mode = WGML_ROPE_NORMAL;
    if (arch == LLM_GEMMA3) {
        hp.glu = WGML_GEGLU_TANH, hp.emb_scale = sqrtf(E), hp.sliding_window = 3, hp.swa_period = 2;
        hp.rope_base = 1e6f, hp.rope_base_local = 10000.0f, hp.attn_scale = 0.25f;
    }
    refw w = {0};
    llm_layer layers[L] = {{0}};
    llm_model m = {.ctx = t_ctx, .hp = hp, .n_ctx = CTX, .layers = layers};
    w.emb = rnd(V, E, 1.0);
    w.out_norm = t_random(WGML_F32, 1, (int64_t[]){E}, 0.5, 1.5);
    m.tok_embd = m.output = w.emb.t;
    m.out_norm = w.out_norm.t;
    for (int l = 0; l < L; l++) {
        llm_layer *y = &layers[l];
        w.attn_norm[l] = t_random(WGML_F32, 1, (int64_t[]){E}, 0.5, 1.5);
        w.fn[l] = t_random(WGML_F32, 1, (int64_t[]){E}, 0.5, 1.5);
        t_tensor (*mk)(int64_t, int64_t, double) = q8 ? qrnd : rnd;
        w.wq[l] = mk(H * D, E, 0.3), w.wk[l] = mk(HKV * D, E, 0.3), w.wv[l] = mk(HKV * D, E, 0.3);
        w.wo[l] = mk(E, H * D, 0.3), w.wg[l] = mk(F, E, 0.3), w.wu[l] = mk(F, E, 0.3), w.wd[l] = mk(E, F, 0.3);
        if (arch == LLM_QWEN2)
            w.bq[l] = rnd(H * D, 0, 0.2), w.bk[l] = rnd(HKV * D, 0, 0.2), w.bv[l] = rnd(HKV * D, 0, 0.2);
        if (arch == LLM_QWEN3 || arch == LLM_GEMMA3) {
            w.qn[l] = t_random(WGML_F32, 1, (int64_t[]){D}, 0.5, 1.5);
            w.kn[l] = t_random(WGML_F32, 1, (int64_t[]){D}, 0.5, 1.5);
        }
        if (arch == LLM_GEMMA3) {
            w.pan[l] = t_random(WGML_F32, 1, (int64_t[]){E}, 0.5, 1.5);
            w.pfn[l] = t_random(WGML_F32, 1, (int64_t[]){E}, 0.5, 1.5);
        }
        *y = (llm_layer){w.attn_norm[l].t, w.wq[l].t, w.wk[l].t, w.wv[l].t, w.wo[l].t, w.bq[l].t, w.bk[l].t,
                         w.bv[l].t, w.qn[l].t, w.kn[l].t, w.pan[l].t, w.pfn[l].t, w.fn[l].t, w.wg[l].t,
                         w.wu[l].t, w.wd[l].t, NULL, NULL, NULL, NULL, NULL, NULL, false, NULL, false};
        if (fuse) { /* q|k|v (and qwen2's biases) and gate|up as one product each */
            CHECK_OK(llm_layer_fuse(t_ctx, &hp, y));
            CHECK(y->wqkv && y->wgu && (arch != LLM_QWEN2 || y->bqkv), "layer %d not fused", l);
            /* qwen2 (NEOX, no q/k norms): q and k rows paired for NORMAL pairs */
            CHECK(y->qk_pairs == (arch == LLM_QWEN2), "layer %d: qk_pairs %d", l, y->qk_pairs);
            if (y->wdown_pk) { /* gate|up and down packed in one buffer: as the loader swaps it in */
                y->w_down = y->wdown_pk;
                y->wdown_pk = NULL;
            }
        }
        if (fuse && !y->q_norm && !y->k_norm) { /* as the loader does: one k|v cache, one rope, one write */
            CHECK_OK(wgml_tensor_new(t_ctx, WGML_F16, 2, (int64_t[]){CTX, 2 * HKV * D}, &y->kv_cache));
        } else {
            CHECK_OK(wgml_tensor_new(t_ctx, WGML_F16, 2, (int64_t[]){CTX, HKV * D}, &y->k_cache));
            CHECK_OK(wgml_tensor_new(t_ctx, WGML_F16, 2, (int64_t[]){CTX, HKV * D}, &y->v_cache));
        }
    }
    int32_t ids[T0 + STEPS] = {3, 17, 42, 8, 29, 0, 0, 0};
    double want[T0 * V];
    float got[T0 * V];
    wgml_sample_params greedy = {0};

    llm_graph all;
    wgml_status st = llm_graph_build(&m, 8, true, &greedy, &all);
    CHECK_OK(st);
    if (st == WGML_OK) {
        CHECK_OK(llm_graph_eval(&all, ids, T0, 0));
        CHECK_OK(wgml_graph_read(all.g, all.logits, got, sizeof got));
        ref_forward(&hp, &w, ids, T0, 0, want);
        compare("prefill logits", got, want, T0 * V);
        llm_graph_free(&all);
    }
    llm_graph one;
    uint64_t one_disp = 0;
    st = llm_graph_build(&m, 8, false, &greedy, &one);
    CHECK_OK(st);
    static double last[STEPS + 1][V]; /* the reference's logits of each step's last row */
    static float steps[STEPS + 1][V];   /* wgml's */
    if (st == WGML_OK) {
        int n = T0, past = 0;
        for (int s = 0; s <= STEPS; s++) {
            CHECK_OK(llm_graph_eval(&one, ids + past, n, past));
            CHECK_OK(wgml_graph_read(one.g, one.logits, got, V * 4));
            int32_t tok = -1;
            CHECK_OK(wgml_graph_read(one.g, one.token, &tok, 4));
            ref_forward(&hp, &w, ids + past, n, past, want);
            char what[48];
            snprintf(what, sizeof what, "step %d logits", s);
            compare(what, got, want + (n - 1) * V, V);
            memcpy(steps[s], got, sizeof steps[s]);
            memcpy(last[s], want + (n - 1) * V, sizeof last[s]);
            int best = 0;
            for (int i = 1; i < V; i++)
                best = want[(n - 1) * V + i] > want[(n - 1) * V + best] ? i : best;
            CHECK(tok == best || fabs(want[(n - 1) * V + tok] - want[(n - 1) * V + best]) < tie_of(want + (n - 1) * V),
                  "step %d: sampled %d, reference argmax %d", s, tok, best);
            past += n;
            n = 1;
            if (s < STEPS)
                ids[past] = tok >= 0 && tok < V ? tok : 0;
        }
        /* Again, as wgml_model_generate runs it: each step fed the last
         * step's token on the GPU (ids NULL) and issued before that token
         * is read (two reads in flight).  The same tokens (or, on a GPU
         * whose reductions reorder, one whose reference logit ties). */
        int32_t fed[STEPS + 1] = {0};
        wgml_pending *rd[STEPS + 1] = {0};
        CHECK_OK(llm_graph_eval(&one, ids, T0, 0));
        CHECK_OK(wgml_graph_read_begin(one.g, one.token, 4, &rd[0]));
        for (int s = 1; s <= STEPS; s++) { /* the read in the step's command buffer */
            CHECK_OK(llm_graph_eval_read(&one, NULL, 1, T0 + s - 1, &rd[s]));
            if (rd[s - 1])
                CHECK_OK(wgml_buffer_read_end(rd[s - 1], &fed[s - 1]));
        }
        if (rd[STEPS])
            CHECK_OK(wgml_buffer_read_end(rd[STEPS], &fed[STEPS]));
        for (int s = 0; s <= STEPS; s++) {
            int32_t want_tok = s < STEPS ? ids[T0 + s] : -1;
            if (s == STEPS) { /* the last stepwise token was not kept in ids: the reference argmax */
                want_tok = 0;
                for (int i = 1; i < V; i++)
                    want_tok = last[s][i] > last[s][want_tok] ? i : want_tok;
            }
            CHECK(fed[s] >= 0 && fed[s] < V &&
                  (fed[s] == want_tok || fabs(last[s][fed[s]] - last[s][want_tok]) < tie_of(last[s])),
                  "fed step %d: token %d, stepwise %d", s, fed[s], want_tok);
        }
        wgml_graph_stats gs;
        CHECK_OK(wgml_graph_stats_get(one.g, &gs)); /* of a one-token step */
        one_disp = gs.dispatches;
        llm_graph_free(&one);
    }
    /* q8: the same steps with the q|k|v product's rope and cache write kept
     * apart (WGML_GRAPH_FUSE=norope) give the same logits to f32 rounding
     * (they ran bit-identical on lavapipe): the fused epilogue is exact
     * against the ops it replaces, whatever the 8-bit activations cost */
    if (q8 && st == WGML_OK) {
        t_env("WGML_GRAPH_FUSE", "norope");
        llm_graph un;
        CHECK_OK(llm_graph_build(&m, 8, false, &greedy, &un));
        int n = T0, past = 0, bad = 0;
        for (int s = 0; s <= STEPS; s++) {
            CHECK_OK(llm_graph_eval(&un, ids + past, n, past));
            CHECK_OK(wgml_graph_read(un.g, un.logits, got, V * 4));
            for (int i = 0; i < V; i++)
                if (!(fabs((double)got[i] - steps[s][i]) <= 0x1p-18 * (1 + fabs(got[i]))) && bad++ < 3)
                    printf("    step %d logit %d: fused %.7g unfused %.7g\n", s, i, steps[s][i], got[i]);
            past += n;
            n = 1;
        }
        CHECK(bad == 0, "q8: %d logits differ between the fused and unfused decode", bad);
        /* and the fused step ran no rope and no cache write: 2 dispatches
         * fewer a layer (qwen2's through its paired q and k rows) */
        wgml_graph_stats gs;
        CHECK_OK(wgml_graph_stats_get(un.g, &gs));
        CHECK(one_disp + 2 * L == gs.dispatches, "q8: %llu dispatches a fused step, %llu unfused",
              (unsigned long long)one_disp, (unsigned long long)gs.dispatches);
        llm_graph_free(&un);
        /* the default steps split the norms between their products
         * (src/kernels/matvec_nsplit.wgsl): the ffn norm between the o and
         * gate|up products, the attention norm of layers past the first
         * between the down product and the q|k|v one (its rope epilogue
         * reading the split's codes): 2L - 1 norm dispatches fewer than
         * WGML_GRAPH_FUSE=nosplit; the opt-in norm tail (normtail) in the
         * o and down products' last workgroups drops the same norms.  Each
         * against the reference, within the 8-bit
         * activations' tolerance (the sum of squares in another order; the
         * split's codes are of h * g, not of y) */
        static const char *const modes[] = {"nosplit", "normtail"};
        for (int md = 0; md < 2; md++) {
            t_env("WGML_GRAPH_FUSE", modes[md]);
            llm_graph nt;
            CHECK_OK(llm_graph_build(&m, 8, false, &greedy, &nt));
            n = T0, past = 0, bad = 0;
            for (int s = 0; s <= STEPS; s++) {
                CHECK_OK(llm_graph_eval(&nt, ids + past, n, past));
                CHECK_OK(wgml_graph_read(nt.g, nt.logits, got, V * 4));
                compare(modes[md], got, last[s], V);
                past += n;
                n = 1;
            }
            CHECK_OK(wgml_graph_stats_get(nt.g, &gs));
            uint64_t wd = md == 0 ? one_disp + 2 * L - 1 : one_disp;
            CHECK(gs.dispatches == wd, "q8: %llu dispatches a %s step, %llu a default one (want %llu)",
                  (unsigned long long)gs.dispatches, modes[md], (unsigned long long)one_disp,
                  (unsigned long long)wd);
            llm_graph_free(&nt);
        }
        t_env("WGML_GRAPH_FUSE", NULL);
    }
    t_free(&w.emb), t_free(&w.out_norm);
    for (int l = 0; l < L; l++) {
        t_tensor *ts[] = {&w.attn_norm[l], &w.wq[l], &w.wk[l], &w.wv[l], &w.wo[l], &w.bq[l], &w.bk[l], &w.bv[l],
                          &w.qn[l], &w.kn[l], &w.pan[l], &w.pfn[l], &w.fn[l], &w.wg[l], &w.wu[l], &w.wd[l]};
        if (layers[l].w_down != w.wd[l].t) /* llm_layer_fuse's packed copy */
            wgml_tensor_free(layers[l].w_down);
        for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
            if (ts[i]->t)
                t_free(ts[i]);
        wgml_tensor_free(layers[l].k_cache);
        wgml_tensor_free(layers[l].v_cache);
        wgml_tensor_free(layers[l].kv_cache);
        wgml_tensor_free(layers[l].wqkv);
        wgml_tensor_free(layers[l].bqkv);
        wgml_tensor_free(layers[l].wgu);
    }
}

static void run_arch(llm_arch arch, bool fuse) { run_arch_q(arch, fuse, false); }

static void q8_sgx(llm_arch arch)
{
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(t_ctx, &in));
    if (!(in.features & WGML_FEATURE_SUBGROUPS))
        return;
    t_env("WGML_FORCE", "matvec=sgx_r2");
    tol = 3e-2;
    run_arch_q(arch, true, true);
    tol = 2e-3;
    t_env("WGML_FORCE", NULL);
}
static void llama_q8_sgx(void) { q8_sgx(LLM_LLAMA); }
/* qwen2: its NEOX q and k rows paired at fusion (qk_pairs) and its q|k|v
 * bias, so the decode's rope, bias and cache write run in the product's
 * epilogue, against the reference's NEOX rope of the rows as they were */
static void qwen2_q8_sgx(void) { q8_sgx(LLM_QWEN2); }

static void llama(void) { run_arch(LLM_LLAMA, false); }
static void qwen2(void) { run_arch(LLM_QWEN2, false); }
static void qwen3(void) { run_arch(LLM_QWEN3, false); }
static void gemma3(void) { run_arch(LLM_GEMMA3, false); }
static void llama_fused(void) { run_arch(LLM_LLAMA, true); }
static void qwen2_fused(void) { run_arch(LLM_QWEN2, true); }
static void qwen3_fused(void) { run_arch(LLM_QWEN3, true); }
static void gemma3_fused(void) { run_arch(LLM_GEMMA3, true); }

/* llm_layer_fuse's gate|up: rows interleaved (gate 2i, up 2i + 1), or,
 * for quantised rows not on 4 bytes (q4_0 of 3 blocks: 54 bytes), gate's
 * rows then up's (gu_stacked), the graph slicing it either way. */
static void gate_up_layout(void)
{
    static const int64_t ks[2] = {128, 96}; /* q4_0 rows of 72 and 54 bytes */
    for (int c = 0; c < 2; c++) {
        const int64_t R = 4, k = ks[c];
        uint8_t *rg = NULL, *ru = NULL;
        float *dg = NULL, *du = NULL;
        llm_layer ly;
        memset(&ly, 0, sizeof ly);
        ly.w_gate = quant_table(WGML_Q4_0, R, k, &dg, &rg);
        ly.w_up = quant_table(WGML_Q4_0, R, k, &du, &ru);
        CHECK_OK(llm_layer_fuse(t_ctx, &(llm_hparams){0}, &ly));
        CHECK(ly.wgu && ly.gu_stacked == (c == 1), "k %lld: wgu %p, stacked %d", (long long)k, (void *)ly.wgu,
              ly.gu_stacked);
        uint64_t rowb = (uint64_t)k / 32 * 18;
        uint8_t *got = malloc(2 * R * rowb);
        if (ly.wgu) {
            CHECK_OK(wgml_tensor_download(ly.wgu, got, 2 * R * rowb));
            int bad = 0;
            for (int64_t r = 0; r < 2 * R; r++) {
                bool up = ly.gu_stacked ? r >= R : r % 2;
                int64_t src = ly.gu_stacked ? r % R : r / 2;
                bad += memcmp(got + r * rowb, (up ? ru : rg) + src * rowb, rowb) != 0;
            }
            CHECK(bad == 0, "k %lld: %d of %lld gate|up rows misplaced", (long long)k, bad, (long long)(2 * R));
        }
        free(got), free(rg), free(ru), free(dg), free(du);
        wgml_tensor_free(ly.wgu), wgml_tensor_free(ly.w_gate), wgml_tensor_free(ly.w_up);
    }
}

/* llm_layer_fuse's q|k|v for a NEOX model without q/k norms: q's and k's
 * rows paired in each head (row i of the first n_rot to 2i, i + n_rot / 2
 * to 2i + 1, the rest in place), v's as they were; q4_0 rows of 54 bytes
 * (not on 4 bytes: no step copy) paired a row at a time.
 * WGML_LLM_NEOX_PAIRS=0 keeps them unpaired. */
static void qk_pairs_layout(void)
{
    const int64_t nh = 2, nkv = 1, hd = 8, rot = 6; /* partial rotary: rows 6, 7 of a head stay */
    static const int64_t ks[2] = {128, 96};       /* q4_0 rows of 72 and 54 bytes */
    llm_hparams hp = {.n_head = (int)nh, .n_head_kv = (int)nkv, .head_dim = (int)hd, .n_rot = (int)rot,
                      .rope_mode = WGML_ROPE_NEOX};
    for (int c = 0; c < 3; c++) {
        const int64_t k = ks[c == 1], nq = nh * hd, nk = nkv * hd;
        t_env("WGML_LLM_NEOX_PAIRS", c == 2 ? "0" : NULL);
        uint8_t *raw[3] = {NULL, NULL, NULL};
        float *dq[3] = {NULL, NULL, NULL};
        llm_layer ly;
        memset(&ly, 0, sizeof ly);
        ly.wq = quant_table(WGML_Q4_0, nq, k, &dq[0], &raw[0]);
        ly.wk = quant_table(WGML_Q4_0, nk, k, &dq[1], &raw[1]);
        ly.wv = quant_table(WGML_Q4_0, nk, k, &dq[2], &raw[2]);
        CHECK_OK(llm_layer_fuse(t_ctx, &hp, &ly));
        bool paired = c < 2;
        CHECK(ly.wqkv && ly.qk_pairs == paired, "k %lld case %d: wqkv %p, qk_pairs %d", (long long)k, c,
              (void *)ly.wqkv, ly.qk_pairs);
        uint64_t rowb = (uint64_t)k / 32 * 18;
        int64_t rows = nq + 2 * nk;
        uint8_t *got = malloc((size_t)rows * rowb);
        if (ly.wqkv) {
            CHECK_OK(wgml_tensor_download(ly.wqkv, got, (uint64_t)rows * rowb));
            int bad = 0;
            for (int64_t r = 0; r < rows; r++) {
                int part = r < nq ? 0 : r < nq + nk ? 1 : 2;
                int64_t j = r - (part == 0 ? 0 : part == 1 ? nq : nq + nk), src = j;
                if (paired && part < 2) { /* head h, row d of it */
                    int64_t h = j / hd, d = j % hd;
                    src = h * hd + (d >= rot ? d : d % 2 ? rot / 2 + d / 2 : d / 2);
                }
                bad += memcmp(got + (uint64_t)r * rowb, raw[part] + (uint64_t)src * rowb, rowb) != 0;
            }
            CHECK(bad == 0, "k %lld case %d: %d of %lld q|k|v rows misplaced", (long long)k, c, bad, (long long)rows);
        }
        free(got);
        for (int i = 0; i < 3; i++)
            free(raw[i]), free(dq[i]);
        wgml_tensor_free(ly.wqkv), wgml_tensor_free(ly.wgu);
        wgml_tensor_free(ly.wq), wgml_tensor_free(ly.wk), wgml_tensor_free(ly.wv);
    }
    t_env("WGML_LLM_NEOX_PAIRS", NULL);
}

static const t_case cases[] = {{"llama", llama},           {"qwen2", qwen2},           {"qwen3", qwen3},
                               {"gemma3", gemma3},         {"llama fused", llama_fused}, {"qwen2 fused", qwen2_fused},
                               {"qwen3 fused", qwen3_fused}, {"gemma3 fused", gemma3_fused},
                               {"llama fused q8_0 sgx_r2", llama_q8_sgx}, {"qwen2 fused q8_0 sgx_r2", qwen2_q8_sgx},
                               {"gate_up_layout", gate_up_layout}, {"qk_pairs_layout", qk_pairs_layout}};

int main(int argc, char **argv) { return graph_main(argc, argv, cases, sizeof cases / sizeof *cases); }
