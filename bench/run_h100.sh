#!/usr/bin/env bash
# One device run: checks and timings on the GPU machine, batched so a single
# call of the device tool does everything.  Expects the tree with the
# git-ignored folders .gl (Vulkan loader debs), third_party (wgpu-native)
# and .devbuild (the CLI and chosen test programs of a Release build made
# here, stripped: bench/devbuild.sh) carried along.
#   bench/run_h100.sh [sections...]   sections: info tests dispatch selfcheck ops graph decoder profile variants
#     mm mmtests mv mvshapes mvsweep llmvar attnkpt attndsg mvtests attn llmbuild llmbuild_bg llm llmfuse llmgen wllm
#     gemmq moe llmprof sample llmgen8 skip mvdec mvwg attnvar ptests ab minchunk d0var mvfloat qtests mvhead mvshort mvshortall mvfew llmgen1 stage realmodel mvcoal mvfixed mvlat mvxs mvxs2 mvf16 f16llm attngraph glupair fa fapp realgemma h16 sass ku faab h128ab mvab deqab skipkv ropekv mvbig mvab2 s2tests ropelean kcpair noq xqab late xslong s3tests sessab vocabxq xf16 mvvocab normprobe resid normfold nf qsm dsgscan dsgt dsgc dsgab dsgk qwen ntail ntprobe ntprobe2 q8lanes ntab mvab3 mvab4 mergeprobe l2probe nsprobe nsplit nsvar attnprobe dsgt256 glq xscap mvrows onechunk dsgprobe wtab pairs gridprobe gridprobe2 mtail gridlayer pffn pffnab pffnsass vocab ksplit mvprobe xq4ab mvprobe2 final9 nsfirst mvper gemmx gemmrow ppab greedyab (the case below says what each runs)
set -u
cd "$(dirname "$0")/.."
# two sections of one name: case runs the first (a device call once ran an old A/B for a new one)
dup=$(grep -oE '^    [a-z0-9_]+\)' bench/run_h100.sh | sort | uniq -d | tr -d ' )' | tr '\n' ' ')
[ -n "$dup" ] && { echo "run_h100.sh: sections named twice: $dup" >&2; exit 2; }
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export XDG_RUNTIME_DIR=/tmp/wgml-xdg WGML_CACHE_DIR=/tmp/wgml-cache
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
B=.devbuild
OUTDIR=/tmp/wgml-logs
mkdir -p "$OUTDIR"
# the device tool returns at most 8 files: logs travel as one archive
trap '[ -n "${OUT:-}" ] && tar czf "$OUT/logs.tgz" -C "$OUTDIR" .' EXIT
sections="${*:-info tests dispatch selfcheck}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader

# SM clock and throttle reasons around each section: an ALU-bound kernel
# (rope before its head groups) ran 3x slower on some machines than others
clocks() { nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader; }
# sampled every 100 ms while a section runs: SM/memory clocks, power,
# throttle reasons, memory used (summarised after the section)
smi_start() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active,utilization.gpu,memory.used \
    --format=csv,noheader,nounits -lms 100 > "$OUTDIR/smi.$1.csv" 2>/dev/null &
  SMI=$!
}
smi_stop() {
  kill $SMI 2>/dev/null; wait $SMI 2>/dev/null
  awk -F', ' '{n++; if ($7+0 > 50) {b++; sm[$2]++; r[$6]++; if ($4+0 > p) p = $4+0; if ($8+0 > m) m = $8+0}}
    END {printf "smi: %d samples, %d busy; busy SM MHz:", n, b; for (k in sm) printf " %s(x%d)", k, sm[k];
         printf "; reasons:"; for (k in r) printf " %s(x%d)", k, r[k]; printf "; max %.0f W, max %d MiB used\n", p, m}' "$OUTDIR/smi.$1.csv"
}
# Waits for the background GGUF writer (llmgen, llmgen1, llmgen8).
wait_gen() { [ -f /tmp/llmgen.pid ] && while kill -0 "$(cat /tmp/llmgen.pid)" 2>/dev/null; do sleep 2; done; }
# tg128 tokens/s of the llama-<1b|8b> GGUF from an empty cache: tg MODEL [VAR=value ...]
tg() { local m=$1; shift; env "$@" $B/wgml bench llm -m /tmp/models/llama-$m-q4k.gguf -p 16 -n 128 -r 3 2>&1 | grep tg128 | cut -d'|' -f6,7; }
# the same with the old decode loop (a token read back before the next step is issued)
tgs() { local m=$1; shift; env "$@" $B/wgml bench llm --sync -m /tmp/models/llama-$m-q4k.gguf -p 16 -n 128 -r 3 2>&1 | grep tg128 | cut -d'|' -f6,7; }
# A/B of the previous build (.devbuild_old) and this one on the generated GGUFs (waits for llmgen):
# two rounds alternating, 8B then 1B: llmab "BENCH LLM ARGS" 'TESTS (grep -E)'
llmab() {
  wait_gen
  for r in 1 2; do for b in .devbuild_old $B; do for m in 8b 1b; do
    echo "$b $m: $($b/wgml bench llm -m /tmp/models/llama-$m-q4k.gguf $1 2>&1 | grep -E "$2" | cut -d'|' -f5,6 | tr '\n' ' ')"
  done; done; done
}
# Test programs in CI's modes (native nof16 fold window), a line each (the whole output in $OUTDIR/TEST.MODE.log):
# tmodes "MODES" TEST...
tmodes() {
  local modes=$1 t m; shift
  for t in "$@"; do
    for m in $modes; do
      unset WGML_DISABLE WGML_FOLD_GRID WGML_MAX_BINDING
      [ $m = nof16 ] && export WGML_DISABLE=f16
      [ $m = fold ] && export WGML_FOLD_GRID=7
      [ $m = window ] && export WGML_MAX_BINDING=65536
      echo "$t $m: $($B/tests/$t 2>&1 | tee $OUTDIR/$t.$m.log | grep -E 'passed|check failed' | head -n 6 | tr '\n' ' ')"
    done
  done
  unset WGML_DISABLE WGML_FOLD_GRID WGML_MAX_BINDING
}
# One shape's mat-vec row (32 products, graph replay): mvrow NxK DTYPE [VAR=value ...]
# the md5 of a build's 64 greedy tokens on a generated GGUF: greedy 8b [env K=V ...] BUILD/wgml
greedy() { local m=$1; shift; echo "$m greedy, $*: $("$@" generate -m /tmp/models/llama-$m-q4k.gguf -p 'The capital of France is' -n 64 --temp 0 2>/dev/null | md5sum)"; }
# a graph fusion against its WGML_GRAPH_FUSE knob (waits for llmgen): the greedy text of both, then tg128
# pipelined, two rounds, 8B then 1B: fuseab KNOB
fuseab() {
  wait_gen
  for m in 1b 8b; do greedy $m $B/wgml; greedy $m env WGML_GRAPH_FUSE=$1 $B/wgml; done
  for round in 1 2; do for m in 8b 1b; do
    echo "-- $m round $round: $1 $(tg $m WGML_GRAPH_FUSE=$1) | fused $(tg $m)"
  done; done
}
mvrow() { local nk=$1 dt=$2; shift 2; env "$@" $B/wgml bench matvec --nk $nk --dtype $dt 2>&1 | grep $dt | tail -n 1; }
for s in $sections; do
  echo "=== $s ($(clocks))"
  smi_start "$s"
  case $s in
    info)
      $B/wgml --version
      $B/wgml info --adapters
      $B/wgml info ;;
    tests)
      for t in $B/tests/test_*; do
        [ -x "$t" ] || continue
        n=$(basename "$t")
        args=""
        [ "$n" = test_quant_ref ] && args=tests/quant_vectors
        modes="native"
        case $n in test_op_*) modes="native nof16 fold" ;; esac
        # window mode for the programs CI runs that way (tests/CMakeLists.txt)
        case " $(sed -n 's/^foreach(name \(test_runtime .*\))$/\1/p' tests/CMakeLists.txt) " in
          *" $n "*) modes="$modes window" ;; esac
        for m in $modes; do
          unset WGML_DISABLE WGML_FOLD_GRID WGML_MAX_BINDING
          [ $m = nof16 ] && export WGML_DISABLE=f16
          [ $m = fold ] && export WGML_FOLD_GRID=7
          [ $m = window ] && export WGML_MAX_BINDING=65536
          "$t" $args > "$OUTDIR/$n.$m.log" 2>&1; rc=$?
          echo "--- $n ($m): $(tail -n 1 "$OUTDIR/$n.$m.log") rc=$rc"
          grep -E "check failed" "$OUTDIR/$n.$m.log" | head -8
        done
        unset WGML_DISABLE WGML_FOLD_GRID WGML_MAX_BINDING
      done ;;
    dispatch)
      $B/wgml bench dispatch 10000
      python3 bench/torch_dispatch.py 2>&1 | tail -n 3 ;;
    selfcheck)
      $B/wgml selfcheck
      WGML_PROFILE=1 $B/wgml selfcheck 2>&1 | tail -n 12 ;;
    profile)
      WGML_PROFILE=1 $B/wgml bench ops 256 2>&1 | tail -n 16 ;;
    profile3) # GPU time per kernel over 3 rounds in one process
      WGML_PROFILE=1 $B/wgml bench ops 256 3 2>&1 | grep -v "^\[" | tail -n 32 ;;
    graphtest) # the graph tests alone: native, 64 KiB windows, no subgroups
      for t in test_graph test_graph_api; do
        $B/tests/$t 2>&1 | grep -E "check failed|passed" | head -20
        WGML_MAX_BINDING=65536 $B/tests/$t 2>&1 | grep -E "check failed|passed" | head -20
        WGML_DISABLE=subgroups $B/tests/$t 2>&1 | grep -E "check failed|passed" | head -20
      done ;;
    mm) # issue 9: GEMM, mat-vec, attention next to PyTorch in the same run
      $B/wgml bench gemm --json > $OUTDIR/gemm.json 2> $OUTDIR/gemm.err; tail -n 3 $OUTDIR/gemm.err
      $B/wgml bench matvec --json > $OUTDIR/matvec.json 2> $OUTDIR/matvec.err; tail -n 3 $OUTDIR/matvec.err
      $B/wgml bench attn --json > $OUTDIR/attn.json 2> $OUTDIR/attn.err; tail -n 3 $OUTDIR/attn.err
      python3 bench/torch_gemm.py > $OUTDIR/torch_gemm.json 2> $OUTDIR/torch_gemm.err
      python3 bench/torch_attn.py > $OUTDIR/torch_attn.json 2> $OUTDIR/torch_attn.err
      python3 bench/compare_mm.py $OUTDIR ;;
    sample) # one decode step's sampling, 1 and 8 rows of 128,256 logits: the one-pass kernel
      # against the split path (bench_sample.c), GPU time per kernel, and the sampling tests
      $B/wgml bench sample 2>&1 | tail -n 7
      $B/wgml bench sample --rows 8 2>&1 | tail -n 7
      WGML_PROFILE=1 $B/wgml bench sample 2>&1 | grep -E "sample:|total" | head -n 8
      for t in test_op_sample_split test_op_glu_sample test_op_glu_sample_seed test_op_limits_rows; do
        for m in native nof16 fold; do
          unset WGML_DISABLE WGML_FOLD_GRID
          [ $m = nof16 ] && export WGML_DISABLE=f16
          [ $m = fold ] && export WGML_FOLD_GRID=7
          echo "--- $t ($m): $($B/tests/$t 2>&1 | tee "$OUTDIR/$t.$m.log" | tail -n 1)"
          grep -E "check failed" "$OUTDIR/$t.$m.log" | head -8
        done
      done
      unset WGML_DISABLE WGML_FOLD_GRID ;;
    attn) # attention alone, next to torch SDPA
      $B/wgml bench attn --json > $OUTDIR/attn.json 2> $OUTDIR/attn.err; tail -n 3 $OUTDIR/attn.err; cat $OUTDIR/attn.json
      python3 bench/torch_attn.py 2>&1 | tail -n 12 ;;
    mmtests) # the issue-9 and model test programs in every CI mode
      tmodes "native nof16 fold window" test_op_matmul test_op_matvec test_op_attention test_llm_graph \
        test_graph_scratch test_op_glu_sample_seed ;;
    llmbuild) # llama.cpp (CUDA) and random-weight Llama-shaped GGUFs (../shared/peers)
      # into a folder of our own: the image's site-packages are not ours to write
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/gguf-*.whl 2>&1 | tail -n 2
      export PYTHONPATH=/tmp/site
      bash bench/peers/llamacpp_bench.sh "$PWD/.llamacpp" build 2>&1 | tail -n 8 ;;
    llmbuild_bg) # the same in the background (16 cores build while the GPU sections run); `llm` waits for it
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/gguf-*.whl 2>&1 | tail -n 2
      # after llmgen (which writes the GGUFs itself), the build does not write them again
      sg=0; [ -f /tmp/llmgen.pid ] && sg=1
      SKIP_GEN=$sg PYTHONPATH=/tmp/site nice -n 10 bash bench/peers/llamacpp_bench.sh "$PWD/.llamacpp" build > $OUTDIR/llmbuild.log 2>&1 &
      echo $! > /tmp/llmbuild.pid ;;
    mv) # mat-vec: the table's choice and every timing variant, in one process each
      python3 bench/torch_copy.py 2>&1 | tail -n 1
      for v in "" sgw_r4 sgw_r8 sgq_r4 sgq_r2u2 sgq_r4u2 sgq_r8t64; do
        echo "-- matvec ${v:-table} (graph replay)"
        WGML_FORCE=${v:+matvec=$v} $B/wgml bench matvec 2>&1 | tail -n 6
      done
      for v in "" sgw_r4; do
        echo "-- matvec ${v:-table} --eager"
        WGML_FORCE=${v:+matvec=$v} $B/wgml bench matvec --eager 2>&1 | tail -n 6
      done ;;
    llm) # wgml bench llm next to llama-bench on the same files (LLMDS="0 512": the context depths)
      [ -f /tmp/llmbuild.pid ] && { while kill -0 "$(cat /tmp/llmbuild.pid)" 2>/dev/null; do sleep 2; done; tail -n 8 $OUTDIR/llmbuild.log; }
      LLMD=$(echo ${LLMDS:-0 512} | tr ' ' ',') bash bench/peers/llamacpp_bench.sh "$PWD/.llamacpp" bench
      for m in /tmp/models/llama-1b-q4k.gguf /tmp/models/llama-8b-q4k.gguf; do
        for d in ${LLMDS:-0 512}; do $B/wgml bench llm -m $m -p 512 -n 128 -d $d -r 3 2>&1 | tail -n 3; done
      done ;;
    llmgen) # only the random-weight GGUFs (no llama.cpp build), in the background; wllm waits
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/gguf-*.whl 2>&1 | tail -n 2
      mkdir -p /tmp/models
      (for s in 1b 8b; do PYTHONPATH=/tmp/site python3 bench/peers/gen_gguf.py /tmp/models/llama-$s-q4k.gguf $s & done; wait) \
        > $OUTDIR/llmgen.log 2>&1 &
      echo $! > /tmp/llmgen.pid ;;
    wllm) # wgml bench llm alone on the generated files
      wait_gen
      for m in /tmp/models/llama-1b-q4k.gguf /tmp/models/llama-8b-q4k.gguf; do
        for d in 0 512; do $B/wgml bench llm -m $m -p 512 -n 128 -d $d -r 3 2>&1 | tail -n 3; done
      done ;;
    gemmq) # quantised prefill linears: in-tile decode vs dequantise + dense GEMM
      for v in fused dequant; do
        echo "-- qgemm=$v"; WGML_FORCE=qgemm=$v $B/wgml bench gemm 2>&1 | grep -E "^op|^linear" | head -n 8
      done ;;
    moe) # MoE prefill (wgml_linear_id, 512 tokens x 2 of 8 experts of 14336 x 4096): grouped GEMM vs
         # mat-vec path, q4_K and f16; then the grouped GEMM's tile forced (one line per case)
      $B/wgml bench moe --json > $OUTDIR/moe.json 2> $OUTDIR/moe.err; tail -n 3 $OUTDIR/moe.err
      python3 -c "import json; d=json.load(open('$OUTDIR/moe.json')); print('\n'.join('moe %s %-7s %8.3f ms %7.2f TFLOP/s %s of bound %s' % (r['w'], r['path'], r['ms'], r['tflops'], r['of_bound'], r['check']) for r in d['results']))"
      for v in t64 t128 t128k16; do
        WGML_FORCE=gemm=$v $B/wgml bench moe --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('\n'.join('moe gemm=$v %s %-7s %8.3f ms %7.2f TFLOP/s' % (r['w'], r['path'], r['ms'], r['tflops']) for r in d['results'] if r['path'] == 'grouped'))"
      done ;;
    mvshapes) # a decoder's mat-vec shapes for the table: n x k per variant, the q4_K model's dtypes
      for nk in 4096x4096 6144x4096 28672x4096 4096x14336; do
        for v in "" sgw_r4 sgq_r8 sgq_r2; do
          WGML_FORCE=${v:+matvec=$v} $B/wgml bench matvec --nk $nk --dtype q4_K,q6_K --json 2>&1 |
            python3 -c "import json,sys; d=json.load(sys.stdin); print('$nk', '${v:-table}'.ljust(9), ' '.join('%s %.2f' % (r['dtype'], r['of_copy']) for r in d['results']))"
        done
      done ;;
    mvsweep) # mat-vec workgroup shapes (rows, threads, chunks a step) on the 8B decoder's q4_K / q6_K shapes
      for v in sgw_r4 sgw_r8 sgw_r4t32 sgw_r8u2 sgq_r4 sgq_r4u2 sgq_r4t32 sgq_r2t32 sgq_r8u2 sgq_r8t64 sgq_r16; do
        for nk in 14336x4096 4096x14336 4096x4096; do
          WGML_FORCE=matvec=$v $B/wgml bench matvec --nk $nk --dtype q4_K,q6_K,q8_0 --json 2>&1 |
            python3 -c "import json,sys; d=json.load(sys.stdin); print('$nk'.ljust(11), '$v'.ljust(10), ' '.join('%s %.2f' % (r['dtype'], r['of_copy']) for r in d['results']))" 2>&1 | tail -n 1
        done
      done ;;
    llmvar) # the whole 8B decode with each mat-vec variant forced (tg only)
      for v in "" sgq_r4 sgq_r4t32 sgw_r8; do
        echo "-- ${v:-table}: $(WGML_FORCE=${v:+matvec=$v} $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 512 -n 128 -r 1 2>&1 | grep tg128)"
      done ;;
    attnkpt) # the decode kernel's keys per thread (registers vs loads in flight), bench and the 8B decode
      for kpt in 1 2 4 8; do
        echo "-- WGML_ATTN_KPT=$kpt"
        WGML_ATTN_KPT=$kpt $B/wgml bench attn --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('skv %d: %.1f us a call (batch), %.2f of copy' % (r['skv'], r['batch_us'], r['batch_roofline']) for r in d['results'] if r['kind'] == 'decode'))"
        [ -x $B/tests/test_op_attention ] && echo "   test: $(WGML_ATTN_KPT=$kpt $B/tests/test_op_attention 2>&1 | tail -n 2 | head -n 1)"
        echo "   8B: $(WGML_ATTN_KPT=$kpt $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 512 -n 128 -r 1 2>&1 | grep tg128)"
      done ;;
    attndsg) # the decode kernels side by side: splitkv (old) vs dsg / dsg_np (subgroup), the 8B shape's GPU time, the 8B decode
      [ -x $B/tests/test_op_attention ] && echo "test_op_attention: $($B/tests/test_op_attention 2>&1 | tail -n 2 | head -n 1)"
      for v in splitkv dsg dsg_np; do
        echo "-- attn=$v"
        WGML_FORCE=attn=$v $B/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('skv %d: %.1f us a call (batch), %.2f of copy;' % (r['skv'], r['batch_us'], r['batch_roofline']) for r in d['results']))"
        WGML_FORCE=attn=$v WGML_PROFILE=1 $B/wgml bench attn --decode --skv 768 2>&1 | grep -E 'attn_|total'
        echo "   8B: $(WGML_FORCE=attn=$v $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 512 -n 128 -r 1 2>&1 | grep tg128)"
      done
      for kc in "1 0" "2 0" "4 0" "4 1" "4 8" "4 16" "4 32"; do  # dsg: keys a tile, chunks a row (0: the table's)
        set -- $kc
        echo "-- dsg WGML_ATTN_KPT=$1 WGML_ATTN_CHUNKS=$2: $(WGML_FORCE=attn=dsg WGML_ATTN_KPT=$1 WGML_ATTN_CHUNKS=$2 $B/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('skv %d: %.1f us;' % (r['skv'], r['batch_us']) for r in d['results']))")"
      done ;;
    mvtests) # the mat-vec, attention and decoder-graph tests in CI's modes
      for t in test_op_matvec test_op_attention test_llm_graph; do
        for m in native nof16 fold window; do
          unset WGML_DISABLE WGML_FOLD_GRID WGML_MAX_BINDING
          [ $m = nof16 ] && export WGML_DISABLE=f16
          [ $m = fold ] && export WGML_FOLD_GRID=7
          [ $m = window ] && export WGML_MAX_BINDING=65536
          [ -x $B/tests/$t ] && echo "$t $m: $($B/tests/$t 2>&1 | tee $OUTDIR/$t.$m.log | tail -n 1)"
        done
      done
      unset WGML_DISABLE WGML_FOLD_GRID WGML_MAX_BINDING ;;
    llmgen8) # only the 8B random-weight GGUF, in the background; skip and wllm wait
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/gguf-*.whl 2>&1 | tail -n 2
      mkdir -p /tmp/models
      PYTHONPATH=/tmp/site python3 bench/peers/gen_gguf.py /tmp/models/llama-8b-q4k.gguf 8b > $OUTDIR/llmgen.log 2>&1 &
      echo $! > /tmp/llmgen.pid ;;
    skip) # where the 8B decode's time goes: tg128 with each kernel's dispatches dropped
      # (WGML_SKIP_KERNELS, a timing probe: the difference to the full step is that kernel's cost)
      wait_gen
      for k in "" ":xquant[" "matvec:main[" "norm:" "attn_dsg" "attn_merge" "CHECK;ONE_WG" "WRITES;GATHER" "rope:" "glu:" \
               "ew_cast:" "norm:,rope:,glu:,ew_cast:,CHECK;ONE_WG,WRITES;GATHER,:xquant[" "matvec:main[,:xquant[,attn_dsg,attn_merge"; do
        echo "-- skip '${k}': $(WGML_SKIP_KERNELS=$k $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 128 -r 2 2>&1 | grep tg128)"
      done ;;
    skipkv) # the bound on fusing rope and the k|v cache write into the q|k|v product: tg128 pipelined with
      # their dispatches dropped (WGML_SKIP_KERNELS: results wrong, time right), two rounds, 8B then 1B
      wait_gen
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: base $(tg $m) | norope $(tg $m WGML_SKIP_KERNELS=rope:) | nokv $(tg $m WGML_SKIP_KERNELS=indexing:) | neither $(tg $m WGML_SKIP_KERNELS=rope:,indexing:)"
      done; done ;;
    ropekv) # the q|k|v product's rope and k|v-write epilogue (LINEAR_ROPE_KV, XS_ROPE): its tests natively and in
      # CI's modes, the greedy text fused against WGML_GRAPH_FUSE=norope and the previous build (.devbuild_old),
      # then tg128 pipelined, previous build / norope / this build, two rounds, 8B then 1B
      tmodes "native nof16 window" test_graph_prologue
      tmodes native test_llm_graph test_op_rope test_op_matvec test_graph test_graph_api
      wait_gen
      for m in 1b 8b; do for v in "$B/wgml" "env WGML_GRAPH_FUSE=norope $B/wgml" ".devbuild_old/wgml"; do
        echo "$m greedy, $v: $($v generate -m /tmp/models/llama-$m-q4k.gguf -p 'The capital of France is' -n 64 --temp 0 2>/dev/null | md5sum)"
      done; done
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: old $(B=.devbuild_old tg $m) | norope $(tg $m WGML_GRAPH_FUSE=norope) | new $(tg $m)"
      done; done ;;
    noq) # the bound on handing each product x already quantised: tg128 pipelined with the one-dispatch products of one
      # k skipping x's quantising (WGML_MV_NOQ=k: results wrong, time right), on top of the norms' codes; two rounds
      # (2026-11-27 (3) calls 1 and 6; the probe is gone, kept as the record)
      wait_gen
      for round in 1 2; do
        echo "-- 8b round $round: base $(tg 8b) | noq k4096 (o) $(tg 8b WGML_MV_NOQ=4096) | noq k14336 (down) $(tg 8b WGML_MV_NOQ=14336)"
        echo "-- 1b round $round: base $(tg 1b) | noq k2048 (o) $(tg 1b WGML_MV_NOQ=2048) | noq k8192 (down) $(tg 1b WGML_MV_NOQ=8192)"
      done ;;
    xqab) # the norms write x's codes for the q|k|v and gate|up products (the xq tail): its tests natively and in
      # CI's modes, the greedy text against WGML_GRAPH_FUSE=noxq, tg128 pipelined noxq / xq, two rounds, 8B then 1B,
      # then the 8B decode's kernels by timestamps
      tmodes "native nof16 window" test_graph_prologue
      tmodes native test_llm_graph test_op_matvec test_op_attention
      wait_gen
      for m in 1b 8b; do greedy $m $B/wgml; greedy $m env WGML_GRAPH_FUSE=noxq $B/wgml; done
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: old $(B=.devbuild_old tg $m) | noxq $(tg $m WGML_GRAPH_FUSE=noxq) | xq $(tg $m)"
      done; done
      echo "-- 8b profile"; WGML_PROFILE=1 $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 32 -r 1 2>&1 | grep -vE "^\|" | head -n 14 ;;
    late) # x quantised a chunk at a time inside the one-dispatch product (WGML_MV_LATE) against the workgroup's
      # quantising pass and the norms' codes: tg128 pipelined, two rounds, 8B then 1B; then bench matvec's rows
      # (2026-11-27 (3) call 5: 2-3x slower; the knob is gone, kept as the record)
      tmodes native test_graph_prologue
      wait_gen
      for m in 1b 8b; do greedy $m env WGML_MV_LATE=1 $B/wgml; done
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: noxq $(tg $m WGML_GRAPH_FUSE=noxq) | xq $(tg $m) | xq+late $(tg $m WGML_MV_LATE=1) | late $(tg $m WGML_GRAPH_FUSE=noxq WGML_MV_LATE=1)"
      done; done
      for nk in 4096x4096 28672x4096 4096x14336; do
        echo "$nk base $(mvrow $nk q4_K) | late $(mvrow $nk q4_K WGML_MV_LATE=1)"
      done ;;
    xslong) # one-dispatch products on 512 threads (sgx_r2t512: half the workgroups, x quantised by half as many)
      # for rows of at least k (WGML_MV_XS_LONG=variant,k), tg128 pipelined, two rounds; bench matvec's rows
      # (2026-11-27 (3) call 8: the table now takes it for the 8B's down product; the knob is gone)
      wait_gen
      for round in 1 2; do
        echo "-- 8b round $round: base $(tg 8b) | t512 k>=8192 (down) $(tg 8b WGML_MV_XS_LONG=sgx_r2t512,8192) | t512 all $(tg 8b WGML_MV_XS_LONG=sgx_r2t512,0)"
        echo "-- 1b round $round: base $(tg 1b) | t512 k>=8192 (down) $(tg 1b WGML_MV_XS_LONG=sgx_r2t512,8192) | t512 all $(tg 1b WGML_MV_XS_LONG=sgx_r2t512,0)"
      done
      for nk in 4096x4096 28672x4096 4096x14336; do
        echo "$nk base $(mvrow $nk q4_K) | t512 $(mvrow $nk q4_K WGML_FORCE=matvec=sgx_r2t512)"
      done ;;
    vocabxq) # the final norm's codes for the q6_K vocabulary product too (the one-dispatch kernel reading them)
      # against WGML_MV_NOVOCABXQ (its first pass as before): greedy text, tg128 pipelined, two rounds, 8B then 1B
      # (2026-11-27 (3) call 11: no gain, reverted; kept as the record)
      wait_gen
      for m in 1b 8b; do greedy $m $B/wgml; greedy $m env WGML_MV_NOVOCABXQ=1 $B/wgml; done
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: before $(tg $m WGML_MV_NOVOCABXQ=1) | vocab xq $(tg $m)"
      done; done ;;
    xf16) # what x's bytes cost the self-quantising products: x read as f16 (WGML_MV_XF16=k, a probe: half the bytes,
      # results wrong) for the o (k 4096) and down (k 14336) products, tg128 pipelined, two rounds (2026-11-27 (3)
      # call 12; the probe is gone, kept as the record)
      wait_gen
      for round in 1 2; do
        echo "-- 8b round $round: base $(tg 8b) | o as f16 $(tg 8b WGML_MV_XF16=4096) | down as f16 $(tg 8b WGML_MV_XF16=14336)"
      done ;;
    mvvocab) # the q6_K vocabulary products (a 1B's 128256 x 2048, an 8B's 128256 x 4096; graph replay of 32): the
      # table against forced integer-path variants
      for nk in 128256x2048 128256x4096; do
        echo "$nk table $(mvrow $nk q6_K)"
        for v in sgq_r4 sgq_r8 sgq_r16 sgq_r4t256 sgq_r8t64 sgq_r8t128 sgq_r2t256 sgx_r2 sgx_r4 sgx_r2t512; do
          echo "$nk $v $(mvrow $nk q6_K WGML_FORCE=matvec=$v)"
        done
      done ;;
    normprobe) # the bound on folding a decode's norms into their products' prologue: tg128 pipelined with the norms'
      # dispatches dropped (WGML_SKIP_KERNELS=norm:), and with the q|k|v and gate|up products then normalising and
      # quantising x themselves (WGML_MV_NORMPROBE: a probe, its g left out; results wrong), two rounds, 8B then 1B
      # (2026-11-27 (3) call 14; the probe is gone, kept as the record)
      wait_gen
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: base $(tg $m) | nonorm $(tg $m WGML_SKIP_KERNELS=norm:) | nonorm+prologue $(tg $m WGML_SKIP_KERNELS=norm: WGML_MV_NORMPROBE=1)"
      done; done ;;
    resid) # the residual add as the o / down product's c operand (the norm then reads one row and writes no sum)
      # against WGML_GRAPH_FUSE=noresid: the graph tests, greedy text, tg128 pipelined, two rounds, 8B then 1B
      tmodes "native nof16 window" test_graph_prologue
      tmodes native test_llm_graph test_graph test_graph_api
      fuseab noresid ;;
    ntail) # the norm tail (LINEAR_NORM, XS_NTAIL: the o and down products' last workgroup normalises the row, no
      # norm dispatch) against WGML_GRAPH_FUSE=nontail: the graph tests natively and in CI's modes (and
      # test_op_attention's D 256 dsg case, GPUs only), the decoder block at KV 4096 both ways, two rounds, then
      # the greedy text and tg128 pipelined (fuseab)
      tmodes "native nof16 window" test_graph_prologue
      tmodes native test_llm_graph test_op_matvec test_op_norm test_graph test_graph_api test_op_attention
      for r in 1 2; do for f in nontail ""; do
        echo "-- decoder ${f:-ntail}: $(WGML_GRAPH_FUSE=$f $B/wgml bench graph decoder 2>&1 | grep -E '^\|? *decoder' | tail -n 1)"
      done; done
      fuseab nontail ;;
    ntprobe) # why the norm tail is slow: tg128 8B / 1B with WGML_NT_PROBE=nofence (no release barrier) and nobody
      # (the tickets alone), against nontail and the tail; then timestamps a kernel (8B tg32) both ways
      tmodes native test_graph_prologue test_llm_graph
      wait_gen
      for m in 1b 8b; do greedy $m $B/wgml; greedy $m env WGML_GRAPH_FUSE=nontail $B/wgml; done
      for m in 8b 1b; do
        echo "-- $m: nontail $(tg $m WGML_GRAPH_FUSE=nontail) | tail $(tg $m) | nofence $(tg $m WGML_NT_PROBE=nofence) | nobody $(tg $m WGML_NT_PROBE=nobody) | both $(tg $m WGML_NT_PROBE=nofence,nobody)"
      done
      for f in nontail 1; do
        echo "-- profile WGML_GRAPH_FUSE=$f"
        WGML_GRAPH_FUSE=$f WGML_PROFILE=1 $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 32 -r 1 2>&1 | grep -vE "^\|" | head -n 24
      done ;;
    ntprobe2) # the norm tail's body: tg128 8B / 1B, nontail | tail | nobody | nocodes (no codes, no workgroup memory)
      wait_gen
      for m in 8b 1b; do
        echo "-- $m: nontail $(tg $m WGML_GRAPH_FUSE=nontail) | tail $(tg $m) | nobody $(tg $m WGML_NT_PROBE=nobody) | nocodes $(tg $m WGML_NT_PROBE=nocodes) | nontail $(tg $m WGML_GRAPH_FUSE=nontail) | tail $(tg $m)"
      done
      WGML_GRAPH_FUSE=1 WGML_PROFILE=1 $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 32 -r 1 2>&1 | grep -E "main_xs|norm" | head -n 12 ;;
    q8lanes) # x's codes a vec4 a lane (q8_lanes.wgsl: the one-dispatch product's own quantising, the norms' xq
      # tail): the tests natively and in CI's modes, the greedy text against the previous build (.devbuild_old),
      # tg128 pipelined previous / this build two rounds, then the opt-in norm tail on this build
      tmodes "native nof16 window" test_graph_prologue test_op_matvec
      tmodes native test_op_norm test_llm_graph
      wait_gen
      for m in 1b 8b; do greedy $m $B/wgml; greedy $m .devbuild_old/wgml; done
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m round $r: old $(B=.devbuild_old; tg $m) | new $(tg $m) | normtail $(tg $m WGML_GRAPH_FUSE=normtail)"
      done; done
      for b in .devbuild_old $B; do echo "-- decoder $b: $($b/wgml bench graph decoder 2>&1 | grep -E '^decoder' | tail -n 1)"; done ;;
    ntab) # the opt-in norm tail against the default, tg128 pipelined, two rounds, 8B then 1B, and the decoder block
      tmodes native test_graph_prologue test_llm_graph
      fuseab normtail
      for f in "" normtail; do echo "-- decoder ${f:-default}: $(WGML_GRAPH_FUSE=$f $B/wgml bench graph decoder 2>&1 | grep -E '^decoder' | tail -n 1)"; done ;;
    mvab3) # issue 9's mat-vec rows (32 x [14336, 4096], one row, graph replay) on the previous build (.devbuild_old)
      # and this one, two rounds alternating
      for r in 1 2; do for b in .devbuild_old $B; do
        echo "-- $b round $r"; $b/wgml bench matvec 2>&1 | grep -E "^(q|f16)" | tr -s ' ' | tr '\n' ';'; echo
      done; done ;;
    mvab4) # mvab3, then tg128 of the previous build and this one (llmab), two rounds
      tmodes native test_graph_prologue test_op_matvec
      for r in 1 2; do for b in .devbuild_old $B; do
        echo "-- $b round $r"; $b/wgml bench matvec 2>&1 | grep -E "^(q|f16)" | tr -s ' ' | tr '\n' ';'; echo
      done; done
      llmab "-p 16 -n 128 -r 3" 'tg128' ;;
    l2probe) # how fast a decode product runs with its weights in L2: 32 products of one shape reading 32 matrices
      # against all reading the first (--reuse), q4_K and q6_K, two rounds
      for r in 1 2; do for nk in 4096x4096 6144x4096 14336x4096 28672x4096; do for ru in "" --reuse; do
        echo "-- $nk ${ru:-cold} r$r: $($B/wgml bench matvec --nk $nk --dtype q4_K,q6_K $ru 2>&1 | grep -E "^q" | tr -s ' ' | tr '\n' ';')"
      done; done; done ;;
    nsplit) # the norm split (2026-11-27 (6): LINEAR_NORM norm_split, XS_NSPLIT / XS_NRMS) against
      # WGML_GRAPH_FUSE=nosplit: the graph tests natively (and the prologue test without f16 and in 64 KiB windows),
      # the decoder block both ways, greedy text and tg128 pipelined, two rounds, 8B then 1B
      tmodes "native nof16 window" test_graph_prologue
      tmodes native test_llm_graph test_graph test_op_matvec
      for f in nosplit ""; do echo "-- decoder ${f:-split}: $(WGML_GRAPH_FUSE=$f $B/wgml bench graph decoder 2>&1 | grep -E "^decoder" | tail -n 1)"; done
      fuseab nosplit ;;
    nsvar) # the norm split's producer by variant (WGML_FORCE=nsplit=...): the tests natively, tg128 pipelined, two
      # rounds, 8B then 1B; then the decodes' GPU time per kernel (prof8's)
      tmodes native test_graph_nsplit test_op_matvec test_llm_graph
      tmodes nof16 test_graph_nsplit
      wait_gen
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m r$r: t512 $(tg $m) | r4 $(tg $m WGML_FORCE=nsplit=sgx_r4) | r1t1024 $(tg $m WGML_FORCE=nsplit=sgx_r1t1024)"
      done; done
      for m in 8b 1b; do
        echo "-- $m"; WGML_PROFILE=1 $B/wgml bench llm -m /tmp/models/llama-$m-q4k.gguf -p 16 -n 32 -r 1 2>&1 | grep -vE "^\|" | head -n 26
      done ;;
    attnprobe) # what the decode attention costs a token: tg128 pipelined with its kernels dropped (WGML_SKIP_KERNELS:
      # results wrong, time right), two rounds, 8B then 1B
      wait_gen
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m r$r: base $(tg $m) | nodsg $(tg $m WGML_SKIP_KERNELS=attn_dsg) | nomerge $(tg $m WGML_SKIP_KERNELS=attn_merge) | noattn $(tg $m WGML_SKIP_KERNELS=attn_dsg,attn_merge)"
      done; done
      for m in 8b 1b; do
        echo "-- $m chunks: 4 $(tg $m WGML_ATTN_CHUNKS=4) | 16 $(tg $m WGML_ATTN_CHUNKS=16 WGML_ATTN_MINCHUNK=16) | kpt1 $(tg $m WGML_ATTN_KPT=1)"
      done ;;
    dsgt256) # dsg on 256 threads (dsg_t256, timing variant) against the table's dsg: test_op_attention natively,
      # tg128 pipelined (two rounds, 8B then 1B), and the issue-9 decode rows (bench attn --decode, graph replay)
      tmodes native test_op_attention
      wait_gen
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m r$r: dsg $(tg $m) | dsg_t256 $(tg $m WGML_FORCE=attn=dsg_t256)"
      done; done
      for v in "" dsg_t256; do echo "-- attn decode ${v:-table}"; WGML_FORCE=${v:+attn=$v} $B/wgml bench attn --decode 2>&1 | tail -n 5; done ;;
    glq) # the glu's codes (XS_GLUQ: the gate|up product writes the down product's x codes, 32 glu outputs a
      # workgroup) against WGML_GRAPH_FUSE=noglq: the graph tests natively, greedy text, tg128 pipelined, two rounds
      # (2026-11-27 (6) call 8: 8B -8.7%, reverted; kept as the record)
      tmodes native test_graph_codes test_llm_graph test_graph_prologue test_op_matvec test_op_attention
      tmodes nof16 test_graph_codes
      for f in noglq ""; do echo "-- decoder ${f:-glq}: $(WGML_GRAPH_FUSE=$f $B/wgml bench graph decoder 2>&1 | grep -E "^decoder" | tail -n 1)"; done
      fuseab noglq ;;
    xscap) # main_xs's workgroup cap (WGML_MV_XS_WGS; the table's 528) now that the q|k|v and gate|up products read
      # their codes (no prologue to share across groups): tg128 pipelined, two rounds, 8B then 1B
      wait_gen
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m r$r: 528 $(tg $m) | 264 $(tg $m WGML_MV_XS_WGS=264) | 1056 $(tg $m WGML_MV_XS_WGS=1056) | 2112 $(tg $m WGML_MV_XS_WGS=2112) | 8192 $(tg $m WGML_MV_XS_WGS=8192)"
      done; done ;;
    onechunk) # short-context decode attention in fewer chunks on more threads (dsg_t256 / dsg_t512 with
      # WGML_ATTN_CHUNKS 1 or 2: no merge pass at 1): tg128 pipelined, 8B then 1B, two rounds (2026-11-27 (6) call 10:
      # all slower than the table; dsg_t512 removed, kept as the record)
      tmodes native test_op_attention
      wait_gen
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m r$r: table $(tg $m) | t256 c2 $(tg $m WGML_FORCE=attn=dsg_t256 WGML_ATTN_CHUNKS=2) | t512 c1 $(tg $m WGML_FORCE=attn=dsg_t512 WGML_ATTN_CHUNKS=1) | t512 c2 $(tg $m WGML_FORCE=attn=dsg_t512 WGML_ATTN_CHUNKS=2) | t512 $(tg $m WGML_FORCE=attn=dsg_t512)"
      done; done ;;
    dsgprobe) # where dsg's time goes at the 256-key bucket: tg128 pipelined with its key loop compiled out
      # (WGML_ATTN_PROBE=1) or its key groups' merge (=2), results wrong, time right; two rounds, 8B then 1B
      # (2026-11-27 (6) call 12; the probe is gone, kept as the record)
      wait_gen
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m r$r: base $(tg $m) | notile $(tg $m WGML_ATTN_PROBE=1) | nomerge $(tg $m WGML_ATTN_PROBE=2) | nodsg $(tg $m WGML_SKIP_KERNELS=attn_dsg)"
      done; done ;;
    wtab) # dsg's key-group weights once a row (2026-11-27 (6) call 13) against the previous build: test_op_attention
      # and test_llm_graph natively, tg128 (llmab, two rounds), bench attn --decode of both builds (reverted; the record)
      tmodes "native nof16" test_op_attention
      tmodes native test_llm_graph
      llmab "-p 16 -n 128 -r 3" 'tg128'
      for b in .devbuild_old $B; do echo "-- attn decode $b"; $b/wgml bench attn --decode 2>&1 | grep -E "graph" | tr -s ' ' | tr '\n' ';'; echo; done ;;
    pairs) # the norm split's pair mode (WGML_FORCE=nsplit=sgx_r2: 16-row workgroups, two a block by ticket) against
      # the default (sgx_r2t512): test_graph_nsplit natively and without f16, greedy text, tg128 pipelined, two rounds
      # (2026-11-27 (6) call 14: 8B -8.3%, 1B -2.3%; reverted, kept as the record)
      tmodes "native nof16" test_graph_nsplit
      tmodes native test_llm_graph
      wait_gen
      for m in 1b 8b; do greedy $m $B/wgml; greedy $m env WGML_FORCE=nsplit=sgx_r2 $B/wgml; done
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m r$r: t512 $(tg $m) | pairs $(tg $m WGML_FORCE=nsplit=sgx_r2)"
      done; done ;;
    mvrows) # issue 9's mat-vec rows (32 x [14336, 4096], one row, graph replay) beside torch's copy, this build only
      python3 bench/torch_copy.py 2>&1 | tail -n 1
      $B/wgml bench matvec 2>&1 | tail -n 6 ;;
    gridprobe) # persistent kernels (src/kernels/grid.wgsl): test_grid's checks, then its chain of 32 dependent
      # int8 mat-vecs as one persistent dispatch (grid barriers; with the next stage's weights loaded before
      # each barrier) against a dispatch a stage, and a bare barrier loop: 4096x4096, 14336x4096, 2048x2048
      python3 bench/torch_copy.py 2>&1 | tail -n 1
      $B/tests/test_grid 2>&1 | tail -n 12
      for sh in "4096 4096" "14336 4096" "2048 2048" "8192 4096"; do $B/tests/test_grid --bench $sh 32 20 2>&1 | grep gridprobe; done ;;
    gridprobe2) # the persistent chain bound by bytes: f32 weights (WF32), 2048x2048 (16.8 MB) and 4096x4096 (67 MB),
      # workgroups of 256 or 1024 threads, x staged by atomic or plain loads (XPLAIN)
      for sh in "2048 2048" "4096 4096"; do for d in "WG=256;WF32" "WG=1024;WF32" "WG=256;WF32;XPLAIN" "WG=1024;WF32;XPLAIN"; do
        $B/tests/test_grid --bench $sh 32 20 "$d" 2>&1 | grep gridprobe | tail -n 5; done; done ;;
    gridlayer) # a decode layer's products as one persistent chain (test_grid --layer: int8 weights, x as 8-bit codes
      # met by dot4I8Packed, the 8B's and 1B's q|k|v, o, gate|up, down shapes in turn) against a dispatch a stage
      python3 bench/torch_copy.py 2>&1 | tail -n 1
      $B/tests/test_grid layer 2>&1 | tail -n 1
      for d in ${GRIDDEFS:-"WG=256;XI8;LAYER" "WG=256;XI8;LAYER;XPLAIN" "WG=256;XI8;LAYER;XPLAIN;W4"}; do
        $B/tests/test_grid --layer 8b 4 20 "$d" 2>&1 | grep gridlayer
        $B/tests/test_grid --layer 1b 16 20 "$d" 2>&1 | grep gridlayer; done ;;
    pffn) # the persistent FFN (WG_OP_FFN: gate|up and down as one dispatch, a grid barrier between) against
      # WGML_GRAPH_FUSE=noffn: its tests natively (the dtypes case too), the decoder-graph tests, the greedy
      # text of both and tg128 pipelined (two rounds, 8B then 1B), then each step's kernel times (8B)
      tmodes native test_graph_ffn test_llm_graph test_graph_nsplit
      $B/tests/test_graph_ffn dtypes 2>&1 | tail -n 3
      wait_gen
      for m in 8b 1b; do WGML_GRID_VERBOSE=1 $B/wgml bench llm -m /tmp/models/llama-$m-q4k.gguf -p 16 -n 4 -r 1 2>&1 | grep resident; done
      fuseab noffn
      for f in "" noffn; do echo "-- 8b profile ${f:-ffn}"; WGML_GRAPH_FUSE=$f WGML_PROFILE=1 $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 32 -r 1 2>&1 | grep -vE "^\|" | head -n 14; done ;;
    pffnab) # the persistent FFN's knobs (waits for llmgen): tg128 pipelined, two rounds, 8B then 1B:
      # noffn (two dispatches), the default, then each PFFNVARS column "label:VAR=v[,VAR2=v2]"
      # (default: the persistent form, and it on 132 workgroups); PFFNGREEDY="VAR=v": the greedy text too
      wait_gen
      [ -n "${PFFNGREEDY:-}" ] && for m in 1b 8b; do greedy $m $B/wgml; greedy $m env $PFFNGREEDY $B/wgml; done
      for r in 1 2; do for m in 8b 1b; do
        line="-- $m r$r: noffn $(tg $m WGML_GRAPH_FUSE=noffn) | ffn $(tg $m)"
        for v in ${PFFNVARS:-persist:WGML_FORCE=ffn=persist wgs132:WGML_FORCE=ffn=persist,WGML_PFFN_WGS=132}; do
          line="$line | ${v%%:*} $(tg $m $(echo ${v#*:} | tr ',' ' '))"
        done
        echo "$line"
      done; done ;;
    ksplit) # the k split (sgx_*k<n>: KS subgroups a row pair, each a KS-th of its chunks; 2026-11-27 (9)):
      # test_op_matvec / test_graph_nsplit natively, the decoder's four products (32 in one replay) by variant, the
      # greedy text, then tg128 two rounds: table | nsplit (o, down) on t1024k2 | every product t1024k2 | t512k2
      tmodes native test_op_matvec test_graph_nsplit
      for nk in 4096x14336 4096x4096 28672x4096 6144x4096; do
        line="$nk table $(mvrow $nk q4_K)"
        for v in ${KSVARS:-sgx_r2t512 sgx_r2t1024k2 sgx_r2t512k2 sgx_r2t1024k4}; do line="$line | $v $(mvrow $nk q4_K WGML_FORCE=matvec=$v)"; done
        echo "$line" | tr -s ' '
      done
      wait_gen
      for m in 1b 8b; do greedy $m $B/wgml; greedy $m env WGML_FORCE=matvec=sgx_r2t1024k2 $B/wgml; done
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m r$r: table $(tg $m) | ns-k2 $(tg $m WGML_FORCE=nsplit=sgx_r2t1024k2) | all-k2 $(tg $m WGML_FORCE=matvec=sgx_r2t1024k2) | all-t512k2 $(tg $m WGML_FORCE=matvec=sgx_r2t512k2)"
      done; done ;;
    mvprobe) # main_xs's loads alone (WGML_MV_PROBE=1), arithmetic alone (=2: weights from L1), the dispatch alone (=3),
      # x's quantising alone (=4), results wrong; PROBES="1 2 3 4" which, PROBENK the shapes, PROBENOTG=1 no tg128
      # (2026-11-27 (9)): the decoder's four products (32 in one replay), then tg128 of both models, one round each
      for nk in ${PROBENK:-4096x14336 4096x4096 28672x4096 6144x4096}; do
        line="$nk table $(mvrow $nk q4_K)"
        for pr in ${PROBES:-1 2}; do line="$line | p$pr $(mvrow $nk q4_K WGML_MV_PROBE=$pr)"; done
        echo "$line" | tr -s ' '
      done
      if [ -z "${PROBENOTG:-}" ]; then
        wait_gen
        for m in 8b 1b; do echo "-- $m: table $(tg $m) | loads $(tg $m WGML_MV_PROBE=1) | alu $(tg $m WGML_MV_PROBE=2)"; done
      fi ;;
    xq4ab) # a quantising change A/B'd (2026-11-27 (9): four x vectors a lane, reverted): the quantising probe of the
      # previous build (.devbuild_old) and this one, the 8B decode's one-dispatch products (timestamps) of both
      for nk in 4096x4096 4096x14336 28672x4096; do
        echo "$nk old $(B=.devbuild_old mvrow $nk q4_K) | p4 $(B=.devbuild_old mvrow $nk q4_K WGML_MV_PROBE=4) || new $(mvrow $nk q4_K) | p4 $(mvrow $nk q4_K WGML_MV_PROBE=4)" | tr -s ' '
      done
      wait_gen
      for b in .devbuild_old $B; do echo "-- $b 8b profile"; WGML_PROFILE=1 $b/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 32 -r 1 2>&1 | grep -vE "^\|" | grep main_xs; done ;;
    mvprobe2) # main_xs's prologue taken apart (WGML_MV_PROBE 3 7 8 9 5 4, 2026-11-27 (9)), two rounds alternating, on
      # PROBENK's shapes (default 4096x4096 256x4096)
      for r in 1 2; do for nk in ${PROBENK:-4096x4096 256x4096}; do
        line="r$r $nk"
        for pr in 3 7 8 9 5 4; do line="$line | p$pr $(mvrow $nk q4_K WGML_MV_PROBE=$pr | awk '{print $2}')"; done
        echo "$line"
      done; done ;;
    final9) # the session's final build (2026-11-27 (9)): the mat-vec and decoder-graph tests natively, the greedy text,
      # tg128 two rounds (8B then 1B)
      tmodes native test_op_matvec test_graph_nsplit test_llm_graph test_graph_ffn
      wait_gen
      for m in 1b 8b; do greedy $m $B/wgml; done
      for r in 1 2; do for m in 8b 1b; do echo "-- $m r$r: $(tg $m)"; done; done ;;
    nsfirst) # a decode A/B of the previous build (.devbuild_old) and this one (2026-11-27 (9) call 11: the split
      # norm's sums of squares loaded early, reverted): the tests natively, the greedy text of both, tg128 of both
      # (llmab, two rounds alternating)
      tmodes native test_op_matvec test_graph_nsplit test_llm_graph test_graph_ffn
      wait_gen
      for m in 1b 8b; do greedy $m .devbuild_old/wgml; greedy $m $B/wgml; done
      llmab "-p 16 -n 128 -r 3" 'tg128' ;;
    mvper) # main_xs's probes a product (bench matvec --per: the second half of 32 products less the first, median /
      # minimum, so the step's submit and wait drop out; 2026-11-27 (9)), two rounds: table, dispatch alone (3), + a
      # store (7), + a barrier (8), + workgroup memory (9), quantising with no loads (5), quantising (4)
      for r in 1 2; do for nk in ${PROBENK:-4096x4096 4096x14336}; do
        line="r$r $nk"
        for pr in 0 3 7 8 9 5 4; do
          line="$line | p$pr $(env WGML_MV_PROBE=$pr $B/wgml bench matvec --nk $nk --dtype q4_K --per 2>&1 | grep q4_K | tail -n 1 | awk '{print $5 "/" $6}')"
        done
        echo "$line"
      done; done ;;
    pffnsass) # the driver's disk cache of the 8B decode's kernels (bench/sass.py cache-pffn here: registers, local memory)
      wait_gen
      rm -rf /tmp/sass-pffn
      WGML_CACHE_DIR=/tmp/sass-pffn $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 4 -r 1 > /dev/null 2>&1
      [ -n "${PFFNSASS:-}" ] && WGML_CACHE_DIR=/tmp/sass-pffn env $PFFNSASS $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 4 -r 1 > $OUTDIR/sass-pffn.txt 2>&1
      du -sm /tmp/sass-pffn; [ $(du -sm /tmp/sass-pffn | cut -f1) -lt 16 ] && cp -r /tmp/sass-pffn $OUTDIR/cache-pffn ;;
    vocab) # the q6_K vocabulary product on sgx_r2t512 (the table from 2026-11-27 (8)) against WGML_MV_VOCAB=sgq:
      # test_op_matvec, test_llm_graph, test_graph_ffn natively, the greedy text of both, tg128 two rounds
      tmodes native test_op_matvec test_llm_graph test_graph_ffn
      PFFNGREEDY="WGML_MV_VOCAB=sgq" PFFNVARS="sgq:WGML_MV_VOCAB=sgq" bash "$0" pffnab 2>&1 | grep -E "^-- |greedy" ;;
    mtail) # (2026-11-27 (7) call 4: a tie, not landed; kept as the record) the split-KV decode's merge in dsg's last workgroup of a row group (attention_mtail.wgsl) against the
      # merge dispatch (WGML_ATTN_MTAIL=0): test_op_attention and the decoder-graph tests natively and without f16,
      # tg128 pipelined (two rounds, 8B then 1B), the issue-9 decode rows (bench attn --decode, graph replay)
      tmodes "native nof16" test_op_attention test_llm_graph test_graph_nsplit
      wait_gen
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m r$r: merge dispatch $(tg $m WGML_ATTN_MTAIL=0) | tail $(tg $m)"
      done; done
      for v in 0 1; do echo "-- attn decode MTAIL=$v"; WGML_ATTN_MTAIL=$v $B/wgml bench attn --decode 2>&1 | tail -n 5; done
      for m in 8b 1b; do greedy $m env WGML_ATTN_MTAIL=0 $B/wgml; greedy $m $B/wgml; done ;;
    nsprobe) # the bound on the norm split (2026-11-27 (6)): tg128 pipelined with the norm dispatches dropped
      # (WGML_SKIP_KERNELS: results wrong, time right), and with every one-row product on 512 threads too, 8B then 1B
      wait_gen
      for r in 1 2; do for m in 8b 1b; do
        echo "-- $m r$r: base $(tg $m) | nonorm $(tg $m WGML_SKIP_KERNELS=norm:) | nonorm t512 $(tg $m WGML_SKIP_KERNELS=norm: WGML_FORCE=matvec=sgx_r2t512) | t512 $(tg $m WGML_FORCE=matvec=sgx_r2t512)"
      done; done ;;
    mergeprobe) # the bound on merging decode attention's runs in dsg's last workgroups: tg128 pipelined with the
      # attn_merge dispatches dropped (WGML_SKIP_KERNELS: results wrong, time right), 8B then 1B
      wait_gen
      for m in 8b 1b; do echo "-- $m: base $(tg $m) | nomerge $(tg $m WGML_SKIP_KERNELS=attn_merge)"; done ;;
    normfold) # (2026-11-27 (3) calls 16-17: 8B -15%, 1B -5%; reverted, kept as the record)
      # the ffn norm folded into the gate|up product's prologue (XS_NORM) against WGML_GRAPH_FUSE=nonormfold:
      # the graph tests natively and in CI's modes, the greedy text (not bit-exact: the sum of squares in another
      # order), tg128 pipelined, two rounds, 8B then 1B
      tmodes "native nof16 window" test_graph_prologue
      tmodes native test_llm_graph test_op_matvec test_graph_api
      fuseab nonormfold ;;
    nf) # the norm fold's tg128 A/B alone (fuseab nonormfold)
      fuseab nonormfold ;;
    mvbig) # the 8B layer's big one-dispatch products (gate|up 28672x4096, down 4096x14336, q4_K; graph replay of
      # 32): one-dispatch variants x workgroup caps (WGML_MV_XS_WGS), against the table
      for nk in 28672x4096 4096x14336; do
        echo "$nk table $(mvrow $nk q4_K)"
        for v in sgx_r1 sgx_r2 sgx_r4 sgx_r2t128; do for c in 264 396 528 792 1056; do
          echo "$nk $v cap $c $(mvrow $nk q4_K WGML_FORCE=matvec=$v WGML_MV_XS_WGS=$c)"
        done; done
      done ;;
    mvab2) # A/B of sgx_r4 for long rows (the previous build, .devbuild_old, has none) and main_xs's first-rows
      # prefetch (WGML_MV_PREFETCH=0 against the default): the 8B layer's four q4_K products (graph replay of 32,
      # us), then tg128 pipelined, two rounds, 8B then 1B (2026-11-27 (2) call 6: both were slower in the decode
      # and are reverted, the knob with them; kept as the record of that call)
      for nk in 6144x4096 4096x4096 28672x4096 4096x14336; do
        echo "$nk: old $(B=.devbuild_old mvrow $nk q4_K) | nopf $(mvrow $nk q4_K WGML_MV_PREFETCH=0) | new $(mvrow $nk q4_K)"
      done
      wait_gen
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: old $(B=.devbuild_old tg $m) | nopf $(tg $m WGML_MV_PREFETCH=0) | new $(tg $m)"
      done; done ;;
    s2tests) # this session's test programs: natively, without f16 and in 64 KiB windows
      tmodes "native nof16 window" test_op_matvec test_graph_prologue
      tmodes native test_llm_graph test_op_rope test_graph_api ;;
    s3tests) # this session's test programs: natively, without f16 and in 64 KiB windows
      tmodes "native nof16 window" test_op_matvec test_graph_prologue
      tmodes native test_llm_graph test_op_attention test_op_rope test_graph_api ;;
    sessab) # the session's start (.devbuild_old) against this build: tg128 pipelined, two rounds, 8B then 1B,
      # and the greedy text of both
      wait_gen
      for m in 1b 8b; do greedy $m .devbuild_old/wgml; greedy $m $B/wgml; done
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: start $(B=.devbuild_old tg $m) | now $(tg $m)"
      done; done ;;
    ropelean) # the fused q|k|v product with two bindings fewer and no error word (WGML_ROPE_LEAN=1, a timing
      # probe) against the default, tg128 pipelined, two rounds, 8B then 1B (2026-11-27 (2) call 9: no effect;
      # the probe is gone, kept as the record of that call)
      wait_gen
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: default $(tg $m) | lean $(tg $m WGML_ROPE_LEAN=1)"
      done; done ;;
    kcpair) # A/B of the fused q|k|v product's f16 cache stores, a 32-bit store a pair (KC_PAIR) against two 16-bit
      # ones (.devbuild_old): tg128 pipelined, two rounds, 8B then 1B
      llmab "-p 16 -n 128 -r 3" 'tg128' ;;
    mvdec) # the 8B decoder's four mat-vec shapes (q4_K), graph replay, fraction of copy
      python3 bench/torch_copy.py 2>&1 | tail -n 1
      for nk in 6144x4096 4096x4096 28672x4096 4096x14336; do
        echo "$nk: $($B/wgml bench matvec --nk $nk --dtype q4_K 2>&1 | grep -E '^\|? *q4_K|q4_K' | tail -n 1)"
      done ;;
    mvwg) # mat-vec workgroup sizes on the 8B decoder's four q4_K shapes (graph replay, fraction of copy),
      # then the 8B decode with the best candidates forced
      for nk in 6144x4096 4096x4096 28672x4096 4096x14336; do
        for v in "" sgq_r4 sgq_r4u2 sgq_r4t128 sgq_r4t256 sgq_r2t128 sgq_r2t256 sgq_r1t256 sgq_r8t128 sgq_r8; do
          echo "$nk ${v:-table}: $(WGML_FORCE=${v:+matvec=$v} $B/wgml bench matvec --nk $nk --dtype q4_K 2>&1 | grep q4_K | tail -n 1)"
        done
      done
      wait_gen
      for v in sgq_r4t128 sgq_r4t256 sgq_r2t256; do
        echo "-- 8B $v: $(WGML_FORCE=matvec=$v $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 128 -r 2 2>&1 | grep tg128)"
      done ;;
    attnvar) # the 8B decode (KV 512-640, bound as 768) with each decode-attention kernel and chunk count
      wait_gen
      for v in "dsg 0" "dsg_np 0" "splitkv 0" "dsg 4" "dsg 8" "dsg 12" "dsg 48"; do
        set -- $v
        echo "-- attn=$1 chunks=$2: $(WGML_FORCE=attn=$1 WGML_ATTN_CHUNKS=$2 $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 512 -n 128 -r 2 2>&1 | grep tg128)"
      done ;;
    ptests) # this session's tests: natively, the new ones also without f16 and in 64 KiB windows
      for tm in "test_graph_prologue native nof16 window" "test_op_moe native nof16 window" "test_op_matvec native" \
                "test_llm_graph native" "test_op_attention native" "test_op_indexing_errors native" \
                "test_op_glu_sample native" "test_op_norm native" "test_op_matmul native"; do
        set -- $tm; t=$1; shift
        for m in "$@"; do
          unset WGML_DISABLE WGML_MAX_BINDING
          [ $m = nof16 ] && export WGML_DISABLE=f16
          [ $m = window ] && export WGML_MAX_BINDING=65536
          [ -x $B/tests/$t ] && echo "$t $m: $($B/tests/$t 2>&1 | tee $OUTDIR/$t.$m.log | grep -E 'passed|check failed' | head -n 4 | tr '\n' ' ')"
        done
      done
      unset WGML_DISABLE WGML_MAX_BINDING ;;
    ab) # A/B of the decode changes: the linear prologue fusion (opt-in: WGML_GRAPH_FUSE=prologue, normpro, glupro)
        # and the 256-thread mat-vec for long rows (WGML_FORCE=matvec=sgq_r4: the old table), 8B tg128 and the decoder block
      wait_gen
      for rep in 1 2; do
        for cfg in "x x" "prologue x" "normpro x" "glupro x"; do
          set -- $cfg
          f=""; [ $1 != x ] && f=$1; m=""; [ $2 != x ] && m=matvec=$2
          echo "-- fuse=${f:-all} force=${m:-table}: $(WGML_GRAPH_FUSE=$f WGML_FORCE=$m $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 512 -n 128 -r 2 2>&1 | grep tg128 | cut -d'|' -f6,7)" \
               "$(WGML_GRAPH_FUSE=$f WGML_FORCE=$m $B/wgml bench graph decoder --kv 512 2>/dev/null | grep -o '[0-9]* dispatches.*back to back [0-9.]*)')"
        done
      done ;;
    d0var) # host-side and attention knobs on tg128 from an empty cache (llama-bench's tg128), 8B then 1B:
      # the replay's first chunk (WGML_REPLAY_FIRST), the wait's spin (WGML_SPIN_US), decode attention's chunks
      wait_gen
      for m in 8b 1b; do
        for cfg in "x x x" "8 x x" "16 x x" "x 20000 x" "8 20000 x" "x x 1" "x x 2" "x x x"; do
          set -- $cfg
          e=""; [ $1 != x ] && e="WGML_REPLAY_FIRST=$1"; [ $2 != x ] && e="$e WGML_SPIN_US=$2"
          [ $3 != x ] && e="$e WGML_ATTN_CHUNKS=$3"
          echo "-- $m ${e:-defaults}: $(tg $m $e)"
        done
      done ;;
    mvhead) # the vocabulary products (q6_K, 128256 rows: ~6% of an 8B decode token), every integer-path shape
      python3 bench/torch_copy.py 2>&1 | tail -n 1
      for nk in 128256x4096 128256x2048; do
        for v in "" sgq_r2 sgq_r8 sgq_r4u2 sgq_r4t128 sgq_r8t128 sgw_r4; do
          echo "$nk ${v:-table}: $(mvrow $nk q6_K ${v:+WGML_FORCE=matvec=$v})"
        done
      done ;;
    mvshort) # short rows of many rows: sgq_r8 (the table's, for k / chunk <= 32 and n >= 16384) against
      # sgq_r4 (WGML_MV_SHORT=r4): the 1B's gate|up and vocabulary shapes, then the 1B decode A/B
      for nk in "16384x2048 q4_K" "128256x2048 q6_K" "16384x1024 q4_K"; do
        set -- $nk
        for v in "" r4; do
          echo "$1 $2 ${v:-table}: $(mvrow $1 $2 ${v:+WGML_MV_SHORT=$v})"
        done
      done
      wait_gen
      for t in "" r4 "" r4; do
        echo "-- 1b ${t:-table}: $(tg 1b ${t:+WGML_MV_SHORT=$t})"
      done
      echo "-- 8b: $(tg 8b)" ;;
    mvshortall) # sgq_r8 for short rows of any row count (WGML_MV_SHORT=sgq_r8) against the table: the 1B's q|k|v and
      # o shapes, then the 1B decode A/B
      for nk in 3072x2048 2048x2048 2048x8192; do
        for v in "" sgq_r8; do
          echo "$nk ${v:-table}: $(mvrow $nk q4_K ${v:+WGML_FORCE=matvec=$v})"
        done
      done
      wait_gen
      for t in "" sgq_r8 "" sgq_r8; do
        echo "-- 1b ${t:-table}: $(tg 1b ${t:+WGML_MV_SHORT=$t})"
      done ;;
    mvfew) # short rows (k 2048: 32 chunks) of few rows: 32-thread variants against the table's 64-thread sgq_r2 /
      # sgq_r4 (half their threads idle), the 1B's q|k|v and o shapes, then the 1B decode with candidates
      for nk in 3072x2048 2048x2048; do
        for v in "" sgq_r2t32 sgq_r4t32 sgq_r1 sgq_r2; do
          echo "$nk ${v:-table}: $(mvrow $nk q4_K ${v:+WGML_FORCE=matvec=$v})"
        done
      done
      wait_gen
      for t in "" sgq_r2t32 sgq_r4t32 "" sgq_r2t32 sgq_r4t32; do
        echo "-- 1b ${t:-table}: $(tg 1b ${t:+WGML_MV_SHORT=$t})"
      done ;;
    pipe) # tg128 pipelined (wgml_model_generate: step t+1 issued before step t's token is read) against the
      # old loop (--sync), two rounds, 8B then 1B
      wait_gen
      for round in 1 2; do for m in 8b 1b; do echo "-- $m round $round: pipelined $(tg $m) | sync $(tgs $m)"; done; done ;;
    knobs) # host-side and fusion knobs on the pipelined decode (tg128, -r 3), 8B then 1B
      wait_gen
      for m in 8b 1b; do
        echo "-- $m base $(tg $m) | first64 $(tg $m WGML_REPLAY_FIRST=64) | first1024 $(tg $m WGML_REPLAY_FIRST=1024)"
        echo "-- $m thr1 $(tg $m WGML_REPLAY_THREADS=1) | normpro $(tg $m WGML_GRAPH_FUSE=normpro) | glupro $(tg $m WGML_GRAPH_FUSE=glupro) | base $(tg $m)"
      done ;;
    submit) # a replay issued while the GPU is busy is one command buffer: the default against WGML_REPLAY_WHOLE=0
      # (chunks of 16, 32, ...), and the old loop (--sync), two rounds
      wait_gen
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: base $(tg $m) | whole0 $(tg $m WGML_REPLAY_WHOLE=0) | sync $(tgs $m)"
      done; done ;;
    profnorm) # GPU time per kernel (timestamps) of the 8B decode (tg32 after pp16), unfused against the opt-in norm
      # and glu prologue fusions: which kernel makes the fused step slower
      wait_gen
      for f in 1 normpro glupro; do
        echo "-- WGML_GRAPH_FUSE=$f"
        WGML_GRAPH_FUSE=$f WGML_PROFILE=1 $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 32 -r 1 2>&1 | grep -vE "^\|" | head -n 24
      done ;;
    fusepipe) # the opt-in prologue fusions and decode attention in one chunk, on the pipelined one-command-buffer
      # decode (tg128, -r 3), two rounds, 8B then 1B
      wait_gen
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: base $(tg $m) | normpro $(tg $m WGML_GRAPH_FUSE=normpro) | glupro $(tg $m WGML_GRAPH_FUSE=glupro) | prologue $(tg $m WGML_GRAPH_FUSE=prologue) | chunks1 $(tg $m WGML_ATTN_CHUNKS=1)"
      done; done ;;
    kvjoint) # one rope over q|k|v (v passing through) and one k|v cache write a layer, against two caches
      # (WGML_LLM_SPLIT_KV=1: rope, then a set_rows each), tg128 pipelined, two rounds
      wait_gen
      for round in 1 2; do for m in 8b 1b; do
        echo "-- $m round $round: joint $(tg $m) | split $(tg $m WGML_LLM_SPLIT_KV=1)"
      done; done ;;
    small) # the 1B's small products on the float path (no quantising pass: WGML_MV_FLOAT_BELOW=m million weights;
      # its q|k|v is 6.3, o 4.2, gate|up 33.5) and the KV bucket (WGML_LLM_KV_BUCKET; 256 the default), tg128 pipelined
      wait_gen
      for round in 1 2; do
        echo "-- 1b round $round: base $(tg 1b) | float5 $(tg 1b WGML_MV_FLOAT_BELOW=5) | float8 $(tg 1b WGML_MV_FLOAT_BELOW=8) | kv64 $(tg 1b WGML_LLM_KV_BUCKET=64) | kv128 $(tg 1b WGML_LLM_KV_BUCKET=128)"
        echo "-- 8b round $round: base $(tg 8b) | kv64 $(tg 8b WGML_LLM_KV_BUCKET=64) | kv128 $(tg 8b WGML_LLM_KV_BUCKET=128)"
      done ;;
    prof8) # GPU time per kernel (timestamps) of the 8B and 1B decodes (tg32 after pp16)
      wait_gen
      for m in 8b 1b; do
        echo "-- $m"; WGML_PROFILE=1 $B/wgml bench llm -m /tmp/models/llama-$m-q4k.gguf -p 16 -n 32 -r 1 2>&1 | grep -vE "^\|" | head -n 26
      done ;;
    llmgen1) # only the 1B random-weight GGUF, in the background
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/gguf-*.whl 2>&1 | tail -n 2
      mkdir -p /tmp/models
      PYTHONPATH=/tmp/site python3 bench/peers/gen_gguf.py /tmp/models/llama-1b-q4k.gguf 1b > $OUTDIR/llmgen.log 2>&1 &
      echo $! > /tmp/llmgen.pid ;;
    stage) # one piece of a real model (.stage/part.*, carried) kept in /tmp/stage: the machine stays
      # warm for 30 s after a call, so consecutive calls stage a file over the 64 MiB a call carries
      mkdir -p /tmp/stage && cp .stage*/part.* /tmp/stage/ && ls -l /tmp/stage ;;
    realmodel) # the staged SmolLM2-135M Q4_1 joined and checked against its sha256, then against
      # llama.cpp b11549's committed fixtures (every prompt), a greedy generation and the NLL text
      M=/tmp/stage/SmolLM2-135M-Instruct.Q4_1.gguf
      cat /tmp/stage/part.* > $M && sha256sum $M | grep -q b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53 \
        && echo "staged model: sha256 ok" || { echo "staged model: sha256 MISMATCH"; ls -l /tmp/stage; }
      WGML_MODEL_DIR=/tmp/stage WGML_REQUIRE_MODEL=1 $B/tests/test_llm_fixtures . smollm2 SmolLM2-135M-Instruct.Q4_1.gguf 99 2>&1 |
        tee $OUTDIR/realmodel.log | grep -vE "^  ok" | tail -n 25
      $B/wgml generate -m $M -p "The capital of France is" -n 48 --temp 0 2>&1 | tail -n 6
      $B/wgml generate -m $M --chat -p "Write a haiku about GPUs." -n 48 --temp 0 2>&1 | tail -n 6
      $B/wgml perplexity -m $M -f tests/fixtures/nll_text.txt 2>&1 | tail -n 3
      $B/wgml bench llm -m $M -p 512 -n 128 -r 3 2>&1 | tail -n 3 ;;
    realgemma) # the staged gemma-3-270m Q4_K_M (five pieces, .stage_g1..5: stage in consecutive calls)
      # joined and checked against its sha256, then llama.cpp b11549's committed fixtures (every prompt),
      # greedy and chat generations, the NLL text and bench llm
      M=/tmp/stage/gemma-3-270m-q4_k_m.gguf
      cat /tmp/stage/part.g? > $M && sha256sum $M | grep -q a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 \
        && echo "staged model: sha256 ok" || { echo "staged model: sha256 MISMATCH"; ls -l /tmp/stage; }
      WGML_MODEL_DIR=/tmp/stage WGML_REQUIRE_MODEL=1 $B/tests/test_llm_fixtures . gemma3 gemma-3-270m-q4_k_m.gguf 99 2>&1 |
        tee $OUTDIR/realgemma.log | grep -vE "^  ok" | tail -n 25
      $B/wgml generate -m $M -p "The capital of France is" -n 32 --temp 0 2>&1 | tail -n 6
      $B/wgml generate -m $M --chat -p "Write a haiku about GPUs." -n 48 --temp 0 2>&1 | tail -n 6
      $B/wgml perplexity -m $M -f tests/fixtures/nll_text.txt 2>&1 | tail -n 3
      $B/wgml bench llm -m $M -p 512 -n 128 -r 3 2>&1 | tail -n 3 ;;
    mvcoal) # are the mat-vec kernels bound by their lane-strided loads?  the unit path (lanes read
      # consecutive 16-byte pieces) against the wide and integer paths (a lane reads a 32-64 byte chunk)
      python3 bench/torch_copy.py 2>&1 | tail -n 1
      for nk in 14336x4096 28672x4096; do
        for v in sg_r4u4 sg_r2u8 sgw_r4 sgq_r4 sgq_r8; do
          WGML_FORCE=matvec=$v $B/wgml bench matvec --nk $nk --dtype f16,q8_0,q4_K,q6_K --json 2>&1 |
            python3 -c "import json,sys; d=json.load(sys.stdin); print('$nk'.ljust(11), '$v'.ljust(9), ' '.join('%s %.0f' % (r['dtype'], r['gb_s']) for r in d['results']), 'GB/s')" 2>&1 | tail -n 1
        done
      done ;;
    mvfixed) # a product's fixed cost against its bytes: 32 products back to back at 1/4 .. 4 x
      # 14336 rows; q4_K on the integer path with and without its quantising pass (WGML_SKIP_KERNELS:
      # time right, results wrong), f16 on the unit path (one dispatch a product)
      for n in 3584 7168 14336 28672 57344; do
        echo "n $n: sgq_r4 q4_K $(mvrow ${n}x4096 q4_K WGML_FORCE=matvec=sgq_r4)"
        echo "n $n: sgq_r4 q4_K no xquant $(mvrow ${n}x4096 q4_K WGML_FORCE=matvec=sgq_r4 WGML_SKIP_KERNELS=xquant)"
        echo "n $n: sgq_r4 q8_0 $(mvrow ${n}x4096 q8_0 WGML_FORCE=matvec=sgq_r4)"
        echo "n $n: sg_r4u4 f16 $(mvrow ${n}x4096 f16 WGML_FORCE=matvec=sg_r4u4)"
      done ;;
    mvlat) # a small product's latency by workgroup shape: q4_K, integer path, quantising pass dropped
      for n in 256 1024 3584 14336; do
        for v in sgq_r1 sgq_r2 sgq_r4 sgq_r8 sgq_r8t128 sgq_r4t128; do
          echo "n $n $v $(mvrow ${n}x4096 q4_K WGML_FORCE=matvec=$v WGML_SKIP_KERNELS=xquant)"
        done
        echo "n $n sg_r4u4 f16 $(mvrow ${n}x4096 f16 WGML_FORCE=matvec=sg_r4u4)"
      done ;;
    mvxs) # x quantised by each workgroup (sgx_*, matvec_xs.wgsl: no first pass) against the table's
      # integer path (sgq_*, with its pass): the 8B and 1B decoders' shapes, then tg128 forced
      for nk in 4096x4096 6144x4096 14336x4096 28672x4096 4096x14336 2048x2048 16384x2048; do
        for v in "" sgx_r1 sgx_r2 sgx_r4 sgx_r2t128; do
          echo "$nk ${v:-table} $(mvrow $nk q4_K ${v:+WGML_FORCE=matvec=$v}) | $(mvrow $nk q6_K ${v:+WGML_FORCE=matvec=$v})"
        done
      done
      wait_gen
      for m in 8b 1b; do
        echo "$m table: $(tg $m)"
        for v in sgx_r1 sgx_r2 sgx_r4; do echo "$m $v: $(tg $m WGML_FORCE=matvec=$v)"; done
      done ;;
    mvxs2) # sgx_r2 / sgx_r4 with their workgroups capped (WGML_MV_XS_WGS: each walks several row groups,
      # x quantised once) against the table on the large shapes; then the rule's tg128
      for nk in 14336x4096 28672x4096 4096x14336 128256x4096 128256x2048 16384x2048; do
        echo "$nk table $(mvrow $nk q4_K) | $(mvrow $nk q6_K)"
        for v in sgx_r2 sgx_r4; do for c in 264 528 1056 2112; do
          echo "$nk $v cap $c $(mvrow $nk q4_K WGML_FORCE=matvec=$v WGML_MV_XS_WGS=$c) | $(mvrow $nk q6_K WGML_FORCE=matvec=$v WGML_MV_XS_WGS=$c)"
        done; done
      done
      wait_gen
      for m in 8b 1b; do
        echo "$m table: $(tg $m)"
        for c in 528 1056; do echo "$m sgx_r2 cap $c: $(tg $m WGML_FORCE=matvec=sgx_r2 WGML_MV_XS_WGS=$c)"; done
        for c in 528 1056; do echo "$m sgx_r4 cap $c: $(tg $m WGML_FORCE=matvec=sgx_r4 WGML_MV_XS_WGS=$c)"; done
      done ;;
    mvf16) # float weights (f16, bf16, f32): the table's wide path against the unit path (lanes read
      # consecutive 16-byte pieces: 0.76 of copy against 0.57 at 14336 x 4096 f16, call 3) by shape
      for nk in 2048x2048 4096x4096 6144x4096 14336x4096 28672x4096 4096x14336 128256x2048; do
        for v in "" sg_r4u4 sg_r2u8 sg_r4 sg_r1; do
          echo "$nk ${v:-table} $(mvrow $nk f16 ${v:+WGML_FORCE=matvec=$v}) | $(mvrow $nk bf16 ${v:+WGML_FORCE=matvec=$v}) | $(mvrow $nk f32 ${v:+WGML_FORCE=matvec=$v})"
        done
      done ;;
    f16llm) # an f16-weight 1B (random weights): tg128 with the table (the unit path for float weights)
      # against the wide path forced, and the greedy text of each
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/gguf-*.whl 2>&1 | tail -n 2
      mkdir -p /tmp/models
      PYTHONPATH=/tmp/site python3 bench/peers/gen_gguf.py /tmp/models/llama-1b-f16.gguf 1b f16
      for v in "" sgw_r4 sgw_r2; do
        echo "1b f16 ${v:-table}: $(env ${v:+WGML_FORCE=matvec=$v} $B/wgml bench llm -m /tmp/models/llama-1b-f16.gguf -p 16 -n 128 -r 3 2>&1 | grep tg128 | cut -d'|' -f6,7)" 
        env ${v:+WGML_FORCE=matvec=$v} $B/wgml generate -m /tmp/models/llama-1b-f16.gguf -p "w1 w2 w3" -n 48 --temp 0 \
          2>/dev/null | md5sum | sed "s|-|greedy text|"
      done ;;
    attngraph) # decode attention: single synced calls, 16 eager calls a sync, and the 16 as one replayed graph
      python3 bench/torch_copy.py 2>&1 | tail -n 1
      for v in "" splitkv dsg_np; do
        echo "-- attn ${v:-table}"; env ${v:+WGML_FORCE=attn=$v} $B/wgml bench attn --decode 2>&1 | tail -n 9
      done ;;
    glupair) # the glu written by the gate|up product itself (LINEAR_GLU, XS_GLU) against
      # WGML_GRAPH_FUSE=noglupair (the product, then the glu), tg128 alternating; then the greedy text
      wait_gen
      for m in 8b 1b; do
        for r in 1 2; do echo "$m fused: $(tg $m)  noglupair: $(tg $m WGML_GRAPH_FUSE=noglupair)"; done
        for v in "" "WGML_GRAPH_FUSE=noglupair" "WGML_FORCE=matvec=sgq_r4"; do
          env $v $B/wgml generate -m /tmp/models/llama-$m-q4k.gguf -p "The quick brown fox" -n 48 --temp 0 \
            2>/dev/null | md5sum | sed "s|-|$m ${v:-default} greedy text|"
        done
      done ;;
    fa) # the register-tiled prefill attention (fa64 / fa32) against the t* tiles, next to torch SDPA;
      # test_op_attention natively and without f16 (the table takes fa for the prefill cases there)
      tmodes "native nof16 fold window" test_op_attention
      for v in ${FAVARS:-"" attn=fa64k32 attn=fa32 attn=t64 "" attn=fa64k32}; do
        [ "$v" = table ] && v=""
        echo "-- ${v:-table} ${FAENV:-}: $(env ${FAENV:-} WGML_FORCE=$v $B/wgml bench attn --skv 4096 --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%s %s: %.2f ms %.2f TFLOP/s;' % (r['kind'], r['dtype'], r['median_ms'], r['tflop_s']) for r in d['results']))")"
      done
      WGML_PROFILE=1 $B/wgml bench attn --skv 4096 2>&1 | grep -E 'attn|total' | head -n 6
      python3 bench/torch_attn.py 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('torch:', ' '.join('%s %s %d: %.3f ms %s;' % (r['kind'], r['dtype'], r['skv'], r['median_ms'], r.get('tflop_s', r.get('gb_s'))) for r in d['results']))" ;;
    fapp) # prompt processing with the register-tiled prefill attention (the table) against the old t64 tile
      wait_gen
      for m in 1b 8b; do
        for v in "" attn=t64 ""; do
          echo "$m ${v:-table}: $(WGML_FORCE=$v $B/wgml bench llm -m /tmp/models/llama-$m-q4k.gguf -p 512 -n 16 -r 2 2>&1 | grep pp512 | cut -d'|' -f6,7)"
        done
      done ;;
    sass) # the NVIDIA driver's disk caches of the issue-9 kernels, one fresh cache a workload, back in
      # logs.tgz as cache-<workload>: `bench/sass.py cache-gemm out` here gives each kernel's SASS and
      # registers, local memory, instruction mix (SASSX="name:wgml args" adds workloads)
      nvd=$(command -v nvdisasm || ls /usr/local/cuda*/bin/nvdisasm 2>/dev/null | head -n 1)
      for w in "gemm:bench gemm" "attn:bench attn --decode --skv 8192" "mv:bench matvec --nk 14336x4096 --dtype q4_K" \
               ${SASSX:+"$SASSX"}; do
        n=${w%%:*}; rm -rf /tmp/sass-$n
        WGML_CACHE_DIR=/tmp/sass-$n $B/wgml ${w#*:} > $OUTDIR/sass-$n.txt 2>&1
        echo "-- $n: $(tail -n 2 $OUTDIR/sass-$n.txt | tr '\n' ' ')"
        # the caches come back (bench/sass.py needs zstd, which the GPU image lacks: run it here)
        [ $(du -sm /tmp/sass-$n | cut -f1) -lt 16 ] && cp -r /tmp/sass-$n $OUTDIR/cache-$n
        command -v zstd > /dev/null && python3 bench/sass.py /tmp/sass-$n $OUTDIR/sass/$n "$nvd" 2>&1 | cut -c1-400
      done ;;
    gemmx) # (2026-11-28) t128 knobs: cuBLAS SGEMM (TF32 off) first, then bench gemm's rows GXROWS (default 0,1:
      # f32 4096^3, 8192^3) for each "name:ENV=..+ENV=.." of GXCFG, two rounds alternating; the driver caches of GXSASS's
      # configs back as cache-gx-<name> (bench/sass.py here)
      python3 bench/torch_gemm.py > $OUTDIR/torch_gemm.json 2> $OUTDIR/torch_gemm.err
      python3 -c "import json; d=json.load(open('$OUTDIR/torch_gemm.json')); r=d if isinstance(d, list) else d.get('results', d.get('gemm', [])); print('torch:', ' '.join('%s %dx%dx%d %s %.2f;' % (x['op'], x['m'], x['n'], x['k'], x['dtype'], x['tflops']) for x in r[:3]))" 2>&1 | cut -c1-300
      for r in 1 2; do for c in ${GXCFG:-base:}; do
        echo "-- ${c%%:*} r$r: $(env $(echo ${c#*:} | tr + ' ') WGML_GEMM_ROWS=${GXROWS:-0,1} $B/wgml bench gemm 2>&1 | grep -E '^(matmul|linear)' | awk '{printf "%s %s %s %s %s; ", $2, $3, $4, $6, $8}')"
      done; done
      for c in ${GXSASS:-}; do
        n=${c%%:*}; rm -rf /tmp/sass-gx-$n
        env $(echo ${c#*:} | tr + ' ') WGML_CACHE_DIR=/tmp/sass-gx-$n WGML_GEMM_ROWS=0 $B/wgml bench gemm > /dev/null 2>&1
        [ $(du -sm /tmp/sass-gx-$n | cut -f1) -lt 16 ] && cp -r /tmp/sass-gx-$n $OUTDIR/cache-gx-$n
      done ;;
    sassw) # (2026-11-28 (2)) the driver caches of SASSW's workloads ("name:wgml args;name:args"), back as cache-<name>
      IFS=';' read -ra ws <<< "${SASSW:-fa:bench attn --skv 4096}"
      for w in "${ws[@]}"; do
        n=${w%%:*}; rm -rf /tmp/sass-$n
        WGML_CACHE_DIR=/tmp/sass-$n $B/wgml ${w#*:} > $OUTDIR/sass-$n.txt 2>&1
        echo "-- $n: $(tail -n 2 $OUTDIR/sass-$n.txt | tr '\n' ' ')"
        [ $(du -sm /tmp/sass-$n | cut -f1) -lt 16 ] && cp -r /tmp/sass-$n $OUTDIR/cache-$n
      done ;;
    fab) # (2026-11-28 (2)) prefill attention at 4096 keys under each "name:ENV=..+ENV=.." of FACFG, two rounds, then torch SDPA
      for r in 1 2; do for c in ${FACFG:-base:}; do
        echo "-- ${c%%:*} r$r: $(env $(echo ${c#*:} | tr + ' ') $B/wgml bench attn --skv 4096 --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%s %s: %.2f ms %.2f TFLOP/s;' % (r['kind'], r['dtype'], r['median_ms'], r['tflop_s']) for r in d['results']))")"
      done; done
      python3 bench/torch_attn.py 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('torch:', ' '.join('%s %s %d: %.3f ms %s;' % (r['kind'], r['dtype'], r['skv'], r['median_ms'], r.get('tflop_s', r.get('gb_s'))) for r in d['results']))" ;;
    moecfg) # (2026-11-28 (2)) bench moe's grouped rows under each "name:ENV=..+ENV=.." of MOECFG, two rounds
      for r in 1 2; do for c in ${MOECFG:-base:}; do
        echo "-- ${c%%:*} r$r: $(env $(echo ${c#*:} | tr + ' ') $B/wgml bench moe 2>&1 | grep grouped | awk '{printf "%s %s %s %s; ", $1, $2, $3, $6}')"
      done; done ;;
    ppcfg) # (2026-11-28 (2)) pp512 of the generated GGUFs (llmgen first) under each "name:ENV=..+ENV=.." of PPCFG,
      # two rounds alternating, 8B then 1B
      wait_gen
      for r in 1 2; do for c in ${PPCFG:-base:}; do for m in 8b 1b; do
        echo "-- ${c%%:*} r$r $m: $(env $(echo ${c#*:} | tr + ' ') $B/wgml bench llm -m /tmp/models/llama-$m-q4k.gguf -p 512 -n 1 -r 2 2>&1 | grep -E pp512 | cut -d'|' -f5,6 | tr '\n' ' ')"
      done; done; done ;;
    tnat) # (2026-11-28 (2)) the test programs of TNAT natively, each under every "ENV=..+ENV=.." of TENV (default: none)
      for t in ${TNAT:-test_op_matmul}; do for e in ${TENV:-WGML_NONE=1}; do
        echo "-- $t $e: $(env $(echo $e | tr + ' ') $B/tests/$t > $OUTDIR/$t.$(echo $e | tr '=+/' '___').log 2>&1; echo rc $?) $(grep -E 'passed|FAIL' $OUTDIR/$t.$(echo $e | tr '=+/' '___').log | tail -n 3 | tr '\n' ' ')"
      done; done ;;
    gemmrow) # (2026-11-28) bench gemm's row GXROW (default 14) under each WGML_GEMM_FAST of GXFAST (default: unset 0 1),
      # two rounds, with the compiled gemm kernels' WGSL hashed (is the same WGSL as fast as itself?)
      for r in 1 2; do for f in ${GXFAST:-u 0 1}; do
        rm -rf /tmp/dk-$f; mkdir -p /tmp/dk-$f
        v=$([ $f = u ] && echo "" || echo $f)
        t=$(WGML_GEMM_FAST=$v WGML_DUMP_KERNELS=/tmp/dk-$f WGML_GEMM_ROWS=${GXROW:-14} $B/wgml bench gemm 2>&1 | grep -E '^(matmul|linear)' | awk '{printf "%s %s %s %s", $2, $3, $4, $6}')
        echo "-- FAST=$f r$r: $t | $(for k in /tmp/dk-$f/gemm*; do echo "$(grep -c a_vecf "$k") $(md5sum < "$k" | cut -c1-8)"; done | tr '\n' ' ')"
      done; done ;;
    ppab) # (2026-11-28) pp512 of the generated GGUFs (llmgen first): the previous build (.devbuild_old) against this one, two rounds
      llmab "-p 512 -n 1 -r 2" pp512 ;;
    greedyab) # (2026-11-28) the greedy text (md5) of the previous build (.devbuild_old) and this one, both GGUFs (llmgen first)
      wait_gen
      for m in 1b 8b; do greedy $m .devbuild_old/wgml; greedy $m $B/wgml; done
      echo "sample: $($B/wgml generate -m /tmp/models/llama-1b-q4k.gguf -p 'The capital of France is' -n 8 --temp 0 2>&1 | tail -c 300)" ;;
    ku) # the k-step unroll (gemm.wgsl KU8, the GPUs' default) against others (KUS, default 1 8 4 8 1; KULLM for pp512):
      # bench gemm alternating (cuBLAS in the same call), pp512 of the generated GGUFs (llmgen first), the
      # decode attention against the previous build's (.devbuild_old), test_op_matmul / test_op_attention
      python3 bench/torch_gemm.py > $OUTDIR/torch_gemm.json 2> $OUTDIR/torch_gemm.err
      python3 -c "import json; d=json.load(open('$OUTDIR/torch_gemm.json')); r=d if isinstance(d, list) else d.get('results', d.get('gemm', [])); print('torch:', ' '.join('%s %dx%dx%d %s %.2f;' % (x['op'], x['m'], x['n'], x['k'], x['dtype'], x['tflops']) for x in r[:4]))" 2>&1 | cut -c1-300
      for ku in ${KUS:-1 8 4 8 1}; do
        WGML_GEMM_KU=$ku $B/wgml bench gemm > $OUTDIR/gemm.ku$ku.txt 2>&1
        echo "-- KU$ku: $(grep -E '^(matmul|linear)' $OUTDIR/gemm.ku$ku.txt | awk '{printf "%s %s %s %s; ", $2, $3, $4, $6}')"
      done
      wait_gen
      for r in 1 2; do for ku in ${KULLM:-8 1}; do for m in 8b 1b; do
        echo "pp512 $m KU$ku: $(WGML_GEMM_KU=$ku $B/wgml bench llm -m /tmp/models/llama-$m-q4k.gguf -p 512 -n 1 -r 2 2>&1 | grep pp512 | cut -d'|' -f6,7)"
      done; done; done
      for b in .devbuild_old $B; do
        [ -x $b/wgml ] || continue
        echo "-- attn decode $b: $($b/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('skv %d: graph %.1f us (%.0f GB/s), batch %.1f us;' % (r['skv'], r['graph_us'], r['graph_gb_s'], r['batch_us']) for r in d['results']))")"
      done
      for t in test_op_matmul test_op_attention; do
        [ -x $B/tests/$t ] && echo "$t: $($B/tests/$t 2>&1 | grep -E 'passed|check failed' | head -n 4 | tr '\n' ' ')"
      done ;;
    deqab) # A/B of the q4_K -> f16 dequantiser (Q4K_WIDE, 32 elements a thread) against the previous build
      # (.devbuild_old): its GPU time inside an 8B pp512 (WGML_PROFILE), pp512 of both GGUFs (llmgen first), and
      # test_op_quant / test_op_indexing_quant / test_op_matmul natively, without f16 and in 64 KiB windows (DEQTESTS=
      # with nothing after it skips them)
      [ -n "${DEQTESTS-1}" ] && tmodes "native nof16 window" test_op_quant test_op_indexing_quant test_op_matmul
      wait_gen
      for b in .devbuild_old $B; do
        echo "-- $b profile:"; WGML_PROFILE=1 $b/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 512 -n 1 -r 1 2>&1 | grep -E "dequant|gemm|  total|pp512" | head -n 12
      done
      for b in .devbuild_old $B; do
        echo "-- $b bench gemm (q4_K / q6_K linears in f16):"; WGML_PROFILE=1 $b/wgml bench gemm 2>&1 | grep -E "q4_K|q6_K|dequant"
      done
      llmab "-p 512 -n 1 -r 3" pp512 ;;
    faab) # A/B of the previous build (.devbuild_old) and this one: prefill attention 4096 causal (TFLOP/s, torch
      # SDPA in the same call), decode attention (graph), pp512 / tg128 of the generated GGUFs (llmgen first);
      # test_op_attention natively and without f16
      python3 bench/torch_attn.py 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('torch:', ' '.join('%s %s %d: %.3f ms %s;' % (r['kind'], r['dtype'], r['skv'], r['median_ms'], r.get('tflop_s', r.get('gb_s'))) for r in d['results']))"
      for r in 1 2; do for b in .devbuild_old $B; do
        [ -x $b/wgml ] || continue
        echo "-- $b prefill: $($b/wgml bench attn --skv 4096 --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%s %s: %.2f ms %.2f TFLOP/s;' % (r['kind'], r['dtype'], r['median_ms'], r['tflop_s']) for r in d['results']))")"
        echo "-- $b decode: $($b/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('skv %d: graph %.1f us;' % (r['skv'], r['graph_us']) for r in d['results']))")"
      done; done
      llmab "-p 512 -n 128 -r 2" 'pp512|tg128'
      tmodes "native nof16" test_op_attention ;;
    h128ab) # h128 (the f16 8x8 tile in two passes) against h64: bench gemm's f16-arithmetic rows forced each
      # way (two rounds), pp512 with h128 forced against the table (llmgen first), test_op_matmul; h128's
      # driver cache back as cache-h128 (its k loop is written out only with WGML_GEMM_KU set)
      for r in 1 2; do for v in h64 h128; do
        echo "-- $v: $(WGML_FORCE=gemm=$v $B/wgml bench gemm 2>&1 | grep -E '^(matmul|linear)' | awk '$4 == "f16" {printf "%s %s %s; ", $2, $3, $6}')"
      done; done
      rm -rf /tmp/sass-h128; WGML_CACHE_DIR=/tmp/sass-h128 WGML_FORCE=gemm=h128 $B/wgml bench gemm --quick > /dev/null 2>&1
      cp -r /tmp/sass-h128 $OUTDIR/cache-h128
      wait_gen
      for r in 1 2; do for f in "" gemm=h128; do for m in 8b 1b; do
        echo "pp512 $m ${f:-table}: $(WGML_FORCE=$f $B/wgml bench llm -m /tmp/models/llama-$m-q4k.gguf -p 512 -n 1 -r 2 2>&1 | grep pp512 | cut -d'|' -f6)"
      done; done; done
      echo "test_op_matmul: $($B/tests/test_op_matmul 2>&1 | grep -E 'passed|check failed' | head -n 4 | tr '\n' ' ')" ;;
    mvab) # A/B of the previous build (.devbuild_old) and this one on the decode mat-vecs: bench matvec (graph
      # replay, 32 x [14336, 4096], every dtype), tg128 of the generated GGUFs (llmgen first), two rounds
      # alternating; test_op_matvec and test_llm_graph natively and without f16
      python3 bench/torch_copy.py 2>&1 | tail -n 1
      for r in 1 2; do for b in .devbuild_old $B; do
        echo "-- $b: $($b/wgml bench matvec 2>&1 | grep -E '^(q4_0|q8_0|q4_K|q6_K|f16) ' | awk '{printf "%s %s us; ", $1, $2}')"
      done; done
      llmab "-p 16 -n 128 -r 3" tg128
      tmodes "native nof16" test_op_matvec test_llm_graph ;;
    h16) # f16 arithmetic GEMM (h128/h64, WGML_PREC_F16) against f32 and cuBLAS (gemm.json, torch_gemm.json
      # and the compare table, as mm), each of H16FORCE's variants forced (default h128 h64: the f16 rows
      # of 4096^3 and the linears), test_op_matmul natively and without f16, then pp512 of the generated
      # GGUFs (llmgen first): the table, each of H16LLM (default WGML_FORCE=gemm=h64) and --prefill-f32,
      # alternating, two rounds
      $B/wgml bench gemm --json > $OUTDIR/gemm.json 2> $OUTDIR/gemm.err; tail -n 3 $OUTDIR/gemm.err
      python3 bench/torch_gemm.py > $OUTDIR/torch_gemm.json 2> $OUTDIR/torch_gemm.err
      python3 bench/compare_mm.py $OUTDIR 2>&1 | sed -n '/GEMM/,/quantised linear rows/p'
      for v in ${H16FORCE:-gemm=h128 gemm=h64}; do
        echo "-- forced $v"; WGML_FORCE=$v $B/wgml bench gemm 2>&1 | grep -E "4096x4096x4096|512x14336x4096" | grep " f16 "
      done
      for m in native nof16; do
        unset WGML_DISABLE; [ $m = nof16 ] && export WGML_DISABLE=f16
        echo "--- test_op_matmul ($m): $($B/tests/test_op_matmul 2>&1 | tee $OUTDIR/mm.$m.log | grep -E 'passed|check failed' | head -n 6 | tr '\n' ' ')"
      done
      unset WGML_DISABLE
      wait_gen
      for r in 1 2; do
        for m in 1b 8b; do
          for f in table ${H16LLM:-WGML_FORCE=gemm=h64} --prefill-f32; do
            a=; e=; [ $f = --prefill-f32 ] && a=$f; [ $f != table ] && [ -z "$a" ] && e=$f
            echo "$m $f #$r: $(env $e $B/wgml bench llm -m /tmp/models/llama-$m-q4k.gguf -p 512 -n 16 -r 3 $a 2>&1 | grep -E 'pp512' | cut -d'|' -f6,7)"
          done
        done
      done ;;
    qtests) # the carried test programs (bench/devbuild.sh), natively
      for t in $B/tests/test_*; do
        [ -x "$t" ] && echo "$(basename $t): $($t 2>&1 | tee $OUTDIR/$(basename $t).log | grep -E 'passed|check failed' | head -n 4 | tr '\n' ' ')"
      done ;;
    mvfloat) # the integer mat-vec path (x quantised by a first pass) against the wide float path (no pass) by
      # product size: the decoders' q4_K shapes (graph replay), then tg128 from an empty cache with
      # WGML_MV_FLOAT_BELOW (products of at most that many million weights on the float path), 8B then 1B
      for nk in 6144x4096 4096x4096 4096x14336 3072x2048 2048x2048 2048x8192; do
        for v in "" sgw_r4 sgw_r2 sgq_r2 sgq_r1; do
          echo "$nk ${v:-table}: $(mvrow $nk q4_K ${v:+WGML_FORCE=matvec=$v})"
        done
      done
      wait_gen
      for m in 8b 1b; do
        for fb in 0 17 26 60 200 0; do
          echo "-- $m float below ${fb}M: $(tg $m WGML_MV_FLOAT_BELOW=$fb)"
        done
        for sp in 1000 5000 20000; do
          echo "-- $m spin ${sp}: $(tg $m WGML_SPIN_US=$sp)"
        done
      done ;;
    minchunk) # dsg's fewest keys a chunk (WGML_ATTN_MINCHUNK; 32 the default), 8B tg128 at KV 512-640
      wait_gen
      for rep in 1 2; do
        for mc in 0 16 8; do
          echo "-- minchunk ${mc}: $(WGML_ATTN_MINCHUNK=$mc $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 512 -n 128 -r 2 2>&1 | grep tg128 | cut -d'|' -f6,7)"
        done
      done ;;
    llmfuse) # the 8B decode with q|k|v and gate|up kept apart, for the fusion's share
      $B/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 512 -n 128 -r 3 --no-fuse 2>&1 | tail -n 3 ;;
    llmprof) # where the GPU time goes: kernels by total time (pp512's GEMMs, then tg32 at KV ~550)
      wait_gen
      for m in /tmp/models/llama-8b-q4k.gguf /tmp/models/llama-1b-q4k.gguf; do
        [ -f $m ] || continue
        WGML_PROFILE=1 $B/wgml bench llm -m $m -p 512 -n 32 -r 1 2>&1 | grep -v "^|" | head -n 30
      done ;;
    gpuspan) # GPU time per replayed dispatch from timestamps (is replay GPU- or host-bound?)
      WGML_PROFILE=1 $B/wgml bench graph 2>&1 | grep -E "chain|span|total|unary|block" | head -n 30 ;;
    spin) # the callback-based spin wait: bench ops must stay <= the copy roofline
      WGML_SPIN_US=1000 $B/wgml bench ops 256 2>&1 | tail -n 8
      WGML_SPIN_US=1000 $B/wgml bench dispatch 10000 | tail -n 4
      WGML_SPIN_US=1000 $B/wgml bench graph --json ;;
    graph) # replay vs eager, and the PyTorch peer in the same run (the decoder block: section decoder)
      $B/wgml bench graph chain wide block
      $B/wgml bench graph chain wide block --json
      python3 bench/torch_graph.py 2>&1 | tail -n 4 ;;
    qsm) # dsg's q and rows read from workgroup memory each tile (QSM, the default) against held in registers
      # (WGML_ATTN_QREG=1): decode attention (graph replay) alternating, two rounds; keys a tile 1 / 4 with QSM;
      # the decoder block at KV 4096; the NVIDIA caches of both (cache-q0 / cache-q1: bench/sass.py here);
      # test_op_attention natively, without f16 and in 64 KiB windows
      for r in 1 2; do for q in 1 0; do
        echo "-- QREG=$q: $(WGML_ATTN_QREG=$q $B/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('skv %d: graph %.1f us (%.0f GB/s), batch %.1f us;' % (r['skv'], r['graph_us'], r['graph_gb_s'], r['batch_us']) for r in d['results']))")"
      done; done
      for kpt in 1 4; do
        echo "-- QSM KPT=$kpt: $(WGML_ATTN_KPT=$kpt $B/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('skv %d: graph %.1f us;' % (r['skv'], r['graph_us']) for r in d['results']))")"
      done
      for q in 1 0 1 0; do echo "-- decoder QREG=$q: $(WGML_ATTN_QREG=$q $B/wgml bench graph decoder 2>&1 | grep -iE 'decode|bound' | head -n 2 | tr '\n' ' ')"; done
      for q in 1 0; do
        rm -rf /tmp/sass-q$q
        WGML_CACHE_DIR=/tmp/sass-q$q WGML_ATTN_QREG=$q $B/wgml bench attn --decode --skv 8192 > /dev/null 2>&1
        cp -r /tmp/sass-q$q $OUTDIR/cache-q$q
      done
      tmodes "native nof16 window" test_op_attention ;;
    dsgscan) # dsg's waves: chunks a row (the grid: 8 KV heads x chunks workgroups) for dsg and dsg_np, q in
      # registers (QREG=1) and from workgroup memory (QREG=0); then the NVIDIA caches of each (cache-VAR-qN)
      for v in dsg dsg_np; do for q in 1 0; do for c in ${DSGC:-32 40 48 64}; do
        echo "-- $v QREG=$q CHUNKS=$c: $(WGML_FORCE=attn=$v WGML_ATTN_QREG=$q WGML_ATTN_CHUNKS=$c $B/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%d: %.1f;' % (r['skv'], r['graph_us']) for r in d['results']))")"
      done; done; done
      for v in dsg dsg_np; do for q in 1 0; do
        rm -rf /tmp/sass-x; WGML_CACHE_DIR=/tmp/sass-x WGML_FORCE=attn=$v WGML_ATTN_QREG=$q $B/wgml bench attn --decode --skv 8192 > /dev/null 2>&1
        cp -r /tmp/sass-x $OUTDIR/cache-$v-q$q
      done; done ;;
    dsgt) # dsg's chunks a row from the target of 32K threads (256 workgroups) against the old 64K (CHUNKS=64 for
      # these shapes), and q from workgroup memory (QSM) against registers (QREG=1): decode attention (graph) and
      # the decoder block at KV 4096 and 16384, three rounds alternating
      for r in 1 2 3; do for e in "X=1" "WGML_ATTN_CHUNKS=64" "WGML_ATTN_QREG=1"; do
        echo "-- $e: $(env $e $B/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%d: %.1f;' % (r['skv'], r['graph_us']) for r in d['results']))") $(for kv in 4096 16384; do env $e $B/wgml bench graph decoder --kv $kv 2>/dev/null | grep -oE 'KV [0-9]+|back to back [0-9.]+' | tr '\n' ' '; done)"
      done; done ;;
    dsgc) # dsg's chunks a row forced (CHUNKS, default 48 64 96 128): decode attention (graph) and the decoder block at
      # KV 4096 and 16384, two rounds
      for r in 1 2; do for c in ${CHUNKS:-48 64 96 128}; do
        echo "-- CHUNKS=$c: $(WGML_ATTN_CHUNKS=$c $B/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%d: %.1f;' % (r['skv'], r['graph_us']) for r in d['results']))") $(for kv in 4096 16384; do WGML_ATTN_CHUNKS=$c $B/wgml bench graph decoder --kv $kv 2>/dev/null | grep -oE 'KV [0-9]+|back to back [0-9.]+ ' | tr '\n' ' '; done)"
      done; done ;;
    dsgab) # A/B of the previous build (.devbuild_old) and this one: decode attention (graph) and the decoder block at
      # KV 4096 and 16384, two rounds alternating; tg128 of the generated GGUFs (llmgen first) and at -d 4096 (8B);
      # test_op_attention, test_llm_graph and test_graph_prologue natively, without f16 and in 64 KiB windows
      for r in 1 2; do for b in .devbuild_old $B; do
        echo "-- $b: $($b/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%d: %.1f;' % (r['skv'], r['graph_us']) for r in d['results']))") $(for kv in 4096 16384; do $b/wgml bench graph decoder --kv $kv 2>/dev/null | grep -oE 'KV [0-9]+|back to back [0-9.]+' | tr '\n' ' '; done)"
      done; done
      tmodes "native nof16 window" test_op_attention test_llm_graph test_graph_prologue
      llmab "-p 16 -n 128 -r 3" tg128
      for b in .devbuild_old $B; do
        echo "$b 8b -d 4096: $($b/wgml bench llm -m /tmp/models/llama-8b-q4k.gguf -p 16 -n 128 -r 2 -d 4096 2>&1 | grep tg128 | cut -d'|' -f5,6 | tr '\n' ' ')"
      done
      rm -rf /tmp/sass-x; WGML_CACHE_DIR=/tmp/sass-x $B/wgml bench attn --decode --skv 8192 > /dev/null 2>&1
      cp -r /tmp/sass-x $OUTDIR/cache-dsg ;;
    dsgk) # dsg / dsg_np x keys a tile (1 2 4) at the table's chunks: decode attention (graph), two rounds
      for r in 1 2; do for v in dsg dsg_np; do for k in 1 2 4; do
        echo "-- $v KPT=$k: $(WGML_FORCE=attn=$v WGML_ATTN_KPT=$k $B/wgml bench attn --decode --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%d: %.1f;' % (r['skv'], r['graph_us']) for r in d['results']))") $(WGML_FORCE=attn=$v WGML_ATTN_KPT=$k $B/wgml bench graph decoder --kv 4096 2>/dev/null | grep -oE 'back to back [0-9.]+' | head -n 1)"
      done; done; done ;;
    qwen) # a Qwen2.5-1.5B-shaped random qwen2 GGUF (NEOX rope, q/k/v biases): tg128 with its q and k rows paired
      # (the default: the q|k|v product's rope epilogue) against WGML_LLM_NEOX_PAIRS=0, two rounds alternating
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/gguf-*.whl 2>&1 | tail -n 2
      mkdir -p /tmp/models
      PYTHONPATH=/tmp/site python3 bench/peers/gen_gguf.py /tmp/models/qwen2-1.5b-q4k.gguf qwen2-1.5b > $OUTDIR/qgen.log 2>&1
      tail -n 1 $OUTDIR/qgen.log
      for r in 1 2; do for e in "WGML_LLM_NEOX_PAIRS=0" "X=1"; do
        echo "$e: $(env $e $B/wgml bench llm -m /tmp/models/qwen2-1.5b-q4k.gguf -p 16 -n 128 -r 3 2>&1 | grep tg128 | cut -d'|' -f5,6)"
      done; done
      for e in "WGML_LLM_NEOX_PAIRS=0" "X=1"; do
        echo "$e greedy: $(env $e $B/wgml generate -m /tmp/models/qwen2-1.5b-q4k.gguf -p 'w1 w2 w3' -n 32 --temp 0 2>/dev/null | md5sum)"
      done
      for t in test_llm_graph test_graph_prologue; do echo "$t: $($B/tests/$t 2>&1 | tail -n 1)"; done ;;
    decoder) # issue 9: an 8B decoder block's decode step (q4_K) against the copy bound, KV 4096, 512, 16384
      for kv in "" "--kv 512" "--kv 16384"; do
        $B/wgml bench graph decoder $kv 2>> $OUTDIR/decoder.err
      done
      tail -n 3 $OUTDIR/decoder.err ;;
    variants)
      $B/wgml bench variants 256 ;;
    ops)
      $B/wgml bench ops 256 3 2>&1 | tee "$OUTDIR/bench_ops.txt"
      python3 bench/torch_ops.py 256 "$OUTDIR/bench_ops.txt" 2>&1 | tee "$OUTDIR/torch_ops.txt" ;;
  esac
  smi_stop "$s"
done
echo "=== end ($(clocks))"
