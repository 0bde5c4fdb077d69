// Conversions between binary32/binary64 and the narrow formats PTX computes with (binary16,
// bfloat16, tf32), in every rounding mode PTX names. Header-only: the common cases (to and
// from f16 and bf16 with round-to-nearest-even) are bit manipulations on the hot path of fp16
// kernels; the rest goes through one exact rounding routine.
//
// NaN results are the canonical NaN NVIDIA GPUs produce (0x7fff for f16 and bf16), so bit
// patterns match a real device.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace hal::ptx_vm {

enum class Round : uint8_t {
  kNearest,      // to nearest, ties to even (.rn)
  kZero,         // toward zero (.rz)
  kDown,         // toward -infinity (.rm)
  kUp,           // toward +infinity (.rp)
  kNearestAway,  // to nearest, ties away from zero (.rna)
};

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint64_t double_bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
inline double bits_double(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

// Rounds the finite, non-zero magnitude |a| to a binary format with |mant| fraction bits and
// |exp| exponent bits (IEEE layout, subnormals included), for a value of sign |negative|.
// |sticky| is the sign (-1, 0, +1) of what the exact magnitude has beyond |a|, when |a| is the
// exact value rounded to double (less than half a double ulp): a tie at |a| is then no tie, and
// a magnitude just below a representable |a| rounds toward zero to the value below it.
// Returns the encoding without the sign; overflow gives infinity or the largest finite value as
// the rounding mode says.
inline uint64_t round_magnitude(double a, bool negative, int mant, int exp, Round round,
                                int sticky = 0) {
  const int bias = (1 << (exp - 1)) - 1;
  const int emin = 1 - bias;
  const int emax = bias;
  int e2 = 0;
  std::frexp(a, &e2);  // a = m * 2^e2, m in [0.5, 1)
  int e = e2 - 1;      // a = (1.f) * 2^e
  const bool subnormal = e < emin;
  const int quantum_exp = (subnormal ? emin : e) - mant;
  const double q = std::ldexp(a, -quantum_exp);  // exact: a power-of-two scaling
  double n = std::floor(q);
  const double frac = q - n;
  const bool toward_zero = round == Round::kZero || (round == Round::kDown && !negative) ||
                           (round == Round::kUp && negative);
  if (frac == 0.0 && sticky < 0 && toward_zero) {
    // Just below a representable value: the double below |a| rounds the same way (the format
    // has fewer bits than a double, so no value of it lies in between).
    return round_magnitude(std::nextafter(a, 0.0), negative, mant, exp, round);
  }
  bool up = false;
  switch (round) {
    case Round::kNearest:
      up = frac > 0.5 || (frac == 0.5 && (sticky > 0 || (sticky == 0 && std::fmod(n, 2.0) != 0.0)));
      break;
    case Round::kNearestAway:
      up = frac > 0.5 || (frac == 0.5 && sticky >= 0);
      break;
    case Round::kZero:
      up = false;
      break;
    case Round::kDown:
      up = negative && (frac > 0.0 || sticky > 0);
      break;
    case Round::kUp:
      up = !negative && (frac > 0.0 || sticky > 0);
      break;
  }
  if (up) n += 1.0;
  const double one = std::ldexp(1.0, mant);  // the implicit bit's weight in units of quantum
  uint64_t bits_exp = 0;
  uint64_t bits_mant = 0;
  if (subnormal) {
    if (n >= one) {  // rounded up into the smallest normal
      bits_exp = 1;
      bits_mant = static_cast<uint64_t>(n - one);
    } else {
      bits_mant = static_cast<uint64_t>(n);
    }
  } else {
    if (n >= 2 * one) {  // the fraction carried into the exponent
      n /= 2;
      ++e;
    }
    if (e > emax) {
      const bool to_inf = round == Round::kNearest || round == Round::kNearestAway ||
                          (round == Round::kUp && !negative) || (round == Round::kDown && negative);
      const uint64_t inf = ((uint64_t{1} << exp) - 1) << mant;
      return to_inf ? inf : inf - 1;
    }
    bits_exp = static_cast<uint64_t>(e + bias);
    bits_mant = static_cast<uint64_t>(n - one);
  }
  return (bits_exp << mant) | bits_mant;
}

// Any double to a format of |mant| and |exp| bits; |nan| is the canonical NaN's magnitude bits.
// |tail| is the sign of what the exact value has beyond |x| (see round_magnitude).
inline uint64_t round_to_format(double x, int mant, int exp, Round round, uint64_t nan,
                                int tail = 0) {
  const uint64_t sign = (double_bits(x) >> 63) << (mant + exp);
  if (std::isnan(x)) return nan;
  const double a = std::fabs(x);
  if (a == 0.0) return sign;
  if (std::isinf(a)) return sign | (((uint64_t{1} << exp) - 1) << mant);
  return sign | round_magnitude(a, x < 0, mant, exp, round, x < 0 ? -tail : tail);
}

// The sign (-1, 0, +1) of the rounding error of s = a + b (Knuth's two-sum), for exact sums
// rounded once to a narrow format: a + b == s + error exactly.
inline int sum_error_sign(double a, double b, double s) {
  const double bb = s - a;
  const double error = (a - (s - bb)) + (b - bb);
  return error > 0 ? 1 : (error < 0 ? -1 : 0);
}

// ---- binary16 ---------------------------------------------------------------------------------

inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    const float value = std::ldexp(static_cast<float>(mant), -24);
    return sign != 0 ? -value : value;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t double_to_half(double x, Round round, int tail = 0) {
  return static_cast<uint16_t>(round_to_format(x, 10, 5, round, 0x7fff, tail));
}

inline uint16_t float_to_half(float f, Round round) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (round == Round::kNearest && ax >= 0x38800000u && ax < 0x477ff000u) {
    // A normal half, rounded to nearest even by adding half an ulp (less one, plus the lsb).
    uint32_t r = ax - 0x38000000u;
    r = (r + 0x0fffu + ((r >> 13) & 1u)) >> 13;
    return static_cast<uint16_t>(sign | r);
  }
  if (ax > 0x7f800000u) return 0x7fff;
  return double_to_half(static_cast<double>(f), round);
}

// ---- bfloat16 ---------------------------------------------------------------------------------

inline float bf16_to_float(uint16_t b) {
  return bits_float(uint32_t{b} << 16);
}

inline uint16_t double_to_bf16(double x, Round round, int tail = 0) {
  return static_cast<uint16_t>(round_to_format(x, 7, 8, round, 0x7fff, tail));
}

inline uint16_t float_to_bf16(float f, Round round) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  if (round == Round::kNearest) {
    return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
  if (round == Round::kZero) return static_cast<uint16_t>(x >> 16);
  return double_to_bf16(static_cast<double>(f), round);
}

// ---- tf32 (a binary32 with 10 fraction bits; the low 13 bits are zero) --------------------------

inline uint32_t float_to_tf32(float f, Round round) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffffffu;
  const uint64_t r = round_to_format(static_cast<double>(f), 10, 8, round, 0x7ffff);
  return static_cast<uint32_t>(r) << 13;
}

// ---- binary32 from binary64 --------------------------------------------------------------------

inline float double_to_float(double x, Round round) {
  if (round == Round::kNearest) return static_cast<float>(x);
  if (std::isnan(x)) return bits_float(0x7fffffffu);
  return bits_float(static_cast<uint32_t>(round_to_format(x, 23, 8, round, 0x7fffffff)));
}

// ---- fp8: e4m3 and e5m2 -------------------------------------------------------------------------

// e4m3 has a bias of 7, no infinities, and one NaN per sign (S.1111.111): its largest finite
// value is 448. e5m2 is IEEE-like: a bias of 15, infinities, largest finite value 57344.
enum class Fp8 : uint8_t { kE4M3, kE5M2 };

// x rounded to nearest even as fp8 with .satfinite: NaN gives the canonical NaN (0x7f), values
// beyond the largest finite one (infinities included) give it with their sign. .relu: negative
// results become +0, NaN stays the canonical NaN.
inline uint8_t double_to_fp8(double x, Fp8 format, bool relu) {
  if (std::isnan(x)) return 0x7f;
  if (relu && std::signbit(x)) x = 0.0;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const bool e4m3 = format == Fp8::kE4M3;
  const uint8_t max_finite = e4m3 ? 0x7e : 0x7b;
  const double a = std::fabs(x);
  if (a == 0.0) return sign;
  if (std::isinf(a)) return static_cast<uint8_t>(sign | max_finite);
  // Round on the 5-bit-exponent IEEE layout scaled so that its smallest normal is the format's:
  // the scaled layout's fields are then the format's own (the bias difference is the scaling),
  // and its wider range shows overflow.
  const int mant = e4m3 ? 3 : 2;
  const int emin = e4m3 ? -6 : -14;
  const uint64_t r =
      round_magnitude(std::ldexp(a, -14 - emin), sign != 0, mant, 5, Round::kNearest);
  const uint64_t field = r >> mant;
  if (field > (e4m3 ? 15u : 30u) || (e4m3 && r == 0x7f)) {
    return static_cast<uint8_t>(sign | max_finite);
  }
  return static_cast<uint8_t>(sign | r);
}

// An fp8 value as a half (exact: every fp8 value is an f16 value); NaN gives 0x7fff.
inline uint16_t fp8_to_half(uint8_t v, Fp8 format) {
  const bool negative = (v & 0x80) != 0;
  const uint32_t mag = v & 0x7fu;
  double value = 0;
  if (format == Fp8::kE4M3) {
    if (mag == 0x7f) return 0x7fff;
    const uint32_t field = mag >> 3, frac = mag & 7;
    value = field == 0 ? std::ldexp(static_cast<double>(frac), -9)
                       : std::ldexp(static_cast<double>(8 + frac), static_cast<int>(field) - 10);
  } else {
    return static_cast<uint16_t>(uint16_t{v} << 8);  // e5m2 is the upper byte of an f16
  }
  return double_to_half(negative ? -value : value, Round::kNearest);
}

// ---- flushing subnormals (.ftz) ----------------------------------------------------------------

inline float flush(float f) {
  return std::fpclassify(f) == FP_SUBNORMAL ? std::copysign(0.0f, f) : f;
}

}  // namespace hal::ptx_vm
