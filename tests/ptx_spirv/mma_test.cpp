// mma.sync in every form the translation takes, run two ways: each thread loads its A, B and C
// fragment registers from global memory, runs one mma.sync, and stores its D registers. It runs
// through the translator on the first Vulkan device and on the CPU PTX device (the reference,
// whose products are checked against host references in tests/ptx_vm), on the same inputs, and
// every D register must be the same bits: both devices follow PTX's fragment layouts and sum
// each product exactly, in k order. Forms the translation refuses are checked to say why.
#include <gtest/gtest.h>
#include <hal/hal.h>

#include "two_devices.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kThreads = 128;  // 2 blocks of 2 warps

enum class Kind { kF16, kBF16, kTf32, kF32, kInt8, kS32 };

struct Case {
  const char* form;     // after "mma.sync.aligned."
  uint32_t a, b, c, d;  // registers of each fragment
  Kind in, acc_c, acc_d;
  bool extreme_c = false;  // C near the ends of the s32 range (for .satfinite)
};

// Random register bits: f16 and bf16 pairs and tf32 of moderate magnitude (normal, exact
// products and sums far from overflow), f32 likewise, and integers of any value.
uint32_t random_word(Kind kind, std::mt19937& rng, bool extreme) {
  const uint32_t r = rng();
  auto half = [&](uint32_t x) { return (x & 0x8000u) | (11 + x % 8) << 10 | (x >> 4 & 0x3FF); };
  auto bf16 = [&](uint32_t x) { return (x & 0x8000u) | (123 + x % 8) << 7 | (x >> 4 & 0x7F); };
  switch (kind) {
    case Kind::kF16:
      return half(r & 0xFFFF) | half(r >> 16) << 16;
    case Kind::kBF16:
      return bf16(r & 0xFFFF) | bf16(r >> 16) << 16;
    case Kind::kTf32:  // low fraction bits set: the instruction must ignore them
    case Kind::kF32:
      return (r & 0x80000000u) | (123 + r % 9) << 23 | (static_cast<uint32_t>(rng()) & 0x7FFFFF);
    case Kind::kS32:
      return extreme ? ((r & 1) != 0 ? 0x7FFFFF00u + (r >> 24) : 0x80000100u - (r >> 24)) : r;
    default:
      return r;
  }
}

std::string regs(const char* prefix, uint32_t first, uint32_t count) {
  std::ostringstream s;
  s << "{";
  for (uint32_t i = 0; i < count; ++i) s << (i ? ", " : "") << prefix << first + i;
  s << "}";
  return s.str();
}

// k(in, out): thread t reads a + b + c words at in + t * that, writes d words at out + t * d.
std::string kernel(const Case& c) {
  const uint32_t words = c.a + c.b + c.c;
  std::ostringstream p;
  p << ".version 8.0\n.target sm_80\n.address_size 64\n"
    << ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
    << "  .reg .b32 %r<40>, %t<4>;\n  .reg .b64 %rd<6>;\n"
    << "  mov.u32 %t0, %ctaid.x;\n  mov.u32 %t1, %tid.x;\n  mad.lo.u32 %t2, %t0, 64, %t1;\n"
    << "  ld.param.u64 %rd0, [in];\n  mul.wide.u32 %rd1, %t2, " << 4 * words
    << ";\n  add.s64 %rd0, %rd0, %rd1;\n";
  for (uint32_t i = 0; i < words; ++i)
    p << "  ld.global.b32 %r" << i << ", [%rd0+" << 4 * i << "];\n";
  p << "  mma.sync.aligned." << c.form << " " << regs("%r", 30, c.d) << ", " << regs("%r", 0, c.a)
    << ", " << regs("%r", c.a, c.b) << ", " << regs("%r", c.a + c.b, c.c) << ";\n";
  p << "  ld.param.u64 %rd2, [out];\n  mul.wide.u32 %rd3, %t2, " << 4 * c.d
    << ";\n  add.s64 %rd2, %rd2, %rd3;\n";
  for (uint32_t i = 0; i < c.d; ++i)
    p << "  st.global.b32 [%rd2+" << 4 * i << "], %r" << 30 + i << ";\n";
  p << "  ret;\n}\n";
  return p.str();
}

class Mma : public ptx_spirv_testing::TwoDevices {
 protected:
  void Check(const Case& c) {
    SCOPED_TRACE(c.form);
    const std::string ptx = kernel(c);
    std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>{}(c.form)));
    std::vector<uint32_t> in;
    for (uint32_t t = 0; t < kThreads; ++t) {
      for (uint32_t i = 0; i < c.a; ++i) in.push_back(random_word(c.in, rng, false));
      for (uint32_t i = 0; i < c.b; ++i) in.push_back(random_word(c.in, rng, false));
      for (uint32_t i = 0; i < c.c; ++i) in.push_back(random_word(c.acc_c, rng, c.extreme_c));
    }
    std::vector<std::vector<uint32_t>> out;
    ASSERT_NO_FATAL_FAILURE(RunBoth(ptx, in, c.d, &out));
    // Something was computed: not the fill pattern, not all equal.
    uint32_t distinct = 0;
    for (uint32_t w : out[0]) distinct += w != 0xA5A5A5A5u && w != out[0][0];
    EXPECT_GT(distinct, out[0].size() / 2);
    ExpectSame(out, c.d);
  }

  // Runs k(in, out) on the CPU PTX device, then on the Vulkan device, each thread writing
  // |words| words of |out| (prefilled with 0xA5); (*out)[0] is the CPU's, (*out)[1] Vulkan's.
  void RunBoth(const std::string& ptx, const std::vector<uint32_t>& in, uint32_t words,
               std::vector<std::vector<uint32_t>>* out) {
    for (ptx_spirv_testing::Device* dev : {&cpu_, &vulkan_}) {
      hal_module module = nullptr;
      hal_function f = nullptr;
      ASSERT_EQ(hal_module_load(dev->device, ptx.data(), ptx.size(), nullptr, &module), HAL_SUCCESS)
          << hal_last_error() << "\n"
          << ptx;
      ASSERT_EQ(hal_module_get_function(module, "k", &f), HAL_SUCCESS) << hal_last_error();
      hal_deviceptr pin = 0, pout = 0;
      const size_t out_bytes = size_t{kThreads} * words * 4;
      ASSERT_EQ(hal_mem_alloc(dev->device, in.size() * 4, &pin), HAL_SUCCESS);
      ASSERT_EQ(hal_mem_alloc(dev->device, out_bytes, &pout), HAL_SUCCESS);
      EXPECT_EQ(hal_memcpy_htod(dev->stream, pin, in.data(), in.size() * 4), HAL_SUCCESS);
      EXPECT_EQ(hal_memset_d8(dev->stream, pout, 0xA5, out_bytes), HAL_SUCCESS);
      void* args[] = {&pin, &pout};
      const hal_launch_config config{{kThreads / 64, 1, 1}, {64, 1, 1}, 0};
      EXPECT_EQ(hal_launch(dev->stream, f, &config, args), HAL_SUCCESS) << hal_last_error();
      std::vector<uint32_t> d(out_bytes / 4);
      EXPECT_EQ(hal_memcpy_dtoh(dev->stream, d.data(), pout, out_bytes), HAL_SUCCESS);
      EXPECT_EQ(hal_stream_synchronize(dev->stream), HAL_SUCCESS) << hal_last_error();
      hal_mem_free(dev->device, pin);
      hal_mem_free(dev->device, pout);
      hal_module_unload(module);
      out->push_back(d);
    }
  }

  // Every word the same bits on both devices.
  static void ExpectSame(const std::vector<std::vector<uint32_t>>& out, uint32_t words) {
    int reported = 0;
    for (size_t i = 0; i < out[0].size() && reported < 4; ++i) {
      if (out[0][i] == out[1][i]) continue;
      ++reported;
      ADD_FAILURE() << "thread " << i / words << " word " << i % words << ": the CPU PTX device 0x"
                    << std::hex << out[0][i] << ", Vulkan 0x" << out[1][i];
    }
  }
};

TEST_F(Mma, F16WithEveryAccumulator) {
  Check({"m16n8k16.row.col.f32.f16.f16.f32", 4, 2, 4, 4, Kind::kF16, Kind::kF32, Kind::kF32});
  Check({"m16n8k16.row.col.f16.f16.f16.f16", 4, 2, 2, 2, Kind::kF16, Kind::kF16, Kind::kF16});
  Check({"m16n8k16.row.col.f32.f16.f16.f16", 4, 2, 2, 4, Kind::kF16, Kind::kF16, Kind::kF32});
  Check({"m16n8k16.row.col.f16.f16.f16.f32", 4, 2, 4, 2, Kind::kF16, Kind::kF32, Kind::kF16});
  Check({"m16n8k8.row.col.f16.f16.f16.f16", 2, 1, 2, 2, Kind::kF16, Kind::kF16, Kind::kF16});
  Check({"m16n8k8.row.col.f32.f16.f16.f32", 2, 1, 4, 4, Kind::kF16, Kind::kF32, Kind::kF32});
}

TEST_F(Mma, Bf16AndTf32) {
  Check({"m16n8k16.row.col.f32.bf16.bf16.f32", 4, 2, 4, 4, Kind::kBF16, Kind::kF32, Kind::kF32});
  Check({"m16n8k8.row.col.f32.bf16.bf16.f32", 2, 1, 4, 4, Kind::kBF16, Kind::kF32, Kind::kF32});
  Check({"m16n8k8.row.col.f32.tf32.tf32.f32", 4, 2, 4, 4, Kind::kTf32, Kind::kF32, Kind::kF32});
  Check({"m16n8k4.row.col.f32.tf32.tf32.f32", 2, 1, 4, 4, Kind::kTf32, Kind::kF32, Kind::kF32});
}

TEST_F(Mma, Integers) {
  Check({"m16n8k16.row.col.s32.s8.s8.s32", 2, 1, 4, 4, Kind::kInt8, Kind::kS32, Kind::kS32});
  Check({"m16n8k32.row.col.s32.u8.s8.s32", 4, 2, 4, 4, Kind::kInt8, Kind::kS32, Kind::kS32});
  Check({"m16n8k32.row.col.satfinite.s32.s8.u8.s32", 4, 2, 4, 4, Kind::kInt8, Kind::kS32,
         Kind::kS32, true});
  Check({"m8n8k16.row.col.s32.u8.u8.s32", 1, 1, 2, 2, Kind::kInt8, Kind::kS32, Kind::kS32});
  Check({"m8n8k16.row.col.satfinite.s32.s8.s8.s32", 1, 1, 2, 2, Kind::kInt8, Kind::kS32, Kind::kS32,
         true});
}

// stmatrix (plain and .trans, .x1, .x2, .x4), then ldmatrix of the same rows, and movmatrix: each
// warp stores four random registers a lane as 8x8 matrices into its own 512 bytes of shared
// memory (lane l gives row l % 8 of matrix l / 8, rows in a scrambled order), then every lane
// writes out the shared words it owns, what ldmatrix reads back, and its movmatrix transpose.
TEST_F(Mma, StoreLoadAndMoveMatrices) {
  for (const char* store : {"x4", "x4.trans", "x2", "x1.trans"}) {
    SCOPED_TRACE(store);
    const uint32_t count = store[1] - '0';
    std::ostringstream p;
    p << ".version 8.0\n.target sm_80\n.address_size 64\n"
      << ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
      << "  .reg .b32 %r<24>, %t<8>;\n  .reg .b64 %rd<6>;\n"
      << "  .shared .align 16 .b8 tile[1024];\n"
      << "  mov.u32 %t0, %ctaid.x;\n  mov.u32 %t1, %tid.x;\n  mad.lo.u32 %t2, %t0, 64, %t1;\n"
      << "  ld.param.u64 %rd0, [in];\n  mul.wide.u32 %rd1, %t2, 16;\n  add.s64 %rd0, %rd0, %rd1;\n"
      << "  ld.global.v4.b32 {%r0, %r1, %r2, %r3}, [%rd0];\n"
      // The warp's 512 bytes; lane l's row address: rows of each matrix in the order 5 2 7 0 3
      // 6 1 4 (row r at slot (5 r + 5) % 8), matrices in order.
      << "  shr.u32 %t3, %t1, 5;\n  mov.u32 %t4, tile;\n  mad.lo.u32 %t4, %t3, 512, %t4;\n"
      << "  and.b32 %t5, %t1, 31;\n  and.b32 %t6, %t5, 7;\n  mad.lo.u32 %t6, %t6, 5, 5;\n"
      << "  and.b32 %t6, %t6, 7;\n  and.b32 %t7, %t5, 24;\n  add.u32 %t6, %t6, %t7;\n"
      << "  mad.lo.u32 %t6, %t6, 16, %t4;\n";
    // Zero the warp's 512 bytes first (a .x1 or .x2 store leaves some of them): lane l clears
    // its 16 bytes.
    p << "  shl.b32 %t7, %t5, 4;\n  add.u32 %t7, %t4, %t7;\n"
      << "  mov.u32 %r20, 0;\n  st.shared.v4.b32 [%t7], {%r20, %r20, %r20, %r20};\n"
      << "  bar.sync 0;\n"
      << "  stmatrix.sync.aligned.m8n8." << store << ".shared.b16 [%t6], " << regs("%r", 0, count)
      << ";\n  bar.sync 0;\n"
      << "  ld.shared.v4.b32 {%r4, %r5, %r6, %r7}, [%t7];\n"
      << "  ldmatrix.sync.aligned.m8n8." << store << ".shared.b16 " << regs("%r", 8, count)
      << ", [%t6];\n"
      << "  movmatrix.sync.aligned.m8n8.trans.b16 %r12, %r0;\n"
      << "  ld.param.u64 %rd2, [out];\n  mul.wide.u32 %rd3, %t2, 48;\n"
      << "  add.s64 %rd2, %rd2, %rd3;\n"
      << "  st.global.v4.b32 [%rd2], {%r4, %r5, %r6, %r7};\n";
    for (uint32_t i = 0; i < count; ++i) {
      p << "  st.global.b32 [%rd2+" << 16 + 4 * i << "], %r" << 8 + i << ";\n";
    }
    p << "  st.global.b32 [%rd2+36], %r12;\n  ret;\n}\n";
    const std::string ptx = p.str();
    std::mt19937 rng(count * 7 + (std::string(store).size() > 2 ? 1 : 0));
    std::vector<uint32_t> in(kThreads * 4);
    for (uint32_t& w : in) w = static_cast<uint32_t>(rng());
    std::vector<std::vector<uint32_t>> out;
    ASSERT_NO_FATAL_FAILURE(RunBoth(ptx, in, 12, &out));
    // ldmatrix of what stmatrix stored gives the registers back.
    for (uint32_t t = 0; t < kThreads; ++t) {
      for (uint32_t i = 0; i < count; ++i) {
        EXPECT_EQ(out[0][t * 12 + 4 + i], in[t * 4 + i]) << "thread " << t << " register " << i;
      }
    }
    ExpectSame(out, 12);
  }
}

}  // namespace
