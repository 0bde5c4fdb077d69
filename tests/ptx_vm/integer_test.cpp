// Integer arithmetic, logic, shifts and bit manipulation (ops_int.cpp), each instruction form run
// over edge values and random ones and compared bit for bit with the PTX ISA's definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "op_test_util.h"

namespace ptx_vm_test {
namespace {

using Fn = std::function<Row(const Row&)>;

uint64_t mask_of(int bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}
uint64_t trunc(uint64_t v, int bits) {
  return v & mask_of(bits);
}
int64_t sx(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t m = uint64_t{1} << (bits - 1);
  v &= mask_of(bits);
  return static_cast<int64_t>((v ^ m) - m);
}
__int128 value_of(uint64_t v, int bits, bool is_signed) {
  return is_signed ? static_cast<__int128>(sx(v, bits)) : static_cast<__int128>(trunc(v, bits));
}
// The full product of two |bits|-wide values, as 128-bit two's complement.
unsigned __int128 product_of(uint64_t a, uint64_t b, int bits, bool is_signed) {
  if (is_signed) {
    return static_cast<unsigned __int128>(static_cast<__int128>(sx(a, bits)) * sx(b, bits));
  }
  return static_cast<unsigned __int128>(trunc(a, bits)) * trunc(b, bits);
}

// Edge values of a width, then random ones.
std::vector<uint64_t> values(int bits, int random, uint64_t seed) {
  std::vector<uint64_t> v = {0,
                             1,
                             2,
                             3,
                             7,
                             0x55,
                             mask_of(bits),
                             mask_of(bits) - 1,
                             mask_of(bits - 1),
                             uint64_t{1} << (bits - 1),
                             (uint64_t{1} << (bits - 1)) + 1,
                             0x123456789abcdef0ull,
                             0xfedcba9876543210ull,
                             0x00ffffff,
                             0x00800000,
                             0xff800000};
  Rng rng(seed);
  for (int i = 0; i < random; ++i) v.push_back(rng.next() >> (rng.next() % 64));
  for (uint64_t& x : v) x = trunc(x, bits);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<Row> pairs(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<Row> rows;
  for (uint64_t x : a) {
    for (uint64_t y : b) rows.push_back({x, y});
  }
  return rows;
}

std::vector<Row> triples(int bits, int random, uint64_t seed) {
  const std::vector<uint64_t> v = values(bits, 4, seed);
  std::vector<Row> rows;
  Rng rng(seed * 7 + 1);
  for (uint64_t x : v) {
    for (uint64_t y : v) rows.push_back({x, y, v[rng.next() % v.size()]});
  }
  for (int i = 0; i < random; ++i) {
    rows.push_back({trunc(rng.next(), bits), trunc(rng.next(), bits), trunc(rng.next(), bits)});
  }
  return rows;
}

// Runs |k| over |cases| and compares every destination with |ref|.
void check(const OpKernel& k, const std::vector<Row>& cases, const Fn& ref) {
  SCOPED_TRACE(k.body);
  const std::vector<Row> got = run_op(k, cases);
  int reported = 0;
  for (size_t c = 0; c < cases.size() && c < got.size(); ++c) {
    const Row want = ref(cases[c]);
    if (got[c] != want && reported++ < 8) {
      ADD_FAILURE() << "operands " << row_text(cases[c]) << ": got " << row_text(got[c])
                    << ", want " << row_text(want);
    }
  }
}

std::string bty(int bits) {
  return "b" + std::to_string(bits);
}
std::string ity(bool s, int bits) {
  return (s ? "s" : "u") + std::to_string(bits);
}

OpKernel unary_form(const std::string& ins, const std::string& dt, const std::string& st) {
  return OpKernel{"  " + ins + " %d0, %s0;", {dt}, {st}};
}
OpKernel binary_form(const std::string& ins, const std::string& dt, const std::string& at,
                     const std::string& bt) {
  return OpKernel{"  " + ins + " %d0, %s0, %s1;", {dt}, {at, bt}};
}
OpKernel ternary_form(const std::string& ins, const std::string& dt, const std::string& at,
                      const std::string& bt, const std::string& ct) {
  return OpKernel{"  " + ins + " %d0, %s0, %s1, %s2;", {dt}, {at, bt, ct}};
}

// ---- add, sub, mul, mad ---------------------------------------------------------------------

TEST(PtxVmInteger, AddSubWrapAround) {
  for (int bits : {16, 32, 64}) {
    for (bool s : {false, true}) {
      const auto v = values(bits, 10, bits + s);
      const std::string t = ity(s, bits);
      check(binary_form("add." + t, bty(bits), bty(bits), bty(bits)), pairs(v, v),
            [&](const Row& r) { return Row{trunc(r[0] + r[1], bits)}; });
      check(binary_form("sub." + t, bty(bits), bty(bits), bty(bits)), pairs(v, v),
            [&](const Row& r) { return Row{trunc(r[0] - r[1], bits)}; });
    }
  }
}

TEST(PtxVmInteger, AddSubSaturateS32) {
  const auto v = values(32, 20, 3);
  const auto clamp = [](__int128 x) {
    return trunc(
        static_cast<uint64_t>(static_cast<int64_t>(std::clamp<__int128>(x, INT32_MIN, INT32_MAX))),
        32);
  };
  check(binary_form("add.sat.s32", "b32", "b32", "b32"), pairs(v, v),
        [&](const Row& r) { return Row{clamp(__int128{sx(r[0], 32)} + sx(r[1], 32))}; });
  check(binary_form("sub.sat.s32", "b32", "b32", "b32"), pairs(v, v),
        [&](const Row& r) { return Row{clamp(__int128{sx(r[0], 32)} - sx(r[1], 32))}; });
}

TEST(PtxVmInteger, MulLoHiWide) {
  for (int bits : {16, 32, 64}) {
    for (bool s : {false, true}) {
      const auto v = values(bits, 12, 40 + bits + s);
      const std::string t = ity(s, bits);
      const auto product = [=](const Row& r) { return product_of(r[0], r[1], bits, s); };
      check(binary_form("mul.lo." + t, bty(bits), bty(bits), bty(bits)), pairs(v, v),
            [&](const Row& r) { return Row{trunc(static_cast<uint64_t>(product(r)), bits)}; });
      check(binary_form("mul.hi." + t, bty(bits), bty(bits), bty(bits)), pairs(v, v),
            [&](const Row& r) {
              return Row{trunc(static_cast<uint64_t>(product(r) >> bits), bits)};
            });
      if (bits < 64) {
        check(
            binary_form("mul.wide." + t, bty(2 * bits), bty(bits), bty(bits)), pairs(v, v),
            [&](const Row& r) { return Row{trunc(static_cast<uint64_t>(product(r)), 2 * bits)}; });
      }
    }
  }
}

TEST(PtxVmInteger, MadLoHiWideAndHiSat) {
  for (int bits : {16, 32, 64}) {
    for (bool s : {false, true}) {
      const std::string t = ity(s, bits);
      const auto rows = triples(bits, 100, 70 + bits + s);
      const auto product = [=](const Row& r) { return product_of(r[0], r[1], bits, s); };
      check(
          ternary_form("mad.lo." + t, bty(bits), bty(bits), bty(bits), bty(bits)), rows,
          [&](const Row& r) { return Row{trunc(static_cast<uint64_t>(product(r)) + r[2], bits)}; });
      check(ternary_form("mad.hi." + t, bty(bits), bty(bits), bty(bits), bty(bits)), rows,
            [&](const Row& r) {
              return Row{trunc(static_cast<uint64_t>(product(r) >> bits) + r[2], bits)};
            });
      if (bits < 64) {
        std::vector<Row> wide = rows;
        Rng rng(bits);
        for (Row& r : wide) r[2] = trunc(rng.next() >> (rng.next() % 64), 2 * bits);
        check(ternary_form("mad.wide." + t, bty(2 * bits), bty(bits), bty(bits), bty(2 * bits)),
              wide, [&](const Row& r) {
                return Row{trunc(static_cast<uint64_t>(product(r)) + r[2], 2 * bits)};
              });
      }
    }
  }
  // mad.hi.sat.s32: the high half plus c, saturated.
  check(ternary_form("mad.hi.sat.s32", "b32", "b32", "b32", "b32"), triples(32, 200, 5),
        [](const Row& r) {
          const __int128 hi = (__int128{sx(r[0], 32)} * sx(r[1], 32)) >> 32;
          const __int128 v = std::clamp<__int128>(hi + sx(r[2], 32), INT32_MIN, INT32_MAX);
          return Row{trunc(static_cast<uint64_t>(static_cast<int64_t>(v)), 32)};
        });
}

TEST(PtxVmInteger, Mul24AndMad24) {
  for (bool s : {false, true}) {
    const std::string t = ity(s, 32);
    const auto rows = triples(32, 150, 11 + s);
    const auto product = [=](const Row& r) {  // the 48-bit product of the low 24 bits
      return value_of(r[0], 24, s) * value_of(r[1], 24, s);
    };
    check(binary_form("mul24.lo." + t, "b32", "b32", "b32"), rows,
          [&](const Row& r) { return Row{trunc(static_cast<uint64_t>(product(r)), 32)}; });
    check(binary_form("mul24.hi." + t, "b32", "b32", "b32"), rows,
          [&](const Row& r) { return Row{trunc(static_cast<uint64_t>(product(r) >> 16), 32)}; });
    check(ternary_form("mad24.lo." + t, "b32", "b32", "b32", "b32"), rows,
          [&](const Row& r) { return Row{trunc(static_cast<uint64_t>(product(r)) + r[2], 32)}; });
    check(ternary_form("mad24.hi." + t, "b32", "b32", "b32", "b32"), rows, [&](const Row& r) {
      return Row{trunc(static_cast<uint64_t>(product(r) >> 16) + r[2], 32)};
    });
  }
  check(ternary_form("mad24.hi.sat.s32", "b32", "b32", "b32", "b32"), triples(32, 150, 99),
        [](const Row& r) {
          const __int128 hi = (__int128{sx(r[0], 24)} * sx(r[1], 24)) >> 16;
          const __int128 t = static_cast<int32_t>(static_cast<uint32_t>(hi));  // t<47..16>
          const __int128 v = std::clamp<__int128>(t + sx(r[2], 32), INT32_MIN, INT32_MAX);
          return Row{trunc(static_cast<uint64_t>(static_cast<int64_t>(v)), 32)};
        });
}

TEST(PtxVmInteger, Sad) {
  for (int bits : {16, 32, 64}) {
    for (bool s : {false, true}) {
      check(ternary_form("sad." + ity(s, bits), bty(bits), bty(bits), bty(bits), bty(bits)),
            triples(bits, 100, 30 + bits + s), [&](const Row& r) {
              const __int128 a = value_of(r[0], bits, s), b = value_of(r[1], bits, s);
              const __int128 diff = a < b ? b - a : a - b;
              return Row{trunc(r[2] + static_cast<uint64_t>(diff), bits)};
            });
    }
  }
}

// Division by zero and the one overflowing signed quotient are undefined in PTX; the
// interpreter must not crash, and gives: a / 0 = all ones, a % 0 = a, MIN / -1 = MIN,
// MIN % -1 = 0.
TEST(PtxVmInteger, DivRemIncludingZeroAndOverflow) {
  for (int bits : {16, 32, 64}) {
    for (bool s : {false, true}) {
      const auto v = values(bits, 10, 50 + bits + s);
      const std::string t = ity(s, bits);
      check(binary_form("div." + t, bty(bits), bty(bits), bty(bits)), pairs(v, v),
            [&](const Row& r) {
              const __int128 a = value_of(r[0], bits, s), b = value_of(r[1], bits, s);
              if (b == 0) return Row{mask_of(bits)};
              return Row{trunc(static_cast<uint64_t>(a / b), bits)};
            });
      check(binary_form("rem." + t, bty(bits), bty(bits), bty(bits)), pairs(v, v),
            [&](const Row& r) {
              const __int128 a = value_of(r[0], bits, s), b = value_of(r[1], bits, s);
              if (b == 0) return Row{trunc(r[0], bits)};
              return Row{trunc(static_cast<uint64_t>(a % b), bits)};
            });
    }
  }
}

TEST(PtxVmInteger, AbsNegMinMax) {
  for (int bits : {16, 32, 64}) {
    const auto v = values(bits, 12, 60 + bits);
    std::vector<Row> ones;
    for (uint64_t x : v) ones.push_back({x});
    const std::string b = bty(bits);
    check(unary_form("abs.s" + std::to_string(bits), b, b), ones, [&](const Row& r) {
      const int64_t a = sx(r[0], bits);
      return Row{trunc(a < 0 ? 0 - r[0] : r[0], bits)};
    });
    check(unary_form("neg.s" + std::to_string(bits), b, b), ones,
          [&](const Row& r) { return Row{trunc(0 - r[0], bits)}; });
    for (bool s : {false, true}) {
      const std::string t = ity(s, bits);
      check(binary_form("min." + t, b, b, b), pairs(v, v), [&](const Row& r) {
        return Row{value_of(r[0], bits, s) < value_of(r[1], bits, s) ? trunc(r[0], bits)
                                                                     : trunc(r[1], bits)};
      });
      check(binary_form("max." + t, b, b, b), pairs(v, v), [&](const Row& r) {
        return Row{value_of(r[0], bits, s) > value_of(r[1], bits, s) ? trunc(r[0], bits)
                                                                     : trunc(r[1], bits)};
      });
    }
  }
  const auto v = values(32, 12, 7);
  check(binary_form("min.relu.s32", "b32", "b32", "b32"), pairs(v, v), [](const Row& r) {
    return Row{trunc(
        static_cast<uint64_t>(std::max<int64_t>(std::min(sx(r[0], 32), sx(r[1], 32)), 0)), 32)};
  });
  check(binary_form("max.relu.s32", "b32", "b32", "b32"), pairs(v, v), [](const Row& r) {
    return Row{trunc(
        static_cast<uint64_t>(std::max<int64_t>(std::max(sx(r[0], 32), sx(r[1], 32)), 0)), 32)};
  });
}

// ---- logic and shifts -------------------------------------------------------------------------

TEST(PtxVmInteger, LogicOps) {
  for (int bits : {16, 32, 64}) {
    const auto v = values(bits, 8, 80 + bits);
    const std::string b = bty(bits);
    check(binary_form("and." + b, b, b, b), pairs(v, v),
          [](const Row& r) { return Row{r[0] & r[1]}; });
    check(binary_form("or." + b, b, b, b), pairs(v, v),
          [](const Row& r) { return Row{r[0] | r[1]}; });
    check(binary_form("xor." + b, b, b, b), pairs(v, v),
          [](const Row& r) { return Row{r[0] ^ r[1]}; });
    std::vector<Row> ones;
    for (uint64_t x : v) ones.push_back({x});
    check(unary_form("not." + b, b, b), ones,
          [&](const Row& r) { return Row{trunc(~r[0], bits)}; });
    check(unary_form("cnot." + b, b, b), ones,
          [](const Row& r) { return Row{r[0] == 0 ? 1u : 0u}; });
  }
}

TEST(PtxVmInteger, PredicateLogicWithNegatedOperands) {
  std::vector<Row> rows;
  for (uint64_t a : {0, 1}) {
    for (uint64_t b : {0, 1}) rows.push_back({a, b});
  }
  struct Case {
    std::string text;
    std::function<bool(bool, bool)> f;
  };
  const Case cases[] = {
      {"and.pred %d0, %s0, %s1;", [](bool a, bool b) { return a && b; }},
      {"or.pred %d0, %s0, %s1;", [](bool a, bool b) { return a || b; }},
      {"xor.pred %d0, %s0, %s1;", [](bool a, bool b) { return a != b; }},
      {"not.pred %d0, %s0;", [](bool a, bool) { return !a; }},
      {"and.pred %d0, !%s0, %s1;", [](bool a, bool b) { return !a && b; }},
      {"or.pred %d0, %s0, !%s1;", [](bool a, bool b) { return a || !b; }},
      {"xor.pred %d0, !%s0, !%s1;", [](bool a, bool b) { return !a != !b; }},
      {"and.pred %d0, %s0, 1;", [](bool a, bool) { return a; }},
  };
  for (const Case& c : cases) {
    check(OpKernel{"  " + c.text, {"pred"}, {"pred", "pred"}}, rows,
          [&](const Row& r) { return Row{c.f(r[0] != 0, r[1] != 0) ? 1u : 0u}; });
  }
}

TEST(PtxVmInteger, ShiftsPastTheWidth) {
  for (int bits : {16, 32, 64}) {
    const auto v = values(bits, 6, 90 + bits);
    std::vector<uint64_t> amounts;
    for (uint64_t n = 0; n <= 70; n += (n < 3 || (n + 2) % 8 < 4) ? 1 : 3) amounts.push_back(n);
    for (uint64_t n : {0x80000000ull, 0xffffffffull, 0x100000010ull}) amounts.push_back(n);
    const std::string b = bty(bits);
    check(binary_form("shl." + b, b, b, "b32"), pairs(v, amounts), [&](const Row& r) {
      const uint64_t n = trunc(r[1], 32);
      return Row{n >= static_cast<uint64_t>(bits) ? 0 : trunc(r[0] << n, bits)};
    });
    check(binary_form("shr.u" + std::to_string(bits), b, b, "b32"), pairs(v, amounts),
          [&](const Row& r) {
            const uint64_t n = trunc(r[1], 32);
            return Row{n >= static_cast<uint64_t>(bits) ? 0 : trunc(r[0], bits) >> n};
          });
    check(binary_form("shr.s" + std::to_string(bits), b, b, "b32"), pairs(v, amounts),
          [&](const Row& r) {
            const uint64_t n = std::min<uint64_t>(trunc(r[1], 32), bits - 1);
            return Row{trunc(static_cast<uint64_t>(sx(r[0], bits) >> n), bits)};
          });
  }
}

TEST(PtxVmInteger, FunnelShiftsInEveryMode) {
  const auto v = values(32, 6, 17);
  std::vector<Row> rows;
  for (uint64_t a : v) {
    for (uint64_t b : {0x0ull, 0x87654321ull, 0xffffffffull}) {
      for (uint64_t c :
           {0ull, 1ull, 4ull, 16ull, 31ull, 32ull, 33ull, 63ull, 64ull, 100ull, 0xffffffffull})
        rows.push_back({a, b, c});
    }
  }
  for (bool right : {false, true}) {
    for (bool clamp : {false, true}) {
      const std::string ins =
          std::string("shf.") + (right ? "r" : "l") + (clamp ? ".clamp" : ".wrap") + ".b32";
      check(ternary_form(ins, "b32", "b32", "b32", "b32"), rows, [&](const Row& r) {
        const uint64_t n = clamp ? std::min<uint64_t>(r[2], 32) : (r[2] & 31);
        const uint64_t both = (r[1] << 32) | r[0];  // b holds bits 63:32
        return Row{right ? trunc(both >> n, 32) : trunc((both << n) >> 32, 32)};
      });
    }
  }
}

TEST(PtxVmInteger, Lop3EveryTable) {
  Rng rng(3);
  std::vector<Row> rows;
  for (int i = 0; i < 8; ++i) rows.push_back({rng.next32(), rng.next32(), rng.next32()});
  rows.push_back({0xf0f0f0f0, 0xcccccccc, 0xaaaaaaaa});
  rows.push_back({0, 0, 0});
  {
    // One kernel with all 256 tables: %d<i> = lop3(a, b, c, i).
    OpKernel k;
    k.src = {"b32", "b32", "b32"};
    for (int lut = 0; lut < 256; ++lut) {
      k.dst.push_back("b32");
      k.body +=
          "  lop3.b32 %d" + std::to_string(lut) + ", %s0, %s1, %s2, " + std::to_string(lut) + ";\n";
    }
    check(k, rows, [](const Row& r) {
      Row out;
      for (uint32_t lut = 0; lut < 256; ++lut) {
        uint64_t d = 0;
        for (int bit = 0; bit < 32; ++bit) {
          const uint32_t index =
              (((r[0] >> bit) & 1) << 2) | (((r[1] >> bit) & 1) << 1) | ((r[2] >> bit) & 1);
          d |= uint64_t{(lut >> index) & 1u} << bit;
        }
        out.push_back(d);
      }
      return out;
    });
  }
  // The ISA's worked examples.
  const Row ex = {0xf0, 0xcc, 0xaa};
  check(OpKernel{"  lop3.b32 %d0, %s0, %s1, %s2, 0x1a;", {"b32"}, {"b32", "b32", "b32"}}, {ex},
        [](const Row&) { return Row{0x1a}; });
}

// lop3.BoolOp: p = (d != 0) BoolOp q.
TEST(PtxVmInteger, Lop3WithPredicateResult) {
  std::vector<Row> rows;
  for (uint64_t a : {0x0ull, 0x10ull, 0xffffffffull}) {
    for (uint64_t q : {0, 1}) rows.push_back({a, 0xffffffff, 0xffffffff, q});
  }
  for (const char* op : {"or", "and"}) {
    check(OpKernel{std::string("  lop3.") + op + ".b32 %d0|%d1, %s0, %s1, %s2, 0x80, %s3;",
                   {"b32", "pred"},
                   {"b32", "b32", "b32", "pred"}},
          rows, [&](const Row& r) {
            const uint64_t d = r[0] & r[1] & r[2];
            const bool p = std::string(op) == "or" ? (d != 0 || r[3] != 0) : (d != 0 && r[3] != 0);
            return Row{d, p ? 1u : 0u};
          });
  }
}

// ---- bit manipulation -------------------------------------------------------------------------

TEST(PtxVmInteger, PopcClzBrevBfind) {
  for (int bits : {32, 64}) {
    const auto v = values(bits, 30, 110 + bits);
    std::vector<Row> ones;
    for (uint64_t x : v) ones.push_back({x});
    const std::string b = bty(bits);
    check(unary_form("popc." + b, "b32", b), ones,
          [](const Row& r) { return Row{static_cast<uint64_t>(__builtin_popcountll(r[0]))}; });
    check(unary_form("clz." + b, "b32", b), ones, [&](const Row& r) {
      uint64_t n = 0;
      for (int i = bits - 1; i >= 0 && ((r[0] >> i) & 1) == 0; --i) ++n;
      return Row{n};
    });
    check(unary_form("brev." + b, b, b), ones, [&](const Row& r) {
      uint64_t d = 0;
      for (int i = 0; i < bits; ++i) d |= ((r[0] >> i) & 1) << (bits - 1 - i);
      return Row{d};
    });
    for (bool s : {false, true}) {
      for (bool shiftamt : {false, true}) {
        check(unary_form(std::string("bfind.") + (shiftamt ? "shiftamt." : "") + ity(s, bits),
                         "b32", b),
              ones, [&](const Row& r) {
                const int msb = bits - 1;
                uint64_t a = r[0];
                if (s && ((a >> msb) & 1)) a = trunc(~a, bits);
                uint64_t d = 0xffffffff;
                for (int i = msb; i >= 0; --i) {
                  if ((a >> i) & 1) {
                    d = static_cast<uint64_t>(i);
                    break;
                  }
                }
                if (shiftamt && d != 0xffffffff) d = msb - d;
                return Row{d};
              });
      }
    }
  }
}

// Positions and lengths past the width, and the 8-bit limit on both.
TEST(PtxVmInteger, BitFieldExtractAndInsert) {
  std::vector<uint64_t> pos_len = {0,  1,  4,  7,  8,  15,  16,  24,  31,    32,
                                   33, 40, 63, 64, 65, 255, 256, 257, 0x1ff, 0xffffffff};
  for (int bits : {32, 64}) {
    const std::vector<uint64_t> sources = {trunc(0x8765432187654321ull, bits),
                                           trunc(0x7edcba987edcba98ull, bits), 0x1, mask_of(bits)};
    std::vector<Row> rows;
    for (uint64_t a : sources) {
      for (uint64_t p : pos_len) {
        for (uint64_t l : pos_len) rows.push_back({a, p, l});
      }
    }
    for (bool s : {false, true}) {
      check(ternary_form("bfe." + ity(s, bits), bty(bits), bty(bits), "b32", "b32"), rows,
            [&](const Row& r) {
              const int msb = bits - 1;
              const uint64_t pos = r[1] & 0xff, len = r[2] & 0xff;
              bool sbit = false;
              if (s && len != 0) sbit = (r[0] >> std::min<uint64_t>(pos + len - 1, msb)) & 1;
              uint64_t d = 0;
              for (uint64_t i = 0; i <= static_cast<uint64_t>(msb); ++i) {
                const bool bit = (i < len && pos + i <= static_cast<uint64_t>(msb))
                                     ? ((r[0] >> (pos + i)) & 1) != 0
                                     : sbit;
                if (bit) d |= uint64_t{1} << i;
              }
              return Row{d};
            });
    }
    std::vector<Row> ins_rows;
    for (uint64_t p : pos_len) {
      for (uint64_t l : pos_len) {
        ins_rows.push_back(
            {trunc(0xfedcba9876543210ull, bits), trunc(0x0f0f0f0f0f0f0f0full, bits), p, l});
      }
    }
    check(OpKernel{"  bfi." + bty(bits) + " %d0, %s0, %s1, %s2, %s3;",
                   {bty(bits)},
                   {bty(bits), bty(bits), "b32", "b32"}},
          ins_rows, [&](const Row& r) {
            const uint64_t pos = r[2] & 0xff, len = r[3] & 0xff;
            uint64_t f = r[1];
            for (uint64_t i = 0; i < len && pos + i <= static_cast<uint64_t>(bits - 1); ++i) {
              f = (f & ~(uint64_t{1} << (pos + i))) | (((r[0] >> i) & 1) << (pos + i));
            }
            return Row{f};
          });
  }
}

// The byte selected by a prmt control nibble (generic mode) or by a mode's table.
uint64_t prmt_ref(uint64_t a, uint64_t b, uint64_t c, int mode) {
  // The modes as the ISA tabulates them: for c[1:0] = 0..3, the source byte of d.b3 d.b2
  // d.b1 d.b0 written as four hex digits.
  static const uint16_t kModes[6][4] = {
      {0x3210, 0x4321, 0x5432, 0x6543},  // f4e
      {0x5670, 0x6701, 0x7012, 0x0123},  // b4e
      {0x0000, 0x1111, 0x2222, 0x3333},  // rc8
      {0x3210, 0x3211, 0x3222, 0x3333},  // ecl
      {0x0000, 0x1110, 0x2210, 0x3210},  // ecr
      {0x1010, 0x3232, 0x1010, 0x3232},  // rc16
  };
  const uint64_t source = (b << 32) | a;
  uint64_t d = 0;
  for (int i = 0; i < 4; ++i) {
    uint64_t sel;
    bool sign = false;
    if (mode == 0) {
      sel = (c >> (4 * i)) & 0xf;
      sign = (sel & 8) != 0;
    } else {
      sel = (kModes[mode - 1][c & 3] >> (4 * i)) & 0xf;
    }
    uint64_t byte = (source >> (8 * (sel & 7))) & 0xff;
    if (sign) byte = (byte & 0x80) ? 0xff : 0;
    d |= byte << (8 * i);
  }
  return d;
}

TEST(PtxVmInteger, PermuteEveryMode) {
  const char* modes[] = {"", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"};
  Rng rng(5);
  std::vector<Row> rows;
  for (uint64_t c = 0; c < 16; ++c) rows.push_back({0x83c201f4, 0x7f80aa55, c});
  for (int i = 0; i < 200; ++i) rows.push_back({rng.next32(), rng.next32(), rng.next32()});
  rows.push_back({0x11223344, 0x55667788, 0x3210});
  rows.push_back({0x11223344, 0x55667788, 0x0123});
  rows.push_back({0x11223344, 0x55667788, 0x7654});
  rows.push_back({0x11223344, 0x55667788, 0x8888});
  for (int m = 0; m < 7; ++m) {
    check(ternary_form(std::string("prmt.b32") + modes[m], "b32", "b32", "b32", "b32"), rows,
          [&](const Row& r) { return Row{prmt_ref(r[0], r[1], r[2], m)}; });
  }
  // An immediate control.
  check(OpKernel{"  prmt.b32 %d0, %s0, %s1, 0x5140;", {"b32"}, {"b32", "b32"}},
        {{0x44332211, 0x88776655}}, [](const Row&) { return Row{0x66225511}; });
}

TEST(PtxVmInteger, FindNthSetBit) {
  std::vector<Row> rows;
  for (uint64_t mask : {0x0ull, 0xaaaaaaaaull, 0x80000001ull, 0xffffffffull, 0x00010000ull}) {
    for (uint64_t base = 0; base < 32; base += 3) {
      for (int64_t off : {-33, -5, -2, -1, 0, 1, 2, 3, 16, 33}) {
        rows.push_back({mask, base, static_cast<uint64_t>(off) & 0xffffffff});
      }
    }
  }
  rows.push_back({0xaaaaaaaa, 31, 1});
  check(ternary_form("fns.b32", "b32", "b32", "b32", "b32"), rows, [](const Row& r) {
    const uint64_t mask = r[0];
    const int64_t base = static_cast<int64_t>(r[1]);
    const int64_t offset = sx(r[2], 32);
    uint64_t d = 0xffffffff;
    if (offset == 0) {
      if ((mask >> base) & 1) d = base;
    } else {
      int64_t pos = base, count = (offset < 0 ? -offset : offset) - 1;
      const int64_t inc = offset > 0 ? 1 : -1;
      while (pos >= 0 && pos < 32) {
        if ((mask >> pos) & 1) {
          if (count == 0) {
            d = static_cast<uint64_t>(pos);
            break;
          }
          --count;
        }
        pos += inc;
      }
    }
    return Row{d};
  });
  // The ISA's examples.
  check(OpKernel{"  fns.b32 %d0, 0xaaaaaaaa, 3, 1;\n  fns.b32 %d1, 0xaaaaaaaa, 3, -1;\n"
                 "  fns.b32 %d2, 0xaaaaaaaa, 2, 1;\n  fns.b32 %d3, 0xaaaaaaaa, 2, -1;",
                 {"b32", "b32", "b32", "b32"},
                 {}},
        {Row{}}, [](const Row&) {
          return Row{3, 3, 3, 1};
        });
}

TEST(PtxVmInteger, DotProducts) {
  Rng rng(9);
  std::vector<Row> rows;
  for (int i = 0; i < 150; ++i) rows.push_back({rng.next32(), rng.next32(), rng.next32()});
  rows.push_back({0x80808080, 0x80808080, 0x7fffffff});
  rows.push_back({0xffffffff, 0xffffffff, 0});
  rows.push_back({0x7f7f7f7f, 0x80808080, 0x80000000});
  for (bool sa : {false, true}) {
    for (bool sb : {false, true}) {
      const std::string types = "." + ity(sa, 32) + "." + ity(sb, 32);
      check(ternary_form("dp4a" + types, "b32", "b32", "b32", "b32"), rows, [&](const Row& r) {
        int64_t d = sx(r[2], 32);
        if (!sa && !sb) d = static_cast<int64_t>(trunc(r[2], 32));
        for (int i = 0; i < 4; ++i) {
          d += static_cast<int64_t>(value_of(r[0] >> (8 * i), 8, sa) *
                                    value_of(r[1] >> (8 * i), 8, sb));
        }
        return Row{trunc(static_cast<uint64_t>(d), 32)};
      });
      for (bool hi : {false, true}) {
        check(ternary_form(std::string("dp2a.") + (hi ? "hi" : "lo") + types, "b32", "b32", "b32",
                           "b32"),
              rows, [&](const Row& r) {
                int64_t d = sx(r[2], 32);
                for (int i = 0; i < 2; ++i) {
                  d += static_cast<int64_t>(value_of(r[0] >> (16 * i), 16, sa) *
                                            value_of(r[1] >> (8 * (i + (hi ? 2 : 0))), 8, sb));
                }
                return Row{trunc(static_cast<uint64_t>(d), 32)};
              });
      }
    }
  }
}

TEST(PtxVmInteger, BitMaskAndSignOrZeroExtend) {
  std::vector<uint64_t> amounts = {0, 1, 2, 5, 16, 30, 31, 32, 33, 63, 64, 0xffffffff};
  std::vector<Row> rows;
  for (uint64_t a : amounts) {
    for (uint64_t b : amounts) rows.push_back({a, b});
  }
  for (bool wrap : {false, true}) {
    check(
        binary_form(std::string("bmsk.") + (wrap ? "wrap" : "clamp") + ".b32", "b32", "b32", "b32"),
        rows, [&](const Row& r) {
          const uint64_t a = r[0], b = r[1];
          const uint64_t a1 = a & 0x1f, b1 = b & 0x1f, sum = a1 + b1;
          uint64_t mask0 = trunc(~uint64_t{0} << a1, 32);
          uint64_t mask1 = sum >= 32 ? 0 : trunc(~uint64_t{0} << sum, 32);
          bool overflow = sum >= 32;
          if (!wrap && a >= 32) {
            overflow = true;
            mask0 = 0;
          }
          if (!wrap && b >= 32) overflow = true;
          if (overflow) {
            mask1 = 0;
          } else if (b1 == 0) {
            mask1 = 0xffffffff;
          }
          return Row{mask0 & trunc(~mask1, 32)};
        });
    std::vector<Row> ext;
    for (uint64_t a :
         {0x0ull, 0x5ull, 0xffffffffull, 0x80000000ull, 0x12345678ull, 0x89abcdefull}) {
      for (uint64_t b : amounts) ext.push_back({a, b});
    }
    for (bool s : {false, true}) {
      check(binary_form(std::string("szext.") + (wrap ? "wrap." : "clamp.") + ity(s, 32), "b32",
                        "b32", "b32"),
            ext, [&](const Row& r) {
              const uint64_t a = r[0], b = r[1];
              const uint64_t b1 = b & 0x1f;
              const bool too_large = b >= 32 && !wrap;
              const uint64_t mask = too_large ? 0 : trunc(~uint64_t{0} << b1, 32);
              const uint64_t sign_pos = (b1 - 1) & 0x1f;
              const bool sign_bit = (b1 == 0 || too_large || !s) ? false : ((a >> sign_pos) & 1);
              return Row{(a & trunc(~mask, 32)) | (sign_bit ? mask : 0)};
            });
    }
  }
  check(
      OpKernel{
          "  bmsk.wrap.b32 %d0, 1, 2;\n  szext.wrap.u32 %d1, 0xffffffff, 0;", {"b32", "b32"}, {}},
      {Row{}}, [](const Row&) {
        return Row{6, 0};
      });
}

// ---- carry chains -----------------------------------------------------------------------------

// 64-bit and 128-bit sums and differences built from 32-bit and 64-bit parts.
TEST(PtxVmInteger, AddAndSubtractWithCarry) {
  Rng rng(21);
  std::vector<Row> rows;
  const uint64_t edges[] = {0,
                            1,
                            0xffffffff,
                            0x100000000ull,
                            0xffffffffffffffffull,
                            0x8000000000000000ull,
                            0x7fffffffffffffffull};
  for (uint64_t a : edges) {
    for (uint64_t b : edges) rows.push_back({a, b});
  }
  for (int i = 0; i < 100; ++i) rows.push_back({rng.next(), rng.next()});
  // 64 bits from two 32-bit halves; the final addc.cc's carry out lands in %d2.
  const std::string split = "  mov.b64 {%t0, %t1}, %s0;\n  mov.b64 {%t2, %t3}, %s1;\n";
  const std::string decls = "  .reg .b32 %t<8>;\n";
  check(
      OpKernel{split + "  add.cc.u32 %t4, %t0, %t2;\n  addc.cc.u32 %t5, %t1, %t3;\n"
                       "  addc.u32 %t6, 0, 0;\n  mov.b64 %d0, {%t4, %t5};\n  cvt.u64.u32 %d1, %t6;",
               {"b64", "b64"},
               {"b64", "b64"},
               80,
               decls},
      rows, [](const Row& r) {
        const unsigned __int128 s = static_cast<unsigned __int128>(r[0]) + r[1];
        return Row{static_cast<uint64_t>(s), static_cast<uint64_t>(s >> 64)};
      });
  check(
      OpKernel{split + "  sub.cc.u32 %t4, %t0, %t2;\n  subc.cc.u32 %t5, %t1, %t3;\n"
                       "  subc.u32 %t6, 0, 0;\n  mov.b64 %d0, {%t4, %t5};\n  cvt.u64.u32 %d1, %t6;",
               {"b64", "b64"},
               {"b64", "b64"},
               80,
               decls},
      rows, [](const Row& r) {
        const uint64_t d = r[0] - r[1];
        return Row{d, r[0] < r[1] ? 0xffffffffull : 0};  // 0 - borrow, in 32 bits
      });
  // 128-bit: (a, a) + (b, b) with 64-bit parts, signed types for the carry forms too.
  check(OpKernel{"  add.cc.s64 %d0, %s0, %s1;\n  addc.cc.s64 %d1, %s0, %s1;\n"
                 "  addc.s64 %d2, 0, 0;",
                 {"b64", "b64", "b64"},
                 {"b64", "b64"}},
        rows, [](const Row& r) {
          const unsigned __int128 lo = static_cast<unsigned __int128>(r[0]) + r[1];
          const unsigned __int128 hi =
              static_cast<unsigned __int128>(r[0]) + r[1] + static_cast<uint64_t>(lo >> 64);
          return Row{static_cast<uint64_t>(lo), static_cast<uint64_t>(hi),
                     static_cast<uint64_t>(hi >> 64)};
        });
  check(OpKernel{"  sub.cc.u64 %d0, %s0, %s1;\n  subc.cc.u64 %d1, %s0, %s1;\n"
                 "  subc.u64 %d2, 0, 0;",
                 {"b64", "b64", "b64"},
                 {"b64", "b64"}},
        rows, [](const Row& r) {
          const unsigned __int128 a = (static_cast<unsigned __int128>(r[0]) << 64) | r[0];
          const unsigned __int128 b = (static_cast<unsigned __int128>(r[1]) << 64) | r[1];
          const unsigned __int128 d = a - b;
          return Row{static_cast<uint64_t>(d), static_cast<uint64_t>(d >> 64),
                     a < b ? ~uint64_t{0} : 0};
        });
  // Without .cc the flag is untouched: addc reads the carry of the add.cc two steps back.
  check(OpKernel{"  add.cc.u32 %d0, %s0, %s1;\n  add.u32 %d1, %s0, %s1;\n"
                 "  addc.u32 %d2, 0, 0;",
                 {"b32", "b32", "b32"},
                 {"b32", "b32"}},
        {{0xffffffff, 1}, {1, 2}, {0x80000000, 0x80000000}}, [](const Row& r) {
          const uint64_t s = r[0] + r[1];
          return Row{trunc(s, 32), trunc(s, 32), s >> 32};
        });
}

// The ISA's extended-precision multiply: [r3,r2,r1,r0] = [r5,r4] * [r7,r6], and the signed
// high halves of mad.hi.cc / madc.hi.
TEST(PtxVmInteger, MultiplyAddWithCarry) {
  Rng rng(33);
  std::vector<Row> rows = {
      {0, 0}, {~uint64_t{0}, ~uint64_t{0}}, {0xffffffff, 0xffffffff00000000ull}, {1, ~uint64_t{0}}};
  for (int i = 0; i < 150; ++i) rows.push_back({rng.next(), rng.next()});
  check(OpKernel{"  mov.b64 {%r4, %r5}, %s0;\n  mov.b64 {%r6, %r7}, %s1;\n"
                 "  mul.lo.u32 %r0, %r4, %r6;\n  mul.hi.u32 %r1, %r4, %r6;\n"
                 "  mad.lo.cc.u32 %r1, %r5, %r6, %r1;\n  madc.hi.u32 %r2, %r5, %r6, 0;\n"
                 "  mad.lo.cc.u32 %r1, %r4, %r7, %r1;\n  madc.hi.cc.u32 %r2, %r4, %r7, %r2;\n"
                 "  addc.u32 %r3, 0, 0;\n  mad.lo.cc.u32 %r2, %r5, %r7, %r2;\n"
                 "  madc.hi.u32 %r3, %r5, %r7, %r3;\n"
                 "  mov.b64 %d0, {%r0, %r1};\n  mov.b64 %d1, {%r2, %r3};",
                 {"b64", "b64"},
                 {"b64", "b64"},
                 80,
                 "  .reg .b32 %r<8>;\n"},
        rows, [](const Row& r) {
          const unsigned __int128 p = static_cast<unsigned __int128>(r[0]) * r[1];
          return Row{static_cast<uint64_t>(p), static_cast<uint64_t>(p >> 64)};
        });
  std::vector<Row> small;
  for (int i = 0; i < 120; ++i) {
    small.push_back({rng.next32(), rng.next32(), rng.next32(), rng.next() & 1});
  }
  small.push_back({0x80000000, 0x80000000, 0xffffffff, 1});
  small.push_back({0xffffffff, 0x1, 0x0, 1});
  for (int bits : {32, 64}) {
    for (bool s : {false, true}) {
      for (bool hi : {false, true}) {
        std::vector<Row> cases = small;
        if (bits == 64) {
          for (Row& r : cases) {
            r[0] = (r[0] << 32) ^ rng.next();
            r[1] = (r[1] << 32) ^ rng.next();
            r[2] = (r[2] << 32) ^ rng.next();
          }
        }
        // Set the flag from the row (0 + 0xff..f + cin carries when cin is 1), then madc.cc.
        const std::string t = ity(s, bits), b = bty(bits);
        const std::string mode = hi ? "hi" : "lo";
        const std::string setup = "  add.cc.u32 %t0, %t1, 0xffffffff;\n";  // carry = (%t1 != 0)
        check(OpKernel{"  cvt.u32." + std::string(bits == 32 ? "u32" : "u64") + " %t1, %s3;\n" +
                           setup + "  madc." + mode + ".cc." + t + " %d0, %s0, %s1, %s2;\n" +
                           "  addc.u32 %d1, 0, 0;",
                       {b, "b32"},
                       {b, b, b, b},
                       80,
                       "  .reg .b32 %t<2>;\n"},
              cases, [&](const Row& r) {
                const unsigned __int128 p = product_of(r[0], r[1], bits, s);
                const uint64_t part = trunc(static_cast<uint64_t>(hi ? (p >> bits) : p), bits);
                const unsigned __int128 sum = static_cast<unsigned __int128>(part) +
                                              trunc(r[2], bits) + (trunc(r[3], 32) != 0 ? 1 : 0);
                return Row{trunc(static_cast<uint64_t>(sum), bits),
                           static_cast<uint64_t>(sum >> bits) & 1};
              });
        check(OpKernel{"  mad." + mode + ".cc." + t + " %d0, %s0, %s1, %s2;\n  addc.u32 %d1, 0, 0;",
                       {b, "b32"},
                       {b, b, b}},
              cases, [&](const Row& r) {
                const unsigned __int128 p = product_of(r[0], r[1], bits, s);
                const uint64_t part = trunc(static_cast<uint64_t>(hi ? (p >> bits) : p), bits);
                const unsigned __int128 sum =
                    static_cast<unsigned __int128>(part) + trunc(r[2], bits);
                return Row{trunc(static_cast<uint64_t>(sum), bits),
                           static_cast<uint64_t>(sum >> bits) & 1};
              });
      }
    }
  }
}

// ---- guards, partial warps and immediates ----------------------------------------------------

TEST(PtxVmInteger, GuardedLanesKeepTheirDestination) {
  std::vector<Row> rows;
  for (uint64_t i = 0; i < 77; ++i) rows.push_back({i, 1000 + i, (i * 7) % 3 == 0, 0xabcd0000 + i});
  for (uint32_t block : {32u, 45u, 96u}) {
    const auto got = run_op(
        OpKernel{"  @%s2 add.u32 %d0, %s0, %s1;", {"b32"}, {"b32", "b32", "pred"}}, rows, block);
    for (size_t i = 0; i < rows.size(); ++i) {
      const uint64_t want = rows[i][2] ? rows[i][0] + rows[i][1] : rows[i][3];
      ASSERT_EQ(got[i][0], want) << "case " << i << " block " << block;
    }
    const auto neg = run_op(
        OpKernel{"  @!%s2 shl.b32 %d0, %s0, 3;", {"b32"}, {"b32", "b32", "pred"}}, rows, block);
    for (size_t i = 0; i < rows.size(); ++i) {
      const uint64_t want = !rows[i][2] ? trunc(rows[i][0] << 3, 32) : rows[i][3];
      ASSERT_EQ(neg[i][0], want) << "case " << i << " block " << block;
    }
  }
}

TEST(PtxVmInteger, ImmediateOperands) {
  const std::vector<Row> rows = {{0}, {1}, {0x7fffffff}, {0x80000000}, {0xffffffff}, {12345}};
  check(OpKernel{"  add.s32 %d0, %s0, -5;\n  sub.u32 %d1, 7, %s0;\n  mul.lo.s32 %d2, %s0, 0x10;\n"
                 "  and.b32 %d3, %s0, 0xff00;\n  shr.s32 %d4, %s0, 40;\n"
                 "  min.s32 %d5, %s0, -1;\n  mad.lo.u32 %d6, %s0, 3, 100;\n"
                 "  bfe.u32 %d7, %s0, 4, 8;\n  setp.lt.s32 %d8, %s0, 10;",
                 {"b32", "b32", "b32", "b32", "b32", "b32", "b32", "b32", "pred"},
                 {"b32"}},
        rows, [](const Row& r) {
          const uint64_t a = r[0];
          const int64_t s = sx(a, 32);
          return Row{trunc(a - 5, 32),
                     trunc(7 - a, 32),
                     trunc(a * 16, 32),
                     a & 0xff00,
                     trunc(static_cast<uint64_t>(s >> 31), 32),
                     trunc(static_cast<uint64_t>(std::min<int64_t>(s, -1)), 32),
                     trunc(a * 3 + 100, 32),
                     (a >> 4) & 0xff,
                     s < 10 ? 1u : 0u};
        });
  check(OpKernel{"  add.s64 %d0, %s0, -1;\n  cvt.u32.u64 %t0, %s0;\n"
                 "  mul.wide.s32 %d1, %t0, -2;",
                 {"b64", "b64"},
                 {"b64"},
                 80,
                 "  .reg .b32 %t0;\n"},
        {{0}, {5}, {0x80000000}}, [](const Row& r) {
          return Row{r[0] - 1, static_cast<uint64_t>(sx(r[0], 32) * -2)};
        });
}

// The SIMD video instructions on bytes and half-words, with every type, .sat and the
// accumulating .add, against a per-lane reference; vavrg and operand selectors are refused.
TEST(PtxVmInteger, SimdVideoLanes) {
  Rng rng(77);
  std::vector<Row> rows;
  for (int i = 0; i < 96; ++i) rows.push_back({rng.next32(), rng.next32(), rng.next32()});
  rows.push_back({0x80ff7f00, 0x7f0180ff, 5});
  const char* const ops[] = {"vabsdiff", "vadd", "vsub", "vmin", "vmax"};
  for (uint32_t lanes : {2u, 4u}) {
    const uint32_t bits = 32 / lanes;
    for (int op = 0; op < 5; ++op) {
      for (int types = 0; types < 8; ++types) {
        const bool ds = types & 1, as = types & 2, bs = types & 4;
        for (int mode = 0; mode < 3; ++mode) {  // 0 plain, 1 .sat, 2 .add
          const std::string ins = std::string(ops[op]) + std::to_string(lanes) + "." +
                                  (ds ? "s32" : "u32") + "." + (as ? "s32" : "u32") + "." +
                                  (bs ? "s32" : "u32") + (mode == 1 ? ".sat" : "") +
                                  (mode == 2 ? ".add" : "");
          const auto got = run_op(
              OpKernel{"  " + ins + " %d0, %s0, %s1, %s2;", {"b32"}, {"b32", "b32", "b32"}}, rows);
          for (size_t r = 0; r < rows.size(); ++r) {
            const auto lane = [&](uint64_t v, uint32_t i, bool sign) -> int64_t {
              const int64_t x = static_cast<int64_t>((v >> (i * bits)) & ((1ull << bits) - 1));
              return sign && (x >> (bits - 1)) != 0 ? x - (int64_t{1} << bits) : x;
            };
            const int64_t lo = ds ? -(int64_t{1} << (bits - 1)) : 0;
            const int64_t hi = ds ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
            uint64_t merged = 0;
            int64_t sum = 0;
            for (uint32_t i = 0; i < lanes; ++i) {
              const int64_t a = lane(rows[r][0], i, as), b = lane(rows[r][1], i, bs);
              const int64_t v = op == 0   ? std::llabs(a - b)
                                : op == 1 ? a + b
                                : op == 2 ? a - b
                                : op == 3 ? std::min(a, b)
                                          : std::max(a, b);
              sum += v;
              const int64_t kept = mode == 1 ? std::clamp(v, lo, hi) : v;
              merged |= (static_cast<uint64_t>(kept) & ((1ull << bits) - 1)) << (i * bits);
            }
            const uint64_t want =
                mode == 2 ? static_cast<uint32_t>(static_cast<int64_t>(rows[r][2]) + sum) : merged;
            ASSERT_EQ(got[r][0], want) << ins << " " << row_text(rows[r]);
          }
        }
      }
    }
  }
  const std::pair<const char*, const char*> refusals[] = {
      {"vavrg4.u32.u32.u32 %d0, %s0, %s1, %s2;", "'vavrg4' is not supported"},
      {"vabsdiff4.u32.u32.u32.sat.add %d0, %s0, %s1, %s2;", ".sat cannot be used"},
      {"vabsdiff4.u32.u32.f32 %d0, %s0, %s1, %s2;", "the types are .u32 or .s32"},
  };
  for (const auto& [ins, reason] : refusals) {
    const std::string log = OpVm::load_error(
        op_kernel_ptx(OpKernel{std::string("  ") + ins, {"b32"}, {"b32", "b32", "b32"}}));
    EXPECT_NE(log.find(reason), std::string::npos) << ins << "\n" << log;
  }
}

}  // namespace
}  // namespace ptx_vm_test
