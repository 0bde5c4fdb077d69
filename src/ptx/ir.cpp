// Name tables and small helpers of the PTX IR (ir.h).
#include "ptx/ir.h"

namespace hal::ptx::ir {

uint32_t type_size(Type type) {
  switch (type) {
    case Type::kNone:
    case Type::kPred:
      return 0;
    case Type::kB8:
    case Type::kU8:
    case Type::kS8:
    case Type::kE4M3:
    case Type::kE5M2:
      return 1;
    case Type::kB16:
    case Type::kU16:
    case Type::kS16:
    case Type::kF16:
    case Type::kBF16:
    case Type::kE4M3x2:
    case Type::kE5M2x2:
      return 2;
    case Type::kB32:
    case Type::kU32:
    case Type::kS32:
    case Type::kF32:
    case Type::kF16x2:
    case Type::kBF16x2:
    case Type::kTF32:
      return 4;
    case Type::kB64:
    case Type::kU64:
    case Type::kS64:
    case Type::kF64:
      return 8;
    case Type::kB128:
      return 16;
  }
  return 0;
}

const char* type_name(Type type) {
  switch (type) {
    // clang-format off
    case Type::kNone: return "none";
    case Type::kPred: return "pred";
    case Type::kB8: return "b8";
    case Type::kB16: return "b16";
    case Type::kB32: return "b32";
    case Type::kB64: return "b64";
    case Type::kB128: return "b128";
    case Type::kU8: return "u8";
    case Type::kU16: return "u16";
    case Type::kU32: return "u32";
    case Type::kU64: return "u64";
    case Type::kS8: return "s8";
    case Type::kS16: return "s16";
    case Type::kS32: return "s32";
    case Type::kS64: return "s64";
    case Type::kF16: return "f16";
    case Type::kF16x2: return "f16x2";
    case Type::kBF16: return "bf16";
    case Type::kBF16x2: return "bf16x2";
    case Type::kTF32: return "tf32";
    case Type::kF32: return "f32";
    case Type::kF64: return "f64";
    case Type::kE4M3: return "e4m3";
    case Type::kE5M2: return "e5m2";
    case Type::kE4M3x2: return "e4m3x2";
    case Type::kE5M2x2: return "e5m2x2";
      // clang-format on
  }
  return "none";
}

bool is_float(Type type) {
  switch (type) {
    case Type::kF16:
    case Type::kF16x2:
    case Type::kBF16:
    case Type::kBF16x2:
    case Type::kTF32:
    case Type::kF32:
    case Type::kF64:
    case Type::kE4M3:
    case Type::kE5M2:
    case Type::kE4M3x2:
    case Type::kE5M2x2:
      return true;
    default:
      return false;
  }
}

bool is_signed(Type type) {
  return type == Type::kS8 || type == Type::kS16 || type == Type::kS32 || type == Type::kS64;
}

bool is_unsigned(Type type) {
  return type == Type::kU8 || type == Type::kU16 || type == Type::kU32 || type == Type::kU64;
}

bool is_bits(Type type) {
  return type == Type::kB8 || type == Type::kB16 || type == Type::kB32 || type == Type::kB64 ||
         type == Type::kB128;
}

const char* space_name(Space space) {
  switch (space) {
    // clang-format off
    case Space::kNone: return "generic";
    case Space::kReg: return "reg";
    case Space::kGlobal: return "global";
    case Space::kShared: return "shared";
    case Space::kSharedCluster: return "shared::cluster";
    case Space::kLocal: return "local";
    case Space::kParam: return "param";
    case Space::kConst: return "const";
      // clang-format on
  }
  return "generic";
}

const char* mod_name(Mod mod) {
  static constexpr const char* kNames[] = {
#define HAL_PTX_MOD_NAME(name, text) text,
      HAL_PTX_MODIFIERS(HAL_PTX_MOD_NAME)
#undef HAL_PTX_MOD_NAME
  };
  const size_t index = static_cast<size_t>(mod);
  return index < sizeof(kNames) / sizeof(kNames[0]) ? kNames[index] : "?";
}

const char* opcode_name(Opcode opcode) {
  static constexpr const char* kNames[] = {
#define HAL_PTX_OPCODE_NAME(name, text) text,
      HAL_PTX_OPCODES(HAL_PTX_OPCODE_NAME)
#undef HAL_PTX_OPCODE_NAME
  };
  const size_t index = static_cast<size_t>(opcode);
  return index < sizeof(kNames) / sizeof(kNames[0]) ? kNames[index] : "?";
}

const char* special_name(Special special) {
  static constexpr const char* kNames[] = {
#define HAL_PTX_SPECIAL_NAME(name, text) text,
      HAL_PTX_SPECIALS(HAL_PTX_SPECIAL_NAME)
#undef HAL_PTX_SPECIAL_NAME
  };
  const size_t index = static_cast<size_t>(special);
  return index < sizeof(kNames) / sizeof(kNames[0]) ? kNames[index] : "?";
}

uint64_t Variable::size() const {
  return count * vector * type_size(type);
}

uint32_t Variable::alignment() const {
  if (align != 0) return align;
  const uint32_t element = type_size(type) * vector;
  return element != 0 ? element : 1;
}

}  // namespace hal::ptx::ir
