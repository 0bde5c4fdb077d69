// Tests of the PTX lexer (src/ptx/lexer.h): words with dots and "::", labels, numbers in every
// form PTX writes, strings, comments, line numbers and errors.
#include "ptx/lexer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ptx/ir.h"

namespace {

using hal::ptx::Lexer;
using hal::ptx::Number;
using hal::ptx::Token;
using hal::ptx::TokenKind;

// A token with its text copied out of the lexer's input and messages.
struct Lexed {
  TokenKind kind;
  std::string text;
  uint32_t line;
};

std::vector<Lexed> lex(const std::string& text) {
  Lexer lexer(text.data(), text.size());
  std::vector<Lexed> tokens;
  while (true) {
    const Token token = lexer.next();
    if (token.kind == TokenKind::kEnd) break;
    tokens.push_back(Lexed{token.kind, std::string(token.text), token.line});
    if (token.kind == TokenKind::kError) break;
  }
  return tokens;
}

std::vector<std::string> texts(const std::string& text) {
  std::vector<std::string> out;
  for (const Lexed& token : lex(text)) out.push_back(token.text);
  return out;
}

using Texts = std::vector<std::string>;

TEST(PtxLexer, KeepsDotsAndDoubleColonsInWords) {
  EXPECT_EQ(texts("ld.global.nc.v4.f32 %tid.x .reg"),
            (Texts{"ld.global.nc.v4.f32", "%tid.x", ".reg"}));
  EXPECT_EQ(texts("ld.global.L1::evict_last.L2::cache_hint.v4.b32"),
            (Texts{"ld.global.L1::evict_last.L2::cache_hint.v4.b32"}));
  EXPECT_EQ(texts(".shared::cta cp.async.cg.shared.global L2::64B"),
            (Texts{".shared::cta", "cp.async.cg.shared.global", "L2::64B"}));
}

TEST(PtxLexer, EndsLabelsAtTheirColon) {
  EXPECT_EQ(texts("L1:\n  ret;"), (Texts{"L1", ":", "ret", ";"}));
  EXPECT_EQ(texts("$L__BB0_2: ret;"), (Texts{"$L__BB0_2", ":", "ret", ";"}));
  EXPECT_EQ(texts("L1::"), (Texts{"L1", ":", ":"}));  // nothing after "::": not a word
  EXPECT_EQ(texts("L1: :x"), (Texts{"L1", ":", ":", "x"}));
}

TEST(PtxLexer, ReadsNumbersWhole) {
  EXPECT_EQ(texts("0x1F 017 0b101 7U 0f3F800000 0d3FF0000000000000 1.5 1e-3 2.5E+8 8.0"),
            (Texts{"0x1F", "017", "0b101", "7U", "0f3F800000", "0d3FF0000000000000", "1.5", "1e-3",
                   "2.5E+8", "8.0"}));
  // A sign after 'e' belongs to the number only in decimal: 0x1e-3 is 0x1e minus 3.
  EXPECT_EQ(texts("0x1e-3"), (Texts{"0x1e", "-", "3"}));
  EXPECT_EQ(texts("[%rd1+-16]"), (Texts{"[", "%rd1", "+", "-", "16", "]"}));
}

TEST(PtxLexer, SkipsCommentsAndCountsLines) {
  const std::vector<Lexed> tokens = lex("a // b c\n/* d\n e */ f\n\"g\nh\" i");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].text, "a");
  EXPECT_EQ(tokens[0].line, 1u);
  EXPECT_EQ(tokens[1].text, "f");
  EXPECT_EQ(tokens[1].line, 3u);
  EXPECT_EQ(tokens[2].kind, TokenKind::kString);
  EXPECT_EQ(tokens[2].line, 4u);
  EXPECT_EQ(tokens[3].text, "i");
  EXPECT_EQ(tokens[3].line, 5u);
}

TEST(PtxLexer, ReportsErrorsAndStaysInError) {
  std::vector<Lexed> tokens = lex("a /* open");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[1].kind, TokenKind::kError);
  EXPECT_EQ(tokens[1].text, "unterminated /* comment");
  tokens = lex("\"open");
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].text, "unterminated string");
  tokens = lex(std::string(hal::ptx::ir::kMaxIdentifierLength + 1, 'k'));
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].kind, TokenKind::kError);
  EXPECT_NE(tokens[0].text.find("longer than"), std::string::npos);

  const std::string text = "x /*";
  Lexer lexer(text.data(), text.size());
  EXPECT_EQ(lexer.next().kind, TokenKind::kWord);
  EXPECT_EQ(lexer.next().kind, TokenKind::kError);
  EXPECT_EQ(lexer.next().kind, TokenKind::kError);
}

TEST(PtxLexer, ReadsOnlyInsideItsInput) {
  // The text continues past the size given; none of it may be seen.
  const char text[] = "ld.global 12 \"s\" /* c */ x.y.z";
  for (size_t size = 0; size < std::strlen(text); ++size) {
    Lexer lexer(text, size);
    size_t consumed = 0;
    for (int i = 0; i < 64; ++i) {
      const Token token = lexer.next();
      if (token.kind == TokenKind::kEnd || token.kind == TokenKind::kError) break;
      EXPECT_GE(token.text.data(), text);
      EXPECT_LE(token.text.data() + token.text.size(), text + size);
      consumed += token.text.size();
    }
    EXPECT_LE(consumed, size);
  }
}

struct NumberCase {
  const char* text;
  Number::Kind kind;
  uint64_t bits;
};

TEST(PtxLexer, ReadsNumberValues) {
  const NumberCase cases[] = {
      {"0", Number::Kind::kInteger, 0},
      {"42", Number::Kind::kInteger, 42},
      {"0x1F", Number::Kind::kInteger, 31},
      {"0X1f", Number::Kind::kInteger, 31},
      {"017", Number::Kind::kInteger, 15},
      {"0b101", Number::Kind::kInteger, 5},
      {"7U", Number::Kind::kInteger, 7},
      {"0xFFFFFFFFFFFFFFFF", Number::Kind::kInteger, ~uint64_t{0}},
      {"18446744073709551615", Number::Kind::kInteger, ~uint64_t{0}},
      {"0f3F800000", Number::Kind::kFloat32, 0x3F800000},
      {"0F7FC00000", Number::Kind::kFloat32, 0x7FC00000},
      {"0d3FF0000000000000", Number::Kind::kFloat64, 0x3FF0000000000000},
      {"1.5", Number::Kind::kFloat64, 0x3FF8000000000000},
      {"1e-3", Number::Kind::kFloat64, 0x3F50624DD2F1A9FC},
      {"2.", Number::Kind::kFloat64, 0x4000000000000000},
  };
  for (const NumberCase& c : cases) {
    SCOPED_TRACE(c.text);
    Number number;
    std::string why;
    ASSERT_TRUE(hal::ptx::parse_number(c.text, &number, &why)) << why;
    EXPECT_EQ(number.kind, c.kind);
    EXPECT_EQ(number.bits, c.bits);
  }
  for (const char* bad : {"08", "0x", "0b102", "0f3F80", "0d3FF0", "1.5.5", "12abc",
                          "18446744073709551616", "1e999"}) {
    SCOPED_TRACE(bad);
    Number number;
    std::string why;
    EXPECT_FALSE(hal::ptx::parse_number(bad, &number, &why));
    EXPECT_FALSE(why.empty());
  }
  Number number;
  std::string why;
  EXPECT_FALSE(hal::ptx::parse_number("18446744073709551616", &number, &why));
  EXPECT_EQ(why, "does not fit in 64 bits");
}

TEST(PtxLexer, QuotesSafely) {
  EXPECT_EQ(hal::ptx::quote("abc"), "'abc'");
  EXPECT_EQ(hal::ptx::quote(std::string("a\n\xff", 3)), "'a\\x0a\\xff'");
  EXPECT_EQ(hal::ptx::quote(std::string(100, 'x')), "'" + std::string(64, 'x') + "...'");
}

}  // namespace
