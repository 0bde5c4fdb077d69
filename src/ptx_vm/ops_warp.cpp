// Warp-wide instructions: shfl(.sync), vote(.sync), match.sync, redux.sync, activemask,
// elect.sync and bar.warp.sync. They see the real lanes of the warp.
//
// The .sync forms name the lanes that take part (membermask). A warp here runs its divergent
// paths one after the other, so a member lane that has not exited must be on the path running
// the instruction; otherwise the instruction would wait for a lane that only arrives later, and
// the kernel is stopped with FaultKind::kIllegalInstruction naming the lanes, instead of
// producing values a GPU would not.
#include <algorithm>
#include <cstdio>
#include <string>

#include "ptx_vm/decode.h"

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;
using O = ir::Opcode;

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

// Calls f(members, lanes) once for each distinct member mask the running lanes (|mask|) give:
// |lanes| are the running lanes that gave it, |members| the mask as given. Lanes may give
// different masks in one convergent instruction: two 16-lane tiles of a warp each name their
// own half.
template <typename F>
void for_member_groups(const Exec& x, Ref member_ref, uint32_t mask, F&& f) {
  const uint32_t* members = x.row<uint32_t>(member_ref);
  if ((member_ref & kConstBit) != 0) {  // an immediate (the usual 0xffffffff): one group
    f(members[0], mask);
    return;
  }
  uint32_t left = mask;
  while (left != 0) {
    const uint32_t m = members[__builtin_ctz(left)];
    uint32_t lanes = 0;
    for_lanes(left, [&](uint32_t l) {
      if (members[l] == m) lanes |= 1u << l;
    });
    left &= ~lanes;
    f(m, lanes);
  }
}

// Every running lane's member mask, checked against the running lanes: a lane of a mask that
// has not exited must be running this instruction. Returns false after raising a fault.
bool check_members(Exec& x, Ref member_ref, uint32_t mask, const char* what) {
  bool ok = true;
  for_member_groups(x, member_ref, mask, [&](uint32_t m, uint32_t lanes) {
    const uint32_t missing = m & x.live & ~mask;
    if (!ok || missing == 0) return;
    raise_fault(x, FaultKind::kIllegalInstruction, static_cast<uint32_t>(__builtin_ctz(lanes)),
                std::string(what) + " with member mask " + hex(m) + ": lanes " + hex(missing) +
                    " of the mask have not exited and are not running it (the warp has diverged "
                    "and they are on another path)");
    ok = false;
  });
  return ok;
}

// shfl: a[0] d, a[1] a, a[2] b, a[3] c, a[4] membermask (kNoRef for the old non-.sync form),
// a[5] p (kNoRef without it); imm: mode 0 up, 1 down, 2 bfly, 3 idx.
void shfl(Exec& x, const Op& op, uint32_t mask) {
  if (op.a[4] != kNoRef && !check_members(x, op.a[4], mask, "shfl.sync")) return;
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  const uint32_t* b = x.row<uint32_t>(op.a[2]);
  const uint32_t* c = x.row<uint32_t>(op.a[3]);
  uint32_t source[kWarpSize];
  for (uint32_t l = 0; l < kWarpSize; ++l) source[l] = a[l];  // before d is written (d may be a)
  uint32_t valid = 0;
  for_lanes(mask, [&](uint32_t lane) {
    const uint32_t bval = b[lane] & 31u;
    const uint32_t cval = c[lane] & 31u;
    const uint32_t seg = (c[lane] >> 8) & 31u;
    const uint32_t max_lane = (lane & seg) | (cval & ~seg);
    const uint32_t min_lane = lane & seg;
    int32_t j = 0;
    bool in = false;
    switch (op.imm) {
      // clang-format off
      case 0: j = int32_t(lane) - int32_t(bval); in = j >= int32_t(max_lane); break;
      case 1: j = int32_t(lane + bval); in = j <= int32_t(max_lane); break;
      case 2: j = int32_t(lane ^ bval); in = j <= int32_t(max_lane); break;
      default: j = int32_t(min_lane | (bval & ~seg)); in = j <= int32_t(max_lane); break;
        // clang-format on
    }
    if (!in) j = int32_t(lane);
    d[lane] = source[j & 31];
    if (in) valid |= 1u << lane;
  });
  if (op.a[5] != kNoRef) write_pred(x, op.a[5], valid, mask);
}

// vote: a[0] d (predicate word, or a b32 row for ballot), a[1] the predicate, a[2] membermask
// (kNoRef for the old form); imm 0 all, 1 any, 2 uni, 3 ballot; flags 1: negate the input.
void vote(Exec& x, const Op& op, uint32_t mask) {
  if (op.a[2] != kNoRef && !check_members(x, op.a[2], mask, "vote.sync")) return;
  uint32_t p = x.word(op.a[1]);
  if (op.flags != 0) p = ~p;
  auto group = [&](uint32_t members, uint32_t lanes) {
    const uint32_t set = p & members;
    if (op.imm == 3) {
      uint32_t* d = x.row<uint32_t>(op.a[0]);
      for_lanes(lanes, [&](uint32_t l) { d[l] = set; });
      return;
    }
    bool r = false;
    switch (op.imm) {
      // clang-format off
      case 0: r = set == members; break;
      case 1: r = set != 0; break;
      default: r = set == 0 || set == members; break;
        // clang-format on
    }
    write_pred(x, op.a[0], r ? kFullMask : 0u, lanes);
  };
  if (op.a[2] == kNoRef) {
    group(mask, mask);
  } else {
    for_member_groups(x, op.a[2], mask,
                      [&](uint32_t m, uint32_t lanes) { group(m & mask, lanes); });
  }
}

// match: a[0] d, a[1] a, a[2] membermask, a[3] p (kNoRef); imm 0 any, 1 all; flags: value bytes.
template <typename T>
void match(Exec& x, const Op& op, uint32_t mask) {
  if (!check_members(x, op.a[2], mask, "match.sync")) return;
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const T* a = x.row<T>(op.a[1]);
  uint32_t all_bits = 0;  // the lanes whose group's values are all equal
  for_member_groups(x, op.a[2], mask, [&](uint32_t m, uint32_t lanes) {
    const uint32_t members = m & mask;
    if (op.imm == 0) {
      for_lanes(lanes, [&](uint32_t l) {
        uint32_t same = 0;
        for_lanes(members, [&](uint32_t k) {
          if (a[k] == a[l]) same |= 1u << k;
        });
        d[l] = same;
      });
      return;
    }
    bool all = true;
    const T first = a[__builtin_ctz(members != 0 ? members : lanes)];
    for_lanes(members, [&](uint32_t k) { all = all && a[k] == first; });
    for_lanes(lanes, [&](uint32_t l) { d[l] = all ? members : 0u; });
    if (all) all_bits |= lanes;
  });
  if (op.imm != 0 && op.a[3] != kNoRef) write_pred(x, op.a[3], all_bits, mask);
}

// redux.sync.op: a[0] d, a[1] a, a[2] membermask; imm 0 add, 1 min, 2 max, 3 and, 4 or, 5 xor;
// flags 1: signed.
void redux(Exec& x, const Op& op, uint32_t mask) {
  if (!check_members(x, op.a[2], mask, "redux.sync")) return;
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t* a = x.row<uint32_t>(op.a[1]);
  const bool is_signed = op.flags != 0;
  for_member_groups(x, op.a[2], mask, [&](uint32_t m, uint32_t lanes) {
    uint32_t acc = 0;
    bool first = true;
    for_lanes(m & mask, [&](uint32_t k) {
      const uint32_t v = a[k];
      if (first) {
        acc = v;
        first = false;
        return;
      }
      switch (op.imm) {
        // clang-format off
        case 0: acc += v; break;
        case 1: acc = is_signed ? uint32_t(std::min(int32_t(acc), int32_t(v))) : std::min(acc, v); break;
        case 2: acc = is_signed ? uint32_t(std::max(int32_t(acc), int32_t(v))) : std::max(acc, v); break;
        case 3: acc &= v; break;
        case 4: acc |= v; break;
        default: acc ^= v; break;
          // clang-format on
      }
    });
    for_lanes(lanes, [&](uint32_t l) { d[l] = acc; });
  });
}

void activemask(Exec& x, const Op& op, uint32_t mask) {
  uint32_t* d = x.row<uint32_t>(op.a[0]);
  const uint32_t active = x.active;
  for_lanes(mask, [&](uint32_t l) { d[l] = active; });
}

// elect.sync d|p, membermask: the lowest member lane is elected.
void elect(Exec& x, const Op& op, uint32_t mask) {
  if (!check_members(x, op.a[2], mask, "elect.sync")) return;
  uint32_t elected = 0;
  for_member_groups(x, op.a[2], mask, [&](uint32_t m, uint32_t lanes) {
    const uint32_t members = m & mask;
    const uint32_t leader = members != 0 ? static_cast<uint32_t>(__builtin_ctz(members)) : 0;
    if (op.a[0] != kNoRef) {
      uint32_t* d = x.row<uint32_t>(op.a[0]);
      for_lanes(lanes, [&](uint32_t l) { d[l] = leader; });
    }
    if (members != 0) elected |= 1u << leader;
  });
  if (op.a[1] != kNoRef) write_pred(x, op.a[1], elected, mask);
}

void warp_sync(Exec& x, const Op& op, uint32_t mask) {
  check_members(x, op.a[0], mask, "bar.warp.sync");
}

// The second register of "d|p".
Ref second(DecodeContext& d, const ir::Operand& operand) {
  ir::Operand p = operand;
  p.reg = operand.reg2;
  p.has_reg2 = false;
  return d.predicate(p);
}

bool decode_shfl(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  const bool sync = ins.mods.has(M::kSync);
  if (ins.operands.size() != (sync ? 5u : 4u)) {
    return d.fail(sync ? "shfl.sync takes d, a, b, c and a member mask" : "shfl takes d, a, b, c");
  }
  if (ins.types.size() != 1 || ir::type_size(ins.types[0]) != 4) return d.fail("shfl takes .b32");
  static constexpr M kModes[] = {M::kUp, M::kDown, M::kBfly, M::kIdx};
  op.imm = 4;
  for (uint32_t i = 0; i < 4; ++i) {
    if (ins.mods.has(kModes[i])) op.imm = i;
  }
  if (op.imm == 4) return d.fail("shfl needs .up, .down, .bfly or .idx");
  op.a[0] = d.destination(ins.operands[0], ir::Type::kB32);
  if (op.a[0] == kNoRef) return false;
  if (ins.operands[0].has_reg2) {
    op.a[5] = second(d, ins.operands[0]);
    if (op.a[5] == kNoRef) return false;
  }
  op.a[1] = d.source(ins.operands[1], ir::Type::kB32);
  op.a[2] = d.source(ins.operands[2], ir::Type::kB32);
  op.a[3] = d.source(ins.operands[3], ir::Type::kB32);
  if (op.a[1] == kNoRef || op.a[2] == kNoRef || op.a[3] == kNoRef) return false;
  if (sync) {
    op.a[4] = d.source(ins.operands[4], ir::Type::kB32);
    if (op.a[4] == kNoRef) return false;
  }
  op.fn = shfl;
  return true;
}

bool decode_vote(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  const bool sync = ins.mods.has(M::kSync);
  if (ins.operands.size() != (sync ? 3u : 2u)) return d.fail("wrong number of operands");
  if (ins.mods.has(M::kAll)) {
    op.imm = 0;
  } else if (ins.mods.has(M::kAny)) {
    op.imm = 1;
  } else if (ins.mods.has(M::kUni)) {
    op.imm = 2;
  } else if (ins.mods.has(M::kBallot)) {
    op.imm = 3;
  } else {
    return d.fail("vote needs .all, .any, .uni or .ballot");
  }
  // clang-format off
  op.a[0] = op.imm == 3 ? d.destination(ins.operands[0], ir::Type::kB32)
                        : d.predicate(ins.operands[0]);
  // clang-format on
  bool negate = false;
  op.a[1] = d.predicate(ins.operands[1], &negate);
  if (op.a[0] == kNoRef || op.a[1] == kNoRef) return false;
  op.flags = negate ? 1 : 0;
  if (sync) {
    op.a[2] = d.source(ins.operands[2], ir::Type::kB32);
    if (op.a[2] == kNoRef) return false;
  }
  op.fn = vote;
  return true;
}

bool decode_match(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.operands.size() != 3 || ins.types.size() != 1) {
    return d.fail("match.sync takes one type, d, a and a member mask");
  }
  const ir::Type t = ins.types[0];
  if (ir::type_size(t) != 4 && ir::type_size(t) != 8) return d.fail("match takes .b32 or .b64");
  op.imm = ins.mods.has(M::kAll) ? 1 : 0;
  if (!ins.mods.has(M::kAll) && !ins.mods.has(M::kAny)) return d.fail("match needs .any or .all");
  op.a[0] = d.destination(ins.operands[0], ir::Type::kB32);
  if (op.a[0] == kNoRef) return false;
  if (ins.operands[0].has_reg2) {
    op.a[3] = second(d, ins.operands[0]);
    if (op.a[3] == kNoRef) return false;
  }
  op.a[1] = d.source(ins.operands[1], t);
  op.a[2] = d.source(ins.operands[2], ir::Type::kB32);
  if (op.a[1] == kNoRef || op.a[2] == kNoRef) return false;
  op.fn = ir::type_size(t) == 8 ? match<uint64_t> : match<uint32_t>;
  return true;
}

bool decode_redux(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.operands.size() != 3 || ins.types.size() != 1) {
    return d.fail("redux.sync takes one type, d, a and a member mask");
  }
  const ir::Type t = ins.types[0];
  if (ir::type_size(t) != 4 || ir::is_float(t)) {
    return d.fail("redux.sync on the CPU PTX device takes 32-bit integers");
  }
  static constexpr M kOps[] = {M::kAdd, M::kMin, M::kMax, M::kAnd, M::kOr, M::kXor};
  op.imm = 6;
  for (uint32_t i = 0; i < 6; ++i) {
    if (ins.mods.has(kOps[i])) op.imm = i;
  }
  if (op.imm == 6) return d.fail("redux needs an operation such as .add");
  op.flags = ir::is_signed(t) ? 1 : 0;
  op.a[0] = d.destination(ins.operands[0], t);
  op.a[1] = d.source(ins.operands[1], t);
  op.a[2] = d.source(ins.operands[2], ir::Type::kB32);
  if (op.a[0] == kNoRef || op.a[1] == kNoRef || op.a[2] == kNoRef) return false;
  op.fn = redux;
  return true;
}

bool decode_elect(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.operands.size() != 2) return d.fail("elect.sync takes d|p and a member mask");
  const ir::Operand& out = ins.operands[0];
  if (out.kind == ir::OperandKind::kRegister && out.has_reg2) {
    op.a[0] = d.destination(out, ir::Type::kB32);
    op.a[1] = second(d, out);
  } else if (out.kind == ir::OperandKind::kSink) {
    return d.fail("elect.sync needs a destination");
  } else {
    op.a[1] = d.predicate(out);
  }
  op.a[2] = d.source(ins.operands[1], ir::Type::kB32);
  if (op.a[1] == kNoRef || op.a[2] == kNoRef) return false;
  op.fn = elect;
  return true;
}

}  // namespace

bool decode_warp(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  switch (ins.opcode) {
    // clang-format off
    case O::kShfl: return decode_shfl(d, ins, op);
    case O::kVote: return decode_vote(d, ins, op);
    case O::kMatch: return decode_match(d, ins, op);
    case O::kRedux: return decode_redux(d, ins, op);
    case O::kElect: return decode_elect(d, ins, op);
    // clang-format on
    case O::kActivemask:
      if (ins.operands.size() != 1) return d.fail("activemask takes one destination");
      op.a[0] = d.destination(ins.operands[0], ir::Type::kB32);
      if (op.a[0] == kNoRef) return false;
      op.fn = activemask;
      return true;
    case O::kBar:
    case O::kBarrier:  // bar.warp.sync membermask
      if (ins.operands.size() != 1) return d.fail("bar.warp.sync takes a member mask");
      op.a[0] = d.source(ins.operands[0], ir::Type::kB32);
      if (op.a[0] == kNoRef) return false;
      op.fn = warp_sync;
      return true;
    default:
      return d.fail("not a warp instruction");
  }
}

}  // namespace hal::ptx_vm
