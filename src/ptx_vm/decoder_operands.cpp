// The decoder's operands (decoder_impl.h): registers of the inlined copies, immediates in the
// constant pool, special registers, variable addresses, with PTX's type rules.
#include "ptx_vm/decoder_impl.h"

#include "ptx_vm/half.h"

#include <algorithm>
#include <cstring>

namespace hal::ptx_vm::decoding {

// ===========================================================================================
// Operands
// ===========================================================================================

Ref Decoder::register_ref(const ir::Operand& operand, uint32_t* bytes, bool* is_pred) {
  *bytes = 0;
  *is_pred = false;
  const ir::Function& f = function(copy_->function);
  if (operand.kind == ir::OperandKind::kRegister) {
    if (operand.reg >= f.registers.size()) return kNoRef;
    const ir::Register& r = f.registers[operand.reg];
    *is_pred = r.type == ir::Type::kPred;
    *bytes = ir::type_size(r.type) * r.vector;
    return copy_->registers[operand.reg];
  }
  // Old-style .reg formal parameters are named like variables.
  if (operand.kind == ir::OperandKind::kSymbol && operand.integer == 0) {
    const std::vector<ir::Variable>* list = nullptr;
    const std::vector<Ref>* refs = nullptr;
    if (operand.symbol.kind == ir::SymbolKind::kParam) {
      list = &f.params;
      refs = &copy_->reg_params;
    } else if (operand.symbol.kind == ir::SymbolKind::kReturn) {
      list = &f.returns;
      refs = &copy_->reg_returns;
    }
    if (list != nullptr && operand.symbol.index < list->size() &&
        (*list)[operand.symbol.index].space == ir::Space::kReg) {
      const ir::Variable& v = (*list)[operand.symbol.index];
      *is_pred = v.type == ir::Type::kPred;
      *bytes = ir::type_size(v.type);
      return (*refs)[operand.symbol.index];
    }
  }
  return kNoRef;
}

uint32_t Decoder::register_bytes(const ir::Operand& operand) const {
  uint32_t bytes = 0;
  bool pred = false;
  const_cast<Decoder*>(this)->register_ref(operand, &bytes, &pred);
  return bytes;
}

bool Decoder::immediate_bytes(const ir::Operand& operand, ir::Type type, uint8_t* out,
                              uint32_t* size) {
  *size = ir::type_size(type);
  if (type == ir::Type::kPred) *size = 4;
  if (*size == 0 || *size > 16)
    return fail("an immediate cannot be of type ." + std::string(ir::type_name(type)));
  std::memset(out, 0, 16);
  if (operand.kind == ir::OperandKind::kInteger) {
    const int64_t v = operand.integer;
    if (type == ir::Type::kPred) {
      const uint32_t word = v != 0 ? kFullMask : 0;
      std::memcpy(out, &word, 4);
    } else if (type == ir::Type::kF32) {
      const float f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
    } else if (type == ir::Type::kF64) {
      const double d = static_cast<double>(v);
      std::memcpy(out, &d, 8);
    } else if (type == ir::Type::kF16 || type == ir::Type::kBF16) {
      const uint16_t h = type == ir::Type::kF16
                             ? float_to_half(static_cast<float>(v), Round::kNearest)
                             : float_to_bf16(static_cast<float>(v), Round::kNearest);
      std::memcpy(out, &h, 2);
    } else {
      std::memcpy(out, &v, std::min<uint32_t>(*size, 8));  // two's complement, truncated
    }
    return true;
  }
  if (operand.kind == ir::OperandKind::kFloat) {
    double value = 0;
    if (operand.is_double) {
      std::memcpy(&value, &operand.float_bits, 8);
    } else {
      float f = 0;
      const uint32_t bits = static_cast<uint32_t>(operand.float_bits);
      std::memcpy(&f, &bits, 4);
      value = f;
    }
    switch (type) {
      case ir::Type::kF64: {
        if (operand.is_double) {
          std::memcpy(out, &operand.float_bits, 8);
        } else {
          std::memcpy(out, &value, 8);
        }
        return true;
      }
      case ir::Type::kF32: {
        if (!operand.is_double) {
          const uint32_t bits = static_cast<uint32_t>(operand.float_bits);
          std::memcpy(out, &bits, 4);
        } else {
          const float f = static_cast<float>(value);
          std::memcpy(out, &f, 4);
        }
        return true;
      }
      case ir::Type::kF16:
      case ir::Type::kBF16: {
        const uint16_t h = type == ir::Type::kF16
                               ? float_to_half(static_cast<float>(value), Round::kNearest)
                               : float_to_bf16(static_cast<float>(value), Round::kNearest);
        std::memcpy(out, &h, 2);
        return true;
      }
      default:
        // A hexadecimal float literal in a bit-typed or integer instruction is its bit
        // pattern (mov.b32 %r1, 0f3F800000).
        if (!operand.is_double && *size == 4) {
          const uint32_t bits = static_cast<uint32_t>(operand.float_bits);
          std::memcpy(out, &bits, 4);
          return true;
        }
        if (*size == 8) {
          std::memcpy(out, &operand.float_bits, 8);
          return true;
        }
        return fail("a floating-point literal does not fit ." + std::string(ir::type_name(type)));
    }
  }
  return fail("expected a register or an immediate");
}

Ref Decoder::source(const ir::Operand& operand, ir::Type type, bool allow_wider) {
  if (operand.kind == ir::OperandKind::kInteger || operand.kind == ir::OperandKind::kFloat) {
    uint8_t bytes[16];
    uint32_t size = 0;
    if (!immediate_bytes(operand, type, bytes, &size)) return kNoRef;
    return constant(bytes, size);
  }
  if (operand.kind == ir::OperandKind::kSpecial) {
    if (ir::type_size(type) != 4) {
      fail(std::string("special register ") + ir::special_name(operand.special) +
           " is 32 bits wide, not ." + ir::type_name(type));
      return kNoRef;
    }
    return special(operand.special, operand.component);
  }
  if (operand.kind == ir::OperandKind::kSymbol) {
    uint32_t bytes = 0;
    bool pred = false;
    const Ref reg = register_ref(operand, &bytes, &pred);
    if (reg == kNoRef) {
      // The address of a variable, as a value.
      uint64_t value = 0;
      if (!symbol_value(operand, &value)) return kNoRef;
      const uint32_t size = ir::type_size(type);
      if (size != 8 && size != 4) {
        fail("the address of a variable needs a 32- or 64-bit type");
        return kNoRef;
      }
      return constant(&value, size);
    }
    if (pred != (type == ir::Type::kPred) ||
        (bytes != ir::type_size(type) && !pred && !(allow_wider && bytes > ir::type_size(type)))) {
      fail("a parameter register of the wrong type for ." + std::string(ir::type_name(type)));
      return kNoRef;
    }
    return reg;
  }
  if (operand.kind != ir::OperandKind::kRegister) {
    fail("expected a register or an immediate for a ." + std::string(ir::type_name(type)) +
         " operand");
    return kNoRef;
  }
  uint32_t bytes = 0;
  bool pred = false;
  const Ref reg = register_ref(operand, &bytes, &pred);
  if (reg == kNoRef) {
    fail("unknown register");
    return kNoRef;
  }
  if (type == ir::Type::kPred) {
    if (!pred) {
      fail("expected a predicate register");
      return kNoRef;
    }
    return reg;
  }
  if (pred) {
    fail("a predicate register where a ." + std::string(ir::type_name(type)) + " value is needed");
    return kNoRef;
  }
  const uint32_t want = ir::type_size(type);
  if (bytes != want && !(allow_wider && bytes > want)) {
    fail("a " + std::to_string(bytes * 8) + "-bit register where the instruction's type ." +
         ir::type_name(type) + " needs " + std::to_string(want * 8) + " bits");
    return kNoRef;
  }
  return reg;
}

Ref Decoder::destination(const ir::Operand& operand, ir::Type type, bool allow_wider) {
  if (operand.kind != ir::OperandKind::kRegister && !(operand.kind == ir::OperandKind::kSymbol)) {
    fail("the destination must be a register");
    return kNoRef;
  }
  if (operand.kind == ir::OperandKind::kSymbol) {
    uint32_t bytes = 0;
    bool pred = false;
    if (register_ref(operand, &bytes, &pred) == kNoRef) {
      fail("the destination must be a register");
      return kNoRef;
    }
  }
  return source(operand, type, allow_wider);
}

Ref Decoder::predicate(const ir::Operand& operand, bool* negate) {
  if (negate != nullptr) *negate = operand.negate;
  if (operand.kind == ir::OperandKind::kInteger) {
    const uint32_t word = operand.integer != 0 ? kFullMask : 0;
    return constant(&word, 4);
  }
  uint32_t bytes = 0;
  bool pred = false;
  const Ref reg = register_ref(operand, &bytes, &pred);
  if (reg == kNoRef || !pred) {
    fail("expected a predicate register");
    return kNoRef;
  }
  return reg;
}

Ref Decoder::special(ir::Special sp, uint32_t component) {
  using S = ir::Special;
  SpecialRows& rows = k_.specials;
  Ref* slot = nullptr;
  switch (sp) {
    case S::kTid:
      if (component < 3) slot = &rows.tid[component];
      break;
    case S::kNtid:
      if (component < 3) slot = &rows.ntid[component];
      break;
    case S::kCtaid:
      if (component < 3) slot = &rows.ctaid[component];
      break;
    case S::kNctaid:
      if (component < 3) slot = &rows.nctaid[component];
      break;
    case S::kLaneid:
      slot = &rows.laneid;
      break;
    case S::kWarpid:
      slot = &rows.warpid;
      break;
    case S::kNwarpid:
      slot = &rows.nwarpid;
      break;
    case S::kLanemaskEq:
      slot = &rows.lanemask[0];
      break;
    case S::kLanemaskLe:
      slot = &rows.lanemask[1];
      break;
    case S::kLanemaskLt:
      slot = &rows.lanemask[2];
      break;
    case S::kLanemaskGe:
      slot = &rows.lanemask[3];
      break;
    case S::kLanemaskGt:
      slot = &rows.lanemask[4];
      break;
    case S::kSmid:
      slot = &rows.smid;
      break;
    case S::kNsmid:
      slot = &rows.nsmid;
      break;
    case S::kGridid:
      slot = &rows.gridid;
      break;
    case S::kDynamicSmemSize:
      slot = &rows.dynamic_smem;
      break;
    case S::kTotalSmemSize:
    case S::kAggrSmemSize:
      slot = &rows.total_smem;
      break;
    // A one-CTA cluster: cluster ids are the CTA's coordinates relative to itself.
    case S::kClusterCtaid:
    case S::kClusterCtarank:
    case S::kClusterid:
    case S::kIsExplicitCluster:
    case S::kEnvreg:
    case S::kReserved:
      slot = &rows.zero32;
      break;
    case S::kClusterNctaid:
    case S::kClusterNctarank:
    case S::kNclusterid: {
      const uint32_t one = 1;
      return constant(&one, 4);
    }
    default:
      fail(std::string("special register ") + ir::special_name(sp) +
           " can only be read by mov on the CPU PTX device");
      return kNoRef;
  }
  if (slot == nullptr) {
    fail(std::string("special register ") + ir::special_name(sp) + " has no such component");
    return kNoRef;
  }
  if (*slot == kNoRef) *slot = alloc_row(4);
  return *slot;
}

bool Decoder::symbol_address(const ir::Operand& operand, MemSpace space, uint64_t* out) {
  const ir::SymbolRef& symbol = operand.symbol;
  uint64_t base = 0;
  MemSpace home = MemSpace::kGlobal;
  if (symbol.kind == ir::SymbolKind::kModuleVariable) {
    if (symbol.index >= module_.variables.size()) return fail("unknown variable");
    const ir::Variable& v = module_.variables[symbol.index];
    switch (v.space) {
      case ir::Space::kGlobal:
      case ir::Space::kConst:
        home = v.space == ir::Space::kConst ? MemSpace::kConst : MemSpace::kGlobal;
        base = addresses_.variables[symbol.index];
        break;
      case ir::Space::kShared:
        home = MemSpace::kShared;
        base = (v.unsized || v.linkage == ir::Linkage::kExtern) ? dynamic_offset_
                                                                : module_shared_[symbol.index];
        if (base == kUnplaced) return fail("internal: shared variable '" + v.name + "' unplaced");
        break;
      default:
        return fail("variable '" + v.name + "' in ." + ir::space_name(v.space) +
                    " has no address on the CPU PTX device");
    }
  } else if (symbol.kind == ir::SymbolKind::kParam && copy_->is_entry) {
    const ir::Function& f = function(copy_->function);
    if (symbol.index >= k_.info.params.size() || symbol.index >= f.params.size()) {
      return fail("unknown parameter");
    }
    home = MemSpace::kParam;
    base = k_.info.params[symbol.index].offset;
  } else if (const Location* loc = variable_location(symbol); loc != nullptr) {
    home = loc->space;
    base = loc->offset == kUnplaced ? dynamic_offset_ : loc->offset;
    if (loc->space == MemSpace::kLocal && loc->offset == kUnplaced) {
      return fail("a parameter whose argument is not a .param variable has no address");
    }
  } else if (symbol.kind == ir::SymbolKind::kFunction || symbol.kind == ir::SymbolKind::kLabel) {
    return fail("the addresses of functions and labels are not supported on the CPU PTX device");
  } else {
    return fail("unknown symbol");
  }
  uint64_t value = base + static_cast<uint64_t>(operand.integer);
  if (space == MemSpace::kGeneric) {
    // A generic address: shared and local variables live in their windows.
    if (home == MemSpace::kShared) value += kSharedWindow;
    if (home == MemSpace::kLocal) value += kLocalWindow;
    if (home == MemSpace::kParam) {
      return fail("kernel parameters have no generic address on the CPU PTX device");
    }
  } else if (space != home && !(space == MemSpace::kGlobal && home == MemSpace::kConst) &&
             !(space == MemSpace::kConst && home == MemSpace::kGlobal)) {
    // ld.param of a function's own parameter: local storage holds it.
    if (!(space == MemSpace::kParam && home == MemSpace::kLocal)) {
      return fail(std::string("the symbol lives in another state space than the instruction's"));
    }
  }
  *out = value;
  return true;
}

bool Decoder::symbol_value(const ir::Operand& operand, uint64_t* out) {
  MemSpace home = MemSpace::kGlobal;
  const ir::SymbolRef& symbol = operand.symbol;
  if (symbol.kind == ir::SymbolKind::kModuleVariable && symbol.index < module_.variables.size()) {
    const ir::Variable& v = module_.variables[symbol.index];
    if (v.space == ir::Space::kShared) home = MemSpace::kShared;
    if (v.space == ir::Space::kConst) home = MemSpace::kConst;
  } else if (symbol.kind == ir::SymbolKind::kParam && copy_->is_entry) {
    home = MemSpace::kParam;
  } else if (const Location* loc = variable_location(symbol); loc != nullptr) {
    home = loc->space;
  }
  return symbol_address(operand, home, out);
}

bool Decoder::address(const ir::Operand& operand, MemSpace space, Address* out) {
  *out = Address{};
  out->space = space;
  if (operand.kind != ir::OperandKind::kAddress) return fail("expected an address in [ ]");
  out->disp = operand.integer;
  switch (operand.base) {
    case ir::AddressBase::kNone:
      return true;
    case ir::AddressBase::kRegister: {
      ir::Operand reg;
      reg.kind = ir::OperandKind::kRegister;
      reg.reg = operand.reg;
      uint32_t bytes = 0;
      bool pred = false;
      out->base = register_ref(reg, &bytes, &pred);
      if (out->base == kNoRef || pred || (bytes != 4 && bytes != 8)) {
        return fail("an address register must be 32 or 64 bits wide");
      }
      out->base_bytes = bytes;
      return true;
    }
    case ir::AddressBase::kSymbol: {
      // [name + k]: a .reg-style parameter used as an address register, or a variable.
      ir::Operand sym;
      sym.kind = ir::OperandKind::kSymbol;
      sym.symbol = operand.symbol;
      sym.integer = 0;
      uint32_t bytes = 0;
      bool pred = false;
      const Ref reg = register_ref(sym, &bytes, &pred);
      if (reg != kNoRef) {
        if (pred || (bytes != 4 && bytes != 8)) {
          return fail("an address register must be 32 or 64 bits wide");
        }
        out->base = reg;
        out->base_bytes = bytes;
        return true;
      }
      uint64_t value = 0;
      if (!symbol_address(sym, space, &value)) return false;
      out->disp = static_cast<int64_t>(value + static_cast<uint64_t>(operand.integer));
      // ld.param of a .func's own parameter or of a call argument: the thread's local storage.
      const bool entry_param = operand.symbol.kind == ir::SymbolKind::kParam && copy_->is_entry;
      if (space == MemSpace::kParam && !entry_param) {
        const Location* loc = variable_location(operand.symbol);
        if (loc != nullptr && loc->space == MemSpace::kLocal) out->space = MemSpace::kLocal;
      }
      return true;
    }
  }
  return fail("malformed address");
}

}  // namespace hal::ptx_vm::decoding
