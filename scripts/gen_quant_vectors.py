#!/usr/bin/env python3
"""Generate reference vectors for wgml's CPU (de)quantisers (src/ops/quant*.c).

The C test (tests/test_quant_ref.c) compares wgml's output against these files
bit for bit, so it never needs Python at test time.  The reference is the
`gguf` PyPI package's numpy implementation (gguf/quants.py), which mirrors
ggml's C reference code.  Regenerate with:

    pip install gguf==0.19.0 numpy
    python3 scripts/gen_quant_vectors.py tests/quant_vectors

Output is deterministic for a fixed (gguf, numpy) pair: all randomness comes
from one numpy Generator seeded with SEED.  MANIFEST.txt records the versions
used and a SHA-256 per file.

File format: one file per type, `<name>.bin`, all integers/floats little-endian.

    offset  size  field
    0       4     magic "WGQV"
    4       4     u32 version (1)
    8       4     u32 gguf_type_id   (GGML type enum value as stored in GGUF)
    12      4     u32 block_elems
    16      4     u32 block_bytes
    20      4     u32 n_input        (elements; multiple of 256)
    24      4     u32 quant_kind     0: no quantised section (gguf has no
                                        quantiser for this type)
                                     1: section produced by gguf's quantiser
                                     2: section produced by this script's own
                                        numpy port of ggml's C reference
                                        quantiser (gguf has none; Q8_K only)
    28      4     u32 n_rand_blocks
    32      ...   f32 input[n_input]           shared random test inputs
            ...   if quant_kind != 0:
                    u8  qbytes[n_input/block_elems*block_bytes]  quantised input
                    f32 qdeq[n_input]          dequantisation of qbytes
            ...   u8  rbytes[n_rand_blocks*block_bytes]  random *valid* blocks
            ...   f32 rdeq[n_rand_blocks*block_elems]    their dequantisation

Dequantisation is gguf's for every type except Q8_K (absent from gguf; this
script dequantises it as `d * qs`, the documented block_q8_K layout
{f32 d; i8 qs[256]; i16 bsums[16]}).  "Valid" random blocks are uniformly
random bytes whose scale fields are overwritten with finite values (including
0, -0, fp16 subnormals and the fp16 maximum) so every quant bit pattern is
exercised; MXFP4's E8M0 exponent byte is left fully random (all 256 values are
decoded by gguf/ggml, 0xFF as 2^127 rather than the OCP-spec NaN).
"""

import hashlib
import importlib.metadata
import struct
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

import gguf
from gguf import GGMLQuantizationType as T
from gguf import quants as gq

SEED = 0x5747_4D4C  # "WGML"
N_INPUT = 8192  # 32 super-blocks of 256: a multiple of every block size
N_RAND_ELEMS = 4096

# (file name, gguf type, byte offsets of fp16 scale fields within a block)
TYPES = [
    ("q4_0", T.Q4_0, [0]),
    ("q4_1", T.Q4_1, [0, 2]),
    ("q5_0", T.Q5_0, [0]),
    ("q5_1", T.Q5_1, [0, 2]),
    ("q8_0", T.Q8_0, [0]),
    ("q2_K", T.Q2_K, [80, 82]),
    ("q3_K", T.Q3_K, [108]),
    ("q4_K", T.Q4_K, [0, 2]),
    ("q5_K", T.Q5_K, [0, 2]),
    ("q6_K", T.Q6_K, [208]),
    ("q8_K", T.Q8_K, []),  # f32 scale at 0, handled specially
    ("iq4_nl", T.IQ4_NL, [0]),
    ("mxfp4", T.MXFP4, []),  # E8M0 exponent byte, left random
]


def make_inputs(rng: np.random.Generator) -> np.ndarray:
    """Normal-ish data at several scales plus the awkward cases quantisers get
    wrong: constant blocks, large outliers, wildly different sub-block scales,
    single-signed blocks, rounding ties and values at/just below powers of two.
    Super-block 4 starts with FMA canaries (see fma_canary_block).
    Never an all-zero block (each quantiser has a special case for that which
    gguf and ggml handle identically and trivially)."""
    scales = [1e-3, 0.02, 0.5, 1.0, 3.0, 40.0, 1000.0]
    out = []
    for sb in range(N_INPUT // 256):
        s = scales[sb % len(scales)]
        kind = sb % 8
        x = rng.standard_normal(256).astype(np.float32) * np.float32(s)
        if kind == 1:
            # constant 32-runs inside otherwise normal data, plus exact zeros
            x[0:32] = np.float32(rng.uniform(-2, 2) * s)
            x[96:128] = np.float32(-abs(rng.uniform(0.5, 2)) * s)
            x[40:44] = 0.0
        elif kind == 2:
            # rounding ties: Q8_0 with amax 127 gets id == 1, so k + 0.5 ties
            x[0:32] = np.arange(-15.5, 16.5, 1.0, dtype=np.float32)
            x[31] = 127.0
            x[32:64] = (rng.integers(-8, 8, 32)).astype(np.float32)
            x[63] = -8.0
            # amax exactly a power of two, and one float below it (MXFP4 log2)
            x[64:96] *= np.float32(0.1)
            x[64] = 4.0
            x[128:160] *= np.float32(0.1)
            x[130] = np.nextafter(np.float32(8.0), np.float32(0.0))
        elif kind == 3:
            # whole super-block constant (covers every block size)
            x[:] = np.float32(rng.choice([-1.0, 1.0]) * rng.uniform(0.1, 3) * s)
        elif kind == 5:
            # a few large outliers in small-valued data
            x *= np.float32(0.1)
            pos = rng.choice(256, 3, replace=False)
            x[pos] = (rng.choice([-1.0, 1.0], 3) * rng.uniform(50, 200, 3) * min(s, 100.0)).astype(np.float32)
        elif kind == 6:
            # each 32-element sub-block at its own scale (K-quant sub-scales)
            sub = (10.0 ** rng.uniform(-3, 2, 8)).astype(np.float32)
            x = (rng.standard_normal(256).astype(np.float32) * np.repeat(sub, 32)).astype(np.float32)
        elif kind == 7:
            # single-signed data (min > 0 or max < 0 for the affine formats)
            sign = np.float32(1.0 if (sb // 8) % 2 == 0 else -1.0)
            x = sign * (np.abs(x) + np.float32(0.3 * s))
        out.append(x.astype(np.float32))
    # super-block 4: blocks 0..3 are FMA canaries for Q4_0, Q4_1, Q5_0, Q5_1
    for i, (bits, affine) in enumerate([(4, False), (4, True), (5, False), (5, True)]):
        out[4][32 * i:32 * (i + 1)] = fma_canary_block(rng, bits, affine)
    x = np.concatenate(out).astype(np.float32)
    assert np.all(np.isfinite(x)) and np.max(np.abs(x)) < 60000.0
    for bs in (32, 256):
        assert np.all(np.max(np.abs(x.reshape(-1, bs)), axis=1) > 0)
    return x


def _f32_round(v: Fraction) -> np.float32:
    """Correctly rounded (ties-to-even) float32 of an exact rational."""
    c = np.float32(float(v))
    cands = [np.nextafter(c, np.float32(-np.inf)), c, np.nextafter(c, np.float32(np.inf))]
    return min(cands, key=lambda f: (abs(Fraction(float(f)) - v), int(np.array(f).view(np.uint32)) & 1))


def fma_canary_block(rng: np.random.Generator, bits: int, affine: bool) -> np.ndarray:
    """A 32-block on which gguf's legacy quantiser (q = trunc(a*id + bias),
    a = x or x - min, rounded after the multiply AND after the add) gives a
    different code than a fused multiply-add would.  Guards the C reference
    against builds that contract a*b+c into an FMA (-ffp-contract=fast, or
    clang/-march with FMA): such a build fails the byte-exact comparison.

    Construction: for a code boundary N let M be the midpoint between N and
    the float below it, and t = M - bias (exact in f32).  If a*id is slightly
    below t but rounds to t, the unfused sum t + bias == M ties to the even
    neighbour N, whereas the exact (fused) sum is below M and rounds down, so
    trunc() gives N - 1.  Elements are searched near t/id until 4 hit.
    (With bias 0.5 only boundaries at powers of two give an exact t.)"""
    while True:
        x = rng.standard_normal(32).astype(np.float32)
        if affine:
            lo, hi = x.min(), x.max()
            d = (hi - lo) / np.float32(2 ** bits - 1)
            bias = np.float32(0.5)
        else:
            m = x[np.abs(x).argmax()]
            d = m / np.float32(-(2 ** (bits - 1)))
            bias = np.float32(2 ** (bits - 1) + 0.5)
            lo, hi = -abs(m), abs(m)
        idv = np.float32(1) / d
        hits = 0
        targets = []  # (boundary t, rounding to even code) for every code n
        for n in range(1, 2 ** bits):
            n = np.float32(n)
            mid = (float(n) + float(np.nextafter(n, np.float32(0)))) / 2
            t = np.float32(mid - float(bias))
            if float(t) == mid - float(bias):
                targets.append(t)
        for j in range(32):
            if x[j] in (lo, hi) or hits >= 4:
                continue
            t = targets[int(rng.integers(0, len(targets)))]
            x0 = np.float32(float(t) / float(idv) + (float(lo) if affine else 0.0))
            for k in range(-40, 41):
                xv = np.float32(x0 + np.float32(k) * np.spacing(x0))
                if not (lo < xv < hi):
                    continue
                a = np.float32(xv - lo) if affine else xv  # what gguf computes
                if np.float32(a * idv) != t or float(a) * float(idv) >= float(t):
                    continue
                unfused = np.float32(np.float32(a * idv) + bias)
                fused = _f32_round(Fraction(float(a)) * Fraction(float(idv)) + Fraction(float(bias)))
                if np.trunc(unfused) != np.trunc(fused):
                    x[j] = xv
                    hits += 1
                    break
        if hits >= 4:
            return x


def special_scales(rng: np.random.Generator, n: int) -> np.ndarray:
    """n finite fp16 scale values: random sign and magnitude 2^[-16, 6], with
    the edge cases (zeros, subnormals, fp16 max) at the front."""
    v = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-16, 6, n)).astype(np.float16)
    edge = np.array([0.0, -0.0, 2.0 ** -24, -(2.0 ** -20), 6.0e-5, 65504.0, -65504.0, 1.0],
                    dtype=np.float16)
    k = min(n, len(edge))
    v[:k] = edge[:k]
    return v


def random_blocks(rng: np.random.Generator, name: str, qtype, scale_offs) -> np.ndarray:
    block_elems, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
    nb = N_RAND_ELEMS // block_elems
    b = rng.integers(0, 256, (nb, block_bytes), dtype=np.uint8)
    for off in scale_offs:
        b[:, off:off + 2] = special_scales(rng, nb).view(np.uint8).reshape(nb, 2)
    if name == "q8_K":
        d = (rng.choice([-1.0, 1.0], nb) * 2.0 ** rng.uniform(-20, 4, nb)).astype(np.float32)
        d[0] = 0.0
        d[1] = np.float32(1e-40)  # f32 subnormal scale
        b[:, 0:4] = d.view(np.uint8).reshape(nb, 4)
    if name == "mxfp4":
        b[0:4, 0] = [0, 1, 254, 255]  # the E8M0 decode's special branches
    return b


def q8_K_quantize(x: np.ndarray) -> np.ndarray:
    """numpy port of ggml's quantize_row_q8_K_ref (gguf has no Q8_K at all):
    signed value of max magnitude -> iscale = -127/max, q = min(127,
    round-half-even(iscale*x)), bsums = per-16 sums, d = 1/iscale (f32).
    ggml leaves bsums unwritten for an all-zero block; inputs here have none."""
    blocks = x.reshape(-1, 256).astype(np.float32)
    imax = np.abs(blocks).argmax(axis=1)
    mx = blocks[np.arange(len(blocks)), imax].reshape(-1, 1)
    assert np.all(mx != 0)
    iscale = (np.float32(-127.0) / mx).astype(np.float32)
    q = np.minimum(np.rint((iscale * blocks).astype(np.float32)), 127).astype(np.int8)
    bsums = q.astype(np.int16).reshape(-1, 16, 16).sum(axis=2).astype(np.int16)
    d = (np.float32(1.0) / iscale).astype(np.float32)
    return np.concatenate([d.view(np.uint8), q.view(np.uint8), bsums.view(np.uint8)], axis=1)


def q8_K_dequantize(b: np.ndarray) -> np.ndarray:
    b = b.reshape(-1, 292)
    d = b[:, 0:4].copy().view(np.float32)
    q = b[:, 4:260].copy().view(np.int8).astype(np.float32)
    return (d * q).astype(np.float32).reshape(-1)


def dequant(name, qtype, b: np.ndarray) -> np.ndarray:
    if name == "q8_K":
        return q8_K_dequantize(b)
    return gq.dequantize(b.reshape(-1), qtype).astype(np.float32).reshape(-1)


def main() -> int:
    outdir = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/quant_vectors")
    outdir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    x = make_inputs(rng)
    manifest = [f"generated by scripts/gen_quant_vectors.py seed={SEED:#x} "
                f"gguf={importlib.metadata.version('gguf')} "
                f"numpy={np.__version__}"]
    for name, qtype, scale_offs in TYPES:
        block_elems, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
        if name == "q8_K":
            kind, qb = 2, q8_K_quantize(x)
        else:
            try:
                qb, kind = gq.quantize(x.reshape(-1, 256), qtype).reshape(-1), 1
            except NotImplementedError:
                qb, kind = None, 0
        rb = random_blocks(rng, name, qtype, scale_offs)
        parts = [b"WGQV", struct.pack("<7I", 1, int(qtype), block_elems, block_bytes,
                                      N_INPUT, kind, rb.shape[0]),
                 x.astype("<f4").tobytes()]
        if kind:
            qb = np.ascontiguousarray(qb, dtype=np.uint8).reshape(-1)
            assert qb.size == N_INPUT // block_elems * block_bytes
            parts += [qb.tobytes(), dequant(name, qtype, qb).astype("<f4").tobytes()]
        with np.errstate(over="ignore"):  # MXFP4 e=255 times 12 overflows to inf, as in ggml
            rdeq = dequant(name, qtype, rb)
        assert rdeq.size == rb.shape[0] * block_elems
        parts += [rb.tobytes(), rdeq.astype("<f4").tobytes()]
        data = b"".join(parts)
        (outdir / f"{name}.bin").write_bytes(data)
        manifest.append(f"{name}.bin type={int(qtype)} quant_kind={kind} bytes={len(data)} "
                        f"sha256={hashlib.sha256(data).hexdigest()}")
    (outdir / "MANIFEST.txt").write_text("\n".join(manifest) + "\n")
    print("\n".join(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
