#include "ptx_spirv/inline.h"

#include "ptx_spirv/kernel.h"

#include <string>
#include <vector>

namespace hal::ptx_spirv {

namespace {

using O = ir::Opcode;

// Bounds on the expansion, so hostile PTX cannot make it grow without limit.
constexpr size_t kMaxDepth = 16;
constexpr size_t kMaxInstructions = 1u << 20;

// Where one function's indices land in the output.
struct Mapping {
  bool top = false;  // the kernel itself: its parameters stay kernel parameters
  uint32_t reg_base = 0, var_base = 0, label_base = 0, list_base = 0, proto_base = 0;
  std::vector<ir::SymbolRef> params;   // callee: each formal parameter's variable
  std::vector<ir::SymbolRef> returns;  // callee: each return parameter's variable
  uint32_t return_label = 0;           // callee: where ret goes
};

class Inliner {
 public:
  Inliner(const ir::Module& module, const ir::Function& kernel, ir::Function* out)
      : module_(module), kernel_(kernel), out_(*out) {}

  void run() {
    out_ = ir::Function{};
    out_.name = kernel_.name;
    out_.is_entry = kernel_.is_entry;
    out_.linkage = kernel_.linkage;
    out_.has_body = kernel_.has_body;
    out_.noreturn = kernel_.noreturn;
    out_.params = kernel_.params;
    for (int d = 0; d < 3; ++d) {
      out_.reqntid[d] = kernel_.reqntid[d];
      out_.maxntid[d] = kernel_.maxntid[d];
    }
    out_.minnctapersm = kernel_.minnctapersm;
    out_.maxnreg = kernel_.maxnreg;
    out_.line = kernel_.line;
    Mapping top;
    top.top = true;
    std::vector<const ir::Function*> chain{&kernel_};
    expand(kernel_, top, &chain);
  }

 private:
  [[noreturn]] void refuse(const ir::Instruction& ins, const std::string& why) const {
    throw Refusal{Failure::Kind::kNotSupported, "kernel '" + kernel_.name + "', PTX line " +
                                                    std::to_string(ins.line) + ": '" + ins.text +
                                                    "': " + why};
  }
  [[noreturn]] void invalid(const ir::Instruction& ins, const std::string& why) const {
    throw Refusal{Failure::Kind::kInvalid, "kernel '" + kernel_.name + "', PTX line " +
                                               std::to_string(ins.line) + ": '" + ins.text +
                                               "': " + why};
  }

  ir::SymbolRef map_symbol(const ir::Instruction& ins, ir::SymbolRef s, const Mapping& m) const {
    switch (s.kind) {
      case ir::SymbolKind::kModuleVariable:
      case ir::SymbolKind::kFunction:
        return s;
      case ir::SymbolKind::kFunctionVariable:
        s.index += m.var_base;
        return s;
      case ir::SymbolKind::kParam:
        if (m.top) return s;
        if (s.index >= m.params.size()) invalid(ins, "a parameter the function does not have");
        return m.params[s.index];
      case ir::SymbolKind::kReturn:
        if (m.top || s.index >= m.returns.size()) {
          invalid(ins, "a return parameter the function does not have");
        }
        return m.returns[s.index];
      case ir::SymbolKind::kLabel:
        s.index += m.label_base;
        return s;
      case ir::SymbolKind::kTargetList:
        s.index += m.list_base;
        return s;
      case ir::SymbolKind::kPrototype:
        s.index += m.proto_base;
        return s;
    }
    return s;
  }

  void map_operand(const ir::Instruction& ins, ir::Operand* o, const Mapping& m) const {
    if (o->kind == ir::OperandKind::kRegister) {
      o->reg += m.reg_base;
      if (o->has_reg2) o->reg2 += m.reg_base;
    } else if (o->kind == ir::OperandKind::kAddress) {
      if (o->base == ir::AddressBase::kRegister) o->reg += m.reg_base;
      if (o->base == ir::AddressBase::kSymbol) o->symbol = map_symbol(ins, o->symbol, m);
    } else if (o->kind == ir::OperandKind::kSymbol) {
      o->symbol = map_symbol(ins, o->symbol, m);
    }
    for (ir::Operand& e : o->elements) map_operand(ins, &e, m);
  }

  // A .param variable of a body is memory the function reads and writes: .local.
  static ir::Variable as_local(ir::Variable v) {
    if (v.space == ir::Space::kParam) v.space = ir::Space::kLocal;
    return v;
  }

  // Whether |o| addresses a body variable that used to be .param (now .local).
  bool addresses_body_variable(const ir::Operand& o) const {
    return o.kind == ir::OperandKind::kAddress && o.base == ir::AddressBase::kSymbol &&
           o.symbol.kind == ir::SymbolKind::kFunctionVariable &&
           o.symbol.index < out_.variables.size() &&
           out_.variables[o.symbol.index].space == ir::Space::kLocal;
  }

  uint32_t new_label(const std::string& name, uint32_t line) {
    ir::Label label;
    label.name = name;
    label.line = line;
    out_.labels.push_back(label);
    return static_cast<uint32_t>(out_.labels.size() - 1);
  }

  void emit_branch(const ir::Instruction& from, uint32_t label, bool guarded, bool negated,
                   uint32_t guard) {
    ir::Instruction bra;
    bra.opcode = O::kBra;
    bra.text = "bra";
    bra.line = from.line;
    bra.guarded = guarded;
    bra.guard_negated = negated;
    bra.guard = guard;
    ir::Operand target;
    target.kind = ir::OperandKind::kSymbol;
    target.symbol = ir::SymbolRef{ir::SymbolKind::kLabel, label};
    bra.operands.push_back(target);
    push(bra);
  }

  void push(ir::Instruction ins) {
    if (out_.code.size() >= kMaxInstructions) {
      refuse(ins, "inlining the called functions makes the kernel longer than " +
                      std::to_string(kMaxInstructions) + " instructions");
    }
    out_.code.push_back(std::move(ins));
  }

  // Appends |f|'s body under mapping |m| (its bases are set here).
  void expand(const ir::Function& f, Mapping m, std::vector<const ir::Function*>* chain) {
    m.reg_base = static_cast<uint32_t>(out_.registers.size());
    m.var_base = static_cast<uint32_t>(out_.variables.size());
    m.label_base = static_cast<uint32_t>(out_.labels.size());
    m.list_base = static_cast<uint32_t>(out_.target_lists.size());
    m.proto_base = static_cast<uint32_t>(out_.prototypes.size());
    out_.registers.insert(out_.registers.end(), f.registers.begin(), f.registers.end());
    for (const ir::Variable& v : f.variables) out_.variables.push_back(as_local(v));
    out_.labels.insert(out_.labels.end(), f.labels.begin(), f.labels.end());
    out_.prototypes.insert(out_.prototypes.end(), f.prototypes.begin(), f.prototypes.end());
    for (ir::TargetList list : f.target_lists) {
      for (ir::SymbolRef& t : list.targets) {
        if (t.kind == ir::SymbolKind::kLabel) t.index += m.label_base;
      }
      out_.target_lists.push_back(std::move(list));
    }
    // Labels are placed as the code lands: calls expanded before them move them.
    std::vector<std::vector<uint32_t>> labels_at(f.code.size() + 1);
    for (uint32_t j = 0; j < f.labels.size(); ++j) {
      if (f.labels[j].instruction <= f.code.size()) {
        labels_at[f.labels[j].instruction].push_back(m.label_base + j);
      }
    }
    for (size_t i = 0; i <= f.code.size(); ++i) {
      for (uint32_t label : labels_at[i]) {
        out_.labels[label].instruction = static_cast<uint32_t>(out_.code.size());
      }
      if (i == f.code.size()) break;
      ir::Instruction ins = f.code[i];
      if (ins.guarded) ins.guard += m.reg_base;
      for (ir::Operand& o : ins.operands) map_operand(ins, &o, m);
      if (ins.opcode == O::kCall) {
        call(ins, chain);
        continue;
      }
      if (ins.opcode == O::kRet && !m.top) {
        emit_branch(ins, m.return_label, ins.guarded, ins.guard_negated, ins.guard);
        continue;
      }
      if ((ins.opcode == O::kLd || ins.opcode == O::kSt || ins.opcode == O::kLdu) &&
          ins.mods.has(ir::Mod::kParam)) {
        const ir::Operand* address = nullptr;
        if (ins.operands.size() == 2) {
          address = ins.opcode == O::kSt ? &ins.operands[0] : &ins.operands[1];
        }
        if (address != nullptr && addresses_body_variable(*address)) {
          ins.mods.remove(ir::Mod::kParam);
          ins.mods.add(ir::Mod::kLocal);
        }
      }
      push(std::move(ins));
    }
  }

  // |ins|'s operands are already in the output's indices.
  void call(const ir::Instruction& ins, std::vector<const ir::Function*>* chain) {
    const ir::Operand* returns = nullptr;
    const ir::Operand* args = nullptr;
    const ir::Operand* callee = nullptr;
    size_t extra = 0;
    for (const ir::Operand& o : ins.operands) {
      if (o.kind == ir::OperandKind::kList) {
        (callee == nullptr ? returns : args) = &o;
      } else if (callee == nullptr) {
        callee = &o;
      } else {
        ++extra;
      }
    }
    if (callee == nullptr) invalid(ins, "a call without a function");
    if (callee->kind != ir::OperandKind::kSymbol ||
        callee->symbol.kind != ir::SymbolKind::kFunction || extra > 0) {
      refuse(ins, "an indirect call (through a register) is not supported");
    }
    if (callee->symbol.index >= module_.functions.size()) invalid(ins, "an unknown function");
    const ir::Function& f = module_.functions[callee->symbol.index];
    if (!f.has_body) {
      if (f.name == "vprintf") {
        refuse(ins, "printf in a kernel (a call to vprintf) is not supported on this device");
      }
      if (f.name == "__assertfail") {
        refuse(ins, "assert in a kernel (a call to __assertfail) is not supported on this device");
      }
      refuse(ins, "calls '" + f.name +
                      "', which the module declares but does not define; hal does not link "
                      "modules");
    }
    for (const ir::Function* outer : *chain) {
      if (outer == &f) refuse(ins, "a recursive call to '" + f.name + "' is not supported");
    }
    if (chain->size() >= kMaxDepth) {
      refuse(ins, "calls nested more than " + std::to_string(kMaxDepth) + " deep");
    }
    Mapping m;
    const auto bind = [&](const ir::Operand* list, const std::vector<ir::Variable>& formals,
                          std::vector<ir::SymbolRef>* to, const char* what) {
      const size_t given = list == nullptr ? 0 : list->elements.size();
      if (given != formals.size()) {
        invalid(ins, "'" + f.name + "' takes " + std::to_string(formals.size()) + " " + what +
                         ", the call gives " + std::to_string(given));
      }
      for (size_t j = 0; j < given; ++j) {
        const ir::Operand& a = list->elements[j];
        if (a.kind != ir::OperandKind::kSymbol ||
            a.symbol.kind != ir::SymbolKind::kFunctionVariable ||
            a.symbol.index >= out_.variables.size() || a.integer != 0 ||
            formals[j].space != ir::Space::kParam) {
          refuse(ins, std::string("only .param variables are supported as a call's ") + what);
        }
        const ir::Variable& v = out_.variables[a.symbol.index];
        if (v.size() != formals[j].size()) {
          refuse(ins, std::string("a call's ") + what + " " + std::to_string(j) + " is " +
                          std::to_string(v.size()) + " bytes, '" + f.name + "' declares " +
                          std::to_string(formals[j].size()));
        }
        to->push_back(a.symbol);
      }
    };
    bind(args, f.params, &m.params, "arguments");
    bind(returns, f.returns, &m.returns, "results");
    m.return_label = new_label("$inlined_return_" + std::to_string(out_.labels.size()), ins.line);
    if (ins.guarded) {
      // "@p call": the body runs only where p holds.
      emit_branch(ins, m.return_label, true, !ins.guard_negated, ins.guard);
    }
    chain->push_back(&f);
    expand(f, m, chain);
    chain->pop_back();
    out_.labels[m.return_label].instruction = static_cast<uint32_t>(out_.code.size());
  }

  const ir::Module& module_;
  const ir::Function& kernel_;
  ir::Function& out_;
};

}  // namespace

bool has_calls(const ir::Function& function) {
  for (const ir::Instruction& ins : function.code) {
    if (ins.opcode == O::kCall) return true;
  }
  return false;
}

void inline_calls(const ir::Module& module, const ir::Function& kernel, ir::Function* out) {
  Inliner(module, kernel, out).run();
}

}  // namespace hal::ptx_spirv
