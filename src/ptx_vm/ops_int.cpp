// Integer arithmetic, logic, shifts and bit manipulation: add, sub, mul, mad (lo/hi/wide, cc and
// carry forms), mul24, mad24, sad, div, rem, abs, neg, min, max, and, or, xor, not, cnot, shl,
// shr, shf, lop3, popc, clz, brev, bfind, fns, bfe, bfi, prmt, dp4a, dp2a, bmsk, szext.
// Boolean and/or/xor/not on predicates live here too.
#include <algorithm>
#include <limits>
#include <type_traits>

#include "ptx_vm/decode.h"

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;
using O = ir::Opcode;

template <typename T>
using Wide = std::conditional_t<
    sizeof(T) == 2, std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>,
    std::conditional_t<sizeof(T) == 4, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>,
                       std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>>>;

// ---- generic lane loops -------------------------------------------------------------------

template <typename D, typename A, typename F>
void unary(Exec& x, const Op& op, uint32_t mask) {
  D* d = x.row<D>(op.a[0]);
  const A* a = x.row<A>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = F::apply(a[l]); });
}

template <typename D, typename A, typename B, typename F>
void binary(Exec& x, const Op& op, uint32_t mask) {
  D* d = x.row<D>(op.a[0]);
  const A* a = x.row<A>(op.a[1]);
  const B* b = x.row<B>(op.a[2]);
  for_lanes(mask, [&](uint32_t l) { d[l] = F::apply(a[l], b[l]); });
}

template <typename D, typename A, typename B, typename C, typename F>
void ternary(Exec& x, const Op& op, uint32_t mask) {
  D* d = x.row<D>(op.a[0]);
  const A* a = x.row<A>(op.a[1]);
  const B* b = x.row<B>(op.a[2]);
  const C* c = x.row<C>(op.a[3]);
  for_lanes(mask, [&](uint32_t l) { d[l] = F::apply(a[l], b[l], c[l]); });
}

// ---- functors ---------------------------------------------------------------------------------

template <typename T>
struct Add {
  static T apply(T a, T b) {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) +
                          static_cast<std::make_unsigned_t<T>>(b));
  }
};
template <typename T>
struct Sub {
  static T apply(T a, T b) {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) -
                          static_cast<std::make_unsigned_t<T>>(b));
  }
};
template <typename T>
struct AddSat {  // .sat for s32
  static T apply(T a, T b) {
    const int64_t r = int64_t{a} + int64_t{b};
    return static_cast<T>(
        std::clamp<int64_t>(r, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  }
};
template <typename T>
struct SubSat {
  static T apply(T a, T b) {
    const int64_t r = int64_t{a} - int64_t{b};
    return static_cast<T>(
        std::clamp<int64_t>(r, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  }
};
template <typename T>
struct MulLo {
  static T apply(T a, T b) {
    using U = std::make_unsigned_t<T>;
    using P = std::conditional_t<sizeof(T) < 4, uint32_t, U>;
    return static_cast<T>(static_cast<U>(P(U(a)) * P(U(b))));
  }
};
template <typename T>
struct MulHi {
  static T apply(T a, T b) {
    const Wide<T> p = Wide<T>(a) * Wide<T>(b);
    return static_cast<T>(p >> (8 * sizeof(T)));
  }
};
template <typename T>
struct MulWide {
  static Wide<T> apply(T a, T b) { return Wide<T>(a) * Wide<T>(b); }
};
template <typename T>
struct MadLo {
  static T apply(T a, T b, T c) { return Add<T>::apply(MulLo<T>::apply(a, b), c); }
};
template <typename T>
struct MadHi {
  static T apply(T a, T b, T c) { return Add<T>::apply(MulHi<T>::apply(a, b), c); }
};
template <typename T>
struct MadHiSat {  // mad.hi.sat.s32: the high half plus c, saturated
  static T apply(T a, T b, T c) {
    const int64_t r = int64_t{MulHi<T>::apply(a, b)} + int64_t{c};
    return static_cast<T>(
        std::clamp<int64_t>(r, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  }
};
template <typename T>
struct MadWide {
  static Wide<T> apply(T a, T b, Wide<T> c) {
    using U = std::make_unsigned_t<Wide<T>>;
    return static_cast<Wide<T>>(U(Wide<T>(a) * Wide<T>(b)) + U(c));
  }
};
template <typename T>
struct Mul24Lo {
  static T apply(T a, T b) {
    const int64_t x = std::is_signed_v<T> ? (int64_t(a) << 40) >> 40 : int64_t(a) & 0xffffff;
    const int64_t y = std::is_signed_v<T> ? (int64_t(b) << 40) >> 40 : int64_t(b) & 0xffffff;
    return static_cast<T>(static_cast<uint32_t>(x * y));
  }
};
template <typename T>
struct Mul24Hi {
  static T apply(T a, T b) {
    const int64_t x = std::is_signed_v<T> ? (int64_t(a) << 40) >> 40 : int64_t(a) & 0xffffff;
    const int64_t y = std::is_signed_v<T> ? (int64_t(b) << 40) >> 40 : int64_t(b) & 0xffffff;
    return static_cast<T>(static_cast<uint32_t>(static_cast<uint64_t>(x * y) >> 16));
  }
};
template <typename T>
struct Mad24Lo {
  static T apply(T a, T b, T c) { return Add<T>::apply(Mul24Lo<T>::apply(a, b), c); }
};
template <typename T>
struct Mad24Hi {
  static T apply(T a, T b, T c) { return Add<T>::apply(Mul24Hi<T>::apply(a, b), c); }
};
struct Mad24HiSat {  // mad24.hi.sat.s32: t<47..16> + c, saturated
  static int32_t apply(int32_t a, int32_t b, int32_t c) {
    const int64_t r = int64_t{Mul24Hi<int32_t>::apply(a, b)} + int64_t{c};
    return static_cast<int32_t>(std::clamp<int64_t>(r, std::numeric_limits<int32_t>::min(),
                                                    std::numeric_limits<int32_t>::max()));
  }
};
template <typename T>
struct Sad {
  static T apply(T a, T b, T c) {
    const T diff = a < b ? Sub<T>::apply(b, a) : Sub<T>::apply(a, b);
    return Add<T>::apply(c, diff);
  }
};
template <typename T>
// The ISA leaves division by zero and the one overflowing signed quotient undefined; they never
// trap here: a / 0 gives all ones (-1 for signed types), a % 0 gives a, MIN / -1 gives MIN and
// MIN % -1 gives 0.
struct Div {
  static T apply(T a, T b) {
    if (b == 0) return static_cast<T>(~T{0});
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return a;
    }
    return static_cast<T>(a / b);
  }
};
template <typename T>
struct Rem {
  static T apply(T a, T b) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return 0;
    }
    return static_cast<T>(a % b);
  }
};
template <typename T>
struct Min {
  static T apply(T a, T b) { return a < b ? a : b; }
};
template <typename T>
struct Max {
  static T apply(T a, T b) { return a > b ? a : b; }
};
template <typename T>
struct MaxRelu {
  static T apply(T a, T b) { return std::max<T>(std::max(a, b), 0); }
};
template <typename T>
struct MinRelu {
  static T apply(T a, T b) { return std::max<T>(std::min(a, b), 0); }
};
template <typename T>
struct Abs {
  static T apply(T a) {
    return a < 0 ? static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a)) : a;
  }
};
template <typename T>
struct Neg {
  static T apply(T a) { return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a)); }
};
template <typename T>
struct And {
  static T apply(T a, T b) { return a & b; }
};
template <typename T>
struct Or {
  static T apply(T a, T b) { return a | b; }
};
template <typename T>
struct Xor {
  static T apply(T a, T b) { return a ^ b; }
};
template <typename T>
struct Not {
  static T apply(T a) { return static_cast<T>(~a); }
};
template <typename T>
struct Cnot {
  static T apply(T a) { return a == 0 ? 1 : 0; }
};
template <typename T>
struct Shl {  // the amount is an unsigned 32-bit value; amounts past the width give 0
  static T apply(T a, uint32_t n) {
    using U = std::make_unsigned_t<T>;
    return n >= 8 * sizeof(T) ? T{0} : static_cast<T>(static_cast<U>(U(a) << n));
  }
};
template <typename T>
struct Shr {  // arithmetic for signed types, logical otherwise
  static T apply(T a, uint32_t n) {
    if (n >= 8 * sizeof(T)) return std::is_signed_v<T> && a < 0 ? T(-1) : T{0};
    return static_cast<T>(a >> n);
  }
};
template <typename T>
struct Popc {
  static uint32_t apply(T a) {
    return static_cast<uint32_t>(__builtin_popcountll(static_cast<uint64_t>(a)));
  }
};
template <typename T>
struct Clz {
  static uint32_t apply(T a) {
    const uint64_t v = static_cast<std::make_unsigned_t<T>>(a);
    if (v == 0) return 8 * sizeof(T);
    return static_cast<uint32_t>(__builtin_clzll(v)) - (64 - 8 * sizeof(T));
  }
};
template <typename T>
struct Brev {
  static T apply(T a) {
    using U = std::make_unsigned_t<T>;
    U v = static_cast<U>(a), r = 0;
    for (unsigned i = 0; i < 8 * sizeof(T); ++i) r = static_cast<U>((r << 1) | ((v >> i) & 1u));
    return static_cast<T>(r);
  }
};
template <typename T, bool kShiftamt>
struct Bfind {
  static uint32_t apply(T a) {
    using U = std::make_unsigned_t<T>;
    U v = static_cast<U>(a);
    if constexpr (std::is_signed_v<T>) {
      if (a < 0) v = static_cast<U>(~v);  // the most significant non-sign bit
    }
    if (v == 0) return 0xffffffffu;
    const uint32_t pos = 63 - static_cast<uint32_t>(__builtin_clzll(uint64_t{v}));
    return kShiftamt ? (8 * sizeof(T) - 1) - pos : pos;
  }
};
template <typename T>
struct Bfe {  // d = bits [pos, pos + len) of a, sign-extended for signed types
  static T apply(T a, uint32_t b, uint32_t c) {
    using U = std::make_unsigned_t<T>;
    constexpr uint32_t msb = 8 * sizeof(T) - 1;
    const uint32_t pos = b & 0xff, len = c & 0xff;
    const U v = static_cast<U>(a);
    bool sbit = false;
    if constexpr (std::is_signed_v<T>) {
      if (len != 0) {
        const uint32_t top = std::min(pos + len - 1, msb);
        sbit = ((v >> top) & 1u) != 0;
      }
    }
    U d = 0;
    for (uint32_t i = 0; i <= msb; ++i) {
      const bool bit = (i < len && pos + i <= msb) ? ((v >> (pos + i)) & 1u) != 0 : sbit;
      if (bit) d = static_cast<U>(d | (U{1} << i));
    }
    return static_cast<T>(d);
  }
};
template <typename T>
struct Bfi {  // d = b with bits [pos, pos + len) replaced by the low bits of a
  static T apply(T a, T b, uint32_t c, uint32_t dd) {
    using U = std::make_unsigned_t<T>;
    constexpr uint32_t msb = 8 * sizeof(T) - 1;
    const uint32_t pos = c & 0xff, len = dd & 0xff;
    if (len == 0 || pos > msb) return b;
    // The field is cut off at the top of the word: at most msb + 1 - pos bits fit.
    const uint32_t bits = std::min(len, msb + 1 - pos);
    const U ones = bits > msb ? static_cast<U>(~U{0}) : static_cast<U>((U{1} << bits) - 1u);
    const U field = static_cast<U>(ones << pos);
    return static_cast<T>((static_cast<U>(b) & static_cast<U>(~field)) |
                          (static_cast<U>(static_cast<U>(a) << pos) & field));
  }
};

// ---- handlers with unusual shapes --------------------------------------------------------------

template <typename T>
void bfi(Exec& x, const Op& op, uint32_t mask) {
  T* d = x.row<T>(op.a[0]);
  const T* a = x.row<T>(op.a[1]);
  const T* b = x.row<T>(op.a[2]);
  const uint32_t* c = x.row<uint32_t>(op.a[3]);
  const uint32_t* e = x.row<uint32_t>(op.a[4]);
  for_lanes(mask, [&](uint32_t l) { d[l] = Bfi<T>::apply(a[l], b[l], c[l], e[l]); });
}

uint32_t prmt_byte(uint64_t source, uint32_t selector, bool sign) {
  const uint32_t byte = static_cast<uint32_t>(source >> (8 * (selector & 7))) & 0xffu;
  if (sign) return (byte & 0x80u) != 0 ? 0xffu : 0u;
  return byte;
}

// Modes: 0 generic, then f4e, b4e, rc8, ecl, ecr, rc16 (op.imm).
void prmt(Exec& x, const Op& op, uint32_t mask) {
  static constexpr uint8_t kTable[6][4][4] = {
      // [mode][c & 3][byte of d, 0..3]
      {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},  // f4e
      {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},  // b4e
      {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},  // rc8
      {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},  // ecl
      {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},  // ecr
      {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},  // rc16
  };
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  const uint32_t* b = x.row<uint32_t>(op.a[2]);
  const uint32_t* c = x.row<uint32_t>(op.a[3]);
  const uint32_t mode = op.imm;
  for_lanes(mask, [&](uint32_t l) {
    const uint64_t source = (uint64_t{b[l]} << 32) | a[l];
    uint32_t r = 0;
    for (uint32_t i = 0; i < 4; ++i) {
      uint32_t byte = 0;
      if (mode == 0) {
        const uint32_t ctl = (c[l] >> (4 * i)) & 0xfu;
        byte = prmt_byte(source, ctl, (ctl & 8u) != 0);
      } else {
        byte = prmt_byte(source, kTable[mode - 1][c[l] & 3u][i], false);
      }
      r |= byte << (8 * i);
    }
    d[l] = r;
  });
}

// shf.{l,r}.{wrap,clamp}.b32: flags bit 0 = right, bit 1 = clamp.
void shf(Exec& x, const Op& op, uint32_t mask) {
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  const uint32_t* b = x.row<uint32_t>(op.a[2]);
  const uint32_t* c = x.row<uint32_t>(op.a[3]);
  const bool right = (op.flags & 1) != 0;
  const bool clamp = (op.flags & 2) != 0;
  for_lanes(mask, [&](uint32_t l) {
    const uint32_t n = clamp ? std::min(c[l], 32u) : (c[l] & 31u);
    const uint64_t both = (uint64_t{b[l]} << 32) | a[l];
    d[l] = right ? static_cast<uint32_t>(both >> n) : static_cast<uint32_t>((both << n) >> 32);
  });
}

template <typename T>
T lop3_value(T a, T b, T c, uint32_t lut) {
  T r = 0;
  for (uint32_t k = 0; k < 8; ++k) {
    if (((lut >> k) & 1u) == 0) continue;
    const T ta = (k & 4u) ? a : static_cast<T>(~a);
    const T tb = (k & 2u) ? b : static_cast<T>(~b);
    const T tc = (k & 1u) ? c : static_cast<T>(~c);
    r = static_cast<T>(r | (ta & tb & tc));
  }
  return r;
}

template <typename T>
void lop3(Exec& x, const Op& op, uint32_t mask) {
  T* d = x.row<T>(op.a[0]);
  const T* a = x.row<T>(op.a[1]);
  const T* b = x.row<T>(op.a[2]);
  const T* c = x.row<T>(op.a[3]);
  const uint32_t lut = op.imm;
  for_lanes(mask, [&](uint32_t l) { d[l] = lop3_value(a[l], b[l], c[l], lut); });
}

// lop3.{or,and}.b32 d|p, a, b, c, lut, q: p = (d != 0) BoolOp q. a[4] p, a[5] q; flags bit 0:
// .and (else .or), bit 1: q negated.
void lop3_pred(Exec& x, const Op& op, uint32_t mask) {
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  const uint32_t* b = x.row<uint32_t>(op.a[2]);
  const uint32_t* c = x.row<uint32_t>(op.a[3]);
  uint32_t q = x.word(op.a[5]);
  if ((op.flags & 2) != 0) q = ~q;
  uint32_t nonzero = 0;
  for_lanes(mask, [&](uint32_t l) {
    d[l] = lop3_value(a[l], b[l], c[l], op.imm);
    if (d[l] != 0) nonzero |= 1u << l;
  });
  write_pred(x, op.a[4], (op.flags & 1) != 0 ? (nonzero & q) : (nonzero | q), mask);
}

// fns.b32 d, mask, base, offset: the position of the |offset|-th set bit of |mask| counting
// from |base| (up for offset > 0, down for offset < 0), or 0xffffffff. A base above 31 is
// undefined in the ISA; its low 5 bits are used.
void fns(Exec& x, const Op& op, uint32_t mask) {
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t* m = x.row<uint32_t>(op.a[1]);
  const uint32_t* base = x.row<uint32_t>(op.a[2]);
  const int32_t* offset = x.row<int32_t>(op.a[3]);
  for_lanes(mask, [&](uint32_t l) {
    uint32_t result = 0xffffffffu;
    int32_t n = offset[l];
    const uint32_t b = base[l] & 31u;
    if (n == 0) {
      result = ((m[l] >> b) & 1u) != 0 ? b : 0xffffffffu;
    } else if (n > 0) {
      for (uint32_t pos = b; pos < 32; ++pos) {
        if (((m[l] >> pos) & 1u) != 0 && --n == 0) {
          result = pos;
          break;
        }
      }
    } else {
      for (int32_t pos = static_cast<int32_t>(b); pos >= 0; --pos) {
        if (((m[l] >> pos) & 1u) != 0 && ++n == 0) {
          result = static_cast<uint32_t>(pos);
          break;
        }
      }
    }
    d[l] = result;
  });
}

// dp4a.atype.btype d, a, b, c: c + four byte products; flags bit 0 = a signed, bit 1 = b signed.
void dp4a(Exec& x, const Op& op, uint32_t mask) {
  int32_t* d = x.row<int32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  const uint32_t* b = x.row<uint32_t>(op.a[2]);
  const int32_t* c = x.row<int32_t>(op.a[3]);
  const bool sa = (op.flags & 1) != 0, sb = (op.flags & 2) != 0;
  for_lanes(mask, [&](uint32_t l) {
    int64_t sum = c[l];
    for (int i = 0; i < 4; ++i) {
      const uint32_t ba = (a[l] >> (8 * i)) & 0xffu, bb = (b[l] >> (8 * i)) & 0xffu;
      const int64_t va = sa ? int64_t(int8_t(ba)) : int64_t(ba);
      const int64_t vb = sb ? int64_t(int8_t(bb)) : int64_t(bb);
      sum += va * vb;
    }
    d[l] = static_cast<int32_t>(static_cast<uint32_t>(sum));
  });
}

// dp2a.{lo,hi}: two 16-bit products with two bytes of b (low or high half); flags bit 2 = hi.
void dp2a(Exec& x, const Op& op, uint32_t mask) {
  int32_t* d = x.row<int32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  const uint32_t* b = x.row<uint32_t>(op.a[2]);
  const int32_t* c = x.row<int32_t>(op.a[3]);
  const bool sa = (op.flags & 1) != 0, sb = (op.flags & 2) != 0, hi = (op.flags & 4) != 0;
  for_lanes(mask, [&](uint32_t l) {
    int64_t sum = c[l];
    for (int i = 0; i < 2; ++i) {
      const uint32_t ha = (a[l] >> (16 * i)) & 0xffffu;
      const uint32_t bb = (b[l] >> (8 * (i + (hi ? 2 : 0)))) & 0xffu;
      const int64_t va = sa ? int64_t(int16_t(ha)) : int64_t(ha);
      const int64_t vb = sb ? int64_t(int8_t(bb)) : int64_t(bb);
      sum += va * vb;
    }
    d[l] = static_cast<int32_t>(static_cast<uint32_t>(sum));
  });
}

// bmsk.{clamp,wrap}.b32 d, a, b: b ones starting at bit a; flags 1 = wrap.
void bmsk(Exec& x, const Op& op, uint32_t mask) {
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  const uint32_t* b = x.row<uint32_t>(op.a[2]);
  const bool wrap = op.flags != 0;
  for_lanes(mask, [&](uint32_t l) {
    const uint32_t pos = wrap ? a[l] & 31u : std::min(a[l], 32u);
    const uint32_t len = wrap ? b[l] & 31u : std::min(b[l], 32u);
    const uint64_t ones = len >= 32 ? 0xffffffffull : ((1ull << len) - 1);
    d[l] = static_cast<uint32_t>((ones << pos) & 0xffffffffull);
  });
}

// szext.{clamp,wrap}.{u32,s32} d, a, b: keep the low b bits of a, zero- or sign-extended;
// flags bit 0 = wrap, bit 1 = signed.
void szext(Exec& x, const Op& op, uint32_t mask) {
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  const uint32_t* b = x.row<uint32_t>(op.a[2]);
  const bool wrap = (op.flags & 1) != 0, is_signed = (op.flags & 2) != 0;
  for_lanes(mask, [&](uint32_t l) {
    const uint32_t n = wrap ? b[l] & 31u : std::min(b[l], 32u);
    if (n >= 32) {
      d[l] = a[l];
    } else if (n == 0) {
      d[l] = 0;
    } else {
      const uint32_t low = a[l] & ((1u << n) - 1u);
      const bool negative = is_signed && ((low >> (n - 1)) & 1u) != 0;
      d[l] = negative ? (low | ~((1u << n) - 1u)) : low;
    }
  });
}

// ---- carry chains: add.cc, addc, sub.cc, subc, mad.cc, madc ------------------------------------

// imm bits: 1 = carry in, 2 = carry out, 4 = subtract, 8 = mad (a * b + c), 16 = mad .hi,
// 32 = signed operands (the product's high half of mad.hi.s32 / .s64 is signed; the carry is
// always the unsigned carry out of the addition).
template <typename U>
void carry_op(Exec& x, const Op& op, uint32_t mask) {
  U* d = x.row<U>(op.a[0]);
  const U* a = x.row<U>(op.a[1]);
  const U* b = x.row<U>(op.a[2]);
  const U* c = op.a[3] != kNoRef ? x.row<U>(op.a[3]) : nullptr;
  uint32_t& cc = x.word(x.kernel->cc_ref);
  const bool carry_in = (op.imm & 1) != 0, carry_out = (op.imm & 2) != 0;
  const bool subtract = (op.imm & 4) != 0, mad = (op.imm & 8) != 0, hi = (op.imm & 16) != 0;
  uint32_t out = cc;
  for_lanes(mask, [&](uint32_t l) {
    const U cin = carry_in ? U((cc >> l) & 1u) : U{0};
    U lhs = a[l], rhs = b[l];
    if (mad) {
      using W = std::conditional_t<sizeof(U) == 4, uint64_t, unsigned __int128>;
      using S = std::make_signed_t<U>;
      using SW = std::conditional_t<sizeof(U) == 4, int64_t, __int128>;
      const W p = (op.imm & 32) != 0 ? W(SW(S(a[l])) * SW(S(b[l]))) : W(a[l]) * W(b[l]);
      lhs = hi ? U(p >> (8 * sizeof(U))) : U(p);
      rhs = c[l];
    }
    using W = std::conditional_t<sizeof(U) == 4, uint64_t, unsigned __int128>;
    W r;
    bool flag;
    if (subtract) {
      r = W(lhs) - W(rhs) - W(cin);
      flag = W(lhs) < W(rhs) + W(cin);  // borrow
    } else {
      r = W(lhs) + W(rhs) + W(cin);
      flag = (r >> (8 * sizeof(U))) != 0;  // carry
    }
    d[l] = static_cast<U>(r);
    if (flag) {
      out |= 1u << l;
    } else {
      out &= ~(1u << l);
    }
  });
  if (carry_out) cc = out;
}

// ---- predicate logic ----------------------------------------------------------------------

// and/or/xor/not .pred: imm 0 and, 1 or, 2 xor, 3 not, 4 cnot (not); flags bit 0/1 negate a/b.
void pred_logic(Exec& x, const Op& op, uint32_t mask) {
  uint32_t a = x.word(op.a[1]);
  if ((op.flags & 1) != 0) a = ~a;
  uint32_t b = op.a[2] != kNoRef ? x.word(op.a[2]) : 0;
  if ((op.flags & 2) != 0) b = ~b;
  uint32_t r = 0;
  switch (op.imm) {
    case 0:
      r = a & b;
      break;
    case 1:
      r = a | b;
      break;
    case 2:
      r = a ^ b;
      break;
    default:
      r = ~a;
      break;
  }
  write_pred(x, op.a[0], r, mask);
}

// ---- selection by type --------------------------------------------------------------------

template <template <typename> class F>
Handler pick_binary(ir::Type t) {
  switch (t) {
    case ir::Type::kS16:
      return binary<int16_t, int16_t, int16_t, F<int16_t>>;
    case ir::Type::kU16:
    case ir::Type::kB16:
      return binary<uint16_t, uint16_t, uint16_t, F<uint16_t>>;
    case ir::Type::kS32:
      return binary<int32_t, int32_t, int32_t, F<int32_t>>;
    case ir::Type::kU32:
    case ir::Type::kB32:
      return binary<uint32_t, uint32_t, uint32_t, F<uint32_t>>;
    case ir::Type::kS64:
      return binary<int64_t, int64_t, int64_t, F<int64_t>>;
    case ir::Type::kU64:
    case ir::Type::kB64:
      return binary<uint64_t, uint64_t, uint64_t, F<uint64_t>>;
    default:
      return nullptr;
  }
}

template <template <typename> class F>
Handler pick_ternary(ir::Type t) {
  switch (t) {
    case ir::Type::kS16:
      return ternary<int16_t, int16_t, int16_t, int16_t, F<int16_t>>;
    case ir::Type::kU16:
    case ir::Type::kB16:
      return ternary<uint16_t, uint16_t, uint16_t, uint16_t, F<uint16_t>>;
    case ir::Type::kS32:
      return ternary<int32_t, int32_t, int32_t, int32_t, F<int32_t>>;
    case ir::Type::kU32:
    case ir::Type::kB32:
      return ternary<uint32_t, uint32_t, uint32_t, uint32_t, F<uint32_t>>;
    case ir::Type::kS64:
      return ternary<int64_t, int64_t, int64_t, int64_t, F<int64_t>>;
    case ir::Type::kU64:
    case ir::Type::kB64:
      return ternary<uint64_t, uint64_t, uint64_t, uint64_t, F<uint64_t>>;
    default:
      return nullptr;
  }
}

template <template <typename> class F>
Handler pick_unary(ir::Type t) {
  switch (t) {
    case ir::Type::kS16:
      return unary<int16_t, int16_t, F<int16_t>>;
    case ir::Type::kU16:
    case ir::Type::kB16:
      return unary<uint16_t, uint16_t, F<uint16_t>>;
    case ir::Type::kS32:
      return unary<int32_t, int32_t, F<int32_t>>;
    case ir::Type::kU32:
    case ir::Type::kB32:
      return unary<uint32_t, uint32_t, F<uint32_t>>;
    case ir::Type::kS64:
      return unary<int64_t, int64_t, F<int64_t>>;
    case ir::Type::kU64:
    case ir::Type::kB64:
      return unary<uint64_t, uint64_t, F<uint64_t>>;
    default:
      return nullptr;
  }
}

// Unary functors whose result is a u32 count (popc, clz, bfind).
template <template <typename> class F>
Handler pick_count(ir::Type t) {
  switch (t) {
    case ir::Type::kS32:
      return unary<uint32_t, int32_t, F<int32_t>>;
    case ir::Type::kU32:
    case ir::Type::kB32:
      return unary<uint32_t, uint32_t, F<uint32_t>>;
    case ir::Type::kS64:
      return unary<uint32_t, int64_t, F<int64_t>>;
    case ir::Type::kU64:
    case ir::Type::kB64:
      return unary<uint32_t, uint64_t, F<uint64_t>>;
    default:
      return nullptr;
  }
}

// Shifts: the amount is .u32 whatever the type.
template <template <typename> class F>
Handler pick_shift(ir::Type t) {
  switch (t) {
    case ir::Type::kS16:
      return binary<int16_t, int16_t, uint32_t, F<int16_t>>;
    case ir::Type::kU16:
    case ir::Type::kB16:
      return binary<uint16_t, uint16_t, uint32_t, F<uint16_t>>;
    case ir::Type::kS32:
      return binary<int32_t, int32_t, uint32_t, F<int32_t>>;
    case ir::Type::kU32:
    case ir::Type::kB32:
      return binary<uint32_t, uint32_t, uint32_t, F<uint32_t>>;
    case ir::Type::kS64:
      return binary<int64_t, int64_t, uint32_t, F<int64_t>>;
    case ir::Type::kU64:
    case ir::Type::kB64:
      return binary<uint64_t, uint64_t, uint32_t, F<uint64_t>>;
    default:
      return nullptr;
  }
}

template <typename T>
struct BfindPlain : Bfind<T, false> {};
template <typename T>
struct BfindShift : Bfind<T, true> {};

// The type of mul.wide's (and mad.wide's) result.
ir::Type wide_type(ir::Type t) {
  switch (t) {
    case ir::Type::kS16:
      return ir::Type::kS32;
    case ir::Type::kU16:
      return ir::Type::kU32;
    case ir::Type::kS32:
      return ir::Type::kS64;
    case ir::Type::kU32:
      return ir::Type::kU64;
    default:
      return ir::Type::kNone;
  }
}

Handler pick_mul_wide(ir::Type t) {
  switch (t) {
    case ir::Type::kS16:
      return binary<int32_t, int16_t, int16_t, MulWide<int16_t>>;
    case ir::Type::kU16:
      return binary<uint32_t, uint16_t, uint16_t, MulWide<uint16_t>>;
    case ir::Type::kS32:
      return binary<int64_t, int32_t, int32_t, MulWide<int32_t>>;
    case ir::Type::kU32:
      return binary<uint64_t, uint32_t, uint32_t, MulWide<uint32_t>>;
    default:
      return nullptr;
  }
}

Handler pick_mad_wide(ir::Type t) {
  switch (t) {
    case ir::Type::kS16:
      return ternary<int32_t, int16_t, int16_t, int32_t, MadWide<int16_t>>;
    case ir::Type::kU16:
      return ternary<uint32_t, uint16_t, uint16_t, uint32_t, MadWide<uint16_t>>;
    case ir::Type::kS32:
      return ternary<int64_t, int32_t, int32_t, int64_t, MadWide<int32_t>>;
    case ir::Type::kU32:
      return ternary<uint64_t, uint32_t, uint32_t, uint64_t, MadWide<uint32_t>>;
    default:
      return nullptr;
  }
}

// Reads operands [first, first + count) as sources of |type| into op.a[first..].
bool sources(DecodeContext& d, const ir::Instruction& ins, Op& op, size_t first, size_t count,
             ir::Type type) {
  for (size_t i = first; i < first + count; ++i) {
    op.a[i] = d.source(ins.operands[i], type);
    if (op.a[i] == kNoRef) return false;
  }
  return true;
}

bool expect(DecodeContext& d, const ir::Instruction& ins, size_t operands) {
  if (ins.operands.size() != operands) {
    return d.fail("expected " + std::to_string(operands) + " operands, found " +
                  std::to_string(ins.operands.size()));
  }
  if (ins.types.size() != 1) return d.fail("expected exactly one type");
  return true;
}

bool decode_pred_logic(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  const size_t n = ins.opcode == O::kNot || ins.opcode == O::kCnot ? 2 : 3;
  if (ins.operands.size() != n) return d.fail("wrong number of operands");
  op.a[0] = d.predicate(ins.operands[0]);
  bool na = false, nb = false;
  op.a[1] = d.predicate(ins.operands[1], &na);
  if (n == 3) op.a[2] = d.predicate(ins.operands[2], &nb);
  if (op.a[0] == kNoRef || op.a[1] == kNoRef || (n == 3 && op.a[2] == kNoRef)) return false;
  op.flags = static_cast<uint8_t>((na ? 1 : 0) | (nb ? 2 : 0));
  switch (ins.opcode) {
    case O::kAnd:
      op.imm = 0;
      break;
    case O::kOr:
      op.imm = 1;
      break;
    case O::kXor:
      op.imm = 2;
      break;
    default:
      op.imm = 3;
      break;
  }
  op.fn = pred_logic;
  return true;
}

bool decode_carry(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  const ir::Type t = ins.types.empty() ? ir::Type::kNone : ins.types[0];
  if (ir::type_size(t) != 4 && ir::type_size(t) != 8) {
    return d.fail("carry arithmetic takes 32- or 64-bit integers");
  }
  const bool mad = ins.opcode == O::kMad || ins.opcode == O::kMadc;
  if (!expect(d, ins, mad ? 4 : 3)) return false;
  op.a[0] = d.destination(ins.operands[0], t);
  if (op.a[0] == kNoRef || !sources(d, ins, op, 1, mad ? 3 : 2, t)) return false;
  uint32_t imm = 0;
  if (ins.opcode == O::kAddc || ins.opcode == O::kSubc || ins.opcode == O::kMadc) imm |= 1;
  if (ins.mods.has(M::kCc)) imm |= 2;
  if (ins.opcode == O::kSub || ins.opcode == O::kSubc) imm |= 4;
  if (mad) imm |= 8;
  if (mad && ins.mods.has(M::kHi)) imm |= 16;
  if (ir::is_signed(t)) imm |= 32;
  if (mad && !ins.mods.has(M::kHi) && !ins.mods.has(M::kLo)) {
    return d.fail("mad.cc and madc need .lo or .hi");
  }
  op.imm = imm;
  d.carry();
  op.fn = ir::type_size(t) == 4 ? carry_op<uint32_t> : carry_op<uint64_t>;
  return true;
}

}  // namespace

bool decode_integer(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  const ir::Type t = ins.types.empty() ? ir::Type::kNone : ins.types[0];
  if (t == ir::Type::kPred &&
      (ins.opcode == O::kAnd || ins.opcode == O::kOr || ins.opcode == O::kXor ||
       ins.opcode == O::kNot || ins.opcode == O::kCnot)) {
    return decode_pred_logic(d, ins, op);
  }
  if (!is_integer_type(t)) {
    return d.fail(std::string("type .") + ir::type_name(t) + " is not an integer type here");
  }
  const bool is_signed = ir::is_signed(t);
  const auto dst = [&](ir::Type type) {
    op.a[0] = d.destination(ins.operands[0], type);
    return op.a[0] != kNoRef;
  };
  const auto done = [&](Handler h) {
    op.fn = h;
    return h != nullptr || d.fail("this type is not supported");
  };

  switch (ins.opcode) {
    case O::kAdd:
    case O::kSub: {
      if (ins.mods.has(M::kCc)) return decode_carry(d, ins, op);
      if (!expect(d, ins, 3) || !dst(t) || !sources(d, ins, op, 1, 2, t)) return false;
      if (ins.mods.has(M::kSat)) {
        if (t != ir::Type::kS32) return d.fail(".sat applies to .s32 only");
        return done(ins.opcode == O::kAdd ? binary<int32_t, int32_t, int32_t, AddSat<int32_t>>
                                          : binary<int32_t, int32_t, int32_t, SubSat<int32_t>>);
      }
      return done(ins.opcode == O::kAdd ? pick_binary<Add>(t) : pick_binary<Sub>(t));
    }
    case O::kAddc:
    case O::kSubc:
    case O::kMadc:
      return decode_carry(d, ins, op);
    case O::kMul: {
      if (!expect(d, ins, 3)) return false;
      if (ins.mods.has(M::kWide)) {
        const ir::Type w = wide_type(t);
        if (w == ir::Type::kNone) return d.fail("mul.wide takes 16- or 32-bit integers");
        if (!dst(w) || !sources(d, ins, op, 1, 2, t)) return false;
        return done(pick_mul_wide(t));
      }
      if (!dst(t) || !sources(d, ins, op, 1, 2, t)) return false;
      return done(ins.mods.has(M::kHi) ? pick_binary<MulHi>(t) : pick_binary<MulLo>(t));
    }
    case O::kMad: {
      if (ins.mods.has(M::kCc)) return decode_carry(d, ins, op);
      if (!expect(d, ins, 4)) return false;
      if (ins.mods.has(M::kWide)) {
        const ir::Type w = wide_type(t);
        if (w == ir::Type::kNone) return d.fail("mad.wide takes 16- or 32-bit integers");
        if (!dst(w) || !sources(d, ins, op, 1, 2, t)) return false;
        op.a[3] = d.source(ins.operands[3], w);
        if (op.a[3] == kNoRef) return false;
        return done(pick_mad_wide(t));
      }
      if (!dst(t) || !sources(d, ins, op, 1, 3, t)) return false;
      if (ins.mods.has(M::kHi) && ins.mods.has(M::kSat)) {
        if (t != ir::Type::kS32) return d.fail("mad.hi.sat takes .s32");
        return done(ternary<int32_t, int32_t, int32_t, int32_t, MadHiSat<int32_t>>);
      }
      return done(ins.mods.has(M::kHi) ? pick_ternary<MadHi>(t) : pick_ternary<MadLo>(t));
    }
    case O::kMul24:
    case O::kMad24: {
      if (t != ir::Type::kU32 && t != ir::Type::kS32) return d.fail("takes .u32 or .s32");
      const bool mad = ins.opcode == O::kMad24;
      if (!expect(d, ins, mad ? 4 : 3) || !dst(t) || !sources(d, ins, op, 1, mad ? 3 : 2, t)) {
        return false;
      }
      const bool hi = ins.mods.has(M::kHi);
      if (ins.mods.has(M::kSat)) {
        if (!mad || !hi || !is_signed) return d.fail(".sat applies to mad24.hi.s32 only");
        return done(ternary<int32_t, int32_t, int32_t, int32_t, Mad24HiSat>);
      }
      if (is_signed) {
        return done(mad ? (hi ? ternary<int32_t, int32_t, int32_t, int32_t, Mad24Hi<int32_t>>
                              : ternary<int32_t, int32_t, int32_t, int32_t, Mad24Lo<int32_t>>)
                        : (hi ? binary<int32_t, int32_t, int32_t, Mul24Hi<int32_t>>
                              : binary<int32_t, int32_t, int32_t, Mul24Lo<int32_t>>));
      }
      return done(mad ? (hi ? ternary<uint32_t, uint32_t, uint32_t, uint32_t, Mad24Hi<uint32_t>>
                            : ternary<uint32_t, uint32_t, uint32_t, uint32_t, Mad24Lo<uint32_t>>)
                      : (hi ? binary<uint32_t, uint32_t, uint32_t, Mul24Hi<uint32_t>>
                            : binary<uint32_t, uint32_t, uint32_t, Mul24Lo<uint32_t>>));
    }
    case O::kSad:
      if (!expect(d, ins, 4) || !dst(t) || !sources(d, ins, op, 1, 3, t)) return false;
      return done(pick_ternary<Sad>(t));
    case O::kDiv:
    case O::kRem:
      if (!expect(d, ins, 3) || !dst(t) || !sources(d, ins, op, 1, 2, t)) return false;
      return done(ins.opcode == O::kDiv ? pick_binary<Div>(t) : pick_binary<Rem>(t));
    case O::kMin:
    case O::kMax: {
      if (!expect(d, ins, 3) || !dst(t) || !sources(d, ins, op, 1, 2, t)) return false;
      if (ins.mods.has(M::kRelu)) {
        if (t != ir::Type::kS32) return d.fail(".relu applies to .s32 only");
        return done(ins.opcode == O::kMin ? binary<int32_t, int32_t, int32_t, MinRelu<int32_t>>
                                          : binary<int32_t, int32_t, int32_t, MaxRelu<int32_t>>);
      }
      return done(ins.opcode == O::kMin ? pick_binary<Min>(t) : pick_binary<Max>(t));
    }
    case O::kAbs:
    case O::kNeg:
      if (!is_signed) return d.fail("takes a signed integer type");
      if (!expect(d, ins, 2) || !dst(t) || !sources(d, ins, op, 1, 1, t)) return false;
      return done(ins.opcode == O::kAbs ? pick_unary<Abs>(t) : pick_unary<Neg>(t));
    case O::kAnd:
    case O::kOr:
    case O::kXor:
      if (!expect(d, ins, 3) || !dst(t) || !sources(d, ins, op, 1, 2, t)) return false;
      return done(ins.opcode == O::kAnd  ? pick_binary<And>(t)
                  : ins.opcode == O::kOr ? pick_binary<Or>(t)
                                         : pick_binary<Xor>(t));
    case O::kNot:
    case O::kCnot:
      if (!expect(d, ins, 2) || !dst(t) || !sources(d, ins, op, 1, 1, t)) return false;
      return done(ins.opcode == O::kNot ? pick_unary<Not>(t) : pick_unary<Cnot>(t));
    case O::kShl:
    case O::kShr:
      if (!expect(d, ins, 3) || !dst(t) || !sources(d, ins, op, 1, 1, t)) return false;
      op.a[2] = d.source(ins.operands[2], ir::Type::kU32);
      if (op.a[2] == kNoRef) return false;
      return done(ins.opcode == O::kShl ? pick_shift<Shl>(t) : pick_shift<Shr>(t));
    case O::kShf:
      if (ir::type_size(t) != 4) return d.fail("shf takes .b32");
      if (!expect(d, ins, 4) || !dst(t) || !sources(d, ins, op, 1, 3, ir::Type::kU32)) {
        return false;
      }
      if (ins.mods.has(M::kL) == ins.mods.has(M::kR)) return d.fail("shf needs .l or .r");
      op.flags =
          static_cast<uint8_t>((ins.mods.has(M::kR) ? 1 : 0) | (ins.mods.has(M::kClamp) ? 2 : 0));
      return done(shf);
    case O::kLop3: {
      // lop3.b32 d, a, b, c, lut; or lop3.{or,and}.b32 d|p, a, b, c, lut, q.
      const bool boolop = ins.mods.has(M::kOr) || ins.mods.has(M::kAnd);
      if (ins.operands.size() != (boolop ? 6u : 5u) ||
          ins.operands[4].kind != ir::OperandKind::kInteger) {
        return d.fail(boolop ? "lop3 with .or or .and takes d|p, a, b, c, a lookup table and q"
                             : "lop3 takes d, a, b, c and an immediate lookup table");
      }
      if (ins.types.size() != 1 || !dst(t) || !sources(d, ins, op, 1, 3, t)) return false;
      op.imm = static_cast<uint32_t>(ins.operands[4].integer) & 0xffu;
      if (boolop) {
        if (ir::type_size(t) != 4 || !ins.operands[0].has_reg2) {
          return d.fail("lop3 with .or or .and writes d|p and takes .b32");
        }
        ir::Operand p = ins.operands[0];
        p.reg = p.reg2;
        p.has_reg2 = false;
        bool negate = false;
        op.a[4] = d.predicate(p);
        op.a[5] = d.predicate(ins.operands[5], &negate);
        if (op.a[4] == kNoRef || op.a[5] == kNoRef) return false;
        op.flags = static_cast<uint8_t>((ins.mods.has(M::kAnd) ? 1 : 0) | (negate ? 2 : 0));
        return done(lop3_pred);
      }
      return done(ir::type_size(t) == 8   ? lop3<uint64_t>
                  : ir::type_size(t) == 4 ? lop3<uint32_t>
                                          : nullptr);
    }
    case O::kPopc:
    case O::kClz:
      if (!expect(d, ins, 2) || !dst(ir::Type::kU32) || !sources(d, ins, op, 1, 1, t)) {
        return false;
      }
      return done(ins.opcode == O::kPopc ? pick_count<Popc>(t) : pick_count<Clz>(t));
    case O::kBfind:
      if (!expect(d, ins, 2) || !dst(ir::Type::kU32) || !sources(d, ins, op, 1, 1, t)) {
        return false;
      }
      return done(ins.mods.has(M::kShiftamt) ? pick_count<BfindShift>(t)
                                             : pick_count<BfindPlain>(t));
    case O::kBrev:
      if (!expect(d, ins, 2) || !dst(t) || !sources(d, ins, op, 1, 1, t)) return false;
      return done(pick_unary<Brev>(t));
    case O::kFns:
      if (!expect(d, ins, 4) || !dst(ir::Type::kU32) ||
          !sources(d, ins, op, 1, 3, ir::Type::kU32)) {
        return false;
      }
      return done(fns);
    case O::kBfe: {
      if (ir::type_size(t) != 4 && ir::type_size(t) != 8) return d.fail("bfe takes 32 or 64 bits");
      if (!expect(d, ins, 4) || !dst(t) || !sources(d, ins, op, 1, 1, t) ||
          !sources(d, ins, op, 2, 2, ir::Type::kU32)) {
        return false;
      }
      switch (t) {
        case ir::Type::kS32:
          return done(ternary<int32_t, int32_t, uint32_t, uint32_t, Bfe<int32_t>>);
        case ir::Type::kS64:
          return done(ternary<int64_t, int64_t, uint32_t, uint32_t, Bfe<int64_t>>);
        case ir::Type::kU64:
        case ir::Type::kB64:
          return done(ternary<uint64_t, uint64_t, uint32_t, uint32_t, Bfe<uint64_t>>);
        default:
          return done(ternary<uint32_t, uint32_t, uint32_t, uint32_t, Bfe<uint32_t>>);
      }
    }
    case O::kBfi:
      if (ir::type_size(t) != 4 && ir::type_size(t) != 8) return d.fail("bfi takes 32 or 64 bits");
      if (!expect(d, ins, 5) || !dst(t) || !sources(d, ins, op, 1, 2, t) ||
          !sources(d, ins, op, 3, 2, ir::Type::kU32)) {
        return false;
      }
      return done(ir::type_size(t) == 8 ? bfi<uint64_t> : bfi<uint32_t>);
    case O::kPrmt: {
      if (ir::type_size(t) != 4) return d.fail("prmt takes .b32");
      if (!expect(d, ins, 4) || !dst(t) || !sources(d, ins, op, 1, 3, ir::Type::kU32)) {
        return false;
      }
      static constexpr M kModes[] = {M::kF4e, M::kB4e, M::kRc8, M::kEcl, M::kEcr, M::kRc16};
      op.imm = 0;
      for (uint32_t i = 0; i < 6; ++i) {
        if (ins.mods.has(kModes[i])) op.imm = i + 1;
      }
      return done(prmt);
    }
    case O::kDp4a:
    case O::kDp2a: {
      if (ins.types.size() != 2 || ins.operands.size() != 4) {
        return d.fail("takes two types (a and b) and four operands");
      }
      const bool sa = ir::is_signed(ins.types[0]), sb = ir::is_signed(ins.types[1]);
      const ir::Type dt = sa || sb ? ir::Type::kS32 : ir::Type::kU32;
      if (!dst(dt) || !sources(d, ins, op, 1, 2, ir::Type::kB32)) return false;
      op.a[3] = d.source(ins.operands[3], dt);
      if (op.a[3] == kNoRef) return false;
      op.flags = static_cast<uint8_t>((sa ? 1 : 0) | (sb ? 2 : 0) | (ins.mods.has(M::kHi) ? 4 : 0));
      return done(ins.opcode == O::kDp4a ? dp4a : dp2a);
    }
    case O::kBmsk:
      if (!expect(d, ins, 3) || !dst(ir::Type::kB32) ||
          !sources(d, ins, op, 1, 2, ir::Type::kU32)) {
        return false;
      }
      op.flags = ins.mods.has(M::kWrap) ? 1 : 0;
      return done(bmsk);
    case O::kSzext:
      if (!expect(d, ins, 3) || !dst(t) || !sources(d, ins, op, 1, 2, ir::Type::kU32)) {
        return false;
      }
      op.flags = static_cast<uint8_t>((ins.mods.has(M::kWrap) ? 1 : 0) | (is_signed ? 2 : 0));
      return done(szext);
    default:
      return d.fail("not an integer instruction");
  }
}

}  // namespace hal::ptx_vm
