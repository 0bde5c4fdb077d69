// Loads and stores (ld, ldu, st, scalar and vector, every state space and generic addressing),
// cvta and isspacep.
//
// Every access is checked (exec.h): global addresses against the launch's memory map, shared
// ones against the block's shared memory, local ones against the thread's local memory; an
// access must be aligned to its whole size (a vector's too), as on a GPU.
#include "ptx_vm/decode.h"

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;
using O = ir::Opcode;

// Op layout for ld/st: a[0..3] the data registers (one per vector element), a[4] the address
// base (kNoRef for an absolute address), disp the displacement. flags: bit 0 a 64-bit base.
// imm: element bytes | registers' bytes << 8 | signed << 16.
HAL_PTX_VM_INLINE uint64_t address_of(const Exec& x, const Op& op, uint32_t lane) {
  return address_at(x, op.a[4], (op.flags & 1) != 0, op.disp, lane);
}

// Whether other worker threads reach |space| too: global memory, directly or through a generic
// address. Such accesses are relaxed atomics (exec.h).
constexpr bool host_shared(MemSpace space) {
  return space == MemSpace::kGlobal || space == MemSpace::kGeneric;
}

// Moves one element between memory and a register row, widening with sign or zero extension
// when the register is wider than the element.
HAL_PTX_VM_INLINE void element_to_register(uint8_t* reg_row, uint32_t lane, uint32_t reg_bytes,
                                           const uint8_t* mem, uint32_t bytes, bool is_signed) {
  uint8_t* r = reg_row + size_t{lane} * reg_bytes;
  if (reg_bytes == bytes || bytes > 8) {
    std::memcpy(r, mem, bytes);
    return;
  }
  uint64_t v = 0;
  std::memcpy(&v, mem, bytes);
  if (is_signed) {
    const int shift = 64 - 8 * static_cast<int>(bytes);
    v = static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
  }
  std::memcpy(r, &v, reg_bytes <= 8 ? reg_bytes : 8);
}

template <MemSpace kSpace, uint32_t kBytes, uint32_t kVec>
void load(Exec& x, const Op& op, uint32_t mask) {
  const uint32_t reg_bytes = (op.imm >> 8) & 0xff;
  const bool is_signed = ((op.imm >> 16) & 1) != 0;
  uint8_t* rows[kVec];
  for (uint32_t v = 0; v < kVec; ++v) {
    rows[v] = op.a[v] != kNoRef ? x.row<uint8_t>(op.a[v]) : nullptr;
  }
  for_lanes(mask, [&](uint32_t l) {
    if (x.faulted) return;
    const uint8_t* p =
        memory_at(x, kSpace, address_of(x, op, l), kBytes * kVec, kBytes * kVec, Access::kRead, l);
    if (p == nullptr) return;
    const auto to_registers = [&](const uint8_t* from) {
      for (uint32_t v = 0; v < kVec; ++v) {
        if (rows[v] != nullptr) {
          element_to_register(rows[v], l, reg_bytes, from + v * kBytes, kBytes, is_signed);
        }
      }
    };
    if constexpr (host_shared(kSpace)) {
      uint8_t copy[kBytes * kVec];
      load_global<kBytes * kVec>(copy, p, kBytes * kVec);
      to_registers(copy);
    } else {
      to_registers(p);
    }
  });
}

template <MemSpace kSpace, uint32_t kBytes, uint32_t kVec>
void store(Exec& x, const Op& op, uint32_t mask) {
  const uint32_t reg_bytes = (op.imm >> 8) & 0xff;
  const uint8_t* rows[kVec];
  for (uint32_t v = 0; v < kVec; ++v) rows[v] = x.row<uint8_t>(op.a[v]);
  for_lanes(mask, [&](uint32_t l) {
    if (x.faulted) return;
    uint8_t* p =
        memory_at(x, kSpace, address_of(x, op, l), kBytes * kVec, kBytes * kVec, Access::kWrite, l);
    if (p == nullptr) return;
    for (uint32_t v = 0; v < kVec; ++v) {
      if constexpr (host_shared(kSpace)) {
        store_global<kBytes>(p + v * kBytes, rows[v] + size_t{l} * reg_bytes, kBytes);
      } else {
        std::memcpy(p + v * kBytes, rows[v] + size_t{l} * reg_bytes, kBytes);
      }
    }
  });
}

// The common case as a tight loop: one element per lane, the register exactly its width, a base
// register of |Base| (u32 or u64). A fault ends the loop: the engine stops the block after it.
template <MemSpace kSpace, typename T, typename Base>
void load_scalar(Exec& x, const Op& op, uint32_t mask) {
  T* d = x.row<T>(op.a[0]);
  const Base* base = x.row<Base>(op.a[4]);
  const Base disp = static_cast<Base>(op.disp);  // a u32 base wraps, as in address_at
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    if (((mask >> l) & 1u) == 0) continue;
    const uint8_t* p = memory_at(x, kSpace, uint64_t{static_cast<Base>(base[l] + disp)}, sizeof(T),
                                 sizeof(T), Access::kRead, l);
    if (p == nullptr) return;
    if constexpr (host_shared(kSpace)) {
      d[l] = load_relaxed<T>(p);
    } else {
      std::memcpy(&d[l], p, sizeof(T));
    }
  }
}

template <MemSpace kSpace, typename T, typename Base>
void store_scalar(Exec& x, const Op& op, uint32_t mask) {
  const T* v = x.row<T>(op.a[0]);
  const Base* base = x.row<Base>(op.a[4]);
  const Base disp = static_cast<Base>(op.disp);  // a u32 base wraps, as in address_at
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    if (((mask >> l) & 1u) == 0) continue;
    uint8_t* p = memory_at(x, kSpace, uint64_t{static_cast<Base>(base[l] + disp)}, sizeof(T),
                           sizeof(T), Access::kWrite, l);
    if (p == nullptr) return;
    if constexpr (host_shared(kSpace)) {
      store_relaxed<T>(p, v[l]);
    } else {
      std::memcpy(p, &v[l], sizeof(T));
    }
  }
}

template <MemSpace kSpace, typename Base>
Handler pick_scalar(uint32_t bytes, bool load) {
  switch (bytes) {
    case 2:
      return load ? load_scalar<kSpace, uint16_t, Base> : store_scalar<kSpace, uint16_t, Base>;
    case 4:
      return load ? load_scalar<kSpace, uint32_t, Base> : store_scalar<kSpace, uint32_t, Base>;
    case 8:
      return load ? load_scalar<kSpace, uint64_t, Base> : store_scalar<kSpace, uint64_t, Base>;
    default:
      return nullptr;
  }
}

// The fast handler for |space| when the access has the common shape, else nullptr.
Handler pick_fast(MemSpace space, uint32_t bytes, bool base64, bool load) {
  switch (space) {
    case MemSpace::kGlobal:
      return base64 ? pick_scalar<MemSpace::kGlobal, uint64_t>(bytes, load) : nullptr;
    case MemSpace::kShared:
      return base64 ? pick_scalar<MemSpace::kShared, uint64_t>(bytes, load)
                    : pick_scalar<MemSpace::kShared, uint32_t>(bytes, load);
    case MemSpace::kLocal:
      return base64 ? pick_scalar<MemSpace::kLocal, uint64_t>(bytes, load)
                    : pick_scalar<MemSpace::kLocal, uint32_t>(bytes, load);
    case MemSpace::kGeneric:
      return base64 ? pick_scalar<MemSpace::kGeneric, uint64_t>(bytes, load) : nullptr;
    default:
      return nullptr;
  }
}

template <MemSpace kSpace, bool kLoad>
Handler pick_vec(uint32_t bytes, uint32_t vec) {
#define HAL_MEM_CASE(B)                                          \
  case B:                                                        \
    switch (vec) {                                               \
      case 1:                                                    \
        return kLoad ? load<kSpace, B, 1> : store<kSpace, B, 1>; \
      case 2:                                                    \
        return kLoad ? load<kSpace, B, 2> : store<kSpace, B, 2>; \
      case 4:                                                    \
        return kLoad ? load<kSpace, B, 4> : store<kSpace, B, 4>; \
      default:                                                   \
        return nullptr;                                          \
    }
  switch (bytes) {
    HAL_MEM_CASE(1)
    HAL_MEM_CASE(2)
    HAL_MEM_CASE(4)
    HAL_MEM_CASE(8)
    HAL_MEM_CASE(16)
    default:
      return nullptr;
  }
#undef HAL_MEM_CASE
}

template <bool kLoad>
Handler pick_memory(MemSpace space, uint32_t bytes, uint32_t vec) {
  switch (space) {
    case MemSpace::kGlobal:
      return pick_vec<MemSpace::kGlobal, kLoad>(bytes, vec);
    case MemSpace::kShared:
      return pick_vec<MemSpace::kShared, kLoad>(bytes, vec);
    case MemSpace::kLocal:
      return pick_vec<MemSpace::kLocal, kLoad>(bytes, vec);
    case MemSpace::kParam:
      return pick_vec<MemSpace::kParam, kLoad>(bytes, vec);
    case MemSpace::kConst:
      return pick_vec<MemSpace::kConst, kLoad>(bytes, vec);
    case MemSpace::kGeneric:
      return pick_vec<MemSpace::kGeneric, kLoad>(bytes, vec);
  }
  return nullptr;
}

bool space_of(const ir::Instruction& ins, MemSpace* out, DecodeContext& d) {
  *out = MemSpace::kGeneric;
  int found = 0;
  if (ins.mods.has(M::kGlobal)) *out = MemSpace::kGlobal, ++found;
  if (ins.mods.has(M::kShared)) *out = MemSpace::kShared, ++found;
  if (ins.mods.has(M::kLocal)) *out = MemSpace::kLocal, ++found;
  if (ins.mods.has(M::kParam)) *out = MemSpace::kParam, ++found;
  if (ins.mods.has(M::kConst)) *out = MemSpace::kConst, ++found;
  if (ins.mods.has(M::kSharedCluster)) {
    return d.fail(
        ".shared::cluster addresses other blocks' shared memory, which a one-block "
        "cluster does not have on the CPU PTX device");
  }
  if (found > 1) return d.fail("more than one state space");
  return true;
}

bool decode_ld_st(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  const bool is_load = ins.opcode != O::kSt;
  if (ins.types.size() != 1) return d.fail("expected exactly one type");
  const ir::Type type = ins.types[0];
  const uint32_t bytes = ir::type_size(type);
  if (bytes == 0) return d.fail("cannot load or store this type");
  MemSpace space;
  if (!space_of(ins, &space, d)) return false;
  const size_t extra = ins.mods.has(M::kCacheHint) ? 1 : 0;  // the cache policy: ignored
  if (ins.operands.size() != 2 + extra) {
    return d.fail("expected a register (or vector) and an address");
  }
  const ir::Operand* data_operand = &ins.operands[is_load ? 0 : 1];
  // Triton writes a scalar access's register in braces too: "ld.global.b32 { %r1 }, [...]".
  if (ins.vector == 1 && data_operand->kind == ir::OperandKind::kVector &&
      data_operand->elements.size() == 1) {
    data_operand = &data_operand->elements[0];
  }
  const ir::Operand& data = *data_operand;
  const ir::Operand& where = ins.operands[is_load ? 1 : 0];
  Address addr;
  if (!d.address(where, space, &addr)) return false;
  space = addr.space;
  if (space == MemSpace::kParam && !is_load) {
    return d.fail("st.param is only allowed on a .func's parameters and call arguments");
  }
  op.a[4] = addr.base;
  op.disp = addr.disp;
  op.flags = addr.base_bytes == 8 ? 1 : 0;

  const uint32_t vec = ins.vector;
  if (vec != 1 && vec != 2 && vec != 4) return d.fail("vectors of 2 or 4 elements only");
  if ((vec > 1) != (data.kind == ir::OperandKind::kVector)) {
    return d.fail(vec > 1 ? "a vector instruction needs {..} registers"
                          : "a vector of registers needs .v2 or .v4");
  }
  uint32_t reg_bytes = 0;
  const auto one = [&](const ir::Operand& o, uint32_t index) -> bool {
    if (o.kind == ir::OperandKind::kSink) {
      if (!is_load) return d.fail("a store cannot take '_'");
      op.a[index] = kNoRef;
      return true;
    }
    op.a[index] = is_load ? d.destination(o, type, /*allow_wider=*/true)
                          : d.source(o, type, /*allow_wider=*/true);
    if (op.a[index] == kNoRef) return false;
    uint32_t rb = d.register_bytes(o);
    if (rb == 0) rb = bytes;  // an immediate, materialised at the type's size
    if (reg_bytes != 0 && rb != reg_bytes) {
      return d.fail("the elements of a vector must be registers of one width");
    }
    reg_bytes = rb;
    return true;
  };
  if (vec == 1) {
    if (!one(data, 0)) return false;
  } else {
    if (data.elements.size() != vec) return d.fail("the vector has the wrong number of elements");
    for (uint32_t i = 0; i < vec; ++i) {
      if (!one(data.elements[i], i)) return false;
    }
  }
  if (reg_bytes == 0) reg_bytes = bytes;
  if (reg_bytes > 8 && reg_bytes != bytes) return d.fail("unsupported register width");
  op.imm = bytes | (reg_bytes << 8) | (ir::is_signed(type) ? (1u << 16) : 0u);
  if (vec == 1 && reg_bytes == bytes && op.a[4] != kNoRef && op.a[0] != kNoRef) {
    op.fn = pick_fast(space, bytes, addr.base_bytes == 8, is_load);
    if (op.fn != nullptr) return true;
  }
  op.fn = is_load ? pick_memory<true>(space, bytes, vec) : pick_memory<false>(space, bytes, vec);
  return op.fn != nullptr || d.fail("unsupported load or store");
}

// ---- cvta and isspacep ---------------------------------------------------------------------

// cvta{.to}.space: imm 0 global/const (identity), 1 shared, 2 local; flags 1 = .to.
void cvta64(Exec& x, const Op& op, uint32_t mask) {
  uint64_t* d = x.row<uint64_t>(op.a[0]);
  const uint64_t* a = x.row<uint64_t>(op.a[1]);
  const uint64_t window = op.imm == 1 ? kSharedWindow : op.imm == 2 ? kLocalWindow : 0;
  const bool to = op.flags != 0;
  for_lanes(mask, [&](uint32_t l) { d[l] = to ? a[l] - window : a[l] + window; });
}

void cvta32(Exec& x, const Op& op, uint32_t mask) {
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = a[l]; });
}

// isspacep.space p, a: imm 0 global, 1 shared, 2 local, 3 const, 4 param.
void isspacep(Exec& x, const Op& op, uint32_t mask) {
  const uint64_t* a = x.row<uint64_t>(op.a[1]);
  uint32_t bits = 0;
  for_lanes(mask, [&](uint32_t l) {
    const bool shared = a[l] - kSharedWindow < kWindowSize;
    const bool local = a[l] - kLocalWindow < kWindowSize;
    bool r = false;
    switch (op.imm) {
      case 0:
        r = !shared && !local;
        break;
      case 1:
        r = shared;
        break;
      case 2:
        r = local;
        break;
      default:
        r = false;
        break;
    }
    if (r) bits |= 1u << l;
  });
  write_pred(x, op.a[0], bits, mask);
}

bool decode_cvta(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.types.size() != 1 || ins.operands.size() != 2) {
    return d.fail("cvta takes one type, a destination and a source");
  }
  const ir::Type t = ins.types[0];
  MemSpace space;
  if (!space_of(ins, &space, d)) return false;
  switch (space) {
    case MemSpace::kGlobal:
    case MemSpace::kConst:
      op.imm = 0;
      break;
    case MemSpace::kShared:
      op.imm = 1;
      break;
    case MemSpace::kLocal:
      op.imm = 2;
      break;
    default:
      return d.fail("cvta needs .global, .shared, .local or .const");
  }
  op.flags = ins.mods.has(M::kTo) ? 1 : 0;
  op.a[0] = d.destination(ins.operands[0], t);
  if (op.a[0] == kNoRef) return false;
  op.a[1] = d.source(ins.operands[1], t);
  if (op.a[1] == kNoRef) return false;
  if (ir::type_size(t) == 8) {
    op.fn = cvta64;
    return true;
  }
  if (ir::type_size(t) == 4 && op.imm == 0) {
    op.fn = cvta32;
    return true;
  }
  return d.fail("cvta of shared or local addresses takes .u64 on the CPU PTX device");
}

bool decode_isspacep(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.operands.size() != 2) return d.fail("isspacep takes a predicate and an address");
  MemSpace space;
  if (!space_of(ins, &space, d)) return false;
  switch (space) {
    case MemSpace::kGlobal:
      op.imm = 0;
      break;
    case MemSpace::kShared:
      op.imm = 1;
      break;
    case MemSpace::kLocal:
      op.imm = 2;
      break;
    case MemSpace::kConst:
      op.imm = 3;
      break;
    case MemSpace::kParam:
      op.imm = 4;
      break;
    default:
      return d.fail("isspacep needs a state space");
  }
  op.a[0] = d.predicate(ins.operands[0]);
  op.a[1] = d.source(ins.operands[1], ir::Type::kU64);
  if (op.a[0] == kNoRef || op.a[1] == kNoRef) return false;
  op.fn = isspacep;
  return true;
}

}  // namespace

bool decode_memory(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  switch (ins.opcode) {
    case O::kLd:
    case O::kLdu:
    case O::kSt:
      return decode_ld_st(d, ins, op);
    case O::kCvta:
      return decode_cvta(d, ins, op);
    case O::kIsspacep:
      return decode_isspacep(d, ins, op);
    default:
      return d.fail("not a memory instruction");
  }
}

}  // namespace hal::ptx_vm
