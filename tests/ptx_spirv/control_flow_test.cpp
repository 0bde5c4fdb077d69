// Generated control flow, run two ways: each program is PTX with random nests of branches,
// loops with data-dependent trip counts, breaks and continues out of nested loops, and early
// returns, all divergent across the threads of a block. It runs through the translator on the
// first Vulkan device and on the CPU PTX device (the reference: an interpreter that follows the
// PTX as written), and every thread's result must be the same bits on both.
//
// Loops stay far below lavapipe's limit of 65535 iterations per loop (ptx_on_vulkan docs).
// Without both devices the test skips, naming the missing one.
#include <gtest/gtest.h>
#include <hal/hal.h>

#include "two_devices.h"

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Concatenates its arguments. Strings are built this way, piece by piece, because GCC 12 warns
// falsely (-Wrestrict) on '"text" + std::to_string(n)' at -O3.
template <typename... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// Writes one random program. Every loop has a counter, a trip count from the data (1 to 4), and
// labels for its head, its continue point and its exit, so that breaks and continues can name
// any enclosing loop.
class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  std::string program(const std::string& name) {
    body_.clear();
    statements(0, 3 + pick(4));
    std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n";
    ptx += ".visible .entry " + name + "(.param .u64 out)\n{\n";
    ptx += "  .reg .pred %p<4>;\n  .reg .b32 %r<4>;\n  .reg .b32 %c<8>;\n  .reg .b32 %t<8>;\n";
    ptx += "  .reg .b64 %rd<4>;\n";
    ptx += "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n";
    ptx += "  mad.lo.u32 %r0, %r2, 977, %r1;\n";
    ptx += body_;
    ptx += "DONE:\n  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n";
    ptx += "  mov.u32 %r3, %ntid.x;\n  mad.lo.u32 %r3, %r2, %r3, %r1;\n";
    ptx += "  mul.wide.u32 %rd2, %r3, 4;\n  add.s64 %rd3, %rd1, %rd2;\n";
    ptx += "  st.global.u32 [%rd3], %r0;\n  ret;\n}\n";
    return ptx;
  }

 private:
  uint32_t pick(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
  std::string label() { return str("L", next_label_++); }
  void line(const std::string& text) { body_ += "  " + text + "\n"; }
  // A predicate that differs between threads: a bit of the running value.
  void condition() {
    line(str("and.b32 %t7, %r0, ", 1u << pick(5), ";"));
    line("setp.ne.u32 %p1, %t7, 0;");
  }
  void mix() {
    switch (pick(4)) {
      case 0:
        line("mad.lo.u32 %r0, %r0, 1103515245, 12345;");
        break;
      case 1:
        line(str("xor.b32 %r0, %r0, ", pick(1u << 20), ";"));
        break;
      case 2:
        line("shr.u32 %t6, %r0, 7;");
        line("add.u32 %r0, %r0, %t6;");
        break;
      default:
        line("add.u32 %r0, %r0, %r1;");
        break;
    }
  }

  void statements(uint32_t depth, uint32_t count) {
    for (uint32_t i = 0; i < count; ++i) statement(depth);
  }

  void statement(uint32_t depth) {
    const uint32_t choice = depth >= 3 ? pick(5) : pick(8);
    if (choice < 2) {
      mix();
    } else if (choice == 2 && !loops_.empty()) {  // break out of some enclosing loop
      const Loop& l = loops_[pick(static_cast<uint32_t>(loops_.size()))];
      condition();
      line("@%p1 bra " + l.exit + ";");
      mix();
    } else if (choice == 3 && !loops_.empty()) {  // continue some enclosing loop
      const Loop& l = loops_[pick(static_cast<uint32_t>(loops_.size()))];
      condition();
      line("@%p1 bra " + l.next + ";");
      mix();
    } else if (choice == 4) {  // early exit, with or without the result stored
      condition();
      line(pick(2) == 0 ? "@%p1 bra DONE;" : "@%p1 ret;");
    } else if (choice < 7) {  // if, if-else
      const std::string other = label(), end = label();
      condition();
      line("@%p1 bra " + other + ";");
      statements(depth + 1, 1 + pick(2));
      line("bra.uni " + end + ";");
      body_ += other + ":\n";
      if (pick(2) == 0) statements(depth + 1, 1 + pick(2));
      body_ += end + ":\n";
    } else {  // a loop of 1 to 4 trips, decided by the data
      const uint32_t n = static_cast<uint32_t>(loops_.size());
      if (n >= 3) return mix();
      Loop l{label(), label(), label(), n};
      const std::string c = str("%c", n), t = str("%t", n);
      line("and.b32 " + t + ", %r0, 3;");
      line("add.u32 " + t + ", " + t + ", 1;");
      line("mov.u32 " + c + ", 0;");
      body_ += l.head + ":\n";
      loops_.push_back(l);
      statements(depth + 1, 1 + pick(3));
      loops_.pop_back();
      body_ += l.next + ":\n";
      line("add.u32 " + c + ", " + c + ", 1;");
      line("setp.lt.u32 %p2, " + c + ", " + t + ";");
      line("@%p2 bra " + l.head + ";");
      body_ += l.exit + ":\n";
    }
  }

  struct Loop {
    std::string head, next, exit;
    uint32_t level;
  };
  std::mt19937 rng_;
  std::string body_;
  std::vector<Loop> loops_;
  uint32_t next_label_ = 0;
};

using ptx_spirv_testing::Device;

class ControlFlow : public ptx_spirv_testing::TwoDevices {
 protected:
  // Runs the kernel |name| of |ptx| on |d| with |blocks| x |threads| and returns its output.
  std::vector<uint32_t> run(Device& d, const std::string& ptx, const std::string& name,
                            uint32_t blocks, uint32_t threads) {
    const size_t count = size_t{blocks} * threads;
    std::vector<uint32_t> out(count, 0xDEADBEEFu);
    hal_module module = nullptr;
    EXPECT_EQ(hal_module_load(d.device, ptx.data(), ptx.size(), nullptr, &module), HAL_SUCCESS)
        << hal_last_error() << "\n"
        << ptx;
    if (module == nullptr) return {};
    hal_function f = nullptr;
    hal_deviceptr buffer = 0;
    EXPECT_EQ(hal_module_get_function(module, name.c_str(), &f), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_mem_alloc(d.device, count * 4, &buffer), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_memcpy_htod(d.stream, buffer, out.data(), count * 4), HAL_SUCCESS);
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

TEST_F(ControlFlow, GeneratedProgramsGiveTheSameResultsOnVulkanAsOnTheCpuPtxDevice) {
  constexpr uint32_t kPrograms = 40;
  for (uint32_t seed = 1; seed <= kPrograms; ++seed) {
    Generator generator(seed);
    const std::string name = str("flow", seed);
    const std::string ptx = generator.program(name);
    SCOPED_TRACE(name);
    const std::vector<uint32_t> want = run(cpu_, ptx, name, 2, 32);
    const std::vector<uint32_t> got = run(vulkan_, ptx, name, 2, 32);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << "thread " << i << " of\n" << ptx;
    }
    if (HasFatalFailure()) return;
  }
}

}  // namespace
