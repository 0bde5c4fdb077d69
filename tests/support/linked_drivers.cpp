// Registers the drivers a test links in (hal_add_test's DRIVERS) as in-process drivers, before
// main(), in the built-in order. The test then reaches a driver's own objects behind a handle
// (hal::device_of) and its internals, which a module's copy would hide.
#include "common/registry.h"

#include <vector>

#ifdef HAL_TEST_LINK_CUDA
hal_status hal_cuda_driver_query(uint32_t core_interface_version, const hal_driver** out);
#endif
#ifdef HAL_TEST_LINK_VULKAN
hal_status hal_vulkan_driver_query(uint32_t core_interface_version, const hal_driver** out);
#endif

namespace {

const bool kLinkedDriversRegistered = hal::set_drivers_for_testing({
#ifdef HAL_TEST_LINK_CUDA
    {&hal_cuda_driver_query, "the CUDA driver linked into this test"},
#endif
#ifdef HAL_TEST_LINK_VULKAN
    {&hal_vulkan_driver_query, "the Vulkan driver linked into this test"},
#endif
});

}  // namespace
