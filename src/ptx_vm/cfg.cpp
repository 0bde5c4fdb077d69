// Reconvergence at immediate post-dominators (ptx/post_dominators.h) over the basic-block graph,
// with a virtual exit node.
#include "ptx_vm/cfg.h"

#include <algorithm>
#include <vector>

#include "ptx/post_dominators.h"

namespace hal::ptx_vm {
namespace {

bool ends_block(const Op& op) {
  return op.kind == OpKind::kBranch || op.kind == OpKind::kExit || op.kind == OpKind::kTrap ||
         op.kind == OpKind::kAssert;
}

}  // namespace

void compute_reconvergence(Kernel& kernel) {
  const uint32_t size = static_cast<uint32_t>(kernel.code.size());
  if (size == 0) return;

  // Basic blocks: leaders are pc 0, branch targets and the instruction after a block end.
  std::vector<uint8_t> leader(size + 1, 0);
  leader[0] = 1;
  leader[size] = 1;
  for (uint32_t pc = 0; pc < size; ++pc) {
    const Op& op = kernel.code[pc];
    if (op.kind == OpKind::kBranch && op.target <= size) leader[op.target] = 1;
    if (ends_block(op)) leader[pc + 1] = 1;
  }
  std::vector<uint32_t> block_of(size + 1, 0);
  std::vector<uint32_t> block_start;
  for (uint32_t pc = 0; pc <= size; ++pc) {
    if (leader[pc]) block_start.push_back(pc);
    block_of[pc] = static_cast<uint32_t>(block_start.size() - 1);
  }
  // The last "block" (starting at pc == size) is the virtual exit.
  const uint32_t blocks = static_cast<uint32_t>(block_start.size());
  const uint32_t exit_block = blocks - 1;

  // Successors of each block, from its last instruction.
  std::vector<std::vector<uint32_t>> succ(blocks);
  for (uint32_t b = 0; b + 1 < blocks; ++b) {
    const uint32_t last = block_start[b + 1] - 1;
    const Op& op = kernel.code[last];
    const bool guarded = op.guard != kNoGuard;
    auto add = [&](uint32_t to) {
      if (std::find(succ[b].begin(), succ[b].end(), to) == succ[b].end()) succ[b].push_back(to);
    };
    switch (op.kind) {
      case OpKind::kBranch:
        add(block_of[std::min(op.target, size)]);
        if (guarded) add(block_of[last + 1]);
        break;
      case OpKind::kExit:
      case OpKind::kTrap:
      case OpKind::kAssert:
        add(exit_block);
        if (guarded) add(block_of[last + 1]);
        break;
      default:
        add(block_of[last + 1]);
        break;
    }
  }
  // Blocks the exit cannot be reached from (endless loops) reconverge at the exit.
  const std::vector<uint32_t> ipdom = ptx::immediate_post_dominators(succ, exit_block);

  for (uint32_t pc = 0; pc < size; ++pc) {
    Op& op = kernel.code[pc];
    if (op.kind != OpKind::kBranch) continue;
    const uint32_t b = block_of[pc];
    const uint32_t p = ipdom[b];
    op.imm = (p == ptx::kNoPostDominator || p == exit_block) ? size : block_start[p];
  }
}

}  // namespace hal::ptx_vm
