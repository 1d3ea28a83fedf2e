"""PyTorch on CUDA for the shapes of `wgml bench gemm` (same run, same GPU).

SGEMM with TF32 off (cuBLAS FP32 SIMT, the reference wgml's f32 GEMM is held
to), torch's f16 GEMM for information (tensor cores, which WebGPU cannot
reach), and a device copy for the bandwidth roofline.  Prints JSON.
"""
import json

import torch

from torch_util import median_ms as timed

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

SHAPES = [  # op, m, n, k, dtype
    ("matmul", 4096, 4096, 4096, torch.float32),
    ("matmul", 8192, 8192, 8192, torch.float32),
    ("matmul", 4096, 4096, 4096, torch.float16),
    ("linear", 512, 14336, 4096, torch.float32),
    ("matmul", 4095, 4097, 1023, torch.float32),
    ("matmul", 1000, 1000, 1000, torch.float32),
    ("matmul", 64, 64, 16384, torch.float32),
    ("matmul", 127, 4096, 4096, torch.float32),
]


def main():
    out = []
    for op, m, n, k, dt in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=dt)
        if op == "linear":
            w = torch.randn(n, k, device="cuda", dtype=dt)
            ms = timed(lambda: torch.nn.functional.linear(a, w))
        else:
            bm = torch.randn(k, n, device="cuda", dtype=dt)
            ms = timed(lambda: a @ bm)
        out.append({"op": op, "m": m, "n": n, "k": k, "dtype": str(dt).replace("torch.", ""), "ms": ms,
                    "tflops": 2 * m * n * k / (ms * 1e-3) / 1e12})
    x = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    ms = timed(lambda: y.copy_(x))
    print(json.dumps({"device": torch.cuda.get_device_name(), "gemm": out,
                      "copy_gb_s": 2 * x.numel() / (ms * 1e-3) / 1e9}, indent=1))


if __name__ == "__main__":
    main()
