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
  // Launches with the manifest's block size; fails the test on error, and when |args| does not
  // have one entry per parameter.
  void launch(hal_stream stream, uint32_t gx, uint32_t gy, uint32_t gz,
              std::vector<void*> args) const;
  const hal_kernel_info* info = nullptr;
  hal_module module = nullptr;
  hal_function function = nullptr;
};

}  // namespace hal_kernels_testing
