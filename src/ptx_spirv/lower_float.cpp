// Floating-point arithmetic (f32, f64, and f16/bf16 computed in f32 and rounded once to the
// result type) and comparisons. Vulkan's precision rules apply: add, sub, mul and conversions
// are correctly rounded; div, sqrt, rcp and the transcendental functions carry the errors that
// docs/PTX_ON_VULKAN.md lists. Rounding modes other than to-nearest are refused, not ignored.
#include <cmath>
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

namespace {

// p + z in f64, rounded to odd: rounded to nearest, then moved to the odd neighbour when
// inexact (the error found by TwoSum). Rounding that once more, to a format with at least two
// bits fewer, gives the exact sum correctly rounded, as if rounded once.
uint32_t odd_sum(Kernel& k, uint32_t d, uint32_t p, uint32_t z) {
  Builder& b = k.b;
  const uint32_t s = b.op(spv::Op::OpFAdd, d, {p, z});
  // TwoSum: s + e == p + z exactly (NaN when s is not finite: then nothing moves).
  const uint32_t bb = b.op(spv::Op::OpFSub, d, {s, p});
  const uint32_t e = b.op(spv::Op::OpFAdd, d,
                          {b.op(spv::Op::OpFSub, d, {p, b.op(spv::Op::OpFSub, d, {s, bb})}),
                           b.op(spv::Op::OpFSub, d, {z, bb})});
  for (uint32_t id : {s, bb, e}) b.decorate(id, spv::Decoration::NoContraction);
  const uint32_t zero = b.constant_float(64, 0);
  const uint32_t above = b.op(spv::Op::OpFOrdGreaterThan, k.t_bool, {e, zero});
  const uint32_t below = b.op(spv::Op::OpFOrdLessThan, k.t_bool, {e, zero});
  const uint32_t bits = k.bitcast(k.t_u64, s);
  const uint32_t even = b.op(spv::Op::OpIEqual, k.t_bool,
                             {b.op(spv::Op::OpBitwiseAnd, k.t_u64, {bits, b.u64(1)}), b.u64(0)});
  const uint32_t move = b.op(spv::Op::OpLogicalAnd, k.t_bool,
                             {even, b.op(spv::Op::OpLogicalOr, k.t_bool, {above, below})});
  // s is not zero when inexact; towards the true sum is up in magnitude when e has s's sign.
  const uint32_t positive = b.op(spv::Op::OpFOrdGreaterThan, k.t_bool, {s, zero});
  const uint32_t grow = b.op(spv::Op::OpLogicalEqual, k.t_bool, {above, positive});
  const uint32_t moved = k.select(k.t_u64, grow, b.op(spv::Op::OpIAdd, k.t_u64, {bits, b.u64(1)}),
                                  b.op(spv::Op::OpISub, k.t_u64, {bits, b.u64(1)}));
  return k.bitcast(d, k.select(k.t_u64, move, moved, bits));
}

}  // namespace

// The sum |sum| of f64 |x| and |y| with IEEE's sign for an exact zero under .rm: -0 unless both
// are +0 (x + (-x) is -0 when rounding down). Rounding to nearest, as f64 adds, gives +0; the
// other directed modes keep that.
uint32_t Kernel::signed_zero_sum(const ir::Instruction& ins, uint32_t x, uint32_t y, uint32_t sum) {
  if (!ins.mods.has(ir::Mod::kRm)) return sum;
  const uint64_t sign = 0x8000000000000000ull;
  const uint32_t signs = b.op(spv::Op::OpBitwiseOr, t_u64, {bitcast(t_u64, x), bitcast(t_u64, y)});
  const uint32_t negative_zero =
      b.op(spv::Op::OpBitwiseOr, t_u64,
           {bitcast(t_u64, sum), b.op(spv::Op::OpBitwiseAnd, t_u64, {signs, b.u64(sign)})});
  const uint32_t zero = b.op(spv::Op::OpFOrdEqual, t_bool, {sum, b.constant_float(64, 0)});
  return bitcast(f64(ins), select(t_u64, zero, negative_zero, bitcast(t_u64, sum)));
}

namespace {

// An f64 rounded to odd as an f32: rounded to nearest (OpFConvert, correctly rounded), then
// moved one step towards the f64 when inexact and even. An f32 overflow stays infinite, which
// every narrower format rounds the same way.
uint32_t odd_f32(Kernel& k, uint32_t d, uint32_t wide) {
  Builder& b = k.b;
  const uint32_t nearest = b.op(spv::Op::OpFConvert, k.t_f32, {wide});
  const uint32_t back = b.op(spv::Op::OpFConvert, d, {nearest});
  const uint32_t bits = k.bitcast(k.t_u32, nearest);
  const uint32_t inexact = b.op(spv::Op::OpFOrdNotEqual, k.t_bool, {back, wide});
  const uint32_t even = b.op(spv::Op::OpIEqual, k.t_bool,
                             {b.op(spv::Op::OpBitwiseAnd, k.t_u32, {bits, b.u32(1)}), b.u32(0)});
  const uint32_t finite =
      b.op(spv::Op::OpINotEqual, k.t_bool,
           {b.op(spv::Op::OpBitwiseAnd, k.t_u32, {bits, b.u32(0x7F800000u)}), b.u32(0x7F800000u)});
  const uint32_t move = b.op(spv::Op::OpLogicalAnd, k.t_bool,
                             {b.op(spv::Op::OpLogicalAnd, k.t_bool, {inexact, even}), finite});
  // A float's magnitude grows with its bits: towards |wide| is +1 when |nearest| fell short.
  const uint32_t short_of =
      b.op(spv::Op::OpFOrdLessThan, k.t_bool,
           {k.glsl(d, GLSLstd450FAbs, {back}), k.glsl(d, GLSLstd450FAbs, {wide})});
  const uint32_t moved =
      k.select(k.t_u32, short_of, b.op(spv::Op::OpIAdd, k.t_u32, {bits, b.u32(1)}),
               b.op(spv::Op::OpISub, k.t_u32, {bits, b.u32(1)}));
  return k.bitcast(k.t_f32, k.select(k.t_u32, move, moved, bits));
}

}  // namespace

// a * b + c for f32, rounded once, as PTX's fma.rn.f32 is. Vulkan lets GLSL's Fma round the
// product and the sum separately (its precision is OpFMul's then OpFAdd's), and drivers do, which
// ruins the split-constant argument reductions of nvcc's math functions. In f64 the product is
// exact; the sum is rounded to odd there, and f64 has more than f32's 24 + 1 bits, so rounding
// that to f32 gives the correctly rounded fused result.
uint32_t Kernel::fused_f32(const ir::Instruction& ins, uint32_t x, uint32_t y, uint32_t addend) {
  const uint32_t d = f64(ins);
  auto wide = [&](uint32_t v) { return b.op(spv::Op::OpFConvert, d, {v}); };
  const uint32_t p = b.op(spv::Op::OpFMul, d, {wide(x), wide(y)});
  b.decorate(p, spv::Decoration::NoContraction);
  return b.op(spv::Op::OpFConvert, t_f32, {odd_sum(*this, d, p, wide(addend))});
}

// The same for f16 and bf16 operands: the product of two is exact in f64, the sum rounded to
// odd in f64 and again in f32 (rounding to odd twice is rounding to odd once), so that the
// final rounding to the 11- or 8-bit format, by from_working, is the only one that counts.
uint32_t Kernel::fused_half(const ir::Instruction& ins, uint32_t x, uint32_t y, uint32_t addend) {
  const uint32_t d = f64(ins);
  auto wide = [&](uint32_t v) { return b.op(spv::Op::OpFConvert, d, {v}); };
  const uint32_t p = b.op(spv::Op::OpFMul, d, {wide(x), wide(y)});
  b.decorate(p, spv::Decoration::NoContraction);
  return odd_f32(*this, d, odd_sum(*this, d, p, wide(addend)));
}

bool Kernel::lower_float(const ir::Instruction& ins) {
  if (ins.types.empty()) return false;
  const T type = ins.types[0];
  if (!ir::is_float(type) || ins.opcode == O::kCvt || ins.opcode == O::kSetp ||
      ins.opcode == O::kSet || ins.opcode == O::kTestp || ins.opcode == O::kSelp ||
      ins.opcode == O::kMov) {
    return false;
  }
  if (type == T::kF16 || type == T::kBF16 || type == T::kF16x2 || type == T::kBF16x2) {
    if (lower_half(ins)) return true;
    if (type == T::kF16x2 || type == T::kBF16x2) {
      refuse(ins, std::string(ir::opcode_name(ins.opcode)) +
                      " on packed half-precision pairs is not translated yet");
    }
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
        // The product is exact in f64; a sum is not when the exponents lie far apart (1 +
        // 2^-149), so it is rounded to odd there, which keeps the side of the exact sum it lies
        // on for the directed rounding to f32.
        const uint32_t d = f64(ins);
        const uint32_t x = b.op(spv::Op::OpFConvert, d, {arg(1)});
        uint32_t y = b.op(spv::Op::OpFConvert, d, {arg(2)});
        if (op == spv::Op::OpFMul) {
          out(round_directed(ins, b.op(op, d, {x, y})));
          return true;
        }
        if (op == spv::Op::OpFSub) y = b.op(spv::Op::OpFNegate, d, {y});
        out(round_directed(ins, signed_zero_sum(ins, x, y, odd_sum(*this, d, x, y))));
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
        const uint32_t addend = wide(3);
        out(round_directed(
            ins, signed_zero_sum(ins, product, addend, odd_sum(*this, d, product, addend))));
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

// f16 and bf16, scalar and in pairs (each half on its own, the low one in the low bits), as the
// CPU PTX device computes them: each value widened to f32 exactly (.ftz first flushing the
// format's subnormals), the operation done in f32, and the result rounded to nearest even to
// the format, NaN the canonical NaN, .ftz flushing subnormal results. f32 has more than twice
// the formats' precision, so add, sub and mul, correctly rounded in f32 as Vulkan requires,
// round to the format as if once; fma is rounded once by way of f64 (fused_half).
bool Kernel::lower_half(const ir::Instruction& ins) {
  const T type = ins.types[0];
  const bool pair = type == T::kF16x2 || type == T::kBF16x2;
  const T format = type == T::kF16 || type == T::kF16x2 ? T::kF16 : T::kBF16;
  const bool f16 = format == T::kF16;
  size_t arity = 0;
  switch (ins.opcode) {
    case O::kAdd:
    case O::kSub:
    case O::kMul:
    case O::kMin:
    case O::kMax:
      arity = 2;
      break;
    case O::kFma:
    case O::kMad:
      arity = 3;
      break;
    case O::kNeg:
    case O::kAbs:
      arity = 1;
      break;
    default:
      return false;
  }
  const auto& ops = ins.operands;
  if (ops.size() != arity + 1) invalid(ins, "wrong number of operands");
  if (directed_rounding(ins)) {
    refuse(ins, "half-precision arithmetic rounds to nearest (.rn) only");
  }
  const bool is_fma = ins.opcode == O::kFma || ins.opcode == O::kMad;
  const bool min_max = ins.opcode == O::kMin || ins.opcode == O::kMax;
  if (ins.mods.has(ir::Mod::kRelu) && !is_fma) {
    refuse(ins, ".relu is translated on half-precision fma only");
  }
  const bool ftz = ins.mods.has(ir::Mod::kFtz);
  const bool sat = ins.mods.has(ir::Mod::kSat) && !min_max;
  const bool relu = ins.mods.has(ir::Mod::kRelu);
  const bool xorsign = ins.mods.has(ir::Mod::kXorsign) || ins.mods.has(ir::Mod::kAbs);
  if (xorsign && !(ins.mods.has(ir::Mod::kXorsign) && ins.mods.has(ir::Mod::kAbs) && min_max)) {
    invalid(ins, ".xorsign and .abs go together, on min and max");
  }
  const uint32_t f = t_f32;
  auto fconst = [&](float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return b.constant_float(32, bits);
  };
  auto as_bits = [&](uint32_t v) { return bitcast(t_u32, v); };
  auto sign_of = [&](uint32_t v) {
    return b.op(spv::Op::OpBitwiseAnd, t_u32, {as_bits(v), b.u32(0x80000000u)});
  };
  auto is_nan = [&](uint32_t v) { return b.op(spv::Op::OpIsNan, t_bool, {v}); };
  // .ftz on an operand: f16 flushes below its smallest normal, 2^-14; a bf16 subnormal is an f32
  // one.
  auto flush_in = [&](uint32_t v) {
    if (!ftz) return v;
    const uint32_t tiny =
        f16 ? b.op(spv::Op::OpFOrdLessThan, t_bool,
                   {glsl(f, GLSLstd450FAbs, {v}), fconst(0x1p-14f)})
            : b.op(
                  spv::Op::OpIEqual, t_bool,
                  {b.op(spv::Op::OpBitwiseAnd, t_u32, {as_bits(v), b.u32(0x7F800000u)}), b.u32(0)});
    return select(f, tiny, bitcast(f, sign_of(v)), v);
  };
  // The operands' halves as f32: [operand][half].
  std::vector<std::vector<uint32_t>> in(arity);
  for (size_t i = 0; i < arity; ++i) {
    if (pair) {
      const uint32_t bits = read_bits(ins, ops[i + 1], 4);
      const uint32_t lo = b.op(spv::Op::OpBitwiseAnd, t_u32, {bits, b.u32(0xFFFF)});
      const uint32_t hi = b.op(spv::Op::OpShiftRightLogical, t_u32, {bits, b.u32(16)});
      in[i] = {flush_in(to_working(lo, format)), flush_in(to_working(hi, format))};
    } else {
      in[i] = {flush_in(read(ins, ops[i + 1], format))};
    }
  }
  // min and max as the CPU PTX device orders: a NaN operand gives the other (.NaN: NaN), -0
  // below +0.
  auto min_max_of = [&](uint32_t x, uint32_t y) {
    const bool is_min = ins.opcode == O::kMin;
    const uint32_t x_first =
        b.op(is_min ? spv::Op::OpFOrdLessThan : spv::Op::OpFOrdGreaterThan, t_bool, {x, y});
    const uint32_t x_negative = b.op(spv::Op::OpINotEqual, t_bool, {sign_of(x), b.u32(0)});
    const uint32_t equal = b.op(spv::Op::OpFOrdEqual, t_bool, {x, y});
    const uint32_t tie = is_min ? select(f, x_negative, x, y) : select(f, x_negative, y, x);
    uint32_t r = select(f, equal, tie, select(f, x_first, x, y));
    r = select(f, is_nan(y), x, r);
    r = select(f, is_nan(x), y, r);
    if (ins.mods.has(ir::Mod::kNaN)) {
      r = select(f, b.op(spv::Op::OpLogicalOr, t_bool, {is_nan(x), is_nan(y)}), fconst(NAN), r);
    }
    return r;
  };
  auto compute = [&](size_t h) {
    auto a = [&](size_t i) { return in[i][h]; };
    switch (ins.opcode) {
      case O::kAdd:
        return b.op(spv::Op::OpFAdd, f, {a(0), a(1)});
      case O::kSub:
        return b.op(spv::Op::OpFSub, f, {a(0), a(1)});
      case O::kMul:
        return b.op(spv::Op::OpFMul, f, {a(0), a(1)});
      case O::kNeg:
        return b.op(spv::Op::OpFNegate, f, {a(0)});
      case O::kAbs:
        return glsl(f, GLSLstd450FAbs, {a(0)});
      case O::kMin:
      case O::kMax: {
        if (!xorsign) return min_max_of(a(0), a(1));
        // Of the magnitudes, with the operands' signs XORed unless the result is NaN.
        const uint32_t r =
            min_max_of(glsl(f, GLSLstd450FAbs, {a(0)}), glsl(f, GLSLstd450FAbs, {a(1)}));
        const uint32_t sign = b.op(spv::Op::OpBitwiseXor, t_u32, {sign_of(a(0)), sign_of(a(1))});
        return select(f, is_nan(r), r,
                      bitcast(f, b.op(spv::Op::OpBitwiseOr, t_u32, {as_bits(r), sign})));
      }
      default: {  // fma
        if (target_.float64) return fused_half(ins, a(0), a(1), a(2));
        // Without f64, f32's fma: the product is exact, the sum rounded twice.
        return glsl(f, GLSLstd450Fma, {a(0), a(1), a(2)});
      }
    }
  };
  auto finish = [&](uint32_t r) {
    if (relu) {
      // max(r, +0): negative results and -0 become +0, NaN stays.
      const uint32_t negative = b.op(spv::Op::OpINotEqual, t_bool, {sign_of(r), b.u32(0)});
      const uint32_t clamp = b.op(spv::Op::OpLogicalAnd, t_bool,
                                  {negative, b.op(spv::Op::OpLogicalNot, t_bool, {is_nan(r)})});
      r = select(f, clamp, fconst(0), r);
    }
    if (sat) {
      // [+0, 1]: NaN, negatives and -0 give +0.
      const uint32_t above = b.op(spv::Op::OpFOrdGreaterThan, t_bool, {r, fconst(0)});
      const uint32_t below_one = b.op(spv::Op::OpFOrdLessThan, t_bool, {r, fconst(1)});
      r = select(f, above, select(f, below_one, r, fconst(1)), fconst(0));
    }
    uint32_t bits = from_working(r, format);
    // .ftz on the result; the CPU PTX device's half fma flushes f16 results only.
    if (ftz && (f16 || !is_fma)) {
      const uint32_t exponent = b.u32(f16 ? 0x7C00 : 0x7F80);
      const uint32_t subnormal =
          b.op(spv::Op::OpIEqual, t_bool,
               {b.op(spv::Op::OpBitwiseAnd, t_u32, {bits, exponent}), b.u32(0)});
      bits =
          select(t_u32, subnormal, b.op(spv::Op::OpBitwiseAnd, t_u32, {bits, b.u32(0x8000)}), bits);
    }
    return bits;
  };
  uint32_t bits = finish(compute(0));
  if (pair) {
    bits = b.op(spv::Op::OpBitwiseOr, t_u32,
                {bits, b.op(spv::Op::OpShiftLeftLogical, t_u32, {finish(compute(1)), b.u32(16)})});
  }
  write_bits(ins, ops[0], pair ? 4 : 2, bits, false);
  return true;
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

  // setp.cmp[.bool].type p[|q], a, b[, c]; set.cmp[.bool].dtype.stype d, a, b[, c]. Pairs
  // compare half by half: setp's p from the low halves and q from the high ones, set's halves of
  // d each from their own.
  const bool is_set = ins.opcode == O::kSet;
  if (ins.types.size() != (is_set ? 2u : 1u)) invalid(ins, "wrong number of types");
  const T type = ins.types[is_set ? 1 : 0];
  const bool pair = type == T::kF16x2 || type == T::kBF16x2;
  const T element = type == T::kF16x2 ? T::kF16 : type == T::kBF16x2 ? T::kBF16 : type;
  const bool has_bool =
      ins.mods.has(ir::Mod::kAnd) || ins.mods.has(ir::Mod::kOr) || ins.mods.has(ir::Mod::kXor);
  if (ops.size() != (has_bool ? 4u : 3u)) invalid(ins, "wrong number of operands");
  // .ftz on f16 and f32: subnormal operands compare as zero (below 2^-14 for f16, 2^-126 for
  // f32).
  const bool flush = ins.mods.has(ir::Mod::kFtz) && (element == T::kF16 || element == T::kF32);
  auto values = [&](const ir::Operand& operand) -> std::vector<uint32_t> {
    std::vector<uint32_t> out;
    if (pair) {
      const uint32_t bits = read_bits(ins, operand, 4);
      out = {to_working(b.op(spv::Op::OpBitwiseAnd, t_u32, {bits, b.u32(0xFFFF)}), element),
             to_working(b.op(spv::Op::OpShiftRightLogical, t_u32, {bits, b.u32(16)}), element)};
    } else {
      out = {read(ins, operand, type)};
    }
    if (flush) {
      const uint32_t smallest_normal =
          b.constant_float(32, element == T::kF16 ? 0x38800000u : 0x00800000u);
      for (uint32_t& v : out) {
        const uint32_t tiny = b.op(spv::Op::OpFOrdLessThan, t_bool,
                                   {glsl(t_f32, GLSLstd450FAbs, {v}), smallest_normal});
        v = select(t_f32, tiny, b.constant_float(32, 0), v);
      }
    }
    return out;
  };
  const std::vector<uint32_t> a = values(ops[1]), c = values(ops[2]);
  const bool is_f = ir::is_float(element);
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
  auto compare = [&](uint32_t x, uint32_t y) {
    if (is_f && (negate_nan || op == spv::Op::OpNop)) {
      const uint32_t any_nan =
          b.op(spv::Op::OpLogicalOr, t_bool,
               {b.op(spv::Op::OpIsNan, t_bool, {x}), b.op(spv::Op::OpIsNan, t_bool, {y})});
      return negate_nan ? b.op(spv::Op::OpLogicalNot, t_bool, {any_nan}) : any_nan;
    }
    return b.op(op, t_bool, {x, y});
  };
  uint32_t p = 0;  // the predicate operand of the boolean combination
  spv::Op combine = spv::Op::OpNop;
  if (has_bool) {
    p = read_predicate(ins, ops[3]);
    combine = ins.mods.has(M::kAnd)  ? spv::Op::OpLogicalAnd
              : ins.mods.has(M::kOr) ? spv::Op::OpLogicalOr
                                     : spv::Op::OpLogicalNotEqual;
  }
  auto combined = [&](uint32_t r) { return has_bool ? b.op(combine, t_bool, {r, p}) : r; };
  std::vector<uint32_t> r;
  for (size_t i = 0; i < a.size(); ++i) r.push_back(compare(a[i], c[i]));
  if (is_set) {
    const T dtype = ins.types[0];
    auto value = [&](uint32_t holds, uint32_t one) {
      return select(t_u32, combined(holds), b.u32(one), b.u32(0));
    };
    if (pair) {
      // The pair's own type (1.0 in each half where true) or .u32/.s32 (all ones).
      uint32_t one = 0xFFFF;
      if (dtype == type) {
        one = type == T::kF16x2 ? 0x3C00 : 0x3F80;
      } else if (dtype != T::kU32 && dtype != T::kS32) {
        refuse(ins, "set with this destination type is not supported");
      }
      const uint32_t bits = b.op(spv::Op::OpBitwiseOr, t_u32,
                                 {value(r[0], one), b.op(spv::Op::OpShiftLeftLogical, t_u32,
                                                         {value(r[1], one), b.u32(16)})});
      write_bits(ins, ops[0], 4, bits, false);
    } else if (dtype == T::kF32) {
      write_bits(ins, ops[0], 4, value(r[0], 0x3F800000u), false);
    } else if (dtype == T::kF16 || dtype == T::kBF16) {
      write_bits(ins, ops[0], 2, value(r[0], dtype == T::kF16 ? 0x3C00 : 0x3F80), false);
    } else if (!ir::is_float(dtype) && (ir::type_size(dtype) == 4 || ir::type_size(dtype) == 2)) {
      const uint32_t size = ir::type_size(dtype);
      write_bits(ins, ops[0], size, value(r[0], size == 4 ? 0xFFFFFFFFu : 0xFFFFu), false);
    } else {
      refuse(ins, "set with this destination type is not supported");
    }
    return true;
  }
  const ir::Operand& d = ops[0];
  if (d.kind == ir::OperandKind::kRegister) {
    write_predicate(ins, d.reg, combined(r[0]));
    if (d.has_reg2) {
      // The second predicate: the high halves' comparison, or the first's complement.
      const uint32_t second = pair ? r[1] : b.op(spv::Op::OpLogicalNot, t_bool, {r[0]});
      write_predicate(ins, d.reg2, combined(second));
    }
  } else if (d.kind != ir::OperandKind::kSink) {
    invalid(ins, "setp writes a predicate register");
  }
  return true;
}

}  // namespace hal::ptx_spirv
