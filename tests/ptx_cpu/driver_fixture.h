// What the driver's tests share: a fixture with device 0's primary context current, and a gate
// that holds a stream's worker inside a host function until the test opens it, to observe
// work that is still pending.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "driver_api.h"

namespace ptx_cpu_test {

// Initialises the driver and retains device 0's primary context once per process.
inline CUcontext primary_context() {
  static CUcontext context = [] {
    CUcontext made = nullptr;
    EXPECT_EQ(api().cuInit(0), CUDA_SUCCESS);
    EXPECT_EQ(api().cuDevicePrimaryCtxRetain(&made, 0), CUDA_SUCCESS);
    return made;
  }();
  return context;
}

class DriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(api().get_proc, nullptr);
    ASSERT_NE(primary_context(), nullptr);
    ASSERT_OK(cu().cuCtxSetCurrent(primary_context()));
  }
  const Api& cu() const { return api(); }

  // The driver log written since the fixture (or the last call) looked.
  std::string new_logs() { return cu().logs_since(&log_iterator_); }
  void skip_logs() { cu().cuLogsCurrent(&log_iterator_, 0); }

 private:
  CUlogIterator log_iterator_ = 0;
};

// Holds every host function that waits on it until open(). Destruction opens it and waits for
// the current context's work, so that a failing test never leaves a worker stuck or a host
// function pointing at a dead gate.
class Gate {
 public:
  ~Gate() {
    open();
    api().cuCtxSynchronize();
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return waiting_ == 0; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  // For cuLaunchHostFunc: blocks until the gate opens.
  static void CUDA_CB wait(void* gate) {
    auto* self = static_cast<Gate*>(gate);
    std::unique_lock<std::mutex> lock(self->mutex_);
    ++self->waiting_;
    self->cv_.wait(lock, [&] { return self->open_; });
    --self->waiting_;
    self->cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
  int waiting_ = 0;
};

// A flag a host function raises, and the host waits for with a timeout.
class Flag {
 public:
  static void CUDA_CB raise(void* flag) {
    auto* self = static_cast<Flag*>(flag);
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->raised_ = true;
    self->cv_.notify_all();
  }
  bool wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return raised_; });
  }
  bool raised() {
    std::lock_guard<std::mutex> lock(mutex_);
    return raised_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool raised_ = false;
};

}  // namespace ptx_cpu_test
