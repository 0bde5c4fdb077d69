// Triton's kernels in the tree (tests/ptx_cpu/triton, compiled by the pinned triton for sm_80),
// launched through the C ABI exactly as Triton's launcher launches them: a block of
// 32 * num_warps threads, the metadata's dynamic shared memory, and the two hidden scratch
// pointers Triton appends (null: both sizes are 0). Each runs on the first Vulkan device, which
// translates it, and on the CPU PTX device, which follows the PTX as written.
//
// softmax_rows reduces each row with warp shuffles (shfl.sync.bfly) and a cross-warp step
// through shared memory: it must give the host's softmax on both devices, and the two devices
// the same values within the rounding of ex2.approx, whose last bits PTX leaves open. The
// matmul and flash attention are built from tensor-core instructions (mma, ldmatrix), which do
// not translate yet: they must be refused naming one.
#include <gtest/gtest.h>
#include <hal/hal.h>

#include "two_devices.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read_ptx(const std::string& name) {
  std::ifstream in(std::string(HAL_SOURCE_DIR) + "/tests/ptx_cpu/triton/" + name + ".ptx");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TritonOnVulkan : public ptx_spirv_testing::TwoDevices {
 protected:
  // softmax_rows(out, in, in_row_stride, out_row_stride, n_cols, global_scratch,
  // profile_scratch) over |rows| x |cols| on |d|; empty with the message in |error| on failure.
  std::vector<float> softmax(ptx_spirv_testing::Device& d, const std::vector<float>& x,
                             uint32_t rows, uint32_t cols, std::string* error) {
    const std::string ptx = read_ptx("softmax_rows");
    hal_module module = nullptr;
    hal_function f = nullptr;
    if (hal_module_load(d.device, ptx.data(), ptx.size(), nullptr, &module) != HAL_SUCCESS ||
        hal_module_get_function(module, "softmax_rows", &f) != HAL_SUCCESS) {
      *error = hal_last_error();
      if (module != nullptr) hal_module_unload(module);
      return {};
    }
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

TEST_F(TritonOnVulkan, TensorCoreKernelsAreRefusedByName) {
  for (const char* name : {"matmul_f16", "flash_attention_fwd"}) {
    SCOPED_TRACE(name);
    const std::string ptx = read_ptx(name);
    ASSERT_FALSE(ptx.empty());
    hal_module module = nullptr;
    const hal_status status =
        hal_module_load(vulkan_.device, ptx.data(), ptx.size(), nullptr, &module);
    EXPECT_EQ(status, HAL_ERROR_NOT_SUPPORTED);
    const std::string message = hal_last_error();
    EXPECT_NE(message.find("matrix instruction"), std::string::npos) << message;
    EXPECT_NE(message.find("PTX line"), std::string::npos) << message;
    if (module != nullptr) hal_module_unload(module);
  }
}

}  // namespace
