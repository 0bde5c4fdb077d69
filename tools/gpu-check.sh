#!/usr/bin/env bash
# Checks hal on a machine with an NVIDIA GPU, on both backends, and keeps every result.
#
#   tools/gpu-check.sh RESULTS_DIR [BUILD_DIR]
#
# Builds hal (into BUILD_DIR, default ./build-gpu) with the CUDA and Vulkan backends, then runs:
#   1. the test suite (ctest; JUnit XML as well as the log);
#   2. hal-info, once per backend (HAL_BACKENDS=cuda, HAL_BACKENDS=vulkan) and once with both;
#   3. the conformance suite (hal-cts) and the benchmarks (hal-bench) on cuda:0 and vulkan:0,
#      when those programs exist in the build; a missing one is reported as MISSING.
# Everything lands in RESULTS_DIR: one log per step, env.txt (driver, GPU, toolkit, Vulkan
# devices) and summary.txt with one line per step: PASS, FAIL (exit code), TIMEOUT or MISSING.
#
# Every step is bounded by a timeout, so the whole check ends in a known time. Override them in
# seconds with HAL_GPU_CHECK_BUILD_TIMEOUT (default 1200), HAL_GPU_CHECK_TEST_TIMEOUT (900),
# HAL_GPU_CHECK_RUN_TIMEOUT (600, each hal-cts and hal-bench run) and HAL_GPU_CHECK_INFO_TIMEOUT
# (60). Extra CMake arguments go in HAL_GPU_CHECK_CMAKE_ARGS.
#
# The exit code is 0 when every step that ran passed (MISSING steps do not fail the check), 1
# when any failed or timed out, 2 for wrong usage. The script installs nothing: build
# dependencies come from tools/dev.sh deps, the NVIDIA driver and CUDA toolkit from the machine.
set -uo pipefail

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
build=${2:-$root/build-gpu}
jobs=$(nproc 2>/dev/null || echo 4)
build_timeout=${HAL_GPU_CHECK_BUILD_TIMEOUT:-1200}
test_timeout=${HAL_GPU_CHECK_TEST_TIMEOUT:-900}
run_timeout=${HAL_GPU_CHECK_RUN_TIMEOUT:-600}
info_timeout=${HAL_GPU_CHECK_INFO_TIMEOUT:-60}
summary=$out/summary.txt
: >"$summary"
failed=0

note() { printf '%-34s %s\n' "$1" "$2" | tee -a "$summary"; }

# run_step NAME TIMEOUT LOG COMMAND...: runs COMMAND with a timeout, output to LOG.
run_step() {
  local name=$1 limit=$2 log=$3
  shift 3
  printf '== %s\n' "$name"
  {
    printf '$'
    printf ' %q' "$@"
    printf '\n'
  } >"$log"
  timeout --kill-after=15s "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then
    note "$name" "PASS"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    note "$name" "TIMEOUT after ${limit}s (see $(basename "$log"))"
    failed=1
  else
    note "$name" "FAIL (exit $rc, see $(basename "$log"))"
    failed=1
  fi
  return $rc
}

# find_program NAME: the path of an executable built as NAME, or nothing.
find_program() {
  local candidate
  for candidate in "$build/bin/$1" "$build/tools/$1" "$build/tools/$1/$1" "$build/$1"; do
    if [ -x "$candidate" ] && [ -f "$candidate" ]; then
      echo "$candidate"
      return
    fi
  done
  find "$build" -type f -name "$1" -perm -u+x 2>/dev/null | head -n 1
}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -a)"
  echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo
  echo "== nvidia-smi"
  timeout 30 nvidia-smi 2>&1 || echo "nvidia-smi not available"
  echo
  echo "== nvcc --version"
  timeout 30 nvcc --version 2>&1 || timeout 30 /usr/local/cuda/bin/nvcc --version 2>&1 ||
    echo "nvcc not found"
  echo
  echo "== vulkaninfo --summary"
  timeout 60 vulkaninfo --summary 2>&1 || echo "vulkaninfo not available"
} >"$out/env.txt" 2>&1

# shellcheck disable=SC2086
if ! run_step configure 300 "$out/configure.log" \
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${HAL_GPU_CHECK_CMAKE_ARGS:-}; then
  note "(rest)" "SKIPPED: configuration failed"
  exit 1
fi
grep -E "hal: .*backend" "$out/configure.log" | tee -a "$out/env.txt"
if ! run_step build "$build_timeout" "$out/build.log" cmake --build "$build" -j "$jobs"; then
  note "(rest)" "SKIPPED: the build failed"
  exit 1
fi

run_step ctest "$test_timeout" "$out/ctest.log" \
  ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 300 \
  --output-junit "$out/ctest-junit.xml"

info=$(find_program hal-info)
if [ -z "$info" ]; then
  note "hal-info" "MISSING (not built)"
else
  for backends in cuda vulkan cuda,vulkan; do
    HAL_BACKENDS=$backends run_step "hal-info ($backends)" "$info_timeout" \
      "$out/hal-info-${backends/,/-}.txt" "$info"
  done
fi

for program in hal-cts hal-bench; do
  path=$(find_program "$program")
  if [ -z "$path" ]; then
    note "$program" "MISSING (not built in $build)"
    continue
  fi
  for device in cuda:0 vulkan:0; do
    args=(--device "$device")
    run_step "$program ($device)" "$run_timeout" "$out/$program-${device/:/}.log" \
      "$path" "${args[@]}"
  done
done

echo
echo "results in $out (summary.txt)"
exit $failed
