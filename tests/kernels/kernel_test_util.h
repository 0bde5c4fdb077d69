// Helpers for the kernel pack's tests: the device each IR runs on, loading a kernel of the pack,
// device buffers in fp32 or fp16, launches, and reporting a check against a CPU reference.
// Only libhal's public C API is used.
#pragma once

#include <gtest/gtest.h>
#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include <hal_kernels/reference.h>
#include "pack_kernel.h"

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

// Test parameter names in gtest output and ctest: "SPIR-V" or "PTX".
void PrintTo(hal_ir ir, std::ostream* os);

namespace kernel_test {

namespace ref = hal_kernels::ref;

const char* ir_name(hal_ir ir);

// The device the tests run |ir| on: the "default" device when it takes |ir|, else the first
// device that does. Returns false with |why| (naming what is unavailable) when there is none.
bool find_device(hal_ir ir, hal_device* device, hal_device_info* info, std::string* why);

// "<status name>: <hal_last_error>" for failure messages.
std::string last_error(hal_status status);

// Whether the device runs kernel |name| in |ir| (hal_kernels_runs_on); sets |why| when not.
bool supports(const hal_device_info& info, hal_ir ir, const std::string& name, std::string* why);

// A fixture for tests parameterised by |Param| (from which ir() picks the IR): SetUp finds the
// device and creates a stream, or skips with the reason.
template <typename Param>
class IrTestBase : public ::testing::TestWithParam<Param> {
 protected:
  virtual hal_ir ir() const = 0;
  void SetUp() override {
    info_.struct_size = sizeof info_;
    std::string why;
    if (!find_device(ir(), &device_, &info_, &why)) GTEST_SKIP() << why;
    const hal_status s = hal_stream_create(device_, &stream_);
    ASSERT_EQ(s, HAL_SUCCESS) << last_error(s);
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      EXPECT_EQ(hal_stream_destroy(stream_), HAL_SUCCESS);
    }
  }
  // Why the device cannot run kernel |name| in ir() (not in that IR, a feature or shared memory
  // it lacks), or "" when it can.
  std::string missing(const std::string& name) const {
    std::string why;
    return supports(info_, ir(), name, &why) ? std::string() : why;
  }

  hal_device device_ = nullptr;
  hal_device_info info_{};
  hal_stream stream_ = nullptr;
};

// Parameterised by the IR alone.
class IrTest : public IrTestBase<hal_ir> {
 protected:
  hal_ir ir() const override { return GetParam(); }
};

using hal_kernels_testing::Kernel;

// A device buffer of |count| elements of fp32 or fp16 storage, freed by the destructor.
class Buffer {
 public:
  Buffer(hal_device device, hal_stream stream, size_t count, ref::Storage storage);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  // Converts to the storage type (fp16 rounds to nearest) and copies to the device.
  void upload(const std::vector<float>& values);
  // Copies back (synchronising the stream) and widens to fp32.
  std::vector<float> download();
  hal_deviceptr ptr = 0;

 private:
  hal_device device_;
  hal_stream stream_;
  size_t count_;
  ref::Storage storage_;
};

// Compares and reports: prints the check's summary (max abs/rel error and the bound), and fails
// the test with it when an element is out of bound.
void expect_close(const std::vector<float>& device, const ref::Result& want,
                  const std::string& what);

}  // namespace kernel_test
