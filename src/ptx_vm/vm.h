// The PTX interpreter: loads a PTX module into a form it can execute, and runs a kernel's grid
// on the host CPU with SIMT semantics (warps of 32 lanes in lockstep under an active mask,
// divergent branches reconverging at their immediate post-dominator, barriers across the whole
// block, warp-wide shuffles and votes over the real lanes).
//
// This is the whole interface the CPU PTX driver (src/ptx_cpu) uses; nothing here knows about
// the CUDA driver API. The driver owns device memory and tells the interpreter which global
// addresses are valid (MemoryMap); the interpreter checks every access a kernel makes against
// that map, the block's shared memory and the thread's local memory, and stops the kernel with a
// Fault that names the kernel, the PTX line, the block, the thread and the address.
//
// Addresses as a kernel sees them:
//  - global and const: host addresses (device memory is host memory);
//  - shared: offsets from 0 within the block's shared memory (static variables first, then the
//    dynamic .extern .shared area); generic shared addresses are kSharedWindow + offset;
//  - local: offsets from 0 within the thread's local memory; generic ones kLocalWindow + offset.
// The two windows lie in the kernel half of the 64-bit address space, where no host pointer can.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hal::ptx_vm {

inline constexpr uint64_t kSharedWindow = 0xffff'f000'0000'0000ull;
inline constexpr uint64_t kLocalWindow = 0xffff'e000'0000'0000ull;
inline constexpr uint64_t kWindowSize = 0x0000'1000'0000'0000ull;

struct Range {
  uint64_t begin = 0;
  uint64_t size = 0;
};

// The global memory a launch may touch, as the driver knows it: device allocations, page-locked
// host allocations and module variables. Must not change while a launch that uses it runs.
// Thread-safety: called from every worker thread at once; implementations must be read-only.
class MemoryMap {
 public:
  virtual ~MemoryMap() = default;
  // Whether [address, address + size) lies inside one valid range; if so fills |hit| with it.
  virtual bool find(uint64_t address, uint64_t size, Range* hit) const = 0;
  // Where |address| lies relative to the nearest valid range, for a fault report, e.g.
  // "4 bytes past the end of the 4096-byte allocation at 0x7f0000001000" or "not near any
  // allocation (the nearest, at 0x..., is 1 MiB away)".
  virtual std::string describe(uint64_t address, uint64_t size) const = 0;
};

// ===========================================================================================
// Loading
// ===========================================================================================

struct LoadOptions {
  uint32_t sm = 80;               // the device's compute capability, 10 * major + minor
  uint32_t max_ptx_version = 88;  // the newest PTX ISA accepted, 10 * major + minor
};

enum class LoadStatus : uint8_t {
  kOk,
  kInvalidPtx,          // malformed, or uses what the interpreter cannot execute
  kUnsupportedVersion,  // .version newer than LoadOptions::max_ptx_version
  kOutOfMemory,         // module variables could not be allocated
};

struct LoadError {
  LoadStatus status = LoadStatus::kOk;
  // One line per problem: "line N: 'mnemonic.as.written': reason" or "line N: reason".
  std::string log;
};

// One kernel parameter as laid out in the parameter buffer.
struct ParamSlot {
  uint32_t offset = 0;
  uint32_t size = 0;
  uint32_t align = 0;
};

struct KernelInfo {
  std::string name;
  std::vector<ParamSlot> params;
  uint32_t param_bytes = 0;            // size of the parameter buffer
  uint32_t reqntid[3] = {0, 0, 0};     // .reqntid, zeros when absent
  uint32_t maxntid[3] = {0, 0, 0};     // .maxntid, zeros when absent
  uint32_t max_threads_per_block = 0;  // from .reqntid / .maxntid, else the device's 1024
  uint32_t static_shared_bytes = 0;    // .shared variables the kernel (and what it calls) uses
  uint32_t dynamic_shared_align = 0;   // alignment of the .extern .shared area, 0 without one
  uint32_t local_bytes = 0;            // per thread
  uint32_t registers = 0;              // 32-bit register slots per thread (informational)
  uint32_t line = 0;                   // of the .entry
};

class Kernel;  // a decoded entry point; opaque

// A loaded module: its kernels and the memory of its module-scope .global/.const variables.
// Immutable after load; share it between threads. Launches hold no reference to it: the driver
// must keep it alive until launches that use its kernels have completed.
class Program {
 public:
  virtual ~Program() = default;
  // Parses |size| bytes of PTX text (read up to the first NUL, if any) and decodes every entry.
  // Fails, never later at run time, on malformed PTX and on anything the interpreter cannot
  // execute, naming the line, the instruction and the reason in |error|.
  static std::unique_ptr<Program> load(const char* text, size_t size, const LoadOptions& options,
                                       LoadError* error);

  virtual size_t kernel_count() const = 0;
  virtual const Kernel& kernel(size_t index) const = 0;
  // nullptr when there is no entry of that name.
  virtual const Kernel* find(std::string_view name) const = 0;
  // The module variables' memory (host memory owned by the program), for the MemoryMap.
  virtual const std::vector<Range>& data() const = 0;
};

const KernelInfo& info(const Kernel& kernel);

// ===========================================================================================
// Running
// ===========================================================================================

struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_shared_bytes = 0;
  const void* params = nullptr;  // KernelInfo::param_bytes bytes, laid out per KernelInfo::params
  const MemoryMap* memory = nullptr;
};

enum class FaultKind : uint8_t {
  kNone,
  kIllegalAddress,      // outside every valid range, shared or local memory
  kMisalignedAddress,   // not aligned to the access size
  kBarrier,             // a barrier reached by a diverged warp, or one that can never complete
  kIllegalInstruction,  // a warp-wide operation whose lanes do not agree (e.g. shfl membermask)
  kTrap,                // trap
  kAssert,              // __assertfail (a device-side assert)
};

struct Fault {
  FaultKind kind = FaultKind::kNone;
  // "kernel 'k' (line 42: 'st.global.f32'), block (1,0,0), thread (33,0,0): write of 4 bytes at
  //  0x7f...: 4 bytes past the end of the 4096-byte allocation at 0x7f..."
  std::string message;
};

struct RunStats {
  uint64_t lane_instructions = 0;  // instructions times the lanes that executed them
  uint64_t warp_instructions = 0;
};

// A pool of host threads that run blocks. One may serve several devices and streams: run() is
// thread-safe, and concurrent launches share the workers.
class Executor {
 public:
  // |threads| workers in all, counting the thread that calls run(); at least 1.
  explicit Executor(unsigned threads);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  unsigned threads() const;

  // Runs every block of the grid and returns when all have finished, or when one faulted (the
  // blocks not yet started are then skipped). The caller has checked the geometry and the
  // shared memory against the kernel's and the device's limits. |stats| may be null.
  Fault run(const Kernel& kernel, const LaunchConfig& config, RunStats* stats);

 private:
  struct Pool;
  std::unique_ptr<Pool> pool_;
};

}  // namespace hal::ptx_vm
