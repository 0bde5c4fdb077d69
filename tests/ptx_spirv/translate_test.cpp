// The translator on its own, without a device: every PTX file in the tree either translates
// into SPIR-V that SPIRV-Tools validates for Vulkan 1.2, or is refused with a message that names
// the kernel, the PTX line and the reason (and only for a reason the translator documents).
// Then each documented refusal, one by one, on small hand-written PTX.
#include <gtest/gtest.h>

#include <spirv-tools/libspirv.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ptx/ir.h"
#include "ptx_spirv/translate.h"

namespace {

namespace ir = hal::ptx::ir;
namespace fs = std::filesystem;
using hal::ptx_spirv::Failure;
using hal::ptx_spirv::Target;
using hal::ptx_spirv::Translation;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// What lavapipe offers, the device CI runs on.
Target full_target() {
  Target t;
  t.float64 = t.int16 = t.int8 = t.float16 = true;
  t.storage_buffer_8bit = t.storage_buffer_16bit = true;
  t.int64_atomics = t.float32_atomic_add = true;
  t.max_push_constant_bytes = 128;
  t.max_shared_bytes = 32768;
  return t;
}

// "" when valid, else the validator's message.
std::string validate(const std::vector<uint32_t>& words) {
  spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_2);
  spv_const_binary_t binary{words.data(), words.size()};
  spv_diagnostic diagnostic = nullptr;
  const spv_result_t result = spvValidate(context, &binary, &diagnostic);
  std::string message;
  if (result != SPV_SUCCESS) message = diagnostic != nullptr ? diagnostic->error : "invalid";
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return message;
}

struct Outcome {
  bool parsed = false;
  bool translated = false;
  Failure failure;
  Translation translation;
};

Outcome translate_text(const std::string& text, const Target& target = full_target()) {
  Outcome o;
  ir::Module module;
  ir::ParseError error;
  o.parsed = ir::parse(text.data(), text.size(), ir::ParseOptions{}, &module, &error);
  if (!o.parsed) {
    o.failure.message = "parse: " + error.message;
    return o;
  }
  o.translated = hal::ptx_spirv::translate(module, target, &o.translation, &o.failure);
  return o;
}

const char* kWarpOpcodes[] = {"shfl.",    "vote.",    "match.", "redux.", "activemask", "mma.",
                              "ldmatrix", "stmatrix", "wmma.",  "elect.", "%laneid"};

bool has_warp_instruction(const std::string& text) {
  for (const char* op : kWarpOpcodes) {
    if (text.find(op) != std::string::npos) return true;
  }
  return false;
}

std::vector<fs::path> tree_ptx_files() {
  std::vector<fs::path> files;
  for (const char* dir : {"kernels/ptx", "tests/ptx_cpu/triton", "tests/ptx_cpu/nvcc",
                          "python/tests/triton_kernels"}) {
    const fs::path path = fs::path(HAL_SOURCE_DIR) / dir;
    if (!fs::exists(path)) continue;
    for (const auto& entry : fs::directory_iterator(path)) {
      if (entry.path().extension() == ".ptx") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(PtxToSpirv, EveryPtxInTheTreeTranslatesToValidSpirvOrIsRefusedWithItsReason) {
  const std::vector<fs::path> files = tree_ptx_files();
  ASSERT_GE(files.size(), 10u) << "the tree's PTX files were not found under " << HAL_SOURCE_DIR;
  size_t translated = 0;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    const std::string text = read_file(file);
    const Outcome o = translate_text(text);
    ASSERT_TRUE(o.parsed) << o.failure.message;
    if (o.translated) {
      ++translated;
      EXPECT_EQ(validate(o.translation.words), "");
      EXPECT_FALSE(o.translation.kernels.empty());
      continue;
    }
    // The only refusals the tree's PTX may meet today are of warp-level code, without 32-lane
    // warps: the matrix instructions, and warp instructions in divergent code.
    EXPECT_EQ(o.failure.kind, Failure::Kind::kNotSupported);
    EXPECT_NE(o.failure.message.find("kernel '"), std::string::npos) << o.failure.message;
    EXPECT_NE(o.failure.message.find("PTX line "), std::string::npos) << o.failure.message;
    EXPECT_TRUE(o.failure.message.find("matrix instruction") != std::string::npos ||
                o.failure.message.find("through workgroup memory") != std::string::npos)
        << o.failure.message;
    EXPECT_TRUE(has_warp_instruction(text));
  }
  // smoke, matmul, attention, and Triton's vector_add and histogram at least.
  EXPECT_GE(translated, 5u);
}

TEST(PtxToSpirv, KernelInfoFollowsTheSignatureAndDirectives) {
  const std::string ptx = R"(.version 8.0
.target sm_80
.address_size 64
.extern .shared .align 16 .b8 dyn[];
.entry k(.param .u64 a, .param .u32 n, .param .u8 c, .param .align 8 .b8 s[12], .param .f64 x)
.reqntid 64, 2
{
  .shared .align 4 .b8 tile[100];
  .reg .b32 %r<3>;
  mov.u32 %r1, tile;
  mov.u32 %r2, dyn;
  ret;
}
)";
  const Outcome o = translate_text(ptx);
  ASSERT_TRUE(o.translated) << o.failure.message;
  ASSERT_EQ(o.translation.kernels.size(), 1u);
  const auto& k = o.translation.kernels[0];
  EXPECT_EQ(k.name, "k");
  // cuLaunchKernel's packing: u64 at 0, u32 at 8, u8 at 12, the 8-aligned struct at 16, f64 at 32.
  EXPECT_EQ(k.param_offsets, (std::vector<uint32_t>{0, 8, 12, 16, 32}));
  EXPECT_EQ(k.param_bytes, 40u);
  EXPECT_EQ(k.static_shared_bytes, 100u);
  EXPECT_TRUE(k.dynamic_shared);
  EXPECT_EQ(k.reqntid[0], 64u);
  EXPECT_EQ(k.reqntid[1], 2u);
  EXPECT_EQ(validate(o.translation.words), "");
}

std::string kernel_with(const std::string& declarations, const std::string& body,
                        const std::string& params = ".param .u64 p") {
  return ".version 8.0\n.target sm_80\n.address_size 64\n.entry k(" + params + ")\n{\n" +
         declarations + "\n" + body + "\nret;\n}\n";
}

void expect_refused(const std::string& ptx, const Target& target, const std::string& needle,
                    Failure::Kind kind = Failure::Kind::kNotSupported) {
  const Outcome o = translate_text(ptx, target);
  ASSERT_TRUE(o.parsed) << o.failure.message;
  ASSERT_FALSE(o.translated) << "translated, expected a refusal naming '" << needle << "'";
  EXPECT_EQ(o.failure.kind, kind);
  EXPECT_NE(o.failure.message.find(needle), std::string::npos) << o.failure.message;
}

TEST(PtxToSpirv, MissingDeviceFeaturesAreNamed) {
  Target no_f64 = full_target();
  no_f64.float64 = false;
  expect_refused(kernel_with(".reg .f64 %fd<3>;", "add.f64 %fd1, %fd2, %fd2;"), no_f64,
                 "shaderFloat64");
  Target no_8bit = full_target();
  no_8bit.storage_buffer_8bit = false;
  expect_refused(kernel_with(".reg .b16 %rs<2>; .reg .b64 %rd<2>;",
                             "ld.param.u64 %rd1, [p];\nld.global.u8 %rs1, [%rd1];"),
                 no_8bit, "storageBuffer8BitAccess");
  Target no_atomic64 = full_target();
  no_atomic64.int64_atomics = false;
  expect_refused(kernel_with(".reg .b64 %rd<3>;",
                             "ld.param.u64 %rd1, [p];\natom.global.add.u64 %rd2, [%rd1], 1;"),
                 no_atomic64, "64-bit atomics");
  Target no_float_atomic = full_target();
  no_float_atomic.float32_atomic_add = false;
  expect_refused(
      kernel_with(".reg .b64 %rd<2>; .reg .f32 %f<2>;",
                  "ld.param.u64 %rd1, [p];\natom.global.add.f32 %f1, [%rd1], 0f3F800000;"),
      no_float_atomic, "float32 atomic add");
}

Target warp_target() {
  Target t = full_target();
  t.warp32 = true;
  return t;
}

// A device without 32-lane warps, whose warps run through workgroup memory.
Target narrow_target() {
  Target t = full_target();
  t.no_warp32 = "the device's subgroups are 8 lanes wide";
  return t;
}

// |ptx| translates to valid SPIR-V on 32-lane subgroups and through workgroup memory.
void expect_valid_in_both_warp_forms(const std::string& ptx) {
  for (const Target& target : {warp_target(), narrow_target()}) {
    SCOPED_TRACE(target.warp32 ? "32-lane subgroups" : "through workgroup memory");
    const Outcome o = translate_text(ptx, target);
    ASSERT_TRUE(o.translated) << o.failure.message;
    EXPECT_EQ(validate(o.translation.words), "");
  }
}

// Without 32-lane warps, warp-level PTX runs through workgroup memory where the whole block
// reaches each warp instruction together, and is refused where a branch that depends on the
// thread decides whether it runs (naming that branch's line).
TEST(PtxToSpirv, WarpLevelPtxWithoutWarpsRunsThroughWorkgroupMemory) {
  const Target narrow = narrow_target();
  const std::string regs = ".reg .b32 %r<6>; .reg .pred %p<3>; .reg .b64 %rd<2>;";
  auto translates = [&](const std::string& body) {
    SCOPED_TRACE(body);
    const Outcome o = translate_text(kernel_with(regs, body), narrow);
    ASSERT_TRUE(o.translated) << o.failure.message;
    EXPECT_EQ(validate(o.translation.words), "");
    ASSERT_EQ(o.translation.kernels.size(), 1u);
    EXPECT_EQ(o.translation.kernels[0].warp_size, 0u);  // no subgroup requirement
  };
  translates("shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;");
  translates("mov.u32 %r1, %laneid;\nvote.sync.ballot.b32 %r2, %p1, -1;");
  // A register reused: uniform (the block's size) for the loop count, after holding %tid.
  translates(
      "mov.u32 %r1, %tid.x;\nmov.u32 %r1, %ntid.x;\nLOOP:\nshfl.sync.down.b32 %r2, %r2, 1, 31, "
      "-1;\nsub.u32 %r1, %r1, 1;\nsetp.ne.u32 %p1, %r1, 0;\n@%p1 bra LOOP;");
  // A guard that varies does not make the code divergent; a uniform branch does not either.
  translates(
      "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 5;\n@%p1 shfl.sync.idx.b32 %r2, %r1, 0, 31, "
      "-1;\nld.param.u64 %rd1, [p];\nsetp.eq.u64 %p2, %rd1, 0;\n@%p2 bra SKIP;\n"
      "redux.sync.add.u32 %r3, %r1, -1;\nSKIP:\nbar.warp.sync -1;");

  auto refused = [&](const std::string& body, const std::string& branch_line) {
    expect_refused(kernel_with(regs, body), narrow,
                   "the device has no 32-lane warps (the device's subgroups are 8 lanes wide), "
                   "so hal runs warps through workgroup memory");
    expect_refused(kernel_with(regs, body), narrow, "the branch at PTX line " + branch_line);
  };
  // A branch on the thread (line 9 of kernel_with's text); an early exit; a loop whose trip
  // count comes from memory; a value written in divergent code decides a later branch.
  refused(
      "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 5;\n@%p1 bra SKIP;\n"
      "shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;\nSKIP:",
      "9");
  refused("mov.u32 %r1, %laneid;\nsetp.eq.u32 %p1, %r1, 3;\n@%p1 ret;\nactivemask.b32 %r2;", "9");
  refused(
      "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\nLOOP:\n"
      "vote.sync.any.pred %p2, %p1, -1;\nsub.u32 %r1, %r1, 1;\nsetp.ne.u32 %p1, %r1, 0;\n"
      "@%p1 bra LOOP;",
      "13");
  refused(
      "mov.u32 %r1, 0;\nmov.u32 %r2, %tid.x;\nsetp.eq.u32 %p1, %r2, 0;\n@%p1 bra A;\n"
      "mov.u32 %r1, 1;\nA:\nsetp.eq.u32 %p2, %r1, 0;\n@%p2 bra B;\nelect.sync %p1, -1;\nB:",
      "14");

  // A .reqntid block counts the exchange array (two words per thread, whole warps) as static
  // shared memory, and a block CUDA splits into a partial warp is fine.
  const Outcome o = translate_text(
      ".version 8.0\n.target sm_80\n.address_size 64\n.entry k() .reqntid 48\n{\n"
      ".reg .b32 %r;\n.shared .b32 s[5];\nactivemask.b32 %r;\nst.shared.u32 [s], %r;\nret;\n}\n",
      narrow);
  ASSERT_TRUE(o.translated) << o.failure.message;
  EXPECT_EQ(validate(o.translation.words), "");
  EXPECT_EQ(o.translation.kernels[0].static_shared_bytes, 20u + 2 * 64 * 4);
  Target small = narrow;
  small.max_shared_bytes = 1024;
  expect_refused(
      ".version 8.0\n.target sm_80\n.address_size 64\n.entry k() .reqntid 256\n{\n"
      ".reg .b32 %r;\nactivemask.b32 %r;\nret;\n}\n",
      small, "the 2048 bytes its warps exchange through");
}

TEST(PtxToSpirv, WarpLevelPtxWithWarpsRefusesWhatDoesNotFitThem) {
  // A .reqntid that splits warps, and the matrix instructions not translated yet.
  expect_refused(
      ".version 8.0\n.target sm_80\n.address_size 64\n.entry k() .reqntid 48\n{\n"
      ".reg .b32 %r;\nactivemask.b32 %r;\nret;\n}\n",
      warp_target(), ".reqntid 48");
  expect_refused(kernel_with(".reg .b32 %r<4>; .reg .b64 %rd<2>;",
                             "ld.param.u64 %rd1, [p];\n"
                             "wgmma.fence.sync.aligned;"),
                 warp_target(), "wgmma (sm_90's warpgroup matrix instructions) does not translate");
  expect_refused(kernel_with(".reg .b32 %r<4>; .reg .f64 %fd<9>;",
                             "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1, %fd2}, "
                             "{%fd3}, {%fd4}, {%fd5, %fd6};"),
                 warp_target(), "f64 mma does not translate");
  expect_refused(kernel_with(".reg .b32 %r<9>; .reg .f32 %f<9>;",
                             "mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, "
                             "%f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};"),
                 warp_target(), "this form of mma does not translate");
}

// mma.sync in each family of forms, ldmatrix, stmatrix (a guarded one too) and movmatrix
// translate to valid SPIR-V in both warp forms (their results against the CPU PTX device:
// mma_test.cpp, triton_test.cpp, and the pack's tensor-core matmuls in hal-cts).
TEST(PtxToSpirv, MmaAndLdmatrixTranslateToValidSpirv) {
  const std::string body =
      "ld.param.u64 %rd1, [p];\nmov.u32 %r1, s;\n"
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r2, %r3, %r4, %r5}, [%r1];\n"
      "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r6, %r7}, [%r1+256];\n"
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, "
      "{%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f1, %f2, %f3, %f4};\n"
      "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, "
      "{%r2, %r3}, {%r6}, {%f1, %f2, %f3, %f4};\n"
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r10, %r11}, {%r2, %r3, %r4, %r5}, "
      "{%r6, %r7}, {%r10, %r11};\n"
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, "
      "{%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f1, %f2, %f3, %f4};\n"
      "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, "
      "{%r2, %r3}, {%r6}, {%f1, %f2, %f3, %f4};\n"
      "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32 {%r12, %r13, %r14, %r15}, "
      "{%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r12, %r13, %r14, %r15};\n"
      "mma.sync.aligned.m8n8k16.row.col.s32.u8.s8.s32 {%r12, %r13}, {%r2}, {%r6}, {%r12, %r13};\n"
      "cvt.rn.f16x2.f32 %r8, %f1, %f2;\ncvt.rn.bf16x2.f32 %r9, %f3, %f4;\n"
      "movmatrix.sync.aligned.m8n8.trans.b16 %r8, %r8;\n"
      "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r1], {%r12, %r13, %r14, %r15};\n"
      "setp.ne.u32 %p1, %r8, 0;\n"
      "@%p1 stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r1+128], {%r10, %r11};\n"
      "st.global.v2.u32 [%rd1], {%r8, %r9};";
  const std::string ptx = kernel_with(
      ".reg .b32 %r<16>; .reg .f32 %f<5>; .reg .b64 %rd<2>; .reg .pred %p<2>;"
      " .shared .align 16 .b8 s[512];",
      body);
  expect_valid_in_both_warp_forms(ptx);
}

// wmma translates to valid SPIR-V in both warp forms, for each multiplicand type, a guarded
// store included (its results against the CPU PTX device: wmma_test.cpp); f64 wmma and the
// sub-byte types are refused by name, and a malformed one is reported as such.
TEST(PtxToSpirv, WmmaTranslatesToValidSpirv) {
  const std::string body =
      "ld.param.u64 %rd1, [p];\nmov.u32 %r20, s;\n"
      "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, "
      "%r7}, [%rd1], 24;\n"
      "wmma.load.b.sync.aligned.col.m32n8k16.shared.f16 {%r8, %r9, %r10, %r11, %r12, %r13, %r14, "
      "%r15}, [%r20];\n"
      "wmma.load.c.sync.aligned.col.m16n16k16.global.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, "
      "%f7}, [%rd1], 16;\n"
      "wmma.mma.sync.aligned.row.col.m16n16k16.f16.f32 {%r16, %r17, %r18, %r19}, {%r0, %r1, %r2, "
      "%r3, %r4, %r5, %r6, %r7}, {%r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15}, {%f0, %f1, %f2, "
      "%f3, %f4, %f5, %f6, %f7};\n"
      "wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3, %f4, %f5, "
      "%f6, %f7}, {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%f0, %f1, %f2, %f3, %f4, %f5, %f6, "
      "%f7};\n"
      "wmma.mma.sync.aligned.col.row.m8n32k16.s32.s8.u8.s32.satfinite {%r0, %r1, %r2, %r3, %r4, "
      "%r5, %r6, %r7}, {%r8}, {%r9, %r10, %r11, %r12}, {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7};\n"
      "wmma.mma.sync.aligned.row.col.m32n8k16.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3, %f4, %f5, "
      "%f6, %f7}, {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, {%r8, %r9}, {%f0, %f1, %f2, %f3, %f4, "
      "%f5, %f6, %f7};\n"
      "setp.ne.u32 %p1, %r0, 0;\n"
      "@%p1 wmma.store.d.sync.aligned.row.m16n16k16.shared.f16 [%r20], {%r16, %r17, %r18, "
      "%r19};";
  const std::string ptx = kernel_with(
      ".reg .b32 %r<24>; .reg .f32 %f<8>; .reg .b64 %rd<2>; .reg .pred %p<2>;"
      " .shared .align 16 .b8 s[1024];",
      body);
  expect_valid_in_both_warp_forms(ptx);
  expect_refused(
      kernel_with(".reg .f64 %fd<9>;",
                  "wmma.mma.sync.aligned.row.col.m8n8k4.rn.f64.f64.f64.f64 {%fd1, %fd2}, "
                  "{%fd3}, {%fd4}, {%fd5, %fd6};"),
      warp_target(), "f64 wmma does not translate");
  expect_refused(kernel_with(".reg .b32 %r<9>; .reg .b64 %rd<2>;",
                             "ld.param.u64 %rd1, [p];\n"
                             "wmma.load.a.sync.aligned.row.m8n8k32.global.s4 {%r1}, [%rd1];"),
                 warp_target(), "modifier");
  expect_refused(
      kernel_with(".reg .b32 %r<9>; .reg .b64 %rd<2>;",
                  "ld.param.u64 %rd1, [p];\n"
                  "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2}, [%rd1];"),
      warp_target(), "wrong number of registers", Failure::Kind::kInvalid);
}

TEST(PtxToSpirv, EveryWarpInstructionTranslatesToValidSpirv) {
  const std::string body =
      "mov.u32 %r1, %laneid;\nmov.u32 %r2, %warpid;\nmov.u32 %r3, %nwarpid;\n"
      "mov.u32 %r4, %lanemask_eq;\nmov.u32 %r4, %lanemask_le;\nmov.u32 %r4, %lanemask_lt;\n"
      "mov.u32 %r4, %lanemask_ge;\nmov.u32 %r4, %lanemask_gt;\nmov.u32 %r5, %tid.y;\n"
      "shfl.sync.up.b32 %r1|%p1, %r2, 1, 0, -1;\nshfl.sync.down.b32 %r1, %r2, %r3, 31, %r4;\n"
      "shfl.sync.bfly.b32 %r1, %r2, 4, 0x101f, -1;\nshfl.sync.idx.b32 %r1|%p2, %r2, %r3, %r5, -1;\n"
      "shfl.down.b32 %r1, %r2, 1, 31;\nvote.sync.all.pred %p1, %p2, -1;\n"
      "vote.sync.any.pred %p1, !%p2, %r4;\nvote.sync.uni.pred %p1, %p2, -1;\n"
      "vote.sync.ballot.b32 %r1, %p2, %r4;\nvote.ballot.b32 %r1, %p2;\n"
      "match.any.sync.b32 %r1, %r2, -1;\nmatch.all.sync.b32 %r1|%p1, %r2, %r4;\n"
      "match.any.sync.b64 %r1, %rd1, -1;\nredux.sync.add.u32 %r1, %r2, -1;\n"
      "redux.sync.min.s32 %r1, %r2, %r4;\nredux.sync.max.u32 %r1, %r2, -1;\n"
      "redux.sync.and.b32 %r1, %r2, -1;\nredux.sync.or.b32 %r1, %r2, -1;\n"
      "redux.sync.xor.b32 %r1, %r2, -1;\nactivemask.b32 %r1;\nelect.sync %r1|%p1, -1;\n"
      "elect.sync %p1, %r4;\nbar.warp.sync -1;\n@%p1 shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;\n"
      "@!%p2 activemask.b32 %r2;";
  const Outcome o = translate_text(
      kernel_with(".reg .b32 %r<6>; .reg .b64 %rd<2>; .reg .pred %p<3>;", body), warp_target());
  ASSERT_TRUE(o.translated) << o.failure.message;
  EXPECT_EQ(validate(o.translation.words), "");
  ASSERT_EQ(o.translation.kernels.size(), 1u);
  EXPECT_EQ(o.translation.kernels[0].warp_size, 32u);
  // A kernel without warp-level PTX does not ask for warps.
  const Outcome plain =
      translate_text(kernel_with(".reg .b32 %r;", "mov.u32 %r, %tid.x;"), warp_target());
  ASSERT_TRUE(plain.translated) << plain.failure.message;
  EXPECT_EQ(plain.translation.kernels[0].warp_size, 0u);
}

// With 32-lane warps, the tree's PTX (nvcc's, Triton's, the pack's) translates to valid SPIR-V
// but for the matrix instructions and the translator's other gaps, each refusal naming it.
TEST(PtxToSpirv, EveryPtxInTheTreeTranslatesWithWarps) {
  size_t warp_kernels = 0;
  for (const fs::path& file : tree_ptx_files()) {
    SCOPED_TRACE(file.string());
    const Outcome o = translate_text(read_file(file), warp_target());
    ASSERT_TRUE(o.parsed) << o.failure.message;
    if (!o.translated) {
      EXPECT_EQ(o.failure.kind, Failure::Kind::kNotSupported) << o.failure.message;
      continue;
    }
    EXPECT_EQ(validate(o.translation.words), "");
    for (const auto& kernel : o.translation.kernels) warp_kernels += kernel.warp_size != 0;
    for (const auto& refused : o.translation.refused) {
      EXPECT_EQ(refused.reason.find("32-lane warps"), std::string::npos) << refused.reason;
    }
  }
  // nvcc's feature kernels and Triton's softmax and reductions at least.
  EXPECT_GE(warp_kernels, 6u);
}

TEST(PtxToSpirv, OtherRefusals) {
  expect_refused(".version 8.0\n.target sm_80\n.address_size 32\n.entry k() { ret; }\n",
                 full_target(), "32-bit");
  expect_refused(kernel_with("", "trap;"), full_target(), "trap");
  expect_refused(kernel_with(".reg .f32 %f<3>;", "div.rz.f32 %f1, %f2, %f2;"), full_target(),
                 "rounding modes other than to-nearest");
  // A generic address that may be shared or global at run time.
  expect_refused(kernel_with(".shared .b32 s[4]; .reg .b64 %rd<4>; .reg .pred %p; .reg .b32 %r1;",
                             "ld.param.u64 %rd1, [p];\nsetp.eq.u64 %p, %rd1, 0;\n"
                             "cvta.shared.u64 %rd2, s;\nselp.b64 %rd3, %rd2, %rd1, %p;\n"
                             "ld.u32 %r1, [%rd3];"),
                 full_target(), "more than one state space");
  // Irreducible control flow: a loop entered at two places.
  expect_refused(
      kernel_with(".reg .pred %p; .reg .b32 %r<2>;",
                  "setp.eq.u32 %p, %r1, 0;\n@%p bra B;\nA:\nadd.u32 %r1, %r1, 1;\n"
                  "bra B;\nB:\nadd.u32 %r1, %r1, 2;\nsetp.lt.u32 %p, %r1, 9;\n@%p bra A;"),
      full_target(), "irreducible control flow");
}

TEST(PtxToSpirv, DirectedRoundingNeedsFloat64AndIsOtherwiseTranslated) {
  const std::string ptx = kernel_with(".reg .f32 %f<4>;",
                                      "fma.rm.f32 %f1, %f2, %f3, %f2;\n"
                                      "add.rz.f32 %f1, %f2, %f3;\n"
                                      "mul.rp.f32 %f1, %f2, %f3;");
  const Outcome o = translate_text(ptx);
  ASSERT_TRUE(o.translated) << o.failure.message;
  EXPECT_EQ(validate(o.translation.words), "");
  Target no_f64 = full_target();
  no_f64.float64 = false;
  expect_refused(ptx, no_f64, "shaderFloat64");
}

}  // namespace
