// Memory: ld, st, atom, red and cp.async on global, shared, local and parameter memory, and
// generic addresses traced to one of them (kernel.cpp's trace_address_spaces).
//
// Global memory is reached through PhysicalStorageBuffer pointers made from 64-bit addresses
// at each access, with the access's natural alignment (PTX requires it). Shared and local
// memory are arrays of 32-bit words: narrower accesses select their bytes, and narrower
// shared stores use atomic and/or on the word so that threads writing neighbouring bytes of
// one word never lose each other's writes.
#include "ptx_spirv/kernel.h"

namespace hal::ptx_spirv {

namespace {

using O = ir::Opcode;
using T = ir::Type;
using M = ir::Mod;

ir::Space space_of(const ir::Instruction& ins) {
  if (ins.mods.has(M::kGlobal)) return ir::Space::kGlobal;
  if (ins.mods.has(M::kShared)) return ir::Space::kShared;
  if (ins.mods.has(M::kSharedCluster)) return ir::Space::kSharedCluster;
  if (ins.mods.has(M::kLocal)) return ir::Space::kLocal;
  if (ins.mods.has(M::kParam)) return ir::Space::kParam;
  if (ins.mods.has(M::kConst)) return ir::Space::kConst;
  return ir::Space::kNone;
}

}  // namespace

Kernel::ResolvedAddress Kernel::resolve_address(const ir::Instruction& ins,
                                                const ir::Operand& address, ir::Space space) {
  if (address.kind != ir::OperandKind::kAddress) invalid(ins, "expected an address [...]");
  if (!address.elements.empty()) refuse(ins, "this address form is not supported");
  ResolvedAddress at;
  if (space == ir::Space::kParam) {
    if (address.base != ir::AddressBase::kSymbol || address.symbol.kind != ir::SymbolKind::kParam ||
        address.symbol.index >= param_offsets_.size()) {
      refuse(ins, "parameters are read only as [parameter + constant offset]");
    }
    at.param = true;
    at.offset = static_cast<int64_t>(param_offsets_[address.symbol.index]) + address.integer;
    return at;
  }
  if (space == ir::Space::kSharedCluster) refuse(ins, ".shared::cluster memory is not supported");
  AddressSpace kind = AddressSpace::kGlobal;
  if (space == ir::Space::kShared) kind = AddressSpace::kShared;
  if (space == ir::Space::kLocal) kind = AddressSpace::kLocal;
  // .const memory holds only module variables here (kernel parameters are not in it).
  if (space == ir::Space::kConst) kind = AddressSpace::kConstant;
  const bool by_register =
      address.base == ir::AddressBase::kRegister && address.reg < spaces_.size();
  if (space == ir::Space::kNone) {
    // Generic: where tracing says the address comes from.
    if (by_register) {
      const AddressSpace traced = spaces_[address.reg];
      if (traced == AddressSpace::kConflict) {
        refuse(ins,
               "this generic address may point to more than one state space (shared, "
               "local, global or a module variable), which a Vulkan access cannot decide at run "
               "time");
      }
      if (traced == AddressSpace::kShared || traced == AddressSpace::kLocal ||
          traced == AddressSpace::kConstant) {
        kind = traced;
      }
    } else if (address.base == ir::AddressBase::kSymbol) {
      refuse(ins, "a generic access through a symbol is not supported");
    }
  } else if ((space == ir::Space::kGlobal || space == ir::Space::kConst) && by_register &&
             constant_reached_[address.reg]) {
    // A .global access to a module variable reads the kernel's copy of the variables.
    if (spaces_[address.reg] != AddressSpace::kConstant) {
      refuse(ins,
             "this address may point to a module variable or to other global memory, which a "
             "Vulkan access cannot decide at run time");
    }
    kind = AddressSpace::kConstant;
  } else if (space == ir::Space::kGlobal && address.base == ir::AddressBase::kSymbol) {
    kind = AddressSpace::kConstant;
  }
  at.space = kind;
  // Global addresses are 64-bit; shared and local ones byte offsets in 32 bits.
  const bool global = kind == AddressSpace::kGlobal;
  const uint32_t bytes = global ? 8 : 4;
  uint32_t value = 0;
  if (address.base == ir::AddressBase::kRegister) {
    ir::Operand base;
    base.kind = ir::OperandKind::kRegister;
    base.reg = address.reg;
    value = read_bits(ins, base, bytes);
  } else if (address.base == ir::AddressBase::kNone) {
    value = global ? b.u64(0) : b.u32(0);
  } else if (global) {
    invalid(ins, "a global address through a symbol that is no module variable");
  } else {
    value = symbol_address(ins, address.symbol);
  }
  if (address.integer != 0) {
    const uint64_t offset = static_cast<uint64_t>(address.integer);
    value = global ? b.op(spv::Op::OpIAdd, t_u64, {value, b.u64(offset)})
                   : b.op(spv::Op::OpIAdd, t_u32, {value, b.u32(static_cast<uint32_t>(offset))});
  }
  at.value = value;
  if (global) return at;
  if (kind == AddressSpace::kShared && shared_array_ == 0) {
    refuse(ins, "a shared-memory access in a kernel that declares no shared memory");
  }
  if (kind == AddressSpace::kLocal && local_array_ == 0) {
    refuse(ins, "a local-memory access in a kernel that declares no local memory");
  }
  if (kind == AddressSpace::kConstant && constant_array_ == 0) {
    refuse(ins, "a module-variable access in a kernel that names no module variable");
  }
  return at;
}

Kernel::ResolvedAddress Kernel::advance(const ResolvedAddress& at, uint32_t bytes) {
  ResolvedAddress next = at;
  if (at.param) {
    next.offset += bytes;
  } else if (at.space == AddressSpace::kGlobal) {
    next.value = b.op(spv::Op::OpIAdd, t_u64, {at.value, b.u64(bytes)});
  } else {
    next.value = b.op(spv::Op::OpIAdd, t_u32, {at.value, b.u32(bytes)});
  }
  return next;
}

uint32_t Kernel::word_pointer(spv::StorageClass storage, uint32_t array, uint32_t byte_offset) {
  const uint32_t index = b.op(spv::Op::OpShiftRightLogical, t_u32, {byte_offset, b.u32(2)});
  return b.op(spv::Op::OpAccessChain, b.type_pointer(storage, t_u32), {array, index});
}

std::pair<spv::StorageClass, uint32_t> Kernel::word_array(AddressSpace space) const {
  switch (space) {
    case AddressSpace::kShared:
      return {spv::StorageClass::Workgroup, shared_array_};
    case AddressSpace::kConstant:
      return {spv::StorageClass::Private, constant_array_};
    default:
      return {spv::StorageClass::Function, local_array_};
  }
}

uint32_t Kernel::load_param(const ir::Instruction& ins, int64_t offset, uint32_t bytes) {
  if (offset < 0 || offset + bytes > param_bytes_ || offset % bytes != 0) {
    invalid(ins, "a parameter read outside the parameters or misaligned");
  }
  const uint32_t ptr = b.type_pointer(spv::StorageClass::PushConstant, t_u32);
  auto push_word = [&](uint32_t index) {
    const uint32_t p = b.op(spv::Op::OpAccessChain, ptr, {push_constants_, b.u32(0), b.u32(index)});
    return b.op(spv::Op::OpLoad, t_u32, {p});
  };
  uint32_t block = 0;  // the parameter block's address, when the parameters are in memory
  if (params_in_buffer_) {
    block = b.op(spv::Op::OpBitwiseOr, t_u64,
                 {b.op(spv::Op::OpUConvert, t_u64, {push_word(0)}),
                  b.op(spv::Op::OpShiftLeftLogical, t_u64,
                       {b.op(spv::Op::OpUConvert, t_u64, {push_word(1)}), b.u32(32)})});
  }
  auto word = [&](uint32_t index) {
    if (!params_in_buffer_) return push_word(index);
    const uint32_t address = b.op(spv::Op::OpIAdd, t_u64, {block, b.u64(uint64_t{index} * 4)});
    const uint32_t p =
        b.op(spv::Op::OpConvertUToPtr,
             b.type_pointer(spv::StorageClass::PhysicalStorageBuffer, t_u32), {address});
    return b.op(spv::Op::OpLoad, t_u32,
                {p, static_cast<uint32_t>(spv::MemoryAccessMask::Aligned), 4u});
  };
  const uint32_t index = static_cast<uint32_t>(offset / 4);
  if (bytes == 8) {
    const uint32_t lo = b.op(spv::Op::OpUConvert, t_u64, {word(index)});
    const uint32_t hi = b.op(spv::Op::OpUConvert, t_u64, {word(index + 1)});
    return b.op(spv::Op::OpBitwiseOr, t_u64,
                {lo, b.op(spv::Op::OpShiftLeftLogical, t_u64, {hi, b.u32(32)})});
  }
  uint32_t w = word(index);
  const uint32_t shift = static_cast<uint32_t>(offset % 4) * 8;
  if (bytes < 4) {
    w = b.op(spv::Op::OpBitFieldUExtract, t_u32, {w, b.u32(shift), b.u32(bytes * 8)});
  }
  return w;
}

uint32_t Kernel::load(const ir::Instruction& ins, const ResolvedAddress& at, uint32_t bytes) {
  if (at.param) return load_param(ins, at.offset, bytes);
  if (at.space == AddressSpace::kGlobal) {
    uint32_t type = bytes == 8 ? t_u64 : t_u32;
    uint32_t access = type;
    if (bytes == 2) {
      need(target_.storage_buffer_16bit, ins, "storageBuffer16BitAccess (16-bit global loads)");
      b.capability(spv::Capability::StorageBuffer16BitAccess);
      access = b.type_int(16);
    } else if (bytes == 1) {
      need(target_.storage_buffer_8bit, ins, "storageBuffer8BitAccess (8-bit global loads)");
      b.capability(spv::Capability::StorageBuffer8BitAccess);
      access = b.type_int(8);
    }
    const uint32_t ptr_type = b.type_pointer(spv::StorageClass::PhysicalStorageBuffer, access);
    const uint32_t ptr = b.op(spv::Op::OpConvertUToPtr, ptr_type, {at.value});
    uint32_t v = b.op(spv::Op::OpLoad, access, {ptr, access_mask(), bytes});
    if (bytes < 4) v = b.op(spv::Op::OpUConvert, t_u32, {v});
    return v;
  }
  const std::pair<spv::StorageClass, uint32_t> words = word_array(at.space);
  const spv::StorageClass storage = words.first;
  const uint32_t array = words.second;
  auto word_at = [&](uint32_t offset) {
    const uint32_t p = word_pointer(storage, array, offset);
    if (volatile_) {
      return b.op(spv::Op::OpLoad, t_u32,
                  {p, static_cast<uint32_t>(spv::MemoryAccessMask::Volatile)});
    }
    return b.op(spv::Op::OpLoad, t_u32, {p});
  };
  if (bytes == 8) {
    const uint32_t lo = b.op(spv::Op::OpUConvert, t_u64, {word_at(at.value)});
    const uint32_t hi = b.op(spv::Op::OpUConvert, t_u64,
                             {word_at(b.op(spv::Op::OpIAdd, t_u32, {at.value, b.u32(4)}))});
    return b.op(spv::Op::OpBitwiseOr, t_u64,
                {lo, b.op(spv::Op::OpShiftLeftLogical, t_u64, {hi, b.u32(32)})});
  }
  uint32_t w = word_at(at.value);
  if (bytes < 4) {
    const uint32_t shift =
        b.op(spv::Op::OpShiftLeftLogical, t_u32,
             {b.op(spv::Op::OpBitwiseAnd, t_u32, {at.value, b.u32(3)}), b.u32(3)});
    w = b.op(spv::Op::OpBitFieldUExtract, t_u32, {w, shift, b.u32(bytes * 8)});
  }
  return w;
}

void Kernel::store(const ir::Instruction& ins, const ResolvedAddress& at, uint32_t bytes,
                   uint32_t bits) {
  if (at.param) refuse(ins, "kernel parameters are read-only here");
  if (at.space == AddressSpace::kGlobal) {
    uint32_t access = bytes == 8 ? t_u64 : t_u32;
    uint32_t value = bits;
    if (bytes == 2) {
      need(target_.storage_buffer_16bit, ins, "storageBuffer16BitAccess (16-bit global stores)");
      b.capability(spv::Capability::StorageBuffer16BitAccess);
      access = b.type_int(16);
      value = b.op(spv::Op::OpUConvert, access, {bits});
    } else if (bytes == 1) {
      need(target_.storage_buffer_8bit, ins, "storageBuffer8BitAccess (8-bit global stores)");
      b.capability(spv::Capability::StorageBuffer8BitAccess);
      access = b.type_int(8);
      value = b.op(spv::Op::OpUConvert, access, {bits});
    }
    const uint32_t ptr_type = b.type_pointer(spv::StorageClass::PhysicalStorageBuffer, access);
    const uint32_t ptr = b.op(spv::Op::OpConvertUToPtr, ptr_type, {at.value});
    b.op_void(spv::Op::OpStore, {ptr, value, access_mask(), bytes});
    return;
  }
  if (at.space == AddressSpace::kConstant) {
    refuse(ins,
           "a store to a module variable (.global or .const): translated kernels only read "
           "them");
  }
  const bool shared = at.space == AddressSpace::kShared;
  const std::pair<spv::StorageClass, uint32_t> words = word_array(at.space);
  const spv::StorageClass storage = words.first;
  const uint32_t array = words.second;
  if (bytes == 8) {
    b.op_void(spv::Op::OpStore,
              {word_pointer(storage, array, at.value), b.op(spv::Op::OpUConvert, t_u32, {bits})});
    const uint32_t hi = b.op(spv::Op::OpUConvert, t_u32,
                             {b.op(spv::Op::OpShiftRightLogical, t_u64, {bits, b.u32(32)})});
    b.op_void(
        spv::Op::OpStore,
        {word_pointer(storage, array, b.op(spv::Op::OpIAdd, t_u32, {at.value, b.u32(4)})), hi});
    return;
  }
  const uint32_t ptr = word_pointer(storage, array, at.value);
  if (bytes == 4) {
    b.op_void(spv::Op::OpStore, {ptr, bits});
    return;
  }
  const uint32_t shift = b.op(spv::Op::OpShiftLeftLogical, t_u32,
                              {b.op(spv::Op::OpBitwiseAnd, t_u32, {at.value, b.u32(3)}), b.u32(3)});
  const uint32_t mask =
      b.op(spv::Op::OpShiftLeftLogical, t_u32, {b.u32((1u << (bytes * 8)) - 1), shift});
  const uint32_t placed = b.op(spv::Op::OpBitwiseAnd, t_u32,
                               {b.op(spv::Op::OpShiftLeftLogical, t_u32, {bits, shift}), mask});
  if (shared) {
    const uint32_t scope = b.u32(static_cast<uint32_t>(spv::Scope::Workgroup));
    const uint32_t relaxed = b.u32(0);
    b.op(spv::Op::OpAtomicAnd, t_u32, {ptr, scope, relaxed, b.op(spv::Op::OpNot, t_u32, {mask})});
    b.op(spv::Op::OpAtomicOr, t_u32, {ptr, scope, relaxed, placed});
  } else {
    const uint32_t old = b.op(spv::Op::OpLoad, t_u32, {ptr});
    const uint32_t kept =
        b.op(spv::Op::OpBitwiseAnd, t_u32, {old, b.op(spv::Op::OpNot, t_u32, {mask})});
    b.op_void(spv::Op::OpStore, {ptr, b.op(spv::Op::OpBitwiseOr, t_u32, {kept, placed})});
  }
}

uint32_t Kernel::access_mask() const {
  uint32_t mask = static_cast<uint32_t>(spv::MemoryAccessMask::Aligned);
  if (volatile_) mask |= static_cast<uint32_t>(spv::MemoryAccessMask::Volatile);
  return mask;
}

// ld.relaxed, ld.acquire, st.relaxed and st.release with a scope are atomic loads and stores of
// that scope (.cta: the workgroup; .gpu, .cluster and .sys: the device, the widest scope a
// Vulkan shader names), acquire and release ordering the memory of the access's own kind.
// Local memory is the thread's own: there an ordered access is a plain one.
void Kernel::ordered_access(const ir::Instruction& ins, const ResolvedAddress& at, uint32_t bytes,
                            bool is_load, const ir::Operand& data) {
  if (ins.vector > 1) refuse(ins, "ordered vector loads and stores are not supported");
  if (at.param || at.space == AddressSpace::kLocal || at.space == AddressSpace::kConstant) {
    if (is_load) {
      write_bits(ins, data, bytes, load(ins, at, bytes), ir::is_signed(ins.types[0]));
    } else {
      store(ins, at, bytes, read_bits(ins, data, bytes));
    }
    return;
  }
  const bool shared = at.space == AddressSpace::kShared;
  if (bytes != 4 && (bytes != 8 || shared)) {
    refuse(ins,
           "ordered loads and stores of this width are not supported (32 bits, or 64 in "
           "global memory)");
  }
  const uint32_t W = bytes == 8 ? t_u64 : t_u32;
  if (bytes == 8) {
    need(target_.int64_atomics, ins, "64-bit atomics (shaderBufferInt64Atomics)");
    b.capability(spv::Capability::Int64Atomics);
  }
  const uint32_t ptr =
      shared ? word_pointer(spv::StorageClass::Workgroup, shared_array_, at.value)
             : b.op(spv::Op::OpConvertUToPtr,
                    b.type_pointer(spv::StorageClass::PhysicalStorageBuffer, W), {at.value});
  const bool cta = ins.mods.has(M::kCta);
  const uint32_t scope =
      b.u32(static_cast<uint32_t>(cta ? spv::Scope::Workgroup : spv::Scope::Device));
  uint32_t semantics = 0;
  if (ins.mods.has(M::kAcquire) || ins.mods.has(M::kRelease)) {
    semantics = static_cast<uint32_t>(is_load ? spv::MemorySemanticsMask::Acquire
                                              : spv::MemorySemanticsMask::Release) |
                static_cast<uint32_t>(shared ? spv::MemorySemanticsMask::WorkgroupMemory
                                             : spv::MemorySemanticsMask::UniformMemory);
  }
  if (is_load) {
    const uint32_t v = b.op(spv::Op::OpAtomicLoad, W, {ptr, scope, b.u32(semantics)});
    write_bits(ins, data, bytes, v, ir::is_signed(ins.types[0]));
  } else {
    b.op_void(spv::Op::OpAtomicStore, {ptr, scope, b.u32(semantics), read_bits(ins, data, bytes)});
  }
}

// atom and red. What Vulkan has natively (integer add, min, max, bitwise operations, exchange,
// compare-and-swap, and f32 add on global memory with VK_EXT_shader_atomic_float) maps to one
// atomic instruction; the rest is a compare-and-swap loop (Kernel::cas_loop) that computes the
// new value from the old as the CPU PTX device does: inc and dec, f32 add on shared memory, f64
// add, and the half-precision adds. A 16-bit operand (f16 and bf16 add, cas.b16) is swapped as
// its containing 32-bit word, the other half stored back as it was read, so that a neighbour's
// concurrent update of the other half makes the swap fail and retry instead of being lost.
void Kernel::lower_atomic(const ir::Instruction& ins) {
  const auto& ops = ins.operands;
  const bool result = ins.opcode == O::kAtom;
  if (ins.types.size() != 1) invalid(ins, "atom and red take one type");
  const T type = ins.types[0];
  const uint32_t bytes = ir::type_size(type);
  const size_t first = result ? 1 : 0;
  const bool cas = ins.mods.has(M::kCas);
  if (ops.size() != first + (cas ? 3 : 2)) invalid(ins, "wrong number of operands");
  if (ins.vector > 1) refuse(ins, "vector atomics are not supported");
  const ResolvedAddress at = resolve_address(ins, ops[first], space_of(ins));
  if (at.param || at.space == AddressSpace::kLocal || at.space == AddressSpace::kConstant) {
    refuse(ins, "atomics on this memory (local memory or a module variable) are not supported");
  }
  const bool is_f = ir::is_float(type);
  const bool half = bytes == 2;  // in half of a 32-bit word
  if (half && !(cas || (ins.mods.has(M::kAdd) && is_f))) {
    refuse(ins, "16-bit atomics other than cas.b16 and f16 or bf16 add are not supported");
  }
  if (bytes != 4 && bytes != 8 && !half) refuse(ins, "atomics on this width are not supported");
  const bool shared = at.space == AddressSpace::kShared;
  // Two shared words swapped one after the other are no 64-bit atomic.
  if (shared && bytes == 8) refuse(ins, "64-bit shared-memory atomics are not supported");
  if (bytes == 8) {
    need(target_.int64_atomics, ins, "64-bit atomics (shaderBufferInt64Atomics)");
    b.capability(spv::Capability::Int64Atomics);
  }
  const uint32_t W = bytes == 8 ? t_u64 : t_u32;
  uint32_t ptr = 0;
  uint32_t shift = 0;  // half: the operand's bit offset in its word
  if (shared) {
    ptr = word_pointer(spv::StorageClass::Workgroup, shared_array_, at.value);
    if (half) {
      shift = b.op(spv::Op::OpShiftLeftLogical, t_u32,
                   {b.op(spv::Op::OpBitwiseAnd, t_u32, {at.value, b.u32(2)}), b.u32(3)});
    }
  } else {
    uint32_t address = at.value;
    if (half) {
      address = b.op(spv::Op::OpBitwiseAnd, t_u64, {at.value, b.u64(~uint64_t{3})});
      const uint32_t low = b.op(spv::Op::OpUConvert, t_u32, {at.value});
      shift = b.op(spv::Op::OpShiftLeftLogical, t_u32,
                   {b.op(spv::Op::OpBitwiseAnd, t_u32, {low, b.u32(2)}), b.u32(3)});
    }
    ptr = b.op(spv::Op::OpConvertUToPtr,
               b.type_pointer(spv::StorageClass::PhysicalStorageBuffer, W), {address});
  }
  const bool cta = ins.mods.has(M::kCta);
  const uint32_t scope =
      b.u32(static_cast<uint32_t>(cta || shared ? spv::Scope::Workgroup : spv::Scope::Device));
  uint32_t sem_bits = 0;
  const uint32_t storage = static_cast<uint32_t>(shared ? spv::MemorySemanticsMask::WorkgroupMemory
                                                        : spv::MemorySemanticsMask::UniformMemory);
  if (ins.mods.has(M::kAcquire) || ins.mods.has(M::kRelease) || ins.mods.has(M::kAcqRel)) {
    sem_bits = static_cast<uint32_t>(spv::MemorySemanticsMask::AcquireRelease) | storage;
  }
  const uint32_t semantics = b.u32(sem_bits);

  // The 16-bit operand of a word, and the word with it replaced.
  auto part = [&](uint32_t word) {
    return b.op(spv::Op::OpBitFieldUExtract, t_u32, {word, shift, b.u32(16)});
  };
  auto replace = [&](uint32_t word, uint32_t bits16) {
    return b.op(spv::Op::OpBitFieldInsert, t_u32, {word, bits16, shift, b.u32(16)});
  };
  // f16 and bf16 add as the CPU PTX device does it: in f32, rounded once to the format (f32
  // holds more than twice the format's precision, so the sum is correctly rounded).
  auto add_16 = [&](uint32_t x, uint32_t y, T format) {
    return from_working(
        b.op(spv::Op::OpFAdd, t_f32, {to_working(x, format), to_working(y, format)}), format);
  };

  uint32_t old = 0;
  if (cas) {
    const uint32_t compare = read_bits(ins, ops[first + 1], bytes);
    const uint32_t value = read_bits(ins, ops[first + 2], bytes);
    if (half) {
      // A word whose operand differs is stored back unchanged, which changes nothing.
      old = part(cas_loop(ptr, t_u32, scope, semantics, [&](uint32_t word) {
        const uint32_t equal = b.op(spv::Op::OpIEqual, t_bool, {part(word), compare});
        return select(t_u32, equal, replace(word, value), word);
      }));
    } else {
      // A failed exchange stores nothing: it may acquire, but never release.
      const uint32_t unequal = b.u32(
          sem_bits == 0 ? 0 : static_cast<uint32_t>(spv::MemorySemanticsMask::Acquire) | storage);
      old = b.op(spv::Op::OpAtomicCompareExchange, W,
                 {ptr, scope, semantics, unequal, value, compare});
    }
  } else if (ins.mods.has(M::kAdd) && type == T::kF32 && !shared) {
    need(target_.float32_atomic_add, ins, "float32 atomic add (VK_EXT_shader_atomic_float)");
    b.capability(spv::Capability::AtomicFloat32AddEXT);
    b.extension("SPV_EXT_shader_atomic_float_add");
    const uint32_t value = read(ins, ops[first + 1], type);
    // The pointer must point to a float.
    const uint32_t fptr =
        b.op(spv::Op::OpConvertUToPtr,
             b.type_pointer(spv::StorageClass::PhysicalStorageBuffer, t_f32), {at.value});
    old = bitcast(t_u32, b.op(spv::Op::OpAtomicFAddEXT, t_f32, {fptr, scope, semantics, value}));
  } else if (ins.mods.has(M::kAdd) && is_f) {
    const uint32_t value = read_bits(ins, ops[first + 1], bytes);
    std::function<uint32_t(uint32_t)> update;
    switch (type) {
      case T::kF32:
      case T::kF64: {
        const uint32_t F = type == T::kF64 ? f64(ins) : t_f32;
        update = [&, F](uint32_t word) {
          return bitcast(W, b.op(spv::Op::OpFAdd, F, {bitcast(F, word), bitcast(F, value)}));
        };
        break;
      }
      case T::kF16:
      case T::kBF16:
        update = [&](uint32_t word) { return replace(word, add_16(part(word), value, type)); };
        break;
      case T::kF16x2:
      case T::kBF16x2: {
        const T format = type == T::kF16x2 ? T::kF16 : T::kBF16;
        update = [&, format](uint32_t word) {
          auto low = [&](uint32_t v) {
            return b.op(spv::Op::OpBitwiseAnd, t_u32, {v, b.u32(0xFFFF)});
          };
          auto high = [&](uint32_t v) {
            return b.op(spv::Op::OpShiftRightLogical, t_u32, {v, b.u32(16)});
          };
          const uint32_t lo = add_16(low(word), low(value), format);
          const uint32_t hi = add_16(high(word), high(value), format);
          return b.op(spv::Op::OpBitwiseOr, t_u32,
                      {lo, b.op(spv::Op::OpShiftLeftLogical, t_u32, {hi, b.u32(16)})});
        };
        break;
      }
      default:
        refuse(ins, std::string("atomic add on .") + ir::type_name(type) + " is not supported");
    }
    const uint32_t word = cas_loop(ptr, W, scope, semantics, update);
    old = half ? part(word) : word;
  } else if (is_f) {
    refuse(ins, "floating-point atomics other than add are not supported");
  } else if (ins.mods.has(M::kInc) || ins.mods.has(M::kDec)) {
    // inc: old >= b ? 0 : old + 1; dec: (old == 0 || old > b) ? b : old - 1 (unsigned).
    const bool inc = ins.mods.has(M::kInc);
    const uint32_t limit = read_bits(ins, ops[first + 1], bytes);
    const uint32_t zero = bytes == 8 ? b.u64(0) : b.u32(0);
    const uint32_t one = bytes == 8 ? b.u64(1) : b.u32(1);
    old = cas_loop(ptr, W, scope, semantics, [&](uint32_t v) {
      if (inc) {
        const uint32_t wrap = b.op(spv::Op::OpUGreaterThanEqual, t_bool, {v, limit});
        return select(W, wrap, zero, b.op(spv::Op::OpIAdd, W, {v, one}));
      }
      const uint32_t wrap = b.op(spv::Op::OpLogicalOr, t_bool,
                                 {b.op(spv::Op::OpIEqual, t_bool, {v, zero}),
                                  b.op(spv::Op::OpUGreaterThan, t_bool, {v, limit})});
      return select(W, wrap, limit, b.op(spv::Op::OpISub, W, {v, one}));
    });
  } else {
    const bool sign = ir::is_signed(type);
    spv::Op op = spv::Op::OpNop;
    if (ins.mods.has(M::kAdd))
      op = spv::Op::OpAtomicIAdd;
    else if (ins.mods.has(M::kExch))
      op = spv::Op::OpAtomicExchange;
    else if (ins.mods.has(M::kAnd))
      op = spv::Op::OpAtomicAnd;
    else if (ins.mods.has(M::kOr))
      op = spv::Op::OpAtomicOr;
    else if (ins.mods.has(M::kXor))
      op = spv::Op::OpAtomicXor;
    else if (ins.mods.has(M::kMin))
      op = sign ? spv::Op::OpAtomicSMin : spv::Op::OpAtomicUMin;
    else if (ins.mods.has(M::kMax))
      op = sign ? spv::Op::OpAtomicSMax : spv::Op::OpAtomicUMax;
    else
      invalid(ins, "an atomic needs an operation");
    const uint32_t value = read_bits(ins, ops[first + 1], bytes);
    old = b.op(op, W, {ptr, scope, semantics, value});
  }
  if (result) write_bits(ins, ops[0], bytes, old, false);
}

bool Kernel::lower_memory(const ir::Instruction& ins) {
  const auto& ops = ins.operands;
  switch (ins.opcode) {
    case O::kLd:
    case O::kLdu:
    case O::kSt: {
      const bool is_load = ins.opcode != O::kSt;
      if (ins.types.size() != 1 || ops.size() != 2) invalid(ins, "wrong operands for ld/st");
      if (ins.mods.has(M::kMmio)) refuse(ins, "ld.mmio and st.mmio have no Vulkan counterpart");
      const T type = ins.types[0];
      const uint32_t bytes = ir::type_size(type);
      if (bytes == 0 || bytes > 8) refuse(ins, "this access width is not supported");
      const ir::Operand& address = is_load ? ops[1] : ops[0];
      const ir::Operand& data = is_load ? ops[0] : ops[1];
      ResolvedAddress at = resolve_address(ins, address, space_of(ins));
      if (ins.mods.has(M::kRelaxed) || ins.mods.has(M::kAcquire) || ins.mods.has(M::kRelease)) {
        ordered_access(ins, at, bytes, is_load, data);
        return true;
      }
      // Volatile: every access happens, as written (the Volatile memory operand).
      volatile_ = ins.mods.has(M::kVolatile);
      const uint32_t n = ins.vector;
      if (n > 1 && (data.kind != ir::OperandKind::kVector || data.elements.size() != n)) {
        invalid(ins, "a vector access needs a vector of registers");
      }
      for (uint32_t i = 0; i < n; ++i) {
        const ir::Operand& element = n > 1 ? data.elements[i] : data;
        const ResolvedAddress here = i == 0 ? at : advance(at, i * bytes);
        if (is_load) {
          const uint32_t bits = load(ins, here, bytes);
          write_bits(ins, element, bytes, bits, ir::is_signed(type));
        } else {
          store(ins, here, bytes, read_bits(ins, element, bytes));
        }
      }
      volatile_ = false;
      return true;
    }
    case O::kAtom:
    case O::kRed:
      lower_atomic(ins);
      return true;
    case O::kCp: {
      // cp.async: the copy happens now, so commit_group and wait_group have nothing to wait for.
      if (!ins.mods.has(M::kAsync)) return false;
      if (ins.mods.has(M::kCommitGroup) || ins.mods.has(M::kWaitGroup) ||
          ins.mods.has(M::kWaitAll)) {
        return true;
      }
      if (ins.mods.has(M::kBulk)) refuse(ins, "bulk asynchronous copies are not supported");
      if (ops.size() < 3 || ops[2].kind != ir::OperandKind::kInteger) {
        invalid(ins, "cp.async takes a destination, a source and a size");
      }
      const uint32_t size = static_cast<uint32_t>(ops[2].integer);
      if (size != 4 && size != 8 && size != 16) invalid(ins, "cp.async copies 4, 8 or 16 bytes");
      if (ops.size() > 4) refuse(ins, "cp.async with an ignore-source predicate is not supported");
      const ResolvedAddress dst = resolve_address(ins, ops[0], ir::Space::kShared);
      const ResolvedAddress src = resolve_address(ins, ops[1], ir::Space::kGlobal);
      uint32_t src_size = 0;
      const bool partial = ops.size() == 4;
      if (partial) src_size = read(ins, ops[3], T::kU32);
      for (uint32_t off = 0; off < size; off += 4) {
        const ResolvedAddress s = off == 0 ? src : advance(src, off);
        const ResolvedAddress d = off == 0 ? dst : advance(dst, off);
        if (!partial) {
          store(ins, d, 4, load(ins, s, 4));
          continue;
        }
        // Bytes at and past src_size are zeros, and are not read.
        const uint32_t inside = b.op(spv::Op::OpULessThan, t_bool, {b.u32(off), src_size});
        uint32_t value = b.u32(0);
        const uint32_t var =
            b.local_variable(b.type_pointer(spv::StorageClass::Function, t_u32), b.u32(0));
        if_then(inside, [&] { b.op_void(spv::Op::OpStore, {var, load(ins, s, 4)}); });
        value = b.op(spv::Op::OpLoad, t_u32, {var});
        const uint32_t kept_bytes = b.op(spv::Op::OpISub, t_u32, {src_size, b.u32(off)});
        const uint32_t whole = b.op(spv::Op::OpUGreaterThanEqual, t_bool, {kept_bytes, b.u32(4)});
        const uint32_t mask = select(
            t_u32, whole, b.u32(0xFFFFFFFFu),
            b.op(spv::Op::OpISub, t_u32,
                 {b.op(spv::Op::OpShiftLeftLogical, t_u32,
                       {b.u32(1), b.op(spv::Op::OpShiftLeftLogical, t_u32,
                                       {select(t_u32, inside, kept_bytes, b.u32(0)), b.u32(3)})}),
                  b.u32(1)}));
        store(ins, d, 4, b.op(spv::Op::OpBitwiseAnd, t_u32, {value, mask}));
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace hal::ptx_spirv
