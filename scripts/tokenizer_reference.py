#!/usr/bin/env python3
"""Reference token ids from llama.cpp (through the xllamacpp wheel's server
and its /tokenize endpoint) for a corpus of texts, written as the JSON
fixture tests/test_tokenizer.c reads:

  {"model": "<gguf file name>",
   "cases": [{"text": ..., "add_special": bool, "parse_special": bool, "ids": [...]}]}

usage: tokenizer_reference.py MODEL.gguf OUT.json [--name NAME] [--random N]
  NAME   the "model" field (default: MODEL's file name); the test looks the
         file up by that name in $WGML_MODEL_DIR, models/ and tests/gguf_corpus/.
  N      instead of the fixed corpus, N random texts (fixed seed) mixing
         ASCII, digits, punctuation, every kind of whitespace, Latin, Greek,
         Cyrillic, CJK, combining marks, emoji and special-token texts:
         a differential test against llama.cpp.
Needs: pip install xllamacpp==2026.10.11549 gguf (a CPU build is enough;
the model must be loadable, see make_gguf_corpus.py --models).
"""
import json
import os
import sys
import urllib.request

TEXTS = [
    "",
    " ",
    "Hello world",
    " Hello world",
    "Hello, world! How are you today?",
    "The quick brown fox jumps over the lazy dog.",
    "It's a test: we're testing; they'll work, won't they? I'M SURE'D",
    "numbers 1 12 123 1234 12345 3.14159 -42 1,000,000",
    "  multiple   spaces   here  ",
    "tabs\tand\ttabs\t\tdouble",
    "line one\nline two\n\nline four\r\nwindows\r\n",
    "\n\n\n",
    "   \n   \n",
    "trailing space ",
    "caf\u00e9 d\u00e9j\u00e0 vu, na\u00efve \u00fcber Stra\u00dfe",
    "\u4f60\u597d\u4e16\u754c\uff0c\u3053\u3093\u306b\u3061\u306f\u3002\uc548\ub155\ud558\uc138\uc694",
    "\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440 \u0645\u0631\u062d\u0628\u0627 \u05e9\u05dc\u05d5\u05dd",
    "emoji \U0001F600\U0001F44D\U0001F3FD \U0001F468\u200D\U0001F469\u200D\U0001F467 \u2764\ufe0f!",
    "def main():\n    return {'a': [1, 2, 3]}  # comment\n",
    "if (x >= 10 && y != 0) { z = x << 2; }",
    "https://example.com/path?q=1&r=two#frag",
    "\u00a0non-breaking\u2003em space\u3000ideographic",
    "MiXeD CaSe WoRdS and ALLCAPS",
    "a'b 'll 'S 'Re ''",
    "\u0661\u0662\u0663 \u2460\u2461 \u00bd \u2167",
    "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>",
    "text<|im_end|>more",
    "<s> hello </s>",
    "<|user|>hi<|ctl|> there<tool>",
    "<unk> and <0x41>",
]


ALPHABET = (list("abcdefgXYZ'sStTreREvVmMlLdD0123456789 .,;:!?-_()[]{}<>|/\\\"@#$%^&*+=~`") +
            [" ", " ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u2003", "\u3000", "\u0085", "\u200b",
             "\u00e9", "\u00df", "\u03b1\u03b2", "\u0436", "\u4e16\u754c", "\u3053", "\uac00", "\u0301", "\u0663",
             "\u00bd", "\u2167", "\U0001F600", "\U0001F44D\U0001F3FD", "\u2764\ufe0f", "\U00010400",
             "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<s>", "</s>", "<unk>", "<|user|>", "<tool>", "\u2581"])


def random_texts(n, seed=1234):
    import random
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def main():
    args = sys.argv[1:]
    name = None
    texts = TEXTS
    if "--random" in args:
        i = args.index("--random")
        texts = random_texts(int(args[i + 1]))
        del args[i:i + 2]
    if "--name" in args:
        i = args.index("--name")
        name = args[i + 1]
        del args[i:i + 2]
    model, out = args
    import xllamacpp as x
    p = x.CommonParams()
    p.model.path = model
    p.n_ctx = 256
    p.cpuparams.n_threads = 1
    srv = x.Server(p)
    addr = srv.listening_address

    def tok(text, add_special, parse_special):
        body = json.dumps({"content": text, "add_special": add_special, "parse_special": parse_special})
        req = urllib.request.Request(addr + "/tokenize", data=body.encode(),
                                     headers={"Content-Type": "application/json"})
        return json.loads(urllib.request.urlopen(req).read())["tokens"]

    cases = []
    combos = [(False, False), (True, True), (False, True)]
    for t in texts:
        # random texts: special tokens parsed or not, BOS/EOS covered by the fixed corpus
        for add_special, parse_special in combos if texts is TEXTS else combos[::2]:
            cases.append({"text": t, "add_special": add_special, "parse_special": parse_special,
                          "ids": tok(t, add_special, parse_special)})
    with open(out, "w", encoding="utf-8") as f:
        # one case a line: diffs of a regenerated fixture stay readable
        f.write('{"model": %s,\n "cases": [\n' % json.dumps(name or os.path.basename(model)))
        f.write(",\n".join("  " + json.dumps(c, ensure_ascii=True) for c in cases))
        f.write("\n]}\n")
    print("wrote", out, len(cases), "cases")
    del srv


if __name__ == "__main__":
    main()
