// An event: the capture of a stream's work by cuEventRecord, and the time it completed.
//
// Each record is a (stream, sequence number) pair plus the time its operation ran; the event
// keeps only the latest. Querying, synchronising and cuStreamWaitEvent all look at the record
// that is the latest when they are called, so a later re-record never changes what an earlier
// wait waits for. An event that was never recorded has no record: it counts as complete, and
// timing it is CUDA_ERROR_INVALID_HANDLE, as in CUDA.
//
// Ownership: shared by the handle table and nothing else (a record's operation holds only the
// record). Thread-safety: every member may be called from any thread.
#pragma once

#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "ptx_cpu/stream.h"

namespace hal::ptx_cpu {

class Context;

struct EventRecord {
  std::shared_ptr<Stream> stream;
  uint64_t sequence = 0;
  // Written by the stream's worker before the operation completes; read only after
  // stream->completed(sequence), which orders the two.
  std::chrono::steady_clock::time_point time;

  bool done() const { return stream->completed(sequence); }
};

class Event {
 public:
  Event(Context& context, unsigned flags) : context_(context), flags_(flags) {}

  Context& context() const { return context_; }
  unsigned flags() const { return flags_; }
  bool timing() const { return (flags_ & CU_EVENT_DISABLE_TIMING) == 0; }

  // nullptr when never recorded.
  std::shared_ptr<EventRecord> latest() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return latest_;
  }
  void set_latest(std::shared_ptr<EventRecord> record) {
    std::lock_guard<std::mutex> lock(mutex_);
    latest_ = std::move(record);
  }

 private:
  Context& context_;
  const unsigned flags_;
  mutable std::mutex mutex_;
  std::shared_ptr<EventRecord> latest_;
};

}  // namespace hal::ptx_cpu
