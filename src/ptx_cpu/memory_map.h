// The interpreter's view of global memory for one launch (ptx_vm::MemoryMap): an immutable,
// sorted copy of the ranges the kernel may touch, searched by binary search. It also holds the
// programs whose variables it lists, so they outlive every launch that can reach them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ptx_cpu/memory.h"
#include "ptx_vm/vm.h"

namespace hal::ptx_cpu {

class MemorySnapshot final : public ptx_vm::MemoryMap {
 public:
  // |regions| sorted by begin, not overlapping.
  explicit MemorySnapshot(std::vector<Region> regions) : regions_(std::move(regions)) {}

  bool find(uint64_t address, uint64_t size, ptx_vm::Range* hit) const override;
  std::string describe(uint64_t address, uint64_t size) const override;

  size_t size() const { return regions_.size(); }

 private:
  std::vector<Region> regions_;
};

// Where [address, address + size) lies relative to |below| (the region with the greatest begin
// <= address) and |above| (the one with the least begin > address), either may be null:
//   "inside the 4096-byte allocation at 0x..." (the access runs past its end),
//   "4 bytes past the end of the 4096-byte allocation at 0x...",
//   "16 bytes before the 4096-byte page-locked host allocation at 0x...",
//   "not near any allocation (the nearest, at 0x..., is 3 MiB away)", "not near any allocation".
std::string describe_between(const Region* below, const Region* above, uint64_t address,
                             uint64_t size);

}  // namespace hal::ptx_cpu
