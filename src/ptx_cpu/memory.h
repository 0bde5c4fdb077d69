// The registry of every valid "device" address range: device allocations (cuMemAlloc),
// page-locked host allocations (cuMemHostAlloc, cuMemAllocHost) and module variables.
//
// Device memory is host memory: an allocation is 256-byte aligned heap memory whose address is
// the CUdeviceptr. Device allocations are charged to one budget shared by all devices
// (Driver::total_memory); a request that does not fit is refused before anything is allocated,
// so an oversized cuMemAlloc is CUDA_ERROR_OUT_OF_MEMORY without touching the host's memory.
//
// Copies and memsets validate their device ranges here (find). Kernels see a snapshot
// (snapshot(), memory_map.h): the ranges a kernel of one device may touch (that device's
// allocations, all page-locked host memory and its context's module variables), rebuilt only
// when the registry has changed since the last one (copy on write) and shared by every launch in
// between.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ptx_vm/vm.h"

namespace hal::ptx_cpu {

class Context;
class MemorySnapshot;

enum class RegionKind : uint8_t {
  kDevice,  // cuMemAlloc
  kHost,    // cuMemHostAlloc, cuMemAllocHost
  kModule,  // a module's variables
};

struct Region {
  uint64_t begin = 0;
  uint64_t size = 0;
  RegionKind kind = RegionKind::kDevice;
  int device = 0;                  // the owner's device
  const Context* owner = nullptr;  // the context it was made in
  unsigned host_flags = 0;         // cuMemHostAlloc flags, for kHost
  const void* module = nullptr;    // for kModule: the Module
  // For kModule: the program that owns the memory, kept alive by snapshots that include it.
  std::shared_ptr<const void> keep_alive;

  uint64_t end() const { return begin + size; }
};

class MemoryRegistry {
 public:
  explicit MemoryRegistry(uint64_t budget) : budget_(budget) {}
  ~MemoryRegistry();
  MemoryRegistry(const MemoryRegistry&) = delete;
  MemoryRegistry& operator=(const MemoryRegistry&) = delete;

  // cuMemAlloc: CUDA_SUCCESS, or CUDA_ERROR_OUT_OF_MEMORY (the budget, or the host).
  CUresult allocate_device(Context& owner, size_t size, CUdeviceptr* out);
  // cuMemHostAlloc: page-aligned. CUDA_SUCCESS or CUDA_ERROR_OUT_OF_MEMORY.
  CUresult allocate_host(Context& owner, size_t size, unsigned flags, void** out);
  // Frees the allocation of |kind| whose base is |address|; false when there is none (nothing
  // happens then). The caller has made sure no work uses it any more.
  bool free(uint64_t address, RegionKind kind);
  // Frees every allocation made in |owner| and forgets its module variables (context teardown).
  void release_owned(const Context& owner);

  // Registers a module's variables (ranges of |program|'s data) for |owner|'s device.
  void add_module(const Context& owner, const void* module,
                  const std::shared_ptr<const ptx_vm::Program>& program);
  void remove_module(const void* module);

  // The region that holds all of [address, address + size) (size 0: the byte at address), or
  // false. Used to validate the device side of copies and memsets and to answer pointer queries.
  bool find(uint64_t address, uint64_t size, Region* out) const;
  // Where [address, address + size) lies relative to the nearest region, for error messages
  // ("4 bytes past the end of the 4096-byte allocation at 0x...").
  std::string describe(uint64_t address, uint64_t size) const;

  // The ranges a kernel on |device| may touch; see the header comment.
  std::shared_ptr<const MemorySnapshot> snapshot(int device);

  uint64_t budget() const { return budget_; }
  // Bytes of device memory allocated (rounded to the allocation granularity), all devices.
  uint64_t used() const;

 private:
  const uint64_t budget_;
  mutable std::mutex mutex_;
  std::map<uint64_t, Region> regions_;  // by begin; never overlapping
  uint64_t used_ = 0;
  // The current snapshot of each device, dropped by every change (launches that hold an old one
  // keep it, and the programs in it, as long as they run).
  std::map<int, std::shared_ptr<const MemorySnapshot>> snapshots_;
};

}  // namespace hal::ptx_cpu
