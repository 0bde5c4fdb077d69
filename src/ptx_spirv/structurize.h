// The structurizer: turns a function's control-flow graph, as PTX branches freely, into the
// nested constructs that Vulkan's SPIR-V requires (every selection and loop has one entry and
// one merge point).
//
// The input is a graph of basic blocks, block 0 the entry. Each block ends in one terminator:
//  - kReturn: no successors (ret, exit, or falling off the end of the function);
//  - kJump: one successor (an unconditional bra, or falling through to the next block);
//  - kBranch: two successors, [0] taken when the block's condition holds, [1] when it does not
//    (they may be equal);
//  - kSwitch: successors[i] taken when the block's selector is i (brx.idx); any number >= 1.
//
// The output is a tree of statements in the style of WebAssembly's block, loop and br, which
// the SPIR-V emitter maps one to one onto loop and selection constructs (see emit.h):
//  - kBlock runs the body of a basic block (its instructions, not its terminator);
//  - kIf decides on |block|'s condition: |body| when it holds, |else_body| otherwise;
//  - kSwitch decides on |block|'s selector: |cases[i]| for value i;
//  - kScope runs |body|; a kBreak that targets it, or falling off the end of its body, goes on
//    after it;
//  - kLoop runs |body|; a kContinue that targets it starts the body again, and a kBreak that
//    targets it, or falling off the end of its body, goes on after it;
//  - kBreak and kContinue target the enclosing kScope or kLoop |depth| levels out (0: the
//    innermost; kIf and kSwitch are not levels); kContinue targets only a kLoop;
//  - kReturn leaves the function.
// A basic block appears as kBlock exactly once in the tree unless it is unreachable (then it
// does not appear at all). Each kIf or kSwitch on block b comes right after kBlock b, in the
// same statement list, with one arm per successor even where several share a target; but a
// kBranch or kSwitch whose successors are all the same block is a plain jump, with no kIf or
// kSwitch: a decision that changes nothing is dropped. Executing the tree with the same
// decisions at each kIf and kSwitch visits the same sequence of basic blocks as executing the
// graph. Control flow that is uniform in the graph stays uniform: the tree adds no dispatch
// loops and no flags.
//
// Irreducible graphs (a cycle with more than one entry) are refused, naming a block of the
// cycle: the caller turns it into the PTX line.
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hal::ptx_spirv {

struct CfgBlock {
  enum class Exit : uint8_t { kReturn, kJump, kBranch, kSwitch };
  Exit exit = Exit::kReturn;
  std::vector<uint32_t> successors;  // block indices, as described above
};

struct Stmt {
  enum class Kind : uint8_t { kBlock, kIf, kSwitch, kScope, kLoop, kBreak, kContinue, kReturn };
  Kind kind = Kind::kBlock;
  uint32_t block = 0;                    // kBlock, kIf, kSwitch
  uint32_t depth = 0;                    // kBreak, kContinue
  std::vector<Stmt> body;                // kScope, kLoop; kIf: taken when the condition holds
  std::vector<Stmt> else_body;           // kIf
  std::vector<std::vector<Stmt>> cases;  // kSwitch, one per successor
};

struct StructureError {
  uint32_t block = 0;   // a block of the irreducible cycle
  std::string message;  // what is wrong, in words
};

// Structures |blocks| (blocks[0] is the entry; every successor index is < blocks.size()). On
// success fills |out| with the function body and returns true; an irreducible graph returns
// false with |error| set, and so does a graph that breaks the rules above (a caller's bug,
// such as a kBranch without two successors). The work is O(n log n + e) in blocks and edges
// for the graphs compilers emit, and never worse than quadratic; recursion depth is bounded by
// the loop and dominator-tree nesting, which callers cap.
bool structurize(const std::vector<CfgBlock>& blocks, std::vector<Stmt>* out,
                 StructureError* error);

}  // namespace hal::ptx_spirv
