#include "ptx_cpu/stream.h"

#include "ptx_cpu/context.h"

#include <chrono>
#include <exception>
#include <string>
#include <utility>

namespace hal::ptx_cpu {
namespace {

// How long the worker and the waiters spin before they block on a condition variable. Waking a
// blocked thread goes through the kernel's scheduler, and on a virtual machine whose other
// cores are idle it takes a halted virtual CPU tens of microseconds to resume, twice per
// operation (the worker's wake-up, then the waiter's). Short copies, launches and synchronizes
// come back-to-back, so a spin of this length turns most of those wake-ups into a few loads;
// beyond it the thread blocks, and an idle stream costs nothing. The spin yields rather than
// pauses: the threads of a launch (the caller, the stream worker, the executor's workers) are
// often more than the cores, and a spinner must not keep the one that has work off its core.
constexpr std::chrono::microseconds kSpin{100};

// Spins until |ready| holds or kSpin has passed; returns whether it holds.
template <typename Ready>
bool spin_until(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (uint32_t i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 7) == 7 && std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::yield();
  }
}

}  // namespace

Stream::Stream(Context& context, Kind kind, unsigned flags, int priority)
    : context_(context), kind_(kind), flags_(flags), priority_(priority) {}

Stream::~Stream() {
  close();
  join();
}

uint64_t Stream::push(std::vector<Dependency> dependencies, Work work) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t sequence = ++submitted_;
  if (closing_) {
    // Only a program that releases a context while using it gets here; never leave a waiter.
    completed_.store(sequence);
    done_cv_.notify_all();
    return sequence;
  }
  queue_.push_back(Operation{std::move(dependencies), std::move(work)});
  if (!worker_running_) {  // not started yet: once it exits, the stream is closing
    worker_running_ = true;
    std::thread worker([this] { run(); });
    worker_id_ = worker.get_id();
    worker.detach();
  }
  work_cv_.notify_one();
  return sequence;
}

uint64_t Stream::begin_inline() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closing_ || inline_running_ || completed_ != submitted_) return 0;
  inline_running_ = true;
  return ++submitted_;
}

void Stream::finish_inline() {
  std::lock_guard<std::mutex> lock(mutex_);
  inline_running_ = false;
  ++completed_;
  done_cv_.notify_all();
  work_cv_.notify_one();
}

uint64_t Stream::submitted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return submitted_;
}

bool Stream::completed(uint64_t sequence) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_ >= sequence;
}

void Stream::wait(uint64_t sequence) const {
  if (spin_until([&] { return completed_.load(std::memory_order_acquire) >= sequence; })) return;
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return completed_ >= sequence; });
}

void Stream::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closing_ = true;
  work_cv_.notify_all();
}

bool Stream::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closing_;
}

bool Stream::finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closing_ && !worker_running_;
}

void Stream::join() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (worker_id_ == std::this_thread::get_id()) return;
  done_cv_.wait(lock, [&] { return !worker_running_; });
}

void Stream::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (queue_.empty() && !closing_) {
      // Operations pushed so far: all taken. Spin for the next one before blocking.
      const uint64_t taken = submitted_.load(std::memory_order_relaxed);
      lock.unlock();
      spin_until([&] {
        return submitted_.load(std::memory_order_acquire) != taken ||
               closing_.load(std::memory_order_acquire);
      });
      lock.lock();
    }
    work_cv_.wait(lock, [&] { return (!queue_.empty() || closing_) && !inline_running_; });
    if (queue_.empty()) break;  // closing, and everything queued has run
    Operation operation = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    for (const Dependency& dependency : operation.dependencies) {
      dependency.stream->wait(dependency.sequence);
    }
    try {
      operation.work(context_.sticky_error());
    } catch (const std::exception& error) {
      context_.record_fault(CUDA_ERROR_LAUNCH_FAILED,
                            std::string("an operation failed inside the driver: ") + error.what());
    } catch (...) {
      context_.record_fault(CUDA_ERROR_LAUNCH_FAILED, "an operation failed inside the driver");
    }
    // Released before the completion is published: what the work captured (staging buffers,
    // programs, snapshots) is gone by the time a waiter returns.
    operation = Operation{};
    lock.lock();
    ++completed_;
    done_cv_.notify_all();
  }
  // The worker's last access to the stream: join() returns once it sees this, after the lock
  // is released.
  worker_running_ = false;
  done_cv_.notify_all();
}

}  // namespace hal::ptx_cpu
