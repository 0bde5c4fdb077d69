// A kernel of the pack loaded for a GoogleTest test: the one helper the kernel-pack tests and
// the conformance suite share. Failures are test failures that carry hal_last_error().
#pragma once

#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hal_kernels_testing {

// A loaded kernel of the pack; unloads itself.
class Kernel {
 public:
  Kernel() = default;
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  // Loads |name| in |ir| with optional specializations; fails the test on error.
  void load(hal_device device, const std::string& name, hal_ir ir,
            const std::vector<hal_specialization>& specializations = {});
  // Loads as load() does, but the device refusing the kernel is an answer, not a failure: for a
  // test that expects some devices to refuse some kernels (a Vulkan device refusing warp-level
  // PTX). Returns HAL_SUCCESS, or the refusal: hal_module_load's status, nothing loaded; or
  // HAL_ERROR_NOT_SUPPORTED from hal_module_get_function (the module loaded, this kernel of it
  // cannot run here), the module kept and |function| null. Either way hal_last_error() still
  // says why. What the device does not decide, a kernel the pack lacks in |ir| or a module
  // without the kernel's entry point, fails the test as in load().
  hal_status try_load(hal_device device, const std::string& name, hal_ir ir,
                      const std::vector<hal_specialization>& specializations = {});
  // Launches with the manifest's block size; fails the test on error, and when |args| does not
  // have one entry per parameter.
  void launch(hal_stream stream, uint32_t gx, uint32_t gy, uint32_t gz,
              std::vector<void*> args) const;
  const hal_kernel_info* info = nullptr;
  hal_module module = nullptr;
  hal_function function = nullptr;

 private:
  // The body of both loads: |*loaded| receives the device's answer (see try_load).
  void open(hal_device device, const std::string& name, hal_ir ir,
            const std::vector<hal_specialization>& specializations, hal_status* loaded);
};

}  // namespace hal_kernels_testing
