#include "ptx/post_dominators.h"

#include <cstddef>
#include <utility>

namespace hal::ptx {

std::vector<uint32_t> immediate_post_dominators(
    const std::vector<std::vector<uint32_t>>& successors, uint32_t exit) {
  const size_t nodes = successors.size();
  std::vector<uint32_t> ipdom(nodes, kNoPostDominator);
  if (exit >= nodes) return ipdom;
  std::vector<std::vector<uint32_t>> predecessors(nodes);
  for (uint32_t n = 0; n < nodes; ++n) {
    for (uint32_t s : successors[n]) {
      if (s < nodes) predecessors[s].push_back(n);
    }
  }
  // Post-order of the reversed graph (edges to predecessors) from the exit, iteratively.
  std::vector<uint32_t> order;
  std::vector<uint32_t> number(nodes, kNoPostDominator);
  std::vector<bool> seen(nodes, false);
  std::vector<std::pair<uint32_t, size_t>> stack{{exit, 0}};
  seen[exit] = true;
  while (!stack.empty()) {
    const uint32_t node = stack.back().first;
    const size_t next = stack.back().second;
    if (next < predecessors[node].size()) {
      ++stack.back().second;
      const uint32_t p = predecessors[node][next];
      if (!seen[p]) {
        seen[p] = true;
        stack.push_back({p, 0});
      }
      continue;
    }
    number[node] = static_cast<uint32_t>(order.size());
    order.push_back(node);
    stack.pop_back();
  }

  ipdom[exit] = exit;
  auto intersect = [&](uint32_t a, uint32_t b) {
    while (a != b) {
      while (number[a] < number[b]) a = ipdom[a];
      while (number[b] < number[a]) b = ipdom[b];
    }
    return a;
  };
  bool changed = true;
  for (int pass = 0; changed && pass < 1000; ++pass) {
    changed = false;
    for (size_t i = order.size(); i-- > 0;) {  // reverse post-order
      const uint32_t n = order[i];
      if (n == exit) continue;
      uint32_t next = kNoPostDominator;
      for (uint32_t s : successors[n]) {  // the reversed graph's predecessors
        if (s >= nodes || number[s] == kNoPostDominator || ipdom[s] == kNoPostDominator) continue;
        next = next == kNoPostDominator ? s : intersect(s, next);
      }
      if (next != kNoPostDominator && ipdom[n] != next) {
        ipdom[n] = next;
        changed = true;
      }
    }
  }
  return ipdom;
}

}  // namespace hal::ptx
