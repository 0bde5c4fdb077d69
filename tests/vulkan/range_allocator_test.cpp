// The sub-allocator on its own: alignment, best fit, merging, exhaustion, bad releases.
#include "vulkan/range_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace hal::vulkan {
namespace {

TEST(RangeAllocator, OffsetsAreAlignedAndSizesRounded) {
  RangeAllocator ranges(0, 4096, 256);
  uint64_t a = 1, b = 1;
  ASSERT_TRUE(ranges.allocate(1, &a));
  ASSERT_TRUE(ranges.allocate(300, &b));
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 256u);
  EXPECT_EQ(ranges.used(), 256u + 512u);
  EXPECT_EQ(ranges.live_count(), 2u);
  EXPECT_EQ(ranges.largest_free(), 4096u - 768u);
}

TEST(RangeAllocator, BeginIsRoundedUp) {
  RangeAllocator ranges(100, 1124, 256);
  uint64_t a = 0;
  ASSERT_TRUE(ranges.allocate(256, &a));
  EXPECT_EQ(a, 256u);
  EXPECT_EQ(ranges.capacity(), 768u);
}

TEST(RangeAllocator, ExhaustionAndZeroSize) {
  RangeAllocator ranges(0, 1024, 256);
  uint64_t offset = 0;
  EXPECT_FALSE(ranges.allocate(0, &offset));
  EXPECT_FALSE(ranges.allocate(1025, &offset));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(ranges.allocate(200, &offset));
  EXPECT_FALSE(ranges.allocate(1, &offset));
  EXPECT_EQ(ranges.largest_free(), 0u);
}

TEST(RangeAllocator, FreedNeighboursMerge) {
  RangeAllocator ranges(0, 1024, 256);
  uint64_t o[4];
  for (uint64_t& offset : o) ASSERT_TRUE(ranges.allocate(256, &offset));
  ASSERT_TRUE(ranges.release(o[1]));
  ASSERT_TRUE(ranges.release(o[3]));
  EXPECT_EQ(ranges.free_range_count(), 2u);
  uint64_t big = 0;
  EXPECT_FALSE(ranges.allocate(512, &big));  // two free ranges, not adjacent
  ASSERT_TRUE(ranges.release(o[2]));         // joins both neighbours
  EXPECT_EQ(ranges.free_range_count(), 1u);
  ASSERT_TRUE(ranges.allocate(768, &big));
  EXPECT_EQ(big, 256u);
  ASSERT_TRUE(ranges.release(o[0]));
  ASSERT_TRUE(ranges.release(big));
  EXPECT_TRUE(ranges.empty());
  EXPECT_EQ(ranges.largest_free(), 1024u);
  EXPECT_EQ(ranges.used(), 0u);
}

TEST(RangeAllocator, BestFitPicksTheSmallestHole) {
  RangeAllocator ranges(0, 4096, 256);
  uint64_t o[6];
  const uint64_t sizes[6] = {768, 256, 512, 256, 256, 256};
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(ranges.allocate(sizes[i], &o[i]));
  ASSERT_TRUE(ranges.release(o[0]));  // a 768 hole at 0
  ASSERT_TRUE(ranges.release(o[2]));  // a 512 hole at 1024
  uint64_t offset = 0;
  ASSERT_TRUE(ranges.allocate(400, &offset));
  EXPECT_EQ(offset, o[2]);
}

TEST(RangeAllocator, BadReleasesChangeNothing) {
  RangeAllocator ranges(0, 1024, 256);
  uint64_t a = 0;
  ASSERT_TRUE(ranges.allocate(256, &a));
  EXPECT_FALSE(ranges.release(a + 256));  // never allocated
  EXPECT_FALSE(ranges.release(a + 1));    // interior
  EXPECT_TRUE(ranges.release(a));
  EXPECT_FALSE(ranges.release(a));  // twice
  EXPECT_TRUE(ranges.empty());
}

TEST(RangeAllocator, RandomWorkloadKeepsInvariants) {
  std::mt19937 rng(7);
  RangeAllocator ranges(0, 1 << 20, 256);
  std::vector<std::pair<uint64_t, uint64_t>> live;  // offset, rounded size
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      const uint64_t size = 1 + rng() % 5000;
      uint64_t offset = 0;
      if (ranges.allocate(size, &offset)) {
        ASSERT_EQ(offset % 256, 0u);
        ASSERT_LE(offset + size, uint64_t{1} << 20);
        for (const auto& [o, s] : live) ASSERT_TRUE(offset + size <= o || o + s <= offset);
        live.emplace_back(offset, (size + 255) / 256 * 256);
      }
    } else {
      const size_t index = rng() % live.size();
      ASSERT_TRUE(ranges.release(live[index].first));
      live.erase(live.begin() + static_cast<long>(index));
    }
    uint64_t used = 0;
    for (const auto& entry : live) used += entry.second;
    ASSERT_EQ(ranges.used(), used);
  }
  for (const auto& entry : live) ASSERT_TRUE(ranges.release(entry.first));
  EXPECT_EQ(ranges.free_range_count(), 1u);
  EXPECT_EQ(ranges.largest_free(), uint64_t{1} << 20);
}

}  // namespace
}  // namespace hal::vulkan
