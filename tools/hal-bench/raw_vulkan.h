// RawVulkan: the launch-overhead baseline on Vulkan devices. The benchmark's own instance and
// device, opened through its own copy of volk (libhal's is hidden inside the library), running
// one compute shader in the cheapest way the API allows:
//  - batched: one command buffer holding N dispatches with a global memory barrier between
//    consecutive ones (the ordering an in-order stream needs), one submit, one fence wait;
//  - single: one dispatch recorded, submitted and waited for.
// Storage buffers are bound once through one descriptor set; push constants carry the values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace bench {

class RawVulkan {
 public:
  // Opens the physical device whose deviceUUID is |uuid| (else the one named |name|). Returns
  // nullptr with |why| set when Vulkan or the device is unavailable.
  static std::unique_ptr<RawVulkan> open(const uint8_t uuid[16], const std::string& name,
                                         std::string* why);
  ~RawVulkan();
  RawVulkan(const RawVulkan&) = delete;
  RawVulkan& operator=(const RawVulkan&) = delete;

  // Builds the pipeline for |spirv| (entry point |entry|) with |buffers| storage buffers of
  // |buffer_bytes| each at set 0, bindings 0.., and |push_bytes| of push constants.
  bool prepare(const void* spirv, size_t size, const char* entry, uint32_t buffers,
               uint64_t buffer_bytes, uint32_t push_bytes, std::string* why);
  // Records |n| dispatches of |gx| workgroups separated by barriers, submits once, waits.
  bool run_batched(uint32_t n, const void* push, uint32_t gx);
  // Records one dispatch, submits, waits.
  bool run_single(const void* push, uint32_t gx) { return run_batched(1, push, gx); }

 private:
  RawVulkan() = default;
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace bench
