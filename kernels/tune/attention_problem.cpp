#include "attention_problem.h"

#include <hal_kernels/hal_kernels.h>
#include <hal_kernels/reference.h>

#include <algorithm>
#include <cmath>

namespace hal_kernels::tune {
namespace {

namespace ref = hal_kernels::ref;

// The small check shape: no multiple of any tile, and seq_kv > seq_q so the causal rule's offset
// is in play.
constexpr AttentionShape kCheckShape = {2, 37, 45, 0, true};
// Query rows per block of attention_fused (its grid is ceil(seq_q / 16)).
constexpr uint32_t kFusedRows = 16;
// More accumulators per thread than this spill and compile slowly without running faster.
constexpr uint32_t kMaxAccumulators = 512;

// The pack's families whose kernels are variants of one tuning family: "attention_fused_f32" and
// "attention_reg_f32" for "attention_f32".
constexpr const char* kPackFamilyKinds[] = {"attention_fused_", "attention_reg_"};

std::string tuning_family(const std::string& pack_family) {
  for (const char* kind : kPackFamilyKinds) {
    const std::string prefix = kind;
    if (pack_family.rfind(prefix, 0) == 0) return "attention_" + pack_family.substr(prefix.size());
  }
  return "";
}

uint32_t ceil_div(uint32_t a, uint32_t b) {
  return (a + b - 1) / b;
}

}  // namespace

std::string attention_bucket(const AttentionShape& shape) {
  return shape_bucket({shape.batch_heads, shape.seq_q, shape.seq_kv, shape.head_dim});
}

std::vector<std::string> AttentionProblem::families() {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) {
    const std::string family = tuning_family(hal_kernels_get(i)->family);
    if (family.empty()) continue;
    if (std::find(out.begin(), out.end(), family) == out.end()) out.push_back(family);
  }
  return out;
}

std::vector<uint32_t> AttentionProblem::head_dims() {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) {
    const hal_kernel_info* k = hal_kernels_get(i);
    if (tuning_family(k->family).empty()) continue;
    const uint32_t d = tunable_value(tunable_defaults(*k), "D");
    if (d != 0 && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Candidate> attention_candidates(const hal_device_info& info, const std::string& family,
                                            uint32_t head_dim, std::string* why) {
  const std::vector<std::string> known = AttentionProblem::families();
  if (std::find(known.begin(), known.end(), family) == known.end()) {
    std::string list;
    for (const std::string& f : known) list += (list.empty() ? "" : ", ") + f;
    *why = "'" + family + "' is not an attention family the tuner knows (it knows: " + list + ")";
    return {};
  }
  const std::vector<uint32_t> dims = AttentionProblem::head_dims();
  if (std::find(dims.begin(), dims.end(), head_dim) == dims.end()) {
    std::string list;
    for (uint32_t d : dims) list += (list.empty() ? "" : ", ") + std::to_string(d);
    *why = "head dim " + std::to_string(head_dim) + " is not one the pack's fused attention has (" +
           list + ")";
    return {};
  }
  if ((info.ir_mask & (HAL_IR_SPIRV | HAL_IR_PTX)) == 0) {
    *why = "the device runs neither SPIR-V nor PTX, the IRs the pack's attention kernels exist in";
    return {};
  }
  const hal_ir ir = (info.ir_mask & HAL_IR_SPIRV) != 0 ? HAL_IR_SPIRV : HAL_IR_PTX;

  std::vector<Candidate> out;
  bool lacks_features = false;
  auto add = [&](const hal_kernel_info& kernel, const hal_kernel_blob& blob,
                 const TunableValues& values, bool specialise) {
    if (tunable_value(values, "D") != head_dim) return;
    Candidate c = candidate_for(kernel, blob, values, specialise);
    const bool fused = std::string(kernel.family).rfind("attention_fused_", 0) == 0;
    uint64_t shared_bytes = 0;
    if (fused) {
      // Q and K tiles with padded rows, the V tile and the 16 x 16 scores, in fp32.
      shared_bytes = (2 * kFusedRows * (head_dim + 1) + kFusedRows * head_dim + 16 * 16) * 4;
      c.tile[0] = kFusedRows;
      c.label = "fused";
      c.is_default = true;
    } else {
      const uint32_t rq = tunable_value(values, "RQ"), bkv = tunable_value(values, "BKV");
      const uint32_t wg = tunable_value(values, "WG");
      if (rq == 0 || bkv == 0 || wg == 0) return;
      if (rq * head_dim > kMaxAccumulators) return;
      c.block[0] = wg;
      c.tile[0] = wg * rq;
      c.label = "reg RQ=" + std::to_string(rq) + " BKV=" + std::to_string(bkv) +
                " WG=" + std::to_string(wg);
    }
    const uint32_t threads = c.block[0] * c.block[1] * c.block[2];
    if (info.max_threads_per_block != 0 && threads > info.max_threads_per_block) return;
    if (info.max_shared_memory_per_block != 0 && shared_bytes > info.max_shared_memory_per_block)
      return;
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
                          : "no candidate of " + family + " fits the device's limits";
    return {};
  }
  return out;
}

void attention_grid(const Candidate& candidate, const AttentionShape& shape, uint32_t grid[3]) {
  grid[0] = ceil_div(shape.seq_q, std::max(candidate.tile[0], 1u));
  grid[1] = shape.batch_heads;
  grid[2] = 1;
}

std::unique_ptr<AttentionProblem> AttentionProblem::create(hal_device device,
                                                           const std::string& family,
                                                           AttentionShape shape, std::string* why) {
  if (shape.batch_heads == 0 || shape.seq_q == 0 || shape.seq_kv == 0 || shape.head_dim == 0) {
    *why = "every dimension of the shape must be at least 1";
    return nullptr;
  }
  hal_device_info info{};
  info.struct_size = sizeof(info);
  if (hal_status s = hal_device_get_info(device, &info); s != HAL_SUCCESS) {
    *why = status_text("hal_device_get_info", s);
    return nullptr;
  }
  if (shape.batch_heads > info.max_grid_dim[1]) {
    *why = "batch_heads " + std::to_string(shape.batch_heads) + " exceeds the device's grid (" +
           std::to_string(info.max_grid_dim[1]) + " in y)";
    return nullptr;
  }
  std::unique_ptr<AttentionProblem> p(new AttentionProblem());
  p->candidates_ = attention_candidates(info, family, shape.head_dim, why);
  if (p->candidates_.empty()) return nullptr;
  p->family_ = family;
  p->shape_ = shape;
  p->bucket_ = attention_bucket(shape);
  const bool f16 =
      std::string(hal_kernels_info(p->candidates_.front().kernel.c_str())->dtype) == "f16";
  if (!p->open(device, f16, why)) return nullptr;
  const size_t q_size = size_t{shape.batch_heads} * shape.seq_q * shape.head_dim;
  const size_t kv_size = size_t{shape.batch_heads} * shape.seq_kv * shape.head_dim;
  if (!p->alloc(q_size, &p->q_, why) || !p->alloc(kv_size, &p->k_, why) ||
      !p->alloc(kv_size, &p->v_, why) || !p->alloc(q_size, &p->o_, why)) {
    return nullptr;
  }
  p->host_q_ = ref::random_uniform(q_size, 31);
  p->host_k_ = ref::random_uniform(kv_size, 32);
  p->host_v_ = ref::random_uniform(kv_size, 33);
  if (p->f16_) {
    for (std::vector<float>* x : {&p->host_q_, &p->host_k_, &p->host_v_}) ref::round_to_half(x);
  }
  if (!p->upload(p->q_, p->host_q_, why) || !p->upload(p->k_, p->host_k_, why) ||
      !p->upload(p->v_, p->host_v_, why)) {
    return nullptr;
  }
  return p;
}

bool AttentionProblem::launch_at(const Candidate& candidate, const Loaded& loaded,
                                 const AttentionShape& shape, hal_deviceptr q, hal_deviceptr k,
                                 hal_deviceptr v, hal_deviceptr o, std::string* why) {
  uint32_t bh = shape.batch_heads, seq_q = shape.seq_q, seq_kv = shape.seq_kv;
  uint32_t causal = shape.causal ? 1 : 0;
  float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
  void* args[] = {&q, &k, &v, &o, &bh, &seq_q, &seq_kv, &scale, &causal};
  uint32_t grid[3];
  attention_grid(candidate, shape, grid);
  return launch(candidate, loaded, grid, args, why);
}

bool AttentionProblem::run(const Candidate& candidate, const Loaded& loaded, std::string* why) {
  return launch_at(candidate, loaded, shape_, q_, k_, v_, o_, why);
}

bool AttentionProblem::check(const Candidate& candidate, std::string* why) {
  Loaded* loaded = nullptr;
  if (!load(candidate, &loaded, why)) return false;
  const ref::Storage storage = f16_ ? ref::Storage::kF16 : ref::Storage::kF32;
  const uint32_t d = shape_.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));

  // 1. The small odd shape, causal, every element.
  {
    AttentionShape s = kCheckShape;
    s.head_dim = d;
    const size_t q_size = size_t{s.batch_heads} * s.seq_q * d;
    const size_t kv_size = size_t{s.batch_heads} * s.seq_kv * d;
    std::vector<float> q = ref::random_uniform(q_size, 41);
    std::vector<float> k = ref::random_uniform(kv_size, 42);
    std::vector<float> v = ref::random_uniform(kv_size, 43);
    if (f16_) {
      for (std::vector<float>* x : {&q, &k, &v}) ref::round_to_half(x);
    }
    const ScratchScope scratch(this);
    hal_deviceptr dq = 0, dk = 0, dv = 0, dout = 0;
    if (!alloc(q_size, &dq, why) || !alloc(kv_size, &dk, why) || !alloc(kv_size, &dv, why) ||
        !alloc(q_size, &dout, why)) {
      return false;
    }
    if (!upload(dq, q, why) || !upload(dk, k, why) || !upload(dv, v, why)) return false;
    if (!poison(dout, q_size, why)) return false;
    if (!launch_at(candidate, *loaded, s, dq, dk, dv, dout, why)) return false;
    std::vector<float> out;
    if (!download(dout, q_size, &out, why)) return false;
    const ref::Result expected =
        ref::attention(q, k, v, s.batch_heads, s.seq_q, s.seq_kv, d, scale, true, storage);
    const ref::Check result = ref::compare(out, expected);
    if (!result.ok()) {
      return fail(why, "wrong result at batch_heads " + std::to_string(s.batch_heads) + ", seq_q " +
                           std::to_string(s.seq_q) + ", seq_kv " + std::to_string(s.seq_kv) +
                           " (causal): " + result.summary());
    }
  }

  // 2. The problem shape, on sampled query rows of the first and the last head.
  const AttentionShape& s = shape_;
  if (!poison(o_, size_t{s.batch_heads} * s.seq_q * d, why)) return false;
  if (!launch_at(candidate, *loaded, s, q_, k_, v_, o_, why)) return false;
  std::vector<float> out;
  if (!download(o_, size_t{s.batch_heads} * s.seq_q * d, &out, why)) return false;
  std::vector<uint32_t> rows = {0, s.seq_q / 2, s.seq_q - 1};
  if (s.seq_q > 1) rows.insert(rows.begin() + 1, 1);
  for (uint32_t h : {0u, s.batch_heads - 1}) {
    for (uint32_t row : rows) {
      // The keys row |row| sees: all, or under the causal rule the first row + seq_kv - seq_q + 1.
      int64_t visible = s.seq_kv;
      if (s.causal) {
        visible = std::clamp<int64_t>(int64_t{row} + s.seq_kv - s.seq_q + 1, 0, s.seq_kv);
      }
      const float* got = out.data() + (size_t{h} * s.seq_q + row) * d;
      const std::string where = "head " + std::to_string(h) + ", query row " + std::to_string(row) +
                                " at the problem shape";
      if (visible == 0) {  // no visible key: the pack's kernels write 0
        for (uint32_t c = 0; c < d; ++c) {
          if (got[c] != 0.0f) return fail(why, "wrong result in " + where + ": expected 0");
        }
        continue;
      }
      const auto q_row = host_q_.begin() + (size_t{h} * s.seq_q + row) * d;
      const auto kv_head = size_t{h} * s.seq_kv * d;
      const std::vector<float> q(q_row, q_row + d);
      const std::vector<float> k(host_k_.begin() + kv_head,
                                 host_k_.begin() + kv_head + size_t(visible) * d);
      const std::vector<float> v(host_v_.begin() + kv_head,
                                 host_v_.begin() + kv_head + size_t(visible) * d);
      const ref::Result expected =
          ref::attention(q, k, v, 1, 1, uint32_t(visible), d, scale, false, storage);
      const ref::Check result = ref::compare(got, expected);
      if (!result.ok()) return fail(why, "wrong result in " + where + ": " + result.summary());
    }
  }
  return true;
}

}  // namespace hal_kernels::tune
