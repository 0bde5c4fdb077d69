#include "sample_util.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sample {

void die(const std::string& what) {
  std::fprintf(stderr, "error: %s: %s\n", what.c_str(), hal_last_error());
  std::exit(2);
}

Args::Args(int argc, char** argv, const std::string& usage, const std::vector<std::string>& options,
           const std::vector<std::string>& flags) {
  auto known = [](const std::vector<std::string>& list, const std::string& name) {
    for (const std::string& s : list) {
      if (s == name) return true;
    }
    return false;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string name = arg.rfind("--", 0) == 0 ? arg.substr(2) : "";
    if (known(flags, name)) {
      values_[name] = std::string(1, '1');  // not = "1": GCC 12 -O3 warns (-Wrestrict) on that
    } else if (known(options, name) && i + 1 < argc) {
      values_[name] = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s %s\n", argv[0], usage.c_str());
      std::exit(2);
    }
  }
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

uint32_t Args::get_u32(const std::string& name, uint32_t fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback
                             : static_cast<uint32_t>(std::strtoul(it->second.c_str(), nullptr, 10));
}

float Args::get_float(const std::string& name, float fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : std::strtof(it->second.c_str(), nullptr);
}

bool Args::flag(const std::string& name) const {
  return values_.count(name) != 0;
}

Device open_device(const std::string& selector, const std::string& ir) {
  Device d;
  uint32_t count = 0;
  if (hal_device_count(&count) == HAL_SUCCESS && count == 0) {
    std::fprintf(stderr, "no device: hal found none (hal-info says why)\n");
    std::exit(kNoDevice);
  }
  if (ir != "" && ir != "spirv" && ir != "ptx") {
    std::fprintf(stderr, "error: --ir takes spirv or ptx, not '%s'\n", ir.c_str());
    std::exit(2);
  }
  const hal_status found = hal_device_find(selector.c_str(), &d.device);
  if (found == HAL_ERROR_NOT_FOUND) {
    std::fprintf(stderr, "no device: none matches '%s': %s\n", selector.c_str(), hal_last_error());
    std::exit(kNoDevice);
  }
  if (found != HAL_SUCCESS) die("hal_device_find");
  d.info.struct_size = sizeof d.info;
  SAMPLE_CHECK(hal_device_get_info(d.device, &d.info));
  const bool spirv = (d.info.ir_mask & HAL_IR_SPIRV) != 0;
  if (ir.empty()) {
    d.ir = spirv ? HAL_IR_SPIRV : HAL_IR_PTX;
    if (!(d.info.ir_mask & d.ir)) {
      std::fprintf(stderr, "error: device '%s' takes neither PTX nor SPIR-V\n", d.info.name);
      std::exit(2);
    }
  } else {
    d.ir = ir == "ptx" ? HAL_IR_PTX : HAL_IR_SPIRV;
    if (!(d.info.ir_mask & d.ir)) {
      std::fprintf(stderr, "no device: '%s' does not take %s\n", d.info.name,
                   d.ir == HAL_IR_PTX ? "PTX" : "SPIR-V");
      std::exit(kNoDevice);
    }
  }
  SAMPLE_CHECK(hal_stream_create(d.device, &d.stream));
  // PTX on a device that also takes SPIR-V is a Vulkan device translating it.
  std::printf("device: %s (%s)\n", d.info.name,
              d.ir == HAL_IR_SPIRV ? "SPIR-V"
              : spirv              ? "PTX, translated to SPIR-V"
                                   : "PTX");
  return d;
}

bool try_load_kernel(const Device& device, const std::string& name, Kernel* out,
                     std::string* refused) {
  Kernel k;
  const hal_kernel_blob* blob = hal_kernels_find(name.c_str(), device.ir);
  if (blob == nullptr) {
    if (hal_kernels_info(name.c_str()) != nullptr) {
      std::fprintf(stderr,
                   "error: the kernel pack has '%s' in PTX only (tensor-core instructions); run "
                   "it on a device that takes PTX (--device cuda:0)\n",
                   name.c_str());
    } else {
      std::fprintf(stderr, "error: the kernel pack has no kernel '%s'\n", name.c_str());
    }
    std::exit(2);
  }
  k.info = blob->kernel;
  if (char why[512]; !hal_kernels_runs_on(k.info, blob->ir, &device.info, why, sizeof why)) {
    std::fprintf(stderr, "error: %s\n", why);
    std::exit(2);
  }
  hal_module_options options{};
  options.struct_size = sizeof options;
  options.ir = blob->ir;
  // A device refuses a kernel it cannot run in this IR at load, or (where the rest of the
  // module translates) at hal_module_get_function: HAL_ERROR_NOT_SUPPORTED either way.
  hal_status s = hal_module_load(device.device, blob->data, blob->size, &options, &k.module);
  if (s == HAL_SUCCESS) s = hal_module_get_function(k.module, blob->entry_point, &k.function);
  if (s == HAL_ERROR_NOT_SUPPORTED) {
    *refused = hal_last_error();
    if (k.module != nullptr) SAMPLE_CHECK(hal_module_unload(k.module));
    return false;
  }
  if (s != HAL_SUCCESS) die("loading " + name);
  for (int i = 0; i < 3; ++i) k.block[i] = k.info->block[i];
  k.shared_bytes = k.info->shared_bytes;
  *out = k;
  return true;
}

Kernel load_kernel(const Device& device, const std::string& name) {
  Kernel k;
  if (std::string refused; !try_load_kernel(device, name, &k, &refused)) {
    std::fprintf(stderr, "error: %s\n", refused.c_str());
    std::exit(2);
  }
  return k;
}

Kernel load_planned(const Device& device, const hal_kernels::tune::LaunchPlan& plan) {
  Kernel k;
  k.info = hal_kernels_info(plan.kernel.c_str());
  SAMPLE_CHECK(hal_kernels::tune::load_plan(device.device, plan, &k.module, &k.function));
  for (int i = 0; i < 3; ++i) k.block[i] = plan.block[i];
  k.shared_bytes = plan.shared_bytes;
  std::printf("plan: %s (%s), %s\n", plan.kernel.c_str(), plan.label.c_str(), plan.source.c_str());
  return k;
}

void launch(const Device& device, const Kernel& kernel, uint32_t gx, uint32_t gy, uint32_t gz,
            std::vector<void*> args) {
  hal_launch_config config{};
  config.grid[0] = gx;
  config.grid[1] = gy;
  config.grid[2] = gz;
  for (int i = 0; i < 3; ++i) config.block[i] = kernel.block[i];
  config.shared_bytes = kernel.shared_bytes;
  SAMPLE_CHECK(hal_launch(device.stream, kernel.function, &config, args.data()));
}

Buffer::Buffer(const Device& device, size_t bytes) : ptr(0), device_(device) {
  SAMPLE_CHECK(hal_mem_alloc(device.device, bytes == 0 ? 4 : bytes, &ptr));
}

Buffer::~Buffer() {
  hal_mem_free(device_.device, ptr);
}

void Buffer::upload(const void* data, size_t bytes) {
  SAMPLE_CHECK(hal_memcpy_htod(device_.stream, ptr, data, bytes));
}

void Buffer::download(void* data, size_t bytes) {
  SAMPLE_CHECK(hal_memcpy_dtoh(device_.stream, data, ptr, bytes));
  SAMPLE_CHECK(hal_stream_synchronize(device_.stream));
}

namespace {
double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}
}  // namespace

Timer::Timer(const Device& device) : device_(device) {
  events_ = (device.info.features & HAL_FEATURE_TIMESTAMPS) != 0;
  if (events_) {
    SAMPLE_CHECK(hal_event_create(device.device, &begin_));
    SAMPLE_CHECK(hal_event_create(device.device, &end_));
  }
}

Timer::~Timer() {
  if (begin_ != nullptr) hal_event_destroy(begin_);
  if (end_ != nullptr) hal_event_destroy(end_);
}

void Timer::start() {
  if (events_) {
    SAMPLE_CHECK(hal_event_record(begin_, device_.stream));
  } else {
    SAMPLE_CHECK(hal_stream_synchronize(device_.stream));
    host_start_ = now_ms();
  }
}

double Timer::stop() {
  if (events_) {
    SAMPLE_CHECK(hal_event_record(end_, device_.stream));
    SAMPLE_CHECK(hal_event_synchronize(end_));
    float ms = 0;
    SAMPLE_CHECK(hal_event_elapsed_ms(begin_, end_, &ms));
    return ms;
  }
  SAMPLE_CHECK(hal_stream_synchronize(device_.stream));
  return now_ms() - host_start_;
}

double median_ms(Timer& timer, uint32_t iters, const std::function<void()>& run) {
  std::vector<double> times;
  times.reserve(iters);
  for (uint32_t i = 0; i < iters; ++i) {
    timer.start();
    run();
    times.push_back(timer.stop());
  }
  if (times.empty()) return 0.0;
  std::sort(times.begin(), times.end());
  const size_t mid = times.size() / 2;
  return times.size() % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
}

}  // namespace sample
