// hal's public C API on the CPU PTX driver: the CUDA backend opens libhal_ptx_cpu.so through
// HAL_CUDA_LIBRARY (set by the test's environment, with HAL_BACKENDS=cuda) as it would libcuda.
#include "hal_assertions.h"

#include <gtest/gtest.h>
#include <hal/hal.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

class PtxCpuHalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(hal_init(), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_device_find("cuda:0", &device_), HAL_SUCCESS) << hal_last_error();
  }
  hal_device device_ = nullptr;
};

TEST_F(PtxCpuHalTest, BackendIsAvailableWithOneDevice) {
  hal_backend_info backend{};
  backend.struct_size = sizeof(backend);
  ASSERT_EQ(hal_backend_get_info(0, &backend), HAL_SUCCESS);
  EXPECT_STREQ(backend.name, "cuda");
  EXPECT_EQ(backend.available, 1u) << backend.reason;
  EXPECT_EQ(backend.device_count, 1u);
  uint32_t count = 0;
  ASSERT_EQ(hal_device_count(&count), HAL_SUCCESS);
  EXPECT_EQ(count, 1u);
  hal_device by_name = nullptr;
  ASSERT_EQ(hal_device_find("CPU PTX", &by_name), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(by_name, device_);
}

// What hal-info shows.
TEST_F(PtxCpuHalTest, DeviceInfo) {
  hal_device_info info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal_device_get_info(device_, &info), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(info.backend, HAL_BACKEND_CUDA);
  EXPECT_STREQ(info.name, "CPU PTX device (hal)");
  EXPECT_NE(std::string(info.driver_name).find("CUDA 13.0"), std::string::npos) << info.driver_name;
  EXPECT_EQ(info.driver_version, 13000u);
  EXPECT_EQ(info.compute_capability_major, 8u);
  EXPECT_EQ(info.compute_capability_minor, 0u);
  EXPECT_EQ(info.max_threads_per_block, 1024u);
  EXPECT_EQ(info.max_block_dim[2], 64u);
  EXPECT_EQ(info.max_grid_dim[0], 2147483647u);
  EXPECT_EQ(info.max_shared_memory_per_block, 163u * 1024);
  EXPECT_EQ(info.subgroup_size, 32u);
  EXPECT_GE(info.compute_units, 1u);
  EXPECT_EQ(info.unified_memory, 1u);
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_NE(info.ir_mask & HAL_IR_PTX, 0u);
  EXPECT_EQ(std::memcmp(info.uuid, "hal-ptx-cpu-", 12), 0);
}

TEST_F(PtxCpuHalTest, MemoryStreamsAndEvents) {
  constexpr size_t kCount = 4096;
  hal_deviceptr a = 0;
  hal_deviceptr b = 0;
  ASSERT_EQ(hal_mem_alloc(device_, kCount * 4, &a), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_mem_alloc(device_, kCount * 4, &b), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(a % 256, 0u);
  hal_stream stream = nullptr;
  ASSERT_EQ(hal_stream_create(device_, &stream), HAL_SUCCESS) << hal_last_error();
  hal_event start = nullptr;
  hal_event end = nullptr;
  ASSERT_EQ(hal_event_create(device_, &start), HAL_SUCCESS);
  ASSERT_EQ(hal_event_create(device_, &end), HAL_SUCCESS);

  std::vector<uint32_t> in(kCount);
  std::iota(in.begin(), in.end(), 0u);
  void* pinned = nullptr;
  ASSERT_EQ(hal_host_alloc(device_, kCount * 4, &pinned), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_event_record(start, stream), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_memcpy_htod(stream, a, in.data(), kCount * 4), HAL_SUCCESS) << hal_last_error();
  in.assign(kCount, 0);  // the source may be reused at once
  ASSERT_EQ(hal_memcpy_dtod(stream, b, a, kCount * 4), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_memset_d32(stream, b, 0xabcdef01u, 2), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_memset_d8(stream, b + 8, 0x7f, 4), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_memcpy_dtoh(stream, pinned, b, kCount * 4), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_event_record(end, stream), HAL_SUCCESS);
  ASSERT_EQ(hal_stream_synchronize(stream), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_stream_query(stream), HAL_SUCCESS);
  EXPECT_EQ(hal_event_query(end), HAL_SUCCESS);
  const auto* out = static_cast<const uint32_t*>(pinned);
  EXPECT_EQ(out[0], 0xabcdef01u);
  EXPECT_EQ(out[1], 0xabcdef01u);
  EXPECT_EQ(out[2], 0x7f7f7f7fu);
  for (uint32_t i = 3; i < kCount; ++i) ASSERT_EQ(out[i], i) << i;
  float ms = -1;
  EXPECT_EQ(hal_event_elapsed_ms(start, end, &ms), HAL_SUCCESS) << hal_last_error();
  EXPECT_GE(ms, 0.0f);

  // A range past an allocation is refused (by hal before the driver, here).
  EXPECT_EQ(hal_memcpy_htod(stream, a + kCount * 4 - 4, in.data(), 8), HAL_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(hal_device_synchronize(device_), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_event_destroy(start), HAL_SUCCESS);
  EXPECT_EQ(hal_event_destroy(end), HAL_SUCCESS);
  EXPECT_EQ(hal_stream_destroy(stream), HAL_SUCCESS);
  EXPECT_EQ(hal_host_free(device_, pinned), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_mem_free(device_, a), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_mem_free(device_, b), HAL_SUCCESS) << hal_last_error();
}

// More than the device has: refused, and the device keeps working.
TEST_F(PtxCpuHalTest, OversizedAllocationIsOutOfMemory) {
  hal_device_info info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal_device_get_info(device_, &info), HAL_SUCCESS);
  hal_deviceptr pointer = 0;
  EXPECT_EQ(hal_mem_alloc(device_, info.total_memory + 1, &pointer), HAL_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(hal_mem_alloc(device_, 256, &pointer), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_mem_free(device_, pointer), HAL_SUCCESS);
}

// A cubin is machine code for a GPU: hal reports the driver's reason.
TEST_F(PtxCpuHalTest, CubinIsNotSupported) {
  std::vector<uint8_t> elf(256, 0);
  const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x41, 8};
  std::memcpy(elf.data(), ident, sizeof(ident));
  elf[16] = 2;
  elf[18] = 190;
  elf[20] = 1;
  const uint32_t flags = 0x06005004u;  // sm_80
  std::memcpy(elf.data() + 48, &flags, 4);
  hal_module_options options{};
  options.struct_size = sizeof(options);
  options.ir = HAL_IR_CUBIN;
  hal_module module = nullptr;
  const hal_status status = hal_module_load(device_, elf.data(), elf.size(), &options, &module);
  EXPECT_NE(status, HAL_SUCCESS);
  EXPECT_EQ(module, nullptr);
  EXPECT_TRUE(hal_testing::LastErrorHas(
      {"CUDA_ERROR_NO_BINARY_FOR_GPU", "cannot run on the CPU PTX device"}));
}

}  // namespace
