// SIMD video instructions on the bytes or half-words of 32-bit registers: vabsdiff, vadd, vsub,
// vmin and vmax in their four- and two-lane forms, as the CPU PTX device runs them (its
// ops_simd.cpp): each lane of a and b extended by atype and btype, the lane's result truncated
// (or with .sat clamped) to the lane; with .add, d = c + the sum of the untruncated results.
// Lane selectors and masks are not part of the IR these come in (the front end takes none).
#include "ptx_spirv/kernel.h"

namespace hal::ptx_spirv {

namespace {

using O = ir::Opcode;
using T = ir::Type;

}  // namespace

bool Kernel::lower_simd(const ir::Instruction& ins) {
  uint32_t lanes = 4;
  O which = ins.opcode;
  switch (ins.opcode) {
    case O::kVabsdiff2:
    case O::kVadd2:
    case O::kVsub2:
    case O::kVmin2:
    case O::kVmax2:
      lanes = 2;
      break;
    case O::kVabsdiff4:
    case O::kVadd4:
    case O::kVsub4:
    case O::kVmin4:
    case O::kVmax4:
      break;
    default:
      return false;
  }
  if (ins.types.size() != 3 || ins.operands.size() != 4) {
    invalid(ins, "a SIMD video instruction takes .dtype.atype.btype and d, a, b, c");
  }
  for (T t : ins.types) {
    if (t != T::kU32 && t != T::kS32) invalid(ins, "SIMD video types are .u32 or .s32");
  }
  const bool sat = ins.mods.has(ir::Mod::kSat), accumulate = ins.mods.has(ir::Mod::kAdd);
  if (sat && accumulate) invalid(ins, ".sat and .add do not go together");
  const bool d_signed = ins.types[0] == T::kS32, a_signed = ins.types[1] == T::kS32,
             b_signed = ins.types[2] == T::kS32;
  const uint32_t bits = 32 / lanes;
  const uint32_t a = read(ins, ins.operands[1], T::kB32), c = read(ins, ins.operands[2], T::kB32);
  auto lane = [&](uint32_t v, uint32_t i, bool is_signed) {
    return b.op(is_signed ? spv::Op::OpBitFieldSExtract : spv::Op::OpBitFieldUExtract, t_u32,
                {v, b.u32(i * bits), b.u32(bits)});
  };
  // Lane values and results are at most 17 bits with their sign: 32-bit arithmetic is exact.
  const int32_t lo = d_signed ? -(1 << (bits - 1)) : 0;
  const int32_t hi = d_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  uint32_t merged = b.u32(0), sum = b.u32(0);
  for (uint32_t i = 0; i < lanes; ++i) {
    const uint32_t va = lane(a, i, a_signed), vb = lane(c, i, b_signed);
    auto less = [&](uint32_t x, uint32_t y) { return b.op(spv::Op::OpSLessThan, t_bool, {x, y}); };
    uint32_t r = 0;
    switch (which) {
      case O::kVabsdiff2:
      case O::kVabsdiff4:
        r = select(t_u32, less(va, vb), b.op(spv::Op::OpISub, t_u32, {vb, va}),
                   b.op(spv::Op::OpISub, t_u32, {va, vb}));
        break;
      case O::kVadd2:
      case O::kVadd4:
        r = b.op(spv::Op::OpIAdd, t_u32, {va, vb});
        break;
      case O::kVsub2:
      case O::kVsub4:
        r = b.op(spv::Op::OpISub, t_u32, {va, vb});
        break;
      case O::kVmin2:
      case O::kVmin4:
        r = select(t_u32, less(va, vb), va, vb);
        break;
      default:
        r = select(t_u32, less(va, vb), vb, va);
        break;
    }
    sum = b.op(spv::Op::OpIAdd, t_u32, {sum, r});
    if (sat) {
      const uint32_t low = b.u32(static_cast<uint32_t>(lo)),
                     high = b.u32(static_cast<uint32_t>(hi));
      r = select(t_u32, less(r, low), low, select(t_u32, less(high, r), high, r));
    }
    merged = b.op(spv::Op::OpBitFieldInsert, t_u32, {merged, r, b.u32(i * bits), b.u32(bits)});
  }
  const uint32_t result =
      accumulate ? b.op(spv::Op::OpIAdd, t_u32, {read(ins, ins.operands[3], T::kB32), sum})
                 : merged;
  write(ins, ins.operands[0], T::kB32, result);
  return true;
}

}  // namespace hal::ptx_spirv
