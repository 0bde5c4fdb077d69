#include "vulkan/device.h"

#include "common/error.h"
#include "common/log.h"
#include "common/trace.h"
#include "vulkan/event.h"
#include "vulkan/memory.h"
#include "vulkan/module.h"
#include "vulkan/pipeline_cache.h"
#include "vulkan/ptx_module.h"
#include "vulkan/stream.h"
#include "vulkan/stream_core.h"
#include "vulkan/vk_status.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace hal::vulkan {
namespace {

// Puts |extension| (a Vulkan structure with sType and pNext) first in |head|'s pNext chain.
template <typename Head, typename Extension>
void chain(Head& head, Extension& extension) {
  extension.pNext = head.pNext;
  head.pNext = &extension;
}

bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name) {
  for (const VkExtensionProperties& e : list) {
    if (std::strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

template <size_t N>
void copy_string(char (&dst)[N], const char* src) {
  const size_t length = strnlen(src, N - 1);
  std::memcpy(dst, src, length);
  dst[length] = '\0';
}

// A compute queue family: compute-only ones first (they do not compete with graphics), then
// any with compute; among those, one with timestamps.
int pick_queue_family(VkPhysicalDevice physical) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  int best = -1;
  int best_score = -1;
  for (uint32_t i = 0; i < count; ++i) {
    const VkQueueFamilyProperties& f = families[i];
    if ((f.queueFlags & VK_QUEUE_COMPUTE_BIT) == 0 || f.queueCount == 0) continue;
    int score = 1;
    if ((f.queueFlags & VK_QUEUE_GRAPHICS_BIT) == 0) score += 2;
    if (f.timestampValidBits > 0) score += 4;
    if (score > best_score) {
      best = static_cast<int>(i);
      best_score = score;
    }
  }
  return best;
}

// Whether the device can read its timestamp clock together with the host's monotonic clock
// (the one std::chrono::steady_clock reads on Linux).
bool calibrates_against_host(VkPhysicalDevice physical) {
  if (vkGetPhysicalDeviceCalibrateableTimeDomainsEXT == nullptr) return false;
  uint32_t count = 0;
  if (vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(physical, &count, nullptr) != VK_SUCCESS) {
    return false;
  }
  std::vector<VkTimeDomainEXT> domains(count);
  if (vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(physical, &count, domains.data()) !=
      VK_SUCCESS) {
    return false;
  }
  bool device = false, monotonic = false;
  for (VkTimeDomainEXT domain : domains) {
    device = device || domain == VK_TIME_DOMAIN_DEVICE_EXT;
    monotonic = monotonic || domain == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
  }
  return device && monotonic;
}

}  // namespace

hal_status VulkanDevice::create(std::shared_ptr<Instance> instance, VkPhysicalDevice physical,
                                std::unique_ptr<VulkanDevice>* out) {
  std::unique_ptr<VulkanDevice> device(new VulkanDevice());
  device->instance_ = std::move(instance);
  hal_status status = device->init(physical);
  if (status != HAL_SUCCESS) return status;
  *out = std::move(device);
  return HAL_SUCCESS;
}

const std::string& VulkanDevice::warp_measurement(const std::function<std::string()>& measure) {
  std::call_once(warp_measurement_once_, [&] { warp_measurement_ = measure(); });
  return warp_measurement_;
}

hal_status VulkanDevice::init(VkPhysicalDevice physical) {
  physical_ = physical;
  // Properties.
  VkPhysicalDeviceSubgroupSizeControlProperties subgroup_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceMaintenance4Properties maintenance4{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDeviceVulkan12Properties props12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties props11{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceProperties basic{};
  vkGetPhysicalDeviceProperties(physical, &basic);
  const uint32_t api = std::min(basic.apiVersion, instance_->api_version());
  if (api < VK_API_VERSION_1_2) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED, "'{}' supports Vulkan {}.{} only; hal needs 1.2",
                      basic.deviceName, VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api));
  }
  uint32_t extension_count = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &extension_count, nullptr);
  std::vector<VkExtensionProperties> extensions(extension_count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &extension_count, extensions.data());
  const bool is13 = api >= VK_API_VERSION_1_3;
  const bool subgroup_ext =
      !is13 && has_extension(extensions, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);

  // Cooperative matrices: the extension, its feature, compute shaders among its stages, and the
  // configurations (checked against every module that uses one).
  namespace khr = khr_cooperative_matrix;
  const bool cooperative_matrix_ext = has_extension(extensions, khr::kExtensionName);
  khr::Properties cooperative_matrix_props;
  props.pNext = &props11;
  props11.pNext = &props12;
  if (is13 || subgroup_ext) props12.pNext = &subgroup_control;
  if (is13) subgroup_control.pNext = &maintenance4;
  if (cooperative_matrix_ext) chain(props, cooperative_matrix_props);
  vkGetPhysicalDeviceProperties2(physical, &props);

  // Features: query what exists, enable the subset hal uses.
  VkPhysicalDeviceSubgroupSizeControlFeatures subgroup_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f11;
  f11.pNext = &f12;
  if (is13) f12.pNext = &f13;
  if (subgroup_ext) f12.pNext = &subgroup_features;
  khr::Features cooperative_matrix_features;
  if (cooperative_matrix_ext) chain(features, cooperative_matrix_features);
  // Float atomics (atomicAdd on a float, and with the second extension min/max and fp16).
  const bool atomic_float_ext =
      has_extension(extensions, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  const bool atomic_float2_ext =
      atomic_float_ext && has_extension(extensions, VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT atomic_float2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT};
  if (atomic_float_ext) chain(features, atomic_float);
  if (atomic_float2_ext) chain(features, atomic_float2);
  // Integer dot products: core in Vulkan 1.3 (f13), an extension before.
  const bool dot_product_ext =
      !is13 && has_extension(extensions, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot_product{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  if (dot_product_ext) chain(features, dot_product);
  vkGetPhysicalDeviceFeatures2(physical, &features);
  if (!f12.timelineSemaphore) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED, "'{}' has no timeline semaphores", basic.deviceName);
  }

  VkPhysicalDeviceSubgroupSizeControlFeatures e_subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceVulkan13Features e13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 enable{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  enable.pNext = &e11;
  e11.pNext = &e12;
  if (is13) e12.pNext = &e13;
  if (subgroup_ext) e12.pNext = &e_subgroup;
  std::vector<CooperativeMatrixShape> cooperative_matrix_shapes;
  if (cooperative_matrix_features.cooperativeMatrix &&
      (cooperative_matrix_props.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT)) {
    cooperative_matrix_shapes = query_cooperative_matrix_shapes(
        physical, reinterpret_cast<khr::GetConfigurations>(vkGetInstanceProcAddr(
                      instance_->handle(), "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR")));
  }
  khr::Features e_cooperative_matrix;
  if (!cooperative_matrix_shapes.empty()) {
    e_cooperative_matrix.cooperativeMatrix = VK_TRUE;
    chain(enable, e_cooperative_matrix);
  }
  // Enabled as queried, less the image atomics (hal has no images).
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT e_atomic_float = atomic_float;
  VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT e_atomic_float2 = atomic_float2;
  e_atomic_float.shaderImageFloat32Atomics = e_atomic_float.shaderImageFloat32AtomicAdd = VK_FALSE;
  e_atomic_float.sparseImageFloat32Atomics = e_atomic_float.sparseImageFloat32AtomicAdd = VK_FALSE;
  e_atomic_float2.shaderImageFloat32AtomicMinMax = VK_FALSE;
  e_atomic_float2.sparseImageFloat32AtomicMinMax = VK_FALSE;
  if (atomic_float_ext) chain(enable, e_atomic_float);
  if (atomic_float2_ext) chain(enable, e_atomic_float2);
  VkPhysicalDeviceShaderIntegerDotProductFeatures e_dot_product{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  if (dot_product_ext && dot_product.shaderIntegerDotProduct) {
    e_dot_product.shaderIntegerDotProduct = VK_TRUE;
    chain(enable, e_dot_product);
  }
  enable.features.shaderInt64 = features.features.shaderInt64;
  enable.features.shaderInt16 = features.features.shaderInt16;
  enable.features.shaderFloat64 = features.features.shaderFloat64;
  e11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
  e11.uniformAndStorageBuffer16BitAccess = f11.uniformAndStorageBuffer16BitAccess;
  e11.variablePointersStorageBuffer = f11.variablePointersStorageBuffer;
  e11.variablePointers = f11.variablePointers;
  e12.timelineSemaphore = VK_TRUE;
  e12.bufferDeviceAddress = f12.bufferDeviceAddress;
  e12.storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
  e12.uniformAndStorageBuffer8BitAccess = f12.uniformAndStorageBuffer8BitAccess;
  e12.shaderFloat16 = f12.shaderFloat16;
  e12.shaderInt8 = f12.shaderInt8;
  e12.scalarBlockLayout = f12.scalarBlockLayout;
  e12.vulkanMemoryModel = f12.vulkanMemoryModel;
  e12.vulkanMemoryModelDeviceScope = f12.vulkanMemoryModelDeviceScope;
  e12.shaderBufferInt64Atomics = f12.shaderBufferInt64Atomics;
  e12.shaderSharedInt64Atomics = f12.shaderSharedInt64Atomics;
  bool subgroup_size_control = false;
  bool compute_full_subgroups = false;
  if (is13) {
    e13.subgroupSizeControl = f13.subgroupSizeControl;
    e13.computeFullSubgroups = f13.computeFullSubgroups;
    e13.maintenance4 = f13.maintenance4;
    e13.shaderIntegerDotProduct = f13.shaderIntegerDotProduct;
    subgroup_size_control = f13.subgroupSizeControl;
    compute_full_subgroups = f13.computeFullSubgroups;
  } else if (subgroup_ext) {
    e_subgroup.subgroupSizeControl = subgroup_features.subgroupSizeControl;
    e_subgroup.computeFullSubgroups = subgroup_features.computeFullSubgroups;
    subgroup_size_control = subgroup_features.subgroupSizeControl;
    compute_full_subgroups = subgroup_features.computeFullSubgroups;
  }

  const int family = pick_queue_family(physical);
  if (family < 0) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED, "'{}' has no compute queue", basic.deviceName);
  }
  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, families.data());

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = static_cast<uint32_t>(family);
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  std::vector<const char*> enabled_extensions;
  if (subgroup_ext) enabled_extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  // Only the timeline trace reads calibrated timestamps: enabled only when it is on.
  const bool calibrated = hal::trace::on() &&
                          has_extension(extensions, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) &&
                          calibrates_against_host(physical);
  if (calibrated) enabled_extensions.push_back(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
  if (!cooperative_matrix_shapes.empty()) enabled_extensions.push_back(khr::kExtensionName);
  if (atomic_float_ext) enabled_extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  if (atomic_float2_ext) enabled_extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
  if (e_dot_product.shaderIntegerDotProduct) {
    enabled_extensions.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  }
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &enable;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  device_info.enabledExtensionCount = static_cast<uint32_t>(enabled_extensions.size());
  device_info.ppEnabledExtensionNames = enabled_extensions.data();
  VkResult result = vkCreateDevice(physical, &device_info, nullptr, &device_);
  if (result != VK_SUCCESS) {
    return vk_fail(result, fmt::format("vkCreateDevice for '{}'", basic.deviceName));
  }
  volkLoadDeviceTable(&vk_, device_);
  vk_.vkGetDeviceQueue(device_, static_cast<uint32_t>(family), 0, &queue_);

  caps_.api_version = api;
  caps_.type = basic.deviceType;
  caps_.limits = basic.limits;
  caps_.queue_family = static_cast<uint32_t>(family);
  caps_.buffer_device_address = e12.bufferDeviceAddress;
  caps_.scalar_block_layout = e12.scalarBlockLayout;
  caps_.shader_float16 = e12.shaderFloat16;
  caps_.shader_float64 = enable.features.shaderFloat64;
  caps_.shader_int8 = e12.shaderInt8;
  caps_.shader_int16 = enable.features.shaderInt16;
  caps_.shader_int64 = enable.features.shaderInt64;
  caps_.storage_buffer_16bit = e11.storageBuffer16BitAccess;
  caps_.uniform_and_storage_buffer_16bit = e11.uniformAndStorageBuffer16BitAccess;
  caps_.storage_buffer_8bit = e12.storageBuffer8BitAccess;
  caps_.uniform_and_storage_buffer_8bit = e12.uniformAndStorageBuffer8BitAccess;
  // Vulkan 1.1 promises the basic class in the compute stage; the others are optional.
  const VkSubgroupFeatureFlags subgroup_ops =
      (props11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0
          ? props11.subgroupSupportedOperations
          : 0;
  caps_.subgroup_vote = (subgroup_ops & VK_SUBGROUP_FEATURE_VOTE_BIT) != 0;
  caps_.subgroup_arithmetic = (subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0;
  caps_.subgroup_ballot = (subgroup_ops & VK_SUBGROUP_FEATURE_BALLOT_BIT) != 0;
  caps_.subgroup_shuffle = (subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) != 0;
  caps_.subgroup_shuffle_relative = (subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT) != 0;
  caps_.subgroup_clustered = (subgroup_ops & VK_SUBGROUP_FEATURE_CLUSTERED_BIT) != 0;
  caps_.subgroup_quad = (subgroup_ops & VK_SUBGROUP_FEATURE_QUAD_BIT) != 0;
  caps_.subgroup_size = props11.subgroupSize;
  caps_.compute_full_subgroups = compute_full_subgroups;
  if (subgroup_size_control &&
      (subgroup_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0) {
    caps_.min_subgroup_size = subgroup_control.minSubgroupSize;
    caps_.max_subgroup_size = subgroup_control.maxSubgroupSize;
    caps_.max_compute_workgroup_subgroups = subgroup_control.maxComputeWorkgroupSubgroups;
  }
  caps_.int64_atomics = e12.shaderBufferInt64Atomics || e12.shaderSharedInt64Atomics;
  caps_.int64_atomics_everywhere = e12.shaderBufferInt64Atomics && e12.shaderSharedInt64Atomics;
  caps_.variable_pointers_storage_buffer = e11.variablePointersStorageBuffer;
  caps_.variable_pointers = e11.variablePointers;
  caps_.integer_dot_product =
      is13 ? e13.shaderIntegerDotProduct != 0 : e_dot_product.shaderIntegerDotProduct != 0;
  caps_.atomic_float32_add =
      e_atomic_float.shaderBufferFloat32AtomicAdd || e_atomic_float.shaderSharedFloat32AtomicAdd;
  caps_.atomic_float32_add_everywhere =
      e_atomic_float.shaderBufferFloat32AtomicAdd && e_atomic_float.shaderSharedFloat32AtomicAdd;
  caps_.atomic_float64_add =
      e_atomic_float.shaderBufferFloat64AtomicAdd || e_atomic_float.shaderSharedFloat64AtomicAdd;
  caps_.atomic_float16_add =
      e_atomic_float2.shaderBufferFloat16AtomicAdd || e_atomic_float2.shaderSharedFloat16AtomicAdd;
  caps_.atomic_float16_min_max = e_atomic_float2.shaderBufferFloat16AtomicMinMax ||
                                 e_atomic_float2.shaderSharedFloat16AtomicMinMax;
  caps_.atomic_float32_min_max = e_atomic_float2.shaderBufferFloat32AtomicMinMax ||
                                 e_atomic_float2.shaderSharedFloat32AtomicMinMax;
  caps_.atomic_float64_min_max = e_atomic_float2.shaderBufferFloat64AtomicMinMax ||
                                 e_atomic_float2.shaderSharedFloat64AtomicMinMax;
  caps_.vulkan_memory_model = e12.vulkanMemoryModel;
  caps_.vulkan_memory_model_device_scope = e12.vulkanMemoryModelDeviceScope;
  caps_.cooperative_matrix = !cooperative_matrix_shapes.empty();
  caps_.cooperative_matrix_shapes = std::move(cooperative_matrix_shapes);
  for (const CooperativeMatrixShape& shape : caps_.cooperative_matrix_shapes) {
    hal::log()->debug("vulkan: cooperative matrix {}", describe(shape));
  }
  caps_.timestamp_valid_bits = families[family].timestampValidBits;
  caps_.timestamps = caps_.timestamp_valid_bits > 0 && basic.limits.timestampPeriod > 0.0f;
  caps_.timestamp_period = basic.limits.timestampPeriod;
  caps_.calibrated_timestamps = calibrated && vk_.vkGetCalibratedTimestampsEXT != nullptr;
  caps_.max_memory_allocation_size = props11.maxMemoryAllocationSize;
  caps_.max_buffer_size = is13 ? maintenance4.maxBufferSize : props11.maxMemoryAllocationSize;
  std::memcpy(caps_.device_uuid, props11.deviceUUID, 16);
  std::memcpy(caps_.pipeline_cache_uuid, basic.pipelineCacheUUID, 16);
  caps_.vendor_id = basic.vendorID;
  caps_.device_id = basic.deviceID;
  caps_.driver_version = basic.driverVersion;
  caps_.spirv_env = is13 ? SPV_ENV_VULKAN_1_3 : SPV_ENV_VULKAN_1_2;

  memory_ = std::make_unique<MemoryManager>(*this);
  hal_status status = memory_->init();
  if (status != HAL_SUCCESS) return status;
  pipeline_cache_ = std::make_unique<PipelineCache>(*this);
  status = pipeline_cache_->init();
  if (status != HAL_SUCCESS) return status;
  timestamps_ = std::make_unique<TimestampPool>(*this);

  uint64_t feature_bits = HAL_FEATURE_TIMELINE_SEMAPHORE;
  if (e12.shaderFloat16) feature_bits |= HAL_FEATURE_FLOAT16;
  if (e12.shaderInt8) feature_bits |= HAL_FEATURE_INT8;
  if (e11.storageBuffer16BitAccess) feature_bits |= HAL_FEATURE_STORAGE_16BIT;
  if (e12.storageBuffer8BitAccess) feature_bits |= HAL_FEATURE_STORAGE_8BIT;
  if (e12.bufferDeviceAddress) feature_bits |= HAL_FEATURE_BUFFER_DEVICE_ADDRESS;
  if (subgroup_size_control) feature_bits |= HAL_FEATURE_SUBGROUP_SIZE_CONTROL;
  if (caps_.timestamps) feature_bits |= HAL_FEATURE_TIMESTAMPS;
  if (caps_.subgroup_vote) feature_bits |= HAL_FEATURE_SUBGROUP_VOTE;
  if (caps_.subgroup_arithmetic) feature_bits |= HAL_FEATURE_SUBGROUP_ARITHMETIC;
  if (caps_.subgroup_ballot) feature_bits |= HAL_FEATURE_SUBGROUP_BALLOT;
  if (caps_.subgroup_shuffle) feature_bits |= HAL_FEATURE_SUBGROUP_SHUFFLE;
  if (caps_.cooperative_matrix) feature_bits |= HAL_FEATURE_COOPERATIVE_MATRIX;
  fill_info(props, props11, props12, subgroup_control, feature_bits);
  hal::log()->debug("vulkan: device '{}' ready (API {}.{}, queue family {}, BDA {})", info.name,
                    VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api), family,
                    caps_.buffer_device_address ? "yes" : "no");
  return HAL_SUCCESS;
}

void VulkanDevice::fill_info(const VkPhysicalDeviceProperties2& props,
                             const VkPhysicalDeviceVulkan11Properties& props11,
                             const VkPhysicalDeviceVulkan12Properties& props12,
                             const VkPhysicalDeviceSubgroupSizeControlProperties&,
                             uint64_t features) {
  const VkPhysicalDeviceProperties& p = props.properties;
  info = hal_device_info{};
  info.struct_size = sizeof(hal_device_info);
  info.backend = HAL_BACKEND_VULKAN;
  copy_string(info.name, p.deviceName);
  copy_string(info.driver_name, props12.driverName[0] != '\0' ? props12.driverName : "vulkan");
  info.vendor_id = p.vendorID;
  info.device_id = p.deviceID;
  std::memcpy(info.uuid, props11.deviceUUID, 16);
  info.driver_version = p.driverVersion;
  info.ir_mask = HAL_IR_SPIRV;
  if (runs_ptx(caps_)) info.ir_mask |= HAL_IR_PTX;
  info.total_memory = memory_->total_memory();
  info.max_allocation_size = memory_->max_allocation_size();
  info.max_threads_per_block = p.limits.maxComputeWorkGroupInvocations;
  for (int d = 0; d < 3; ++d) {
    info.max_block_dim[d] = p.limits.maxComputeWorkGroupSize[d];
    info.max_grid_dim[d] = p.limits.maxComputeWorkGroupCount[d];
  }
  info.max_shared_memory_per_block = p.limits.maxComputeSharedMemorySize;
  info.subgroup_size = props11.subgroupSize;
  // Vulkan does not report compute units; for a CPU device the host's threads are the answer.
  info.compute_units =
      p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? std::thread::hardware_concurrency() : 0;
  info.pointer_alignment =
      static_cast<uint32_t>(std::max<VkDeviceSize>(p.limits.minStorageBufferOffsetAlignment, 1));
  info.is_cpu = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 1 : 0;
  info.unified_memory = memory_->device_mapped() ? 1 : 0;
  info.features = features;
  copy_string(info.driver_info, props12.driverInfo);
  info.api_version = p.apiVersion;
  info.driver_id = static_cast<uint32_t>(props12.driverID);
  const VkConformanceVersion& c = props12.conformanceVersion;
  info.conformance_version = (uint32_t{c.major} << 24) | (uint32_t{c.minor} << 16) |
                             (uint32_t{c.subminor} << 8) | uint32_t{c.patch};
}

VulkanDevice::~VulkanDevice() {
  if (device_ == VK_NULL_HANDLE) return;
  if (!lost()) vk_.vkDeviceWaitIdle(device_);
  pipeline_cache_.reset();
  timestamps_.reset();
  memory_.reset();
  vk_.vkDestroyDevice(device_, nullptr);
}

void VulkanDevice::wait_idle() {
  if (device_ == VK_NULL_HANDLE || lost()) return;
  std::lock_guard<std::mutex> lock(queue_mutex_);
  vk_.vkDeviceWaitIdle(device_);
}

hal_status VulkanDevice::check(VkResult result, std::string_view what, std::string_view hint) {
  const hal_status status = vk_fail(result, what, hint);
  // Also reported where the status reaches no caller (destructors, waits after a free).
  if (result == VK_ERROR_DEVICE_LOST) report_lost(hal::pending_error());
  return status;
}

uint64_t VulkanDevice::trace_host_ns(uint64_t ticks, uint64_t anchor_ns) {
  const uint32_t bits = caps_.timestamp_valid_bits;
  if (bits < 64) ticks &= (uint64_t{1} << bits) - 1;
  const auto device_ns = static_cast<int64_t>(static_cast<double>(ticks) * caps_.timestamp_period);
  std::call_once(trace_clock_once_, [&] {
    if (caps_.calibrated_timestamps) {
      VkCalibratedTimestampInfoEXT domains[2] = {
          {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_DEVICE_EXT},
          {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr,
           VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
      uint64_t stamps[2] = {0, 0};
      uint64_t deviation = 0;
      if (vk_.vkGetCalibratedTimestampsEXT(device_, 2, domains, stamps, &deviation) == VK_SUCCESS) {
        const uint64_t device_stamp =
            bits < 64 ? stamps[0] & ((uint64_t{1} << bits) - 1) : stamps[0];
        trace_clock_offset_ns_ =
            static_cast<int64_t>(stamps[1]) -
            static_cast<int64_t>(static_cast<double>(device_stamp) * caps_.timestamp_period);
        return;
      }
    }
    // Without a calibration the first span seen is placed at its submission: an estimate that
    // keeps every later span in the right place relative to it.
    trace_clock_offset_ns_ = static_cast<int64_t>(anchor_ns) - device_ns;
  });
  const int64_t host = device_ns + trace_clock_offset_ns_;
  return host > 0 ? static_cast<uint64_t>(host) : 0;
}

hal_status VulkanDevice::submit(const VkSubmitInfo& submit_info) {
  VkResult result;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    result = vk_.vkQueueSubmit(queue_, 1, &submit_info, VK_NULL_HANDLE);
  }
  if (result != VK_SUCCESS) return check(result, "vkQueueSubmit");
  return HAL_SUCCESS;
}

void VulkanDevice::register_stream(const std::shared_ptr<StreamCore>& core) {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                [](const std::weak_ptr<StreamCore>& w) { return w.expired(); }),
                 streams_.end());
  streams_.push_back(core);
}

std::vector<std::shared_ptr<StreamCore>> VulkanDevice::live_streams() {
  std::vector<std::shared_ptr<StreamCore>> live;
  std::lock_guard<std::mutex> lock(streams_mutex_);
  live.reserve(streams_.size());
  for (const auto& weak : streams_) {
    if (auto core = weak.lock()) live.push_back(std::move(core));
  }
  return live;
}

hal_status VulkanDevice::wait_all_streams() {
  const std::vector<std::shared_ptr<StreamCore>> live = live_streams();
  for (const auto& core : live) {
    hal_status status = core->synchronize();
    if (status != HAL_SUCCESS) return status;
  }
  return HAL_SUCCESS;
}

// Why frees do not wait, and how the release is deferred instead: see device.h. The order of
// locks is the core's memory lock (held by hal_mem_free around the driver's free), then one
// stream's lock at a time (keep_until_done), then the memory manager's (a release, run by a
// batch that completes or by the last reference dropped here); no lock is held while waiting.
void VulkanDevice::defer_release(std::shared_ptr<void> release) {
  // A lost device runs nothing more: the memory goes now, as |release| does on return.
  if (lost()) return;
  // Holding the streams alive while handing |release| out: a core whose last other reference
  // goes meanwhile is destroyed when |live| is, after its work, which releases what it kept.
  const std::vector<std::shared_ptr<StreamCore>> live = live_streams();
  for (const auto& core : live) core->keep_until_done(release);
}

void VulkanDevice::reclaim_completed_releases() {
  const std::vector<std::shared_ptr<StreamCore>> live = live_streams();
  for (const auto& core : live) core->retire_completed_if_unlocked();
}

bool VulkanDevice::wait_for_pending_releases() {
  if (memory_->pending_releases() == 0 || lost()) return false;
  // This waits for unrelated work too, but only under memory pressure, and only once per failed
  // allocation: each free would otherwise have waited for all of it.
  if (wait_all_streams() != HAL_SUCCESS) hal::clear_pending_error();
  return true;
}

hal_status VulkanDevice::mem_alloc(size_t size, Allocation* out) {
  if (memory_->pending_releases() > 0) reclaim_completed_releases();
  hal_status status = memory_->allocate(size, out);
  if (status != HAL_ERROR_OUT_OF_MEMORY || size > memory_->max_allocation_size()) return status;
  const std::string first = hal::pending_error();
  hal::clear_pending_error();
  if (!wait_for_pending_releases()) return hal::fail(status, first);
  return memory_->allocate(size, out);
}

hal_status VulkanDevice::mem_free(const Allocation& alloc) {
  if (alloc.backend_data == 0) {
    return hal::fail(HAL_ERROR_INTERNAL, "allocation without backend data");
  }
  defer_release(std::make_shared<PendingRelease>(*memory_, alloc));
  return HAL_SUCCESS;
}

hal_status VulkanDevice::host_alloc(size_t size, HostAllocation* out) {
  if (memory_->pending_releases() > 0) reclaim_completed_releases();
  hal_status status = memory_->host_allocate(size, out);
  if (status != HAL_ERROR_OUT_OF_MEMORY) return status;
  const std::string first = hal::pending_error();
  hal::clear_pending_error();
  if (!wait_for_pending_releases()) return hal::fail(status, first);
  return memory_->host_allocate(size, out);
}

hal_status VulkanDevice::host_free(const HostAllocation& allocation) {
  if (allocation.driver_data == 0) {
    return hal::fail(HAL_ERROR_INTERNAL, "host allocation without driver data");
  }
  defer_release(std::make_shared<PendingRelease>(*memory_, allocation));
  return HAL_SUCCESS;
}

hal_status VulkanDevice::host_pointer(const Allocation& alloc, uint64_t offset, void** out) {
  if (!memory_->device_mapped()) return HAL_ERROR_NOT_SUPPORTED;
  const DeviceChunk& chunk = MemoryManager::chunk(alloc);
  if (chunk.block->mapped == nullptr) return HAL_ERROR_NOT_SUPPORTED;
  *out = chunk.block->mapped + chunk.offset + offset;
  return HAL_SUCCESS;
}

hal_status VulkanDevice::create_stream(std::unique_ptr<hal::Stream>* out) {
  auto core = std::make_shared<StreamCore>(*this);
  hal_status status = core->init();
  if (status != HAL_SUCCESS) return status;
  register_stream(core);
  *out = std::make_unique<VulkanStream>(std::move(core));
  return HAL_SUCCESS;
}

hal_status VulkanDevice::create_event(std::unique_ptr<hal::Event>* out) {
  *out = std::make_unique<VulkanEvent>(*this);
  return HAL_SUCCESS;
}

hal_status VulkanDevice::load_module(hal_ir ir, const uint8_t* blob, size_t size,
                                     const ModuleOptions& options,
                                     std::unique_ptr<hal::Module>* out) {
  if (ir == HAL_IR_PTX) return load_ptx_module(*this, blob, size, options, out);
  if (ir != HAL_IR_SPIRV) {
    return hal::fail(HAL_ERROR_NOT_SUPPORTED, "Vulkan devices accept SPIR-V and PTX only");
  }
  return load_spirv_module(*this, blob, size, options, out);
}

hal_status VulkanDevice::synchronize() {
  hal_status status = wait_all_streams();
  if (status != HAL_SUCCESS) return status;
  for (const auto& core : live_streams()) {
    status = core->take_fault(UINT64_MAX);
    if (status != HAL_SUCCESS) return status;
  }
  return HAL_SUCCESS;
}

}  // namespace hal::vulkan
