// A kernel's setup: declarations checked, parameters and memory laid out, generic addresses
// traced, registers and the interface declared, the control-flow graph built; then emission.
#include "ptx_spirv/kernel.h"

#include <algorithm>

namespace hal::ptx_spirv {

namespace {

uint32_t align_up(uint32_t value, uint32_t alignment) {
  return alignment == 0 ? value : (value + alignment - 1) / alignment * alignment;
}

bool is_terminator(const ir::Instruction& ins) {
  return ins.opcode == ir::Opcode::kBra || ins.opcode == ir::Opcode::kRet ||
         ins.opcode == ir::Opcode::kExit || ins.opcode == ir::Opcode::kBrx;
}

// The label a bra's operand names, or -1.
int64_t label_of(const ir::Operand& operand) {
  if (operand.kind == ir::OperandKind::kSymbol && operand.symbol.kind == ir::SymbolKind::kLabel) {
    return operand.symbol.index;
  }
  return -1;
}

}  // namespace

Kernel::Kernel(Builder& builder, ModuleState& state, const ir::Module& module,
               const ir::Function& function, const Target& target)
    : b(builder), state_(state), module_(module), function_(function), target_(target) {
  t_bool = b.type_bool();
  t_u32 = b.type_int(32);
  t_u64 = b.type_int(64);
  t_f32 = b.type_float(32);
}

void Kernel::refuse(const ir::Instruction& ins, const std::string& why) const {
  throw Refusal{Failure::Kind::kNotSupported, "kernel '" + function_.name + "', PTX line " +
                                                  std::to_string(ins.line) + ": '" + ins.text +
                                                  "': " + why};
}

void Kernel::refuse_kernel(uint32_t line, const std::string& why) const {
  throw Refusal{Failure::Kind::kNotSupported,
                "kernel '" + function_.name + "', PTX line " + std::to_string(line) + ": " + why};
}

void Kernel::invalid(const ir::Instruction& ins, const std::string& why) const {
  throw Refusal{Failure::Kind::kInvalid, "kernel '" + function_.name + "', PTX line " +
                                             std::to_string(ins.line) + ": '" + ins.text +
                                             "': " + why};
}

void Kernel::need(bool feature, const ir::Instruction& ins, const char* what) const {
  if (!feature) refuse(ins, std::string("the device has no ") + what);
}

uint32_t Kernel::f64(const ir::Instruction& ins) {
  need(target_.float64, ins, "shaderFloat64 (f64 arithmetic)");
  if (t_f64 == 0) {
    b.capability(spv::Capability::Float64);
    t_f64 = b.type_float(64);
  }
  return t_f64;
}

void Kernel::translate(KernelInfo* info) {
  info->name = function_.name;
  for (int d = 0; d < 3; ++d) info->reqntid[d] = function_.reqntid[d];
  if (function_.maxntid[0] != 0) {
    info->maxntid = std::max(function_.maxntid[0], 1u) * std::max(function_.maxntid[1], 1u) *
                    std::max(function_.maxntid[2], 1u);
  }
  check_declarations();
  check_warp(info);
  lay_out_params(info);
  lay_out_memory(info);
  trace_address_spaces();
  std::vector<CfgBlock> cfg = build_cfg();
  std::vector<Stmt> body;
  StructureError error;
  if (!structurize(cfg, &body, &error)) {
    const uint32_t at = error.block < ranges_.size() ? ranges_[error.block].begin : 0;
    const uint32_t line = at < function_.code.size() ? function_.code[at].line : function_.line;
    refuse_kernel(line, "irreducible control flow (a loop entered at more than one place: " +
                            error.message + "); Vulkan needs structured control flow");
  }
  if (warp_emulated_) check_warps_run_together(cfg);

  const uint32_t t_void = b.type_void();
  const uint32_t entry = b.fresh_id();
  b.name(entry, function_.name);
  b.begin_function(entry, t_void, b.type_function(t_void, {}));
  open_block(b.fresh_id());
  declare_interface();
  declare_registers();
  emit_statements(body);
  if (block_open_) {
    b.op_void(spv::Op::OpReturn, {});
    block_open_ = false;
  }
  b.end_function();
  b.entry_point(entry, function_.name, interface_);
  // The block: a literal size for .reqntid; otherwise a WorkgroupSize built-in made of
  // specialization constants, which the launch sets (this works from Vulkan 1.0 on, where
  // LocalSizeId needs Vulkan 1.3). LocalSize is then only the default the built-in overrides.
  b.execution_mode(entry, spv::ExecutionMode::LocalSize,
                   {std::max(function_.reqntid[0], 1u), std::max(function_.reqntid[1], 1u),
                    std::max(function_.reqntid[2], 1u)});
}

void Kernel::check_declarations() {
  for (const ir::Register& r : function_.registers) {
    if (r.vector != 1) {
      refuse_kernel(r.line, "vector register '" + r.name + "' (.v" + std::to_string(r.vector) +
                                ") is not supported");
    }
    if (r.type != ir::Type::kPred && ir::type_size(r.type) > 8) {
      refuse_kernel(r.line, "register '" + r.name + "' of type ." + ir::type_name(r.type) +
                                " is wider than 64 bits");
    }
  }
}

// cuLaunchKernel's packing: each parameter at the next multiple of its alignment.
void Kernel::lay_out_params(KernelInfo* info) {
  uint32_t offset = 0;
  for (const ir::Variable& param : function_.params) {
    const uint32_t alignment = std::max<uint32_t>(param.alignment(), 1);
    offset = align_up(offset, alignment);
    param_offsets_.push_back(offset);
    offset += static_cast<uint32_t>(param.size());
  }
  param_bytes_ = offset;
  // Beyond the device's push constants, the parameters are a block in memory that the launch
  // fills, and the push constants carry its address.
  params_in_buffer_ = param_bytes_ > target_.max_push_constant_bytes;
  info->params_in_buffer = params_in_buffer_;
  info->param_bytes = param_bytes_;
  info->param_offsets = param_offsets_;
}

// Shared and local variables the kernel names get byte offsets in the shared and local arrays:
// static ones in declaration order at their alignment; every .extern .shared array starts at the
// same place after them (aligned to 16, the most any type needs), as CUDA lays out dynamic
// shared memory.
void Kernel::lay_out_memory(KernelInfo* info) {
  module_var_offset_.assign(module_.variables.size(), -1);
  function_var_offset_.assign(function_.variables.size(), -1);
  std::vector<bool> module_used(module_.variables.size(), false);
  std::vector<bool> function_used(function_.variables.size(), false);
  auto mark = [&](const ir::SymbolRef& s) {
    if (s.kind == ir::SymbolKind::kModuleVariable && s.index < module_used.size()) {
      module_used[s.index] = true;
    } else if (s.kind == ir::SymbolKind::kFunctionVariable && s.index < function_used.size()) {
      function_used[s.index] = true;
    }
  };
  std::function<void(const ir::Operand&)> visit = [&](const ir::Operand& o) {
    if (o.kind == ir::OperandKind::kSymbol ||
        (o.kind == ir::OperandKind::kAddress && o.base == ir::AddressBase::kSymbol)) {
      mark(o.symbol);
    }
    for (const ir::Operand& e : o.elements) visit(e);
  };
  for (const ir::Instruction& ins : function_.code) {
    for (const ir::Operand& o : ins.operands) visit(o);
  }

  uint32_t shared = 0, local = 0;
  bool dynamic = false;
  // .global and .const variables: their initial bytes, in one array the kernel reads. Nothing
  // in a translated kernel writes them (stores and atomics there are refused), and hal has no
  // call that writes them from the host, so each invocation's copy of the initial contents is
  // exactly what CUDA's one copy would hold. (Tables such as the math library's argument
  // reduction constants and assertion strings are the module variables nvcc emits.)
  auto place_constant = [&](const ir::Variable& v, int64_t* offset) {
    const std::string what = "module variable '" + v.name + "' (." + ir::space_name(v.space) + ")";
    if (v.linkage == ir::Linkage::kExtern || v.unsized) {
      refuse_kernel(v.line, what + " is defined in another module; hal does not link modules");
    }
    if (!v.relocations.empty()) {
      refuse_kernel(v.line, what + " is initialized with addresses, which is not supported");
    }
    const size_t at = align_up(static_cast<uint32_t>(constant_bytes_.size()),
                               std::max<uint32_t>(v.alignment(), 4));
    if (v.size() > kMaxConstantBytes || at + v.size() > kMaxConstantBytes) {
      refuse_kernel(v.line, what + " takes the kernel's module variables past " +
                                std::to_string(kMaxConstantBytes) + " bytes");
    }
    constant_bytes_.resize(at, 0);
    constant_bytes_.insert(
        constant_bytes_.end(), v.init.begin(),
        v.init.begin() + static_cast<ptrdiff_t>(std::min<uint64_t>(v.init.size(), v.size())));
    constant_bytes_.resize(at + v.size(), 0);
    *offset = static_cast<int64_t>(at);
  };
  auto place = [&](const ir::Variable& v, int64_t* offset) {
    if (v.space == ir::Space::kShared) {
      if (v.unsized || v.linkage == ir::Linkage::kExtern) {
        dynamic = true;
        *offset = -2;  // placed after the static ones below
        return;
      }
      shared = align_up(shared, std::max<uint32_t>(v.alignment(), 1));
      // Checked before adding, so that no sum of sizes wraps around 32 bits.
      if (v.size() > target_.max_shared_bytes || shared + v.size() > target_.max_shared_bytes) {
        refuse_kernel(v.line, "its static shared memory reaches past '" + v.name +
                                  "' beyond the device's " +
                                  std::to_string(target_.max_shared_bytes) + " bytes per block");
      }
      *offset = shared;
      shared += static_cast<uint32_t>(v.size());
    } else if (v.space == ir::Space::kLocal) {
      local = align_up(local, std::max<uint32_t>(v.alignment(), 1));
      if (v.size() > kMaxLocalBytes || local + v.size() > kMaxLocalBytes) {
        refuse_kernel(v.line, "its local memory reaches past '" + v.name + "' beyond " +
                                  std::to_string(kMaxLocalBytes) +
                                  " bytes per thread (CUDA's "
                                  "limit too)");
      }
      *offset = local;
      local += static_cast<uint32_t>(v.size());
    } else if (v.space == ir::Space::kGlobal || v.space == ir::Space::kConst) {
      place_constant(v, offset);
    } else if (v.space == ir::Space::kSharedCluster) {
      refuse_kernel(v.line, "'" + v.name + "' is in .shared::cluster memory");
    }
  };
  for (size_t i = 0; i < module_.variables.size(); ++i) {
    if (module_used[i]) place(module_.variables[i], &module_var_offset_[i]);
  }
  for (size_t i = 0; i < function_.variables.size(); ++i) {
    if (function_used[i]) place(function_.variables[i], &function_var_offset_[i]);
  }
  dynamic_shared_ = dynamic;
  dynamic_shared_offset_ = align_up(shared, 16);
  for (int64_t& offset : module_var_offset_) {
    if (offset == -2) offset = dynamic_shared_offset_;
  }
  for (int64_t& offset : function_var_offset_) {
    if (offset == -2) offset = dynamic_shared_offset_;
  }
  if (shared > target_.max_shared_bytes) {
    refuse_kernel(function_.line, "its static shared memory takes " + std::to_string(shared) +
                                      " bytes; the device allows " +
                                      std::to_string(target_.max_shared_bytes) + " per block");
  }
  shared_words_static_ = align_up(dynamic ? dynamic_shared_offset_ : shared, 4) / 4;
  local_words_ = align_up(local, 4) / 4;
  info->static_shared_bytes = shared;
  // Warps through workgroup memory add their exchange array: counted here for a .reqntid block,
  // and at each launch otherwise (its length follows the launch's block).
  if (warp_emulated_ && function_.reqntid[0] != 0) {
    const uint32_t exchange = 2 * workgroup_warp_words() * 4;
    if (exchange > target_.max_shared_bytes || shared > target_.max_shared_bytes - exchange) {
      refuse_kernel(function_.line,
                    "its static shared memory (" + std::to_string(shared) + " bytes) and the " +
                        std::to_string(exchange) +
                        " bytes its warps exchange through on this device take more than the "
                        "device's " +
                        std::to_string(target_.max_shared_bytes) + " per block");
    }
    info->static_shared_bytes = shared + exchange;
  }
  info->dynamic_shared = dynamic;
}

// Generic addresses name no state space: follow each register's definitions back to where the
// address came from (cvta from a space, the address of a variable), through moves and address
// arithmetic, to a fixed point; a 64-bit kernel parameter is a global address. A register
// reached from two spaces cannot be accessed generically; one never traced to shared or local
// memory is global, as generic addresses of kernel parameters and loaded pointers are.
void Kernel::trace_address_spaces() {
  spaces_.assign(function_.registers.size(), AddressSpace::kUnknown);
  constant_reached_.assign(function_.registers.size(), false);
  auto join = [](AddressSpace a, AddressSpace c) {
    if (a == AddressSpace::kUnknown) return c;
    if (c == AddressSpace::kUnknown || a == c) return a;
    return AddressSpace::kConflict;
  };
  auto symbol_space = [&](const ir::SymbolRef& s) {
    const ir::Variable* v = nullptr;
    if (s.kind == ir::SymbolKind::kModuleVariable && s.index < module_.variables.size()) {
      v = &module_.variables[s.index];
    } else if (s.kind == ir::SymbolKind::kFunctionVariable &&
               s.index < function_.variables.size()) {
      v = &function_.variables[s.index];
    }
    if (v == nullptr) return AddressSpace::kUnknown;
    if (v->space == ir::Space::kShared) return AddressSpace::kShared;
    if (v->space == ir::Space::kLocal) return AddressSpace::kLocal;
    if (v->space == ir::Space::kGlobal || v->space == ir::Space::kConst) {
      return AddressSpace::kConstant;
    }
    return AddressSpace::kUnknown;
  };
  bool changed = true;
  for (int round = 0; changed && round < 64; ++round) {
    changed = false;
    for (const ir::Instruction& ins : function_.code) {
      if (ins.operands.empty() || ins.operands[0].kind != ir::OperandKind::kRegister) continue;
      using O = ir::Opcode;
      AddressSpace from = AddressSpace::kUnknown;
      bool constant = false;  // whether a source may hold a module variable's address
      for (size_t i = 1; i < ins.operands.size(); ++i) {
        const ir::Operand& o = ins.operands[i];
        if (o.kind == ir::OperandKind::kRegister && o.reg < spaces_.size()) {
          constant = constant || constant_reached_[o.reg];
        } else if (o.kind == ir::OperandKind::kSymbol) {
          constant = constant || symbol_space(o.symbol) == AddressSpace::kConstant;
        }
      }
      if (ins.opcode == O::kCvta) {
        if (ins.mods.has(ir::Mod::kShared)) from = AddressSpace::kShared;
        if (ins.mods.has(ir::Mod::kLocal)) from = AddressSpace::kLocal;
        // Module variables are .global or .const: cvta keeps such an address what it was.
        if (ins.mods.has(ir::Mod::kGlobal) || ins.mods.has(ir::Mod::kConst)) {
          from = constant ? AddressSpace::kConstant : AddressSpace::kGlobal;
          if (ins.operands.size() > 1 && ins.operands[1].kind == ir::OperandKind::kRegister &&
              ins.operands[1].reg < spaces_.size() &&
              spaces_[ins.operands[1].reg] == AddressSpace::kConflict) {
            from = AddressSpace::kConflict;
          }
        }
      } else if (ins.opcode == O::kMov || ins.opcode == O::kAdd || ins.opcode == O::kSub ||
                 ins.opcode == O::kCvt || ins.opcode == O::kMad || ins.opcode == O::kSelp ||
                 ins.opcode == O::kAnd || ins.opcode == O::kOr) {
        for (size_t i = 1; i < ins.operands.size(); ++i) {
          const ir::Operand& o = ins.operands[i];
          if (o.kind == ir::OperandKind::kRegister && o.reg < spaces_.size()) {
            from = join(from, spaces_[o.reg]);
          } else if (o.kind == ir::OperandKind::kSymbol) {
            from = join(from, symbol_space(o.symbol));
          }
        }
      } else if (ins.opcode == O::kLd && ins.mods.has(ir::Mod::kParam) && !ins.types.empty() &&
                 ir::type_size(ins.types[0]) == 8) {
        from = AddressSpace::kGlobal;  // a kernel's 64-bit parameters are global pointers
      } else {
        continue;
      }
      const uint32_t d = ins.operands[0].reg;
      if (d >= spaces_.size()) continue;
      const AddressSpace joined = join(spaces_[d], from);
      if (joined != spaces_[d] || (constant && !constant_reached_[d])) {
        spaces_[d] = joined;
        constant_reached_[d] = constant_reached_[d] || constant;
        changed = true;
      }
    }
  }
}

void Kernel::declare_registers() {
  registers_.resize(function_.registers.size());
  register_types_.resize(function_.registers.size());
  for (size_t i = 0; i < function_.registers.size(); ++i) {
    const ir::Register& r = function_.registers[i];
    uint32_t type = t_u32;
    if (r.type == ir::Type::kPred) {
      type = t_bool;
    } else if (ir::type_size(r.type) == 8) {
      type = t_u64;
    }
    register_types_[i] = type;
    registers_[i] = b.local_variable(b.type_pointer(spv::StorageClass::Function, type));
  }
}

// Built-ins, push constants, the block size, and the shared and local arrays.
void Kernel::declare_interface() {
  const uint32_t v3 = b.type_vector(t_u32, 3);
  const uint32_t input = b.type_pointer(spv::StorageClass::Input, v3);
  auto builtin = [&](spv::BuiltIn which) {
    const uint32_t var = b.global_variable(input, spv::StorageClass::Input);
    b.decorate(var, spv::Decoration::BuiltIn, {static_cast<uint32_t>(which)});
    interface_.push_back(var);
    return var;
  };
  builtin_local_id_ = builtin(spv::BuiltIn::LocalInvocationId);
  builtin_group_id_ = builtin(spv::BuiltIn::WorkgroupId);
  builtin_groups_ = builtin(spv::BuiltIn::NumWorkgroups);

  if (function_.reqntid[0] != 0) {
    for (int d = 0; d < 3; ++d) block_size_[d] = b.u32(std::max(function_.reqntid[d], 1u));
  } else {
    if (state_.block_spec[0] == 0) {
      for (int d = 0; d < 3; ++d) state_.block_spec[d] = b.spec_constant_u32(kBlockSpecIds[d], 1);
      const uint32_t size = b.spec_constant_composite(
          v3, {state_.block_spec[0], state_.block_spec[1], state_.block_spec[2]});
      b.decorate(size, spv::Decoration::BuiltIn,
                 {static_cast<uint32_t>(spv::BuiltIn::WorkgroupSize)});
    }
    for (int d = 0; d < 3; ++d) block_size_[d] = state_.block_spec[d];
  }
  if (warp_) declare_warp();

  if (param_bytes_ > 0) {
    push_words_ = params_in_buffer_ ? 2 : align_up(param_bytes_, 4) / 4;
    const uint32_t array = b.type_array(t_u32, b.u32(push_words_), 4);
    const uint32_t block = b.type_block(array);
    push_constants_ = b.global_variable(b.type_pointer(spv::StorageClass::PushConstant, block),
                                        spv::StorageClass::PushConstant);
    b.name(push_constants_, "params");
    interface_.push_back(push_constants_);
  }

  if (shared_words_static_ > 0 || dynamic_shared_) {
    uint32_t length = 0;
    if (!dynamic_shared_) {
      length = b.u32(shared_words_static_);
    } else {
      // words = static words + ceil(shared_bytes / 4); never 0, which SPIR-V forbids.
      if (state_.shared_bytes_spec == 0) {
        state_.shared_bytes_spec = b.spec_constant_u32(kSharedBytesSpecId, 0);
      }
      shared_bytes_spec_ = state_.shared_bytes_spec;
      const uint32_t plus3 =
          b.spec_constant_op(t_u32, spv::Op::OpIAdd, {shared_bytes_spec_, b.u32(3)});
      uint32_t dynamic_words = b.spec_constant_op(t_u32, spv::Op::OpUDiv, {plus3, b.u32(4)});
      if (shared_words_static_ == 0) {
        const uint32_t is_zero =
            b.spec_constant_op(t_bool, spv::Op::OpIEqual, {dynamic_words, b.u32(0)});
        dynamic_words =
            b.spec_constant_op(t_u32, spv::Op::OpSelect, {is_zero, b.u32(1), dynamic_words});
        length = dynamic_words;
      } else {
        length = b.spec_constant_op(t_u32, spv::Op::OpIAdd,
                                    {b.u32(shared_words_static_), dynamic_words});
      }
    }
    const uint32_t array = b.type_array(t_u32, length, 4);
    shared_array_ = b.global_variable(b.type_pointer(spv::StorageClass::Workgroup, array),
                                      spv::StorageClass::Workgroup);
    b.name(shared_array_, "shared_memory");
    interface_.push_back(shared_array_);
  }
  if (local_words_ > 0) {
    const uint32_t array = b.type_array(t_u32, b.u32(local_words_), 4);
    local_array_ = b.local_variable(b.type_pointer(spv::StorageClass::Function, array));
  }
  if (!constant_bytes_.empty()) {
    constant_bytes_.resize(align_up(static_cast<uint32_t>(constant_bytes_.size()), 4), 0);
    Builder::Words words;
    for (size_t i = 0; i < constant_bytes_.size(); i += 4) {
      words.push_back(b.u32(uint32_t{constant_bytes_[i]} | uint32_t{constant_bytes_[i + 1]} << 8 |
                            uint32_t{constant_bytes_[i + 2]} << 16 |
                            uint32_t{constant_bytes_[i + 3]} << 24));
    }
    const uint32_t array = b.type_array(t_u32, b.u32(static_cast<uint32_t>(words.size())), 4);
    constant_array_ =
        b.global_variable(b.type_pointer(spv::StorageClass::Private, array),
                          spv::StorageClass::Private, b.constant_composite(array, words));
    b.name(constant_array_, "module_variables");
    interface_.push_back(constant_array_);
  }
}

// Basic blocks: a block starts at the first instruction, at every label, and after every
// terminator. Guarded ret/exit get a block of their own to branch to.
std::vector<CfgBlock> Kernel::build_cfg() {
  const size_t n = function_.code.size();
  std::vector<bool> leader(n + 1, false);
  leader[0] = true;
  for (const ir::Label& label : function_.labels) {
    if (label.instruction <= n) leader[label.instruction] = true;
  }
  for (size_t i = 0; i < n; ++i) {
    if (is_terminator(function_.code[i])) leader[i + 1] = true;
  }
  std::vector<uint32_t> block_at(n + 1, 0);
  ranges_.clear();
  for (size_t i = 0; i < n; ++i) {
    if (leader[i]) ranges_.push_back(BlockRange{static_cast<uint32_t>(i), 0, 0, false, 0, nullptr});
    block_at[i] = static_cast<uint32_t>(ranges_.size() - 1);
  }
  if (ranges_.empty()) ranges_.push_back(BlockRange{0, 0, 0, false, 0, nullptr});
  const uint32_t real = static_cast<uint32_t>(ranges_.size());
  block_at[n] = real;  // "the end": a label there, or falling off the last block, returns
  // One block after the real ones that every ret, exit and fall off the end goes to; made
  // before the loop below holds references into both vectors. Unreachable when nothing
  // branches there, and then the structurizer leaves it out.
  const uint32_t return_block = real;
  ranges_.push_back(
      BlockRange{static_cast<uint32_t>(n), static_cast<uint32_t>(n), 0, false, 0, nullptr});
  std::vector<CfgBlock> cfg(real + 1);
  cfg[return_block].exit = CfgBlock::Exit::kReturn;
  auto target_block = [&](uint32_t instruction) {
    return instruction >= n ? return_block : block_at[instruction];
  };
  for (uint32_t bi = 0; bi < real; ++bi) {
    BlockRange& r = ranges_[bi];
    const uint32_t next_start = bi + 1 < real ? ranges_[bi + 1].begin : static_cast<uint32_t>(n);
    r.end = next_start;
    CfgBlock& block = cfg[bi];
    const ir::Instruction* last = next_start > r.begin ? &function_.code[next_start - 1] : nullptr;
    if (last == nullptr || !is_terminator(*last)) {
      block.exit = CfgBlock::Exit::kJump;
      block.successors = {target_block(next_start)};
      continue;
    }
    r.end = next_start - 1;
    r.terminator = last;
    const uint32_t fallthrough = target_block(next_start);
    if (last->opcode == ir::Opcode::kBrx) {
      if (last->guarded) refuse(*last, "a guarded brx.idx is not supported");
      if (last->operands.size() != 2 || last->operands[0].kind != ir::OperandKind::kRegister ||
          last->operands[1].kind != ir::OperandKind::kSymbol ||
          last->operands[1].symbol.kind != ir::SymbolKind::kTargetList ||
          last->operands[1].symbol.index >= function_.target_lists.size()) {
        invalid(*last, "brx.idx takes an index register and a .branchtargets list");
      }
      r.selector = last->operands[0].reg;
      block.exit = CfgBlock::Exit::kSwitch;
      for (const ir::SymbolRef& t :
           function_.target_lists[last->operands[1].symbol.index].targets) {
        if (t.kind != ir::SymbolKind::kLabel || t.index >= function_.labels.size()) {
          invalid(*last, "a .branchtargets entry is not a label");
        }
        block.successors.push_back(target_block(function_.labels[t.index].instruction));
      }
      if (block.successors.empty()) invalid(*last, "an empty .branchtargets list");
      continue;
    }
    uint32_t taken = 0;
    if (last->opcode == ir::Opcode::kBra) {
      const int64_t label = last->operands.empty() ? -1 : label_of(last->operands[0]);
      if (label < 0 || static_cast<size_t>(label) >= function_.labels.size()) {
        refuse(*last, "an indirect branch (bra through a register) is not supported");
      }
      taken = target_block(function_.labels[static_cast<size_t>(label)].instruction);
    } else {  // ret, exit
      taken = return_block;
    }
    if (!last->guarded) {
      block.exit = CfgBlock::Exit::kJump;
      block.successors = {taken};
      continue;
    }
    r.guard = last->guard;
    r.guard_negated = last->guard_negated;
    block.exit = CfgBlock::Exit::kBranch;
    block.successors = {taken, fallthrough};
  }
  return cfg;
}

}  // namespace hal::ptx_spirv
