// Calls to .func through the translator, which inlines them: nested calls, early and guarded
// returns in the callee, a guarded call, calls in a loop, 32- and 64-bit parameters and
// results, and a callee that writes memory through a pointer argument. The kernel runs on the
// first Vulkan device and on the CPU PTX device (the reference), and every thread's result must
// be the same bits. Calls that cannot be inlined are refused for their kernel only, by name.
#include <gtest/gtest.h>
#include <hal/hal.h>

#include "two_devices.h"

#include <cstdint>
#include <string>
#include <vector>

namespace {

const char kHeader[] = ".version 8.0\n.target sm_80\n.address_size 64\n";

// add_sq(a, b) = a > 100 ? a - b : a * a + b (two rets); twice(a) = 3 * add_sq(a, 7) as 64
// bits (a nested call); bump(p, v) adds v to *p unless v is odd (a guarded ret, no result).
const char kCalls[] = R"(
.func (.param .b32 r) add_sq(.param .b32 a, .param .b32 b)
{
  .reg .b32 %x<4>;
  .reg .pred %q;
  ld.param.b32 %x1, [a];
  ld.param.b32 %x2, [b];
  setp.gt.u32 %q, %x1, 100;
  @%q bra BIG;
  mul.lo.u32 %x3, %x1, %x1;
  add.u32 %x3, %x3, %x2;
  st.param.b32 [r], %x3;
  ret;
BIG:
  sub.u32 %x3, %x1, %x2;
  st.param.b32 [r], %x3;
  ret;
}

.func (.param .b64 r) twice(.param .b32 a)
{
  .reg .b32 %y<4>;
  .reg .b64 %z;
  ld.param.b32 %y1, [a];
  mov.u32 %y3, 7;
  {
  .param .b32 p0;
  .param .b32 p1;
  .param .b32 rv;
  st.param.b32 [p0], %y1;
  st.param.b32 [p1], %y3;
  call.uni (rv), add_sq, (p0, p1);
  ld.param.b32 %y2, [rv];
  }
  mul.wide.u32 %z, %y2, 3;
  st.param.b64 [r], %z;
  ret;
}

.func bump(.param .b64 p, .param .b32 v)
{
  .reg .b32 %w<4>;
  .reg .b64 %a;
  .reg .pred %odd;
  ld.param.b64 %a, [p];
  ld.param.b32 %w1, [v];
  and.b32 %w2, %w1, 1;
  setp.ne.u32 %odd, %w2, 0;
  @%odd ret;
  ld.u32 %w3, [%a];
  add.u32 %w3, %w3, %w1;
  st.u32 [%a], %w3;
  ret;
}

.visible .entry calls(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<3>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  cvta.global.u64 %rd6, %rd3;
  mul.lo.u32 %r5, %r4, 3;
  mov.u32 %r6, 0;
LOOP:
  {
  .param .b32 a0;
  .param .b64 ret0;
  st.param.b32 [a0], %r5;
  call.uni (ret0), twice, (a0);
  ld.param.b64 %rd4, [ret0];
  }
  cvt.u32.u64 %r7, %rd4;
  setp.lt.u32 %p1, %r4, 40;
  {
  .param .b64 b0;
  .param .b32 b1;
  st.param.b64 [b0], %rd6;
  st.param.b32 [b1], %r7;
  @%p1 call.uni bump, (b0, b1);
  }
  add.u32 %r5, %r5, %r7;
  add.u32 %r6, %r6, 1;
  setp.lt.u32 %p2, %r6, 3;
  @%p2 bra LOOP;
  ld.global.u32 %r7, [%rd3];
  xor.b32 %r7, %r7, %r5;
  st.global.u32 [%rd3], %r7;
  ret;
}
)";

using ptx_spirv_testing::Device;

class PtxCalls : public ptx_spirv_testing::TwoDevices {
 protected:
  // Runs kernel "calls" on |d| with 3 blocks of 32 threads and returns its output.
  std::vector<uint32_t> run(Device& d) {
    const std::string ptx = std::string(kHeader) + kCalls;
    const uint32_t blocks = 3, threads = 32, count = blocks * threads;
    std::vector<uint32_t> out(count, 0xDEADBEEFu);
    hal_module module = nullptr;
    EXPECT_EQ(hal_module_load(d.device, ptx.data(), ptx.size(), nullptr, &module), HAL_SUCCESS)
        << hal_last_error();
    if (module == nullptr) return {};
    hal_function f = nullptr;
    hal_deviceptr buffer = 0;
    EXPECT_EQ(hal_module_get_function(module, "calls", &f), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_mem_alloc(d.device, count * 4, &buffer), HAL_SUCCESS) << hal_last_error();
    void* args[] = {&buffer};
    hal_launch_config config{{blocks, 1, 1}, {threads, 1, 1}, 0};
    EXPECT_EQ(hal_launch(d.stream, f, &config, args), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_memcpy_dtoh(d.stream, out.data(), buffer, count * 4), HAL_SUCCESS);
    EXPECT_EQ(hal_stream_synchronize(d.stream), HAL_SUCCESS) << hal_last_error();
    hal_mem_free(d.device, buffer);
    hal_module_unload(module);
    return out;
  }
};

// The same computation on the host, so that both devices are checked, not only their agreement.
uint32_t expected(uint32_t i) {
  auto add_sq = [](uint32_t a, uint32_t b) { return a > 100 ? a - b : a * a + b; };
  uint32_t value = i;  // what the kernel stored first
  uint32_t r5 = i * 3;
  for (int k = 0; k < 3; ++k) {
    const uint32_t r7 = static_cast<uint32_t>(uint64_t{add_sq(r5, 7)} * 3);
    if (i < 40 && (r7 & 1) == 0) value += r7;
    r5 += r7;
  }
  return value ^ r5;
}

TEST_F(PtxCalls, InlinedCallsGiveTheCpuPtxDevicesResults) {
  const std::vector<uint32_t> want = run(cpu_);
  const std::vector<uint32_t> got = run(vulkan_);
  ASSERT_EQ(want.size(), 96u);
  ASSERT_EQ(got.size(), want.size());
  for (uint32_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i], expected(i)) << "thread " << i << " on the CPU PTX device";
    EXPECT_EQ(got[i], want[i]) << "thread " << i << " on the Vulkan device";
  }
}

// Each kernel that makes a call hal cannot inline is refused alone, saying why; the module's
// other kernel still runs.
TEST_F(PtxCalls, CallsThatCannotBeInlinedAreRefusedByKernel) {
  const std::string ptx = std::string(kHeader) + R"(
.extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);
.extern .func elsewhere(.param .b32 a);

.func (.param .b32 r) loop_forever(.param .b32 a)
{
  .reg .b32 %x;
  ld.param.b32 %x, [a];
  {
  .param .b32 p;
  .param .b32 q;
  st.param.b32 [p], %x;
  call.uni (q), loop_forever, (p);
  ld.param.b32 %x, [q];
  }
  st.param.b32 [r], %x;
  ret;
}

.visible .entry recursive(.param .u32 a)
{
  .reg .b32 %x;
  ld.param.u32 %x, [a];
  {
  .param .b32 p;
  .param .b32 q;
  st.param.b32 [p], %x;
  call.uni (q), loop_forever, (p);
  }
  ret;
}

.visible .entry printing(.param .u32 a)
{
  .reg .b64 %z;
  mov.u64 %z, 0;
  {
  .param .b64 f;
  .param .b64 g;
  .param .b32 q;
  st.param.b64 [f], %z;
  st.param.b64 [g], %z;
  call.uni (q), vprintf, (f, g);
  }
  ret;
}

.visible .entry external(.param .u32 a)
{
  .reg .b32 %x;
  ld.param.u32 %x, [a];
  {
  .param .b32 p;
  st.param.b32 [p], %x;
  call.uni elsewhere, (p);
  }
  ret;
}

.visible .entry fine(.param .u32 a)
{
  ret;
}
)";
  hal_module module = nullptr;
  ASSERT_EQ(hal_module_load(vulkan_.device, ptx.data(), ptx.size(), nullptr, &module), HAL_SUCCESS)
      << hal_last_error();
  hal_function f = nullptr;
  EXPECT_EQ(hal_module_get_function(module, "fine", &f), HAL_SUCCESS) << hal_last_error();
  const struct {
    const char* kernel;
    std::vector<std::string> words;
  } refused[] = {
      {"recursive", {"recursive call", "loop_forever", "PTX line 16"}},
      {"printing", {"printf", "vprintf", "PTX line 46"}},
      {"external", {"elsewhere", "does not define", "PTX line 58"}},
  };
  for (const auto& r : refused) {
    SCOPED_TRACE(r.kernel);
    EXPECT_EQ(hal_module_get_function(module, r.kernel, &f), HAL_ERROR_NOT_SUPPORTED);
    const std::string message = hal_last_error();
    for (const std::string& word : r.words) {
      EXPECT_NE(message.find(word), std::string::npos) << "'" << word << "' in: " << message;
    }
  }
  hal_module_unload(module);
}

}  // namespace
