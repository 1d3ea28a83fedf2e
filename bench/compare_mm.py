"""Ratio tables of wgml against PyTorch measured in the same run.
usage: compare_mm.py DIR   (DIR holds gemm.json, matvec.json, attn.json from
`wgml bench ... --json` and torch_gemm.json, torch_attn.json)"""
import json
import os
import sys


def load(d, name):
    p = os.path.join(d, name)
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"({name}: {e})")
        return None


def main():
    d = sys.argv[1]
    g, tg = load(d, "gemm.json"), load(d, "torch_gemm.json")
    copy = tg["copy_gb_s"] if tg else None
    if g:
        print("\nGEMM (TFLOP/s; cuBLAS SGEMM with TF32 off; f16 torch uses tensor cores)")
        print(f"{'op':7} {'m x n x k':20} {'dtypes':10} {'prec':4} {'wgml':>8} {'torch':>8} {'ratio':>6}")
        for r in g["results"]:
            t = None
            if tg:
                want = "float16" if r["dtypes"].startswith("f16") else "float32"
                for x in tg["gemm"]:
                    if (x["m"], x["n"], x["k"]) == (r["m"], r["n"], r["k"]) and x["dtype"] == want:
                        t = x["tflops"]
                if r["op"] == "linear" and r["dtypes"] != "f32.f32":  # quantised: vs wgml's own f32 linear
                    t = next((y["tflops"] for y in g["results"] if y["op"] == "linear" and y["dtypes"] == "f32.f32"
                              and y.get("prec", "f32") == "f32"
                              and (y["m"], y["n"], y["k"]) == (r["m"], r["n"], r["k"])), None)
            shape = f"{r['m']}x{r['n']}x{r['k']}"
            ratio = f"{r['tflops'] / t:.2f}" if t else "-"
            print(f"{r['op']:7} {shape:20} {r['dtypes']:10} {r.get('prec', 'f32'):4} {r['tflops']:8.2f} {t or 0:8.2f} "
                  f"{ratio:>6}")
        print("(quantised linear rows compare with wgml's own f32 linear of the same shape; prec f16: WGML_PREC_F16)")
    mv = load(d, "matvec.json")
    if mv:
        print(f"\nmat-vec, 1 row, {mv.get('matrices')} x [{mv.get('n')}, {mv.get('k')}] (GB/s of weights; "
              f"torch copy {copy or 0:.0f} GB/s)")
        for r in mv["results"]:
            print(f"  {r['dtype']:6} {r['step_us']:10.1f} us  {r['gb_s']:8.1f} GB/s  "
                  f"{(r['gb_s'] / copy if copy else 0):.2f} of copy")
    a, ta = load(d, "attn.json"), load(d, "torch_attn.json")
    if a:
        print("\nattention (decode: GB/s of K+V vs copy; prefill: TFLOP/s vs torch SDPA)")
        for r in a["results"]:
            t = None
            if ta:
                for x in ta["results"]:
                    if all(x[k] == r[k] for k in ("kind", "hq", "hkv", "sq", "skv", "d")) and \
                            x["dtype"].startswith("float32" if r["dtype"] == "f32" else "float16"):
                        t = x
            if r["kind"] == "decode":
                print(f"  decode skv {r['skv']:6} {r['dtype']}: {r['median_ms'] * 1e3:8.1f} us {r['gb_s']:7.1f} GB/s "
                      f"= {(r['gb_s'] / copy if copy else 0):.2f} of copy; torch {t['gb_s'] if t else 0:.1f} GB/s")
            else:
                tt = t["tflop_s"] if t else 0
                print(f"  prefill {r['sq']} {r['dtype']} causal: {r['tflop_s']:6.2f} TFLOP/s; torch {tt:6.2f}; "
                      f"ratio {(r['tflop_s'] / tt if tt else 0):.2f}")


if __name__ == "__main__":
    main()
