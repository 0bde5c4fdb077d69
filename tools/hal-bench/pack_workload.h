// The pack's matmul and attention kernels as workloads that run the same kernels, with the same
// inputs and launch geometry, on several devices or in several IRs, so that a family can time
// them against each other and check that each computed the right result.
#pragma once

#include <hal/hal.h>
#include <hal_kernels/reference.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common.h"

namespace bench {

// The modules of the pack loaded on one device in one IR, each blob once: one PTX module holds
// many kernels (matmul.ptx twelve), and translating it for a Vulkan device takes seconds, so
// the kernels of one blob share one load.
class PackModules {
 public:
  PackModules(const Context& ctx, hal_ir ir) : ctx_(ctx), ir_(ir) {}
  ~PackModules();
  PackModules(const PackModules&) = delete;
  PackModules& operator=(const PackModules&) = delete;

  const Context& ctx() const { return ctx_; }
  hal_ir ir() const { return ir_; }
  // Whether the pack has kernel |name| in this IR and the device has what it needs.
  bool supported(const std::string& name) const;
  // Kernel |name|'s function, its module loaded the first time one of its kernels is asked for.
  hal_function function(const std::string& name);

 private:
  const Context& ctx_;
  hal_ir ir_;
  std::map<const void*, hal_module> modules_;  // by blob
};

struct Workload {
  enum class Kind {
    kMatmul,          // C = A·B, M = N = K = size
    kAttentionFused,  // the fused kernel |kernel|
    kAttentionSplit,  // attention_scores_<dtype>, softmax_rows_f32, attention_pv_<dtype>
  };
  Kind kind = Kind::kMatmul;
  std::string kernel;  // the pack's name (kAttentionSplit: the scores kernel)
  std::string dtype;   // "f32" or "f16"
  std::string label;   // the figures' suffix: kernel (or "attention_split_<dtype>") and shape
  uint32_t size = 0;
  uint32_t batch_heads = 0, seq = 0, head_dim = 0;

  static Workload matmul(const std::string& kernel, uint32_t size);
  static Workload attention_fused(const std::string& kernel, uint32_t batch_heads, uint32_t seq);
  static Workload attention_split(const std::string& dtype, uint32_t batch_heads, uint32_t seq,
                                  uint32_t head_dim);

  bool attention() const { return kind != Kind::kMatmul; }
  // Every kernel it launches.
  std::vector<std::string> kernels() const;
  // The FLOPs a run counts: 2·M·N·K, or 4·batch_heads·seq_q·seq_kv·head_dim (the softmax is not
  // counted), and that formula in words.
  double flop() const;
  const char* flop_text() const;
  std::vector<std::pair<std::string, std::string>> params() const;
};

// The inputs every instance of a workload uploads (uniform in [-1, 1), rounded to fp16 for f16
// storage, so that the reference sees exactly what the kernels read) and the reference result.
struct WorkloadData {
  explicit WorkloadData(const Workload& w);
  std::vector<std::vector<float>> inputs;  // A, B; or Q, K, V
  hal_kernels::ref::Result reference;
};

// One workload on one device in one IR: its buffers, inputs and arguments. run() launches its
// kernels and synchronizes.
class Instance {
 public:
  Instance(PackModules& modules, const Workload& w, const WorkloadData& data);
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  void run() const;
  // The last run's output against |data|'s reference: empty when it is right, else one line
  // saying how it is wrong.
  std::string check(const WorkloadData& data) const;

 private:
  struct Launch {
    hal_function function = nullptr;
    const hal_kernel_info* info = nullptr;
    uint32_t grid[3] = {1, 1, 1};
    std::vector<void*> args;
  };
  const Context& ctx_;
  Workload w_;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
  size_t output_ = 0;  // the buffer the result is in
  // The arguments point into these: no element moves once they are built.
  uint32_t u_[8] = {};
  float f_[3] = {};
  std::vector<Launch> launches_;
};

}  // namespace bench
