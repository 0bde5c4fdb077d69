// The interpreter's engine: SIMT execution, divergence and reconvergence, barriers, local and
// shared memory, inlined calls, module variables, and the faults it reports.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <sstream>

#include "vm_test_util.h"

namespace ptx_vm_test {
namespace {

// y[i] = x[i] + z[i] for i < n, as nvcc writes it.
const std::string kVectorAdd = module(R"(
.visible .entry vadd(
  .param .u64 vadd_param_0, .param .u64 vadd_param_1, .param .u64 vadd_param_2,
  .param .u32 vadd_param_3)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<11>;
  ld.param.u64 %rd1, [vadd_param_0];
  ld.param.u64 %rd2, [vadd_param_1];
  ld.param.u64 %rd3, [vadd_param_2];
  ld.param.u32 %r2, [vadd_param_3];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r1, %r3, %r4, %r5;
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 bra $L__BB0_2;
  cvta.to.global.u64 %rd4, %rd1;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd4, %rd5;
  cvta.to.global.u64 %rd7, %rd2;
  add.s64 %rd8, %rd7, %rd5;
  ld.global.f32 %f1, [%rd8];
  ld.global.f32 %f2, [%rd6];
  add.f32 %f3, %f2, %f1;
  cvta.to.global.u64 %rd9, %rd3;
  add.s64 %rd10, %rd9, %rd5;
  st.global.f32 [%rd10], %f3;
$L__BB0_2:
  ret;
}
)");

TEST(PtxVmEngine, VectorAdd) {
  Vm vm;
  ASSERT_TRUE(vm.load(kVectorAdd));
  const uint32_t n = 1000;
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = 0.5f * i;
    b[i] = 1000.0f - i;
  }
  auto& x = vm.buffer(a);
  auto& y = vm.buffer(b);
  auto& z = vm.buffer(std::vector<float>(n + 1, -1.0f));
  EXPECT_RAN(
      vm.run1("vadd", 4, 256, Params().add(x.address()).add(y.address()).add(z.address()).add(n)));
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(z.host[i], a[i] + b[i]) << i;
  EXPECT_EQ(z.host[n], -1.0f) << "written past n";
  // 1024 threads ran; the 24 past n skipped the body.
  EXPECT_GT(vm.stats().lane_instructions, 1000u * 15);
}

// Each thread loops tid times (a divergent loop), then the warp must be whole again for the
// store that follows: out[tid] = sum(0..tid) + (number of lanes that reached the end).
TEST(PtxVmEngine, DivergentLoopsReconverge) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry loops(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;          // i
  mov.u32 %r3, 0;          // sum
LOOP:
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  add.u32 %r3, %r3, %r2;
  add.u32 %r2, %r2, 1;
  bra LOOP;
DONE:
  activemask.b32 %r4;
  popc.b32 %r5, %r4;
  add.u32 %r3, %r3, %r5;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
)")));
  auto& out = vm.buffer(std::vector<uint32_t>(64, 0));
  EXPECT_RAN(vm.run1("loops", 1, 64, Params().add(out.address())));
  for (uint32_t t = 0; t < 64; ++t) {
    ASSERT_EQ(out.host[t], t * (t - (t > 0 ? 1 : 0)) / 2 + 32) << "thread " << t;
  }
}

// if/else on the lane's parity, each side writing a different value, then a warp-wide vote
// after the join: all 32 lanes must be active again.
TEST(PtxVmEngine, IfElseJoinsBeforeTheNextInstruction) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry parity(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra EVEN;
  mul.lo.u32 %r3, %r1, 3;
  bra JOIN;
EVEN:
  mul.lo.u32 %r3, %r1, 5;
JOIN:
  activemask.b32 %r4;
  add.u32 %r3, %r3, %r4;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
)")));
  auto& out = vm.buffer(std::vector<uint32_t>(40, 0));
  EXPECT_RAN(vm.run1("parity", 1, 40, Params().add(out.address())));
  for (uint32_t t = 0; t < 40; ++t) {
    const uint32_t active = t < 32 ? 0xffffffffu : 0xffu;  // the second warp has 8 lanes
    ASSERT_EQ(out.host[t], (t % 2 == 0 ? 5 * t : 3 * t) + active) << "thread " << t;
  }
}

// Reverses a block's values through shared memory: every thread writes, a barrier, then every
// thread reads another thread's slot, across warps.
const std::string kReverse = module(R"(
.visible .entry reverse(.param .u64 data)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  .shared .align 4 .b8 buf[1024];
  ld.param.u64 %rd1, [data];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r3, [%rd3];
  mov.u32 %r4, buf;
  shl.b32 %r5, %r1, 2;
  add.u32 %r6, %r4, %r5;
  st.shared.u32 [%r6], %r3;
  bar.sync 0;
  sub.u32 %r7, %r2, %r1;
  sub.u32 %r7, %r7, 1;
  shl.b32 %r7, %r7, 2;
  add.u32 %r7, %r4, %r7;
  ld.shared.u32 %r3, [%r7];
  st.global.u32 [%rd3], %r3;
  ret;
}
)");

TEST(PtxVmEngine, BarrierOrdersSharedMemoryAcrossWarps) {
  Vm vm;
  ASSERT_TRUE(vm.load(kReverse));
  std::vector<uint32_t> values(256);
  std::iota(values.begin(), values.end(), 1000);
  auto& data = vm.buffer(values);
  EXPECT_RAN(vm.run1("reverse", 1, 256, Params().add(data.address())));
  for (uint32_t t = 0; t < 256; ++t) ASSERT_EQ(data.host[t], 1000 + 255 - t) << t;
  EXPECT_EQ(hal::ptx_vm::info(*vm.program().find("reverse")).static_shared_bytes, 1024u);
}

// A 32-bit address register plus displacement wraps at 2^32, as on a GPU: nvcc may keep a
// "negative" part of a shared-memory offset in the register and add the rest as the
// displacement. Each access splits its address that way: scalar and vector stores and loads, an
// atomic and an asynchronous copy.
const std::string kWrappingAddresses = module(R"(
.visible .entry wrap(.param .u64 data)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  .shared .align 8 .b8 buf[1024];
  ld.param.u64 %rd1, [data];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 8;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r4, buf;
  shl.b32 %r5, %r1, 3;
  add.u32 %r6, %r4, %r5;
  sub.u32 %r7, %r6, 8192;
  sub.u32 %r10, %r6, 65536;
  cp.async.ca.shared.global [%r7+8192], [%rd3], 4;
  cp.async.wait_all;
  ld.shared.u32 %r2, [%r10+65536];
  add.u32 %r8, %r2, 1;
  st.shared.v2.u32 [%r7+8192], {%r2, %r8};
  atom.shared.add.u32 %r9, [%r7+8196], 2;
  st.shared.u32 [%r7+8192], %r8;
  ld.shared.v2.u32 {%r2, %r11}, [%r10+65536];
  st.global.u32 [%rd3], %r2;
  st.global.u32 [%rd3+4], %r11;
  ret;
}
)");

TEST(PtxVmEngine, ThirtyTwoBitAddressesWrap) {
  Vm vm;
  ASSERT_TRUE(vm.load(kWrappingAddresses));
  std::vector<uint32_t> values(2 * 64);
  for (uint32_t t = 0; t < 64; ++t) values[2 * t] = 100 * t;
  auto& data = vm.buffer(values);
  EXPECT_RAN(vm.run1("wrap", 1, 64, Params().add(data.address())));
  for (uint32_t t = 0; t < 64; ++t) {
    // Word 0: copied in, read back, stored again + 1; word 1: the vector store's + 1, the atomic's
    // + 2.
    ASSERT_EQ(data.host[2 * t], 100 * t + 1) << t;
    ASSERT_EQ(data.host[2 * t + 1], 100 * t + 3) << t;
  }
}

// Device printf as nvcc compiles it: the arguments packed in the local depot, vprintf(format,
// buffer) through .param variables, its result (the number of arguments) read back.
const std::string kPrintf = module(R"(
.extern .func  (.param .b32 func_retval0) vprintf
(
  .param .b64 vprintf_param_0,
  .param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[32] = {116, 37, 117, 32, 37, 115, 32, 37, 53, 100, 124, 37, 45, 52, 120, 124, 37, 108, 108, 100, 32, 37, 46, 51, 102, 32, 37, 99, 37, 37, 10};
.global .align 1 .b8 $str$1[8] = {98, 97, 100, 32, 37, 100, 10};

.visible .entry say(.param .u64 p_name, .param .u32 p_v, .param .u64 p_w, .param .f64 p_d)
{
  .local .align 8 .b8 __local_depot0[48];
  .reg .b64 %SP;
  .reg .b64 %SPL;
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f64 %fd<2>;
  .reg .b64 %rd<10>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  ld.param.u64 %rd2, [p_name];
  ld.param.u64 %rd3, [p_w];
  ld.param.f64 %fd1, [p_d];
  add.u64 %rd4, %SP, 0;
  add.u64 %rd1, %SPL, 0;
  mov.u32 %r2, %tid.x;
  add.s32 %r3, %r2, 65;
  st.local.u32 [%rd1], %r2;
  st.local.u64 [%rd1+8], %rd2;
  ld.param.u32 %r4, [p_v];
  st.local.v2.u32 [%rd1+16], {%r4, %r4};
  st.local.u64 [%rd1+24], %rd3;
  st.local.f64 [%rd1+32], %fd1;
  st.local.u32 [%rd1+40], %r3;
  mov.u64 %rd5, $str;
  cvta.global.u64 %rd6, %rd5;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd6;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd4;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r1, [retval0+0];
  }
  setp.eq.s32 %p1, %r1, 7;
  @%p1 bra DONE;
  st.local.u32 [%rd1], %r1;
  mov.u64 %rd7, $str$1;
  cvta.global.u64 %rd8, %rd7;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd8;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd4;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r5, [retval0+0];
  }
DONE:
  ret;
}
)");

TEST(PtxVmEngine, DevicePrintfWritesEachThreadsLine) {
  Vm vm;
  ASSERT_TRUE(vm.load(kPrintf));
  auto& name = vm.buffer(std::vector<char>{'h', 'a', 'l', '\0'});
  testing::internal::CaptureStdout();
  const Fault fault = vm.run1(
      "say", 1, 2, Params().add(name.address()).add(uint32_t{42}).add(uint64_t(-5)).add(2.5));
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_RAN(fault);
  // "bad N" would mean the result was not the number of arguments (7).
  EXPECT_EQ(out, "t0 hal    42|2a  |-5 2.500 A%\nt1 hal    42|2a  |-5 2.500 B%\n");
}

// Widths and precisions given as '*' arguments (a negative width is the '-' flag), and a field
// too wide to print, whose argument is still consumed.
const std::string kPrintfWidths = module(R"(
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 $str[30] = {91, 37, 42, 100, 124, 37, 45, 42, 100, 124, 37, 46, 42, 102, 124, 37, 53, 48, 48, 48, 48, 48, 48, 100, 124, 37, 100, 93, 10};
.visible .entry widths(.param .u32 widths_param_0)
{
  .local .align 8 .b8 __local_depot0[40];
  .reg .b64 %SP;
  .reg .b64 %SPL;
  .reg .b32 %r<9>;
  .reg .b64 %rd<6>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  add.u64 %rd1, %SP, 0;
  add.u64 %rd2, %SPL, 0;
  mov.u32 %r1, 7;
  ld.param.u32 %r2, [widths_param_0];
  st.local.v2.u32 [%rd2], {%r2, %r1};
  add.s32 %r3, %r2, -1;
  mov.u32 %r4, 8;
  st.local.v2.u32 [%rd2+8], {%r3, %r4};
  mov.u32 %r5, 2;
  st.local.u32 [%rd2+16], %r5;
  mov.u64 %rd3, 4614256650576692846;
  st.local.u64 [%rd2+24], %rd3;
  mov.u32 %r6, 99;
  mov.u32 %r7, 1;
  st.local.v2.u32 [%rd2+32], {%r7, %r6};
  mov.u64 %rd4, $str;
  cvta.global.u64 %rd5, %rd4;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd5;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd1;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r8, [retval0+0];
  }
  ret;
}
)");

TEST(PtxVmEngine, DevicePrintfTakesWidthsFromArguments) {
  Vm vm;
  ASSERT_TRUE(vm.load(kPrintfWidths));
  testing::internal::CaptureStdout();
  const Fault wide = vm.run1("widths", 1, 1, Params().add(uint32_t{4}));
  const Fault left = vm.run1("widths", 1, 1, Params().add(uint32_t(-3)));
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_RAN(wide);
  EXPECT_RAN(left);
  // printf("[%*d|%-*d|%.*f|%5000000d|%d]\n", w, 7, w - 1, 8, 2, 3.14159, 1, 99)
  EXPECT_EQ(out,
            "[   7|8  |3.14|<printf field too wide>|99]\n"
            "[7  |8   |3.14|<printf field too wide>|99]\n");
}

TEST(PtxVmEngine, DevicePrintfOfABadStringFaults) {
  Vm vm;
  ASSERT_TRUE(vm.load(kPrintf));
  testing::internal::CaptureStdout();
  const Fault fault =
      vm.run1("say", 1, 1, Params().add(uint64_t{0x10}).add(uint32_t{1}).add(uint64_t{2}).add(3.0));
  testing::internal::GetCapturedStdout();
  EXPECT_EQ(fault.kind, FaultKind::kIllegalAddress) << fault.message;
}

// Local memory (a per-thread array through cvta.local) and a .func call with .param arguments.
TEST(PtxVmEngine, LocalMemoryAndCalls) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.func (.param .b32 square_ret) square(.param .b32 square_x)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [square_x];
  mul.lo.s32 %r2, %r1, %r1;
  st.param.b32 [square_ret], %r2;
  ret;
}

.visible .entry locals(.param .u64 out)
{
  .local .align 4 .b8 __local_depot0[64];
  .reg .b64 %SP;
  .reg .b64 %SPL;
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<8>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
FILL:
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %SP, %rd2;
  add.u32 %r3, %r1, %r2;
  st.u32 [%rd3], %r3;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, 16;
  @%p1 bra FILL;
  and.b32 %r4, %r1, 15;
  mul.wide.u32 %rd4, %r4, 4;
  add.s64 %rd5, %SPL, %rd4;
  ld.local.u32 %r5, [%rd5];
  {
    .param .b32 param0;
    st.param.b32 [param0], %r5;
    .param .b32 retval0;
    call.uni (retval0), square, (param0);
    ld.param.b32 %r6, [retval0];
  }
  mul.wide.u32 %rd6, %r1, 4;
  add.s64 %rd7, %rd1, %rd6;
  st.global.u32 [%rd7], %r6;
  ret;
}
)")));
  auto& out = vm.buffer(std::vector<uint32_t>(50, 0));
  EXPECT_RAN(vm.run1("locals", 1, 50, Params().add(out.address())));
  for (uint32_t t = 0; t < 50; ++t) {
    const uint32_t v = t + (t & 15);
    ASSERT_EQ(out.host[t], v * v) << t;
  }
}

// Module-scope .global and .const variables with initialisers, read and written by kernels.
TEST(PtxVmEngine, ModuleVariables) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.global .align 4 .u32 counter = 7;
.const .align 4 .f32 table[3] = {0f3F800000, 0f40000000, 0f40400000};
.global .align 8 .u64 where = generic(counter);

.visible .entry globals(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.global.u32 %r1, [counter];
  ld.const.f32 %f1, [table+8];
  cvt.rzi.u32.f32 %r2, %f1;
  add.u32 %r3, %r1, %r2;
  st.global.u32 [%rd1], %r3;
  ld.global.u64 %rd2, [where];
  st.global.u32 [%rd2], 42;
  ret;
}
)")));
  auto& out = vm.buffer(std::vector<uint32_t>(1, 0));
  EXPECT_RAN(vm.run1("globals", 1, 1, Params().add(out.address())));
  EXPECT_EQ(out.host[0], 10u);
  // The kernel stored 42 through the relocated address of |counter|: run again to read it.
  EXPECT_RAN(vm.run1("globals", 1, 1, Params().add(out.address())));
  EXPECT_EQ(out.host[0], 45u);
}

// ---- faults --------------------------------------------------------------------------------

const std::string kStoreAt = module(R"(
.visible .entry store_at(.param .u64 base, .param .u64 offset)
{
  .reg .b64 %rd<4>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [base];
  ld.param.u64 %rd2, [offset];
  mov.u32 %r1, %tid.x;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
)");

TEST(PtxVmEngine, OutOfBoundsStoreFaultsNamingKernelLineThreadAndAddress) {
  Vm vm;
  ASSERT_TRUE(vm.load(kStoreAt));
  auto& buf = vm.buffer(std::vector<uint32_t>(16, 0));
  const uint32_t grid[3] = {3, 1, 1}, block[3] = {4, 1, 1};
  const Fault fault =
      vm.run("store_at", grid, block, Params().add(buf.address()).add(uint64_t{64}));
  EXPECT_EQ(fault.kind, FaultKind::kIllegalAddress);
  EXPECT_NE(fault.message.find("kernel 'store_at'"), std::string::npos) << fault.message;
  EXPECT_NE(fault.message.find("line 14"), std::string::npos) << fault.message;
  EXPECT_NE(fault.message.find("st.global.u32"), std::string::npos) << fault.message;
  EXPECT_NE(fault.message.find("thread (0,0,0)"), std::string::npos) << fault.message;
  EXPECT_NE(fault.message.find("0 bytes past the end of the 64-byte allocation"), std::string::npos)
      << fault.message;
}

TEST(PtxVmEngine, MisalignedStoreFaults) {
  Vm vm;
  ASSERT_TRUE(vm.load(kStoreAt));
  auto& buf = vm.buffer(std::vector<uint32_t>(16, 0));
  const Fault fault = vm.run1("store_at", 1, 1, Params().add(buf.address()).add(uint64_t{2}));
  EXPECT_EQ(fault.kind, FaultKind::kMisalignedAddress);
  EXPECT_NE(fault.message.find("not aligned to 4 bytes"), std::string::npos) << fault.message;
}

TEST(PtxVmEngine, BarrierInDivergentCodeFaults) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry diverged()
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra SKIP;
  bar.sync 0;
SKIP:
  ret;
}
)")));
  const Fault fault = vm.run1("diverged", 1, 64, Params());
  EXPECT_EQ(fault.kind, FaultKind::kBarrier);
  EXPECT_NE(fault.message.find("barrier divergence"), std::string::npos) << fault.message;
  EXPECT_NE(fault.message.find("lanes 16-31"), std::string::npos) << fault.message;
}

TEST(PtxVmEngine, BarrierThatCannotCompleteIsADeadlockNotAHang) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry stuck()
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 bra FIRST;
  bar.sync 1;
  ret;
FIRST:
  bar.sync 2;
  ret;
}
)")));
  const Fault fault = vm.run1("stuck", 1, 64, Params());
  EXPECT_EQ(fault.kind, FaultKind::kBarrier);
  EXPECT_NE(fault.message.find("barrier deadlock"), std::string::npos) << fault.message;
}

TEST(PtxVmEngine, TrapFaults) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(".visible .entry t() { trap; ret; }\n")));
  EXPECT_EQ(vm.run1("t", 1, 1, Params()).kind, FaultKind::kTrap);
}

TEST(PtxVmEngine, OneFaultingBlockStopsTheGrid) {
  Vm vm;
  ASSERT_TRUE(vm.load(kStoreAt));
  auto& buf = vm.buffer(std::vector<uint32_t>(1, 0));
  const Fault fault =
      vm.run1("store_at", 60000, 32, Params().add(buf.address()).add(uint64_t{1} << 40));
  EXPECT_EQ(fault.kind, FaultKind::kIllegalAddress);
}

// ---- loading -------------------------------------------------------------------------------

TEST(PtxVmEngine, RefusesAtLoadWhatItCannotRunNamingTheLine) {
  Vm vm;
  const std::string log = vm.load_error(module(R"(
.visible .entry k()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 1;
  wgmma.fence.sync.aligned;
  ret;
}
)",
                                               "sm_80"));
  EXPECT_NE(log.find("line 10"), std::string::npos) << log;
  EXPECT_NE(log.find("wgmma"), std::string::npos) << log;
}

// An external function the device does not provide is refused at load, naming those it does.
TEST(PtxVmEngine, RefusesExternalFunctionsItDoesNotProvide) {
  Vm vm;
  const std::string log = vm.load_error(module(R"(
.extern .func (.param .b64 func_retval0) malloc (.param .b64 malloc_param_0);
.visible .entry k()
{
  .reg .b64 %rd<2>;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], 64;
  .param .b64 retval0;
  call.uni (retval0), malloc, (param0);
  ld.param.b64 %rd1, [retval0+0];
  }
  ret;
}
)"));
  EXPECT_NE(log.find("calls 'malloc'"), std::string::npos) << log;
  EXPECT_NE(log.find("but __assertfail and vprintf"), std::string::npos) << log;
}

TEST(PtxVmEngine, RefusesAPrintfArgumentThatIsNotTheCallsParam) {
  Vm vm;
  const std::string log = vm.load_error(module(R"(
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.visible .entry k(.param .b64 p)
{
  .reg .b32 %r<2>;
  {
  .param .b32 retval0;
  call.uni (retval0), vprintf, (p, p);
  ld.param.b32 %r1, [retval0+0];
  }
  ret;
}
)"));
  EXPECT_NE(log.find("must be .param variables declared for the call"), std::string::npos) << log;
}

TEST(PtxVmEngine, RefusesNewerTargetsAndVersions) {
  Vm vm;
  EXPECT_NE(vm.load_error(module(".visible .entry k() { ret; }\n", "sm_90a")).find("sm_90a"),
            std::string::npos);
  const std::string v9 =
      ".version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n";
  hal::ptx_vm::LoadError error;
  EXPECT_EQ(hal::ptx_vm::Program::load(v9.data(), v9.size(), {}, &error), nullptr);
  EXPECT_EQ(error.status, hal::ptx_vm::LoadStatus::kUnsupportedVersion);
}

TEST(PtxVmEngine, RefusesRecursion) {
  Vm vm;
  const std::string log = vm.load_error(module(R"(
.func f()
{
  call.uni f;
  ret;
}
.visible .entry k() { call.uni f; ret; }
)"));
  EXPECT_NE(log.find("recursive"), std::string::npos) << log;
}

// Every kernel of the pack loads: nvcc's PTX decodes entirely.
TEST(PtxVmEngine, LoadsTheKernelPack) {
  for (const char* name : {"smoke.ptx", "matmul.ptx", "attention.ptx"}) {
    std::ifstream in(std::string(HAL_TEST_PACK_PTX_DIR) + "/" + name);
    ASSERT_TRUE(in.good()) << name;
    std::stringstream text;
    text << in.rdbuf();
    Vm vm;
    EXPECT_TRUE(vm.load(text.str())) << name;
  }
}

}  // namespace
}  // namespace ptx_vm_test
