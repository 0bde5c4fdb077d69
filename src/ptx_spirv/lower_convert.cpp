// cvt: between integers (truncation, extension, .sat), between floats, and between the two,
// with PTX's rounding modes and its saturation of float-to-integer results (NaN gives 0, values
// out of range the nearest bound), which SPIR-V leaves undefined and is computed here.
#include <cmath>
#include <cstring>

#include <spirv/unified1/GLSL.std.450.h>

#include "ptx_spirv/kernel.h"

namespace hal::ptx_spirv {

namespace {

using O = ir::Opcode;
using T = ir::Type;
using M = ir::Mod;

}  // namespace

bool Kernel::lower_convert(const ir::Instruction& ins) {
  if (ins.opcode != O::kCvt && ins.opcode != O::kCvta) return false;
  const auto& ops = ins.operands;
  if (ins.opcode == O::kCvt && ops.size() == 3) {
    // cvt.rn.f16x2.f32 d, a, b (and .bf16x2): a to the upper half, b to the lower one, each
    // rounded to nearest even as cvt.rn.f16.f32 rounds it (Triton packs results so).
    if (ins.types.size() != 2 || ins.types[1] != T::kF32 ||
        (ins.types[0] != T::kF16x2 && ins.types[0] != T::kBF16x2)) {
      invalid(ins, "a cvt with two sources packs two .f32 into .f16x2 or .bf16x2");
    }
    if (!ins.mods.has(M::kRn) || ins.mods.has(M::kRelu) || ins.mods.has(M::kSatfinite)) {
      refuse(ins, "only cvt.rn packs two .f32 into a pair here");
    }
    const bool half = ins.types[0] == T::kF16x2;
    auto narrow = [&](const ir::Operand& o) {
      const uint32_t value = read(ins, o, T::kF32);
      return half ? f32_to_f16(value) : f32_to_bf16(value);
    };
    const uint32_t hi = narrow(ops[1]), lo = narrow(ops[2]);
    const uint32_t packed = b.op(spv::Op::OpBitwiseOr, t_u32,
                                 {b.op(spv::Op::OpShiftLeftLogical, t_u32, {hi, b.u32(16)}), lo});
    write_bits(ins, ops[0], 4, packed, false);
    return true;
  }
  if (ops.size() != 2) invalid(ins, "wrong number of operands");
  if (ins.opcode == O::kCvta) {
    // Generic and state-space addresses are the same numbers here (kernel.h); only the width
    // may change.
    if (ins.types.size() != 1) invalid(ins, "cvta takes one type");
    const uint32_t bytes = ir::type_size(ins.types[0]);
    if (bytes != 4 && bytes != 8) invalid(ins, "cvta converts 32- or 64-bit addresses");
    if (ins.mods.has(M::kConst) || ins.mods.has(M::kParam)) {
      refuse(ins, "generic addresses of .const and .param memory are not supported");
    }
    write_bits(ins, ops[0], bytes, read_bits(ins, ops[1], bytes), false);
    return true;
  }
  if (ins.types.size() != 2) invalid(ins, "cvt takes a destination and a source type");
  const T dtype = ins.types[0], stype = ins.types[1];
  const bool dfloat = ir::is_float(dtype), sfloat = ir::is_float(stype);
  for (T t : {dtype, stype}) {
    if (t == T::kF16x2 || t == T::kBF16x2 || t == T::kE4M3 || t == T::kE5M2 || t == T::kE4M3x2 ||
        t == T::kE5M2x2 || t == T::kTF32 || t == T::kPred || ir::type_size(t) > 8) {
      refuse(ins, std::string("conversions with .") + ir::type_name(t) + " are not supported");
    }
    if (t == T::kF64) f64(ins);
  }
  const bool directed = ins.mods.has(M::kRz) || ins.mods.has(M::kRm) || ins.mods.has(M::kRp);
  const uint32_t value = read(ins, ops[1], stype);

  if (!dfloat && !sfloat) {
    const uint32_t dbytes = ir::type_size(dtype), sbytes = ir::type_size(stype);
    const bool ssign = ir::is_signed(stype), dsign = ir::is_signed(dtype);
    // Work in 64 bits: every source fits, and the saturation bounds are compared exactly.
    uint32_t v = value;
    if (sbytes <= 4) v = b.op(ssign ? spv::Op::OpSConvert : spv::Op::OpUConvert, t_u64, {value});
    if (ins.mods.has(M::kSat)) {
      uint64_t lo = 0, hi = 0;
      if (dsign) {
        hi = (uint64_t{1} << (dbytes * 8 - 1)) - 1;
        lo = ~hi;
      } else {
        hi = dbytes == 8 ? ~0ull : (uint64_t{1} << (dbytes * 8)) - 1;
      }
      if (ssign) {
        v = select(t_u64, b.op(spv::Op::OpSLessThan, t_bool, {v, b.u64(lo)}), b.u64(lo), v);
        if (!(dsign && dbytes == 8)) {
          v = select(t_u64, b.op(spv::Op::OpSGreaterThan, t_bool, {v, b.u64(hi)}), b.u64(hi), v);
        }
        if (!dsign)
          v = select(t_u64, b.op(spv::Op::OpSLessThan, t_bool, {v, b.u64(0)}), b.u64(0), v);
      } else {
        // An unsigned source is never below any bound but a signed one's maximum.
        if (!(dbytes == 8 && !dsign)) {
          v = select(t_u64, b.op(spv::Op::OpUGreaterThan, t_bool, {v, b.u64(hi)}), b.u64(hi), v);
        }
      }
    }
    const uint32_t result = dbytes == 8 ? v : b.op(spv::Op::OpUConvert, t_u32, {v});
    write(ins, ops[0], dtype, result);
    return true;
  }

  if (dfloat && sfloat) {
    const uint32_t W = dtype == T::kF64 ? t_f64 : t_f32;
    uint32_t v = value;
    const bool integral = ins.mods.has(M::kRni) || ins.mods.has(M::kRzi) || ins.mods.has(M::kRmi) ||
                          ins.mods.has(M::kRpi);
    const uint32_t SW = stype == T::kF64 ? t_f64 : t_f32;
    if (integral) {
      const uint32_t which = ins.mods.has(M::kRni)   ? GLSLstd450RoundEven
                             : ins.mods.has(M::kRzi) ? GLSLstd450Trunc
                             : ins.mods.has(M::kRmi) ? GLSLstd450Floor
                                                     : GLSLstd450Ceil;
      v = glsl(SW, which, {v});
    } else if (directed && ir::type_size(dtype) < ir::type_size(stype)) {
      refuse(ins,
             "narrowing float conversions with rounding other than to-nearest are not "
             "supported");
    }
    if (SW != W) {
      if (stype == T::kF64 && (dtype == T::kF16 || dtype == T::kBF16)) {
        refuse(ins, "f64 to half-precision conversion is not supported (it would round twice)");
      }
      v = b.op(spv::Op::OpFConvert, W, {v});
    }
    if (ins.mods.has(M::kSat)) {
      uint64_t one_bits = W == t_f64 ? 0x3FF0000000000000ull : 0x3F800000u;
      const uint32_t zero = b.constant_float(W == t_f64 ? 64 : 32, 0);
      const uint32_t one = b.constant_float(W == t_f64 ? 64 : 32, one_bits);
      const uint32_t clamped = glsl(W, GLSLstd450NClamp, {v, zero, one});
      v = select(W, b.op(spv::Op::OpIsNan, t_bool, {v}), zero, clamped);
    }
    if (ins.mods.has(M::kRelu)) {
      const uint32_t zero = b.constant_float(W == t_f64 ? 64 : 32, 0);
      v = select(W, b.op(spv::Op::OpFOrdLessThan, t_bool, {v, zero}), zero, v);
    }
    write(ins, ops[0], dtype, v);
    return true;
  }

  if (dfloat) {  // integer to float
    if (directed)
      refuse(ins,
             "integer to float conversion with rounding other than to-nearest "
             "is not supported");
    const uint32_t W = dtype == T::kF64 ? t_f64 : t_f32;
    // Narrow signed sources are already sign-extended to 32 bits in their working value.
    uint32_t v = value;
    v = b.op(ir::is_signed(stype) ? spv::Op::OpConvertSToF : spv::Op::OpConvertUToF, W, {v});
    write(ins, ops[0], dtype, v);
    return true;
  }

  // Float to integer: round as asked (to zero without a modifier), then saturate.
  const uint32_t SW = stype == T::kF64 ? t_f64 : t_f32;
  const uint32_t fbits = SW == t_f64 ? 64 : 32;
  uint32_t which = GLSLstd450Trunc;
  if (ins.mods.has(M::kRni) || ins.mods.has(M::kRn)) which = GLSLstd450RoundEven;
  if (ins.mods.has(M::kRmi) || ins.mods.has(M::kRm)) which = GLSLstd450Floor;
  if (ins.mods.has(M::kRpi) || ins.mods.has(M::kRp)) which = GLSLstd450Ceil;
  const uint32_t rounded = glsl(SW, which, {value});
  const uint32_t dbytes = ir::type_size(dtype);
  const bool dsign = ir::is_signed(dtype);
  const uint32_t DW = dbytes == 8 ? t_u64 : t_u32;
  auto fconst = [&](double v) {
    if (fbits == 64) {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      return b.constant_float(64, bits);
    }
    const float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return b.constant_float(32, bits);
  };
  // Bounds as powers of two, exact in every float type: values at or past 2^(bits-1) (or 2^bits
  // unsigned) saturate to the maximum, at or below -2^(bits-1) (0 unsigned) to the minimum.
  const double top = dsign ? std::ldexp(1.0, static_cast<int>(dbytes * 8 - 1))
                           : std::ldexp(1.0, static_cast<int>(dbytes * 8));
  const double bottom = dsign ? -top : 0.0;
  const uint64_t max_int = dsign ? (uint64_t{1} << (dbytes * 8 - 1)) - 1
                                 : (dbytes == 8 ? ~0ull : (uint64_t{1} << (dbytes * 8)) - 1);
  const uint64_t min_int = dsign ? ~max_int : 0;
  auto k = [&](uint64_t v) { return DW == t_u64 ? b.u64(v) : b.u32(static_cast<uint32_t>(v)); };
  const uint32_t too_big = b.op(spv::Op::OpFOrdGreaterThanEqual, t_bool, {rounded, fconst(top)});
  const uint32_t too_small = b.op(spv::Op::OpFOrdLessThanEqual, t_bool, {rounded, fconst(bottom)});
  const uint32_t nan = b.op(spv::Op::OpIsNan, t_bool, {rounded});
  // Converted only when in range, so the conversion itself is always defined.
  const uint32_t safe =
      select(SW,
             b.op(spv::Op::OpLogicalOr, t_bool,
                  {b.op(spv::Op::OpLogicalOr, t_bool, {too_big, too_small}), nan}),
             fconst(0), rounded);
  uint32_t r = b.op(dsign ? spv::Op::OpConvertFToS : spv::Op::OpConvertFToU, DW, {safe});
  r = select(DW, too_big, k(max_int), r);
  r = select(DW, too_small, k(min_int), r);
  r = select(DW, nan, k(0), r);
  write(ins, ops[0], dtype, r);
  return true;
}

}  // namespace hal::ptx_spirv
