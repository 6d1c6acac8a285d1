#!/usr/bin/env bash
# The project's GPU check: build, GPU tests, compute-sanitizer (memcheck, racecheck) on the small GPU
# tests, benchmarks. Usage: scripts/gpu_check.sh OUTDIR [FAMILY ...]  (default families: reduce scan histogram norms gemm transpose topk)
# Logs and benchmark JSON land in OUTDIR; a short summary is printed last. See ../shared/DEVICE.md.
# Steps 2 (tests, in parallel groups: TEST_GROUPS) and 3 (sanitizers) run side by side, step 4 after.
# SKIP_SANITIZER=1 skips step 3, SKIP_TESTS=1 step 2, SKIP_BENCH=1 step 4 (to split the check across
# calls of a limited length), SKIP_BUILD=1 step 1 (a package the calling script has installed);
# PYTEST_ARGS adds arguments to step 2, parsed as shell words (e.g. PYTEST_ARGS="-m 'not big'").
# TEST_GROUPS replaces step 2's groups ('|'-separated pytest arguments); test files no group names
# run as one more group unless ONLY_GROUPS=1.
set -uo pipefail
OUT=${1:?usage: scripts/gpu_check.sh OUTDIR [FAMILY ...]}
shift
FAMILIES=${*:-reduce scan histogram norms gemm transpose topk}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
summary=()
record() { summary+=("$1: $2"); }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"

# 1. build (one architecture keeps it short; the package default is 80;90a)
start=$(date +%s)
if [ -n "${SKIP_BUILD:-}" ]; then
  record build "skipped (SKIP_BUILD)"
elif GPUPRIMS_CUDA_ARCHS=${GPUPRIMS_CUDA_ARCHS:-90a} python3 -m pip install --no-build-isolation --no-deps -v . \
    > "$OUT/build.log" 2>&1; then
  record build "ok in $(( $(date +%s) - start )) s"
  grep -E "spill|C7510" "$OUT/build.log" | sort -u > "$OUT/ptxas_warnings.txt" || true
else
  tail -40 "$OUT/build.log"; echo "build failed"; exit 1
fi

# 2 and 3 run together: the test groups in parallel processes (the GPU is mostly idle between small
# test kernels, so a device budget buys about 3x more tests this way) and both sanitizers beside them.
# Timing-sensitive work (step 4) waits until they are all done. A group is pytest arguments: files
# and, for the long files, --shard=I/N (tests/conftest.py: every N-th test from the I-th), so that
# the whole check but the benchmarks fits one 10-minute device call. Session 29, H100, the 14 groups
# side by side, -m "not big": build 150 s, the groups 29-264 s (test_norms_gpu.py's three shares
# 217-264 s, the backward files' two 179-199 s, the rest 72-172 s), 423 s in all. Session 50, H200:
# build about 200 s, the groups 19-238 s but the backward files' two, which the session's tests had
# grown past 280 s: now three.
# Each group's CPU math (numpy's BLAS, torch's CPU threads) is held to OMP_NUM_THREADS threads so
# that 14 processes do not each start a thread per core.
TEST_GROUPS=${TEST_GROUPS:-"test_reduce_gpu.py --shard=0/2|test_reduce_gpu.py --shard=1/2|test_reduce.py test_reduce_properties.py test_interop.py test_norms.py test_norms_torch.py test_transpose* test_topk*|test_scan* test_compact* --shard=0/2|test_scan* test_compact* --shard=1/2|test_norms_gpu.py --shard=0/3|test_norms_gpu.py --shard=1/3|test_norms_gpu.py --shard=2/3|test_norms_backward* --shard=0/3|test_norms_backward* --shard=1/3|test_norms_backward* --shard=2/3|test_add_norm* test_dropout*|test_gemm* test_histogram* --shard=0/2|test_gemm* test_histogram* --shard=1/2"}
eval "pytest_args=(${PYTEST_ARGS:-})"  # quotes in PYTEST_ARGS group words, as on a command line
run_group() {  # $1: index, $2: the group's pytest arguments (file globs expanded, --shard=I/N)
  ( cd tests && export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OPENBLAS_NUM_THREADS=${OMP_NUM_THREADS:-2} && timeout ${TEST_TIMEOUT:-1500} python3 -m pytest -q -p no:cacheprovider --timeout 600 "${pytest_args[@]}" $2 ) \
      > "$OUT/tests_$1.txt" 2>&1
}

# 3. compute-sanitizer on the small GPU tests (caching allocators off so out-of-bounds accesses show)
sanitize() {
  local tool=$1 args=()
  case $tool in
    memcheck) args=(--leak-check no) ;;
    racecheck) args=(--racecheck-report analysis) ;;
  esac
  ( cd tests && PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 900 compute-sanitizer --tool "$tool" \
      --error-exitcode 17 --print-limit 20 "${args[@]}" python3 -m pytest -q -p no:cacheprovider -x \
      -m "gpu and not big" -k "sanitize" . ) > "$OUT/sanitizer_$tool.txt" 2>&1
  echo "rc=$?" >> "$OUT/sanitizer_$tool.txt"
}
# A sanitizer killed by a signal before pytest reported anything is rerun once on its own after the
# test groups (session 53 run 3: racecheck segfaulted at its start beside 15 test processes and then
# passed alone on the same installed package); the first log stays as sanitizer_TOOL.crashed.txt.
rerun_if_crashed() {
  local tool=$1 rc
  local log="$OUT/sanitizer_$tool.txt"
  rc=$(sed -n 's/^rc=//p' "$log" | tail -1)
  # killed by a signal, and the log holds nothing but the sanitizer's banner and the exit status
  if [ "${rc:-0}" -ge 128 ] && ! grep -qvE '^(========= COMPUTE-SANITIZER|rc=[0-9]+)$' "$log"; then
    mv "$log" "$OUT/sanitizer_$tool.crashed.txt"
    sanitize "$tool"
    record "sanitizer $tool (first run)" "killed at its start (rc=$rc, sanitizer_$tool.crashed.txt); rerun alone"
  fi
}
pids=()
if [ -z "${SKIP_TESTS:-}" ]; then
  i=0
  IFS='|' read -ra groups <<< "$TEST_GROUPS"
  # files no group names (a new test file) form one more group, so nothing is skipped silently;
  # ONLY_GROUPS=1 (a targeted run of a few groups) leaves them out and the summary names them
  grouped=" $(cd tests && echo ${TEST_GROUPS//|/ }) "
  rest=""
  for f in $(cd tests && echo test_*.py); do [[ "$grouped" == *" $f "* ]] || rest+=" $f"; done
  if [ -n "$rest" ] && [ -n "${ONLY_GROUPS:-}" ]; then
    record "tests not run (ONLY_GROUPS)" "$rest"
  elif [ -n "$rest" ]; then
    groups+=("$rest")
  fi
  for g in "${groups[@]}"; do
    run_group $i "$(cd tests && echo $g)" &
    pids+=($!)
    i=$((i + 1))
  done
fi
if [ -z "${SKIP_SANITIZER:-}" ]; then
  sanitize memcheck &
  pids+=($!)
  sanitize racecheck &
  pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p"; done
if [ -z "${SKIP_SANITIZER:-}" ]; then
  rerun_if_crashed memcheck
  rerun_if_crashed racecheck
fi
if [ -z "${SKIP_TESTS:-}" ]; then
  # this run's groups only (OUTDIR may hold an earlier run's logs)
  for ((k = 0; k < i; k++)); do record "tests tests_$k" "$(tail -1 "$OUT/tests_$k.txt")"; done
fi
if [ -z "${SKIP_SANITIZER:-}" ]; then
  for tool in memcheck racecheck; do
    record "sanitizer $tool" "$(tail -1 "$OUT/sanitizer_$tool.txt"), $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer_$tool.txt" | tail -1), $(tail -2 "$OUT/sanitizer_$tool.txt" | head -1)"
  done
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
