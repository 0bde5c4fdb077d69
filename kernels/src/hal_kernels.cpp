// Lookups over the embedded kernel table.
#include <hal_kernels/hal_kernels.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "embedded.h"

namespace hal_kernels_detail {
namespace {

// The features a pack kernel may require, named for the reason hal_kernels_runs_on gives.
struct FeatureNeed {
  uint64_t bit;
  const char* name;
  const char* what;
};
constexpr FeatureNeed kFeatureNeeds[] = {
    {HAL_FEATURE_STORAGE_16BIT, "HAL_FEATURE_STORAGE_16BIT", "16-bit loads and stores in buffers"},
    {HAL_FEATURE_SUBGROUP_BALLOT, "HAL_FEATURE_SUBGROUP_BALLOT",
     "subgroup ballot and broadcast in compute kernels"},
};

const char* ir_name(hal_ir ir) {
  switch (ir) {
    case HAL_IR_SPIRV:
      return "SPIR-V";
    case HAL_IR_PTX:
      return "PTX";
    case HAL_IR_BUILTIN:
      return "built-in form";
    default:
      return "that IR";
  }
}

const FileBlob* find_file(const char* name) {
  for (size_t i = 0; i < kFileCount; ++i) {
    if (std::strcmp(kFiles[i].name, name) == 0) return &kFiles[i];
  }
  return nullptr;
}

// Blobs 3*i (SPIR-V), 3*i + 1 (PTX) and 3*i + 2 (built-in) belong to kernel i. A built-in
// blob's bytes are "HALK" and the kernel's name, held by |builtin|, followed by a NUL not counted
// in its size.
struct BlobTable {
  BlobTable() {
    builtin.reserve(kKernelCount);
    blobs.reserve(3 * kKernelCount);
    for (size_t i = 0; i < kKernelCount; ++i) {
      const KernelEntry& k = kKernels[i];
      const char* files[2] = {k.spirv_file, k.ptx_file};
      const hal_ir irs[2] = {HAL_IR_SPIRV, HAL_IR_PTX};
      for (int j = 0; j < 2; ++j) {
        const FileBlob* f = find_file(files[j]);
        blobs.push_back(hal_kernel_blob{&k.info, irs[j], k.info.name, files[j],
                                        f ? f->data : nullptr, f ? f->size : 0});
      }
      const std::string& name = builtin.emplace_back(std::string("HALK") + k.info.name);
      blobs.push_back(
          hal_kernel_blob{&k.info, HAL_IR_BUILTIN, k.info.name, "", name.c_str(), name.size()});
    }
  }
  std::vector<std::string> builtin;  // reserved up front: its strings never move
  std::vector<hal_kernel_blob> blobs;
};

// Built once, on first use.
const std::vector<hal_kernel_blob>& blobs() {
  static const BlobTable table;
  return table.blobs;
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
  size_t slot = 0;
  switch (ir) {
    case HAL_IR_SPIRV:
      slot = 0;
      break;
    case HAL_IR_PTX:
      slot = 1;
      break;
    case HAL_IR_BUILTIN:
      slot = 2;
      break;
    default:
      return nullptr;
  }
  if (name == nullptr) return nullptr;
  const std::vector<hal_kernel_blob>& all = blobs();
  for (size_t i = 0; i < kKernelCount; ++i) {
    if (std::strcmp(kKernels[i].info.name, name) != 0) continue;
    const hal_kernel_blob& b = all[3 * i + slot];
    return b.data != nullptr ? &b : nullptr;
  }
  return nullptr;
}

const char* hal_kernels_manifest(size_t* size) {
  const FileBlob* f = find_file("manifest.json");
  if (size != nullptr) *size = f ? f->size : 0;
  return f ? reinterpret_cast<const char*>(f->data) : "";
}

int hal_kernels_matmul_tile(const hal_kernel_info* kernel, const uint32_t* values, uint32_t* bm,
                            uint32_t* bn) {
  if (kernel == nullptr || bm == nullptr || bn == nullptr) return 0;
  auto get = [&](const char* name) -> uint32_t {
    for (uint32_t i = 0; i < kernel->tunable_count; ++i) {
      if (std::strcmp(kernel->tunables[i].name, name) == 0) {
        return values != nullptr ? values[i] : kernel->tunables[i].value;
      }
    }
    return 0;
  };
  const std::string family = kernel->family;
  auto is = [&](const char* prefix) { return family.rfind(prefix, 0) == 0; };
  const uint32_t threads = kernel->block[0] * kernel->block[1] * kernel->block[2];
  uint32_t m = 0, n = 0;
  if (is("matmul_naive_")) {
    m = n = 16;
  } else if (is("matmul_tiled_") || is("matmul_mma_")) {
    m = get("BM");
    n = get("BN");
  } else if (is("matmul_reg_") || is("matmul_sg_")) {
    const uint32_t across = get(is("matmul_reg_") ? "TX" : "SG");
    if (across == 0 || threads % across != 0) return 0;
    m = threads / across * get("TM");
    n = across * get("TN");
  }
  if (m == 0 || n == 0) return 0;
  *bm = m;
  *bn = n;
  return 1;
}

int hal_kernels_runs_on(const hal_kernel_info* kernel, hal_ir ir, const hal_device_info* info,
                        char* why, size_t why_size) {
  auto refuse = [&](const std::string& text) {
    if (why != nullptr && why_size > 0) std::snprintf(why, why_size, "%s", text.c_str());
    return 0;
  };
  if (kernel == nullptr || info == nullptr) return refuse("no kernel or no device information");
  const std::string name = kernel->name;
  if (hal_kernels_find(kernel->name, ir) == nullptr) {
    return refuse(name + " is not in the kernel pack in " + ir_name(ir) +
                  (ir == HAL_IR_SPIRV ? " (it exists in PTX only)" : ""));
  }
  if (ir == HAL_IR_BUILTIN) return 1;
  const uint64_t missing = kernel->required_features & ~info->features;
  for (const FeatureNeed& need : kFeatureNeeds) {
    if ((missing & need.bit) != 0) {
      return refuse(name + " needs " + need.name + " (" + need.what + "), which " + info->name +
                    " lacks");
    }
  }
  if (missing != 0) return refuse(name + " needs a device feature " + info->name + " lacks");
  if (info->max_shared_memory_per_block != 0 &&
      kernel->shared_bytes > info->max_shared_memory_per_block) {
    return refuse(name + " needs " + std::to_string(kernel->shared_bytes) +
                  " bytes of shared memory per block; " + info->name + " has " +
                  std::to_string(info->max_shared_memory_per_block));
  }
  return 1;
}

}  // extern "C"
