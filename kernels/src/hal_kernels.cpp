// Lookups over the embedded kernel table.
#include <hal_kernels/hal_kernels.h>

#include <cstring>
#include <vector>

#include "embedded.h"

namespace hal_kernels_detail {
namespace {

const FileBlob* find_file(const char* name) {
  for (size_t i = 0; i < kFileCount; ++i) {
    if (std::strcmp(kFiles[i].name, name) == 0) return &kFiles[i];
  }
  return nullptr;
}

// Blobs 2*i (SPIR-V) and 2*i + 1 (PTX) belong to kernel i. Built once, on first use.
const std::vector<hal_kernel_blob>& blobs() {
  static const std::vector<hal_kernel_blob> table = [] {
    std::vector<hal_kernel_blob> out;
    out.reserve(2 * kKernelCount);
    for (size_t i = 0; i < kKernelCount; ++i) {
      const KernelEntry& k = kKernels[i];
      const char* files[2] = {k.spirv_file, k.ptx_file};
      const hal_ir irs[2] = {HAL_IR_SPIRV, HAL_IR_PTX};
      for (int j = 0; j < 2; ++j) {
        const FileBlob* f = find_file(files[j]);
        out.push_back(hal_kernel_blob{&k.info, irs[j], k.info.name, files[j], f ? f->data : nullptr,
                                      f ? f->size : 0});
      }
    }
    return out;
  }();
  return table;
}

}  // namespace
}  // namespace hal_kernels_detail

using namespace hal_kernels_detail;

extern "C" {

uint32_t hal_kernels_count(void) {
  return static_cast<uint32_t>(kKernelCount);
}

const hal_kernel_info* hal_kernels_get(uint32_t index) {
  return index < kKernelCount ? &kKernels[index].info : nullptr;
}

const hal_kernel_info* hal_kernels_info(const char* name) {
  if (name == nullptr) return nullptr;
  for (size_t i = 0; i < kKernelCount; ++i) {
    if (std::strcmp(kKernels[i].info.name, name) == 0) return &kKernels[i].info;
  }
  return nullptr;
}

const hal_kernel_blob* hal_kernels_find(const char* name, hal_ir ir) {
  if (name == nullptr || (ir != HAL_IR_SPIRV && ir != HAL_IR_PTX)) return nullptr;
  const std::vector<hal_kernel_blob>& all = blobs();
  for (size_t i = 0; i < kKernelCount; ++i) {
    if (std::strcmp(kKernels[i].info.name, name) != 0) continue;
    const hal_kernel_blob& b = all[2 * i + (ir == HAL_IR_PTX ? 1 : 0)];
    return b.data != nullptr ? &b : nullptr;
  }
  return nullptr;
}

const char* hal_kernels_manifest(size_t* size) {
  const FileBlob* f = find_file("manifest.json");
  if (size != nullptr) *size = f ? f->size : 0;
  return f ? reinterpret_cast<const char*>(f->data) : "";
}

}  // extern "C"
