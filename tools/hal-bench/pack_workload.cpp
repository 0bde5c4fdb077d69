#include "pack_workload.h"

#include <algorithm>
#include <cmath>

namespace bench {

namespace ref = hal_kernels::ref;

PackModules::~PackModules() {
  for (const auto& [blob, module] : modules_) hal_module_unload(module);
}

bool PackModules::supported(const std::string& name) const {
  return hal_kernels_runs_on(hal_kernels_info(name.c_str()), ir_, &ctx_.info, nullptr, 0) != 0;
}

hal_function PackModules::function(const std::string& name) {
  const hal_kernel_blob* blob = hal_kernels_find(name.c_str(), ir_);
  if (blob == nullptr) throw HalError("kernel " + name + " is not in the pack for this IR");
  hal_module& module = modules_[blob->data];
  if (module == nullptr) {
    const hal_status status =
        hal_module_load(ctx_.device, blob->data, blob->size, nullptr, &module);
    if (status != HAL_SUCCESS) {
      modules_.erase(blob->data);
      check(status, ("hal_module_load of " + std::string(blob->file)).c_str());
    }
  }
  hal_function function = nullptr;
  BENCH_CHECK(hal_module_get_function(module, blob->entry_point, &function));
  return function;
}

Workload Workload::matmul(const std::string& kernel, uint32_t size) {
  Workload w;
  w.kind = Kind::kMatmul;
  w.kernel = kernel;
  w.dtype = hal_kernels_info(kernel.c_str())->dtype;
  w.size = size;
  w.label = kernel + "_" + std::to_string(size);
  return w;
}

Workload Workload::attention_fused(const std::string& kernel, uint32_t batch_heads, uint32_t seq) {
  const hal_kernel_info* info = hal_kernels_info(kernel.c_str());
  Workload w;
  w.kind = Kind::kAttentionFused;
  w.kernel = kernel;
  w.dtype = info->dtype;
  w.batch_heads = batch_heads;
  w.seq = seq;
  // The fused kernels take their head dimension from their name (..._d64).
  w.head_dim = static_cast<uint32_t>(std::stoul(kernel.substr(kernel.rfind("_d") + 2)));
  w.label = kernel + "_bh" + std::to_string(batch_heads) + "_s" + std::to_string(seq);
  return w;
}

Workload Workload::attention_split(const std::string& dtype, uint32_t batch_heads, uint32_t seq,
                                   uint32_t head_dim) {
  Workload w;
  w.kind = Kind::kAttentionSplit;
  w.kernel = "attention_scores_" + dtype;
  w.dtype = dtype;
  w.batch_heads = batch_heads;
  w.seq = seq;
  w.head_dim = head_dim;
  w.label = "attention_split_" + dtype + "_d" + std::to_string(head_dim) + "_bh" +
            std::to_string(batch_heads) + "_s" + std::to_string(seq);
  return w;
}

std::vector<std::string> Workload::kernels() const {
  if (kind == Kind::kAttentionSplit) {
    return {kernel, "softmax_rows_f32", "attention_pv_" + dtype};
  }
  return {kernel};
}

double Workload::flop() const {
  if (attention()) return 4.0 * batch_heads * seq * seq * head_dim;
  return 2.0 * size * size * size;
}

const char* Workload::flop_text() const {
  return attention() ? "4·batch_heads·seq_q·seq_kv·head_dim" : "2·M·N·K";
}

std::vector<std::pair<std::string, std::string>> Workload::params() const {
  std::string names;
  for (const std::string& k : kernels()) names += (names.empty() ? "" : " + ") + k;
  if (attention()) {
    return {{"kernel", names},
            {"dtype", dtype},
            {"batch_heads", std::to_string(batch_heads)},
            {"seq_q", std::to_string(seq)},
            {"seq_kv", std::to_string(seq)},
            {"head_dim", std::to_string(head_dim)},
            {"causal", "0"}};
  }
  return {{"kernel", names}, {"dtype", dtype}, {"size", std::to_string(size)}};
}

WorkloadData::WorkloadData(const Workload& w) {
  const ref::Storage storage = w.dtype == "f16" ? ref::Storage::kF16 : ref::Storage::kF32;
  const size_t count =
      w.attention() ? size_t{w.batch_heads} * w.seq * w.head_dim : size_t{w.size} * w.size;
  for (uint32_t seed = 1; seed <= (w.attention() ? 3u : 2u); ++seed) {
    inputs.push_back(ref::random_uniform(count, seed));
    if (storage == ref::Storage::kF16) ref::round_to_half(&inputs.back());
  }
  if (w.attention()) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(w.head_dim));
    reference = ref::attention(inputs[0], inputs[1], inputs[2], w.batch_heads, w.seq, w.seq,
                               w.head_dim, scale, false, storage);
  } else {
    const uint32_t n = w.size;
    reference = ref::matmul(inputs[0], inputs[1], {}, n, n, n, n, n, n, 1.0f, 0.0f, storage);
  }
}

Instance::Instance(PackModules& modules, const Workload& w, const WorkloadData& data)
    : ctx_(modules.ctx()), w_(w) {
  const bool f16 = w.dtype == "f16";
  const size_t elem = f16 ? 2 : 4;
  for (const std::vector<float>& input : data.inputs) {
    buffers_.push_back(std::make_unique<DeviceBuffer>(ctx_, input.size() * elem));
    if (f16) {
      const std::vector<uint16_t> half = ref::to_half(input);
      BENCH_CHECK(hal_memcpy_htod(ctx_.stream, buffers_.back()->ptr, half.data(), half.size() * 2));
    } else {
      BENCH_CHECK(
          hal_memcpy_htod(ctx_.stream, buffers_.back()->ptr, input.data(), input.size() * 4));
    }
  }
  output_ = buffers_.size();
  buffers_.push_back(std::make_unique<DeviceBuffer>(ctx_, data.reference.value.size() * elem));
  BENCH_CHECK(hal_memset_d8(ctx_.stream, buffers_[output_]->ptr, 0, buffers_[output_]->bytes));
  auto launch = [&](const std::string& name, uint32_t gx, uint32_t gy, uint32_t gz,
                    std::vector<void*> args) {
    Launch l;
    l.function = modules.function(name);
    l.info = hal_kernels_info(name.c_str());
    l.grid[0] = gx;
    l.grid[1] = gy;
    l.grid[2] = gz;
    l.args = std::move(args);
    launches_.push_back(std::move(l));
  };
  hal_deviceptr* p[5] = {};
  for (size_t i = 0; i < buffers_.size(); ++i) p[i] = &buffers_[i]->ptr;

  if (w.kind == Workload::Kind::kMatmul) {
    for (int i = 0; i < 6; ++i) u_[i] = w.size;  // M N K lda ldb ldc
    f_[0] = 1.0f;                                // alpha
    f_[1] = 0.0f;                                // beta
    uint32_t bm = 16, bn = 16;
    hal_kernels_matmul_tile(hal_kernels_info(w.kernel.c_str()), nullptr, &bm, &bn);
    launch(w.kernel, (w.size + bn - 1) / bn, (w.size + bm - 1) / bm, 1,
           {p[0], p[1], p[2], &u_[0], &u_[1], &u_[2], &u_[3], &u_[4], &u_[5], &f_[0], &f_[1]});
  } else {
    u_[0] = w.batch_heads;
    u_[1] = w.seq;  // seq_q
    u_[2] = w.seq;  // seq_kv
    u_[3] = w.head_dim;
    u_[4] = 0;  // causal
    f_[0] = 1.0f / std::sqrt(static_cast<float>(w.head_dim));
    if (w.kind == Workload::Kind::kAttentionFused) {
      launch(w.kernel, (w.seq + 15) / 16, w.batch_heads, 1,
             {p[0], p[1], p[2], p[3], &u_[0], &u_[1], &u_[2], &f_[0], &u_[4]});
    } else {
      // The scores, always fp32, then softmax in place and P·V.
      buffers_.push_back(
          std::make_unique<DeviceBuffer>(ctx_, size_t{w.batch_heads} * w.seq * w.seq * 4));
      p[4] = &buffers_.back()->ptr;
      u_[5] = w.batch_heads * w.seq;  // rows
      u_[6] = w.seq;                  // cols
      const uint32_t tiles = (w.seq + 15) / 16;
      launch(w.kernel, tiles, tiles, w.batch_heads,
             {p[0], p[1], p[4], &u_[0], &u_[1], &u_[2], &u_[3], &f_[0], &u_[4]});
      launch("softmax_rows_f32", std::min(u_[5], ctx_.info.max_grid_dim[0]), 1, 1,
             {p[4], p[4], &u_[5], &u_[6]});
      launch("attention_pv_" + w.dtype, (w.head_dim + 15) / 16, tiles, w.batch_heads,
             {p[4], p[2], p[3], &u_[0], &u_[1], &u_[2], &u_[3]});
    }
  }
  BENCH_CHECK(hal_stream_synchronize(ctx_.stream));
}

void Instance::run() const {
  for (const Launch& l : launches_) {
    hal_launch_config config{};
    for (int i = 0; i < 3; ++i) {
      config.grid[i] = l.grid[i];
      config.block[i] = l.info->block[i];
    }
    config.shared_bytes = l.info->shared_bytes;
    BENCH_CHECK(hal_launch(ctx_.stream, l.function, &config, l.args.data()));
  }
  BENCH_CHECK(hal_stream_synchronize(ctx_.stream));
}

std::string Instance::check(const WorkloadData& data) const {
  const size_t count = data.reference.value.size();
  std::vector<float> out(count);
  if (w_.dtype == "f16") {
    std::vector<uint16_t> half(count);
    BENCH_CHECK(hal_memcpy_dtoh(ctx_.stream, half.data(), buffers_[output_]->ptr, count * 2));
    BENCH_CHECK(hal_stream_synchronize(ctx_.stream));
    out = ref::from_half(half);
  } else {
    BENCH_CHECK(hal_memcpy_dtoh(ctx_.stream, out.data(), buffers_[output_]->ptr, count * 4));
    BENCH_CHECK(hal_stream_synchronize(ctx_.stream));
  }
  const ref::Check result = ref::compare(out, data.reference);
  return result.ok() ? std::string() : result.summary();
}

}  // namespace bench
