// The one mapping from CUresult to hal_status, and the failure text built from it.
//
// Every CUresult the driver can return has one line in the table in cuda_status.cpp: the hal
// status it becomes, whether it leaves the CUDA context unusable, and a hint for the user. A
// result missing from the table (a newer driver's) becomes HAL_ERROR_INTERNAL with its name.
//
// Context-poisoning results: after a kernel faults (CUDA_ERROR_ILLEGAL_ADDRESS, ..._LAUNCH_FAILED
// and the other "sticky" errors) the CUDA context cannot be used again in this process. The call
// that observes such a result returns its mapped status (HAL_ERROR_LAUNCH_FAILED for a faulting
// kernel); the device remembers it, and every later call on that device returns
// HAL_ERROR_DEVICE_LOST naming the original error.
//
// Thread-safety: everything here is immutable or pure.
#pragma once

#include <hal/hal.h>

#include <cuda.h>

#include <cstddef>
#include <string_view>

namespace hal::cuda {

class Driver;

struct ErrorMapping {
  CUresult result;
  const char* name;  // the enumerator's name, used when the driver cannot name the result
  hal_status status;
  bool poisons_context;
  const char* hint;  // a sentence for the user; "" gives the generic one of its status
};

// Every line of the table; |count| receives the number of lines.
const ErrorMapping* error_table(size_t* count);

// The status |result| maps to (HAL_SUCCESS for CUDA_SUCCESS, HAL_ERROR_INTERNAL if unknown).
hal_status status_for(CUresult result);
// Whether |result| leaves the context unusable.
bool poisons_context(CUresult result);
// The table's hint for |result|, or a generic one. Never null.
const char* error_hint(CUresult result);
// The enumerator's name from the table, or null if |result| is not in it.
const char* table_error_name(CUresult result);

// Records "<what> failed (<cuGetErrorName>). <detail>. Driver log: <log>. <hint>" through
// hal::fail and returns the mapped status. |detail| (may be empty) adds what only the caller
// knows, such as a JIT log; the driver log (Driver::take_log) is what the driver reported since
// the last failure, when it keeps one.
hal_status fail_result(const Driver& driver, CUresult result, std::string_view what,
                       std::string_view detail = {});

}  // namespace hal::cuda
