// The CUDA driver's table (hal_driver.h), exported by libhal_driver_cuda.so as hal_driver_query.
#include "common/driver_export.h"
#include "cuda/cuda_backend.h"

HAL_DEFINE_CXX_DRIVER(hal_cuda_driver_query, "cuda", HAL_BACKEND_CUDA, &hal::create_cuda_backend)
