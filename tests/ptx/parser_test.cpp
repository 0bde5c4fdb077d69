// Tests of the PTX parser's IR (src/ptx/ir.h) on hand-written PTX: the header, module and
// function-scope variables with their initializers, signatures and performance directives,
// registers, scopes, labels, instructions with their modifiers, and every operand form,
// including the forms Triton and inline assembly write.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>

#include "ir_check.h"
#include "ptx/ir.h"

namespace {

namespace ir = hal::ptx::ir;

const std::string kHeader = ".version 8.3\n.target sm_90\n.address_size 64\n";

ir::Module parse_ok(std::string_view text, bool bodies = true) {
  ir::Module module;
  ir::ParseError error;
  ir::ParseOptions options;
  options.bodies = bodies;
  EXPECT_TRUE(ir::parse(text.data(), text.size(), options, &module, &error))
      << "line " << error.line << ": " << error.message;
  EXPECT_EQ(hal_ptx_test::check_module(module), "");
  return module;
}

// A module holding one entry "k" whose body is |body|, after the module-scope |globals|.
ir::Module parse_body(std::string_view body, std::string_view globals = "") {
  return parse_ok(kHeader + std::string(globals) + "\n.visible .entry k(.param .u64 k_p)\n{\n" +
                  std::string(body) + "\n}\n");
}

const ir::Function& only_function(const ir::Module& module) {
  static const ir::Function kEmpty;
  EXPECT_EQ(module.functions.size(), 1u);
  return module.functions.empty() ? kEmpty : module.functions.back();
}

// The instruction at |index| of the last function.
const ir::Instruction& instruction(const ir::Module& module, size_t index) {
  static const ir::Instruction kEmpty;
  if (module.functions.empty() || index >= module.functions.back().code.size()) {
    ADD_FAILURE() << "no instruction " << index;
    return kEmpty;
  }
  return module.functions.back().code[index];
}

std::string register_name(const ir::Module& module, const ir::Operand& operand) {
  EXPECT_EQ(operand.kind, ir::OperandKind::kRegister);
  const ir::Function& function = module.functions.back();
  return operand.reg < function.registers.size() ? function.registers[operand.reg].name : "?";
}

uint64_t double_bits(double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// ===========================================================================================
// Header
// ===========================================================================================

TEST(PtxParser, ReadsTheHeader) {
  ir::Module module = parse_ok(R"(
// comment
.version 8.4
.target sm_90a, debug
.address_size 64
.file 1 "/some/path { }.cu", 1700000000, 1234
.pragma "nounroll";
.section .debug_info
{
.b32 12
.b8 1, 2, 3
}
)");
  EXPECT_EQ(module.version_major, 8u);
  EXPECT_EQ(module.version_minor, 4u);
  EXPECT_EQ(module.target, "sm_90a");
  EXPECT_EQ(module.target_sm, 90u);
  EXPECT_EQ(module.target_suffix, 'a');
  EXPECT_EQ(module.address_size, 64u);

  module = parse_ok(".version 8.8\n.target sm_100f\n");
  EXPECT_EQ(module.target_sm, 100u);
  EXPECT_EQ(module.target_suffix, 'f');
  EXPECT_EQ(module.address_size, 32u);  // PTX's default
  module = parse_ok(".version 7.0\n.target sm_70, texmode_independent\n");
  EXPECT_EQ(module.target_suffix, 0);
}

// ===========================================================================================
// Module variables and initializers
// ===========================================================================================

TEST(PtxParser, ReadsModuleVariables) {
  const ir::Module module = parse_ok(kHeader + R"(
.global .align 4 .b8 table[16] = {1, 2, 3, 4};
.visible .const .align 8 .u32 a, b = 7, c[2][3];
.extern .shared .align 16 .b8 smem[];
.weak .global .v4 .f32 v;
.common .global .u64 counter;
.shared .b8 tile[4][8][2];
.global .attribute(.managed) .s32 managed;
)");
  ASSERT_EQ(module.variables.size(), 9u);
  const ir::Variable& table = module.variables[0];
  EXPECT_EQ(table.name, "table");
  EXPECT_EQ(table.space, ir::Space::kGlobal);
  EXPECT_EQ(table.type, ir::Type::kB8);
  EXPECT_EQ(table.align, 4u);
  EXPECT_EQ(table.count, 16u);
  EXPECT_EQ(table.size(), 16u);
  EXPECT_EQ(table.init, (std::vector<uint8_t>{1, 2, 3, 4}));  // the rest are zeros

  EXPECT_EQ(module.variables[1].name, "a");
  EXPECT_EQ(module.variables[1].linkage, ir::Linkage::kVisible);
  EXPECT_EQ(module.variables[1].space, ir::Space::kConst);
  EXPECT_TRUE(module.variables[1].init.empty());
  EXPECT_EQ(module.variables[2].name, "b");
  EXPECT_EQ(module.variables[2].init, (std::vector<uint8_t>{7, 0, 0, 0}));
  EXPECT_EQ(module.variables[3].name, "c");
  EXPECT_EQ(module.variables[3].count, 6u);
  EXPECT_EQ(module.variables[3].align, 8u);

  const ir::Variable& smem = module.variables[4];
  EXPECT_EQ(smem.linkage, ir::Linkage::kExtern);
  EXPECT_EQ(smem.space, ir::Space::kShared);
  EXPECT_TRUE(smem.unsized);
  EXPECT_EQ(smem.count, 0u);
  EXPECT_EQ(smem.size(), 0u);
  EXPECT_EQ(smem.alignment(), 16u);

  const ir::Variable& v = module.variables[5];
  EXPECT_EQ(v.linkage, ir::Linkage::kWeak);
  EXPECT_EQ(v.vector, 4u);
  EXPECT_EQ(v.size(), 16u);
  EXPECT_EQ(v.alignment(), 16u);
  EXPECT_EQ(module.variables[6].linkage, ir::Linkage::kCommon);
  EXPECT_EQ(module.variables[7].count, 64u);
  EXPECT_EQ(module.variables[8].type, ir::Type::kS32);
}

TEST(PtxParser, EncodesInitializers) {
  const ir::Module module = parse_ok(kHeader + R"(
.global .s32 neg = -2;
.global .f32 pi = 0f40490FDB;
.global .f32 half = 0.5;
.global .f64 d = 1.5;
.global .f64 from_single = 0f3F800000;
.global .f32 from_double = -0d3FF0000000000000;
.global .u32 grid[2][3] = {{1, 2, 3}, {4, 5}};
.global .v2 .u32 pairs[2] = {{1, 2}, {3, 4}};
.global .u32 unsized[] = {1, 2, 3};
.global .u8 rows[][2] = {{1, 2}, {3}};
.global .b64 wide = 0xFFFFFFFFFFFFFFFF;
.global .u8 byte = 0x1FF;
.global .b8 t[4] = {1, 2, 3, 4}, u[2] = {5, 6};
.global .u32 none[2] = {};
)");
  auto init = [&](size_t i) { return module.variables.at(i).init; };
  auto bytes_of = [](uint64_t bits, size_t size) {
    std::vector<uint8_t> out(size);
    std::memcpy(out.data(), &bits, size);
    return out;
  };
  EXPECT_EQ(init(0), (std::vector<uint8_t>{0xFE, 0xFF, 0xFF, 0xFF}));
  EXPECT_EQ(init(1), (std::vector<uint8_t>{0xDB, 0x0F, 0x49, 0x40}));
  EXPECT_EQ(init(2), (std::vector<uint8_t>{0, 0, 0, 0x3F}));
  EXPECT_EQ(init(3), bytes_of(double_bits(1.5), 8));
  EXPECT_EQ(init(4), bytes_of(double_bits(1.0), 8));
  EXPECT_EQ(init(5), (std::vector<uint8_t>{0, 0, 0x80, 0xBF}));
  EXPECT_EQ(init(6), (std::vector<uint8_t>{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0,  //
                                           4, 0, 0, 0, 5, 0, 0, 0}));
  EXPECT_EQ(init(7), (std::vector<uint8_t>{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}));
  const ir::Variable& unsized = module.variables[8];
  EXPECT_FALSE(unsized.unsized);
  EXPECT_EQ(unsized.count, 3u);
  EXPECT_EQ(unsized.init.size(), 12u);
  const ir::Variable& rows = module.variables[9];
  EXPECT_EQ(rows.count, 4u);
  EXPECT_EQ(rows.init, (std::vector<uint8_t>{1, 2, 3}));  // the rest are zeros
  EXPECT_EQ(init(10), std::vector<uint8_t>(8, 0xFF));
  EXPECT_EQ(init(11), (std::vector<uint8_t>{0xFF}));  // truncated to the element
  EXPECT_EQ(init(12), (std::vector<uint8_t>{1, 2, 3, 4}));
  EXPECT_EQ(init(13), (std::vector<uint8_t>{5, 6}));
  EXPECT_TRUE(init(14).empty());
}

TEST(PtxParser, RecordsAddressesInInitializers) {
  const ir::Module module = parse_ok(kHeader + R"(
.global .align 4 .b8 table[16];
.func helper();
.global .u64 p = generic(table)+8;
.global .u64 ptrs[3] = {table, table+4, generic(table)+3};
.global .u8 bytes[3] = {0xFF(generic(table)), 0xFF00(table+1), 0xFF00(0x1234)};
.global .u64 functions[1] = {helper};
.func helper()
{
  ret;
}
)");
  ASSERT_EQ(module.variables.size(), 5u);
  const ir::Variable& p = module.variables[1];
  EXPECT_EQ(p.init, std::vector<uint8_t>(8, 0));
  ASSERT_EQ(p.relocations.size(), 1u);
  EXPECT_EQ(p.relocations[0].offset, 0u);
  EXPECT_EQ(p.relocations[0].symbol.kind, ir::SymbolKind::kModuleVariable);
  EXPECT_EQ(p.relocations[0].symbol.index, 0u);
  EXPECT_EQ(p.relocations[0].addend, 8);
  EXPECT_TRUE(p.relocations[0].generic);
  EXPECT_EQ(p.relocations[0].mask, 0u);
  EXPECT_EQ(p.relocations[0].size, 8u);

  const ir::Variable& ptrs = module.variables[2];
  ASSERT_EQ(ptrs.relocations.size(), 3u);
  EXPECT_EQ(ptrs.init.size(), 24u);
  EXPECT_EQ(ptrs.relocations[1].offset, 8u);
  EXPECT_EQ(ptrs.relocations[1].addend, 4);
  EXPECT_FALSE(ptrs.relocations[1].generic);
  EXPECT_EQ(ptrs.relocations[2].offset, 16u);
  EXPECT_EQ(ptrs.relocations[2].addend, 3);
  EXPECT_TRUE(ptrs.relocations[2].generic);

  const ir::Variable& bytes = module.variables[3];
  ASSERT_EQ(bytes.relocations.size(), 2u);
  EXPECT_EQ(bytes.relocations[0].mask, 0xFFu);
  EXPECT_EQ(bytes.relocations[0].size, 1u);
  EXPECT_TRUE(bytes.relocations[0].generic);
  EXPECT_EQ(bytes.relocations[1].offset, 1u);
  EXPECT_EQ(bytes.relocations[1].mask, 0xFF00u);
  EXPECT_EQ(bytes.relocations[1].addend, 1);
  EXPECT_EQ(bytes.init, (std::vector<uint8_t>{0, 0, 0x12}));  // a masked constant is a value

  const ir::Variable& functions = module.variables[4];
  ASSERT_EQ(functions.relocations.size(), 1u);
  EXPECT_EQ(functions.relocations[0].symbol.kind, ir::SymbolKind::kFunction);
}

// ===========================================================================================
// Functions
// ===========================================================================================

TEST(PtxParser, ReadsSignaturesAndDirectives) {
  const ir::Module module = parse_ok(R"(.version 8.3
.target sm_90
.address_size 64
.extern .func (.param .b32 ret) vprintf(.param .b64 fmt, .param .b64 args);
.func .attribute(.unified(0x1234, 0x5678)) helper(.param .b32 x) .noreturn
{
  trap;
}
.func (.reg .b32 r) old_style(.reg .b32 a, .reg .b64 b)
{
  ret;
}
.visible .entry k(
    .param .u64 .ptr .global .align 16 k_dst,
    .param .u64 .ptr.shared.align 8 k_joined,
    .param .align 8 .b8 k_pair[16],
    .param .f32 k_scale
)
.reqntid 64, 2
.minnctapersm 2
.maxnreg 64
.explicitcluster
.reqnctapercluster 2, 1, 1
{
  ret;
}
.entry k2()
.maxntid 256
.maxclusterrank 8
{
  ret;
}
)");
  ASSERT_EQ(module.functions.size(), 5u);
  const ir::Function& vprintf = module.functions[0];
  EXPECT_EQ(vprintf.linkage, ir::Linkage::kExtern);
  EXPECT_FALSE(vprintf.has_body);
  EXPECT_FALSE(vprintf.is_entry);
  ASSERT_EQ(vprintf.returns.size(), 1u);
  EXPECT_EQ(vprintf.returns[0].name, "ret");
  ASSERT_EQ(vprintf.params.size(), 2u);
  EXPECT_EQ(vprintf.params[1].type, ir::Type::kB64);

  const ir::Function& helper = module.functions[1];
  EXPECT_TRUE(helper.noreturn);
  EXPECT_TRUE(helper.has_body);
  EXPECT_EQ(helper.code.size(), 1u);

  const ir::Function& old_style = module.functions[2];
  ASSERT_EQ(old_style.params.size(), 2u);
  EXPECT_EQ(old_style.params[0].space, ir::Space::kReg);
  EXPECT_EQ(old_style.params[1].type, ir::Type::kB64);
  EXPECT_EQ(old_style.returns[0].space, ir::Space::kReg);

  const ir::Function& k = module.functions[3];
  EXPECT_TRUE(k.is_entry);
  EXPECT_EQ(k.linkage, ir::Linkage::kVisible);
  ASSERT_EQ(k.params.size(), 4u);
  EXPECT_TRUE(k.params[0].is_ptr);
  EXPECT_EQ(k.params[0].ptr_space, ir::Space::kGlobal);
  EXPECT_EQ(k.params[0].ptr_align, 16u);
  EXPECT_EQ(k.params[0].align, 0u);  // .align after .ptr is the pointee's
  EXPECT_EQ(k.params[0].space, ir::Space::kParam);
  EXPECT_TRUE(k.params[1].is_ptr);
  EXPECT_EQ(k.params[1].ptr_space, ir::Space::kShared);
  EXPECT_EQ(k.params[1].ptr_align, 8u);
  EXPECT_EQ(k.params[2].align, 8u);
  EXPECT_EQ(k.params[2].count, 16u);
  EXPECT_EQ(k.params[2].size(), 16u);
  EXPECT_EQ(k.params[3].type, ir::Type::kF32);
  EXPECT_EQ(k.reqntid[0], 64u);
  EXPECT_EQ(k.reqntid[1], 2u);
  EXPECT_EQ(k.reqntid[2], 1u);  // missing dimensions are 1
  EXPECT_EQ(k.maxntid[0], 0u);  // absent
  EXPECT_EQ(k.minnctapersm, 2u);
  EXPECT_EQ(k.maxnreg, 64u);

  const ir::Function& k2 = module.functions[4];
  EXPECT_TRUE(k2.params.empty());
  EXPECT_EQ(k2.maxntid[0], 256u);
  EXPECT_EQ(k2.maxntid[1], 1u);
  EXPECT_EQ(k2.maxntid[2], 1u);
}

// .maxnctapersm left PTX with version 2.1; old text still parses, without effect.
TEST(PtxParser, AcceptsTheOldMaxnctapersm) {
  const ir::Module module =
      parse_ok(".version 2.0\n.target sm_20\n.entry k() .maxnctapersm 4 { ret; }\n");
  EXPECT_EQ(only_function(module).code.size(), 1u);
}

TEST(PtxParser, ADefinitionTakesItsDeclarationsPlace) {
  const ir::Module module = parse_ok(kHeader + R"(
.func (.param .b32 r) twice(.param .b32 x);
.entry k()
{
  .param .b32 a;
  .param .b32 b;
  call.uni (b), twice, (a);
  ret;
}
.func (.param .b32 r) twice(.param .b32 y)
{
  .reg .b32 %r<2>;
  ld.param.b32 %r0, [y];
  add.s32 %r1, %r0, %r0;
  st.param.b32 [r], %r1;
  ret;
}
)");
  ASSERT_EQ(module.functions.size(), 2u);
  const ir::Function& twice = module.functions[0];
  EXPECT_TRUE(twice.has_body);
  EXPECT_EQ(twice.params[0].name, "y");
  EXPECT_EQ(twice.code.size(), 4u);
  const ir::Instruction& call = module.functions[1].code[0];
  ASSERT_EQ(call.operands.size(), 3u);
  EXPECT_EQ(call.operands[1].symbol.kind, ir::SymbolKind::kFunction);
  EXPECT_EQ(call.operands[1].symbol.index, 0u);
  // In the definition, the parameter and the return value are symbols.
  EXPECT_EQ(twice.code[0].operands[1].symbol.kind, ir::SymbolKind::kParam);
  EXPECT_EQ(twice.code[2].operands[0].symbol.kind, ir::SymbolKind::kReturn);
}

TEST(PtxParser, ResolvesAliasesToTheirFunction) {
  const ir::Module module = parse_ok(kHeader + R"(
.visible .func callee()
{
  ret;
}
.func alias_of();
.alias alias_of, callee;
.visible .entry k()
{
  call.uni alias_of;
  ret;
}
)");
  ASSERT_EQ(module.functions.size(), 3u);
  EXPECT_EQ(module.functions[0].linkage, ir::Linkage::kVisible);
  const ir::Operand& target = module.functions[2].code[0].operands[0];
  EXPECT_EQ(target.symbol.kind, ir::SymbolKind::kFunction);
  EXPECT_EQ(target.symbol.index, 0u);
}

TEST(PtxParser, SkipsBodiesWhenAskedTo) {
  const std::string text = kHeader + R"(
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<2>;
  frobnicate.wat %r1, [[(;
}
)";
  const ir::Module module = parse_ok(text, false);
  ASSERT_EQ(module.functions.size(), 1u);
  EXPECT_TRUE(module.functions[0].has_body);
  EXPECT_TRUE(module.functions[0].code.empty());
  EXPECT_TRUE(module.functions[0].registers.empty());
}

// ===========================================================================================
// Registers, scopes and labels
// ===========================================================================================

TEST(PtxParser, DeclaresRegisters) {
  const ir::Module module = parse_body(R"(
  .reg .b32 %r<10>;
  .reg .pred %p<3>;
  .reg .v4 .f32 %v;
  .reg .b64 %a, %b<2>, plain;
  mov.b32 %r9, %r09;
)");
  const ir::Function& k = only_function(module);
  ASSERT_EQ(k.registers.size(), 10u + 3u + 1u + 4u);
  EXPECT_EQ(k.registers[0].name, "%r0");
  EXPECT_EQ(k.registers[9].name, "%r9");
  EXPECT_EQ(k.registers[9].type, ir::Type::kB32);
  EXPECT_EQ(k.registers[10].name, "%p0");
  EXPECT_EQ(k.registers[10].type, ir::Type::kPred);
  EXPECT_EQ(k.registers[13].name, "%v");
  EXPECT_EQ(k.registers[13].vector, 4u);
  EXPECT_EQ(k.registers[14].name, "%a");
  EXPECT_EQ(k.registers[16].name, "%b1");
  EXPECT_EQ(k.registers[17].name, "plain");
  const ir::Instruction& mov = instruction(module, 0);
  EXPECT_EQ(register_name(module, mov.operands[0]), "%r9");
  EXPECT_EQ(register_name(module, mov.operands[1]), "%r9");  // leading zeros, as ptxas reads them
}

TEST(PtxParser, ScopesShadowAndLabelsResolveLater) {
  const ir::Module module = parse_body(R"(
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  bra.uni DONE;
LOOP:
  {
    .reg .pred %p<2>;
    .reg .b32 inner;
    setp.ne.s32 %p1, %r1, 0;
    @%p1 bra LOOP;
    @!%p1 bra DONE;
    mov.b32 inner, %r3;
  }
  {
    .reg .b32 inner;
  INNER:
    bra INNER;
  }
  {
  INNER:
    bra INNER;
  }
  mov.b32 %r2, %r1;
DONE:
  ret;
)");
  const ir::Function& k = only_function(module);
  ASSERT_EQ(k.labels.size(), 4u);
  EXPECT_EQ(k.labels[0].name, "LOOP");
  EXPECT_EQ(k.labels[0].instruction, 1u);
  EXPECT_EQ(k.labels[3].name, "DONE");
  EXPECT_EQ(k.labels[3].instruction, 8u);
  EXPECT_EQ(k.code.size(), 9u);
  // A forward reference, resolved when the body closed.
  EXPECT_EQ(k.code[0].operands[0].kind, ir::OperandKind::kSymbol);
  EXPECT_EQ(k.code[0].operands[0].symbol.kind, ir::SymbolKind::kLabel);
  EXPECT_EQ(k.code[0].operands[0].symbol.index, 3u);
  // The inner %p1 is not the outer one.
  const ir::Instruction& setp = k.code[1];
  EXPECT_NE(setp.operands[0].reg, 1u);
  EXPECT_EQ(k.registers[setp.operands[0].reg].name, "%p1");
  EXPECT_EQ(register_name(module, setp.operands[1]), "%r1");
  const ir::Instruction& guarded = k.code[2];
  EXPECT_TRUE(guarded.guarded);
  EXPECT_FALSE(guarded.guard_negated);
  EXPECT_EQ(guarded.guard, setp.operands[0].reg);
  EXPECT_EQ(guarded.operands[0].symbol.index, 0u);  // LOOP
  EXPECT_TRUE(k.code[3].guard_negated);
  EXPECT_EQ(k.code[3].operands[0].symbol.index, 3u);  // DONE, from the inner block
  // Each inner block's INNER is its own.
  EXPECT_EQ(k.code[5].operands[0].symbol.index, 1u);
  EXPECT_EQ(k.code[6].operands[0].symbol.index, 2u);
}

// A directive written together with its type, as NVIDIA's cuda_fp16.hpp writes the
// declarations of its inline assembly ("{.reg.b16 hl, hu; ...}"), declares as if written apart.
TEST(PtxParser, ReadsDirectivesJoinedToTheirType) {
  const ir::Module module = parse_body(R"(
  .reg.b16 hl, hu;
  .reg.v2.f32 %v;
  .shared.align 8 .b8 tile[16];
  .local.u32 slot;
  mov.b16 hl, hu;
)");
  const ir::Function& k = only_function(module);
  ASSERT_EQ(k.registers.size(), 3u);
  EXPECT_EQ(k.registers[0].name, "hl");
  EXPECT_EQ(k.registers[0].type, ir::Type::kB16);
  EXPECT_EQ(k.registers[2].type, ir::Type::kF32);
  EXPECT_EQ(k.registers[2].vector, 2u);
  ASSERT_EQ(k.variables.size(), 2u);
  EXPECT_EQ(k.variables[0].space, ir::Space::kShared);
  EXPECT_EQ(k.variables[0].align, 8u);
  EXPECT_EQ(k.variables[0].count, 16u);
  EXPECT_EQ(k.variables[1].space, ir::Space::kLocal);
  EXPECT_EQ(k.variables[1].type, ir::Type::kU32);
}

TEST(PtxParser, DeclaresVariablesInBodies) {
  const ir::Module module = parse_body(R"(
  .local .align 8 .b8 depot[32];
  .shared .align 4 .f32 tile[16][17];
  .shared .b32 counter;
  .reg .b64 %rd<3>;
  {
    .param .b64 param0;
    .param .align 16 .b8 param1[32];
    st.param.b64 [param0+0], %rd1;
  }
  mov.u64 %rd1, depot;
  mov.u64 %rd2, tile+8;
  ld.shared.u32 %rd0, [counter];
)");
  const ir::Function& k = only_function(module);
  ASSERT_EQ(k.variables.size(), 5u);
  EXPECT_EQ(k.variables[0].space, ir::Space::kLocal);
  EXPECT_EQ(k.variables[0].count, 32u);
  EXPECT_EQ(k.variables[1].space, ir::Space::kShared);
  EXPECT_EQ(k.variables[1].count, 16u * 17u);
  EXPECT_EQ(k.variables[2].space, ir::Space::kShared);
  EXPECT_EQ(k.variables[3].space, ir::Space::kParam);
  EXPECT_EQ(k.variables[4].align, 16u);
  const ir::Operand& store = k.code[0].operands[0];
  EXPECT_EQ(store.kind, ir::OperandKind::kAddress);
  EXPECT_EQ(store.base, ir::AddressBase::kSymbol);
  EXPECT_EQ(store.symbol.kind, ir::SymbolKind::kFunctionVariable);
  EXPECT_EQ(store.symbol.index, 3u);
  EXPECT_EQ(k.code[1].operands[1].symbol.kind, ir::SymbolKind::kFunctionVariable);
  EXPECT_EQ(k.code[1].operands[1].symbol.index, 0u);
  EXPECT_EQ(k.code[2].operands[1].integer, 8);
  EXPECT_EQ(k.code[3].operands[1].symbol.index, 2u);
}

// ===========================================================================================
// Instructions
// ===========================================================================================

TEST(PtxParser, SortsInstructionModifiers) {
  const ir::Module module = parse_body(R"(
  .reg .pred %p<2>;
  .reg .b32 %r<9>;
  .reg .f32 %f<9>;
  .reg .b64 %rd<3>;
  ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];
  cvt.rn.f32.s32 %f1, %r1;
  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f5,%f6,%f7,%f8};
  ld.global.L1::evict_last.L2::cache_hint.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1], %rd2;
  ld.shared::cta.u32 %r1, [%r2];
  ld.param::entry.u32 %r1, [k_p];
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rd1], %r2;
  ex2.approx.ftz.f32 %f1, %f2;
  setp.lt.u32 %p1, %r2, %r3;
)");
  const ir::Instruction& ld = instruction(module, 0);
  EXPECT_EQ(ld.opcode, ir::Opcode::kLd);
  EXPECT_EQ(ld.text, "ld.global.nc.v4.f32");
  EXPECT_TRUE(ld.mods.has(ir::Mod::kGlobal));
  EXPECT_TRUE(ld.mods.has(ir::Mod::kNc));
  EXPECT_FALSE(ld.mods.has(ir::Mod::kShared));
  EXPECT_EQ(ld.vector, 4u);
  EXPECT_EQ(ld.types, (std::vector<ir::Type>{ir::Type::kF32}));
  EXPECT_TRUE(ld.unknown_mods.empty());

  const ir::Instruction& cvt = instruction(module, 1);
  EXPECT_EQ(cvt.types, (std::vector<ir::Type>{ir::Type::kF32, ir::Type::kS32}));
  EXPECT_TRUE(cvt.mods.has(ir::Mod::kRn));

  const ir::Instruction& ldmatrix = instruction(module, 2);
  EXPECT_EQ(ldmatrix.opcode, ir::Opcode::kLdmatrix);
  EXPECT_EQ(ldmatrix.shape_m, 8u);
  EXPECT_EQ(ldmatrix.shape_n, 8u);
  EXPECT_EQ(ldmatrix.shape_k, 0u);
  EXPECT_EQ(ldmatrix.fragments, 4u);
  EXPECT_TRUE(ldmatrix.mods.has(ir::Mod::kTrans));
  EXPECT_TRUE(ldmatrix.mods.has(ir::Mod::kShared));
  EXPECT_TRUE(ldmatrix.mods.has(ir::Mod::kSync));
  EXPECT_TRUE(ldmatrix.mods.has(ir::Mod::kAligned));

  const ir::Instruction& mma = instruction(module, 3);
  EXPECT_EQ(mma.shape_m, 16u);
  EXPECT_EQ(mma.shape_n, 8u);
  EXPECT_EQ(mma.shape_k, 16u);
  EXPECT_TRUE(mma.mods.has(ir::Mod::kRow));
  EXPECT_TRUE(mma.mods.has(ir::Mod::kCol));
  EXPECT_EQ(mma.types, (std::vector<ir::Type>{ir::Type::kF32, ir::Type::kF16, ir::Type::kF16,
                                              ir::Type::kF32}));
  ASSERT_EQ(mma.operands.size(), 4u);
  EXPECT_EQ(mma.operands[2].elements.size(), 2u);

  const ir::Instruction& hinted = instruction(module, 4);
  EXPECT_TRUE(hinted.mods.has(ir::Mod::kL1EvictLast));
  EXPECT_TRUE(hinted.mods.has(ir::Mod::kCacheHint));
  EXPECT_EQ(hinted.types, (std::vector<ir::Type>{ir::Type::kB32}));
  EXPECT_EQ(hinted.operands.size(), 3u);

  EXPECT_TRUE(instruction(module, 5).mods.has(ir::Mod::kShared));
  EXPECT_TRUE(instruction(module, 6).mods.has(ir::Mod::kParam));
  const ir::Instruction& wait = instruction(module, 7);
  EXPECT_EQ(wait.opcode, ir::Opcode::kMbarrier);
  EXPECT_EQ(wait.unknown_mods, (std::vector<std::string>{"try_wait", "parity"}));
  EXPECT_TRUE(wait.mods.has(ir::Mod::kShared));
  EXPECT_TRUE(instruction(module, 8).mods.has(ir::Mod::kFtz));
  EXPECT_TRUE(instruction(module, 9).mods.has(ir::Mod::kLt));
}

// ===========================================================================================
// Operands
// ===========================================================================================

TEST(PtxParser, ReadsImmediates) {
  const ir::Module module = parse_body(R"(
  .reg .b64 %rd<2>;
  .reg .f32 %f<2>;
  .reg .f64 %fd<2>;
  mov.b64 %rd1, -1;
  mov.b64 %rd1, 0x1F;
  mov.b64 %rd1, 017;
  mov.b64 %rd1, 0b101;
  mov.b64 %rd1, 7U;
  mov.b64 %rd1, 0xFFFFFFFFFFFFFFFF;
  mov.b64 %rd1, -9223372036854775808;
  mov.f32 %f1, 0f3F800000;
  mov.f32 %f1, -1.5;
  mov.f64 %fd1, 0d3FF0000000000000;
  mov.f64 %fd1, 1.5;
  mov.f64 %fd1, -1e-3;
)");
  const int64_t integers[] = {-1, 31, 15, 5, 7, -1, INT64_MIN};
  for (size_t i = 0; i < 7; ++i) {
    SCOPED_TRACE(i);
    const ir::Operand& operand = instruction(module, i).operands[1];
    EXPECT_EQ(operand.kind, ir::OperandKind::kInteger);
    EXPECT_EQ(operand.integer, integers[i]);
  }
  struct Float {
    bool is_double;
    uint64_t bits;
  };
  const Float floats[] = {{false, 0x3F800000},
                          {true, double_bits(-1.5)},
                          {true, 0x3FF0000000000000},
                          {true, double_bits(1.5)},
                          {true, double_bits(-1e-3)}};
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    const ir::Operand& operand = instruction(module, 7 + i).operands[1];
    EXPECT_EQ(operand.kind, ir::OperandKind::kFloat);
    EXPECT_EQ(operand.is_double, floats[i].is_double);
    EXPECT_EQ(operand.float_bits, floats[i].bits);
  }
}

// WARP_SZ is PTX's predefined constant, an immediate 32; a register of that name shadows it.
TEST(PtxParser, ReadsTheWarpSizeConstant) {
  const ir::Module module = parse_body(R"(
  .reg .b32 %r<2>;
  mov.u32 %r1, WARP_SZ;
  rem.u32 %r1, %r0, WARP_SZ;
  {
    .reg .b32 WARP_SZ;
    mov.u32 %r1, WARP_SZ;
  }
)");
  for (size_t i = 0; i < 2; ++i) {
    const ir::Operand& operand = instruction(module, i).operands.back();
    EXPECT_EQ(operand.kind, ir::OperandKind::kInteger) << i;
    EXPECT_EQ(operand.integer, 32) << i;
  }
  EXPECT_EQ(register_name(module, instruction(module, 2).operands[1]), "WARP_SZ");
}

TEST(PtxParser, ReadsSpecialRegisters) {
  const ir::Module module = parse_body(R"(
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r1, %ctaid.y;
  mov.u32 %r1, %ntid.z;
  mov.u32 %r1, %laneid;
  mov.u32 %r1, %lanemask_lt;
  mov.u64 %rd1, %clock64;
  mov.u32 %r1, %envreg3;
  mov.u32 %r1, %pm0;
  mov.u64 %rd1, %pm7_64;
  mov.u32 %r1, %cluster_ctaid.x;
  mov.u32 %r1, %dynamic_smem_size;
  mov.u32 %r1, %reserved_smem_offset_begin;
)");
  struct Expected {
    ir::Special special;
    uint32_t component;
  };
  const Expected expected[] = {
      {ir::Special::kTid, 0},
      {ir::Special::kCtaid, 1},
      {ir::Special::kNtid, 2},
      {ir::Special::kLaneid, 0},
      {ir::Special::kLanemaskLt, 0},
      {ir::Special::kClock64, 0},
      {ir::Special::kEnvreg, 3},
      {ir::Special::kPm, 0},
      {ir::Special::kPm64, 7},
      {ir::Special::kClusterCtaid, 0},
      {ir::Special::kDynamicSmemSize, 0},
      {ir::Special::kReserved, 0},
  };
  for (size_t i = 0; i < std::size(expected); ++i) {
    SCOPED_TRACE(i);
    const ir::Operand& operand = instruction(module, i).operands[1];
    EXPECT_EQ(operand.kind, ir::OperandKind::kSpecial);
    EXPECT_EQ(operand.special, expected[i].special);
    EXPECT_EQ(operand.component, expected[i].component);
  }
}

TEST(PtxParser, ReadsAddresses) {
  const ir::Module module = parse_body(R"(
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  .shared .b8 buffer[64];
  ld.global.u32 %r1, [%rd1];
  ld.global.u32 %r1, [%rd1+16];
  ld.global.u32 %r1, [%rd1+-16];
  ld.global.u32 %r1, [%rd1-16];  // ptxas wants "+-16"; accepted all the same
  ld.global.u32 %r1, [ %rd1 + 0 ];
  ld.shared.u32 %r1, [buffer];
  ld.shared.u32 %r1, [buffer+8];
  ld.global.u32 %r1, [0x100];
  ld.param.u64 %rd1, [k_p];
  ld.global.u32 %r1, [global_table+4];
  cp.async.bulk.tensor.2d.shared::cluster.global.tile [%r1], [%rd1, {%r0, %r1}];
)",
                                       ".global .u32 global_table[4];\n");
  struct Expected {
    ir::AddressBase base;
    int64_t offset;
  };
  const Expected expected[] = {
      {ir::AddressBase::kRegister, 0},   {ir::AddressBase::kRegister, 16},
      {ir::AddressBase::kRegister, -16}, {ir::AddressBase::kRegister, -16},
      {ir::AddressBase::kRegister, 0},   {ir::AddressBase::kSymbol, 0},
      {ir::AddressBase::kSymbol, 8},     {ir::AddressBase::kNone, 0x100},
      {ir::AddressBase::kSymbol, 0},     {ir::AddressBase::kSymbol, 4},
  };
  for (size_t i = 0; i < std::size(expected); ++i) {
    SCOPED_TRACE(i);
    const ir::Operand& operand = instruction(module, i).operands[1];
    EXPECT_EQ(operand.kind, ir::OperandKind::kAddress);
    EXPECT_EQ(operand.base, expected[i].base);
    EXPECT_EQ(operand.integer, expected[i].offset);
    EXPECT_TRUE(operand.elements.empty());
  }
  EXPECT_EQ(module.functions[0].registers[instruction(module, 0).operands[1].reg].name, "%rd1");
  EXPECT_EQ(instruction(module, 5).operands[1].symbol.kind, ir::SymbolKind::kFunctionVariable);
  EXPECT_EQ(instruction(module, 8).operands[1].symbol.kind, ir::SymbolKind::kParam);
  EXPECT_EQ(instruction(module, 9).operands[1].symbol.kind, ir::SymbolKind::kModuleVariable);
  const ir::Operand& tensor = instruction(module, 10).operands[1];
  EXPECT_EQ(tensor.base, ir::AddressBase::kRegister);
  ASSERT_EQ(tensor.elements.size(), 1u);
  EXPECT_EQ(tensor.elements[0].kind, ir::OperandKind::kVector);
  EXPECT_EQ(tensor.elements[0].elements.size(), 2u);
}

TEST(PtxParser, ReadsVectorsPairsAndNegations) {
  const ir::Module module = parse_body(R"(
  .reg .pred %p<3>;
  .reg .b32 %r<5>;
  .reg .b64 %rd<2>;
  ld.global.v4.b32 {%r1, %r2, _, %r3}, [%rd1];
  setp.lt.and.s32 %p1|%p2, %r1, %r2, !%p0;
  shfl.sync.bfly.b32 %r2|%p1, %r1, 16, 31, -1;
  mov.b64 %rd1, {%r1, %r2};
  st.global.v4.b32 [%rd1], {%r1, %r2, 0, 0};
)");
  const ir::Operand& vector = instruction(module, 0).operands[0];
  ASSERT_EQ(vector.kind, ir::OperandKind::kVector);
  ASSERT_EQ(vector.elements.size(), 4u);
  EXPECT_EQ(register_name(module, vector.elements[1]), "%r2");
  EXPECT_EQ(vector.elements[2].kind, ir::OperandKind::kSink);
  const ir::Operand& immediates = instruction(module, 4).operands[1];
  ASSERT_EQ(immediates.elements.size(), 4u);
  EXPECT_EQ(immediates.elements[3].kind, ir::OperandKind::kInteger);

  const ir::Instruction& setp = instruction(module, 1);
  EXPECT_TRUE(setp.operands[0].has_reg2);
  EXPECT_EQ(register_name(module, setp.operands[0]), "%p1");
  EXPECT_EQ(module.functions[0].registers[setp.operands[0].reg2].name, "%p2");
  EXPECT_TRUE(setp.operands[3].negate);
  EXPECT_EQ(register_name(module, setp.operands[3]), "%p0");
  EXPECT_TRUE(setp.mods.has(ir::Mod::kAnd));

  const ir::Instruction& shfl = instruction(module, 2);
  ASSERT_EQ(shfl.operands.size(), 5u);
  EXPECT_TRUE(shfl.operands[0].has_reg2);
  EXPECT_EQ(shfl.operands[4].integer, -1);
}

TEST(PtxParser, ReadsCallsPrototypesAndTargetLists) {
  const ir::Module module = parse_ok(kHeader + R"(
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);
.func callee(.param .b32 x) { ret; }
.visible .entry k(.param .u64 k_p)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  {
    .param .b64 param0;
    .param .b64 param1;
    .param .b32 retval0;
    st.param.b64 [param0], %rd1;
    call.uni (retval0), vprintf, (param0, param1);
    ld.param.b32 %r1, [retval0];
  }
  {
    .param .b32 param0;
    prototype_1: .callprototype _ (.param .b32 _);
    call %rd2, (param0), prototype_1;
    call.uni callee, (param0);
  }
  ts: .branchtargets L0, L1;
  ct: .calltargets callee;
  brx.idx %r1, ts;
L0:
  ret;
L1:
  ret;
}
)");
  ASSERT_EQ(module.functions.size(), 3u);
  const ir::Function& k = module.functions[2];
  const ir::Instruction& call = k.code[1];
  EXPECT_EQ(call.opcode, ir::Opcode::kCall);
  EXPECT_TRUE(call.mods.has(ir::Mod::kUni));
  ASSERT_EQ(call.operands.size(), 3u);
  EXPECT_EQ(call.operands[0].kind, ir::OperandKind::kList);
  ASSERT_EQ(call.operands[0].elements.size(), 1u);
  EXPECT_EQ(call.operands[0].elements[0].symbol.kind, ir::SymbolKind::kFunctionVariable);
  EXPECT_EQ(call.operands[1].kind, ir::OperandKind::kSymbol);
  EXPECT_EQ(call.operands[1].symbol.kind, ir::SymbolKind::kFunction);
  EXPECT_EQ(call.operands[1].symbol.index, 0u);
  EXPECT_EQ(call.operands[2].kind, ir::OperandKind::kList);
  EXPECT_EQ(call.operands[2].elements.size(), 2u);

  ASSERT_EQ(k.prototypes.size(), 1u);
  EXPECT_EQ(k.prototypes[0].name, "prototype_1");
  EXPECT_EQ(k.prototypes[0].params.size(), 1u);
  EXPECT_TRUE(k.prototypes[0].returns.empty());
  const ir::Instruction& indirect = k.code[3];
  ASSERT_EQ(indirect.operands.size(), 3u);
  EXPECT_EQ(indirect.operands[0].kind, ir::OperandKind::kRegister);
  EXPECT_EQ(indirect.operands[2].symbol.kind, ir::SymbolKind::kPrototype);
  EXPECT_EQ(k.code[4].operands[0].symbol.index, 1u);  // callee
  // A call with no arguments and no results.
  ASSERT_EQ(k.target_lists.size(), 2u);
  EXPECT_FALSE(k.target_lists[0].calls);
  ASSERT_EQ(k.target_lists[0].targets.size(), 2u);
  EXPECT_EQ(k.target_lists[0].targets[1].kind, ir::SymbolKind::kLabel);
  EXPECT_EQ(k.labels[k.target_lists[0].targets[1].index].name, "L1");
  EXPECT_TRUE(k.target_lists[1].calls);
  const ir::Instruction& brx = k.code[5];
  EXPECT_EQ(brx.operands[1].symbol.kind, ir::SymbolKind::kTargetList);
}

// ===========================================================================================
// Triton and inline assembly
// ===========================================================================================

TEST(PtxParser, ReadsTritonStylePtx) {
  const ir::Module module = parse_ok(R"(//
// Generated by LLVM NVPTX Back-End
//

.version 8.4
.target sm_90a
.address_size 64

.extern .shared .align 16 .b8 global_smem[];

.visible .entry add_kernel(
	.param .u64 .ptr .global .align 1 add_kernel_param_0,
	.param .u64 .ptr .global .align 1 add_kernel_param_1,
	.param .u32 add_kernel_param_2
)
.reqntid 128, 1, 1
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<20>;
	.reg .f32 	%f<12>;
	.reg .b64 	%rd<8>;
	.loc	1 10 0
$L__func_begin0:
	.loc	1 10 0

	ld.param.u64 	%rd4, [add_kernel_param_0];
	mov.u32 %r13, %tid.x;
	mov.b32 %r18, 0;
	// begin inline asm
	mov.u32 %r1, 0x0;
	mov.u32 %r2, 0x0;
	mov.u32 %r3, 0x0;
	mov.u32 %r4, 0x0;
	@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
	// end inline asm
	// begin inline asm
	{
	.reg .pred %p;
	setp.ne.u32 %p, %r13, 0;
	@%p st.global.b32 [ %rd2 + 0 ], { %r5 };
	}
	// end inline asm
	cp.async.cg.shared.global [ %r1 + 0 ], [ %rd2 + 0 ], 0x10, %r3;
	cp.async.commit_group;
	cp.async.wait_group 0;
	shfl.sync.bfly.b32 %r2, %r1, 16, 31, -1;
	createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0;
	ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 { %r6, %r7, %r8, %r9 }, [ %r10 + 0 ];
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f5,%f6,%f7,%f8};
	bar.sync 	0;
	ret;
$L__tmp0:
}
	.file	1 "kernels/add.py"
	.section	.debug_abbrev
	{
.b8 1
.b8 17
	}
)");
  const ir::Function& k = only_function(module);
  EXPECT_EQ(module.target_suffix, 'a');
  ASSERT_EQ(module.variables.size(), 1u);
  EXPECT_TRUE(module.variables[0].unsized);
  ASSERT_EQ(k.code.size(), 19u);
  const ir::Instruction& load = k.code[7];
  EXPECT_TRUE(load.guarded);
  EXPECT_EQ(load.vector, 4u);
  EXPECT_EQ(load.operands[0].elements.size(), 4u);
  EXPECT_EQ(load.operands[1].base, ir::AddressBase::kRegister);
  EXPECT_EQ(load.operands[1].integer, 0);
  const ir::Instruction& store = k.code[9];
  EXPECT_TRUE(store.guarded);
  EXPECT_EQ(k.registers[store.guard].name, "%p");
  EXPECT_EQ(store.operands[1].elements.size(), 1u);
  const ir::Instruction& copy = k.code[10];
  EXPECT_EQ(copy.opcode, ir::Opcode::kCp);
  EXPECT_TRUE(copy.mods.has(ir::Mod::kAsync));
  EXPECT_TRUE(copy.mods.has(ir::Mod::kCg));
  EXPECT_EQ(copy.operands.size(), 4u);
  EXPECT_EQ(copy.operands[2].integer, 16);
  EXPECT_TRUE(k.code[11].mods.has(ir::Mod::kCommitGroup));
  EXPECT_TRUE(k.code[12].mods.has(ir::Mod::kWaitGroup));
  const ir::Instruction& policy = k.code[14];
  EXPECT_TRUE(policy.mods.has(ir::Mod::kFractional));
  EXPECT_TRUE(policy.mods.has(ir::Mod::kL2EvictLast));
  EXPECT_EQ(policy.operands[1].kind, ir::OperandKind::kFloat);
  EXPECT_TRUE(policy.operands[1].is_double);
  EXPECT_EQ(policy.operands[1].float_bits, double_bits(1.0));
  ASSERT_EQ(k.labels.size(), 2u);
  EXPECT_EQ(k.labels[0].instruction, 0u);
  EXPECT_EQ(k.labels[1].instruction, 19u);  // a label at the end of the body
}

}  // namespace
