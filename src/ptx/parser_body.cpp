// The PTX parser, part three: function bodies ({ } scopes, declarations, labels, call
// prototypes and target lists), instructions and their operands. See parser.h for the parts.
#include <utility>

#include "ptx/parser.h"
#include "ptx/words.h"

namespace hal::ptx {
namespace {

// Digits at the start of |text| into |out| (at most |max|); returns how many were read.
size_t read_digits(std::string_view text, uint32_t max, uint32_t* out) {
  size_t n = 0;
  uint64_t value = 0;
  while (n < text.size() && text[n] >= '0' && text[n] <= '9' && value <= max) {
    value = value * 10 + static_cast<uint64_t>(text[n] - '0');
    ++n;
  }
  if (value > max) return 0;
  *out = static_cast<uint32_t>(value);
  return n;
}

// ".m16n8k16" (k is 0 in ".m8n8"), without the dot.
bool parse_shape(std::string_view word, uint32_t* m, uint32_t* n, uint32_t* k) {
  constexpr uint32_t kMaxExtent = 4096;
  if (word.size() < 4 || word[0] != 'm') return false;
  size_t at = 1;
  size_t read = read_digits(word.substr(at), kMaxExtent, m);
  if (read == 0) return false;
  at += read;
  if (at >= word.size() || word[at] != 'n') return false;
  ++at;
  read = read_digits(word.substr(at), kMaxExtent, n);
  if (read == 0) return false;
  at += read;
  *k = 0;
  if (at == word.size()) return true;
  if (word[at] != 'k') return false;
  ++at;
  read = read_digits(word.substr(at), kMaxExtent, k);
  return read != 0 && at + read == word.size();
}

// ".x1", ".x2", ".x4" (and wider powers of two), without the dot.
bool parse_fragments(std::string_view word, uint32_t* count) {
  if (word.size() < 2 || word[0] != 'x') return false;
  uint32_t value = 0;
  if (read_digits(word.substr(1), 128, &value) != word.size() - 1) return false;
  if (value == 0 || (value & (value - 1)) != 0) return false;
  *count = value;
  return true;
}

}  // namespace

// ===========================================================================================
// Blocks
// ===========================================================================================

bool Parser::parse_body(uint32_t function_index) {
  function_ = function_index;
  const ir::Function& parsed = function();
  owner_ = (parsed.is_entry ? "entry " : "function ") + quote(parsed.name);
  params_.clear();
  for (uint32_t i = 0; i < parsed.returns.size(); ++i) {
    params_.emplace(parsed.returns[i].name, ir::SymbolRef{ir::SymbolKind::kReturn, i});
  }
  for (uint32_t i = 0; i < parsed.params.size(); ++i) {
    params_.emplace(parsed.params[i].name, ir::SymbolRef{ir::SymbolKind::kParam, i});
  }
  scopes_.clear();
  return parse_block(1);
}

bool Parser::parse_block(size_t depth) {
  const uint32_t open_line = token_.line;
  advance();  // '{'
  scopes_.emplace_back();
  while (true) {
    if (token_.kind == TokenKind::kError) return fail("");
    if (token_.kind == TokenKind::kEnd) {
      return fail("unterminated '{' (opened on line " + std::to_string(open_line) + " in " +
                  owner_ + ") at the end of the input");
    }
    if (token_.is_punct('}')) {
      if (!close_scope()) return false;
      advance();
      return true;
    }
    bool ok = true;
    if (token_.is_punct('{')) {
      if (depth >= ir::kMaxNesting) {
        return fail("blocks nested deeper than " + std::to_string(ir::kMaxNesting) + " levels");
      }
      ok = parse_block(depth + 1);
    } else if (token_.is_punct(';')) {
      advance();
    } else if (token_.is_punct('@')) {
      ok = parse_instruction();
    } else if (token_.kind != TokenKind::kWord) {
      return fail("unexpected " + seen() + " in the body of " + owner_);
    } else if (token_.text[0] == '.') {
      // The directive alone: ".reg.b16" declares registers as ".reg .b16" does.
      const std::string_view word = token_.text.substr(0, token_.text.find('.', 1));
      const std::optional<ir::Space> space = space_from_word(word.substr(1));
      if (word == ".reg") {
        ok = parse_register_declaration();
      } else if (space && *space != ir::Space::kReg) {
        ok = parse_variable_declaration(ir::Linkage::kNone, true);
      } else if (word == ".pragma") {
        ok = skip_pragma();
      } else if (word == ".loc" || word == ".file") {
        skip_line();
      } else {
        return fail("unknown directive " + seen() + " in the body of " + owner_);
      }
    } else if (peek().is_punct(':')) {
      ok = parse_label();
    } else {
      ok = parse_instruction();
    }
    if (!ok) return false;
  }
}

// Resolves the scope's pending labels against its own; passes the rest to the enclosing scope,
// or reports the first (in the text) when this is the body's outermost one.
bool Parser::close_scope() {
  Scope& scope = scopes_.back();
  const PendingLabel* unresolved = nullptr;
  for (PendingLabel& pending : scope.pending) {
    const auto it = scope.labels.find(pending.name);
    if (it == scope.labels.end()) {
      if (scopes_.size() > 1) {
        scopes_[scopes_.size() - 2].pending.push_back(std::move(pending));
      } else if (unresolved == nullptr || pending.line < unresolved->line) {
        unresolved = &pending;
      }
      continue;
    }
    const ir::SymbolRef ref = it->second.ref;
    if (pending.in_target_list) {
      if (ref.kind != ir::SymbolKind::kLabel) {
        return fail_at(pending.line,
                       ".branchtargets names " + quote(pending.name) + ", which is not a label");
      }
      function().target_lists[pending.instruction].targets[pending.path[0]] = ref;
      continue;
    }
    ir::Operand* operand = &function().code[pending.instruction].operands[pending.path[0]];
    for (size_t i = 1; i < pending.path.size(); ++i) operand = &operand->elements[pending.path[i]];
    operand->symbol = ref;
  }
  if (unresolved != nullptr) {
    return fail_at(unresolved->line, "undeclared label " + quote(unresolved->name) + " in " +
                                         owner_ +
                                         " (no label, variable or function has that name)");
  }
  scopes_.pop_back();
  return true;
}

// "name:" before an instruction, or before .callprototype / .branchtargets / .calltargets.
bool Parser::parse_label() {
  const std::string name(token_.text);
  const uint32_t line = token_.line;
  if (!is_identifier(name)) return fail("malformed label " + quote(name));
  advance();  // the name
  advance();  // ':'
  if (token_.is_word(".callprototype")) return parse_prototype(name, line);
  if (token_.is_word(".branchtargets")) return parse_target_list(name, line, false);
  if (token_.is_word(".calltargets")) return parse_target_list(name, line, true);
  ir::Function& owner = function();
  const auto index = static_cast<uint32_t>(owner.labels.size());
  owner.labels.push_back(ir::Label{name, static_cast<uint32_t>(owner.code.size()), line});
  return declare_label(name, line, ir::SymbolRef{ir::SymbolKind::kLabel, index});
}

bool Parser::declare_label(const std::string& name, uint32_t line, ir::SymbolRef ref) {
  const auto [it, added] = scopes_.back().labels.emplace(name, LabelName{ref, line});
  if (!added) {
    return fail_at(line, "duplicate label " + quote(name) + " in this scope (first on line " +
                             std::to_string(it->second.line) + ")");
  }
  return true;
}

// "proto: .callprototype (.param .b32 _) _ (.param .b64 _, .param .b32 _);"
bool Parser::parse_prototype(const std::string& name, uint32_t line) {
  advance();  // .callprototype
  ir::Prototype prototype;
  prototype.name = name;
  prototype.line = line;
  const std::string owner = "the .callprototype " + quote(name);
  if (token_.is_punct('(') && !parse_param_list(&prototype.returns, owner)) return false;
  if (!token_.is_word("_")) return fail("expected '_' in " + owner + ", saw " + seen());
  advance();
  if (token_.is_punct('(') && !parse_param_list(&prototype.params, owner)) return false;
  while (token_.is_word(".noreturn")) {
    prototype.noreturn = true;
    advance();
  }
  if (!token_.is_punct(';')) return fail("expected ';' after " + owner + ", saw " + seen());
  advance();
  ir::Function& owner_function = function();
  const auto index = static_cast<uint32_t>(owner_function.prototypes.size());
  owner_function.prototypes.push_back(std::move(prototype));
  return declare_label(name, line, ir::SymbolRef{ir::SymbolKind::kPrototype, index});
}

// "table: .branchtargets L1, L2;" (labels, maybe declared later) or
// "table: .calltargets f, g;" (declared functions).
bool Parser::parse_target_list(const std::string& name, uint32_t line, bool calls) {
  const std::string directive(token_.text);
  advance();
  const auto index = static_cast<uint32_t>(function().target_lists.size());
  function().target_lists.push_back(ir::TargetList{name, calls, {}, line});
  while (true) {
    if (token_.kind != TokenKind::kWord || !is_identifier(token_.text)) {
      return fail("expected a name in " + directive + ", saw " + seen());
    }
    ir::TargetList& list = function().target_lists[index];
    if (calls) {
      const auto it = module_names_.find(token_.text);
      if (it == module_names_.end() || it->second.ref.kind != ir::SymbolKind::kFunction) {
        return fail(".calltargets names " + seen() + ", which is not a declared function");
      }
      list.targets.push_back(it->second.ref);
    } else {
      PendingLabel pending;
      pending.name = std::string(token_.text);
      pending.line = token_.line;
      pending.in_target_list = true;
      pending.instruction = index;
      pending.path.push_back(static_cast<uint32_t>(list.targets.size()));
      scopes_.back().pending.push_back(std::move(pending));
      list.targets.push_back(ir::SymbolRef{ir::SymbolKind::kLabel, 0});
    }
    advance();
    if (token_.is_punct(';')) break;
    if (!expect_punct(',', "between the names of " + directive)) return false;
  }
  advance();
  return declare_label(name, line, ir::SymbolRef{ir::SymbolKind::kTargetList, index});
}

// ===========================================================================================
// Instructions
// ===========================================================================================

bool Parser::parse_instruction() {
  ir::Instruction instruction;
  instruction.line = token_.line;
  if (token_.is_punct('@')) {
    advance();
    if (token_.is_punct('!')) {
      instruction.guard_negated = true;
      advance();
    }
    if (token_.kind != TokenKind::kWord) {
      return fail("expected a predicate register after '@', saw " + seen());
    }
    if (!resolve_register(token_.text, &instruction.guard)) return false;
    instruction.guarded = true;
    advance();
    if (token_.kind != TokenKind::kWord || token_.text[0] == '.' || token_.text[0] == '%') {
      return fail("expected an instruction after the guard, saw " + seen());
    }
  }
  if (!parse_mnemonic(&instruction)) return false;
  while (!token_.is_punct(';')) {
    operand_path_.assign(1, static_cast<uint32_t>(instruction.operands.size()));
    ir::Operand operand;
    if (!parse_operand(&operand, 0)) return false;
    instruction.operands.push_back(std::move(operand));
    if (token_.is_punct(',')) {
      advance();
    } else if (!token_.is_punct(';')) {
      return fail("expected ',' or ';' after operand " +
                  std::to_string(instruction.operands.size()) + " of " + quote(instruction.text) +
                  ", saw " + seen());
    }
  }
  advance();  // ';'
  function().code.push_back(std::move(instruction));
  return true;
}

// "ld.global.nc.v4.f32": the opcode, then each dotted word by what it is (see ir.h).
bool Parser::parse_mnemonic(ir::Instruction* instruction) {
  const std::string_view text = token_.text;
  instruction->text = std::string(text);
  const size_t dot = text.find('.');
  const std::string_view mnemonic = text.substr(0, dot);
  const std::optional<ir::Opcode> opcode = opcode_from_word(mnemonic);
  if (!opcode) {
    return fail("unknown instruction " + quote(mnemonic) +
                (dot == std::string_view::npos ? std::string() : " (in " + quote(text) + ")"));
  }
  instruction->opcode = *opcode;
  for (size_t start = dot; start != std::string_view::npos && start < text.size();) {
    size_t end = text.find('.', start + 1);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start + 1, end - start - 1);
    start = end;
    uint32_t m = 0;
    uint32_t n = 0;
    uint32_t k = 0;
    uint32_t fragments = 0;
    if (word.empty()) return fail("an empty modifier in " + quote(text));
    if (std::optional<ir::Type> type = type_from_word(word)) {
      instruction->types.push_back(*type);
    } else if (word == "v2" || word == "v4" || word == "v8") {
      instruction->vector = static_cast<uint32_t>(word[1] - '0');
    } else if (parse_shape(word, &m, &n, &k)) {
      instruction->shape_m = m;
      instruction->shape_n = n;
      instruction->shape_k = k;
    } else if (parse_fragments(word, &fragments)) {
      instruction->fragments = fragments;
    } else if (std::optional<ir::Mod> mod = mod_from_word(word)) {
      instruction->mods.add(*mod);
    } else {
      instruction->unknown_mods.emplace_back(word);
    }
  }
  advance();
  return true;
}

// ===========================================================================================
// Operands
// ===========================================================================================

bool Parser::parse_operand(ir::Operand* out, size_t depth) {
  if (depth >= ir::kMaxNesting) {
    return fail("operands nested deeper than " + std::to_string(ir::kMaxNesting) + " levels");
  }
  if (token_.is_punct('{') || token_.is_punct('(')) {
    // "{%r1, %r2, _, 0}" (a vector) or "(param0, param1)" (a call's list).
    const bool vector = token_.is_punct('{');
    const char close = vector ? '}' : ')';
    out->kind = vector ? ir::OperandKind::kVector : ir::OperandKind::kList;
    advance();
    if (vector && token_.is_punct('}')) return fail("malformed operand: an empty vector '{}'");
    while (!token_.is_punct(close)) {
      operand_path_.push_back(static_cast<uint32_t>(out->elements.size()));
      ir::Operand element;
      if (!parse_operand(&element, depth + 1)) return false;
      operand_path_.pop_back();
      out->elements.push_back(std::move(element));
      if (token_.is_punct(',')) {
        advance();
      } else if (!token_.is_punct(close)) {
        return fail(std::string("malformed operand: expected ',' or '") + close + "' in a " +
                    (vector ? "vector" : "list") + ", saw " + seen());
      }
    }
    advance();
    return true;
  }
  if (token_.is_punct('[')) return parse_address(out, depth);
  if (token_.is_punct('!')) {
    advance();
    if (token_.kind != TokenKind::kWord || !parse_name_operand(out) ||
        out->kind != ir::OperandKind::kRegister) {
      return fail("malformed operand: '!' must precede a predicate register, saw " + seen());
    }
    out->negate = true;
    return true;
  }
  bool negative = false;
  if (token_.is_punct('-')) {
    negative = true;
    advance();
    if (token_.kind != TokenKind::kNumber) {
      return fail("malformed operand: expected a number after '-', saw " + seen());
    }
  }
  if (token_.kind == TokenKind::kNumber) {
    Number number;
    std::string why;
    if (!parse_number(token_.text, &number, &why)) {
      return fail("malformed number " + seen() + ": " + why);
    }
    if (number.kind == Number::Kind::kInteger) {
      out->kind = ir::OperandKind::kInteger;
      out->integer = static_cast<int64_t>(negative ? uint64_t{0} - number.bits : number.bits);
    } else {
      out->kind = ir::OperandKind::kFloat;
      out->is_double = number.kind == Number::Kind::kFloat64;
      const uint64_t sign = uint64_t{1} << (out->is_double ? 63 : 31);
      out->float_bits = number.bits ^ (negative ? sign : 0);
    }
    advance();
    return true;
  }
  if (token_.is_word("_")) {
    out->kind = ir::OperandKind::kSink;
    advance();
    return true;
  }
  if (token_.kind == TokenKind::kWord) return parse_name_operand(out);
  return fail("malformed operand: unexpected " + seen());
}

// A register ("%r1", "%p|%q"), special register ("%tid.x"), or symbol ("smem", "smem+16",
// a parameter, a function, a label).
bool Parser::parse_name_operand(ir::Operand* out) {
  const std::string_view name = token_.text;
  const uint32_t line = token_.line;
  if (name.find('.') != std::string_view::npos || name.find(':') != std::string_view::npos) {
    std::string why;
    const std::optional<SpecialRegister> special = special_from_word(name, &why);
    if (!special) {
      if (!why.empty()) return fail("malformed operand " + why);
      const std::string_view base = name.substr(0, name.find('.'));
      for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
        if (scope->names.find(base)) {
          return fail("malformed operand " + quote(name) +
                      ": elements of vector registers are not supported");
        }
      }
      return fail("malformed operand " + quote(name) +
                  (name[0] == '%' ? ": not a special register" : ": not a name"));
    }
    out->kind = ir::OperandKind::kSpecial;
    out->special = special->special;
    out->component = special->component;
    advance();
    return true;
  }
  bool found = false;
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend() && !found; ++scope) {
    if (const std::optional<Binding> binding = scope->names.find(name)) {
      found = true;
      if (binding->kind == Binding::Kind::kRegister) {
        out->kind = ir::OperandKind::kRegister;
        out->reg = binding->index;
      } else {
        out->kind = ir::OperandKind::kSymbol;
        out->symbol = ir::SymbolRef{ir::SymbolKind::kFunctionVariable, binding->index};
      }
    }
  }
  if (!found && resolve_symbol(name, &out->symbol)) {
    found = true;
    out->kind = ir::OperandKind::kSymbol;
  }
  if (!found && name[0] == '%') {
    std::string why;
    const std::optional<SpecialRegister> special = special_from_word(name, &why);
    if (!special) {
      return fail(why.empty() ? "undeclared register " + quote(name) : "malformed operand " + why);
    }
    out->kind = ir::OperandKind::kSpecial;
    out->special = special->special;
    out->component = special->component;
    advance();
    return true;
  }
  if (!found && name == "WARP_SZ") {
    // PTX's predefined constant, the warp size, which is 32 wherever PTX runs; a name the
    // program declares itself (found above) shadows it.
    out->kind = ir::OperandKind::kInteger;
    out->integer = 32;
    advance();
    return true;
  }
  if (!found) {
    // A label, perhaps declared further on: resolved when its scope closes.
    PendingLabel pending;
    pending.name = std::string(name);
    pending.line = line;
    pending.instruction = static_cast<uint32_t>(function().code.size());
    pending.path = operand_path_;
    scopes_.back().pending.push_back(std::move(pending));
    out->kind = ir::OperandKind::kSymbol;
    out->symbol = ir::SymbolRef{ir::SymbolKind::kLabel, 0};
  }
  advance();
  if (out->kind == ir::OperandKind::kRegister && token_.is_punct('|')) {
    advance();  // "%p|%q": setp's second destination
    if (token_.kind != TokenKind::kWord) {
      return fail("malformed operand: expected a register after '|', saw " + seen());
    }
    if (!resolve_register(token_.text, &out->reg2)) return false;
    out->has_reg2 = true;
    advance();
  } else if (out->kind == ir::OperandKind::kSymbol) {
    return parse_offset(&out->integer);  // "smem+16"
  }
  return true;
}

// "[%rd1]", "[%rd1+16]", "[%rd1+-16]", "[name+8]", "[0x100]", spaces anywhere; and what
// follows the base after commas ("[%rd1, {%r1, %r2}]") into elements.
bool Parser::parse_address(ir::Operand* out, size_t depth) {
  advance();  // '['
  out->kind = ir::OperandKind::kAddress;
  if (token_.kind == TokenKind::kWord) {
    const std::string_view name = token_.text;
    bool found = false;
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend() && !found; ++scope) {
      if (const std::optional<Binding> binding = scope->names.find(name)) {
        found = true;
        if (binding->kind == Binding::Kind::kRegister) {
          out->base = ir::AddressBase::kRegister;
          out->reg = binding->index;
        } else {
          out->base = ir::AddressBase::kSymbol;
          out->symbol = ir::SymbolRef{ir::SymbolKind::kFunctionVariable, binding->index};
        }
      }
    }
    if (!found && resolve_symbol(name, &out->symbol)) {
      found = true;
      out->base = ir::AddressBase::kSymbol;
    }
    if (!found) {
      return fail((name[0] == '%' ? "undeclared register " : "undeclared symbol ") + quote(name) +
                  " in an address");
    }
    advance();
  } else if (token_.kind == TokenKind::kNumber) {
    uint64_t value = 0;
    if (!read_integer(~uint64_t{0}, &value)) {
      return fail("malformed address: expected an integer, saw " + seen());
    }
    out->integer = static_cast<int64_t>(value);
    advance();
  } else {
    return fail("malformed address: expected a register, a variable or a number after '[', saw " +
                seen());
  }
  if (!parse_offset(&out->integer)) return false;
  while (token_.is_punct(',')) {
    advance();
    operand_path_.push_back(static_cast<uint32_t>(out->elements.size()));
    ir::Operand element;
    if (!parse_operand(&element, depth + 1)) return false;
    operand_path_.pop_back();
    out->elements.push_back(std::move(element));
  }
  if (!token_.is_punct(']')) return fail("malformed address: expected ']', saw " + seen());
  advance();
  return true;
}

bool Parser::resolve_register(std::string_view name, uint32_t* index) {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    if (const std::optional<Binding> binding = scope->names.find(name)) {
      if (binding->kind != Binding::Kind::kRegister) {
        return fail(quote(name) + " is a variable, not a register");
      }
      *index = binding->index;
      return true;
    }
  }
  return fail("undeclared register " + quote(name));
}

bool Parser::resolve_symbol(std::string_view name, ir::SymbolRef* out) const {
  if (const auto it = params_.find(name); it != params_.end()) {
    *out = it->second;
    return true;
  }
  if (const auto it = module_names_.find(name); it != module_names_.end()) {
    *out = it->second.ref;
    return true;
  }
  return false;
}

}  // namespace hal::ptx
