#!/usr/bin/env python3
"""PyTorch peer of `wgml bench gemm`: the same shapes on CUDA, printed as JSON.

SGEMM with TF32 off (plain FP32 SIMT, what wgml's WGSL kernels can use), and
f16 GEMM for information.  linear shapes are x [m, k] . w [n, k]^T.  Each
shape: 0.3 s of warm-up, then the median of 7 repetitions of `iters` calls
between synchronisations (the same method as tools/bench_gemm.c).
Quantised weights have no torch peer; their rows give the f32 figure of the
same shape.
"""
import json
import statistics
import time

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

SHAPES = [  # (op, m, n, k)
    ("matmul", 4096, 4096, 4096),
    ("matmul", 8192, 8192, 8192),
    ("linear", 512, 14336, 4096),
    ("matmul", 4095, 4097, 1023),
    ("matmul", 1000, 1000, 1000),
    ("matmul", 64, 64, 16384),
    ("matmul", 127, 4096, 4096),
]


def bench(op, m, n, k, dtype):
    a = torch.rand(m, k, device="cuda", dtype=dtype) * 2 - 1
    b = torch.rand(n, k, device="cuda", dtype=dtype) * 2 - 1 if op == "linear" else \
        torch.rand(k, n, device="cuda", dtype=dtype) * 2 - 1

    def call():
        return torch.nn.functional.linear(a, b) if op == "linear" else a @ b

    flop = 2.0 * m * n * k
    iters = max(1, min(200, int(5e12 / flop)))
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.3:
        call()
        torch.cuda.synchronize()
    times = []
    for _ in range(7):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(iters):
            call()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) / iters)
    med = statistics.median(times)
    return {"op": op, "m": m, "n": n, "k": k, "dtype": str(dtype).replace("torch.", ""),
            "ms": med * 1e3, "tflops": flop / med / 1e12}


def main():
    results = []
    for op, m, n, k in SHAPES:
        results.append(bench(op, m, n, k, torch.float32))
        results.append(bench(op, m, n, k, torch.float16))
    print(json.dumps({"device": torch.cuda.get_device_name(), "tf32": False, "results": results}, indent=1))


if __name__ == "__main__":
    main()
