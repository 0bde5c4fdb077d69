// Progress, classification, the summary and perf tables, and the JSON report.
#include "report.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <set>

#include "coverage.h"
#include "cts.h"
#include "device_json.h"
#include "json_writer.h"
#include "root_causes.h"

namespace cts {

using hal_tools::JsonWriter;

namespace {

std::string join_lines(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : separator) + part;
  return out;
}

const Device* find_device(const std::string& label) {
  for (const Device& d : devices()) {
    if (d.label == label) return &d;
  }
  return nullptr;
}

void write_device(JsonWriter& j, const Device& d) {
  j.begin_object();
  j.field("label", d.label);
  j.field("module", d.module);
  hal_tools::write_device_fields(j, d.info);
  j.end_object();
}

}  // namespace

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPassed:
      return "passed";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kSkipped:
      return "skipped";
    case Outcome::kKnownFailure:
      return "known-failure";
    case Outcome::kUnexpectedPass:
      return "unexpected-pass";
  }
  return "unknown";
}

void Recorder::OnTestProgramStart(const ::testing::UnitTest& unit_test) {
  total_ = unit_test.test_to_run_count();
  std::fprintf(out_, "hal-cts: %d tests on %zu device(s)\n", total_, devices().size());
  for (const Device& d : devices()) {
    std::fprintf(out_, "  %-10s %s (%s, driver %s, IR %s)\n", d.label.c_str(), d.info.name,
                 d.backend_name.c_str(), d.info.driver_name,
                 hal_tools::join(hal_tools::ir_names(d.info.ir_mask), ",").c_str());
  }
  std::fflush(out_);
}

void Recorder::OnTestStart(const ::testing::TestInfo& info) {
  message_.clear();
  skip_message_.clear();
  started_ms_ = now_ms();
  std::string name = info.name();
  std::fprintf(out_, "[%3d/%d, %d left] %-10s %s ...", done_ + 1, total_, total_ - done_ - 1,
               info.test_suite_name(), name.c_str());
  std::fflush(out_);
}

void Recorder::OnTestPartResult(const ::testing::TestPartResult& result) {
  if (result.skipped()) {
    skip_message_ += result.message();
    return;
  }
  if (!result.failed()) return;
  std::string where;
  if (result.file_name() != nullptr) {
    std::string file = result.file_name();
    const size_t slash = file.find_last_of('/');
    if (slash != std::string::npos) file = file.substr(slash + 1);
    where = file + ":" + std::to_string(result.line_number()) + ": ";
  }
  if (!message_.empty()) message_ += "\n";
  message_ += where + result.message();
}

void Recorder::OnTestEnd(const ::testing::TestInfo& info) {
  ++done_;
  TestRecord r;
  r.area = info.test_suite_name();
  const std::string full = info.name();
  const size_t slash = full.find_last_of('/');
  r.test = slash == std::string::npos ? full : full.substr(0, slash);
  r.device = info.value_param() != nullptr ? info.value_param() : "";
  r.name = r.area + "." + full;
  r.time_ms = now_ms() - started_ms_;
  const ::testing::TestResult* result = info.result();
  const Device* device = find_device(r.device);
  const KnownFailure* known =
      device != nullptr ? known_.match(r.area + "." + r.test, *device) : nullptr;
  if (result->Skipped()) {
    r.outcome = Outcome::kSkipped;
    r.message = skip_message_;
  } else if (result->Failed()) {
    r.outcome = known != nullptr ? Outcome::kKnownFailure : Outcome::kFailed;
    r.message = message_;
  } else {
    r.outcome = known != nullptr ? Outcome::kUnexpectedPass : Outcome::kPassed;
  }
  if (known != nullptr) {
    r.known_reason = known->reason;
    r.known_source = known->source;
  }

  std::fprintf(out_, " %s (%.0f ms)\n", outcome_name(r.outcome), r.time_ms);
  if (r.outcome == Outcome::kSkipped && !r.message.empty()) {
    std::fprintf(out_, "    skipped: %s\n", r.message.c_str());
  } else if (r.outcome == Outcome::kFailed || r.outcome == Outcome::kKnownFailure) {
    if (known != nullptr) std::fprintf(out_, "    known failure: %s\n", known->reason.c_str());
    std::string indented = "    " + r.message;
    for (size_t p = 0; (p = indented.find('\n', p)) != std::string::npos; p += 5) {
      indented.replace(p, 1, "\n    ");
    }
    std::fprintf(out_, "%s\n", indented.c_str());
  } else if (r.outcome == Outcome::kUnexpectedPass) {
    std::fprintf(out_, "    unexpected pass: listed as a known failure (%s); remove the entry\n",
                 known->reason.c_str());
  }
  std::fflush(out_);
  records_.push_back(std::move(r));
}

int Recorder::failures() const {
  int n = 0;
  for (const TestRecord& r : records_) n += r.outcome == Outcome::kFailed;
  return n;
}

std::vector<SummaryRow> Recorder::summary_rows(SummaryRow* total) const {
  std::vector<SummaryRow> rows;
  *total = SummaryRow{};
  for (const TestRecord& r : records_) {
    auto row = std::find_if(rows.begin(), rows.end(), [&](const SummaryRow& x) {
      return x.area == r.area && x.device == r.device;
    });
    if (row == rows.end()) row = rows.insert(rows.end(), SummaryRow{r.area, r.device});
    for (SummaryRow* x : {&*row, total}) {
      x->passed += r.outcome == Outcome::kPassed || r.outcome == Outcome::kUnexpectedPass;
      x->failed += r.outcome == Outcome::kFailed;
      x->known += r.outcome == Outcome::kKnownFailure;
      x->skipped += r.outcome == Outcome::kSkipped;
      x->ms += r.time_ms;
    }
  }
  return rows;
}

void Recorder::print_summary(double total_ms) const {
  SummaryRow total;
  const std::vector<SummaryRow> rows = summary_rows(&total);
  std::fprintf(out_, "\nSummary\n");
  std::fprintf(out_, "%-12s %-10s %7s %7s %7s %8s %10s\n", "area", "device", "passed", "failed",
               "known", "skipped", "time (s)");
  for (const SummaryRow& row : rows) {
    std::fprintf(out_, "%-12s %-10s %7d %7d %7d %8d %10.2f\n", row.area.c_str(), row.device.c_str(),
                 row.passed, row.failed, row.known, row.skipped, row.ms / 1000.0);
  }
  std::fprintf(out_, "%-12s %-10s %7d %7d %7d %8d %10.2f\n", "total", "", total.passed,
               total.failed, total.known, total.skipped, total_ms / 1000.0);
  // Failures, root causes first: each group's first failure, then the ones that quote the same
  // error (root_causes.h).
  for (const FailureGroup& g : group_failures(records_)) {
    const TestRecord& root = records_[g.root];
    std::fprintf(out_, "FAILED          %s\n", root.name.c_str());
    if (g.followers.empty()) continue;
    std::fprintf(out_, "  root cause of %zu more, which fail with the same error (%s):\n",
                 g.followers.size(), g.cause.c_str());
    for (size_t i : g.followers) std::fprintf(out_, "    %s\n", records_[i].name.c_str());
  }
  for (const TestRecord& r : records_) {
    if (r.outcome == Outcome::kKnownFailure) {
      std::fprintf(out_, "KNOWN FAILURE   %s: %s\n", r.name.c_str(), r.known_reason.c_str());
    }
  }
  for (const TestRecord& r : records_) {
    if (r.outcome == Outcome::kUnexpectedPass) {
      std::fprintf(out_, "UNEXPECTED PASS %s (listed: %s)\n", r.name.c_str(),
                   r.known_reason.c_str());
    }
  }
  std::fprintf(out_, "%s: %d failed, %d known failure(s), %d passed, %d skipped\n",
               total.failed == 0 ? "PASS" : "FAIL", total.failed, total.known, total.passed,
               total.skipped);
  for (const Device& d : devices()) {
    const Coverage c = coverage_of(d, records_);
    std::fprintf(out_, "coverage %s\n", coverage_text(c).c_str());
    if (d.info.vendor_id == 0) {
      std::fprintf(out_,
                   "identity %s: vendor id 0, the device names no vendor (a product reports "
                   "its PCI vendor id, or the one Khronos registered for its maker)\n",
                   d.label.c_str());
    }
  }
  std::fflush(out_);
}

void Recorder::print_perf() const {
  std::fprintf(out_, "\nPerformance (median of repetitions)\n");
  std::fprintf(out_, "%-10s %-28s %14s %-11s %14s %7s  %s\n", "device", "figure", "value", "unit",
               "peak", "%peak", "detail");
  for (const Figure& f : figures()) {
    char peak[32] = "n/a", share[16] = "n/a";
    if (f.peak > 0) {
      std::snprintf(peak, sizeof peak, "%.1f", f.peak);
      std::snprintf(share, sizeof share, "%.1f", 100.0 * f.value / f.peak);
    }
    std::fprintf(out_, "%-10s %-28s %14.3f %-11s %14s %7s  %s\n", f.device.c_str(), f.name.c_str(),
                 f.value, f.unit.c_str(), peak, share, f.detail.c_str());
  }
  std::set<std::string> sources;
  for (const Figure& f : figures()) {
    if (!f.peak_source.empty()) sources.insert(f.peak_source);
  }
  for (const std::string& s : sources) std::fprintf(out_, "  peak: %s\n", s.c_str());
  std::fflush(out_);
}

bool Recorder::submittable(const RunContext& run, std::vector<std::string>* reasons) const {
  reasons->clear();
  if (options().quick) reasons->push_back("a --quick run is not a full run");
  if (run.filtered) reasons->push_back("--filter ran only some of the tests");
  int failed = 0, unexpected = 0;
  for (const TestRecord& r : records_) {
    failed += r.outcome == Outcome::kFailed;
    unexpected += r.outcome == Outcome::kUnexpectedPass;
  }
  if (failed > 0) {
    const std::vector<FailureGroup> groups = group_failures(records_);
    std::string roots;
    for (const FailureGroup& g : groups)
      roots += (roots.empty() ? "" : ", ") + records_[g.root].name;
    reasons->push_back(std::to_string(failed) + " test(s) failed, from " +
                       std::to_string(groups.size()) + " root cause(s): " + roots);
  }
  for (const Device& d : devices()) {
    const Coverage c = coverage_of(d, records_);
    // One reason a device, its shortfalls joined: a filtered run misses many at once.
    std::string shortfalls;
    for (const std::string& why : c.below_minimum) {
      shortfalls += (shortfalls.empty() ? "" : "; ") + why;
    }
    if (!shortfalls.empty()) {
      reasons->push_back("below the minimum coverage on " + d.label + ": " + shortfalls);
    }
  }
  if (unexpected > 0) {
    reasons->push_back(std::to_string(unexpected) +
                       " known failure(s) passed: the published list is out of date");
  }
  return reasons->empty();
}

std::string Recorder::json(const RunContext& run, double total_ms) const {
  JsonWriter j;
  j.begin_object();
  j.field("schema_version", 3);
  j.key("hal").begin_object();
  j.field("library_version", hal_tools::version_text(hal_version()));
  j.field("header_version", hal_tools::version_text(HAL_VERSION));
  j.field("commit", std::string(build_commit()));
  j.end_object();
  j.field("command_line", run.command_line);
  j.field("started_at", run.started_at);
  j.field("finished_at", run.finished_at);
  j.key("host").begin_object();
  j.field("os", run.host.os);
  j.field("kernel", run.host.kernel);
  j.field("machine", run.host.machine);
  j.field("cpu", run.host.cpu);
  j.end_object();
  j.key("options").begin_object();
  j.field("quick", options().quick);
  j.field("perf", options().perf);
  j.field("mode", std::string(options().quick ? "quick" : "full"));
  j.field("ir", std::string(options().ir == HAL_IR_PTX     ? "ptx"
                            : options().ir == HAL_IR_SPIRV ? "spirv"
                                                           : "auto"));
  j.field("filtered", run.filtered);
  j.end_object();
  std::vector<std::string> reasons;
  j.field("submittable", submittable(run, &reasons));
  j.key("not_submittable_because").begin_array();
  for (const std::string& reason : reasons) j.value(reason);
  j.end_array();
  j.key("known_failures").begin_object();
  j.key("builtin").begin_object();
  j.field("sha256", sha256_hex(run.known_failures_text));
  j.field("text", run.known_failures_text);
  j.end_object();
  if (run.vendor_known_failures_source.empty()) {
    j.key("vendor").null();
  } else {
    j.key("vendor").begin_object();
    j.field("source", run.vendor_known_failures_source);
    j.field("sha256", sha256_hex(run.vendor_known_failures_text));
    j.field("text", run.vendor_known_failures_text);
    j.end_object();
  }
  j.end_object();
  j.key("devices").begin_array();
  for (const Device& d : devices()) write_device(j, d);
  j.end_array();

  const std::vector<FailureGroup> groups = group_failures(records_);
  std::map<size_t, size_t> caused_by;  // follower -> root
  for (const FailureGroup& g : groups) {
    for (size_t i : g.followers) caused_by[i] = g.root;
  }
  int counts[5] = {0, 0, 0, 0, 0};
  j.key("tests").begin_array();
  for (const TestRecord& r : records_) {
    ++counts[static_cast<int>(r.outcome)];
    j.begin_object();
    j.field("name", r.name);
    j.field("area", r.area);
    j.field("test", r.test);
    j.field("device", r.device);
    j.field("result", outcome_name(r.outcome));
    j.field("time_ms", std::round(r.time_ms * 1000.0) / 1000.0);
    j.field("message", r.message);
    if (!r.known_reason.empty()) {
      j.field("known_failure_reason", r.known_reason);
      j.field("known_failure_list", r.known_source);
    }
    if (const auto cause = caused_by.find(&r - records_.data()); cause != caused_by.end()) {
      j.field("caused_by", records_[cause->second].name);
    }
    j.end_object();
  }
  j.end_array();

  j.key("root_causes").begin_array();
  for (const FailureGroup& g : groups) {
    j.begin_object();
    j.field("test", records_[g.root].name);
    j.field("shared_error", g.cause);
    j.key("followers").begin_array();
    for (size_t i : g.followers) j.value(records_[i].name);
    j.end_array();
    j.end_object();
  }
  j.end_array();

  j.key("coverage").begin_array();
  for (const Device& d : devices()) {
    const Coverage c = coverage_of(d, records_);
    j.begin_object();
    j.field("device", c.device);
    j.field("tests", c.tests);
    j.field("passed", c.passed);
    j.field("skipped", c.skipped);
    j.field("numerics_run", c.numerics_run);
    j.field("numerics_tests", c.numerics_tests);
    j.field("pack_kernels", c.pack_kernels);
    j.field("pack_kernels_provided", c.pack_provided);
    j.key("not_applicable").begin_array();
    for (const std::string& a : c.not_applicable) j.value(a);
    j.end_array();
    j.key("below_minimum").begin_array();
    for (const std::string& why : c.below_minimum) j.value(why);
    j.end_array();
    j.field("vendor_id_missing", d.info.vendor_id == 0);
    j.field("text", coverage_text(c));
    j.end_object();
  }
  j.end_array();

  j.key("perf").begin_array();
  for (const Figure& f : figures()) {
    j.begin_object();
    j.field("device", f.device);
    j.field("name", f.name);
    j.field("value", f.value);
    j.field("unit", f.unit);
    j.field("repetitions", f.repetitions);
    if (f.peak > 0) {
      j.field("peak", f.peak);
    } else {
      j.key("peak").null();
    }
    j.field("peak_source", f.peak_source);
    j.field("detail", f.detail);
    j.end_object();
  }
  j.end_array();

  j.key("summary").begin_object();
  j.field("passed", counts[static_cast<int>(Outcome::kPassed)] +
                        counts[static_cast<int>(Outcome::kUnexpectedPass)]);
  j.field("failed", counts[static_cast<int>(Outcome::kFailed)]);
  j.field("known_failures", counts[static_cast<int>(Outcome::kKnownFailure)]);
  j.field("unexpected_passes", counts[static_cast<int>(Outcome::kUnexpectedPass)]);
  j.field("skipped", counts[static_cast<int>(Outcome::kSkipped)]);
  j.field("total", static_cast<int64_t>(records_.size()));
  j.field("time_s", std::round(total_ms) / 1000.0);
  j.field("ok", counts[static_cast<int>(Outcome::kFailed)] == 0);
  j.end_object();
  j.end_object();
  return j.text();
}

std::string Recorder::markdown(const RunContext& run, double total_ms) const {
  std::string md;
  auto line = [&md](const std::string& text) { md += text + "\n"; };
  std::vector<std::string> reasons;
  const bool ok_to_submit = submittable(run, &reasons);
  line("# hal conformance report");
  line("");
  line("| | |");
  line("|---|---|");
  line("| hal | " + hal_tools::version_text(hal_version()) + " (commit " + build_commit() + ") |");
  line("| run | " + run.started_at + " to " + run.finished_at + ", " +
       (options().quick ? "quick" : "full") + (options().perf ? " with --perf" : "") +
       ", kernel pack in " + ir_text(options().ir) + " IR |");
  line("| host | " + run.host.os + ", " + run.host.kernel + " " + run.host.machine +
       (run.host.cpu.empty() ? "" : ", " + run.host.cpu) + " |");
  line("| command | `" + run.command_line + "` |");
  line("| known failures | built-in list, sha256 " + sha256_hex(run.known_failures_text) +
       (run.vendor_known_failures_source.empty()
            ? std::string()
            : "; the vendor's " + run.vendor_known_failures_source + ", sha256 " +
                  sha256_hex(run.vendor_known_failures_text)) +
       " |");
  line("| submittable | " + std::string(ok_to_submit ? "yes" : "no: " + join_lines(reasons, "; ")) +
       " |");
  line("");
  line("## Devices");
  line("");
  line("| device | name | driver | driver info | API | conformance | backend |");
  line("|---|---|---|---|---|---|---|");
  for (const Device& d : devices()) {
    const std::string conformance = hal_tools::conformance_version_text(d.info.conformance_version);
    line("| " + d.label + " | " + d.info.name + " | " + d.info.driver_name + " " +
         hal_tools::driver_version_text(d.info) + " | " + d.info.driver_info + " | " +
         hal_tools::api_version_text(d.info) + " | " +
         (conformance.empty() ? "none claimed" : conformance) + " | " + d.backend_name +
         (d.module.empty() ? "" : " (module `" + d.module + "`)") + " |");
  }
  line("");
  line("## Results");
  line("");
  line("| area | device | passed | failed | known | skipped |");
  line("|---|---|---|---|---|---|");
  SummaryRow total;
  const std::vector<SummaryRow> rows = summary_rows(&total);
  auto counts = [](const SummaryRow& c) {
    return std::to_string(c.passed) + " | " + std::to_string(c.failed) + " | " +
           std::to_string(c.known) + " | " + std::to_string(c.skipped);
  };
  for (const SummaryRow& row : rows) {
    line("| " + row.area + " | " + row.device + " | " + counts(row) + " |");
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", total_ms / 1000.0);
  line("| **total** | | " + counts(total) + " |");
  line("");
  line(std::string("Total time ") + seconds + " s.");
  line("");
  line("## Coverage");
  line("");
  for (const Device& d : devices()) {
    const Coverage c = coverage_of(d, records_);
    line("- " + coverage_text(c) + "." +
         (c.below_minimum.empty()
              ? " Meets the minimum."
              : " Below the minimum: " + join_lines(c.below_minimum, "; ") + ".") +
         (d.info.vendor_id == 0 ? " The device reports vendor id 0." : ""));
  }
  auto item = [&](const TestRecord& r) {
    std::string why = r.outcome == Outcome::kKnownFailure || r.outcome == Outcome::kUnexpectedPass
                          ? r.known_reason
                          : r.message;
    for (char& c : why) {
      if (c == '\n' || c == '|') c = ' ';
    }
    if (why.size() > 300) why = why.substr(0, 297) + "...";
    return "`" + r.name + "`: " + outcome_name(r.outcome) + (why.empty() ? "" : ": " + why);
  };
  const std::vector<FailureGroup> groups = group_failures(records_);
  if (!groups.empty()) {
    line("");
    line("## Failures, root causes first");
    line("");
    for (const FailureGroup& g : groups) {
      line("- " + item(records_[g.root]));
      if (g.followers.empty()) continue;
      std::string names;
      for (size_t i : g.followers) names += (names.empty() ? "`" : ", `") + records_[i].name + "`";
      line("  - root cause of " + std::to_string(g.followers.size()) +
           " more failures with the same error: " + names);
    }
  }
  bool heading = false;
  for (const TestRecord& r : records_) {
    if (r.outcome == Outcome::kPassed || r.outcome == Outcome::kFailed) continue;
    if (!heading) {
      line("");
      line("## Not passed");
      line("");
      heading = true;
    }
    line("- " + item(r));
  }
  if (!figures().empty()) {
    line("");
    line("## Performance (median of repetitions)");
    line("");
    line("| device | figure | value | unit | detail |");
    line("|---|---|---|---|---|");
    for (const Figure& f : figures()) {
      char value[32];
      std::snprintf(value, sizeof value, "%.3f", f.value);
      line("| " + f.device + " | " + f.name + " | " + value + " | " + f.unit + " | " + f.detail +
           " |");
    }
  }
  return md;
}

}  // namespace cts
