// Known failures: tests expected to fail on a given backend and driver, each with the reason.
//
// The list is text, one entry a line, fields separated by '|':
//
//   <backend> | <driver pattern> | <test pattern> | <reason sentence>
//
// <backend> is a backend's name ("cuda", "vulkan", a driver module's own) or "*"; <driver
// pattern> is matched against the device's driver name and against its device name (either may
// match); <test pattern> against "Area.Test" (the test's name without the device suffix).
// Patterns use '*' (any run of characters) and '?' (one character), case-insensitively. '#'
// starts a comment; blank lines are ignored.
#pragma once

#include <string>
#include <vector>

namespace cts {

struct Device;

struct KnownFailure {
  std::string backend;
  std::string driver;
  std::string test;
  std::string reason;
  int line = 0;
};

class KnownFailures {
 public:
  // Parses |text|; malformed lines are returned in |errors| ("<source>:<line>: what").
  bool parse(const std::string& text, const std::string& source, std::vector<std::string>* errors);
  // The entry covering test |area_test| ("Area.Test") on |device|, or nullptr.
  const KnownFailure* match(const std::string& area_test, const Device& device) const;
  size_t size() const { return entries_.size(); }
  const std::string& source() const { return source_; }

 private:
  std::vector<KnownFailure> entries_;
  std::string source_;
};

// '*' and '?' wildcards, case-insensitive.
bool glob_match(const std::string& pattern, const std::string& text);

// The list built into the program (tools/hal-cts/known_failures.txt at build time).
const char* builtin_known_failures();

}  // namespace cts
