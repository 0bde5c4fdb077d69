// The pack's matmul kernels as a tuning Problem: C = alpha * A * B + beta * C, row-major,
// M x N x K.
//
// A tuning family is a storage type: matmul_f32 or matmul_f16. Its candidates are every variant
// of the pack's families of that type that compute the product the same way from the same
// parameters: matmul_tiled_<type> (shared-memory tiles: BM x BN of C per block, BK deep) and
// matmul_reg_<type> (no shared memory: each of the 64 threads keeps a TM x TN tile in registers,
// TX threads across), matmul_sg_<type> (as matmul_reg with SG lanes of a subgroup across, sharing
// their loads of A; devices with HAL_FEATURE_SUBGROUP_BALLOT) and, for fp16 on PTX devices,
// matmul_mma_f16 (tensor cores). On a device whose IR is SPIR-V each pack family contributes every
// allowed combination of its tunables (they are specialization constants) that fits the device:
// shared memory within max_shared_memory_per_block, at most 256 accumulators per thread (1024 for
// matmul_sg), and for matmul_sg SG equal to the device's subgroup size. On a PTX device
// the tunables are fixed per kernel, so the candidates are the kernels. The default, the
// baseline of every result, is tiled BM = BN = 64, BK = 16: the kernel the pack has shipped as
// its matmul.
//
// Checking a candidate (Problem::check): one run on a small shape whose sizes are no multiple of
// any tile (70 x 45 x 37, alpha 1.5, beta 0.5, so partial tiles and the read of C are covered),
// compared element by element with the CPU reference; then one run at the problem shape whose
// rows 0, 1, M/2 and M-1 are compared with reference rows (a full reference at 1024^3 costs a
// billion multiply-adds). Bounds are the pack's tolerance policy (reference.h).
//
// Timing (Problem::time): each run is one launch between two events (hal_event_elapsed_ms), or
// the wall time of launch and synchronise where the device has no timestamps.
//
// Thread-safety: one thread at a time.
#pragma once

#include "device_problem.h"

#include <hal/hal.h>

#include <memory>
#include <string>
#include <vector>

namespace hal_kernels::tune {

struct MatmulShape {
  uint32_t m = 0, n = 0, k = 0;
};

// The candidates of |family| on a device with |info|, as described above; empty with *why when
// |family| is not one of MatmulProblem::families(), the device lacks what it needs, or nothing
// fits.
std::vector<Candidate> matmul_candidates(const hal_device_info& info, const std::string& family,
                                         std::string* why);

class MatmulProblem : public DeviceProblem {
 public:
  // The tuning families: matmul_<dtype> for each storage type the pack's matmul kernels have.
  static std::vector<std::string> families();
  // Prepares |family| at |shape| on |device|, whose stream it creates. Returns nullptr with *why
  // when the family is not one of families(), the device lacks what it needs
  // (fp16 storage, an IR the pack has), a dimension is 0, or device memory runs out.
  static std::unique_ptr<MatmulProblem> create(hal_device device, const std::string& family,
                                               MatmulShape shape, std::string* why);

  bool check(const Candidate& candidate, std::string* why) override;

 private:
  MatmulProblem() = default;
  bool run(const Candidate& candidate, const Loaded& loaded, std::string* why) override;
  bool launch_at(const Candidate& candidate, const Loaded& loaded, MatmulShape shape,
                 hal_deviceptr a, hal_deviceptr b, hal_deviceptr c, float alpha, float beta,
                 std::string* why);

  MatmulShape shape_;
  // The problem shape's buffers and inputs, and the reference rows it is checked against.
  hal_deviceptr a_ = 0, b_ = 0, c_ = 0;
  std::vector<float> host_a_, host_b_;
  std::vector<uint32_t> check_rows_;
};

}  // namespace hal_kernels::tune
