// The manifest against what the blobs really contain: the embedded table (generated from
// kernels/manifest.json) is compared with the PTX text and, through hal, with
// hal_function_get_info/hal_function_get_param on every device IR available.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace kernel_test {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<const hal_kernel_info*> all_kernels() {
  std::vector<const hal_kernel_info*> out;
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) out.push_back(hal_kernels_get(i));
  return out;
}

// Whether |k| exists in PTX only: the tensor-core family, whose instructions have no portable
// SPIR-V form (kernels/README.md). Every other kernel is in both IRs.
bool ptx_only(const hal_kernel_info* k) {
  return std::string(k->family) == "matmul_mma_f16";
}

TEST(KernelsManifest, EveryKernelIsWellFormed) {
  ASSERT_GT(hal_kernels_count(), 0u);
  EXPECT_EQ(hal_kernels_get(hal_kernels_count()), nullptr);
  for (const hal_kernel_info* k : all_kernels()) {
    SCOPED_TRACE(k->name);
    EXPECT_EQ(hal_kernels_info(k->name), k);
    EXPECT_TRUE(std::string(k->dtype) == "f32" || std::string(k->dtype) == "f16");
    EXPECT_EQ(std::string(k->dtype) == "f16",
              (k->required_features & HAL_FEATURE_STORAGE_16BIT) != 0);
    EXPECT_GE(k->block[0] * k->block[1] * k->block[2], 1u);
    EXPECT_LE(k->block[0] * k->block[1] * k->block[2], 1024u);
    // Pointers first, then 32-bit values.
    bool seen_value = false;
    for (uint32_t p = 0; p < k->param_count; ++p) {
      const hal_kernel_param& param = k->params[p];
      const std::string type = param.type;
      if (param.kind == HAL_PARAM_POINTER) {
        EXPECT_FALSE(seen_value) << param.name << ": a pointer after a value";
        EXPECT_EQ(param.size, 8u);
        EXPECT_TRUE(type == "f32" || type == "f16") << param.name;
      } else {
        seen_value = true;
        EXPECT_EQ(param.kind, HAL_PARAM_VALUE);
        EXPECT_EQ(param.size, 4u);
        EXPECT_TRUE(type == "u32" || type == "f32") << param.name;
      }
    }
    for (uint32_t t = 0; t < k->tunable_count; ++t) {
      const hal_kernel_tunable& tun = k->tunables[t];
      bool allowed = false;
      for (uint32_t a = 0; a < tun.allowed_count; ++a) allowed |= tun.allowed[a] == tun.value;
      EXPECT_TRUE(allowed) << tun.name << " = " << tun.value << " is not among its allowed values";
    }
    if (ptx_only(k)) {
      EXPECT_EQ(hal_kernels_find(k->name, HAL_IR_SPIRV), nullptr);
      EXPECT_NE(std::string(k->description).find("PTX only"), std::string::npos)
          << "a PTX-only kernel says so in its description";
    }
    for (hal_ir ir : {HAL_IR_SPIRV, HAL_IR_PTX}) {
      if (ir == HAL_IR_SPIRV && ptx_only(k)) continue;
      const hal_kernel_blob* b = hal_kernels_find(k->name, ir);
      ASSERT_NE(b, nullptr) << ir_name(ir);
      EXPECT_EQ(b->kernel, k);
      EXPECT_EQ(b->ir, ir);
      EXPECT_STREQ(b->entry_point, k->name);
      ASSERT_GT(b->size, 0u);
      EXPECT_EQ(static_cast<const char*>(b->data)[b->size], '\0');
    }
  }
  EXPECT_EQ(hal_kernels_find("no_such_kernel", HAL_IR_SPIRV), nullptr);
  EXPECT_EQ(hal_kernels_find("saxpy", HAL_IR_CUBIN), nullptr);
}

// The embedded manifest, the source manifest and the built one next to the blobs are the same
// text, and name every kernel of the table.
TEST(KernelsManifest, EmbeddedManifestIsTheSourceManifest) {
  size_t size = 0;
  const char* text = hal_kernels_manifest(&size);
  ASSERT_GT(size, 0u);
  const std::string embedded(text, size);
  EXPECT_EQ(embedded, read_file(HAL_KERNELS_SOURCE_DIR "/manifest.json"));
  EXPECT_EQ(embedded, read_file(HAL_KERNELS_BUILD_DIR "/manifest.json"));
  for (const hal_kernel_info* k : all_kernels()) {
    EXPECT_NE(embedded.find("\"name\": \"" + std::string(k->name) + "\""), std::string::npos)
        << k->name;
  }
}

// The embedded blobs are the files the build put in share/hal/kernels (and installs).
TEST(KernelsManifest, EmbeddedBlobsAreTheFiles) {
  for (const hal_kernel_info* k : all_kernels()) {
    for (hal_ir ir : {HAL_IR_SPIRV, HAL_IR_PTX}) {
      if (ir == HAL_IR_SPIRV && ptx_only(k)) continue;
      const hal_kernel_blob* b = hal_kernels_find(k->name, ir);
      ASSERT_NE(b, nullptr);
      const std::string file = read_file(std::string(HAL_KERNELS_BUILD_DIR "/") + b->file);
      EXPECT_EQ(file, std::string(static_cast<const char*>(b->data), b->size)) << b->file;
    }
  }
}

// A PTX kernel's parameters as its text declares them: ".u64", ".u32", ".f32", ...
std::vector<std::string> ptx_param_types(const std::string& ptx, const std::string& name,
                                         std::string* maxntid) {
  std::vector<std::string> types;
  const std::string head = ".entry " + name + "(";
  const size_t at = ptx.find(head);
  if (at == std::string::npos) return types;
  const size_t end = ptx.find(')', at);
  std::istringstream params(ptx.substr(at + head.size(), end - at - head.size()));
  std::string word;
  while (params >> word) {
    if (word == ".param" && params >> word) types.push_back(word);
  }
  const size_t body = ptx.find('{', end);
  const size_t ntid = ptx.find(".maxntid", end);
  if (ntid != std::string::npos && ntid < body) {
    *maxntid = ptx.substr(ntid + 9, ptx.find('\n', ntid) - ntid - 9);
  }
  return types;
}

TEST(KernelsManifest, ParametersMatchThePtxText) {
  for (const hal_kernel_info* k : all_kernels()) {
    SCOPED_TRACE(k->name);
    const hal_kernel_blob* b = hal_kernels_find(k->name, HAL_IR_PTX);
    ASSERT_NE(b, nullptr);
    const std::string ptx(static_cast<const char*>(b->data), b->size);
    std::string maxntid;
    const std::vector<std::string> types = ptx_param_types(ptx, k->name, &maxntid);
    ASSERT_EQ(types.size(), k->param_count) << "in " << b->file;
    for (uint32_t p = 0; p < k->param_count; ++p) {
      const hal_kernel_param& param = k->params[p];
      std::string want = ".";
      want += param.kind == HAL_PARAM_POINTER ? "u64" : param.type;
      EXPECT_EQ(types[p], want) << "parameter " << p << " (" << param.name << ")";
    }
    const uint32_t threads = k->block[0] * k->block[1] * k->block[2];
    EXPECT_EQ(maxntid, std::to_string(threads) + ", 1, 1") << "the kernel's __launch_bounds__";
  }
}

// The block tile of every matmul kernel whose name gives it (..._<BM>x<BN>[_...]) is what
// hal_kernels_matmul_tile computes from its tunables, the grid every launcher uses.
TEST(KernelsManifest, MatmulTilesMatchTheNames) {
  size_t named = 0;
  for (const hal_kernel_info* k : all_kernels()) {
    SCOPED_TRACE(k->name);
    const std::string name = k->name;
    if (name.rfind("matmul_", 0) != 0) {
      uint32_t bm = 0, bn = 0;
      EXPECT_EQ(hal_kernels_matmul_tile(k, nullptr, &bm, &bn), 0);
      continue;
    }
    uint32_t bm = 0, bn = 0;
    ASSERT_EQ(hal_kernels_matmul_tile(k, nullptr, &bm, &bn), 1);
    if (name.rfind("matmul_naive_", 0) == 0) {
      EXPECT_EQ(bm, 16u);
      EXPECT_EQ(bn, 16u);
      continue;
    }
    // The first "_<digits>x<digits>" part of the name.
    std::string tile;
    std::istringstream parts(name);
    for (std::string part; std::getline(parts, part, '_');) {
      const size_t x = part.find('x');
      if (x != std::string::npos && x > 0 && x + 1 < part.size() &&
          part.find_first_not_of("0123456789x") == std::string::npos) {
        tile = part;
        break;
      }
    }
    ASSERT_FALSE(tile.empty()) << "no <BM>x<BN> in the name";
    EXPECT_EQ(std::to_string(bm) + "x" + std::to_string(bn), tile);
    ++named;
  }
  EXPECT_GE(named, 10u);
  // Explicit values, in the kernel's tunable order (TM, TN, SG): 64 / 8 * 64 x 8 * 16.
  const hal_kernel_info* sg = hal_kernels_info("matmul_sg_f32_128x64");
  ASSERT_NE(sg, nullptr);
  uint32_t bm = 0, bn = 0;
  const uint32_t big[] = {64, 16, 8};
  ASSERT_EQ(hal_kernels_matmul_tile(sg, big, &bm, &bn), 1);
  EXPECT_EQ(bm, 512u);
  EXPECT_EQ(bn, 128u);
  const uint32_t no_tile[] = {64, 16, 3};  // SG 3 does not divide the 64 threads
  EXPECT_EQ(hal_kernels_matmul_tile(sg, no_tile, &bm, &bn), 0);
  EXPECT_EQ(hal_kernels_matmul_tile(nullptr, nullptr, &bm, &bn), 0);
  EXPECT_EQ(hal_kernels_matmul_tile(sg, nullptr, nullptr, &bn), 0);
}

// hal_kernels_runs_on: the one answer to "can this device run that pack kernel", with the reason.
TEST(KernelsManifest, RunsOnNamesWhatIsMissing) {
  hal_device_info info{};
  info.struct_size = sizeof info;
  std::snprintf(info.name, sizeof info.name, "%s", "test device");
  info.max_shared_memory_per_block = 48 * 1024;
  char why[512] = "";
  auto runs = [&](const char* name, hal_ir ir) {
    why[0] = '\0';
    return hal_kernels_runs_on(hal_kernels_info(name), ir, &info, why, sizeof why);
  };
  EXPECT_EQ(runs("matmul_tiled_f32_64x64", HAL_IR_SPIRV), 1);
  EXPECT_EQ(runs("matmul_tiled_f16_64x64", HAL_IR_SPIRV), 0);
  EXPECT_NE(std::string(why).find("HAL_FEATURE_STORAGE_16BIT"), std::string::npos) << why;
  EXPECT_NE(std::string(why).find("test device"), std::string::npos) << why;
  EXPECT_EQ(runs("matmul_sg_f32_128x64", HAL_IR_PTX), 0);
  EXPECT_NE(std::string(why).find("HAL_FEATURE_SUBGROUP_BALLOT"), std::string::npos) << why;
  info.features = HAL_FEATURE_STORAGE_16BIT | HAL_FEATURE_SUBGROUP_BALLOT;
  EXPECT_EQ(runs("matmul_sg_f16_128x64", HAL_IR_SPIRV), 1);
  EXPECT_EQ(runs("matmul_mma_f16_64x64", HAL_IR_SPIRV), 0);
  EXPECT_NE(std::string(why).find("PTX only"), std::string::npos) << why;
  EXPECT_EQ(runs("matmul_mma_f16_64x64", HAL_IR_PTX), 1);
  EXPECT_EQ(runs("matmul_mma_f16_256x128_k64", HAL_IR_PTX), 0);  // 144 KiB of shared memory
  EXPECT_NE(std::string(why).find("bytes of shared memory"), std::string::npos) << why;
  // Built-in blobs exist for every kernel; the driver answers at load.
  info.features = 0;
  EXPECT_EQ(runs("matmul_sg_f16_128x64", HAL_IR_BUILTIN), 1);
  // No reason wanted, a short buffer, no kernel.
  EXPECT_EQ(hal_kernels_runs_on(hal_kernels_info("matmul_tiled_f16_64x64"), HAL_IR_SPIRV, &info,
                                nullptr, 0),
            0);
  char small[8];
  EXPECT_EQ(hal_kernels_runs_on(hal_kernels_info("matmul_tiled_f16_64x64"), HAL_IR_SPIRV, &info,
                                small, sizeof small),
            0);
  EXPECT_EQ(std::string(small).size(), sizeof small - 1);
  EXPECT_EQ(hal_kernels_runs_on(nullptr, HAL_IR_SPIRV, &info, why, sizeof why), 0);
}

// The SPIR-V declares only the capabilities its manifest entry accounts for: Shader, plus
// StorageBuffer16BitAccess for fp16 storage (no fp16 arithmetic, so HAL_FEATURE_FLOAT16 is not
// needed), GroupNonUniform and GroupNonUniformBallot for subgroup ballot.
TEST(KernelsManifest, SpirvCapabilitiesMatchTheRequirements) {
  constexpr uint32_t kOpCapability = 17;
  constexpr uint32_t kShader = 1;
  constexpr uint32_t kStorageBuffer16BitAccess = 4433;
  constexpr uint32_t kGroupNonUniform = 61;
  constexpr uint32_t kGroupNonUniformBallot = 64;
  for (const hal_kernel_info* k : all_kernels()) {
    SCOPED_TRACE(k->name);
    if (ptx_only(k)) continue;
    const hal_kernel_blob* b = hal_kernels_find(k->name, HAL_IR_SPIRV);
    ASSERT_NE(b, nullptr);
    ASSERT_EQ(b->size % 4, 0u);
    std::vector<uint32_t> words(b->size / 4);
    std::memcpy(words.data(), b->data, b->size);
    ASSERT_GT(words.size(), 5u);
    ASSERT_EQ(words[0], 0x07230203u);
    std::vector<uint32_t> capabilities;
    for (size_t i = 5; i < words.size();) {
      const uint32_t count = words[i] >> 16;
      ASSERT_GT(count, 0u);
      if ((words[i] & 0xFFFFu) == kOpCapability && count == 2) capabilities.push_back(words[i + 1]);
      i += count;
    }
    std::vector<uint32_t> want = {kShader};
    // Subgroup ballot: GroupNonUniform (basic) and GroupNonUniformBallot.
    if (k->required_features & HAL_FEATURE_SUBGROUP_BALLOT) {
      want.push_back(kGroupNonUniform);
      want.push_back(kGroupNonUniformBallot);
    }
    if (k->required_features & HAL_FEATURE_STORAGE_16BIT) want.push_back(kStorageBuffer16BitAccess);
    EXPECT_EQ(capabilities, want);
  }
}

// Through hal: every blob loads, its entry point is found under the kernel's name, and what hal
// reports about it is what the manifest says.
class ManifestHal : public IrTest {};

TEST_P(ManifestHal, FunctionsMatchTheManifest) {
  std::map<std::string, hal_module> modules;  // one module per file (PTX files hold several)
  for (const hal_kernel_info* k : all_kernels()) {
    SCOPED_TRACE(k->name);
    if (!missing(k->name).empty()) continue;
    if (ir() == HAL_IR_SPIRV && ptx_only(k)) continue;
    const hal_kernel_blob* b = hal_kernels_find(k->name, ir());
    ASSERT_NE(b, nullptr);
    hal_module& module = modules[b->file];
    if (module == nullptr) {
      const hal_status s = hal_module_load(device_, b->data, b->size, nullptr, &module);
      ASSERT_EQ(s, HAL_SUCCESS) << b->file << ": " << last_error(s);
    }
    hal_function f = nullptr;
    hal_status s = hal_module_get_function(module, b->entry_point, &f);
    ASSERT_EQ(s, HAL_SUCCESS) << last_error(s);
    hal_function_info fi{};
    fi.struct_size = sizeof fi;
    s = hal_function_get_info(f, &fi);
    ASSERT_EQ(s, HAL_SUCCESS) << last_error(s);
    EXPECT_STREQ(fi.name, k->name);
    ASSERT_EQ(fi.param_count, k->param_count);
    for (uint32_t p = 0; p < k->param_count; ++p) {
      hal_param_info pi{};
      pi.struct_size = sizeof pi;
      s = hal_function_get_param(f, p, &pi);
      ASSERT_EQ(s, HAL_SUCCESS) << last_error(s);
      EXPECT_EQ(pi.kind, k->params[p].kind)
          << "parameter " << p << " (" << k->params[p].name << ")";
      EXPECT_EQ(pi.size, k->params[p].size)
          << "parameter " << p << " (" << k->params[p].name << ")";
      // A value's type as the IR says it: the manifest's u32 is an integer, f32 a float.
      const hal_param_type want = k->params[p].kind == HAL_PARAM_POINTER ? HAL_PARAM_TYPE_UNKNOWN
                                  : k->params[p].type[0] == 'f'          ? HAL_PARAM_TYPE_FLOAT
                                                                         : HAL_PARAM_TYPE_INTEGER;
      EXPECT_EQ(pi.type, want) << "parameter " << p << " (" << k->params[p].name << ")";
    }
    hal_param_info beyond{};
    beyond.struct_size = sizeof beyond;
    EXPECT_EQ(hal_function_get_param(f, k->param_count, &beyond), HAL_ERROR_NOT_FOUND);
    const uint32_t threads = k->block[0] * k->block[1] * k->block[2];
    if (fi.block[0] != 0) {
      EXPECT_EQ(fi.block[0], k->block[0]);
      EXPECT_EQ(fi.block[1], k->block[1]);
      EXPECT_EQ(fi.block[2], k->block[2]);
    } else {
      // A SPIR-V kernel's block is fixed unless its WG tunable (a specialization constant)
      // sets it: then the block is the launch's, and the kernel computes with the one it gets.
      bool block_by_tunable = false;
      for (uint32_t t = 0; t < k->tunable_count; ++t) {
        block_by_tunable = block_by_tunable || std::string(k->tunables[t].name) == "WG";
      }
      EXPECT_TRUE(ir() != HAL_IR_SPIRV || block_by_tunable)
          << "every SPIR-V kernel of the pack has a fixed block size, unless a WG tunable sets it";
    }
    if (fi.max_threads_per_block != 0) {
      EXPECT_GE(fi.max_threads_per_block, threads);
    }
    if (info_.max_shared_memory_per_block != 0) {
      EXPECT_LE(fi.static_shared_bytes, info_.max_shared_memory_per_block);
    }
  }
  for (auto& entry : modules) EXPECT_EQ(hal_module_unload(entry.second), HAL_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(KernelsSpirv, ManifestHal, ::testing::Values(HAL_IR_SPIRV));
INSTANTIATE_TEST_SUITE_P(KernelsPtx, ManifestHal, ::testing::Values(HAL_IR_PTX));

}  // namespace
}  // namespace kernel_test
