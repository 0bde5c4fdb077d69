// SIMD video instructions on the bytes or half-words of 32-bit registers: vabsdiff4, vadd4,
// vsub4, vmin4, vmax4 and their two-lane forms (nvcc emits vabsdiff4 and vabsdiff2 for
// __vabsdiffu4, __vsadu4 and __vsadu2).
//
//   vop.dtype.atype.btype{.sat} d, a, b, c     each lane of d from its lanes of a and b; with
//                                              .sat clamped to the lane range of dtype, else
//                                              truncated to it
//   vop.dtype.atype.btype.add   d, a, b, c     d = c + the sum of the lanes' untruncated results
//
// The lanes of a and b are sign- or zero-extended by atype and btype (.u32 or .s32). Only the
// default lane selections and mask are run (a's lanes with b's, every lane of d): a selector
// or mask on an operand, vavrg2/vavrg4 and the scalar video instructions are refused at load.
#include <algorithm>
#include <string>

#include "ptx_vm/decode.h"
#include "ptx_vm/ops_matrix.h"

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;
using O = ir::Opcode;
using T = ir::Type;

enum SimdOp : uint32_t { kAbsdiff, kAddLanes, kSubLanes, kMinLanes, kMaxLanes };

// Op layout: a[0] d, a[1] a, a[2] b, a[3] c; imm the SimdOp; flags bit 0 a signed, bit 1 b
// signed, bit 2 d signed, bit 3 .sat, bit 4 .add.
template <uint32_t kLanes>
void simd(Exec& x, const Op& op, uint32_t mask) {
  constexpr uint32_t kBits = 32 / kLanes;
  constexpr uint32_t kLaneMask = (1u << kBits) - 1;
  const bool a_signed = (op.flags & 1) != 0, b_signed = (op.flags & 2) != 0;
  const bool d_signed = (op.flags & 4) != 0, sat = (op.flags & 8) != 0;
  const bool accumulate = (op.flags & 16) != 0;
  const int64_t lo = d_signed ? -(int64_t{1} << (kBits - 1)) : 0;
  const int64_t hi = d_signed ? (int64_t{1} << (kBits - 1)) - 1 : int64_t{kLaneMask};
  const auto lane = [](uint32_t v, uint32_t i, bool is_signed) -> int64_t {
    const uint32_t bits = (v >> (i * kBits)) & kLaneMask;
    if (!is_signed || (bits >> (kBits - 1)) == 0) return bits;
    return static_cast<int64_t>(bits) - (int64_t{1} << kBits);
  };
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  const uint32_t* b = x.row<uint32_t>(op.a[2]);
  const uint32_t* c = x.row<uint32_t>(op.a[3]);
  for_lanes(mask, [&](uint32_t l) {
    uint32_t merged = 0;
    int64_t sum = 0;
    for (uint32_t i = 0; i < kLanes; ++i) {
      const int64_t va = lane(a[l], i, a_signed), vb = lane(b[l], i, b_signed);
      int64_t r = 0;
      switch (op.imm) {
        // clang-format off
        case kAbsdiff: r = va > vb ? va - vb : vb - va; break;
        case kAddLanes: r = va + vb; break;
        case kSubLanes: r = va - vb; break;
        case kMinLanes: r = std::min(va, vb); break;
        default: r = std::max(va, vb); break;
          // clang-format on
      }
      sum += r;
      if (sat) r = std::clamp(r, lo, hi);
      merged |= (static_cast<uint32_t>(r) & kLaneMask) << (i * kBits);
    }
    d[l] = accumulate ? static_cast<uint32_t>(static_cast<int64_t>(c[l]) + sum) : merged;
  });
}

}  // namespace

bool decode_simd(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  SimdOp which = kAbsdiff;
  uint32_t lanes = 4;
  switch (ins.opcode) {
    // clang-format off
    case O::kVabsdiff2: lanes = 2; [[fallthrough]];
    case O::kVabsdiff4: which = kAbsdiff; break;
    case O::kVadd2: lanes = 2; [[fallthrough]];
    case O::kVadd4: which = kAddLanes; break;
    case O::kVsub2: lanes = 2; [[fallthrough]];
    case O::kVsub4: which = kSubLanes; break;
    case O::kVmin2: lanes = 2; [[fallthrough]];
    case O::kVmin4: which = kMinLanes; break;
    case O::kVmax2: lanes = 2; [[fallthrough]];
    case O::kVmax4: which = kMaxLanes; break;
    // clang-format on
    default:
      return d.fail(std::string("'") + ir::opcode_name(ins.opcode) +
                    "' is not supported on the CPU PTX device");
  }
  if (!only_modifiers(d, ins, {M::kSat, M::kAdd})) return false;
  if (ins.mods.has(M::kSat) && ins.mods.has(M::kAdd)) {
    return d.fail(".sat cannot be used with the accumulating .add");
  }
  if (ins.types.size() != 3) return d.fail("takes three types: .dtype.atype.btype");
  for (T t : ins.types) {
    if (t != T::kU32 && t != T::kS32) return d.fail("the types are .u32 or .s32");
  }
  if (ins.operands.size() != 4) return d.fail("takes d, a, b and c");
  op.a[0] = d.destination(ins.operands[0], T::kB32);
  for (size_t i = 1; i < 4 && op.a[0] != kNoRef; ++i) {
    op.a[i] = d.source(ins.operands[i], T::kB32);
    if (op.a[i] == kNoRef) return false;
  }
  if (op.a[0] == kNoRef) return false;
  op.imm = which;
  op.flags =
      static_cast<uint8_t>((ins.types[1] == T::kS32 ? 1 : 0) | (ins.types[2] == T::kS32 ? 2 : 0) |
                           (ins.types[0] == T::kS32 ? 4 : 0) | (ins.mods.has(M::kSat) ? 8 : 0) |
                           (ins.mods.has(M::kAdd) ? 16 : 0));
  op.fn = lanes == 2 ? simd<2> : simd<4>;
  return true;
}

}  // namespace hal::ptx_vm
