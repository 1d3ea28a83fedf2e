# Reference for `wgml bench dispatch`: PyTorch's cost per small dependent
# kernel launch on the same GPU (eager, no CUDA graph), and per launch+sync.
import time
import torch

x = torch.arange(64, dtype=torch.int32, device="cuda")
for _ in range(100):
    x.mul_(3).add_(1)
torch.cuda.synchronize()
n = 10000
best = 1e9
for _ in range(3):
    t0 = time.perf_counter()
    for i in range(n):
        x.add_(1)
    torch.cuda.synchronize()
    best = min(best, (time.perf_counter() - t0) / n)
print(f"torch: {best * 1e6:.2f} us per dependent add_ launch (eager, {n} launches)")
best = 1e9
for _ in range(3):
    t0 = time.perf_counter()
    for i in range(1000):
        x.add_(1)
        torch.cuda.synchronize()
    best = min(best, (time.perf_counter() - t0) / 1000)
print(f"torch: {best * 1e6:.2f} us per launch + synchronize")
