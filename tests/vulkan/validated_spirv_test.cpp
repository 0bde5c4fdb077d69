// The memo of validated modules on its own: only equal words hit, the most recent stay within
// the budget, and a module beyond the budget is never kept.
#include "vulkan/validated_spirv.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace hal::vulkan {
namespace {

std::vector<uint32_t> module_of(size_t words, uint32_t seed) {
  std::vector<uint32_t> out(words);
  for (size_t i = 0; i < words; ++i) out[i] = seed * 2654435761u + static_cast<uint32_t>(i);
  return out;
}

TEST(ValidatedSpirv, OnlyTheSameWordsHit) {
  ValidatedSpirv memo;
  const std::vector<uint32_t> a = module_of(100, 1);
  EXPECT_FALSE(memo.contains(a));
  memo.passed(a);
  EXPECT_TRUE(memo.contains(a));
  EXPECT_EQ(memo.bytes(), a.size() * 4);
  for (size_t i : {size_t{0}, size_t{50}, size_t{99}}) {
    std::vector<uint32_t> changed = a;
    changed[i] ^= 1u;
    EXPECT_FALSE(memo.contains(changed)) << "word " << i;
  }
  std::vector<uint32_t> longer = a;
  longer.push_back(0);
  EXPECT_FALSE(memo.contains(longer));
  EXPECT_FALSE(memo.contains(std::vector<uint32_t>(a.begin(), a.end() - 1)));
  memo.passed(a);  // recorded once
  EXPECT_EQ(memo.bytes(), a.size() * 4);
}

TEST(ValidatedSpirv, TheLeastRecentlyUsedGoFirst) {
  ValidatedSpirv memo;
  const size_t quarter = ValidatedSpirv::kBudgetBytes / 4 / 4;  // words
  const std::vector<uint32_t> a = module_of(quarter, 1), b = module_of(quarter, 2),
                              c = module_of(quarter, 3), d = module_of(quarter, 4),
                              e = module_of(quarter, 5);
  for (const auto* m : {&a, &b, &c, &d}) memo.passed(*m);
  EXPECT_EQ(memo.bytes(), ValidatedSpirv::kBudgetBytes);
  EXPECT_TRUE(memo.contains(a));  // a is now the most recent: b is the oldest
  memo.passed(e);
  EXPECT_LE(memo.bytes(), ValidatedSpirv::kBudgetBytes);
  EXPECT_FALSE(memo.contains(b));
  for (const auto* m : {&a, &c, &d, &e}) EXPECT_TRUE(memo.contains(*m));
}

TEST(ValidatedSpirv, AModuleBeyondTheBudgetIsNotKept) {
  ValidatedSpirv memo;
  const std::vector<uint32_t> small = module_of(10, 7);
  memo.passed(small);
  const std::vector<uint32_t> huge = module_of(ValidatedSpirv::kBudgetBytes / 4 + 1, 8);
  memo.passed(huge);
  EXPECT_FALSE(memo.contains(huge));
  EXPECT_TRUE(memo.contains(small));
}

}  // namespace
}  // namespace hal::vulkan
