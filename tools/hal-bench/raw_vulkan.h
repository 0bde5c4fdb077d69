// RawVulkan: the launch-overhead baselines on Vulkan devices. The benchmark's own instance and
// device, opened through its own copy of volk (libhal's is hidden inside the library), running
// one compute shader: one command buffer holding N dispatches with a global memory barrier
// between consecutive ones (the ordering an in-order stream needs), one submit, one fence wait.
// Push constants carry the values; the storage buffers are bound in one of three ways (Binding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace bench {

class RawVulkan {
 public:
  enum class Binding {
    // One descriptor set, written once and bound once per command buffer: the cheapest way,
    // possible only while every dispatch sees the same buffers.
    kBindOnce,
    // Engine style: per dispatch a descriptor set is allocated from a pool (reset per run),
    // written and bound; consecutive dispatches alternate between two groups of buffers.
    kSetPerDispatch,
    // Per dispatch the buffers are pushed (VK_KHR_push_descriptor), alternating as above.
    kPushPerDispatch,
  };

  // Opens the physical device whose deviceUUID is |uuid| (else the one named |name|). Returns
  // nullptr with |why| set when Vulkan or the device is unavailable.
  static std::unique_ptr<RawVulkan> open(const uint8_t uuid[16], const std::string& name,
                                         std::string* why);
  ~RawVulkan();
  RawVulkan(const RawVulkan&) = delete;
  RawVulkan& operator=(const RawVulkan&) = delete;

  // Builds the pipeline for |spirv| (entry point |entry|) with |buffers| storage buffers at set 0,
  // bindings 0.., and |push_bytes| of push constants; creates two groups of |buffers| buffers of
  // |buffer_bytes| each.
  bool prepare(const void* spirv, size_t size, const char* entry, uint32_t buffers,
               uint64_t buffer_bytes, uint32_t push_bytes, std::string* why);
  // Records |n| dispatches of |gx| workgroups separated by barriers, binding buffers as
  // |binding| says, submits once, waits. False on a Vulkan error, or for kPushPerDispatch on a
  // device without push descriptors.
  bool run_batched(Binding binding, uint32_t n, const void* push, uint32_t gx);
  bool has_push_descriptors() const;
  // One dispatch of |gx| workgroups (bind-once) between two timestamps written in the same
  // command buffer: the kernel's device time in *ms. False without timestamps or on an error.
  bool time_dispatch(const void* push, uint32_t gx, double* ms);

 private:
  RawVulkan() = default;
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace bench
