// Area MemoryModel: what the memory models of SPIR-V (Vulkan's) and PTX promise about the order
// and atomicity of memory accesses, in every IR the device takes among SPIR-V and PTX.
//  - Message passing: a consumer that sees a flag set with the synchronization its IR requires
//    (fences around atomic flag accesses, release and acquire accesses, barriers) must see the
//    data written before it, between workgroups through global memory and between the threads
//    of a workgroup through shared memory. Without that synchronization the IRs allow stale data:
//    those runs are made too, but what they show is only reported.
//  - Atomics: every read-modify-write the IR offers on 32-bit integers (64-bit integers and 32-bit
//    floats where the device has them), on global and shared memory, many threads on one address
//    and on a few, each final value exact and each value an atomic hands out seen exactly once.
//  - Barriers inside loops: a block-wide sum repeated round after round, each round checked.
//  - Visibility: host writes reach kernels, and kernel writes reach the host, across copies,
//    mapped memory and a second stream ordered by an event.
// No kernel waits for another workgroup or thread without bound: a consumer reads a flag a
// bounded number of times and counts only the cases where it saw it set, so a device that does
// not run workgroups concurrently (lavapipe runs them on a few threads) still finishes.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

// The operand of step |i| of thread |g| in the kernels (kernels/mm_*.comp).
uint32_t v32(uint32_t g, uint32_t i) {
  return (g * 0x9E3779B1u) ^ (i * 0x85EBCA77u);
}
uint64_t v64(uint32_t g, uint32_t i) {
  return uint64_t{v32(g, i)} * 0x9E3779B97F4A7C15ull;
}

constexpr uint32_t kBlock = 64;  // the block of every kernel here but mm_barrier_loop

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

class MemoryModel : public DeviceTest {
 protected:
  // Informational lines (reorderings a run without synchronization showed): recorded as a test
  // property and printed under the test's line; they never fail the test.
  void note(const std::string& key, const std::string& text) {
    RecordProperty(key, text);
    std::printf("\n    note: %s", text.c_str());
    std::fflush(stdout);
    noted_ = true;
  }
  void TearDown() override {
    if (noted_) std::printf("\n   ");  // the test's outcome follows on a line of its own
    DeviceTest::TearDown();
  }
  bool noted_ = false;

  template <typename T>
  void upload(const Buffer& b, const std::vector<T>& v) {
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, b.ptr, v.data(), v.size() * sizeof(T)));
  }
  template <typename T>
  void download(std::vector<T>* v, const Buffer& b) {
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, v->data(), b.ptr, v->size() * sizeof(T)));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
  }
  // Launches |f| with |args|, which must be as many as its parameters: an IR whose compiler
  // dropped an unused buffer would otherwise take the arguments shifted.
  void launch(hal_function f, uint32_t grid, uint32_t block, std::vector<void*> args) {
    hal_function_info fi{};
    fi.struct_size = sizeof fi;
    CTS_ASSERT_OK(hal_function_get_info(f, &fi));
    ASSERT_EQ(fi.param_count, args.size())
        << "the kernel " << fi.name << " has " << fi.param_count << " parameters, not "
        << args.size() << " as hal-cts passes";
    const hal_launch_config c = {{grid, 1, 1}, {block, 1, 1}, 0};
    CTS_ASSERT_OK(hal_launch(stream_, f, &c, args.data()));
  }

  // ---- Message passing --------------------------------------------------------------------

  // Outcomes of the consumers' (code, value) pairs: 1 data seen, 2 stale, 3 flag not seen, 0 no
  // result written.
  struct Tally {
    uint64_t seen = 0, stale = 0, unseen = 0, missing = 0;
    std::string first_stale, first_missing;
  };
  // |describe_slot(index, value)| says what entry |index| was and what the consumer read.
  static void tally(const std::vector<uint32_t>& result, Tally* t,
                    const std::function<std::string(size_t, uint32_t)>& describe_slot) {
    for (size_t e = 0; e < result.size() / 2; ++e) {
      const uint32_t code = result[2 * e];
      if (code == 1) {
        ++t->seen;
      } else if (code == 3) {
        ++t->unseen;
      } else if (code == 2) {
        if (t->stale++ < 3) t->first_stale += "; " + describe_slot(e, result[2 * e + 1]);
      } else if (t->missing++ < 3) {
        t->first_missing += "; entry " + std::to_string(e) + " holds " + std::to_string(code);
      }
    }
  }

  // mm_mp_global or mm_mp_global_acqrel: |pairs| producer and consumer workgroups, |reps|
  // launches of |iters| steps. |fenced| is passed only to mm_mp_global.
  void run_mp_global(hal_function f, bool acqrel, uint32_t fenced, Tally* t) {
    const uint32_t pairs = 4;
    const uint32_t iters = options().quick ? 32 : 128;
    const uint32_t reps = options().quick ? 2 : 16;
    uint32_t spins = 64;
    const size_t slots = size_t{pairs} * kBlock * iters;
    Buffer data(device(), slots * 4), flag(device(), slots * 4), result(device(), slots * 8);
    ASSERT_TRUE(data.ok() && flag.ok() && result.ok())
        << data.error() << flag.error() << result.error();
    std::vector<uint32_t> got(slots * 2);
    uint32_t it = iters;
    for (uint32_t rep = 0; rep < reps; ++rep) {
      CTS_ASSERT_OK(hal_memset_d32(stream_, data.ptr, 0, slots));
      CTS_ASSERT_OK(hal_memset_d32(stream_, flag.ptr, 0, slots));
      CTS_ASSERT_OK(hal_memset_d32(stream_, result.ptr, 0, slots * 2));
      if (acqrel) {
        ASSERT_NO_FATAL_FAILURE(
            launch(f, 2 * pairs, kBlock, {&data.ptr, &flag.ptr, &result.ptr, &it, &spins}));
      } else {
        ASSERT_NO_FATAL_FAILURE(launch(f, 2 * pairs, kBlock,
                                       {&data.ptr, &flag.ptr, &result.ptr, &it, &fenced, &spins}));
      }
      ASSERT_NO_FATAL_FAILURE(download(&got, result));
      tally(got, t, [](size_t s, uint32_t d) {
        return "slot " + std::to_string(s) + ": flag seen set, data read " + hex(d) + " where " +
               hex(s + 1) + " was written before the flag";
      });
    }
  }

  // mm_mp_shared (|mode| 0 none, 1 fences, 2 barriers) or mm_mp_shared_acqrel (|mode| ignored).
  void run_mp_shared(hal_function f, bool acqrel, uint32_t mode, Tally* t) {
    const uint32_t groups = 4;
    uint32_t iters = options().quick ? 64 : 256;
    const uint32_t reps = options().quick ? 1 : 8;
    uint32_t spins = 32;
    const size_t entries = size_t{groups} * iters * kBlock;
    Buffer result(device(), entries * 8);
    ASSERT_TRUE(result.ok()) << result.error();
    std::vector<uint32_t> got(entries * 2);
    for (uint32_t rep = 0; rep < reps; ++rep) {
      CTS_ASSERT_OK(hal_memset_d32(stream_, result.ptr, 0, entries * 2));
      if (acqrel) {
        ASSERT_NO_FATAL_FAILURE(launch(f, groups, kBlock, {&result.ptr, &iters, &spins}));
      } else {
        ASSERT_NO_FATAL_FAILURE(launch(f, groups, kBlock, {&result.ptr, &iters, &mode, &spins}));
      }
      ASSERT_NO_FATAL_FAILURE(download(&got, result));
      tally(got, t, [&](size_t e, uint32_t d) {
        const uint32_t th = e % kBlock, i = (e / kBlock) % iters, w = e / kBlock / iters;
        const uint32_t q = (th + 32 + i % 32) % 64;
        return "workgroup " + std::to_string(w) + ", step " + std::to_string(i) + ": thread " +
               std::to_string(th) + " saw thread " + std::to_string(q) + "'s flag " +
               std::to_string(i + 1) + " but read its data as " + hex(d) + ", not " +
               hex(((i + 1) << 16) | q);
      });
    }
  }

  // Fails on stale data (the rule broken is |rule|) and on missing results; notes how often the
  // flag was seen, since a run in which no consumer saw a flag checked nothing.
  void expect_no_stale(const OwnKernel& k, const std::string& what, const std::string& rule,
                       const Tally& t) {
    EXPECT_EQ(t.missing, 0u) << k.ir_name << " " << what << ": " << t.missing
                             << " consumers wrote no result, so the kernel did not run every step"
                             << t.first_missing;
    EXPECT_EQ(t.stale, 0u) << k.ir_name << " " << what << ": " << t.stale << " of "
                           << (t.seen + t.stale) << " consumers that saw the flag set read stale "
                           << "data; " << rule << t.first_stale;
    if (t.seen == 0) {
      note(std::string(k.ir_name) + "_unchecked",
           std::string(k.ir_name) + " " + what + ": no consumer saw a flag within its bounded " +
               "reads (the device ran producers after consumers), so nothing was checked");
    }
  }

  // ---- Atomics ----------------------------------------------------------------------------

  // One launch of an integer atomic kernel (mm_atomic32, mm_atomic64, mm_atomic64_shared) and
  // its checks: operation |op|, |addrs| addresses, |shared| memory, initial value |init|.
  template <typename T>
  void check_atomics(const OwnKernel& k, hal_function f, uint32_t op, bool shared, uint32_t addrs,
                     T init, bool space_param) {
    using S = typename std::make_signed<T>::type;
    static const char* const kNames[] = {"add",
                                         "add 1 (ticket)",
                                         "add of the negation",
                                         "min.u",
                                         "max.u",
                                         "min.s",
                                         "max.s",
                                         "and",
                                         "or",
                                         "xor",
                                         "exchange",
                                         "compare-exchange counter",
                                         "inc 999",
                                         "dec 999"};
    const uint32_t groups = 8;
    uint32_t iters = options().quick ? 16 : 64;
    const uint32_t threads = groups * kBlock;
    const std::string what =
        std::string(k.ir_name) + " atomic " + kNames[op] + " (" + std::to_string(sizeof(T) * 8) +
        "-bit) on " + (shared ? "shared" : "global") + " memory, " + std::to_string(threads) +
        " threads x " + std::to_string(iters) + " steps on " + std::to_string(addrs) +
        " address(es)" + (shared ? " per workgroup" : "");
    const size_t outs = size_t{groups} * addrs;
    Buffer out(device(), outs * sizeof(T)), tickets(device(), size_t{threads} * iters * sizeof(T));
    ASSERT_TRUE(out.ok() && tickets.ok()) << out.error() << tickets.error();
    ASSERT_NO_FATAL_FAILURE(upload(out, std::vector<T>(outs, init)));
    uint32_t o = op, a = addrs, sp = shared ? 1 : 0;
    uint32_t lo = static_cast<uint32_t>(uint64_t{init}),
             hi = static_cast<uint32_t>(uint64_t{init} >> 32);
    uint32_t init32 = lo;
    if (space_param) {
      ASSERT_NO_FATAL_FAILURE(launch(
          f, groups, kBlock, {&out.ptr, &out.ptr, &tickets.ptr, &o, &iters, &a, &sp, &init32}));
    } else {
      ASSERT_NO_FATAL_FAILURE(
          launch(f, groups, kBlock, {&out.ptr, &out.ptr, &tickets.ptr, &o, &iters, &a, &lo, &hi}));
    }
    std::vector<T> got(outs), tick(size_t{threads} * iters);
    ASSERT_NO_FATAL_FAILURE(download(&got, out));
    ASSERT_NO_FATAL_FAILURE(download(&tick, tickets));

    auto value = [&](uint32_t g, uint32_t i) -> T {
      return sizeof(T) == 8 ? static_cast<T>(v64(g, i)) : static_cast<T>(v32(g, i));
    };
    auto exch_value = [&](uint32_t g, uint32_t i) -> T {
      const uint64_t u = uint64_t{g} * iters + i + 1;
      return sizeof(T) == 8 ? static_cast<T>(u * 0x100000001ull) : static_cast<T>(u);
    };
    uint32_t wrong = 0, gave_up = 0;
    std::string first;
    auto fail = [&](const std::string& text) {
      if (wrong++ < 3) first += "; " + text;
    };
    // Each address: the threads that use it, one group (the whole grid for global memory, one
    // workgroup for shared memory) at a time.
    const uint32_t group_count = shared ? groups : 1;
    for (uint32_t grp = 0; grp < group_count; ++grp) {
      for (uint32_t addr = 0; addr < addrs; ++addr) {
        const std::string where = "address " + std::to_string(addr) +
                                  (shared ? " of workgroup " + std::to_string(grp) : std::string());
        T expect = init;
        std::vector<T> returned, handed;
        uint64_t n = 0;
        const uint32_t g0 = shared ? grp * kBlock : 0, g1 = shared ? g0 + kBlock : threads;
        for (uint32_t g = g0; g < g1; ++g) {
          if (g % addrs != addr) continue;
          for (uint32_t i = 0; i < iters; ++i) {
            const T v = value(g, i);
            const T r = tick[size_t{g} * iters + i];
            ++n;
            switch (op) {
              case 0:
                expect = static_cast<T>(expect + v);
                break;
              case 2:
                expect = static_cast<T>(expect - v);
                break;
              case 3:
                expect = std::min(expect, v);
                break;
              case 4:
                expect = std::max(expect, v);
                break;
              case 5:
                expect = static_cast<T>(std::min(static_cast<S>(expect), static_cast<S>(v)));
                break;
              case 6:
                expect = static_cast<T>(std::max(static_cast<S>(expect), static_cast<S>(v)));
                break;
              case 7:
                expect &= v;
                break;
              case 8:
                expect |= v;
                break;
              case 9:
                expect ^= v;
                break;
              case 10:
                returned.push_back(r);
                handed.push_back(exch_value(g, i));
                break;
              case 11:
                if (r == static_cast<T>(~T{0})) {
                  ++gave_up;
                  --n;
                } else {
                  returned.push_back(r);
                }
                break;
              default:  // 1, 12, 13: the returned values are a sequence from init
                returned.push_back(r);
                break;
            }
          }
        }
        const T final_value = got[shared ? size_t{grp} * addrs + addr : addr];
        if (op == 1 || op == 11 || op == 12 || op == 13) {
          // The values handed out: init, init + 1, ... (inc and dec: modulo 1000, up and down).
          handed.clear();
          for (uint64_t j = 0; j < n; ++j) {
            if (op == 12)
              handed.push_back(static_cast<T>((init + j) % 1000));
            else if (op == 13)
              handed.push_back(static_cast<T>((init + 1000 * n - j) % 1000));
            else
              handed.push_back(static_cast<T>(init + j));
          }
          expect = op == 12   ? static_cast<T>((init + n) % 1000)
                   : op == 13 ? static_cast<T>((init + 1000 * n - n) % 1000)
                              : static_cast<T>(init + n);
        } else if (op == 10) {
          // Every value written, and the initial one, comes back exactly once: from an
          // exchange, or as the final value.
          returned.push_back(final_value);
          handed.push_back(init);
          expect = final_value;  // any of them may be last
        }
        if (final_value != expect) {
          fail(where + " ends as " + hex(final_value) + ", expected " + hex(expect) + " after " +
               std::to_string(n) + " operations from " + hex(init));
        }
        if (!handed.empty() || !returned.empty()) {
          std::sort(returned.begin(), returned.end());
          std::sort(handed.begin(), handed.end());
          if (returned != handed) {
            size_t j = 0;
            while (j < returned.size() && j < handed.size() && returned[j] == handed[j]) ++j;
            const bool dup = j < returned.size() && j > 0 && returned[j] == returned[j - 1];
            fail(where +
                 ": the values the atomics returned are not each value handed out "
                 "exactly once: " +
                 (j < returned.size() ? hex(returned[j]) + (dup ? " twice" : " returned")
                                      : std::string("one missing")) +
                 (j < handed.size() ? ", where " + hex(handed[j]) + " was due" : std::string()));
          }
        }
      }
    }
    if (wrong > 0) {
      ADD_FAILURE() << what << ": " << wrong << " wrong; the atomic read-modify-writes of one "
                    << "address apply one at a time and none is lost (SPIR-V OpAtomic*, PTX "
                    << "atom), so each final value is exact and every value is handed out once"
                    << first;
    }
    if (gave_up > 0) {
      note(std::string(k.ir_name) + "_cas_gave_up",
           what + ": " + std::to_string(gave_up) +
               " compare-exchange loops gave up after 4096 tries (allowed: no thread is "
               "promised progress under contention; those are left out of the count)");
    }
  }

  // ---- Visibility -------------------------------------------------------------------------

  static uint32_t transform(uint32_t x, uint32_t i, uint32_t salt) {
    return ((x ^ salt) * 0x9E3779B1u) + i;
  }
  // Words |n|, not a multiple of the block, so the tail is checked.
  static uint32_t visibility_words() { return options().quick ? 65536 + 13 : (1u << 22) + 13; }

  // Which words of |got| differ from transform(src[i], i, salt): a count and the first few, or
  // "" when none.
  static std::string check_words(const uint32_t* got, const std::vector<uint32_t>& src,
                                 uint32_t salt) {
    size_t wrong = 0;
    std::string first;
    for (uint32_t i = 0; i < src.size(); ++i) {
      const uint32_t want = transform(src[i], i, salt);
      if (got[i] != want && wrong++ < 3) {
        first += "; word " + std::to_string(i) + " is " + hex(got[i]) + ", expected " + hex(want);
      }
    }
    return wrong == 0 ? std::string()
                      : std::to_string(wrong) + " of " + std::to_string(src.size()) +
                            " words wrong" + first;
  }
};

std::vector<uint32_t> words(uint32_t n, uint32_t seed) {
  std::vector<uint32_t> out(n);
  const std::vector<uint8_t> bytes = pattern(size_t{n} * 4, seed);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// ---- Message passing ------------------------------------------------------------------------

// Between workgroups, through global memory: data store, release fence, atomic flag store;
// atomic flag load, acquire fence, data load (SPIR-V: Coherent buffers and OpMemoryBarrier at
// device scope with AcquireRelease|UniformMemory; PTX: membar.gl). Synchronizes-with, so the
// data load must return the data stored.
TEST_P(MemoryModel, GlobalMessagePassingWithFences) {
  for_each_own_kernel("mm_mp_global", [&](const OwnKernel& k, hal_function f) {
    Tally t;
    ASSERT_NO_FATAL_FAILURE(run_mp_global(f, false, 1, &t));
    expect_no_stale(k, "message passing between workgroups with fences",
                    "a release fence before the flag's atomic store and an acquire fence after "
                    "its atomic load that read it make the data store happen before the data "
                    "load (Vulkan memory model fence-atomic synchronization; PTX memory model, "
                    "release and acquire patterns of membar.gl)",
                    t);
  });
}

// The same with a release store and an acquire load of the flag (SPIR-V: the Vulkan memory
// model, OpAtomicStore Release|MakeAvailable and OpAtomicLoad Acquire|MakeVisible at queue-family
// scope; PTX: st.release.gpu and ld.acquire.gpu, sm_70). A device without the Vulkan memory model
// refuses the SPIR-V kernel, and one older than sm_70 the PTX, each noted.
TEST_P(MemoryModel, GlobalMessagePassingReleaseAcquire) {
  for_each_own_kernel("mm_mp_global_acqrel", [&](const OwnKernel& k, hal_function f) {
    Tally t;
    ASSERT_NO_FATAL_FAILURE(run_mp_global(f, true, 0, &t));
    expect_no_stale(k,
                    "message passing between workgroups with a release store and an acquire "
                    "load of the flag",
                    "a release store read by an acquire load synchronizes with it, so the data "
                    "store happens before the data load (Vulkan memory model; PTX memory model)",
                    t);
  });
}

// Without fences both IRs allow the consumer to see the flag and stale data: only reported.
TEST_P(MemoryModel, GlobalMessagePassingWithoutFencesIsReportedOnly) {
  for_each_own_kernel("mm_mp_global", [&](const OwnKernel& k, hal_function f) {
    Tally t;
    ASSERT_NO_FATAL_FAILURE(run_mp_global(f, false, 0, &t));
    EXPECT_EQ(t.missing, 0u) << k.ir_name << ": " << t.missing << " consumers wrote no result"
                             << t.first_missing;
    note(std::string(k.ir_name) + "_reorderings",
         std::string(k.ir_name) +
             " global message passing without fences: " + std::to_string(t.stale) +
             " stale reads of " + std::to_string(t.seen + t.stale) + " flags seen (allowed)");
  });
}

// Between the threads of a workgroup, through shared memory: fences at workgroup scope (SPIR-V:
// OpMemoryBarrier Workgroup, AcquireRelease|WorkgroupMemory; PTX: membar.cta).
TEST_P(MemoryModel, SharedMessagePassingWithFences) {
  for_each_own_kernel("mm_mp_shared", [&](const OwnKernel& k, hal_function f) {
    Tally t;
    ASSERT_NO_FATAL_FAILURE(run_mp_shared(f, false, 1, &t));
    expect_no_stale(k, "message passing through shared memory with fences",
                    "a workgroup-scope release fence before the flag's atomic store and an acquire "
                    "fence after the atomic load that read it order the data accesses (Vulkan "
                    "memory model; PTX memory model, membar.cta)",
                    t);
  });
}

// The same with a workgroup barrier between the writes and the reads: every flag must be seen
// set, with its data (SPIR-V OpControlBarrier with WorkgroupMemory semantics; PTX bar.sync).
TEST_P(MemoryModel, SharedMessagePassingWithBarriers) {
  for_each_own_kernel("mm_mp_shared", [&](const OwnKernel& k, hal_function f) {
    Tally t;
    ASSERT_NO_FATAL_FAILURE(run_mp_shared(f, false, 2, &t));
    expect_no_stale(k, "message passing through shared memory across a barrier",
                    "a workgroup barrier orders the shared-memory writes of every thread before "
                    "the reads after it (SPIR-V OpControlBarrier, PTX bar.sync)",
                    t);
    EXPECT_EQ(t.unseen, 0u) << k.ir_name << ": " << t.unseen << " of "
                            << (t.seen + t.stale + t.unseen)
                            << " flags were not seen set after the barrier, although every thread "
                               "set its flag before it (SPIR-V OpControlBarrier, PTX bar.sync)";
  });
}

TEST_P(MemoryModel, SharedMessagePassingReleaseAcquire) {
  for_each_own_kernel("mm_mp_shared_acqrel", [&](const OwnKernel& k, hal_function f) {
    Tally t;
    ASSERT_NO_FATAL_FAILURE(run_mp_shared(f, true, 0, &t));
    expect_no_stale(k,
                    "message passing through shared memory with a release store and an "
                    "acquire load of the flag",
                    "a workgroup-scope release store read by an acquire load synchronizes with "
                    "it (Vulkan memory model; PTX memory model, st.release.cta, ld.acquire.cta)",
                    t);
  });
}

TEST_P(MemoryModel, SharedMessagePassingWithoutFencesIsReportedOnly) {
  for_each_own_kernel("mm_mp_shared", [&](const OwnKernel& k, hal_function f) {
    Tally t;
    ASSERT_NO_FATAL_FAILURE(run_mp_shared(f, false, 0, &t));
    EXPECT_EQ(t.missing, 0u) << k.ir_name << ": " << t.missing << " threads wrote no result"
                             << t.first_missing;
    note(std::string(k.ir_name) + "_reorderings",
         std::string(k.ir_name) +
             " shared message passing without fences: " + std::to_string(t.stale) +
             " stale reads of " + std::to_string(t.seen + t.stale) + " flags seen (allowed)");
  });
}

// ---- Atomics --------------------------------------------------------------------------------

// 32-bit integers: every operation, global and shared memory, one address and seven. PTX also
// has atom.inc and atom.dec (wrapping at a bound), which SPIR-V has not.
TEST_P(MemoryModel, Atomics32BitExact) {
  static const uint32_t kInit[] = {0x12345678u, 0xFFFFFF00u, 0x12345678u, 0xFFFFFFFFu, 0u,
                                   0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0u,          0x0F0F0F0Fu,
                                   0u,          0x7FFFFFF0u, 990u,        5u};
  for_each_own_kernel("mm_atomic32", [&](const OwnKernel& k, hal_function f) {
    const uint32_t ops = k.ir == HAL_IR_PTX ? 14 : 12;
    for (uint32_t op = 0; op < ops; ++op) {
      for (bool shared : {false, true}) {
        for (uint32_t addrs : {1u, 7u}) {
          ASSERT_NO_FATAL_FAILURE(
              check_atomics<uint32_t>(k, f, op, shared, addrs, kInit[op], true));
        }
      }
    }
  });
}

// 64-bit integers, where the device has them: operands that use all 64 bits, and counters that
// cross 2^32. hal.h has no feature bit for 64-bit atomics: a Vulkan device without
// shaderBufferInt64Atomics refuses the SPIR-V kernel's Int64Atomics capability at load
// (HAL_ERROR_NOT_SUPPORTED, naming it), and one that translates PTX refuses 64-bit shared-memory
// atomics; each refusal is noted, and the test skipped with it when no IR ran. Every CUDA device
// runs them.
const uint64_t kInit64[] = {0x0123456789ABCDEFull,
                            0xFFFFFF00ull,
                            0x0123456789ABCDEFull,
                            ~0ull,
                            0ull,
                            0x7FFFFFFFFFFFFFFFull,
                            0x8000000000000000ull,
                            ~0ull,
                            0ull,
                            0x0F0F0F0F0F0F0F0Full,
                            0ull,
                            0xFFFFFFF0ull};

TEST_P(MemoryModel, Atomics64BitGlobalExact) {
  for_each_own_kernel("mm_atomic64", [&](const OwnKernel& k, hal_function f) {
    for (uint32_t op = 0; op < 12; ++op) {
      for (uint32_t addrs : {1u, 7u}) {
        ASSERT_NO_FATAL_FAILURE(
            check_atomics<uint64_t>(k, f, op, false, addrs, kInit64[op], false));
      }
    }
  });
}

TEST_P(MemoryModel, Atomics64BitSharedExact) {
  for_each_own_kernel("mm_atomic64_shared", [&](const OwnKernel& k, hal_function f) {
    for (uint32_t op = 0; op < 12; ++op) {
      for (uint32_t addrs : {1u, 7u}) {
        ASSERT_NO_FATAL_FAILURE(check_atomics<uint64_t>(k, f, op, true, addrs, kInit64[op], false));
      }
    }
  });
}

// 32-bit float add (SPIR-V AtomicFloat32AddEXT of VK_EXT_shader_atomic_float, which a device
// without it refuses at load: no feature bit of hal.h says it; PTX atom.add.f32).
// Every operand is a multiple of 0.25 and every partial sum stays below 2^22, so each sum is
// exact in any order of the additions: the final value is exact, not merely close.
TEST_P(MemoryModel, AtomicFloatAddExact) {
  for_each_own_kernel("mm_atomic_f32", [&](const OwnKernel& k, hal_function f) {
    const uint32_t groups = 8;
    uint32_t iters = options().quick ? 16 : 64;
    for (uint32_t space : {0u, 1u}) {
      for (uint32_t addrs : {1u, 7u}) {
        Buffer out(device(), size_t{groups} * addrs * 4);
        ASSERT_TRUE(out.ok()) << out.error();
        CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0, size_t{groups} * addrs));
        uint32_t a = addrs, sp = space;
        ASSERT_NO_FATAL_FAILURE(launch(f, groups, kBlock, {&out.ptr, &iters, &a, &sp}));
        std::vector<float> got(size_t{groups} * addrs);
        ASSERT_NO_FATAL_FAILURE(download(&got, out));
        const uint32_t group_count = space == 1 ? groups : 1;
        uint32_t wrong = 0;
        std::string first;
        for (uint32_t grp = 0; grp < group_count; ++grp) {
          for (uint32_t addr = 0; addr < addrs; ++addr) {
            double want = 0;
            const uint32_t g0 = space == 1 ? grp * kBlock : 0;
            const uint32_t g1 = space == 1 ? g0 + kBlock : groups * kBlock;
            for (uint32_t g = g0; g < g1; ++g) {
              if (g % addrs != addr) continue;
              for (uint32_t i = 0; i < iters; ++i) want += (v32(g, i) & 15u) * 0.25 + 0.25;
            }
            const float gotv = got[space == 1 ? size_t{grp} * addrs + addr : addr];
            if (gotv != static_cast<float>(want) && wrong++ < 3) {
              first += "; address " + std::to_string(addr) +
                       (space == 1 ? " of workgroup " + std::to_string(grp) : std::string()) +
                       " holds " + std::to_string(gotv) + ", expected " + std::to_string(want);
            }
          }
        }
        EXPECT_EQ(wrong, 0u) << k.ir_name << " atomic float add on "
                             << (space == 1 ? "shared" : "global") << " memory, " << groups * kBlock
                             << " threads x " << iters << " steps on " << addrs
                             << " address(es): " << wrong
                             << " sums wrong; every partial sum is exact in f32, so lost or "
                                "repeated additions are the only way to get another value"
                             << first;
      }
    }
  });
}

// ---- Barriers in loops ----------------------------------------------------------------------

// A 256-thread tree sum in shared memory, repeated round after round inside a loop of barriers.
// A barrier that does not order shared memory, or lets a thread through early, gives a wrong
// round (SPIR-V OpControlBarrier with WorkgroupMemory semantics; PTX bar.sync).
TEST_P(MemoryModel, BarriersInLoopsOrderEveryRound) {
  for_each_own_kernel("mm_barrier_loop", [&](const OwnKernel& k, hal_function f) {
    const uint32_t groups = 4, block = 256;
    uint32_t rounds = options().quick ? 128 : 1024;
    Buffer out(device(), size_t{groups} * rounds * 4);
    ASSERT_TRUE(out.ok()) << out.error();
    CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0xDEADBEEFu, size_t{groups} * rounds));
    ASSERT_NO_FATAL_FAILURE(launch(f, groups, block, {&out.ptr, &rounds}));
    std::vector<uint32_t> got(size_t{groups} * rounds);
    ASSERT_NO_FATAL_FAILURE(download(&got, out));
    uint32_t wrong = 0;
    std::string first;
    for (uint32_t w = 0; w < groups; ++w) {
      for (uint32_t r = 0; r < rounds; ++r) {
        uint32_t want = 0;
        for (uint32_t t = 0; t < block; ++t) want += v32(w * block + t, r);
        const uint32_t g = got[size_t{w} * rounds + r];
        if (g != want && wrong++ < 3) {
          first += "; workgroup " + std::to_string(w) + " round " + std::to_string(r) + ": " +
                   hex(g) + ", expected " + hex(want);
        }
      }
    }
    EXPECT_EQ(wrong, 0u) << k.ir_name << " block-wide sum of 256 threads, " << rounds
                         << " rounds in a loop, each of 10 barriers, in " << groups
                         << " workgroups: " << wrong
                         << " round results wrong; each barrier must make every thread's "
                            "shared-memory writes before it visible to every thread after it, "
                            "and release no thread before all arrive (SPIR-V OpControlBarrier, "
                            "PTX bar.sync)"
                         << first;
  });
}

// ---- Visibility -----------------------------------------------------------------------------

// Host writes in pinned memory (hal_host_alloc) reach a kernel through hal_memcpy_htod, and the
// kernel's writes reach pinned memory through hal_memcpy_dtoh once the stream is synchronized,
// every word. The source of a copy may be changed as soon as hal_memcpy_htod returns (hal.h):
// it is overwritten at once, and the kernel must still read what was there at the call.
TEST_P(MemoryModel, HostWritesReachKernelsAndBackThroughCopies) {
  for_each_own_kernel("mm_visibility", [&](const OwnKernel& k, hal_function f) {
    uint32_t n = visibility_words();
    void* host_src = nullptr;
    void* host_dst = nullptr;
    CTS_ASSERT_OK(hal_host_alloc(device(), size_t{n} * 4, &host_src));
    const hal_status hs = hal_host_alloc(device(), size_t{n} * 4, &host_dst);
    if (hs != HAL_SUCCESS) hal_host_free(device(), host_src);
    ASSERT_EQ(hs, HAL_SUCCESS) << describe(hs);
    Buffer src(device(), size_t{n} * 4), dst(device(), size_t{n} * 4);
    ASSERT_TRUE(src.ok() && dst.ok()) << src.error() << dst.error();
    uint32_t* hsrc = static_cast<uint32_t*>(host_src);
    uint32_t* hdst = static_cast<uint32_t*>(host_dst);
    for (uint32_t round = 0; round < 3; ++round) {
      const std::vector<uint32_t> in = words(n, 40 + round);
      std::memcpy(hsrc, in.data(), size_t{n} * 4);
      std::memset(hdst, 0xA5, size_t{n} * 4);
      CTS_EXPECT_OK(hal_memcpy_htod(stream_, src.ptr, hsrc, size_t{n} * 4));
      std::memset(hsrc, 0x5A, size_t{n} * 4);  // allowed once the call has returned
      uint32_t salt = 0x1000u + round;
      const hal_launch_config c = {{64, 1, 1}, {kBlock, 1, 1}, 0};
      void* args[] = {&src.ptr, &dst.ptr, &n, &salt};
      CTS_EXPECT_OK(hal_launch(stream_, f, &c, args));
      CTS_EXPECT_OK(hal_memcpy_dtoh(stream_, hdst, dst.ptr, size_t{n} * 4));
      CTS_EXPECT_OK(hal_stream_synchronize(stream_));
      const std::string bad = check_words(hdst, in, salt);
      EXPECT_TRUE(bad.empty()) << k.ir_name << " round " << round
                               << ": pinned host memory -> hal_memcpy_htod -> kernel -> "
                                  "hal_memcpy_dtoh -> pinned memory, synchronized: "
                               << bad
                               << " (hal.h: a copy's source is read during the call, and a "
                                  "dtoh destination holds the data once the stream is "
                                  "synchronized)";
      if (HasFailure()) break;
    }
    CTS_EXPECT_OK(hal_host_free(device(), host_src));
    CTS_EXPECT_OK(hal_host_free(device(), host_dst));
  });
}

// On a device whose memory the host maps (hal_mem_host_pointer): host writes through the mapping
// reach a kernel issued after them, and the kernel's writes are in the mapping once the stream
// is synchronized, round after round on the same memory.
TEST_P(MemoryModel, MappedDeviceMemoryIsVisibleBothWays) {
  uint32_t n = visibility_words();
  Buffer src(device(), size_t{n} * 4), dst(device(), size_t{n} * 4);
  ASSERT_TRUE(src.ok() && dst.ok()) << src.error() << dst.error();
  void* host_src = nullptr;
  void* host_dst = nullptr;
  const hal_status s = hal_mem_host_pointer(device(), src.ptr, &host_src);
  if (s == HAL_ERROR_NOT_SUPPORTED) {
    GTEST_SKIP() << "The device's memory has no host address (hal_mem_host_pointer is "
                    "HAL_ERROR_NOT_SUPPORTED); the copies are checked by "
                    "HostWritesReachKernelsAndBackThroughCopies.";
  }
  ASSERT_EQ(s, HAL_SUCCESS) << describe(s);
  CTS_ASSERT_OK(hal_mem_host_pointer(device(), dst.ptr, &host_dst));
  uint32_t* hsrc = static_cast<uint32_t*>(host_src);
  uint32_t* hdst = static_cast<uint32_t*>(host_dst);
  for_each_own_kernel("mm_visibility", [&](const OwnKernel& k, hal_function f) {
    for (uint32_t round = 0; round < 3; ++round) {
      const std::vector<uint32_t> in = words(n, 70 + round);
      std::memcpy(hsrc, in.data(), size_t{n} * 4);
      uint32_t salt = 0x2000u + round;
      const hal_launch_config c = {{64, 1, 1}, {kBlock, 1, 1}, 0};
      void* args[] = {&src.ptr, &dst.ptr, &n, &salt};
      CTS_ASSERT_OK(hal_launch(stream_, f, &c, args));
      CTS_ASSERT_OK(hal_stream_synchronize(stream_));
      const std::string bad = check_words(hdst, in, salt);
      EXPECT_TRUE(bad.empty()) << k.ir_name << " round " << round
                               << ": host writes through hal_mem_host_pointer, then a kernel, "
                                  "synchronized, then host reads through the mapping: "
                               << bad
                               << " (hal.h: the device sees the host's writes made before the "
                                  "work is issued, and the host the device's after synchronizing)";
      if (HasFailure()) return;
    }
  });
}

// A kernel on a second stream, ordered after the first stream's kernel only by an event, reads
// every word that kernel wrote; the first stream waits for the second through another event
// before it overwrites the buffer in the next round. The host synchronizes the second stream
// only, then reads every round's result.
TEST_P(MemoryModel, SecondStreamSeesWritesOrderedByAnEvent) {
  for_each_own_kernel("mm_visibility", [&](const OwnKernel& k, hal_function f) {
    uint32_t n = options().quick ? 65536 + 13 : (1u << 20) + 13;
    const uint32_t rounds = 4;
    Buffer src(device(), size_t{n} * 4), mid(device(), size_t{n} * 4);
    ASSERT_TRUE(src.ok() && mid.ok()) << src.error() << mid.error();
    std::vector<std::unique_ptr<Buffer>> dst;
    for (uint32_t r = 0; r < rounds; ++r) {
      dst.push_back(std::make_unique<Buffer>(device(), size_t{n} * 4));
      ASSERT_TRUE(dst.back()->ok()) << dst.back()->error();
    }
    hal_stream other = nullptr;
    hal_event produced = nullptr, consumed = nullptr;
    CTS_EXPECT_OK(hal_stream_create(device(), &other));
    CTS_EXPECT_OK(hal_event_create(device(), &produced));
    CTS_EXPECT_OK(hal_event_create(device(), &consumed));
    const std::vector<uint32_t> in = words(n, 99);
    std::vector<std::vector<uint32_t>> got(rounds, std::vector<uint32_t>(n));
    if (!HasFailure()) {
      CTS_EXPECT_OK(hal_memcpy_htod(stream_, src.ptr, in.data(), size_t{n} * 4));
      const hal_launch_config c = {{64, 1, 1}, {kBlock, 1, 1}, 0};
      for (uint32_t r = 0; r < rounds; ++r) {
        uint32_t salt1 = 0x3000u + r, salt2 = 0x4000u + r;
        void* a1[] = {&src.ptr, &mid.ptr, &n, &salt1};
        void* a2[] = {&mid.ptr, &dst[r]->ptr, &n, &salt2};
        CTS_EXPECT_OK(hal_stream_wait_event(stream_, consumed));
        CTS_EXPECT_OK(hal_launch(stream_, f, &c, a1));
        CTS_EXPECT_OK(hal_event_record(produced, stream_));
        CTS_EXPECT_OK(hal_stream_wait_event(other, produced));
        CTS_EXPECT_OK(hal_launch(other, f, &c, a2));
        CTS_EXPECT_OK(hal_event_record(consumed, other));
      }
      for (uint32_t r = 0; r < rounds; ++r) {
        CTS_EXPECT_OK(hal_memcpy_dtoh(other, got[r].data(), dst[r]->ptr, size_t{n} * 4));
      }
      CTS_EXPECT_OK(hal_stream_synchronize(other));
    }
    if (!HasFailure()) {
      for (uint32_t r = 0; r < rounds; ++r) {
        const uint32_t salt2 = 0x4000u + r;
        size_t wrong = 0;
        std::string first;
        for (uint32_t i = 0; i < n; ++i) {
          const uint32_t want = transform(transform(in[i], i, 0x3000u + r), i, salt2);
          if (got[r][i] != want && wrong++ < 3) {
            first +=
                "; word " + std::to_string(i) + " is " + hex(got[r][i]) + ", expected " + hex(want);
          }
        }
        EXPECT_EQ(wrong, 0u) << k.ir_name << " round " << r << ": a kernel on a second stream, "
                             << "after hal_stream_wait_event on an event recorded after the "
                             << "first stream's kernel, read " << wrong << " of " << n
                             << " words other than that kernel wrote (hal.h: the wait makes later "
                                "work on the stream wait for the captured work)"
                             << first;
      }
    }
    if (other != nullptr) CTS_EXPECT_OK(hal_stream_destroy(other));
    CTS_EXPECT_OK(hal_stream_synchronize(stream_));
    if (produced != nullptr) CTS_EXPECT_OK(hal_event_destroy(produced));
    if (consumed != nullptr) CTS_EXPECT_OK(hal_event_destroy(consumed));
  });
}

INSTANTIATE_TEST_SUITE_P(, MemoryModel, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
