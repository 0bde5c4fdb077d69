// Asynchronous copies from global to shared memory: cp.async.{ca,cg}.shared{::cta}.global with
// cp-size 4, 8 or 16 (.cg: 16 only), the optional src-size operand or ignore-src predicate, the
// optional .L2::cache_hint policy operand and .L2::64B/128B/256B prefetch sizes (hints, read
// and ignored), and the group operations cp.async.commit_group, cp.async.wait_group N and
// cp.async.wait_all.
//
// Each copy is performed completely when its cp.async executes, which makes commit_group and
// the waits no-ops. This is correct because PTX guarantees nothing about when an asynchronous
// copy happens between its issue and the wait that covers it: a thread may not read the
// destination, nor write the source or the destination, until a wait_group/wait_all covering
// the copy has completed (no other mechanism guarantees completion), and two unsynchronised
// cp.async operations are unordered. Completing each copy at issue is therefore one of the
// executions PTX permits, and every wait_group N is then satisfied at once (no group is ever
// pending). Other threads of the block see the data after their barrier, as they must.
//
// Checks: the shared destination must lie inside the block's shared memory and be aligned to
// cp-size, always (all cp-size bytes are written). The global source is read only for the
// bytes that are copied: src-size bytes (cp-size without the operand), and nothing when
// ignore-src is true. PTX describes src-size as the number of bytes copied from the source, so
// a source that supplies no bytes is not accessed at all; with src-size 0 (or ignore-src) its
// address is not checked. This is how compilers mask copies (Triton passes src-size 0 with an
// address that may lie outside the tensor). When bytes are read, the source must be inside
// global memory for those bytes and aligned to cp-size. The rest of the destination, from
// src-size to cp-size, is zero-filled. A src-size above cp-size is undefined behaviour in PTX;
// it faults here.
//
// Refused with a reason: the bulk forms (cp.async.bulk*, cp.reduce.async.bulk*: the tensor
// memory accelerator of sm_90), mbarrier-based completion (cp.async.mbarrier.arrive*), and any
// cp that is not cp.async.
#include "ptx_vm/decode.h"

#include <string>

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;

// Data beyond what fits in an Op: the source's displacement.
struct CopyInfo {
  int64_t src_disp = 0;
};

// Op layout: a[0] the destination base (kNoRef for an absolute shared address), a[1] the source
// base (kNoRef for an absolute global address), a[2] the src-size row (kNoRef: cp-size),
// a[3] the ignore-src predicate word (kNoRef: none). disp the destination's displacement, ext a
// CopyInfo. flags: bit 0 a 64-bit destination base, bit 1 a 64-bit source base, bit 2 the
// ignore-src predicate is negated.
template <uint32_t kSize>
void cp_async(Exec& x, const Op& op, uint32_t mask) {
  const auto* info = static_cast<const CopyInfo*>(op.ext);
  const uint32_t* src_size = op.a[2] != kNoRef ? x.row<uint32_t>(op.a[2]) : nullptr;
  uint32_t ignore = 0;
  if (op.a[3] != kNoRef) ignore = x.word(op.a[3]) ^ ((op.flags & 4) != 0 ? kFullMask : 0);
  for_lanes(mask, [&](uint32_t l) {
    if (x.faulted) return;
    const uint64_t dst = address_at(x, op.a[0], (op.flags & 1) != 0, op.disp, l);
    const uint64_t src = address_at(x, op.a[1], (op.flags & 2) != 0, info->src_disp, l);
    uint32_t n = kSize;
    if (src_size != nullptr) {
      n = src_size[l];
      if (n > kSize) {
        raise_fault(
            x, FaultKind::kIllegalInstruction, l,
            "cp.async src-size " + std::to_string(n) + " exceeds cp-size " + std::to_string(kSize));
        return;
      }
    }
    if (((ignore >> l) & 1) != 0) n = 0;
    uint8_t* to = shared_at(x, dst, kSize, kSize, Access::kWrite, l);
    if (to == nullptr) return;
    uint8_t data[kSize] = {};
    if (n != 0) {
      const uint8_t* from = global_at(x, src, n, kSize, Access::kRead, l);
      if (from == nullptr) return;
      load_global<kSize>(data, from, n);
    }
    std::memcpy(to, data, kSize);
  });
}

bool decode_copy(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (!ins.mods.has(M::kShared) || !ins.mods.has(M::kGlobal)) {
    return d.fail("cp.async copies from .global to .shared: both spaces must be named");
  }
  const bool cg = ins.mods.has(M::kCg);
  if (cg == ins.mods.has(M::kCa)) return d.fail("cp.async needs exactly one of .ca and .cg");
  if (!ins.types.empty() || ins.vector != 1) return d.fail("cp.async takes no type");
  const bool hint = ins.mods.has(M::kCacheHint);
  const auto& ops = ins.operands;
  const size_t plain = 3 + (hint ? 1 : 0);
  if (ops.size() != plain && ops.size() != plain + 1) {
    return d.fail(
        "expected [dst], [src], cp-size, an optional src-size or ignore-src predicate "
        "and, with .L2::cache_hint, a cache policy");
  }
  if (ops[2].kind != ir::OperandKind::kInteger) return d.fail("cp-size must be an integer");
  const int64_t size = ops[2].integer;
  if (size != 4 && size != 8 && size != 16) return d.fail("cp-size must be 4, 8 or 16");
  if (cg && size != 16) return d.fail("cp.async.cg copies 16 bytes only");

  Address dst;
  Address src;
  if (!d.address(ops[0], MemSpace::kShared, &dst)) return false;
  if (!d.address(ops[1], MemSpace::kGlobal, &src)) return false;
  if (dst.space != MemSpace::kShared || src.space != MemSpace::kGlobal) {
    return d.fail("cp.async copies from global to shared memory");
  }
  auto* info = d.kernel().make<CopyInfo>();
  info->src_disp = src.disp;
  op.ext = info;
  op.a[0] = dst.base;
  op.a[1] = src.base;
  op.disp = dst.disp;
  op.flags = static_cast<uint8_t>((dst.base_bytes == 8 ? 1 : 0) | (src.base_bytes == 8 ? 2 : 0));
  op.imm = static_cast<uint32_t>(size);

  if (ops.size() == plain + 1) {
    const ir::Operand& extra = ops[3];
    if (extra.kind == ir::OperandKind::kRegister && d.register_bytes(extra) == 0) {
      bool negate = false;
      op.a[3] = d.predicate(extra, &negate);
      if (op.a[3] == kNoRef) return false;
      if (negate) op.flags |= 4;
    } else {
      op.a[2] = d.source(extra, ir::Type::kU32);
      if (op.a[2] == kNoRef) return false;
      if (extra.kind == ir::OperandKind::kInteger && (extra.integer < 0 || extra.integer > size)) {
        return d.fail("src-size must not exceed cp-size");
      }
    }
  }
  if (hint && d.source(ops.back(), ir::Type::kB64) == kNoRef) return false;  // ignored
  switch (size) {
    case 4:
      op.fn = cp_async<4>;
      break;
    case 8:
      op.fn = cp_async<8>;
      break;
    default:
      op.fn = cp_async<16>;
      break;
  }
  return true;
}

// The modifiers each form may carry.
bool allowed_modifier(M m, bool copy) {
  switch (m) {
    case M::kAsync:
      return true;
    case M::kCa:
    case M::kCg:
    case M::kShared:
    case M::kGlobal:
    case M::kCacheHint:
    case M::kL2_64B:
    case M::kL2_128B:
    case M::kL2_256B:
      return copy;
    default:
      return false;
  }
}

}  // namespace

bool decode_async_copy(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.opcode != ir::Opcode::kCp) return d.fail("not a cp instruction");
  if (ins.mods.has(M::kBulk)) {
    return d.fail(
        "bulk asynchronous copies (cp.async.bulk*, cp.reduce.async.bulk*: the tensor "
        "memory accelerator of sm_90) are not supported on the CPU PTX device");
  }
  if (!ins.mods.has(M::kAsync)) return d.fail("only cp.async is supported");
  if (ins.mods.has(M::kArrive)) {
    return d.fail(
        "cp.async.mbarrier.arrive (mbarrier-based completion) is not supported on the "
        "CPU PTX device");
  }
  const int groups =
      ins.mods.has(M::kCommitGroup) + ins.mods.has(M::kWaitGroup) + ins.mods.has(M::kWaitAll);
  if (groups > 1) return d.fail("more than one of commit_group, wait_group and wait_all");
  const bool copy = groups == 0;
  for (uint32_t i = 0; i < static_cast<uint32_t>(M::kCount); ++i) {
    const M m = static_cast<M>(i);
    if (!ins.mods.has(m) || m == M::kCommitGroup || m == M::kWaitGroup || m == M::kWaitAll) {
      continue;
    }
    if (!allowed_modifier(m, copy)) {
      return d.fail(std::string("modifier '.") + ir::mod_name(m) + "' is not valid on " +
                    (copy ? "cp.async" : "this cp.async group instruction"));
    }
  }
  if (copy) return decode_copy(d, ins, op);
  // Groups: every copy completed when it was issued (see above), so there is nothing to wait
  // for and nothing to commit.
  if (!ins.types.empty()) return d.fail("takes no type");
  if (ins.mods.has(M::kWaitGroup)) {
    if (ins.operands.size() != 1 || ins.operands[0].kind != ir::OperandKind::kInteger ||
        ins.operands[0].integer < 0) {
      return d.fail("cp.async.wait_group takes a non-negative integer constant");
    }
  } else if (!ins.operands.empty()) {
    return d.fail("takes no operands");
  }
  op.kind = OpKind::kNop;
  op.fn = fence_handler(false);  // never called for a kNop
  return true;
}

}  // namespace hal::ptx_vm
