// libFuzzer target: hal_fuzz::sniff_ir_one (see fuzz_entries.h). Seed it with corpus/sniff_ir/.
#include "fuzz_entries.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string problem = hal_fuzz::sniff_ir_one(data, size);
  if (!problem.empty()) {
    std::fprintf(stderr, "sniff_ir_fuzz: %s\n", problem.c_str());
    __builtin_trap();
  }
  return 0;
}
