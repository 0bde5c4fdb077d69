// Single instructions, run two ways: each case is a small kernel in which every thread reads
// three 32-bit words (%a, %b, %c), runs the instruction under test and writes one word (%d).
// It runs through the translator on the first Vulkan device and on the CPU PTX device (the
// reference, an interpreter that follows the PTX ISA), over thousands of inputs: edge values
// (zeros, all ones, sign bits, infinities, subnormals) combined with each other, then random
// words and random floats of nearby magnitudes. Every result must be the same bits on both.
//
// Without both devices the test skips, naming the missing one.
#include <gtest/gtest.h>
#include <hal/hal.h>

#include "two_devices.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kThreads = 128;

// The kernel around one case's body: %a, %b, %c in, %d out, scratch registers of each kind.
std::string kernel(const std::string& body) {
  std::ostringstream ptx;
  ptx << ".version 8.0\n.target sm_80\n.address_size 64\n"
      << ".visible .entry k(.param .u64 in, .param .u64 out, .param .u32 n)\n{\n"
      << "  .reg .pred %p<8>;\n  .reg .b32 %a, %b, %c, %d, %t<8>;\n  .reg .b64 %rd<8>;\n"
      << "  .reg .f32 %f<8>;\n  .reg .b16 %h<8>;\n  .shared .align 8 .b32 s[256];\n"
      << "  mov.u32 %t0, %tid.x;\n  mov.u32 %t1, %ctaid.x;\n  mov.u32 %t2, %ntid.x;\n"
      << "  mad.lo.u32 %t0, %t1, %t2, %t0;\n  ld.param.u32 %t1, [n];\n"
      << "  setp.ge.u32 %p0, %t0, %t1;\n  @%p0 bra DONE;\n"
      << "  ld.param.u64 %rd1, [in];\n  mul.wide.u32 %rd2, %t0, 12;\n  add.s64 %rd3, %rd1, %rd2;\n"
      << "  ld.global.u32 %a, [%rd3];\n  ld.global.u32 %b, [%rd3+4];\n"
      << "  ld.global.u32 %c, [%rd3+8];\n"
      << body << "\n"
      << "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd2, %t0, 4;\n  add.s64 %rd3, %rd1, %rd2;\n"
      << "  st.global.u32 [%rd3], %d;\nDONE:\n  ret;\n}\n";
  return ptx.str();
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The inputs: triples of every edge value with every other (and a third from the list), then
// random words, then random floats whose exponents lie close (so that sums cancel and products
// meet the addends).
std::vector<uint32_t> inputs(uint32_t seed) {
  static const uint32_t kEdges[] = {
      0u,          1u,          2u,          3u,          0x7Fu,       0x80u,       0xFFu,
      0x7FFFu,     0x8000u,     0xFFFFu,     0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFFEu,
      0x01010101u, 0x80808080u, 0x7F7F7F7Fu, 0x3F800000u, 0xBF800000u, 0x7F800000u, 0xFF800000u,
      0x00000001u, 0x807FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0x3C003C00u, 0xBC00FC00u, 0x7C00FBFFu,
      0x00010400u, 0x3F803F80u, 0xFFFFFFE0u, 0x0000001Fu, 0x00000020u, 0x12345678u};
  std::vector<uint32_t> words;
  const size_t n = sizeof kEdges / sizeof kEdges[0];
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      words.insert(words.end(), {kEdges[i], kEdges[j], kEdges[(i + j) % n]});
    }
  }
  std::mt19937 rng(seed);
  for (int i = 0; i < 3 * 3000; ++i) words.push_back(static_cast<uint32_t>(rng()));
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-12, 12), sign(0, 1);
  for (int i = 0; i < 3000; ++i) {
    const int e = exponent(rng);
    for (int k = 0; k < 3; ++k) {
      const float f = std::ldexp(mantissa(rng), e + (k == 2 ? 2 * e : 0) + sign(rng)) *
                      (sign(rng) != 0 ? -1.0f : 1.0f);
      words.push_back(float_bits(f));
    }
  }
  return words;
}

bool is_nan(uint32_t bits) {
  return (bits & 0x7FFFFFFFu) > 0x7F800000u;
}

using ptx_spirv_testing::Device;

class Instructions : public ptx_spirv_testing::TwoDevices {
 protected:
  std::vector<uint32_t> run(Device& d, const std::string& ptx, const std::vector<uint32_t>& in) {
    const uint32_t count = static_cast<uint32_t>(in.size() / 3);
    std::vector<uint32_t> out(count, 0xDEADBEEFu);
    hal_module module = nullptr;
    EXPECT_EQ(hal_module_load(d.device, ptx.data(), ptx.size(), nullptr, &module), HAL_SUCCESS)
        << hal_last_error() << "\n"
        << ptx;
    if (module == nullptr) return {};
    hal_function f = nullptr;
    hal_deviceptr in_buffer = 0, out_buffer = 0;
    EXPECT_EQ(hal_module_get_function(module, "k", &f), HAL_SUCCESS) << hal_last_error();
    if (f == nullptr) {
      hal_module_unload(module);
      return {};
    }
    EXPECT_EQ(hal_mem_alloc(d.device, in.size() * 4, &in_buffer), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_mem_alloc(d.device, out.size() * 4, &out_buffer), HAL_SUCCESS);
    EXPECT_EQ(hal_memcpy_htod(d.stream, in_buffer, in.data(), in.size() * 4), HAL_SUCCESS);
    EXPECT_EQ(hal_memcpy_htod(d.stream, out_buffer, out.data(), out.size() * 4), HAL_SUCCESS);
    uint32_t n = count;
    void* args[] = {&in_buffer, &out_buffer, &n};
    hal_launch_config config{{(count + kThreads - 1) / kThreads, 1, 1}, {kThreads, 1, 1}, 0};
    EXPECT_EQ(hal_launch(d.stream, f, &config, args), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_memcpy_dtoh(d.stream, out.data(), out_buffer, out.size() * 4), HAL_SUCCESS);
    EXPECT_EQ(hal_stream_synchronize(d.stream), HAL_SUCCESS) << hal_last_error();
    hal_mem_free(d.device, in_buffer);
    hal_mem_free(d.device, out_buffer);
    hal_module_unload(module);
    return out;
  }

  // Runs |body| on both devices and compares every result, reporting the first few mismatches
  // with their inputs. With |f32_nan|, a result that is an f32 NaN on both matches whatever its
  // payload: which NaN operand propagates is the CPU's choice, not PTX's.
  void same_bits(const std::string& body, bool f32_nan = false) {
    SCOPED_TRACE(body);
    const std::vector<uint32_t> in = inputs(static_cast<uint32_t>(body.size()));
    const std::string ptx = kernel(body);
    const std::vector<uint32_t> want = run(cpu_, ptx, in);
    const std::vector<uint32_t> got = run(vulkan_, ptx, in);
    ASSERT_EQ(want.size(), in.size() / 3);
    ASSERT_EQ(got.size(), want.size());
    int reported = 0;
    for (size_t i = 0; i < want.size() && reported < 5; ++i) {
      if (got[i] == want[i]) continue;
      if (f32_nan && is_nan(got[i]) && is_nan(want[i])) continue;
      ++reported;
      ADD_FAILURE() << std::hex << "inputs " << in[3 * i] << ", " << in[3 * i + 1] << ", "
                    << in[3 * i + 2] << ": Vulkan gives " << got[i] << ", the CPU PTX device "
                    << want[i];
    }
  }

  // Runs kernel 'k' of |ptx|, whose one parameter is a buffer of |words| zeroed words, on
  // |blocks| blocks of kThreads threads, and returns the buffer.
  std::vector<uint32_t> run_on_zeros(Device& d, const std::string& ptx, size_t words,
                                     uint32_t blocks) {
    std::vector<uint32_t> out(words, 0);
    hal_module module = nullptr;
    EXPECT_EQ(hal_module_load(d.device, ptx.data(), ptx.size(), nullptr, &module), HAL_SUCCESS)
        << hal_last_error();
    if (module == nullptr) return {};
    hal_function f = nullptr;
    hal_deviceptr buffer = 0;
    EXPECT_EQ(hal_module_get_function(module, "k", &f), HAL_SUCCESS) << hal_last_error();
    if (f != nullptr) {
      EXPECT_EQ(hal_mem_alloc(d.device, words * 4, &buffer), HAL_SUCCESS) << hal_last_error();
      EXPECT_EQ(hal_memcpy_htod(d.stream, buffer, out.data(), words * 4), HAL_SUCCESS);
      void* args[] = {&buffer};
      hal_launch_config config{{blocks, 1, 1}, {kThreads, 1, 1}, 0};
      EXPECT_EQ(hal_launch(d.stream, f, &config, args), HAL_SUCCESS) << hal_last_error();
      EXPECT_EQ(hal_memcpy_dtoh(d.stream, out.data(), buffer, words * 4), HAL_SUCCESS);
      EXPECT_EQ(hal_stream_synchronize(d.stream), HAL_SUCCESS) << hal_last_error();
      hal_mem_free(d.device, buffer);
    }
    hal_module_unload(module);
    return out;
  }
};

TEST_F(Instructions, FusedMultiplyAddRoundsOnce) {
  same_bits("fma.rn.f32 %d, %a, %b, %c;", true);
  same_bits("mad.rn.f32 %d, %a, %b, %c;", true);
  // The products of nvcc's argument reductions: a constant's split parts against a quotient.
  same_bits(
      "neg.f32 %f1, %a;\n  fma.rn.f32 %f2, %a, %b, 0f00000000;\n"
      "  fma.rn.f32 %f3, %f1, %b, %f2;\n  mov.b32 %d, %f3;",
      true);
}

// Directed rounding of f32 sums: exact however far apart the exponents lie (1 + 2^-149
// rounds up under .rp), with IEEE's -0 for an exact zero under .rm (1 + -1, 0 + -0).
TEST_F(Instructions, DirectedRoundingOfSumsIsExact) {
  for (const char* mode : {"rz", "rm", "rp"}) {
    const std::string m = mode;
    same_bits("add." + m + ".f32 %d, %a, %b;", true);
    same_bits("sub." + m + ".f32 %d, %a, %b;", true);
    same_bits("mul." + m + ".f32 %d, %a, %b;", true);
    same_bits("fma." + m + ".f32 %d, %a, %b, %c;", true);
  }
}

TEST_F(Instructions, CarryChains) {
  // Each chain's low words and its final carry, folded into one word.
  const std::string fold =
      "\n  addc.u32 %t6, 0, 0;\n  xor.b32 %d, %t3, %t4;\n"
      "  shl.b32 %t6, %t6, 31;\n  xor.b32 %d, %d, %t6;";
  for (const char* hl : {"lo", "hi"}) {
    for (const char* type : {"u32", "s32"}) {
      const std::string mad = std::string(".") + hl + ".cc." + type;
      same_bits("mad" + mad + " %t3, %a, %b, %c;\n  madc." + hl + ".cc." + type +
                " %t4, %b, %c, %a;" + fold);
      same_bits("add.cc.u32 %t3, %a, %b;\n  madc." + std::string(hl) + "." + type +
                " %t4, %a, %c, %b;\n  mov.u32 %t6, 0;\n  xor.b32 %d, %t3, %t4;");
    }
  }
  same_bits("sub.cc.u32 %t3, %a, %b;\n  subc.cc.u32 %t4, %c, %a;" + fold);
  same_bits("add.cc.u32 %t3, %a, %b;\n  addc.cc.u32 %t4, %c, %a;" + fold);
}

TEST_F(Instructions, BitFind) {
  for (const char* type : {"u32", "s32"}) {
    same_bits(std::string("bfind.") + type + " %d, %a;");
    same_bits(std::string("bfind.shiftamt.") + type + " %d, %a;");
  }
  for (const char* type : {"u64", "s64"}) {
    const std::string wide = "mov.b64 %rd4, {%a, %b};\n  ";
    same_bits(wide + "bfind." + type + " %d, %rd4;");
    same_bits(wide + "bfind.shiftamt." + type + " %d, %rd4;");
  }
}

TEST_F(Instructions, FindNthSetBit) {
  // Offsets of every sign and size, bases past 31 included.
  same_bits("fns.b32 %d, %a, %b, %c;");
  same_bits(
      "and.b32 %t1, %b, 63;\n  and.b32 %t2, %c, 63;\n  sub.s32 %t2, %t2, 31;\n"
      "  fns.b32 %d, %a, %t1, %t2;");
  same_bits("and.b32 %t1, %b, 31;\n  fns.b32 %d, %a, %t1, 0;");
  same_bits("fns.b32 %d, %a, 0, 1;");
  same_bits("fns.b32 %d, %a, 31, -1;");
}

TEST_F(Instructions, DotProductsAndSumOfAbsoluteDifferences) {
  for (const char* types : {"u32.u32", "s32.s32", "u32.s32", "s32.u32"}) {
    same_bits(std::string("dp4a.") + types + " %d, %a, %b, %c;");
    same_bits(std::string("dp2a.lo.") + types + " %d, %a, %b, %c;");
    same_bits(std::string("dp2a.hi.") + types + " %d, %a, %b, %c;");
  }
  for (const char* type : {"u32", "s32"}) {
    same_bits(std::string("sad.") + type + " %d, %a, %b, %c;");
  }
}

TEST_F(Instructions, SimdVideo) {
  for (const char* op : {"vabsdiff", "vadd", "vsub", "vmin", "vmax"}) {
    for (const char* lanes : {"2", "4"}) {
      for (const char* types : {".u32.u32.u32", ".s32.s32.s32", ".u32.s32.u32", ".s32.u32.s32"}) {
        const std::string name = std::string(op) + lanes + types;
        same_bits(name + " %d, %a, %b, %c;");
        same_bits(name + ".sat %d, %a, %b, %c;");
        same_bits(name + ".add %d, %a, %b, %c;");
      }
    }
  }
}

TEST_F(Instructions, OrderedAndVolatileLoadsAndStores) {
  // Each thread's own input words, and its own words of shared memory (%t3: byte offset).
  const std::string shared =
      "mov.u32 %t3, %tid.x;\n  shl.b32 %t3, %t3, 3;\n  mov.u32 %t4, s;\n"
      "  add.u32 %t3, %t3, %t4;\n  ";
  for (const char* store :
       {"st.relaxed.gpu", "st.release.gpu", "st.relaxed.cta", "st.release.sys", "st.volatile"}) {
    for (const char* load :
         {"ld.relaxed.gpu", "ld.acquire.gpu", "ld.acquire.cta", "ld.relaxed.sys", "ld.volatile"}) {
      same_bits(std::string(store) + ".global.b32 [%rd3+4], %a;\n  " + load +
                ".global.b32 %d, [%rd3+4];");
      // 64 bits: the even threads, whose input triples start 8-byte aligned.
      same_bits(
          std::string(
              "and.b32 %t5, %t0, 1;\n  setp.eq.u32 %p1, %t5, 0;\n  mov.b64 %rd4, %rd3;\n  @%p1 ") +
          store + ".global.b64 [%rd3], %rd3;\n  @%p1 " + load +
          ".global.b64 %rd4, [%rd3];\n  sub.s64 %rd4, %rd4, %rd3;\n  cvt.u32.u64 %d, %rd4;\n"
          "  add.u32 %d, %d, %c;");
      same_bits(shared + store + ".shared.b32 [%t3], %b;\n  " + load + ".shared.b32 %d, [%t3];");
    }
  }
  same_bits("ld.volatile.global.u16 %h1, [%rd3+2];\n  cvt.u32.u16 %d, %h1;");
}

// f16 and bf16 arithmetic, on pairs and on scalars (the low and the high halves of the inputs
// in turn), with each modifier PTX allows on the type; fma must round once. A second round takes
// the scalars from the inputs as f32 values rounded to the format, so that their magnitudes lie
// close and sums cancel.
TEST_F(Instructions, HalfPrecisionArithmetic) {
  struct Case {
    const char* op;
    int arity;
    std::vector<const char*> f16_modifiers, bf16_modifiers;
  };
  const std::vector<Case> cases = {
      {"add", 2, {"", ".rn", ".ftz", ".sat", ".ftz.sat"}, {"", ".rn"}},
      {"sub", 2, {"", ".rn", ".ftz", ".sat", ".ftz.sat"}, {"", ".rn"}},
      {"mul", 2, {"", ".rn", ".ftz", ".sat", ".ftz.sat"}, {"", ".rn"}},
      {"fma",
       3,
       {".rn", ".rn.ftz", ".rn.sat", ".rn.ftz.sat", ".rn.relu", ".rn.ftz.relu"},
       {".rn", ".rn.relu"}},
      {"neg", 1, {"", ".ftz"}, {""}},
      {"abs", 1, {"", ".ftz"}, {""}},
      {"min", 2, {"", ".ftz", ".NaN", ".ftz.NaN", ".xorsign.abs"}, {"", ".NaN", ".xorsign.abs"}},
      {"max", 2, {"", ".ftz", ".NaN", ".ftz.NaN", ".xorsign.abs"}, {"", ".NaN", ".xorsign.abs"}},
  };
  static const char* kOperands[] = {"%a", "%b", "%c"};
  for (const Case& c : cases) {
    for (const char* type : {"f16", "bf16"}) {
      const bool f16 = std::string(type) == "f16";
      for (const char* modifier : f16 ? c.f16_modifiers : c.bf16_modifiers) {
        const std::string name = std::string(c.op) + modifier + "." + type;
        std::string pair = name + "x2 %d";
        std::string low = name + " %h0", high = name + " %h7";
        for (int i = 0; i < c.arity; ++i) {
          pair += std::string(", ") + kOperands[i];
          low += ", %h" + std::to_string(2 * i + 1);
          high += ", %h" + std::to_string(2 * i + 2);
        }
        same_bits(pair + ";");
        const std::string scalars = low + ";\n  " + high + ";\n  mov.b32 %d, {%h0, %h7};";
        same_bits(
            "mov.b32 {%h1, %h2}, %a;\n  mov.b32 {%h3, %h4}, %b;\n  mov.b32 {%h5, %h6}, %c;\n  " +
            scalars);
        same_bits(std::string("cvt.rn.") + type + ".f32 %h1, %a;\n  cvt.rn." + type +
                  ".f32 %h3, %b;\n  cvt.rn." + type + ".f32 %h5, %c;\n  cvt.rn." + type +
                  ".f32 %h2, %c;\n  cvt.rn." + type + ".f32 %h4, %a;\n  cvt.rn." + type +
                  ".f32 %h6, %b;\n  " + scalars);
      }
    }
  }
}

// Comparisons of f16 and bf16 pairs (setp's two predicates from the low and the high halves,
// set's halves each from their own) and scalars, with .ftz where PTX allows it, and of f32
// with .ftz.
TEST_F(Instructions, HalfPrecisionComparisons) {
  const std::string predicates =
      "\n  selp.b32 %t1, 1, 0, %p1;\n  selp.b32 %t2, 2, 0, %p2;\n  or.b32 %d, %t1, %t2;";
  const std::string halves = "mov.b32 {%h1, %h2}, %a;\n  mov.b32 {%h3, %h4}, %b;\n  ";
  for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu",
                          "geu", "num", "nan"}) {
    for (const char* type : {"f16", "bf16", "f16.ftz"}) {
      std::string t = type, ftz;
      if (t == "f16.ftz") t = "f16", ftz = ".ftz";
      const std::string op = std::string(cmp) + ftz;
      same_bits("setp." + op + "." + t + "x2 %p1|%p2, %a, %b;" + predicates);
      same_bits("setp.ne.u32 %p3, %c, 0;\n  setp." + op + ".xor." + t +
                "x2 %p1|%p2, %a, %b, !%p3;" + predicates);
      same_bits("set." + op + "." + t + "x2." + t + "x2 %d, %a, %b;");
      same_bits("set." + op + ".u32." + t + "x2 %d, %a, %b;");
      same_bits(halves + "setp." + op + "." + t + " %p1|%p2, %h2, %h4;" + predicates);
      same_bits(halves + "set." + op + "." + t + "." + t +
                " %h5, %h1, %h3;\n  cvt.u32.u16 %d, %h5;");
      same_bits(halves + "set." + op + ".u32." + t + " %d, %h2, %h3;");
    }
    same_bits(std::string("setp.") + cmp + ".ftz.f32 %p1|%p2, %a, %b;" + predicates);
  }
}

// Each thread's own word (or pair of halves) of global and shared memory, so that the old and
// the new value are determined: the new value must be the CPU PTX device's, bit for bit, and
// the old one the value stored before (else %d is 0xBAD0BAD0). %t3: the thread's own 8 bytes of
// shared memory.
TEST_F(Instructions, AtomicsComputedByCompareAndSwap) {
  const std::string own_shared =
      "mov.u32 %t3, %tid.x;\n  shl.b32 %t3, %t3, 3;\n  mov.u32 %t4, s;\n"
      "  add.u32 %t3, %t3, %t4;\n  st.shared.b32 [%t3], %a;\n  ";
  // %t5: the old value, %t6: the word after; the old value must be %t7.
  const std::string check = "\n  setp.eq.u32 %p2, %t5, %t7;\n  selp.b32 %d, %t6, 0xBAD0BAD0, %p2;";
  for (const char* op : {"inc", "dec"}) {
    for (const char* limit : {"%b", "7", "0", "0xFFFFFFFF"}) {
      same_bits(own_shared + "atom.shared." + op + ".u32 %t5, [%t3], " + limit +
                ";\n  ld.shared.b32 %t6, [%t3];\n  mov.b32 %t7, %a;" + check);
      same_bits(std::string("atom.global.") + op + ".u32 %t5, [%rd3], " + limit +
                ";\n  ld.global.b32 %t6, [%rd3];\n  mov.b32 %t7, %a;" + check);
      same_bits(std::string("red.global.") + op + ".u32 [%rd3], " + limit +
                ";\n  ld.global.b32 %d, [%rd3];");
    }
  }
  // f32 add on shared memory; NaN sums may carry either operand's payload.
  same_bits(own_shared +
                "atom.shared.add.f32 %t5, [%t3], %b;\n  ld.shared.b32 %t6, [%t3];\n"
                "  mov.b32 %t7, %a;" +
                check,
            true);
  same_bits(own_shared + "red.shared.add.f32 [%t3], %b;\n  ld.shared.b32 %d, [%t3];", true);
  // f64 add on global memory, by the even threads (whose 8 bytes are aligned): the low and the
  // high word of the sum, NaN made one NaN.
  for (const char* word : {"%t6, %t7", "%t7, %t6"}) {
    same_bits(
        std::string("and.b32 %t5, %t0, 1;\n  setp.eq.u32 %p1, %t5, 0;\n  mov.b32 %d, %c;\n"
                    "  @!%p1 bra SKIP;\n  mov.b64 %rd6, {%c, %a};\n"
                    "  atom.global.add.f64 %rd5, [%rd3], %rd6;\n  ld.global.b64 %rd7, [%rd3];\n"
                    "  testp.notanumber.f64 %p3, %rd7;\n"
                    "  @%p3 mov.b64 %rd7, 0x7FF8000000000000;\n  mov.b64 {") +
        word +
        "}, %rd7;\n  mov.b64 %rd4, {%a, %b};\n  setp.eq.u64 %p2, %rd5, %rd4;\n"
        "  selp.b32 %d, %t6, 0xBAD0BAD0, %p2;\nSKIP:");
  }
  same_bits(
      "and.b32 %t5, %t0, 1;\n  setp.eq.u32 %p1, %t5, 0;\n  mov.b32 %d, %c;\n"
      "  @!%p1 bra SKIP;\n  mov.b64 %rd6, {%c, %a};\n  red.global.add.f64 [%rd3], %rd6;\n"
      "  ld.global.b64 %rd7, [%rd3];\n  testp.notanumber.f64 %p3, %rd7;\n"
      "  @%p3 mov.b64 %rd7, 0x7FF8000000000000;\n  mov.b64 {%t6, %d}, %rd7;\nSKIP:");
  // Half-precision adds: on either half of a word, whose other half must stay as it was, and
  // on pairs; rounded as the CPU PTX device rounds, NaN the canonical NaN.
  for (const char* type : {"f16", "bf16"}) {
    for (const char* offset : {"", "+2"}) {
      const std::string half_offset = offset;
      const std::string old_half = half_offset.empty() ? "%h3" : "%h4";
      same_bits(own_shared + "mov.b32 {%h1, %h2}, %c;\n  atom.shared.add.noftz." + type +
                " %h5, [%t3" + half_offset + "], %h1;\n  ld.shared.b32 %t6, [%t3];\n" +
                "  mov.b32 {%h3, %h4}, %a;\n  cvt.u32.u16 %t7, " + old_half +
                ";\n  cvt.u32.u16 %t5, %h5;" + check);
      same_bits("mov.b32 {%h1, %h2}, %c;\n  atom.global.add.noftz." + std::string(type) +
                " %h5, [%rd3" + half_offset + "], %h1;\n  ld.global.b32 %t6, [%rd3];\n" +
                "  mov.b32 {%h3, %h4}, %a;\n  cvt.u32.u16 %t7, " + old_half +
                ";\n  cvt.u32.u16 %t5, %h5;" + check);
      same_bits("mov.b32 {%h1, %h2}, %c;\n  red.global.add.noftz." + std::string(type) + " [%rd3" +
                half_offset + "], %h2;\n  ld.global.b32 %d, [%rd3];");
    }
    same_bits(own_shared + "atom.shared.add.noftz." + type + "x2 %t5, [%t3], %c;\n" +
              "  ld.shared.b32 %t6, [%t3];\n  mov.b32 %t7, %a;" + check);
    same_bits(std::string("atom.global.add.noftz.") + type + "x2 %t5, [%rd3], %c;\n" +
              "  ld.global.b32 %t6, [%rd3];\n  mov.b32 %t7, %a;" + check);
    same_bits(std::string("red.global.add.noftz.") + type + "x2 [%rd3], %c;\n" +
              "  ld.global.b32 %d, [%rd3];");
  }
  // cas.b16: a compare that holds (the half's own value) and one that mostly fails.
  for (const char* compare : {"%h4", "%h1"}) {
    same_bits(
        "mov.b32 {%h1, %h2}, %c;\n  mov.b32 {%h3, %h4}, %a;\n"
        "  atom.global.cas.b16 %h5, [%rd3+2], " +
        std::string(compare) +
        ", %h2;\n  ld.global.b32 %t6, [%rd3];\n  cvt.u32.u16 %t7, %h4;\n"
        "  cvt.u32.u16 %t5, %h5;" +
        check);
    same_bits(own_shared + "mov.b32 {%h1, %h2}, %c;\n  mov.b32 {%h3, %h4}, %a;\n" +
              "  atom.shared.cas.b16 %h5, [%t3+2], " + compare +
              ", %h2;\n  ld.shared.b32 %t6, [%t3];\n  cvt.u32.u16 %t7, %h4;\n"
              "  cvt.u32.u16 %t5, %h5;" +
              check);
  }
}

// Every thread of several blocks updates the same words, so that a lost update or an old value
// that is not the one the successful swap read shows: counts and sums of ones are exact, and the
// old values of inc are each count below the total exactly once. The expected values are worked
// out here, and both devices must give them.
TEST_F(Instructions, AtomicsUnderContention) {
  constexpr uint32_t kBlocks = 4, kAll = kBlocks * kThreads;
  // Words: [0, 8) global counters, [8, 8 + 8 * kBlocks) each block's shared counters, then
  // per thread the old value of a global inc and of a shared inc.
  const std::string ptx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .b16 %h<8>;
  .shared .align 8 .b32 s[8];
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, s;
  setp.lt.u32 %p0, %r0, 8;
  shl.b32 %r2, %r0, 2;
  add.u32 %r2, %r2, %r1;
  @%p0 st.shared.u32 [%r2], 0;
  bar.sync 0;
  mov.b16 %h1, 0x3C00;
  mov.b16 %h2, 0x3F80;
  atom.shared.inc.u32 %r3, [%r1], 1000;
  atom.shared.add.f32 %r4, [%r1+4], 0f3F800000;
  red.shared.add.noftz.f16 [%r1+8], %h1;
  atom.shared.add.noftz.bf16 %h3, [%r1+10], %h2;
  red.shared.add.noftz.f16x2 [%r1+12], 0x3C003C00;
  atom.shared.dec.u32 %r5, [%r1+16], 1000;
  atom.shared.add.noftz.bf16x2 %r6, [%r1+20], 0x3F803F80;
  ld.param.u64 %rd1, [out];
  atom.global.inc.u32 %r7, [%rd1], 100000;
  atom.global.add.f64 %rd2, [%rd1+8], 0d3FF0000000000000;
  atom.global.add.noftz.f16 %h4, [%rd1+16], %h1;
  red.global.add.noftz.f16 [%rd1+18], %h1;
  red.global.dec.u32 [%rd1+20], 100000;
  atom.global.add.noftz.f16x2 %r8, [%rd1+24], 0x3C003C00;
  mov.u32 %r9, %ctaid.x;
  mov.u32 %r10, %ntid.x;
  mad.lo.u32 %r11, %r9, %r10, %r0;
  mul.wide.u32 %rd3, %r11, 8;
  add.s64 %rd3, %rd3, %rd1;
  st.global.u32 [%rd3+)" + std::to_string(4 * (8 + 8 * kBlocks)) +
                          R"(], %r7;
  st.global.u32 [%rd3+)" + std::to_string(4 * (8 + 8 * kBlocks) + 4) +
                          R"(], %r3;
  bar.sync 0;
  @!%p0 bra DONE;
  ld.shared.u32 %r12, [%r2];
  mul.wide.u32 %rd4, %r9, 32;
  add.s64 %rd4, %rd4, %rd1;
  mul.wide.u32 %rd5, %r0, 4;
  add.s64 %rd4, %rd4, %rd5;
  st.global.u32 [%rd4+32], %r12;
DONE:
  ret;
}
)";
  const size_t words = 8 + 8 * kBlocks + 2 * kAll;
  for (Device* d : {&cpu_, &vulkan_}) {
    SCOPED_TRACE(d == &cpu_ ? "the CPU PTX device" : "Vulkan");
    const std::vector<uint32_t> out = run_on_zeros(*d, ptx, words, kBlocks);
    ASSERT_EQ(out.size(), words);
    EXPECT_EQ(out[0], kAll);  // inc
    const double sum = 1.0 * kAll;
    uint64_t sum_bits;
    std::memcpy(&sum_bits, &sum, 8);
    EXPECT_EQ(out[2] | uint64_t{out[3]} << 32, sum_bits);  // f64 add
    EXPECT_EQ(out[4], 0x60006000u);                        // 512.0 in both f16 halves
    EXPECT_EQ(out[5], 100001u - kAll);                     // dec from 0: 100000, 99999, ...
    EXPECT_EQ(out[6], 0x60006000u);                        // f16x2
    for (uint32_t block = 0; block < kBlocks; ++block) {
      const uint32_t* shared = &out[8 + 8 * block];
      EXPECT_EQ(shared[0], kThreads) << "block " << block;
      EXPECT_EQ(shared[1], float_bits(1.0f * kThreads)) << "block " << block;
      EXPECT_EQ(shared[2], 0x43005800u) << "block " << block;  // bf16 128.0 : f16 128.0
      EXPECT_EQ(shared[3], 0x58005800u) << "block " << block;
      EXPECT_EQ(shared[4], 1001u - kThreads) << "block " << block;
      EXPECT_EQ(shared[5], 0x43004300u) << "block " << block;
    }
    // The old values: each count once.
    std::vector<int> global_seen(kAll, 0), shared_seen(kBlocks * kThreads, 0);
    for (uint32_t t = 0; t < kAll; ++t) {
      const uint32_t global_old = out[8 + 8 * kBlocks + 2 * t];
      const uint32_t shared_old = out[8 + 8 * kBlocks + 2 * t + 1];
      ASSERT_LT(global_old, kAll) << "thread " << t;
      ASSERT_LT(shared_old, kThreads) << "thread " << t;
      ++global_seen[global_old];
      ++shared_seen[(t / kThreads) * kThreads + shared_old];
    }
    for (uint32_t i = 0; i < kAll; ++i) {
      EXPECT_EQ(global_seen[i], 1) << "global count " << i;
      EXPECT_EQ(shared_seen[i], 1) << "block " << i / kThreads << " count " << i % kThreads;
    }
  }
}

}  // namespace
