// The auto-tuner: the search's rules on a problem double (fixed times and planted wrong
// candidates, no device), then the real matmul and attention families on the Vulkan device with
// planted wrong candidates, and plan_matmul and plan_attention reading a database.
#include "attention_problem.h"
#include "matmul_problem.h"
#include "plan.h"
#include "tuner.h"
#include "tuning_db.h"

#include <hal_kernels/reference.h>

#include <gtest/gtest.h>

#include <hal/hal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace tune = hal_kernels::tune;

// A test double of a Problem: candidate i takes times[i] ms per run (it sleeps a fraction of
// it, so budgets are real), and the candidates in |wrong| fail their check.
class ProblemDouble : public tune::Problem {
 public:
  ProblemDouble(std::vector<double> times, std::vector<size_t> wrong, double sleep_fraction)
      : times_(std::move(times)), sleep_fraction_(sleep_fraction) {
    for (size_t i = 0; i < times_.size(); ++i) {
      tune::Candidate c;
      c.kernel = "double";
      // Not "c" + to_string(i), nor = "c": GCC 12 at -O3 warns falsely (-Wrestrict) on both.
      c.label = std::string(1, 'c') + std::to_string(i);
      c.is_default = i == 0;
      candidates_.push_back(c);
    }
    for (size_t i : wrong) wrong_.push_back(&candidates_[i]);
  }
  const std::string& family() const override { return family_; }
  const std::string& bucket() const override { return bucket_; }
  const std::vector<tune::Candidate>& candidates() const override { return candidates_; }
  bool check(const tune::Candidate& c, std::string* why) override {
    ++checks;
    for (const tune::Candidate* w : wrong_) {
      if (w == &c) {
        *why = "planted wrong result";
        return false;
      }
    }
    return true;
  }
  bool time(const tune::Candidate& c, uint32_t reps, std::vector<double>* ms,
            std::string*) override {
    const size_t i = static_cast<size_t>(&c - candidates_.data());
    for (const tune::Candidate* w : wrong_) {
      if (w == &c) ++timed_wrong;
    }
    for (uint32_t r = 0; r < reps; ++r) {
      std::this_thread::sleep_for(
          std::chrono::duration<double, std::milli>(times_[i] * sleep_fraction_));
      ms->push_back(times_[i]);
    }
    return true;
  }
  int checks = 0;
  int timed_wrong = 0;

 private:
  std::string family_ = "double_family", bucket_ = "8x8x8";
  std::vector<double> times_;
  double sleep_fraction_;
  std::vector<tune::Candidate> candidates_;
  std::vector<const tune::Candidate*> wrong_;

 public:
  std::vector<tune::Candidate>& mutable_candidates() { return candidates_; }
};

tune::SearchOptions quiet(double budget, uint32_t reps = 3) {
  tune::SearchOptions o;
  o.budget_seconds = budget;
  o.reps = reps;
  o.progress = nullptr;
  return o;
}

TEST(TuneSearch, ExhaustiveFindsTheFastestCorrectCandidateAndNeverTimesAWrongOne) {
  // Candidate 3 is the fastest of all, and wrong.
  ProblemDouble problem({10, 8, 5, 1, 6, 9}, {3}, 0.0);
  const tune::SearchResult r = tune::search(problem, quiet(60));
  EXPECT_EQ(r.strategy, "exhaustive");
  ASSERT_NE(r.best, nullptr);
  EXPECT_EQ(r.best->candidate->label, "c2");
  EXPECT_EQ(r.best->ms.size(), 3u);
  ASSERT_NE(r.baseline, nullptr);
  EXPECT_EQ(r.baseline->candidate->label, "c0");
  EXPECT_DOUBLE_EQ(r.baseline->median_ms, 10);
  EXPECT_EQ(r.outcomes[3].verdict, tune::Verdict::kWrong);
  EXPECT_EQ(r.outcomes[3].why, "planted wrong result");
  EXPECT_EQ(problem.timed_wrong, 0);
  EXPECT_EQ(r.checked, 6u);
  EXPECT_EQ(r.wrong, 1u);
  const std::string table = tune::format_outcomes(r, 3);
  EXPECT_NE(table.find("c2"), std::string::npos) << table;
  EXPECT_NE(table.find("(default)"), std::string::npos) << table;
  EXPECT_NE(table.find("wrong: c3: planted wrong result"), std::string::npos) << table;
}

TEST(TuneSearch, LargeSpacesAreHalvedWithinTheBudget) {
  // 200 candidates of 20 ms a run (slept in full) cannot all be measured in 1.5 s.
  std::vector<double> times(200, 20.0);
  times[0] = 30;   // the default
  times[77] = 12;  // the fastest correct one
  times[150] = 2;  // faster still, and wrong
  ProblemDouble problem(times, {150}, 1.0);
  const auto start = std::chrono::steady_clock::now();
  const tune::SearchResult r = tune::search(problem, quiet(1.5, 4));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.strategy, "successive halving");
  EXPECT_LT(seconds, 1.5 + 0.5) << "the budget was overrun";
  size_t untried = 0;
  for (const tune::Outcome& o : r.outcomes) untried += o.verdict == tune::Verdict::kUntried;
  EXPECT_GT(untried, 0u);
  ASSERT_NE(r.best, nullptr);
  EXPECT_NE(r.best->candidate->label, "c150");
  EXPECT_EQ(problem.timed_wrong, 0);
  // Whatever was tried, the winner is the fastest of the candidates measured the most.
  for (const tune::Outcome& o : r.outcomes) {
    if (o.verdict == tune::Verdict::kTimed && o.ms.size() == r.best->ms.size()) {
      EXPECT_LE(r.best->median_ms, o.median_ms);
    }
  }
}

// When the budget covers a few candidates only, the cost model's likeliest are the ones tried:
// here the fastest (candidate 150) has the lowest estimate and is found whatever the seed, where
// a random order would reach it in a fraction of the runs.
TEST(TuneSearch, ABudgetTooShortIsSpentOnTheLowestEstimatesFirst) {
  std::vector<double> times(200, 20.0);
  times[0] = 30;
  times[150] = 5;
  for (uint32_t seed : {1u, 2u, 3u}) {
    ProblemDouble problem(times, {}, 1.0);
    for (size_t i = 0; i < problem.mutable_candidates().size(); ++i) {
      problem.mutable_candidates()[i].estimate = 1.0 + static_cast<double>(i % 7);
    }
    problem.mutable_candidates()[150].estimate = 0.5;
    tune::SearchOptions options = quiet(0.6, 2);
    options.seed = seed;
    const tune::SearchResult r = tune::search(problem, options);
    size_t untried = 0;
    for (const tune::Outcome& o : r.outcomes) untried += o.verdict == tune::Verdict::kUntried;
    EXPECT_GT(untried, 150u) << "the budget should allow only a few candidates";
    ASSERT_NE(r.best, nullptr);
    EXPECT_EQ(r.best->candidate->label, "c150") << "seed " << seed;
    // Every candidate tried besides the default has the lowest estimates there are.
    for (size_t i = 1; i < r.outcomes.size(); ++i) {
      if (r.outcomes[i].verdict != tune::Verdict::kUntried && i != 150) {
        EXPECT_EQ(problem.candidates()[i].estimate, 1.0) << "c" << i << " seed " << seed;
      }
    }
  }
}

// The default is timed |reps| times before anything else; when the budget ends the halving
// before the others reach that count, the default must not win by its count alone.
TEST(TuneSearch, TheDefaultsFullMeasurementDoesNotMakeItWin) {
  std::vector<double> times(10, 50.0);
  times[0] = 100;  // the default, the slowest
  times[4] = 20;
  ProblemDouble problem(times, {}, 1.0);
  const tune::SearchResult r = tune::search(problem, quiet(2, 8));
  EXPECT_EQ(r.strategy, "successive halving");
  ASSERT_NE(r.best, nullptr);
  EXPECT_FALSE(r.best->candidate->is_default)
      << "runs of the winner " << r.best->ms.size() << ", of the default " << r.baseline->ms.size();
  EXPECT_LT(r.best->median_ms, r.baseline->median_ms);
}

TEST(TuneSearch, AWrongDefaultIsReportedAndTheSearchGoesOn) {
  ProblemDouble problem({1, 5, 4}, {0}, 0.0);
  const tune::SearchResult r = tune::search(problem, quiet(60));
  ASSERT_NE(r.baseline, nullptr);
  EXPECT_EQ(r.baseline->verdict, tune::Verdict::kWrong);
  ASSERT_NE(r.best, nullptr);
  EXPECT_EQ(r.best->candidate->label, "c2");
  EXPECT_NE(tune::format_outcomes(r, 5).find("the default (c0) was wrong"), std::string::npos);
}

// ---- The matmul family on the Vulkan device --------------------------------------------------

hal_device vulkan_device() {
  hal_device device = nullptr;
  if (hal_device_find("vulkan:0", &device) != HAL_SUCCESS) return nullptr;
  return device;
}

TEST(TuneMatmul, APlantedFastButWrongCandidateNeverWins) {
  hal_device device = vulkan_device();
  if (device == nullptr) GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
  std::string why;
  auto problem = tune::MatmulProblem::create(device, "matmul_f32", {128, 128, 64}, &why);
  ASSERT_NE(problem, nullptr) << why;
  EXPECT_EQ(problem->bucket(), "128x128x64");
  // Only the default and a plant: the default's own kernel and tiles, launched as if its tiles
  // were 128 x 128, so a quarter of the blocks run (fast) and three quarters of C are never
  // written (wrong).
  std::vector<tune::Candidate>& candidates = problem->mutable_candidates();
  tune::Candidate base;
  for (const tune::Candidate& c : candidates) {
    if (c.is_default) base = c;
  }
  ASSERT_TRUE(base.is_default);
  tune::Candidate planted = base;
  planted.is_default = false;
  planted.tile[0] = planted.tile[1] = 128;
  planted.label = "planted";
  candidates = {base, planted};

  const tune::SearchResult r = tune::search(*problem, quiet(120));
  EXPECT_EQ(r.strategy, "exhaustive");
  ASSERT_NE(r.best, nullptr);
  EXPECT_TRUE(r.best->candidate->is_default) << r.best->candidate->label;
  EXPECT_EQ(r.outcomes[1].verdict, tune::Verdict::kWrong);
  EXPECT_NE(r.outcomes[1].why.find("wrong result"), std::string::npos) << r.outcomes[1].why;
  EXPECT_TRUE(r.outcomes[1].ms.empty());

  // The plant really is the faster one: without the check it would have won.
  std::vector<double> planted_ms, default_ms;
  ASSERT_TRUE(problem->time(candidates[1], 5, &planted_ms, &why)) << why;
  ASSERT_TRUE(problem->time(candidates[0], 5, &default_ms, &why)) << why;
  EXPECT_LT(tune::median(planted_ms), tune::median(default_ms));
}

TEST(TuneMatmul, EveryCandidateOfTheFamilyIsCorrectOnTheDevice) {
  hal_device device = vulkan_device();
  if (device == nullptr) GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
  std::string why;
  auto problem = tune::MatmulProblem::create(device, "matmul_f32", {96, 80, 48}, &why);
  ASSERT_NE(problem, nullptr) << why;
  // Every pack family contributes, each with several variants (the subgroup one where the
  // device has subgroup ballot).
  size_t tiled = 0, reg = 0, sg = 0;
  for (const tune::Candidate& c : problem->candidates()) {
    tiled += c.label.rfind("tiled ", 0) == 0 ? 1 : 0;
    reg += c.label.rfind("reg ", 0) == 0 ? 1 : 0;
    sg += c.label.rfind("sg ", 0) == 0 ? 1 : 0;
  }
  EXPECT_GT(tiled, 8u);
  EXPECT_GT(reg, 8u);
  hal_device_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(hal_device_get_info(device, &info), HAL_SUCCESS);
  if ((info.features & HAL_FEATURE_SUBGROUP_BALLOT) != 0 && info.subgroup_size >= 8 &&
      info.subgroup_size <= 64) {
    EXPECT_GT(sg, 4u);
  }
  // Every seventh candidate (the search checks each one before timing it; lavapipe compiles
  // the large unrolled tiles slowly).
  const std::vector<tune::Candidate>& all = problem->candidates();
  for (size_t i = 0; i < all.size(); i += 7) {
    EXPECT_TRUE(problem->check(all[i], &why)) << all[i].label << ": " << why;
  }
}

// The subgroup family joins where the device has subgroup ballot, laid out for the device's own
// subgroup size only (another size would run its slower path that loads everything itself).
TEST(TuneMatmul, SubgroupCandidatesFollowTheDevice) {
  auto sg_sizes = [](uint64_t features, uint32_t subgroup_size, hal_ir ir) {
    hal_device_info info{};
    info.struct_size = sizeof info;
    info.ir_mask = ir;
    info.max_threads_per_block = 1024;
    info.max_shared_memory_per_block = 48 * 1024;
    info.subgroup_size = subgroup_size;
    info.features = features;
    std::string why;
    std::vector<uint32_t> sizes;
    for (const tune::Candidate& c : tune::matmul_candidates(info, "matmul_f32", &why)) {
      if (c.label.rfind("sg ", 0) != 0) continue;
      sizes.push_back(static_cast<uint32_t>(std::stoul(c.label.substr(c.label.find("SG=") + 3))));
    }
    return sizes;
  };
  EXPECT_TRUE(sg_sizes(0, 8, HAL_IR_SPIRV).empty());
  for (uint32_t size : {8u, 32u, 64u}) {
    const std::vector<uint32_t> sizes = sg_sizes(HAL_FEATURE_SUBGROUP_BALLOT, size, HAL_IR_SPIRV);
    EXPECT_GE(sizes.size(), 4u) << "subgroup size " << size;
    for (uint32_t s : sizes) EXPECT_EQ(s, size);
  }
  // A subgroup size the family has no layout for: no subgroup candidates, the others remain.
  EXPECT_TRUE(sg_sizes(HAL_FEATURE_SUBGROUP_BALLOT, 4, HAL_IR_SPIRV).empty());
  // PTX: the kernels themselves (SG 8, a segment of a warp), whatever the warp size.
  EXPECT_EQ(sg_sizes(HAL_FEATURE_SUBGROUP_BALLOT, 32, HAL_IR_PTX), (std::vector<uint32_t>{8, 8}));
}

// The cost model scales a tile's loads per multiply-add by how far it overhangs the problem, so
// the candidate tried first on a problem smaller than the large tiles is a smaller tile than on a
// problem of many tiles (and the search does not start with the slowest compiles).
TEST(TuneMatmul, ASmallProblemTriesSmallerTilesFirst) {
  hal_device device = vulkan_device();
  if (device == nullptr) GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
  auto likeliest = [&](tune::MatmulShape shape, std::string* label) {
    std::string why;
    auto problem = tune::MatmulProblem::create(device, "matmul_f32", shape, &why);
    EXPECT_NE(problem, nullptr) << why;
    if (problem == nullptr) return uint64_t{0};
    const tune::Candidate* best = nullptr;
    for (const tune::Candidate& c : problem->candidates()) {
      if (c.estimate > 0 && (best == nullptr || c.estimate < best->estimate)) best = &c;
    }
    EXPECT_NE(best, nullptr);
    if (best == nullptr) return uint64_t{0};
    *label = best->label;
    return uint64_t{best->tile[0]} * best->tile[1];
  };
  std::string small_label, large_label;
  const uint64_t small = likeliest({16, 16, 16}, &small_label);
  const uint64_t large = likeliest({1024, 1024, 1024}, &large_label);
  EXPECT_LT(small, large) << "tried first: " << small_label << " at 16^3, " << large_label
                          << " at 1024^3";
}

TEST(TuneMatmul, BadFamiliesAndShapesAreRefusedWithTheReason) {
  hal_device device = vulkan_device();
  if (device == nullptr) GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
  std::string why;
  EXPECT_EQ(tune::MatmulProblem::create(device, "matmul_tiled_f32", {8, 8, 8}, &why), nullptr);
  EXPECT_NE(why.find("is not a matmul family the tuner knows"), std::string::npos) << why;
  EXPECT_NE(why.find("matmul_f32"), std::string::npos) << why;
  EXPECT_EQ(tune::MatmulProblem::create(device, "matmul_f32", {8, 0, 8}, &why), nullptr);
  EXPECT_NE(why.find("at least 1"), std::string::npos) << why;
}

// ---- The attention families --------------------------------------------------------------------

TEST(TuneAttention, APlantedFastButWrongCandidateNeverWins) {
  hal_device device = vulkan_device();
  if (device == nullptr) GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
  std::string why;
  auto problem =
      tune::AttentionProblem::create(device, "attention_f32", {2, 96, 96, 64, false}, &why);
  ASSERT_NE(problem, nullptr) << why;
  EXPECT_EQ(problem->bucket(), "2x128x128x64");
  // The default launched as if a block took 48 query rows: a third of the blocks run (fast) and
  // the other rows are never written (wrong).
  std::vector<tune::Candidate>& candidates = problem->mutable_candidates();
  tune::Candidate base;
  for (const tune::Candidate& c : candidates) {
    if (c.is_default) base = c;
  }
  ASSERT_TRUE(base.is_default);
  EXPECT_EQ(base.label, "fused");
  tune::Candidate planted = base;
  planted.is_default = false;
  planted.tile[0] = 48;
  planted.label = "planted";
  candidates = {base, planted};

  const tune::SearchResult r = tune::search(*problem, quiet(120));
  ASSERT_NE(r.best, nullptr);
  EXPECT_TRUE(r.best->candidate->is_default) << r.best->candidate->label;
  EXPECT_EQ(r.outcomes[1].verdict, tune::Verdict::kWrong);
  EXPECT_NE(r.outcomes[1].why.find("wrong result"), std::string::npos) << r.outcomes[1].why;
  EXPECT_TRUE(r.outcomes[1].ms.empty());
  std::vector<double> planted_ms, default_ms;
  ASSERT_TRUE(problem->time(candidates[1], 5, &planted_ms, &why)) << why;
  ASSERT_TRUE(problem->time(candidates[0], 5, &default_ms, &why)) << why;
  EXPECT_LT(tune::median(planted_ms), tune::median(default_ms));
}

TEST(TuneAttention, ASampleOfTheCandidatesIsCorrectOnTheDevice) {
  hal_device device = vulkan_device();
  if (device == nullptr) GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
  for (uint32_t d : {64u, 128u}) {
    std::string why;
    auto problem =
        tune::AttentionProblem::create(device, "attention_f32", {3, 70, 50, d, true}, &why);
    ASSERT_NE(problem, nullptr) << why;
    const std::vector<tune::Candidate>& all = problem->candidates();
    size_t reg = 0;
    for (const tune::Candidate& c : all) {
      reg += c.label.rfind("reg ", 0) == 0 ? 1 : 0;
      // Every candidate is for this head dim: spec constant 0 is D.
      ASSERT_FALSE(c.specializations.empty()) << c.label;
      EXPECT_EQ(c.specializations[0].id, 0u);
      EXPECT_EQ(c.specializations[0].value, d) << c.label;
    }
    EXPECT_GT(reg, 4u);
    // Two of them (lavapipe compiles a register variant for seconds; the tuner checks each one it
    // tries anyway): the first and, at d 64, the one in the middle of the space.
    std::vector<size_t> sample = {0};
    if (d == 64) sample.push_back(all.size() / 2);
    for (size_t i : sample) {
      EXPECT_TRUE(problem->check(all[i], &why)) << "d " << d << ", " << all[i].label << ": " << why;
    }
  }
}

TEST(TuneAttention, BadFamiliesAndShapesAreRefusedWithTheReason) {
  hal_device device = vulkan_device();
  if (device == nullptr) GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
  std::string why;
  EXPECT_EQ(tune::AttentionProblem::create(device, "attention_fused_f32", {1, 8, 8, 64}, &why),
            nullptr);
  EXPECT_NE(why.find("is not an attention family the tuner knows"), std::string::npos) << why;
  EXPECT_NE(why.find("attention_f32"), std::string::npos) << why;
  EXPECT_EQ(tune::AttentionProblem::create(device, "attention_f32", {1, 8, 8, 96}, &why), nullptr);
  EXPECT_NE(why.find("head dim 96"), std::string::npos) << why;
  EXPECT_NE(why.find("64, 128"), std::string::npos) << why;
  EXPECT_EQ(tune::AttentionProblem::create(device, "attention_f32", {1, 0, 8, 64}, &why), nullptr);
  EXPECT_NE(why.find("at least 1"), std::string::npos) << why;
}

// ---- plan_matmul, plan_attention and the database
// ------------------------------------------------------------

class TunePlan : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = vulkan_device();
    if (device_ == nullptr) GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
    dir_ = std::filesystem::temp_directory_path() /
           ("hal-tune-plan-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    const char* old = std::getenv("HAL_CACHE_DIR");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    setenv("HAL_CACHE_DIR", dir_.c_str(), 1);
    std::string why;
    ASSERT_TRUE(tune::device_key(device_, &key_, &why)) << why;
    path_ = tune::path_for(tune::default_directory(), key_);
  }
  void TearDown() override {
    if (had_old_) {
      setenv("HAL_CACHE_DIR", old_.c_str(), 1);
    } else {
      unsetenv("HAL_CACHE_DIR");
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  tune::LaunchPlan plan(tune::MatmulShape shape) {
    tune::LaunchPlan p;
    std::string why;
    EXPECT_TRUE(tune::plan_matmul(device_, "matmul_f32", shape, &p, &why)) << why;
    return p;
  }
  void write_entry(const std::string& bucket, uint32_t bm, uint32_t bn, uint32_t bk) {
    tune::Database db = tune::Database::load(path_, key_, nullptr);
    tune::Entry e;
    e.family = "matmul_f32";
    e.bucket = bucket;
    e.kernel = "matmul_tiled_f32_64x64";
    e.specializations = {{0, bm}, {1, bn}, {2, bk}};
    e.block[0] = 256;
    e.block[1] = e.block[2] = 1;
    e.time_ms = 1;
    e.default_time_ms = 3;
    e.label = "tiled BM=" + std::to_string(bm) + " BN=" + std::to_string(bn) +
              " BK=" + std::to_string(bk);
    db.put(e);
    std::string error;
    ASSERT_TRUE(db.save(path_, &error)) << error;
  }
  hal_device device_ = nullptr;
  std::filesystem::path dir_;
  bool had_old_ = false;
  std::string old_, path_;
  tune::DeviceKey key_;
};

// The matmul sample with --ir ptx on a Vulkan device runs the tuned choice's kernel by name in
// PTX (tools/dev.sh run does this after a user has tuned the device). A subgroup kernel is
// warp-level PTX there: on 32-lane subgroups, or through workgroup memory on a device without
// them, it runs, and the sample checks its results. (Where the device refuses a tuned kernel,
// the sample runs the default instead and says so.)
TEST_F(TunePlan, TheMatmulSampleRunsTheTunedSubgroupKernelInPtx) {
  const std::string sample = HAL_MATMUL_SAMPLE;
  if (sample.empty()) GTEST_SKIP() << "the samples are not built";
  hal_device_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(hal_device_get_info(device_, &info), HAL_SUCCESS) << hal_last_error();
  if ((info.ir_mask & HAL_IR_PTX) == 0) GTEST_SKIP() << "the Vulkan device does not take PTX";
  std::string why;
  const tune::Candidate* sg = nullptr;
  const std::vector<tune::Candidate> all = tune::matmul_candidates(info, "matmul_f32", &why);
  for (const tune::Candidate& c : all) {
    if (c.label.rfind("sg ", 0) == 0) {
      sg = &c;
      break;
    }
  }
  if (sg == nullptr) GTEST_SKIP() << "the device has no subgroup matmul candidates";
  tune::Database db = tune::Database::load(path_, key_, nullptr);
  tune::Entry e;
  e.family = "matmul_f32";
  e.bucket = "64x64x64";
  e.kernel = sg->kernel;
  e.specializations = sg->specializations;
  for (int i = 0; i < 3; ++i) e.block[i] = sg->block[i];
  e.time_ms = 1;
  e.default_time_ms = 3;
  e.label = sg->label;
  db.put(e);
  ASSERT_TRUE(db.save(path_, &why)) << why;
  ASSERT_TRUE(plan({64, 64, 64}).tuned);

  const std::string out_file = (dir_ / "sample.out").string();
  const std::string command = "HAL_CACHE_DIR='" + dir_.string() + "' '" + sample +
                              "' --device vulkan:0 --ir ptx --m 64 --n 64 --k 64 > '" + out_file +
                              "' 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(out_file);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  EXPECT_NE(output.find("plan: " + sg->kernel), std::string::npos) << output;
  EXPECT_EQ(output.find("running the default"), std::string::npos) << output;
  EXPECT_NE(output.find("PASS"), std::string::npos) << output;
}

TEST_F(TunePlan, WithoutADatabaseThePlanIsTheDefault) {
  const tune::LaunchPlan p = plan({100, 200, 300});
  EXPECT_FALSE(p.tuned);
  EXPECT_EQ(p.label, "tiled BM=64 BN=64 BK=16");
  EXPECT_EQ(p.grid[0], 4u);  // ceil(200 / 64)
  EXPECT_EQ(p.grid[1], 2u);  // ceil(100 / 64)
  EXPECT_NE(p.source.find("default"), std::string::npos) << p.source;
}

TEST_F(TunePlan, ATunedEntryIsUsedForItsBucketAndTheNearestShapes) {
  write_entry("128x128x128", 32, 128, 8);
  tune::LaunchPlan p = plan({100, 128, 65});  // bucket 128x128x128
  EXPECT_TRUE(p.tuned) << p.source;
  EXPECT_EQ(p.label, "tiled BM=32 BN=128 BK=8");
  EXPECT_EQ(p.grid[0], 1u);
  EXPECT_EQ(p.grid[1], 4u);
  EXPECT_NE(p.source.find("tuned by hal-tune for 128x128x128"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("3.00x"), std::string::npos) << p.source;
  p = plan({1024, 1024, 1024});
  EXPECT_TRUE(p.tuned);
  EXPECT_NE(p.source.find("nearest tuned shape"), std::string::npos) << p.source;

  // The plan runs, and computes a correct result (its module loads with the specialisation).
  hal_module module = nullptr;
  hal_function function = nullptr;
  ASSERT_EQ(tune::load_plan(device_, p, &module, &function), HAL_SUCCESS) << hal_last_error();
  EXPECT_NE(function, nullptr);
  hal_module_unload(module);
}

// A register-tile choice launched as planned (its block and grid, not the default's) computes
// C correctly on a shape no tile divides.
TEST_F(TunePlan, ARegisterTileChoiceRunsAsPlannedAndIsCorrect) {
  tune::Database db(key_);
  tune::Entry e;
  e.family = "matmul_f32";
  e.bucket = "128x128x64";
  e.kernel = "matmul_reg_f32_64x256";
  e.specializations = {{0, 8}, {1, 16}, {2, 8}};
  e.block[0] = 64;
  e.block[1] = e.block[2] = 1;
  e.time_ms = 1;
  e.default_time_ms = 4;
  e.label = "reg TM=8 TN=16 TX=8";
  db.put(e);
  std::string error;
  ASSERT_TRUE(db.save(path_, &error)) << error;
  const tune::MatmulShape shape{70, 90, 33};
  const tune::LaunchPlan p = plan(shape);
  ASSERT_TRUE(p.tuned) << p.source;
  EXPECT_EQ(p.label, "reg TM=8 TN=16 TX=8");
  EXPECT_EQ(p.block[0], 64u);
  EXPECT_EQ(p.grid[0], 1u);  // ceil(90 / (8 * 16))
  EXPECT_EQ(p.grid[1], 2u);  // ceil(70 / (64 / 8 * 8))

  const std::vector<float> a = hal_kernels::ref::random_uniform(size_t{shape.m} * shape.k, 1);
  const std::vector<float> b = hal_kernels::ref::random_uniform(size_t{shape.k} * shape.n, 2);
  hal_stream stream = nullptr;
  ASSERT_EQ(hal_stream_create(device_, &stream), HAL_SUCCESS);
  hal_deviceptr da = 0, db_ptr = 0, dc = 0;
  ASSERT_EQ(hal_mem_alloc(device_, a.size() * 4, &da), HAL_SUCCESS);
  ASSERT_EQ(hal_mem_alloc(device_, b.size() * 4, &db_ptr), HAL_SUCCESS);
  ASSERT_EQ(hal_mem_alloc(device_, size_t{shape.m} * shape.n * 4, &dc), HAL_SUCCESS);
  ASSERT_EQ(hal_memcpy_htod(stream, da, a.data(), a.size() * 4), HAL_SUCCESS);
  ASSERT_EQ(hal_memcpy_htod(stream, db_ptr, b.data(), b.size() * 4), HAL_SUCCESS);
  hal_module module = nullptr;
  hal_function function = nullptr;
  ASSERT_EQ(tune::load_plan(device_, p, &module, &function), HAL_SUCCESS) << hal_last_error();
  uint32_t m = shape.m, n = shape.n, k = shape.k, lda = k, ldb = n, ldc = n;
  float alpha = 1.0f, beta = 0.0f;
  void* args[] = {&da, &db_ptr, &dc, &m, &n, &k, &lda, &ldb, &ldc, &alpha, &beta};
  hal_launch_config config{};
  for (int d = 0; d < 3; ++d) {
    config.grid[d] = p.grid[d];
    config.block[d] = p.block[d];
  }
  config.shared_bytes = p.shared_bytes;
  ASSERT_EQ(hal_launch(stream, function, &config, args), HAL_SUCCESS) << hal_last_error();
  std::vector<float> c(size_t{shape.m} * shape.n);
  ASSERT_EQ(hal_memcpy_dtoh(stream, c.data(), dc, c.size() * 4), HAL_SUCCESS);
  ASSERT_EQ(hal_stream_synchronize(stream), HAL_SUCCESS) << hal_last_error();
  const hal_kernels::ref::Check check =
      hal_kernels::ref::compare(c, hal_kernels::ref::matmul(a, b, {}, m, n, k, lda, ldb, ldc, alpha,
                                                            beta, hal_kernels::ref::Storage::kF32));
  EXPECT_TRUE(check.ok()) << check.summary();
  hal_module_unload(module);
  for (hal_deviceptr ptr : {da, db_ptr, dc}) hal_mem_free(device_, ptr);
  hal_stream_destroy(stream);
}

// An attention choice launched as planned (its block and grid) computes O correctly, causal, on
// a shape no tile divides; the nearest bucket's choice serves another head dim too.
TEST_F(TunePlan, AnAttentionChoiceRunsAsPlannedAndIsCorrect) {
  namespace ref = hal_kernels::ref;
  tune::Database db(key_);
  tune::Entry e;
  e.family = "attention_f32";
  e.bucket = "2x64x64x64";
  e.kernel = "attention_reg_f32_d64";
  e.specializations = {{0, 64}, {1, 2}, {2, 4}, {3, 16}};
  e.block[0] = 16;
  e.block[1] = e.block[2] = 1;
  e.time_ms = 1;
  e.default_time_ms = 2;
  e.label = "reg RQ=2 BKV=4 WG=16";
  db.put(e);
  std::string error;
  ASSERT_TRUE(db.save(path_, &error)) << error;
  for (uint32_t d : {64u, 128u}) {
    const tune::AttentionShape shape{2, 50, 61, d, true};
    tune::LaunchPlan p;
    std::string why;
    ASSERT_TRUE(tune::plan_attention(device_, "attention_f32", shape, &p, &why)) << why;
    ASSERT_TRUE(p.tuned) << p.source;
    EXPECT_EQ(p.label, "reg RQ=2 BKV=4 WG=16");
    EXPECT_EQ(p.block[0], 16u);
    EXPECT_EQ(p.grid[0], 2u);  // ceil(50 / (16 * 2))
    EXPECT_EQ(p.grid[1], 2u);
    ASSERT_FALSE(p.specializations.empty());
    EXPECT_EQ(p.specializations[0].value, d);
    if (d == 128) {
      EXPECT_NE(p.source.find("nearest tuned shape"), std::string::npos) << p.source;
    }

    const size_t q_size = size_t{shape.batch_heads} * shape.seq_q * d;
    const size_t kv_size = size_t{shape.batch_heads} * shape.seq_kv * d;
    const std::vector<float> q = ref::random_uniform(q_size, 1);
    const std::vector<float> k = ref::random_uniform(kv_size, 2);
    const std::vector<float> v = ref::random_uniform(kv_size, 3);
    hal_stream stream = nullptr;
    ASSERT_EQ(hal_stream_create(device_, &stream), HAL_SUCCESS);
    hal_deviceptr dq = 0, dk = 0, dv = 0, dout = 0;
    ASSERT_EQ(hal_mem_alloc(device_, q_size * 4, &dq), HAL_SUCCESS);
    ASSERT_EQ(hal_mem_alloc(device_, kv_size * 4, &dk), HAL_SUCCESS);
    ASSERT_EQ(hal_mem_alloc(device_, kv_size * 4, &dv), HAL_SUCCESS);
    ASSERT_EQ(hal_mem_alloc(device_, q_size * 4, &dout), HAL_SUCCESS);
    ASSERT_EQ(hal_memcpy_htod(stream, dq, q.data(), q_size * 4), HAL_SUCCESS);
    ASSERT_EQ(hal_memcpy_htod(stream, dk, k.data(), kv_size * 4), HAL_SUCCESS);
    ASSERT_EQ(hal_memcpy_htod(stream, dv, v.data(), kv_size * 4), HAL_SUCCESS);
    hal_module module = nullptr;
    hal_function function = nullptr;
    ASSERT_EQ(tune::load_plan(device_, p, &module, &function), HAL_SUCCESS) << hal_last_error();
    uint32_t bh = shape.batch_heads, sq = shape.seq_q, skv = shape.seq_kv, causal = 1;
    float scale = 0.125f;
    void* args[] = {&dq, &dk, &dv, &dout, &bh, &sq, &skv, &scale, &causal};
    hal_launch_config config{};
    for (int i = 0; i < 3; ++i) {
      config.grid[i] = p.grid[i];
      config.block[i] = p.block[i];
    }
    config.shared_bytes = p.shared_bytes;
    ASSERT_EQ(hal_launch(stream, function, &config, args), HAL_SUCCESS) << hal_last_error();
    std::vector<float> out(q_size);
    ASSERT_EQ(hal_memcpy_dtoh(stream, out.data(), dout, q_size * 4), HAL_SUCCESS);
    ASSERT_EQ(hal_stream_synchronize(stream), HAL_SUCCESS) << hal_last_error();
    const ref::Check check =
        ref::compare(out, ref::attention(q, k, v, bh, sq, skv, d, scale, true, ref::Storage::kF32));
    EXPECT_TRUE(check.ok()) << "d " << d << ": " << check.summary();
    hal_module_unload(module);
    for (hal_deviceptr ptr : {dq, dk, dv, dout}) hal_mem_free(device_, ptr);
    hal_stream_destroy(stream);
  }
}

TEST_F(TunePlan, ACorruptOrStaleDatabaseIsIgnored) {
  write_entry("128x128x128", 32, 128, 8);
  ASSERT_TRUE(plan({128, 128, 128}).tuned);
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-30, std::ios::end);
    f.put('#');
  }
  tune::LaunchPlan p = plan({128, 128, 128});
  EXPECT_FALSE(p.tuned) << p.source;
  EXPECT_EQ(p.label, "tiled BM=64 BN=64 BK=16");

  // Stale: written for another kernel pack.
  tune::DeviceKey other = key_;
  other.pack_hash = "0000000000000000";
  tune::Database stale(other);
  tune::Entry e;
  e.family = "matmul_f32";
  e.bucket = "128x128x128";
  e.kernel = "matmul_tiled_f32_64x64";
  e.specializations = {{0, 32}, {1, 32}, {2, 8}};
  e.block[0] = 256;
  e.block[1] = e.block[2] = 1;
  e.time_ms = 1;
  e.default_time_ms = 2;
  e.label = "tiled BM=32 BN=32 BK=8";
  stale.put(e);
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  std::string error;
  ASSERT_TRUE(stale.save(path_, &error)) << error;
  p = plan({128, 128, 128});
  EXPECT_FALSE(p.tuned) << p.source;
}

}  // namespace
