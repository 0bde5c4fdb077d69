// HAL_PTX_CPU_DEVICES=3 (set by the test's environment): three identical devices with their own
// contexts, distinct identities, one shared memory budget; and hal sees all three.
#include "driver_fixture.h"

#include <hal/hal.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace ptx_cpu_test {
namespace {

constexpr int kDevices = 3;

class MultiDeviceTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    for (int i = 0; i < kDevices; ++i) {
      ASSERT_OK(cu().cuDevicePrimaryCtxRetain(&contexts_[i], i));
    }
  }
  void TearDown() override {
    for (int i = 0; i < kDevices; ++i) cu().cuDevicePrimaryCtxRelease(i);
    cu().cuCtxSetCurrent(primary_context());
  }
  CUcontext contexts_[kDevices] = {};
};

TEST_F(MultiDeviceTest, ThreeIdenticalDevicesWithTheirOwnIdentity) {
  int count = 0;
  ASSERT_OK(cu().cuDeviceGetCount(&count));
  ASSERT_EQ(count, kDevices);
  std::set<std::string> uuids;
  std::set<std::string> buses;
  std::set<CUcontext> contexts;
  for (int i = 0; i < kDevices; ++i) {
    char name[128] = {};
    ASSERT_OK(cu().cuDeviceGetName(name, sizeof(name), i));
    EXPECT_STREQ(name, "CPU PTX device (hal)");
    CUuuid uuid{};
    ASSERT_OK(cu().cuDeviceGetUuid(&uuid, i));
    uuids.insert(std::string(uuid.bytes, sizeof(uuid.bytes)));
    char bus[32] = {};
    ASSERT_OK(cu().cuDeviceGetPCIBusId(bus, sizeof(bus), i));
    buses.insert(bus);
    CUdevice found = -1;
    ASSERT_OK(cu().cuDeviceGetByPCIBusId(&found, bus));
    EXPECT_EQ(found, i);
    contexts.insert(contexts_[i]);
    ASSERT_OK(cu().cuCtxSetCurrent(contexts_[i]));
    CUdevice device = -1;
    ASSERT_OK(cu().cuCtxGetDevice(&device));
    EXPECT_EQ(device, i);
  }
  EXPECT_EQ(uuids.size(), 3u);
  EXPECT_EQ(buses.size(), 3u);
  EXPECT_EQ(contexts.size(), 3u);
}

TEST_F(MultiDeviceTest, MemoryBelongsToItsDeviceAndCopiesCrossDevices) {
  CUdeviceptr memory[kDevices] = {};
  for (int i = 0; i < kDevices; ++i) {
    ASSERT_OK(cu().cuCtxSetCurrent(contexts_[i]));
    ASSERT_OK(cu().cuMemAlloc(&memory[i], 64));
    ASSERT_OK(cu().cuMemsetD32(memory[i], 100 + i, 16));
    int ordinal = -1;
    ASSERT_OK(cu().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, memory[i]));
    EXPECT_EQ(ordinal, i);
  }
  // Device memory is one address space: a copy between devices works from either context.
  ASSERT_OK(cu().cuCtxSetCurrent(contexts_[2]));
  ASSERT_OK(cu().cuMemcpyDtoD(memory[2], memory[0], 64));
  uint32_t out = 0;
  ASSERT_OK(cu().cuMemcpyDtoH(&out, memory[2] + 60, 4));
  EXPECT_EQ(out, 100u);
  // One budget for all devices.
  size_t free_before = 0;
  size_t total = 0;
  ASSERT_OK(cu().cuMemGetInfo(&free_before, &total));
  ASSERT_OK(cu().cuCtxSetCurrent(contexts_[1]));
  CUdeviceptr big = 0;
  ASSERT_OK(cu().cuMemAlloc(&big, 1 << 20));
  ASSERT_OK(cu().cuCtxSetCurrent(contexts_[2]));
  size_t free_after = 0;
  ASSERT_OK(cu().cuMemGetInfo(&free_after, &total));
  EXPECT_EQ(free_before - free_after, size_t{1} << 20);
  ASSERT_OK(cu().cuMemFree(big));
  for (int i = 0; i < kDevices; ++i) ASSERT_OK(cu().cuMemFree(memory[i]));
}

TEST_F(MultiDeviceTest, StreamsBelongToTheirContextAndEventsCrossThem) {
  ASSERT_OK(cu().cuCtxSetCurrent(contexts_[1]));
  CUstream stream1 = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream1, CU_STREAM_NON_BLOCKING));
  CUevent event1 = nullptr;
  ASSERT_OK(cu().cuEventCreate(&event1, 0));
  CUdeviceptr memory = 0;
  ASSERT_OK(cu().cuMemAlloc(&memory, 16));
  Gate gate;
  ASSERT_OK(cu().cuLaunchHostFunc(stream1, &Gate::wait, &gate));
  ASSERT_OK(cu().cuEventRecord(event1, stream1));

  ASSERT_OK(cu().cuCtxSetCurrent(contexts_[0]));
  uint32_t word = 0;
  // Work is issued on the current context's streams only.
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuMemcpyHtoDAsync(memory, &word, 4, stream1));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuEventRecord(event1, nullptr));
  // ...but a stream may wait for another device's event.
  CUstream stream0 = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream0, CU_STREAM_NON_BLOCKING));
  ASSERT_OK(cu().cuStreamWaitEvent(stream0, event1, 0));
  Flag ran;
  ASSERT_OK(cu().cuLaunchHostFunc(stream0, &Flag::raise, &ran));
  EXPECT_FALSE(ran.wait_for(std::chrono::milliseconds(50)));
  gate.open();
  ASSERT_OK(cu().cuStreamSynchronize(stream0));
  EXPECT_TRUE(ran.raised());
  EXPECT_OK(cu().cuStreamSynchronize(stream1));  // any context's stream can be waited for
  ASSERT_OK(cu().cuStreamDestroy(stream0));
  ASSERT_OK(cu().cuCtxSetCurrent(contexts_[1]));
  ASSERT_OK(cu().cuStreamDestroy(stream1));
  ASSERT_OK(cu().cuEventDestroy(event1));
  ASSERT_OK(cu().cuMemFree(memory));
}

TEST(PtxCpuMultiDeviceHal, HalSeesEveryDevice) {
  ASSERT_EQ(hal_init(), HAL_SUCCESS) << hal_last_error();
  uint32_t count = 0;
  ASSERT_EQ(hal_device_count(&count), HAL_SUCCESS);
  EXPECT_EQ(count, 3u);
  std::set<std::string> uuids;
  for (uint32_t i = 0; i < 3; ++i) {
    hal_device device = nullptr;
    const std::string selector = "cuda:" + std::to_string(i);
    ASSERT_EQ(hal_device_find(selector.c_str(), &device), HAL_SUCCESS) << hal_last_error();
    hal_device_info info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(hal_device_get_info(device, &info), HAL_SUCCESS);
    EXPECT_EQ(info.backend_index, i);
    uuids.insert(std::string(reinterpret_cast<const char*>(info.uuid), 16));
    hal_deviceptr pointer = 0;
    ASSERT_EQ(hal_mem_alloc(device, 1024, &pointer), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_mem_free(device, pointer), HAL_SUCCESS) << hal_last_error();
  }
  EXPECT_EQ(uuids.size(), 3u);
}

}  // namespace
}  // namespace ptx_cpu_test
