// Grouping failures by the errors they quote.
#include "root_causes.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>

#include "report.h"

namespace cts {

std::vector<std::string> quoted_errors(const std::string& message) {
  std::vector<std::string> out;
  for (size_t at = message.find("HAL_ERROR_"); at != std::string::npos;
       at = message.find("HAL_ERROR_", at + 1)) {
    const size_t end = message.find('\n', at);
    const std::string line = message.substr(at, end == std::string::npos ? end : end - at);
    if (line.find(": ") == std::string::npos) continue;  // a status named, no message quoted
    std::string key;
    for (size_t i = 0; i < line.size();) {
      const unsigned char c = static_cast<unsigned char>(line[i]);
      if (line.compare(i, 2, "0x") == 0) {
        i += 2;
        while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
        key += '#';
      } else if (std::isdigit(c) &&
                 (i == 0 || !std::isalpha(static_cast<unsigned char>(line[i - 1])))) {
        while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
        key += '#';
      } else {
        key += line[i++];
      }
    }
    // The first sentence names the cause; what follows may be a hint, or other text of the same
    // failure message.
    out.push_back(key.substr(0, std::min(key.find(". "), key.find("; "))));
  }
  return out;
}

std::vector<FailureGroup> group_failures(const std::vector<TestRecord>& records) {
  // Union-find over the failed records; the smaller index (the earlier test) becomes the root.
  std::vector<size_t> parent(records.size());
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto find = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::map<std::string, size_t> first_with;  // device + error -> first failure quoting it
  std::vector<std::string> shared(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].outcome != Outcome::kFailed) continue;
    for (const std::string& error : quoted_errors(records[i].message)) {
      const auto [it, inserted] = first_with.emplace(records[i].device + "\n" + error, i);
      if (inserted) continue;
      const size_t a = find(it->second), b = find(i);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
      if (shared[it->second].empty()) shared[it->second] = error;
    }
  }
  std::vector<FailureGroup> groups;
  std::map<size_t, size_t> group_of_root;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].outcome != Outcome::kFailed) continue;
    const size_t root = find(i);
    if (root == i) {
      group_of_root[i] = groups.size();
      groups.push_back({i, {}, shared[i]});
    } else {
      FailureGroup& g = groups[group_of_root.at(root)];
      g.followers.push_back(i);
      if (g.cause.empty()) g.cause = shared[i];
    }
  }
  return groups;
}

}  // namespace cts
