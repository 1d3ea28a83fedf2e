# PyTorch reference for `wgml bench ops`, same sizes and byte accounting,
# same GPU, same run.  Usage: python3 bench/torch_ops.py [MiB] [wgml_output]
# With wgml's output file it prints the ratio table wgml / torch.
import sys
import torch

MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 256
N = MIB * 1024 * 1024 // 4
dev = "cuda"


def bench(fn, iters=20):
    # 0.3 s of warm-up, as wgml's bench ops: the GPU raises its clocks only
    # under sustained work
    import time
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.3:
        for _ in range(8):
            fn()
        torch.cuda.synchronize()
    best = 1e30
    for _ in range(3):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        torch.cuda.synchronize()
        best = min(best, s.elapsed_time(e) / 1e3 / iters)
    return best


res = {}
a = torch.rand(N, device=dev) * 2 - 1
b = torch.rand(N, device=dev) * 2 - 1
o = torch.empty_like(a)
res["copy"] = 2 * N * 4 / bench(lambda: o.copy_(a))
res["add"] = 3 * N * 4 / bench(lambda: torch.add(a, b, out=o))
h = torch.empty(N, device=dev, dtype=torch.float16)
res["cast"] = 1.5 * N * 4 / bench(lambda: h.copy_(a))
x = a.view(-1, 4096)
res["softmax"] = 2 * N * 4 / bench(lambda: torch.softmax(x, -1))
w = torch.rand(4096, device=dev)
res["rms_norm"] = 2 * N * 4 / bench(lambda: torch.nn.functional.rms_norm(x, (4096,), w, 1e-6))
# rope: [seq, heads, 128] NEOX rotation with cos/sin tables, as eager torch does it
hd = 128
xr = a.view(-1, 32, hd)
pos = torch.arange(xr.shape[0], device=dev, dtype=torch.float32)
inv = 10000.0 ** (-torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd)
ang = pos[:, None] * inv[None, :]
cos, sin = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]


def rope():
    x1, x2 = xr[..., : hd // 2], xr[..., hd // 2:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), -1)


res["rope"] = 2 * N * 4 / bench(rope)
table = a.view(-1, 4096)
idx = torch.randperm(table.shape[0], device=dev)
res["get_rows"] = 2 * N * 4 / bench(lambda: torch.index_select(table, 0, idx))
for k, v in res.items():
    print(f"torch {k:10s} {v / 1e9:8.1f} GB/s")
print("note: torch softmax/rms_norm/rope allocate their outputs; rope is eager multi-kernel torch")

if len(sys.argv) > 2:
    wg = {}
    for line in open(sys.argv[2]):
        p = line.split()
        if p and p[0] == "op":
            wg[p[1]] = float(p[p.index("GB/s") - 1])
    print(f"{'op':10s} {'wgml GB/s':>10s} {'torch GB/s':>11s} {'wgml/torch':>11s} {'wgml/copy(torch)':>17s}")
    for k, v in res.items():
        if k in wg:
            print(f"{k:10s} {wg[k]:10.1f} {v / 1e9:11.1f} {wg[k] * 1e9 / v:11.3f} {wg[k] * 1e9 / res['copy']:17.3f}")
