#!/usr/bin/env bash
# Sanitizer builds of hal and short fuzz runs, as CI runs them. Needs clang, its runtime
# libraries and llvm-symbolizer: `tools/dev.sh sanitize [...]` installs those, then runs this.
#
#   tools/sanitize.sh [all|asan|fuzz|tsan]   (default: all, in that order)
#
#   asan  build-asan, with clang: AddressSanitizer + UndefinedBehaviorSanitizer (UB is fatal,
#         leaks are checked). The code is also instrumented for libFuzzer (fuzzer-no-link), so
#         the same build holds the fuzz targets. Then the whole ctest suite but a few long runs
#         that repeat what other tests run under ASan (see test_asan).
#   fuzz  every libFuzzer target of build-asan (built first where it is missing) for
#         HAL_FUZZ_SECONDS (default 30) each, HAL_SANITIZE_JOBS of them at a time, seeded from the repository (tests/fuzz/corpus/<name>,
#         the kernel pack's PTX, the CPU PTX device's test kernels, the test shaders). New inputs
#         go to build-asan/fuzz-corpus/<name>, never into the repository; a crash is saved as
#         build-asan/fuzz-crashes/<name>-crash-*.
#         To fuzz longer, e.g. an hour per target:
#           HAL_FUZZ_SECONDS=3600 tools/sanitize.sh fuzz
#         or only some targets (names as below, space-separated):
#           HAL_FUZZ_TARGETS=sniff_ir_fuzz HAL_FUZZ_SECONDS=3600 tools/sanitize.sh fuzz
#         Once a crash is fixed, add its input to tests/fuzz/corpus/<name>/ where that exists, so
#         the corpus regression test (hal_test_fuzz_corpus) keeps checking it in every build.
#   tsan  build-tsan, with clang: ThreadSanitizer. Only the executables that hold the concurrency
#         tests are built (HAL_TSAN_TARGETS), and only those tests run (HAL_TSAN_TESTS, a ctest -R
#         regex): the rest of the suite is slow under TSan on lavapipe and has no threads of its own.
#
# Build folders are HAL_SANITIZE_DIR/build-{asan,tsan} (default: the repository root);
# HAL_SANITIZE_JOBS sets the parallelism (default: the number of cores). Reports from code that
# is not hal's (the Vulkan loader, the validation layer, the Mesa driver) are silenced by
# tests/sanitizers/*.supp, each entry with its reason. Every step runs even when one before it
# failed; the exit status is non-zero when any failed. Each step's time is printed at the end.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${HAL_SANITIZE_DIR:-$root}
jobs=${HAL_SANITIZE_JOBS:-$(nproc 2>/dev/null || echo 2)}
fuzz_seconds=${HAL_FUZZ_SECONDS:-30}
fuzz_targets=${HAL_FUZZ_TARGETS:-sniff_ir_fuzz selector_fuzz pipeline_cache_fuzz spirv_reflect_fuzz ptx_reader_fuzz ptx_parser_fuzz ptx_vm_load_fuzz ptx_spirv_fuzz}
supp=$root/tests/sanitizers
# The CPU PTX device's tests run whole: its driver's (stream workers, events, the legacy
# stream's ordering), kernels through hal on it, and the interpreter's, whose grids run on a pool
# of two workers (blocks contending on atomics, racing on global memory as GPU code may).
tsan_targets=${HAL_TSAN_TARGETS:-hal_test_runtime hal_test_no_backends hal_test_vulkan hal_test_soak cuda_backend_test ptx_cpu_driver_test ptx_cpu_kernel_test ptx_vm_test}
tsan_tests=${HAL_TSAN_TESTS:-'Soak\.|LastError\.IsPerThread|Concurrent|OtherThreads|ThreadsWithTheirOwnStreams|DriverTest\.|KernelTest\.|PtxCpuKernelHal\.|PtxVm[A-Za-z]*\.|Matrix[A-Za-z]*\.'}
what=${1:-all}
asan_dir=$out/build-asan
tsan_dir=$out/build-tsan

failed=()
times=()
step() { printf '\n== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
fail() {
  echo "sanitize.sh: FAILED: $*" >&2
  failed+=("$*")
}
timed() { # <label> <command...>: runs it, records its time, returns its status
  local label=$1 start status=0
  shift
  start=$(date +%s)
  "$@" || status=$?
  times+=("$(printf '%-28s %5d s%s' "$label" "$(($(date +%s) - start))" \
    "$([ "$status" -eq 0 ] || echo '  FAILED')")")
  return "$status"
}

need_clang() {
  if ! command -v clang >/dev/null || ! command -v clang++ >/dev/null; then
    echo "sanitize.sh: clang not found; tools/dev.sh sanitize installs it" >&2
    return 1
  fi
}

# ccache, where installed, keeps rebuilds cheap, across fresh clones too (as in tools/dev.sh).
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi

# <dir> <sanitizer flags> [cmake args...]: configure a clang build with the flags everywhere.
# Reports need only file and line: line tables instead of full debug info compile about a tenth
# faster and link much smaller. Not -O1: there ASan's stack instrumentation of the emulated pack
# kernels (tests/kernels/cuda_emulation_test.cpp, whose register tiles -O2 keeps out of memory)
# took over 13 minutes for that one file, more than the whole build gained.
configure() {
  local dir=$1 flags=$2 optimize="-O2 -gline-tables-only -DNDEBUG"
  shift 2
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHAL_WARNINGS_AS_ERRORS=ON \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$optimize" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$optimize" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ ${launcher[@]+"${launcher[@]}"} \
    "-DCMAKE_C_FLAGS=$flags -fno-omit-frame-pointer" "-DCMAKE_CXX_FLAGS=$flags -fno-omit-frame-pointer" \
    "$@" >/dev/null
}

asan_env() {
  # The tests' discovery runs the executables at build time, so the options apply to it too.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:suppressions=$supp/asan.supp"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
}

build_asan() {
  need_clang || return 1
  asan_env
  # Linked with the sanitizers' runtimes only: libFuzzer's own is linked into the fuzz targets.
  # Programs written in C that load libhal.so (the header test, the install consumer) need the
  # C++ part of UBSan's runtime too, for the C++ checks compiled into the library.
  configure "$asan_dir" \
    "-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined" \
    -DHAL_BUILD_FUZZERS=ON \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined -fsanitize-link-c++-runtime -lstdc++" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined" &&
    cmake --build "$asan_dir" -j "$jobs"
}

test_asan() {
  asan_env
  # Left out, because each repeats at length what other tests here already run under ASan, and
  # together they took more than half of this run (the plain build runs them all):
  #  - HalCts.FullCpuPtx: every kernel of the pack at full size on the CPU PTX device, past its
  #    10-minute limit under ASan;
  #  - KernelsPtxOnCpuPtx (200 s under ASan): the pack's PTX on the CPU PTX device, which
  #    HalCts.QuickCpuPtx and the samples also interpret;
  #  - HalCts.QuickVulkanPtx (130 s): the pack's PTX translated for lavapipe, which
  #    PtxToSpirv.EveryPtxInTheTree* translate and validate here, and ptx_spirv_fuzz exercises;
  #  - HalCts.FullVulkan (150 s): the quick run's code with larger shapes and the perf figures,
  #    its time lavapipe's; HalCts.QuickVulkan runs hal-cts's code here;
  #  - HalTune.SmallRunThenShow and AttentionAndMatmulInOneRun (225 s): their time is lavapipe
  #    compiling candidates; the search and the database run here in hal_test_tune, and hal-tune's
  #    own code in HalTune.NothingTunedNothingSaved;
  #  - HalBench.QuickCpuPtx (80 s): figures of the interpreter, whose code the CPU PTX device's
  #    tests run here; hal-bench's code runs in HalBench.Quick and HalBench.QuickSkeleton.
  local slow='HalCts\.FullCpuPtx|HalCts\.QuickVulkanPtx|KernelsPtxOnCpuPtx|HalCts\.FullVulkan'
  slow+='|HalTune\.SmallRunThenShow|HalTune\.AttentionAndMatmulInOneRun|HalBench\.QuickCpuPtx'
  ctest --test-dir "$asan_dir" --output-on-failure -j "$jobs" --timeout 900 -E "^($slow)\$"
}

run_asan() {
  step "ASan+UBSan: building $asan_dir"
  if ! timed "asan: build" build_asan; then
    fail "ASan build"
    return
  fi
  step "ASan+UBSan: every test"
  timed "asan: ctest (all)" test_asan || fail "ASan tests"
}

# <target>: the folders its inputs are seeded from.
fuzz_seeds() {
  case $1 in
    sniff_ir_fuzz) echo "$root/tests/fuzz/corpus/sniff_ir" ;;
    selector_fuzz) echo "$root/tests/fuzz/corpus/selector" ;;
    pipeline_cache_fuzz) echo "$root/tests/fuzz/corpus/pipeline_cache" ;;
    spirv_reflect_fuzz) echo "$asan_dir/tests/vulkan/shaders" ;;
    ptx_reader_fuzz | ptx_parser_fuzz) echo "$root/kernels/ptx" ;;
    ptx_vm_load_fuzz)
      # The PTX the interpreter runs in the tests, gathered in one folder: tests/ptx_cpu holds
      # sources besides its kernels.
      mkdir -p "$asan_dir/fuzz-seeds/$1"
      cp "$root"/tests/ptx_cpu/kernels.ptx "$root"/tests/ptx_cpu/triton/*.ptx \
        "$root"/tests/ptx_cpu/nvcc/*.ptx "$asan_dir/fuzz-seeds/$1"
      echo "$root/kernels/ptx $asan_dir/fuzz-seeds/$1"
      ;;
    ptx_spirv_fuzz)
      # Its corpus (small modules that reach the translator's paths and refusals, and the tree's
      # smaller PTX), then all of the tree's PTX as for ptx_vm_load_fuzz: the kernel pack's, the
      # CPU PTX device's nvcc and Triton kernels (the Python tests' are the same files), too
      # large to keep in the corpus.
      mkdir -p "$asan_dir/fuzz-seeds/$1"
      cp "$root"/tests/ptx_cpu/kernels.ptx "$root"/tests/ptx_cpu/triton/*.ptx \
        "$root"/tests/ptx_cpu/nvcc/*.ptx "$asan_dir/fuzz-seeds/$1"
      echo "$root/tests/fuzz/corpus/ptx_spirv $root/kernels/ptx $asan_dir/fuzz-seeds/$1"
      ;;
  esac
}

fuzz_one() { # <target>: its exit status is libFuzzer's; its log is fuzz-crashes/<target>.log
  local target=$1 seeds
  mkdir -p "$asan_dir/fuzz-corpus/$target" "$asan_dir/fuzz-crashes"
  read -r -a seeds <<<"$(fuzz_seeds "$target")"
  asan_env
  # libFuzzer stops at the first crash, leak or UB report, or at an input that runs longer than
  # -timeout; its exit status says so. The seeds include the kernel pack's tensor-core PTX, whose
  # eight kernels translate whole (a few hundred mma each) and validate in about 25 s under ASan.
  export ASAN_OPTIONS="$ASAN_OPTIONS:abort_on_error=0"
  (cd "$asan_dir" && HAL_BACKENDS=vulkan HAL_LOG_LEVEL=error "bin/$target" \
    -max_total_time="$fuzz_seconds" -timeout=90 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$asan_dir/fuzz-crashes/$target-" \
    "fuzz-corpus/$target" "${seeds[@]}") >"$asan_dir/fuzz-crashes/$target.log" 2>&1
}

run_fuzz() {
  local target running=() present=()
  # After the asan step this only confirms that everything is up to date.
  step "fuzz: building $asan_dir"
  if ! timed "fuzz: build" build_asan; then
    fail "fuzz build"
    return
  fi
  for target in $fuzz_targets; do
    if [ ! -x "$asan_dir/bin/$target" ]; then
      # The PTX ones exist only where cuda.h was found; the Vulkan ones only with Vulkan.
      echo "fuzz: $target is not built here; skipped"
      continue
    fi
    present+=("$target")
  done
  # libFuzzer runs on one core: the targets run $jobs at a time, each for the same time as alone.
  # Each one's status and seconds go to files, read back in order once all have ended.
  mkdir -p "$asan_dir/fuzz-crashes"
  for target in ${present[@]+"${present[@]}"}; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    step "fuzz: $target for $fuzz_seconds s"
    rm -f "$asan_dir/fuzz-crashes/$target.result"
    (
      start=$(date +%s) status=0
      fuzz_one "$target" || status=$?
      echo "$status $(($(date +%s) - start))" >"$asan_dir/fuzz-crashes/$target.result"
    ) &
    running+=($!)
  done
  [ ${#running[@]} -eq 0 ] || wait "${running[@]}"
  for target in ${present[@]+"${present[@]}"}; do
    local status=1 seconds=0
    read -r status seconds <"$asan_dir/fuzz-crashes/$target.result" || true
    step "fuzz: $target: the end of its log"
    tail -n 25 "$asan_dir/fuzz-crashes/$target.log"
    times+=("$(printf '%-28s %5d s%s' "fuzz: $target" "$seconds" \
      "$([ "$status" -eq 0 ] || echo '  FAILED')")")
    [ "$status" -eq 0 ] || fail "fuzz target $target"
  done
}

build_tsan() {
  need_clang || return 1
  local present=() target available
  configure "$tsan_dir" "-fsanitize=thread" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread" || return 1
  available=$(cmake --build "$tsan_dir" --target help) || return 1
  for target in $tsan_targets; do
    # cuda_backend_test and the CPU PTX device's exist only where cuda.h was found.
    if grep -qx "\.\.\. $target" <<<"$available"; then present+=("$target"); fi
  done
  [ ${#present[@]} -gt 0 ] || { echo "tsan: none of $tsan_targets is a target" >&2; return 1; }
  cmake --build "$tsan_dir" -j "$jobs" --target "${present[@]}"
}

test_tsan() {
  # The regex must select tests: a typo in it must not pass as a clean run.
  local count
  count=$(ctest --test-dir "$tsan_dir" -N -R "$tsan_tests" | sed -n 's/^Total Tests: //p')
  if [ "${count:-0}" -eq 0 ]; then
    echo "tsan: no test matches $tsan_tests" >&2
    return 1
  fi
  ctest --test-dir "$tsan_dir" --output-on-failure -j "$jobs" --timeout 900 -R "$tsan_tests"
}

run_tsan() {
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
  step "TSan: building $tsan_dir ($tsan_targets)"
  if ! timed "tsan: build" build_tsan; then
    fail "TSan build"
    unset TSAN_OPTIONS
    return
  fi
  step "TSan: concurrency tests ($tsan_tests)"
  timed "tsan: ctest (concurrency)" test_tsan || fail "TSan tests"
  unset TSAN_OPTIONS
}

total=$(date +%s)
case "$what" in
  asan) run_asan ;;
  fuzz) run_fuzz ;;
  tsan) run_tsan ;;
  all) run_asan; run_fuzz; run_tsan ;;
  *) sed -n '2,30p' "$0"; exit 2 ;;
esac
echo
echo "sanitize.sh: times"
printf '  %s\n' "${times[@]}"
echo "sanitize.sh: $what took $(($(date +%s) - total)) s"
if [ ${#failed[@]} -ne 0 ]; then
  printf 'sanitize.sh: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "sanitize.sh: all passed"
