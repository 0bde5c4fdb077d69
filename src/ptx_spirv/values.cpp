// Operands: registers, immediates, special registers and symbols, read as working values or
// raw bits, and results stored back into registers (kernel.h describes the representation).
#include <cstring>

#include <spirv/unified1/GLSL.std.450.h>

#include "ptx_spirv/kernel.h"

namespace hal::ptx_spirv {

namespace {

bool narrow_integer(ir::Type type) {
  return !ir::is_float(type) && type != ir::Type::kPred && ir::type_size(type) < 4;
}

}  // namespace

uint32_t Kernel::working_type(ir::Type type) {
  switch (type) {
    case ir::Type::kPred:
      return t_bool;
    case ir::Type::kF16:
    case ir::Type::kBF16:
    case ir::Type::kTF32:
    case ir::Type::kF32:
      return t_f32;
    case ir::Type::kF64:
      return t_f64;
    default:
      return ir::type_size(type) == 8 ? t_u64 : t_u32;
  }
}

uint32_t Kernel::register_bytes(uint32_t index) const {
  const ir::Register& r = function_.registers[index];
  return r.type == ir::Type::kPred ? 0 : ir::type_size(r.type);
}

uint32_t Kernel::load_register(uint32_t index) {
  return b.op(spv::Op::OpLoad, register_types_[index], {registers_[index]});
}

void Kernel::store_register(uint32_t index, uint32_t value) {
  if (store_guard_ != 0)
    value = select(register_types_[index], store_guard_, value, load_register(index));
  b.op_void(spv::Op::OpStore, {registers_[index], value});
}

uint32_t Kernel::read_predicate(const ir::Instruction& ins, const ir::Operand& operand) {
  if (operand.kind == ir::OperandKind::kInteger) return b.constant_bool(operand.integer != 0);
  if (operand.kind != ir::OperandKind::kRegister || reg(operand.reg).type != ir::Type::kPred) {
    invalid(ins, "a predicate operand is not a .pred register");
  }
  uint32_t value = load_register(operand.reg);
  if (operand.negate) value = b.op(spv::Op::OpLogicalNot, t_bool, {value});
  return value;
}

void Kernel::write_predicate(const ir::Instruction& ins, uint32_t index, uint32_t value) {
  if (reg(index).type != ir::Type::kPred) invalid(ins, "a predicate result needs a .pred register");
  store_register(index, value);
}

uint32_t Kernel::read_bits(const ir::Instruction& ins, const ir::Operand& operand, uint32_t bytes) {
  const uint32_t type = bytes == 8 ? t_u64 : t_u32;
  switch (operand.kind) {
    case ir::OperandKind::kRegister: {
      const uint32_t have = register_bytes(operand.reg);
      if (have == 0) invalid(ins, "a predicate register where a value is expected");
      uint32_t value = load_register(operand.reg);
      if (have == 8 && bytes <= 4) value = b.op(spv::Op::OpUConvert, t_u32, {value});
      if (have <= 4 && bytes == 8) value = b.op(spv::Op::OpUConvert, t_u64, {value});
      if (bytes < 4 && have > bytes) {
        value =
            b.op(spv::Op::OpBitwiseAnd, t_u32, {value, b.u32((uint32_t{1} << (bytes * 8)) - 1)});
      }
      return value;
    }
    case ir::OperandKind::kInteger:
      return bytes == 8 ? b.u64(static_cast<uint64_t>(operand.integer))
                        : b.u32(static_cast<uint32_t>(operand.integer) &
                                (bytes >= 4 ? 0xFFFFFFFFu : (1u << (bytes * 8)) - 1));
    case ir::OperandKind::kFloat: {
      if (bytes == 8) {
        if (operand.is_double) return b.u64(operand.float_bits);
        float f;
        const uint32_t bits = static_cast<uint32_t>(operand.float_bits);
        std::memcpy(&f, &bits, 4);
        const double d = f;
        uint64_t out;
        std::memcpy(&out, &d, 8);
        return b.u64(out);
      }
      if (!operand.is_double) return b.u32(static_cast<uint32_t>(operand.float_bits));
      double d;
      std::memcpy(&d, &operand.float_bits, 8);
      const float f = static_cast<float>(d);
      uint32_t out;
      std::memcpy(&out, &f, 4);
      return b.u32(out);
    }
    case ir::OperandKind::kSpecial: {
      const uint32_t value = special(ins, operand);
      return bytes == 8 ? b.op(spv::Op::OpUConvert, t_u64, {value}) : value;
    }
    case ir::OperandKind::kSymbol: {
      uint32_t value = symbol_address(ins, operand.symbol);
      if (operand.integer != 0) {
        value =
            b.op(spv::Op::OpIAdd, t_u32, {value, b.u32(static_cast<uint32_t>(operand.integer))});
      }
      return bytes == 8 ? b.op(spv::Op::OpUConvert, t_u64, {value}) : value;
    }
    case ir::OperandKind::kVector: {
      // {a, b, ...}: the elements' bits, first in the lowest bytes (mov.b64 %rd, {%r1, %r2}).
      const size_t n = operand.elements.size();
      if (n == 0 || bytes % n != 0) invalid(ins, "a vector operand that does not fill the type");
      const uint32_t part = bytes / static_cast<uint32_t>(n);
      uint32_t value = bytes == 8 ? b.u64(0) : b.u32(0);
      for (size_t i = 0; i < n; ++i) {
        uint32_t element = read_bits(ins, operand.elements[i], part);
        if (bytes == 8 && part < 8) element = b.op(spv::Op::OpUConvert, t_u64, {element});
        if (i > 0) {
          element = b.op(spv::Op::OpShiftLeftLogical, type,
                         {element, b.u32(static_cast<uint32_t>(i) * part * 8)});
        }
        value = b.op(spv::Op::OpBitwiseOr, type, {value, element});
      }
      return value;
    }
    default:
      invalid(ins, "an operand of this kind cannot be read as a value");
  }
}

uint32_t Kernel::to_working(uint32_t bits, ir::Type type) {
  switch (type) {
    case ir::Type::kF32:
    case ir::Type::kTF32:
      return bitcast(t_f32, bits);
    case ir::Type::kF64:
      return bitcast(t_f64, bits);
    case ir::Type::kF16:
      return f16_to_f32(bits);
    case ir::Type::kBF16:
      return bf16_to_f32(bits);
    default:
      break;
  }
  if (narrow_integer(type) && ir::is_signed(type)) {
    return b.op(spv::Op::OpBitFieldSExtract, t_u32,
                {bits, b.u32(0), b.u32(ir::type_size(type) * 8)});
  }
  return bits;
}

uint32_t Kernel::from_working(uint32_t value, ir::Type type) {
  switch (type) {
    case ir::Type::kF32:
    case ir::Type::kTF32:
      return bitcast(t_u32, value);
    case ir::Type::kF64:
      return bitcast(t_u64, value);
    case ir::Type::kF16:
      return f32_to_f16(value);
    case ir::Type::kBF16:
      return f32_to_bf16(value);
    default:
      break;
  }
  if (narrow_integer(type)) {
    return b.op(spv::Op::OpBitwiseAnd, t_u32,
                {value, b.u32((1u << (ir::type_size(type) * 8)) - 1)});
  }
  return value;
}

uint32_t Kernel::read(const ir::Instruction& ins, const ir::Operand& operand, ir::Type type) {
  if (type == ir::Type::kPred) return read_predicate(ins, operand);
  if (type == ir::Type::kF64) f64(ins);
  if (ir::is_float(type) && ir::type_size(type) > 8) invalid(ins, "no such float type");
  if (operand.kind == ir::OperandKind::kFloat || operand.kind == ir::OperandKind::kInteger) {
    return constant_of(ins, operand, type);
  }
  const uint32_t size = ir::type_size(type);
  if (size == 0 || size > 8)
    refuse(ins, std::string("type .") + ir::type_name(type) + " is not supported");
  return to_working(read_bits(ins, operand, size), type);
}

// Immediates become constants of the working type directly, so no conversion code is emitted.
uint32_t Kernel::constant_of(const ir::Instruction& ins, const ir::Operand& operand,
                             ir::Type type) {
  const uint32_t size = ir::type_size(type);
  if (ir::is_float(type)) {
    double value = 0;
    if (operand.kind == ir::OperandKind::kInteger) {
      // A hex integer given for a float type is its bit pattern.
      const uint64_t bits = static_cast<uint64_t>(operand.integer);
      if (type == ir::Type::kF64) return b.constant_float(64, bits);
      if (type == ir::Type::kF32 || type == ir::Type::kTF32) {
        return b.constant_float(32, static_cast<uint32_t>(bits));
      }
      return to_working(b.u32(static_cast<uint32_t>(bits) & 0xFFFF), type);
    }
    if (operand.is_double) {
      std::memcpy(&value, &operand.float_bits, 8);
    } else {
      float f;
      const uint32_t bits = static_cast<uint32_t>(operand.float_bits);
      std::memcpy(&f, &bits, 4);
      value = f;
    }
    if (type == ir::Type::kF64) {
      uint64_t bits;
      std::memcpy(&bits, &value, 8);
      return b.constant_float(64, bits);
    }
    if (type == ir::Type::kF16 && !operand.is_double) {
      // 0fXXXXXXXX for a half: as PTX reads it, the f32 value rounded to f16 at run time.
      return to_working(f32_to_f16(b.constant_float(32, operand.float_bits)), type);
    }
    const float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return b.constant_float(32, bits);
  }
  if (operand.kind == ir::OperandKind::kFloat) {
    return read_bits(ins, operand, size);  // a float literal's bits for a .b type
  }
  uint64_t value = static_cast<uint64_t>(operand.integer);
  if (size == 8) return b.u64(value);
  const uint32_t width = size * 8;
  uint32_t v = static_cast<uint32_t>(value) & (width >= 32 ? 0xFFFFFFFFu : (1u << width) - 1);
  if (ir::is_signed(type) && width < 32 && (v >> (width - 1)) != 0) v |= ~((1u << width) - 1);
  return b.u32(v);
}

void Kernel::write_bits(const ir::Instruction& ins, const ir::Operand& operand, uint32_t bytes,
                        uint32_t bits, bool sign_extend) {
  if (operand.kind == ir::OperandKind::kSink) return;
  if (operand.kind == ir::OperandKind::kVector) {
    // {a, b}: split the bits, first element from the lowest bytes (mov.b64 {%r1, %r2}, %rd).
    const size_t n = operand.elements.size();
    if (n == 0 || bytes % n != 0) invalid(ins, "a vector operand that does not fill the type");
    const uint32_t part = bytes / static_cast<uint32_t>(n);
    const uint32_t type = bytes == 8 ? t_u64 : t_u32;
    for (size_t i = 0; i < n; ++i) {
      uint32_t element = bits;
      if (i > 0) {
        element = b.op(spv::Op::OpShiftRightLogical, type,
                       {bits, b.u32(static_cast<uint32_t>(i) * part * 8)});
      }
      if (bytes == 8 && part < 8) element = b.op(spv::Op::OpUConvert, t_u32, {element});
      if (part < 4) {
        element = b.op(spv::Op::OpBitwiseAnd, t_u32, {element, b.u32((1u << (part * 8)) - 1)});
      }
      write_bits(ins, operand.elements[i], part, element, false);
    }
    return;
  }
  if (operand.kind != ir::OperandKind::kRegister) invalid(ins, "the destination is not a register");
  const uint32_t have = register_bytes(operand.reg);
  if (have == 0) invalid(ins, "a predicate register where a value is expected");
  uint32_t value = bits;
  if (bytes < 4 && have > bytes && sign_extend) {
    value = b.op(spv::Op::OpBitFieldSExtract, t_u32, {value, b.u32(0), b.u32(bytes * 8)});
  }
  if (have == 8 && bytes <= 4) {
    value = b.op(sign_extend ? spv::Op::OpSConvert : spv::Op::OpUConvert, t_u64, {value});
  } else if (have <= 4 && bytes == 8) {
    value = b.op(spv::Op::OpUConvert, t_u32, {value});
  }
  if (have < 4 && (bytes > have || sign_extend)) {
    value = b.op(spv::Op::OpBitwiseAnd, t_u32, {value, b.u32((1u << (have * 8)) - 1)});
  }
  store_register(operand.reg, value);
}

void Kernel::write(const ir::Instruction& ins, const ir::Operand& operand, ir::Type type,
                   uint32_t value) {
  if (type == ir::Type::kPred) {
    if (operand.kind == ir::OperandKind::kSink) return;
    if (operand.kind != ir::OperandKind::kRegister)
      invalid(ins, "the destination is not a register");
    write_predicate(ins, operand.reg, value);
    return;
  }
  const uint32_t size = ir::type_size(type);
  write_bits(ins, operand, size, from_working(value, type), ir::is_signed(type));
}

// ---- f16 and bf16 ------------------------------------------------------------------------
// Conversions by integer arithmetic, so that they are exact and the same on every device
// (GLSL's packHalf2x16 leaves the rounding to the implementation).

uint32_t Kernel::f16_to_f32(uint32_t bits) {
  // UnpackHalf2x16 is exact: every f16 value, subnormals and NaN payloads aside, is an f32.
  const uint32_t v2 = b.type_vector(t_f32, 2);
  const uint32_t pair = glsl(v2, GLSLstd450UnpackHalf2x16, {bits});
  return b.op(spv::Op::OpCompositeExtract, t_f32, {pair, 0});
}

uint32_t Kernel::f32_to_f16(uint32_t value) {
  // Round to nearest even, overflow to infinity, subnormals rounded correctly.
  const uint32_t x = bitcast(t_u32, value);
  const uint32_t sign =
      b.op(spv::Op::OpBitwiseAnd, t_u32,
           {b.op(spv::Op::OpShiftRightLogical, t_u32, {x, b.u32(16)}), b.u32(0x8000)});
  const uint32_t abs = b.op(spv::Op::OpBitwiseAnd, t_u32, {x, b.u32(0x7FFFFFFF)});
  // Normal range: rebias the exponent, round the 13 dropped bits to nearest even.
  const uint32_t lsb =
      b.op(spv::Op::OpBitwiseAnd, t_u32,
           {b.op(spv::Op::OpShiftRightLogical, t_u32, {abs, b.u32(13)}), b.u32(1)});
  const uint32_t rounded =
      b.op(spv::Op::OpIAdd, t_u32, {abs, b.op(spv::Op::OpIAdd, t_u32, {b.u32(0xFFF), lsb})});
  const uint32_t normal = b.op(
      spv::Op::OpISub, t_u32,
      {b.op(spv::Op::OpShiftRightLogical, t_u32, {rounded, b.u32(13)}), b.u32((127 - 15) << 10)});
  // Subnormal results (|x| < 2^-14): add the magic number 0.5 as a float, whose mantissa then
  // holds the value rounded to nearest even at the f16 subnormal's last place.
  const uint32_t magic = b.constant_float(32, 0x3F000000u);  // 0.5f
  const uint32_t absf = bitcast(t_f32, abs);
  const uint32_t sum = bitcast(t_u32, b.op(spv::Op::OpFAdd, t_f32, {absf, magic}));
  const uint32_t subnormal = b.op(spv::Op::OpISub, t_u32, {sum, b.u32(0x3F000000u)});
  const uint32_t is_subnormal = b.op(spv::Op::OpULessThan, t_bool, {abs, b.u32(0x38800000u)});
  const uint32_t is_overflow =
      b.op(spv::Op::OpUGreaterThanEqual, t_bool, {abs, b.u32(0x477FF000u)});
  const uint32_t is_nan = b.op(spv::Op::OpUGreaterThan, t_bool, {abs, b.u32(0x7F800000u)});
  uint32_t result = select(t_u32, is_subnormal, subnormal, normal);
  result = select(t_u32, is_overflow, b.u32(0x7C00), result);
  result = b.op(spv::Op::OpBitwiseOr, t_u32, {sign, result});
  // NaN becomes the canonical NaN that NVIDIA GPUs (and the CPU PTX device) produce.
  return select(t_u32, is_nan, b.u32(0x7FFF), result);
}

uint32_t Kernel::bf16_to_f32(uint32_t bits) {
  return bitcast(t_f32, b.op(spv::Op::OpShiftLeftLogical, t_u32, {bits, b.u32(16)}));
}

uint32_t Kernel::f32_to_bf16(uint32_t value) {
  const uint32_t x = bitcast(t_u32, value);
  const uint32_t lsb = b.op(spv::Op::OpBitwiseAnd, t_u32,
                            {b.op(spv::Op::OpShiftRightLogical, t_u32, {x, b.u32(16)}), b.u32(1)});
  const uint32_t rounded =
      b.op(spv::Op::OpShiftRightLogical, t_u32,
           {b.op(spv::Op::OpIAdd, t_u32, {x, b.op(spv::Op::OpIAdd, t_u32, {b.u32(0x7FFF), lsb})}),
            b.u32(16)});
  const uint32_t abs = b.op(spv::Op::OpBitwiseAnd, t_u32, {x, b.u32(0x7FFFFFFF)});
  const uint32_t is_nan = b.op(spv::Op::OpUGreaterThan, t_bool, {abs, b.u32(0x7F800000u)});
  // NaN becomes the canonical NaN, as for f16.
  return select(t_u32, is_nan, b.u32(0x7FFF), rounded);
}

// ---- special registers and symbols -------------------------------------------------------

uint32_t Kernel::special(const ir::Instruction& ins, const ir::Operand& operand) {
  const uint32_t c = operand.component;
  auto component = [&](uint32_t builtin) {
    if (c > 2) invalid(ins, "a special register component beyond .z");
    const uint32_t v3 = b.type_vector(t_u32, 3);
    const uint32_t all = b.op(spv::Op::OpLoad, v3, {builtin});
    return b.op(spv::Op::OpCompositeExtract, t_u32, {all, c});
  };
  if (is_warp_special(operand.special)) return warp_special(ins, operand.special);
  switch (operand.special) {
    case ir::Special::kTid:
      if (warp_) {
        if (c > 2) invalid(ins, "a special register component beyond .z");
        return tid_[c];
      }
      return component(builtin_local_id_);
    case ir::Special::kCtaid:
      return component(builtin_group_id_);
    case ir::Special::kNctaid:
      return component(builtin_groups_);
    case ir::Special::kNtid:
      if (c > 2) invalid(ins, "a special register component beyond .z");
      return block_size_[c];
    case ir::Special::kDynamicSmemSize:
      return dynamic_shared_ ? shared_bytes_spec_ : b.u32(0);
    default:
      refuse(ins, std::string("special register ") + ir::special_name(operand.special) +
                      " has no Vulkan counterpart here");
  }
}

// The address of a variable as the kernel sees it: a byte offset in the shared or local array.
uint32_t Kernel::symbol_address(const ir::Instruction& ins, const ir::SymbolRef& symbol) {
  int64_t offset = -1;
  if (symbol.kind == ir::SymbolKind::kModuleVariable && symbol.index < module_var_offset_.size()) {
    offset = module_var_offset_[symbol.index];
  } else if (symbol.kind == ir::SymbolKind::kFunctionVariable &&
             symbol.index < function_var_offset_.size()) {
    offset = function_var_offset_[symbol.index];
  } else if (symbol.kind == ir::SymbolKind::kParam) {
    refuse(ins, "taking the address of a kernel parameter is not supported");
  }
  if (offset < 0) refuse(ins, "the address of this symbol is not supported");
  return b.u32(static_cast<uint32_t>(offset));
}

}  // namespace hal::ptx_spirv
