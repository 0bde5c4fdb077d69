// Atomic read-modify-write instructions: atom (which returns the old value) and red (which does
// not), on global, shared and generic addresses.
//
// Implemented: .add on u32/s32/u64/s64 (and b32/b64), f32, f64, and with .noftz on f16, bf16,
// f16x2 and bf16x2; .min/.max on u32/s32/u64/s64; .inc/.dec (the wrapping forms) on u32/u64;
// .and/.or/.xor/.exch on 32- and 64-bit integers; .cas on 16-, 32- and 64-bit integers. Every
// .sem (.relaxed, .acquire, .release, .acq_rel) and .scope (.cta, .cluster, .gpu, .sys) is
// accepted, and .L2::cache_hint's cache-policy operand is read and ignored (a hint only).
// Refused with a reason: vector atomics (.v2/.v4/.v8, sm_90), 128-bit .cas/.exch,
// .shared::cluster, min/max on floats, and any other combination PTX does not define.
//
// Why this is correct:
//  - Blocks run in parallel on several host threads, so an atomic on global memory is a real
//    host atomic on the host address. add/and/or/xor/exch/cas map to the host's atomic
//    instructions; everything else (min, max, inc, dec, floating-point add) is a
//    compare-and-swap loop that recomputes the new value from the value it last saw until the
//    swap succeeds, which is atomic in the same sense. 16-bit operations (f16 and bf16 add,
//    cas.b16) use the host's 16-bit compare-and-swap on exactly the operand's two bytes, so
//    nothing outside the operand is touched; f16x2 and bf16x2 add swap the whole 32-bit pair,
//    which is stronger than PTX's per-element atomicity.
//  - Every host atomic is sequentially consistent: at least as strong as any memory order PTX
//    allows on atom and red (relaxed, acquire, release, acq_rel), at every scope. A failed
//    compare-and-swap inside a loop is not the operation's final access, so it is relaxed.
//  - Shared memory belongs to one block, and a block runs on one host thread at a time, so
//    nothing else can touch it during an instruction: a plain read-modify-write, lane by lane
//    in lane order, is atomic there. Lanes of one warp that hit the same address serialise in
//    lane order, as a GPU serialises them in some order.
//  - A generic address is resolved per lane: the shared window takes the shared path, and
//    anything else is checked as global memory. Local memory is not a valid target (PTX allows
//    only global and shared), so a generic address in the local window faults.
//  - Floating-point add rounds to nearest even, as PTX specifies. As PTX documents for current
//    hardware, f32 add on global memory flushes subnormal inputs and results to sign-preserving
//    zero, while on shared memory it keeps them. f16 and bf16 adds are computed in binary32 and
//    rounded once to the narrow format: binary32 has at least 2p+2 bits for the p-bit narrow
//    formats, so the double rounding gives the correctly rounded sum (NaNs become the canonical
//    NaN, as on a GPU).
//  - Every access is checked like a load or store: in bounds of global or shared memory, and
//    aligned to the operand's size; a failure faults the block (exec.h).
#include "ptx_vm/decode.h"
#include "ptx_vm/half.h"

#include <cstdio>
#include <string>
#include <type_traits>

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;
using O = ir::Opcode;
using T = ir::Type;

static_assert(__atomic_always_lock_free(2, nullptr) && __atomic_always_lock_free(4, nullptr) &&
                  __atomic_always_lock_free(8, nullptr),
              "global atomics need lock-free 16-, 32- and 64-bit host atomics");

enum class AOp : uint8_t { kAdd, kMin, kMax, kInc, kDec, kAnd, kOr, kXor, kExch, kCas };

// ---- element formats ----------------------------------------------------------------------
// Bits: the operand in memory and in a register. Integer formats say how min/max compare.

struct U32 {
  using Bits = uint32_t;
  using Value = uint32_t;
  static constexpr bool kFloat = false;
};
struct S32 {
  using Bits = uint32_t;
  using Value = int32_t;
  static constexpr bool kFloat = false;
};
struct U64 {
  using Bits = uint64_t;
  using Value = uint64_t;
  static constexpr bool kFloat = false;
};
struct S64 {
  using Bits = uint64_t;
  using Value = int64_t;
  static constexpr bool kFloat = false;
};
struct B16 {
  using Bits = uint16_t;
  using Value = uint16_t;
  static constexpr bool kFloat = false;
};

// f32 add; on global memory subnormal inputs and results flush to sign-preserving zero.
struct F32 {
  using Bits = uint32_t;
  static constexpr bool kFloat = true;
  static Bits add(Bits a, Bits b, bool global) {
    if (global) return float_bits(flush(flush(bits_float(a)) + flush(bits_float(b))));
    return float_bits(bits_float(a) + bits_float(b));
  }
};
struct F64 {
  using Bits = uint64_t;
  static constexpr bool kFloat = true;
  static Bits add(Bits a, Bits b, bool) { return double_bits(bits_double(a) + bits_double(b)); }
};
inline uint16_t add_half(uint16_t a, uint16_t b) {
  return float_to_half(half_to_float(a) + half_to_float(b), Round::kNearest);
}
inline uint16_t add_bf16(uint16_t a, uint16_t b) {
  return float_to_bf16(bf16_to_float(a) + bf16_to_float(b), Round::kNearest);
}
struct F16 {
  using Bits = uint16_t;
  static constexpr bool kFloat = true;
  static Bits add(Bits a, Bits b, bool) { return add_half(a, b); }
};
struct BF16 {
  using Bits = uint16_t;
  static constexpr bool kFloat = true;
  static Bits add(Bits a, Bits b, bool) { return add_bf16(a, b); }
};
struct F16x2 {
  using Bits = uint32_t;
  static constexpr bool kFloat = true;
  static Bits add(Bits a, Bits b, bool) {
    const uint32_t lo = add_half(static_cast<uint16_t>(a), static_cast<uint16_t>(b));
    const uint32_t hi = add_half(static_cast<uint16_t>(a >> 16), static_cast<uint16_t>(b >> 16));
    return lo | (hi << 16);
  }
};
struct BF16x2 {
  using Bits = uint32_t;
  static constexpr bool kFloat = true;
  static Bits add(Bits a, Bits b, bool) {
    const uint32_t lo = add_bf16(static_cast<uint16_t>(a), static_cast<uint16_t>(b));
    const uint32_t hi = add_bf16(static_cast<uint16_t>(a >> 16), static_cast<uint16_t>(b >> 16));
    return lo | (hi << 16);
  }
};

// The (operation, format) pairs that have handlers; the decoder maps every type PTX allows onto
// one of them (signed and unsigned add are the same bits, so only min/max use S32/S64).
template <AOp kOp, typename F>
constexpr bool valid() {
  if constexpr (F::kFloat) {
    return kOp == AOp::kAdd;
  } else if constexpr (std::is_same_v<F, B16>) {
    return kOp == AOp::kCas;
  } else if constexpr (std::is_same_v<F, S32> || std::is_same_v<F, S64>) {
    return kOp == AOp::kMin || kOp == AOp::kMax;
  } else {
    return true;
  }
}

// The value an operation stores, given the old value |a| and the operands |b| and |c|.
// |global|: the access is to global memory (f32 add flushes subnormals there).
template <AOp kOp, typename F>
typename F::Bits combine(typename F::Bits a, typename F::Bits b, typename F::Bits c, bool global) {
  using Bits = typename F::Bits;
  if constexpr (F::kFloat) {
    static_assert(kOp == AOp::kAdd);
    return F::add(a, b, global);
  } else {
    using V = typename F::Value;
    switch (kOp) {
      case AOp::kAdd:
        return static_cast<Bits>(a + b);
      case AOp::kMin:
        return static_cast<V>(a) < static_cast<V>(b) ? a : b;
      case AOp::kMax:
        return static_cast<V>(a) > static_cast<V>(b) ? a : b;
      case AOp::kInc:
        return a >= b ? Bits{0} : static_cast<Bits>(a + 1);
      case AOp::kDec:
        return (a == 0 || a > b) ? b : static_cast<Bits>(a - 1);
      case AOp::kAnd:
        return a & b;
      case AOp::kOr:
        return a | b;
      case AOp::kXor:
        return a ^ b;
      case AOp::kExch:
        return b;
      case AOp::kCas:
        return a == b ? c : a;
    }
    return a;
  }
}

// ---- the accesses ---------------------------------------------------------------------------

// A host atomic on global memory at |p| (aligned to the operand's size); returns the old value.
template <AOp kOp, typename F>
typename F::Bits global_rmw(uint8_t* p, typename F::Bits b, typename F::Bits c) {
  using Bits = typename F::Bits;
  Bits* q = reinterpret_cast<Bits*>(p);
  if constexpr (!F::kFloat && kOp == AOp::kAdd) {
    return __atomic_fetch_add(q, b, __ATOMIC_SEQ_CST);
  } else if constexpr (!F::kFloat && kOp == AOp::kAnd) {
    return __atomic_fetch_and(q, b, __ATOMIC_SEQ_CST);
  } else if constexpr (!F::kFloat && kOp == AOp::kOr) {
    return __atomic_fetch_or(q, b, __ATOMIC_SEQ_CST);
  } else if constexpr (!F::kFloat && kOp == AOp::kXor) {
    return __atomic_fetch_xor(q, b, __ATOMIC_SEQ_CST);
  } else if constexpr (kOp == AOp::kExch) {
    return __atomic_exchange_n(q, b, __ATOMIC_SEQ_CST);
  } else if constexpr (kOp == AOp::kCas) {
    Bits expected = b;  // receives the old value when it differs from b
    __atomic_compare_exchange_n(q, &expected, c, /*weak=*/false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return expected;
  } else {
    Bits old = __atomic_load_n(q, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(q, &old, combine<kOp, F>(old, b, c, true),
                                        /*weak=*/true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    return old;
  }
}

// A read-modify-write of shared memory, which only this host thread can reach.
template <AOp kOp, typename F>
typename F::Bits plain_rmw(uint8_t* p, typename F::Bits b, typename F::Bits c) {
  using Bits = typename F::Bits;
  const Bits old = load_as<Bits>(p);
  store_as<Bits>(p, combine<kOp, F>(old, b, c, false));
  return old;
}

// Op layout: a[0] the destination row (kNoRef for red and for '_'), a[1] the address base
// (kNoRef for an absolute address), a[2] operand b, a[3] operand c (cas), disp the displacement.
// flags: bit 0 a 64-bit base.
inline uint64_t address_of(const Exec& x, const Op& op, uint32_t lane) {
  return address_at(x, op.a[1], (op.flags & 1) != 0, op.disp, lane);
}

// A generic address in the local window: PTX defines atomics on global and shared memory only.
void local_fault(Exec& x, uint32_t lane, uint64_t address, uint32_t bytes) {
  char hex[32];
  std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(address));
  raise_fault(x, FaultKind::kIllegalAddress, lane,
              "atomic of " + std::to_string(bytes) + " bytes at generic address " + hex +
                  ", which is local memory: atomics work on global and shared memory only");
}

template <MemSpace kSpace, AOp kOp, typename F>
void atomic(Exec& x, const Op& op, uint32_t mask) {
  using Bits = typename F::Bits;
  constexpr uint32_t kBytes = sizeof(Bits);
  Bits* d = op.a[0] != kNoRef ? x.row<Bits>(op.a[0]) : nullptr;
  const Bits* b = x.row<Bits>(op.a[2]);
  const Bits* c = op.a[3] != kNoRef ? x.row<Bits>(op.a[3]) : nullptr;
  for_lanes(mask, [&](uint32_t l) {
    if (x.faulted) return;
    const uint64_t address = address_of(x, op, l);
    const Bits bv = b[l];
    const Bits cv = c != nullptr ? c[l] : Bits{0};
    Bits old;
    bool global = kSpace == MemSpace::kGlobal;
    if constexpr (kSpace == MemSpace::kGeneric) {
      if (address - kLocalWindow < kWindowSize) {
        local_fault(x, l, address, kBytes);
        return;
      }
      global = address - kSharedWindow >= kWindowSize;
    }
    if (global) {
      uint8_t* p = global_at(x, address, kBytes, kBytes, Access::kAtomic, l);
      if (p == nullptr) return;
      old = global_rmw<kOp, F>(p, bv, cv);
    } else {
      const uint64_t offset = kSpace == MemSpace::kGeneric ? address - kSharedWindow : address;
      uint8_t* p = shared_at(x, offset, kBytes, kBytes, Access::kAtomic, l);
      if (p == nullptr) return;
      old = plain_rmw<kOp, F>(p, bv, cv);
    }
    if (d != nullptr) d[l] = old;
  });
}

// ---- handler selection ------------------------------------------------------------------------

enum class Elem : uint8_t {
  kU32,
  kS32,
  kU64,
  kS64,
  kB16,
  kF32,
  kF64,
  kF16,
  kBF16,
  kF16x2,
  kBF16x2
};

template <MemSpace kSpace, AOp kOp, typename F>
constexpr Handler handler_for() {
  if constexpr (valid<kOp, F>()) {
    return atomic<kSpace, kOp, F>;
  } else {
    return nullptr;
  }
}

template <MemSpace kSpace, AOp kOp>
Handler pick_elem(Elem e) {
  switch (e) {
    case Elem::kU32:
      return handler_for<kSpace, kOp, U32>();
    case Elem::kS32:
      return handler_for<kSpace, kOp, S32>();
    case Elem::kU64:
      return handler_for<kSpace, kOp, U64>();
    case Elem::kS64:
      return handler_for<kSpace, kOp, S64>();
    case Elem::kB16:
      return handler_for<kSpace, kOp, B16>();
    case Elem::kF32:
      return handler_for<kSpace, kOp, F32>();
    case Elem::kF64:
      return handler_for<kSpace, kOp, F64>();
    case Elem::kF16:
      return handler_for<kSpace, kOp, F16>();
    case Elem::kBF16:
      return handler_for<kSpace, kOp, BF16>();
    case Elem::kF16x2:
      return handler_for<kSpace, kOp, F16x2>();
    case Elem::kBF16x2:
      return handler_for<kSpace, kOp, BF16x2>();
  }
  return nullptr;
}

template <MemSpace kSpace>
Handler pick_op(AOp o, Elem e) {
  switch (o) {
    case AOp::kAdd:
      return pick_elem<kSpace, AOp::kAdd>(e);
    case AOp::kMin:
      return pick_elem<kSpace, AOp::kMin>(e);
    case AOp::kMax:
      return pick_elem<kSpace, AOp::kMax>(e);
    case AOp::kInc:
      return pick_elem<kSpace, AOp::kInc>(e);
    case AOp::kDec:
      return pick_elem<kSpace, AOp::kDec>(e);
    case AOp::kAnd:
      return pick_elem<kSpace, AOp::kAnd>(e);
    case AOp::kOr:
      return pick_elem<kSpace, AOp::kOr>(e);
    case AOp::kXor:
      return pick_elem<kSpace, AOp::kXor>(e);
    case AOp::kExch:
      return pick_elem<kSpace, AOp::kExch>(e);
    case AOp::kCas:
      return pick_elem<kSpace, AOp::kCas>(e);
  }
  return nullptr;
}

Handler pick(MemSpace space, AOp o, Elem e) {
  switch (space) {
    case MemSpace::kGlobal:
      return pick_op<MemSpace::kGlobal>(o, e);
    case MemSpace::kShared:
      return pick_op<MemSpace::kShared>(o, e);
    case MemSpace::kGeneric:
      return pick_op<MemSpace::kGeneric>(o, e);
    default:
      return nullptr;
  }
}

// ---- decoding ---------------------------------------------------------------------------------

struct OpName {
  M mod;
  AOp op;
};
constexpr OpName kOps[] = {
    {M::kAdd, AOp::kAdd},   {M::kMin, AOp::kMin}, {M::kMax, AOp::kMax}, {M::kInc, AOp::kInc},
    {M::kDec, AOp::kDec},   {M::kAnd, AOp::kAnd}, {M::kOr, AOp::kOr},   {M::kXor, AOp::kXor},
    {M::kExch, AOp::kExch}, {M::kCas, AOp::kCas},
};

// The modifiers atom and red may carry besides the operation.
bool allowed_modifier(M m) {
  switch (m) {
    case M::kGlobal:
    case M::kShared:
    case M::kRelaxed:
    case M::kAcquire:
    case M::kRelease:
    case M::kAcqRel:
    case M::kCta:
    case M::kCluster:
    case M::kGpu:
    case M::kSys:
    case M::kNoftz:
    case M::kCacheHint:
      return true;
    default:
      for (const OpName& o : kOps) {
        if (o.mod == m) return true;
      }
      return false;
  }
}

// Maps the instruction's operation and type onto a handler format, or fails with the reason.
bool element_of(DecodeContext& d, const char* name, AOp o, ir::Type t, bool noftz, Elem* out) {
  const uint32_t size = ir::type_size(t);
  const std::string what = std::string(name) + "." + ir::mod_name(kOps[static_cast<int>(o)].mod) +
                           "." + ir::type_name(t);
  const bool half_like = t == T::kF16 || t == T::kBF16 || t == T::kF16x2 || t == T::kBF16x2;
  if (noftz && !half_like) {
    return d.fail(".noftz applies to atomic adds of f16, bf16, f16x2 and bf16x2 only");
  }
  if (ir::is_float(t)) {
    if (o != AOp::kAdd) {
      return d.fail(what +
                    " is not supported: floating-point atomics other than add are "
                    "vector forms (sm_90), which the CPU PTX device does not run");
    }
    switch (t) {
      case T::kF32:
        *out = Elem::kF32;
        return true;
      case T::kF64:
        *out = Elem::kF64;
        return true;
      case T::kF16:
        *out = Elem::kF16;
        break;
      case T::kBF16:
        *out = Elem::kBF16;
        break;
      case T::kF16x2:
        *out = Elem::kF16x2;
        break;
      case T::kBF16x2:
        *out = Elem::kBF16x2;
        break;
      default:
        return d.fail(what + ": no atomic operation on this type");
    }
    if (!noftz) return d.fail(what + " requires .noftz, as PTX specifies");
    return true;
  }
  if (!is_integer_type(t)) return d.fail(what + ": no atomic operation on this type");
  if (size == 16) {
    return d.fail(
        "128-bit atomics (.b128 cas and exch, sm_90) are not supported on the CPU "
        "PTX device");
  }
  if (size == 2) {
    if (o != AOp::kCas) return d.fail(what + ": 16-bit atomics exist only as cas.b16");
    *out = Elem::kB16;
    return true;
  }
  if (size != 4 && size != 8) return d.fail(what + ": atomics work on 32- and 64-bit integers");
  const bool wide = size == 8;
  switch (o) {
    case AOp::kMin:
    case AOp::kMax:
      if (ir::is_bits(t)) {
        return d.fail(what + ": min and max need a .u or .s type to know how to compare");
      }
      *out = ir::is_signed(t) ? (wide ? Elem::kS64 : Elem::kS32) : (wide ? Elem::kU64 : Elem::kU32);
      return true;
    case AOp::kInc:
    case AOp::kDec:
      if (ir::is_signed(t)) return d.fail(what + ": inc and dec are unsigned operations");
      break;
    default:
      break;
  }
  *out = wide ? Elem::kU64 : Elem::kU32;
  return true;
}

}  // namespace

bool decode_atomic(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  const bool is_red = ins.opcode == O::kRed;
  if (!is_red && ins.opcode != O::kAtom) return d.fail("not an atomic instruction");
  const char* name = is_red ? "red" : "atom";
  if (ins.mods.has(M::kSharedCluster)) {
    return d.fail(
        ".shared::cluster addresses other blocks' shared memory, which a one-block "
        "cluster does not have on the CPU PTX device");
  }
  for (uint32_t i = 0; i < static_cast<uint32_t>(M::kCount); ++i) {
    const M m = static_cast<M>(i);
    if (ins.mods.has(m) && !allowed_modifier(m)) {
      return d.fail(std::string("modifier '.") + ir::mod_name(m) + "' is not valid on " + name);
    }
  }
  if (ins.vector != 1) {
    return d.fail(std::string("vector ") + name +
                  " (.v2, .v4, .v8; sm_90) is not supported on the CPU PTX device");
  }
  int ops = 0;
  AOp o = AOp::kAdd;
  for (const OpName& n : kOps) {
    if (ins.mods.has(n.mod)) o = n.op, ++ops;
  }
  if (ops != 1) return d.fail(std::string(name) + " needs exactly one operation");
  if (is_red && (o == AOp::kExch || o == AOp::kCas)) {
    return d.fail("red has no .exch or .cas; use atom");
  }
  const int sems = ins.mods.has(M::kRelaxed) + ins.mods.has(M::kAcquire) +
                   ins.mods.has(M::kRelease) + ins.mods.has(M::kAcqRel);
  const int scopes = ins.mods.has(M::kCta) + ins.mods.has(M::kCluster) + ins.mods.has(M::kGpu) +
                     ins.mods.has(M::kSys);
  if (sems > 1) return d.fail("more than one memory order");
  if (scopes > 1) return d.fail("more than one scope");
  if (ins.types.size() != 1) return d.fail("expected exactly one type");
  const ir::Type type = ins.types[0];
  Elem elem = Elem::kU32;
  if (!element_of(d, name, o, type, ins.mods.has(M::kNoftz), &elem)) return false;

  MemSpace space = MemSpace::kGeneric;
  if (ins.mods.has(M::kGlobal) && ins.mods.has(M::kShared)) {
    return d.fail("more than one state space");
  }
  if (ins.mods.has(M::kGlobal)) space = MemSpace::kGlobal;
  if (ins.mods.has(M::kShared)) space = MemSpace::kShared;
  const bool hint = ins.mods.has(M::kCacheHint);
  if (hint && space == MemSpace::kShared) {
    return d.fail(".L2::cache_hint applies to global memory only");
  }

  const size_t first = is_red ? 0 : 1;  // the address operand
  const size_t values = o == AOp::kCas ? 2 : 1;
  const size_t want = first + 1 + values + (hint ? 1 : 0);
  if (ins.operands.size() != want) {
    return d.fail(is_red ? "expected an address, an operand and, with .L2::cache_hint, a cache "
                           "policy"
                  : o == AOp::kCas ? "expected a destination, an address and two operands"
                                   : "expected a destination, an address, an operand "
                                     "and, with .L2::cache_hint, a cache policy");
  }
  if (!is_red) {
    const ir::Operand& dst = ins.operands[0];
    if (dst.kind != ir::OperandKind::kSink) {
      op.a[0] = d.destination(dst, type);
      if (op.a[0] == kNoRef) return false;
    }
  }
  Address addr;
  if (!d.address(ins.operands[first], space, &addr)) return false;
  space = addr.space;
  if (space != MemSpace::kGlobal && space != MemSpace::kShared && space != MemSpace::kGeneric) {
    return d.fail(std::string(name) + " works on global and shared memory only");
  }
  op.a[1] = addr.base;
  op.disp = addr.disp;
  op.flags = addr.base_bytes == 8 ? 1 : 0;
  op.a[2] = d.source(ins.operands[first + 1], type);
  if (op.a[2] == kNoRef) return false;
  if (o == AOp::kCas) {
    op.a[3] = d.source(ins.operands[first + 2], type);
    if (op.a[3] == kNoRef) return false;
  }
  if (hint && d.source(ins.operands.back(), T::kB64) == kNoRef) return false;  // ignored
  op.fn = pick(space, o, elem);
  return op.fn != nullptr || d.fail("internal: no handler for this atomic operation");
}

}  // namespace hal::ptx_vm
