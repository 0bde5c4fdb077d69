#!/usr/bin/env bash
# Regenerates the committed PTX (kernels/ptx/*.ptx) from kernels/cuda/*.cu exactly as the build
# does (nvcc -ptx, then cmake/ptx_isa.cmake lowers the declared PTX ISA version), and records the
# nvcc version that made them in kernels/ptx/NVCC_VERSION. Builds without nvcc use these files;
# builds with the same nvcc version check them (test Kernels/PtxCommitted). Needs nvcc and cmake.
#
#   kernels/regen-ptx.sh            uses nvcc from $CUDA_PATH/bin, /usr/local/cuda/bin or PATH
#   NVCC=/path/to/nvcc kernels/regen-ptx.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Keep in step with HAL_KERNELS_PTX_ARCH and HAL_KERNELS_PTX_ISA in kernels/CMakeLists.txt.
arch=compute_80
isa=7.0

nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  for candidate in "${CUDA_PATH:-}/bin/nvcc" /usr/local/cuda/bin/nvcc "$(command -v nvcc || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then nvcc=$candidate; break; fi
  done
fi
[ -n "$nvcc" ] || { echo "regen-ptx.sh: nvcc not found (set NVCC or CUDA_PATH)" >&2; exit 1; }

version=$("$nvcc" --version | grep -o 'V[0-9]*\.[0-9]*\.[0-9]*' | head -n1)
for source in "$here"/cuda/*.cu; do
  name=$(basename "$source" .cu)
  echo "nvcc $version: cuda/$name.cu -> ptx/$name.ptx"
  "$nvcc" -ptx -arch="$arch" -o "$here/ptx/$name.ptx" "$source"
  cmake -DFILE="$here/ptx/$name.ptx" -DVERSION="$isa" -P "$here/cmake/ptx_isa.cmake"
done
echo "$version" > "$here/ptx/NVCC_VERSION"
