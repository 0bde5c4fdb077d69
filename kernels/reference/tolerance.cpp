// Storage types, fp16 conversions, test data and the comparison against a reference.
#include <hal_kernels/reference.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <cstdio>

namespace hal_kernels::ref {

const char* storage_name(Storage storage) {
  return storage == Storage::kF16 ? "f16" : "f32";
}

double store_unit(Storage storage) {
  // fp16: a full ulp (2^-10 relative), since Vulkan leaves the rounding mode of a conversion to
  // fp16 to the implementation; fp32: half an ulp.
  return storage == Storage::kF16 ? 1.0 / 1024.0 : kUnitF32;
}

double store_floor(Storage storage) {
  // fp16: the subnormal spacing 2^-24; fp32: the largest denormal a device may flush.
  return storage == Storage::kF16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -126);
}

uint16_t float_to_half(float value) {
  uint32_t f = 0;
  std::memcpy(&f, &value, sizeof f);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t exponent = (f >> 23) & 0xFFu;
  uint32_t mantissa = f & 0x7FFFFFu;
  if (exponent == 0xFF) {  // infinity or NaN (kept quiet)
    return static_cast<uint16_t>(sign | 0x7C00u | (mantissa != 0 ? 0x200u : 0u));
  }
  const int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow to infinity
  if (e <= 0) {
    // Subnormal half (or zero): shift the full significand into place, rounding to nearest even.
    if (e < -10) return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - e;  // 24-bit significand down to the subnormal's 10 bits
    const uint32_t half_mantissa = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    uint32_t result = half_mantissa;
    if (rest > halfway || (rest == halfway && (half_mantissa & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
  }
  uint32_t result = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;  // may carry into infinity
  return static_cast<uint16_t>(sign | result);
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = (static_cast<uint32_t>(bits) & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  float magnitude = 0.0f;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa != 0 ? std::numeric_limits<float>::quiet_NaN()
                              : std::numeric_limits<float>::infinity();
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  }
  return sign != 0 ? -magnitude : magnitude;
}

void round_to_half(std::vector<float>* values) {
  for (float& v : *values) v = half_to_float(float_to_half(v));
}

std::vector<uint16_t> to_half(const std::vector<float>& values) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = float_to_half(values[i]);
  return out;
}

std::vector<float> from_half(const std::vector<uint16_t>& bits) {
  std::vector<float> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = half_to_float(bits[i]);
  return out;
}

std::vector<float> random_uniform(size_t count, uint32_t seed, float lo, float hi) {
  // xorshift64*: small, fast and identical everywhere.
  uint64_t state = 0x9E3779B97F4A7C15ull ^ (uint64_t{seed} * 0xD1B54A32D192ED03ull);
  if (state == 0) state = 1;
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    const uint64_t r = state * 0x2545F4914F6CDD1Dull;
    const double unit = static_cast<double>(r >> 40) / static_cast<double>(1ull << 24);
    out[i] = static_cast<float>(lo + (hi - lo) * unit);
  }
  return out;
}

Check compare(const float* device, const Result& ref) {
  Check c;
  c.count = ref.value.size();
  double max_ref = 0;
  for (double v : ref.value) {
    if (std::isfinite(v)) max_ref = std::max(max_ref, std::fabs(v));
  }
  const double significant = max_ref * std::ldexp(1.0, -10);
  bool have_worst = false;
  for (size_t i = 0; i < c.count; ++i) {
    const double got = device[i];
    const double want = ref.value[i];
    double err = 0;
    bool bad = false;
    if (!std::isfinite(want)) {
      bad = got != want;
      err = bad ? std::numeric_limits<double>::infinity() : 0.0;
    } else if (!std::isfinite(got)) {
      bad = true;
      err = std::numeric_limits<double>::infinity();
    } else {
      err = std::fabs(got - want);
      bad = err > ref.bound[i];
      if (std::fabs(want) >= significant && want != 0) {
        c.max_rel_err = std::max(c.max_rel_err, err / std::fabs(want));
      }
    }
    if (bad) ++c.failures;
    c.max_abs_err = std::max(c.max_abs_err, err);
    const double ratio = ref.bound[i] > 0 ? err / ref.bound[i] : (err > 0 ? HUGE_VAL : 0.0);
    if (!have_worst || ratio > c.worst_ratio) {
      have_worst = true;
      c.worst_ratio = ratio;
      c.bound_at_worst = ref.bound[i];
      c.worst_index = i;
      c.worst_device = got;
      c.worst_value = want;
    }
  }
  return c;
}

Check compare(const std::vector<float>& device, const Result& ref) {
  if (device.size() != ref.value.size()) {
    Check c;
    c.count = ref.value.size();
    c.failures = c.count == 0 ? 1 : c.count;
    return c;
  }
  return compare(device.data(), ref);
}

std::string Check::summary() const {
  char text[512];
  std::snprintf(text, sizeof text,
                "%zu/%zu elements within bound; max abs err %.3g, max rel err %.3g; worst "
                "element [%zu] = %.9g vs reference %.9g: err/bound %.3g with bound %.3g",
                count - failures, count, max_abs_err, max_rel_err, worst_index, worst_device,
                worst_value, worst_ratio, bound_at_worst);
  return text;
}

}  // namespace hal_kernels::ref
