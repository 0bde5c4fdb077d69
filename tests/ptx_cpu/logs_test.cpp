// The driver log (CUDA 12.9's cuLogs* API): every failure says why there.
#include "driver_fixture.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace ptx_cpu_test {
namespace {

struct Captured {
  std::mutex mutex;
  std::vector<std::pair<CUlogLevel, std::string>> messages;

  static void CUDA_CB callback(void* data, CUlogLevel level, char* message, size_t length) {
    auto* self = static_cast<Captured*>(data);
    std::lock_guard<std::mutex> lock(self->mutex);
    self->messages.emplace_back(level, std::string(message, length));
  }
};

TEST_F(DriverTest, FailuresAreLoggedToCallbacksAndDumps) {
  Captured captured;
  CUlogsCallbackHandle handle = nullptr;
  ASSERT_OK(cu().cuLogsRegisterCallback(&Captured::callback, &captured, &handle));
  CUlogIterator iterator = 0;
  ASSERT_OK(cu().cuLogsCurrent(&iterator, 0));
  CUdeviceptr pointer = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemAlloc(&pointer, 0));
  ASSERT_OK(cu().cuLogsUnregisterCallback(handle));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemAlloc(&pointer, 0));  // not seen by it any more

  ASSERT_EQ(captured.messages.size(), 1u);
  EXPECT_EQ(captured.messages[0].first, CU_LOG_LEVEL_ERROR);
  const std::string& message = captured.messages[0].second;
  EXPECT_NE(message.find("cuMemAlloc"), std::string::npos) << message;
  EXPECT_NE(message.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << message;
  EXPECT_NE(message.find("bytesize is 0"), std::string::npos) << message;

  char buffer[4096];
  size_t size = sizeof(buffer);
  ASSERT_OK(cu().cuLogsDumpToMemory(&iterator, buffer, &size, 0));
  EXPECT_EQ(size, std::strlen(buffer));
  EXPECT_EQ(std::string(buffer, size), message + "\n" + message);  // both failures, in order
  size = sizeof(buffer);
  ASSERT_OK(cu().cuLogsDumpToMemory(&iterator, buffer, &size, 0));  // the iterator advanced
  EXPECT_EQ(size, 0u);
  EXPECT_STREQ(buffer, "");
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuLogsUnregisterCallback(handle));  // gone already
}

TEST_F(DriverTest, SmallDumpBuffersKeepTheNewestMessages) {
  CUlogIterator iterator = 0;
  ASSERT_OK(cu().cuLogsCurrent(&iterator, 0));
  CUdeviceptr pointer = 0;
  for (int i = 0; i < 3; ++i) cu().cuMemAlloc(&pointer, 0);
  const std::string line = "cuMemAlloc_v2: CUDA_ERROR_INVALID_VALUE: bytesize is 0";
  char buffer[512];
  // Not even the newest message fits: nothing is written and the iterator stays.
  size_t size = 10;
  CUlogIterator kept = iterator;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuLogsDumpToMemory(&kept, buffer, &size, 0));
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(kept, iterator);
  // Room for one: a line says messages were dropped, then the newest one.
  size = 160;
  ASSERT_OK(cu().cuLogsDumpToMemory(&iterator, buffer, &size, 0));
  const std::string text(buffer, size);
  EXPECT_NE(text.find("dropped"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - line.size()), line) << text;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuLogsDumpToMemory(nullptr, buffer, nullptr, 0));
  size = sizeof(buffer);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuLogsDumpToMemory(nullptr, buffer, &size, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuLogsCurrent(&iterator, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuLogsCurrent(nullptr, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuLogsRegisterCallback(nullptr, nullptr, nullptr));
}

TEST_F(DriverTest, DumpToFile) {
  CUlogIterator iterator = 0;
  ASSERT_OK(cu().cuLogsCurrent(&iterator, 0));
  CUstream stream = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuStreamCreate(&stream, 77));
  char path[] = "/tmp/ptx_cpu_logs_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_OK(cu().cuLogsDumpToFile(&iterator, path, 0));
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::remove(path);
  EXPECT_NE(text.str().find("cuStreamCreate: CUDA_ERROR_INVALID_VALUE"), std::string::npos)
      << text.str();
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuLogsDumpToFile(nullptr, "/nonexistent-dir/for/sure/log.txt", 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuLogsDumpToFile(nullptr, nullptr, 0));
}

}  // namespace
}  // namespace ptx_cpu_test
