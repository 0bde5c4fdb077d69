// PTX modules on Vulkan devices: the PTX is translated to SPIR-V (src/ptx_spirv/translate.h) and
// the result is loaded as any SPIR-V module (module.h), except that each kernel's parameter list
// is the PTX signature's, exactly as a CUDA device reports it.
//
// Loading, in order:
//  1. hal_module_options with specializations or a shared-bytes constant:
//     HAL_ERROR_NOT_SUPPORTED (PTX has none). A device without bufferDeviceAddress and
//     shaderInt64, which every translated module uses: HAL_ERROR_NOT_SUPPORTED naming the
//     missing feature (such a device does not list HAL_IR_PTX in ir_mask either).
//  2. The text is read up to its first NUL, as NVIDIA's driver reads it. The header and the
//     .entry signatures are read (ptx/reader.h): malformed PTX is HAL_ERROR_INVALID_IR with
//     "PTX line N: ...". HAL_ERROR_NOT_SUPPORTED: a .target beyond the newest architecture
//     the PTX ISA names (sm_121), an arch-specific one (sm_90a, sm_100f: code for that GPU
//     only), and PTX without ".address_size 64".
//  3. The translation comes from the on-disk cache (ptx_cache.h) or from the translator, after
//     the whole text is parsed (bodies too: HAL_ERROR_INVALID_IR with the line). A translator
//     refusal keeps its message: HAL_ERROR_NOT_SUPPORTED for valid PTX it or the device cannot
//     run (warp instructions, f64 without shaderFloat64, ...), HAL_ERROR_INVALID_IR for PTX that
//     is wrong.
//  4. The SPIR-V is validated for the device's Vulkan environment, reflected, checked against
//     the contract of translate.h (an entry point per kernel, no descriptors, the parameter
//     block inside the push constants, the block size as promised) and against the device's
//     features, and handed to the driver. A translation that fails any of these is a bug in
//     hal, reported as HAL_ERROR_INTERNAL with the reason and never given to the driver; a
//     cached one is dropped and translated again instead.
//
// Functions (one per .entry with a body, in file order):
//  - parameters: the PTX signature's, as on CUDA (docs/ABI.md); parameter i is a push-constant
//    slot at KernelInfo::param_offsets[i] of its size, so hal_launch's args[i] lands where the
//    kernel reads it; the push-constant range is KernelInfo::param_bytes rounded up to 4;
//  - block: .reqntid fixes it; otherwise every dimension is the launch's, written into the
//    specialization constants kBlockSpecIds; max_threads_per_block is .maxntid when given;
//  - shared memory: static_shared_bytes is the static .shared variables'; a launch may pass any
//    shared_bytes, as on CUDA (also 0 for a kernel that declares .extern .shared, whose array
//    the translator never makes empty); a kernel with .extern .shared gets shared_bytes through
//    the specialization constant kSharedBytesSpecId.
//
// Thread-safety: load_ptx_module() may run on several threads at once (the cache's files are
// written whole and renamed into place).
#pragma once

#include "common/backend.h"
#include "ptx_spirv/translate.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace hal::vulkan {

struct DeviceCaps;
class VulkanDevice;

// Whether |caps| has what every translated module needs: bufferDeviceAddress (global memory is
// addressed by device address) and shaderInt64 (addresses are 64-bit integers).
bool runs_ptx(const DeviceCaps& caps);

// What the translator may use on a device with |caps|.
ptx_spirv::Target ptx_target(const DeviceCaps& caps);

// VulkanDevice::load_module for HAL_IR_PTX (see above).
hal_status load_ptx_module(VulkanDevice& device, const uint8_t* blob, size_t size,
                           const ModuleOptions& options, std::unique_ptr<hal::Module>* out);

}  // namespace hal::vulkan
