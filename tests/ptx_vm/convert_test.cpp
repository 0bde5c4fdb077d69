// cvt (ops_cvt.cpp): integer to integer with and without .sat, float to integer in every integer
// rounding mode (saturating, NaN per the ISA), integer to float and float to float in every
// rounding mode with .ftz, .sat, .relu and .satfinite, f16x2/bf16x2 pairs, tf32, and registers
// wider than the instruction's types.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "op_test_util.h"

namespace ptx_vm_test {
namespace {

// "b<bits>", built by appending: "b" + std::to_string(...) trips GCC 12's -Wrestrict at -O3.
std::string bit_reg(unsigned bits) {
  std::string out = "b";
  out += std::to_string(bits);
  return out;
}

struct IntType {
  const char* name;
  int bits;
  bool is_signed;
};
constexpr IntType kInts[] = {{"u8", 8, false},   {"u16", 16, false}, {"u32", 32, false},
                             {"u64", 64, false}, {"s8", 8, true},    {"s16", 16, true},
                             {"s32", 32, true},  {"s64", 64, true}};

uint64_t mask_of(int bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}
// The value of the low |bits| of |v| as the type reads them.
__int128 int_value(uint64_t v, const IntType& t) {
  v &= mask_of(t.bits);
  if (t.is_signed && t.bits < 64 && ((v >> (t.bits - 1)) & 1))
    return static_cast<__int128>(v) - (__int128{1} << t.bits);
  if (t.is_signed && t.bits == 64) return static_cast<int64_t>(v);
  return v;
}
__int128 int_min(const IntType& t) {
  return t.is_signed ? -(__int128{1} << (t.bits - 1)) : 0;
}
__int128 int_max(const IntType& t) {
  return t.is_signed ? (__int128{1} << (t.bits - 1)) - 1 : (__int128{1} << t.bits) - 1;
}
// |value| (within the type's range or wrapped) in a register of |reg_bits|: sign-extended for
// signed types, zero-extended otherwise.
uint64_t in_register(__int128 value, const IntType& t, int reg_bits) {
  uint64_t v = static_cast<uint64_t>(value) & mask_of(t.bits);
  if (t.is_signed && t.bits < 64 && ((v >> (t.bits - 1)) & 1)) v |= ~mask_of(t.bits);
  return v & mask_of(reg_bits);
}

std::vector<uint64_t> int_sources(uint64_t seed) {
  std::vector<uint64_t> v = {0,
                             1,
                             2,
                             0x7f,
                             0x80,
                             0x81,
                             0xff,
                             0x100,
                             0x7fff,
                             0x8000,
                             0xffff,
                             0x10000,
                             0x7fffffff,
                             0x80000000,
                             0xffffffff,
                             0x100000000ull,
                             0x7fffffffffffffffull,
                             0x8000000000000000ull,
                             ~uint64_t{0},
                             0xfffffffffffffffeull,
                             0xffffffff80000000ull,
                             0xffffffffffff8000ull,
                             0xffffffffffffff80ull,
                             0x123456789abcdef0ull};
  Rng rng(seed);
  for (int i = 0; i < 40; ++i) v.push_back(rng.next() >> (rng.next() % 64));
  return v;
}

void expect_column(const std::string& what, const std::vector<Row>& cases,
                   const std::vector<uint64_t>& got, const std::function<uint64_t(const Row&)>& ref,
                   const std::function<bool(uint64_t, uint64_t)>& same = nullptr) {
  int reported = 0;
  for (size_t i = 0; i < cases.size() && i < got.size(); ++i) {
    const uint64_t want = ref(cases[i]);
    const bool ok = same ? same(got[i], want) : got[i] == want;
    if (!ok && reported++ < 8) {
      ADD_FAILURE() << what << " " << row_text(cases[i]) << ": got " << hex(got[i]) << ", want "
                    << hex(want);
    }
  }
}

// ---- integer to integer -----------------------------------------------------------------------

TEST(PtxVmConvert, IntegerToIntegerWithAndWithoutSaturation) {
  const auto sources = int_sources(1);
  for (const IntType& d : kInts) {
    for (const IntType& s : kInts) {
      for (bool sat : {false, true}) {
        const std::string ins = std::string("cvt") + (sat ? ".sat." : ".") + d.name + "." + s.name;
        // Destination registers of the type's width (16 bits for 8-bit types) and of 64 bits.
        for (int dreg : {std::max(d.bits, 16), 64}) {
          const int sreg = std::max(s.bits, 16);
          std::vector<Row> rows;
          for (uint64_t v : sources) rows.push_back({v & mask_of(sreg)});
          const auto got = run_column(
              OpKernel{"  " + ins + " %d0, %s0;", {bit_reg(dreg)}, {bit_reg(sreg)}}, rows);
          expect_column(ins + " into b" + std::to_string(dreg), rows, got, [&](const Row& r) {
            __int128 v = int_value(r[0], s);
            if (sat) v = std::clamp(v, int_min(d), int_max(d));
            return in_register(v, d, dreg);
          });
        }
      }
    }
  }
}

// ---- float to integer -------------------------------------------------------------------------

struct FloatType {
  const char* name;
  Format f;
  std::string reg;
};
const FloatType kFloats[] = {{"f16", kHalf, "b16"},
                             {"bf16", kBf16, "b16"},
                             {"f32", kSingle, "f32"},
                             {"f64", kDouble, "f64"}};

// The encoding of |x| in |f| rounded to nearest (the test's values are chosen to be exact).
uint64_t encode(double x, Format f) {
  return ref_round(x, 0, f, Rnd::kRn);
}
double decode_value(uint64_t bits, Format f) {
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
bool is_nan_bits(uint64_t bits, Format f) {
  const uint64_t mag = bits & (f.sign() - 1);
  return (mag & f.inf()) == f.inf() && (mag & ((uint64_t{1} << f.mant) - 1)) != 0;
}
bool is_subnormal_bits(uint64_t bits, Format f) {
  const uint64_t mag = bits & (f.sign() - 1);
  return mag != 0 && (mag >> f.mant) == 0;
}

std::vector<uint64_t> float_sources(Format f, uint64_t seed) {
  std::vector<double> xs = {0.0,
                            0.25,
                            0.5,
                            0.75,
                            1.0,
                            1.5,
                            2.5,
                            3.5,
                            126.5,
                            127.0,
                            127.5,
                            128.0,
                            128.5,
                            255.0,
                            255.5,
                            256.0,
                            32767.5,
                            32768.0,
                            65535.5,
                            65536.0,
                            2147483647.5,
                            2147483648.0,
                            4294967295.5,
                            4294967296.0,
                            9223372036854775807.0,
                            18446744073709551615.0,
                            1e30,
                            0x1p-130,
                            1.0 + 0x1p-10,
                            65504.0,
                            65520.0,
                            3.0e38};
  std::vector<uint64_t> v;
  for (double x : xs) {
    v.push_back(encode(x, f));
    v.push_back(encode(-x, f));
  }
  for (uint64_t special : {f.inf(), f.inf() | f.sign(), f.inf() | 1, f.inf() | f.sign() | 3,
                           uint64_t{1}, f.sign() | 1, (uint64_t{1} << f.mant) - 1}) {
    v.push_back(special);
  }
  Rng rng(seed);
  for (int i = 0; i < 40; ++i) v.push_back(rng.next() & (2 * f.sign() - 1));
  return v;
}

// Integer rounding of a finite value.
double round_int(double x, const std::string& irnd) {
  if (irnd == "rni") return std::nearbyint(x);  // ties to even in the default mode
  if (irnd == "rzi") return std::trunc(x);
  if (irnd == "rmi") return std::floor(x);
  return std::ceil(x);
}

// float to integer: rounded, clamped to the range; NaN gives 0, except that from .f64 or into a
// 64-bit type it gives 1 << (width - 1).
__int128 ref_f2i(double x, const std::string& irnd, const IntType& d, bool f64_source) {
  if (std::isnan(x)) return (f64_source || d.bits == 64) ? (__int128{1} << (d.bits - 1)) : 0;
  if (std::isinf(x)) return x > 0 ? int_max(d) : int_min(d);
  const double r = round_int(x, irnd);
  if (r >= 0x1p64) return int_max(d);
  if (r <= -0x1p64) return int_min(d);
  const __int128 v = static_cast<__int128>(r);
  return std::clamp(v, int_min(d), int_max(d));
}

TEST(PtxVmConvert, FloatToIntegerRoundsSaturatesAndMapsNaN) {
  for (const FloatType& s : kFloats) {
    const auto sources = float_sources(s.f, 2);
    std::vector<Row> rows;
    for (uint64_t v : sources) rows.push_back({v});
    for (const IntType& d : kInts) {
      for (const char* irnd : {"rni", "rzi", "rmi", "rpi"}) {
        for (bool ftz : {false, true}) {
          if (ftz && s.f.mant != 23) continue;
          const std::string ins =
              std::string("cvt.") + irnd + (ftz ? ".ftz." : ".") + d.name + "." + s.name;
          const int dreg = std::max(d.bits, 16);
          const auto got =
              run_column(OpKernel{"  " + ins + " %d0, %s0;", {bit_reg(dreg)}, {s.reg}, 90}, rows);
          expect_column(ins, rows, got, [&](const Row& r) {
            uint64_t bits = r[0];
            if (ftz && is_subnormal_bits(bits, s.f)) bits &= s.f.sign();
            return in_register(ref_f2i(decode_value(bits, s.f), irnd, d, s.f.exp == 11), d, dreg);
          });
        }
      }
    }
  }
}

// ---- integer to float ---------------------------------------------------------------------------

// An integer rounded to |f|: the double nearest to it, and the sign of what that lost.
uint64_t ref_i2f(__int128 v, Format f, Rnd r) {
  const double d = static_cast<double>(v);
  const __int128 back = d >= 0x1p127 ? 0 : static_cast<__int128>(d);
  const int tail = v > back ? 1 : (v < back ? -1 : 0);
  return ref_round(d, tail, f, r);
}

TEST(PtxVmConvert, IntegerToFloatInEveryMode) {
  auto sources = int_sources(3);
  // Values whose nearest double is a tie for bf16 or f16 (double rounding would break them).
  for (uint64_t v : {(uint64_t{1} << 62) + (uint64_t{1} << 54) + 1,
                     (uint64_t{1} << 62) + (uint64_t{3} << 54) - 1, (uint64_t{1} << 60) + 1,
                     (uint64_t{1} << 24) + 1, (uint64_t{1} << 24) + 3, (uint64_t{1} << 53) + 1,
                     uint64_t{65519}, uint64_t{65520}, uint64_t{2049}, uint64_t{2051},
                     uint64_t{0x1010000}, uint64_t{0x1010001}}) {
    sources.push_back(v);
    sources.push_back(0 - v);
  }
  for (const FloatType& d : kFloats) {
    for (const IntType& s : kInts) {
      const int sreg = std::max(s.bits, 16);
      std::vector<Row> rows;
      for (uint64_t v : sources) rows.push_back({v & mask_of(sreg)});
      for (Rnd r : kModes) {
        const std::string ins = std::string("cvt.") + rnd_name(r) + "." + d.name + "." + s.name;
        const auto got =
            run_column(OpKernel{"  " + ins + " %d0, %s0;", {d.reg}, {bit_reg(sreg)}, 90}, rows);
        expect_column(ins, rows, got,
                      [&](const Row& row) { return ref_i2f(int_value(row[0], s), d.f, r); });
      }
    }
  }
  // .sat for a float destination clamps to [0, 1].
  const std::vector<Row> rows = {{0}, {1}, {2}, {0xffffffff}, {0x80000000}};
  const auto got = run_column(OpKernel{"  cvt.rn.sat.f32.s32 %d0, %s0;", {"f32"}, {"b32"}}, rows);
  const uint64_t want[] = {0, 0x3f800000, 0x3f800000, 0, 0};
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(got[i], want[i]) << i;
}

// ---- float to float ---------------------------------------------------------------------------

struct Narrowing {
  const FloatType* src;
  const FloatType* dst;
};

struct Mods {
  bool ftz = false, sat = false, relu = false, satfinite = false;
  std::string text() const {
    return std::string(ftz ? ".ftz" : "") + (sat ? ".sat" : "") + (relu ? ".relu" : "") +
           (satfinite ? ".satfinite" : "");
  }
};

// A float-to-float conversion's result per the ISA.
uint64_t ref_f2f(uint64_t bits, Format src, Format dst, Rnd r, Mods m, bool* any_nan) {
  *any_nan = false;
  if (m.ftz && src.mant == 23 && is_subnormal_bits(bits, src)) bits &= src.sign();
  double x = decode_value(bits, src);
  const uint64_t canonical = dst.mant == 52                   ? 0x7fffffffffffffffull
                             : dst.mant == 23                 ? 0x7fffffffull
                             : dst.exp == 8 && dst.mant == 10 ? 0x7fffffffull  // tf32
                                                              : 0x7fff;
  if (std::isnan(x)) {
    if (m.sat) return 0;
    if (m.relu) return canonical;
    *any_nan = true;
    return canonical;
  }
  if (m.sat) x = x > 0 ? std::min(x, 1.0) : 0.0;
  if (m.relu && std::signbit(x)) x = 0.0;
  uint64_t out = std::isinf(x) ? ((x < 0 ? dst.sign() : 0) | dst.inf()) : ref_round(x, 0, dst, r);
  if (m.satfinite && (out & (dst.sign() - 1)) == dst.inf())
    out = (out & dst.sign()) | dst.max_finite();
  if (m.ftz && dst.mant == 23 && is_subnormal_bits(out, dst)) out &= dst.sign();
  return out;
}

TEST(PtxVmConvert, FloatToFloatInEveryModeWithSaturations) {
  const FloatType& f16 = kFloats[0];
  const FloatType& bf16 = kFloats[1];
  const FloatType& f32 = kFloats[2];
  const FloatType& f64 = kFloats[3];
  const Narrowing narrowings[] = {{&f32, &f16}, {&f32, &bf16}, {&f64, &f16}, {&f64, &bf16},
                                  {&f64, &f32}, {&f16, &bf16}, {&bf16, &f16}};
  for (const Narrowing& n : narrowings) {
    auto sources = float_sources(n.src->f, 4);
    // Values around the destination's ties and boundaries.
    Rng rng(n.src->f.mant * 100 + n.dst->f.mant);
    for (int i = 0; i < 300; ++i) {
      const double x = std::ldexp(1.0 + static_cast<double>(rng.next() % 4096) / 4096.0,
                                  static_cast<int>(rng.next() % 40) - 20) *
                       (rng.next() & 1 ? -1 : 1);
      sources.push_back(encode(x, n.src->f));
    }
    for (uint64_t b = 0; b < 64; ++b) {  // the destination's subnormals and the range's edges
      sources.push_back(encode(n.dst->f.value(b * 5 + 1) * 1.25, n.src->f));
      sources.push_back(encode(n.dst->f.value(n.dst->f.max_finite() - b) * (1 + 0x1p-9), n.src->f));
    }
    std::vector<Row> rows;
    for (uint64_t v : sources) rows.push_back({v});
    std::vector<Mods> mods = {Mods{}, Mods{false, true, false, false}};
    if (n.src->f.mant == 23 || n.dst->f.mant == 23) mods.push_back(Mods{true, false, false, false});
    if (n.src == &f32 && n.dst->f.mant < 23) {
      mods.push_back(Mods{false, false, true, false});
      mods.push_back(Mods{false, false, false, true});
      mods.push_back(Mods{false, false, true, true});
    }
    for (Rnd r : kModes) {
      for (const Mods& m : mods) {
        if ((m.relu || m.satfinite) && r != Rnd::kRn && r != Rnd::kRz) continue;
        if (m.sat && n.dst == &bf16) continue;  // .sat: .f16, .f32, .f64 destinations
        const std::string ins =
            std::string("cvt.") + rnd_name(r) + m.text() + "." + n.dst->name + "." + n.src->name;
        const auto got =
            run_column(OpKernel{"  " + ins + " %d0, %s0;", {n.dst->reg}, {n.src->reg}, 90}, rows);
        int reported = 0;
        for (size_t i = 0; i < rows.size(); ++i) {
          bool any_nan = false;
          const uint64_t want = ref_f2f(rows[i][0], n.src->f, n.dst->f, r, m, &any_nan);
          const bool ok = got[i] == want || (any_nan && is_nan_bits(got[i], n.dst->f));
          if (!ok && reported++ < 8) {
            ADD_FAILURE() << ins << " " << hex(rows[i][0]) << ": got " << hex(got[i]) << ", want "
                          << hex(want);
          }
        }
      }
    }
  }
}

// The common narrowing conversions over many random f32 encodings.
TEST(PtxVmConvert, F32ToHalfOverRandomEncodings) {
  Rng rng(12);
  std::vector<Row> rows;
  for (int i = 0; i < 40000; ++i) {
    uint32_t v = rng.next32();
    // Most of them in or near the half range.
    if (i % 4 != 0) v = (v & 0x80ffffffu) | ((0x30u + (rng.next32() % 0x20u)) << 24);
    rows.push_back({v});
  }
  for (Rnd r : {Rnd::kRn, Rnd::kRz}) {
    const std::string m = rnd_name(r);
    const auto got =
        run_op(OpKernel{"  cvt." + m + ".f16.f32 %d0, %s0;\n  cvt." + m + ".bf16.f32 %d1, %s0;",
                        {"b16", "b16"},
                        {"f32"}},
               rows);
    int reported = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      bool nan = false;
      const uint64_t h = ref_f2f(rows[i][0], kSingle, kHalf, r, Mods{}, &nan);
      const uint64_t b = ref_f2f(rows[i][0], kSingle, kBf16, r, Mods{}, &nan);
      const bool ok = nan ? is_nan_bits(got[i][0], kHalf) && is_nan_bits(got[i][1], kBf16)
                          : got[i][0] == h && got[i][1] == b;
      if (!ok && reported++ < 8) {
        ADD_FAILURE() << "cvt." << m << " " << hex(rows[i][0]) << ": got " << row_text(got[i])
                      << ", want " << hex(h) << " " << hex(b);
      }
    }
  }
}

TEST(PtxVmConvert, FloatWideningIsExact) {
  const FloatType& f16 = kFloats[0];
  const FloatType& bf16 = kFloats[1];
  const FloatType& f32 = kFloats[2];
  const FloatType& f64 = kFloats[3];
  const Narrowing widenings[] = {
      {&f16, &f32}, {&bf16, &f32}, {&f16, &f64}, {&bf16, &f64}, {&f32, &f64}};
  for (const Narrowing& w : widenings) {
    std::vector<Row> rows;
    for (uint64_t v : float_sources(w.src->f, 5)) rows.push_back({v});
    if (w.src->f.mant < 23) {
      rows.clear();
      for (uint64_t h = 0; h < 0x10000; h += 3) rows.push_back({h});
    }
    for (bool ftz : {false, true}) {
      if (ftz && w.dst->f.mant != 23) continue;
      const std::string ins =
          std::string("cvt") + (ftz ? ".ftz." : ".") + w.dst->name + "." + w.src->name;
      const auto got =
          run_column(OpKernel{"  " + ins + " %d0, %s0;", {w.dst->reg}, {w.src->reg}, 90}, rows);
      expect_column(
          ins, rows, got,
          [&](const Row& r) {
            const double x = decode_value(r[0], w.src->f);
            if (std::isnan(x)) return w.dst->f.inf() | 1;  // any NaN
            if (std::isinf(x)) return (x < 0 ? w.dst->f.sign() : 0) | w.dst->f.inf();
            const uint64_t out = encode(x, w.dst->f);  // exact
            // .ftz flushes f32 results (bf16 subnormals are f32 subnormals).
            return ftz && is_subnormal_bits(out, w.dst->f) ? out & w.dst->f.sign() : out;
          },
          [&](uint64_t g, uint64_t want) {
            return g == want || (is_nan_bits(want, w.dst->f) && is_nan_bits(g, w.dst->f));
          });
    }
  }
}

// Same-size conversions with integer rounding give integral values in the same format.
TEST(PtxVmConvert, RoundToIntegralInTheSameFormat) {
  for (const FloatType& t : kFloats) {
    std::vector<Row> rows;
    for (uint64_t v : float_sources(t.f, 6)) rows.push_back({v});
    for (const char* irnd : {"rni", "rzi", "rmi", "rpi"}) {
      for (bool ftz : {false, true}) {
        if (ftz && t.f.mant != 23) continue;
        const std::string ins =
            std::string("cvt.") + irnd + (ftz ? ".ftz." : ".") + t.name + "." + t.name;
        const auto got =
            run_column(OpKernel{"  " + ins + " %d0, %s0;", {t.reg}, {t.reg}, 90}, rows);
        expect_column(
            ins, rows, got,
            [&](const Row& r) {
              uint64_t bits = r[0];
              if (ftz && is_subnormal_bits(bits, t.f)) bits &= t.f.sign();
              const double x = decode_value(bits, t.f);
              if (std::isnan(x)) return t.f.inf() | 1;
              if (std::isinf(x)) return bits;
              return encode(std::copysign(round_int(x, irnd), x), t.f);
            },
            [&](uint64_t g, uint64_t want) {
              return g == want || (is_nan_bits(want, t.f) && is_nan_bits(g, t.f));
            });
      }
    }
  }
  // cvt.ftz.f32.f32 and cvt.sat.f32.f32 (Triton's clamp).
  const std::vector<Row> rows = {
      {1},          {0x80000001},        {float_bits(1.5f)}, {float_bits(-0.5f)},
      {0x7fc00000}, {float_bits(0.25f)}, {0x80000000}};
  const auto got = run_op(
      OpKernel{"  cvt.ftz.f32.f32 %d0, %s0;\n  cvt.sat.f32.f32 %d1, %s0;", {"f32", "f32"}, {"f32"}},
      rows);
  const uint64_t want_ftz[] = {0, 0x80000000,        float_bits(1.5f), float_bits(-0.5f),
                               0, float_bits(0.25f), 0x80000000};
  const uint64_t want_sat[] = {1, 0, 0x3f800000, 0, 0, float_bits(0.25f), 0};
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == 4) {
      EXPECT_TRUE(is_nan_bits(got[i][0], kSingle)) << hex(got[i][0]);
    } else {
      EXPECT_EQ(got[i][0], want_ftz[i]) << i;
    }
    EXPECT_EQ(got[i][1], want_sat[i]) << i;
  }
}

// f16x2 and bf16x2 from two f32: a goes to the upper half, b to the lower.
TEST(PtxVmConvert, PairsPutTheFirstSourceInTheUpperHalf) {
  Rng rng(7);
  std::vector<Row> rows;
  const auto sources = float_sources(kSingle, 8);
  for (size_t i = 0; i + 1 < sources.size(); ++i) rows.push_back({sources[i], sources[i + 1]});
  for (int i = 0; i < 200; ++i) {
    rows.push_back({float_bits(static_cast<float>(rng.next() % 100000) / 64.0f - 700),
                    float_bits(static_cast<float>(rng.next() % 100000) / 64.0f - 700)});
  }
  for (const char* pair : {"f16x2", "bf16x2"}) {
    const Format f = pair[0] == 'f' ? kHalf : kBf16;
    for (Rnd r : {Rnd::kRn, Rnd::kRz}) {
      for (const Mods& m : {Mods{}, Mods{false, false, true, false},
                            Mods{false, false, false, true}, Mods{false, false, true, true}}) {
        const std::string ins = std::string("cvt.") + rnd_name(r) + m.text() + "." + pair + ".f32";
        const auto got =
            run_column(OpKernel{"  " + ins + " %d0, %s0, %s1;", {"b32"}, {"f32", "f32"}}, rows);
        int reported = 0;
        for (size_t i = 0; i < rows.size(); ++i) {
          bool nan_hi = false, nan_lo = false;
          const uint64_t hi = ref_f2f(rows[i][0], kSingle, f, r, m, &nan_hi);
          const uint64_t lo = ref_f2f(rows[i][1], kSingle, f, r, m, &nan_lo);
          const uint64_t g_hi = got[i] >> 16, g_lo = got[i] & 0xffff;
          const bool ok = (g_hi == hi || (nan_hi && is_nan_bits(g_hi, f))) &&
                          (g_lo == lo || (nan_lo && is_nan_bits(g_lo, f)));
          if (!ok && reported++ < 8) {
            ADD_FAILURE() << ins << " " << row_text(rows[i]) << ": got " << hex(got[i]) << ", want "
                          << hex((hi << 16) | lo);
          }
        }
      }
    }
  }
}

TEST(PtxVmConvert, Tf32) {
  std::vector<Row> rows;
  for (uint64_t v : float_sources(kSingle, 9)) rows.push_back({v});
  Rng rng(9);
  for (int i = 0; i < 300; ++i) rows.push_back({(rng.next32() & 0xffffe000u) | 0x1000u});  // ties
  const Format tf32{10, 8};
  struct Form {
    Rnd r;
    Mods m;
  };
  for (const Form& form : {Form{Rnd::kRna, Mods{}},
                           Form{Rnd::kRna, Mods{false, false, false, true}}, Form{Rnd::kRn, Mods{}},
                           Form{Rnd::kRz, Mods{}}, Form{Rnd::kRn, Mods{false, false, true, false}},
                           Form{Rnd::kRz, Mods{false, false, true, true}}}) {
    const std::string ins = std::string("cvt.") + rnd_name(form.r) + form.m.text() + ".tf32.f32";
    const auto got = run_column(OpKernel{"  " + ins + " %d0, %s0;", {"b32"}, {"f32"}, 90}, rows);
    int reported = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      bool any_nan = false;
      uint64_t want = ref_f2f(rows[i][0], kSingle, tf32, form.r, form.m, &any_nan) << 13;
      if (is_nan_bits(rows[i][0], kSingle) && form.m.relu) want = 0x7fffffff;  // canonical
      const bool ok = got[i] == want || (any_nan && is_nan_bits(got[i], kSingle));
      if (!ok && reported++ < 8) {
        ADD_FAILURE() << ins << " " << hex(rows[i][0]) << ": got " << hex(got[i]) << ", want "
                      << hex(want);
      }
    }
  }
}

// ---- fp8 --------------------------------------------------------------------------------------

// The value of an e4m3 encoding (bias 7, no infinities, S.1111.111 is NaN).
double e4m3_value(uint32_t v) {
  const uint32_t mag = v & 0x7f, field = mag >> 3, frac = mag & 7;
  const double x =
      field == 0 ? frac * std::ldexp(1.0, -9) : (8 + frac) * std::ldexp(1.0, field - 10);
  return (v & 0x80) ? -x : x;
}

// x rounded to nearest even as fp8 with .satfinite (and .relu); NaN as 0xff meaning "any NaN".
uint32_t ref_fp8(double x, bool e4m3, bool relu) {
  if (std::isnan(x)) return 0xff;
  if (relu && std::signbit(x)) x = 0;
  const uint32_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(x);
  if (!e4m3) {
    const Format e5m2{2, 5};
    if (std::isinf(a) || a >= 57344.0) return sign | 0x7b;
    return sign | static_cast<uint32_t>(ref_round(a, 0, e5m2, Rnd::kRn));
  }
  if (a >= 448.0) return sign | 0x7e;
  uint32_t best = 0;
  for (uint32_t e = 1; e <= 0x7e; ++e) {
    const double d = std::fabs(e4m3_value(e) - a), bd = std::fabs(e4m3_value(best) - a);
    if (d < bd || (d == bd && (e & 1) == 0)) best = e;
  }
  return sign | best;
}

bool fp8_nan(uint32_t v, bool e4m3) {
  return e4m3 ? (v & 0x7f) == 0x7f : (v & 0x7c) == 0x7c && (v & 3) != 0;
}

TEST(PtxVmConvert, Fp8Pairs) {
  std::vector<Row> from_f32;
  Rng rng(11);
  for (int i = 0; i < 1500; ++i) {
    const float a = std::ldexp(static_cast<float>(rng.next() % 2048) / 1024.0f,
                               static_cast<int>(rng.next() % 40) - 22) *
                    (rng.next() & 1 ? -1.0f : 1.0f);
    from_f32.push_back({float_bits(a), rng.next32()});
  }
  for (float v : {0.0f,     -0.0f,      448.0f,   464.0f,   465.0f,     480.0f,  57344.0f,
                  61439.0f, 61440.0f,   1e30f,    INFINITY, -INFINITY,  NAN,     0x1p-9f,
                  0x1p-10f, 0x1.8p-10f, 0x1p-16f, 0x1p-17f, 0x1.8p-17f, 0x1p-18f}) {
    from_f32.push_back({float_bits(v), float_bits(-v)});
  }
  std::vector<Row> from_half;
  for (uint64_t h = 0; h < 0x10000; h += 3) from_half.push_back({h | ((0xffff - h) << 16)});
  for (const char* name : {"e4m3x2", "e5m2x2"}) {
    const bool e4m3 = name[1] == '4';
    for (bool relu : {false, true}) {
      const std::string mods = std::string("cvt.rn.satfinite") + (relu ? ".relu." : ".") + name;
      const auto a = run_column(
          OpKernel{"  " + mods + ".f32 %d0, %s0, %s1;", {"b16"}, {"f32", "f32"}, 89}, from_f32);
      const auto b =
          run_column(OpKernel{"  " + mods + ".f16x2 %d0, %s0;", {"b16"}, {"b32"}, 89}, from_half);
      const auto check = [&](const std::string& what, uint64_t got, double hi, double lo) {
        const uint32_t want_hi = ref_fp8(hi, e4m3, relu), want_lo = ref_fp8(lo, e4m3, relu);
        const uint32_t g_hi = static_cast<uint32_t>(got >> 8) & 0xff;
        const uint32_t g_lo = static_cast<uint32_t>(got) & 0xff;
        const bool ok = (g_hi == want_hi || (want_hi == 0xff && fp8_nan(g_hi, e4m3))) &&
                        (g_lo == want_lo || (want_lo == 0xff && fp8_nan(g_lo, e4m3))) &&
                        (!relu || want_hi != 0xff || g_hi == 0x7f);
        EXPECT_TRUE(ok) << what << " " << hi << ", " << lo << ": got " << hex(got) << ", want "
                        << hex((want_hi << 8) | want_lo);
        return ok;
      };
      int failures = 0;
      for (size_t i = 0; i < from_f32.size() && failures < 8; ++i) {
        failures +=
            !check(mods + ".f32", a[i], bits_float(from_f32[i][0]), bits_float(from_f32[i][1]));
      }
      for (size_t i = 0; i < from_half.size() && failures < 8; ++i) {
        failures += !check(mods + ".f16x2", b[i], decode_value(from_half[i][0] >> 16, kHalf),
                           decode_value(from_half[i][0] & 0xffff, kHalf));
      }
      // And back: every pair of fp8 values to f16x2, exactly.
      std::vector<Row> pairs;
      for (uint64_t v = 0; v < 0x10000; v += 7) pairs.push_back({v});
      const auto back = run_column(OpKernel{std::string("  cvt.rn") + (relu ? ".relu" : "") +
                                                ".f16x2." + name + " %d0, %s0;",
                                            {"b32"},
                                            {"b16"},
                                            89},
                                   pairs);
      for (size_t i = 0; i < pairs.size() && failures < 8; ++i) {
        for (int h = 0; h < 2; ++h) {
          const uint32_t v = static_cast<uint32_t>(pairs[i][0] >> (8 * h)) & 0xff;
          const uint64_t g = (back[i] >> (16 * h)) & 0xffff;
          if (fp8_nan(v, e4m3)) {
            const bool ok = relu ? g == 0x7fff : is_nan_bits(g, kHalf);
            failures += !ok;
            EXPECT_TRUE(ok) << name << " " << hex(v) << " -> " << hex(g);
            continue;
          }
          double x = e4m3 ? e4m3_value(v) : decode_value(v << 8, kHalf);
          if (relu && std::signbit(x)) x = 0;
          const uint64_t want = encode(x, kHalf);
          failures += g != want;
          EXPECT_EQ(g, want) << name << (relu ? " relu " : " ") << hex(v);
        }
      }
    }
  }
}

// Registers wider than the types: sources read their low bits; results are sign-extended for
// signed types and zero-extended otherwise.
TEST(PtxVmConvert, WiderRegisters) {
  const std::vector<Row> rows = {{0xdead8081, float_bits(-2.0f)},
                                 {0x12347b00, float_bits(65504.0f)},
                                 {0xffffffff, float_bits(1.0f)}};
  const auto got = run_op(OpKernel{"  cvt.u32.u16 %d0, %s0;\n  cvt.s32.s8 %d1, %s0;\n"
                                   "  cvt.s8.s32 %d2, %s0;\n  cvt.u8.u32 %d3, %s0;\n"
                                   "  cvt.f32.f16 %d4, %s0;\n  cvt.rn.f16.f32 %d5, %s1;\n"
                                   "  cvt.s16.s8 %d6, %s0;",
                                   {"b32", "b32", "b32", "b32", "f32", "b32", "b32"},
                                   {"b32", "f32"}},
                          rows);
  ASSERT_EQ(got.size(), 3u);
  const auto half = [](uint64_t h) {
    return uint64_t{float_bits(static_cast<float>(decode_value(h, kHalf)))};
  };
  EXPECT_EQ(got[0], (Row{0x8081, 0xffffff81, 0xffffff81, 0x81, half(0x8081), 0xc000, 0xffffff81}));
  EXPECT_EQ(got[1], (Row{0x7b00, 0, 0, 0, half(0x7b00), 0x7bff, 0}));
  EXPECT_EQ(got[2], (Row{0xffff, 0xffffffff, 0xffffffff, 0xff, got[2][4], 0x3c00, 0xffffffff}));
  EXPECT_TRUE(is_nan_bits(got[2][4], kSingle));
}

}  // namespace
}  // namespace ptx_vm_test
