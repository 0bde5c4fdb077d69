// Checks the driver entry-point table (src/cuda/cuda_driver.h) against NVIDIA's own typedefs:
// every line's parameter list must be the signature of the variant that cuGetProcAddress hands
// back for its pinned version, that is the newest PFN_<name>_v<N> of cudaTypedefs.h with N at
// most the pinned version. A wrong signature does not compile; a wrong pick fails at run time.
#include "cuda/cuda_driver.h"

#include <gtest/gtest.h>

#include <cudaTypedefs.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <type_traits>

namespace {

// X(name, N): the table's line |name| has the signature of PFN_<name>_v<N>.
#define HAL_TEST_DRIVER_VARIANTS(X)    \
  X(cuGetErrorName, 6000)              \
  X(cuGetErrorString, 6000)            \
  X(cuInit, 2000)                      \
  X(cuDriverGetVersion, 2020)          \
  X(cuDeviceGetCount, 2000)            \
  X(cuDeviceGet, 2000)                 \
  X(cuDeviceGetName, 2000)             \
  X(cuDeviceGetAttribute, 2000)        \
  X(cuDeviceGetUuid, 11040)            \
  X(cuDeviceTotalMem, 3020)            \
  X(cuDevicePrimaryCtxRetain, 7000)    \
  X(cuDevicePrimaryCtxRelease, 11000)  \
  X(cuCtxGetCurrent, 4000)             \
  X(cuCtxSetCurrent, 4000)             \
  X(cuCtxSynchronize, 2000)            \
  X(cuMemAlloc, 3020)                  \
  X(cuMemFree, 3020)                   \
  X(cuMemHostAlloc, 2020)              \
  X(cuMemFreeHost, 2000)               \
  X(cuMemcpyHtoDAsync, 3020)           \
  X(cuMemcpyDtoHAsync, 3020)           \
  X(cuMemcpyDtoDAsync, 3020)           \
  X(cuMemsetD8Async, 3020)             \
  X(cuMemsetD32Async, 3020)            \
  X(cuStreamCreate, 2000)              \
  X(cuStreamDestroy, 4000)             \
  X(cuStreamSynchronize, 2000)         \
  X(cuStreamQuery, 2000)               \
  X(cuStreamWaitEvent, 3020)           \
  X(cuEventCreate, 2000)               \
  X(cuEventDestroy, 4000)              \
  X(cuEventRecord, 2000)               \
  X(cuEventSynchronize, 2000)          \
  X(cuEventQuery, 2000)                \
  X(cuEventElapsedTime, 2000)          \
  X(cuModuleLoadDataEx, 2010)          \
  X(cuModuleUnload, 2000)              \
  X(cuModuleGetFunction, 2000)         \
  X(cuFuncGetAttribute, 2020)          \
  X(cuFuncSetAttribute, 9000)          \
  X(cuLaunchKernel, 4000)              \
  X(cuPointerGetAttribute, 4000)       \
  X(cuModuleGetFunctionCount, 12040)   \
  X(cuModuleEnumerateFunctions, 12040) \
  X(cuFuncGetName, 12030)              \
  X(cuFuncGetParamInfo, 12040)         \
  X(cuLogsCurrent, 12090)              \
  X(cuLogsDumpToMemory, 12090)

// The member is named as the table spells it (cuda.h may rename both the same way); the typedef
// is pasted from the unexpanded base name.
#define HAL_TEST_SAME_SIGNATURE(name, variant)                                                  \
  static_assert(std::is_same_v<decltype(hal::cuda::DriverApi{}.name), PFN_##name##_v##variant>, \
                "the table's signature of " #name " is not PFN_" #name "_v" #variant);
HAL_TEST_DRIVER_VARIANTS(HAL_TEST_SAME_SIGNATURE)
#undef HAL_TEST_SAME_SIGNATURE

struct Variant {
  const char* name;
  int version;
};
#define HAL_TEST_VARIANT(name, variant) {#name, variant},
constexpr Variant kVariants[] = {HAL_TEST_DRIVER_VARIANTS(HAL_TEST_VARIANT)};
#undef HAL_TEST_VARIANT

TEST(CudaDriverTable, EachLineIsTheVariantItsPinnedVersionResolvesTo) {
  const std::string path = std::string(HAL_TEST_CUDA_H);
  const std::string typedefs_path = path.substr(0, path.rfind('/') + 1) + "cudaTypedefs.h";
  std::ifstream in(typedefs_path);
  ASSERT_TRUE(in) << "cannot read " << typedefs_path;
  std::stringstream text;
  text << in.rdbuf();
  const std::string header = text.str();

  size_t count = 0;
  const hal::cuda::EntryPointInfo* entries = hal::cuda::entry_points(&count);
  ASSERT_EQ(count, sizeof(kVariants) / sizeof(kVariants[0]))
      << "every line of the table needs its line in HAL_TEST_DRIVER_VARIANTS";
  for (size_t i = 0; i < count; ++i) {
    SCOPED_TRACE(entries[i].name);
    ASSERT_STREQ(entries[i].name, kVariants[i].name);
    // The newest default-stream variant (not _ptsz/_ptds) not newer than the pinned version.
    const std::regex pattern("PFN_" + std::string(entries[i].name) + "_v([0-9]+)\\)");
    int newest = 0;
    for (auto it = std::sregex_iterator(header.begin(), header.end(), pattern);
         it != std::sregex_iterator(); ++it) {
      const int version = std::stoi((*it)[1]);
      if (version <= entries[i].version && version > newest) newest = version;
    }
    EXPECT_EQ(newest, kVariants[i].version)
        << "cuGetProcAddress at " << entries[i].version << " hands back PFN_" << entries[i].name
        << "_v" << newest;
  }
}

}  // namespace
