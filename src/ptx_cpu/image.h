// Module images: telling PTX text, fatbins and cubins apart, and finding the PTX to run.
//
// A fatbin (what nvcc -fatbin writes, and what host objects embed) is a 16-byte header
//   u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries that follow
// and then entries, each a header (at least 64 bytes) followed by its payload:
//   +0 u16 kind (1 PTX, 2 ELF cubin), +4 u32 header size, +8 u64 payload size (padded),
//   +16 u32 compressed size (0 when not compressed), +24 u16 minor and +26 u16 major version
//   (of the PTX ISA for PTX), +28 u32 architecture (80 for compute_80 / sm_80),
//   +40 u64 flags (0x2000: LZ4-compressed, 0x8000: zstd-compressed), +56 u64 decompressed size.
// nvcc 13 compresses PTX entries with zstd by default ("-compress-mode=speed" gives LZ4,
// "=none" nothing). The wrapper that host objects register (magic 0x466243B1, version, then a
// pointer to the fatbin) is accepted in place of the fatbin.
//
// A cubin is an ELF file for machine EM_CUDA (190): machine code for one GPU, which this device
// cannot run.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace hal::ptx_cpu {

// Where the PTX to load came from, for the JIT info log.
struct PtxSource {
  std::string text;    // the PTX, without a terminating NUL
  std::string origin;  // "PTX text", "the fatbin's compute_80 PTX (zstd, 364 -> 739 bytes)"
};

// Finds the PTX in |image|: the image itself when it is PTX text; in a fatbin (or the wrapper
// around one), the PTX entry of the highest architecture not above sm_80, decompressed.
// Returns CUDA_SUCCESS; CUDA_ERROR_INVALID_IMAGE (neither PTX text, a fatbin nor an ELF file, a
// malformed fatbin, an entry that does not decompress); CUDA_ERROR_NO_BINARY_FOR_GPU (a cubin,
// or a fatbin with no PTX this device can run); CUDA_ERROR_NOT_SUPPORTED (a zstd entry without
// libzstd). On failure |error_log| says why, naming the architectures a fatbin carries.
CUresult find_ptx(const void* image, PtxSource* out, std::string* error_log);

// What the first directives of a PTX module say.
struct PtxHeader {
  uint32_t version = 0;    // .version as 10 * major + minor; 0 when absent
  std::string target;      // the architecture of .target ("sm_90a"); "" when absent
  uint32_t target_sm = 0;  // 90 for sm_90a
  char suffix = 0;         // 'a', 'f' or 0
};
// Reads .version and .target, skipping comments. Never fails; absent directives stay empty.
PtxHeader scan_ptx_header(std::string_view text);

}  // namespace hal::ptx_cpu
