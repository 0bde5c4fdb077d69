#include "tuner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>

namespace hal_kernels::tune {
namespace {

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// A candidate whose first run is slower than this many times the best so far is not worth
// more repetitions: no amount of noise makes it the winner.
constexpr double kDropFactor = 4.0;

class Progress {
 public:
  Progress(std::FILE* out, size_t total)
      : out_(out), total_(total), tty_(out != nullptr && isatty(fileno(out)) != 0) {}
  ~Progress() {
    if (out_ != nullptr && tty_ && drawn_) std::fputc('\n', out_);
  }
  void show(size_t done, const std::string& what) {
    if (out_ == nullptr) return;
    constexpr size_t kWidth = 24;
    const size_t filled = total_ == 0 ? kWidth : std::min(kWidth, done * kWidth / total_);
    std::string bar(filled, '#');
    bar.resize(kWidth, '.');
    if (tty_) {
      std::fprintf(out_, "\r\033[K[%s] %zu/%zu %s", bar.c_str(), done, total_, what.c_str());
    } else {
      std::fprintf(out_, "[%s] %zu/%zu %s\n", bar.c_str(), done, total_, what.c_str());
    }
    std::fflush(out_);
    drawn_ = true;
  }

 private:
  std::FILE* out_;
  size_t total_;
  bool tty_;
  bool drawn_ = false;
};

std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f ms", ms);
  return text;
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

SearchResult search(Problem& problem, const SearchOptions& options) {
  const double start = now_seconds();
  const double deadline = start + options.budget_seconds;
  const uint32_t reps = std::max<uint32_t>(1, options.reps);
  const std::vector<Candidate>& candidates = problem.candidates();

  SearchResult result;
  result.outcomes.resize(candidates.size());
  size_t default_index = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    result.outcomes[i].candidate = &candidates[i];
    if (candidates[i].is_default) default_index = i;
  }
  if (candidates.empty()) return result;

  // Counted in "steps": one check, or one set of timed runs, per candidate.
  Progress progress(options.progress, candidates.size());
  size_t finished = 0;
  double best_ms = 0;
  auto best_text = [&] { return best_ms > 0 ? "  best " + ms_text(best_ms) : std::string(); };

  // Checks |i|; times it |count| more times when correct. Returns false when it was wrong.
  auto check_and_time = [&](size_t i, uint32_t count) {
    Outcome& outcome = result.outcomes[i];
    const Candidate& c = *outcome.candidate;
    progress.show(finished, problem.family() + " " + c.label + ": checking" + best_text());
    ++result.checked;
    std::string why;
    if (!problem.check(c, &why)) {
      outcome.verdict = Verdict::kWrong;
      outcome.why = why;
      ++result.wrong;
      return false;
    }
    progress.show(finished, problem.family() + " " + c.label + ": timing" + best_text());
    if (!problem.time(c, count, &outcome.ms, &why)) {
      outcome.verdict = Verdict::kWrong;
      outcome.why = why;
      ++result.wrong;
      return false;
    }
    outcome.verdict = Verdict::kTimed;
    outcome.median_ms = median(outcome.ms);
    return true;
  };
  auto note_best = [&](const Outcome& outcome) {
    if (outcome.verdict == Verdict::kTimed && (best_ms == 0 || outcome.median_ms < best_ms)) {
      best_ms = outcome.median_ms;
    }
  };

  // 1. The baseline, fully measured.
  const double baseline_start = now_seconds();
  check_and_time(default_index, reps);
  note_best(result.outcomes[default_index]);
  ++finished;
  const double baseline_seconds = now_seconds() - baseline_start;
  result.baseline = &result.outcomes[default_index];

  std::vector<size_t> others;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (i != default_index) others.push_back(i);
  }
  // Both strategies take the candidates in order of the cost model's estimate, equal estimates
  // in a seeded random order: if the budget runs out (on a slow or busy machine, or when variants
  // compile far slower than the default), what was tried is the likeliest part of the space,
  // and within one estimate a random sample rather than the end of the family's list.
  std::mt19937 rng(options.seed);
  std::shuffle(others.begin(), others.end(), rng);
  std::stable_sort(others.begin(), others.end(), [&](size_t a, size_t b) {
    return candidates[a].estimate < candidates[b].estimate;
  });
  // 2. Exhaustive when every other candidate, measured as the baseline was, fits in the rest.
  const double remaining = deadline - now_seconds();
  if (static_cast<double>(others.size()) * baseline_seconds <= remaining) {
    result.strategy = "exhaustive";
    for (size_t i : others) {
      if (now_seconds() >= deadline) break;  // the estimate was too low: the rest stay untried
      if (check_and_time(i, reps)) note_best(result.outcomes[i]);
      ++finished;
    }
  } else {
    // 3. Successive halving.
    result.strategy = "successive halving";
    const double first_round_end = now_seconds() + remaining / 2;
    std::vector<size_t> survivors;
    for (size_t i : others) {
      if (now_seconds() >= first_round_end) break;
      Outcome& outcome = result.outcomes[i];
      if (check_and_time(i, 1)) {
        if (best_ms > 0 && outcome.median_ms > kDropFactor * best_ms) {
          outcome.verdict = Verdict::kDropped;
        } else {
          survivors.push_back(i);
          note_best(outcome);
        }
      }
      ++finished;
    }
    uint32_t round_reps = 2;
    while (survivors.size() > 1 && now_seconds() < deadline) {
      std::sort(survivors.begin(), survivors.end(), [&](size_t a, size_t b) {
        return result.outcomes[a].median_ms < result.outcomes[b].median_ms;
      });
      survivors.resize((survivors.size() + 1) / 2);
      const uint32_t more = std::min(round_reps, reps);
      for (size_t i : survivors) {
        if (now_seconds() >= deadline) break;
        Outcome& outcome = result.outcomes[i];
        progress.show(finished, problem.family() + " " + outcome.candidate->label + ": " +
                                    std::to_string(outcome.ms.size() + more) + " runs" +
                                    best_text());
        std::string why;
        if (!problem.time(*outcome.candidate, more, &outcome.ms, &why)) {
          outcome.verdict = Verdict::kWrong;
          outcome.why = why;
          ++result.wrong;
          continue;
        }
        outcome.median_ms = median(outcome.ms);
        note_best(outcome);
      }
      survivors.erase(
          std::remove_if(survivors.begin(), survivors.end(),
                         [&](size_t i) { return result.outcomes[i].verdict != Verdict::kTimed; }),
          survivors.end());
      if (round_reps >= reps) break;
      round_reps *= 2;
    }
  }
  size_t tried = 0;
  for (const Outcome& o : result.outcomes) tried += o.verdict != Verdict::kUntried ? 1 : 0;
  progress.show(candidates.size(), problem.family() + ": done, " + std::to_string(tried) + " of " +
                                       std::to_string(candidates.size()) + " tried" + best_text());

  // 4. The winner: the lowest median among the candidates timed the most often. The default
  // always has the full repetitions (it is the baseline), so it counts as timed as often as the
  // best-measured other candidate: when the budget ran out before the others reached its count,
  // its count alone must not make it win.
  size_t most_runs = 0;
  for (const Outcome& o : result.outcomes) {
    if (o.verdict == Verdict::kTimed && !o.candidate->is_default) {
      most_runs = std::max(most_runs, o.ms.size());
    }
  }
  for (const Outcome& o : result.outcomes) {
    if (o.verdict != Verdict::kTimed || o.ms.size() < most_runs) continue;
    if (result.best == nullptr || o.median_ms < result.best->median_ms) result.best = &o;
  }
  result.seconds = now_seconds() - start;
  return result;
}

std::string format_outcomes(const SearchResult& result, size_t top) {
  std::vector<const Outcome*> timed;
  size_t untried = 0, dropped = 0;
  std::vector<const Outcome*> wrong;
  for (const Outcome& o : result.outcomes) {
    if (o.verdict == Verdict::kTimed) timed.push_back(&o);
    if (o.verdict == Verdict::kUntried) ++untried;
    if (o.verdict == Verdict::kDropped) ++dropped;
    if (o.verdict == Verdict::kWrong) wrong.push_back(&o);
  }
  std::sort(timed.begin(), timed.end(),
            [](const Outcome* a, const Outcome* b) { return a->median_ms < b->median_ms; });
  const double base = result.baseline != nullptr && result.baseline->verdict == Verdict::kTimed
                          ? result.baseline->median_ms
                          : 0;
  // The rows shown: the top ones and the default wherever it ranks. The label column is as wide
  // as the widest of them (tensor-core labels are longer than the others).
  struct Row {
    size_t rank;
    const Outcome* outcome;
    std::string label;
  };
  std::vector<Row> rows;
  int width = static_cast<int>(std::strlen("candidate"));
  for (size_t i = 0; i < timed.size(); ++i) {
    const bool is_default = timed[i]->candidate->is_default;
    if (i >= top && !is_default) continue;
    rows.push_back(
        {i + 1, timed[i], timed[i]->candidate->label + (is_default ? " (default)" : "")});
    width = std::max(width, static_cast<int>(rows.back().label.size()));
  }
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "  %-4s %-*s %12s %6s %8s\n", "rank", width, "candidate",
                "median", "runs", "speedup");
  out += line;
  bool default_shown = false;
  for (const Row& row : rows) {
    const Outcome* o = row.outcome;
    default_shown = default_shown || o->candidate->is_default;
    std::snprintf(line, sizeof(line), "  %-4zu %-*s %12s %6zu %7.2fx\n", row.rank, width,
                  row.label.c_str(), ms_text(o->median_ms).c_str(), o->ms.size(),
                  base > 0 && o->median_ms > 0 ? base / o->median_ms : 0.0);
    out += line;
  }
  if (!default_shown && result.baseline != nullptr) {
    out += "  the default (" + result.baseline->candidate->label +
           ") was wrong: " + result.baseline->why + "\n";
  }
  std::snprintf(line, sizeof(line),
                "  %zu timed, %zu wrong (never timed), %zu dropped after one slow run, %zu not "
                "tried within the budget\n",
                timed.size(), wrong.size(), dropped, untried);
  out += line;
  for (const Outcome* o : wrong) {
    out += "  wrong: " + o->candidate->label + ": " + o->why + "\n";
  }
  return out;
}

}  // namespace hal_kernels::tune
