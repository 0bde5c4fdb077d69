// cp.async from global to shared memory: 4-, 8- and 16-byte copies with commit and wait,
// zero-filling with src-size (0, partial, from a register) and with the ignore-src predicate,
// faults on the source and the destination, the masked pattern Triton emits, refusals, and
// loading Triton's pipelined matmul.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "vm_test_util.h"

namespace ptx_vm_test {
namespace {

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + 3);
  return v;
}

// Copies 4, 8 and 16 bytes per thread into three areas of shared memory, waits, and writes
// the whole shared memory out.
TEST(PtxVmAsyncCopy, CopiesOfEverySizeWithCommitAndWait) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry k(.param .u64 p_src, .param .u64 p_out)
{
  .shared .align 16 .b8 s[1792];
  .reg .pred %p<2>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [p_src];
  ld.param.u64 %rd2, [p_out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, s;
  // 4 bytes at s + 4t, 8 at s + 256 + 8t, 16 at s + 768 + 16t, from src + the same offset.
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  cvt.u64.u32 %rd3, %r3;
  add.s64 %rd4, %rd1, %rd3;
  cp.async.ca.shared.global [%r4], [%rd4], 4;
  shl.b32 %r5, %r1, 3;
  add.u32 %r6, %r2, %r5;
  cvt.u64.u32 %rd5, %r5;
  add.s64 %rd6, %rd1, %rd5;
  cp.async.ca.shared::cta.global [%r6+256], [%rd6], 8;
  cp.async.commit_group;
  shl.b32 %r7, %r1, 4;
  cvt.u64.u32 %rd7, %r7;
  add.s64 %rd8, %rd1, %rd7;
  cvt.u64.u32 %rd9, %r2;
  add.s64 %rd10, %rd9, %rd7;
  cp.async.cg.shared.global.L2::128B [%rd10+768], [%rd8], 16;
  cp.async.commit_group;
  cp.async.wait_group 1;
  cp.async.wait_all;
  bar.sync 0;
  // out[t + 64 k] = shared word t + 64 k, k < 7
  mov.u32 %r8, 0;
LOOP:
  mad.lo.u32 %r9, %r8, 64, %r1;
  shl.b32 %r10, %r9, 2;
  ld.shared.u32 %r11, [%r10];
  mul.wide.u32 %rd11, %r9, 4;
  add.s64 %rd12, %rd2, %rd11;
  st.global.u32 [%rd12], %r11;
  add.u32 %r8, %r8, 1;
  setp.lt.u32 %p1, %r8, 7;
  @%p1 bra LOOP;
  ret;
}
)")));
  const std::vector<uint8_t> src = pattern(1024);
  auto& in = vm.buffer(src);
  auto& out = vm.buffer(std::vector<uint8_t>(1792, 0xee));
  EXPECT_RAN(vm.run1("k", 1, 64, Params().add(in.address()).add(out.address())));
  for (size_t i = 0; i < 256; ++i) ASSERT_EQ(out.host[i], src[i]) << "4-byte copies, byte " << i;
  for (size_t i = 0; i < 512; ++i) {
    ASSERT_EQ(out.host[256 + i], src[i]) << "8-byte copies, byte " << i;
  }
  for (size_t i = 0; i < 1024; ++i) {
    ASSERT_EQ(out.host[768 + i], src[i]) << "16-byte copies, byte " << i;
  }
}

// src-size from a register (t % 17), an immediate partial size, src-size 0 with a source
// address that is not mapped, and the ignore-src predicate: the rest is zeros.
TEST(PtxVmAsyncCopy, ZeroFillsPastSrcSizeAndWithIgnoreSrc) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry k(.param .u64 p_src, .param .u64 p_out)
{
  .shared .align 16 .b8 s[2048];
  .reg .pred %p<3>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [p_src];
  ld.param.u64 %rd2, [p_out];
  mov.u32 %r1, %tid.x;
  // Fill this thread's 32 bytes of shared memory with 0xAA first.
  shl.b32 %r2, %r1, 5;
  mov.u32 %r3, s;
  add.u32 %r4, %r3, %r2;
  mov.u32 %r5, 0xAAAAAAAA;
  st.shared.v4.u32 [%r4], {%r5, %r5, %r5, %r5};
  st.shared.v4.u32 [%r4+16], {%r5, %r5, %r5, %r5};
  cvt.u64.u32 %rd3, %r2;
  add.s64 %rd4, %rd1, %rd3;
  // Bytes 0..15: 16 bytes with src-size t % 17.
  rem.u32 %r6, %r1, 17;
  cp.async.cg.shared.global [%r4], [%rd4], 16, %r6;
  // Bytes 16..23: 8 bytes with src-size 3.
  cp.async.ca.shared.global [%r4+16], [%rd4+16], 8, 3;
  // Bytes 24..27: 4 bytes from an unmapped address with src-size 0.
  cp.async.ca.shared.global [%r4+24], [16], 4, 0;
  // Bytes 28..31: 4 bytes ignored in odd threads.
  and.b32 %r7, %r1, 1;
  setp.ne.u32 %p1, %r7, 0;
  cp.async.ca.shared.global [%r4+28], [%rd4+28], 4, %p1;
  cp.async.commit_group;
  cp.async.wait_group 0;
  bar.sync 0;
  ld.shared.v4.u32 {%r8, %r9, %r10, %r11}, [%r4];
  ld.shared.v4.u32 {%r12, %r13, %r14, %r15}, [%r4+16];
  add.s64 %rd5, %rd2, %rd3;
  st.global.v4.u32 [%rd5], {%r8, %r9, %r10, %r11};
  st.global.v4.u32 [%rd5+16], {%r12, %r13, %r14, %r15};
  ret;
}
)")));
  const uint32_t threads = 64;
  const std::vector<uint8_t> src = pattern(32 * threads);
  auto& in = vm.buffer(src);
  auto& out = vm.buffer(std::vector<uint8_t>(32 * threads, 0xee));
  EXPECT_RAN(vm.run1("k", 1, threads, Params().add(in.address()).add(out.address())));
  for (uint32_t t = 0; t < threads; ++t) {
    const uint8_t* o = &out.host[32 * t];
    const uint8_t* s = &src[32 * t];
    for (uint32_t i = 0; i < 16; ++i) {
      ASSERT_EQ(o[i], i < t % 17 ? s[i] : 0) << "thread " << t << " byte " << i;
    }
    for (uint32_t i = 16; i < 24; ++i) {
      ASSERT_EQ(o[i], i < 19 ? s[i] : 0) << "thread " << t << " byte " << i;
    }
    for (uint32_t i = 24; i < 28; ++i) ASSERT_EQ(o[i], 0) << "thread " << t << " byte " << i;
    for (uint32_t i = 28; i < 32; ++i) {
      ASSERT_EQ(o[i], t % 2 == 1 ? 0 : s[i]) << "thread " << t << " byte " << i;
    }
  }
}

const std::string kFaulting = module(R"(
.visible .entry src(.param .u64 p, .param .u64 off, .param .u32 size)
{
  .shared .align 16 .b8 s[16];
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [off];
  ld.param.u32 %r1, [size];
  add.s64 %rd3, %rd1, %rd2;
  cp.async.cg.shared.global [s], [%rd3], 16, %r1;
  cp.async.wait_all;
  ret;
}
.visible .entry dst(.param .u64 p, .param .u32 off)
{
  .shared .align 16 .b8 s[64];
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [off];
  cp.async.ca.shared.global [%r1], [%rd1], 8;
  cp.async.wait_all;
  ret;
}
)");

TEST(PtxVmAsyncCopy, SourceIsCheckedForTheBytesItSupplies) {
  Vm vm;
  ASSERT_TRUE(vm.load(kFaulting));
  auto& buf = vm.buffer(std::vector<uint32_t>(5, 1));  // 20 bytes
  const auto run = [&](uint64_t off, uint32_t size) {
    return vm.run1("src", 1, 1, Params().add(buf.address()).add(off).add(size));
  };
  EXPECT_RAN(run(0, 16));
  EXPECT_RAN(run(16, 4));        // 4 bytes of 20: inside
  EXPECT_RAN(run(16, 0));        // nothing read
  EXPECT_RAN(run(1u << 30, 0));  // nothing read, however far the address
  Fault f = run(16, 5);          // one byte past the end
  EXPECT_EQ(f.kind, FaultKind::kIllegalAddress) << f.message;
  EXPECT_NE(f.message.find("read of 5 bytes"), std::string::npos) << f.message;
  f = run(32, 16);
  EXPECT_EQ(f.kind, FaultKind::kIllegalAddress) << f.message;
  f = run(8, 16);  // the source must be aligned to cp-size
  EXPECT_EQ(f.kind, FaultKind::kMisalignedAddress) << f.message;
  f = run(0, 17);
  EXPECT_EQ(f.kind, FaultKind::kIllegalInstruction) << f.message;
  EXPECT_NE(f.message.find("src-size 17"), std::string::npos) << f.message;
}

TEST(PtxVmAsyncCopy, DestinationMustBeInSharedMemoryAndAligned) {
  Vm vm;
  ASSERT_TRUE(vm.load(kFaulting));
  auto& buf = vm.buffer(std::vector<uint64_t>(2, 7));
  EXPECT_RAN(vm.run1("dst", 1, 1, Params().add(buf.address()).add(uint32_t{56})));
  Fault f = vm.run1("dst", 1, 1, Params().add(buf.address()).add(uint32_t{64}));
  EXPECT_EQ(f.kind, FaultKind::kIllegalAddress) << f.message;
  EXPECT_NE(f.message.find("shared"), std::string::npos) << f.message;
  f = vm.run1("dst", 1, 1, Params().add(buf.address()).add(uint32_t{4}));
  EXPECT_EQ(f.kind, FaultKind::kMisalignedAddress) << f.message;
}

// What Triton emits for a masked tl.load pipelined through shared memory: src-size is 16 for
// the lanes in range and 0 for the others, whose addresses run past the end of the tensor.
TEST(PtxVmAsyncCopy, TritonMaskedPattern) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.extern .shared .align 16 .b8 global_smem[];
.visible .entry tri(.param .u64 p_src, .param .u64 p_out, .param .u32 p_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_src];
  ld.param.u64 %rd3, [p_out];
  ld.param.u32 %r4, [p_n];
  mov.u32 %r5, %tid.x;
  setp.lt.u32 %p1, %r5, %r4;
  mul.wide.u32 %rd4, %r5, 16;
  add.s64 %rd2, %rd1, %rd4;
  shl.b32 %r6, %r5, 4;
  mov.b32 %r7, global_smem;
  add.s32 %r1, %r7, %r6;
  selp.b32 %r3, 16, 0, %p1;
  // begin inline asm
  cp.async.cg.shared.global [ %r1 + 0 ], [ %rd2 + 0 ], 0x10, %r3;
  // end inline asm
  cp.async.commit_group;
  cp.async.wait_group 	0;
  bar.sync 0;
  ld.shared.v4.u32 {%r8, %r9, %r10, %r11}, [%r1];
  add.s64 %rd5, %rd3, %rd4;
  st.global.v4.u32 [%rd5], {%r8, %r9, %r10, %r11};
  ret;
}
)")));
  const uint32_t n = 100, threads = 128;
  const std::vector<uint8_t> src = pattern(16 * n);
  auto& in = vm.buffer(src);
  auto& out = vm.buffer(std::vector<uint8_t>(16 * threads, 0xee));
  EXPECT_RAN(vm.run1("tri", 1, threads, Params().add(in.address()).add(out.address()).add(n),
                     16 * threads));
  for (uint32_t i = 0; i < 16 * threads; ++i) {
    ASSERT_EQ(out.host[i], i < 16 * n ? src[i] : 0) << "byte " << i;
  }
}

TEST(PtxVmAsyncCopy, RefusesWhatItCannotRun) {
  const auto refused = [](const std::string& ins) {
    Vm vm;
    return vm.load_error(
        module(".visible .entry k(.param .u64 p)\n{\n  .shared .align 16 .b8 s[64];\n"
               "  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n  ld.param.u64 %rd1, [p];\n  " +
               ins + ";\n  ret;\n}\n"));
  };
  std::string log = refused("cp.async.bulk.commit_group");
  EXPECT_NE(log.find("bulk"), std::string::npos) << log;
  log = refused("cp.async.cg.shared.global [s], [%rd1], 8");
  EXPECT_NE(log.find("16 bytes only"), std::string::npos) << log;
  log = refused("cp.async.ca.shared.global [s], [%rd1], 2");
  EXPECT_NE(log.find("4, 8 or 16"), std::string::npos) << log;
  log = refused("cp.async.ca.shared.global [s], [%rd1], 8, 9");
  EXPECT_NE(log.find("src-size"), std::string::npos) << log;
  log = refused("cp.async.ca.shared.global [s], [%rd1], %r1");
  EXPECT_NE(log.find("cp-size"), std::string::npos) << log;
  log = refused("cp.async.wait_group %r1");
  EXPECT_NE(log.find("wait_group"), std::string::npos) << log;
  log = refused("cp.async.ca.shared.global [%rd1], [s], 4");
  EXPECT_NE(log.find("state space"), std::string::npos) << log;
}

// Triton's pipelined matmul: none of its cp.async instructions is refused (its mma and
// ldmatrix may be, until the interpreter runs them).
TEST(PtxVmAsyncCopy, TritonMatmulCopiesDecode) {
  std::ifstream in(std::string(HAL_TEST_TRITON_PTX_DIR) + "/matmul_f16.ptx");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  hal::ptx_vm::LoadError error;
  auto program = hal::ptx_vm::Program::load(text.str().data(), text.str().size(), {}, &error);
  EXPECT_EQ(error.log.find("cp.async"), std::string::npos) << error.log;
  if (program != nullptr) {
    EXPECT_NE(program->find("matmul_f16"), nullptr);
  }
}

}  // namespace
}  // namespace ptx_vm_test
