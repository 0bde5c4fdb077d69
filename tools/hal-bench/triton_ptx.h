// Triton's kernels in the tree (tests/ptx_cpu/triton: sm_80 PTX from the pinned triton, and the
// launch each needs from its .json), embedded in hal-bench at build time (CMakeLists.txt
// generates triton_ptx.cpp), so that an installed hal-bench needs no source tree.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bench {

struct TritonPtx {
  const char* entry;      // the .entry's name
  const char* text;       // the PTX
  size_t size;            // its bytes
  uint32_t shared_bytes;  // the metadata's dynamic shared memory; the block is 128 threads
};

const TritonPtx& triton_softmax_rows();
const TritonPtx& triton_matmul_f16();
// The forward pass compiled with two pipeline stages (24 KiB of shared memory).
const TritonPtx& triton_flash_attention();

}  // namespace bench
