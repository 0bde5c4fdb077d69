// wmma (ops_wmma.cpp): loads, multiply-accumulate and stores of every shape and type the
// interpreter runs, with each matrix row- or column-major at a padded stride in memory; that a
// fragment's registers hold single elements (a program may scale every element); shared memory;
// the faults of a warp that gives different addresses, addresses outside memory or does not run
// the instruction together; and the forms refused at load.
//
// Each kernel is one warp: wmma.load of A, B and C from global memory, wmma.mma, wmma.store of D.
// The inputs are small integers, so every product and sum is exact in every type and D must equal
// the host's product exactly, wherever the layout put the elements.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <sstream>

#include "matrix_elements.h"
#include "ptx_vm/half.h"
#include "vm_test_util.h"

namespace ptx_vm_test {
namespace {

using hal::ptx_vm::bf16_to_float;
using hal::ptx_vm::float_to_bf16;
using hal::ptx_vm::float_to_half;
using hal::ptx_vm::half_to_float;
using hal::ptx_vm::Round;

const char* name_of(Elem e) {
  static const char* const kNames[] = {"f16", "bf16", "tf32", "f32", "f64", "s8", "u8", "s32"};
  return kNames[static_cast<int>(e)];
}

// The bits of |v| as an element of |e| in memory.
uint64_t encode(Elem e, double v) {
  switch (e) {
    case Elem::kF16:
      return float_to_half(static_cast<float>(v), Round::kNearest);
    case Elem::kBF16:
      return float_to_bf16(static_cast<float>(v), Round::kNearest);
    case Elem::kTF32:
    case Elem::kF32: {
      const float f = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      return u;
    }
    case Elem::kF64: {
      uint64_t u;
      std::memcpy(&u, &v, 8);
      return u;
    }
    default:
      return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}
double decode(Elem e, uint64_t bits) {
  switch (e) {
    case Elem::kF16:
      return half_to_float(static_cast<uint16_t>(bits));
    case Elem::kBF16:
      return bf16_to_float(static_cast<uint16_t>(bits));
    case Elem::kTF32:
    case Elem::kF32: {
      const uint32_t u = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    case Elem::kF64: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    case Elem::kS8:
      return static_cast<int8_t>(bits);
    case Elem::kU8:
      return static_cast<uint8_t>(bits);
    default:
      return static_cast<int32_t>(bits);
  }
}

// A matrix of rows x cols elements of |e| in memory, row- or column-major with |ld| elements
// between rows (or columns).
struct Matrix {
  Elem e;
  int rows, cols, ld;
  bool col_major;
  std::vector<uint8_t> bytes;

  Matrix(Elem elem, int r, int c, bool col, int pad)
      : e(elem), rows(r), cols(c), ld((col ? r : c) + pad), col_major(col) {
    bytes.assign(static_cast<size_t>(ld) * (col ? c : r) * elem_bytes(e), 0xcd);
  }
  size_t offset(int r, int c) const {
    return (col_major ? static_cast<size_t>(c) * ld + r : static_cast<size_t>(r) * ld + c) *
           elem_bytes(e);
  }
  void set(int r, int c, double v) {
    const uint64_t bits = encode(e, v);
    std::memcpy(&bytes[offset(r, c)], &bits, elem_bytes(e));
  }
  double get(int r, int c) const {
    uint64_t bits = 0;
    std::memcpy(&bits, &bytes[offset(r, c)], elem_bytes(e));
    return decode(e, bits);
  }
};

struct WmmaCase {
  const char* name;
  int m, n, k;
  Elem a, c, d;  // B has A's type (signedness aside, see b_signed)
  bool a_col, b_col, c_col, d_col;
  bool b_unsigned = false;  // integer forms: B .u8 while A is .s8
  bool stride = true;       // pass the stride operand (else the default, no padding)
};

std::ostream& operator<<(std::ostream& os, const WmmaCase& c) {
  return os << c.name;
}

int registers(Elem e, int m, int n, int k, char role) {
  const int rows = role == 'b' ? k : m, cols = role == 'a' ? k : n;
  const int per_lane = e == Elem::kF16 && role != 'c' ? 16 : rows * cols / 32;
  const int per_reg = e == Elem::kF64 ? 1 : 4 / static_cast<int>(elem_bytes(e));
  return per_lane / per_reg;
}

std::string reg_list(const char* prefix, int count) {
  std::string s = "{";
  for (int i = 0; i < count; ++i) {
    s += i ? ", %" : "%";  // appended piece by piece: GCC 12 -O3 warns falsely on "%" + string
    s += prefix;
    s += std::to_string(i);
  }
  return s + "}";
}

// The kernel of |c|; |scale_c| doubles every C element between load and mma (f32 C only).
std::string wmma_kernel(const WmmaCase& c, bool scale_c = false) {
  const Elem b = c.b_unsigned ? Elem::kU8 : c.a;
  std::string shape = "m";
  shape += std::to_string(c.m);
  shape += 'n';
  shape += std::to_string(c.n);
  shape += 'k';
  shape += std::to_string(c.k);
  const int ra = registers(c.a, c.m, c.n, c.k, 'a'), rb = registers(b, c.m, c.n, c.k, 'b');
  const int rc = registers(c.c, c.m, c.n, c.k, 'c'), rd = registers(c.d, c.m, c.n, c.k, 'c');
  const bool wide = c.a == Elem::kF64;
  const auto layout = [](bool col) { return col ? "col" : "row"; };
  const auto stride = [&](const char* reg) { return c.stride ? std::string(", ") + reg : ""; };
  std::ostringstream p;
  p << ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd,\n"
    << "  .param .u32 la, .param .u32 lb, .param .u32 lc, .param .u32 ld)\n{\n"
    << "  .reg .b64 %rd<8>;\n  .reg .b32 %r<8>;\n"
    << "  .reg ." << (wide ? "b64" : "b32") << " %a<16>;\n"
    << "  .reg ." << (wide ? "b64" : "b32") << " %b<16>;\n"
    << "  .reg ." << (wide ? "b64" : "b32") << " %c<8>;\n"
    << "  .reg ." << (wide ? "b64" : "b32") << " %d<8>;\n"
    << "  ld.param.u64 %rd0, [pa];\n  ld.param.u64 %rd1, [pb];\n"
    << "  ld.param.u64 %rd2, [pc];\n  ld.param.u64 %rd3, [pd];\n"
    << "  ld.param.u32 %r0, [la];\n  ld.param.u32 %r1, [lb];\n"
    << "  ld.param.u32 %r2, [lc];\n  ld.param.u32 %r3, [ld];\n"
    << "  wmma.load.a.sync.aligned." << layout(c.a_col) << "." << shape << ".global."
    << name_of(c.a) << " " << reg_list("a", ra) << ", [%rd0]" << stride("%r0") << ";\n"
    << "  wmma.load.b.sync.aligned." << layout(c.b_col) << "." << shape << ".global." << name_of(b)
    << " " << reg_list("b", rb) << ", [%rd1]" << stride("%r1") << ";\n"
    << "  wmma.load.c.sync.aligned." << layout(c.c_col) << "." << shape << ".global."
    << name_of(c.c) << " " << reg_list("c", rc) << ", [%rd2]" << stride("%r2") << ";\n";
  if (scale_c) {
    for (int i = 0; i < rc; ++i) p << "  mul.f32 %c" << i << ", %c" << i << ", 0f40000000;\n";
  }
  p << "  wmma.mma.sync.aligned." << layout(c.a_col) << "." << layout(c.b_col) << "." << shape;
  if (c.a == Elem::kF16) {
    p << "." << name_of(c.d) << "." << name_of(c.c);
  } else {
    p << "." << name_of(c.d) << "." << name_of(c.a) << "." << name_of(b) << "." << name_of(c.c);
  }
  p << " " << reg_list("d", rd) << ", " << reg_list("a", ra) << ", " << reg_list("b", rb) << ", "
    << reg_list("c", rc) << ";\n"
    << "  wmma.store.d.sync.aligned." << layout(c.d_col) << "." << shape << ".global."
    << name_of(c.d) << " [%rd3], " << reg_list("d", rd) << stride("%r3") << ";\n"
    << "  ret;\n}\n";
  return module(p.str());
}

class Wmma : public ::testing::TestWithParam<WmmaCase> {};

TEST_P(Wmma, MatchesTheHostProduct) {
  const WmmaCase& c = GetParam();
  const Elem b_elem = c.b_unsigned ? Elem::kU8 : c.a;
  const int pad = c.stride ? 3 : 0;
  Matrix A(c.a, c.m, c.k, c.a_col, pad), B(b_elem, c.k, c.n, c.b_col, pad);
  Matrix C(c.c, c.m, c.n, c.c_col, pad), D(c.d, c.m, c.n, c.d_col, pad);
  std::mt19937 rng(static_cast<unsigned>(c.m * 131 + c.n * 7 + c.k));
  const bool integer = c.a == Elem::kS8;
  std::uniform_int_distribution<int> small(-4, 4), byte(-128, 127), ubyte(0, 255);
  for (int r = 0; r < c.m; ++r) {
    for (int k = 0; k < c.k; ++k) A.set(r, k, integer ? byte(rng) : small(rng));
  }
  for (int k = 0; k < c.k; ++k) {
    for (int n = 0; n < c.n; ++n) {
      B.set(k, n, integer ? (c.b_unsigned ? ubyte(rng) : byte(rng)) : small(rng));
    }
  }
  for (int r = 0; r < c.m; ++r) {
    for (int n = 0; n < c.n; ++n) C.set(r, n, integer ? byte(rng) * 1000 : small(rng) * 8);
  }
  for (const bool scale_c : {false, true}) {
    if (scale_c && c.c != Elem::kF32) continue;
    Vm vm;
    ASSERT_TRUE(vm.load(wmma_kernel(c, scale_c))) << wmma_kernel(c, scale_c);
    auto& a = vm.buffer(A.bytes);
    auto& bb = vm.buffer(B.bytes);
    auto& cc = vm.buffer(C.bytes);
    auto& d = vm.buffer(D.bytes);
    EXPECT_RAN(vm.run1("k", 1, 32,
                       Params()
                           .add(a.address())
                           .add(bb.address())
                           .add(cc.address())
                           .add(d.address())
                           .add(uint32_t(A.ld))
                           .add(uint32_t(B.ld))
                           .add(uint32_t(C.ld))
                           .add(uint32_t(D.ld))));
    Matrix got = D;
    got.bytes = d.host;
    for (int r = 0; r < c.m; ++r) {
      for (int n = 0; n < c.n; ++n) {
        double want = C.get(r, n) * (scale_c ? 2 : 1);
        for (int k = 0; k < c.k; ++k) want += A.get(r, k) * B.get(k, n);
        ASSERT_EQ(got.get(r, n), want)
            << c.name << (scale_c ? " (C doubled)" : "") << ": D[" << r << "][" << n << "]";
      }
    }
    // The padding between rows (or columns) is left alone.
    if (pad > 0) {
      const size_t last =
          D.offset(0, 0) + static_cast<size_t>(D.col_major ? c.m : c.n) * elem_bytes(c.d);
      EXPECT_EQ(d.host[last], 0xcd) << "a store outside the matrix";
    }
  }
}

const WmmaCase kCases[] = {
    {"f16_m16n16k16_f32_row_col", 16, 16, 16, Elem::kF16, Elem::kF32, Elem::kF32, false, true,
     false, false},
    {"f16_m16n16k16_f32_col_row", 16, 16, 16, Elem::kF16, Elem::kF32, Elem::kF32, true, false, true,
     true},
    {"f16_m16n16k16_f16_acc", 16, 16, 16, Elem::kF16, Elem::kF16, Elem::kF16, false, false, false,
     true},
    {"f16_m16n16k16_f16_c_f32_d", 16, 16, 16, Elem::kF16, Elem::kF16, Elem::kF32, false, true,
     false, false},
    {"f16_m32n8k16", 32, 8, 16, Elem::kF16, Elem::kF32, Elem::kF32, false, true, false, true},
    {"f16_m8n32k16", 8, 32, 16, Elem::kF16, Elem::kF32, Elem::kF16, true, true, true, false},
    {"f16_default_stride", 16, 16, 16, Elem::kF16, Elem::kF32, Elem::kF32, false, true, false,
     false, false, false},
    {"bf16_m16n16k16", 16, 16, 16, Elem::kBF16, Elem::kF32, Elem::kF32, false, true, false, false},
    {"bf16_m32n8k16", 32, 8, 16, Elem::kBF16, Elem::kF32, Elem::kF32, true, false, false, false},
    {"bf16_m8n32k16", 8, 32, 16, Elem::kBF16, Elem::kF32, Elem::kF32, false, false, true, false},
    {"tf32_m16n16k8", 16, 16, 8, Elem::kTF32, Elem::kF32, Elem::kF32, false, true, false, true},
    {"s8_m16n16k16", 16, 16, 16, Elem::kS8, Elem::kS32, Elem::kS32, false, true, false, false},
    {"s8_u8_m32n8k16", 32, 8, 16, Elem::kS8, Elem::kS32, Elem::kS32, true, false, false, true,
     true},
    {"s8_m8n32k16", 8, 32, 16, Elem::kS8, Elem::kS32, Elem::kS32, false, false, true, false},
    {"f64_m8n8k4", 8, 8, 4, Elem::kF64, Elem::kF64, Elem::kF64, false, true, false, false},
    {"f64_m8n8k4_col", 8, 8, 4, Elem::kF64, Elem::kF64, Elem::kF64, true, false, true, true},
};

INSTANTIATE_TEST_SUITE_P(Shapes, Wmma, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<WmmaCase>& param) {
                           return std::string(param.param.name);
                         });

// One warp: A, B and C from shared memory (copied there by each lane), D to global memory.
TEST(WmmaMemory, SharedMemoryAndGenericAddresses) {
  const std::string ptx = module(R"(
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
  .reg .b64 %rd<8>;
  .reg .b32 %r<8>;
  .reg .b32 %a<8>;
  .reg .b32 %b<8>;
  .reg .f32 %c<8>;
  .reg .f32 %d<8>;
  .reg .pred %p;
  .shared .align 32 .b8 tiles[1024];
  ld.param.u64 %rd0, [pin];
  ld.param.u64 %rd1, [pout];
  mov.u32 %r0, %laneid;
  mov.u32 %r1, 0;
LOOP:
  shl.b32 %r2, %r1, 5;
  add.u32 %r2, %r2, %r0;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd0, %rd2;
  ld.global.u32 %r3, [%rd3];
  mov.u32 %r4, tiles;
  shl.b32 %r5, %r2, 2;
  add.u32 %r4, %r4, %r5;
  st.shared.u32 [%r4], %r3;
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p, %r1, 8;
  @%p bra LOOP;
  bar.warp.sync 0xffffffff;
  mov.u32 %r6, tiles;
  wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, [%r6], 16;
  cvta.shared.u64 %rd4, tiles;
  add.s64 %rd4, %rd4, 512;
  wmma.load.b.sync.aligned.row.m16n16k16.f16 {%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7}, [%rd4], 16;
  mov.f32 %c0, 0f00000000;
  mov.f32 %c1, 0f00000000;
  mov.f32 %c2, 0f00000000;
  mov.f32 %c3, 0f00000000;
  mov.f32 %c4, 0f00000000;
  mov.f32 %c5, 0f00000000;
  mov.f32 %c6, 0f00000000;
  mov.f32 %c7, 0f00000000;
  wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}, {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, {%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7}, {%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7};
  wmma.store.d.sync.aligned.row.m16n16k16.f32 [%rd1], {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}, 16;
  ret;
}
)");
  Vm vm;
  ASSERT_TRUE(vm.load(ptx));
  std::vector<uint16_t> in(512);  // A (16 x 16) then B (16 x 16), f16, row-major
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<int> values(512);
  for (int i = 0; i < 512; ++i) {
    values[i] = small(rng);
    in[i] = float_to_half(static_cast<float>(values[i]), Round::kNearest);
  }
  auto& input = vm.buffer(in);
  auto& out = vm.buffer(std::vector<float>(256, -1.0f));
  EXPECT_RAN(vm.run1("k", 1, 32, Params().add(input.address()).add(out.address())));
  for (int r = 0; r < 16; ++r) {
    for (int n = 0; n < 16; ++n) {
      int want = 0;
      for (int k = 0; k < 16; ++k) want += values[r * 16 + k] * values[256 + k * 16 + n];
      ASSERT_EQ(out.host[r * 16 + n], static_cast<float>(want)) << r << "," << n;
    }
  }
}

const char* const kLoadA =
    "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}";

std::string fault_kernel(const std::string& body) {
  return module(
      ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<4>;\n  .reg .b32 %r<4>;\n"
      "  .reg .b32 %a<8>;\n  .reg .pred %p;\n  ld.param.u64 %rd0, [p];\n"
      "  mov.u32 %r0, %laneid;\n" +
      body + "  ret;\n}\n");
}

TEST(WmmaFaults, LanesGivingDifferentAddressesFault) {
  Vm vm;
  ASSERT_TRUE(vm.load(fault_kernel("  mul.wide.u32 %rd1, %r0, 2;\n  add.s64 %rd0, %rd0, %rd1;\n  " +
                                   std::string(kLoadA) + ", [%rd0], 16;\n")));
  auto& buf = vm.buffer(std::vector<uint16_t>(1024, 0));
  const Fault f = vm.run1("k", 1, 32, Params().add(buf.address()));
  EXPECT_EQ(f.kind, FaultKind::kIllegalInstruction);
  EXPECT_NE(f.message.find("same address and stride in every lane"), std::string::npos)
      << f.message;
}

TEST(WmmaFaults, AMatrixPastItsAllocationFaults) {
  Vm vm;
  ASSERT_TRUE(vm.load(fault_kernel("  " + std::string(kLoadA) + ", [%rd0], 16;\n")));
  auto& buf = vm.buffer(std::vector<uint16_t>(16 * 15, 0));  // one row short
  const Fault f = vm.run1("k", 1, 32, Params().add(buf.address()));
  EXPECT_EQ(f.kind, FaultKind::kIllegalAddress) << f.message;
}

TEST(WmmaFaults, APartOfTheWarpFaults) {
  Vm vm;
  ASSERT_TRUE(vm.load(fault_kernel("  setp.lt.u32 %p, %r0, 16;\n  @%p " + std::string(kLoadA) +
                                   ", [%rd0], 16;\n")));
  auto& buf = vm.buffer(std::vector<uint16_t>(256, 0));
  const Fault f = vm.run1("k", 1, 32, Params().add(buf.address()));
  EXPECT_EQ(f.kind, FaultKind::kIllegalInstruction);
  EXPECT_NE(f.message.find("wmma.load"), std::string::npos) << f.message;
}

// Local memory is each thread's own, so a fragment cannot be loaded from it.
TEST(WmmaFaults, AGenericAddressOfLocalMemoryFaults) {
  Vm vm;
  ASSERT_TRUE(
      vm.load(fault_kernel("  .local .align 16 .b8 buf[512];\n  mov.u64 %rd1, buf;\n"
                           "  cvta.local.u64 %rd1, %rd1;\n  wmma.load.a.sync.aligned.row."
                           "m16n16k16.f16 {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, "
                           "[%rd1], 16;\n")));
  const Fault f = vm.run1("k", 1, 32, Params().add(uint64_t{0}));
  EXPECT_EQ(f.kind, FaultKind::kIllegalAddress);
  EXPECT_NE(f.message.find("local memory"), std::string::npos) << f.message;
}

TEST(WmmaRefusals, UnsupportedFormsAreRefusedAtLoadWithTheReason) {
  const std::pair<std::string, std::string> cases[] = {
      {"wmma.load.a.sync.aligned.row.m8n8k32.global.s4 {%a0}, [%rd0], 32;",
       "modifier '.s4' is not supported on the CPU PTX device"},
      {"wmma.mma.sync.aligned.row.col.m16n16k16.f32.f16.f16.f32 {%a0}, {%a0}, {%a0}, {%a0};",
       "wmma.mma.m16n16k16.f32.f16.f16.f32 is not supported"},
      {"wmma.load.a.sync.aligned.m16n16k16.global.f16 {%a0, %a1, %a2, %a3, %a4, %a5, %a6, "
       "%a7}, [%rd0], 16;",
       "needs one layout"},
      {"wmma.load.x.sync.aligned.row.m16n16k16.global.f16 {%a0}, [%rd0], 16;",
       "wmma needs .load.a"},
      {"wmma.load.a.sync.aligned.row.m16n16k8.global.f16 {%a0, %a1, %a2, %a3, %a4, %a5, %a6, "
       "%a7}, [%rd0], 16;",
       "m16n16k8 with .f16 is not supported"},
      {"wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%a0, %a1}, [%rd0], 16;",
       "must be a vector of 8"},
      {"wmma.load.a.row.m16n16k16.global.f16 {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, [%rd0];",
       "needs .sync.aligned"},
      {"wmma.mma.sync.aligned.row.col.m8n8k4.rz.rm.f64.f64.f64.f64 {%rd1, %rd2}, {%rd1}, {%rd1}, "
       "{%rd1, %rd2};",
       "one rounding modifier"},
  };
  for (const auto& [ins, reason] : cases) {
    Vm vm;
    const std::string log = vm.load_error(fault_kernel("  " + ins + "\n"));
    EXPECT_NE(log.find(reason), std::string::npos) << ins << "\n" << log;
  }
}

}  // namespace
}  // namespace ptx_vm_test
