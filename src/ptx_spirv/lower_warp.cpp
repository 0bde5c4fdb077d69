// Warp-level PTX on 32-lane subgroups: shfl, vote, match, redux, activemask, elect,
// bar.warp.sync and the warp special registers, with the results the CPU PTX device gives
// (src/ptx_vm/ops_warp.cpp).
//
// A warp kernel runs with subgroups of exactly 32 invocations, all full (translate.h,
// KernelInfo::warp_size), and numbers its threads from them: %laneid is the subgroup
// invocation id, %warpid the subgroup id, and %tid is decomposed from 32 * %warpid + %laneid,
// so the lanes of a subgroup are the threads CUDA puts in one warp whatever invocations the
// device grouped.
//
// A device without 32-lane subgroups runs the same instructions through workgroup memory
// instead (Kernel::warps_in_workgroup_memory): lanes are numbered from the invocation's index in
// the workgroup, which is CUDA's numbering of a block's threads, so every block shape works, a
// last partial warp included. Each exchange stores the thread's word at its place in the
// workgroup's exchange array between two workgroup barriers, and each lane then reads the words
// of its warp. Vulkan allows those barriers only where the whole workgroup runs together, so a
// kernel with a warp instruction in code whose direction depends on the thread is refused
// (uniformity.h finds that code); the warp width stays 32 either way.
//
// Divergence: the lanes running a warp instruction are the invocations that reach it, which in
// structured SPIR-V are the lanes on the same path, as on the CPU PTX device (which runs a
// warp's paths one after the other). A guard predicate does not take a lane off the path (on a
// GPU a predicated-off lane is still active: activemask counts it, and shfl may read its
// register), so a guarded warp instruction runs on every lane of the path and only the lanes
// whose guard holds keep its results (emit_block_body). A member mask selects among them: a vote or
// reduction sees the member lanes that run it; a lane named in the mask that has not reached the
// instruction is a program error on every device (the CPU PTX device stops the kernel), and here it
// simply does not take part. Lanes may give different masks in one instruction (two 16-lane tiles
// each naming their half): every lowering reads the mask per lane.
#include "ptx_spirv/kernel.h"

#include <algorithm>
#include <vector>

#include <spirv/unified1/GLSL.std.450.h>

#include "ptx_spirv/uniformity.h"

namespace hal::ptx_spirv {

namespace {

using O = ir::Opcode;
using T = ir::Type;

// Warp instructions that work on matrix fragments: the next stage of the translator.
bool is_matrix_instruction(const ir::Instruction& ins) {
  switch (ins.opcode) {
    case O::kMma:
    case O::kLdmatrix:
    case O::kStmatrix:
    case O::kMovmatrix:
    case O::kWmma:
    case O::kWgmma:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool is_warp_instruction(const ir::Instruction& ins) {
  switch (ins.opcode) {
    case O::kShfl:
    case O::kVote:
    case O::kMatch:
    case O::kRedux:
    case O::kActivemask:
    case O::kElect:
      return true;
    case O::kBar:
    case O::kBarrier:
      return ins.mods.has(ir::Mod::kWarp);
    default:
      return is_matrix_instruction(ins);
  }
}

bool is_warp_special(ir::Special special) {
  switch (special) {
    case ir::Special::kLaneid:
    case ir::Special::kWarpid:
    case ir::Special::kNwarpid:
    case ir::Special::kLanemaskEq:
    case ir::Special::kLanemaskLe:
    case ir::Special::kLanemaskLt:
    case ir::Special::kLanemaskGe:
    case ir::Special::kLanemaskGt:
      return true;
    default:
      return false;
  }
}

namespace {

// The warp special register |operand| reads (or one of its elements), or kCount.
ir::Special warp_special_read(const ir::Operand& operand) {
  if (operand.kind == ir::OperandKind::kSpecial && is_warp_special(operand.special)) {
    return operand.special;
  }
  for (const ir::Operand& element : operand.elements) {
    const ir::Special special = warp_special_read(element);
    if (special != ir::Special::kCount) return special;
  }
  return ir::Special::kCount;
}

// What makes |function| a warp kernel: its first warp instruction, or the first instruction
// that reads a warp special register (|*special| then names it); null for neither.
const ir::Instruction* first_warp_use(const ir::Function& function, ir::Special* special) {
  *special = ir::Special::kCount;
  for (const ir::Instruction& ins : function.code) {
    if (is_warp_instruction(ins)) return &ins;
    for (const ir::Operand& operand : ins.operands) {
      *special = warp_special_read(operand);
      if (*special != ir::Special::kCount) return &ins;
    }
  }
  return nullptr;
}

constexpr uint32_t kScopeSubgroup = static_cast<uint32_t>(spv::Scope::Subgroup);

// The subgroup operations, on 32-bit words and 32-lane masks: subgroup instructions on
// 32-lane subgroups, or the workgroup's exchange array.
struct Subgroup {
  Kernel& k;

  bool emulated() const { return k.warps_in_workgroup_memory(); }
  uint32_t scope() const { return k.b.u32(kScopeSubgroup); }
  // The lanes whose |predicate| is true, among those running.
  uint32_t ballot(uint32_t predicate) {
    if (emulated()) {
      const uint32_t mine = k.b.op(spv::Op::OpShiftLeftLogical, k.t_u32, {k.b.u32(1), k.lane()});
      // Each lane contributes only its own bit: a lane the block does not have (in a last,
      // partial warp) published nothing, and its word holds whatever was there.
      const std::vector<uint32_t> words = each_lane(k.select(k.t_u32, predicate, mine, k.b.u32(0)));
      uint32_t mask = k.b.u32(0);
      for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
        const uint32_t bit =
            k.b.op(spv::Op::OpBitwiseAnd, k.t_u32, {words[lane], k.b.u32(1u << lane)});
        mask = k.b.op(spv::Op::OpBitwiseOr, k.t_u32, {mask, bit});
      }
      return k.b.op(spv::Op::OpBitwiseAnd, k.t_u32, {mask, running()});
    }
    k.b.capability(spv::Capability::GroupNonUniformBallot);
    const uint32_t v4 = k.b.type_vector(k.t_u32, 4);
    const uint32_t mask = k.b.op(spv::Op::OpGroupNonUniformBallot, v4, {scope(), predicate});
    return k.b.op(spv::Op::OpCompositeExtract, k.t_u32, {mask, 0});
  }
  // Through workgroup memory every lane of the warp runs each warp instruction (the kernel is
  // refused otherwise): the lanes the block has.
  uint32_t running() { return emulated() ? k.warp_lanes() : ballot(k.b.constant_bool(true)); }
  // |value| (u32) of lane |lane|, which must be running for the result to mean anything.
  uint32_t shuffle(uint32_t value, uint32_t lane) {
    if (emulated()) {
      k.publish_to_warp(value);
      return k.published_by(lane);
    }
    k.b.capability(spv::Capability::GroupNonUniformShuffle);
    return k.b.op(spv::Op::OpGroupNonUniformShuffle, k.t_u32, {scope(), value, lane});
  }
  // |value| (u32) of each lane of the warp, lane 0 first.
  std::vector<uint32_t> each_lane(uint32_t value) {
    std::vector<uint32_t> values;
    if (emulated()) k.publish_to_warp(value);
    for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
      values.push_back(emulated() ? k.published_by(k.b.u32(lane)) : shuffle(value, k.b.u32(lane)));
    }
    return values;
  }
  uint32_t all_equal(uint32_t value) {
    k.b.capability(spv::Capability::GroupNonUniformVote);
    return k.b.op(spv::Op::OpGroupNonUniformAllEqual, k.t_bool, {scope(), value});
  }
  uint32_t reduce(spv::Op op, uint32_t value) {
    k.b.capability(spv::Capability::GroupNonUniformArithmetic);
    return k.b.op(op, k.t_u32,
                  {scope(), static_cast<uint32_t>(spv::GroupOperation::Reduce), value});
  }
  uint32_t bit(uint32_t mask, uint32_t lane) {  // bool: lane (a constant) is in mask
    const uint32_t one = k.b.op(spv::Op::OpBitwiseAnd, k.t_u32, {mask, k.b.u32(1u << lane)});
    return k.b.op(spv::Op::OpINotEqual, k.t_bool, {one, k.b.u32(0)});
  }
};

uint32_t and32(Kernel& k, uint32_t x, uint32_t y) {
  return k.b.op(spv::Op::OpBitwiseAnd, k.t_u32, {x, y});
}

// The member mask of a .sync instruction (operand |index|), or the running lanes for the old
// forms without one.
uint32_t member_mask(Kernel& k, Subgroup& s, const ir::Instruction& ins, size_t index) {
  if (index >= ins.operands.size()) return s.running();
  return k.read(ins, ins.operands[index], T::kB32);
}

// For each lane, the lanes of |members| whose |value| (u32, or u64 as two words) equals its
// own: one shuffle per lane of the warp.
uint32_t same_value_lanes(Kernel& k, Subgroup& s, uint32_t members, uint32_t value, bool wide) {
  Builder& b = k.b;
  const uint32_t u = k.t_u32;
  uint32_t lo = value, hi = 0;
  if (wide) {
    lo = b.op(spv::Op::OpUConvert, u, {value});
    hi = b.op(spv::Op::OpUConvert, u,
              {b.op(spv::Op::OpShiftRightLogical, k.t_u64, {value, b.u32(32)})});
  }
  const std::vector<uint32_t> los = s.each_lane(lo);
  const std::vector<uint32_t> his = wide ? s.each_lane(hi) : std::vector<uint32_t>{};
  uint32_t same = b.u32(0);
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    uint32_t equal = b.op(spv::Op::OpIEqual, k.t_bool, {los[lane], lo});
    if (wide) {
      equal = b.op(spv::Op::OpLogicalAnd, k.t_bool,
                   {equal, b.op(spv::Op::OpIEqual, k.t_bool, {his[lane], hi})});
    }
    same = b.op(spv::Op::OpBitwiseOr, u, {same, k.select(u, equal, b.u32(1u << lane), b.u32(0))});
  }
  return and32(k, same, members);
}

}  // namespace

void Kernel::lower_shfl(const ir::Instruction& ins) {
  const bool sync = ins.mods.has(ir::Mod::kSync);
  if (ins.operands.size() != (sync ? 5u : 4u)) {
    invalid(ins, sync ? "shfl.sync takes d, a, b, c and a member mask" : "shfl takes d, a, b, c");
  }
  if (ins.types.size() != 1 || ir::type_size(ins.types[0]) != 4) invalid(ins, "shfl takes .b32");
  enum class Mode { kUp, kDown, kBfly, kIdx, kNone } mode = Mode::kNone;
  if (ins.mods.has(ir::Mod::kUp)) mode = Mode::kUp;
  if (ins.mods.has(ir::Mod::kDown)) mode = Mode::kDown;
  if (ins.mods.has(ir::Mod::kBfly)) mode = Mode::kBfly;
  if (ins.mods.has(ir::Mod::kIdx)) mode = Mode::kIdx;
  if (mode == Mode::kNone) invalid(ins, "shfl needs .up, .down, .bfly or .idx");
  const uint32_t u = t_u32;
  auto op = [&](spv::Op code, uint32_t x, uint32_t y) { return b.op(code, u, {x, y}); };
  const uint32_t a = read(ins, ins.operands[1], T::kB32);
  const uint32_t bval = and32(*this, read(ins, ins.operands[2], T::kB32), b.u32(31));
  const uint32_t c = read(ins, ins.operands[3], T::kB32);
  const uint32_t cval = and32(*this, c, b.u32(31));
  const uint32_t seg = and32(*this, op(spv::Op::OpShiftRightLogical, c, b.u32(8)), b.u32(31));
  const uint32_t not_seg = b.op(spv::Op::OpNot, u, {seg});
  const uint32_t lane = warp_special(ins, ir::Special::kLaneid);
  // The PTX ISA's rule: the source lane j, and whether it lies inside the lane's segment.
  const uint32_t max_lane =
      op(spv::Op::OpBitwiseOr, and32(*this, lane, seg), and32(*this, cval, not_seg));
  uint32_t j = 0, inside = 0;
  switch (mode) {
    case Mode::kUp:
      j = op(spv::Op::OpISub, lane, bval);  // as signed: below 0 is outside
      inside = b.op(spv::Op::OpSGreaterThanEqual, t_bool, {j, max_lane});
      break;
    case Mode::kDown:
      j = op(spv::Op::OpIAdd, lane, bval);
      inside = b.op(spv::Op::OpSLessThanEqual, t_bool, {j, max_lane});
      break;
    case Mode::kBfly:
      j = op(spv::Op::OpBitwiseXor, lane, bval);
      inside = b.op(spv::Op::OpSLessThanEqual, t_bool, {j, max_lane});
      break;
    default:
      j = op(spv::Op::OpBitwiseOr, and32(*this, lane, seg), and32(*this, bval, not_seg));
      inside = b.op(spv::Op::OpSLessThanEqual, t_bool, {j, max_lane});
      break;
  }
  // Outside the segment a lane keeps its own value.
  const uint32_t source = and32(*this, select(u, inside, j, lane), b.u32(31));
  Subgroup s{*this};
  const uint32_t value = s.shuffle(a, source);
  const ir::Operand& d = ins.operands[0];
  write(ins, d, T::kB32, value);
  if (d.kind == ir::OperandKind::kRegister && d.has_reg2) write_predicate(ins, d.reg2, inside);
}

void Kernel::lower_vote(const ir::Instruction& ins) {
  const bool sync = ins.mods.has(ir::Mod::kSync);
  if (ins.operands.size() != (sync ? 3u : 2u)) {
    invalid(ins, sync ? "vote.sync takes d, a predicate and a member mask"
                      : "vote takes d and a predicate");
  }
  Subgroup s{*this};
  const uint32_t members = and32(*this, member_mask(*this, s, ins, 2), s.running());
  const uint32_t set = and32(*this, s.ballot(read_predicate(ins, ins.operands[1])), members);
  if (ins.mods.has(ir::Mod::kBallot)) {
    if (ins.types.size() != 1 || ir::type_size(ins.types[0]) != 4) {
      invalid(ins, "vote.ballot takes .b32");
    }
    write(ins, ins.operands[0], T::kB32, set);
    return;
  }
  const uint32_t none = b.op(spv::Op::OpIEqual, t_bool, {set, b.u32(0)});
  const uint32_t every = b.op(spv::Op::OpIEqual, t_bool, {set, members});
  uint32_t result = 0;
  if (ins.mods.has(ir::Mod::kAll)) {
    result = every;
  } else if (ins.mods.has(ir::Mod::kAny)) {
    result = b.op(spv::Op::OpLogicalNot, t_bool, {none});
  } else if (ins.mods.has(ir::Mod::kUni)) {
    result = b.op(spv::Op::OpLogicalOr, t_bool, {none, every});
  } else {
    invalid(ins, "vote needs .all, .any, .uni or .ballot");
  }
  write(ins, ins.operands[0], T::kPred, result);
}

void Kernel::lower_match(const ir::Instruction& ins) {
  if (ins.operands.size() != 3 || ins.types.size() != 1) {
    invalid(ins, "match.sync takes one type, d, a and a member mask");
  }
  const uint32_t bytes = ir::type_size(ins.types[0]);
  if (bytes != 4 && bytes != 8) invalid(ins, "match takes .b32 or .b64");
  const bool all = ins.mods.has(ir::Mod::kAll);
  if (!all && !ins.mods.has(ir::Mod::kAny)) invalid(ins, "match needs .any or .all");
  Subgroup s{*this};
  const uint32_t members = and32(*this, member_mask(*this, s, ins, 2), s.running());
  const uint32_t value = read_bits(ins, ins.operands[1], bytes);
  const uint32_t same = same_value_lanes(*this, s, members, value, bytes == 8);
  const ir::Operand& d = ins.operands[0];
  if (!all) {
    write(ins, d, T::kB32, same);
    return;
  }
  const uint32_t equal = b.op(spv::Op::OpIEqual, t_bool, {same, members});
  write(ins, d, T::kB32, select(t_u32, equal, members, b.u32(0)));
  if (d.kind == ir::OperandKind::kRegister && d.has_reg2) write_predicate(ins, d.reg2, equal);
}

void Kernel::lower_redux(const ir::Instruction& ins) {
  if (ins.operands.size() != 3 || ins.types.size() != 1) {
    invalid(ins, "redux.sync takes one type, d, a and a member mask");
  }
  const T type = ins.types[0];
  if (ir::is_float(type)) {
    refuse(ins, "redux.sync on floats (sm_100a) is not supported, as on the CPU PTX device");
  }
  if (ir::type_size(type) != 4) invalid(ins, "redux.sync takes 32-bit integers");
  const bool is_signed = ir::is_signed(type);
  struct Kind {
    ir::Mod mod;
    spv::Op group;
    spv::Op scalar;  // OpNop for min and max, which combine by comparison
    uint32_t identity;
  };
  const Kind kinds[] = {
      {ir::Mod::kAdd, spv::Op::OpGroupNonUniformIAdd, spv::Op::OpIAdd, 0},
      {ir::Mod::kMin, is_signed ? spv::Op::OpGroupNonUniformSMin : spv::Op::OpGroupNonUniformUMin,
       spv::Op::OpNop, is_signed ? 0x7FFFFFFFu : 0xFFFFFFFFu},
      {ir::Mod::kMax, is_signed ? spv::Op::OpGroupNonUniformSMax : spv::Op::OpGroupNonUniformUMax,
       spv::Op::OpNop, is_signed ? 0x80000000u : 0u},
      {ir::Mod::kAnd, spv::Op::OpGroupNonUniformBitwiseAnd, spv::Op::OpBitwiseAnd, 0xFFFFFFFFu},
      {ir::Mod::kOr, spv::Op::OpGroupNonUniformBitwiseOr, spv::Op::OpBitwiseOr, 0},
      {ir::Mod::kXor, spv::Op::OpGroupNonUniformBitwiseXor, spv::Op::OpBitwiseXor, 0},
  };
  const Kind* kind = nullptr;
  for (const Kind& candidate : kinds) {
    if (ins.mods.has(candidate.mod)) kind = &candidate;
  }
  if (kind == nullptr) invalid(ins, "redux needs an operation such as .add");
  Subgroup s{*this};
  const uint32_t u = t_u32;
  const uint32_t members = and32(*this, member_mask(*this, s, ins, 2), s.running());
  const uint32_t a = read(ins, ins.operands[1], T::kB32);
  // Each lane gathers its members' values.
  auto gather = [&] {
    const std::vector<uint32_t> values = s.each_lane(a);
    uint32_t acc = b.u32(kind->identity);
    for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
      const uint32_t v = values[lane];
      uint32_t combined = 0;
      if (kind->scalar != spv::Op::OpNop) {
        combined = b.op(kind->scalar, u, {acc, v});
      } else {
        const bool min = kind->mod == ir::Mod::kMin;
        const spv::Op less = is_signed ? spv::Op::OpSLessThan : spv::Op::OpULessThan;
        const uint32_t v_wins =
            b.op(less, t_bool, min ? Builder::Words{v, acc} : Builder::Words{acc, v});
        combined = select(u, v_wins, v, acc);
      }
      acc = select(u, s.bit(members, lane), combined, acc);
    }
    return acc;
  };
  if (s.emulated()) {  // no branch: the exchange's barriers need the whole workgroup
    write(ins, ins.operands[0], T::kB32, gather());
    return;
  }
  const uint32_t result = b.local_variable(b.type_pointer(spv::StorageClass::Function, u));
  // Every running lane names the same members (a full warp, or the lanes of one branch): one
  // subgroup reduction of the members' values, the other lanes giving the identity.
  const uint32_t uniform = s.all_equal(members);
  if_then(uniform, [&] {
    const uint32_t lane = warp_special(ins, ir::Special::kLaneid);
    const uint32_t mine = b.op(spv::Op::OpShiftLeftLogical, u, {b.u32(1), lane});
    const uint32_t member =
        b.op(spv::Op::OpINotEqual, t_bool, {and32(*this, members, mine), b.u32(0)});
    const uint32_t value = select(u, member, a, b.u32(kind->identity));
    b.op_void(spv::Op::OpStore, {result, s.reduce(kind->group, value)});
  });
  // Lanes naming different members.
  if_then(b.op(spv::Op::OpLogicalNot, t_bool, {uniform}), [&] {
    b.op_void(spv::Op::OpStore, {result, gather()});
  });
  write(ins, ins.operands[0], T::kB32, b.op(spv::Op::OpLoad, u, {result}));
}

void Kernel::lower_elect(const ir::Instruction& ins) {
  if (ins.operands.size() != 2) invalid(ins, "elect.sync takes d|p and a member mask");
  const ir::Operand& out = ins.operands[0];
  if (out.kind != ir::OperandKind::kRegister) invalid(ins, "elect.sync needs a destination");
  Subgroup s{*this};
  const uint32_t u = t_u32;
  const uint32_t members = and32(*this, member_mask(*this, s, ins, 1), s.running());
  const uint32_t any = b.op(spv::Op::OpINotEqual, t_bool, {members, b.u32(0)});
  // The lowest member lane (FindILsb gives -1 for no lane: then 0, as on the CPU PTX device).
  const uint32_t leader = select(u, any, glsl(u, GLSLstd450FindILsb, {members}), b.u32(0));
  const uint32_t lane = warp_special(ins, ir::Special::kLaneid);
  const uint32_t elected =
      b.op(spv::Op::OpLogicalAnd, t_bool, {any, b.op(spv::Op::OpIEqual, t_bool, {lane, leader})});
  if (out.has_reg2) {
    write(ins, out, T::kB32, leader);
    write_predicate(ins, out.reg2, elected);
  } else {
    write_predicate(ins, out.reg, elected);
  }
}

void Kernel::check_warp(KernelInfo* info) {
  ir::Special special = ir::Special::kCount;
  const ir::Instruction* use = first_warp_use(function_, &special);
  if (use == nullptr) return;
  warp_ = true;
  if (!target_.warp32) {
    // The block's shape does not matter here: lanes come from the invocation index.
    warp_emulated_ = true;
    return;
  }
  if (function_.reqntid[0] % kWarpSize != 0) {
    refuse_kernel(function_.line,
                  ".reqntid " + std::to_string(function_.reqntid[0]) +
                      " in x: a warp-level kernel runs on Vulkan with whole 32-lane subgroups, "
                      "which need the block's x to be a multiple of 32");
  }
  info->warp_size = kWarpSize;
}

void Kernel::check_warps_run_together(const std::vector<CfgBlock>& cfg) {
  std::vector<BlockCode> code;
  for (const BlockRange& r : ranges_) code.push_back(BlockCode{r.begin, r.end, r.terminator});
  const Divergence divergence = find_divergence(function_, cfg, code);
  for (size_t block = 0; block < ranges_.size() && block < divergence.cause.size(); ++block) {
    const uint32_t cause = divergence.cause[block];
    if (cause == Divergence::kNone) continue;
    for (uint32_t i = ranges_[block].begin; i < ranges_[block].end; ++i) {
      const ir::Instruction& ins = function_.code[i];
      if (!is_warp_instruction(ins)) continue;
      const ir::Instruction* branch = ranges_[cause].terminator;
      refuse(ins, "the device has no 32-lane warps (" +
                      (target_.no_warp32.empty() ? std::string("none") : target_.no_warp32) +
                      "), so hal runs warps through workgroup memory, which needs every thread of "
                      "the block to reach each warp instruction together; this one is in code that "
                      "the branch at PTX line " +
                      std::to_string(branch != nullptr ? branch->line : 0) +
                      " may take differently in different threads");
    }
  }
}

void Kernel::declare_warp() {
  if (warp_emulated_) {
    declare_workgroup_warps();
    return;
  }
  b.capability(spv::Capability::GroupNonUniform);
  const uint32_t input = b.type_pointer(spv::StorageClass::Input, t_u32);
  auto builtin = [&](spv::BuiltIn which) {
    const uint32_t var = b.global_variable(input, spv::StorageClass::Input);
    b.decorate(var, spv::Decoration::BuiltIn, {static_cast<uint32_t>(which)});
    interface_.push_back(var);
    return b.op(spv::Op::OpLoad, t_u32, {var});
  };
  lane_ = builtin(spv::BuiltIn::SubgroupLocalInvocationId);
  warp_index_ = builtin(spv::BuiltIn::SubgroupId);
  // CUDA's numbering: thread x + y * ntid.x + z * ntid.x * ntid.y is lane (n % 32) of warp
  // (n / 32).
  const uint32_t n = b.op(spv::Op::OpIAdd, t_u32,
                          {b.op(spv::Op::OpIMul, t_u32, {warp_index_, b.u32(kWarpSize)}), lane_});
  const uint32_t row = b.op(spv::Op::OpUDiv, t_u32, {n, block_size_[0]});
  tid_[0] = b.op(spv::Op::OpUMod, t_u32, {n, block_size_[0]});
  tid_[1] = b.op(spv::Op::OpUMod, t_u32, {row, block_size_[1]});
  tid_[2] = b.op(spv::Op::OpUDiv, t_u32, {row, block_size_[1]});
}

uint32_t Kernel::workgroup_warp_words() const {
  uint32_t threads = 1;
  for (uint32_t d : function_.reqntid) threads *= std::max(d, 1u);
  return (threads + kWarpSize - 1) / kWarpSize * kWarpSize;
}

void Kernel::declare_workgroup_warps() {
  const uint32_t input = b.type_pointer(spv::StorageClass::Input, t_u32);
  const uint32_t index_var = b.global_variable(input, spv::StorageClass::Input);
  b.decorate(index_var, spv::Decoration::BuiltIn,
             {static_cast<uint32_t>(spv::BuiltIn::LocalInvocationIndex)});
  interface_.push_back(index_var);
  // LocalInvocationIndex is x + y * X + z * X * Y: CUDA's numbering of a block's threads.
  thread_index_ = b.op(spv::Op::OpLoad, t_u32, {index_var});
  lane_ = b.op(spv::Op::OpBitwiseAnd, t_u32, {thread_index_, b.u32(kWarpSize - 1)});
  warp_index_ = b.op(spv::Op::OpShiftRightLogical, t_u32, {thread_index_, b.u32(5)});
  const uint32_t v3 = b.type_vector(t_u32, 3);
  const uint32_t local_id = b.op(spv::Op::OpLoad, v3, {builtin_local_id_});
  for (uint32_t d = 0; d < 3; ++d) {
    tid_[d] = b.op(spv::Op::OpCompositeExtract, t_u32, {local_id, d});
  }
  // The lanes the thread's warp has: all 32 but in a last warp the block does not fill.
  const uint32_t threads =
      b.op(spv::Op::OpIMul, t_u32,
           {b.op(spv::Op::OpIMul, t_u32, {block_size_[0], block_size_[1]}), block_size_[2]});
  const uint32_t left =
      b.op(spv::Op::OpISub, t_u32,
           {threads, b.op(spv::Op::OpShiftLeftLogical, t_u32, {warp_index_, b.u32(5)})});
  const uint32_t full = b.op(spv::Op::OpUGreaterThanEqual, t_bool, {left, b.u32(kWarpSize)});
  const uint32_t partial =
      b.op(spv::Op::OpISub, t_u32,
           {b.op(spv::Op::OpShiftLeftLogical, t_u32,
                 {b.u32(1), b.op(spv::Op::OpBitwiseAnd, t_u32, {left, b.u32(kWarpSize - 1)})}),
            b.u32(1)});
  warp_lanes_ = select(t_u32, full, b.u32(0xFFFFFFFFu), partial);
  // The exchange array: two halves of one word per thread, the block rounded up to whole warps.
  // A fixed block gives its length; otherwise the launch's block does, through the
  // specialization constants.
  uint32_t half = 0, length = 0;
  if (function_.reqntid[0] != 0) {
    half = b.u32(workgroup_warp_words());
    length = b.u32(2 * workgroup_warp_words());
  } else {
    auto spec = [&](spv::Op op, uint32_t x, uint32_t y) {
      return b.spec_constant_op(t_u32, op, {x, y});
    };
    const uint32_t product = spec(
        spv::Op::OpIMul, spec(spv::Op::OpIMul, block_size_[0], block_size_[1]), block_size_[2]);
    half = spec(spv::Op::OpBitwiseAnd, spec(spv::Op::OpIAdd, product, b.u32(kWarpSize - 1)),
                b.u32(~(kWarpSize - 1)));
    length = spec(spv::Op::OpIMul, half, b.u32(2));
  }
  exchange_half_ = half;
  exchange_side_ = b.local_variable(b.type_pointer(spv::StorageClass::Function, t_u32), b.u32(0));
  const uint32_t array = b.type_array(t_u32, length, 4);
  warp_exchange_ = b.global_variable(b.type_pointer(spv::StorageClass::Workgroup, array),
                                     spv::StorageClass::Workgroup);
  b.name(warp_exchange_, "warp_exchange");
  interface_.push_back(warp_exchange_);
}

void Kernel::workgroup_barrier() {
  constexpr uint32_t workgroup = static_cast<uint32_t>(spv::Scope::Workgroup);
  const uint32_t semantics = static_cast<uint32_t>(spv::MemorySemanticsMask::AcquireRelease |
                                                   spv::MemorySemanticsMask::WorkgroupMemory);
  b.op_void(spv::Op::OpControlBarrier, {b.u32(workgroup), b.u32(workgroup), b.u32(semantics)});
}

void Kernel::publish_to_warp(uint32_t value) {
  // Exchanges alternate between the array's halves, so one barrier each suffices: the barrier
  // after a store makes the words visible, and the next store to the same half comes after
  // the next exchange's barrier, which every lane reaches only once it has read this one's
  // words. The side is the same in every thread: all of them run every exchange (the kernel
  // is refused otherwise).
  const uint32_t pointer = b.type_pointer(spv::StorageClass::Workgroup, t_u32);
  const uint32_t side = b.op(spv::Op::OpLoad, t_u32, {exchange_side_});
  published_base_ = b.op(spv::Op::OpIMul, t_u32, {side, exchange_half_});
  const uint32_t at = b.op(spv::Op::OpIAdd, t_u32, {published_base_, thread_index_});
  b.op_void(spv::Op::OpStore, {b.op(spv::Op::OpAccessChain, pointer, {warp_exchange_, at}), value});
  b.op_void(spv::Op::OpStore,
            {exchange_side_, b.op(spv::Op::OpBitwiseXor, t_u32, {side, b.u32(1)})});
  workgroup_barrier();
}

uint32_t Kernel::warp_exchange(uint32_t value) {
  if (!warp_emulated_) return value;
  publish_to_warp(value);
  return published_base_;
}

uint32_t Kernel::warp_exchanged(uint32_t handle, uint32_t lane) {
  if (!warp_emulated_) {
    b.capability(spv::Capability::GroupNonUniformShuffle);
    return b.op(spv::Op::OpGroupNonUniformShuffle, t_u32,
                {b.u32(static_cast<uint32_t>(spv::Scope::Subgroup)), handle, lane});
  }
  const uint32_t pointer = b.type_pointer(spv::StorageClass::Workgroup, t_u32);
  const uint32_t first =
      b.op(spv::Op::OpBitwiseAnd, t_u32, {thread_index_, b.u32(~(kWarpSize - 1))});
  const uint32_t at =
      b.op(spv::Op::OpIAdd, t_u32, {handle, b.op(spv::Op::OpIAdd, t_u32, {first, lane})});
  return b.op(spv::Op::OpLoad, t_u32,
              {b.op(spv::Op::OpAccessChain, pointer, {warp_exchange_, at})});
}

uint32_t Kernel::published_by(uint32_t lane) {
  return warp_exchanged(published_base_, lane);
}

uint32_t Kernel::warp_special(const ir::Instruction& ins, ir::Special which) {
  if (!warp_) refuse(ins, "internal error: a warp special register outside a warp kernel");
  auto eq = [&] { return b.op(spv::Op::OpShiftLeftLogical, t_u32, {b.u32(1), lane_}); };
  auto lt = [&] { return b.op(spv::Op::OpISub, t_u32, {eq(), b.u32(1)}); };
  auto le = [&] { return b.op(spv::Op::OpBitwiseOr, t_u32, {lt(), eq()}); };
  switch (which) {
    case ir::Special::kLaneid:
      return lane_;
    case ir::Special::kWarpid:
      return warp_index_;
    case ir::Special::kNwarpid:
      return b.u32(64);  // as the CPU PTX device: the warps of an sm_80 multiprocessor
    case ir::Special::kLanemaskEq:
      return eq();
    case ir::Special::kLanemaskLe:
      return le();
    case ir::Special::kLanemaskLt:
      return lt();
    case ir::Special::kLanemaskGe:
      return b.op(spv::Op::OpNot, t_u32, {lt()});
    case ir::Special::kLanemaskGt:
      return b.op(spv::Op::OpNot, t_u32, {le()});
    default:
      refuse(ins, std::string(ir::special_name(which)) + " is not a warp special register");
  }
}

bool Kernel::lower_warp(const ir::Instruction& ins) {
  if (!is_warp_instruction(ins)) return false;
  if (!warp_) refuse(ins, "internal error: a warp instruction outside a warp kernel");
  switch (ins.opcode) {
    case O::kMma:
      lower_mma(ins);
      return true;
    case O::kLdmatrix:
      lower_ldmatrix(ins);
      return true;
    case O::kStmatrix:
      lower_stmatrix(ins);
      return true;
    case O::kMovmatrix:
      lower_movmatrix(ins);
      return true;
    case O::kWmma:
      lower_wmma(ins);
      return true;
    case O::kShfl:
      lower_shfl(ins);
      return true;
    case O::kVote:
      lower_vote(ins);
      return true;
    case O::kMatch:
      lower_match(ins);
      return true;
    case O::kRedux:
      lower_redux(ins);
      return true;
    case O::kElect:
      lower_elect(ins);
      return true;
    case O::kActivemask: {
      if (ins.operands.size() != 1) invalid(ins, "activemask takes one destination");
      Subgroup s{*this};
      write(ins, ins.operands[0], T::kB32, s.running());
      return true;
    }
    case O::kBar:
    case O::kBarrier: {  // bar.warp.sync membermask: the warp's lanes meet, memory is ordered
      if (ins.operands.size() != 1) invalid(ins, "bar.warp.sync takes a member mask");
      if (warp_emulated_) {  // the warps run together with the workgroup
        workgroup_barrier();
        return true;
      }
      const uint32_t semantics = static_cast<uint32_t>(spv::MemorySemanticsMask::AcquireRelease |
                                                       spv::MemorySemanticsMask::WorkgroupMemory |
                                                       spv::MemorySemanticsMask::UniformMemory);
      b.op_void(spv::Op::OpControlBarrier,
                {b.u32(kScopeSubgroup), b.u32(kScopeSubgroup), b.u32(semantics)});
      return true;
    }
    default:  // wgmma, refused before it gets here (lower.cpp)
      refuse(ins,
             std::string("'") + ir::opcode_name(ins.opcode) + "' does not translate to Vulkan");
  }
}

}  // namespace hal::ptx_spirv
