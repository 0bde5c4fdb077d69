#include "cuda/ptx_parser.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace hal::ptx {
namespace {

// ===========================================================================================
// Lexer: words (identifiers, directives, instructions), numbers, strings, single punctuation.
// Comments and white space are skipped. Every read is bounds-checked against the view.
// ===========================================================================================

enum class Tok { kEnd, kWord, kNumber, kString, kPunct, kError };

struct Token {
  Tok kind = Tok::kEnd;
  std::string_view text;
  size_t line = 1;
};

bool is_word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%' ||
         c == '.';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_word_char(char c) {
  return is_word_start(c) || is_digit(c);
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next() {
    skip_space_and_comments();
    Token token;
    token.line = line_;
    if (!error_.empty()) {
      token.kind = Tok::kError;
      token.text = error_;
      return token;
    }
    if (pos_ >= text_.size()) return token;
    const size_t start = pos_;
    const char c = text_[pos_];
    if (is_word_start(c)) {
      while (pos_ < text_.size() && is_word_char(text_[pos_])) ++pos_;
      token.kind = Tok::kWord;
    } else if (is_digit(c)) {
      while (pos_ < text_.size() && (is_word_char(text_[pos_]))) ++pos_;
      token.kind = Tok::kNumber;
    } else if (c == '"') {
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] != '"') {
        if (text_[pos_] == '\n') ++line_;
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
        ++pos_;
      }
      if (pos_ >= text_.size()) return error(token, "unterminated string");
      ++pos_;
      token.kind = Tok::kString;
    } else {
      ++pos_;
      token.kind = Tok::kPunct;
    }
    token.text = text_.substr(start, pos_ - start);
    if (token.text.size() > kMaxIdentifierLength) {
      return error(token,
                   "a token longer than " + std::to_string(kMaxIdentifierLength) + " characters");
    }
    return token;
  }

 private:
  Token error(Token token, std::string message) {
    error_ = std::move(message);
    token.kind = Tok::kError;
    token.text = error_;
    return token;
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
        const size_t close = text_.find("*/", pos_ + 2);
        const size_t end = close == std::string_view::npos ? text_.size() : close + 2;
        for (size_t i = pos_; i < end; ++i) line_ += text_[i] == '\n' ? 1 : 0;
        pos_ = end;
        if (close == std::string_view::npos) error_ = "unterminated /* comment";
        return;
      } else {
        return;
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t line_ = 1;
  std::string error_;
};

// Decimal digits only, no sign; false on anything else or a value above |max|.
bool parse_uint(std::string_view text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (!is_digit(c)) return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (max - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

// Size in bytes of a PTX fundamental type usable for parameters, or 0 if |word| is not one.
// |is_int64| is set for the 64-bit integer types.
uint32_t type_size(std::string_view word, bool* is_int64) {
  struct TypeSize {
    std::string_view name;
    uint32_t size;
    bool int64;
  };
  static constexpr TypeSize kTypes[] = {
      {".s8", 1, false},    {".u8", 1, false},     {".b8", 1, false},    {".s16", 2, false},
      {".u16", 2, false},   {".b16", 2, false},    {".f16", 2, false},   {".bf16", 2, false},
      {".s32", 4, false},   {".u32", 4, false},    {".b32", 4, false},   {".f32", 4, false},
      {".f16x2", 4, false}, {".bf16x2", 4, false}, {".s64", 8, true},    {".u64", 8, true},
      {".b64", 8, true},    {".f64", 8, false},    {".b128", 16, false},
  };
  for (const TypeSize& type : kTypes) {
    if (type.name == word) {
      *is_int64 = type.int64;
      return type.size;
    }
  }
  return 0;
}

bool is_state_space(std::string_view word) {
  return word == ".global" || word == ".const" || word == ".local" || word == ".shared";
}

std::string quote(std::string_view text) {
  constexpr size_t kShown = 64;
  std::string out = "'";
  out.append(text.substr(0, kShown));
  if (text.size() > kShown) out += "...";
  out += "'";
  return out;
}

std::string describe(const Token& token) {
  if (token.kind == Tok::kEnd) return "the end of the input";
  return quote(token.text);
}

class Parser {
 public:
  Parser(std::string_view text, Module* out) : lexer_(text), out_(out) {}

  bool run(std::string* error) {
    const bool ok = parse_module();
    if (!ok) *error = "line " + std::to_string(error_line_) + ": " + error_;
    return ok;
  }

 private:
  void advance() { token_ = lexer_.next(); }

  bool fail(std::string message) {
    error_line_ = token_.line;
    error_ = token_.kind == Tok::kError ? std::string(token_.text) : std::move(message);
    return false;
  }

  bool is_punct(char c) const {
    return token_.kind == Tok::kPunct && token_.text.size() == 1 && token_.text[0] == c;
  }
  bool is_word(std::string_view word) const {
    return token_.kind == Tok::kWord && token_.text == word;
  }

  bool parse_module() {
    bool have_version = false;
    bool have_target = false;
    uint64_t depth = 0;
    advance();
    while (token_.kind != Tok::kEnd) {
      if (token_.kind == Tok::kError) return fail("");
      if (is_punct('{')) {
        ++depth;
        advance();
      } else if (is_punct('}')) {
        if (depth == 0) return fail("'}' without a matching '{'");
        --depth;
        advance();
      } else if (depth > 0) {
        advance();
      } else if (is_word(".version")) {
        if (have_version) return fail("a second .version directive");
        if (!parse_version()) return false;
        have_version = true;
      } else if (is_word(".target")) {
        if (!have_version) return fail(".target before .version");
        if (have_target) return fail("a second .target directive");
        if (!parse_target()) return false;
        have_target = true;
      } else if (is_word(".address_size")) {
        if (!parse_address_size()) return false;
      } else if (is_word(".entry")) {
        if (!have_version || !have_target) return fail(".entry before .version and .target");
        bool has_body = false;
        if (!parse_entry(&has_body)) return false;
        if (has_body) depth = 1;
      } else {
        advance();
      }
    }
    if (depth != 0) return fail("unterminated '{' at the end of the input");
    if (!have_version) return fail("no .version directive: this does not look like PTX");
    if (!have_target) return fail("no .target directive");
    return true;
  }

  bool parse_version() {
    advance();
    if (token_.kind != Tok::kNumber)
      return fail("expected major.minor after .version, saw " + describe(token_));
    const std::string_view text = token_.text;
    const size_t dot = text.find('.');
    uint64_t major = 0;
    uint64_t minor = 0;
    if (dot == std::string_view::npos || !parse_uint(text.substr(0, dot), 99, &major) ||
        !parse_uint(text.substr(dot + 1), 99, &minor)) {
      return fail("malformed .version " + quote(text) + ": expected major.minor");
    }
    out_->version_major = static_cast<uint32_t>(major);
    out_->version_minor = static_cast<uint32_t>(minor);
    advance();
    return true;
  }

  bool parse_target() {
    advance();
    if (token_.kind != Tok::kWord)
      return fail("expected an architecture after .target, saw " + describe(token_));
    const std::string_view target = token_.text;
    if (target.substr(0, 3) != "sm_") {
      return fail("unsupported .target " + quote(target) + ": expected sm_XY");
    }
    size_t digits = 3;
    while (digits < target.size() && is_digit(target[digits])) ++digits;
    uint64_t sm = 0;
    if (digits < 5 || !parse_uint(target.substr(3, digits - 3), 9999, &sm)) {
      return fail("malformed .target " + quote(target) + ": expected sm_XY");
    }
    out_->target = std::string(target);
    out_->target_sm = static_cast<uint32_t>(sm);
    advance();
    // Further comma-separated target options (texmode_*, debug, map_f64_to_f32).
    while (is_punct(',')) {
      advance();
      if (token_.kind != Tok::kWord)
        return fail("expected a .target option after ',', saw " + describe(token_));
      advance();
    }
    return true;
  }

  bool parse_address_size() {
    advance();
    uint64_t size = 0;
    if (token_.kind != Tok::kNumber || !parse_uint(token_.text, 64, &size) ||
        (size != 32 && size != 64)) {
      return fail("expected 32 or 64 after .address_size, saw " + describe(token_));
    }
    out_->address_size = static_cast<uint32_t>(size);
    advance();
    return true;
  }

  // Up to three comma-separated dimensions after .reqntid or .maxntid; missing ones are 1.
  bool parse_dims(uint32_t dims[3]) {
    const std::string directive(token_.text);
    dims[0] = dims[1] = dims[2] = 1;
    for (int i = 0; i < 3; ++i) {
      advance();
      uint64_t value = 0;
      if (token_.kind != Tok::kNumber || !parse_uint(token_.text, 1u << 20, &value) || value == 0) {
        return fail("expected a dimension after " + directive + ", saw " + describe(token_));
      }
      dims[i] = static_cast<uint32_t>(value);
      advance();
      if (!is_punct(',')) break;
    }
    return true;
  }

  bool parse_param(Entry& entry, std::vector<bool>& candidates) {
    if (!is_word(".param")) {
      return fail("expected .param in the parameter list of " + quote(entry.name) + ", saw " +
                  describe(token_));
    }
    advance();
    uint64_t align = 0;
    uint32_t element = 0;
    bool int64 = false;
    bool pointer = false;
    // The lexer keeps dots inside words, so the qualifiers may arrive one per token
    // (".ptr .global .align 16") or joined, as the PTX ISA writes them (".ptr.global.align 16").
    while (token_.kind == Tok::kWord && token_.text[0] == '.') {
      const std::string_view joined = token_.text;
      for (size_t start = 0; start < joined.size();) {
        size_t end = joined.find('.', start + 1);
        if (end == std::string_view::npos) end = joined.size();
        const std::string_view word = joined.substr(start, end - start);
        start = end;
        bool word_int64 = false;
        if (word == ".align") {
          if (start != joined.size()) {
            return fail("expected a number after .align in " + quote(joined));
          }
          advance();
          uint64_t value = 0;
          if (token_.kind != Tok::kNumber || !parse_uint(token_.text, 4096, &value) || value == 0 ||
              (value & (value - 1)) != 0) {
            return fail("expected a power of two after .align, saw " + describe(token_));
          }
          // After .ptr, .align N is the alignment of the memory pointed to (PTX ISA, kernel
          // parameter attributes), not of the parameter, which keeps its type's.
          if (!pointer) align = value;
        } else if (word == ".ptr") {
          pointer = true;
        } else if (is_state_space(word)) {
          // The state space a .ptr points into: no effect on marshalling.
        } else if (uint32_t size = type_size(word, &word_int64); size != 0) {
          if (element != 0) return fail("a second type " + quote(word) + " for one parameter");
          element = size;
          int64 = word_int64;
        } else {
          return fail("unexpected " + quote(word) + " in a parameter of " + quote(entry.name));
        }
      }
      advance();
    }
    if (element == 0) {
      return fail("a parameter of " + quote(entry.name) + " has no type before " +
                  describe(token_));
    }
    if (token_.kind != Tok::kWord) {
      return fail("expected a parameter name, saw " + describe(token_));
    }
    Param param;
    param.name = std::string(token_.text);
    advance();
    uint64_t count = 1;
    bool array = false;
    while (is_punct('[')) {
      advance();
      uint64_t extent = 0;
      if (token_.kind != Tok::kNumber || !parse_uint(token_.text, kMaxParamBytes, &extent) ||
          extent == 0) {
        return fail("expected an array size in " + quote(param.name) + ", saw " + describe(token_));
      }
      count *= extent;
      if (count * element > kMaxParamBytes) {
        return fail("parameter " + quote(param.name) + " is larger than " +
                    std::to_string(kMaxParamBytes) + " bytes");
      }
      advance();
      if (!is_punct(']')) return fail("expected ']', saw " + describe(token_));
      advance();
      array = true;
    }
    param.size = static_cast<uint32_t>(count * element);
    // A pointer argument is a 64-bit hal_deviceptr; a .ptr on a narrower type (32-bit PTX) is
    // marshalled, and so checked, as the value it is.
    param.alignment = align != 0 ? static_cast<uint32_t>(align) : element;
    pointer = pointer && element == 8 && !array;
    param.kind = pointer ? ParamKind::kPointer : ParamKind::kValue;
    candidates.push_back(!pointer && int64 && !array);
    entry.params.push_back(std::move(param));
    return true;
  }

  bool parse_entry(bool* has_body) {
    advance();
    if (token_.kind != Tok::kWord || token_.text[0] == '.' || token_.text[0] == '%') {
      return fail("expected a name after .entry, saw " + describe(token_));
    }
    Entry entry;
    entry.name = std::string(token_.text);
    advance();
    std::vector<bool> candidates;
    if (is_punct('(')) {
      advance();
      if (is_punct(')')) {
        advance();
      } else {
        while (true) {
          if (entry.params.size() >= kMaxParamsPerEntry) {
            return fail("entry " + quote(entry.name) + " has more than " +
                        std::to_string(kMaxParamsPerEntry) + " parameters");
          }
          if (!parse_param(entry, candidates)) return false;
          if (is_punct(',')) {
            advance();
          } else if (is_punct(')')) {
            advance();
            break;
          } else {
            return fail("expected ',' or ')' in the parameter list of " + quote(entry.name) +
                        ", saw " + describe(token_));
          }
        }
      }
    }
    // Performance directives up to the body ('{') or the end of a declaration (';').
    while (true) {
      if (token_.kind == Tok::kError) return fail("");
      if (token_.kind == Tok::kEnd) {
        return fail("entry " + quote(entry.name) + " has no body before the end of the input");
      }
      if (is_punct('{')) {
        *has_body = true;
        advance();
        break;
      }
      if (is_punct(';')) {
        advance();
        return true;  // a declaration: nothing to launch
      }
      if (is_punct('}') || is_punct('(') || is_word(".entry")) {
        return fail("expected the body of entry " + quote(entry.name) + ", saw " +
                    describe(token_));
      }
      if (is_word(".reqntid")) {
        if (!parse_dims(entry.reqntid)) return false;
      } else if (is_word(".maxntid")) {
        uint32_t dims[3];
        if (!parse_dims(dims)) return false;
        const uint64_t threads = uint64_t{dims[0]} * dims[1] * dims[2];
        entry.maxntid = static_cast<uint32_t>(threads > (1u << 20) ? (1u << 20) : threads);
      } else {
        advance();
      }
    }
    // The parameter buffer as the driver lays it out must fit the cap.
    uint64_t offset = 0;
    for (const Param& param : entry.params) {
      offset = (offset + param.alignment - 1) / param.alignment * param.alignment + param.size;
      if (offset > kMaxParamBytes) {
        return fail("the parameters of " + quote(entry.name) + " exceed " +
                    std::to_string(kMaxParamBytes) + " bytes");
      }
    }
    const std::vector<bool> pointers = classify_params(entry.name, candidates);
    for (size_t i = 0; i < entry.params.size(); ++i) {
      if (pointers[i]) entry.params[i].kind = ParamKind::kPointer;
    }
    if (out_->entries.size() >= kMaxEntries) {
      return fail("more than " + std::to_string(kMaxEntries) + " entries");
    }
    out_->entries.push_back(std::move(entry));
    return true;
  }

  Lexer lexer_;
  Module* out_;
  Token token_;
  std::string error_;
  size_t error_line_ = 0;
};

// ===========================================================================================
// Demangled signatures
// ===========================================================================================

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Whether one demangled parameter type ("float const* restrict", "unsigned long") is a pointer.
bool is_pointer_type(std::string_view type) {
  static constexpr std::string_view kQualifiers[] = {" const", " volatile", " restrict",
                                                     " __restrict__", " __restrict"};
  bool stripped = true;
  while (stripped) {
    stripped = false;
    type = trim(type);
    for (std::string_view qualifier : kQualifiers) {
      if (ends_with(type, qualifier)) {
        type.remove_suffix(qualifier.size());
        stripped = true;
      }
    }
  }
  if (ends_with(type, "*")) return true;
  return ends_with(type, ")") && type.find("(*") != std::string_view::npos;  // function pointer
}

// Splits the parameter list of a demangled function signature; false when it cannot.
bool split_signature(std::string_view signature, std::vector<std::string_view>* params) {
  signature = trim(signature);
  if (!ends_with(signature, ")")) return false;
  size_t depth = 0;
  size_t open = std::string_view::npos;
  for (size_t i = signature.size(); i-- > 0;) {
    const char c = signature[i];
    if (c == ')') ++depth;
    if (c == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos) return false;
  const std::string_view list = trim(signature.substr(open + 1, signature.size() - open - 2));
  if (list.empty() || list == "void") return true;
  size_t nesting = 0;
  size_t start = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    if (c == '(' || c == '<' || c == '[') ++nesting;
    if ((c == ')' || c == '>' || c == ']') && nesting > 0) --nesting;
    if (c == ',' && nesting == 0) {
      params->push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  params->push_back(list.substr(start));
  return true;
}

}  // namespace

bool parse(std::string_view text, Module* out, std::string* error) {
  *out = Module{};
  Parser parser(text, out);
  return parser.run(error);
}

std::vector<bool> classify_params(std::string_view mangled_name,
                                  const std::vector<bool>& is_64bit_integer) {
  std::vector<bool> pointers = is_64bit_integer;
  // Only mangled C++ names carry types; the cap keeps the demangler's work small.
  constexpr size_t kMaxDemangledName = 1024;
  if (mangled_name.size() < 3 || mangled_name.substr(0, 2) != "_Z" ||
      mangled_name.size() > kMaxDemangledName) {
    return pointers;
  }
  int status = 0;
  const std::string name(mangled_name);
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || demangled == nullptr) return pointers;
  std::vector<std::string_view> params;
  if (!split_signature(demangled.get(), &params) || params.size() != pointers.size()) {
    return pointers;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (pointers[i]) pointers[i] = is_pointer_type(params[i]);
  }
  return pointers;
}

}  // namespace hal::ptx
