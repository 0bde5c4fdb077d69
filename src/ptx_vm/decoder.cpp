// The kernel decoder (decoder_impl.h): storage, inlining, control flow and dispatch to the
// instruction families (ops_*.cpp).
#include "ptx_vm/decoder_impl.h"

#include "ptx_vm/cfg.h"
#include "ptx_vm/half.h"

#include <algorithm>
#include <cstring>

namespace hal::ptx_vm::decoding {

// ===========================================================================================
// Errors and storage
// ===========================================================================================

bool Decoder::fail(const std::string& reason) {
  if (!error_.empty()) return false;
  if (ins_ != nullptr) {
    error_ = "line " + std::to_string(ins_->line) + ": " + quote(ins_->text) + ": " + reason;
  } else {
    error_ = reason;
  }
  return false;
}

Ref Decoder::alloc_row(uint32_t bytes_per_lane) {
  const uint64_t bytes = uint64_t{bytes_per_lane} * kWarpSize;
  const uint64_t at = align_up(frame_top_, std::min<uint64_t>(bytes, 64));
  frame_top_ = at + bytes;
  if (frame_top_ > kMaxFrameBytes) return kNoRef;
  return static_cast<Ref>(at);
}

Ref Decoder::alloc_word() {
  if (words_left_ == 0) {
    word_block_ = alloc_row(2);  // 64 bytes: 16 predicate words
    if (word_block_ == kNoRef) return kNoRef;
    words_left_ = 16;
  }
  const Ref ref = word_block_ + (16 - words_left_) * 4;
  --words_left_;
  return ref;
}

Ref Decoder::scratch(uint32_t bytes) {
  const uint32_t row = bytes * kWarpSize;
  const uint32_t at = (scratch_used_ + 63) / 64 * 64;
  if (at + row <= kScratchBytes) {
    scratch_used_ = at + row;
    return at;
  }
  return alloc_row(bytes);  // a large request gets its own row
}

Ref Decoder::carry() {
  if (carry_ == kNoRef) {
    carry_ = alloc_word();
    k_.cc_ref = carry_;
  }
  return carry_;
}

Ref Decoder::constant(const void* bytes, uint32_t size) {
  std::string key(static_cast<const char*>(bytes), size);
  if (auto it = constants_.find(key); it != constants_.end()) return it->second;
  const size_t row = size_t{size} * kWarpSize;
  size_t at = align_up(k_.consts.size(), std::min<size_t>(row, 64));
  k_.consts.resize(at + row);
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    std::memcpy(k_.consts.data() + at + size_t{lane} * size, bytes, size);
  }
  const Ref ref = static_cast<Ref>(at) | kConstBit;
  constants_.emplace(std::move(key), ref);
  return ref;
}

Op& Decoder::extra_op() {
  extras_.emplace_back();
  return extras_.back();
}

void Decoder::push_op(const Op& op) {
  k_.code.push_back(op);
  k_.source.push_back(
      SourceInfo{ins_ != nullptr ? ins_->line : 0, ins_ != nullptr ? ins_->text : std::string()});
}

uint32_t Decoder::definition_of(uint32_t index) const {
  const ir::Function& f = function(index);
  if (f.has_body) return index;
  if (auto it = definitions_.find(f.name); it != definitions_.end()) return it->second;
  return index;
}

// ===========================================================================================
// Inlining and control flow
// ===========================================================================================

bool Decoder::expand(uint32_t index, Copy* copy, uint32_t depth) {
  const ir::Function& f = function(index);
  Copy* saved = copy_;
  copy_ = copy;
  copy->function = index;
  copy->registers.resize(f.registers.size(), kNoRef);
  for (size_t i = 0; i < f.registers.size(); ++i) {
    const ir::Register& r = f.registers[i];
    copy->registers[i] =
        r.type == ir::Type::kPred ? alloc_word() : alloc_row(ir::type_size(r.type) * r.vector);
    if (copy->registers[i] == kNoRef) return fail("the kernel's registers exceed 64 MiB per warp");
  }
  const uint32_t copy_index = static_cast<uint32_t>(copies_.size() - 1);
  copy->pc_of.assign(f.code.size() + 1, 0);
  for (size_t i = 0; i < f.code.size(); ++i) {
    copy_ = copy;
    copy->pc_of[i] = static_cast<uint32_t>(k_.code.size());
    if (!decode_instruction(f.code[i], copy_index, depth)) return false;
    if (k_.code.size() > kMaxOps) {
      return fail("the kernel is larger than " + std::to_string(kMaxOps) +
                  " operations once its calls are inlined");
    }
  }
  copy->pc_of[f.code.size()] = static_cast<uint32_t>(k_.code.size());
  copy_ = saved;
  return true;
}

bool Decoder::decode_call(const ir::Instruction& ins, uint32_t copy_index, uint32_t depth) {
  // call{.uni} [(ret-list),] func [, (arg-list)] [, prototype]
  const ir::Operand* returns = nullptr;
  const ir::Operand* callee = nullptr;
  const ir::Operand* args = nullptr;
  for (const ir::Operand& o : ins.operands) {
    if (o.kind == ir::OperandKind::kList) {
      (callee == nullptr ? returns : args) = &o;
    } else if (callee == nullptr) {
      callee = &o;
    } else {
      return fail("indirect calls through a prototype are not supported on the CPU PTX device");
    }
  }
  if (callee == nullptr || callee->kind != ir::OperandKind::kSymbol ||
      callee->symbol.kind != ir::SymbolKind::kFunction) {
    return fail("indirect calls are not supported on the CPU PTX device");
  }
  const uint32_t target = definition_of(callee->symbol.index);
  const ir::Function& g = function(target);
  const size_t nret = returns != nullptr ? returns->elements.size() : 0;
  const size_t narg = args != nullptr ? args->elements.size() : 0;

  Op guard_branch;
  const bool guarded = ins.guarded;
  uint32_t skip_pc = 0;
  if (guarded) {
    // @p call: branch around the inlined body where the guard is false.
    guard_branch.kind = OpKind::kBranch;
    guard_branch.guard = copy_->registers[ins.guard] | (ins.guard_negated ? 0 : kGuardNegate);
    skip_pc = static_cast<uint32_t>(k_.code.size());
    push_op(guard_branch);
  }

  if (!g.has_body) {
    // The offset in the thread's local storage of a .param argument or result, which the
    // call's st.param wrote (or its ld.param reads).
    const auto param_offset = [&](const ir::Operand& a, Ref* out) {
      Address where;
      ir::Operand addr;
      addr.kind = ir::OperandKind::kAddress;
      addr.base = ir::AddressBase::kSymbol;
      addr.symbol = a.symbol;
      if (a.kind != ir::OperandKind::kSymbol || !address(addr, MemSpace::kParam, &where)) {
        return fail("the arguments of '" + g.name + "' must be .param variables");
      }
      // A call's own .param variable lives in the thread's local storage; a register or the
      // kernel's parameter would be read from the wrong memory.
      if (where.base != kNoRef || where.space != MemSpace::kLocal) {
        return fail("the arguments and result of '" + g.name +
                    "' must be .param variables declared for the call");
      }
      *out = static_cast<Ref>(where.disp);
      return true;
    };
    if (g.name == "__assertfail") {
      Op op;
      op.kind = OpKind::kAssert;
      auto* info = k_.make<AssertInfo>();
      Ref* slots[] = {&info->message, &info->file, &info->line, &info->function};
      for (size_t i = 0; i < narg && i < 4; ++i) {
        if (!param_offset(args->elements[i], slots[i])) return false;
      }
      op.ext = info;
      push_op(op);
    } else if (g.name == "vprintf") {
      if (narg != 2 || nret > 1) {
        return fail("vprintf takes a format and an argument buffer and returns at most one value");
      }
      Op op;
      auto* info = k_.make<PrintfInfo>();
      if (!param_offset(args->elements[0], &info->format) ||
          !param_offset(args->elements[1], &info->arguments) ||
          (nret == 1 && !param_offset(returns->elements[0], &info->result))) {
        return false;
      }
      op.ext = info;
      op.fn = vprintf_handler();
      push_op(op);
    } else {
      return fail("calls '" + g.name + "', which is declared but not defined in the module; the " +
                  "CPU PTX device provides no external functions but __assertfail and vprintf");
    }
  } else {
    if (std::find(call_chain_.begin(), call_chain_.end(), target) != call_chain_.end()) {
      return fail("recursive call to '" + g.name +
                  "': the CPU PTX device inlines .func calls and cannot run recursion");
    }
    if (depth >= kMaxInlineDepth) return fail("calls nest too deeply");
    if (nret != g.returns.size() || narg != g.params.size()) {
      return fail("calls '" + g.name + "' with " + std::to_string(narg) + " arguments and " +
                  std::to_string(nret) + " results, but it takes " +
                  std::to_string(g.params.size()) + " and returns " +
                  std::to_string(g.returns.size()));
    }
    copies_.push_back(std::make_unique<Copy>());
    Copy* callee_copy = copies_.back().get();
    Copy* caller = copy_;
    callee_copy->params.resize(g.params.size());
    callee_copy->returns.resize(g.returns.size());
    callee_copy->reg_params.assign(g.params.size(), kNoRef);
    callee_copy->reg_returns.assign(g.returns.size(), kNoRef);
    // Bind formals: .param formals alias the caller's argument variables; .reg formals get
    // their own rows, copied in before the body and out after it.
    struct Copyback {
      Ref from;
      Ref to;
      uint32_t bytes;
      bool pred;
    };
    std::vector<Copyback> after;
    auto bind = [&](const std::vector<ir::Variable>& formals, const ir::Operand* list,
                    std::vector<Location>* locs, std::vector<Ref>* regs, bool is_return) -> bool {
      for (size_t i = 0; i < formals.size(); ++i) {
        const ir::Variable& formal = formals[i];
        const ir::Operand& actual = list->elements[i];
        if (formal.space == ir::Space::kReg) {
          const bool pred = formal.type == ir::Type::kPred;
          const uint32_t bytes = ir::type_size(formal.type);
          (*regs)[i] = pred ? alloc_word() : alloc_row(bytes);
          if ((*regs)[i] == kNoRef) return fail("registers exceed 64 MiB per warp");
          copy_ = caller;
          const Ref value = pred ? predicate(actual) : source(actual, formal.type);
          if (value == kNoRef) return false;
          if (is_return) {
            after.push_back({(*regs)[i], value, bytes, pred});
          } else {
            Op mov;
            mov.fn = copy_row_handler(pred ? 0 : bytes);
            mov.a[0] = (*regs)[i];
            mov.a[1] = value;
            push_op(mov);
          }
          continue;
        }
        if (actual.kind != ir::OperandKind::kSymbol) {
          return fail("argument " + std::to_string(i) + " of the call to '" + g.name +
                      "' must be a .param variable");
        }
        copy_ = caller;
        const Location* loc = variable_location(actual.symbol);
        if (loc == nullptr || loc->space != MemSpace::kLocal) {
          return fail("argument " + std::to_string(i) + " of the call to '" + g.name +
                      "' must be a .param variable declared in the calling function");
        }
        (*locs)[i] = *loc;
      }
      return true;
    };
    if (!bind(g.params, args, &callee_copy->params, &callee_copy->reg_params, false) ||
        !bind(g.returns, returns, &callee_copy->returns, &callee_copy->reg_returns, true)) {
      return false;
    }
    call_chain_.push_back(target);
    const ir::Instruction* saved_ins = ins_;
    if (!expand(target, callee_copy, depth + 1)) return false;
    ins_ = saved_ins;
    call_chain_.pop_back();
    copy_ = caller;
    for (const Copyback& c : after) {
      Op mov;
      mov.fn = copy_row_handler(c.pred ? 0 : c.bytes);
      mov.a[0] = c.to;
      mov.a[1] = c.from;
      push_op(mov);
    }
  }
  (void)copy_index;
  if (guarded) k_.code[skip_pc].target = static_cast<uint32_t>(k_.code.size());
  return true;
}

bool Decoder::decode_barrier(const ir::Instruction& ins, Op& op) {
  using M = ir::Mod;
  auto* info = k_.make<BarrierInfo>();
  op.kind = OpKind::kBarrier;
  op.ext = info;
  k_.uses_barriers = true;
  const bool is_bar = ins.opcode == ir::Opcode::kBar;
  info->aligned = is_bar || ins.mods.has(M::kAligned);
  size_t next = 0;
  const auto& ops = ins.operands;
  if (ins.mods.has(M::kRed)) {
    if (ins.mods.has(M::kPopc)) {
      info->mode = BarrierInfo::kRedPopc;
    } else if (ins.mods.has(M::kAnd)) {
      info->mode = BarrierInfo::kRedAnd;
    } else if (ins.mods.has(M::kOr)) {
      info->mode = BarrierInfo::kRedOr;
    } else {
      return fail("bar.red needs .popc, .and or .or");
    }
    if (ops.size() < 3) return fail("bar.red takes a destination, a barrier and a predicate");
    info->dst = info->mode == BarrierInfo::kRedPopc ? destination(ops[0], ir::Type::kU32)
                                                    : predicate(ops[0]);
    if (info->dst == kNoRef) return false;
    next = 1;
  } else if (ins.mods.has(M::kArrive)) {
    info->mode = BarrierInfo::kArrive;
  } else if (ins.mods.has(M::kSync) || (is_bar && ins.mods.empty())) {
    info->mode = BarrierInfo::kSync;
  } else if (ins.mods.has(M::kCta) && ins.mods.has(M::kSync)) {
    info->mode = BarrierInfo::kSync;
  } else {
    return fail("expected bar.sync, bar.arrive or bar.red");
  }
  const size_t rest = ops.size() - next - (info->mode >= BarrierInfo::kRedPopc ? 1 : 0);
  if (rest < 1 || rest > 2) return fail("expected a barrier number and an optional thread count");
  info->id = source(ops[next], ir::Type::kU32);
  if (info->id == kNoRef) return false;
  if (rest == 2) {
    info->count = source(ops[next + 1], ir::Type::kU32);
    if (info->count == kNoRef) return false;
  }
  if (info->mode >= BarrierInfo::kRedPopc) {
    bool negate = false;
    info->pred = predicate(ops.back(), &negate);
    info->pred_negate = negate;
    if (info->pred == kNoRef) return false;
  }
  if (info->mode == BarrierInfo::kArrive && info->count == kNoRef) {
    return fail("bar.arrive needs a thread count");
  }
  return true;
}

bool Decoder::decode_control(const ir::Instruction& ins, uint32_t copy_index, Op& op,
                             bool* handled) {
  using O = ir::Opcode;
  *handled = true;
  switch (ins.opcode) {
    case O::kBra: {
      if (ins.operands.size() != 1 || ins.operands[0].kind != ir::OperandKind::kSymbol ||
          ins.operands[0].symbol.kind != ir::SymbolKind::kLabel) {
        return fail("bra takes one label");
      }
      op.kind = OpKind::kBranch;
      fixups_.push_back(
          {static_cast<uint32_t>(k_.code.size()), copy_index, ins.operands[0].symbol.index, false});
      return true;
    }
    case O::kRet:
      if (copy_->is_entry) {
        op.kind = OpKind::kExit;
      } else {
        op.kind = OpKind::kBranch;
        fixups_.push_back({static_cast<uint32_t>(k_.code.size()), copy_index, 0, true});
      }
      return true;
    case O::kExit:
      op.kind = OpKind::kExit;
      return true;
    case O::kTrap:
      op.kind = OpKind::kTrap;
      return true;
    case O::kBar:
    case O::kBarrier:
      if (ins.mods.has(ir::Mod::kWarp)) {
        *handled = false;  // bar.warp.sync: a warp instruction
        return true;
      }
      if (ins.mods.has(ir::Mod::kCluster) || ins.mods.has(ir::Mod::kSharedCluster)) {
        return fail("cluster barriers are not supported on the CPU PTX device");
      }
      return decode_barrier(ins, op);
    case O::kBrkpt:
    case O::kNanosleep:
    case O::kPmevent:
    case O::kPrefetch:
    case O::kPrefetchu:
    case O::kApplypriority:
    case O::kDiscard:
    case O::kFence:
    case O::kMembar:
      // Hints, or orderings the engine's memory accesses already give: the workers are host
      // threads and every access is a real host access (fences become host fences).
      op.kind = OpKind::kCompute;
      op.fn = fence_handler(ins.opcode == O::kFence || ins.opcode == O::kMembar);
      return true;
    default:
      *handled = false;
      return true;
  }
}

bool Decoder::decode_instruction(const ir::Instruction& ins, uint32_t copy_index, uint32_t depth) {
  using O = ir::Opcode;
  ins_ = &ins;
  extras_.clear();
  scratch_used_ = 0;
  if (ins.opcode == O::kCall) return decode_call(ins, copy_index, depth);

  Op op;
  if (ins.guarded) {
    if (ins.guard >= copy_->registers.size()) return fail("unknown guard predicate");
    op.guard = copy_->registers[ins.guard] | (ins.guard_negated ? kGuardNegate : 0);
  }
  bool handled = false;
  if (!decode_control(ins, copy_index, op, &handled)) return false;
  if (!handled) {
    FamilyDecoder family = nullptr;
    switch (ins.opcode) {
      case O::kMov:
      case O::kSelp:
      case O::kCreatepolicy:
      case O::kActivemask:
        family = ins.opcode == O::kActivemask ? decode_warp : decode_move;
        break;
      case O::kAdd:
      case O::kSub:
      case O::kMul:
      case O::kMad:
      case O::kFma:
      case O::kDiv:
      case O::kMin:
      case O::kMax:
      case O::kAbs:
      case O::kNeg: {
        const ir::Type t = ins.types.empty() ? ir::Type::kNone : ins.types.back();
        family = ir::is_float(t) ? decode_float : decode_integer;
        break;
      }
      case O::kRcp:
      case O::kSqrt:
      case O::kRsqrt:
      case O::kSin:
      case O::kCos:
      case O::kLg2:
      case O::kEx2:
      case O::kTanh:
      case O::kCopysign:
      case O::kTestp:
        family = decode_float;
        break;
      case O::kAddc:
      case O::kSubc:
      case O::kMadc:
      case O::kMul24:
      case O::kMad24:
      case O::kSad:
      case O::kRem:
      case O::kAnd:
      case O::kOr:
      case O::kXor:
      case O::kNot:
      case O::kCnot:
      case O::kShl:
      case O::kShr:
      case O::kShf:
      case O::kLop3:
      case O::kPopc:
      case O::kClz:
      case O::kBrev:
      case O::kBfind:
      case O::kFns:
      case O::kBfe:
      case O::kBfi:
      case O::kPrmt:
      case O::kDp4a:
      case O::kDp2a:
      case O::kBmsk:
      case O::kSzext:
        family = decode_integer;
        break;
      case O::kSetp:
      case O::kSet:
      case O::kSlct:
        family = decode_compare;
        break;
      case O::kCvt:
        family = decode_convert;
        break;
      case O::kLd:
      case O::kLdu:
      case O::kSt:
      case O::kCvta:
      case O::kIsspacep:
        family = decode_memory;
        break;
      case O::kAtom:
      case O::kRed:
        family = decode_atomic;
        break;
      case O::kCp:
        family = decode_async_copy;
        break;
      case O::kShfl:
      case O::kVote:
      case O::kMatch:
      case O::kRedux:
      case O::kElect:
      case O::kBar:
      case O::kBarrier:
        family = decode_warp;
        break;
      case O::kMma:
      case O::kLdmatrix:
      case O::kStmatrix:
      case O::kMovmatrix:
        family = decode_matrix;
        break;
      case O::kWmma:
        family = decode_wmma;
        break;
      case O::kVabsdiff2:
      case O::kVabsdiff4:
      case O::kVadd2:
      case O::kVadd4:
      case O::kVavrg2:
      case O::kVavrg4:
      case O::kVmax2:
      case O::kVmax4:
      case O::kVmin2:
      case O::kVmin4:
      case O::kVsub2:
      case O::kVsub4:
        family = decode_simd;
        break;
      default:
        return fail(std::string("instruction '") + ir::opcode_name(ins.opcode) +
                    "' is not supported on the CPU PTX device");
    }
    // wmma's operation words (.load.a, .store.d, .mma) are not modifiers: its decoder reads them.
    if (!ins.unknown_mods.empty() && ins.opcode != O::kWmma) {
      return fail("modifier '." + ins.unknown_mods.front() +
                  "' is not supported on the CPU PTX device");
    }
    if (!family(*this, ins, op)) {
      if (error_.empty()) fail("cannot be executed on the CPU PTX device");
      return false;
    }
  }
  push_op(op);
  for (Op& extra : extras_) {
    if (extra.guard == kNoGuard) extra.guard = op.guard;
    push_op(extra);
  }
  extras_.clear();
  return true;
}

bool Decoder::finish(std::string* error) {
  for (const Fixup& f : fixups_) {
    const Copy& copy = *copies_[f.copy];
    uint32_t target = 0;
    if (f.to_end) {
      target = copy.pc_of.back();
    } else {
      const ir::Function& fn = function(copy.function);
      if (f.label >= fn.labels.size()) {
        *error = "line " + std::to_string(k_.source[f.pc].line) + ": unknown label";
        return false;
      }
      const uint32_t at = fn.labels[f.label].instruction;
      target = copy.pc_of[std::min<size_t>(at, copy.pc_of.size() - 1)];
    }
    k_.code[f.pc].target = target;
  }
  compute_reconvergence(k_);
  k_.frame_bytes = static_cast<uint32_t>(align_up(frame_top_, 64));
  k_.info.registers = static_cast<uint32_t>(frame_top_ / (4 * kWarpSize));
  if (k_.consts.empty()) k_.consts.resize(64);
  return true;
}

bool Decoder::run(std::string* error) {
  const ir::Function& entry = function(static_cast<uint32_t>(entry_));
  for (size_t i = 0; i < module_.functions.size(); ++i) {
    if (module_.functions[i].has_body) {
      definitions_.emplace(module_.functions[i].name, static_cast<uint32_t>(i));
    }
  }
  KernelInfo& info = k_.info;
  info.name = entry.name;
  info.line = entry.line;
  // Parameters: each at the next offset aligned to its own alignment, as the driver lays them out.
  uint64_t offset = 0;
  for (const ir::Variable& p : entry.params) {
    const uint32_t align = p.align != 0 ? p.align : std::max<uint32_t>(ir::type_size(p.type), 1);
    offset = align_up(offset, align);
    info.params.push_back(
        ParamSlot{static_cast<uint32_t>(offset), static_cast<uint32_t>(p.size()), align});
    offset += p.size();
  }
  info.param_bytes = static_cast<uint32_t>(offset);
  for (int i = 0; i < 3; ++i) {
    info.reqntid[i] = entry.reqntid[i];
    info.maxntid[i] = entry.maxntid[i];
  }
  uint32_t limit = 1024;
  if (entry.reqntid[0] != 0) {
    limit = entry.reqntid[0] * std::max(entry.reqntid[1], 1u) * std::max(entry.reqntid[2], 1u);
  } else if (entry.maxntid[0] != 0) {
    limit = entry.maxntid[0] * std::max(entry.maxntid[1], 1u) * std::max(entry.maxntid[2], 1u);
  }
  info.max_threads_per_block = std::min<uint32_t>(limit, 1024);

  if (!plan_memory()) {
    *error = error_;
    return false;
  }
  copies_.push_back(std::make_unique<Copy>());
  Copy* root = copies_.back().get();
  root->is_entry = true;
  root->params.resize(entry.params.size());
  root->reg_params.assign(entry.params.size(), kNoRef);
  call_chain_.push_back(static_cast<uint32_t>(entry_));
  if (!expand(static_cast<uint32_t>(entry_), root, 0)) {
    *error = error_;
    return false;
  }
  // Falling off the end of the entry exits.
  ins_ = nullptr;
  Op exit_op;
  exit_op.kind = OpKind::kExit;
  push_op(exit_op);
  return finish(error);
}

}  // namespace hal::ptx_vm::decoding

namespace hal::ptx_vm {

bool decode_kernel(const ir::Module& module, const ModuleAddresses& addresses, size_t entry,
                   Kernel* out, std::string* error) {
  decoding::Decoder decoder(module, addresses, entry, out);
  return decoder.run(error);
}

}  // namespace hal::ptx_vm
