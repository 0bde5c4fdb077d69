#include "ptx/lexer.h"

#include <charconv>
#include <cstring>
#include <limits>

#include "ptx/ir.h"

namespace hal::ptx {
namespace {

bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_word_start(char c) {
  return is_letter(c) || c == '_' || c == '$' || c == '%' || c == '.';
}
bool is_word_char(char c) {
  return is_word_start(c) || is_digit(c);
}
// What may follow "::" inside a word (".shared::cta", "L2::64B").
bool continues_after_colons(char c) {
  return is_letter(c) || is_digit(c) || c == '_';
}
bool is_number_char(char c) {
  return is_letter(c) || is_digit(c) || c == '_' || c == '.';
}
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
bool has_prefix(std::string_view text, char lower) {
  return text.size() >= 2 && text[0] == '0' && (text[1] == lower || text[1] == lower - 32);
}
// Whether a number token is written in a base or form whose letters are digits (0x, 0b, 0f,
// 0d), where 'e' is never an exponent.
bool is_prefixed(std::string_view text) {
  return has_prefix(text, 'x') || has_prefix(text, 'b') || has_prefix(text, 'f') ||
         has_prefix(text, 'd');
}

// Digits of |text| in |base| into |out|; false when empty, on another character, or above 64
// bits.
bool parse_digits(std::string_view text, unsigned base, uint64_t* out) {
  if (text.empty()) return false;
  uint64_t value = 0;
  for (char c : text) {
    const int digit = hex_value(c);
    if (digit < 0 || static_cast<unsigned>(digit) >= base) return false;
    if (value > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(digit)) / base) {
      return false;
    }
    value = value * base + static_cast<uint64_t>(digit);
  }
  *out = value;
  return true;
}

}  // namespace

void Lexer::newline() {
  if (line_ != std::numeric_limits<uint32_t>::max()) ++line_;
}

Token Lexer::error(Token token, std::string message) {
  error_ = std::move(message);
  token.kind = TokenKind::kError;
  token.text = error_;
  return token;
}

void Lexer::skip_space_and_comments() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '\n') {
      newline();
      ++pos_;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      const uint32_t start_line = line_;
      const size_t close = text_.find("*/", pos_ + 2);
      const size_t end = close == std::string_view::npos ? text_.size() : close + 2;
      for (size_t i = pos_; i < end; ++i) {
        if (text_[i] == '\n') newline();
      }
      pos_ = end;
      if (close == std::string_view::npos) {
        line_ = start_line;
        error_ = "unterminated /* comment";
        return;
      }
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  if (error_.empty()) skip_space_and_comments();
  Token token;
  token.line = line_;
  if (!error_.empty()) {
    token.kind = TokenKind::kError;
    token.text = error_;
    return token;
  }
  if (pos_ >= text_.size()) return token;
  const size_t start = pos_;
  const char c = text_[pos_];
  if (is_word_start(c)) {
    while (pos_ < text_.size()) {
      const char w = text_[pos_];
      if (is_word_char(w)) {
        ++pos_;
      } else if (w == ':' && pos_ + 2 < text_.size() && text_[pos_ + 1] == ':' &&
                 continues_after_colons(text_[pos_ + 2])) {
        pos_ += 2;
      } else {
        break;
      }
    }
    token.kind = TokenKind::kWord;
  } else if (is_digit(c)) {
    while (pos_ < text_.size()) {
      const char n = text_[pos_];
      if (is_number_char(n)) {
        ++pos_;
      } else if ((n == '+' || n == '-') && (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E') &&
                 !is_prefixed(text_.substr(start, pos_ - start))) {
        ++pos_;  // the sign of a decimal exponent: "1e-3"
      } else {
        break;
      }
    }
    token.kind = TokenKind::kNumber;
  } else if (c == '"') {
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\n') newline();
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) {
        ++pos_;
        if (text_[pos_] == '\n') newline();
      }
      ++pos_;
    }
    if (pos_ >= text_.size()) return error(token, "unterminated string");
    ++pos_;
    token.kind = TokenKind::kString;
  } else {
    ++pos_;
    token.kind = TokenKind::kPunct;
  }
  token.text = text_.substr(start, pos_ - start);
  if (token.text.size() > ir::kMaxIdentifierLength) {
    return error(token,
                 "a token longer than " + std::to_string(ir::kMaxIdentifierLength) + " characters");
  }
  return token;
}

bool parse_number(std::string_view text, Number* out, std::string* why) {
  *out = Number{};
  if (text.empty() || !is_digit(text[0])) {
    *why = "not a number";
    return false;
  }
  // Bit patterns of floats: exactly 8 or 16 hex digits.
  if (has_prefix(text, 'f') || has_prefix(text, 'd')) {
    const bool single = text[1] == 'f' || text[1] == 'F';
    const std::string_view digits = text.substr(2);
    if (digits.size() != (single ? 8u : 16u) || !parse_digits(digits, 16, &out->bits)) {
      *why = single ? "expected 0f and 8 hex digits" : "expected 0d and 16 hex digits";
      return false;
    }
    out->kind = single ? Number::Kind::kFloat32 : Number::Kind::kFloat64;
    return true;
  }
  const bool prefixed = is_prefixed(text);
  if (!prefixed && (text.find('.') != std::string_view::npos ||
                    text.find_first_of("eE") != std::string_view::npos)) {
    double value = 0;
    const auto [end, error] =
        std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
    if (error == std::errc::result_out_of_range) {
      *why = "out of the range of an f64";
      return false;
    }
    if (error != std::errc() || end != text.data() + text.size()) {
      *why = "not a number";
      return false;
    }
    static_assert(sizeof(double) == sizeof(uint64_t));
    std::memcpy(&out->bits, &value, sizeof(value));
    out->kind = Number::Kind::kFloat64;
    return true;
  }
  std::string_view digits = text;
  if (digits.back() == 'U' || digits.back() == 'u') digits.remove_suffix(1);
  unsigned base = 10;
  if (has_prefix(digits, 'x')) {
    base = 16;
    digits.remove_prefix(2);
  } else if (has_prefix(digits, 'b')) {
    base = 2;
    digits.remove_prefix(2);
  } else if (digits.size() > 1 && digits[0] == '0') {
    base = 8;
    digits.remove_prefix(1);
  }
  uint64_t value = 0;
  if (!parse_digits(digits, base, &value)) {
    // Tell an overflow from a stray character: the digits alone, with a wider check.
    bool all_digits = !digits.empty();
    for (char c : digits) {
      const int digit = hex_value(c);
      all_digits = all_digits && digit >= 0 && static_cast<unsigned>(digit) < base;
    }
    *why = all_digits ? "does not fit in 64 bits" : "not a number";
    return false;
  }
  out->bits = value;
  return true;
}

std::string quote(std::string_view text) {
  constexpr size_t kShown = 64;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > kShown) out += "...";
  out += "'";
  return out;
}

}  // namespace hal::ptx
