#!/usr/bin/env bash
# The project's one entry point for building and checking it on Debian 12.
#
#   tools/dev.sh run    install what is missing, build, run the main job on the default device
#   tools/dev.sh test   install what is missing, build, run every test (ctest, then the Python
#                       package's pytest suite in build/venv)
#   tools/dev.sh sanitize [all|asan|fuzz|tsan]
#                       install what is missing (clang too), then tools/sanitize.sh: sanitizer
#                       builds running the tests, and short fuzz runs
#   tools/dev.sh python only build the Python package (into build/venv) and run its tests
#   tools/dev.sh deps   only install what is missing
#   tools/dev.sh build  only configure and build (into ./build, or $HAL_BUILD_DIR)
#   tools/dev.sh format rewrite sources with clang-format
#
# Installing needs root (or sudo). The CUDA toolkit is not a Debian package: the CUDA backend is
# built when cuda.h is found (CUDA_PATH, or /usr/local/cuda), and left out otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${HAL_BUILD_DIR:-$root/build}
jobs=$(nproc 2>/dev/null || echo 2)

packages=(
  cmake g++ make pkg-config file binutils
  libvulkan-dev libvulkan-volk-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  glslc spirv-tools spirv-headers libspirv-cross-c-shared-dev
  libspdlog-dev libfmt-dev libgtest-dev libopenblas-dev clang-format python3 ccache
  python3-venv python3-dev
)
# Only for the sanitizer builds and the fuzz targets: clang, its sanitizer and libFuzzer runtimes
# (libclang-rt-dev) and llvm-symbolizer (llvm), which turns the reports' addresses into lines.
sanitizer_packages=(clang libclang-rt-dev llvm)

step() { printf '\n== %s\n' "$*"; }

deps() { # [package...] (default: the packages above)
  local missing=() p
  [ $# -gt 0 ] || set -- "${packages[@]}"
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "all packages present"
    return
  fi
  step "installing: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Configures $1 as CMAKE_BUILD_TYPE $2 and builds it. Warnings are errors here (and so in CI),
# never in a user's own cmake build. ccache keeps rebuilds of unchanged sources cheap across runs
# on one machine; with the checkout as its base directory, paths inside it are hashed relative to
# it, and without the working directory in the hash of -g builds, so fresh clones elsewhere (as CI
# makes) share the cache (their debug info then names the first clone's build directory).
configure_and_build() { # dir build-type
  local cache=()
  if command -v ccache >/dev/null; then
    cache=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
  fi
  cmake -S "$root" -B "$1" -DCMAKE_BUILD_TYPE="$2" -DHAL_WARNINGS_AS_ERRORS=ON "${cache[@]}"
  cmake --build "$1" -j "$jobs"
}

# Release, the project's default build type and the one users build: GCC warns differently at
# -O3 (-Wstringop-overread, -Wrestrict, ...), so this is the build that must stay warning-free.
# The sanitizer builds (tools/sanitize.sh) compile the same sources with clang at -O2.
build() {
  step "building into $build"
  configure_and_build "$build" Release
}

format_check() {
  step "checking formatting"
  (cd "$root" && git ls-files '*.h' '*.c' '*.cpp' | grep -v '^tests/fuzz/corpus/' |
    xargs clang-format --dry-run --Werror)
}

run_main() {
  step "hal-info"
  "$build/bin/hal-info"
  # Exit status 77 means "no device to run on" (a machine without any, or without a Vulkan
  # device that takes PTX): said, not a failure. The last runs the pack's PTX on the first Vulkan
  # device, translated to SPIR-V by hal.
  local extra exe status
  for extra in "hal-cts --device default --quick" "matmul --device default" \
    "matmul --device vulkan:0 --ir ptx"; do
    exe=${extra%% *}
    step "$extra"
    status=0
    # shellcheck disable=SC2086
    "$build/bin/"$extra || status=$?
    if [ "$status" -eq 77 ]; then
      echo "$exe: no device to run on (see hal-info above)"
    elif [ "$status" -ne 0 ]; then
      return "$status"
    fi
  done
  # PTX running on any machine: the CUDA backend over the CPU PTX driver (built with the CUDA
  # backend), which presents the host CPU as cuda:0.
  local cpu_ptx="$build/lib/libhal_ptx_cpu.so"
  [ -f "$cpu_ptx" ] || return 0
  for extra in "hal-info" "hal-cts --device cuda:0 --quick" "matmul --device cuda:0"; do
    step "HAL_CUDA_LIBRARY=$cpu_ptx $extra"
    # shellcheck disable=SC2086
    HAL_CUDA_LIBRARY="$cpu_ptx" "$build/bin/"$extra
  done
}

run_tests() {
  step "tests"
  ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600
}

# The Python package: built against this build's install (in $build/sdk) into a venv of its own
# ($build/venv, packages from PyPI), then its pytest suite on lavapipe and the CPU PTX device.
python_tests() {
  step "python package"
  local venv="$build/venv" sdk="$build/sdk"
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install -q --disable-pip-version-check numpy pytest ml_dtypes \
    scikit-build-core nanobind
  # Triton compiles kernels here without a GPU; its live test is skipped where it cannot install.
  "$venv/bin/pip" install -q --disable-pip-version-check triton ||
    echo "triton could not be installed: test_compiled_kernel_from_triton_itself is skipped"
  cmake --install "$build" --prefix "$sdk" >/dev/null
  # Built in $build/python (kept, so a rebuild compiles only what changed).
  CMAKE_PREFIX_PATH="$sdk" "$venv/bin/pip" install -q --disable-pip-version-check \
    --no-build-isolation -C build-dir="$build/python" "$root/python"
  local cpu_ptx="$venv/lib/python3*/site-packages/hal/libhal_ptx_cpu.so"
  # shellcheck disable=SC2086
  cpu_ptx=$(echo $cpu_ptx)
  (cd "$build" && HAL_CUDA_LIBRARY="$cpu_ptx" TRITON_DEFAULT_FP_FUSION=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    "$root/python/tests" --kernels "$sdk/share/hal/kernels")
}

case "${1:-}" in
  deps) deps ;;
  python) python_tests ;;
  build) build ;;
  run) deps; build; run_main ;;
  test)
    deps
    build
    format_check
    status=0
    run_tests || status=$?
    python_tests || status=$?
    exit "$status"
    ;;
  sanitize) deps "${packages[@]}" "${sanitizer_packages[@]}"; exec "$root/tools/sanitize.sh" "${@:2}" ;;
  format) (cd "$root" && git ls-files '*.h' '*.c' '*.cpp' | xargs clang-format -i) ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
