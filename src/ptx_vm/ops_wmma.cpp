// wmma: warp-level matrix multiply-accumulate through fragments whose layout PTX leaves to the
// implementation (what CUDA's nvcuda::wmma API compiles to).
//
// Implemented, all .sync.aligned (the whole warp together):
//   wmma.load.{a,b}.<layout>.<shape>{.global,.shared}.<type>, wmma.load.c and wmma.store.d:
//     .f16 A/B with .f16 or .f32 C/D, .bf16 A/B with .f32, .s8/.u8 A/B with .s32, on m16n16k16,
//     m32n8k16 and m8n32k16; .tf32 A/B with .f32 on m16n16k8; .f64 on m8n8k4
//   wmma.mma.<alayout>.<blayout>.<shape>.<dtype>.<ctype> (f16 multiplicands), and
//     .<dtype>.<atype>.<btype>.<ctype> for bf16, tf32, s8/u8 {.satfinite} and f64 {.rn,.rz,.rm,.rp}
// The sub-byte and single-bit forms (.s4, .u4, .b1) are refused at load with the reason.
//
// The fragment layout is hal's for every device (ptx/wmma_layout.h). The layout
// qualifiers of wmma.mma must match those the fragments were loaded with, as PTX requires; they
// do not change the arithmetic here, since a fragment holds the matrix whatever its layout in
// memory was.
//
// Arithmetic, as mma.sync (ops_matrix.cpp): products of f16, bf16 and tf32 (the f32 value with
// its low 13 fraction bits ignored) are exact in binary32 and summed to C in k order, each
// addition rounded to nearest even; an f16 D is that sum rounded once. f64 takes one fused
// multiply-add per step in the instruction's rounding mode. Integers are summed exactly and wrap
// modulo 2^32, or clamp to the s32 range with .satfinite.
//
// Memory: the matrix at p, row-major (element (r, c) at r * stride + c) or column-major
// (c * stride + r), the stride in elements; without the stride operand, the row length (row-major)
// or the column length (column-major). p and the stride must be the same in every lane. Each
// element is checked as a load or store of its size would be; a store checks every address
// before it writes any.
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "ptx/wmma_layout.h"
#include "ptx_vm/half.h"
#include "ptx_vm/ops_matrix.h"

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;
using T = ir::Type;

// The element types of fragments.
enum class Elem : uint8_t { kF16, kBF16, kTf32, kF32, kS32, kS8, kU8, kF64 };

uint32_t memory_bytes(Elem e) {
  switch (e) {
    case Elem::kF16:
    case Elem::kBF16:
      return 2;
    case Elem::kS8:
    case Elem::kU8:
      return 1;
    case Elem::kF64:
      return 8;
    default:
      return 4;
  }
}
// Elements packed in one register (8-byte registers for f64, 4-byte ones otherwise).
uint32_t per_register(Elem e) {
  return e == Elem::kF64 ? 1 : 4 / memory_bytes(e);
}
uint32_t register_bytes(Elem e) {
  return e == Elem::kF64 ? 8 : 4;
}

// The matrices a shape has (the largest, 32 x 16, has 512 elements).
constexpr uint32_t kMaxElements = 512;

using Geometry = ptx::WmmaFragment;

uint32_t registers_of(const Geometry& g, Elem e) {
  return g.per_lane / per_register(e);
}

using Role = ptx::WmmaRole;

Geometry geometry(Role role, uint32_t m, uint32_t n, uint32_t k, Elem e) {
  return ptx::wmma_fragment(role, m, n, k, e == Elem::kF16);
}

// The element bits of a fragment, by row-major index, from the registers |regs|.
void read_fragment(const Exec& x, const Ref* regs, const Geometry& g, Elem e, uint64_t* out) {
  const uint32_t per = per_register(e), bits = 8 * memory_bytes(e);
  const uint64_t keep = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  for (uint32_t r = 0; r < registers_of(g, e); ++r) {
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      const uint64_t word =
          e == Elem::kF64 ? x.row<uint64_t>(regs[r])[l] : uint64_t{x.row<uint32_t>(regs[r])[l]};
      for (uint32_t j = 0; j < per; ++j) out[g.index(l, r * per + j)] = (word >> (j * bits)) & keep;
    }
  }
}

// The inverse: every lane's registers from the element bits |in|.
void write_fragment(Exec& x, const Ref* regs, const Geometry& g, Elem e, const uint64_t* in) {
  const uint32_t per = per_register(e), bits = 8 * memory_bytes(e);
  for (uint32_t r = 0; r < registers_of(g, e); ++r) {
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      uint64_t word = 0;
      for (uint32_t j = 0; j < per; ++j) word |= in[g.index(l, r * per + j)] << (j * bits);
      if (e == Elem::kF64) {
        x.row<uint64_t>(regs[r])[l] = word;
      } else {
        x.row<uint32_t>(regs[r])[l] = static_cast<uint32_t>(word);
      }
    }
  }
}

// ---- wmma.load and wmma.store ------------------------------------------------------------------

struct MemoryInfo {
  Geometry g;
  Elem elem = Elem::kF16;
  bool col_major = false;
  MemSpace space = MemSpace::kGeneric;
  Ref regs[8] = {};
  Ref base = kNoRef;
  bool wide_base = false;
  int64_t disp = 0;
  Ref stride = kNoRef;  // kNoRef: the row (or column) length
};

// The warp's address and stride, which must be the same in every lane. False after a fault.
bool warp_address(Exec& x, const MemoryInfo& info, const char* what, uint64_t* address,
                  uint32_t* stride) {
  const uint32_t fallback = info.col_major ? info.g.rows : info.g.cols;
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    const uint64_t a = address_at(x, info.base, info.wide_base, info.disp, l);
    const uint32_t s = info.stride == kNoRef ? fallback : x.row<uint32_t>(info.stride)[l];
    if (l == 0) {
      *address = a;
      *stride = s;
    } else if (a != *address || s != *stride) {
      char text[160];
      std::snprintf(text, sizeof(text),
                    "%s needs the same address and stride in every lane of the warp: lane 0 "
                    "has 0x%llx and %u, lane %u 0x%llx and %u",
                    what, static_cast<unsigned long long>(*address), *stride, l,
                    static_cast<unsigned long long>(a), s);
      raise_fault(x, FaultKind::kIllegalInstruction, l, text);
      return false;
    }
  }
  return true;
}

// The memory of each element, checked, or false after a fault.
bool element_memory(Exec& x, const MemoryInfo& info, Access access, const char* what,
                    uint8_t** where) {
  uint64_t address = 0;
  uint32_t stride = 0;
  if (!warp_address(x, info, what, &address, &stride)) return false;
  if (info.space == MemSpace::kGeneric && address - kLocalWindow < kWindowSize) {
    // Local memory is each thread's own: one fragment cannot come from 32 threads' memories.
    raise_fault(x, FaultKind::kIllegalAddress, 0,
                std::string(what) +
                    " at a generic address of local memory: wmma accesses "
                    "global or shared memory");
    return false;
  }
  const uint32_t bytes = memory_bytes(info.elem);
  for (uint32_t r = 0; r < info.g.rows; ++r) {
    for (uint32_t c = 0; c < info.g.cols; ++c) {
      const uint32_t i = r * info.g.cols + c;
      const uint64_t offset = info.col_major ? uint64_t{c} * stride + r : uint64_t{r} * stride + c;
      // The fault names the first lane holding the element.
      where[i] = memory_at(x, info.space, address + offset * bytes, bytes, bytes, access,
                           i / info.g.per_lane);
      if (where[i] == nullptr) return false;
    }
  }
  return true;
}

// Elements are naturally aligned (memory_at checked it): relaxed host atomics, as global memory
// needs (exec.h), are plain moves for the other spaces.
uint64_t load_element(const uint8_t* p, uint32_t bytes) {
  switch (bytes) {
    case 1:
      return load_relaxed<uint8_t>(p);
    case 2:
      return load_relaxed<uint16_t>(p);
    case 4:
      return load_relaxed<uint32_t>(p);
    default:
      return load_relaxed<uint64_t>(p);
  }
}
void store_element(uint8_t* p, uint32_t bytes, uint64_t v) {
  switch (bytes) {
    case 1:
      store_relaxed<uint8_t>(p, static_cast<uint8_t>(v));
      break;
    case 2:
      store_relaxed<uint16_t>(p, static_cast<uint16_t>(v));
      break;
    case 4:
      store_relaxed<uint32_t>(p, static_cast<uint32_t>(v));
      break;
    default:
      store_relaxed<uint64_t>(p, v);
      break;
  }
}

void wmma_load(Exec& x, const Op& op, uint32_t mask) {
  if (!whole_warp(x, mask, "wmma.load")) return;
  const MemoryInfo& info = *static_cast<const MemoryInfo*>(op.ext);
  uint8_t* where[kMaxElements];
  if (!element_memory(x, info, Access::kRead, "wmma.load", where)) return;
  uint64_t value[kMaxElements];
  const uint32_t bytes = memory_bytes(info.elem);
  for (uint32_t i = 0; i < info.g.rows * info.g.cols; ++i) value[i] = load_element(where[i], bytes);
  write_fragment(x, info.regs, info.g, info.elem, value);
}

void wmma_store(Exec& x, const Op& op, uint32_t mask) {
  if (!whole_warp(x, mask, "wmma.store")) return;
  const MemoryInfo& info = *static_cast<const MemoryInfo*>(op.ext);
  uint64_t value[kMaxElements];
  read_fragment(x, info.regs, info.g, info.elem, value);
  uint8_t* where[kMaxElements];
  if (!element_memory(x, info, Access::kWrite, "wmma.store", where)) return;
  const uint32_t bytes = memory_bytes(info.elem);
  for (uint32_t i = 0; i < info.g.rows * info.g.cols; ++i) {
    store_element(where[i], bytes, value[i]);
  }
}

// ---- wmma.mma ----------------------------------------------------------------------------------

struct MmaInfo {
  uint32_t m = 0, n = 0, k = 0;
  Elem in = Elem::kF16, c = Elem::kF32, d = Elem::kF32;
  bool a_signed = false, b_signed = false, satfinite = false;
  int rounding = FE_TONEAREST;  // f64 only
  Geometry ga, gb, gc;
  Ref a[8] = {}, b[8] = {}, cr[8] = {}, dr[8] = {};
};

float multiplicand(uint64_t bits, Elem e) {
  switch (e) {
    case Elem::kF16:
      return half_to_float(static_cast<uint16_t>(bits));
    case Elem::kBF16:
      return bf16_to_float(static_cast<uint16_t>(bits));
    default:  // tf32: the f32 value with the low 13 fraction bits ignored, as in mma
      return bits_float(static_cast<uint32_t>(bits) & 0xffffe000u);
  }
}

int64_t integer(uint64_t bits, bool is_signed) {
  return is_signed ? int64_t{static_cast<int8_t>(bits)} : int64_t{static_cast<uint8_t>(bits)};
}

double f64(uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}
uint64_t f64_bits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  return bits;
}

void wmma_mma(Exec& x, const Op& op, uint32_t mask) {
  if (!whole_warp(x, mask, "wmma.mma")) return;
  const MmaInfo& info = *static_cast<const MmaInfo*>(op.ext);
  uint64_t a[kMaxElements], b[kMaxElements], c[kMaxElements], d[kMaxElements];
  read_fragment(x, info.a, info.ga, info.in, a);
  read_fragment(x, info.b, info.gb, info.in, b);
  read_fragment(x, info.cr, info.gc, info.c, c);
  const uint32_t M = info.m, N = info.n, K = info.k;
  if (info.in == Elem::kF64) {
    const int saved = std::fegetround();
    if (info.rounding != saved) std::fesetround(info.rounding);
    for (uint32_t i = 0; i < M * N; ++i) {
      double sum = f64(c[i]);
      for (uint32_t k = 0; k < K; ++k)
        sum = std::fma(f64(a[i / N * K + k]), f64(b[k * N + i % N]), sum);
      d[i] = f64_bits(sum);
    }
    if (info.rounding != saved) std::fesetround(saved);
  } else if (info.in == Elem::kS8 || info.in == Elem::kU8) {
    for (uint32_t i = 0; i < M * N; ++i) {
      int64_t sum = int64_t{static_cast<int32_t>(c[i])};
      for (uint32_t k = 0; k < K; ++k) {
        sum += integer(a[i / N * K + k], info.a_signed) * integer(b[k * N + i % N], info.b_signed);
      }
      if (info.satfinite) sum = sum > INT32_MAX ? INT32_MAX : sum < INT32_MIN ? INT32_MIN : sum;
      d[i] = static_cast<uint32_t>(static_cast<uint64_t>(sum));
    }
  } else {
    for (uint32_t i = 0; i < M * N; ++i) {
      float sum = info.c == Elem::kF16 ? half_to_float(static_cast<uint16_t>(c[i]))
                                       : bits_float(static_cast<uint32_t>(c[i]));
      for (uint32_t k = 0; k < K; ++k) {
        sum += multiplicand(a[i / N * K + k], info.in) * multiplicand(b[k * N + i % N], info.in);
      }
      if (info.d == Elem::kF16) {
        d[i] = float_to_half(sum, Round::kNearest);
      } else {
        d[i] = std::isnan(sum) ? 0x7fffffffu : float_bits(sum);
      }
    }
  }
  write_fragment(x, info.dr, info.gc, info.d, d);
}

// ---- decoding ----------------------------------------------------------------------------------

bool elem_of(T t, Elem* out) {
  switch (t) {
    // clang-format off
    case T::kF16: *out = Elem::kF16; return true;
    case T::kBF16: *out = Elem::kBF16; return true;
    case T::kTF32: *out = Elem::kTf32; return true;
    case T::kF32: *out = Elem::kF32; return true;
    case T::kS32: *out = Elem::kS32; return true;
    case T::kS8: *out = Elem::kS8; return true;
    case T::kU8: *out = Elem::kU8; return true;
    case T::kF64: *out = Elem::kF64; return true;
    default: return false;
      // clang-format on
  }
}

// Whether |m|, |n|, |k| is a shape wmma defines for multiplicands of |in| (bf16, s8 and u8
// share f16's shapes).
bool shape_fits(Elem in, uint32_t m, uint32_t n, uint32_t k) {
  const T type = in == Elem::kTf32 ? T::kTF32 : in == Elem::kF64 ? T::kF64 : T::kF16;
  return ptx::wmma_shape_defined(type, m, n, k);
}

const char* const kShapes =
    "m16n16k16, m32n8k16 and m8n32k16 (f16, bf16, s8, u8), m16n16k8 (tf32), m8n8k4 (f64)";

bool decode_memory_op(DecodeContext& d, const ir::Instruction& ins, Op& op, Role role, bool load) {
  const std::string name = load ? "wmma.load" : "wmma.store";
  if (!only_modifiers(d, ins, {M::kSync, M::kAligned, M::kRow, M::kCol, M::kGlobal, M::kShared})) {
    return false;
  }
  if (ins.mods.has(M::kRow) == ins.mods.has(M::kCol)) {
    return d.fail(name + " needs one layout, .row or .col");
  }
  Elem e = Elem::kF16;
  if (ins.types.size() != 1 || !elem_of(ins.types[0], &e)) {
    return d.fail(name +
                  " takes one type: .f16, .bf16, .tf32, .s8 or .u8 for A and B, .f16, "
                  ".f32 or .s32 for C and D, or .f64");
  }
  const uint32_t m = ins.shape_m, n = ins.shape_n, k = ins.shape_k;
  // The shapes that apply: A's and B's own type's; for C and D those of the multiplicands their
  // type goes with.
  bool fits = false;
  if (role == Role::kAccumulator) {
    switch (e) {
      case Elem::kF16:
      case Elem::kS32:
        fits = shape_fits(Elem::kF16, m, n, k);
        break;
      case Elem::kF32:  // f16, bf16 and tf32 products alike
        fits = shape_fits(Elem::kF16, m, n, k) || shape_fits(Elem::kTf32, m, n, k);
        break;
      case Elem::kF64:
        fits = shape_fits(Elem::kF64, m, n, k);
        break;
      default:
        return d.fail(name + " of C or D takes .f16, .f32, .s32 or .f64");
    }
  } else {
    if (e == Elem::kF32 || e == Elem::kS32) {
      return d.fail(name + " of A or B takes .f16, .bf16, .tf32, .s8, .u8 or .f64");
    }
    fits = shape_fits(e, m, n, k);
  }
  if (!fits) {
    return d.fail(name + "." + shape_text(ins) + " with ." + ir::type_name(ins.types[0]) +
                  " is not supported on the CPU PTX device (it runs " + kShapes + ")");
  }
  if (ins.operands.size() != 2 && ins.operands.size() != 3) {
    return d.fail(load ? "wmma.load takes registers, an address and an optional stride"
                       : "wmma.store takes an address, registers and an optional stride");
  }
  MemoryInfo* info = d.kernel().make<MemoryInfo>();
  info->g = geometry(role, m, n, k, e);
  info->elem = e;
  info->col_major = ins.mods.has(M::kCol);
  const MemSpace space = ins.mods.has(M::kGlobal)   ? MemSpace::kGlobal
                         : ins.mods.has(M::kShared) ? MemSpace::kShared
                                                    : MemSpace::kGeneric;
  Address addr;
  if (!d.address(ins.operands[load ? 1 : 0], space, &addr)) return false;
  if (addr.space != MemSpace::kGlobal && addr.space != MemSpace::kShared &&
      addr.space != MemSpace::kGeneric) {
    return d.fail(name + " accesses global or shared memory");
  }
  info->space = addr.space;
  info->base = addr.base;
  info->wide_base = addr.base_bytes == 8;
  info->disp = addr.disp;
  if (!register_list(d, ins.operands[load ? 0 : 1], registers_of(info->g, e), register_bytes(e),
                     load, load ? "the destination" : "the source", info->regs)) {
    return false;
  }
  if (ins.operands.size() == 3) {
    info->stride = d.source(ins.operands[2], T::kU32);
    if (info->stride == kNoRef) return false;
  }
  op.ext = info;
  op.fn = load ? wmma_load : wmma_store;
  return true;
}

bool decode_mma_op(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (!only_modifiers(d, ins,
                      {M::kSync, M::kAligned, M::kRow, M::kCol, M::kSatfinite, M::kRn, M::kRz,
                       M::kRm, M::kRp})) {
    return false;
  }
  if (!ins.mods.has(M::kRow) && !ins.mods.has(M::kCol)) {
    return d.fail("wmma.mma needs the layouts of A and B (.row or .col each)");
  }
  MmaInfo* info = d.kernel().make<MmaInfo>();
  const auto& t = ins.types;
  const auto is_int8 = [](T type) { return type == T::kS8 || type == T::kU8; };
  bool ok = false;
  if (t.size() == 2) {  // f16 multiplicands: .dtype.ctype
    info->in = Elem::kF16;
    ok = elem_of(t[0], &info->d) && elem_of(t[1], &info->c) &&
         (info->d == Elem::kF16 || info->d == Elem::kF32) &&
         (info->c == Elem::kF16 || info->c == Elem::kF32);
  } else if (t.size() == 4 && is_int8(t[1]) && is_int8(t[2])) {  // .s32.atype.btype.s32
    info->in = Elem::kS8;
    info->a_signed = t[1] == T::kS8;
    info->b_signed = t[2] == T::kS8;
    info->d = info->c = Elem::kS32;
    ok = t[0] == T::kS32 && t[3] == T::kS32;
  } else if (t.size() == 4 && t[1] == t[2] && elem_of(t[0], &info->d) && elem_of(t[1], &info->in) &&
             elem_of(t[3], &info->c)) {  // bf16, tf32: f32; f64
    const Elem acc = info->in == Elem::kF64 ? Elem::kF64 : Elem::kF32;
    ok = (info->in == Elem::kBF16 || info->in == Elem::kTf32 || info->in == Elem::kF64) &&
         info->d == acc && info->c == acc;
  }
  std::string combo = "wmma.mma." + shape_text(ins);
  for (T type : t) combo += std::string(".") + ir::type_name(type);
  if (!ok || !shape_fits(info->in, ins.shape_m, ins.shape_n, ins.shape_k)) {
    return d.fail(combo + " is not supported on the CPU PTX device (it runs " + kShapes +
                  ", with f16 or f32 C and D for f16, f32 for bf16 and tf32, s32 for s8 and u8)");
  }
  if (ins.mods.has(M::kSatfinite) && info->in != Elem::kS8) {
    return d.fail(".satfinite applies only to integer wmma.mma");
  }
  const int rounds =
      ins.mods.has(M::kRn) + ins.mods.has(M::kRz) + ins.mods.has(M::kRm) + ins.mods.has(M::kRp);
  if (rounds > 0 && info->in != Elem::kF64) {
    return d.fail("a rounding modifier applies only to f64");
  }
  if (rounds > 1) return d.fail("wmma.mma takes one rounding modifier");
  info->satfinite = ins.mods.has(M::kSatfinite);
  if (ins.mods.has(M::kRz)) info->rounding = FE_TOWARDZERO;
  if (ins.mods.has(M::kRm)) info->rounding = FE_DOWNWARD;
  if (ins.mods.has(M::kRp)) info->rounding = FE_UPWARD;
  info->m = ins.shape_m;
  info->n = ins.shape_n;
  info->k = ins.shape_k;
  info->ga = geometry(Role::kA, info->m, info->n, info->k, info->in);
  info->gb = geometry(Role::kB, info->m, info->n, info->k, info->in);
  info->gc = geometry(Role::kAccumulator, info->m, info->n, info->k, info->c);
  if (ins.operands.size() != 4) return d.fail("wmma.mma takes four operands: d, a, b, c");
  const uint32_t in_bytes = register_bytes(info->in);
  if (!register_list(d, ins.operands[0], registers_of(info->gc, info->d), register_bytes(info->d),
                     true, "d", info->dr) ||
      !register_list(d, ins.operands[1], registers_of(info->ga, info->in), in_bytes, false, "a",
                     info->a) ||
      !register_list(d, ins.operands[2], registers_of(info->gb, info->in), in_bytes, false, "b",
                     info->b) ||
      !register_list(d, ins.operands[3], registers_of(info->gc, info->c), register_bytes(info->c),
                     false, "c", info->cr)) {
    return false;
  }
  op.ext = info;
  op.fn = wmma_mma;
  return true;
}

}  // namespace

bool decode_wmma(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (!require_sync_aligned(d, ins)) return false;
  // The operation words, which the front end keeps as unknown modifiers, in order; any word
  // after them is one the front end does not know (such as the sub-byte types .s4 and .b1).
  const auto& words = ins.unknown_mods;
  const bool memory = !words.empty() && (words[0] == "load" || words[0] == "store");
  const size_t used = words.empty() ? 0 : memory ? 2 : 1;
  if (words.size() > used) {
    return d.fail("modifier '." + words[used] + "' is not supported on the CPU PTX device");
  }
  std::string operation;
  for (const std::string& word : words) operation += "." + word;
  if (operation == ".load.a") return decode_memory_op(d, ins, op, Role::kA, true);
  if (operation == ".load.b") return decode_memory_op(d, ins, op, Role::kB, true);
  if (operation == ".load.c") return decode_memory_op(d, ins, op, Role::kAccumulator, true);
  if (operation == ".store.d") return decode_memory_op(d, ins, op, Role::kAccumulator, false);
  if (operation == ".mma") return decode_mma_op(d, ins, op);
  return d.fail("wmma needs .load.a, .load.b, .load.c, .store.d or .mma" +
                (operation.empty() ? std::string() : ", not '" + operation + "'"));
}

}  // namespace hal::ptx_vm
