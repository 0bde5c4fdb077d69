// Fault reports: which kernel, PTX line, block, thread and address.
#include <cstdio>
#include <string>

#include "ptx_vm/exec.h"

namespace hal::ptx_vm {

void thread_of(const Exec& x, uint32_t lane, uint32_t out[3]) {
  const uint32_t t = x.warp * kWarpSize + lane;
  const uint32_t nx = x.ntid[0] != 0 ? x.ntid[0] : 1;
  const uint32_t ny = x.ntid[1] != 0 ? x.ntid[1] : 1;
  out[0] = t % nx;
  out[1] = t / nx % ny;
  out[2] = t / (nx * ny);
}

void raise_fault(Exec& x, FaultKind kind, uint32_t lane, const std::string& what) {
  if (x.faulted) return;
  x.faulted = true;
  if (x.fault == nullptr) return;
  if (x.fault->kind != FaultKind::kNone) return;  // another worker's fault came first
  uint32_t t[3];
  thread_of(x, lane, t);
  std::string where = "kernel '" + x.kernel->info.name + "'";
  if (x.pc < x.kernel->source.size()) {
    const SourceInfo& s = x.kernel->source[x.pc];
    where += " (line " + std::to_string(s.line);
    if (!s.text.empty()) where += ": '" + s.text + "'";
    where += ")";
  }
  where += ", block (" + std::to_string(x.ctaid[0]) + "," + std::to_string(x.ctaid[1]) + "," +
           std::to_string(x.ctaid[2]) + "), thread (" + std::to_string(t[0]) + "," +
           std::to_string(t[1]) + "," + std::to_string(t[2]) + ")";
  x.fault->kind = kind;
  x.fault->message = where + ": " + what;
}

void raise_memory_fault(Exec& x, FaultKind kind, uint32_t lane, Access access, const char* space,
                        uint64_t address, uint32_t size) {
  if (x.faulted) return;
  char hex[32];
  std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(address));
  const char* verb = access == Access::kRead    ? "read"
                     : access == Access::kWrite ? "write"
                                                : "atomic";
  std::string what =
      std::string(verb) + " of " + std::to_string(size) + " bytes at " + space + " address " + hex;
  if (kind == FaultKind::kMisalignedAddress) {
    what += ", which is not aligned to " + std::to_string(size) + " bytes";
  } else if (std::string(space) == "global") {
    what += ": " + (x.memory != nullptr ? x.memory->describe(address, size)
                                        : std::string("no global memory is mapped"));
  } else if (std::string(space) == "shared") {
    what += ": the block has " + std::to_string(x.shared_bytes) + " bytes of shared memory (" +
            std::to_string(x.shared_bytes - x.dynamic_shared_bytes) + " static, " +
            std::to_string(x.dynamic_shared_bytes) + " dynamic)";
  } else if (std::string(space) == "local") {
    what += ": each thread has " + std::to_string(x.local_bytes) + " bytes of local memory";
  } else if (std::string(space) == "param") {
    what += ": the kernel's parameters take " + std::to_string(x.param_bytes) + " bytes";
  }
  raise_fault(x, kind, lane, what);
}

}  // namespace hal::ptx_vm
