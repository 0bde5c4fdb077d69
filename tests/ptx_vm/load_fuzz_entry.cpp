#include "load_fuzz_entry.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "ptx_vm/code.h"
#include "ptx_vm/vm.h"

namespace ptx_vm_fuzz {
namespace {

using hal::ptx_vm::Range;

// The largest block and shared memory a run uses; kernels that need more are only loaded.
constexpr uint32_t kMaxThreads = 128;
constexpr uint32_t kMaxSharedBytes = 48 << 10;
constexpr uint32_t kDynamicSharedBytes = 256;
constexpr uint32_t kMaxParamBytes = 64 << 10;

// Global memory: only the module's variables, so any other address faults.
class ModuleMemory : public hal::ptx_vm::MemoryMap {
 public:
  explicit ModuleMemory(const std::vector<Range>& ranges) : ranges_(ranges) {}
  bool find(uint64_t address, uint64_t size, Range* hit) const override {
    for (const Range& r : ranges_) {
      if (address >= r.begin && address - r.begin < r.size &&
          r.size - (address - r.begin) >= size) {
        *hit = r;
        return true;
      }
    }
    return false;
  }
  std::string describe(uint64_t, uint64_t) const override { return "not a module variable"; }

 private:
  const std::vector<Range>& ranges_;
};

// Whether every run of |kernel| ends: calls are inlined, so only a backward branch can loop.
bool cannot_loop(const hal::ptx_vm::Kernel& kernel) {
  for (size_t pc = 0; pc < kernel.code.size(); ++pc) {
    const hal::ptx_vm::Op& op = kernel.code[pc];
    if (op.kind == hal::ptx_vm::OpKind::kBranch && op.target <= pc) return false;
  }
  return true;
}

// The block a kernel runs with: its .reqntid, else one warp within its .maxntid.
bool pick_block(const hal::ptx_vm::KernelInfo& info, uint32_t block[3]) {
  if (info.reqntid[0] != 0) {
    for (int i = 0; i < 3; ++i) block[i] = std::max(info.reqntid[i], 1u);
  } else {
    block[0] = std::min(32u, std::max(info.max_threads_per_block, 1u));
    block[1] = block[2] = 1;
  }
  return uint64_t{block[0]} * block[1] * block[2] <=
         std::min(kMaxThreads, info.max_threads_per_block);
}

std::string run_kernel(const hal::ptx_vm::Program& program, const hal::ptx_vm::Kernel& kernel) {
  const hal::ptx_vm::KernelInfo& info = hal::ptx_vm::info(kernel);
  hal::ptx_vm::LaunchConfig config;
  if (!pick_block(info, config.block) || info.static_shared_bytes > kMaxSharedBytes ||
      info.param_bytes > kMaxParamBytes || !cannot_loop(kernel)) {
    return "";
  }
  if (info.dynamic_shared_align != 0) config.dynamic_shared_bytes = kDynamicSharedBytes;
  // Exactly the kernel's parameter bytes, so that a read past them is an overflow.
  std::unique_ptr<uint8_t[]> params(new uint8_t[info.param_bytes]());
  config.params = info.param_bytes != 0 ? params.get() : nullptr;
  const ModuleMemory memory(program.data());
  config.memory = &memory;
  // One worker, the calling thread: the fuzzer runs single-threaded.
  static hal::ptx_vm::Executor executor(1);
  hal::ptx_vm::RunStats stats;
  const hal::ptx_vm::Fault fault = executor.run(kernel, config, &stats);
  if (fault.kind != hal::ptx_vm::FaultKind::kNone && fault.message.empty()) {
    return "'" + info.name + "' faulted without a message";
  }
  if (fault.kind == hal::ptx_vm::FaultKind::kNone && !fault.message.empty()) {
    return "'" + info.name + "' ran clean with a fault message: " + fault.message;
  }
  return "";
}

}  // namespace

std::string load_one(const uint8_t* data, size_t size) {
  hal::ptx_vm::LoadError error;
  const std::unique_ptr<hal::ptx_vm::Program> program = hal::ptx_vm::Program::load(
      reinterpret_cast<const char*>(data), size, hal::ptx_vm::LoadOptions{}, &error);
  if (program == nullptr) {
    if (error.status == hal::ptx_vm::LoadStatus::kOk) return "failed with status kOk";
    if (error.log.empty()) return "failed with an empty log";
    return "";
  }
  if (error.status != hal::ptx_vm::LoadStatus::kOk) return "loaded with a failure status";
  for (size_t i = 0; i < program->kernel_count(); ++i) {
    const hal::ptx_vm::Kernel& kernel = program->kernel(i);
    const hal::ptx_vm::KernelInfo& info = hal::ptx_vm::info(kernel);
    if (program->find(info.name) != &kernel)
      return "kernel '" + info.name + "' is not found by name";
    uint32_t end = 0;
    for (const hal::ptx_vm::ParamSlot& slot : info.params) {
      if (slot.align == 0 || slot.size == 0 || slot.offset % slot.align != 0 || slot.offset < end) {
        return "kernel '" + info.name + "' has a misplaced parameter";
      }
      end = slot.offset + slot.size;
    }
    if (end > info.param_bytes) return "kernel '" + info.name + "' has parameters past its buffer";
    if (info.max_threads_per_block == 0 || info.max_threads_per_block > 1024) {
      return "kernel '" + info.name + "' has a block limit of " +
             std::to_string(info.max_threads_per_block);
    }
    if (std::string broken = run_kernel(*program, kernel); !broken.empty()) return broken;
  }
  return "";
}

}  // namespace ptx_vm_fuzz
