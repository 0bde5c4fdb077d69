// The PTX lexer: splits untrusted text into words, numbers, strings and punctuation, each with
// the line it starts on; and reads the value of a numeric literal.
//
// Tokens (white space and comments, "//" to the end of the line and "/* */", separate them):
//  - a word starts with a letter, '_', '$', '%' or '.', and continues with those and digits:
//    directives (".reg"), identifiers ("%r1", "$L__BB0_2"), dotted instruction names
//    ("ld.global.nc.v4.f32"), special registers ("%tid.x"). "::" followed by a letter, digit or
//    '_' continues the word (".shared::cta", "ld.L1::evict_last"); a ':' otherwise ends it, so
//    that "L1:" is the word "L1" and the punctuation ':';
//  - a number starts with a digit and continues with letters, digits, '_' and '.', and a sign
//    right after the exponent mark of a decimal literal ("1e-3", "2.5E+8"); its value is read
//    by parse_number, which is where malformed literals are refused;
//  - a string is "..." (a backslash escapes the next character; it may span lines);
//  - any other byte is one punctuation token ('{', ';', '@', and also bytes PTX never uses,
//    which the parser then refuses by quoting them).
//
// Bounds: the lexer reads only inside [text, text + size) and needs no NUL terminator; each
// call to next() does work proportional to the characters it consumes. A token longer than
// kMaxIdentifierLength, an unterminated string or "/*" comment is an error token, and every
// later call returns the same error.
// Thread-safety: a Lexer is used by one thread; parse_number is pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hal::ptx {

enum class TokenKind : uint8_t { kEnd, kWord, kNumber, kString, kPunct, kError };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  // Points into the lexed text (for kError: into the lexer's message, valid while it lives).
  std::string_view text;
  uint32_t line = 1;  // 1-based; saturates at the largest uint32_t

  bool is_punct(char c) const {
    return kind == TokenKind::kPunct && text.size() == 1 && text[0] == c;
  }
  bool is_word(std::string_view word) const { return kind == TokenKind::kWord && text == word; }
};

class Lexer {
 public:
  // Borrows |text|, which must outlive the lexer and the tokens it returns.
  Lexer(const char* text, size_t size) : text_(text, size) {}

  // The next token; kEnd at the end of the input (and forever after), kError on an error.
  Token next();

 private:
  Token error(Token token, std::string message);
  void skip_space_and_comments();
  void newline();

  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  std::string error_;
};

// The value of a numeric literal, as PTX writes them:
//  - integers: decimal, hexadecimal "0x1F", octal "017", binary "0b101", each with an optional
//    'U' suffix; the value must fit in 64 bits (it is kept as written, in two's complement);
//  - "0f" and 8 hex digits: the bits of an f32; "0d" and 16 hex digits: the bits of an f64;
//  - decimal floating point with a '.' or an exponent ("1.5", "1e-3", "2."): read as an f64.
struct Number {
  enum class Kind : uint8_t { kInteger, kFloat32, kFloat64 };
  Kind kind = Kind::kInteger;
  uint64_t bits = 0;  // the integer, or the IEEE bits of the float
};

// Reads |text| (a kNumber token's text). On failure returns false and sets |why| to a short
// reason ("not a number", "does not fit in 64 bits"), without the token.
bool parse_number(std::string_view text, Number* out, std::string* why);

// |text| in single quotes for a message, cut after 64 characters, with bytes that are not
// printable ASCII written as \xNN.
std::string quote(std::string_view text);

}  // namespace hal::ptx
