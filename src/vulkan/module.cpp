#include "vulkan/module.h"

#include "common/error.h"
#include "common/log.h"
#include "vulkan/device.h"
#include "vulkan/pipeline_cache.h"
#include "vulkan/spirv_enums.h"
#include "vulkan/validation.h"
#include "vulkan/vk_status.h"

#include <spirv-tools/libspirv.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace hal::vulkan {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203u;

uint32_t byte_swap(uint32_t v) {
  return ((v & 0xFFu) << 24) | ((v & 0xFF00u) << 8) | ((v >> 8) & 0xFF00u) | (v >> 24);
}

// A blob's validation failure: the module came from a compiler, which was most likely told the
// wrong environment.
hal_status validate(const VulkanDevice& device, const std::vector<uint32_t>& words) {
  std::string message;
  if (validate_spirv(device, words, &message)) return HAL_SUCCESS;
  return hal::failf(HAL_ERROR_INVALID_IR,
                    "SPIR-V validation for {} failed: {}. Check the compiler's target "
                    "environment (for instance glslc --target-env=vulkan1.2)",
                    spvTargetEnvDescription(device.caps().spirv_env), message);
}

// The specializations as reflection takes them.
ReflectOptions reflect_options_for(const std::vector<Specialization>& specializations) {
  ReflectOptions options;
  for (const Specialization& spec : specializations) {
    options.specializations.push_back(SpecValue{spec.id, spec.value});
  }
  return options;
}

const ReflectedSpecConstant* find_spec(const ReflectedModule& module, uint32_t id) {
  for (const ReflectedSpecConstant& spec : module.spec_constants) {
    if (spec.id == id) return &spec;
  }
  return nullptr;
}

std::string spec_list(const ReflectedModule& module) {
  std::string list;
  for (const ReflectedSpecConstant& spec : module.spec_constants) {
    if (!list.empty()) list += ", ";
    list += fmt::format("{} ({} bytes)", spec.id, spec.size);
  }
  return list.empty() ? "none" : list;
}

// Checks the options against the module and keeps, in |declared|, the specializations of
// constants the module has. As in VkSpecializationInfo, an id the module does not declare is
// ignored (engines pass one set of constants to every variant of a shader, and compilers remove
// the constants a variant does not use); it is logged so that a mistyped id can be found.
hal_status check_options(const ReflectedModule& module, const ModuleOptions& options,
                         std::vector<Specialization>* declared) {
  for (const Specialization& spec : options.specializations) {
    const ReflectedSpecConstant* found = find_spec(module, spec.id);
    if (found == nullptr) {
      hal::log()->debug(
          "vulkan: specialization constant {} is not in the module (it has: {}); "
          "ignored",
          spec.id, spec_list(module));
      continue;
    }
    if (found->size != spec.size) {
      return hal::failf(HAL_ERROR_INVALID_ARGUMENT,
                        "specialization constant {} is {} bytes in the module, {} were given",
                        spec.id, found->size, spec.size);
    }
    declared->push_back(spec);
  }
  if (options.shared_bytes_constant) {
    const ReflectedSpecConstant* found = find_spec(module, options.shared_bytes_constant_id);
    if (found == nullptr || found->size != 4) {
      return hal::failf(HAL_ERROR_INVALID_ARGUMENT,
                        "shared_bytes_constant_id {} must name a 32-bit integer specialization "
                        "constant of the module (it has: {})",
                        options.shared_bytes_constant_id, spec_list(module));
    }
  }
  return HAL_SUCCESS;
}

// Describes one entry point of a SPIR-V module by the kernel-parameter ABI (module.h): its
// storage buffers and push-constant members become the parameters, after the descriptor numbers
// and the push-constant size are checked against the device.
hal_status plan_reflected_function(const VulkanDevice& device, const ReflectedEntryPoint& entry,
                                   const ModuleOptions& options,
                                   const std::vector<Specialization>& declared,
                                   FunctionPlan* plan) {
  const VkPhysicalDeviceLimits& limits = device.caps().limits;
  plan->specializations = declared;
  plan->shared_bytes_constant = options.shared_bytes_constant;
  plan->shared_bytes_constant_id = options.shared_bytes_constant_id;
  FunctionDesc& desc = plan->desc;
  desc.name = entry.name;
  if (!entry.block_declared) {
    return hal::failf(HAL_ERROR_INVALID_IR, "entry point '{}' declares no workgroup size",
                      entry.name);
  }

  // Descriptor numbers are checked before the driver sees them: a driver may size its layout
  // by the highest binding number, so a huge one is an allocation of gigabytes, not an error.
  // The bound is the device's per-stage resource limit (docs/ABI.md).
  const uint32_t binding_bound =
      std::max(limits.maxPerStageResources, limits.maxPerStageDescriptorStorageBuffers);
  size_t storage_buffers = 0;
  size_t uniform_buffers = 0;
  for (const ReflectedBinding& binding : entry.bindings) {
    storage_buffers += binding.kind == DescriptorKind::kStorageBuffer;
    uniform_buffers += binding.kind == DescriptorKind::kUniformBuffer;
  }
  if (storage_buffers > limits.maxPerStageDescriptorStorageBuffers) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                      "entry point '{}' uses {} storage buffers, the device allows {} per stage "
                      "(maxPerStageDescriptorStorageBuffers)",
                      entry.name, storage_buffers, limits.maxPerStageDescriptorStorageBuffers);
  }
  if (uniform_buffers > limits.maxPerStageDescriptorUniformBuffers) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                      "entry point '{}' uses {} uniform buffers, the device allows {} per stage "
                      "(maxPerStageDescriptorUniformBuffers)",
                      entry.name, uniform_buffers, limits.maxPerStageDescriptorUniformBuffers);
  }
  // An argument becomes a descriptor offset: the device's offset alignment for the kind of
  // buffer applies (the core checks it at launch).
  const uint32_t storage_alignment =
      static_cast<uint32_t>(std::max<VkDeviceSize>(limits.minStorageBufferOffsetAlignment, 1));
  const uint32_t uniform_alignment =
      static_cast<uint32_t>(std::max<VkDeviceSize>(limits.minUniformBufferOffsetAlignment, 1));
  for (const ReflectedBinding& binding : entry.bindings) {
    const std::string named = binding.name.empty() ? "" : fmt::format(" ('{}')", binding.name);
    if (binding.set >= limits.maxBoundDescriptorSets) {
      return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                        "entry point '{}' uses descriptor set {}{}; the device binds sets 0 to {} "
                        "(maxBoundDescriptorSets {})",
                        entry.name, binding.set, named, limits.maxBoundDescriptorSets - 1,
                        limits.maxBoundDescriptorSets);
    }
    if (binding.binding >= binding_bound) {
      return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                        "entry point '{}' uses binding {} of set {}{}; hal accepts binding "
                        "numbers below {} on this device (its per-stage resource limit). "
                        "Number the buffers from 0",
                        entry.name, binding.binding, binding.set, named, binding_bound);
    }
    if (binding.kind == DescriptorKind::kOther) {
      return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                        "entry point '{}' uses a non-buffer descriptor (an image, sampler or "
                        "acceleration structure) at set {} binding {}{}; hal kernels take storage "
                        "and uniform buffers, and push constants",
                        entry.name, binding.set, binding.binding, named);
    }
    const bool uniform = binding.kind == DescriptorKind::kUniformBuffer;
    if (binding.is_array) {
      return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                        "entry point '{}' declares an array of buffers at set {} binding {}{}; "
                        "each {} buffer parameter must be a single binding",
                        entry.name, binding.set, binding.binding, named,
                        uniform ? "uniform" : "storage");
    }
    // The whole block must fit one uniform descriptor: a launch binds at most
    // maxUniformBufferRange bytes from its argument.
    if (uniform && binding.block_bytes > limits.maxUniformBufferRange) {
      return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                        "entry point '{}' declares a uniform block of {} bytes at set {} binding "
                        "{}{}; the device binds at most {} bytes of a uniform buffer "
                        "(maxUniformBufferRange). Make it a storage buffer",
                        entry.name, binding.block_bytes, binding.set, binding.binding, named,
                        limits.maxUniformBufferRange);
    }
    ParamSlot slot;
    slot.set = binding.set;
    slot.binding = binding.binding;
    slot.uniform = uniform;
    plan->slots.push_back(slot);
    ParamInfo param{HAL_PARAM_POINTER, 8, uniform ? uniform_alignment : storage_alignment};
    if (uniform) param.min_bytes = binding.block_bytes;
    desc.params.push_back(param);
  }
  if (entry.push_constant_size > limits.maxPushConstantsSize) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                      "entry point '{}' has {} bytes of push constants, the device allows {}",
                      entry.name, entry.push_constant_size, limits.maxPushConstantsSize);
  }
  for (const ReflectedPushMember& member : entry.push_members) {
    if (member.is_address && !device.caps().buffer_device_address) {
      // A 64-bit member is an address by the ABI; without buffer device addresses there is no
      // meaningful value to pass.
      return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                        "entry point '{}' takes a device address (push-constant member at "
                        "offset {}), but the device has no bufferDeviceAddress",
                        entry.name, member.offset);
    }
    ParamSlot slot;
    slot.push = true;
    slot.offset = member.offset;
    slot.size = member.size;
    plan->slots.push_back(slot);
    // An address needs only the alignment of the accesses the kernel makes through it.
    const hal_param_type type = member.is_float     ? HAL_PARAM_TYPE_FLOAT
                                : member.is_integer ? HAL_PARAM_TYPE_INTEGER
                                                    : HAL_PARAM_TYPE_UNKNOWN;
    desc.params.push_back(
        member.is_address
            ? ParamInfo{HAL_PARAM_POINTER, 8, member.address_alignment, /*nullable=*/true}
            : ParamInfo{HAL_PARAM_VALUE, member.size, member.alignment, /*nullable=*/false, type});
  }
  plan->push_size = entry.push_constant_size;
  desc.static_shared_bytes = entry.workgroup_bytes;
  desc.dynamic_shared = options.shared_bytes_constant;
  desc.shared_bytes_required = options.shared_bytes_constant;
  return HAL_SUCCESS;
}

// HAL_VULKAN_VALIDATION=gpu: the module with bounds checks for the driver (in |out|), and its
// sites; null when it has no access to check or cannot be checked (then it loads as it is, with
// a warning naming its kernels and why).
std::shared_ptr<const BoundsChecks> add_checks(const VulkanDevice& device,
                                               const ReflectedModule& module,
                                               const std::vector<uint32_t>& words,
                                               std::vector<uint32_t>* out) {
  uint32_t set = 0;
  size_t buffers = 0;
  std::string kernels;
  for (const ReflectedEntryPoint& entry : module.entry_points) {
    kernels += fmt::format("{}'{}'", kernels.empty() ? "" : ", ", entry.name);
    size_t storage = 0;
    for (const ReflectedBinding& binding : entry.bindings) {
      set = std::max(set, binding.set + 1);
      storage += binding.kind == DescriptorKind::kStorageBuffer;
    }
    buffers = std::max(buffers, storage);
  }
  const uint32_t max_buffers = device.caps().limits.maxPerStageDescriptorStorageBuffers;
  if (buffers >= max_buffers) {
    hal::log()->warn(
        "HAL_VULKAN_VALIDATION=gpu: kernel(s) {} use {} storage buffers, the device allows {} "
        "per stage, and the bounds checks need one more: loaded without bounds checks",
        kernels, buffers, max_buffers);
    return nullptr;
  }
  // A module using sets beyond the device's is refused by build_function(), with its message.
  const uint32_t max_sets = device.caps().limits.maxBoundDescriptorSets;
  if (set > max_sets) return nullptr;
  if (set == max_sets) {
    hal::log()->warn(
        "HAL_VULKAN_VALIDATION=gpu: kernel(s) {} use descriptor sets 0 to {}, the device binds "
        "{}, and the bounds checks need one more: loaded without bounds checks",
        kernels, set - 1, max_sets);
    return nullptr;
  }
  auto checks = std::make_shared<BoundsChecks>();
  std::string error;
  if (!add_bounds_checks(words, set, out, checks.get(), &error)) {
    hal::log()->warn(
        "HAL_VULKAN_VALIDATION=gpu: kernel(s) {} cannot be checked ({}): loaded "
        "without bounds checks",
        kernels, error);
    return nullptr;
  }
  if (checks->sites.empty()) return nullptr;
  if (validate(device, *out) != HAL_SUCCESS) {
    hal::log()->warn(
        "HAL_VULKAN_VALIDATION=gpu: adding bounds checks to kernel(s) {} gave an invalid module "
        "({}): loaded without bounds checks. Please report this with the module",
        kernels, hal::pending_error());
    hal::clear_pending_error();
    return nullptr;
  }
  hal::log()->debug("vulkan: bounds checks on {} accesses of kernel(s) {}", checks->sites.size(),
                    kernels);
  return checks;
}

}  // namespace

// The SPIR-V capabilities that depend on an optional device feature, with that feature. A
// module declaring one the device lacks is refused here: drivers are not required to reject such
// a module, and some crash on it.
struct CapabilityNeed {
  uint32_t capability;
  const char* capability_name;
  bool DeviceCaps::*feature;
  const char* feature_name;
};
constexpr CapabilityNeed kCapabilityNeeds[] = {
    {9, "Float16", &DeviceCaps::shader_float16, "shaderFloat16"},
    {10, "Float64", &DeviceCaps::shader_float64, "shaderFloat64"},
    {11, "Int64", &DeviceCaps::shader_int64, "shaderInt64"},
    {22, "Int16", &DeviceCaps::shader_int16, "shaderInt16"},
    {39, "Int8", &DeviceCaps::shader_int8, "shaderInt8"},
    {4433, "StorageBuffer16BitAccess", &DeviceCaps::storage_buffer_16bit,
     "storageBuffer16BitAccess"},
    {4434, "UniformAndStorageBuffer16BitAccess", &DeviceCaps::uniform_and_storage_buffer_16bit,
     "uniformAndStorageBuffer16BitAccess"},
    {4448, "StorageBuffer8BitAccess", &DeviceCaps::storage_buffer_8bit, "storageBuffer8BitAccess"},
    {4449, "UniformAndStorageBuffer8BitAccess", &DeviceCaps::uniform_and_storage_buffer_8bit,
     "uniformAndStorageBuffer8BitAccess"},
    {5347, "PhysicalStorageBufferAddresses", &DeviceCaps::buffer_device_address,
     "bufferDeviceAddress"},
    {62, "GroupNonUniformVote", &DeviceCaps::subgroup_vote, "subgroup vote (compute stage)"},
    {63, "GroupNonUniformArithmetic", &DeviceCaps::subgroup_arithmetic,
     "subgroup arithmetic (compute stage)"},
    {64, "GroupNonUniformBallot", &DeviceCaps::subgroup_ballot, "subgroup ballot (compute stage)"},
    {65, "GroupNonUniformShuffle", &DeviceCaps::subgroup_shuffle,
     "subgroup shuffle (compute stage)"},
    {66, "GroupNonUniformShuffleRelative", &DeviceCaps::subgroup_shuffle_relative,
     "subgroup shuffle-relative (compute stage)"},
    {67, "GroupNonUniformClustered", &DeviceCaps::subgroup_clustered,
     "subgroup clustered (compute stage)"},
    {68, "GroupNonUniformQuad", &DeviceCaps::subgroup_quad, "subgroup quad (compute stage)"},
    {12, "Int64Atomics", &DeviceCaps::int64_atomics,
     "shaderBufferInt64Atomics or shaderSharedInt64Atomics"},
    {4441, "VariablePointersStorageBuffer", &DeviceCaps::variable_pointers_storage_buffer,
     "variablePointersStorageBuffer"},
    {4442, "VariablePointers", &DeviceCaps::variable_pointers, "variablePointers"},
    {6016, "DotProductInputAll", &DeviceCaps::integer_dot_product, "shaderIntegerDotProduct"},
    {6017, "DotProductInput4x8Bit", &DeviceCaps::integer_dot_product, "shaderIntegerDotProduct"},
    {6018, "DotProductInput4x8BitPacked", &DeviceCaps::integer_dot_product,
     "shaderIntegerDotProduct"},
    {6019, "DotProduct", &DeviceCaps::integer_dot_product, "shaderIntegerDotProduct"},
    {6033, "AtomicFloat32AddEXT", &DeviceCaps::atomic_float32_add,
     "float32 atomic add (VK_EXT_shader_atomic_float)"},
    {6034, "AtomicFloat64AddEXT", &DeviceCaps::atomic_float64_add,
     "float64 atomic add (VK_EXT_shader_atomic_float)"},
    {6095, "AtomicFloat16AddEXT", &DeviceCaps::atomic_float16_add,
     "float16 atomic add (VK_EXT_shader_atomic_float2)"},
    {5616, "AtomicFloat16MinMaxEXT", &DeviceCaps::atomic_float16_min_max,
     "float16 atomic min and max (VK_EXT_shader_atomic_float2)"},
    {5612, "AtomicFloat32MinMaxEXT", &DeviceCaps::atomic_float32_min_max,
     "float32 atomic min and max (VK_EXT_shader_atomic_float2)"},
    {5613, "AtomicFloat64MinMaxEXT", &DeviceCaps::atomic_float64_min_max,
     "float64 atomic min and max (VK_EXT_shader_atomic_float2)"},
    {5345, "VulkanMemoryModel", &DeviceCaps::vulkan_memory_model, "vulkanMemoryModel"},
    {5346, "VulkanMemoryModelDeviceScope", &DeviceCaps::vulkan_memory_model_device_scope,
     "vulkanMemoryModelDeviceScope"},
    {6022, "CooperativeMatrixKHR", &DeviceCaps::cooperative_matrix,
     "cooperativeMatrix (VK_KHR_cooperative_matrix in compute shaders)"},
    {5357, "CooperativeMatrixNV", &DeviceCaps::cooperative_matrix_nv,
     "VK_NV_cooperative_matrix (hal enables only VK_KHR_cooperative_matrix; compile for "
     "GL_KHR_cooperative_matrix)"},
};

const CapabilityNeed* find_need(uint32_t capability) {
  for (const CapabilityNeed& need : kCapabilityNeeds) {
    if (need.capability == capability) return &need;
  }
  return nullptr;
}

std::vector<uint32_t> capabilities_unknown_to_validator(spv_target_env env, const uint32_t* words,
                                                        size_t count) {
  std::vector<uint32_t> unknown;
  spv_context context = spvContextCreate(env);
  // OpCapability instructions come first, right after the header.
  for (size_t at = 5; at + 1 < count && words[at] == ((2u << 16) | 17u); at += 2) {
    // A SPIR-V 1.3 module of the header and this one instruction (not the module's own
    // version word, which may itself be what is wrong): the tools' parser refuses a capability
    // operand it has no name for.
    const uint32_t probe[] = {kSpirvMagic, 0x00010300u,      0u,           1u,
                              0u,          (2u << 16) | 17u, words[at + 1]};
    if (spvBinaryParse(context, nullptr, probe, 7, nullptr, nullptr, nullptr) != SPV_SUCCESS) {
      unknown.push_back(words[at + 1]);
    }
  }
  spvContextDestroy(context);
  return unknown;
}

// The capabilities a module may declare although the validator cannot read them: each is in
// kCapabilityNeeds, so the device's feature is checked, and hal reflects what it brings (the
// matrix types). Keep this list to what was decided one by one.
constexpr uint32_t kUnvalidatedCapabilities[] = {6022};  // CooperativeMatrixKHR

hal_status check_unvalidated_capabilities(const std::vector<uint32_t>& unknown) {
  for (uint32_t capability : unknown) {
    if (std::find(std::begin(kUnvalidatedCapabilities), std::end(kUnvalidatedCapabilities),
                  capability) == std::end(kUnvalidatedCapabilities)) {
      return hal::failf(HAL_ERROR_INVALID_IR,
                        "the module declares capability {}, which neither hal nor its SPIR-V "
                        "validator knows: a capability newer than this build of hal (it cannot "
                        "enable a device feature it does not know), or a corrupt module",
                        capability);
    }
  }
  return HAL_SUCCESS;
}

hal_status check_capabilities(const ReflectedModule& module, const DeviceCaps& caps) {
  for (uint32_t capability : module.capabilities) {
    const CapabilityNeed* need = find_need(capability);
    if (need != nullptr && !(caps.*need->feature)) {
      return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                        "the module declares the {} capability, but the device has no {} "
                        "feature. Check hal_device_info.features before loading it",
                        need->capability_name, need->feature_name);
    }
  }
  return HAL_SUCCESS;
}

ShaderModuleHandle::~ShaderModuleHandle() {
  if (module != VK_NULL_HANDLE) device.vk().vkDestroyShaderModule(device.handle(), module, nullptr);
}

FunctionState::~FunctionState() {
  const VolkDeviceTable& vk = device.vk();
  for (auto& [key, pipeline] : pipelines_) vk.vkDestroyPipeline(device.handle(), pipeline, nullptr);
  if (layout != VK_NULL_HANDLE) vk.vkDestroyPipelineLayout(device.handle(), layout, nullptr);
  for (VkDescriptorSetLayout set_layout : set_layouts) {
    vk.vkDestroyDescriptorSetLayout(device.handle(), set_layout, nullptr);
  }
}

hal_status FunctionState::check_launch_shared_memory(const uint32_t block[3],
                                                     uint32_t shared_bytes) {
  ReflectOptions options = reflect_options_for(specializations);
  bool block_decided_here = false;
  for (int d = 0; d < 3; ++d) {
    if (entry.block_spec_id[d] == kNoSpecId) continue;
    block_decided_here = true;
    options.specializations.push_back(SpecValue{entry.block_spec_id[d], block[d]});
  }
  if (!block_decided_here) return HAL_SUCCESS;  // static_shared_bytes was exact at load
  if (shared_bytes_constant) {
    options.specializations.push_back(SpecValue{shared_bytes_constant_id, shared_bytes});
  }
  ReflectedModule module;
  std::string error;
  if (!reflect_spirv(shader->words.data(), shader->words.size(), options, &module, &error)) {
    return hal::failf(HAL_ERROR_OUT_OF_RANGE,
                      "'{}' with block {{{},{},{}}}: its shared memory cannot be sized ({})",
                      entry.name, block[0], block[1], block[2], error);
  }
  const uint32_t limit = device.caps().limits.maxComputeSharedMemorySize;
  for (const ReflectedEntryPoint& specialized : module.entry_points) {
    if (specialized.name != entry.name || specialized.workgroup_bytes <= limit) continue;
    return hal::failf(HAL_ERROR_OUT_OF_RANGE,
                      "'{}' with block {{{},{},{}}} declares {} bytes of shared memory (arrays "
                      "sized by its workgroup size{}); the device allows {} per block",
                      entry.name, block[0], block[1], block[2], specialized.workgroup_bytes,
                      shared_bytes_constant ? " and shared_bytes" : "", limit);
  }
  return HAL_SUCCESS;
}

hal_status FunctionState::check_warp_block(const uint32_t block[3]) const {
  if (block[0] % warp_size != 0) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                      "'{}' uses warp-level PTX, which runs on this device only with blocks whose "
                      "x is a multiple of {} (whole subgroups of {} lanes); the block is "
                      "{{{},{},{}}}. Use a block whose x is a multiple of {}",
                      entry.name, warp_size, warp_size, block[0], block[1], block[2], warp_size);
  }
  const uint64_t threads = uint64_t{block[0]} * block[1] * block[2];
  const uint64_t limit = uint64_t{warp_size} * device.caps().max_compute_workgroup_subgroups;
  if (threads > limit) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                      "'{}' uses warp-level PTX; the device runs at most {} subgroups of {} lanes "
                      "in a block, {} threads, and the block {{{},{},{}}} has {}",
                      entry.name, device.caps().max_compute_workgroup_subgroups, warp_size, limit,
                      block[0], block[1], block[2], threads);
  }
  return HAL_SUCCESS;
}

hal_status FunctionState::pipeline(const uint32_t block[3], uint32_t shared_bytes,
                                   VkPipeline* out) {
  // A fixed-size kernel's one pipeline, built at load: the core has checked the block.
  if (fixed_pipeline != VK_NULL_HANDLE) {
    *out = fixed_pipeline;
    return HAL_SUCCESS;
  }
  const std::array<uint32_t, 4> key{block[0], block[1], block[2],
                                    shared_bytes_constant ? shared_bytes : 0};
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) {
    *out = it->second;
    return HAL_SUCCESS;
  }
  if (hal_status status = check_launch_shared_memory(block, shared_bytes); status != HAL_SUCCESS) {
    return status;
  }
  if (subgroup_matrices) {
    hal_status status =
        check_cooperative_matrix_block(entry.name, block, device.caps().subgroup_size);
    if (status != HAL_SUCCESS) return status;
  }
  if (warp_size != 0) {
    hal_status status = check_warp_block(block);
    if (status != HAL_SUCCESS) return status;
  }
  // Specialization data: the module's constants, then the ones the launch decides (block
  // dimensions and the shared-memory size), which win over the module's for the same id.
  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint8_t> data;
  auto add = [&](uint32_t id, const void* bytes, uint32_t size) {
    for (VkSpecializationMapEntry& e : entries) {
      if (e.constantID == id) {
        std::memcpy(data.data() + e.offset, bytes, std::min<size_t>(size, e.size));
        return;
      }
    }
    entries.push_back(VkSpecializationMapEntry{id, static_cast<uint32_t>(data.size()), size});
    data.insert(data.end(), static_cast<const uint8_t*>(bytes),
                static_cast<const uint8_t*>(bytes) + size);
  };
  for (const Specialization& spec : specializations) add(spec.id, &spec.value, spec.size);
  for (int d = 0; d < 3; ++d) {
    if (entry.block_spec_id[d] != kNoSpecId) add(entry.block_spec_id[d], &block[d], 4);
  }
  if (shared_bytes_constant) add(shared_bytes_constant_id, &shared_bytes, 4);
  VkSpecializationInfo specialization{static_cast<uint32_t>(entries.size()), entries.data(),
                                      data.size(), data.data()};

  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = shader->module;
  info.stage.pName = entry.name.c_str();
  info.stage.pSpecializationInfo = entries.empty() ? nullptr : &specialization;
  // Subgroup-scope matrices need every invocation of a subgroup. SPIR-V 1.6 modules get whole
  // subgroups when the block's x is a multiple of the subgroup size (checked above); older ones
  // only with this flag, where the device has it.
  if (subgroup_matrices && shader->words[1] < 0x00010600u && device.caps().compute_full_subgroups) {
    info.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  // Warp-level PTX: subgroups of exactly the warp's width, every one of them full.
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo required_size{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  if (warp_size != 0) {
    required_size.requiredSubgroupSize = warp_size;
    info.stage.pNext = &required_size;
    info.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  info.layout = layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkResult result = device.vk().vkCreateComputePipelines(
      device.handle(), device.pipeline_cache().handle(), 1, &info, nullptr, &pipeline);
  if (result != VK_SUCCESS) {
    hal_status status =
        device.check(result,
                     fmt::format("vkCreateComputePipelines for '{}' (block {}x{}x{})", entry.name,
                                 block[0], block[1], block[2]),
                     "The driver's compiler rejected the kernel; run with HAL_VULKAN_VALIDATION=1");
    if (status == HAL_ERROR_OUT_OF_MEMORY || status == HAL_ERROR_DEVICE_LOST) return status;
    return hal::fail(HAL_ERROR_COMPILE_FAILED, hal::pending_error());
  }
  device.pipeline_cache().mark_dirty();
  pipelines_.emplace(key, pipeline);
  *out = pipeline;
  return HAL_SUCCESS;
}

VulkanModule::~VulkanModule() {
  functions.clear();  // in-flight batches keep their FunctionState alive
  device_.pipeline_cache().save();
}

bool validate_spirv(const VulkanDevice& device, const std::vector<uint32_t>& words,
                    std::string* message) {
  if (device.validated_spirv().contains(words)) return true;
  spv_context context = spvContextCreate(device.caps().spirv_env);
  spv_validator_options options = spvValidatorOptionsCreate();
  if (device.caps().scalar_block_layout) spvValidatorOptionsSetScalarBlockLayout(options, true);
  spv_const_binary_t binary{words.data(), words.size()};
  spv_diagnostic diagnostic = nullptr;
  const spv_result_t result = spvValidateWithOptions(context, options, &binary, &diagnostic);
  if (result != SPV_SUCCESS) {
    *message =
        diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error : "no details";
    if (diagnostic != nullptr && !diagnostic->isTextSource) {
      *message = fmt::format("{} (at word {})", *message, diagnostic->position.index);
    }
  }
  spvDiagnosticDestroy(diagnostic);
  spvValidatorOptionsDestroy(options);
  spvContextDestroy(context);
  if (result == SPV_SUCCESS) device.validated_spirv().passed(words);
  return result == SPV_SUCCESS;
}

hal_status create_shader(VulkanDevice& device, ReflectedModule reflected,
                         std::vector<uint32_t> words, const std::vector<uint32_t>& unvalidated,
                         PreparedShader* out) {
  hal_status status = check_capabilities(reflected, device.caps());
  if (status != HAL_SUCCESS) return status;
  status = check_cooperative_matrices(reflected, device.caps().cooperative_matrix_shapes);
  if (status != HAL_SUCCESS) return status;

  // With bounds checks the driver gets the checked module; hal itself keeps reading the
  // original.
  std::vector<uint32_t> checked;
  std::shared_ptr<const BoundsChecks> bounds;
  if (bounds_checks_enabled() && !unvalidated.empty()) {
    // The rewritten module could not be validated either, and an unchecked rewrite is not worth
    // the risk of handing the driver an invalid module.
    hal::log()->warn(
        "HAL_VULKAN_VALIDATION=gpu: the module declares capability {}, newer than hal's SPIR-V "
        "validator: loaded without bounds checks",
        unvalidated.front());
  } else if (bounds_checks_enabled()) {
    bounds = add_checks(device, reflected, words, &checked);
  }
  const std::vector<uint32_t>& code = bounds ? checked : words;
  VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  info.codeSize = code.size() * 4;
  info.pCode = code.data();
  VkShaderModule shader_module = VK_NULL_HANDLE;
  VkResult result =
      device.vk().vkCreateShaderModule(device.handle(), &info, nullptr, &shader_module);
  if (result != VK_SUCCESS) return device.check(result, "vkCreateShaderModule");
  out->shader = std::make_shared<ShaderModuleHandle>(device, shader_module, std::move(words));
  out->shader->bounds = std::move(bounds);
  out->subgroup_matrices = std::any_of(
      reflected.cooperative_matrices.begin(), reflected.cooperative_matrices.end(),
      [](const ReflectedCooperativeMatrix& m) { return m.scope == spirv::kScopeSubgroup; });
  out->reflected = std::move(reflected);
  return HAL_SUCCESS;
}

hal_status create_function(VulkanDevice& device, const ReflectedEntryPoint& entry,
                           FunctionPlan plan, const PreparedShader& shader,
                           std::unique_ptr<VulkanFunction>* out) {
  const VkPhysicalDeviceLimits& limits = device.caps().limits;
  auto state = std::make_shared<FunctionState>(device);
  state->shader = shader.shader;
  state->entry = entry;
  state->slots = std::move(plan.slots);
  state->push_size = plan.push_size;
  state->param_block_bytes = plan.param_block_bytes;
  state->specializations = std::move(plan.specializations);
  state->subgroup_matrices = shader.subgroup_matrices;
  state->warp_size = plan.warp_size;
  state->shared_bytes_constant = plan.shared_bytes_constant;
  state->shared_bytes_constant_id = plan.shared_bytes_constant_id;
  FunctionDesc& desc = plan.desc;

  const VolkDeviceTable& vk = device.vk();
  auto add_set_layout = [&](const std::vector<VkDescriptorSetLayoutBinding>& bindings) {
    VkDescriptorSetLayoutCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    info.bindingCount = static_cast<uint32_t>(bindings.size());
    info.pBindings = bindings.data();
    VkDescriptorSetLayout layout = VK_NULL_HANDLE;
    VkResult result = vk.vkCreateDescriptorSetLayout(device.handle(), &info, nullptr, &layout);
    if (result != VK_SUCCESS) return device.check(result, "vkCreateDescriptorSetLayout");
    state->set_layouts.push_back(layout);
    return HAL_SUCCESS;
  };
  if (!entry.bindings.empty()) {
    const uint32_t max_set = entry.bindings.back().set;  // sorted by (set, binding)
    for (uint32_t set = 0; set <= max_set; ++set) {
      std::vector<VkDescriptorSetLayoutBinding> bindings;
      for (const ReflectedBinding& binding : entry.bindings) {
        if (binding.set != set) continue;
        bindings.push_back(VkDescriptorSetLayoutBinding{
            binding.binding,
            binding.kind == DescriptorKind::kUniformBuffer ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                                           : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
      }
      hal_status status = add_set_layout(bindings);
      if (status != HAL_SUCCESS) return status;
    }
  }
  const BoundsChecks* bounds = state->shader->bounds.get();
  if (bounds != nullptr) {
    // The bounds-check record: binding 0 of a set of its own, after every set of the module.
    while (state->set_layouts.size() <= bounds->set) {
      std::vector<VkDescriptorSetLayoutBinding> bindings;
      if (state->set_layouts.size() == bounds->set) {
        bindings.push_back(VkDescriptorSetLayoutBinding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                                        VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
      }
      hal_status status = add_set_layout(bindings);
      if (status != HAL_SUCCESS) return status;
    }
  }
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, state->push_size};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = static_cast<uint32_t>(state->set_layouts.size());
  layout_info.pSetLayouts = state->set_layouts.data();
  layout_info.pushConstantRangeCount = state->push_size > 0 ? 1 : 0;
  layout_info.pPushConstantRanges = &range;
  VkResult result =
      vk.vkCreatePipelineLayout(device.handle(), &layout_info, nullptr, &state->layout);
  if (result != VK_SUCCESS) return device.check(result, "vkCreatePipelineLayout");

  // Dimensions given by literals are fixed; the core refuses a launch that differs in them.
  bool fixed = true;
  for (int d = 0; d < 3; ++d) {
    const bool literal = entry.block_spec_id[d] == kNoSpecId;
    fixed = fixed && literal;
    desc.block[d] = literal ? entry.block[d] : 0;
  }
  if (fixed && desc.max_threads_per_block == 0) {
    desc.max_threads_per_block = entry.block[0] * entry.block[1] * entry.block[2];
  }

  // Kernels with a fixed size compile now, so a compiler failure surfaces at load time. One whose
  // workgroup or shared memory exceeds the device's limits (specialization constants can make it
  // so) is never given to the driver: hal_launch refuses it with the numbers.
  bool fits = entry.workgroup_bytes <= limits.maxComputeSharedMemorySize;
  uint64_t invocations = 1;
  for (int d = 0; d < 3; ++d) {
    fits = fits && entry.block[d] >= 1 && entry.block[d] <= limits.maxComputeWorkGroupSize[d];
    invocations *= entry.block[d];
  }
  fits = fits && invocations <= limits.maxComputeWorkGroupInvocations;
  if (fixed && fits && !state->shared_bytes_constant) {
    VkPipeline pipeline = VK_NULL_HANDLE;
    hal_status status = state->pipeline(entry.block, 0, &pipeline);
    if (status != HAL_SUCCESS) return status;
    state->fixed_pipeline = pipeline;  // before any launch can see the state
  }
  auto function = std::make_unique<VulkanFunction>();
  function->desc = std::move(desc);
  function->state = std::move(state);
  *out = std::move(function);
  return HAL_SUCCESS;
}

hal_status load_spirv_module(VulkanDevice& device, const uint8_t* blob, size_t size,
                             const ModuleOptions& options, std::unique_ptr<hal::Module>* out) {
  if (size % 4 != 0 || size < 20) {
    return hal::failf(HAL_ERROR_INVALID_IR,
                      "a SPIR-V module is a sequence of 32-bit words with a 5-word header; {} "
                      "bytes is not (truncated?)",
                      size);
  }
  std::vector<uint32_t> words(size / 4);
  std::memcpy(words.data(), blob, size);
  if (words[0] == byte_swap(kSpirvMagic)) {
    for (uint32_t& word : words) word = byte_swap(word);
  } else if (words[0] != kSpirvMagic) {
    return hal::failf(HAL_ERROR_INVALID_IR, "bad SPIR-V magic number 0x{:08x}", words[0]);
  }
  // A module may declare a capability newer than the SPIR-V tools hal was built with (say
  // CooperativeMatrixKHR). Their validator cannot read such a module at all, so it goes to the
  // driver unvalidated, as Vulkan itself takes it, provided every such capability is one of
  // kUnvalidatedCapabilities, whose device feature (and matrix types) hal checks below; hal's own
  // reflection still reads every instruction it relies on.
  const std::vector<uint32_t> unvalidated =
      capabilities_unknown_to_validator(device.caps().spirv_env, words.data(), words.size());
  hal_status status = HAL_SUCCESS;
  if (unvalidated.empty()) {
    status = validate(device, words);
  } else {
    status = check_unvalidated_capabilities(unvalidated);
    if (status == HAL_SUCCESS) {
      hal::log()->debug(
          "vulkan: the module declares capability {}, newer than hal's SPIR-V validator; it "
          "is not validated",
          unvalidated.front());
    }
  }
  if (status != HAL_SUCCESS) return status;

  // Reflection sees the module after specialization: workgroup sizes and shared arrays built
  // from constants take the values given here.
  ReflectOptions reflect_options = reflect_options_for(options.specializations);
  if (options.shared_bytes_constant) {
    reflect_options.launch_spec_id = options.shared_bytes_constant_id;
  }
  ReflectedModule reflected;
  std::string error;
  if (!reflect_spirv(words.data(), words.size(), reflect_options, &reflected, &error)) {
    return hal::failf(HAL_ERROR_INVALID_IR, "SPIR-V reflection failed: {}", error);
  }
  if (reflected.entry_points.empty()) {
    return hal::fail(HAL_ERROR_INVALID_IR,
                     "the module has no GLCompute entry point; hal runs compute shaders only");
  }
  std::vector<Specialization> declared;
  status = check_options(reflected, options, &declared);
  if (status != HAL_SUCCESS) return status;
  PreparedShader shader;
  status = create_shader(device, std::move(reflected), std::move(words), unvalidated, &shader);
  if (status != HAL_SUCCESS) return status;

  auto module = std::make_unique<VulkanModule>(device);
  for (const ReflectedEntryPoint& entry : shader.reflected.entry_points) {
    FunctionPlan plan;
    status = plan_reflected_function(device, entry, options, declared, &plan);
    if (status != HAL_SUCCESS) return status;
    std::unique_ptr<VulkanFunction> function;
    status = create_function(device, entry, std::move(plan), shader, &function);
    if (status != HAL_SUCCESS) return status;
    module->functions.push_back(std::move(function));
  }
  hal::log()->debug("vulkan: loaded a module with {} entry point(s)", module->functions.size());
  *out = std::move(module);
  return HAL_SUCCESS;
}

}  // namespace hal::vulkan
