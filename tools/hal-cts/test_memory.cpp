// Area Memory: allocation sizes (0 refused, 1, odd, large), an allocation beyond the device's
// memory fails with HAL_ERROR_OUT_OF_MEMORY and the device keeps working, frees (double, interior,
// never allocated) and reuse, and pinned host memory.
#include <algorithm>
#include <set>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

class Memory : public DeviceTest {
 protected:
  // Writes a pattern over all of [ptr, ptr + bytes) and reads it back byte for byte.
  void round_trip(hal_deviceptr ptr, size_t bytes, uint32_t seed) {
    const std::vector<uint8_t> in = pattern(bytes, seed);
    std::vector<uint8_t> out(bytes, 0);
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, ptr, in.data(), bytes));
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, out.data(), ptr, bytes));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    EXPECT_EQ(first_difference(in.data(), out.data(), bytes), -1) << bytes << " bytes";
  }
};

TEST_P(Memory, SizeZeroRefused) {
  hal_deviceptr p = 12345;
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_mem_alloc", hal_mem_alloc(device(), 0, &p));
  EXPECT_EQ(p, 12345u) << "an output is left untouched on failure";
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_mem_alloc",
                    hal_mem_alloc(device(), 16, nullptr));
}

TEST_P(Memory, SmallAndOddSizes) {
  const size_t sizes[] = {1, 2, 3, 5, 255, 257, 4097, 65537, (1u << 20) + 7};
  std::set<hal_deviceptr> bases;
  std::vector<hal_deviceptr> live;
  for (size_t size : sizes) {
    SCOPED_TRACE("size " + std::to_string(size));
    hal_deviceptr p = 0;
    CTS_ASSERT_OK(hal_mem_alloc(device(), size, &p));
    live.push_back(p);
    EXPECT_NE(p, 0u) << "0 is never an allocation";
    EXPECT_EQ(p % 256, 0u) << "allocations are aligned to at least 256 bytes";
    EXPECT_TRUE(bases.insert(p).second) << "two live allocations share a base address";
    round_trip(p, size, static_cast<uint32_t>(size));
  }
  // No two live allocations overlap: each keeps its own contents.
  for (size_t i = 0; i < live.size(); ++i) {
    std::vector<uint8_t> head(1);
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, head.data(), live[i], 1));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    EXPECT_EQ(head[0], pattern(sizes[i], static_cast<uint32_t>(sizes[i]))[0])
        << "allocation " << i << " was overwritten";
  }
  for (hal_deviceptr p : live) CTS_EXPECT_OK(hal_mem_free(device(), p));
}

TEST_P(Memory, Large) {
  const size_t want = options().quick ? (size_t{32} << 20) : (size_t{512} << 20);
  const size_t size = static_cast<size_t>(std::min<uint64_t>(want, info().max_allocation_size / 2));
  hal_deviceptr p = 0;
  CTS_ASSERT_OK(hal_mem_alloc(device(), size, &p));
  // The first and last pages and one in the middle.
  const size_t page = 4096;
  for (size_t offset : {size_t{0}, size / 2, size - page}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    round_trip(p + offset, page, static_cast<uint32_t>(offset / page));
  }
  CTS_EXPECT_OK(hal_mem_free(device(), p));
}

TEST_P(Memory, BeyondDeviceMemory) {
  hal_deviceptr p = 0;
  const uint64_t over_limit = info().max_allocation_size + 1;
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_MEMORY, "hal_mem_alloc",
                    hal_mem_alloc(device(), static_cast<size_t>(over_limit), &p));
  const uint64_t over_memory = info().total_memory * 2;
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_MEMORY, "hal_mem_alloc",
                    hal_mem_alloc(device(), static_cast<size_t>(over_memory), &p));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_MEMORY, "hal_mem_alloc",
                    hal_mem_alloc(device(), SIZE_MAX - 4095, &p));
  EXPECT_EQ(p, 0u) << "an output is left untouched on failure";
  // The device keeps working: a fresh allocation, a copy and a kernel.
  hal_deviceptr q = 0;
  CTS_ASSERT_OK(hal_mem_alloc(device(), 4096, &q));
  round_trip(q, 4096, 3);
  CTS_EXPECT_OK(hal_mem_free(device(), q));
  expect_device_works("allocations beyond the device's memory");
}

TEST_P(Memory, FreeRules) {
  hal_deviceptr p = 0;
  CTS_ASSERT_OK(hal_mem_alloc(device(), 1024, &p));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_mem_free", hal_mem_free(device(), p + 256));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_mem_free", hal_mem_free(device(), 0));
  CTS_EXPECT_OK(hal_mem_free(device(), p));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_mem_free", hal_mem_free(device(), p));
}

TEST_P(Memory, Reuse) {
  // Many allocations of varied sizes, freed out of order and allocated again; each keeps its
  // own bytes.
  const int rounds = options().quick ? 3 : 10;
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::pair<hal_deviceptr, size_t>> live;
    for (int i = 0; i < 24; ++i) {
      const size_t size = size_t(1 + (i * 7919 + round * 104729) % 200000);
      hal_deviceptr p = 0;
      CTS_ASSERT_OK(hal_mem_alloc(device(), size, &p));
      live.emplace_back(p, size);
    }
    for (size_t i = 0; i < live.size(); i += 2) {
      CTS_ASSERT_OK(hal_mem_free(device(), live[i].first));
      live[i].second = 0;
    }
    for (auto& [p, size] : live) {
      if (size != 0) continue;
      size = 3000 + static_cast<size_t>(round) * 11;
      CTS_ASSERT_OK(hal_mem_alloc(device(), size, &p));
    }
    uint32_t seed = 0;
    for (const auto& [p, size] : live) round_trip(p, size, ++seed + round * 100);
    for (const auto& [p, size] : live) CTS_ASSERT_OK(hal_mem_free(device(), p));
  }
}

TEST_P(Memory, HostAlloc) {
  const size_t bytes = (size_t{1} << 20) + 3;
  void* host = nullptr;
  CTS_ASSERT_OK(hal_host_alloc(device(), bytes, &host));
  ASSERT_NE(host, nullptr);
  const std::vector<uint8_t> in = pattern(bytes, 9);
  std::copy(in.begin(), in.end(), static_cast<uint8_t*>(host));
  Buffer d(device(), bytes);
  ASSERT_TRUE(d.ok()) << d.error();
  CTS_EXPECT_OK(hal_memcpy_htod(stream_, d.ptr, host, bytes));
  std::fill_n(static_cast<uint8_t*>(host), bytes, uint8_t{0});
  CTS_EXPECT_OK(hal_memcpy_dtoh(stream_, host, d.ptr, bytes));
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  EXPECT_EQ(first_difference(in.data(), static_cast<uint8_t*>(host), bytes), -1);
  CTS_EXPECT_OK(hal_host_free(device(), host));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_host_free", hal_host_free(device(), host));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_host_alloc",
                    hal_host_alloc(device(), 0, &host));
}

INSTANTIATE_TEST_SUITE_P(, Memory, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
