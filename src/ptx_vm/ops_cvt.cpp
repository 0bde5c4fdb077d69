// cvt: conversions between every integer and floating-point type PTX names (u8..u64, s8..s64,
// f16, bf16, f32, f64, and f16x2/bf16x2/tf32 as destinations; e4m3x2/e5m2x2 pairs from f32 and
// f16x2 and back to f16x2), with the rounding modes
// (.rn .rz .rm .rp .rna, .rni .rzi .rmi .rpi), .ftz, .sat, .relu and .satfinite.
//
// Float-to-integer conversions saturate to the destination's range and give 0 for NaN, as the
// PTX ISA specifies; integer destinations narrower than their register are sign- or
// zero-extended to the register's width.
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <limits>

#include "ptx_vm/decode.h"
#include "ptx_vm/half.h"

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;
using T = ir::Type;

enum class IntRound : uint8_t { kNone, kNearest, kZero, kDown, kUp };

// Everything the general handler needs (Op::ext).
struct CvtInfo {
  T src = T::kNone;
  T dst = T::kNone;
  uint8_t src_bytes = 0;  // the source register's width (may exceed the type's)
  uint8_t dst_bytes = 0;
  Round round = Round::kNearest;  // float results
  bool round_given = false;
  IntRound int_round = IntRound::kNone;
  bool ftz = false, sat = false, relu = false, satfinite = false;
  bool pair = false;  // f16x2/bf16x2 from two f32: d.hi = cvt(a), d.lo = cvt(b)
};

bool is_int(T t) {
  return ir::is_signed(t) || ir::is_unsigned(t) || ir::is_bits(t);
}

// A source value, read as its type from a register of |bytes| per lane.
struct Value {
  bool is_float = false;
  double f = 0;
  int64_t i = 0;  // signed types sign-extended, unsigned zero-extended
  bool is_unsigned = false;
};

Value read_value(const uint8_t* row, uint32_t lane, uint32_t bytes, T type) {
  const uint8_t* p = row + size_t{lane} * bytes;
  Value v;
  switch (type) {
    case T::kF16:
      v.is_float = true;
      v.f = half_to_float(load_as<uint16_t>(p));
      return v;
    case T::kBF16:
      v.is_float = true;
      v.f = bf16_to_float(load_as<uint16_t>(p));
      return v;
    case T::kF32:
      v.is_float = true;
      v.f = load_as<float>(p);
      return v;
    case T::kF64:
      v.is_float = true;
      v.f = load_as<double>(p);
      return v;
    case T::kS8:
      v.i = load_as<int8_t>(p);
      return v;
    case T::kS16:
      v.i = load_as<int16_t>(p);
      return v;
    case T::kS32:
      v.i = load_as<int32_t>(p);
      return v;
    case T::kS64:
      v.i = load_as<int64_t>(p);
      return v;
    case T::kU8:
    case T::kB8:
      v.i = load_as<uint8_t>(p);
      v.is_unsigned = true;
      return v;
    case T::kU16:
    case T::kB16:
      v.i = load_as<uint16_t>(p);
      v.is_unsigned = true;
      return v;
    case T::kU32:
    case T::kB32:
      v.i = load_as<uint32_t>(p);
      v.is_unsigned = true;
      return v;
    default:
      v.i = load_as<int64_t>(p);
      v.is_unsigned = true;
      return v;  // u64, b64
  }
}

double round_integral(double v, IntRound r) {
  switch (r) {
    case IntRound::kNearest:
      return std::nearbyint(v);  // the host's mode: ties to even
    case IntRound::kZero:
      return std::trunc(v);
    case IntRound::kDown:
      return std::floor(v);
    case IntRound::kUp:
      return std::ceil(v);
    default:
      return v;
  }
}

// The range of an integer type.
void int_range(T t, __int128* lo, __int128* hi) {
  const uint32_t bits = 8 * ir::type_size(t);
  if (ir::is_signed(t)) {
    *lo = -(__int128{1} << (bits - 1));
    *hi = (__int128{1} << (bits - 1)) - 1;
  } else {
    *lo = 0;
    *hi = (__int128{1} << bits) - 1;
  }
}

// An integer result's bits, in |type|'s width (then extended to the register by the caller).
// Float sources: rounded as the instruction says, then clamped to the destination's range. NaN
// gives 0, except from .f64 or into a 64-bit type, where it gives 1 << (width - 1) (the ISA's
// (MAXINT >> 1) + 1 for unsigned types and MININT for signed ones).
uint64_t to_int(const Value& v, const CvtInfo& c) {
  __int128 lo, hi;
  int_range(c.dst, &lo, &hi);
  if (v.is_float) {
    double f = v.f;
    if (std::isnan(f)) {
      const uint32_t bits = 8 * ir::type_size(c.dst);
      return c.src == T::kF64 || bits == 64 ? uint64_t{1} << (bits - 1) : 0;
    }
    if (c.ftz && c.src == T::kF32 && std::fpclassify(float(f)) == FP_SUBNORMAL) f = 0;
    f = round_integral(f, c.int_round == IntRound::kNone ? IntRound::kZero : c.int_round);
    // Every bound is a power of two (or its negation), exact in a double.
    if (f >= static_cast<double>(hi + 1)) return static_cast<uint64_t>(hi);
    if (f <= static_cast<double>(lo)) return static_cast<uint64_t>(lo);
    return static_cast<uint64_t>(static_cast<__int128>(f));
  }
  if (c.sat) {
    const __int128 x = v.is_unsigned ? static_cast<__int128>(static_cast<uint64_t>(v.i))
                                     : static_cast<__int128>(v.i);
    return static_cast<uint64_t>(std::clamp(x, lo, hi));
  }
  return static_cast<uint64_t>(v.i);  // truncation to the destination's width below
}

// An integer rounded once to a half-precision format (through the nearest double and the sign
// of what that lost, so that a 64-bit integer is not rounded twice).
uint64_t int_to_half(const Value& v, T dst, Round round) {
  const __int128 x = v.is_unsigned ? static_cast<__int128>(static_cast<uint64_t>(v.i))
                                   : static_cast<__int128>(v.i);
  const double d = static_cast<double>(x);         // to nearest: the host's mode here
  const __int128 back = static_cast<__int128>(d);  // |d| <= 2^64: in range
  const int tail = x > back ? 1 : (x < back ? -1 : 0);
  switch (dst) {
    case T::kBF16:
    case T::kBF16x2:
      return double_to_bf16(d, round, tail);
    default:
      return double_to_half(d, round, tail);
  }
}

// A float result as |dst|'s bits.
//  .sat clamps to [+0.0, 1.0], NaN to +0.0 (-0.0 counts as below the range, as min and max
//  order zeros); .relu clamps negative results to +0.0 and makes NaN canonical; .satfinite
//  turns infinities into the largest finite value of their sign and keeps NaN a NaN.
uint64_t to_float(const Value& v, const CvtInfo& c) {
  double f = v.is_float ? v.f : 0.0;
  const bool nan_in = v.is_float && std::isnan(f);
  if (v.is_float && c.ftz && c.src == T::kF32 && std::fpclassify(float(f)) == FP_SUBNORMAL) {
    f = std::copysign(0.0, f);
  }
  if (!v.is_float) {
    if (c.dst == T::kF64 || c.dst == T::kF32) {
      // Integer to f32/f64: the host converts in the requested rounding mode.
      const int saved = std::fegetround();
      switch (c.round) {
        case Round::kZero:
          std::fesetround(FE_TOWARDZERO);
          break;
        case Round::kDown:
          std::fesetround(FE_DOWNWARD);
          break;
        case Round::kUp:
          std::fesetround(FE_UPWARD);
          break;
        default:
          break;
      }
      uint64_t bits = 0;
      if (c.dst == T::kF64) {
        double r = v.is_unsigned ? double(static_cast<uint64_t>(v.i)) : double(v.i);
        if (c.sat) r = r > 0 ? (r < 1 ? r : 1.0) : 0.0;
        bits = double_bits(r);
      } else {
        float r = v.is_unsigned ? float(static_cast<uint64_t>(v.i)) : float(v.i);
        if (c.sat) r = r > 0 ? (r < 1 ? r : 1.0f) : 0.0f;
        bits = float_bits(r);
      }
      std::fesetround(saved);
      return bits;
    }
    if (c.dst == T::kF16 || c.dst == T::kBF16) {
      if (c.sat) {
        const double one = v.i != 0 && (v.is_unsigned || v.i > 0) ? 1.0 : 0.0;
        return c.dst == T::kF16 ? double_to_half(one, c.round) : double_to_bf16(one, c.round);
      }
      return int_to_half(v, c.dst, c.round);
    }
    f = v.is_unsigned ? double(static_cast<uint64_t>(v.i)) : double(v.i);
  } else if (c.int_round != IntRound::kNone) {
    f = round_integral(f, c.int_round);  // cvt.rni.f32.f32: an integral value, same format
  }
  if (c.sat) f = f > 0 ? (f < 1 ? f : 1.0) : 0.0;
  if (c.relu && !std::isnan(f) && std::signbit(f)) f = 0.0;
  uint64_t bits = 0;
  switch (c.dst) {
    case T::kF64:
      bits = double_bits(f);
      break;
    case T::kF32: {
      float r = double_to_float(f, c.round);
      if (c.ftz && std::fpclassify(r) == FP_SUBNORMAL) r = std::copysign(0.0f, r);
      bits = float_bits(r);
      break;
    }
    case T::kF16:
    case T::kF16x2: {
      uint16_t h = double_to_half(f, c.round);
      if (c.satfinite && (h & 0x7fffu) == 0x7c00u) h = (h & 0x8000u) | 0x7bffu;
      bits = h;
      break;
    }
    case T::kBF16:
    case T::kBF16x2: {
      uint16_t b = double_to_bf16(f, c.round);
      if (c.satfinite && (b & 0x7fffu) == 0x7f80u) b = (b & 0x8000u) | 0x7f7fu;
      bits = b;
      break;
    }
    case T::kTF32: {
      uint32_t t = float_to_tf32(static_cast<float>(f), c.round);
      if (c.satfinite && (t & 0x7fffffffu) == 0x7f800000u) t = (t & 0x80000000u) | 0x7f7fe000u;
      bits = t;
      break;
    }
    default:
      break;
  }
  if (nan_in && !c.sat && c.dst == T::kF32) bits = 0x7fffffffu;
  if (nan_in && !c.sat && c.dst == T::kF64) bits = 0x7fffffffffffffffull;
  return bits;
}

void write_bits(uint8_t* row, uint32_t lane, uint32_t bytes, T dst, uint64_t bits) {
  uint8_t* p = row + size_t{lane} * bytes;
  const uint32_t size = ir::type_size(dst);
  if (bytes > size && ir::is_signed(dst)) {
    const int shift = 64 - 8 * static_cast<int>(size);
    bits = static_cast<uint64_t>(static_cast<int64_t>(bits << shift) >> shift);
  } else if (bytes > size) {
    bits &= size >= 8 ? ~uint64_t{0} : ((uint64_t{1} << (8 * size)) - 1);
  }
  std::memcpy(p, &bits, std::min<uint32_t>(bytes, 8));
}

void convert_general(Exec& x, const Op& op, uint32_t mask) {
  const CvtInfo& c = *static_cast<const CvtInfo*>(op.ext);
  uint8_t* d = x.row<uint8_t>(op.a[0]);
  const uint8_t* a = x.row<uint8_t>(op.a[1]);
  if (c.pair) {
    const uint8_t* b = x.row<uint8_t>(op.a[2]);
    for_lanes(mask, [&](uint32_t l) {
      const uint64_t hi = to_float(read_value(a, l, c.src_bytes, c.src), c);
      const uint64_t lo = to_float(read_value(b, l, c.src_bytes, c.src), c);
      const uint32_t packed = static_cast<uint32_t>((hi << 16) | (lo & 0xffffu));
      std::memcpy(d + size_t{l} * c.dst_bytes, &packed, 4);
    });
    return;
  }
  const bool int_dst = is_int(c.dst);
  for_lanes(mask, [&](uint32_t l) {
    const Value v = read_value(a, l, c.src_bytes, c.src);
    write_bits(d, l, c.dst_bytes, c.dst, int_dst ? to_int(v, c) : to_float(v, c));
  });
}

// ---- fast paths for what compilers emit in loops ------------------------------------------

void f16_to_f32(Exec& x, const Op& op, uint32_t mask) {
  float* d = x.row<float>(op.a[0]);
  const uint16_t* a = x.row<uint16_t>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = half_to_float(a[l]); });
}
void f32_to_f16_rn(Exec& x, const Op& op, uint32_t mask) {
  uint16_t* d = x.row<uint16_t>(op.a[0]);
  const float* a = x.row<float>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = float_to_half(a[l], Round::kNearest); });
}
void bf16_to_f32(Exec& x, const Op& op, uint32_t mask) {
  float* d = x.row<float>(op.a[0]);
  const uint16_t* a = x.row<uint16_t>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = bf16_to_float(a[l]); });
}
void f32_to_bf16_rn(Exec& x, const Op& op, uint32_t mask) {
  uint16_t* d = x.row<uint16_t>(op.a[0]);
  const float* a = x.row<float>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = float_to_bf16(a[l], Round::kNearest); });
}
void f16x2_from_f32_rn(Exec& x, const Op& op, uint32_t mask) {
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const float* a = x.row<float>(op.a[1]);
  const float* b = x.row<float>(op.a[2]);
  for_lanes(mask, [&](uint32_t l) {
    d[l] = (uint32_t{float_to_half(a[l], Round::kNearest)} << 16) |
           float_to_half(b[l], Round::kNearest);
  });
}
void bf16x2_from_f32_rn(Exec& x, const Op& op, uint32_t mask) {
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const float* a = x.row<float>(op.a[1]);
  const float* b = x.row<float>(op.a[2]);
  for_lanes(mask, [&](uint32_t l) {
    d[l] = (uint32_t{float_to_bf16(a[l], Round::kNearest)} << 16) |
           float_to_bf16(b[l], Round::kNearest);
  });
}
template <typename S, typename D>
void extend(Exec& x, const Op& op, uint32_t mask) {  // integer widening and narrowing
  D* d = x.row<D>(op.a[0]);
  const S* a = x.row<S>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = static_cast<D>(a[l]); });
}
template <typename S>
void int_to_f32_rn(Exec& x, const Op& op, uint32_t mask) {
  float* d = x.row<float>(op.a[0]);
  const S* a = x.row<S>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = static_cast<float>(a[l]); });
}
void f32_to_f64(Exec& x, const Op& op, uint32_t mask) {
  double* d = x.row<double>(op.a[0]);
  const float* a = x.row<float>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = a[l]; });
}

bool fast_path(const CvtInfo& c, Op& op) {
  const bool plain = !c.ftz && !c.sat && !c.relu && !c.satfinite && c.int_round == IntRound::kNone;
  if (!plain) return false;
  const uint32_t ds = ir::type_size(c.dst), ss = ir::type_size(c.src);
  if (c.src_bytes != ss || c.dst_bytes != ds) return false;
  const bool nearest = c.round == Round::kNearest;
  if (c.pair) {
    if (!nearest || c.src != T::kF32) return false;
    op.fn = c.dst == T::kF16x2 ? f16x2_from_f32_rn : bf16x2_from_f32_rn;
    return true;
  }
  if (c.src == T::kF16 && c.dst == T::kF32) return (op.fn = f16_to_f32), true;
  if (c.src == T::kBF16 && c.dst == T::kF32) return (op.fn = bf16_to_f32), true;
  if (c.src == T::kF32 && c.dst == T::kF16 && nearest) return (op.fn = f32_to_f16_rn), true;
  if (c.src == T::kF32 && c.dst == T::kBF16 && nearest) return (op.fn = f32_to_bf16_rn), true;
  if (c.src == T::kF32 && c.dst == T::kF64) return (op.fn = f32_to_f64), true;
  if (c.dst == T::kF32 && nearest && c.int_round == IntRound::kNone) {
    if (c.src == T::kS32) return (op.fn = int_to_f32_rn<int32_t>), true;
    if (c.src == T::kU32) return (op.fn = int_to_f32_rn<uint32_t>), true;
  }
  if (is_int(c.src) && is_int(c.dst)) {
    // Register-sized integer conversions (the sat-free forms): widen by the source's
    // signedness, narrow by truncation.
    const bool s = ir::is_signed(c.src);
    if (ss == 4 && ds == 8) {
      op.fn = s ? extend<int32_t, int64_t> : extend<uint32_t, uint64_t>;
      return true;
    }
    if (ss == 8 && ds == 4) return (op.fn = extend<uint64_t, uint32_t>), true;
    if (ss == 2 && ds == 4) {
      op.fn = s ? extend<int16_t, int32_t> : extend<uint16_t, uint32_t>;
      return true;
    }
    if (ss == 4 && ds == 2) return (op.fn = extend<uint32_t, uint16_t>), true;
  }
  return false;
}

// ---- fp8 ------------------------------------------------------------------------------------

// cvt between fp8 pairs and f32 or f16x2 (Op::imm): 0 two f32 to a pair, 1 an f16x2 to a pair,
// 2 a pair to f16x2. flags bit 0: e5m2 (else e4m3), bit 1: .relu. The value from a (or from
// the upper half or byte) goes to the upper half or byte of d.
void convert_fp8(Exec& x, const Op& op, uint32_t mask) {
  const Fp8 format = (op.flags & 1) != 0 ? Fp8::kE5M2 : Fp8::kE4M3;
  const bool relu = (op.flags & 2) != 0;
  switch (op.imm) {
    case 0: {
      uint16_t* d = x.row<uint16_t>(op.a[0]);
      const float* a = x.row<float>(op.a[1]);
      const float* b = x.row<float>(op.a[2]);
      for_lanes(mask, [&](uint32_t l) {
        d[l] = static_cast<uint16_t>((double_to_fp8(a[l], format, relu) << 8) |
                                     double_to_fp8(b[l], format, relu));
      });
      break;
    }
    case 1: {
      uint16_t* d = x.row<uint16_t>(op.a[0]);
      const uint32_t* a = x.row<uint32_t>(op.a[1]);
      for_lanes(mask, [&](uint32_t l) {
        const double hi = half_to_float(static_cast<uint16_t>(a[l] >> 16));
        const double lo = half_to_float(static_cast<uint16_t>(a[l]));
        d[l] = static_cast<uint16_t>((double_to_fp8(hi, format, relu) << 8) |
                                     double_to_fp8(lo, format, relu));
      });
      break;
    }
    default: {
      uint32_t* d = x.row<uint32_t>(op.a[0]);
      const uint16_t* a = x.row<uint16_t>(op.a[1]);
      const auto one = [&](uint8_t v) -> uint32_t {
        const uint16_t h = fp8_to_half(v, format);
        if (relu && (h & 0x7fffu) > 0x7c00u) return 0x7fffu;  // NaN: canonical
        return relu && (h & 0x8000u) != 0 ? 0u : h;
      };
      for_lanes(mask, [&](uint32_t l) {
        d[l] = (one(static_cast<uint8_t>(a[l] >> 8)) << 16) | one(static_cast<uint8_t>(a[l]));
      });
      break;
    }
  }
}

bool is_fp8_pair(T t) {
  return t == T::kE4M3x2 || t == T::kE5M2x2;
}

// cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.{f32,f16x2} and cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2}.
bool decode_fp8(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  const T dst = ins.types[0], src = ins.types[1];
  const ir::ModSet& m = ins.mods;
  if (!m.has(M::kRn) || m.has(M::kFtz) || m.has(M::kSat)) {
    return d.fail("fp8 conversions take .rn (and .satfinite, .relu)");
  }
  const T pair = is_fp8_pair(dst) ? dst : src;
  op.flags = static_cast<uint8_t>((pair == T::kE5M2x2 ? 1 : 0) | (m.has(M::kRelu) ? 2 : 0));
  if (is_fp8_pair(dst)) {
    if (!m.has(M::kSatfinite)) return d.fail("conversions to fp8 need .satfinite");
    if (src != T::kF32 && src != T::kF16x2) return d.fail("fp8 pairs convert from .f32 or .f16x2");
    op.imm = src == T::kF32 ? 0 : 1;
    const size_t n = src == T::kF32 ? 3 : 2;
    if (ins.operands.size() != n) {
      return d.fail(src == T::kF32 ? "expected d, a and b" : "expected d and a");
    }
    op.a[0] = d.destination(ins.operands[0], T::kB16);
    if (op.a[0] == kNoRef) return false;
    for (size_t i = 1; i < n; ++i) {
      op.a[i] = d.source(ins.operands[i], src == T::kF32 ? T::kF32 : T::kB32);
      if (op.a[i] == kNoRef) return false;
    }
  } else {
    if (dst != T::kF16x2) return d.fail("fp8 pairs convert to .f16x2");
    if (ins.operands.size() != 2) return d.fail("expected d and a");
    op.imm = 2;
    op.a[0] = d.destination(ins.operands[0], T::kB32);
    op.a[1] = d.source(ins.operands[1], T::kB16);
    if (op.a[0] == kNoRef || op.a[1] == kNoRef) return false;
  }
  op.fn = convert_fp8;
  return true;
}

}  // namespace

bool decode_convert(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.types.size() != 2) return d.fail("cvt takes a destination and a source type");
  if (is_fp8_pair(ins.types[0]) || is_fp8_pair(ins.types[1])) return decode_fp8(d, ins, op);
  auto* c = d.kernel().make<CvtInfo>();
  c->dst = ins.types[0];
  c->src = ins.types[1];
  const auto supported = [](T t) {
    return is_int(t) || t == T::kF16 || t == T::kBF16 || t == T::kF32 || t == T::kF64;
  };
  const bool pair_dst = c->dst == T::kF16x2 || c->dst == T::kBF16x2;
  if (!supported(c->src) || (!supported(c->dst) && !pair_dst && c->dst != T::kTF32)) {
    return d.fail(std::string("conversions from .") + ir::type_name(c->src) + " to ." +
                  ir::type_name(c->dst) + " are not supported on the CPU PTX device");
  }
  const ir::ModSet& m = ins.mods;
  c->ftz = m.has(M::kFtz);
  c->sat = m.has(M::kSat);
  c->relu = m.has(M::kRelu);
  c->satfinite = m.has(M::kSatfinite);
  if (m.has(M::kRs)) return d.fail("stochastic rounding (.rs) is not supported");
  c->round_given = true;
  if (m.has(M::kRz)) {
    c->round = Round::kZero;
  } else if (m.has(M::kRm)) {
    c->round = Round::kDown;
  } else if (m.has(M::kRp)) {
    c->round = Round::kUp;
  } else if (m.has(M::kRna)) {
    c->round = Round::kNearestAway;
  } else {
    c->round_given = m.has(M::kRn);
  }
  if (m.has(M::kRni)) c->int_round = IntRound::kNearest;
  if (m.has(M::kRzi)) c->int_round = IntRound::kZero;
  if (m.has(M::kRmi)) c->int_round = IntRound::kDown;
  if (m.has(M::kRpi)) c->int_round = IntRound::kUp;
  if (c->int_round != IntRound::kNone && !ir::is_float(c->src)) {
    return d.fail("integer rounding (.rni ...) applies to floating-point sources");
  }
  c->pair = pair_dst;
  const size_t operands = c->pair ? 3 : 2;
  if (ins.operands.size() != operands) {
    return d.fail(c->pair ? "cvt to a pair takes a destination and two sources"
                          : "cvt takes a destination and a source");
  }
  if (c->pair && c->src != T::kF32) return d.fail("cvt to .f16x2/.bf16x2 takes .f32 sources");
  // Register widths: ld, st and cvt allow registers wider than the type.
  const T dst_reg_type = c->pair || c->dst == T::kTF32 ? T::kB32 : c->dst;
  op.a[0] = d.destination(ins.operands[0], dst_reg_type, /*allow_wider=*/true);
  if (op.a[0] == kNoRef) return false;
  op.a[1] = d.source(ins.operands[1], c->src, /*allow_wider=*/true);
  if (op.a[1] == kNoRef) return false;
  if (c->pair) {
    op.a[2] = d.source(ins.operands[2], c->src);
    if (op.a[2] == kNoRef) return false;
  }
  const uint32_t dst_reg = d.register_bytes(ins.operands[0]);
  const uint32_t src_reg = d.register_bytes(ins.operands[1]);
  c->dst_bytes = static_cast<uint8_t>(dst_reg != 0 ? dst_reg : ir::type_size(dst_reg_type));
  c->src_bytes = static_cast<uint8_t>(src_reg != 0 ? src_reg : ir::type_size(c->src));
  op.ext = c;
  if (fast_path(*c, op)) return true;
  op.fn = convert_general;
  return true;
}

}  // namespace hal::ptx_vm
