// What a conformance report says about the run itself, so that a published report can be
// reproduced and judged: hal's version and the commit it was built from, the host (OS, kernel,
// CPU), the start and end times, the run mode, and the known-failure lists that were applied,
// with their SHA-256.
#pragma once

#include <string>

namespace cts {

struct Host {
  std::string os;       // PRETTY_NAME of /etc/os-release, else uname's sysname
  std::string kernel;   // uname's sysname and release
  std::string machine;  // uname's machine ("x86_64")
  std::string cpu;      // the first "model name" of /proc/cpuinfo, or ""
};
Host describe_host();

// Everything about one run that its report states besides the results.
struct RunContext {
  std::string command_line;
  std::string started_at;   // utc_now() before the first test
  std::string finished_at;  // utc_now() after the last
  Host host;
  std::string known_failures_text;  // the built-in list (known_failures.txt)
  // A vendor's own list (--known-failures), applied besides the built-in one: its file name and
  // text, or "" for none.
  std::string vendor_known_failures_source;
  std::string vendor_known_failures_text;
  bool filtered = false;  // --filter narrowed the tests
};

// The commit hal-cts was built from ("unknown" outside a git checkout), with "-dirty" when the
// tree had changes when the build was configured.
const char* build_commit();

// The current time as "2026-12-03T17:04:05Z".
std::string utc_now();

// The SHA-256 of |text|, as 64 lowercase hex digits (FIPS 180-4).
std::string sha256_hex(const std::string& text);

}  // namespace cts
