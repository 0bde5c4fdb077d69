// The pack's fused attention kernels as a tuning Problem: O = softmax(scale * Q K^T, causal) V
// over Q [batch_heads, seq_q, D], K and V [batch_heads, seq_kv, D], in one launch.
//
// A tuning family is a storage type: attention_f32 or attention_f16. Its candidates are the
// variants, at the problem's head dim D (64 or 128), of the pack's fused families of that type:
// attention_fused_<type> (16 query rows per block of 128 threads, keys staged 16 at a time
// through shared memory) and attention_reg_<type> (no shared memory: each of WG threads keeps RQ
// query rows and their D outputs in registers and walks the keys BKV at a time). On a device
// whose IR is SPIR-V every allowed combination of the tunables (specialization constants) that
// fits the device is a candidate: at most max_threads_per_block threads, shared memory within
// max_shared_memory_per_block, at most 512 accumulators (RQ x D) per thread. On a PTX device the
// candidates are the kernels for D. The default, the baseline of every result, is
// attention_fused: the kernel the pack has shipped as its fused attention.
//
// Checking a candidate (Problem::check): one causal run on a small shape whose sizes are no
// multiple of any tile (batch_heads 2, seq_q 37, seq_kv 45, so the causal offset is 8 and
// partial tiles run), compared element by element with the CPU reference; then one run at the
// problem shape whose query rows 0, 1, seq_q/2 and seq_q-1 of the first and the last head are
// compared with reference rows. Bounds are the pack's tolerance policy (reference.h).
//
// Timing (Problem::time): each run is one launch (DeviceProblem::time).
//
// Thread-safety: one thread at a time.
#pragma once

#include "device_problem.h"

#include <hal/hal.h>

#include <memory>
#include <string>
#include <vector>

namespace hal_kernels::tune {

struct AttentionShape {
  uint32_t batch_heads = 0, seq_q = 0, seq_kv = 0, head_dim = 0;
  bool causal = false;  // key j visible to query i when j <= i + seq_kv - seq_q
};

// The shape bucket of |shape| (tuning_db.h): batch_heads x seq_q x seq_kv x head_dim, each
// rounded up to a power of two; causal and not causal share it.
std::string attention_bucket(const AttentionShape& shape);

// The candidates of |family| at |head_dim| on a device with |info|, as described above; empty
// with *why when |family| is not one of AttentionProblem::families(), |head_dim| is not one the
// pack has, the device lacks what the family needs, or nothing fits.
std::vector<Candidate> attention_candidates(const hal_device_info& info, const std::string& family,
                                            uint32_t head_dim, std::string* why);

// The grid of |candidate| (one of attention_candidates) for |shape|.
void attention_grid(const Candidate& candidate, const AttentionShape& shape, uint32_t grid[3]);

class AttentionProblem : public DeviceProblem {
 public:
  // The tuning families: attention_<dtype> for each storage type the pack's fused attention has.
  static std::vector<std::string> families();
  // The head dims the pack's fused attention kernels have (64 and 128).
  static std::vector<uint32_t> head_dims();
  // Prepares |family| at |shape| on |device|, whose stream it creates. Returns nullptr with *why
  // when the family is not one of families(), the head dim not one of head_dims(), a dimension
  // is 0, the device lacks what the family needs, or device memory runs out.
  static std::unique_ptr<AttentionProblem> create(hal_device device, const std::string& family,
                                                  AttentionShape shape, std::string* why);

  bool check(const Candidate& candidate, std::string* why) override;

 private:
  AttentionProblem() = default;
  bool run(const Candidate& candidate, const Loaded& loaded, std::string* why) override;
  bool launch_at(const Candidate& candidate, const Loaded& loaded, const AttentionShape& shape,
                 hal_deviceptr q, hal_deviceptr k, hal_deviceptr v, hal_deviceptr o,
                 std::string* why);

  AttentionShape shape_;
  hal_deviceptr q_ = 0, k_ = 0, v_ = 0, o_ = 0;
  std::vector<float> host_q_, host_k_, host_v_;
};

}  // namespace hal_kernels::tune
