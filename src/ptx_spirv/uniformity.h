// Which parts of a kernel every thread of a block runs together.
//
// A device without 32-lane subgroups runs a warp kernel's warps through workgroup memory
// (lower_warp.cpp): each warp instruction becomes a store, a workgroup barrier and loads. Vulkan
// allows a workgroup barrier only where the whole workgroup runs together (uniform control
// flow), so such a kernel translates only when every warp instruction lies outside all
// branches whose direction may differ between the threads of a block. This analysis finds
// those branches.
//
// A value is the same in every thread of a block (uniform) when it comes from constants, kernel
// parameters, %ntid, %ctaid, %nctaid or other uniform values, computed outside divergent code.
// Everything else may vary: %tid and the warp special registers, loads from memory other than
// .param and .const, atomics, warp instructions, values written under a guard that varies, and
// every value written inside divergent code. A branch is divergent when its predicate (or
// brx.idx's index) may vary; the code it controls, which is every block reachable from it
// before its immediate post-dominator, is divergent. Registers are followed through the code,
// not as a whole (hand-written PTX reuses a register for a uniform value and then a varying
// one), merged where paths join, to a fixed point, optimistic first as divergence analyses
// are, so that the counters of uniform loops stay uniform. `ret` and `exit` lead to one return
// block: a thread that may leave early makes the rest of the kernel divergent, as it must (it
// never reaches the barriers after).
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "ptx/ir.h"
#include "ptx_spirv/structurize.h"

namespace hal::ptx_spirv {

// One basic block's code: instructions [begin, end) of the function, its terminator excluded,
// and the terminator (null for a block that falls through).
struct BlockCode {
  uint32_t begin = 0, end = 0;
  const ptx::ir::Instruction* terminator = nullptr;
};

struct Divergence {
  // Per block: kNone when every thread of a block that reaches the kernel's start runs it
  // together; else the block whose divergent branch controls it.
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> cause;
};

// |cfg| and |code| describe the same blocks (structurize.h's graph; code[b] for cfg[b]), of
// |function|, whose calls are inlined.
Divergence find_divergence(const ptx::ir::Function& function, const std::vector<CfgBlock>& cfg,
                           const std::vector<BlockCode>& code);

}  // namespace hal::ptx_spirv
