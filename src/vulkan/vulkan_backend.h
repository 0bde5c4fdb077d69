// The Vulkan backend's entry point for the registry.
//
// init() opens the Vulkan loader at run time (volk), creates one instance, and lists every
// physical device with a compute queue and Vulkan 1.2 or newer: GPUs (discrete, integrated,
// virtual) first, then CPU and other devices, each group in the loader's order. A physical
// device exposed twice (for instance through two drivers) appears once, keyed by its device UUID.
// A missing loader is HAL_ERROR_UNAVAILABLE with where it looked and what to install.
#pragma once

#include "common/backend.h"

#include <memory>

namespace hal {

std::unique_ptr<Backend> create_vulkan_backend();

}  // namespace hal
