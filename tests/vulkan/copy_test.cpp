// Copies and fills: odd sizes and offsets, both on an idle stream (direct host access where
// device memory is mapped) and behind pending work (staged, recorded in stream order); across
// sub-allocation blocks; hal_host_alloc memory; many small allocations.
#include "vk_test_util.h"

#include "vulkan/memory.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <vector>

namespace hal_vk_test {
namespace {

class Copies : public VulkanTest {
 protected:
  // Puts a launch in front of whatever comes next, so the stream is busy and copies must be
  // recorded in order rather than done on the host at once.
  void make_busy() {
    if (busy_fn_ == nullptr) {
      busy_fn_ = function(load("multi"), "add_value");
      busy_buffer_ = upload(std::vector<uint32_t>(16, 0));
    }
    uint32_t one = 1, n = 16;
    void* args[] = {&busy_buffer_, &one, &n};
    hal_launch_config config{{1, 1, 1}, {0, 0, 0}, 0};
    ASSERT_OK(hal_launch(stream_, busy_fn_, &config, args));
  }

  void check_odd_copies(bool busy) {
    const size_t size = 1000;
    hal_deviceptr a = alloc(size), b = alloc(size);
    std::vector<uint8_t> pattern(size);
    for (size_t i = 0; i < size; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + 3);
    std::vector<uint8_t> zeros(size, 0);
    if (busy) make_busy();
    ASSERT_OK(hal_memcpy_htod(stream_, a, zeros.data(), size));
    ASSERT_OK(hal_memcpy_htod(stream_, b, zeros.data(), size));
    // 1 byte at 0, 3 bytes at an odd offset, 517 bytes at another odd offset.
    if (busy) make_busy();
    ASSERT_OK(hal_memcpy_htod(stream_, a, pattern.data(), 1));
    ASSERT_OK(hal_memcpy_htod(stream_, a + 5, pattern.data() + 5, 3));
    ASSERT_OK(hal_memcpy_htod(stream_, a + 101, pattern.data() + 101, 517));
    // Device to device between unaligned offsets, then byte and word fills.
    ASSERT_OK(hal_memcpy_dtod(stream_, b + 13, a + 101, 300));
    ASSERT_OK(hal_memset_d8(stream_, b + 3, 0xAB, 7));
    ASSERT_OK(hal_memset_d8(stream_, b + 401, 0xCD, 1));
    ASSERT_OK(hal_memset_d32(stream_, b + 800, 0x11223344u, 10));
    std::vector<uint8_t> out_a(size, 0xEE), out_b(size, 0xEE), one_byte(1, 0xEE);
    if (busy) make_busy();
    ASSERT_OK(hal_memcpy_dtoh(stream_, out_a.data(), a, size));
    ASSERT_OK(hal_memcpy_dtoh(stream_, out_b.data(), b, size));
    ASSERT_OK(hal_memcpy_dtoh(stream_, one_byte.data(), a + 107, 1));
    ASSERT_OK(hal_stream_synchronize(stream_));

    std::vector<uint8_t> want_a(size, 0);
    want_a[0] = pattern[0];
    for (size_t i = 5; i < 8; ++i) want_a[i] = pattern[i];
    for (size_t i = 101; i < 618; ++i) want_a[i] = pattern[i];
    std::vector<uint8_t> want_b(size, 0);
    for (size_t i = 0; i < 300; ++i) want_b[13 + i] = want_a[101 + i];
    for (size_t i = 3; i < 10; ++i) want_b[i] = 0xAB;
    want_b[401] = 0xCD;
    for (size_t w = 0; w < 10; ++w) {
      const uint32_t v = 0x11223344u;
      std::memcpy(&want_b[800 + 4 * w], &v, 4);
    }
    EXPECT_EQ(out_a, want_a);
    EXPECT_EQ(out_b, want_b);
    EXPECT_EQ(one_byte[0], pattern[107]);
  }

  hal_function busy_fn_ = nullptr;
  hal_deviceptr busy_buffer_ = 0;
};

TEST_F(Copies, OddSizesAndOffsetsOnAnIdleStream) {
  check_odd_copies(false);
}

TEST_F(Copies, OddSizesAndOffsetsBehindPendingWork) {
  check_odd_copies(true);
}

// hal_mem_host_pointer: on a device whose memory is host-visible and coherent (lavapipe) the
// host reads what a kernel wrote, and a kernel reads what the host wrote, across a synchronize.
TEST_F(Copies, HostPointerSeesKernelWritesAndFeedsKernels) {
  const uint32_t n = 16;
  hal_deviceptr d = upload(std::vector<uint32_t>(n, 5));
  void* host = nullptr;
  const hal_status s = hal_mem_host_pointer(device_, d + 4, &host);
  if (!info_.unified_memory) {
    EXPECT_EQ(s, HAL_ERROR_NOT_SUPPORTED);
    GTEST_SKIP() << "device memory is not host-visible here";
  }
  ASSERT_OK(s);
  uint32_t* words = static_cast<uint32_t*>(host) - 1;  // host points at element 1
  EXPECT_EQ(words[0], 5u);
  EXPECT_EQ(words[n - 1], 5u);
  hal_function add = function(load("multi"), "add_value");  // data[i] += value for i < n
  uint32_t value = 3;
  uint32_t count = n;
  void* args[] = {&d, &value, &count};
  hal_launch_config config{{1, 1, 1}, {0, 0, 0}, 0};
  ASSERT_OK(hal_launch(stream_, add, &config, args));
  ASSERT_OK(hal_stream_synchronize(stream_));
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(words[i], 8u) << i;
  words[2] = 100;  // the kernel reads what the host wrote
  ASSERT_OK(hal_launch(stream_, add, &config, args));
  std::vector<uint32_t> back(n);
  ASSERT_OK(hal_memcpy_dtoh(stream_, back.data(), d, n * 4));
  ASSERT_OK(hal_stream_synchronize(stream_));
  EXPECT_EQ(back[2], 103u);
  EXPECT_EQ(back[3], 11u);
}

TEST_F(Copies, HostSourceMayBeReusedAtOnce) {
  hal_deviceptr d = alloc(256);
  std::vector<uint32_t> values(64);
  make_busy();
  for (uint32_t round = 0; round < 4; ++round) {
    std::iota(values.begin(), values.end(), round * 100);
    ASSERT_OK(hal_memcpy_htod(stream_, d + round * 64, values.data(), 64));
    std::fill(values.begin(), values.end(), 0xDEADBEEFu);  // overwritten before the copy ran
  }
  std::vector<uint32_t> out = download<uint32_t>(d, 64);
  for (uint32_t round = 0; round < 4; ++round) {
    for (uint32_t i = 0; i < 16; ++i) ASSERT_EQ(out[round * 16 + i], round * 100 + i);
  }
}

TEST_F(Copies, LargeCopiesUseStagingBeyondAChunk) {
  const size_t n = 3 * (1u << 20) / 4 + 17;  // a little over 3 MiB
  std::vector<uint32_t> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<uint32_t>(i * 2654435761u);
  hal_deviceptr d = alloc(n * 4);
  make_busy();
  ASSERT_OK(hal_memcpy_htod(stream_, d, values.data(), n * 4));
  make_busy();
  std::vector<uint32_t> out(n, 0);
  ASSERT_OK(hal_memcpy_dtoh(stream_, out.data(), d, n * 4));
  ASSERT_OK(hal_stream_synchronize(stream_));
  EXPECT_EQ(out, values);
}

TEST_F(Copies, AcrossSubAllocationBlocks) {
  hal::vulkan::VulkanDevice* device = backend_device(device_);
  ASSERT_NE(device, nullptr);
  const uint64_t block = device->memory().block_size();
  // Each allocation takes a bit over a quarter of a block, so the fourth needs a second block.
  const size_t size = block / 4 + 4096;
  std::vector<hal_deviceptr> ptrs;
  for (int i = 0; i < 4; ++i) ptrs.push_back(alloc(size));
  EXPECT_GE(device->memory().block_count(), 2u);
  std::vector<uint8_t> data(size);
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>((i * 131) >> 3);
  ASSERT_OK(hal_memcpy_htod(stream_, ptrs[0], data.data(), size));
  make_busy();
  ASSERT_OK(hal_memcpy_dtod(stream_, ptrs[3] + 1, ptrs[0] + 3, size - 5));
  std::vector<uint8_t> out(size - 5);
  ASSERT_OK(hal_memcpy_dtoh(stream_, out.data(), ptrs[3] + 1, size - 5));
  ASSERT_OK(hal_stream_synchronize(stream_));
  EXPECT_TRUE(std::equal(out.begin(), out.end(), data.begin() + 3));
}

TEST_F(Copies, HostAllocatedMemory) {
  const size_t n = 4096;
  void* host = nullptr;
  ASSERT_OK(hal_host_alloc(device_, n * 4, &host));
  auto* words = static_cast<uint32_t*>(host);
  for (size_t i = 0; i < n; ++i) words[i] = static_cast<uint32_t>(i ^ 0x5A5A);
  hal_deviceptr d = alloc(n * 4);
  make_busy();
  ASSERT_OK(hal_memcpy_htod(stream_, d, host, n * 4));
  ASSERT_OK(hal_memset_d32(stream_, d, 7, 16));
  make_busy();
  ASSERT_OK(hal_memcpy_dtoh(stream_, words + 8, d, n * 4 - 32));  // into the host buffer itself
  ASSERT_OK(hal_stream_synchronize(stream_));
  for (size_t i = 0; i < 16; ++i) ASSERT_EQ(words[8 + i], 7u) << i;
  for (size_t i = 16; i < n - 8; ++i) ASSERT_EQ(words[8 + i], static_cast<uint32_t>(i ^ 0x5A5A));
  ASSERT_OK(hal_host_free(device_, host));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_host_free(device_, host));
}

TEST_F(Copies, ManySmallAllocations) {
  hal::vulkan::VulkanDevice* device = backend_device(device_);
  ASSERT_NE(device, nullptr);
  const size_t before = device->memory().block_count();
  const int count = 5000;
  std::vector<hal_deviceptr> ptrs(count);
  std::set<hal_deviceptr> distinct;
  for (int i = 0; i < count; ++i) {
    ASSERT_OK(hal_mem_alloc(device_, 24 + (i % 5) * 8, &ptrs[i]));
    ASSERT_NE(ptrs[i], 0u);
    ASSERT_EQ(ptrs[i] % 256, 0u);
    distinct.insert(ptrs[i]);
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(count));
  // 5000 allocations in at most one extra block: far below maxMemoryAllocationCount.
  EXPECT_LE(device->memory().block_count(), before + 1);
  for (int i = 0; i < count; i += 499) {
    const uint32_t v = static_cast<uint32_t>(i) * 3u + 1u;
    ASSERT_OK(hal_memset_d32(stream_, ptrs[i], v, 6));
  }
  for (int i = 0; i < count; i += 499) {
    std::vector<uint32_t> out = download<uint32_t>(ptrs[i], 6);
    for (uint32_t w : out) ASSERT_EQ(w, static_cast<uint32_t>(i) * 3u + 1u);
  }
  for (int i = 0; i < count; ++i) ASSERT_OK(hal_mem_free(device_, ptrs[i]));
  EXPECT_LE(device->memory().block_count(), before + 1);
}

TEST_F(Copies, AllocationAboveTheLimitIsOutOfMemory) {
  hal_deviceptr ptr = 0;
  EXPECT_HAL(HAL_ERROR_OUT_OF_MEMORY,
             hal_mem_alloc(device_, static_cast<size_t>(info_.max_allocation_size) + 1, &ptr));
  EXPECT_EQ(ptr, 0u);
  // The device keeps working.
  hal_deviceptr small = alloc(64);
  EXPECT_NE(small, 0u);
}

}  // namespace
}  // namespace hal_vk_test
