"""The copy roofline in the same run as a wgml benchmark: torch's device
copy of 1 GiB, GB/s counting bytes read and written, as `wgml bench
matvec` and `bench attn` count theirs (bytes read)."""
import torch

from torch_util import median_ms

n = 1 << 28  # f32 elements: 1 GiB
a = torch.empty(n, device="cuda")
b = torch.empty_like(a)
ms = median_ms(lambda: b.copy_(a))
print(f"torch copy 1 GiB: {ms * 1e3:.1f} us, {2 * 4 * n / ms / 1e6:.1f} GB/s (read + write)")
