#include "common.h"

#include <cstdio>

namespace bench {

void check(hal_status status, const char* call) {
  if (status == HAL_SUCCESS) return;
  throw HalError(std::string(call) + " failed: " + hal_status_string(status) + ": " +
                 hal_last_error());
}

bool Context::wants(const std::string& name) const {
  return options.filter.empty() || name.find(options.filter) != std::string::npos;
}

uint32_t Context::reps(uint32_t full, uint32_t quick) const {
  if (options.reps != 0) return options.reps;
  return options.quick ? quick : full;
}

bool Kernel::supported(const Context& ctx, const std::string& name) {
  return hal_kernels_runs_on(hal_kernels_info(name.c_str()), ctx.ir, &ctx.info, nullptr, 0) != 0;
}

Kernel::Kernel(const Context& ctx, const std::string& name) {
  if (ctx.ir == HAL_IR_BUILTIN) {
    // The device's own kernel of that name ("HALK" and the name), described by the pack's
    // SPIR-V build of it (the same parameters and block size).
    const hal_kernel_blob* described = hal_kernels_find(name.c_str(), HAL_IR_SPIRV);
    if (described == nullptr) throw HalError("kernel " + name + " is not in the pack");
    info = described->kernel;
    const std::string blob = "HALK" + name;
    BENCH_CHECK(hal_module_load(ctx.device, blob.data(), blob.size(), nullptr, &module));
    BENCH_CHECK(hal_module_get_function(module, name.c_str(), &function));
    return;
  }
  const hal_kernel_blob* blob = hal_kernels_find(name.c_str(), ctx.ir);
  if (blob == nullptr) throw HalError("kernel " + name + " is not in the pack for this IR");
  info = blob->kernel;
  BENCH_CHECK(hal_module_load(ctx.device, blob->data, blob->size, nullptr, &module));
  BENCH_CHECK(hal_module_get_function(module, blob->entry_point, &function));
}

Kernel::~Kernel() {
  if (module != nullptr) hal_module_unload(module);
}

void Kernel::launch(hal_stream stream, uint32_t gx, uint32_t gy, uint32_t gz,
                    const std::vector<void*>& args) const {
  hal_launch_config config{};
  config.grid[0] = gx;
  config.grid[1] = gy;
  config.grid[2] = gz;
  for (int i = 0; i < 3; ++i) config.block[i] = info->block[i];
  config.shared_bytes = info->shared_bytes;
  BENCH_CHECK(hal_launch(stream, function, &config, args.data()));
}

uint32_t kernel_tunable(const hal_kernel_info& info, const char* name, uint32_t fallback) {
  for (uint32_t i = 0; i < info.tunable_count; ++i) {
    if (std::string(info.tunables[i].name) == name) return info.tunables[i].value;
  }
  return fallback;
}

DeviceBuffer::DeviceBuffer(const Context& ctx, size_t size) : bytes(size), device_(ctx.device) {
  BENCH_CHECK(hal_mem_alloc(ctx.device, size, &ptr));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr != 0) hal_mem_free(device_, ptr);
}

std::vector<double> time_runs(uint32_t warmup, uint32_t reps, const std::function<void()>& run) {
  for (uint32_t i = 0; i < warmup; ++i) run();
  std::vector<double> us;
  us.reserve(reps);
  for (uint32_t i = 0; i < reps; ++i) {
    const double t0 = now_us();
    run();
    us.push_back(now_us() - t0);
  }
  return us;
}

void time_interleaved(uint32_t warmup, uint32_t reps, const std::function<void()>& a,
                      const std::function<void()>& b, std::vector<double>* a_us,
                      std::vector<double>* b_us) {
  for (uint32_t i = 0; i < warmup; ++i) {
    a();
    b();
  }
  for (uint32_t i = 0; i < reps; ++i) {
    // Alternate which goes first, so neither always follows the other's cache footprint.
    const bool a_first = i % 2 == 0;
    for (int turn = 0; turn < 2; ++turn) {
      const bool run_a = (turn == 0) == a_first;
      const double t0 = now_us();
      run_a ? a() : b();
      (run_a ? a_us : b_us)->push_back(now_us() - t0);
    }
  }
}

void time_rotated(uint32_t warmup, uint32_t reps, const std::vector<std::function<void()>>& runs,
                  std::vector<std::vector<double>>* us) {
  for (uint32_t i = 0; i < warmup; ++i) {
    for (const std::function<void()>& run : runs) run();
  }
  const size_t n = runs.size();
  us->assign(n, {});
  for (uint32_t i = 0; i < reps; ++i) {
    for (size_t turn = 0; turn < n; ++turn) {
      const size_t c = (i + turn) % n;
      const double t0 = now_us();
      runs[c]();
      (*us)[c].push_back(now_us() - t0);
    }
  }
}

std::string bytes_text(size_t bytes) {
  char buf[32];
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) {
    std::snprintf(buf, sizeof buf, "%zu MiB", bytes >> 20);
  } else if (bytes >= 1024 && bytes % 1024 == 0) {
    std::snprintf(buf, sizeof buf, "%zu KiB", bytes >> 10);
  } else {
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  }
  return buf;
}

}  // namespace bench
