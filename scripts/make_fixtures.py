#!/usr/bin/env python3
"""Produce wgml's llama.cpp reference fixtures (tests/fixtures/*.json).

llama.cpp b11549 on the CPU, driven through the PyPI package
xllamacpp==2026.10.11549 (its Server runs llama.cpp's HTTP server in-process;
we use its Python entry point for completions and its HTTP endpoints for
/tokenize and /apply-template).

Exact command (from the repository root; the models come from
scripts/fetch_model.sh):

    python3 -m venv /tmp/venv-fx
    /tmp/venv-fx/bin/pip install xllamacpp==2026.10.11549 numpy==2.4.6 gguf==0.19.0
    bash scripts/fetch_model.sh smollm2
    /tmp/venv-fx/bin/python scripts/make_fixtures.py smollm2
    # outside CI, a second model:
    bash scripts/fetch_model.sh gemma3
    /tmp/venv-fx/bin/python scripts/make_fixtures.py gemma3

Options: --only tokenizer,generate,nll (a subset; nll-batch adds the
single-batch part to an existing nll file), --threads N (default 1),
--model-dir DIR (default $WGML_MODEL_DIR or models/), --check-threads
(reruns the generation with 2 threads and reports any difference),
--nll-checks N (NLL positions re-evaluated as one batch, default 16).
The committed files were made with:
    make_fixtures.py smollm2 --check-threads
    make_fixtures.py gemma3 --nll-checks 8

Outputs, per model M (smollm2 | gemma3): tests/fixtures/tokenizer_M.json,
generate_M.json, nll_M.json; tests/fixtures/README.md describes them.
Every output is deterministic: greedy decoding, fixed seed, one thread, no
prompt cache carried between prompts, floats rounded to 6 decimals.
"""
import argparse
import json
import math
import os
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXDIR = os.path.join(ROOT, "tests", "fixtures")
LLAMA_CPP = "b11549"
XLLAMACPP = "2026.10.11549"
SEED = 1234          # greedy decoding ignores it; recorded so nothing is implicit
N_CTX = 2048         # prompts + 48 generated tokens, and the 512-token NLL text
N_PREDICT = 48       # >= 32 asked for; a few more give the divergence check room
N_PROBS = 5
FORCE_BIAS = 1000.0  # logit bias that makes greedy sampling pick a given token

MODELS = {
    # name: (GGUF file name written by scripts/fetch_model.sh, in CI?, chat template)
    # chat template None: the GGUF's own (SmolLM2's tokenizer.chat_template).
    # The gemma3 GGUF is the base model and carries no template (llama.cpp
    # would fall back to ChatML), so its chat prompts use llama.cpp's
    # built-in "gemma" template: <start_of_turn>user ... <start_of_turn>model
    "smollm2": ("SmolLM2-135M-Instruct.Q4_1.gguf", True, None),
    "gemma3": ("gemma-3-270m-q4_k_m.gguf", False, "gemma"),
}


def r6(x):
    # 6 decimals: far below every tolerance wgml applies, and keeps files small
    return None if x is None else round(float(x), 6)


class Llama:
    """One llama.cpp server (one model, one flash-attention setting)."""

    def __init__(self, path, flash_attn, threads, chat_template=None):
        import xllamacpp as xl
        assert xl.__version__ == XLLAMACPP, f"need xllamacpp=={XLLAMACPP}, have {xl.__version__}"
        p = xl.CommonParams()
        p.model.path = path
        p.n_ctx = N_CTX
        p.n_parallel = 1                 # one slot: requests run one after another
        p.cpuparams.n_threads = threads
        p.cpuparams_batch.n_threads = threads
        p.cache_ram_mib = 0              # no host-side prompt cache across requests
        p.sampling.seed = SEED
        p.verbosity = 0
        if chat_template:
            # a built-in template is looked up by name only outside jinja mode
            p.use_jinja = False
            p.chat_template = chat_template
        fa = xl.llama_flash_attn_type
        p.flash_attn_type = fa.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn else fa.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self.settings = {
            "n_ctx": N_CTX, "n_batch": p.n_batch, "n_ubatch": p.n_ubatch,
            "threads": threads, "flash_attn": bool(flash_attn), "seed": SEED,
            "kv_cache_type": "f16", "device": "CPU (xllamacpp wheel: AVX2 build)",
            "chat_template": (f"llama.cpp built-in '{chat_template}' (the GGUF has none)" if chat_template
                              else "the GGUF's tokenizer.chat_template (jinja)"),
        }
        self.srv = xl.Server(p)
        self.addr = self.srv.listening_address
        # 127.0.0.1 must never go through an http_proxy from the environment
        self.http = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def post(self, path, body):
        req = urllib.request.Request(self.addr + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        return json.loads(self.http.open(req, timeout=600).read())

    def tokenize(self, text, add_special, parse_special):
        r = self.post("/tokenize", {"content": text, "add_special": add_special,
                                    "parse_special": parse_special})
        return r["tokens"]

    def chat_prompt(self, messages):
        return self.post("/apply-template", {"messages": messages})["prompt"]

    def complete(self, ids, n_predict, cache_prompt=False, logit_bias=None):
        req = {
            "prompt": ids, "n_predict": n_predict, "n_probs": N_PROBS,
            # temperature 0: llama.cpp samples greedily; probabilities reported
            # are the softmax of the raw logits (post_sampling_probs false)
            "temperature": 0.0, "seed": SEED, "cache_prompt": cache_prompt,
            "repeat_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0,
            "dry_multiplier": 0.0, "post_sampling_probs": False,
        }
        if logit_bias:
            req["logit_bias"] = logit_bias
        r = self.srv.handle_completions(req)
        if "choices" not in r:
            raise RuntimeError(f"llama.cpp completion failed: {r}")
        ch = r["choices"][0]
        steps = []
        for c in ch["logprobs"]["content"]:
            steps.append({"id": c["id"], "logprob": r6(c["logprob"]),
                          "top": [[t["id"], r6(t["logprob"])] for t in c["top_logprobs"]]})
        return steps, ch["finish_reason"]


# ---------------------------------------------------------------- tokenizer

# Every class of input the brief lists.  Plain Python string escapes, so the
# exact code points are visible here.
TOKENIZER_TEXTS = [
    "",
    "Hello world",
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "It was the best of times, it was the worst of times; it was the age of wisdom...",
    "Don't you think it's odd? She'll say: \"we've won\" -- I'd've guessed not!",
    "(a+b)*[c-d]/{e%f} <g> & h | i ^ j ~ k @ l # m $ n",
    "!!!???...,,,;;;:::---___===+++***",
    "1234567890",
    "3.14159265358979323846264338327950288419716939937510",
    "Call 555-0199 or +1 (800) 123-4567; total: $1,234,567.89 (12.5%)",
    "In 2024, 17 of 365 days were 0.5 degrees above 1e-3.",
    "caf\u00e9 na\u00efve r\u00e9sum\u00e9 fa\u00e7ade \u00fcber Stra\u00dfe \u00e5ngstr\u00f6m",
    "e\u0301 (e + combining acute) vs \u00e9 (precomposed)",
    "\u4f60\u597d\uff0c\u4e16\u754c\uff01\u4eca\u5929\u5929\u6c14\u5f88\u597d\u3002",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3068\u30ab\u30bf\u30ab\u30ca",
    "\ud55c\uad6d\uc5b4 \ubb38\uc7a5\uc785\ub2c8\ub2e4.",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u041a\u0430\u043a \u0434\u0435\u043b\u0430?",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",
    "\u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u039a\u03cc\u03c3\u03bc\u03b5",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd",
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e0a\u0e32\u0e27\u0e42\u0e25\u0e01",
    "\U0001f600\U0001f680\U0001f525",
    "\U0001f44d\U0001f3fd thumbs up, medium skin tone; \U0001f44b\U0001f3ff wave",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 family (ZWJ)",
    "\U0001f3f3\ufe0f\u200d\U0001f308 and \U0001f1eb\U0001f1f7 flags",
    "\U0001f469\U0001f3fd\u200d\U0001f4bb coder",
    "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n    return a + b\n",
    "class Foo:\n    def __init__(self):\n        self.x = [i ** 2 for i in range(10)]\n",
    "int main(void) {\n\tint x = 0;\n\tfor (int i = 0; i < 10; ++i)\n\t\tx += i;\n\treturn x;\n}\n",
    "#include <stdio.h>\n#define MAX(a,b) ((a)>(b)?(a):(b))\n",
    "if (a && b || !c) { p->next = *q; } // comment\n/* block */",
    "a  b   c    d     e",
    "          ten leading spaces",
    "trailing spaces   ",
    "line one\nline two\n\nline four\n\n\n",
    "windows\r\nline\r\nendings\r\n",
    "tab\there\t\tand\t\t\tthere",
    " ",
    "\n",
    "\n\n\n\n",
    "   \n   \n",
    "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>",
    "text before<|im_end|>text after",
    "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
    "<bos>hello<eos>",
    "<|im_start|> <|im_end|>  <|endoftext|>",
    "<not_a_special_token> <|fake|>",
    "HTTPS://Example.COM/path?q=1&r=two#frag user@example.org",
    "MiXeD CaSe WORDS and ALLCAPS and lowercase",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "x" * 64,
    "\u00a0non-breaking\u00a0spaces\u2003em\u2009thin",
]


def long_text():
    # a long input from the committed NLL passage, repeated, with the other
    # corpus classes mixed in: about 1,450 tokens for SmolLM2
    with open(os.path.join(FIXDIR, "nll_text.txt"), encoding="utf-8") as f:
        base = f.read()
    return base + "\n\n" + "\n".join(TOKENIZER_TEXTS[10:30]) + "\n" + base


def special_text(t):
    return "<" in t and ">" in t


def make_tokenizer(llm, model_file):
    texts = TOKENIZER_TEXTS + [long_text()]
    cases = []
    for t in texts:
        # every text: raw pieces (no BOS, specials as text) and prompt mode
        # (model's BOS rule, specials parsed); texts that hold special-token
        # strings also get the two mixed combinations
        combos = [(False, False), (True, True)]
        if special_text(t):
            combos += [(False, True), (True, False)]
        for add_special, parse_special in combos:
            cases.append({"text": t, "add_special": add_special, "parse_special": parse_special,
                          "ids": llm.tokenize(t, add_special, parse_special)})
    return {"model": model_file, "llama_cpp": LLAMA_CPP, "cases": cases}


# ---------------------------------------------------------------- generation

PLAIN_PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea,",
    "def fibonacci(n):\n",
    "The three primary colors are",
]
CHAT_PROMPTS = [
    [{"role": "user", "content": "What is the tallest mountain in the world?"}],
    [{"role": "user", "content": "Write a short poem about the ocean."}],
    [{"role": "user", "content": "Write a short story about a robot who learns to paint."}],
    [{"role": "user", "content": "Explain how photosynthesis works."}],
]


def gen_prompts(llm):
    out = []
    for i, t in enumerate(PLAIN_PROMPTS):
        out.append({"name": f"plain{i}", "kind": "plain", "text": t})
    for i, msgs in enumerate(CHAT_PROMPTS):
        out.append({"name": f"chat{i}", "kind": "chat", "messages": msgs,
                    "text": llm.chat_prompt(msgs)})
    for p in out:
        # the server tokenizes a text prompt this way; we pass the ids so the
        # prompt is exact and the C test can check its own tokenization too
        p["prompt_ids"] = llm.tokenize(p["text"], True, True)
    return out


def run_prompts(llm, prompts):
    runs = []
    for p in prompts:
        steps, finish = llm.complete(p["prompt_ids"], N_PREDICT)
        runs.append({"tokens": [s["id"] for s in steps], "steps": steps, "finish": finish})
    return runs


def compare_runs(a, b):
    """First step where greedy tokens differ, and logprob gaps before it."""
    n = min(len(a["tokens"]), len(b["tokens"]))
    first = next((i for i in range(n) if a["tokens"][i] != b["tokens"][i]), None)
    upto = n if first is None else first + 1
    dlp = [abs(a["steps"][i]["logprob"] - b["steps"][i]["logprob"]) for i in range(upto)
           if a["steps"][i]["id"] == b["steps"][i]["id"]]
    d = {"first_diff_step": first, "n_compared": n,
         "max_abs_logprob_diff_while_equal": r6(max(dlp) if dlp else 0.0),
         "mean_abs_logprob_diff_while_equal": r6(sum(dlp) / len(dlp) if dlp else 0.0)}
    if first is not None:
        sa, sb = a["steps"][first], b["steps"][first]
        # how close the two candidates were in the reference run: a tie-break
        # between near-equal logits, or a real change
        top = dict((t[0], t[1]) for t in sa["top"])
        d["at_diff"] = {"a_id": sa["id"], "a_logprob": sa["logprob"],
                        "b_id": sb["id"], "b_logprob": sb["logprob"],
                        "b_id_logprob_in_a": top.get(sb["id"])}
    return d


def make_generate(model_path, model_file, threads, check_threads, chat_template):
    t0 = time.time()
    off = Llama(model_path, False, threads, chat_template)
    prompts = gen_prompts(off)
    runs_off = run_prompts(off, prompts)
    settings = dict(off.settings)
    del off
    on = Llama(model_path, True, threads, chat_template)
    runs_on = run_prompts(on, prompts)
    del on
    fa_cmp = []
    for p, a, b in zip(prompts, runs_off, runs_on):
        p.update(a)                      # the reference: flash attention off
        p["fa_on"] = b
        c = compare_runs(a, b)
        c["name"] = p["name"]
        fa_cmp.append(c)
    n_diff = sum(1 for c in fa_cmp if c["first_diff_step"] is not None)
    out = {
        "model": model_file, "llama_cpp": LLAMA_CPP, "xllamacpp": XLLAMACPP,
        "settings": dict(settings, flash_attn=False, n_predict=N_PREDICT, n_probs=N_PROBS,
                         sampling="greedy (temperature 0), no penalties",
                         logprobs="natural log of softmax(raw logits), llama.cpp server n_probs",
                         reference_run="flash attention off; prompts[i].fa_on is the same with it on"),
        "prompts": prompts,
        "flash_attn_on_vs_off": {"prompts_with_different_greedy_tokens": n_diff,
                                 "n_prompts": len(prompts), "per_prompt": fa_cmp},
    }
    if check_threads:
        two = Llama(model_path, False, 2)
        runs2 = run_prompts(two, prompts)
        del two
        tc = [compare_runs(a, b) for a, b in zip(runs_off, runs2)]
        out["threads_1_vs_2"] = {
            "prompts_with_different_greedy_tokens": sum(1 for c in tc if c["first_diff_step"] is not None),
            "max_abs_logprob_diff": max(c["max_abs_logprob_diff_while_equal"] for c in tc)}
    print(f"generate: {time.time() - t0:.0f} s, fa on/off differ on {n_diff}/{len(prompts)} prompts",
          file=sys.stderr)
    return out


# ---------------------------------------------------------------- NLL

def teacher_force(llm, ids):
    """logprob and top-5 of ids[i] given ids[:i], for i = 1 .. len(ids)-1."""
    lps, tops = [], []
    for i in range(1, len(ids)):
        steps, _ = llm.complete(ids[:i], 1, cache_prompt=True, logit_bias=[[ids[i], FORCE_BIAS]])
        s = steps[0]
        assert s["id"] == ids[i], (i, s["id"], ids[i])
        lps.append(s["logprob"])
        tops.append(s["top"])
    return lps, tops


def make_nll(model_path, model_file, threads, n_checks):
    """Per-token logprobs of the committed text, teacher-forced.

    xllamacpp's server has no prompt logprobs ("echo" is refused: "Only no
    echo is supported"), so each position is one request: prompt = the
    tokens before it, one token generated, forced to the text's next token
    with a +1000 logit bias.  The bias only steers the sampler; the logprob
    llama.cpp reports is from the raw logits, searched over the whole
    vocabulary.  With the prompt cache on, each request evaluates one new
    token on top of the KV cache (511 cheap requests instead of 130k
    tokens of prefill).  Measured beside it, to show how much llama.cpp's
    own numbers move with the evaluation order: n_checks positions
    re-evaluated from scratch as one batch of the whole prefix (what a
    perplexity run computes), and the whole text with flash attention on.
    """
    t0 = time.time()
    llm = Llama(model_path, False, threads)
    with open(os.path.join(FIXDIR, "nll_text.txt"), encoding="utf-8") as f:
        text = f.read()
    ids = llm.tokenize(text, True, False)
    lps, tops = teacher_force(llm, ids)
    checks = []
    for k in range(n_checks):
        i = 1 + (len(ids) - 2) * k // max(1, n_checks - 1)
        steps, _ = llm.complete(ids[:i], 1, cache_prompt=False, logit_bias=[[ids[i], FORCE_BIAS]])
        checks.append({"position": i, "incremental": lps[i - 1], "single_batch": steps[0]["logprob"]})
    settings = dict(llm.settings)
    del llm
    on = Llama(model_path, True, threads)
    lps_fa, _ = teacher_force(on, ids)
    del on
    nll = -sum(lps) / len(lps)
    nll_fa = -sum(lps_fa) / len(lps_fa)
    d_sb = [c["single_batch"] - c["incremental"] for c in checks]
    d_fa = [a - b for a, b in zip(lps_fa, lps)]
    out = {
        "model": model_file, "llama_cpp": LLAMA_CPP, "xllamacpp": XLLAMACPP,
        "text_file": "nll_text.txt",
        "tokenize": {"add_special": True, "parse_special": False},
        "n_tokens": len(ids), "n_scored": len(lps),
        "mean_nll": r6(nll), "perplexity": r6(math.exp(nll)),
        "tokens": ids,
        "logprobs": lps,
        "top5": tops,
        "method": ("teacher-forced, one request per position: logprob of token i given tokens 0..i-1; "
                   "token 0 is not scored; KV cache built one token at a time (see evaluation_order)"),
        "settings": dict(settings, flash_attn=False),
        "evaluation_order": {
            "note": "how much llama.cpp itself moves: same model, same text, other evaluation paths",
            "single_batch_positions": checks,
            "single_batch_mean_diff": r6(sum(d_sb) / len(d_sb)),
            "single_batch_max_abs_diff": r6(max(abs(x) for x in d_sb)),
            "flash_attn_on_mean_nll": r6(nll_fa),
            "flash_attn_on_mean_abs_logprob_diff": r6(sum(abs(x) for x in d_fa) / len(d_fa)),
            "flash_attn_on_max_abs_logprob_diff": r6(max(abs(x) for x in d_fa)),
        },
    }
    print(f"nll: {time.time() - t0:.0f} s, mean NLL {nll:.4f} (fa on {nll_fa:.4f}) over {len(lps)} tokens",
          file=sys.stderr)
    return out


def single_batch_nll(model_path, ids, threads):
    """The whole text in ONE batch, as a perplexity run evaluates it.

    llama.cpp cannot hand out the logits of every position, but its
    /embeddings endpoint with pooling "none" hands out every position's final
    hidden state (the output norm's result, the lm_head's input) from one
    batch.  The lm_head is then applied here: the GGUF's output matrix
    (tied token_embd, Q8_0 in both models) dequantized by the gguf package,
    the product and log-softmax in float64.  That last product is the only
    step not done by llama.cpp (its own quantizes the hidden state to 8 bits;
    the difference is a few 1e-3 in logprob).  Needs numpy and gguf in the
    venv.
    """
    import numpy as np
    import gguf
    import xllamacpp as xl
    p = xl.CommonParams()
    p.model.path = model_path
    p.n_ctx = N_CTX
    p.n_batch = p.n_ubatch = 1024     # embeddings need the whole input in one ubatch
    p.n_parallel = 1
    p.cpuparams.n_threads = p.cpuparams_batch.n_threads = threads
    p.cache_ram_mib = 0
    p.verbosity = 0
    p.flash_attn_type = xl.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_DISABLED
    p.embedding = True
    p.pooling_type = xl.llama_pooling_type.LLAMA_POOLING_TYPE_NONE
    srv = xl.Server(p)
    # the OpenAI-style handle_embeddings refuses pooling "none"; the server's
    # own /embeddings endpoint returns one vector per token
    http = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(srv.listening_address + "/embeddings",
                                 data=json.dumps({"content": ids}).encode(),
                                 headers={"Content-Type": "application/json"})
    hidden = np.array(json.loads(http.open(req, timeout=600).read())[0]["embedding"], dtype=np.float64)
    del srv
    assert hidden.shape[0] == len(ids), hidden.shape
    rd = gguf.GGUFReader(model_path)
    names = {t.name: t for t in rd.tensors}
    w = names.get("output.weight") or names["token_embd.weight"]
    h = hidden[:-1]                    # position i predicts token i+1
    nrow = w.data.shape[0]
    mx = np.full(len(h), -np.inf)
    se = np.zeros(len(h))
    tgt = np.zeros(len(h))
    nxt = np.array(ids[1:])
    for r0 in range(0, nrow, 16384):   # vocabulary in chunks: gemma3's is 262k rows
        wc = gguf.quants.dequantize(w.data[r0:r0 + 16384], w.tensor_type).astype(np.float64)
        lg = h @ wc.T
        m = np.maximum(mx, lg.max(1))
        se = se * np.exp(mx - m) + np.exp(lg - m[:, None]).sum(1)
        mx = m
        inside = (nxt >= r0) & (nxt < r0 + wc.shape[0])
        tgt[inside] = lg[inside, nxt[inside] - r0]
    lp = tgt - (mx + np.log(se))
    return [r6(x) for x in lp], w.name, w.tensor_type.name


def add_single_batch(nll, model_path, threads):
    lps, wname, wtype = single_batch_nll(model_path, nll["tokens"], threads)
    d = [a - b for a, b in zip(lps, nll["logprobs"])]
    m = -sum(lps) / len(lps)
    nll["single_batch"] = {
        "method": (f"llama.cpp /embeddings, pooling none: final hidden states of all positions from one batch "
                   f"(flash attention off, n_ubatch 1024); lm_head ({wname}, {wtype}) dequantized by gguf and "
                   f"applied in float64 by make_fixtures.py"),
        "mean_nll": r6(m),
        "mean_nll_minus_reference": r6(m - nll["mean_nll"]),
        "mean_abs_logprob_diff": r6(sum(abs(x) for x in d) / len(d)),
        "max_abs_logprob_diff": r6(max(abs(x) for x in d)),
        "logprobs": lps,
    }
    print(f"nll single batch: mean NLL {m:.4f} (reference {nll['mean_nll']:.4f})", file=sys.stderr)
    return nll


def write(name, obj):
    path = os.path.join(FIXDIR, name)
    with open(path, "w", encoding="utf-8") as f:
        # UTF-8 as is (no \\u escapes beyond JSON's required control ones):
        # simplest for a small C JSON reader
        json.dump(obj, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)} ({os.path.getsize(path)} bytes)", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("--model-dir", default=os.environ.get("WGML_MODEL_DIR", os.path.join(ROOT, "models")))
    ap.add_argument("--only", default="tokenizer,generate,nll")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--check-threads", action="store_true")
    ap.add_argument("--nll-checks", type=int, default=16,
                    help="positions of the NLL text re-evaluated as one batch (costs ~ position tokens each)")
    a = ap.parse_args()
    model_file, in_ci, chat_template = MODELS[a.model]
    path = os.path.join(a.model_dir, model_file)
    if not os.path.isfile(path):
        sys.exit(f"make_fixtures: {path} missing; run: bash scripts/fetch_model.sh {a.model}")
    only = set(a.only.split(","))
    os.makedirs(FIXDIR, exist_ok=True)
    ci_note = {} if in_ci else {"ci": "outside CI (model not downloaded by make test)"}
    if "tokenizer" in only:
        llm = Llama(path, False, a.threads)
        write(f"tokenizer_{a.model}.json", dict(make_tokenizer(llm, model_file), **ci_note))
        del llm
    if "generate" in only:
        write(f"generate_{a.model}.json", dict(make_generate(path, model_file, a.threads, a.check_threads, chat_template), **ci_note))
    if "nll" in only:
        nll = make_nll(path, model_file, a.threads, a.nll_checks)
        write(f"nll_{a.model}.json", dict(add_single_batch(nll, path, a.threads), **ci_note))
    elif "nll-batch" in only:
        # adds the single-batch part to an existing nll file without redoing it
        with open(os.path.join(FIXDIR, f"nll_{a.model}.json"), encoding="utf-8") as f:
            nll = json.load(f)
        nll = add_single_batch(nll, path, a.threads)
        if "ci" in nll:
            nll["ci"] = nll.pop("ci")    # last, as a full run writes it
        write(f"nll_{a.model}.json", nll)


if __name__ == "__main__":
    main()
