#!/usr/bin/env bash
# Fills .devbuild (git-ignored) for the device machine from a Release build
# made here: the wgml CLI and the named test programs, stripped, so the
# carried tree stays under the device tool's 64 MiB (all 40 test programs
# unstripped are 32 MB; .llamacpp's source is 22 MB).
#   bench/devbuild.sh [BUILD] [test names...]   (default: the issue-9/10 tests)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}; shift || true
tests=${*:-test_op_matvec test_op_attention test_llm_graph test_op_matmul test_graph_scratch test_op_sample_split test_op_glu_sample_seed}
rm -rf .devbuild; mkdir -p .devbuild/tests
cp "$B/wgml" .devbuild/
for t in $tests; do [ -x "$B/tests/$t" ] && cp "$B/tests/$t" .devbuild/tests/; done
strip .devbuild/wgml .devbuild/tests/* 2>/dev/null || true
du -sh .devbuild
