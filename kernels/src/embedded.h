// What the generated sources of hal_kernels define: the embedded files (hal_kernels_embed) and
// the kernel table (CMake, from manifest.json).
#pragma once

#include <hal_kernels/hal_kernels.h>

#include <cstddef>

namespace hal_kernels_detail {

struct FileBlob {
  const char* name;  // file name, without directories
  const unsigned char* data;
  size_t size;  // without the NUL that follows the data
};

struct KernelEntry {
  hal_kernel_info info;
  const char* spirv_file;
  const char* ptx_file;
};

extern const FileBlob kFiles[];
extern const size_t kFileCount;
extern const KernelEntry kKernels[];
extern const size_t kKernelCount;

}  // namespace hal_kernels_detail
