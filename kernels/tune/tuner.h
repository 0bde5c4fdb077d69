// The kernel pack's auto-tuner: a correctness-gated search over the variants of one kernel
// family on one device, for one problem shape.
//
// A Problem (for example MatmulProblem, matmul_problem.h) knows its family's candidates on a
// device and how to run one; search() decides which to try, in what order and how often, within
// a time budget:
//
//  1. The family's default candidate is checked and timed first: it is the baseline every
//     result is reported against, and its time sizes the search.
//  2. Every candidate is checked against the CPU reference before it is timed. A candidate that
//     computes a wrong result, or fails to load or launch, is never timed and can never win.
//  3. The other candidates are taken in a random order (seeded: the same seed tries the same
//     ones). Small spaces (every candidate checked and timed |reps| times, as long as the default
//     took, fits in the budget) are searched exhaustively; when variants compile slower than the
//     default and the budget runs out, the untried ones are a random sample. Larger spaces by
//     successive halving: candidates are checked and timed once each while half the budget
//     lasts; the faster half is timed again with twice the repetitions, and so on until one is
//     left, the repetitions reach |reps| or the budget is spent. A candidate whose first run is
//     more than four times the best so far is dropped at once.
//  4. The winner is the candidate with the lowest median among those timed the most often, so
//     one lucky single run cannot beat a well-measured median. The default, always fully
//     measured, takes part with the best-measured of the others.
//
// Thread-safety: a Problem and a search are used by one thread.
#pragma once

#include <hal/hal.h>

#include "tuning_db.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace hal_kernels::tune {

// One variant of a family: a module, how it is specialised, and the geometry it launches with.
struct Candidate {
  std::string kernel;  // the kernel (entry point) to launch; a pack kernel's name for the pack
  hal_ir ir = HAL_IR_SPIRV;
  const void* blob = nullptr;  // the module (static storage: the pack's, or a test's)
  size_t blob_size = 0;
  std::vector<Specialization> specializations;  // 32-bit specialization constants (SPIR-V)
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;  // dynamic shared memory every launch passes
  // Family-specific geometry: for matmul, the BM x BN tile of C one block computes.
  uint32_t tile[2] = {0, 0};
  std::string label;  // the parameters, e.g. "BM=64 BN=128 BK=16"
  bool is_default = false;
  // A cost model's guess, lower for candidates expected to be faster (for matmul: loads per
  // multiply-add, scaled by the padding of tiles that overhang the problem); search() tries
  // candidates in this order, equal guesses in random order, so that a budget too short for the
  // whole space is spent on the likeliest first. 0: no guess.
  double estimate = 0;
};

// A family at one problem shape on one device: what search() tunes.
class Problem {
 public:
  virtual ~Problem() = default;
  virtual const std::string& family() const = 0;
  // The shape bucket results are stored under (tuning_db.h, shape_bucket).
  virtual const std::string& bucket() const = 0;
  // Every candidate the device can run (limits already applied); exactly one is_default.
  virtual const std::vector<Candidate>& candidates() const = 0;
  // Runs |candidate| on the check shapes and compares with the CPU reference. Returns true when
  // it is correct; false with *why (one sentence) when it is wrong or cannot load or launch.
  virtual bool check(const Candidate& candidate, std::string* why) = 0;
  // Times |reps| runs at the problem shape (a checked candidate) and appends each run's
  // milliseconds to |ms|. False with *why when a run fails.
  virtual bool time(const Candidate& candidate, uint32_t reps, std::vector<double>* ms,
                    std::string* why) = 0;
};

struct SearchOptions {
  double budget_seconds = 120;  // for the whole search, the default's baseline included
  uint32_t reps = 5;            // repetitions of a fully measured candidate
  uint32_t seed = 1;            // the order successive halving tries candidates in
  // Where the progress line goes (a single line redrawn on a terminal, one line per candidate
  // otherwise); nullptr for none.
  std::FILE* progress = stderr;
};

enum class Verdict {
  kUntried,  // the budget ran out first
  kWrong,    // computed a wrong result or failed to load or launch: never timed
  kDropped,  // correct, but its first run was far slower than the best: timed once
  kTimed,    // correct and timed
};

struct Outcome {
  const Candidate* candidate = nullptr;
  Verdict verdict = Verdict::kUntried;
  std::vector<double> ms;  // every timed run
  double median_ms = 0;    // of |ms|
  std::string why;         // kWrong: what was wrong
};

struct SearchResult {
  std::vector<Outcome> outcomes;      // one per candidate, in the problem's order
  const Outcome* best = nullptr;      // nullptr when no candidate was correct
  const Outcome* baseline = nullptr;  // the default's outcome
  std::string strategy;               // "exhaustive" or "successive halving"
  double seconds = 0;                 // wall time of the search
  uint32_t checked = 0;               // candidates checked
  uint32_t wrong = 0;                 // of which wrong
};

// Searches |problem| as described above. Never throws for a failing candidate; a default that
// is itself wrong is reported (result.baseline->verdict == kWrong) and the search goes on.
SearchResult search(Problem& problem, const SearchOptions& options);

// The median of |values| (0 for none).
double median(std::vector<double> values);

// A table of the |top| fastest correct candidates, the default among them or after them, with
// their time and speedup over the default; then counts of wrong and untried ones.
std::string format_outcomes(const SearchResult& result, size_t top);

}  // namespace hal_kernels::tune
