// Comparisons and moves (ops_compare.cpp, ops_move.cpp): setp with every comparison on every
// type, NaNs and signed zeros, boolean combination with a (negated) predicate, the p|q form, the
// pair forms; set; slct; mov of registers, immediates, special registers and vector packing;
// selp.
#include <gtest/gtest.h>

#include <functional>

#include "op_test_util.h"

namespace ptx_vm_test {
namespace {

struct Type {
  const char* name;
  int bits;
  char kind;  // 'b', 'u', 's', 'f' (f32, f64), 'h' (f16), 'g' (bf16)
};
constexpr Type kTypes[] = {{"b16", 16, 'b'}, {"b32", 32, 'b'}, {"b64", 64, 'b'}, {"u16", 16, 'u'},
                           {"u32", 32, 'u'}, {"u64", 64, 'u'}, {"s16", 16, 's'}, {"s32", 32, 's'},
                           {"s64", 64, 's'}, {"f32", 32, 'f'}, {"f64", 64, 'f'}, {"f16", 16, 'h'},
                           {"bf16", 16, 'g'}};
const char* const kCmps[] = {"eq", "ne",  "lt",  "le",  "gt",  "ge",  "lo",  "ls",  "hi",
                             "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};

bool valid(const Type& t, const std::string& cmp) {
  const bool unsigned_cmp = cmp == "lo" || cmp == "ls" || cmp == "hi" || cmp == "hs";
  const bool float_cmp = cmp.size() == 3 && cmp != "num" ? cmp.back() == 'u' : false;
  const bool any_float = float_cmp || cmp == "num" || cmp == "nan";
  if (t.kind == 'b') return cmp == "eq" || cmp == "ne";
  if (t.kind == 'u' || t.kind == 's') return !any_float;
  return !unsigned_cmp;
}

uint64_t mask_of(int bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

// The value a comparison sees.
double float_value(uint64_t v, const Type& t, bool ftz) {
  if (t.kind == 'f' && t.bits == 32) {
    if (ftz && (v & 0x7f800000u) == 0) return 0.0;
    return bits_float(v);
  }
  if (t.kind == 'f') return bits_double(v);
  const Format f = t.kind == 'h' ? kHalf : kBf16;
  const uint64_t mag = v & 0x7fff;
  if ((mag & f.inf()) == f.inf()) {
    return (mag & ((uint64_t{1} << f.mant) - 1)) ? std::numeric_limits<double>::quiet_NaN()
                                                 : ((v & 0x8000) ? -INFINITY : INFINITY);
  }
  if (ftz && (mag >> f.mant) == 0) return 0.0;
  const double x = f.value(mag);
  return (v & 0x8000) ? -x : x;
}

bool ref_compare(const std::string& cmp, uint64_t a, uint64_t b, const Type& t, bool ftz) {
  if (t.kind == 'b' || t.kind == 'u' || t.kind == 's') {
    const uint64_t ua = a & mask_of(t.bits), ub = b & mask_of(t.bits);
    const auto sx = [&](uint64_t v) {
      return t.bits == 64 ? static_cast<int64_t>(v)
                          : static_cast<int64_t>(v << (64 - t.bits)) >> (64 - t.bits);
    };
    const int c = t.kind == 's' ? (sx(ua) < sx(ub)   ? -1
                                   : sx(ua) > sx(ub) ? 1
                                                     : 0)
                                : (ua < ub   ? -1
                                   : ua > ub ? 1
                                             : 0);
    const int cu = ua < ub ? -1 : ua > ub ? 1 : 0;
    if (cmp == "eq") return c == 0;
    if (cmp == "ne") return c != 0;
    if (cmp == "lt") return c < 0;
    if (cmp == "le") return c <= 0;
    if (cmp == "gt") return c > 0;
    if (cmp == "ge") return c >= 0;
    if (cmp == "lo") return cu < 0;
    if (cmp == "ls") return cu <= 0;
    if (cmp == "hi") return cu > 0;
    if (cmp == "hs") return cu >= 0;
    return false;
  }
  const double x = float_value(a, t, ftz), y = float_value(b, t, ftz);
  const bool u = std::isnan(x) || std::isnan(y);
  std::string base = cmp;
  if (cmp == "num") return !u;
  if (cmp == "nan") return u;
  const bool unordered = cmp.size() == 3;
  if (unordered) base = cmp.substr(0, 2);
  if (u) return unordered;
  if (base == "eq") return x == y;
  if (base == "ne") return x != y;
  if (base == "lt") return x < y;
  if (base == "le") return x <= y;
  if (base == "gt") return x > y;
  return x >= y;
}

std::vector<uint64_t> compare_values(const Type& t) {
  std::vector<uint64_t> v;
  switch (t.kind) {
    case 'f':
      if (t.bits == 32) {
        v = {0,          0x80000000, 1,          0x80000001, 0x007fffff, 0x3f800000, 0xbf800000,
             0x3f800001, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f7fffff};
      } else {
        v = {0,
             0x8000000000000000ull,
             1,
             double_bits(1.0),
             double_bits(-1.0),
             double_bits(1.0 + 0x1p-52),
             0x7ff0000000000000ull,
             0xfff0000000000000ull,
             0x7ff8000000000000ull,
             0x7ff0000000000001ull};
      }
      break;
    case 'h':
    case 'g': {
      const uint64_t one = t.kind == 'h' ? 0x3c00 : 0x3f80, inf = t.kind == 'h' ? 0x7c00 : 0x7f80;
      v = {0,   0x8000,       1,       0x8001,       one,   one | 0x8000, one + 1,
           inf, inf | 0x8000, inf | 1, inf | 0x8040, 0x7fff};
      break;
    }
    default: {
      const uint64_t m = mask_of(t.bits);
      v = {0, 1, 2, m, m - 1, m >> 1, (m >> 1) + 1, 0x1234 & m, 0x8000 & m};
    }
  }
  return v;
}

TEST(PtxVmCompare, SetpEveryComparisonOnEveryType) {
  for (const Type& t : kTypes) {
    const auto v = compare_values(t);
    std::vector<Row> rows;
    for (uint64_t a : v) {
      for (uint64_t b : v) rows.push_back({a, b});
    }
    for (bool ftz : {false, true}) {
      if (ftz && t.kind != 'h' && !(t.kind == 'f' && t.bits == 32)) continue;
      OpKernel k;
      const std::string reg = t.kind == 'f' ? std::string(t.name) : "b" + std::to_string(t.bits);
      k.src = {reg, reg};
      k.sm = 90;
      std::vector<std::string> used;
      for (const char* cmp : kCmps) {
        if (!valid(t, cmp)) continue;
        const std::string p = "%d" + std::to_string(2 * used.size());
        const std::string q = "%d" + std::to_string(2 * used.size() + 1);
        k.body += std::string("  setp.") + cmp + (ftz ? ".ftz." : ".") + t.name + " " + p + "|" +
                  q + ", %s0, %s1;\n";
        k.dst.push_back("pred");
        k.dst.push_back("pred");
        used.push_back(cmp);
      }
      const auto got = run_op(k, rows);
      int reported = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        for (size_t c = 0; c < used.size(); ++c) {
          const bool want = ref_compare(used[c], rows[i][0], rows[i][1], t, ftz);
          if ((got[i][2 * c] != (want ? 1u : 0u) || got[i][2 * c + 1] != (want ? 0u : 1u)) &&
              reported++ < 8) {
            ADD_FAILURE() << "setp." << used[c] << (ftz ? ".ftz." : ".") << t.name << " "
                          << row_text(rows[i]) << ": got p=" << got[i][2 * c]
                          << " q=" << got[i][2 * c + 1] << ", want p=" << want;
          }
        }
      }
    }
  }
}

TEST(PtxVmCompare, SetpCombinesWithAPossiblyNegatedPredicate) {
  std::vector<Row> rows;
  for (uint64_t a : {0x3f800000ull, 0x7fc00000ull, 0x0ull}) {
    for (uint64_t b : {0x3f800000ull, 0x40000000ull}) {
      for (uint64_t c : {0, 1}) rows.push_back({a, b, c});
    }
  }
  for (const char* op : {"and", "or", "xor"}) {
    for (bool neg : {false, true}) {
      for (const char* cmp : {"lt", "geu", "eq"}) {
        const std::string ins = std::string("setp.") + cmp + "." + op + ".f32 %d0|%d1, %s0, %s1, " +
                                (neg ? "!" : "") + "%s2;";
        const auto got =
            run_op(OpKernel{"  " + ins, {"pred", "pred"}, {"f32", "f32", "pred"}}, rows);
        for (size_t i = 0; i < rows.size(); ++i) {
          const bool t = ref_compare(cmp, rows[i][0], rows[i][1], kTypes[9], false);
          const bool c = (rows[i][2] != 0) != neg;
          const auto combine = [&](bool x) {
            return std::string(op) == "and" ? x && c : std::string(op) == "or" ? x || c : x != c;
          };
          EXPECT_EQ(got[i], (Row{combine(t), combine(!t)})) << ins << " " << row_text(rows[i]);
        }
      }
    }
  }
  // A single destination, and a guard that leaves it alone.
  const std::vector<Row> g = {{1, 2, 1, 0}, {1, 2, 0, 1}, {3, 2, 1, 1}, {3, 2, 0, 0}};
  const auto got =
      run_op(OpKernel{"  @%s2 setp.lt.s32 %d0, %s0, %s1;", {"pred"}, {"b32", "b32", "pred"}}, g);
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(got[i][0], g[i][2] ? (g[i][0] < g[i][1] ? 1u : 0u) : g[i][3]) << i;
  }
}

// The pair forms: p from the low halves, q from the high ones, each combined with c.
TEST(PtxVmCompare, SetpPairs) {
  std::vector<Row> rows;
  const uint64_t h[] = {0x3c00, 0x4000, 0x7e00, 0x8000, 0x0000, 0xfc00, 0x0001};
  for (uint64_t a0 : h) {
    for (uint64_t b0 : h) {
      for (uint64_t c : {0, 1}) rows.push_back({a0 | (b0 << 16), b0 | (a0 << 16), c});
    }
  }
  for (const char* type : {"f16x2", "bf16x2"}) {
    const Type half = type[0] == 'f' ? kTypes[11] : kTypes[12];
    for (const char* cmp : {"lt", "equ", "ne", "num"}) {
      for (bool ftz : {false, true}) {
        if (ftz && half.kind != 'h') continue;
        const std::string ins = std::string("setp.") + cmp + ".and" + (ftz ? ".ftz." : ".") + type +
                                " %d0|%d1, %s0, %s1, !%s2;";
        const auto got =
            run_op(OpKernel{"  " + ins, {"pred", "pred"}, {"b32", "b32", "pred"}, 90}, rows);
        for (size_t i = 0; i < rows.size(); ++i) {
          const bool c = rows[i][2] == 0;
          const bool lo = ref_compare(cmp, rows[i][0] & 0xffff, rows[i][1] & 0xffff, half, ftz);
          const bool hi = ref_compare(cmp, rows[i][0] >> 16, rows[i][1] >> 16, half, ftz);
          EXPECT_EQ(got[i], (Row{lo && c, hi && c})) << ins << " " << row_text(rows[i]);
        }
      }
    }
  }
}

TEST(PtxVmCompare, SetWritesOnesOrOnePointZero) {
  std::vector<Row> rows;
  for (uint64_t a : {0ull, 5ull, 0xffffffffull}) {
    for (uint64_t b : {0ull, 5ull}) {
      for (uint64_t c : {0, 1}) rows.push_back({a, b, c});
    }
  }
  const auto got = run_op(OpKernel{"  set.lt.u32.s32 %d0, %s0, %s1;\n"
                                   "  set.lt.f32.u32 %d1, %s0, %s1;\n"
                                   "  set.eq.or.s32.b32 %d2, %s0, %s1, !%s2;\n"
                                   "  set.gtu.f32.f32 %d3, %s3, %s3;",
                                   {"b32", "f32", "b32", "f32"},
                                   {"b32", "b32", "pred", "f32"}},
                          [&] {
                            std::vector<Row> r = rows;
                            for (Row& x : r) x.push_back(x[0] == 5 ? 0x7fc00000 : 0x3f800000);
                            return r;
                          }());
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t sa = static_cast<int32_t>(rows[i][0]), sb = static_cast<int32_t>(rows[i][1]);
    EXPECT_EQ(got[i][0], sa < sb ? 0xffffffffu : 0u) << i;
    EXPECT_EQ(got[i][1], rows[i][0] < rows[i][1] ? 0x3f800000u : 0u) << i;
    EXPECT_EQ(got[i][2], (rows[i][0] == rows[i][1]) || rows[i][2] == 0 ? 0xffffffffu : 0u) << i;
    EXPECT_EQ(got[i][3], rows[i][0] == 5 ? 0x3f800000u : 0u) << i;  // NaN: unordered is true
  }
}

// set with f16 and bf16 sources, as cuda_fp16.hpp's __hmax2 and friends compile: 1.0 in the
// source's type, or all ones in a 16-bit half, per comparison; pairs compare each half.
TEST(PtxVmCompare, SetOnHalvesAndPairs) {
  std::vector<Row> rows;
  const uint64_t h[] = {0x3c00, 0x4000, 0x7e00, 0x8000, 0x0000, 0xfc00};
  for (uint64_t a0 : h) {
    for (uint64_t b0 : h) rows.push_back({a0 | (b0 << 16), b0 | (a0 << 16), 0});
  }
  const auto got = run_op(OpKernel{"  set.lt.f16x2.f16x2 %d0, %s0, %s1;\n"
                                   "  set.ge.u32.f16x2 %d1, %s0, %s1;\n"
                                   "  set.ltu.bf16x2.bf16x2 %d2, %s0, %s1;\n"
                                   "  mov.b32 {%hh0, %hh1}, %s0;\n"
                                   "  mov.b32 {%hh2, %hh3}, %s1;\n"
                                   "  set.lt.f16.f16 %d3, %hh0, %hh2;\n"
                                   "  set.lt.u16.f16 %d4, %hh1, %hh3;\n"
                                   "  set.lt.u32.f16 %d5, %hh0, %hh2;\n"
                                   "  set.ne.f16.u32 %d6, %s0, %s1;",
                                   {"b32", "b32", "b32", "b16", "b16", "b32", "b16"},
                                   {"b32", "b32"},
                                   80,
                                   "  .reg .b16 %hh<4>;\n"},
                          rows);
  const Type f16 = kTypes[11], bf16 = kTypes[12];
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint64_t alo = rows[i][0] & 0xffff, ahi = rows[i][0] >> 16;
    const uint64_t blo = rows[i][1] & 0xffff, bhi = rows[i][1] >> 16;
    const auto pair = [](bool lo, bool hi, uint64_t one) {
      return (lo ? one : 0) | (hi ? one : 0) << 16;
    };
    EXPECT_EQ(got[i][0], pair(ref_compare("lt", alo, blo, f16, false),
                              ref_compare("lt", ahi, bhi, f16, false), 0x3c00))
        << row_text(rows[i]);
    EXPECT_EQ(got[i][1], pair(ref_compare("ge", alo, blo, f16, false),
                              ref_compare("ge", ahi, bhi, f16, false), 0xffff))
        << row_text(rows[i]);
    EXPECT_EQ(got[i][2], pair(ref_compare("ltu", alo, blo, bf16, false),
                              ref_compare("ltu", ahi, bhi, bf16, false), 0x3f80))
        << row_text(rows[i]);
    EXPECT_EQ(got[i][3], ref_compare("lt", alo, blo, f16, false) ? 0x3c00u : 0u) << i;
    EXPECT_EQ(got[i][4], ref_compare("lt", ahi, bhi, f16, false) ? 0xffffu : 0u) << i;
    EXPECT_EQ(got[i][5], ref_compare("lt", alo, blo, f16, false) ? 0xffffffffu : 0u) << i;
    EXPECT_EQ(got[i][6], rows[i][0] != rows[i][1] ? 0x3c00u : 0u) << i;  // .f16 from any source
  }
}

// slct: a where c >= 0, else b. -0.0 >= 0; a NaN selector chooses b; .ftz makes subnormal
// selectors zero.
TEST(PtxVmCompare, Slct) {
  const std::vector<uint64_t> sel = {0,          0x80000000, 1,          0x80000001, 0x3f800000,
                                     0xbf800000, 0x7fc00000, 0xffc00000, 0x7f800000, 0xff800000};
  std::vector<Row> rows;
  for (uint64_t c : sel) rows.push_back({0x1111222233334444ull, 0x5555666677778888ull, c});
  const auto got = run_op(OpKernel{"  slct.b64.f32 %d0, %s0, %s1, %s2;\n"
                                   "  slct.ftz.b64.f32 %d1, %s0, %s1, %s2;\n"
                                   "  slct.b64.s32 %d2, %s0, %s1, %s2;\n"
                                   "  cvt.u16.u64 %t0, %s0;\n  cvt.u16.u64 %t1, %s1;\n"
                                   "  slct.u16.s32 %d3, %t0, %t1, %s2;",
                                   {"b64", "b64", "b64", "b16"},
                                   {"b64", "b64", "f32"},
                                   80,
                                   "  .reg .b16 %t<2>;\n"},
                          rows);
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint64_t c = rows[i][2];
    const float f = bits_float(c);
    const bool sub = (c & 0x7f800000) == 0;
    const uint64_t a = rows[i][0], b = rows[i][1];
    EXPECT_EQ(got[i][0], f >= 0 ? a : b) << hex(c);
    EXPECT_EQ(got[i][1], (sub || f >= 0) ? a : b) << hex(c);
    EXPECT_EQ(got[i][2], static_cast<int32_t>(c) >= 0 ? a : b) << hex(c);
    EXPECT_EQ(got[i][3], (static_cast<int32_t>(c) >= 0 ? a : b) & 0xffff) << hex(c);
  }
}

// ---- mov and selp -----------------------------------------------------------------------------

TEST(PtxVmMove, VectorPackAndUnpackPutTheFirstElementLow) {
  const std::vector<Row> rows = {{0x11223344, 0xaabbccdd, 0x0102030405060708ull}};
  const auto got = run_op(
      OpKernel{"  mov.b64 %d0, {%s0, %s1};\n"
               "  mov.b64 {%d1, %d2}, %s2;\n"
               "  mov.b32 {%d3, %d4}, %s0;\n"
               "  mov.b32 %d5, {%d4, %d3};\n"
               "  mov.b64 {%d6, %d7, %d8, %d9}, %s2;\n"
               "  mov.b64 %d10, {%d9, %d8, %d7, %d6};\n"
               "  mov.b64 {_, %d11}, %s2;",
               {"b64", "b32", "b32", "b16", "b16", "b32", "b16", "b16", "b16", "b16", "b64", "b32"},
               {"b32", "b32", "b64"}},
      rows);
  EXPECT_EQ(got[0], (Row{0xaabbccdd11223344ull, 0x05060708, 0x01020304, 0x3344, 0x1122, 0x33441122,
                         0x0708, 0x0506, 0x0304, 0x0102, 0x0708050603040102ull, 0x01020304}));
}

TEST(PtxVmMove, ImmediatesAndPredicates) {
  const auto got =
      run_op(OpKernel{"  mov.b32 %d0, 0f3f800000;\n  mov.f32 %d1, 1.5;\n"
                      "  mov.f64 %d2, 0d3ff8000000000000;\n  mov.u16 %d3, -1;\n"
                      "  mov.s64 %d4, -2;\n  mov.pred %d5, %s0;\n  mov.pred %d6, 1;\n"
                      "  mov.b64 %d7, 0x123456789abcdef0;\n  mov.f32 %d8, 0fff800000;",
                      {"b32", "f32", "f64", "b16", "b64", "pred", "pred", "b64", "f32"},
                      {"pred"}},
             {{0}, {1}});
  for (uint64_t p : {0, 1}) {
    EXPECT_EQ(got[p], (Row{0x3f800000, 0x3fc00000, 0x3ff8000000000000ull, 0xffff,
                           0xfffffffffffffffeull, p, 1, 0x123456789abcdef0ull, 0xff800000}));
  }
}

TEST(PtxVmMove, SpecialRegisters) {
  std::vector<Row> rows(200, Row{});
  const uint32_t block = 96;
  const auto got = run_op(
      OpKernel{"  mov.u32 %d0, %tid.x;\n  mov.u32 %d1, %ntid.x;\n"
               "  mov.u32 %d2, %ctaid.x;\n  mov.u32 %d3, %nctaid.x;\n"
               "  mov.u32 %d4, %laneid;\n  mov.u32 %d5, %lanemask_eq;\n"
               "  mov.u32 %d6, %lanemask_lt;\n  mov.u32 %d7, %lanemask_le;\n"
               "  mov.u32 %d8, %lanemask_gt;\n  mov.u32 %d9, %lanemask_ge;\n"
               "  mov.u32 %d10, %tid.y;\n  mov.u32 %d11, %ntid.z;",
               {"b32", "b32", "b32", "b32", "b32", "b32", "b32", "b32", "b32", "b32", "b32", "b32"},
               {}},
      rows, block);
  for (uint32_t i = 0; i < rows.size(); ++i) {
    const uint32_t tid = i % block, lane = tid % 32;
    const uint32_t eq = 1u << lane;
    EXPECT_EQ(got[i], (Row{tid, block, i / block, (200 + block - 1) / block, lane, eq, eq - 1,
                           eq | (eq - 1), ~(eq | (eq - 1)), ~(eq - 1), 0, 1}))
        << "thread " << i;
  }
}

TEST(PtxVmMove, SelpEveryType) {
  std::vector<Row> rows;
  for (uint64_t c : {0, 1}) rows.push_back({0xaaaaaaaaaaaaaaaaull, 0x5555555555555555ull, c, 1, 0});
  const auto got = run_op(
      OpKernel{"  cvt.u16.u64 %h0, %s0;\n  cvt.u16.u64 %h1, %s1;\n"
               "  cvt.u32.u64 %w0, %s0;\n  cvt.u32.u64 %w1, %s1;\n"
               "  selp.b16 %d0, %h0, %h1, %s2;\n  selp.b32 %d1, %w0, %w1, %s2;\n"
               "  selp.b64 %d2, %s0, %s1, %s2;\n  selp.f32 %d3, 0f3f800000, 0fbf800000, %s2;\n"
               "  selp.pred %d4, %s3, %s4, %s2;\n  selp.s32 %d5, 7, -7, %s2;\n"
               "  selp.f64 %d6, 0d4000000000000000, 0d0000000000000000, %s2;",
               {"b16", "b32", "b64", "f32", "pred", "b32", "f64"},
               {"b64", "b64", "pred", "pred", "pred"},
               80,
               "  .reg .b16 %h<2>;\n  .reg .b32 %w<2>;\n"},
      rows);
  EXPECT_EQ(got[0], (Row{0x5555, 0x55555555, 0x5555555555555555ull, 0xbf800000, 0, 0xfffffff9, 0}));
  EXPECT_EQ(got[1], (Row{0xaaaa, 0xaaaaaaaa, 0xaaaaaaaaaaaaaaaaull, 0x3f800000, 1, 7,
                         0x4000000000000000ull}));
}

}  // namespace
}  // namespace ptx_vm_test
