// wmma (what CUDA's nvcuda::wmma API compiles to), with the fragments laid out as on every hal
// device (ptx/wmma_layout.h) and the results the CPU PTX device gives (src/ptx_vm/ops_wmma.cpp):
//  - wmma.load.{a,b,c} and wmma.store.d, .row or .col, from global or shared memory (or generic
//    addresses traced to them), with or without a stride;
//  - wmma.mma with f16 multiplicands and f16 or f32 accumulators, bf16 and tf32 with f32, s8 and
//    u8 with s32 (.satfinite too), on every shape PTX defines for them.
// f64 wmma is refused: its steps are fused multiply-adds in a chosen rounding mode, which
// Vulkan does not guarantee in f64.
//
// A load or store moves each lane's own elements: no lane waits for another. wmma.mma is the
// product mma.sync uses (lower_matrix.cpp) on wmma's layouts: each lane reads the A and B
// elements of its accumulators from the lanes holding them and sums in k order, every product
// exact in f32 and every addition rounded to nearest even, as the CPU PTX device sums; integers
// wrap, or with .satfinite clamp the exact sum.
//
// Like every warp instruction these need the whole warp (.sync.aligned): through workgroup
// memory they are refused in divergent code like the others (uniformity.h).
#include "ptx_spirv/kernel.h"

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ptx/wmma_layout.h"

namespace hal::ptx_spirv {

namespace {

using T = ir::Type;
using ptx::WmmaFragment;
using ptx::WmmaRole;

constexpr uint32_t kLanes = 32;

uint32_t log2_of(uint32_t power_of_two) {
  uint32_t log = 0;
  while ((1u << log) < power_of_two) ++log;
  return log;
}

// The operation words (.load.a, .store.d, .mma), which the front end keeps as unknown
// modifiers; a word after them is one it does not know (such as the sub-byte types .s4, .b1).
std::string operation_of(const ir::Instruction& ins, std::string* unknown) {
  const std::vector<std::string>& words = ins.unknown_mods;
  const bool memory = !words.empty() && (words[0] == "load" || words[0] == "store");
  const size_t used = words.empty() ? 0 : memory ? 2 : 1;
  if (words.size() > used) *unknown = words[used];
  std::string operation;
  for (size_t i = 0; i < words.size() && i < used; ++i) operation += "." + words[i];
  return operation;
}

}  // namespace

void Kernel::lower_wmma(const ir::Instruction& ins) {
  std::string unknown;
  const std::string operation = operation_of(ins, &unknown);
  if (!unknown.empty()) refuse(ins, "modifier '." + unknown + "' is not supported");
  if (!ins.mods.has(ir::Mod::kSync) || !ins.mods.has(ir::Mod::kAligned)) {
    invalid(ins, "wmma needs .sync.aligned");
  }
  if (operation == ".load.a") return lower_wmma_memory(ins, WmmaRole::kA, true);
  if (operation == ".load.b") return lower_wmma_memory(ins, WmmaRole::kB, true);
  if (operation == ".load.c") return lower_wmma_memory(ins, WmmaRole::kAccumulator, true);
  if (operation == ".store.d") return lower_wmma_memory(ins, WmmaRole::kAccumulator, false);
  if (operation == ".mma") return lower_wmma_mma(ins);
  invalid(ins, "wmma needs .load.a, .load.b, .load.c, .store.d or .mma");
}

void Kernel::lower_wmma_memory(const ir::Instruction& ins, ptx::WmmaRole role, bool is_load) {
  const std::string name = is_load ? "wmma.load" : "wmma.store";
  if (ins.mods.has(ir::Mod::kRow) == ins.mods.has(ir::Mod::kCol)) {
    invalid(ins, name + " needs one layout, .row or .col");
  }
  if (ins.types.size() != 1) invalid(ins, name + " takes one type");
  const T type = ins.types[0];
  const uint32_t m = ins.shape_m, n = ins.shape_n, k = ins.shape_k;
  bool fits = false;
  if (type == T::kF64) refuse(ins, "f64 wmma does not translate to Vulkan");
  if (role == WmmaRole::kAccumulator) {
    // C and D go with the multiplicands' shapes: f16 and s32 with f16's, f32 with tf32's too.
    fits = (type == T::kF16 || type == T::kF32 || type == T::kS32) &&
           (ptx::wmma_shape_defined(T::kF16, m, n, k) ||
            (type == T::kF32 && ptx::wmma_shape_defined(T::kTF32, m, n, k)));
  } else {
    fits = type != T::kF32 && type != T::kS32 && ptx::wmma_shape_defined(type, m, n, k);
  }
  if (!fits) {
    invalid(ins, name + " of this type and shape is not one PTX defines");
  }
  if (ins.operands.size() != 2 && ins.operands.size() != 3) {
    invalid(ins, is_load ? "wmma.load takes registers, an address and an optional stride"
                         : "wmma.store takes an address, registers and an optional stride");
  }
  const WmmaFragment f = ptx::wmma_fragment(role, m, n, k, type == T::kF16);
  const uint32_t per = elements_per_register(type), bytes = 4 / per;
  const std::vector<const ir::Operand*> regs = registers_of(ins.operands[is_load ? 0 : 1]);
  if (regs.size() != f.per_lane / per) {
    invalid(ins, name + "'s fragment has the wrong number of registers for its type and shape");
  }
  const ir::Space space = ins.mods.has(ir::Mod::kGlobal)   ? ir::Space::kGlobal
                          : ins.mods.has(ir::Mod::kShared) ? ir::Space::kShared
                                                           : ir::Space::kNone;
  const ResolvedAddress at = resolve_address(ins, ins.operands[is_load ? 1 : 0], space);
  if (at.param || at.space == AddressSpace::kLocal) {
    refuse(ins, name + " accesses global or shared memory");
  }
  const uint32_t u = t_u32;
  const bool col_major = ins.mods.has(ir::Mod::kCol);
  const uint32_t stride = ins.operands.size() == 3 ? read(ins, ins.operands[2], T::kU32)
                                                   : b.u32(col_major ? f.rows : f.cols);
  // Lane l's first element, in row-major order: (l % H) * E.
  const uint32_t first =
      b.op(spv::Op::OpIMul, u,
           {b.op(spv::Op::OpUMod, u, {lane(), b.u32(f.holders())}), b.u32(f.per_lane)});
  auto element_at = [&](uint32_t i) {  // the address of the lane's element i
    const uint32_t index = b.op(spv::Op::OpIAdd, u, {first, b.u32(i)});
    const uint32_t row = b.op(spv::Op::OpShiftRightLogical, u, {index, b.u32(log2_of(f.cols))});
    const uint32_t col = b.op(spv::Op::OpBitwiseAnd, u, {index, b.u32(f.cols - 1)});
    const uint32_t major = col_major ? col : row, minor = col_major ? row : col;
    const uint32_t offset =
        b.op(spv::Op::OpIMul, u,
             {b.op(spv::Op::OpIAdd, u, {b.op(spv::Op::OpIMul, u, {major, stride}), minor}),
              b.u32(bytes)});
    ResolvedAddress where = at;
    where.value =
        at.space == AddressSpace::kGlobal
            ? b.op(spv::Op::OpIAdd, t_u64, {at.value, b.op(spv::Op::OpUConvert, t_u64, {offset})})
            : b.op(spv::Op::OpIAdd, u, {at.value, offset});
    return where;
  };
  const uint32_t element_mask = bytes == 4 ? 0xFFFFFFFFu : (1u << (8 * bytes)) - 1;
  if (is_load) {
    std::vector<uint32_t> words;
    for (uint32_t r = 0; r < regs.size(); ++r) {
      uint32_t word = b.u32(0);
      for (uint32_t j = 0; j < per; ++j) {
        uint32_t v = load(ins, element_at(r * per + j), bytes);
        if (bytes < 4) v = b.op(spv::Op::OpBitwiseAnd, u, {v, b.u32(element_mask)});
        word = j == 0
                   ? v
                   : b.op(spv::Op::OpBitwiseOr, u,
                          {word, b.op(spv::Op::OpShiftLeftLogical, u, {v, b.u32(8 * bytes * j)})});
      }
      words.push_back(word);
    }
    // Every element is read before any register is written: the address may be a destination.
    for (uint32_t r = 0; r < regs.size(); ++r) write_bits(ins, *regs[r], 4, words[r], false);
    return;
  }
  std::vector<uint32_t> words;
  for (const ir::Operand* reg : regs) words.push_back(read_bits(ins, *reg, 4));
  auto store_all = [&] {
    for (uint32_t r = 0; r < regs.size(); ++r) {
      for (uint32_t j = 0; j < per; ++j) {
        uint32_t v = words[r];
        if (j > 0) v = b.op(spv::Op::OpShiftRightLogical, u, {v, b.u32(8 * bytes * j)});
        if (bytes < 4) v = b.op(spv::Op::OpBitwiseAnd, u, {v, b.u32(element_mask)});
        store(ins, element_at(r * per + j), bytes, v);
      }
    }
  };
  warp_memory_writes(store_all);
}

void Kernel::lower_wmma_mma(const ir::Instruction& ins) {
  for (ir::Mod mod : {ir::Mod::kRn, ir::Mod::kRz, ir::Mod::kRm, ir::Mod::kRp}) {
    if (ins.mods.has(mod)) refuse(ins, "f64 wmma does not translate to Vulkan");
  }
  if (!ins.mods.has(ir::Mod::kRow) && !ins.mods.has(ir::Mod::kCol)) {
    invalid(ins, "wmma.mma needs the layouts of A and B (.row or .col each)");
  }
  // The types: .dtype.ctype for f16 multiplicands, .dtype.atype.btype.ctype for the others.
  const std::vector<T>& t = ins.types;
  T in = T::kF16, c_type = T::kF32, d_type = T::kF32;
  bool ok = false, a_signed = false, b_signed = false;
  const auto is_int8 = [](T type) { return type == T::kS8 || type == T::kU8; };
  if (t.size() == 2) {
    d_type = t[0];
    c_type = t[1];
    ok = (d_type == T::kF16 || d_type == T::kF32) && (c_type == T::kF16 || c_type == T::kF32);
  } else if (t.size() == 4 && is_int8(t[1]) && is_int8(t[2])) {
    in = T::kS8;
    a_signed = t[1] == T::kS8;
    b_signed = t[2] == T::kS8;
    d_type = c_type = T::kS32;
    ok = t[0] == T::kS32 && t[3] == T::kS32;
  } else if (t.size() == 4 && t[1] == t[2]) {
    if (t[1] == T::kF64) refuse(ins, "f64 wmma does not translate to Vulkan");
    in = t[1];
    ok = (in == T::kBF16 || in == T::kTF32) && t[0] == T::kF32 && t[3] == T::kF32;
  }
  const uint32_t m = ins.shape_m, n = ins.shape_n, k = ins.shape_k;
  if (!ok || !ptx::wmma_shape_defined(in, m, n, k)) {
    invalid(ins, "wmma.mma of these types and shape is not one PTX defines");
  }
  const bool saturate = ins.mods.has(ir::Mod::kSatfinite);
  if (saturate && in != T::kS8) invalid(ins, ".satfinite applies only to integer wmma.mma");
  if (ins.operands.size() != 4) invalid(ins, "wmma.mma takes four operands: d, a, b, c");
  // The layouts as tables, for the product that mma.sync shares (lower_matrix.cpp).
  const bool f16_in = in == T::kF16;
  ptx::MatrixFragment tables[3];
  const WmmaRole roles[3] = {WmmaRole::kA, WmmaRole::kB, WmmaRole::kAccumulator};
  for (int i = 0; i < 3; ++i) {
    const WmmaFragment f = ptx::wmma_fragment(roles[i], m, n, k, f16_in && i < 2);
    tables[i].count = static_cast<uint8_t>(f.per_lane);
    for (uint32_t l = 0; l < kLanes; ++l) {
      for (uint32_t e = 0; e < f.per_lane; ++e) {
        tables[i].index[l][e] = static_cast<uint16_t>(f.index(l, e));
      }
    }
  }
  MatrixProduct p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = &tables[0];
  p.b = &tables[1];
  p.c = &tables[2];
  p.in = in;
  p.a_signed = a_signed;
  p.b_signed = b_signed;
  p.c_type = c_type;
  p.d_type = d_type;
  p.satfinite = saturate;
  matrix_product(ins, p);
}

}  // namespace hal::ptx_spirv
