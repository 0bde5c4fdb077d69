// The PTX parser, part one: tokens and errors, the module's header directives, linkage and
// function signatures, skipped bodies, and ir::parse. See parser.h for the parts.
#include "ptx/parser.h"

#include <utility>

#include "ptx/words.h"

namespace hal::ptx {
namespace {

// Caps on numbers that size nothing, so that they stay plausible.
constexpr uint64_t kMaxDimension = 1u << 20;  // .reqntid, .maxntid, .maxnreg, ...

// Decimal digits only, at most |max|.
bool parse_decimal(std::string_view text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (max - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

}  // namespace

// ===========================================================================================
// Tokens and errors
// ===========================================================================================

void Parser::advance() {
  if (has_next_) {
    token_ = next_;
    has_next_ = false;
  } else {
    token_ = lexer_.next();
  }
}

const Token& Parser::peek() {
  if (!has_next_) {
    next_ = lexer_.next();
    has_next_ = true;
  }
  return next_;
}

bool Parser::fail(std::string message) {
  if (token_.kind == TokenKind::kError) return fail_at(token_.line, std::string(token_.text));
  return fail_at(token_.line, std::move(message));
}

bool Parser::fail_at(uint32_t line, std::string message) {
  if (!failed_) {
    failed_ = true;
    error_.line = line;
    error_.message = std::move(message);
  }
  return false;
}

std::string Parser::seen() const {
  if (token_.kind == TokenKind::kEnd) return "the end of the input";
  return quote(token_.text);
}

bool Parser::read_integer(uint64_t max, uint64_t* out) const {
  if (token_.kind != TokenKind::kNumber) return false;
  Number number;
  std::string why;
  if (!parse_number(token_.text, &number, &why) || number.kind != Number::Kind::kInteger ||
      number.bits > max) {
    return false;
  }
  *out = number.bits;
  return true;
}

bool Parser::expect_punct(char c, std::string_view after) {
  if (!token_.is_punct(c)) {
    return fail("expected '" + std::string(1, c) + "' " + std::string(after) + ", saw " + seen());
  }
  advance();
  return true;
}

bool Parser::parse_offset(int64_t* offset) {
  while (token_.is_punct('+') || token_.is_punct('-')) {
    const char op = token_.text[0];
    bool negative = op == '-';
    advance();
    if (token_.is_punct('-')) {  // "[%rd1+-16]"
      negative = !negative;
      advance();
    }
    Number number;
    std::string why;
    if (token_.kind != TokenKind::kNumber || !parse_number(token_.text, &number, &why) ||
        number.kind != Number::Kind::kInteger) {
      return fail("expected an integer after '" + std::string(1, op) + "', saw " + seen());
    }
    // Two's complement arithmetic, as the offset is a 64-bit address displacement.
    const uint64_t value = negative ? uint64_t{0} - number.bits : number.bits;
    *offset = static_cast<int64_t>(static_cast<uint64_t>(*offset) + value);
    advance();
  }
  return true;
}

// ===========================================================================================
// The module
// ===========================================================================================

bool Parser::run(ir::ParseError* error) {
  *out_ = ir::Module{};
  advance();
  if (parse_module()) return true;
  if (!failed_) fail("malformed PTX");  // every failing path records its reason; be safe
  *error = error_;
  return false;
}

bool Parser::parse_module() {
  if (!token_.is_word(".version")) {
    if (token_.kind == TokenKind::kError) return fail("");
    if (token_.kind == TokenKind::kEnd) {
      return fail("no .version directive: this does not look like PTX");
    }
    if (token_.kind == TokenKind::kWord && token_.text[0] == '.') {
      return fail(seen() + " before .version: a PTX module starts with .version");
    }
    return fail("no .version directive: this does not look like PTX (it starts with " + seen() +
                ")");
  }
  if (!parse_version()) return false;
  bool have_target = false;
  while (token_.kind != TokenKind::kEnd) {
    if (token_.kind == TokenKind::kError) return fail("");
    if (token_.is_punct('}')) return fail("'}' without a matching '{'");
    if (token_.kind != TokenKind::kWord || token_.text[0] != '.') {
      return fail("unexpected " + seen() +
                  " at module scope: expected a directive such as .entry, .func or .global");
    }
    const std::string_view word = token_.text;
    if (word == ".version") return fail("a second .version directive");
    if (word == ".target") {
      if (have_target) return fail("a second .target directive");
      if (!parse_target()) return false;
      have_target = true;
    } else if (word == ".address_size") {
      if (!parse_address_size()) return false;
    } else if (word == ".file" || word == ".loc") {
      skip_line();
    } else if (word == ".pragma") {
      if (!skip_pragma()) return false;
    } else if (word == ".section") {
      if (!skip_section()) return false;
    } else if (!have_target) {
      return fail(seen() + " before .target: .version and .target come first");
    } else if (word == ".alias") {
      if (!parse_alias()) return false;
    } else if (!parse_module_declaration()) {
      return false;
    }
  }
  if (!have_target) return fail("no .target directive");
  return true;
}

bool Parser::parse_version() {
  advance();
  if (token_.kind != TokenKind::kNumber) {
    return fail("expected major.minor after .version, saw " + seen());
  }
  const std::string_view text = token_.text;
  const size_t dot = text.find('.');
  uint64_t major = 0;
  uint64_t minor = 0;
  if (dot == std::string_view::npos || !parse_decimal(text.substr(0, dot), 99, &major) ||
      !parse_decimal(text.substr(dot + 1), 99, &minor)) {
    return fail("malformed .version " + quote(text) + ": expected major.minor");
  }
  out_->version_major = static_cast<uint32_t>(major);
  out_->version_minor = static_cast<uint32_t>(minor);
  advance();
  return true;
}

bool Parser::parse_target() {
  advance();
  if (token_.kind != TokenKind::kWord) {
    return fail("expected an architecture after .target, saw " + seen());
  }
  const std::string_view target = token_.text;
  if (target.substr(0, 3) != "sm_") {
    return fail("unsupported .target " + quote(target) + ": expected sm_XY");
  }
  size_t digits = 3;
  while (digits < target.size() && target[digits] >= '0' && target[digits] <= '9') ++digits;
  uint64_t sm = 0;
  const std::string_view suffix = target.substr(digits);
  // Architecture-specific ("a") and family ("f") targets; one lowercase letter in all.
  const bool suffix_ok =
      suffix.empty() || (suffix.size() == 1 && suffix[0] >= 'a' && suffix[0] <= 'z');
  if (digits < 5 || !suffix_ok || !parse_decimal(target.substr(3, digits - 3), 9999, &sm) ||
      sm < 10) {
    return fail("malformed .target " + quote(target) + ": expected sm_XY");
  }
  out_->target = std::string(target);
  out_->target_sm = static_cast<uint32_t>(sm);
  out_->target_suffix = suffix == "a" || suffix == "f" ? suffix[0] : 0;
  advance();
  // Further comma-separated options (texmode_*, debug, map_f64_to_f32).
  while (token_.is_punct(',')) {
    advance();
    if (token_.kind != TokenKind::kWord) {
      return fail("expected a .target option after ',', saw " + seen());
    }
    advance();
  }
  return true;
}

bool Parser::parse_address_size() {
  advance();
  uint64_t size = 0;
  if (!read_integer(64, &size) || (size != 32 && size != 64)) {
    return fail("expected 32 or 64 after .address_size, saw " + seen());
  }
  out_->address_size = static_cast<uint32_t>(size);
  advance();
  return true;
}

// .file and .loc end with their line ("  .loc 1 42 7" has no ';'), and hold nothing the IR keeps.
// A brace ends them too, so that skipped bodies and parsed ones match braces alike.
void Parser::skip_line() {
  const uint32_t line = token_.line;
  advance();
  while (token_.kind != TokenKind::kEnd && token_.kind != TokenKind::kError &&
         token_.line == line && !token_.is_punct('{') && !token_.is_punct('}')) {
    advance();
  }
}

bool Parser::skip_pragma() {
  advance();
  while (true) {
    if (token_.kind != TokenKind::kString) {
      return fail("expected a string after .pragma, saw " + seen());
    }
    advance();
    if (token_.is_punct(';')) break;
    if (!token_.is_punct(',')) return fail("expected ';' after .pragma's string, saw " + seen());
    advance();
  }
  advance();
  return true;
}

// Debug sections (".section .debug_info { ... }") hold data for debuggers only.
bool Parser::skip_section() {
  const uint32_t line = token_.line;
  advance();
  if (token_.kind != TokenKind::kWord) {
    return fail("expected a section name after .section, saw " + seen());
  }
  advance();
  if (!token_.is_punct('{')) return fail("expected '{' after the section's name, saw " + seen());
  size_t depth = 0;
  do {
    if (token_.kind == TokenKind::kError) return fail("");
    if (token_.kind == TokenKind::kEnd) {
      return fail("unterminated '{' of the .section on line " + std::to_string(line) +
                  " at the end of the input");
    }
    if (token_.is_punct('{')) ++depth;
    if (token_.is_punct('}')) --depth;
    advance();
  } while (depth > 0);
  return true;
}

bool Parser::skip_parenthesized(std::string_view after) {
  if (!token_.is_punct('(')) {
    return fail("expected '(' after " + std::string(after) + ", saw " + seen());
  }
  const uint32_t line = token_.line;
  size_t depth = 0;
  do {
    if (token_.kind == TokenKind::kError) return fail("");
    if (token_.kind == TokenKind::kEnd || token_.is_punct(';') || token_.is_punct('{')) {
      return fail_at(line, "unterminated '(' after " + std::string(after));
    }
    if (token_.is_punct('(')) ++depth;
    if (token_.is_punct(')')) --depth;
    advance();
  } while (depth > 0);
  return true;
}

// ".alias alias, aliasee;": both are functions; later references to the alias reach the
// aliasee's definition.
bool Parser::parse_alias() {
  advance();
  std::string names[2];
  for (int i = 0; i < 2; ++i) {
    if (token_.kind != TokenKind::kWord || !is_identifier(token_.text)) {
      return fail("expected a function name in .alias, saw " + seen());
    }
    names[i] = std::string(token_.text);
    advance();
    if (i == 0 && !expect_punct(',', "between the names of .alias")) return false;
  }
  if (!token_.is_punct(';')) return fail("expected ';' after .alias, saw " + seen());
  const auto alias = module_names_.find(names[0]);
  const auto aliasee = module_names_.find(names[1]);
  for (const auto& it : {alias, aliasee}) {
    if (it == module_names_.end() || it->second.ref.kind != ir::SymbolKind::kFunction) {
      return fail(".alias names " + quote(it == alias ? names[0] : names[1]) +
                  ", which is not a declared function");
    }
  }
  alias->second.ref = aliasee->second.ref;
  advance();
  return true;
}

bool Parser::parse_module_declaration() {
  ir::Linkage linkage = ir::Linkage::kNone;
  if (std::optional<ir::Linkage> found = linkage_from_directive(token_.text)) {
    linkage = *found;
    advance();
    if (token_.kind == TokenKind::kWord && linkage_from_directive(token_.text)) {
      return fail("a second linkage directive " + seen());
    }
  }
  if (token_.is_word(".entry")) return parse_function(linkage, true);
  if (token_.is_word(".func")) return parse_function(linkage, false);
  if (token_.kind == TokenKind::kWord && token_.text[0] == '.') {
    const std::optional<ir::Space> space = space_from_word(token_.text.substr(1));
    if (space && *space != ir::Space::kReg && *space != ir::Space::kParam) {
      return parse_variable_declaration(linkage, false);
    }
  }
  if (linkage != ir::Linkage::kNone) {
    return fail("expected .entry, .func or a state space after the linkage directive, saw " +
                seen());
  }
  return fail("unknown directive " + seen() + " at module scope");
}

// ===========================================================================================
// Functions
// ===========================================================================================

bool Parser::parse_function(ir::Linkage linkage, bool is_entry) {
  ir::Function function;
  function.is_entry = is_entry;
  function.linkage = linkage;
  function.line = token_.line;
  const std::string directive(token_.text);
  advance();
  if (!is_entry) {
    while (token_.is_word(".attribute")) {
      advance();
      if (!skip_parenthesized(".attribute")) return false;
    }
    if (token_.is_punct('(') &&
        !parse_param_list(&function.returns, "the return value of a .func")) {
      return false;
    }
  }
  if (token_.kind != TokenKind::kWord || !is_identifier(token_.text) || token_.text[0] == '%') {
    return fail("expected a name after " + directive + ", saw " + seen());
  }
  function.name = std::string(token_.text);
  const std::string owner = (is_entry ? "entry " : "function ") + quote(function.name);
  advance();
  if (token_.is_punct('(') && !parse_param_list(&function.params, owner)) return false;
  // Parameter names are one scope, return values included.
  NameMap<uint32_t> names;
  for (const auto* list : {&function.returns, &function.params}) {
    for (const ir::Variable& param : *list) {
      if (param.name == "_") continue;
      if (!names.emplace(param.name, param.line).second) {
        return fail_at(param.line,
                       "duplicate declaration of parameter " + quote(param.name) + " in " + owner);
      }
    }
  }
  if (is_entry) {
    for (const ir::Variable& param : function.params) {
      if (param.space != ir::Space::kParam) {
        return fail_at(param.line, "the parameters of " + owner + " must be .param, not .reg");
      }
    }
    if (!check_param_layout(function, owner)) return false;
  }
  if (!parse_function_directives(&function, owner)) return false;
  const bool has_body = function.has_body;
  uint32_t index = 0;
  if (!add_function(std::move(function), owner, &index)) return false;
  if (!has_body) return true;
  return options_.bodies ? parse_body(index) : skip_body(owner);
}

bool Parser::parse_param_list(std::vector<ir::Variable>* params, const std::string& owner) {
  advance();  // '('
  if (token_.is_punct(')')) {
    advance();
    return true;
  }
  while (true) {
    if (params->size() >= ir::kMaxParams) {
      return fail(owner + " has more than " + std::to_string(ir::kMaxParams) + " parameters");
    }
    ir::Variable param;
    if (!parse_param(&param, owner)) return false;
    params->push_back(std::move(param));
    if (token_.is_punct(',')) {
      advance();
    } else if (token_.is_punct(')')) {
      advance();
      return true;
    } else {
      return fail("expected ',' or ')' in the parameter list of " + owner + ", saw " + seen());
    }
  }
}

bool Parser::parse_param(ir::Variable* param, const std::string& owner) {
  if (token_.is_word(".param")) {
    param->space = ir::Space::kParam;
  } else if (token_.is_word(".reg")) {
    param->space = ir::Space::kReg;  // old-style .func parameters
  } else {
    return fail("expected .param in the parameter list of " + owner + ", saw " + seen());
  }
  param->line = token_.line;
  advance();
  Qualifiers qualifiers;
  if (!parse_qualifiers(DeclKind::kParam, "a parameter of " + owner, &qualifiers)) return false;
  if (qualifiers.type == ir::Type::kNone) {
    return fail("a parameter of " + owner + " has no type before " + seen());
  }
  if (qualifiers.type == ir::Type::kPred && param->space != ir::Space::kReg) {
    return fail("a .param of " + owner + " cannot be a .pred; use .reg");
  }
  if (token_.kind != TokenKind::kWord || !is_identifier(token_.text)) {
    return fail("expected a parameter name, saw " + seen());
  }
  param->name = std::string(token_.text);
  param->type = qualifiers.type;
  param->vector = qualifiers.vector;
  param->align = qualifiers.align;
  param->is_ptr = qualifiers.is_ptr;
  param->ptr_space = qualifiers.ptr_space;
  param->ptr_align = qualifiers.ptr_align;
  advance();
  const uint64_t element = uint64_t{ir::type_size(param->type)} * param->vector;
  uint64_t count = 1;
  while (token_.is_punct('[')) {
    advance();
    uint64_t extent = 0;
    if (!read_integer(ir::kMaxParamBytes, &extent) || extent == 0) {
      return fail("expected an array size in " + quote(param->name) + ", saw " + seen());
    }
    count *= extent;
    if (count * element > ir::kMaxParamBytes) {
      return fail("parameter " + quote(param->name) + " is larger than " +
                  std::to_string(ir::kMaxParamBytes) + " bytes");
    }
    advance();
    if (!expect_punct(']', "after the array size")) return false;
  }
  param->count = count;
  return true;
}

// The parameter buffer, laid out as the driver lays it out, must fit the cap.
bool Parser::check_param_layout(const ir::Function& function, const std::string& owner) {
  uint64_t offset = 0;
  for (const ir::Variable& param : function.params) {
    const uint64_t align = param.alignment();
    offset = (offset + align - 1) / align * align + param.size();
    if (offset > ir::kMaxParamBytes) {
      return fail("the parameters of " + owner + " exceed " + std::to_string(ir::kMaxParamBytes) +
                  " bytes");
    }
  }
  return true;
}

// Performance and other directives between the signature and the body ('{', which is left
// current) or the end of a declaration (';', which is consumed).
bool Parser::parse_function_directives(ir::Function* function, const std::string& owner) {
  while (true) {
    if (token_.kind == TokenKind::kError) return fail("");
    if (token_.kind == TokenKind::kEnd) {
      return fail(owner + " has no body before the end of the input");
    }
    if (token_.is_punct('{')) {
      function->has_body = true;
      return true;
    }
    if (token_.is_punct(';')) {
      advance();
      return true;
    }
    if (token_.kind != TokenKind::kWord || token_.text[0] != '.' || token_.is_word(".entry") ||
        token_.is_word(".func")) {
      return fail("expected the body of " + owner + ", saw " + seen());
    }
    const std::string_view word = token_.text;
    uint32_t ignored[3];
    uint32_t ignored_count = 0;
    bool ok = true;
    if (word == ".reqntid") {
      ok = parse_dims(function->reqntid);
    } else if (word == ".maxntid") {
      ok = parse_dims(function->maxntid);
    } else if (word == ".reqnctapercluster") {
      ok = parse_dims(ignored);
    } else if (word == ".minnctapersm") {
      ok = parse_count(&function->minnctapersm);
    } else if (word == ".maxnreg") {
      ok = parse_count(&function->maxnreg);
    } else if (word == ".maxnctapersm" || word == ".maxclusterrank") {
      ok = parse_count(&ignored_count);
    } else if (word == ".noreturn") {
      function->noreturn = true;
      advance();
    } else if (word == ".pragma") {
      ok = skip_pragma();
    } else {
      // A directive of a newer PTX (".explicitcluster", ".abi_preserve 4", ...): it tunes code
      // generation, so it is passed over with its numbers rather than refused.
      advance();
      while (token_.kind == TokenKind::kNumber || token_.is_punct(',')) advance();
    }
    if (!ok) return false;
  }
}

// Up to three comma-separated dimensions after .reqntid or .maxntid; missing ones are 1.
bool Parser::parse_dims(uint32_t dims[3]) {
  const std::string directive(token_.text);
  dims[0] = dims[1] = dims[2] = 1;
  for (int i = 0; i < 3; ++i) {
    advance();
    uint64_t value = 0;
    if (!read_integer(kMaxDimension, &value) || value == 0) {
      return fail("expected a dimension after " + directive + ", saw " + seen());
    }
    dims[i] = static_cast<uint32_t>(value);
    advance();
    if (!token_.is_punct(',')) break;
  }
  return true;
}

bool Parser::parse_count(uint32_t* out) {
  const std::string directive(token_.text);
  advance();
  uint64_t value = 0;
  if (!read_integer(kMaxDimension, &value)) {
    return fail("expected a count after " + directive + ", saw " + seen());
  }
  *out = static_cast<uint32_t>(value);
  advance();
  return true;
}

// A definition after a declaration of the same function takes the declaration's place, so
// that references made in between stay valid.
bool Parser::add_function(ir::Function function, const std::string& owner, uint32_t* index) {
  const auto it = module_names_.find(function.name);
  if (it != module_names_.end()) {
    if (it->second.ref.kind != ir::SymbolKind::kFunction) {
      return fail_at(function.line, "duplicate declaration of " + quote(function.name) +
                                        " (first declared on line " +
                                        std::to_string(it->second.line) + ")");
    }
    ir::Function& earlier = out_->functions[it->second.ref.index];
    if (earlier.has_body && function.has_body) {
      return fail_at(function.line, "duplicate definition of " + owner +
                                        " (first defined on line " + std::to_string(earlier.line) +
                                        ")");
    }
    if (earlier.is_entry != function.is_entry || earlier.params.size() != function.params.size() ||
        earlier.returns.size() != function.returns.size()) {
      return fail_at(function.line, owner + " does not match its declaration on line " +
                                        std::to_string(it->second.line));
    }
    if (function.has_body) earlier = std::move(function);
    *index = it->second.ref.index;
    return true;
  }
  if (out_->functions.size() >= ir::kMaxFunctions) {
    return fail_at(function.line,
                   "more than " + std::to_string(ir::kMaxFunctions) + " functions in the module");
  }
  *index = static_cast<uint32_t>(out_->functions.size());
  module_names_.emplace(
      function.name, ModuleName{ir::SymbolRef{ir::SymbolKind::kFunction, *index}, function.line});
  out_->functions.push_back(std::move(function));
  return true;
}

// ParseOptions::bodies == false: the body is passed over by matching braces (strings and
// comments cannot hide one: the lexer has consumed them).
bool Parser::skip_body(const std::string& owner) {
  const uint32_t line = token_.line;
  size_t depth = 0;
  do {
    if (token_.kind == TokenKind::kError) return fail("");
    if (token_.kind == TokenKind::kEnd) {
      return fail("unterminated '{' (the body of " + owner + ", opened on line " +
                  std::to_string(line) + ") at the end of the input");
    }
    if (token_.is_punct('{')) ++depth;
    if (token_.is_punct('}')) --depth;
    advance();
  } while (depth > 0);
  return true;
}

}  // namespace hal::ptx

namespace hal::ptx::ir {

bool parse(const char* text, size_t size, const ParseOptions& options, Module* out,
           ParseError* error) {
  if (text == nullptr) size = 0;
  Parser parser(size == 0 ? "" : text, size, options, out);
  return parser.run(error);
}

}  // namespace hal::ptx::ir
