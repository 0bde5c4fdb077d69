// Warp-wide instructions (ops_warp.cpp): shfl.sync in every mode with the c operand's clamp and
// segment mask and the optional predicate, vote.sync, match.sync, redux.sync, activemask,
// elect.sync, partial warps, diverged lanes, lanes giving different member masks, and the fault
// for a member mask naming lanes that are not running the instruction.
#include <gtest/gtest.h>

#include <array>
#include <functional>

#include "op_test_util.h"

namespace ptx_vm_test {
namespace {

std::string warp_module(const std::string& body, const std::string& decls = "", uint32_t sm = 80) {
  return ".version 8.0\n.target sm_" + std::to_string(sm) +
         "\n.address_size 64\n\n"
         ".visible .entry k(.param .u64 p_in, .param .u64 p_out)\n{\n"
         "  .reg .pred %p<8>;\n  .reg .b32 %r<24>;\n  .reg .b64 %rd<8>;\n" +
         decls +
         "  ld.param.u64 %rd0, [p_in];\n  ld.param.u64 %rd1, [p_out];\n"
         "  mov.u32 %r0, %tid.x;\n  mul.wide.u32 %rd2, %r0, 16;\n"
         "  add.s64 %rd3, %rd0, %rd2;\n  add.s64 %rd4, %rd1, %rd2;\n"
         "  ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd3];\n" +
         body + "  ret;\n}\n";
}

// Runs a one-block kernel whose threads read four u32 inputs (in[t]) and write four u32 results
// (out[t]); returns the results. |fault| receives the run's fault.
struct WarpRun {
  std::vector<std::array<uint32_t, 4>> out;
  Fault fault;
};
WarpRun run_warp(const std::string& ptx, const std::vector<std::array<uint32_t, 4>>& in,
                 uint32_t block, uint32_t sm = 80) {
  WarpRun result;
  result.out.assign(block, {0xdeadbeef, 0xdeadbeef, 0xdeadbeef, 0xdeadbeef});
  OpVm vm;
  if (!vm.load(ptx, sm)) return result;
  std::vector<std::array<uint32_t, 4>> input = in;
  input.resize(block, {0, 0, 0, 0});
  vm.add_memory(input.data(), input.size() * 16);
  vm.add_memory(result.out.data(), result.out.size() * 16);
  result.fault = vm.run("k", 1, block,
                        Params()
                            .add(reinterpret_cast<uint64_t>(input.data()))
                            .add(reinterpret_cast<uint64_t>(result.out.data())));
  return result;
}

// The shfl source lane and predicate per the ISA.
void shfl_ref(int mode, uint32_t lane, uint32_t b, uint32_t c, uint32_t* j, bool* p) {
  const uint32_t bval = b & 31, cval = c & 31, seg = (c >> 8) & 31;
  const int32_t max_lane = static_cast<int32_t>((lane & seg) | (cval & ~seg));
  const int32_t min_lane = static_cast<int32_t>(lane & seg);
  int32_t jj = 0;
  switch (mode) {
    case 0:
      jj = static_cast<int32_t>(lane) - static_cast<int32_t>(bval);
      *p = jj >= max_lane;
      break;
    case 1:
      jj = static_cast<int32_t>(lane + bval);
      *p = jj <= max_lane;
      break;
    case 2:
      jj = static_cast<int32_t>(lane ^ bval);
      *p = jj <= max_lane;
      break;
    default:
      jj = min_lane | static_cast<int32_t>(bval & ~seg);
      *p = jj <= max_lane;
      break;
  }
  if (!*p) jj = static_cast<int32_t>(lane);
  *j = static_cast<uint32_t>(jj);
}

const char* const kShflModes[] = {"up", "down", "bfly", "idx"};

TEST(PtxVmWarp, ShflEveryModeWithClampAndSegments) {
  // b and c per lane from the input; a = 1000 + thread.
  const std::string ptx = warp_module(
      "  add.u32 %r5, %r0, 1000;\n"
      "  shfl.sync.up.b32 %r6|%p1, %r5, %r1, %r2, 0xffffffff;\n"
      "  shfl.sync.down.b32 %r7|%p2, %r5, %r1, %r2, 0xffffffff;\n"
      "  shfl.sync.bfly.b32 %r8|%p3, %r5, %r1, %r2, 0xffffffff;\n"
      "  shfl.sync.idx.b32 %r9|%p4, %r5, %r1, %r2, 0xffffffff;\n"
      "  selp.u32 %r10, 0x10000, 0, %p1;\n  selp.u32 %r11, 0x10000, 0, %p2;\n"
      "  selp.u32 %r12, 0x10000, 0, %p3;\n  selp.u32 %r13, 0x10000, 0, %p4;\n"
      "  or.b32 %r6, %r6, %r10;\n  or.b32 %r7, %r7, %r11;\n"
      "  or.b32 %r8, %r8, %r12;\n  or.b32 %r9, %r9, %r13;\n"
      "  st.global.v4.u32 [%rd4], {%r6, %r7, %r8, %r9};\n");
  Rng rng(1);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::array<uint32_t, 4>> in(64);
    const uint32_t width = 1u << (round % 6);  // 1..32
    for (uint32_t t = 0; t < 64; ++t) {
      uint32_t b = 0, c = 0;
      switch (round % 4) {
        case 0:  // the common forms: a shared offset, c as CUDA writes it for the width
          b = 1u << (round / 4 % 5);
          c = ((32 - width) << 8) | 0x1f;
          break;
        case 1:  // up with its c, per-lane offsets
          b = rng.next32() % 40;
          c = (32 - width) << 8;
          break;
        case 2:  // arbitrary per-lane b and c
          b = rng.next32();
          c = rng.next32();
          break;
        default:  // idx from a lane outside the segment
          b = rng.next32() % 32;
          c = ((32 - width) << 8) | (rng.next32() % 32);
          break;
      }
      in[t] = {b, c, 0, 0};
    }
    const WarpRun r = run_warp(ptx, in, 64);
    EXPECT_RAN(r.fault);
    for (uint32_t t = 0; t < 64; ++t) {
      for (int m = 0; m < 4; ++m) {
        uint32_t j = 0;
        bool p = false;
        shfl_ref(m, t % 32, in[t][0], in[t][1], &j, &p);
        const uint32_t want = (1000 + (t / 32) * 32 + j) | (p ? 0x10000 : 0);
        ASSERT_EQ(r.out[t][m], want) << "shfl." << kShflModes[m] << " thread " << t << " b "
                                     << hex(in[t][0]) << " c " << hex(in[t][1]);
      }
    }
  }
}

// A partial warp: lanes past the block do not exist, so a full member mask is fine and the
// predicate still follows the ISA; values from missing lanes are not checked (undefined).
TEST(PtxVmWarp, ShflInAPartialWarpAndWithImmediates) {
  const std::string ptx = warp_module(
      "  add.u32 %r5, %r0, 500;\n"
      "  shfl.sync.down.b32 %r6|%p1, %r5, 1, 0x1f, 0xffffffff;\n"
      "  shfl.sync.bfly.b32 %r7, %r5, 2, 0x1f, 0xffffffff;\n"
      "  shfl.sync.idx.b32 %r8, %r5, 3, 0x101f, 0xffffffff;\n"
      "  selp.u32 %r9, 1, 0, %p1;\n"
      "  st.global.v4.u32 [%rd4], {%r6, %r7, %r8, %r9};\n");
  const uint32_t block = 45;  // the second warp has lanes 0..12
  const WarpRun r = run_warp(ptx, {}, block);
  EXPECT_RAN(r.fault);
  for (uint32_t t = 0; t < block; ++t) {
    const uint32_t lane = t % 32, base = t - lane, n = t < 32 ? 32 : block - 32;
    uint32_t j;
    bool p;
    shfl_ref(1, lane, 1, 0x1f, &j, &p);
    if (j < n) {
      EXPECT_EQ(r.out[t][0], 500 + base + j) << t;
    }
    EXPECT_EQ(r.out[t][3], p ? 1u : 0u) << t;
    shfl_ref(2, lane, 2, 0x1f, &j, &p);
    if (j < n) {
      EXPECT_EQ(r.out[t][1], 500 + base + j) << t;
    }
    shfl_ref(3, lane, 3, 0x101f, &j, &p);
    if (j < n) {
      EXPECT_EQ(r.out[t][2], 500 + base + j) << t;
    }
  }
}

// A butterfly reduction writing the shuffled register in place, and the old forms without .sync.
TEST(PtxVmWarp, InPlaceButterflyAndTheOldForms) {
  const std::string ptx = warp_module(
      "  mov.u32 %r5, %r0;\n"
      "  shfl.sync.bfly.b32 %r6, %r5, 16, 0x1f, 0xffffffff;\n  add.u32 %r5, %r5, %r6;\n"
      "  shfl.sync.bfly.b32 %r6, %r5, 8, 0x1f, 0xffffffff;\n  add.u32 %r5, %r5, %r6;\n"
      "  shfl.sync.bfly.b32 %r6, %r5, 4, 0x1f, 0xffffffff;\n  add.u32 %r5, %r5, %r6;\n"
      "  shfl.sync.bfly.b32 %r6, %r5, 2, 0x1f, 0xffffffff;\n  add.u32 %r5, %r5, %r6;\n"
      "  shfl.sync.bfly.b32 %r6, %r5, 1, 0x1f, 0xffffffff;\n  add.u32 %r5, %r5, %r6;\n"
      "  mov.u32 %r7, %r0;\n  shfl.sync.down.b32 %r7, %r7, 3, 0x1f, 0xffffffff;\n"
      "  shfl.idx.b32 %r8, %r0, 5, 0x1f;\n"
      "  setp.lt.u32 %p1, %r0, 10;\n  vote.ballot.b32 %r9, %p1;\n"
      "  st.global.v4.u32 [%rd4], {%r5, %r7, %r8, %r9};\n",
      "", 60);
  const WarpRun r = run_warp(ptx, {}, 32, 60);
  EXPECT_RAN(r.fault);
  for (uint32_t t = 0; t < 32; ++t) {
    EXPECT_EQ(r.out[t][0], 31u * 32 / 2) << t;
    EXPECT_EQ(r.out[t][1], t + 3 <= 31 ? t + 3 : t) << t;
    EXPECT_EQ(r.out[t][2], 5u) << t;
    EXPECT_EQ(r.out[t][3], 0x3ffu) << t;
  }
}

// Lanes whose guard is false do not take part: a member mask of exactly the guarded lanes runs,
// and their destinations keep their values.
TEST(PtxVmWarp, ShflUnderAGuard) {
  const std::string ptx = warp_module(
      "  setp.ne.u32 %p1, %r1, 0;\n"
      "  vote.sync.ballot.b32 %r9, %p1, 0xffffffff;\n"
      "  mov.u32 %r6, 77;\n  add.u32 %r5, %r0, 300;\n"
      "  @%p1 shfl.sync.idx.b32 %r6, %r5, %r2, 0x1f, %r9;\n"
      "  st.global.v4.u32 [%rd4], {%r6, %r9, %r0, %r0};\n");
  std::vector<std::array<uint32_t, 4>> in(32);
  for (uint32_t t = 0; t < 32; ++t) in[t] = {t % 3 != 0 ? 1u : 0u, (t * 7 + 1) % 32, 0, 0};
  uint32_t members = 0;
  for (uint32_t t = 0; t < 32; ++t) members |= in[t][0] ? 1u << t : 0u;
  // Sources must be members (values of guarded-off lanes are undefined).
  for (uint32_t t = 0; t < 32; ++t) {
    while (!((members >> in[t][1]) & 1)) in[t][1] = (in[t][1] + 1) % 32;
  }
  const WarpRun r = run_warp(ptx, in, 32);
  EXPECT_RAN(r.fault);
  for (uint32_t t = 0; t < 32; ++t) {
    EXPECT_EQ(r.out[t][1], members);
    EXPECT_EQ(r.out[t][0], in[t][0] ? 300 + in[t][1] : 77u) << t;
  }
}

TEST(PtxVmWarp, VoteEveryModeOnDivergedLanes) {
  // Lanes with in[0] != 0 take the branch and vote among themselves (member mask in in[1]).
  const std::string ptx = warp_module(
      "  mov.u32 %r5, 0;\n  mov.u32 %r6, 0;\n  mov.u32 %r7, 0;\n  mov.u32 %r8, 0;\n"
      "  setp.eq.u32 %p1, %r1, 0;\n  @%p1 bra SKIP;\n"
      "  setp.ne.u32 %p2, %r3, 0;\n"
      "  vote.sync.all.pred %p3, %p2, %r2;\n  vote.sync.any.pred %p4, !%p2, %r2;\n"
      "  vote.sync.uni.pred %p5, %p2, %r2;\n  vote.sync.ballot.b32 %r8, %p2, %r2;\n"
      "  selp.u32 %r5, 1, 0, %p3;\n  selp.u32 %r6, 1, 0, %p4;\n  selp.u32 %r7, 1, 0, %p5;\n"
      "SKIP:\n"
      "  st.global.v4.u32 [%rd4], {%r5, %r6, %r7, %r8};\n");
  Rng rng(4);
  for (int round = 0; round < 30; ++round) {
    const uint32_t running = round % 3 == 0 ? 0xffffffffu : rng.next32() | 1;
    const uint32_t preds = round % 5 == 0 ? running : (round % 5 == 1 ? 0 : rng.next32());
    std::vector<std::array<uint32_t, 4>> in(32);
    for (uint32_t t = 0; t < 32; ++t) {
      in[t] = {(running >> t) & 1, running, (preds >> t) & 1, 0};
    }
    const WarpRun r = run_warp(ptx, in, 32);
    EXPECT_RAN(r.fault);
    const uint32_t set = preds & running;
    for (uint32_t t = 0; t < 32; ++t) {
      if (!((running >> t) & 1)) continue;
      EXPECT_EQ(r.out[t][0], set == running ? 1u : 0u) << "all, round " << round;
      EXPECT_EQ(r.out[t][1], (~preds & running) != 0 ? 1u : 0u) << "any of !p, round " << round;
      EXPECT_EQ(r.out[t][2], set == 0 || set == running ? 1u : 0u) << "uni, round " << round;
      EXPECT_EQ(r.out[t][3], set) << "ballot, round " << round;
    }
  }
}

TEST(PtxVmWarp, MatchAnyAndAll) {
  // The b64 form with a partial member mask must be executed by just those lanes; run it in a
  // branch.
  const std::string split = warp_module(
      "  match.any.sync.b32 %r5, %r1, 0xffffffff;\n"
      "  match.all.sync.b32 %r6|%p1, %r2, 0xffffffff;\n"
      "  selp.u32 %r7, 1, 0, %p1;\n  mov.u32 %r8, 0;\n"
      "  setp.ge.u32 %p2, %r0, 16;\n  @%p2 bra DONE;\n"
      "  mov.b64 %rd5, {%r1, %r3};\n  match.any.sync.b64 %r8, %rd5, 0x0000ffff;\n"
      "DONE:\n"
      "  st.global.v4.u32 [%rd4], {%r5, %r6, %r7, %r8};\n");
  for (int round = 0; round < 4; ++round) {
    std::vector<std::array<uint32_t, 4>> in(32);
    for (uint32_t t = 0; t < 32; ++t) {
      in[t] = {t % (round + 2), round % 2 == 0 ? 5u : t, t / (2 << round), 0};
    }
    const WarpRun r = run_warp(split, in, 32);
    EXPECT_RAN(r.fault);
    bool all_same = true;
    for (uint32_t t = 0; t < 32; ++t) all_same = all_same && in[t][1] == in[0][1];
    for (uint32_t t = 0; t < 32; ++t) {
      uint32_t same = 0, same64 = 0;
      for (uint32_t k = 0; k < 32; ++k) {
        if (in[k][0] == in[t][0]) same |= 1u << k;
        if (k < 16 && in[k][0] == in[t][0] && in[k][2] == in[t][2]) same64 |= 1u << k;
      }
      EXPECT_EQ(r.out[t][0], same) << "match.any round " << round << " thread " << t;
      EXPECT_EQ(r.out[t][1], all_same ? 0xffffffffu : 0u) << "match.all round " << round;
      EXPECT_EQ(r.out[t][2], all_same ? 1u : 0u) << "match.all p round " << round;
      if (t < 16) {
        EXPECT_EQ(r.out[t][3], same64) << "match.any.b64 round " << round << " " << t;
      }
    }
  }
}

TEST(PtxVmWarp, ReduxEveryOperation) {
  const std::string ops[] = {"add.u32", "min.u32", "max.u32", "add.s32", "min.s32",
                             "max.s32", "and.b32", "or.b32",  "xor.b32"};
  std::string body =
      "  setp.eq.u32 %p1, %r2, 0;\n  @%p1 bra SKIP;\n";  // lanes with in[1] != 0 take part
  std::string store;
  for (int i = 0; i < 9; ++i) {
    body += "  redux.sync." + ops[i] + " %r" + std::to_string(10 + i) + ", %r1, %r3;\n";
  }
  body +=
      "  st.global.v4.u32 [%rd4], {%r10, %r11, %r12, %r13};\n"
      "  add.s64 %rd5, %rd4, 2048;\n  st.global.v4.u32 [%rd5], {%r14, %r15, %r16, %r17};\n"
      "  add.s64 %rd5, %rd4, 4096;\n  st.global.u32 [%rd5], %r18;\n"
      "SKIP:\n";
  const std::string ptx = warp_module(body);
  Rng rng(6);
  for (int round = 0; round < 20; ++round) {
    const uint32_t members = round % 4 == 0 ? 0xffffffffu : (rng.next32() | 0x80);
    std::vector<std::array<uint32_t, 4>> in(32 * 20);  // room for the three result rows
    for (uint32_t t = 0; t < 32; ++t) {
      uint32_t v = rng.next32();
      if (round % 3 == 1) v = v % 7 - 3;  // small signed values
      in[t] = {v, (members >> t) & 1, members, 0};
    }
    OpVm vm;
    ASSERT_TRUE(vm.load(ptx, 80));
    std::vector<std::array<uint32_t, 4>> out(32 * 20, {0, 0, 0, 0});
    vm.add_memory(in.data(), in.size() * 16);
    vm.add_memory(out.data(), out.size() * 16);
    EXPECT_RAN(vm.run("k", 1, 32,
                      Params()
                          .add(reinterpret_cast<uint64_t>(in.data()))
                          .add(reinterpret_cast<uint64_t>(out.data()))));
    uint64_t sum = 0;
    uint32_t umin = ~0u, umax = 0, band = ~0u, bor = 0, bxor = 0;
    int32_t smin = INT32_MAX, smax = INT32_MIN;
    for (uint32_t t = 0; t < 32; ++t) {
      if (!((members >> t) & 1)) continue;
      const uint32_t v = in[t][0];
      sum += v;
      umin = std::min(umin, v);
      umax = std::max(umax, v);
      smin = std::min(smin, static_cast<int32_t>(v));
      smax = std::max(smax, static_cast<int32_t>(v));
      band &= v;
      bor |= v;
      bxor ^= v;
    }
    const uint32_t want[9] = {static_cast<uint32_t>(sum),
                              umin,
                              umax,
                              static_cast<uint32_t>(sum),
                              static_cast<uint32_t>(smin),
                              static_cast<uint32_t>(smax),
                              band,
                              bor,
                              bxor};
    for (uint32_t t = 0; t < 32; ++t) {
      if (!((members >> t) & 1)) continue;
      for (int i = 0; i < 9; ++i) {
        const uint32_t got = i < 4 ? out[t][i] : i < 8 ? out[128 + t][i - 4] : out[256 + t][0];
        EXPECT_EQ(got, want[i]) << "redux.sync." << ops[i] << " round " << round << " lane " << t;
      }
    }
  }
}

TEST(PtxVmWarp, ActivemaskAndElect) {
  const std::string ptx = warp_module(
      "  mov.u32 %r5, 0;\n  mov.u32 %r6, 99;\n  mov.u32 %r7, 0;\n"
      "  setp.eq.u32 %p1, %r1, 0;\n  @%p1 bra SKIP;\n"
      "  activemask.b32 %r5;\n"
      "  elect.sync %r6|%p2, %r5;\n  selp.u32 %r7, 1, 0, %p2;\n"
      "SKIP:\n"
      "  st.global.v4.u32 [%rd4], {%r5, %r6, %r7, %r0};\n",
      "", 90);
  const uint32_t running = 0x0ff0f0f0;
  std::vector<std::array<uint32_t, 4>> in(40);
  for (uint32_t t = 0; t < 40; ++t) in[t] = {t < 32 ? (running >> t) & 1 : 1u, 0, 0, 0};
  const WarpRun r = run_warp(ptx, in, 40, 90);
  EXPECT_RAN(r.fault);
  for (uint32_t t = 0; t < 32; ++t) {
    if (!((running >> t) & 1)) continue;
    EXPECT_EQ(r.out[t][0], running) << t;
    EXPECT_EQ(r.out[t][1], 4u) << t;  // the lowest lane of the mask
    EXPECT_EQ(r.out[t][2], t == 4 ? 1u : 0u) << t;
  }
  for (uint32_t t = 32; t < 40; ++t) {
    EXPECT_EQ(r.out[t][0], 0xffu) << t;  // a warp of 8 lanes
    EXPECT_EQ(r.out[t][1], 0u) << t;
  }
}

// Lanes of one convergent instruction may give different member masks: a warp split into
// tiles (cooperative groups' tiled_partition) names each tile's lanes. Each lane's result is
// over its own mask: here lanes 0-11 name 0x00000fff, lanes 12-31 0xfffff000.
TEST(PtxVmWarp, EachLaneIsAnsweredOverItsOwnMemberMask) {
  const std::string ptx = warp_module(
      "  setp.ne.u32 %p1, %r2, 0;\n"
      "  redux.sync.add.u32 %r5, %r1, %r3;\n"
      "  vote.sync.ballot.b32 %r6, %p1, %r3;\n"
      "  vote.sync.all.pred %p2, %p1, %r3;\n"
      "  selp.u32 %r7, 1, 0, %p2;\n"
      "  match.any.sync.b32 %r8, %r2, %r3;\n"
      "  elect.sync %r9|%p3, %r3;\n"
      "  selp.u32 %r10, 1, 0, %p3;\n"
      "  shl.b32 %r10, %r10, 8;\n  or.b32 %r9, %r9, %r10;\n"
      "  shl.b32 %r7, %r7, 16;\n  or.b32 %r9, %r9, %r7;\n"
      "  st.global.v4.u32 [%rd4], {%r5, %r6, %r8, %r9};\n",
      "", 90);
  std::vector<std::array<uint32_t, 4>> in(32);
  for (uint32_t t = 0; t < 32; ++t) {
    // in[1] (the predicate and match value): 1 on every lane of the low group, mixed above.
    in[t] = {t * 3 + 1, t < 12 ? 1u : t % 3 == 0 ? 1u : 0u, t < 12 ? 0x00000fffu : 0xfffff000u, 0};
  }
  const WarpRun r = run_warp(ptx, in, 32, 90);
  EXPECT_RAN(r.fault);
  for (uint32_t t = 0; t < 32; ++t) {
    const uint32_t members = in[t][2];
    uint32_t sum = 0, ballot = 0, same = 0;
    for (uint32_t k = 0; k < 32; ++k) {
      if (!((members >> k) & 1)) continue;
      sum += in[k][0];
      if (in[k][1] != 0) ballot |= 1u << k;
      if (in[k][1] == in[t][1]) same |= 1u << k;
    }
    const uint32_t leader = t < 12 ? 0u : 12u;
    const uint32_t all = ballot == members ? 1u : 0u;
    EXPECT_EQ(r.out[t][0], sum) << "redux, lane " << t;
    EXPECT_EQ(r.out[t][1], ballot) << "ballot, lane " << t;
    EXPECT_EQ(r.out[t][2], same) << "match.any, lane " << t;
    EXPECT_EQ(r.out[t][3], leader | (t == leader ? 1u << 8 : 0u) | all << 16)
        << "elect and vote.all, lane " << t;
  }
}

// A member mask naming lanes that are on another path is refused, not answered wrongly.
TEST(PtxVmWarp, MemberMaskOfLanesOnAnotherPathFaults) {
  for (const char* ins :
       {"shfl.sync.bfly.b32 %r5, %r1, 1, 0x1f, 0xffffffff;",
        "vote.sync.ballot.b32 %r5, %p1, 0xffffffff;", "match.any.sync.b32 %r5, %r1, 0xffffffff;",
        "redux.sync.add.u32 %r5, %r1, 0xffffffff;"}) {
    const std::string ptx = warp_module(
        std::string("  mov.u32 %r5, 0;\n  setp.lt.u32 %p1, %r0, 16;\n  @%p1 bra SKIP;\n  ") + ins +
        "\nSKIP:\n  st.global.v4.u32 [%rd4], {%r5, %r5, %r5, %r5};\n");
    const WarpRun r = run_warp(ptx, {}, 32);
    EXPECT_EQ(r.fault.kind, FaultKind::kIllegalInstruction) << ins;
    EXPECT_NE(r.fault.message.find("0x0000ffff"), std::string::npos) << r.fault.message;
  }
  // Lanes that have exited do not count.
  const std::string ptx = warp_module(
      "  setp.lt.u32 %p1, %r0, 16;\n  @%p1 ret;\n"
      "  shfl.sync.bfly.b32 %r5, %r0, 1, 0x1f, 0xffffffff;\n"
      "  st.global.v4.u32 [%rd4], {%r5, %r5, %r5, %r5};\n");
  const WarpRun r = run_warp(ptx, {}, 32);
  EXPECT_RAN(r.fault);
  for (uint32_t t = 16; t < 32; ++t) EXPECT_EQ(r.out[t][0], t ^ 1) << t;
}

}  // namespace
}  // namespace ptx_vm_test
