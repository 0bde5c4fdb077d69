// hal-cts: the conformance suite. Runs every check of a hal device through libhal's public C API
// and reports each test as passed, failed, skipped (with the reason) or a known failure.
//
//   hal-cts [--device <selector>]... [--quick] [--perf] [--ir <spirv|ptx>] [--filter <pattern>]
//           [--json <file>] [--report-md <file>] [--known-failures <file>] [--list]
//
// Exit status: 0 when no test failed (known failures do not count), 1 when one did, 2 on a usage
// or setup error, 77 when the selector matches no device (a skip for ctest).
#include <gtest/gtest.h>
#include <hal/hal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cts.h"
#include "device_json.h"
#include "known_failures.h"
#include "report.h"
#include "run_info.h"

namespace {

constexpr int kExitNoDevice = 77;

const char kUsage[] =
    "usage: hal-cts [--device <selector>]... [--quick] [--perf] [--ir <spirv|ptx>]\n"
    "               [--filter <pattern>] [--json <file>] [--report-md <file>]\n"
    "               [--known-failures <file>] [--list]\n"
    "\n"
    "  --device <selector>      a hal selector: vulkan:0, cuda:0, 2, default, or part of a\n"
    "                           device name; repeat or separate by commas (default: every device)\n"
    "  --quick                  small shapes and few repetitions\n"
    "  --perf                   also measure bandwidth, launch rate and GFLOP/s\n"
    "  --ir <spirv|ptx>         load the kernel pack in this IR on every device: ptx on a Vulkan\n"
    "                           device runs the pack's PTX through translation; the pack's tests\n"
    "                           skip on a device that does not take it (default: SPIR-V where\n"
    "                           taken, else PTX, else the device's built-in kernels)\n"
    "  --filter <pattern>       run only matching tests, gtest syntax: Area.Test*:Other.*-Excl.*\n"
    "  --json <file>            write the report as JSON\n"
    "  --report-md <file>       write the one-page summary to publish, in Markdown\n"
    "  --known-failures <file>  a vendor's own known-failure list, applied besides the\n"
    "                           built-in one (its SHA-256 goes into the report)\n"
    "  --list                   list the tests and exit\n";

struct Args {
  std::vector<std::string> selectors;
  bool quick = false, perf = false, list = false;
  hal_ir ir = HAL_IR_AUTO;
  std::string filter, json, report_md, known_failures;
  std::vector<std::string> gtest_flags;
};

bool parse(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "hal-cts: %s needs a value\n", a.c_str());
        return false;
      }
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--device") {
      if (!value(&v)) return false;
      std::stringstream ss(v);
      for (std::string s; std::getline(ss, s, ',');) args->selectors.push_back(s);
    } else if (a == "--quick") {
      args->quick = true;
    } else if (a == "--perf") {
      args->perf = true;
    } else if (a == "--ir") {
      if (!value(&v)) return false;
      if (v == "spirv") {
        args->ir = HAL_IR_SPIRV;
      } else if (v == "ptx") {
        args->ir = HAL_IR_PTX;
      } else {
        std::fprintf(stderr, "hal-cts: --ir takes spirv or ptx, not '%s'\n\n%s", v.c_str(), kUsage);
        return false;
      }
    } else if (a == "--list") {
      args->list = true;
    } else if (a == "--filter") {
      if (!value(&args->filter)) return false;
    } else if (a == "--json") {
      if (!value(&args->json)) return false;
    } else if (a == "--report-md") {
      if (!value(&args->report_md)) return false;
    } else if (a == "--known-failures") {
      if (!value(&args->known_failures)) return false;
    } else if (a.rfind("--gtest_", 0) == 0) {
      args->gtest_flags.push_back(a);
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "hal-cts: unknown argument '%s'\n\n%s", a.c_str(), kUsage);
      return false;
    }
  }
  return true;
}

cts::Device describe_device(hal_device device) {
  cts::Device d;
  d.device = device;
  d.info.struct_size = sizeof d.info;
  hal_device_get_info(device, &d.info);
  // The backend's own name ("cuda", "vulkan", a driver module's such as "skeleton"), and the
  // module it came from, for the reports.
  d.backend_name = d.info.backend_name;
  uint32_t backends = 0;
  hal_backend_count(&backends);
  for (uint32_t b = 0; b < backends; ++b) {
    hal_backend_info bi{};
    bi.struct_size = sizeof bi;
    if (hal_backend_get_info(b, &bi) == HAL_SUCCESS && bi.available && d.backend_name == bi.name) {
      d.module = bi.module;
      break;
    }
  }
  d.label = d.backend_name + "_" + std::to_string(d.info.backend_index);
  return d;
}

// The devices named by |selectors| (every device when empty), without repeats. Returns the
// exit status to stop with, or 0.
int select_devices(const std::vector<std::string>& selectors, std::vector<cts::Device>* out) {
  std::set<uint32_t> seen;
  std::vector<hal_device> found;
  if (selectors.empty()) {
    uint32_t count = 0;
    hal_device_count(&count);
    for (uint32_t i = 0; i < count; ++i) {
      hal_device d = nullptr;
      if (hal_device_get(i, &d) == HAL_SUCCESS) found.push_back(d);
    }
    if (found.empty()) {
      std::fprintf(stderr, "hal-cts: no device found; hal-info says why a backend is missing\n");
      return kExitNoDevice;
    }
  }
  for (const std::string& s : selectors) {
    hal_device d = nullptr;
    const hal_status status = hal_device_find(s.c_str(), &d);
    if (status == HAL_ERROR_NOT_FOUND) {
      std::fprintf(stderr, "hal-cts: no device matches '%s': %s\n", s.c_str(), hal_last_error());
      return kExitNoDevice;
    }
    if (status != HAL_SUCCESS) {
      std::fprintf(stderr, "hal-cts: bad device selector '%s': %s\n", s.c_str(), hal_last_error());
      return 2;
    }
    found.push_back(d);
  }
  for (hal_device d : found) {
    cts::Device dev = describe_device(d);
    if (seen.insert(dev.info.global_index).second) out->push_back(dev);
  }
  return 0;
}

bool read_file(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  return true;
}

std::string gtest_filter(const Args& args) {
  std::string filter = args.filter.empty() ? "*" : args.filter;
  if (!args.perf) filter += filter.find('-') == std::string::npos ? "-Perf.*" : ":Perf.*";
  return filter;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse(argc, argv, &args)) return 2;
  std::string command_line;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) command_line += ' ';
    command_line += argv[i];
  }

  if (const hal_status s = hal_init(); s != HAL_SUCCESS) {
    std::fprintf(stderr, "hal-cts: hal_init failed: %s\n", hal_last_error());
    return 2;
  }
  std::vector<cts::Device> devices;
  if (const int rc = select_devices(args.selectors, &devices); rc != 0) return rc;
  cts::set_devices(std::move(devices));
  cts::Options options;
  options.quick = args.quick;
  options.perf = args.perf;
  options.ir = args.ir;
  cts::set_options(options);

  cts::RunContext run;
  run.command_line = command_line;
  run.host = cts::describe_host();
  run.filtered = !args.filter.empty();
  cts::KnownFailures known;
  std::vector<std::string> errors;
  run.known_failures_text = cts::builtin_known_failures();
  known.parse(run.known_failures_text, "built-in known_failures.txt", false, &errors);
  if (!args.known_failures.empty()) {
    run.vendor_known_failures_source = args.known_failures;
    if (!read_file(args.known_failures, &run.vendor_known_failures_text)) {
      std::fprintf(stderr, "hal-cts: cannot read %s\n", args.known_failures.c_str());
      return 2;
    }
    known.parse(run.vendor_known_failures_text, args.known_failures, true, &errors);
  }
  for (const std::string& e : errors) std::fprintf(stderr, "hal-cts: %s\n", e.c_str());
  if (!errors.empty()) return 2;

  // gtest sees only its own flags; the parameterised tests are instantiated here, over the
  // devices chosen above.
  std::vector<std::string> gargs = {argv[0]};
  for (const std::string& f : args.gtest_flags) gargs.push_back(f);
  std::vector<char*> gargv;
  for (std::string& s : gargs) gargv.push_back(s.data());
  int gargc = static_cast<int>(gargv.size());
  gargv.push_back(nullptr);
  ::testing::InitGoogleTest(&gargc, gargv.data());
  GTEST_FLAG_SET(filter, gtest_filter(args));
  if (args.list) {
    GTEST_FLAG_SET(list_tests, true);
    return RUN_ALL_TESTS();
  }

  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  auto* recorder = new cts::Recorder(known, stdout);
  listeners.Append(recorder);  // owned by gtest

  // The header a reader of the log needs to know what ran.
  run.started_at = cts::utc_now();
  std::printf("hal-cts %s (commit %s), %s, %s run, kernel pack in %s IR\n",
              hal_tools::version_text(hal_version()).c_str(), cts::build_commit(),
              run.started_at.c_str(), args.quick ? "quick" : "full", cts::ir_text(args.ir));
  std::printf("host: %s, %s %s%s%s\n", run.host.os.c_str(), run.host.kernel.c_str(),
              run.host.machine.c_str(), run.host.cpu.empty() ? "" : ", ", run.host.cpu.c_str());
  for (const cts::Device& d : cts::devices()) {
    std::printf("device %s: %s, driver %s %s%s%s\n", d.label.c_str(), d.info.name,
                d.info.driver_name, hal_tools::driver_version_text(d.info).c_str(),
                d.info.driver_info[0] != '\0' ? ", " : "", d.info.driver_info);
  }
  std::printf("known failures: built-in list (sha256 %s)",
              cts::sha256_hex(run.known_failures_text).c_str());
  if (!run.vendor_known_failures_source.empty()) {
    std::printf(", and the vendor's %s (sha256 %s)", run.vendor_known_failures_source.c_str(),
                cts::sha256_hex(run.vendor_known_failures_text).c_str());
  }
  std::printf("\n\n");
  std::fflush(stdout);

  const double start = cts::now_ms();
  [[maybe_unused]] const int gtest_status = RUN_ALL_TESTS();  // known failures fail in gtest
  const double total_ms = cts::now_ms() - start;
  run.finished_at = cts::utc_now();

  recorder->print_summary(total_ms);
  if (args.perf) recorder->print_perf();
  std::vector<std::string> reasons;
  if (recorder->submittable(run, &reasons)) {
    std::printf("submittable: yes (docs/CONFORMANCE.md)\n");
  } else {
    std::printf("submittable: no");
    for (size_t i = 0; i < reasons.size(); ++i) {
      std::printf("%s%s", i == 0 ? ": " : "; ", reasons[i].c_str());
    }
    std::printf("\n");
  }
  const std::pair<const std::string*, std::string> outputs[] = {
      {&args.json, args.json.empty() ? "" : recorder->json(run, total_ms)},
      {&args.report_md, args.report_md.empty() ? "" : recorder->markdown(run, total_ms)}};
  for (const auto& [path, text] : outputs) {
    if (path->empty()) continue;
    std::ofstream out(*path, std::ios::binary);
    out << text;
    if (!out) {
      std::fprintf(stderr, "hal-cts: cannot write %s\n", path->c_str());
      return 2;
    }
    std::printf("report written to %s\n", path->c_str());
  }
  return recorder->failures() == 0 ? 0 : 1;
}
