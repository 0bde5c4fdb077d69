// Failures grouped by their cause, root causes first. One defect of a device often fails many
// tests: a driver whose allocations break hal's rules fails every test that allocates, one that
// claims an IR it cannot run fails every test that loads a kernel. Reading them in run order, a
// driver engineer meets a side effect first and the cause somewhere among dozens of repeats.
//
// Two failures on one device share a cause when they quote the same error (the status name and
// hal_last_error() that describe() puts in every failure message) once addresses and numbers are
// set aside (the first sentence of each, which names the cause). Failures joined that way, directly
// or through others, form one group; its root is the one that ran first, since the areas run from
// the most basic (DeviceInfo, Memory) up. A failure that quotes no error (a wrong value) is its own
// group.
#pragma once

#include <string>
#include <vector>

namespace cts {

struct TestRecord;

struct FailureGroup {
  size_t root = 0;                // index in the records
  std::vector<size_t> followers;  // the group's other failures, in run order
  std::string cause;              // the error the group shares, or "" for a group of one
};

// The groups of the failed records (Outcome::kFailed), ordered by their roots' run order.
std::vector<FailureGroup> group_failures(const std::vector<TestRecord>& records);

// The errors a failure message quotes ("HAL_ERROR_X: text" up to the end of its first sentence),
// with hexadecimal and decimal numbers replaced by '#'.
std::vector<std::string> quoted_errors(const std::string& message);

}  // namespace cts
