#!/usr/bin/env python3
"""Writes the small GGUF files of tests/gguf_corpus/ (the fuzzing seed corpus
and the fixtures of test_gguf / test_tokenizer).  Deterministic: running it
again gives the same bytes.  Needs the `gguf` and `numpy` packages
(pip install gguf==0.19.0 numpy).

usage: make_gguf_corpus.py [OUT_DIR] [--models DIR]
  OUT_DIR   default tests/gguf_corpus next to this script's repository
  --models  also write loadable copies of the vocab files (same vocab plus a
            1-layer llama of random f32 weights) into DIR, for producing
            llama.cpp reference ids with scripts/tokenizer_reference.py.

Files (tests/test_gguf.c checks the values written here):
  types_v3.gguf    every metadata value type, arrays, tensors of f32/f16/q4_0/
                   q8_0/bf16/i32 and of an unsupported type (q8_1), 1-4 dims
  align64_v2.gguf  version 2 header, general.alignment = 64, a 4-D tensor
  vocab_spm.gguf   synthetic SentencePiece vocab (tokenizer.ggml.model llama)
  vocab_bpe.gguf   synthetic byte-level BPE vocab (gpt2, pre "smollm")
  vocab_bpe_llama3.gguf / _qwen2 / _gpt2 / _default.gguf:
                   the same BPE vocab under the llama-bpe, qwen2, gpt-2 and default
                   pre-tokenizers
"""
import os
import sys
from collections import Counter

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def writer(path, arch="llama"):
    return gguf.GGUFWriter(path, arch)


def finish(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def types_file(path):
    w = writer(path, "wgmltest")
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4000000000)
    w.add_int32("t.i32", -2000000000)
    w.add_float32("t.f32", 1.5)
    w.add_bool("t.bool", True)
    w.add_string("t.string", "h\u00e9llo")
    w.add_uint64("t.u64", 1 << 40)
    w.add_int64("t.i64", -(1 << 40))
    w.add_float64("t.f64", 0.25)
    w.add_array("t.arr_i32", [1, -2, 3])
    w.add_array("t.arr_f32", [0.5, -1.0])
    w.add_array("t.arr_str", ["a", "", "\u2581b"])
    w.add_key_value("t.arr_u8", [1, 2, 255], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.UINT8)
    rng = np.random.default_rng(1)
    w.add_tensor("f32_2d", np.arange(6, dtype=np.float32).reshape(2, 3))
    w.add_tensor("f16_1d", np.array([1, 2, 3, 4], dtype=np.float16))
    q = rng.integers(0, 256, size=(2, 2 * 18), dtype=np.uint8)  # 2 rows x 64 elements
    w.add_tensor("q4_0_2d", q, raw_dtype=Q.Q4_0)
    q8 = rng.integers(0, 256, size=(3, 34), dtype=np.uint8)
    w.add_tensor("q8_0_2d", q8, raw_dtype=Q.Q8_0)
    w.add_tensor("bf16_3d", rng.integers(0, 256, size=(2, 1, 4 * 2), dtype=np.uint8), raw_dtype=Q.BF16)
    w.add_tensor("i32_1d", np.array([7, -7], dtype=np.int32))
    w.add_tensor("q8_1_unsupported", rng.integers(0, 256, size=(1, 40), dtype=np.uint8), raw_dtype=Q.Q8_1)
    finish(w)


def align_file(path):
    w = writer(path, "wgmltest")
    w.add_uint32("general.alignment", 64)
    w.add_string("general.name", "align64")
    w.add_tensor("a4d", np.arange(2 * 3 * 1 * 5, dtype=np.float32).reshape(2, 3, 1, 5))
    w.add_tensor("b", np.array([1.0], dtype=np.float32))
    finish(w)
    with open(path, "r+b") as f:  # the gguf package writes v3; v2 has the same layout
        f.seek(4)
        f.write((2).to_bytes(4, "little"))


# ------------------------------------------------------------- vocabularies

TRAIN = """The quick brown fox jumps over the lazy dog. Hello world! Hello, hello.
It's a test: we're testing the tokenizer's merges; they'll work, won't they?
def main(): return 42  # numbers 123 4567 89
Unicode: caf\u00e9 d\u00e9j\u00e0 vu, na\u00efve \u00fcber stra\u00dfe, \u4f60\u597d\u4e16\u754c, \u3053\u3093\u306b\u3061\u306f.
""" * 3


def spm_vocab():
    toks, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [2, 3, 3]
    for b in range(256):
        toks.append("<0x%02X>" % b)
        scores.append(0.0)
        types.append(6)
    toks += ["<|user|>", "<|ctl|>"]
    scores += [0.0, 0.0]
    types += [4, 3]
    pieces = {}
    text = TRAIN.replace("\n", " ")
    for ch in sorted(set(text.replace(" ", "\u2581")) | {"\u2581"}):
        pieces[ch] = -10.0 - (ord(ch) % 7) * 0.5  # ties on purpose (same score, several chars)
    # every prefix of each "▁word": SentencePiece merges only through pieces that exist
    words = Counter("\u2581" + wd for wd in text.split(" ") if wd)
    for wd, n in sorted(words.items()):
        if len(wd) > 12 or "4" in wd:  # leave some words to byte/char fallback
            continue
        for k in range(2, len(wd) + 1):
            p = wd[:k]
            pieces.setdefault(p, -float(len(wd) - k) - 1.0 / (1 + n))
    for extra in ["\u2581\u2581", "\u2581\u2581\u2581", "he", "ll", "llo", "lo"]:
        pieces.setdefault(extra, -3.0)
    for p, s in sorted(pieces.items()):
        toks.append(p)
        scores.append(float(s))
        types.append(1)
    return toks, scores, types


def byte_map():
    """GPT-2's byte -> printable code point table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def bpe_vocab(n_merges=220):
    bm = byte_map()
    # training split: words with their leading space, as GPT-2 does
    import re
    words = Counter(re.findall(r" ?[A-Za-z\u00c0-\u024f\u3040-\u30ff\u4e00-\u9fff]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+", TRAIN))
    seqs = {w: [bm[b] for b in w.encode()] for w in words}
    merges = []
    for _ in range(n_merges):
        pairs = Counter()
        for w, s in seqs.items():
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += words[w]
        if not pairs:
            break
        (a, b), _n = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append(a + " " + b)
        for w, s in seqs.items():
            out, i = [], 0
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            seqs[w] = out
    toks = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool>"]
    types = [3, 3, 3, 4]
    seen = set(toks)
    for b in range(256):
        toks.append(bm[b])
        types.append(1)
        seen.add(bm[b])
    for m in merges:
        t = m.replace(" ", "")
        if t not in seen:
            seen.add(t)
            toks.append(t)
            types.append(1)
    return toks, types, merges


def add_tiny_llama(w, n_vocab):
    """A 1-layer llama of random weights, so llama.cpp can load the vocab."""
    d, ffn = 32, 64
    rng = np.random.default_rng(0)
    w.add_context_length(256)
    w.add_embedding_length(d)
    w.add_block_count(1)
    w.add_feed_forward_length(ffn)
    w.add_head_count(1)
    w.add_head_count_kv(1)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(d)
    r = lambda *s: (rng.standard_normal(s) * 0.02).astype(np.float32)
    w.add_tensor("token_embd.weight", r(n_vocab, d))
    w.add_tensor("blk.0.attn_norm.weight", np.ones(d, dtype=np.float32))
    for n in ["attn_q", "attn_k", "attn_v", "attn_output"]:
        w.add_tensor(f"blk.0.{n}.weight", r(d, d))
    w.add_tensor("blk.0.ffn_norm.weight", np.ones(d, dtype=np.float32))
    w.add_tensor("blk.0.ffn_gate.weight", r(ffn, d))
    w.add_tensor("blk.0.ffn_up.weight", r(ffn, d))
    w.add_tensor("blk.0.ffn_down.weight", r(d, ffn))
    w.add_tensor("output_norm.weight", np.ones(d, dtype=np.float32))


def spm_file(path, model):
    toks, scores, types = spm_vocab()
    w = writer(path)
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    if model:
        add_tiny_llama(w, len(toks))
    finish(w)


def bpe_file(path, pre, model):
    toks, types, merges = bpe_vocab()
    w = writer(path)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(toks)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_pad_token_id(2)
    w.add_add_bos_token(pre != "smollm")  # smollm: off as in SmolLM2; others: on
    if model:
        add_tiny_llama(w, len(toks))
    finish(w)


VOCABS = [("vocab_spm.gguf", None), ("vocab_bpe.gguf", "smollm"), ("vocab_bpe_llama3.gguf", "llama-bpe"),
          ("vocab_bpe_qwen2.gguf", "qwen2"), ("vocab_bpe_gpt2.gguf", "gpt-2"), ("vocab_bpe_default.gguf", "default")]


def main():
    args = sys.argv[1:]
    models = None
    if "--models" in args:
        i = args.index("--models")
        models = args[i + 1]
        del args[i:i + 2]
        os.makedirs(models, exist_ok=True)
    out = args[0] if args else os.path.join(ROOT, "tests", "gguf_corpus")
    os.makedirs(out, exist_ok=True)
    types_file(os.path.join(out, "types_v3.gguf"))
    align_file(os.path.join(out, "align64_v2.gguf"))
    for name, pre in VOCABS:
        for d, model in [(out, False)] + ([(models, True)] if models else []):
            p = os.path.join(d, name)
            spm_file(p, model) if pre is None else bpe_file(p, pre, model)
    for f in sorted(os.listdir(out)):
        print("%-24s %6d bytes" % (f, os.path.getsize(os.path.join(out, f))))


if __name__ == "__main__":
    main()
