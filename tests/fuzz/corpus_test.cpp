// Runs every file of the fuzz corpora (tests/fuzz/corpus/<target>/) through its fuzz target's
// entry point, so the corpora are exercised in every build, with or without libFuzzer.
#include "fuzz_entries.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpus(const std::string& target) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(fs::path(HAL_FUZZ_CORPUS) / target)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<uint8_t> read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void run_corpus(const std::string& target, std::string (*entry)(const uint8_t*, size_t),
                size_t minimum_files) {
  const std::vector<fs::path> files = corpus(target);
  EXPECT_GE(files.size(), minimum_files) << "corpus/" << target << " is nearly empty";
  for (const fs::path& file : files) {
    const std::vector<uint8_t> bytes = read(file);
    EXPECT_EQ(entry(bytes.data(), bytes.size()), "")
        << "corpus/" << target << "/" << file.filename().string();
  }
}

TEST(FuzzCorpus, SniffIr) {
  run_corpus("sniff_ir", hal_fuzz::sniff_ir_one, 8);
}
TEST(FuzzCorpus, Selector) {
  run_corpus("selector", hal_fuzz::selector_one, 8);
}
#ifdef HAL_FUZZ_WITH_VULKAN
TEST(FuzzCorpus, PipelineCache) {
  run_corpus("pipeline_cache", hal_fuzz::pipeline_cache_one, 6);
}
TEST(FuzzCorpus, PtxSpirv) {
  run_corpus("ptx_spirv", hal_fuzz::ptx_spirv_one, 8);
}
#endif

}  // namespace
