// Tests of the PTX signature reader (src/ptx/reader.h) on hand-written PTX, on nvcc's output, and
// on damaged input.
#include "ptx/reader.h"

#include "ir_check.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace {

using hal::ptx::Entry;
using hal::ptx::Module;
using hal::ptx::ParamKind;
using hal::ptx::ParamType;

Module parse_ok(std::string_view text) {
  Module module;
  std::string error;
  EXPECT_TRUE(hal::ptx::parse(text, &module, &error)) << error;
  return module;
}

std::string parse_error(std::string_view text) {
  Module module;
  std::string error;
  EXPECT_FALSE(hal::ptx::parse(text, &module, &error));
  return error;
}

constexpr std::string_view kHandWritten = R"(
// A comment with .entry fake( in it
/* a block comment
   .version 1.0 */
.version 8.0
.target sm_80, debug
.address_size 64

.file 1 "some { path }.cu"
.global .align 4 .b8 table[16] = {1, 2, 3, 4};

.func (.param .b32 retval) helper(.param .b32 x)
{
  { // nested scope
    ret;
  }
}

.visible .entry copy(
    .param .u64 .ptr .global .align 16 copy_dst,
    .param .u64 copy_src,
    .param .u32 copy_n,
    .param .align 8 .b8 copy_pair[16],
    .param .f64 copy_scale,
    .param .u8 copy_flag,
    .param .b16 copy_half,
    .param .s64 copy_count
)
.reqntid 64, 2
.minnctapersm 1
{
  .reg .b64 %rd<4>;
  ret;
}

.entry no_params
{
  ret;
}

.visible .entry empty_params()
.maxntid 256, 1, 1
{
  ret;
}

.extern .entry declared(.param .u32 x);
)";

TEST(PtxReader, ReadsHeaderAndEntries) {
  const Module module = parse_ok(kHandWritten);
  EXPECT_EQ(module.version_major, 8u);
  EXPECT_EQ(module.version_minor, 0u);
  EXPECT_EQ(module.target, "sm_80");
  EXPECT_EQ(module.target_sm, 80u);
  EXPECT_EQ(module.address_size, 64u);
  ASSERT_EQ(module.entries.size(), 3u);  // the declaration has no body and is not listed
  EXPECT_EQ(module.entries[0].name, "copy");
  EXPECT_EQ(module.entries[1].name, "no_params");
  EXPECT_TRUE(module.entries[1].params.empty());
  EXPECT_EQ(module.entries[2].name, "empty_params");
  EXPECT_TRUE(module.entries[2].params.empty());
  EXPECT_EQ(module.entries[2].maxntid, 256u);
}

TEST(PtxReader, ClassifiesParameters) {
  const Module module = parse_ok(kHandWritten);
  const Entry& entry = module.entries[0];
  ASSERT_EQ(entry.params.size(), 8u);
  struct Expected {
    ParamKind kind;
    uint32_t size;
    uint32_t alignment;
  };
  const Expected expected[] = {
      {ParamKind::kPointer, 8, 8},  // .ptr; its .align 16 is the pointee's
      {ParamKind::kPointer, 8, 8},  // .u64 in an extern "C" style name: the rule
      {ParamKind::kValue, 4, 4},   {ParamKind::kValue, 16, 8},
      {ParamKind::kValue, 8, 8},   {ParamKind::kValue, 1, 1},
      {ParamKind::kValue, 2, 2},   {ParamKind::kPointer, 8, 8},  // .s64: still a 64-bit integer
  };
  for (size_t i = 0; i < entry.params.size(); ++i) {
    SCOPED_TRACE(entry.params[i].name);
    EXPECT_EQ(entry.params[i].kind, expected[i].kind);
    EXPECT_EQ(entry.params[i].size, expected[i].size);
    EXPECT_EQ(entry.params[i].alignment, expected[i].alignment);
  }
  EXPECT_EQ(entry.reqntid[0], 64u);
  EXPECT_EQ(entry.reqntid[1], 2u);
  EXPECT_EQ(entry.reqntid[2], 1u);
}

TEST(PtxReader, MangledNamesDecideSixtyFourBitIntegers) {
  // scale(float*, float const*, unsigned long, Pair, char, short, double)
  constexpr std::string_view kPtx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry _Z5scalePfPKfm4Paircsd(
  .param .u64 p0, .param .u64 p1, .param .u64 p2, .param .align 8 .b8 p3[16],
  .param .u8 p4, .param .u16 p5, .param .f64 p6)
{ ret; }
)";
  const Module module = parse_ok(kPtx);
  ASSERT_EQ(module.entries.size(), 1u);
  const auto& params = module.entries[0].params;
  ASSERT_EQ(params.size(), 7u);
  EXPECT_EQ(params[0].kind, ParamKind::kPointer);
  EXPECT_EQ(params[1].kind, ParamKind::kPointer);
  EXPECT_EQ(params[2].kind, ParamKind::kValue);  // size_t n
  EXPECT_EQ(params[3].kind, ParamKind::kValue);
  EXPECT_EQ(params[6].kind, ParamKind::kValue);
}

TEST(PtxReader, ClassifyParamsUsesDemangledSignatures) {
  using hal::ptx::classify_params;
  EXPECT_EQ(classify_params("_Z4fillIfEvPT_S0_i", {true, false, false}),
            (std::vector<bool>{true, false, false}));
  EXPECT_EQ(classify_params("_Z1kPfm", {true, true}), (std::vector<bool>{true, false}));
  EXPECT_EQ(classify_params("_Z1kPKvx", {true, true}), (std::vector<bool>{true, false}));
  // restrict-qualified pointers, function pointers
  EXPECT_EQ(classify_params("_Z1kPrfPFviE", {true, true}), (std::vector<bool>{true, true}));
  // extern "C" names and counts that do not match keep the rule
  EXPECT_EQ(classify_params("saxpy", {false, true, true, true}),
            (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(classify_params("_Z1kPfm", {true}), (std::vector<bool>{true}));
  EXPECT_EQ(classify_params("_Zgarbage", {true}), (std::vector<bool>{true}));
  EXPECT_EQ(classify_params("_Z1kv", {}), (std::vector<bool>{}));
}

TEST(PtxReader, DefaultsAddressSizeTo32) {
  const Module module = parse_ok(".version 7.0\n.target sm_70\n");
  EXPECT_EQ(module.address_size, 32u);
  EXPECT_TRUE(module.entries.empty());
}

TEST(PtxReader, ReadsArchitectureSuffixes) {
  EXPECT_EQ(parse_ok(".version 8.0\n.target sm_90a\n").target_sm, 90u);
  EXPECT_EQ(parse_ok(".version 8.8\n.target sm_100f\n").target_sm, 100u);
  EXPECT_EQ(parse_ok(".version 8.8\n.target sm_120\n").target, "sm_120");
}

TEST(PtxReader, ReportsErrorsWithLineNumbers) {
  EXPECT_NE(parse_error("").find("no .version"), std::string::npos);
  EXPECT_NE(parse_error("hello world").find("no .version"), std::string::npos);
  EXPECT_NE(parse_error(".version 8.0\n").find("no .target"), std::string::npos);
  EXPECT_NE(parse_error(".version x\n").find("line 1"), std::string::npos);
  EXPECT_NE(parse_error(".version 8.0\n.target compute_80\n").find("line 2"), std::string::npos);
  EXPECT_NE(parse_error(".version 8.0\n.target sm_80\n/* open").find("unterminated /*"),
            std::string::npos);
  EXPECT_NE(parse_error(".version 8.0\n.target sm_80\n.entry k() {").find("unterminated '{'"),
            std::string::npos);
  EXPECT_NE(parse_error(".version 8.0\n.target sm_80\n}").find("without a matching"),
            std::string::npos);
  EXPECT_NE(
      parse_error(".version 8.0\n.target sm_80\n.entry k(.param .u32 .wat x) {}").find("'.wat'"),
      std::string::npos);
  EXPECT_NE(parse_error(".version 8.0\n.target sm_80\n.entry k(.param x) {}").find("no type"),
            std::string::npos);
  EXPECT_NE(
      parse_error(".version 8.0\n.target sm_80\n.entry k(.param .b8 x[0]) {}").find("array size"),
      std::string::npos);
  EXPECT_NE(parse_error(".version 8.0\n.target sm_80\n.entry k(.param .u32 x {}").find("','"),
            std::string::npos);
  EXPECT_NE(parse_error(".version 8.0\n.target sm_80\n.entry k(.param .u32 x)").find("no body"),
            std::string::npos);
  EXPECT_NE(parse_error(".entry k() {}\n.version 8.0\n.target sm_80\n").find("before"),
            std::string::npos);
  EXPECT_NE(parse_error(".version 8.0\n.target sm_80\n\"open").find("unterminated string"),
            std::string::npos);
}

// An entry's parameters may take 4352 bytes, or 32764 from PTX ISA 8.1 on sm_70 and later, as
// the PTX ISA says and ptxas enforces; alignment padding counts.
TEST(PtxReader, RefusesParametersBeyondThePtxLimit) {
  auto entry = [](const char* version, const char* target, int array_bytes) {
    return std::string(".version ") + version + "\n.target " + target +
           "\n.address_size 64\n.entry k(.param .u8 a, .param .align 4 .b8 b[" +
           std::to_string(array_bytes) + "]) { ret; }\n";
  };
  EXPECT_EQ(parse_ok(entry("7.0", "sm_50", 4348)).entries.size(), 1u);  // 4 + 4348 = 4352
  const std::string over = parse_error(entry("7.0", "sm_50", 4349));
  EXPECT_NE(over.find("take 4353 bytes, more than the 4352"), std::string::npos) << over;
  EXPECT_NE(over.find("line 4"), std::string::npos) << over;
  EXPECT_NE(parse_error(entry("8.0", "sm_90", 4349)).find("4352"), std::string::npos);
  EXPECT_NE(parse_error(entry("8.1", "sm_52", 4349)).find("4352"), std::string::npos);
  EXPECT_EQ(parse_ok(entry("8.1", "sm_70", 32760)).entries.size(), 1u);
  EXPECT_NE(parse_error(entry("8.1", "sm_90", 32761)).find("more than the 32764"),
            std::string::npos);
}

// The backend reads signatures only: instructions it does not know, in bodies it skips, never
// fail a load (the driver's JIT judges them). Module variables and .func signatures are read,
// with the same code as the CPU PTX driver's parser.
TEST(PtxReader, SkipsBodiesButReadsEverythingElse) {
  const Module module = parse_ok(R"(.version 9.9
.target sm_120a
.address_size 64
.global .align 8 .u64 table[2] = {generic(table), 0};
.func (.param .b32 r) helper(.param .b32 x)
{
  future.instruction.v16.e2m1 {%x, [%y]}, @@@;
}
.visible .entry k(.param .u64 p)
.explicitcluster
.abi_preserve 4
{
  .reg .b32 %r<2>;
  tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r1, p;
  ret;
}
)");
  ASSERT_EQ(module.entries.size(), 1u);
  EXPECT_EQ(module.target_sm, 120u);
  EXPECT_EQ(module.entries[0].params.size(), 1u);
  EXPECT_NE(parse_error(".version 8.0\n.target sm_80\n.func f(.param .wat x) { }\n").find("'.wat'"),
            std::string::npos);
  EXPECT_NE(parse_error(".version 8.0\n.target sm_80\n.global .u32 g = {1};\n").find("line 3"),
            std::string::npos);
}

// The PTX ISA writes the kernel-parameter attributes joined (".ptr.global.align 16"); Triton
// writes them apart. Both are one pointer parameter.
TEST(PtxReader, ReadsJoinedPointerAttributes) {
  const Module module = parse_ok(R"(.version 8.4
.target sm_90a
.address_size 64
.visible .entry k(
    .param .u64 .ptr.global.align 16 k_param_0,
    .param .u64 .ptr .global .align 1 k_param_1,
    .param .u32 .ptr.align 8 k_param_2,
    .param .u32 k_param_3
)
{
  ret;
}
)");
  ASSERT_EQ(module.entries.size(), 1u);
  const Entry& k = module.entries[0];
  ASSERT_EQ(k.params.size(), 4u);
  EXPECT_EQ(k.params[0].kind, ParamKind::kPointer);
  EXPECT_EQ(k.params[0].size, 8u);
  EXPECT_EQ(k.params[0].alignment, 8u);  // .align after .ptr is the pointee's
  EXPECT_EQ(k.params[0].pointee_alignment, 16u);
  EXPECT_EQ(k.params[1].kind, ParamKind::kPointer);
  EXPECT_EQ(k.params[1].alignment, 8u);
  EXPECT_EQ(k.params[1].pointee_alignment, 1u);
  EXPECT_EQ(k.params[2].kind, ParamKind::kValue);  // 4 bytes: not a hal_deviceptr
  EXPECT_EQ(k.params[2].size, 4u);
  EXPECT_EQ(k.params[2].alignment, 4u);
  EXPECT_EQ(k.params[3].kind, ParamKind::kValue);
  const std::string header = ".version 8.0\n.target sm_80\n.address_size 64\n";
  EXPECT_NE(parse_error(header + ".entry k(.param .u64 .ptr.align.global 16 p) {}").find(".align"),
            std::string::npos);
  EXPECT_NE(parse_error(header + ".entry k(.param .u64 .ptr..global p) {}").find("unexpected"),
            std::string::npos);
}

// hal_param_info.type: what a scalar value parameter holds. Bit types, vectors, arrays and
// pointers are unknown; nvcc writes a C int as .u32 or .s32, so signedness is not recorded.
TEST(PtxReader, TypesScalarValueParameters) {
  const Module module = parse_ok(R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry k(
    .param .u64 .ptr .global .align 4 k_param_0,
    .param .f32 k_param_1,
    .param .u32 k_param_2,
    .param .s16 k_param_3,
    .param .f64 k_param_4,
    .param .b32 k_param_5,
    .param .align 8 .b8 k_param_6[16],
    .param .f16 k_param_7,
    .param .u64 k_param_8
)
{
  ret;
}
)");
  ASSERT_EQ(module.entries.size(), 1u);
  const std::vector<hal::ptx::Param>& p = module.entries[0].params;
  ASSERT_EQ(p.size(), 9u);
  const ParamType expected[] = {ParamType::kUnknown, ParamType::kFloat, ParamType::kInteger,
                                ParamType::kInteger, ParamType::kFloat, ParamType::kUnknown,
                                ParamType::kUnknown, ParamType::kFloat, ParamType::kUnknown};
  for (size_t i = 0; i < p.size(); ++i) EXPECT_EQ(p[i].type, expected[i]) << "parameter " << i;
  EXPECT_EQ(p[8].kind, ParamKind::kPointer);  // a bare .u64 is a pointer in an extern "C" kernel
}

TEST(PtxReader, EnforcesCaps) {
  const std::string header = ".version 8.0\n.target sm_80\n.address_size 64\n";
  EXPECT_NE(parse_error(header + ".entry " + std::string(5000, 'k') + "() {}").find("longer than"),
            std::string::npos);
  EXPECT_NE(parse_error(header + ".entry k(.param .b8 x[100000]) {}").find("array size"),
            std::string::npos);
  EXPECT_NE(
      parse_error(header + ".entry k(.param .b8 x[40000], .param .b8 y[40000]) {}").find("exceed"),
      std::string::npos);
  std::string many = header + ".entry k(";
  for (int i = 0; i < 5000; ++i)
    many += (i ? ", .param .u8 p" : ".param .u8 p") + std::to_string(i);
  many += ") {}";
  EXPECT_NE(parse_error(many).find("more than"), std::string::npos);
}

// Every prefix and many random corruptions of valid PTX either parse or fail cleanly.
TEST(PtxReader, SurvivesTruncationAndCorruption) {
  const std::string text(kHandWritten);
  for (size_t length = 0; length <= text.size(); ++length) {
    Module module;
    std::string error;
    // A prefix is read without the rest: the view's end is the only bound.
    hal::ptx::parse(std::string_view(text.data(), length), &module, &error);
  }
  std::mt19937 random(1234);
  const std::string bytes("{}()[].,;\"/*\0\n9x\xff", 17);
  for (int round = 0; round < 3000; ++round) {
    const std::string mutated = hal_ptx_test::mutate(text, random, bytes);
    Module module;
    std::string error;
    if (!hal::ptx::parse(mutated, &module, &error)) {
      EXPECT_EQ(error.rfind("line ", 0), 0u) << error;
    }
  }
}

#ifdef HAL_TEST_NVCC_PTX
std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(PtxReaderOnNvcc, ReadsNvccOutput) {
  const std::string text = read_file(HAL_TEST_NVCC_PTX);
  ASSERT_FALSE(text.empty()) << "cannot read " << HAL_TEST_NVCC_PTX;
  const Module module = parse_ok(text);
  EXPECT_GE(module.version_major, 7u);
  EXPECT_EQ(module.target, "sm_80");
  EXPECT_EQ(module.address_size, 64u);
  ASSERT_EQ(module.entries.size(), 4u);

  const Entry& saxpy = module.entries[0];
  EXPECT_EQ(saxpy.name, "saxpy");
  ASSERT_EQ(saxpy.params.size(), 4u);
  EXPECT_EQ(saxpy.params[0].kind, ParamKind::kValue);    // float a
  EXPECT_EQ(saxpy.params[1].kind, ParamKind::kPointer);  // const float* x
  EXPECT_EQ(saxpy.params[2].kind, ParamKind::kPointer);  // float* y
  // unsigned long long n: extern "C" gives no types, so the 64-bit rule calls it a pointer.
  EXPECT_EQ(saxpy.params[3].kind, ParamKind::kPointer);

  const Entry& scale = module.entries[1];
  EXPECT_EQ(scale.name, "_Z5scalePfPKfm4Paircsd");
  ASSERT_EQ(scale.params.size(), 7u);
  EXPECT_EQ(scale.params[0].kind, ParamKind::kPointer);
  EXPECT_EQ(scale.params[1].kind, ParamKind::kPointer);
  EXPECT_EQ(scale.params[2].kind, ParamKind::kValue);  // size_t n, from the mangled name
  EXPECT_EQ(scale.params[3].kind, ParamKind::kValue);
  EXPECT_EQ(scale.params[3].size, 16u);
  EXPECT_EQ(scale.params[3].alignment, 8u);
  EXPECT_EQ(scale.params[4].size, 1u);
  EXPECT_EQ(scale.params[5].size, 2u);
  EXPECT_EQ(scale.params[6].size, 8u);
  EXPECT_EQ(scale.params[6].kind, ParamKind::kValue);

  const Entry& fill = module.entries[2];
  ASSERT_EQ(fill.params.size(), 3u);
  EXPECT_EQ(fill.params[0].kind, ParamKind::kPointer);
  EXPECT_EQ(fill.params[1].kind, ParamKind::kValue);

  const Entry& bounded = module.entries[3];
  EXPECT_EQ(bounded.maxntid, 128u);
  ASSERT_EQ(bounded.params.size(), 1u);
  EXPECT_EQ(bounded.params[0].kind, ParamKind::kPointer);
}
#else
TEST(PtxReaderOnNvcc, ReadsNvccOutput) {
  GTEST_SKIP() << "nvcc was not found at configure time: no generated PTX to read";
}
#endif

}  // namespace
