// Vulkan modules and functions: SPIR-V validation, reflection into hal's kernel-parameter ABI,
// and compute pipelines. PTX modules (ptx_module.h) are translated to SPIR-V and then built from
// the same pieces: validate_spirv(), create_shader() and create_function().
//
// Loading: the blob (either endianness) is validated with SPIRV-Tools for the device's Vulkan
// environment before the driver sees it (failure: HAL_ERROR_INVALID_IR with the validator's
// message), reflected (spirv_reflect.h), checked against the device (each capability that needs
// a feature, each cooperative matrix shape: HAL_ERROR_NOT_SUPPORTED naming what is missing), and
// turned into one VkShaderModule. Every GLCompute entry point becomes a function with its own
// descriptor-set and pipeline layouts. A module declaring a capability newer than the validator
// (which cannot read it at all) skips validation when hal knows the feature that capability
// needs, as Vulkan itself takes modules unvalidated; otherwise it is HAL_ERROR_INVALID_IR.
//
// Kernel-parameter ABI (the same parameter list as a CUDA kernel of the same signature):
//  1. storage buffers, sorted by (set, binding), are pointer parameters; the argument is bound
//     at its offset inside its allocation with the range running to the allocation's end
//     (capped at maxStorageBufferRange);
//  2. then the push-constant members in offset order: a 64-bit integer or PhysicalStorageBuffer
//     pointer member is a pointer parameter whose value is the device address (buffer device
//     address kernels); any other member is a value parameter of its size.
//
// Bounds checks (HAL_VULKAN_VALIDATION=gpu): the driver gets the module with the checks of
// spirv_bounds_check.h, and every function's pipeline layout has the record set after the
// module's own sets.
//
// Pipelines: one per (function, block size, shared-bytes value), created on first use (at load
// time for kernels with a fixed workgroup size) through the device's VkPipelineCache and kept
// until the module is gone. LocalSizeId and WorkgroupSize-by-spec-constant kernels take their
// block from the launch, which sets those specialization constants.
//
// Lifetime: a function's Vulkan objects live in a FunctionState shared with every batch that
// launched it, so unloading a module never destroys a pipeline still used by in-flight work.
//
// Thread-safety: pipeline creation locks the function's cache; everything else is immutable
// after load.
#pragma once

#include "common/backend.h"
#include "vulkan/spirv_bounds_check.h"
#include "vulkan/spirv_reflect.h"
#include "vulkan/vk.h"

#include <spirv-tools/libspirv.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hal::vulkan {

struct DeviceCaps;

class VulkanDevice;

// Where parameter i of a function goes.
struct ParamSlot {
  bool push = false;     // push-constant member (else a buffer descriptor)
  bool uniform = false;  // descriptor slots: a uniform buffer (else a storage buffer)
  uint32_t set = 0;
  uint32_t binding = 0;
  uint32_t offset = 0;  // push-constant slots
  uint32_t size = 0;
};

struct ShaderModuleHandle {
  ShaderModuleHandle(VulkanDevice& d, VkShaderModule m, std::vector<uint32_t> w)
      : device(d), module(m), words(std::move(w)) {}
  ~ShaderModuleHandle();
  VulkanDevice& device;
  VkShaderModule module;
  // The module's words (native endian): read again when a launch decides specialization
  // constants that size shared memory.
  std::vector<uint32_t> words;
  // HAL_VULKAN_VALIDATION=gpu: the checks |module| (not |words|) carries, or null.
  std::shared_ptr<const BoundsChecks> bounds;
};

struct FunctionState {
  explicit FunctionState(VulkanDevice& d) : device(d) {}
  ~FunctionState();
  FunctionState(const FunctionState&) = delete;
  FunctionState& operator=(const FunctionState&) = delete;

  // The pipeline for |block| and |shared_bytes|, created on first use. A block the launch
  // decides may size shared arrays (shared float buf[gl_WorkGroupSize.x * 16]): before the
  // pipeline is created, their size at this block is checked against the device
  // (HAL_ERROR_OUT_OF_RANGE), which hal_launch could not do from static_shared_bytes.
  hal_status pipeline(const uint32_t block[3], uint32_t shared_bytes, VkPipeline* out);

  VulkanDevice& device;
  std::shared_ptr<ShaderModuleHandle> shader;
  ReflectedEntryPoint entry;
  std::vector<ParamSlot> slots;
  std::vector<VkDescriptorSetLayout> set_layouts;  // index = set number
  VkPipelineLayout layout = VK_NULL_HANDLE;
  uint32_t push_size = 0;
  uint32_t param_block_bytes = 0;               // FunctionPlan::param_block_bytes
  std::vector<Specialization> specializations;  // from the module options, declared ids only
  bool shared_bytes_constant = false;
  uint32_t shared_bytes_constant_id = 0;
  // The module uses subgroup-scope cooperative matrices: every pipeline needs whole subgroups.
  bool subgroup_matrices = false;
  uint32_t warp_size = 0;  // FunctionPlan::warp_size
  // A kernel whose block is fixed (and with no shared-bytes constant) has one pipeline, built at
  // load and set before the function is published: launches take it without a lock.
  VkPipeline fixed_pipeline = VK_NULL_HANDLE;

 private:
  hal_status check_launch_shared_memory(const uint32_t block[3], uint32_t shared_bytes);
  // Warp-level PTX: HAL_ERROR_NOT_SUPPORTED unless |block| fills whole 32-lane subgroups and
  // the device runs that many in one workgroup.
  hal_status check_warp_block(const uint32_t block[3]) const;

  std::mutex mutex_;
  std::map<std::array<uint32_t, 4>, VkPipeline> pipelines_;
};

class VulkanFunction : public hal::Function {
 public:
  std::shared_ptr<FunctionState> state;
};

class VulkanModule : public hal::Module {
 public:
  explicit VulkanModule(VulkanDevice& device) : device_(device) {}
  ~VulkanModule() override;

 private:
  VulkanDevice& device_;
};

// HAL_ERROR_NOT_SUPPORTED, naming the capability and the feature, when |module| declares a
// SPIR-V capability that needs a device feature |caps| lacks (16-bit storage, Float64, ...).
hal_status check_capabilities(const ReflectedModule& module, const DeviceCaps& caps);

// The capabilities among the module's leading OpCapability instructions that the SPIR-V tools
// hal was built with cannot read (newer than they are), in module order. Their validator refuses
// any module that declares one.
std::vector<uint32_t> capabilities_unknown_to_validator(spv_target_env env, const uint32_t* words,
                                                        size_t count);

// For a module the validator cannot read: HAL_SUCCESS when hal knows, for each capability of
// |unknown|, the device feature it needs (so check_capabilities() covers it); else
// HAL_ERROR_INVALID_IR naming the capability.
hal_status check_unvalidated_capabilities(const std::vector<uint32_t>& unknown);

// Runs the SPIRV-Tools validator on |words| (native endian) for the device's Vulkan environment.
// False, with the validator's message and the word it points at in |message|, when it fails.
// Words the validator already passed on this device pass without running it again
// (validated_spirv.h).
bool validate_spirv(const VulkanDevice& device, const std::vector<uint32_t>& words,
                    std::string* message);

// A module after validation, reflection and the device checks, given to the driver.
struct PreparedShader {
  ReflectedModule reflected;
  std::shared_ptr<ShaderModuleHandle> shader;
  bool subgroup_matrices = false;  // it uses subgroup-scope cooperative matrices
};

// Checks |reflected|, the reflection of |words|, against the device (check_capabilities(), the
// cooperative matrix shapes: HAL_ERROR_NOT_SUPPORTED naming what is missing) and creates the
// VkShaderModule, with bounds checks under HAL_VULKAN_VALIDATION=gpu unless |unvalidated| (the
// capabilities the validator could not read) is non-empty. |words| must have been validated, or
// checked by check_unvalidated_capabilities(). Driver failures: HAL_ERROR_OUT_OF_MEMORY,
// HAL_ERROR_DEVICE_LOST.
hal_status create_shader(VulkanDevice& device, ReflectedModule reflected,
                         std::vector<uint32_t> words, const std::vector<uint32_t>& unvalidated,
                         PreparedShader* out);

// How one entry point's parameters reach it and what hal_launch checks: from reflection for
// SPIR-V (the ABI above), from the PTX signature for PTX (ptx_module.h).
struct FunctionPlan {
  // The description the core checks launches against: name, params, static_shared_bytes,
  // dynamic_shared, shared_bytes_required, and max_threads_per_block when the IR bounds it.
  // create_function() sets block[] from the entry point (and max_threads_per_block to a fixed
  // block's size when it is still 0).
  FunctionDesc desc;
  std::vector<ParamSlot> slots;  // slots[i] receives args[i]
  uint32_t push_size = 0;        // bytes of the push-constant range, a multiple of 4
  // Nonzero: the push slots' offsets are into a block of this many bytes that each launch writes
  // to staging memory, and the push constants hold its 8-byte device address (PTX parameters
  // beyond the device's push-constant size).
  uint32_t param_block_bytes = 0;
  std::vector<Specialization> specializations;  // constants every pipeline sets
  bool shared_bytes_constant = false;           // the launch's shared_bytes sets this constant
  uint32_t shared_bytes_constant_id = 0;
  // Nonzero (32, for warp-level PTX): every pipeline runs subgroups of exactly this size, all
  // full, so a launch's block must have an x that is a multiple of it.
  uint32_t warp_size = 0;
};

// Creates the function of |entry|, an entry point of |shader|: its descriptor-set layouts (one
// storage buffer per binding of |entry|, plus the bounds-check record), its pipeline layout with
// |plan|.push_size bytes of push constants, and, for a fixed block that fits the device and no
// shared-bytes constant, its one pipeline (a compiler failure is HAL_ERROR_COMPILE_FAILED at
// load). The slots of |plan| must describe bindings of |entry| and ranges inside push_size.
hal_status create_function(VulkanDevice& device, const ReflectedEntryPoint& entry,
                           FunctionPlan plan, const PreparedShader& shader,
                           std::unique_ptr<VulkanFunction>* out);

// Validates, reflects and loads a SPIR-V blob (see above).
hal_status load_spirv_module(VulkanDevice& device, const uint8_t* blob, size_t size,
                             const ModuleOptions& options, std::unique_ptr<hal::Module>* out);

}  // namespace hal::vulkan
