"""torch scaled_dot_product_attention on CUDA for the shapes of `wgml bench attn`.

Prints JSON: median ms after warm-up, TFLOP/s (prefill, 4*B*H*Sq*Skv*D, halved
when causal) or GB/s (decode, K+V bytes). f32 runs with TF32 off.
"""
import json

import torch
import torch.nn.functional as F

from torch_util import median_ms

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

SHAPES = [  # kind, B, Hq, Hkv, Sq, Skv, D, dtype, causal
    ("decode", 1, 32, 8, 1, 8192, 128, torch.float16, False),
    ("decode", 1, 32, 8, 1, 32768, 128, torch.float16, False),
    ("prefill", 1, 32, 32, 4096, 4096, 128, torch.float32, True),
    ("prefill", 1, 32, 32, 4096, 4096, 128, torch.float16, True),
]


def main():
    results = []
    for kind, b, hq, hkv, sq, skv, d, dt, causal in SHAPES:
        q = torch.randn(b, hq, sq, d, device="cuda", dtype=dt)
        k = torch.randn(b, hkv, skv, d, device="cuda", dtype=dt)
        v = torch.randn(b, hkv, skv, d, device="cuda", dtype=dt)
        # bottom-right causal alignment is only needed when sq != skv (not here)
        ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hkv))
        if kind == "decode":
            rate = {"gb_s": 2 * b * hkv * skv * d * q.element_size() / (ms * 1e-3) / 1e9}
        else:
            flops = 4 * b * hq * sq * skv * d / (2 if causal else 1)
            rate = {"tflop_s": flops / (ms * 1e-3) / 1e12}
        results.append({"kind": kind, "b": b, "hq": hq, "hkv": hkv, "sq": sq, "skv": skv, "d": d,
                        "dtype": str(dt).replace("torch.", ""), "causal": causal, "median_ms": ms, **rate})
    print(json.dumps({"device": torch.cuda.get_device_name(), "results": results}, indent=1))


if __name__ == "__main__":
    main()
