#!/usr/bin/env bash
# Checks hal on a machine with an NVIDIA GPU, on both backends, and keeps every result.
#
#   tools/gpu-check.sh RESULTS_DIR [BUILD_DIR]
#
# Made to be run once, on a fresh machine, inside a fixed time budget: the whole check (build
# included) ends within HAL_GPU_CHECK_BUDGET seconds (default 540: nine minutes, inside a
# ten-minute command limit with room to copy the results back), and the steps
# run in order of value, so a budget that runs out loses the least useful results:
#   1. env.txt: driver, GPU, toolkit, Vulkan devices;
#   2. configure, then build only hal-info and cuda_gpu_test (hal's GPU test with the system's
#      libcuda), then run hal-info (HAL_BACKENDS=cuda, =vulkan, and both) and cuda_gpu_test,
#      which fails here (rather than skips) when no CUDA device is usable;
#   3. build everything else, then the whole test suite (ctest; JUnit XML as well as the log),
#      which here also runs warp-level PTX on 32-lane subgroups of NVIDIA's Vulkan driver against
#      the CPU PTX device (ptx_spirv_warp_test; lavapipe has no 32-lane subgroups, so CI runs
#      the same cases through workgroup memory);
#   4. the pack's PTX through NVIDIA's Vulkan driver (vulkan:0; hal translates it to SPIR-V)
#      against the same PTX on CUDA: the three-way differential of hal_test_kernels (each
#      kernel's SPIR-V on vulkan:0, PTX on cuda:0 and PTX on vulkan:0, same inputs, against the
#      CPU reference and each other; Pack/Differential.*) and the set of kernels whose PTX
#      translates (PackPtxOnVulkan.*), kept as differential.log and differential.xml (ctest ran
#      them too; here they are on their own, whatever became of the ctest run);
#   5. a traced matmul sample on cuda:0 and vulkan:0 (HAL_TRACE; the file is checked by
#      tests/trace/check_trace.py and kept as trace-<device>.json, to open in Perfetto);
#   6. the tuner (hal-tune) on cuda:0 and vulkan:0: matmul_f32 and matmul_f16 at 4096^3 (on
#      cuda:0 the tensor-core kernels are matmul_f16 candidates) and attention_f32 at
#      16x1024x1024x64, HAL_GPU_CHECK_TUNE_BUDGET seconds per family (default 20); the tuning
#      databases land in RESULTS_DIR/cache (HAL_CACHE_DIR for this and the next step);
#   7. the conformance suite (hal-cts) on cuda:0 and vulkan:0, and on vulkan:0 again with
#      --ir ptx (the pack's PTX through translation, kernels refused for their matrix
#      instructions skipped: hal-cts-vulkan0-ptx.json beside hal-cts-cuda0.json), then the
#      benchmarks (hal-bench) on cuda:0 and vulkan:0, when those programs exist in the build; a
#      missing one is reported as MISSING. Their matmul and attention figures use the tuned
#      choices of step 6 and say so. Then the launch figures at full length on cuda:0 and
#      vulkan:0 (hal-bench --filter launch --reps 61: hal against cuLaunchKernel, against raw
#      Vulkan bound once and engine style, hal_launch's host time, event timings against direct
#      timestamps), and the matmul figures at full size on cuda:0 (hal-bench --filter matmul:
#      every pack kernel at 1024^3 to 4096^3 against cuBLAS, sgemm for fp32 and cublasGemmEx
#      for fp16), and the PTX-on-Vulkan figures at full size on vulkan:0 (hal-bench --filter
#      ptx_vulkan: translated PTX against its SPIR-V twins, the tensor-core matmuls against the
#      pack's best SPIR-V matmul, Triton's softmax, matmul and attention against the pack's
#      SPIR-V and against the same PTX through CUDA).
# Everything lands in RESULTS_DIR as it happens (a check killed from outside keeps what it has):
# one log per step, and summary.txt with one line per step: PASS, FAIL (exit code), TIMEOUT,
# SKIPPED (the budget or an earlier step), NO DEVICE (exit 77: the device named does not exist)
# or MISSING.
#
# Every step is bounded by its own timeout and by what is left of the budget. Override in
# seconds: HAL_GPU_CHECK_BUDGET (540), HAL_GPU_CHECK_BUILD_TIMEOUT (420, each build step),
# HAL_GPU_CHECK_TEST_TIMEOUT (300, the ctest run), HAL_GPU_CHECK_RUN_TIMEOUT (120, each hal-cts,
# hal-bench, differential and cuda_gpu_test run) and HAL_GPU_CHECK_INFO_TIMEOUT (30). Extra
# CMake arguments go in HAL_GPU_CHECK_CMAKE_ARGS, extra arguments of hal-cts in
# HAL_GPU_CHECK_CTS_ARGS (default none; every hal-cts run gets them) and of hal-bench in
# HAL_GPU_CHECK_BENCH_ARGS (default --quick); both also write JSON results next to their logs.
# The build uses every core (nproc; HAL_GPU_CHECK_JOBS overrides).
#
# The exit code is 0 when every step that ran passed (MISSING and NO DEVICE do not fail it), 1
# when any failed, timed out or was skipped, 2 for wrong usage. The script installs nothing and
# needs no network: build dependencies come from tools/dev.sh deps, the NVIDIA driver and CUDA
# toolkit from the machine.
set -uo pipefail

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  # The comment block above, up to its first line of code.
  awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"
  exit 2
fi

SECONDS=0
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
build=${2:-$root/build-gpu}
jobs=${HAL_GPU_CHECK_JOBS:-$(nproc 2>/dev/null || echo 4)}
budget=${HAL_GPU_CHECK_BUDGET:-540}
build_timeout=${HAL_GPU_CHECK_BUILD_TIMEOUT:-420}
test_timeout=${HAL_GPU_CHECK_TEST_TIMEOUT:-300}
run_timeout=${HAL_GPU_CHECK_RUN_TIMEOUT:-120}
info_timeout=${HAL_GPU_CHECK_INFO_TIMEOUT:-30}
summary=$out/summary.txt
: >"$summary"
failed=0

note() { printf '%-34s %s\n' "$1" "$2" | tee -a "$summary"; }

trap 'note "(check)" "INTERRUPTED after ${SECONDS}s"; exit 1' INT TERM

# run_step NAME TIMEOUT LOG COMMAND...: runs COMMAND with TIMEOUT, cut to what is left of the
# budget, output to LOG. Returns the command's status, or 124 when it was skipped or timed out.
run_step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local left=$((budget - SECONDS - 5))
  if [ "$left" -lt 10 ]; then
    note "$name" "SKIPPED (time budget of ${budget}s spent)"
    failed=1
    return 124
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  printf '== %s (at %ss, limit %ss)\n' "$name" "$SECONDS" "$limit"
  {
    printf '$'
    printf ' %q' "$@"
    printf '\n'
  } >"$log"
  timeout --kill-after=5s "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then
    note "$name" "PASS (${SECONDS}s)"
  elif [ $rc -eq 77 ]; then
    # hal-cts and hal-bench exit 77 when the selected device does not exist; cuda_gpu_test
    # (which runs first) already fails the check when CUDA is missing.
    note "$name" "NO DEVICE (exit 77, see $(basename "$log"))"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    note "$name" "TIMEOUT after ${limit}s (see $(basename "$log"))"
    failed=1
  else
    note "$name" "FAIL (exit $rc, see $(basename "$log"))"
    failed=1
  fi
  return $rc
}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -a)"
  echo "cores: $jobs"
  echo "commit: $(timeout 10 git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo
  echo "== nvidia-smi"
  timeout 20 nvidia-smi 2>&1 || echo "nvidia-smi not available"
  echo
  echo "== nvcc --version"
  timeout 10 nvcc --version 2>&1 || timeout 10 /usr/local/cuda/bin/nvcc --version 2>&1 ||
    echo "nvcc not found"
  echo
  echo "== vulkaninfo --summary"
  timeout 20 vulkaninfo --summary 2>&1 || echo "vulkaninfo not available"
} >"$out/env.txt" 2>&1

# shellcheck disable=SC2086
if ! run_step configure 120 "$out/configure.log" \
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${HAL_GPU_CHECK_CMAKE_ARGS:-}; then
  note "(rest)" "SKIPPED: configuration failed"
  exit 1
fi
grep -E "hal: .*backend" "$out/configure.log" | tee -a "$out/env.txt"

# The GPU results first: the smallest build that yields them.
first_targets=(hal-info)
if grep -q "cuda_gpu_test" "$build/Makefile" "$build/build.ninja" 2>/dev/null; then
  first_targets+=(cuda_gpu_test)
fi
run_step "build (${first_targets[*]})" "$build_timeout" "$out/build-first.log" \
  cmake --build "$build" -j "$jobs" --target "${first_targets[@]}"

info=$build/bin/hal-info
if [ ! -x "$info" ]; then
  note "hal-info" "MISSING (not built)"
else
  for backends in cuda vulkan cuda,vulkan; do
    HAL_BACKENDS=$backends run_step "hal-info ($backends)" "$info_timeout" \
      "$out/hal-info-${backends/,/-}.txt" "$info"
  done
fi

gpu_test=$build/bin/cuda_gpu_test
if [ ! -x "$gpu_test" ]; then
  note "cuda_gpu_test" "MISSING (not built: no CUDA backend?)"
else
  # A machine without a usable GPU fails this step rather than skipping it.
  HAL_TEST_REQUIRE_CUDA=1 run_step "cuda_gpu_test" "$run_timeout" "$out/cuda_gpu_test.log" \
    "$gpu_test" "--gtest_output=xml:$out/cuda_gpu_test.xml"
fi

if run_step build "$build_timeout" "$out/build.log" cmake --build "$build" -j "$jobs"; then
  run_step ctest "$test_timeout" "$out/ctest.log" \
    ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 120 \
    --output-junit "$out/ctest-junit.xml"
else
  note "ctest" "SKIPPED: the build failed"
fi

# The pack's PTX on vulkan:0, translated by hal, against the same PTX on cuda:0 and the SPIR-V on
# vulkan:0 (step 4 above). cuda:0 is the GPU here: HAL_CUDA_LIBRARY is not set.
kernels_test=$build/bin/hal_test_kernels
if [ -x "$kernels_test" ]; then
  run_step "differential (PTX on vulkan:0)" "$run_timeout" "$out/differential.log" \
    "$kernels_test" "--gtest_filter=Pack/Differential.*:PackPtxOnVulkan.*" \
    "--gtest_output=xml:$out/differential.xml"
else
  note "differential" "MISSING (hal_test_kernels not built in $build)"
fi

# A traced matmul per device: the timeline file must hold the expected spans (check_trace.py).
if [ -x "$build/bin/matmul" ] && command -v python3 >/dev/null; then
  for device in cuda:0 vulkan:0; do
    run_step "trace ($device)" "$run_timeout" "$out/trace-${device/:/}.log" \
      python3 "$root/tests/trace/check_trace.py" --expect matmul \
      --trace "$out/trace-${device/:/}.json" -- "$build/bin/matmul" --device "$device"
  done
else
  note "trace" "MISSING (no matmul sample or no python3)"
fi

# The tuner before the figures, so hal-cts and hal-bench run the tuned choices.
export HAL_CACHE_DIR=$out/cache
tune_budget=${HAL_GPU_CHECK_TUNE_BUDGET:-20}
if [ -x "$build/bin/hal-tune" ]; then
  for device in cuda:0 vulkan:0; do
    run_step "hal-tune ($device)" "$run_timeout" "$out/hal-tune-${device/:/}.log" \
      "$build/bin/hal-tune" --device "$device" --family matmul_f32 --family matmul_f16 \
      --family attention_f32 --shape 4096x4096x4096 --shape 16x1024x1024x64 \
      --budget "$tune_budget"
  done
else
  note "hal-tune" "MISSING (not built in $build)"
fi

for program in hal-cts hal-bench; do
  path=$build/bin/$program
  if [ ! -x "$path" ]; then
    note "$program" "MISSING (not built in $build)"
    continue
  fi
  if [ "$program" = hal-cts ]; then
    read -r -a extra <<<"${HAL_GPU_CHECK_CTS_ARGS:-}"
  else
    read -r -a extra <<<"${HAL_GPU_CHECK_BENCH_ARGS---quick}"
  fi
  for device in cuda:0 vulkan:0; do
    run_step "$program ($device)" "$run_timeout" "$out/$program-${device/:/}.log" \
      "$path" --device "$device" --json "$out/$program-${device/:/}.json" ${extra[@]+"${extra[@]}"}
  done
  # The pack's PTX through NVIDIA's Vulkan driver: the same Numerics as on cuda:0 above, the
  # PTX translated to SPIR-V by hal.
  if [ "$program" = hal-cts ]; then
    run_step "hal-cts (vulkan:0, --ir ptx)" "$run_timeout" "$out/hal-cts-vulkan0-ptx.log" \
      "$path" --device vulkan:0 --ir ptx --json "$out/hal-cts-vulkan0-ptx.json" \
      ${extra[@]+"${extra[@]}"}
  fi
done

# The launch path at full length on both drivers (the quick runs above issue 64 dispatches):
# hal against cuLaunchKernel, and against raw Vulkan bound once and engine style, with the host
# time of hal_launch and event timings against direct timestamps (docs/PERFORMANCE.md).
if [ -x "$build/bin/hal-bench" ]; then
  for device in cuda:0 vulkan:0; do
    run_step "hal-bench launch ($device)" "$run_timeout" "$out/hal-bench-launch-${device/:/}.log" \
      "$build/bin/hal-bench" --device "$device" --filter launch --reps 61 \
      --json "$out/hal-bench-launch-${device/:/}.json"
  done
  run_step "hal-bench matmul (cuda:0)" "$run_timeout" "$out/hal-bench-matmul-cuda0.log" \
    "$build/bin/hal-bench" --device cuda:0 --filter matmul --json "$out/hal-bench-matmul-cuda0.json"
  # PTX through translation on NVIDIA's Vulkan driver at full size: the pack's PTX against its
  # SPIR-V twins, its tensor-core matmuls against its best SPIR-V matmul, and Triton's kernels
  # against the pack's SPIR-V and against the same PTX through CUDA on this GPU.
  run_step "hal-bench ptx_vulkan (vulkan:0)" "$run_timeout" "$out/hal-bench-ptx-vulkan0.log" \
    "$build/bin/hal-bench" --device vulkan:0 --filter ptx_vulkan \
    --json "$out/hal-bench-ptx-vulkan0.json"
fi

note "(check)" "done in ${SECONDS}s of ${budget}s"
echo "results in $out (summary.txt)"
exit $failed
