/* The volk meta-loader, compiled into libhal (Debian ships it as source only). volk opens the
 * Vulkan loader at run time; nothing links against libvulkan. */
#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <volk.c>
