// hal-cts: the conformance suite. Runs every check of a hal device through libhal's public C API
// and reports each test as passed, failed, skipped (with the reason) or a known failure.
//
//   hal-cts [--device <selector>]... [--quick] [--perf] [--filter <pattern>] [--json <file>]
//           [--known-failures <file>] [--list]
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
#include "known_failures.h"
#include "report.h"

namespace {

constexpr int kExitNoDevice = 77;

const char kUsage[] =
    "usage: hal-cts [--device <selector>]... [--quick] [--perf] [--filter <pattern>]\n"
    "               [--json <file>] [--known-failures <file>] [--list]\n"
    "\n"
    "  --device <selector>      a hal selector: vulkan:0, cuda:0, 2, default, or part of a\n"
    "                           device name; repeat or separate by commas (default: every device)\n"
    "  --quick                  small shapes and few repetitions\n"
    "  --perf                   also measure bandwidth, launch rate and GFLOP/s\n"
    "  --filter <pattern>       run only matching tests, gtest syntax: Area.Test*:Other.*-Excl.*\n"
    "  --json <file>            write the report as JSON\n"
    "  --known-failures <file>  use this list instead of the built-in one\n"
    "  --list                   list the tests and exit\n";

struct Args {
  std::vector<std::string> selectors;
  bool quick = false, perf = false, list = false;
  std::string filter, json, known_failures;
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
    } else if (a == "--list") {
      args->list = true;
    } else if (a == "--filter") {
      if (!value(&args->filter)) return false;
    } else if (a == "--json") {
      if (!value(&args->json)) return false;
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
  d.backend_name = cts::backend_name(d.info.backend);
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
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);

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
  cts::set_options(options);

  cts::KnownFailures known;
  std::vector<std::string> errors;
  if (args.known_failures.empty()) {
    known.parse(cts::builtin_known_failures(), "built-in known_failures.txt", &errors);
  } else {
    std::string text;
    if (!read_file(args.known_failures, &text)) {
      std::fprintf(stderr, "hal-cts: cannot read %s\n", args.known_failures.c_str());
      return 2;
    }
    known.parse(text, args.known_failures, &errors);
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

  const double start = cts::now_ms();
  [[maybe_unused]] const int gtest_status = RUN_ALL_TESTS();  // known failures fail in gtest
  const double total_ms = cts::now_ms() - start;

  recorder->print_summary(total_ms);
  if (args.perf) recorder->print_perf();
  if (!args.json.empty()) {
    std::ofstream out(args.json, std::ios::binary);
    out << recorder->json(command_line, total_ms);
    if (!out) {
      std::fprintf(stderr, "hal-cts: cannot write %s\n", args.json.c_str());
      return 2;
    }
    std::printf("report written to %s\n", args.json.c_str());
  }
  return recorder->failures() == 0 ? 0 : 1;
}
