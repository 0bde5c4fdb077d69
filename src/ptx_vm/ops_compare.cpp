// Comparisons: setp (with an optional boolean combination and a second, complemented
// predicate), set, slct.
#include <cmath>

#include "ptx_vm/decode.h"
#include "ptx_vm/half.h"

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;
using O = ir::Opcode;

enum Cmp : uint8_t {
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,  // ordered for floats
  kLo,
  kLs,
  kHi,
  kHs,  // unsigned integer
  kEqu,
  kNeu,
  kLtu,
  kLeu,
  kGtu,
  kGeu,  // unordered floats: true when either is NaN
  kNum,
  kNan,
};

enum Combine : uint8_t { kNone, kAnd, kOr, kXor };

// Lane values as the comparison sees them: integers as themselves, halves widened to float.
template <typename S>
struct Value {
  static S get(S v) { return v; }
};
struct HalfValue {
  static float get(uint16_t v) { return half_to_float(v); }
};
struct BfValue {
  static float get(uint16_t v) { return bf16_to_float(v); }
};
struct FlushedFloat {  // .ftz: subnormal f32 operands compare as zero
  static float get(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? 0.0f : v; }
};
struct FlushedHalf {  // .ftz on f16 and f16x2: subnormal halves compare as zero
  static float get(uint16_t v) { return (v & 0x7c00u) == 0 ? 0.0f : half_to_float(v); }
};

template <typename V, typename A>
bool compare(Cmp cmp, A a, A b) {
  const auto x = V::get(a);
  const auto y = V::get(b);
  using C = decltype(x);
  if constexpr (std::is_floating_point_v<C>) {
    const bool unordered = std::isnan(x) || std::isnan(y);
    switch (cmp) {
      case kEq:
        return !unordered && x == y;
      case kNe:
        return !unordered && x != y;
      case kLt:
        return !unordered && x < y;
      case kLe:
        return !unordered && x <= y;
      case kGt:
        return !unordered && x > y;
      case kGe:
        return !unordered && x >= y;
      case kEqu:
        return unordered || x == y;
      case kNeu:
        return unordered || x != y;
      case kLtu:
        return unordered || x < y;
      case kLeu:
        return unordered || x <= y;
      case kGtu:
        return unordered || x > y;
      case kGeu:
        return unordered || x >= y;
      case kNum:
        return !unordered;
      case kNan:
        return unordered;
      default:
        return false;
    }
  } else {
    using U = std::make_unsigned_t<C>;
    switch (cmp) {
      case kEq:
        return x == y;
      case kNe:
        return x != y;
      case kLt:
        return x < y;
      case kLe:
        return x <= y;
      case kGt:
        return x > y;
      case kGe:
        return x >= y;
      case kLo:
        return U(x) < U(y);
      case kLs:
        return U(x) <= U(y);
      case kHi:
        return U(x) > U(y);
      case kHs:
        return U(x) >= U(y);
      default:
        return false;
    }
  }
}

// The comparison's result bits for the lanes in |mask|; a[1], a[2] are the operands. For the
// x2 forms |part| selects the low (0) or high (1) half.
template <typename V, typename S>
uint32_t compare_lanes(Exec& x, const Op& op, uint32_t mask, int part) {
  const Cmp cmp = static_cast<Cmp>(op.imm & 0xff);
  uint32_t bits = 0;
  if constexpr (sizeof(S) == 2 && !std::is_integral_v<decltype(V::get(S{}))>) {
    if (part >= 0) {
      const S* a = x.row<S>(op.a[1]);
      const S* b = x.row<S>(op.a[2]);
      for_lanes(mask, [&](uint32_t l) {
        if (compare<V>(cmp, a[2 * l + part], b[2 * l + part])) bits |= 1u << l;
      });
      return bits;
    }
  }
  const S* a = x.row<S>(op.a[1]);
  const S* b = x.row<S>(op.a[2]);
  for_lanes(mask, [&](uint32_t l) {
    if (compare<V>(cmp, a[l], b[l])) bits |= 1u << l;
  });
  return bits;
}

uint32_t combine(uint32_t bits, Combine how, uint32_t c) {
  switch (how) {
    case kAnd:
      return bits & c;
    case kOr:
      return bits | c;
    case kXor:
      return bits ^ c;
    default:
      return bits;
  }
}

// op: a[0] p, a[3] c (or kNoRef), a[4] q (or kNoRef); imm: cmp | combine << 8; flags bit 0:
// negate c, bit 1: x2 (p from the low halves, q from the high ones).
template <typename V, typename S>
void setp(Exec& x, const Op& op, uint32_t mask) {
  const Combine how = static_cast<Combine>((op.imm >> 8) & 0xff);
  uint32_t c = 0;
  if (op.a[3] != kNoRef) {
    c = x.word(op.a[3]);
    if ((op.flags & 1) != 0) c = ~c;
  }
  if ((op.flags & 2) != 0) {
    const uint32_t lo = compare_lanes<V, S>(x, op, mask, 0);
    const uint32_t hi = compare_lanes<V, S>(x, op, mask, 1);
    write_pred(x, op.a[0], combine(lo, how, c), mask);
    if (op.a[4] != kNoRef) write_pred(x, op.a[4], combine(hi, how, c), mask);
    return;
  }
  const uint32_t bits = compare_lanes<V, S>(x, op, mask, -1);
  write_pred(x, op.a[0], combine(bits, how, c), mask);
  if (op.a[4] != kNoRef) write_pred(x, op.a[4], combine(~bits, how, c), mask);
}

// What set writes where a comparison holds (0 where it does not), by destination type; imm
// bits 16 and up.
enum SetTrue : uint32_t {
  kAllOnes32,  // .u32, .s32
  kOneF32,     // .f32: 1.0
  kAllOnes16,  // .u16, .s16, and each half of .u32/.s32 from a pair comparison
  kOneF16,     // .f16 and each half of .f16x2: 1.0
  kOneBF16,    // .bf16 and each half of .bf16x2: 1.0
};

// set: d = the SetTrue value where true, 0 where false. flags bit 1: pairs (each half of d from
// its own halves of a and b).
template <typename V, typename S>
void set(Exec& x, const Op& op, uint32_t mask) {
  const Combine how = static_cast<Combine>((op.imm >> 8) & 0xff);
  const auto kind = static_cast<SetTrue>(op.imm >> 16);
  uint32_t c = 0;
  if (op.a[3] != kNoRef) {
    c = x.word(op.a[3]);
    if ((op.flags & 1) != 0) c = ~c;
  }
  static constexpr uint32_t kOne[] = {0xffffffffu, 0x3f800000u, 0xffffu, 0x3c00u, 0x3f80u};
  const uint32_t one = kOne[kind];
  if ((op.flags & 2) != 0) {
    const uint32_t lo = combine(compare_lanes<V, S>(x, op, mask, 0), how, c);
    const uint32_t hi = combine(compare_lanes<V, S>(x, op, mask, 1), how, c);
    uint32_t* d = x.row<uint32_t>(op.a[0]);
    for_lanes(mask, [&](uint32_t l) {
      d[l] = (((lo >> l) & 1u) != 0 ? one : 0u) | ((((hi >> l) & 1u) != 0 ? one : 0u) << 16);
    });
    return;
  }
  const uint32_t bits = combine(compare_lanes<V, S>(x, op, mask, -1), how, c);
  if (kind >= kAllOnes16) {
    uint16_t* d = x.row<uint16_t>(op.a[0]);
    for_lanes(mask, [&](uint32_t l) {
      d[l] = ((bits >> l) & 1u) != 0 ? static_cast<uint16_t>(one) : uint16_t{0};
    });
    return;
  }
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  for_lanes(mask, [&](uint32_t l) { d[l] = ((bits >> l) & 1u) != 0 ? one : 0u; });
}

// slct d, a, b, c: a where c >= 0, else b (-0.0 >= 0 holds; a NaN c, for which the comparison
// is false, selects b). flags bit 0: c is f32; bit 1: .ftz.
template <typename T>
void slct(Exec& x, const Op& op, uint32_t mask) {
  T* d = x.row<T>(op.a[0]);
  const T* a = x.row<T>(op.a[1]);
  const T* b = x.row<T>(op.a[2]);
  if ((op.flags & 1) != 0) {
    const float* c = x.row<float>(op.a[3]);
    for_lanes(mask, [&](uint32_t l) {
      float v = c[l];
      if ((op.flags & 2) != 0 && std::fpclassify(v) == FP_SUBNORMAL) v = 0;
      d[l] = v >= 0.0f ? a[l] : b[l];
    });
  } else {
    const int32_t* c = x.row<int32_t>(op.a[3]);
    for_lanes(mask, [&](uint32_t l) { d[l] = c[l] >= 0 ? a[l] : b[l]; });
  }
}

bool cmp_of(const ir::Instruction& ins, bool is_float, Cmp* out) {
  struct Pair {
    M mod;
    Cmp cmp;
  };
  static constexpr Pair kTable[] = {
      {M::kEq, kEq},   {M::kNe, kNe},   {M::kLt, kLt},   {M::kLe, kLe},   {M::kGt, kGt},
      {M::kGe, kGe},   {M::kLo, kLo},   {M::kLs, kLs},   {M::kHi, kHi},   {M::kHs, kHs},
      {M::kEqu, kEqu}, {M::kNeu, kNeu}, {M::kLtu, kLtu}, {M::kLeu, kLeu}, {M::kGtu, kGtu},
      {M::kGeu, kGeu}, {M::kNum, kNum}, {M::kNan, kNan},
  };
  int found = 0;
  for (const Pair& p : kTable) {
    if (ins.mods.has(p.mod)) {
      *out = p.cmp;
      ++found;
    }
  }
  if (found != 1) return false;
  const bool float_only = *out >= kEqu;
  const bool int_only = *out >= kLo && *out <= kHs;
  return is_float ? !int_only : !float_only;
}

Combine combine_of(const ir::Instruction& ins) {
  if (ins.mods.has(M::kAnd)) return kAnd;
  if (ins.mods.has(M::kOr)) return kOr;
  if (ins.mods.has(M::kXor)) return kXor;
  return kNone;
}

template <bool kSet, typename V, typename S>
Handler handler_for() {
  if constexpr (kSet) {
    return set<V, S>;
  } else {
    return setp<V, S>;
  }
}

template <bool kSet>
Handler pick(ir::Type t) {
  switch (t) {
    case ir::Type::kS16:
      return handler_for<kSet, Value<int16_t>, int16_t>();
    case ir::Type::kU16:
    case ir::Type::kB16:
      return handler_for<kSet, Value<uint16_t>, uint16_t>();
    case ir::Type::kS32:
      return handler_for<kSet, Value<int32_t>, int32_t>();
    case ir::Type::kU32:
    case ir::Type::kB32:
      return handler_for<kSet, Value<uint32_t>, uint32_t>();
    case ir::Type::kS64:
      return handler_for<kSet, Value<int64_t>, int64_t>();
    case ir::Type::kU64:
    case ir::Type::kB64:
      return handler_for<kSet, Value<uint64_t>, uint64_t>();
    case ir::Type::kF32:
      return handler_for<kSet, Value<float>, float>();
    case ir::Type::kF64:
      return handler_for<kSet, Value<double>, double>();
    case ir::Type::kF16:
    case ir::Type::kF16x2:
      return handler_for<kSet, HalfValue, uint16_t>();
    case ir::Type::kBF16:
    case ir::Type::kBF16x2:
      return handler_for<kSet, BfValue, uint16_t>();
    default:
      return nullptr;
  }
}

bool decode_setp_or_set(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  const bool is_set = ins.opcode == O::kSet;
  if (ins.types.size() != (is_set ? 2u : 1u)) {
    return d.fail(is_set ? "set takes a destination and a source type" : "setp takes one type");
  }
  const ir::Type t = ins.types.back();
  const bool is_float = ir::is_float(t);
  Cmp cmp;
  if (!cmp_of(ins, is_float, &cmp)) return d.fail("expected one comparison valid for the type");
  if (!is_float && ir::is_bits(t) && cmp != kEq && cmp != kNe) {
    return d.fail("bit types compare with .eq and .ne only");
  }
  const Combine how = combine_of(ins);
  const size_t n = ins.operands.size();
  if (n != (how == kNone ? 3u : 4u)) {
    return d.fail(how == kNone ? "expected a destination and two values"
                               : "a combined comparison needs a predicate operand");
  }
  op.imm = static_cast<uint32_t>(cmp) | (static_cast<uint32_t>(how) << 8);
  const bool pair = t == ir::Type::kF16x2 || t == ir::Type::kBF16x2;
  if (is_set) {
    // The destination types PTX allows: .u32, .s32, .f32, .f16 or .bf16 (1.0 where true) for
    // every source; besides, .u16/.s16 for f16 and bf16 sources, and for pairs the pair type or
    // .u32/.s32 (each half all ones or 1.0).
    using TT = ir::Type;
    const TT dt = ins.types[0];
    const bool half = t == TT::kF16 || t == TT::kBF16;
    SetTrue kind = kAllOnes32;
    if (pair) {
      if (dt == t) {
        kind = t == TT::kF16x2 ? kOneF16 : kOneBF16;
      } else if (dt == TT::kU32 || dt == TT::kS32) {
        kind = kAllOnes16;
      } else {
        return d.fail(std::string("set on .") + ir::type_name(t) + " writes ." + ir::type_name(t) +
                      ", .u32 or .s32");
      }
    } else if (dt == TT::kU32 || dt == TT::kS32) {
      kind = kAllOnes32;
    } else if (dt == TT::kF32) {
      kind = kOneF32;
    } else if (dt == TT::kF16 || dt == TT::kBF16) {  // set.CmpOp.f16.stype, any stype
      kind = dt == TT::kF16 ? kOneF16 : kOneBF16;
    } else if (half && (dt == TT::kU16 || dt == TT::kS16)) {
      kind = kAllOnes16;
    } else {
      return d.fail(half ? "set writes .u32, .s32, .f32, .f16, .bf16, .u16 or .s16"
                         : "set writes .u32, .s32, .f32, .f16 or .bf16");
    }
    op.a[0] = d.destination(ins.operands[0], dt);
    op.imm |= static_cast<uint32_t>(kind) << 16;
  } else {
    op.a[0] = d.predicate(ins.operands[0]);
    if (ins.operands[0].has_reg2) {
      ir::Operand second = ins.operands[0];
      second.reg = second.reg2;
      second.has_reg2 = false;
      op.a[4] = d.predicate(second);
      if (op.a[4] == kNoRef) return false;
    }
  }
  if (op.a[0] == kNoRef) return false;
  op.a[1] = d.source(ins.operands[1], t);
  op.a[2] = d.source(ins.operands[2], t);
  if (op.a[1] == kNoRef || op.a[2] == kNoRef) return false;
  if (how != kNone) {
    bool negate = false;
    op.a[3] = d.predicate(ins.operands[3], &negate);
    if (op.a[3] == kNoRef) return false;
    if (negate) op.flags |= 1;
  }
  if (pair) op.flags |= 2;
  if (ins.mods.has(M::kFtz) && t == ir::Type::kF32) {
    op.fn = is_set ? set<FlushedFloat, float> : setp<FlushedFloat, float>;
    return true;
  }
  if (ins.mods.has(M::kFtz) && (t == ir::Type::kF16 || t == ir::Type::kF16x2)) {
    op.fn = is_set ? set<FlushedHalf, uint16_t> : setp<FlushedHalf, uint16_t>;
    return true;
  }
  op.fn = is_set ? pick<true>(t) : pick<false>(t);
  return op.fn != nullptr || d.fail("unsupported comparison type");
}

bool decode_slct(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.types.size() != 2 || ins.operands.size() != 4) {
    return d.fail("slct takes two types and four operands");
  }
  const ir::Type t = ins.types[0];
  const ir::Type ct = ins.types[1];
  if (ct != ir::Type::kS32 && ct != ir::Type::kF32)
    return d.fail("slct's selector is .s32 or .f32");
  op.a[0] = d.destination(ins.operands[0], t);
  op.a[1] = d.source(ins.operands[1], t);
  op.a[2] = d.source(ins.operands[2], t);
  op.a[3] = d.source(ins.operands[3], ct);
  if (op.a[0] == kNoRef || op.a[1] == kNoRef || op.a[2] == kNoRef || op.a[3] == kNoRef) {
    return false;
  }
  op.flags = static_cast<uint8_t>((ct == ir::Type::kF32 ? 1 : 0) | (ins.mods.has(M::kFtz) ? 2 : 0));
  switch (ir::type_size(t)) {
    case 2:
      op.fn = slct<uint16_t>;
      break;
    case 4:
      op.fn = slct<uint32_t>;
      break;
    case 8:
      op.fn = slct<uint64_t>;
      break;
    default:
      return d.fail("unsupported slct type");
  }
  return true;
}

}  // namespace

bool decode_compare(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.opcode == O::kSlct) return decode_slct(d, ins, op);
  return decode_setp_or_set(d, ins, op);
}

}  // namespace hal::ptx_vm
