// Bad input: malformed SPIR-V, unknown names, bad launch arguments. Each returns its documented
// status and hal_last_error() names the problem; nothing reaches the driver.
#include "vk_test_util.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace hal_vk_test {
namespace {

using BadInput = VulkanTest;

hal_status load_blob(hal_device device, const std::vector<uint8_t>& blob, hal_ir ir) {
  hal_module_options options{};
  options.struct_size = sizeof(options);
  options.ir = ir;
  hal_module module = nullptr;
  hal_status status = hal_module_load(device, blob.data(), blob.size(), &options, &module);
  if (module != nullptr) hal_module_unload(module);
  return status;
}

TEST_F(BadInput, RandomBytes) {
  std::mt19937 rng(1234);
  std::vector<uint8_t> blob(4096);
  for (uint8_t& b : blob) b = static_cast<uint8_t>(rng());
  EXPECT_HAL(HAL_ERROR_INVALID_IR, load_blob(device_, blob, HAL_IR_AUTO));
  EXPECT_NE(std::string(hal_last_error()), "");
  EXPECT_HAL(HAL_ERROR_INVALID_IR, load_blob(device_, blob, HAL_IR_SPIRV));
  EXPECT_NE(std::string(hal_last_error()), "");
}

TEST_F(BadInput, TruncatedSpirv) {
  std::vector<uint8_t> blob = read_shader("vadd");
  ASSERT_GT(blob.size(), 100u);
  std::vector<uint8_t> half(blob.begin(), blob.begin() + (blob.size() / 2 & ~size_t{3}));
  EXPECT_HAL(HAL_ERROR_INVALID_IR, load_blob(device_, half, HAL_IR_SPIRV));
  EXPECT_TRUE(LastErrorHas({"SPIR-V"}));
  std::vector<uint8_t> odd(blob.begin(), blob.end() - 3);
  EXPECT_HAL(HAL_ERROR_INVALID_IR, load_blob(device_, odd, HAL_IR_SPIRV));
  EXPECT_TRUE(LastErrorHas({"4-byte"}));
}

TEST_F(BadInput, ValidHeaderFollowedByGarbage) {
  std::vector<uint8_t> blob = read_shader("vadd");
  std::mt19937 rng(99);
  for (size_t i = 20; i < blob.size(); ++i) blob[i] = static_cast<uint8_t>(rng());
  EXPECT_HAL(HAL_ERROR_INVALID_IR, load_blob(device_, blob, HAL_IR_AUTO));
  EXPECT_TRUE(LastErrorHas({"validation"}));
}

// The device remembers the modules its validator passed (validated_spirv.h) and skips
// validating them again; a module of the same length that differs in one word is validated
// like any other, however often the valid one was loaded.
TEST_F(BadInput, AModuleLikeAValidatedOneIsStillValidated) {
  const std::vector<uint8_t> valid = read_shader("vadd");
  ASSERT_GE(valid.size(), 24u);
  EXPECT_OK(load_blob(device_, valid, HAL_IR_SPIRV));
  EXPECT_OK(load_blob(device_, valid, HAL_IR_SPIRV));
  std::vector<uint8_t> changed = valid;
  // The last instruction, OpFunctionEnd, becomes an OpUndef without its operands.
  const uint32_t undef = 0x00010001u;
  std::memcpy(changed.data() + changed.size() - 4, &undef, 4);
  ASSERT_NE(changed, valid);
  for (int i = 0; i < 2; ++i) {
    EXPECT_HAL(HAL_ERROR_INVALID_IR, load_blob(device_, changed, HAL_IR_SPIRV));
    EXPECT_TRUE(LastErrorHas({"validation"}));
  }
  EXPECT_OK(load_blob(device_, valid, HAL_IR_SPIRV));
}

TEST_F(BadInput, BigEndianSpirvLoads) {
  std::vector<uint8_t> blob = read_shader("vadd");
  for (size_t i = 0; i + 3 < blob.size(); i += 4) {
    std::swap(blob[i], blob[i + 3]);
    std::swap(blob[i + 1], blob[i + 2]);
  }
  EXPECT_OK(load_blob(device_, blob, HAL_IR_SPIRV));
}

TEST_F(BadInput, ArraysOfBuffersAreNotKernelParameters) {
  std::vector<uint8_t> blob = read_shader("buffer_array");
  ASSERT_FALSE(blob.empty());
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, load_blob(device_, blob, HAL_IR_SPIRV));
  EXPECT_TRUE(LastErrorHas({"array of buffers", "set 0 binding 0"}));
}

TEST_F(BadInput, UnknownEntryPoint) {
  hal_module module = load("vadd");
  ASSERT_NE(module, nullptr);
  hal_function fn = nullptr;
  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_module_get_function(module, "vadd_missing", &fn));
  EXPECT_TRUE(LastErrorHas({"vadd_missing", "main"}));
}

class BadLaunch : public VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    fn_ = function(load("vadd"), "main");
    a_ = alloc(1024);
    b_ = alloc(1024);
    c_ = alloc(1024);
  }
  hal_function fn_ = nullptr;
  hal_deviceptr a_ = 0, b_ = 0, c_ = 0;
  uint32_t n_ = 256;
  hal_launch_config config_{{4, 1, 1}, {0, 0, 0}, 0};
};

TEST_F(BadLaunch, NullArgument) {
  void* args[] = {&a_, nullptr, &c_, &n_};
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_launch(stream_, fn_, &config_, args));
  EXPECT_TRUE(LastErrorHas({"1"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_launch(stream_, fn_, &config_, nullptr));
}

TEST_F(BadLaunch, PointerIntoAFreedAllocation) {
  hal_deviceptr gone = 0;
  ASSERT_OK(hal_mem_alloc(device_, 1024, &gone));
  ASSERT_OK(hal_mem_free(device_, gone));
  void* args[] = {&a_, &gone, &c_, &n_};
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_launch(stream_, fn_, &config_, args));
  EXPECT_NE(std::string(hal_last_error()).find("1"), std::string::npos) << hal_last_error();
}

TEST_F(BadLaunch, MisalignedPointer) {
  ASSERT_GT(info_.pointer_alignment, 1u);
  hal_deviceptr odd = b_ + 1;
  void* args[] = {&a_, &odd, &c_, &n_};
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_launch(stream_, fn_, &config_, args));
  EXPECT_TRUE(LastErrorHas({std::to_string(info_.pointer_alignment)}));
}

TEST_F(BadLaunch, GridBeyondTheLimit) {
  void* args[] = {&a_, &b_, &c_, &n_};
  hal_launch_config config = config_;
  config.grid[0] = info_.max_grid_dim[0] + 1;
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_launch(stream_, fn_, &config, args));
  EXPECT_TRUE(LastErrorHas({std::to_string(info_.max_grid_dim[0])}));
  config = config_;
  config.block[0] = 32;  // the kernel fixes 64
  config.block[1] = 1;
  config.block[2] = 1;
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_launch(stream_, fn_, &config, args));
  EXPECT_TRUE(LastErrorHas({"64"}));
}

TEST_F(BadLaunch, OutOfRangeCopy) {
  std::vector<uint8_t> bytes(16);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_htod(stream_, a_ + 1020, bytes.data(), 8));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_dtoh(stream_, bytes.data(), c_ + 1024, 1));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_memcpy_dtod(stream_, a_, b_ + 1000, 100));
  EXPECT_NE(std::string(hal_last_error()), "");
}

}  // namespace
}  // namespace hal_vk_test
