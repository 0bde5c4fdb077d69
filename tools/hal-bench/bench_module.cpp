// Module load: the time from hal_module_load to the completion of the first launch (pipelines
// are built lazily at the first launch, so load alone would hide the compile), with an empty
// cache directory (cold) against the same directory once a run has filled it (warm).
//
// The pipeline cache is read when a device is opened, once per process, so each sample is taken
// in a child process (this program run with --module-load-child) that opens the device, then
// times load + first launch + synchronize of one kernel. The parent alternates cold and warm
// children and computes the figure and its ratio; both sides are measured by the same code.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common.h"

extern char** environ;

namespace bench {

namespace {

constexpr const char* kKernel = "matmul_tiled_f32_64x64";

// Runs this program as a module-load child with HAL_CACHE_DIR (and CUDA's JIT cache) in |dir|;
// returns the microseconds it reports, or a negative value with |why| set.
double run_child(const Context& ctx, const std::string& dir, std::string* why) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "HAL_CACHE_DIR=", 14) == 0 ||
        std::strncmp(*e, "CUDA_CACHE_PATH=", 16) == 0) {
      continue;
    }
    env_text.emplace_back(*e);
  }
  env_text.push_back("HAL_CACHE_DIR=" + dir);
  env_text.push_back("CUDA_CACHE_PATH=" + dir + "/cuda");
  std::vector<char*> envp;
  for (std::string& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_text = {ctx.exe_path, "--module-load-child", kKernel, "--device",
                                       ctx.options.selector};
  std::vector<char*> argv;
  for (std::string& s : arg_text) argv.push_back(s.data());
  argv.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) {
    *why = "pipe failed";
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, ctx.exe_path.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    *why = "posix_spawn of " + ctx.exe_path + " failed: " + std::strerror(rc);
    return -1;
  }
  std::string out;
  char buf[512];
  ssize_t got = 0;
  while ((got = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(got));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const size_t at = out.find("load_us ");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || at == std::string::npos) {
    *why = "the module-load child failed: " + out;
    return -1;
  }
  return std::strtod(out.c_str() + at + 8, nullptr);
}

}  // namespace

int module_load_child(const std::string& selector, const std::string& kernel_name) {
  try {
    Context ctx;
    BENCH_CHECK(hal_device_find(selector.c_str(), &ctx.device));
    ctx.info.struct_size = sizeof ctx.info;
    BENCH_CHECK(hal_device_get_info(ctx.device, &ctx.info));
    ctx.ir = (ctx.info.ir_mask & HAL_IR_SPIRV) ? HAL_IR_SPIRV : HAL_IR_PTX;
    BENCH_CHECK(hal_stream_create(ctx.device, &ctx.stream));
    const uint32_t size = 16;
    DeviceBuffer a(ctx, size * size * 4), b(ctx, size * size * 4), c(ctx, size * size * 4);
    uint32_t m = size, n = size, k = size, lda = size, ldb = size, ldc = size;
    float alpha = 1.0f, beta = 0.0f;
    const std::vector<void*> args = {&a.ptr, &b.ptr, &c.ptr, &m,     &n,   &k,
                                     &lda,   &ldb,   &ldc,   &alpha, &beta};
    const double t0 = now_us();
    double t1 = 0;
    {
      Kernel kernel(ctx, kernel_name);
      kernel.launch(ctx.stream, 1, 1, 1, args);
      BENCH_CHECK(hal_stream_synchronize(ctx.stream));
      t1 = now_us();
    }  // the unload saves the pipeline cache for the next child
    std::printf("load_us %.3f\n", t1 - t0);
    hal_stream_destroy(ctx.stream);
    return 0;
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 1;
  }
}

void bench_module_load(Context& ctx) {
  if (!ctx.wants("module_load")) return;
  const uint32_t reps = ctx.reps(15, 2);
  std::error_code ec;
  const std::filesystem::path base =
      std::filesystem::temp_directory_path(ec) /
      ("hal-bench-module-" + std::to_string(static_cast<long>(getpid())));
  std::filesystem::create_directories(base, ec);
  std::vector<double> cold, warm;
  std::string why;
  for (uint32_t i = 0; i < reps && why.empty(); ++i) {
    const std::filesystem::path dir = base / ("run" + std::to_string(i));
    std::filesystem::remove_all(dir, ec);
    std::filesystem::create_directories(dir, ec);
    const double c = run_child(ctx, dir.string(), &why);
    if (c < 0) break;
    const double w = run_child(ctx, dir.string(), &why);
    if (w < 0) break;
    cold.push_back(c / 1000.0);
    warm.push_back(w / 1000.0);
  }
  std::filesystem::remove_all(base, ec);
  if (!why.empty()) throw HalError("module_load: " + why);

  Figure f;
  f.family = "module_load";
  f.name = "module_load_warm";
  f.what =
      "milliseconds from hal_module_load to the end of the first launch's synchronize, in a "
      "fresh process whose cache directory was filled by an earlier run (warm)";
  f.unit = "ms";
  const bool cpu_ptx = ctx.is_cuda() && ctx.info.is_cpu;
  f.params = {{"kernel", kKernel},
              {"cache", cpu_ptx         ? "none (the CPU PTX driver keeps no compiled code)"
                        : ctx.is_cuda() ? "CUDA_CACHE_PATH (the driver's JIT cache)"
                                        : "HAL_CACHE_DIR (hal's VkPipelineCache file)"}};
  f.value = Stats::of(warm);
  f.has_baseline = true;
  f.baseline_name = "the same in a fresh process with an empty cache directory (cold)";
  f.baseline = Stats::of(cold);
  if (ctx.is_vulkan() && ctx.info.is_cpu) {
    f.target = {true, true, 0.2, "on lavapipe, a warm load at least 5x faster than a cold one"};
  }
  f.note = ctx.is_vulkan() && ctx.info.is_cpu
               ? "hal saves the device's VkPipelineCache under HAL_CACHE_DIR and hands it back to "
                 "the driver, so the warm speedup is whatever the driver's cache holds. Mesa "
                 "22.3's lavapipe holds nothing: the file hal writes after a cold run is 100 "
                 "bytes, hal's 68-byte header plus the driver's 32-byte cache header and no "
                 "data, so every pipeline is compiled by LLVM again and warm costs what cold "
                 "does. A driver that caches compiled pipelines (GPU drivers do) gets the "
                 "speedup from the same hal code; on lavapipe nothing in hal can, since the "
                 "Vulkan API offers no other way to keep compiled code."
               : "";
  if (cpu_ptx) {
    // Said so that a ratio of about 1 is not read as a cache that fails.
    f.note =
        "The CPU PTX driver (libhal_ptx_cpu.so) parses and decodes the PTX at every load and "
        "reads no CUDA_CACHE_PATH, and hal's CUDA backend leaves caching to the driver, so warm "
        "and cold children do the same work: a ratio of about 1 is expected here.";
  }
  ctx.report->add(std::move(f));
}

}  // namespace bench
