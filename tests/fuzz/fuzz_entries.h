// The fuzz targets' entry points, shared by the libFuzzer executables and by the corpus
// regression test (which runs every corpus file through them in every build, clang or not).
// Each returns "" when the input was handled correctly, or a description of the broken
// invariant; a crash or a sanitizer report is a failure too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hal_fuzz {

// hal::sniff_ir on an exact-size copy of the bytes.
std::string sniff_ir_one(const uint8_t* data, size_t size);

// hal::parse_selector on the bytes as text, with the backend names "cuda" and "vulkan".
std::string selector_one(const uint8_t* data, size_t size);

// The Vulkan pipeline-cache file reader: the first byte picks the form, the rest is the file
// (form 0), or what follows a header that is valid for this device up to its payload size
// (form 1), so that the size, checksum and payload checks are reached. Needs the Vulkan device.
std::string pipeline_cache_one(const uint8_t* data, size_t size);

// The PTX-to-SPIR-V translator (hal::ptx_spirv::translate) on the bytes as PTX, when the front
// end parses them with bodies; bytes it refuses are not the translator's concern. The module is
// translated for three devices: one with every optional feature and generous limits, one with
// none and Vulkan's minimum limits, and one whose features and limits a hash of the bytes picks.
// Each translation must be SPIR-V that SPIRV-Tools validates for Vulkan 1.2, whose kernels are
// each either described (a consistent KernelInfo within the device's limits, and a GLCompute
// entry point of its name) or refused with a reason, in module order; or else a refusal of the
// module with a message. A device that offers all another offers must translate every kernel the
// other does, unless it finds the PTX malformed. Needs no device.
std::string ptx_spirv_one(const uint8_t* data, size_t size);

}  // namespace hal_fuzz
