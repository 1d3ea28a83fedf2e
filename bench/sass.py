#!/usr/bin/env python3
"""Finds the machine code (SASS) of wgml's kernels in the NVIDIA driver's
on-disk shader cache and summarises it: registers, spills, instruction mix.

Why: Vulkan gives no per-kernel counters here and wgpu exposes no pipeline
statistics, but the NVIDIA driver stores each compiled compute pipeline in
its disk cache (wgml points it at $WGML_CACHE_DIR, src/gpu/diskcache.c):
nvidia/GLCache/.../*.bin, a header and one zstd frame an entry (magic
28 b5 2f fd; the `zstd` tool decompresses each).  A decompressed pipeline
("NVDANVVM" header) holds the code uncompressed: it ends with `EXIT` and a
`BRA` to itself (first 64-bit word 0xfffffffc00fc7947), and it starts at
the first 16-byte step before that from which `nvdisasm -b SM90` decodes
without an error (the header bytes do not decode).  Seen on an H200,
driver 580.159.04.

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

SELF_BRA = struct.pack("<Q", 0xFFFFFFFC00FC7947)
ZSTD = b"\x28\xb5\x2f\xfd"


def frames(blob):
    """The decompressed zstd frames of one cache file."""
    offs = []
    i = blob.find(ZSTD)
    while i >= 0:
        offs.append(i)
        i = blob.find(ZSTD, i + 4)
    for n, o in enumerate(offs):
        end = offs[n + 1] if n + 1 < len(offs) else len(blob)
        r = subprocess.run(["zstd", "-d", "-c", "-q"], input=blob[o:end], capture_output=True)
        if r.stdout:
            yield r.stdout


def disasm(nvd, code, tmp):
    open(tmp, "wb").write(code)
    r = subprocess.run([nvd, "-b", "SM90", tmp], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def kernels(nvd, blob, tmp):
    """(offset, SASS text) of the kernel in one decompressed entry."""
    end = blob.find(SELF_BRA)
    if end < 0:
        return
    end += 16
    for s in range(end % 16, end, 16):
        sass = disasm(nvd, blob[s:end], tmp)
        if sass:
            yield s, sass
            return


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
    tmp = os.path.join(out, "code.bin")
    for root, _, files in os.walk(cache):
        for f in sorted(files):
            path = os.path.join(root, f)
            if not f.endswith(".bin"):
                continue
            for sass in (t for fr in frames(open(path, "rb").read()) for _, t in kernels(nvd, fr, tmp)):
                if sass in seen:
                    continue
                seen.add(sass)
                open(os.path.join(out, "k%d.sass" % k), "w").write(sass)
                n, regs, local, ops = summary(sass)
                top = " ".join("%s:%d" % kv for kv in ops.most_common(14))
                print("k%d: %d instr, R%d max, %d LDL/STL | %s" % (k, n, regs, local, top))
                k += 1
    if os.path.exists(tmp):
        os.remove(tmp)
    if k == 0:
        print("no kernel found; files:")
        for root, _, files in os.walk(cache):
            for f in files:
                p = os.path.join(root, f)
                print(" ", os.path.relpath(p, cache), os.path.getsize(p))


if __name__ == "__main__":
    main()
