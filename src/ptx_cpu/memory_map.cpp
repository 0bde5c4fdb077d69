#include "ptx_cpu/memory_map.h"

#include <fmt/format.h>

#include <algorithm>

namespace hal::ptx_cpu {
namespace {

// Farther than this from every range, an address is "not near any allocation".
constexpr uint64_t kNear = 64 * 1024;

std::string noun(const Region& region) {
  switch (region.kind) {
    case RegionKind::kDevice:
      return fmt::format("{}-byte allocation at {:#x}", region.size, region.begin);
    case RegionKind::kHost:
      return fmt::format("{}-byte page-locked host allocation at {:#x}", region.size, region.begin);
    case RegionKind::kModule:
      return fmt::format("{}-byte module variable range at {:#x}", region.size, region.begin);
  }
  return "range";
}

std::string amount(uint64_t bytes) {
  if (bytes < 10 * 1024) return fmt::format("{} bytes", bytes);
  if (bytes < 10ull * 1024 * 1024) return fmt::format("{} KiB", (bytes + 512) / 1024);
  if (bytes < 10ull * 1024 * 1024 * 1024) {
    return fmt::format("{} MiB", (bytes + 512 * 1024) / (1024 * 1024));
  }
  return fmt::format("{} GiB", (bytes + 512ull * 1024 * 1024) / (1024ull * 1024 * 1024));
}

}  // namespace

std::string describe_between(const Region* below, const Region* above, uint64_t address,
                             uint64_t size) {
  if (below != nullptr && address < below->end()) {
    const uint64_t over = address + std::max<uint64_t>(size, 1) - below->end();
    return fmt::format("runs {} past the end of the {} (it starts at offset {})", amount(over),
                       noun(*below), address - below->begin);
  }
  const uint64_t after_below = below != nullptr ? address - below->end() : UINT64_MAX;
  const uint64_t before_above = above != nullptr ? above->begin - address : UINT64_MAX;
  const std::string null_hint = address < kNear ? " (a null pointer plus an offset?)" : "";
  if (below == nullptr && above == nullptr) {
    return "not near any allocation (there is none)" + null_hint;
  }
  const bool nearer_below = after_below <= before_above;
  const uint64_t distance = nearer_below ? after_below : before_above;
  const Region& nearest = nearer_below ? *below : *above;
  if (distance > kNear) {
    return fmt::format("not near any allocation (the nearest, the {}, is {} away){}", noun(nearest),
                       amount(distance), null_hint);
  }
  if (nearer_below) {
    if (distance == 0) return "just past the end of the " + noun(nearest);
    return fmt::format("{} past the end of the {}", amount(distance), noun(nearest));
  }
  return fmt::format("{} before the {}", amount(distance), noun(nearest));
}

bool MemorySnapshot::find(uint64_t address, uint64_t size, ptx_vm::Range* hit) const {
  auto above = std::upper_bound(regions_.begin(), regions_.end(), address,
                                [](uint64_t value, const Region& r) { return value < r.begin; });
  if (above == regions_.begin()) return false;
  const Region& region = *(above - 1);
  const uint64_t span = std::max<uint64_t>(size, 1);
  if (address >= region.end() || span > region.end() - address) return false;
  if (hit != nullptr) *hit = ptx_vm::Range{region.begin, region.size};
  return true;
}

std::string MemorySnapshot::describe(uint64_t address, uint64_t size) const {
  auto above = std::upper_bound(regions_.begin(), regions_.end(), address,
                                [](uint64_t value, const Region& r) { return value < r.begin; });
  const Region* below_region = above == regions_.begin() ? nullptr : &*(above - 1);
  const Region* above_region = above == regions_.end() ? nullptr : &*above;
  return describe_between(below_region, above_region, address, size);
}

}  // namespace hal::ptx_cpu
