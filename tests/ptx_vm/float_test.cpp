// Floating-point arithmetic (ops_float.cpp): f32 and f64 in every rounding mode with .ftz and
// .sat, f16/bf16 and their pairs, min/max with NaNs and signed zeros, testp, copysign, and the
// approximate functions against the error bounds the PTX ISA states.
//
// Exact results are computed from IEEE 754's definition: the exact value (a double plus the sign
// of what rounding to double lost) rounded to the destination format by ref_round.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "op_test_util.h"

namespace ptx_vm_test {
namespace {

constexpr uint32_t kF32CanonicalNaN = 0x7fffffff;
constexpr uint16_t kHalfCanonicalNaN = 0x7fff;

bool is_nan32(uint64_t b) {
  return (b & 0x7fffffffu) > 0x7f800000u;
}
bool is_nan64(uint64_t b) {
  return (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}
bool is_nan_in(uint64_t b, Format f) {
  return ((b & (f.sign() - 1)) & f.inf()) == f.inf() && (b & ((uint64_t{1} << f.mant) - 1)) != 0;
}
bool is_subnormal(uint64_t bits, Format f) {
  const uint64_t mag = bits & (f.sign() - 1);
  return mag != 0 && (mag >> f.mant) == 0;
}
// The value of an encoding of |f| (any, signed), as a double.
double decode(uint64_t bits, Format f) {
  const uint64_t mag = bits & (f.sign() - 1);
  double v;
  if ((mag & f.inf()) == f.inf()) {
    v = (mag & ((uint64_t{1} << f.mant) - 1)) != 0 ? std::numeric_limits<double>::quiet_NaN()
                                                   : std::numeric_limits<double>::infinity();
  } else {
    v = f.value(mag);
  }
  return (bits & f.sign()) != 0 ? -v : v;
}
uint64_t flush_bits(uint64_t bits, Format f) {
  return is_subnormal(bits, f) ? (bits & f.sign()) : bits;
}

// Rounds an exact value given as a double that may be non-finite. |overflow|: s is infinite
// only because the exact value is beyond the double range.
uint64_t ref_round_any(double s, int tail, Format f, Rnd r, bool overflow = false) {
  if (std::isnan(s)) return f.inf() | (uint64_t{1} << (f.mant - 1));  // any NaN
  const uint64_t sign = s < 0 ? f.sign() : 0;
  if (std::isinf(s)) {
    const bool to_inf = !overflow || r == Rnd::kRn || r == Rnd::kRna || (r == Rnd::kRp && s > 0) ||
                        (r == Rnd::kRm && s < 0);
    return sign | (to_inf ? f.inf() : f.max_finite());
  }
  return ref_round(s, tail, f, r);
}

// The sign of an exact zero sum of two values of signs |sa| and |sb| (IEEE 754 6.3).
bool zero_sum_negative(bool sa, bool sb, Rnd r) {
  return sa == sb ? sa : r == Rnd::kRm;
}

enum class Op { kAdd, kSub, kMul, kDiv, kFma };

// The exactly rounded result of a binary operation or fma on |f| (inputs already in double).
uint64_t ref_arith(Op op, double a, double b, double c, Format f, Rnd r) {
  double s = 0;
  int tail = 0;
  switch (op) {
    case Op::kSub:
      b = -b;
      [[fallthrough]];
    case Op::kAdd:
      s = a + b;
      if (std::isfinite(s)) {
        tail = sign_of(two_sum_error(a, b, s));
        if (s == 0 && tail == 0) {
          return zero_sum_negative(std::signbit(a), std::signbit(b), r) ? f.sign() : 0;
        }
      }
      break;
    case Op::kMul:
      s = a * b;
      if (std::isfinite(s) && s != 0) tail = sign_of(std::fma(a, b, -s));
      break;
    case Op::kDiv:
      s = a / b;
      if (std::isfinite(s) && s != 0) tail = sign_of(std::fma(-s, b, a)) * (b < 0 ? -1 : 1);
      break;
    case Op::kFma: {
      const double p = a * b;  // exact in every use below (narrow formats or short mantissas)
      EXPECT_TRUE(!std::isfinite(p) || std::fma(a, b, -p) == 0) << "inexact product in the test";
      s = p + c;
      if (std::isfinite(s)) {
        tail = sign_of(two_sum_error(p, c, s));
        if (s == 0 && tail == 0) {
          return zero_sum_negative(std::signbit(p), std::signbit(c), r) ? f.sign() : 0;
        }
      }
      break;
    }
  }
  const bool overflow = std::isinf(s) && std::isfinite(a) && std::isfinite(b) && std::isfinite(c) &&
                        !(op == Op::kDiv && b == 0);
  return ref_round_any(s, tail, f, r, overflow);
}

// Operand values: the specials and the boundaries of |f|, and random encodings.
std::vector<uint64_t> float_values(Format f, int random, uint64_t seed) {
  const uint64_t one = ((uint64_t{1} << (f.exp - 1)) - 1) << f.mant;
  const uint64_t min_normal = uint64_t{1} << f.mant;
  std::vector<uint64_t> mags = {0,
                                1,
                                2,
                                min_normal - 1,
                                min_normal,
                                min_normal + 1,
                                one,
                                one + 1,
                                one - 1,
                                one + (uint64_t{1} << (f.mant - 1)),  // 1.5
                                one + (uint64_t{1} << f.mant),        // 2
                                f.max_finite(),
                                f.max_finite() - 1,
                                f.inf(),
                                f.inf() | 1,
                                f.inf() | (uint64_t{1} << (f.mant - 1))};
  Rng rng(seed);
  for (int i = 0; i < random; ++i) mags.push_back(rng.next() % f.inf());
  // A band of values near 1 whose sums and products round in every way.
  for (int i = 0; i < random / 2; ++i) mags.push_back(one - 64 + rng.next() % 256);
  std::vector<uint64_t> v;
  for (uint64_t m : mags) {
    v.push_back(m);
    v.push_back(m | f.sign());
  }
  return v;
}

std::vector<Row> float_pairs(const std::vector<uint64_t>& v) {
  std::vector<Row> rows;
  for (uint64_t a : v) {
    for (uint64_t b : v) rows.push_back({a, b});
  }
  return rows;
}

// Compares results bit for bit; a NaN matches any NaN unless |exact_nan|.
void expect_results(const std::string& what, const std::vector<Row>& cases,
                    const std::vector<uint64_t>& got, const std::vector<uint64_t>& want, Format f,
                    bool exact_nan = false) {
  int reported = 0;
  for (size_t i = 0; i < cases.size() && i < got.size(); ++i) {
    const bool both_nan = is_nan_in(got[i], f) && is_nan_in(want[i], f);
    if (got[i] == want[i] || (both_nan && !exact_nan)) continue;
    if (reported++ < 8) {
      ADD_FAILURE() << what << " " << row_text(cases[i]) << ": got " << hex(got[i]) << ", want "
                    << hex(want[i]);
    }
  }
}

// ---- f32 and f64 arithmetic ------------------------------------------------------------------

struct Flags {
  bool ftz = false;
  bool sat = false;
};

uint64_t finish_f32(uint64_t bits, Flags fl) {
  if (fl.ftz) bits = flush_bits(bits, kSingle);
  if (fl.sat) {
    if (is_nan32(bits) || (bits & 0x80000000u) != 0) return 0;  // NaN and negatives (and -0)
    if (bits > 0x3f800000u) return 0x3f800000u;
  }
  return bits;
}

TEST(PtxVmFloat, F32AddSubMulInEveryModeWithFtzAndSat) {
  const auto v = float_values(kSingle, 14, 1);
  const auto rows = float_pairs(v);
  const struct {
    const char* name;
    Op op;
  } ops[] = {{"add", Op::kAdd}, {"sub", Op::kSub}, {"mul", Op::kMul}};
  for (const auto& o : ops) {
    for (Rnd r : kModes) {
      for (Flags fl :
           {Flags{false, false}, Flags{true, false}, Flags{false, true}, Flags{true, true}}) {
        const std::string ins = std::string(o.name) + "." + rnd_name(r) + (fl.ftz ? ".ftz" : "") +
                                (fl.sat ? ".sat" : "") + ".f32";
        const auto got =
            run_column(OpKernel{"  " + ins + " %d0, %s0, %s1;", {"f32"}, {"f32", "f32"}}, rows);
        std::vector<uint64_t> want;
        for (const Row& c : rows) {
          uint64_t a = c[0], b = c[1];
          if (fl.ftz) {
            a = flush_bits(a, kSingle);
            b = flush_bits(b, kSingle);
          }
          want.push_back(finish_f32(
              ref_arith(o.op, decode(a, kSingle), decode(b, kSingle), 0, kSingle, r), fl));
        }
        expect_results(ins, rows, got, want, kSingle);
      }
    }
  }
  // Without a rounding modifier: .rn.
  const auto got = run_column(OpKernel{"  add.f32 %d0, %s0, %s1;", {"f32"}, {"f32", "f32"}}, rows);
  std::vector<uint64_t> want;
  for (const Row& c : rows) {
    want.push_back(
        ref_arith(Op::kAdd, decode(c[0], kSingle), decode(c[1], kSingle), 0, kSingle, Rnd::kRn));
  }
  expect_results("add.f32", rows, got, want, kSingle);
}

TEST(PtxVmFloat, F32FmaInEveryMode) {
  const auto v = float_values(kSingle, 8, 2);
  std::vector<Row> rows;
  Rng rng(2);
  for (uint64_t a : v) {
    for (uint64_t b : v) rows.push_back({a, b, v[rng.next() % v.size()]});
  }
  // c cancelling most of a * b.
  for (int i = 0; i < 300; ++i) {
    const float a = 1.0f + static_cast<float>(rng.next() % 4096) / 4096.0f;
    const float b = 1.0f + static_cast<float>(rng.next() % 4096) / 4096.0f;
    const float c =
        -(a * b) * (1.0f + static_cast<float>(static_cast<int>(rng.next() % 16) - 8) * 0x1p-23f);
    rows.push_back({float_bits(a), float_bits(b), float_bits(c)});
  }
  for (Rnd r : kModes) {
    for (Flags fl : {Flags{false, false}, Flags{true, false}, Flags{false, true}}) {
      for (const char* name : {"fma", "mad"}) {
        const std::string ins = std::string(name) + "." + rnd_name(r) + (fl.ftz ? ".ftz" : "") +
                                (fl.sat ? ".sat" : "") + ".f32";
        const auto got = run_column(
            OpKernel{"  " + ins + " %d0, %s0, %s1, %s2;", {"f32"}, {"f32", "f32", "f32"}}, rows);
        std::vector<uint64_t> want;
        for (const Row& c : rows) {
          uint64_t a = c[0], b = c[1], cc = c[2];
          if (fl.ftz) {
            a = flush_bits(a, kSingle);
            b = flush_bits(b, kSingle);
            cc = flush_bits(cc, kSingle);
          }
          want.push_back(finish_f32(ref_arith(Op::kFma, decode(a, kSingle), decode(b, kSingle),
                                              decode(cc, kSingle), kSingle, r),
                                    fl));
        }
        expect_results(ins, rows, got, want, kSingle);
      }
    }
  }
}

TEST(PtxVmFloat, F32DivRcpSqrtInEveryMode) {
  const auto v = float_values(kSingle, 14, 3);
  const auto rows = float_pairs(v);
  std::vector<Row> ones;
  for (uint64_t a : v) ones.push_back({a});
  Rng rng(3);
  for (int i = 0; i < 300; ++i) ones.push_back({rng.next32() & 0x7fffffff});
  for (Rnd r : kModes) {
    for (bool ftz : {false, true}) {
      const std::string suffix = std::string(".") + rnd_name(r) + (ftz ? ".ftz" : "") + ".f32";
      const auto flushed = [&](uint64_t x) { return ftz ? flush_bits(x, kSingle) : x; };
      const auto div =
          run_column(OpKernel{"  div" + suffix + " %d0, %s0, %s1;", {"f32"}, {"f32", "f32"}}, rows);
      std::vector<uint64_t> want;
      for (const Row& c : rows) {
        want.push_back(finish_f32(ref_arith(Op::kDiv, decode(flushed(c[0]), kSingle),
                                            decode(flushed(c[1]), kSingle), 0, kSingle, r),
                                  Flags{ftz, false}));
      }
      expect_results("div" + suffix, rows, div, want, kSingle);
      const auto rcp =
          run_column(OpKernel{"  rcp" + suffix + " %d0, %s0;", {"f32"}, {"f32"}}, ones);
      want.clear();
      for (const Row& c : ones) {
        want.push_back(
            finish_f32(ref_arith(Op::kDiv, 1.0, decode(flushed(c[0]), kSingle), 0, kSingle, r),
                       Flags{ftz, false}));
      }
      expect_results("rcp" + suffix, ones, rcp, want, kSingle);
      const auto sqrt =
          run_column(OpKernel{"  sqrt" + suffix + " %d0, %s0;", {"f32"}, {"f32"}}, ones);
      want.clear();
      for (const Row& c : ones) {
        const double a = decode(flushed(c[0]), kSingle);
        const double s = std::sqrt(a);
        const int tail = std::isfinite(s) && s > 0 ? sign_of(std::fma(-s, s, a)) : 0;
        want.push_back(finish_f32(ref_round_any(s, tail, kSingle, r), Flags{ftz, false}));
      }
      expect_results("sqrt" + suffix, ones, sqrt, want, kSingle);
    }
  }
}

// f64: exact results where the rounding error is representable (no underflow).
TEST(PtxVmFloat, F64ArithmeticInEveryMode) {
  Rng rng(4);
  std::vector<uint64_t> v = {0,
                             0x8000000000000000ull,
                             double_bits(1.0),
                             double_bits(-1.0),
                             double_bits(1.5),
                             double_bits(3.0),
                             0x7ff0000000000000ull,
                             0xfff0000000000000ull,
                             0x7ff8000000000001ull,
                             0x7fefffffffffffffull,
                             0x0010000000000000ull,
                             double_bits(1.0 + 0x1p-52),
                             double_bits(0x1p-1000)};
  for (int i = 0; i < 16; ++i) {
    const double m = 1.0 + static_cast<double>(rng.next() >> 12) * 0x1p-52;
    v.push_back(
        double_bits(std::ldexp(rng.next() & 1 ? -m : m, static_cast<int>(rng.next() % 80) - 40)));
  }
  const auto rows = float_pairs(v);
  std::vector<Row> ones;
  for (uint64_t a : v) ones.push_back({a & 0x7fffffffffffffffull});
  // Products exact in double, so a * b + c is known exactly.
  std::vector<Row> fma_rows;
  for (int i = 0; i < 400; ++i) {
    const double a = std::ldexp(static_cast<double>((rng.next() >> 38) | 1), -20);
    const double b =
        std::ldexp(static_cast<double>((rng.next() >> 38) | 1), -30) * (rng.next() & 1 ? -1 : 1);
    const double c = i % 2 ? -(a * b) * (1 + static_cast<double>(rng.next() % 7) * 0x1p-52)
                           : std::ldexp(static_cast<double>(rng.next() >> 11), -60);
    fma_rows.push_back({double_bits(a), double_bits(b), double_bits(c)});
  }
  fma_rows.push_back({double_bits(2.0), double_bits(3.0), double_bits(-6.0)});
  const struct {
    const char* name;
    Op op;
  } ops[] = {{"add", Op::kAdd}, {"sub", Op::kSub}, {"mul", Op::kMul}, {"div", Op::kDiv}};
  for (Rnd r : kModes) {
    for (const auto& o : ops) {
      const std::string ins = std::string(o.name) + "." + rnd_name(r) + ".f64";
      const auto got =
          run_column(OpKernel{"  " + ins + " %d0, %s0, %s1;", {"f64"}, {"f64", "f64"}}, rows);
      std::vector<uint64_t> want;
      for (const Row& c : rows) {
        want.push_back(ref_arith(o.op, bits_double(c[0]), bits_double(c[1]), 0, kDouble, r));
      }
      // Products and quotients below 2^-1000 round in ways the reference cannot see (their
      // rounding error is not representable): leave them out.
      std::vector<Row> kept;
      std::vector<uint64_t> kept_got, kept_want;
      for (size_t i = 0; i < rows.size(); ++i) {
        const double a = bits_double(rows[i][0]), b = bits_double(rows[i][1]);
        const double exact = o.op == Op::kMul ? a * b : (o.op == Op::kDiv ? a / b : 1.0);
        const bool tiny = (std::fabs(exact) < 0x1p-900 || std::fabs(a) < 0x1p-900) && a != 0 &&
                          std::isfinite(b) && (o.op != Op::kMul || b != 0);
        if (tiny) continue;
        kept.push_back(rows[i]);
        kept_got.push_back(got[i]);
        kept_want.push_back(want[i]);
      }
      expect_results(ins, kept, kept_got, kept_want, kDouble);
    }
    const std::string fma = std::string("fma.") + rnd_name(r) + ".f64";
    const auto got = run_column(
        OpKernel{"  " + fma + " %d0, %s0, %s1, %s2;", {"f64"}, {"f64", "f64", "f64"}}, fma_rows);
    std::vector<uint64_t> want;
    for (const Row& c : fma_rows) {
      want.push_back(
          ref_arith(Op::kFma, bits_double(c[0]), bits_double(c[1]), bits_double(c[2]), kDouble, r));
    }
    expect_results(fma, fma_rows, got, want, kDouble);
    const std::string sq = std::string("sqrt.") + rnd_name(r) + ".f64";
    const auto sqrt = run_column(OpKernel{"  " + sq + " %d0, %s0;", {"f64"}, {"f64"}}, ones);
    want.clear();
    for (const Row& c : ones) {
      const double a = bits_double(c[0]);
      const double s = std::sqrt(a);
      const int tail = std::isfinite(s) && s > 0 ? sign_of(std::fma(-s, s, a)) : 0;
      want.push_back(ref_round_any(s, tail, kDouble, r));
    }
    expect_results(sq, ones, sqrt, want, kDouble);
  }
  // A general fma against the host's correctly rounded one.
  std::vector<Row> general;
  for (int i = 0; i < 300; ++i) general.push_back({rng.next(), rng.next(), rng.next()});
  const auto got = run_column(
      OpKernel{"  fma.rn.f64 %d0, %s0, %s1, %s2;", {"f64"}, {"f64", "f64", "f64"}}, general);
  std::vector<uint64_t> want;
  for (const Row& c : general) {
    want.push_back(double_bits(std::fma(bits_double(c[0]), bits_double(c[1]), bits_double(c[2]))));
  }
  expect_results("fma.rn.f64", general, got, want, kDouble);
}

// ---- min, max, abs, neg, copysign, testp ------------------------------------------------------

uint64_t ref_minmax(bool is_max, bool nan_mode, uint64_t a, uint64_t b, Format f,
                    uint64_t canonical) {
  const bool na = is_nan_in(a, f), nb = is_nan_in(b, f);
  if (na && nb) return canonical;
  if (nan_mode && (na || nb)) return canonical;
  if (na) return b;
  if (nb) return a;
  const double x = decode(a, f), y = decode(b, f);
  if (x == y) {  // -0 < +0
    const bool a_neg = (a & f.sign()) != 0;
    return (is_max ? !a_neg : a_neg) ? a : b;
  }
  return (is_max ? x > y : x < y) ? a : b;
}

TEST(PtxVmFloat, MinMaxWithNaNsAndSignedZeros) {
  struct Type {
    const char* name;
    Format f;
    uint64_t canonical;
    std::string reg;
  };
  const Type types[] = {{"f32", kSingle, kF32CanonicalNaN, "f32"},
                        {"f64", kDouble, 0x7fffffffffffffffull, "f64"},
                        {"f16", kHalf, kHalfCanonicalNaN, "b16"},
                        {"bf16", kBf16, kHalfCanonicalNaN, "b16"}};
  for (const Type& t : types) {
    const auto v = float_values(t.f, 6, 5);
    const auto rows = float_pairs(v);
    for (bool is_max : {false, true}) {
      for (bool nan_mode : {false, true}) {
        if (nan_mode && t.f.exp == 11) continue;  // no min.NaN.f64
        for (bool ftz : {false, true}) {
          if (ftz && (t.f.exp == 11 || t.f.mant == 7)) continue;  // .ftz: f32 and f16 only
          const std::string ins = std::string(is_max ? "max" : "min") + (ftz ? ".ftz" : "") +
                                  (nan_mode ? ".NaN" : "") + "." + t.name;
          const auto got = run_column(
              OpKernel{"  " + ins + " %d0, %s0, %s1;", {t.reg}, {t.reg, t.reg}, 80}, rows);
          std::vector<uint64_t> want;
          for (const Row& c : rows) {
            const uint64_t a = ftz ? flush_bits(c[0], t.f) : c[0];
            const uint64_t b = ftz ? flush_bits(c[1], t.f) : c[1];
            want.push_back(ref_minmax(is_max, nan_mode, a, b, t.f, t.canonical));
          }
          // Canonical NaNs where the ISA names them (.NaN); any NaN when both inputs are NaN.
          expect_results(ins, rows, got, want, t.f, false);
          if (nan_mode) {
            for (size_t i = 0; i < rows.size(); ++i) {
              if (is_nan_in(want[i], t.f)) {
                ASSERT_EQ(got[i], t.canonical) << ins << " " << i;
              }
            }
          }
        }
      }
    }
  }
  // Pairs: each half on its own.
  const auto pair_rows = std::vector<Row>{
      {0x7e008000, 0x00003c00}, {0xfc00bc00, 0x7c000000}, {0x80000000, 0x00008000}};
  const auto both = run_op(OpKernel{"  min.NaN.f16x2 %d0, %s0, %s1;\n  max.bf16x2 %d1, %s0, %s1;",
                                    {"b32", "b32"},
                                    {"b32", "b32"}},
                           pair_rows);
  for (size_t i = 0; i < pair_rows.size(); ++i) {
    uint64_t want_min = 0, want_max = 0;
    for (int h = 0; h < 2; ++h) {
      const uint64_t a = (pair_rows[i][0] >> (16 * h)) & 0xffff;
      const uint64_t b = (pair_rows[i][1] >> (16 * h)) & 0xffff;
      want_min |= ref_minmax(false, true, a, b, kHalf, kHalfCanonicalNaN) << (16 * h);
      want_max |= ref_minmax(true, false, a, b, kBf16, kHalfCanonicalNaN) << (16 * h);
    }
    EXPECT_EQ(both[i][0], want_min) << i;
    EXPECT_EQ(both[i][1], want_max) << i;
  }
}

TEST(PtxVmFloat, AbsNegCopysign) {
  const auto v32 = float_values(kSingle, 10, 6);
  std::vector<Row> ones, pairs;
  for (uint64_t a : v32) ones.push_back({a});
  for (uint64_t a : v32) pairs.push_back({a, v32[(a * 7) % v32.size()]});
  for (bool ftz : {false, true}) {
    const std::string m = ftz ? ".ftz" : "";
    const auto got = run_op(
        OpKernel{
            "  abs" + m + ".f32 %d0, %s0;\n  neg" + m + ".f32 %d1, %s0;", {"f32", "f32"}, {"f32"}},
        ones);
    for (size_t i = 0; i < ones.size(); ++i) {
      const uint64_t a = ftz ? flush_bits(ones[i][0], kSingle) : ones[i][0];
      if (is_nan32(a)) {  // NaN input: an unspecified NaN
        EXPECT_TRUE(is_nan32(got[i][0]) && is_nan32(got[i][1])) << hex(a);
        continue;
      }
      EXPECT_EQ(got[i][0], a & 0x7fffffff) << "abs" << m << " " << hex(a);
      EXPECT_EQ(got[i][1], a ^ 0x80000000) << "neg" << m << " " << hex(a);
    }
  }
  const auto cs =
      run_column(OpKernel{"  copysign.f32 %d0, %s0, %s1;", {"f32"}, {"f32", "f32"}}, pairs);
  for (size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(cs[i], (pairs[i][0] & 0x80000000) | (pairs[i][1] & 0x7fffffff)) << row_text(pairs[i]);
  }
  // f64: abs passes NaNs through unchanged; copysign is a bit operation.
  const std::vector<Row> d = {{0},
                              {0x8000000000000000ull},
                              {double_bits(-2.5)},
                              {0xfff8000000000123ull},
                              {0x7ff0000000000000ull},
                              {1}};
  const auto got = run_op(
      OpKernel{
          "  abs.f64 %d0, %s0;\n  neg.f64 %d1, %s0;\n  copysign.f64 %d2, %s0, 0d3ff0000000000000;",
          {"f64", "f64", "f64"},
          {"f64"}},
      d);
  for (size_t i = 0; i < d.size(); ++i) {
    const uint64_t a = d[i][0];
    EXPECT_EQ(got[i][0], is_nan64(a) ? a : a & 0x7fffffffffffffffull) << hex(a);
    if (!is_nan64(a)) {
      EXPECT_EQ(got[i][1], a ^ 0x8000000000000000ull) << hex(a);
    }
    EXPECT_EQ(got[i][2], (a & 0x8000000000000000ull) | double_bits(1.0)) << hex(a);
  }
  // Halves.
  const std::vector<Row> h = {{0x3c00}, {0xbc00}, {0x8000}, {0x0001}, {0xfc00}};
  const auto hg = run_op(OpKernel{"  abs.f16 %d0, %s0;\n  neg.f16 %d1, %s0;\n"
                                  "  abs.bf16 %d2, %s0;\n  neg.bf16 %d3, %s0;",
                                  {"b16", "b16", "b16", "b16"},
                                  {"b16"},
                                  90},
                         h);
  for (size_t i = 0; i < h.size(); ++i) {
    EXPECT_EQ(hg[i][0], h[i][0] & 0x7fff);
    EXPECT_EQ(hg[i][1], h[i][0] ^ 0x8000);
    EXPECT_EQ(hg[i][2], h[i][0] & 0x7fff);
    EXPECT_EQ(hg[i][3], h[i][0] ^ 0x8000);
  }
}

// min/max.xorsign.abs: the smaller or larger magnitude, with the XOR of the signs.
TEST(PtxVmFloat, MinMaxXorsignAbs) {
  const auto v = float_values(kSingle, 4, 13);
  const auto rows = float_pairs(v);
  const auto got = run_op(OpKernel{"  min.xorsign.abs.f32 %d0, %s0, %s1;\n"
                                   "  max.NaN.xorsign.abs.f32 %d1, %s0, %s1;",
                                   {"f32", "f32"},
                                   {"f32", "f32"},
                                   86},
                          rows);
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint64_t sign = (rows[i][0] ^ rows[i][1]) & 0x80000000u;
    const uint64_t a = rows[i][0] & 0x7fffffff, b = rows[i][1] & 0x7fffffff;
    uint64_t lo = ref_minmax(false, false, a, b, kSingle, kF32CanonicalNaN);
    uint64_t hi = ref_minmax(true, true, a, b, kSingle, kF32CanonicalNaN);
    if (!is_nan32(lo)) lo |= sign;
    if (!is_nan32(hi)) hi |= sign;
    EXPECT_TRUE(got[i][0] == lo || (is_nan32(lo) && is_nan32(got[i][0])))
        << row_text(rows[i]) << " got " << hex(got[i][0]) << " want " << hex(lo);
    EXPECT_EQ(got[i][1], hi) << row_text(rows[i]);
  }
  const auto h = run_op(OpKernel{"  min.xorsign.abs.f16x2 %d0, %s0, %s1;\n"
                                 "  mov.b32 {%t0, _}, %s0;\n  mov.b32 {%t1, _}, %s1;\n"
                                 "  max.xorsign.abs.bf16 %d1, %t0, %t1;",
                                 {"b32", "b16"},
                                 {"b32", "b32"},
                                 90,
                                 "  .reg .b16 %t<2>;\n"},
                        {{0xc0003c00, 0x3c00c400}});
  EXPECT_EQ(h[0], (Row{0xbc00bc00, 0xc400}));
}

// Immediates as operands, and lanes whose guard is false keep their destination.
TEST(PtxVmFloat, ImmediatesAndGuards) {
  std::vector<Row> rows;
  for (uint64_t i = 0; i < 70; ++i) {
    rows.push_back({float_bits(static_cast<float>(i) - 20.5f),
                    double_bits(static_cast<double>(i) / 4), i % 3 == 0, 0x12345678,
                    0x1234567812345678ull});
  }
  const auto got = run_op(OpKernel{"  add.f32 %t0, %s0, 0f3f800000;\n  mul.f32 %t1, %s0, 2.0;\n"
                                   "  @%s2 add.f32 %d0, %t0, %t1;\n"
                                   "  @!%s2 fma.rn.f64 %d1, %s1, 0d4000000000000000, 1.0;",
                                   {"f32", "f64"},
                                   {"f32", "f64", "pred"},
                                   80,
                                   "  .reg .f32 %t<2>;\n"},
                          rows);
  for (size_t i = 0; i < rows.size(); ++i) {
    const float a = bits_float(rows[i][0]);
    const double b = bits_double(rows[i][1]);
    EXPECT_EQ(got[i][0], rows[i][2] ? float_bits((a + 1.0f) + a * 2.0f) : 0x12345678u) << i;
    EXPECT_EQ(got[i][1], !rows[i][2] ? double_bits(b * 2 + 1) : 0x1234567812345678ull) << i;
  }
}

// testp: zeros count as normal numbers.
TEST(PtxVmFloat, TestpProperties) {
  for (const Format& f : {kSingle, kDouble}) {
    const bool is64 = f.exp == 11;
    const auto v = float_values(f, 6, 7);
    std::vector<Row> rows;
    for (uint64_t a : v) rows.push_back({a});
    const std::string t = is64 ? "f64" : "f32";
    const auto got =
        run_op(OpKernel{"  testp.finite." + t + " %d0, %s0;\n  testp.infinite." + t +
                            " %d1, %s0;\n  testp.number." + t + " %d2, %s0;\n  testp.notanumber." +
                            t + " %d3, %s0;\n  testp.normal." + t +
                            " %d4, %s0;\n  testp.subnormal." + t + " %d5, %s0;",
                        {"pred", "pred", "pred", "pred", "pred", "pred"},
                        {t}},
               rows);
    for (size_t i = 0; i < rows.size(); ++i) {
      const uint64_t a = rows[i][0];
      const uint64_t mag = a & (f.sign() - 1);
      const bool nan = mag > f.inf(), inf = mag == f.inf(), sub = is_subnormal(a, f);
      const Row want = {!nan && !inf, inf, !nan, nan, !nan && !inf && !sub, sub};
      EXPECT_EQ(got[i], want) << t << " " << hex(a);
    }
  }
}

// ---- half precision ---------------------------------------------------------------------------

uint64_t finish_half(uint64_t bits, Format f, bool ftz, bool sat, bool relu) {
  if (ftz) bits = flush_bits(bits, f);
  if (sat) {
    if (is_nan_in(bits, f) || (bits & f.sign()) != 0) return 0;
    const uint64_t one = decode(bits, f) > 1.0 ? 1 : 0;
    if (one) return f.mant == 10 ? 0x3c00 : 0x3f80;
  }
  if (relu) {
    if (is_nan_in(bits, f)) return kHalfCanonicalNaN;
    if ((bits & f.sign()) != 0) return 0;
  }
  return bits;
}

TEST(PtxVmFloat, HalfArithmeticAndPairs) {
  struct Type {
    const char* name;
    Format f;
  };
  for (const Type& t : {Type{"f16", kHalf}, Type{"bf16", kBf16}}) {
    const bool bf = t.f.mant == 7;
    const auto v = float_values(t.f, 20, 8);
    const auto rows = float_pairs(v);
    const struct {
      const char* name;
      Op op;
    } ops[] = {{"add", Op::kAdd}, {"sub", Op::kSub}, {"mul", Op::kMul}};
    for (const auto& o : ops) {
      for (bool ftz : {false, true}) {
        for (bool sat : {false, true}) {
          if (bf && (ftz || sat)) continue;  // bf16 arithmetic has neither
          const std::string ins = std::string(o.name) + (bf ? ".rn" : "") + (ftz ? ".ftz" : "") +
                                  (sat ? ".sat" : "") + "." + t.name;
          const auto got = run_column(
              OpKernel{"  " + ins + " %d0, %s0, %s1;", {"b16"}, {"b16", "b16"}, 90}, rows);
          std::vector<uint64_t> want;
          for (const Row& c : rows) {
            const uint64_t a = ftz ? flush_bits(c[0], t.f) : c[0];
            const uint64_t b = ftz ? flush_bits(c[1], t.f) : c[1];
            want.push_back(
                finish_half(ref_arith(o.op, decode(a, t.f), decode(b, t.f), 0, t.f, Rnd::kRn), t.f,
                            ftz, sat, false));
          }
          expect_results(ins, rows, got, want, t.f);
        }
      }
    }
    // fma, including c that cancels a * b and products far from c.
    std::vector<Row> fma_rows;
    Rng rng(9);
    for (int i = 0; i < 3000; ++i) {
      fma_rows.push_back(
          {v[rng.next() % v.size()], v[rng.next() % v.size()], v[rng.next() % v.size()]});
    }
    for (int i = 0; i < 3000; ++i) {
      const uint64_t one = bf ? 0x3f80 : 0x3c00;
      const uint64_t a = one + rng.next() % 128, b = one + rng.next() % 128;
      const uint64_t c = (rng.next() & 1 ? t.f.sign() : 0) |
                         (rng.next() % 4 ? one + rng.next() % 256 : rng.next() % (one - 0x400));
      fma_rows.push_back({a, b, c});
    }
    for (bool ftz : {false, true}) {
      for (int sat_relu = 0; sat_relu < 3; ++sat_relu) {
        const bool sat = sat_relu == 1, relu = sat_relu == 2;
        if (bf && (ftz || sat)) continue;
        const std::string ins = std::string("fma.rn") + (ftz ? ".ftz" : "") + (sat ? ".sat" : "") +
                                (relu ? ".relu" : "") + "." + t.name;
        const auto got = run_column(
            OpKernel{"  " + ins + " %d0, %s0, %s1, %s2;", {"b16"}, {"b16", "b16", "b16"}, 90},
            fma_rows);
        std::vector<uint64_t> want;
        for (const Row& c : fma_rows) {
          const uint64_t a = ftz ? flush_bits(c[0], t.f) : c[0];
          const uint64_t b = ftz ? flush_bits(c[1], t.f) : c[1];
          const uint64_t cc = ftz ? flush_bits(c[2], t.f) : c[2];
          want.push_back(finish_half(
              ref_arith(Op::kFma, decode(a, t.f), decode(b, t.f), decode(cc, t.f), t.f, Rnd::kRn),
              t.f, ftz, sat, relu));
        }
        expect_results(ins, fma_rows, got, want, t.f, relu);
      }
    }
    // Pairs: the halves of a .x2 operation are independent.
    std::vector<Row> pair_rows;
    for (size_t i = 0; i + 1 < fma_rows.size() && pair_rows.size() < 500; i += 2) {
      pair_rows.push_back({fma_rows[i][0] | (fma_rows[i + 1][0] << 16),
                           fma_rows[i][1] | (fma_rows[i + 1][1] << 16),
                           fma_rows[i][2] | (fma_rows[i + 1][2] << 16)});
    }
    const std::string x2 = std::string(t.name) + "x2";
    const auto got = run_op(OpKernel{"  add.rn." + x2 + " %d0, %s0, %s1;\n  mul.rn." + x2 +
                                         " %d1, %s0, %s1;\n  fma.rn." + x2 + " %d2, %s0, %s1, %s2;",
                                     {"b32", "b32", "b32"},
                                     {"b32", "b32", "b32"},
                                     90},
                            pair_rows);
    for (size_t i = 0; i < pair_rows.size(); ++i) {
      Row want(3, 0);
      for (int h = 0; h < 2; ++h) {
        const double a = decode((pair_rows[i][0] >> (16 * h)) & 0xffff, t.f);
        const double b = decode((pair_rows[i][1] >> (16 * h)) & 0xffff, t.f);
        const double c = decode((pair_rows[i][2] >> (16 * h)) & 0xffff, t.f);
        want[0] |= ref_arith(Op::kAdd, a, b, 0, t.f, Rnd::kRn) << (16 * h);
        want[1] |= ref_arith(Op::kMul, a, b, 0, t.f, Rnd::kRn) << (16 * h);
        want[2] |= ref_arith(Op::kFma, a, b, c, t.f, Rnd::kRn) << (16 * h);
      }
      for (int k = 0; k < 3; ++k) {
        const bool nan_ok = is_nan_in(want[k] & 0xffff, t.f) || is_nan_in(want[k] >> 16, t.f);
        if (!nan_ok) {
          EXPECT_EQ(got[i][k], want[k]) << x2 << " op " << k << " " << row_text(pair_rows[i]);
        }
      }
    }
  }
}

// ---- approximate functions ------------------------------------------------------------------

double ulp32(double x) {
  const double a = std::fabs(x);
  if (a < 0x1p-126) return 0x1p-149;
  int e = 0;
  std::frexp(a, &e);
  return std::ldexp(1.0, e - 24);
}

TEST(PtxVmFloat, ApproximateFunctionsSpecialValues) {
  const uint32_t pinf = 0x7f800000, ninf = 0xff800000, pz = 0, nz = 0x80000000, nan = 0x7fc00000,
                 mone = 0xbf800000;
  const std::vector<Row> rows = {{ninf}, {nz}, {pz}, {pinf}, {nan}, {mone}};
  const auto got = run_op(OpKernel{"  sin.approx.f32 %d0, %s0;\n  cos.approx.f32 %d1, %s0;\n"
                                   "  lg2.approx.f32 %d2, %s0;\n  ex2.approx.f32 %d3, %s0;\n"
                                   "  tanh.approx.f32 %d4, %s0;\n  rsqrt.approx.f32 %d5, %s0;\n"
                                   "  sqrt.approx.f32 %d6, %s0;\n  rcp.approx.f32 %d7, %s0;",
                                   {"f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32"},
                                   {"f32"}},
                          rows);
  const uint32_t N = 0xffffffff;  // any NaN
  const uint32_t one = 0x3f800000, mone_ = 0xbf800000;
  // Columns: sin cos lg2 ex2 tanh rsqrt sqrt rcp, per the ISA's tables.
  const uint32_t want[6][8] = {
      {N, N, N, pz, mone_, N, N, nz},            // -inf
      {nz, one, ninf, one, nz, ninf, nz, ninf},  // -0
      {pz, one, ninf, one, pz, pinf, pz, pinf},  // +0
      {N, N, pinf, pinf, one, pz, pinf, pz},     // +inf
      {N, N, N, N, N, N, N, N},                  // NaN
      {0, 0, N, 0, 0, N, N, 0},                  // -1: see below
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int k = 0; k < 8; ++k) {
      const uint32_t g = static_cast<uint32_t>(got[i][k]);
      if (want[i][k] == N) {
        EXPECT_TRUE(is_nan32(g)) << "row " << i << " column " << k << ": " << hex(g);
      } else if (i == 5) {
        const double approx[8] = {
            std::sin(-1.0), std::cos(-1.0), 0, 0.5, std::tanh(-1.0), 0, 0, -1.0};
        EXPECT_NEAR(bits_float(g), approx[k], 1e-6) << "column " << k;
      } else {
        EXPECT_EQ(g, want[i][k]) << "row " << i << " column " << k;
      }
    }
  }
}

TEST(PtxVmFloat, ApproximateFunctionsWithinTheirBounds) {
  Rng rng(10);
  std::vector<Row> rows;
  for (int i = 0; i < 2000; ++i) {
    const double x = (static_cast<double>(rng.next() % 2000001) / 1000000.0 - 1.0) * 6.28;
    rows.push_back({float_bits(static_cast<float>(x))});
  }
  for (int i = 0; i < 500; ++i) rows.push_back({rng.next32() & 0x7fffffff});  // positive, any
  const auto got =
      run_op(OpKernel{"  sin.approx.f32 %d0, %s0;\n  cos.approx.f32 %d1, %s0;\n"
                      "  abs.f32 %t0, %s0;\n  lg2.approx.f32 %d2, %t0;\n"
                      "  ex2.approx.ftz.f32 %d3, %s0;\n  tanh.approx.f32 %d4, %s0;\n"
                      "  rsqrt.approx.f32 %d5, %t0;\n  sqrt.approx.f32 %d6, %t0;\n"
                      "  rcp.approx.f32 %d7, %s0;\n  div.approx.f32 %d8, 0f3f800000, %s0;\n"
                      "  div.full.f32 %d9, 0f40490fdb, %s0;",
                      {"f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32"},
                      {"f32"},
                      80,
                      "  .reg .f32 %t0;\n"},
             rows);
  for (size_t i = 0; i < rows.size(); ++i) {
    const float x = bits_float(rows[i][0]);
    const double ax = std::fabs(static_cast<double>(x));
    const auto g = [&](int k) { return static_cast<double>(bits_float(got[i][k])); };
    if (ax <= 2 * M_PI) {
      EXPECT_LE(std::fabs(g(0) - std::sin(static_cast<double>(x))), std::ldexp(1.0, -20)) << x;
      EXPECT_LE(std::fabs(g(1) - std::cos(static_cast<double>(x))), std::ldexp(1.0, -20)) << x;
    }
    if (ax > 0 && std::isfinite(ax)) {
      const double lg = std::log2(ax);
      if (ax > 0.5 && ax < 2) {
        EXPECT_LE(std::fabs(g(2) - lg), 0x1p-22) << x;
      } else {
        EXPECT_LE(std::fabs(g(2) - lg), std::fabs(lg) * 0x1p-22) << x;
      }
      const double rs = 1 / std::sqrt(ax);
      EXPECT_LE(std::fabs(g(5) - rs), rs * 0x1p-22) << x;
      const double sq = std::sqrt(ax);
      EXPECT_LE(std::fabs(g(6) - sq), sq * 0x1p-23) << x;
    }
    const double e2 = std::exp2(static_cast<double>(x));
    if (std::isfinite(e2) && e2 >= 0x1p-126 && e2 < 0x1p127) {
      EXPECT_LE(std::fabs(g(3) - e2), 2 * ulp32(e2)) << x;
    }
    const double th = std::tanh(static_cast<double>(x));
    if (!std::isnan(x)) {
      EXPECT_LE(std::fabs(g(4) - th), std::fabs(th) * 0x1p-11) << x;
    }
    if (x != 0 && std::isfinite(x) && ax < 0x1p126 && ax > 0x1p-126) {
      const double r = 1 / static_cast<double>(x);
      EXPECT_LE(std::fabs(g(7) - r), ulp32(r)) << x;
      EXPECT_LE(std::fabs(g(8) - r), 2 * ulp32(r)) << x;
      const double q = 3.14159274101257324 / static_cast<double>(x);
      EXPECT_LE(std::fabs(g(9) - q), 2 * ulp32(q)) << x;
    }
  }
}

// div.approx.f32: for 2^126 < |b| < 2^128 the result is a signed zero, or NaN for an infinite a.
TEST(PtxVmFloat, DivApproxHugeDivisor) {
  const std::vector<Row> rows = {{float_bits(1.0f), float_bits(0x1.8p126f)},
                                 {float_bits(-3.0f), float_bits(0x1p127f)},
                                 {float_bits(3.0f), float_bits(-0x1.fffffep127f)},
                                 {0x7f800000, float_bits(0x1p127f)},
                                 {float_bits(6.0f), float_bits(2.0f)}};
  const auto got =
      run_column(OpKernel{"  div.approx.f32 %d0, %s0, %s1;", {"f32"}, {"f32", "f32"}}, rows);
  EXPECT_EQ(got[0], 0u);
  EXPECT_EQ(got[1], 0x80000000u);
  EXPECT_EQ(got[2], 0x80000000u);
  EXPECT_TRUE(is_nan32(got[3])) << hex(got[3]);
  EXPECT_EQ(got[4], float_bits(3.0f));
}

// rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64 work on the upper 32 bits of the operand and zero
// the low 32 bits of the result; NaNs become 0x7fffffff00000000; subnormals flush.
TEST(PtxVmFloat, GrossF64Approximations) {
  Rng rng(12);
  std::vector<Row> rows = {{0},
                           {0x8000000000000000ull},
                           {0x7ff0000000000000ull},
                           {0xfff0000000000000ull},
                           {0x7ff8000000000001ull},
                           {1},
                           {0x8000000000000001ull},
                           {double_bits(4.0)},
                           {double_bits(-2.0)}};
  for (int i = 0; i < 300; ++i) rows.push_back({rng.next() & 0x7fdfffffffffffffull});
  const auto got =
      run_op(OpKernel{"  rcp.approx.ftz.f64 %d0, %s0;\n  rsqrt.approx.ftz.f64 %d1, %s0;",
                      {"f64", "f64"},
                      {"f64"}},
             rows);
  const uint64_t pinf = 0x7ff0000000000000ull, ninf = 0xfff0000000000000ull;
  const Row special[] = {{pinf, pinf},
                         {ninf, ninf},
                         {0, 0},
                         {0x8000000000000000ull, 0},
                         {0x7fffffff00000000ull, 0x7fffffff00000000ull},
                         {pinf, pinf},
                         {ninf, ninf},
                         {double_bits(0.25), double_bits(0.5)},
                         {double_bits(-0.5), 0}};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(got[i][0] & 0xffffffff, 0u) << hex(rows[i][0]);
    EXPECT_EQ(got[i][1] & 0xffffffff, 0u) << hex(rows[i][0]);
    if (i < 9) {
      EXPECT_EQ(got[i][0], special[i][0]) << "rcp " << hex(rows[i][0]);
      if (i == 3 || i == 8) {
        EXPECT_TRUE(is_nan64(got[i][1])) << "rsqrt " << hex(rows[i][0]);
      } else {
        EXPECT_EQ(got[i][1], special[i][1]) << "rsqrt " << hex(rows[i][0]);
      }
      continue;
    }
    const double a = bits_double(rows[i][0] & 0xffffffff00000000ull);
    if (std::fpclassify(a) != FP_NORMAL) continue;
    const double r = 1 / a, rs = 1 / std::sqrt(a);
    if (std::fpclassify(r) == FP_NORMAL) {
      EXPECT_LE(std::fabs(bits_double(got[i][0]) - r), std::fabs(r) * 0x1p-19) << a;
    }
    EXPECT_LE(std::fabs(bits_double(got[i][1]) - rs), rs * 0x1p-19) << a;
  }
}

TEST(PtxVmFloat, HalfApproximateFunctions) {
  std::vector<Row> rows;
  for (uint64_t h = 0; h < 0x10000; h += 7) rows.push_back({h});
  const auto got = run_op(OpKernel{"  ex2.approx.f16 %d0, %s0;\n  tanh.approx.f16 %d1, %s0;\n"
                                   "  ex2.approx.ftz.bf16 %d2, %s0;\n  tanh.approx.bf16 %d3, %s0;",
                                   {"b16", "b16", "b16", "b16"},
                                   {"b16"},
                                   90},
                          rows);
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint64_t h = rows[i][0];
    const double x = decode(h, kHalf), y = decode(h, kBf16);
    if (std::isnan(x)) {
      EXPECT_TRUE(is_nan_in(got[i][0], kHalf) && is_nan_in(got[i][1], kHalf)) << hex(h);
    } else {
      const double e = std::exp2(x);
      if (e <= 65504 && e >= 0x1p-14) {
        EXPECT_LE(std::fabs(decode(got[i][0], kHalf) - e), e * std::ldexp(1.0, -9)) << hex(h);
      }
      EXPECT_LE(std::fabs(decode(got[i][1], kHalf) - std::tanh(x)), std::ldexp(1.0, -10)) << hex(h);
    }
    if (std::isnan(y)) {
      EXPECT_TRUE(is_nan_in(got[i][2], kBf16) && is_nan_in(got[i][3], kBf16)) << hex(h);
    } else {
      const double e = std::exp2(is_subnormal(h, kBf16) ? 0.0 : y);
      if (e < 0x1p127 && e >= 0x1p-126) {
        EXPECT_LE(std::fabs(decode(got[i][2], kBf16) - e), e * std::ldexp(1.0, -7)) << hex(h);
      } else if (e < 0x1p-127) {
        EXPECT_EQ(got[i][2], 0u) << hex(h);  // subnormal results flush
      }
      EXPECT_LE(std::fabs(decode(got[i][3], kBf16) - std::tanh(y)), std::ldexp(1.0, -8)) << hex(h);
    }
  }
}

}  // namespace
}  // namespace ptx_vm_test
