#include "ptx_cpu/memory.h"

#include "ptx_cpu/context.h"
#include "ptx_cpu/driver.h"
#include "ptx_cpu/memory_map.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

namespace hal::ptx_cpu {
namespace {

constexpr size_t kHostAlignment = 4096;

// |size| rounded up to the allocation granularity; 0 when that overflows.
uint64_t charged(uint64_t size) {
  if (size > UINT64_MAX - (kAllocationAlignment - 1)) return 0;
  return (size + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
}

}  // namespace

MemoryRegistry::~MemoryRegistry() {
  for (auto& [begin, region] : regions_) {
    if (region.kind != RegionKind::kModule) std::free(reinterpret_cast<void*>(begin));
  }
}

CUresult MemoryRegistry::allocate_device(Context& owner, size_t size, CUdeviceptr* out) {
  const uint64_t cost = charged(size);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cost == 0 || cost > budget_ - used_) return CUDA_ERROR_OUT_OF_MEMORY;
    used_ += cost;  // reserved while the host allocates
  }
  void* memory = nullptr;
  if (posix_memalign(&memory, kAllocationAlignment, cost) != 0) memory = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (memory == nullptr) {
    used_ -= cost;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  Region region;
  region.begin = reinterpret_cast<uint64_t>(memory);
  region.size = size;
  region.kind = RegionKind::kDevice;
  region.device = owner.device();
  region.owner = &owner;
  regions_[region.begin] = std::move(region);
  snapshots_.clear();
  *out = reinterpret_cast<CUdeviceptr>(memory);
  return CUDA_SUCCESS;
}

CUresult MemoryRegistry::allocate_host(Context& owner, size_t size, unsigned flags, void** out) {
  void* memory = nullptr;
  if (size > SIZE_MAX - kHostAlignment ||
      posix_memalign(&memory, kHostAlignment,
                     (size + kHostAlignment - 1) / kHostAlignment * kHostAlignment) != 0) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  Region region;
  region.begin = reinterpret_cast<uint64_t>(memory);
  region.size = size;
  region.kind = RegionKind::kHost;
  region.device = owner.device();
  region.owner = &owner;
  region.host_flags = flags;
  std::lock_guard<std::mutex> lock(mutex_);
  regions_[region.begin] = std::move(region);
  snapshots_.clear();
  *out = memory;
  return CUDA_SUCCESS;
}

bool MemoryRegistry::free(uint64_t address, RegionKind kind) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = regions_.find(address);
    if (it == regions_.end() || it->second.kind != kind) return false;
    if (kind == RegionKind::kDevice) used_ -= charged(it->second.size);
    regions_.erase(it);
    snapshots_.clear();
  }
  std::free(reinterpret_cast<void*>(address));
  return true;
}

void MemoryRegistry::release_owned(const Context& owner) {
  std::vector<uint64_t> to_free;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = regions_.begin(); it != regions_.end();) {
      if (it->second.owner != &owner) {
        ++it;
        continue;
      }
      if (it->second.kind == RegionKind::kDevice) used_ -= charged(it->second.size);
      if (it->second.kind != RegionKind::kModule) to_free.push_back(it->first);
      it = regions_.erase(it);
    }
    snapshots_.clear();
  }
  for (uint64_t address : to_free) std::free(reinterpret_cast<void*>(address));
}

void MemoryRegistry::add_module(const Context& owner, const void* module,
                                const std::shared_ptr<const ptx_vm::Program>& program) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const ptx_vm::Range& range : program->data()) {
    if (range.size == 0) continue;
    Region region;
    region.begin = range.begin;
    region.size = range.size;
    region.kind = RegionKind::kModule;
    region.device = owner.device();
    region.owner = &owner;
    region.module = module;
    region.keep_alive = program;
    regions_[region.begin] = std::move(region);
  }
  snapshots_.clear();
}

void MemoryRegistry::remove_module(const void* module) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = regions_.begin(); it != regions_.end();) {
    if (it->second.kind == RegionKind::kModule && it->second.module == module) {
      it = regions_.erase(it);
    } else {
      ++it;
    }
  }
  snapshots_.clear();
}

bool MemoryRegistry::find(uint64_t address, uint64_t size, Region* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto above = regions_.upper_bound(address);
  if (above == regions_.begin()) return false;
  const Region& region = std::prev(above)->second;
  const uint64_t span = std::max<uint64_t>(size, 1);
  if (address >= region.end() || span > region.end() - address) return false;
  if (out != nullptr) *out = region;
  return true;
}

std::string MemoryRegistry::describe(uint64_t address, uint64_t size) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto above = regions_.upper_bound(address);
  const Region* below_region = above == regions_.begin() ? nullptr : &std::prev(above)->second;
  const Region* above_region = above == regions_.end() ? nullptr : &above->second;
  return describe_between(below_region, above_region, address, size);
}

std::shared_ptr<const MemorySnapshot> MemoryRegistry::snapshot(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<const MemorySnapshot>& snapshot = snapshots_[device];
  if (snapshot == nullptr) {
    std::vector<Region> visible;
    for (const auto& [begin, region] : regions_) {
      if (region.kind == RegionKind::kHost || region.device == device) visible.push_back(region);
    }
    snapshot = std::make_shared<const MemorySnapshot>(std::move(visible));
  }
  return snapshot;
}

uint64_t MemoryRegistry::used() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

}  // namespace hal::ptx_cpu
