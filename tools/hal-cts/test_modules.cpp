// Area Modules: every kernel of the pack loads in each IR the device accepts with the parameter
// list of the manifest (on a device of built-in kernels, every one its driver provides);
// malformed blobs are refused with the right status; a module's several entry points;
// specialization constants (the SPIR-V tiled matmul's tile sizes); unloading.
#include <hal_kernels/reference.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cts.h"
#include "cts_kernels.h"

namespace cts {
namespace {

namespace ref = hal_kernels::ref;

class Modules : public DeviceTest {};

const char* ir_label(hal_ir ir) {
  return ir == HAL_IR_PTX ? " (PTX)" : ir == HAL_IR_SPIRV ? " (SPIR-V)" : " (built-in)";
}

TEST_P(Modules, EveryPackKernelLoads) {
  int checked = 0;
  for (hal_ir ir : {HAL_IR_PTX, HAL_IR_SPIRV, HAL_IR_BUILTIN}) {
    if (!takes(ir)) continue;
    for (uint32_t k = 0; k < hal_kernels_count(); ++k) {
      const hal_kernel_info* kernel = hal_kernels_get(k);
      SCOPED_TRACE(std::string(kernel->name) + ir_label(ir));
      const hal_kernel_blob* blob = hal_kernels_find(kernel->name, ir);
      // A PTX-only kernel (the tensor-core matmul) has no SPIR-V blob; every other has both.
      if (blob == nullptr && ir == HAL_IR_SPIRV && hal_kernels_find(kernel->name, HAL_IR_PTX)) {
        continue;
      }
      ASSERT_NE(blob, nullptr);
      hal_module module = nullptr;
      const hal_status s = hal_module_load(device(), blob->data, blob->size, nullptr, &module);
      if (ir == HAL_IR_BUILTIN && s == HAL_ERROR_NOT_FOUND) {
        // The driver does not bring this kernel; it must say so like any failing call.
        CTS_EXPECT_STATUS(HAL_ERROR_NOT_FOUND, "hal_module_load", s);
        continue;
      }
      if (ir == HAL_IR_PTX && takes(HAL_IR_SPIRV) && s == HAL_ERROR_NOT_SUPPORTED) {
        // A Vulkan device translating PTX refuses what it cannot translate (matrix instructions),
        // naming it; not yet a defect.
        continue;
      }
      if (ir != HAL_IR_BUILTIN && (kernel->required_features & ~info().features) != 0 &&
          s != HAL_SUCCESS) {
        continue;  // it needs a feature the device lacks; refusing it is allowed
      }
      ASSERT_EQ(s, HAL_SUCCESS) << describe(s);
      hal_function f = nullptr;
      const hal_status got = hal_module_get_function(module, blob->entry_point, &f);
      if (ir == HAL_IR_PTX && takes(HAL_IR_SPIRV) && got == HAL_ERROR_NOT_SUPPORTED) {
        // The module loaded with the kernels that translate, and this one is refused by itself,
        // saying why: as above.
        CTS_EXPECT_STATUS(HAL_ERROR_NOT_SUPPORTED, "hal_module_get_function", got);
        CTS_EXPECT_OK(hal_module_unload(module));
        continue;
      }
      CTS_EXPECT_OK(got);
      if (f != nullptr) {
        hal_function_info fi{};
        fi.struct_size = sizeof fi;
        CTS_EXPECT_OK(hal_function_get_info(f, &fi));
        EXPECT_EQ(std::string(fi.name), std::string(kernel->name));
        if (fi.param_count != HAL_PARAM_COUNT_UNKNOWN) {
          EXPECT_EQ(fi.param_count, kernel->param_count) << "the manifest's parameter count";
          for (uint32_t p = 0; p < kernel->param_count && p < fi.param_count; ++p) {
            hal_param_info pi{};
            pi.struct_size = sizeof pi;
            CTS_EXPECT_OK(hal_function_get_param(f, p, &pi));
            EXPECT_EQ(pi.kind, kernel->params[p].kind) << "parameter " << p;
            EXPECT_EQ(pi.size, kernel->params[p].size) << "parameter " << p;
            if (pi.kind == HAL_PARAM_VALUE) {  // the IR's own scalar type (ABI 0.3.0)
              EXPECT_EQ(pi.type, kernel->params[p].type[0] == 'f' ? HAL_PARAM_TYPE_FLOAT
                                                                  : HAL_PARAM_TYPE_INTEGER)
                  << "parameter " << p << " (" << kernel->params[p].type << ")";
            }
          }
          hal_param_info beyond{};
          beyond.struct_size = sizeof beyond;
          CTS_EXPECT_STATUS(HAL_ERROR_NOT_FOUND, "hal_function_get_param",
                            hal_function_get_param(f, fi.param_count, &beyond));
        }
        EXPECT_LE(fi.max_threads_per_block, info().max_threads_per_block);
        // A built-in kernel has the manifest's block, or one chosen at launch where it computes
        // the same with any (the elementwise kernels walk their elements with a stride).
        if (ir == HAL_IR_BUILTIN && (fi.block[0] | fi.block[1] | fi.block[2]) != 0) {
          for (int d = 0; d < 3; ++d) {
            EXPECT_EQ(fi.block[d], kernel->block[d])
                << "the manifest's block size, dimension " << d;
          }
        }
      }
      CTS_EXPECT_OK(hal_module_unload(module));
      ++checked;
    }
  }
  if (checked == 0 && pack_ir() == HAL_IR_BUILTIN) {
    GTEST_SKIP() << "The device's driver provides none of the pack's kernels as built-in kernels.";
  }
  if (checked == 0) GTEST_SKIP() << cannot_run("fill_f32");
}

TEST_P(Modules, BadBlobsRejected) {
  hal_module m = nullptr;
  const char garbage[] = "this is neither PTX nor SPIR-V nor an ELF file";
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_IR, "hal_module_load",
                    hal_module_load(device(), garbage, sizeof garbage, nullptr, &m));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_module_load",
                    hal_module_load(device(), nullptr, 16, nullptr, &m));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_module_load",
                    hal_module_load(device(), garbage, 0, nullptr, &m));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_module_load",
                    hal_module_load(device(), garbage, sizeof garbage, nullptr, nullptr));
  EXPECT_EQ(m, nullptr) << "an output is left untouched on failure";
  hal_module_options bad_size{};
  bad_size.struct_size = 2;
  const hal_kernel_blob* spirv = hal_kernels_find("fill_f32", HAL_IR_SPIRV);
  const hal_kernel_blob* ptx = hal_kernels_find("fill_f32", HAL_IR_PTX);
  ASSERT_TRUE(spirv != nullptr && ptx != nullptr);
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_module_load",
                    hal_module_load(device(), spirv->data, spirv->size, &bad_size, &m));
  // A blob declared as the other IR.
  hal_module_options as_ptx{};
  as_ptx.struct_size = sizeof as_ptx;
  as_ptx.ir = HAL_IR_PTX;
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_IR, "hal_module_load",
                    hal_module_load(device(), spirv->data, spirv->size, &as_ptx, &m));
  if (takes(HAL_IR_SPIRV)) {
    // SPIR-V cut short: the header is there, the module is not.
    CTS_EXPECT_STATUS(HAL_ERROR_INVALID_IR, "hal_module_load",
                      hal_module_load(device(), spirv->data, 24, nullptr, &m));
    // A SPIR-V header whose word count is not whole.
    CTS_EXPECT_STATUS(HAL_ERROR_INVALID_IR, "hal_module_load",
                      hal_module_load(device(), spirv->data, spirv->size - 3, nullptr, &m));
    // The body overwritten with nonsense after a valid header.
    std::vector<uint8_t> broken(static_cast<const uint8_t*>(spirv->data),
                                static_cast<const uint8_t*>(spirv->data) + spirv->size);
    for (size_t i = 20; i < broken.size(); ++i) broken[i] = static_cast<uint8_t>(i * 131);
    CTS_EXPECT_STATUS(HAL_ERROR_INVALID_IR, "hal_module_load",
                      hal_module_load(device(), broken.data(), broken.size(), nullptr, &m));
  } else {
    CTS_EXPECT_STATUS(HAL_ERROR_NOT_SUPPORTED, "hal_module_load",
                      hal_module_load(device(), spirv->data, spirv->size, nullptr, &m));
  }
  if (takes(HAL_IR_PTX)) {
    // PTX whose header targets an architecture beyond every device.
    const std::string future =
        ".version 7.0\n.target sm_999\n.address_size 64\n.visible .entry k() { ret; }\n";
    CTS_EXPECT_STATUS(HAL_ERROR_NOT_SUPPORTED, "hal_module_load",
                      hal_module_load(device(), future.data(), future.size(), nullptr, &m));
  } else {
    CTS_EXPECT_STATUS(HAL_ERROR_NOT_SUPPORTED, "hal_module_load",
                      hal_module_load(device(), ptx->data, ptx->size, nullptr, &m));
  }
  const hal_kernel_blob* builtin = hal_kernels_find("fill_f32", HAL_IR_BUILTIN);
  ASSERT_NE(builtin, nullptr);
  if (takes(HAL_IR_BUILTIN)) {
    // "HALK" without a name; a name no driver has (the message names it); a built-in blob
    // declared as SPIR-V.
    CTS_EXPECT_STATUS(HAL_ERROR_INVALID_IR, "hal_module_load",
                      hal_module_load(device(), "HALK", 4, nullptr, &m));
    const std::string unknown = "HALKno_such_builtin_kernel";
    CTS_EXPECT_STATUS(HAL_ERROR_NOT_FOUND, "hal_module_load",
                      hal_module_load(device(), unknown.data(), unknown.size(), nullptr, &m));
    EXPECT_NE(std::string(hal_last_error()).find("no_such_builtin_kernel"), std::string::npos)
        << "the message names the kernel asked for: " << hal_last_error();
    hal_module_options as_spirv{};
    as_spirv.struct_size = sizeof as_spirv;
    as_spirv.ir = HAL_IR_SPIRV;
    CTS_EXPECT_STATUS(HAL_ERROR_INVALID_IR, "hal_module_load",
                      hal_module_load(device(), builtin->data, builtin->size, &as_spirv, &m));
  } else {
    CTS_EXPECT_STATUS(HAL_ERROR_NOT_SUPPORTED, "hal_module_load",
                      hal_module_load(device(), builtin->data, builtin->size, nullptr, &m));
  }
  CTS_EXPECT_STATUS(HAL_ERROR_NOT_FOUND, "hal_module_load_file",
                    hal_module_load_file(device(), "no-such-dir/no-such-kernel.spv", nullptr, &m));
  EXPECT_EQ(m, nullptr);
  expect_device_works("rejected modules");
}

// A SPIR-V 1.5 module with two GLCompute entry points that do nothing, assembled from:
//   OpCapability Shader
//   OpMemoryModel Logical GLSL450
//   OpEntryPoint GLCompute %first "first"
//   OpEntryPoint GLCompute %second "second"
//   OpExecutionMode %first LocalSize 1 1 1
//   OpExecutionMode %second LocalSize 64 1 1
//   %void = OpTypeVoid
//   %fn = OpTypeFunction %void
//   %first = OpFunction %void None %fn
//   %l1 = OpLabel
//   OpReturn
//   OpFunctionEnd
//   (and %second likewise)
const uint32_t kTwoEntryPoints[] = {
    0x07230203, 0x00010500, 0x00070000, 0x00000007, 0x00000000, 0x00020011, 0x00000001, 0x0003000e,
    0x00000000, 0x00000001, 0x0005000f, 0x00000005, 0x00000001, 0x73726966, 0x00000074, 0x0005000f,
    0x00000005, 0x00000002, 0x6f636573, 0x0000646e, 0x00060010, 0x00000001, 0x00000011, 0x00000001,
    0x00000001, 0x00000001, 0x00060010, 0x00000002, 0x00000011, 0x00000040, 0x00000001, 0x00000001,
    0x00020013, 0x00000003, 0x00030021, 0x00000004, 0x00000003, 0x00050036, 0x00000003, 0x00000001,
    0x00000000, 0x00000004, 0x000200f8, 0x00000005, 0x000100fd, 0x00010038, 0x00050036, 0x00000003,
    0x00000002, 0x00000000, 0x00000004, 0x000200f8, 0x00000006, 0x000100fd, 0x00010038};

// Several entry points in one module: the SPIR-V module above, and the pack's PTX modules (which
// hold several kernels each).
TEST_P(Modules, SeveralEntryPoints) {
  if (!takes(HAL_IR_PTX) && !takes(HAL_IR_SPIRV)) {
    GTEST_SKIP() << "The device accepts neither PTX nor SPIR-V, the IRs this check has modules in.";
  }
  if (takes(HAL_IR_SPIRV)) {
    SCOPED_TRACE("SPIR-V");
    hal_module m = nullptr;
    CTS_ASSERT_OK(hal_module_load(device(), kTwoEntryPoints, sizeof kTwoEntryPoints, nullptr, &m));
    const std::pair<const char*, uint32_t> entries[] = {{"first", 1}, {"second", 64}};
    for (const auto& [name, block] : entries) {
      hal_function f = nullptr;
      CTS_EXPECT_OK(hal_module_get_function(m, name, &f));
      if (f == nullptr) continue;
      hal_function_info fi{};
      fi.struct_size = sizeof fi;
      CTS_EXPECT_OK(hal_function_get_info(f, &fi));
      EXPECT_EQ(fi.block[0], block) << name << "'s LocalSize";
      EXPECT_EQ(fi.param_count, 0u) << name << " has no resources";
      const hal_launch_config config = {{3, 1, 1}, {0, 0, 0}, 0};
      CTS_EXPECT_OK(hal_launch(stream_, f, &config, nullptr));
    }
    CTS_EXPECT_OK(hal_stream_synchronize(stream_));
    hal_function f = nullptr;
    CTS_EXPECT_STATUS(HAL_ERROR_NOT_FOUND, "hal_module_get_function",
                      hal_module_get_function(m, "third", &f));
    EXPECT_NE(std::string(hal_last_error()).find("second"), std::string::npos)
        << "the message lists the module's entry points";
    CTS_EXPECT_OK(hal_module_unload(m));
  }
  if (takes(HAL_IR_PTX)) {
    SCOPED_TRACE("PTX");
    const hal_kernel_blob* blob = hal_kernels_find("fill_f32", HAL_IR_PTX);
    ASSERT_NE(blob, nullptr);
    hal_module m = nullptr;
    CTS_ASSERT_OK(hal_module_load(device(), blob->data, blob->size, nullptr, &m));
    int found = 0;
    for (uint32_t k = 0; k < hal_kernels_count(); ++k) {
      const hal_kernel_blob* other = hal_kernels_find(hal_kernels_get(k)->name, HAL_IR_PTX);
      if (other == nullptr || other->data != blob->data) continue;
      hal_function f = nullptr;
      CTS_EXPECT_OK(hal_module_get_function(m, other->entry_point, &f));
      found += f != nullptr;
    }
    EXPECT_GE(found, 2) << "the module holding fill_f32 holds its sibling kernels too";
    hal_function f = nullptr;
    CTS_EXPECT_STATUS(HAL_ERROR_NOT_FOUND, "hal_module_get_function",
                      hal_module_get_function(m, "no_such_kernel", &f));
    EXPECT_NE(std::string(hal_last_error()).find("fill_f32"), std::string::npos)
        << "the message lists the module's entry points";
    CTS_EXPECT_OK(hal_module_unload(m));
  }
}

// The SPIR-V tiled matmul with its tile sizes set through specialization constants, checked
// against the CPU reference; bad constants are refused.
TEST_P(Modules, SpecializationConstants) {
  if (!takes(HAL_IR_SPIRV)) {
    // PTX has no specialization constants: passing one is HAL_ERROR_NOT_SUPPORTED.
    const hal_kernel_blob* ptx = hal_kernels_find("fill_f32", HAL_IR_PTX);
    const uint32_t v = 1;
    const hal_specialization spec = {0, 4, &v};
    hal_module_options o{};
    o.struct_size = sizeof o;
    o.specialization_count = 1;
    o.specializations = &spec;
    hal_module m = nullptr;
    if (takes(HAL_IR_PTX)) {
      CTS_EXPECT_STATUS(HAL_ERROR_NOT_SUPPORTED, "hal_module_load",
                        hal_module_load(device(), ptx->data, ptx->size, &o, &m));
    }
    if (takes(HAL_IR_BUILTIN)) {  // nor have built-in kernels
      const hal_kernel_blob* builtin = hal_kernels_find("fill_f32", HAL_IR_BUILTIN);
      CTS_EXPECT_STATUS(HAL_ERROR_NOT_SUPPORTED, "hal_module_load",
                        hal_module_load(device(), builtin->data, builtin->size, &o, &m));
    }
    GTEST_SKIP() << "Specialization constants are SPIR-V only and the device does not accept "
                    "SPIR-V.";
  }
  struct Tiles {
    uint32_t bm, bn, bk;
  };
  const Tiles tiles[] = {{32, 64, 8}, {16, 16, 32}, {64, 32, 16}};
  const uint32_t M = 37, N = 45, K = 29;
  const std::vector<float> a = ref::random_uniform(size_t{M} * K, 11),
                           b = ref::random_uniform(size_t{K} * N, 12);
  const ref::Result want = ref::matmul(a, b, {}, M, N, K, K, N, N, 1.0f, 0.0f, ref::Storage::kF32);
  Buffer da(device(), a.size() * 4), db(device(), b.size() * 4), dc(device(), size_t{M} * N * 4);
  ASSERT_TRUE(da.ok() && db.ok() && dc.ok()) << da.error() << db.error() << dc.error();
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, da.ptr, a.data(), a.size() * 4));
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, db.ptr, b.data(), b.size() * 4));
  for (const Tiles& t : tiles) {
    const std::string what = "BM=" + std::to_string(t.bm) + " BN=" + std::to_string(t.bn) +
                             " BK=" + std::to_string(t.bk);
    SCOPED_TRACE(what);
    if ((t.bm + t.bn) * t.bk * 4 > info().max_shared_memory_per_block) continue;
    // A superset, as engines pass it: ids 3 and 99 are not in this module, and are ignored as
    // Vulkan ignores them.
    const uint32_t unused = 7;
    const std::vector<hal_specialization> spec = {
        {0, 4, &t.bm}, {1, 4, &t.bn}, {2, 4, &t.bk}, {3, 4, &unused}, {99, 4, &unused}};
    Kernel k;
    ASSERT_NO_FATAL_FAILURE(k.load(device(), "matmul_tiled_f32_64x64", HAL_IR_SPIRV, spec));
    hal_function_info fi{};
    fi.struct_size = sizeof fi;
    CTS_ASSERT_OK(hal_function_get_info(k.function, &fi));
    EXPECT_EQ(fi.static_shared_bytes, (t.bm + t.bn) * t.bk * 4)
        << "shared arrays sized by the constants count at their specialized sizes";
    CTS_ASSERT_OK(hal_memset_d32(stream_, dc.ptr, 0x7FC00000u, size_t{M} * N));  // NaN
    uint32_t m = M, n = N, kk = K, lda = K, ldb = N, ldc = N;
    float alpha = 1.0f, beta = 0.0f;
    ASSERT_NO_FATAL_FAILURE(
        k.launch(stream_, (N + t.bn - 1) / t.bn, (M + t.bm - 1) / t.bm, 1,
                 {&da.ptr, &db.ptr, &dc.ptr, &m, &n, &kk, &lda, &ldb, &ldc, &alpha, &beta}));
    std::vector<float> got(size_t{M} * N);
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), dc.ptr, got.size() * 4));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    const ref::Check check = ref::compare(got, want);
    EXPECT_TRUE(check.ok()) << what << ": " << check.summary();
  }
  // A size that does not match the constant's.
  const hal_kernel_blob* blob = hal_kernels_find("matmul_tiled_f32_64x64", HAL_IR_SPIRV);
  const uint64_t wide = 32;
  hal_module_options o{};
  o.struct_size = sizeof o;
  o.specialization_count = 1;
  hal_module m = nullptr;
  const hal_specialization wrong_size = {0, 8, &wide};
  o.specializations = &wrong_size;
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_module_load",
                    hal_module_load(device(), blob->data, blob->size, &o, &m));
}

// Tile constants whose shared arrays exceed the device's limit: the module loads, reports the
// specialized size, and the launch is refused with the numbers before the driver sees it.
TEST_P(Modules, SpecializedSharedMemoryOverLimit) {
  if (!takes(HAL_IR_SPIRV)) GTEST_SKIP() << "Specialization constants are SPIR-V only.";
  const uint32_t bm = 128, bn = 128;
  const uint32_t bk = info().max_shared_memory_per_block / ((bm + bn) * 4) + 1;
  const uint32_t bytes = (bm + bn) * bk * 4;
  const std::vector<hal_specialization> spec = {{0, 4, &bm}, {1, 4, &bn}, {2, 4, &bk}};
  Kernel k;
  ASSERT_NO_FATAL_FAILURE(k.load(device(), "matmul_tiled_f32_64x64", HAL_IR_SPIRV, spec));
  hal_function_info fi{};
  fi.struct_size = sizeof fi;
  CTS_ASSERT_OK(hal_function_get_info(k.function, &fi));
  EXPECT_EQ(fi.static_shared_bytes, bytes);
  Buffer buf(device(), 4096);
  ASSERT_TRUE(buf.ok()) << buf.error();
  uint32_t one = 1;
  float alpha = 1.0f, beta = 0.0f;
  void* args[] = {&buf.ptr, &buf.ptr, &buf.ptr, &one, &one, &one, &one, &one, &one, &alpha, &beta};
  const hal_launch_config c = {{1, 1, 1}, {0, 0, 0}, 0};
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch",
                    hal_launch(stream_, k.function, &c, args));
  const std::string message = hal_last_error();
  EXPECT_NE(message.find(std::to_string(bytes)), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(info().max_shared_memory_per_block)), std::string::npos)
      << message;
  expect_device_works("a refused launch over the shared-memory limit");
}

// A workgroup size built of specialization constants and given at load is the kernel's fixed
// block: reported by hal_function_get_info, and what block {0,0,0} launches.
TEST_P(Modules, WorkgroupSizeBySpecialization) {
  if (!takes(HAL_IR_SPIRV)) GTEST_SKIP() << "Specialization constants are SPIR-V only.";
  const uint32_t bx = 16, by = 2, bz = 2;
  const hal_specialization spec[] = {{0, 4, &bx}, {1, 4, &by}, {2, 4, &bz}};
  hal_module_options o{};
  o.struct_size = sizeof o;
  o.specialization_count = 3;
  o.specializations = spec;
  hal_module m = nullptr;
  CTS_ASSERT_OK(hal_module_load(device(), kIndexSpirv, kIndexSpirvBytes, &o, &m));
  hal_function f = nullptr;
  CTS_ASSERT_OK(hal_module_get_function(m, "main", &f));
  hal_function_info fi{};
  fi.struct_size = sizeof fi;
  CTS_ASSERT_OK(hal_function_get_info(f, &fi));
  EXPECT_EQ(fi.block[0], bx);
  EXPECT_EQ(fi.block[1], by);
  EXPECT_EQ(fi.block[2], bz);
  uint32_t n = bx * by * bz * 3;
  Buffer out(device(), (n + 1) * 4);
  ASSERT_TRUE(out.ok()) << out.error();
  CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0, n + 1));
  void* args[] = {&out.ptr, &n};
  const hal_launch_config c = {{3, 1, 1}, {0, 0, 0}, 0};
  CTS_ASSERT_OK(hal_launch(stream_, f, &c, args));
  std::vector<uint32_t> got(n + 1);
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), out.ptr, got.size() * 4));
  CTS_ASSERT_OK(hal_stream_synchronize(stream_));
  size_t wrong = 0;
  for (uint32_t i = 0; i < n; ++i) wrong += got[i] != i + 1;
  EXPECT_EQ(wrong, 0u) << "threads of the specialized block wrote the wrong values";
  EXPECT_EQ(got[n], 0u) << "written past the last thread";
  const hal_launch_config other = {{3, 1, 1}, {bx * 2, by, bz}, 0};
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch", hal_launch(stream_, f, &other, args));
  CTS_EXPECT_OK(hal_module_unload(m));
}

TEST_P(Modules, Unload) {
  if (pack_ir() == HAL_IR_AUTO) GTEST_SKIP() << cannot_run("fill_f32");
  const hal_kernel_blob* blob = hal_kernels_find("fill_f32", pack_ir());
  hal_module m = nullptr;
  hal_function f = nullptr;
  const hal_status loaded = hal_module_load(device(), blob->data, blob->size, nullptr, &m);
  if (pack_ir() == HAL_IR_BUILTIN && loaded == HAL_ERROR_NOT_FOUND) {
    GTEST_SKIP() << "The device's driver does not provide the built-in kernel fill_f32.";
  }
  CTS_ASSERT_OK(loaded);
  CTS_ASSERT_OK(hal_module_get_function(m, "fill_f32", &f));
  // A launch still pending when its module is unloaded completes.
  Buffer y(device(), 1 << 20);
  ASSERT_TRUE(y.ok()) << y.error();
  uint32_t n = (1 << 20) / 4;
  float value = 7.0f;
  void* args[] = {&y.ptr, &n, &value};
  hal_launch_config config = {{64, 1, 1}, {0, 0, 0}, 0};
  for (int i = 0; i < 3; ++i) config.block[i] = blob->kernel->block[i];
  CTS_ASSERT_OK(hal_launch(stream_, f, &config, args));
  CTS_EXPECT_OK(hal_module_unload(m));
  std::vector<float> got(n);
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), y.ptr, size_t{n} * 4));
  CTS_ASSERT_OK(hal_stream_synchronize(stream_));
  size_t wrong = 0;
  for (float g : got) wrong += g != value;
  EXPECT_EQ(wrong, 0u) << "the launch issued before the unload did not complete";
  hal_function_info fi{};
  fi.struct_size = sizeof fi;
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_function_get_info",
                    hal_function_get_info(f, &fi));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_launch", hal_launch(stream_, f, &config, args));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_module_unload", hal_module_unload(m));
}

INSTANTIATE_TEST_SUITE_P(, Modules, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
