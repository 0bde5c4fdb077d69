// The leak report at process exit, read from the output of a program that leaks on purpose
// (leak_helper.cpp), and the live counts it is made from.
#include "common/accounting.h"
#include "common/registry.h"
#include "test_util.h"

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace hal_test {
namespace {

struct HelperRun {
  int exit_status = -1;
  std::string output;  // stdout and stderr together
};

// Runs the leak helper with |arguments| and HAL_LOG_LEVEL=|level| (unset when empty).
HelperRun run_helper(const std::string& arguments, const std::string& level) {
  const std::string command =
      (level.empty() ? "env -u HAL_LOG_LEVEL " : "env HAL_LOG_LEVEL=" + level + " ") +
      "'" HAL_TEST_LEAK_HELPER "' " + arguments + " 2>&1";
  HelperRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LeakReport, NamesTheLeakedStreamAndAllocationAtExit) {
  const HelperRun run = run_helper("leak", "warn");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  EXPECT_TRUE(has(run.output, "[hal warning] leak report at exit")) << run.output;
  EXPECT_TRUE(has(run.output, "1 stream (hal_stream_destroy)")) << run.output;
  EXPECT_TRUE(has(run.output, "1 device allocation, 4096 bytes in all, on double:1 (Double GPU"))
      << run.output;
  // What the helper released is not reported.
  EXPECT_FALSE(has(run.output, "event")) << run.output;
  EXPECT_FALSE(has(run.output, "module")) << run.output;
  EXPECT_FALSE(has(run.output, "host allocation")) << run.output;
}

TEST(LeakReport, IsShownAtTheDefaultLogLevel) {
  const HelperRun run = run_helper("leak", "");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  EXPECT_TRUE(has(run.output, "1 stream (hal_stream_destroy)")) << run.output;
}

TEST(LeakReport, SaysNothingWhenEverythingWasReleased) {
  const HelperRun run = run_helper("clean", "warn");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  EXPECT_TRUE(has(run.output, "leak helper: done (clean)")) << run.output;
  EXPECT_FALSE(has(run.output, "leak report")) << run.output;
  EXPECT_FALSE(has(run.output, "[hal")) << run.output;
}

TEST(LeakReport, IsSilencedByALogLevelAboveWarnings) {
  const HelperRun run = run_helper("leak", "error");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  EXPECT_FALSE(has(run.output, "leak report")) << run.output;
}

TEST(LeakReport, WorksOnARealVulkanDevice) {
#ifndef HAL_TEST_HAVE_VULKAN
  GTEST_SKIP() << "this build has no Vulkan backend";
#else
  const HelperRun run = run_helper("leak vulkan:0", "warn");
  if (has(run.output, "finding the device failed"))
    GTEST_SKIP() << "no Vulkan device: " << run.output;
  ASSERT_EQ(run.exit_status, 0) << run.output;
  EXPECT_TRUE(has(run.output, "1 stream (hal_stream_destroy)")) << run.output;
  EXPECT_TRUE(has(run.output, "1 device allocation, 4096 bytes in all, on vulkan:0")) << run.output;
  const HelperRun clean = run_helper("clean vulkan:0", "warn");
  ASSERT_EQ(clean.exit_status, 0) << clean.output;
  EXPECT_FALSE(has(clean.output, "leak report")) << clean.output;
#endif
}

// The counts behind the report, in this process (the double's devices; other tests in the
// process may hold objects, so only differences are checked).
class LiveCountsTest : public DoubleTest {};

TEST_F(LiveCountsTest, FollowEveryCreateAndRelease) {
  const hal::LiveCounts before = hal::count_live(hal::registry());
  hal_stream own_stream = nullptr;
  hal_event own_event = nullptr;
  hal_deviceptr memory = 0;
  void* host = nullptr;
  ASSERT_OK(hal_stream_create(gpu, &own_stream));
  ASSERT_OK(hal_event_create(gpu, &own_event));
  ASSERT_OK(hal_mem_alloc(gpu, 1000, &memory));
  ASSERT_OK(hal_host_alloc(cpu, 24, &host));
  const std::vector<uint8_t> blob = spirv_blob(901);
  declare_module(blob, "first(ptr); second(u32)");
  hal_module module = nullptr;
  hal_function function = nullptr;
  ASSERT_OK(hal_module_load(gpu, blob.data(), blob.size(), nullptr, &module));
  ASSERT_OK(hal_module_get_function(module, "first", &function));
  ASSERT_OK(hal_module_get_function(module, "second", &function));
  ASSERT_OK(hal_module_get_function(module, "first", &function));  // the same handle again
  hal::LiveCounts during = hal::count_live(hal::registry());
  EXPECT_EQ(during.streams, before.streams + 1);
  EXPECT_EQ(during.events, before.events + 1);
  EXPECT_EQ(during.device_allocations, before.device_allocations + 1);
  EXPECT_EQ(during.device_bytes, before.device_bytes + 1000);
  EXPECT_EQ(during.host_allocations, before.host_allocations + 1);
  EXPECT_EQ(during.host_bytes, before.host_bytes + 24);
  EXPECT_EQ(during.modules, before.modules + 1);
  EXPECT_EQ(during.functions, before.functions + 2);
  EXPECT_EQ(during.devices, before.devices);

  ASSERT_OK(hal_stream_destroy(own_stream));
  ASSERT_OK(hal_event_destroy(own_event));
  ASSERT_OK(hal_mem_free(gpu, memory));
  ASSERT_OK(hal_host_free(cpu, host));
  ASSERT_OK(hal_module_unload(module));
  // A failed release changes nothing.
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_stream_destroy(own_stream));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_free(gpu, memory));
  const hal::LiveCounts after = hal::count_live(hal::registry());
  EXPECT_EQ(after.streams, before.streams);
  EXPECT_EQ(after.events, before.events);
  EXPECT_EQ(after.device_allocations, before.device_allocations);
  EXPECT_EQ(after.device_bytes, before.device_bytes);
  EXPECT_EQ(after.host_allocations, before.host_allocations);
  EXPECT_EQ(after.host_bytes, before.host_bytes);
  EXPECT_EQ(after.modules, before.modules);
  EXPECT_EQ(after.functions, before.functions);
}

TEST(DescribeLeaks, IsEmptyWhenOnlyDevicesAreLive) {
  hal::LiveCounts counts;
  counts.devices = 2;
  EXPECT_TRUE(hal::describe_leaks(counts).empty());
}

TEST(DescribeLeaks, NamesEachKindWithItsReleaseCall) {
  hal::LiveCounts counts;
  counts.streams = 2;
  counts.events = 1;
  counts.modules = 1;
  counts.functions = 3;
  counts.memory.push_back({"double:1 (Double GPU)", 2, 300, 1, 8});
  const std::vector<std::string> lines = hal::describe_leaks(counts);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "2 streams (hal_stream_destroy)");
  EXPECT_EQ(lines[1], "1 event (hal_event_destroy)");
  EXPECT_EQ(lines[2], "1 module, with 3 function handles (hal_module_unload)");
  EXPECT_EQ(lines[3],
            "2 device allocations, 300 bytes in all, on double:1 (Double GPU) (hal_mem_free)");
  EXPECT_EQ(lines[4],
            "1 host allocation, 8 bytes in all, on double:1 (Double GPU) (hal_host_free)");
}

}  // namespace
}  // namespace hal_test
