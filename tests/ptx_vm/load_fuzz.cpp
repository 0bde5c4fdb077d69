// A libFuzzer entry point for the interpreter's loader (hal::ptx_vm::Program::load) and, for the
// modules that load, one short run of each kernel that cannot loop (load_fuzz_entry.h). Built
// when HAL_BUILD_FUZZERS is ON with clang (-fsanitize=fuzzer); run as
//   ptx_vm_load_fuzz -max_total_time=60 [corpus_dir]
#include <cstddef>
#include <cstdint>

#include "load_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!ptx_vm_fuzz::load_one(data, size).empty()) __builtin_trap();
  return 0;
}
