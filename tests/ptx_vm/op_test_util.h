// Helpers for the instruction-semantics tests (integer, float, convert, compare/move, warp):
// running one instruction form over many operand values, one case per thread, and computing
// reference results from the PTX ISA's definitions.
//
// A test describes an instruction form as PTX statements over registers %s0, %s1, ... (the
// sources, loaded per thread from a global buffer) and %d0, %d1, ... (the results, stored per
// thread). Every operand travels in a 64-bit slot: narrow values in the low bits, predicates as
// 0 or 1. The destinations start from the values that follow the sources in a case's row (or
// from a fixed pattern when the row has none), so a lane whose guard is false must keep them.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ptx_vm/half.h"
#include "ptx_vm/vm.h"
#include "vm_test_util.h"

namespace ptx_vm_test {

using Row = std::vector<uint64_t>;

// The initial value of a destination whose row gives none.
inline constexpr uint64_t kUnwritten = 0x5a5a5a5a5a5a5a5aull;

// Bit casts: the interpreter's own (ptx_vm/half.h).
using hal::ptx_vm::bits_double;
using hal::ptx_vm::bits_float;
using hal::ptx_vm::double_bits;
using hal::ptx_vm::float_bits;

// A small deterministic generator for operand values.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint32_t next32() { return static_cast<uint32_t>(next()); }

 private:
  uint64_t state_;
};

// A module that loads and runs on an interpreter of compute capability |sm|.
class OpVm {
 public:
  OpVm() : executor_(2) {}

  bool load(const std::string& ptx, uint32_t sm) {
    hal::ptx_vm::LoadError error;
    hal::ptx_vm::LoadOptions options;
    options.sm = sm;
    program_ = hal::ptx_vm::Program::load(ptx.data(), ptx.size(), options, &error);
    EXPECT_NE(program_, nullptr) << error.log << "\n" << ptx;
    if (program_ == nullptr) return false;
    for (const Range& r : program_->data()) memory_.add(r);
    return true;
  }
  // The load error's log for PTX that must not load.
  static std::string load_error(const std::string& ptx, uint32_t sm = 80) {
    hal::ptx_vm::LoadError error;
    hal::ptx_vm::LoadOptions options;
    options.sm = sm;
    auto program = hal::ptx_vm::Program::load(ptx.data(), ptx.size(), options, &error);
    EXPECT_EQ(program, nullptr) << "the PTX loaded:\n" << ptx;
    return error.log;
  }
  void add_memory(const void* p, size_t bytes) { memory_.add(p, bytes); }

  Fault run(const std::string& kernel, uint32_t grid, uint32_t block, const Params& params) {
    const hal::ptx_vm::Kernel* k = program_ != nullptr ? program_->find(kernel) : nullptr;
    if (k == nullptr) {
      ADD_FAILURE() << "no kernel " << kernel;
      return Fault{FaultKind::kIllegalInstruction, "no kernel"};
    }
    const std::vector<uint8_t> bytes = params.layout(hal::ptx_vm::info(*k));
    hal::ptx_vm::LaunchConfig config;
    config.grid[0] = grid;
    config.block[0] = block;
    config.params = bytes.data();
    config.memory = &memory_;
    return executor_.run(*k, config, nullptr);
  }

 private:
  hal::ptx_vm::Executor executor_;
  std::unique_ptr<hal::ptx_vm::Program> program_;
  TestMemory memory_;
};

// An instruction form to run once per case.
struct OpKernel {
  std::string body;              // PTX statements over %d0.. and %s0..
  std::vector<std::string> dst;  // register types: pred, b16, b32, b64, f32, f64, ...
  std::vector<std::string> src;
  uint32_t sm = 80;
  std::string decls;  // more declarations the body needs
};

inline uint32_t register_bits(const std::string& type) {
  if (type == "pred") return 0;
  const size_t digits = type.find_first_of("0123456789");
  const std::string n = type.substr(digits);
  if (n.find("x2") != std::string::npos) return 2 * std::stoul(n);  // f16x2, bf16x2
  return static_cast<uint32_t>(std::stoul(n));
}

inline std::string op_kernel_ptx(const OpKernel& k) {
  const size_t ns = k.src.size(), nd = k.dst.size();
  std::string p = ".version 8.0\n.target sm_" + std::to_string(k.sm) +
                  "\n.address_size 64\n\n"
                  ".visible .entry op_kernel(.param .u64 p_in, .param .u64 p_out, "
                  ".param .u32 p_n)\n{\n"
                  "  .reg .pred %hq<2>;\n  .reg .b32 %ht<6>;\n  .reg .b64 %ha<6>;\n";
  const auto declare = [&](const std::string& type, const std::string& name) {
    const uint32_t bits = register_bits(type);
    const std::string reg_type = type == "pred"                     ? "pred"
                                 : (type == "f32" || type == "f64") ? type
                                                                    : "b" + std::to_string(bits);
    p += "  .reg ." + reg_type + " " + name + ";\n";
  };
  for (size_t i = 0; i < ns; ++i) declare(k.src[i], "%s" + std::to_string(i));
  for (size_t i = 0; i < nd; ++i) declare(k.dst[i], "%d" + std::to_string(i));
  p += k.decls;
  p +=
      "  ld.param.u64 %ha0, [p_in];\n  ld.param.u64 %ha1, [p_out];\n  ld.param.u32 %ht0, [p_n];\n"
      "  mov.u32 %ht1, %ctaid.x;\n  mov.u32 %ht2, %ntid.x;\n  mov.u32 %ht3, %tid.x;\n"
      "  mad.lo.s32 %ht1, %ht1, %ht2, %ht3;\n  setp.ge.u32 %hq0, %ht1, %ht0;\n  @%hq0 bra $DONE;\n";
  p += "  mul.wide.u32 %ha2, %ht1, " + std::to_string(8 * (ns + nd)) +
       ";\n  add.s64 %ha2, %ha0, %ha2;\n";
  p += "  mul.wide.u32 %ha3, %ht1, " + std::to_string(8 * nd) + ";\n  add.s64 %ha3, %ha1, %ha3;\n";
  const auto load = [&](const std::string& type, const std::string& name, size_t slot) {
    const std::string at = "[%ha2+" + std::to_string(8 * slot) + "]";
    if (type == "pred") {
      p += "  ld.global.u32 %ht4, " + at + ";\n  setp.ne.u32 " + name + ", %ht4, 0;\n";
    } else {
      p += "  ld.global.b" + std::to_string(register_bits(type)) + " " + name + ", " + at + ";\n";
    }
  };
  for (size_t i = 0; i < ns; ++i) load(k.src[i], "%s" + std::to_string(i), i);
  for (size_t i = 0; i < nd; ++i) load(k.dst[i], "%d" + std::to_string(i), ns + i);
  p += k.body;
  p += "\n";
  for (size_t i = 0; i < nd; ++i) {
    const std::string at = "[%ha3+" + std::to_string(8 * i) + "]";
    const std::string name = "%d" + std::to_string(i);
    if (k.dst[i] == "pred") {
      p += "  selp.u32 %ht4, 1, 0, " + name + ";\n  st.global.u32 " + at + ", %ht4;\n";
    } else {
      p += "  st.global.b" + std::to_string(register_bits(k.dst[i])) + " " + at + ", " + name +
           ";\n";
    }
  }
  p += "$DONE:\n  ret;\n}\n";
  return p;
}

// Runs |k| once per row of |in| (sources, then optional initial destination values) and returns
// the destinations per row, each zero-extended to 64 bits. Blocks of |block| threads, so the
// last warp is usually partial.
inline std::vector<Row> run_op(const OpKernel& k, const std::vector<Row>& in, uint32_t block = 96) {
  const size_t ns = k.src.size(), nd = k.dst.size();
  std::vector<Row> out(in.size(), Row(nd, 0));
  if (in.empty()) return out;
  OpVm vm;
  if (!vm.load(op_kernel_ptx(k), k.sm)) return out;
  std::vector<uint64_t> inputs(in.size() * (ns + nd));
  for (size_t c = 0; c < in.size(); ++c) {
    EXPECT_GE(in[c].size(), ns) << "case " << c;
    for (size_t i = 0; i < ns + nd; ++i) {
      uint64_t v = i < in[c].size() ? in[c][i] : kUnwritten;
      if (i >= ns && i >= in[c].size() && k.dst[i - ns] == "pred") v = 0;
      inputs[c * (ns + nd) + i] = v;
    }
  }
  std::vector<uint64_t> outputs(std::max<size_t>(in.size() * nd, 1), 0);
  vm.add_memory(inputs.data(), inputs.size() * 8);
  vm.add_memory(outputs.data(), outputs.size() * 8);
  const uint32_t n = static_cast<uint32_t>(in.size());
  const Fault f = vm.run("op_kernel", (n + block - 1) / block, block,
                         Params()
                             .add(reinterpret_cast<uint64_t>(inputs.data()))
                             .add(reinterpret_cast<uint64_t>(outputs.data()))
                             .add(n));
  EXPECT_RAN(f);
  for (size_t c = 0; c < in.size(); ++c) {
    for (size_t i = 0; i < nd; ++i) out[c][i] = outputs[c * nd + i];
  }
  return out;
}

// Runs a one-result form and returns the results as a column.
inline std::vector<uint64_t> run_column(const OpKernel& k, const std::vector<Row>& in,
                                        uint32_t block = 96) {
  std::vector<uint64_t> col;
  for (const Row& r : run_op(k, in, block)) col.push_back(r.empty() ? 0 : r[0]);
  return col;
}

inline std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

inline std::string row_text(const Row& r) {
  std::string s = "{";
  for (size_t i = 0; i < r.size(); ++i) s += (i ? ", " : "") + hex(r[i]);
  return s + "}";
}

// ===========================================================================================
// Reference rounding, written from IEEE 754's definitions and independent of the interpreter:
// binary formats are searched by their encodings (positive encodings order like their values).
// ===========================================================================================

enum class Rnd { kRn, kRz, kRm, kRp, kRna };

// The modifier's text without its dot: "rn", "rz", ...
inline const char* rnd_name(Rnd r) {
  switch (r) {
    case Rnd::kRn:
      return "rn";
    case Rnd::kRz:
      return "rz";
    case Rnd::kRm:
      return "rm";
    case Rnd::kRp:
      return "rp";
    case Rnd::kRna:
      return "rna";
  }
  return "";
}
// The four IEEE directed and nearest modes every f32/f64 instruction takes.
inline constexpr Rnd kModes[] = {Rnd::kRn, Rnd::kRz, Rnd::kRm, Rnd::kRp};

struct Format {
  int mant;  // fraction bits
  int exp;   // exponent bits
  uint64_t max_finite() const {
    return ((uint64_t{1} << (mant + exp)) - 1) - (uint64_t{1} << mant);
  }
  uint64_t inf() const { return ((uint64_t{1} << exp) - 1) << mant; }
  uint64_t sign() const { return uint64_t{1} << (mant + exp); }
  // The value of a positive finite encoding.
  double value(uint64_t e) const {
    const int bias = (1 << (exp - 1)) - 1;
    const uint64_t field = e >> mant;
    const uint64_t frac = e & ((uint64_t{1} << mant) - 1);
    if (field == 0) return std::ldexp(static_cast<double>(frac), 1 - bias - mant);
    return std::ldexp(static_cast<double>((uint64_t{1} << mant) | frac),
                      static_cast<int>(field) - bias - mant);
  }
};
inline constexpr Format kHalf{10, 5}, kBf16{7, 8}, kTf32{10, 8}, kSingle{23, 8}, kDouble{52, 11};

// Rounds the exact value s + t to |f| in mode |r|, where s is a finite double and t (of sign
// |tail|: -1, 0, +1) is smaller than half an ulp of s. Returns the encoding with its sign;
// overflow gives infinity or the largest finite value as IEEE 754 says.
inline uint64_t ref_round(double s, int tail, Format f, Rnd r) {
  bool neg = std::signbit(s);
  int t = neg ? -tail : tail;  // the tail's sign relative to the magnitude
  if (s == 0) {
    if (tail == 0) return neg ? f.sign() : 0;
    neg = tail < 0;
    t = 1;
  }
  const uint64_t sign = neg ? f.sign() : 0;
  const double a = std::fabs(s);
  // The largest encoding whose value is at most a.
  uint64_t lo_e = 0, hi_e = f.max_finite();
  while (lo_e < hi_e) {
    const uint64_t mid = lo_e + (hi_e - lo_e + 1) / 2;
    if (f.value(mid) <= a) {
      lo_e = mid;
    } else {
      hi_e = mid - 1;
    }
  }
  const bool on_lo = f.value(lo_e) == a;
  if (on_lo && t == 0) return sign | lo_e;
  // The exact magnitude lies strictly between the encodings down_e and up_e.
  uint64_t down_e = lo_e, up_e = lo_e + 1;
  if (on_lo && t < 0) {
    down_e = lo_e - 1;
    up_e = lo_e;
  }
  const double down = f.value(down_e);
  const double up =
      up_e > f.max_finite() ? std::ldexp(1.0, 1 << (f.exp - 1)) : f.value(up_e);  // 2^(emax+1)
  bool take_up = false;
  switch (r) {
    case Rnd::kRz:
      take_up = false;
      break;
    case Rnd::kRm:
      take_up = neg;
      break;
    case Rnd::kRp:
      take_up = !neg;
      break;
    case Rnd::kRn:
    case Rnd::kRna: {
      int cmp = 0;  // the exact magnitude against the midpoint
      if (on_lo) {
        cmp = t > 0 ? -1 : 1;  // just above down, or just below up
      } else {
        const double mid = down + (up - down) / 2;
        cmp = a < mid ? -1 : (a > mid ? 1 : t);
      }
      take_up = cmp > 0 || (cmp == 0 && (r == Rnd::kRna || (up_e & 1) == 0));
      break;
    }
  }
  uint64_t e = take_up ? up_e : down_e;
  if (e > f.max_finite()) e = f.inf();
  return sign | e;
}

// The exact error of a + b (Knuth's TwoSum): a + b == s + err.
inline double two_sum_error(double a, double b, double s) {
  const double bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

inline int sign_of(double v) {
  return v > 0 ? 1 : (v < 0 ? -1 : 0);
}

}  // namespace ptx_vm_test
