// Area Subgroups: what a device's subgroups (warps) really are, and the operations across them.
//
// In SPIR-V (kernels/sg_*.comp, GLSL's GL_KHR_shader_subgroup_*), every kernel writes, for each
// invocation, the subgroup size, invocation id, subgroup id and subgroup count it reads, and the
// host builds the workgroup's subgroups from them: nothing assumes which invocations a device
// puts together, nor that the last subgroup of a workgroup whose size is not a multiple of the
// subgroup size is full. The layout is held to Vulkan's rules first (SubgroupSize equals the
// subgroupSize the device reports, ids below it and unique within a subgroup, subgroup ids
// numbering NumSubgroups subgroups), then every lane's result of ballots, votes, shuffles,
// reductions and scans is checked against a host model of that layout, on random data, in
// 1-D workgroups (2-D and 3-D ones have layout checks of their own). The operations run in
// uniform control flow, where every invocation of a subgroup is active; which invocations are
// active together on a divergent path is not promised without maximal reconvergence, so it is
// not checked. A pipeline without a required subgroup size (hal-cts's SPIR-V 1.5 modules) runs
// the default size the device reports, so a device that reports one size and runs another fails
// here: SubgroupSize reads another value, or the invocations of one SubgroupId do not ballot
// and add as one subgroup. A required size cannot be asked for from GLSL; hal asks for 32 for
// warp-level PTX only, where its probe finds the device runs 32 lanes then. Elsewhere warps run
// through workgroup memory, which refuses warp instructions in divergent code: the Warp* tests,
// whose partial member masks come from branches, skip there with that reason.
//
// In PTX (kernels/sg_warp.ptx, sg_redux.ptx, sg_match.ptx), warp instructions on 32-lane warps,
// numbered as CUDA numbers a block's threads, with full member masks and partial ones (the
// other lanes branch around), and blocks whose last warp is partial.
//
// Each check runs only in the IR its kernels are written in; a device that does not take that
// IR, or lacks the feature, skips with the reason.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

constexpr uint32_t kRecord = 32;  // words each invocation writes (kernels/sg_*.comp, sg_*.ptx)
constexpr uint32_t kUnwritten = 0xDEADBEEFu;
constexpr uint32_t kNone = UINT32_MAX;
constexpr uint32_t kWarp = 32;

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

struct Shape {
  uint32_t x = 1, y = 1, z = 1;
  uint32_t threads() const { return x * y * z; }
  std::string text() const {
    return std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z);
  }
  bool operator<(const Shape& o) const {
    return std::array<uint32_t, 3>{x, y, z} < std::array<uint32_t, 3>{o.x, o.y, o.z};
  }
};

// One launch: its inputs (two words per invocation) and the records it wrote.
struct Records {
  Shape block;
  uint32_t groups = 0;
  std::vector<uint32_t> in;
  std::vector<uint32_t> out;
  uint32_t count() const { return block.threads() * groups; }
  const uint32_t* rec(uint32_t i) const { return &out[size_t{i} * kRecord]; }
  uint32_t a(uint32_t i) const { return in[2 * size_t{i}]; }
  uint32_t b(uint32_t i) const { return in[2 * size_t{i} + 1]; }
  // "invocation 37 (workgroup 1, local index 5)"
  std::string where(uint32_t i) const {
    return "invocation " + std::to_string(i) + " (workgroup " +
           std::to_string(i / block.threads()) + ", local index " +
           std::to_string(i % block.threads()) + ")";
  }
};

// Up to five wrong results, and how many there were among how many checked.
class Mismatches {
 public:
  void check(bool ok, const std::string& detail) {
    ++checked_;
    if (ok) return;
    if (wrong_++ < 5) first_ += "\n    " + detail;
  }
  // One failure naming |what| was run and |rule|, with the first mismatches.
  void report(const std::string& what, const std::string& rule) const {
    if (wrong_ == 0) return;
    ADD_FAILURE() << what << ": " << wrong_ << " of " << checked_ << " results wrong. " << rule
                  << "\n  first mismatches:" << first_;
  }
  uint32_t wrong() const { return wrong_; }

 private:
  uint32_t checked_ = 0, wrong_ = 0;
  std::string first_;
};

std::string got_expected(uint32_t got, uint32_t expected) {
  return "got " + hex(got) + ", expected " + hex(expected);
}

// ---- The measured subgroup layout (SPIR-V) ----------------------------------------------------

// A 128-bit ballot, as uvec4.
using Bits = std::array<uint32_t, 4>;
bool bit(const Bits& b, uint32_t i) {
  return i < 128 && ((b[i / 32] >> (i % 32)) & 1u) != 0;
}
void set_bit(Bits* b, uint32_t i) {
  (*b)[i / 32] |= 1u << (i % 32);
}
uint32_t popcount(const Bits& b) {
  uint32_t n = 0;
  for (uint32_t w : b) n += static_cast<uint32_t>(__builtin_popcount(w));
  return n;
}
std::string bits_text(const Bits& b) {
  return hex(b[3]) + ":" + hex(b[2]) + ":" + hex(b[1]) + ":" + hex(b[0]);
}

struct Subgroup {
  uint32_t group = 0, id = 0;
  std::vector<uint32_t> lane;  // by invocation id: the invocation's index in the launch, or kNone
  Bits members{};              // the ids present
  uint32_t count = 0;
  bool has(uint32_t id_in) const { return id_in < lane.size() && lane[id_in] != kNone; }
};

struct Layout {
  uint32_t size = 0;
  std::vector<Subgroup> subgroups;
  std::vector<uint32_t> of;  // by invocation: its subgroup's index in |subgroups|
  const Subgroup& subgroup(uint32_t i) const { return subgroups[of[i]]; }
};

// Builds |layout| from a SPIR-V run's records (words 0 to 2: SubgroupSize, SubgroupInvocationId,
// SubgroupId), holding it to Vulkan's rules. Adds one failure per broken rule and returns false
// when the layout cannot be trusted for the checks that follow. The subgroups of a workgroup are
// told apart by SubgroupId alone; NumSubgroups is check_numbering's.
bool measure_layout(const Records& run, uint32_t reported, const std::string& what,
                    Layout* layout) {
  const uint32_t threads = run.block.threads();
  Mismatches size, range, unique;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> index;  // (workgroup, SubgroupId) -> subgroup
  layout->size = reported;
  layout->subgroups.clear();
  layout->of.assign(run.count(), 0);
  for (uint32_t i = 0; i < run.count(); ++i) {
    const uint32_t* r = run.rec(i);
    size.check(r[0] == reported, run.where(i) + " reads SubgroupSize " + std::to_string(r[0]));
    range.check(r[1] < r[0] && r[0] <= 128, run.where(i) + " reads SubgroupInvocationId " +
                                                std::to_string(r[1]) + " with SubgroupSize " +
                                                std::to_string(r[0]));
  }
  size.report(what,
              "In a SPIR-V module older than 1.6 run without a required subgroup size or "
              "ALLOW_VARYING_SUBGROUP_SIZE, SubgroupSize must equal the subgroupSize of "
              "VkPhysicalDeviceSubgroupProperties (Vulkan, built-in SubgroupSize), which "
              "the device reports as " +
                  std::to_string(reported) +
                  " (hal_device_info.subgroup_size): the device runs subgroups of another "
                  "size than it reports");
  range.report(what,
               "SubgroupInvocationId lies in [0, SubgroupSize) and SubgroupSize is at most "
               "128 (Vulkan, built-ins SubgroupLocalInvocationId and SubgroupSize)");
  if (size.wrong() + range.wrong() > 0) return false;

  for (uint32_t i = 0; i < run.count(); ++i) {
    const uint32_t* r = run.rec(i);
    const auto key = std::make_pair(i / threads, r[2]);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, static_cast<uint32_t>(layout->subgroups.size())).first;
      Subgroup s;
      s.group = key.first;
      s.id = key.second;
      s.lane.assign(reported, kNone);
      layout->subgroups.push_back(s);
    }
    Subgroup& s = layout->subgroups[it->second];
    layout->of[i] = it->second;
    unique.check(s.lane[r[1]] == kNone,
                 run.where(i) + " and " +
                     (s.lane[r[1]] == kNone ? std::string("?") : run.where(s.lane[r[1]])) +
                     " both read SubgroupInvocationId " + std::to_string(r[1]) + " in subgroup " +
                     std::to_string(r[2]));
    if (s.lane[r[1]] == kNone) {
      s.lane[r[1]] = i;
      set_bit(&s.members, r[1]);
      ++s.count;
    }
  }
  unique.report(what,
                "The invocations of one subgroup have distinct SubgroupInvocationIds "
                "(Vulkan, built-in SubgroupLocalInvocationId)");
  return unique.wrong() == 0;
}

// NumSubgroups and SubgroupId: every invocation of a workgroup reads the same NumSubgroups, and
// the workgroup's SubgroupIds are exactly 0 to NumSubgroups - 1, one per subgroup. Each subgroup
// has at most SubgroupSize invocations, so a workgroup of W has at least ceil(W / SubgroupSize).
void check_numbering(const Records& run, const std::string& what) {
  const uint32_t threads = run.block.threads();
  Mismatches numbering;
  for (uint32_t g = 0; g < run.groups; ++g) {
    const uint32_t first = g * threads;
    const uint32_t num = run.rec(first)[3];
    std::set<uint32_t> ids, nums;
    for (uint32_t i = first; i < first + threads; ++i) {
      ids.insert(run.rec(i)[2]);
      nums.insert(run.rec(i)[3]);
    }
    std::string seen;
    for (uint32_t id : ids) seen += (seen.empty() ? "" : ", ") + std::to_string(id);
    const bool ok = nums.size() == 1 && ids.size() == num && *ids.rbegin() == num - 1;
    numbering.check(ok, "workgroup " + std::to_string(g) + " of " + std::to_string(threads) +
                            " invocations (subgroups of " + std::to_string(run.rec(first)[0]) +
                            "): its invocations read " + std::to_string(nums.size()) +
                            " different NumSubgroups, the first " + std::to_string(num) +
                            ", and SubgroupIds " + seen);
  }
  numbering.report(what,
                   "NumSubgroups is the number of subgroups in the workgroup, the same for all "
                   "its invocations, and SubgroupId numbers them from 0 to NumSubgroups - 1 "
                   "(Vulkan, built-ins NumSubgroups and SubgroupId), partial subgroups "
                   "included");
}

// ---- The fixture ------------------------------------------------------------------------------

class Subgroups : public DeviceTest {
 protected:
  // Why the SPIR-V checks cannot run here, or "": the device must take SPIR-V (and --ir must not
  // exclude it) and have |feature| (0: basic subgroup operations, which every Vulkan device has).
  std::string no_spirv(uint64_t feature, const char* feature_name) const {
    if (!takes(HAL_IR_SPIRV)) {
      return "These subgroup checks are SPIR-V kernels (GLSL with GL_KHR_shader_subgroup_*), and "
             "the device does not take SPIR-V; its warps are checked by the PTX tests of this "
             "area (Subgroups.Warp*).";
    }
    if (options().ir != HAL_IR_AUTO && options().ir != HAL_IR_SPIRV) {
      return std::string("These subgroup checks are SPIR-V kernels, and --ir asks for ") +
             ir_text(options().ir) + " only.";
    }
    if (feature != 0 && (info().features & feature) == 0) {
      return std::string("The device does not have ") + feature_name +
             " (the subgroup operations its Vulkan driver reports for compute shaders do not "
             "include them).";
    }
    return "";
  }
  // Why the PTX checks cannot run here, or "".
  std::string no_ptx(uint32_t major, uint32_t minor) const {
    if (!takes(HAL_IR_PTX)) {
      return "These warp checks are PTX kernels, and the device does not take PTX; its "
             "subgroups are checked by the SPIR-V tests of this area.";
    }
    if (options().ir != HAL_IR_AUTO && options().ir != HAL_IR_PTX) {
      return std::string("These warp checks are PTX kernels, and --ir asks for ") +
             ir_text(options().ir) + " only.";
    }
    if (info().backend == HAL_BACKEND_CUDA &&
        (info().compute_capability_major < major ||
         (info().compute_capability_major == major && info().compute_capability_minor < minor))) {
      return "The instructions checked need sm_" + std::to_string(major) + std::to_string(minor) +
             "; the device is sm_" + std::to_string(info().compute_capability_major) +
             std::to_string(info().compute_capability_minor) + ".";
    }
    return "";
  }

  // 1-D workgroup shapes for the SPIR-V checks: multiples of the subgroup size and others (a
  // lone invocation, one short of and one past a subgroup, odd sizes), within the device's
  // limits.
  std::vector<Shape> spirv_shapes() const {
    const uint32_t s = std::max<uint32_t>(info().subgroup_size, 1);
    std::vector<Shape> shapes = {{s, 1, 1}, {3 * s + 5, 1, 1}, {1, 1, 1}};
    if (!options().quick) {
      shapes.insert(
          shapes.end(),
          {{64, 1, 1}, {s + 1, 1, 1}, {s > 1 ? s - 1 : 2, 1, 1}, {100, 1, 1}, {256, 1, 1}});
    }
    return fit(shapes);
  }
  // 2-D and 3-D workgroups, whose x is a multiple of the subgroup size or not.
  std::vector<Shape> spirv_multi_shapes() const {
    const uint32_t s = std::max<uint32_t>(info().subgroup_size, 1);
    std::vector<Shape> shapes = {{5, 3, 1}, {2 * s, 2, 1}};
    if (!options().quick) shapes.insert(shapes.end(), {{7, 3, 3}, {s, 1, 3}, {3, 2, 5}});
    return fit(shapes);
  }
  // Blocks for the PTX checks: whole warps and blocks whose last warp is partial (48: 16 lanes,
  // 100: 4 lanes, 7x5x3: 9 lanes, 1), and 16x6 (CUDA makes warps of a 2-D block's rows).
  std::vector<Shape> ptx_shapes() const {
    std::vector<Shape> shapes = {{64, 1, 1}, {48, 1, 1}, {16, 6, 1}, {1, 1, 1}};
    if (!options().quick) shapes.insert(shapes.end(), {{128, 1, 1}, {100, 1, 1}, {7, 5, 3}});
    return fit(shapes);
  }
  std::vector<Shape> fit(const std::vector<Shape>& shapes) const {
    std::vector<Shape> out;
    std::set<Shape> seen;
    for (const Shape& b : shapes) {
      if (b.x > info().max_block_dim[0] || b.y > info().max_block_dim[1] ||
          b.z > info().max_block_dim[2] || b.threads() > info().max_threads_per_block) {
        continue;
      }
      if (seen.insert(b).second) out.push_back(b);
    }
    return out;
  }

  // Launches |f| on |run.groups| workgroups of |run.block| with |run.in| and the value
  // parameters |values|, and reads back run->out. False when the device refused the block (a
  // translated warp kernel whose block's x is not a multiple of 32, which docs/PTX_ON_VULKAN.md
  // documents); the reason is then in |*refused|.
  bool launch(const OwnKernel& k, hal_function f, Records* run, std::vector<uint32_t> values,
              std::string* refused) {
    const size_t words = size_t{run->count()} * kRecord;
    Buffer in(device(), run->in.size() * 4);
    Buffer out(device(), words * 4);
    EXPECT_TRUE(in.ok() && out.ok()) << in.error() << out.error();
    if (!in.ok() || !out.ok()) return false;
    EXPECT_EQ(hal_memcpy_htod(stream_, in.ptr, run->in.data(), run->in.size() * 4), HAL_SUCCESS);
    EXPECT_EQ(hal_memset_d32(stream_, out.ptr, kUnwritten, words), HAL_SUCCESS);
    std::vector<void*> args = {&in.ptr, &out.ptr};
    for (uint32_t& v : values) args.push_back(&v);
    const hal_launch_config c = {
        {run->groups, 1, 1}, {run->block.x, run->block.y, run->block.z}, 0};
    const hal_status s = hal_launch(stream_, f, &c, args.data());
    if (s == HAL_ERROR_NOT_SUPPORTED && k.ir == HAL_IR_PTX &&
        info().backend == HAL_BACKEND_VULKAN && run->block.x % kWarp != 0) {
      *refused = describe(s);
      EXPECT_EQ(hal_stream_synchronize(stream_), HAL_SUCCESS);
      return false;
    }
    EXPECT_EQ(s, HAL_SUCCESS) << "hal_launch(" << k.file->name << ", block " << run->block.text()
                              << ") -> " << describe(s);
    run->out.assign(words, 0);
    EXPECT_EQ(hal_memcpy_dtoh(stream_, run->out.data(), out.ptr, words * 4), HAL_SUCCESS);
    const hal_status sync = hal_stream_synchronize(stream_);
    EXPECT_EQ(sync, HAL_SUCCESS) << describe(sync);
    return s == HAL_SUCCESS && sync == HAL_SUCCESS;
  }

  // A SPIR-V run of |f| with random inputs (|fill| may shape them per invocation), its layout
  // measured and checked (unless |layout| is null); false when the results cannot be checked.
  bool run_spirv(const OwnKernel& k, hal_function f, Shape block, uint32_t groups, uint32_t op,
                 uint32_t param, uint32_t seed, Records* run, Layout* layout,
                 const std::string& what, const std::function<void(Records*)>& fill = nullptr) {
    run->block = block;
    run->groups = groups;
    std::mt19937 rng(seed);
    run->in.resize(2 * size_t{run->count()});
    for (uint32_t& w : run->in) w = static_cast<uint32_t>(rng());
    if (fill) fill(run);
    std::string refused;
    if (!launch(k, f, run, {op, param}, &refused)) return false;
    return layout == nullptr || measure_layout(*run, info().subgroup_size, what, layout);
  }

  std::string spirv_what(const OwnKernel& k, const Shape& block, uint32_t groups,
                         const std::string& op) const {
    return std::string(k.ir_name) + " kernel " + k.file->name + ", " + std::to_string(groups) +
           " workgroups of " + block.text() + ", " + op;
  }

  // Runs a warp kernel with random inputs (|fill| may shape them), checks the CUDA layout
  // (a thread's lane is its linear index in the block mod 32), and calls |check|
  // for each member lane with its warp's members. Blocks a translating device refuses are noted.
  void warp_run(const OwnKernel& k, hal_function f, Shape block, uint32_t op, uint32_t c,
                uint32_t members, uint32_t seed, const std::string& op_text,
                const std::function<void(Records*)>& fill,
                const std::function<void(const Records&, uint32_t warp_first, uint32_t members,
                                         Mismatches*)>& check,
                const std::string& rule) {
    Records run;
    run.block = block;
    run.groups = 2;
    std::mt19937 rng(seed);
    run.in.resize(2 * size_t{run.count()});
    for (uint32_t& w : run.in) w = static_cast<uint32_t>(rng());
    if (fill) fill(&run);
    const std::string what = std::string(k.ir_name) + " kernel " + k.file->name + ", " +
                             std::to_string(run.groups) + " blocks of " + block.text() + ", " +
                             op_text + ", member mask " + hex(members);
    std::string refused;
    if (!launch(k, f, &run, {op, c, members}, &refused)) {
      if (!refused.empty()) refused_blocks_.insert(block.text() + " (" + refused + ")");
      return;
    }
    Mismatches layout, untouched, results;
    const uint32_t t = block.threads();
    for (uint32_t i = 0; i < run.count(); ++i) {
      const uint32_t* r = run.rec(i);
      const uint32_t linear = i % t;
      layout.check(r[0] == kWarp && r[1] == linear % kWarp && r[2] == linear && r[3] == 1,
                   run.where(i) + ": %laneid " + std::to_string(r[1]) + ", linear index " +
                       std::to_string(r[2]));
    }
    layout.report(what,
                  "A block's threads make 32-lane warps in the order of their "
                  "linear index x + y*ntid.x + z*ntid.x*ntid.y, so %laneid is that index "
                  "mod 32 (PTX ISA, %laneid; CUDA's thread hierarchy)");
    if (layout.wrong() != 0) return;
    for (uint32_t g = 0; g < run.groups; ++g) {
      for (uint32_t w = 0; w * kWarp < t; ++w) {
        const uint32_t first = g * t + w * kWarp;
        const uint32_t lanes = std::min(kWarp, t - w * kWarp);
        const uint32_t exist = lanes == kWarp ? 0xFFFFFFFFu : (1u << lanes) - 1u;
        const uint32_t m = members & exist;
        for (uint32_t l = 0; l < lanes; ++l) {
          if ((m >> l & 1u) == 0) {
            untouched.check(run.rec(first + l)[4] == kUnwritten,
                            run.where(first + l) + " is not a member but wrote results");
          }
        }
        if (m != 0) check(run, first, m, &results);
      }
    }
    untouched.report(what,
                     "lanes outside the member mask branch around the warp instruction "
                     "and write no results");
    results.report(what, rule);
  }
  std::set<std::string> refused_blocks_;
  void TearDown() override {
    if (!refused_blocks_.empty()) {
      std::string text;
      for (const std::string& b : refused_blocks_) text += (text.empty() ? "" : "; ") + b;
      RecordProperty("refused_blocks", "The device refuses warp kernels in blocks " + text);
    }
    DeviceTest::TearDown();
  }
};

// ---- SPIR-V: the layout and the size that runs ------------------------------------------------

// Every invocation reads SubgroupSize equal to the size the device reports, the ids make a
// consistent layout, and subgroupElect() picks exactly the lowest id of each subgroup. A subgroup
// with fewer invocations than the size is not by itself a failure: without a required size or
// full subgroups, Vulkan lets a subgroup start with inactive invocations; what runs together is
// checked by ballots and subgroupAdd(1) below.
TEST_P(Subgroups, LayoutMatchesTheReportedSize) {
  const std::string skip = no_spirv(0, "");
  if (!skip.empty()) GTEST_SKIP() << skip;
  for_each_own_kernel("sg_layout", [&](const OwnKernel& k, hal_function f) {
    for (const Shape& block : spirv_shapes()) {
      Records run;
      Layout layout;
      const std::string what = spirv_what(k, block, 3, "SubgroupSize, ids and subgroupElect()");
      const uint32_t param = 0x1234567u * block.threads();
      if (!run_spirv(k, f, block, 3, 7, param, block.threads(), &run, &layout, what)) continue;
      Mismatches elect, echo;
      for (const Subgroup& s : layout.subgroups) {
        uint32_t lowest = kNone;
        for (uint32_t id = 0; id < layout.size; ++id) {
          if (!s.has(id)) continue;
          if (lowest == kNone) lowest = id;
          const uint32_t e = run.rec(s.lane[id])[4];
          elect.check(e == (id == lowest ? 1u : 0u),
                      run.where(s.lane[id]) + ", id " + std::to_string(id) + " of subgroup " +
                          std::to_string(s.id) + " (lowest id present " + std::to_string(lowest) +
                          "): subgroupElect() " + (e == 1 ? "true" : "false"));
        }
      }
      for (uint32_t i = 0; i < run.count(); ++i) {
        echo.check(run.rec(i)[5] == (run.a(i) ^ param ^ 7u),
                   run.where(i) + ": " + got_expected(run.rec(i)[5], run.a(i) ^ param ^ 7u));
      }
      elect.report(what,
                   "subgroupElect() is true in exactly the active invocation with the "
                   "lowest id of its subgroup (SPIR-V OpGroupNonUniformElect); at the top "
                   "of the kernel every invocation of a subgroup is active");
      echo.report(what, "each invocation writes its input word xor the push constants");
    }
  });
}

// The same in 2-D and 3-D workgroups: the subgroups of a workgroup hold its invocations by
// local index in whatever way the device chooses, but each has distinct ids below the size.
TEST_P(Subgroups, LayoutOfMultiDimensionalWorkgroups) {
  const std::string skip = no_spirv(0, "");
  if (!skip.empty()) GTEST_SKIP() << skip;
  for_each_own_kernel("sg_layout", [&](const OwnKernel& k, hal_function f) {
    for (const Shape& block : spirv_multi_shapes()) {
      Records run;
      Layout layout;
      const std::string what = spirv_what(k, block, 3, "SubgroupSize and ids");
      run_spirv(k, f, block, 3, 0, 0, block.threads(), &run, &layout, what);
    }
  });
}

// NumSubgroups counts every subgroup of a workgroup, the partial one at its end included, and
// SubgroupIds number them from 0.
TEST_P(Subgroups, NumSubgroupsCountsEverySubgroup) {
  const std::string skip = no_spirv(0, "");
  if (!skip.empty()) GTEST_SKIP() << skip;
  for_each_own_kernel("sg_layout", [&](const OwnKernel& k, hal_function f) {
    for (const Shape& block : spirv_shapes()) {
      Records run;
      const std::string what = spirv_what(k, block, 3, "NumSubgroups and SubgroupId");
      if (!run_spirv(k, f, block, 3, 0, 0, block.threads(), &run, nullptr, what)) continue;
      check_numbering(run, what);
    }
    for (const Shape& block : spirv_multi_shapes()) {
      Records run;
      const std::string what = spirv_what(k, block, 3, "NumSubgroups and SubgroupId");
      if (!run_spirv(k, f, block, 3, 0, 0, block.threads(), &run, nullptr, what)) continue;
      check_numbering(run, what);
    }
  });
}

// subgroupBallot(true) is exactly the invocations the layout puts in the subgroup, so every
// invocation that reads an id really runs with the others; the ballot of a random predicate,
// its bit counts, find-LSB and find-MSB, broadcasts, inverse ballot, bit extract and the
// Eq/Ge/Gt/Le/Lt masks match the model.
TEST_P(Subgroups, BallotsAndBroadcasts) {
  const std::string skip = no_spirv(HAL_FEATURE_SUBGROUP_BALLOT, "subgroup ballot");
  if (!skip.empty()) GTEST_SKIP() << skip;
  for_each_own_kernel("sg_ballot", [&](const OwnKernel& k, hal_function f) {
    uint32_t seed = 100;
    for (const Shape& block : spirv_shapes()) {
      Records run;
      Layout layout;
      const std::string what = spirv_what(k, block, 3, "ballots");
      const uint32_t param = 0x9E3779B9u * ++seed;
      if (!run_spirv(k, f, block, 3, 5, param, seed, &run, &layout, what)) continue;
      const uint32_t S = layout.size;
      const Bits pattern = {param, param * 3u + 5u, ~param, param ^ 0xF0F0F0F0u};
      Mismatches together, ballot, counts, lsb, first, bcast, inverse, masks;
      for (const Subgroup& s : layout.subgroups) {
        Bits voted{};
        uint32_t lowest = kNone;
        for (uint32_t id = 0; id < S; ++id) {
          if (!s.has(id)) continue;
          if (lowest == kNone) lowest = id;
          if (run.a(s.lane[id]) & 1u) set_bit(&voted, id);
        }
        for (uint32_t id = 0; id < S; ++id) {
          if (!s.has(id)) continue;
          const uint32_t i = s.lane[id];
          const uint32_t* r = run.rec(i);
          const std::string at = run.where(i) + ", subgroup " + std::to_string(s.id) + " id " +
                                 std::to_string(id) + ": ";
          const Bits all_got = {r[4], r[5], r[6], r[7]};
          together.check(all_got == s.members, at + "subgroupBallot(true) " + bits_text(all_got) +
                                                   ", the subgroup's invocations (by their ids) " +
                                                   bits_text(s.members));
          const Bits got = {r[8], r[9], r[10], r[11]};
          ballot.check(got == voted, at + "subgroupBallot(v & 1) " + bits_text(got) +
                                         ", expected " + bits_text(voted));
          uint32_t incl = 0, excl = 0;
          for (uint32_t j = 0; j <= id; ++j) {
            if (bit(voted, j)) (j < id ? excl : incl) += 1;
          }
          incl += excl;
          counts.check(r[12] == popcount(voted) && r[13] == incl && r[14] == excl,
                       at + "bit count, inclusive, exclusive " + std::to_string(r[12]) + ", " +
                           std::to_string(r[13]) + ", " + std::to_string(r[14]) + "; expected " +
                           std::to_string(popcount(voted)) + ", " + std::to_string(incl) + ", " +
                           std::to_string(excl));
          // Find-LSB and find-MSB of a ballot with no bit set are undefined.
          if (popcount(voted) != 0) {
            uint32_t lo = 0, hi = 0;
            for (uint32_t j = 0; j < S; ++j) {
              if (bit(voted, j)) hi = j;
            }
            while (!bit(voted, lo)) ++lo;
            lsb.check(r[15] == lo && r[16] == hi, at + "find-LSB " + std::to_string(r[15]) +
                                                      ", find-MSB " + std::to_string(r[16]) +
                                                      "; expected " + std::to_string(lo) + ", " +
                                                      std::to_string(hi));
          }
          first.check(r[17] == run.b(s.lane[lowest]),
                      at + "subgroupBroadcastFirst(w) " +
                          got_expected(r[17], run.b(s.lane[lowest])) + " (id " +
                          std::to_string(lowest) + "'s w)");
          // A broadcast from an id with no active invocation is undefined.
          if (s.has(0)) {
            bcast.check(r[18] == run.b(s.lane[0]),
                        at + "subgroupBroadcast(w, 0) " + got_expected(r[18], run.b(s.lane[0])));
          }
          if (s.has(S - 1)) {
            bcast.check(r[19] == run.b(s.lane[S - 1]),
                        at + "subgroupBroadcast(w, SubgroupSize - 1) " +
                            got_expected(r[19], run.b(s.lane[S - 1])));
          }
          const uint32_t extract = run.b(i) % S;
          inverse.check(
              r[20] == (bit(pattern, id) ? 1u : 0u) && r[21] == (bit(pattern, extract) ? 1u : 0u),
              at + "subgroupInverseBallot(" + bits_text(pattern) + ") " + std::to_string(r[20]) +
                  ", subgroupBallotBitExtract(.., " + std::to_string(extract) + ") " +
                  std::to_string(r[21]));
          Bits eq{}, lt{};
          set_bit(&eq, id);
          for (uint32_t j = 0; j < id; ++j) set_bit(&lt, j);
          const Bits eq_got = {r[22], r[23], r[24], r[25]};
          const Bits lt_got = {r[26], r[27], r[28], r[29]};
          const uint32_t ge = S - id, gt = S - id - 1, le = id + 1;
          masks.check(eq_got == eq && lt_got == lt && r[30] == (ge | gt << 8 | le << 16),
                      at + "gl_SubgroupEqMask " + bits_text(eq_got) + ", LtMask " +
                          bits_text(lt_got) + ", bit counts of Ge, Gt, Le " +
                          std::to_string(r[30] & 255) + ", " + std::to_string(r[30] >> 8 & 255) +
                          ", " + std::to_string(r[30] >> 16) + "; expected Ge, Gt, Le " +
                          std::to_string(ge) + ", " + std::to_string(gt) + ", " +
                          std::to_string(le));
        }
      }
      together.report(what,
                      "At the top of the kernel every invocation of a subgroup is active, "
                      "so subgroupBallot(true) has exactly the bits of the ids of the "
                      "invocations that read the same SubgroupId (GL_KHR_shader_subgroup_"
                      "ballot; SPIR-V OpGroupNonUniformBallot): the invocations that read "
                      "one SubgroupId do not run together as one subgroup");
      ballot.report(what,
                    "subgroupBallot(p) sets the bit of each active invocation's id whose "
                    "p is true, and no other (GL_KHR_shader_subgroup_ballot)");
      counts.report(what,
                    "subgroupBallotBitCount, Inclusive- and ExclusiveBitCount count the "
                    "ballot's bits in [0, SubgroupSize), [0, id] and [0, id)");
      lsb.report(what, "subgroupBallotFindLSB and FindMSB give the lowest and highest set bit");
      first.report(what,
                   "subgroupBroadcastFirst gives the value of the active invocation with "
                   "the lowest id (SPIR-V OpGroupNonUniformBroadcastFirst)");
      bcast.report(what,
                   "subgroupBroadcast(value, id) gives the value of invocation id (checked "
                   "only where that invocation is active)");
      inverse.report(what,
                     "subgroupInverseBallot is bit id of the value; subgroupBallotBitExtract "
                     "is the bit at the index given");
      masks.report(what,
                   "gl_SubgroupEqMask has the bit of the own id, LtMask the bits below it; "
                   "Ge, Gt and Le counted over [0, SubgroupSize) (Vulkan built-ins "
                   "SubgroupEqMask, ...)");
    }
  });
}

// subgroupAll, subgroupAny and subgroupAllEqual over each subgroup: workgroup 0 votes randomly,
// 1 all true, 2 all false, 3 and 4 all the same but one invocation.
TEST_P(Subgroups, Votes) {
  const std::string skip = no_spirv(HAL_FEATURE_SUBGROUP_VOTE, "subgroup vote");
  if (!skip.empty()) GTEST_SKIP() << skip;
  for_each_own_kernel("sg_vote", [&](const OwnKernel& k, hal_function f) {
    uint32_t seed = 200;
    for (const Shape& block : spirv_shapes()) {
      Records run;
      Layout layout;
      const std::string what = spirv_what(k, block, 5, "votes");
      const uint32_t param = 0x10000u;  // leaves bit 0 alone
      auto fill = [&](Records* r) {
        const uint32_t t = r->block.threads();
        for (uint32_t g = 1; g < 5; ++g) {
          for (uint32_t l = 0; l < t; ++l) r->in[2 * size_t{g * t + l}] = g == 2 ? 6u : 7u;
        }
        r->in[2 * size_t{3 * t + (seed * 7919u) % t}] = 6u;     // one false in workgroup 3
        r->in[2 * size_t{4 * t + (seed * 104729u) % t}] = 15u;  // one other value, still true
      };
      if (!run_spirv(k, f, block, 5, 0, param, ++seed, &run, &layout, what, fill)) continue;
      Mismatches votes;
      for (const Subgroup& s : layout.subgroups) {
        bool all = true, any = false, equal = true, pequal = true;
        uint32_t firstv = kNone;
        bool firstp = false;
        for (uint32_t id = 0; id < layout.size; ++id) {
          if (!s.has(id)) continue;
          const uint32_t v = run.a(s.lane[id]) ^ param;
          const bool p = (v & 1u) != 0;
          if (firstv == kNone) {
            firstv = v;
            firstp = p;
          }
          all = all && p;
          any = any || p;
          equal = equal && v == firstv;
          pequal = pequal && p == firstp;
        }
        for (uint32_t id = 0; id < layout.size; ++id) {
          if (!s.has(id)) continue;
          const uint32_t* r = run.rec(s.lane[id]);
          const uint32_t expected[4] = {all, any, equal, pequal};
          votes.check(std::equal(expected, expected + 4, r + 4),
                      run.where(s.lane[id]) + ", subgroup " + std::to_string(s.id) +
                          ": all, any, allEqual(v), allEqual(p) " + std::to_string(r[4]) +
                          std::to_string(r[5]) + std::to_string(r[6]) + std::to_string(r[7]) +
                          ", expected " + std::to_string(all) + std::to_string(any) +
                          std::to_string(equal) + std::to_string(pequal));
        }
      }
      votes.report(what,
                   "subgroupAll, subgroupAny and subgroupAllEqual are taken over the "
                   "subgroup's active invocations (GL_KHR_shader_subgroup_vote)");
    }
  });
}

// subgroupShuffle from a random id per invocation and from one id for all, and
// subgroupShuffleXor with every power-of-two mask and SubgroupSize - 1.
TEST_P(Subgroups, Shuffles) {
  const std::string skip = no_spirv(HAL_FEATURE_SUBGROUP_SHUFFLE, "subgroup shuffle");
  if (!skip.empty()) GTEST_SKIP() << skip;
  const uint32_t S = std::max<uint32_t>(info().subgroup_size, 1);
  std::vector<uint32_t> params = {S - 1};
  for (uint32_t m = 1; m < S; m *= 2) params.push_back(m);
  if (options().quick && params.size() > 3) params.resize(3);
  for_each_own_kernel("sg_shuffle", [&](const OwnKernel& k, hal_function f) {
    uint32_t seed = 300;
    for (const Shape& block : spirv_shapes()) {
      for (uint32_t param : params) {
        Records run;
        Layout layout;
        const std::string what =
            spirv_what(k, block, 3, "shuffles with id or mask " + std::to_string(param));
        const uint32_t op = ++seed * 0x85EBCA6Bu;
        if (!run_spirv(k, f, block, 3, op, param, seed, &run, &layout, what)) continue;
        Mismatches shuffle, uniform, xors;
        for (const Subgroup& s : layout.subgroups) {
          auto v = [&](uint32_t id) { return run.a(s.lane[id]) ^ op; };
          for (uint32_t id = 0; id < layout.size; ++id) {
            if (!s.has(id)) continue;
            const uint32_t i = s.lane[id];
            const uint32_t* r = run.rec(i);
            const std::string at = run.where(i) + ", subgroup " + std::to_string(s.id) + " id " +
                                   std::to_string(id) + ": ";
            // A source id with no active invocation gives an undefined value: not checked.
            const uint32_t src = run.b(i) % layout.size;
            if (s.has(src)) {
              shuffle.check(r[4] == v(src), at + "subgroupShuffle(v, " + std::to_string(src) +
                                                ") " + got_expected(r[4], v(src)));
            }
            if (s.has(param)) {
              uniform.check(r[5] == v(param), at + "subgroupShuffle(v, " + std::to_string(param) +
                                                  ") " + got_expected(r[5], v(param)));
            }
            if (s.has(id ^ param)) {
              xors.check(r[6] == v(id ^ param), at + "subgroupShuffleXor(v, " +
                                                    std::to_string(param) + ") " +
                                                    got_expected(r[6], v(id ^ param)));
            }
          }
        }
        const std::string rule =
            " (GL_KHR_shader_subgroup_shuffle; SPIR-V OpGroupNonUniformShuffle, ...Xor); checked "
            "where that invocation is active";
        shuffle.report(what, "subgroupShuffle(v, id) gives the v of invocation id" + rule);
        uniform.report(what, "subgroupShuffle(v, id) gives the v of invocation id" + rule);
        xors.report(what, "subgroupShuffleXor(v, mask) gives the v of invocation id ^ mask" + rule);
      }
    }
  });
}

// subgroupShuffleUp and subgroupShuffleDown by deltas 0, 1, 3 and SubgroupSize - 1 (and every
// power of two in the full run).
TEST_P(Subgroups, RelativeShuffles) {
  const std::string skip = no_spirv(0, "");
  if (!skip.empty()) GTEST_SKIP() << skip;
  const uint32_t S = std::max<uint32_t>(info().subgroup_size, 1);
  std::set<uint32_t> deltas = {0, 1 % S, 3 % S, S - 1};
  if (!options().quick) {
    for (uint32_t d = 2; d < S; d *= 2) deltas.insert(d);
  }
  // No hal feature bit names shuffle-relative: a device without it refuses the kernel at load
  // (HAL_ERROR_NOT_SUPPORTED), which skips this test with the reason.
  for_each_own_kernel("sg_relative", [&](const OwnKernel& k, hal_function f) {
    uint32_t seed = 400;
    for (const Shape& block : spirv_shapes()) {
      for (uint32_t delta : deltas) {
        Records run;
        Layout layout;
        const std::string what =
            spirv_what(k, block, 3, "relative shuffles by " + std::to_string(delta));
        const uint32_t op = ++seed * 0xC2B2AE35u;
        if (!run_spirv(k, f, block, 3, op, delta, seed, &run, &layout, what)) continue;
        Mismatches up, down;
        for (const Subgroup& s : layout.subgroups) {
          auto v = [&](uint32_t id) { return run.a(s.lane[id]) ^ op; };
          for (uint32_t id = 0; id < layout.size; ++id) {
            if (!s.has(id)) continue;
            const uint32_t* r = run.rec(s.lane[id]);
            const std::string at = run.where(s.lane[id]) + ", subgroup " + std::to_string(s.id) +
                                   " id " + std::to_string(id) + ": ";
            // Undefined where the source id is out of [0, SubgroupSize) or not active.
            if (id >= delta && s.has(id - delta)) {
              up.check(r[4] == v(id - delta), at + got_expected(r[4], v(id - delta)));
            }
            if (id + delta < layout.size && s.has(id + delta)) {
              down.check(r[5] == v(id + delta), at + got_expected(r[5], v(id + delta)));
            }
          }
        }
        up.report(what,
                  "subgroupShuffleUp(v, delta) gives the v of invocation id - delta "
                  "(GL_KHR_shader_subgroup_shuffle_relative), checked where it is active");
        down.report(what,
                    "subgroupShuffleDown(v, delta) gives the v of invocation id + delta "
                    "(GL_KHR_shader_subgroup_shuffle_relative), checked where it is active");
      }
    }
  });
}

// ---- SPIR-V: reductions and scans -------------------------------------------------------------

struct ArithOp {
  const char* name;
  uint32_t identity;
  uint32_t (*apply)(uint32_t, uint32_t);
};

uint32_t as_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// The float input of sg_arith.comp: (int(v & 2047) - 1024) / 8, exact.
float arith_float(uint32_t v) {
  return static_cast<float>(static_cast<int32_t>(v & 2047u) - 1024) * 0.125f;
}

const ArithOp kArithOps[] = {
    {"uint add", 0, [](uint32_t a, uint32_t b) { return a + b; }},
    {"uint min", UINT32_MAX, [](uint32_t a, uint32_t b) { return std::min(a, b); }},
    {"uint max", 0, [](uint32_t a, uint32_t b) { return std::max(a, b); }},
    {"uint and", UINT32_MAX, [](uint32_t a, uint32_t b) { return a & b; }},
    {"uint or", 0, [](uint32_t a, uint32_t b) { return a | b; }},
    {"uint xor", 0, [](uint32_t a, uint32_t b) { return a ^ b; }},
    {"int add", 0, [](uint32_t a, uint32_t b) { return a + b; }},
    {"int min", 0x7FFFFFFFu,
     [](uint32_t a, uint32_t b) {
       return static_cast<uint32_t>(std::min(static_cast<int32_t>(a), static_cast<int32_t>(b)));
     }},
    {"int max", 0x80000000u,
     [](uint32_t a, uint32_t b) {
       return static_cast<uint32_t>(std::max(static_cast<int32_t>(a), static_cast<int32_t>(b)));
     }},
    {"float add", 0, [](uint32_t a, uint32_t b) { return as_bits(as_float(a) + as_float(b)); }},
};

// Reduction, inclusive and exclusive scan of each operation over each subgroup, and
// subgroupAdd(1) equal to the number of invocations the layout puts in the subgroup.
TEST_P(Subgroups, ReductionsAndScans) {
  const std::string skip = no_spirv(HAL_FEATURE_SUBGROUP_ARITHMETIC, "subgroup arithmetic");
  if (!skip.empty()) GTEST_SKIP() << skip;
  for_each_own_kernel("sg_arith", [&](const OwnKernel& k, hal_function f) {
    uint32_t seed = 500;
    for (const Shape& block : spirv_shapes()) {
      for (uint32_t op = 0; op < 10; ++op) {
        const ArithOp& a = kArithOps[op];
        const bool is_float = op == 9;
        Records run;
        Layout layout;
        const std::string what =
            spirv_what(k, block, 3, std::string(a.name) + " reduction and scans");
        const uint32_t param = 0;
        if (!run_spirv(k, f, block, 3, op, param, ++seed, &run, &layout, what)) continue;
        Mismatches results, count;
        for (const Subgroup& s : layout.subgroups) {
          auto input = [&](uint32_t id) {
            const uint32_t v = run.a(s.lane[id]) ^ param;
            return is_float ? as_bits(arith_float(v)) : v;
          };
          uint32_t total = a.identity;
          for (uint32_t id = 0; id < layout.size; ++id) {
            if (s.has(id)) total = a.apply(total, input(id));
          }
          uint32_t scan = a.identity;
          for (uint32_t id = 0; id < layout.size; ++id) {
            if (!s.has(id)) continue;
            const uint32_t excl = scan;
            scan = a.apply(scan, input(id));
            const uint32_t* r = run.rec(s.lane[id]);
            const std::string at = run.where(s.lane[id]) + ", subgroup " + std::to_string(s.id) +
                                   " id " + std::to_string(id) + ": ";
            auto same = [&](uint32_t got, uint32_t want) {
              return is_float ? as_float(got) == as_float(want) : got == want;
            };
            results.check(same(r[4], total) && same(r[5], scan) && same(r[6], excl),
                          at + "reduction, inclusive, exclusive " + hex(r[4]) + ", " + hex(r[5]) +
                              ", " + hex(r[6]) + "; expected " + hex(total) + ", " + hex(scan) +
                              ", " + hex(excl));
            count.check(r[7] == s.count, at + "subgroupAdd(1) " + std::to_string(r[7]) +
                                             ", the subgroup has " + std::to_string(s.count) +
                                             " invocations");
          }
        }
        results.report(what, std::string("The reduction is taken over the subgroup's active "
                                         "invocations, the inclusive scan over those with an "
                                         "id up to the invocation's own, the exclusive scan "
                                         "over those below it, starting from the operation's "
                                         "identity (GL_KHR_shader_subgroup_arithmetic)") +
                                 (is_float ? "; the float inputs are multiples of 1/8 whose "
                                             "sums are exact in any order"
                                           : ""));
        count.report(what,
                     "subgroupAdd(1) at the top of the kernel counts the subgroup's "
                     "invocations, those that read its SubgroupId: the invocations that "
                     "read one SubgroupId do not run together as one subgroup");
      }
    }
  });
}

// ---- PTX: warps -------------------------------------------------------------------------------

// Member masks: every lane, half a warp, alternate lanes, the ends, random.
std::vector<uint32_t> member_masks(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> masks = {0xFFFFFFFFu, 0x0000FFFFu, 0x55555555u, 0x80000001u};
  if (!options().quick) masks.push_back(static_cast<uint32_t>(rng()) | 1u);
  return masks;
}

// shfl.sync .up, .down, .bfly and .idx with a random lane operand per thread and clamp/segment
// operands of whole warps and 8- and 16-lane segments, result and predicate per the PTX ISA.
TEST_P(Subgroups, WarpShuffles) {
  const std::string skip = no_ptx(3, 0);
  if (!skip.empty()) GTEST_SKIP() << skip;
  static const char* kModes[] = {"up", "down", "bfly", "idx"};
  std::vector<uint32_t> cs = {0x1f, 0x0, 0x181f, 0x1000, 0x1e07};
  for_each_own_kernel("sg_warp", [&](const OwnKernel& k, hal_function f) {
    uint32_t seed = 600;
    for (const Shape& block : ptx_shapes()) {
      for (uint32_t members : member_masks(block.threads())) {
        for (uint32_t mode = 0; mode < 4; ++mode) {
          for (uint32_t c : cs) {
            if (options().quick && c != (mode == 0 ? 0x0u : 0x1fu) && c != 0x181f) continue;
            auto check = [&](const Records& run, uint32_t first, uint32_t m, Mismatches* out) {
              for (uint32_t lane = 0; lane < kWarp; ++lane) {
                if ((m >> lane & 1u) == 0) continue;
                const uint32_t i = first + lane;
                const uint32_t bval = run.b(i) & 31u, cval = c & 31u, seg = (c >> 8) & 31u;
                const uint32_t max_lane = (lane & seg) | (cval & ~seg);
                const uint32_t min_lane = lane & seg;
                int32_t j = 0;
                bool in = false;
                switch (mode) {
                  case 0:
                    j = static_cast<int32_t>(lane) - static_cast<int32_t>(bval);
                    in = j >= static_cast<int32_t>(max_lane);
                    break;
                  case 1:
                    j = static_cast<int32_t>(lane + bval);
                    in = j <= static_cast<int32_t>(max_lane);
                    break;
                  case 2:
                    j = static_cast<int32_t>(lane ^ bval);
                    in = j <= static_cast<int32_t>(max_lane);
                    break;
                  default:
                    j = static_cast<int32_t>(min_lane | (bval & ~seg));
                    in = j <= static_cast<int32_t>(max_lane);
                    break;
                }
                if (!in) j = static_cast<int32_t>(lane);
                const uint32_t* r = run.rec(i);
                const std::string at =
                    run.where(i) + ", lane " + std::to_string(lane) + ", b " + hex(run.b(i)) + ": ";
                out->check(r[5] == (in ? 1u : 0u), at + "predicate " + std::to_string(r[5]) +
                                                       ", expected " + std::to_string(in ? 1 : 0) +
                                                       " (source lane " + std::to_string(j) + ")");
                // The value read from a lane that is not a member (not running the
                // instruction) is undefined.
                if ((m >> j & 1u) != 0) {
                  out->check(r[4] == run.a(first + static_cast<uint32_t>(j)),
                             at + "d " + got_expected(r[4], run.a(first + j)) + " (lane " +
                                 std::to_string(j) + "'s a)");
                }
              }
            };
            warp_run(k, f, block, mode, c, members, ++seed,
                     std::string("shfl.sync.") + kModes[mode] + ".b32 with c " + hex(c), nullptr,
                     check,
                     "shfl.sync reads lane j computed from b and c as the PTX ISA gives it "
                     "(clamp c[4:0], segment mask c[12:8]); out of range, j is the thread's own "
                     "lane and the predicate false");
          }
        }
      }
    }
  });
}

// vote.sync .all, .any, .uni and .ballot among the members: warps vote randomly, all true, all
// false, or all the same but one lane.
TEST_P(Subgroups, WarpVotesAndActivemask) {
  const std::string skip = no_ptx(3, 0);
  if (!skip.empty()) GTEST_SKIP() << skip;
  for_each_own_kernel("sg_warp", [&](const OwnKernel& k, hal_function f) {
    uint32_t seed = 700;
    for (const Shape& block : ptx_shapes()) {
      for (uint32_t members : member_masks(block.threads() + 1)) {
        auto fill = [&](Records* run) {
          const uint32_t t = run->block.threads();
          for (uint32_t i = 0; i < run->count(); ++i) {
            const uint32_t warp = (i / t) * 64 + (i % t) / kWarp;
            uint32_t& a = run->in[2 * size_t{i}];
            if (warp % 4 == 1) a = 1;
            if (warp % 4 == 2) a = 2;
            if (warp % 4 == 3) a = (i % t) % kWarp == (seed + warp) % kWarp ? 0u : 1u;
          }
        };
        auto votes = [&](const Records& run, uint32_t first, uint32_t m, Mismatches* out) {
          uint32_t ballot = 0;
          for (uint32_t l = 0; l < kWarp; ++l) {
            if ((m >> l & 1u) != 0 && (run.a(first + l) & 1u) != 0) ballot |= 1u << l;
          }
          const uint32_t all = ballot == m, any = ballot != 0, uni = ballot == 0 || ballot == m;
          const uint32_t bits = all | any << 1 | uni << 2;
          for (uint32_t l = 0; l < kWarp; ++l) {
            if ((m >> l & 1u) == 0) continue;
            const uint32_t* r = run.rec(first + l);
            out->check(r[4] == bits && r[5] == ballot,
                       run.where(first + l) + ": all|any<<1|uni<<2 " + std::to_string(r[4]) +
                           ", ballot " + hex(r[5]) + "; expected " + std::to_string(bits) + ", " +
                           hex(ballot));
          }
        };
        warp_run(k, f, block, 4, 0, members, ++seed, "vote.sync of a & 1", fill, votes,
                 "vote.sync.all, .any and .uni are taken over the member lanes, and .ballot has "
                 "the bit of each member lane whose predicate is true, no other (PTX ISA, "
                 "vote.sync)");
        // activemask: the thread's own bit is set, and no bit of a lane that does not exist or
        // has exited. Whether the other lanes of a converged path show up is not promised (the
        // ISA does not guarantee reconvergence), so it is not checked.
        for (uint32_t op : {5u, 6u}) {
          auto active = [&](const Records& run, uint32_t first, uint32_t m, Mismatches* out) {
            const uint32_t t = run.block.threads();
            const uint32_t lanes = std::min(kWarp, t - (first % t));
            const uint32_t exist = lanes == kWarp ? 0xFFFFFFFFu : (1u << lanes) - 1u;
            uint32_t exited = 0;
            for (uint32_t l = 0; l < lanes; ++l) {
              if (op == 6 && (m >> l & 1u) != 0 && (run.b(first + l) & 1u) != 0) exited |= 1u << l;
            }
            for (uint32_t l = 0; l < lanes; ++l) {
              if ((m >> l & 1u) == 0 || (exited >> l & 1u) != 0) continue;
              const uint32_t got = run.rec(first + l)[4];
              out->check((got >> l & 1u) != 0 && (got & ~exist) == 0 && (got & exited) == 0,
                         run.where(first + l) + ": activemask " + hex(got) + " (lanes that exist " +
                             hex(exist) + ", exited " + hex(exited) + ")");
            }
          };
          warp_run(k, f, block, op, 0, members, ++seed,
                   op == 5 ? "activemask" : "activemask after lanes with b & 1 exit", nullptr,
                   active,
                   "activemask has the bit of the thread reading it, and none of a lane that "
                   "does not exist in the block or has exited (PTX ISA, activemask)");
        }
      }
    }
  });
}

// redux.sync .add, .min, .max (.u32 and .s32), .and, .or, .xor over the members (sm_80).
TEST_P(Subgroups, WarpReductions) {
  const std::string skip = no_ptx(8, 0);
  if (!skip.empty()) GTEST_SKIP() << skip;
  static const struct {
    const char* name;
    uint32_t (*apply)(uint32_t, uint32_t);
  } kOps[] = {
      {"add.u32", [](uint32_t a, uint32_t b) { return a + b; }},
      {"min.u32", [](uint32_t a, uint32_t b) { return std::min(a, b); }},
      {"max.u32", [](uint32_t a, uint32_t b) { return std::max(a, b); }},
      {"add.s32", [](uint32_t a, uint32_t b) { return a + b; }},
      {"min.s32",
       [](uint32_t a, uint32_t b) {
         return static_cast<uint32_t>(std::min(static_cast<int32_t>(a), static_cast<int32_t>(b)));
       }},
      {"max.s32",
       [](uint32_t a, uint32_t b) {
         return static_cast<uint32_t>(std::max(static_cast<int32_t>(a), static_cast<int32_t>(b)));
       }},
      {"and.b32", [](uint32_t a, uint32_t b) { return a & b; }},
      {"or.b32", [](uint32_t a, uint32_t b) { return a | b; }},
      {"xor.b32", [](uint32_t a, uint32_t b) { return a ^ b; }},
  };
  for_each_own_kernel("sg_redux", [&](const OwnKernel& k, hal_function f) {
    uint32_t seed = 800;
    for (const Shape& block : ptx_shapes()) {
      for (uint32_t members : member_masks(block.threads() + 2)) {
        for (uint32_t op = 0; op < 9; ++op) {
          // Inputs with many set bits for .and, few for .or, so that neither is trivially 0/~0.
          auto fill = [&](Records* run) {
            for (uint32_t i = 0; i < run->count(); ++i) {
              uint32_t& a = run->in[2 * size_t{i}];
              if (op == 6) a |= run->in[2 * size_t{i} + 1] | 0x0F0F0000u;
              if (op == 7) a &= run->in[2 * size_t{i} + 1] & 0x00FF00FFu;
            }
          };
          auto check = [&](const Records& run, uint32_t first, uint32_t m, Mismatches* out) {
            uint32_t acc = 0;
            bool any = false;
            for (uint32_t l = 0; l < kWarp; ++l) {
              if ((m >> l & 1u) == 0) continue;
              acc = any ? kOps[op].apply(acc, run.a(first + l)) : run.a(first + l);
              any = true;
            }
            for (uint32_t l = 0; l < kWarp; ++l) {
              if ((m >> l & 1u) == 0) continue;
              out->check(run.rec(first + l)[4] == acc,
                         run.where(first + l) + ": " + got_expected(run.rec(first + l)[4], acc));
            }
          };
          warp_run(k, f, block, op, 0, members, ++seed, std::string("redux.sync.") + kOps[op].name,
                   fill, check,
                   "redux.sync gives every member lane the operation over the member lanes' "
                   "values (PTX ISA, redux.sync)");
        }
      }
    }
  });
}

// match.any.sync and match.all.sync (.b32, and .any .b64) over the members, on values with few
// distinct values (c keeps their low bits) and on all-equal ones (c = 0) (sm_70).
TEST_P(Subgroups, WarpMatches) {
  const std::string skip = no_ptx(7, 0);
  if (!skip.empty()) GTEST_SKIP() << skip;
  for_each_own_kernel("sg_match", [&](const OwnKernel& k, hal_function f) {
    uint32_t seed = 900;
    for (const Shape& block : ptx_shapes()) {
      for (uint32_t members : member_masks(block.threads() + 3)) {
        for (uint32_t c : {0x3u, 0x0u, 0x1u}) {
          auto check = [&](const Records& run, uint32_t first, uint32_t m, Mismatches* out) {
            bool all = true;
            const uint32_t lead = run.a(first + static_cast<uint32_t>(__builtin_ctz(m))) & c;
            for (uint32_t l = 0; l < kWarp; ++l) {
              if ((m >> l & 1u) != 0) all = all && (run.a(first + l) & c) == lead;
            }
            for (uint32_t l = 0; l < kWarp; ++l) {
              if ((m >> l & 1u) == 0) continue;
              const uint32_t i = first + l;
              uint32_t same = 0, same64 = 0;
              for (uint32_t o = 0; o < kWarp; ++o) {
                if ((m >> o & 1u) == 0) continue;
                const bool lo = (run.a(first + o) & c) == (run.a(i) & c);
                if (lo) same |= 1u << o;
                if (lo && (run.b(first + o) & c) == (run.b(i) & c)) same64 |= 1u << o;
              }
              const uint32_t* r = run.rec(i);
              out->check(r[4] == same && r[5] == (all ? m : 0u) && r[6] == (all ? 1u : 0u) &&
                             r[7] == same64,
                         run.where(i) + ": any " + hex(r[4]) + ", all " + hex(r[5]) + " pred " +
                             std::to_string(r[6]) + ", any.b64 " + hex(r[7]) + "; expected " +
                             hex(same) + ", " + hex(all ? m : 0u) + " " + std::to_string(all) +
                             ", " + hex(same64));
            }
          };
          warp_run(k, f, block, 0, c, members, ++seed, "match.sync of values & " + hex(c), nullptr,
                   check,
                   "match.any.sync gives the member lanes with the same value; match.all.sync "
                   "gives the member mask and true when all members' values are equal, else 0 "
                   "and false (PTX ISA, match.sync)");
        }
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(, Subgroups, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
