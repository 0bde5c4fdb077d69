// What hal's on-disk caches (the pipeline cache, the PTX translation cache) share: their
// checksum, little-endian fields, and writing a file so that readers never see it half written.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hal::vulkan {

// 64-bit FNV-1a of |size| bytes.
uint64_t fnv1a(const uint8_t* data, size_t size);

// Appends the low |bytes| bytes of |value|, little-endian.
void put(std::vector<uint8_t>* out, uint64_t value, int bytes);

// The whole of the file at |path|, read at once; empty when it cannot be read.
std::vector<uint8_t> read_whole_file(const std::string& path);

// Writes |bytes| to |path| through a temporary file beside it (unique per process and call),
// renamed over |path|: a reader sees the old file or the new one, and concurrent writers, threads
// or processes, never mix their bytes. Creates the directory. A failure is logged, naming |what|,
// and otherwise ignored: a cache is an optimisation.
void write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes,
                           const char* what);

}  // namespace hal::vulkan
