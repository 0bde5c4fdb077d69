// Reconvergence points for divergent branches.
//
// A warp that splits at a conditional branch runs one side, then the other, and continues as a
// whole at the branch's immediate post-dominator: the first instruction that every path from the
// branch must reach. This computes it for every branch of a decoded kernel over the graph of its
// basic blocks, with a virtual exit node that exit instructions (and traps) lead to. A branch
// whose paths never meet again before the kernel ends reconverges at the exit (code.size()).
#pragma once

#include "ptx_vm/code.h"

namespace hal::ptx_vm {

// Sets Op::imm of every kBranch in |kernel| to its reconvergence pc. Linear in the code size for
// reducible control flow (what compilers emit); bounded for any other.
void compute_reconvergence(Kernel& kernel);

}  // namespace hal::ptx_vm
