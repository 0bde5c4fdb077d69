# Finds cuda.h, the CUDA Driver API header, without linking anything of CUDA.
# Looks in CUDA_PATH, CUDA_HOME, CUDAToolkit_ROOT and /usr/local/cuda.
# Defines CudaDriverHeaders_FOUND, CudaDriverHeaders_INCLUDE_DIR, and the imported target
# hal::cuda_headers (include directory only).
find_path(CudaDriverHeaders_INCLUDE_DIR cuda.h
  HINTS ENV CUDA_PATH ENV CUDA_HOME ENV CUDAToolkit_ROOT ${CUDAToolkit_ROOT}
  PATHS /usr/local/cuda /opt/cuda
  PATH_SUFFIXES include targets/x86_64-linux/include targets/sbsa-linux/include)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CudaDriverHeaders REQUIRED_VARS CudaDriverHeaders_INCLUDE_DIR)
if(CudaDriverHeaders_FOUND AND NOT TARGET hal::cuda_headers)
  add_library(hal::cuda_headers INTERFACE IMPORTED)
  set_target_properties(hal::cuda_headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CudaDriverHeaders_INCLUDE_DIR}")
endif()
mark_as_advanced(CudaDriverHeaders_INCLUDE_DIR)
