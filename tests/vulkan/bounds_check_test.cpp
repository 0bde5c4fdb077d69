// HAL_VULKAN_VALIDATION=gpu: accesses of a storage buffer's array past the end of the
// allocation are caught inside the kernel and reported by the next synchronisation, naming the
// kernel, the parameter, the element and what to do; kernels that stay in bounds compute what
// they compute without the checks. Its own process: the mode is read when the runtime starts.
#include "vk_test_util.h"

#include <cstdlib>
#include <numeric>
#include <regex>
#include <vector>

namespace hal_vk_test {
namespace {

// Before main() and before the runtime starts; wins over test_environment.cpp's default.
const bool kGpuValidation = [] {
  setenv("HAL_VULKAN_VALIDATION", "gpu", 1);
  return true;
}();

constexpr uint32_t kCount = 256;  // floats in each buffer
constexpr float kUntouched = -1.0f;

class BoundsChecks : public VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    ASSERT_TRUE(kGpuValidation);
    ASSERT_TRUE(hal::vulkan::bounds_checks_enabled()) << "HAL_VULKAN_VALIDATION=gpu was not seen";
    hal_module module = load("shift_copy");
    ASSERT_NE(module, nullptr);
    shift_copy_ = function(module, "shift_copy");
    std::vector<float> x(kCount);
    std::iota(x.begin(), x.end(), 1.0f);
    x_ = upload(x);
    y_ = upload(std::vector<float>(kCount, kUntouched));
  }

  // y[i + write_shift] = x[i + read_shift] for i < kCount.
  hal_status launch(uint32_t write_shift, uint32_t read_shift) {
    uint32_t n = kCount;
    void* args[] = {&y_, &x_, &write_shift, &read_shift, &n};
    hal_launch_config config{{kCount / 64, 1, 1}, {0, 0, 0}, 0};
    return hal_launch(stream_, shift_copy_, &config, args);
  }

  hal_function shift_copy_ = nullptr;
  hal_deviceptr x_ = 0;
  hal_deviceptr y_ = 0;
};

// "element N" with N the first recorded of the out-of-bounds indices [first, first + count).
::testing::AssertionResult NamesElementIn(uint32_t first, uint32_t count) {
  std::smatch match;
  const std::string text = hal_last_error();
  if (!std::regex_search(text, match, std::regex("element ([0-9]+) \\(byte offset ([0-9]+)\\)"))) {
    return ::testing::AssertionFailure() << "no element in: " << text;
  }
  const uint64_t element = std::stoull(match[1]);
  if (element < first || element >= first + count || std::stoull(match[2]) != 4 * element) {
    return ::testing::AssertionFailure() << "wrong element: " << text;
  }
  return ::testing::AssertionSuccess();
}

TEST_F(BoundsChecks, AWritePastTheEndIsReportedAndSkipped) {
  ASSERT_OK(launch(/*write_shift=*/16, /*read_shift=*/0));
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_stream_synchronize(stream_));
  EXPECT_TRUE(hal_testing::LastErrorIs(
      "hal_stream_synchronize",
      {"kernel 'shift_copy' wrote out of bounds", "of parameter 0 (set 0, binding 0)",
       "an array of 256 elements of 4 bytes", "16 accesses in this launch were out of bounds",
       "were skipped", "HAL_VULKAN_VALIDATION=gpu", ". Check the kernel's index arithmetic",
       "allocation passed as parameter 0"}));
  EXPECT_TRUE(NamesElementIn(kCount, 16));
  // Reported once: the stream goes on.
  EXPECT_OK(hal_stream_synchronize(stream_));
  std::vector<float> y = download<float>(y_, kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(y[i], i < 16 ? kUntouched : static_cast<float>(i - 16 + 1)) << i;
  }
}

TEST_F(BoundsChecks, AReadPastTheEndIsReportedAndReadsZero) {
  ASSERT_OK(launch(/*write_shift=*/0, /*read_shift=*/16));
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_stream_synchronize(stream_));
  EXPECT_TRUE(hal_testing::LastErrorIs(
      "hal_stream_synchronize",
      {"kernel 'shift_copy' read out of bounds", "of parameter 1 (set 0, binding 1)",
       "16 accesses in this launch were out of bounds", "and read 0",
       "allocation passed as parameter 1"}));
  EXPECT_TRUE(NamesElementIn(kCount, 16));
  std::vector<float> y = download<float>(y_, kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(y[i], i + 16 < kCount ? static_cast<float>(i + 16 + 1) : 0.0f) << i;
  }
}

TEST_F(BoundsChecks, KernelsInBoundsComputeTheSameAndReportNothing) {
  // Several launches in one batch, each with its own record.
  for (int i = 0; i < 3; ++i) ASSERT_OK(launch(0, 0));
  ASSERT_OK(hal_stream_synchronize(stream_));
  std::vector<float> y = download<float>(y_, kCount);
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(y[i], static_cast<float>(i + 1)) << i;

  // A loop whose header loads from the buffer, stopped by a value in bounds.
  hal_module module = load("run_length");
  ASSERT_NE(module, nullptr);
  hal_function run_length = function(module, "main");
  std::vector<float> a = {1, 2, 0, 5, -1, 3, 3, 3, 0};
  hal_deviceptr a_ptr = upload(a);
  hal_deviceptr r_ptr = alloc(a.size() * sizeof(uint32_t));
  uint32_t n = static_cast<uint32_t>(a.size());
  void* args[] = {&a_ptr, &r_ptr, &n};
  hal_launch_config config{{1, 1, 1}, {0, 0, 0}, 0};
  ASSERT_OK(hal_launch(stream_, run_length, &config, args));
  ASSERT_OK(hal_stream_synchronize(stream_));
  EXPECT_EQ(download<uint32_t>(r_ptr, a.size()),
            (std::vector<uint32_t>{2, 1, 0, 1, 0, 3, 2, 1, 0}));
}

TEST_F(BoundsChecks, ALoopRunningOffTheEndStopsThere) {
  hal_module module = load("run_length");
  ASSERT_NE(module, nullptr);
  hal_function run_length = function(module, "main");
  // No non-positive value at the end: every invocation's loop reads past the buffer once.
  std::vector<float> a = {1, 2, 3, 4};
  hal_deviceptr a_ptr = upload(a);
  hal_deviceptr r_ptr = alloc(a.size() * sizeof(uint32_t));
  uint32_t n = static_cast<uint32_t>(a.size());
  void* args[] = {&a_ptr, &r_ptr, &n};
  hal_launch_config config{{1, 1, 1}, {0, 0, 0}, 0};
  ASSERT_OK(hal_launch(stream_, run_length, &config, args));
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_stream_synchronize(stream_));
  EXPECT_TRUE(hal_testing::LastErrorHas(
      {"kernel 'main' read out of bounds: element 4 (byte offset 16) of parameter 0",
       "an array of 4 elements of 4 bytes", "4 accesses in this launch were out of bounds"}));
  // The read past the end gave 0 and ended each loop there.
  EXPECT_EQ(download<uint32_t>(r_ptr, a.size()), (std::vector<uint32_t>{4, 3, 2, 1}));
}

TEST_F(BoundsChecks, EventsReportTheLaunchesTheyCapture) {
  hal_event before = nullptr;
  hal_event after = nullptr;
  ASSERT_OK(hal_event_create(device_, &before));
  ASSERT_OK(hal_event_create(device_, &after));
  ASSERT_OK(hal_event_record(before, stream_));
  ASSERT_OK(launch(0, 32));
  ASSERT_OK(hal_event_record(after, stream_));
  EXPECT_OK(hal_event_synchronize(before));
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_event_synchronize(after));
  EXPECT_TRUE(hal_testing::LastErrorIs("hal_event_synchronize",
                                       {"kernel 'shift_copy' read out of bounds"}));
  EXPECT_OK(hal_stream_synchronize(stream_));  // already reported
  EXPECT_OK(hal_event_destroy(before));
  EXPECT_OK(hal_event_destroy(after));
}

TEST_F(BoundsChecks, LaterFaultyLaunchesAreCountedWithTheFirst) {
  ASSERT_OK(launch(8, 0));
  ASSERT_OK(launch(0, 0));
  ASSERT_OK(launch(0, 8));
  ASSERT_OK(launch(0, 8));
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_stream_synchronize(stream_));
  EXPECT_TRUE(hal_testing::LastErrorHas(
      {"kernel 'shift_copy' wrote out of bounds", "8 accesses in this launch",
       "(2 later launches on this stream also accessed out of bounds; see the log). Check"}));
  EXPECT_OK(hal_stream_query(stream_));
}

TEST_F(BoundsChecks, QueriesAndDeviceSynchronizationReportToo) {
  ASSERT_OK(launch(1, 0));
  hal_status status = HAL_ERROR_NOT_READY;
  while (status == HAL_ERROR_NOT_READY) status = hal_stream_query(stream_);
  EXPECT_EQ(status, HAL_ERROR_LAUNCH_FAILED) << hal_last_error();
  EXPECT_TRUE(hal_testing::LastErrorIs("hal_stream_query", {"1 access in this launch was out of "
                                                            "bounds",
                                                            "and was skipped"}));
  ASSERT_OK(launch(0, 1));
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_device_synchronize(device_));
  EXPECT_TRUE(hal_testing::LastErrorIs("hal_device_synchronize", {"read out of bounds"}));
  // Freeing memory waits for the streams but leaves the report to them.
  ASSERT_OK(launch(2, 0));
  hal_deviceptr spare = 0;
  ASSERT_OK(hal_mem_alloc(device_, 64, &spare));
  EXPECT_OK(hal_mem_free(device_, spare));
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_stream_synchronize(stream_));
}

}  // namespace
}  // namespace hal_vk_test
