// Floating-point arithmetic: add, sub, mul, fma/mad, div, rcp, sqrt, rsqrt, ex2, lg2, sin, cos,
// tanh, min, max, abs, neg, copysign, testp, on f32 and f64 (every rounding mode, .ftz, .sat)
// and on f16, bf16 and their x2 pairs.
//
// Results follow IEEE 754 in the rounding mode the instruction names (the host's floating-point
// unit computes them; directed modes switch its rounding mode for the one instruction).
// Approximate instructions (.approx) are computed to full precision, which is within every
// error bound PTX states for them; where the ISA defines an approximation's behaviour exactly
// (div.approx.f32 for huge divisors, rcp/rsqrt.approx.ftz.f64 on the upper word), it is followed.
#include <cfenv>
#include <cmath>

#include "ptx_vm/decode.h"
#include "ptx_vm/half.h"

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;
using O = ir::Opcode;

// ---- element formats ----------------------------------------------------------------------

// A format of one value in a row: f32 and f64 compute natively; f16 and bf16 widen to float.
struct F32 {
  using Storage = float;
  using Compute = float;
  static float load(float v) { return v; }
  static float store(float v, bool) { return v; }
};
struct F64 {
  using Storage = double;
  using Compute = double;
  static double load(double v) { return v; }
  static double store(double v, bool) { return v; }
};
struct F16 {
  using Storage = uint16_t;
  using Compute = float;
  static float load(uint16_t v) { return half_to_float(v); }
  static uint16_t store(float v, bool) { return float_to_half(v, Round::kNearest); }
};
struct BF16 {
  using Storage = uint16_t;
  using Compute = float;
  static float load(uint16_t v) { return bf16_to_float(v); }
  static uint16_t store(float v, bool) { return float_to_bf16(v, Round::kNearest); }
};

template <typename C>
C flush_value(C v) {
  if constexpr (sizeof(C) == 4) {
    const uint32_t bits = float_bits(v);
    if ((bits & 0x7f800000u) == 0) return bits_float(bits & 0x80000000u);
  }
  return v;
}

// f16 .ftz flushes half subnormals (below 2^-14), not float ones.
inline float flush_half(float v) {
  return std::fabs(v) < 6.103515625e-05f ? std::copysign(0.0f, v) : v;
}

template <typename Fmt, bool kFtz>
typename Fmt::Compute in(typename Fmt::Storage v) {
  auto c = Fmt::load(v);
  if constexpr (kFtz) {
    if constexpr (std::is_same_v<Fmt, F16>) return flush_half(c);
    return flush_value(c);
  }
  return c;
}

// .sat clamps to [+0.0, 1.0]: NaN, negative results and -0.0 give +0.0 (the ISA flushes NaN to
// +0.0; -0.0 is taken as below the range's +0.0, as min and max order them).
template <typename Fmt, bool kFtz, bool kSat>
typename Fmt::Storage out(typename Fmt::Compute c) {
  if constexpr (kSat) c = c > 0 ? (c < 1 ? c : 1) : 0;
  auto s = Fmt::store(c, false);
  if constexpr (kFtz) {
    if constexpr (std::is_same_v<Fmt, F16>) {
      if ((s & 0x7c00u) == 0) s = static_cast<uint16_t>(s & 0x8000u);
    } else if constexpr (std::is_same_v<Fmt, BF16>) {
      if ((s & 0x7f80u) == 0) s = static_cast<uint16_t>(s & 0x8000u);
    } else if constexpr (std::is_same_v<Fmt, F32>) {
      s = flush_value(s);
    }
  }
  return s;
}

// ---- operations ---------------------------------------------------------------------------

struct AddF {
  template <typename C>
  static C apply(C a, C b) {
    return a + b;
  }
};
struct SubF {
  template <typename C>
  static C apply(C a, C b) {
    return a - b;
  }
};
struct MulF {
  template <typename C>
  static C apply(C a, C b) {
    return a * b;
  }
};
struct DivF {
  template <typename C>
  static C apply(C a, C b) {
    return a / b;
  }
};
// div.approx.f32 computes a * (1 / b): for 2^126 < |b| < 2^128 the reciprocal is below the
// normal range and the result is a zero of the quotient's sign, or NaN for an infinite a.
// Elsewhere the exact quotient is within the stated 2 ulp.
struct DivApproxF {
  template <typename C>
  static C apply(C a, C b) {
    if (std::fabs(b) > C(0x1p126) && std::isfinite(b)) return a * std::copysign(C(0), b);
    return a / b;
  }
};

// The canonical NaN of a computation format: 0x7fffffff for f32 (and, once rounded, 0x7fff for
// f16 and bf16); 0x7fffffffffffffff for f64, whose min and max the ISA leaves unspecified.
template <typename C>
C canonical_nan() {
  if constexpr (sizeof(C) == 4) {
    return bits_float(0x7fffffffu);
  } else {
    return bits_double(0x7fffffffffffffffull);
  }
}

struct MinF {  // the non-NaN operand when one is NaN; -0 below +0
  template <typename C>
  static C apply(C a, C b) {
    if (std::isnan(a)) return std::isnan(b) ? canonical_nan<C>() : b;
    if (std::isnan(b)) return a;
    if (a == b) return std::signbit(a) ? a : b;
    return a < b ? a : b;
  }
};
struct MaxF {
  template <typename C>
  static C apply(C a, C b) {
    if (std::isnan(a)) return std::isnan(b) ? canonical_nan<C>() : b;
    if (std::isnan(b)) return a;
    if (a == b) return std::signbit(a) ? b : a;
    return a > b ? a : b;
  }
};
struct MinNaN {  // .NaN: a NaN operand gives the canonical NaN
  template <typename C>
  static C apply(C a, C b) {
    if (std::isnan(a) || std::isnan(b)) return canonical_nan<C>();
    return MinF::apply(a, b);
  }
};
struct MaxNaN {
  template <typename C>
  static C apply(C a, C b) {
    if (std::isnan(a) || std::isnan(b)) return canonical_nan<C>();
    return MaxF::apply(a, b);
  }
};
// min/max.xorsign.abs: of the magnitudes, with the XOR of the operands' signs unless the result
// is NaN.
template <typename F>
struct XorsignAbs {
  template <typename C>
  static C apply(C a, C b) {
    const bool negative = std::signbit(a) != std::signbit(b);
    const C r = F::apply(std::fabs(a), std::fabs(b));
    return std::isnan(r) ? r : std::copysign(r, negative ? C(-1) : C(1));
  }
};

struct CopysignF {  // copysign d, a, b: b's magnitude with a's sign
  template <typename C>
  static C apply(C a, C b) {
    return std::copysign(b, a);
  }
};
struct FmaF {
  template <typename C>
  static C apply(C a, C b, C c) {
    return std::fma(a, b, c);
  }
};
struct AbsF {  // abs.f64 passes NaNs through unchanged (f32 and halves: any NaN will do)
  template <typename C>
  static C apply(C a) {
    return std::isnan(a) ? a : std::fabs(a);
  }
};
struct NegF {
  template <typename C>
  static C apply(C a) {
    return -a;
  }
};
struct RcpF {
  template <typename C>
  static C apply(C a) {
    return C(1) / a;
  }
};
struct SqrtF {
  template <typename C>
  static C apply(C a) {
    return std::sqrt(a);
  }
};
struct RsqrtF {
  template <typename C>
  static C apply(C a) {
    return C(1) / std::sqrt(a);
  }
};
struct Ex2F {
  template <typename C>
  static C apply(C a) {
    return std::exp2(a);
  }
};
struct Lg2F {
  template <typename C>
  static C apply(C a) {
    return std::log2(a);
  }
};
struct SinF {
  template <typename C>
  static C apply(C a) {
    return std::sin(a);
  }
};
struct CosF {
  template <typename C>
  static C apply(C a) {
    return std::cos(a);
  }
};
struct TanhF {
  template <typename C>
  static C apply(C a) {
    return std::tanh(a);
  }
};

// ---- lane loops ---------------------------------------------------------------------------

// fma.rn.f32 without .ftz or .sat, the hottest instruction of matmul kernels. std::fma is a
// library call per lane unless the compiler may assume the host's fused multiply-add, which the
// build does not; this handler is compiled for it and chosen at decode time only on hosts that
// have it (the result is the same correctly rounded fma either way).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAL_PTX_VM_HARDWARE_FMA 1
__attribute__((target("fma"))) void fma_f32_hardware(Exec& x, const Op& op, uint32_t mask) {
  float* d = x.row<float>(op.a[0]);
  const float* a = x.row<float>(op.a[1]);
  const float* b = x.row<float>(op.a[2]);
  const float* c = x.row<float>(op.a[3]);
  if (mask == kFullMask) {
    for (uint32_t l = 0; l < kWarpSize; ++l) d[l] = __builtin_fmaf(a[l], b[l], c[l]);
    return;
  }
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    if (((mask >> l) & 1u) != 0) d[l] = __builtin_fmaf(a[l], b[l], c[l]);
  }
}
#endif

template <typename Fmt, typename F, bool kFtz, bool kSat>
void unary_f(Exec& x, const Op& op, uint32_t mask) {
  using S = typename Fmt::Storage;
  S* d = x.row<S>(op.a[0]);
  const S* a = x.row<S>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = out<Fmt, kFtz, kSat>(F::apply(in<Fmt, kFtz>(a[l]))); });
}

template <typename Fmt, typename F, bool kFtz, bool kSat>
void binary_f(Exec& x, const Op& op, uint32_t mask) {
  using S = typename Fmt::Storage;
  S* d = x.row<S>(op.a[0]);
  const S* a = x.row<S>(op.a[1]);
  const S* b = x.row<S>(op.a[2]);
  for_lanes(mask, [&](uint32_t l) {
    d[l] = out<Fmt, kFtz, kSat>(F::apply(in<Fmt, kFtz>(a[l]), in<Fmt, kFtz>(b[l])));
  });
}

template <typename Fmt, typename F, bool kFtz, bool kSat>
void ternary_f(Exec& x, const Op& op, uint32_t mask) {
  using S = typename Fmt::Storage;
  S* d = x.row<S>(op.a[0]);
  const S* a = x.row<S>(op.a[1]);
  const S* b = x.row<S>(op.a[2]);
  const S* c = x.row<S>(op.a[3]);
  for_lanes(mask, [&](uint32_t l) {
    d[l] = out<Fmt, kFtz, kSat>(
        F::apply(in<Fmt, kFtz>(a[l]), in<Fmt, kFtz>(b[l]), in<Fmt, kFtz>(c[l])));
  });
}

// Half-precision fma: the product is exact in double; the sum is rounded once to the format,
// with the sign of its rounding error in double so that no tie is made up (bf16 operands can
// differ in scale by far more than a double holds).
// .relu clamps negative results to +0: it is max(d, +0.0), under which -0.0 < +0.0 as in max.
// .sat clamps to [+0.0, 1.0] and sends NaN to +0.0.
template <typename Fmt, bool kFtz, bool kSat, bool kRelu>
void fma_half(Exec& x, const Op& op, uint32_t mask) {
  uint16_t* d = x.row<uint16_t>(op.a[0]);
  const uint16_t* a = x.row<uint16_t>(op.a[1]);
  const uint16_t* b = x.row<uint16_t>(op.a[2]);
  const uint16_t* c = x.row<uint16_t>(op.a[3]);
  for_lanes(mask, [&](uint32_t l) {
    const double p = double(in<Fmt, kFtz>(a[l])) * double(in<Fmt, kFtz>(b[l]));
    const double addend = double(in<Fmt, kFtz>(c[l]));
    double r = p + addend;
    int tail = sum_error_sign(p, addend, r);
    const bool relu_clamps = kRelu && !std::isnan(r) && std::signbit(r);
    const bool sat_low = kSat && !(r > 0.0);  // NaN, negatives and -0
    const bool sat_high = kSat && r >= 1.0;
    if (relu_clamps || sat_low || sat_high) {
      r = sat_high ? 1.0 : 0.0;
      tail = 0;
    }
    uint16_t s = std::is_same_v<Fmt, F16> ? double_to_half(r, Round::kNearest, tail)
                                          : double_to_bf16(r, Round::kNearest, tail);
    if (kFtz && std::is_same_v<Fmt, F16> && (s & 0x7c00u) == 0) s &= 0x8000u;
    d[l] = s;
  });
}

struct HandlerBox {
  Handler handler;
};

// The x2 forms: Op::ext holds the scalar handler, a[5] four scratch rows of 32 halves.
void each_half(Exec& x, const Op& o, uint32_t mask) {
  const Handler inner = static_cast<const HandlerBox*>(o.ext)->handler;
  uint16_t* scratch = x.row<uint16_t>(o.a[5]);
  const int n = o.flags + 1;
  for (int half = 0; half < 2; ++half) {
    Op split = o;
    for (int i = 1; i < n; ++i) {
      const uint16_t* src = x.row<uint16_t>(o.a[i]);
      uint16_t* dst = scratch + 32 * i;
      for (uint32_t l = 0; l < kWarpSize; ++l) dst[l] = src[2 * l + half];
      split.a[i] = o.a[5] + 64 * static_cast<uint32_t>(i);
    }
    split.a[0] = o.a[5];
    inner(x, split, mask);
    uint16_t* d = x.row<uint16_t>(o.a[0]);
    for_lanes(mask, [&](uint32_t l) { d[2 * l + half] = scratch[l]; });
  }
}

// Runs |H| with the host rounding mode |kMode| (FE_TOWARDZERO, ...).
template <Handler H, int kMode>
void rounded(Exec& x, const Op& op, uint32_t mask) {
  const int saved = std::fegetround();
  std::fesetround(kMode);
  H(x, op, mask);
  std::fesetround(saved);
}

// rcp.approx.ftz.f64 (imm 0) and rsqrt.approx.ftz.f64 (imm 1): computed from the upper 32 bits
// of the operand (sign, exponent and 20 fraction bits), with the low 32 bits of the result
// zero. Subnormal inputs and results flush to signed zeros; NaN results are 0x7fffffff00000000.
void gross_f64(Exec& x, const Op& op, uint32_t mask) {
  uint64_t* d = x.row<uint64_t>(op.a[0]);
  const uint64_t* a = x.row<uint64_t>(op.a[1]);
  const bool rsqrt = op.imm != 0;
  for_lanes(mask, [&](uint32_t l) {
    double v = bits_double(a[l] & 0xffffffff00000000ull);
    if (std::fpclassify(v) == FP_SUBNORMAL) v = std::copysign(0.0, v);
    double r = rsqrt ? 1.0 / std::sqrt(v) : 1.0 / v;
    if (std::fpclassify(r) == FP_SUBNORMAL) r = std::copysign(0.0, r);
    d[l] = std::isnan(r) ? 0x7fffffff00000000ull : double_bits(r) & 0xffffffff00000000ull;
  });
}

void testp(Exec& x, const Op& op, uint32_t mask) {
  const bool is64 = (op.flags & 1) != 0;
  uint32_t bits = 0;
  for_lanes(mask, [&](uint32_t l) {
    const double v = is64 ? x.row<double>(op.a[1])[l] : double(x.row<float>(op.a[1])[l]);
    bool r = false;
    switch (op.imm) {
      case 0:
        r = std::isfinite(v);
        break;
      case 1:
        r = std::isinf(v);
        break;
      case 2:
        r = !std::isnan(v);
        break;
      case 3:
        r = std::isnan(v);
        break;
      case 4:  // zeros count as normal numbers
        r = std::isfinite(v) &&
            (is64 ? std::fpclassify(v) : std::fpclassify(float(v))) != FP_SUBNORMAL;
        break;
      case 5:
        r = is64 ? std::fpclassify(v) == FP_SUBNORMAL : std::fpclassify(float(v)) == FP_SUBNORMAL;
        break;
    }
    if (r) bits |= 1u << l;
  });
  write_pred(x, op.a[0], bits, mask);
}

// ---- selection ----------------------------------------------------------------------------

template <typename Fmt, typename F>
Handler pick_unary(bool ftz, bool sat) {
  if (ftz) return sat ? unary_f<Fmt, F, true, true> : unary_f<Fmt, F, true, false>;
  return sat ? unary_f<Fmt, F, false, true> : unary_f<Fmt, F, false, false>;
}
template <typename Fmt, typename F>
Handler pick_binary(bool ftz, bool sat) {
  if (ftz) return sat ? binary_f<Fmt, F, true, true> : binary_f<Fmt, F, true, false>;
  return sat ? binary_f<Fmt, F, false, true> : binary_f<Fmt, F, false, false>;
}
template <typename Fmt, typename F>
Handler pick_ternary(bool ftz, bool sat) {
  if (ftz) return sat ? ternary_f<Fmt, F, true, true> : ternary_f<Fmt, F, true, false>;
  return sat ? ternary_f<Fmt, F, false, true> : ternary_f<Fmt, F, false, false>;
}

template <Handler H>
Handler with_mode(int mode) {
  switch (mode) {
    case FE_TOWARDZERO:
      return rounded<H, FE_TOWARDZERO>;
    case FE_DOWNWARD:
      return rounded<H, FE_DOWNWARD>;
    case FE_UPWARD:
      return rounded<H, FE_UPWARD>;
    default:
      return H;
  }
}

// The host rounding mode an instruction's modifier asks for.
int rounding_of(const ir::Instruction& ins) {
  if (ins.mods.has(M::kRz)) return FE_TOWARDZERO;
  if (ins.mods.has(M::kRm)) return FE_DOWNWARD;
  if (ins.mods.has(M::kRp)) return FE_UPWARD;
  return FE_TONEAREST;
}

enum class Kind { kF32, kF64, kF16, kBF16, kF16x2, kBF16x2 };

bool kind_of(ir::Type t, Kind* k) {
  switch (t) {
    case ir::Type::kF32:
      *k = Kind::kF32;
      return true;
    case ir::Type::kF64:
      *k = Kind::kF64;
      return true;
    case ir::Type::kF16:
      *k = Kind::kF16;
      return true;
    case ir::Type::kBF16:
      *k = Kind::kBF16;
      return true;
    case ir::Type::kF16x2:
      *k = Kind::kF16x2;
      return true;
    case ir::Type::kBF16x2:
      *k = Kind::kBF16x2;
      return true;
    default:
      return false;
  }
}

// A handler for op F over |kind|, with the pairs split into halves; |arity| 1, 2 or 3.
template <typename F, int kArity>
Handler pick(Kind kind, bool ftz, bool sat, int mode) {
  const auto for_fmt = [&](auto fmt) -> Handler {
    using Fmt = decltype(fmt);
    if constexpr (kArity == 1) return pick_unary<Fmt, F>(ftz, sat);
    if constexpr (kArity == 2) return pick_binary<Fmt, F>(ftz, sat);
    if constexpr (kArity == 3) return pick_ternary<Fmt, F>(ftz, sat);
    return nullptr;
  };
  Handler h = nullptr;
  switch (kind) {
    case Kind::kF32:
      h = for_fmt(F32{});
      break;
    case Kind::kF64:
      h = for_fmt(F64{});
      break;
    case Kind::kF16:
    case Kind::kF16x2:
      h = for_fmt(F16{});
      break;
    case Kind::kBF16:
    case Kind::kBF16x2:
      h = for_fmt(BF16{});
      break;
  }
  if (h == nullptr) return nullptr;
  if (mode != FE_TONEAREST) {
    if (kind != Kind::kF32 && kind != Kind::kF64) return nullptr;
#define HAL_ROUNDED(ftz_, sat_, Fmt)                                                  \
  if (ftz == ftz_ && sat == sat_) {                                                   \
    if constexpr (kArity == 1) return with_mode<unary_f<Fmt, F, ftz_, sat_>>(mode);   \
    if constexpr (kArity == 2) return with_mode<binary_f<Fmt, F, ftz_, sat_>>(mode);  \
    if constexpr (kArity == 3) return with_mode<ternary_f<Fmt, F, ftz_, sat_>>(mode); \
  }
    if (kind == Kind::kF32) {
      HAL_ROUNDED(false, false, F32)
      HAL_ROUNDED(true, false, F32)
      HAL_ROUNDED(false, true, F32)
      HAL_ROUNDED(true, true, F32)
    } else {
      HAL_ROUNDED(false, false, F64)
      HAL_ROUNDED(false, true, F64)
    }
#undef HAL_ROUNDED
    return nullptr;
  }
  return h;
}

}  // namespace

bool decode_float(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.types.size() != 1) return d.fail("expected exactly one type");
  const ir::Type t = ins.types[0];
  if (ins.opcode == O::kTestp) {
    if (t != ir::Type::kF32 && t != ir::Type::kF64) return d.fail("testp takes .f32 or .f64");
    if (ins.operands.size() != 2) return d.fail("testp takes a predicate and a value");
    op.a[0] = d.predicate(ins.operands[0]);
    op.a[1] = d.source(ins.operands[1], t);
    if (op.a[0] == kNoRef || op.a[1] == kNoRef) return false;
    static constexpr M kTests[] = {M::kFinite,     M::kInfinite, M::kNumber,
                                   M::kNotanumber, M::kNormal,   M::kSubnormal};
    op.imm = 6;
    for (uint32_t i = 0; i < 6; ++i) {
      if (ins.mods.has(kTests[i])) op.imm = i;
    }
    if (op.imm == 6) return d.fail("testp needs a test such as .finite");
    op.flags = t == ir::Type::kF64 ? 1 : 0;
    op.fn = testp;
    return true;
  }
  Kind kind;
  if (!kind_of(t, &kind)) {
    return d.fail(std::string("type .") + ir::type_name(t) + " is not a floating-point type here");
  }
  const bool pair = kind == Kind::kF16x2 || kind == Kind::kBF16x2;
  const bool ftz = ins.mods.has(M::kFtz);
  const bool sat = ins.mods.has(M::kSat);
  const int mode = rounding_of(ins);
  if (ftz && kind == Kind::kF64) {
    if ((ins.opcode != O::kRcp && ins.opcode != O::kRsqrt) || !ins.mods.has(M::kApprox)) {
      return d.fail(".ftz applies to .f64 only in rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64");
    }
    if (ins.operands.size() != 2) return d.fail("expected 2 operands");
    op.a[0] = d.destination(ins.operands[0], t);
    op.a[1] = d.source(ins.operands[1], t);
    if (op.a[0] == kNoRef || op.a[1] == kNoRef) return false;
    op.imm = ins.opcode == O::kRsqrt ? 1 : 0;
    op.fn = gross_f64;
    return true;
  }

  size_t arity = 0;
  Handler h = nullptr;
  switch (ins.opcode) {
    case O::kAdd:
      arity = 2;
      h = pick<AddF, 2>(kind, ftz, sat, mode);
      break;
    case O::kSub:
      arity = 2;
      h = pick<SubF, 2>(kind, ftz, sat, mode);
      break;
    case O::kMul:
      arity = 2;
      h = pick<MulF, 2>(kind, ftz, sat, mode);
      break;
    case O::kDiv:
      arity = 2;
      if (kind != Kind::kF32 && kind != Kind::kF64) return d.fail("div takes .f32 or .f64");
      h = ins.mods.has(M::kApprox) && kind == Kind::kF32
              ? pick<DivApproxF, 2>(kind, ftz, sat, FE_TONEAREST)
              : pick<DivF, 2>(kind, ftz, sat, mode);
      break;
    case O::kCopysign:
      arity = 2;
      if (kind != Kind::kF32 && kind != Kind::kF64) return d.fail("copysign takes .f32 or .f64");
      h = pick<CopysignF, 2>(kind, false, false, FE_TONEAREST);
      break;
    case O::kMin:
    case O::kMax: {
      arity = 2;
      const bool nan = ins.mods.has(M::kNaN);
      if (ins.mods.has(M::kXorsign) || ins.mods.has(M::kAbs)) {
        if (!ins.mods.has(M::kXorsign) || !ins.mods.has(M::kAbs) || kind == Kind::kF64) {
          return d.fail(".xorsign and .abs go together, on .f32 and half-precision types");
        }
        h = ins.opcode == O::kMin
                ? (nan ? pick<XorsignAbs<MinNaN>, 2>(kind, ftz, false, FE_TONEAREST)
                       : pick<XorsignAbs<MinF>, 2>(kind, ftz, false, FE_TONEAREST))
                : (nan ? pick<XorsignAbs<MaxNaN>, 2>(kind, ftz, false, FE_TONEAREST)
                       : pick<XorsignAbs<MaxF>, 2>(kind, ftz, false, FE_TONEAREST));
        break;
      }
      h = ins.opcode == O::kMin ? (nan ? pick<MinNaN, 2>(kind, ftz, false, FE_TONEAREST)
                                       : pick<MinF, 2>(kind, ftz, false, FE_TONEAREST))
                                : (nan ? pick<MaxNaN, 2>(kind, ftz, false, FE_TONEAREST)
                                       : pick<MaxF, 2>(kind, ftz, false, FE_TONEAREST));
      break;
    }
    case O::kFma:
    case O::kMad: {
      arity = 3;
      if (ins.mods.has(M::kOob)) return d.fail(".oob is not supported on the CPU PTX device");
      const bool relu = ins.mods.has(M::kRelu);
      if (kind == Kind::kF32 || kind == Kind::kF64) {
        if (relu) return d.fail(".relu applies to half-precision fma only");
        h = pick<FmaF, 3>(kind, ftz, sat, mode);
#ifdef HAL_PTX_VM_HARDWARE_FMA
        if (kind == Kind::kF32 && !ftz && !sat && mode == FE_TONEAREST &&
            __builtin_cpu_supports("fma")) {
          h = fma_f32_hardware;
        }
#endif
      } else {
        if (mode != FE_TONEAREST) return d.fail("half-precision fma rounds to nearest only");
        const bool f16 = kind == Kind::kF16 || kind == Kind::kF16x2;
#define HAL_FMA_HALF(Fmt)                                                                         \
  h = ftz ? (sat ? fma_half<Fmt, true, true, false>                                               \
                 : (relu ? fma_half<Fmt, true, false, true> : fma_half<Fmt, true, false, false>)) \
          : (sat ? fma_half<Fmt, false, true, false>                                              \
                 : (relu ? fma_half<Fmt, false, false, true>                                      \
                         : fma_half<Fmt, false, false, false>))
        if (f16) {
          HAL_FMA_HALF(F16);
        } else {
          HAL_FMA_HALF(BF16);
        }
#undef HAL_FMA_HALF
      }
      break;
    }
    case O::kAbs:
      arity = 1;
      h = pick<AbsF, 1>(kind, ftz, false, FE_TONEAREST);
      break;
    case O::kNeg:
      arity = 1;
      h = pick<NegF, 1>(kind, ftz, false, FE_TONEAREST);
      break;
    case O::kRcp:
      arity = 1;
      h = pick<RcpF, 1>(kind, ftz, sat, mode);
      break;
    case O::kSqrt:
      arity = 1;
      h = pick<SqrtF, 1>(kind, ftz, sat, mode);
      break;
    case O::kRsqrt:
      arity = 1;
      h = pick<RsqrtF, 1>(kind, ftz, sat, FE_TONEAREST);
      break;
    case O::kEx2:
      arity = 1;
      h = pick<Ex2F, 1>(kind, ftz, sat, FE_TONEAREST);
      break;
    case O::kLg2:
      arity = 1;
      h = pick<Lg2F, 1>(kind, ftz, sat, FE_TONEAREST);
      break;
    case O::kSin:
      arity = 1;
      h = pick<SinF, 1>(kind, ftz, sat, FE_TONEAREST);
      break;
    case O::kCos:
      arity = 1;
      h = pick<CosF, 1>(kind, ftz, sat, FE_TONEAREST);
      break;
    case O::kTanh:
      arity = 1;
      h = pick<TanhF, 1>(kind, ftz, sat, FE_TONEAREST);
      break;
    default:
      return d.fail("not a floating-point instruction");
  }
  if (h == nullptr) return d.fail("this combination of type and modifiers is not supported");
  if (ins.operands.size() != arity + 1) {
    return d.fail("expected " + std::to_string(arity + 1) + " operands");
  }
  op.a[0] = d.destination(ins.operands[0], t);
  if (op.a[0] == kNoRef) return false;
  for (size_t i = 1; i <= arity; ++i) {
    op.a[i] = d.source(ins.operands[i], t);
    if (op.a[i] == kNoRef) return false;
  }
  if (pair) {
    // A pair is two halves per lane: run the scalar handler on each half, gathered into
    // scratch rows (4 rows of 32 halves) and scattered back.
    op.a[5] = d.scratch(8);
    auto* box = d.kernel().make<HandlerBox>();
    box->handler = h;
    op.ext = box;
    op.flags = static_cast<uint8_t>(arity);
    op.fn = each_half;
    return true;
  }
  op.fn = h;
  return true;
}

}  // namespace hal::ptx_vm
