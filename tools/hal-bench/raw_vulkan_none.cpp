// RawVulkan where hal-bench was built without volk's source: the baseline says why it is absent.
#include "raw_vulkan.h"

namespace bench {

struct RawVulkan::State {};

std::unique_ptr<RawVulkan> RawVulkan::open(const uint8_t*, const std::string&, std::string* why) {
  *why = "hal-bench was built without the raw Vulkan baseline (Vulkan headers or volk.c missing)";
  return nullptr;
}

RawVulkan::~RawVulkan() = default;

bool RawVulkan::prepare(const void*, size_t, const char*, uint32_t, uint64_t, uint32_t,
                        std::string*) {
  return false;
}

bool RawVulkan::run_batched(Binding, uint32_t, const void*, uint32_t) {
  return false;
}

bool RawVulkan::has_push_descriptors() const {
  return false;
}

bool RawVulkan::time_dispatch(const void*, uint32_t, double*) {
  return false;
}

}  // namespace bench
