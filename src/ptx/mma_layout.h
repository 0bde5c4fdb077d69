// Where mma.sync's fragments keep their elements: the layouts of PTX ISA's "Matrix Fragments
// for mma.mXnYkZ" sections as tables, one source for the CPU PTX device
// (src/ptx_vm/ops_matrix.cpp) and the Vulkan translation (src/ptx_spirv/lower_matrix.cpp), and
// which layout each form of mma.sync that hal runs uses.
//
// Thread-safety: the tables are built once, on first use, and immutable afterwards.
#pragma once

#include <cstdint>

#include "ptx/ir.h"

namespace hal::ptx {

inline constexpr uint32_t kMatrixLanes = 32;

// Where each lane's fragment elements sit in a dense row-major matrix (row * cols + col),
// element i of lane l at index[l][i]. Registers hold elements low to high: element i is in
// register i / per_register, at position i % per_register.
struct MatrixFragment {
  uint8_t count = 0;  // elements per lane
  uint16_t index[kMatrixLanes][16] = {};
};

struct MmaShape {
  uint8_t m = 0, n = 0, k = 0;
  MatrixFragment a, b, c;  // c also describes D
};

// The fragment layouts PTX defines, one per distinct arrangement.
enum class MmaLayout : uint8_t {
  kM16N8K16Half,  // f16, bf16
  kM16N8K8Half,
  kM16N8K8Tf32,  // tf32, and f64 (sm_90)
  kM16N8K4Tf32,  // tf32, and f64 (sm_90)
  kM16N8K16F64,
  kM16N8K16Int8,
  kM16N8K32Int8,
  kM8N8K16Int8,
  kM8N8K4F64,
  kCount
};

const MmaShape& mma_shape(MmaLayout layout);

// The layout of mma.sync.aligned.mMnNkK.row.col.<d>.<a>.<b>.<c>, or kCount for a form hal does
// not run: m16n8k16 f16 (C and D f16 or f32, any combination), bf16 -> f32, s8/u8 -> s32;
// m16n8k8 f16 (C and D of one type), bf16 and tf32 -> f32; m16n8k4 tf32 -> f32; m16n8k32 and
// m8n8k16 s8/u8 -> s32; f64 on m8n8k4, m16n8k4, m16n8k8 and m16n8k16.
MmaLayout mma_layout(uint32_t m, uint32_t n, uint32_t k, ir::Type d, ir::Type a, ir::Type b,
                     ir::Type c);

}  // namespace hal::ptx
