// Allocations, the allocation table, and range checks on copies and fills.
#include "test_util.h"

#include "common/alloc_table.h"

#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hal_test {
namespace {

TEST(AllocationTable, FindsBaseInteriorAndLastByteOnly) {
  hal::AllocationTable table;
  ASSERT_TRUE(table.insert({0x1000, 0x100, 7}));
  ASSERT_TRUE(table.insert({0x2000, 0x10, 8}));
  // An allocation overlapping a live one is refused, whichever side it overlaps.
  EXPECT_FALSE(table.insert({0x1000, 0x10, 9})) << "the same base";
  EXPECT_FALSE(table.insert({0x10f0, 0x100, 9})) << "inside the first";
  EXPECT_FALSE(table.insert({0x1f00, 0x101, 9})) << "running into the second";
  EXPECT_TRUE(table.insert({0x1100, 0xf00, 9})) << "exactly between them";
  hal_driver_allocation between{};
  ASSERT_TRUE(table.remove(0x1100, &between));
  hal_driver_allocation found{};
  ASSERT_TRUE(table.find(0x1000, &found));
  EXPECT_EQ(found.base, 0x1000u);
  EXPECT_EQ(found.driver_data, 7u);
  ASSERT_TRUE(table.find(0x10ff, &found));
  EXPECT_EQ(found.base, 0x1000u);
  EXPECT_FALSE(table.find(0x1100, &found)) << "one past the end";
  EXPECT_FALSE(table.find(0xfff, &found)) << "before the first";
  EXPECT_FALSE(table.find(0, &found));
  ASSERT_TRUE(table.find(0x200f, &found));
  EXPECT_EQ(found.base, 0x2000u);
  EXPECT_FALSE(table.find(0x2010, &found));
  EXPECT_FALSE(table.find(~uint64_t{0}, &found));
  EXPECT_EQ(table.size(), 2u);

  hal_driver_allocation removed{};
  EXPECT_FALSE(table.remove(0x1001, &removed)) << "an interior address is not a base";
  ASSERT_TRUE(table.remove(0x1000, &removed));
  EXPECT_EQ(removed.size, 0x100u);
  EXPECT_FALSE(table.remove(0x1000, &removed));
  EXPECT_FALSE(table.find(0x1000, &found));
  EXPECT_EQ(table.size(), 1u);
}

using Memory = DoubleTest;

TEST_F(Memory, AllocationsAreAlignedDistinctAndReachTheBackend) {
  const size_t buffers = gpu_double->live_buffers();
  std::set<hal_deviceptr> seen;
  for (size_t size : {1, 3, 255, 256, 257, 4096}) {
    hal_deviceptr p = alloc(size);
    ASSERT_NE(p, 0u);
    EXPECT_EQ(p % 256, 0u) << size;
    EXPECT_TRUE(seen.insert(p).second);
  }
  EXPECT_EQ(gpu_double->live_buffers(), buffers + 6);
}

TEST_F(Memory, AllocChecksItsArguments) {
  hal_deviceptr p = 0x77;
  const uint64_t calls = gpu_double->calls();
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_alloc(gpu, 0, &p));
  EXPECT_TRUE(LastErrorIs("hal_mem_alloc", {"size is 0"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_alloc(gpu, 16, nullptr));
  EXPECT_TRUE(LastErrorIs("hal_mem_alloc", {"ptr is NULL"}));
  // Beyond the device's largest allocation: out of memory, and the device keeps working.
  const size_t too_big = gpu_double->info.max_allocation_size + 1;
  EXPECT_HAL(HAL_ERROR_OUT_OF_MEMORY, hal_mem_alloc(gpu, too_big, &p));
  EXPECT_TRUE(LastErrorIs("hal_mem_alloc", {std::to_string(too_big), "largest allocation"}));
  EXPECT_EQ(p, 0x77u) << "output written on failure";
  EXPECT_EQ(gpu_double->calls(), calls) << "the backend saw a refused allocation";
  EXPECT_NE(alloc(gpu_double->info.max_allocation_size), 0u);
}

TEST_F(Memory, BackendFailureIsReported) {
  hal_deviceptr p = 0x77;
  gpu_double->fail_next(HAL_ERROR_OUT_OF_MEMORY, "no memory left (injected)");
  EXPECT_HAL(HAL_ERROR_OUT_OF_MEMORY, hal_mem_alloc(gpu, 64, &p));
  EXPECT_TRUE(LastErrorIs("hal_mem_alloc", {"no memory left (injected)"}));
  EXPECT_EQ(p, 0x77u);
  EXPECT_NE(alloc(64), 0u);
}

TEST_F(Memory, CopiesExactlyFillingAnAllocationWorkInEveryDirection) {
  const size_t n = 1000;  // not a multiple of the double's 256-byte buffers
  hal_deviceptr a = alloc(n);
  hal_deviceptr b = alloc(n);
  const std::vector<uint8_t> data = pattern(n, 3);
  ASSERT_OK(hal_memcpy_htod(stream, a, data.data(), n));
  EXPECT_EQ(gpu_double->buffer_bytes(a, n), data);
  ASSERT_OK(hal_memcpy_dtod(stream, b, a, n));
  EXPECT_EQ(read(stream, b, n), data);

  ASSERT_OK(hal_memset_d8(stream, a, 0x5c, n));
  EXPECT_EQ(read(stream, a, n), std::vector<uint8_t>(n, 0x5c));
  ASSERT_OK(hal_memset_d32(stream, b, 0x11223344u, n / 4));
  const std::vector<uint8_t> words = read(stream, b, n);
  for (size_t i = 0; i < n; i += 4) {
    uint32_t w = 0;
    std::memcpy(&w, &words[i], 4);
    ASSERT_EQ(w, 0x11223344u) << i;
  }
}

TEST_F(Memory, OneByteBeyondAnAllocationIsOutOfRange) {
  const size_t n = 1000;
  hal_deviceptr a = alloc(n);
  hal_deviceptr b = alloc(n);
  std::vector<uint8_t> host(n + 8, 0);
  const uint64_t calls = gpu_double->calls();

  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_htod(stream, a, host.data(), n + 1));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_htod", {"destination", "runs 1 byte(s) past the end"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_dtoh(stream, host.data(), a, n + 1));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_dtoh", {"source", "runs 1 byte(s) past the end"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_dtod(stream, b, a, n + 1));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_dtod", {"destination", "1 byte(s)"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_dtod(stream, b, a + 1, n));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_dtod", {"source", "1 byte(s)"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_dtod(stream, b + 1, a, n));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_dtod", {"destination", "1 byte(s)"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memset_d8(stream, a, 0, n + 1));
  EXPECT_TRUE(LastErrorIs("hal_memset_d8", {"destination", "1 byte(s)"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memset_d32(stream, a, 0, n / 4 + 1));
  EXPECT_TRUE(LastErrorIs("hal_memset_d32", {"destination", "4 byte(s)"}));
  // From an interior address, and starting exactly at the end.
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_htod(stream, a + 500, host.data(), 501));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_htod", {"1 byte(s)"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_htod(stream, a + n, host.data(), 1));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_htod", {"not inside any live allocation"}));
  // The double's buffer is larger (1024 bytes) than what was asked for; that does not count.
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_htod(stream, a + n + 8, host.data(), 8));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_htod(stream, a, host.data(), SIZE_MAX));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_htod(stream, a + 8, host.data(), SIZE_MAX));
  EXPECT_EQ(gpu_double->calls(), calls) << "a refused range reached the backend";
}

TEST_F(Memory, InteriorPointersWork) {
  hal_deviceptr a = alloc(64);
  ASSERT_OK(hal_memset_d8(stream, a, 0, 64));
  const std::vector<uint8_t> five = {1, 2, 3, 4, 5};
  ASSERT_OK(hal_memcpy_htod(stream, a + 10, five.data(), five.size()));
  ASSERT_OK(hal_memset_d32(stream, a + 60, 0xffffffffu, 1));
  ASSERT_OK(hal_memcpy_dtod(stream, a + 20, a + 10, 5));
  const std::vector<uint8_t> all = read(stream, a, 64);
  std::vector<uint8_t> expected(64, 0);
  for (int i = 0; i < 5; ++i) expected[10 + i] = expected[20 + i] = five[i];
  for (int i = 60; i < 64; ++i) expected[i] = 0xff;
  EXPECT_EQ(all, expected);
  std::vector<uint8_t> tail(3);
  ASSERT_OK(hal_memcpy_dtoh(stream, tail.data(), a + 61, 3));
  EXPECT_EQ(tail, std::vector<uint8_t>(3, 0xff));
}

TEST_F(Memory, HostPointerOfUnifiedMemory) {
  // The CPU-like device's memory is host memory: the pointer reads and writes the same bytes the
  // copies do, at any offset inside the allocation.
  hal_deviceptr a = alloc(cpu, 64);
  const std::vector<uint8_t> bytes = pattern(64, 3);
  ASSERT_OK(hal_memcpy_htod(cpu_stream, a, bytes.data(), bytes.size()));
  ASSERT_OK(hal_stream_synchronize(cpu_stream));
  void* host = nullptr;
  ASSERT_OK(hal_mem_host_pointer(cpu, a + 10, &host));
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(std::memcmp(host, bytes.data() + 10, 54), 0);
  static_cast<uint8_t*>(host)[0] = 0x5A;
  EXPECT_EQ(read(cpu_stream, a + 10, 1), std::vector<uint8_t>{0x5A});

  // Misuse, each refused before the backend sees it, |host| untouched.
  void* untouched = reinterpret_cast<void*>(0x77);
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_host_pointer(cpu, a, nullptr));
  EXPECT_TRUE(LastErrorIs("hal_mem_host_pointer", {"host is NULL"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_mem_host_pointer(cpu, a + 64, &untouched));
  EXPECT_TRUE(LastErrorIs("hal_mem_host_pointer", {"inside no live allocation", "Double CPU"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_mem_host_pointer(cpu, 0, &untouched));
  hal_deviceptr on_gpu = alloc(64);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_mem_host_pointer(cpu, on_gpu, &untouched));
  EXPECT_EQ(untouched, reinterpret_cast<void*>(0x77));

  // The GPU-like device's memory has no host address.
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, hal_mem_host_pointer(gpu, on_gpu, &untouched));
  EXPECT_TRUE(LastErrorIs("hal_mem_host_pointer", {"no host address", "hal_memcpy_dtoh"}));
  EXPECT_EQ(untouched, reinterpret_cast<void*>(0x77));
}

TEST_F(Memory, FreedPointersAreGone) {
  hal_deviceptr a = alloc(128);
  const size_t buffers = gpu_double->live_buffers();
  free_now(gpu, a);
  EXPECT_EQ(gpu_double->live_buffers(), buffers - 1);
  std::vector<uint8_t> host(16);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_htod(stream, a, host.data(), 16));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_htod", {"not inside any live allocation", "already freed"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_dtoh(stream, host.data(), a + 4, 4));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memset_d8(stream, a, 0, 1));
  const uint64_t calls = gpu_double->calls();
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_free(gpu, a));
  EXPECT_TRUE(LastErrorIs("hal_mem_free", {"not a live allocation", "already freed"}));
  EXPECT_EQ(gpu_double->calls(), calls) << "a double free reached the backend";
}

TEST_F(Memory, FreeRefusesWhatIsNotABase) {
  hal_deviceptr a = alloc(128);
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_free(gpu, a + 1));
  EXPECT_TRUE(LastErrorIs("hal_mem_free", {"is inside the allocation", "not its base"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_free(gpu, 0));
  EXPECT_TRUE(LastErrorIs("hal_mem_free", {"0x0"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_free(gpu, 0x1234));
  // The allocation is still live after the refused frees.
  EXPECT_OK(hal_memset_d8(stream, a, 1, 128));
}

TEST_F(Memory, PointersOfAnotherDeviceAreNamedAsSuch) {
  hal_deviceptr theirs = alloc(cpu, 64);
  std::vector<uint8_t> host(8);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_htod(stream, theirs, host.data(), 8));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_htod",
                          {"belongs to device double:0", "not to double:1", "through the host"}));
  hal_deviceptr mine = alloc(64);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_dtod(stream, mine, theirs + 8, 8));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_dtod", {"source", "belongs to device double:0"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_dtoh(cpu_stream, host.data(), mine, 8));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_dtoh", {"belongs to device double:1"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_free(gpu, theirs));
  EXPECT_TRUE(LastErrorIs("hal_mem_free", {"belongs to device double:0", "not to double:1"}));
  // An interior address of another device's allocation is named the same way.
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_free(gpu, theirs + 8));
  EXPECT_TRUE(LastErrorIs("hal_mem_free", {"belongs to device double:0"}));
  // Still live on its own device.
  EXPECT_OK(hal_memcpy_htod(cpu_stream, theirs, host.data(), 8));
}

TEST_F(Memory, HostPointersMustNotBeNullWithASize) {
  hal_deviceptr a = alloc(64);
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_memcpy_htod(stream, a, nullptr, 4));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_htod", {"src is NULL"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_memcpy_dtoh(stream, nullptr, a, 4));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_dtoh", {"dst is NULL"}));
}

TEST_F(Memory, SizeZeroDoesNothingAndSucceeds) {
  const uint64_t calls = gpu_double->calls();
  EXPECT_OK(hal_memcpy_htod(stream, 0, nullptr, 0));
  EXPECT_OK(hal_memcpy_dtoh(stream, nullptr, 0, 0));
  EXPECT_OK(hal_memcpy_dtod(stream, 0, 0x1234, 0));
  EXPECT_OK(hal_memset_d8(stream, 0, 1, 0));
  EXPECT_OK(hal_memset_d32(stream, 3, 1, 0));
  EXPECT_EQ(gpu_double->calls(), calls);
  // The stream is still validated.
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_memcpy_htod(nullptr, 0, nullptr, 0));
}

TEST_F(Memory, NullDeviceAddressIsOutOfRange) {
  uint8_t byte = 0;
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_htod(stream, 0, &byte, 1));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_htod", {"destination", "null device address"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memset_d8(stream, 0, 0, 1));
}

TEST_F(Memory, MemsetD32NeedsFourByteAlignment) {
  hal_deviceptr a = alloc(64);
  const uint64_t calls = gpu_double->calls();
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_memset_d32(stream, a + 2, 0, 1));
  EXPECT_TRUE(LastErrorIs("hal_memset_d32", {"not 4-byte aligned"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_memset_d32(stream, a, 0, SIZE_MAX / 2));
  EXPECT_TRUE(LastErrorIs("hal_memset_d32", {"overflows"}));
  EXPECT_EQ(gpu_double->calls(), calls);
  EXPECT_OK(hal_memset_d32(stream, a + 4, 0xabcdef01u, 15));
}

TEST_F(Memory, HostAllocations) {
  void* host = reinterpret_cast<void*>(0x77);
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_host_alloc(gpu, 0, &host));
  EXPECT_TRUE(LastErrorIs("hal_host_alloc", {"size is 0"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_host_alloc(gpu, 8, nullptr));
  EXPECT_EQ(host, reinterpret_cast<void*>(0x77));

  const size_t live = gpu_double->live_host_buffers();
  ASSERT_OK(hal_host_alloc(gpu, 100, &host));
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(gpu_double->live_host_buffers(), live + 1);
  std::memset(host, 0x42, 100);  // usable host memory

  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_host_free(cpu, host));
  EXPECT_TRUE(LastErrorIs("hal_host_free", {"not live host memory", "double:0"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_host_free(gpu, nullptr));
  int on_stack = 0;
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_host_free(gpu, &on_stack));
  EXPECT_OK(hal_host_free(gpu, host));
  EXPECT_EQ(gpu_double->live_host_buffers(), live);
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_host_free(gpu, host));
  EXPECT_TRUE(LastErrorIs("hal_host_free", {"already"}));
}

// The core keeps the one table of host allocations and gives a copy the allocation holding its
// host range, so drivers look nothing up.
TEST_F(Memory, CopiesAreGivenTheHostAllocationHoldingThem) {
  const hal_deviceptr a = alloc(256);
  void* host = nullptr;
  ASSERT_OK(hal_host_alloc(gpu, 128, &host));
  uint8_t* bytes = static_cast<uint8_t*>(host);
  ASSERT_OK(hal_memcpy_htod(stream, a, bytes + 16, 64));
  std::optional<hal::HostAllocation> given = gpu_double->last_copy_host();
  ASSERT_TRUE(given.has_value()) << "a copy from host_alloc memory came without its allocation";
  EXPECT_EQ(given->base, host);
  EXPECT_EQ(given->size, 128u);
  ASSERT_OK(hal_memcpy_dtoh(stream, bytes + 64, a, 64));  // ends exactly at the end
  EXPECT_TRUE(gpu_double->last_copy_host().has_value());
  // Ordinary memory, and a range running past the allocation's end: no allocation.
  std::vector<uint8_t> pageable(256);
  ASSERT_OK(hal_memcpy_htod(stream, a, pageable.data(), 64));
  EXPECT_FALSE(gpu_double->last_copy_host().has_value());
  ASSERT_OK(hal_memcpy_htod(stream, a, bytes + 100, 64));
  EXPECT_FALSE(gpu_double->last_copy_host().has_value()) << "the range leaves the allocation";
  EXPECT_OK(hal_host_free(gpu, host));
  ASSERT_OK(hal_memcpy_htod(stream, a, pageable.data(), 8));
  EXPECT_FALSE(gpu_double->last_copy_host().has_value());
}

}  // namespace
}  // namespace hal_test
