// The one way backend code includes Vulkan: through volk, with prototypes disabled, so no file
// links against the loader; it is opened at run time by volkInitialize().
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <volk.h>
