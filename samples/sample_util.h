// What the matmul and attention samples share: arguments, the device, loading a kernel of the
// pack, device buffers and timing. Only libhal's public C API is used.
#pragma once

#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include "plan.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace sample {

// The exit status of a sample on a machine without any device (a skip for ctest).
constexpr int kNoDevice = 77;

// Prints |what| and hal_last_error(), then exits with status 2.
[[noreturn]] void die(const std::string& what);

#define SAMPLE_CHECK(call)                           \
  do {                                               \
    if ((call) != HAL_SUCCESS) ::sample::die(#call); \
  } while (0)

// "--name value" options and "--flag" switches. Unknown names print |usage| and exit 2.
class Args {
 public:
  Args(int argc, char** argv, const std::string& usage, const std::vector<std::string>& options,
       const std::vector<std::string>& flags);
  std::string get(const std::string& name, const std::string& fallback) const;
  uint32_t get_u32(const std::string& name, uint32_t fallback) const;
  float get_float(const std::string& name, float fallback) const;
  bool flag(const std::string& name) const;

 private:
  std::map<std::string, std::string> values_;
};

struct Device {
  hal_device device = nullptr;
  hal_device_info info{};
  // The IR the pack's kernels are loaded in: the one asked for, else SPIR-V where the device
  // takes it (a Vulkan device takes PTX too, through translation), else PTX.
  hal_ir ir = HAL_IR_SPIRV;
  hal_stream stream = nullptr;
};

// Finds the device for |selector| and creates a stream on it; prints what it found. |ir| is
// "spirv" or "ptx" to load the pack in that IR (a sample's --ir), "" for the device's choice.
// Exits with kNoDevice when there is no device, none matches |selector| or it does not take
// |ir|; with 2 for another |ir| or a device that takes neither IR.
Device open_device(const std::string& selector, const std::string& ir = "");

struct Kernel {
  const hal_kernel_info* info = nullptr;
  hal_module module = nullptr;
  hal_function function = nullptr;
  uint32_t block[3] = {1, 1, 1};  // the manifest's, or the plan's
  uint32_t shared_bytes = 0;      // dynamic shared memory, likewise
};

// Loads kernel |name| of the pack in the device's IR. Exits with 2 when the kernel is unknown or
// the device lacks a feature it needs or refuses it.
Kernel load_kernel(const Device& device, const std::string& name);
// As load_kernel, but where the device refuses the kernel in this IR (HAL_ERROR_NOT_SUPPORTED:
// warp-level PTX on a device without 32-lane subgroups, ...) returns false with hal's message in
// |*refused| instead of exiting.
bool try_load_kernel(const Device& device, const std::string& name, Kernel* out,
                     std::string* refused);

// Loads what |plan| (kernels/tune/plan.h) says to launch: its kernel with its specialization
// constants and block. Prints the choice and where it came from (tuned by hal-tune, or the
// default). Exits with 2 when the module does not load.
Kernel load_planned(const Device& device, const hal_kernels::tune::LaunchPlan& plan);

// Launches |kernel| with its block size.
void launch(const Device& device, const Kernel& kernel, uint32_t gx, uint32_t gy, uint32_t gz,
            std::vector<void*> args);

// A device allocation of |bytes|, freed by the destructor.
class Buffer {
 public:
  Buffer(const Device& device, size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void upload(const void* data, size_t bytes);
  void download(void* data, size_t bytes);
  hal_deviceptr ptr;

 private:
  const Device& device_;
};

// Device time (events) where the device has timestamps, else host time around a synchronize.
class Timer {
 public:
  explicit Timer(const Device& device);
  ~Timer();
  void start();
  // Waits for the work issued since start(); returns milliseconds.
  double stop();

 private:
  const Device& device_;
  hal_event begin_ = nullptr;
  hal_event end_ = nullptr;
  bool events_ = false;
  double host_start_ = 0;
};

// Runs |run| |iters| times, timing each run on its own, and returns the median in milliseconds
// (0 when iters is 0). A median is robust to the odd slow run a shared machine produces.
double median_ms(Timer& timer, uint32_t iters, const std::function<void()>& run);

}  // namespace sample
