// The PTX of the pack: it assembles with ptxas for sm_80 and sm_90, and the committed PTX
// (kernels/ptx, used where nvcc is absent) is what the build's nvcc produces.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

std::vector<std::string> ptx_files() {
  std::vector<std::string> files;
  std::istringstream list(HAL_KERNELS_PTX_FILES);  // "a.ptx,b.ptx"
  std::string file;
  while (std::getline(list, file, ',')) {
    if (!file.empty()) files.push_back(file);
  }
  return files;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs |command|, returning its exit status and (in |output|) what it printed.
int run(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) *output += buffer;
  return pclose(pipe);
}

using AssembleParam = std::tuple<std::string, std::string>;
class PtxAssemble : public ::testing::TestWithParam<AssembleParam> {};

TEST_P(PtxAssemble, Ptxas) {
  const std::string ptxas = HAL_KERNELS_PTXAS;
  if (ptxas.empty()) GTEST_SKIP() << "ptxas not found (it comes with the CUDA toolkit)";
  const auto& [file, arch] = GetParam();
  const std::string path = std::string(HAL_KERNELS_BUILD_DIR "/") + file;
  std::string output;
  const int status = run("'" + ptxas + "' -arch=" + arch + " -o /dev/null '" + path + "'", &output);
  EXPECT_EQ(status, 0) << ptxas << " -arch=" << arch << " " << path << ":\n" << output;
}

std::string assemble_name(const ::testing::TestParamInfo<AssembleParam>& info) {
  std::string file = std::get<0>(info.param);
  file = file.substr(0, file.find('.'));
  return file + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Kernels, PtxAssemble,
                         ::testing::Combine(::testing::ValuesIn(ptx_files()),
                                            ::testing::Values("sm_80", "sm_90")),
                         assemble_name);

class PtxCommitted : public ::testing::TestWithParam<std::string> {};

TEST_P(PtxCommitted, MatchesTheBuild) {
  std::string committed_version = read_file(HAL_KERNELS_SOURCE_DIR "/ptx/NVCC_VERSION");
  committed_version = committed_version.substr(0, committed_version.find_first_of("\r\n"));
  const std::string built_version = HAL_KERNELS_NVCC_VERSION;
  if (!HAL_KERNELS_PTX_BUILT) {
    GTEST_SKIP() << "nvcc not found: this build uses the committed PTX itself";
  }
  if (committed_version != built_version || built_version.empty()) {
    GTEST_SKIP() << "the committed PTX was made by nvcc " << committed_version
                 << " and this build's nvcc is " << built_version
                 << "; outputs of different versions differ (kernels/regen-ptx.sh refreshes "
                    "the committed files)";
  }
  const std::string file = GetParam();
  const std::string built = read_file(std::string(HAL_KERNELS_BUILD_DIR "/") + file);
  const std::string committed = read_file(std::string(HAL_KERNELS_SOURCE_DIR "/ptx/") + file);
  ASSERT_FALSE(built.empty()) << file;
  EXPECT_TRUE(built == committed)
      << "kernels/ptx/" << file << " differs from what nvcc " << built_version
      << " builds from the CUDA sources: run kernels/regen-ptx.sh and commit the result";
}

std::string committed_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param.substr(0, info.param.find('.'));
}

INSTANTIATE_TEST_SUITE_P(Kernels, PtxCommitted, ::testing::ValuesIn(ptx_files()), committed_name);

}  // namespace
