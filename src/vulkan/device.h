// VulkanDevice: one logical device on one physical device, and the hal::Device it implements.
//
// Creation picks a compute queue family, enables the optional features hal uses when the device
// has them (buffer device address, 8/16-bit storage, float16/int8, 64-bit integers and their
// atomics, float atomics, integer dot products, variable pointers, subgroup size control, scalar
// block layout, the Vulkan memory model, cooperative matrices), requires timeline semaphores,
// and fills hal_device_info. Its ir_mask is SPIR-V, plus PTX where the device has what every
// translated PTX module needs (runs_ptx() in ptx_module.h).
//
// Device loss: a Vulkan call that reports VK_ERROR_DEVICE_LOST (through check) reports the loss
// to the core, which refuses every later call on the device. Destructors, frees and waits ask
// Device::lost() so that they never wait for work a lost device will not finish.
//
// Frees (mem_free, host_free) do not wait for the device. Commands name memory by VkBuffer and
// offset, so what matters is that the bytes are not handed out again (nor their block destroyed)
// while work issued before the free may still touch them. The backend does not track which
// batch uses which allocation; instead the release is deferred past all of the device's work
// issued before the free: a PendingRelease (memory.h) is kept by the newest batch of every
// stream with unfinished work (StreamCore::keep_until_done), and the last of those to complete
// releases the memory. Work issued later, on any stream, is not waited for; streams created
// later cannot use the memory (the core refuses freed addresses). With no stream busy the
// memory is released before the free returns. The cost is that memory freed while any stream
// is busy stays unusable until that stream's current work completes: allocations first retire
// what has completed, and one that runs out of memory while releases are pending waits for the
// streams and tries once more, so the deferral never turns into a spurious out-of-memory.
//
// Thread-safety: every method may be called from several threads. The single VkQueue is guarded
// by an internal mutex (vkQueueSubmit needs external synchronisation); the memory manager and
// the stream list have their own locks.
#pragma once

#include "common/backend.h"
#include "vulkan/cooperative_matrix.h"
#include "vulkan/instance.h"
#include "vulkan/timestamp_pool.h"
#include "vulkan/validated_spirv.h"
#include "vulkan/vk.h"

#include <spirv-tools/libspirv.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace hal::vulkan {

class MemoryManager;
class PipelineCache;
class StreamCore;

// What the rest of the backend needs to know about the device, fixed at creation.
struct DeviceCaps {
  uint32_t api_version = 0;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  VkPhysicalDeviceLimits limits{};
  uint32_t queue_family = 0;
  bool buffer_device_address = false;
  bool scalar_block_layout = false;
  // Shader features enabled on the logical device, checked against a module's capabilities.
  bool shader_float16 = false;
  bool shader_float64 = false;
  bool shader_int8 = false;
  bool shader_int16 = false;
  bool shader_int64 = false;
  bool storage_buffer_16bit = false;
  bool uniform_and_storage_buffer_16bit = false;
  bool storage_buffer_8bit = false;
  bool uniform_and_storage_buffer_8bit = false;
  // Subgroup operation classes the compute stage supports (Vulkan 1.1 subgroup properties).
  bool subgroup_vote = false;
  bool subgroup_arithmetic = false;
  bool subgroup_ballot = false;
  bool subgroup_shuffle = false;
  bool subgroup_shuffle_relative = false;
  bool subgroup_clustered = false;
  bool subgroup_quad = false;
  uint32_t subgroup_size = 0;           // VkPhysicalDeviceVulkan11Properties::subgroupSize
  bool compute_full_subgroups = false;  // REQUIRE_FULL_SUBGROUPS may be set on a pipeline
  // A compute pipeline may require a subgroup size in [min, max] (subgroupSizeControl, with the
  // compute stage among requiredSubgroupSizeStages); a workgroup then holds at most
  // max_compute_workgroup_subgroups subgroups. All zero without subgroup size control.
  uint32_t min_subgroup_size = 0;
  uint32_t max_subgroup_size = 0;
  uint32_t max_compute_workgroup_subgroups = 0;
  bool int64_atomics = false;  // in buffers or shared memory
  // In buffers and in shared memory both: a PTX atomic's address may be either (ptx_module.h).
  bool int64_atomics_everywhere = false;
  bool variable_pointers_storage_buffer = false;
  bool variable_pointers = false;
  bool integer_dot_product = false;  // shaderIntegerDotProduct
  // Float atomics in buffers or shared memory (VK_EXT_shader_atomic_float and ..._float2).
  bool atomic_float32_add = false;
  bool atomic_float32_add_everywhere = false;  // in buffers and in shared memory both
  bool atomic_float64_add = false;
  bool atomic_float16_add = false;
  bool atomic_float16_min_max = false;
  bool atomic_float32_min_max = false;
  bool atomic_float64_min_max = false;
  bool vulkan_memory_model = false;
  bool vulkan_memory_model_device_scope = false;
  // VK_KHR_cooperative_matrix is enabled, with these configurations in compute shaders.
  bool cooperative_matrix = false;
  std::vector<CooperativeMatrixShape> cooperative_matrix_shapes;
  // VK_NV_cooperative_matrix, the extension's vendor predecessor, is never enabled: its
  // modules are refused by name rather than handed to a driver that was not asked for it.
  bool cooperative_matrix_nv = false;
  bool timestamps = false;
  float timestamp_period = 1.0f;  // nanoseconds per tick
  uint32_t timestamp_valid_bits = 0;
  // VK_EXT_calibrated_timestamps is enabled (only with the timeline trace on).
  bool calibrated_timestamps = false;
  uint64_t max_memory_allocation_size = 0;
  uint64_t max_buffer_size = 0;
  uint8_t device_uuid[16] = {};
  uint8_t pipeline_cache_uuid[16] = {};
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  uint32_t driver_version = 0;
  spv_target_env spirv_env = SPV_ENV_VULKAN_1_2;
};

class VulkanDevice : public hal::Device {
 public:
  // Creates the logical device on |physical| (Vulkan 1.2 or newer, with timeline semaphores
  // and a compute queue; anything else fails with HAL_ERROR_NOT_SUPPORTED and a reason).
  // |instance| is kept alive for the device's lifetime.
  static hal_status create(std::shared_ptr<Instance> instance, VkPhysicalDevice physical,
                           std::unique_ptr<VulkanDevice>* out);
  ~VulkanDevice() override;

  // hal::Device
  hal_status mem_alloc(size_t size, Allocation* out) override;
  hal_status mem_free(const Allocation& alloc) override;
  hal_status host_alloc(size_t size, HostAllocation* out) override;
  hal_status host_free(const HostAllocation& allocation) override;
  // Device memory that is host-visible and coherent (lavapipe, integrated GPUs) is mapped for
  // good: its host address. Else HAL_ERROR_NOT_SUPPORTED.
  hal_status host_pointer(const Allocation& alloc, uint64_t offset, void** out) override;
  hal_status create_stream(std::unique_ptr<hal::Stream>* out) override;
  hal_status create_event(std::unique_ptr<hal::Event>* out) override;
  hal_status load_module(hal_ir ir, const uint8_t* blob, size_t size, const ModuleOptions& options,
                         std::unique_ptr<hal::Module>* out) override;
  hal_status synchronize() override;

  // For the backend's own classes.
  const VolkDeviceTable& vk() const { return vk_; }
  VkDevice handle() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  const DeviceCaps& caps() const { return caps_; }
  MemoryManager& memory() { return *memory_; }
  PipelineCache& pipeline_cache() { return *pipeline_cache_; }
  // Timestamp queries for events (timestamp_pool.h); only where caps().timestamps.
  TimestampPool& timestamps() { return *timestamps_; }
  // The modules the validator passed on this device (validate_spirv() consults it).
  ValidatedSpirv& validated_spirv() const { return validated_spirv_; }

  // Why the device cannot run warp-level PTX after all, as |measure| finds on the first call
  // (empty: it can); later calls return the same (ptx_module.h).
  const std::string& warp_measurement(const std::function<std::string()>& measure);

  // vk_fail() for a failed |result|, reporting the device lost on VK_ERROR_DEVICE_LOST.
  hal_status check(VkResult result, std::string_view what, std::string_view hint = {});

  // vkQueueSubmit under the queue lock.
  hal_status submit(const VkSubmitInfo& info);

  // Waits until the device has no work left (vkDeviceWaitIdle under the queue lock). Called at
  // process exit: hal keeps its devices for the whole process, and a CPU driver still running
  // work on its own threads while the process tears down its libraries can crash.
  void wait_idle();

  // Converts a timestamp written on this device's queue to the trace's host clock (trace::now_ns).
  // |anchor_ns| is a host time no later than the timestamp (its batch's submission): without
  // calibrated timestamps the first conversion aligns the two clocks there.
  uint64_t trace_host_ns(uint64_t ticks, uint64_t anchor_ns);

  // Streams register themselves so device synchronisation can wait for them and frees can
  // defer their releases past their work.
  void register_stream(const std::shared_ptr<StreamCore>& core);
  // Flushes and waits for every live stream of this device.
  hal_status wait_all_streams();

 private:
  VulkanDevice() = default;
  hal_status init(VkPhysicalDevice physical);
  // The streams of this device still alive.
  std::vector<std::shared_ptr<StreamCore>> live_streams();
  // Hands |release| to every stream with unfinished work (see the header comment); it happens
  // when the last of them has completed that work, or before this returns when none has any.
  void defer_release(std::shared_ptr<void> release);
  // Before an allocation while releases are pending: retires what has completed, so that memory
  // freed under work that is done is reused rather than more memory allocated.
  void reclaim_completed_releases();
  // After an allocation failed for lack of memory: when releases are pending, waits for every
  // stream (which retires them) and returns true, the allocation being worth one more try.
  bool wait_for_pending_releases();
  void fill_info(const VkPhysicalDeviceProperties2& props,
                 const VkPhysicalDeviceVulkan11Properties& props11,
                 const VkPhysicalDeviceVulkan12Properties& props12,
                 const VkPhysicalDeviceSubgroupSizeControlProperties& subgroup_control,
                 uint64_t features);

  std::shared_ptr<Instance> instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VolkDeviceTable vk_{};
  VkQueue queue_ = VK_NULL_HANDLE;
  std::mutex queue_mutex_;
  DeviceCaps caps_;
  std::unique_ptr<MemoryManager> memory_;
  std::unique_ptr<PipelineCache> pipeline_cache_;
  std::unique_ptr<TimestampPool> timestamps_;
  // A memo of validation results, not device state: loads through a const device record in it.
  mutable ValidatedSpirv validated_spirv_;
  std::once_flag warp_measurement_once_;
  std::string warp_measurement_;
  std::once_flag trace_clock_once_;
  int64_t trace_clock_offset_ns_ = 0;  // host ns minus device ns, set once
  std::mutex streams_mutex_;
  std::vector<std::weak_ptr<StreamCore>> streams_;
};

}  // namespace hal::vulkan
