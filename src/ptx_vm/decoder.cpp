// The kernel decoder: inlining, memory layout, operand resolution and control flow. The
// instruction families' own decoding lives in ops_*.cpp.
#include "ptx_vm/decoder.h"

#include "ptx_vm/cfg.h"
#include "ptx_vm/decode.h"
#include "ptx_vm/half.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>

namespace hal::ptx_vm {
namespace {

constexpr uint32_t kMaxOps = 1u << 22;
constexpr uint32_t kMaxInlineDepth = 64;
constexpr uint64_t kMaxFrameBytes = 64u << 20;       // per warp
constexpr uint64_t kMaxLocalBytes = 512u << 10;      // per thread (CUDA's limit)
constexpr uint64_t kMaxStaticShared = 1u << 30;      // beyond any device's; the driver checks
constexpr uint32_t kScratchBytes = 2048;             // shared by all instructions
constexpr uint64_t kUnplaced = ~uint64_t{0};

uint64_t align_up(uint64_t value, uint64_t align) {
  return align <= 1 ? value : (value + align - 1) / align * align;
}

// Where a variable of a function body, or a formal parameter, lives.
struct Location {
  MemSpace space = MemSpace::kLocal;
  uint64_t offset = kUnplaced;
};

// One inlined instance of a function (the entry is the first).
struct Copy {
  uint32_t function = 0;
  bool is_entry = false;
  std::vector<Ref> registers;       // per ir::Function::registers
  std::vector<Ref> reg_params;      // .reg-style formals, kNoRef for .param ones
  std::vector<Ref> reg_returns;
  std::vector<Location> params;     // .param formals: the caller's argument variables
  std::vector<Location> returns;
  std::vector<uint32_t> pc_of;      // the first Op of each instruction; [size] = the end
};

struct Fixup {
  uint32_t pc = 0;
  uint32_t copy = 0;
  uint32_t label = 0;
  bool to_end = false;  // ret inside an inlined function
};

std::string quote(const std::string& text) {
  return "'" + text + "'";
}

class Decoder final : public DecodeContext {
 public:
  Decoder(const ir::Module& module, const ModuleAddresses& addresses, size_t entry, Kernel* out)
      : module_(module), addresses_(addresses), entry_(entry), k_(*out) {}

  bool run(std::string* error);

  // DecodeContext
  const ir::Instruction& instruction() const override { return *ins_; }
  bool fail(const std::string& reason) override;
  Ref source(const ir::Operand& operand, ir::Type type, bool allow_wider = false) override;
  Ref destination(const ir::Operand& operand, ir::Type type, bool allow_wider = false) override;
  uint32_t register_bytes(const ir::Operand& operand) const override;
  Ref predicate(const ir::Operand& operand, bool* negate = nullptr) override;
  Ref constant(const void* bytes, uint32_t size) override;
  Ref special(ir::Special special, uint32_t component) override;
  Ref scratch(uint32_t bytes) override;
  Ref carry() override;
  bool address(const ir::Operand& operand, MemSpace space, Address* out) override;
  bool symbol_address(const ir::Operand& operand, MemSpace space, uint64_t* out) override;
  bool symbol_value(const ir::Operand& operand, uint64_t* out) override;
  Kernel& kernel() override { return k_; }
  Op& extra_op() override;

 private:
  const ir::Function& function(uint32_t index) const { return module_.functions[index]; }
  // The defined function a call to |index| runs (a declaration resolves to the definition of
  // the same name), or |index| itself.
  uint32_t definition_of(uint32_t index) const;

  bool plan_memory();
  bool collect(uint32_t function, std::vector<uint8_t>* reachable, uint32_t depth);
  bool place_variable(const ir::Variable& variable, uint64_t* shared_top, uint64_t* local_top,
                      uint32_t line, Location* out);
  bool expand(uint32_t function, Copy* copy, uint32_t depth);
  bool decode_instruction(const ir::Instruction& ins, uint32_t copy_index, uint32_t depth);
  bool decode_call(const ir::Instruction& ins, uint32_t copy_index, uint32_t depth);
  bool decode_control(const ir::Instruction& ins, uint32_t copy_index, Op& op, bool* handled);
  bool decode_barrier(const ir::Instruction& ins, Op& op);
  bool finish(std::string* error);

  Ref alloc_row(uint32_t bytes_per_lane);
  Ref alloc_word();
  Ref register_ref(const ir::Operand& operand, uint32_t* bytes, bool* is_pred);
  bool immediate_bytes(const ir::Operand& operand, ir::Type type, uint8_t* out, uint32_t* size);
  const Location* variable_location(const ir::SymbolRef& symbol) const;
  void push_op(const Op& op);

  const ir::Module& module_;
  const ModuleAddresses& addresses_;
  size_t entry_;
  Kernel& k_;

  std::vector<std::unique_ptr<Copy>> copies_;
  std::vector<uint32_t> call_chain_;
  std::vector<Fixup> fixups_;
  std::map<std::string, uint32_t> definitions_;  // name -> defined function index

  // Memory layout.
  std::vector<uint64_t> module_shared_;                  // per module variable; kUnplaced
  std::vector<std::vector<Location>> function_vars_;     // per function, per body variable
  uint64_t dynamic_align_ = 0;                           // 0: no .extern .shared
  uint64_t dynamic_offset_ = 0;

  // Frame layout.
  uint64_t frame_top_ = kScratchBytes;
  Ref word_block_ = kNoRef;
  uint32_t words_left_ = 0;
  uint32_t scratch_used_ = 0;
  std::map<std::string, Ref> constants_;
  std::map<uint32_t, Ref> specials_;
  Ref carry_ = kNoRef;

  // The instruction being decoded.
  const ir::Instruction* ins_ = nullptr;
  Copy* copy_ = nullptr;
  std::vector<Op> extras_;
  std::string error_;
};

// ===========================================================================================
// Errors and storage
// ===========================================================================================

bool Decoder::fail(const std::string& reason) {
  if (!error_.empty()) return false;
  if (ins_ != nullptr) {
    error_ = "line " + std::to_string(ins_->line) + ": " + quote(ins_->text) + ": " + reason;
  } else {
    error_ = reason;
  }
  return false;
}

Ref Decoder::alloc_row(uint32_t bytes_per_lane) {
  const uint64_t bytes = uint64_t{bytes_per_lane} * kWarpSize;
  const uint64_t at = align_up(frame_top_, std::min<uint64_t>(bytes, 64));
  frame_top_ = at + bytes;
  if (frame_top_ > kMaxFrameBytes) return kNoRef;
  return static_cast<Ref>(at);
}

Ref Decoder::alloc_word() {
  if (words_left_ == 0) {
    word_block_ = alloc_row(2);  // 64 bytes: 16 predicate words
    if (word_block_ == kNoRef) return kNoRef;
    words_left_ = 16;
  }
  const Ref ref = word_block_ + (16 - words_left_) * 4;
  --words_left_;
  return ref;
}

Ref Decoder::scratch(uint32_t bytes) {
  const uint32_t row = bytes * kWarpSize;
  const uint32_t at = (scratch_used_ + 63) / 64 * 64;
  if (at + row <= kScratchBytes) {
    scratch_used_ = at + row;
    return at;
  }
  return alloc_row(bytes);  // a large request gets its own row
}

Ref Decoder::carry() {
  if (carry_ == kNoRef) {
    carry_ = alloc_word();
    k_.cc_ref = carry_;
  }
  return carry_;
}

Ref Decoder::constant(const void* bytes, uint32_t size) {
  std::string key(static_cast<const char*>(bytes), size);
  if (auto it = constants_.find(key); it != constants_.end()) return it->second;
  const size_t row = size_t{size} * kWarpSize;
  size_t at = align_up(k_.consts.size(), std::min<size_t>(row, 64));
  k_.consts.resize(at + row);
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    std::memcpy(k_.consts.data() + at + size_t{lane} * size, bytes, size);
  }
  const Ref ref = static_cast<Ref>(at) | kConstBit;
  constants_.emplace(std::move(key), ref);
  return ref;
}

Op& Decoder::extra_op() {
  extras_.emplace_back();
  return extras_.back();
}

void Decoder::push_op(const Op& op) {
  k_.code.push_back(op);
  k_.source.push_back(SourceInfo{ins_ != nullptr ? ins_->line : 0,
                                 ins_ != nullptr ? ins_->text : std::string()});
}

uint32_t Decoder::definition_of(uint32_t index) const {
  const ir::Function& f = function(index);
  if (f.has_body) return index;
  if (auto it = definitions_.find(f.name); it != definitions_.end()) return it->second;
  return index;
}

// ===========================================================================================
// Memory layout: which shared variables the kernel uses, and local memory
// ===========================================================================================

bool Decoder::collect(uint32_t index, std::vector<uint8_t>* reachable, uint32_t depth) {
  if ((*reachable)[index]) return true;
  (*reachable)[index] = 1;
  if (depth > kMaxInlineDepth) return fail("calls nest deeper than " +
                                           std::to_string(kMaxInlineDepth) + " functions");
  const ir::Function& f = function(index);
  const auto visit = [&](const ir::SymbolRef& symbol) -> bool {
    if (symbol.kind == ir::SymbolKind::kModuleVariable &&
        symbol.index < module_.variables.size()) {
      const ir::Variable& v = module_.variables[symbol.index];
      if (v.space == ir::Space::kShared && module_shared_[symbol.index] == kUnplaced &&
          !v.unsized && v.linkage != ir::Linkage::kExtern) {
        module_shared_[symbol.index] = 0;  // used; placed below
      }
      if (v.space == ir::Space::kShared && (v.unsized || v.linkage == ir::Linkage::kExtern)) {
        dynamic_align_ = std::max<uint64_t>(dynamic_align_, v.alignment());
      }
    }
    if (symbol.kind == ir::SymbolKind::kFunction && symbol.index < module_.functions.size()) {
      return collect(definition_of(symbol.index), reachable, depth + 1);
    }
    return true;
  };
  std::vector<const ir::Operand*> stack;
  for (const ir::Instruction& ins : f.code) {
    for (const ir::Operand& operand : ins.operands) stack.push_back(&operand);
    while (!stack.empty()) {
      const ir::Operand* o = stack.back();
      stack.pop_back();
      if (o->kind == ir::OperandKind::kSymbol ||
          (o->kind == ir::OperandKind::kAddress && o->base == ir::AddressBase::kSymbol)) {
        if (!visit(o->symbol)) return false;
      }
      for (const ir::Operand& e : o->elements) stack.push_back(&e);
    }
  }
  return true;
}

bool Decoder::place_variable(const ir::Variable& v, uint64_t* shared_top, uint64_t* local_top,
                             uint32_t line, Location* out) {
  const uint64_t align = v.alignment();
  const uint64_t size = v.size();
  switch (v.space) {
    case ir::Space::kShared:
      if (v.unsized || v.linkage == ir::Linkage::kExtern) {
        out->space = MemSpace::kShared;
        out->offset = kUnplaced;  // the dynamic area: resolved once its offset is known
        dynamic_align_ = std::max(dynamic_align_, align);
        return true;
      }
      *shared_top = align_up(*shared_top, align);
      out->space = MemSpace::kShared;
      out->offset = *shared_top;
      *shared_top += size;
      if (*shared_top > kMaxStaticShared) {
        return fail("line " + std::to_string(line) + ": shared variable '" + v.name +
                    "' makes the kernel's shared memory larger than 1 GiB");
      }
      return true;
    case ir::Space::kLocal:
    case ir::Space::kParam:
      *local_top = align_up(*local_top, align);
      out->space = MemSpace::kLocal;
      out->offset = *local_top;
      *local_top += size;
      if (*local_top > kMaxLocalBytes) {
        return fail("line " + std::to_string(line) + ": the kernel needs more than " +
                    std::to_string(kMaxLocalBytes) + " bytes of local memory per thread");
      }
      return true;
    default:
      return fail("line " + std::to_string(line) + ": variables in the ." +
                  ir::space_name(v.space) + " state space inside a function are not supported");
  }
}

bool Decoder::plan_memory() {
  module_shared_.assign(module_.variables.size(), kUnplaced);
  std::vector<uint8_t> reachable(module_.functions.size(), 0);
  if (!collect(static_cast<uint32_t>(entry_), &reachable, 0)) return false;

  uint64_t shared_top = 0;
  uint64_t local_top = 0;
  for (size_t i = 0; i < module_.variables.size(); ++i) {
    if (module_shared_[i] == kUnplaced) continue;
    const ir::Variable& v = module_.variables[i];
    shared_top = align_up(shared_top, v.alignment());
    module_shared_[i] = shared_top;
    shared_top += v.size();
    if (shared_top > kMaxStaticShared) {
      return fail("line " + std::to_string(v.line) + ": shared variable '" + v.name +
                  "' makes the kernel's shared memory larger than 1 GiB");
    }
  }
  function_vars_.resize(module_.functions.size());
  for (size_t f = 0; f < module_.functions.size(); ++f) {
    if (!reachable[f]) continue;
    const ir::Function& fn = module_.functions[f];
    function_vars_[f].resize(fn.variables.size());
    for (size_t i = 0; i < fn.variables.size(); ++i) {
      if (!place_variable(fn.variables[i], &shared_top, &local_top, fn.variables[i].line,
                          &function_vars_[f][i])) {
        return false;
      }
    }
  }
  k_.info.static_shared_bytes = static_cast<uint32_t>(shared_top);
  k_.info.dynamic_shared_align = static_cast<uint32_t>(dynamic_align_);
  dynamic_offset_ = dynamic_align_ != 0 ? align_up(shared_top, dynamic_align_) : shared_top;
  k_.dynamic_shared_offset = static_cast<uint32_t>(dynamic_offset_);
  k_.info.local_bytes = static_cast<uint32_t>(local_top);
  return true;
}

const Location* Decoder::variable_location(const ir::SymbolRef& symbol) const {
  switch (symbol.kind) {
    case ir::SymbolKind::kFunctionVariable:
      if (copy_ != nullptr && symbol.index < function_vars_[copy_->function].size()) {
        return &function_vars_[copy_->function][symbol.index];
      }
      return nullptr;
    case ir::SymbolKind::kParam:
      if (copy_ != nullptr && symbol.index < copy_->params.size()) {
        return &copy_->params[symbol.index];
      }
      return nullptr;
    case ir::SymbolKind::kReturn:
      if (copy_ != nullptr && symbol.index < copy_->returns.size()) {
        return &copy_->returns[symbol.index];
      }
      return nullptr;
    default:
      return nullptr;
  }
}

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
  if (*size == 0 || *size > 16) return fail("an immediate cannot be of type ." +
                                            std::string(ir::type_name(type)));
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
      const uint16_t h = type == ir::Type::kF16 ? float_to_half(static_cast<float>(v), Round::kNearest)
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
    if (pred != (type == ir::Type::kPred) || (bytes != ir::type_size(type) && !pred &&
                                              !(allow_wider && bytes > ir::type_size(type)))) {
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
  if (operand.kind != ir::OperandKind::kRegister &&
      !(operand.kind == ir::OperandKind::kSymbol)) {
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
    case S::kLaneid: slot = &rows.laneid; break;
    case S::kWarpid: slot = &rows.warpid; break;
    case S::kNwarpid: slot = &rows.nwarpid; break;
    case S::kLanemaskEq: slot = &rows.lanemask[0]; break;
    case S::kLanemaskLe: slot = &rows.lanemask[1]; break;
    case S::kLanemaskLt: slot = &rows.lanemask[2]; break;
    case S::kLanemaskGe: slot = &rows.lanemask[3]; break;
    case S::kLanemaskGt: slot = &rows.lanemask[4]; break;
    case S::kSmid: slot = &rows.smid; break;
    case S::kNsmid: slot = &rows.nsmid; break;
    case S::kGridid: slot = &rows.gridid; break;
    case S::kDynamicSmemSize: slot = &rows.dynamic_smem; break;
    case S::kTotalSmemSize:
    case S::kAggrSmemSize: slot = &rows.total_smem; break;
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
      const bool entry_param =
          operand.symbol.kind == ir::SymbolKind::kParam && copy_->is_entry;
      if (space == MemSpace::kParam && !entry_param) {
        const Location* loc = variable_location(operand.symbol);
        if (loc != nullptr && loc->space == MemSpace::kLocal) out->space = MemSpace::kLocal;
      }
      return true;
    }
  }
  return fail("malformed address");
}

// ===========================================================================================
// Inlining and control flow
// ===========================================================================================

bool Decoder::expand(uint32_t index, Copy* copy, uint32_t depth) {
  const ir::Function& f = function(index);
  Copy* saved = copy_;
  copy_ = copy;
  copy->function = index;
  copy->registers.resize(f.registers.size(), kNoRef);
  for (size_t i = 0; i < f.registers.size(); ++i) {
    const ir::Register& r = f.registers[i];
    copy->registers[i] = r.type == ir::Type::kPred ? alloc_word()
                                                   : alloc_row(ir::type_size(r.type) * r.vector);
    if (copy->registers[i] == kNoRef) return fail("the kernel's registers exceed 64 MiB per warp");
  }
  const uint32_t copy_index = static_cast<uint32_t>(copies_.size() - 1);
  copy->pc_of.assign(f.code.size() + 1, 0);
  for (size_t i = 0; i < f.code.size(); ++i) {
    copy_ = copy;
    copy->pc_of[i] = static_cast<uint32_t>(k_.code.size());
    if (!decode_instruction(f.code[i], copy_index, depth)) return false;
    if (k_.code.size() > kMaxOps) {
      return fail("the kernel is larger than " + std::to_string(kMaxOps) +
                  " operations once its calls are inlined");
    }
  }
  copy->pc_of[f.code.size()] = static_cast<uint32_t>(k_.code.size());
  copy_ = saved;
  return true;
}

bool Decoder::decode_call(const ir::Instruction& ins, uint32_t copy_index, uint32_t depth) {
  // call{.uni} [(ret-list),] func [, (arg-list)] [, prototype]
  const ir::Operand* returns = nullptr;
  const ir::Operand* callee = nullptr;
  const ir::Operand* args = nullptr;
  for (const ir::Operand& o : ins.operands) {
    if (o.kind == ir::OperandKind::kList) {
      (callee == nullptr ? returns : args) = &o;
    } else if (callee == nullptr) {
      callee = &o;
    } else {
      return fail("indirect calls through a prototype are not supported on the CPU PTX device");
    }
  }
  if (callee == nullptr || callee->kind != ir::OperandKind::kSymbol ||
      callee->symbol.kind != ir::SymbolKind::kFunction) {
    return fail("indirect calls are not supported on the CPU PTX device");
  }
  const uint32_t target = definition_of(callee->symbol.index);
  const ir::Function& g = function(target);
  const size_t nret = returns != nullptr ? returns->elements.size() : 0;
  const size_t narg = args != nullptr ? args->elements.size() : 0;

  Op guard_branch;
  const bool guarded = ins.guarded;
  uint32_t skip_pc = 0;
  if (guarded) {
    // @p call: branch around the inlined body where the guard is false.
    guard_branch.kind = OpKind::kBranch;
    guard_branch.guard = copy_->registers[ins.guard] | (ins.guard_negated ? 0 : kGuardNegate);
    skip_pc = static_cast<uint32_t>(k_.code.size());
    push_op(guard_branch);
  }

  if (!g.has_body) {
    if (g.name == "__assertfail") {
      Op op;
      op.kind = OpKind::kAssert;
      auto* info = k_.make<AssertInfo>();
      Ref* slots[] = {&info->message, &info->file, &info->line, &info->function};
      for (size_t i = 0; i < narg && i < 4; ++i) {
        const ir::Operand& a = args->elements[i];
        Address where;
        ir::Operand addr;
        addr.kind = ir::OperandKind::kAddress;
        addr.base = ir::AddressBase::kSymbol;
        addr.symbol = a.symbol;
        if (a.kind != ir::OperandKind::kSymbol || !address(addr, MemSpace::kParam, &where)) {
          return fail("__assertfail's arguments must be .param variables");
        }
        // The engine reads the argument from the thread's local storage at this offset.
        *slots[i] = static_cast<Ref>(where.disp);
      }
      op.ext = info;
      push_op(op);
    } else {
      return fail("calls '" + g.name + "', which is declared but not defined in the module; the " +
                  "CPU PTX device provides no external functions but __assertfail");
    }
  } else {
    if (std::find(call_chain_.begin(), call_chain_.end(), target) != call_chain_.end()) {
      return fail("recursive call to '" + g.name +
                  "': the CPU PTX device inlines .func calls and cannot run recursion");
    }
    if (depth >= kMaxInlineDepth) return fail("calls nest too deeply");
    if (nret != g.returns.size() || narg != g.params.size()) {
      return fail("calls '" + g.name + "' with " + std::to_string(narg) + " arguments and " +
                  std::to_string(nret) + " results, but it takes " +
                  std::to_string(g.params.size()) + " and returns " +
                  std::to_string(g.returns.size()));
    }
    copies_.push_back(std::make_unique<Copy>());
    Copy* callee_copy = copies_.back().get();
    Copy* caller = copy_;
    callee_copy->params.resize(g.params.size());
    callee_copy->returns.resize(g.returns.size());
    callee_copy->reg_params.assign(g.params.size(), kNoRef);
    callee_copy->reg_returns.assign(g.returns.size(), kNoRef);
    // Bind formals: .param formals alias the caller's argument variables; .reg formals get
    // their own rows, copied in before the body and out after it.
    struct Copyback {
      Ref from;
      Ref to;
      uint32_t bytes;
      bool pred;
    };
    std::vector<Copyback> after;
    auto bind = [&](const std::vector<ir::Variable>& formals, const ir::Operand* list,
                    std::vector<Location>* locs, std::vector<Ref>* regs, bool is_return) -> bool {
      for (size_t i = 0; i < formals.size(); ++i) {
        const ir::Variable& formal = formals[i];
        const ir::Operand& actual = list->elements[i];
        if (formal.space == ir::Space::kReg) {
          const bool pred = formal.type == ir::Type::kPred;
          const uint32_t bytes = ir::type_size(formal.type);
          (*regs)[i] = pred ? alloc_word() : alloc_row(bytes);
          if ((*regs)[i] == kNoRef) return fail("registers exceed 64 MiB per warp");
          copy_ = caller;
          const Ref value = pred ? predicate(actual) : source(actual, formal.type);
          if (value == kNoRef) return false;
          if (is_return) {
            after.push_back({(*regs)[i], value, bytes, pred});
          } else {
            Op mov;
            mov.fn = copy_row_handler(pred ? 0 : bytes);
            mov.a[0] = (*regs)[i];
            mov.a[1] = value;
            push_op(mov);
          }
          continue;
        }
        if (actual.kind != ir::OperandKind::kSymbol) {
          return fail("argument " + std::to_string(i) + " of the call to '" + g.name +
                      "' must be a .param variable");
        }
        copy_ = caller;
        const Location* loc = variable_location(actual.symbol);
        if (loc == nullptr || loc->space != MemSpace::kLocal) {
          return fail("argument " + std::to_string(i) + " of the call to '" + g.name +
                      "' must be a .param variable declared in the calling function");
        }
        (*locs)[i] = *loc;
      }
      return true;
    };
    if (!bind(g.params, args, &callee_copy->params, &callee_copy->reg_params, false) ||
        !bind(g.returns, returns, &callee_copy->returns, &callee_copy->reg_returns, true)) {
      return false;
    }
    call_chain_.push_back(target);
    const ir::Instruction* saved_ins = ins_;
    if (!expand(target, callee_copy, depth + 1)) return false;
    ins_ = saved_ins;
    call_chain_.pop_back();
    copy_ = caller;
    for (const Copyback& c : after) {
      Op mov;
      mov.fn = copy_row_handler(c.pred ? 0 : c.bytes);
      mov.a[0] = c.to;
      mov.a[1] = c.from;
      push_op(mov);
    }
  }
  (void)copy_index;
  if (guarded) k_.code[skip_pc].target = static_cast<uint32_t>(k_.code.size());
  return true;
}

bool Decoder::decode_barrier(const ir::Instruction& ins, Op& op) {
  using M = ir::Mod;
  auto* info = k_.make<BarrierInfo>();
  op.kind = OpKind::kBarrier;
  op.ext = info;
  k_.uses_barriers = true;
  const bool is_bar = ins.opcode == ir::Opcode::kBar;
  info->aligned = is_bar || ins.mods.has(M::kAligned);
  size_t next = 0;
  const auto& ops = ins.operands;
  if (ins.mods.has(M::kRed)) {
    if (ins.mods.has(M::kPopc)) {
      info->mode = BarrierInfo::kRedPopc;
    } else if (ins.mods.has(M::kAnd)) {
      info->mode = BarrierInfo::kRedAnd;
    } else if (ins.mods.has(M::kOr)) {
      info->mode = BarrierInfo::kRedOr;
    } else {
      return fail("bar.red needs .popc, .and or .or");
    }
    if (ops.size() < 3) return fail("bar.red takes a destination, a barrier and a predicate");
    info->dst = info->mode == BarrierInfo::kRedPopc ? destination(ops[0], ir::Type::kU32)
                                                    : predicate(ops[0]);
    if (info->dst == kNoRef) return false;
    next = 1;
  } else if (ins.mods.has(M::kArrive)) {
    info->mode = BarrierInfo::kArrive;
  } else if (ins.mods.has(M::kSync) || (is_bar && ins.mods.empty())) {
    info->mode = BarrierInfo::kSync;
  } else if (ins.mods.has(M::kCta) && ins.mods.has(M::kSync)) {
    info->mode = BarrierInfo::kSync;
  } else {
    return fail("expected bar.sync, bar.arrive or bar.red");
  }
  const size_t rest = ops.size() - next - (info->mode >= BarrierInfo::kRedPopc ? 1 : 0);
  if (rest < 1 || rest > 2) return fail("expected a barrier number and an optional thread count");
  info->id = source(ops[next], ir::Type::kU32);
  if (info->id == kNoRef) return false;
  if (rest == 2) {
    info->count = source(ops[next + 1], ir::Type::kU32);
    if (info->count == kNoRef) return false;
  }
  if (info->mode >= BarrierInfo::kRedPopc) {
    bool negate = false;
    info->pred = predicate(ops.back(), &negate);
    info->pred_negate = negate;
    if (info->pred == kNoRef) return false;
  }
  if (info->mode == BarrierInfo::kArrive && info->count == kNoRef) {
    return fail("bar.arrive needs a thread count");
  }
  return true;
}

bool Decoder::decode_control(const ir::Instruction& ins, uint32_t copy_index, Op& op,
                             bool* handled) {
  using O = ir::Opcode;
  *handled = true;
  switch (ins.opcode) {
    case O::kBra: {
      if (ins.operands.size() != 1 || ins.operands[0].kind != ir::OperandKind::kSymbol ||
          ins.operands[0].symbol.kind != ir::SymbolKind::kLabel) {
        return fail("bra takes one label");
      }
      op.kind = OpKind::kBranch;
      fixups_.push_back({static_cast<uint32_t>(k_.code.size()), copy_index,
                         ins.operands[0].symbol.index, false});
      return true;
    }
    case O::kRet:
      if (copy_->is_entry) {
        op.kind = OpKind::kExit;
      } else {
        op.kind = OpKind::kBranch;
        fixups_.push_back({static_cast<uint32_t>(k_.code.size()), copy_index, 0, true});
      }
      return true;
    case O::kExit:
      op.kind = OpKind::kExit;
      return true;
    case O::kTrap:
      op.kind = OpKind::kTrap;
      return true;
    case O::kBar:
    case O::kBarrier:
      if (ins.mods.has(ir::Mod::kWarp)) {
        *handled = false;  // bar.warp.sync: a warp instruction
        return true;
      }
      if (ins.mods.has(ir::Mod::kCluster) || ins.mods.has(ir::Mod::kSharedCluster)) {
        return fail("cluster barriers are not supported on the CPU PTX device");
      }
      return decode_barrier(ins, op);
    case O::kBrkpt:
    case O::kNanosleep:
    case O::kPmevent:
    case O::kPrefetch:
    case O::kPrefetchu:
    case O::kApplypriority:
    case O::kDiscard:
    case O::kFence:
    case O::kMembar:
      // Hints, or orderings the engine's memory accesses already give: the workers are host
      // threads and every access is a real host access (fences become host fences).
      op.kind = OpKind::kCompute;
      op.fn = fence_handler(ins.opcode == O::kFence || ins.opcode == O::kMembar);
      return true;
    default:
      *handled = false;
      return true;
  }
}

bool Decoder::decode_instruction(const ir::Instruction& ins, uint32_t copy_index,
                                 uint32_t depth) {
  using O = ir::Opcode;
  ins_ = &ins;
  extras_.clear();
  scratch_used_ = 0;
  if (ins.opcode == O::kCall) return decode_call(ins, copy_index, depth);

  Op op;
  if (ins.guarded) {
    if (ins.guard >= copy_->registers.size()) return fail("unknown guard predicate");
    op.guard = copy_->registers[ins.guard] | (ins.guard_negated ? kGuardNegate : 0);
  }
  bool handled = false;
  if (!decode_control(ins, copy_index, op, &handled)) return false;
  if (!handled) {
    FamilyDecoder family = nullptr;
    switch (ins.opcode) {
      case O::kMov:
      case O::kSelp:
      case O::kCreatepolicy:
      case O::kActivemask:
        family = ins.opcode == O::kActivemask ? decode_warp : decode_move;
        break;
      case O::kAdd:
      case O::kSub:
      case O::kMul:
      case O::kMad:
      case O::kFma:
      case O::kDiv:
      case O::kMin:
      case O::kMax:
      case O::kAbs:
      case O::kNeg: {
        const ir::Type t = ins.types.empty() ? ir::Type::kNone : ins.types.back();
        family = ir::is_float(t) ? decode_float : decode_integer;
        break;
      }
      case O::kRcp:
      case O::kSqrt:
      case O::kRsqrt:
      case O::kSin:
      case O::kCos:
      case O::kLg2:
      case O::kEx2:
      case O::kTanh:
      case O::kCopysign:
      case O::kTestp:
        family = decode_float;
        break;
      case O::kAddc:
      case O::kSubc:
      case O::kMadc:
      case O::kMul24:
      case O::kMad24:
      case O::kSad:
      case O::kRem:
      case O::kAnd:
      case O::kOr:
      case O::kXor:
      case O::kNot:
      case O::kCnot:
      case O::kShl:
      case O::kShr:
      case O::kShf:
      case O::kLop3:
      case O::kPopc:
      case O::kClz:
      case O::kBrev:
      case O::kBfind:
      case O::kFns:
      case O::kBfe:
      case O::kBfi:
      case O::kPrmt:
      case O::kDp4a:
      case O::kDp2a:
      case O::kBmsk:
      case O::kSzext:
        family = decode_integer;
        break;
      case O::kSetp:
      case O::kSet:
      case O::kSlct:
        family = decode_compare;
        break;
      case O::kCvt:
        family = decode_convert;
        break;
      case O::kLd:
      case O::kLdu:
      case O::kSt:
      case O::kCvta:
      case O::kIsspacep:
        family = decode_memory;
        break;
      case O::kAtom:
      case O::kRed:
        family = decode_atomic;
        break;
      case O::kCp:
        family = decode_async_copy;
        break;
      case O::kShfl:
      case O::kVote:
      case O::kMatch:
      case O::kRedux:
      case O::kElect:
      case O::kBar:
      case O::kBarrier:
        family = decode_warp;
        break;
      case O::kMma:
      case O::kLdmatrix:
      case O::kStmatrix:
      case O::kMovmatrix:
        family = decode_matrix;
        break;
      default:
        return fail(std::string("instruction '") + ir::opcode_name(ins.opcode) +
                    "' is not supported on the CPU PTX device");
    }
    if (!ins.unknown_mods.empty()) {
      return fail("modifier '." + ins.unknown_mods.front() +
                  "' is not supported on the CPU PTX device");
    }
    if (!family(*this, ins, op)) {
      if (error_.empty()) fail("cannot be executed on the CPU PTX device");
      return false;
    }
  }
  push_op(op);
  for (Op& extra : extras_) {
    if (extra.guard == kNoGuard) extra.guard = op.guard;
    push_op(extra);
  }
  extras_.clear();
  return true;
}

bool Decoder::finish(std::string* error) {
  for (const Fixup& f : fixups_) {
    const Copy& copy = *copies_[f.copy];
    uint32_t target = 0;
    if (f.to_end) {
      target = copy.pc_of.back();
    } else {
      const ir::Function& fn = function(copy.function);
      if (f.label >= fn.labels.size()) {
        *error = "line " + std::to_string(k_.source[f.pc].line) + ": unknown label";
        return false;
      }
      const uint32_t at = fn.labels[f.label].instruction;
      target = copy.pc_of[std::min<size_t>(at, copy.pc_of.size() - 1)];
    }
    k_.code[f.pc].target = target;
  }
  compute_reconvergence(k_);
  k_.frame_bytes = static_cast<uint32_t>(align_up(frame_top_, 64));
  k_.info.registers = static_cast<uint32_t>(frame_top_ / (4 * kWarpSize));
  if (k_.consts.empty()) k_.consts.resize(64);
  return true;
}

bool Decoder::run(std::string* error) {
  const ir::Function& entry = function(static_cast<uint32_t>(entry_));
  for (size_t i = 0; i < module_.functions.size(); ++i) {
    if (module_.functions[i].has_body) {
      definitions_.emplace(module_.functions[i].name, static_cast<uint32_t>(i));
    }
  }
  KernelInfo& info = k_.info;
  info.name = entry.name;
  info.line = entry.line;
  // Parameters: each at the next offset aligned to its own alignment, as the driver lays them out.
  uint64_t offset = 0;
  for (const ir::Variable& p : entry.params) {
    const uint32_t align = p.align != 0 ? p.align : std::max<uint32_t>(ir::type_size(p.type), 1);
    offset = align_up(offset, align);
    info.params.push_back(ParamSlot{static_cast<uint32_t>(offset), static_cast<uint32_t>(p.size()),
                                    align});
    offset += p.size();
  }
  info.param_bytes = static_cast<uint32_t>(offset);
  for (int i = 0; i < 3; ++i) {
    info.reqntid[i] = entry.reqntid[i];
    info.maxntid[i] = entry.maxntid[i];
  }
  uint32_t limit = 1024;
  if (entry.reqntid[0] != 0) {
    limit = entry.reqntid[0] * std::max(entry.reqntid[1], 1u) * std::max(entry.reqntid[2], 1u);
  } else if (entry.maxntid[0] != 0) {
    limit = entry.maxntid[0] * std::max(entry.maxntid[1], 1u) * std::max(entry.maxntid[2], 1u);
  }
  info.max_threads_per_block = std::min<uint32_t>(limit, 1024);

  if (!plan_memory()) {
    *error = error_;
    return false;
  }
  copies_.push_back(std::make_unique<Copy>());
  Copy* root = copies_.back().get();
  root->is_entry = true;
  root->params.resize(entry.params.size());
  root->reg_params.assign(entry.params.size(), kNoRef);
  call_chain_.push_back(static_cast<uint32_t>(entry_));
  if (!expand(static_cast<uint32_t>(entry_), root, 0)) {
    *error = error_;
    return false;
  }
  // Falling off the end of the entry exits.
  ins_ = nullptr;
  Op exit_op;
  exit_op.kind = OpKind::kExit;
  push_op(exit_op);
  return finish(error);
}

}  // namespace

bool decode_kernel(const ir::Module& module, const ModuleAddresses& addresses, size_t entry,
                   Kernel* out, std::string* error) {
  Decoder decoder(module, addresses, entry, out);
  return decoder.run(error);
}

}  // namespace hal::ptx_vm
