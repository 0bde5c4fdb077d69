// Immediate post-dominators of a control-flow graph: for each node, the first node that every
// path from it to the exit must reach. The interpreter reconverges a divergent warp there
// (ptx_vm/cfg.cpp), and the translator ends a divergent branch's region there
// (ptx_spirv/uniformity.cpp).
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <vector>

namespace hal::ptx {

inline constexpr uint32_t kNoPostDominator = UINT32_MAX;

// |successors[n]| lists node n's successors (indices < successors.size(); duplicates allowed);
// |exit| is the node every path ends at. Returns per node its immediate post-dominator: |exit|
// for the exit itself, and kNoPostDominator for a node from which the exit cannot be reached
// (an endless loop). Cooper, Harvey and Kennedy's iterative dominator algorithm on the reversed
// graph: linear for the reducible graphs compilers emit, and capped at 1000 passes for any
// other (a result still moving is only a later post-dominator, never a wrong one).
std::vector<uint32_t> immediate_post_dominators(
    const std::vector<std::vector<uint32_t>>& successors, uint32_t exit);

}  // namespace hal::ptx
