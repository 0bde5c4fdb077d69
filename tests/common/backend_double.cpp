// The test double of a hal backend (see backend_double.h): host memory only, for testing the
// runtime layer.
#include "backend_double.h"

#include "common/api_guard.h"
#include "common/error.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace hal_test {
namespace {

constexpr uint64_t kAlignment = 256;

uint64_t round_up(uint64_t value, uint64_t to) {
  return (value + to - 1) / to * to;
}

// Each device gets its own address window, so a pointer names exactly one device.
std::atomic<uint64_t> g_device_serial{0};

// Declared module blobs and their function specs, by the blob's bytes held as a string (the
// vector's own ordering trips GCC 12's -Wstringop-overread at -O3).
std::mutex g_modules_mutex;
std::map<std::string, std::vector<hal::FunctionDesc>>& declared_modules() {
  static auto* modules = new std::map<std::string, std::vector<hal::FunctionDesc>>();
  return *modules;
}

std::string blob_key(const uint8_t* blob, size_t size) {
  return std::string(reinterpret_cast<const char*>(blob), size);
}

std::string trim(const std::string& s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(s[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  return s.substr(begin, end - begin);
}

std::vector<std::string> split(const std::string& s, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(separator, start);
    parts.push_back(
        trim(s.substr(start, at == std::string::npos ? std::string::npos : at - start)));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return parts;
}

uint32_t parse_number(const std::string& text, const std::string& context) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    throw std::invalid_argument("test double spec: '" + text + "' is not a number in '" + context +
                                "'");
  }
  return static_cast<uint32_t>(std::stoul(text));
}

hal::ParamInfo parse_param(const std::string& type, const std::string& context) {
  struct Named {
    const char* name;
    uint32_t size;
  };
  static constexpr Named kValues[] = {{"u8", 1},  {"i8", 1},  {"u16", 2}, {"i16", 2}, {"u32", 4},
                                      {"i32", 4}, {"f32", 4}, {"u64", 8}, {"i64", 8}, {"f64", 8}};
  hal::ParamInfo param;
  if (type.rfind("ptr", 0) == 0) {
    // "ptr": the device's pointer_alignment applies (set at load); "ptrN": N bytes.
    param.kind = HAL_PARAM_POINTER;
    param.size = 8;
    param.alignment = type.size() > 3 ? parse_number(type.substr(3), context) : 0;
    return param;
  }
  for (const Named& v : kValues) {
    if (type == v.name) {
      param.kind = HAL_PARAM_VALUE;
      param.size = v.size;
      param.alignment = v.size;
      param.type = v.name[0] == 'f' ? HAL_PARAM_TYPE_FLOAT : HAL_PARAM_TYPE_INTEGER;
      return param;
    }
  }
  if (type.rfind("bytes", 0) == 0) {
    param.kind = HAL_PARAM_VALUE;
    param.size = parse_number(type.substr(5), context);
    param.alignment = 1;
    return param;
  }
  throw std::invalid_argument("test double spec: unknown parameter type '" + type + "' in '" +
                              context + "'");
}

class DoubleFunction : public hal::Function {};

class DoubleModule : public hal::Module {};

class DoubleEvent : public hal::Event {
 public:
  explicit DoubleEvent(DoubleDevice& device) : device_(device) {}

  hal_status synchronize() override {
    HAL_RETURN_IF_ERROR(device_.enter("Event::synchronize"));
    if (!recorded.load()) {
      return hal::fail(HAL_ERROR_INTERNAL, "test double: synchronize on an unrecorded event");
    }
    return HAL_SUCCESS;
  }

  hal_status query() override {
    HAL_RETURN_IF_ERROR(device_.enter("Event::query"));
    if (!recorded.load()) {
      return hal::fail(HAL_ERROR_INTERNAL, "test double: query on an unrecorded event");
    }
    return device_.pending() ? HAL_ERROR_NOT_READY : HAL_SUCCESS;
  }

  hal_status elapsed_ms(hal::Event& end, float* ms) override {
    HAL_RETURN_IF_ERROR(device_.enter("Event::elapsed_ms"));
    auto* other = dynamic_cast<DoubleEvent*>(&end);
    if (other == nullptr || &other->device_ != &device_ || !recorded.load() ||
        !other->recorded.load()) {
      return hal::fail(HAL_ERROR_INTERNAL,
                       "test double: elapsed_ms on events of another device or unrecorded");
    }
    if (device_.pending()) return HAL_ERROR_NOT_READY;
    *ms = static_cast<float>(static_cast<int64_t>(other->tick.load() - tick.load()));
    return HAL_SUCCESS;
  }

  DoubleDevice& device() { return device_; }

  std::atomic<bool> recorded{false};
  std::atomic<uint64_t> tick{0};

 private:
  DoubleDevice& device_;
};

class DoubleStream : public hal::Stream {
 public:
  explicit DoubleStream(DoubleDevice& device) : device_(device) {}

  hal_status copy_htod(const hal::DeviceRange& dst, const void* src, size_t size,
                       const hal::HostAllocation* host) override {
    Call call(*this, "Stream::copy_htod");
    HAL_RETURN_IF_ERROR(call.status);
    HAL_RETURN_IF_ERROR(device_.note_copy_host(src, size, host));
    std::lock_guard lock(device_.data_mutex());
    uint8_t* to = nullptr;
    HAL_RETURN_IF_ERROR(device_.bytes_of(dst, size, &to));
    std::memcpy(to, src, size);
    return HAL_SUCCESS;
  }

  hal_status copy_dtoh(void* dst, const hal::DeviceRange& src, size_t size,
                       const hal::HostAllocation* host) override {
    Call call(*this, "Stream::copy_dtoh");
    HAL_RETURN_IF_ERROR(call.status);
    HAL_RETURN_IF_ERROR(device_.note_copy_host(dst, size, host));
    std::lock_guard lock(device_.data_mutex());
    uint8_t* from = nullptr;
    HAL_RETURN_IF_ERROR(device_.bytes_of(src, size, &from));
    std::memcpy(dst, from, size);
    return HAL_SUCCESS;
  }

  hal_status copy_dtod(const hal::DeviceRange& dst, const hal::DeviceRange& src,
                       size_t size) override {
    Call call(*this, "Stream::copy_dtod");
    HAL_RETURN_IF_ERROR(call.status);
    std::lock_guard lock(device_.data_mutex());
    uint8_t* to = nullptr;
    uint8_t* from = nullptr;
    HAL_RETURN_IF_ERROR(device_.bytes_of(dst, size, &to));
    HAL_RETURN_IF_ERROR(device_.bytes_of(src, size, &from));
    std::memmove(to, from, size);
    return HAL_SUCCESS;
  }

  hal_status fill(const hal::DeviceRange& dst, uint32_t pattern, uint32_t pattern_size,
                  size_t bytes) override {
    Call call(*this, "Stream::fill");
    HAL_RETURN_IF_ERROR(call.status);
    if ((pattern_size != 1 && pattern_size != 4) || bytes % pattern_size != 0 ||
        (pattern_size == 4 && dst.address() % 4 != 0)) {
      return hal::failf(HAL_ERROR_INTERNAL, "test double: fill of {} bytes with a {}-byte pattern",
                        bytes, pattern_size);
    }
    std::lock_guard lock(device_.data_mutex());
    uint8_t* to = nullptr;
    HAL_RETURN_IF_ERROR(device_.bytes_of(dst, bytes, &to));
    for (size_t i = 0; i < bytes; i += pattern_size) std::memcpy(to + i, &pattern, pattern_size);
    return HAL_SUCCESS;
  }

  hal_status launch(hal::Function& function, const hal::LaunchParams& params) override {
    Call call(*this, "Stream::launch");
    HAL_RETURN_IF_ERROR(call.status);
    RecordedLaunch launch;
    launch.function = function.desc.name;
    for (int i = 0; i < 3; ++i) {
      launch.grid[i] = params.grid[i];
      launch.block[i] = params.block[i];
    }
    launch.shared_bytes = params.shared_bytes;
    for (size_t i = 0; i < params.param_count; ++i) {
      launch.pointers.push_back(hal::launch_range(params, i));
    }
    if (function.desc.params_known) {
      for (size_t i = 0; i < function.desc.params.size(); ++i) {
        const auto* bytes = static_cast<const uint8_t*>(params.args[i]);
        launch.args.emplace_back(bytes, bytes + function.desc.params[i].size);
      }
    }
    device_.record_launch(std::move(launch));
    return HAL_SUCCESS;
  }

  hal_status record(hal::Event& event) override {
    Call call(*this, "Stream::record");
    HAL_RETURN_IF_ERROR(call.status);
    auto* e = dynamic_cast<DoubleEvent*>(&event);
    if (e == nullptr || &e->device() != &device_) {
      return hal::fail(HAL_ERROR_INTERNAL, "test double: record of another device's event");
    }
    e->tick.store(device_.current_tick());  // the value this record advanced it to
    e->recorded.store(true);
    return HAL_SUCCESS;
  }

  hal_status wait(hal::Event& event) override {
    Call call(*this, "Stream::wait");
    HAL_RETURN_IF_ERROR(call.status);
    auto* e = dynamic_cast<DoubleEvent*>(&event);
    if (e == nullptr || &e->device() != &device_ || !e->recorded.load()) {
      return hal::fail(HAL_ERROR_INTERNAL,
                       "test double: wait on an unrecorded event or another device's event");
    }
    return HAL_SUCCESS;
  }

  hal_status synchronize() override {
    Call call(*this, "Stream::synchronize");
    return call.status;
  }

  hal_status query() override {
    Call call(*this, "Stream::query");
    HAL_RETURN_IF_ERROR(call.status);
    return device_.pending() ? HAL_ERROR_NOT_READY : HAL_SUCCESS;
  }

 private:
  // One backend call on this stream: counts it, notices overlapping calls (the runtime must
  // serialise calls on one stream), and advances the device's counter.
  struct Call {
    Call(DoubleStream& s, const char* what) : stream(s) {
      if (stream.busy_.exchange(true)) stream.device_.note_overlap();
      std::this_thread::yield();  // widens the window in which an overlap would be seen
      stream.device_.stream_call_delay();
      status = stream.device_.enter(what);
      if (status == HAL_SUCCESS) stream.device_.next_tick();
    }
    ~Call() { stream.busy_.store(false); }
    DoubleStream& stream;
    hal_status status = HAL_SUCCESS;
  };

  DoubleDevice& device_;
  std::atomic<bool> busy_{false};
};

}  // namespace

DoubleDevice::DoubleDevice(const std::string& name, bool is_cpu) {
  const uint64_t serial = g_device_serial++;
  next_address_ = (serial + 1) << 40;
  info.struct_size = sizeof(hal_device_info);
  std::snprintf(info.name, sizeof(info.name), "%s", name.c_str());
  std::snprintf(info.driver_name, sizeof(info.driver_name), "hal test double");
  info.vendor_id = 0;
  info.device_id = static_cast<uint32_t>(serial + 1);
  for (int i = 0; i < 16; ++i) info.uuid[i] = static_cast<uint8_t>(serial * 16 + i);
  info.driver_version = 1;
  std::snprintf(info.driver_info, sizeof(info.driver_info), "test double build");
  info.total_memory = 64ull << 20;
  info.max_allocation_size = 1ull << 20;
  if (is_cpu) {
    info.ir_mask = HAL_IR_SPIRV;
    info.max_threads_per_block = 128;
    info.max_block_dim[0] = 128;
    info.max_block_dim[1] = 128;
    info.max_block_dim[2] = 64;
    info.max_grid_dim[0] = 1024;
    info.max_grid_dim[1] = 1024;
    info.max_grid_dim[2] = 1024;
    info.max_shared_memory_per_block = 8192;
    info.subgroup_size = 8;
    info.compute_units = 2;
    info.pointer_alignment = 4;
    info.is_cpu = 1;
    info.unified_memory = 1;
    info.features = 0;
  } else {
    info.ir_mask = HAL_IR_SPIRV | HAL_IR_PTX;
    info.max_threads_per_block = 256;
    info.max_block_dim[0] = 256;
    info.max_block_dim[1] = 128;
    info.max_block_dim[2] = 64;
    info.max_grid_dim[0] = 65535;
    info.max_grid_dim[1] = 1024;
    info.max_grid_dim[2] = 64;
    info.max_shared_memory_per_block = 16384;
    info.subgroup_size = 32;
    info.compute_units = 4;
    info.pointer_alignment = 16;
    info.is_cpu = 0;
    info.unified_memory = 0;
    info.features = HAL_FEATURE_TIMESTAMPS | HAL_FEATURE_FLOAT16;
  }
}

DoubleDevice::~DoubleDevice() {
  for (const auto& [p, token] : host_buffers_) std::free(p);
}

hal_status DoubleDevice::enter(const char* what) {
  ++calls_;
  std::lock_guard lock(mutex_);
  if (!injected_) return HAL_SUCCESS;
  const Injected injected = *injected_;
  injected_.reset();
  const hal_status status = hal::failf(injected.status, "{} ({})", injected.message, what);
  if (injected.lose) report_lost(injected.message);
  return status;
}

void DoubleDevice::fail_next(hal_status status, std::string message) {
  std::lock_guard lock(mutex_);
  injected_ = Injected{status, std::move(message), false};
}

void DoubleDevice::fail_next_and_lose(hal_status status, std::string message) {
  std::lock_guard lock(mutex_);
  injected_ = Injected{status, std::move(message), true};
}

hal_status DoubleDevice::mem_alloc(size_t size, hal::Allocation* out) {
  HAL_RETURN_IF_ERROR(enter("Device::mem_alloc"));
  if (size == 0 || size > info.max_allocation_size) {
    return hal::failf(HAL_ERROR_INTERNAL, "test double: mem_alloc of {} bytes reached the backend",
                      size);
  }
  std::lock_guard lock(mutex_);
  Buffer buffer;
  // The buffer is larger than asked for, as a driver's would be; the runtime must still refuse
  // ranges beyond the size the caller asked for.
  buffer.bytes.assign(round_up(size, kAlignment), 0xCD);
  buffer.token = ++next_token_ * 7919;
  out->base = next_address_;
  out->size = buffer.bytes.size();
  out->backend_data = buffer.token;
  // A gap after every allocation, and addresses are never reused.
  next_address_ += buffer.bytes.size() + kAlignment;
  buffers_.emplace(out->base, std::move(buffer));
  return HAL_SUCCESS;
}

hal_status DoubleDevice::host_pointer(const hal::Allocation& alloc, uint64_t offset, void** out) {
  HAL_RETURN_IF_ERROR(enter("Device::host_pointer"));
  if (!info.unified_memory) return HAL_ERROR_NOT_SUPPORTED;
  std::lock_guard lock(mutex_);
  auto it = buffers_.find(alloc.base);
  if (it == buffers_.end() || offset >= it->second.bytes.size()) {
    return hal::failf(HAL_ERROR_INTERNAL, "test double: host_pointer of unknown range {:#x}+{}",
                      alloc.base, offset);
  }
  *out = it->second.bytes.data() + offset;
  return HAL_SUCCESS;
}

hal_status DoubleDevice::mem_free(const hal::Allocation& alloc) {
  HAL_RETURN_IF_ERROR(enter("Device::mem_free"));
  // Same order as the copies: bytes first, then the map.
  std::lock_guard data_lock(data_mutex_);
  std::lock_guard lock(mutex_);
  auto it = buffers_.find(alloc.base);
  if (it == buffers_.end() || it->second.token != alloc.backend_data) {
    return hal::failf(HAL_ERROR_INTERNAL, "test double: mem_free of unknown allocation {:#x}",
                      alloc.base);
  }
  buffers_.erase(it);
  return HAL_SUCCESS;
}

hal_status DoubleDevice::host_alloc(size_t size, hal::HostAllocation* out) {
  HAL_RETURN_IF_ERROR(enter("Device::host_alloc"));
  void* p = std::aligned_alloc(kAlignment, round_up(size, kAlignment));
  if (p == nullptr) return hal::fail(HAL_ERROR_OUT_OF_MEMORY, "test double: host memory");
  std::lock_guard lock(mutex_);
  const uint64_t token = ++next_token_;
  host_buffers_.emplace(p, token);
  out->base = p;
  out->driver_data = token;
  return HAL_SUCCESS;
}

hal_status DoubleDevice::host_free(const hal::HostAllocation& allocation) {
  HAL_RETURN_IF_ERROR(enter("Device::host_free"));
  std::lock_guard lock(mutex_);
  auto it = host_buffers_.find(allocation.base);
  if (it == host_buffers_.end() || it->second != allocation.driver_data) {
    return hal::fail(HAL_ERROR_INTERNAL, "test double: host_free of unknown memory");
  }
  host_buffers_.erase(it);
  std::free(allocation.base);
  return HAL_SUCCESS;
}

hal_status DoubleDevice::note_copy_host(const void* pointer, size_t size,
                                        const hal::HostAllocation* host) {
  std::lock_guard lock(mutex_);
  if (host == nullptr) {
    last_copy_host_.reset();
    return HAL_SUCCESS;
  }
  auto it = host_buffers_.find(host->base);
  const auto at = static_cast<const uint8_t*>(pointer);
  const auto base = static_cast<const uint8_t*>(host->base);
  if (it == host_buffers_.end() || it->second != host->driver_data || at < base ||
      size > host->size || static_cast<size_t>(at - base) > host->size - size) {
    return hal::fail(HAL_ERROR_INTERNAL,
                     "test double: a copy came with a host allocation that does not hold it");
  }
  last_copy_host_ = *host;
  return HAL_SUCCESS;
}

std::optional<hal::HostAllocation> DoubleDevice::last_copy_host() const {
  std::lock_guard lock(mutex_);
  return last_copy_host_;
}

hal_status DoubleDevice::create_stream(std::unique_ptr<hal::Stream>* out) {
  HAL_RETURN_IF_ERROR(enter("Device::create_stream"));
  *out = std::make_unique<DoubleStream>(*this);
  return HAL_SUCCESS;
}

hal_status DoubleDevice::create_event(std::unique_ptr<hal::Event>* out) {
  HAL_RETURN_IF_ERROR(enter("Device::create_event"));
  *out = std::make_unique<DoubleEvent>(*this);
  return HAL_SUCCESS;
}

hal_status DoubleDevice::load_module(hal_ir ir, const uint8_t* blob, size_t size,
                                     const hal::ModuleOptions& options,
                                     std::unique_ptr<hal::Module>* out) {
  HAL_RETURN_IF_ERROR(enter("Device::load_module"));
  if ((info.ir_mask & ir) == 0) {
    return hal::fail(HAL_ERROR_INTERNAL, "test double: load_module with an IR it does not take");
  }
  auto module = std::make_unique<DoubleModule>();
  {
    std::lock_guard lock(g_modules_mutex);
    auto it = declared_modules().find(blob_key(blob, size));
    if (it != declared_modules().end()) {
      for (const hal::FunctionDesc& desc : it->second) {
        auto function = std::make_unique<DoubleFunction>();
        function->desc = desc;
        for (hal::ParamInfo& param : function->desc.params) {
          if (param.kind == HAL_PARAM_POINTER && param.alignment == 0) {
            param.alignment = info.pointer_alignment;
          }
        }
        module->functions.push_back(std::move(function));
      }
    }
  }
  {
    std::lock_guard lock(mutex_);
    RecordedModuleLoad load;
    load.ir = ir;
    load.blob.assign(blob, blob + size);
    load.options = options;
    last_load_ = std::move(load);
  }
  *out = std::move(module);
  return HAL_SUCCESS;
}

hal_status DoubleDevice::synchronize() {
  return enter("Device::synchronize");
}

hal_status DoubleDevice::bytes_of(const hal::DeviceRange& range, size_t size, uint8_t** out) {
  std::lock_guard lock(mutex_);
  auto it = buffers_.find(range.alloc.base);
  if (it == buffers_.end()) {
    return hal::failf(HAL_ERROR_INTERNAL, "test double: {:#x} is not an allocation of mine",
                      range.alloc.base);
  }
  if (it->second.token != range.alloc.backend_data) {
    return hal::fail(HAL_ERROR_INTERNAL, "test double: backend_data was not handed back");
  }
  if (range.offset > range.alloc.size || size > range.alloc.size - range.offset ||
      range.alloc.size > it->second.bytes.size()) {
    return hal::failf(HAL_ERROR_INTERNAL,
                      "test double: range +{} of {} bytes outside its allocation of {}",
                      range.offset, size, range.alloc.size);
  }
  *out = it->second.bytes.data() + range.offset;
  return HAL_SUCCESS;
}

void DoubleDevice::record_launch(RecordedLaunch launch) {
  std::lock_guard lock(mutex_);
  launches_.push_back(std::move(launch));
}

std::vector<RecordedLaunch> DoubleDevice::launches() const {
  std::lock_guard lock(mutex_);
  return launches_;
}

std::optional<RecordedModuleLoad> DoubleDevice::last_module_load() const {
  std::lock_guard lock(mutex_);
  return last_load_;
}

size_t DoubleDevice::live_buffers() const {
  std::lock_guard lock(mutex_);
  return buffers_.size();
}

size_t DoubleDevice::live_host_buffers() const {
  std::lock_guard lock(mutex_);
  return host_buffers_.size();
}

std::vector<uint8_t> DoubleDevice::buffer_bytes(hal_deviceptr base, size_t size) const {
  std::lock_guard lock(mutex_);
  auto it = buffers_.find(base);
  if (it == buffers_.end()) return {};
  const size_t n = std::min(size, it->second.bytes.size());
  return std::vector<uint8_t>(it->second.bytes.begin(), it->second.bytes.begin() + n);
}

DoubleBackend::DoubleBackend(std::string prefix, std::string unavailable_reason)
    : prefix_(std::move(prefix)), unavailable_reason_(std::move(unavailable_reason)) {}

hal_status DoubleBackend::init(std::vector<std::unique_ptr<hal::Device>>* devices) {
  if (!unavailable_reason_.empty()) return hal::fail(HAL_ERROR_UNAVAILABLE, unavailable_reason_);
  devices->push_back(std::make_unique<DoubleDevice>(prefix_ + " CPU (test double)", true));
  devices->push_back(std::make_unique<DoubleDevice>(prefix_ + " GPU (test double)", false));
  return HAL_SUCCESS;
}

namespace {

std::unique_ptr<hal::Backend> create_double() {
  return std::make_unique<DoubleBackend>("Double");
}
std::unique_ptr<hal::Backend> create_twin() {
  return std::make_unique<DoubleBackend>("Twin");
}
std::unique_ptr<hal::Backend> create_broken() {
  return std::make_unique<DoubleBackend>("Broken", kBrokenReason);
}

HAL_DEFINE_CXX_DRIVER(double_query, "double", HAL_BACKEND_UNKNOWN, &create_double)
HAL_DEFINE_CXX_DRIVER(twin_query, "twin", HAL_BACKEND_UNKNOWN, &create_twin)
HAL_DEFINE_CXX_DRIVER(broken_query, "broken", HAL_BACKEND_UNKNOWN, &create_broken)

}  // namespace

hal::InProcessDriver double_factory() {
  return {&double_query, "the test double 'double' (in this program)"};
}

hal::InProcessDriver twin_factory() {
  return {&twin_query, "the test double 'twin' (in this program)"};
}

hal::InProcessDriver broken_factory() {
  return {&broken_query, "the test double 'broken' (in this program)"};
}

std::vector<hal::FunctionDesc> parse_function_specs(const std::string& spec) {
  std::vector<hal::FunctionDesc> functions;
  for (const std::string& entry : split(spec, ';')) {
    if (entry.empty()) continue;
    const size_t open = entry.find('(');
    const size_t close = entry.find(')');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      throw std::invalid_argument("test double spec: expected name(params) in '" + entry + "'");
    }
    hal::FunctionDesc desc;
    desc.name = trim(entry.substr(0, open));
    const std::string params = trim(entry.substr(open + 1, close - open - 1));
    if (params == "?") {
      desc.params_known = false;
    } else if (!params.empty()) {
      for (const std::string& type : split(params, ',')) {
        desc.params.push_back(parse_param(type, entry));
      }
    }
    std::string rest = entry.substr(close + 1);
    for (char& c : rest) {
      if (std::isspace(static_cast<unsigned char>(c))) c = ' ';
    }
    for (const std::string& option : split(rest, ' ')) {
      if (option.empty()) continue;
      if (option == "nodynamic") {
        desc.dynamic_shared = false;
      } else if (option == "sharedrequired") {
        desc.shared_bytes_required = true;
      } else if (option.rfind("block=", 0) == 0) {
        const std::vector<std::string> dims = split(option.substr(6), ',');
        if (dims.size() != 3) {
          throw std::invalid_argument("test double spec: block needs X,Y,Z in '" + entry + "'");
        }
        for (int i = 0; i < 3; ++i) desc.block[i] = parse_number(dims[i], entry);
      } else if (option.rfind("shared=", 0) == 0) {
        desc.static_shared_bytes = parse_number(option.substr(7), entry);
      } else if (option.rfind("maxthreads=", 0) == 0) {
        desc.max_threads_per_block = parse_number(option.substr(11), entry);
      } else {
        throw std::invalid_argument("test double spec: unknown option '" + option + "' in '" +
                                    entry + "'");
      }
    }
    if (desc.name.empty()) {
      throw std::invalid_argument("test double spec: a function without a name in '" + entry + "'");
    }
    functions.push_back(std::move(desc));
  }
  return functions;
}

void declare_module(const std::vector<uint8_t>& blob, const std::string& spec) {
  std::vector<hal::FunctionDesc> functions = parse_function_specs(spec);
  std::lock_guard lock(g_modules_mutex);
  declared_modules()[blob_key(blob.data(), blob.size())] = std::move(functions);
}

DoubleDevice* double_device(hal_device device) {
  auto object = hal::lookup_device(device);
  hal::clear_pending_error();
  if (!object) return nullptr;
  return dynamic_cast<DoubleDevice*>(hal::device_of(object->impl));
}

std::vector<uint8_t> spirv_blob(uint32_t tag) {
  const uint32_t words[6] = {0x07230203u, 0x00010300u, 0u, 16u, 0u, tag};
  std::vector<uint8_t> blob(sizeof(words));
  std::memcpy(blob.data(), words, sizeof(words));
  return blob;
}

}  // namespace hal_test
