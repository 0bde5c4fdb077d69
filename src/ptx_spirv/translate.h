// The PTX-to-SPIR-V translator: a PTX module, parsed by the front end (src/ptx), becomes one
// Vulkan compute SPIR-V module with one GLCompute entry point per PTX .entry, of the same name.
//
// What the SPIR-V looks like (the contract with the Vulkan driver, which loads it as any SPIR-V
// but takes the kernel's parameter list from the PTX signature):
//  - SPIR-V 1.5 (Vulkan 1.2), Shader capability, logical addressing plus
//    PhysicalStorageBuffer64 (global and generic memory are device addresses), GLSL450 memory
//    model. Int64 is always used.
//  - Parameters: the entry's .param bytes, laid out exactly as cuLaunchKernel packs them (each
//    parameter at the next multiple of its alignment), are the entry's push-constant block, from
//    offset 0, or, when they exceed Target::max_push_constant_bytes, a block in memory whose
//    address is the push constants (KernelInfo::params_in_buffer). KernelInfo::param_offsets
//    says where each one lies.
//  - Block size: a WorkgroupSize built-in made of the specialization constants kBlockSpecIds
//    (defaults 1), so the launch decides the block; a .reqntid kernel has a literal LocalSize.
//  - Shared memory: the static .shared variables, then the dynamic (.extern .shared) memory,
//    in one Workgroup array. When the kernel declares .extern .shared, the array's length adds
//    the specialization constant kSharedBytesSpecId (the launch's shared_bytes), rounded up.
//  - Calls to .func are inlined (inline.h): each entry point is one SPIR-V function.
//  - Every module produced is validated by the caller; the translator promises SPIR-V that
//    passes spirv-val for Vulkan 1.2, and a failure there is a translator bug.
//
//  - Warp-level PTX (shfl, vote, match, redux, activemask, elect, bar.warp.sync, %laneid,
//    %warpid, %lanemask_*) becomes subgroup operations on 32-lane subgroups
//    (KernelInfo::warp_size); the module then declares the GroupNonUniform capabilities. On a
//    Target without 32-lane warps, 32-lane warps are made of the workgroup's invocations and
//    exchange through a Workgroup array between workgroup barriers (lower_warp.cpp), where the
//    whole block reaches each warp instruction together (uniformity.h).
//
// What is refused (Failure::kind kNotSupported, naming the kernel, the PTX line and the
// instruction or feature; per kernel, see translate()): warp instructions in divergent code on a
// device without 32-lane warps (Target::warp32), and the matrix instructions but mma.sync
// (m16n8k16, m16n8k8; f16 or bf16 into f32) and ldmatrix (lower_matrix.cpp); instructions with no
// lowering yet; device features the Target lacks (f64 without float64, ...); irreducible control
// flow; generic addresses that cannot be traced to one state space; a module that mixes .reqntid
// kernels with kernels whose block the launch decides.
//
// Thread-safety: translate() is a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ptx/ir.h"

namespace hal::ptx_spirv {

// The specialization constants every translated kernel may declare.
inline constexpr uint32_t kBlockSpecIds[3] = {0, 1, 2};
inline constexpr uint32_t kSharedBytesSpecId = 3;

// What the device offers, as far as translation is concerned. A kernel that needs more is
// refused; nothing is emulated silently in a way that changes results.
struct Target {
  bool float64 = false;               // shaderFloat64
  bool int16 = false;                 // shaderInt16
  bool int8 = false;                  // shaderInt8
  bool float16 = false;               // shaderFloat16
  bool storage_buffer_8bit = false;   // storageBuffer8BitAccess (8-bit global loads/stores)
  bool storage_buffer_16bit = false;  // storageBuffer16BitAccess (16-bit global loads/stores)
  bool int64_atomics = false;         // shaderBufferInt64Atomics and shaderSharedInt64Atomics
  bool float32_atomic_add = false;    // shaderBufferFloat32AtomicAdd and the shared one
  uint32_t max_push_constant_bytes = 128;
  uint32_t max_shared_bytes = 16384;  // maxComputeSharedMemorySize
  // 32-lane warps: the device creates compute pipelines with a required subgroup size of 32
  // and full subgroups, and has the basic, vote, ballot, shuffle and arithmetic subgroup
  // operations in compute shaders. Without them, warps run through workgroup memory.
  bool warp32 = false;
  // Why the device has no 32-lane warps (said in the refusal of a warp kernel that cannot run
  // through workgroup memory); empty when warp32.
  std::string no_warp32;
};

// The width of a PTX warp, which every warp-level kernel runs with.
inline constexpr uint32_t kWarpSize = 32;

struct KernelInfo {
  std::string name;          // the .entry's name, also the SPIR-V entry point's
  uint32_t param_bytes = 0;  // the parameters' size, laid out as cuLaunchKernel does
  // false: the parameters are the push-constant block; true (they take more than the device's
  // push constants): they are a block in memory the launch writes, and the push-constant block
  // is its 8-byte address (16-byte aligned, the block's size rounded up to 4 bytes).
  bool params_in_buffer = false;
  std::vector<uint32_t> param_offsets;  // per PTX parameter, in order
  // Static .shared variables, laid out; with warps through workgroup memory and a .reqntid
  // block, their exchange array too (otherwise its size follows the launch's block).
  uint32_t static_shared_bytes = 0;
  bool dynamic_shared = false;      // declares .extern .shared (sized by shared_bytes)
  uint32_t reqntid[3] = {0, 0, 0};  // .reqntid, zeros when absent (then the block is free)
  uint32_t maxntid = 0;             // product of .maxntid, 0 when absent
  // kWarpSize when the kernel uses warp-level PTX, else 0. Such a kernel's pipeline must run
  // subgroups of exactly this many invocations, all full (requiredSubgroupSize and
  // REQUIRE_FULL_SUBGROUPS), which Vulkan allows only when the block's x is a multiple of it.
  // The kernel numbers its threads from its subgroups, as CUDA numbers a block's threads from
  // its warps: thread (x, y, z) of the block is lane i of subgroup w, where
  // 32 * w + i = x + y * ntid.x + z * ntid.x * ntid.y, whichever invocation the device gave it.
  uint32_t warp_size = 0;
};

// A kernel left out of the SPIR-V module, and why (a Failure::Kind::kNotSupported message).
struct RefusedKernel {
  std::string name;
  std::string reason;
};

struct Translation {
  std::vector<uint32_t> words;      // the SPIR-V module
  std::vector<KernelInfo> kernels;  // one per .entry that translated, in module order
  // The .entry kernels that cannot be translated (refusals of kind kNotSupported), in module
  // order. Every .entry with a body is in exactly one of |kernels| and |refused|.
  std::vector<RefusedKernel> refused;
};

struct Failure {
  enum class Kind : uint8_t {
    kNotSupported,  // valid PTX the translator or the device cannot run (HAL_ERROR_NOT_SUPPORTED)
    kInvalid,       // PTX that is wrong (HAL_ERROR_INVALID_IR)
  };
  Kind kind = Kind::kNotSupported;
  std::string message;  // "kernel 'k', PTX line 12: 'shfl.sync.bfly.b32' ...: why"
};

// Translates every .entry of |module| (parsed with bodies). A kernel that cannot be translated
// (kNotSupported) is left out and listed in |out->refused|, so one warp-level kernel does not
// keep its module's other kernels off the device. Returns true and fills |out| when at least one
// kernel translated. Returns false with |failure| set when none did (the first refusal's
// reason), when the PTX is malformed (kInvalid, whatever the other kernels), or when the module
// as a whole cannot be translated; |out| is then unspecified.
bool translate(const ptx::ir::Module& module, const Target& target, Translation* out,
               Failure* failure);

}  // namespace hal::ptx_spirv
