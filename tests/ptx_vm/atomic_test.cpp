// atom and red: every operation's semantics lane by lane, contended global atomics from grids
// whose blocks run on several host threads at once (exact sums, counts, permutations of the
// returned values), compare-and-swap locks and loops, 16-bit float adds, shared-memory and
// generic-address atomics, faults, refusals, and Triton's histogram kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>

#include "vm_test_util.h"

namespace ptx_vm_test {
namespace {

// Several workers, so that blocks really run on host threads at the same time.
constexpr unsigned kWorkers = 4;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The Triton kernels captured for the CPU driver's tests (tests/ptx_cpu/triton).
std::string triton_ptx(const std::string& name) {
  return read_file(std::string(HAL_TEST_TRITON_PTX_DIR) + "/" + name);
}

// ---- one operation per lane, on the lane's own element ------------------------------------

// A kernel "k(mem, b, c, old)" in which thread t runs `atom.global.<op> old[t], [mem + t], b[t]`
// (and c[t] for cas), for elements of |bytes| bytes.
std::string lane_kernel(const std::string& op, uint32_t bytes, bool cas) {
  const std::string w = std::to_string(bytes * 8);
  return module(R"(
.visible .entry k(.param .u64 pm, .param .u64 pb, .param .u64 pc, .param .u64 po)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<16>;
  .reg .b)" + w +
                R"( %v<4>;
  ld.param.u64 %rd1, [pm];
  ld.param.u64 %rd2, [pb];
  ld.param.u64 %rd3, [pc];
  ld.param.u64 %rd4, [po];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd5, %r1, )" +
                std::to_string(bytes) + R"(;
  add.s64 %rd6, %rd1, %rd5;
  add.s64 %rd7, %rd2, %rd5;
  add.s64 %rd8, %rd3, %rd5;
  add.s64 %rd9, %rd4, %rd5;
  ld.global.b)" +
                w + R"( %v1, [%rd7];
  ld.global.b)" +
                w + R"( %v2, [%rd8];
  atom.global.)" +
                op + " %v3, [%rd6], %v1" + (cas ? ", %v2" : "") + R"(;
  st.global.b)" +
                w + R"( [%rd9], %v3;
  ret;
}
)");
}

template <typename T>
struct LaneResult {
  std::vector<T> memory;  // after the instruction
  std::vector<T> old;     // what each lane got back
};

template <typename T>
LaneResult<T> run_lanes(const std::string& op, const std::vector<T>& mem, const std::vector<T>& b,
                        const std::vector<T>& c = {}) {
  Vm vm;
  LaneResult<T> r;
  if (!vm.load(lane_kernel(op, sizeof(T), !c.empty()))) return r;
  const uint32_t n = static_cast<uint32_t>(mem.size());
  auto& m = vm.buffer(mem);
  auto& bb = vm.buffer(b);
  auto& cc = vm.buffer(c.empty() ? std::vector<T>(n) : c);
  auto& old = vm.buffer(std::vector<T>(n, T(0x5a)));
  const Fault f = vm.run1(
      "k", 1, n, Params().add(m.address()).add(bb.address()).add(cc.address()).add(old.address()));
  EXPECT_RAN(f) << op;
  r.memory = m.host;
  r.old = old.host;
  return r;
}

TEST(PtxVmAtomic, IntegerOperationsLaneByLane) {
  {
    const std::vector<uint32_t> mem = {5, 0xfffffffeu, 7, 0};
    const auto r = run_lanes<uint32_t>("add.u32", mem, {3, 5, 0, 0xffffffffu});
    EXPECT_EQ(r.memory, (std::vector<uint32_t>{8, 3, 7, 0xffffffffu}));
    EXPECT_EQ(r.old, mem);
  }
  {
    const std::vector<uint32_t> mem = {5, 0x80000000u, 7, 3};
    EXPECT_EQ(run_lanes<uint32_t>("min.u32", mem, {3, 5, 9, 3}).memory,
              (std::vector<uint32_t>{3, 5, 7, 3}));
    EXPECT_EQ(run_lanes<uint32_t>("max.u32", mem, {3, 5, 9, 3}).memory,
              (std::vector<uint32_t>{5, 0x80000000u, 9, 3}));
    // As signed, 0x80000000 is the smallest value.
    const std::vector<int32_t> smem = {5, INT32_MIN, -7, 3};
    EXPECT_EQ(run_lanes<int32_t>("min.s32", smem, {-3, 5, 9, 3}).memory,
              (std::vector<int32_t>{-3, INT32_MIN, -7, 3}));
    EXPECT_EQ(run_lanes<int32_t>("max.s32", smem, {-3, 5, 9, 3}).memory,
              (std::vector<int32_t>{5, 5, 9, 3}));
  }
  {
    // inc: old >= b ? 0 : old + 1.  dec: old == 0 || old > b ? b : old - 1.
    const std::vector<uint32_t> mem = {4, 5, 7, 0, 0xffffffffu};
    const std::vector<uint32_t> b = {5, 5, 5, 5, 0xffffffffu};
    const auto inc = run_lanes<uint32_t>("inc.u32", mem, b);
    EXPECT_EQ(inc.memory, (std::vector<uint32_t>{5, 0, 0, 1, 0}));
    EXPECT_EQ(inc.old, mem);
    EXPECT_EQ(run_lanes<uint32_t>("dec.u32", mem, b).memory,
              (std::vector<uint32_t>{3, 4, 5, 5, 0xfffffffeu}));
  }
  {
    const std::vector<uint32_t> mem = {0xf0f0f0f0u, 0x12345678u};
    const std::vector<uint32_t> b = {0xff00ff00u, 0x0000ffffu};
    EXPECT_EQ(run_lanes<uint32_t>("and.b32", mem, b).memory,
              (std::vector<uint32_t>{0xf000f000u, 0x00005678u}));
    EXPECT_EQ(run_lanes<uint32_t>("or.b32", mem, b).memory,
              (std::vector<uint32_t>{0xfff0fff0u, 0x1234ffffu}));
    EXPECT_EQ(run_lanes<uint32_t>("xor.b32", mem, b).memory,
              (std::vector<uint32_t>{0x0ff00ff0u, 0x1234a987u}));
    const auto exch = run_lanes<uint32_t>("exch.b32", mem, b);
    EXPECT_EQ(exch.memory, b);
    EXPECT_EQ(exch.old, mem);
  }
  {
    const std::vector<uint32_t> mem = {5, 5, 0};
    const auto cas = run_lanes<uint32_t>("cas.b32", mem, {5, 6, 0}, {9, 9, 1});
    EXPECT_EQ(cas.memory, (std::vector<uint32_t>{9, 5, 1}));
    EXPECT_EQ(cas.old, mem);
  }
}

TEST(PtxVmAtomic, SixtyFourBitOperationsLaneByLane) {
  const uint64_t big = 0x8000000000000001ull;
  const std::vector<uint64_t> mem = {1ull << 40, big, 3};
  const auto add = run_lanes<uint64_t>("add.u64", mem, {1ull << 40, big, ~0ull});
  EXPECT_EQ(add.memory, (std::vector<uint64_t>{1ull << 41, 2, 2}));
  EXPECT_EQ(add.old, mem);
  EXPECT_EQ(run_lanes<uint64_t>("min.u64", mem, {5, 7, 2}).memory,
            (std::vector<uint64_t>{5, 7, 2}));
  EXPECT_EQ(run_lanes<uint64_t>("max.u64", mem, {5, 7, 2}).memory,
            (std::vector<uint64_t>{1ull << 40, big, 3}));
  const std::vector<int64_t> smem = {-(1ll << 40), INT64_MIN, 3};
  EXPECT_EQ(run_lanes<int64_t>("max.s64", smem, {-5, 7, 2}).memory,
            (std::vector<int64_t>{-5, 7, 3}));
  EXPECT_EQ(run_lanes<int64_t>("min.s64", smem, {-5, 7, 2}).memory,
            (std::vector<int64_t>{-(1ll << 40), INT64_MIN, 2}));
  EXPECT_EQ(run_lanes<uint64_t>("or.b64", mem, {1, 2, 4}).memory,
            (std::vector<uint64_t>{(1ull << 40) | 1, big | 2, 7}));
  EXPECT_EQ(run_lanes<uint64_t>("xor.b64", mem, {1ull << 40, 1, 1}).memory,
            (std::vector<uint64_t>{0, big ^ 1, 2}));
  EXPECT_EQ(run_lanes<uint64_t>("inc.u64", mem, {1ull << 40, 1ull << 62, 2}).memory,
            (std::vector<uint64_t>{0, 0, 0}));
  const auto exch = run_lanes<uint64_t>("exch.b64", mem, {7, 8, 9});
  EXPECT_EQ(exch.memory, (std::vector<uint64_t>{7, 8, 9}));
  EXPECT_EQ(exch.old, mem);
  const auto cas = run_lanes<uint64_t>("cas.b64", mem, {1ull << 40, 1, 3}, {11, 12, 13});
  EXPECT_EQ(cas.memory, (std::vector<uint64_t>{11, big, 13}));
  EXPECT_EQ(cas.old, mem);
}

TEST(PtxVmAtomic, SixteenBitCasLeavesTheNeighbourAlone) {
  // Lanes work on adjacent halves of 32-bit words.
  const std::vector<uint16_t> mem = {5, 5, 0xffff, 1};
  const auto cas = run_lanes<uint16_t>("cas.b16", mem, {5, 6, 0xffff, 0}, {9, 9, 0, 2});
  EXPECT_EQ(cas.memory, (std::vector<uint16_t>{9, 5, 0, 1}));
  EXPECT_EQ(cas.old, mem);
}

TEST(PtxVmAtomic, HalfPrecisionAddsRoundToNearestEven) {
  // f16: 1 + 2^-11 is a tie that stays at 1 (even); 1+ulp + 2^-11 rounds up to 1+2ulp.
  // Subnormals are kept (.noftz): 2^-24 + 2^-24 = 2^-23.
  const auto h = run_lanes<uint16_t>("add.noftz.f16", {0x3c00, 0x3c01, 0x0001, 0xc000},
                                     {0x1000, 0x1000, 0x0001, 0x3c00});
  EXPECT_EQ(h.memory, (std::vector<uint16_t>{0x3c00, 0x3c02, 0x0002, 0xbc00}));
  EXPECT_EQ(h.old, (std::vector<uint16_t>{0x3c00, 0x3c01, 0x0001, 0xc000}));
  // bf16: 1 + 2^-8 is a tie (stays 1), 1+ulp + 2^-8 rounds up to 1+2ulp.
  const auto b =
      run_lanes<uint16_t>("add.noftz.bf16", {0x3f80, 0x3f81, 0x4000}, {0x3b80, 0x3b80, 0xbf80});
  EXPECT_EQ(b.memory, (std::vector<uint16_t>{0x3f80, 0x3f82, 0x3f80}));
  // Pairs: each half separately.
  const auto h2 = run_lanes<uint32_t>("add.noftz.f16x2", {0x40003c00u}, {0x3c003c00u});
  EXPECT_EQ(h2.memory, (std::vector<uint32_t>{0x42004000u}));  // (2, 3)
  const auto b2 = run_lanes<uint32_t>("add.noftz.bf16x2", {0x3f803f80u}, {0xc0003f80u});
  EXPECT_EQ(b2.memory, (std::vector<uint32_t>{0xbf804000u}));  // (2, -1)
  EXPECT_EQ(b2.old, (std::vector<uint32_t>{0x3f803f80u}));
}

TEST(PtxVmAtomic, FloatAddsFlushSubnormalsOnGlobalMemoryOnly) {
  const float tiny = 1e-40f;  // subnormal
  const auto f = run_lanes<float>("add.f32", {1.5f, 0.0f, -2.0f}, {0.25f, tiny, 0.5f});
  EXPECT_EQ(f.memory, (std::vector<float>{1.75f, 0.0f, -1.5f}));
  const double dtiny = 1e-310;  // subnormal
  const auto d = run_lanes<double>("add.f64", {1.5, dtiny}, {0.25, dtiny});
  EXPECT_EQ(d.memory, (std::vector<double>{1.75, dtiny + dtiny}));  // f64 keeps subnormals

  // On shared memory f32 add keeps the subnormal.
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .f32 s;
  .reg .f32 %f<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  st.shared.f32 [s], 0f00000000;
  atom.shared.add.f32 %f1, [s], 0f000116C2;
  ld.shared.f32 %f2, [s];
  st.global.f32 [%rd1], %f2;
  ret;
}
)")));
  auto& out = vm.buffer(std::vector<float>(1, -1.0f));
  EXPECT_RAN(vm.run1("k", 1, 1, Params().add(out.address())));
  uint32_t bits;
  std::memcpy(&bits, &out.host[0], 4);
  EXPECT_EQ(bits, 0x000116c2u);
}

// ---- contention across blocks -------------------------------------------------------------

// Every thread of a large grid adds into the same few words; the values each thread got back
// from the counter must be exactly 0..N-1.
TEST(PtxVmAtomic, ContendedGlobalSumsAreExact) {
  Vm vm(kWorkers);
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry sums(.param .u64 p_cnt, .param .u64 p_old, .param .u64 p_sum,
                     .param .u64 p_f, .param .u64 p_d, .param .u64 p_fold)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<16>;
  .reg .f32 %f<3>;
  .reg .f64 %fd<3>;
  ld.param.u64 %rd1, [p_cnt];
  ld.param.u64 %rd2, [p_old];
  ld.param.u64 %rd3, [p_sum];
  ld.param.u64 %rd4, [p_f];
  ld.param.u64 %rd5, [p_d];
  ld.param.u64 %rd6, [p_fold];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  atom.global.add.u32 %r5, [%rd1], 1;
  mul.wide.u32 %rd7, %r4, 4;
  add.s64 %rd8, %rd2, %rd7;
  st.global.u32 [%rd8], %r5;
  red.global.add.u32 [%rd1+4], 3;
  atom.global.gpu.acq_rel.add.s32 %r6, [%rd1+8], -1;
  cvt.u64.u32 %rd9, %r4;
  atom.global.add.u64 %rd10, [%rd3], %rd9;
  red.global.sys.add.u64 [%rd3+8], 1099511627776;
  atom.global.add.f32 %f1, [%rd4], 0f3F800000;
  add.s64 %rd11, %rd6, %rd7;
  st.global.f32 [%rd11], %f1;
  red.global.add.f32 [%rd4+4], 0f3DCCCCCD;
  atom.global.relaxed.cta.add.f64 %fd1, [%rd5], 0d3FF0000000000000;
  red.global.add.f64 [%rd5+8], 0d3FB999999999999A;
  ret;
}
)")));
  const uint32_t blocks = 400, threads = 256, n = blocks * threads;
  auto& cnt = vm.buffer(std::vector<uint32_t>{0, 0, 0});
  auto& old = vm.buffer(std::vector<uint32_t>(n, 0xffffffffu));
  auto& sum = vm.buffer(std::vector<uint64_t>{0, 0});
  auto& f = vm.buffer(std::vector<float>{0.0f, 0.0f});
  auto& d = vm.buffer(std::vector<double>{0.0, 0.0});
  auto& fold = vm.buffer(std::vector<float>(n, -1.0f));
  EXPECT_RAN(vm.run1("sums", blocks, threads,
                     Params()
                         .add(cnt.address())
                         .add(old.address())
                         .add(sum.address())
                         .add(f.address())
                         .add(d.address())
                         .add(fold.address())));
  EXPECT_EQ(cnt.host[0], n);
  EXPECT_EQ(cnt.host[1], 3 * n);
  EXPECT_EQ(cnt.host[2], static_cast<uint32_t>(-static_cast<int32_t>(n)));
  EXPECT_EQ(sum.host[0], uint64_t{n} * (n - 1) / 2);
  EXPECT_EQ(sum.host[1], uint64_t{n} << 40);
  EXPECT_EQ(f.host[0], static_cast<float>(n));  // exact: every partial sum is an integer < 2^24
  EXPECT_EQ(d.host[0], static_cast<double>(n));
  // Adding the same value in any order gives the same sequence of roundings.
  float expect_f = 0.0f;
  double expect_d = 0.0;
  for (uint32_t i = 0; i < n; ++i) {
    expect_f += 0.1f;
    expect_d += 0.1;
  }
  EXPECT_EQ(f.host[1], expect_f);
  EXPECT_NEAR(f.host[1], 0.1 * n, 0.01 * 0.1 * n);
  EXPECT_EQ(d.host[1], expect_d);
  // The old values: each of 0..n-1 exactly once.
  std::vector<uint32_t> sorted = old.host;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i) << "counter value returned twice";
  std::vector<float> fsorted = fold.host;
  std::sort(fsorted.begin(), fsorted.end());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(fsorted[i], static_cast<float>(i));
}

TEST(PtxVmAtomic, ContendedMinMaxIncDecBitwiseExch) {
  Vm vm(kWorkers);
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry ops(.param .u64 p_a, .param .u64 p_b, .param .u64 p_old)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<20>;
  ld.param.u64 %rd1, [p_a];
  ld.param.u64 %rd2, [p_b];
  ld.param.u64 %rd3, [p_old];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;        // gid
  sub.s32 %r5, %r4, 8000;
  atom.global.max.s32 %r6, [%rd1], %r5;
  atom.global.min.s32 %r6, [%rd1+4], %r5;
  add.u32 %r7, %r4, 5;
  atom.global.min.u32 %r6, [%rd1+8], %r7;
  add.u32 %r8, %r4, 0x7fffff00;
  red.global.max.u32 [%rd1+12], %r8;
  atom.global.inc.u32 %r6, [%rd1+16], 99;
  red.global.dec.u32 [%rd1+20], 99;
  and.b32 %r9, %r4, 31;
  shl.b32 %r10, 1, %r9;
  atom.global.or.b32 %r6, [%rd1+24], %r10;
  not.b32 %r11, %r10;
  red.global.and.b32 [%rd1+28], %r11;
  rem.u32 %r12, %r4, 31;
  shl.b32 %r13, 1, %r12;
  red.global.xor.b32 [%rd1+32], %r13;
  atom.global.exch.b32 %r14, [%rd1+36], %r4;
  mul.wide.u32 %rd4, %r4, 4;
  add.s64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r14;
  // 64-bit
  cvt.u64.u32 %rd6, %r4;
  shl.b64 %rd7, %rd6, 33;
  or.b64 %rd8, %rd7, 7;
  atom.global.max.u64 %rd9, [%rd2], %rd8;
  neg.s64 %rd10, %rd7;
  atom.global.min.s64 %rd9, [%rd2+8], %rd10;
  and.b32 %r15, %r4, 63;
  shl.b64 %rd11, 1, %r15;
  red.global.or.b64 [%rd2+16], %rd11;
  red.global.xor.b64 [%rd2+24], %rd11;
  atom.global.inc.u64 %rd9, [%rd2+32], 1000;
  ret;
}
)")));
  const uint32_t blocks = 64, threads = 256, n = blocks * threads;
  auto& a = vm.buffer(std::vector<uint32_t>{0x80000000u, 0x7fffffffu, 0xffffffffu, 0, 0, 0, 0,
                                            0xffffffffu, 0, 0xabcdef});
  auto& b = vm.buffer(std::vector<uint64_t>{0, 0, 0, 0, 0});
  auto& old = vm.buffer(std::vector<uint32_t>(n, 0));
  EXPECT_RAN(vm.run1("ops", blocks, threads,
                     Params().add(a.address()).add(b.address()).add(old.address())));
  EXPECT_EQ(static_cast<int32_t>(a.host[0]), static_cast<int32_t>(n - 1) - 8000);
  EXPECT_EQ(static_cast<int32_t>(a.host[1]), -8000);
  EXPECT_EQ(a.host[2], 5u);
  EXPECT_EQ(a.host[3], n - 1 + 0x7fffff00u);
  EXPECT_EQ(a.host[4], n % 100);
  EXPECT_EQ(a.host[5], (100 - n % 100) % 100);
  EXPECT_EQ(a.host[6], 0xffffffffu);
  EXPECT_EQ(a.host[7], 0u);
  uint32_t x = 0;
  for (uint32_t i = 0; i < n; ++i) x ^= 1u << (i % 31);
  EXPECT_EQ(a.host[8], x);
  // exch: the values seen, plus what is left, are the initial value and every gid once.
  std::vector<uint32_t> seen = old.host;
  seen.push_back(a.host[9]);
  std::sort(seen.begin(), seen.end());
  std::vector<uint32_t> expect(n);
  std::iota(expect.begin(), expect.end(), 0u);
  expect.push_back(0xabcdef);
  std::sort(expect.begin(), expect.end());
  EXPECT_EQ(seen, expect);
  EXPECT_EQ(b.host[0], (uint64_t{n - 1} << 33) | 7);
  EXPECT_EQ(static_cast<int64_t>(b.host[1]), -static_cast<int64_t>(uint64_t{n - 1} << 33));
  EXPECT_EQ(b.host[2], ~0ull);
  EXPECT_EQ(b.host[3], 0ull);  // every bit toggled n / 64 (an even number of) times
  EXPECT_EQ(b.host[4], n % 1001);
}

// A lock taken with cas and released with exch by one thread per block; under it, a plain
// read-modify-write of a counter. Blocks run on several host threads, so a broken lock loses
// increments.
TEST(PtxVmAtomic, CasSpinLockAndCasCounter) {
  Vm vm(kWorkers);
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry lock(.param .u64 p_lock, .param .u64 p_data)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_lock];
  ld.param.u64 %rd2, [p_data];
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra COUNTER;
SPIN:
  atom.global.acquire.gpu.cas.b32 %r2, [%rd1], 0, 1;
  setp.ne.u32 %p2, %r2, 0;
  @%p2 bra SPIN;
  ld.global.u32 %r3, [%rd2];
  add.u32 %r3, %r3, 1;
  st.global.u32 [%rd2], %r3;
  ld.global.u64 %rd3, [%rd2+8];
  add.u64 %rd3, %rd3, 3;
  st.global.u64 [%rd2+8], %rd3;
  atom.global.release.gpu.exch.b32 %r4, [%rd1], 0;
COUNTER:
  // Every thread: increment data[4] with a compare-and-swap loop.
  ld.global.u32 %r5, [%rd2+16];
RETRY:
  add.u32 %r6, %r5, 1;
  atom.global.cas.b32 %r7, [%rd2+16], %r5, %r6;
  setp.ne.u32 %p3, %r7, %r5;
  mov.u32 %r5, %r7;
  @%p3 bra RETRY;
  ret;
}
)")));
  const uint32_t blocks = 300, threads = 64;
  auto& lock = vm.buffer(std::vector<uint32_t>{0});
  auto& data = vm.buffer(std::vector<uint32_t>(6, 0));
  EXPECT_RAN(vm.run1("lock", blocks, threads, Params().add(lock.address()).add(data.address())));
  EXPECT_EQ(lock.host[0], 0u);
  EXPECT_EQ(data.host[0], blocks);
  uint64_t guarded;
  std::memcpy(&guarded, &data.host[2], 8);
  EXPECT_EQ(guarded, 3ull * blocks);
  EXPECT_EQ(data.host[4], blocks * threads);
}

TEST(PtxVmAtomic, ContendedHalfPrecisionAdds) {
  Vm vm(kWorkers);
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry h(.param .u64 p)
{
  .reg .b16 %h<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  mul.wide.u32 %rd2, %r2, 2;
  add.s64 %rd3, %rd1, %rd2;
  // f16 adds of 1.0 to the two halves of word 0: odd threads the high one.
  mov.b16 %h1, 0x3C00;
  atom.global.add.noftz.f16 %h2, [%rd3], %h1;
  // f16x2 (1.0, 0.5) into word 1.
  mov.b32 %r3, 0x38003C00;
  red.global.add.noftz.f16x2 [%rd1+4], %r3;
  // bf16 1.0 into half 4: stuck at 256, where 256 + 1 is a tie that rounds to even.
  mov.b16 %h3, 0x3F80;
  atom.global.add.noftz.bf16 %h2, [%rd1+8], %h3;
  // bf16x2 (0.25, -0.25) into word 3.
  mov.b32 %r4, 0xBE803E80;
  atom.add.noftz.bf16x2 %r5, [%rd1+12], %r4;
  ret;
}
)")));
  const uint32_t blocks = 16, threads = 256;  // 4096 threads, 2048 per f16 half
  auto& buf = vm.buffer(std::vector<uint16_t>(8, 0));
  EXPECT_RAN(vm.run1("h", blocks, threads, Params().add(buf.address())));
  EXPECT_EQ(buf.host[0], 0x6800);  // 2048.0
  EXPECT_EQ(buf.host[1], 0x6800);
  // f16 2048 + 1 = 2049 is a tie between 2048 and 2050 that stays at 2048.
  EXPECT_EQ(buf.host[2], 0x6800);
  // 0.5 steps: exact up to 1024, where adding 0.5 is a tie that stays at 1024.
  EXPECT_EQ(buf.host[3], 0x6400);
  EXPECT_EQ(buf.host[4], 0x4380);  // 256.0
  EXPECT_EQ(buf.host[5], 0);       // untouched
  // 0.25 steps: exact up to 64, where adding 0.25 is a tie that stays at 64.
  EXPECT_EQ(buf.host[6], 0x4280);  // 64.0
  EXPECT_EQ(buf.host[7], 0xc280);  // -64.0
}

// ---- shared memory and generic addresses ---------------------------------------------------

TEST(PtxVmAtomic, SharedMemoryAtomicsInOneBlock) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry sh(.param .u64 p_out, .param .u64 p_old)
{
  .shared .align 8 .b8 s[64];
  .reg .pred %p<3>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<2>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u64 %rd2, [p_old];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 16;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.u32 %r4, %r3, %r2;
  @%p1 st.shared.u32 [%r4], 0;
  bar.sync 0;
  atom.shared.add.u32 %r5, [s], 1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r5;
  and.b32 %r6, %r1, 7;
  shl.b32 %r7, %r6, 2;
  add.u32 %r8, %r3, %r7;
  red.shared.add.u32 [%r8+4], 1;
  atom.shared.add.f32 %f1, [s+36], 0f3F000000;
  red.shared::cta.max.s32 [s+40], %r1;
  atom.shared.cta.inc.u32 %r9, [s+44], 9;
  cvt.u64.u32 %rd5, %r1;
  atom.shared.add.u64 %rd6, [s+48], %rd5;
  // A compare-and-swap increment loop: in each round one lane of the warp wins.
  ld.shared.u32 %r10, [s+56];
RETRY:
  add.u32 %r11, %r10, 1;
  atom.shared.cas.b32 %r13, [s+56], %r10, %r11;
  setp.ne.u32 %p2, %r13, %r10;
  mov.u32 %r10, %r13;
  @%p2 bra RETRY;
  bar.sync 0;
  @%p1 ld.shared.u32 %r12, [%r4];
  add.s64 %rd7, %rd1, %rd3;
  @%p1 st.global.u32 [%rd7], %r12;
  ret;
}
)")));
  const uint32_t threads = 256;
  auto& out = vm.buffer(std::vector<uint32_t>(16, 0xdeadbeef));
  auto& old = vm.buffer(std::vector<uint32_t>(threads, 0xffffffffu));
  EXPECT_RAN(vm.run1("sh", 1, threads, Params().add(out.address()).add(old.address())));
  EXPECT_EQ(out.host[0], threads);
  for (int i = 1; i <= 8; ++i) EXPECT_EQ(out.host[i], threads / 8) << "bin " << i - 1;
  float fsum;
  std::memcpy(&fsum, &out.host[9], 4);
  EXPECT_EQ(fsum, 0.5f * threads);
  EXPECT_EQ(out.host[10], threads - 1);
  EXPECT_EQ(out.host[11], threads % 10);
  uint64_t sum;
  std::memcpy(&sum, &out.host[12], 8);
  EXPECT_EQ(sum, uint64_t{threads} * (threads - 1) / 2);
  EXPECT_EQ(out.host[14], threads);
  EXPECT_EQ(out.host[15], 0u);
  std::vector<uint32_t> sorted = old.host;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < threads; ++i) ASSERT_EQ(sorted[i], i);
}

TEST(PtxVmAtomic, GenericAddressesReachGlobalAndShared) {
  Vm vm(kWorkers);
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry gen(.param .u64 p_g, .param .u64 p_out)
{
  .shared .align 4 .b8 s[12];
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<2>;
  ld.param.u64 %rd1, [p_g];
  ld.param.u64 %rd2, [p_out];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 3;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.u32 %r4, %r3, %r2;
  @%p1 st.shared.u32 [%r4], 0;
  bar.sync 0;
  mov.u64 %rd3, s;
  cvta.shared.u64 %rd4, %rd3;
  atom.add.u32 %r5, [%rd4], 1;
  atom.add.u32 %r5, [s+4], 2;
  red.max.u32 [%rd4+8], %r1;
  atom.add.u32 %r6, [%rd1], 1;
  atom.add.f32 %f1, [%rd1+4], 0f3F800000;
  bar.sync 0;
  @%p1 ld.shared.u32 %r7, [%r4];
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd2, %rd5;
  @%p1 st.global.u32 [%rd6], %r7;
  ret;
}
)")));
  auto& g = vm.buffer(std::vector<uint32_t>{0, 0});
  auto& out = vm.buffer(std::vector<uint32_t>{7, 7, 7});
  EXPECT_RAN(vm.run1("gen", 50, 128, Params().add(g.address()).add(out.address())));
  EXPECT_EQ(out.host, (std::vector<uint32_t>{128, 256, 127}));
  EXPECT_EQ(g.host[0], 50u * 128);
  float f;
  std::memcpy(&f, &g.host[1], 4);
  EXPECT_EQ(f, 50.0f * 128);
}

// ---- faults ---------------------------------------------------------------------------------

const std::string kFaulting = module(R"(
.visible .entry g(.param .u64 p, .param .u64 off)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [off];
  add.s64 %rd3, %rd1, %rd2;
  atom.global.add.u32 %r1, [%rd3], 1;
  ret;
}
.visible .entry s(.param .u32 off)
{
  .shared .align 4 .b8 sh[64];
  .reg .b32 %r<4>;
  ld.param.u32 %r1, [off];
  red.shared.add.u32 [%r1], 1;
  ret;
}
.visible .entry gen64(.param .u64 p)
{
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  atom.cas.b64 %rd2, [%rd1], 0, 1;
  ret;
}
.visible .entry loc()
{
  .local .align 4 .b8 l[8];
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  mov.u64 %rd1, l;
  cvta.local.u64 %rd2, %rd1;
  atom.add.u32 %r1, [%rd2], 1;
  ret;
}
)");

TEST(PtxVmAtomic, OutOfBoundsAndMisalignedAtomicsFault) {
  Vm vm;
  ASSERT_TRUE(vm.load(kFaulting));
  auto& buf = vm.buffer(std::vector<uint32_t>(8, 0));
  Fault f = vm.run1("g", 1, 1, Params().add(buf.address()).add(uint64_t{32}));
  EXPECT_EQ(f.kind, FaultKind::kIllegalAddress) << f.message;
  EXPECT_NE(f.message.find("atomic of 4 bytes"), std::string::npos) << f.message;
  f = vm.run1("g", 1, 1, Params().add(buf.address()).add(uint64_t{2}));
  EXPECT_EQ(f.kind, FaultKind::kMisalignedAddress) << f.message;
  EXPECT_RAN(vm.run1("g", 1, 1, Params().add(buf.address()).add(uint64_t{28})));
  EXPECT_EQ(buf.host[7], 1u);
  f = vm.run1("s", 1, 1, Params().add(uint32_t{64}));
  EXPECT_EQ(f.kind, FaultKind::kIllegalAddress) << f.message;
  EXPECT_NE(f.message.find("shared"), std::string::npos) << f.message;
  f = vm.run1("s", 1, 1, Params().add(uint32_t{6}));
  EXPECT_EQ(f.kind, FaultKind::kMisalignedAddress) << f.message;
  f = vm.run1("gen64", 1, 1, Params().add(buf.address() + 4));
  EXPECT_EQ(f.kind, FaultKind::kMisalignedAddress) << f.message;
  f = vm.run1("loc", 1, 1, Params());
  EXPECT_EQ(f.kind, FaultKind::kIllegalAddress) << f.message;
  EXPECT_NE(f.message.find("local"), std::string::npos) << f.message;
}

TEST(PtxVmAtomic, RefusesWhatItCannotRun) {
  const auto refused = [](const std::string& ins, const std::string& regs) {
    Vm vm;
    return vm.load_error(module(".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<4>;\n" +
                                regs + "\n  ld.param.u64 %rd1, [p];\n  " + ins + ";\n  ret;\n}\n"));
  };
  std::string log =
      refused("atom.global.v2.f32.add {%f1, %f2}, [%rd1], {%f1, %f2}", ".reg .f32 %f<4>;");
  EXPECT_NE(log.find("vector"), std::string::npos) << log;
  log = refused("atom.global.add.f16 %h1, [%rd1], %h2", ".reg .b16 %h<4>;");
  EXPECT_NE(log.find(".noftz"), std::string::npos) << log;
  log = refused("atom.global.max.f32 %f1, [%rd1], %f2", ".reg .f32 %f<4>;");
  EXPECT_NE(log.find("max"), std::string::npos) << log;
  log = refused("red.global.cas.b32 [%rd1], %r1, %r2", ".reg .b32 %r<4>;");
  EXPECT_NE(log.find("cas"), std::string::npos) << log;
  log = refused("atom.global.exch.b128 %q1, [%rd1], %q2", ".reg .b128 %q<4>;");
  EXPECT_NE(log.find("128"), std::string::npos) << log;
  log = refused("atom.shared::cluster.add.u32 %r1, [%rd1], 1", ".reg .b32 %r<4>;");
  EXPECT_NE(log.find("cluster"), std::string::npos) << log;
  log = refused("atom.global.min.b32 %r1, [%rd1], 1", ".reg .b32 %r<4>;");
  EXPECT_NE(log.find("min"), std::string::npos) << log;
  log = refused("atom.global.add.u32 %r1, [%rd1]", ".reg .b32 %r<4>;");
  EXPECT_NE(log.find("expected"), std::string::npos) << log;
  log = refused("atom.global.add.u32 %rd2, [%rd1], 1", "");
  EXPECT_NE(log.find("bit"), std::string::npos) << log;
}

TEST(PtxVmAtomic, CacheHintOperandIsAccepted) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  createpolicy.fractional.L2::evict_last.b64 %rd2, 0.25;
  atom.global.add.L2::cache_hint.u32 %r1, [%rd1], 5, %rd2;
  red.global.add.L2::cache_hint.u32 [%rd1], 2, %rd2;
  atom.global.add.u32 _, [%rd1], 1;
  ret;
}
)")));
  auto& buf = vm.buffer(std::vector<uint32_t>{10});
  EXPECT_RAN(vm.run1("k", 1, 32, Params().add(buf.address())));
  EXPECT_EQ(buf.host[0], 10u + 32 * 8);
}

// ---- Triton ---------------------------------------------------------------------------------

// Triton's histogram (tl.atomic_add with a mask): it loads, and counts exactly.
TEST(PtxVmAtomic, TritonHistogram) {
  std::string ptx = triton_ptx("histogram_atomic.ptx");
  ASSERT_FALSE(ptx.empty());
  hal::ptx_vm::LoadError error;
  hal::ptx_vm::Program::load(ptx.data(), ptx.size(), {}, &error);
  EXPECT_EQ(error.log.find("atom"), std::string::npos) << error.log;
  // Triton writes its masked loads with a one-register vector, "ld.global.b32 { %r1 }, [..]";
  // write them as plain registers, so that this test depends only on the atomics.
  for (const std::string reg : {"%r1", "%r2"}) {
    const std::string braced = "{ " + reg + " }";
    for (size_t at = ptx.find(braced); at != std::string::npos; at = ptx.find(braced)) {
      ptx.replace(at, braced.size(), reg);
    }
  }
  Vm vm(kWorkers);
  ASSERT_TRUE(vm.load(ptx));
  const int32_t n = 100000, bins = 64, block = 256;
  std::vector<int32_t> x(n);
  uint32_t seed = 12345;
  for (int32_t& v : x) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<int32_t>(seed >> 8) % (bins + 10) - 5;  // some below 0, some past the bins
  }
  std::vector<int32_t> expect(bins, 0);
  for (int32_t v : x) {
    if (v >= 0 && v < bins) ++expect[v];
  }
  auto& in = vm.buffer(x);
  auto& counts = vm.buffer(std::vector<int32_t>(bins, 0));
  const uint32_t grid = (n + block - 1) / block;
  EXPECT_RAN(vm.run1("histogram_atomic", grid, 128,
                     Params()
                         .add(in.address())
                         .add(counts.address())
                         .add(n)
                         .add(bins)
                         .add(uint64_t{0})
                         .add(uint64_t{0}),
                     2048));
  EXPECT_EQ(counts.host, expect);
}

}  // namespace
}  // namespace ptx_vm_test
