/* hal-bench's own copy of the volk meta-loader, for the raw Vulkan baseline. libhal has its own
 * copy with hidden symbols, so the two never clash; nothing links against libvulkan. */
#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <volk.c>
