/* `wgml generate` and `wgml perplexity`: a GGUF language model through the
 * public model API (wgml_llm.h).  Options follow llama.cpp's tools:
 *   generate -m FILE -p TEXT [-n 128] [--temp T] [--top-k K] [--top-p P]
 *            [--min-p P] [--seed S] [--chat] [--ctx N] [--batch N] [--prefill-f32]
 *   perplexity -m FILE -f TEXT_FILE [--ctx N] [--batch N] [--prefill-f32]
 * Tokens stream to stdout; load progress and the final speeds go to stderr. */
#include "cli.h"
#include "wgml_llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gen_opts {
    const char *model, *prompt, *file;
    int n_predict, n_ctx, n_batch, chat, prefill_f32;
    wgml_sample_params sp;
} gen_opts;

static int parse(int argc, char **argv, gen_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n_predict = 128;
    o->sp.temperature = 0.8f, o->sp.top_k = 40, o->sp.top_p = 0.95f, o->sp.min_p = 0.05f, o->sp.seed = 42;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--chat")) {
            o->chat = 1;
            continue;
        }
        if (!strcmp(a, "--prefill-f32")) {
            o->prefill_f32 = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "wgml: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "-m") || !strcmp(a, "--model"))
            o->model = v;
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt"))
            o->prompt = v;
        else if (!strcmp(a, "-f") || !strcmp(a, "--file"))
            o->file = v;
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict"))
            o->n_predict = atoi(v);
        else if (!strcmp(a, "--ctx") || !strcmp(a, "-c"))
            o->n_ctx = atoi(v);
        else if (!strcmp(a, "--batch") || !strcmp(a, "-b"))
            o->n_batch = atoi(v);
        else if (!strcmp(a, "--temp"))
            o->sp.temperature = (float)atof(v);
        else if (!strcmp(a, "--top-k"))
            o->sp.top_k = atoi(v);
        else if (!strcmp(a, "--top-p"))
            o->sp.top_p = (float)atof(v);
        else if (!strcmp(a, "--min-p"))
            o->sp.min_p = (float)atof(v);
        else if (!strcmp(a, "--seed"))
            o->sp.seed = strtoull(v, NULL, 10);
        else {
            fprintf(stderr, "wgml: unknown option %s\n", a);
            return 2;
        }
    }
    if (!o->model) {
        fprintf(stderr, "wgml: -m FILE.gguf is required (scripts/fetch_model.sh fetches the default model into "
                        "models/)\n");
        return 2;
    }
    if (o->n_predict < 0 || o->n_ctx < 0 || o->n_batch < 0) {
        fprintf(stderr, "wgml: -n, --ctx and --batch must not be negative\n");
        return 2;
    }
    return 0;
}

static int progress(float f, void *user)
{
    (void)user;
    fprintf(stderr, "\rloading %3d%%", (int)(f * 100 + 0.5f));
    return 0;
}

static wgml_model *open_model(const gen_opts *o, wgml_ctx **ctx, double *load_s)
{
    *ctx = cli_open();
    if (!*ctx)
        return NULL;
    double t0 = cli_now();
    wgml_model_params mp = {.n_ctx = o->n_ctx, .n_batch = o->n_batch, .progress = progress, .prefill_f32 = o->prefill_f32};
    wgml_model *m = NULL;
    wgml_status st = wgml_model_load(*ctx, o->model, &mp, &m);
    fprintf(stderr, "\r");
    if (st != WGML_OK) {
        cli_error("loading the model", st);
        wgml_ctx_destroy(*ctx);
        return NULL;
    }
    *load_s = cli_now() - t0;
    return m;
}

/* The chat template of the model's family, by the markers its GGUF
 * template uses: ChatML (SmolLM2, Qwen), Llama 3, Gemma, Zephyr
 * (TinyLlama).  Returns a malloc'd prompt. */
static char *chat_prompt(const wgml_model *m, const char *user)
{
    const wgml_vocab *v = wgml_model_vocab(m);
    const char *pre, *post;
    if (wgml_vocab_find(v, "<|im_start|>", 12) >= 0)
        pre = "<|im_start|>user\n", post = "<|im_end|>\n<|im_start|>assistant\n";
    else if (wgml_vocab_find(v, "<|start_header_id|>", 19) >= 0)
        pre = "<|start_header_id|>user<|end_header_id|>\n\n", post = "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
    else if (wgml_vocab_find(v, "<start_of_turn>", 15) >= 0)
        pre = "<start_of_turn>user\n", post = "<end_of_turn>\n<start_of_turn>model\n";
    else
        pre = "<|user|>\n", post = "</s>\n<|assistant|>\n";
    size_t n = strlen(pre) + strlen(user) + strlen(post) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", pre, user, post);
    return s;
}

/* End-of-generation tokens: EOS and the turn ends of the chat formats. */
static bool end_token(const wgml_vocab *v, int32_t t)
{
    if (t == wgml_vocab_eos(v))
        return true;
    static const char *const ends[] = {"<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|endoftext|>"};
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++)
        if (wgml_vocab_find(v, ends[i], strlen(ends[i])) == t)
            return true;
    return false;
}

static wgml_status tokenize(const wgml_vocab *v, const char *text, int32_t **ids, size_t *n)
{
    size_t need = 0;
    wgml_status st = wgml_vocab_tokenize(v, text, strlen(text), true, true, NULL, 0, &need);
    if (st != WGML_OK)
        return st;
    *ids = malloc((need + 1) * sizeof **ids);
    if (!*ids)
        return wgml_error(WGML_ERR_OOM, "out of host memory for %zu tokens", need);
    return wgml_vocab_tokenize(v, text, strlen(text), true, true, *ids, need + 1, n);
}

typedef struct stream_state {
    const wgml_vocab *v;
    int printed;
} stream_state;

/* Prints a generated token's piece; 1 (stop) at an end-of-generation token. */
static int put_token(int32_t tok, void *user)
{
    stream_state *s = user;
    if (end_token(s->v, tok))
        return 1;
    char piece[256];
    size_t len = 0;
    if (wgml_vocab_token_piece(s->v, tok, false, piece, sizeof piece, &len) == WGML_OK)
        fwrite(piece, 1, len, stdout);
    fflush(stdout);
    s->printed++;
    return 0;
}

int cmd_generate(int argc, char **argv)
{
    gen_opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    if (!o.prompt) {
        fprintf(stderr, "wgml generate: -p TEXT is required\n");
        return 2;
    }
    wgml_ctx *ctx;
    double load_s;
    wgml_model *m = open_model(&o, &ctx, &load_s);
    if (!m)
        return 1;
    const wgml_vocab *v = wgml_model_vocab(m);
    char *text = o.chat ? chat_prompt(m, o.prompt) : NULL;
    int32_t *ids = NULL;
    size_t n = 0;
    wgml_status st = tokenize(v, text ? text : o.prompt, &ids, &n);
    wgml_model_info info;
    wgml_model_info_get(m, &info);
    if (st == WGML_OK && (n == 0 || n + (size_t)o.n_predict > (size_t)info.n_ctx))
        st = wgml_error(WGML_ERR_LIMIT, "%zu prompt tokens + %d to generate exceed the context of %d (--ctx)", n,
                        o.n_predict, info.n_ctx);
    double t0 = cli_now(), t1 = t0;
    int generated = 0;
    if (st == WGML_OK) {
        fputs(o.prompt, stdout); /* the user's text, not the chat-templated one */
        fflush(stdout);
        int32_t tok;
        st = wgml_model_decode(m, ids, (int)n, 0, &o.sp, &tok, NULL);
        t1 = cli_now();
        stream_state ss = {v, 0};
        /* the prompt's token, then the rest generated one step ahead of
         * the printing (wgml_model_generate) */
        if (st == WGML_OK && !put_token(tok, &ss) && o.n_predict > 1)
            st = wgml_model_generate(m, tok, (int)n, o.n_predict - 1, &o.sp, put_token, &ss, NULL);
        generated = ss.printed;
        printf("\n");
    }
    double t2 = cli_now();
    if (st == WGML_OK)
        fprintf(stderr, "load %.2f s | prompt %zu tokens, %.1f tokens/s | generation %d tokens, %.1f tokens/s\n",
                load_s, n, n / (t1 - t0), generated, generated > 1 ? (generated - 1) / (t2 - t1) : 0.0);
    else
        cli_error("generate", st);
    free(ids);
    free(text);
    wgml_model_free(m);
    wgml_ctx_destroy(ctx);
    return st == WGML_OK ? 0 : 1;
}

int cmd_perplexity(int argc, char **argv)
{
    gen_opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    size_t len = 0;
    char *text = o.file ? cli_read_file(o.file, &len) : NULL;
    if (!text) {
        fprintf(stderr, "wgml perplexity: -f FILE (a readable text file) is required\n");
        return 2;
    }
    char *z = realloc(text, len + 1);
    if (!z) {
        free(text);
        return 1;
    }
    text = z;
    text[len] = 0;
    wgml_ctx *ctx;
    double load_s;
    wgml_model *m = open_model(&o, &ctx, &load_s);
    if (!m) {
        free(text);
        return 1;
    }
    wgml_model_info info;
    wgml_model_info_get(m, &info);
    int32_t *ids = NULL;
    size_t n = 0;
    wgml_status st = tokenize(wgml_model_vocab(m), text, &ids, &n);
    if (st == WGML_OK && n > (size_t)info.n_ctx)
        n = (size_t)info.n_ctx; /* one window: the text's first n_ctx tokens */
    float *logits = st == WGML_OK ? malloc(n * (size_t)info.n_vocab * sizeof *logits) : NULL;
    if (st == WGML_OK && !logits)
        st = wgml_error(WGML_ERR_OOM, "out of host memory for %zu x %d logits", n, info.n_vocab);
    double t0 = cli_now();
    if (st == WGML_OK && n < 2)
        st = wgml_error(WGML_ERR_INVALID_ARG, "the text has %zu tokens; perplexity needs 2 or more", n);
    if (st == WGML_OK)
        st = wgml_model_eval_all(m, ids, (int)n, 0, logits);
    if (st == WGML_OK) {
        /* mean NLL of tokens 1..n-1 given their prefixes (the first has none) */
        double nll = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            const float *l = logits + i * (size_t)info.n_vocab;
            double mx = -INFINITY, s = 0;
            for (int j = 0; j < info.n_vocab; j++)
                mx = l[j] > mx ? l[j] : mx;
            for (int j = 0; j < info.n_vocab; j++)
                s += exp(l[j] - mx);
            nll -= l[ids[i + 1]] - mx - log(s);
        }
        nll /= (double)(n - 1);
        printf("tokens %zu  mean NLL %.6f  perplexity %.4f  (%.1f tokens/s)\n", n, nll, exp(nll),
               n / (cli_now() - t0));
    } else {
        cli_error("perplexity", st);
    }
    free(logits);
    free(ids);
    free(text);
    wgml_model_free(m);
    wgml_ctx_destroy(ctx);
    return st == WGML_OK ? 0 : 1;
}
