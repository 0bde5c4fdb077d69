// Name tables of the PTX parser: one per { } scope of a function body, holding the registers
// and variables declared there.
//
// "%r<1000>" declares a thousand registers, so a table keeps each such declaration as one
// range (prefix "%r", 1000 names) rather than a thousand entries, and finds "%r17" by trying
// the splits of its trailing digits ("%r" + 17, "%r1" + 7). A name is a member of a range when
// its digits are below the count; leading zeros are allowed, as ptxas reads them ("%r07" is
// "%r7"). Declarations that would put a name in a table twice are refused, so that a lookup
// has one answer (a name declared alone is found before a range member spelled alike).
//
// Thread-safety: none; each parser owns its tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hal::ptx {

// Hashing for maps keyed by std::string that are searched with a std::string_view.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};
template <typename T>
using NameMap = std::unordered_map<std::string, T, NameHash, std::equal_to<>>;

// What a name declared in a body denotes.
struct Binding {
  enum class Kind : uint8_t { kRegister, kVariable };
  Kind kind = Kind::kRegister;
  uint32_t index = 0;  // into Function::registers or Function::variables
  uint32_t line = 0;   // of the declaration, for "first declared on line N"
};

class NameTable {
 public:
  // Declares |name|. Returns the binding already in this table under that name (the
  // declaration is then refused), or nullopt when it was added.
  std::optional<Binding> declare(std::string_view name, const Binding& binding);

  // Declares prefix0 .. prefix<count - 1>, bound to registers first.index .. + count - 1.
  // Refused when one of the names is already here: returns that name; nullopt when added.
  // The work is proportional to |count|.
  std::optional<std::string> declare_range(std::string_view prefix, uint32_t count,
                                           const Binding& first);

  // The binding of |name| in this table, or nullopt.
  std::optional<Binding> find(std::string_view name) const;

 private:
  struct Range {
    uint32_t count = 0;
    Binding first;
  };
  NameMap<Binding> names_;
  NameMap<Range> ranges_;
};

}  // namespace hal::ptx
