#include "matmul_problem.h"

#include <hal_kernels/hal_kernels.h>
#include <hal_kernels/reference.h>

#include <algorithm>
#include <cmath>

namespace hal_kernels::tune {
namespace {

namespace ref = hal_kernels::ref;

// The small check shape: no multiple of any tile, so every partial-tile path runs.
constexpr MatmulShape kCheckShape = {70, 45, 37};
constexpr float kCheckAlpha = 1.5f;
constexpr float kCheckBeta = 0.5f;
// The tiles the pack has shipped with: the baseline of every result.
constexpr uint32_t kDefaultBm = 64, kDefaultBn = 64, kDefaultBk = 16;
// More accumulators per invocation than this spill and compile slowly without running faster
// (register tiles on lavapipe). The subgroup family loads half as much per multiply-add at
// 64 x 16 as at 32 x 8 and was measured fastest there (1.6x at 1024^3), so it may go that far.
constexpr uint32_t kMaxAccumulators = 256;
constexpr uint32_t kMaxSubgroupAccumulators = 1024;

uint32_t ceil_div(uint32_t a, uint32_t b) {
  return (a + b - 1) / b;
}

// The pack's families whose kernels are variants of one tuning family: "matmul_tiled_f32",
// "matmul_reg_f32" and "matmul_sg_f32" (on devices with subgroup ballot) for "matmul_f32";
// "matmul_mma_f16" (tensor cores, PTX only) joins "matmul_f16" on devices that run PTX.
constexpr const char* kPackFamilyKinds[] = {"matmul_tiled_", "matmul_reg_", "matmul_sg_",
                                            "matmul_mma_"};

// The tuning family of a pack family, or "" when it is not one of the kinds above.
std::string tuning_family(const std::string& pack_family) {
  for (const char* kind : kPackFamilyKinds) {
    const std::string prefix = kind;
    if (pack_family.rfind(prefix, 0) == 0) return "matmul_" + pack_family.substr(prefix.size());
  }
  return "";
}

// The geometry of one set of tunable values of |kernel|: the block's tile of C, the shared
// memory and the label; false for values that make no kernel (a TX that does not divide the
// block).
struct Variant {
  uint32_t tile_m = 0, tile_n = 0;
  uint64_t shared_bytes = 0;
  uint32_t registers = 0;  // accumulators per invocation
  std::string label;
  double loads_per_fma = 0;  // the cost model: loads an invocation issues per multiply-add
};
bool variant_of(const hal_kernel_info& kernel, const TunableValues& v, Variant* out) {
  auto get = [&](const char* name) { return tunable_value(v, name); };
  auto text = [&](const char* name) { return std::string(name) + "=" + std::to_string(get(name)); };
  std::vector<uint32_t> values;
  for (uint32_t i = 0; i < kernel.tunable_count; ++i)
    values.push_back(get(kernel.tunables[i].name));
  uint32_t bm = 0, bn = 0;
  if (!hal_kernels_matmul_tile(&kernel, values.data(), &bm, &bn)) return false;
  const std::string family = kernel.family;
  // The cost model: per multiply-add, the loads one invocation issues (from shared memory or
  // from buffers alike: a CPU implementation pays for both, a GPU at least for issuing them).
  // Only the order in which the search tries candidates depends on it.
  const double threads = kernel.block[0] * kernel.block[1] * kernel.block[2];
  if (family.rfind("matmul_mma_", 0) == 0) {  // tensor cores, fp16 tiles
    const double wm = get("WM"), wn = get("WN");
    if (wm == 0 || wn == 0) return false;
    // One mma.sync is 16 x 8 x 16 multiply-adds per warp: 64 per lane per instruction.
    *out = {bm,
            bn,
            kernel.shared_bytes,
            get("WM") * get("WN") / 32,
            "mma " + text("BM") + " " + text("BN") + " " + text("BK") + " " + text("WM") + " " +
                text("WN") + " " + text("S") + " " + text("PREFETCH"),
            (1 / wm + 1 / wn) / 64};
  } else if (family.rfind("matmul_tiled_", 0) == 0) {
    // shared-memory tiles: BM x BN, BK deep, (BM/16) x (BN/16) per thread; each thread stages
    // (BM + BN) * BK / threads elements and reads TM + TN per step of K
    if (get("BK") == 0) return false;
    const double tm = bm / 16.0, tn = bn / 16.0;
    *out = {bm,
            bn,
            uint64_t{get("BK")} * (bm + bn) * 4,
            (bm / 16) * (bn / 16),
            "tiled " + text("BM") + " " + text("BN") + " " + text("BK"),
            (tm + tn + (bm + bn) / threads) / (tm * tn)};
  } else if (family.rfind("matmul_reg_", 0) == 0) {  // TM x TN per thread, TX threads across
    const double tm = get("TM"), tn = get("TN");
    *out = {bm,
            bn,
            0,
            get("TM") * get("TN"),
            "reg " + text("TM") + " " + text("TN") + " " + text("TX"),
            (tm + tn) / (tm * tn)};
  } else if (family.rfind("matmul_sg_", 0) == 0) {  // as reg, SG lanes across sharing A
    const double tm = get("TM"), tn = get("TN"), sg = get("SG");
    *out = {bm,
            bn,
            0,
            get("TM") * get("TN"),
            "sg " + text("TM") + " " + text("TN") + " " + text("SG"),
            (std::ceil(tm / sg) + tn) / (tm * tn)};
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> MatmulProblem::families() {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) {
    const std::string family = tuning_family(hal_kernels_get(i)->family);
    if (family.empty()) continue;
    if (std::find(out.begin(), out.end(), family) == out.end()) out.push_back(family);
  }
  return out;
}

std::vector<Candidate> matmul_candidates(const hal_device_info& info, const std::string& family,
                                         std::string* why) {
  const std::vector<std::string> known = MatmulProblem::families();
  if (std::find(known.begin(), known.end(), family) == known.end()) {
    std::string list;
    for (const std::string& f : known) list += (list.empty() ? "" : ", ") + f;
    *why = "'" + family + "' is not a matmul family the tuner knows (it knows: " + list + ")";
    return {};
  }
  if ((info.ir_mask & (HAL_IR_SPIRV | HAL_IR_PTX)) == 0) {
    *why = "the device runs neither SPIR-V nor PTX, the IRs the pack's matmul kernels exist in";
    return {};
  }
  const hal_ir ir = (info.ir_mask & HAL_IR_SPIRV) != 0 ? HAL_IR_SPIRV : HAL_IR_PTX;
  const uint32_t shared_limit = info.max_shared_memory_per_block;
  const uint32_t threads_limit = info.max_threads_per_block;

  std::vector<Candidate> out;
  bool lacks_features = false;
  auto add = [&](const hal_kernel_info& kernel, const hal_kernel_blob& blob,
                 const TunableValues& values, bool specialise) {
    Variant v;
    if (!variant_of(kernel, values, &v)) return;
    if (shared_limit != 0 && v.shared_bytes > shared_limit) return;
    if (threads_limit != 0 && kernel.block[0] * kernel.block[1] * kernel.block[2] > threads_limit)
      return;
    const bool subgroup = std::string(kernel.family).rfind("matmul_sg_", 0) == 0;
    if (v.registers > (subgroup ? kMaxSubgroupAccumulators : kMaxAccumulators)) return;
    // A SPIR-V subgroup variant laid out for another subgroup size than the device's runs, but
    // loads everything itself: never faster than the device's own size, so not worth timing.
    if (subgroup && specialise && tunable_value(values, "SG") != info.subgroup_size) return;
    Candidate c = candidate_for(kernel, blob, values, specialise);
    c.tile[0] = v.tile_m;
    c.tile[1] = v.tile_n;
    c.label = v.label;
    c.estimate = v.loads_per_fma;
    c.is_default = std::string(kernel.family).rfind("matmul_tiled_", 0) == 0 &&
                   v.tile_m == kDefaultBm && v.tile_n == kDefaultBn &&
                   v.shared_bytes == uint64_t{kDefaultBk} * (kDefaultBm + kDefaultBn) * 4;
    for (const Candidate& existing : out) {
      if (existing.label == c.label) return;  // the same variant from another instance
    }
    out.push_back(std::move(c));
  };

  for_each_variant(
      info, ir,
      [&](const std::string& pack_family) { return tuning_family(pack_family) == family; }, add,
      &lacks_features);
  bool has_default = false;
  for (const Candidate& c : out) has_default = has_default || c.is_default;
  if (out.empty() || !has_default) {
    *why = lacks_features ? "the device lacks a feature " + family + " needs (fp16 storage)"
                          : "no candidate of " + family +
                                " fits the device's limits (shared "
                                "memory " +
                                std::to_string(shared_limit) + " bytes)";
    return {};
  }
  return out;
}

std::unique_ptr<MatmulProblem> MatmulProblem::create(hal_device device, const std::string& family,
                                                     MatmulShape shape, std::string* why) {
  if (shape.m == 0 || shape.n == 0 || shape.k == 0) {
    *why = "every dimension of the shape must be at least 1";
    return nullptr;
  }
  hal_device_info info{};
  info.struct_size = sizeof(info);
  if (hal_status s = hal_device_get_info(device, &info); s != HAL_SUCCESS) {
    *why = status_text("hal_device_get_info", s);
    return nullptr;
  }
  std::unique_ptr<MatmulProblem> p(new MatmulProblem());
  p->candidates_ = matmul_candidates(info, family, why);
  if (p->candidates_.empty()) return nullptr;
  // Loads per multiply-add hold for a problem of many tiles. A tile that overhangs the problem
  // computes padding as well, so its estimate grows by its padded share: a small problem tries
  // small tiles first, rather than the largest tiles, which are also the slowest to compile.
  for (Candidate& c : p->candidates_) {
    const auto padded = [](uint32_t size, uint32_t tile) {
      return tile == 0 ? double(size) : double((uint64_t{size} + tile - 1) / tile * tile);
    };
    c.estimate *= padded(shape.m, c.tile[0]) * padded(shape.n, c.tile[1]) /
                  (double(shape.m) * double(shape.n));
  }
  p->family_ = family;
  p->shape_ = shape;
  p->bucket_ = shape_bucket({shape.m, shape.n, shape.k});
  const bool f16 =
      std::string(hal_kernels_info(p->candidates_.front().kernel.c_str())->dtype) == "f16";
  if (!p->open(device, f16, why)) return nullptr;
  const size_t sizes[3] = {size_t{shape.m} * shape.k, size_t{shape.k} * shape.n,
                           size_t{shape.m} * shape.n};
  hal_deviceptr* targets[3] = {&p->a_, &p->b_, &p->c_};
  for (int i = 0; i < 3; ++i) {
    if (!p->alloc(sizes[i], targets[i], why)) return nullptr;
  }
  p->host_a_ = ref::random_uniform(sizes[0], 11);
  p->host_b_ = ref::random_uniform(sizes[1], 12);
  if (p->f16_) {
    ref::round_to_half(&p->host_a_);
    ref::round_to_half(&p->host_b_);
  }
  if (!p->upload(p->a_, p->host_a_, why) || !p->upload(p->b_, p->host_b_, why)) return nullptr;
  p->check_rows_ = {0, shape.m / 2, shape.m - 1};
  if (shape.m > 1) p->check_rows_.insert(p->check_rows_.begin() + 1, 1);
  return p;
}

bool MatmulProblem::launch_at(const Candidate& candidate, const Loaded& loaded, MatmulShape shape,
                              hal_deviceptr a, hal_deviceptr b, hal_deviceptr c, float alpha,
                              float beta, std::string* why) {
  uint32_t m = shape.m, n = shape.n, k = shape.k, lda = shape.k, ldb = shape.n, ldc = shape.n;
  void* args[] = {&a, &b, &c, &m, &n, &k, &lda, &ldb, &ldc, &alpha, &beta};
  const uint32_t grid[3] = {ceil_div(shape.n, candidate.tile[1]),
                            ceil_div(shape.m, candidate.tile[0]), 1};
  return launch(candidate, loaded, grid, args, why);
}

bool MatmulProblem::run(const Candidate& candidate, const Loaded& loaded, std::string* why) {
  return launch_at(candidate, loaded, shape_, a_, b_, c_, 1.0f, 0.0f, why);
}

bool MatmulProblem::check(const Candidate& candidate, std::string* why) {
  Loaded* loaded = nullptr;
  if (!load(candidate, &loaded, why)) return false;
  const ref::Storage storage = f16_ ? ref::Storage::kF16 : ref::Storage::kF32;

  // 1. The small odd shape, every element, alpha and beta both in play.
  {
    const MatmulShape s = kCheckShape;
    std::vector<float> a = ref::random_uniform(size_t{s.m} * s.k, 21);
    std::vector<float> b = ref::random_uniform(size_t{s.k} * s.n, 22);
    std::vector<float> c0 = ref::random_uniform(size_t{s.m} * s.n, 23);
    if (f16_) {
      ref::round_to_half(&a);
      ref::round_to_half(&b);
      ref::round_to_half(&c0);
    }
    const ScratchScope scratch(this);
    hal_deviceptr da = 0, db = 0, dc = 0;
    if (!alloc(a.size(), &da, why) || !alloc(b.size(), &db, why) || !alloc(c0.size(), &dc, why)) {
      return false;
    }
    if (!upload(da, a, why) || !upload(db, b, why) || !upload(dc, c0, why)) return false;
    if (!launch_at(candidate, *loaded, s, da, db, dc, kCheckAlpha, kCheckBeta, why)) return false;
    std::vector<float> out;
    if (!download(dc, c0.size(), &out, why)) return false;
    const ref::Result expected =
        ref::matmul(a, b, c0, s.m, s.n, s.k, s.k, s.n, s.n, kCheckAlpha, kCheckBeta, storage);
    const ref::Check result = ref::compare(out, expected);
    if (!result.ok()) {
      return fail(why, "wrong result at " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                           std::to_string(s.k) + ": " + result.summary());
    }
  }

  // 2. The problem shape, on sampled rows.
  const MatmulShape s = shape_;
  if (!launch_at(candidate, *loaded, s, a_, b_, c_, 1.0f, 0.0f, why)) return false;
  std::vector<float> out;
  if (!download(c_, size_t{s.m} * s.n, &out, why)) return false;
  for (uint32_t row : check_rows_) {
    const std::vector<float> a_row(host_a_.begin() + size_t{row} * s.k,
                                   host_a_.begin() + size_t{row + 1} * s.k);
    const ref::Result expected =
        ref::matmul(a_row, host_b_, {}, 1, s.n, s.k, s.k, s.n, s.n, 1.0f, 0.0f, storage);
    const ref::Check result = ref::compare(out.data() + size_t{row} * s.n, expected);
    if (!result.ok()) {
      return fail(why, "wrong result in row " + std::to_string(row) +
                           " at the problem shape: " + result.summary());
    }
  }
  return true;
}

}  // namespace hal_kernels::tune
