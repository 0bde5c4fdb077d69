// The environment the Vulkan tests run in, set before main() (and so before the runtime
// initialises) unless the caller set the variables already: only the Vulkan backend, the
// validation layer on, and a pipeline cache inside the build tree rather than the user's.
#include <cstdlib>

namespace {

const bool kEnvironmentSet = [] {
  setenv("HAL_BACKENDS", "vulkan", 0);
  setenv("HAL_VULKAN_VALIDATION", "1", 0);
  setenv("HAL_CACHE_DIR", HAL_VK_TEST_CACHE_DIR, 0);
  return true;
}();

}  // namespace
