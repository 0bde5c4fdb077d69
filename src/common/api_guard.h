// The ABI boundary. Every public call runs its body through guarded(): exceptions never cross
// into C, and a failing status publishes "<call>: <cause>" as hal_last_error().
#pragma once

#include "common/error.h"
#include "common/objects.h"
#include "common/trace.h"

#include <cstring>
#include <new>

namespace hal {

template <typename Body>
hal_status run_guarded(const char* call, Body& body) noexcept {
  hal_status status;
  try {
    clear_pending_error();
    status = body();
  } catch (const std::bad_alloc&) {
    status = fail(HAL_ERROR_OUT_OF_MEMORY, "host memory ran out inside hal");
  } catch (const std::exception& e) {
    status =
        failf(HAL_ERROR_INTERNAL, "unexpected internal failure: {}. Please report it", e.what());
  } catch (...) {
    status = fail(HAL_ERROR_INTERNAL, "unexpected internal failure. Please report it");
  }
  if (status != HAL_SUCCESS) publish_error(call, status);
  return status;
}

template <typename Body>
hal_status guarded(const char* call, Body&& body) noexcept {
  // The timeline trace costs this one branch when HAL_TRACE is not set.
  if (trace::on()) [[unlikely]] {
    const uint64_t begin = trace::now_ns();
    const hal_status status = run_guarded(call, body);
    trace::api_call(call, begin, trace::now_ns(), status);
    return status;
  }
  return run_guarded(call, body);
}

// Checks a struct_size field: at least |minimum| (the first published size).
inline hal_status check_struct_size(uint32_t struct_size, size_t minimum, const char* what) {
  if (struct_size < minimum) {
    return failf(HAL_ERROR_INVALID_ARGUMENT,
                 "{}.struct_size is {}, smaller than any published version ({}). Set it to "
                 "sizeof({})",
                 what, struct_size, minimum, what);
  }
  return HAL_SUCCESS;
}

// Copies a runtime-side struct |src| into a caller's struct of |struct_size| bytes, keeping
// the caller's struct_size.
template <typename T>
void copy_out(const T& src, T* dst) {
  const uint32_t caller_size = dst->struct_size;
  const size_t n = caller_size < sizeof(T) ? caller_size : sizeof(T);
  std::memcpy(static_cast<void*>(dst), &src, n);
  dst->struct_size = caller_size;
}

#define HAL_RETURN_IF_ERROR(expr)                                                        \
  do {                                                                                   \
    if (hal_status hal_status_ = (expr); hal_status_ != HAL_SUCCESS) return hal_status_; \
  } while (0)

#define HAL_REQUIRE_ARG(cond, ...)                                             \
  do {                                                                         \
    if (!(cond)) return ::hal::failf(HAL_ERROR_INVALID_ARGUMENT, __VA_ARGS__); \
  } while (0)

}  // namespace hal
