// A second device opened through hal in the same process, for a baseline that runs the same
// kernel elsewhere than on the device under test: the same kernel's SPIR-V on lavapipe beside
// the CPU PTX device, or the CPU PTX device's interpreter beside PTX translated for lavapipe.
#pragma once

#include <hal/hal.h>

#include <functional>
#include <string>

#include "common.h"

namespace bench {

class SideDevice {
 public:
  // The first device of |backend| ("vulkan", "cuda") that |accept| takes. Without one, missing()
  // names |what| ("Vulkan CPU device (lavapipe)"), then |hint| (what the comparison needs it
  // for, or how to provide it), then what hal said or which devices there were. Its context
  // takes |ctx|'s options, report and cache directory, and |ir|.
  SideDevice(const Context& ctx, const std::string& backend,
             const std::function<bool(const hal_device_info&)>& accept, hal_ir ir,
             const std::string& what, const std::string& hint);
  ~SideDevice();
  SideDevice(const SideDevice&) = delete;
  SideDevice& operator=(const SideDevice&) = delete;

  bool available() const { return ctx_.device != nullptr; }
  // Why there is none (when !available()).
  const std::string& missing() const { return missing_; }
  const Context& ctx() const { return ctx_; }
  // "vulkan:0 (llvmpipe ...)".
  std::string describe() const { return selector_ + " (" + ctx_.info.name + ")"; }

 private:
  Context ctx_;
  std::string selector_;
  std::string missing_;
};

}  // namespace bench
