// The driver log: what CUDA 12.9 calls error log management (cuLogsRegisterCallback,
// cuLogsUnregisterCallback, cuLogsCurrent, cuLogsDumpToFile, cuLogsDumpToMemory, all in logs.cpp).
//
// Every failing entry point writes one line saying why; a kernel fault writes the interpreter's
// full report (kernel, PTX line, block, thread, address and the nearest allocation). This is how
// the detail of an error reaches a program that only sees a CUresult.
//
// Messages are kept in a ring of at most kLogCapacity bytes, as the real driver's; the oldest go
// first. Each message has a sequence number; a CUlogIterator is the number of the next message
// to read. Registered callbacks receive each message as it is written, on the thread that writes
// it (a stream's worker thread for a kernel fault), and must not call back into the driver log.
// When the environment variable CUDA_LOG_FILE is "stdout", "stderr" or a path, every message is
// also written there, one per line.
//
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string_view>

namespace hal::ptx_cpu {

inline constexpr size_t kLogCapacity = 25600;

// Appends one message. A message longer than kLogCapacity is cut to fit.
void log_message(CUlogLevel level, std::string_view message);

}  // namespace hal::ptx_cpu
