// hal-bench: hal's performance against baselines measured in the same run.
//
//   hal-bench [--device <selector>] [--filter <name>] [--json <file>] [--quick]
//             [--reps <n>] [--warmup <n>]
//
// Families: launch overhead and latency (against the raw API), copy bandwidth (against memcpy),
// module load (warm cache against cold; on Vulkan, PTX translation cold against cached and
// against loading SPIR-V), matmul (against sgemm), attention (fused against three kernels), on
// a Vulkan device the translated PTX against its SPIR-V twin and against the CPU PTX device's
// interpreter, and on the CPU PTX device its interpreter's rate and its kernels against the same
// kernels' SPIR-V on a Vulkan CPU device. Every figure is the median, minimum and maximum of
// repeated runs after warm-up, with its baseline and the ratio of the medians. See
// docs/PERFORMANCE.md.
//
// Exit status: 0 when every selected figure was produced, 1 when a family failed, 2 on a usage
// error, 77 when the device does not exist (a skip for ctest).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "common.h"
#include "tuning_db.h"

namespace {

constexpr int kNoDevice = 77;

void usage(FILE* out) {
  std::fprintf(out,
               "usage: hal-bench [--device <selector>] [--filter <name>] [--json <file>] "
               "[--quick] [--reps <n>] [--warmup <n>]\n"
               "  --device   a hal device selector (vulkan:0, cuda:0, 2, a name); default: "
               "HAL_DEVICE or device 0\n"
               "  --filter   run only figures whose name (or family) contains this text\n"
               "  --json     write every figure, its baseline and ratio to this file\n"
               "  --quick    few sizes and repetitions (seconds): checks that every figure is "
               "produced\n"
               "  --reps     timed repetitions per figure (default: per family)\n"
               "  --warmup   untimed runs before timing (default 2)\n");
}

std::string self_path() {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::string read_loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

bool parse_u32(const char* text, uint32_t* out) {
  char* end = nullptr;
  const unsigned long v = std::strtoul(text, &end, 10);
  if (end == text || *end != '\0' || v > 1000000) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "hal-bench: %s needs a value\n", arg.c_str());
        usage(stderr);
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--device") {
      options.selector = next();
    } else if (arg == "--filter") {
      options.filter = next();
    } else if (arg == "--json") {
      options.json_path = next();
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--reps" || arg == "--warmup") {
      uint32_t value = 0;
      if (!parse_u32(next(), &value) || (arg == "--reps" && value == 0)) {
        std::fprintf(stderr, "hal-bench: %s takes a count\n", arg.c_str());
        return 2;
      }
      (arg == "--reps" ? options.reps : options.warmup) = value;
    } else if (arg == "--module-load-child" && i + 1 < argc) {
      const std::string kernel = argv[++i];
      std::string selector = "default";
      if (i + 2 < argc && std::string(argv[i + 1]) == "--device") selector = argv[i + 2];
      return bench::module_load_child(selector, kernel);
    } else if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "hal-bench: unknown argument '%s'\n", arg.c_str());
      usage(stderr);
      return 2;
    }
  }

  // The tuning database is the user's (hal-tune wrote it there): found before the cache
  // directory below replaces HAL_CACHE_DIR.
  const std::string tuning_dir = hal_kernels::tune::default_directory();

  // The parent's own pipeline cache lives in a temporary directory, set before the first hal
  // call, so that the user's cache neither helps nor is touched by the benchmark.
  // In TMPDIR when it is set, like every other temporary file.
  std::error_code no_tmp;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(no_tmp);
  if (no_tmp) tmp = "/tmp";
  std::string cache_template = tmp / "hal-bench-cache-XXXXXX";
  const char* cache_dir = mkdtemp(cache_template.data());
  if (cache_dir != nullptr) {
    setenv("HAL_CACHE_DIR", cache_dir, 1);
  } else {
    std::fprintf(stderr,
                 "hal-bench: cannot create a temporary pipeline-cache directory in '%s' (%s); "
                 "using the default cache directory\n",
                 tmp.c_str(), std::strerror(errno));
  }

  bench::Report report;
  bench::Context ctx;
  ctx.options = options;
  ctx.report = &report;
  ctx.exe_path = self_path();
  ctx.tuning_dir = tuning_dir;
  if (cache_dir != nullptr) ctx.cache_dir = cache_dir;
  report.set_config(options.quick, options.reps, options.filter);
  const double start_us = bench::now_us();
  int status = 0;
  try {
    if (hal_device_find(options.selector.c_str(), &ctx.device) != HAL_SUCCESS) {
      std::fprintf(stderr, "hal-bench: no device '%s': %s\n", options.selector.c_str(),
                   hal_last_error());
      if (cache_dir != nullptr) std::filesystem::remove_all(cache_dir);
      return kNoDevice;
    }
    ctx.info.struct_size = sizeof ctx.info;
    BENCH_CHECK(hal_device_get_info(ctx.device, &ctx.info));
    // A device that takes neither SPIR-V nor PTX runs built-in kernels by name (the driver
    // skeleton does): the launch figures then measure hal over a driver doing almost nothing.
    ctx.ir = (ctx.info.ir_mask & HAL_IR_SPIRV) ? HAL_IR_SPIRV
             : (ctx.info.ir_mask & HAL_IR_PTX) ? HAL_IR_PTX
                                               : HAL_IR_BUILTIN;
    BENCH_CHECK(hal_stream_create(ctx.device, &ctx.stream));
    report.set_device({ctx.info, options.selector});
    std::printf("hal-bench on %s (%s)%s\n", ctx.info.name, options.selector.c_str(),
                options.quick ? ", quick" : "");
    report.note("load average at start: " + read_loadavg() + " (" +
                std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " CPUs online)");
    for (const char* var : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS",
                            "OMP_NUM_THREADS", "LP_NUM_THREADS"}) {
      if (const char* v = std::getenv(var); v != nullptr) {
        report.note(std::string("environment: ") + var + "=" + v +
                    " (baselines are measured as the environment gives them)");
      }
    }

    const std::vector<std::pair<const char*, void (*)(bench::Context&)>> families = {
        {"launch", bench::bench_launch},
        {"copy", bench::bench_copy},
        {"memory", bench::bench_memory},
        {"module_load", bench::bench_module_load},
        {"module_load_ptx", bench::bench_module_load_ptx},
        {"matmul", bench::bench_matmul},
        {"attention", bench::bench_attention},
        {"ptx_vulkan", bench::bench_ptx_vulkan},
        {"ptx_vulkan", bench::bench_ptx_vulkan_rivals},
        {"cpu_ptx", bench::bench_cpu_ptx},
    };
    for (const auto& [name, run] : families) {
      try {
        run(ctx);
      } catch (const std::exception& e) {
        report.error(std::string(name) + ": " + e.what());
        // Leave the stream usable for the next family.
        hal_stream_synchronize(ctx.stream);
      }
    }
    report.note("load average at end: " + read_loadavg());
  } catch (const std::exception& e) {
    report.error(e.what());
  }
  report.set_elapsed((bench::now_us() - start_us) / 1e6);
  report.print_summary();
  std::printf("\n%zu figures in %.1f s\n", report.figures().size(),
              (bench::now_us() - start_us) / 1e6);
  if (report.figures().empty()) report.error("no figure was produced (check --filter)");
  if (report.error_count() > 0) status = 1;

  if (!options.json_path.empty()) {
    std::ofstream out(options.json_path);
    out << report.json();
    if (!out) {
      std::fprintf(stderr, "hal-bench: cannot write %s\n", options.json_path.c_str());
      status = 1;
    }
  }
  if (ctx.stream != nullptr) hal_stream_destroy(ctx.stream);
  if (cache_dir != nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(cache_dir, ec);
  }
  return status;
}
