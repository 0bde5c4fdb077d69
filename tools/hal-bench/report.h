// What hal-bench measures and reports: samples reduced to median/min/max, figures (a hal
// measurement, its baseline measured in the same run, their ratio and an optional target), and
// the report that prints them and writes them as JSON.
#pragma once

#include <hal/hal.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bench {

// The median, minimum and maximum of a set of samples (all 0 when there are none).
struct Stats {
  double median = 0;
  double min = 0;
  double max = 0;
  uint32_t count = 0;
  static Stats of(std::vector<double> samples);
  // Applies |f| (monotonic) to every member, e.g. to turn times into rates. A decreasing |f|
  // swaps min and max.
  template <typename F>
  Stats map(F f) const {
    Stats s{f(median), f(min), f(max), count};
    if (s.min > s.max) std::swap(s.min, s.max);
    return s;
  }
};

// A target: the ratio value / baseline at most or at least |bound|, or, with |on_value|, the
// value's median itself (a goal in absolute terms, such as a rate, that needs no baseline).
struct Target {
  bool present = false;
  bool at_most = true;
  double bound = 0;
  std::string text;  // what the issue asks, in words
  bool on_value = false;
};

struct Figure {
  std::string family;  // "launch", "copy", "memory", "module_load", "matmul", "attention",
                       // "ptx_vulkan", "cpu_ptx"
  std::string name;    // unique within the report
  std::string what;    // one sentence: what was measured
  std::string unit;    // "us", "GB/s", "ms", "GFLOP/s", "M lane-instr/s"
  bool higher_is_better = false;
  std::vector<std::pair<std::string, std::string>> params;  // size, kernel, ...
  Stats value;                                              // hal's
  bool has_baseline = false;
  std::string baseline_name;     // what the baseline is
  std::string baseline_missing;  // why there is none (when !has_baseline)
  Stats baseline;
  Target target;
  std::string note;  // on a missed target: why, and what would fix it

  // value.median / baseline.median (0 without a baseline).
  double ratio() const;
  // Whether the target can be judged: a value target always, a ratio target with a baseline.
  bool target_judged() const;
  // What the target bounds: the value's median or the ratio.
  double target_subject() const;
  bool target_met() const;
};

struct DeviceSummary {
  hal_device_info info{};
  std::string selector;
};

class Report {
 public:
  void set_device(const DeviceSummary& device) { device_ = device; }
  void set_config(bool quick, uint32_t reps, const std::string& filter);
  // Adds a figure and prints it as one line.
  void add(Figure figure);
  // A remark for the whole run (a baseline that is unavailable, a skipped family, an error).
  void note(const std::string& text);
  void error(const std::string& text);
  size_t error_count() const { return errors_.size(); }
  const std::vector<Figure>& figures() const { return figures_; }
  void set_elapsed(double seconds) { elapsed_s_ = seconds; }

  std::string json() const;
  // Prints the target lines at the end of the run.
  void print_summary() const;

 private:
  DeviceSummary device_;
  bool quick_ = false;
  uint32_t reps_ = 0;
  std::string filter_;
  std::vector<Figure> figures_;
  std::vector<std::string> notes_;
  std::vector<std::string> errors_;
  double elapsed_s_ = 0;
};

}  // namespace bench
