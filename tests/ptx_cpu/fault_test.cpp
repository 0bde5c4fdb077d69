// Kernel faults on the CPU PTX device as hal reports them: the status, the report the driver
// logged (kernel, PTX line, block, thread, address), and the device lost afterwards while the
// other devices keep working. Runs with HAL_PTX_CPU_DEVICES=3, so that each fault has a device of
// its own. Also PTX the interpreter cannot run, refused at load with its line.
#include <hal/hal.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

// store_at: *(base + offset) = tid (a u32 store).  diverged: a bar.sync that only lanes 0-15 of
// each warp reach.  The line numbers below are those of this text.
constexpr const char* kPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry store_at(.param .u64 base, .param .u32 offset)
{
  .reg .b64 %rd<4>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [base];
  ld.param.u32 %r2, [offset];
  cvt.u64.u32 %rd2, %r2;
  mov.u32 %r1, %tid.x;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}

.visible .entry diverged()
{
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  and.b32 %r1, %r1, 31;
  setp.ge.u32 %p1, %r1, 16;
  @%p1 bra DONE;
  bar.sync 0;
DONE:
  ret;
}
)";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Device {
  hal_device device = nullptr;
  hal_stream stream = nullptr;
  hal_module module = nullptr;
  hal_function store_at = nullptr;
  hal_function diverged = nullptr;
  hal_deviceptr buffer = 0;

  void open(const char* selector) {
    ASSERT_EQ(hal_device_find(selector, &device), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_stream_create(device, &stream), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_module_load(device, kPtx, std::char_traits<char>::length(kPtx), nullptr, &module),
              HAL_SUCCESS)
        << hal_last_error();
    ASSERT_EQ(hal_module_get_function(module, "store_at", &store_at), HAL_SUCCESS);
    ASSERT_EQ(hal_module_get_function(module, "diverged", &diverged), HAL_SUCCESS);
    ASSERT_EQ(hal_mem_alloc(device, 1024, &buffer), HAL_SUCCESS) << hal_last_error();
  }
  // Launches store_at at |offset| from the buffer and synchronises; returns the status.
  hal_status store(uint32_t offset, uint32_t threads) {
    void* args[] = {&buffer, &offset};
    const hal_launch_config config = {{1, 1, 1}, {threads, 1, 1}, 0};
    const hal_status launched = hal_launch(stream, store_at, &config, args);
    if (launched != HAL_SUCCESS) return launched;
    return hal_stream_synchronize(stream);
  }
};

TEST(PtxCpuFaults, EachFaultIsReportedAndLosesOnlyItsDevice) {
  Device a, b, c;
  ASSERT_NO_FATAL_FAILURE(a.open("cuda:0"));
  ASSERT_NO_FATAL_FAILURE(b.open("cuda:1"));
  ASSERT_NO_FATAL_FAILURE(c.open("cuda:2"));
  ASSERT_EQ(a.store(0, 64), HAL_SUCCESS) << hal_last_error();

  // Out of bounds: the word just past the 1024-byte allocation.
  EXPECT_EQ(a.store(1024, 1), HAL_ERROR_LAUNCH_FAILED);
  const std::string oob = hal_last_error();
  EXPECT_TRUE(contains(oob, "CUDA_ERROR_ILLEGAL_ADDRESS")) << oob;
  EXPECT_TRUE(contains(oob, "kernel 'store_at' (line 14: 'st.global.u32')")) << oob;
  EXPECT_TRUE(contains(oob, "block (0,0,0), thread (0,0,0)")) << oob;
  EXPECT_TRUE(contains(oob, "write of 4 bytes")) << oob;
  EXPECT_TRUE(contains(oob, "past the end of the 1024-byte allocation")) << oob;
  // The device is lost, as a GPU's context is after a fault; the others are not.
  hal_deviceptr more = 0;
  EXPECT_EQ(hal_mem_alloc(a.device, 16, &more), HAL_ERROR_DEVICE_LOST);
  EXPECT_TRUE(contains(hal_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS")) << hal_last_error();

  // Misaligned: a u32 store at an odd address.
  EXPECT_EQ(b.store(2, 1), HAL_ERROR_LAUNCH_FAILED);
  const std::string misaligned = hal_last_error();
  EXPECT_TRUE(contains(misaligned, "CUDA_ERROR_MISALIGNED_ADDRESS")) << misaligned;
  EXPECT_TRUE(contains(misaligned, "not aligned to 4 bytes")) << misaligned;

  // A barrier reached by half of each warp.
  const hal_launch_config config = {{1, 1, 1}, {64, 1, 1}, 0};
  ASSERT_EQ(hal_launch(c.stream, c.diverged, &config, nullptr), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_stream_synchronize(c.stream), HAL_ERROR_LAUNCH_FAILED);
  const std::string divergence = hal_last_error();
  EXPECT_TRUE(contains(divergence, "CUDA_ERROR_LAUNCH_FAILED")) << divergence;
  EXPECT_TRUE(contains(divergence, "kernel 'diverged' (line 26: 'bar.sync')")) << divergence;
  EXPECT_TRUE(contains(divergence, "barrier divergence: lanes 0-15")) << divergence;

  // Each device is lost by its own fault.
  EXPECT_EQ(hal_mem_alloc(b.device, 16, &more), HAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(hal_mem_alloc(c.device, 16, &more), HAL_ERROR_DEVICE_LOST);
}

TEST(PtxCpuFaults, FaultsOnOneDeviceLeaveTheOthersWorking) {
  Device a, b;
  ASSERT_NO_FATAL_FAILURE(a.open("cuda:0"));
  ASSERT_NO_FATAL_FAILURE(b.open("cuda:1"));
  EXPECT_EQ(a.store(4096, 1), HAL_ERROR_LAUNCH_FAILED);
  // cuda:1 still computes.
  ASSERT_EQ(b.store(0, 256), HAL_SUCCESS) << hal_last_error();
  std::vector<uint32_t> out(256);
  ASSERT_EQ(hal_memcpy_dtoh(b.stream, out.data(), b.buffer, 1024), HAL_SUCCESS);
  ASSERT_EQ(hal_stream_synchronize(b.stream), HAL_SUCCESS) << hal_last_error();
  // All 256 threads stored their tid at the same address: the value is one of them.
  EXPECT_LT(out[0], 256u);
  EXPECT_EQ(hal_stream_destroy(b.stream), HAL_SUCCESS);
  EXPECT_EQ(hal_module_unload(b.module), HAL_SUCCESS);
  EXPECT_EQ(hal_mem_free(b.device, b.buffer), HAL_SUCCESS);
}

// What the interpreter cannot run is refused at load, naming the line and the instruction, as
// HAL_ERROR_COMPILE_FAILED with the driver's JIT log; the device stays usable.
TEST(PtxCpuFaults, UnsupportedInstructionRefusedAtLoadWithItsLine) {
  hal_device device = nullptr;
  ASSERT_EQ(hal_device_find("cuda:0", &device), HAL_SUCCESS) << hal_last_error();
  const std::string ptx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry sampler(.param .u64 t)
{
  .reg .f32 %f<5>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [t];
  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}];
  ret;
}
)";
  hal_module module = nullptr;
  EXPECT_EQ(hal_module_load(device, ptx.data(), ptx.size(), nullptr, &module),
            HAL_ERROR_COMPILE_FAILED);
  const std::string error = hal_last_error();
  EXPECT_TRUE(contains(error, "CUDA_ERROR_INVALID_PTX")) << error;
  EXPECT_TRUE(contains(error, "line 10")) << error;
  EXPECT_TRUE(contains(error, "'tex.2d.v4.f32.f32'")) << error;
  EXPECT_TRUE(contains(error, "not supported on the CPU PTX device")) << error;
  hal_deviceptr pointer = 0;
  EXPECT_EQ(hal_mem_alloc(device, 64, &pointer), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_mem_free(device, pointer), HAL_SUCCESS);
}

}  // namespace
