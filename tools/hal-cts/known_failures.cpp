// Parsing and matching the known-failure list.
#include "known_failures.h"

#include <cctype>
#include <sstream>

#include "cts.h"

namespace cts {

namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool glob_at(const char* p, const char* t) {
  // Iterative matcher with one backtrack point for the last '*'.
  const char* star = nullptr;
  const char* resume = nullptr;
  while (*t != '\0') {
    if (*p == '*') {
      star = p++;
      resume = t;
    } else if (*p == '?' || (*p != '\0' && std::tolower(static_cast<unsigned char>(*p)) ==
                                               std::tolower(static_cast<unsigned char>(*t)))) {
      ++p;
      ++t;
    } else if (star != nullptr) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (*p == '*') ++p;
  return *p == '\0';
}

}  // namespace

bool glob_match(const std::string& pattern, const std::string& text) {
  return glob_at(pattern.c_str(), text.c_str());
}

bool KnownFailures::parse(const std::string& text, const std::string& source, bool vendor,
                          std::vector<std::string>* errors) {
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool ok = true;
  while (std::getline(in, line)) {
    ++number;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    if (trim(line).empty()) continue;
    std::vector<std::string> fields;
    size_t start = 0;
    for (int i = 0; i < 3; ++i) {
      const size_t bar = line.find('|', start);
      if (bar == std::string::npos) break;
      fields.push_back(trim(line.substr(start, bar - start)));
      start = bar + 1;
    }
    fields.push_back(trim(line.substr(start)));
    if (fields.size() != 4 || fields[0].empty() || fields[1].empty() || fields[2].empty() ||
        fields[3].empty()) {
      errors->push_back(source + ":" + std::to_string(number) +
                        ": expected \"backend | driver pattern | test pattern | reason\"");
      ok = false;
      continue;
    }
    const std::string area = fields[2].substr(0, fields[2].find('.'));
    if (vendor && (fields[0].find_first_of("*?") != std::string::npos ||
                   fields[2].find('.') == std::string::npos ||
                   area.find_first_of("*?") != std::string::npos)) {
      errors->push_back(source + ":" + std::to_string(number) +
                        ": a vendor's entry names its backend and its tests' area without "
                        "wildcards (\"vulkan | <driver> | Numerics.Softmax* | <reason>\")");
      ok = false;
      continue;
    }
    entries_.push_back({fields[0], fields[1], fields[2], fields[3], source, number});
  }
  return ok;
}

const KnownFailure* KnownFailures::match(const std::string& area_test, const Device& device) const {
  for (const KnownFailure& e : entries_) {
    if (!glob_match(e.backend, device.backend_name)) continue;
    if (!glob_match(e.driver, device.info.driver_name) && !glob_match(e.driver, device.info.name)) {
      continue;
    }
    if (glob_match(e.test, area_test)) return &e;
  }
  return nullptr;
}

}  // namespace cts
