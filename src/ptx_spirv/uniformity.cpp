#include "ptx_spirv/uniformity.h"

#include <algorithm>

namespace hal::ptx_spirv {

namespace ir = hal::ptx::ir;
using O = ir::Opcode;

namespace {

// Special registers whose value may differ between the threads of one block.
bool special_varies(ir::Special s) {
  switch (s) {
    case ir::Special::kTid:
    case ir::Special::kLaneid:
    case ir::Special::kWarpid:
    case ir::Special::kLanemaskEq:
    case ir::Special::kLanemaskLe:
    case ir::Special::kLanemaskLt:
    case ir::Special::kLanemaskGe:
    case ir::Special::kLanemaskGt:
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
  switch (ins.opcode) {
    case O::kLd:
      return !ins.mods.has(ir::Mod::kParam) && !ins.mods.has(ir::Mod::kConst);
    case O::kLdu:
    case O::kAtom:
    case O::kLdmatrix:
    case O::kMovmatrix:
    case O::kMma:
    case O::kWmma:
    case O::kWgmma:
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
    case O::kShfl:
    case O::kVote:
    case O::kMatch:
    case O::kRedux:
    case O::kActivemask:
    case O::kElect:
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

  // Immediate post-dominators (Cooper, Harvey and Kennedy's iteration on the reversed graph),
  // with a virtual exit after every returning block. A block that never reaches a return gets
  // the virtual exit: the code after any branch reaching it then counts as controlled.
  void post_dominators() {
    const uint32_t n = static_cast<uint32_t>(cfg_.size());
    const uint32_t exit = n;
    std::vector<std::vector<uint32_t>> preds(n + 1);  // predecessors in the original graph
    for (uint32_t b = 0; b < n; ++b) {
      for (uint32_t s : cfg_[b].successors) {
        if (s < n) preds[s].push_back(b);
      }
      if (cfg_[b].exit == CfgBlock::Exit::kReturn) preds[exit].push_back(b);
    }
    // Post-order of the reversed graph from the exit, iteratively.
    std::vector<uint32_t> order;
    std::vector<uint32_t> number(n + 1, UINT32_MAX);
    std::vector<bool> seen(n + 1, false);
    std::vector<std::pair<uint32_t, size_t>> stack{{exit, 0}};
    seen[exit] = true;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < preds[node].size()) {
        const uint32_t p = preds[node][next++];
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
    std::vector<uint32_t> idom(n + 1, UINT32_MAX);
    idom[exit] = exit;
    auto intersect = [&](uint32_t a, uint32_t c) {
      while (a != c) {
        while (number[a] < number[c]) a = idom[a];
        while (number[c] < number[a]) c = idom[c];
      }
      return a;
    };
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t i = order.size(); i-- > 0;) {  // reverse post-order
        const uint32_t node = order[i];
        if (node == exit) continue;
        uint32_t candidate = UINT32_MAX;
        // Predecessors in the reversed graph: the block's successors, and the exit.
        auto consider = [&](uint32_t p) {
          if (p > n || idom[p] == UINT32_MAX) return;
          candidate = candidate == UINT32_MAX ? p : intersect(p, candidate);
        };
        for (uint32_t s : cfg_[node].successors) consider(s);
        if (cfg_[node].exit == CfgBlock::Exit::kReturn) consider(exit);
        if (candidate != UINT32_MAX && idom[node] != candidate) {
          idom[node] = candidate;
          changed = true;
        }
      }
    }
    ipdom_.assign(n, exit);
    for (uint32_t b = 0; b < n; ++b) {
      if (idom[b] != UINT32_MAX && idom[b] != exit) ipdom_[b] = idom[b];
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
