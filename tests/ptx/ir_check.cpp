#include "ir_check.h"

#include <cstdint>
#include <vector>

namespace hal_ptx_test {
namespace {

using hal::ptx::ir::Function;
using hal::ptx::ir::Module;
using hal::ptx::ir::Operand;
using hal::ptx::ir::OperandKind;
using hal::ptx::ir::SymbolKind;
using hal::ptx::ir::SymbolRef;
using hal::ptx::ir::Variable;

// Whether |ref| names something that exists, from inside |function| (null at module scope).
bool valid(const Module& module, const Function* function, const SymbolRef& ref) {
  switch (ref.kind) {
    case SymbolKind::kModuleVariable:
      return ref.index < module.variables.size();
    case SymbolKind::kFunction:
      return ref.index < module.functions.size();
    case SymbolKind::kFunctionVariable:
      return function != nullptr && ref.index < function->variables.size();
    case SymbolKind::kParam:
      return function != nullptr && ref.index < function->params.size();
    case SymbolKind::kReturn:
      return function != nullptr && ref.index < function->returns.size();
    case SymbolKind::kLabel:
      return function != nullptr && ref.index < function->labels.size();
    case SymbolKind::kPrototype:
      return function != nullptr && ref.index < function->prototypes.size();
    case SymbolKind::kTargetList:
      return function != nullptr && ref.index < function->target_lists.size();
  }
  return false;
}

std::string check_variable(const Module& module, const Variable& variable) {
  if (variable.size() > hal::ptx::ir::kMaxVariableBytes) return "larger than the cap";
  if (variable.unsized != (variable.count == 0)) return "unsized and count disagree";
  if (!variable.init.empty() && variable.init.size() > variable.size()) {
    return "an initializer longer than the variable";
  }
  for (const auto& relocation : variable.relocations) {
    if (relocation.size == 0 || relocation.offset + relocation.size > variable.init.size()) {
      return "a relocation outside the initializer";
    }
    if (!valid(module, nullptr, relocation.symbol)) return "a relocation to nothing";
  }
  return "";
}

std::string check_operand(const Module& module, const Function& function, const Operand& operand,
                          int depth) {
  if (depth > static_cast<int>(hal::ptx::ir::kMaxNesting) + 1) return "nested too deeply";
  switch (operand.kind) {
    case OperandKind::kRegister:
      if (operand.reg >= function.registers.size()) return "a register index out of range";
      if (operand.has_reg2 && operand.reg2 >= function.registers.size()) {
        return "a second register index out of range";
      }
      break;
    case OperandKind::kSpecial:
      if (operand.special >= hal::ptx::ir::Special::kCount) return "a bad special register";
      break;
    case OperandKind::kSymbol:
      if (!valid(module, &function, operand.symbol)) return "a symbol to nothing";
      break;
    case OperandKind::kAddress:
      if (operand.base == hal::ptx::ir::AddressBase::kRegister &&
          operand.reg >= function.registers.size()) {
        return "an address register out of range";
      }
      if (operand.base == hal::ptx::ir::AddressBase::kSymbol &&
          !valid(module, &function, operand.symbol)) {
        return "an address symbol to nothing";
      }
      break;
    case OperandKind::kVector:
      if (operand.elements.empty()) return "an empty vector";
      break;
    default:
      break;
  }
  if (operand.kind != OperandKind::kVector && operand.kind != OperandKind::kList &&
      operand.kind != OperandKind::kAddress && !operand.elements.empty()) {
    return "elements on a scalar operand";
  }
  for (const Operand& element : operand.elements) {
    std::string problem = check_operand(module, function, element, depth + 1);
    if (!problem.empty()) return problem;
  }
  return "";
}

std::string check_function(const Module& module, const Function& function) {
  if (function.params.size() > hal::ptx::ir::kMaxParams) return "too many parameters";
  if (function.is_entry && !function.returns.empty()) return "an entry with return values";
  if (!function.has_body && !function.code.empty()) return "code in a declaration";
  for (const auto& label : function.labels) {
    if (label.instruction > function.code.size()) return "a label past the end";
  }
  for (const auto& list : function.target_lists) {
    for (const SymbolRef& target : list.targets) {
      if (!valid(module, &function, target)) return "a target to nothing";
      if (target.kind != (list.calls ? SymbolKind::kFunction : SymbolKind::kLabel)) {
        return "a target of the wrong kind";
      }
    }
  }
  for (const Variable& variable : function.variables) {
    std::string problem = check_variable(module, variable);
    if (!problem.empty()) return "variable '" + variable.name + "': " + problem;
  }
  for (const auto& instruction : function.code) {
    if (instruction.opcode >= hal::ptx::ir::Opcode::kCount) return "a bad opcode";
    if (instruction.text.empty()) return "an instruction without text";
    if (instruction.guarded && instruction.guard >= function.registers.size()) {
      return "a guard out of range";
    }
    for (const Operand& operand : instruction.operands) {
      std::string problem = check_operand(module, function, operand, 0);
      if (!problem.empty()) {
        return "line " + std::to_string(instruction.line) + " '" + instruction.text +
               "': " + problem;
      }
    }
  }
  return "";
}

}  // namespace

std::string check_module(const Module& module) {
  if (module.target.empty() || module.target_sm == 0) return "no target";
  if (module.address_size != 32 && module.address_size != 64) return "a bad address size";
  if (module.functions.size() > hal::ptx::ir::kMaxFunctions) return "too many functions";
  uint64_t registers = 0;
  for (const Variable& variable : module.variables) {
    std::string problem = check_variable(module, variable);
    if (!problem.empty()) return "variable '" + variable.name + "': " + problem;
  }
  for (const Function& function : module.functions) {
    registers += function.registers.size();
    std::string problem = check_function(module, function);
    if (!problem.empty()) return "function '" + function.name + "': " + problem;
  }
  if (registers > hal::ptx::ir::kMaxRegisters) return "more registers than the cap";
  return "";
}

std::string mutate(const std::string& text, std::mt19937& random, const std::string& alphabet) {
  std::string out = text.empty() ? std::string("x") : text;
  const int edits = 1 + static_cast<int>(random() % 8);
  for (int e = 0; e < edits; ++e) {
    const size_t at = random() % out.size();
    switch (random() % 3) {
      case 0:
        out[at] = alphabet[random() % alphabet.size()];
        break;
      case 1:
        out.erase(at, 1 + random() % 16);
        break;
      default:
        out.insert(at, 1, alphabet[random() % alphabet.size()]);
        break;
    }
    if (out.empty()) out.assign(1, 'x');
  }
  return out;
}

}  // namespace hal_ptx_test
