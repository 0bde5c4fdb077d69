// A launch-rate probe for the hot path (hal_launch -> VulkanStream::launch), not a correctness
// test: disabled by default. Run it without the validation layer, which dominates otherwise:
//   HAL_VULKAN_VALIDATION=0 hal_test_vulkan --gtest_also_run_disabled_tests
//       --gtest_filter='Probe.*'   (one command line)
// It prints, per round and as medians, launches per second (one synchronisation per round, so
// lavapipe's execution counts too) and the host time of one hal_launch call (recording and
// submission only).
#include "vk_test_util.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace hal_vk_test {
namespace {

class Probe : public VulkanTest {};

TEST_F(Probe, DISABLED_LaunchRate) {
  hal_function add = function(load("multi"), "add_value");
  ASSERT_NE(add, nullptr);
  const uint32_t n = 16;
  hal_deviceptr dy = upload(std::vector<uint32_t>(n, 0));
  uint32_t one = 1, count = n;
  void* args[] = {&dy, &one, &count};
  hal_launch_config config{{1, 1, 1}, {0, 0, 0}, 0};
  ASSERT_OK(hal_stream_synchronize(stream_));
  // 7 batches of 256 launches per round: below the stream's limit of batches in flight, so the
  // host time per call is recording and submission, not waiting for lavapipe.
  const int launches = 7 * 256;
  const int rounds = 25;
  std::vector<double> issue_us;  // host time per hal_launch call
  std::vector<double> rates;     // launches per second, synchronisation included
  for (int round = 0; round < rounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) ASSERT_OK(hal_launch(stream_, add, &config, args));
    const auto issued = std::chrono::steady_clock::now();
    ASSERT_OK(hal_stream_synchronize(stream_));
    const auto done = std::chrono::steady_clock::now();
    issue_us.push_back(std::chrono::duration<double, std::micro>(issued - start).count() /
                       launches);
    rates.push_back(launches / std::chrono::duration<double>(done - start).count());
    std::printf("round %d: %.0f launches/s, %.2f us per hal_launch call\n", round, rates.back(),
                issue_us.back());
  }
  std::sort(rates.begin(), rates.end());
  std::sort(issue_us.begin(), issue_us.end());
  std::printf("median: %.0f launches/s, %.2f us per hal_launch call\n", rates[rounds / 2],
              issue_us[rounds / 2]);
  std::vector<uint32_t> out = download<uint32_t>(dy, n);
  EXPECT_EQ(out[0], static_cast<uint32_t>(launches * rounds));
}

}  // namespace
}  // namespace hal_vk_test
