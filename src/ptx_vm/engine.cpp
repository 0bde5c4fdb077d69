// The SIMT engine: warps with reconvergence stacks, barriers and the block's warp scheduler.
#include "ptx_vm/engine.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace hal::ptx_vm {
namespace {

constexpr uint32_t kNever = 0xffff'ffffu;
// Instructions a warp runs before the next warp of its block gets a turn, when the kernel has
// barriers or may spin on shared memory.
constexpr uint64_t kSlice = 1u << 16;
constexpr uint64_t kUnlimited = ~uint64_t{0};

// Lanes in a mask, counted for every instruction: bit arithmetic, since without a popcnt target
// the builtin becomes a library call.
uint32_t popcount(uint32_t v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

std::string lanes_text(uint32_t mask) {
  std::string out;
  for (uint32_t lane = 0; lane < 32;) {
    if (((mask >> lane) & 1u) == 0) {
      ++lane;
      continue;
    }
    uint32_t end = lane;
    while (end + 1 < 32 && ((mask >> (end + 1)) & 1u) != 0) ++end;
    if (!out.empty()) out += ",";
    out += std::to_string(lane);
    if (end > lane) {
      out += '-';
      out += std::to_string(end);
    }
    lane = end + 1;
  }
  return out.empty() ? "none" : out;
}

}  // namespace

uint8_t* ScratchBuffer::reserve(size_t bytes) {
  if (bytes <= size_ && data_ != nullptr) return data_;
  const size_t want = std::max(bytes, size_ * 2);
  raw_ = std::make_unique<uint8_t[]>(want + 64);  // value-initialised: zeros
  data_ =
      reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw_.get()) + 63) & ~uintptr_t{63});
  size_ = want;
  return data_;
}

BlockRunner::BlockRunner() = default;
BlockRunner::~BlockRunner() = default;

void BlockRunner::prepare(const Kernel& kernel, const LaunchConfig& config, const uint32_t block[3],
                          uint32_t smid, uint32_t workers) {
  kernel_ = &kernel;
  const uint32_t threads = config.block[0] * config.block[1] * config.block[2];
  const uint32_t warps = (threads + kWarpSize - 1) / kWarpSize;

  x_ = Exec{};
  x_.kernel = &kernel;
  x_.consts = reinterpret_cast<const char*>(kernel.consts.data());
  x_.shared_bytes = kernel.dynamic_shared_offset + config.dynamic_shared_bytes;
  x_.dynamic_shared_bytes = config.dynamic_shared_bytes;
  x_.shared = shared_.reserve(std::max<size_t>(x_.shared_bytes, 64));
  x_.local_bytes = kernel.info.local_bytes;
  x_.local_stride = (kernel.info.local_bytes + 15) / 16 * 16;
  x_.local = local_.reserve(std::max<size_t>(size_t{x_.local_stride} * warps * kWarpSize, 64));
  x_.params = static_cast<const uint8_t*>(config.params);
  x_.param_bytes = kernel.info.param_bytes;
  x_.memory = config.memory;
  for (int i = 0; i < 3; ++i) {
    x_.ctaid[i] = block[i];
    x_.ntid[i] = config.block[i];
    x_.nctaid[i] = config.grid[i];
  }
  x_.smid = smid;

  uint8_t* frames = frames_.reserve(size_t{kernel.frame_bytes} * warps);
  warps_.resize(warps);
  const SpecialRows& s = kernel.specials;
  for (uint32_t w = 0; w < warps; ++w) {
    Warp& warp = warps_[w];
    warp.frame = reinterpret_cast<char*>(frames + size_t{kernel.frame_bytes} * w);
    warp.index = w;
    const uint32_t present = std::min(threads - w * kWarpSize, kWarpSize);
    warp.launched = present == 32 ? kFullMask : ((1u << present) - 1u);
    warp.exited = 0;
    warp.stack.clear();
    warp.stack.push_back(Entry{0, kNever, warp.launched});
    warp.state = Warp::kReady;

    char* f = warp.frame;
    const auto fill = [&](Ref ref, auto value_of) {
      if (ref == kNoRef) return;
      uint32_t* row = reinterpret_cast<uint32_t*>(f + ref);
      for (uint32_t lane = 0; lane < kWarpSize; ++lane) row[lane] = value_of(lane);
    };
    const uint32_t nx = config.block[0], ny = config.block[1];
    fill(s.tid[0], [&](uint32_t l) { return (w * kWarpSize + l) % nx; });
    fill(s.tid[1], [&](uint32_t l) { return (w * kWarpSize + l) / nx % ny; });
    fill(s.tid[2], [&](uint32_t l) { return (w * kWarpSize + l) / (nx * ny); });
    for (int i = 0; i < 3; ++i) {
      fill(s.ntid[i], [&](uint32_t) { return config.block[i]; });
      fill(s.ctaid[i], [&](uint32_t) { return block[i]; });
      fill(s.nctaid[i], [&](uint32_t) { return config.grid[i]; });
    }
    fill(s.laneid, [](uint32_t l) { return l; });
    fill(s.warpid, [&](uint32_t) { return w; });
    fill(s.nwarpid, [](uint32_t) { return 64u; });
    fill(s.lanemask[0], [](uint32_t l) { return 1u << l; });
    fill(s.lanemask[1], [](uint32_t l) { return l == 31 ? kFullMask : (2u << l) - 1u; });
    fill(s.lanemask[2], [](uint32_t l) { return (1u << l) - 1u; });
    fill(s.lanemask[3], [](uint32_t l) { return ~((1u << l) - 1u); });
    fill(s.lanemask[4], [](uint32_t l) { return l == 31 ? 0u : ~((2u << l) - 1u); });
    fill(s.smid, [&](uint32_t) { return smid; });
    fill(s.nsmid, [&](uint32_t) { return workers; });
    fill(s.gridid, [](uint32_t) { return 0u; });
    fill(s.dynamic_smem, [&](uint32_t) { return config.dynamic_shared_bytes; });
    fill(s.total_smem, [&](uint32_t) { return x_.shared_bytes; });
    fill(s.zero32, [](uint32_t) { return 0u; });
  }
  for (Barrier& b : barriers_) b = Barrier{};
}

bool BlockRunner::run(const Kernel& kernel, const LaunchConfig& config, const uint32_t block[3],
                      uint32_t smid, uint32_t workers, Fault* fault, uint64_t* lanes,
                      uint64_t* instructions) {
  prepare(kernel, config, block, smid, workers);
  x_.fault = fault;
  lanes_ = 0;
  instructions_ = 0;
  bool ok = true;
  if (!kernel.uses_barriers) {
    // No barrier: warps only interact through memory. Run each to its end, but in slices, so
    // that a warp spinning on a flag another warp sets still lets that warp run.
    bool pending = true;
    while (ok && pending) {
      pending = false;
      for (Warp& warp : warps_) {
        if (warp.state == Warp::kDone) continue;
        if (!run_warp(warp, warps_.size() == 1 ? kUnlimited : kSlice)) {
          ok = false;
          break;
        }
        pending = pending || warp.state != Warp::kDone;
      }
    }
  } else {
    while (ok) {
      bool ran = false;
      for (Warp& warp : warps_) {
        if (warp.state != Warp::kReady) continue;
        ran = true;
        if (!run_warp(warp, kSlice)) {
          ok = false;
          break;
        }
      }
      if (!ok) break;
      const bool released = release_barriers();
      if (!ran && !released) {
        if (std::all_of(warps_.begin(), warps_.end(),
                        [](const Warp& w) { return w.state == Warp::kDone; })) {
          break;
        }
        report_deadlock();
        ok = false;
      }
    }
  }
  *lanes += lanes_;
  *instructions += instructions_;
  return ok && !x_.faulted;
}

bool BlockRunner::run_warp(Warp& w, uint64_t budget) {
  const Op* const code = kernel_->code.data();
  const uint32_t end = static_cast<uint32_t>(kernel_->code.size());
  x_.frame = w.frame;
  x_.warp = w.index;
  uint64_t executed = 0;
  uint64_t lanes = 0;
  bool ok = true;

  while (!w.stack.empty()) {
    Entry& top = w.stack.back();
    uint32_t mask = top.mask & ~w.exited;
    uint32_t pc = top.pc;
    if (mask == 0 || pc == top.reconverge || pc >= end) {
      if (pc >= end) w.exited |= mask;
      w.stack.pop_back();
      continue;
    }
    const uint32_t reconverge = top.reconverge;
    bool reread = false;
    while (!reread) {
      if (pc == reconverge) {
        w.stack.pop_back();
        break;
      }
      if (executed >= budget) {
        top.pc = pc;
        instructions_ += executed;
        lanes_ += lanes;
        return true;  // a slice is over: the warp stays ready
      }
      const Op& op = code[pc];
      uint32_t eff = mask;
      if (op.guard != kNoGuard) {
        uint32_t g = x_.word(op.guard & ~kGuardNegate);
        if ((op.guard & kGuardNegate) != 0) g = ~g;
        eff &= g;
      }
      ++executed;
      switch (op.kind) {
        case OpKind::kCompute:
          if (eff != 0) {
            x_.pc = pc;
            x_.active = mask;
            x_.live = w.launched & ~w.exited;
            op.fn(x_, op, eff);
            lanes += popcount(eff);
            if (x_.faulted) {
              ok = false;
              reread = true;
              w.stack.clear();
              break;
            }
          }
          ++pc;
          break;
        case OpKind::kNop:
          ++pc;
          break;
        case OpKind::kBranch: {
          lanes += popcount(mask);
          const uint32_t fall = mask & ~eff;
          if (fall == 0) {
            pc = op.target;
            break;
          }
          if (eff == 0) {
            ++pc;
            break;
          }
          // Divergence: the warp runs the taken lanes, then the others, and rejoins at the
          // reconvergence point. When the entry running already rejoins there (a loop that
          // keeps splitting), its paths replace it instead of nesting deeper.
          const uint32_t rejoin = op.imm;
          if (reconverge == rejoin) {
            w.stack.pop_back();
          } else {
            top.pc = rejoin;
          }
          if (pc + 1 != rejoin) w.stack.push_back(Entry{pc + 1, rejoin, fall});
          if (op.target != rejoin) w.stack.push_back(Entry{op.target, rejoin, eff});
          reread = true;
          break;
        }
        case OpKind::kExit:
          lanes += popcount(eff);
          w.exited |= eff;
          mask &= ~eff;
          if (mask == 0) {
            w.stack.pop_back();
            reread = true;
          } else {
            ++pc;
          }
          break;
        case OpKind::kBarrier:
          lanes += popcount(eff);
          top.pc = pc + 1;
          if (!arrive(w, op, mask, pc)) {
            ok = false;
            w.stack.clear();
            reread = true;
            break;
          }
          if (w.state == Warp::kWaiting) {
            instructions_ += executed;
            lanes_ += lanes;
            return true;
          }
          ++pc;
          break;
        case OpKind::kTrap:
          if (eff == 0) {
            ++pc;
            break;
          }
          x_.pc = pc;
          raise_fault(x_, FaultKind::kTrap, static_cast<uint32_t>(__builtin_ctz(eff)),
                      "trap instruction executed");
          ok = false;
          w.stack.clear();
          reread = true;
          break;
        case OpKind::kAssert:
          if (eff == 0) {
            ++pc;
            break;
          }
          x_.pc = pc;
          report_assert(op, eff);
          ok = false;
          w.stack.clear();
          reread = true;
          break;
      }
    }
  }
  instructions_ += executed;
  lanes_ += lanes;
  if (ok) w.state = Warp::kDone;
  return ok;
}

bool BlockRunner::arrive(Warp& w, const Op& op, uint32_t mask, uint32_t pc) {
  const auto& info = *static_cast<const BarrierInfo*>(op.ext);
  const uint32_t live = w.launched & ~w.exited;
  x_.pc = pc;
  if (mask != live && info.aligned) {
    raise_fault(x_, FaultKind::kBarrier, static_cast<uint32_t>(__builtin_ctz(mask)),
                "barrier divergence: lanes " + lanes_text(mask) + " of warp " +
                    std::to_string(w.index) + " reached the barrier while lanes " +
                    lanes_text(live & ~mask) +
                    " of the same warp had not (a bar.sync or __syncthreads() inside a branch "
                    "that not every thread of the warp takes)");
    return false;
  }
  if (mask != live) {
    raise_fault(x_, FaultKind::kBarrier, static_cast<uint32_t>(__builtin_ctz(mask)),
                "barrier.sync reached by lanes " + lanes_text(mask) + " of warp " +
                    std::to_string(w.index) + " while lanes " + lanes_text(live & ~mask) +
                    " were on another path: the CPU PTX device runs a warp's paths one after "
                    "the other and cannot let a warp wait at a barrier in a divergent branch");
    return false;
  }
  const uint32_t id = x_.word(info.id) & 0xffffu;
  if (id >= 16) {
    raise_fault(x_, FaultKind::kBarrier, static_cast<uint32_t>(__builtin_ctz(mask)),
                "barrier number " + std::to_string(id) + " is out of range (0 to 15)");
    return false;
  }
  Barrier& b = barriers_[id];
  if (b.arrived == 0) {
    b.info = &info;
    b.expected = 0;
    b.popc = 0;
    b.all = true;
    b.any = false;
    if (info.count != kNoRef) {
      const uint32_t count = x_.word(info.count);
      if (count == 0 || count % kWarpSize != 0) {
        raise_fault(x_, FaultKind::kBarrier, static_cast<uint32_t>(__builtin_ctz(mask)),
                    "barrier thread count " + std::to_string(count) +
                        " is not a positive multiple of the warp size");
        return false;
      }
      b.expected = count / kWarpSize;
    }
  }
  ++b.arrived;
  if (info.mode >= BarrierInfo::kRedPopc) {
    uint32_t p = x_.word(info.pred);
    if (info.pred_negate) p = ~p;
    p &= live;
    b.popc += popcount(p);
    b.all = b.all && p == live;
    b.any = b.any || p != 0;
  }
  if (info.mode == BarrierInfo::kArrive) return true;
  w.state = Warp::kWaiting;
  w.barrier = id;
  w.barrier_pc = pc;
  return true;
}

bool BlockRunner::release_barriers() {
  bool released = false;
  uint32_t live_warps = 0;
  for (const Warp& w : warps_) live_warps += w.state != Warp::kDone ? 1 : 0;
  for (uint32_t id = 0; id < 16; ++id) {
    Barrier& b = barriers_[id];
    if (b.arrived == 0) continue;
    const uint32_t expected = b.expected != 0 ? b.expected : live_warps;
    if (b.arrived < expected) continue;
    for (Warp& w : warps_) {
      if (w.state != Warp::kWaiting || w.barrier != id) continue;
      w.state = Warp::kReady;
      const BarrierInfo& info = *b.info;
      if (info.mode >= BarrierInfo::kRedPopc && info.dst != kNoRef) {
        const uint32_t live = w.launched & ~w.exited;
        if (info.mode == BarrierInfo::kRedPopc) {
          uint32_t* row = reinterpret_cast<uint32_t*>(w.frame + info.dst);
          for_lanes(live, [&](uint32_t l) { row[l] = b.popc; });
        } else {
          const bool value = info.mode == BarrierInfo::kRedAnd ? b.all : b.any;
          uint32_t& word = *reinterpret_cast<uint32_t*>(w.frame + info.dst);
          word = (word & ~live) | (value ? live : 0u);
        }
      }
    }
    b = Barrier{};
    released = true;
  }
  return released;
}

void BlockRunner::report_deadlock() {
  std::string waiting;
  uint32_t first = 0;
  for (const Warp& w : warps_) {
    if (w.state != Warp::kWaiting) continue;
    if (waiting.empty()) first = w.barrier_pc;
    if (!waiting.empty()) waiting += "; ";
    waiting += "warp " + std::to_string(w.index) + " at barrier " + std::to_string(w.barrier) +
               " (line " + std::to_string(kernel_->source[w.barrier_pc].line) + ")";
  }
  uint32_t done = 0;
  for (const Warp& w : warps_) done += w.state == Warp::kDone ? 1 : 0;
  x_.pc = first;
  x_.warp = 0;
  raise_fault(x_, FaultKind::kBarrier, 0,
              "barrier deadlock: no warp can continue (" + waiting + "; " + std::to_string(done) +
                  " of " + std::to_string(warps_.size()) +
                  " warps have exited): the barriers' thread counts or numbers do not match");
}

void BlockRunner::report_assert(const Op& op, uint32_t mask) {
  const auto& info = *static_cast<const AssertInfo*>(op.ext);
  const uint32_t lane = static_cast<uint32_t>(__builtin_ctz(mask));
  // The arguments were stored in the thread's local memory by the call's st.param.
  const auto argument = [&](Ref offset) -> uint64_t {
    if (offset == kNoRef || uint64_t{offset} + 8 > x_.local_bytes) return 0;
    uint64_t value = 0;
    std::memcpy(&value, x_.local + (x_.warp * kWarpSize + lane) * x_.local_stride + offset, 8);
    return value;
  };
  const auto text = [&](uint64_t address) -> std::string {
    std::string out;
    Range hit;
    for (uint32_t i = 0; i < 512; ++i) {
      if (x_.memory == nullptr || !x_.memory->find(address + i, 1, &hit)) break;
      const char c = *reinterpret_cast<const char*>(address + i);
      if (c == '\0') break;
      out += c;
    }
    return out.empty() ? "?" : out;
  };
  const std::string message = text(argument(info.message));
  const std::string file = text(argument(info.file));
  const std::string function = text(argument(info.function));
  const uint32_t line = static_cast<uint32_t>(argument(info.line));
  raise_fault(x_, FaultKind::kAssert, lane,
              "device-side assertion `" + message + "` failed in " + function + " at " + file +
                  ":" + std::to_string(line));
}

}  // namespace hal::ptx_vm
