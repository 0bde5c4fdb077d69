#include "report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "device_json.h"
#include "json_writer.h"

namespace bench {

using hal_tools::JsonWriter;

Stats Stats::of(std::vector<double> samples) {
  Stats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.count = static_cast<uint32_t>(n);
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return s;
}

double Figure::ratio() const {
  if (!has_baseline || baseline.median == 0) return 0;
  return value.median / baseline.median;
}

bool Figure::target_judged() const {
  return target.present && (target.on_value || has_baseline);
}

double Figure::target_subject() const {
  return target.on_value ? value.median : ratio();
}

bool Figure::target_met() const {
  if (!target_judged()) return false;
  const double x = target_subject();
  return target.at_most ? x <= target.bound : x >= target.bound;
}

void Report::set_config(bool quick, uint32_t reps, const std::string& filter) {
  quick_ = quick;
  reps_ = reps;
  filter_ = filter;
}

void Report::add(Figure figure) {
  std::string params;
  for (const auto& [k, v] : figure.params) params += " " + k + "=" + v;
  std::printf("%-12s %-34s%s\n", figure.family.c_str(), figure.name.c_str(), params.c_str());
  std::printf("    hal      %12.4g %-8s (min %.4g, max %.4g, n=%u)\n", figure.value.median,
              figure.unit.c_str(), figure.value.min, figure.value.max, figure.value.count);
  if (figure.has_baseline) {
    std::printf("    baseline %12.4g %-8s (min %.4g, max %.4g, n=%u): %s\n", figure.baseline.median,
                figure.unit.c_str(), figure.baseline.min, figure.baseline.max,
                figure.baseline.count, figure.baseline_name.c_str());
    std::printf("    ratio    %12.4f", figure.ratio());
    if (figure.target.present && !figure.target.on_value) {
      std::printf("   target %s %.2f: %s", figure.target.at_most ? "<=" : ">=", figure.target.bound,
                  figure.target_met() ? "met" : "MISSED");
    }
    std::printf("\n");
  } else {
    std::printf("    baseline none: %s\n", figure.baseline_missing.c_str());
  }
  if (figure.target.present && figure.target.on_value) {
    std::printf("    target   value %s %.4g %s: %s\n",
                figure.target.at_most ? "<=" : ">=", figure.target.bound, figure.unit.c_str(),
                figure.target_met() ? "met" : "MISSED");
  }
  std::fflush(stdout);
  figures_.push_back(std::move(figure));
}

void Report::note(const std::string& text) {
  std::printf("note: %s\n", text.c_str());
  std::fflush(stdout);
  notes_.push_back(text);
}

void Report::error(const std::string& text) {
  std::fprintf(stderr, "error: %s\n", text.c_str());
  errors_.push_back(text);
}

namespace {

void write_stats(JsonWriter& w, const Stats& s) {
  w.begin_object();
  w.field("median", s.median);
  w.field("min", s.min);
  w.field("max", s.max);
  w.field("samples", s.count);
  w.end_object();
}

}  // namespace

std::string Report::json() const {
  JsonWriter w;
  w.begin_object();
  w.field("tool", "hal-bench");
  w.field("schema", 1);
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  w.field("time_utc", when);
  w.field("hal_version", hal_version());
  w.key("config");
  w.begin_object();
  w.field("quick", quick_);
  w.field("repetitions", reps_);
  w.field("filter", filter_);
  w.field("elapsed_s", elapsed_s_);
  w.end_object();

  const hal_device_info& d = device_.info;
  w.key("device");
  w.begin_object();
  w.field("selector", device_.selector);
  hal_tools::write_device_fields(w, d);
  w.end_object();

  w.key("figures");
  w.begin_array();
  for (const Figure& f : figures_) {
    w.begin_object();
    w.field("family", f.family);
    w.field("name", f.name);
    w.field("what", f.what);
    w.field("unit", f.unit);
    w.field("higher_is_better", f.higher_is_better);
    w.key("params");
    w.begin_object();
    for (const auto& [k, v] : f.params) w.field(k, v);
    w.end_object();
    w.key("value");
    write_stats(w, f.value);
    w.key("baseline");
    if (f.has_baseline) {
      w.begin_object();
      w.field("name", f.baseline_name);
      w.key("stats");
      write_stats(w, f.baseline);
      w.end_object();
      w.field("ratio", f.ratio());
    } else {
      w.begin_object();
      w.field("missing", f.baseline_missing);
      w.end_object();
      w.key("ratio");
      w.null();
    }
    if (f.target.present) {
      w.key("target");
      w.begin_object();
      w.field("text", f.target.text);
      // "ratio" bounds value / baseline; "value" bounds the value itself, in the figure's unit.
      w.field(f.target.on_value ? "value" : "ratio",
              std::string(f.target.at_most ? "<= " : ">= ") + std::to_string(f.target.bound));
      w.key("met");
      if (f.target_judged()) {
        w.value(f.target_met());
      } else {
        w.null();
      }
      if (f.target_judged() && !f.target_met()) {
        // How far off: what the target bounds over the bound (> 1 means that much too slow or
        // too few).
        const double r = f.target_subject();
        w.field("missed_by", f.target.at_most ? r / f.target.bound : f.target.bound / r);
        w.field("why", f.note);
      }
      w.end_object();
    }
    if (!f.note.empty() && !(f.target_judged() && !f.target_met())) {
      w.field("note", f.note);
    }
    w.end_object();
  }
  w.end_array();

  w.key("notes");
  w.begin_array();
  for (const std::string& n : notes_) w.value(n);
  w.end_array();
  w.key("errors");
  w.begin_array();
  for (const std::string& e : errors_) w.value(e);
  w.end_array();
  w.end_object();
  return w.text() + "\n";
}

void Report::print_summary() const {
  std::printf("\nTargets:\n");
  bool any = false;
  for (const Figure& f : figures_) {
    if (!f.target.present) continue;
    any = true;
    if (f.target.on_value) {
      std::printf("  %-34s value %.4g %s, target %s %.4g: %s\n", f.name.c_str(), f.value.median,
                  f.unit.c_str(), f.target.at_most ? "<=" : ">=", f.target.bound,
                  f.target_met() ? "met" : "MISSED");
      if (!f.target_met() && !f.note.empty()) std::printf("      why: %s\n", f.note.c_str());
      continue;
    }
    if (!f.has_baseline) {
      std::printf("  %-34s no baseline: %s\n", f.name.c_str(), f.baseline_missing.c_str());
      continue;
    }
    std::printf("  %-34s ratio %.3f, target %s %.2f: %s\n", f.name.c_str(), f.ratio(),
                f.target.at_most ? "<=" : ">=", f.target.bound, f.target_met() ? "met" : "MISSED");
    if (!f.target_met() && !f.note.empty()) std::printf("      why: %s\n", f.note.c_str());
  }
  if (!any) std::printf("  (none measured)\n");
}

}  // namespace bench
