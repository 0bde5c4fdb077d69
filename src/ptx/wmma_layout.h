// Where wmma's fragments keep their elements: one layout for every hal device that runs wmma
// (the CPU PTX device, src/ptx_vm/ops_wmma.cpp, and the Vulkan translation,
// src/ptx_spirv/lower_wmma.cpp), so that both give the same registers for the same matrix.
//
// PTX leaves the layout to the implementation: a program may apply one operation to every
// element of a fragment but may not count on which lane holds which element. hal's: a fragment
// of a rows x cols matrix (A: M x K, B: K x N, C and D: M x N) with E elements per lane holds in
// lane l the elements (l % H) * E to (l % H) * E + E - 1 of the matrix in row-major order,
// H = rows * cols / E. Where the warp holds more than the matrix (f16 A and B: 16 elements a
// lane, as PTX's eight registers of two halves), lane l and lane l + H hold the same ones.
// Registers hold their elements low to high.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "ptx/ir.h"

namespace hal::ptx {

enum class WmmaRole : uint8_t { kA, kB, kAccumulator };  // the accumulator: C and D

struct WmmaFragment {
  uint32_t rows = 0, cols = 0, per_lane = 0;
  // The lanes holding distinct elements (H above).
  constexpr uint32_t holders() const { return rows * cols / per_lane; }
  // The row-major index of element i (0 <= i < per_lane) held by lane |lane|.
  constexpr uint32_t index(uint32_t lane, uint32_t i) const {
    return (lane % holders()) * per_lane + i;
  }
};

// The fragment of |role| for shape m, n, k; |f16_multiplicand|: an A or B of f16 elements.
constexpr WmmaFragment wmma_fragment(WmmaRole role, uint32_t m, uint32_t n, uint32_t k,
                                     bool f16_multiplicand) {
  WmmaFragment f;
  f.rows = role == WmmaRole::kB ? k : m;
  f.cols = role == WmmaRole::kA ? k : n;
  f.per_lane = f16_multiplicand && role != WmmaRole::kAccumulator ? 16 : f.rows * f.cols / 32;
  return f;
}

// Whether m, n, k is a shape wmma defines for multiplicands of |type|: m16n16k16, m32n8k16 and
// m8n32k16 for f16, bf16, s8 and u8; m16n16k8 for tf32; m8n8k4 for f64.
constexpr bool wmma_shape_defined(ir::Type multiplicand, uint32_t m, uint32_t n, uint32_t k) {
  switch (multiplicand) {
    case ir::Type::kTF32:
      return m == 16 && n == 16 && k == 8;
    case ir::Type::kF64:
      return m == 8 && n == 8 && k == 4;
    case ir::Type::kF16:
    case ir::Type::kBF16:
    case ir::Type::kS8:
    case ir::Type::kU8:
      return k == 16 && ((m == 16 && n == 16) || (m == 32 && n == 8) || (m == 8 && n == 32));
    default:
      return false;
  }
}

}  // namespace hal::ptx
