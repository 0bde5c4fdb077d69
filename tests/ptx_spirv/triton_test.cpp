// Triton's kernels in the tree (tests/ptx_cpu/triton, compiled by the pinned triton for sm_80),
// launched through the C ABI exactly as Triton's launcher launches them: a block of
// 32 * num_warps threads, the metadata's dynamic shared memory, and the two hidden scratch
// pointers Triton appends (null: both sizes are 0). Each runs on the first Vulkan device, which
// translates it, and on the CPU PTX device, which follows the PTX as written.
//
// softmax_rows reduces each row with warp shuffles (shfl.sync.bfly) and a cross-warp step
// through shared memory: it must give the host's softmax on both devices, and the two devices
// the same values within the rounding of ex2.approx, whose last bits PTX leaves open. The
// matmul is built from tensor-core instructions (mma.sync, ldmatrix): the two devices sum the
// same exact products in the same order, so they must give the same bits. Flash attention uses
// all of these together; its two-stage build fits lavapipe's 32 KiB of shared memory per block,
// the three-stage build does not and is refused at launch.
#include <gtest/gtest.h>
#include <hal/hal.h>

#include "two_devices.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Loads tests/ptx_cpu/triton/<name>.ptx on |device| and finds its entry, also named |name|;
// false with hal's message in |error|.
bool load_triton(hal_device device, const std::string& name, hal_module* module, hal_function* f,
                 std::string* error) {
  std::ifstream in(std::string(HAL_SOURCE_DIR) + "/tests/ptx_cpu/triton/" + name + ".ptx");
  std::stringstream text;
  text << in.rdbuf();
  const std::string ptx = text.str();
  *module = nullptr;
  if (hal_module_load(device, ptx.data(), ptx.size(), nullptr, module) != HAL_SUCCESS ||
      hal_module_get_function(*module, name.c_str(), f) != HAL_SUCCESS) {
    *error = hal_last_error();
    if (*module != nullptr) hal_module_unload(*module);
    return false;
  }
  return true;
}

class TritonOnVulkan : public ptx_spirv_testing::TwoDevices {
 protected:
  // softmax_rows(out, in, in_row_stride, out_row_stride, n_cols, global_scratch,
  // profile_scratch) over |rows| x |cols| on |d|; empty with the message in |error| on failure.
  std::vector<float> softmax(ptx_spirv_testing::Device& d, const std::vector<float>& x,
                             uint32_t rows, uint32_t cols, std::string* error) {
    hal_module module = nullptr;
    hal_function f = nullptr;
    if (!load_triton(d.device, "softmax_rows", &module, &f, error)) return {};
    const size_t bytes = x.size() * sizeof(float);
    hal_deviceptr in = 0, out = 0;
    EXPECT_EQ(hal_mem_alloc(d.device, bytes, &in), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_mem_alloc(d.device, bytes, &out), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_memcpy_htod(d.stream, in, x.data(), bytes), HAL_SUCCESS);
    hal_deviceptr scratch = 0;
    uint32_t stride = cols, n = cols;
    void* args[] = {&out, &in, &stride, &stride, &n, &scratch, &scratch};
    const hal_launch_config config{{rows, 1, 1}, {128, 1, 1}, 16};  // num_warps 4, 16 bytes
    EXPECT_EQ(hal_launch(d.stream, f, &config, args), HAL_SUCCESS) << hal_last_error();
    std::vector<float> y(x.size(), -1.0f);
    EXPECT_EQ(hal_memcpy_dtoh(d.stream, y.data(), out, bytes), HAL_SUCCESS);
    EXPECT_EQ(hal_stream_synchronize(d.stream), HAL_SUCCESS) << hal_last_error();
    hal_mem_free(d.device, in);
    hal_mem_free(d.device, out);
    hal_module_unload(module);
    return y;
  }
};

TEST_F(TritonOnVulkan, SoftmaxRunsAsOnTheCpuPtxDevice) {
  // Rows shorter and longer than the block's 128 lanes (Triton's BLOCK is 128 here: n_cols
  // up to 128), masked at the end.
  for (uint32_t cols : {1u, 33u, 100u, 128u}) {
    SCOPED_TRACE("n_cols " + std::to_string(cols));
    const uint32_t rows = 7;
    std::mt19937 rng(cols);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> x(size_t{rows} * cols);
    for (float& v : x) v = normal(rng);
    std::string error;
    const std::vector<float> want = softmax(cpu_, x, rows, cols, &error);
    ASSERT_EQ(want.size(), x.size()) << error;
    const std::vector<float> got = softmax(vulkan_, x, rows, cols, &error);
    ASSERT_EQ(got.size(), x.size()) << error;
    for (uint32_t r = 0; r < rows; ++r) {
      double max = -INFINITY, sum = 0;
      for (uint32_t c = 0; c < cols; ++c) max = std::fmax(max, x[r * cols + c]);
      for (uint32_t c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - max);
      for (uint32_t c = 0; c < cols; ++c) {
        const size_t i = size_t{r} * cols + c;
        const double host = std::exp(x[i] - max) / sum;
        EXPECT_NEAR(got[i], host, 1e-6 + 1e-5 * host) << "row " << r << ", column " << c;
        EXPECT_NEAR(got[i], want[i], 1e-6 + 1e-5 * want[i]) << "row " << r << ", column " << c;
      }
    }
  }
}

// Random f16 values of moderate size (normal numbers, exponents -5 to 2), as bits.
std::vector<uint16_t> random_halves(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint16_t> out(count);
  for (uint16_t& h : out) {
    const uint32_t r = rng();
    h = static_cast<uint16_t>((r & 0x8000u) | ((10u + (r >> 16) % 8u) << 10) | (r & 0x3FFu));
  }
  return out;
}

// The value of finite f16 bits |h|.
float half_value(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const float mantissa = static_cast<float>(h & 0x3FF);
  const float magnitude = exponent == 0 ? std::ldexp(mantissa, -24)
                                        : std::ldexp(1.0f + mantissa / 1024.0f, exponent - 15);
  return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

// The f16 bits of k / 1024 for an integer k in [-1024, 1024], which f16 holds exactly.
uint16_t half_bits_of_1024ths(int k) {
  if (k == 0) return 0;
  int exponent = 0;
  const float fraction = std::frexp(static_cast<float>(std::abs(k)), &exponent);  // in [0.5, 1)
  const uint32_t mantissa = static_cast<uint32_t>(std::ldexp(fraction * 2.0f - 1.0f, 10));
  const uint32_t biased = static_cast<uint32_t>(exponent - 1 - 10 + 15);
  return static_cast<uint16_t>((k < 0 ? 0x8000u : 0u) | biased << 10 | mantissa);
}

// matmul_f16(a, b, c, M, N, K, lda, ldb, ldc, scratch, scratch): C = A B, A M x K and B K x N
// f16 row-major, C f32, BLOCK_M = BLOCK_N = 64, BLOCK_K = 32; mma.sync m16n8k16 and ldmatrix
// (plain and .trans). Its PTX builds the tiles in 16 KiB of shared memory.
TEST_F(TritonOnVulkan, TensorCoreMatmulRunsAsOnTheCpuPtxDevice) {
  const uint32_t m = 72, n = 48, k = 64;  // N, K and the strides multiples of 16
  const std::vector<uint16_t> a = random_halves(size_t{m} * k, 1);
  const std::vector<uint16_t> bm = random_halves(size_t{k} * n, 2);
  std::vector<std::vector<float>> results;
  for (ptx_spirv_testing::Device* d : {&cpu_, &vulkan_}) {
    hal_module module = nullptr;
    hal_function f = nullptr;
    std::string error;
    ASSERT_TRUE(load_triton(d->device, "matmul_f16", &module, &f, &error)) << error;
    hal_deviceptr da = 0, db = 0, dc = 0, scratch = 0;
    ASSERT_EQ(hal_mem_alloc(d->device, a.size() * 2, &da), HAL_SUCCESS);
    ASSERT_EQ(hal_mem_alloc(d->device, bm.size() * 2, &db), HAL_SUCCESS);
    ASSERT_EQ(hal_mem_alloc(d->device, size_t{m} * n * 4, &dc), HAL_SUCCESS);
    EXPECT_EQ(hal_memcpy_htod(d->stream, da, a.data(), a.size() * 2), HAL_SUCCESS);
    EXPECT_EQ(hal_memcpy_htod(d->stream, db, bm.data(), bm.size() * 2), HAL_SUCCESS);
    uint32_t mm = m, nn = n, kk = k, lda = k, ldb = n, ldc = n;
    void* args[] = {&da, &db, &dc, &mm, &nn, &kk, &lda, &ldb, &ldc, &scratch, &scratch};
    const uint32_t grid = ((m + 63) / 64) * ((n + 63) / 64);
    const hal_launch_config config{{grid, 1, 1}, {128, 1, 1}, 16384};
    EXPECT_EQ(hal_launch(d->stream, f, &config, args), HAL_SUCCESS) << hal_last_error();
    std::vector<float> c(size_t{m} * n, -1.0f);
    EXPECT_EQ(hal_memcpy_dtoh(d->stream, c.data(), dc, c.size() * 4), HAL_SUCCESS);
    EXPECT_EQ(hal_stream_synchronize(d->stream), HAL_SUCCESS) << hal_last_error();
    for (hal_deviceptr p : {da, db, dc}) hal_mem_free(d->device, p);
    hal_module_unload(module);
    results.push_back(c);
  }
  int reported = 0;
  for (uint32_t i = 0; i < m && reported < 5; ++i) {
    for (uint32_t j = 0; j < n && reported < 5; ++j) {
      double host = 0;
      for (uint32_t q = 0; q < k; ++q) {
        host += double{half_value(a[i * k + q])} * half_value(bm[q * n + j]);
      }
      const float cpu = results[0][i * n + j], vk = results[1][i * n + j];
      // The same products summed in the same order: the same bits.
      if (std::memcmp(&cpu, &vk, 4) != 0 || std::fabs(vk - host) > 1e-3 * (1 + std::fabs(host))) {
        ++reported;
        ADD_FAILURE() << "C[" << i << "][" << j << "]: Vulkan " << vk << ", the CPU PTX device "
                      << cpu << ", the host " << host;
      }
    }
  }
}

// flash_attention_fwd_2stage(q, k, v, o, scale, seq_len, stride_h, stride_s, scratch, scratch):
// O = softmax(scale Q K^T) V per head, Q/K/V f16 [heads, seq, 64], O f32; 64 x 64 tiles, two
// pipeline stages, 24 KiB of shared memory. Every instruction family of Triton's attention:
// mma.sync, ldmatrix (plain and .trans), cp.async groups, shfl.sync.bfly row reductions,
// ex2.approx and cvt.rn.f16x2.f32. ex2.approx leaves its last bits open, so the devices are
// compared with each other and with the host within that rounding, not bit for bit.
TEST_F(TritonOnVulkan, FlashAttentionRunsAsOnTheCpuPtxDevice) {
  const uint32_t heads = 2, seq = 100, dim = 64;  // a ragged last query and key block
  const size_t count = size_t{heads} * seq * dim;
  std::vector<std::vector<uint16_t>> qkv;
  for (uint32_t seed : {11u, 12u, 13u}) {
    // Multiples of 1/1024 in [-1, 1]: exact in f16.
    std::mt19937 rng(seed);
    std::vector<uint16_t> t(count);
    for (uint16_t& h : t) {
      h = half_bits_of_1024ths(static_cast<int>(rng() % 2049) - 1024);
    }
    qkv.push_back(t);
  }
  std::vector<std::vector<float>> results;
  for (ptx_spirv_testing::Device* d : {&cpu_, &vulkan_}) {
    hal_module module = nullptr;
    hal_function f = nullptr;
    std::string error;
    ASSERT_TRUE(load_triton(d->device, "flash_attention_fwd_2stage", &module, &f, &error)) << error;
    hal_deviceptr buffers[4] = {}, scratch = 0;
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(hal_mem_alloc(d->device, count * (i < 3 ? 2 : 4), &buffers[i]), HAL_SUCCESS);
      if (i < 3) {
        EXPECT_EQ(hal_memcpy_htod(d->stream, buffers[i], qkv[i].data(), count * 2), HAL_SUCCESS);
      }
    }
    float scale = 0.125f;
    uint32_t seq_len = seq, stride_h = seq * dim, stride_s = dim;
    void* args[] = {&buffers[0], &buffers[1], &buffers[2], &buffers[3], &scale,
                    &seq_len,    &stride_h,   &stride_s,   &scratch,    &scratch};
    const hal_launch_config config{{(seq + 63) / 64, heads, 1}, {128, 1, 1}, 24576};
    EXPECT_EQ(hal_launch(d->stream, f, &config, args), HAL_SUCCESS) << hal_last_error();
    std::vector<float> o(count, -9.0f);
    EXPECT_EQ(hal_memcpy_dtoh(d->stream, o.data(), buffers[3], count * 4), HAL_SUCCESS);
    EXPECT_EQ(hal_stream_synchronize(d->stream), HAL_SUCCESS) << hal_last_error();
    for (hal_deviceptr p : buffers) hal_mem_free(d->device, p);
    hal_module_unload(module);
    results.push_back(o);
  }
  int reported = 0;
  for (uint32_t h = 0; h < heads; ++h) {
    for (uint32_t i = 0; i < seq; ++i) {
      const size_t row = (size_t{h} * seq + i) * dim;
      std::vector<double> p(seq);
      double max = -INFINITY, sum = 0;
      for (uint32_t j = 0; j < seq; ++j) {
        double s = 0;
        for (uint32_t c = 0; c < dim; ++c) {
          s += double{half_value(qkv[0][row + c])} *
               half_value(qkv[1][(size_t{h} * seq + j) * dim + c]);
        }
        p[j] = s * 0.125;
        max = std::fmax(max, p[j]);
      }
      for (double& v : p) sum += (v = std::exp(v - max));
      for (uint32_t c = 0; c < dim && reported < 5; ++c) {
        double host = 0;
        for (uint32_t j = 0; j < seq; ++j) {
          host += p[j] / sum * half_value(qkv[2][(size_t{h} * seq + j) * dim + c]);
        }
        const float cpu = results[0][row + c], vk = results[1][row + c];
        // P is rounded to f16 before P V: 2e-3 from the host; the two devices differ only by
        // ex2.approx's last bits.
        if (!(std::fabs(vk - host) <= 2e-3) || !(std::fabs(vk - cpu) <= 1e-5)) {
          ++reported;
          ADD_FAILURE() << "O[" << h << "][" << i << "][" << c << "]: Vulkan " << vk
                        << ", the CPU PTX device " << cpu << ", the host " << host;
        }
      }
    }
  }
}

// The three-stage build's tiles take 40 KiB of shared memory: where the device has less
// (lavapipe: 32 KiB), the launch is refused saying so; the kernel itself translates.
TEST_F(TritonOnVulkan, FlashAttentionTranslatesAndNeedsItsSharedMemory) {
  hal_module module = nullptr;
  hal_function f = nullptr;
  std::string error;
  ASSERT_TRUE(load_triton(vulkan_.device, "flash_attention_fwd", &module, &f, &error)) << error;
  hal_device_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(hal_device_get_info(vulkan_.device, &info), HAL_SUCCESS);
  if (info.max_shared_memory_per_block < 40960) {
    hal_deviceptr p = 0;
    ASSERT_EQ(hal_mem_alloc(vulkan_.device, 4096, &p), HAL_SUCCESS);
    float scale = 0.125f;
    uint32_t seq = 64, stride_h = 64 * 64, stride_s = 64;
    hal_deviceptr scratch = 0;
    void* args[] = {&p, &p, &p, &p, &scale, &seq, &stride_h, &stride_s, &scratch, &scratch};
    const hal_launch_config config{{1, 1, 1}, {128, 1, 1}, 40960};
    EXPECT_NE(hal_launch(vulkan_.stream, f, &config, args), HAL_SUCCESS);
    const std::string message = hal_last_error();
    EXPECT_NE(message.find("shared memory"), std::string::npos) << message;
    EXPECT_EQ(hal_stream_synchronize(vulkan_.stream), HAL_SUCCESS) << hal_last_error();
    hal_mem_free(vulkan_.device, p);
  }
  hal_module_unload(module);
}

}  // namespace
