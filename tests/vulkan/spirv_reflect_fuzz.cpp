// libFuzzer target for the SPIR-V reflection parser: any byte string, as native-endian words,
// must be parsed or refused with a message, never read out of bounds or hang.
#include "vulkan/spirv_reflect.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size copy, so a read past the last word is caught by the sanitizer.
  std::vector<uint32_t> words(size / 4);
  if (!words.empty()) std::memcpy(words.data(), data, words.size() * 4);
  hal::vulkan::ReflectedModule module;
  std::string error;
  const bool ok = hal::vulkan::reflect_spirv(words.data(), words.size(), &module, &error);
  if (!ok && error.empty()) __builtin_trap();  // every refusal carries a message
  return 0;
}
