// Area Execution: what a device must do with a kernel however long it runs and however its
// threads diverge. Loops run exactly their trip count, nested or not; call chains return through
// every level; loops of different trip counts in one subgroup meet again at a barrier; a kernel
// that keeps the device busy for seconds completes. Each in every IR the device takes among
// SPIR-V and PTX, with the results checked against the host. A device that stops a loop early is
// told how many steps it ran, which names a loop limiter for what it is.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

// One step of the kernels' mix (kernels/loops.comp).
uint32_t step(uint32_t x) {
  x = x * 1664525u + 1013904223u;
  return x ^ (x >> 13);
}

constexpr uint32_t kWorkgroups = 4;  // four independent chains, seeded 0 to 3

class Execution : public DeviceTest {
 protected:
  // Runs |outer| x |inner| steps in kernel |k| and checks each chain against the host. A wrong
  // result is looked up among the chain's earlier values, so the report says how many steps the
  // device ran when it stopped early; one failure per launch, naming the first wrong chain.
  void expect_steps(const OwnKernel& k, hal_function f, uint32_t outer, uint32_t inner) {
    const uint64_t steps = uint64_t{outer} * inner;
    const std::string what = std::string(k.ir_name) + " kernel, " + std::to_string(outer) + " x " +
                             std::to_string(inner) + " = " + std::to_string(steps) + " steps";
    Buffer out(device(), kWorkgroups * 4);
    ASSERT_TRUE(out.ok()) << out.error();
    CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0xDEADBEEFu, kWorkgroups));
    void* args[] = {&out.ptr, &outer, &inner};
    const hal_launch_config c = {{kWorkgroups, 1, 1}, {1, 1, 1}, 0};
    CTS_ASSERT_OK(hal_launch(stream_, f, &c, args));
    uint32_t got[kWorkgroups] = {};
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got, out.ptr, sizeof got));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));

    uint32_t wrong = 0;
    std::string first;
    for (uint32_t w = 0; w < kWorkgroups; ++w) {
      uint32_t x = w;
      uint64_t ran = UINT64_MAX;  // the first step count whose value the device wrote
      for (uint64_t s = 0; s < steps; ++s) {
        if (x == got[w] && ran == UINT64_MAX) ran = s;
        x = step(x);
      }
      if (x == got[w] || wrong++ > 0) continue;
      first = ran != UINT64_MAX
                  ? "chain " + std::to_string(w) + " stopped after " + std::to_string(ran) +
                        " steps: the device ends long loops early, without an error, so every "
                        "kernel whose loops run that long computes a wrong result"
                  : "chain " + std::to_string(w) + " holds " + std::to_string(got[w]) +
                        ", the value of no step count up to " + std::to_string(steps) + "; " +
                        std::to_string(x) + " was expected";
    }
    if (wrong > 0) {
      ADD_FAILURE() << what << ": " << wrong << " of " << kWorkgroups << " chains wrong; " << first;
    }
  }
};

// Loops of 2^16 - 1, 2^16 and 2^16 + 1 steps (where a 16-bit trip counter would stop), 2^20,
// and in the full run 2^24: each runs exactly its count.
TEST_P(Execution, LongLoopsRunTheirWholeTripCount) {
  std::vector<uint32_t> counts = {65535, 65536, 65537, 1u << 20};
  if (!options().quick) counts.push_back(1u << 24);
  for_each_own_kernel("loops", [&](const OwnKernel& k, hal_function f) {
    for (uint32_t count : counts) ASSERT_NO_FATAL_FAILURE(expect_steps(k, f, 1, count));
  });
}

// A short inner loop inside an outer one, 2^17 steps in all: the inner loop's count starts
// again with each outer step. A limiter that counts across the nest stops the whole kernel.
TEST_P(Execution, NestedLoopsRunEveryOuterStep) {
  for_each_own_kernel("loops",
                      [&](const OwnKernel& k, hal_function f) { expect_steps(k, f, 128, 1024); });
}

// Compares the per-thread results of a kernel with the host's; one failure naming how many
// threads are wrong and the first of them.
void expect_per_thread(const std::string& what, const std::vector<uint32_t>& got,
                       const std::vector<uint32_t>& want) {
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i] && wrong++ == 0) first = i;
  }
  if (wrong > 0) {
    ADD_FAILURE() << what << ": " << wrong << " of " << want.size()
                  << " threads computed a wrong result; thread " << first << " wrote " << got[first]
                  << ", " << want[first] << " was expected";
  }
}

// Launches |f| on |groups| x 64 threads with one 32-bit value parameter after the output
// pointer, and reads one word per thread back into |got|.
void run_per_thread(hal_device device, hal_stream stream, hal_function f, uint32_t groups,
                    uint32_t value, std::vector<uint32_t>* got) {
  const size_t threads = size_t{groups} * 64;
  Buffer out(device, threads * 4);
  ASSERT_TRUE(out.ok()) << out.error();
  CTS_ASSERT_OK(hal_memset_d32(stream, out.ptr, 0xDEADBEEFu, threads));
  void* args[] = {&out.ptr, &value};
  const hal_launch_config c = {{groups, 1, 1}, {64, 1, 1}, 0};
  CTS_ASSERT_OK(hal_launch(stream, f, &c, args));
  got->assign(threads, 0);
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream, got->data(), out.ptr, threads * 4));
  CTS_ASSERT_OK(hal_stream_synchronize(stream));
}

// The call chain of kernels/exec_calls: level k returns early when bits k to k + 2 of its
// argument are 5, and otherwise calls level k - 1 with an argument and a result chosen by bit k.
uint32_t level(int k, uint32_t x) {
  if (k == 0) return step(x);
  const uint32_t b = (x >> k) & 7u, kk = static_cast<uint32_t>(k);
  if (b == 5) return x * 3u;
  const uint32_t r = level(k - 1, (b & 1u) != 0 ? x ^ kk : x + kk);
  return (b & 1u) != 0 ? r + kk : r * 3u;
}

// Twelve levels of calls, to a depth that differs from lane to lane, called from either side of
// a branch that splits the subgroup, in a loop: every thread's result must be the host's. A
// device (or a translator) that loses a return value, a parameter or a path through the chain
// gets wrong results.
TEST_P(Execution, CallChainsReturnThroughEveryLevel) {
  constexpr uint32_t kGroups = 4, kRounds = 8;
  std::vector<uint32_t> want(kGroups * 64);
  for (uint32_t t = 0; t < want.size(); ++t) {
    uint32_t x = t;
    for (uint32_t r = 0; r < kRounds; ++r)
      x = (x & 1u) != 0 ? level(12, x + r) : level(12, x ^ r) + 1u;
    want[t] = x;
  }
  for_each_own_kernel("exec_calls", [&](const OwnKernel& k, hal_function f) {
    std::vector<uint32_t> got;
    ASSERT_NO_FATAL_FAILURE(run_per_thread(device(), stream_, f, kGroups, kRounds, &got));
    expect_per_thread(std::string(k.ir_name) + " kernel, 12 levels of calls, " +
                          std::to_string(kRounds) + " rounds",
                      got, want);
  });
}

// The divergent loops of kernels/exec_divergent for |spread|: each thread's trip count is
// (7 t) mod spread, with a continue, a data-dependent break and an inner loop of its own length.
std::vector<uint32_t> divergent_loops(uint32_t threads, uint32_t spread) {
  std::vector<uint32_t> ends(threads), counts(threads), out(threads);
  for (uint32_t t = 0; t < threads; ++t) {
    uint32_t x = t;
    const uint32_t n = (t * 7u) % spread;
    for (uint32_t i = 0; i < n; ++i) {
      x = step(x);
      if ((x & 7u) == 0) continue;
      if (x % 97u == 3u) break;
      const uint32_t m = (x >> 5) & 7u;
      for (uint32_t j = 0; j < m; ++j) x += j ^ t;
    }
    ends[t] = x;
    counts[t] = n;
  }
  for (uint32_t t = 0; t < threads; ++t) {
    const uint32_t next = (t & ~63u) | ((t + 1) & 63u);  // within the workgroup of 64
    out[t] = ends[t] ^ (ends[next] * 2654435761u) ^ counts[t];
  }
  return out;
}

// Loops whose trip counts differ from lane to lane (up to 60, then up to 1020, with breaks,
// continues and inner loops), then a barrier every thread must reach and a read of the next
// thread's result. A device that loses lanes that finish early or late, or runs the barrier
// before every lane is there, gets wrong results (or hangs, which the run's time limit shows).
TEST_P(Execution, DivergentLoopsMeetAtTheBarrier) {
  constexpr uint32_t kGroups = 16;
  for_each_own_kernel("exec_divergent", [&](const OwnKernel& k, hal_function f) {
    for (uint32_t spread : {61u, 1021u}) {
      std::vector<uint32_t> got;
      ASSERT_NO_FATAL_FAILURE(run_per_thread(device(), stream_, f, kGroups, spread, &got));
      expect_per_thread(std::string(k.ir_name) + " kernel, trip counts 0 to " +
                            std::to_string(spread - 1) + " in each subgroup",
                        got, divergent_loops(kGroups * 64, spread));
    }
  });
}

// A kernel that keeps the device busy for seconds (a quarter of a second in the quick run)
// completes with every workgroup's result: a driver or an operating system that ends long
// kernels (a watchdog, a timeout) fails it. The grid grows from one workgroup until a launch takes
// that long, or reaches the device's limits; every launch is checked, in closed form: each thread
// runs kLongSteps steps of x = a x + c from its global index, which is A x + C.
TEST_P(Execution, LongRunningKernelsComplete) {
  // Under 65535, so that a device that ends long loops early fails only LongLoops.
  constexpr uint32_t kLongSteps = 50000;
  uint32_t a_n = 1, c_n = 0;  // x after kLongSteps steps is a_n * x + c_n
  for (uint32_t i = 0; i < kLongSteps; ++i) {
    a_n *= 1664525u;
    c_n = c_n * 1664525u + 1013904223u;
  }
  const double target_s = options().quick ? 0.25 : 4.0;
  // Thread indices stay below 2^32; the grid within the device's limits, x first.
  const uint64_t max_x = info().max_grid_dim[0];
  const uint64_t max_groups =
      std::min<uint64_t>(max_x * info().max_grid_dim[1], (uint64_t{1} << 32) / 64);
  for_each_own_kernel(
      "exec_long", [&](const OwnKernel& k, hal_function f) {
        Buffer out(device(), 8);
        ASSERT_TRUE(out.ok()) << out.error();
        uint64_t groups = 1;
        double seconds = 0;
        for (;;) {
          const uint32_t gx = static_cast<uint32_t>(std::min(groups, max_x));
          const uint32_t gy = static_cast<uint32_t>((groups + gx - 1) / gx);
          groups = uint64_t{gx} * gy;
          CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0, 2));
          CTS_ASSERT_OK(hal_stream_synchronize(stream_));
          uint32_t steps = kLongSteps;
          void* args[] = {&out.ptr, &steps};
          const hal_launch_config c = {{gx, gy, 1}, {64, 1, 1}, 0};
          // A device that ends the kernel with an error (a watchdog) fails below, in context.
          SCOPED_TRACE("a launch of " + std::to_string(gx) + " x " + std::to_string(gy) +
                       " workgroups, after one that took " + std::to_string(seconds) + " s");
          const double start = now_ms();
          CTS_ASSERT_OK(hal_launch(stream_, f, &c, args));
          uint32_t got[2] = {};
          CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got, out.ptr, sizeof got));
          CTS_ASSERT_OK(hal_stream_synchronize(stream_));
          seconds = (now_ms() - start) / 1000;
          const uint64_t threads = groups * 64;
          // The sum of a_n t + c_n over t < threads, modulo 2^32: threads (threads - 1) / 2 fits in
          // 64 bits for threads up to 2^32.
          const uint32_t want_sum =
              static_cast<uint32_t>(a_n * static_cast<uint32_t>(threads * (threads - 1) / 2) +
                                    c_n * static_cast<uint32_t>(threads));
          const std::string what = std::string(k.ir_name) + " kernel, " + std::to_string(gx) +
                                   " x " + std::to_string(gy) + " workgroups of 64 threads, " +
                                   std::to_string(kLongSteps) + " steps each, ran " +
                                   std::to_string(seconds) + " s";
          ASSERT_EQ(got[1], static_cast<uint32_t>(groups))
              << what << ": " << got[1] << " of " << groups << " workgroups reported finishing"
              << (got[1] < groups ? ", and the kernel ended without an error" : "");
          ASSERT_EQ(got[0], want_sum)
              << what
              << ": every workgroup finished, but the sum of the "
                 "threads' results is wrong: some threads computed wrong values";
          if (seconds >= target_s || groups >= max_groups) break;
          // Up to 64 times more work a launch, aiming a little past the target.
          const double factor = std::clamp(target_s * 1.2 / std::max(seconds, 1e-4), 2.0, 64.0);
          groups = std::min<uint64_t>(max_groups, static_cast<uint64_t>(groups * factor));
        }
        char note[160];
        std::snprintf(note, sizeof note, "%s: %llu workgroups in %.2f s", k.ir_name,
                      static_cast<unsigned long long>(groups), seconds);
        RecordProperty(std::string("long_kernel_") + (k.ir == HAL_IR_PTX ? "ptx" : "spirv"), note);
        std::printf(" [%s]", note);
        std::fflush(stdout);
        if (seconds < target_s) {
          RecordProperty("note", "the largest grid ran in less than the target of " +
                                     std::to_string(target_s) + " s");
        }
      });
}

INSTANTIATE_TEST_SUITE_P(, Execution, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
