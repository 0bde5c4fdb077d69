#include "ptx_spirv/uniformity.h"

#include <algorithm>

#include "ptx/post_dominators.h"
#include "ptx_spirv/kernel.h"

namespace hal::ptx_spirv {

namespace ir = hal::ptx::ir;
using O = ir::Opcode;

namespace {

// Special registers whose value may differ between the threads of one block: %tid, the warp
// special registers but the warp count, the clocks and the performance counters.
bool special_varies(ir::Special s) {
  if (is_warp_special(s)) return s != ir::Special::kNwarpid;
  switch (s) {
    case ir::Special::kTid:
    case ir::Special::kClock:
    case ir::Special::kClockHi:
    case ir::Special::kClock64:
    case ir::Special::kGlobaltimer:
    case ir::Special::kGlobaltimerLo:
    case ir::Special::kGlobaltimerHi:
    case ir::Special::kPm:
    case ir::Special::kPm64:
      return true;
    default:
      return false;
  }
}

// Instructions whose result depends on more than their operands: memory that threads may see
// differently or change, and the warp instructions (uniform within a warp at most).
bool reads_thread_state(const ir::Instruction& ins) {
  if (is_warp_instruction(ins)) return true;  // the matrix instructions included
  switch (ins.opcode) {
    case O::kLd:
      return !ins.mods.has(ir::Mod::kParam) && !ins.mods.has(ir::Mod::kConst);
    case O::kLdu:
    case O::kAtom:
    case O::kTex:
    case O::kTld4:
    case O::kTxq:
    case O::kSuld:
    case O::kSuq:
    case O::kMbarrier:
    case O::kStacksave:
    case O::kMapa:
    case O::kMultimem:
    case O::kGetctarank:
      return true;
    default:
      return false;
  }
}

// Whether operands[0] is what the instruction writes. A register there is read by barriers,
// brx.idx and nanosleep; stores, reductions and copies put an address there.
bool writes_first_operand(const ir::Instruction& ins) {
  if (ins.operands.empty()) return false;
  const ir::OperandKind kind = ins.operands[0].kind;
  if (kind != ir::OperandKind::kRegister && kind != ir::OperandKind::kVector) return false;
  return ins.opcode != O::kBar && ins.opcode != O::kBarrier && ins.opcode != O::kBrx &&
         ins.opcode != O::kNanosleep;
}

bool carry_in(const ir::Instruction& ins) {
  return ins.opcode == O::kAddc || ins.opcode == O::kSubc || ins.opcode == O::kMadc;
}

using Varying = std::vector<bool>;  // per register, and the carry flag last

class Analysis {
 public:
  Analysis(const ir::Function& function, const std::vector<CfgBlock>& cfg,
           const std::vector<BlockCode>& code)
      : function_(function), cfg_(cfg), code_(code) {
    carry_ = static_cast<uint32_t>(function.registers.size());
    result_.cause.assign(cfg.size(), Divergence::kNone);
    branch_done_.assign(cfg.size(), false);
    post_dominators();
  }

  // A forward data-flow to a fixed point: which registers may vary where each block starts,
  // merged over its predecessors, and which blocks divergent branches control.
  Divergence run() {
    const size_t n = std::min(cfg_.size(), code_.size());
    std::vector<Varying> in(n, Varying(carry_ + 1, false));
    std::vector<bool> reached(n, false);
    if (n > 0) reached[0] = true;
    bool changed = true;
    while (changed) {
      changed = false;
      for (uint32_t block = 0; block < n; ++block) {
        if (!reached[block]) continue;
        Varying state = in[block];
        const bool divergent = result_.cause[block] != Divergence::kNone;
        for (uint32_t i = code_[block].begin; i < code_[block].end; ++i) {
          transfer(function_.code[i], divergent, &state);
        }
        if (!branch_done_[block] && decision_varies(block, state)) {
          branch_done_[block] = true;
          changed = mark_region(block) || changed;
        }
        for (uint32_t next : cfg_[block].successors) {
          if (next >= n) continue;
          if (!reached[next]) {
            reached[next] = true;
            changed = true;
          }
          for (size_t r = 0; r < state.size(); ++r) {
            if (state[r] && !in[next][r]) {
              in[next][r] = true;
              changed = true;
            }
          }
        }
      }
    }
    return std::move(result_);
  }

 private:
  bool reads_varying(const ir::Operand& o, const Varying& v) const {
    switch (o.kind) {
      case ir::OperandKind::kRegister:
        return (o.reg < carry_ && v[o.reg]) || (o.has_reg2 && o.reg2 < carry_ && v[o.reg2]);
      case ir::OperandKind::kSpecial:
        return special_varies(o.special);
      case ir::OperandKind::kAddress:
        if (o.base == ir::AddressBase::kRegister && o.reg < carry_ && v[o.reg]) return true;
        break;
      default:
        break;
    }
    return std::any_of(o.elements.begin(), o.elements.end(),
                       [&](const ir::Operand& e) { return reads_varying(e, v); });
  }

  // Sets what |o| names as written (registers, vector elements) to |varies|; a guarded write
  // keeps a register varying that was.
  void set_written(const ir::Operand& o, bool varies, bool guarded, Varying* v) const {
    auto set = [&](uint32_t reg) {
      if (reg < carry_) (*v)[reg] = varies || (guarded && (*v)[reg]);
    };
    if (o.kind == ir::OperandKind::kRegister) {
      set(o.reg);
      if (o.has_reg2) set(o.reg2);
    }
    for (const ir::Operand& e : o.elements) set_written(e, varies, guarded, v);
  }

  // What |ins| writes may vary when it runs in divergent code, reads what may vary, or is
  // guarded by a predicate that may.
  void transfer(const ir::Instruction& ins, bool divergent, Varying* v) const {
    const bool writes = writes_first_operand(ins);
    const bool sets_carry = ins.mods.has(ir::Mod::kCc);
    if (!writes && !sets_carry) return;
    bool varies = divergent || reads_thread_state(ins) ||
                  (ins.guarded && ins.guard < carry_ && (*v)[ins.guard]) ||
                  (carry_in(ins) && (*v)[carry_]);
    for (size_t i = writes ? 1 : 0; i < ins.operands.size() && !varies; ++i) {
      varies = reads_varying(ins.operands[i], *v);
    }
    if (writes) set_written(ins.operands[0], varies, ins.guarded, v);
    if (sets_carry) (*v)[carry_] = varies || (ins.guarded && (*v)[carry_]);
  }

  bool decision_varies(uint32_t block, const Varying& v) const {
    const CfgBlock& b = cfg_[block];
    const ir::Instruction* t = code_[block].terminator;
    if (t == nullptr) return false;
    if (b.exit == CfgBlock::Exit::kBranch) {
      if (b.successors.size() == 2 && b.successors[0] == b.successors[1]) return false;
      return t->guarded && t->guard < carry_ && v[t->guard];
    }
    if (b.exit == CfgBlock::Exit::kSwitch) {
      return !t->operands.empty() && reads_varying(t->operands[0], v);
    }
    return false;
  }

  // Every block reachable from |branch|'s successors before its immediate post-dominator.
  bool mark_region(uint32_t branch) {
    const uint32_t stop = ipdom_[branch];
    std::vector<uint32_t> work(cfg_[branch].successors.begin(), cfg_[branch].successors.end());
    std::vector<bool> seen(cfg_.size(), false);
    bool changed = false;
    while (!work.empty()) {
      const uint32_t block = work.back();
      work.pop_back();
      if (block >= cfg_.size() || block == stop || seen[block]) continue;
      seen[block] = true;
      if (result_.cause[block] == Divergence::kNone) {
        result_.cause[block] = branch;
        changed = true;
      }
      for (uint32_t next : cfg_[block].successors) work.push_back(next);
    }
    return changed;
  }

  // Immediate post-dominators, with a virtual exit node after every returning block.
  void post_dominators() {
    const uint32_t n = static_cast<uint32_t>(cfg_.size());
    std::vector<std::vector<uint32_t>> successors(n + 1);
    for (uint32_t b = 0; b < n; ++b) {
      successors[b] = cfg_[b].successors;
      if (cfg_[b].exit == CfgBlock::Exit::kReturn) successors[b].push_back(n);
    }
    const std::vector<uint32_t> ipdom = ptx::immediate_post_dominators(successors, n);
    // A block that never reaches a return gets the virtual exit too: the code after any branch
    // reaching it then counts as controlled.
    ipdom_.assign(n, n);
    for (uint32_t b = 0; b < n; ++b) {
      if (ipdom[b] != ptx::kNoPostDominator) ipdom_[b] = ipdom[b];
    }
  }

  const ir::Function& function_;
  const std::vector<CfgBlock>& cfg_;
  const std::vector<BlockCode>& code_;
  uint32_t carry_ = 0;           // the index standing for the .cc carry flag
  std::vector<uint32_t> ipdom_;  // per block; cfg_.size() for the virtual exit
  std::vector<bool> branch_done_;
  Divergence result_;
};

}  // namespace

Divergence find_divergence(const ir::Function& function, const std::vector<CfgBlock>& cfg,
                           const std::vector<BlockCode>& code) {
  return Analysis(function, cfg, code).run();
}

}  // namespace hal::ptx_spirv
