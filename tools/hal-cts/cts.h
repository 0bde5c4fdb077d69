// What every test area of hal-cts shares: the run's options, the devices under test, the
// per-device fixture, status checks that carry hal_last_error(), device buffers, loading a kernel
// of the pack, and the perf figures a test records. Only libhal's public C API is used.
#pragma once

#include <gtest/gtest.h>
#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include "cts_files.h"
#include "device_json.h"
#include "pack_kernel.h"

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace cts {

// ---- The run ----------------------------------------------------------------------------------

struct Options {
  bool quick = false;  // small shapes and few repetitions
  bool perf = false;   // run the Perf area
  // --ir: the IR the kernel pack is loaded in (HAL_IR_SPIRV or HAL_IR_PTX) on every device, or
  // HAL_IR_AUTO for each device's own choice (DeviceTest::pack_ir).
  hal_ir ir = HAL_IR_AUTO;
};
const Options& options();
void set_options(const Options& options);
// "SPIR-V", "PTX", or for HAL_IR_AUTO "each device's own": what --ir asked for, in messages.
const char* ir_text(hal_ir ir);

// One device under test.
struct Device {
  hal_device device = nullptr;
  hal_device_info info{};
  std::string label;  // "vulkan_0", "cuda_1": the test-name suffix ([A-Za-z0-9_] only)
  // The backend's name, as in selectors: "cuda", "vulkan", or a driver module's own ("mynpu")
  // (hal_device_info.backend_name).
  std::string backend_name;
  std::string module;  // the driver module the backend came from (hal_backend_info.module)
};
// The devices selected on the command line, in the order given. Filled before tests register.
const std::vector<Device>& devices();
void set_devices(std::vector<Device> devices);

// The IR the kernel pack is loaded in on |device| (DeviceTest::pack_ir says how it is chosen).
hal_ir pack_ir_of(const Device& device);

// gtest prints the parameter with this (the device label).
void PrintTo(const Device* device, std::ostream* os);
std::string device_name(const ::testing::TestParamInfo<const Device*>& info);

// The parameter generator every area instantiates its fixture with.
std::vector<const Device*> device_params();

// ---- Status checks ----------------------------------------------------------------------------

// "<status name>: <hal_last_error()>" for failure messages.
std::string describe(hal_status status);

#define CTS_ASSERT_OK(call)                                                                 \
  do {                                                                                      \
    const hal_status cts_status_ = (call);                                                  \
    ASSERT_EQ(cts_status_, HAL_SUCCESS) << #call << " -> " << ::cts::describe(cts_status_); \
  } while (0)
#define CTS_EXPECT_OK(call)                                                                 \
  do {                                                                                      \
    const hal_status cts_status_ = (call);                                                  \
    EXPECT_EQ(cts_status_, HAL_SUCCESS) << #call << " -> " << ::cts::describe(cts_status_); \
  } while (0)

// Expects |call| to fail with |expected| and hal_last_error() to be non-empty and to name the
// call (|api|, e.g. "hal_mem_alloc").
#define CTS_EXPECT_STATUS(expected, api, call) \
  ::cts::expect_status((expected), (api), (call), #call, __FILE__, __LINE__)
void expect_status(hal_status expected, const char* api, hal_status got, const char* text,
                   const char* file, int line);

// ---- The fixture ------------------------------------------------------------------------------

// A kernel of the pack, loaded; unloads itself (kernels/testing/pack_kernel.h).
using hal_kernels_testing::Kernel;

// In a DeviceTest (its body, its SetUp, or a member it calls): loads kernel |name| of the pack
// into the Kernel |kernel|, or skips the test with the reason the device cannot run it.
#define CTS_LOAD_OR_SKIP(kernel, name)                                        \
  do {                                                                        \
    std::string cts_skip_;                                                    \
    ASSERT_NO_FATAL_FAILURE(load_pack_kernel(&(kernel), (name), &cts_skip_)); \
    if (!cts_skip_.empty()) GTEST_SKIP() << cts_skip_;                        \
  } while (0)

// One IR of a kernel of hal-cts's own (tools/hal-cts/kernels/<base>.comp and <base>.ptx): the
// suite brings these for checks that must not depend on which pack kernels a device has.
struct OwnKernel {
  hal_ir ir = HAL_IR_AUTO;   // HAL_IR_SPIRV or HAL_IR_PTX
  const char* ir_name = "";  // "SPIR-V", "PTX": for messages
  const cts_files::FileBlob* file = nullptr;
  std::string entry;  // "main" in SPIR-V, "cts_<base>" in PTX
};

// Every test is parameterised by the device; SetUp creates a stream on it.
class DeviceTest : public ::testing::TestWithParam<const Device*> {
 protected:
  void SetUp() override;
  void TearDown() override;
  const hal_device_info& info() const { return GetParam()->info; }
  hal_device device() const { return GetParam()->device; }
  bool takes(hal_ir ir) const { return (info().ir_mask & ir) != 0; }
  // The IR the kernel pack is loaded in on this device (pack_ir_of). With --ir, the IR asked for
  // where the device takes it, else HAL_IR_AUTO. Without, SPIR-V where taken (a Vulkan device takes
  // PTX too, through translation, but its own IR runs every kernel of the pack), else PTX, else the
  // device's built-in kernels (HAL_IR_BUILTIN: its driver brings its own, under the pack's names
  // and parameter lists); HAL_IR_AUTO when the device takes none of them.
  hal_ir pack_ir() const;
  // Why kernel |name| cannot run here (no IR of the pack, or not the one --ir asks for; a missing
  // feature), or "".
  std::string cannot_run(const std::string& name) const;
  // Loads kernel |name| of the pack, in pack_ir(), into |kernel|; or leaves it unloaded and sets
  // |*skip| to why it cannot run here: what cannot_run says; on a device of built-in kernels,
  // that its driver does not provide |name| (hal_module_load is HAL_ERROR_NOT_FOUND); on a
  // device that translates PTX, that it refuses this kernel's PTX (HAL_ERROR_NOT_SUPPORTED:
  // matrix instructions, and the other refusals docs/ABI.md lists), with its message. Any
  // other failure is a fatal test failure. CTS_LOAD_OR_SKIP wraps it.
  void load_pack_kernel(Kernel* kernel, const std::string& name, std::string* skip);
  // The IRs kernel |base| of hal-cts's own runs in on this device: SPIR-V and PTX where it takes
  // both, so that each check is made in each, or the one --ir names. Empty where the device
  // takes neither (a device of built-in kernels); no_own_kernels() then says why.
  std::vector<OwnKernel> own_kernels(const std::string& base) const;
  std::string no_own_kernels() const;
  // Runs |body| once for each IR of own_kernels(|base|), with that kernel loaded (unloaded after)
  // and a trace naming the IR. An IR the device refuses (hal_module_load or
  // hal_module_get_function is HAL_ERROR_NOT_SUPPORTED: a feature it lacks) is noted and the
  // others still run; the test is skipped, with the refusals, when none ran. Any other load
  // failure fails the test. Stops after a fatal failure.
  void for_each_own_kernel(const std::string& base,
                           const std::function<void(const OwnKernel&, hal_function)>& body);
  // Checks that the device still runs a kernel correctly (fill_f32 on a fresh buffer), or, where
  // it runs none, that a copy round trip still works.
  void expect_device_works(const std::string& after);

  hal_stream stream_ = nullptr;
};

// ---- Helpers ----------------------------------------------------------------------------------

// A device allocation freed by the destructor.
class Buffer {
 public:
  Buffer(hal_device device, size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  bool ok() const { return status_ == HAL_SUCCESS; }
  hal_status status() const { return status_; }
  // "" when allocated; else the failed call and describe()'s text, for the failure message (a
  // failure that quotes its error is grouped with the others it causes: root_causes.h).
  const std::string& error() const { return error_; }
  hal_deviceptr ptr = 0;
  size_t bytes;

 private:
  hal_device device_;
  hal_status status_;
  std::string error_;
};

// Deterministic bytes for copy checks.
std::vector<uint8_t> pattern(size_t bytes, uint32_t seed);
// The index of the first byte that differs, or -1 when equal.
long long first_difference(const uint8_t* a, const uint8_t* b, size_t bytes);

// Milliseconds since an arbitrary start (steady clock).
double now_ms();
// The median of |values| (0 for none).
double median(std::vector<double> values);

// ---- Perf figures -----------------------------------------------------------------------------

struct Figure {
  std::string device;  // label
  std::string name;    // e.g. "copy_htod_bandwidth"
  double value = 0;
  std::string unit;  // "GB/s", "launches/s", "GFLOP/s"
  uint32_t repetitions = 0;
  double peak = -1;         // the device's theoretical peak in |unit|, or < 0 when not derivable
  std::string peak_source;  // how the peak was derived, or why it is "n/a"
  std::string detail;       // shape, size
};
void record_figure(const Figure& figure);
const std::vector<Figure>& figures();

}  // namespace cts
