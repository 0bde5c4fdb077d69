// Coverage and the minimum of a submittable run.
#include "coverage.h"

#include <hal_kernels/hal_kernels.h>

#include <algorithm>

#include "cts.h"
#include "report.h"

namespace cts {

const char* const kRequiredTests[] = {
    "Numerics.SmokeFill",  "Numerics.SmokeCopy",        "Numerics.SmokeVectorAdd",
    "Numerics.SmokeSaxpy", "Launch.GridAtDeviceLimits", "Launch.BlockAtDeviceLimits",
};
const size_t kRequiredTestCount = sizeof kRequiredTests / sizeof kRequiredTests[0];

namespace {

// Kernels of the pack that |device| runs in the IR the pack is loaded in there: for built-in
// kernels, those its driver provides (hal_module_load answers); otherwise those the pack has in
// that IR and whose features the device has.
int pack_kernels_provided(const Device& device) {
  const hal_ir ir = pack_ir_of(device);
  if (ir == HAL_IR_AUTO) return 0;
  int provided = 0;
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) {
    const hal_kernel_info* k = hal_kernels_get(i);
    const hal_kernel_blob* blob = hal_kernels_find(k->name, ir);
    if (blob == nullptr) continue;
    if (ir != HAL_IR_BUILTIN) {
      provided += hal_kernels_runs_on(k, ir, &device.info, nullptr, 0) != 0;
      continue;
    }
    hal_module module = nullptr;
    if (hal_module_load(device.device, blob->data, blob->size, nullptr, &module) == HAL_SUCCESS) {
      ++provided;
      hal_module_unload(module);
    }
  }
  return provided;
}

}  // namespace

Coverage coverage_of(const Device& device, const std::vector<TestRecord>& records) {
  Coverage c;
  c.device = device.label;
  c.pack_kernels = static_cast<int>(hal_kernels_count());
  c.pack_provided = pack_kernels_provided(device);
  struct Area {
    std::string name;
    int skipped = 0, tests = 0;
  };
  std::vector<Area> areas;
  for (const TestRecord& r : records) {
    if (r.device != device.label) continue;
    ++c.tests;
    const bool passed = r.outcome == Outcome::kPassed || r.outcome == Outcome::kUnexpectedPass;
    c.passed += passed;
    c.skipped += r.outcome == Outcome::kSkipped;
    if (r.area == "Numerics") {
      ++c.numerics_tests;
      c.numerics_run += r.outcome != Outcome::kSkipped;
    }
    auto a =
        std::find_if(areas.begin(), areas.end(), [&](const Area& x) { return x.name == r.area; });
    if (a == areas.end()) a = areas.insert(areas.end(), Area{r.area});
    ++a->tests;
    a->skipped += r.outcome == Outcome::kSkipped;
  }
  for (size_t i = 0; i < kRequiredTestCount; ++i) {
    const std::string name = kRequiredTests[i];
    auto r = std::find_if(records.begin(), records.end(), [&](const TestRecord& x) {
      return x.device == device.label && x.area + "." + x.test == name;
    });
    if (r == records.end()) {
      c.below_minimum.push_back(name + " did not run");
    } else if (r->outcome == Outcome::kSkipped) {
      c.below_minimum.push_back(name + " was skipped (" + r->message + ")");
    } else if (r->outcome == Outcome::kKnownFailure) {
      c.below_minimum.push_back(name + " is a known failure, not a pass");
    }
  }
  const bool own_ir = (device.info.ir_mask & (HAL_IR_SPIRV | HAL_IR_PTX)) != 0;
  // Every area must have run on the device: a failure or a known failure is a result, a skip
  // is none.
  for (const Area& a : areas) {
    if (a.skipped < a.tests || a.name == "Perf") continue;
    if (!own_ir) {
      c.not_applicable.push_back(a.name);
    } else {
      c.below_minimum.push_back("every test of area " + a.name + " was skipped");
    }
  }
  return c;
}

std::string coverage_text(const Coverage& c) {
  std::string text = c.device + ": " + std::to_string(c.passed) + " of " + std::to_string(c.tests) +
                     " tests passed, " + std::to_string(c.skipped) +
                     " skipped; Numerics: " + std::to_string(c.numerics_run) + " of " +
                     std::to_string(c.numerics_tests) + " run, the device provides " +
                     std::to_string(c.pack_provided) + " of the pack's " +
                     std::to_string(c.pack_kernels) + " kernels";
  if (!c.not_applicable.empty()) {
    text += "; not applicable (the device takes neither SPIR-V nor PTX):";
    for (size_t i = 0; i < c.not_applicable.size(); ++i) {
      text += (i == 0 ? " " : ", ") + c.not_applicable[i];
    }
  }
  return text;
}

}  // namespace cts
