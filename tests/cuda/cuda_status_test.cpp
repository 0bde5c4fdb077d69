// Tests of the CUresult to hal_status table (src/cuda/cuda_status.h).
#include "cuda/cuda_status.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

TEST(CudaStatusTable, MapsTheResultsHalPromises) {
  using hal::cuda::poisons_context;
  using hal::cuda::status_for;
  EXPECT_EQ(status_for(CUDA_SUCCESS), HAL_SUCCESS);
  EXPECT_EQ(status_for(CUDA_ERROR_OUT_OF_MEMORY), HAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(status_for(CUDA_ERROR_INVALID_PTX), HAL_ERROR_COMPILE_FAILED);
  EXPECT_EQ(status_for(CUDA_ERROR_UNSUPPORTED_PTX_VERSION), HAL_ERROR_COMPILE_FAILED);
  EXPECT_EQ(status_for(CUDA_ERROR_NO_BINARY_FOR_GPU), HAL_ERROR_COMPILE_FAILED);
  EXPECT_EQ(status_for(CUDA_ERROR_INVALID_IMAGE), HAL_ERROR_INVALID_IR);
  EXPECT_EQ(status_for(CUDA_ERROR_ILLEGAL_ADDRESS), HAL_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(status_for(CUDA_ERROR_LAUNCH_FAILED), HAL_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(status_for(CUDA_ERROR_NOT_READY), HAL_ERROR_NOT_READY);
  EXPECT_EQ(status_for(CUDA_ERROR_NO_DEVICE), HAL_ERROR_UNAVAILABLE);
  // A result hal does not know. Drivers' results stay below 1000 (999 is CUDA_ERROR_UNKNOWN), all
  // within the values a CUresult holds in C++ (0..1023); a cast of anything beyond that would
  // already be undefined here.
  const auto unknown = static_cast<CUresult>(998);
  EXPECT_EQ(status_for(unknown), HAL_ERROR_INTERNAL);
  EXPECT_TRUE(poisons_context(CUDA_ERROR_ILLEGAL_ADDRESS));
  EXPECT_TRUE(poisons_context(CUDA_ERROR_LAUNCH_FAILED));
  EXPECT_FALSE(poisons_context(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));
  EXPECT_FALSE(poisons_context(CUDA_ERROR_OUT_OF_MEMORY));
  EXPECT_FALSE(poisons_context(unknown));
}

TEST(CudaStatusTable, EveryLineIsConsistent) {
  size_t count = 0;
  const hal::cuda::ErrorMapping* table = hal::cuda::error_table(&count);
  std::set<int> seen;
  for (size_t i = 0; i < count; ++i) {
    SCOPED_TRACE(table[i].name);
    EXPECT_TRUE(seen.insert(table[i].result).second) << "listed twice";
    EXPECT_NE(table[i].status, HAL_SUCCESS);
    EXPECT_EQ(std::string(table[i].name).rfind("CUDA_ERROR_", 0), 0u);
    EXPECT_NE(table[i].hint, nullptr);
    // Every failure text ends with advice: the line's own hint or its status's.
    EXPECT_GT(std::string(hal::cuda::error_hint(table[i].result)).size(), 10u);
    EXPECT_STREQ(hal::cuda::table_error_name(table[i].result), table[i].name);
    if (table[i].poisons_context) {
      EXPECT_TRUE(table[i].status == HAL_ERROR_LAUNCH_FAILED ||
                  table[i].status == HAL_ERROR_DEVICE_LOST);
    }
  }
}

// Every CUresult that the build's cuda.h declares has a line in the table.
TEST(CudaStatusTable, CoversEveryResultOfCudaH) {
  std::ifstream in(HAL_TEST_CUDA_H);
  ASSERT_TRUE(in) << "cannot read " << HAL_TEST_CUDA_H;
  std::stringstream text;
  text << in.rdbuf();
  const std::string header = text.str();
  const std::regex enumerator(R"((CUDA_ERROR_[A-Z0-9_]+)\s*=\s*([0-9]+))");
  size_t found = 0;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), enumerator);
       it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    const int value = std::stoi((*it)[2]);
    ++found;
    const char* listed = hal::cuda::table_error_name(static_cast<CUresult>(value));
    ASSERT_NE(listed, nullptr) << name << " (" << value << ") is missing from the table";
    EXPECT_EQ(name, listed);
  }
  EXPECT_GT(found, 90u);
}

}  // namespace
