// A test double of a hal backend, for testing the runtime layer (src/common) without any device.
//
// DoubleBackend implements hal::Backend and the other backend classes entirely in host memory.
// It is not a device and makes no claim to behave like one beyond the backend interface:
//  - mem_alloc hands out fake, 256-byte aligned addresses (distinct per device, never reused),
//    each backed by a host buffer; copies and fills really move bytes, so tests can check them;
//  - streams run every command at once; events record the value of a per-device counter that
//    every stream command advances, and elapsed_ms is the difference of two such values;
//  - "modules" are whatever blob the runtime accepts (the double takes SPIR-V and PTX on its
//    GPU-like device, SPIR-V only on its CPU-like one); the functions a blob exposes are declared
//    by the test with declare_module() in a tiny text format;
//  - launches do not run anything: the double records the LaunchParams it received, with the
//    bytes of every argument, so tests check exactly what reaches a backend;
//  - a test can make the next backend call on a device fail with a chosen status, make queries
//    answer NOT_READY, and count the backend calls a device received.
// The double also checks what the runtime promises backends (ranges inside allocations, the
// allocation's backend_data handed back, no concurrent calls on one stream, events recorded
// before they are waited on) and answers HAL_ERROR_INTERNAL when a promise is broken.
#pragma once

#include "common/backend.h"
#include "common/driver_export.h"
#include "common/registry.h"

#include <hal/hal.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace hal_test {

// One launch as the double received it.
struct RecordedLaunch {
  std::string function;
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t shared_bytes = 0;
  // The bytes of every argument, as many as the function's parameter says (empty when the
  // parameter list is unknown).
  std::vector<std::vector<uint8_t>> args;
  // LaunchParams::pointers as received (one entry per parameter; value parameters empty).
  std::vector<hal::DeviceRange> pointers;
};

// One module load as the double received it.
struct RecordedModuleLoad {
  hal_ir ir = HAL_IR_AUTO;
  std::vector<uint8_t> blob;
  hal::ModuleOptions options;
};

// The GPU-like or CPU-like device of the double.
class DoubleDevice : public hal::Device {
 public:
  DoubleDevice(const std::string& name, bool is_cpu);
  ~DoubleDevice() override;

  // hal::Device
  hal_status mem_alloc(size_t size, hal::Allocation* out) override;
  hal_status mem_free(const hal::Allocation& alloc) override;
  hal_status host_alloc(size_t size, hal::HostAllocation* out) override;
  hal_status host_free(const hal::HostAllocation& allocation) override;
  // The CPU-like device's memory is host memory: its bytes. The GPU-like device has none.
  hal_status host_pointer(const hal::Allocation& alloc, uint64_t offset, void** out) override;
  hal_status create_stream(std::unique_ptr<hal::Stream>* out) override;
  hal_status create_event(std::unique_ptr<hal::Event>* out) override;
  hal_status load_module(hal_ir ir, const uint8_t* blob, size_t size,
                         const hal::ModuleOptions& options,
                         std::unique_ptr<hal::Module>* out) override;
  hal_status synchronize() override;

  // ---- Controls and observations for tests ----

  // The next backend call on this device (device, stream or event method) fails with |status|
  // and |message| instead of doing its work.
  void fail_next(hal_status status, std::string message = "failure injected by the test double");
  // As fail_next, and the call also reports the device lost through the core's host
  // (Device::report_lost), as a driver does whose fault leaves the device unusable while the
  // call itself reports another status (HAL_ERROR_LAUNCH_FAILED, say).
  void fail_next_and_lose(hal_status status, std::string message);
  // While set, Stream::query and Event::query answer HAL_ERROR_NOT_READY.
  void set_pending(bool pending) { pending_.store(pending); }
  // Every stream call (copy, fill, launch, ...) sleeps this long before touching memory, to
  // widen races between streams and device calls in concurrency tests.
  void set_stream_call_delay(std::chrono::microseconds delay) { delay_us_.store(delay.count()); }
  void stream_call_delay() const {
    if (const int64_t us = delay_us_.load(); us > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    }
  }
  // Backend calls received so far by this device and its streams and events.
  uint64_t calls() const { return calls_.load(); }
  // Times two calls on one Stream object overlapped (the runtime promises this never happens).
  uint64_t overlapping_stream_calls() const { return overlaps_.load(); }
  std::vector<RecordedLaunch> launches() const;
  std::optional<RecordedModuleLoad> last_module_load() const;
  size_t live_buffers() const;
  size_t live_host_buffers() const;
  // The host allocation the core gave the last copy between host and device memory (nullopt:
  // it gave none, as for ordinary host memory).
  std::optional<hal::HostAllocation> last_copy_host() const;
  // The bytes behind the live allocation at |base| (empty if there is none).
  std::vector<uint8_t> buffer_bytes(hal_deviceptr base, size_t size) const;

  // ---- Used by the double's streams and events ----

  // Counts a backend call; returns the injected failure if one is pending.
  hal_status enter(const char* what);
  bool pending() const { return pending_.load(); }
  uint64_t next_tick() { return ++ticks_; }
  uint64_t current_tick() const { return ticks_.load(); }
  void note_overlap() { ++overlaps_; }
  // The host bytes behind |range| for |size| bytes, after checking the runtime's promises.
  hal_status bytes_of(const hal::DeviceRange& range, size_t size, uint8_t** out);
  void record_launch(RecordedLaunch launch);
  // Checks that |host|, given with a copy of [pointer, pointer + size), is a live host_alloc
  // allocation of this device holding that range, and records it for last_copy_host().
  hal_status note_copy_host(const void* pointer, size_t size, const hal::HostAllocation* host);
  std::mutex& data_mutex() { return data_mutex_; }

 private:
  struct Buffer {
    std::vector<uint8_t> bytes;
    uint64_t token = 0;
  };

  mutable std::mutex mutex_;  // guards the fields below except the atomics and buffers_' bytes
  std::mutex data_mutex_;     // held while bytes move, so concurrent copies never race
  std::map<hal_deviceptr, Buffer> buffers_;
  std::map<void*, uint64_t> host_buffers_;  // base -> the driver_data given for it
  std::optional<hal::HostAllocation> last_copy_host_;
  hal_deviceptr next_address_ = 0;
  uint64_t next_token_ = 0;
  std::atomic<int64_t> delay_us_{0};
  struct Injected {
    hal_status status;
    std::string message;
    bool lose;
  };
  std::optional<Injected> injected_;
  std::vector<RecordedLaunch> launches_;
  std::optional<RecordedModuleLoad> last_load_;
  std::atomic<uint64_t> calls_{0};
  std::atomic<uint64_t> overlaps_{0};
  std::atomic<uint64_t> ticks_{0};
  std::atomic<bool> pending_{false};
};

// The backend: two devices in its own order, a CPU-like one first (backend index 0) and a
// GPU-like one second, so the runtime's "GPUs first" ordering is visible.
class DoubleBackend : public hal::Backend {
 public:
  // |prefix| names the devices ("Double" gives "Double CPU (test double)" and "Double GPU ...").
  // A non-empty |unavailable_reason| makes init fail with HAL_ERROR_UNAVAILABLE and that reason.
  explicit DoubleBackend(std::string prefix, std::string unavailable_reason = "");
  hal_status init(std::vector<std::unique_ptr<hal::Device>>* devices) override;

 private:
  std::string prefix_;
  std::string unavailable_reason_;
};

// In-process drivers for hal::set_drivers_for_testing:
//   "double"  DoubleBackend with devices "Double CPU (test double)", "Double GPU (test double)";
//   "twin"    the same with "Twin ..." names, for tests of backend order;
//   "broken"  a backend whose init fails with HAL_ERROR_UNAVAILABLE (kBrokenReason).
hal::InProcessDriver double_factory();
hal::InProcessDriver twin_factory();
hal::InProcessDriver broken_factory();
inline constexpr const char* kBrokenReason =
    "the test double's 'broken' backend never loads (it stands for a missing vendor library)";

// Declares the functions of a module blob. Every later load of a blob with exactly these bytes
// gets functions described by |spec|; any other blob loads with no functions at all.
//
// |spec| lists functions separated by ';', each "name(param, ...) option ...":
//   params   ptr (a device pointer at the device's pointer_alignment), ptrN (one that needs N-byte
//            alignment), u8 i8 u16 i16 u32 i32 f32 u64 i64 f64 (values), bytesN
//            (an N-byte value, alignment 1), or a lone ? when the parameter list is unknown;
//   options  block=X,Y,Z (a fixed block size), shared=N (static shared bytes), maxthreads=N,
//            nodynamic (dynamic shared memory cannot be sized at launch), sharedrequired
//            (shared_bytes must not be 0).
// Example: "vadd(ptr, ptr, ptr, u32) block=64,1,1; fill(ptr, f32) nodynamic".
// Throws std::invalid_argument on malformed text.
void declare_module(const std::vector<uint8_t>& blob, const std::string& spec);
std::vector<hal::FunctionDesc> parse_function_specs(const std::string& spec);

// The double's device behind a public handle, or nullptr when the handle is not one.
DoubleDevice* double_device(hal_device device);

// A well-formed SPIR-V header (five little-endian words) followed by |tag|, so distinct tags
// give distinct blobs.
std::vector<uint8_t> spirv_blob(uint32_t tag);

}  // namespace hal_test
