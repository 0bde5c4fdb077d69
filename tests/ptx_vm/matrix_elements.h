// The element types of the matrix instruction tests (matrix_test.cpp, wmma_test.cpp) and their
// sizes in memory.
#pragma once

#include <cstdint>

namespace ptx_vm_test {

enum class Elem { kF16, kBF16, kTF32, kF32, kF64, kS8, kU8, kS32 };

inline uint32_t elem_bytes(Elem e) {
  switch (e) {
    case Elem::kF16:
    case Elem::kBF16:
      return 2;
    case Elem::kS8:
    case Elem::kU8:
      return 1;
    case Elem::kF64:
      return 8;
    default:
      return 4;
  }
}

}  // namespace ptx_vm_test
