#!/usr/bin/env bash
# Run on the GPU machine (the device tool copies the working tree there):
#   bash scripts/gpu_run.sh [tests|fuzz|s79r|s79l|s79q|s79t|s78q|s78t|s77q|s77h|s77m|s76r|s76t|s76v|s76q|s76c|s76w|s75c|s75v|s75x|s75w|s74q|s74k|s74h|s73v|s73t|s73r|s71h|s71g|s71p|s71f|s70c|s70m|s70k|s70a|s69m|s69k|s67b|s67t|s67a|s66c|s66b|s66a|s65l|s65w|s65q|s65p|s65h|s64e|s64b|s64a|s63b|s63a|s62n|s62m|s62l|s62k|s62j|s62i|s62h|s62g|s62f|s62e|s62d|s62c|s62b|s62a|s61m|s60e|s60d|s60c|s60b|s60a|s59e|s59d|s59c|s59b|s59a|s57a|s57b|s56|s56a|s56b|s56c|s56d|s54h|s54a|s54b|s54c|s54d|s53g|s53f|s53e|s53t|s53d|s53w|s53c|s53a|s52g|s52e|s52d|s52c|s52b|s52a|s51c|s51a|s51|s50a|s50b|s49c|s49b|s49a|s48d|s48c|s48a|s45a|s46a|s47a|s47b|s46t|s45b|s44b|s44a|s43a|s42f|s42e|s42d|s42c|s42b|s42a|s41k|s41j|s41i|s41h|s41g|s41f|s41e|s41d|s41c|s41b|s41a|s40f|s40e|s40d|s40c|s40a|s39i|s39h|s39g|s39f|s39e|s39d|s39c|s39a|s39b|s38n|s38a|s38b|s38c|s38d|s38e|s38f|s38g|s38h|s38i|s38j|s38k|gpu0|s37l|s37k|s37j|s37g|s37i|s37h|s37f|s37e|s37d|s37c|s36e|s36d|s36c|s36b|s36a|s35f|s35e|s35d|s35c|s35b|s35a|s34e|s34d|s34b|s34a|s33h|s33g|s33e|s33d|s33b|s33a|m1sum|m1tab|m1ab|m1fin|m1trim|onec|one3|one3b|onefin|span|spanb|spanf|spanv|span32|occ|occ2|occ3|gpu1|ids|cv|cv2|cvx|cv3|cvf|f3|f3r|f3w|f3m|f3z|p3|p3r|p3f|p3w|clk|wab|bdiff|place|skheat|sktime|mc|sk|sktr|sk2|skab|sktr3|w16k|wpdl2|wpdl|bal|w3x|xfin|xwp|xw8|x16|kh|kh3k|kh3f|kh3m|kh3w|ring8|rfinal|rcap|r4|r16|w28|sm1|sfinal|dec2b|l2pf|stage|one|lowbit|csplit|csplit2|ctrace|csweep|m1wide|m1ring|cfinal|xr|trace|xturn|xvar|xfinal|xwide|clus|pdl|pdlfin|tiles|bench|issue6|table|host|ring|sweep|deep|wg|wgsel|wg16|wgocc|wgsmall|tma|tmaocc|wide|widep|tma8|fold|bk256|bk256b|decm|dec3|dec8|bwg|w4a8|fp8wg|fp8b|b8tma|bfinal|runs|src|prof|final|decode|lean|bytes|bbench|bsweep|all] ...
# (host: the eager host overhead per M=1 call and its parts, scripts/gpu_host.py)
# Installs the project without touching the machine's packages, then runs the
# chosen parts; logs and JSON go to $OUT (or ./out), packed into $OUT/results.tgz when
# there are more than the 8 files the device tool brings back.
set -uo pipefail
export GPU_RUN_DEPTH=$(( ${GPU_RUN_DEPTH:-0} + 1 ))  # (parts that run other parts call this script again)
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export HUMMING_CACHE_DIR=${HUMMING_CACHE_DIR:-/tmp/humming-cache}
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1
# the other weight widths at M = 1: widths PREFIX SHAPES "W:G ..." (W the weight format, G its group size, 0 per
# channel): humming alone, the rows and the stream times echoed, the reports in $OUT/PREFIX-W-G
widths() {
  local w
  for w in $3; do
    timeout 60 humming bench --shapes "$2" --m 1 --weight "${w%%:*}" --group-size "${w##*:}" --methods humming \
      --repeats 3 --no-plot --no-jit --out "$OUT/$1-${w%%:*}-${w##*:}" 2>&1 | tee "$OUT/$1-${w%%:*}-${w##*:}.log" \
      | grep -E "^(== |1 )|stream "
  done
}
# the issue-6 int4 g128 rows at M = 1, 8, 16, 64 with cuBLAS: int4rows PREFIX (the report in $OUT/PREFIX-int4)
int4rows() {
  timeout 200 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,8,16,64 \
    --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
    --out "$OUT/$1-int4" 2>&1 | tee "$OUT/$1-int4.log" | grep -E "^(== |1 |8 |16 |64 )|stream "
}
# 28672x8192 at the same M launched plainly (HUMMING_PDL=0), humming alone: pdloff PREFIX
pdloff() {
  HUMMING_PDL=0 timeout 60 humming bench --shapes 28672x8192 --m 1,8,16,64 --weight int4 --group-size 128 \
    --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/$1-off" 2>&1 | tee "$OUT/$1-off.log" \
    | grep -E "^(== |1 |8 |16 |64 )|stream "
}
# part I (0 .. N-1) of the GPU tests, every N-th one in collection order, within S seconds: gpuslice I N S (the log
# in $OUT/gpu_slice$I-of-$N.log, its node ids beside it; the whole suite -- 889 tests in the sixty-eighth session --
# takes more than one device call)
gpuslice() {
  python3 -m pytest --collect-only -q -p no:cacheprovider -m gpu tests 2>/dev/null | grep '::' \
    | awk -v i="$1" -v n="$2" 'NR % n == i' >"$OUT/gpu_slice$1-of-$2.ids"
  local ids
  mapfile -t ids <"$OUT/gpu_slice$1-of-$2.ids"  # (one id a line: some hold spaces)
  timeout "$3" python3 -m pytest -q -p no:cacheprovider -m gpu "${ids[@]}" 2>&1 \
    | tee "$OUT/gpu_slice$1-of-$2.log" | grep -E "^(FAILED|ERROR)|passed|failed" | tail -12
  return "${PIPESTATUS[0]}"
}
# half H (0 or 1) of the GPU tests within S seconds: gpuhalf H S
gpuhalf() { gpuslice "$1" 2 "$2"; }
# this tree against the trees in TREES (old: old3/, `git archive <commit> | tar -x -C old3`; alt: alt/, a variant a
# part builds) through the bench, humming alone, alternated ROUNDS times, the rows matching PATTERN echoed:
# abbench PREFIX ROUNDS "new old [alt]" TIMEOUT PATTERN BENCH-ARGS... (the reports in $OUT/PREFIX-TREE-r<round>: "-r"
# since round 2 of alt wrote over alt2's files in s65r; a tree whose folder is missing is skipped)
abbench() {
  local prefix=$1 rounds=$2 trees=$3 limit=$4 pattern=$5 r v pp
  shift 5
  [ -d old3/backends/nvidia ] && rm -rf old3/humming_nvidia && cp -r old3/backends/nvidia old3/humming_nvidia
  for r in $(seq "$rounds"); do
    for v in $trees; do
      pp=; [ "$v" = old ] && pp=$PWD/old3; [ "$v" = alt ] && pp=$PWD/alt; [ "$v" = alt2 ] && pp=$PWD/alt2
      [ "$v" = alt3 ] && pp=$PWD/alt3
      [ -n "$pp" ] && [ ! -d "$pp" ] && continue
      PYTHONPATH=$pp timeout "$limit" humming bench "$@" --methods humming --repeats 3 --no-plot --no-jit \
        --out "$OUT/$prefix-$v-r$r" 2>&1 | tee "$OUT/$prefix-$v-r$r.log" | grep -E "$pattern"
    done
  done
}
# gputests PREFIX TIMEOUT K-EXPRESSION: the GPU tests that match, their log in $OUT/PREFIX_tests.log, the last two
# lines echoed, a failure kept in rc
gputests() {
  timeout "$2" python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "$3" 2>&1 \
    | tee "$OUT/$1_tests.log" | tail -2
  rc=$((rc | PIPESTATUS[0]))
}
# envbench PREFIX ROUNDS "NAME=VAR=VALUE ..." TIMEOUT PATTERN BENCH-ARGS...: this tree through the bench under each
# environment (NAME=base: none), alternated ROUNDS times
envbench() {
  local prefix=$1 rounds=$2 variants=$3 limit=$4 pattern=$5 r v
  shift 5
  for r in $(seq "$rounds"); do
    for v in $variants; do
      echo "== $v (round $r)"
      env ${v#*=} timeout "$limit" humming bench "$@" --methods humming --repeats 3 --no-plot --no-jit \
        --out "$OUT/$prefix-${v%%=*}$r" 2>&1 | tee "$OUT/$prefix-${v%%=*}$r.log" | grep -E "$pattern"
    done
  done
}
# alt_after ANCHOR CODE [DIR]: DIR (default alt; abbench's "alt" and "alt2" trees) = this tree's backends/nvidia as
# DIR/humming_nvidia, with CODE inserted after the line ANCHOR (which must be in exactly one of the family's modules:
# gemm_mma_sync.py, mma_sync_kernel.py, mma_sync_pack.py, mma_sync_launch.py)
alt_after() {
  local dir=${3:-alt}
  rm -rf "$dir" && mkdir -p "$dir" && cp -r backends/nvidia "$dir/humming_nvidia"
  ANCHOR="$1" CODE="$2" DIR="$dir" python3 - <<'PY'
import os
import glob
a = os.environ["ANCHOR"] + "\n"
hits = [p for p in sorted(glob.glob(os.environ["DIR"] + "/humming_nvidia/*.py")) if a in open(p).read()]
assert len(hits) == 1, (a, hits)
s = open(hits[0]).read()
open(hits[0], "w").write(s.replace(a, a + os.environ["CODE"], 1))
PY
}
# probe_trees: alt/ (no activation tensor copies in the TMA tiles), alt2/ (no dequantization in the warpgroup
# tiles), alt3/ (neither) as copies of this tree's backends/nvidia, for timing probes only (wrong results)
probe_trees() {
  local K=humming_nvidia/include/humming/kernels/gemm_mma_sync.cuh d
  for d in alt alt2 alt3; do rm -rf "$d" && mkdir -p "$d" && cp -r backends/nvidia "$d/humming_nvidia"; done
  for d in alt alt3; do
    sed -i -e 's/tma::arrive_expect_tx(bar, KB \* 128 \* p.tma_rows \* CLUSTER + /tma::arrive_expect_tx(bar, /' \
      -e 's/for (int kb = 0; kb < KB; ++kb) tma::load_2d(base/if (0) for (int kb = 0; kb < KB; ++kb) tma::load_2d(base/' "$d/$K"
  done
  for d in alt2 alt3; do
    sed -i 's/for (int kt = 0; kt < 4; ++kt) dequant_tile(kt, w, af\[t\]\[kt\], sc\[kt\], aux\[kt\]);/for (int kt = 0; kt < 4; ++kt) for (int i = 0; i < 4; ++i) af[t][kt][i] = w[(kt * 4 + i) % WPL] ^ sc[kt][i \& 1];/' "$d/$K"
  done
  grep -c "if (0) for (int kb" alt/$K alt3/$K; grep -c "af\[t\]\[kt\]\[i\] = w" alt2/$K alt3/$K
}
rc=0
S61=4096x4096,3584x3584,2048x8192,3072x4096,1024x8192,4096x8192,2048x4096,4096x14336,4608x3584,5120x5120
for part in "${@:-all}"; do
  case "$part" in
    tiles) python3 scripts/gpu_tiles.py --quick --json "$OUT/tiles.json" 2>&1 | tee "$OUT/tiles.log"; rc=$((rc | PIPESTATUS[0])) ;;
    tests) python3 -m pytest -q -m gpu -x -p no:cacheprovider tests 2>&1 | tee "$OUT/gpu_tests.log" | tail -40; rc=$((rc | PIPESTATUS[0])) ;;
    bench) ext=(); [ -d .whl/humming-kernels ] && ext=(--external humming-kernels=.whl/humming-kernels)
           humming bench --preset llama3-8b --weight int4 --group-size 128 "${ext[@]}" --out "$OUT/bench" 2>&1 | tee "$OUT/bench.log"; rc=$((rc | PIPESTATUS[0])) ;;
    issue6)  # the dense-GEMM targets of issue 6: int4 g128 over the five shapes, 8/3/2-bit at M=1
           humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,16,64,256 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/bench-int4" 2>&1 | tee "$OUT/bench-int4.log" | tail -30; rc=$((rc | PIPESTATUS[0]))
           for w in int8:0 e4m3:0 int3:128 int2:128; do
             humming bench --shapes 8192x8192 --m 1 --weight "${w%%:*}" --group-size "${w##*:}" \
               --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/bench-${w%%:*}" 2>&1 \
               | tee "$OUT/bench-${w%%:*}.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           done ;;
    table) # the issue-6 table with batched decode (M = 4, 8) too, then 8/3/2-bit and per-channel int4 at M = 1 and 8
           humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,4,8,16,33,64,256 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/table-int4" 2>&1 | tee "$OUT/table-int4.log" | tail -45; rc=$((rc | PIPESTATUS[0]))
           for w in int8:0 e4m3:0 int3:128 int2:128 int4:0; do
             humming bench --shapes 8192x8192 --m 1,8 --weight "${w%%:*}" --group-size "${w##*:}" \
               --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/table-${w%%:*}-${w##*:}" 2>&1 \
               | tee "$OUT/table-${w%%:*}-${w##*:}.log" | tail -8; rc=$((rc | PIPESTATUS[0]))
           done ;;
    clus)  # TMA tiles in clusters along N (multicast activations): their GPU tests, then ranked against the
           # planner's tiles at M = 64 (the four large issue-6 shapes)
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "clusters" \
             2>&1 | tee "$OUT/clus_tests.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 240 python3 scripts/gpu_sweep.py "$@" 2>&1 | tee -a "$OUT/clus.log" | grep -v "^      " ; }
           sw --m 64 --groups m64c --rounds 3 --shapes 8192x8192,28672x8192,14336x4096,4096x14336 --json "$OUT/clus64.json" ;;
    pdl)   # programmatic dependent launch: the GPU tests it touches, then the issue-6 int4 rows with it (the
           # default on sm_90) and without it (HUMMING_PDL=0), same command otherwise
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "programmatic or cuda_graph or large_shapes or four_block or folded or wgmma_tma_clusters" \
             2>&1 | tee "$OUT/pdl_tests.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           for v in 1 0; do
             HUMMING_PDL=$v timeout 200 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 \
               --m 1,16,64 --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
               --out "$OUT/pdl$v-int4" 2>&1 | tee "$OUT/pdl$v-int4.log" | tail -22; rc=$((rc | PIPESTATUS[0]))
           done ;;
    pdlfin) # after PDL was limited to the decode tiles: the GPU tests it touches (the rings launch with it
           # from their second launch on), the issue-6 table, and its M=1 row without PDL
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "programmatic or cuda_graph or large_shapes or stream_tiles_rings or four_block" \
             2>&1 | tee "$OUT/pdlfin_tests.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           bash "$0" table; rc=$((rc | $?))
           HUMMING_PDL=0 timeout 200 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 \
             --m 1,4 --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/pdl0-m1" 2>&1 | tee "$OUT/pdl0-m1.log" | grep -E "^== |^1 |^4 " ;;
    trace) # where decode time goes: CTA timelines (scripts/gpu_trace.py) of the planner's kernels and the stream
           # kernel under graph replay, int4 g128 at M = 1, 16, 64 (PDL as planned, then M = 1 without it), then
           # the GPU tests of the kernels the trace field touches
           timeout 200 python3 scripts/gpu_trace.py --shapes 4096x4096,14336x4096,8192x8192,28672x8192 --m 1,8,16,64 \
             --json "$OUT/trace.json" 2>&1 | tee "$OUT/trace.log"; rc=$((rc | PIPESTATUS[0]))
           HUMMING_PDL=0 timeout 120 python3 scripts/gpu_trace.py --shapes 4096x4096,8192x8192 --m 1 \
             --json "$OUT/trace_nopdl.json" 2>&1 | tee "$OUT/trace_nopdl.log"; rc=$((rc | PIPESTATUS[0]))
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py tests/test_bench_stream.py -k \
             "programmatic or stream_tiles_rings or tma or stream_read" 2>&1 | tee "$OUT/trace_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0])) ;;
    xturn) # after the register rings load their activations turn by turn: the ring GPU tests, the M=1 timelines
           # (PDL on; 8192x8192 also off), the M=1 tile ranking, the issue-6 rows at M = 1 and 4
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "stream_tiles_rings or programmatic or steady_state or large_shapes or graph" 2>&1 \
             | tee "$OUT/xturn_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           timeout 120 python3 scripts/gpu_trace.py --shapes 4096x4096,14336x4096,4096x14336,8192x8192 --m 1 \
             --json "$OUT/xturn_trace.json" 2>&1 | tee "$OUT/xturn_trace.log" | grep -v "^    "
           HUMMING_PDL=0 timeout 60 python3 scripts/gpu_trace.py --shapes 8192x8192 --m 1 --no-stream 2>&1 \
             | tee -a "$OUT/xturn_trace.log" | grep "humming M"
           timeout 240 python3 scripts/gpu_sweep.py --m 1 --groups xturn --rounds 3 --json "$OUT/xturn_sweep.json" \
             > "$OUT/xturn_sweep.log" 2>&1; rc=$((rc | $?)); grep -v "^      " "$OUT/xturn_sweep.log" | tail -70
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,4 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/xturn-bench" 2>&1 | tee "$OUT/xturn_bench.log" | tail -16; rc=$((rc | PIPESTATUS[0])) ;;
    xvar)  # the register rings' M=1 tiles after the turn-by-turn activations: the planner's and two others,
           # timelines with PDL (commit 05d908d also built them through L2 only and two turns ahead: both slower)
           timeout 150 python3 scripts/gpu_trace.py --shapes 4096x4096,4096x14336,8192x8192,14336x4096 --m 1 --no-stream \
             --tile "Tile(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2)" --tile "Tile(8, 16, 512, 1, 1, 8, 8, stream=4, occupancy=2)" \
             2>&1 | tee -a "$OUT/xvar.log" | grep -A1 "humming M" | cut -c1-150 ;;
    xfinal) # after the planner took the turn-by-turn register rings for one token: the GPU tests of every path
           # that reaches them (weight formats, activation formats, byte operands, rings, graphs, PDL, modules),
           # then the issue-6 rows at M = 1 and 4 and the other widths at M = 1
           timeout 420 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py tests/test_nn.py \
             tests/test_bench_gpu.py -k "weight_formats or quantized_activations or group_and_fp4 or byte_operand or \
             stream_tiles or steady_state or large_shapes or graph or programmatic or quant_linear or checkpoints or \
             bad_inputs" 2>&1 | tee "$OUT/xfinal_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,4 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/xfinal-int4" 2>&1 | tee "$OUT/xfinal-int4.log" | grep -E "^(== |1 |4 )|stream "
           widths xfinal 8192x8192 "int8:0 e4m3:0 int3:128 int2:128 int4:0" ;;
    xr)    # the register rings against the warpgroup tiles at M=1 where the planner took warpgroup tiles before the
           # turn-by-turn activations (28672x8192 int4, int8/e4m3 per channel, int3), and deeper rings for int2
           T() { timeout 150 python3 scripts/gpu_trace.py "$@" 2>&1 | tee -a "$OUT/xr.log" | grep -v "^    Tile" | cut -c1-190; }
           T --shapes 28672x8192 --m 1 --tile "Tile(8,64,128,1,4,2,4,stream=4,occupancy=2)" \
             --tile "Tile(8,112,64,1,7,1,4,stream=4,occupancy=2)" --tile "Tile(8,32,256,1,2,4,4,stream=4,occupancy=2)" \
             --tile "Tile(8,96,128,1,6,2,4,stream=4,occupancy=1)"
           T --shapes 8192x8192,4096x14336 --m 1 --weight int2 --tile "Tile(8,32,512,1,2,8,8,stream=4,occupancy=1)" \
             --tile "Tile(8,32,256,1,2,4,6,stream=4,occupancy=2)"
           T --shapes 8192x8192 --m 1 --weight int3 --tile "Tile(8,32,512,1,2,8,4,stream=4,occupancy=1)" \
             --tile "Tile(8,32,512,1,2,8,6,stream=4,occupancy=1)"
           for w in int8 e4m3; do
             T --shapes 8192x8192 --m 1 --weight $w --group 0 --tile "Tile(8,32,512,1,2,8,4,stream=4,occupancy=2)" \
               --tile "Tile(8,32,256,1,2,4,4,stream=4,occupancy=2)" --tile "Tile(8,16,512,1,1,8,4,stream=4,occupancy=2)"
           done ;;
    csplit) # split-K slices as one cluster summed through distributed shared memory: the GPU tests of every path
           # that splits, then the issue-6 int4 rows at M = 1, 16, 64 with clusters and without (HUMMING_CLUSTER_SPLIT=0),
           # then the M=16 timelines
           timeout 300 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "clusters or large_shapes or programmatic or graph or warp_layouts or two_row_blocks or int8_wgmma" 2>&1 \
             | tee "$OUT/csplit_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           for c in 1 0; do
             HUMMING_CLUSTER_SPLIT=$c timeout 200 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 \
               --m 1,16,64 --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
               --out "$OUT/csplit-$c" 2>&1 | tee "$OUT/csplit-$c.log" | grep -E "^(== |1 |16 |64 )|stream "
           done
           timeout 100 python3 scripts/gpu_trace.py --shapes 8192x8192,28672x8192 --m 16,64 --no-stream 2>&1 \
             | tee "$OUT/csplit_trace.log" | cut -c1-230 ;;
    csplit2) # after the launcher asks the driver whether a launch's clusters are all resident at once: the cluster
           # counts per shape and M, the cluster tests, then the issue-6 int4 rows with clusters and without
           timeout 120 python3 scripts/gpu_clusters.py 2>&1 | tee "$OUT/clusters.log" | cut -c1-60,100-260
           timeout 200 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "clusters or large_shapes or programmatic" 2>&1 | tee "$OUT/csplit2_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           for c in 1 0; do
             HUMMING_CLUSTER_SPLIT=$c timeout 200 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 \
               --m 1,4,16,33,64 --weight int4 --group-size 128 --methods humming --repeats 3 --no-plot --no-jit \
               --out "$OUT/csplit2-$c" 2>&1 | tee "$OUT/csplit2-$c.log" | grep -E "^(== |[0-9]+ )|stream "
           done ;;
    ctrace) # timelines of split launches with their K slices in clusters and without (HUMMING_CLUSTER_SPLIT=0)
           for c in 1 0; do
             HUMMING_CLUSTER_SPLIT=$c timeout 100 python3 scripts/gpu_trace.py --shapes 8192x8192,4096x4096 --m 4,16,33 \
               --no-stream 2>&1 | tee -a "$OUT/ctrace.log" | grep "humming" | sed "s/^/clusters=$c /" | cut -c1-250
           done ;;
    csweep) # split K in clusters against the workspace, at the launcher's split and at one CTA per SM's
           timeout 300 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x4096,4096x14336 --m 4,16,64 --groups csplit \
             --ctas 0,1 --clusters 0,8 --rounds 3 --json "$OUT/csweep.json" 2>&1 | tee "$OUT/csweep.log" | cut -c1-150 ;;
    m1wide) # 28672x8192: why one token runs slower than four on the same warpgroup tile (bench order, timelines)
           timeout 120 humming bench --shapes 28672x8192 --m 4,1,2,1 --weight int4 --group-size 128 --methods humming \
             --repeats 5 --no-plot --no-jit --out "$OUT/m1wide" 2>&1 | tee "$OUT/m1wide.log" | grep -E "^[0-9]+ |stream "
           timeout 100 python3 scripts/gpu_trace.py --shapes 28672x8192 --m 1,4 --no-stream 2>&1 | tee "$OUT/m1wide_trace.log" \
             | grep humming | cut -c1-250 ;;
    m1ring) # the one-token ring timelines on the four ring shapes (where the last tenths of a microsecond go)
           timeout 150 python3 scripts/gpu_trace.py --shapes 4096x4096,14336x4096,4096x14336,8192x8192 --m 1 2>&1 \
             | tee "$OUT/m1ring.log" | grep -v "^    " | cut -c1-260 ;;
    w16k)  # the 16-token warpgroup tiles alone after the two prologues (gpu_sweep.py w16 at M=16 on the split layers)
           timeout 100 python3 scripts/gpu_sweep.py --shapes 4096x4096,4096x14336 --m 16 --groups w16 --clusters 8 \
             --rounds 5 --json "$OUT/w16k.json" 2>&1 | tee "$OUT/w16k.log" | cut -c1-150 ;;
    wpdl2) # the same after the early weights were kept to launches that do not split K (a first version took them in
           # split launches too: 2-3 % slower there, 4096x4096 M=16 7.59 -> 7.86 us, 14336x4096 13.9 -> 14.3)
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "programmatic or wgmma_tiles or four_block" 2>&1 | tee "$OUT/wpdl2_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           int4rows wpdl2
           pdloff wpdl2 ;;
    wpdl)  # programmatic launches of the cp.async warpgroup tiles that do not split K (their first stages' weight
           # copies before the wait): the PDL chain and warpgroup GPU tests, then the int4 rows at M = 1, 8, 16, 64 with
           # cuBLAS, and 28672x8192 again with HUMMING_PDL=0 (the same kernels launched plainly)
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "programmatic or wgmma_tiles or four_block or folded or two_row_blocks or batched_decode" 2>&1 \
             | tee "$OUT/wpdl_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           int4rows wpdl
           pdloff wpdl ;;
    sk)    # stream-K warpgroup tiles: their GPU test, then against the planner's warpgroup tiles at M = 1, 16, 64 on the
           # issue-6 shapes (gpu_sweep.py sk1 / sk16 / sk64, kernel alone)
           timeout 180 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k stream_k 2>&1 \
             | tee "$OUT/sk_tests.log" | tail -15; rc=$((rc | PIPESTATUS[0]))
           for g in sk1:1 sk16:16 sk64:64; do
             timeout 130 python3 scripts/gpu_sweep.py --m "${g##*:}" --groups "${g%%:*}" --rounds 3 --ctas 0,1 \
               --json "$OUT/${g%%:*}.json" 2>&1 | tee "$OUT/${g%%:*}.log" | cut -c1-150
           done ;;
    sktr)  # CTA timelines of 28672x8192 at M = 1 and 64: the planner's warpgroup tiles against their stream-K forms
           timeout 200 python3 scripts/gpu_trace.py --shapes 28672x8192 --m 1,64 --no-stream \
             --tile "Tile(64, 128, 128, 1, 8, 1, 4, wgmma=1, occupancy=2, sk=1)" \
             --tile "Tile(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1, sk=1)" --json "$OUT/sktr.json" 2>&1 \
             | tee "$OUT/sktr.log"; rc=$((rc | PIPESTATUS[0])) ;;
    sk2)   # stream-K after its first measurements: the GPU test, then CTA timelines (programmatic launches, as the bench
           # runs them) of the planner's tiles and the stream-K forms of the 1-, 16- and 64-token tiles
           timeout 180 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k stream_k 2>&1 \
             | tee "$OUT/sk_tests.log" | tail -5; rc=$((rc | PIPESTATUS[0]))
           timeout 300 python3 scripts/gpu_trace.py --shapes 28672x8192,8192x8192 --m 1,16,64 --no-stream \
             --tile "Tile(64, 128, 128, 1, 8, 1, 4, wgmma=1, occupancy=2, sk=1)" \
             --tile "Tile(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1, sk=1)" \
             --tile "Tile(16, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1, sk=1)" --json "$OUT/sktr2.json" 2>&1 \
             | tee "$OUT/sktr2.log" | grep -v "^    Tile"; rc=$((rc | PIPESTATUS[0])) ;;
    sktr3) # where stream-K loses through the bench: each call's timeline (the first of a replay starts across the
           # graph launch, without the programmatic overlap), 28672x8192 at M = 1 and 16, data-parallel and stream-K
           timeout 200 python3 scripts/gpu_trace.py --shapes 28672x8192 --m 1,16 --no-stream --per-call \
             --tile "Tile(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1, sk=1)" \
             --tile "Tile(16, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1, sk=1)" --json "$OUT/sktr3.json" 2>&1 \
             | tee "$OUT/sktr3.log" | grep -v "^    Tile"; rc=$((rc | PIPESTATUS[0])) ;;
    skab)  # stream-K (HUMMING_STREAM_K=1: the 1-16 token tiles of layers of more than 16384 rows) against the
           # data-parallel grid on 28672x8192 at M = 1, 8, 16, in one machine session, alternated twice (bench, humming alone)
           for r in 1 2; do
             for v in 0 1; do
               HUMMING_STREAM_K=$v timeout 60 humming bench --shapes 28672x8192 --m 1,8,16 --weight int4 --group-size 128 \
                 --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/skab-$v-$r" 2>&1 \
                 | tee "$OUT/skab-$v-$r.log" | grep -E "^(1 |8 |16 )|stream " | sed "s/^/sk=$v run $r: /"
             done
           done ;;
    bal)   # the warpgroup tiles of 28672x8192 (224 CTAs of 128 rows, two fit an SM: 92 SMs hold two, 40 one) against
           # layers of 132 and 264 such CTAs (16896 and 33792 rows), at M = 1, 16, 64 (kernel alone)
           for g in bal1:1 bal16:16 bal64:64; do
             timeout 120 python3 scripts/gpu_sweep.py --shapes 16896x8192,28672x8192,33792x8192 --m "${g##*:}" \
               --groups "${g%%:*}" --rounds 3 --json "$OUT/${g%%:*}.json" 2>&1 | tee "$OUT/${g%%:*}.log" | cut -c1-110
           done ;;
    w3x)   # 3-bit codes at 4-8 tokens: the warpgroup decode tiles against the 3-bit rings with and without a window of
           # activations (gpu_sweep.py w3x, kernel alone)
           timeout 240 python3 scripts/gpu_sweep.py --shapes 4096x14336,8192x8192,14336x4096 --m 4,8 --weight int3 \
             --group 128 --groups w3x --rounds 5 --json "$OUT/w3x.json" 2>&1 | tee "$OUT/w3x.log" | cut -c1-150 ;;
    xfin)  # the final state of the window and 16-token changes: the GPU tests through the planner and of the windowed
           # rings, the issue-6 int4 rows at M = 1, 8, 16, 64 with cuBLAS, int2 g128 and int4 per channel at M = 8
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "batched_decode or warp_layouts or activation_window" 2>&1 | tee "$OUT/xfin_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           int4rows xfin
           for w in int2:128 int4:0; do
             timeout 60 humming bench --shapes 4096x14336,8192x8192 --m 6,8 --weight "${w%%:*}" --group-size "${w##*:}" \
               --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/xfin-${w%%:*}-${w##*:}" 2>&1 \
               | tee "$OUT/xfin-${w%%:*}-${w##*:}.log" | grep -E "^(== |6 |8 )|stream "
           done ;;
    xwp)   # after the planner's windowed long-K ring at 7-8 tokens and the two-wgmma 16-token tile from 8193 rows: their
           # GPU tests through the planner; the window against the wide ring and the warpgroup tile for int4 per channel
           # and int2 g128 at 8 tokens (gpu_sweep.py xw8b); the issue-6 int4 rows at M = 1, 8, 16, 64 with cuBLAS
           timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "batched_decode or warp_layouts" 2>&1 | tee "$OUT/xwp_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           for w in int4:0 int2:128; do
             timeout 100 python3 scripts/gpu_sweep.py --shapes 4096x14336,8192x8192 --m 8 --weight "${w%%:*}" \
               --group "${w##*:}" --groups xw8b --rounds 5 --json "$OUT/xw8b-${w%%:*}.json" 2>&1 \
               | tee "$OUT/xw8b-${w%%:*}.log" | cut -c1-150
           done
           int4rows xwp ;;
    xw8)   # the activation window at 1-8 tokens on the planner's int4 rings (gpu_sweep.py xw8), the 16-token warpgroup
           # tiles with one and two wgmmas per warpgroup (w16), int4 one-token rings of 14-16 warps on 28672x8192 (w28b)
           timeout 240 python3 scripts/gpu_sweep.py --shapes 4096x14336,8192x8192,14336x4096 --m 1,6,8 \
             --groups xw8 --clusters 8 --rounds 5 --json "$OUT/xw8.json" 2>&1 | tee "$OUT/xw8.log" | cut -c1-170
           timeout 100 python3 scripts/gpu_sweep.py --shapes 14336x4096,4096x4096,8192x8192 --m 9,16 \
             --groups w16 --clusters 8 --rounds 5 --json "$OUT/w16.json" 2>&1 | tee "$OUT/w16.log" | cut -c1-170
           timeout 100 python3 scripts/gpu_sweep.py --shapes 28672x8192 --m 1 \
             --groups w28b --clusters 8 --rounds 5 --json "$OUT/w28b.json" 2>&1 | tee "$OUT/w28b.log" | cut -c1-170 ;;
    sktime) # the traced stream-K timelines against the bench (twenty-second session: stream-K ahead in the CTA
           # timelines, behind through the bench): gpu_trace.py --time on 28672x8192, the planner's tile and its
           # stream-K form at M = 1 and 16, the same traced calls timed as the bench times them, stamping and not
           timeout 200 python3 scripts/gpu_trace.py --shapes 28672x8192 --m 1 --no-stream --time \
             --tile "Tile(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1, sk=1)" --json "$OUT/sktime1.json" 2>&1 \
             | tee "$OUT/sktime1.log"
           timeout 200 python3 scripts/gpu_trace.py --shapes 28672x8192 --m 16 --no-stream --time \
             --tile "Tile(16, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1, sk=1)" --json "$OUT/sktime16.json" 2>&1 \
             | tee "$OUT/sktime16.log" ;;
    wab)   # the warm-up of the timed replays on one machine: 28672x8192 at M = 1, 16, 64, humming and cuBLAS, with
           # --warmup-s 0 (the default) and 0.1 (the sustained state), alternated twice
           for r in 1 2; do
             for ws in 0.0 0.1; do
               timeout 60 humming bench --warmup-s $ws --shapes 28672x8192 --m 1,16,64 --weight int4 --group-size 128 --methods humming,cublas-fp16 \
                 --repeats 3 --no-plot --no-jit --out "$OUT/wab$ws-$r" 2>&1 | tee "$OUT/wab$ws-$r.log" \
                 | grep -E "^(1 |16 |64 )" | sed "s/^/w=$ws /"
             done
           done ;;
    bdiff) # which step of the bench moves the kernel's time (scripts/gpu_benchdiff.py): with and without the ceilings
           timeout 200 python3 scripts/gpu_benchdiff.py --shape 28672x8192 --m 1,16 2>&1 | tee "$OUT/bdiff.log" | grep -v "^\[" ;;
    place) # whether where the weight copies land changes the time (scripts/gpu_placement.py), then the bench alone
           timeout 150 python3 scripts/gpu_placement.py --shape 28672x8192 --m 1 2>&1 | tee "$OUT/place.log"
           timeout 100 python3 scripts/gpu_placement.py --shape 8192x8192 --m 1 2>&1 | tee "$OUT/place8k.log" ;;
    skheat) # whether the GPU's state explains gpu_trace.py --time (33 us) against the bench (35.5 us) on 28672x8192 M=1,
           # the same kernel: the trace script cool, the bench (its ceilings first: copy, bf16 / fp8 matmul rates,
           # streams), the trace script again right after; SM clocks and power sampled between
           q() { nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
                   --format=csv,noheader | tee -a "$OUT/skheat_clocks.txt"; }
           q
           timeout 100 python3 scripts/gpu_trace.py --shapes 28672x8192 --m 1 --no-stream --time 2>&1 \
             | tee "$OUT/skheat1.log" | grep timed
           q
           timeout 150 humming bench --shapes 28672x8192 --m 1 --weight int4 --group-size 128 --methods humming,cublas-fp16 \
             --repeats 3 --no-plot --no-jit --out "$OUT/skheat-bench" 2>&1 | tee "$OUT/skheat-bench.log" \
             | grep -E "^(== |1 )|stream "
           q
           timeout 100 python3 scripts/gpu_trace.py --shapes 28672x8192 --m 1 --no-stream --time 2>&1 \
             | tee "$OUT/skheat2.log" | grep timed
           q ;;
    p3)    # layout v3 (3-bit slot order, multi-plane blocks stored plane by plane): the GPU tests of the 3, 5, 6
           # and 7-bit formats, then the int3 g128 rows at M = 1, 2, 16 and int5 / int6 / e3m2 at M = 1 on 8192x8192
           # with this tree and with the tree in old3/ (v2: `git archive 0abf3bb | tar -x -C old3` here, its
           # backends/nvidia copied to old3/humming_nvidia so that PYTHONPATH=old3 takes both packages), alternated
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests -k \
             "int3 or uint3 or int5 or uint5 or int6 or uint6 or int7 or uint7 or e3m2 or e2m3 or layout" 2>&1 \
             | tee "$OUT/p3_tests.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           [ -d old3/backends/nvidia ] && rm -rf old3/humming_nvidia && cp -r old3/backends/nvidia old3/humming_nvidia
           for r in 1 2; do
             for v in new old; do
               pp=; [ $v = old ] && pp=$PWD/old3
               [ $v = old ] && [ ! -d old3 ] && continue
               PYTHONPATH=$pp timeout 100 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 \
                 --m 1,2,16 --weight int3 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
                 --out "$OUT/p3-$v$r" 2>&1 | tee "$OUT/p3-$v$r.log" | grep -E "^(== |1 |2 |16 )|stream "
               [ $r = 1 ] && PYTHONPATH=$pp widths "p3w-$v" 8192x8192 "int5:128 int6:128 e3m2:32"
             done
           done ;;
    cv)    # native_cvt (e4m3 codes into fp16 by F2FP, sm_89 on) and plain launches of crowded warpgroup grids
           # (Launcher.crowded): the GPU tests of fp8 weights, which launches the rule makes plain
           # (scripts/gpu_pdl_probe.py), then this tree against the tree in old3/ (`git archive b1be7d5 | tar -x -C
           # old3`), alternated: e4m3 per channel at M = 1, 16, 64; int3 g128 at 5-64 tokens; int4 g128 on 28672x8192
           timeout 220 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py tests/test_planner.py \
             -k "e4m3 or fp8 or e5m2" 2>&1 | tee "$OUT/cv_tests.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           timeout 120 python3 scripts/gpu_pdl_probe.py --formats int4,int3,e4m3 --m 1,5,8,16,64 --json "$OUT/cv_probe.json" \
             2>&1 | tee "$OUT/cv_probe.log" | grep -E "crowded=True|Error|error"
           [ -d old3/backends/nvidia ] && rm -rf old3/humming_nvidia && cp -r old3/backends/nvidia old3/humming_nvidia
           [ -d old3/backends/nvidia ] && rm -rf old3/humming_nvidia && cp -r old3/backends/nvidia old3/humming_nvidia
           for v in new old; do
             pp=; [ $v = old ] && pp=$PWD/old3
             [ $v = old ] && [ ! -d old3 ] && continue
             PYTHONPATH=$pp timeout 80 humming bench --shapes 8192x8192,14336x4096,28672x8192 --m 1,16,64 --weight e4m3 \
               --group-size 0 --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/cv-e4m3-$v" 2>&1 \
               | tee "$OUT/cv-e4m3-$v.log" | grep -E "^(== |1 |16 |64 )|stream "
             PYTHONPATH=$pp timeout 80 humming bench --shapes 8192x8192,28672x8192 --m 5,8,16,64 --weight int3 \
               --group-size 128 --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/cv-int3-$v" 2>&1 \
               | tee "$OUT/cv-int3-$v.log" | grep -E "^(== |5 |8 |16 |64 )|stream "
             PYTHONPATH=$pp timeout 60 humming bench --shapes 28672x8192 --m 1,8,16,64 --weight int4 --group-size 128 \
               --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/cv-int4-$v" 2>&1 \
               | tee "$OUT/cv-int4-$v.log" | grep -E "^(== |1 |8 |16 |64 )|stream "
           done ;;
    cv2)   # the launches Launcher.crowded makes plain besides 28672x8192's 3-bit 5-8 tokens (cv's probe: 14336x4096 at
           # M=64, 224 CTAs, three per SM, for int4, int3 and e4m3), this tree against old3/ alternated twice; then the
           # issue-6 8-bit widths at M=1 on 8192x8192, five repeats, twice
           [ -d old3/backends/nvidia ] && rm -rf old3/humming_nvidia && cp -r old3/backends/nvidia old3/humming_nvidia
           for r in 1 2; do
             for v in new old; do
               pp=; [ $v = old ] && pp=$PWD/old3
               [ $v = old ] && [ ! -d old3 ] && continue
               for w in int4:128 int3:128 e4m3:0; do
                 PYTHONPATH=$pp timeout 60 humming bench --shapes 14336x4096 --m 16,64 --weight ${w%%:*} \
                   --group-size ${w##*:} --methods humming --repeats 3 --no-plot --no-jit \
                   --out "$OUT/cv2-${w%%:*}-$v$r" 2>&1 | tee "$OUT/cv2-${w%%:*}-$v$r.log" | grep -E "^(== |16 |64 )"
               done
             done
           done
           for r in 1 2; do
             for w in e4m3:0 int8:0; do
               timeout 60 humming bench --shapes 8192x8192 --m 1 --weight "${w%%:*}" --group-size "${w##*:}" \
                 --methods humming --repeats 5 --no-plot --no-jit --out "$OUT/cv2w-${w%%:*}-$r" 2>&1 \
                 | tee "$OUT/cv2w-${w%%:*}-$r.log" | grep -E "^(== |1 )|stream "
             done
           done ;;
    cvx)   # split warpgroup launches programmatically where not crowded (a HUMMING_PDL_SPLIT=1 switch of the measured
           # tree, since made the rule: the switch is gone, both sides now run the same), alternated
           for r in 1 2; do
             for e in 0 1; do
               for w in e4m3:0 int8:0; do
                 HUMMING_PDL_SPLIT=$e timeout 60 humming bench --shapes 8192x8192,4096x14336 --m 1,5,16 --weight "${w%%:*}" \
                   --group-size "${w##*:}" --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/cvx-${w%%:*}-$e$r" \
                   2>&1 | tee "$OUT/cvx-${w%%:*}-$e$r.log" | grep -E "^(== |1 |5 |16 )"
               done
               HUMMING_PDL_SPLIT=$e timeout 100 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192 --m 16,64 \
                 --weight int4 --group-size 128 --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/cvx-int4-$e$r" \
                 2>&1 | tee "$OUT/cvx-int4-$e$r.log" | grep -E "^(== |16 |64 )"
             done
           done ;;
    cv3)   # after native_cvt and programmatic split launches (Launcher.crowded): the GPU tests of launches chained
           # programmatically, through the planner and of split K, then this tree against old3/ (a variant: here the
           # split warpgroup launches' first weights before the wait as well), alternated twice
           timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "programmatic or \
             weight_formats or batched_decode or large_shapes or split_k or graph or three_bit or bad_inputs or \
             quant_linear or torch_compile or wgmma_tiles or prefill" 2>&1 | tee "$OUT/cv3_tests.log" | tail -5
           rc=$((rc | PIPESTATUS[0]))
           abbench cv3-int4 2 "new old" 90 "^(== |16 |64 )" --shapes 4096x4096,14336x4096,4096x14336,8192x8192 \
             --m 16,64 --weight int4 --group-size 128
           abbench cv3-e4m3 2 "new old" 60 "^(== |1 |5 )" --shapes 8192x8192,4096x14336 --m 1,5 --weight e4m3 \
             --group-size 0 ;;
    occ)   # 8-bit weight codes on the warpgroup tiles sized for 4-bit ones: gpu_sweep.py groups occ8_16 / occ8_32 /
           # occ8_64 (the planner's tile, fewer stages for more CTAs per SM, the 64-row tile), kernel alone, e4m3 per
           # channel on three shapes and int8 per channel on 28672x8192; then the first half of the GPU tests
           for g in 16 32 64; do
             timeout 100 python3 scripts/gpu_sweep.py --weight e4m3 --group 0 --m $g --groups occ8_$g --rounds 3 \
               --shapes 28672x8192,14336x4096,4096x14336 --json "$OUT/occ_e4m3_$g.json" 2>&1 | tee -a "$OUT/occ.log" \
               | grep -v "^      "
           done
           timeout 60 python3 scripts/gpu_sweep.py --weight int8 --group 0 --m 16,64 --groups occ8_16,occ8_64 --rounds 3 \
             --shapes 28672x8192 --json "$OUT/occ_int8.json" 2>&1 | tee -a "$OUT/occ.log" | grep -v "^      "
           gpuhalf 0 330; rc=$((rc | $?)) ;;
    occ2)  # after wgmma_pair / BYTE_CODES_16_TWO_FROM_N: the GPU tests of the tiles it changes (8-bit codes through the
           # planner, two-row-block and warpgroup tiles of 8-bit formats), then this tree against old3/ (`git archive
           # baa38fb | tar -x -C old3`), alternated twice: e4m3 per channel at M = 16, 64, 128 on four shapes (256 on
           # 4096x14336), int8 g128 at 64 and 128
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "byte_codes_two or \
             wgmma_two_row_blocks or (wgmma_tiles and (int8 or e4m3))" 2>&1 | tee "$OUT/occ2_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           abbench occ2-e4m3 2 "new old" 100 "^(== |16 |64 |128 )|stream " \
             --shapes 14336x4096,4096x14336,8192x8192,28672x8192 --m 16,64,128 --weight e4m3 --group-size 0
           abbench occ2-e4m3b 1 "new old" 40 "^(== |256 )" --shapes 4096x14336 --m 256 --weight e4m3 --group-size 0
           abbench occ2-int8 1 "new old" 60 "^(== |64 |128 )" --shapes 8192x8192,28672x8192 --m 64,128 --weight int8 \
             --group-size 128 ;;
    span)  # HUMMING_FOLD_SPAN (folded four-block warpgroup tiles fold once per group of two blocks): kernel alone
           # against a fold per block (the sweep's define; WG_16_DEEP also at 5 and 3 stages, WG_DECODE_TWO at 5), the
           # GPU tests of the folded tiles, then the timelines of the planner's kernels at M=16
           timeout 150 python3 scripts/gpu_sweep.py --m 16 --groups span16 --rounds 5 --defines ',HUMMING_FOLD_SPAN=1' \
             --shapes 14336x4096,4096x14336,8192x8192,28672x8192 --json "$OUT/span16.json" 2>&1 | tee "$OUT/span16.log" \
             | grep -v "^      "
           timeout 70 python3 scripts/gpu_sweep.py --m 1,8 --groups span1 --rounds 5 --defines ',HUMMING_FOLD_SPAN=1' \
             --shapes 28672x8192 --json "$OUT/span1.json" 2>&1 | tee "$OUT/span1.log" | grep -v "^      "
           timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "four_block or \
             stream_k or folded or batched_decode or through_the_planner" 2>&1 | tee "$OUT/span_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           timeout 60 python3 scripts/gpu_trace.py --shapes 14336x4096,4096x14336,8192x8192,28672x8192 --m 16 \
             --json "$OUT/span_trace.json" 2>&1 | tee "$OUT/span_trace.log" | tail -30 ;;
    spanb) # the GPU tests of the folded warpgroup tiles; then this tree against old3/ (`git archive <commit> | tar -x
           # -C old3`) and against alt/ (this tree with 9-16 tokens on WG_16_DEEP up to 16384 rows, five stages where
           # K > 8192) through the bench, alternated twice: int4 g128 at M = 1, 8, 16 on the four large shapes
           timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "four_block or \
             stream_k or folded or batched_decode or through_the_planner" 2>&1 | tee "$OUT/spanb_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           rm -rf alt && mkdir alt && cp -r humming alt/ && cp -r backends/nvidia alt/humming_nvidia
           sed -i 's/^        tile = WG_16_DEEP_TWO if layer.n > WG_16_TWO_FROM_N else WG_16_DEEP$/        tile = WG_16_DEEP_TWO if layer.n > 16384 else replace(WG_16_DEEP, stages=5) if layer.k > 8192 else WG_16_DEEP/' \
             alt/humming_nvidia/gemm_mma_sync.py
           grep -c "layer.n > 16384 else replace(WG_16_DEEP, stages=5)" alt/humming_nvidia/gemm_mma_sync.py
           abbench spanb 2 "new old alt" 70 "^(== |1 |8 |16 )|stream " \
             --shapes 14336x4096,4096x14336,8192x8192,28672x8192 --m 1,8,16 --weight int4 --group-size 128 ;;
    skall|splits|wgdec) # the experiment switches these parts measured (HUMMING_STREAM_K=all, HUMMING_SPLIT_STEPS,
           # HUMMING_SPLIT, HUMMING_WG_DECODE) were removed after the thirtieth session: the parts are in c40d371
           echo "gpu_run.sh $part: run it from commit c40d371 (git archive c40d371), which has its switches"; rc=1 ;;
    depth) # the GPU tests of the decode and folded warpgroup tiles; then this tree (the 128-row decode tile at five
           # stages: decode_depth) against old3/ (`git archive 813503a | tar -x -C old3`) through the bench,
           # alternated twice: int4 g128 at M = 1, 4, 8 on 28672x8192, e2m1 g32 at M = 4, 8 on 14336x4096
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "four_block or \
             stream_k or folded or batched_decode or through_the_planner" 2>&1 | tee "$OUT/depth_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           for r in 1 2; do
             abbench depth-int4-r$r 1 "new old" 70 "^(== |1 |4 |8 )|stream " --shapes 28672x8192 --m 1,4,8 \
               --weight int4 --group-size 128
             abbench depth-e2m1-r$r 1 "new old" 70 "^(== |4 |8 )|stream " --shapes 14336x4096 --m 4,8 --weight e2m1 \
               --group-size 32
           done ;;
    depthv) # the final tree of decode_depth: its GPU test, the planner's decode and PDL-chain tests, the four-block
           # tiles; the 28672x8192 int4 rows at M = 1, 4, 8 with cuBLAS
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "five_stages or \
             programmatic_dependent_launch_chain or batched_decode or four_block" 2>&1 | tee "$OUT/depthv_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           humming bench --shapes 28672x8192 --m 1,4,8 --weight int4 --group-size 128 --methods humming,cublas-fp16 \
             --repeats 3 --no-plot --no-jit --out "$OUT/depthv-int4" 2>&1 | tee "$OUT/depthv-int4.log" | tail -8 ;;
    lead)  # (needs the kernel of 5073fa9, reverted after it: run it from that commit) cp.async warpgroup tiles of
           # one warpgroup refilled one behind: the GPU tests of those paths; then this
           # tree against old3/ (`git archive 1127256 | tar -x -C old3`, two behind) through the bench, alternated
           # twice: int4 g128 at M = 1, 8, 16, 32 on the four large shapes, e4m3 per channel at M = 1, 16
           timeout 170 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "four_block or \
             five_stages or folded or stream_k or batched_decode or through_the_planner or \
             programmatic_dependent_launch_chain" 2>&1 | tee "$OUT/lead_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           abbench lead-int4 2 "new old" 60 "^(== |1 |8 |16 |32 )|stream |wrong" \
             --shapes 14336x4096,4096x14336,8192x8192,28672x8192 --m 1,8,16,32 --weight int4 --group-size 128
           abbench lead-e4m3 2 "new old" 60 "^(== |1 |16 )|stream |wrong" --shapes 8192x8192,28672x8192 --m 1,16 \
             --weight e4m3 --group-size 0 ;;
    spanf) # the final tree: GPU tests named in gpu_final.ids (every weight format through the planner, the warpgroup
           # and planner paths, the three spanb did not reach); the issue-6 int4 rows at M = 1, 16, 32, 64 with cuBLAS;
           # then folded 17-64-token tiles against the planner's (kernel alone)
           timeout 270 python3 -m pytest -q -p no:cacheprovider -m gpu $(cat gpu_final.ids) 2>&1 \
             | tee "$OUT/spanf_tests.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,16,32,64 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/spanf-int4" 2>&1 | tee "$OUT/spanf-int4.log" | grep -E "^(== |1 |16 |32 |64 )|stream "
           timeout 50 python3 scripts/gpu_sweep.py --m 32 --groups span32 --rounds 3 --shapes 8192x8192 \
             --json "$OUT/span32.json" 2>&1 | tee "$OUT/span32.log" | grep -v "^      "
           timeout 70 python3 scripts/gpu_sweep.py --m 64 --groups span64 --rounds 3 --shapes 8192x8192,4096x14336 \
             --json "$OUT/span64.json" 2>&1 | tee "$OUT/span64.log" | grep -v "^      " ;;
    spanv) # after FOLD_SPAN was limited to one-warpgroup CTAs of 3-8-bit codes: the folded-tile GPU tests, then span32
           timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "four_block or folded" \
             2>&1 | tee "$OUT/spanv_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           bash "$0" span32; rc=$((rc | $?)) ;;
    span32) # 17-32 tokens on 28672x8192 (WG_32_DEEP_TWO, folded per two blocks) and 14336x4096: this tree against old3/,
           # alternated twice, through the bench
           abbench span32 2 "new old" 60 "^(== |24 |32 )|stream " --shapes 28672x8192,14336x4096 --m 24,32 \
             --weight int4 --group-size 128 ;;
    occ3)  # e4m3 per channel on 28672x8192 at M=16: WG_16_TWO at six, five (wgmma_pair's) and four stages, kernel alone
           timeout 80 python3 scripts/gpu_sweep.py --weight e4m3 --group 0 --m 16 --groups occ8_16b --rounds 5 \
             --shapes 28672x8192 --json "$OUT/occ3.json" 2>&1 | tee "$OUT/occ3.log" | grep -v "^      " ;;
    gpu3a|gpu3b|gpu3c)  # (sixty-eighth session) a third of the GPU tests each, within 560 s: the whole suite in three
           # device calls. Not run in full since the fortieth session (a test's stale plan expectation, failing on
           # Hopper since 2703b0c, turned up in the sixty-eighth); a timeout leaves the rest in the log's ids
           gpuslice $(( $(printf '%d' "'${part: -1}") - 97 )) 3 560; rc=$((rc | $?)) ;;
    gpu0)  # the first half of the GPU tests (within 420 s, so another part fits in the same device call)
           gpuhalf 0 420; rc=$((rc | $?)) ;;
    gpu1)  # the second half of the GPU tests
           gpuhalf 1 560; rc=$((rc | $?)) ;;
    ids)   # the GPU tests named in $GPU_IDS (a file of node ids, one per line: e.g. what a cut-off half left)
           timeout "${GPU_IDS_S:-560}" python3 -m pytest -q -p no:cacheprovider -m gpu $(cat "${GPU_IDS:-gpu_rest.ids}") 2>&1 \
             | tee "$OUT/gpu_ids.log" | tail -8; rc=$((rc | PIPESTATUS[0])) ;;
    cvf)   # the final tree (native_cvt; programmatic launches of uncrowded split warpgroup tiles, their first weights
           # before the wait): GPU tests of launches chained programmatically, split K and the warpgroup tiles; the
           # issue-6 int4 rows at M = 1, 16, 64 with cuBLAS; the 8-bit widths at M=1; int3 on 28672x8192 at 5-16 tokens
           timeout 250 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "programmatic or \
             split_k or graph or large_shapes or wgmma_tiles or wgmma_two or wgmma_four or prefill or batched_decode" \
             2>&1 | tee "$OUT/cvf_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,16,64 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/cvf-int4" 2>&1 | tee "$OUT/cvf-int4.log" | grep -E "^(== |1 |16 |64 )|stream "
           widths cvf 8192x8192 "e4m3:0 int8:0"
           timeout 60 humming bench --shapes 28672x8192 --m 5,8,16 --weight int3 --group-size 128 --methods humming \
             --repeats 3 --no-plot --no-jit --out "$OUT/cvf-int3" 2>&1 | tee "$OUT/cvf-int3.log" | grep -E "^(== |5 |8 |16 )" ;;
    f3)    # layout v4 (3-bit values as whole fields, five per 16-bit half): the GPU tests of the 3-bit formats and
           # the layout, then the int3 g128 rows at M = 1, 2, 5, 16 with this tree and the v3 tree in old3/
           # (`git archive e590402 | tar -x -C old3`, prepared as for p3), alternated, and bf16 int3 at M = 256, 1024
           # on 28672x8192 (v4 plans the 256-token tile there: no longer heavy); a second round at M = 1
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests -k "int3 or uint3 or layout or three" 2>&1 \
             | tee "$OUT/f3_tests.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           [ -d old3/backends/nvidia ] && rm -rf old3/humming_nvidia && cp -r old3/backends/nvidia old3/humming_nvidia
           for r in 1 2; do
             ms=1,2,5,16 shapes=4096x4096,14336x4096,4096x14336,8192x8192,28672x8192
             [ $r = 2 ] && ms=1 shapes=14336x4096,8192x8192,28672x8192
             for v in new old; do
               pp=; [ $v = old ] && pp=$PWD/old3
               [ $v = old ] && [ ! -d old3 ] && continue
               PYTHONPATH=$pp timeout 110 humming bench --shapes $shapes --m $ms --weight int3 --group-size 128 \
                 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
                 --out "$OUT/f3-$v$r" 2>&1 | tee "$OUT/f3-$v$r.log" | grep -E "^(== |1 |2 |5 |16 )|stream "
               [ $r = 1 ] && PYTHONPATH=$pp timeout 60 humming bench --shapes 28672x8192 --m 256,1024 --weight int3 \
                 --group-size 128 --act bf16 --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/f3b-$v" 2>&1 \
                 | tee "$OUT/f3b-$v.log" | grep -E "^(== |256 |1024 )"
             done
           done ;;
    f3r)   # after layout v4: the 3-bit tiles ranked at 1-2 tokens (gpu_sweep.py dec3v4 on the five issue-6 shapes),
           # kernel alone, two rounds
           timeout 280 python3 scripts/gpu_sweep.py --m 1,2 --groups dec3v4 --weight int3 --rounds 2 \
             --shapes 4096x4096,4096x14336,8192x8192,14336x4096 --json "$OUT/f3r.json" 2>&1 | tee "$OUT/f3r.log" | grep -v "^      "
           timeout 250 python3 scripts/gpu_sweep.py --m 1,2 --groups wide3v4 --weight int3 --rounds 2 \
             --shapes 14336x4096,28672x8192 --json "$OUT/f3rw.json" 2>&1 | tee "$OUT/f3rw.log" | grep -v "^      " ;;
    f3w)   # after layout v4 and the 112-row ring on wide layers: the 3-bit planner GPU tests, the int3 g128 rows at
           # M = 1, 2, 4 with cuBLAS, the issue-6 widths at M = 1 on 8192x8192, then rings against warpgroup tiles at 5, 8
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "three_bit_rings" 2>&1 \
             | tee "$OUT/f3w_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,2,4 \
             --weight int3 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/f3w-int3" 2>&1 | tee "$OUT/f3w-int3.log" | grep -E "^(== |1 |2 |4 )|stream "
           widths f3w 8192x8192 "int3:128 int2:128 int8:0 e4m3:0"
           # 3-bit codes at 5 and 8 tokens: the rings against the warpgroup tiles the planner keeps there
           timeout 150 python3 scripts/gpu_sweep.py --m 5,8 --groups dec3m8 --weight int3 --rounds 2 \
             --shapes 4096x4096,4096x14336,8192x8192 --json "$OUT/f3m8.json" 2>&1 | tee "$OUT/f3m8.log" | grep -v "^      "
           timeout 120 python3 scripts/gpu_sweep.py --m 5,8 --groups wide3m8 --weight int3 --rounds 2 \
             --shapes 14336x4096,28672x8192 --json "$OUT/f3m8w.json" 2>&1 | tee "$OUT/f3m8w.log" | grep -v "^      " ;;
    f3m)   # 3-bit rings at 5-8 tokens (v4, layers of at most 16384 rows): the 3-bit planner GPU tests (M to 8), then
           # the int3 g128 rows at M = 5, 8 with cuBLAS
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "three_bit_rings" 2>&1 \
             | tee "$OUT/f3m_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 5,8 \
             --weight int3 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/f3m-int3" 2>&1 | tee "$OUT/f3m-int3.log" | grep -E "^(== |5 |8 )|stream " ;;
    f3z)   # the final tree's 3-bit GPU tests (formats, rings, planner, layout), then 28672x8192 int3 at M = 5, 8 (its
           # warpgroup tile: 47 us through the bench, 37.8 kernel alone) as planned, without the cluster sum of split
           # slices, and with plain launches
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests -k "int3 or uint3 or layout or three" 2>&1 \
             | tee "$OUT/f3z_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           for e in "" HUMMING_CLUSTER_SPLIT=0 HUMMING_PDL=0; do
             env $e timeout 60 humming bench --shapes 28672x8192 --m 5,8 --weight int3 --group-size 128 --methods humming \
               --repeats 3 --no-plot --no-jit --out "$OUT/f3z-${e:-plan}" 2>&1 | tee "$OUT/f3z-${e:-plan}.log" \
               | grep -E "^(5 |8 )" | sed "s/^/${e:-planned} /"
           done ;;
    p3r)   # after layout v3: the 3-bit tiles ranked again at 1-4 tokens (gpu_sweep.py dec3k on layers of at most 14336
           # rows, wide3 on 14336x4096 and 28672x8192), kernel alone, three rounds
           sw() { timeout 280 python3 scripts/gpu_sweep.py "$@" 2>&1 | tee -a "$OUT/p3r.log" | grep -v "^      " ; }
           sw --m 1,2,4 --groups dec3k --weight int3 --rounds 3 --shapes 4096x4096,4096x14336,8192x8192,14336x4096 \
             --json "$OUT/p3r_dec3k.json"
           sw --m 1,2,4 --groups wide3 --weight int3 --rounds 3 --shapes 14336x4096,28672x8192 --json "$OUT/p3r_wide3.json" ;;
    p3f)   # after layout v3: every GPU test, then the issue-6 widths at M = 1 on 8192x8192 (int3 / int2 g128, int8 /
           # e4m3 per channel, humming alone with the stream time of their own bytes)
           timeout 450 python3 -m pytest -q -m gpu -p no:cacheprovider tests 2>&1 | tee "$OUT/gpu_tests.log" | tail -8
           rc=$((rc | PIPESTATUS[0]))
           widths p3f 8192x8192 "int3:128 int2:128 int8:0 e4m3:0 int5:128 int6:128" ;;
    p3w)   # 3-bit rings at 2-4 tokens on layers wider than 8192 rows (where one fills the wave): the 3-bit planner GPU
           # tests, then the int3 g128 rows at M = 1, 2, 4 with cuBLAS
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "three_bit_rings" 2>&1 \
             | tee "$OUT/p3w_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,2,4 \
             --weight int3 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/p3w-int3" 2>&1 | tee "$OUT/p3w-int3.log" | grep -E "^(== |1 |2 |4 )|stream " ;;
    clk)   # the SM clock, power and throttle reasons sampled every 100 ms while the bench times 28672x8192 and 8192x8192
           # at M = 1, 16, 64 without and with a warm-up of 0.1 s (the 16- and 64-token tiles read slower sustained)
           stdbuf -oL nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
             --format=csv,noheader -lms 100 >"$OUT/clk.csv" 2>&1 & smi=$!
           for r in 1 2; do
             for wu in 0 0.1; do
               echo "== round $r warmup $wu $(date +%T.%N)" | tee -a "$OUT/clk_marks.txt"
               timeout 150 humming bench --warmup-s $wu --shapes 28672x8192,8192x8192 --m 1,16,64 --weight int4 --group-size 128 \
                 --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/clk-$r-$wu" 2>&1 | tee "$OUT/clk-$r-$wu.log" \
                 | grep -E "^(== |1 |16 |64 )|stream "; rc=$((rc | PIPESTATUS[0]))
             done
           done
           echo "== end $(date +%T.%N)" >>"$OUT/clk_marks.txt"
           kill -INT $smi; sleep 1
           # per round: the samples drawing more than 150 W, their mean and lowest SM clock, the most power, and how
           # many report the software power cap (clock-event reason 0x4)
           python3 - "$OUT" <<'PY' | tee "$OUT/clk_summary.txt"
import csv, sys
sec = lambda t: sum(float(v) * m for v, m in zip(t.split(":"), (3600, 60, 1)))
marks = [(" ".join(l.split()[1:5]), sec(l.split()[-1])) for l in open(sys.argv[1] + "/clk_marks.txt")]
rows = [(sec(r[0].split()[1]), int(r[1].split()[0]), float(r[3].split()[0]), int(r[5], 16))
        for r in ([v.strip() for v in r] for r in csv.reader(open(sys.argv[1] + "/clk.csv"))) if len(r) >= 6 and "MHz" in r[1]]
for (name, a), (_, b) in zip(marks, marks[1:]):
    act = [x for x in rows if a <= x[0] < b and x[2] > 150]
    if act:
        print(f"{name}: {len(act)} active samples, mean {sum(x[1] for x in act) / len(act):.0f} MHz, lowest {min(x[1] for x in act)} MHz, "
              f"most {max(x[2] for x in act):.0f} W, {sum(x[3] & 4 > 0 for x in act)} at the software power cap")
PY
           ;;
    mc)    # the bench's units of at least five calls (timing.MIN_CALLS): 28672x8192 (two weight copies) at M = 1, 8, 16,
           # 64 with humming and cuBLAS, one call per copy (--min-calls 1, the earlier method) against the copies repeated
           # to six calls, alternated twice; then the issue-6 int4 rows
           for r in 1 2; do
             for mcalls in 1 5; do
               timeout 120 humming bench --min-calls $mcalls --shapes 28672x8192 --m 1,8,16,64 --weight int4 --group-size 128 --methods humming,cublas-fp16 \
                 --repeats 3 --no-plot --no-jit --out "$OUT/mc$mcalls-$r" 2>&1 | tee "$OUT/mc$mcalls-$r.log" \
                 | grep -E "^(== |1 |8 |16 |64 )|stream "
             done
           done
           int4rows mc ;;
    x16)   # 9-16 tokens on register rings whose K runs keep a window of turns of activations (Tile.xwin): their GPU
           # tests, then gpu_sweep.py x16 at M=16 on the four large issue-6 shapes and M=12 on 8192x8192 (kernel alone)
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "activation_window" 2>&1 | tee "$OUT/x16_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 300 python3 scripts/gpu_sweep.py --shapes 14336x4096,4096x14336,8192x8192,28672x8192 --m 16 \
             --groups x16 --clusters 8 --rounds 5 --json "$OUT/x16.json" 2>&1 | tee "$OUT/x16.log" | cut -c1-190
           timeout 90 python3 scripts/gpu_sweep.py --shapes 8192x8192 --m 12 \
             --groups x16 --clusters 8 --rounds 5 --json "$OUT/x12.json" 2>&1 | tee "$OUT/x12.log" | cut -c1-190 ;;
    r16)   # 9-16 and 2-8 tokens: register rings with turn-by-turn activations against the planner's warpgroup tiles
           # (gpu_sweep.py r16 at M=16, r8 at M=8 and 4; kernel alone). Measured: 16-token rings 1.7-2x slower than
           # WG_16_DEEP (two MMA columns and their corrections per block; K split 5-10 ways for the activations'
           # shared memory); 8 tokens 1.3x slower on 8192x8192 (K split three ways: the 63 KB cap), 4 tokens 10 % faster
           timeout 300 python3 scripts/gpu_sweep.py --shapes 14336x4096,4096x14336,8192x8192,28672x8192 --m 16 \
             --groups r16 --clusters 8 --rounds 5 --json "$OUT/r16.json" 2>&1 | tee "$OUT/r16.log" | cut -c1-190
           timeout 240 python3 scripts/gpu_sweep.py --shapes 8192x8192,28672x8192,4096x14336 --m 8,4 \
             --groups r8 --clusters 8 --rounds 5 --json "$OUT/r8.json" 2>&1 | tee "$OUT/r8.log" | cut -c1-190 ;;
    rfinal) # after the planner's register rings for 2-8 tokens (decode_ring_tile): the planner's GPU tests of the int4 /
           # uint4 formats (M = 5 on the rings), then the issue-6 int4 rows at 1, 2, 4, 8 tokens with cuBLAS
           timeout 120 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "weight_formats and (int4 or uint4)" 2>&1 | tee "$OUT/rfinal_tests.log" | tail -2; rc=$((rc | PIPESTATUS[0]))
           timeout 200 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,2,4,8 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/rfinal-int4" 2>&1 | tee "$OUT/rfinal-int4.log" | grep -E "^(== |[1248] )|stream " ;;
    kh)    # 3-bit raw codes with a k-half factor (Dequant::RAW_KH). A first run measured them, and the same for 1-
           # and 2-bit codes, against the earlier codes in one sweep (a define since removed): int3 g128 M=1 on the
           # 16-warp long-K ring 19.75 -> 16.47 us (8192x8192), 16.10 -> 13.31 (4096x14336), against 16.94 / 17.26
           # for the warpgroup tile; int2 g128 slower raw (9.73 -> 11.41, 9.58 -> 11.12; M=4 10.75 -> 12.53): 2-bit
           # codes stay dequantized. Now: the ring GPU tests of the low widths, the planner's 3-bit GPU tests, the
           # 3-bit one-token tiles ranked (fp16, bf16), the int3 rows through the bench with cuBLAS
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "(stream_tiles_rings and (int2 or int3 or uint1 or uint2 or uint3)) or (weight_formats and int3)" 2>&1 \
             | tee "$OUT/kh_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           timeout 90 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 1 --weight int3 --group 128 \
             --groups dec3r --clusters 8 --rounds 3 --json "$OUT/kh3.json" >/dev/null 2>&1
           timeout 90 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 1 --weight int3 --group 128 \
             --groups dec3r --bf16 --clusters 8 --rounds 3 --json "$OUT/kh3b.json" >/dev/null 2>&1
           python3 scripts/sweep_table.py "$OUT"/kh3*.json
           for a in fp16 bf16; do
             timeout 90 humming bench --shapes 8192x8192,4096x14336,14336x4096 --m 1,2 --weight int3 --group-size 128 \
               --act $a --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/kh-bench-$a" 2>&1 \
               | tee "$OUT/kh-bench-$a.log" | grep -E "^(== |[12] )|stream "
           done ;;
    kh3k)  # 3-bit raw codes (RAW_KH) at 1-4 tokens: gpu_sweep.py dec3k (rings against the warpgroup decode tiles)
           timeout 150 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336,14336x4096,4096x4096 --m 1 \
             --weight int3 --group 128 --groups dec3k --clusters 8 --rounds 3 --json "$OUT/kh3k.json" >/dev/null 2>&1
           timeout 120 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 2,4 --weight int3 --group 128 \
             --groups dec3k --clusters 8 --rounds 3 --json "$OUT/kh3k-m24.json" >/dev/null 2>&1
           python3 scripts/sweep_table.py "$OUT"/kh3k*.json ;;
    kh3f)  # 3-bit codes after the planner change (ring3: one token on DECODE_INT3 / DECODE_INT3_WIDE on layers of
           # at most 8192 rows): the ring and planner GPU tests of 3-bit codes, then the int3 rows through the bench
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "(stream_tiles_rings and int3) or (weight_formats and int3) or three_bit_rings or large_shapes" 2>&1 \
             | tee "$OUT/kh3f_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 120 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1 \
             --weight int3 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/kh3f-bench" 2>&1 | tee "$OUT/kh3f-bench.log" | grep -E "^(== |1 )|stream " ;;
    ring8) # deeper one-token rings (gpu_sweep.py deep2 for int2 g128, deep3 for int3 g128), wider 3-bit rings (wide3)
           timeout 100 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 1 --weight int2 --group 128 \
             --groups deep2 --clusters 8 --rounds 3 --json "$OUT/deep2.json" >/dev/null 2>&1
           timeout 100 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 1 --weight int3 --group 128 \
             --groups deep3 --clusters 8 --rounds 3 --json "$OUT/deep3.json" >/dev/null 2>&1
           timeout 100 python3 scripts/gpu_sweep.py --shapes 14336x4096,28672x8192 --m 1 --weight int3 --group 128 \
             --groups wide3 --clusters 8 --rounds 3 --json "$OUT/deep3w.json" >/dev/null 2>&1
           python3 scripts/sweep_table.py "$OUT"/deep*.json ;;
    kh3m)  # 3-bit codes at 1-4 tokens on the rings (RING3_TOKENS, ring3_tile): their GPU tests, then the int3 rows
           # at M = 1-5 through the bench (M=5: the warpgroup tile)
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "three_bit_rings or (stream_tiles_rings and int3)" 2>&1 | tee "$OUT/kh3m_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           timeout 150 humming bench --shapes 4096x4096,4096x14336,8192x8192 --m 1,2,3,4,5 --weight int3 \
             --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/kh3m-bench" \
             2>&1 | tee "$OUT/kh3m-bench.log" | grep -E "^(== |[1-5] +humming)|stream " ;;
    kh3w)  # 3-bit codes after the wide-layer rings (ring3_tile: 128 and 224 rows): their GPU tests through the
           # planner, then the int3 rows at M = 1, 2, 4 on the five issue-6 shapes with cuBLAS
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "three_bit_rings" 2>&1 | tee "$OUT/kh3w_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,2,4 \
             --weight int3 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/kh3w-bench" 2>&1 | tee "$OUT/kh3w-bench.log" | grep -E "^(== |[124] )|stream " ;;
    rcap)  # after the 96 KB activation cap of the register rings on cp.async targets (RING_XTURN_CAP): the
           # GPU tests of the ring paths, then gpu_sweep.py r4 at 2-8 tokens on four issue-6 shapes, r4 / r4u for
           # int2 g128 and int4 per channel on 8192x8192 at 2, 4, 8 (63 passed; the rings' figures in
           # gemm_mma_sync.RING_DECODE_MAX's comment: the planner's rule for 2-8 tokens)
           timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "stream_tiles or warp_layouts or steady_state or large_shapes" 2>&1 | tee "$OUT/rcap_tests.log" | tail -2
           timeout 200 python3 scripts/gpu_sweep.py --shapes 4096x4096,14336x4096,4096x14336,8192x8192 \
             --m 2,3,4,5,6,7,8 --groups r4 --clusters 8 --rounds 3 --json "$OUT/rcap.json" >/dev/null 2>&1
           timeout 60 python3 scripts/gpu_sweep.py --shapes 8192x8192 --m 2,4,8 --groups r4 --weight int2 --group 128 \
             --clusters 8 --rounds 3 --json "$OUT/rcap-int2.json" >/dev/null 2>&1
           timeout 60 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 2,4,8 --groups r4u --weight int4 \
             --group 0 --clusters 8 --rounds 3 --json "$OUT/rcap-int4c.json" >/dev/null 2>&1
           python3 scripts/sweep_table.py "$OUT"/rcap*.json ;;
    r4)    # 2-6 tokens: the one-token rings against the warpgroup decode tiles on the five issue-6 shapes
           # (gpu_sweep.py r4, kernel alone), then ncu of the wide ring on 8192x8192 at M = 1, 4, 8. Measured: the rings
           # 4-20 % faster except on 28672x8192 and where the 63 KB activation cap split K past one wave (ncu: the
           # wide ring at M=8, three slices, 5.0 M instructions against 3.6 M at M=1, DRAM at 34 % against 49 %)
           timeout 300 python3 scripts/gpu_sweep.py --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 \
             --m 2,3,4,5,6 --groups r4 --clusters 8 --rounds 4 --json "$OUT/r4.json" 2>&1 | tee "$OUT/r4.log" | cut -c1-170
           for m in 1 4 8; do echo "== ncu DECODE_INT4_WIDE 8192x8192 M=$m"
             SHAPE=8192x8192 bash scripts/gpu_ncu.sh "Tile(8, 64, 128, 1, 4, 2, 4, stream=4, occupancy=2)" $m 2>&1 | tee -a "$OUT/r4_ncu.log"; done ;;
    w28)   # 28672x8192 at one token: the warpgroup tile against register rings (gpu_sweep.py w28, kernel alone)
           timeout 150 python3 scripts/gpu_sweep.py --shapes 28672x8192 --m 1 --groups w28 --clusters 8 --rounds 5 \
             --json "$OUT/w28.json" 2>&1 | tee "$OUT/w28.log" | cut -c1-200 ;;
    sm1)   # the issue-6 one-token int4 rows again, five repeats (the first sfinal run's ring rows spread 5-8 %)
           timeout 150 humming bench --shapes 14336x4096,4096x14336,8192x8192,4096x4096,28672x8192 --m 1 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 5 --no-plot --no-jit \
             --out "$OUT/sm1-int4" 2>&1 | tee "$OUT/sm1-int4.log" | grep -E "^(== |1 )|stream " ;;
    sfinal) # after the straight-line activation copies and the 2-bit decode tile: the GPU tests of the ring paths and
           # of every weight width through the planner, then the issue-6 M=1 rows with cuBLAS and the other widths
           timeout 320 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "stream_tiles or warp_layouts or steady_state or programmatic or large_shapes or cuda_graph or \
             (weight_formats and (int1 or int2 or int3 or int4 or int8))" 2>&1 \
             | tee "$OUT/sfinal_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 100 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/sfinal-int4" 2>&1 | tee "$OUT/sfinal-int4.log" | grep -E "^(== |1 )|stream "
           widths sfinal 8192x8192,4096x14336 "int2:128 int3:128" ;;
    dec2b) # 2-bit codes at one token after the straight-line activation copies: ring tiles ranked (gpu_sweep.py dec2b)
           timeout 120 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 1 --weight int2 --group 128 \
             --groups dec2b --clusters 8 --rounds 5 --json "$OUT/dec2b.json" 2>&1 | tee "$OUT/dec2b.log" | cut -c1-190 ;;
    l2pf)  # (diagnostic) a bulk L2 prefetch per ring turn, 2, 4 or 8 turns ahead of the register ring (build define
           # HUMMING_RING_L2PF, in the working tree of that run only): the planner's one-token ring tiles (measured:
           # int4 5-20 % slower at every distance, int2 within 2 %: dropped), then ncu of 28672x8192's warpgroup tile
           timeout 150 python3 scripts/gpu_sweep.py --shapes 14336x4096,4096x14336,8192x8192 --m 1 --groups one \
             --defines ",HUMMING_RING_L2PF=2,HUMMING_RING_L2PF=4,HUMMING_RING_L2PF=8" --clusters 8 --rounds 5 \
             --json "$OUT/l2pf.json" 2>&1 | tee "$OUT/l2pf.log" | cut -c1-190
           timeout 60 python3 scripts/gpu_sweep.py --shapes 8192x8192 --m 1 --groups one2 --weight int2 \
             --defines ",HUMMING_RING_L2PF=2,HUMMING_RING_L2PF=4" --clusters 8 --rounds 5 --json "$OUT/l2pf2.json" 2>&1 \
             | tee "$OUT/l2pf2.log" | cut -c1-190
           echo "== 28672x8192 M=1, the planner's tile (ncu)"
           SHAPE=28672x8192 bash scripts/gpu_ncu.sh "" 2>&1 | tee "$OUT/l2pf_ncu.log" ;;
    stage) # the register rings' turn-by-turn activation copies in straight-line code for a warp's first row: the
           # ring GPU tests, the planner's one-token ring tiles against the earlier loop (gpu_sweep.py --defines
           # HUMMING_X_TURN_OLD: the earlier loop, in the working tree of that run only), warp stalls of the int4
           # long-K ring (measured: int4 2-4 % faster on the three ring shapes, the int2 long-K ring 4 % slower)
           timeout 150 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "(stream_tiles_rings and lean-registers) or warp_layouts or programmatic" 2>&1 \
             | tee "$OUT/stage_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 120 python3 scripts/gpu_sweep.py --shapes 14336x4096,4096x14336,8192x8192 --m 1 --groups one \
             --defines ",HUMMING_X_TURN_OLD" --clusters 8 --rounds 5 --json "$OUT/stage.json" 2>&1 | tee "$OUT/stage.log" | cut -c1-190
           timeout 60 python3 scripts/gpu_sweep.py --shapes 8192x8192 --m 1 --groups one2 --weight int2 \
             --defines ",HUMMING_X_TURN_OLD" --clusters 8 --rounds 5 --json "$OUT/stage2.json" 2>&1 | tee "$OUT/stage2.log" | cut -c1-190
           SHAPE=8192x8192 bash scripts/gpu_ncu.sh "Tile(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2)" 2>&1 | tee "$OUT/stage_ncu.log" ;;
    one)   # one token on the register rings: a copy of the activations per warp (no named barrier per turn): the
           # ring GPU tests, the planner's ring tiles both ways (gpu_sweep.py --defines), the issue-6 M=1 rows, int2
           # (measured 6-9 % slower than the shared copy on every tile: reverted; commit 0b733c3 holds the build)
           timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "stream_tiles or warp_layouts or steady_state or programmatic" 2>&1 \
             | tee "$OUT/one_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 120 python3 scripts/gpu_sweep.py --shapes 14336x4096,4096x14336,8192x8192 --m 1 --groups one \
             --defines ",HUMMING_X_SHARED_ONE" --clusters 8 --rounds 5 --json "$OUT/one.json" 2>&1 | tee "$OUT/one.log" | cut -c1-190
           timeout 60 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 1 --groups one2 --weight int2 \
             --defines ",HUMMING_X_SHARED_ONE" --clusters 8 --rounds 5 --json "$OUT/one2.json" 2>&1 | tee "$OUT/one2.log" | cut -c1-190
           timeout 120 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/one-int4" 2>&1 | tee "$OUT/one-int4.log" | grep -E "^(== |1 )|stream "
           widths one 8192x8192 "int2:128" ;;
    lowbit) # 2- and 3-bit codes at one token: the launch-path GPU tests (after driver.launch_any) and the 2-bit
           # rings (floored now), the ring tiles ranked (gpu_sweep.py dec2 / dec3r), warp stalls of the 2-bit ring
           # without and with the register floor, then the planner's 8/3/2-bit rows
           timeout 200 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "clusters or programmatic or cuda_graph or large_shapes or (stream_tiles_rings and int2)" 2>&1 \
             | tee "$OUT/lowbit_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 130 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 1 --weight int2 --group 128 \
             --groups dec2 --rounds 3 --json "$OUT/dec2.json" 2>&1 | tee "$OUT/dec2.log" | cut -c1-150
           timeout 110 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 1 --weight int3 --group 128 \
             --groups dec3r --rounds 3 --json "$OUT/dec3r.json" 2>&1 | tee "$OUT/dec3r.log" | cut -c1-150
           for o in 1 2; do
             echo "== int2 g128 8192x8192 occupancy $o"
             WEIGHT=int2:128 SHAPE=8192x8192 bash scripts/gpu_ncu.sh "Tile(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=$o)"
           done 2>&1 | tee "$OUT/lowbit_ncu.log"
           widths lowbit 8192x8192,4096x14336 "int2:128 int3:128" ;;
    cfinal) # after split-K in clusters: the GPU tests of every path the planner launches on the H200 (every weight
           # and activation format, byte operands, folded and four-block warpgroup tiles, the cluster sums, graphs, PDL,
           # modules, checkpoints, bad inputs), the issue-6 int4 rows at M = 1, 16, 64 with cuBLAS, other widths at M = 1
           timeout 330 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py tests/test_nn.py -k \
             "weight_formats or quantized_activations or group_and_fp4 or byte_operands or folded or four_block or \
             clusters or large_shapes or graph or programmatic or quant_linear or checkpoint or bad_inputs or torch_compile" \
             2>&1 | tee "$OUT/cfinal_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,16,64 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/cfinal-int4" 2>&1 | tee "$OUT/cfinal-int4.log" | grep -E "^(== |1 |16 |64 )|stream "
           widths cfinal 8192x8192 "int8:0 e4m3:0 int3:128 int2:128 int4:0" ;;
    xwide) # the wide tile that fits two CTAs per SM and ring splits by the loaded kernel's registers: the ring GPU
           # tests, then the issue-6 rows at M = 1 and the 8-bit and 2-bit widths at M = 1
           timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "stream_tiles or warp_layouts or steady_state or large_shapes or programmatic" 2>&1 \
             | tee "$OUT/xwide_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 120 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/xwide-int4" 2>&1 | tee "$OUT/xwide-int4.log" | grep -E "^(== |1 )|stream "
           widths xwide 8192x8192,4096x14336 "int8:0 int2:128 int4:0" ;;
    ring)  # the lean shared-memory ring decode tiles against the other stream tiles: correctness, sweep, profile
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "stream_tiles_rings" \
             2>&1 | tee "$OUT/ring_tests.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           python3 scripts/gpu_tiles.py --m 1,16 --groups stream,ring,ring16,mid --no-host \
             --json "$OUT/ring_int4.json" 2>&1 | tee "$OUT/ring_int4.log" | grep -v "^      " ; rc=$((rc | PIPESTATUS[0]))
           for w in "--weight int8 --group 0" "--bits 3" "--bits 2"; do
             python3 scripts/gpu_tiles.py --m 1 --shapes 8192x8192 --groups stream,ring --no-host $w \
               2>&1 | tee -a "$OUT/ring_other.log" | grep -v "^      "; rc=$((rc | PIPESTATUS[0]))
           done
           m=smsp__average_warps_issue_stalled; r=per_issue_active.ratio
           for t in "Tile(8, 16, 512, 1, 1, 8, 8, stream=3, occupancy=4)" "Tile(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3)"; do
             echo "== $t" >> "$OUT/ring_ncu.txt"
             TILE="$t" timeout 100 ncu --clock-control none --kernel-name humming_entry --metrics \
               gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,sm__cycles_active.avg,sm__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,lts__t_sector_hit_rate.pct,${m}_long_scoreboard_$r,${m}_short_scoreboard_$r,${m}_wait_$r,${m}_math_pipe_throttle_$r,${m}_mio_throttle_$r,${m}_lg_throttle_$r,${m}_barrier_$r,${m}_not_selected_$r,${m}_selected_$r,${m}_no_instruction_$r,${m}_dispatch_stall_$r,${m}_branch_resolving_$r,${m}_drain_$r,${m}_imc_miss_$r,${m}_misc_$r,${m}_membar_$r,${m}_tex_throttle_$r \
               python3 scripts/gpu_profile.py 1 >> "$OUT/ring_ncu.txt" 2>&1
           done
           grep -E "^==|duration|dram__|inst_executed|cycles_active|warps_active|issue_active|hit_rate|stalled" "$OUT/ring_ncu.txt" | sed 's/smsp__average_warps_issue_stalled_//' ;;
    sweep) # robust tile ranking (random order per round, ratios to the default): decode, M=16, M=64, M=256
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "stream_tiles_rings" \
             2>&1 | tee "$OUT/sweep_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           sw() { python3 scripts/gpu_sweep.py "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -E "stream  \(base" ; }
           sw --m 1 --groups decode --json "$OUT/sweep_m1.json"
           sw --m 16 --groups m16 --json "$OUT/sweep_m16.json"
           sw --m 64 --groups m64 --shapes 4096x4096,8192x8192,28672x8192 --json "$OUT/sweep_m64.json"
           sw --m 256 --groups m256 --shapes 8192x8192,28672x8192 --json "$OUT/sweep_m256.json"
           for w in "--weight int8 --group 0" "--weight int3" "--weight int2" "--weight e4m3 --group 0"; do
             sw --m 1 --groups decode --shapes 8192x8192 $w
           done ;;
    deep)  # deeper prefill pipelines (M = 16, 64, 256) ranked against the planner's tiles, with QuantLinear's GPU test
           timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_nn.py 2>&1 | tee "$OUT/nn_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 170 python3 scripts/gpu_sweep.py --rounds 4 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --m 16 --groups m16deep --shapes 4096x4096,8192x8192,28672x8192,4096x14336 --json "$OUT/deep_m16.json"
           sw --m 64 --groups m64deep --shapes 4096x4096,8192x8192,28672x8192 --json "$OUT/deep_m64.json"
           sw --m 256 --groups m256deep --shapes 8192x8192,28672x8192 --json "$OUT/deep_m256.json" ;;
    wg)    # the warpgroup-MMA tiles: their GPU test, then ranked against the mma.sync tiles at M = 64, 256, 1024
           timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gemm_gpu.py -k "wgmma" 2>&1 \
             | tee "$OUT/wg_tests.log" | tail -15; rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 200 python3 scripts/gpu_sweep.py --rounds 4 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --m 64 --groups wg64 --shapes 4096x4096,8192x8192,28672x8192 --json "$OUT/wg_m64.json"
           sw --m 256,1024 --groups wg256 --shapes 8192x8192,28672x8192 --json "$OUT/wg_m256.json" ;;
    wgsel) # the warpgroup tiles where the planner had no measurement: M = 33, 128, 256 on the other shapes
           timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gemm_gpu.py -k "wgmma" 2>&1 \
             | tee "$OUT/wg_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 200 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --m 33,128 --groups wgsel --shapes 4096x4096,8192x8192,28672x8192,4096x14336 --json "$OUT/wgsel_a.json"
           sw --m 256 --groups wgsel --shapes 4096x4096,4096x14336,14336x4096 --json "$OUT/wgsel_b.json" ;;
    wg16)  # warpgroup tiles of 16 and 32 tokens against the mma.sync tile at M = 16 and 32
           sw() { timeout 200 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --m 16,32 --groups wg16 --shapes 4096x4096,8192x8192,28672x8192,4096x14336,14336x4096 --json "$OUT/wg16.json" ;;
    bwg)   # byte operands (int8 activations) on warpgroup MMAs: their GPU tests, then ranked against the
           # mma.sync byte tiles (int4 g128 folded per block; int4 and int8 per channel)
           timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gemm_gpu.py -k "byte_wgmma or int8_wgmma" \
             2>&1 | tee "$OUT/bwg_tests.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 150 python3 scripts/gpu_sweep.py --rounds 3 --act int8 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --m 16 --groups bwg16 --shapes 8192x8192,28672x8192 --json "$OUT/bwg16.json"
           sw --m 64 --groups bwg64 --shapes 8192x8192,28672x8192 --json "$OUT/bwg64.json"
           sw --m 256,1024 --groups bwg256 --shapes 8192x8192,28672x8192 --json "$OUT/bwg256.json"
           sw --m 256,1024 --groups bwg256,bwg256c --group 0 --shapes 8192x8192 --json "$OUT/bwg256c.json"
           sw --m 1024 --groups bwg256,bwg256c --group 0 --weight int8 --shapes 8192x8192 --json "$OUT/bwg256i8.json" ;;
    w4a8)  # byte operands through the planner (int8 per-token activations, the quantization kernel timed
           # too) against cuBLAS fp16 and W4A16: int4 g128, int4 and int8 per channel
           timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gemm_gpu.py -k "byte_wgmma or int8_wgmma or byte_operands" \
             2>&1 | tee "$OUT/w4a8_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           for w in int4:128 int4:0 int8:0; do
             humming bench --shapes 8192x8192,28672x8192 --m 16,64,256,1024,4096 --weight "${w%%:*}" --group-size "${w##*:}" \
               --act int8 --act-quant dynamic_token --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
               --out "$OUT/bench-a8-${w%%:*}-${w##*:}" 2>&1 | tee "$OUT/bench-a8-${w%%:*}-${w##*:}.log" | tail -14; rc=$((rc | PIPESTATUS[0]))
           done ;;
    fp8wg) # fp8 weights and activations on warpgroup MMAs (QGMMA) at every M, 8-token warpgroup tiles for
           # decode, against the 16-bit tiles the planner takes for them on Hopper; byte decode (int8 activations)
           sw() { timeout 120 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           e8=(--weight e4m3 --group 0)
           sw --act e4m3 "${e8[@]}" --m 1 --groups bdec8 --shapes 8192x8192,28672x8192 --json "$OUT/f8_dec.json"
           sw --act fp16 "${e8[@]}" --m 1 --groups fdec --shapes 8192x8192,28672x8192 --json "$OUT/f16_dec.json"
           sw --act e4m3 "${e8[@]}" --m 16 --groups bwg16 --shapes 8192x8192 --json "$OUT/f8_16.json"
           sw --act fp16 "${e8[@]}" --m 16 --groups f16 --shapes 8192x8192 --json "$OUT/f16_16.json"
           sw --act e4m3 "${e8[@]}" --m 64 --groups bwg64 --shapes 8192x8192 --json "$OUT/f8_64.json"
           sw --act fp16 "${e8[@]}" --m 64 --groups f64 --shapes 8192x8192 --json "$OUT/f16_64.json"
           sw --act e4m3 "${e8[@]}" --m 256,1024 --groups bwg256 --shapes 8192x8192 --json "$OUT/f8_256.json"
           sw --act fp16 "${e8[@]}" --m 256,1024 --groups f256 --shapes 8192x8192 --json "$OUT/f16_256.json"
           sw --act int8 --m 1 --groups bdec4 --shapes 8192x8192,28672x8192 --json "$OUT/a8_dec.json"
           sw --act int8 --weight int8 --group 0 --m 1 --groups bdec8 --shapes 8192x8192 --json "$OUT/w8a8_dec.json" ;;
    fp8b)  # after fp8 folds every block: the byte GPU tests, the fp8 and W4A8 decode sweeps, the planner's fp8 and
           # W4A8 plans against cuBLAS fp16 (the activation quantization kernel timed too)
           timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gemm_gpu.py -k "byte_wgmma or int8_wgmma or byte_operands" \
             2>&1 | tee "$OUT/fp8b_tests.log" | tail -8; rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 120 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --act e4m3 --weight e4m3 --group 0 --m 1 --groups bdec8 --shapes 8192x8192,28672x8192 --json "$OUT/f8_dec.json"
           sw --act e4m3 --weight e4m3 --group 0 --m 64,256,1024 --groups bwg256 --shapes 8192x8192 --json "$OUT/f8_256.json"
           for w in e4m3:0 int4:128; do
             humming bench --shapes 8192x8192,28672x8192 --m 1,16,64,256,1024 --weight "${w%%:*}" --group-size "${w##*:}" \
               --act "$([ ${w%%:*} = e4m3 ] && echo e4m3 || echo int8)" --act-quant dynamic_token --methods humming,cublas-fp16 \
               --repeats 3 --no-plot --no-jit --out "$OUT/bench-b-${w%%:*}" 2>&1 | tee "$OUT/bench-b-${w%%:*}.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           done ;;
    b8tma) # 8-bit weights (int8, e4m3) above 128 tokens: TMA stages against cp.async ones
           sw() { timeout 150 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --act e4m3 --weight e4m3 --group 0 --m 256,1024 --groups b8tma --shapes 8192x8192 --json "$OUT/b8tma_f8.json"
           sw --act int8 --weight int8 --group 0 --m 1024 --groups b8tma --shapes 8192x8192 --json "$OUT/b8tma_i8.json" ;;
    bfinal) # every GPU test, then the byte-operand plans (W4A8 g128 and per channel, W8A8 int8 and fp8) against cuBLAS
           python3 -m pytest -q -m gpu -x -p no:cacheprovider tests 2>&1 | tee "$OUT/gpu_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           for w in int4:128:int8 int4:0:int8 int8:0:int8 e4m3:0:e4m3; do
             IFS=: read -r wf gs af <<< "$w"
             timeout 100 humming bench --shapes 8192x8192,28672x8192 --m 1,16,64,256,1024 --weight "$wf" --group-size "$gs" \
               --act "$af" --act-quant dynamic_token --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
               --out "$OUT/bench-$wf-$gs-$af" > "$OUT/bench-$wf-$gs-$af.log" 2>&1; rc=$((rc | $?))
           done ;;
    fold)  # 16-bit warpgroup tiles that fold their group scales per block (Tile.fold) and 8-token warpgroup
           # decode tiles: their GPU tests, then ranked against the planner's tiles at M = 1, 16, 32, 64
           timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gemm_gpu.py -k "folded or test_wgmma_tiles" \
             2>&1 | tee "$OUT/fold_tests.log" | tail -6; rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 150 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" | cut -c1-150 ; }
           sw --m 1 --groups dec16 --json "$OUT/dec16.json"
           sw --m 16 --groups fold16 --json "$OUT/fold16.json"
           sw --m 32,64 --groups fold32,fold64 --shapes 8192x8192,28672x8192,4096x14336 --json "$OUT/fold64.json"
           for w in "--weight int8 --group 0" "--weight e4m3 --group 0" "--weight int3" "--weight int2"; do
             sw --m 1 --groups dec16o --shapes 8192x8192 $w
           done ;;
    bk256) # four 64-column blocks per stage on the warpgroup tiles (BK = 256): their GPU tests (and the folded
           # tiles'), the L2 read bandwidth, then ranked against the planner's tiles at M = 1, 16 and 64
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py \
             -k "four_block_stages or folded_group_scales" 2>&1 | tee "$OUT/bk256_tests.log" | tail -5; rc=$((rc | PIPESTATUS[0]))
           timeout 60 python3 scripts/gpu_l2.py --json "$OUT/l2.json" 2>&1 | tee "$OUT/l2.log"
           sw() { timeout 150 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/bk256.log" | grep -E "stream  \(base|^ +[0-9]" | head -60; }
           sw --m 1 --groups bk256 --json "$OUT/bk256_m1.json"
           sw --m 16 --groups bk256m16 --json "$OUT/bk256_m16.json"
           sw --m 64 --groups bk256m64 --shapes 8192x8192,28672x8192,14336x4096,4096x14336 --json "$OUT/bk256_m64.json"
           for w in "--weight int8 --group 0" "--weight e4m3 --group 0" "--weight int3" "--weight int2"; do
             sw --m 1 --groups bk256o --shapes 8192x8192 $w
           done ;;
    bk256b) # after bk256: 32 tokens with BK = 256, 64 tokens on 256-row CTAs (K split by the launcher, and for
           # one CTA per SM), decode at M = 8 on the large layers
           sw() { timeout 200 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/bk256b.log" | grep -E "stream  \(base|^ +[0-9]" | head -60; }
           sw --m 64 --groups m64w --ctas 0,1 --shapes 8192x8192,28672x8192,14336x4096,4096x14336 --json "$OUT/m64w.json"
           sw --m 32 --groups bk256m32 --json "$OUT/bk256_m32.json"
           sw --m 8 --groups bk256 --shapes 28672x8192,14336x4096,8192x8192 --json "$OUT/bk256_m8.json" ;;
    decm)  # decode of 2-8 tokens: the rings against the four-block warpgroup tiles (int4 g128 on the issue-6
           # shapes; int4 per channel, int3 g128, e2m1 g32 on 8192x8192)
           sw() { timeout 200 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/decm.log" | grep -E "stream  \(base|^ +[0-9]" | head -80; }
           sw --m 2,4 --groups decm --json "$OUT/decm_int4.json"
           for w in "--weight int4 --group 0" "--weight int3" "--weight e2m1 --group 32"; do
             sw --m 2,4,8 --groups decm --shapes 8192x8192 $w
           done ;;
    dec3)  # 3-bit codes gathered in place: the 3-bit GPU tests, the decode ranking at M = 1, 2, 8, the planner's
           # int3 row
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py \
             -k "(weight_formats and (int3 or uint3)) or four_block or folded_group or (rings and uint3)" 2>&1 \
             | tee "$OUT/dec3_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 200 python3 scripts/gpu_sweep.py --rounds 3 --m 1,2,8 --groups dec3 --weight int3 \
             --shapes 8192x8192,28672x8192,4096x14336 --json "$OUT/dec3.json" 2>&1 | tee "$OUT/dec3.log" \
             | grep -E "stream  \(base|^ +[0-9]" | cut -c1-200
           humming bench --shapes 8192x8192,28672x8192 --m 1,8,16,64 --weight int3 --group-size 128 \
             --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/bench-int3" 2>&1 \
             | grep -E "^== |humming" ;;
    dec8)  # decode of 8-bit codes (and int4 with folded scales) on 8-token warpgroup tiles: deeper stages, more
           # CTAs per SM (K split for 3-4), eight warps, two 64-row wgmmas per warpgroup
           sw() { timeout 200 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" | cut -c1-170 ; }
           sw --m 1 --groups dec8 --weight int8 --group 0 --ctas 0,3,4 --shapes 8192x8192,28672x8192,4096x4096 --json "$OUT/dec8.json"
           sw --m 1 --groups dec4f --ctas 0,3,4 --shapes 8192x8192,28672x8192 --json "$OUT/dec4f.json" ;;
    final) # one call for the closing figures: every GPU test, the issue-6 table, host overhead, the demo
           # (at most 8 files come back: logs and the JSON reports only)
           timeout 400 python3 -m pytest -q -m gpu -p no:cacheprovider tests 2>&1 | tee "$OUT/gpu_tests.log" | tail -8
           rc=$((rc | PIPESTATUS[0]))
           timeout 200 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,16,64,256 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out /tmp/bench-int4 > "$OUT/bench.log" 2>&1; rc=$((rc | $?))
           cp /tmp/bench-int4/report.json "$OUT/bench-int4.json" 2>/dev/null
           for w in int8:0 e4m3:0 int3:128 int2:128; do
             timeout 60 humming bench --shapes 8192x8192 --m 1 --weight "${w%%:*}" --group-size "${w##*:}" \
               --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "/tmp/bench-${w%%:*}" >> "$OUT/bench.log" 2>&1
             rc=$((rc | $?))
           done
           # per-group (NVFP4 W4A4, fp8 g128) activations against weight-only NVFP4: the act-quant cost
           for a in "e2m1 16 e4m3 e2m1" "e2m1 16 e4m3 fp16" "e4m3 128 fp32 e4m3"; do
             read -r wf gs sf af <<< "$a"; q=(); [ "$af" != fp16 ] && q=(--act-quant dynamic_group --act-group-size "$gs")
             timeout 60 humming bench --shapes 8192x8192 --m 1,16,256 --weight "$wf" --group-size "$gs" --scale-fmt "$sf" \
               --act "$af" "${q[@]}" --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
               --out "/tmp/bench-grp-$wf-$af" >> "$OUT/bench_group_act.log" 2>&1; rc=$((rc | $?))
           done
           timeout 60 python3 scripts/gpu_host.py --json "$OUT/host.json" > "$OUT/host.log" 2>&1
           timeout 60 humming demo > "$OUT/demo.log" 2>&1; rc=$((rc | $?))
           grep -E "x stream|humming|WRONG|passed|failed" "$OUT/bench.log" | head -60
           grep -E "humming|cublas|WRONG|stream" "$OUT/bench_group_act.log"; tail -5 "$OUT/host.log"; tail -6 "$OUT/demo.log" ;;
    wgocc) # the warpgroup tiles of 16, 32 and 64 tokens with K split for 1-4 CTAs per SM
           sw() { timeout 190 python3 scripts/gpu_sweep.py --rounds 3 --ctas 1,2,3,4 "$@" 2>&1 | tee -a "$OUT/sweep.log" \
                  | grep -vE "^\s*$" ; }
           sw --m 16 --groups wgocc16 --json "$OUT/wgocc16.json"
           sw --m 32 --groups wgocc32 --json "$OUT/wgocc32.json"
           sw --m 64 --groups wgocc64 --json "$OUT/wgocc64.json" ;;
    tma)   # TMA stages for the warpgroup tiles: their GPU tests (and the cp.async ones), then ranked against
           # the cp.async tiles at 16, 32 and 64 tokens
           timeout 250 python3 -m pytest -q -m gpu -x -p no:cacheprovider tests/test_gemm_gpu.py -k "wgmma" 2>&1 \
             | tee "$OUT/tma_tests.log" | tail -5; rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 150 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/sweep.log" \
                  | grep -vE "^\s*$" ; }
           sw --m 16 --groups tma16 --json "$OUT/tma16.json"
           sw --m 32 --groups tma32 --json "$OUT/tma32.json"
           sw --m 64 --groups tma64 --json "$OUT/tma64.json" ;;
    tmaocc) # the TMA tiles with K split for 1-4 CTAs per SM (their registers allow more than the cp.async ones)
           sw() { timeout 170 python3 scripts/gpu_sweep.py --rounds 3 --ctas 1,2,3,4 --shapes 14336x4096,4096x14336,8192x8192 \
                  "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --m 16 --groups tmaocc16 --json "$OUT/tmaocc16.json"
           sw --m 32 --groups tmaocc32 --json "$OUT/tmaocc32.json"
           sw --m 64 --groups tmaocc64 --json "$OUT/tmaocc64.json" ;;
    wide)  # two 64-row wgmmas per warpgroup: their GPU tests, then ranked against the planner's tiles
           # (M=64 also with K split for two CTAs per SM)
           timeout 200 python3 -m pytest -q -m gpu -x -p no:cacheprovider tests/test_gemm_gpu.py -k "wgmma_two" 2>&1 \
             | tee "$OUT/wide_tests.log" | tail -5; rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 170 python3 scripts/gpu_sweep.py --rounds 3 --shapes 14336x4096,8192x8192,28672x8192 \
                  "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --m 64 --groups wide64 --ctas 0,2 --json "$OUT/wide64.json"
           sw --m 16 --groups wide16 --json "$OUT/wide16.json"
           sw --m 32 --groups wide32 --json "$OUT/wide32.json" ;;
    widep) # the cp.async two-block tiles against both of the planner's tiles at 16 and 32 tokens (and 64 on the
           # widest layer)
           sw() { timeout 200 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --m 16 --groups wide16p --json "$OUT/wide16p.json"
           sw --m 32 --groups wide32p --json "$OUT/wide32p.json"
           sw --m 64 --groups wide64p --shapes 28672x8192 --ctas 0,2 --json "$OUT/wide64p.json" ;;
    tma8)  # eight-warp TMA tiles (empty barriers): the TMA tiles' GPU tests, then ranked against the planner's
           # tiles with K split for the launcher's choice and for two CTAs per SM
           timeout 200 python3 -m pytest -q -m gpu -x -p no:cacheprovider tests/test_gemm_gpu.py -k "wgmma_tma" 2>&1 \
             | tee "$OUT/tma8_tests.log" | tail -5; rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 170 python3 scripts/gpu_sweep.py --rounds 3 --ctas 0,2 \
                  --shapes 14336x4096,4096x14336,8192x8192,28672x8192 "$@" 2>&1 | tee -a "$OUT/sweep.log" | grep -vE "^\s*$" ; }
           sw --m 64 --groups tma8_64 --json "$OUT/tma8_64.json"
           sw --m 16 --groups tma8_16 --json "$OUT/tma8_16.json"
           sw --m 32 --groups tma8_32 --json "$OUT/tma8_32.json" ;;
    runs)  # plain reads of per-warp runs (the decode kernels' pattern) against the grid-wide stride
           timeout 200 python3 scripts/gpu_inflight.py --runs --json "$OUT/runs.json" 2>&1 | tee "$OUT/runs.log" ;;
    wgsmall) # layers of at most 4096 rows at 16-64 tokens: the mma.sync tile against the warpgroup tiles
           timeout 200 python3 scripts/gpu_sweep.py --rounds 3 --ctas 1,2 --m 16,32,48,64 --groups wgsmall \
             --shapes 4096x4096,4096x14336,2048x8192 --json "$OUT/wgsmall.json" 2>&1 | tee "$OUT/wgsmall.log" | grep -vE "^\s*$" ;;
    src)   # per-instruction warp-stall samples (SASS) of the planner's kernels on 8192x8192 at M = 1, 16, 64,
           # and the bandwidth of plain reads against the bytes in flight per SM (scripts/gpu_inflight.py)
           [ -z "${SRC_M:-}" ] && timeout 120 python3 scripts/gpu_inflight.py --json "$OUT/inflight.json" 2>&1 | tee "$OUT/inflight.log"
           for mm in ${SRC_M:-1 16 64}; do
             SHAPE=${SHAPE:-8192x8192} timeout 100 ncu --clock-control none --kernel-name humming_entry --section SourceCounters \
               --section WarpStateStats -f -o /tmp/src_m$mm python3 scripts/gpu_profile.py $mm > /dev/null 2>&1
             ncu -i /tmp/src_m$mm.ncu-rep --page source --csv --print-source sass > "$OUT/src_m$mm.csv" 2> "$OUT/src_err.log"
             echo "M=$mm: $(wc -l < "$OUT/src_m$mm.csv") lines"; head -c 600 "$OUT/src_m$mm.csv"; echo
           done; tail -3 "$OUT/src_err.log" ;;
    prof)  # where the time goes (ncu sections, caches flushed per pass) for the planner's kernels at M = 1, 16,
           # 64, 256 on 8192x8192 and M = 64 on 28672x8192
           sec="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
           sec="$sec --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
           m=smsp__average_warps_issue_stalled; r=per_issue_active.ratio; st=""
           for w in long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle lg_throttle barrier membar \
                    not_selected selected no_instruction dispatch_stall sleeping; do st="$st,${m}_${w}_$r"; done
           pr() { echo "=== SHAPE=$1 M=$2 TILE=${3:-planner}"; SHAPE=$1 TILE=${3:-} timeout 90 ncu --clock-control none \
                    --kernel-name humming_entry $sec --metrics lts__t_bytes.sum,dram__bytes_read.sum$st \
                    python3 scripts/gpu_profile.py "$2" 2>&1 | grep -vE "^==PROF==|^\s*$|----" ; }
           # (PROF="SHAPE:M ...": other launches)
           for c in ${PROF:-8192x8192:1 8192x8192:16 8192x8192:64 28672x8192:64 8192x8192:256}; do
             pr "${c%%:*}" "${c##*:}"; done > "$OUT/prof.txt" 2>&1
           grep -E "^===|Duration|DRAM Throughput|L2 Cache Throughput|lts__t_bytes|dram__bytes|Achieved Occupancy|Issue Slots Busy|Registers Per|Grid Size|Block Size|Warp Cycles Per Issued|No Eligible|SM Active Cycles|Elapsed Cycles|stalled" "$OUT/prof.txt" \
             | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' ;;
    decode) # the M=1 row of the issue-6 table and the stream-tile tests (after a decode-only change)
           timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gemm_gpu.py \
             -k "stream_tiles_rings or large_shapes or graph" 2>&1 | tee "$OUT/decode_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out /tmp/bench-m1 > "$OUT/bench_m1.log" 2>&1; rc=$((rc | $?))
           cp /tmp/bench-m1/report.json "$OUT/bench-m1.json" 2>/dev/null
           grep -E "^1 |x stream" "$OUT/bench_m1.log" ;;
    bytes) # the byte-operand kernels (int8 x int8, fp8 x fp8 m16n8k32): their GPU tests, then the bench
           timeout 330 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gemm_gpu.py \
             -k "byte or quantized_activations" 2>&1 | tee "$OUT/bytes_tests.log" | tail -12
           rc=$((rc | PIPESTATUS[0])); bash "$0" bbench; rc=$((rc | $?)) ;;
    bbench) # W4A8 / W8A8 (int8 MMA) against W4A16 and cuBLAS fp16 from decode to large batch; fp8 weights
           # through the 16-bit path (fp8 mma.sync is emulated on Hopper)
           timeout 200 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 \
             --m 1,16,64,256,1024 --weight int4 --group-size 128 --act int8 --act-quant dynamic_token \
             --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out /tmp/b-w4a8-5 \
             2>&1 | tee -a "$OUT/bytes_bench.log" | grep -E "^ *(1|16|64|256|1024|4096) |x stream|WRONG"
           cp /tmp/b-w4a8-5/report.json "$OUT/bench-w4a8-shapes.json" 2>/dev/null
           b() { timeout 100 humming bench --shapes 8192x8192,28672x8192 --methods humming,cublas-fp16 --repeats 3 \
                   --no-plot --no-jit "$@" 2>&1 | tee -a "$OUT/bytes_bench.log" | grep -E "^ *(1|16|64|256|1024|4096) |x stream|WRONG"; }
           b --m 1,16,64,256,1024,4096 --weight int4 --group-size 128 --act int8 --act-quant dynamic_token --out /tmp/b-w4a8
           b --m 256,1024,4096 --weight int4 --group-size 128 --out /tmp/b-w4a16
           b --m 1,256,4096 --weight int8 --group-size 0 --act int8 --act-quant dynamic_token --out /tmp/b-w8a8
           b --m 1,256,4096 --weight e4m3 --group-size 0 --act e4m3 --act-quant dynamic_token --out /tmp/b-fp8
           b --m 1,256,4096 --weight int8 --group-size 0 --out /tmp/b-w8a16
           for d in w4a8 w4a16 w8a8 fp8 w8a16; do cp /tmp/b-$d/report.json "$OUT/bench-$d.json" 2>/dev/null; done ;;
    bsweep) # byte-operand tile ranking (int8 activations): int4 g128 and int8 per channel, prefill and M=16
           timeout 330 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gemm_gpu.py -k "byte" \
             2>&1 | tee "$OUT/bytes_tests.log" | tail -4; rc=$((rc | PIPESTATUS[0]))
           sw() { timeout 120 python3 scripts/gpu_sweep.py --act int8 "$@" 2>&1 | tee -a "$OUT/bsweep.log" | head -8 ; }
           sw --m 256 --groups b256 --shapes 8192x8192,28672x8192 --rounds 3 --json "$OUT/bsweep_w4_256.json"
           sw --m 2048 --groups b256 --shapes 8192x8192 --rounds 3 --json "$OUT/bsweep_w4_2048.json"
           sw --m 256 --groups b256 --shapes 8192x8192 --weight int8 --group 0 --rounds 3
           sw --m 16,64 --groups b16 --shapes 8192x8192,28672x8192 --rounds 3 ;;
    lean)  # after a run_ring change: the stream-tile tests, the decode tile ranking, the M=1 row
           timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gemm_gpu.py \
             -k "stream_tiles or steady_state or large_shapes or graph" 2>&1 | tee "$OUT/lean_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           timeout 200 python3 scripts/gpu_sweep.py --m 1 --groups decode --rounds 3 --json "$OUT/sweep_m1.json" \
             > "$OUT/sweep_m1.log" 2>&1; rc=$((rc | $?))
           grep -E "stream  \(base" -A3 "$OUT/sweep_m1.log" | cut -c1-150
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out /tmp/bench-m1 > "$OUT/bench_m1.log" 2>&1; rc=$((rc | $?))
           cp /tmp/bench-m1/report.json "$OUT/bench-m1.json" 2>/dev/null
           grep -E "^1 |x stream" "$OUT/bench_m1.log" ;;
    m1sum) # one token's activation sums by an MMA of ones (one_sums): this tree against old3/ (`git archive 6c6eb8a
           # | tar -x -C old3`), int3 / int4 g128 at M = 1, 2 and int2 at M = 1; then the ring GPU tests
           abbench m1s-int3 1 "new old" 50 "^(== |1 |2 )|stream " --shapes 4096x14336,8192x8192 --m 1,2 --weight int3 \
             --group-size 128
           abbench m1s-int4 1 "new old" 50 "^(== |1 |2 )|stream " --shapes 4096x14336,8192x8192 --m 1,2 --weight int4 \
             --group-size 128
           abbench m1s-int3b 1 "new old" 40 "^(== |1 )|stream " --shapes 8192x8192 --m 1 --weight int3 --group-size 128
           abbench m1s-int2 1 "new old" 40 "^(== |1 )|stream " --shapes 8192x8192 --m 1 --weight int2 --group-size 128
           timeout "${M1S_TEST_S:-230}" python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "stream_tiles_rings or steady_state or warp_layouts or activation_window or three_bit_rings or \
             batched_decode" 2>&1 | tee "$OUT/m1sum_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0])) ;;
    s34e)  # after the one-token copy of the loop for groups of 32 (folds of the token's column) and the scale
           # bounds' rewrite: the ring GPU tests of groups of 16-128, the format tests of e2m1 and groups of 16 / 32,
           # the planner's one-token rings; this tree against old3/ (9b4ea48) through the bench, MXFP4 at M=1;
           # int2 / int3 / int4 g128 at M=1 on 8192x8192
           timeout 260 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "((rings or steady_state) \
             and (g16 or g32 or g64 or g128)) or one_token_rings_of_2_bit or (weight_formats and (e2m1 or g16 or g32))" \
             2>&1 | tee "$OUT/s34e_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           abbench s34e-e8m0 1 "new old" 60 "^(== |1 )|stream " --shapes 4096x4096,4096x14336,8192x8192,14336x4096 \
             --m 1 --weight e2m1 --group-size 32 --scale-fmt e8m0
           widths s34e 8192x8192 "int3:128 int2:128 int4:128" ;;
    s34d)  # the session's last kernel change (two MMA chains for MXFP4's rings): the GPU tests of e2m1 weights, fp4
           # activations and the steady-state rings; this tree against old3/ (dffda50, the session's start) through
           # the bench, MXFP4 and NVFP4 at M = 1, 16; the issue-6 int4 rows with cuBLAS; int2 / int3 at M=1
           timeout 280 python3 -m pytest -q -p no:cacheprovider -m gpu tests -k "e2m1 or fp4 or steady_state" \
             2>&1 | tee "$OUT/s34d_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           for w in 32:e8m0 16:e4m3; do
             abbench s34d-${w##*:} 1 "new old" 80 "^(== |1 |16 )|stream " --shapes 4096x4096,4096x14336,8192x8192,14336x4096 \
               --m 1,16 --weight e2m1 --group-size ${w%%:*} --scale-fmt ${w##*:}
           done
           int4rows s34d
           widths s34d 8192x8192 "int3:128 int2:128" ;;
    s34b)  # layout v5 (e2m1 codes as magnitude and sign fields): every GPU test of e2m1 weights or fp4 activations
           # (formats, rings, prefill and warpgroup tiles, W4A4, checkpoints, the module); this tree against old3/
           # (FAST_SC4 alone) through the bench, MXFP4 and NVFP4 at M = 1, 16, 64
           timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests -k "e2m1 or fp4 or nvfp4 or mxfp4 or \
             checkpoints or quant_linear" 2>&1 | tee "$OUT/s34b_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           for w in 32:e8m0 16:e4m3; do
             abbench s34b-${w##*:} 1 "new old" 90 "^(== |1 |16 |64 )|stream " --shapes 4096x4096,4096x14336,8192x8192,14336x4096 \
               --m 1,16,64 --weight e2m1 --group-size ${w%%:*} --scale-fmt ${w##*:}
           done ;;
    fuzz)  # random layers through the planner (tests/test_gemm_fuzz_gpu.py): seeds FUZZ_FIRST.. (default 0), FUZZ_N of
           # them (default 120), within FUZZ_S seconds (default 540); FUZZ_K: pytest -k (default: both tests)
           HUMMING_FUZZ_FIRST=${FUZZ_FIRST:-0} HUMMING_FUZZ_SEEDS=${FUZZ_N:-120} timeout "${FUZZ_S:-540}" \
             python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py -k "${FUZZ_K:-random}" 2>&1 \
             | tee "$OUT/fuzz.log" | grep -E "passed|failed|FAILED|Error" | tail -40; rc=$((rc | PIPESTATUS[0])) ;;
    s45a)  # what no GPU has run yet (run it first, then s46a): scale groups that are not a multiple of 16 values
           # (padded to one) and K-shards whose groups straddle the ranks, both placed in whole groups
           # (gemm_mma_sync.kernel_layer; the activation gather, humming.ops.gemm._kernel_columns): their GPU tests,
           # act order's (the same gather), and their fuzz seeds (this GPU's plans and older GPUs')
           gputests s45a 240 "(weight_formats and (g8_ or g24_ or g40_)) or act_order"
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k "padded or k_shard" 2>&1 | tee "$OUT/s45a_fuzz.log" | tail -2; rc=$((rc | PIPESTATUS[0])) ;;
    s46a)  # the serving-engine interface end to end (humming.engine: GPTQ tensors, straddling K-shards of every rank),
           # QuantLinear, and a tuning run whose stored plan then computes the GEMM (humming.tune)
           timeout 420 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_engine.py tests/test_nn.py \
             tests/test_tune.py 2>&1 | tee "$OUT/s46a_tests.log" | tail -2; rc=$((rc | PIPESTATUS[0])) ;;
    s50a)  # (after s49a) HUMMING_MOE_XGATHER=1: MoE GEMMs of 16-bit activations read each routed row from its
           # token's row (GemmParams::x_rows, written by moe_route's XOFF; Cfg::XGATHER in the Loader, stage_x and
           # the lean rings' turns), no gather kernel; never run on a GPU. The MoE GPU tests and 16 random MoE layers
           # with it on, then the call launch by launch (three launches instead of four)
           HUMMING_MOE_XGATHER=1 timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py \
             tests/test_engine.py -k "moe or MoE" 2>&1 | tee "$OUT/s50a_moe.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           HUMMING_MOE_XGATHER=1 timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k random_moe 2>&1 | tee "$OUT/s50a_fuzz.log" | grep -E "passed|failed|FAILED|Error" | tail -20
           rc=$((rc | PIPESTATUS[0]))
           HUMMING_MOE_XGATHER=1 timeout 60 python3 scripts/gpu_moe_parts.py --m 1,16,256 \
             --json "$OUT/s50a-parts-qwen3.json" 2>&1 | tail -4 ;;
    s53a)  # (fifty-third session) MoE decode rings as an A100 plans them (sm_80-class code compiled for this GPU,
           # launched as an A100 would: 108 SMs' grids, plain launches): the planned 8 x 16 ring against the 8 x 64
           # and 8 x 128 rings that Hopper plans for layers of many experts, each checked against the reference;
           # Qwen3-30B-A3B's gate/up and down at 1-64 tokens (run with s52g: `gpu_run.sh s53a s52g`)
           for nk in 1536x2048 2048x768; do
             timeout 150 python3 scripts/gpu_moe_tiles.py --as a100 --n ${nk%x*} --k ${nk#*x} --m 1,4,16,64 --check \
               --only 16x8,64x2,128x1 --json "$OUT/s53a-$nk.json" 2>&1 | tee "$OUT/s53a-$nk.log" | tail -9
             rc=$((rc | PIPESTATUS[0]))
           done ;;
    s55e)  # (fifty-fifth session) crowded warpgroup launches after the activation-quantization kernel go
           # programmatically (a variant not kept: no change on the H100) against old3/ (`mkdir old3 && git archive
           # 1d99482 backends/nvidia | tar -x -C old3`), W4A8 e4m3 and int8 at 1-64 tokens
           abbench s55e-f 1 "new old" 100 "^(== |1 |16 |64 )|rror" --shapes 8192x8192,28672x8192 --m 1,16,64 \
             --weight int4 --group-size 128 --act e4m3
           abbench s55e-i 1 "new old" 100 "^(== |1 |16 |64 )|rror" --shapes 8192x8192,28672x8192 --m 1,16,64 \
             --weight int4 --group-size 128 --act int8 ;;
    s55d)  # (fifty-fifth session) which byte tiles int4 g128 made e4m3 operands (F2FP) should decode on: the
           # decode, 16- and 64-token byte groups (gpu_sweep.py, kernel alone) on 8192x8192 and 28672x8192
           for g in "1 bdec8" "16 bwg16" "64 bwg64"; do set -- $g
             timeout 150 python3 scripts/gpu_sweep.py --rounds 2 --shapes 8192x8192,28672x8192 --m $1 --groups $2 \
               --weight int4 --group 128 --act e4m3 --json "$OUT/s55d-$2.json" 2>&1 | tee "$OUT/s55d-$2.log" \
               | grep -vE "^\s*$" | tail -14
           done ;;
    s55c)  # (fifty-fifth session) 4-bit codes made fp8 operands by table lookups (three PRMTs a register; a variant not
           # kept: apply it to this tree first) against the fp16 pairs and F2FP of b7a32a2 (old3/: `mkdir old3 && git
           # archive b7a32a2 backends/nvidia | tar -x -C old3`): the GPU tests of integer codes made fp8 operands,
           # then the bench alternated twice
           gputests s55c 300 "(byte_operands and (e4m3 or e5m2) and (int4 or uint4 or int2)) or \
(byte_wgmma_tiles and int4 and -2])"
           abbench s55c 2 "new old" 150 "^(== |1 |16 |64 |1024 )|rror" --shapes 8192x8192,28672x8192 \
             --m 1,16,64,1024 --weight int4 --group-size 128 --act e4m3 ;;
    s55b)  # (fifty-fifth session) the activation-quantization kernel lets the GEMM after it start (griddepcontrol.
           # launch_dependents first): its GPU tests and the quantized-activation GEMM tests, then this tree against
           # old3/ (`mkdir old3 && git archive e7555bc backends/nvidia | tar -x -C old3`), alternated twice, on W4A8
           # (e4m3 and int8 activations) and W8A8 fp8 at 1-16 tokens
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_act_quant.py 2>&1 \
             | tee "$OUT/s55b_aq_tests.log" | tail -2; rc=$((rc | PIPESTATUS[0]))
           gputests s55b 200 "byte_operands and (int4_g128 or e4m3_per)"
           abbench s55b-f 2 "new old" 120 "^(== |1 |4 |16 )|rror" --shapes 8192x8192,4096x4096 --m 1,4,16 \
             --weight int4 --group-size 128 --act e4m3
           abbench s55b-i 2 "new old" 120 "^(== |1 |4 |16 )|rror" --shapes 8192x8192,4096x4096 --m 1,4,16 \
             --weight int4 --group-size 128 --act int8
           abbench s55b-e 1 "new old" 120 "^(== |1 |4 |16 )|rror" --shapes 8192x8192 --m 1,4,16 --weight e4m3 \
             --group-size 0 --scale-fmt fp32 --act e4m3 ;;
    s58a)  # (fifty-eighth session) the register rings' activation copies: one token on rings of one warp per K run
           # (WN == 1: the short-K int4 rings of per-channel / g256 / bf16 layers) copies row 0 alone, and 2-8
           # tokens on rings of several warps per run copy their further rows unrolled (dense layers): 60-200
           # instructions a turn fewer. The ring GPU tests, then this tree against old3/ (`mkdir old3 && git archive
           # a9699a2 backends/nvidia | tar -x -C old3`) through the bench, alternated twice: int4 per channel on the
           # short-K layers, int4 g128 at 2-8 tokens
           gputests s58a 300 "one_token_rings or three_bit_rings or stream_tiles_rings or ring_steady_state or \
batched_decode or register_rings"
           abbench s58a-h 2 "new old" 120 "^(== |[0-9]+ )|rror" --shapes 4096x4096,4096x2048 --m 1,4 \
             --weight int4 --group-size 0 --scale-fmt fp32
           abbench s58a-m 2 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 8192x8192,4096x14336 --m 2,4,8 \
             --weight int4 --group-size 128 ;;
    s67b)  # (sixty-seventh session, for an H200; ran there before the cap by bandwidth per SM, as two 16-row CTAs per SM
           # against one: figures in docs/perf-notes.md) one token over a long K on the 16-row ring: this tree (on the
           # H200 at most 1.25 such CTAs per SM, long_k_one_ring_ctas_per_sm) against two (alt: the rule before), through
           # the bench, twice; then s60e's A/B (old3 at eaed702)
           alt_after "LONG_K_ONE_RING_HIGH_BW_CTAS_PER_SM = 1.25" "LONG_K_ONE_RING_HIGH_BW_CTAS_PER_SM = 2"$'\n'
           abbench s67b 2 "new alt" 60 "^(== |1 )|rror" --shapes 4096x8192,4224x8192,4096x14336,3072x14336,2560x8192 \
             --m 1 --weight int4 --group-size 128
           abbench s60e-s 1 "new old" 120 "^(== |[0-9]+ )|rror" --shapes 4608x3584,5120x4096,9216x3072,10240x4096 \
             --m 1 --weight int4 --group-size 128
           abbench s60e-w 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 8192x14336,8192x28672,5120x13824,10240x8192 \
             --m 2,4,6,8 --weight int4 --group-size 128 ;;
    s73v)  # (seventy-third session, any sm_90 GPU) 9-16 tokens take three groups along K by default also where the
           # launch splits K in two, summed in clusters (wg16_groups_along_k: 45-66 tiles of 64 rows on 132 SMs; s70c on
           # an H100: 4096x4096 / 4096x14336 gained, 2048x8192's four slices lost): the chained-launch, groups and
           # cluster tests, then one / three groups on the layers of 48 and 56 tiles the rule now takes and 4096x4096,
           # alternated twice
           gputests s73v 240 "programmatic_dependent_launch or groups_along_k or split_k_in_clusters"
           envbench s73v 2 "one=HUMMING_WG16_KG=1 three=HUMMING_WG16_KG=3" 50 "^(== |12 |16 )|rror" \
             --shapes 3072x8192,3584x8192,3072x14336,4096x4096 --m 12,16 --weight int4 --group-size 128 ;;
    s73t)  # (seventy-third session, any sm_90 GPU; ran on an H100: three and four slices lost 9-15 %, figures at
           # WG16_KG_DEFAULT) groups along K where the 16-token launch splits K in three (40-44
           # tiles of 64 rows on 132 SMs, summed in clusters of three; not planned: wg16_groups_along_k) and in four
           # (2048x8192, which lost in s70c), one / three groups at M = 12 / 16, alternated twice
           envbench s73t 2 "one=HUMMING_WG16_KG=1 three=HUMMING_WG16_KG=3" 50 "^(== |12 |16 )|rror" \
             --shapes 2560x8192,2560x14336,2816x8192,2048x14336 --m 12,16 --weight int4 --group-size 128 ;;
    s79r)  # (seventy-ninth session, for the next) by the card that came: on an H200 the issue's table (s74h), then
           # s79l; on any other sm_90 card s79l, then gpu3c (the GPU suite's last third, not run since the
           # sixty-seventh session's tree)
           if grep -q H200 "$OUT/gpu.txt"; then bash "$0" s74h; rc=$((rc | $?)); bash "$0" s79l
           else bash "$0" s79l; rc=$((rc | $?)); gpuslice 2 3 330; fi
           rc=$((rc | $?)) ;;
    s79q)  # (seventy-ninth session) by the card that came: on an H200 the issue's table (s74h), s79t, then the rate
           # probe (s77m); on any other sm_90 card s79t, s77m, then gpu3a's third of the GPU suite in what is left
           if grep -q H200 "$OUT/gpu.txt"; then bash "$0" s74h; rc=$((rc | $?)); bash "$0" s79t; rc=$((rc | $?))
             bash "$0" s77m
           else bash "$0" s79t; rc=$((rc | $?)); bash "$0" s77m; rc=$((rc | $?)); gpuslice 0 3 240; fi
           rc=$((rc | $?)) ;;
    s79l)  # (seventy-ninth session, any sm_90 GPU) the HUMMING_LAZY_CORR build (HUMMING_GEMM_DEFINES: the one-token
           # loops of 1- and 2-bit codes sum the correction's quads once, after the loop; 191 -> 176 loop
           # instructions for the H200's int2 g128 ring on the CPU): its GPU test, then the W2A16 layers at one token
           # through the bench, plain and lazy builds alternated twice (int2 g128 and per channel, int1 g128)
           timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k "lazy_correction_build" 2>&1 | tee "$OUT/s79l_tests.log" | tail -2
           rc=$((rc | PIPESTATUS[0]))
           for g in 128 0; do  # (two rounds of groups of 128, the issue's W2A16; one per channel)
             envbench "s79l-g$g" $(( g ? 2 : 1 )) "plain=HUMMING_GEMM_DEFINES= lazy=HUMMING_GEMM_DEFINES=HUMMING_LAZY_CORR" \
               60 "^(== |1 )|stream " --shapes 8192x8192,4096x14336,14336x4096 --m 1 --weight int2 --group-size $g
           done
           envbench s79l-i1 1 "plain=HUMMING_GEMM_DEFINES= lazy=HUMMING_GEMM_DEFINES=HUMMING_LAZY_CORR" 60 \
             "^(== |1 )|stream " --shapes 8192x8192 --m 1 --weight int1 --group-size 128 ;;
    s79t)  # (seventy-ninth session, any sm_90 GPU) s78t's tests, now with Turing's int8 g64 and the H200's int7 g64
           # one-token tiles at three slots, and the MoE decode tiles of 3- and 5-7-bit codes at three slots as the A100 /
           # L40S plan them (four_slots_spill), and the A100's byte tiles of groups of 32 values at 33-128 tokens (BK
           # = 64), against the reference
           bash "$0" s78t; rc=$((rc | $?))
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py \
             -k "decode_tiles_at_three_slots" 2>&1 | tee "$OUT/s79t_moe.log" | tail -2
           rc=$((rc | PIPESTATUS[0]))
           timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k "quarter_group_byte_tiles" 2>&1 | tee "$OUT/s79t_bytes.log" | tail -2
           rc=$((rc | PIPESTATUS[0])) ;;
    s78q)  # (seventy-eighth session) by the card that came: on an H200 the issue's table (s74h), s78t, then the rate
           # probe (s77m); on any other sm_90 card s78t, s77m, then gpu3a's third of the GPU suite in what is left
           if grep -q H200 "$OUT/gpu.txt"; then bash "$0" s74h; rc=$((rc | $?)); bash "$0" s78t; rc=$((rc | $?))
             bash "$0" s77m
           else bash "$0" s78t; rc=$((rc | $?)); bash "$0" s77m; rc=$((rc | $?)); gpuslice 0 3 240; fi
           rc=$((rc | $?)) ;;
    s78t)  # (seventy-eighth session, any sm_90 GPU) Turing's stream tiles at three register slots as the T4 plans them,
           # compiled for this GPU, against the reference: 8-bit codes min_blocks does not budget, and now sub-byte
           # codes in groups of 64 (four_slots_spill: four slots spilled in the loop at the 80-register floor); uint7
           # g64 zero points on the long-K ring and 5- / 7-bit zero points in groups of 16 on the register-streaming
           # tiles at three slots as the H200 / L40S / A100 plan them (four spilled)
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k "turing_decode_tiles_at_three_slots or three_slots_where_four_spilled" 2>&1 \
             | tee "$OUT/s78t_tests.log" | tail -2
           rc=$((rc | PIPESTATUS[0])) ;;
    s77q)  # (seventy-seventh session) by the card that came: on an H200 s74h, s77m, then a sixth of the GPU suite;
           # on any other sm_90 card s77m, then gpu3a's third of the GPU suite in what is left (the wave steps now
           # plan the sixteen-warp tile at more M, which the fuzz's layers meet)
           if grep -q H200 "$OUT/gpu.txt"; then bash "$0" s74h; rc=$((rc | $?)); bash "$0" s77m; rc=$((rc | $?))
             gpuslice 0 6 200
           else bash "$0" s77m; rc=$((rc | $?)); gpuslice 0 3 300; fi; rc=$((rc | $?)) ;;
    s77m)  # (seventy-seventh session, any sm_90 GPU) the tensor pipes' rates with nothing else to do: wgmma m64nNk16
           # (N = 8-256) and mma.sync m16n8k16 (4-16 warps, one to four chains). At one token a register ring uses
           # one of an m16n8k16's eight columns: 8192x8192 of 2-bit codes is 496 of them a sub-partition, so this
           # says how much of int2's 8.3 us (H100 and H200 alike, against its 5.5 us stream on the H200) the
           # tensor pipe alone takes, and whether m64n8k16 multiplies more weights a cycle
           timeout 150 python3 scripts/gpu_wgmma_rate.py --json "$OUT/s77m.json" 2>&1 | tee "$OUT/s77m.log"
           rc=$((rc | PIPESTATUS[0])) ;;
    s77h)  # (seventy-seventh session, for an H200: no gpu-marked test has run on one since the sixty-seventh) the
           # issue's table (s74h), then a sixth of the GPU suite (every sixth test in collection order) in what is left
           bash "$0" s74h; rc=$((rc | $?))
           gpuslice 0 6 270; rc=$((rc | $?)) ;;
    s76r)  # (seventy-sixth session, after the first call) s76t, then on an H200 the issue's table (s74h), on any
           # other sm_90 card s76v
           bash "$0" s76t; rc=$((rc | $?))
           if grep -q H200 "$OUT/gpu.txt"; then bash "$0" s74h; else bash "$0" s76v; fi; rc=$((rc | $?)) ;;
    s76t)  # (seventy-sixth session, any sm_90 GPU) the GPU tests of the sixteen-warp tile (its rule now leaves rows
           # that pad to an odd number of 128-row blocks alone: s76q found the launcher refusing 8320 / 6016 / 5248) and
           # of the wave steps (which now cost their 256-token steps as that tile over a short K), and byte operands
           # above 512 tokens on rows that pad to an odd count of 128 (WG_128 there, not BYTE_WG_LARGE: the CPU fuzz's
           # Launcher check found that one)
           gputests s76t 300 "short_k_layers_on_the_sixteen_warp_tile or large_m_steps_by_their_waves or \
             byte_operands_above_512_tokens_by_their_padded_rows" ;;
    s76v)  # (seventy-sixth session, any sm_90 GPU) the wave steps costing the sixteen-warp tile (WAVE_WIDE, fitted to
           # s76w's rows) at M that s76w did not run, against the seventy-fifth session's steps (HUMMING_WAVE_WIDE=0),
           # alternated twice (rows whose plans agree are the noise)
           envbench s76v 2 "steps=HUMMING_WAVE_WIDE=0 wide=HUMMING_WAVE_WIDE=1" 150 "^(== |[0-9]+ )|rror" \
             --shapes 32768x512,24576x1536,6144x2048,12288x1024 \
             --m 270,350,440,520,620,800,880,1030,1130,1300,1390,1540,2060 --weight int4 --group-size 128 ;;
    s76q)  # (seventy-sixth session) the first call's queue by the card that came: s75c first; then on an H200 the
           # issue's table (s74h), on any other sm_90 card s76w
           bash "$0" s75c; rc=$((rc | $?))
           if grep -q H200 "$OUT/gpu.txt"; then bash "$0" s74h; else bash "$0" s76w; fi; rc=$((rc | $?)) ;;
    s76c)  # (seventy-sixth session, any sm_90 GPU) s75c (the sixteen-warp tile's GPU tests, kv_b / q_b with
           # cuBLAS), then s76w
           bash "$0" s75c; rc=$((rc | $?)); bash "$0" s76w; rc=$((rc | $?)) ;;
    s76w)  # (seventy-sixth session, any sm_90 GPU; ran on an H100 on 3b43b50) the wave steps over a short K
           # costing their 256-token steps as the sixteen-warp tile (HUMMING_WAVE_WIDE=1: WG_256_WIDE in place of the
           # fitted 160-224-token tiles and WG_128 at most such steps) against the seventy-fifth session's steps (=0),
           # alternated twice, at the M where the plans differ, on deepseek-v3's kv_b / q_b, qwen3's qkv and a
           # 12288x1024 layer
           envbench s76w 2 "steps=HUMMING_WAVE_WIDE=0 wide=HUMMING_WAVE_WIDE=1" 60 "^(== |[0-9]+ )|rror" \
             --shapes 32768x512,24576x1536,5120x2048,12288x1024 --m 300,400,550,600,650,850,1100,1300,1600 \
             --weight int4 --group-size 128 ;;
    s75c)  # (seventy-fifth session, any sm_90 GPU, little device time) s75v's GPU tests, then deepseek-v3's kv_b and q_b
           # at 1024 / 4096 tokens with cuBLAS
           gputests s75c 150 "short_k_layers_on_the_sixteen_warp_tile or large_m_steps_by_their_waves"
           timeout 45 humming bench --shapes 32768x512,24576x1536 --m 1024,4096 --weight int4 --group-size 128 \
             --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/s75c-bench" 2>&1 \
             | tee "$OUT/s75c-bench.log" | grep -E "^(== |1024 |4096 )" ;;
    s75v)  # (seventy-fifth session, any sm_90 GPU) the planner's sixteen-warp tile over a short K (WG_256_WIDE,
           # wide_256): its GPU tests and the wave steps' (qwen3's qkv takes it), then the serving presets' short-K
           # layers (deepseek-v3's q_b / kv_b, qwen3's qkv) and two longer ones at 256 / 1024 / 4096 tokens with cuBLAS
           gputests s75v 240 "short_k_layers_on_the_sixteen_warp_tile or large_m_steps_by_their_waves"
           timeout 120 humming bench --shapes 24576x1536,32768x512,5120x2048,8192x8192,36864x7168 --m 256,1024,4096 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/s75v-bench" 2>&1 | tee "$OUT/s75v-bench.log" | grep -E "^(== |256 |1024 |4096 )" ;;
    s75x)  # (seventy-fifth session, any sm_90 GPU; ran on an H100 on 22cabf1) s75w's bench at 256 / 600 / 2048 tokens
           envbench s75x 1 "base= wide4=HUMMING_WG256_WIDE=4 wide3=HUMMING_WG256_WIDE=3 base2=" 70 "^== |rror" \
             --preset deepseek-v3,qwen3-30b-a3b,llama3-8b,llama3-70b --kind dense --m 256,600,2048 --weight int4 \
             --group-size 128 ;;
    s75w)  # (seventy-fifth session, any sm_90 GPU; ran on an H100 on 22cabf1) above 256 tokens: the planner's
           # 256-token tile (WG_256) against 128 tokens x 256 rows on sixteen warps (WG_256_WIDE, which won 14 % on kv_b in s74k), kernel alone on eight
           # layers of the serving presets, then the presets' dense layers through the bench with the planner taking
           # it where it takes WG_256 (HUMMING_WG256_WIDE = its stages), then the first again (from 9e77a5b on the
           # planner itself takes it over a K of at most 2048: for WG_256 there, HUMMING_WG256_WIDE=0)
           timeout 150 python3 scripts/gpu_sweep.py --m 1024,4096 --groups wide256 --rounds 3 \
             --shapes 32768x512,24576x1536,1536x7168,5120x2048,6144x4096,4096x14336,8192x8192,28672x4096 \
             --json "$OUT/s75w-sweep.json" > "$OUT/s75w-sweep.log" 2>&1; tail -3 "$OUT/s75w-sweep.log"
           envbench s75w 1 "base= wide4=HUMMING_WG256_WIDE=4 wide3=HUMMING_WG256_WIDE=3 base2=" "${S75W_BENCH_S:-55}" \
             "^== |rror" --preset deepseek-v3,qwen3-30b-a3b,llama3-8b,llama3-70b --kind dense --m 1024,4096 \
             --weight int4 --group-size 128 ;;
    s74q)  # (seventy-fourth session) the next call's queue by the card that came: on an H200 the issue's table
           # (s74h) and the 16-token loops' stall reasons (s71p); on any other sm_90 card s74k
           if grep -q H200 "$OUT/gpu.txt"; then bash "$0" s74h; rc=$((rc | $?)); bash "$0" s71p
           else bash "$0" s74k; fi; rc=$((rc | $?)) ;;
    s74k)  # (seventy-fourth session, any sm_90 GPU) above 256 tokens, where the issue asks for 0.6x cuBLAS fp16: tiles
           # for a short K at many tokens (deepseek-v3's kv_b 32768x512; kernel alone, three rounds), then the serving
           # presets' dense layers at 256-4096 tokens with cuBLAS fp16 through the bench (rows echoed as they come)
           timeout 90 python3 scripts/gpu_sweep.py --shapes 32768x512 --m 1024,4096 --groups kvb --rounds 3 \
             --json "$OUT/s74k-sweep.json" 2>&1 | tee "$OUT/s74k-sweep.log" | grep -v "^      "
           timeout "${S74K_BENCH_S:-170}" humming bench --preset deepseek-v3,qwen3-30b-a3b,llama3-8b,llama3-70b \
             --kind dense --m 256,1024,4096 --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 \
             --no-plot --no-jit --out "$OUT/s74k" 2>&1 | tee "$OUT/s74k.log" | grep -E "^(== |256 |1024 |4096 )" ;;
    s74h)  # (seventy-fourth session, for an H200 with little device time) the issue's int4 rows with cuBLAS on this
           # tree (the table of record; groups along K never ran on the H200), then W8 / e4m3 / W3 / W2 at M=1
           int4rows s74h
           widths s74h-w 8192x8192 "int8:0 e4m3:0 int3:128 int2:128" ;;
    s73r)  # (seventy-third session; ran on an H100) the issue's int4 rows with cuBLAS on this tree (4096x4096 and
           # 4096x14336 at 16 tokens now on three groups along K, two slices summed in clusters)
           int4rows s73r ;;
    s71h)  # (seventy-first session, for an H200) the issue's int4 rows with cuBLAS on this tree (8192x8192 M=16 now on
           # three groups along K by default), groups along K (one / two / three) at 16 tokens on the three layers
           # they are planned for (H100: s69k, s70k) and on 14336x4096 (the 128-row tile, 112 tiles) and 4096x14336
           # (64 tiles, two slices summed in a cluster), alternated twice, and the other widths at M=1
           int4rows s71h
           envbench s71h 2 "one=HUMMING_WG16_KG=1 two=HUMMING_WG16_KG=2 three=HUMMING_WG16_KG=3" 50 "^(== |16 )|rror" \
             --shapes 8192x8192,7168x8192,6144x4096,14336x4096,4096x14336 --m 16 --weight int4 --group-size 128
           widths s71h-w 8192x8192 "int8:0 e4m3:0 int3:128 int2:128" ;;
    s71g)  # (seventy-first session, any sm_90 GPU; an H200 first; passed on an H100 in the seventy-third) the GPU tests
           # of groups along K (the 16-token default, the 64-token twin, two slices summed in a cluster), of the
           # planner paths, the TMA and cluster tiles, the
           # long-K ring, and the planner fuzz
           gputests s71g-kg 200 "groups_along_k or split_k_in_clusters"
           gputests s71g-plan 200 "large_m_steps_by_their_waves or wide_token_ranges or narrow_layers_split_k or falls_back_to_clusters or long_k_on_the_16_row_ring"
           gputests s71g-tma 100 "wgmma_tma_tiles or wgmma_tma_clusters"
           HUMMING_FUZZ_SEEDS=20 timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k through_the_planner 2>&1 | tee "$OUT/s71g_fuzz.log" | tail -2; rc=$((rc | PIPESTATUS[0])) ;;
    s71f)  # (seventy-first session, the short form for a call with little device time left; any sm_90 GPU) the GPU tests of
           # groups along K (the 64-token twin and the cluster sums among them, not yet run), then one round of one /
           # three groups at M=16 on the three layers the default gives three
           gputests s71f-kg 150 "groups_along_k or split_k_in_clusters"
           envbench s71f 1 "one=HUMMING_WG16_KG=1 three=HUMMING_WG16_KG=3" 45 "^(== |16 )|rror" \
             --shapes 8192x8192,7168x8192,6144x4096 --m 16 --weight int4 --group-size 128 ;;
    s71p)  # (seventy-first session, for an H200) where the 16-token loops stall on the H200 (ncu through the prof part:
           # issue slots busy, the stall reasons per issue, pipe and memory throughput): 8192x8192 (three groups along
           # K), 4096x14336 (64 tiles, five slices in clusters) and 28672x8192 (the 128-row tile) at M=16 -- what would
           # decide raw codes with activation sums (docs/perf-notes.md, seventy-first session; the same on an H100 in
           # the seventy-fourth, with 4096x4096 first: issue slots 23-36 % busy, long-scoreboard stalls first)
           PROF="8192x8192:16 4096x14336:16 28672x8192:16" bash "$0" prof ;;
    s70m)  # (seventieth session, for any sm_90 GPU; ran on an H100 in the seventy-third: the groups lost 5-10 %,
           # figures at WG_64_KG in gemm_mma_sync.py) 33-64 tokens on WG_64_TMA's
           # cp.async twin with three groups along K (WG_64_KG, HUMMING_WG64_KG=3) where its tiles fill 2/3 of the SMs
           # to all of them, against WG_64_TMA's split launch; the groups' GPU tests first (now with the 64-token twin)
           gputests s70m 200 "groups_along_k"
           envbench s70m 2 "tma=HUMMING_WG64_KG=1 kg3=HUMMING_WG64_KG=3" 60 "^(== |33 |48 |64 )|rror" \
             --shapes 8192x8192,7168x8192,6144x4096 --m 33,48,64 --weight int4 --group-size 128 ;;
    s70c)  # (seventieth session, for any sm_90 GPU; ran on an H100 in the seventy-third: 64 tiles in two slices won,
           # 32 in four lost; figures at WG16_KG_DEFAULT) groups along K whose launch splits K two ways now sum in a
           # cluster (s70k: through the workspace they lost on 4096x4096 / 4096x14336, 64 tiles): HUMMING_WG16_KG = 1 / 3
           # at M = 12 / 16, alternated twice (the groups' GPU tests, in s70m, cover the cluster sum)
           envbench s70c 2 "one=HUMMING_WG16_KG=1 three=HUMMING_WG16_KG=3" 50 "^(== |12 |16 )|rror" \
             --shapes 4096x4096,4096x14336,2048x8192 --m 12,16 --weight int4 --group-size 128 ;;
    s70k)  # (seventieth session; ran on an H100) groups along K (HUMMING_WG16_KG = 1 / 3) on more layers whose 16-token
           # tiles fit one wave at M = 12 / 16, alternated twice (s69k: 8192x8192, 4096x14336, 14336x4096)
           envbench s70k 2 "one=HUMMING_WG16_KG=1 three=HUMMING_WG16_KG=3" 55 "^(== |12 |16 )|rror" \
             --shapes 4096x4096,7168x8192,6144x4096,5120x8192 --m 12,16 --weight int4 --group-size 128 ;;
    s70a)  # (seventieth session; ran on an H100 from the tree now on the branch s70-wgraw, where Tile.raw lives: raw
           # lost everywhere, 2-17 %, figures in docs/perf-notes.md) raw codes on the folding warpgroup tiles (Tile.raw: one LOP3 per pair, a
           # second wgmma per k16 step on a constant; the 16-token tile's loop 338 -> 271 instructions a stage on the
           # CPU): their GPU tests first, then the bench under HUMMING_WG_RAW = 0 / 1 on the issue's five layers at
           # M = 16 / 32, alternated twice
           gputests s70a 200 "wgmma_raw_codes"
           envbench s70a 2 "dq=HUMMING_WG_RAW=0 raw=HUMMING_WG_RAW=1" 90 "^(== |16 |32 )|rror" \
             --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 16,32 --weight int4 --group-size 128
           envbench s70z 1 "dq=HUMMING_WG_RAW=0 raw=HUMMING_WG_RAW=1" 60 "^(== |16 )|rror" \
             --shapes 8192x8192,28672x8192 --m 16 --weight uint4 --group-size 128 --zero-point int ;;
    s69m)  # (sixty-ninth session; NOT RUN there: no device came; s69k ran on an H100 in the seventieth) s69k's least: 8192x8192 and 4096x14336 at M=16, one and three groups along K,
           # alternated twice, then the groups' GPU tests of fp16 int4 g128
           envbench s69m 2 "one=HUMMING_WG16_KG=1 three=HUMMING_WG16_KG=3" 40 "^(== |16 )|rror" \
             --shapes 8192x8192,4096x14336 --m 16 --weight int4 --group-size 128
           gputests s69m 100 "groups_along_k and fp16 and g128" ;;
    s69k)  # (sixty-ninth session, for an H200; NOT RUN there: no device came; ran on an H100 in the seventieth) Tile.kg: 9-16 tokens on the 16-token warpgroup tiles with two or three groups of four
           # warps along K in one CTA (stages of their own, summed in shared memory), where the planner splits K
           # through the workspace (8192x8192: three slices) or in clusters (4096x14336: five): the bench
           # under HUMMING_WG16_KG = 1 / 2 / 3, alternated twice, then the GPU tests of the groups and of the other
           # split warpgroup launches (the kernel's thread index now goes through tix())
           envbench s69k 2 "one=HUMMING_WG16_KG=1 two=HUMMING_WG16_KG=2 three=HUMMING_WG16_KG=3" 50 "^(== |9 |16 )|rror" \
             --shapes 8192x8192,4096x14336,14336x4096 --m 9,16 --weight int4 --group-size 128
           gputests s69k 150 "groups_along_k or split_k_in_clusters" ;;
    s68f)  # (sixty-eighth session, for an H200; ran on an H100 there: alt worse, 7168x8192 14.6 -> 15.8 us, 8192x8192
           # even) 9-16 tokens on layers whose three K slices meet in the workspace
           # (8192x8192, 7168x8192: 3 x 128 / 3 x 112 CTAs, above the clusters' 2.5 per SM) as two slices of 4096
           # columns summed in clusters (alt: FIT_16_MAX_SLICE_K 4096). Measured on the H100 only (s54c: 8192x8192
           # M = 9 / 16 16.3 / 16.6 -> 16.6 / 16.8-16.9); the H200's faster stream leaves the workspace sum a larger
           # share. Through the bench, alternated twice
           alt_after "FIT_16_MAX_SLICE_K = 2048" "FIT_16_MAX_SLICE_K = 4096"
           abbench s68f 2 "new alt" 60 "^(== |[0-9]+ )|rror" --shapes 8192x8192,7168x8192 --m 9,16 --weight int4 \
             --group-size 128 ;;
    s68m)  # (sixty-eighth session, any GPU; ran on an H100: the clusters still a fifth slower; kernel alone) the 64-token clusters along N that multicast each stage's
           # activations, measured last in the fifteenth session (slower then: 8192x8192 29.9 against 25.6 us), against
           # today's WG_64_TMA (shared refills, sixty-sixth session) and WG_64: gpu_sweep.py m64c at M=64, two rounds
           timeout 240 python3 scripts/gpu_sweep.py --groups m64c --m 64 --rounds 2 --shapes 8192x8192,14336x4096 \
             --json "$OUT/s68m_sweep.json" 2>&1 | tee "$OUT/s68m.log" | grep -v "^      "; rc=$((rc | PIPESTATUS[0])) ;;
    s67t)  # (sixty-seventh session, for an H200; ran on an H100 in the sixty-eighth) the issue's int4 rows with cuBLAS and the other widths at M=1 (s62g without
           # its old-method rows), then the planner paths' GPU tests, the TMA tiles' GPU tests and the planner fuzz
           int4rows s67t
           widths s67t-w 8192x8192 "int8:0 e4m3:0 int3:128 int2:128"
           gputests s67t-plan 200 "large_m_steps_by_their_waves or wide_token_ranges or narrow_layers_split_k or falls_back_to_clusters"
           gputests s67t-tma 100 "wgmma_tma_tiles or wgmma_tma_clusters or split_k_in_clusters"
           HUMMING_FUZZ_SEEDS=20 timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k through_the_planner 2>&1 | tee "$OUT/s67t_fuzz.log" | tail -2; rc=$((rc | PIPESTATUS[0])) ;;
    s67a)  # (sixty-seventh session; ran on the H200 from the branch s67-wstages, which holds Tile.wstages, its GPU test,
           # gpu_sweep.py's p64w group and this part's body: 4-6 % slower, figures in docs/perf-notes.md) WG_64_TMA's
           # weights in a ring of their own beside its three stages of activations: the GPU test, the kernel alone
           # (wstages 0 / 4 / 5 / 6), the planner's WG_64_TMA at wstages 6 and 5 against the tree through the bench
           echo "s67a: run it from the branch s67-wstages (git checkout s67-wstages)" ;;
    s66a)  # (sixty-sixth session; not run as such: its TMA, cluster and planner-path GPU tests and the fuzz ran in the
           # sixty-seventh's s67t on the H200, all passed; any GPU) this tree, whose four-warp TMA tiles without
           # clusters share their refills (SHARED_REFILL: the machine code of s65r's alt2, which ran), against old3 (`git
           # archive 822c246 backends | tar -x -C old3` here): the TMA tiles' GPU tests (those in clusters too), the bench
           # A/B once at M = 40 / 64 (int4 g128 fp16; 4096x14336 runs in clusters), the planner paths' GPU tests, the
           # planner fuzz
           gputests s66a-tma 120 "wgmma_tma_tiles or wgmma_tma_clusters or split_k_in_clusters"
           abbench s66a 1 "new old" 40 "^(== |[0-9]+ )|rror" --shapes 8192x8192,14336x4096,4096x14336 \
             --m 40,64 --weight int4 --group-size 128
           gputests s66a-plan 80 "large_m_steps_by_their_waves or wide_token_ranges or narrow_layers_split_k or falls_back_to_clusters"
           HUMMING_FUZZ_SEEDS=10 timeout 50 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k through_the_planner 2>&1 | tee "$OUT/s66a_fuzz.log" | tail -2 ;;
    s66c)  # (sixty-sixth session; ran in the sixty-eighth on an H100: a tie, 14336x4096 0.1-0.3 us ahead, not landed) SHARED_REFILL's weight copies on one path (alt: `for (nb = part; nb <
           # BN / 16; nb += 4)` instead of a branch per block, each with its own address arithmetic: the main loop 337 ->
           # 265 instructions, CPU): the TMA tiles' GPU tests on alt, then the bench A/B twice at M = 40 / 64
           rm -rf alt && mkdir -p alt && cp -r backends/nvidia alt/humming_nvidia
           python3 - <<'PY'
p = "alt/humming_nvidia/include/humming/kernels/gemm_mma_sync.cuh"
s = open(p).read()
a = """#pragma unroll
    for (int nb = 0; nb < BN / 16; ++nb)
      if (part < 0 || nb % 4 == part)
        tma::load_1d(base + A_BYTES + nb * (KB * WPL * 128), w + static_cast<i64>(nb) * kblocks * (WPL * 32),
                     KB * WPL * 128, bar);
"""
b = """    if constexpr (SHARED_REFILL) {
#pragma unroll 1
      for (int nb = part; nb < BN / 16; nb += 4)
        tma::load_1d(base + A_BYTES + nb * (KB * WPL * 128), w + static_cast<i64>(nb) * kblocks * (WPL * 32),
                     KB * WPL * 128, bar);
    } else {
#pragma unroll
      for (int nb = 0; nb < BN / 16; ++nb)
        tma::load_1d(base + A_BYTES + nb * (KB * WPL * 128), w + static_cast<i64>(nb) * kblocks * (WPL * 32),
                     KB * WPL * 128, bar);
    }
"""
assert s.count(a) == 1
open(p, "w").write(s.replace(a, b))
PY
           PYTHONPATH=$PWD/alt timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py \
             -k "wgmma_tma_tiles" 2>&1 | tee "$OUT/s66c_tests_alt.log" | tail -2
           abbench s66c 2 "new alt" 40 "^(== |[0-9]+ )|rror" --shapes 8192x8192,14336x4096 --m 40,64 --weight int4 \
             --group-size 128 ;;
    s66b)  # (sixty-sixth session; ran in the sixty-eighth on an H100: a tie, 4096x14336 0.1-0.2 us ahead, not landed) SHARED_REFILL in clusters too (alt: the kernel's condition without
           # CLUSTER == 1; warp 0 alone waits on the stage's empty barrier before its multicast activations, the other
           # warps' copies write their own CTA's stage): the cluster tiles' GPU tests on alt, then the bench A/B twice
           # where the planner sums WG_64_TMA's K slices in clusters (at most 4096 rows, K >= 12288: 4096x14336,
           # 2048x14336 at M = 40 / 64)
           rm -rf alt && mkdir -p alt && cp -r backends/nvidia alt/humming_nvidia
           sed -i 's/static constexpr bool SHARED_REFILL = TMA \&\& WN == 4 \&\& CLUSTER == 1;/static constexpr bool SHARED_REFILL = TMA \&\& WN == 4;/' \
             alt/humming_nvidia/include/humming/kernels/gemm_mma_sync.cuh
           grep -q "SHARED_REFILL = TMA && WN == 4;" alt/humming_nvidia/include/humming/kernels/gemm_mma_sync.cuh || echo "s66b: patch failed"
           PYTHONPATH=$PWD/alt timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py \
             -k "wgmma_tma_clusters or split_k_in_clusters or fitted_to_clusters or falls_back_to_clusters" 2>&1 \
             | tee "$OUT/s66b_tests_alt.log" | tail -2
           abbench s66b 2 "new alt" 40 "^(== |[0-9]+ )|rror" --shapes 4096x14336,2048x14336 --m 40,64 --weight int4 \
             --group-size 128 ;;
    s65r)  # (sixty-fifth session; ran in the sixty-sixth on an H100: alt2 led through the bench, now SHARED_REFILL) who issues the TMA tiles' refills. alt: lane 0 of warp blockIdx.x % 4
           # instead of thread 0; alt2 (four-warp tiles without clusters): every warp's lane 0 issues a share -- warp 0
           # the arrive-expect and the activations' tensor copies, warp w its 16-row weight blocks nb % 4 == w, warp 3
           # the scale rows (copies that complete before the expect leave the barrier's count below zero, which the
           # phase allows: it cannot complete before warp 0 arrives). Why: the refill (about 93 SASS instructions a
           # stage, the copies' uniform-register loops) runs on the issuing warp only, and if warps take the SM's
           # sub-partitions by their index, as usually described, every CTA's warp 0 shares one: with three CTAs an
           # SM it would issue about 3 x 273 instructions a stage round against 3 x 180 on the others, more than the
           # round's 768 cycles of wgmma. gpu_sweep.py (p64 tiles, M = 33 / 64) and the bench (the planner's tiles,
           # M = 40 / 64), this tree against alt and alt2, then the TMA tiles' GPU tests on each copy
           python3 - <<'PY'
import os
import shutil
K = "humming_nvidia/include/humming/kernels/gemm_mma_sync.cuh"
ROT = [("    const int tid = threadIdx.x, lane = tid & 31, wn = tid >> 5;\n    Loader L;\n",
        "    const int tid = threadIdx.x, lane = tid & 31, wn = tid >> 5;\n"
        "    const int issuer = TMA ? static_cast<int>(blockIdx.x & 3u) * 32 % (WN * 32) : 0;\n    Loader L;\n"),
       ("if (tid == 0 && s < nsteps) tma_stage(", "if (tid == issuer && s < nsteps) tma_stage("),
       ("} else if (tid == 0) {  // (TMA: the one issuing thread's prologue", "} else if (tid == issuer) {  // (TMA:"),
       ("if (tid == 0 && it > 1) tma::wait(empty,", "if (tid == issuer && it > 1) tma::wait(empty,"),
       ("if (tid == 0) tma::wait(empty,", "if (tid == issuer) tma::wait(empty,")]
SPREAD = [("    const int xs_bytes = XS_ROWS > 0 ?",
           "    const int wsp = WN == 4 && CLUSTER == 1 ? static_cast<int>(threadIdx.x >> 5) : -1;\n"
           "    const int xs_bytes = XS_ROWS > 0 ?"),
          ("    tma::arrive_expect_tx(bar, KB * 128 * p.tma_rows * CLUSTER +",
           "    if (wsp <= 0) tma::arrive_expect_tx(bar, KB * 128 * p.tma_rows * CLUSTER +"),
          ("      for (int kb = 0; kb < KB; ++kb) tma::load_2d(base + kb * BM * 128,",
           "      for (int kb = 0; kb < KB; ++kb) if (wsp <= 0) tma::load_2d(base + kb * BM * 128,"),
          ("    for (int nb = 0; nb < BN / 16; ++nb)\n      tma::load_1d(base + A_BYTES + nb * (KB * WPL * 128),",
           "    for (int nb = 0; nb < BN / 16; ++nb)\n      if (wsp < 0 || nb % 4 == wsp) tma::load_1d(base + A_BYTES + nb * (KB * WPL * 128),"),
          ("    if constexpr (Cfg::GSCALE) {\n      const char* sz = static_cast<const char*>(p.sz) + static_cast<i64>(n0) * SZB;",
           "    if constexpr (Cfg::GSCALE) if (wsp < 0 || wsp == 3) {\n      const char* sz = static_cast<const char*>(p.sz) + static_cast<i64>(n0) * SZB;"),
          ("    if constexpr (XS_ROWS > 0) {\n#pragma unroll\n      for (int r = 0; r < XS_ROWS; ++r)\n        tma::load_1d(base + A_BYTES + W_BYTES + S_BYTES",
           "    if constexpr (XS_ROWS > 0) if (wsp < 0 || wsp == 3) {\n#pragma unroll\n      for (int r = 0; r < XS_ROWS; ++r)\n        tma::load_1d(base + A_BYTES + W_BYTES + S_BYTES"),
          ("if (tid == 0 && s < nsteps) tma_stage(",
           "if ((tid & 31) == 0 && ((WN == 4 && CLUSTER == 1) || tid == 0) && s < nsteps) tma_stage("),
          ("} else if (tid == 0) {  // (TMA: the one issuing thread's prologue", "} else if ((tid & 31) == 0) {  // (TMA:")]
for d, subs in (("alt", ROT), ("alt2", SPREAD)):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copytree("backends/nvidia", d + "/humming_nvidia")
    s = open(d + "/" + K).read()
    for a, b in subs:
        assert s.count(a) == 1, (d, a)
        s = s.replace(a, b)
    open(d + "/" + K, "w").write(s)
PY
           for v in new alt alt2; do
             pp=; [ "$v" != new ] && pp=$PWD/$v
             PYTHONPATH=$pp timeout 120 python3 scripts/gpu_sweep.py --groups p64 --m 33,64 --rounds 3 \
               --shapes 8192x8192,14336x4096,4096x14336 --json "$OUT/s65r-$v.json" 2>&1 | tee "$OUT/s65r-$v.log" \
               | grep -vE "^\s*$" | cut -c1-150 | tail -20
           done
           abbench s65r 2 "new alt alt2" 60 "^(== |[0-9]+ )|rror" --shapes 8192x8192,14336x4096,4096x14336,6144x4096 \
             --m 40,64 --weight int4 --group-size 128
           for v in alt alt2; do
             PYTHONPATH=$PWD/$v timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py \
               -k "tma" 2>&1 | tee "$OUT/s65r_tests_$v.log" | tail -2
           done ;;
    s65l)  # (sixty-fifth session; the branch s65-lookahead's version ran in the sixty-sixth on an H100: 2-8 % slower. It has
           # the prefetch as a tile option, Tile.lookahead, and its version of this part, which also measures the
           # planner's WG_64_TMA with it through the bench and runs its GPU test.)
           # (any GPU) 64 tokens: the TMA tile's weights prefetched into L2 D steps ahead of each stage's
           # copies (alt: build define HUMMING_TMA_L2PF=D, one cp.async.bulk.prefetch.L2 per 16-row block), D = 2 / 4 / 8,
           # through gpu_sweep.py (p64 tiles; the eight-warp cp.async tile unchanged); then WG_64_TMA with 3-6 stages; then
           # the wgmma rate probe again (its figures per SM now through the driver's occupancy count)
           rm -rf alt && mkdir -p alt && cp -r backends/nvidia alt/humming_nvidia
           python3 - <<'PY'
p = "alt/humming_nvidia/include/humming/kernels/gemm_mma_sync.cuh"
s = open(p).read()
a = "                   KB * WPL * 128, bar);\n"
assert s.count(a) == 1
code = """#ifdef HUMMING_TMA_L2PF
    if (k0 / 64 + (HUMMING_TMA_L2PF + 1) * KB <= kblocks) {
#pragma unroll
      for (int nb = 0; nb < BN / 16; ++nb)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(w + static_cast<i64>(nb) * kblocks * (WPL * 32) +
                     HUMMING_TMA_L2PF * KB * WPL * 32), "r"(KB * WPL * 128) : "memory");
    }
#endif
"""
open(p, "w").write(s.replace(a, a + code, 1))
PY
           PYTHONPATH=$PWD/alt timeout 400 python3 scripts/gpu_sweep.py --groups p64 --m 64 --rounds 3 \
             --defines ",HUMMING_TMA_L2PF=2,HUMMING_TMA_L2PF=4,HUMMING_TMA_L2PF=8" \
             --shapes 8192x8192,14336x4096,4096x14336,28672x8192 --json "$OUT/s65l.json" 2>&1 | tee "$OUT/s65l.log" \
             | grep -vE "^\s*$" | cut -c1-150 | tail -60
           timeout 150 python3 scripts/gpu_sweep.py --groups p64s --m 64 --rounds 3 \
             --shapes 8192x8192,14336x4096,4096x14336 --json "$OUT/s65l-stages.json" 2>&1 | tee "$OUT/s65l-stages.log" \
             | grep -vE "^\s*$" | cut -c1-150 | tail -20
           timeout 100 python3 scripts/gpu_wgmma_rate.py --json "$OUT/s65w.json" 2>&1 | tee "$OUT/s65w.log" ;;
    s65w)  # (sixty-fifth session; an sm_90 GPU) the SM's rate of wgmma m64nNk16 with A from registers and nothing else to do
           # (scripts/gpu_wgmma_rate.py: N = 16-256, wait_group 0 / 1, one / two accumulator chains, 1-4 CTAs per SM)
           timeout 200 python3 scripts/gpu_wgmma_rate.py --json "$OUT/s65w.json" 2>&1 | tee "$OUT/s65w.log"
           rc=$((rc | PIPESTATUS[0])) ;;
    s65q)  # (sixty-fifth session; any GPU) 64 tokens: the p64 tiles with K split for the launcher's count, three and
           # four CTAs per SM (warpgroups per SM: the eight-warp tiles hold two per CTA)
           timeout 400 python3 scripts/gpu_sweep.py --groups p64 --m 64 --rounds 3 --ctas 0,3,4 \
             --shapes 8192x8192,14336x4096,4096x14336,28672x8192 --json "$OUT/s65q.json" 2>&1 | tee "$OUT/s65q.log" \
             | grep -vE "^\s*$" | tail -40 ;;
    s65p)  # (sixty-fifth session; any GPU) where the 64-token tile's time goes: WG_64_TMA and the eight-warp TMA tile at M=64
           # in this tree, without the activations' tensor copies (alt: stale shared rows), without the dequantization
           # (alt2: the packed words xor the scales as fragments), without both (alt3) -- wrong results, timed only,
           # through gpu_sweep.py (the stream in the same run)
           probe_trees
           for v in new alt alt2 alt3; do
             pp=; [ "$v" != new ] && pp=$PWD/$v
             echo "== $v"
             PYTHONPATH=$pp timeout 150 python3 scripts/gpu_sweep.py --groups p64 --m 64 --rounds 3 \
               --shapes 8192x8192,14336x4096,4096x14336 --json "$OUT/s65p-$v.json" 2>&1 | tee "$OUT/s65p-$v.log" \
               | grep -vE "^\s*$" | tail -12
           done ;;
    s65h)  # (sixty-fifth session, for an H200) the issue's table and widths (s62g), then the gpu-marked tests of the
           # planner's paths and the planner fuzz
           bash "$0" s62g
           gputests s65h 240 "large_m_steps_by_their_waves or wide_token_ranges or narrow_layers_split_k or falls_back_to_clusters"
           HUMMING_FUZZ_SEEDS=30 timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k through_the_planner 2>&1 | tee "$OUT/s65h_fuzz.log" | tail -2; rc=$((rc | PIPESTATUS[0])) ;;
    s64e)  # (sixty-fourth session; ran on the H100, figures in docs/perf-notes.md) above 256 tokens, 32-token steps on the
           # tile of 128-256 tokens whose waves cost least
           # (wave_steps with WG_FITTED): its GPU test, then this tree against old3/ (`mkdir old3 && git archive 3624109
           # backends/nvidia | tar -x -C old3`: the 128-token steps alone) and alt/ (old3's tree with WAVE_FIT = 1: each
           # M tile of the 256-token tile's count cut to the tokens M needs; `cp -r old3/backends/nvidia
           # alt/humming_nvidia` and the sed) through the bench, twice alternated, then this tree with cuBLAS fp16
           gputests s64e 120 "large_m_steps_by_their_waves"
           abbench s64e 2 "new old alt" 60 "^(== |[0-9]+ )|rror" \
             --shapes 6144x4096,14336x4096,5120x2048,8192x8192,4096x4096,3072x4096 --m 350,450,600,700,800,1000,1100,1400,1700 \
             --weight int4 --group-size 128
           timeout 80 humming bench --shapes 6144x4096,14336x4096,5120x2048,8192x8192,4096x4096,3072x4096 \
             --m 350,450,600,700,800,1000,1100,1400,1700 --weight int4 --group-size 128 --methods humming,cublas-fp16 \
             --repeats 3 --no-plot --no-jit --out "$OUT/s64e-cublas" 2>&1 | tee "$OUT/s64e-cublas.log" | grep -E "^(== |[0-9]+ )|rror" ;;
    s64b)  # (sixty-fourth session; ran on the H100 on the tree of 3624109, whose switches WAVE_SK / WAVE_FIT it sets --
           # gone since: wave_steps picks the tiles; figures in docs/perf-notes.md) above 256 tokens: the steps that keep
           # the 256-token tile stream-K (alt: WAVE_SK 1), every step stream-K on the 256-token tile (alt2: WAVE_SK 2),
           # each M tile of WG_256's count cut to the tokens M needs, 160-256 (old slot: WAVE_FIT 1), the same
           # stream-K (alt3: WAVE_FIT 2), against that tree; their GPU test first, then through the bench, once
           gputests s64b 150 "stream_k_or_fitted"
           anchor='WAVE_SK = 0  # (experiment: 1 = the steps that keep WG_256 run it stream-K, 2 = every step does, WG_128 none)'
           alt_after "$anchor" 'WAVE_SK = 1
'
           alt_after "$anchor" 'WAVE_SK = 2
' alt2
           alt_after "$anchor" 'WAVE_FIT = 1
' old3
           alt_after "$anchor" 'WAVE_FIT = 2
' alt3
           abbench s64b 1 "new alt3 old alt" 75 "^(== |[0-9]+ )|rror" \
             --shapes 6144x4096,8192x4096,5120x2048,14336x4096,28672x8192 --m 300,350,400,600,800,1000 \
             --weight int4 --group-size 128 ;;
    s64a)  # (sixty-fourth session; ran on the H100 with WAVE_FIT 1, figures in docs/perf-notes.md) the issue's table in
           # one call on whatever GPU comes: the int4 rows at 1-64 tokens
           # with cuBLAS (the bench's default, each method's first point warmed), the other widths at M=1 on
           # 8192x8192, the wave steps' GPU test, then the issue's shapes above 256 tokens with cuBLAS fp16
           int4rows s64a
           widths s64a-w 8192x8192 "int8:0 e4m3:0 int3:128 int2:128"
           gputests s64a 120 "large_m_steps_by_their_waves"
           timeout 200 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 300,600,1024,2048 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/s64a-cublas" 2>&1 | tee "$OUT/s64a-cublas.log" | grep -E "^(== |[0-9]+ )|rror" ;;
    s63b)  # (sixty-third session; its GPU test and its alt comparison ran on the H100 as commands of their own, figures in
           # docs/perf-notes.md; the cuBLAS rows did not run) the wave steps' GPU test on the final rule (WAVE_128_MARGIN
           # 0.93), the issue's shapes above 256 tokens with cuBLAS fp16 (the issue asks for 0.6x there), then on an H200
           # the issue's table (s62g)
           gputests s63b 200 "large_m_steps_by_their_waves"
           timeout 240 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 300,600,1024,2048 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/s63b-cublas" 2>&1 | tee "$OUT/s63b-cublas.log" | grep -E "^(== |[0-9]+ )|rror"
           # steps where WG_256 is one wave and WG_128 two (cost 1.16 by the model; alt: WAVE_128_MARGIN 1.2), through the bench
           alt_after 'WAVE_128_MARGIN = 0.93' 'WAVE_128_MARGIN = 1.2
'
           abbench s63b 1 "new alt" 120 "^(== |[0-9]+ )|rror" --shapes 6144x4096,5120x2048,8192x4096 --m 300,450 \
             --weight int4 --group-size 128
           if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then bash "$0" s62g; fi ;;
    s63a)  # (sixty-third session; ran on the H100, figures in docs/perf-notes.md) above 256 tokens, 128-token steps on WG_128 where WG_256's grid ends in a short wave
           # (wave_steps, first version: WAVE_128_MARGIN 0.98): the GPU tests, then this tree against old3/ (`mkdir old3 && git archive f20fd52 backends/nvidia
           # | tar -x -C old3`) through the bench, twice alternated, then this tree with cuBLAS on serving layers
           gputests s63a 300 "large_m_steps_by_their_waves or wide_token_ranges or narrow_layers_split_k"
           abbench s63a 2 "new old" 200 "^(== |[0-9]+ )|rror" --shapes 5120x2048,6144x4096,8192x8192,14336x4096,28672x8192,4096x4096,3072x4096 \
             --m 300,600,1000,1100,1300,1600,2000 --weight int4 --group-size 128
           abbench s63a-fp4 1 "new old" 120 "^(== |[0-9]+ )|rror" --shapes 8192x4096,6144x4096 --m 600,1100,1300 \
             --weight mxfp4
           timeout 150 humming bench --shapes 5120x2048,6144x4096,14336x4096 --m 300,1000,1600 --weight int4 --group-size 128 \
             --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/s63a-cublas" 2>&1 \
             | tee "$OUT/s63a-cublas.log" | grep -E "^(== |[0-9]+ )|rror" ;;
    s62n)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) the loader's activation offsets unsigned (one register each, not a sign-extended pair:
           # the MoE 256-token twins' 8-byte spill gone; 70 of the 100 fingerprinted kernels change, registers down):
           # random dense and MoE layers through the planner, then this tree against old3/ (`mkdir old3 && git
           # archive 238117d backends/nvidia | tar -x -C old3`) on the issue's rows and large M, once
           HUMMING_FUZZ_SEEDS=50 timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k "through_the_planner or random_moe_layers" 2>&1 | tee "$OUT/s62n_fuzz.log" | tail -2; rc=$((rc | PIPESTATUS[0]))
           abbench s62n 1 "new old" 120 "^(== |[0-9]+ )|rror" --shapes 4096x4096,8192x8192,28672x8192 \
             --m 1,16,64,256,2048 --weight int4 --group-size 128
           abbench s62n-moe 1 "new old" 120 "^(== |[0-9]+ )|rror" --moe-shapes 8x2x1536x2048,8x2x4096x4096 --m 4096 \
             --weight int2 --group-size 128 ;;
    s62m)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) above 512 tokens on 4097-8192 rows: the 128-token tile (alt) against the 256-token
           # one (this tree; qwen3's qkv 5120x2048 at M=1024: 160 tiles of 256 tokens, 1.2 waves, 0.58x cuBLAS fp16),
           # through the bench with cuBLAS, once
           alt_after '        return WG_64 if n <= 4096 else WG_128 if n <= 8192 else WG_256' \
'    if ops16 and 4096 < n <= 8192:
        return WG_128
'
           abbench s62m 1 "new alt" 200 "^(== |[0-9]+ )|rror" --shapes 5120x2048,6144x4096,8192x8192,7168x16384,5120x5120 \
             --m 1024,2048,4096 --weight int4 --group-size 128 ;;
    s62l)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) IDLE_SPLIT_16 and split_for's one wave for tiles of one CTA per SM: their GPU tests, 120
           # random layers through the planner, then this tree against old3/ (`mkdir old3 && git archive e407141
           # backends/nvidia | tar -x -C old3`) on the weak layers of s62j in other codes, once
           gputests s62l 300 "narrow_layers_split_k or wide_token_ranges or large_shapes_split_k_and_tails"
           HUMMING_FUZZ_SEEDS=120 timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k "through_the_planner" 2>&1 | tee "$OUT/s62l_fuzz.log" | tail -2; rc=$((rc | PIPESTATUS[0]))
           for w in int4:128 uint4:64:int e4m3:0; do
             IFS=: read -r f g z <<<"$w"
             abbench "s62l-$f" 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 1536x7168,2048x4096,2560x4096,1024x4096 \
               --m 129,256,1024,2048 --weight "$f" --group-size "$g" --zero-point "${z:-none}"
           done
           abbench s62l-bf16 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 1536x7168,2048x4096 --m 129,256,1024,2048 \
             --weight int4 --group-size 128 --act bf16 ;;
    s62k)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) large M on narrow layers, whose grids leave SMs idle (s62j: deepseek-v3 q_a
           # 1536x7168 at M=1024 0.41x cuBLAS fp16, qwen3 o 2048x4096 0.52x): alt splits K there too -- 16-bit operands'
           # ranges above 64 tokens whose first M's grid fills at most half the SMs carry split_k -- and the launcher
           # splits a one-CTA-per-SM warpgroup tile only as far as one wave holds (floor, not ceil); alt2: the planner
           # part alone; grids by gpu_pdl_probe.py, then the bench against this tree
           alt_after '                idle = wide and lo <= 256 and sms and 2 * tiles <= sms' \
'                if not recipe.op8 and sms and 2 * tiles <= sms and nominal.bm > SPLIT_K_BM:
                    idle = True
'
           cp -r alt alt2
           ANCHOR='        want = -(-ctas * self.sm_count // tiles)' CODE='        if ctas == 1 and tile.wgmma:
            want = max(1, self.sm_count // tiles)
' python3 - <<'PY'
import os
a = os.environ["ANCHOR"] + "\n"
p = "alt/humming_nvidia/mma_sync_launch.py"
s = open(p).read()
assert a in s
open(p, "w").write(s.replace(a, a + os.environ["CODE"], 1))
PY
           PYTHONPATH=$PWD/alt timeout 120 python3 scripts/gpu_pdl_probe.py --formats int4 --m 129,200,256,513,1024,2048 \
             --shapes 1536x7168,2048x4096,4096x4096,1024x4096,3072x4096 2>&1 | tee "$OUT/s62k-probe.log" | tail -40
           abbench s62k 1 "new alt alt2" 200 "^(== |[0-9]+ )|rror" --shapes 1536x7168,2048x4096,4096x4096,1024x4096,3072x4096 \
             --m 129,200,256,513,1024,2048 --weight int4 --group-size 128 ;;
    s62j)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) where humming stands on serving layers: llama3-70b, deepseek-v3 and qwen3-30b-a3b's
           # dense layers, int4 g128, humming and cuBLAS fp16 at 1-4096 tokens
           timeout 560 humming bench --preset llama3-70b,deepseek-v3,qwen3-30b-a3b --kind dense --m 1,4,16,32,64,128,256,1024,4096 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/s62j" 2>&1 | tee "$OUT/s62j.log" | tail -4 ;;
    s62i)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) 33-64 tokens on the TMA tile split for three CTAs per SM (alt: ctas_for 3; 128
           # tiles of 8192x8192 in 384 CTAs where 396 fit) against this tree (two), through the bench, twice
           alt_after '        the eight-warp tiles and 64 tokens lose with two, up to 30 %.)"""' \
'        if tile.wgmma and tile.tma:
            return 3
'
           abbench s62i 2 "new alt" 150 "^(== |[0-9]+ )|rror" --shapes 8192x8192,14336x4096,4096x14336,6144x8192 \
             --m 48,64 --weight int4 --group-size 128 ;;
    s62g)  # (sixty-second session, for an H200: the issue's table under the bench's new default, each method's first
           # point warmed 50 ms) the int4 rows with cuBLAS, the other widths at M=1 on 8192x8192, then the same int4
           # rows by the old method (--first-warmup-s 0) for the comparison
           int4rows s62g
           widths s62g-w 8192x8192 "int8:0 e4m3:0 int3:128 int2:128"
           timeout 200 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,8,16,64 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --first-warmup-s 0 --out "$OUT/s62g-old" 2>&1 | tee "$OUT/s62g-old.log" | grep -E "^(== |1 |64 )|stream " ;;
    s62h)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) the harness's GPU tests after the first-point warm-up
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_bench_stream.py tests/test_bench_gpu.py tests/test_bench_workloads.py \
             2>&1 | tee "$OUT/s62h_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0])) ;;
    s62f)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) 9-16 tokens: the 128-row 16-token tile from 4097 rows (alt: WG_16_TWO_FROM_N =
           # 4096) and three 16-token CTAs per SM (alt2: ctas_for 3), against this tree, through the bench, twice
           alt_after 'WG_16_TWO_FROM_N = 8192' 'WG_16_TWO_FROM_N = 4096
'
           alt_after '        the eight-warp tiles and 64 tokens lose with two, up to 30 %.)"""' \
'        if tile.wgmma and tile.threads <= 128 and tile.bm == 16:
            return 3
' alt2
           abbench s62f 2 "new alt alt2" 150 "^(== |[0-9]+ )|rror" --shapes 8192x8192,6144x4096,5120x8192,4096x14336,14336x4096 \
             --m 9,16 --weight int4 --group-size 128 ;;
    s62e)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) MoE of more than 512 rows per expert on 16-bit operands: the 256-token tile's
           # cp.async twin (it spills 8 bytes on sm_90a for int2, int4 g64, int3 g16-32) against WG_128 (alt), through
           # the bench, top-2 of 8 experts (M / 4 rows per expert)
           alt_after "    cp.async stages, 65.8 / 258 for the 128-token one with TMA; half_block_groups' figures).\"\"\"" \
'    if tile.wgmma and tile.bm == 256 and not recipe.op8:
        return fit_tile(WG_128, recipe, max_smem, kp)
'
           for w in int4:128 int2:128 int4:64; do
             abbench "s62e-${w/:/-}" 1 "new alt" 200 "^(== |[0-9]+ )|rror" \
               --moe-shapes 8x2x1536x2048,8x2x4096x4096,8x2x14336x4096 --m 4096,8192 --weight "${w%%:*}" \
               --group-size "${w##*:}"
           done ;;
    s62d)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) 33-64 tokens on layers of more than 4096 rows over a K of 4096 or more: the folded
           # 32-token tiles in two M tiles (alt: WG_32_DEEP, WG_32_DEEP_TWO above 16384 rows; alt2: WG_32_DEEP_TWO
           # everywhere) against this tree (WG_64_TMA / WG_64), through the bench, alternated twice
           alt_after '    two = layer.n > 8192 or (layer.n <= 4096 and layer.k >= 12288)  # (as WG_16_TWO: two 64-row wgmmas)' \
'    if 33 <= lo <= 64 and can_fold(recipe) and layer.n > 4096 and layer.k >= 4096 and not layer.is_moe:
        return replace(WG_32_DEEP_TWO if layer.n > 16384 else WG_32_DEEP, fold=1)
'
           alt_after '    two = layer.n > 8192 or (layer.n <= 4096 and layer.k >= 12288)  # (as WG_16_TWO: two 64-row wgmmas)' \
'    if 33 <= lo <= 64 and can_fold(recipe) and layer.n > 4096 and layer.k >= 4096 and not layer.is_moe:
        return replace(WG_32_DEEP_TWO, fold=1)
' alt2
           abbench s62d 2 "new alt alt2" 150 "^(== |[0-9]+ )|rror" --shapes 8192x8192,28672x8192,14336x4096,6144x4096,5120x8192 \
             --m 33,48,64 --weight int4 --group-size 128 ;;
    s62c)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) the issue's int4 rows with cuBLAS under the bench's new default (each method's
           # first point warmed 50 ms, FIRST_WARMUP_S) and the old method (--first-warmup-s 0), alternated twice; then
           # the other widths at M=1 on 8192x8192 (new default)
           for r in 1 2; do
             for w in new 0; do
               fw=(); [ "$w" = 0 ] && fw=(--first-warmup-s 0)
               timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,8,16,64 \
                 --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit "${fw[@]}" \
                 --out "$OUT/s62c-$w-$r" 2>&1 | tee "$OUT/s62c-$w-$r.log" | grep -E "^(== |1 |64 )|stream "
             done
           done
           widths s62c-w 8192x8192 "int8:0 e4m3:0 int3:128 int2:128" ;;
    s62b)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) the issue's int4 rows with cuBLAS (int4rows' command) without and with a warm-up of
           # 25 ms per point, alternated twice: whether the warm-up moves only the first point of each shape and method
           for r in 1 2; do
             for w in 0 0.025; do
               timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,8,16,64 \
                 --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
                 --warmup-s $w --out "$OUT/s62b-w${w//./_}-$r" 2>&1 | tee "$OUT/s62b-w${w//./_}-$r.log" \
                 | grep -E "^(== |1 |64 )|stream "
             done
           done ;;
    s62a)  # (sixty-second session; ran on the H100, figures in docs/perf-notes.md) the first point of a shape: 28672x8192 int4 g128, one kernel and grid for 1-8
           # tokens; the bench times its M values in ascending order, so each run's first point is its smallest M:
           # M = 1, 8 / M = 2, 8 / M = 1, 8 after a warm-up of 25 ms per point, humming alone
           for v in "1,8 0" "2,8 0" "1,8 0.025"; do
             timeout 100 humming bench --shapes 28672x8192 --m "${v% *}" --weight int4 --group-size 128 \
               --methods humming --repeats 3 --no-plot --no-jit --warmup-s "${v#* }" --out "$OUT/s62a-${v//[, .]/_}" 2>&1 \
               | tee "$OUT/s62a-${v//[, .]/_}.log" | grep -E "^(== |[0-9]+ )|stream "
           done ;;
    s61m)  # (sixty-first session; ran in the sixty-second on the H100: 32 tests passed, the rows in docs/perf-notes.md) this tree against
           # old3/ (`mkdir old3 && git archive 56fa5fb backends/nvidia | tar -x -C old3`) once: 9-16 tokens launched
           # programmatically (PDL_CROWDED_BM), 17-64 on narrow layers (narrow_16_tokens), the cluster fallback at 17-32
           # (cluster_fallback_split), measured on the H100 and, unmeasured, 3072x8192 / 2048x14336 / 4096x5120 /
           # 2048x2048 / 4096x2048, where the fallback moves their launches too (CPU emulation); then the session's tests
           abbench s61m-9 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 4096x4096,2048x8192,2048x4096,3584x3584 \
             --m 9,16 --weight int4 --group-size 128
           abbench s61m-17 1 "new old" 200 "^(== |[0-9]+ )|rror" \
             --shapes 512x3584,1024x4096,2048x4096,2048x8192,2560x8192,4096x4096,3072x8192,2048x14336,4096x5120,2048x2048,4096x2048 \
             --m 17,32,64 --weight int4 --group-size 128
           gputests s61m 400 "programmatic_dependent_launch_chain or narrow_layers_run or falls_back_to_clusters or \
fitted_to_clusters" ;;
    s61l)  # (sixty-first session; ran on bf1eaa9: slices of at most 4096 columns, since 2048, CLUSTER_FALLBACK_MAX_SLICE_K;
           # the test's and the bench's launches are the same under both) cluster_fallback_split: its GPU test, then this tree against
           # old3/ (`mkdir old3 && git archive b4c324f backends/nvidia | tar -x -C old3`) once at 32 tokens
           gputests s61l 100 "falls_back_to_clusters"
           abbench s61l 1 "new old" 100 "^(== |[0-9]+ )|rror" --shapes 4096x14336,2048x4096,2048x8192 --m 32 \
             --weight int4 --group-size 128 ;;
    s61k)  # (sixty-first session; ran on d68aa3b, before the fallback kept FIT_MAX_SLICE_K) cluster_fallback_split: its GPU test and narrow_16_tokens', then this tree against
           # old3/ (`mkdir old3 && git archive b4c324f backends/nvidia | tar -x -C old3`, the commit before it) once
           gputests s61k 150 "falls_back_to_clusters or narrow_layers_run"
           abbench s61k 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 14336x4096,4096x14336,8192x8192,4096x4096,2048x4096 \
             --m 16,32,64 --weight int4 --group-size 128 ;;
    s61j)  # (sixty-first session; ran: its alt, at three slices or more, is cluster_fallback_split) why the 32-token tiles ran slow on 2048x4096 and fast on 1536x4096 (s61h): the
           # launches' clusters as the driver holds them (gpu_pdl_probe.py), then alt/: where a split's clusters do not
           # all fit at once (the sums went through the workspace), the most slices whose clusters do, against this tree
           timeout 120 python3 scripts/gpu_pdl_probe.py --formats int4 --m 16,17,32,64 \
             --shapes 1024x4096,1280x8192,1536x4096,2048x4096,2048x8192,2560x8192,3072x4096,8192x8192 2>&1 \
             | tee "$OUT/s61j-probe.log"
           alt_after '            cz = 1  # (the workspace)' \
'            if tile.wgmma and not pw.recipe.op8 and tile.bm <= FIT_MAX_TOKENS and self.cluster_fit:
                for c in range(split - 1, 1, -1):
                    kc = -(-ksteps // c)
                    sc = -(-ksteps // kc)
                    if (m_tiles * n_tiles * sc <= self.cluster_max_per_sm * self.sm_count
                            and _resident_clusters(lp, smem, sc) >= m_tiles * n_tiles):
                        split = cz = sc
                        kps = kc
                        break
'
           abbench s61j 1 "new alt" 150 "^(== |[0-9]+ )|rror" \
             --shapes 2048x4096,2048x8192,2560x8192,1280x8192,1536x4096,3072x4096,4096x4096,8192x8192 --m 16,17,32,48,64 \
             --weight int4 --group-size 128 ;;
    s61i)  # (sixty-first session) narrow_16_tokens at 8 rows per SM: its GPU test and the launch chain's, this tree
           # against old3/ (`mkdir old3 && git archive 4e0cc8f backends/nvidia | tar -x -C old3`) through the bench
           # (512-1024 rows take the 16-token tile at 17-64 tokens; 1280 and 1536 rows keep theirs), then the issue's rows
           gputests s61i 300 "narrow_layers_run or programmatic_dependent_launch_chain"
           abbench s61i 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 512x3584,512x4096,768x4096,1024x4096,1280x8192,1536x4096 \
             --m 17,32,48,64 --weight int4 --group-size 128
           int4rows s61i ;;
    s61h)  # (sixty-first session; ran on 4e8ce01's rule of 20 rows per SM, since narrowed to 8: its test's layers
           # changed) narrow_16_tokens (17-64 tokens of narrow layers on the 16-token tile): its GPU test
           # and the launch chain's, then this tree against old3/ (`mkdir old3 && git archive 4e0cc8f backends/nvidia |
           # tar -x -C old3`) through the bench on other narrow layers and formats, once
           gputests s61h 300 "narrow_layers_run or programmatic_dependent_launch_chain"
           abbench s61h-i4 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 1280x8192,1536x4096,1024x3584,2048x5120 \
             --m 17,32,48,64 --weight int4 --group-size 128
           for w in "uint4 --group-size 64 --zero-point int" "int4 --group-size 128 --act bf16" "e2m1 --group-size 32 --scale-fmt e8m0"; do
             abbench "s61h-$(echo $w | cut -d' ' -f1,3,5,6 | tr -d ' -')" 1 "new old" 120 "^(== |[0-9]+ )|rror" \
               --shapes 1024x4096,2048x8192,1280x8192 --m 17,32,64 --weight $w
           done ;;
    s61g)  # (sixty-first session; ran: its alt is narrow_16_tokens' measurement) after s61f (17-32 tokens on the 16-token tile won on 2048 rows only): 17-64 tokens on
           # it on layers of at most 3072 rows, alt/ against this tree, alternated twice
           alt_after '    two = layer.n > 8192 or (layer.n <= 4096 and layer.k >= 12288)  # (as WG_16_TWO: two 64-row wgmmas)' \
'    if 9 <= lo <= 64 and can_fold(recipe) and layer.n <= 3072:
        return replace(WG_16_DEEP, fold=1)
'
           abbench s61g 2 "new alt" 150 "^(== |[0-9]+ )|rror" \
             --shapes 1024x4096,2048x4096,2048x8192,1024x8192,3072x4096,2560x8192,2048x14336 --m 17,32,48,64 \
             --weight int4 --group-size 128 ;;
    s61f)  # (sixty-first session; ran) 17-32 tokens on the 16-token warpgroup tiles (two M tiles; programmatic since
           # PDL_CROWDED_BM) where the group scales fold: alt/ against this tree, alternated twice
           alt_after '    two = layer.n > 8192 or (layer.n <= 4096 and layer.k >= 12288)  # (as WG_16_TWO: two 64-row wgmmas)' \
'    if 9 <= lo <= 32 and can_fold(recipe):
        return replace(WG_16_DEEP_TWO if layer.n > WG_16_TWO_FROM_N else WG_16_DEEP, fold=1)
'
           abbench s61f 2 "new alt" 150 "^(== |[0-9]+ )|rror" \
             --shapes 4096x4096,2048x8192,2048x4096,3584x3584,8192x8192,4096x14336,14336x4096 --m 17,24,32 \
             --weight int4 --group-size 128 ;;
    s61e)  # (sixty-first session) PDL_CROWDED_BM's neighbours through the bench: alt/, byte operands' 16-token tiles
           # programmatic too (W4A8, W8A8, fp8), against this tree; alt2/, the 32-token tiles of 16-bit operands (M = 17
           # to 64), against this tree
           alt_after '            tile.bm == PDL_CROWDED_BM and not pw.recipe.op8 and not pw.experts)' \
             '        pdl_ok = pdl_ok or (tile.bm == 16 and not pw.experts)
'
           alt_after '            tile.bm == PDL_CROWDED_BM and not pw.recipe.op8 and not pw.experts)' \
             '        pdl_ok = pdl_ok or (tile.bm == 32 and not pw.recipe.op8 and not pw.experts)
' alt2
           for w in "int4 --group-size 128 --act int8" "int8 --group-size 0 --scale-fmt fp32 --act int8" \
                    "e4m3 --group-size 0 --scale-fmt fp32 --act e4m3"; do
             abbench "s61e-$(echo $w | cut -d' ' -f1,6,7 | tr -d ' -')" 1 "new alt" 120 "^(== |[0-9]+ )|rror" \
               --shapes 4096x4096,2048x8192,2048x4096,8192x8192 --m 9,16 --weight $w
           done
           abbench s61e-32 2 "new alt2" 150 "^(== |[0-9]+ )|rror" \
             --shapes 4096x4096,2048x8192,2048x4096,3584x3584,8192x8192,4096x14336 --m 17,32,48,64 --weight int4 --group-size 128 ;;
    s61d)  # (sixty-first session) 16-token warpgroup launches programmatic however their CTAs could crowd
           # (PDL_CROWDED_BM): the GPU tests of the launch chain and the fitted splits, then this tree against old3/
           # (`mkdir old3 && git archive 56fa5fb backends/nvidia | tar -x -C old3`) through the bench: other weight
           # formats where the launch crowds, bf16, and the issue's layers (uncrowded: unchanged), once each
           gputests s61d 300 "programmatic_dependent_launch_chain or fitted_to_clusters or folded_group_scales"
           for w in "e4m3 --group-size 0 --scale-fmt fp32" "int8 --group-size 0 --scale-fmt fp32" \
                    "uint4 --group-size 64 --zero-point int" "int3 --group-size 128" "e2m1 --group-size 32 --scale-fmt e8m0" \
                    "int4 --group-size 128 --act bf16" "int4 --group-size 0 --scale-fmt fp32"; do
             abbench "s61d-$(echo $w | cut -d' ' -f1-3 | tr -d ' -')" 1 "new old" 120 "^(== |[0-9]+ )|rror" \
               --shapes 4096x4096,2048x8192,2048x4096 --m 9,16 --weight $w
           done
           abbench s61d-issue 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 14336x4096,4096x14336,8192x8192,28672x8192 \
             --m 9,16 --weight int4 --group-size 128 ;;
    s61c)  # (sixty-first session; ran on the ring rule's tree, since dropped, as was HUMMING_RING16 and this alt's
           # anchor) 9-16 tokens on narrow layers through the bench: RING_16 (this tree) against the
           # warpgroup tile (HUMMING_RING16=0), launched as the launcher does and, alt/, programmatically however its
           # CTAs could crowd (s61b: the tile lost where its launch went plainly, 4096x4096 and 2048x8192); then M=17
           # / 32 to check alt/ leaves the 32-token tiles alone
           alt_after '            fit > 0 and tile.bm < FIT_MIN_TOKENS)' '        pdl_ok = pdl_ok or tile.bm <= 16
'
           for r in 1 2; do
             abbench s61c-ring$r 1 "new" 150 "^(== |[0-9]+ )|rror" --shapes $S61 --m 9,16 --weight int4 --group-size 128
             HUMMING_RING16=0 abbench s61c-wg$r 1 "new alt" 150 "^(== |[0-9]+ )|rror" --shapes $S61 --m 9,16 \
               --weight int4 --group-size 128
           done
           HUMMING_RING16=0 abbench s61c-32 1 "new alt" 150 "^(== |[0-9]+ )|rror" --shapes 4096x4096,2048x8192 --m 17,32 \
             --weight int4 --group-size 128 ;;
    s61b)  # (sixty-first session; ran on a planner rule since dropped, ring_16_tokens: the new tree there was the ring)
           # RING_16 (ring_16_tokens: 9-16 tokens on layers of at most one 32-row CTA per SM)
           # through the bench: this tree against old3/ (`mkdir old3 && git archive 56fa5fb backends/nvidia | tar -x -C
           # old3`), alternated twice; bf16 and per channel once; then its neighbours kernel alone (group s16b)
           abbench s61b 2 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 4096x4096,3584x3584,2048x8192,4096x14336 \
             --m 9,12,16 --weight int4 --group-size 128
           abbench s61b-bf 1 "new old" 100 "^(== |[0-9]+ )|rror" --shapes 4096x4096,4096x14336 --m 16 \
             --weight int4 --group-size 128 --act bf16
           abbench s61b-ch 1 "new old" 100 "^(== |[0-9]+ )|rror" --shapes 4096x4096,4096x14336 --m 16 \
             --weight int4 --group-size 0 --scale-fmt fp32
           timeout 240 python3 scripts/gpu_sweep.py --shapes 4096x14336,4096x4096,1024x8192,3072x4096,4096x11008,6144x4096 \
             --m 16 --groups s16b --rounds 3 --json "$OUT/s61b.json" 2>&1 | tee "$OUT/s61b.log" | cut -c1-230 ;;
    s61a)  # (sixty-first session) 9-16 tokens on small layers, kernel alone (gpu_sweep.py group s16): the planner's
           # warpgroup tile (WG_16_DEEP) against 16-token register rings, with and without a window; then the same
           # in bf16 on two layers. On an H200 the s60e part follows (the command line runs it where the GPU is one).
           timeout 300 python3 scripts/gpu_sweep.py --shapes 4096x4096,6144x4096,3584x3584,4608x3584,5120x5120,2048x8192,14336x4096 \
             --m 9,16 --groups s16 --rounds 4 --json "$OUT/s61a.json" 2>&1 | tee "$OUT/s61a.log" | cut -c1-230
           timeout 120 python3 scripts/gpu_sweep.py --shapes 4096x4096,5120x5120 --m 16 --groups s16 --rounds 3 --bf16 \
             --json "$OUT/s61a-bf.json" 2>&1 | tee "$OUT/s61a-bf.log" | cut -c1-230 ;;
    s60e)  # (sixtieth session, for an H200) this tree against old3/ (`mkdir old3 && git archive eaed702 backends/nvidia
           # | tar -x -C old3`) once, where the session's three rules move plans: one token over a short K (one wave),
           # 2-6 tokens on the 16-row ring, the windows; then the GPU tests of s60a and s60d
           abbench s60e-s 1 "new old" 120 "^(== |[0-9]+ )|rror" --shapes 4608x3584,5120x4096,9216x3072,10240x4096 \
             --m 1 --weight int4 --group-size 128
           abbench s60e-w 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 8192x14336,8192x28672,5120x13824,10240x8192 \
             --m 2,4,6,8 --weight int4 --group-size 128
           abbench s60e-n 1 "new old" 100 "^(== |[0-9]+ )|rror" --shapes 1536x8192,2048x14336 --m 2,4,6 \
             --weight int4 --group-size 128
           gputests s60e 400 "short_k_rings_within_one_wave or one_token_rings or long_k_on_the_16_row or \
batched_decode or keep_a_window" ;;
    s60d)  # (sixtieth session) the GPU tests of shape_stream_tile's one-wave rows (s60c's alt, now the tree) and the
           # other one-token ring tests
           gputests s60d 300 "short_k_rings_within_one_wave or one_token_rings or long_k_on_the_16_row" ;;
    s60c)  # (sixtieth session) one token over a short K where shape_stream_tile's rows make a partial second wave
           # (the tile count nearest two per SM, above it: 5120x4096's 320 16-row CTAs for 264 places): alt/ takes the
           # count nearest two per SM among those within it, against this tree, alternated twice (4096x4096, 6144x4096
           # and 14336x4096 keep their tiles: checks). 5120x4096 has the A100 4096x4096's ratio (256 CTAs, 216 places).
           # (Ran; the alt is the tree since, and its anchor is gone.)
           alt_after '    wn = min((w for w in (1, 2, 4) if warps % w == 0), key=lambda w: (abs(np_ / (16 * w) - 2 * sms), w != tile.wn))' \
'    fit = [w for w in (1, 2, 4) if warps % w == 0 and np_ // (16 * w) <= 2 * sms]
    if fit:
        wn = min(fit, key=lambda w: abs(np_ / (16 * w) - 2 * sms))
'
           abbench s60c 2 "new alt" 120 "^(== |[0-9]+ )|rror" \
             --shapes 4608x3584,5120x4096,9216x3072,10240x4096,4096x4096,6144x4096,14336x4096 --m 1 --weight int4 \
             --group-size 128 ;;
    s60b)  # (sixtieth session) ring_needs_window as refined after s60a (a window only where its launch takes no more
           # rounds of CTAs per K than the split); alt/: s60a's rule (a window wherever the slice outgrows the cap)
           # against this tree, alternated twice, where the two differ. (No GPU tests: the plans of s60a's tested
           # layers are the same on both trees, compared on the CPU.) Ran on 0413445: the rounds rule lost, the tree
           # went back to the plain rule, and this alt/'s anchor is gone (perf notes, sixtieth session).
           alt_after '    fit = -(-tokens * kp * 2 // RING_XTURN_CAP)  # (the slices whose activations fit without one)' \
'    return fit > want
'
           abbench s60b 2 "new alt" 150 "^(== |[0-9]+ )|rror" --shapes 5120x27648,6144x28672,10240x18432 \
             --m 2,4,6 --weight int4 --group-size 128
           abbench s60b-8 2 "new alt" 100 "^(== |[0-9]+ )|rror" --shapes 10240x14336 --m 7,8 --weight int4 \
             --group-size 128 ;;
    s60a)  # (sixtieth session) this tree against old3/ (`mkdir old3 && git archive eaed702 backends/nvidia | tar -x
           # -C old3`): (1) 2-6 tokens over a long K on the 16-row ring, layers of at most one 16-row CTA per SM
           # (long_k_16_row_ring), on the K and formats s59e did not run; (2) a window of activations where a ring's
           # slice of the range's last token count outgrows RING_XTURN_CAP at one wave (ring_needs_window: the long-K
           # ring at 2-6 tokens over K > 8192 on more than 4224 rows, the wide ring at 7-8). The GPU tests first;
           # alt/: 7-8 tokens on the 16-row ring too, against this tree
           gputests s60a 300 "long_k_on_the_16_row or batched_decode or keep_a_window"
           abbench s60a-win 2 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 8192x14336,8192x28672,5120x13824 \
             --m 2,4,6 --weight int4 --group-size 128
           abbench s60a-wide 2 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 14336x8192,10240x8192,10240x14336 \
             --m 2,6,7,8 --weight int4 --group-size 128
           abbench s60a-k 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 1024x14336,2048x14336,1536x5120,2048x5120 \
             --m 2,4,6 --weight int4 --group-size 128
           abbench s60a-bf 1 "new old" 100 "^(== |[0-9]+ )|rror" --shapes 2048x8192,8192x14336 --m 2,4,6 \
             --weight int4 --group-size 128 --act bf16
           abbench s60a-ch 1 "new old" 100 "^(== |[0-9]+ )|rror" --shapes 2048x8192,8192x14336 --m 2,4,6 \
             --weight int4 --group-size 0 --scale-fmt fp32
           alt_after '    hi = RING_LONG_MAX if lo <= RING_LONG_MAX else RING_DECODE_MAX  # (the range'"'"'s last token count)' \
'    if int4 and lo > RING_LONG_MAX and padded_n(layer.n) // 16 <= sms and long_k_16_row_ring(layer, recipe, kp, sms):
        return short_k_ring(DECODE_INT4_SHORT_K, recipe, hopper=True)
'
           abbench s60a-w 1 "new alt" 120 "^(== |[0-9]+ )|rror" --shapes 1024x8192,2048x8192,1024x14336 \
             --m 7,8 --weight int4 --group-size 128 ;;
    s59e)  # (fifty-ninth session, for the next call) 2-6 tokens over a long K on the 16-row ring where one token takes
           # it (long_k_one_ring's layers; decode_ring_tile gives them DECODE_INT4_LONG_K): alt/ against this tree
           # through the bench, alternated twice; then the batched-decode GPU tests on alt/
           alt_after '        return DECODE_INT4_WIDE' \
'    if (int4 and lo <= RING_LONG_MAX and kp > 4096 and not layer.is_moe and sms and padded_n(layer.n) // 16 <= 2 * sms
            and (not recipe.gscale or recipe.group % 128 == 0)):
        return short_k_ring(DECODE_INT4_SHORT_K, recipe, hopper=True)
'
           abbench s59e 2 "new alt" 120 "^(== |[0-9]+ )|rror" --shapes \
             1024x8192,1536x8192,2048x8192,3072x8192,4096x8192,4096x14336 --m 2,4,6 --weight int4 --group-size 128
           PYTHONPATH=$PWD/alt timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py \
             -k "batched_decode or long_k_on_the_16_row" 2>&1 | tee "$OUT/s59e_tests.log" | tail -2 ;;
    s59d)  # (fifty-ninth session) where the two changes should not move anything, and 2-8 tokens where the split
           # does: this tree against old3/ (`mkdir old3 && git archive f167f69 backends/nvidia | tar -x -C old3`), once;
           # MoE decode (Qwen3-30B-A3B's layers), the issue's int4 layers at M = 1 / 8, narrow layers at 2-8 tokens
           abbench s59d-moe 1 "new old" 70 "^(== |[0-9]+ )|rror" --moe-shapes 128x8x1536x2048,128x8x2048x768 \
             --kind moe --m 1,4,16 --weight int4 --group-size 128
           abbench s59d-iss 1 "new old" 70 "^(== |[0-9]+ )|rror" --shapes 4096x4096,14336x4096,4096x14336,8192x8192 \
             --m 1,8 --weight int4 --group-size 128
           abbench s59d-few 1 "new old" 70 "^(== |[0-9]+ )|rror" --shapes 1024x8192,1536x8192,2048x8192,6144x8192 \
             --m 2,4,8 --weight int4 --group-size 128 ;;
    s59c)  # (fifty-ninth session) the final tree's GPU tests: the MoE suite (ring launches split K by the rounded-down
           # count now), then the long-K 16-row ring, the one-token rings and batched decode
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py 2>&1 \
             | tee "$OUT/s59c_moe.log" | grep -E "^E  .*(Error|\()|passed|failed"; rc=$((rc | PIPESTATUS[0]))
           gputests s59c 150 "long_k_on_the_16_row or one_token_rings or batched_decode" ;;
    s59b)  # (fifty-ninth session) this tree (long_k_one_ring: one token of int4 codes in groups of 128 or more, or per
           # channel, over a long K on the 16-row ring on Hopper; ring launches split K floor(occupancy x SMs / tiles)
           # ways, not rounded to the nearest: a rounding up past one wave of CTAs -- 96 tiles split three ways, 288
           # CTAs for 264 places -- took 3072x8192 to 10.7 us) against old3/ (`mkdir old3 && git archive f167f69
           # backends/nvidia | tar -x -C old3`), alternated twice; then the long-K ring's GPU tests. (Its first run,
           # on the H100, had the rule in the tree and the rounding down as alt/: the figures in docs/perf-notes.md.)
           abbench s59b-1 2 "new old" 120 "^(== |1 )|rror" --shapes \
             1024x8192,1536x8192,2048x8192,2560x8192,3072x8192,5120x8192,4096x14336 --m 1 --weight int4 --group-size 128
           abbench s59b-4 1 "new old" 120 "^(== |[0-9]+ )|rror" --shapes 3072x8192,5120x8192,2560x8192 --m 2,4,8 \
             --weight int4 --group-size 128
           gputests s59b 150 "long_k_on_the_16_row or one_token_rings_of_2" ;;
    s59a)  # (fifty-ninth session) one token of int4 codes over a long K on Hopper, on layers of at most two 16-row
           # CTAs per SM: the 16-row ring of one warp per K run (s58d: 3-15 % faster through the bench on H100, int4
           # g128 fp16, N = 2048-4096). alt/: four slots (DECODE_INT4_SHORT_K) for every group size; alt2/: short_k_ring's
           # form (eight slots for groups of 128; groups of 16 / 32 keep two warps along N). Against this tree through
           # the bench, alternated twice (int4 g128 fp16, narrower layers too), once for bf16, per channel, g64
           # zero points and g32; then the one-token ring GPU tests on alt2/
           # (Ran on f167f69's planner; since the rule is in the tree (long_k_one_ring) its alt/ trees no longer parse.)
           a='                nominal = short_k_ring(nominal, recipe, hopper=caps.has("wgmma"))'
           c='        if hi == 1 and caps.has("wgmma") and nominal == DECODE_INT4_LONG_K and kp > 4096 and sms and padded_n(layer.n) // 16 <= 2 * sms:'
           alt_after "$a" "$c
            nominal = DECODE_INT4_SHORT_K
" alt
           alt_after "$a" "$c
            nominal = short_k_ring(DECODE_INT4_SHORT_K, recipe, hopper=True)
" alt2
           abbench s59a-g 2 "new alt alt2" 150 "^(== |1 )|rror" --shapes \
             1024x8192,1536x8192,2048x8192,3072x8192,4096x8192,4224x8192,1024x14336,4096x14336 --m 1 --weight int4 \
             --group-size 128
           abbench s59a-b 1 "new alt alt2" 100 "^(== |1 )|rror" --shapes 4096x14336,2048x8192 --m 1 --weight int4 \
             --group-size 128 --act bf16
           abbench s59a-c 1 "new alt" 100 "^(== |1 )|rror" --shapes 4096x14336,2048x8192 --m 1 --weight int4 \
             --group-size 0 --scale-fmt fp32
           abbench s59a-z 1 "new alt" 100 "^(== |1 )|rror" --shapes 4096x14336,2048x8192 --m 1 --weight uint4 \
             --group-size 64 --zero-point int
           abbench s59a-s 1 "new alt" 100 "^(== |1 )|rror" --shapes 4096x14336,2048x8192 --m 1 --weight int4 \
             --group-size 32
           PYTHONPATH=$PWD/alt2 timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py \
             -k "one_token_rings or batched_decode or long_k_on_the_16_row" 2>&1 | tee "$OUT/s59a_tests.log" | tail -2 ;;
    s58q)  # (fifty-eighth session) s58a in about five minutes, for a short budget: fewer ring tests, one round
           gputests s58q 240 "one_token_rings or batched_decode or register_rings or ring_steady_state"
           abbench s58q-m 1 "new old" 150 "^(== |[0-9]+ )|rror" --shapes 8192x8192 --m 1,2,4,8 --weight int4 \
             --group-size 128
           abbench s58q-h 1 "new old" 120 "^(== |[0-9]+ )|rror" --shapes 4096x4096 --m 1,4 --weight int4 \
             --group-size 0 --scale-fmt fp32 ;;
    s58d)  # (fifty-eighth session, for the next call) one token on the 16-row ring of one warp per K run (one pass over
           # K, no split) for int4 layers of at most 2 x 16 x SMs rows over a long K (DECODE_INT4_LONG_K's layers), where
           # s58w found it 9 % faster kernel alone (H100, 4096x14336): alt/ (this tree with that rule) against this
           # tree through the bench, alternated twice; then the one-token ring GPU tests on alt/
           # (Ran on f167f69; the rule is in the tree since (long_k_one_ring), and this alt/ no longer parses.)
           alt_after '                nominal = short_k_ring(nominal, recipe, hopper=caps.has("wgmma"))' \
'        if hi == 1 and t.stream and nominal == DECODE_INT4_LONG_K and sms and padded_n(layer.n) // 16 <= 2 * sms:
            nominal = Tile(8, 16, 512, 1, 1, 8, 4, stream=4, occupancy=2)
'
           abbench s58d-4 2 "new alt" 120 "^(== |1 )|rror" --shapes 4096x14336,4096x11008,2048x8192,4096x8192 --m 1 \
             --weight int4 --group-size 128
           PYTHONPATH=$PWD/alt timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py \
             -k "one_token_rings or batched_decode" 2>&1 | tee "$OUT/s58d_tests.log" | tail -2 ;;
    s58c)  # (fifty-eighth session) one token over a long K on rings of one warp per K run against the planner's ring
           # of two warps per run (kernel alone; gpu_sweep.py group s58w)
           for w in "int2 128" "int4 128"; do set -- $w
             timeout 150 python3 scripts/gpu_sweep.py --rounds 3 --shapes 8192x8192,4096x14336 --m 1 --groups s58w \
               --weight $1 --group $2 --json "$OUT/s58w-$1.json" 2>&1 | tee "$OUT/s58w-$1.log" | grep -vE "^\s*$" | tail -8
           done ;;
    s57b)  # (fifty-seventh session) Turing's stream tiles of 8-bit codes at three register slots (as the T4 plans
           # them) and the byte tiles of half-block groups above 128 tokens (as the A100 / L40S plan them), compiled
           # for this GPU; then the random layers as older GPUs plan them (T4 among them)
           timeout 400 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py \
             -k "turing_decode or half_group or bf16_activations_where or older" 2>&1 | tee "$OUT/s57b_tests.log" \
             | grep -E "^E  .*(Error|\()|passed|failed"; rc=$((rc | PIPESTATUS[0])) ;;
    s57a)  # (fifty-seventh session) the whole MoE GPU suite after the fifty-sixth session's fp8 default (e4m3
           # warpgroup tiles for fp8 MoE weights on Hopper; 9-16 rows per expert on the 32-row tile)
           timeout 500 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py 2>&1 \
             | tee "$OUT/s57a_moe.log" | grep -E "^E  .*(Error|\()|passed|failed"; rc=$((rc | PIPESTATUS[0])) ;;
    s56)   # (fifty-sixth session) s56a then s56b, about 9 minutes
           OUT="$OUT/s56a" bash "$0" s56a; rc=$((rc | $?))
           OUT="$OUT/s56b" bash "$0" s56b; rc=$((rc | $?)) ;;
    s56d)  # (fifty-sixth session, measured and removed since) the split's two forms -- one chain of eight wgmmas
           # per block, or two of four summed at the fold (HUMMING_FP8_SPLIT_SETS=2, INT_FP8_MODE 3) -- against the
           # F2FP conversion, M = 1-64; the second form measured the same and is gone: the figures are in the
           # perf notes; to repeat the split against F2FP at these M:
           envbench s56d 2 "split=HUMMING_INT_FP8_SPLIT=1 cvt=HUMMING_INT_FP8_SPLIT=0" 100 "^(== |[0-9]+ )|rror" \
             --shapes 4096x4096,8192x8192,28672x8192 --m 1,8,16,32,64 --weight int4 --group-size 128 --act e4m3 ;;
    s56c)  # (fifty-sixth session) int4 codes as two e4m3 operands per register (HUMMING_INT_FP8_SPLIT=1, INT_FP8_MODE
           # 2 on warpgroup tiles of at most 64 tokens): its GPU tests (dense; MoE with HUMMING_MOE_BYTE_WGMMA=1),
           # then the bench, split against the F2FP conversion (cvt), alternated twice, int4 g128 x e4m3 per token
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py tests/test_moe.py \
             -k "split_into" 2>&1 | tee "$OUT/s56c_tests.log" | grep -E "^E  .*(Error|\()|passed|failed"
           rc=$((rc | PIPESTATUS[0]))
           envbench s56c 2 "split=HUMMING_INT_FP8_SPLIT=1 cvt=HUMMING_INT_FP8_SPLIT=0" 150 "^(== |[0-9]+ )|rror" \
             --shapes 4096x4096,8192x8192,28672x8192 --m 1,16,64,256,1024 --weight int4 --group-size 128 --act e4m3 ;;
    s56a)  # (fifty-sixth session) fp8 MoE layers on Hopper's byte warpgroup tiles (HUMMING_MOE_BYTE_WGMMA=1): their
           # GPU tests (the fixture turns the switch on), the fifty-fifth session's queued W4A8-FP8 MoE case and the
           # other fp8 MoE cases as planned by default (bf16 operands on Hopper), and Ada's fp8 mma.sync MoE plans
           timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py \
             -k "fp8_warpgroup_tiles_against or fp8_as_ada or (kernels_against and e4m3)" 2>&1 \
             | tee "$OUT/s56a_moe.log" | grep -E "^E  .*(Error|\()|passed|failed"; rc=$((rc | PIPESTATUS[0])) ;;
    s56b)  # (fifty-sixth session) the same through the bench, switch on (wg) and off (bf16), alternated: fp8 per
           # channel x e4m3 per token, fp8 in groups of 128 x e4m3 in groups of 128 (DeepSeek-V3's scheme, the bench's
           # groups along K), int4 g128 x e4m3 per token (W4A8-FP8); Qwen3-30B-A3B's experts and a Mixtral-sized layer
           for w in "e4m3 0 fp32 dynamic_token" "e4m3 128 fp32 dynamic_group 128" "int4 128 fp16 dynamic_token"; do
             set -- $w
             envbench "s56b-$1-$2" 1 "wg=HUMMING_MOE_BYTE_WGMMA=1 bf16=HUMMING_MOE_BYTE_WGMMA=0" 120 \
               "^(== |[0-9]+ )|rror" --moe-shapes 128x8x1536x2048,128x8x2048x768,8x2x28672x4096 --m 1,16,256,4096 \
               --weight "$1" --group-size "$2" --scale-fmt "$3" --act e4m3 --act-quant "$4" ${5:+--act-group-size "$5"}
           done ;;
    s55a)  # (fifty-fifth session) integer codes made fp8 operands (W4A8-FP8, DequantBytes::INT_FP8): the
           # byte-operand and byte warpgroup GPU tests of them, then int4 g128 x e4m3 through the bench with
           # HUMMING_INT_FP8 on (e4m3 MMAs) and off (bf16 MMAs, as before), and once with cuBLAS fp16 and int4 x bf16
           # for reference
           gputests s55a 300 "(byte_operands and (e4m3 or e5m2) and (int4 or uint4 or int2)) or \
(byte_wgmma_tiles and int4 and -2])"
           envbench s55a-f 1 "fp8=HUMMING_INT_FP8=1 bf16=HUMMING_INT_FP8=0" 150 "^(== |[0-9]+ )|rror" \
             --shapes 8192x8192,28672x8192 --m 1,16,64,256,1024,4096 --weight int4 --group-size 128 --act e4m3
           timeout 150 humming bench --shapes 8192x8192,28672x8192 --m 1,16,64,256,1024,4096 --weight int4 \
             --group-size 128 --act bf16 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/s55a-ref" 2>&1 | tee "$OUT/s55a-ref.log" | grep -E "^([0-9]+ )|rror" ;;
    s54h)  # (fifty-fourth session) for the next H200: the table of record with the cluster fit (s54b), then the fit's
           # on / off figures there (s54a at 17-64 tokens, s54d at 9-16), about 8 minutes
           OUT="$OUT/s54b" bash "$0" s54b; rc=$((rc | $?))
           OUT="$OUT/s54a" S54A_ROUNDS=1 bash "$0" s54a; rc=$((rc | $?))
           OUT="$OUT/s54d" bash "$0" s54d; rc=$((rc | $?)) ;;
    s54a)  # (fifty-fourth session) warpgroup launches of 32-64 tokens per tile split K only as far as clusters hold
           # (Launcher.cluster_fit_split): the split-K GPU tests, then the bench with HUMMING_CLUSTER_FIT on and off
           # on the layers whose launches it changes (7-8.5K rows at 17-64 tokens; M=16 as a check that nothing moved)
           gputests s54a 400 "split_k_fitted or split_k_in_clusters or large_shapes_split"
           envbench s54a-i "${S54A_ROUNDS:-2}" "fit=HUMMING_CLUSTER_FIT=1 off=HUMMING_CLUSTER_FIT=0" 150 \
             "^(== |16 |24 |32 |48 |64 )|rror" --shapes 8192x8192,7168x4096,5376x4096 --m 16,24,32,48,64 \
             --weight int4 --group-size 128
           envbench s54a-e "${S54A_ROUNDS:-2}" "fit=HUMMING_CLUSTER_FIT=1 off=HUMMING_CLUSTER_FIT=0" 100 \
             "^(== |32 |64 )|rror" --shapes 8192x8192 --m 32,64 --weight e4m3 --group-size 0 ;;
    s54d)  # (fifty-fourth session) 16-token tiles fitted to clusters where their slices span at most 2048 columns,
           # launched programmatically (FIT_16_MAX_SLICE_K): the cluster GPU tests, then the bench with
           # HUMMING_CLUSTER_FIT on and off at 9 and 16 tokens (8192x8192: unchanged, a check)
           gputests s54d 300 "split_k_fitted or split_k_in_clusters"
           envbench s54d-i 2 "fit=HUMMING_CLUSTER_FIT=1 off=HUMMING_CLUSTER_FIT=0" 150 "^(== |9 |16 )|rror" \
             --shapes 8192x4096,8192x3584,7168x4096,5376x4096,8192x8192 --m 9,16 --weight int4 --group-size 128
           envbench s54d-e 2 "fit=HUMMING_CLUSTER_FIT=1 off=HUMMING_CLUSTER_FIT=0" 100 "^(== |9 |16 )|rror" \
             --shapes 8192x4096 --m 9,16 --weight e4m3 --group-size 0 ;;
    s54c)  # (fifty-fourth session) the cluster fit for 16-token tiles too (alt), and fitted launches programmatic
           # (alt2: the crowded rule waived for cluster launches), against this tree through the bench; first the
           # cluster GPU tests
           gputests s54c 300 "split_k_fitted or split_k_in_clusters"
           alt_after "FIT_MIN_TOKENS, FIT_MAX_TOKENS = 32, 64" "FIT_MIN_TOKENS = 16
"
           alt_after "FIT_MIN_TOKENS, FIT_MAX_TOKENS = 32, 64" "FIT_MIN_TOKENS = 16
" alt2
           python3 - <<'PY'
p = "alt2/humming_nvidia/mma_sync_launch.py"
a = "        pdl_ok = not (tile.wgmma and self.crowded(tile, lp, n_tiles * m_tiles * split))\n"
s = open(p).read()
assert s.count(a) == 1
open(p, "w").write(s.replace(a, a + "        pdl_ok = pdl_ok or cz > 1\n"))
PY
           abbench s54c 2 "new alt alt2" 150 "^(== |9 |16 |32 |64 )|rror" --shapes 8192x8192,7168x4096,5376x4096 \
             --m 9,16,32,64 --weight int4 --group-size 128 ;;
    s54b)  # (fifty-fourth session) the issue-6 int4 rows with cuBLAS after s54a's rule (int4rows), and the W2A16 row
           int4rows s54b
           widths s54b 8192x8192 "int2:128 int2:0" ;;
    s53g)  # (fifty-third session) one token of 2-bit codes on 8192x8192 (the W2A16 target): 16-warp rings of one CTA per
           # SM over the whole K against the planner's ring (gpu_sweep.py group s53g, kernel alone), g128 and per channel
           for g in 128 0; do
             timeout 120 python3 scripts/gpu_sweep.py --rounds 3 --shapes 8192x8192 --m 1 --groups s53g --weight int2 \
               --group $g --json "$OUT/s53g-g$g.json" 2>&1 | tee "$OUT/s53g-g$g.log" | grep -vE "^\s*$" | tail -8
           done ;;
    s53f)  # (fifty-third session) which tile gpt-oss-120b's MXFP4 experts (128, top-4, bf16) should decode on: the
           # plan's 8-token warpgroup tile against the register rings, the whole call, gate/up (5760 x 2880), each
           # checked
           timeout 170 python3 scripts/gpu_moe_tiles.py --weight mxfp4 --act bf16 --experts 128 --topk 4 --n 5760 \
             --k 2880 --m 1,4,16 --limit 9 --check --json "$OUT/s53f.json" 2>&1 | tee "$OUT/s53f.log" | tail -14
           rc=$((rc | PIPESTATUS[0])) ;;
    s53e)  # (fifty-third session) one token of 2-bit codes on at most 4096 rows over a longer K on the 16-warp ring
           # (s44b's alt2, now planned on Hopper): its GPU tests through the planner, then the bench (int2 g128 and per
           # channel, 4096x14336 at 1, 2 and 5 tokens)
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py \
             -k "one_token_rings_of_2_bit and int2" 2>&1 | tee "$OUT/s53e_tests.log" \
             | grep -E "^E  .*(Error|\()|passed|failed"; rc=$((rc | PIPESTATUS[0]))
           for g in 128 0; do
             timeout 60 humming bench --shapes 4096x14336 --m 1,2,5 --weight int2 --group-size $g --methods humming \
               --repeats 3 --no-plot --no-jit --out "$OUT/s53e-g$g" 2>&1 | tee "$OUT/s53e-g$g.log" \
               | grep -E "^(== |1 |2 |5 )|stream |rror"
           done ;;
    s53t)  # (fifty-third session) `humming tune` of an MoE layer (never run on a GPU: s49b's second half) and its
           # entry's plan against the reference
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_tune.py -k moe 2>&1 \
             | tee "$OUT/s53t_tune.log" | grep -E "^E  .*(Error|\()|passed|failed"; rc=$((rc | PIPESTATUS[0])) ;;
    s53d)  # (fifty-third session) programmatic MoE launches now on by default (HUMMING_MOE_PDL): every MoE GPU test
           # (test_moe, the engine's MoE kernel) as the defaults launch them, then 16 random MoE layers
           timeout 360 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py tests/test_engine.py \
             -k "moe or MoE" 2>&1 | tee "$OUT/s53d_moe.log" | grep -E "^E  .*(Error|\()|passed|failed"
           rc=$((rc | PIPESTATUS[0]))
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py -k random_moe 2>&1 \
             | tee "$OUT/s53d_fuzz.log" | tail -2; rc=$((rc | PIPESTATUS[0])) ;;
    s53w)  # (fifty-third session) the issue-6 widths at M=1 on 8192x8192 (W2, W3, W8, fp8), for the table of record
           widths s53w 8192x8192 "int2:128 int3:128 int8:0 e4m3:0" ;;
    s53c)  # (fifty-third session) the routed MoE ring's x_rows form below sm_90 (XR_AGAIN: x_rows + m0 formed each
           # turn; it spilled on sm_80 / sm_89 otherwise), forced on for this GPU in alt/ and checked against the
           # reference as the A100 plans the layers (both rings), timed beside this tree's form; then the planner's
           # MoE tests (its plans and the direct-routing test)
           rm -rf alt && mkdir -p alt && cp -r backends/nvidia alt/humming_nvidia
           sed -i 's/#if defined(__CUDA_ARCH__) \&\& __CUDA_ARCH__ < 900/#if 1/' \
             alt/humming_nvidia/include/humming/kernels/gemm_mma_sync.cuh
           grep -c "^#if 1" alt/humming_nvidia/include/humming/kernels/gemm_mma_sync.cuh
           for nk in 1536x2048 2048x768; do
             for v in alt new; do
               pp=; [ $v = alt ] && pp=$PWD/alt
               PYTHONPATH=$pp timeout 100 python3 scripts/gpu_moe_tiles.py --as a100 --n ${nk%x*} --k ${nk#*x} \
                 --m 1,4,16,64 --check --only 64x2,128x1 --json "$OUT/s53c-$v-$nk.json" 2>&1 \
                 | tee "$OUT/s53c-$v-$nk.log" | tail -5; rc=$((rc | PIPESTATUS[0]))
             done
           done
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py \
             -k "direct_routing or (against and 64x8)" 2>&1 | tee "$OUT/s53c_moe.log" \
             | grep -E "^E  .*(Error|\()|passed|failed"
           rc=$((rc | PIPESTATUS[0])) ;;
    s52g)  # (fifty-second session) a direct call of many CTAs on the wider ring (direct_rows: down at 4 tokens): the
           # whole call at 1 and 4 tokens, both Qwen3 layers; the direct-routing test; the 64-expert MoE cases
           for nk in 2048x768 1536x2048; do
             timeout 40 python3 scripts/gpu_moe_parts.py --n ${nk%x*} --k ${nk#*x} --m 1,4 \
               --json "$OUT/s52g-$nk.json" 2>&1 | tee "$OUT/s52g-$nk.log"; rc=$((rc | PIPESTATUS[0]))
           done
           timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py \
             -k "direct_routing or (against and 64x8 and (int4 or uint4))" 2>&1 | tee "$OUT/s52g_moe.log" \
             | grep -E "^E  .*(Error|\()|passed|failed"
           rc=$((rc | PIPESTATUS[0])) ;;
    s52e)  # (fifty-second session) the direct-routing test with its tolerance for the launcher's K split (which follows
           # the block count: the two routings sum a row's K in other slices); then s48c's dense bf16 tests (the
           # GEMM's parameters gained `experts` this session; never run since their bound's bf16 limits changed)
           timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py -k direct_routing 2>&1 \
             | tee "$OUT/s52e_direct.log" | grep -E "^E  .*(Error|\()|passed|failed"
           rc=$((rc | PIPESTATUS[0]))
           gputests s52e 300 "bf16 and (weight_formats or group_and_fp4 or one_token_rings or prefill or folded)" ;;
    s52d)  # (fifty-second session) direct calls on the one-row range's tile (MOE_DECODE_INT4, 8 x 64) and routed ones
           # from two rows on the 8 x 128 ring of one warp along K (MOE_ROUTED_INT4): the MoE tests against the
           # reference, the MLP, direct routing against the routing kernel, graphs; the whole call at 1-64 tokens,
           # Qwen3-30B-A3B's gate/up and down; then s52c's probe of the bf16 ulp
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py \
             -k "direct_routing or against or mlp_kernels or graph_capture" 2>&1 | tee "$OUT/s52d_moe.log" \
             | grep -E "^E  .*(Error|\()|passed|failed"
           rc=$((rc | PIPESTATUS[0]))
           for nk in 1536x2048 2048x768; do
             timeout 60 python3 scripts/gpu_moe_parts.py --n ${nk%x*} --k ${nk#*x} --m 1,4,16,64 \
               --json "$OUT/s52d-$nk.json" 2>&1 | tee "$OUT/s52d-$nk.log"; rc=$((rc | PIPESTATUS[0]))
           done
           timeout 60 python3 scripts/gpu_moe_repeat.py --reps 3 2>&1 | tee "$OUT/s52d-repeat.log" ;;
    s52c)  # (fifty-second session) where direct routing and the routing kernel differ (s52a's bf16 ulp): the layer as
           # the test builds it (a bias, experts held elsewhere, an id past E, both input shapes); the test again;
           # then s48c's dense bf16 tests (never run since their bound's bf16 limits changed)
           timeout 120 python3 scripts/gpu_moe_repeat.py --reps 3 2>&1 | tee "$OUT/s52c.log"; rc=$((rc | PIPESTATUS[0]))
           timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py -k direct_routing 2>&1 \
             | tee "$OUT/s52c_direct.log" | grep -E "^E  .*(Error|\()|passed|failed"
           rc=$((rc | PIPESTATUS[0]))
           gputests s52c 200 "bf16 and (weight_formats or group_and_fp4 or one_token_rings or prefill or folded)" ;;
    s52b)  # (fifty-second session) s52a's one failure: direct routing and the routing kernel differed by one bf16 ulp
           # (uint4 g64 zero points, bf16, one token, split 16 ways in K): does each way repeat itself bit for bit?
           # Then s51c's ring checks (the 8 x 128 ring of one warp along K against the reference, timed)
           timeout 120 python3 scripts/gpu_moe_repeat.py 2>&1 | tee "$OUT/s52b.log"; rc=$((rc | PIPESTATUS[0]))
           for nk in 1536x2048 2048x768; do
             timeout 120 python3 scripts/gpu_moe_tiles.py --n ${nk%x*} --k ${nk#*x} --m 1,4,16,64 --check \
               --only 64x2,32x4,128x1 --json "$OUT/s52b-$nk.json" 2>&1 | tail -6; rc=$((rc | PIPESTATUS[0]))
           done ;;
    s52a)  # (fifty-second session) direct routing (few pairs: no routing kernel; the GEMM's entry and the combine
           # skip ids outside [0, E)): its GPU test against the routing kernel (bit for bit, graphs), the MoE tests
           # against the reference and the MLP (their small M route directly now), then the whole call timed with
           # and without the routing kernel, Qwen3-30B-A3B's gate/up and down at 1, 2 and 4 tokens
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py \
             -k "direct_routing or against or mlp_kernels or graph_capture" 2>&1 | tee "$OUT/s52a_moe.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           for nk in 1536x2048 2048x768; do
             timeout 100 python3 scripts/gpu_moe_parts.py --n ${nk%x*} --k ${nk#*x} --m 1,2,4 \
               --json "$OUT/s52a-$nk.json" 2>&1 | tee "$OUT/s52a-$nk.log"; rc=$((rc | PIPESTATUS[0]))
           done ;;
    s51c)  # (fifty-first session) the MoE decode ring of many experts now planned (MOE_DECODE_INT4: DECODE_INT4_WIDE's
           # 8 x 64 ring, s51a's measurements): the MoE tests against the reference (64 experts top-8 among them) and
           # the MLP; then the 8 x 128 ring of one warp along K that s51a found faster still from 4 tokens, never
           # checked on a GPU (no plan runs an int4 ring of one warp along K), checked against the reference and
           # timed beside the planned ring and the one before, gate/up and down
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py -k "against or mlp_kernels" \
             2>&1 | tee "$OUT/s51c_moe.log" | tail -2; rc=$((rc | PIPESTATUS[0]))
           for nk in 1536x2048 2048x768; do
             timeout 90 python3 scripts/gpu_moe_tiles.py --n ${nk%x*} --k ${nk#*x} --m 1,4,16,64 --check \
               --only 64x2,32x4,128x1 --json "$OUT/s51c-$nk.json" 2>&1 | tail -6; rc=$((rc | PIPESTATUS[0]))
           done ;;
    s51)   # (fifty-first session, one call) the K-shard group-activation test and the MoE bf16 cases (from s48c), with
           # HUMMING_MOE_XGATHER on by default now; then s51a's gate/up half
           timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_k_shards.py 2>&1 \
             | tee "$OUT/s51_shards.log" | tail -2; rc=$((rc | PIPESTATUS[0]))
           timeout 90 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py -k "bf16 or gpt_oss" 2>&1 \
             | tee "$OUT/s51_moe.log" | tail -2; rc=$((rc | PIPESTATUS[0]))
           timeout 200 python3 scripts/gpu_moe_tiles.py --n 1536 --k 2048 --m 1,4,16,64 \
             --json "$OUT/s51a-gateup.json" 2>&1 | tee "$OUT/s51a-gateup.log" ;;
    s51a)  # (fifty-first session) which tile an MoE decode call should run: the whole call timed with each candidate
           # tile (the plan's, rings of 8 rows 16-128 wide, the warpgroup tiles of 16 and 32 rows) at 1-64 tokens,
           # Qwen3-30B-A3B's gate/up and down (128 experts, top-8, int4 g128 fp16)
           timeout 200 python3 scripts/gpu_moe_tiles.py --n 1536 --k 2048 --m 1,4,16,64 \
             --json "$OUT/s51a-gateup.json" 2>&1 | tee "$OUT/s51a-gateup.log"
           timeout 120 python3 scripts/gpu_moe_tiles.py --n 2048 --k 768 --m 1,16,64 \
             --json "$OUT/s51a-down.json" 2>&1 | tee "$OUT/s51a-down.log" ;;
    s50b)  # what HUMMING_MOE_XGATHER=1 saves (one launch and a write and read of the routed rows per call; the lean
           # rings read each row's offset every turn: an L1 load and a branch per row): the MoE bench off and on,
           # alternated twice, Qwen3-30B-A3B's experts and a Mixtral-sized layer
           envbench s50b-q 2 "off=HUMMING_MOE_XGATHER=0 on=HUMMING_MOE_XGATHER=1" 120 "^(== |1 |16 |64 |256 |1024 )|stream |rror" \
             --preset qwen3-30b-a3b --kind moe --m 1,16,64,256,1024 --weight int4 --group-size 128
           envbench s50b-x 2 "off=HUMMING_MOE_XGATHER=0 on=HUMMING_MOE_XGATHER=1" 60 "^(== |1 |16 |256 )|stream |rror" \
             --moe-shapes 8x2x28672x4096 --m 1,16,256 --weight int4 --group-size 128 ;;
    s49a)  # MoE weights with act order (each expert's column order applied by the gather: moe_gather's PERM, and the
           # torch routing's gather by each row's expert; never run on a GPU) and every other MoE GPU test, as the
           # defaults launch them; then the random MoE layers (tests/test_gemm_fuzz_gpu.py, 16 seeds: real experts'
           # sizes, routing, formats and activations)
           timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py tests/test_engine.py \
             -k "moe or MoE" 2>&1 | tee "$OUT/s49a_moe.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_fuzz_gpu.py -k random_moe 2>&1 \
             | tee "$OUT/s49a_fuzz.log" | grep -E "passed|failed|FAILED|Error" | tail -20; rc=$((rc | PIPESTATUS[0])) ;;
    s49b)  # the MoE GPU tests with HUMMING_MOE_PDL=1 (after s49a): programmatic launches must not change a result;
           # then `humming tune` of an MoE layer (new, never run on a GPU) and its entry's plan against the reference
           HUMMING_MOE_PDL=1 timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py \
             tests/test_engine.py -k "moe or MoE" 2>&1 | tee "$OUT/s49b_moe.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_tune.py -k moe 2>&1 \
             | tee "$OUT/s49b_tune.log" | tail -3; rc=$((rc | PIPESTATUS[0])) ;;
    s49c)  # what HUMMING_MOE_PDL=1 saves (every kernel of an MoE call launched programmatically on sm_90, each waiting
           # first: moe_route.cuh's moe_pdl_enter, the MoE GEMM's entry): the MoE bench off and on, alternated twice
           envbench s49c-q 2 "off=HUMMING_MOE_PDL=0 on=HUMMING_MOE_PDL=1" 120 "^(== |1 |16 |64 |256 )|stream |rror" \
             --preset qwen3-30b-a3b --kind moe --m 1,16,64,256 --weight int4 --group-size 128
           envbench s49c-x 2 "off=HUMMING_MOE_PDL=0 on=HUMMING_MOE_PDL=1" 60 "^(== |1 |16 )|stream |rror" \
             --moe-shapes 8x2x28672x4096 --m 1,16 --weight int4 --group-size 128
           # what act order costs an MoE call (the gather's permutation, value by value): GPTQ uint4 g128 zp, plain
           # and with act order
           for ao in plain act-order; do
             echo "== $ao"
             timeout 90 humming bench --preset qwen3-30b-a3b --kind moe --m 1,16,256 --weight uint4 --zero-point int \
               --group-size 128 $([ $ao = act-order ] && echo --act-order) --methods humming --repeats 3 --no-plot \
               --no-jit --out "$OUT/s49c-$ao" 2>&1 | tee "$OUT/s49c-$ao.log" | grep -E "^(== |1 |16 |256 )|stream |rror"
           done ;;
    s48d)  # 33-64 tokens on 2049-4096 rows over a K of 4096-12287 now take the folded BK=256 tile (WG_32_DEEP; from
           # `humming tune`, s46t): through the bench against alt/ (WG_32_NARROW there, as before), alternated; 65 and 96
           # tokens as a check that nothing else moved
           alt_after "        tile = WG_32_DEEP" \
'        tile = wgmma_tile(lo, layer.n, heavy_dequant(recipe), layer.k, ops16=True)
'
           abbench s48d 2 "new alt" 120 "^(== |33 |48 |64 |65 |96 )|rror" --shapes 4096x4096,3072x8192,4096x8192,4096x6144 \
             --m 33,48,64,65,96 --weight int4 --group-size 128 ;;
    s48c)  # the GPU tests' bound with bf16 operands' own subnormal limits (bound(bf16_ops=...)): before, bf16 took fp16's
           # 2^-25 times an out_mul of up to 2^120 (e4m3 per channel, e5m2 per tensor: any finite output passed). The
           # bf16 cases of the dense float and ring tests, the MoE bf16 cases; where an MoE call's time goes (the whole
           # call and each launch alone, scripts/gpu_moe_parts.py: Qwen3-30B-A3B's gate/up, a Mixtral-sized 8 x top-2
           # layer); 60 fuzz seeds
           gputests s48c 160 "bf16 and (weight_formats or group_and_fp4 or one_token_rings or prefill or folded)"
           timeout 90 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py -k "bf16 or gpt_oss" 2>&1 \
             | tee "$OUT/s48c_moe.log" | tail -2; rc=$((rc | PIPESTATUS[0]))
           # (fiftieth session) K-shards with activations in groups, which the planner used to raise on or plan on
           # e4m3 operands the call refused: now on 16-bit operands, the groups quantized in the shard's columns
           timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_k_shards.py 2>&1 \
             | tee "$OUT/s50_shards.log" | tail -2; rc=$((rc | PIPESTATUS[0]))
           timeout 60 python3 scripts/gpu_moe_parts.py --m 1,16,256 --json "$OUT/s48c-parts-qwen3.json" 2>&1 | tail -4
           timeout 60 python3 scripts/gpu_moe_parts.py --experts 8 --topk 2 --n 28672 --k 4096 --m 1,16 \
             --json "$OUT/s48c-parts-mixtral.json" 2>&1 | tail -3
           FUZZ_N=60 FUZZ_S=100 bash "$0" fuzz || rc=1 ;;
    s48a)  # after s47a (gpt-oss's MXFP4 experts in bf16: inf, their output multiplier 2^133 past fp32; a test's K that its
           # groups did not divide; an engine test's empty expert): float codes' re-bias now rides on the group scales
           # (pack_weight), MoE's shared power of two on out_mul. The MoE tests again, and the dense tests of float codes
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py tests/test_engine.py \
             -k "moe or MoE" 2>&1 | tee "$OUT/s48a_moe.log" | tail -3; rc=$((rc | PIPESTATUS[0]))
           gputests s48a 280 "(e2m1 or e4m3 or e5m2 or e3m2 or e2m3 or fp4) and (weight_formats or group_and_fp4 or \
one_token_rings or folded or stream_tiles or prefill)" ;;
    s47a)  # MoE GEMM (humming.ops.moe, the kernels' MOE blocks, moe_route.cuh), never run on a GPU: its GPU tests
           # (every tile kind the plans pick for 1-1000 tokens, 8 experts top-2 and 64 top-8 with experts held
           # elsewhere, int/float codes, int8 and fp8 activations; the routing kernel against the torch routing;
           # graph capture; QuantMoE under torch.compile; the batched format; the MLP; gpt-oss's experts) and the
           # engine's MoEKernel
           timeout 540 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_moe.py tests/test_engine.py \
             -k "moe or MoE" 2>&1 | tee "$OUT/s47a_tests.log" | tail -3; rc=$((rc | PIPESTATUS[0])) ;;
    s47b)  # the MoE bench: Qwen3-30B-A3B's expert layers and a Mixtral-sized gate/up (8 experts top-2, 28672x4096)
           # against the per-expert torch loop in fp16
           timeout 240 humming bench --preset qwen3-30b-a3b --kind moe --m 1,16,64,256,1024 --weight int4 --group-size 128 \
             --methods humming,torch-loop-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/s47b-qwen3" 2>&1 \
             | tee "$OUT/s47b-qwen3.log" | grep -E "^(== |1 |16 |64 |256 |1024 )|stream |rror"
           timeout 200 humming bench --moe-shapes 8x2x28672x4096 --m 1,16,64,256 --weight int4 --group-size 128 \
             --methods humming,torch-loop-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/s47b-mixtral" 2>&1 \
             | tee "$OUT/s47b-mixtral.log" | grep -E "^(== |1 |16 |64 |256 )|stream |rror" ;;
    s46t)  # `humming tune` on the issue's int4 layers up to 64 tokens (the tuning database in $OUT), then the bench
           # with that database against the heuristics (HUMMING_TUNING_DB=off), alternated twice
           timeout 300 humming tune --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --weight int4 \
             --group-size 128 --act fp16 --out-dtype fp16 --max-m 64 --rounds 2 --repeats 3 \
             --db "$OUT/s46t-tuning.json" 2>&1 | tee "$OUT/s46t-tune.log" | grep -E "^(== |M )|\*|rror|stored"
           envbench s46t 1 "heuristics=HUMMING_TUNING_DB=off tuned=HUMMING_TUNING_DB=$OUT/s46t-tuning.json" 120 \
             "^(== |1 |16 |64 )|stream |rror" --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 \
             --m 1,16,64 --weight int4 --group-size 128 ;;
    s45b)  # int4 in groups of 8 / 16 / 24 / 32 through the bench (K = 8160, a multiple of each), humming alone: what
           # the padding costs against the unpadded groups
           for g in 8 16 24 32; do
             timeout 120 humming bench --shapes 8192x8160,28672x8160 --m 1,16,64 --weight int4 --group-size $g \
               --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/s45b-g$g" 2>&1 \
               | tee "$OUT/s45b-g$g.log" | grep -E "^(== |1 |16 |64 )|stream |rror"
           done ;;
    s44b)  # one token of 2-bit codes at three CTAs per SM: kernel alone (group s44o), then through the bench against
           # alt/ (this tree with those rings at occupancy 3, 32, 64 or 112 rows, whichever one-wave grid of them
           # fills the most slots; 79-80 registers, no spills) and alt2/ (below), g128 and per channel, alternated (prepared in the forty-fourth
           # session, not run: no device was lent after s44a)
           sw() { timeout 200 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/s44b-sweep.log" | grep -vE "^\s*$" ; }
           sw --shapes 8192x8192,4096x14336,14336x4096 --m 1 --groups s44o --weight int2 --group 128 --json "$OUT/s44b-int2.json"
           alt_after "        fitted = byte_depth(fitted, recipe, smem)" \
'        if fitted.stream == 4 and recipe.bits == 2 and hi == 1 and fitted.occupancy == 2 and sms:
            best, most = None, 0
            for cand in (fitted, DECODE_INT4_LONG_K, DECODE_INT4_WIDE, Tile(8, 112, 64, 1, 7, 1, 4, stream=4)):
                cand = replace(cand, occupancy=3)
                tiles = padded_n(layer.n) // cand.bn
                ctas = tiles * max(1, (3 * sms + tiles // 2) // tiles)
                if padded_n(layer.n) % cand.bn == 0 and most < ctas <= 3 * sms:
                    best, most = cand, ctas
            if best is not None:
                fitted = best
'
           # alt2/: 2-bit codes at one token on the 16-warp ring of one CTA per SM (DECODE_INT3) on layers of at most
           # 4096 rows over a longer K (s44a, kernel alone: 8.38 us on 4096x14336 against 9.90 for the planner's)
           alt_after "        fitted = byte_depth(fitted, recipe, smem)" \
'        if fitted.stream == 4 and recipe.bits == 2 and hi == 1 and layer.n <= 4096 and kp > 4096:
            fitted = DECODE_INT3
' alt2
           for g in 128 0; do
             abbench s44b-g$g 2 "new alt alt2" 120 "^(== |1 )|stream |rror" --shapes 14336x4096,4096x14336,8192x8192 \
               --m 1 --weight int2 --group-size $g
           done ;;
    s44a)  # one token of 2-bit (and 3-bit) codes on deeper register rings: kernel alone (gpu_sweep.py group s44r), then
           # through the bench against alt/ (this tree with one-token rings of 2-bit codes at eight stages), alternated
           sw() { timeout 200 python3 scripts/gpu_sweep.py --rounds 3 "$@" 2>&1 | tee -a "$OUT/s44a-sweep.log" | grep -vE "^\s*$" ; }
           sw --shapes 8192x8192,4096x14336,14336x4096,4096x4096 --m 1 --groups s44r --weight int2 --group 128 \
             --json "$OUT/s44a-int2.json"
           sw --shapes 8192x8192,4096x14336 --m 1 --groups s44r --weight int3 --group 128 --json "$OUT/s44a-int3.json"
           alt_after "        fitted = byte_depth(fitted, recipe, smem)" \
'        if fitted.stream == 4 and recipe.bits == 2 and hi == 1:
            fitted = replace(fitted, stages=8)
'
           abbench s44a 2 "new alt" 120 "^(== |1 )|stream |rror" --shapes 4096x4096,14336x4096,4096x14336,8192x8192 \
             --m 1 --weight int2 --group-size 128 ;;
    s43a)  # is 28672x8192's one-token gap the grid's balance? int4 g128 at M = 1, 8 on layers whose 128-row decode
           # tiles number 224 (28672 rows: two CTAs on 92 SMs, one on 40), 264 (33792: two on every SM), 198 and 132,
           # with the stream, two rounds; stream-K against the data-parallel grid through the bench; timelines (loops by
           # CTAs per SM) of both grids, traced and plain builds timed as the bench does
           for r in 1 2; do
             timeout 120 humming bench --shapes 28672x8192,33792x8192,25344x8192,16896x8192 --m 1,8 --weight int4 \
               --group-size 128 --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/s43a-bal$r" 2>&1 \
               | tee "$OUT/s43a-bal$r.log" | grep -E "^(== |1 |8 )|stream "
           done
           envbench s43a-sk 2 "dp=HUMMING_STREAM_K=0 sk=HUMMING_STREAM_K=1" 60 "^(== |1 |8 )|stream " \
             --shapes 28672x8192,33792x8192 --m 1,8 --weight int4 --group-size 128
           timeout 200 python3 scripts/gpu_trace.py --shapes 28672x8192,33792x8192 --m 1 --no-stream --time \
             --tile "Tile(8, 128, 256, 1, 4, 1, 5, wgmma=1, fold=1, sk=1)" --json "$OUT/s43a-trace.json" 2>&1 \
             | tee "$OUT/s43a-trace.log" | grep -v "^    Tile"; rc=$((rc | PIPESTATUS[0])) ;;
    s42f)  # fp8 group activations' 128-token tiles without WAIT_FIRST (the scales now in the stages: 226 registers, no
           # stack; alt/: with it), through the bench alternated; then their GPU tests
           (export HUMMING_BYTE_GROUP_ACTS=1; abbench s42f 2 "new alt" 120 "^(== |128 |256 |1024 )|rror" \
             --shapes 8192x8192,14336x4096,28672x8192 --m 128,256,1024 --weight e4m3 --group-size 128 --scale-fmt fp32 \
             --act e4m3 --act-quant dynamic_group --act-group-size 128)
           gputests s42f 150 "fp8_group_activations or (byte_codes_at_65 and fp8)" ;;
    s42e)  # 4-bit byte codes (W4A8) at 65-128 tokens on more than 4096 rows: WG_128, K split where its CTAs fill under half
           # the SMs (alt/: the 64-token tile before), through the bench alternated; then the GPU tests
           for w in int4:128:none uint4:64:int; do
             IFS=: read -r wf gs zp <<<"$w"
             abbench s42e-$wf 2 "new alt" 120 "^(== |65 |96 |128 )|rror" --shapes 8192x8192,14336x4096 --m 65,96,128 \
               --weight "$wf" --group-size "$gs" --zero-point "$zp" --act int8 --act-quant dynamic_token
           done
           gputests s42e 200 "byte_codes_at_65 or (group_and_fp4 and e4m3) or byte_wgmma_tiles or byte_operands_at_65" ;;
    s42d)  # the final tree (fp8 group activations planned by default; byte_depth; the 65-128-token 8-bit tile): its GPU
           # tests, then fp8 / int8 byte operands beside cuBLAS fp16
           gputests s42d 330 "fp8_group_activations or group_and_fp4 or byte_wgmma_tiles or byte_operands or eight_bit_byte_codes"
           timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_act_quant.py 2>&1 | tee "$OUT/s42d_aq.log" \
             | tail -2; rc=$((rc | PIPESTATUS[0]))
           for w in e4m3:128:e4m3:dynamic_group:128 e4m3:0:e4m3:dynamic_token:0 int8:0:int8:dynamic_token:0; do
             IFS=: read -r wf gs ac aq ag <<<"$w"
             a=(--weight "$wf" --group-size "$gs" --scale-fmt fp32 --act "$ac" --act-quant "$aq")
             [ "$ag" != 0 ] && a+=(--act-group-size "$ag")
             timeout 150 humming bench --shapes 8192x8192,14336x4096,28672x8192 --m 1,16,64,128,256,1024 "${a[@]}" \
               --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/s42d-$wf-$aq" 2>&1 \
               | tee "$OUT/s42d-$wf-$aq.log" | grep -E "^(== |1 |16 |64 |128 |256 |1024 )|rror"
           done ;;
    s42c)  # 8-bit byte codes at 65-128 tokens on more than 4096 rows: the 128-token TMA tile, K split where its CTAs fill
           # under half the SMs (alt/: the 64-token tile before), through the bench alternated; then the GPU tests
           for w in e4m3:0:e4m3:dynamic_token:0 int8:0:int8:dynamic_token:0 e4m3:128:e4m3:dynamic_group:128; do
             IFS=: read -r wf gs ac aq ag <<<"$w"
             a=(--weight "$wf" --group-size "$gs" --scale-fmt fp32 --act "$ac" --act-quant "$aq")
             [ "$ag" != 0 ] && a+=(--act-group-size "$ag")
             (export HUMMING_BYTE_GROUP_ACTS=1; abbench s42c-$wf-$aq 2 "new alt" 120 "^(== |65 |96 |128 )|rror" \
               --shapes 8192x8192,14336x4096,28672x8192 --m 65,96,128 "${a[@]}")
           done
           gputests s42c 200 "eight_bit_byte_codes or byte_operands_at_65 or fp8_group_activations" ;;
    s42b)  # after s42a (AGROUP missing from other configs: fixed): 8-bit byte tiles of at most 32 tokens at two CTAs per SM
           # (byte_depth; alt/: the tree before it), through the bench alternated; the fp8 group-activation path and bf16
           # operands beside cuBLAS; then the GPU tests
           for w in e4m3:e4m3 int8:int8; do
             abbench s42b-${w%%:*} 2 "new alt" 120 "^(== |1 |8 |16 |32 )|rror" --shapes 14336x4096,4096x14336,8192x8192,28672x8192 \
               --m 1,8,16,32 --weight "${w%%:*}" --group-size 0 --scale-fmt fp32 --act "${w##*:}" --act-quant dynamic_token
           done
           a=(--shapes 8192x8192,14336x4096,28672x8192 --m 1,16,64,128,256,1024 --weight e4m3 --group-size 128
              --scale-fmt fp32 --act e4m3 --act-quant dynamic_group --act-group-size 128)
           HUMMING_BYTE_GROUP_ACTS=1 timeout 150 humming bench "${a[@]}" --methods humming,cublas-fp16 --repeats 3 --no-plot \
             --no-jit --out "$OUT/s42b-cublas" 2>&1 | tee "$OUT/s42b-cublas.log" | grep -E "^(== |1 |16 |64 |128 |256 |1024 )|rror"
           envbench s42b 1 "bf16=HUMMING_BYTE_GROUP_ACTS=0" 150 "^(== |1 |16 |64 |128 |256 |1024 )|rror" "${a[@]}"
           gputests s42b 240 "fp8_group_activations or (group_and_fp4 and e4m3) or byte_wgmma_tiles or (byte_operands and (e4m3 or int8_per))"
           timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_act_quant.py -k "group_major" \
             2>&1 | tee "$OUT/s42b_aq.log" | tail -2; rc=$((rc | PIPESTATUS[0])) ;;
    s42a)  # fp8 group activations with their scales laid out by group and copied into the stages (GemmMmaSync::XS_ROWS):
           # the GPU tests, then the e4m3 MMAs (HUMMING_BYTE_GROUP_ACTS=1) against bf16 operands, alternated, and cuBLAS
           gputests s42a 200 "fp8_group_activations or (group_and_fp4 and e4m3)"
           timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_act_quant.py -k "group_major or group_matches" \
             2>&1 | tee "$OUT/s42a_aq.log" | tail -2; rc=$((rc | PIPESTATUS[0]))
           a=(--shapes 8192x8192,14336x4096,28672x8192 --m 1,16,64,128,256,1024 --weight e4m3 --group-size 128
              --scale-fmt fp32 --act e4m3 --act-quant dynamic_group --act-group-size 128)
           envbench s42a 2 "byte=HUMMING_BYTE_GROUP_ACTS=1 bf16=HUMMING_BYTE_GROUP_ACTS=0" 150 "^(== |1 |16 |64 |128 |256 |1024 )|rror" "${a[@]}"
           HUMMING_BYTE_GROUP_ACTS=1 timeout 150 humming bench "${a[@]}" --methods humming,cublas-fp16 --repeats 3 --no-plot \
             --no-jit --out "$OUT/s42a-cublas" 2>&1 | tee "$OUT/s42a-cublas.log" | grep -E "^(== |1 |16 |64 |128 |256 |1024 )|rror" ;;
    s41k)  # after s41j (slower than bf16 operands: the activation scales read from L2 at each fold): the scales read a
           # block ahead of their fold; its GPU tests, and the bench with cuBLAS (s41j has the bf16 tree's figures)
           gputests s41k 150 "fp8_group_activations or (group_and_fp4 and e4m3)"
           timeout 100 humming bench --shapes 8192x8192,14336x4096,28672x8192 --m 1,16,64,128,256,1024 --weight e4m3 \
             --group-size 128 --scale-fmt fp32 --act e4m3 --act-quant dynamic_group --act-group-size 128 \
             --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/s41k" 2>&1 | tee "$OUT/s41k.log" \
             | grep -E "^(== |1 |16 |64 |128 |256 |1024 )|rror" ;;
    s41j)  # fp8 weights and activations in groups of 128 values on e4m3 warpgroup MMAs (GemmMmaSync::AGS): the GPU tests;
           # e4m3 g128 x e4m3 group-128 activations through the bench with cuBLAS, then the tree before (old3/: bf16
           # operands)
           gputests s41j 300 "fp8_group_activations or group_and_fp4 or byte_wgmma_tiles"
           a=(--shapes 8192x8192,14336x4096,28672x8192 --m 1,16,64,128,256,1024 --weight e4m3 --group-size 128
              --scale-fmt fp32 --act e4m3 --act-quant dynamic_group --act-group-size 128)
           timeout 150 humming bench "${a[@]}" --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/s41j-new" 2>&1 | tee "$OUT/s41j-new.log" | grep -E "^(== |1 |16 |64 |128 |256 |1024 )|rror"
           abbench s41j 1 "old" 150 "^(== |1 |16 |64 |128 |256 |1024 )" "${a[@]}" ;;
    s41i)  # formats not yet set beside cuBLAS fp16 above 256 tokens (WEIGHT:GROUP:SCALE-FMT:ZERO-POINT:ACT:ACT-QUANT:
           # ACT-GROUP:ACT-SCALE-FMT; "-" for the default)
           for w in int8:128:-:none:int8:dynamic_token:-:- e4m3:128:fp32:none:e4m3:dynamic_group:128:fp32 \
                    nvfp4:-:-:none:fp16:-:-:- nvfp4:-:-:none:e2m1:dynamic_group:16:e4m3 int6:128:-:none:fp16:-:-:- \
                    e3m2:128:-:none:fp16:-:-:- uint8:128:-:int:fp16:-:-:- int3:64:-:none:int8:dynamic_token:-:-; do
             IFS=: read -r wf gs sf zp ac aq ag asf <<<"$w"
             a=(--weight "$wf" --zero-point "$zp" --act "$ac")
             [ "$gs" != - ] && a+=(--group-size "$gs"); [ "$sf" != - ] && a+=(--scale-fmt "$sf")
             [ "$aq" != - ] && a+=(--act-quant "$aq"); [ "$ag" != - ] && a+=(--act-group-size "$ag")
             [ "$asf" != - ] && a+=(--act-scale-fmt "$asf")
             timeout 100 humming bench --shapes 8192x8192,14336x4096 --m 256,1024 "${a[@]}" --methods humming,cublas-fp16 \
               --repeats 3 --no-plot --no-jit --out "$OUT/s41i-$wf-$ac" 2>&1 | tee "$OUT/s41i-$wf-$ac-$gs.log" \
               | grep -E "^(== |256 |1024 )|rror"
           done ;;
    s41h)  # as s41g on the 64-token byte tiles at 64 and 128 tokens (WG_64_TMA, WG_64): W4A8 int4 g128, uint4 g64 int
           # zero points, e4m3 x e4m3 per channel
           for w in int4:128:none:int8 uint4:64:int:int8 e4m3:0:none:e4m3; do
             IFS=: read -r wf gs zp ac <<<"$w"
             timeout 120 python3 scripts/gpu_sweep.py --weight "$wf" --group "$gs" --zero-point "$zp" --act "$ac" \
               --m 64,128 --groups bwf64,bwf64t --defines ",HUMMING_WAIT_FIRST=2" --rounds 3 --shapes 8192x8192,28672x8192 \
               --json "$OUT/s41h-$wf.json" 2>&1 | tee "$OUT/s41h-$wf.log" | cut -c1-150
           done ;;
    s41g)  # HUMMING_WAIT_FIRST=2 (every byte tile that folds retires the previous block's group before dequantizing the
           # next) against the default (only the 128-token tiles of two partial sets), kernel alone: W4A8 int4 g128,
           # uint4 g128 int zero points on WG_128 and WG_64, e4m3 x e4m3 per channel on BYTE_WG_8BIT
           for w in int4:128:none:int8:bwf128,bwf64 uint4:128:int:int8:bwf128 e4m3:0:none:e4m3:bwf8; do
             IFS=: read -r wf gs zp ac grp <<<"$w"
             timeout 120 python3 scripts/gpu_sweep.py --weight "$wf" --group "$gs" --zero-point "$zp" --act "$ac" \
               --m 256,1024 --groups "$grp" --defines ",HUMMING_WAIT_FIRST=2" --rounds 3 --shapes 8192x8192,28672x8192 \
               --json "$OUT/s41g-$wf.json" 2>&1 | tee "$OUT/s41g-$wf.log" | cut -c1-150
           done ;;
    s41f)  # the final tree: W4A8 in groups of 64 (int8 warpgroup tiles, two partial sets) and 32 values (16-bit operands)
           # with cuBLAS fp16; the quantized-activation GPU tests through the planner
           for w in uint4:64:int int4:64:none int4:32:none; do
             IFS=: read -r wf gs zp <<<"$w"
             timeout 150 humming bench --shapes 8192x8192,14336x4096,28672x8192 --m 1,16,64,128,256,512,1024 --weight "$wf" \
               --group-size "$gs" --zero-point "$zp" --act int8 --act-quant dynamic_token --methods humming,cublas-fp16 \
               --repeats 3 --no-plot --no-jit --out "$OUT/s41f-$wf-$gs" 2>&1 | tee "$OUT/s41f-$wf-$gs.log" \
               | grep -E "^(== |1 |16 |64 |128 |256 |512 |1024 )|rror"
           done
           gputests s41f 250 "quantized_activations or byte_operands_at_65" ;;
    s41e)  # the 128-token TMA tile of groups of half a block: the previous block's group retired before the next
           # block's dequantization (HUMMING_WAIT_FIRST, no spill) against after it (48 bytes of stack), kernel alone;
           # the byte GPU tests
           for w in uint4:int int4:none int2:none; do
             timeout 100 python3 scripts/gpu_sweep.py --weight "${w%%:*}" --group 64 --zero-point "${w##*:}" --act int8 \
               --m 256,1024 --groups bg128 --defines ",HUMMING_WAIT_FIRST=0" --rounds 3 --shapes 8192x8192,28672x8192 \
               --json "$OUT/s41e-${w%%:*}.json" 2>&1 | tee "$OUT/s41e-${w%%:*}.log" | cut -c1-150
           done
           gputests s41e 300 "byte_operands or byte_wgmma_tiles" ;;
    s41d)  # byte operands in scale groups of 32 / 64 values on the H200: 16-bit operands (this tree: check_layer's
           # BYTE_GROUP_VALUES fallback) against int8 / fp8 operands (alt/: warpgroup tiles with two partial sets for
           # g64, mma.sync for g32) through the bench
           for w in uint4:64:int:int8 int4:64:none:int8 int4:32:none:int8 e4m3:64:none:e4m3; do
             IFS=: read -r wf gs zp ac <<<"$w"
             abbench "s41d-$wf-$gs-$zp-$ac" 1 "new alt" 120 "^(== |1 |16 |64 |128 |256 |1024 )" --shapes \
               8192x8192,28672x8192 --m 1,16,64,128,256,1024 --weight "$wf" --group-size "$gs" --zero-point "$zp" \
               --act "$ac" --act-quant dynamic_token
           done ;;
    s41c)  # after s41b's TMA stages for groups of half a block on 128-token tiles: the byte tests through the planner;
           # W4A8 uint4 g64 int zero points with cuBLAS fp16; formats not yet set beside cuBLAS above 256 tokens
           # (WEIGHT:GROUP:ZERO-POINT:ACT)
           gputests s41c 200 "byte_operands and not stream and not 65_512"
           timeout 150 humming bench --shapes 8192x8192,14336x4096,28672x8192 --m 1,16,64,128,256,512,1024 --weight uint4 \
             --group-size 64 --zero-point int --act int8 --act-quant dynamic_token --methods humming,cublas-fp16 \
             --repeats 3 --no-plot --no-jit --out "$OUT/s41c-zp" 2>&1 | tee "$OUT/s41c-zp.log" \
             | grep -E "^(== |1 |16 |64 |128 |256 |512 |1024 )|rror"
           for w in int4:32:none:int8 int8:64:none:int8 int4:64:none:int8 e4m3:64:none:e4m3 uint4:64:int:fp16 \
                    int4:32:none:fp16 uint4:32:int:int8; do
             IFS=: read -r wf gs zp ac <<<"$w"
             aq=(); [ "$ac" != fp16 ] && aq=(--act-quant dynamic_token)
             timeout 120 humming bench --shapes 8192x8192,14336x4096 --m 256,1024 --weight "$wf" --group-size "$gs" \
               --zero-point "$zp" --act "$ac" "${aq[@]}" --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
               --out "$OUT/s41c-$wf-$gs-$zp-$ac" 2>&1 | tee "$OUT/s41c-$wf-$gs-$zp-$ac.log" | grep -E "^(== |256 |1024 )|rror"
           done ;;
    s41b)  # byte operands in groups of 64 values on warpgroup tiles (two partial sets per block): the byte GPU tests;
           # W4A8 uint4 g64 int zero points through the bench against c581ef3 (old3/: mma.sync), then with cuBLAS; the
           # tiles above 128 tokens (gpu_sweep.py group bg64, kernel alone)
           gputests s41b 300 "byte_operands or byte_wgmma_tiles"
           abbench s41b-zp 1 "new old" 150 "^(== |1 |16 |64 |128 |256 |1024 )" --shapes 8192x8192,14336x4096,28672x8192 \
             --m 1,16,64,128,256,1024 --weight uint4 --group-size 64 --zero-point int --act int8 --act-quant dynamic_token
           timeout 200 python3 scripts/gpu_sweep.py --weight uint4 --group 64 --zero-point int --act int8 --m 256,1024 \
             --groups bg64 --rounds 3 --shapes 8192x8192,14336x4096,28672x8192 --json "$OUT/s41b.json" 2>&1 \
             | tee "$OUT/s41b.log" | cut -c1-150 ;;
    s41a)  # (prepared in the fortieth session, not run) W4A8 with integer zero points (uint4 g64, int8 per token) above
           # 128 tokens with cuBLAS fp16 in one run (s40c's kernel-alone figures put two points under 0.6x); then
           # 65-128 tokens on at most 2048 rows over a long K: the planner's 32-token tiles against the 128-token tile
           # split in K, kernel alone (confirm a winner through the bench)
           timeout 150 humming bench --shapes 8192x8192,14336x4096,28672x8192 --m 256,512,1024 --weight uint4 \
             --group-size 64 --zero-point int --act int8 --act-quant dynamic_token --methods humming,cublas-fp16 \
             --repeats 3 --no-plot --no-jit --out "$OUT/s41a-w4a8zp" 2>&1 | tee "$OUT/s41a-w4a8zp.log" \
             | grep -E "^(== |256 |512 |1024 )|rror"
           timeout 120 python3 scripts/gpu_sweep.py --weight int4 --group 128 --m 65,96,128 --groups wgsmall65 --ctas 0,2 \
             --rounds 3 --shapes 2048x14336,2048x8192,1024x14336 --json "$OUT/s41a-long.json" 2>&1 \
             | tee "$OUT/s41a-long.log" | cut -c1-150 ;;
    s40f)  # after s40e's rule: the GPU tests of the 65-512-token plans and the programmatic chain; int4 g128 / e4m3 per
           # channel with cuBLAS fp16 on the small layers at 65-128 tokens
           gputests s40f 200 "wide_token_ranges or programmatic_dependent_launch_chain"
           for w in int4:128 e4m3:0; do
             timeout 90 humming bench --shapes 4096x4096,3072x4096,2048x4096,4096x6144,2048x8192 --m 65,96,128 \
               --weight "${w%%:*}" --group-size "${w##*:}" --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
               --out "$OUT/s40f-${w%%:*}" 2>&1 | tee "$OUT/s40f-${w%%:*}.log" | grep -E "^(== |65 |96 |128 )|rror"
           done ;;
    s40e)  # (on a variant: s40d's 32-token tiles at 65-128 tokens on every layer of at most 4096 rows over a K of 4096 or
           # more that wgmma_tile's 128-token rule leaves: 4096 rows of a K under 8192, at most 2048 rows of any K) this tree
           # against f8cc0ab (old3/) through the bench, alternated twice, int4 g128
           abbench "s40e-int4" 2 "new old" 60 "^(== |65 |96 |128 )" --shapes \
             4096x4096,4096x6144,2048x8192,2048x14336,1024x8192 --m 65,96,128 --weight int4 --group-size 128 ;;
    s40d)  # wgmma_tile's 32-token tiles at 65-128 tokens on at most 3072 rows over a K of 4096-8191, K split for two CTAs
           # per SM: the 16-bit operands' GPU tests of those plans; this tree against 3a0007a (old3/) through the bench,
           # alternated twice, int4 g128 and e4m3 per channel
           gputests s40d 120 "wide_token_ranges and short"
           for w in int4:128 e4m3:0; do
             abbench "s40d-${w%%:*}" 2 "new old" 60 "^(== |65 |96 |128 )" --shapes \
               2048x4096,3072x4096,2048x6144,1024x4096 --m 65,96,128 --weight "${w%%:*}" --group-size "${w##*:}"
           done ;;
    s40c)  # W4A8 with integer zero points (uint4 g64, int8 per token) above 128 tokens: BYTE_TILE_LARGE, which spills
           # with zero points, against tiles that do not (gpu_sweep.py group bytezp, kernel alone)
           timeout 300 python3 scripts/gpu_sweep.py --weight uint4 --group 64 --zero-point int --act int8 --m 256,512,1024 \
             --groups bytezp --rounds 3 --shapes 8192x8192,14336x4096,28672x8192 --json "$OUT/s40c.json" 2>&1 \
             | tee "$OUT/s40c.log" | cut -c1-150 ;;
    s40a)  # (prepared in the thirty-ninth session, not run) 65-128 tokens on small layers, where int4 runs at 0.58-0.69x
           # cuBLAS fp16 (s39i): the 32-token tile against the planner's, kernel alone -- confirm a winner through the
           # bench before planning it (s39g: kernel alone misled on layers this short)
           timeout 150 python3 scripts/gpu_sweep.py --weight int4 --group 128 --m 65,96,128 --groups wgsmall65 --ctas 0,2 \
             --rounds 3 --shapes 4096x4096,3072x4096,4096x2048,2048x4096 --json "$OUT/s40a.json" 2>&1 \
             | tee "$OUT/s40a.log" | cut -c1-150 ;;
    s39i)  # wgmma_tile's 128-token tiles at 129-256 tokens on 2049-4096 rows over any K, at 65-128 over a K of 8192 or
           # more: the 16-bit operands' GPU tests of those ranges; int4 g128 with cuBLAS fp16 on such layers
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "wide_token_ranges" \
             2>&1 | tee "$OUT/s39i_tests.log" | tail -2
           rc=$((rc | PIPESTATUS[0]))
           timeout 90 humming bench --shapes 4096x4096,4096x8192,4096x2048,3072x4096 --m 65,96,128,200,256 --weight int4 \
             --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit --out "$OUT/s39i-int4" 2>&1 \
             | tee "$OUT/s39i-int4.log" | grep -E "^(== |65 |96 |128 |200 |256 )|rror" ;;
    s39h)  # (on a variant: wgmma_tile's 128-token tiles at 65-256 tokens on 2049-4096 rows over any K, their K split
           # by tuning's rule) this tree against e49b529 (old3/) through the bench, alternated twice
           for w in int4:128 e4m3:0; do
             abbench "s39h-${w%%:*}" 2 "new old" 90 "^(== |65 |96 |128 |200 |256 )|stream " --shapes \
               4096x4096,4096x8192,3072x4096,4096x2048 --m 65,96,128,200,256 --weight "${w%%:*}" --group-size "${w##*:}"
           done ;;
    s39g)  # (measured on a variant, reverted: WG_64 whole at 65-128 tokens over a K of at most 3072 on 4097-8192 rows)
           # the 16-bit operands' GPU tests of those ranges; this tree against f1efacf (old3/) through the bench,
           # alternated twice, int4 g128 and e4m3 per channel
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "wide_token_ranges" \
             2>&1 | tee "$OUT/s39g_tests.log" | tail -2
           rc=$((rc | PIPESTATUS[0]))
           for w in int4:128 e4m3:0; do
             abbench "s39g-${w%%:*}" 2 "new old" 90 "^(== |65 |96 |128 )|stream " --shapes \
               5120x3072,6144x2048,8192x2048,5120x4096 --m 65,96,128 --weight "${w%%:*}" --group-size "${w##*:}"
           done ;;
    s39f)  # the final tree: the formats whose 65-1024-token plans changed this session, with cuBLAS fp16; then the
           # 65-128-token tiles over a short K on 4097-8192 rows (WG_128 in K slices, unmeasured before), kernel alone
           for w in e4m3:0:fp16 int8:0:fp16 int3:128:fp16 e2m1:32:fp16 uint4:128:fp16 int4:128:int8 e4m3:0:e4m3; do
             IFS=: read -r wf wg wa <<<"$w"
             extra=(); [ "$wf" = e2m1 ] && extra=(--scale-fmt e8m0); [ "$wf" = uint4 ] && extra=(--zero-point int)
             timeout 90 humming bench --shapes 4096x4096,4096x14336,8192x8192,14336x4096 --m 96,256,512,1024 \
               --weight "$wf" --group-size "$wg" --act "$wa" "${extra[@]}" --methods humming,cublas-fp16 --repeats 3 \
               --no-plot --no-jit --out "$OUT/s39f-$wf-$wa" 2>&1 | tee "$OUT/s39f-$wf-$wa.log" \
               | grep -E "^(== |96 |256 |512 |1024 )|rror"
           done
           timeout 100 python3 scripts/gpu_sweep.py --weight int4 --group 128 --m 96 --groups wgmid --ctas 0,2 --rounds 3 \
             --shapes 5120x3072,6144x2048,5120x4096 --json "$OUT/s39f_short.json" 2>&1 | tee "$OUT/s39f_short.log" \
             | cut -c1-150 ;;
    s39e)  # byte_wgmma_tile's 65-512-token tiles on 2049-4096 rows: their GPU tests; this tree against 90d2f50 (old3/)
           # through the bench, alternated twice: W4A8 int4 g128 / per channel, e4m3 x e4m3 and W8A8 int8 per channel
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "byte_operands_at_65 or test_byte_wgmma_tiles" 2>&1 | tee "$OUT/s39e_tests.log" | tail -2
           rc=$((rc | PIPESTATUS[0]))
           for w in int4:128:int8 int4:0:int8 e4m3:0:e4m3 int8:0:int8; do
             IFS=: read -r wf wg wa <<<"$w"
             abbench "s39e-$wf-$wg-$wa" 2 "new old" 90 "^(== |96 |200 |300 |512 )|stream " --shapes \
               4096x14336,4096x4096,8192x8192 --m 96,200,300,512 --weight "$wf" --group-size "$wg" --act "$wa"
           done ;;
    s39d)  # byte operands (W4A8 int4 g128 / per channel, e4m3 x e4m3 per channel) at 96-1024 tokens with cuBLAS fp16;
           # then the 65-512-token warpgroup tiles of wgmma_tile for them, kernel alone, whole and split (gpu_sweep.py)
           for w in int4:128:int8 int4:0:int8 e4m3:0:e4m3; do
             IFS=: read -r wf wg wa <<<"$w"
             timeout 90 humming bench --shapes 4096x4096,4096x14336,8192x8192,28672x8192 --m 96,256,512,1024 --weight "$wf" \
               --group-size "$wg" --act "$wa" --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
               --out "$OUT/s39d-$wf-$wg-$wa" 2>&1 | tee "$OUT/s39d-$wf-$wg-$wa.log" | grep -E "^(== |96 |256 |512 |1024 )|rror"
           done
           for w in int4:128:int8 int4:0:int8 e4m3:0:e4m3; do
             IFS=: read -r wf wg wa <<<"$w"
             for m in 96 256 512; do
               g=wgbig; [ $m = 96 ] && g=wgmid
               timeout 100 python3 scripts/gpu_sweep.py --weight "$wf" --group "$wg" --act "$wa" --m $m --groups $g \
                 --ctas 0,2 --rounds 3 --shapes 4096x14336,8192x8192 --json "$OUT/s39d_${wf}_${wg}_$m.json" 2>&1 \
                 | tee -a "$OUT/s39d.log" | cut -c1-150
             done
           done ;;
    s39c)  # the 65-512-token tiles for zero-point codes too (128 tokens where the others take 256): their GPU tests;
           # this tree against 59670e8 (old3/) through the bench, alternated twice, uint4 g128 with integer zero points
           # (AWQ) and uint4 g64 with float ones
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "wide_token_ranges" \
             2>&1 | tee "$OUT/s39c_tests.log" | tail -2
           rc=$((rc | PIPESTATUS[0]))
           for w in int:128 float:64; do
             abbench "s39c-${w%%:*}" 2 "new old" 90 "^(== |96 |200 |300 |512 )|stream " --shapes \
               4096x14336,8192x8192,14336x4096,4096x4096 --m 96,200,300,512 --weight uint4 --group-size "${w##*:}" \
               --zero-point "${w%%:*}"
           done ;;
    s39a)  # wgmma_tile's lean tiles for every code without zero points, fit_tile's stages for fewer tokens: the GPU
           # tests of those tiles; then this tree against a862bd5 (old3/) through the bench, alternated twice, the 8-bit
           # codes (per channel) at 96-1024 tokens
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "wide_token_ranges or \
             test_wgmma_tiles or large_shapes" 2>&1 | tee "$OUT/s39a_tests.log" | tail -2
           rc=$((rc | PIPESTATUS[0]))
           for w in e4m3 int8; do
             abbench "s39a-$w" 2 "new old" 100 "^(== |96 |200 |300 |512 |1024 )|stream " --shapes \
               4096x14336,8192x8192,14336x4096,4096x4096,28672x8192 --m 96,200,300,512,1024 --weight $w --group-size 0
           done ;;
    s39b)  # as s39a's bench, int3 g128, MXFP4 (e2m1 g32, e8m0 scales) and int2 g128 at 96-512 tokens
           for w in int3:128 e2m1:32 int2:128; do
             extra=(); [ "${w%%:*}" = e2m1 ] && extra=(--scale-fmt e8m0)
             abbench "s39b-${w%%:*}" 2 "new old" 90 "^(== |96 |200 |300 |512 )|stream " --shapes \
               4096x14336,8192x8192,14336x4096,4096x4096 --m 96,200,300,512 --weight "${w%%:*}" --group-size "${w##*:}" \
               "${extra[@]}"
           done ;;
    s38n)  # (prepared in the thirty-eighth session, not run there: its device time was spent) whether other codes than
           # 4-bit integers gain from wgmma_tile's narrow tiles: e4m3 / int8 per channel, int3 g128, MXFP4 at 96, 256
           # and 512 tokens on 4096x14336 and 8192x8192, WG_64(_NARROW) / WG_128 / WG_256 whole and split, kernel alone
           for w in e4m3:0 int8:0 int3:128 e2m1:32; do
             extra=(); [ "${w%%:*}" = e2m1 ] && extra=(--scale-fmt e8m0)
             for m in 96 256 512; do
               g=wgbig; [ $m = 96 ] && g=wgmid
               timeout 100 python3 scripts/gpu_sweep.py --weight "${w%%:*}" --group "${w##*:}" "${extra[@]}" --m $m \
                 --groups $g --ctas 0,2 --rounds 3 --shapes 4096x14336,8192x8192 --json "$OUT/s38n_${w%%:*}_$m.json" 2>&1 \
                 | tee -a "$OUT/s38n.log" | cut -c1-150
             done
           done ;;
    s38a)  # which read kernel the issue's "stream time" is: gpu_yardsticks.py (plain and tuned stream-read kernels, torch's
           # sum, each by the bench's method and by the reference's do_bench graph method, against h200-figures.md)
           timeout 200 python3 scripts/gpu_yardsticks.py --out "$OUT/s38a_yard.json" 2>&1 | tee "$OUT/s38a_yard.log"
           rc=$((rc | PIPESTATUS[0])) ;;
    s38k)  # other weight formats (uint4: AWQ's integer zero points) at 128-1024 tokens with cuBLAS fp16 (the 0.6x floor above 256 tokens), the final tree
           for w in int3:128 e4m3:0 int8:0 e2m1:32 uint4:128; do
             extra=(); [ "${w%%:*}" = e2m1 ] && extra=(--scale-fmt e8m0); [ "${w%%:*}" = uint4 ] && extra=(--zero-point int)
             timeout 90 humming bench --shapes 4096x14336,8192x8192 --m 128,256,1024 --weight "${w%%:*}" \
               --group-size "${w##*:}" "${extra[@]}" --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
               --out "$OUT/s38k-${w%%:*}" 2>&1 | tee "$OUT/s38k-${w%%:*}.log" | grep -E "^(== |128 |256 |1024 )|rror"
           done ;;
    s38j)  # the final tree: the issue-6 int4 rows with cuBLAS (the table of record), then 96-1024 tokens with cuBLAS
           int4rows s38j
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 96,256,512,1024 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/s38j-large" 2>&1 | tee "$OUT/s38j-large.log" | grep -E "^(== |96 |256 |512 |1024 )|stream " ;;
    s38i)  # wgmma_tile's narrow 65-128-token tiles: the planner test, warpgroup tiles, the programmatic chain; this tree
           # against 5ce7892 (old3/) through the bench, alternated twice
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "wide_token_ranges or \
             test_wgmma_tiles or programmatic" 2>&1 | tee "$OUT/s38i_tests.log" | tail -2
           rc=$((rc | PIPESTATUS[0]))
           abbench s38i 2 "new old" 120 "^(== |65 |96 |128 )|stream " \
             --shapes 4096x14336,4096x4096,8192x8192,14336x4096,6144x4096,28672x8192 --m 65,96,128 --weight int4 \
             --group-size 128 ;;
    s38h)  # 65-128 tokens: WG_64_NARROW / WG_64 / WG_128, unsplit and split within one wave (--ctas 0,2), kernel alone
           for m in 96 128; do
             timeout 120 python3 scripts/gpu_sweep.py --m $m --groups wgmid --ctas 0,2 --rounds 3 \
               --shapes 4096x14336,4096x4096,8192x8192,14336x4096 --json "$OUT/s38h_$m.json" 2>&1 | tee -a "$OUT/s38h.log" \
               | cut -c1-150
           done ;;
    s38g)  # wgmma_tile's narrow 129-512-token tiles (4-bit integer codes): their GPU tests, the warpgroup tiles' and the
           # programmatic chain's; this tree against 0f1b7d9 (old3/) through the bench, alternated twice; then the int4
           # rows at 128-1024 tokens with cuBLAS (the 0.6x cuBLAS target)
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "wide_token_ranges or \
             test_wgmma_tiles or programmatic or large_shapes" 2>&1 | tee "$OUT/s38g_tests.log" | tail -2
           rc=$((rc | PIPESTATUS[0]))
           abbench s38g 2 "new old" 120 "^(== |129 |200 |256 |300 |384 |512 )|stream " \
             --shapes 4096x14336,4096x4096,8192x8192,6144x4096 --m 129,200,256,300,384,512 --weight int4 --group-size 128
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 128,256,512,1024 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/s38g-large" 2>&1 | tee "$OUT/s38g-large.log" | grep -E "^(== |128 |256 |512 |1024 )|stream " ;;
    s38f)  # Launcher.crowded for grids of at most one CTA per SM where two fit: the programmatic-launch GPU tests, then
           # this tree against 550f753 (old3/) through the bench, alternated twice, int4 g128 at 1-512 tokens
           timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "programmatic" 2>&1 \
             | tee "$OUT/s38f_tests.log" | tail -2
           rc=$((rc | PIPESTATUS[0]))
           abbench s38f 2 "new old" 150 "^(== |1 |16 |64 |96 |128 |256 |512 )|stream " \
             --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,16,64,96,128,256,512 --weight int4 \
             --group-size 128 ;;
    s38e)  # 129-1024 tokens: WG_64 / WG_128 / WG_256 unsplit and split within one wave (--ctas 0,2), kernel alone
           for m in 256 512; do
             timeout 140 python3 scripts/gpu_sweep.py --m $m --groups wgbig --ctas 0,2 --rounds 3 \
               --shapes 4096x14336,4096x4096,8192x8192,14336x4096 --json "$OUT/s38e_$m.json" 2>&1 | tee -a "$OUT/s38e.log" \
               | grep -v "^      "
           done ;;
    s38d)  # by both methods: int2 / int3 g128 and int8 / e4m3 per channel at M=1 on 8192x8192 (the other issue-6 widths),
           # then int4 g128 and cuBLAS fp16 at M = 256, 1024 on the five layers (the 0.6x cuBLAS target)
           timeout 150 python3 scripts/gpu_yardsticks.py --no-stream --gemm --rounds 2 --gemm-weights \
             int2:128,int3:128,int8:0,e4m3:0 --gemm-shapes 8192x8192 --gemm-m 1 --out "$OUT/s38d_widths.json" 2>&1 \
             | tee "$OUT/s38d_widths.log"
           rc=$((rc | PIPESTATUS[0]))
           timeout 300 python3 scripts/gpu_yardsticks.py --no-stream --gemm --rounds 1 --gemm-m 256,1024 \
             --out "$OUT/s38d_large.json" 2>&1 | tee "$OUT/s38d_large.log"
           rc=$((rc | PIPESTATUS[0])) ;;
    s38c)  # the int4 g128 GEMM and cuBLAS fp16 at M = 1, 16, 64 by the bench's method and by the reference's (do_bench)
           timeout 300 python3 scripts/gpu_yardsticks.py --no-stream --gemm --rounds 1 --out "$OUT/s38c_yard.json" 2>&1 \
             | tee "$OUT/s38c_yard.log"
           rc=$((rc | PIPESTATUS[0])) ;;
    s38b)  # the library to beat in the same run: the issue-6 int4 rows at M = 1, 16, 64 with cuBLAS and humming-kernels
           # (its wheel unpacked in .whl/humming-kernels, carried), then int2 / int3 g128 and int8 / e4m3 per channel at M=1
           timeout 330 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1,16,64 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --external humming-kernels=.whl/humming-kernels \
             --repeats 3 --no-plot --no-jit --out "$OUT/s38b-int4" 2>&1 | tee "$OUT/s38b-int4.log" \
             | grep -E "^(== |1 |16 |64 )|stream |rror"
           rc=$((rc | PIPESTATUS[0]))
           for w in int2:128 int3:128 int8:0 e4m3:0; do
             timeout 100 humming bench --shapes 8192x8192 --m 1 --weight "${w%%:*}" --group-size "${w##*:}" \
               --methods humming --external humming-kernels=.whl/humming-kernels --repeats 3 --no-plot --no-jit \
               --out "$OUT/s38b-${w%%:*}" 2>&1 | tee "$OUT/s38b-${w%%:*}.log" | grep -E "^(== |1 )|stream |rror"
           done ;;
    s37l)  # (run on 5bf9813) two MMA chains in the one-token loop of rings that fold every 128 columns too (groups
           # of 128): the planner's one-token ring tests, then int2 / int3 / int4 g128 at M=1 against 52416e5 (old3/:
           # the default builds of 5823282)
           timeout 110 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "one_token or \
             three_bit_rings or batched_decode" 2>&1 | tee "$OUT/s37l_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           for w in int2 int3 int4; do
             abbench s37l-$w 2 "new old" 60 "^(== |1 )|stream " --shapes 8192x8192,4096x14336,14336x4096 --m 1 \
               --weight $w --group-size 128
           done ;;
    s37k)  # one token of 2-bit codes against 4-bit: the CTA timelines, next to the stream-read kernel's
           for w in int2:128 int2:0 int4:128; do
             timeout 100 python3 scripts/gpu_trace.py --shapes 8192x8192,4096x14336 --m 1 --weight ${w%%:*} \
               --group ${w##*:} 2>&1 | tee -a "$OUT/s37k_trace.log" | cut -c1-330
           done ;;
    s37j)  # split launches summing in clusters above 2.5 CTAs per SM (HUMMING_CLUSTER_MAX_PER_SM=4), where every
           # cluster is resident: the timelines, then 4-64 tokens through the bench, humming alone, alternated
           HUMMING_CLUSTER_MAX_PER_SM=4 timeout 100 python3 scripts/gpu_trace.py --no-stream --shapes 8192x8192 \
             --m 64,16 2>&1 | tee "$OUT/s37j_trace.log" | grep -v "^    Tile" | cut -c1-330
           envbench s37j 2 "base=HUMMING_NONE=1 c4=HUMMING_CLUSTER_MAX_PER_SM=4" 100 "^(== |4 |16 |32 |64 )|stream " \
             --shapes 4096x4096,8192x8192 --m 4,16,32,64 --weight int4 --group-size 128 ;;
    s37i)  # (run on f542223) s37h's ticket with a plain spin (no nanosleep) and the counters reset after the sum:
           # the timelines, the bench against 52416e5 (old3/)
           timeout 100 python3 scripts/gpu_trace.py --no-stream --shapes 8192x8192 --m 64,16 2>&1 \
             | tee "$OUT/s37i_trace.log" | grep -v "^    Tile" | cut -c1-330
           abbench s37i 2 "new old" 100 "^(== |16 |64 )|stream " \
             --shapes 8192x8192,4096x14336,14336x4096,28672x8192 --m 16,64 --weight int4 --group-size 128 ;;
    s37h)  # (run on a variant of f542223: a nanosleep wait, the reset before the fence) split K with a ticket first
           # (the last slice does not publish its own part): the GPU tests of the split paths (warpgroup, TMA,
           # prefill, register rings' windows, batched decode), the timelines, the bench against 52416e5 (old3/)
           timeout 340 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "split_k or wgmma_tiles \
             or wgmma_tma_tiles or large_shapes or activation_window or batched_decode or wgmma_stream_k \
             or mma_sync_prefill" 2>&1 | tee "$OUT/s37h_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           timeout 100 python3 scripts/gpu_trace.py --no-stream --shapes 8192x8192,14336x4096 --m 64,16,1 2>&1 \
             | tee "$OUT/s37h_trace.log" | grep -v "^    Tile" | cut -c1-330
           abbench s37h 2 "new old" 100 "^(== |1 |16 |64 )|stream " \
             --shapes 8192x8192,4096x14336,14336x4096,28672x8192 --m 1,16,64 --weight int4 --group-size 128 ;;
    s37g)  # the issue-6 int4 rows with cuBLAS (the table of record's command)
           int4rows s37g ;;
    s37f)  # where the split-K sum's time goes (52416e5's sum, stamps 8-10: the fence, thread 0's loads and sums, the
           # barrier, the epilogue) at 16 and 64 tokens
           timeout 150 python3 scripts/gpu_trace.py --no-stream --shapes 8192x8192,4096x14336,14336x4096 --m 64,16 2>&1 \
             | tee "$OUT/s37f_trace.log" | grep -v "^    Tile" | cut -c1-330 ;;
    s37e)  # (run on 880adc2) the split-K sum gathering the other slices' tiles into the drained stages with cp.async
           # (one L2 round trip): the GPU tests of the split paths, the timelines' sum, the bench against HEAD before it (old3/)
           timeout 380 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "wgmma_tiles or \
             wgmma_stream_k or wgmma_tma or mma_sync_prefill or split_k or byte_wgmma or folded or large_shapes \
             or five_stages or two_row_blocks or four_block_stages" 2>&1 | tee "$OUT/s37e_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           timeout 100 python3 scripts/gpu_trace.py --no-stream --shapes 8192x8192 --m 64,16 2>&1 \
             | tee "$OUT/s37e_trace.log" | grep -v "^    Tile" | cut -c1-230
           abbench s37e 2 "new old" 100 "^(== |1 |16 |64 |256 )|stream " \
             --shapes 8192x8192,4096x14336,14336x4096,28672x8192 --m 1,16,64,256 --weight int4 --group-size 128 ;;
    s37d)  # (run on 84fddbb) the split-K sum with the slices' loads in flight together, against HEAD before it (old3/): the
           # timelines' sum at 16 and 64 tokens in both trees, then the bench alternated three times
           cp -r old3/backends/nvidia old3/humming_nvidia 2>/dev/null
           for v in new old; do
             pp=; [ "$v" = old ] && pp=$PWD/old3
             echo "== trace $v"
             PYTHONPATH=$pp timeout 100 python3 scripts/gpu_trace.py --no-stream --shapes 8192x8192,28672x8192 \
               --m 64,16 2>&1 | tee "$OUT/s37d_trace_$v.log" | grep -v "^    Tile" | cut -c1-230
           done
           abbench s37d 3 "new old" 100 "^(== |16 |64 )|stream " --shapes 8192x8192,4096x14336,14336x4096,28672x8192 \
             --m 16,64 --weight int4 --group-size 128 ;;
    s37c)  # (run on 84fddbb's sum) the split-K sum with slices' loads in flight together: the GPU tests of the split paths, the
           # timelines (sum) at 16 and 64 tokens, this tree against HEAD before it (old3/) through the bench
           timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "wgmma_tiles or \
             wgmma_stream_k or wgmma_tma_tiles or mma_sync_prefill or split_k or activation_window or byte_wgmma \
             or folded or large_shapes" 2>&1 | tee "$OUT/s37c_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           timeout 100 python3 scripts/gpu_trace.py --no-stream --shapes 8192x8192 --m 64,16 2>&1 | grep -v "^    Tile" | cut -c1-230
           abbench s37c 2 "new old" 100 "^(== |16 |64 )|stream " --shapes 8192x8192,4096x14336,14336x4096,28672x8192 \
             --m 16,64 --weight int4 --group-size 128 ;;
    s36e)  # after the correction constants went constexpr (kernels not using 1-2-bit raw codes or two chains: the same
           # SASS as ebff10a): the 1-2-bit and per-channel one-token ring tests; int2 g128 / per channel at M=1
           timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "one_token_rings_of_2_bit \
             or (ring_steady_state_turns and (int2 or uint2 or uint1 or channel))" 2>&1 | tee "$OUT/s36e_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           widths s36e 8192x8192,4096x14336 "int2:128 int2:0 int4:0" ;;
    s36d)  # the final tree: the format tests of per-channel / per-tensor scales and 1-2-bit codes, the planner's one-token
           # and batched-decode rings, the steady-state rings
           timeout 420 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "(weight_formats and (channel \
             or tensor or int1 or int2 or uint1 or uint2)) or one_token_rings or steady_state or batched_decode" 2>&1 \
             | tee "$OUT/s36d_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0])) ;;
    s36c)  # two MMA chains in the rings' one-token loop only (ONE_KC) where folds come every 256 columns: the rings' GPU
           # tests of those formats, then this tree against old3/ (one chain) through the bench, M = 1 and 4, one round
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "(ring_steady_state_turns \
             or stream_tiles_rings or one_token_rings_of_2_bit) and (channel or 256 or 512)" 2>&1 \
             | tee "$OUT/s36c_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           for w in int2:0 int4:0 int3:0 int4:256; do
             abbench s36c-${w%%:*}-${w##*:} 1 "new old" 90 "^(== |1 |4 )|stream " \
               --shapes 4096x4096,8192x8192,4096x14336,14336x4096 --m 1,4 --weight ${w%%:*} --group-size ${w##*:}
           done ;;
    s36b)  # two MMA chains on the rings whose folds come every 256 columns (per channel, groups of 256 or more; when it
           # ran, in both copies of the loop: the tree now keeps them in the one-token copy only, s36c): this tree
           # against old3/ (one chain) through the bench, M = 1 and 4, two rounds; then their GPU ring tests
           for w in int2:0:2 int4:0:2 int3:0:1 int4:256:1; do
             abbench s36b-${w%%:*}-$(echo $w | cut -d: -f2) ${w##*:} "new old" 90 "^(== |1 |4 )|stream " \
               --shapes 4096x4096,8192x8192,4096x14336,14336x4096 --m 1,4 --weight ${w%%:*} --group-size $(echo $w | cut -d: -f2)
           done
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "(ring_steady_state_turns \
             or stream_tiles_rings or one_token_rings_of_2_bit) and (channel or 256 or 512)" 2>&1 \
             | tee "$OUT/s36b_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0])) ;;
    s36a)  # 1- and 2-bit raw codes at one magic number per register (one shift per word for 2-bit fp16): the GPU tests
           # of 1-2-bit codes (the planner's one-token rings, the steady-state and stream-tile rings, the formats), the
           # bound probe, then this tree against old3/ through the bench, int2 at M=1, two rounds
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "one_token_rings_of_2_bit \
             or ((ring_steady_state_turns or stream_tiles_rings or weight_formats) and (int2 or uint2 or uint1 or int1))" \
             2>&1 | tee "$OUT/s36a_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           timeout 60 python3 scripts/gpu_bound_probe.py --trials 4 2>&1 | tee "$OUT/s36a_probe_int2.log" | cut -c1-60
           for g in 128 0; do
             abbench s36a-i2-$g 2 "new old" 90 "^(== |1 )|stream " --shapes 4096x4096,8192x4096,4096x14336,8192x8192,14336x4096 \
               --m 1 --weight int2 --group-size $g
           done ;;
    s35f)  # the final tree (the raw-code term's MAGIC from the compute dtype): the planner's one-token ring tests and the
           # format tests of groups of 16
           timeout 250 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "one_token_rings_of_2_bit \
             or (weight_formats and g16)" 2>&1 | tee "$OUT/s35f_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0])) ;;
    s35e)  # s35d's stream-tile ring tests again after the fix of their M-range test (open-ended ranges), with the
           # planner's one-token rings; the int2 bound probe at the final raw-code term
           timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "one_token_rings_of_2_bit \
             or stream_tiles_rings" 2>&1 | tee "$OUT/s35e_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           timeout 60 python3 scripts/gpu_bound_probe.py --trials 6 2>&1 | tee "$OUT/s35e_probe_int2.log" | cut -c1-60 ;;
    s35d)  # after the tests' raw-code term and two CTAs per SM for 3-bit register-streaming tiles (not on Hopper): the
           # planner's one-token rings, the stream-tile rings and the format tests of groups of 16 / 32, e2m1 and 2-3
           # bit codes; the bound probe (int2 per channel, int4 g128); MXFP4 / NVFP4 at M=1 through the bench
           timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "one_token_rings_of_2_bit \
             or stream_tiles_rings or (weight_formats and (g16 or g32 or e2m1 or int2 or uint2))" 2>&1 \
             | tee "$OUT/s35d_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           timeout 60 python3 scripts/gpu_bound_probe.py --trials 6 2>&1 | tee "$OUT/s35d_probe_int2.log" | cut -c1-60
           timeout 60 python3 scripts/gpu_bound_probe.py --weight int4 --group 128 --n 4136 --k 4096 --trials 3 2>&1 \
             | tee "$OUT/s35d_probe_int4.log" | cut -c1-60
           for w in 32:e8m0 16:e4m3; do
             timeout 120 humming bench --shapes 4096x4096,4096x14336,8192x8192,14336x4096,28672x8192 --m 1 --weight e2m1 \
               --group-size ${w%%:*} --scale-fmt ${w##*:} --methods humming --repeats 3 --no-plot --no-jit \
               --out "$OUT/s35d-${w##*:}" 2>&1 | tee "$OUT/s35d-${w##*:}.log" | grep -E "^(== |1 )|stream "
           done ;;
    s35c)  # the int2 per-channel one-token failure of s35b (1.08 x the bound, fp16, 8232x4096, DECODE_INT2_LONG_K):
           # fresh random data, this tree and old3/ (the session's start); then the short-K ring's eight slots kept for
           # 16 rows of fp16 g128, this tree against old3/ through the bench, two rounds
           for v in new old; do
             pp=; [ $v = old ] && pp=$PWD/old3
             echo "== $v"; PYTHONPATH=$pp timeout 60 python3 scripts/gpu_bound_probe.py --trials 6 2>&1 | tail -18
           done
           for g in 128 64; do
             abbench s35c-i4-$g 2 "new old" 60 "^(== |1 )|stream " --shapes 4096x4096,4096x2048,8192x4096 --m 1 \
               --weight int4 --group-size $g
           done ;;
    s35b)  # after the short-K ring of four slots (groups of 16 / 32 on twice the rows) and fp4_one_tile's rings of 112 and
           # 128 rows: the planner's one-token ring GPU tests and the format tests of groups of 16 / 32 and e2m1; this
           # tree against old3/ through the bench; 3-bit codes on the register-streaming tiles at three and two CTAs
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "one_token_rings_of_2_bit \
             or (weight_formats and (g16 or g32 or e2m1))" 2>&1 | tee "$OUT/s35b_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           for g in 16 32 64 128; do
             abbench s35b-i4-$g 1 "new old" 60 "^(== |1 )|stream " --shapes 4096x4096,8192x4096 --m 1 --weight int4 \
               --group-size $g
           done
           for w in 32:e8m0 16:e4m3; do
             abbench s35b-${w##*:} 1 "new old" 90 "^(== |1 )|stream " --shapes 14336x4096,28672x8192 --m 1 --weight e2m1 \
               --group-size ${w%%:*} --scale-fmt ${w##*:}
           done
           timeout 100 python3 scripts/gpu_sweep.py --shapes 4096x4096,8192x4096,14336x4096 --m 1,8 --groups i3occ \
             --weight int3 --group 128 --rounds 3 --json "$OUT/s35b_i3occ.json" > "$OUT/s35b_i3occ.log" 2>&1
           rc=$((rc | $?)); grep -E "M=|us  x" "$OUT/s35b_i3occ.log" ;;
    s35a)  # one token of int4 in groups of 16-128 over a short K, kernel alone: the planner's rings of eight slots (they
           # spill in their loops) against four slots; MXFP4 / NVFP4 on the wide layers against rings of 112-224 rows
           for g in 16 64 128 32; do
             timeout 110 python3 scripts/gpu_sweep.py --shapes 4096x4096,8192x4096,4096x2048 --m 1 --groups i4ch \
               --weight int4 --group $g --rounds 3 --json "$OUT/s35a_i4_$g.json" > "$OUT/s35a_i4_$g.log" 2>&1
             rc=$((rc | $?)); grep -E "M=1|us  x" "$OUT/s35a_i4_$g.log"
           done
           for w in 32:e8m0 16:e4m3; do
             timeout 120 python3 scripts/gpu_sweep.py --shapes 14336x4096,28672x8192 --m 1 --groups fp4w --weight e2m1 \
               --group ${w%%:*} --scale-fmt ${w##*:} --rounds 3 --json "$OUT/s35a_fp4_${w%%:*}.json" \
               > "$OUT/s35a_fp4_${w%%:*}.log" 2>&1; rc=$((rc | $?)); grep -E "M=1|us  x" "$OUT/s35a_fp4_${w%%:*}.log"
           done ;;
    s34a)  # scale entries of groups of 16 and 32 from one pointer per ring turn (FAST_SC4): the ring GPU tests of
           # those groups and of the one-entry path it shares (groups of 64-128, padded K), the format tests of
           # e2m1 and groups of 16 / 32, the planner's one-token rings; this tree against old3/ through the bench
           timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "((rings or steady_state) \
             and (g16 or g32 or g64 or g128)) or one_token_rings_of_2_bit or (weight_formats and (e2m1 or g16 or g32))" \
             2>&1 | tee "$OUT/s34a_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           for w in 32:e8m0 16:e4m3; do
             abbench s34a-${w##*:} 1 "new old" 60 "^(== |1 )|stream " --shapes 4096x4096,4096x14336,8192x8192,14336x4096 \
               --m 1 --weight e2m1 --group-size ${w%%:*} --scale-fmt ${w##*:}
           done ;;
    s33h)  # after fp4_one_tile: the GPU tests of the one-token rings the planner took this session and the format tests
           # of e2m1, 2-bit codes and per channel; this tree against old3/ (971d275) through the bench, MXFP4 and NVFP4
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "one_token_rings_of_2_bit or \
             (weight_formats and (e2m1 or int2 or uint2 or per-channel))" 2>&1 | tee "$OUT/s33h_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           for w in 32:e8m0 16:e4m3; do
             abbench s33h-${w##*:} 1 "new old" 60 "^(== |1 )|stream " --shapes 4096x4096,4096x14336,8192x8192,14336x4096 \
               --m 1 --weight e2m1 --group-size ${w%%:*} --scale-fmt ${w##*:}
           done ;;
    s33g)  # one token of e2m1 codes (MXFP4, NVFP4), kernel alone: the planner's register-streaming tiles against
           # 16-warp tiles (gpu_sweep.py fp4) on the four ring shapes
           for w in 32:e8m0 16:e4m3; do
             timeout 200 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336,14336x4096,4096x4096 --m 1 \
               --groups fp4 --weight e2m1 --group ${w%%:*} --scale-fmt ${w##*:} --rounds 5 \
               --json "$OUT/s33g_${w##*:}.json" > "$OUT/s33g_${w##*:}.log" 2>&1; rc=$((rc | $?))
             grep -E "M=1|us  x" "$OUT/s33g_${w##*:}.log"
             timeout 60 humming bench --shapes 8192x8192,4096x14336 --m 1,2 --weight e2m1 --group-size ${w%%:*} \
               --scale-fmt ${w##*:} --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/s33g-bench-${w##*:}" 2>&1 \
               | tee "$OUT/s33g-bench-${w##*:}.log" | grep -E "^(== |1 |2 )|stream "
           done ;;
    s33e)  # after ring2_short_tile and the per-channel short-K ring of four slots: their GPU tests (the new planner
           # test, the format tests of 2-bit codes and int4 per channel), then this tree against old3/ through the
           # bench (int2 g128 and int4 per channel at M=1 over a short K), then the issue-6 int4 rows with cuBLAS
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "one_token_rings_of_2_bit or \
             (weight_formats and (int2 or uint2 or per-channel))" 2>&1 | tee "$OUT/s33e_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           abbench s33e-int2 1 "new old" 60 "^(== |1 )|stream " --shapes 4096x4096,8192x4096,14336x4096 --m 1 \
             --weight int2 --group-size 128
           abbench s33e-int4ch 1 "new old" 60 "^(== |1 )|stream " --shapes 4096x4096,8192x4096 --m 1 --weight int4 \
             --group-size 0
           int4rows s33e ;;
    s33d)  # one token over a short K, kernel alone: 2-bit codes (g128 and per channel) on the register-streaming tiles
           # against the register rings; int4 per channel on rings of eight slots (spilling) against four
           for w in int2:128 int2:0; do
             timeout 150 python3 scripts/gpu_sweep.py --shapes 4096x4096,14336x4096,8192x4096 --m 1 --groups i2short \
               --weight ${w%%:*} --group ${w##*:} --rounds 5 --json "$OUT/s33d_${w%%:*}_${w##*:}.json" \
               > "$OUT/s33d_${w%%:*}_${w##*:}.log" 2>&1; rc=$((rc | $?)); grep -E "M=1|us  x" "$OUT/s33d_${w%%:*}_${w##*:}.log"
           done
           timeout 120 python3 scripts/gpu_sweep.py --shapes 4096x4096,8192x4096,4096x2048 --m 1 --groups i4ch --weight int4 \
             --group 0 --rounds 5 --json "$OUT/s33d_i4ch.json" > "$OUT/s33d_i4ch.log" 2>&1; rc=$((rc | $?))
           grep -E "M=1|us  x" "$OUT/s33d_i4ch.log" ;;
    s33b)  # the ring test s33a's 60 s cut (it compiles its kernels first); one token on long-K rings of 4, 6, 8
           # blocks per turn, kernel alone, int2 / int3 / int4 g128 on 8192x8192 and 4096x14336
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "ring_steady_state_turns and uint1" 2>&1 | tee "$OUT/s33b_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           for w in int2 int3 int4; do
             timeout 100 python3 scripts/gpu_sweep.py --shapes 8192x8192,4096x14336 --m 1 --groups turn8 --weight $w \
               --rounds 5 --json "$OUT/s33b_$w.json" > "$OUT/s33b_$w.log" 2>&1; rc=$((rc | $?))
             grep -v "^      " "$OUT/s33b_$w.log" | tail -16
           done ;;
    s33a)  # the thirty-third session's first call: the ring test the last session's budget cut; the M=1 table
           # (m1tab); CTA timelines of int2 / int3 / int4 g128 at M=1 on 8192x8192; ncu of the int2 and int3 rings
           timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "ring_steady_state_turns and uint1" 2>&1 | tee "$OUT/s33a_tests.log" | tail -3
           rc=$((rc | PIPESTATUS[0]))
           bash "$0" m1tab; rc=$((rc | $?))
           for w in int2 int3 int4; do
             timeout 60 python3 scripts/gpu_trace.py --shapes 8192x8192 --m 1 --weight $w --group 128 \
               --json "$OUT/s33a_trace_$w.json" 2>&1 | tee "$OUT/s33a_trace_$w.log" | grep -v "^    "
           done
           for w in int2 int3; do
             echo "== ncu $w"; WEIGHT=$w:128 SHAPE=8192x8192 timeout 100 bash scripts/gpu_ncu.sh "" 1 2>&1 \
               | tee "$OUT/s33a_ncu_$w.log"
           done ;;
    m1tab) # the thirty-second session's table: the int4 M=1 rows with cuBLAS; the issue-6 widths at M=1 on 8192x8192;
           # int3 g128 at M=1 on 28672x8192
           timeout 100 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/m1tab-int4" 2>&1 | tee "$OUT/m1tab-int4.log" | grep -E "^(== |1 )|stream "
           widths m1tab 8192x8192 "int3:128 int2:128 int8:0 e4m3:0"
           widths m1tab28 28672x8192 "int3:128" ;;
    m1ab)  # the final one-token loop (no carried source; the token's column folded on rings of two warps per K run
           # or more): this tree against old3/ (da685b2) through the bench, int4 g128 at M = 1, 2 and int3 / int2
           # g128 at M = 1 on the ring shapes; then the ring GPU tests
           abbench m1ab-int4 1 "new old" 70 "^(== |1 |2 )|stream " \
             --shapes 4096x4096,14336x4096,4096x14336,8192x8192 --m 1,2 --weight int4 --group-size 128
           abbench m1ab-int3 1 "new old" 60 "^(== |1 )|stream " \
             --shapes 4096x4096,14336x4096,4096x14336,8192x8192 --m 1 --weight int3 --group-size 128
           abbench m1ab-int2 1 "new" 60 "^(== |1 )|stream " --shapes 4096x14336,8192x8192 --m 1 --weight int2 \
             --group-size 128
           timeout 250 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "stream_tiles_rings or \
             steady_state or warp_layouts or activation_window or three_bit_rings or batched_decode" 2>&1 \
             | tee "$OUT/m1ab_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0])) ;;
    m1fin) # the thirty-second session's closing figures: the ring GPU tests; int4 g128 at M = 1, 2 against old3/
           # (da685b2); the issue-6 widths at M=1 on 8192x8192; the int4 M=1 rows with cuBLAS; int3 on 28672x8192
           timeout 270 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "stream_tiles_rings or \
             steady_state or warp_layouts or activation_window or three_bit_rings or batched_decode" 2>&1 \
             | tee "$OUT/m1fin_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           abbench m1f-int4 1 "new old" 70 "^(== |1 |2 )|stream " \
             --shapes 4096x4096,14336x4096,4096x14336,8192x8192 --m 1,2 --weight int4 --group-size 128
           widths m1fin 8192x8192 "int3:128 int2:128"
           timeout 100 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/m1fin-int4" 2>&1 | tee "$OUT/m1fin-int4.log" | grep -E "^(== |1 )|stream "
           widths m1fin28 28672x8192 "int3:128" ;;
    m1trim) # the one-token loop trimmed (activation copies from a carried pointer, the token's column folded only)
           # and 1-2-bit codes raw in it: the ring GPU tests; then this tree against old3/ (`git archive da685b2 |
           # tar -x -C old3`) through the bench, int2 / int3 / int4 g128 at M = 1, 2 on the ring shapes
           timeout "${M1T_TEST_S:-270}" python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k \
             "${M1T_K:-stream_tiles_rings or steady_state or warp_layouts or activation_window or three_bit_rings or \
             batched_decode}" 2>&1 | tee "$OUT/m1trim_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           for r in $(seq "${M1T_ROUNDS:-1}"); do
             for w in ${M1T_W:-int2 int3 int4}; do
               abbench m1t-$w-r$r 1 "new old" 70 "^(== |1 |2 )|stream " \
                 --shapes 4096x4096,14336x4096,4096x14336,8192x8192 --m 1,2 --weight $w --group-size 128
             done
           done ;;
    onec)  # one token's raw-code correction in one MMA per chunk (one_corr): the ring GPU tests; then this tree
           # against old3/ (`git archive cc50202 | tar -x -C old3`) through the bench, alternated twice:
           # int3 and int4 g128 at M = 1 (and 2) on the ring shapes
           timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "${ONEC_K:-stream_tiles or \
             steady_state or register_rings or three_bit_rings or batched_decode}" 2>&1 | tee "$OUT/onec_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           for r in 1 2; do
             abbench one-int3-r$r 1 "new old" 70 "^(== |1 |2 )|stream " \
               --shapes 4096x4096,14336x4096,4096x14336,8192x8192 --m 1,2 --weight int3 --group-size 128
             abbench one-int4-r$r 1 "new old" 70 "^(== |1 |2 )|stream " \
               --shapes 4096x4096,14336x4096,4096x14336,8192x8192 --m 1,2 --weight int4 --group-size 128
           done ;;
    one3)  # 3-bit one-token rings after one_corr, kernel alone (gpu_sweep.py group one3): the planner's against
           # rings of two CTAs per SM, on the four ring shapes
           timeout 300 python3 scripts/gpu_sweep.py --weight int3 --m 1 --groups one3 --rounds 4 \
             --shapes 8192x8192,4096x14336,14336x4096,4096x4096 --json "$OUT/one3.json" > "$OUT/one3.log" 2>&1
           rc=$((rc | $?)); grep -E "stream|us" "$OUT/one3.log" | cut -c1-190 ;;
    one3b) # one token of 3-bit codes on rings of two CTAs per SM (ring3_one_tile): the 3-bit planner GPU tests; then
           # this tree against old3/ (`git archive cb9a7e3 | tar -x -C old3`) through the bench, alternated twice
           timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "three_bit_rings" 2>&1 \
             | tee "$OUT/one3b_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           abbench one3b 2 "new old" 70 "^(== |1 |2 )|stream " --shapes 8192x8192,14336x4096 --m 1,2 --weight int3 \
             --group-size 128 ;;
    onefin) # the thirty-first session's closing figures: the ring GPU tests; the int3 g128 M=1 rows; the
           # issue-6 widths at M=1 on 8192x8192; the int4 M=1 rows with cuBLAS
           timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py -k "stream_tiles_rings or \
             steady_state or warp_layouts or activation_window or three_bit_rings or batched_decode" 2>&1 \
             | tee "$OUT/onefin_tests.log" | tail -4
           rc=$((rc | PIPESTATUS[0]))
           timeout 90 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192 --m 1 --weight int3 \
             --group-size 128 --methods humming --repeats 3 --no-plot --no-jit --out "$OUT/onefin-int3" 2>&1 \
             | tee "$OUT/onefin-int3.log" | grep -E "^(== |1 )|stream "
           widths onefin 8192x8192 "int3:128 int2:128 int8:0 e4m3:0"
           timeout 150 humming bench --shapes 4096x4096,14336x4096,4096x14336,8192x8192,28672x8192 --m 1 \
             --weight int4 --group-size 128 --methods humming,cublas-fp16 --repeats 3 --no-plot --no-jit \
             --out "$OUT/onefin-int4" 2>&1 | tee "$OUT/onefin-int4.log" | grep -E "^(== |1 )|stream " ;;
    host)  python3 scripts/gpu_host.py --json "$OUT/host.json" 2>&1 | tee "$OUT/host.log"
           rc=$((rc | PIPESTATUS[0])) ;;
    all) bash "$0" tests bench; rc=$((rc | $?)) ;;
    *) echo "unknown part $part"; rc=2 ;;
  esac
done
# the device tool brings back at most 8 files from $OUT: more are packed into $OUT/results.tgz
# (tar xzf results.tgz -C somewhere)
if [ "$GPU_RUN_DEPTH" -eq 1 ] && [ "$(find "$OUT" -type f | wc -l)" -gt 8 ]; then
  pack=$(mktemp -d)
  tar czf "$pack/results.tgz" -C "$OUT" . && rm -rf "${OUT:?}"/* && mv "$pack/results.tgz" "$OUT/" \
    && echo "gpu_run.sh: $OUT packed into $OUT/results.tgz"
fi
exit $rc
