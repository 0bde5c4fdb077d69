// The CUDA backend's entry point for the backend registry.
//
// The backend runs PTX, cubin and fatbin modules through the CUDA driver API of a libcuda that
// it opens at run time (see cuda_driver.h); nothing of CUDA is linked. Without a usable driver
// the backend reports itself unavailable, with the reason, and the other backends are
// unaffected.
#pragma once

#include "common/backend.h"

#include <memory>

namespace hal {

// A new, uninitialised CUDA backend; Backend::init opens the driver and lists the GPUs.
std::unique_ptr<Backend> create_cuda_backend();

}  // namespace hal
