// Area Limits: the limits a device advertises (hal_device_info) are usable, each used for real.
// The whole of max_shared_memory_per_block holds what a block's threads write to it; the largest
// allocation is written and read at both ends, by copies on every device and by a kernel where
// the device runs hal-cts's own; value parameters fill the push constants every Vulkan device
// allows and the parameter space the PTX ISA allows; the device's own push-constant limit is
// found, filled, and one word beyond it refused. Each kernel check runs in SPIR-V and in PTX
// where the device takes both. The Launch area checks the grid and block limits.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

// The word limits_shared writes at index |i| for seed |s| (kernels/limits_shared.comp).
uint32_t shared_pattern(uint32_t i, uint32_t s) {
  uint32_t x = (i * 2654435761u) ^ s;
  x ^= x >> 15;
  x *= 2246822519u;
  x ^= x >> 13;
  return x;
}

// A CPU device's memory (and a unified-memory device's) is the host's, shared with every other
// process, and its max_allocation_size follows the host's RAM (lavapipe: 2 GiB less 256 bytes,
// from its maxMemoryAllocationSize; the CPU PTX device: half the RAM). The checks touch only
// the ends, but a driver may commit or clear the whole allocation: 1 GiB keeps that from
// pressing the host into swap or the out-of-memory killer, and still puts the last page 2^30
// bytes from the first.
constexpr uint64_t kHostMemoryCap = uint64_t{1} << 30;
constexpr uint32_t kEndBytes = 4096;  // checked at each end

std::string hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

// Mismatches between |want| and |got|, as "what[i]: expected X, got Y" for the first three and
// a count: empty when they agree. |input| (optional) adds each word's input to the listing.
std::string mismatches(const std::string& what, const std::vector<uint32_t>& want,
                       const std::vector<uint32_t>& got, const std::vector<uint32_t>* input,
                       size_t index_base = 0) {
  size_t wrong = 0;
  std::string first;
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] == want[i]) continue;
    if (wrong++ < 3) {
      first += std::string(first.empty() ? "" : "; ") + what + "[" +
               std::to_string(index_base + i) + "]";
      if (input != nullptr) first += " from " + hex((*input)[i]);
      first += ": expected " + hex(want[i]) + ", got " + hex(got[i]);
    }
  }
  if (wrong == 0) return "";
  return std::to_string(wrong) + " of " + std::to_string(want.size()) + " words wrong (" + first +
         (wrong > 3 ? "; ..." : "") + ")";
}

// A device allocation freed at the end of its scope.
struct Allocation {
  hal_device device = nullptr;
  hal_deviceptr ptr = 0;
  uint64_t size = 0;
  ~Allocation() {
    if (ptr != 0) hal_mem_free(device, ptr);
  }
};

class Limits : public DeviceTest {
 protected:
  // for_each_own_kernel, with module options of its own per IR (|options| may leave them
  // default): the shared-bytes constant of SPIR-V, which PTX does not have.
  void for_each_own_kernel_with(
      const std::string& base,
      const std::function<void(const OwnKernel&, hal_module_options*)>& options,
      const std::function<void(const OwnKernel&, hal_function)>& body) {
    const std::vector<OwnKernel> kernels = own_kernels(base);
    if (kernels.empty()) GTEST_SKIP() << no_own_kernels();
    std::string refused;
    size_t ran = 0;
    for (const OwnKernel& k : kernels) {
      hal_module_options o{};
      o.struct_size = sizeof o;
      o.ir = k.ir;
      options(k, &o);
      hal_module module = nullptr;
      hal_function function = nullptr;
      hal_status s = hal_module_load(device(), k.file->data, k.file->size, &o, &module);
      if (s == HAL_SUCCESS) s = hal_module_get_function(module, k.entry.c_str(), &function);
      if (s == HAL_ERROR_NOT_SUPPORTED) {
        refused += std::string(refused.empty() ? "" : "; ") + "the " + k.ir_name + " kernel " +
                   k.file->name + ": " + describe(s);
      } else if (s != HAL_SUCCESS) {
        ADD_FAILURE() << "loading hal-cts's kernel " << k.file->name << " (" << k.entry << ") -> "
                      << describe(s);
      } else {
        SCOPED_TRACE(std::string("in ") + k.ir_name + " (" + k.file->name + ")");
        ++ran;
        body(k, function);
      }
      if (module != nullptr) CTS_EXPECT_OK(hal_module_unload(module));
      if (HasFatalFailure()) return;
    }
    if (ran == 0 && !refused.empty()) GTEST_SKIP() << "The device refuses " << refused;
    if (!refused.empty()) RecordProperty("refused", "The device refuses " + refused);
  }

  // Allocates the largest allocation these checks use into |a|. A device whose memory is its
  // own: max_allocation_size, and where that is refused as out of memory (memory in use by the
  // driver or others, which Vulkan's maxMemoryAllocationSize and CUDA's total memory both
  // allow), 1/16 of it less, up to 8 times. A device whose memory is the host's: at most
  // kHostMemoryCap. The size and the reason are printed on the test's line and recorded.
  void allocate_largest(Allocation* a) {
    const uint64_t max = info().max_allocation_size;
    const bool host_memory = info().is_cpu != 0 || info().unified_memory != 0;
    a->device = device();
    uint64_t size = max;
    std::string why = "max_allocation_size";
    if (host_memory && max > kHostMemoryCap) {
      size = kHostMemoryCap;
      why = "capped at 1 GiB: the device's memory is the host's, shared with every process";
    }
    ASSERT_GE(size, uint64_t{4} * kEndBytes)
        << "max_allocation_size is " << max << " bytes, too small for two separate ends";
    hal_status s = HAL_ERROR_OUT_OF_MEMORY;
    std::string refusals;
    const uint64_t step = size / 16;
    for (int tries = 0; tries <= (host_memory ? 0 : 8); ++tries) {
      s = hal_mem_alloc(device(), static_cast<size_t>(size), &a->ptr);
      if (s != HAL_ERROR_OUT_OF_MEMORY) break;
      refusals += std::string(refusals.empty() ? "" : ", ") + std::to_string(size);
      size -= step;
      size &= ~uint64_t{255};
    }
    if (refusals.empty()) {
      ASSERT_EQ(s, HAL_SUCCESS) << "hal_mem_alloc of " << size << " bytes (max_allocation_size "
                                << max << ", " << why << ") -> " << describe(s);
    } else {
      ASSERT_EQ(s, HAL_SUCCESS) << "hal_mem_alloc refused every size from max_allocation_size ("
                                << max << " bytes) down: " << refusals << " bytes -> "
                                << describe(s);
    }
    if (!refusals.empty()) {
      why = "max_allocation_size less what was in use: " + refusals +
            " bytes were refused as out of memory";
    }
    a->size = size;
    const std::string note = std::to_string(size) + " bytes of max_allocation_size " +
                             std::to_string(max) + " (" + why + ")";
    RecordProperty("allocation", note);
    std::printf(" [%s]", note.c_str());
    std::fflush(stdout);
  }
};

// Every byte of the device's shared memory per block, written by the block's threads with a
// pattern and read back by other threads after a barrier, then copied out and checked; four
// blocks, each with its own pattern, so blocks sharing one array show too. SPIR-V sizes its
// array by the module's shared-bytes constant (docs/ABI.md), PTX by its .extern .shared
// array; either way it is hal_launch_config.shared_bytes, and the kernel declares no static
// shared memory. One byte more is HAL_ERROR_OUT_OF_RANGE, naming the bytes and the limit.
TEST_P(Limits, SharedMemoryAtTheLimit) {
  const uint32_t limit = info().max_shared_memory_per_block;
  if (own_kernels("limits_shared").empty()) GTEST_SKIP() << no_own_kernels();
  if (limit < 4) {
    GTEST_SKIP() << "The device reports " << limit
                 << " bytes of shared memory per block (max_shared_memory_per_block): none to "
                    "check.";
  }
  const uint32_t words = limit / 4;  // a limit not a multiple of 4 leaves its last bytes out
  std::printf(" [shared memory: %u bytes]", limit);
  std::fflush(stdout);
  const uint32_t blocks = 4;
  for_each_own_kernel_with(
      "limits_shared",
      [](const OwnKernel& k, hal_module_options* o) {
        if (k.ir != HAL_IR_SPIRV) return;
        o->flags = HAL_MODULE_SHARED_BYTES_CONSTANT;
        o->shared_bytes_constant_id = 0;
      },
      [&](const OwnKernel& k, hal_function f) {
        hal_function_info fi{};
        fi.struct_size = sizeof fi;
        CTS_ASSERT_OK(hal_function_get_info(f, &fi));
        EXPECT_EQ(fi.static_shared_bytes, 0u)
            << "the kernel's only shared array is sized at launch, so it declares no static "
               "shared memory";
        Buffer out(device(), size_t{blocks} * words * 4);
        ASSERT_TRUE(out.ok()) << out.error();
        CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0xDEADBEEFu, size_t{blocks} * words));
        uint32_t n = words;
        uint32_t seed = k.ir == HAL_IR_SPIRV ? 0x51ED0001u : 0x51ED0002u;
        void* args[] = {&out.ptr, &n, &seed};
        hal_launch_config c = {{blocks, 1, 1}, {64, 1, 1}, limit};
        CTS_ASSERT_OK(hal_launch(stream_, f, &c, args));
        std::vector<uint32_t> got(size_t{blocks} * words);
        CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), out.ptr, got.size() * 4));
        CTS_ASSERT_OK(hal_stream_synchronize(stream_));
        uint32_t wrong_blocks = 0;
        std::string first;
        for (uint32_t b = 0; b < blocks; ++b) {
          const uint32_t s = seed ^ (b * 0x9E3779B9u);
          std::vector<uint32_t> want(words),
              block_got(got.begin() + size_t{b} * words, got.begin() + size_t{b + 1} * words);
          for (uint32_t i = 0; i < words; ++i) want[i] = shared_pattern(i, s);
          const std::string bad = mismatches("shared word", want, block_got, nullptr);
          if (!bad.empty() && wrong_blocks++ == 0)
            first = "block " + std::to_string(b) + ": " + bad;
        }
        EXPECT_EQ(wrong_blocks, 0u)
            << wrong_blocks << " of " << blocks << " blocks of 64 threads, each with " << limit
            << " bytes of dynamic shared memory (max_shared_memory_per_block), did not read back "
               "every word as their threads wrote it before a barrier (each word is read by "
               "another thread than its writer); "
            << first;
        // One byte beyond the limit, refused before any driver sees it.
        c.shared_bytes = limit + 1;
        CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch", hal_launch(stream_, f, &c, args));
        const std::string message = hal_last_error();
        EXPECT_NE(message.find(std::to_string(limit + 1)), std::string::npos)
            << "the refusal does not name the " << limit + 1 << " bytes asked for: " << message;
        EXPECT_NE(message.find(std::to_string(limit)), std::string::npos)
            << "the refusal does not name the limit of " << limit << " bytes: " << message;
        CTS_EXPECT_OK(hal_stream_synchronize(stream_));
      });
}

// The largest allocation's first and last 4 KiB, written and read back by copies: htod and dtoh
// at each end, and a dtod from the last page to the second. Needs no kernel, so it runs on
// every device, a device of built-in kernels too.
TEST_P(Limits, LargestAllocationEndsByCopies) {
  Allocation a;
  ASSERT_NO_FATAL_FAILURE(allocate_largest(&a));
  SCOPED_TRACE("an allocation of " + std::to_string(a.size) + " bytes");
  const uint64_t tail = a.size - kEndBytes;
  const std::vector<uint8_t> head_in = pattern(kEndBytes, 11), tail_in = pattern(kEndBytes, 12);
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, a.ptr, head_in.data(), kEndBytes));
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, a.ptr + tail, tail_in.data(), kEndBytes));
  CTS_ASSERT_OK(hal_memcpy_dtod(stream_, a.ptr + kEndBytes, a.ptr + tail, kEndBytes));
  std::vector<uint8_t> head_out(kEndBytes), tail_out(kEndBytes), second_out(kEndBytes);
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, head_out.data(), a.ptr, kEndBytes));
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, tail_out.data(), a.ptr + tail, kEndBytes));
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, second_out.data(), a.ptr + kEndBytes, kEndBytes));
  CTS_ASSERT_OK(hal_stream_synchronize(stream_));
  EXPECT_EQ(first_difference(head_in.data(), head_out.data(), kEndBytes), -1)
      << "the first 4 KiB did not read back as written (htod then dtoh at offset 0)";
  EXPECT_EQ(first_difference(tail_in.data(), tail_out.data(), kEndBytes), -1)
      << "the last 4 KiB did not read back as written (htod then dtoh at offset " << tail
      << ", ending at the allocation's last byte)";
  EXPECT_EQ(first_difference(tail_in.data(), second_out.data(), kEndBytes), -1)
      << "a dtod of the last 4 KiB to offset 4096 did not copy them";
}

// The same ends through a kernel: each thread reads and rewrites one word at the start and one
// near the end (the tail pointer at the last 256-byte boundary at least 4 KiB from the end, so
// any parameter alignment takes it; its words run to the allocation's last whole word). An
// address computed in 32 bits, or a binding limited to part of the allocation, shows here.
TEST_P(Limits, LargestAllocationEndsByKernel) {
  if (own_kernels("limits_ends").empty()) GTEST_SKIP() << no_own_kernels();
  Allocation a;
  ASSERT_NO_FATAL_FAILURE(allocate_largest(&a));
  const uint64_t tail = (a.size - kEndBytes) & ~uint64_t{255};
  const uint32_t words = static_cast<uint32_t>((a.size - tail) / 4);
  SCOPED_TRACE("an allocation of " + std::to_string(a.size) + " bytes, " + std::to_string(words) +
               " words at offset 0 and at offset " + std::to_string(tail));
  for_each_own_kernel(
      "limits_ends", [&](const OwnKernel& k, hal_function f) {
        const uint32_t seed = k.ir == HAL_IR_SPIRV ? 0xE2D50001u : 0xE2D50002u;
        std::vector<uint32_t> head_in(words), tail_in(words);
        std::vector<uint8_t> bytes = pattern(size_t{words} * 8, seed);
        std::memcpy(head_in.data(), bytes.data(), size_t{words} * 4);
        std::memcpy(tail_in.data(), bytes.data() + size_t{words} * 4, size_t{words} * 4);
        CTS_ASSERT_OK(hal_memcpy_htod(stream_, a.ptr, head_in.data(), size_t{words} * 4));
        CTS_ASSERT_OK(hal_memcpy_htod(stream_, a.ptr + tail, tail_in.data(), size_t{words} * 4));
        hal_deviceptr head_ptr = a.ptr, tail_ptr = a.ptr + tail;
        uint32_t n = words, s = seed;
        void* args[] = {&head_ptr, &tail_ptr, &n, &s};
        const hal_launch_config c = {{(words + 63) / 64, 1, 1}, {64, 1, 1}, 0};
        CTS_ASSERT_OK(hal_launch(stream_, f, &c, args));
        std::vector<uint32_t> head_got(words), tail_got(words);
        CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, head_got.data(), a.ptr, size_t{words} * 4));
        CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, tail_got.data(), a.ptr + tail, size_t{words} * 4));
        CTS_ASSERT_OK(hal_stream_synchronize(stream_));
        std::vector<uint32_t> head_want(words), tail_want(words);
        for (uint32_t i = 0; i < words; ++i) {
          head_want[i] = head_in[i] * 3u + (i ^ seed);
          tail_want[i] = (tail_in[i] ^ seed) + i * 5u;
        }
        const std::string head_bad = mismatches("head word", head_want, head_got, &head_in);
        EXPECT_TRUE(head_bad.empty()) << "the kernel's rewrite of the allocation's first words "
                                         "(head[i] = head[i] * 3 + (i ^ seed), seed "
                                      << hex(seed) << "): " << head_bad;
        const std::string tail_bad = mismatches("tail word", tail_want, tail_got, &tail_in);
        EXPECT_TRUE(tail_bad.empty())
            << "the kernel's rewrite of the allocation's last words, from byte " << tail
            << " to its end (tail[i] = (tail[i] ^ seed) + i * 5, seed " << hex(seed)
            << "): " << tail_bad;
      });
}

// The values of limits_params: 32 words, unsigned, signed and float in turn, each distinct.
std::vector<uint32_t> param_values() {
  std::vector<uint32_t> bits(32);
  for (uint32_t i = 0; i < 32; ++i) {
    if (i % 3 == 0) {
      bits[i] = (0x01000193u * (i + 1)) ^ 0x80000000u;
    } else if (i % 3 == 1) {
      bits[i] = static_cast<uint32_t>(-static_cast<int32_t>((i + 1) * 1000003));
    } else {
      const float f = -1.25f * static_cast<float>(i + 1) + 0.0625f;
      std::memcpy(&bits[i], &f, 4);
    }
  }
  return bits;
}

// 32 value parameters of 4 bytes after one pointer: 128 bytes of push constants in SPIR-V, the
// size every Vulkan device allows (maxPushConstantsSize is at least 128 by the Vulkan spec;
// hal_device_info does not report a device's own limit, PushConstantsAtTheDeviceLimit finds it),
// and 136 bytes of PTX parameters. Each value must reach the kernel as passed, at its place in
// the list; the parameter list hal reports must be that signature.
TEST_P(Limits, ValueParametersFillGuaranteedPushConstants) {
  for_each_own_kernel("limits_params", [&](const OwnKernel&, hal_function f) {
    hal_function_info fi{};
    fi.struct_size = sizeof fi;
    CTS_ASSERT_OK(hal_function_get_info(f, &fi));
    ASSERT_EQ(fi.param_count, 33u) << "one pointer and 32 values";
    for (uint32_t p = 1; p <= 32; ++p) {
      hal_param_info pi{};
      pi.struct_size = sizeof pi;
      CTS_ASSERT_OK(hal_function_get_param(f, p, &pi));
      const hal_param_type type = (p - 1) % 3 == 2 ? HAL_PARAM_TYPE_FLOAT : HAL_PARAM_TYPE_INTEGER;
      EXPECT_TRUE(pi.kind == HAL_PARAM_VALUE && pi.size == 4 && pi.type == type)
          << "parameter " << p << ": kind " << pi.kind << ", size " << pi.size << ", type "
          << pi.type << "; a 4-byte " << (type == HAL_PARAM_TYPE_FLOAT ? "float" : "integer")
          << " value was expected";
    }
    std::vector<uint32_t> values = param_values();
    Buffer out(device(), 32 * 4);
    ASSERT_TRUE(out.ok()) << out.error();
    CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0xDEADBEEFu, 32));
    std::vector<void*> args = {&out.ptr};
    for (uint32_t& v : values) args.push_back(&v);
    const hal_launch_config c = {{1, 1, 1}, {1, 1, 1}, 0};
    CTS_ASSERT_OK(hal_launch(stream_, f, &c, args.data()));
    std::vector<uint32_t> got(32);
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), out.ptr, 32 * 4));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    const std::string bad = mismatches("parameter", values, got, nullptr, 1);
    EXPECT_TRUE(bad.empty()) << "32 value parameters (uint, int, float in turn) after one pointer, "
                                "written back by the kernel as bits: each must arrive as passed; "
                             << bad;
  });
}

// The device's own push-constant limit, which hal_device_info does not report: found as the
// largest array of words limits_push (SPIR-V, its length a specialization constant) loads with,
// from 128 bytes (which every Vulkan device allows, so it must load) up to 64 KiB; hal refuses a
// module whose push constants exceed the device's maxPushConstantsSize at load with
// HAL_ERROR_NOT_SUPPORTED (docs/ABI.md). At the limit every word must reach the kernel; one
// word beyond is refused, naming the bytes.
TEST_P(Limits, PushConstantsAtTheDeviceLimit) {
  if (!takes(HAL_IR_SPIRV)) {
    GTEST_SKIP() << "Push constants are SPIR-V's; the device does not take SPIR-V (its PTX "
                    "parameters are checked by PtxParameterSpaceAtItsLimit).";
  }
  const std::vector<OwnKernel> kernels = own_kernels("limits_push");
  if (kernels.empty()) {
    GTEST_SKIP() << "This check loads SPIR-V only (push constants sized by a specialization "
                    "constant, which PTX does not have), and --ir asks for "
                 << ir_text(options().ir) << ".";
  }
  const OwnKernel& k = kernels.front();
  // Loads limits_push with |words| words of push constants: HAL_SUCCESS with |*m| and |*f| set,
  // or the status.
  auto load = [&](uint32_t words, hal_module* m, hal_function* f) {
    const hal_specialization spec = {0, 4, &words};
    hal_module_options o{};
    o.struct_size = sizeof o;
    o.ir = HAL_IR_SPIRV;
    o.specialization_count = 1;
    o.specializations = &spec;
    *m = nullptr;
    hal_status s = hal_module_load(device(), k.file->data, k.file->size, &o, m);
    if (s == HAL_SUCCESS) s = hal_module_get_function(*m, k.entry.c_str(), f);
    if (s != HAL_SUCCESS && *m != nullptr) {
      hal_module_unload(*m);
      *m = nullptr;
    }
    return s;
  };
  const uint32_t guaranteed = 32, most = 16384;
  hal_module m = nullptr;
  hal_function f = nullptr;
  hal_status s = load(guaranteed, &m, &f);
  ASSERT_EQ(s, HAL_SUCCESS) << "128 bytes of push constants, which every Vulkan device allows "
                               "(maxPushConstantsSize >= 128), were refused: "
                            << describe(s);
  CTS_ASSERT_OK(hal_module_unload(m));
  // The largest accepted size between |lo| (accepted) and |hi|.
  uint32_t lo = guaranteed, hi = most;
  s = load(hi, &m, &f);
  if (s == HAL_SUCCESS) {
    CTS_ASSERT_OK(hal_module_unload(m));
    lo = hi;
  } else {
    ASSERT_EQ(s, HAL_ERROR_NOT_SUPPORTED)
        << most * 4 << " bytes of push constants: a refusal must be HAL_ERROR_NOT_SUPPORTED; "
        << describe(s);
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      s = load(mid, &m, &f);
      if (s == HAL_SUCCESS) {
        CTS_ASSERT_OK(hal_module_unload(m));
        lo = mid;
      } else {
        ASSERT_EQ(s, HAL_ERROR_NOT_SUPPORTED)
            << mid * 4 << " bytes of push constants: a refusal must be "
            << "HAL_ERROR_NOT_SUPPORTED, and " << lo * 4 << " bytes loaded; " << describe(s);
        hi = mid;
      }
    }
  }
  const std::string limit = std::to_string(lo * 4) + " bytes" + (lo == most ? " or more" : "");
  std::printf(" [push constants: %s]", limit.c_str());
  std::fflush(stdout);
  RecordProperty("push_constant_bytes", limit);
  SCOPED_TRACE("the device's push-constant limit as hal's refusals place it: " + limit);

  // At the limit: one array parameter of lo words, each word distinct.
  CTS_ASSERT_OK(load(lo, &m, &f));
  hal_param_info pi{};
  pi.struct_size = sizeof pi;
  CTS_EXPECT_OK(hal_function_get_param(f, 1, &pi));
  EXPECT_TRUE(pi.kind == HAL_PARAM_VALUE && pi.size == lo * 4)
      << "the push-constant array is one value parameter of " << lo * 4 << " bytes; hal reports "
      << "kind " << pi.kind << ", size " << pi.size;
  std::vector<uint32_t> values(lo);
  for (uint32_t i = 0; i < lo; ++i) values[i] = (i * 0x01000193u) ^ 0xA5A5A5A5u;
  Buffer out(device(), size_t{lo} * 4);
  ASSERT_TRUE(out.ok()) << out.error();
  CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0xDEADBEEFu, lo));
  void* args[] = {&out.ptr, values.data()};
  const hal_launch_config c = {{1, 1, 1}, {1, 1, 1}, 0};
  CTS_EXPECT_OK(hal_launch(stream_, f, &c, args));
  std::vector<uint32_t> got(lo);
  CTS_EXPECT_OK(hal_memcpy_dtoh(stream_, got.data(), out.ptr, got.size() * 4));
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  CTS_EXPECT_OK(hal_module_unload(m));
  const std::string bad = mismatches("push word", values, got, nullptr);
  EXPECT_TRUE(bad.empty()) << lo * 4 << " bytes of push constants, as many as the device takes, "
                           << "copied out by the kernel: each word must arrive as passed; " << bad;

  // One word beyond.
  if (lo < most) {
    s = load(lo + 1, &m, &f);
    if (s == HAL_SUCCESS) CTS_EXPECT_OK(hal_module_unload(m));
    CTS_EXPECT_STATUS(HAL_ERROR_NOT_SUPPORTED, "hal_module_load", s);
    const std::string message = hal_last_error();
    EXPECT_NE(message.find(std::to_string((lo + 1) * 4)), std::string::npos)
        << "the refusal of " << (lo + 1) * 4
        << " bytes of push constants does not name them: " << message;
  }
}

// Parameters filling the PTX ISA's parameter space for the kernel's target: 4352 bytes, the
// most an entry may declare below sm_70 or before PTX ISA 8.1 (limits_param_space.ptx, targeting
// sm_50 in PTX 7.0): one pointer, values of 1, 2 and 4 bytes, a 4320-byte array at 16-byte
// alignment and four 4-byte values ending at byte 4352. Each value must reach the kernel, laid
// out as cuLaunchKernel lays parameters out (the array checked through 16-word folds the kernel
// computes, which a wrong word always changes); on a Vulkan device they exceed any push-constant
// limit, so hal passes them through memory (docs/ABI.md). One byte more is invalid PTX for this
// target, which the CUDA driver refuses: hal must refuse it at load, naming the limit.
TEST_P(Limits, PtxParameterSpaceAtItsLimit) {
  if (!takes(HAL_IR_PTX))
    GTEST_SKIP() << "The PTX parameter space is PTX's; the device does not take PTX.";
  if (own_kernels("limits_param_space").empty()) {
    GTEST_SKIP() << "This check loads PTX only, and --ir asks for " << ir_text(options().ir) << ".";
  }
  for_each_own_kernel("limits_param_space", [&](const OwnKernel&, hal_function f) {
    hal_function_info fi{};
    fi.struct_size = sizeof fi;
    CTS_ASSERT_OK(hal_function_get_info(f, &fi));
    ASSERT_EQ(fi.param_count, 9u);
    const uint32_t sizes[9] = {8, 1, 2, 4, 4320, 4, 4, 4, 4};
    for (uint32_t p = 0; p < 9; ++p) {
      hal_param_info pi{};
      pi.struct_size = sizeof pi;
      CTS_ASSERT_OK(hal_function_get_param(f, p, &pi));
      EXPECT_EQ(pi.size, sizes[p]) << "parameter " << p;
      EXPECT_EQ(pi.kind, p == 0 ? HAL_PARAM_POINTER : HAL_PARAM_VALUE) << "parameter " << p;
    }
    constexpr uint32_t kWords = 1080, kChunk = 16, kChunks = (kWords + kChunk - 1) / kChunk;
    constexpr uint32_t kOut = kChunks + 7;
    Buffer out(device(), kOut * 4);
    ASSERT_TRUE(out.ok()) << out.error();
    CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0xDEADBEEFu, kOut));
    uint8_t a8 = 0xA7;
    uint16_t a16 = 0xB00F;
    uint32_t a32 = 0xC0DE1234u;
    alignas(16) uint32_t block[kWords];
    for (uint32_t i = 0; i < kWords; ++i) block[i] = (i * 0x9E3779B1u) ^ 0x5A5A0000u;
    float fv = -3.0517578125e-05f;
    int32_t sv = -123456789;
    uint32_t last0 = 0xFEEDFACEu, last1 = 0x0BADF00Du;
    void* args[] = {&out.ptr, &a8, &a16, &a32, block, &fv, &sv, &last0, &last1};
    const hal_launch_config c = {{1, 1, 1}, {1, 1, 1}, 0};
    CTS_ASSERT_OK(hal_launch(stream_, f, &c, args));
    std::vector<uint32_t> got(kOut);
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), out.ptr, got.size() * 4));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    // The array, 16 words to a fold (h = h * 3 + w, kernels/limits_param_space.ptx).
    std::vector<uint32_t> folds(kChunks), got_folds(got.begin(), got.begin() + kChunks);
    for (uint32_t i = 0; i < kWords; ++i) folds[i / kChunk] = folds[i / kChunk] * 3u + block[i];
    size_t wrong = 0;
    std::string which;
    for (uint32_t k = 0; k < kChunks; ++k) {
      if (got_folds[k] == folds[k]) continue;
      if (wrong++ < 3) {
        which += std::string(which.empty() ? "" : ", ") + "bytes " +
                 std::to_string(16 + k * kChunk * 4) + " to " +
                 std::to_string(16 + std::min((k + 1) * kChunk, kWords) * 4 - 1);
      }
    }
    EXPECT_EQ(wrong, 0u) << "the 4320-byte array parameter at bytes 16 to 4335 of the 4352 "
                            "bytes of parameters did not reach the kernel as passed: "
                         << wrong << " of " << kChunks << " 16-word chunks read wrong (" << which
                         << (wrong > 3 ? ", ..." : "") << ")";
    uint32_t fbits = 0;
    std::memcpy(&fbits, &fv, 4);
    const std::vector<uint32_t> want = {a8,    a16,  a32, fbits, static_cast<uint32_t>(sv),
                                        last0, last1};
    const std::vector<uint32_t> got_values(got.begin() + kChunks, got.end());
    const std::string bad = mismatches("value", want, got_values, nullptr);
    EXPECT_TRUE(bad.empty())
        << "the scalar parameters around the array (values 0 to 6: the u8 at byte "
           "8, u16 at 10, u32 at 12, f32 at 4336, s32 at 4340, u32 at 4344 and "
           "4348, as the kernel read them): "
        << bad;
  });
  if (HasFatalFailure() || IsSkipped()) return;
  const cts_files::FileBlob* file = own_file("limits_param_space.ptx");
  ASSERT_NE(file, nullptr);
  std::string over(reinterpret_cast<const char*>(file->data), file->size);
  const size_t at = over.find("block[4320]");
  ASSERT_NE(at, std::string::npos);
  over.replace(at, 11, "block[4321]");
  hal_module m = nullptr;
  const hal_status s = hal_module_load(device(), over.data(), over.size(), nullptr, &m);
  if (s == HAL_SUCCESS) CTS_EXPECT_OK(hal_module_unload(m));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_IR, "hal_module_load", s);
  EXPECT_NE(std::string(hal_last_error()).find("4352"), std::string::npos)
      << "the refusal of parameters one byte beyond the PTX limit does not name the limit: "
      << hal_last_error();
}

INSTANTIATE_TEST_SUITE_P(, Limits, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
