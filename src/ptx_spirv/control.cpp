// Control flow: the structurizer's statements (structurize.h) become SPIR-V constructs.
//
//  - kScope and kLoop are both SPIR-V loops: a header with OpLoopMerge, the body, and a
//    continue target that branches back to the header. A scope's continue target is never
//    branched to, so it runs once; a loop's is where kContinue goes.
//  - A kBreak or kContinue to the innermost level is a branch to its merge or continue target,
//    which SPIR-V allows from anywhere inside it (selections included). One to an outer level
//    sets the exit flag to (level, kind) and breaks the innermost level; after each level's
//    merge, a level that some exit crossed tests the flag and passes the exit outwards, until
//    the level it names takes it. Exits cross levels only where the PTX jumps out of nested
//    constructs, so uniform control flow stays uniform.
//  - kIf and kSwitch are selections with a merge block of their own.
#include <algorithm>

#include "ptx_spirv/kernel.h"

namespace hal::ptx_spirv {

void Kernel::open_block(uint32_t label) {
  b.label(label);
  block_open_ = true;
}

void Kernel::branch(uint32_t label) {
  if (!block_open_) return;  // after a return, break or continue: unreachable, nothing to do
  b.op_void(spv::Op::OpBranch, {label});
  block_open_ = false;
}

void Kernel::if_then(uint32_t condition, const std::function<void()>& then) {
  const uint32_t then_label = b.fresh_id(), merge = b.fresh_id();
  b.op_void(spv::Op::OpSelectionMerge, {merge, 0});
  b.op_void(spv::Op::OpBranchConditional, {condition, then_label, merge});
  open_block(then_label);
  then();
  branch(merge);
  open_block(merge);
}

void Kernel::warp_memory_writes(const std::function<void()>& writes) {
  // Every lane of the path runs a guarded warp instruction (its exchanges need them all), and
  // the guard decides whose results are kept (emit_block_body): memory included.
  if (store_guard_ == 0) {
    writes();
    return;
  }
  const uint32_t guard = store_guard_;
  store_guard_ = 0;
  if_then(guard, writes);
  store_guard_ = guard;
}

// A do-while loop: the body reads nothing but the variable holding the last value seen, so
// the one access that counts is the successful compare-exchange, and a failed one hands its
// fresher value to the next try. The back edge is the continue target's conditional branch, the
// form a structured loop allows without a selection. A failed exchange is relaxed: only the one
// that stores carries the instruction's ordering.
uint32_t Kernel::cas_loop(uint32_t ptr, uint32_t type, uint32_t scope, uint32_t semantics,
                          const std::function<uint32_t(uint32_t)>& update) {
  const uint32_t seen = b.local_variable(b.type_pointer(spv::StorageClass::Function, type));
  b.op_void(spv::Op::OpStore, {seen, b.op(spv::Op::OpAtomicLoad, type, {ptr, scope, b.u32(0)})});
  const uint32_t header = b.fresh_id(), body = b.fresh_id(), continue_target = b.fresh_id(),
                 merge = b.fresh_id();
  branch(header);
  open_block(header);
  b.op_void(spv::Op::OpLoopMerge, {merge, continue_target, 0});
  b.op_void(spv::Op::OpBranch, {body});
  block_open_ = false;
  open_block(body);
  const uint32_t old = b.op(spv::Op::OpLoad, type, {seen});
  const uint32_t got = b.op(spv::Op::OpAtomicCompareExchange, type,
                            {ptr, scope, semantics, b.u32(0), update(old), old});
  b.op_void(spv::Op::OpStore, {seen, got});
  const uint32_t retry = b.op(spv::Op::OpINotEqual, t_bool, {got, old});
  branch(continue_target);
  open_block(continue_target);
  b.op_void(spv::Op::OpBranchConditional, {retry, header, merge});
  block_open_ = false;
  open_block(merge);
  return b.op(spv::Op::OpLoad, type, {seen});
}

uint32_t Kernel::block_condition(uint32_t block) {
  const BlockRange& r = ranges_[block];
  uint32_t value = load_register(r.guard);
  if (r.guard_negated) value = b.op(spv::Op::OpLogicalNot, t_bool, {value});
  return value;
}

void Kernel::emit_block_body(uint32_t block) {
  const BlockRange& r = ranges_[block];
  for (uint32_t i = r.begin; i < r.end; ++i) {
    const ir::Instruction& ins = function_.code[i];
    if (!block_open_) open_block(b.fresh_id());  // code after an exit: unreachable
    if (ins.guarded) {
      uint32_t condition = load_register(ins.guard);
      if (ins.guard_negated) condition = b.op(spv::Op::OpLogicalNot, t_bool, {condition});
      if (is_warp_instruction(ins)) {
        // Every lane of the path takes part; the guard only decides whose results are kept
        // (lower_warp.cpp).
        store_guard_ = condition;
        lower(ins);
        store_guard_ = 0;
      } else {
        if_then(condition, [&] { lower(ins); });
      }
    } else {
      lower(ins);
    }
  }
}

void Kernel::emit_statements(const std::vector<Stmt>& list) {
  for (const Stmt& stmt : list) {
    if (!block_open_) open_block(b.fresh_id());  // after an exit: unreachable code
    switch (stmt.kind) {
      case Stmt::Kind::kBlock:
        emit_block_body(stmt.block);
        break;
      case Stmt::Kind::kIf: {
        const uint32_t condition = block_condition(stmt.block);
        const uint32_t then_label = b.fresh_id(), else_label = b.fresh_id(), merge = b.fresh_id();
        b.op_void(spv::Op::OpSelectionMerge, {merge, 0});
        b.op_void(spv::Op::OpBranchConditional, {condition, then_label, else_label});
        block_open_ = false;
        open_block(then_label);
        emit_statements(stmt.body);
        branch(merge);
        open_block(else_label);
        emit_statements(stmt.else_body);
        branch(merge);
        open_block(merge);
        break;
      }
      case Stmt::Kind::kSwitch: {
        const uint32_t selector = load_register(ranges_[stmt.block].selector);
        const uint32_t merge = b.fresh_id();
        std::vector<uint32_t> labels;
        Builder::Words operands{selector, merge};
        for (size_t i = 0; i < stmt.cases.size(); ++i) {
          labels.push_back(b.fresh_id());
          operands.push_back(static_cast<uint32_t>(i));
          operands.push_back(labels.back());
        }
        b.op_void(spv::Op::OpSelectionMerge, {merge, 0});
        b.op_void(spv::Op::OpSwitch, operands);
        block_open_ = false;
        for (size_t i = 0; i < stmt.cases.size(); ++i) {
          open_block(labels[i]);
          emit_statements(stmt.cases[i]);
          branch(merge);
        }
        open_block(merge);
        break;
      }
      case Stmt::Kind::kScope:
      case Stmt::Kind::kLoop:
        emit_construct(stmt);
        break;
      case Stmt::Kind::kBreak:
        emit_exit(false, stmt.depth);
        break;
      case Stmt::Kind::kContinue:
        emit_exit(true, stmt.depth);
        break;
      case Stmt::Kind::kReturn:
        b.op_void(spv::Op::OpReturn, {});
        block_open_ = false;
        break;
    }
  }
}

void Kernel::emit_construct(const Stmt& stmt) {
  Level level;
  level.loop = stmt.kind == Stmt::Kind::kLoop;
  level.merge = b.fresh_id();
  level.continue_target = b.fresh_id();
  level.serial = next_serial_++;
  const uint32_t header = b.fresh_id(), body = b.fresh_id();
  branch(header);
  open_block(header);
  b.op_void(spv::Op::OpLoopMerge, {level.merge, level.continue_target, 0});
  b.op_void(spv::Op::OpBranch, {body});
  block_open_ = false;
  open_block(body);
  levels_.push_back(level);
  emit_statements(stmt.body);
  levels_.pop_back();
  branch(level.merge);
  open_block(level.continue_target);
  b.op_void(spv::Op::OpBranch, {header});
  block_open_ = false;
  open_block(level.merge);

  // An exit that crossed this level: pass it on, or take it at the level it names.
  if (exit_flag_ == 0 || levels_.empty()) return;
  const Level& parent = levels_.back();
  const uint32_t flag = b.op(spv::Op::OpLoad, t_u32, {exit_flag_});
  const uint32_t pending = b.op(spv::Op::OpINotEqual, t_bool, {flag, b.u32(0)});
  if_then(pending, [&] {
    const uint32_t parent_continue = b.u32(parent.serial * 2 + 1);
    const uint32_t parent_break = b.u32(parent.serial * 2);
    const uint32_t mine = b.op(spv::Op::OpLogicalOr, t_bool,
                               {b.op(spv::Op::OpIEqual, t_bool, {flag, parent_continue}),
                                b.op(spv::Op::OpIEqual, t_bool, {flag, parent_break})});
    // Taken here: clear the flag; passed on: it stays set.
    const uint32_t cleared = select(t_u32, mine, b.u32(0), flag);
    b.op_void(spv::Op::OpStore, {exit_flag_, cleared});
    if (parent.loop) {
      const uint32_t go_on = b.op(spv::Op::OpIEqual, t_bool, {flag, parent_continue});
      // Both targets exit the innermost loop, which SPIR-V allows without a merge.
      b.op_void(spv::Op::OpBranchConditional, {go_on, parent.continue_target, parent.merge});
      block_open_ = false;
    } else {
      b.op_void(spv::Op::OpBranch, {parent.merge});
      block_open_ = false;
    }
  });
}

void Kernel::emit_exit(bool is_continue, uint32_t depth) {
  if (depth >= levels_.size()) {
    throw Refusal{Failure::Kind::kNotSupported,
                  "kernel '" + function_.name +
                      "': internal error: an exit beyond the outermost "
                      "construct"};
  }
  const Level& target = levels_[levels_.size() - 1 - depth];
  if (depth == 0) {
    b.op_void(spv::Op::OpBranch, {is_continue ? target.continue_target : target.merge});
    block_open_ = false;
    return;
  }
  if (exit_flag_ == 0) {
    exit_flag_ = b.local_variable(b.type_pointer(spv::StorageClass::Function, t_u32), b.u32(0));
  }
  b.op_void(spv::Op::OpStore, {exit_flag_, b.u32(target.serial * 2 + (is_continue ? 1 : 0))});
  b.op_void(spv::Op::OpBranch, {levels_.back().merge});
  block_open_ = false;
}

}  // namespace hal::ptx_spirv
