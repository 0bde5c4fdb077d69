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
//
// Two lists apply: the one built into hal-cts (known_failures.txt), and optionally a vendor's own
// (--known-failures), reviewed with the vendor's submission and identified by its SHA-256 in the
// report. A vendor's entry must name its backend and the area of its tests ("vulkan", not "*";
// "Numerics.Softmax*", not "*"), so that one line cannot excuse every failure of every device.
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
  std::string source;  // the list it came from
  int line = 0;
};

class KnownFailures {
 public:
  // Parses |text| and adds its entries; malformed lines are returned in |errors|
  // ("<source>:<line>: what"). |vendor|: a vendor's list, held to the rule above.
  bool parse(const std::string& text, const std::string& source, bool vendor,
             std::vector<std::string>* errors);
  // The entry covering test |area_test| ("Area.Test") on |device|, or nullptr.
  const KnownFailure* match(const std::string& area_test, const Device& device) const;
  size_t size() const { return entries_.size(); }

 private:
  std::vector<KnownFailure> entries_;
};

// '*' and '?' wildcards, case-insensitive.
bool glob_match(const std::string& pattern, const std::string& text);

// The list built into the program (tools/hal-cts/known_failures.txt at build time).
const char* builtin_known_failures();

}  // namespace cts
