// CPU references for the kernel pack, with the error bound each device result is held to.
//
// Every reference takes fp32 inputs (fp16 data is first widened, which is exact), accumulates in
// double, and returns the exact-as-possible result together with a per-element bound on how far
// a correct fp32-accumulating kernel may be from it. The bounds follow the tolerance policy in
// kernels/README.md: they grow with the length of each reduction, with the magnitudes summed
// (so cancellation cannot make them fail spuriously), and with the storage type of the output.
//
// Thread-safety: every function is pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hal_kernels::ref {

// ---- Storage types ----------------------------------------------------------------------------

enum class Storage { kF32, kF16 };

const char* storage_name(Storage storage);
// Unit roundoff of fp32 arithmetic: 2^-24.
constexpr double kUnitF32 = 1.0 / 16777216.0;
// The relative error of storing a result in |storage|: 2^-24 (fp32, round to nearest) or 2^-10
// (fp16: one ulp, as Vulkan does not fix the rounding mode of a conversion to fp16).
double store_unit(Storage storage);
// The absolute error allowed on top for results near zero: flushed fp32 denormals, or the fp16
// subnormal spacing.
double store_floor(Storage storage);

// IEEE binary16 conversions (round to nearest even; infinities and NaN preserved).
uint16_t float_to_half(float value);
float half_to_float(uint16_t bits);
// Rounds every element to the nearest fp16 value, in place.
void round_to_half(std::vector<float>* values);
std::vector<uint16_t> to_half(const std::vector<float>& values);
std::vector<float> from_half(const std::vector<uint16_t>& bits);

// ---- Test data --------------------------------------------------------------------------------

// |count| values uniform in [lo, hi) from a small deterministic generator (the same on every
// platform and standard library).
std::vector<float> random_uniform(size_t count, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

// ---- References -------------------------------------------------------------------------------

// A reference result and, per element, the largest acceptable |device - value|.
struct Result {
  std::vector<double> value;
  std::vector<double> bound;
};

// C = alpha * A * B + beta * C0, row-major with leading dimensions lda, ldb, ldc; returns the
// dense M x N result (row stride N). beta == 0 ignores C0 (which may then be empty).
Result matmul(const std::vector<float>& A, const std::vector<float>& B,
              const std::vector<float>& C0, uint32_t M, uint32_t N, uint32_t K, uint32_t lda,
              uint32_t ldb, uint32_t ldc, float alpha, float beta, Storage storage);

// Y = softmax of each row of the rows x cols matrix X (-inf entries give 0; an all -inf row
// gives 0).
Result softmax_rows(const std::vector<float>& X, uint32_t rows, uint32_t cols, Storage storage);

// Y[r] = sum of row r.
Result row_sum(const std::vector<float>& X, uint32_t rows, uint32_t cols, Storage storage);

// Attention over Q [bh, seq_q, d], K and V [bh, seq_kv, d]: O [bh, seq_q, d] =
// softmax(scale * Q K^T, causal) V, where with |causal| key j is visible to query i when
// j <= i + seq_kv - seq_q; a row with no visible key gives 0.
Result attention(const std::vector<float>& Q, const std::vector<float>& K,
                 const std::vector<float>& V, uint32_t batch_heads, uint32_t seq_q, uint32_t seq_kv,
                 uint32_t head_dim, float scale, bool causal, Storage storage);

// The scores S [bh, seq_q, seq_kv] = scale * Q K^T, -inf where hidden (always fp32 storage).
Result attention_scores(const std::vector<float>& Q, const std::vector<float>& K,
                        uint32_t batch_heads, uint32_t seq_q, uint32_t seq_kv, uint32_t head_dim,
                        float scale, bool causal);

// ---- Checking ---------------------------------------------------------------------------------

struct Check {
  size_t count = 0;
  size_t failures = 0;        // elements with |device - value| > bound (or not finite)
  double max_abs_err = 0;     // max |device - value|
  double max_rel_err = 0;     // max |device - value| / |value| over the significant elements
  double worst_ratio = 0;     // max |device - value| / bound
  double bound_at_worst = 0;  // the bound of the element with the worst ratio
  size_t worst_index = 0;
  double worst_device = 0;
  double worst_value = 0;
  bool ok() const { return failures == 0; }
  // One line: counts, max abs/rel error, the worst element and the bound it was held to.
  std::string summary() const;
};

// Compares |device| (count elements) with |ref|. Relative errors are taken over the elements
// whose |value| is at least 2^-10 of the largest |value| (relative error means nothing near 0).
// Infinite reference values (masked scores) must match exactly.
Check compare(const float* device, const Result& ref);
Check compare(const std::vector<float>& device, const Result& ref);

}  // namespace hal_kernels::ref
