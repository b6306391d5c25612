#!/usr/bin/env bash
# Run on the GPU machine (the device tool copies the working tree there):
#   bash scripts/gpu_run.sh [tests|tiles|bench|all] ...
# Installs the project without touching the machine's packages, then runs the
# chosen parts; logs and JSON go to $OUT (or ./out).
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export HUMMING_CACHE_DIR=${HUMMING_CACHE_DIR:-/tmp/humming-cache}
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1
rc=0
for part in "${@:-all}"; do
  case "$part" in
    tiles) python3 scripts/gpu_tiles.py --quick --json "$OUT/tiles.json" 2>&1 | tee "$OUT/tiles.log"; rc=$((rc | PIPESTATUS[0])) ;;
    tests) python3 -m pytest -q -m gpu -x -p no:cacheprovider tests 2>&1 | tee "$OUT/gpu_tests.log" | tail -40; rc=$((rc | PIPESTATUS[0])) ;;
    bench) ext=(); [ -d .whl/humming-kernels ] && ext=(--external humming-kernels=.whl/humming-kernels)
           humming bench --preset llama3-8b --weight int4 --group-size 128 "${ext[@]}" --out "$OUT/bench" 2>&1 | tee "$OUT/bench.log"; rc=$((rc | PIPESTATUS[0])) ;;
    all) bash "$0" tests bench; rc=$((rc | $?)) ;;
    *) echo "unknown part $part"; rc=2 ;;
  esac
done
exit $rc
