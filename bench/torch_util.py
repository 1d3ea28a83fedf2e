"""Timing shared by the bench/torch_*.py scripts: median CUDA-event time of
fn after a warm-up long enough to lift the H100 out of its idle clock
(bench/NOTES.md: an idle H100 runs the first ~100 ms slow)."""
import torch


def median_ms(fn, reps=7, warm_ms=300.0):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    while True:
        fn()
        b.record()
        torch.cuda.synchronize()
        if a.elapsed_time(b) > warm_ms:
            break
    times = []
    for _ in range(reps):
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]
