// What every entry point does on the way in and out: export itself, catch every exception at
// the C boundary, log the reason of a failure, and find the calling thread's context.
#pragma once

#include <cuda.h>

#include <cstring>
#include <new>
#include <string>
#include <string_view>

// Marks an entry point's definition. cuda.h has already declared it extern "C"; this makes it
// visible outside the library, where the version script (exports.map) lets every cu* through.
#define PTXCPU_ENTRY extern "C" __attribute__((visibility("default")))

namespace hal::ptx_cpu {

class Context;

// Logs "<entry point>: <error name>: <why>" to the driver log (logs.h) and returns |result|.
// The entry point is the one running on this thread (see entry()).
CUresult fail(CUresult result, std::string_view why);

// The name of the entry point running on this thread, for log lines; "" outside any.
const char* current_entry();

class EntryScope {
 public:
  explicit EntryScope(const char* name);
  ~EntryScope();
  EntryScope(const EntryScope&) = delete;
  EntryScope& operator=(const EntryScope&) = delete;

 private:
  const char* previous_;
};

// Runs an entry point's body: nothing is thrown across the C ABI. A failed host allocation is
// CUDA_ERROR_OUT_OF_MEMORY, anything else unexpected CUDA_ERROR_UNKNOWN, both logged.
template <typename Body>
CUresult entry(const char* name, Body&& body) noexcept {
  EntryScope scope(name);
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(CUDA_ERROR_OUT_OF_MEMORY, "the host is out of memory");
  } catch (const std::exception& error) {
    return fail(CUDA_ERROR_UNKNOWN, std::string("internal error: ") + error.what());
  } catch (...) {
    return fail(CUDA_ERROR_UNKNOWN, "internal error");
  }
}

// The value a program passed for a parameter of enum type (CUresult, CUdevice_attribute, ...).
// A C caller may pass any int, and C++ must not load a value outside the enumerators' range as
// the enum: the bytes are read as an int instead.
template <typename Enum>
int as_int(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int));
  int out = 0;
  std::memcpy(&out, &value, sizeof(out));
  return out;
}

// CUDA_SUCCESS once cuInit has succeeded, else CUDA_ERROR_NOT_INITIALIZED (logged).
CUresult require_init();

// require_init(), then CUDA_ERROR_INVALID_DEVICE (logged) unless |device| is an ordinal of the
// driver's devices.
CUresult check_device(CUdevice device);

// The calling thread's current context, for an entry point that needs one. Returns
// CUDA_ERROR_NOT_INITIALIZED before cuInit; CUDA_ERROR_INVALID_CONTEXT when no context is
// current or the current one has been released; the context's sticky error (a kernel fault)
// unless |ignore_sticky|; each logged. On success *out is the context.
CUresult current_context(Context** out, bool ignore_sticky = false);

}  // namespace hal::ptx_cpu
