// A device's primary context, and the calling thread's stack of current contexts.
//
// Each device has exactly one Context object for the life of the driver; its address is the
// CUcontext handle. It is active while retained (cuDevicePrimaryCtxRetain / Release count); the
// release that brings the count to 0 waits for its work, then destroys everything made in it
// (streams, events, modules, device and page-locked memory) and clears its sticky error, so that
// the next retain starts afresh, as with CUDA's primary contexts.
//
// Sticky errors: a kernel fault records its CUresult (CUDA_ERROR_ILLEGAL_ADDRESS, ...) in the
// context; from then on every call that uses the context returns it (entry.h current_context)
// and no more work of the context runs, as on a GPU.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "ptx_cpu/stream.h"

namespace hal::ptx_cpu {

class Context {
 public:
  explicit Context(int device) : device_(device) {}
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device() const { return device_; }
  CUcontext handle() { return reinterpret_cast<CUcontext>(this); }

  // --- Primary context life -----------------------------------------------------------------
  void retain();
  // CUDA_ERROR_INVALID_CONTEXT when not retained; the last release deactivates (see above).
  CUresult release();
  bool active() const { return active_.load(std::memory_order_acquire); }
  unsigned retain_count() const;
  unsigned flags() const { return flags_.load(); }
  void set_flags(unsigned flags) { flags_.store(flags); }

  // --- Sticky error -------------------------------------------------------------------------
  CUresult sticky_error() const { return sticky_.load(std::memory_order_acquire); }
  // Records a fault: the first one becomes the sticky error; each is written to the driver log
  // as "device N: <error name>: <message>".
  void record_fault(CUresult result, std::string_view message);

  // --- Streams ------------------------------------------------------------------------------
  // Resolves a stream handle for this context: NULL and CU_STREAM_LEGACY are the legacy stream,
  // CU_STREAM_PER_THREAD the calling thread's; others must be streams created in this context.
  // Returns CUDA_SUCCESS or CUDA_ERROR_INVALID_HANDLE (logged).
  CUresult resolve_stream(CUstream handle, std::shared_ptr<Stream>* out);
  std::shared_ptr<Stream> create_stream(unsigned flags, int priority);
  // Closes |stream| (its queued work still runs) and forgets it once drained.
  void destroy_stream(const std::shared_ptr<Stream>& stream);

  // Pushes an operation on |stream| (one of this context's), adding what the legacy stream
  // implies: on the legacy stream it waits for all blocking streams' work issued so far; on a
  // blocking stream it waits for the legacy stream's. Returns its sequence number.
  uint64_t enqueue(Stream& stream, std::vector<Dependency> dependencies, Work work);
  // Runs |work| on the calling thread, in |stream|'s order, when it would run at once anyway:
  // nothing of |stream| is queued or running, and nothing it must wait for (what enqueue()
  // adds) is pending. Returns false, having done nothing, otherwise. For operations whose caller
  // would wait for them or touch all their data anyway: it saves the worker's hand-off and,
  // for a copy from pageable memory, the staging copy.
  bool run_inline(Stream& stream, const Work& work);

  // Blocks until every operation issued in this context before the call has completed.
  void wait_idle();
  // For synchronising and querying the legacy stream, which is ordered after every blocking
  // stream: waits for / checks the legacy stream's and every blocking stream's work so far.
  void wait_legacy();
  bool legacy_done();

  // --- Statistics (hal_ptx_cpu_get_stats) ---------------------------------------------------
  void add_run(uint64_t lane_instructions, uint64_t warp_instructions);
  uint64_t lane_instructions() const { return lane_instructions_.load(); }
  uint64_t warp_instructions() const { return warp_instructions_.load(); }
  uint64_t kernels() const { return kernels_.load(); }

 private:
  void activate();
  void deactivate();
  std::shared_ptr<Stream> legacy_locked();
  // Drops closed streams that have drained. Called with order_mutex_ held.
  void reap_locked();
  // Appends what enqueue() makes an operation on |stream| wait for. With order_mutex_ held.
  void add_implied_dependencies(Stream& stream, std::vector<Dependency>* dependencies);
  std::vector<std::pair<std::shared_ptr<Stream>, uint64_t>> tails(bool blocking_only);

  const int device_;
  std::atomic<bool> active_{false};
  std::atomic<unsigned> flags_{0};
  std::atomic<CUresult> sticky_{CUDA_SUCCESS};

  mutable std::mutex life_mutex_;  // retain, release, activation
  unsigned retains_ = 0;

  // Streams, and the order of pushes where the legacy stream's synchronisation is concerned.
  std::mutex order_mutex_;
  std::shared_ptr<Stream> legacy_;
  std::map<std::thread::id, std::shared_ptr<Stream>> per_thread_;
  std::vector<std::shared_ptr<Stream>> streams_;  // every stream not yet reaped, legacy too

  std::atomic<uint64_t> lane_instructions_{0};
  std::atomic<uint64_t> warp_instructions_{0};
  std::atomic<uint64_t> kernels_{0};
};

// The stream a handle names, for calls that act on an existing stream (synchronise, query,
// destroy, record, read its properties): NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD name
// the current context's (CUDA_ERROR_INVALID_CONTEXT without one); any other handle must be a
// live stream of any context (CUDA_ERROR_INVALID_HANDLE). Failures are logged.
CUresult find_stream(CUstream handle, std::shared_ptr<Stream>* out);

// The calling thread's context stack (top = current). A context that has been released stays on
// the stacks that hold it; current_context() in entry.h refuses it.
Context* current_thread_context();
// cuCtxSetCurrent: replaces the top (pushes onto an empty stack); nullptr pops.
void set_current_thread_context(Context* context);
void push_thread_context(Context* context);
// Pops the top and returns it (nullptr on an empty stack).
Context* pop_thread_context();

}  // namespace hal::ptx_cpu
