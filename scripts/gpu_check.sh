#!/usr/bin/env bash
# The project's GPU check: build, GPU tests, compute-sanitizer (memcheck, racecheck) on the small GPU
# tests, benchmarks. Usage: scripts/gpu_check.sh OUTDIR [FAMILY ...]  (default families: reduce scan histogram norms gemm)
# Logs and benchmark JSON land in OUTDIR; a short summary is printed last. See ../shared/DEVICE.md.
# SKIP_SANITIZER=1 skips step 3, SKIP_TESTS=1 step 2, SKIP_BENCH=1 step 4 (to split the check across
# calls of a limited length); PYTEST_ARGS adds arguments to step 2 (e.g. "-m 'not big'").
set -uo pipefail
OUT=${1:?usage: scripts/gpu_check.sh OUTDIR [FAMILY ...]}
shift
FAMILIES=${*:-reduce scan histogram norms gemm}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
summary=()
record() { summary+=("$1: $2"); }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"

# 1. build (one architecture keeps it short; the package default is 80;90a)
start=$(date +%s)
if GPUPRIMS_CUDA_ARCHS=${GPUPRIMS_CUDA_ARCHS:-90a} python3 -m pip install --no-build-isolation --no-deps -v . \
    > "$OUT/build.log" 2>&1; then
  record build "ok in $(( $(date +%s) - start )) s"
else
  tail -40 "$OUT/build.log"; echo "build failed"; exit 1
fi
grep -E "spill|C7510" "$OUT/build.log" | sort -u > "$OUT/ptxas_warnings.txt" || true

# 2. every test (CPU and GPU), from outside the source tree so the installed package is imported
if [ -z "${SKIP_TESTS:-}" ]; then
  ( cd tests && timeout ${TEST_TIMEOUT:-1500} python3 -m pytest -q -p no:cacheprovider --timeout 600 ${PYTEST_ARGS:-} . ) > "$OUT/tests.txt" 2>&1
  record tests "$(tail -1 "$OUT/tests.txt")"
fi

# 3. compute-sanitizer on the small GPU tests (caching allocators off so out-of-bounds accesses show)
sanitize() {
  local tool=$1; shift
  ( cd tests && PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 900 compute-sanitizer --tool "$tool" \
      --error-exitcode 17 --print-limit 20 "$@" python3 -m pytest -q -p no:cacheprovider -x \
      -m "gpu and not big" -k "sanitize" . ) > "$OUT/sanitizer_$tool.txt" 2>&1
  local rc=$?
  record "sanitizer $tool" "rc=$rc, $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer_$tool.txt" | tail -1), $(tail -1 "$OUT/sanitizer_$tool.txt")"
}
if [ -z "${SKIP_SANITIZER:-}" ]; then
  sanitize memcheck --leak-check no
  sanitize racecheck --racecheck-report analysis
fi

# 4. benchmarks
if [ -z "${SKIP_BENCH:-}" ]; then
  for family in $FAMILIES; do
    python3 -m gpuprims.bench "$family" --json "$OUT/$family.json" > "$OUT/bench_$family.txt" 2>&1
    record "bench $family" "rc=$?"
  done
fi

echo; echo "===== summary"; printf '%s\n' "${summary[@]}"
if [ -z "${SKIP_BENCH:-}" ]; then
  for family in $FAMILIES; do echo "----- $family"; cat "$OUT/bench_$family.txt"; done
fi
