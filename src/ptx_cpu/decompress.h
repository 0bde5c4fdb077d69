// The two compressions nvcc applies to fatbin entries: LZ4 (a raw LZ4 block,
// "-compress-mode=speed") and Zstandard (a zstd frame, the default since CUDA 12.9's nvcc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hal::ptx_cpu {

// Decodes the LZ4 block |src| into exactly |size| bytes at |dst|. False on malformed input or a
// different decoded size; never reads or writes out of bounds.
bool lz4_block_decompress(const uint8_t* src, size_t src_size, uint8_t* dst, size_t size);

// Decodes the zstd frame |src| into exactly |size| bytes at |dst| with the system's
// libzstd.so.1, opened on first use. False with the reason in |why| (no libzstd, corrupt data,
// a different decoded size).
bool zstd_decompress(const uint8_t* src, size_t src_size, uint8_t* dst, size_t size,
                     std::string* why);

}  // namespace hal::ptx_cpu
