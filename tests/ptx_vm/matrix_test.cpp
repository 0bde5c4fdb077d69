// The warp-level matrix instructions: mma.sync for every shape and type the interpreter runs,
// ldmatrix, stmatrix and movmatrix, the faults of a warp that does not execute them together or
// addresses outside shared memory, and the forms refused at load.
//
// The mma kernels are generated from fragment layouts transcribed here from PTX ISA's "Matrix
// Fragments for mma" sections: each lane computes the row and column of each of its elements
// from %laneid, loads A, B and C from row-major matrices in global memory, runs one mma and
// stores D the same way. D is compared element by element with a double-precision product on
// the host, so an element placed at the wrong row or column is caught.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>
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

// ===========================================================================================
// mma
// ===========================================================================================

// Element i of a lane's fragment is at row = row_g * g + row_t * t + at[i].first and
// col = col_g * g + col_t * t + at[i].second, with g = %laneid / 4 and t = %laneid % 4.
struct Frag {
  int row_g, row_t, col_g, col_t;
  std::vector<std::pair<int, int>> at;
};

// A and C fragments: row g + r, col col_t * t + c.
Frag by_rows(int col_t, std::vector<std::pair<int, int>> at) {
  return {1, 0, 0, col_t, at};
}
// B fragments: row row_t * t + r, col g.
Frag by_cols(int row_t, std::vector<int> rows) {
  Frag f{0, row_t, 1, 0, {}};
  for (int r : rows) f.at.push_back({r, 0});
  return f;
}

// The accumulators of the m16n8 shapes: c0, c1 in row g, c2, c3 in row g + 8, columns 2t, 2t+1.
const Frag kC16x8 = by_rows(2, {{0, 0}, {0, 1}, {8, 0}, {8, 1}});
const Frag kC8x8 = by_rows(2, {{0, 0}, {0, 1}});

// Layouts as the PTX ISA lists them.
const Frag kA16816Half =
    by_rows(2, {{0, 0}, {0, 1}, {8, 0}, {8, 1}, {0, 8}, {0, 9}, {8, 8}, {8, 9}});
const Frag kB16816Half = by_cols(2, {0, 1, 8, 9});
const Frag kA1688Half = by_rows(2, {{0, 0}, {0, 1}, {8, 0}, {8, 1}});
const Frag kB1688Half = by_cols(2, {0, 1});
const Frag kA1688Tf32 = by_rows(1, {{0, 0}, {8, 0}, {0, 4}, {8, 4}});
const Frag kB1688Tf32 = by_cols(1, {0, 4});
const Frag kA1684 = by_rows(1, {{0, 0}, {8, 0}});
const Frag kB1684 = by_cols(1, {0});
const Frag kA16816F64 =
    by_rows(1, {{0, 0}, {8, 0}, {0, 4}, {8, 4}, {0, 8}, {8, 8}, {0, 12}, {8, 12}});
const Frag kB16816F64 = by_cols(1, {0, 4, 8, 12});

// 8-bit A fragments: runs of four elements in one row, columns 4t .. 4t + 3 plus an offset.
Frag int8_rows(std::vector<std::pair<int, int>> runs) {
  Frag f = by_rows(4, {});
  for (const auto& [row, col] : runs) {
    for (int e = 0; e < 4; ++e) f.at.push_back({row, col + e});
  }
  return f;
}
const Frag kA16816Int8 = int8_rows({{0, 0}, {8, 0}});
const Frag kB16816Int8 = by_cols(4, {0, 1, 2, 3});
const Frag kA16832Int8 = int8_rows({{0, 0}, {8, 0}, {0, 16}, {8, 16}});
const Frag kB16832Int8 = by_cols(4, {0, 1, 2, 3, 16, 17, 18, 19});
const Frag kA8816Int8 = int8_rows({{0, 0}});
const Frag kB8816Int8 = by_cols(4, {0, 1, 2, 3});
const Frag kA884F64 = by_rows(1, {{0, 0}});
const Frag kB884F64 = by_cols(1, {0});

struct MmaCase {
  const char* name;
  const char* instruction;  // the mnemonic with its modifiers and types
  int m, n, k;
  Elem a, b, c, d;
  Frag fa, fb, fc;
  bool alias = false;  // D and C are the same registers
};

std::ostream& operator<<(std::ostream& os, const MmaCase& c) {
  return os << c.instruction;
}

// Registers per lane for |count| elements of |e|.
int register_count(Elem e, size_t count) {
  const uint32_t per = elem_bytes(e) >= 4 ? 1 : 4 / elem_bytes(e);
  return static_cast<int>(count / per);
}

// Emits the address of element |i| of fragment |f| of a row-major matrix with |ld| columns of
// |bytes|-byte elements at |base| into %addr.
void element_address(std::ostream& p, const Frag& f, size_t i, int ld, uint32_t bytes,
                     const char* base) {
  p << "  mul.lo.u32 %row, %g, " << f.row_g << ";\n"
    << "  mad.lo.u32 %row, %t, " << f.row_t << ", %row;\n"
    << "  add.u32 %row, %row, " << f.at[i].first << ";\n"
    << "  mul.lo.u32 %col, %g, " << f.col_g << ";\n"
    << "  mad.lo.u32 %col, %t, " << f.col_t << ", %col;\n"
    << "  add.u32 %col, %col, " << f.at[i].second << ";\n"
    << "  mad.lo.u32 %idx, %row, " << ld << ", %col;\n"
    << "  mul.wide.u32 %off, %idx, " << bytes << ";\n"
    << "  add.s64 %addr, " << base << ", %off;\n";
}

// Loads fragment |f| of the matrix at |base| into registers %<prefix>0.. .
void load_fragment(std::ostream& p, const Frag& f, Elem e, int ld, const char* base,
                   const std::string& prefix) {
  const uint32_t bytes = elem_bytes(e);
  if (bytes >= 4) {
    for (size_t i = 0; i < f.at.size(); ++i) {
      element_address(p, f, i, ld, bytes, base);
      p << "  ld.global.b" << bytes * 8 << " " << prefix << i << ", [%addr];\n";
    }
    return;
  }
  const size_t per = 4 / bytes;
  for (size_t r = 0; r < f.at.size() / per; ++r) {
    p << "  mov.b32 " << prefix << r << ", 0;\n";
    for (size_t e2 = 0; e2 < per; ++e2) {
      element_address(p, f, r * per + e2, ld, bytes, base);
      p << "  ld.global.u" << bytes * 8 << " %e, [%addr];\n"
        << "  shl.b32 %e, %e, " << e2 * bytes * 8 << ";\n"
        << "  or.b32 " << prefix << r << ", " << prefix << r << ", %e;\n";
    }
  }
}

void store_fragment(std::ostream& p, const Frag& f, Elem e, int ld, const char* base,
                    const std::string& prefix) {
  const uint32_t bytes = elem_bytes(e);
  if (bytes >= 4) {
    for (size_t i = 0; i < f.at.size(); ++i) {
      element_address(p, f, i, ld, bytes, base);
      p << "  st.global.b" << bytes * 8 << " [%addr], " << prefix << i << ";\n";
    }
    return;
  }
  for (size_t i = 0; i < f.at.size(); ++i) {
    element_address(p, f, i, ld, bytes, base);
    p << "  shr.u32 %e, " << prefix << i / 2 << ", " << (i % 2) * 16 << ";\n"
      << "  st.global.u16 [%addr], %e;\n";
  }
}

std::string register_list(const std::string& prefix, int count) {
  std::string s = "{";
  for (int i = 0; i < count; ++i) s += (i ? ", " : "") + prefix + std::to_string(i);
  return s + "}";
}

// mma_test(a, b, c, d): one warp, one mma.
std::string mma_kernel(const MmaCase& c) {
  std::ostringstream p;
  const int na = register_count(c.a, c.fa.at.size());
  const int nb = register_count(c.b, c.fb.at.size());
  const int nc = register_count(c.c, c.fc.at.size());
  const int nd = register_count(c.d, c.fc.at.size());
  const auto width = [](Elem e) { return e == Elem::kF64 ? ".b64" : ".b32"; };
  p << ".visible .entry mma_test(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n"
    << "{\n"
    << "  .reg .b32 %g, %t, %lane, %row, %col, %idx, %e;\n"
    << "  .reg .b64 %a_ptr, %b_ptr, %c_ptr, %d_ptr, %off, %addr;\n"
    << "  .reg " << width(c.a) << " %fa<" << na << ">;\n"
    << "  .reg " << width(c.b) << " %fb<" << nb << ">;\n"
    << "  .reg " << width(c.c) << " %fc<" << nc << ">;\n"
    << "  .reg " << width(c.d) << " %fd<" << nd << ">;\n"
    << "  ld.param.u64 %a_ptr, [pa];\n"
    << "  ld.param.u64 %b_ptr, [pb];\n"
    << "  ld.param.u64 %c_ptr, [pc];\n"
    << "  ld.param.u64 %d_ptr, [pd];\n"
    << "  mov.u32 %lane, %laneid;\n"
    << "  shr.u32 %g, %lane, 2;\n"
    << "  and.b32 %t, %lane, 3;\n";
  load_fragment(p, c.fa, c.a, c.k, "%a_ptr", "%fa");
  load_fragment(p, c.fb, c.b, c.n, "%b_ptr", "%fb");
  load_fragment(p, c.fc, c.c, c.n, "%c_ptr", "%fc");
  const std::string d = c.alias ? "%fc" : "%fd";
  p << "  " << c.instruction << " " << register_list(d, nd) << ", " << register_list("%fa", na)
    << ", " << register_list("%fb", nb) << ", " << register_list("%fc", nc) << ";\n";
  store_fragment(p, c.fc, c.d, c.n, "%d_ptr", d);
  p << "  ret;\n}\n";
  return p.str();
}

// A random matrix of |count| elements of |e|: its bytes, and its values.
struct Matrix {
  std::vector<uint8_t> bytes;
  std::vector<double> values;
};

Matrix random_matrix(Elem e, size_t count, std::mt19937& rng) {
  Matrix mx;
  mx.bytes.resize(count * elem_bytes(e));
  mx.values.resize(count);
  std::uniform_int_distribution<int> mant(-1024, 1024);
  std::uniform_int_distribution<int> scale(-6, 6);
  for (size_t i = 0; i < count; ++i) {
    uint8_t* at = mx.bytes.data() + i * elem_bytes(e);
    switch (e) {
      case Elem::kF16: {  // 11 significant bits: exact in f16
        const float v = std::ldexp(static_cast<float>(mant(rng)), -10 + scale(rng) / 2);
        const uint16_t h = float_to_half(v, Round::kNearest);
        std::memcpy(at, &h, 2);
        mx.values[i] = half_to_float(h);
        break;
      }
      case Elem::kBF16: {  // 8 significant bits, a wide exponent range
        const float v = std::ldexp(static_cast<float>(mant(rng) / 8), -7 + 3 * scale(rng));
        const uint16_t h = float_to_bf16(v, Round::kNearest);
        std::memcpy(at, &h, 2);
        mx.values[i] = bf16_to_float(h);
        break;
      }
      case Elem::kTF32: {  // 11 significant bits, low 13 bits of the f32 zero
        const float v = std::ldexp(static_cast<float>(mant(rng)), -10 + 2 * scale(rng));
        std::memcpy(at, &v, 4);
        mx.values[i] = v;
        break;
      }
      case Elem::kF32: {
        const float v = std::ldexp(static_cast<float>(rng() % 2000001) - 1e6f, -18);
        std::memcpy(at, &v, 4);
        mx.values[i] = v;
        break;
      }
      case Elem::kF64: {
        const double v = std::ldexp(static_cast<double>(rng()) - 2147483648.0, -31) *
                         std::ldexp(1.0, scale(rng));
        std::memcpy(at, &v, 8);
        mx.values[i] = v;
        break;
      }
      case Elem::kS8: {
        const int8_t v = static_cast<int8_t>(rng() & 0xff);
        std::memcpy(at, &v, 1);
        mx.values[i] = v;
        break;
      }
      case Elem::kU8: {
        const uint8_t v = static_cast<uint8_t>(rng() & 0xff);
        *at = v;
        mx.values[i] = v;
        break;
      }
      case Elem::kS32: {
        const int32_t v = static_cast<int32_t>(rng() % 2000001) - 1000000;
        std::memcpy(at, &v, 4);
        mx.values[i] = v;
        break;
      }
    }
  }
  return mx;
}

double read_value(Elem e, const uint8_t* at) {
  switch (e) {
    case Elem::kF16: {
      uint16_t h;
      std::memcpy(&h, at, 2);
      return half_to_float(h);
    }
    case Elem::kF32: {
      float f;
      std::memcpy(&f, at, 4);
      return f;
    }
    case Elem::kF64: {
      double v;
      std::memcpy(&v, at, 8);
      return v;
    }
    case Elem::kS32: {
      int32_t v;
      std::memcpy(&v, at, 4);
      return v;
    }
    default:
      return NAN;
  }
}

class MatrixMma : public ::testing::TestWithParam<MmaCase> {};

TEST_P(MatrixMma, MatchesADoublePrecisionProduct) {
  const MmaCase& c = GetParam();
  Vm vm;
  const std::string kernel = mma_kernel(c);
  ASSERT_TRUE(vm.load(module(kernel))) << kernel;
  std::mt19937 rng(1234u + static_cast<unsigned>(c.m * 100 + c.k));
  for (int round = 0; round < 3; ++round) {
    const Matrix a = random_matrix(c.a, size_t(c.m * c.k), rng);
    const Matrix b = random_matrix(c.b, size_t(c.k * c.n), rng);
    const Matrix cm = random_matrix(c.c, size_t(c.m * c.n), rng);
    auto& ba = vm.buffer(a.bytes);
    auto& bb = vm.buffer(b.bytes);
    auto& bc = vm.buffer(cm.bytes);
    auto& bd = vm.buffer(std::vector<uint8_t>(size_t(c.m * c.n) * elem_bytes(c.d), 0xee));
    EXPECT_RAN(
        vm.run1("mma_test", 1, 32,
                Params().add(ba.address()).add(bb.address()).add(bc.address()).add(bd.address())));
    for (int m = 0; m < c.m; ++m) {
      for (int n = 0; n < c.n; ++n) {
        double ref = cm.values[size_t(m * c.n + n)];
        double magnitude = std::fabs(ref);
        for (int k = 0; k < c.k; ++k) {
          const double p = a.values[size_t(m * c.k + k)] * b.values[size_t(k * c.n + n)];
          ref += p;
          magnitude += std::fabs(p);
        }
        const double got = read_value(c.d, bd.host.data() + size_t(m * c.n + n) * elem_bytes(c.d));
        double tol = 0;
        switch (c.d) {
          case Elem::kS32:  // exact (these inputs do not overflow)
            tol = 0;
            break;
          case Elem::kF64:
            tol = (c.k + 1) * std::ldexp(magnitude, -52);
            break;
          case Elem::kF32:
            tol = (c.k + 1) * std::ldexp(magnitude, -23);
            break;
          default:  // f16: the f32 sum, rounded once more
            tol = (c.k + 1) * std::ldexp(magnitude, -23) + std::ldexp(std::fabs(ref), -11) +
                  std::ldexp(1.0, -24);
            break;
        }
        ASSERT_LE(std::fabs(got - ref), tol) << c.instruction << " round " << round << ": D[" << m
                                             << "][" << n << "] = " << got << ", expected " << ref;
      }
    }
  }
}

const MmaCase kMmaCases[] = {
    {"m16n8k16_f32_f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 8, 16, Elem::kF16,
     Elem::kF16, Elem::kF32, Elem::kF32, kA16816Half, kB16816Half, kC16x8},
    {"m16n8k16_f32_f16_in_place", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 8, 16,
     Elem::kF16, Elem::kF16, Elem::kF32, Elem::kF32, kA16816Half, kB16816Half, kC16x8, true},
    {"m16n8k16_f16_f16", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 16, 8, 16, Elem::kF16,
     Elem::kF16, Elem::kF16, Elem::kF16, kA16816Half, kB16816Half, kC16x8},
    {"m16n8k16_f32_f16_c16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16", 16, 8, 16,
     Elem::kF16, Elem::kF16, Elem::kF16, Elem::kF32, kA16816Half, kB16816Half, kC16x8},
    {"m16n8k16_f16_f16_c32", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f32", 16, 8, 16,
     Elem::kF16, Elem::kF16, Elem::kF32, Elem::kF16, kA16816Half, kB16816Half, kC16x8},
    {"m16n8k16_bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 8, 16, Elem::kBF16,
     Elem::kBF16, Elem::kF32, Elem::kF32, kA16816Half, kB16816Half, kC16x8},
    {"m16n8k8_f32_f16", "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 16, 8, 8, Elem::kF16,
     Elem::kF16, Elem::kF32, Elem::kF32, kA1688Half, kB1688Half, kC16x8},
    {"m16n8k8_f16_f16", "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16", 16, 8, 8, Elem::kF16,
     Elem::kF16, Elem::kF16, Elem::kF16, kA1688Half, kB1688Half, kC16x8},
    {"m16n8k8_bf16", "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 16, 8, 8, Elem::kBF16,
     Elem::kBF16, Elem::kF32, Elem::kF32, kA1688Half, kB1688Half, kC16x8},
    {"m16n8k8_tf32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 16, 8, 8, Elem::kTF32,
     Elem::kTF32, Elem::kF32, Elem::kF32, kA1688Tf32, kB1688Tf32, kC16x8},
    {"m16n8k4_tf32", "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", 16, 8, 4, Elem::kTF32,
     Elem::kTF32, Elem::kF32, Elem::kF32, kA1684, kB1684, kC16x8},
    {"m16n8k16_s8", "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32", 16, 8, 16, Elem::kS8,
     Elem::kS8, Elem::kS32, Elem::kS32, kA16816Int8, kB16816Int8, kC16x8},
    {"m16n8k16_u8_s8", "mma.sync.aligned.m16n8k16.row.col.satfinite.s32.u8.s8.s32", 16, 8, 16,
     Elem::kU8, Elem::kS8, Elem::kS32, Elem::kS32, kA16816Int8, kB16816Int8, kC16x8},
    {"m16n8k32_s8_u8", "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32", 16, 8, 32, Elem::kS8,
     Elem::kU8, Elem::kS32, Elem::kS32, kA16832Int8, kB16832Int8, kC16x8},
    {"m16n8k32_u8", "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32", 16, 8, 32,
     Elem::kU8, Elem::kU8, Elem::kS32, Elem::kS32, kA16832Int8, kB16832Int8, kC16x8},
    {"m8n8k16_s8", "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32", 8, 8, 16, Elem::kS8, Elem::kS8,
     Elem::kS32, Elem::kS32, kA8816Int8, kB8816Int8, kC8x8},
    {"m8n8k4_f64", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 8, 8, 4, Elem::kF64,
     Elem::kF64, Elem::kF64, Elem::kF64, kA884F64, kB884F64, kC8x8},
    {"m16n8k4_f64", "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64", 16, 8, 4, Elem::kF64,
     Elem::kF64, Elem::kF64, Elem::kF64, kA1684, kB1684, kC16x8},
    {"m16n8k8_f64", "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64", 16, 8, 8, Elem::kF64,
     Elem::kF64, Elem::kF64, Elem::kF64, kA1688Tf32, kB1688Tf32, kC16x8},
    {"m16n8k16_f64", "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64", 16, 8, 16, Elem::kF64,
     Elem::kF64, Elem::kF64, Elem::kF64, kA16816F64, kB16816F64, kC16x8},
};

INSTANTIATE_TEST_SUITE_P(Shapes, MatrixMma, ::testing::ValuesIn(kMmaCases),
                         [](const ::testing::TestParamInfo<MmaCase>& param) {
                           return std::string(param.param.name);
                         });

// One product placed by hand: A[9][11] is element a7 of lane 5 (g 1, t 1), B[11][3] is b3 of
// lane 13; with every other element zero, their product must land in D[9][3] (d3 of lane 5)
// and nowhere else.
TEST(MatrixMma, OneProductLandsInItsPlace) {
  const MmaCase& c = kMmaCases[0];
  Vm vm;
  ASSERT_TRUE(vm.load(module(mma_kernel(c))));
  std::vector<uint16_t> a(16 * 16, 0), b(16 * 8, 0);
  a[9 * 16 + 11] = float_to_half(3.0f, Round::kNearest);  // A[9][11]
  b[11 * 8 + 3] = float_to_half(-0.5f, Round::kNearest);  // B[11][3]
  std::vector<float> cv(16 * 8, 0.0f);
  auto& ba = vm.buffer(a);
  auto& bb = vm.buffer(b);
  auto& bc = vm.buffer(cv);
  auto& bd = vm.buffer(std::vector<float>(16 * 8, 7.0f));
  EXPECT_RAN(
      vm.run1("mma_test", 1, 32,
              Params().add(ba.address()).add(bb.address()).add(bc.address()).add(bd.address())));
  for (int i = 0; i < 16 * 8; ++i) {
    EXPECT_EQ(bd.host[size_t(i)], i == 9 * 8 + 3 ? -1.5f : 0.0f) << i;
  }
}

// The accumulation is binary32: 2^24 + 1 + 1 + ... is not 2^24 + 16 in f32 when each step
// rounds, but the f16 products themselves are exact.
TEST(MatrixMma, AccumulatesInBinary32) {
  const MmaCase& c = kMmaCases[0];
  Vm vm;
  ASSERT_TRUE(vm.load(module(mma_kernel(c))));
  std::vector<uint16_t> a(16 * 16, float_to_half(1.0f, Round::kNearest));
  std::vector<uint16_t> b(16 * 8, float_to_half(1.0f, Round::kNearest));
  std::vector<float> cv(16 * 8, 16777216.0f);  // 2^24: adding 1 is below half an ulp
  auto& ba = vm.buffer(a);
  auto& bb = vm.buffer(b);
  auto& bc = vm.buffer(cv);
  auto& bd = vm.buffer(std::vector<float>(16 * 8, 0.0f));
  EXPECT_RAN(
      vm.run1("mma_test", 1, 32,
              Params().add(ba.address()).add(bb.address()).add(bc.address()).add(bd.address())));
  // Summed from C in k order, each 2^24 + 1 rounds back to 2^24 (ties to even).
  for (float v : bd.host) EXPECT_EQ(v, 16777216.0f);
}

// .satfinite clamps an overflowing s32 sum; without it the sum wraps.
TEST(MatrixMma, IntegerOverflowSaturatesOrWraps) {
  for (bool sat : {true, false}) {
    MmaCase c = kMmaCases[11];  // m16n8k16 s8
    c.instruction = sat ? "mma.sync.aligned.m16n8k16.row.col.satfinite.s32.s8.s8.s32"
                        : "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32";
    Vm vm;
    ASSERT_TRUE(vm.load(module(mma_kernel(c))));
    // Row 0 of A is 127, row 1 is -128; B is all 127 (column 0) or -128 (others).
    std::vector<int8_t> a(16 * 16, 0), b(16 * 8, 0);
    for (int k = 0; k < 16; ++k) {
      a[size_t(k)] = 127;
      a[size_t(16 + k)] = -128;
      for (int n = 0; n < 8; ++n) b[size_t(k * 8 + n)] = n == 0 ? 127 : -128;
    }
    std::vector<int32_t> cv(16 * 8, 0);
    cv[0] = INT32_MAX - 1000;  // + 16 * 127 * 127 overflows
    cv[8] = INT32_MIN + 1000;  // + 16 * -128 * 127 overflows downwards
    cv[9] = INT32_MAX - 5;     // + 16 * -128 * -128 overflows
    auto& ba = vm.buffer(a);
    auto& bb = vm.buffer(b);
    auto& bc = vm.buffer(cv);
    auto& bd = vm.buffer(std::vector<int32_t>(16 * 8, 0));
    EXPECT_RAN(
        vm.run1("mma_test", 1, 32,
                Params().add(ba.address()).add(bb.address()).add(bc.address()).add(bd.address())));
    const auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
    const int64_t d0 = int64_t{INT32_MAX} - 1000 + 16 * 127 * 127;
    const int64_t d8 = int64_t{INT32_MIN} + 1000 - 16 * 128 * 127;
    const int64_t d9 = int64_t{INT32_MAX} - 5 + 16 * 128 * 128;
    EXPECT_EQ(bd.host[0], sat ? INT32_MAX : wrap(d0));
    EXPECT_EQ(bd.host[8], sat ? INT32_MIN : wrap(d8));
    EXPECT_EQ(bd.host[9], sat ? INT32_MAX : wrap(d9));
    EXPECT_EQ(bd.host[1], 16 * 127 * -128);  // in range: exact either way
  }
}

// f64 mma rounds each fused step in the instruction's rounding mode: 1 + 4 products of 2^-60
// is 1 to nearest, and 1 + 4 ulps rounding up.
TEST(MatrixMma, F64RoundingModes) {
  double got[3] = {0, 0, 0};
  const char* modes[3] = {"rn", "rp", "rm"};
  for (int i = 0; i < 3; ++i) {
    MmaCase c = kMmaCases[16];  // m8n8k4 f64
    const std::string instruction =
        std::string("mma.sync.aligned.m8n8k4.row.col.") + modes[i] + ".f64.f64.f64.f64";
    c.instruction = instruction.c_str();
    Vm vm;
    ASSERT_TRUE(vm.load(module(mma_kernel(c))));
    auto& ba = vm.buffer(std::vector<double>(8 * 4, std::ldexp(1.0, -30)));
    auto& bb = vm.buffer(std::vector<double>(4 * 8, std::ldexp(1.0, -30)));
    auto& bc = vm.buffer(std::vector<double>(8 * 8, 1.0));
    auto& bd = vm.buffer(std::vector<double>(8 * 8, 0.0));
    EXPECT_RAN(
        vm.run1("mma_test", 1, 32,
                Params().add(ba.address()).add(bb.address()).add(bc.address()).add(bd.address())));
    got[i] = bd.host[5];
  }
  EXPECT_EQ(got[0], 1.0);
  EXPECT_EQ(got[1], 1.0 + 4 * std::ldexp(1.0, -52));
  EXPECT_EQ(got[2], 1.0);
}

// ===========================================================================================
// ldmatrix, stmatrix, movmatrix
// ===========================================================================================

// The byte offset in the tile of the row whose address lane |lane| gives: scattered and out of
// order, 16-byte aligned, 32 bytes past the register's value (the instruction adds +32).
uint32_t row_offset(uint32_t lane) {
  return ((lane * 7) % 32) * 48 + 32;
}

struct LdmCase {
  int count;  // .x1 .x2 .x4
  bool trans;
  bool generic;  // a generic 64-bit address rather than a .shared 32-bit one
};

std::string ldm_name(const ::testing::TestParamInfo<LdmCase>& info) {
  std::string name = "x";
  name += std::to_string(info.param.count);
  name += info.param.trans ? "_trans" : "";
  name += info.param.generic ? "_generic" : "_shared";
  return name;
}

// Fills a 2048-byte shared tile from |in| (64 bytes per lane), then computes each lane's row
// address in %r10 (shared, 32-bit) and %rd10 (generic). Lanes that give no address for the
// instruction get one far outside shared memory, which must be ignored.
std::string tile_prologue(int count) {
  std::ostringstream p;
  p << "  .shared .align 16 .b8 tile[2048];\n"
    << "  .reg .b32 %r<20>;\n"
    << "  .reg .b64 %rd<20>;\n"
    << "  .reg .pred %p<4>;\n"
    << "  ld.param.u64 %rd1, [in];\n"
    << "  ld.param.u64 %rd2, [out];\n"
    << "  mov.u32 %r1, %laneid;\n"
    << "  mov.u32 %r2, tile;\n"
    << "  mul.wide.u32 %rd3, %r1, 64;\n"
    << "  add.s64 %rd4, %rd1, %rd3;\n"
    << "  shl.b32 %r3, %r1, 6;\n"
    << "  add.u32 %r3, %r2, %r3;\n";
  for (int i = 0; i < 4; ++i) {
    p << "  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd4+" << 16 * i << "];\n"
      << "  st.shared.v4.u32 [%r3+" << 16 * i << "], {%r4, %r5, %r6, %r7};\n";
  }
  p << "  bar.sync 0;\n"
    << "  mul.lo.u32 %r8, %r1, 7;\n"
    << "  and.b32 %r8, %r8, 31;\n"
    << "  mul.lo.u32 %r8, %r8, 48;\n"
    << "  setp.ge.u32 %p1, %r1, " << 8 * count << ";\n"
    << "  @%p1 mov.u32 %r8, 0x7fff0000;\n"
    << "  add.u32 %r10, %r2, %r8;\n"
    << "  mov.u64 %rd5, tile;\n"
    << "  cvta.shared.u64 %rd5, %rd5;\n"
    << "  cvt.u64.u32 %rd6, %r8;\n"
    << "  add.s64 %rd10, %rd5, %rd6;\n";
  return p.str();
}

std::string ldmatrix_kernel(const LdmCase& c) {
  std::ostringstream p;
  p << ".visible .entry ldm(.param .u64 in, .param .u64 out)\n{\n" << tile_prologue(c.count);
  const std::string regs = c.count == 1   ? "{%r11}"
                           : c.count == 2 ? "{%r11, %r12}"
                                          : "{%r11, %r12, %r13, %r14}";
  p << "  ldmatrix.sync.aligned.m8n8.x" << c.count << (c.trans ? ".trans" : "")
    << (c.generic ? "" : ".shared") << ".b16 " << regs << ", "
    << (c.generic ? "[%rd10+32]" : "[%r10+32]") << ";\n"
    << "  mul.wide.u32 %rd7, %r1, 16;\n"
    << "  add.s64 %rd8, %rd2, %rd7;\n";
  for (int j = 0; j < c.count; ++j)
    p << "  st.global.u32 [%rd8+" << 4 * j << "], %r" << 11 + j << ";\n";
  p << "  ret;\n}\n";
  return p.str();
}

std::vector<uint16_t> tile_pattern() {
  std::vector<uint16_t> tile(1024);
  std::mt19937 rng(99);
  for (uint16_t& v : tile) v = static_cast<uint16_t>(rng());
  return tile;
}

// Element (r, c) of matrix j as the rows in |tile| give it.
uint16_t matrix_element(const std::vector<uint16_t>& tile, int j, int r, int c) {
  return tile[(row_offset(uint32_t(8 * j + r)) / 2) + uint32_t(c)];
}

class MatrixLdmatrix : public ::testing::TestWithParam<LdmCase> {};

TEST_P(MatrixLdmatrix, DistributesRowsAsFragments) {
  const LdmCase& c = GetParam();
  Vm vm;
  const std::string kernel = ldmatrix_kernel(c);
  ASSERT_TRUE(vm.load(module(kernel))) << kernel;
  const std::vector<uint16_t> tile = tile_pattern();
  auto& in = vm.buffer(tile);
  auto& out = vm.buffer(std::vector<uint32_t>(32 * 4, 0xdeadbeefu));
  EXPECT_RAN(vm.run1("ldm", 1, 32, Params().add(in.address()).add(out.address())));
  for (int lane = 0; lane < 32; ++lane) {
    for (int j = 0; j < 4; ++j) {
      uint32_t want = 0xdeadbeefu;
      if (j < c.count) {
        const int r = lane / 4, col = 2 * (lane % 4);
        // Lane l holds row l/4, columns 2(l%4) and 2(l%4)+1; .trans reads the transpose.
        const uint16_t lo =
            c.trans ? matrix_element(tile, j, col, r) : matrix_element(tile, j, r, col);
        const uint16_t hi =
            c.trans ? matrix_element(tile, j, col + 1, r) : matrix_element(tile, j, r, col + 1);
        want = lo | (uint32_t{hi} << 16);
      }
      ASSERT_EQ(out.host[size_t(lane * 4 + j)], want) << "lane " << lane << " register " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, MatrixLdmatrix,
                         ::testing::Values(LdmCase{1, false, false}, LdmCase{2, false, false},
                                           LdmCase{4, false, false}, LdmCase{1, true, false},
                                           LdmCase{2, true, false}, LdmCase{4, true, false},
                                           LdmCase{4, false, true}, LdmCase{2, true, true}),
                         ldm_name);

std::string stmatrix_kernel(const LdmCase& c) {
  std::ostringstream p;
  p << ".visible .entry stm(.param .u64 in, .param .u64 out, .param .u64 regs)\n{\n"
    << tile_prologue(c.count) << "  ld.param.u64 %rd11, [regs];\n"
    << "  mul.wide.u32 %rd7, %r1, 16;\n"
    << "  add.s64 %rd12, %rd11, %rd7;\n"
    << "  ld.global.v4.u32 {%r11, %r12, %r13, %r14}, [%rd12];\n";
  const std::string regs = c.count == 1   ? "{%r11}"
                           : c.count == 2 ? "{%r11, %r12}"
                                          : "{%r11, %r12, %r13, %r14}";
  p << "  stmatrix.sync.aligned.m8n8.x" << c.count << (c.trans ? ".trans" : "")
    << (c.generic ? "" : ".shared") << ".b16 " << (c.generic ? "[%rd10+32]" : "[%r10+32]") << ", "
    << regs << ";\n"
    << "  bar.sync 0;\n"
    << "  add.s64 %rd13, %rd2, %rd3;\n";
  for (int i = 0; i < 4; ++i) {
    p << "  ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r3+" << 16 * i << "];\n"
      << "  st.global.v4.u32 [%rd13+" << 16 * i << "], {%r4, %r5, %r6, %r7};\n";
  }
  p << "  ret;\n}\n";
  return p.str();
}

class MatrixStmatrix : public ::testing::TestWithParam<LdmCase> {};

TEST_P(MatrixStmatrix, StoresFragmentsAsRows) {
  const LdmCase& c = GetParam();
  Vm vm;
  const std::string kernel = stmatrix_kernel(c);
  ASSERT_TRUE(vm.load(module(kernel))) << kernel;
  const std::vector<uint16_t> tile = tile_pattern();
  std::vector<uint32_t> regs(32 * 4);
  std::mt19937 rng(7);
  for (uint32_t& r : regs) r = static_cast<uint32_t>(rng());
  auto& in = vm.buffer(tile);
  auto& out = vm.buffer(std::vector<uint16_t>(1024, 0));
  auto& rb = vm.buffer(regs);
  EXPECT_RAN(
      vm.run1("stm", 1, 32, Params().add(in.address()).add(out.address()).add(rb.address())));
  std::vector<uint16_t> want = tile;
  for (int j = 0; j < c.count; ++j) {
    for (int lane = 0; lane < 32; ++lane) {
      const uint32_t v = regs[size_t(lane * 4 + j)];
      const int r = lane / 4, col = 2 * (lane % 4);
      for (int h = 0; h < 2; ++h) {
        const int rr = c.trans ? col + h : r;
        const int cc = c.trans ? r : col + h;
        want[row_offset(uint32_t(8 * j + rr)) / 2 + uint32_t(cc)] =
            static_cast<uint16_t>(v >> (16 * h));
      }
    }
  }
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(out.host[i], want[i]) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Forms, MatrixStmatrix,
                         ::testing::Values(LdmCase{1, false, false}, LdmCase{2, true, false},
                                           LdmCase{4, false, false}, LdmCase{4, true, true}),
                         ldm_name);

TEST(MatrixMovmatrix, TransposesAcrossTheWarp) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry mov_t(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %laneid;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  movmatrix.sync.aligned.m8n8.trans.b16 %r3, %r2;
  add.s64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r3;
  ret;
}
)")));
  std::vector<uint32_t> in(32);
  for (uint32_t l = 0; l < 32; ++l) {
    // Element (r, c) of the source is r * 16 + c: lane l holds (l/4, 2(l%4)) and (l/4, 2(l%4)+1).
    const uint32_t r = l / 4, c = 2 * (l % 4);
    in[l] = (r * 16 + c) | ((r * 16 + c + 1) << 16);
  }
  auto& bin = vm.buffer(in);
  auto& bout = vm.buffer(std::vector<uint32_t>(32, 0));
  EXPECT_RAN(vm.run1("mov_t", 1, 32, Params().add(bin.address()).add(bout.address())));
  for (uint32_t l = 0; l < 32; ++l) {
    // The result is laid out the same way and holds the transpose: (r, c) of it is (c, r).
    const uint32_t r = l / 4, c = 2 * (l % 4);
    EXPECT_EQ(bout.host[l], (c * 16 + r) | (((c + 1) * 16 + r) << 16)) << "lane " << l;
  }
}

// ===========================================================================================
// Faults and refusals
// ===========================================================================================

TEST(MatrixFaults, MmaInAPartOfTheWarpFaults) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry half_warp()
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b32 %a<4>, %b<2>;
  .reg .f32 %f<4>;
  mov.u32 %r1, %laneid;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3},
      {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%f0, %f1, %f2, %f3};
  ret;
}
)")));
  const Fault fault = vm.run1("half_warp", 1, 32, Params());
  EXPECT_EQ(fault.kind, FaultKind::kIllegalInstruction);
  EXPECT_NE(fault.message.find("mma.sync"), std::string::npos) << fault.message;
  EXPECT_NE(fault.message.find("0xffff0000"), std::string::npos) << fault.message;
}

TEST(MatrixFaults, LdmatrixOnADivergentPathFaults) {
  Vm vm;
  ASSERT_TRUE(vm.load(module(R"(
.visible .entry diverged()
{
  .shared .align 16 .b8 tile[256];
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  mov.u32 %r1, %laneid;
  setp.lt.u32 %p1, %r1, 8;
  @%p1 bra SKIP;
  mov.u32 %r2, tile;
  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r3}, [%r2];
SKIP:
  ret;
}
)")));
  const Fault fault = vm.run1("diverged", 1, 32, Params());
  EXPECT_EQ(fault.kind, FaultKind::kIllegalInstruction);
  EXPECT_NE(fault.message.find("ldmatrix"), std::string::npos) << fault.message;
}

const std::string kLdmatrixAt = module(R"(
.visible .entry ldm_at(.param .u64 where)
{
  .shared .align 16 .b8 tile[256];
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [where];
  mov.u32 %r1, %laneid;
  cvt.u32.u64 %r2, %rd1;
  mul.lo.u32 %r3, %r1, 16;
  add.u32 %r2, %r2, %r3;
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r4, %r5}, [%r2];
  cvt.u64.u32 %rd2, %r3;
  add.s64 %rd2, %rd1, %rd2;
  ldmatrix.sync.aligned.m8n8.x1.b16 {%r4}, [%rd2];
  ret;
}
)");

TEST(MatrixFaults, LdmatrixChecksEveryRowAddress) {
  Vm vm;
  ASSERT_TRUE(vm.load(kLdmatrixAt));
  // Rows at 0, 16, .. 240 of a 256-byte tile: the x2 form reads rows 0..15, all inside; the
  // generic x1 form then gets a shared address, not a generic one.
  Fault fault = vm.run1("ldm_at", 1, 32, Params().add(uint64_t{0}));
  EXPECT_EQ(fault.kind, FaultKind::kIllegalAddress) << fault.message;
  EXPECT_NE(fault.message.find("not a generic address of shared memory"), std::string::npos)
      << fault.message;
  // Starting at 16, lane 15's row is at 256: past the tile.
  fault = vm.run1("ldm_at", 1, 32, Params().add(uint64_t{16}));
  EXPECT_EQ(fault.kind, FaultKind::kIllegalAddress) << fault.message;
  EXPECT_NE(fault.message.find("thread (15,0,0)"), std::string::npos) << fault.message;
  // Starting at 8: misaligned rows.
  fault = vm.run1("ldm_at", 1, 32, Params().add(uint64_t{8}));
  EXPECT_EQ(fault.kind, FaultKind::kMisalignedAddress) << fault.message;
}

TEST(MatrixFaults, AWarpWithMissingLanesFaults) {
  Vm vm;
  ASSERT_TRUE(vm.load(kLdmatrixAt));
  const Fault fault = vm.run1("ldm_at", 1, 16, Params().add(uint64_t{0}));
  EXPECT_EQ(fault.kind, FaultKind::kIllegalInstruction);
  EXPECT_NE(fault.message.find("never launched"), std::string::npos) << fault.message;
}

std::string refusal(const std::string& instruction) {
  return module(R"(
.visible .entry k()
{
  .shared .align 16 .b8 tile[256];
  .reg .b32 %r<8>, %a<8>, %b<4>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<4>;
  )" + instruction +
                R"(
  ret;
}
)");
}

TEST(MatrixRefusals, UnsupportedFormsAreRefusedAtLoadWithTheReason) {
  const std::pair<std::string, std::string> cases[] = {
      {"mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7}, "
       "{%a0,%a1}, {%b0,%b1}, {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7};",
       "not supported"},
      {"mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, "
       "{%a0,%a1,%a2,%a3}, {%b0,%b1}, {%f0,%f1,%f2,%f3};",
       ".row.col"},
      {"mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f16 {%f0,%f1,%f2,%f3}, {%a0,%a1}, {%b0}, "
       "{%a2,%a3};",
       "not supported"},
      {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%a0,%a1}, "
       "{%b0,%b1}, {%f0,%f1,%f2,%f3};",
       "vector of 4"},
      {"mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, "
       "{%a0,%a1,%a2,%a3}, {%b0,%b1}, {%f0,%f1,%f2,%f3};",
       ".satfinite"},
      {"mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32 {%r0,%r1,%r2,%r3}, {%a0,%a1}, {%b0}, "
       "{%r0,%r1,%r2,%r3};",
       "not supported"},
      {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, "
       "{%a0,%a1,%a2,%a3}, {%b0,%b1}, {%rd0,%rd1,%rd2,%rd3};",
       "64-bit register"},
      {"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r0}, [%r1];", "vector of 2"},
      {"ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r0, %r1}, [%r1];", "m16n16"},
      {"ldmatrix.sync.aligned.m8n8.x1.global.b16 {%r0}, [%rd1];", ".global"},
      {"ldmatrix.sync.aligned.m8n8.x1.shared::cluster.b16 {%r0}, [%r1];", "cluster"},
      {"movmatrix.sync.aligned.m8n8.b16 %r0, %r1;", ".trans"},
  };
  for (const auto& [instruction, reason] : cases) {
    Vm vm;
    const std::string log = vm.load_error(refusal(instruction));
    EXPECT_NE(log.find("line 12"), std::string::npos) << instruction << "\n" << log;
    EXPECT_NE(log.find(reason), std::string::npos) << instruction << "\n" << log;
  }
}

// ===========================================================================================
// Triton's PTX
// ===========================================================================================

std::string read_triton(const std::string& name) {
  std::ifstream in(std::string(HAL_TEST_TRITON_PTX_DIR) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_matrix_instruction(const std::string& line) {
  for (const char* m : {"mma.", "ldmatrix.", "stmatrix.", "movmatrix."}) {
    if (line.rfind(m, 0) == 0) return true;
  }
  return false;
}

// Every ldmatrix and mma of Triton's sm_80 matmul and attention kernels decodes: each kernel is
// reduced to its declarations and its matrix instructions, so that no other family's gaps hide
// one.
TEST(MatrixTriton, MatrixInstructionsOfTritonKernelsDecode) {
  for (const char* name : {"matmul_f16.ptx", "matmul_f16_bt.ptx", "flash_attention_fwd.ptx",
                           "flash_attention_fwd_causal.ptx"}) {
    std::istringstream in(read_triton(name));
    std::string reduced, line;
    int kept = 0;
    while (std::getline(in, line)) {
      const size_t first = line.find_first_not_of(" \t");
      const std::string trimmed = first == std::string::npos ? "" : line.substr(first);
      if (is_matrix_instruction(trimmed)) {
        ++kept;
      } else if (!trimmed.empty() && trimmed[0] != '.' && trimmed[0] != '{' && trimmed[0] != '}' &&
                 trimmed[0] != ')' && trimmed != "ret;") {
        continue;  // another instruction, a label or a comment
      }
      reduced += line + "\n";
    }
    EXPECT_GE(kept, 16) << name;
    hal::ptx_vm::LoadError error;
    auto program = hal::ptx_vm::Program::load(reduced.data(), reduced.size(), {}, &error);
    EXPECT_NE(program, nullptr) << name << ": " << error.log;
  }
}

// Triton's matmul_f16 (64x64x32 tiles, 4 warps, ldmatrix for A, ldmatrix.trans for B, 16 mma
// per k step) runs and matches a double-precision product. Its cp.async copies, a separate
// family, are replaced by the synchronous load and store they amount to (a source size of 0
// fills with zeros), so the test depends only on the matrix instructions.
TEST(MatrixTriton, TritonMatmulRuns) {
  std::string text = read_triton("matmul_f16.ptx");
  ASSERT_FALSE(text.empty());
  const std::regex copy(R"(cp\.async\.cg\.shared\.global \[ (%r\d+) \+ (\d+) \], )"
                        R"(\[ (%rd\d+) \+ (\d+) \], 0x10, (%r\d+);)");
  const std::regex group(R"(cp\.async\.(commit_group|wait_group\s+\d+);)");
  text = std::regex_replace(
      text, copy,
      "{ .reg .b32 %cp<4>; .reg .pred %cpp; setp.ne.u32 %cpp, $5, 0; mov.b32 %cp0, 0; "
      "mov.b32 %cp1, 0; mov.b32 %cp2, 0; mov.b32 %cp3, 0; "
      "@%cpp ld.global.v4.b32 {%cp0, %cp1, %cp2, %cp3}, [$3+$4]; "
      "st.shared.v4.b32 [$1+$2], {%cp0, %cp1, %cp2, %cp3}; }");
  text = std::regex_replace(text, group, "");
  ASSERT_EQ(text.find("cp.async"), std::string::npos);
  Vm vm;
  ASSERT_TRUE(vm.load(text));

  const uint32_t m = 128, n = 192, k = 96;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> dist(-512, 512);
  std::vector<uint16_t> a(m * k), b(k * n);
  std::vector<double> av(a.size()), bv(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = float_to_half(static_cast<float>(dist(rng)) / 256.0f, Round::kNearest);
    av[i] = half_to_float(a[i]);
  }
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = float_to_half(static_cast<float>(dist(rng)) / 256.0f, Round::kNearest);
    bv[i] = half_to_float(b[i]);
  }
  auto& ba = vm.buffer(a);
  auto& bb = vm.buffer(b);
  auto& bc = vm.buffer(std::vector<float>(m * n, -7.0f));
  const uint32_t grid = (m / 64) * (n / 64);
  EXPECT_RAN(vm.run1("matmul_f16", grid, 128,
                     Params()
                         .add(ba.address())
                         .add(bb.address())
                         .add(bc.address())
                         .add(int32_t(m))
                         .add(int32_t(n))
                         .add(int32_t(k))
                         .add(int32_t(k))
                         .add(int32_t(n))
                         .add(int32_t(n))
                         .add(uint64_t{0})
                         .add(uint64_t{0}),
                     16384));
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      double ref = 0, magnitude = 0;
      for (uint32_t x = 0; x < k; ++x) {
        ref += av[i * k + x] * bv[x * n + j];
        magnitude += std::fabs(av[i * k + x] * bv[x * n + j]);
      }
      ASSERT_LE(std::fabs(bc.host[i * n + j] - ref), 1e-6 + (k + 1) * std::ldexp(magnitude, -23))
          << "C[" << i << "][" << j << "]";
    }
  }
}

}  // namespace
}  // namespace ptx_vm_test
