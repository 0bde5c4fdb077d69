// Tests of the PTX parser's errors: each names the line and quotes what it saw; the caps of
// ir.h hold; and damaged, truncated or hostile input fails cleanly, in bounded time.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <string_view>

#include "ir_check.h"
#include "ptx/ir.h"

namespace {

namespace ir = hal::ptx::ir;

const std::string kHeader = ".version 8.0\n.target sm_80\n.address_size 64\n";  // lines 1-3

ir::ParseError parse_error(std::string_view text, bool bodies = true) {
  ir::Module module;
  ir::ParseError error;
  ir::ParseOptions options;
  options.bodies = bodies;
  EXPECT_FALSE(ir::parse(text.data(), text.size(), options, &module, &error));
  EXPECT_FALSE(error.message.empty());
  return error;
}

// |body| as the body of an entry whose '{' is on line 5; its first line is line 6.
std::string in_body(std::string_view body) {
  return kHeader + ".visible .entry k(.param .u64 k_p)\n{\n" + std::string(body) + "\n}\n";
}

#define EXPECT_ERROR(text_, line_, fragment_)                                       \
  do {                                                                              \
    const ir::ParseError error_ = parse_error(text_);                               \
    EXPECT_EQ(error_.line, static_cast<uint32_t>(line_)) << error_.message;         \
    EXPECT_NE(error_.message.find(fragment_), std::string::npos) << error_.message; \
  } while (0)

TEST(PtxParserErrors, NameTheLineAndTheToken) {
  EXPECT_ERROR(in_body("  ret;\n  frobnicate.u32 %r1;"), 7, "unknown instruction 'frobnicate'");
  EXPECT_ERROR(in_body("  .reg .b32 %r<2>;\n  mov.b32 %r1, %r7;"), 7, "undeclared register '%r7'");
  EXPECT_ERROR(in_body("  .reg .b32 %r<2>;\n  @%q bra L;"), 7, "undeclared register '%q'");
  EXPECT_ERROR(in_body("  bra.uni NOWHERE;\n  ret;"), 6, "undeclared label 'NOWHERE'");
  EXPECT_ERROR(in_body("  .reg .b32 %r<4>;\n  .reg .b32 %r2;"), 7,
               "duplicate declaration of '%r2'");
  EXPECT_ERROR(in_body("  .reg .b32 %r<4>;\n  .reg .b32 %r<8>;"), 7, "duplicate declaration");
  EXPECT_ERROR(in_body("  .shared .b8 x[4];\n  .local .b8 x[4];"), 7,
               "duplicate declaration of 'x'");
  EXPECT_ERROR(in_body("L:\n  ret;\nL:\n  ret;"), 8, "duplicate label 'L'");
  EXPECT_ERROR(kHeader + ".global .u32 g;\n.global .u32 g;\n", 5, "duplicate declaration of 'g'");
  EXPECT_ERROR(kHeader + ".func f() { ret; }\n.func f() { ret; }\n", 5, "duplicate definition");
  EXPECT_ERROR(in_body("  .reg .b32 %r<2>;\n  add.s32 %r1, %r1, ];"), 7, "malformed operand");
  EXPECT_ERROR(in_body("  .reg .b32 %r<2>;\n  ld.global.u32 %r1, [%r1+%r0];"), 7,
               "expected an integer after '+'");
  EXPECT_ERROR(in_body("  .reg .b32 %r<2>;\n  ld.global.u32 %r1, [%r1;"), 7, "malformed address");
  EXPECT_ERROR(in_body("  .reg .b32 %r<2>;\n  mov.u32 %r1, %tid;"), 7, "needs a component");
  EXPECT_ERROR(in_body("  .reg .b32 %r<2>;\n  mov.u32 %r1 %r0;"), 7, "expected ',' or ';'");
  EXPECT_ERROR(in_body("  .reg .b32 %r<2>;\n  mov.u32 %r1, 0x;"), 7, "malformed number '0x'");
  EXPECT_ERROR(kHeader + ".visible .entry k()\n{\n  ret;\n", 7, "unterminated '{'");
  EXPECT_ERROR(kHeader + ".visible .entry k()\n{\n  {\n  ret;\n}\n", 9, "unterminated '{'");
  EXPECT_ERROR(kHeader + ".global .b8 big[4294967296][4294967296];\n", 4, "'big' is larger than");
  EXPECT_ERROR(kHeader + ".global .b8 big[99999999999999999999];\n", 4, "'big' is larger than");
  EXPECT_ERROR(kHeader + ".shared .f32 big[1073741824];\n", 4, "'big' is larger than");
  EXPECT_ERROR(kHeader + ".global .u32 x[2] = {1, 2, 3};\n", 4, "too many initializers");
  EXPECT_ERROR(kHeader + ".global .u32 x = 1.5;\n", 4, "floating-point value '1.5'");
  EXPECT_ERROR(kHeader + ".global .f32 x = 3;\n", 4, "integer value '3'");
  EXPECT_ERROR(kHeader + ".global .f16 x = 1.0;\n", 4, "type .f16 are not supported");
  EXPECT_ERROR(kHeader + ".global .u16 x[2][2] = {1, 2};\n", 4, "expected '{'");
  EXPECT_ERROR(kHeader + ".global .u32 x[2] = {1 2};\n", 4, "expected ',' or '}'");
  EXPECT_ERROR(kHeader + ".shared .u32 x = 1;\n", 4, "only .global and .const");
  EXPECT_ERROR(kHeader + ".global .u8 x = 0x1FF(1);\n", 4, "byte mask");
  EXPECT_ERROR(kHeader + ".global .u32 x = y;\n", 4, "needs a .u64 element");
  EXPECT_ERROR(kHeader + ".global .u64 x = y;\n", 4, "undeclared symbol 'y'");
  EXPECT_ERROR(kHeader + ".extern .global .u32 x = 1;\n", 4, "cannot have an initializer");
  EXPECT_ERROR(kHeader + ".wat .u32 x;\n", 4, "unknown directive '.wat'");
  EXPECT_ERROR(in_body("  .wat;"), 6, "unknown directive '.wat'");
  EXPECT_ERROR(in_body("  .reg .b32 %r<2>;\n  mov.u32 %r1, %v.x;"), 7, "'%v.x'");
  EXPECT_ERROR(kHeader + ".entry k(.reg .u32 x) { ret; }\n", 4, "must be .param");
}

TEST(PtxParserErrors, SignatureOnlyParsesStillCheckTheOutside) {
  // Unknown instructions inside a body do not matter without bodies, but braces do.
  ir::Module module;
  ir::ParseError error;
  ir::ParseOptions options;
  options.bodies = false;
  const std::string text = in_body("  frobnicate %r1, [[[;");
  EXPECT_TRUE(ir::parse(text.data(), text.size(), options, &module, &error)) << error.message;
  const ir::ParseError unterminated =
      parse_error(kHeader + ".entry k()\n{\n  { ret;\n}\n", /*bodies=*/false);
  EXPECT_NE(unterminated.message.find("unterminated '{'"), std::string::npos);
}

// Inputs the fuzzer found, kept as cases.
TEST(PtxParserErrors, FuzzerFindings) {
  // .loc ends at a brace: the signature-only parse, which counts braces, must agree.
  const std::string loc = in_body("  .reg .b32 %r<2>;\n  .loc 1 2 3 { mov.b32 %r1, 0;\n}");
  for (bool bodies : {true, false}) {
    ir::Module module;
    ir::ParseError error;
    ir::ParseOptions options;
    options.bodies = bodies;
    EXPECT_TRUE(ir::parse(loc.data(), loc.size(), options, &module, &error)) << error.message;
  }
  EXPECT_ERROR(".version 8.0\n.target sm_00\n", 2, "malformed .target 'sm_00'");
}

TEST(PtxParserErrors, EnforcesCaps) {
  // Nesting.
  std::string deep = kHeader + ".entry k()\n";
  for (size_t i = 0; i < ir::kMaxNesting + 1; ++i) deep += "{";
  for (size_t i = 0; i < ir::kMaxNesting + 1; ++i) deep += "}";
  EXPECT_NE(parse_error(deep).message.find("nested deeper"), std::string::npos);
  std::string deep_operand = in_body("  .reg .b32 %r;\n  mov.b32 %r, ");
  deep_operand.insert(deep_operand.size() - 3, std::string(ir::kMaxNesting + 1, '{'));
  EXPECT_NE(parse_error(deep_operand).message.find("nested deeper"), std::string::npos);
  // Registers.
  EXPECT_NE(parse_error(in_body("  .reg .b32 %r<" + std::to_string(ir::kMaxRegisters + 1) + ">;"))
                .message.find("register count"),
            std::string::npos);
  EXPECT_NE(parse_error(in_body("  .reg .b32 %r<" + std::to_string(ir::kMaxRegisters) +
                                ">;\n  .reg .b32 %s;"))
                .message.find("more than"),
            std::string::npos);
  // Initializer bytes: holes inside arrays count.
  std::string holes = kHeader;
  for (int i = 0; i < 80; ++i) {
    holes += ".global .b8 g" + std::to_string(i) + "[2][1048576] = {{0}, {1}};\n";
  }
  EXPECT_NE(parse_error(holes).message.find("initializers hold more than"), std::string::npos);
  // Parameters.
  std::string many = kHeader + ".entry k(";
  for (size_t i = 0; i <= ir::kMaxParams; ++i) {
    many += (i ? ", .param .u8 p" : ".param .u8 p") + std::to_string(i);
  }
  many += ") {}";
  EXPECT_NE(parse_error(many).message.find("more than"), std::string::npos);
}

// Every prefix and many random corruptions of valid PTX either parse or fail cleanly, and what
// parses is consistent.
TEST(PtxParserErrors, SurvivesTruncationAndCorruption) {
  const std::string text = kHeader + R"(
.global .align 8 .u64 table[2] = {generic(table), 0xFF00(table)};
.func (.param .b32 r) f(.param .b32 x) { ret; }
.visible .entry k(.param .u64 .ptr .global .align 16 k_p, .param .align 8 .b8 k_s[16])
.reqntid 32
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 4 .f32 tile[32];
  ld.param.u64 %rd1, [k_p];
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 16;
  @%p1 bra DONE;
  ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 16 ];
  {
    .reg .pred %p;
    .param .b32 a;
    .param .b32 b;
    call.uni (b), f, (a);
    shfl.sync.bfly.b32 %r2|%p, %r1, 16, 31, -1;
  }
  st.shared.f32 [tile+4], 0f3F800000;
DONE:
  ret;
}
)";
  for (bool bodies : {true, false}) {
    ir::ParseOptions options;
    options.bodies = bodies;
    for (size_t length = 0; length <= text.size(); ++length) {
      ir::Module module;
      ir::ParseError error;
      // A prefix is read without the rest: the size is the only bound.
      if (ir::parse(text.data(), length, options, &module, &error)) {
        EXPECT_EQ(hal_ptx_test::check_module(module), "") << length;
      } else {
        EXPECT_FALSE(error.message.empty());
      }
    }
  }
  std::mt19937 random(1234);
  const std::string bytes("{}()[].,;\"/*\0\n9x\xff%@!|-+<>:", 26);
  for (int round = 0; round < 4000; ++round) {
    const std::string mutated = hal_ptx_test::mutate(text, random, bytes);
    ir::Module module;
    ir::ParseError error;
    if (ir::parse(mutated.data(), mutated.size(), {}, &module, &error)) {
      EXPECT_EQ(hal_ptx_test::check_module(module), "");
    } else {
      EXPECT_FALSE(error.message.empty());
      EXPECT_GE(error.line, 1u);
    }
  }
}

// Large inputs take time in proportion to their size: a few megabytes of instructions, labels
// and braces parse in well under the time a quadratic parser would need.
TEST(PtxParserErrors, RunsInLinearTime) {
  std::string text = in_body("");
  text.resize(text.size() - 3);  // reopen the body
  text += "  .reg .b32 %r<100>;\n  .reg .pred %p<2>;\n";
  for (int i = 0; i < 50000; ++i) {
    const std::string n = std::to_string(i);
    text += "L" + n + ":\n  { .reg .b32 %t; @%p1 bra L" + n + "; add.s32 %r1, %r2, " + n +
            "; bra.uni X" + n + "; X" + n + ": }\n";
  }
  text += "}\n";
  const auto start = std::chrono::steady_clock::now();
  ir::Module module;
  ir::ParseError error;
  ASSERT_TRUE(ir::parse(text.data(), text.size(), {}, &module, &error)) << error.message;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(module.functions[0].code.size(), 150000u);
  EXPECT_LT(seconds, 10.0);  // about 0.1 s on a laptop; sanitizers slow it several times
}

}  // namespace
