#include "ptx/words.h"

#include <string>
#include <unordered_map>

#include "ptx/lexer.h"

namespace hal::ptx {
namespace {

template <typename T>
using WordMap = std::unordered_map<std::string_view, T>;

template <typename T>
std::optional<T> find(const WordMap<T>& map, std::string_view word) {
  auto it = map.find(word);
  if (it == map.end()) return std::nullopt;
  return it->second;
}

const WordMap<ir::Type>& types() {
  static const WordMap<ir::Type> map = [] {
    WordMap<ir::Type> out;
    for (int i = static_cast<int>(ir::Type::kPred); i <= static_cast<int>(ir::Type::kE5M2x2); ++i) {
      const auto type = static_cast<ir::Type>(i);
      out.emplace(ir::type_name(type), type);
    }
    return out;
  }();
  return map;
}

const WordMap<ir::Mod>& mods() {
  static const WordMap<ir::Mod> map = [] {
    WordMap<ir::Mod> out;
    for (size_t i = 0; i < static_cast<size_t>(ir::Mod::kCount); ++i) {
      const auto mod = static_cast<ir::Mod>(i);
      out.emplace(ir::mod_name(mod), mod);
    }
    // Spellings with an explicit sub-space that mean the plain space.
    out.emplace("shared::cta", ir::Mod::kShared);
    out.emplace("param::entry", ir::Mod::kParam);
    out.emplace("param::func", ir::Mod::kParam);
    return out;
  }();
  return map;
}

const WordMap<ir::Opcode>& opcodes() {
  static const WordMap<ir::Opcode> map = [] {
    WordMap<ir::Opcode> out;
    for (size_t i = 0; i < static_cast<size_t>(ir::Opcode::kCount); ++i) {
      const auto opcode = static_cast<ir::Opcode>(i);
      out.emplace(ir::opcode_name(opcode), opcode);
    }
    return out;
  }();
  return map;
}

// Whether the special register has .x/.y/.z components.
bool has_components(ir::Special special) {
  switch (special) {
    case ir::Special::kTid:
    case ir::Special::kNtid:
    case ir::Special::kCtaid:
    case ir::Special::kNctaid:
    case ir::Special::kClusterid:
    case ir::Special::kNclusterid:
    case ir::Special::kClusterCtaid:
    case ir::Special::kClusterNctaid:
      return true;
    default:
      return false;
  }
}

// Special registers written as a name and a number, or with words of their own; the table's
// names for them ("%envreg", "%pm", "%pm64", "%reserved_smem") are never written alone.
bool is_numbered(ir::Special special) {
  return special == ir::Special::kEnvreg || special == ir::Special::kPm ||
         special == ir::Special::kPm64 || special == ir::Special::kReserved;
}

const WordMap<ir::Special>& specials() {
  static const WordMap<ir::Special> map = [] {
    WordMap<ir::Special> out;
    for (size_t i = 0; i < static_cast<size_t>(ir::Special::kCount); ++i) {
      const auto special = static_cast<ir::Special>(i);
      if (!is_numbered(special)) out.emplace(ir::special_name(special), special);
    }
    return out;
  }();
  return map;
}

// A decimal number below |limit| with no sign and no leading zero, or nullopt.
std::optional<uint32_t> small_number(std::string_view text, uint32_t limit) {
  if (text.empty() || text.size() > 3 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value >= limit) return std::nullopt;
  return value;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

bool is_identifier(std::string_view word) {
  return !word.empty() && word[0] != '.' && word.find('.') == std::string_view::npos &&
         word.find(':') == std::string_view::npos;
}

std::optional<ir::Type> type_from_word(std::string_view word) {
  return find(types(), word);
}

std::optional<ir::Space> space_from_word(std::string_view word) {
  static const WordMap<ir::Space> map = {
      {"global", ir::Space::kGlobal},      {"shared", ir::Space::kShared},
      {"shared::cta", ir::Space::kShared}, {"shared::cluster", ir::Space::kSharedCluster},
      {"local", ir::Space::kLocal},        {"param", ir::Space::kParam},
      {"param::entry", ir::Space::kParam}, {"param::func", ir::Space::kParam},
      {"const", ir::Space::kConst},        {"reg", ir::Space::kReg},
  };
  return find(map, word);
}

std::optional<ir::Mod> mod_from_word(std::string_view word) {
  return find(mods(), word);
}

std::optional<ir::Opcode> opcode_from_word(std::string_view word) {
  return find(opcodes(), word);
}

std::optional<ir::Linkage> linkage_from_directive(std::string_view directive) {
  if (directive == ".visible") return ir::Linkage::kVisible;
  if (directive == ".extern") return ir::Linkage::kExtern;
  if (directive == ".weak") return ir::Linkage::kWeak;
  if (directive == ".common") return ir::Linkage::kCommon;
  return std::nullopt;
}

std::optional<SpecialRegister> special_from_word(std::string_view word, std::string* why) {
  why->clear();
  const size_t dot = word.find('.');
  const std::string_view name = word.substr(0, dot);
  const std::string_view suffix =
      dot == std::string_view::npos ? std::string_view() : word.substr(dot + 1);
  const bool has_suffix = dot != std::string_view::npos;
  SpecialRegister out;
  if (std::optional<ir::Special> special = find(specials(), name)) {
    out.special = *special;
    if (has_components(*special)) {
      if (suffix == "x" || suffix == "y" || suffix == "z") {
        out.component = static_cast<uint32_t>(suffix[0] - 'x');
        return out;
      }
      *why = quote(word) + ": " + std::string(name) + " needs a component: .x, .y or .z";
      return std::nullopt;
    }
    if (has_suffix) {
      *why = quote(word) + ": " + std::string(name) + " has no components";
      return std::nullopt;
    }
    return out;
  }
  if (has_suffix) return std::nullopt;
  if (starts_with(name, "%envreg")) {
    if (auto n = small_number(name.substr(7), 32)) return SpecialRegister{ir::Special::kEnvreg, *n};
  } else if (starts_with(name, "%pm")) {
    const std::string_view rest = name.substr(3);
    if (rest.size() > 3 && rest.substr(rest.size() - 3) == "_64") {
      if (auto n = small_number(rest.substr(0, rest.size() - 3), 8)) {
        return SpecialRegister{ir::Special::kPm64, *n};
      }
    } else if (auto n = small_number(rest, 8)) {
      return SpecialRegister{ir::Special::kPm, *n};
    }
  } else if (starts_with(name, "%reserved_smem_offset_")) {
    static constexpr std::string_view kParts[] = {"begin", "end", "cap", "0", "1"};
    const std::string_view part = name.substr(22);
    for (uint32_t i = 0; i < 5; ++i) {
      if (part == kParts[i]) return SpecialRegister{ir::Special::kReserved, i};
    }
  }
  return std::nullopt;
}

}  // namespace hal::ptx
