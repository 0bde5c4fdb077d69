// A stream: an in-order queue of operations (copies, memsets, kernels, event records, waits,
// host functions) that a worker thread of its own executes while the host goes on. An operation
// that would run at once, and that its caller waits for anyway, the caller may run itself
// (begin_inline), holding the worker off meanwhile.
//
// Every operation gets a sequence number (1, 2, ...) when it is pushed; the stream has
// completed n when its first n operations have run. Ordering between streams is expressed by
// dependencies: an operation waits, before it runs, until other streams have completed given
// numbers. Event records and cuStreamWaitEvent are built from that (event.h), and so is the
// legacy NULL stream's implicit synchronisation (Context::enqueue). A dependency only ever
// names an operation pushed earlier, so waits cannot form a cycle.
//
// Ownership: streams are shared (std::shared_ptr) by their context, the handle table, and the
// operations of other streams that depend on them. Thread-safety: every member may be called
// from any thread.
#pragma once

#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace hal::ptx_cpu {

class Context;
class Stream;

// What an operation does. |status| is CUDA_SUCCESS, or the context's sticky error when an
// earlier kernel of the context faulted: a copy, memset, kernel or host function must then do
// nothing (CUDA runs no more work in a faulted context); an event record still completes (so
// that nothing waits forever); a stream callback receives the error.
using Work = std::function<void(CUresult status)>;

struct Dependency {
  std::shared_ptr<Stream> stream;
  uint64_t sequence = 0;  // wait until |stream| has completed this many operations
};

class Stream {
 public:
  enum class Kind {
    kLegacy,     // the NULL stream (CU_STREAM_LEGACY): synchronises with blocking streams
    kPerThread,  // CU_STREAM_PER_THREAD: one per host thread, blocking
    kCreated,    // cuStreamCreate(WithPriority)
  };

  Stream(Context& context, Kind kind, unsigned flags, int priority);
  // Waits for the queued work and the worker thread.
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Context& context() const { return context_; }
  Kind kind() const { return kind_; }
  unsigned flags() const { return flags_; }
  int priority() const { return priority_; }
  // Whether the legacy stream synchronises with it (CUDA's "blocking stream").
  bool blocking() const {
    return kind_ != Kind::kCreated || (flags_ & CU_STREAM_NON_BLOCKING) == 0;
  }

  // Appends an operation that runs after |dependencies| and everything pushed before; returns
  // its sequence number. Use Context::enqueue, which adds the legacy stream's dependencies. On a
  // closed stream the operation is dropped and counted as completed at once.
  uint64_t push(std::vector<Dependency> dependencies, Work work);

  // The caller runs the operation itself, when nothing of the stream is queued or running: it
  // takes the next sequence number and holds the worker off until finish_inline(). Returns that
  // number, or 0 (the stream is busy or closing: push() instead). Use Context::run_inline.
  uint64_t begin_inline();
  // Completes the operation begin_inline() numbered, and lets the worker go on.
  void finish_inline();

  uint64_t submitted() const;
  bool completed(uint64_t sequence) const;
  // Blocks until operation |sequence| has completed (at once for 0).
  void wait(uint64_t sequence) const;

  // No more operations are accepted; the worker finishes the queued ones and exits.
  void close();
  bool closed() const;
  // Whether the worker has exited (or never started) after close(); join() is then immediate.
  bool finished() const;
  // Waits for the worker thread to exit; call after close(). Returns at once when called on the
  // worker itself.
  void join();

 private:
  struct Operation {
    std::vector<Dependency> dependencies;
    Work work;
  };
  void run();

  Context& context_;
  const Kind kind_;
  const unsigned flags_;
  const int priority_;

  mutable std::mutex mutex_;
  mutable std::condition_variable work_cv_;  // the worker waits for operations
  mutable std::condition_variable done_cv_;  // waiters wait for completions
  std::deque<Operation> queue_;
  // Written under |mutex_| (so that the condition variables see every change), and atomic so
  // that the worker and waiters can spin on them without it (see spin_until in stream.cpp).
  std::atomic<uint64_t> submitted_{0};
  std::atomic<uint64_t> completed_{0};
  std::atomic<bool> closing_{false};
  // The worker thread is detached: a stream that is destroyed while busy drains on its own, and
  // no later call may come to join its thread (a program may exit right after). Its last act is
  // to clear |worker_running_| under the mutex, which join() waits for.
  bool worker_running_ = false;
  std::thread::id worker_id_;
  // A caller is running an operation itself (begin_inline): the worker starts nothing until it
  // is done, so the operations pushed meanwhile still run after it.
  bool inline_running_ = false;
};

}  // namespace hal::ptx_cpu
