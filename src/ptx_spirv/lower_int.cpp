// Integer arithmetic, logic, shifts and bit manipulation. Results where PTX defines what SPIR-V
// leaves undefined (shifts by the width or more, division by zero, bfe and bfi fields past the
// width) are computed explicitly, giving the CPU PTX device's results.
#include <spirv/unified1/GLSL.std.450.h>

#include "ptx_spirv/kernel.h"

namespace hal::ptx_spirv {

namespace {

using O = ir::Opcode;
using T = ir::Type;

T widened(T type) {
  switch (type) {
    case T::kU16:
      return T::kU32;
    case T::kS16:
      return T::kS32;
    case T::kU32:
      return T::kU64;
    case T::kS32:
      return T::kS64;
    default:
      return T::kNone;
  }
}

}  // namespace

bool Kernel::lower_integer(const ir::Instruction& ins) {
  if (ins.types.empty()) return false;
  const T type = ins.types[0];
  if (ir::is_float(type) && ins.opcode != O::kSelp) return false;
  const auto& ops = ins.operands;
  const bool pred = type == T::kPred;
  const uint32_t bytes = ir::type_size(type);
  const bool wide64 = bytes == 8;
  const uint32_t W = pred ? t_bool : (wide64 ? t_u64 : t_u32);
  const uint32_t width = bytes * 8;
  const bool sign = ir::is_signed(type);
  auto arg = [&](size_t i) { return read(ins, ops.at(i), type); };
  auto out = [&](uint32_t value) { write(ins, ops.at(0), type, value); };
  auto konst = [&](uint64_t v) { return wide64 ? b.u64(v) : b.u32(static_cast<uint32_t>(v)); };
  auto need_ops = [&](size_t n) {
    if (ops.size() != n) invalid(ins, "wrong number of operands");
  };
  auto binary = [&](spv::Op op) {
    need_ops(3);
    out(b.op(op, W, {arg(1), arg(2)}));
  };
  // The 32-bit carry chains (add.cc, addc, sub.cc, subc, mad.cc, madc): lhs + rhs (+ CC.CF), or
  // lhs - rhs (- CC.CF), in 64 bits; bit 32 of the result is the carry out (the borrow when
  // subtracting, as 1). Returns the low 32 bits.
  auto carry_chain = [&](uint32_t lhs, uint32_t rhs, bool subtract, bool carry_in, bool carry_out) {
    if (bytes != 4) refuse(ins, "carry arithmetic on other than 32 bits is not supported");
    if (carry_ == 0) {
      carry_ = b.local_variable(b.type_pointer(spv::StorageClass::Function, t_u32), b.u32(0));
    }
    const spv::Op op = subtract ? spv::Op::OpISub : spv::Op::OpIAdd;
    uint32_t r =
        b.op(op, t_u64,
             {b.op(spv::Op::OpUConvert, t_u64, {lhs}), b.op(spv::Op::OpUConvert, t_u64, {rhs})});
    if (carry_in) {
      r = b.op(op, t_u64,
               {r, b.op(spv::Op::OpUConvert, t_u64, {b.op(spv::Op::OpLoad, t_u32, {carry_})})});
    }
    if (carry_out) {
      const uint32_t high = b.op(spv::Op::OpUConvert, t_u32,
                                 {b.op(spv::Op::OpShiftRightLogical, t_u64, {r, b.u32(32)})});
      b.op_void(spv::Op::OpStore, {carry_, b.op(spv::Op::OpBitwiseAnd, t_u32, {high, b.u32(1)})});
    }
    return b.op(spv::Op::OpUConvert, t_u32, {r});
  };

  switch (ins.opcode) {
    case O::kAdd:
    case O::kSub: {
      if (pred) return false;
      need_ops(3);
      const bool add = ins.opcode == O::kAdd;
      if (ins.mods.has(ir::Mod::kCc)) {
        out(carry_chain(arg(1), arg(2), !add, false, true));
        return true;
      }
      if (ins.mods.has(ir::Mod::kSat)) {
        if (type != T::kS32) invalid(ins, ".sat applies to .s32 only");
        const uint32_t a = b.op(spv::Op::OpSConvert, t_u64, {arg(1)});
        const uint32_t c = b.op(spv::Op::OpSConvert, t_u64, {arg(2)});
        uint32_t r = b.op(add ? spv::Op::OpIAdd : spv::Op::OpISub, t_u64, {a, c});
        const uint32_t hi = b.u64(0x7FFFFFFFull), lo = b.u64(0xFFFFFFFF80000000ull);
        r = select(t_u64, b.op(spv::Op::OpSGreaterThan, t_bool, {r, hi}), hi, r);
        r = select(t_u64, b.op(spv::Op::OpSLessThan, t_bool, {r, lo}), lo, r);
        out(b.op(spv::Op::OpUConvert, t_u32, {r}));
        return true;
      }
      binary(add ? spv::Op::OpIAdd : spv::Op::OpISub);
      return true;
    }
    case O::kAddc:
    case O::kSubc:
      need_ops(3);
      out(carry_chain(arg(1), arg(2), ins.opcode == O::kSubc, true, ins.mods.has(ir::Mod::kCc)));
      return true;
    case O::kMadc:
    case O::kMul:
    case O::kMad: {
      if (pred) return false;
      const bool mad = ins.opcode != O::kMul;
      need_ops(mad ? 4 : 3);
      if (ins.opcode == O::kMadc || ins.mods.has(ir::Mod::kCc)) {
        // mad.cc / madc: the .lo or .hi half of the product, then a 32-bit carry chain.
        if (bytes != 4) refuse(ins, "carry arithmetic on other than 32 bits is not supported");
        const bool hi = ins.mods.has(ir::Mod::kHi);
        if (!hi && !ins.mods.has(ir::Mod::kLo)) invalid(ins, "mad.cc and madc need .lo or .hi");
        const uint32_t pair = b.type_struct({t_u32, t_u32});
        const uint32_t both =
            b.op(sign ? spv::Op::OpSMulExtended : spv::Op::OpUMulExtended, pair, {arg(1), arg(2)});
        const uint32_t product = b.op(spv::Op::OpCompositeExtract, t_u32, {both, hi ? 1u : 0u});
        out(carry_chain(product, arg(3), false, ins.opcode == O::kMadc,
                        ins.mods.has(ir::Mod::kCc)));
        return true;
      }
      if (ins.mods.has(ir::Mod::kWide)) {
        const T wide = widened(type);
        if (wide == T::kNone) invalid(ins, ".wide applies to 16- and 32-bit types");
        const uint32_t WW = ir::type_size(wide) == 8 ? t_u64 : t_u32;
        auto extend = [&](uint32_t v) {
          if (WW == t_u32) return v;  // 16-bit values are already extended in 32 bits
          return b.op(sign ? spv::Op::OpSConvert : spv::Op::OpUConvert, t_u64, {v});
        };
        uint32_t r = b.op(spv::Op::OpIMul, WW, {extend(arg(1)), extend(arg(2))});
        if (mad) r = b.op(spv::Op::OpIAdd, WW, {r, read(ins, ops[3], wide)});
        write(ins, ops[0], wide, r);
        return true;
      }
      uint32_t r = 0;
      if (ins.mods.has(ir::Mod::kHi)) {
        if (width < 32) {
          r = b.op(sign ? spv::Op::OpShiftRightArithmetic : spv::Op::OpShiftRightLogical, t_u32,
                   {b.op(spv::Op::OpIMul, t_u32, {arg(1), arg(2)}), b.u32(width)});
        } else {
          const uint32_t pair = b.type_struct({W, W});
          const uint32_t both = b.op(sign ? spv::Op::OpSMulExtended : spv::Op::OpUMulExtended, pair,
                                     {arg(1), arg(2)});
          r = b.op(spv::Op::OpCompositeExtract, W, {both, 1});
        }
      } else {
        r = b.op(spv::Op::OpIMul, W, {arg(1), arg(2)});
      }
      if (mad) r = b.op(spv::Op::OpIAdd, W, {r, arg(3)});
      if (ins.mods.has(ir::Mod::kSat)) refuse(ins, "mad.sat is not supported");
      out(r);
      return true;
    }
    case O::kDiv:
    case O::kRem: {
      if (pred) return false;
      need_ops(3);
      const uint32_t a = arg(1), c = arg(2);
      const uint32_t zero = b.op(spv::Op::OpIEqual, t_bool, {c, konst(0)});
      uint32_t unsafe = zero;
      if (sign && width >= 32) {
        // MIN / -1 overflows; PTX leaves it undefined, the CPU PTX device gives MIN (and 0 for %).
        const uint64_t min = width == 64 ? 0x8000000000000000ull : 0x80000000ull;
        const uint32_t overflow =
            b.op(spv::Op::OpLogicalAnd, t_bool,
                 {b.op(spv::Op::OpIEqual, t_bool, {a, konst(min)}),
                  b.op(spv::Op::OpIEqual, t_bool, {c, konst(wide64 ? ~0ull : 0xFFFFFFFFull)})});
        unsafe = b.op(spv::Op::OpLogicalOr, t_bool, {zero, overflow});
      }
      const uint32_t divisor = select(W, unsafe, konst(1), c);
      const bool div = ins.opcode == O::kDiv;
      const spv::Op op = div ? (sign ? spv::Op::OpSDiv : spv::Op::OpUDiv)
                             : (sign ? spv::Op::OpSRem : spv::Op::OpUMod);
      uint32_t r = b.op(op, W, {a, divisor});
      // a / 0 is all ones, a % 0 is a.
      r = select(W, zero, div ? konst(~0ull) : a, r);
      out(r);
      return true;
    }
    case O::kAbs:
      if (pred) return false;
      need_ops(2);
      {
        const uint32_t a = arg(1);
        const uint32_t negative = b.op(spv::Op::OpSLessThan, t_bool, {a, konst(0)});
        out(select(W, negative, b.op(spv::Op::OpSNegate, W, {a}), a));
      }
      return true;
    case O::kSad: {
      // c + |a - b|, the difference taken the way round that does not go negative.
      if (pred) return false;
      need_ops(4);
      const uint32_t a = arg(1), c = arg(2);
      const uint32_t less =
          b.op(sign ? spv::Op::OpSLessThan : spv::Op::OpULessThan, t_bool, {a, c});
      const uint32_t diff =
          select(W, less, b.op(spv::Op::OpISub, W, {c, a}), b.op(spv::Op::OpISub, W, {a, c}));
      out(b.op(spv::Op::OpIAdd, W, {arg(3), diff}));
      return true;
    }
    case O::kNeg:
      if (pred) return false;
      need_ops(2);
      out(b.op(spv::Op::OpSNegate, W, {arg(1)}));
      return true;
    case O::kMin:
    case O::kMax: {
      if (pred) return false;
      need_ops(3);
      const uint32_t a = arg(1), c = arg(2);
      const bool min = ins.opcode == O::kMin;
      const spv::Op less = sign ? spv::Op::OpSLessThan : spv::Op::OpULessThan;
      uint32_t r = select(W, b.op(less, t_bool, {a, c}), min ? a : c, min ? c : a);
      if (ins.mods.has(ir::Mod::kRelu)) {
        r = select(W, b.op(spv::Op::OpSLessThan, t_bool, {r, konst(0)}), konst(0), r);
      }
      out(r);
      return true;
    }
    case O::kAnd:
    case O::kOr:
    case O::kXor: {
      need_ops(3);
      if (pred) {
        const spv::Op op = ins.opcode == O::kAnd  ? spv::Op::OpLogicalAnd
                           : ins.opcode == O::kOr ? spv::Op::OpLogicalOr
                                                  : spv::Op::OpLogicalNotEqual;
        out(b.op(op, t_bool, {arg(1), arg(2)}));
        return true;
      }
      binary(ins.opcode == O::kAnd  ? spv::Op::OpBitwiseAnd
             : ins.opcode == O::kOr ? spv::Op::OpBitwiseOr
                                    : spv::Op::OpBitwiseXor);
      return true;
    }
    case O::kNot:
      need_ops(2);
      out(pred ? b.op(spv::Op::OpLogicalNot, t_bool, {arg(1)}) : b.op(spv::Op::OpNot, W, {arg(1)}));
      return true;
    case O::kCnot:
      need_ops(2);
      out(select(W, b.op(spv::Op::OpIEqual, t_bool, {arg(1), konst(0)}), konst(1), konst(0)));
      return true;
    case O::kShl:
    case O::kShr: {
      if (pred) return false;
      need_ops(3);
      const uint32_t a = arg(1);
      const uint32_t amount = read(ins, ops[2], T::kU32);
      // PTX clamps shift amounts at the width; SPIR-V leaves them undefined there.
      const uint32_t too_far = b.op(spv::Op::OpUGreaterThanEqual, t_bool, {amount, b.u32(width)});
      const uint32_t clamped = select(t_u32, too_far, b.u32(width - 1), amount);
      uint32_t r = 0;
      if (ins.opcode == O::kShl) {
        r = select(W, too_far, konst(0), b.op(spv::Op::OpShiftLeftLogical, W, {a, clamped}));
      } else if (sign) {
        r = b.op(spv::Op::OpShiftRightArithmetic, W, {a, clamped});
      } else {
        r = select(W, too_far, konst(0), b.op(spv::Op::OpShiftRightLogical, W, {a, clamped}));
      }
      out(r);
      return true;
    }
    case O::kPopc:
    case O::kClz:
    case O::kBrev: {
      need_ops(2);
      const uint32_t a = arg(1);
      auto halves = [&](uint32_t v, uint32_t* lo, uint32_t* hi) {
        *lo = b.op(spv::Op::OpUConvert, t_u32, {v});
        *hi = b.op(spv::Op::OpUConvert, t_u32,
                   {b.op(spv::Op::OpShiftRightLogical, t_u64, {v, b.u32(32)})});
      };
      auto clz32 = [&](uint32_t v) {
        return b.op(spv::Op::OpISub, t_u32, {b.u32(31), glsl(t_u32, GLSLstd450FindUMsb, {v})});
      };
      if (ins.opcode == O::kPopc || ins.opcode == O::kClz) {
        uint32_t r = 0;
        if (!wide64) {
          r = ins.opcode == O::kPopc ? b.op(spv::Op::OpBitCount, t_u32, {a}) : clz32(a);
        } else {
          uint32_t lo, hi;
          halves(a, &lo, &hi);
          if (ins.opcode == O::kPopc) {
            r = b.op(
                spv::Op::OpIAdd, t_u32,
                {b.op(spv::Op::OpBitCount, t_u32, {lo}), b.op(spv::Op::OpBitCount, t_u32, {hi})});
          } else {
            r = select(t_u32, b.op(spv::Op::OpIEqual, t_bool, {hi, b.u32(0)}),
                       b.op(spv::Op::OpIAdd, t_u32, {b.u32(32), clz32(lo)}), clz32(hi));
          }
        }
        write(ins, ops[0], T::kU32, r);
        return true;
      }
      if (!wide64) {
        out(b.op(spv::Op::OpBitReverse, t_u32, {a}));
      } else {
        uint32_t lo, hi;
        halves(a, &lo, &hi);
        const uint32_t new_hi =
            b.op(spv::Op::OpUConvert, t_u64, {b.op(spv::Op::OpBitReverse, t_u32, {lo})});
        const uint32_t new_lo =
            b.op(spv::Op::OpUConvert, t_u64, {b.op(spv::Op::OpBitReverse, t_u32, {hi})});
        out(b.op(spv::Op::OpBitwiseOr, t_u64,
                 {b.op(spv::Op::OpShiftLeftLogical, t_u64, {new_hi, b.u32(32)}), new_lo}));
      }
      return true;
    }
    case O::kBfind: {
      need_ops(2);
      uint32_t v = arg(1);
      if (sign) {
        // The most significant bit that differs from the sign bit.
        const uint32_t negative = b.op(spv::Op::OpSLessThan, t_bool, {v, konst(0)});
        v = select(W, negative, b.op(spv::Op::OpNot, W, {v}), v);
      }
      // FindUMsb gives -1 (all ones, bfind's "none") for 0.
      uint32_t pos = 0;
      if (!wide64) {
        pos = glsl(t_u32, GLSLstd450FindUMsb, {v});
      } else {
        const uint32_t lo = b.op(spv::Op::OpUConvert, t_u32, {v});
        const uint32_t hi = b.op(spv::Op::OpUConvert, t_u32,
                                 {b.op(spv::Op::OpShiftRightLogical, t_u64, {v, b.u32(32)})});
        pos =
            select(t_u32, b.op(spv::Op::OpINotEqual, t_bool, {hi, b.u32(0)}),
                   b.op(spv::Op::OpIAdd, t_u32, {glsl(t_u32, GLSLstd450FindUMsb, {hi}), b.u32(32)}),
                   glsl(t_u32, GLSLstd450FindUMsb, {lo}));
      }
      if (ins.mods.has(ir::Mod::kShiftamt)) {
        const uint32_t none = b.op(spv::Op::OpIEqual, t_bool, {pos, b.u32(0xFFFFFFFFu)});
        pos = select(t_u32, none, pos, b.op(spv::Op::OpISub, t_u32, {b.u32(width - 1), pos}));
      }
      write(ins, ops[0], T::kU32, pos);
      return true;
    }
    case O::kFns: {
      // fns d, mask, base, offset: the offset-th set bit of mask counting up from bit base
      // (offset > 0) or down from it (offset < 0); offset 0 asks whether bit base is set. Each
      // case is "the k-th lowest set bit of x": x the bits at and above base (or at and below),
      // k the offset, or for counting down the bits' count + offset + 1. None: all ones.
      need_ops(4);
      const uint32_t m = read(ins, ops[1], T::kB32);
      const uint32_t base =
          b.op(spv::Op::OpBitwiseAnd, t_u32, {read(ins, ops[2], T::kU32), b.u32(31)});
      const uint32_t n = read(ins, ops[3], T::kS32);
      const uint32_t at_base = b.op(spv::Op::OpShiftLeftLogical, t_u32, {b.u32(1), base});
      const uint32_t above = b.op(spv::Op::OpShiftLeftLogical, t_u32, {b.u32(0xFFFFFFFFu), base});
      // Bits 0..base: below the next bit, whose shift by 32 SPIR-V leaves undefined.
      const uint32_t below = b.op(spv::Op::OpBitwiseOr, t_u32,
                                  {b.op(spv::Op::OpISub, t_u32, {at_base, b.u32(1)}), at_base});
      const uint32_t up = b.op(spv::Op::OpSGreaterThan, t_bool, {n, b.u32(0)});
      const uint32_t down = b.op(spv::Op::OpSLessThan, t_bool, {n, b.u32(0)});
      const uint32_t x = b.op(spv::Op::OpBitwiseAnd, t_u32,
                              {m, select(t_u32, up, above, select(t_u32, down, below, at_base))});
      const uint32_t count = b.op(spv::Op::OpBitCount, t_u32, {x});
      const uint32_t from_top =
          b.op(spv::Op::OpIAdd, t_u32, {b.op(spv::Op::OpIAdd, t_u32, {count, n}), b.u32(1)});
      const uint32_t k = select(t_u32, up, n, select(t_u32, down, from_top, b.u32(1)));
      const uint32_t found = b.op(spv::Op::OpLogicalAnd, t_bool,
                                  {b.op(spv::Op::OpSGreaterThanEqual, t_bool, {k, b.u32(1)}),
                                   b.op(spv::Op::OpSLessThanEqual, t_bool, {k, count})});
      // Binary search: skip a half when it holds fewer than k set bits.
      uint32_t pos = b.u32(0), left = k;
      for (uint32_t half : {16u, 8u, 4u, 2u, 1u}) {
        const uint32_t window =
            b.op(spv::Op::OpBitFieldUExtract, t_u32,
                 {b.op(spv::Op::OpShiftRightLogical, t_u32, {x, pos}), b.u32(0), b.u32(half)});
        const uint32_t c = b.op(spv::Op::OpBitCount, t_u32, {window});
        const uint32_t skip = b.op(spv::Op::OpUGreaterThan, t_bool, {left, c});
        pos = select(t_u32, skip, b.op(spv::Op::OpIAdd, t_u32, {pos, b.u32(half)}), pos);
        left = select(t_u32, skip, b.op(spv::Op::OpISub, t_u32, {left, c}), left);
      }
      write(ins, ops[0], T::kU32, select(t_u32, found, pos, b.u32(0xFFFFFFFFu)));
      return true;
    }
    case O::kDp4a:
    case O::kDp2a: {
      // c + the products of a's bytes (dp2a: half-words) with b's bytes (dp2a.hi: b's upper
      // two), each extended by its own type; the sum wraps at 32 bits as the result does.
      need_ops(4);
      if (ins.types.size() != 2) invalid(ins, "dp4a and dp2a take two types");
      const bool sa = ir::is_signed(ins.types[0]), sb = ir::is_signed(ins.types[1]);
      const uint32_t a = read(ins, ops[1], T::kB32), c = read(ins, ops[2], T::kB32);
      const bool four = ins.opcode == O::kDp4a;
      const uint32_t a_bits = four ? 8 : 16;
      const uint32_t b_first = four || !ins.mods.has(ir::Mod::kHi) ? 0 : 2;
      uint32_t sum = read(ins, ops[3], T::kB32);
      for (uint32_t i = 0; i < (four ? 4u : 2u); ++i) {
        const uint32_t va = b.op(sa ? spv::Op::OpBitFieldSExtract : spv::Op::OpBitFieldUExtract,
                                 t_u32, {a, b.u32(i * a_bits), b.u32(a_bits)});
        const uint32_t vb = b.op(sb ? spv::Op::OpBitFieldSExtract : spv::Op::OpBitFieldUExtract,
                                 t_u32, {c, b.u32((b_first + i) * 8), b.u32(8)});
        sum = b.op(spv::Op::OpIAdd, t_u32, {sum, b.op(spv::Op::OpIMul, t_u32, {va, vb})});
      }
      write(ins, ops[0], T::kB32, sum);
      return true;
    }
    case O::kBfe: {
      need_ops(4);
      const uint32_t a = arg(1);
      const uint32_t pos =
          b.op(spv::Op::OpBitwiseAnd, t_u32, {read(ins, ops[2], T::kU32), b.u32(0xFF)});
      const uint32_t len =
          b.op(spv::Op::OpBitwiseAnd, t_u32, {read(ins, ops[3], T::kU32), b.u32(0xFF)});
      const uint32_t pos_in = b.op(spv::Op::OpULessThan, t_bool, {pos, b.u32(width)});
      const uint32_t safe_pos = select(t_u32, pos_in, pos, b.u32(width - 1));
      uint32_t shifted = 0;
      if (sign) {
        shifted = b.op(spv::Op::OpShiftRightArithmetic, W, {a, safe_pos});
      } else {
        shifted = select(W, pos_in, b.op(spv::Op::OpShiftRightLogical, W, {a, safe_pos}), konst(0));
      }
      const uint32_t short_field = b.op(spv::Op::OpULessThan, t_bool, {len, b.u32(width)});
      const uint32_t safe_len = select(t_u32, short_field, len, b.u32(width - 1));
      uint32_t field = 0;
      if (sign) {
        // Sign-extend from the field's top bit: shift it to the top, then back.
        const uint32_t up = b.op(spv::Op::OpISub, t_u32, {b.u32(width), safe_len});
        const uint32_t up_safe =
            select(t_u32, b.op(spv::Op::OpULessThan, t_bool, {up, b.u32(width)}), up, b.u32(0));
        field = b.op(spv::Op::OpShiftRightArithmetic, W,
                     {b.op(spv::Op::OpShiftLeftLogical, W, {shifted, up_safe}), up_safe});
      } else {
        const uint32_t mask =
            b.op(spv::Op::OpISub, W,
                 {b.op(spv::Op::OpShiftLeftLogical, W, {konst(1), safe_len}), konst(1)});
        field = b.op(spv::Op::OpBitwiseAnd, W, {shifted, mask});
      }
      field = select(W, short_field, field, shifted);
      out(select(W, b.op(spv::Op::OpIEqual, t_bool, {len, b.u32(0)}), konst(0), field));
      return true;
    }
    case O::kBfi: {
      need_ops(5);
      const uint32_t a = arg(1), base = arg(2);
      const uint32_t pos =
          b.op(spv::Op::OpBitwiseAnd, t_u32, {read(ins, ops[3], T::kU32), b.u32(0xFF)});
      const uint32_t len =
          b.op(spv::Op::OpBitwiseAnd, t_u32, {read(ins, ops[4], T::kU32), b.u32(0xFF)});
      const uint32_t nothing =
          b.op(spv::Op::OpLogicalOr, t_bool,
               {b.op(spv::Op::OpIEqual, t_bool, {len, b.u32(0)}),
                b.op(spv::Op::OpUGreaterThanEqual, t_bool, {pos, b.u32(width)})});
      const uint32_t safe_pos = select(t_u32, nothing, b.u32(0), pos);
      const uint32_t room = b.op(spv::Op::OpISub, t_u32, {b.u32(width), safe_pos});
      const uint32_t l = select(t_u32, b.op(spv::Op::OpULessThan, t_bool, {len, room}), len, room);
      const uint32_t full = b.op(spv::Op::OpUGreaterThanEqual, t_bool, {l, b.u32(width)});
      const uint32_t safe_l = select(t_u32, full, b.u32(0), l);
      const uint32_t ones =
          select(W, full, konst(~0ull),
                 b.op(spv::Op::OpISub, W,
                      {b.op(spv::Op::OpShiftLeftLogical, W, {konst(1), safe_l}), konst(1)}));
      const uint32_t mask = b.op(spv::Op::OpShiftLeftLogical, W, {ones, safe_pos});
      const uint32_t inserted =
          b.op(spv::Op::OpBitwiseOr, W,
               {b.op(spv::Op::OpBitwiseAnd, W, {base, b.op(spv::Op::OpNot, W, {mask})}),
                b.op(spv::Op::OpBitwiseAnd, W,
                     {b.op(spv::Op::OpShiftLeftLogical, W, {a, safe_pos}), mask})});
      out(select(W, nothing, base, inserted));
      return true;
    }
    case O::kPrmt: {
      need_ops(4);
      if (ins.mods.has(ir::Mod::kF4e) || ins.mods.has(ir::Mod::kB4e) ||
          ins.mods.has(ir::Mod::kRc8) || ins.mods.has(ir::Mod::kEcl) ||
          ins.mods.has(ir::Mod::kEcr) || ins.mods.has(ir::Mod::kRc16)) {
        refuse(ins, "prmt's special modes are not supported");
      }
      const uint32_t a = read(ins, ops[1], T::kB32), c = read(ins, ops[2], T::kB32);
      const uint32_t selector = read(ins, ops[3], T::kB32);
      // The eight bytes {c, a} (a in bytes 0-3); each result byte picks one by its selector
      // nibble, or replicates the picked byte's sign bit when the nibble's bit 3 is set.
      const uint32_t both = b.op(spv::Op::OpBitwiseOr, t_u64,
                                 {b.op(spv::Op::OpShiftLeftLogical, t_u64,
                                       {b.op(spv::Op::OpUConvert, t_u64, {c}), b.u32(32)}),
                                  b.op(spv::Op::OpUConvert, t_u64, {a})});
      uint32_t r = b.u32(0);
      for (uint32_t i = 0; i < 4; ++i) {
        const uint32_t nibble =
            b.op(spv::Op::OpBitFieldUExtract, t_u32, {selector, b.u32(4 * i), b.u32(4)});
        const uint32_t index = b.op(spv::Op::OpBitwiseAnd, t_u32, {nibble, b.u32(7)});
        uint32_t byte =
            b.op(spv::Op::OpUConvert, t_u32,
                 {b.op(spv::Op::OpShiftRightLogical, t_u64,
                       {both, b.op(spv::Op::OpShiftLeftLogical, t_u32, {index, b.u32(3)})})});
        byte = b.op(spv::Op::OpBitwiseAnd, t_u32, {byte, b.u32(0xFF)});
        const uint32_t replicate =
            b.op(spv::Op::OpINotEqual, t_bool,
                 {b.op(spv::Op::OpBitwiseAnd, t_u32, {nibble, b.u32(8)}), b.u32(0)});
        const uint32_t negative =
            b.op(spv::Op::OpINotEqual, t_bool,
                 {b.op(spv::Op::OpBitwiseAnd, t_u32, {byte, b.u32(0x80)}), b.u32(0)});
        byte = select(t_u32, replicate, select(t_u32, negative, b.u32(0xFF), b.u32(0)), byte);
        r = b.op(spv::Op::OpBitwiseOr, t_u32,
                 {r, b.op(spv::Op::OpShiftLeftLogical, t_u32, {byte, b.u32(8 * i)})});
      }
      write(ins, ops[0], T::kB32, r);
      return true;
    }
    case O::kShf: {
      need_ops(4);
      const uint32_t lo = read(ins, ops[1], T::kB32), hi = read(ins, ops[2], T::kB32);
      uint32_t n = read(ins, ops[3], T::kU32);
      if (ins.mods.has(ir::Mod::kClamp)) {
        n = select(t_u32, b.op(spv::Op::OpUGreaterThan, t_bool, {n, b.u32(32)}), b.u32(32), n);
      } else {
        n = b.op(spv::Op::OpBitwiseAnd, t_u32, {n, b.u32(31)});
      }
      const uint32_t both = b.op(spv::Op::OpBitwiseOr, t_u64,
                                 {b.op(spv::Op::OpShiftLeftLogical, t_u64,
                                       {b.op(spv::Op::OpUConvert, t_u64, {hi}), b.u32(32)}),
                                  b.op(spv::Op::OpUConvert, t_u64, {lo})});
      uint32_t r = 0;
      if (ins.mods.has(ir::Mod::kL)) {
        r = b.op(spv::Op::OpShiftRightLogical, t_u64,
                 {b.op(spv::Op::OpShiftLeftLogical, t_u64, {both, n}), b.u32(32)});
      } else {
        r = b.op(spv::Op::OpShiftRightLogical, t_u64, {both, n});
      }
      write(ins, ops[0], T::kB32, b.op(spv::Op::OpUConvert, t_u32, {r}));
      return true;
    }
    case O::kLop3: {
      need_ops(5);
      if (ops[4].kind != ir::OperandKind::kInteger) refuse(ins, "lop3 needs an immediate table");
      const uint32_t lut = static_cast<uint32_t>(ops[4].integer) & 0xFF;
      const uint32_t a = read(ins, ops[1], T::kB32), c1 = read(ins, ops[2], T::kB32),
                     c2 = read(ins, ops[3], T::kB32);
      const uint32_t na = b.op(spv::Op::OpNot, t_u32, {a}), nb = b.op(spv::Op::OpNot, t_u32, {c1}),
                     nc = b.op(spv::Op::OpNot, t_u32, {c2});
      // The table's bit i is the result for a = i>>2&1, b = i>>1&1, c = i&1 (0xF0, 0xCC, 0xAA).
      uint32_t r = b.u32(0);
      for (uint32_t i = 0; i < 8; ++i) {
        if ((lut >> i & 1) == 0) continue;
        const uint32_t term =
            b.op(spv::Op::OpBitwiseAnd, t_u32,
                 {b.op(spv::Op::OpBitwiseAnd, t_u32, {(i & 4) ? a : na, (i & 2) ? c1 : nb}),
                  (i & 1) ? c2 : nc});
        r = b.op(spv::Op::OpBitwiseOr, t_u32, {r, term});
      }
      write(ins, ops[0], T::kB32, r);
      return true;
    }
    case O::kSelp: {
      need_ops(4);
      if (pred) {
        out(select(t_bool, read_predicate(ins, ops[3]), arg(1), arg(2)));
        return true;
      }
      const uint32_t size = ir::type_size(type);
      const uint32_t BW = size == 8 ? t_u64 : t_u32;
      const uint32_t r = select(BW, read_predicate(ins, ops[3]), read_bits(ins, ops[1], size),
                                read_bits(ins, ops[2], size));
      write_bits(ins, ops[0], size, r, false);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace hal::ptx_spirv
