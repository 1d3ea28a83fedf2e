#!/usr/bin/env python3
"""Finds the machine code (SASS) of wgml's kernels in the NVIDIA driver's
on-disk shader cache and summarises it: registers, spills, instruction mix.

Why: Vulkan gives no per-kernel counters here and wgpu exposes no pipeline
statistics, but the NVIDIA driver stores each compiled compute pipeline in
its disk cache (wgml points it at $WGML_CACHE_DIR, src/gpu/diskcache.c),
and the code sits there uncompressed.  A Hopper kernel starts with
`MOV R1, c[0x0][0x28]` (first 64-bit word 0x00000a0000017a02) and ends with
`EXIT` and a `BRA` to itself (0xfffffffc00fc7947): the bytes between are
what `nvdisasm -b SM90` decodes.

  bench/sass.py CACHE_DIR OUT_DIR [nvdisasm]
writes OUT_DIR/k<n>.sass for every kernel found and prints one line per
kernel: bytes, instructions, highest register, local-memory (LDL/STL)
count and the most frequent opcodes.
"""
import collections
import os
import re
import struct
import subprocess
import sys

START = struct.pack("<Q", 0x00000A0000017A02)
SELF_BRA = 0xFFFFFFFC00FC7947


def kernels(blob):
    """(offset, code bytes) of each kernel in one cache file."""
    i = blob.find(START)
    while i >= 0:
        j = i
        end = None
        while j + 16 <= len(blob) and j - i < (1 << 22):
            (lo,) = struct.unpack_from("<Q", blob, j)
            if lo == SELF_BRA:
                end = j + 16
                break
            j += 16
        if end:
            yield i, blob[i:end]
            i = blob.find(START, end)
        else:
            i = blob.find(START, i + 8)


def summary(sass):
    ops = collections.Counter()
    regs = -1
    n = 0
    local = 0
    for line in sass.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)(.*);", line)
        if not m:
            continue
        n += 1
        op = m.group(2)
        ops[op.split(".")[0]] += 1
        if op.startswith(("LDL", "STL")):
            local += 1
        for r in re.findall(r"\bR(\d+)\b", m.group(3)):
            regs = max(regs, int(r))
    return n, regs, local, ops


def main():
    cache, out = sys.argv[1], sys.argv[2]
    nvd = sys.argv[3] if len(sys.argv) > 3 else "nvdisasm"
    os.makedirs(out, exist_ok=True)
    seen = set()
    k = 0
    for root, _, files in os.walk(cache):
        for f in sorted(files):
            path = os.path.join(root, f)
            blob = open(path, "rb").read()
            for off, code in kernels(blob):
                if code in seen:
                    continue
                seen.add(code)
                binf = os.path.join(out, "k%d.bin" % k)
                open(binf, "wb").write(code)
                r = subprocess.run([nvd, "-b", "SM90", binf], capture_output=True, text=True)
                sass = r.stdout
                open(os.path.join(out, "k%d.sass" % k), "w").write(sass)
                n, regs, local, ops = summary(sass)
                top = " ".join("%s:%d" % kv for kv in ops.most_common(14))
                print("k%d %s+%d: %d B, %d instr, R%d max, %d LDL/STL | %s" %
                      (k, os.path.relpath(path, cache), off, len(code), n, regs, local, top))
                k += 1
    if k == 0:
        print("no kernel found; files:")
        for root, _, files in os.walk(cache):
            for f in files:
                p = os.path.join(root, f)
                print(" ", os.path.relpath(p, cache), os.path.getsize(p))


if __name__ == "__main__":
    main()
