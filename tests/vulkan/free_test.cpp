// Frees that do not wait for the device (VulkanDevice::mem_free and host_free; device.h says how
// the release is deferred): a free on one thread returns while another thread's stream runs a
// kernel, the freed memory is not handed out again while that kernel runs, and it is released
// once the kernel has completed, or at once when nothing runs; an allocation that runs out of
// memory while releases are pending waits for them; streams and a device destroyed with releases
// pending release everything (ASan's leak check sees the rest).
//
// The kernel (shaders/spin_until_flag.comp) polls a flag in device memory until the test sets it
// with a copy on a stream that has nothing to do, which the host does itself when device memory
// is mapped (lavapipe). Its bound, kRounds polls in each invocation of kGrid workgroups, is
// about six seconds on lavapipe: a free that waits for the kernel makes these tests fail after that
// time rather than hang. No test asserts on time: "the free did not wait" is "the kernel still runs
// after the free returned", which a free that waits for it cannot produce.
//
// ConcurrentFree is named so that the ThreadSanitizer run (tools/sanitize.sh) takes it;
// DeferredFreeTeardown is not: it destroys a VkDevice, which no other test does, and the Vulkan
// driver and validation layer take their own locks in an order ThreadSanitizer may report there.
#include "host_double.h"
#include "vk_test_util.h"
#include "vulkan/instance.h"
#include "vulkan/memory.h"
#include "vulkan/stream.h"
#include "vulkan/stream_core.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace hal_vk_test;

constexpr uint32_t kRounds = 60000;  // below lavapipe's 65535-iteration loop limit
constexpr uint32_t kBlock = 32;      // the shader's workgroup size
constexpr uint32_t kGrid = 256;

bool overlaps(hal_deviceptr a, size_t a_size, hal_deviceptr b, size_t b_size) {
  return a < b + b_size && b < a + a_size;
}

class ConcurrentFree : public VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_OK(hal_stream_create(device_, &idle_));
    backend_ = backend_device(device_);
    ASSERT_NE(backend_, nullptr);
    if (!backend_->memory().device_mapped()) {
      // The host sets the kernel's flag itself only in memory it maps; elsewhere the copy would
      // queue behind the spinning kernel.
      GTEST_SKIP() << "device memory is not mapped: the kernel's flag cannot be set under it";
    }
    spin_ = function(load("spin_until_flag"), "main");
    ASSERT_NE(spin_, nullptr);
    flag_ = alloc(4);
    seen_ = alloc(8);
    ASSERT_OK(hal_memset_d32(stream_, flag_, 0, 1));
    ASSERT_OK(hal_memset_d32(stream_, seen_, 0, 2));
    ASSERT_OK(hal_stream_synchronize(stream_));
  }

  void TearDown() override {
    if (idle_ != nullptr) {
      // A test that failed half-way may leave the kernel running: end it.
      set_flag();
      EXPECT_OK(hal_stream_synchronize(stream_));
      EXPECT_OK(hal_stream_destroy(idle_));
    }
    VulkanTest::TearDown();
  }

  // Records the kernel on stream_ (it writes |victim|), without submitting it.
  void launch(hal_deviceptr victim, uint32_t rounds = kRounds) {
    void* args[] = {&flag_, &seen_, &victim, &rounds};
    hal_launch_config config{};
    config.grid[0] = kGrid;
    config.grid[1] = config.grid[2] = 1;
    config.block[0] = kBlock;
    config.block[1] = config.block[2] = 1;
    ASSERT_OK(hal_launch(stream_, spin_, &config, args));
  }

  // Launches the kernel and submits it.
  void start(hal_deviceptr victim) {
    launch(victim);
    // The kernel cannot have finished: nothing set the flag.
    ASSERT_HAL(HAL_ERROR_NOT_READY, hal_stream_query(stream_));
  }

  // The backend's batching core behind stream_.
  std::shared_ptr<hal::vulkan::StreamCore> core() {
    auto object = hal::find_as<hal::StreamObject>(stream_, hal::HandleKind::kStream, "stream");
    if (!object) return nullptr;
    auto* stream = dynamic_cast<hal::vulkan::VulkanStream*>(hal::stream_of(object->impl));
    return stream != nullptr ? stream->core() : nullptr;
  }

  // Ends the kernel: a copy on a stream with nothing to do, done by the host on mapped memory.
  void set_flag() {
    const uint32_t one = 1;
    EXPECT_OK(hal_memcpy_htod(idle_, flag_, &one, sizeof one));
    EXPECT_OK(hal_stream_synchronize(idle_));
  }

  // Waits for the kernel; returns how many invocations saw the flag and how many ran.
  std::vector<uint32_t> finish() {
    set_flag();
    EXPECT_OK(hal_stream_synchronize(stream_));
    return download<uint32_t>(seen_, 2);
  }

  bool kernel_running() { return hal_stream_query(stream_) == HAL_ERROR_NOT_READY; }

  hal::vulkan::MemoryManager& memory() { return backend_->memory(); }

  // Runs |free| on a thread of its own, as a program's other thread would, and returns its status.
  static hal_status on_other_thread(const std::function<hal_status()>& free) {
    hal_status status = HAL_ERROR_INTERNAL;
    std::thread thread([&] { status = free(); });
    thread.join();
    return status;
  }

  hal_stream idle_ = nullptr;
  hal::vulkan::VulkanDevice* backend_ = nullptr;
  hal_function spin_ = nullptr;
  hal_deviceptr flag_ = 0;
  hal_deviceptr seen_ = 0;
};

// One thread frees a scratch buffer while another thread's stream runs a long
// kernel. Before, the free waited for every stream of the device, so it returned only once the
// kernel had given up (its bound) and the stream was idle.
TEST_F(ConcurrentFree, FreeOnAnotherThreadDoesNotWaitForARunningKernel) {
  const hal_deviceptr victim = alloc(4096);
  hal_deviceptr scratch = 0;
  ASSERT_OK(hal_mem_alloc(device_, 1 << 16, &scratch));
  start(victim);
  // Unrelated memory, then memory the running kernel writes: neither free waits for it.
  ASSERT_OK(on_other_thread([&] { return hal_mem_free(device_, scratch); }));
  EXPECT_TRUE(kernel_running()) << "hal_mem_free waited for another stream's kernel";
  ASSERT_OK(on_other_thread([&] { return hal_mem_free(device_, victim); }));
  allocations_.erase(std::find(allocations_.begin(), allocations_.end(), victim));
  EXPECT_TRUE(kernel_running()) << "hal_mem_free waited for the kernel using the memory";
  EXPECT_GE(memory().pending_releases(), 2u);
  const std::vector<uint32_t> seen = finish();
  // Every invocation ran; those still polling when the flag came saw it (none would have, had
  // the free waited for the kernel to run out of polls).
  EXPECT_EQ(seen[1], kGrid * kBlock);
  EXPECT_GT(seen[0], 0u);
  EXPECT_EQ(memory().pending_releases(), 0u);
}

// The memory is never handed out again while work issued before the free may use it, and it is
// released once that work has completed.
TEST_F(ConcurrentFree, FreedMemoryIsNotReusedUnderARunningKernel) {
  constexpr size_t kSize = 4096;
  const uint64_t bytes_before = memory().device_bytes();
  hal_deviceptr victim = 0;
  ASSERT_OK(hal_mem_alloc(device_, kSize, &victim));
  start(victim);
  ASSERT_OK(on_other_thread([&] { return hal_mem_free(device_, victim); }));
  ASSERT_EQ(memory().pending_releases(), 1u);
  // Allocations of the same size, which the best-fit allocator would give the freed range first.
  std::vector<hal_deviceptr> later(8, 0);
  for (hal_deviceptr& ptr : later) {
    ASSERT_OK(hal_mem_alloc(device_, kSize, &ptr));
    EXPECT_FALSE(overlaps(ptr, kSize, victim, kSize))
        << "memory freed under a running kernel was handed out again";
  }
  ASSERT_TRUE(kernel_running()) << "the kernel ended before the check (it ran out of polls)";
  // Their frees are deferred too: the device does not know which memory the kernel uses.
  for (hal_deviceptr ptr : later) ASSERT_OK(hal_mem_free(device_, ptr));
  EXPECT_EQ(memory().device_bytes(), bytes_before + 9 * kSize);
  EXPECT_EQ(memory().pending_releases(), 9u);
  ASSERT_TRUE(kernel_running());
  const std::vector<uint32_t> seen = finish();
  EXPECT_EQ(seen[1], kGrid * kBlock);
  // The kernel completed: everything freed meanwhile is back with the allocator.
  EXPECT_EQ(memory().pending_releases(), 0u);
  EXPECT_EQ(memory().device_bytes(), bytes_before);
}

// Host memory from hal_host_alloc that a queued copy writes: its free returns while the copy
// still waits behind the kernel, and the memory stays until the copy has run.
TEST_F(ConcurrentFree, HostFreeDoesNotWaitForQueuedCopies) {
  const hal_deviceptr victim = alloc(4096);
  void* host = nullptr;
  ASSERT_OK(hal_host_alloc(device_, 4096, &host));
  start(victim);
  ASSERT_OK(hal_memcpy_dtoh(stream_, host, seen_, 8));  // behind the kernel
  ASSERT_OK(on_other_thread([&] { return hal_host_free(device_, host); }));
  EXPECT_TRUE(kernel_running()) << "hal_host_free waited for another stream's kernel";
  EXPECT_EQ(memory().pending_releases(), 1u);
  finish();
  EXPECT_EQ(memory().pending_releases(), 0u);
}

// With nothing running, a free releases the memory before it returns, also when the streams'
// work has completed without any call having seen it complete yet.
TEST_F(ConcurrentFree, FreeWithNothingRunningReleasesAtOnce) {
  const uint64_t bytes_before = memory().device_bytes();
  hal_deviceptr ptr = 0;
  ASSERT_OK(hal_mem_alloc(device_, 4096, &ptr));
  EXPECT_EQ(memory().device_bytes(), bytes_before + 4096);
  ASSERT_OK(hal_mem_free(device_, ptr));
  EXPECT_EQ(memory().pending_releases(), 0u);
  EXPECT_EQ(memory().device_bytes(), bytes_before);

  // The kernel (with the flag set, it polls once) runs and completes; only a stream call would
  // see that, and none is made before the free.
  ASSERT_OK(hal_mem_alloc(device_, 4096, &ptr));
  set_flag();
  launch(ptr);
  std::shared_ptr<hal::vulkan::StreamCore> stream_core = core();
  ASSERT_NE(stream_core, nullptr);
  ASSERT_OK(stream_core->flush());
  backend_->wait_idle();
  {
    auto lock = stream_core->lock();
    ASSERT_EQ(stream_core->in_flight_count_locked(), 1u);
  }
  ASSERT_OK(hal_mem_free(device_, ptr));
  EXPECT_EQ(memory().pending_releases(), 0u);
  EXPECT_EQ(memory().device_bytes(), bytes_before);
  EXPECT_OK(hal_stream_synchronize(stream_));
}

// An allocation that runs out of memory while freed memory waits for work waits for that work
// and tries again, rather than failing for memory that is about to come back. Running out is
// provoked with a cap on the number of memory objects (a block each; a host allocation each).
TEST_F(ConcurrentFree, OutOfMemoryWaitsForPendingReleases) {
  const size_t big = memory().block_size() / 2 + 4096;  // a block of its own
  set_flag();                                           // the kernel below polls once
  // Frees |count| allocations after work that may use them was recorded (not even submitted),
  // caps the memory objects at those in use, and returns |allocate|'s status under the cap.
  auto allocate_after_free = [&](const std::function<hal_status()>& free,
                                 const std::function<hal_status()>& allocate, uint64_t count,
                                 std::string* error) {
    launch(seen_, 1);
    EXPECT_OK(free());
    EXPECT_EQ(memory().pending_releases(), count);
    memory().set_memory_object_limit_for_testing(static_cast<uint32_t>(memory().memory_objects()));
    const hal_status status = allocate();
    *error = hal_last_error();
    memory().set_memory_object_limit_for_testing(0);
    EXPECT_EQ(memory().pending_releases(), 0u);
    return status;
  };
  std::string error;

  hal_deviceptr ptr = 0;
  ASSERT_OK(hal_mem_alloc(device_, big, &ptr));
  EXPECT_OK(allocate_after_free([&] { return hal_mem_free(device_, ptr); },
                                [&] { return hal_mem_alloc(device_, big, &ptr); }, 1, &error))
      << error;
  EXPECT_OK(hal_mem_free(device_, ptr));
  EXPECT_OK(hal_stream_synchronize(stream_));

  void* host = nullptr;
  ASSERT_OK(hal_host_alloc(device_, 4096, &host));
  EXPECT_OK(allocate_after_free([&] { return hal_host_free(device_, host); },
                                [&] { return hal_host_alloc(device_, 4096, &host); }, 1, &error))
      << error;
  EXPECT_OK(hal_host_free(device_, host));
  EXPECT_OK(hal_stream_synchronize(stream_));

  // With nothing pending, running out is reported as before.
  memory().set_memory_object_limit_for_testing(static_cast<uint32_t>(memory().memory_objects()));
  ptr = 0;
  const hal_status status = hal_mem_alloc(device_, big, &ptr);
  error = hal_last_error();
  memory().set_memory_object_limit_for_testing(0);
  EXPECT_EQ(status, HAL_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(error.find("maxMemoryAllocationCount"), std::string::npos) << error;
  if (status == HAL_SUCCESS) {
    EXPECT_OK(hal_mem_free(device_, ptr));
  }
}

// A stream and then its device destroyed while a free waits for the stream's kernel: the
// stream's batches release the memory as they go, before the device does (ASan reports what
// would leak or be used after the device). Also with the device lost, where the batches never
// complete. The device is one of the test's own, outside the runtime.
void destroy_with_pending_release(bool lose) {
  using hal::vulkan::VulkanDevice;
  const uint64_t validation_errors = hal::vulkan::validation_error_count();
  hal_test::HostDouble host;  // the core's side of device loss, for a device without a core
  // One instance for the process, never destroyed: destroying it unloads the Vulkan driver,
  // whose own leftovers (tests/sanitizers/lsan.supp) would then be reported without a name.
  static auto* const instance = new std::shared_ptr<hal::vulkan::Instance>();
  if (*instance == nullptr) {
    ASSERT_OK(hal::vulkan::Instance::create(instance));
  }
  std::vector<VkPhysicalDevice> physical;
  ASSERT_OK((*instance)->physical_devices(&physical));
  ASSERT_FALSE(physical.empty());
  std::unique_ptr<VulkanDevice> device;
  ASSERT_OK(VulkanDevice::create(*instance, physical.front(), &device));
  if (!device->memory().device_mapped()) GTEST_SKIP() << "device memory is not mapped";

  const std::vector<uint8_t> blob = read_shader("spin_until_flag");
  std::unique_ptr<hal::Module> module;
  ASSERT_OK(
      device->load_module(HAL_IR_SPIRV, blob.data(), blob.size(), hal::ModuleOptions{}, &module));
  std::unique_ptr<hal::Stream> stream;
  ASSERT_OK(device->create_stream(&stream));
  hal::Allocation flag, seen, victim;
  ASSERT_OK(device->mem_alloc(4, &flag));
  ASSERT_OK(device->mem_alloc(8, &seen));
  ASSERT_OK(device->mem_alloc(4096, &victim));
  void* flag_host = nullptr;
  void* seen_host = nullptr;
  ASSERT_OK(device->host_pointer(flag, 0, &flag_host));
  ASSERT_OK(device->host_pointer(seen, 0, &seen_host));
  std::memset(flag_host, 0, 4);
  std::memset(seen_host, 0, 8);

  uint32_t rounds = kRounds;
  void* args[] = {&flag.base, &seen.base, &victim.base, &rounds};
  const hal_driver_range pointers[] = {{{flag.base, flag.size, flag.backend_data}, 0},
                                       {{seen.base, seen.size, seen.backend_data}, 0},
                                       {{victim.base, victim.size, victim.backend_data}, 0},
                                       {}};
  hal::LaunchParams params{};
  params.grid[0] = kGrid;
  params.grid[1] = params.grid[2] = 1;
  params.block[0] = kBlock;
  params.block[1] = params.block[2] = 1;
  params.param_count = 4;
  params.args = args;
  params.pointers = pointers;
  ASSERT_OK(stream->launch(*module->functions.front(), params));
  ASSERT_HAL(HAL_ERROR_NOT_READY, stream->query());
  ASSERT_OK(device->mem_free(victim));
  EXPECT_EQ(device->memory().pending_releases(), 1u);

  if (lose) {
    device->report_lost("lost on purpose by the test");
    ASSERT_TRUE(device->lost());
  }
  __atomic_store_n(static_cast<uint32_t*>(flag_host), 1u, __ATOMIC_SEQ_CST);
  // hal now takes the device for lost, but the driver still runs the kernel: let it finish, so
  // that destroying the batches unwaited (as for a lost device) destroys nothing in use.
  if (lose) device->vk().vkDeviceWaitIdle(device->handle());
  stream.reset();  // without synchronising first
  EXPECT_EQ(device->memory().pending_releases(), 0u);
  module.reset();
  EXPECT_OK(device->mem_free(flag));
  EXPECT_OK(device->mem_free(seen));
  EXPECT_EQ(device->memory().device_bytes(), 0u);
  device.reset();
  EXPECT_EQ(hal::vulkan::validation_error_count(), validation_errors);
}

TEST(DeferredFreeTeardown, StreamAndDeviceDestroyedWithAReleasePending) {
  destroy_with_pending_release(false);
}

TEST(DeferredFreeTeardown, LostDeviceDestroyedWithAReleasePending) {
  destroy_with_pending_release(true);
}

}  // namespace
