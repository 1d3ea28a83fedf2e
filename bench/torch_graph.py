"""PyTorch peer of `wgml bench graph`, in the same run: 10,000 dependent
abs/neg launches on 64 floats (eager, and replayed as one CUDA graph) and
the same transformer block without matmuls (decode: 1 token, prefill: 128),
eager and as a CUDA graph.  Microseconds, best of 5 after a warm-up."""
import time
import torch

dev = "cuda"


def best(fn, reps=6):
    t = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        t.append(time.perf_counter() - t0)
    return min(t[1:]) * 1e6


def chain(n):
    x = torch.rand(64, device=dev)

    def run():
        y = x
        for i in range(n):
            y = torch.neg(y) if i % 2 else torch.abs(y)
        return y
    return run


def rope_neox(x, pos, base=10000.0):
    hd = x.shape[-1]
    inv = base ** (-torch.arange(0, hd // 2, device=dev, dtype=torch.float32) * 2 / hd)
    ang = pos[:, None].float() * inv[None, :]
    c, s = ang.cos()[:, None, :], ang.sin()[:, None, :]
    a, b = x[..., : hd // 2], x[..., hd // 2:]
    return torch.cat([a * c - b * s, a * s + b * c], dim=-1)


def block(seq):
    D, H, HD = 4096, 32, 128
    x = torch.rand(seq, D, device=dev)
    w1, w2 = torch.rand(D, device=dev), torch.rand(D, device=dev)
    pos = torch.arange(seq, device=dev)
    scores, mask = torch.rand(H, seq, seq, device=dev), torch.zeros(seq, seq, device=dev)
    up = torch.rand(seq, 2 * D, device=dev)

    def rms(v, w):
        return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def run():
        n1 = rms(x, w1)
        q = rope_neox(n1.view(seq, H, HD), pos)
        k = rope_neox((n1 * 0.5).view(seq, H, HD), pos)
        att = torch.softmax(scores * 0.0883883 + mask, -1)
        h = x + (q + k).view(seq, D)
        n2 = rms(h, w2)
        g, u = up[:, :D], up[:, D:]
        return n2 + torch.nn.functional.silu(g) * u + h, att
    return run


def graphed(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


n = 10000
c = chain(n)
print(f"torch chain: {n} dependent launches: eager {best(c) / n:.2f} us/launch, "
      f"CUDA graph replay {best(graphed(c)) / n:.2f} us/launch")
for seq in (1, 128):
    b = block(seq)
    print(f"torch block seq {seq}: eager {best(b):.1f} us, CUDA graph replay {best(graphed(b)):.1f} us")
