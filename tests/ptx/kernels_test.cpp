// The PTX parser on real compiler output: the kernel pack's PTX (kernels/ptx, about 20k lines
// of nvcc output) and the PTX tests/cuda generates from test_kernels.cu when nvcc is installed.
// What the parser finds is checked against what a plain reading of the text finds: the entries
// and their parameter counts, the instruction lines, the .maxntid directives.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "ir_check.h"
#include "ptx/ir.h"
#include "ptx/reader.h"

namespace {

namespace ir = hal::ptx::ir;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string_view trim(std::string_view line) {
  if (const size_t comment = line.find("//"); comment != std::string_view::npos) {
    line = line.substr(0, comment);
  }
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  return line;
}

struct TextCounts {
  std::vector<std::string> entries;  // names, in order
  std::vector<size_t> entry_params;  // ".param" between the name and ')'
  size_t instructions = 0;           // statements that end with ';' and are not directives
  size_t maxntid = 0;                // .maxntid lines
};

// What nvcc's layout (one statement per line) shows without parsing.
TextCounts count_text(const std::string& text) {
  TextCounts counts;
  std::istringstream lines(text);
  std::string raw;
  bool in_params = false;
  while (std::getline(lines, raw)) {
    const std::string_view line = trim(raw);
    if (const size_t at = line.find(".entry "); at != std::string_view::npos) {
      std::string_view name = line.substr(at + 7);
      name = name.substr(0, name.find('('));
      counts.entries.emplace_back(trim(name));
      counts.entry_params.push_back(0);
      in_params = line.find(')') == std::string_view::npos;
    } else if (in_params) {
      if (line.find(".param") != std::string_view::npos) ++counts.entry_params.back();
      if (line.find(')') != std::string_view::npos) in_params = false;
    } else if (line.rfind(".maxntid", 0) == 0) {
      ++counts.maxntid;
    } else {
      // Inline assembly puts its braces on the instruction's line: "{  cvt.f32.f16 %f1, %rs1;}".
      std::string_view statement = line;
      if (!statement.empty() && statement.front() == '{') statement = trim(statement.substr(1));
      if (!statement.empty() && statement.back() == '}') {
        statement = trim(statement.substr(0, statement.size() - 1));
      }
      if (!statement.empty() && statement.back() == ';' && statement.front() != '.') {
        ++counts.instructions;
      }
    }
  }
  return counts;
}

// Parses |text| with bodies and checks it against the plain reading; returns the module.
ir::Module check_against_text(const std::string& text) {
  ir::Module module;
  ir::ParseError error;
  EXPECT_TRUE(ir::parse(text.data(), text.size(), {}, &module, &error))
      << "line " << error.line << ": " << error.message;
  EXPECT_EQ(hal_ptx_test::check_module(module), "");
  const TextCounts counts = count_text(text);
  std::vector<std::string> entries;
  std::vector<size_t> entry_params;
  size_t instructions = 0;
  size_t maxntid = 0;
  for (const ir::Function& function : module.functions) {
    if (function.is_entry) {
      entries.push_back(function.name);
      entry_params.push_back(function.params.size());
      EXPECT_TRUE(function.has_body) << function.name;
    }
    instructions += function.code.size();
    if (function.maxntid[0] != 0) ++maxntid;
    for (const ir::Instruction& instruction : function.code) {
      // nvcc writes only words the parser knows.
      EXPECT_TRUE(instruction.unknown_mods.empty())
          << "line " << instruction.line << ": '" << instruction.text << "'";
    }
  }
  EXPECT_FALSE(entries.empty());
  EXPECT_EQ(entries, counts.entries);
  EXPECT_EQ(entry_params, counts.entry_params);
  EXPECT_EQ(instructions, counts.instructions);
  EXPECT_EQ(maxntid, counts.maxntid);

  // The reader the CUDA backend uses sees the same entries.
  hal::ptx::Module reflected;
  std::string reader_error;
  EXPECT_TRUE(hal::ptx::parse(text, &reflected, &reader_error)) << reader_error;
  EXPECT_EQ(reflected.entries.size(), entries.size());
  for (size_t i = 0; i < reflected.entries.size() && i < entries.size(); ++i) {
    EXPECT_EQ(reflected.entries[i].name, entries[i]);
    EXPECT_EQ(reflected.entries[i].params.size(), entry_params[i]);
  }
  return module;
}

TEST(PtxParserOnKernels, ParsesTheKernelPack) {
  size_t files = 0;
  size_t instructions = 0;
  for (const auto& item : std::filesystem::directory_iterator(HAL_TEST_KERNEL_PTX_DIR)) {
    if (item.path().extension() != ".ptx") continue;
    SCOPED_TRACE(item.path().filename().string());
    const std::string text = read_file(item.path());
    ASSERT_FALSE(text.empty());
    const ir::Module module = check_against_text(text);
    EXPECT_EQ(module.target, "sm_80");
    EXPECT_EQ(module.address_size, 64u);
    for (const ir::Function& function : module.functions) instructions += function.code.size();
    ++files;
  }
  EXPECT_GE(files, 3u);
  EXPECT_GT(instructions, 10000u);  // the pack is about 20k lines
}

#ifdef HAL_TEST_NVCC_PTX
TEST(PtxParserOnKernels, ParsesNvccOutputOfTheTestKernels) {
  const std::string text = read_file(HAL_TEST_NVCC_PTX);
  ASSERT_FALSE(text.empty()) << "cannot read " << HAL_TEST_NVCC_PTX;
  const ir::Module module = check_against_text(text);
  ASSERT_EQ(module.functions.size(), 4u);
  EXPECT_EQ(module.functions[0].name, "saxpy");
  EXPECT_EQ(module.functions[0].params.size(), 4u);
  const ir::Function& scale = module.functions[1];
  ASSERT_EQ(scale.params.size(), 7u);
  EXPECT_EQ(scale.params[3].align, 8u);
  EXPECT_EQ(scale.params[3].size(), 16u);
  EXPECT_EQ(module.functions[3].maxntid[0], 128u);
  // bounded() uses "extern __shared__ int shared[]".
  ASSERT_EQ(module.variables.size(), 1u);
  EXPECT_TRUE(module.variables[0].unsized);
  EXPECT_EQ(module.variables[0].space, ir::Space::kShared);
  EXPECT_EQ(module.variables[0].linkage, ir::Linkage::kExtern);
}
#else
TEST(PtxParserOnKernels, ParsesNvccOutputOfTheTestKernels) {
  GTEST_SKIP() << "nvcc was not found at configure time: no generated PTX to read";
}
#endif

}  // namespace
