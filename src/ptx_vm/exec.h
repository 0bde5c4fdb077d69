// What an instruction handler sees while it runs: the warp's frame, the block's shared and
// local memory, the launch's parameters and memory map, and the helpers every handler uses to
// reach operands, walk lanes and touch memory with checks.
//
// Handlers (ops_*.cpp) are plain functions over an Exec. They never throw; a failed memory check
// records a fault (the first one wins) and the engine stops the block after the instruction.
// Everything here is per worker thread: no locking.
#pragma once

#include "ptx_vm/code.h"

#include <cstring>
#include <string>

namespace hal::ptx_vm {

enum class Access : uint8_t { kRead, kWrite, kAtomic };

// The memory checks run once per lane of every access: they must be inlined into the handlers'
// lane loops, whatever the compiler's heuristics think of their size.
#define HAL_PTX_VM_INLINE inline __attribute__((always_inline))

struct Exec {
  const Kernel* kernel = nullptr;
  char* frame = nullptr;  // the running warp's registers
  const char* consts = nullptr;
  uint32_t warp = 0;  // the running warp's index in the block
  uint32_t pc = 0;    // the running Op, for fault reports
  // The warp's lanes that have not exited, and those on the path being executed (before the
  // Op's guard): warp-wide instructions check their member masks against these.
  uint32_t live = 0;
  uint32_t active = 0;

  uint8_t* shared = nullptr;
  uint32_t shared_bytes = 0;  // static + dynamic
  uint32_t dynamic_shared_bytes = 0;
  uint8_t* local = nullptr;  // thread t of the block: local + t * local_stride
  uint32_t local_stride = 0;
  uint32_t local_bytes = 0;
  const uint8_t* params = nullptr;
  uint32_t param_bytes = 0;
  const MemoryMap* memory = nullptr;
  Range hit;  // the last global range found: most accesses of a warp fall in it

  uint32_t ctaid[3] = {0, 0, 0};
  uint32_t ntid[3] = {1, 1, 1};
  uint32_t nctaid[3] = {1, 1, 1};
  uint32_t smid = 0;

  Fault* fault = nullptr;
  bool faulted = false;

  template <typename T>
  T* row(Ref ref) const {
    char* base = (ref & kConstBit) != 0 ? const_cast<char*>(consts) : frame;
    return reinterpret_cast<T*>(base + (ref & kOffsetMask));
  }
  uint32_t& word(Ref ref) const { return *row<uint32_t>(ref); }
};

// The address [base+disp] in lane |lane|. With a 32-bit base register the address is 32 bits and
// the sum wraps, as on a GPU: compilers count on it (nvcc may leave a "negative" offset in the
// register and add the rest as the displacement). Without a base (kNoRef) the address is disp.
HAL_PTX_VM_INLINE uint64_t address_at(const Exec& x, Ref base, bool wide_base, int64_t disp,
                                      uint32_t lane) {
  if (base == kNoRef) return static_cast<uint64_t>(disp);
  if (wide_base) return x.row<uint64_t>(base)[lane] + static_cast<uint64_t>(disp);
  return uint32_t{x.row<uint32_t>(base)[lane] + static_cast<uint32_t>(disp)};
}

// Calls f(lane) for every lane set in |mask|. The full-mask case is a plain loop the compiler
// can vectorise.
template <typename F>
inline void for_lanes(uint32_t mask, F&& f) {
  if (mask == kFullMask) {
    for (uint32_t lane = 0; lane < kWarpSize; ++lane) f(lane);
    return;
  }
  while (mask != 0) {
    const uint32_t lane = static_cast<uint32_t>(__builtin_ctz(mask));
    mask &= mask - 1;
    f(lane);
  }
}

// Writes |bits| into the predicate word |ref| for the lanes in |mask| only.
inline void write_pred(Exec& x, Ref ref, uint32_t bits, uint32_t mask) {
  uint32_t& w = x.word(ref);
  w = (w & ~mask) | (bits & mask);
}

// ===========================================================================================
// Faults
// ===========================================================================================

// The block-relative thread coordinates of |lane| in the running warp.
void thread_of(const Exec& x, uint32_t lane, uint32_t out[3]);

// Records the first fault of the block: "kernel 'k' (line N: 'text'), block (..), thread (..):
// <what>". Later faults are ignored.
void raise_fault(Exec& x, FaultKind kind, uint32_t lane, const std::string& what);

// A memory fault at |address| (as the kernel wrote it) of |size| bytes in |space|.
void raise_memory_fault(Exec& x, FaultKind kind, uint32_t lane, Access access, const char* space,
                        uint64_t address, uint32_t size);

// ===========================================================================================
// Memory
// ===========================================================================================

// Host pointer for |size| bytes of global (or const) memory at |address|, aligned to |align|,
// or nullptr after raising a fault.
HAL_PTX_VM_INLINE uint8_t* global_at(Exec& x, uint64_t address, uint32_t size, uint32_t align,
                                     Access access, uint32_t lane) {
  if ((address & (align - 1)) != 0) {
    raise_memory_fault(x, FaultKind::kMisalignedAddress, lane, access, "global", address, size);
    return nullptr;
  }
  if (address - x.hit.begin < x.hit.size && x.hit.size - (address - x.hit.begin) >= size) {
    return reinterpret_cast<uint8_t*>(address);
  }
  if (x.memory != nullptr && x.memory->find(address, size, &x.hit)) {
    return reinterpret_cast<uint8_t*>(address);
  }
  raise_memory_fault(x, FaultKind::kIllegalAddress, lane, access, "global", address, size);
  return nullptr;
}

HAL_PTX_VM_INLINE uint8_t* shared_at(Exec& x, uint64_t offset, uint32_t size, uint32_t align,
                                     Access access, uint32_t lane) {
  if ((offset & (align - 1)) != 0) {
    raise_memory_fault(x, FaultKind::kMisalignedAddress, lane, access, "shared", offset, size);
    return nullptr;
  }
  if (offset >= x.shared_bytes || x.shared_bytes - offset < size) {
    raise_memory_fault(x, FaultKind::kIllegalAddress, lane, access, "shared", offset, size);
    return nullptr;
  }
  return x.shared + offset;
}

HAL_PTX_VM_INLINE uint8_t* local_at(Exec& x, uint64_t offset, uint32_t size, uint32_t align,
                                    Access access, uint32_t lane) {
  if ((offset & (align - 1)) != 0) {
    raise_memory_fault(x, FaultKind::kMisalignedAddress, lane, access, "local", offset, size);
    return nullptr;
  }
  if (offset >= x.local_bytes || x.local_bytes - offset < size) {
    raise_memory_fault(x, FaultKind::kIllegalAddress, lane, access, "local", offset, size);
    return nullptr;
  }
  return x.local + (x.warp * kWarpSize + lane) * x.local_stride + offset;
}

// The kernel's parameter buffer (ld.param of an .entry's parameters; read-only).
HAL_PTX_VM_INLINE const uint8_t* param_at(Exec& x, uint64_t offset, uint32_t size, uint32_t lane) {
  if (offset >= x.param_bytes || x.param_bytes - offset < size) {
    raise_memory_fault(x, FaultKind::kIllegalAddress, lane, Access::kRead, "param", offset, size);
    return nullptr;
  }
  return x.params + offset;
}

// A generic address: the shared or local window, or else global memory.
HAL_PTX_VM_INLINE uint8_t* generic_at(Exec& x, uint64_t address, uint32_t size, uint32_t align,
                                      Access access, uint32_t lane) {
  if (address - kSharedWindow < kWindowSize) {
    return shared_at(x, address - kSharedWindow, size, align, access, lane);
  }
  if (address - kLocalWindow < kWindowSize) {
    return local_at(x, address - kLocalWindow, size, align, access, lane);
  }
  return global_at(x, address, size, align, access, lane);
}

// Which state space a memory instruction addresses (Op::flags of ld/st/atom and friends).
enum class MemSpace : uint8_t { kGeneric, kGlobal, kShared, kLocal, kParam, kConst };

HAL_PTX_VM_INLINE uint8_t* memory_at(Exec& x, MemSpace space, uint64_t address, uint32_t size,
                                     uint32_t align, Access access, uint32_t lane) {
  switch (space) {
    case MemSpace::kGlobal:
    case MemSpace::kConst:
      return global_at(x, address, size, align, access, lane);
    case MemSpace::kShared:
      return shared_at(x, address, size, align, access, lane);
    case MemSpace::kLocal:
      return local_at(x, address, size, align, access, lane);
    case MemSpace::kParam:
      return const_cast<uint8_t*>(param_at(x, address, size, lane));
    case MemSpace::kGeneric:
      break;
  }
  return generic_at(x, address, size, align, access, lane);
}

template <typename T>
inline T load_as(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}
template <typename T>
inline void store_as(uint8_t* p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

// Global memory is reached by every worker thread at once, and kernels race on it as GPU code
// may (blocks that store the same value, a warp that polls a flag another block sets). So that
// such a kernel is no data race in the host program, loads and stores of global memory are
// relaxed host atomics on naturally aligned words, which compile to the same moves as plain
// accesses on x86-64 and AArch64. |p| must be aligned to sizeof(T).
template <typename T>
HAL_PTX_VM_INLINE T load_relaxed(const uint8_t* p) {
  return __atomic_load_n(reinterpret_cast<const T*>(p), __ATOMIC_RELAXED);
}
template <typename T>
HAL_PTX_VM_INLINE void store_relaxed(uint8_t* p, T value) {
  __atomic_store_n(reinterpret_cast<T*>(p), value, __ATOMIC_RELAXED);
}

// Copies |bytes| (at most kMax) of global memory at |from| to |to| (or from |from| to global
// memory at |to|), in the widest atomic words the global address's alignment allows.
template <uint32_t kMax>
HAL_PTX_VM_INLINE void load_global(uint8_t* to, const uint8_t* from, uint32_t bytes) {
  for (uint32_t i = 0; i < bytes;) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(from + i);
    if (kMax >= 8 && bytes - i >= 8 && at % 8 == 0) {
      const uint64_t v = load_relaxed<uint64_t>(from + i);
      std::memcpy(to + i, &v, 8);
      i += 8;
    } else if (kMax >= 4 && bytes - i >= 4 && at % 4 == 0) {
      const uint32_t v = load_relaxed<uint32_t>(from + i);
      std::memcpy(to + i, &v, 4);
      i += 4;
    } else if (kMax >= 2 && bytes - i >= 2 && at % 2 == 0) {
      const uint16_t v = load_relaxed<uint16_t>(from + i);
      std::memcpy(to + i, &v, 2);
      i += 2;
    } else {
      to[i] = load_relaxed<uint8_t>(from + i);
      i += 1;
    }
  }
}
template <uint32_t kMax>
HAL_PTX_VM_INLINE void store_global(uint8_t* to, const uint8_t* from, uint32_t bytes) {
  for (uint32_t i = 0; i < bytes;) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(to + i);
    if (kMax >= 8 && bytes - i >= 8 && at % 8 == 0) {
      store_relaxed<uint64_t>(to + i, load_as<uint64_t>(from + i));
      i += 8;
    } else if (kMax >= 4 && bytes - i >= 4 && at % 4 == 0) {
      store_relaxed<uint32_t>(to + i, load_as<uint32_t>(from + i));
      i += 4;
    } else if (kMax >= 2 && bytes - i >= 2 && at % 2 == 0) {
      store_relaxed<uint16_t>(to + i, load_as<uint16_t>(from + i));
      i += 2;
    } else {
      store_relaxed<uint8_t>(to + i, from[i]);
      i += 1;
    }
  }
}

}  // namespace hal::ptx_vm
