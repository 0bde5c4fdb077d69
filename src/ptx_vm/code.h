// The decoded form of a kernel: what the decoder (decode.h) produces from the front end's IR
// and the engine (engine.h) executes.
//
// A kernel is a flat array of Ops (calls to .func are inlined, so there is no call stack), a
// constant pool, and a frame layout. Every thread register lives in a per-warp frame as a row of
// 32 lane values ("structure of arrays"), so one Op works on all lanes of a warp in a tight loop
// that the compiler can vectorise:
//   - a register of 2, 4, 8 or 16 bytes is a row of 32 such values;
//   - a predicate is one 32-bit word, one bit per lane, so guards, branches, votes and boolean
//     ops are single word operations;
//   - an immediate operand is a row of 32 copies in the kernel's constant pool, so handlers never
//     distinguish registers from immediates.
// An operand reference (Ref) is a byte offset into the frame, or into the constant pool when
// kConstBit is set.
//
// Thread-safety: a Kernel is immutable after decoding and shared by every worker thread.
#pragma once

#include "ptx_vm/vm.h"

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

namespace hal::ptx_vm {

using Ref = uint32_t;
inline constexpr Ref kConstBit = 0x8000'0000u;
inline constexpr Ref kOffsetMask = 0x7fff'ffffu;
inline constexpr Ref kNoRef = 0xffff'ffffu;
inline constexpr uint32_t kWarpSize = 32;
inline constexpr uint32_t kFullMask = 0xffff'ffffu;

// Guard encoding in Op::guard: kNoGuard, or a predicate word's frame offset with kGuardNegate.
inline constexpr uint32_t kNoGuard = 0xffff'ffffu;
inline constexpr uint32_t kGuardNegate = 0x8000'0000u;

struct Exec;
struct Op;
// Runs one instruction for the lanes set in |mask| (never 0). May record a fault in |x|.
using Handler = void (*)(Exec& x, const Op& op, uint32_t mask);

// How the engine treats an Op. Everything that only computes is kCompute; the rest changes
// control flow or needs the whole block.
enum class OpKind : uint8_t {
  kCompute,  // fn(x, op, mask)
  kBranch,   // to |target|; divergent when the guard splits the warp
  kExit,     // the lanes leave the kernel (exit, and ret outside any inlined call)
  kBarrier,  // bar/barrier: see BarrierInfo in |ext|
  kTrap,     // stops the kernel with FaultKind::kTrap
  kAssert,   // __assertfail: stops the kernel with FaultKind::kAssert; |ext| is AssertInfo
  kNop,
};

// One decoded instruction: 64 bytes, one cache line.
struct Op {
  Handler fn = nullptr;
  Ref a[6] = {kNoRef, kNoRef, kNoRef, kNoRef, kNoRef, kNoRef};  // meaning per handler
  // A small immediate or mode for the handler. kBranch: the reconvergence pc (the branch's
  // immediate post-dominator; code.size() when that is the kernel's exit).
  uint32_t imm = 0;
  uint32_t guard = kNoGuard;
  uint32_t target = 0;  // kBranch: the target pc
  OpKind kind = OpKind::kCompute;
  uint8_t flags = 0;  // per handler
  uint16_t pad = 0;
  int64_t disp = 0;  // memory operands: the displacement (or absolute address without a base)
  const void* ext = nullptr;  // larger decoded data owned by the Kernel (see Kernel::arena)
};
static_assert(sizeof(Op) == 64, "an Op is one cache line");

// kBarrier's data.
struct BarrierInfo {
  enum Mode : uint8_t { kSync, kArrive, kRedPopc, kRedAnd, kRedOr };
  Mode mode = kSync;
  bool aligned = true;  // bar.sync, barrier.sync.aligned: the warp must not be diverged
  Ref id = kNoRef;      // barrier number (register row or constant), 0..15
  Ref count = kNoRef;   // thread count, or kNoRef for "every thread of the block"
  Ref pred = kNoRef;    // bar.red: the input predicate word
  bool pred_negate = false;
  Ref dst = kNoRef;  // bar.red: the result (a predicate word, or a u32 row for popc)
};

// kAssert's data: __assertfail(message, file, line, function, char size), as references to
// the rows holding the argument values.
struct AssertInfo {
  Ref message = kNoRef, file = kNoRef, line = kNoRef, function = kNoRef;
};

// vprintf's data (ops_printf.cpp): where the thread keeps the call's two .param arguments (the
// format string's and the argument buffer's generic addresses) and its .b32 result (kNoRef when
// the call takes none).
struct PrintfInfo {
  Ref format = kNoRef, arguments = kNoRef, result = kNoRef;
};

// Where an Op came from, for fault reports and decode errors.
struct SourceInfo {
  uint32_t line = 0;
  std::string text;  // mnemonic as written
};

// Values the engine writes into every warp's frame before it runs (special registers that do
// not change during a block). Offsets are kNoRef when the kernel never reads the register.
struct SpecialRows {
  Ref tid[3] = {kNoRef, kNoRef, kNoRef};   // u32 rows
  Ref ntid[3] = {kNoRef, kNoRef, kNoRef};  // u32 rows (uniform)
  Ref ctaid[3] = {kNoRef, kNoRef, kNoRef};
  Ref nctaid[3] = {kNoRef, kNoRef, kNoRef};
  Ref laneid = kNoRef, warpid = kNoRef, nwarpid = kNoRef;
  Ref lanemask[5] = {kNoRef, kNoRef, kNoRef, kNoRef, kNoRef};  // eq, le, lt, ge, gt
  Ref smid = kNoRef, nsmid = kNoRef, gridid = kNoRef;
  Ref dynamic_smem = kNoRef, total_smem = kNoRef;
  Ref zero32 = kNoRef;  // a u32 row of zeros (cluster registers of a one-CTA cluster, ...)
};

class Kernel {
 public:
  KernelInfo info;
  std::vector<Op> code;            // executed from pc 0; code.size() is "exited"
  std::vector<SourceInfo> source;  // one per Op
  std::vector<uint8_t> consts;     // the constant pool (rows of 32 values)
  uint32_t frame_bytes = 0;        // per warp, a multiple of 64
  uint32_t cc_ref = kNoRef;        // the carry flag's word (add.cc ...), kNoRef if never used
  SpecialRows specials;
  // Shared memory: static variables at [0, static_shared_bytes), then the dynamic area at
  // |dynamic_shared_offset| (static size rounded up to the .extern alignment).
  uint32_t dynamic_shared_offset = 0;
  bool uses_barriers = false;
  // Storage for Op::ext and other decoded data; stable addresses.
  std::vector<std::unique_ptr<uint8_t[]>> arena;

  template <typename T>
  T* make() {
    static_assert(std::is_trivially_destructible_v<T>, "arena objects are never destroyed");
    arena.push_back(std::make_unique<uint8_t[]>(sizeof(T) + alignof(T)));
    void* raw = arena.back().get();
    size_t space = sizeof(T) + alignof(T);
    return new (std::align(alignof(T), sizeof(T), raw, space)) T();
  }
};

}  // namespace hal::ptx_vm
