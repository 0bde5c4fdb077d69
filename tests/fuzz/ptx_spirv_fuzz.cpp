// libFuzzer target: hal_fuzz::ptx_spirv_one (see fuzz_entries.h). Seed it with
// corpus/ptx_spirv/ and the tree's PTX (tools/sanitize.sh does).
#include "fuzz_entries.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string problem = hal_fuzz::ptx_spirv_one(data, size);
  if (!problem.empty()) {
    std::fprintf(stderr, "ptx_spirv_fuzz: %s\n", problem.c_str());
    __builtin_trap();
  }
  return 0;
}
