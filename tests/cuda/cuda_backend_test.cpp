// Tests of the CUDA backend through the backend interface (src/common/backend.h), against the
// libcuda test double named by HAL_CUDA_LIBRARY.
#include "cuda/cuda_backend.h"
#include "common/error.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_driver.h"
#include "cuda_test_double.h"
#include "host_double.h"

#include <gtest/gtest.h>

#include <cuda.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr const char* kPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry add_one(
    .param .u64 .ptr .global .align 4 add_one_data,
    .param .u32 add_one_n
)
.reqntid 64, 1, 1
{
  ret;
}

.visible .entry _Z5mixedPfmdc(
    .param .u64 p0,
    .param .u64 p1,
    .param .f64 p2,
    .param .u8 p3
)
{
  ret;
}
)";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class CudaBackendTest : public ::testing::Test {
 public:
  void SetUp() override {
    cuda_test_double_reset();
    hal::clear_pending_error();
  }

  // Initialises a fresh backend; expects success.
  void init() {
    backend_ = hal::create_cuda_backend();
    devices_.clear();
    ASSERT_EQ(backend_->init(&devices_), HAL_SUCCESS) << hal::pending_error();
    ASSERT_FALSE(devices_.empty());
  }

  // Initialises a fresh backend; expects |status| and returns the reason.
  std::string init_fails(hal_status status) {
    backend_ = hal::create_cuda_backend();
    devices_.clear();
    EXPECT_EQ(backend_->init(&devices_), status);
    return hal::pending_error();
  }

  hal::Device& device() { return *devices_.at(0); }

  hal::Allocation alloc(size_t size) {
    hal::Allocation allocation;
    EXPECT_EQ(device().mem_alloc(size, &allocation), HAL_SUCCESS) << hal::pending_error();
    return allocation;
  }

  std::unique_ptr<hal::Stream> stream() {
    std::unique_ptr<hal::Stream> out;
    EXPECT_EQ(device().create_stream(&out), HAL_SUCCESS) << hal::pending_error();
    return out;
  }

  std::unique_ptr<hal::Module> load(hal_ir ir, const void* blob, size_t size,
                                    hal_status expected = HAL_SUCCESS) {
    std::unique_ptr<hal::Module> module;
    EXPECT_EQ(device().load_module(ir, static_cast<const uint8_t*>(blob), size, {}, &module),
              expected)
        << hal::pending_error();
    return module;
  }

  // The core's record of device loss, for devices driven without a core. Declared first so
  // that it outlives the devices, whose destructors ask it.
  hal_test::HostDouble host_;
  std::unique_ptr<hal::Backend> backend_;
  std::vector<std::unique_ptr<hal::Device>> devices_;
};

// The same range as the core hands a launch (hal_driver.h).
hal_driver_range c_range(const hal::Allocation& allocation, uint64_t offset = 0) {
  return hal_driver_range{{allocation.base, allocation.size, allocation.backend_data}, offset};
}

hal::DeviceRange range(const hal::Allocation& allocation, uint64_t offset = 0) {
  hal::DeviceRange out;
  out.alloc = allocation;
  out.offset = offset;
  return out;
}

// ===========================================================================================
// Loading and discovery
// ===========================================================================================

TEST_F(CudaBackendTest, FillsDeviceInfo) {
  cuda_test_double_device devices[2] = {};
  std::strcpy(devices[0].name, "Double A");
  devices[0].cc_major = 9;
  devices[0].cc_minor = 0;
  devices[0].total_memory = size_t{80} << 30;
  devices[0].shared_per_block = 48 * 1024;
  devices[0].shared_per_block_optin = 227 * 1024;
  devices[0].multiprocessors = 132;
  devices[1] = devices[0];
  std::strcpy(devices[1].name, "Double B");
  devices[1].cc_major = 7;
  devices[1].cc_minor = 5;
  devices[1].shared_per_block_optin = 0;
  cuda_test_double_set_devices(devices, 2);
  cuda_test_double_set_driver_version(13000);
  init();
  ASSERT_EQ(devices_.size(), 2u);
  const hal_device_info& a = devices_[0]->info;
  EXPECT_EQ(a.struct_size, sizeof(hal_device_info));
  EXPECT_EQ(a.backend, HAL_BACKEND_CUDA);
  EXPECT_STREQ(a.name, "Double A");
  // Opened through HAL_CUDA_LIBRARY: named by its file, not as NVIDIA's driver.
  EXPECT_STREQ(a.driver_name, "libcuda_test_double.so (CUDA 13.0)");
  EXPECT_EQ(a.vendor_id, 0x10deu);
  EXPECT_EQ(a.driver_version, 13000u);
  EXPECT_EQ(a.ir_mask, unsigned{HAL_IR_PTX | HAL_IR_CUBIN | HAL_IR_FATBIN});
  EXPECT_EQ(a.total_memory, uint64_t{80} << 30);
  EXPECT_EQ(a.max_allocation_size, a.total_memory);
  EXPECT_EQ(a.max_threads_per_block, 1024u);
  EXPECT_EQ(a.max_block_dim[2], 64u);
  EXPECT_EQ(a.max_grid_dim[0], 2147483647u);
  EXPECT_EQ(a.max_shared_memory_per_block, 227u * 1024);
  EXPECT_EQ(a.subgroup_size, 32u);
  EXPECT_EQ(a.compute_units, 132u);
  EXPECT_EQ(a.pointer_alignment, 1u);
  EXPECT_EQ(a.is_cpu, 0u);
  EXPECT_EQ(a.compute_capability_major, 9u);
  EXPECT_EQ(a.compute_capability_minor, 0u);
  EXPECT_EQ(a.uuid[0], 0xd0);
  EXPECT_TRUE(a.features & HAL_FEATURE_FLOAT16);
  EXPECT_TRUE(a.features & HAL_FEATURE_TIMESTAMPS);
  EXPECT_TRUE(a.features & HAL_FEATURE_BUFFER_DEVICE_ADDRESS);
  EXPECT_TRUE(a.features & HAL_FEATURE_COOPERATIVE_MATRIX);
  const hal_device_info& b = devices_[1]->info;
  EXPECT_STREQ(b.name, "Double B");
  EXPECT_EQ(b.compute_capability_minor, 5u);
  EXPECT_EQ(b.max_shared_memory_per_block, 48u * 1024);  // no opt-in: the default limit
  // Discovery alone creates no context.
  EXPECT_EQ(cuda_test_double_call_count("cuDevicePrimaryCtxRetain"), 0);
}

TEST_F(CudaBackendTest, ResolvesEveryEntryPointAtItsPinnedVersion) {
  init();
  size_t count = 0;
  const hal::cuda::EntryPointInfo* entries = hal::cuda::entry_points(&count);
  ASSERT_GT(count, 40u);
  for (size_t i = 0; i < count; ++i) {
    EXPECT_EQ(cuda_test_double_requested_version(entries[i].name), entries[i].version)
        << entries[i].name;
  }
}

TEST_F(CudaBackendTest, MissingRequiredEntryPointIsUnavailable) {
  cuda_test_double_hide_entry_point("cuLaunchKernel");
  const std::string reason = init_fails(HAL_ERROR_UNAVAILABLE);
  EXPECT_TRUE(contains(reason, "cuLaunchKernel")) << reason;
  EXPECT_TRUE(contains(reason, "Update the NVIDIA driver")) << reason;
}

TEST_F(CudaBackendTest, MissingOptionalEntryPointsAreTolerated) {
  cuda_test_double_hide_entry_point("cuFuncGetParamInfo");
  cuda_test_double_hide_entry_point("cuPointerGetAttribute");
  init();
}

TEST_F(CudaBackendTest, NoDeviceMakesTheBackendUnavailableWithItsReason) {
  cuda_test_double_set_devices(nullptr, 0);
  const std::string reason = init_fails(HAL_ERROR_UNAVAILABLE);
  EXPECT_TRUE(contains(reason, "CUDA_ERROR_NO_DEVICE")) << reason;
  EXPECT_TRUE(contains(reason, "CUDA_VISIBLE_DEVICES")) << reason;
}

TEST_F(CudaBackendTest, CuInitFailureNamesTheError) {
  cuda_test_double_fail_always("cuInit", CUDA_ERROR_STUB_LIBRARY);
  const std::string reason = init_fails(HAL_ERROR_UNAVAILABLE);
  // The double cannot name this result, so the backend's own table does.
  EXPECT_TRUE(contains(reason, "CUDA_ERROR_STUB_LIBRARY")) << reason;
  EXPECT_TRUE(contains(reason, "stub")) << reason;
}

TEST_F(CudaBackendTest, MissingLibraryIsUnavailableNamingThePath) {
  const std::string saved = std::getenv("HAL_CUDA_LIBRARY");
  setenv("HAL_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  const std::string reason = init_fails(HAL_ERROR_UNAVAILABLE);
  setenv("HAL_CUDA_LIBRARY", saved.c_str(), 1);
  EXPECT_TRUE(contains(reason, "HAL_CUDA_LIBRARY")) << reason;
  EXPECT_TRUE(contains(reason, "/nonexistent/libcuda.so.1")) << reason;
  EXPECT_TRUE(contains(reason, "No such file")) << reason;  // dlerror's text
}

TEST_F(CudaBackendTest, LibraryWithoutGetProcAddressIsUnavailable) {
  const std::string saved = std::getenv("HAL_CUDA_LIBRARY");
  setenv("HAL_CUDA_LIBRARY", "libm.so.6", 1);
  const std::string reason = init_fails(HAL_ERROR_UNAVAILABLE);
  setenv("HAL_CUDA_LIBRARY", saved.c_str(), 1);
  EXPECT_TRUE(contains(reason, "cuGetProcAddress_v2")) << reason;
  EXPECT_TRUE(contains(reason, "12.0")) << reason;
}

// ===========================================================================================
// Memory, streams, events
// ===========================================================================================

TEST_F(CudaBackendTest, CopiesAndFillsMoveBytes) {
  init();
  hal::Allocation a = alloc(1024);
  hal::Allocation b = alloc(1024);
  EXPECT_NE(a.base, 0u);
  EXPECT_EQ(a.base % 256, 0u);
  EXPECT_EQ(a.size, 1024u);
  auto s = stream();
  std::vector<uint8_t> data(1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  ASSERT_EQ(s->copy_htod(range(a), data.data(), data.size(), nullptr), HAL_SUCCESS);
  ASSERT_EQ(s->copy_dtod(range(b, 16), range(a, 32), 256), HAL_SUCCESS);
  ASSERT_EQ(s->fill(range(b, 512), 0xAB, 1, 8), HAL_SUCCESS);
  ASSERT_EQ(s->fill(range(b, 600), 0x01020304u, 4, 16), HAL_SUCCESS);
  std::vector<uint8_t> out(1024, 0);
  ASSERT_EQ(s->copy_dtoh(out.data(), range(b), out.size(), nullptr), HAL_SUCCESS);
  ASSERT_EQ(s->synchronize(), HAL_SUCCESS);
  for (size_t i = 0; i < 256; ++i) ASSERT_EQ(out[16 + i], data[32 + i]) << i;
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(out[512 + i], 0xAB);
  uint32_t word = 0;
  std::memcpy(&word, &out[600 + 12], 4);
  EXPECT_EQ(word, 0x01020304u);
  s.reset();
  EXPECT_EQ(device().mem_free(a), HAL_SUCCESS);
  EXPECT_EQ(device().mem_free(b), HAL_SUCCESS);
  EXPECT_EQ(cuda_test_double_live_allocations(), 0);
}

TEST_F(CudaBackendTest, HtodSourceIsReusableOnReturnAlsoFromPinnedMemory) {
  init();
  hal::Allocation a = alloc(64);
  auto s = stream();
  hal::HostAllocation pinned_alloc{};
  ASSERT_EQ(device().host_alloc(64, &pinned_alloc), HAL_SUCCESS);
  pinned_alloc.size = 64;  // as the core sets it
  void* pinned = pinned_alloc.base;
  std::memset(pinned, 0x11, 64);
  ASSERT_EQ(s->copy_htod(range(a), pinned, 64, &pinned_alloc), HAL_SUCCESS);
  std::memset(pinned, 0x22, 64);  // reused at once, as hal allows
  std::vector<uint8_t> pageable(64, 0x33);
  ASSERT_EQ(s->copy_htod(range(a, 32), pageable.data(), 32, nullptr), HAL_SUCCESS);
  std::fill(pageable.begin(), pageable.end(), 0x44);
  std::vector<uint8_t> out(64, 0);
  ASSERT_EQ(s->copy_dtoh(out.data(), range(a), 64, nullptr), HAL_SUCCESS);
  ASSERT_EQ(s->synchronize(), HAL_SUCCESS);
  EXPECT_EQ(out[0], 0x11);
  EXPECT_EQ(out[31], 0x11);
  EXPECT_EQ(out[32], 0x33);
  EXPECT_EQ(out[63], 0x33);
  s.reset();
  EXPECT_EQ(device().host_free(pinned_alloc), HAL_SUCCESS);
  EXPECT_EQ(cuda_test_double_live_host_allocations(), 0);
}

TEST_F(CudaBackendTest, PinnedMemoryOfOtherCodeIsDetected) {
  init();
  hal::Allocation a = alloc(16);
  auto s = stream();
  // Page-locked memory hal's table does not know (no allocation given): the driver is asked.
  hal::HostAllocation pinned{};
  ASSERT_EQ(device().host_alloc(16, &pinned), HAL_SUCCESS);
  const int before = cuda_test_double_call_count("cuStreamSynchronize");
  std::vector<uint8_t> pageable(16, 1);
  ASSERT_EQ(s->copy_htod(range(a), pageable.data(), 16, nullptr), HAL_SUCCESS);
  EXPECT_EQ(cuda_test_double_call_count("cuStreamSynchronize"), before);  // no wait
  ASSERT_EQ(s->copy_htod(range(a), static_cast<uint8_t*>(pinned.base) + 4, 8, nullptr),
            HAL_SUCCESS);
  EXPECT_EQ(cuda_test_double_call_count("cuStreamSynchronize"), before + 1);
  // Memory the driver knows by another type (managed memory answers DEVICE or UNIFIED) is read
  // by the copy in place as well: the copy must have completed on return.
  hal::Allocation other = alloc(16);
  ASSERT_EQ(s->copy_htod(range(a), reinterpret_cast<const void*>(other.base), 8, nullptr),
            HAL_SUCCESS);
  EXPECT_EQ(cuda_test_double_call_count("cuStreamSynchronize"), before + 2);
  EXPECT_EQ(device().mem_free(other), HAL_SUCCESS);
  s.reset();
  EXPECT_EQ(device().host_free(pinned), HAL_SUCCESS);
}

// hal_mem_free lets work already issued finish: the device is synchronised before cuMemFree.
TEST_F(CudaBackendTest, FreeWaitsForTheDeviceFirst) {
  init();
  hal::Allocation a = alloc(256);
  const int syncs = cuda_test_double_call_count("cuCtxSynchronize");
  EXPECT_EQ(device().mem_free(a), HAL_SUCCESS) << hal::pending_error();
  EXPECT_EQ(cuda_test_double_call_count("cuCtxSynchronize"), syncs + 1);
  // A fault that surfaces there is reported, and the core is told the device is lost.
  hal::Allocation b = alloc(256);
  cuda_test_double_fail_next("cuCtxSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(device().mem_free(b), HAL_ERROR_LAUNCH_FAILED);
  EXPECT_TRUE(host_.lost(device()));
  EXPECT_TRUE(contains(host_.cause(device()), "CUDA_ERROR_ILLEGAL_ADDRESS"))
      << host_.cause(device());
}

TEST_F(CudaBackendTest, OutOfMemoryMapsToOutOfMemoryAndTheDeviceKeepsWorking) {
  init();
  cuda_test_double_fail_next("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  hal::Allocation allocation;
  EXPECT_EQ(device().mem_alloc(4096, &allocation), HAL_ERROR_OUT_OF_MEMORY);
  const std::string message = hal::pending_error();
  EXPECT_TRUE(contains(message, "cuMemAlloc of 4096 bytes")) << message;
  EXPECT_TRUE(contains(message, "CUDA_ERROR_OUT_OF_MEMORY")) << message;
  // A real exhaustion of the double's 1 GiB.
  EXPECT_EQ(device().mem_alloc(size_t{2} << 30, &allocation), HAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(device().mem_alloc(4096, &allocation), HAL_SUCCESS);
  cuda_test_double_fail_next("cuMemHostAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  hal::HostAllocation host{};
  EXPECT_EQ(device().host_alloc(64, &host), HAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(device().mem_free(allocation), HAL_SUCCESS);
}

TEST_F(CudaBackendTest, QueriesAnswerNotReadyWhileWorkIsPending) {
  init();
  hal::Allocation a = alloc(64);
  auto s = stream();
  std::unique_ptr<hal::Event> start;
  std::unique_ptr<hal::Event> end;
  ASSERT_EQ(device().create_event(&start), HAL_SUCCESS);
  ASSERT_EQ(device().create_event(&end), HAL_SUCCESS);
  EXPECT_EQ(start->query(), HAL_SUCCESS);  // never recorded
  ASSERT_EQ(s->record(*start), HAL_SUCCESS);
  ASSERT_EQ(s->fill(range(a), 0, 1, 64), HAL_SUCCESS);
  ASSERT_EQ(s->record(*end), HAL_SUCCESS);
  EXPECT_EQ(end->query(), HAL_ERROR_NOT_READY);
  EXPECT_EQ(end->query(), HAL_SUCCESS);
  float ms = -1;
  EXPECT_EQ(start->elapsed_ms(*end, &ms), HAL_SUCCESS) << hal::pending_error();
  EXPECT_GT(ms, 0.0f);
  ASSERT_EQ(s->fill(range(a), 0, 1, 64), HAL_SUCCESS);
  EXPECT_EQ(s->query(), HAL_ERROR_NOT_READY);
  EXPECT_EQ(s->query(), HAL_SUCCESS);
  auto other = stream();
  ASSERT_EQ(s->record(*start), HAL_SUCCESS);
  EXPECT_EQ(other->wait(*start), HAL_SUCCESS);
  EXPECT_EQ(start->synchronize(), HAL_SUCCESS);
  EXPECT_EQ(device().synchronize(), HAL_SUCCESS);
}

TEST_F(CudaBackendTest, AnyThreadMayCallIn) {
  init();
  hal::Allocation allocations[4];
  std::vector<std::thread> threads;
  for (auto& allocation : allocations) {
    threads.emplace_back([&] {
      EXPECT_EQ(device().mem_alloc(128, &allocation), HAL_SUCCESS) << hal::pending_error();
    });
  }
  for (auto& thread : threads) thread.join();
  for (auto& allocation : allocations) EXPECT_EQ(device().mem_free(allocation), HAL_SUCCESS);
  EXPECT_EQ(cuda_test_double_call_count("cuDevicePrimaryCtxRetain"), 1);
}

TEST_F(CudaBackendTest, EachCallRunsInItsDevicesContext) {
  cuda_test_double_device devices[2] = {};
  for (auto& d : devices) {
    d.cc_major = 8;
    d.shared_per_block = 48 * 1024;
    d.multiprocessors = 1;
  }
  std::strcpy(devices[0].name, "small");
  devices[0].total_memory = size_t{1} << 20;
  std::strcpy(devices[1].name, "large");
  devices[1].total_memory = size_t{1} << 30;
  cuda_test_double_set_devices(devices, 2);
  init();
  ASSERT_EQ(devices_.size(), 2u);
  // The double charges an allocation to the device of the current context.
  hal::Allocation big;
  EXPECT_EQ(devices_[1]->mem_alloc(size_t{4} << 20, &big), HAL_SUCCESS) << hal::pending_error();
  hal::Allocation too_big;
  EXPECT_EQ(devices_[0]->mem_alloc(size_t{4} << 20, &too_big), HAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(devices_[1]->mem_free(big), HAL_SUCCESS);
  EXPECT_EQ(cuda_test_double_call_count("cuDevicePrimaryCtxRetain"), 2);
}

// A thread that never called in has no current context; on the driver every call that frees or
// destroys needs the device's context there too (the double refuses them otherwise).
TEST_F(CudaBackendTest, FreesAndDestructorsWorkOnAThreadThatNeverCalledIn) {
  init();
  const int objects = cuda_test_double_live_objects();
  const int allocations = cuda_test_double_live_allocations();
  const int host_allocations = cuda_test_double_live_host_allocations();
  hal::Allocation a = alloc(256);
  hal::HostAllocation host{};
  ASSERT_EQ(device().host_alloc(64, &host), HAL_SUCCESS) << hal::pending_error();
  auto s = stream();
  std::unique_ptr<hal::Event> e;
  ASSERT_EQ(device().create_event(&e), HAL_SUCCESS) << hal::pending_error();
  auto module = load(HAL_IR_PTX, kPtx, std::strlen(kPtx));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(cuda_test_double_live_objects(), objects + 3);
  std::thread([&] {
    EXPECT_EQ(device().host_free(host), HAL_SUCCESS) << hal::pending_error();
    EXPECT_EQ(device().mem_free(a), HAL_SUCCESS) << hal::pending_error();
    e.reset();
    s.reset();
    module.reset();
    EXPECT_TRUE(hal::pending_error().empty()) << hal::pending_error();
  }).join();
  EXPECT_EQ(cuda_test_double_live_objects(), objects);
  EXPECT_EQ(cuda_test_double_live_allocations(), allocations);
  EXPECT_EQ(cuda_test_double_live_host_allocations(), host_allocations);
}

// ===========================================================================================
// Modules
// ===========================================================================================

TEST_F(CudaBackendTest, LoadsPtxAndDescribesItsEntries) {
  init();
  const size_t mixed_sizes[] = {8, 8, 8, 1};
  cuda_test_double_set_function("_Z5mixedPfmdc", mixed_sizes, 4, 512, 1024);
  auto module = load(HAL_IR_PTX, kPtx, std::strlen(kPtx));
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->functions.size(), 2u);
  const hal::FunctionDesc& add_one = module->functions[0]->desc;
  EXPECT_EQ(add_one.name, "add_one");
  EXPECT_TRUE(add_one.params_known);
  ASSERT_EQ(add_one.params.size(), 2u);
  EXPECT_EQ(add_one.params[0].kind, HAL_PARAM_POINTER);
  EXPECT_EQ(add_one.params[0].alignment, 4u);  // ".ptr .global .align 4"
  EXPECT_EQ(add_one.params[1].kind, HAL_PARAM_VALUE);
  EXPECT_EQ(add_one.params[1].size, 4u);
  EXPECT_EQ(add_one.block[0], 64u);
  EXPECT_EQ(add_one.block[1], 1u);
  EXPECT_EQ(add_one.max_threads_per_block, 1024u);
  const hal::FunctionDesc& mixed = module->functions[1]->desc;
  ASSERT_EQ(mixed.params.size(), 4u);
  EXPECT_EQ(mixed.params[0].kind, HAL_PARAM_POINTER);  // float*
  EXPECT_EQ(mixed.params[0].alignment, 1u);            // no ".ptr .align": any address
  EXPECT_EQ(mixed.params[1].kind, HAL_PARAM_VALUE);    // unsigned long, from the mangled name
  EXPECT_EQ(mixed.params[2].kind, HAL_PARAM_VALUE);    // double
  EXPECT_EQ(mixed.max_threads_per_block, 512u);
  EXPECT_EQ(mixed.static_shared_bytes, 1024u);
}

// __launch_bounds__ (.maxntid) bounds the block on every driver, whatever the driver reports
// (the test double answers 1024 threads for every function).
TEST_F(CudaBackendTest, MaxntidBoundsTheBlock) {
  init();
  const char* ptx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry bounded(.param .u64 .ptr .align 4 p)
.maxntid 64, 1, 1
{
  ret;
}
.visible .entry bounded_2d(.param .u64 .ptr .align 4 p)
.maxntid 16, 8, 1
{
  ret;
}
.visible .entry free_block(.param .u64 .ptr .align 4 p)
{
  ret;
}
)";
  auto module = load(HAL_IR_PTX, ptx, std::strlen(ptx));
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->functions.size(), 3u);
  EXPECT_EQ(module->functions[0]->desc.max_threads_per_block, 64u);
  EXPECT_EQ(module->functions[0]->desc.block[0], 0u) << ".maxntid is a limit, not a fixed size";
  EXPECT_EQ(module->functions[1]->desc.max_threads_per_block, 128u);
  EXPECT_EQ(module->functions[2]->desc.max_threads_per_block, 1024u);
}

TEST_F(CudaBackendTest, HandsTheDriverANulTerminatedCopyOfThePtx) {
  init();
  // The blob is followed by bytes that are not part of it and no NUL.
  std::string buffer = std::string(kPtx) + "GARBAGE-NOT-PART-OF-THE-BLOB";
  auto module = load(HAL_IR_PTX, buffer.data(), std::strlen(kPtx));
  ASSERT_NE(module, nullptr);
  std::vector<char> seen(buffer.size() + 16, 0);
  const size_t length = cuda_test_double_last_module(seen.data(), seen.size());
  EXPECT_EQ(length, std::strlen(kPtx));
  EXPECT_EQ(std::string(seen.data(), length), std::string(kPtx));
}

// The driver reads PTX up to its first NUL: hal must list the entries the driver compiled, not
// ones after the NUL that cuModuleGetFunction would then not find.
TEST_F(CudaBackendTest, PtxIsReadUpToItsFirstNul) {
  init();
  std::string blob = std::string(kPtx) + std::string(1, '\0') +
                     ".visible .entry hidden_after_nul()\n{\n  ret;\n}\n";
  auto module = load(HAL_IR_PTX, blob.data(), blob.size());
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->functions.size(), 2u);
  for (const auto& function : module->functions) EXPECT_NE(function->desc.name, "hidden_after_nul");
  std::vector<char> seen(blob.size() + 16, 0);
  EXPECT_EQ(cuda_test_double_last_module(seen.data(), seen.size()), std::strlen(kPtx));
  // Nothing before the NUL is no PTX at all.
  const std::string empty(1, '\0');
  load(HAL_IR_PTX, empty.data(), empty.size(), HAL_ERROR_INVALID_IR);
}

TEST_F(CudaBackendTest, MalformedPtxIsInvalidIrBeforeTheDriverSeesIt) {
  init();
  const std::string bad = ".version 8.0\n.target sm_80\n.address_size 64\n.entry k(.param .u32";
  load(HAL_IR_PTX, bad.data(), bad.size(), HAL_ERROR_INVALID_IR);
  EXPECT_TRUE(contains(hal::pending_error(), "line 4")) << hal::pending_error();
  EXPECT_EQ(cuda_test_double_call_count("cuModuleLoadDataEx"), 0);
}

TEST_F(CudaBackendTest, PtxForANewerTargetIsNotSupportedNamingBoth) {
  init();
  const std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.entry k() { ret; }\n";
  load(HAL_IR_PTX, ptx.data(), ptx.size(), HAL_ERROR_NOT_SUPPORTED);
  const std::string message = hal::pending_error();
  EXPECT_TRUE(contains(message, "sm_90")) << message;
  EXPECT_TRUE(contains(message, "8.0")) << message;
  EXPECT_EQ(cuda_test_double_call_count("cuModuleLoadDataEx"), 0);
  const std::string arch = ".version 8.0\n.target sm_75a\n.address_size 64\n";
  load(HAL_IR_PTX, arch.data(), arch.size(), HAL_ERROR_NOT_SUPPORTED);
  const std::string narrow = ".version 8.0\n.target sm_80\n";
  load(HAL_IR_PTX, narrow.data(), narrow.size(), HAL_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(contains(hal::pending_error(), "32-bit")) << hal::pending_error();
}

TEST_F(CudaBackendTest, JitLogReachesTheFailureText) {
  init();
  cuda_test_double_set_jit_error_log(
      "ptxas application ptx input, line 12; error : Unknown "
      "symbol 'oops'");
  cuda_test_double_fail_next("cuModuleLoadDataEx", CUDA_ERROR_INVALID_PTX);
  load(HAL_IR_PTX, kPtx, std::strlen(kPtx), HAL_ERROR_COMPILE_FAILED);
  const std::string message = hal::pending_error();
  EXPECT_TRUE(contains(message, "CUDA_ERROR_INVALID_PTX")) << message;
  EXPECT_TRUE(contains(message, "Unknown symbol 'oops'")) << message;
  EXPECT_TRUE(contains(message, "line 12")) << message;
}

TEST_F(CudaBackendTest, UnsupportedPtxVersionNamesBothVersions) {
  init();
  const std::string ptx = ".version 9.9\n.target sm_80\n.address_size 64\n";
  cuda_test_double_fail_next("cuModuleLoadDataEx", CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  load(HAL_IR_PTX, ptx.data(), ptx.size(), HAL_ERROR_COMPILE_FAILED);
  const std::string message = hal::pending_error();
  EXPECT_TRUE(contains(message, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION")) << message;
  EXPECT_TRUE(contains(message, ".version 9.9")) << message;
  EXPECT_TRUE(contains(message, "CUDA 12.4")) << message;
  EXPECT_TRUE(contains(message, "update the driver")) << message;
}

// A minimal 64-bit ELF header for EM_CUDA with no sections.
std::vector<uint8_t> tiny_cubin() {
  std::vector<uint8_t> elf(64, 0);
  const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  std::memcpy(elf.data(), ident, sizeof(ident));
  elf[0x12] = 190;
  elf[0x34] = 64;  // e_ehsize
  elf[0x3a] = 64;  // e_shentsize
  return elf;
}

TEST_F(CudaBackendTest, LoadsCubinsAndListsTheirFunctions) {
  init();
  const char* names[] = {"_Z3fooPfm", "bar"};
  cuda_test_double_set_binary_functions(names, 2);
  const size_t foo_sizes[] = {8, 8, 4};
  cuda_test_double_set_function("_Z3fooPfm", foo_sizes, 2, 256, 0);
  const std::vector<uint8_t> cubin = tiny_cubin();
  auto module = load(HAL_IR_CUBIN, cubin.data(), cubin.size());
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->functions.size(), 2u);
  const hal::FunctionDesc& foo = module->functions[0]->desc;
  EXPECT_EQ(foo.name, "_Z3fooPfm");
  EXPECT_TRUE(foo.params_known);
  ASSERT_EQ(foo.params.size(), 2u);
  EXPECT_EQ(foo.params[0].kind, HAL_PARAM_POINTER);
  EXPECT_EQ(foo.params[1].kind, HAL_PARAM_VALUE);
  EXPECT_EQ(foo.params[1].alignment, 8u);
  EXPECT_EQ(foo.max_threads_per_block, 256u);
  EXPECT_EQ(module->functions[1]->desc.name, "bar");
  EXPECT_TRUE(module->functions[1]->desc.params.empty());
}

TEST_F(CudaBackendTest, CubinParametersAreUnknownWithoutParamInfo) {
  cuda_test_double_hide_entry_point("cuFuncGetParamInfo");
  init();
  const char* names[] = {"k"};
  cuda_test_double_set_binary_functions(names, 1);
  const std::vector<uint8_t> cubin = tiny_cubin();
  auto module = load(HAL_IR_CUBIN, cubin.data(), cubin.size());
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->functions.size(), 1u);
  EXPECT_FALSE(module->functions[0]->desc.params_known);
}

TEST_F(CudaBackendTest, WithoutEnumerationCubinsUseTheirSymbolsAndFatbinsFail) {
  cuda_test_double_hide_entry_point("cuModuleEnumerateFunctions");
  init();
  const std::vector<uint8_t> cubin = tiny_cubin();  // no symbol table: no kernels
  auto module = load(HAL_IR_CUBIN, cubin.data(), cubin.size());
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(module->functions.empty());
  std::vector<uint8_t> fatbin(32, 0);
  const uint32_t magic = 0xBA55ED50u;
  std::memcpy(fatbin.data(), &magic, 4);
  fatbin[6] = 16;
  fatbin[8] = 16;
  load(HAL_IR_FATBIN, fatbin.data(), fatbin.size(), HAL_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(contains(hal::pending_error(), "12.4")) << hal::pending_error();
}

TEST_F(CudaBackendTest, TruncatedBinariesAreInvalidIr) {
  init();
  std::vector<uint8_t> cubin = tiny_cubin();
  cubin[0x28] = 200;  // e_shoff beyond the end
  cubin[0x3c] = 1;    // one section header
  load(HAL_IR_CUBIN, cubin.data(), cubin.size(), HAL_ERROR_INVALID_IR);
  std::vector<uint8_t> other = tiny_cubin();
  other[0x12] = 62;  // x86-64
  load(HAL_IR_CUBIN, other.data(), other.size(), HAL_ERROR_INVALID_IR);
  EXPECT_TRUE(contains(hal::pending_error(), "machine 62")) << hal::pending_error();
  std::vector<uint8_t> fatbin(32, 0);
  const uint32_t magic = 0xBA55ED50u;
  std::memcpy(fatbin.data(), &magic, 4);
  fatbin[6] = 16;   // header size
  fatbin[8] = 100;  // body size: more than given
  load(HAL_IR_FATBIN, fatbin.data(), fatbin.size(), HAL_ERROR_INVALID_IR);
  fatbin[8] = 16;
  const char* names[] = {"k"};
  cuda_test_double_set_binary_functions(names, 1);
  auto module = load(HAL_IR_FATBIN, fatbin.data(), fatbin.size());
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->functions.size(), 1u);
  EXPECT_EQ(cuda_test_double_call_count("cuModuleLoadDataEx"), 1);
}

TEST_F(CudaBackendTest, UnloadWaitsForIssuedWork) {
  init();
  auto module = load(HAL_IR_PTX, kPtx, std::strlen(kPtx));
  const int syncs = cuda_test_double_call_count("cuCtxSynchronize");
  module.reset();
  EXPECT_EQ(cuda_test_double_call_count("cuCtxSynchronize"), syncs + 1);
  EXPECT_EQ(cuda_test_double_call_count("cuModuleUnload"), 1);
}

// ===========================================================================================
// Launch
// ===========================================================================================

TEST_F(CudaBackendTest, LaunchPassesEveryParameterByteToTheDriver) {
  init();
  const size_t sizes[] = {8, 8, 8, 1};
  cuda_test_double_set_function("_Z5mixedPfmdc", sizes, 4, 1024, 0);
  auto module = load(HAL_IR_PTX, kPtx, std::strlen(kPtx));
  ASSERT_NE(module, nullptr);
  hal::Function& mixed = *module->functions[1];
  hal::Allocation a = alloc(256);
  auto s = stream();
  hal_deviceptr pointer = a.base + 16;
  uint64_t count = 0x1122334455667788ull;
  double scale = 2.5;
  char flag = 'z';
  void* args[] = {&pointer, &count, &scale, &flag};
  hal::LaunchParams params{{1, 1, 1}, {1, 1, 1}};
  params.grid[0] = 3;
  params.grid[1] = 2;
  params.block[0] = 128;
  params.shared_bytes = 512;
  params.args = args;
  hal_driver_range ranges[4] = {};
  params.pointers = ranges;
  params.param_count = 4;
  ranges[0] = c_range(a, 16);
  ASSERT_EQ(s->launch(mixed, params), HAL_SUCCESS) << hal::pending_error();
  ASSERT_EQ(cuda_test_double_launch_count(), 1);
  cuda_test_double_launch launch{};
  ASSERT_EQ(cuda_test_double_get_launch(0, &launch), 1);
  EXPECT_STREQ(launch.function, "_Z5mixedPfmdc");
  EXPECT_EQ(launch.grid[0], 3u);
  EXPECT_EQ(launch.grid[1], 2u);
  EXPECT_EQ(launch.grid[2], 1u);
  EXPECT_EQ(launch.block[0], 128u);
  EXPECT_EQ(launch.block[1], 1u);
  EXPECT_EQ(launch.shared_bytes, 512u);
  ASSERT_EQ(launch.param_count, 4);
  uint64_t seen_pointer = 0;
  uint64_t seen_count = 0;
  double seen_scale = 0;
  std::memcpy(&seen_pointer, launch.param_bytes + launch.param_offsets[0], 8);
  std::memcpy(&seen_count, launch.param_bytes + launch.param_offsets[1], 8);
  std::memcpy(&seen_scale, launch.param_bytes + launch.param_offsets[2], 8);
  EXPECT_EQ(seen_pointer, a.base + 16);
  EXPECT_EQ(seen_count, count);
  EXPECT_EQ(seen_scale, 2.5);
  EXPECT_EQ(launch.param_bytes[launch.param_offsets[3]], 'z');
}

TEST_F(CudaBackendTest, LargeDynamicSharedMemoryOptsIn) {
  init();
  const size_t sizes[] = {8, 4};
  cuda_test_double_set_function("add_one", sizes, 2, 1024, 4096);
  auto module = load(HAL_IR_PTX, kPtx, std::strlen(kPtx));
  ASSERT_NE(module, nullptr);
  hal::Function& add_one = *module->functions[0];
  EXPECT_EQ(add_one.desc.static_shared_bytes, 4096u);
  hal::Allocation a = alloc(256);
  auto s = stream();
  hal_deviceptr pointer = a.base;
  uint32_t n = 64;
  void* args[] = {&pointer, &n};
  hal::LaunchParams params{{1, 1, 1}, {1, 1, 1}};
  params.block[0] = 64;
  params.args = args;
  hal_driver_range ranges[2] = {};
  params.pointers = ranges;
  params.param_count = 2;
  ranges[0] = c_range(a);
  params.shared_bytes = 40 * 1024;  // fits under 48 KiB with the static 4 KiB
  ASSERT_EQ(s->launch(add_one, params), HAL_SUCCESS) << hal::pending_error();
  EXPECT_EQ(cuda_test_double_max_dynamic_shared("add_one"), -1);
  params.shared_bytes = 100 * 1024;
  ASSERT_EQ(s->launch(add_one, params), HAL_SUCCESS) << hal::pending_error();
  EXPECT_EQ(cuda_test_double_max_dynamic_shared("add_one"), 100 * 1024);
  const int sets = cuda_test_double_call_count("cuFuncSetAttribute");
  params.shared_bytes = 90 * 1024;  // already allowed
  ASSERT_EQ(s->launch(add_one, params), HAL_SUCCESS);
  EXPECT_EQ(cuda_test_double_call_count("cuFuncSetAttribute"), sets);
  // The core refuses more than the opt-in limit before the driver is called (Launch tests in
  // tests/common): the device must report that limit, not the 48 KiB default.
  EXPECT_EQ(device().info.max_shared_memory_per_block, 160u * 1024);
}

// The attribute is per function: a smaller request raced by another stream must never leave it
// below a size a launch relies on. The double sleeps in cuFuncSetAttribute so that the second
// request arrives while the first is being set, and refuses a launch above the attribute.
TEST_F(CudaBackendTest, ConcurrentLaunchesNeverLowerTheSharedMemoryLimit) {
  init();
  const size_t sizes[] = {8, 4};
  cuda_test_double_set_function("add_one", sizes, 2, 1024, 0);
  auto module = load(HAL_IR_PTX, kPtx, std::strlen(kPtx));
  ASSERT_NE(module, nullptr);
  hal::Function& add_one = *module->functions[0];
  hal::Allocation a = alloc(256);
  hal_deviceptr pointer = a.base;
  uint32_t n = 64;
  void* args[] = {&pointer, &n};
  const auto launch = [&](hal::Stream& s, uint32_t shared_bytes) {
    hal::LaunchParams params{{1, 1, 1}, {1, 1, 1}};
    params.block[0] = 64;
    params.args = args;
    hal_driver_range ranges[2] = {};
    params.pointers = ranges;
    params.param_count = 2;
    ranges[0] = c_range(a);
    params.shared_bytes = shared_bytes;
    return s.launch(add_one, params);
  };
  auto big_stream = stream();
  auto small_stream = stream();
  cuda_test_double_delay("cuFuncSetAttribute", 50 * 1000);
  std::thread big([&] { EXPECT_EQ(launch(*big_stream, 112 * 1024), HAL_SUCCESS); });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::thread small([&] { EXPECT_EQ(launch(*small_stream, 64 * 1024), HAL_SUCCESS); });
  big.join();
  small.join();
  EXPECT_EQ(cuda_test_double_max_dynamic_shared("add_one"), 112 * 1024);
  EXPECT_EQ(launch(*big_stream, 112 * 1024), HAL_SUCCESS) << hal::pending_error();
  EXPECT_EQ(big_stream->synchronize(), HAL_SUCCESS);
  EXPECT_EQ(small_stream->synchronize(), HAL_SUCCESS);
  EXPECT_EQ(device().mem_free(a), HAL_SUCCESS);
}

// A fault that surfaces while a module unloads (its destructor synchronises first) still
// reaches the core, which has no caller to tell, and nothing more is asked of the dead context.
TEST_F(CudaBackendTest, AFaultSeenWhileUnloadingReportsTheDeviceLost) {
  init();
  auto module = load(HAL_IR_PTX, kPtx, std::strlen(kPtx));
  ASSERT_NE(module, nullptr);
  cuda_test_double_fail_next("cuCtxSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS);
  module.reset();
  EXPECT_TRUE(hal::pending_error().empty()) << hal::pending_error();
  EXPECT_TRUE(host_.lost(device()));
  EXPECT_TRUE(contains(host_.cause(device()), "cuCtxSynchronize before cuModuleUnload"))
      << host_.cause(device());
  EXPECT_EQ(cuda_test_double_call_count("cuModuleUnload"), 0);
  // Another module of the lost device is left alone too.
  auto second = load(HAL_IR_PTX, kPtx, std::strlen(kPtx));
  ASSERT_NE(second, nullptr);
  const int syncs = cuda_test_double_call_count("cuCtxSynchronize");
  second.reset();
  EXPECT_EQ(cuda_test_double_call_count("cuCtxSynchronize"), syncs);
  EXPECT_EQ(cuda_test_double_call_count("cuModuleUnload"), 0);
}

TEST_F(CudaBackendTest, AFaultingKernelMakesTheDeviceUnusable) {
  init();
  auto module = load(HAL_IR_PTX, kPtx, std::strlen(kPtx));
  hal::Allocation a = alloc(256);
  auto s = stream();
  cuda_test_double_fail_next("cuStreamSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(s->synchronize(), HAL_ERROR_LAUNCH_FAILED);
  EXPECT_TRUE(contains(hal::pending_error(), "CUDA_ERROR_ILLEGAL_ADDRESS")) << hal::pending_error();
  // The call reports the fault; the core is told that the context is gone (it then refuses
  // every later call: DeviceLost in tests/common, PtxCpuFaults through the public API).
  EXPECT_TRUE(host_.lost(device()));
  const std::string cause = host_.cause(device());
  EXPECT_TRUE(contains(cause, "CUDA_ERROR_ILLEGAL_ADDRESS")) << cause;
  EXPECT_TRUE(contains(cause, "cuStreamSynchronize")) << cause;
  // Frees and destruction still succeed, without the dead context.
  const int frees = cuda_test_double_call_count("cuMemFree");
  EXPECT_EQ(device().mem_free(a), HAL_SUCCESS);
  EXPECT_EQ(cuda_test_double_call_count("cuMemFree"), frees);
  s.reset();
  module.reset();
  EXPECT_EQ(cuda_test_double_call_count("cuModuleUnload"), 0);
}

TEST_F(CudaBackendTest, ALaunchThatCannotStartLeavesTheDeviceUsable) {
  init();
  auto module = load(HAL_IR_PTX, kPtx, std::strlen(kPtx));
  hal::Allocation a = alloc(256);
  auto s = stream();
  hal_deviceptr pointer = a.base;
  uint32_t n = 1;
  void* args[] = {&pointer, &n};
  hal::LaunchParams params{{1, 1, 1}, {1, 1, 1}};
  params.block[0] = 64;
  params.args = args;
  hal_driver_range ranges[2] = {};
  params.pointers = ranges;
  params.param_count = 2;
  cuda_test_double_fail_next("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  EXPECT_EQ(s->launch(*module->functions[0], params), HAL_ERROR_LAUNCH_FAILED);
  EXPECT_TRUE(contains(hal::pending_error(), "add_one")) << hal::pending_error();
  EXPECT_EQ(s->launch(*module->functions[0], params), HAL_SUCCESS);
  EXPECT_EQ(s->synchronize(), HAL_SUCCESS);
}

// Every driver call the backend makes can fail; each failure maps through the table and
// carries the driver's error name.
TEST_F(CudaBackendTest, EveryDriverFailureIsReportedWithItsName) {
  init();
  struct Case {
    const char* entry_point;
    std::function<hal_status(CudaBackendTest&)> call;
  };
  hal::Allocation a = alloc(256);
  auto s = stream();
  std::unique_ptr<hal::Event> e;
  ASSERT_EQ(device().create_event(&e), HAL_SUCCESS);
  std::vector<uint8_t> host(16);
  const std::vector<Case> cases = {
      {"cuMemAlloc",
       [](CudaBackendTest& t) {
         hal::Allocation x;
         return t.device().mem_alloc(16, &x);
       }},
      {"cuStreamCreate",
       [](CudaBackendTest& t) {
         std::unique_ptr<hal::Stream> x;
         return t.device().create_stream(&x);
       }},
      {"cuEventCreate",
       [](CudaBackendTest& t) {
         std::unique_ptr<hal::Event> x;
         return t.device().create_event(&x);
       }},
      {"cuMemcpyHtoDAsync",
       [&](CudaBackendTest&) { return s->copy_htod(range(a), host.data(), 16, nullptr); }},
      {"cuMemcpyDtoHAsync",
       [&](CudaBackendTest&) { return s->copy_dtoh(host.data(), range(a), 16, nullptr); }},
      {"cuMemcpyDtoDAsync",
       [&](CudaBackendTest&) { return s->copy_dtod(range(a), range(a, 64), 16); }},
      {"cuMemsetD8Async", [&](CudaBackendTest&) { return s->fill(range(a), 1, 1, 16); }},
      {"cuMemsetD32Async", [&](CudaBackendTest&) { return s->fill(range(a), 1, 4, 16); }},
      {"cuEventRecord", [&](CudaBackendTest&) { return s->record(*e); }},
      {"cuStreamWaitEvent", [&](CudaBackendTest&) { return s->wait(*e); }},
      {"cuStreamQuery", [&](CudaBackendTest&) { return s->query(); }},
      {"cuEventQuery", [&](CudaBackendTest&) { return e->query(); }},
      {"cuEventSynchronize", [&](CudaBackendTest&) { return e->synchronize(); }},
      {"cuCtxSynchronize", [](CudaBackendTest& t) { return t.device().synchronize(); }},
      {"cuModuleGetFunction",
       [](CudaBackendTest& t) {
         std::unique_ptr<hal::Module> m;
         return t.device().load_module(HAL_IR_PTX, reinterpret_cast<const uint8_t*>(kPtx),
                                       std::strlen(kPtx), {}, &m);
       }},
      {"cuFuncGetAttribute",
       [](CudaBackendTest& t) {
         std::unique_ptr<hal::Module> m;
         return t.device().load_module(HAL_IR_PTX, reinterpret_cast<const uint8_t*>(kPtx),
                                       std::strlen(kPtx), {}, &m);
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.entry_point);
    cuda_test_double_fail_next(c.entry_point, CUDA_ERROR_INVALID_VALUE);
    hal::clear_pending_error();
    EXPECT_EQ(c.call(*this), HAL_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(hal::pending_error(), "CUDA_ERROR_INVALID_VALUE")) << hal::pending_error();
    EXPECT_TRUE(contains(hal::pending_error(), "failed")) << hal::pending_error();
  }
  EXPECT_FALSE(host_.lost(device()));
}

}  // namespace
