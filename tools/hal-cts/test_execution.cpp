// Area Execution: what a device must do with a kernel however long it runs. Loops run exactly
// their trip count, nested or not, in every IR the device takes among SPIR-V and PTX, with the
// result checked step for step against the host. A device that stops a loop early is told how
// many steps it ran, which names a loop limiter for what it is.
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

INSTANTIATE_TEST_SUITE_P(, Execution, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
