// SPIR-V reflection: what the Vulkan backend needs to know about a compute module to build its
// pipelines and describe its kernel parameters.
//
// This is a small parser of its own rather than a general reflection library: it reads only the
// instructions listed in spirv_reflect.cpp and ignores everything else. It is written for
// hostile input (it is fuzzed): every word read is bounds-checked against the blob, ids are kept
// in hash maps (never in arrays sized by the header's id bound), type recursion is depth
// limited, and any inconsistency is a clean failure with a message, never a crash.
//
// The module is usually validated with SPIRV-Tools first, but reflect_spirv() does not rely on
// that.
//
// Thread-safety: reflect_spirv() is a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hal::vulkan {

constexpr uint32_t kNoSpecId = 0xFFFFFFFFu;

enum class DescriptorKind : uint8_t {
  kStorageBuffer,  // StorageBuffer storage class, or Uniform + BufferBlock
  kUniformBuffer,  // Uniform + Block
  kOther           // images, samplers, acceleration structures, ...
};

struct ReflectedBinding {
  uint32_t set = 0;
  uint32_t binding = 0;
  DescriptorKind kind = DescriptorKind::kStorageBuffer;
  bool is_array = false;     // an array of descriptors (binding count > 1 or runtime-sized)
  std::string name;          // the variable's OpName, or ""
  uint64_t block_bytes = 0;  // uniform buffers: the block's size as laid out
};

struct ReflectedPushMember {
  uint32_t offset = 0;
  uint32_t size = 0;
  uint32_t alignment = 0;
  // A 64-bit integer or a PhysicalStorageBuffer pointer: a device address (kernel ABI rule 2).
  bool is_address = false;
  // Addresses only: the alignment the kernel needs of the address. The widest access the entry
  // point's code makes through it (its Aligned memory operand, else an Aligned decoration on the
  // pointer, else the scalar's size), traced from the push-constant load through access chains,
  // bitcasts, integer offsets and function variables. When no access is traced: the widest
  // scalar of a PhysicalStorageBuffer pointee, 1 for a plain 64-bit integer.
  uint32_t address_alignment = 1;
  // Values only: an integer or float scalar (hal_param_info.type); else neither (vectors,
  // matrices, arrays, structs).
  bool is_integer = false;
  bool is_float = false;
};

struct ReflectedEntryPoint {
  std::string name;
  // The workgroup size, per dimension. From LocalSize, LocalSizeId, or a WorkgroupSize built-in
  // constant (which overrides both, as in the SPIR-V spec), evaluated after specialization: a
  // literal, a constant given a value at load, or an OpSpecConstantOp expression is fixed. Only
  // a dimension that is a bare specialization constant left without a value at load is decided
  // by each launch: its SpecId is in |block_spec_id|, its default in |block|.
  uint32_t block[3] = {1, 1, 1};
  uint32_t block_spec_id[3] = {kNoSpecId, kNoSpecId, kNoSpecId};
  bool block_declared = false;  // false: no LocalSize of any kind (invalid for GLCompute)
  std::vector<ReflectedBinding> bindings;         // sorted by (set, binding)
  std::vector<ReflectedPushMember> push_members;  // sorted by offset
  uint32_t push_constant_size = 0;  // bytes the push-constant block spans, rounded up to 4
  // Static shared memory: every Workgroup variable, arrays sized by specialization constants at
  // their specialized values. An array whose length depends on a value decided at launch (the
  // shared-bytes constant, a launch-decided block dimension) or cannot be evaluated counts 0.
  uint32_t workgroup_bytes = 0;
};

struct ReflectedSpecConstant {
  uint32_t id = 0;    // SpecId
  uint32_t size = 0;  // bytes: 4 for booleans (VkBool32), else the scalar width
};

// A cooperative matrix type (OpTypeCooperativeMatrixKHR, SPV_KHR_cooperative_matrix), its
// operands evaluated after specialization. Devices support only some shapes and component types
// (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR), so the backend checks each one before a
// driver compiles the module.
struct ReflectedCooperativeMatrix {
  enum class Kind : uint8_t { kFloat, kSignedInt, kUnsignedInt, kOther };
  Kind kind = Kind::kOther;  // the component type
  uint32_t width = 0;        // its bits
  uint32_t scope = 0;        // a SPIR-V Scope: 3 subgroup, 2 workgroup
  uint32_t rows = 0;
  uint32_t columns = 0;
  uint32_t use = 0;  // 0 matrix A, 1 matrix B, 2 accumulator
  // False when an operand could not be evaluated at load (it depends on a value decided at each
  // launch, or is not a constant); the other fields are then meaningless.
  bool known = false;
};

struct ReflectedModule {
  uint32_t version = 0;                           // the header's version word, 0x00MMmm00
  std::vector<ReflectedEntryPoint> entry_points;  // GLCompute only, in declaration order
  std::vector<ReflectedSpecConstant> spec_constants;
  bool uses_physical_storage_buffer = false;  // the PhysicalStorageBufferAddresses capability
  std::vector<uint32_t> capabilities;         // every OpCapability operand, in module order
  std::vector<ReflectedCooperativeMatrix> cooperative_matrices;  // each such type, in order
};

// A value given to a specialization constant at load. Only the constant's own width is read
// (the low bytes of |value|; a boolean is true when nonzero, as VkBool32).
struct SpecValue {
  uint32_t id = 0;
  uint64_t value = 0;
};

struct ReflectOptions {
  std::vector<SpecValue> specializations;  // ids the module does not declare are ignored
  uint32_t launch_spec_id = kNoSpecId;     // a constant each launch sets (the shared-bytes one)
};

// Parses |word_count| native-endian words. Returns false with |error| set (what was wrong and at
// which word) on malformed input.
bool reflect_spirv(const uint32_t* words, size_t word_count, const ReflectOptions& options,
                   ReflectedModule* out, std::string* error);
// The same with no specialization: every constant at its default.
bool reflect_spirv(const uint32_t* words, size_t word_count, ReflectedModule* out,
                   std::string* error);

}  // namespace hal::vulkan
