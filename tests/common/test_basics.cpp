// Status names, the version, hal_last_error() per thread, the library and device lists.
#include "test_util.h"

#include "common/api_guard.h"

#include <cstddef>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

namespace hal_test {

extern const bool kDoubleInstalled;

namespace {

TEST(Registry, TestDoubleWasInstalledBeforeFirstUse) {
  EXPECT_TRUE(kDoubleInstalled);
  // Once hal is in use the factories can no longer change.
  ASSERT_OK(hal_init());
  EXPECT_FALSE(hal::set_drivers_for_testing({}));
}

TEST(Status, EveryStatusHasItsOwnName) {
  const struct {
    hal_status status;
    const char* name;
  } kExpected[] = {
      {HAL_SUCCESS, "HAL_SUCCESS"},
      {HAL_ERROR_INVALID_ARGUMENT, "HAL_ERROR_INVALID_ARGUMENT"},
      {HAL_ERROR_INVALID_HANDLE, "HAL_ERROR_INVALID_HANDLE"},
      {HAL_ERROR_NOT_FOUND, "HAL_ERROR_NOT_FOUND"},
      {HAL_ERROR_NOT_SUPPORTED, "HAL_ERROR_NOT_SUPPORTED"},
      {HAL_ERROR_UNAVAILABLE, "HAL_ERROR_UNAVAILABLE"},
      {HAL_ERROR_OUT_OF_MEMORY, "HAL_ERROR_OUT_OF_MEMORY"},
      {HAL_ERROR_OUT_OF_RANGE, "HAL_ERROR_OUT_OF_RANGE"},
      {HAL_ERROR_INVALID_IR, "HAL_ERROR_INVALID_IR"},
      {HAL_ERROR_COMPILE_FAILED, "HAL_ERROR_COMPILE_FAILED"},
      {HAL_ERROR_LAUNCH_FAILED, "HAL_ERROR_LAUNCH_FAILED"},
      {HAL_ERROR_NOT_READY, "HAL_ERROR_NOT_READY"},
      {HAL_ERROR_TIMEOUT, "HAL_ERROR_TIMEOUT"},
      {HAL_ERROR_DEVICE_LOST, "HAL_ERROR_DEVICE_LOST"},
      {HAL_ERROR_INTERNAL, "HAL_ERROR_INTERNAL"},
  };
  for (const auto& e : kExpected) {
    ASSERT_NE(hal_status_string(e.status), nullptr);
    EXPECT_STREQ(hal_status_string(e.status), e.name) << static_cast<int>(e.status);
  }
  // The table above covers every value from 0 to the last status.
  EXPECT_EQ(static_cast<int>(HAL_ERROR_INTERNAL) + 1, static_cast<int>(std::size(kExpected)));
}

TEST(Status, UnknownValuesHaveTheUnknownName) {
  for (int value : {15, 16, 100, -1, 0x7fffffff}) {
    ASSERT_NE(hal_status_string(static_cast<hal_status>(value)), nullptr);
    EXPECT_STREQ(hal_status_string(static_cast<hal_status>(value)), "HAL_STATUS_UNKNOWN") << value;
  }
}

TEST(Version, LibraryMatchesHeader) {
  EXPECT_EQ(hal_version(), HAL_VERSION);
  EXPECT_EQ(HAL_VERSION, HAL_MAKE_VERSION(HAL_VERSION_MAJOR, HAL_VERSION_MINOR, HAL_VERSION_PATCH));
  EXPECT_EQ(HAL_MAKE_VERSION(1, 2, 3), 0x00010203u);
  EXPECT_EQ(hal_version() >> 16, static_cast<uint32_t>(HAL_VERSION_MAJOR));
  EXPECT_EQ((hal_version() >> 8) & 0xff, static_cast<uint32_t>(HAL_VERSION_MINOR));
  EXPECT_EQ(hal_version() & 0xff, static_cast<uint32_t>(HAL_VERSION_PATCH));
}

TEST(LastError, EmptyOnAThreadThatSawNoFailure) {
  std::string seen = "not run";
  std::thread([&] { seen = hal_last_error(); }).join();
  EXPECT_EQ(seen, "");
}

TEST(LastError, IsPerThread) {
  hal_device gpu = nullptr;
  ASSERT_OK(hal_device_get(0, &gpu));
  uint32_t count = 0;
  ASSERT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_count(nullptr));
  const std::string mine = hal_last_error();
  ASSERT_TRUE(starts_with(mine, "hal_device_count: ")) << mine;

  std::string other_before;
  std::string other_after;
  hal_status other_status = HAL_SUCCESS;
  std::thread([&] {
    other_before = hal_last_error();
    hal_deviceptr ptr = 0;
    other_status = hal_mem_alloc(gpu, 0, &ptr);
    other_after = hal_last_error();
  }).join();
  EXPECT_EQ(other_before, "") << "a failure on one thread leaked into another";
  EXPECT_EQ(other_status, HAL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(starts_with(other_after, "hal_mem_alloc: ")) << other_after;
  EXPECT_NE(other_after.find("size is 0"), std::string::npos) << other_after;
  // The other thread's failure did not replace this thread's text.
  EXPECT_EQ(std::string(hal_last_error()), mine);
  EXPECT_OK(hal_device_count(&count));
}

TEST(LastError, NamesTheCallAndTheCause) {
  hal_device gpu = nullptr;
  ASSERT_OK(hal_device_get(0, &gpu));
  hal_deviceptr ptr = 0;
  ASSERT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_alloc(gpu, 16, nullptr));
  EXPECT_TRUE(LastErrorIs("hal_mem_alloc", {"ptr is NULL"}));
  ASSERT_HAL(HAL_ERROR_INVALID_HANDLE, hal_mem_alloc(nullptr, 16, &ptr));
  EXPECT_TRUE(LastErrorIs("hal_mem_alloc", {"device handle is NULL"}));
  ASSERT_HAL(HAL_ERROR_NOT_FOUND, hal_device_get(1000, &gpu));
  EXPECT_TRUE(LastErrorIs("hal_device_get", {"1000", "out of range"}));
}

TEST(LastError, SuccessLeavesItUnchanged) {
  ASSERT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_backend_count(nullptr));
  const std::string before = hal_last_error();
  uint32_t count = 0;
  hal_device device = nullptr;
  EXPECT_OK(hal_backend_count(&count));
  EXPECT_OK(hal_device_get(0, &device));
  EXPECT_OK(hal_init());
  EXPECT_EQ(std::string(hal_last_error()), before);
}

TEST(Library, InitIsIdempotent) {
  EXPECT_OK(hal_init());
  EXPECT_OK(hal_init());
  std::thread([] { EXPECT_OK(hal_init()); }).join();
}

TEST(Library, BackendListHasTheDouble) {
  uint32_t count = 0;
  ASSERT_OK(hal_backend_count(&count));
  ASSERT_EQ(count, 1u);
  hal_backend_info info{};
  info.struct_size = sizeof(info);
  ASSERT_OK(hal_backend_get_info(0, &info));
  EXPECT_STREQ(info.name, "double");
  EXPECT_EQ(info.backend, HAL_BACKEND_UNKNOWN);
  EXPECT_EQ(info.available, 1u);
  EXPECT_EQ(info.device_count, 2u);
  EXPECT_STREQ(info.reason, "");
  EXPECT_EQ(info.struct_size, sizeof(info));

  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_backend_get_info(1, &info));
  EXPECT_TRUE(LastErrorIs("hal_backend_get_info", {"backend index 1"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_backend_get_info(0, nullptr));
  EXPECT_TRUE(LastErrorIs("hal_backend_get_info", {"info is NULL"}));
  hal_backend_info small{};
  small.struct_size = offsetof(hal_backend_info, module) - 1;
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_backend_get_info(0, &small));
  EXPECT_TRUE(LastErrorIs("hal_backend_get_info", {"struct_size", "sizeof(hal_backend_info)"}));
  EXPECT_EQ(small.name[0], '\0') << "output written on failure";
  // A program built against 0.3 passes the struct without |module| and gets the rest.
  hal_backend_info older{};
  std::memset(older.module, 'x', sizeof(older.module));
  older.struct_size = offsetof(hal_backend_info, module);
  ASSERT_OK(hal_backend_get_info(0, &older));
  EXPECT_STREQ(older.name, info.name);
  EXPECT_EQ(older.module[0], 'x') << "wrote past the caller's struct_size";
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_backend_count(nullptr));
}

TEST(Devices, GpusComeBeforeCpuDevices) {
  uint32_t count = 0;
  ASSERT_OK(hal_device_count(&count));
  ASSERT_EQ(count, 2u);
  hal_device first = nullptr;
  hal_device second = nullptr;
  ASSERT_OK(hal_device_get(0, &first));
  ASSERT_OK(hal_device_get(1, &second));
  EXPECT_NE(first, second);
  hal_device_info a{};
  hal_device_info b{};
  a.struct_size = sizeof(a);
  b.struct_size = sizeof(b);
  ASSERT_OK(hal_device_get_info(first, &a));
  ASSERT_OK(hal_device_get_info(second, &b));
  // The backend lists its CPU device first; the runtime puts the GPU first.
  EXPECT_STREQ(a.name, "Double GPU (test double)");
  EXPECT_EQ(a.is_cpu, 0u);
  EXPECT_EQ(a.global_index, 0u);
  EXPECT_EQ(a.backend_index, 1u);
  EXPECT_STREQ(b.name, "Double CPU (test double)");
  EXPECT_EQ(b.is_cpu, 1u);
  EXPECT_EQ(b.global_index, 1u);
  EXPECT_EQ(b.backend_index, 0u);
  EXPECT_EQ(a.backend, HAL_BACKEND_UNKNOWN);
  EXPECT_EQ(a.struct_size, sizeof(a));
  EXPECT_EQ(a.ir_mask, static_cast<uint32_t>(HAL_IR_SPIRV | HAL_IR_PTX));
  EXPECT_EQ(a.pointer_alignment, 16u);
  EXPECT_EQ(a.max_threads_per_block, 256u);

  // The same handle every time.
  hal_device again = nullptr;
  ASSERT_OK(hal_device_get(0, &again));
  EXPECT_EQ(again, first);
}

TEST(Devices, GetChecksItsArguments) {
  hal_device device = reinterpret_cast<hal_device>(0x5a5a0);
  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_device_get(2, &device));
  EXPECT_TRUE(LastErrorIs("hal_device_get", {"there are 2 device(s)"}));
  EXPECT_EQ(device, reinterpret_cast<hal_device>(0x5a5a0)) << "output written on failure";
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_get(0, nullptr));
  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_device_get(UINT32_MAX, &device));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_count(nullptr));
}

TEST(Devices, InfoHonoursStructSize) {
  hal_device gpu = nullptr;
  ASSERT_OK(hal_device_get(0, &gpu));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_get_info(gpu, nullptr));
  EXPECT_TRUE(LastErrorIs("hal_device_get_info", {"info is NULL"}));

  hal_device_info zero{};
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_get_info(gpu, &zero));
  EXPECT_TRUE(LastErrorIs("hal_device_get_info", {"struct_size is 0", "hal_device_info"}));
  // Below the first published struct (0.1, which ended before driver_info): refused.
  const size_t v0_1 = offsetof(hal_device_info, driver_info);
  hal_device_info small{};
  small.struct_size = static_cast<uint32_t>(v0_1 - 8);
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_get_info(gpu, &small));
  EXPECT_EQ(small.name[0], '\0') << "output written on failure";

  // A program built against 0.1 gets the fields it knows, and nothing past them.
  hal_device_info older;
  std::memset(&older, 0xCD, sizeof(older));
  older.struct_size = static_cast<uint32_t>(v0_1);
  ASSERT_OK(hal_device_get_info(gpu, &older));
  EXPECT_STREQ(older.name, "Double GPU (test double)");
  EXPECT_EQ(older.driver_info[0], static_cast<char>(0xCD)) << "wrote past the 0.1 struct";
  hal_device_info current{};
  current.struct_size = sizeof(current);
  ASSERT_OK(hal_device_get_info(gpu, &current));
  EXPECT_STREQ(current.driver_info, "test double build");

  // A newer program's larger struct: the library writes only what it knows and keeps the
  // caller's struct_size.
  struct Newer {
    hal_device_info info;
    uint8_t future[32];
  } newer;
  std::memset(&newer, 0xAB, sizeof(newer));
  newer.info.struct_size = sizeof(newer);
  ASSERT_OK(hal_device_get_info(gpu, &newer.info));
  EXPECT_EQ(newer.info.struct_size, sizeof(newer));
  EXPECT_STREQ(newer.info.name, "Double GPU (test double)");
  for (uint8_t byte : newer.future) {
    ASSERT_EQ(byte, 0xAB) << "wrote past sizeof(hal_device_info)";
  }
}

TEST(Devices, SynchronizeReachesTheBackend) {
  hal_device gpu = nullptr;
  ASSERT_OK(hal_device_get(0, &gpu));
  DoubleDevice* d = double_device(gpu);
  ASSERT_NE(d, nullptr);
  const uint64_t before = d->calls();
  EXPECT_OK(hal_device_synchronize(gpu));
  EXPECT_EQ(d->calls(), before + 1);
  d->fail_next(HAL_ERROR_LAUNCH_FAILED, "kernel fault injected");
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_device_synchronize(gpu));
  EXPECT_TRUE(LastErrorIs("hal_device_synchronize", {"kernel fault injected"}));
  // LAUNCH_FAILED is not a lost device.
  EXPECT_OK(hal_device_synchronize(gpu));
}

TEST(Internal, ExceptionsBecomeInternalErrors) {
  // The ABI boundary turns exceptions into statuses with a message.
  EXPECT_EQ(hal::guarded("hal_test_call", []() -> hal_status { throw std::runtime_error("boom"); }),
            HAL_ERROR_INTERNAL);
  EXPECT_TRUE(LastErrorIs("hal_test_call", {"boom"}));
  EXPECT_EQ(hal::guarded("hal_test_call", []() -> hal_status { throw std::bad_alloc(); }),
            HAL_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(LastErrorIs("hal_test_call", {"host memory"}));
  EXPECT_EQ(hal::guarded("hal_test_call", []() -> hal_status { throw 42; }), HAL_ERROR_INTERNAL);
  // A failure without a recorded cause still names the status.
  EXPECT_EQ(hal::guarded("hal_test_call", []() -> hal_status { return HAL_ERROR_TIMEOUT; }),
            HAL_ERROR_TIMEOUT);
  EXPECT_EQ(std::string(hal_last_error()), "hal_test_call: failed with HAL_ERROR_TIMEOUT");
}

}  // namespace
}  // namespace hal_test
