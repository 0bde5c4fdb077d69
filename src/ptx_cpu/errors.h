// Names and descriptions of every CUresult in cuda.h (cuGetErrorName and cuGetErrorString in
// errors.cpp), for the driver's own messages too.
#pragma once

#include <cuda.h>

namespace hal::ptx_cpu {

// "CUDA_ERROR_INVALID_VALUE", or nullptr for a value cuda.h does not define. Static storage.
const char* error_name(int result);
// A short description ("invalid argument"), or nullptr for an unknown value. Static storage.
const char* error_string(int result);

// error_name(), or "CUresult <n>" for an unknown value; for messages.
const char* error_name_or_number(CUresult result);

}  // namespace hal::ptx_cpu
