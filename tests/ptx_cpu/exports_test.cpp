// What the library exports: the CUDA entry points under their ABI names, each one the function
// cuGetProcAddress serves for its base name, and hal_ptx_cpu_get_stats; nothing else.
#include "driver_fixture.h"

#include <elf.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace ptx_cpu_test {
namespace {

// The defined function symbols of an ELF64 shared library's dynamic symbol table.
std::set<std::string> exported_functions(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  std::set<std::string> names;
  if (bytes.size() < sizeof(Elf64_Ehdr)) return names;
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(bytes.data());
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(bytes.data() + header->e_shoff);
  for (int i = 0; i < header->e_shnum; ++i) {
    if (sections[i].sh_type != SHT_DYNSYM) continue;
    const Elf64_Shdr& strings = sections[sections[i].sh_link];
    const auto* symbols = reinterpret_cast<const Elf64_Sym*>(bytes.data() + sections[i].sh_offset);
    const size_t count = sections[i].sh_size / sizeof(Elf64_Sym);
    for (size_t s = 0; s < count; ++s) {
      if (symbols[s].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(symbols[s].st_info) != STT_FUNC) {
        continue;
      }
      names.insert(bytes.data() + strings.sh_offset + symbols[s].st_name);
    }
  }
  return names;
}

TEST_F(DriverTest, ExportsOnlyEntryPointsOfTheTable) {
  const std::set<std::string> names = exported_functions(cu().path);
  ASSERT_GT(names.size(), 50u) << cu().path;
  const std::regex versioned("(cu[A-Za-z0-9]+?)(_v[0-9]+)?");
  for (const std::string& name : names) {
    if (name.rfind("hal_ptx_cpu_", 0) == 0) continue;
    std::smatch parts;
    ASSERT_TRUE(std::regex_match(name, parts, versioned)) << "unexpected export " << name;
    // Some version serves exactly this function under the base name.
    const std::string base = parts[1];
    void* exported = dlsym(cu().library, name.c_str());
    bool served = false;
    for (int version : {13000, 12090, 12040, 11030, 4000}) {
      served = served || cu().resolve(base.c_str(), version) == exported;
    }
    EXPECT_TRUE(served) << name << " is exported but cuGetProcAddress(\"" << base
                        << "\") never returns it";
  }
  EXPECT_EQ(names.count("hal_ptx_cpu_get_stats"), 1u);
  // The ABI names of cuda.h, not the old ones with other signatures.
  EXPECT_EQ(names.count("cuMemAlloc_v2"), 1u);
  EXPECT_EQ(names.count("cuMemAlloc"), 0u);
  EXPECT_EQ(names.count("cuCtxSynchronize"), 1u);     // CUDA 2.0's, without an argument
  EXPECT_EQ(names.count("cuCtxSynchronize_v2"), 1u);  // CUDA 13.0's, with a context argument
  EXPECT_EQ(names.count("cuGetProcAddress_v2"), 1u);
  EXPECT_EQ(names.count("cuGetProcAddress"), 1u);
}

}  // namespace
}  // namespace ptx_cpu_test
