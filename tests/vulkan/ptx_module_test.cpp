// PTX on Vulkan devices (src/vulkan/ptx_module.h): the device lists HAL_IR_PTX, a PTX kernel has
// the parameter list the CUDA backend gives it, misuse is refused with the reason, hand-written
// PTX runs through hal_launch, and the translation cache is used and never trusted.
#include "vk_test_util.h"

#include "common/error.h"
#include "ptx/reader.h"
#include "vulkan/pipeline_cache.h"
#include "vulkan/ptx_cache.h"
#include "vulkan/ptx_module.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace hal_vk_test {
namespace {

using hal::vulkan::ptx_cache_path;
using hal::vulkan::ptx_target;
using hal::vulkan::read_ptx_cache;
using hal::vulkan::write_ptx_cache;
using hal_testing::LastErrorIs;

// c[i] = a[i] + b[i] for i < n, written as nvcc writes it.
const std::string kVectorAdd = R"(.version 7.0
.target sm_70
.address_size 64

.visible .entry vadd(
    .param .u64 vadd_param_0,
    .param .u64 vadd_param_1,
    .param .u64 vadd_param_2,
    .param .u32 vadd_param_3
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<11>;

    ld.param.u64 %rd1, [vadd_param_0];
    ld.param.u64 %rd2, [vadd_param_1];
    ld.param.u64 %rd3, [vadd_param_2];
    ld.param.u32 %r2, [vadd_param_3];
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    setp.ge.s32 %p1, %r1, %r2;
    @%p1 bra $L__BB0_2;
    mul.wide.s32 %rd7, %r1, 4;
    add.s64 %rd8, %rd4, %rd7;
    add.s64 %rd9, %rd5, %rd7;
    ld.global.f32 %f1, [%rd9];
    ld.global.f32 %f2, [%rd8];
    add.f32 %f3, %f2, %f1;
    add.s64 %rd10, %rd6, %rd7;
    st.global.f32 [%rd10], %f3;
$L__BB0_2:
    ret;
}
)";

// The same kernel, computing a[i] * b[i]: the same signature, another body. |tag| makes the
// text (and so its cache entry) each test's own: ctest runs test cases in parallel processes
// that share the cache directory.
std::string vector_mul(const std::string& tag) {
  std::string text = kVectorAdd;
  text.replace(text.find("add.f32"), 7, "mul.f32");
  return text + "// " + tag + "\n";
}

// A PTX module of one kernel named |name| with |directives| and |params|, whose body returns.
std::string signature_only(const std::string& name, const std::string& params,
                           const std::string& directives = "") {
  return ".version 7.0\n.target sm_70\n.address_size 64\n\n.visible .entry " + name + "(\n" +
         params + "\n)\n" + directives + "\n{\n    ret;\n}\n";
}

class PtxOnVulkan : public VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    if (::testing::Test::HasFatalFailure()) return;
    if ((info_.ir_mask & HAL_IR_PTX) == 0) {
      GTEST_SKIP() << "vulkan:0 has no bufferDeviceAddress or shaderInt64: it takes no PTX";
    }
  }

  hal_status load_ptx(const std::string& text, hal_module* module,
                      const hal_module_options* options = nullptr) {
    *module = nullptr;
    const hal_status status = hal_module_load(device_, text.data(), text.size(), options, module);
    if (*module != nullptr) modules_.push_back(*module);
    return status;
  }

  hal_function load_kernel(const std::string& text, const char* name) {
    hal_module module = nullptr;
    EXPECT_OK(load_ptx(text, &module));
    return module != nullptr ? function(module, name) : nullptr;
  }

  // Runs vadd (or whatever |fn| computes of two vectors) on |n| elements with |block| threads a
  // block and returns c.
  std::vector<float> run_binary(hal_function fn, uint32_t n, uint32_t block,
                                const std::vector<float>& a, const std::vector<float>& b) {
    hal_deviceptr da = upload(a), db = upload(b), dc = alloc(n * sizeof(float));
    EXPECT_OK(hal_memset_d32(stream_, dc, 0, n));
    void* args[] = {&da, &db, &dc, &n};
    hal_launch_config config{{(n + block - 1) / block, 1, 1}, {block, 1, 1}, 0};
    EXPECT_OK(hal_launch(stream_, fn, &config, args));
    return download<float>(dc, n);
  }

  static std::vector<float> ramp(uint32_t n, float scale, float offset) {
    std::vector<float> values(n);
    for (uint32_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 97) * scale + offset;
    return values;
  }

  // The translation cache entry of |text| on this device.
  std::string cache_path(const std::string& text) {
    const hal::vulkan::VulkanDevice* device = backend_device(device_);
    return ptx_cache_path(hal::vulkan::PipelineCache::default_dir(), text,
                          ptx_target(device->caps()));
  }
};

// ---------------------------------------------------------------------------------------------
// The device

TEST_F(VulkanTest, IrMaskListsPtxWhereTranslatedModulesRun) {
  const hal::vulkan::VulkanDevice* device = backend_device(device_);
  ASSERT_NE(device, nullptr);
  EXPECT_NE(info_.ir_mask & HAL_IR_SPIRV, 0u);
  const bool needs = device->caps().buffer_device_address && device->caps().shader_int64;
  EXPECT_EQ(hal::vulkan::runs_ptx(device->caps()), needs);
  EXPECT_EQ((info_.ir_mask & HAL_IR_PTX) != 0, needs);
  EXPECT_EQ(info_.ir_mask & ~uint32_t{HAL_IR_SPIRV | HAL_IR_PTX}, 0u);
}

TEST_F(VulkanTest, TheTranslatorIsToldTheDevicesFeatures) {
  const hal::vulkan::DeviceCaps& caps = backend_device(device_)->caps();
  const hal::ptx_spirv::Target target = ptx_target(caps);
  EXPECT_EQ(target.float64, caps.shader_float64);
  EXPECT_EQ(target.int16, caps.shader_int16);
  EXPECT_EQ(target.int8, caps.shader_int8);
  EXPECT_EQ(target.float16, caps.shader_float16);
  EXPECT_EQ(target.storage_buffer_8bit, caps.storage_buffer_8bit);
  EXPECT_EQ(target.storage_buffer_16bit, caps.storage_buffer_16bit);
  EXPECT_EQ(target.int64_atomics, caps.int64_atomics_everywhere);
  EXPECT_EQ(target.float32_atomic_add, caps.atomic_float32_add_everywhere);
  EXPECT_EQ(target.max_push_constant_bytes, caps.limits.maxPushConstantsSize);
  EXPECT_EQ(target.max_shared_bytes, caps.limits.maxComputeSharedMemorySize);
}

// ---------------------------------------------------------------------------------------------
// Parameter lists: the CUDA backend's, read from the same PTX

TEST_F(PtxOnVulkan, ParameterListsAreTheCudaBackends) {
  // extern "C" names: every 64-bit integer is a pointer; a mangled name (kernel(float*, unsigned
  // long, int)) lets its demangled types decide.
  const std::string text =
      signature_only("values",
                     "    .param .u64 values_param_0,\n"
                     "    .param .u64 .ptr .global .align 16 values_param_1,\n"
                     "    .param .f32 values_param_2,\n"
                     "    .param .s32 values_param_3,\n"
                     "    .param .b32 values_param_4,\n"
                     "    .param .align 8 .b8 values_param_5[24],\n"
                     "    .param .u32 values_param_6,\n"
                     "    .param .f64 values_param_7") +
      signature_only("_Z6kernelPfmi",
                     "    .param .u64 _Z6kernelPfmi_param_0,\n"
                     "    .param .u64 _Z6kernelPfmi_param_1,\n"
                     "    .param .u32 _Z6kernelPfmi_param_2")
          .substr(std::string(".version 7.0\n.target sm_70\n.address_size 64\n").size());
  hal::ptx::Module cuda;
  std::string error;
  ASSERT_TRUE(hal::ptx::parse(text, &cuda, &error)) << error;
  ASSERT_EQ(cuda.entries.size(), 2u);
  hal_module module = nullptr;
  ASSERT_OK(load_ptx(text, &module));
  for (const hal::ptx::Entry& entry : cuda.entries) {
    SCOPED_TRACE(entry.name);
    hal_function fn = function(module, entry.name.c_str());
    ASSERT_NE(fn, nullptr);
    hal_function_info fn_info{};
    fn_info.struct_size = sizeof(fn_info);
    ASSERT_OK(hal_function_get_info(fn, &fn_info));
    ASSERT_EQ(fn_info.param_count, entry.params.size());
    EXPECT_EQ(fn_info.block[0], 0u);  // no .reqntid: the launch decides
    EXPECT_EQ(fn_info.static_shared_bytes, 0u);
    for (uint32_t i = 0; i < entry.params.size(); ++i) {
      SCOPED_TRACE(i);
      const hal::ptx::Param& expected = entry.params[i];
      hal_param_info param{};
      param.struct_size = sizeof(param);
      ASSERT_OK(hal_function_get_param(fn, i, &param));
      const bool pointer = expected.kind == hal::ptx::ParamKind::kPointer;
      EXPECT_EQ(param.kind, pointer ? HAL_PARAM_POINTER : HAL_PARAM_VALUE);
      EXPECT_EQ(param.size, expected.size);
      EXPECT_EQ(param.alignment, pointer ? expected.pointee_alignment : expected.alignment);
      EXPECT_EQ(param.type, expected.type == hal::ptx::ParamType::kFloat ? HAL_PARAM_TYPE_FLOAT
                            : expected.type == hal::ptx::ParamType::kInteger
                                ? HAL_PARAM_TYPE_INTEGER
                                : HAL_PARAM_TYPE_UNKNOWN);
    }
  }
  // Spot checks of the rule itself, so that the comparison cannot pass vacuously.
  hal_function mangled = function(module, "_Z6kernelPfmi");
  hal_param_info param{};
  param.struct_size = sizeof(param);
  ASSERT_OK(hal_function_get_param(mangled, 1, &param));
  EXPECT_EQ(param.kind, HAL_PARAM_VALUE);  // unsigned long
  ASSERT_OK(hal_function_get_param(function(module, "values"), 1, &param));
  EXPECT_EQ(param.kind, HAL_PARAM_POINTER);
  EXPECT_EQ(param.alignment, 16u);
}

TEST_F(PtxOnVulkan, LaunchBoundsAreTheFunctionsLimits) {
  // One module each: a module may not mix .reqntid kernels with others (translate.h).
  hal_module fixed_module = nullptr, module = nullptr;
  ASSERT_OK(load_ptx(signature_only("fixed", "    .param .u32 fixed_param_0", ".reqntid 64, 1, 1"),
                     &fixed_module));
  ASSERT_OK(load_ptx(
      signature_only("bounded", "    .param .u32 bounded_param_0", ".maxntid 32, 2, 1"), &module));
  hal_function_info fn_info{};
  fn_info.struct_size = sizeof(fn_info);
  ASSERT_OK(hal_function_get_info(function(fixed_module, "fixed"), &fn_info));
  EXPECT_EQ(fn_info.block[0], 64u);
  EXPECT_EQ(fn_info.block[1], 1u);
  EXPECT_EQ(fn_info.block[2], 1u);
  ASSERT_OK(hal_function_get_info(function(module, "bounded"), &fn_info));
  EXPECT_EQ(fn_info.block[0], 0u);
  EXPECT_EQ(fn_info.max_threads_per_block, 64u);

  uint32_t value = 1;
  void* args[] = {&value};
  hal_launch_config config{{1, 1, 1}, {128, 1, 1}, 0};
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE,
             hal_launch(stream_, function(module, "bounded"), &config, args));
  EXPECT_TRUE(LastErrorHas({"bounded", "64"}));
  config.block[0] = 64;
  EXPECT_OK(hal_launch(stream_, function(module, "bounded"), &config, args));
  EXPECT_OK(hal_stream_synchronize(stream_));
}

// ---------------------------------------------------------------------------------------------
// Misuse

TEST_F(PtxOnVulkan, ThirtyTwoBitPtxIsRefused) {
  std::string text = signature_only("k", "    .param .u32 k_param_0");
  text.replace(text.find(".address_size 64"), 16, ".address_size 32");
  hal_module module = nullptr;
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, load_ptx(text, &module));
  EXPECT_TRUE(LastErrorIs("hal_module_load", {"32-bit addresses", ".address_size 64"}));
  text.erase(text.find(".address_size 32"), 16);
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, load_ptx(text, &module));
  EXPECT_TRUE(LastErrorHas({"32-bit addresses"}));
}

TEST_F(PtxOnVulkan, ArchitectureSpecificOrFutureTargetsAreRefused) {
  const std::string text = signature_only("k", "    .param .u32 k_param_0");
  const auto retarget = [&](const std::string& target) {
    std::string retargeted = text;
    retargeted.replace(retargeted.find("sm_70"), 5, target);
    return retargeted;
  };
  hal_module module = nullptr;
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, load_ptx(retarget("sm_999"), &module));
  EXPECT_TRUE(LastErrorIs("hal_module_load", {"sm_999", "sm_121"}));
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, load_ptx(retarget("sm_90a"), &module));
  EXPECT_TRUE(LastErrorIs("hal_module_load", {"sm_90a", "9.0", "'a' suffix"}));
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, load_ptx(retarget("sm_100f"), &module));
  EXPECT_TRUE(LastErrorIs("hal_module_load", {"sm_100f", "'f' suffix"}));
  EXPECT_OK(load_ptx(retarget("sm_120"), &module));
}

TEST_F(PtxOnVulkan, MalformedPtxIsRefusedWithItsLine) {
  // In a signature (read before anything else)...
  std::string text = signature_only("k", "    .param .u32 k_param_0,\n    .param .bogus k_param_1");
  hal_module module = nullptr;
  EXPECT_HAL(HAL_ERROR_INVALID_IR, load_ptx(text, &module));
  EXPECT_TRUE(LastErrorIs("hal_module_load", {"PTX line 7"}));
  // ...and in a body (an undeclared register on line 17), which only the translation reads.
  text = kVectorAdd;
  text.replace(text.find("%rd1, [vadd_param_0]"), 4, "%zz9");
  EXPECT_HAL(HAL_ERROR_INVALID_IR, load_ptx(text, &module));
  EXPECT_TRUE(LastErrorIs("hal_module_load", {"PTX line 17"}));
}

// A kernel with a warp shuffle that only some threads of a block reach, which does not
// translate on a device without 32-lane warps (the body of a module, no header).
const std::string kWarpSum = R"(.visible .entry warp_sum(
    .param .u64 warp_sum_param_0
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;

    ld.param.u64 %rd1, [warp_sum_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    setp.gt.u32 %p1, %r1, 7;
    @%p1 bra DONE;
    shfl.sync.bfly.b32 %r2, %r1, 1, 31, 255;
    add.s32 %r3, %r1, %r2;
    st.global.u32 [%rd2], %r3;
DONE:
    ret;
}
)";

// lavapipe never has 32-lane warps (8-lane subgroups; with LP_NATIVE_VECTOR_WIDTH=1024 it
// reports 32 lanes but runs 16), so it runs warps through workgroup memory. A GPU may do either.
bool is_lavapipe(hal_device device) {
  hal_device_info info{};
  info.struct_size = sizeof info;
  return hal_device_get_info(device, &info) == HAL_SUCCESS &&
         std::string(info.name).find("llvmpipe") != std::string::npos;
}

TEST_F(PtxOnVulkan, WarpShufflesInDivergentCodeNeed32LaneWarps) {
  const std::string text = ".version 7.0\n.target sm_70\n.address_size 64\n\n" + kWarpSum;
  hal_module module = nullptr;
  const hal_status status = load_ptx(text, &module);
  if (status == HAL_SUCCESS) {
    ASSERT_FALSE(is_lavapipe(device_)) << "lavapipe ran a warp kernel in divergent code";
    GTEST_SKIP() << "the device runs warp-level PTX on 32-lane subgroups";
  }
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, status);
  EXPECT_TRUE(LastErrorIs("hal_module_load", {"shfl", "warp_sum", "workgroup memory", "CUDA"}));
}

// Every thread of the block shuffles: it runs on any device, with CUDA's result.
TEST_F(PtxOnVulkan, WarpShufflesRunOnEveryDevice) {
  const std::string text = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry pair(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    shfl.sync.bfly.b32 %r2, %r1, 16, 31, -1;
    add.s32 %r3, %r1, %r2;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r3;
    ret;
}
)";
  hal_module module = nullptr;
  ASSERT_OK(load_ptx(text, &module));
  hal_deviceptr out = 0;
  ASSERT_OK(hal_mem_alloc(device_, 96 * 4, &out));
  void* args[] = {&out};
  const hal_launch_config config{{1, 1, 1}, {96, 1, 1}, 0};
  ASSERT_OK(hal_launch(stream_, function(module, "pair"), &config, args));
  std::vector<uint32_t> got(96, 0);
  ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), out, got.size() * 4));
  ASSERT_OK(hal_stream_synchronize(stream_));
  for (uint32_t t = 0; t < 96; ++t) EXPECT_EQ(got[t], t + (t ^ 16u)) << "thread " << t;
  EXPECT_OK(hal_mem_free(device_, out));
}

// A refusal is per kernel: the module's other kernels load and run, and looking up the refused
// one says why; a second load (from the translation cache) says the same.
TEST_F(PtxOnVulkan, ARefusedKernelLeavesTheOthersRunning) {
  if (!is_lavapipe(device_)) GTEST_SKIP() << "a GPU may run every warp kernel";
  const std::string text = kVectorAdd + "\n" + kWarpSum;
  const int shfl_line =
      1 +
      static_cast<int>(std::count(
          text.begin(), text.begin() + static_cast<std::ptrdiff_t>(text.find("shfl.sync")), '\n'));
  for (int load = 0; load < 2; ++load) {
    SCOPED_TRACE(load == 0 ? "first load" : "second load (the translation cache)");
    hal_module module = nullptr;
    ASSERT_OK(load_ptx(text, &module));
    hal_function warp = nullptr;
    EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, hal_module_get_function(module, "warp_sum", &warp));
    EXPECT_EQ(warp, nullptr);
    EXPECT_TRUE(LastErrorIs(
        "hal_module_get_function",
        {"'warp_sum'", "shfl", "PTX line " + std::to_string(shfl_line), "CUDA device"}));
    hal_function vadd = nullptr;
    ASSERT_OK(hal_module_get_function(module, "vadd", &vadd));
    const std::vector<float> a = ramp(300, 1.5f, 2.0f), b = ramp(300, -0.5f, 1.0f);
    const std::vector<float> c = run_binary(vadd, 300, 64, a, b);
    for (uint32_t i = 0; i < 300; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
    // A name that is not there at all is still NOT_FOUND, listing the refused kernel as such.
    EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_module_get_function(module, "nothing", &warp));
    EXPECT_TRUE(LastErrorHas({"warp_sum (unavailable)", "vadd"}));
  }
}

TEST_F(PtxOnVulkan, SpecializationsAreRefused) {
  const std::string text = signature_only("k", "    .param .u32 k_param_0");
  const uint32_t value = 4;
  const hal_specialization spec{0, 4, &value};
  hal_module_options options{};
  options.struct_size = sizeof(options);
  options.specialization_count = 1;
  options.specializations = &spec;
  hal_module module = nullptr;
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, load_ptx(text, &module, &options));
  EXPECT_TRUE(LastErrorHas({"PTX has no specialization constants"}));
  options.specialization_count = 0;
  options.flags = HAL_MODULE_SHARED_BYTES_CONSTANT;
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, load_ptx(text, &module, &options));
  EXPECT_TRUE(LastErrorHas({"PTX has no specialization constants"}));

  // The driver refuses them too, whoever calls it.
  hal::ModuleOptions driver_options;
  driver_options.specializations.push_back(hal::Specialization{0, 4, 4});
  std::unique_ptr<hal::Module> loaded;
  EXPECT_EQ(backend_device(device_)->load_module(HAL_IR_PTX,
                                                 reinterpret_cast<const uint8_t*>(text.data()),
                                                 text.size(), driver_options, &loaded),
            HAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(hal::pending_error().find("PTX has no specialization constants"), std::string::npos)
      << hal::pending_error();
  hal::clear_pending_error();
}

// ---------------------------------------------------------------------------------------------
// Kernels that run

TEST_F(PtxOnVulkan, VectorAddOverSeveralBlocks) {
  hal_function vadd = load_kernel(kVectorAdd, "vadd");
  ASSERT_NE(vadd, nullptr);
  const uint32_t n = 1000;  // 8 blocks of 128, the last one partly idle
  const std::vector<float> a = ramp(n, 0.5f, -3.0f), b = ramp(n, -0.25f, 7.0f);
  const std::vector<float> c = run_binary(vadd, n, 128, a, b);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
}

// Parameters beyond the device's push constants travel in memory: a kernel of a pointer, a
// struct by value (bytes read at several widths) and many u32 values, wider than
// maxPushConstantsSize; several launches before one synchronisation each read their own.
TEST_F(PtxOnVulkan, ParametersBeyondThePushConstantsTravelInMemory) {
  const uint32_t push_limit = backend_device(device_)->caps().limits.maxPushConstantsSize;
  const uint32_t values = push_limit / 4 + 8;  // past the limit whatever it is
  std::string params = "    .param .u64 big_out,\n    .param .align 8 .b8 big_s[16]";
  std::string body =
      "    ld.param.u64 %rd1, [big_out];\n    cvta.to.global.u64 %rd1, %rd1;\n"
      "    ld.param.u8 %r1, [big_s+1];\n    ld.param.u16 %r2, [big_s+2];\n"
      "    ld.param.u64 %rd2, [big_s+8];\n    cvt.u32.u64 %r3, %rd2;\n"
      "    shr.u64 %rd2, %rd2, 32;\n    cvt.u32.u64 %r4, %rd2;\n"
      "    st.global.u32 [%rd1], %r1;\n    st.global.u32 [%rd1+4], %r2;\n"
      "    st.global.u32 [%rd1+8], %r3;\n    st.global.u32 [%rd1+12], %r4;\n"
      "    mov.u32 %r6, 0;\n";
  for (uint32_t i = 0; i < values; ++i) {
    params += ",\n    .param .u32 big_v" + std::to_string(i);
    body += "    ld.param.u32 %r5, [big_v" + std::to_string(i) + "];\n";
    body += "    mad.lo.u32 %r6, %r5, " + std::to_string(i + 1) + ", %r6;\n";
  }
  body += "    st.global.u32 [%rd1+16], %r6;\n    ret;\n";
  const std::string text =
      ".version 7.0\n.target sm_70\n.address_size 64\n\n.visible .entry big(\n" + params +
      "\n)\n{\n    .reg .b32 %r<8>;\n    .reg .b64 %rd<3>;\n" + body + "}\n";
  hal_function big = load_kernel(text, "big");
  ASSERT_NE(big, nullptr);
  hal_function_info info{};
  info.struct_size = sizeof info;
  ASSERT_OK(hal_function_get_info(big, &info));
  EXPECT_EQ(info.param_count, values + 2);

  constexpr uint32_t kLaunches = 3;
  hal_deviceptr out = alloc(kLaunches * 5 * 4);
  std::vector<uint32_t> want;
  for (uint32_t l = 0; l < kLaunches; ++l) {
    hal_deviceptr at = out + l * 20;
    uint8_t s[16] = {};
    s[1] = static_cast<uint8_t>(0x80 + l);
    s[2] = 0x34;
    s[3] = static_cast<uint8_t>(0x12 + l);
    const uint64_t wide = 0x0123456789ABCDEFull + l;
    std::memcpy(s + 8, &wide, 8);
    std::vector<uint32_t> v(values);
    uint32_t sum = 0;
    for (uint32_t i = 0; i < values; ++i) {
      v[i] = 1000 * l + 7 * i + 3;
      sum += v[i] * (i + 1);
    }
    std::vector<void*> args = {&at, s};
    for (uint32_t& x : v) args.push_back(&x);
    hal_launch_config config{{1, 1, 1}, {1, 1, 1}, 0};
    ASSERT_OK(hal_launch(stream_, big, &config, args.data()));
    // The arguments are copied at the launch: changing them now changes nothing.
    std::fill(v.begin(), v.end(), 0u);
    std::memset(s, 0, sizeof s);
    want.insert(want.end(), {0x80u + l, 0x1234u + (l << 8), static_cast<uint32_t>(wide),
                             static_cast<uint32_t>(wide >> 32), sum});
  }
  EXPECT_EQ(download<uint32_t>(out, kLaunches * 5), want);
}

TEST_F(PtxOnVulkan, TheLaunchChoosesTheBlock) {
  hal_function vadd = load_kernel(kVectorAdd, "vadd");
  ASSERT_NE(vadd, nullptr);
  for (uint32_t block : {64u, 128u}) {
    SCOPED_TRACE(block);
    const uint32_t n = 777;
    const std::vector<float> a = ramp(n, 1.5f, 0.0f), b = ramp(n, 1.0f, -40.0f);
    const std::vector<float> c = run_binary(vadd, n, block, a, b);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
  }
}

TEST_F(PtxOnVulkan, ReqntidRefusesAnotherBlock) {
  std::string text = kVectorAdd;
  text.replace(text.find(")\n{"), 3, ")\n.reqntid 64, 1, 1\n{");
  hal_function vadd = load_kernel(text, "vadd");
  ASSERT_NE(vadd, nullptr);
  const uint32_t n = 256;
  const std::vector<float> a = ramp(n, 2.0f, 1.0f), b = ramp(n, 3.0f, -2.0f);
  // Its own block, and {0,0,0} for "the kernel's": both run.
  std::vector<float> c = run_binary(vadd, n, 64, a, b);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
  hal_deviceptr da = upload(a), db = upload(b), dc = alloc(n * sizeof(float));
  uint32_t count = n;
  void* args[] = {&da, &db, &dc, &count};
  hal_launch_config config{{n / 64, 1, 1}, {0, 0, 0}, 0};
  EXPECT_OK(hal_launch(stream_, vadd, &config, args));
  c = download<float>(dc, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
  // Another block is refused before the driver sees it.
  config = hal_launch_config{{n / 128, 1, 1}, {128, 1, 1}, 0};
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_launch(stream_, vadd, &config, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"{128,1,1}", "{64,1,1}", "vadd"}));
}

// Dynamic shared memory: each block reverses its part of the input through .extern .shared
// when told to; a launch with shared_bytes 0 (which CUDA accepts) runs the direct copy.
TEST_F(PtxOnVulkan, DynamicSharedMemoryComesFromTheLaunch) {
  const std::string text = R"(.version 7.0
.target sm_70
.address_size 64

.extern .shared .align 4 .b8 staging[];

.visible .entry reverse_blocks(
    .param .u64 reverse_blocks_param_0,
    .param .u64 reverse_blocks_param_1,
    .param .u32 reverse_blocks_param_2
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<12>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<12>;

    ld.param.u64 %rd1, [reverse_blocks_param_0];
    ld.param.u64 %rd2, [reverse_blocks_param_1];
    ld.param.u32 %r1, [reverse_blocks_param_2];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    mul.wide.s32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    ld.global.f32 %f1, [%rd6];
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra $L__direct;
    mov.u64 %rd7, staging;
    mul.wide.u32 %rd8, %r4, 4;
    add.s64 %rd9, %rd7, %rd8;
    st.shared.f32 [%rd9], %f1;
    bar.sync 0;
    not.b32 %r6, %r4;
    add.s32 %r7, %r3, %r6;
    mul.wide.u32 %rd10, %r7, 4;
    add.s64 %rd11, %rd7, %rd10;
    ld.shared.f32 %f1, [%rd11];
$L__direct:
    add.s64 %rd6, %rd4, %rd5;
    st.global.f32 [%rd6], %f1;
    ret;
}
)";
  hal_function fn = load_kernel(text, "reverse_blocks");
  ASSERT_NE(fn, nullptr);
  const uint32_t block = 64, blocks = 4, n = block * blocks;
  const std::vector<float> in = ramp(n, 1.0f, 0.5f);
  hal_deviceptr din = upload(in), dout = alloc(n * sizeof(float));
  for (uint32_t use_shared : {0u, 1u}) {
    SCOPED_TRACE(use_shared);
    EXPECT_OK(hal_memset_d32(stream_, dout, 0, n));
    void* args[] = {&din, &dout, &use_shared};
    hal_launch_config config{{blocks, 1, 1}, {block, 1, 1}, use_shared * block * 4};
    ASSERT_OK(hal_launch(stream_, fn, &config, args));
    const std::vector<float> out = download<float>(dout, n);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t from = use_shared ? i / block * block + (block - 1 - i % block) : i;
      ASSERT_EQ(out[i], in[from]) << "element " << i;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The translation cache

// A planted entry proves that a load takes the cache's translation without translating: the
// cache says vadd for the text of vmul, and the kernel adds.
TEST_F(PtxOnVulkan, ASecondLoadTakesTheCachedTranslation) {
  const std::string vmul = vector_mul("ASecondLoadTakesTheCachedTranslation");
  const std::string add_path = cache_path(kVectorAdd), mul_path = cache_path(vmul);
  ASSERT_FALSE(add_path.empty()) << "the tests set HAL_CACHE_DIR";
  ASSERT_NE(add_path, mul_path);
  std::error_code ignored;
  std::filesystem::remove(mul_path, ignored);
  ASSERT_NE(load_kernel(kVectorAdd, "vadd"), nullptr);
  hal::ptx_spirv::Translation added;
  std::string why;
  const hal::ptx_spirv::Target target = ptx_target(backend_device(device_)->caps());
  ASSERT_TRUE(read_ptx_cache(add_path, kVectorAdd, target, &added, &why)) << why;
  write_ptx_cache(mul_path, vmul, target, added);

  const uint32_t n = 300;
  const std::vector<float> a = ramp(n, 0.5f, 1.0f), b = ramp(n, 2.0f, -1.0f);
  std::vector<float> c = run_binary(load_kernel(vmul, "vadd"), n, 64, a, b);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;

  // A truncated file is a miss: the PTX is translated again (it multiplies) and the file
  // rewritten whole.
  std::filesystem::resize_file(mul_path, std::filesystem::file_size(mul_path) / 2);
  c = run_binary(load_kernel(vmul, "vadd"), n, 64, a, b);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] * b[i]) << "element " << i;
  hal::ptx_spirv::Translation rewritten;
  EXPECT_TRUE(read_ptx_cache(mul_path, vmul, target, &rewritten, &why)) << why;
  EXPECT_NE(rewritten.words, added.words);
}

// An entry that passes its checksum is not validated again (hal wrote it after validating it),
// but one whose words are not a module reflection can read, or whose kernels do not match the
// PTX, is not loaded: the PTX is translated again.
TEST_F(PtxOnVulkan, ACachedTranslationThatDoesNotFitThePtxIsTranslatedAgain) {
  const std::string vmul = vector_mul("ACachedTranslationThatDoesNotFitThePtxIsTranslatedAgain");
  const std::string path = cache_path(vmul);
  const hal::ptx_spirv::Target target = ptx_target(backend_device(device_)->caps());
  const uint32_t n = 100;
  const std::vector<float> a = ramp(n, 0.5f, 1.0f), b = ramp(n, 2.0f, -1.0f);

  // The first instruction's word count (0xDEAD) runs past the end of the module.
  hal::ptx_spirv::Translation invalid;
  invalid.words = {0x07230203u, 0x00010500u, 0u, 16u, 0u, 0xDEADBEEFu, 0x12345678u};
  hal::ptx_spirv::KernelInfo info;
  info.name = "vadd";
  info.param_bytes = 28;
  info.param_offsets = {0, 8, 16, 24};
  invalid.kernels.push_back(info);
  write_ptx_cache(path, vmul, target, invalid);
  std::vector<float> c = run_binary(load_kernel(vmul, "vadd"), n, 64, a, b);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] * b[i]) << "element " << i;

  // A valid module with the wrong kernel list.
  hal::ptx_spirv::Translation mismatched;
  std::string why;
  ASSERT_TRUE(read_ptx_cache(path, vmul, target, &mismatched, &why)) << why;
  mismatched.kernels[0].name = "other";
  write_ptx_cache(path, vmul, target, mismatched);
  c = run_binary(load_kernel(vmul, "vadd"), n, 64, a, b);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] * b[i]) << "element " << i;
  hal::ptx_spirv::Translation rewritten;
  ASSERT_TRUE(read_ptx_cache(path, vmul, target, &rewritten, &why)) << why;
  EXPECT_EQ(rewritten.kernels[0].name, "vadd");
}

}  // namespace
}  // namespace hal_vk_test
