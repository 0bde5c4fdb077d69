// The SPIR-V modules the validator has already passed on one device.
//
// Loading a module validates it first (module.h, validate_spirv()), and the validator is most of
// a load's host time: tens of milliseconds for one hand-written kernel on lavapipe's 2-core build
// machine, over a second for a large translated PTX module. Programs load the same SPIR-V again
// (once per thread, per run of a step), and translate the same PTX again where no cache
// directory is usable (ptx_cache.h); the answer cannot change for the same words on the same
// device (the validator's environment and options are the device's). So the words of each
// module that passed are kept, and a module equal to one of them, word for word, is not
// validated again. A hash only finds the candidate: nothing is trusted without the full
// comparison. The memory is bounded: the most recently passed modules up to kBudgetBytes.
//
// Thread-safe: loads on several threads share one instance (the device's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <vector>

namespace hal::vulkan {

class ValidatedSpirv {
 public:
  // Modules larger than this are never kept; older modules are dropped past it.
  static constexpr size_t kBudgetBytes = size_t{16} << 20;

  // Whether |words| equals a module recorded by passed(); a hit becomes the most recent.
  bool contains(const std::vector<uint32_t>& words);
  // Records that the validator passed |words| (a copy is kept).
  void passed(const std::vector<uint32_t>& words);

  // The bytes of SPIR-V held, for tests.
  size_t bytes() const;

 private:
  struct Entry {
    uint64_t hash;
    std::vector<uint32_t> words;
  };
  static uint64_t hash(const std::vector<uint32_t>& words);

  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // the most recent first
  size_t bytes_ = 0;
};

}  // namespace hal::vulkan
