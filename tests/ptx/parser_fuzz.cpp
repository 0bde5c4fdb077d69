// A libFuzzer entry point for the whole PTX parser (ir::parse with bodies): any bytes must parse
// or fail cleanly, within the input's bounds, and what parses must be consistent (ir_check.h).
// The signature-only parse must accept whatever the full parse accepts, with the same
// functions. Built when HAL_BUILD_FUZZERS is ON with clang (-fsanitize=fuzzer); run as
//   ptx_parser_fuzz -max_total_time=60 [corpus_dir]
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir_check.h"
#include "ptx/ir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* text = reinterpret_cast<const char*>(data);
  hal::ptx::ir::Module module;
  hal::ptx::ir::ParseError error;
  const bool ok = hal::ptx::ir::parse(text, size, {}, &module, &error);
  if (!ok) {
    if (error.message.empty() || error.line == 0) __builtin_trap();
    return 0;
  }
  if (!hal_ptx_test::check_module(module).empty()) __builtin_trap();
  hal::ptx::ir::ParseOptions headers_only;
  headers_only.bodies = false;
  hal::ptx::ir::Module signatures;
  if (!hal::ptx::ir::parse(text, size, headers_only, &signatures, &error)) __builtin_trap();
  if (signatures.functions.size() != module.functions.size()) __builtin_trap();
  for (size_t i = 0; i < module.functions.size(); ++i) {
    if (signatures.functions[i].name != module.functions[i].name ||
        signatures.functions[i].params.size() != module.functions[i].params.size() ||
        !signatures.functions[i].code.empty()) {
      __builtin_trap();
    }
  }
  return 0;
}
