#include "common/trace.h"

#include "common/error.h"
#include "common/log.h"
#include "common/objects.h"
#include "common/registry.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>

namespace hal::trace {

namespace detail {
std::atomic<bool> g_on{false};
}  // namespace detail

namespace {

// Rows of the timeline ("pid" in the file): the host, then one per device.
constexpr uint32_t kHostProcess = 1;
constexpr uint32_t kFirstDeviceProcess = 2;

// The name of the backend that owns |device| ("vulkan", "cuda", or a test double's name).
std::string backend_label(const hal_device_info& device) {
  for (const auto& entry : registry().backends) {
    for (const auto& object : entry->devices) {
      if (object->info.global_index == device.global_index) return entry->name;
    }
  }
  return "unknown";
}
const char* category(Op::Kind kind) {
  switch (kind) {
    case Op::Kind::kKernel:
      return "kernel";
    case Op::Kind::kFill:
      return "fill";
    default:
      return "copy";
  }
}

const char* op_name(Op::Kind kind) {
  switch (kind) {
    case Op::Kind::kCopyHostToDevice:
      return "copy host to device";
    case Op::Kind::kCopyDeviceToHost:
      return "copy device to host";
    case Op::Kind::kCopyDeviceToDevice:
      return "copy device to device";
    case Op::Kind::kFill:
      return "fill";
    default:
      return "kernel";
  }
}

// A JSON string literal of |text| (kernel and device names come from user blobs and drivers).
std::string quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      out += fmt::format("\\u{:04x}", byte);
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

// The file. Intentionally leaked: device spans may still arrive while statics are destroyed at
// exit; the atexit handler closes the file, and events after that are dropped.
class Writer {
 public:
  bool open(const std::string& path) {
    file_ = std::fopen(path.c_str(), "w");
    if (file_ == nullptr) return false;
    origin_ns_ = now_ns();
    std::fputs("[\n", file_);
    write_locked(fmt::format(
        R"j({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"host (process {})"}}}})j",
        kHostProcess, static_cast<long>(getpid())));
    write_locked(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,)"
                             R"("args":{{"sort_index":0}}}})",
                             kHostProcess));
    return true;
  }

  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (file_ == nullptr) return;
    std::fputs("\n]\n", file_);
    std::fclose(file_);
    file_ = nullptr;
  }

  void write(const std::string& event) {
    std::lock_guard<std::mutex> lock(mutex_);
    write_locked(event);
  }

  // Microseconds since the trace began, as the file wants them.
  double micros(uint64_t ns) const {
    return ns >= origin_ns_ ? static_cast<double>(ns - origin_ns_) / 1000.0 : 0.0;
  }

  // The timeline row of the calling thread, announced (named) on first use.
  uint32_t host_thread_row() {
    thread_local uint32_t row = 0;
    if (row == 0) {
      row = next_thread_row_.fetch_add(1) + 1;
      write(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},)"
                        R"("args":{{"name":"thread {}"}}}})",
                        kHostProcess, row, row));
    }
    return row;
  }

  uint32_t new_stream_row(const hal_device_info& device) {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint32_t pid = kFirstDeviceProcess + device.global_index;
    if (announced_devices_.insert(device.global_index).second) {
      write_locked(fmt::format(
          R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", pid,
          quoted(fmt::format("device {}: {} ({}:{})", device.global_index, device.name,
                             backend_label(device), device.backend_index))));
      write_locked(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,)"
                               R"("args":{{"sort_index":{}}}}})",
                               pid, pid));
    }
    const uint32_t row = ++streams_per_device_[device.global_index];
    write_locked(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},)"
                             R"("args":{{"name":"stream {}"}}}})",
                             pid, row, row));
    return row;
  }

 private:
  void write_locked(const std::string& event) {
    if (file_ == nullptr) return;
    if (!first_) std::fputs(",\n", file_);
    first_ = false;
    std::fwrite(event.data(), 1, event.size(), file_);
  }

  std::mutex mutex_;
  std::FILE* file_ = nullptr;
  bool first_ = true;
  uint64_t origin_ns_ = 0;
  std::atomic<uint32_t> next_thread_row_{0};
  std::set<uint32_t> announced_devices_;
  std::unordered_map<uint32_t, uint32_t> streams_per_device_;
};

Writer& writer() {
  static Writer* instance = new Writer();
  return *instance;
}

std::string expand_path(std::string_view pattern) {
  std::string path;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      path += std::to_string(static_cast<long>(getpid()));
      ++i;
    } else {
      path += pattern[i];
    }
  }
  return path;
}

void close_at_exit() {
  detail::g_on = false;
  writer().close();
}

// Reads HAL_TRACE when the library is loaded.
struct StartFromEnvironment {
  StartFromEnvironment() {
    const char* value = std::getenv("HAL_TRACE");
    if (value == nullptr || *value == '\0') return;
    const std::string path = expand_path(value);
    if (!writer().open(path)) {
      log()->warn("HAL_TRACE: cannot write the trace to '{}' ({}); tracing is off", path,
                  std::strerror(errno));
      return;
    }
    std::atexit(close_at_exit);
    detail::g_on = true;
    log()->info("HAL_TRACE: writing the timeline to '{}'", path);
  }
};
const StartFromEnvironment start_from_environment;

void write_api_call(const char* call, uint64_t begin_ns, uint64_t end_ns, hal_status status) {
  Writer& w = writer();
  const uint32_t row = w.host_thread_row();
  std::string event = fmt::format(
      R"({{"ph":"X","cat":"api","name":"{}","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f})", call,
      kHostProcess, row, w.micros(begin_ns), (end_ns - begin_ns) / 1000.0);
  if (status != HAL_SUCCESS)
    event += fmt::format(R"(,"args":{{"status":"{}"}})", status_name(status));
  event += '}';
  w.write(event);
}

void write_device_span(const hal_device_info& device, uint32_t row, const Op& op, uint64_t begin_ns,
                       uint64_t end_ns) {
  Writer& w = writer();
  const double begin = w.micros(begin_ns);
  const double duration = end_ns > begin_ns ? (end_ns - begin_ns) / 1000.0 : 0.0;
  std::string args;
  if (op.kind == Op::Kind::kKernel) {
    args =
        fmt::format(R"("grid":[{},{},{}],"block":[{},{},{}],"shared_bytes":{})", op.grid[0],
                    op.grid[1], op.grid[2], op.block[0], op.block[1], op.block[2], op.shared_bytes);
  } else {
    args = fmt::format(R"("bytes":{})", op.bytes);
  }
  if (op.on_host) args += R"(,"on_host":true)";
  w.write(fmt::format(
      R"({{"ph":"X","cat":"{}","name":{},"pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},"args":{{{}}}}})",
      category(op.kind), quoted(op.kind == Op::Kind::kKernel ? op.kernel : op_name(op.kind)),
      kFirstDeviceProcess + device.global_index, row, begin, duration, args));
}

}  // namespace

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void api_call(const char* call, uint64_t begin_ns, uint64_t end_ns, hal_status status) noexcept {
  try {
    write_api_call(call, begin_ns, end_ns, status);
  } catch (...) {
    // Host memory ran out while formatting: the span is lost, the call's result is not.
  }
}

void device_span(const hal_device_info& device, uint32_t row, const Op& op, uint64_t begin_ns,
                 uint64_t end_ns) noexcept {
  try {
    write_device_span(device, row, op, begin_ns, end_ns);
  } catch (...) {
    // As above: only the span is lost.
  }
}

uint32_t stream_row(const hal_device_info& device) {
  return writer().new_stream_row(device);
}

void close_for_testing() {
  close_at_exit();
}

}  // namespace hal::trace
