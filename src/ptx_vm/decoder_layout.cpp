// The decoder's memory layout (decoder_impl.h): which module .shared variables a kernel uses,
// and where every variable of its functions lives (shared or local memory).
#include "ptx_vm/decoder_impl.h"

#include <algorithm>

namespace hal::ptx_vm::decoding {

// ===========================================================================================
// Memory layout: which shared variables the kernel uses, and local memory
// ===========================================================================================

bool Decoder::collect(uint32_t index, std::vector<uint8_t>* reachable, uint32_t depth) {
  if ((*reachable)[index]) return true;
  (*reachable)[index] = 1;
  if (depth > kMaxInlineDepth)
    return fail("calls nest deeper than " + std::to_string(kMaxInlineDepth) + " functions");
  const ir::Function& f = function(index);
  const auto visit = [&](const ir::SymbolRef& symbol) -> bool {
    if (symbol.kind == ir::SymbolKind::kModuleVariable && symbol.index < module_.variables.size()) {
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

}  // namespace hal::ptx_vm::decoding
