// What a run covered on each device, and the minimum a submittable run must cover
// (docs/CONFORMANCE.md, "A submittable run"). A run with no failure can still have checked
// little: a device that provides one kernel of the pack skips most of Numerics, and one that
// lacks a kernel the limit checks need skips those. The coverage says so, in every report.
#pragma once

#include <string>
#include <vector>

namespace cts {

struct Device;
struct TestRecord;

struct Coverage {
  std::string device;  // label
  int tests = 0, passed = 0, skipped = 0;
  int numerics_run = 0, numerics_tests = 0;  // Numerics tests not skipped, of those registered
  int pack_kernels = 0, pack_provided = 0;   // the pack's kernels, and those the device runs
  // Areas where every test skipped on a device that takes neither SPIR-V nor PTX, the IRs of
  // hal-cts's own kernels: not held against the minimum. On any other device an area whose
  // every test skipped is below it.
  std::vector<std::string> not_applicable;
  // Why the device is below the minimum, one sentence each; empty when it meets it.
  std::vector<std::string> below_minimum;
};

// The tests every device must pass, not skip: the four smoke kernels (a device that computes
// nothing the suite can check is not shown to compute) and the launches at the device's limits
// (the limits hal enforces on every launch must be ones the device honours).
extern const char* const kRequiredTests[];
extern const size_t kRequiredTestCount;

// The coverage of |records| on |device|. Loads each of the pack's built-in kernels once on a
// device of built-in kernels, to count those its driver provides.
Coverage coverage_of(const Device& device, const std::vector<TestRecord>& records);

// "skeleton_0: 40 of 87 tests passed, 47 skipped; Numerics: 4 of 42 run, the device provides 4
// of the pack's 39 kernels; not applicable: Execution (...)".
std::string coverage_text(const Coverage& c);

}  // namespace cts
