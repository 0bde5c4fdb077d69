// The trace file itself (src/common/trace.cpp), with HAL_TRACE set by ctest to a name holding
// "%p": names are escaped, failed calls carry their status, the file is a complete JSON array
// once closed, and nothing is written after that.
#include <gtest/gtest.h>
#include <hal/hal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/trace.h"

namespace {

std::string expected_path() {
  const char* pattern = std::getenv("HAL_TRACE");
  if (pattern == nullptr) return "";
  std::string path = pattern;
  const size_t at = path.find("%p");
  if (at != std::string::npos) path.replace(at, 2, std::to_string(getpid()));
  return path;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(TraceFile, HoldsEscapedSpansAndIsClosedOnce) {
  const std::string path = expected_path();
  ASSERT_FALSE(path.empty()) << "run this test through ctest, which sets HAL_TRACE";
  ASSERT_TRUE(hal::trace::on()) << "HAL_TRACE=" << path << " did not turn the trace on";

  // A public call that fails: its span carries the status.
  EXPECT_EQ(hal_device_count(nullptr), HAL_ERROR_INVALID_ARGUMENT);

  hal_device_info device{};
  device.global_index = 7;
  std::snprintf(device.name, sizeof device.name, "dev \"seven\"");
  const uint32_t row = hal::trace::stream_row(device);
  const uint32_t grid[3] = {2, 3, 4};
  const uint32_t block[3] = {64, 1, 1};
  hal::trace::Op op = hal::trace::Op::kernel_launch("k\"quote\\slash\nline", grid, block, 128);
  const uint64_t t0 = hal::trace::now_ns();
  hal::trace::device_span(device, row, op, t0, t0 + 5000);
  hal::trace::Op copy = hal::trace::Op::transfer(hal::trace::Op::Kind::kCopyDeviceToHost, 4096);
  copy.on_host = true;
  hal::trace::device_span(device, row, copy, t0 + 6000, t0 + 7000);

  hal::trace::close_for_testing();
  EXPECT_FALSE(hal::trace::on());
  const std::string text = read(path);
  hal::trace::device_span(device, row, op, t0, t0 + 1);  // after closing: dropped
  EXPECT_EQ(read(path), text);

  EXPECT_EQ(text.rfind("[\n", 0), 0u) << text.substr(0, 40);
  EXPECT_EQ(text.substr(text.size() - 3), "\n]\n");
  EXPECT_NE(text.find(R"("name":"hal_device_count","pid":1)"), std::string::npos);
  EXPECT_NE(text.find(R"("args":{"status":"HAL_ERROR_INVALID_ARGUMENT"})"), std::string::npos);
  EXPECT_NE(text.find(R"j("name":"device 7: dev \"seven\" (unknown:0)")j"), std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("name":"stream 1")"), std::string::npos);
  EXPECT_NE(text.find(R"("cat":"kernel","name":"k\"quote\\slash\u000aline","pid":9,)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("grid":[2,3,4],"block":[64,1,1],"shared_bytes":128)"), std::string::npos);
  EXPECT_NE(text.find(R"("dur":5.000)"), std::string::npos);
  EXPECT_NE(text.find(R"("cat":"copy","name":"copy device to host")"), std::string::npos);
  EXPECT_NE(text.find(R"("args":{"bytes":4096,"on_host":true})"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
