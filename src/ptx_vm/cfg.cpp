// Immediate post-dominators over the basic-block graph, by the iterative dominator algorithm of
// Cooper, Harvey and Kennedy run on the reversed graph from a virtual exit node.
#include "ptx_vm/cfg.h"

#include <algorithm>
#include <vector>

namespace hal::ptx_vm {
namespace {

constexpr uint32_t kUndefined = 0xffff'ffffu;

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
  std::vector<std::vector<uint32_t>> succ(blocks), pred(blocks);
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
  for (uint32_t b = 0; b < blocks; ++b) {
    for (uint32_t s : succ[b]) pred[s].push_back(b);
  }

  // Post-order of the reversed graph (edges to predecessors) from the exit, iteratively.
  std::vector<uint32_t> order;  // post-order
  std::vector<uint32_t> number(blocks, kUndefined);
  {
    std::vector<uint8_t> seen(blocks, 0);
    std::vector<std::pair<uint32_t, size_t>> stack;
    stack.push_back({exit_block, 0});
    seen[exit_block] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < pred[node].size()) {
        const uint32_t p = pred[node][next++];
        if (!seen[p]) {
          seen[p] = 1;
          stack.push_back({p, 0});
        }
      } else {
        number[node] = static_cast<uint32_t>(order.size());
        order.push_back(node);
        stack.pop_back();
      }
    }
  }

  // Dominators of the reversed graph = post-dominators. Blocks the exit cannot be reached from
  // (endless loops) keep kUndefined and reconverge at the exit.
  std::vector<uint32_t> ipdom(blocks, kUndefined);
  ipdom[exit_block] = exit_block;
  auto intersect = [&](uint32_t a, uint32_t b) {
    while (a != b) {
      while (number[a] < number[b]) a = ipdom[a];
      while (number[b] < number[a]) b = ipdom[b];
    }
    return a;
  };
  bool changed = true;
  // Bounded: the iteration converges in a few passes on reducible graphs; the cap keeps any
  // input finite (a result that is still moving is only a later reconvergence, never wrong).
  for (int pass = 0; changed && pass < 1000; ++pass) {
    changed = false;
    for (size_t i = order.size(); i-- > 0;) {  // reverse post-order
      const uint32_t b = order[i];
      if (b == exit_block) continue;
      uint32_t next = kUndefined;
      for (uint32_t s : succ[b]) {  // successors are the reversed graph's predecessors
        if (number[s] == kUndefined || ipdom[s] == kUndefined) continue;
        next = next == kUndefined ? s : intersect(s, next);
      }
      if (next != kUndefined && ipdom[b] != next) {
        ipdom[b] = next;
        changed = true;
      }
    }
  }

  for (uint32_t pc = 0; pc < size; ++pc) {
    Op& op = kernel.code[pc];
    if (op.kind != OpKind::kBranch) continue;
    const uint32_t b = block_of[pc];
    const uint32_t p = ipdom[b];
    op.imm = (p == kUndefined || p == exit_block) ? size : block_start[p];
  }
}

}  // namespace hal::ptx_vm
