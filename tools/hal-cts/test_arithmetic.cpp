// Area Arithmetic: a device held to its IRs' arithmetic rules, each check in SPIR-V and in PTX
// where the device takes both. Conversions at the edges of their ranges, integer wrap-around,
// high halves, shifts and division, float operations that must be correctly rounded, and the
// math functions within the error bounds their specification states, sampled densely and
// compared with a double-precision reference on the host.
//
// The rules, and where they come from:
// - SPIR-V on Vulkan: the Vulkan specification, "Precision and Operation of SPIR-V
//   Instructions" (appendix "Vulkan Environment for SPIR-V"). OpFAdd, OpFSub, OpFMul and
//   conversions are correctly rounded, in a rounding mode left to the implementation (the
//   representable value just below or just above the exact result); OpFDiv is 2.5 ULP for
//   |y| in [2^-126, 2^126]; fma is inherited from OpFMul then OpFAdd; exp and exp2 are
//   3 + 2|x| ULP; log and log2 3 ULP outside [0.5, 2] and absolute 2^-21 inside; inversesqrt
//   2 ULP; sqrt inherited from 1 / inversesqrt; pow inherited from exp2(y * log2(x)); sin and
//   cos absolute 2^-11 in [-pi, pi]. Without the SignedZeroInfNanPreserve execution mode (GLSL
//   declares none) the implementation may ignore the sign of zero and assume no NaN or
//   infinity, and any denormal input or result may be flushed to zero: so SPIR-V is given
//   finite inputs with finite results only, zeros compare without their sign, and a denormal
//   may read as zero. Out-of-range float-to-integer conversions, shifts by the width or more,
//   division by zero and OpSRem with a negative operand are undefined there and not tested.
// - PTX: the PTX ISA. cvt to an integer clamps to the destination's range and converts NaN to 0
//   (for sources other than f64 and destinations other than 64-bit); .rni .rzi .rmi .rpi round
//   to nearest even, toward zero, down and up; cvt to a float rounds as .rn .rz .rm .rp say.
//   add, sub, mul, fma, div.rn, rcp.rn and sqrt.rn are IEEE 754 correctly rounded; .ftz
//   flushes subnormal inputs and results to sign-preserving zero, and without it subnormals are
//   kept (sm_20 and later). shl and shr clamp shift amounts above the width to the width (shr.s
//   fills with the sign). ex2.approx.f32: at most 2 ulp from the correctly rounded result over
//   the full range; lg2.approx.f32: absolute 2^-22 in (0.5, 2), relative 2^-22 elsewhere;
//   sin.approx and cos.approx: absolute 2^-20.5 in [-2pi, 2pi], 2^-14.7 in [-100pi, 100pi];
//   rsqrt.approx.f32: relative 2^-22.9; each with its table of special inputs. Integer division
//   by zero is unspecified, and rem of negative operands is machine-dependent (so is the
//   rounding of div of negative operands): not tested.
// - PTX on a Vulkan device runs translated to SPIR-V, and hal promises PTX's results bit for
//   bit except for div.rn, rcp.rn, sqrt.rn and the .approx functions, which it computes with
//   Vulkan's instructions and so to Vulkan's bounds (docs/PTX_ON_VULKAN.md, "Numerics"). Those
//   are held to Vulkan's bounds there, on Vulkan's domain, and the test says so.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

// ---- Bits and values --------------------------------------------------------------------------

float as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kMax = std::numeric_limits<float>::max();
constexpr float kMinNormal = std::numeric_limits<float>::min();
const float kNaN = as_float(0x7fc00000u);

bool is_denormal(float f) {
  return f != 0 && std::fabs(f) < kMinNormal;
}
std::string hex32(uint32_t u) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%08x", u);
  return s;
}
std::string show(float f) {
  char s[48];
  std::snprintf(s, sizeof s, "%.9g (0x%08x)", static_cast<double>(f), bits_of(f));
  return s;
}
std::string show(double d) {
  char s[32];
  std::snprintf(s, sizeof s, "%.17g", d);
  return s;
}

// The f32 values just below (or at) and just above (or at) |x|; beyond the finite range, the
// largest finite value and infinity.
float down_f32(double x) {
  if (std::isnan(x)) return kNaN;
  if (x > kMax) return kMax;
  if (x < -static_cast<double>(kMax)) return -kInf;
  float t = static_cast<float>(x);
  if (static_cast<double>(t) > x) t = std::nextafter(t, -kInf);
  return t;
}
float up_f32(double x) {
  return -down_f32(-x);
}

// Vulkan's ulp(x) for f32: the smallest gap between two finite floats that enclose x.
double ulp_f32(double x) {
  x = std::fabs(x);
  if (x > kMax) x = kMax;
  const float lo = down_f32(x), hi = up_f32(x);
  if (lo != hi) return static_cast<double>(hi) - lo;
  const double below = static_cast<double>(lo) - std::nextafter(lo, 0.0f);
  const double above = static_cast<double>(std::nextafter(hi, kInf)) - hi;
  return lo == 0 ? above : std::min(below, above);
}

// Floats on an integer line that keeps their order (for distances in representable steps).
int64_t ordinal(float f) {
  const int32_t i = static_cast<int32_t>(bits_of(f));
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
}

// Error of |got| against exact |x|, in ULP of x, for messages.
std::string ulp_error(float got, double x) {
  if (std::isnan(got) || std::isinf(got) || std::isnan(x) || std::isinf(x)) return "";
  char s[48];
  std::snprintf(s, sizeof s, ", error %.3g ulp", std::fabs(got - x) / ulp_f32(x));
  return s;
}

// ---- Mismatch reports -------------------------------------------------------------------------

// Counts the results of one operation and keeps the first few wrong ones; report() fails the
// test with them.
class Tally {
 public:
  explicit Tally(std::string what) : what_(std::move(what)) {}
  void check(bool ok, const std::function<std::string()>& describe) {
    ++count_;
    if (ok) return;
    if (wrong_++ < 4) first_ += std::string(first_.empty() ? "" : "; ") + describe();
  }
  void report() const {
    if (wrong_ == 0) return;
    ADD_FAILURE() << what_ << ": " << wrong_ << " of " << count_
                  << " results break the rule; first " << first_;
  }
  size_t count() const { return count_; }

 private:
  std::string what_;
  std::string first_;
  size_t count_ = 0, wrong_ = 0;
};

// ---- Inputs -----------------------------------------------------------------------------------

size_t samples() {
  return options().quick ? 4096 : 65536;
}

// Floats that sit at the edges: zeros, denormals, the normal range's ends, infinities, NaNs,
// integers and halves.
std::vector<float> special_floats() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          0.5f,
                          -0.5f,
                          1.5f,
                          -1.5f,
                          2.0f,
                          2.5f,
                          -2.5f,
                          3.5f,
                          0.49999997f,
                          as_float(0x00000001u),
                          as_float(0x80000001u),
                          as_float(0x007fffffu),
                          as_float(0x807fffffu),
                          kMinNormal,
                          -kMinNormal,
                          kMax,
                          -kMax,
                          kInf,
                          -kInf,
                          kNaN,
                          as_float(0xffc00000u),
                          8388607.5f,
                          -8388607.5f,
                          8388608.0f,
                          16777216.0f,
                          2147483520.0f,
                          2147483648.0f,
                          -2147483648.0f,
                          -2147483904.0f,
                          4294967040.0f,
                          4294967296.0f,
                          1e10f,
                          -1e10f,
                          3.14159274f,
                          -3.14159274f,
                          100.0f,
                          -100.0f};
  return v;
}

// Random floats of every exponent: uniform over bit patterns.
std::vector<float> random_bits(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<float> v(n);
  for (float& f : v) f = as_float(static_cast<uint32_t>(g()));
  return v;
}
std::vector<float> random_uniform(size_t n, uint32_t seed, double lo, double hi) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = static_cast<float>(d(g));
  return v;
}
std::vector<uint32_t> to_bits(const std::vector<float>& v) {
  std::vector<uint32_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = bits_of(v[i]);
  return out;
}

// ---- The fixture ------------------------------------------------------------------------------

class Arithmetic : public DeviceTest {
 protected:
  // Runs |op| of kernel |f| on a, b, c (one thread per element, blocks of 64): out holds two
  // words per element; |c_after|, where given, receives buffer c after the launch.
  void run(hal_function f, uint32_t op, const std::vector<uint32_t>& a,
           const std::vector<uint32_t>& b, const std::vector<uint32_t>& c,
           std::vector<uint32_t>* out, std::vector<uint32_t>* c_after = nullptr) {
    const size_t n = a.size();
    ASSERT_TRUE(b.size() >= n / 2 && c.size() >= n / 2);
    Buffer da(device(), n * 4), db(device(), n * 4), dc(device(), n * 4), dout(device(), n * 8);
    for (const Buffer* buffer : {&da, &db, &dc, &dout}) {
      ASSERT_TRUE(buffer->ok()) << buffer->error();
    }
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, da.ptr, a.data(), n * 4));
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, db.ptr, b.data(), b.size() * 4));
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, dc.ptr, c.data(), c.size() * 4));
    CTS_ASSERT_OK(hal_memset_d32(stream_, dout.ptr, 0xdeadbeefu, n * 2));
    uint32_t count = static_cast<uint32_t>(n);
    void* args[] = {&da.ptr, &db.ptr, &dc.ptr, &dout.ptr, &count, &op};
    const hal_launch_config config = {{static_cast<uint32_t>((n + 63) / 64), 1, 1}, {64, 1, 1}, 0};
    CTS_ASSERT_OK(hal_launch(stream_, f, &config, args));
    out->assign(n * 2, 0);
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, out->data(), dout.ptr, n * 8));
    if (c_after != nullptr) {
      c_after->assign(c.size(), 0);
      CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, c_after->data(), dc.ptr, c.size() * 4));
    }
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
  }
  // Runs a one-operand op on |a| (b and c zero).
  void run1(hal_function f, uint32_t op, const std::vector<uint32_t>& a,
            std::vector<uint32_t>* out) {
    const std::vector<uint32_t> zeros(a.size(), 0);
    run(f, op, a, zeros, zeros, out);
  }
  // PTX that this device runs by translating it to SPIR-V.
  bool translated(const OwnKernel& k) const { return k.ir == HAL_IR_PTX && takes(HAL_IR_SPIRV); }
};

// ---- Conversions between f32 and 32-bit integers ---------------------------------------------

// arith_cvt's op numbers.
enum CvtOp : uint32_t {
  kF2S_rzi = 0,
  kF2U_rzi = 1,
  kF2S_rni = 2,
  kF2S_rmi = 3,
  kF2S_rpi = 4,
  kF2U_rni = 5,
  kS2F_rn = 6,
  kU2F_rn = 7,
  kU2F_rz = 8,
  kS2F_rm = 9,
  kS2F_rp = 10,
  kS2F_rz = 11,
  kU2F_rp = 12,
};

double round_int(double x, char mode) {
  switch (mode) {
    case 'z':
      return std::trunc(x);
    case 'm':
      return std::floor(x);
    case 'p':
      return std::ceil(x);
    default:
      return std::nearbyint(x);  // the host rounds to nearest even
  }
}

// Float-to-integer inputs: the edges, ties at x.5 up to 2^23, and random values of every
// magnitude and across both integer ranges.
std::vector<float> f2i_inputs() {
  std::vector<float> v = special_floats();
  std::mt19937 g(11);
  for (int i = 0; i < 256; ++i) {
    const int k = static_cast<int>(g() % 16777216) - 8388608;
    v.push_back(static_cast<float>(k) + 0.5f);
  }
  for (float f : random_uniform(samples() / 2, 12, -3e9, 5e9)) v.push_back(f);
  for (float f : random_uniform(samples() / 4, 13, -64, 64)) v.push_back(f);
  for (float f : random_bits(samples() / 4, 14)) v.push_back(f);
  return v;
}

TEST_P(Arithmetic, FloatToIntegerConversions) {
  const std::vector<float> in = f2i_inputs();
  const std::vector<uint32_t> a = to_bits(in);
  for_each_own_kernel("arith_cvt", [&](const OwnKernel& k, hal_function f) {
    const bool ptx = k.ir == HAL_IR_PTX;
    struct Op {
      uint32_t op;
      const char* name;
      bool is_signed;
      char mode;
      bool spirv;
    };
    const Op ops[] = {
        {kF2S_rzi, "cvt.rzi.s32.f32 / OpConvertFToS", true, 'z', true},
        {kF2U_rzi, "cvt.rzi.u32.f32 / OpConvertFToU", false, 'z', true},
        {kF2S_rni, "cvt.rni.s32.f32", true, 'n', false},
        {kF2S_rmi, "cvt.rmi.s32.f32", true, 'm', false},
        {kF2S_rpi, "cvt.rpi.s32.f32", true, 'p', false},
        {kF2U_rni, "cvt.rni.u32.f32", false, 'n', false},
    };
    for (const Op& op : ops) {
      if (!ptx && !op.spirv) continue;
      std::vector<uint32_t> out;
      ASSERT_NO_FATAL_FAILURE(run1(f, op.op, a, &out));
      const double lo = op.is_signed ? -2147483648.0 : 0.0;
      const double hi = op.is_signed ? 2147483647.0 : 4294967295.0;
      Tally tally(std::string(k.ir_name) + " " + op.name +
                  (ptx ? " (PTX: rounded as the modifier says, clamped to the destination's "
                         "range, NaN to 0)"
                       : " (SPIR-V: rounded toward zero; in-range values only, the others are "
                         "undefined)"));
      for (size_t i = 0; i < in.size(); ++i) {
        const float x = in[i];
        uint32_t want;
        if (std::isnan(x)) {
          if (!ptx) continue;
          want = 0;
        } else {
          const double r = round_int(x, op.mode);
          if (!ptx && (r < lo || r > hi)) continue;  // undefined in SPIR-V
          const double clamped = std::min(std::max(r, lo), hi);
          want = op.is_signed ? static_cast<uint32_t>(static_cast<int32_t>(clamped))
                              : static_cast<uint32_t>(clamped);
        }
        const uint32_t got = out[2 * i];
        tally.check(got == want, [&] {
          return "input " + show(x) + ": expected " + hex32(want) + " (" +
                 (op.is_signed ? std::to_string(static_cast<int32_t>(want))
                               : std::to_string(want)) +
                 "), got " + hex32(got) + " (" +
                 (op.is_signed ? std::to_string(static_cast<int32_t>(got)) : std::to_string(got)) +
                 ")";
        });
      }
      tally.report();
    }
  });
}

// Integer-to-float inputs: around 2^24 (where f32 stops holding every integer), ties between
// two floats, the ends of both ranges, and random 32-bit values.
std::vector<uint32_t> i2f_inputs() {
  std::vector<uint32_t> v = {0,           1,           0xffffffffu, 0xfffffffeu, 0x7fffffffu,
                             0x80000000u, 0x80000001u, 0x7fffffc0u, 0x7fffff80u, 0x7fffffbfu,
                             0xffffff80u, 0xffffff7fu, 0x01000000u, 0x01000001u, 0x01000002u,
                             0x01000003u, 0x02000002u, 0x02000006u, 0xfeffffffu, 0xff000001u};
  for (uint32_t base : {1u << 24, 1u << 25, 1u << 28, 1u << 31}) {
    for (uint32_t d = 0; d < 16; ++d) {
      v.push_back(base + d);
      v.push_back(base - d);
      v.push_back(0u - base + d);
    }
  }
  std::mt19937 g(21);
  for (size_t i = 0; i < samples(); ++i) v.push_back(static_cast<uint32_t>(g()));
  for (size_t i = 0; i < samples() / 4; ++i) v.push_back(static_cast<uint32_t>(g()) >> (g() % 8));
  return v;
}

TEST_P(Arithmetic, IntegerToFloatConversions) {
  const std::vector<uint32_t> a = i2f_inputs();
  for_each_own_kernel("arith_cvt", [&](const OwnKernel& k, hal_function f) {
    const bool ptx = k.ir == HAL_IR_PTX;
    struct Op {
      uint32_t op;
      const char* name;
      bool is_signed;
      char mode;  // 'n' nearest even, 'z', 'm', 'p'
      bool spirv;
    };
    const Op ops[] = {
        {kS2F_rn, "cvt.rn.f32.s32 / OpConvertSToF", true, 'n', true},
        {kU2F_rn, "cvt.rn.f32.u32 / OpConvertUToF", false, 'n', true},
        {kU2F_rz, "cvt.rz.f32.u32", false, 'z', false},
        {kS2F_rm, "cvt.rm.f32.s32", true, 'm', false},
        {kS2F_rp, "cvt.rp.f32.s32", true, 'p', false},
        {kS2F_rz, "cvt.rz.f32.s32", true, 'z', false},
        {kU2F_rp, "cvt.rp.f32.u32", false, 'p', false},
    };
    for (const Op& op : ops) {
      if (!ptx && !op.spirv) continue;
      std::vector<uint32_t> out;
      ASSERT_NO_FATAL_FAILURE(run1(f, op.op, a, &out));
      Tally tally(std::string(k.ir_name) + " " + op.name +
                  (ptx ? " (PTX: rounded as the modifier says)"
                       : " (Vulkan: correctly rounded, to the float just below or just above)"));
      for (size_t i = 0; i < a.size(); ++i) {
        const double x = op.is_signed ? static_cast<double>(static_cast<int32_t>(a[i]))
                                      : static_cast<double>(a[i]);
        const float lo = down_f32(x), hi = up_f32(x);
        const float got = as_float(out[2 * i]);
        float want = static_cast<float>(x);  // nearest even
        if (op.mode == 'm') want = lo;
        if (op.mode == 'p') want = hi;
        if (op.mode == 'z') want = x < 0 ? hi : lo;
        const bool ok = ptx ? bits_of(got) == bits_of(want) : (got == lo || got == hi);
        tally.check(ok, [&] {
          return "input " +
                 (op.is_signed ? std::to_string(static_cast<int32_t>(a[i]))
                               : std::to_string(a[i])) +
                 ": expected " + (ptx ? show(want) : show(lo) + " or " + show(hi)) + ", got " +
                 show(got);
        });
      }
      tally.report();
    }
  });
}

// ---- f16 and bf16 -----------------------------------------------------------------------------

enum HalfOp : uint32_t {
  kToHalf_rn = 0,
  kFromHalf = 1,
  kToHalf_rz = 2,
  kToHalf_rm = 3,
  kToHalf_rp = 4,
  kToBf16_relu = 5
};

double half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0    ? std::ldexp(m, -24)
             : e == 31 ? (m ? std::nan("") : INFINITY)
                       : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

// |x| rounded to f16 as |mode| says ('n' nearest even, 'z', 'm', 'p'), with IEEE overflow to
// infinity (and to the largest finite value where the mode rounds toward it).
uint16_t to_half(float x, char mode) {
  if (std::isnan(x)) return 0x7e00;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double ax = std::fabs(static_cast<double>(x));
  if (std::isinf(ax)) return sign | 0x7c00;
  // The largest magnitude code at or below ax (finite codes are ordered as their values).
  uint16_t lo = 0;
  for (int step = 1 << 14; step > 0; step >>= 1) {
    if (lo + step <= 0x7bff && half_value(static_cast<uint16_t>(lo + step)) <= ax) lo += step;
  }
  const double vlo = half_value(lo);
  if (vlo == ax) return sign | lo;
  const uint16_t hi = lo + 1;                                  // 0x7c00 (infinity) past 65504
  const double vhi = hi == 0x7c00 ? 65536.0 : half_value(hi);  // IEEE's rounding point
  const bool down_magnitude = mode == 'z' || (mode == 'm' && !sign) || (mode == 'p' && sign);
  const bool up_magnitude = (mode == 'm' && sign) || (mode == 'p' && !sign);
  uint16_t r;
  if (down_magnitude) {
    r = lo;
  } else if (up_magnitude) {
    r = hi;
  } else {
    const double mid = (vlo + vhi) / 2;
    r = ax < mid ? lo : ax > mid ? hi : ((lo & 1) ? hi : lo);
  }
  return sign | r;
}

bool half_is_denormal(uint16_t h) {
  return (h & 0x7c00) == 0 && (h & 0x3ff) != 0;
}

std::string show_half(uint16_t h) {
  char s[48];
  std::snprintf(s, sizeof s, "%.9g (0x%04x)", half_value(h), h);
  return s;
}

// f32 inputs for f16: ties (x.5 ulp of f16) in every binade, values just off the ties, the
// edges of f16's range (65504, 65520 where rounding overflows, 2^-14, 2^-24, 2^-25), and
// random f32 values in and beyond the range.
std::vector<float> to_half_inputs() {
  std::vector<float> v = special_floats();
  for (float f :
       {65504.0f, 65519.996f, 65520.0f, 65535.0f, 65536.0f, 1e6f, -65520.0f, 0.00006103515625f,
        0.000060975551605f, 5.9604644775390625e-8f, 2.98023223876953125e-8f, 4.4703483581542969e-8f,
        1.00048828125f, 1.00146484375f, -1.00048828125f, 2049.0f, 2051.0f, 4097.0f}) {
    v.push_back(f);
  }
  std::mt19937 g(31);
  for (size_t i = 0; i < samples(); ++i) {
    // A random finite f16 and the tie above it, nudged by -1, 0 or +1 f32 step.
    const uint16_t h = static_cast<uint16_t>(g() % 0x7c00) | ((g() & 1) ? 0x8000 : 0);
    const uint16_t h1 = h + 1;
    const double mid =
        (half_value(h) +
         (((h1 & 0x7c00) == 0x7c00) ? std::copysign(65536.0, half_value(h)) : half_value(h1))) /
        2;
    float t = static_cast<float>(mid);
    const int nudge = static_cast<int>(g() % 3) - 1;
    if (nudge != 0) t = std::nextafter(t, nudge > 0 ? kInf : -kInf);
    v.push_back(t);
  }
  for (float f : random_uniform(samples() / 2, 32, -70000, 70000)) v.push_back(f);
  for (float f : random_bits(samples() / 4, 33)) v.push_back(f);
  return v;
}

// Packs f16 codes two to a word.
std::vector<uint32_t> pack16(const std::vector<uint16_t>& h) {
  std::vector<uint32_t> w((h.size() + 1) / 2, 0);
  for (size_t i = 0; i < h.size(); ++i) w[i / 2] |= static_cast<uint32_t>(h[i]) << (16 * (i % 2));
  return w;
}
uint16_t unpack16(const std::vector<uint32_t>& w, size_t i) {
  return static_cast<uint16_t>(w[i / 2] >> (16 * (i % 2)));
}

TEST_P(Arithmetic, HalfConversions) {
  if (!(info().features & HAL_FEATURE_STORAGE_16BIT)) {
    GTEST_SKIP() << "The device has no 16-bit storage (HAL_FEATURE_STORAGE_16BIT), which the f16 "
                    "conversion kernels load and store through.";
  }
  const std::vector<float> in = to_half_inputs();
  const std::vector<uint32_t> a = to_bits(in);
  std::vector<uint16_t> all_halves(65536);
  for (uint32_t h = 0; h < 65536; ++h) all_halves[h] = static_cast<uint16_t>(h);
  for_each_own_kernel("arith_half", [&](const OwnKernel& k, hal_function f) {
    const bool ptx = k.ir == HAL_IR_PTX;
    // f32 -> f16.
    struct Op {
      uint32_t op;
      const char* name;
      char mode;
    };
    const Op ops[] = {{kToHalf_rn, "cvt.rn.f16.f32 / OpFConvert", 'n'},
                      {kToHalf_rz, "cvt.rz.f16.f32", 'z'},
                      {kToHalf_rm, "cvt.rm.f16.f32", 'm'},
                      {kToHalf_rp, "cvt.rp.f16.f32", 'p'}};
    for (const Op& op : ops) {
      if (!ptx && op.op != kToHalf_rn) continue;
      std::vector<uint32_t> out, c_after;
      const std::vector<uint32_t> zeros((a.size() + 1) / 2, 0);
      ASSERT_NO_FATAL_FAILURE(run(f, op.op, a, zeros, zeros, &out, &c_after));
      Tally tally(std::string(k.ir_name) + " " + op.name +
                  (ptx ? " (PTX: rounded as the modifier says, overflow to infinity as IEEE 754 "
                         "rounds it)"
                       : " (Vulkan: correctly rounded, to the f16 just below or just above; a "
                         "denormal may flush to zero; results beyond f16's range not tested)"));
      for (size_t i = 0; i < in.size(); ++i) {
        const float x = in[i];
        const uint16_t got = unpack16(c_after, i);
        if (ptx) {
          const uint16_t want = to_half(x, op.mode);
          const bool ok =
              std::isnan(x) ? (got & 0x7c00) == 0x7c00 && (got & 0x3ff) != 0 : got == want;
          tally.check(ok, [&] {
            return "input " + show(x) + ": expected " + show_half(want) + ", got " + show_half(got);
          });
          continue;
        }
        if (!std::isfinite(x) || std::fabs(x) > 65504.0f) continue;
        const uint16_t lo = to_half(x, 'z') & 0x7fff, hi = to_half(std::fabs(x), 'p');
        const uint16_t mag = got & 0x7fff;
        const bool sign_ok = mag == 0 || ((got & 0x8000) != 0) == std::signbit(x);
        bool ok = sign_ok && (mag == lo || mag == hi);
        if (mag == 0 && (half_is_denormal(lo) || half_is_denormal(hi) || is_denormal(x))) ok = true;
        tally.check(ok, [&] {
          return "input " + show(x) + ": expected " + show_half(lo) + " or " + show_half(hi) +
                 " in magnitude, got " + show_half(got);
        });
      }
      tally.report();
    }
    // f16 -> f32: exact for every f16 value.
    std::vector<uint32_t> out;
    std::vector<uint32_t> index(all_halves.size(), 0);
    const std::vector<uint32_t> packed = pack16(all_halves);
    ASSERT_NO_FATAL_FAILURE(run(f, kFromHalf, index, packed, packed, &out));
    Tally tally(std::string(k.ir_name) + " cvt.f32.f16 / OpFConvert of every f16 value" +
                (ptx ? " (PTX: exact)"
                     : " (Vulkan: exact; a denormal may flush to zero; infinities and NaNs not "
                       "tested)"));
    for (size_t i = 0; i < all_halves.size(); ++i) {
      const uint16_t h = all_halves[i];
      const double want = half_value(h);
      const float got = as_float(out[2 * i]);
      bool ok;
      if (std::isnan(want)) {
        if (!ptx) continue;
        ok = std::isnan(got);
      } else if (!ptx && std::isinf(want)) {
        continue;
      } else {
        ok = bits_of(got) == bits_of(static_cast<float>(want));
        if (!ptx && (got == static_cast<float>(want) || (got == 0 && half_is_denormal(h)))) {
          ok = true;
        }
      }
      tally.check(ok, [&] {
        return "input " + show_half(h) + ": expected " + show(static_cast<float>(want)) + ", got " +
               show(got);
      });
    }
    tally.report();
  });
}

uint16_t to_bf16(float x) {
  const uint32_t u = bits_of(x);
  if (std::isnan(x)) return 0x7fc0;
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);  // nearest even
}

// bf16 rounding, PTX only (cvt to bf16 needs sm_80 and PTX ISA 7.0; SPIR-V has no bf16 in
// the Vulkan version hal-cts targets).
TEST_P(Arithmetic, Bfloat16Conversions) {
  if (!takes(HAL_IR_PTX)) GTEST_SKIP() << "The device does not take PTX; bf16 cvt is PTX's.";
  if (!(info().features & HAL_FEATURE_STORAGE_16BIT)) {
    GTEST_SKIP() << "The device has no 16-bit storage (HAL_FEATURE_STORAGE_16BIT), which the "
                    "bf16 conversion kernel stores through.";
  }
  std::vector<float> in = to_half_inputs();
  for (float f : random_bits(samples(), 41)) in.push_back(f);
  std::mt19937 g(42);
  for (size_t i = 0; i < samples(); ++i) {  // bf16 ties and their neighbours
    const uint32_t u = (static_cast<uint32_t>(g()) & 0xffff0000u) | 0x8000u;
    in.push_back(as_float(u));
    in.push_back(as_float(u + 1));
    in.push_back(as_float(u - 1));
  }
  const std::vector<uint32_t> a = to_bits(in);
  for_each_own_kernel("arith_bf16", [&](const OwnKernel& k, hal_function f) {
    struct Op {
      uint32_t op;
      const char* name;
    };
    for (const Op& op :
         {Op{kToHalf_rn, "cvt.rn.bf16.f32"}, Op{kToBf16_relu, "cvt.rn.relu.bf16.f32"}}) {
      std::vector<uint32_t> out, c_after;
      const std::vector<uint32_t> zeros((a.size() + 1) / 2, 0);
      ASSERT_NO_FATAL_FAILURE(run(f, op.op, a, zeros, zeros, &out, &c_after));
      Tally tally(std::string(k.ir_name) + " " + op.name +
                  " (PTX: rounded as the modifier says; .relu clamps negative results to 0)");
      for (size_t i = 0; i < in.size(); ++i) {
        const float x = in[i];
        const uint16_t got = unpack16(c_after, i);
        uint16_t want = to_bf16(x);
        bool ok;
        if (std::isnan(x)) {
          ok = (got & 0x7f80) == 0x7f80 && (got & 0x7f) != 0;
        } else {
          if (op.op == kToBf16_relu && (want & 0x8000)) want = (want == 0x8000) ? got & 0x8000 : 0;
          ok = got == want;
        }
        tally.check(ok, [&] {
          char s[96];
          std::snprintf(s, sizeof s, ": expected 0x%04x, got 0x%04x", want, got);
          return "input " + show(x) + s;
        });
      }
      tally.report();
    }
  });
}

// ---- Integers ---------------------------------------------------------------------------------

enum IntOp : uint32_t {
  kAdd = 0,
  kSub = 1,
  kMulLo = 2,
  kMulHiU = 3,
  kMulHiS = 4,
  kMulWideU = 5,
  kMulWideS = 6,
  kMadLo = 7,
  kMadHiU = 8,
  kMadHiS = 9,
  kDivU = 10,
  kRemU = 11,
  kDivS = 12,
  kRemS = 13,
  kShl = 14,
  kShrU = 15,
  kShrS = 16,
  kAddS = 17,
  kAddSatS = 18,
  kSubSatS = 19,
  kMulLoS = 20,
};

std::vector<uint32_t> edge_ints() {
  return {0,           1,           2,           3,           0x7fffffffu, 0x80000000u,
          0x80000001u, 0xffffffffu, 0xfffffffeu, 0x0000ffffu, 0x00010000u, 0x00010001u,
          0x12345678u, 0x9abcdef0u, 0x55555555u, 0xaaaaaaaau, 0x40000000u, 0xc0000000u};
}

struct IntCase {
  std::vector<uint32_t> a, b, c;
};

// Every pair of edge values, then random triples.
IntCase int_cases(uint32_t seed) {
  IntCase t;
  const std::vector<uint32_t> e = edge_ints();
  for (uint32_t x : e) {
    for (uint32_t y : e) {
      t.a.push_back(x);
      t.b.push_back(y);
      t.c.push_back(x ^ y);
    }
  }
  std::mt19937 g(seed);
  for (size_t i = 0; i < samples(); ++i) {
    t.a.push_back(static_cast<uint32_t>(g()));
    t.b.push_back(static_cast<uint32_t>(g()));
    t.c.push_back(static_cast<uint32_t>(g()));
  }
  return t;
}

TEST_P(Arithmetic, IntegerWrapAroundAndHighHalves) {
  const IntCase t = int_cases(51);
  for_each_own_kernel("arith_int", [&](const OwnKernel& k, hal_function f) {
    const bool ptx = k.ir == HAL_IR_PTX;
    struct Op {
      uint32_t op;
      const char* name;
      bool spirv;
      std::function<uint64_t(uint32_t, uint32_t, uint32_t)> want;  // low word, high word
    };
    auto s = [](uint32_t v) { return static_cast<int64_t>(static_cast<int32_t>(v)); };
    auto sat = [](int64_t v) {
      return static_cast<uint32_t>(
          static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX)));
    };
    const Op ops[] = {
        {kAdd, "add.u32 / OpIAdd (wraps)", true,
         [](uint32_t x, uint32_t y, uint32_t) { return uint64_t{static_cast<uint32_t>(x + y)}; }},
        {kAddS, "add.s32 / OpIAdd on int (wraps)", true,
         [](uint32_t x, uint32_t y, uint32_t) { return uint64_t{static_cast<uint32_t>(x + y)}; }},
        {kSub, "sub.u32 / OpISub (wraps)", true,
         [](uint32_t x, uint32_t y, uint32_t) { return uint64_t{static_cast<uint32_t>(x - y)}; }},
        {kMulLo, "mul.lo.u32 / OpIMul (low 32 bits)", true,
         [](uint32_t x, uint32_t y, uint32_t) { return uint64_t{static_cast<uint32_t>(x * y)}; }},
        {kMulLoS, "mul.lo.s32 / OpIMul on int (low 32 bits)", true,
         [](uint32_t x, uint32_t y, uint32_t) { return uint64_t{static_cast<uint32_t>(x * y)}; }},
        {kMadLo, "mad.lo.u32 / OpIMul then OpIAdd", true,
         [](uint32_t x, uint32_t y, uint32_t z) {
           return uint64_t{static_cast<uint32_t>(x * y + z)};
         }},
        {kMulHiU, "mul.hi.u32 / OpUMulExtended's high word", true,
         [](uint32_t x, uint32_t y, uint32_t) { return (uint64_t{x} * y) >> 32; }},
        {kMulHiS, "mul.hi.s32 / OpSMulExtended's high word", true,
         [s](uint32_t x, uint32_t y, uint32_t) {
           return uint64_t{static_cast<uint32_t>(static_cast<uint64_t>(s(x) * s(y)) >> 32)};
         }},
        {kMulWideU, "mul.wide.u32 / OpUMulExtended", true,
         [](uint32_t x, uint32_t y, uint32_t) { return uint64_t{x} * y; }},
        {kMulWideS, "mul.wide.s32 / OpSMulExtended", true,
         [s](uint32_t x, uint32_t y, uint32_t) { return static_cast<uint64_t>(s(x) * s(y)); }},
        {kMadHiU, "mad.hi.u32", false,
         [](uint32_t x, uint32_t y, uint32_t z) {
           return uint64_t{static_cast<uint32_t>(((uint64_t{x} * y) >> 32) + z)};
         }},
        {kMadHiS, "mad.hi.s32", false,
         [s](uint32_t x, uint32_t y, uint32_t z) {
           return uint64_t{static_cast<uint32_t>((static_cast<uint64_t>(s(x) * s(y)) >> 32) + z)};
         }},
        {kAddSatS, "add.sat.s32 (clamps to the s32 range)", false,
         [s, sat](uint32_t x, uint32_t y, uint32_t) { return uint64_t{sat(s(x) + s(y))}; }},
        {kSubSatS, "sub.sat.s32 (clamps to the s32 range)", false,
         [s, sat](uint32_t x, uint32_t y, uint32_t) { return uint64_t{sat(s(x) - s(y))}; }},
    };
    for (const Op& op : ops) {
      if (!ptx && !op.spirv) continue;
      std::vector<uint32_t> out;
      ASSERT_NO_FATAL_FAILURE(run(f, op.op, t.a, t.b, t.c, &out));
      Tally tally(std::string(k.ir_name) + " " + op.name);
      for (size_t i = 0; i < t.a.size(); ++i) {
        const uint64_t want = op.want(t.a[i], t.b[i], t.c[i]);
        const uint64_t got = out[2 * i] | (uint64_t{out[2 * i + 1]} << 32);
        tally.check(got == want, [&] {
          char m[160];
          std::snprintf(m, sizeof m,
                        "a = 0x%08x, b = 0x%08x, c = 0x%08x: expected 0x%016llx, got 0x%016llx",
                        t.a[i], t.b[i], t.c[i], static_cast<unsigned long long>(want),
                        static_cast<unsigned long long>(got));
          return std::string(m);
        });
      }
      tally.report();
    }
  });
}

// Shifts: PTX clamps amounts above the width to the width (shl and shr.u give 0, shr.s the sign
// in every bit); SPIR-V defines shifts below the width only, so SPIR-V gets amounts 0 to 31.
TEST_P(Arithmetic, IntegerShifts) {
  std::vector<uint32_t> a, b;
  std::mt19937 g(61);
  const std::vector<uint32_t> values = edge_ints();
  const uint32_t big[] = {32, 33, 63, 64, 255, 256, 0x7fffffffu, 0x80000000u, 0xffffffffu};
  for (uint32_t x : values) {
    for (uint32_t y = 0; y < 32; ++y) {
      a.push_back(x);
      b.push_back(y);
    }
    for (uint32_t y : big) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  for (size_t i = 0; i < samples(); ++i) {
    a.push_back(static_cast<uint32_t>(g()));
    b.push_back((g() & 1) ? static_cast<uint32_t>(g() % 32) : static_cast<uint32_t>(g()));
  }
  const std::vector<uint32_t> c(a.size(), 0);
  for_each_own_kernel("arith_int", [&](const OwnKernel& k, hal_function f) {
    const bool ptx = k.ir == HAL_IR_PTX;
    for (uint32_t op : {kShl, kShrU, kShrS}) {
      const char* name = op == kShl    ? "shl.b32 / OpShiftLeftLogical"
                         : op == kShrU ? "shr.u32 / OpShiftRightLogical"
                                       : "shr.s32 / OpShiftRightArithmetic";
      std::vector<uint32_t> out;
      ASSERT_NO_FATAL_FAILURE(run(f, op, a, b, c, &out));
      Tally tally(std::string(k.ir_name) + " " + name +
                  (ptx ? " (PTX: amounts above 32 clamp to 32)" : " (amounts below 32)"));
      for (size_t i = 0; i < a.size(); ++i) {
        if (!ptx && b[i] >= 32) continue;  // undefined in SPIR-V
        const uint32_t n = std::min<uint32_t>(b[i], 32);
        uint32_t want;
        if (op == kShl) {
          want = n == 32 ? 0 : a[i] << n;
        } else if (op == kShrU) {
          want = n == 32 ? 0 : a[i] >> n;
        } else {
          const int64_t v = static_cast<int32_t>(a[i]);
          want = static_cast<uint32_t>(static_cast<int32_t>(v >> n));
        }
        const uint32_t got = out[2 * i];
        tally.check(got == want, [&] {
          return "a = " + hex32(a[i]) + ", shift " + std::to_string(b[i]) + ": expected " +
                 hex32(want) + ", got " + hex32(got);
        });
      }
      tally.report();
    }
  });
}

// Division and remainder, defined where both IRs define them: non-zero divisors, and for the
// signed forms non-negative operands (Vulkan makes OpSRem of a negative operand undefined; PTX
// calls rem of negative numbers machine-dependent, as the rounding of div with them; division
// by zero is unspecified in PTX and undefined in SPIR-V).
TEST_P(Arithmetic, IntegerDivision) {
  std::vector<uint32_t> a, b;
  const std::vector<uint32_t> values = edge_ints();
  for (uint32_t x : values) {
    for (uint32_t y : values) {
      if (y == 0) continue;
      a.push_back(x);
      b.push_back(y);
    }
  }
  std::mt19937 g(71);
  for (size_t i = 0; i < samples(); ++i) {
    a.push_back(static_cast<uint32_t>(g()));
    uint32_t y = static_cast<uint32_t>(g()) >> (g() % 32);
    b.push_back(y == 0 ? 7 : y);
  }
  const std::vector<uint32_t> c(a.size(), 0);
  for_each_own_kernel("arith_int", [&](const OwnKernel& k, hal_function f) {
    const bool ptx = k.ir == HAL_IR_PTX;
    struct Op {
      uint32_t op;
      const char* name;
      bool is_signed;
      bool spirv;
    };
    for (const Op& op :
         {Op{kDivU, "div.u32 / OpUDiv", false, true}, Op{kRemU, "rem.u32 / OpUMod", false, true},
          Op{kDivS, "div.s32 / OpSDiv, non-negative operands", true, true},
          Op{kRemS, "rem.s32, non-negative operands", true, false}}) {
      if (!ptx && !op.spirv) continue;
      std::vector<uint32_t> out;
      ASSERT_NO_FATAL_FAILURE(run(f, op.op, a, b, c, &out));
      Tally tally(std::string(k.ir_name) + " " + op.name);
      for (size_t i = 0; i < a.size(); ++i) {
        if (op.is_signed && (static_cast<int32_t>(a[i]) < 0 || static_cast<int32_t>(b[i]) <= 0)) {
          continue;
        }
        const bool div = op.op == kDivU || op.op == kDivS;
        const uint32_t want = div ? a[i] / b[i] : a[i] % b[i];
        const uint32_t got = out[2 * i];
        tally.check(got == want, [&] {
          return "a = " + std::to_string(a[i]) + ", b = " + std::to_string(b[i]) + ": expected " +
                 std::to_string(want) + ", got " + std::to_string(got);
        });
      }
      tally.report();
    }
  });
}

// ---- Float operations -------------------------------------------------------------------------

enum FloatOp : uint32_t {
  kFAdd = 0,
  kFSub = 1,
  kFMul = 2,
  kFma = 3,
  kFDiv = 4,
  kSqrt = 5,
  kRcp = 6,
  kRsqrt = 7,
  kExp2 = 8,
  kLog2 = 9,
  kSin = 10,
  kCos = 11,
  kExp = 12,
  kLog = 13,
  kPow = 14,
  kAddFtz = 15,
  kMulFtz = 16,
  kAddRz = 17,
  kAddRm = 18,
  kAddRp = 19,
  kMulRz = 20,
  kMulRm = 21,
  kMulRp = 22,
  kFmaRz = 23,
  kFmaRm = 24,
  kFmaRp = 25,
};

// Inputs for the basic operations: every pair of special values, random bit patterns (every
// exponent, so overflow, underflow, denormals, infinities and NaNs), values of nearby
// magnitude (cancellation), and denormals with small normals.
struct FloatCase {
  std::vector<float> a, b, c;
};
FloatCase float_cases(uint32_t seed) {
  FloatCase t;
  const std::vector<float> e = special_floats();
  for (float x : e) {
    for (float y : e) {
      t.a.push_back(x);
      t.b.push_back(y);
      t.c.push_back(-x);
    }
  }
  std::mt19937 g(seed);
  auto bits = [&] { return as_float(static_cast<uint32_t>(g())); };
  std::uniform_real_distribution<double> unit(-2, 2);
  std::uniform_int_distribution<int> exponent(-20, 20);
  for (size_t i = 0; i < samples(); ++i) {
    switch (i % 4) {
      case 0:
        t.a.push_back(bits());
        t.b.push_back(bits());
        t.c.push_back(bits());
        break;
      case 1: {  // nearby magnitudes: cancellation in sub and fma
        const float x = static_cast<float>(std::ldexp(unit(g), exponent(g)));
        const float y = static_cast<float>(std::ldexp(unit(g), exponent(g)));
        t.a.push_back(x);
        t.b.push_back(y);
        t.c.push_back(-x * y * static_cast<float>(1 + std::ldexp(unit(g), -20)));
        break;
      }
      case 2: {  // moderate values
        t.a.push_back(static_cast<float>(std::ldexp(unit(g), exponent(g))));
        t.b.push_back(static_cast<float>(std::ldexp(unit(g), exponent(g))));
        t.c.push_back(static_cast<float>(std::ldexp(unit(g), exponent(g))));
        break;
      }
      default: {  // denormals and small normals: their sums and products
        const auto small = [&] {
          return as_float((static_cast<uint32_t>(g()) & 0x80ffffffu));  // exponent 0 or 1
        };
        t.a.push_back(small());
        t.b.push_back((g() & 1) ? small() : static_cast<float>(unit(g)));
        t.c.push_back(small());
        break;
      }
    }
  }
  return t;
}

// The exact result of a + b, a * b or a * b + c, as a double plus the sign of its error
// (-1, 0, +1), so that directed roundings to f32 are exact.
struct Exact {
  double value;
  int error_sign;
};
Exact two_sum(double x, double y) {
  const double s = x + y;
  const double yy = s - x;
  const double err = (x - (s - yy)) + (y - yy);
  return {s, err > 0 ? 1 : err < 0 ? -1 : 0};
}
float directed(const Exact& e, char mode, bool zero_negative) {
  if (e.value == 0 && e.error_sign == 0) return zero_negative ? -0.0f : 0.0f;
  float lo = down_f32(e.value), hi = up_f32(e.value);
  if (lo == hi) {  // the double is a float: the error decides
    if (e.error_sign < 0) lo = std::nextafter(lo, -kInf);
    if (e.error_sign > 0) hi = std::nextafter(hi, kInf);
    if (e.error_sign == 0) return lo;
  }
  const bool negative = e.value < 0 || (e.value == 0 && e.error_sign < 0);
  if (mode == 'm') return lo;
  if (mode == 'p') return hi;
  return negative ? hi : lo;  // 'z'
}

// The PTX result of op on (x, y, z), computed on the host, which follows IEEE 754 (round to
// nearest even, subnormals kept).
float ptx_reference(uint32_t op, float x, float y, float z) {
  auto ftz = [](float v) { return is_denormal(v) ? std::copysign(0.0f, v) : v; };
  switch (op) {
    case kFAdd:
      return x + y;
    case kFSub:
      return x - y;
    case kFMul:
      return x * y;
    case kFma:
      return std::fma(x, y, z);
    case kFDiv:
      return x / y;
    case kSqrt:
      return std::sqrt(x);
    case kRcp:
      return 1.0f / x;
    case kAddFtz:
      return ftz(ftz(x) + ftz(y));
    case kMulFtz:
      return ftz(ftz(x) * ftz(y));
    default:
      break;
  }
  const char mode = (op == kAddRz || op == kMulRz || op == kFmaRz)   ? 'z'
                    : (op == kAddRm || op == kMulRm || op == kFmaRm) ? 'm'
                                                                     : 'p';
  const bool is_add = op >= kAddRz && op <= kAddRp, is_mul = op >= kMulRz && op <= kMulRp;
  if (!std::isfinite(x) || !std::isfinite(y) || (!is_add && !is_mul && !std::isfinite(z))) {
    return is_add ? x + y : is_mul ? x * y : std::fma(x, y, z);  // the same in every mode
  }
  if (is_add) {
    const bool neg_zero =
        (std::signbit(x) && std::signbit(y) && x == 0 && y == 0) ||
        (mode == 'm' && !(x == 0 && y == 0 && !std::signbit(x) && !std::signbit(y)));
    return directed(two_sum(x, y), mode, neg_zero);
  }
  const double p = static_cast<double>(x) * y;  // exact
  if (is_mul) {
    if (p == 0) return std::signbit(x) != std::signbit(y) ? -0.0f : 0.0f;
    return directed({p, 0}, mode, false);
  }
  const bool p_negative = std::signbit(x) != std::signbit(y);
  const bool neg_zero = (p == 0 && z == 0 && p_negative && std::signbit(z)) ||
                        (mode == 'm' && !(p == 0 && z == 0 && !p_negative && !std::signbit(z)));
  return directed(two_sum(p, z), mode, neg_zero);
}

bool same_result(float got, float want) {
  return std::isnan(want) ? std::isnan(got) : bits_of(got) == bits_of(want);
}

// Vulkan's rules for the correctly rounded operations on finite inputs with a finite result:
// the float just below or just above the exact result, either zero for a zero, and with any
// denormal input read as zero or any denormal result flushed.
bool vulkan_correctly_rounded(float got, uint32_t op, float x, float y) {
  auto exact = [op](double u, double v) {
    return op == kFAdd ? u + v : op == kFSub ? u - v : u * v;  // add and sub are exact in
  };                                                           // double for these ranges
  std::vector<double> xs = {x}, ys = {y};
  if (is_denormal(x)) xs.push_back(0.0);
  if (is_denormal(y)) ys.push_back(0.0);
  for (double u : xs) {
    for (double v : ys) {
      const double e = exact(u, v);
      const float lo = down_f32(e), hi = up_f32(e);
      if (got == lo || got == hi) return true;  // == ignores the sign of zero
      if (got == 0 && (is_denormal(lo) || is_denormal(hi))) return true;
    }
  }
  return false;
}

// The error bound Vulkan allows fma: inherited from OpFMul then OpFAdd, each correctly
// rounded in either direction: the widest distance from the exact result to the four
// two-step results.
double vulkan_fma_bound(float x, float y, float z, double exact) {
  const double p = static_cast<double>(x) * y;
  double e = 0;
  for (float pr : {down_f32(p), up_f32(p)}) {
    const double s = static_cast<double>(pr) + z;
    for (float r : {down_f32(s), up_f32(s)}) e = std::max(e, std::fabs(exact - r));
  }
  return e;
}

// The bound for sqrt, inherited from 1 / inversesqrt(): inversesqrt within 2 ULP, then a
// division within 2.5 ULP.
double vulkan_sqrt_bound(double x) {
  const double exact = std::sqrt(x), rs = 1 / exact;
  double e = 0;
  for (double r : {rs - 2 * ulp_f32(rs), rs + 2 * ulp_f32(rs)}) {
    const double q = 1 / r;
    for (double v : {q - 2.5 * ulp_f32(q), q + 2.5 * ulp_f32(q)}) {
      e = std::max(e, std::fabs(exact - v));
    }
  }
  return e;
}

bool finite_nonzero_normal(float f) {
  return std::isfinite(f) && f != 0 && !is_denormal(f);
}

TEST_P(Arithmetic, FloatOperationsAreCorrectlyRounded) {
  const FloatCase t = float_cases(81);
  const std::vector<uint32_t> a = to_bits(t.a), b = to_bits(t.b), c = to_bits(t.c);
  for_each_own_kernel("arith_float", [&](const OwnKernel& k, hal_function f) {
    const bool ptx = k.ir == HAL_IR_PTX, vulkan_rules = !ptx || translated(k);
    struct Op {
      uint32_t op;
      const char* name;
      bool spirv;
    };
    const Op ops[] = {
        {kFAdd, "add.rn.f32 / OpFAdd", true}, {kFSub, "sub.rn.f32 / OpFSub", true},
        {kFMul, "mul.rn.f32 / OpFMul", true}, {kFma, "fma.rn.f32 / GLSL fma", true},
        {kFDiv, "div.rn.f32 / OpFDiv", true}, {kSqrt, "sqrt.rn.f32 / GLSL sqrt", true},
        {kRcp, "rcp.rn.f32 / 1.0 / x", true}, {kAddFtz, "add.ftz.f32", false},
        {kMulFtz, "mul.ftz.f32", false},      {kAddRz, "add.rz.f32", false},
        {kAddRm, "add.rm.f32", false},        {kAddRp, "add.rp.f32", false},
        {kMulRz, "mul.rz.f32", false},        {kMulRm, "mul.rm.f32", false},
        {kMulRp, "mul.rp.f32", false},        {kFmaRz, "fma.rz.f32", false},
        {kFmaRm, "fma.rm.f32", false},        {kFmaRp, "fma.rp.f32", false},
    };
    for (const Op& op : ops) {
      if (!ptx && !op.spirv) continue;
      if (translated(k) && (op.op == kAddFtz || op.op == kMulFtz)) {
        // A known limitation (docs/PTX_ON_VULKAN.md, "Numerics"): .ftz is computed as the
        // device computes f32, so subnormals are kept where the device keeps them.
        RecordProperty("ftz",
                       "add.ftz.f32 and mul.ftz.f32 not checked on translated PTX: hal "
                       "computes .ftz as the device computes f32, without flushing");
        continue;
      }
      // Translated PTX computes div.rn, rcp.rn and sqrt.rn with Vulkan's OpFDiv and Sqrt, so
      // it is held to their bounds (docs/PTX_ON_VULKAN.md); everything else to PTX's rules.
      const bool vulkan_bound =
          !ptx || (vulkan_rules && (op.op == kFDiv || op.op == kSqrt || op.op == kRcp));
      std::vector<uint32_t> out;
      ASSERT_NO_FATAL_FAILURE(run(f, op.op, a, b, c, &out));
      std::string rule;
      if (!vulkan_bound) {
        rule = op.op == kAddFtz || op.op == kMulFtz
                   ? " (PTX: subnormal inputs and results flushed to sign-preserving zero, the "
                     "rest correctly rounded)"
                   : " (PTX: IEEE 754 correctly rounded in the instruction's rounding mode, "
                     "subnormals kept)";
      } else {
        rule = op.op == kFDiv || op.op == kRcp
                   ? " (Vulkan: OpFDiv within 2.5 ULP for |divisor| in [2^-126, 2^126])"
               : op.op == kSqrt ? " (Vulkan: sqrt inherited from 1.0 / inversesqrt)"
               : op.op == kFma  ? " (Vulkan: fma inherited from OpFMul then OpFAdd)"
                                : " (Vulkan: correctly rounded to a neighbouring float)";
        if (ptx) rule += "; hal computes this PTX instruction with Vulkan's, so Vulkan's bound";
      }
      Tally tally(std::string(k.ir_name) + " " + op.name + rule);
      for (size_t i = 0; i < t.a.size(); ++i) {
        const float x = t.a[i], y = t.b[i], z = t.c[i];
        const float got = as_float(out[2 * i]);
        if (!vulkan_bound) {
          const float want = ptx_reference(op.op, x, y, z);
          tally.check(same_result(got, want), [&] {
            return "inputs " + show(x) + ", " + show(y) +
                   (op.op == kFma || op.op >= kFmaRz ? ", " + show(z) : std::string()) +
                   ": expected " + show(want) + ", got " + show(got);
          });
          continue;
        }
        // Vulkan's rules: finite inputs, finite non-overflowing results, no denormal inputs
        // for the bounded operations (they may read as zero, which changes the result).
        const bool unary = op.op == kSqrt || op.op == kRcp;
        if (!std::isfinite(x) || (!unary && !std::isfinite(y)) ||
            (op.op == kFma && !std::isfinite(z))) {
          continue;
        }
        double exact;
        switch (op.op) {
          case kFAdd:
            exact = static_cast<double>(x) + y;
            break;
          case kFSub:
            exact = static_cast<double>(x) - y;
            break;
          case kFMul:
            exact = static_cast<double>(x) * y;
            break;
          case kFma:
            exact = static_cast<double>(x) * y + z;  // within a double rounding: far below
            break;                                   // the bound
          case kFDiv:
            exact = static_cast<double>(x) / y;
            break;
          case kSqrt:
            exact = std::sqrt(static_cast<double>(x));
            break;
          default:
            exact = 1 / static_cast<double>(x);
            break;
        }
        if (!std::isfinite(exact) || std::fabs(exact) > kMax) continue;
        bool ok;
        std::string expected;
        if (op.op == kFAdd || op.op == kFSub || op.op == kFMul) {
          ok = vulkan_correctly_rounded(got, op.op, x, y);
          expected = show(down_f32(exact)) + " or " + show(up_f32(exact));
        } else {
          const float divisor = op.op == kFDiv ? y : x;
          if (op.op == kFDiv || op.op == kRcp) {
            const float ad = std::fabs(divisor);
            if (!(ad >= 0x1p-126f && ad <= 0x1p126f) || is_denormal(x)) continue;
          }
          if (op.op == kSqrt && (x < 0 || !finite_nonzero_normal(x))) continue;
          if (op.op == kFma && (is_denormal(x) || is_denormal(y) || is_denormal(z))) continue;
          const double bound = op.op == kFma    ? vulkan_fma_bound(x, y, z, exact)
                               : op.op == kSqrt ? vulkan_sqrt_bound(x)
                                                : 2.5 * ulp_f32(exact);
          ok = std::fabs(got - exact) <= bound || (got == 0 && std::fabs(exact) < kMinNormal);
          expected = show(exact) + " within " + show(bound);
        }
        tally.check(ok, [&] {
          return "inputs " + show(x) + (unary ? std::string() : ", " + show(y)) +
                 (op.op == kFma ? ", " + show(z) : std::string()) + ": expected " + expected +
                 ", got " + show(got) + ulp_error(got, exact);
        });
      }
      tally.report();
    }
  });
}

// ---- Math functions ---------------------------------------------------------------------------

struct MathFn {
  uint32_t op;
  const char* name;
  bool ptx;  // PTX has an instruction for it
  std::function<double(double, double)> exact;
};

// Inputs for one function: its special values and dense samples over the domain its bound
// covers (and past it for PTX's special cases).
std::vector<float> math_inputs(uint32_t op, uint32_t seed) {
  std::vector<float> v = special_floats();
  auto add = [&](const std::vector<float>& more) { v.insert(v.end(), more.begin(), more.end()); };
  const size_t n = samples();
  switch (op) {
    case kExp2:
      add(random_uniform(n / 2, seed, -160, 130));
      add(random_uniform(n / 4, seed + 1, -1, 1));
      add(random_uniform(n / 4, seed + 2, -126, 128));
      break;
    case kExp:
      add(random_uniform(n / 2, seed, -104, 89));
      add(random_uniform(n / 2, seed + 1, -1, 1));
      break;
    case kSin:
    case kCos:
      add(random_uniform(n / 2, seed, -3.14159265, 3.14159265));
      add(random_uniform(n / 4, seed + 1, -2 * 3.14159265, 2 * 3.14159265));
      add(random_uniform(n / 4, seed + 2, -100 * 3.14159265, 100 * 3.14159265));
      break;
    default: {  // log2, log, rsqrt: positive values of every exponent, and (0.5, 2) densely
      std::vector<float> r = random_bits(n / 2, seed);
      for (float& f : r) f = std::fabs(f);
      add(r);
      add(random_uniform(n / 2, seed + 1, 0.5, 2));
      break;
    }
  }
  return v;
}

// PTX's rule for an .approx instruction (on a device that runs PTX natively): "" when |got| is
// allowed for input |x|, else what was expected.
std::string ptx_approx_rule(uint32_t op, float x, float got, bool* tested) {
  *tested = true;
  const double xd = x;
  auto nan_ok = [&]() -> std::string { return std::isnan(got) ? "" : "NaN"; };
  auto exact_ok = [&](float want) -> std::string {
    return bits_of(got) == bits_of(want) ? "" : show(want);
  };
  if (std::isnan(x)) return nan_ok();
  switch (op) {
    case kExp2: {
      if (x == -kInf) return exact_ok(0.0f);
      if (x == kInf) return exact_ok(kInf);
      if (x == 0) return exact_ok(1.0f);
      // At most 2 ulp from the correctly rounded result.
      const float cr = static_cast<float>(std::exp2(xd));
      return std::llabs(ordinal(got) - ordinal(cr)) <= 2 && !std::isnan(got)
                 ? ""
                 : "within 2 ulp of " + show(cr);
    }
    case kLog2: {
      if (x < 0) return nan_ok();
      if (x == 0) return exact_ok(-kInf);
      if (x == kInf) return exact_ok(kInf);
      const double want = std::log2(xd);
      if (xd > 0.5 && xd < 2) {
        return std::fabs(got - want) <= 0x1p-22 ? "" : show(want) + " within 2^-22";
      }
      return std::fabs(got - want) <= 0x1p-22 * std::fabs(want)
                 ? ""
                 : show(want) + " within 2^-22 relative";
    }
    case kSin:
    case kCos: {
      if (std::isinf(x)) return nan_ok();
      if (x == 0) return exact_ok(op == kSin ? x : 1.0f);
      const double ax = std::fabs(xd);
      const double pi = 3.14159265358979323846;
      if (ax > 100 * pi) {
        *tested = false;  // best effort only
        return "";
      }
      const double bound = ax <= 2 * pi ? std::exp2(-20.5) : std::exp2(-14.7);
      const double want = op == kSin ? std::sin(xd) : std::cos(xd);
      return std::fabs(got - want) <= bound ? "" : show(want) + " within " + show(bound);
    }
    default: {  // rsqrt
      if (x == -kInf || (x < 0 && !is_denormal(x))) return nan_ok();
      if (x < 0) {
        *tested = false;  // negative subnormals are not in the table
        return "";
      }
      if (x == 0) return exact_ok(std::signbit(x) ? -kInf : kInf);
      if (x == kInf) return exact_ok(0.0f);
      const double want = 1 / std::sqrt(xd);
      return std::fabs(got - want) <= std::exp2(-22.9) * want
                 ? ""
                 : show(want) + " within 2^-22.9 relative";
    }
  }
}

// Vulkan's bound for a GLSL.std.450 function at x (and y for pow), or < 0 where Vulkan's
// precision table does not cover the input (outside the domain, a non-finite or denormal input
// or result, which Vulkan lets an implementation handle freely by default).
double vulkan_math_bound(uint32_t op, float x, float y, double exact) {
  if (!finite_nonzero_normal(x) &&
      !(x == 0 && (op == kExp2 || op == kExp || op == kSin || op == kCos))) {
    return -1;
  }
  if (!std::isfinite(exact) || std::fabs(exact) > kMax ||
      (exact != 0 && std::fabs(exact) < kMinNormal)) {
    return -1;
  }
  const double pi = 3.14159265358979323846;
  auto log_bound = [](double xv, double value) {
    return xv >= 0.5 && xv <= 2 ? 0x1p-21 : 3 * ulp_f32(value);
  };
  switch (op) {
    case kExp2:
    case kExp:
      return (3 + 2 * std::fabs(static_cast<double>(x))) * ulp_f32(exact);
    case kLog2:
    case kLog:
      if (x <= 0) return -1;
      return log_bound(x, exact);
    case kSin:
    case kCos:
      return std::fabs(static_cast<double>(x)) <= pi ? 0x1p-11 : -1;
    case kRsqrt:
      return x > 0 ? 2 * ulp_f32(exact) : -1;
    case kPow: {
      // Inherited from exp2(y * log2(x)): log2 within its bound, the product rounded either
      // way, exp2 within 3 + 2|m| ULP of its argument m; the widest distance to the exact.
      if (x <= 0 || !finite_nonzero_normal(y)) return -1;
      const double l = std::log2(static_cast<double>(x)), le = log_bound(x, l);
      double e = 0;
      for (double lv : {l - le, l + le}) {
        const double m = y * lv;
        for (float mr : {down_f32(m), up_f32(m)}) {
          const double v = std::exp2(static_cast<double>(mr));
          const double u = (3 + 2 * std::fabs(static_cast<double>(mr))) * ulp_f32(v);
          e = std::max({e, std::fabs(exact - (v - u)), std::fabs(exact - (v + u))});
        }
      }
      return e;
    }
    default:
      return -1;
  }
}

TEST_P(Arithmetic, MathFunctionsWithinTheirBounds) {
  const MathFn fns[] = {
      {kExp2, "ex2.approx.f32 / GLSL exp2", true, [](double x, double) { return std::exp2(x); }},
      {kLog2, "lg2.approx.f32 / GLSL log2", true, [](double x, double) { return std::log2(x); }},
      {kSin, "sin.approx.f32 / GLSL sin", true, [](double x, double) { return std::sin(x); }},
      {kCos, "cos.approx.f32 / GLSL cos", true, [](double x, double) { return std::cos(x); }},
      {kRsqrt, "rsqrt.approx.f32 / GLSL inversesqrt", true,
       [](double x, double) { return 1 / std::sqrt(x); }},
      {kExp, "GLSL exp", false, [](double x, double) { return std::exp(x); }},
      {kLog, "GLSL log", false, [](double x, double) { return std::log(x); }},
      {kPow, "GLSL pow", false, [](double x, double y) { return std::pow(x, y); }},
  };
  for_each_own_kernel("arith_float", [&](const OwnKernel& k, hal_function f) {
    const bool ptx = k.ir == HAL_IR_PTX, vulkan_rules = !ptx || translated(k);
    for (const MathFn& fn : fns) {
      if (ptx && !fn.ptx) continue;
      std::vector<float> xs = math_inputs(fn.op, 91 + fn.op), ys(xs.size(), 0.0f);
      if (fn.op == kPow) {
        xs = random_uniform(samples(), 95, 0x1p-10, 1024);
        ys = random_uniform(samples(), 96, -8, 8);
        for (float x : {0.5f, 1.0f, 2.0f, 10.0f}) {
          for (float y : {-3.0f, -0.5f, 0.5f, 1.0f, 2.0f, 3.0f}) {
            xs.push_back(x);
            ys.push_back(y);
          }
        }
      }
      std::vector<uint32_t> out;
      const std::vector<uint32_t> zeros(xs.size(), 0);
      ASSERT_NO_FATAL_FAILURE(run(f, fn.op, to_bits(xs), to_bits(ys), zeros, &out));
      std::string rule = vulkan_rules ? " (Vulkan's precision table, finite inputs in its domain)"
                                      : " (the PTX ISA's bound and special values)";
      if (ptx && vulkan_rules) {
        rule +=
            "; hal computes this PTX instruction with the GLSL.std.450 function, so Vulkan's "
            "bound, which is looser than PTX's";
      }
      Tally tally(std::string(k.ir_name) + " " + fn.name + rule);
      for (size_t i = 0; i < xs.size(); ++i) {
        const float x = xs[i], y = ys[i];
        const float got = as_float(out[2 * i]);
        if (!vulkan_rules) {
          bool tested;
          const std::string expected = ptx_approx_rule(fn.op, x, got, &tested);
          if (!tested) continue;
          tally.check(expected.empty(), [&] {
            return "input " + show(x) + ": expected " + expected + ", got " + show(got) +
                   ulp_error(got, fn.exact(x, 0));
          });
          continue;
        }
        const double exact = fn.exact(x, y);
        const double bound = vulkan_math_bound(fn.op, x, y, exact);
        if (bound < 0) continue;
        tally.check(std::fabs(got - exact) <= bound, [&] {
          return "input " + show(x) + (fn.op == kPow ? ", " + show(y) : std::string()) +
                 ": expected " + show(exact) + " within " + show(bound) + ", got " + show(got) +
                 ulp_error(got, exact);
        });
      }
      EXPECT_GT(tally.count(), samples() / 2) << fn.name << ": too few inputs in the domain";
      tally.report();
    }
  });
}

INSTANTIATE_TEST_SUITE_P(, Arithmetic, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
