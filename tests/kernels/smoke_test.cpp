// The smoke kernels (fill, copy, vector add, saxpy) against the CPU, on every IR with a device.
#include <cmath>
#include <vector>

#include "kernel_test_util.h"

namespace kernel_test {
namespace {

using ref::Storage;

// Sizes 1, 17, 64, 255, and one larger than the grid it is launched with (grid-stride loop).
struct Size {
  uint32_t n;
  uint32_t grid;
};
const Size kSizes[] = {{1, 1}, {17, 1}, {64, 1}, {255, 1}, {100003, 7}};

class Smoke : public IrTest {};

TEST_P(Smoke, Fill) {
  Kernel k;
  ASSERT_NO_FATAL_FAILURE(k.load(device_, "fill_f32", ir()));
  for (const Size& s : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(s.n));
    Buffer y(device_, stream_, s.n + 1, Storage::kF32);
    std::vector<float> host(s.n + 1, -1.0f);
    y.upload(host);
    uint32_t n = s.n;
    float value = 3.25f;
    ASSERT_NO_FATAL_FAILURE(k.launch(stream_, s.grid, 1, 1, {&y.ptr, &n, &value}));
    const std::vector<float> got = y.download();
    size_t wrong = 0;
    for (uint32_t i = 0; i < s.n; ++i) wrong += got[i] != value;
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(got[s.n], -1.0f) << "wrote past n";
  }
}

TEST_P(Smoke, Copy) {
  Kernel k;
  ASSERT_NO_FATAL_FAILURE(k.load(device_, "copy_f32", ir()));
  for (const Size& s : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(s.n));
    const std::vector<float> x = ref::random_uniform(s.n, s.n);
    Buffer dx(device_, stream_, s.n, Storage::kF32), dy(device_, stream_, s.n + 1, Storage::kF32);
    dx.upload(x);
    dy.upload(std::vector<float>(s.n + 1, -1.0f));
    uint32_t n = s.n;
    ASSERT_NO_FATAL_FAILURE(k.launch(stream_, s.grid, 1, 1, {&dx.ptr, &dy.ptr, &n}));
    std::vector<float> got = dy.download();
    EXPECT_EQ(got.back(), -1.0f) << "wrote past n";
    got.pop_back();
    EXPECT_EQ(got, x);
  }
}

TEST_P(Smoke, VectorAdd) {
  Kernel k;
  ASSERT_NO_FATAL_FAILURE(k.load(device_, "vector_add_f32", ir()));
  for (const Size& s : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(s.n));
    const std::vector<float> a = ref::random_uniform(s.n, 1), b = ref::random_uniform(s.n, 2);
    Buffer da(device_, stream_, s.n, Storage::kF32), db(device_, stream_, s.n, Storage::kF32),
        dc(device_, stream_, s.n, Storage::kF32);
    da.upload(a);
    db.upload(b);
    uint32_t n = s.n;
    ASSERT_NO_FATAL_FAILURE(k.launch(stream_, s.grid, 1, 1, {&da.ptr, &db.ptr, &dc.ptr, &n}));
    // One fp32 addition: correctly rounded, so the result is exact against fp32 arithmetic.
    ref::Result want;
    for (uint32_t i = 0; i < s.n; ++i) {
      want.value.push_back(double{a[i]} + double{b[i]});
      want.bound.push_back(ref::kUnitF32 * std::fabs(want.value.back()));
    }
    expect_close(dc.download(), want, "vector_add_f32 n=" + std::to_string(s.n));
  }
}

TEST_P(Smoke, Saxpy) {
  Kernel k;
  ASSERT_NO_FATAL_FAILURE(k.load(device_, "saxpy", ir()));
  for (const Size& s : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(s.n));
    const std::vector<float> x = ref::random_uniform(s.n, 3), y = ref::random_uniform(s.n, 4);
    Buffer dx(device_, stream_, s.n, Storage::kF32), dy(device_, stream_, s.n, Storage::kF32);
    dx.upload(x);
    dy.upload(y);
    uint32_t n = s.n;
    float alpha = -1.5f;
    ASSERT_NO_FATAL_FAILURE(k.launch(stream_, s.grid, 1, 1, {&dx.ptr, &dy.ptr, &n, &alpha}));
    // A multiply and an add (or one fused multiply-add): two roundings at most.
    ref::Result want;
    for (uint32_t i = 0; i < s.n; ++i) {
      const double ax = double{alpha} * x[i];
      want.value.push_back(ax + y[i]);
      want.bound.push_back(2 * ref::kUnitF32 * (std::fabs(ax) + std::fabs(double{y[i]})));
    }
    expect_close(dy.download(), want, "saxpy n=" + std::to_string(s.n));
  }
}

INSTANTIATE_TEST_SUITE_P(KernelsSpirv, Smoke, ::testing::Values(HAL_IR_SPIRV));
INSTANTIATE_TEST_SUITE_P(KernelsPtx, Smoke, ::testing::Values(HAL_IR_PTX));

}  // namespace
}  // namespace kernel_test
