// Running one block of a kernel on the calling thread.
//
// The block's warps share the thread. Each warp runs in lockstep under an active mask, with a
// stack of reconvergence entries: at a divergent branch the warp runs the taken lanes, then the
// others, and continues as one at the branch's immediate post-dominator (cfg.h). A warp runs
// until it waits at a barrier, exits, or has run a slice of instructions (so that warps that
// spin on each other's memory progress); then the next warp runs. A barrier completes when
// every warp that has not exited has arrived, or as many threads as it names have; if no warp
// can run and no barrier can complete, the block has deadlocked, which is reported as a fault
// rather than hung on.
//
// Thread-safety: a BlockRunner belongs to one thread; it keeps its scratch memory (frames,
// shared and local memory) between blocks to avoid reallocating it.
#pragma once

#include "ptx_vm/code.h"
#include "ptx_vm/exec.h"

#include <memory>
#include <vector>

namespace hal::ptx_vm {

// A growable buffer whose data is 64-byte aligned and zeroed when it grows.
class ScratchBuffer {
 public:
  uint8_t* reserve(size_t bytes);
  uint8_t* data() const { return data_; }

 private:
  std::unique_ptr<uint8_t[]> raw_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

class BlockRunner {
 public:
  BlockRunner();
  ~BlockRunner();
  BlockRunner(const BlockRunner&) = delete;
  BlockRunner& operator=(const BlockRunner&) = delete;

  // Runs block |block| (x, y, z) of |config| to completion. Returns false when it faulted, with
  // |fault| filled (the first fault of the block). |lanes| and |instructions| are incremented by
  // what the block executed. |smid| is the worker's index, for %smid; |workers| for %nsmid.
  bool run(const Kernel& kernel, const LaunchConfig& config, const uint32_t block[3], uint32_t smid,
           uint32_t workers, Fault* fault, uint64_t* lanes, uint64_t* instructions);

 private:
  struct Entry {
    uint32_t pc;
    uint32_t reconverge;
    uint32_t mask;
  };
  struct Warp {
    char* frame = nullptr;
    uint32_t index = 0;
    uint32_t launched = 0;  // lanes that exist (the last warp of a block may be partial)
    uint32_t exited = 0;
    std::vector<Entry> stack;
    enum State : uint8_t { kReady, kWaiting, kDone } state = kReady;
    uint32_t barrier = 0;     // the barrier it waits at
    uint32_t barrier_pc = 0;  // the instruction it waits at
  };
  struct Barrier {
    uint32_t arrived = 0;   // warps
    uint32_t expected = 0;  // warps, 0 for "every warp that has not exited"
    uint32_t popc = 0;      // bar.red
    bool all = true;
    bool any = false;
    const BarrierInfo* info = nullptr;
  };

  void prepare(const Kernel& kernel, const LaunchConfig& config, const uint32_t block[3],
               uint32_t smid, uint32_t workers);
  // Runs |warp| for at most |budget| instructions. False when the block faulted.
  bool run_warp(Warp& warp, uint64_t budget);
  // A warp reaches a barrier with |mask| lanes on its path. False after a fault.
  bool arrive(Warp& warp, const Op& op, uint32_t mask, uint32_t pc);
  // Completes every barrier that can complete; returns whether any did.
  bool release_barriers();
  void report_deadlock();
  void report_assert(const Op& op, uint32_t mask);

  Exec x_;
  const Kernel* kernel_ = nullptr;
  std::vector<Warp> warps_;
  Barrier barriers_[16];
  ScratchBuffer frames_;
  ScratchBuffer shared_;
  ScratchBuffer local_;
  uint64_t lanes_ = 0;
  uint64_t instructions_ = 0;
};

}  // namespace hal::ptx_vm
