// The timeline trace: HAL_TRACE=<file> writes a Chrome trace-event file (JSON array format; it
// opens in Perfetto and chrome://tracing) with
//  - every public call that goes through guarded(): one complete span per call on the calling
//    thread's row, with its status when it failed ("api" category);
//  - per stream, the device-side spans of kernels, copies and fills from the device's own
//    timestamps, converted to the host clock ("kernel", "copy", "fill" categories), with the
//    kernel's name, grid, block and shared bytes, or the byte count.
//
// The switch is read once, when the library is loaded: setting HAL_TRACE later has no effect. When
// it is off every public call pays one predictable branch (on()), nothing else; backends test
// on() before they describe an operation. A "%p" in the file name is replaced by the process id,
// so several processes can trace at once. The file is written as events happen (buffered) and
// closed at process exit; a file that cannot be opened is reported once in the log and tracing
// stays off.
//
// Device spans reach the file when the host observes their completion (stream or device
// synchronisation, queries, event waits that retire the work, stream destruction): work a
// program never waits for is not in the trace.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <hal/hal.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace hal::trace {

namespace detail {
// Set when the library loads, cleared when the file is closed at exit. Atomic only so that
// clearing it at exit is not a data race; a relaxed load is a plain load.
extern std::atomic<bool> g_on;
}  // namespace detail

inline bool on() {
  return detail::g_on.load(std::memory_order_relaxed);
}

// The host clock of the trace (steady, nanoseconds). Backends convert device timestamps to it.
uint64_t now_ns();

// One public call: |call| is its name (static storage), [begin_ns, end_ns] on the host clock.
void api_call(const char* call, uint64_t begin_ns, uint64_t end_ns, hal_status status) noexcept;

// One device-side operation, described when it is issued.
struct Op {
  enum class Kind { kKernel, kCopyHostToDevice, kCopyDeviceToHost, kCopyDeviceToDevice, kFill };
  Kind kind = Kind::kKernel;
  std::string kernel;  // kKernel: the entry point's name
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t shared_bytes = 0;
  uint64_t bytes = 0;  // copies and fills
  // True when the runtime did the work on the host instead (a copy into or out of memory the
  // host can map while the stream is idle): the span is then timed by the host clock.
  bool on_host = false;

  static Op kernel_launch(const std::string& name, const uint32_t grid[3], const uint32_t block[3],
                          uint32_t shared_bytes) {
    Op op;
    op.kind = Kind::kKernel;
    op.kernel = name;
    for (int i = 0; i < 3; ++i) {
      op.grid[i] = grid[i];
      op.block[i] = block[i];
    }
    op.shared_bytes = shared_bytes;
    return op;
  }
  static Op transfer(Kind kind, uint64_t bytes) {
    Op op;
    op.kind = kind;
    op.bytes = bytes;
    return op;
  }
};

// A row for one stream on its device's timeline. Returns the row id to pass to device_span();
// the row is named after the device (|device|'s global index, name and backend) and a per-device
// stream number.
uint32_t stream_row(const hal_device_info& device);

// One completed operation on a stream's row, [begin_ns, end_ns] on the host clock (now_ns()).
void device_span(const hal_device_info& device, uint32_t row, const Op& op, uint64_t begin_ns,
                 uint64_t end_ns) noexcept;

// Finishes the file now (what process exit does): later events are dropped. For tests.
void close_for_testing();

}  // namespace hal::trace
