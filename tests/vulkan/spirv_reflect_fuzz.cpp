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
  // Again after specialization, with values taken from the input itself (so the fuzzer steers
  // them into divisions, shifts and sizes) and one constant decided at launch.
  if (words.size() > 5) {
    hal::vulkan::ReflectOptions options;
    for (uint32_t id = 0; id < 8; ++id) {
      const uint64_t low = words[5 + id % (words.size() - 5)];
      options.specializations.push_back({id, low | (uint64_t{words[id % words.size()]} << 32)});
    }
    options.launch_spec_id = words[4] & 7;
    hal::vulkan::ReflectedModule specialized;
    error.clear();
    const bool specialized_ok =
        hal::vulkan::reflect_spirv(words.data(), words.size(), options, &specialized, &error);
    if (!specialized_ok && error.empty()) __builtin_trap();
  }
  return 0;
}
