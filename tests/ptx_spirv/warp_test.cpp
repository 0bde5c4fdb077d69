// Warp-level PTX, run two ways: each case is a small kernel in which every thread reads three
// words (%a, %b, %c), runs warp instructions and writes two words (%d, %e). It runs through the
// translator on the first Vulkan device and on the CPU PTX device (the reference), on the same
// inputs, and every result must be the same bits. The cases cover each instruction with full
// and partial member masks, lanes that give different masks (tiles), divergent branches and
// loops, blocks of several shapes (CUDA numbers a block's threads into warps by x, then y,
// then z), and the special registers.
//
// A device with 32-lane subgroups runs every case on them. A device without them runs warps
// through workgroup memory: every case whose warp instructions all run with the whole block
// together must give the same bits, and each case with a warp instruction in code whose path
// depends on the thread must be refused, saying why. HAL_TEST_WARPS says which the test's
// environment gives on lavapipe, so a run that silently took the other way fails: "run", or
// "workgroup:WORDS", where a refusal must say WORDS. lavapipe's subgroups are 8 lanes wide by
// default; with LP_NATIVE_VECTOR_WIDTH=1024 it reports 32 but runs 16, which hal measures.
//
// Without both devices the test skips, naming the missing one.
#include <gtest/gtest.h>
#include <hal/hal.h>

#include "two_devices.h"

#include <cstdint>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kBlocks = 4;

struct Block {
  uint32_t x, y, z;
  uint32_t threads() const { return x * y * z; }
};

// The kernel around one case's body: %a, %b, %c in, %d, %e out; %lane, %warp and %gid are set,
// with scratch registers of each kind.
std::string kernel(const std::string& body, const std::string& directives = "") {
  std::ostringstream ptx;
  ptx << ".version 8.0\n.target sm_80\n.address_size 64\n"
      << ".visible .entry k(.param .u64 in, .param .u64 out)" << directives << "\n{\n"
      << "  .reg .pred %p<8>;\n  .reg .b32 %a, %b, %c, %d, %e, %lane, %warp, %gid, %t<12>;\n"
      << "  .reg .b64 %rd<8>;\n  .shared .align 4 .b32 s[1024];\n"
      << "  mov.u32 %lane, %laneid;\n  mov.u32 %warp, %warpid;\n"
      // gid = ctaid.x * threads + warp * 32 + lane: one row of the buffers per thread.
      << "  mov.u32 %t0, %ntid.x;\n  mov.u32 %t1, %ntid.y;\n  mov.u32 %t2, %ntid.z;\n"
      << "  mul.lo.u32 %t0, %t0, %t1;\n  mul.lo.u32 %t0, %t0, %t2;\n  mov.u32 %t1, %ctaid.x;\n"
      << "  mad.lo.u32 %gid, %t1, %t0, %lane;\n  shl.b32 %t1, %warp, 5;\n"
      << "  add.u32 %gid, %gid, %t1;\n"
      << "  ld.param.u64 %rd1, [in];\n  mul.wide.u32 %rd2, %gid, 12;\n  add.s64 %rd3, %rd1, %rd2;\n"
      << "  ld.global.u32 %a, [%rd3];\n  ld.global.u32 %b, [%rd3+4];\n"
      << "  ld.global.u32 %c, [%rd3+8];\n  mov.u32 %d, 0;\n  mov.u32 %e, 0;\n"
      << body << "\n"
      << "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd2, %gid, 8;\n  add.s64 %rd3, %rd1, %rd2;\n"
      << "  st.global.u32 [%rd3], %d;\n  st.global.u32 [%rd3+4], %e;\n  ret;\n}\n";
  return ptx.str();
}

std::vector<uint32_t> inputs(uint32_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> words(3 * count);
  for (uint32_t& w : words) w = static_cast<uint32_t>(rng());
  return words;
}

// "run", "workgroup:WORDS", or "" when the test may see either.
std::string expected_warps(hal_device device) {
  hal_device_info info{};
  info.struct_size = sizeof info;
  if (hal_device_get_info(device, &info) != HAL_SUCCESS) return "";
  const char* v = std::getenv("HAL_TEST_WARPS");
  const bool lavapipe = std::string(info.name).find("llvmpipe") != std::string::npos;
  return v != nullptr && lavapipe ? v : "";
}

// Whether a case's warp instructions all run with the whole block together.
enum class Flow { kUniform, kDivergent };

using ptx_spirv_testing::Device;

class Warp : public ptx_spirv_testing::TwoDevices {
 protected:
  // Loads |ptx| on |d|; null with the status in |status| (and the message in |message|).
  hal_function load(Device& d, const std::string& ptx, hal_module* module, hal_status* status,
                    std::string* message) {
    *status = hal_module_load(d.device, ptx.data(), ptx.size(), nullptr, module);
    hal_function f = nullptr;
    if (*status == HAL_SUCCESS) *status = hal_module_get_function(*module, "k", &f);
    if (*status != HAL_SUCCESS) *message = hal_last_error();
    return f;
  }

  // Runs kernel 'k' on kBlocks blocks of |block|; the output words, or empty when refused
  // (then |refusal| has the message).
  std::vector<uint32_t> run(Device& d, const std::string& ptx, const std::vector<uint32_t>& in,
                            Block block, std::string* refusal) {
    const uint32_t threads = kBlocks * block.threads();
    std::vector<uint32_t> out(2 * threads, 0xDEADBEEFu);
    hal_module module = nullptr;
    hal_status status = HAL_SUCCESS;
    hal_function f = load(d, ptx, &module, &status, refusal);
    if (f == nullptr) {
      EXPECT_EQ(status, HAL_ERROR_NOT_SUPPORTED) << *refusal;
      if (module != nullptr) hal_module_unload(module);
      return {};
    }
    hal_deviceptr in_buffer = 0, out_buffer = 0;
    EXPECT_EQ(hal_mem_alloc(d.device, in.size() * 4, &in_buffer), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_mem_alloc(d.device, out.size() * 4, &out_buffer), HAL_SUCCESS);
    EXPECT_EQ(hal_memcpy_htod(d.stream, in_buffer, in.data(), in.size() * 4), HAL_SUCCESS);
    EXPECT_EQ(hal_memcpy_htod(d.stream, out_buffer, out.data(), out.size() * 4), HAL_SUCCESS);
    void* args[] = {&in_buffer, &out_buffer};
    hal_launch_config config{{kBlocks, 1, 1}, {block.x, block.y, block.z}, 0};
    EXPECT_EQ(hal_launch(d.stream, f, &config, args), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_memcpy_dtoh(d.stream, out.data(), out_buffer, out.size() * 4), HAL_SUCCESS);
    EXPECT_EQ(hal_stream_synchronize(d.stream), HAL_SUCCESS) << hal_last_error();
    hal_mem_free(d.device, in_buffer);
    hal_mem_free(d.device, out_buffer);
    hal_module_unload(module);
    return out;
  }

  // Runs |body| on both devices and compares every result; where the Vulkan device refuses
  // the kernel, checks that it may and that it says why.
  void same_bits(const std::string& body, Block block = {128, 1, 1}, Flow flow = Flow::kUniform,
                 const std::string& directives = "") {
    SCOPED_TRACE(body);
    const std::string ptx = kernel(body, directives);
    const std::vector<uint32_t> in =
        inputs(kBlocks * block.threads(), static_cast<uint32_t>(body.size()));
    std::string refusal;
    const std::vector<uint32_t> want = run(cpu_, ptx, in, block, &refusal);
    ASSERT_EQ(want.size(), 2 * kBlocks * block.threads()) << refusal;
    const std::vector<uint32_t> got = run(vulkan_, ptx, in, block, &refusal);
    if (got.empty()) {
      check_refusal(refusal, flow);
      return;
    }
    const std::string expected = expected_warps(vulkan_.device);
    EXPECT_FALSE(flow == Flow::kDivergent && expected.rfind("workgroup", 0) == 0)
        << "warps through workgroup memory ran a warp instruction in divergent code";
    int reported = 0;
    for (size_t i = 0; i < want.size() && reported < 5; ++i) {
      if (got[i] == want[i]) continue;
      ++reported;
      const size_t thread = i / 2;
      ADD_FAILURE() << std::hex << "thread " << std::dec << thread << std::hex << " (inputs "
                    << in[3 * thread] << ", " << in[3 * thread + 1] << ", " << in[3 * thread + 2]
                    << "), " << (i % 2 == 0 ? "%d" : "%e") << ": Vulkan gives " << got[i]
                    << ", the CPU PTX device " << want[i];
    }
  }

  // A warp kernel's refusal: only of divergent code, only through workgroup memory, with its
  // reason.
  void check_refusal(const std::string& refusal, Flow flow) {
    const std::string expected = expected_warps(vulkan_.device);
    EXPECT_NE(expected, "run") << "the Vulkan device refused a warp kernel: " << refusal;
    EXPECT_EQ(flow, Flow::kDivergent) << "a warp kernel whose warps run with the whole block "
                                         "was refused: "
                                      << refusal;
    EXPECT_NE(refusal.find("hal runs warps through workgroup memory, which needs every thread "
                           "of the block to reach each warp instruction together"),
              std::string::npos)
        << refusal;
    EXPECT_NE(refusal.find("the branch at PTX line"), std::string::npos) << refusal;
    const size_t colon = expected.find(':');
    if (colon != std::string::npos) {
      EXPECT_NE(refusal.find(expected.substr(colon + 1)), std::string::npos) << refusal;
    }
  }
};

// The member mask of the 2^k-lane tile a lane is in (k = 3: 8 lanes).
std::string tile_mask(const char* reg, int lanes) {
  const uint32_t tile = lanes == 32 ? 0xFFFFFFFFu : (1u << lanes) - 1u;
  std::ostringstream s;
  s << "  and.b32 %t9, %lane, " << (32 - lanes) << ";\n  shl.b32 " << reg << ", " << tile
    << ", %t9;\n";
  return s.str();
}

TEST_F(Warp, ShufflesFollowTheLaneAndSegmentRules) {
  // Random b and c: every source lane, clamp and segment mask, with the in-range predicate.
  for (const char* mode : {"up", "down", "bfly", "idx"}) {
    same_bits(std::string("shfl.sync.") + mode +
              ".b32 %d|%p1, %a, %b, %c, -1;\n  selp.u32 %e, 1, 0, %p1;");
  }
  // The forms nvcc and Triton emit: constant offsets, 8- and 16-lane segments.
  same_bits("shfl.sync.bfly.b32 %d, %a, 16, 31, -1;\n  shfl.sync.bfly.b32 %e, %d, 1, 31, -1;");
  same_bits("shfl.sync.down.b32 %d|%p1, %a, 3, 0x181f, -1;\n  selp.u32 %e, 1, 0, %p1;");
  same_bits("shfl.sync.up.b32 %d|%p1, %a, 2, 0x1000, -1;\n  selp.u32 %e, 1, 0, %p1;");
  same_bits("shfl.sync.idx.b32 %d, %a, %lane, 0x101f, -1;\n  shfl.sync.idx.b32 %e, %a, 5, 31, -1;");
  // The pre-Volta form without a member mask.
  same_bits("shfl.down.b32 %d, %a, 1, 31;\n  shfl.idx.b32 %e, %a, 0, 31;");
}

TEST_F(Warp, VotesWithFullAndTileMasks) {
  // Random predicates; block 2 all true and block 3 all false, so every vote meets
  // unanimity both ways.
  const std::string predicate =
      "  and.b32 %t0, %a, 3;\n  setp.eq.u32 %p1, %t0, 0;\n  mov.u32 %t1, %ctaid.x;\n"
      "  setp.eq.u32 %p2, %t1, 2;\n  or.pred %p1, %p1, %p2;\n  setp.ne.u32 %p2, %t1, 3;\n"
      "  and.pred %p1, %p1, %p2;\n";
  for (int lanes : {32, 16, 8}) {
    const std::string mask = tile_mask("%t8", lanes);
    same_bits(predicate + mask + "  vote.sync.ballot.b32 %d, %p1, %t8;\n" +
              "  vote.sync.ballot.b32 %e, !%p1, %t8;");
    same_bits(predicate + mask +
              "  vote.sync.all.pred %p3, %p1, %t8;\n  vote.sync.any.pred %p4, %p1, %t8;\n"
              "  vote.sync.uni.pred %p5, %p1, %t8;\n  selp.u32 %d, 1, 0, %p3;\n"
              "  selp.u32 %t0, 2, 0, %p4;\n  or.b32 %d, %d, %t0;\n  selp.u32 %t0, 4, 0, %p5;\n"
              "  or.b32 %d, %d, %t0;\n  vote.sync.any.pred %p3, !%p1, %t8;\n"
              "  selp.u32 %e, 1, 0, %p3;");
  }
  same_bits(predicate + "  vote.ballot.b32 %d, %p1;\n  vote.all.pred %p3, %p1;\n" +
            "  selp.u32 %e, 1, 0, %p3;");
}

TEST_F(Warp, DivergentBranchesAndLoops) {
  // A branch taken by a third of the lanes: the lanes running are its lanes.
  same_bits(
      "  rem.u32 %t0, %lane, 3;\n  setp.ne.u32 %p1, %t0, 0;\n  @%p1 bra SKIP;\n"
      "  activemask.b32 %d;\n  and.b32 %t1, %a, 1;\n  setp.eq.u32 %p2, %t1, 1;\n"
      "  vote.sync.ballot.b32 %e, %p2, %d;\n  redux.sync.add.u32 %t2, %a, %d;\n"
      "  xor.b32 %e, %e, %t2;\nSKIP:",
      {128, 1, 1}, Flow::kDivergent);
  // Both sides of an if/else vote, each among its own lanes.
  same_bits(
      "  and.b32 %t0, %b, 1;\n  setp.eq.u32 %p1, %t0, 0;\n  and.b32 %t1, %a, 1;\n"
      "  setp.eq.u32 %p2, %t1, 1;\n  @%p1 bra ELSE;\n  activemask.b32 %d;\n"
      "  vote.sync.ballot.b32 %e, %p2, %d;\n  bra.uni DONE;\nELSE:\n  activemask.b32 %d;\n"
      "  vote.sync.all.pred %p3, %p2, %d;\n  selp.u32 %e, 7, 9, %p3;\nDONE:",
      {128, 1, 1}, Flow::kDivergent);
  // A loop that lanes leave after 1 to 8 trips: each trip votes, reduces and reads the
  // highest lane still in it.
  same_bits(
      "  and.b32 %t0, %a, 7;\n  mov.u32 %t1, %b;\nLOOP:\n  activemask.b32 %t2;\n"
      "  and.b32 %t3, %t1, 1;\n  setp.eq.u32 %p1, %t3, 1;\n  vote.sync.ballot.b32 %t4, %p1, %t2;\n"
      "  add.u32 %d, %d, %t4;\n  redux.sync.max.u32 %t5, %t1, %t2;\n  xor.b32 %e, %e, %t5;\n"
      "  bfind.u32 %t6, %t2;\n  shfl.sync.idx.b32 %t7, %t1, %t6, 31, %t2;\n"
      "  add.u32 %t1, %t1, %t7;\n  setp.ne.u32 %p2, %t0, 0;\n  sub.u32 %t0, %t0, 1;\n"
      "  @%p2 bra LOOP;",
      {128, 1, 1}, Flow::kDivergent);
  // A loop whose trip count is the same in every thread (from %ctaid), with a lane-dependent
  // guard inside: the whole block runs it together.
  same_bits(
      "  mov.u32 %t0, %ctaid.x;\n  add.u32 %t0, %t0, 2;\n  mov.u32 %t1, %a;\nULOOP:\n"
      "  shfl.sync.bfly.b32 %t2, %t1, %t0, 31, -1;\n  add.u32 %t1, %t1, %t2;\n"
      "  and.b32 %t3, %t1, 3;\n  setp.eq.u32 %p1, %t3, 0;\n  @%p1 add.u32 %d, %d, 1;\n"
      "  vote.sync.ballot.b32 %t4, %p1, -1;\n  xor.b32 %e, %e, %t4;\n"
      "  sub.u32 %t0, %t0, 1;\n  setp.ne.u32 %p2, %t0, 0;\n  @%p2 bra ULOOP;");
  // Guarded warp instructions: a lane whose guard fails stays active (activemask counts it),
  // but only the lanes whose guard holds take part, and only they keep results.
  same_bits(
      "  and.b32 %t0, %c, 1;\n  setp.eq.u32 %p1, %t0, 1;\n  mov.u32 %e, 5;\n"
      "  @%p1 activemask.b32 %d;\n  vote.sync.ballot.b32 %t8, %p1, -1;\n"
      "  @%p1 redux.sync.or.b32 %e, %a, %t8;\n  bfind.u32 %t1, %t8;\n"
      "  @%p1 shfl.sync.idx.b32 %t2, %b, %t1, 31, %t8;\n  @%p1 xor.b32 %d, %d, %t2;");
}

TEST_F(Warp, ReductionsWithFullAndTileMasks) {
  for (int lanes : {32, 8}) {
    const std::string mask = tile_mask("%t8", lanes);
    for (const char* op :
         {"add.u32", "min.u32", "max.u32", "min.s32", "max.s32", "and.b32", "or.b32", "xor.b32"}) {
      same_bits(mask + "  redux.sync." + op + " %d, %a, %t8;\n  and.b32 %t0, %b, 15;\n" +
                "  redux.sync." + op + " %e, %t0, %t8;");
    }
  }
  // Lanes naming members of different sizes in one instruction.
  same_bits(
      "  setp.lt.u32 %p1, %lane, 16;\n  selp.b32 %t8, 0x0000FFFF, 0xFFFF0000, %p1;\n"
      "  and.b32 %t0, %lane, 24;\n  setp.eq.u32 %p2, %t0, 24;\n"
      "  @%p2 mov.b32 %t8, 0xFF000000;\n  redux.sync.add.u32 %d, %a, %t8;\n"
      "  redux.sync.min.s32 %e, %b, %t8;");
}

TEST_F(Warp, MatchesAndElections) {
  // Few distinct values, so that lanes match.
  same_bits(
      "  and.b32 %t0, %a, 3;\n  match.any.sync.b32 %d, %t0, -1;\n"
      "  match.all.sync.b32 %e|%p1, %t0, -1;\n  selp.u32 %t1, 0x80000000, 0, %p1;\n"
      "  xor.b32 %e, %e, %t1;");
  same_bits(tile_mask("%t8", 8) +
            "  and.b32 %t0, %a, 1;\n  mov.u32 %t1, %ctaid.x;\n  setp.eq.u32 %p2, %t1, 1;\n"
            "  @%p2 mov.u32 %t0, 6;\n  match.all.sync.b32 %d|%p1, %t0, %t8;\n"
            "  selp.u32 %e, 1, 0, %p1;\n  match.any.sync.b32 %t2, %t0, %t8;\n"
            "  xor.b32 %e, %e, %t2;");
  same_bits(
      "  and.b32 %t0, %a, 1;\n  and.b32 %t1, %b, 1;\n  mov.b64 %rd4, {%t0, %t1};\n"
      "  match.any.sync.b64 %d, %rd4, -1;\n" +
      tile_mask("%t8", 8) + "  match.all.sync.b64 %e, %rd4, %t8;");
  same_bits(
      "  elect.sync %d|%p1, -1;\n  selp.u32 %e, 1, 0, %p1;\n  and.b32 %t0, %a, 1;\n"
      "  setp.eq.u32 %p2, %t0, 1;\n  @!%p2 bra DONE;\n  activemask.b32 %t1;\n"
      "  elect.sync %t2|%p3, %t1;\n  selp.u32 %t3, 0x100, 0, %p3;\n  or.b32 %e, %e, %t3;\n"
      "  shl.b32 %t2, %t2, 16;\n  or.b32 %d, %d, %t2;\nDONE:",
      {128, 1, 1}, Flow::kDivergent);
}

TEST_F(Warp, SpecialRegistersAndBlockShapes) {
  const std::string specials =
      "  mov.u32 %t0, %tid.x;\n  mov.u32 %t1, %tid.y;\n  mov.u32 %t2, %tid.z;\n"
      "  shl.b32 %t1, %t1, 8;\n  shl.b32 %t2, %t2, 16;\n  or.b32 %d, %t0, %t1;\n"
      "  or.b32 %d, %d, %t2;\n  shl.b32 %t3, %lane, 24;\n  or.b32 %d, %d, %t3;\n"
      "  mov.u32 %e, %lanemask_lt;\n  mov.u32 %t4, %lanemask_gt;\n  xor.b32 %e, %e, %t4;\n"
      "  mov.u32 %t4, %lanemask_eq;\n  add.u32 %e, %e, %t4;\n  mov.u32 %t4, %lanemask_le;\n"
      "  mov.u32 %t5, %lanemask_ge;\n  and.b32 %t4, %t4, %t5;\n  add.u32 %e, %e, %t4;\n"
      "  mov.u32 %t4, %nwarpid;\n  add.u32 %e, %e, %t4;\n  add.u32 %e, %e, %warp;";
  for (Block block : {Block{128, 1, 1}, Block{32, 4, 1}, Block{64, 2, 3}, Block{32, 2, 2}}) {
    SCOPED_TRACE(std::to_string(block.x) + "x" + std::to_string(block.y) + "x" +
                 std::to_string(block.z));
    same_bits(specials, block);
    // A shuffle across the block's rows: a warp spans rows when x is 32.
    same_bits(
        "  mov.u32 %t0, %tid.y;\n  shfl.sync.bfly.b32 %d, %t0, 31, 31, -1;\n"
        "  mov.u32 %t1, %tid.x;\n  shfl.sync.down.b32 %e, %t1, 7, 31, -1;",
        block);
  }
}

TEST_F(Warp, WarpBarrierOrdersSharedMemory) {
  // Each lane writes its word, the warp meets, and each reads its neighbour's.
  same_bits(
      "  mov.u32 %t0, %tid.x;\n  shl.b32 %t0, %t0, 2;\n  mov.u32 %t1, s;\n"
      "  add.u32 %t1, %t1, %t0;\n  st.shared.u32 [%t1], %a;\n  bar.warp.sync -1;\n"
      "  xor.b32 %t2, %t0, 4;\n  mov.u32 %t3, s;\n  add.u32 %t3, %t3, %t2;\n"
      "  ld.shared.u32 %d, [%t3];\n  bar.warp.sync -1;\n  st.shared.u32 [%t1], %b;\n"
      "  bar.warp.sync -1;\n  ld.shared.u32 %e, [%t3];");
}

// What a device without 32-lane warps refuses, what still runs there, and blocks that split
// warps.
class WarpLimits : public Warp {};

TEST_F(WarpLimits, AModuleKeepsItsOtherKernels) {
  // 'warp' votes in a branch that only thread 0 of the block skips.
  const std::string ptx =
      ".version 8.0\n.target sm_80\n.address_size 64\n"
      ".visible .entry plain(.param .u64 out)\n{\n  .reg .b32 %r;\n  .reg .b64 %rd<2>;\n"
      "  ld.param.u64 %rd1, [out];\n  mov.u32 %r, 41;\n  st.global.u32 [%rd1], %r;\n  ret;\n}\n"
      ".visible .entry warp(.param .u64 out)\n{\n  .reg .pred %p;\n  .reg .b32 %r;\n"
      "  .reg .b64 %rd<2>;\n  ld.param.u64 %rd1, [out];\n  mov.u32 %r, %tid.x;\n"
      "  setp.eq.u32 %p, %r, 0;\n  @%p bra DONE;\n  activemask.b32 %r;\n"
      "  st.global.u32 [%rd1], %r;\nDONE:\n  ret;\n}\n";
  hal_module module = nullptr;
  ASSERT_EQ(hal_module_load(vulkan_.device, ptx.data(), ptx.size(), nullptr, &module), HAL_SUCCESS)
      << hal_last_error();
  hal_function plain = nullptr, warp = nullptr;
  EXPECT_EQ(hal_module_get_function(module, "plain", &plain), HAL_SUCCESS) << hal_last_error();
  const hal_status status = hal_module_get_function(module, "warp", &warp);
  if (status == HAL_SUCCESS) {
    EXPECT_NE(expected_warps(vulkan_.device).rfind("workgroup", 0), 0u);
  } else {
    EXPECT_EQ(status, HAL_ERROR_NOT_SUPPORTED);
    const std::string message = hal_last_error();
    EXPECT_NE(message.find("kernel 'warp'"), std::string::npos) << message;
    EXPECT_NE(message.find("activemask"), std::string::npos) << message;
    EXPECT_NE(message.find("the branch at PTX line 21"), std::string::npos) << message;
    check_refusal(message, Flow::kDivergent);
  }
  hal_deviceptr out = 0;
  ASSERT_EQ(hal_mem_alloc(vulkan_.device, 4, &out), HAL_SUCCESS);
  void* args[] = {&out};
  hal_launch_config config{{1, 1, 1}, {1, 1, 1}, 0};
  ASSERT_EQ(hal_launch(vulkan_.stream, plain, &config, args), HAL_SUCCESS) << hal_last_error();
  uint32_t value = 0;
  ASSERT_EQ(hal_memcpy_dtoh(vulkan_.stream, &value, out, 4), HAL_SUCCESS);
  ASSERT_EQ(hal_stream_synchronize(vulkan_.stream), HAL_SUCCESS);
  EXPECT_EQ(value, 41u);
  hal_mem_free(vulkan_.device, out);
  hal_module_unload(module);
}

// CUDA makes two warps of a 16 x 4 block, and a last warp of 16 lanes of a 48-thread block
// (whose lanes read only lanes that exist: reading one that does not is undefined in PTX).
// Through workgroup memory they run as CUDA runs them; a device with 32-lane subgroups cannot
// split a subgroup so, and refuses them at launch and at load.
TEST_F(WarpLimits, BlocksThatSplitAWarp) {
  const std::string body =
      "  setp.lt.u32 %p1, %a, %b;\n  activemask.b32 %d;\n  shfl.sync.up.b32 %e, %a, 1, 0, %d;\n"
      "  vote.sync.ballot.b32 %t0, %p1, %d;\n  add.u32 %e, %e, %t0;";
  const std::string expected = expected_warps(vulkan_.device);
  const std::string ptx = kernel(body);
  hal_module module = nullptr;
  hal_status status = HAL_SUCCESS;
  std::string message;
  hal_function f = load(vulkan_, ptx, &module, &status, &message);
  ASSERT_NE(f, nullptr) << message;
  hal_deviceptr in = 0, out = 0;
  ASSERT_EQ(hal_mem_alloc(vulkan_.device, 12 * 64, &in), HAL_SUCCESS);
  ASSERT_EQ(hal_mem_alloc(vulkan_.device, 8 * 64, &out), HAL_SUCCESS);
  void* args[] = {&in, &out};
  hal_launch_config config{{1, 1, 1}, {16, 4, 1}, 0};
  status = hal_launch(vulkan_.stream, f, &config, args);
  message = status == HAL_SUCCESS ? "" : hal_last_error();
  EXPECT_EQ(hal_stream_synchronize(vulkan_.stream), HAL_SUCCESS) << hal_last_error();
  hal_mem_free(vulkan_.device, in);
  hal_mem_free(vulkan_.device, out);
  hal_module_unload(module);
  if (status == HAL_SUCCESS) {  // warps through workgroup memory: the results, as on CUDA
    EXPECT_NE(expected, "run") << "a device with 32-lane subgroups ran a block that splits them";
    same_bits(body, {16, 4, 1});
    same_bits(body, {48, 1, 1}, Flow::kUniform, " .reqntid 48, 1, 1");
    return;
  }
  EXPECT_EQ(expected.rfind("workgroup", 0), std::string::npos) << message;
  EXPECT_EQ(status, HAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(message.find("multiple of 32"), std::string::npos) << message;
  // A .reqntid that splits warps is refused at load, with the reason.
  const std::string fixed = kernel(body, " .reqntid 48, 1, 1");
  ASSERT_EQ(load(vulkan_, fixed, &module, &status, &message), nullptr);
  EXPECT_EQ(status, HAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(message.find(".reqntid 48"), std::string::npos) << message;
  if (module != nullptr) hal_module_unload(module);
}

}  // namespace
