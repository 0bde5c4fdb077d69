// The CPU PTX driver's memory: allocations and their errors, pointer queries, copies (and the
// pageable versus page-locked semantics of the asynchronous ones), memsets.
#include "driver_fixture.h"

#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

namespace ptx_cpu_test {
namespace {

using std::chrono::milliseconds;

TEST_F(DriverTest, AllocationsAreAlignedAndCounted) {
  size_t free_before = 0;
  size_t total = 0;
  ASSERT_OK(cu().cuMemGetInfo(&free_before, &total));
  size_t device_total = 0;
  ASSERT_OK(cu().cuDeviceTotalMem(&device_total, 0));
  EXPECT_EQ(total, device_total);
  std::vector<CUdeviceptr> pointers;
  for (size_t size : {size_t{1}, size_t{100}, size_t{4096}, size_t{1} << 20}) {
    CUdeviceptr pointer = 0;
    ASSERT_OK(cu().cuMemAlloc(&pointer, size));
    EXPECT_EQ(pointer % 256, 0u) << size;
    pointers.push_back(pointer);
  }
  size_t free_after = 0;
  ASSERT_OK(cu().cuMemGetInfo(&free_after, &total));
  EXPECT_LE(free_after + (size_t{1} << 20) + 4096 + 100 + 1, free_before);
  for (CUdeviceptr pointer : pointers) EXPECT_OK(cu().cuMemFree(pointer));
  ASSERT_OK(cu().cuMemGetInfo(&free_after, &total));
  EXPECT_EQ(free_after, free_before);
}

TEST_F(DriverTest, AllocationErrors) {
  CUdeviceptr pointer = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemAlloc(&pointer, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemAlloc(nullptr, 16));
  size_t free = 0;
  size_t total = 0;
  ASSERT_OK(cu().cuMemGetInfo(&free, &total));
  // More than there is: refused without touching the host's memory, and nothing breaks.
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cu().cuMemAlloc(&pointer, total + 1));
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cu().cuMemAlloc(&pointer, SIZE_MAX));
  ASSERT_OK(cu().cuMemAlloc(&pointer, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemFree(pointer + 16));  // interior
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemFree(0));
  EXPECT_OK(cu().cuMemFree(pointer));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemFree(pointer));  // twice
  int stack = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemFree(reinterpret_cast<CUdeviceptr>(&stack)));
}

TEST_F(DriverTest, PageLockedHostMemory) {
  void* host = nullptr;
  ASSERT_OK(cu().cuMemHostAlloc(&host, 1000, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
  ASSERT_NE(host, nullptr);
  std::memset(host, 0x5a, 1000);  // writable
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemHostGetDevicePointer(&device, host, 0));
  EXPECT_EQ(device, reinterpret_cast<CUdeviceptr>(host));
  unsigned flags = 0;
  ASSERT_OK(cu().cuMemHostGetFlags(&flags, static_cast<char*>(host) + 10));
  EXPECT_EQ(flags, unsigned{CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP});
  void* other = nullptr;
  ASSERT_OK(cu().cuMemAllocHost(&other, 64));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemHostAlloc(&other, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemHostAlloc(&other, 16, 0x80));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemHostAlloc(nullptr, 16, 0));
  int stack = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemHostGetDevicePointer(&device, &stack, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemFreeHost(&stack));
  CUdeviceptr allocation = 0;
  ASSERT_OK(cu().cuMemAlloc(&allocation, 64));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemFreeHost(reinterpret_cast<void*>(allocation)));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemFree(reinterpret_cast<CUdeviceptr>(host)));
  EXPECT_OK(cu().cuMemFree(allocation));
  EXPECT_OK(cu().cuMemFreeHost(other));
  EXPECT_OK(cu().cuMemFreeHost(host));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemFreeHost(host));
}

TEST_F(DriverTest, PointerAttributes) {
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, 1000));
  void* host = nullptr;
  ASSERT_OK(cu().cuMemHostAlloc(&host, 1000, 0));
  unsigned type = 0;
  ASSERT_OK(cu().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, device + 999));
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_DEVICE});
  ASSERT_OK(cu().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                       reinterpret_cast<CUdeviceptr>(host)));
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_HOST});
  int stack = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                       reinterpret_cast<CUdeviceptr>(&stack)));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, device + 1000));
  CUcontext context = nullptr;
  ASSERT_OK(cu().cuPointerGetAttribute(&context, CU_POINTER_ATTRIBUTE_CONTEXT, device));
  EXPECT_EQ(context, primary_context());
  CUdeviceptr start = 0;
  size_t size = 0;
  ASSERT_OK(cu().cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, device + 7));
  ASSERT_OK(cu().cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, device + 7));
  EXPECT_EQ(start, device);
  EXPECT_EQ(size, 1000u);
  int ordinal = -1;
  ASSERT_OK(cu().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, device));
  EXPECT_EQ(ordinal, 0);
  void* host_pointer = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuPointerGetAttribute(&host_pointer, CU_POINTER_ATTRIBUTE_HOST_POINTER, device));
  CUdeviceptr base = 0;
  ASSERT_OK(cu().cuMemGetAddressRange(&base, &size, device + 500));
  EXPECT_EQ(base, device);
  EXPECT_EQ(size, 1000u);
  EXPECT_OK(cu().cuMemFree(device));
  EXPECT_OK(cu().cuMemFreeHost(host));
}

// ===========================================================================================
// Copies and memsets
// ===========================================================================================

TEST_F(DriverTest, SynchronousCopiesRoundTrip) {
  constexpr size_t kCount = 1000;
  std::vector<uint32_t> in(kCount);
  std::iota(in.begin(), in.end(), 1u);
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  ASSERT_OK(cu().cuMemAlloc(&a, kCount * 4));
  ASSERT_OK(cu().cuMemAlloc(&b, kCount * 4));
  ASSERT_OK(cu().cuMemcpyHtoD(a, in.data(), kCount * 4));
  ASSERT_OK(cu().cuMemcpyDtoD(b, a, kCount * 4));
  std::vector<uint32_t> out(kCount, 0);
  ASSERT_OK(cu().cuMemcpyDtoH(out.data(), b, kCount * 4));
  EXPECT_EQ(out, in);
  // cuMemcpy infers both sides: host to device, device to host, host to host.
  std::vector<uint32_t> other(kCount, 7);
  ASSERT_OK(cu().cuMemcpy(a, reinterpret_cast<CUdeviceptr>(other.data()), kCount * 4));
  ASSERT_OK(cu().cuMemcpy(reinterpret_cast<CUdeviceptr>(out.data()), a, kCount * 4));
  EXPECT_EQ(out, other);
  ASSERT_OK(cu().cuMemcpy(reinterpret_cast<CUdeviceptr>(out.data()),
                          reinterpret_cast<CUdeviceptr>(in.data()), kCount * 4));
  EXPECT_EQ(out, in);
  EXPECT_OK(cu().cuMemFree(a));
  EXPECT_OK(cu().cuMemFree(b));
}

TEST_F(DriverTest, CopyRangesAreValidated) {
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, 4096));
  std::vector<char> host(8192);
  skip_logs();
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemcpyHtoD(device + 4092, host.data(), 8));
  const std::string log = new_logs();
  EXPECT_NE(log.find("cuMemcpyHtoD"), std::string::npos) << log;
  EXPECT_NE(log.find("past the end of the 4096-byte allocation"), std::string::npos) << log;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemcpyDtoH(host.data(), device + 4096, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuMemcpyDtoD(device, reinterpret_cast<CUdeviceptr>(host.data()), 16));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemcpyHtoD(device, nullptr, 16));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemcpy(device + 4000, device, 200));
  // Nothing to copy: nothing checked but the context.
  EXPECT_OK(cu().cuMemcpyHtoD(0, nullptr, 0));
  EXPECT_OK(cu().cuMemcpyHtoDAsync(device, host.data(), 0, nullptr));
  EXPECT_OK(cu().cuMemFree(device));
}

TEST_F(DriverTest, Memsets) {
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, 64));
  ASSERT_OK(cu().cuMemsetD8(device, 0xab, 64));
  ASSERT_OK(cu().cuMemsetD16(device + 2, 0x1234, 3));
  ASSERT_OK(cu().cuMemsetD32(device + 16, 0xdeadbeef, 2));
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  ASSERT_OK(cu().cuMemsetD32Async(device + 32, 0x01020304, 1, stream));
  ASSERT_OK(cu().cuMemsetD16Async(device + 40, 0xbeef, 1, stream));
  ASSERT_OK(cu().cuMemsetD8Async(device + 48, 0x11, 4, stream));
  ASSERT_OK(cu().cuStreamSynchronize(stream));
  unsigned char out[64];
  ASSERT_OK(cu().cuMemcpyDtoH(out, device, 64));
  EXPECT_EQ(out[0], 0xab);
  EXPECT_EQ(out[1], 0xab);
  uint16_t half = 0;
  std::memcpy(&half, out + 6, 2);
  EXPECT_EQ(half, 0x1234);
  EXPECT_EQ(out[8], 0xab);
  uint32_t word = 0;
  std::memcpy(&word, out + 20, 4);
  EXPECT_EQ(word, 0xdeadbeefu);
  std::memcpy(&word, out + 32, 4);
  EXPECT_EQ(word, 0x01020304u);
  std::memcpy(&half, out + 40, 2);
  EXPECT_EQ(half, 0xbeef);
  EXPECT_EQ(out[51], 0x11);
  EXPECT_EQ(out[52], 0xab);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemsetD32(device + 2, 0, 1));  // misaligned
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemsetD16(device + 1, 0, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemsetD32(device, 0, 17));  // one word too many
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemsetD8(device + 64, 0, 1));
  EXPECT_OK(cu().cuMemsetD8(device + 64, 0, 0));
  EXPECT_OK(cu().cuStreamDestroy(stream));
  EXPECT_OK(cu().cuMemFree(device));
}

// From pageable memory the source is taken at the call; from page-locked memory when the copy
// runs (after the gate), as CUDA allows.
TEST_F(DriverTest, AsyncCopySourceSemantics) {
  Gate gate;
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, 8));
  uint32_t* pinned = nullptr;
  ASSERT_OK(cu().cuMemHostAlloc(reinterpret_cast<void**>(&pinned), 4, 0));
  std::vector<uint32_t> pageable = {1};
  *pinned = 10;
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Gate::wait, &gate));
  ASSERT_OK(cu().cuMemcpyHtoDAsync(device, pageable.data(), 4, stream));
  ASSERT_OK(cu().cuMemcpyHtoDAsync(device + 4, pinned, 4, stream));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu().cuStreamQuery(stream));
  pageable[0] = 2;
  pageable.clear();
  pageable.shrink_to_fit();  // the memory is gone: the copy must not need it
  *pinned = 20;
  gate.open();
  ASSERT_OK(cu().cuStreamSynchronize(stream));
  uint32_t out[2] = {};
  ASSERT_OK(cu().cuMemcpyDtoH(out, device, 8));
  EXPECT_EQ(out[0], 1u);
  EXPECT_EQ(out[1], 20u);
  EXPECT_OK(cu().cuStreamDestroy(stream));
  EXPECT_OK(cu().cuMemFreeHost(pinned));
  EXPECT_OK(cu().cuMemFree(device));
}

// On an idle stream, an asynchronous copy from pageable memory is made by the caller straight
// into the destination (no staging copy): it has completed when the call returns.
TEST_F(DriverTest, AsyncCopyFromPageableMemoryOnAnIdleStreamIsDoneOnReturn) {
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  const size_t count = size_t{4} << 20;  // 16 MiB: far longer to copy than a query takes
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, count * 4));
  std::vector<uint32_t> pageable(count);
  std::iota(pageable.begin(), pageable.end(), 7u);
  ASSERT_OK(cu().cuMemcpyHtoDAsync(device, pageable.data(), count * 4, stream));
  EXPECT_OK(cu().cuStreamQuery(stream));
  std::vector<uint32_t> expected = pageable;
  pageable.assign(count, 0);
  std::vector<uint32_t> out(count);
  ASSERT_OK(cu().cuMemcpyDtoH(out.data(), device, count * 4));
  EXPECT_EQ(out, expected);
  EXPECT_OK(cu().cuStreamDestroy(stream));
  EXPECT_OK(cu().cuMemFree(device));
}

// A copy is made by its caller only when it would run at once: one on the legacy stream still
// waits for a busy blocking stream, and one on a blocking stream for a busy legacy stream.
TEST_F(DriverTest, CopiesStillWaitForTheStreamsTheyAreOrderedAfter) {
  CUstream blocking = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, 8));
  ASSERT_OK(cu().cuMemsetD32(device, 5, 2));
  {
    Gate gate;
    ASSERT_OK(cu().cuLaunchHostFunc(blocking, &Gate::wait, &gate));
    std::thread opener([&] {
      std::this_thread::sleep_for(milliseconds(100));
      gate.open();
    });
    const auto start = std::chrono::steady_clock::now();
    const uint32_t value = 9;
    ASSERT_OK(cu().cuMemcpyHtoD(device, &value, 4));  // the legacy stream
    EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(90));
    opener.join();
  }
  Gate gate;
  ASSERT_OK(cu().cuLaunchHostFunc(nullptr, &Gate::wait, &gate));
  const uint32_t value = 11;
  ASSERT_OK(cu().cuMemcpyHtoDAsync(device + 4, &value, 4, blocking));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu().cuStreamQuery(blocking));
  gate.open();
  ASSERT_OK(cu().cuStreamSynchronize(blocking));
  uint32_t out[2] = {};
  ASSERT_OK(cu().cuMemcpyDtoH(out, device, 8));
  EXPECT_EQ(out[0], 9u);
  EXPECT_EQ(out[1], 11u);
  EXPECT_OK(cu().cuStreamDestroy(blocking));
  EXPECT_OK(cu().cuMemFree(device));
}

// To pageable memory an asynchronous copy returns only once it has completed.
TEST_F(DriverTest, AsyncCopyToPageableMemoryCompletesBeforeReturning) {
  Gate gate;
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, 4));
  ASSERT_OK(cu().cuMemsetD32(device, 77, 1));
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Gate::wait, &gate));
  std::thread opener([&] {
    std::this_thread::sleep_for(milliseconds(100));
    gate.open();
  });
  const auto start = std::chrono::steady_clock::now();
  uint32_t out = 0;
  ASSERT_OK(cu().cuMemcpyDtoHAsync(&out, device, 4, stream));
  EXPECT_EQ(out, 77u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(90));
  opener.join();
  // To page-locked memory it does not wait.
  uint32_t* pinned = nullptr;
  ASSERT_OK(cu().cuMemHostAlloc(reinterpret_cast<void**>(&pinned), 4, 0));
  Gate second;
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Gate::wait, &second));
  ASSERT_OK(cu().cuMemcpyDtoHAsync(pinned, device, 4, stream));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu().cuStreamQuery(stream));
  second.open();
  ASSERT_OK(cu().cuStreamSynchronize(stream));
  EXPECT_EQ(*pinned, 77u);
  EXPECT_OK(cu().cuStreamDestroy(stream));
  EXPECT_OK(cu().cuMemFreeHost(pinned));
  EXPECT_OK(cu().cuMemFree(device));
}

// cuMemFree waits until work queued before it that uses the memory has run.
TEST_F(DriverTest, FreeWaitsForQueuedWork) {
  Gate gate;
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, 1 << 20));
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Gate::wait, &gate));
  ASSERT_OK(cu().cuMemsetD8Async(device, 1, 1 << 20, stream));
  std::thread opener([&] {
    std::this_thread::sleep_for(milliseconds(50));
    gate.open();
  });
  ASSERT_OK(cu().cuMemFree(device));
  EXPECT_OK(cu().cuStreamQuery(stream));  // everything ran before the memory went
  opener.join();
  EXPECT_OK(cu().cuStreamDestroy(stream));
}

}  // namespace
}  // namespace ptx_cpu_test
