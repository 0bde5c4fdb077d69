// Floating-point arithmetic (f32, f64, and f16/bf16 computed in f32 and rounded once to the
// result type) and comparisons. Vulkan's precision rules apply: add, sub, mul and conversions
// are correctly rounded; div, sqrt, rcp and the transcendental functions carry the errors that
// docs/PTX_ON_VULKAN.md lists. Rounding modes other than to-nearest are refused, not ignored.
#include <cstring>
#include <limits>

#include <spirv/unified1/GLSL.std.450.h>

#include "ptx_spirv/kernel.h"

namespace hal::ptx_spirv {

namespace {

using O = ir::Opcode;
using T = ir::Type;

bool directed_rounding(const ir::Instruction& ins) {
  return ins.mods.has(ir::Mod::kRz) || ins.mods.has(ir::Mod::kRm) || ins.mods.has(ir::Mod::kRp);
}

}  // namespace

// An f64 value rounded to f32 in the instruction's direction (.rz, .rm, .rp): rounded to
// nearest first (correctly, as Vulkan requires of OpFConvert), then moved one f32 step when that
// went the wrong way. Exact for add, sub and mul, whose f64 results are exact; for fma the f64
// sum is rounded once before, which can misplace a result only within 2^-29 of an f32 step.
uint32_t Kernel::round_directed(const ir::Instruction& ins, uint32_t wide) {
  const uint32_t d = f64(ins);
  const uint32_t nearest = b.op(spv::Op::OpFConvert, t_f32, {wide});
  const uint32_t back = b.op(spv::Op::OpFConvert, d, {nearest});
  const uint32_t bits = bitcast(t_u32, nearest);
  const uint32_t negative = b.op(spv::Op::OpSLessThan, t_bool, {bits, b.u32(0)});
  const uint32_t zero =
      b.op(spv::Op::OpIEqual, t_bool,
           {b.op(spv::Op::OpBitwiseAnd, t_u32, {bits, b.u32(0x7FFFFFFF)}), b.u32(0)});
  // One step towards +inf or -inf, in bits: a float's magnitude grows with its bits.
  const uint32_t plus = b.op(spv::Op::OpIAdd, t_u32, {bits, b.u32(1)});
  const uint32_t minus = b.op(spv::Op::OpISub, t_u32, {bits, b.u32(1)});
  const uint32_t up = select(t_u32, zero, b.u32(0x00000001), select(t_u32, negative, minus, plus));
  const uint32_t down =
      select(t_u32, zero, b.u32(0x80000001), select(t_u32, negative, plus, minus));
  const uint32_t above = b.op(spv::Op::OpFOrdGreaterThan, t_bool, {back, wide});
  const uint32_t below = b.op(spv::Op::OpFOrdLessThan, t_bool, {back, wide});
  uint32_t result = bits;
  if (ins.mods.has(ir::Mod::kRm)) {
    result = select(t_u32, above, down, bits);
  } else if (ins.mods.has(ir::Mod::kRp)) {
    result = select(t_u32, below, up, bits);
  } else {  // .rz: a step towards zero when the magnitude went up
    const uint32_t away = select(t_bool, negative, below, above);
    result = select(
        t_u32,
        b.op(spv::Op::OpLogicalAnd, t_bool, {away, b.op(spv::Op::OpLogicalNot, t_bool, {zero})}),
        minus, bits);
  }
  return bitcast(t_f32, result);
}

// a * b + c for f32, rounded once, as PTX's fma.rn.f32 is. Vulkan lets GLSL's Fma round the
// product and the sum separately (its precision is OpFMul's then OpFAdd's), and drivers do, which
// ruins the split-constant argument reductions of nvcc's math functions. In f64 the product is
// exact; the sum is rounded to odd there (rounded to nearest, then moved to the odd neighbour
// when inexact, its error found by TwoSum), and f64 has more than f32's 24 + 1 bits, so
// rounding that to f32 gives the correctly rounded fused result.
uint32_t Kernel::fused_f32(const ir::Instruction& ins, uint32_t x, uint32_t y, uint32_t addend) {
  const uint32_t d = f64(ins);
  auto wide = [&](uint32_t v) { return b.op(spv::Op::OpFConvert, d, {v}); };
  const uint32_t p = b.op(spv::Op::OpFMul, d, {wide(x), wide(y)});
  const uint32_t z = wide(addend);
  const uint32_t s = b.op(spv::Op::OpFAdd, d, {p, z});
  // TwoSum: s + e == p + z exactly (NaN when s is not finite: then nothing moves).
  const uint32_t bb = b.op(spv::Op::OpFSub, d, {s, p});
  const uint32_t e = b.op(spv::Op::OpFAdd, d,
                          {b.op(spv::Op::OpFSub, d, {p, b.op(spv::Op::OpFSub, d, {s, bb})}),
                           b.op(spv::Op::OpFSub, d, {z, bb})});
  for (uint32_t id : {p, s, bb, e}) b.decorate(id, spv::Decoration::NoContraction);
  const uint32_t zero = b.constant_float(64, 0);
  const uint32_t above = b.op(spv::Op::OpFOrdGreaterThan, t_bool, {e, zero});
  const uint32_t below = b.op(spv::Op::OpFOrdLessThan, t_bool, {e, zero});
  const uint32_t bits = bitcast(t_u64, s);
  const uint32_t even = b.op(spv::Op::OpIEqual, t_bool,
                             {b.op(spv::Op::OpBitwiseAnd, t_u64, {bits, b.u64(1)}), b.u64(0)});
  const uint32_t move = b.op(spv::Op::OpLogicalAnd, t_bool,
                             {even, b.op(spv::Op::OpLogicalOr, t_bool, {above, below})});
  // s is not zero when inexact; towards the true sum is up in magnitude when e has s's sign.
  const uint32_t positive = b.op(spv::Op::OpFOrdGreaterThan, t_bool, {s, zero});
  const uint32_t grow = b.op(spv::Op::OpLogicalEqual, t_bool, {above, positive});
  const uint32_t moved = select(t_u64, grow, b.op(spv::Op::OpIAdd, t_u64, {bits, b.u64(1)}),
                                b.op(spv::Op::OpISub, t_u64, {bits, b.u64(1)}));
  const uint32_t odd = bitcast(d, select(t_u64, move, moved, bits));
  return b.op(spv::Op::OpFConvert, t_f32, {odd});
}

bool Kernel::lower_float(const ir::Instruction& ins) {
  if (ins.types.empty()) return false;
  const T type = ins.types[0];
  if (!ir::is_float(type) || ins.opcode == O::kCvt || ins.opcode == O::kSetp ||
      ins.opcode == O::kSet || ins.opcode == O::kTestp || ins.opcode == O::kSelp ||
      ins.opcode == O::kMov) {
    return false;
  }
  if (type == T::kF16x2 || type == T::kBF16x2) {
    refuse(ins, "packed half-precision pairs (.f16x2, .bf16x2) are not translated yet");
  }
  if (type != T::kF32 && type != T::kF64 && type != T::kF16 && type != T::kBF16) {
    refuse(ins, std::string("arithmetic on .") + ir::type_name(type) + " is not supported");
  }
  if (type == T::kF64) f64(ins);
  const auto& ops = ins.operands;
  const uint32_t W = type == T::kF64 ? t_f64 : t_f32;
  auto arg = [&](size_t i) { return read(ins, ops.at(i), type); };
  auto need_ops = [&](size_t n) {
    if (ops.size() != n) invalid(ins, "wrong number of operands");
  };
  auto fconst = [&](double v) {
    if (W == t_f64) {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      return b.constant_float(64, bits);
    }
    const float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return b.constant_float(32, bits);
  };
  // .sat clamps to [0, 1], NaN to 0.
  auto saturate = [&](uint32_t v) {
    if (!ins.mods.has(ir::Mod::kSat)) return v;
    const uint32_t clamped = glsl(W, GLSLstd450NClamp, {v, fconst(0), fconst(1)});
    return select(W, b.op(spv::Op::OpIsNan, t_bool, {v}), fconst(0), clamped);
  };
  auto out = [&](uint32_t v) { write(ins, ops.at(0), type, saturate(v)); };
  auto no_directed = [&] {
    if (directed_rounding(ins)) {
      refuse(ins, "rounding modes other than to-nearest (.rn) have no Vulkan counterpart");
    }
  };

  switch (ins.opcode) {
    case O::kAdd:
    case O::kSub:
    case O::kMul: {
      need_ops(3);
      const spv::Op op = ins.opcode == O::kAdd   ? spv::Op::OpFAdd
                         : ins.opcode == O::kSub ? spv::Op::OpFSub
                                                 : spv::Op::OpFMul;
      if (directed_rounding(ins) && type == T::kF32) {
        const uint32_t d = f64(ins);
        const uint32_t wide =
            b.op(op, d,
                 {b.op(spv::Op::OpFConvert, d, {arg(1)}), b.op(spv::Op::OpFConvert, d, {arg(2)})});
        out(round_directed(ins, wide));
        return true;
      }
      no_directed();
      out(b.op(op, W, {arg(1), arg(2)}));
      return true;
    }
    case O::kFma:
    case O::kMad: {
      need_ops(4);
      if (directed_rounding(ins) && type == T::kF32) {
        // a * b is exact in f64; the sum is rounded once there, then directed to f32.
        const uint32_t d = f64(ins);
        auto wide = [&](size_t i) { return b.op(spv::Op::OpFConvert, d, {arg(i)}); };
        const uint32_t product = b.op(spv::Op::OpFMul, d, {wide(1), wide(2)});
        out(round_directed(ins, b.op(spv::Op::OpFAdd, d, {product, wide(3)})));
        return true;
      }
      no_directed();
      if (type == T::kF32 && target_.float64) {
        out(fused_f32(ins, arg(1), arg(2), arg(3)));
        return true;
      }
      out(glsl(W, GLSLstd450Fma, {arg(1), arg(2), arg(3)}));
      return true;
    }
    case O::kDiv:
      need_ops(3);
      no_directed();
      out(b.op(spv::Op::OpFDiv, W, {arg(1), arg(2)}));
      return true;
    case O::kRcp:
      need_ops(2);
      no_directed();
      out(b.op(spv::Op::OpFDiv, W, {fconst(1), arg(1)}));
      return true;
    case O::kSqrt:
      need_ops(2);
      no_directed();
      out(glsl(W, GLSLstd450Sqrt, {arg(1)}));
      return true;
    case O::kRsqrt:
      need_ops(2);
      out(glsl(W, GLSLstd450InverseSqrt, {arg(1)}));
      return true;
    case O::kEx2:
    case O::kLg2:
    case O::kSin:
    case O::kCos:
    case O::kTanh: {
      need_ops(2);
      if (W == t_f64) refuse(ins, "f64 transcendental functions are not supported");
      const uint32_t which = ins.opcode == O::kEx2   ? GLSLstd450Exp2
                             : ins.opcode == O::kLg2 ? GLSLstd450Log2
                             : ins.opcode == O::kSin ? GLSLstd450Sin
                             : ins.opcode == O::kCos ? GLSLstd450Cos
                                                     : GLSLstd450Tanh;
      out(glsl(W, which, {arg(1)}));
      return true;
    }
    case O::kAbs:
      need_ops(2);
      out(glsl(W, GLSLstd450FAbs, {arg(1)}));
      return true;
    case O::kNeg:
      need_ops(2);
      out(b.op(spv::Op::OpFNegate, W, {arg(1)}));
      return true;
    case O::kMin:
    case O::kMax: {
      need_ops(3);
      const uint32_t a = arg(1), c = arg(2);
      // PTX's min and max return the other operand when one is NaN, as NMin and NMax do; with
      // .NaN a NaN operand gives NaN.
      uint32_t r = glsl(W, ins.opcode == O::kMin ? GLSLstd450NMin : GLSLstd450NMax, {a, c});
      if (ins.mods.has(ir::Mod::kNaN)) {
        const uint32_t any_nan =
            b.op(spv::Op::OpLogicalOr, t_bool,
                 {b.op(spv::Op::OpIsNan, t_bool, {a}), b.op(spv::Op::OpIsNan, t_bool, {c})});
        r = select(W, any_nan, fconst(std::numeric_limits<double>::quiet_NaN()), r);
      }
      if (ins.mods.has(ir::Mod::kXorsign) || ins.mods.has(ir::Mod::kAbs)) {
        refuse(ins, "min and max with .xorsign.abs are not supported");
      }
      out(r);
      return true;
    }
    case O::kCopysign: {
      need_ops(3);
      if (type != T::kF32 && type != T::kF64) return false;
      // copysign d, a, b: b's magnitude with a's sign.
      const uint32_t size = ir::type_size(type);
      const uint32_t BW = size == 8 ? t_u64 : t_u32;
      const uint64_t sign_bit = size == 8 ? 0x8000000000000000ull : 0x80000000ull;
      auto k = [&](uint64_t v) { return size == 8 ? b.u64(v) : b.u32(static_cast<uint32_t>(v)); };
      const uint32_t a = read_bits(ins, ops[1], size), c = read_bits(ins, ops[2], size);
      const uint32_t r = b.op(spv::Op::OpBitwiseOr, BW,
                              {b.op(spv::Op::OpBitwiseAnd, BW, {a, k(sign_bit)}),
                               b.op(spv::Op::OpBitwiseAnd, BW, {c, k(sign_bit - 1)})});
      write_bits(ins, ops[0], size, r, false);
      return true;
    }
    default:
      return false;
  }
}

// setp, set and testp; selp lives with the integer instructions (it only moves bits).
bool Kernel::lower_compare(const ir::Instruction& ins) {
  if (ins.opcode != O::kSetp && ins.opcode != O::kSet && ins.opcode != O::kTestp) return false;
  const auto& ops = ins.operands;
  if (ins.opcode == O::kTestp) {
    if (ins.types.size() != 1 || ops.size() != 2)
      invalid(ins, "testp takes a type and two operands");
    const T type = ins.types[0];
    if (type != T::kF32 && type != T::kF64) return false;
    const uint32_t size = ir::type_size(type);
    const uint32_t BW = size == 8 ? t_u64 : t_u32;
    auto k = [&](uint64_t v) { return size == 8 ? b.u64(v) : b.u32(static_cast<uint32_t>(v)); };
    const uint64_t exponent_mask = size == 8 ? 0x7FF0000000000000ull : 0x7F800000ull;
    const uint32_t bits = read_bits(ins, ops[1], size);
    const uint32_t magnitude = b.op(spv::Op::OpBitwiseAnd, BW,
                                    {bits, k(size == 8 ? 0x7FFFFFFFFFFFFFFFull : 0x7FFFFFFFull)});
    const uint32_t exponent = b.op(spv::Op::OpBitwiseAnd, BW, {bits, k(exponent_mask)});
    uint32_t r = 0;
    if (ins.mods.has(ir::Mod::kFinite)) {
      r = b.op(spv::Op::OpULessThan, t_bool, {magnitude, k(exponent_mask)});
    } else if (ins.mods.has(ir::Mod::kInfinite)) {
      r = b.op(spv::Op::OpIEqual, t_bool, {magnitude, k(exponent_mask)});
    } else if (ins.mods.has(ir::Mod::kNumber)) {
      r = b.op(spv::Op::OpULessThanEqual, t_bool, {magnitude, k(exponent_mask)});
    } else if (ins.mods.has(ir::Mod::kNotanumber)) {
      r = b.op(spv::Op::OpUGreaterThan, t_bool, {magnitude, k(exponent_mask)});
    } else if (ins.mods.has(ir::Mod::kNormal)) {
      r = b.op(spv::Op::OpLogicalAnd, t_bool,
               {b.op(spv::Op::OpINotEqual, t_bool, {exponent, k(0)}),
                b.op(spv::Op::OpINotEqual, t_bool, {exponent, k(exponent_mask)})});
    } else if (ins.mods.has(ir::Mod::kSubnormal)) {
      r = b.op(spv::Op::OpLogicalAnd, t_bool,
               {b.op(spv::Op::OpIEqual, t_bool, {exponent, k(0)}),
                b.op(spv::Op::OpINotEqual, t_bool, {magnitude, k(0)})});
    } else {
      invalid(ins, "testp needs a property");
    }
    write(ins, ops[0], T::kPred, r);
    return true;
  }

  // setp.cmp[.bool].type p[|q], a, b[, c]; set.cmp[.bool].dtype.stype d, a, b[, c].
  const bool is_set = ins.opcode == O::kSet;
  if (ins.types.size() != (is_set ? 2u : 1u)) invalid(ins, "wrong number of types");
  const T type = ins.types[is_set ? 1 : 0];
  if (type == T::kF16x2 || type == T::kBF16x2)
    refuse(ins, "packed half-precision comparisons are not translated yet");
  const bool has_bool =
      ins.mods.has(ir::Mod::kAnd) || ins.mods.has(ir::Mod::kOr) || ins.mods.has(ir::Mod::kXor);
  if (ops.size() != (has_bool ? 4u : 3u)) invalid(ins, "wrong number of operands");
  const uint32_t a = read(ins, ops[1], type), c = read(ins, ops[2], type);
  const bool is_f = ir::is_float(type);
  const bool sign = ir::is_signed(type);
  using M = ir::Mod;
  spv::Op op = spv::Op::OpNop;
  bool negate_nan = false;  // num / nan
  if (is_f) {
    if (ins.mods.has(M::kEq))
      op = spv::Op::OpFOrdEqual;
    else if (ins.mods.has(M::kNe))
      op = spv::Op::OpFOrdNotEqual;
    else if (ins.mods.has(M::kLt))
      op = spv::Op::OpFOrdLessThan;
    else if (ins.mods.has(M::kLe))
      op = spv::Op::OpFOrdLessThanEqual;
    else if (ins.mods.has(M::kGt))
      op = spv::Op::OpFOrdGreaterThan;
    else if (ins.mods.has(M::kGe))
      op = spv::Op::OpFOrdGreaterThanEqual;
    else if (ins.mods.has(M::kEqu))
      op = spv::Op::OpFUnordEqual;
    else if (ins.mods.has(M::kNeu))
      op = spv::Op::OpFUnordNotEqual;
    else if (ins.mods.has(M::kLtu))
      op = spv::Op::OpFUnordLessThan;
    else if (ins.mods.has(M::kLeu))
      op = spv::Op::OpFUnordLessThanEqual;
    else if (ins.mods.has(M::kGtu))
      op = spv::Op::OpFUnordGreaterThan;
    else if (ins.mods.has(M::kGeu))
      op = spv::Op::OpFUnordGreaterThanEqual;
    else if (ins.mods.has(M::kNum))
      negate_nan = true;
    else if (ins.mods.has(M::kNan))
      op = spv::Op::OpNop;
    else
      invalid(ins, "a comparison needs an operator");
  } else if (type == T::kPred) {
    if (ins.mods.has(M::kEq))
      op = spv::Op::OpLogicalEqual;
    else if (ins.mods.has(M::kNe))
      op = spv::Op::OpLogicalNotEqual;
    else
      refuse(ins, "only eq and ne compare predicates");
  } else {
    if (ins.mods.has(M::kEq))
      op = spv::Op::OpIEqual;
    else if (ins.mods.has(M::kNe))
      op = spv::Op::OpINotEqual;
    else if (ins.mods.has(M::kLt))
      op = sign ? spv::Op::OpSLessThan : spv::Op::OpULessThan;
    else if (ins.mods.has(M::kLe))
      op = sign ? spv::Op::OpSLessThanEqual : spv::Op::OpULessThanEqual;
    else if (ins.mods.has(M::kGt))
      op = sign ? spv::Op::OpSGreaterThan : spv::Op::OpUGreaterThan;
    else if (ins.mods.has(M::kGe))
      op = sign ? spv::Op::OpSGreaterThanEqual : spv::Op::OpUGreaterThanEqual;
    else if (ins.mods.has(M::kLo))
      op = spv::Op::OpULessThan;
    else if (ins.mods.has(M::kLs))
      op = spv::Op::OpULessThanEqual;
    else if (ins.mods.has(M::kHi))
      op = spv::Op::OpUGreaterThan;
    else if (ins.mods.has(M::kHs))
      op = spv::Op::OpUGreaterThanEqual;
    else
      invalid(ins, "a comparison needs an operator");
  }
  uint32_t r = 0;
  if (is_f && (negate_nan || op == spv::Op::OpNop)) {
    const uint32_t any_nan =
        b.op(spv::Op::OpLogicalOr, t_bool,
             {b.op(spv::Op::OpIsNan, t_bool, {a}), b.op(spv::Op::OpIsNan, t_bool, {c})});
    r = negate_nan ? b.op(spv::Op::OpLogicalNot, t_bool, {any_nan}) : any_nan;
  } else {
    r = b.op(op, t_bool, {a, c});
  }
  uint32_t r2 = 0;
  if (has_bool) {
    const uint32_t p = read_predicate(ins, ops[3]);
    const spv::Op combine = ins.mods.has(M::kAnd)  ? spv::Op::OpLogicalAnd
                            : ins.mods.has(M::kOr) ? spv::Op::OpLogicalOr
                                                   : spv::Op::OpLogicalNotEqual;
    r2 = b.op(combine, t_bool, {b.op(spv::Op::OpLogicalNot, t_bool, {r}), p});
    r = b.op(combine, t_bool, {r, p});
  }
  if (is_set) {
    const T dtype = ins.types[0];
    if (dtype == T::kF32) {
      write(ins, ops[0], dtype,
            select(t_f32, r, b.constant_float(32, 0x3F800000u), b.constant_float(32, 0)));
    } else if (!ir::is_float(dtype) && ir::type_size(dtype) == 4) {
      write(ins, ops[0], dtype, select(t_u32, r, b.u32(0xFFFFFFFFu), b.u32(0)));
    } else {
      refuse(ins, "set with this destination type is not supported");
    }
    return true;
  }
  const ir::Operand& d = ops[0];
  if (d.kind == ir::OperandKind::kRegister) {
    write_predicate(ins, d.reg, r);
    if (d.has_reg2) {
      if (r2 == 0) r2 = b.op(spv::Op::OpLogicalNot, t_bool, {r});
      write_predicate(ins, d.reg2, r2);
    }
  } else if (d.kind != ir::OperandKind::kSink) {
    invalid(ins, "setp writes a predicate register");
  }
  return true;
}

}  // namespace hal::ptx_spirv
