// A libFuzzer entry point for the PTX signature reader (src/ptx/reader.h), as hal's CUDA backend
// uses it: any bytes must parse or fail cleanly, within the input's bounds. Built when
// HAL_BUILD_FUZZERS is ON with clang (-fsanitize=fuzzer); run as
//   ptx_reader_fuzz -max_total_time=60 [corpus_dir]
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ptx/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hal::ptx::Module module;
  std::string error;
  const bool ok =
      hal::ptx::parse(std::string_view(reinterpret_cast<const char*>(data), size), &module, &error);
  if (ok) {
    for (const hal::ptx::Entry& entry : module.entries) {
      for (const hal::ptx::Param& param : entry.params) {
        if (param.size == 0 || param.alignment == 0) __builtin_trap();
      }
    }
  } else if (error.rfind("line ", 0) != 0) {
    __builtin_trap();
  }
  return 0;
}
