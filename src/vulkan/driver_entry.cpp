// The Vulkan driver's table (hal_driver.h), exported by libhal_driver_vulkan.so as
// hal_driver_query.
#include "common/driver_export.h"
#include "vulkan/vulkan_backend.h"

HAL_DEFINE_CXX_DRIVER(hal_vulkan_driver_query, "vulkan", HAL_BACKEND_VULKAN,
                      &hal::create_vulkan_backend)
