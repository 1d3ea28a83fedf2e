#!/usr/bin/env bash
# Randomized soak: every op test program (and test_graph, whose graphs are
# drawn from the seed) over N fresh random seeds, each in
# every mode CI uses (native f16, WGML_DISABLE=f16, WGML_FOLD_GRID=7,
# WGML_MAX_BINDING=65536).  CI itself runs fixed seeds (deterministic); this
# is where new inputs are tried.  Stops at the first failure and prints the
# seed, the program, the mode and the command that repeats it.
#
#   scripts/soak.sh [build-dir] [seeds]      (make soak SEEDS=n)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
SEEDS="${2:-10}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/wgml-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
export WGML_CACHE_DIR="${WGML_CACHE_DIR:-$PWD/$BUILD/cache}"
# every variant, dtype mix and block type, also those CI runs a subset of on CPU adapters
export WGML_TEST_FULL=1

progs=()
for p in "$BUILD"/tests/test_op_* "$BUILD"/tests/test_graph "$BUILD"/tests/test_graph_api; do
  [ -x "$p" ] && progs+=("$p")
done
if [ ${#progs[@]} -eq 0 ]; then
  echo "soak: no test programs under $BUILD/tests (run make build first)" >&2
  exit 2
fi
modes=("" "WGML_DISABLE=f16" "WGML_FOLD_GRID=7" "WGML_MAX_BINDING=65536")
# The 64 KiB-window mode only for the programs CI runs that way (the list
# in tests/CMakeLists.txt): the others test rows documented to need one
# binding.
window_list=" $(sed -n 's/^foreach(name \(test_runtime .*\))$/\1/p' tests/CMakeLists.txt) "
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
runs=0
start=$(date +%s)
for ((i = 1; i <= SEEDS; i++)); do
  seed=$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')
  for p in "${progs[@]}"; do
    for m in "${modes[@]}"; do
      case "$m" in WGML_MAX_BINDING=*) [[ "$window_list" == *" $(basename "$p") "* ]] || continue ;; esac
      runs=$((runs + 1))
      if ! env $m WGML_TEST_SEED="$seed" "$p" > "$log" 2>&1; then
        echo "soak: FAILED after $runs runs: seed $seed, $(basename "$p"), mode '${m:-native}'"
        grep -E "check failed|FAIL|mismatch|got " "$log" | head -20
        echo "repeat with: env $m WGML_TEST_SEED=$seed $p"
        exit 1
      fi
    done
  done
  echo "soak: seed $i/$SEEDS ($seed) passed: ${#progs[@]} programs in every mode, $(( $(date +%s) - start )) s so far"
done
echo "soak: $SEEDS seeds, $runs runs, all passed in $(( $(date +%s) - start )) s"
