#include "ptx/names.h"

namespace hal::ptx {
namespace {

// Counts above this many digits cannot be register counts (they are capped far below 10^10).
constexpr size_t kMaxRangeDigits = 10;

}  // namespace

std::optional<Binding> NameTable::declare(std::string_view name, const Binding& binding) {
  if (std::optional<Binding> existing = find(name)) return existing;
  names_.emplace(std::string(name), binding);
  return std::nullopt;
}

std::optional<std::string> NameTable::declare_range(std::string_view prefix, uint32_t count,
                                                    const Binding& first) {
  if (count == 0) return std::nullopt;
  auto same = ranges_.find(prefix);
  if (same != ranges_.end() && same->second.count != 0) return std::string(prefix) + "0";
  if (!names_.empty() || !ranges_.empty()) {
    std::string name(prefix);
    for (uint32_t i = 0; i < count; ++i) {
      name.resize(prefix.size());
      name += std::to_string(i);
      if (find(name)) return name;
    }
  }
  if (same != ranges_.end()) {
    same->second = Range{count, first};
  } else {
    ranges_.emplace(std::string(prefix), Range{count, first});
  }
  return std::nullopt;
}

std::optional<Binding> NameTable::find(std::string_view name) const {
  if (names_.empty() && ranges_.empty()) return std::nullopt;  // most inner scopes
  if (auto it = names_.find(name); it != names_.end()) return it->second;
  if (ranges_.empty()) return std::nullopt;
  size_t digits = 0;
  while (digits < name.size() && digits < kMaxRangeDigits &&
         name[name.size() - 1 - digits] >= '0' && name[name.size() - 1 - digits] <= '9') {
    ++digits;
  }
  for (size_t k = 1; k <= digits && k < name.size(); ++k) {
    const std::string_view number = name.substr(name.size() - k);
    auto it = ranges_.find(name.substr(0, name.size() - k));
    if (it == ranges_.end()) continue;
    uint64_t value = 0;
    for (char c : number) value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value < it->second.count) {
      Binding binding = it->second.first;
      binding.index += static_cast<uint32_t>(value);
      return binding;
    }
  }
  return std::nullopt;
}

}  // namespace hal::ptx
