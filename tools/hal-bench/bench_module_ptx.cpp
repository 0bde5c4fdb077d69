// Module load of PTX on a Vulkan device: hal_module_load of the pack's largest translatable PTX
// module (matmul.ptx, twelve kernels; smoke.ptx, four, with --quick), which translates it to
// SPIR-V, with the translation cache empty (cold) and again once the cold load has filled it
// (cached), against loading the same kernels' hand-written SPIR-V.
//
// The translation cache is read at every load, not once per process as the pipeline cache is,
// so this is measured in this process: its cache directory is the run's own temporary
// HAL_CACHE_DIR (main.cpp), and the translation cache is its ptx-spirv/ folder (docs/ABI.md,
// "PTX on Vulkan devices"), deleted before each cold load. That each cold load wrote a
// translation there, and that each cached load did not replace it (a file that fails its checks
// is translated again and replaced), is checked, so neither side is mistaken for the other. Only
// the load is timed: the driver compiles a kernel's pipeline at its first launch, which the
// module_load_warm figure covers.
//
// A device does not validate again the words it has validated before (validated_spirv.h), which
// would make every repetition after the first cheaper than a first load in a new process. So
// each repetition loads modules no earlier one did: the PTX with its kernels renamed (the
// translation then differs in their names), and the SPIR-V twins with another generator word in
// their header (which the validator does not read).
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common.h"

namespace bench {

namespace {

// The goal: translating and loading a kernel, cold, in at most this.
constexpr double kColdGoalMs = 100.0;

// Milliseconds of one hal_module_load of |blob| (the module unloaded after, untimed).
double load_ms(const Context& ctx, const void* data, size_t size) {
  hal_module module = nullptr;
  const double t0 = now_us();
  BENCH_CHECK(hal_module_load(ctx.device, data, size, nullptr, &module));
  const double t1 = now_us();
  hal_module_unload(module);
  return (t1 - t0) / 1000.0;
}

// The translation files under |dir|, each with its inode: hal writes a translation to a
// temporary file renamed over the old one, so a file translated again is a new inode, while a
// read leaves the inode as it was (it may touch the time, to keep the file in the cache).
std::vector<std::pair<std::string, ino_t>> cache_files(const std::filesystem::path& dir) {
  std::vector<std::pair<std::string, ino_t>> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    struct stat st {};
    if (entry.is_regular_file(ec) && stat(entry.path().c_str(), &st) == 0) {
      files.emplace_back(entry.path().string(), st.st_ino);
    }
  }
  return files;
}

// |ptx| with every kernel's name suffixed by |suffix|.
std::string rename_kernels(std::string_view ptx, const std::string& suffix) {
  std::string out;
  out.reserve(ptx.size() + 64);
  const std::string_view entry = ".entry ";
  size_t at = 0;
  for (size_t found; (found = ptx.find(entry, at)) != std::string_view::npos;) {
    size_t end = found + entry.size();
    while (end < ptx.size() && ptx[end] == ' ') ++end;
    while (end < ptx.size() && (std::isalnum(static_cast<unsigned char>(ptx[end])) ||
                                ptx[end] == '_' || ptx[end] == '$')) {
      ++end;
    }
    out.append(ptx.substr(at, end - at)).append(suffix);
    at = end;
  }
  out.append(ptx.substr(at));
  return out;
}

// A copy of the SPIR-V |blob| whose header's generator word is |generator|.
std::vector<uint8_t> with_generator(const hal_kernel_blob& blob, uint32_t generator) {
  const auto* bytes = static_cast<const uint8_t*>(blob.data);
  std::vector<uint8_t> out(bytes, bytes + blob.size);
  if (out.size() >= 12) std::memcpy(out.data() + 8, &generator, 4);
  return out;
}

}  // namespace

void bench_module_load_ptx(Context& ctx) {
  const std::string cold_name = "module_load_ptx_cold_per_kernel";
  const std::string cached_name = "module_load_ptx_cached";
  if (!ctx.wants(cold_name) && !ctx.wants(cached_name)) return;
  const bool named = ctx.options.filter.find("module_load_ptx") != std::string::npos;
  if (!ctx.is_vulkan() || (ctx.info.ir_mask & HAL_IR_PTX) == 0) {
    if (named) {
      ctx.report->note(
          "module_load_ptx: skipped: the device is not a Vulkan device that takes PTX (only "
          "there is PTX translated)");
    }
    return;
  }
  if (ctx.cache_dir.empty()) {
    // The cache in use is the user's: not ours to empty.
    ctx.report->note(
        "module_load_ptx: skipped: no temporary cache directory could be made, and the user's "
        "translation cache is not emptied");
    return;
  }
  const hal_kernel_blob* module =
      hal_kernels_find(ctx.options.quick ? "saxpy" : "matmul_tiled_f32_64x64", HAL_IR_PTX);
  // Its kernels, and their SPIR-V twins.
  size_t module_kernels = 0;
  std::vector<const hal_kernel_blob*> twins;
  std::string missing_twins;
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) {
    const hal_kernel_info* info = hal_kernels_get(i);
    const hal_kernel_blob* ptx = hal_kernels_find(info->name, HAL_IR_PTX);
    if (ptx == nullptr || ptx->data != module->data) continue;
    ++module_kernels;
    const hal_kernel_blob* spirv = hal_kernels_find(info->name, HAL_IR_SPIRV);
    if (spirv != nullptr && hal_kernels_runs_on(info, HAL_IR_SPIRV, &ctx.info, nullptr, 0) != 0) {
      twins.push_back(spirv);
    } else {
      missing_twins += std::string(missing_twins.empty() ? "" : ", ") + info->name;
    }
  }

  const std::filesystem::path translations = std::filesystem::path(ctx.cache_dir) / "ptx-spirv";
  // The translator's and validator's code and tables, paged in by a small module first, so that
  // the first cold sample pays what the others do.
  const hal_kernel_blob* small = hal_kernels_find("saxpy", HAL_IR_PTX);
  load_ms(ctx, small->data, small->size);

  const uint32_t reps = ctx.reps(5, 1);
  std::vector<double> cold, cached, spirv;
  for (uint32_t i = 0; i < reps; ++i) {
    auto load_twins = [&] {
      double ms = 0;
      for (const hal_kernel_blob* twin : twins) {
        const std::vector<uint8_t> fresh = with_generator(*twin, 0x48410000u + i);
        ms += load_ms(ctx, fresh.data(), fresh.size());
      }
      spirv.push_back(ms);
    };
    // The PTX text up to its NUL, as hal_module_load reads it; then a NUL again.
    std::string ptx = rename_kernels(
        std::string_view(static_cast<const char*>(module->data),
                         strnlen(static_cast<const char*>(module->data), module->size)),
        "_rep" + std::to_string(i));
    ptx.push_back('\0');
    // The SPIR-V loads go first and last in turn, so neither PTX load always follows them.
    if (i % 2 == 1) load_twins();
    std::error_code ec;
    std::filesystem::remove_all(translations, ec);
    if (!cache_files(translations).empty()) {
      throw HalError("cannot empty the translation cache " + translations.string());
    }
    cold.push_back(load_ms(ctx, ptx.data(), ptx.size()));
    const auto written = cache_files(translations);
    if (written.empty()) {
      throw HalError("the cold load wrote no translation under " + translations.string() +
                     ": the cached load would not be cached");
    }
    cached.push_back(load_ms(ctx, ptx.data(), ptx.size()));
    if (cache_files(translations) != written) {
      throw HalError("the cached load translated again (it replaced " + written[0].first +
                     "): hal did not accept its own cached translation");
    }
    if (i % 2 == 0) load_twins();
  }

  const double count = static_cast<double>(module_kernels);
  const std::string module_text = std::string(module->file) + " (" +
                                  std::to_string(module_kernels) + " kernels, " +
                                  bytes_text(module->size) + ")";
  const Stats cold_stats = Stats::of(cold), cached_stats = Stats::of(cached);
  auto per_kernel = [count](double ms) { return ms / count; };
  auto text = [](double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", ms);
    return std::string(buf);
  };
  const std::vector<std::pair<std::string, std::string>> params = {
      {"module", module_text},
      {"kernels", std::to_string(module_kernels)},
      {"cold_ms_per_module", text(cold_stats.median)},
      {"cold_ms_per_kernel", text(cold_stats.median / count)},
      {"cached_ms_per_module", text(cached_stats.median)},
      {"cached_ms_per_kernel", text(cached_stats.median / count)},
      {"cache",
       "HAL_CACHE_DIR/ptx-spirv, in the run's own temporary HAL_CACHE_DIR, deleted "
       "before each cold load"}};
  const std::string what_load =
      "hal_module_load alone (parse, translation to SPIR-V, validation, reflection, shader "
      "module; the pipelines are compiled at the first launch, not timed here)";

  if (ctx.wants(cold_name)) {
    Figure f;
    f.family = "module_load";
    f.name = cold_name;
    f.what = "milliseconds per kernel of " + what_load + " of " + module_text +
             ", with the translation cache empty (cold), over its kernel count";
    f.unit = "ms";
    f.params = params;
    f.value = cold_stats.map(per_kernel);
    f.has_baseline = missing_twins.empty() && !twins.empty();
    if (f.has_baseline) {
      f.baseline_name =
          "hal_module_load of the same kernels' hand-written SPIR-V, one module per "
          "kernel, per kernel";
      f.baseline = Stats::of(spirv).map(per_kernel);
    } else {
      f.baseline_missing = "no SPIR-V twin on this device for " + missing_twins;
    }
    f.target = {true, true, kColdGoalMs, "at most 100 ms per kernel to translate and load, cold",
                true};
    f.note =
        "The ratio is what translating costs over loading SPIR-V that needs none; a PTX module is "
        "translated whole, whichever of its kernels is used. Most of a cold load is "
        "validating the SPIR-V, whose size is many times the hand-written SPIR-V's: a smaller "
        "translation is the lever (docs/PERFORMANCE.md, PTX on Vulkan devices). A cached load "
        "neither translates nor validates again.";
    ctx.report->add(std::move(f));
  }
  if (ctx.wants(cached_name)) {
    Figure f;
    f.family = "module_load";
    f.name = cached_name;
    f.what = "milliseconds of " + what_load + " of " + module_text +
             ", its translation read from the cache a cold load just filled";
    f.unit = "ms";
    f.params = params;
    f.value = cached_stats;
    f.has_baseline = true;
    f.baseline_name = "the same load with the translation cache empty (cold), just before";
    f.baseline = cold_stats;
    f.note =
        "A cached load skips the translation, not the checks: what is read from the cache is "
        "validated and reflected as a fresh translation is, which is the cost left.";
    ctx.report->add(std::move(f));
  }
}

}  // namespace bench
