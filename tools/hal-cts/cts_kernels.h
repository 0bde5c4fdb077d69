// Kernels of hal-cts itself, embedded as words, for checks the kernel pack cannot make: the pack's
// kernels all have a fixed block size, so blocks at the device's limits need a kernel whose block
// size is chosen at launch. Both write out[i] = i + 1 for every thread's linear index i below n
// (blocks and grids of any shape, linearised x fastest).
#pragma once

#include <cstddef>
#include <cstdint>

namespace cts {

// SPIR-V 1.5, entry point "main"; its workgroup size is built of specialization constants, so
// hal_launch sets the block. Parameters: out (storage buffer, set 0 binding 0), n (u32).
extern const uint32_t kIndexSpirv[];
extern const size_t kIndexSpirvBytes;
// PTX (ISA 7.0, sm_50), entry point "cts_index", with no fixed block. Parameters: out (.u64), n
// (.u32). NUL-terminated; the size excludes the NUL.
extern const char kIndexPtx[];
extern const size_t kIndexPtxBytes;

// SPIR-V 1.5 with buffer device addresses (devices with HAL_FEATURE_BUFFER_DEVICE_ADDRESS),
// entry point "main", block 64: y[i] = x[i] * 2 + 1 for i < n. Parameters: x, y (addresses in
// push constants, each needing 4-byte alignment), n (u32).
extern const uint32_t kAddressSpirv[];
extern const size_t kAddressSpirvBytes;

// SPIR-V 1.5 with a uniform block, entry point "main", block 64: data[i] = i * mul[i % 3] + add
// for i < n. Parameters: settings (uniform buffer, set 0 binding 0: a std140 block of 64 bytes,
// |add| at byte 0 and |mul| at bytes 16, 32 and 48), out (storage buffer, binding 1), n (u32).
extern const uint32_t kUniformSpirv[];
extern const size_t kUniformSpirvBytes;

}  // namespace cts
