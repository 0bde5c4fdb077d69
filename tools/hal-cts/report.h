// The run's record and what is printed from it: a gtest listener that shows progress (one line
// per test: how many are done and left, the area, the test, its result and time), classifies each
// result (passed, failed, skipped, known failure, unexpected pass), and afterwards the summary
// table, the perf table and the JSON report.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "known_failures.h"
#include "run_info.h"

namespace cts {

enum class Outcome { kPassed, kFailed, kSkipped, kKnownFailure, kUnexpectedPass };
// "passed", "failed", "skipped", "known-failure", "unexpected-pass"
const char* outcome_name(Outcome outcome);

struct TestRecord {
  std::string name;    // gtest's full name: "Area.Test/device"
  std::string area;    // "Memory"
  std::string test;    // "Test"
  std::string device;  // device label
  Outcome outcome = Outcome::kPassed;
  double time_ms = 0;
  std::string message;       // failures, or the skip reason
  std::string known_reason;  // the known-failure entry's reason, if one matched
  std::string known_source;  // and the list it came from
};

// One line of the summary: the tests of one area on one device.
struct SummaryRow {
  std::string area, device;
  int passed = 0, failed = 0, known = 0, skipped = 0;  // passed includes unexpected passes
  double ms = 0;
};

class Recorder : public ::testing::EmptyTestEventListener {
 public:
  Recorder(const KnownFailures& known, FILE* out) : known_(known), out_(out) {}

  void OnTestProgramStart(const ::testing::UnitTest& unit_test) override;
  void OnTestStart(const ::testing::TestInfo& info) override;
  void OnTestPartResult(const ::testing::TestPartResult& result) override;
  void OnTestEnd(const ::testing::TestInfo& info) override;

  const std::vector<TestRecord>& records() const { return records_; }
  // Failed tests that are not known failures.
  int failures() const;

  // The summary table (area, device, passed, failed, known, skipped, time) and the list of
  // failures, known failures and unexpected passes.
  void print_summary(double total_ms) const;
  // The perf table (figures recorded with record_figure).
  void print_perf() const;
  // The JSON report (schema in docs/CONFORMANCE.md).
  std::string json(const RunContext& run, double total_ms) const;
  // The one-page summary a vendor publishes (--report-md), in Markdown.
  std::string markdown(const RunContext& run, double total_ms) const;
  // Whether the run is one a vendor may submit (docs/CONFORMANCE.md): full, unfiltered, no
  // failure, no known failure that passed, and the minimum coverage on every device
  // (coverage.h). |reasons| says why not.
  bool submittable(const RunContext& run, std::vector<std::string>* reasons) const;

 private:
  // The summary's lines in first-run order, and their sum in |total|.
  std::vector<SummaryRow> summary_rows(SummaryRow* total) const;

  const KnownFailures& known_;
  FILE* out_;
  int total_ = 0;
  int done_ = 0;
  double started_ms_ = 0;
  std::string message_;
  std::string skip_message_;
  std::vector<TestRecord> records_;
};

}  // namespace cts
