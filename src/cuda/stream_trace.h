// StreamTrace: the timeline trace's device spans for one CUDA stream (only with HAL_TRACE on).
//
// Each traced operation is bracketed by two events recorded on the stream. CUDA measures device
// time only between two events (cuEventElapsedTime), so the trace keeps a base event whose host
// time is known: at creation it is recorded and waited for, so the host sees it complete right
// after it happened; later the end of the last resolved span becomes the base (which also keeps
// the float milliseconds cuEventElapsedTime returns small and precise).
//
// Spans are resolved, in order, when the stream is known to be idle (synchronize, a query that
// found it idle, destruction). At most kMaxPending spans wait: beyond that the completed ones are
// resolved, and if the oldest has still not completed, it is left out of the trace (logged once).
//
// Thread-safety: none; used only by its stream, whose calls the runtime serialises.
#pragma once

#include "common/trace.h"
#include "cuda/cuda_device.h"

#include <deque>
#include <vector>

namespace hal::cuda {

class StreamTrace {
 public:
  static constexpr size_t kMaxPending = 4096;

  // Records the base event on |stream| and waits for it; on failure the stream is not traced
  // (ok() is false, and the log says why).
  StreamTrace(CudaDevice& device, CUstream stream);
  ~StreamTrace();
  StreamTrace(const StreamTrace&) = delete;
  StreamTrace& operator=(const StreamTrace&) = delete;

  bool ok() const { return base_ != nullptr; }
  // Before an operation is issued: its begin event (nullptr if it could not be recorded).
  CUevent begin();
  // After the operation: records its end and keeps |op| when |issued|; releases |begin| when not.
  void end(CUevent begin, bool issued, trace::Op op);
  // Resolves every span whose end event has completed (all of them when the stream is idle).
  void resolve();

 private:
  struct Pending {
    CUevent begin;
    CUevent end;
    trace::Op op;
  };
  CUevent take_event();
  void give_back(CUevent event);

  CudaDevice& device_;
  CUstream stream_;
  uint32_t row_ = 0;
  CUevent base_ = nullptr;
  uint64_t base_host_ns_ = 0;
  std::deque<Pending> pending_;
  std::vector<CUevent> spare_;
  bool reported_drop_ = false;
};

}  // namespace hal::cuda
