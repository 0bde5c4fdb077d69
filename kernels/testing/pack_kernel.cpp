#include "pack_kernel.h"

#include <gtest/gtest.h>

namespace hal_kernels_testing {
namespace {

std::string describe(hal_status status) {
  return std::string(hal_status_string(status)) + ": " + hal_last_error();
}

}  // namespace

Kernel::~Kernel() {
  if (module != nullptr) hal_module_unload(module);
}

void Kernel::load(hal_device device, const std::string& name, hal_ir ir,
                  const std::vector<hal_specialization>& specializations) {
  hal_status loaded = HAL_SUCCESS;
  ASSERT_NO_FATAL_FAILURE(open(device, name, ir, specializations, &loaded));
  ASSERT_EQ(loaded, HAL_SUCCESS) << (module == nullptr ? "hal_module_load("
                                                       : "hal_module_get_function(")
                                 << name << ") -> " << describe(loaded);
}

hal_status Kernel::try_load(hal_device device, const std::string& name, hal_ir ir,
                            const std::vector<hal_specialization>& specializations) {
  // Until hal_module_load answers, a failure is the test's (no blob), reported by open().
  hal_status loaded = HAL_ERROR_NOT_FOUND;
  open(device, name, ir, specializations, &loaded);
  return loaded;
}

void Kernel::open(hal_device device, const std::string& name, hal_ir ir,
                  const std::vector<hal_specialization>& specializations, hal_status* loaded) {
  const hal_kernel_blob* blob = hal_kernels_find(name.c_str(), ir);
  ASSERT_NE(blob, nullptr) << "the kernel pack has no " << name << " for IR " << ir;
  info = blob->kernel;
  hal_module_options options{};
  options.struct_size = sizeof options;
  options.ir = ir;
  options.specialization_count = static_cast<uint32_t>(specializations.size());
  options.specializations = specializations.empty() ? nullptr : specializations.data();
  *loaded = hal_module_load(device, blob->data, blob->size, &options, &module);
  if (*loaded != HAL_SUCCESS) {
    module = nullptr;
    return;
  }
  const hal_status s = hal_module_get_function(module, blob->entry_point, &function);
  if (s == HAL_ERROR_NOT_SUPPORTED) {
    *loaded = s;  // the module loaded, but this kernel of it cannot run on the device
    return;
  }
  ASSERT_EQ(s, HAL_SUCCESS) << "hal_module_get_function(" << name << ") -> " << describe(s);
}

void Kernel::launch(hal_stream stream, uint32_t gx, uint32_t gy, uint32_t gz,
                    std::vector<void*> args) const {
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(args.size(), info->param_count) << info->name;
  hal_launch_config config{};
  config.grid[0] = gx;
  config.grid[1] = gy;
  config.grid[2] = gz;
  for (int i = 0; i < 3; ++i) config.block[i] = info->block[i];
  config.shared_bytes = info->shared_bytes;
  const hal_status s = hal_launch(stream, function, &config, args.data());
  ASSERT_EQ(s, HAL_SUCCESS) << "hal_launch(" << info->name << ") -> " << describe(s);
}

}  // namespace hal_kernels_testing
