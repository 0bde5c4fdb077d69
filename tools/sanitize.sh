#!/usr/bin/env bash
# Sanitizer runs of the test suite, and the fuzz targets for a short while.
#
#   tools/sanitize.sh [all|asan|tsan|fuzz]   (default: all, in that order)
#
#   asan  build-asan: AddressSanitizer + UndefinedBehaviorSanitizer (UB is fatal, leaks are
#         checked), then the whole ctest suite
#   tsan  build-tsan: ThreadSanitizer, then only the concurrency tests (HAL_TSAN_TESTS, a ctest -R
#         regex)
#   fuzz  build-fuzz (clang only; skipped with a note without it): every libFuzzer target for
#         HAL_FUZZ_SECONDS (default 20) each, seeded from tests/fuzz/corpus/<target>/. New inputs
#         go to build-fuzz/fuzz-corpus/<target>/, never into the repository. To fuzz longer:
#           HAL_FUZZ_SECONDS=3600 tools/sanitize.sh fuzz
#         or run one target by hand:
#           build-fuzz/bin/sniff_ir_fuzz -max_total_time=3600 build-fuzz/fuzz-corpus/sniff_ir \
#             tests/fuzz/corpus/sniff_ir
#         A crash leaves crash-<hash> in the current directory: add it to the target's corpus
#         once fixed, so the corpus regression test (hal_test_fuzz_corpus) keeps checking it.
#
# Build folders are HAL_SANITIZE_DIR/build-{asan,tsan,fuzz} (default: the repository root);
# HAL_SANITIZE_JOBS sets the parallelism (default: the number of cores). Reports from the Vulkan
# loader and the driver that are not ours are silenced by tests/sanitizers/*.supp, each entry
# with its reason. Exits non-zero when any step fails; every step runs regardless.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${HAL_SANITIZE_DIR:-$root}
jobs=${HAL_SANITIZE_JOBS:-$(nproc 2>/dev/null || echo 2)}
fuzz_seconds=${HAL_FUZZ_SECONDS:-20}
supp=$root/tests/sanitizers
tsan_tests=${HAL_TSAN_TESTS:-'Soak\.|LastError\.IsPerThread|Concurrent|OtherThreads|ThreadsWithTheirOwnStreams'}
what=${1:-all}

failed=()
step() { printf '\n== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
fail() {
  echo "sanitize.sh: FAILED: $*" >&2
  failed+=("$*")
}
elapsed() { echo "$(($(date +%s) - $1)) s"; }

configure_and_build() { # <dir> <flags> [cmake args...]
  local dir=$1 flags=$2
  shift 2
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" \
    "-DCMAKE_EXE_LINKER_FLAGS=$flags" "-DCMAKE_SHARED_LINKER_FLAGS=$flags" "$@" >/dev/null &&
    cmake --build "$dir" -j "$jobs"
}

run_asan() {
  local start dir=$out/build-asan
  start=$(date +%s)
  step "ASan+UBSan: building $dir"
  # The tests' discovery runs the executables at build time, so the options apply to it too.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
  if ! configure_and_build "$dir" \
    "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"; then
    fail "ASan build"
    return
  fi
  step "ASan+UBSan: every test"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 900 || fail "ASan tests"
  unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
  echo "asan: $(elapsed "$start")"
}

run_tsan() {
  local start dir=$out/build-tsan
  start=$(date +%s)
  step "TSan: building $dir"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
  if ! configure_and_build "$dir" "-fsanitize=thread -fno-omit-frame-pointer"; then
    fail "TSan build"
    return
  fi
  step "TSan: concurrency tests ($tsan_tests)"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 900 -R "$tsan_tests" ||
    fail "TSan tests"
  unset TSAN_OPTIONS
  echo "tsan: $(elapsed "$start")"
}

run_fuzz() {
  local start dir=$out/build-fuzz clang clangxx
  start=$(date +%s)
  clang=$(command -v clang || true)
  clangxx=$(command -v clang++ || true)
  if [ -z "$clang" ] || [ -z "$clangxx" ]; then
    echo "fuzz: clang not found; the fuzz targets are skipped (the corpus regression test still"
    echo "runs in every build as hal_test_fuzz_corpus)"
    return
  fi
  step "fuzz: building $dir with clang"
  # fuzzer-no-link instruments the runtime as well, so targets that reach it through hal_static
  # (pipeline_cache_fuzz) get coverage feedback from it.
  # hal_warnings() passes the GCC-only -Wshadow=local; clang must not turn it into an error.
  local flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
  flags+=" -Wno-unknown-warning-option"
  if ! cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHAL_BUILD_FUZZERS=ON \
    "-DCMAKE_C_COMPILER=$clang" "-DCMAKE_CXX_COMPILER=$clangxx" \
    "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null ||
    ! cmake --build "$dir" -j "$jobs" --target hal_fuzz_targets; then
    fail "fuzz build"
    return
  fi
  export ASAN_OPTIONS="detect_leaks=1:suppressions=$supp/asan.supp"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
  local target
  for target in sniff_ir selector pipeline_cache; do
    [ -x "$dir/bin/${target}_fuzz" ] || continue
    step "fuzz: ${target}_fuzz for ${fuzz_seconds} s"
    mkdir -p "$dir/fuzz-corpus/$target"
    (cd "$dir" && HAL_BACKENDS=vulkan HAL_LOG_LEVEL=error "bin/${target}_fuzz" \
      -max_total_time="$fuzz_seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
      "fuzz-corpus/$target" "$root/tests/fuzz/corpus/$target") 2>&1 | tail -n 25 ||
      fail "fuzz target $target"
  done
  unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
  echo "fuzz: $(elapsed "$start")"
}

total=$(date +%s)
case "$what" in
  asan) run_asan ;;
  tsan) run_tsan ;;
  fuzz) run_fuzz ;;
  all) run_asan; run_tsan; run_fuzz ;;
  *) sed -n '2,24p' "$0"; exit 2 ;;
esac
echo
echo "sanitize.sh: $what took $(elapsed "$total")"
if [ ${#failed[@]} -ne 0 ]; then
  printf 'sanitize.sh: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "sanitize.sh: all passed"
