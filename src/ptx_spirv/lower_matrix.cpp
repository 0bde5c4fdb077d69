// The tensor-core instructions Triton's and nvcc's sm_80 kernels are built from, as warp
// exchanges and f32 arithmetic, with the results the CPU PTX device gives
// (src/ptx_vm/ops_matrix.cpp):
//  - mma.sync.aligned.m16n8k16 and .m16n8k8, .row.col, f16 or bf16 inputs, f32 accumulators;
//  - ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16.
//
// Fragments are laid out as PTX ISA's "Matrix Fragments for mma" sections give them, in
// groupID g = lane / 4 and threadID_in_group t = lane % 4. A lane computes its own four
// accumulators D[g or g + 8][2t or 2t + 1]: it reads the A row and B column elements it needs
// from the lanes holding them, one exchange per source register (warp_exchange), and sums in
// k order, D = (((C + p_0) + p_1) + ... + p_{K-1}), each product exact in f32 (at most 11
// significant bits per factor) and each addition rounded to nearest even, as the CPU PTX
// device sums. A NaN result is the canonical NaN 0x7fffffff.
//
// ldmatrix: each lane publishes the row address it gives (lanes 8j to 8j + 7 give the rows of
// matrix j), then reads the word of row g at column 2t (or, with .trans, the two halves of rows
// 2t and 2t + 1 at column g) from shared memory.
//
// Like every warp instruction these need the whole warp (.sync.aligned): through workgroup
// memory they are refused in divergent code like the others (uniformity.h).
#include "ptx_spirv/kernel.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace hal::ptx_spirv {

namespace {

using T = ir::Type;

// The registers of a vector operand ("{%r1, %r2}"), or the one register.
std::vector<const ir::Operand*> registers_of(const ir::Operand& o) {
  std::vector<const ir::Operand*> out;
  if (o.kind == ir::OperandKind::kVector) {
    for (const ir::Operand& e : o.elements) out.push_back(&e);
  } else {
    out.push_back(&o);
  }
  return out;
}

// The lane's groupID (lane / 4) and threadID_in_group (lane % 4), as u32 values.
std::pair<uint32_t, uint32_t> quad_of(Kernel& k) {
  const uint32_t lane = k.lane();
  return {k.b.op(spv::Op::OpShiftRightLogical, k.t_u32, {lane, k.b.u32(2)}),
          k.b.op(spv::Op::OpBitwiseAnd, k.t_u32, {lane, k.b.u32(3)})};
}

}  // namespace

void Kernel::lower_mma(const ir::Instruction& ins) {
  const bool k16 = ins.shape_m == 16 && ins.shape_n == 8 && ins.shape_k == 16;
  const bool k8 = ins.shape_m == 16 && ins.shape_n == 8 && ins.shape_k == 8;
  if (!k16 && !k8) {
    refuse(ins, "only the m16n8k16 and m16n8k8 shapes of mma translate to Vulkan yet");
  }
  if (ins.types.size() != 4 || ins.operands.size() != 4) {
    invalid(ins, "mma takes .d.a.b.c types and the d, a, b and c operands");
  }
  const T in = ins.types[1];
  if (ins.types[0] != T::kF32 || ins.types[3] != T::kF32 || ins.types[2] != in ||
      (in != T::kF16 && in != T::kBF16)) {
    refuse(ins, "only f16 or bf16 inputs with f32 accumulators translate to Vulkan yet");
  }
  if (!ins.mods.has(ir::Mod::kRow) || !ins.mods.has(ir::Mod::kCol)) {
    invalid(ins, "mma.sync with these shapes takes .row.col");
  }
  const uint32_t k_depth = ins.shape_k;
  const std::vector<const ir::Operand*> d = registers_of(ins.operands[0]);
  const std::vector<const ir::Operand*> a = registers_of(ins.operands[1]);
  const std::vector<const ir::Operand*> bv = registers_of(ins.operands[2]);
  const std::vector<const ir::Operand*> c = registers_of(ins.operands[3]);
  if (d.size() != 4 || c.size() != 4 || a.size() != k_depth / 4 || bv.size() != k_depth / 8) {
    invalid(ins, "mma's fragments have the wrong number of registers for its shape");
  }
  const uint32_t u = t_u32;
  const auto [g, t] = quad_of(*this);
  auto add = [&](uint32_t x, uint32_t y) { return b.op(spv::Op::OpIAdd, u, {x, y}); };
  auto half_of = [&](uint32_t word, uint32_t which) {
    const uint32_t bits = which == 0 ? b.op(spv::Op::OpBitwiseAnd, u, {word, b.u32(0xFFFF)})
                                     : b.op(spv::Op::OpShiftRightLogical, u, {word, b.u32(16)});
    return in == T::kF16 ? f16_to_f32(bits) : bf16_to_f32(bits);
  };
  // A: register j of lane (g', t') holds row g' (+8 for odd j), columns 2t', 2t' + 1 (+8 for
  // j >= 2). Row r's words come from lanes 4 * (r % 8) + q, q = 0..3.
  // a_rows[h][k]: A[g + 8h][k] as f32.
  std::array<std::array<uint32_t, 16>, 2> a_rows{};
  const uint32_t row_lane = b.op(spv::Op::OpShiftLeftLogical, u, {g, b.u32(2)});
  for (uint32_t j = 0; j < a.size(); ++j) {
    const uint32_t handle = warp_exchange(read(ins, *a[j], T::kB32));
    const uint32_t h = j & 1, k_base = (j >= 2 ? 8 : 0);
    for (uint32_t q = 0; q < 4; ++q) {
      const uint32_t word = warp_exchanged(handle, add(row_lane, b.u32(q)));
      a_rows[h][k_base + 2 * q] = half_of(word, 0);
      a_rows[h][k_base + 2 * q + 1] = half_of(word, 1);
    }
  }
  // B: register j of lane (g', t') holds column g', rows 2t', 2t' + 1 (+8 for j = 1). Column
  // n's words come from lanes 4n + q. b_cols[e][k]: B[k][2t + e] as f32.
  std::array<std::array<uint32_t, 16>, 2> b_cols{};
  for (uint32_t j = 0; j < bv.size(); ++j) {
    const uint32_t handle = warp_exchange(read(ins, *bv[j], T::kB32));
    for (uint32_t e = 0; e < 2; ++e) {
      const uint32_t column = add(b.op(spv::Op::OpShiftLeftLogical, u, {t, b.u32(1)}), b.u32(e));
      const uint32_t col_lane = b.op(spv::Op::OpShiftLeftLogical, u, {column, b.u32(2)});
      for (uint32_t q = 0; q < 4; ++q) {
        const uint32_t word = warp_exchanged(handle, add(col_lane, b.u32(q)));
        b_cols[e][8 * j + 2 * q] = half_of(word, 0);
        b_cols[e][8 * j + 2 * q + 1] = half_of(word, 1);
      }
    }
  }
  // Every source is read before any destination is written: D may alias A, B or C.
  std::array<uint32_t, 4> results{};
  for (uint32_t i = 0; i < 4; ++i) {
    uint32_t sum = read(ins, *c[i], T::kF32);
    for (uint32_t k = 0; k < k_depth; ++k) {
      const uint32_t product = b.op(spv::Op::OpFMul, t_f32, {a_rows[i >> 1][k], b_cols[i & 1][k]});
      sum = b.op(spv::Op::OpFAdd, t_f32, {sum, product});
    }
    const uint32_t nan = b.op(spv::Op::OpIsNan, t_bool, {sum});
    results[i] = select(u, nan, b.u32(0x7FFFFFFFu), bitcast(u, sum));
  }
  for (uint32_t i = 0; i < 4; ++i) write(ins, *d[i], T::kB32, results[i]);
}

void Kernel::lower_ldmatrix(const ir::Instruction& ins) {
  if (ins.shape_m != 8 || ins.shape_n != 8 || ins.types.size() != 1 ||
      ir::type_size(ins.types[0]) != 2) {
    refuse(ins, "only ldmatrix .m8n8 .b16 translates to Vulkan yet");
  }
  if (ins.operands.size() != 2) invalid(ins, "ldmatrix takes d and an address");
  const std::vector<const ir::Operand*> d = registers_of(ins.operands[0]);
  const uint32_t count = ins.fragments == 0 ? 1 : ins.fragments;
  if (d.size() != count || (count != 1 && count != 2 && count != 4)) {
    invalid(ins, "ldmatrix's .x1, .x2 or .x4 names that many registers");
  }
  const ir::Space space = ins.mods.has(ir::Mod::kShared) ? ir::Space::kShared : ir::Space::kNone;
  const ResolvedAddress at = resolve_address(ins, ins.operands[1], space);
  if (at.param || at.space != AddressSpace::kShared) {
    refuse(ins, "ldmatrix reads shared memory; this address is not traced to it");
  }
  const bool trans = ins.mods.has(ir::Mod::kTrans);
  const uint32_t u = t_u32;
  const auto [g, t] = quad_of(*this);
  auto add = [&](uint32_t x, uint32_t y) { return b.op(spv::Op::OpIAdd, u, {x, y}); };
  auto shared_at = [&](uint32_t offset, uint32_t bytes) {
    ResolvedAddress where = at;
    where.value = offset;
    where.offset = 0;
    return load(ins, where, bytes);
  };
  const uint32_t handle = warp_exchange(at.value);
  std::vector<uint32_t> words;
  for (uint32_t j = 0; j < count; ++j) {
    if (!trans) {
      // Row g of matrix j, the word at column 2t.
      const uint32_t row = warp_exchanged(handle, add(b.u32(8 * j), g));
      words.push_back(shared_at(add(row, b.op(spv::Op::OpShiftLeftLogical, u, {t, b.u32(2)})), 4));
      continue;
    }
    // Column g of rows 2t and 2t + 1: the halves at byte 2g of each.
    const uint32_t first = add(b.u32(8 * j), b.op(spv::Op::OpShiftLeftLogical, u, {t, b.u32(1)}));
    const uint32_t column = b.op(spv::Op::OpShiftLeftLogical, u, {g, b.u32(1)});
    const uint32_t lo = shared_at(add(warp_exchanged(handle, first), column), 2);
    const uint32_t hi = shared_at(add(warp_exchanged(handle, add(first, b.u32(1))), column), 2);
    words.push_back(b.op(spv::Op::OpBitwiseOr, u,
                         {b.op(spv::Op::OpBitwiseAnd, u, {lo, b.u32(0xFFFF)}),
                          b.op(spv::Op::OpShiftLeftLogical, u,
                               {b.op(spv::Op::OpBitwiseAnd, u, {hi, b.u32(0xFFFF)}), b.u32(16)})}));
  }
  // Every row is read before any register is written: the address may be a destination.
  for (uint32_t j = 0; j < count; ++j) write(ins, *d[j], T::kB32, words[j]);
}

}  // namespace hal::ptx_spirv
