// hal-spirv-entry <in.spv> <out.spv> <name>
//
// Renames the single entry point of a SPIR-V module to <name> (<out.spv> may be <in.spv>).
// glslc names every entry point "main" (its -fentry-point applies to HLSL only); renaming lets a
// SPIR-V module and the PTX of the same kernel be looked up by one hal_module_get_function name.
// The kernel pack's build uses it for every kernel; it is installed for users' own kernels.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kMagic = 0x07230203u;
constexpr uint32_t kOpEntryPoint = 15;
constexpr size_t kHeaderWords = 5;

int fail(const std::string& message) {
  std::fprintf(stderr, "hal-spirv-entry: %s\n", message.c_str());
  return 1;
}

// The words of a nul-terminated, zero-padded SPIR-V literal string.
std::vector<uint32_t> string_words(const std::string& s) {
  std::vector<uint32_t> words(s.size() / 4 + 1, 0);
  std::memcpy(words.data(), s.data(), s.size());
  return words;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: hal-spirv-entry <in.spv> <out.spv> <name>");
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) return fail(std::string("cannot read ") + argv[1]);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  if (bytes.size() % 4 != 0 || bytes.size() < kHeaderWords * 4) {
    return fail(std::string(argv[1]) + " is not a SPIR-V module (size)");
  }
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  if (words[0] != kMagic) return fail(std::string(argv[1]) + " is not a SPIR-V module (magic)");

  std::vector<uint32_t> out(words.begin(), words.begin() + kHeaderWords);
  int renamed = 0;
  for (size_t i = kHeaderWords; i < words.size();) {
    const uint32_t count = words[i] >> 16;
    const uint32_t opcode = words[i] & 0xFFFFu;
    if (count == 0 || i + count > words.size()) return fail("malformed instruction stream");
    if (opcode != kOpEntryPoint) {
      out.insert(out.end(), words.begin() + i, words.begin() + i + count);
      i += count;
      continue;
    }
    // OpEntryPoint <execution model> <function id> <name> <interface ids...>
    size_t name_end = i + 3;
    while (name_end < i + count && (words[name_end] >> 24) != 0) ++name_end;
    if (name_end >= i + count) return fail("malformed OpEntryPoint name");
    ++name_end;
    std::vector<uint32_t> inst = {0, words[i + 1], words[i + 2]};
    const std::vector<uint32_t> name = string_words(argv[3]);
    inst.insert(inst.end(), name.begin(), name.end());
    inst.insert(inst.end(), words.begin() + name_end, words.begin() + i + count);
    inst[0] = (static_cast<uint32_t>(inst.size()) << 16) | kOpEntryPoint;
    out.insert(out.end(), inst.begin(), inst.end());
    ++renamed;
    i += count;
  }
  if (renamed != 1)
    return fail("expected exactly one entry point, found " + std::to_string(renamed));
  std::ofstream file(argv[2], std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(out.data()),
             static_cast<std::streamsize>(out.size() * sizeof(uint32_t)));
  if (!file) return fail(std::string("cannot write ") + argv[2]);
  return 0;
}
