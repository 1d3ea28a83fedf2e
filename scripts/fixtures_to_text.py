#!/usr/bin/env python3
"""Flattens the llama.cpp fixtures of tests/fixtures/ (JSON, made by
scripts/make_fixtures.py) into whitespace-separated text that the C model
test reads without a JSON parser.  usage: fixtures_to_text.py [MODEL]
(default smollm2): writes tests/fixtures/{generate,nll}_MODEL.txt

generate_MODEL.txt:  prompt NAME N id...   then per step
                     step ID LOGPROB (TOPID TOPLOGPROB) x5      then   end
nll_MODEL.txt:       model FILE / mean_nll X / tokens N id... / logprobs M lp...
"""
import json
import os
import sys

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
name = sys.argv[1] if len(sys.argv) > 1 else "smollm2"

g = json.load(open(os.path.join(here, f"generate_{name}.json")))
with open(os.path.join(here, f"generate_{name}.txt"), "w") as f:
    f.write(f"# from generate_{name}.json (llama.cpp {g['llama_cpp']}, flash attention off): "
            "scripts/fixtures_to_text.py\n")
    f.write(f"model {g['model']}\n")
    for p in g["prompts"]:
        ids = p["prompt_ids"]
        f.write(f"prompt {p['name']} {len(ids)} {' '.join(map(str, ids))}\n")
        for s in p["steps"]:
            top = " ".join(f"{t[0]} {t[1]}" for t in s["top"][:5])
            f.write(f"step {s['id']} {s['logprob']} {top}\n")
        f.write("end\n")

n = json.load(open(os.path.join(here, f"nll_{name}.json")))
with open(os.path.join(here, f"nll_{name}.txt"), "w") as f:
    f.write(f"# from nll_{name}.json (llama.cpp {n['llama_cpp']}): scripts/fixtures_to_text.py\n")
    f.write(f"model {n['model']}\nmean_nll {n['mean_nll']}\n")
    f.write(f"tokens {len(n['tokens'])} {' '.join(map(str, n['tokens']))}\n")
    f.write(f"logprobs {len(n['logprobs'])} {' '.join(map(str, n['logprobs']))}\n")
