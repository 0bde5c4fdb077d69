// Tests of the parser's name tables (src/ptx/names.h): register ranges, the splits of trailing
// digits, and refused duplicates.
#include "ptx/names.h"

#include <gtest/gtest.h>

namespace {

using hal::ptx::Binding;
using hal::ptx::NameTable;

Binding reg(uint32_t index, uint32_t line = 1) {
  return Binding{Binding::Kind::kRegister, index, line};
}

TEST(PtxNames, FindsRangeMembersBySplittingDigits) {
  NameTable table;
  EXPECT_FALSE(table.declare_range("%r", 10, reg(0)));
  EXPECT_FALSE(table.declare_range("%r1", 5, reg(100)));  // %r10 .. %r14
  EXPECT_FALSE(table.declare("%r15", reg(200)));
  EXPECT_EQ(table.find("%r0")->index, 0u);
  EXPECT_EQ(table.find("%r9")->index, 9u);
  EXPECT_EQ(table.find("%r10")->index, 100u);
  EXPECT_EQ(table.find("%r14")->index, 104u);
  EXPECT_EQ(table.find("%r15")->index, 200u);
  EXPECT_EQ(table.find("%r07")->index, 7u);  // leading zeros, as ptxas reads them
  EXPECT_FALSE(table.find("%r16"));
  EXPECT_FALSE(table.find("%r"));
  EXPECT_FALSE(table.find("%rd1"));
  EXPECT_FALSE(table.find("%r99999999999999999999"));
}

TEST(PtxNames, RefusesDuplicates) {
  NameTable table;
  EXPECT_FALSE(table.declare_range("%r", 10, reg(0, 3)));
  EXPECT_EQ(table.declare_range("%r", 4, reg(10)), "%r0");
  EXPECT_EQ(table.declare_range("%r", 20, reg(10)), "%r0");
  EXPECT_EQ(table.declare("%r3", reg(10))->line, 3u);
  EXPECT_FALSE(table.declare("%r10", reg(10)));
  EXPECT_EQ(table.declare_range("%r1", 5, reg(20)), "%r10");
  EXPECT_FALSE(table.declare("x", Binding{Binding::Kind::kVariable, 0, 9}));
  EXPECT_EQ(table.declare("x", reg(30))->kind, Binding::Kind::kVariable);
  EXPECT_FALSE(table.declare_range("%p", 0, reg(40)));  // declares nothing
  EXPECT_FALSE(table.find("%p0"));
}

}  // namespace
