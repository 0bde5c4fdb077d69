// What every benchmark family shares: the run's options, the device and its stream, kernels of
// the pack, device buffers, clocks and repetition loops.
#pragma once

#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "plan.h"
#include "report.h"

namespace bench {

struct Options {
  std::string selector = "default";
  std::string filter;  // substring of a family or figure name; empty: everything
  std::string json_path;
  bool quick = false;
  uint32_t reps = 0;  // timed repetitions per figure (0: the family's default)
  uint32_t warmup = 2;
};

// A failed hal call: the call and hal_last_error().
class HalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check(hal_status status, const char* call);
#define BENCH_CHECK(call) ::bench::check((call), #call)

struct Context {
  Options options;
  hal_device device = nullptr;
  hal_device_info info{};
  hal_ir ir = HAL_IR_SPIRV;  // PTX on CUDA devices, SPIR-V elsewhere
  hal_stream stream = nullptr;
  std::string exe_path;    // this program, for the module-load children
  std::string tuning_dir;  // where hal-tune's database is (the user's cache, not the run's)
  // The run's own temporary HAL_CACHE_DIR (main.cpp); empty when none could be made and the
  // user's cache directory is in use, which no family may then empty.
  std::string cache_dir;
  Report* report = nullptr;

  bool is_cuda() const { return info.backend == HAL_BACKEND_CUDA; }
  bool is_vulkan() const { return info.backend == HAL_BACKEND_VULKAN; }
  // Whether the --filter admits |name| (a family or a figure name).
  bool wants(const std::string& name) const;
  // |full| in a normal run, |quick| with --quick; --reps overrides both.
  uint32_t reps(uint32_t full, uint32_t quick) const;
};

// A kernel of the pack, loaded in the device's IR.
struct Kernel {
  const hal_kernel_info* info = nullptr;
  hal_module module = nullptr;
  hal_function function = nullptr;
  Kernel() = default;
  Kernel(const Context& ctx, const std::string& name);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  // Whether the device has what kernel |name| requires (fp16 storage).
  static bool supported(const Context& ctx, const std::string& name);
  void launch(hal_stream stream, uint32_t gx, uint32_t gy, uint32_t gz,
              const std::vector<void*>& args) const;
};

// The value of tunable |name| (BM, BN, ...) of a kernel of the pack, else |fallback|.
uint32_t kernel_tunable(const hal_kernel_info& info, const char* name, uint32_t fallback);

// A device allocation, freed by the destructor.
class DeviceBuffer {
 public:
  DeviceBuffer(const Context& ctx, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  hal_deviceptr ptr = 0;
  size_t bytes = 0;

 private:
  hal_device device_;
};

inline double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

// Runs |run| |warmup| times untimed, then |reps| times, each timed on its own; returns the
// microseconds of each timed run.
std::vector<double> time_runs(uint32_t warmup, uint32_t reps, const std::function<void()>& run);

// The same, alternating two contestants run by run so that a noisy machine's slow phases hit
// both alike.
void time_interleaved(uint32_t warmup, uint32_t reps, const std::function<void()>& a,
                      const std::function<void()>& b, std::vector<double>* a_us,
                      std::vector<double>* b_us);

// The same for any number of contestants: run i starts with contestant i modulo their count and
// takes the others in turn, so each goes first equally often. (*us)[c] receives contestant c's
// microseconds.
void time_rotated(uint32_t warmup, uint32_t reps, const std::vector<std::function<void()>>& runs,
                  std::vector<std::vector<double>>* us);

// Human-readable byte counts: "4 KiB", "256 MiB".
std::string bytes_text(size_t bytes);

// The benchmark families (one file each).
void bench_launch(Context& ctx);
void bench_copy(Context& ctx);
void bench_memory(Context& ctx);
void bench_module_load(Context& ctx);
void bench_module_load_ptx(Context& ctx);
void bench_matmul(Context& ctx);
void bench_attention(Context& ctx);
void bench_cpu_ptx(Context& ctx);
void bench_ptx_vulkan(Context& ctx);
void bench_ptx_vulkan_rivals(Context& ctx);

// The child side of bench_module_load (run as "hal-bench --module-load-child ...").
int module_load_child(const std::string& selector, const std::string& kernel);

// One planned launch (plan.h): its module, loaded with the plan's specialisation constants.
class PlannedKernel {
 public:
  PlannedKernel(const Context& ctx, const hal_kernels::tune::LaunchPlan& plan) : plan_(plan) {
    BENCH_CHECK(hal_kernels::tune::load_plan(ctx.device, plan, &module_, &function_));
  }
  ~PlannedKernel() {
    if (module_ != nullptr) hal_module_unload(module_);
  }
  PlannedKernel(const PlannedKernel&) = delete;
  PlannedKernel& operator=(const PlannedKernel&) = delete;
  void launch(hal_stream stream, const std::vector<void*>& args) const {
    hal_launch_config config{};
    for (int i = 0; i < 3; ++i) {
      config.grid[i] = plan_.grid[i];
      config.block[i] = plan_.block[i];
    }
    config.shared_bytes = plan_.shared_bytes;
    BENCH_CHECK(hal_launch(stream, function_, &config, args.data()));
  }

 private:
  hal_kernels::tune::LaunchPlan plan_;
  hal_module module_ = nullptr;
  hal_function function_ = nullptr;
};

}  // namespace bench
