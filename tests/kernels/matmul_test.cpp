// Every matmul kernel of the pack, fp32 and fp16 storage, against the double-precision CPU
// reference: sizes 1, 17, 64 and 255 (square), a non-square case with padded leading dimensions
// and alpha/beta, and thin shapes; plus SPIR-V tile sizes chosen through specialization constants
// (the tiled family's BM/BN/BK, the register-tiled family's TM/TN/TX, the subgroup family's
// TM/TN/SG).
#include <string>
#include <tuple>
#include <vector>

#include "kernel_test_util.h"

namespace kernel_test {
namespace {

using ref::Storage;

struct Shape {
  uint32_t m, n, k;
  uint32_t pad;  // added to each leading dimension
  float alpha, beta;
};
const Shape kShapes[] = {
    {1, 1, 1, 0, 1.0f, 0.0f},
    {17, 17, 17, 0, 1.0f, 0.0f},
    {64, 64, 64, 0, 1.0f, 0.0f},
    {255, 255, 255, 0, 1.0f, 0.0f},
    {33, 70, 129, 3, 0.75f, -0.5f},
    {1, 255, 17, 1, 1.0f, 1.0f},
    {130, 1, 64, 0, 2.0f, 0.25f},
    // Leading dimensions that are multiples of 8 (the tensor-core kernels' cp.async path), K and
    // N ending in half a 16-byte chunk.
    {72, 132, 100, 4, 1.0f, 0.5f},
};
// Also for the tensor-core kernels, whose blocks take a faster path when their whole tile lies
// inside C and the leading dimensions allow 16-byte copies: tiles inside C with K ending
// mid-tile, and edge tiles with more tiles of K (64 deep) than pipeline stages.
const Shape kTensorCoreShapes[] = {
    {256, 256, 200, 0, 1.0f, 0.5f},
    {72, 132, 292, 4, 1.0f, 0.0f},
};

// Runs |k| (already loaded) on every shape; |bm| x |bn| is the tile one workgroup computes.
void run_shapes(const Kernel& k, hal_device device, hal_stream stream, uint32_t bm, uint32_t bn,
                const std::string& label) {
  const Storage storage = std::string(k.info->dtype) == "f16" ? Storage::kF16 : Storage::kF32;
  std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
  if (std::string(k.info->family) == "matmul_mma_f16") {
    shapes.insert(shapes.end(), std::begin(kTensorCoreShapes), std::end(kTensorCoreShapes));
  }
  for (const Shape& s : shapes) {
    const std::string what = label + " M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) +
                             " K=" + std::to_string(s.k);
    SCOPED_TRACE(what);
    uint32_t m = s.m, n = s.n, kk = s.k;
    uint32_t lda = s.k + s.pad, ldb = s.n + s.pad, ldc = s.n + s.pad;
    float alpha = s.alpha, beta = s.beta;
    std::vector<float> a = ref::random_uniform(size_t{m} * lda, m + 1);
    std::vector<float> b = ref::random_uniform(size_t{kk} * ldb, n + 2);
    std::vector<float> c = ref::random_uniform(size_t{m} * ldc, kk + 3);
    if (storage == Storage::kF16) {
      ref::round_to_half(&a);
      ref::round_to_half(&b);
      ref::round_to_half(&c);
    }
    Buffer da(device, stream, a.size(), storage), db(device, stream, b.size(), storage),
        dc(device, stream, c.size(), storage);
    da.upload(a);
    db.upload(b);
    dc.upload(c);
    ASSERT_NO_FATAL_FAILURE(
        k.launch(stream, (n + bn - 1) / bn, (m + bm - 1) / bm, 1,
                 {&da.ptr, &db.ptr, &dc.ptr, &m, &n, &kk, &lda, &ldb, &ldc, &alpha, &beta}));
    const std::vector<float> out = dc.download();
    const ref::Result want = ref::matmul(a, b, c, m, n, kk, lda, ldb, ldc, alpha, beta, storage);
    // Compare the M x N part; the padding columns must be untouched.
    std::vector<float> got(size_t{m} * n);
    size_t padding_changed = 0;
    for (uint32_t i = 0; i < m; ++i) {
      for (uint32_t j = 0; j < ldc; ++j) {
        if (j < n) {
          got[size_t{i} * n + j] = out[size_t{i} * ldc + j];
        } else {
          padding_changed += out[size_t{i} * ldc + j] != c[size_t{i} * ldc + j];
        }
      }
    }
    EXPECT_EQ(padding_changed, 0u) << "wrote outside the M x N matrix";
    expect_close(got, want, what);
  }
}

using MatmulParam = std::tuple<hal_ir, std::string>;

class Matmul : public IrTestBase<MatmulParam> {
 protected:
  hal_ir ir() const override { return std::get<0>(GetParam()); }
  std::string kernel() const { return std::get<1>(GetParam()); }
};

TEST_P(Matmul, Shapes) {
  if (const std::string why = missing(kernel()); !why.empty()) GTEST_SKIP() << why;
  Kernel k;
  ASSERT_NO_FATAL_FAILURE(k.load(device_, kernel(), ir()));
  uint32_t bm = 0, bn = 0;
  ASSERT_TRUE(hal_kernels_matmul_tile(k.info, nullptr, &bm, &bn)) << kernel();
  run_shapes(k, device_, stream_, bm, bn, kernel());
}

std::string param_name(const ::testing::TestParamInfo<MatmulParam>& info) {
  return std::get<1>(info.param);
}

const std::vector<std::string> kKernels = {
    "matmul_naive_f32",         "matmul_tiled_f32_32x32", "matmul_tiled_f32_64x64",
    "matmul_tiled_f32_128x128", "matmul_reg_f32_64x64",   "matmul_reg_f32_64x256",
    "matmul_naive_f16",         "matmul_tiled_f16_32x32", "matmul_tiled_f16_64x64",
    "matmul_tiled_f16_128x128", "matmul_reg_f16_64x64",   "matmul_reg_f16_64x256",
    "matmul_sg_f32_128x64",     "matmul_sg_f32_256x64",   "matmul_sg_f16_128x64",
    "matmul_sg_f16_256x64"};

INSTANTIATE_TEST_SUITE_P(KernelsSpirv, Matmul,
                         ::testing::Combine(::testing::Values(HAL_IR_SPIRV),
                                            ::testing::ValuesIn(kKernels)),
                         param_name);
// The tensor-core kernels exist in PTX only.
std::vector<std::string> ptx_kernels() {
  std::vector<std::string> out = kKernels;
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) {
    if (std::string(hal_kernels_get(i)->family) == "matmul_mma_f16") {
      out.push_back(hal_kernels_get(i)->name);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(KernelsPtx, Matmul,
                         ::testing::Combine(::testing::Values(HAL_IR_PTX),
                                            ::testing::ValuesIn(ptx_kernels())),
                         param_name);

// SPIR-V only: tile sizes other than a blob's defaults, set through specialization constants
// (PTX has none: its other tile sizes are the other kernels of the family).
class MatmulSpecialized : public IrTest {};

TEST_P(MatmulSpecialized, TileSizes) {
  struct Tiles {
    const char* kernel;
    uint32_t bm, bn, bk;
  };
  const Tiles kTiles[] = {{"matmul_tiled_f32_64x64", 32, 128, 8},
                          {"matmul_tiled_f32_64x64", 16, 16, 32},
                          {"matmul_tiled_f16_32x32", 128, 64, 16}};
  for (const Tiles& t : kTiles) {
    if (!missing(t.kernel).empty()) continue;
    const std::string label = std::string(t.kernel) + " specialized to " + std::to_string(t.bm) +
                              "x" + std::to_string(t.bn) + "x" + std::to_string(t.bk);
    SCOPED_TRACE(label);
    const hal_specialization specs[] = {{0, 4, &t.bm}, {1, 4, &t.bn}, {2, 4, &t.bk}};
    Kernel k;
    ASSERT_NO_FATAL_FAILURE(k.load(device_, t.kernel, ir(), {specs[0], specs[1], specs[2]}));
    run_shapes(k, device_, stream_, t.bm, t.bn, label);
  }
  // The register-tiled family: spec ids 0: TM, 1: TN, 2: TX; 64 threads, TX x 64/TX.
  struct RegTiles {
    const char* kernel;
    uint32_t tm, tn, tx;
  };
  const RegTiles kRegTiles[] = {{"matmul_reg_f32_64x64", 4, 8, 32},
                                {"matmul_reg_f32_64x256", 8, 16, 8},
                                {"matmul_reg_f16_64x64", 4, 4, 16}};
  for (const RegTiles& t : kRegTiles) {
    if (!missing(t.kernel).empty()) continue;
    const uint32_t bm = 64 / t.tx * t.tm, bn = t.tx * t.tn;
    const std::string label = std::string(t.kernel) + " specialized to TM=" + std::to_string(t.tm) +
                              " TN=" + std::to_string(t.tn) + " TX=" + std::to_string(t.tx);
    SCOPED_TRACE(label);
    const hal_specialization specs[] = {{0, 4, &t.tm}, {1, 4, &t.tn}, {2, 4, &t.tx}};
    Kernel k;
    ASSERT_NO_FATAL_FAILURE(k.load(device_, t.kernel, ir(), {specs[0], specs[1], specs[2]}));
    run_shapes(k, device_, stream_, bm, bn, label);
  }
}

// The subgroup family: spec ids 0: TM, 1: TN, 2: SG. With SG the device's subgroup size the
// invocations share their loads of A; with any other SG (or a subgroup laid out otherwise) each
// loads its own. Both paths must give the reference's result.
TEST_P(MatmulSpecialized, SubgroupTiles) {
  const char* kernel = "matmul_sg_f32_128x64";
  if (const std::string why = missing(kernel); !why.empty()) GTEST_SKIP() << why;
  hal_device_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(hal_device_get_info(device_, &info), HAL_SUCCESS) << hal_last_error();
  struct SgTiles {
    uint32_t tm, tn, sg;
  };
  std::vector<SgTiles> tiles = {{64, 16, 8}, {8, 4, 8}, {16, 8, 16}, {32, 4, 32}, {8, 16, 64}};
  // The device's own subgroup size, so that the shared path runs where it exists.
  if (info.subgroup_size >= 1 && info.subgroup_size <= 64 && 64 % info.subgroup_size == 0) {
    tiles.push_back({32, 8, info.subgroup_size});
  }
  for (const SgTiles& t : tiles) {
    uint32_t values[] = {t.tm, t.tn, t.sg};
    uint32_t bm = 0, bn = 0;
    ASSERT_TRUE(hal_kernels_matmul_tile(hal_kernels_info(kernel), values, &bm, &bn));
    const std::string label = std::string(kernel) + " specialized to TM=" + std::to_string(t.tm) +
                              " TN=" + std::to_string(t.tn) + " SG=" + std::to_string(t.sg) +
                              " (device subgroup " + std::to_string(info.subgroup_size) + ")";
    SCOPED_TRACE(label);
    const hal_specialization specs[] = {{0, 4, &t.tm}, {1, 4, &t.tn}, {2, 4, &t.sg}};
    Kernel k;
    ASSERT_NO_FATAL_FAILURE(k.load(device_, kernel, ir(), {specs[0], specs[1], specs[2]}));
    run_shapes(k, device_, stream_, bm, bn, label);
  }
}

INSTANTIATE_TEST_SUITE_P(KernelsSpirv, MatmulSpecialized, ::testing::Values(HAL_IR_SPIRV));

}  // namespace
}  // namespace kernel_test
