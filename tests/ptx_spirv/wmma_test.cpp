// wmma, run two ways: each case is a kernel in which every warp loads A, B and C tiles of its
// own from global memory (or A through shared memory), multiplies them with wmma.mma, stores D,
// and also writes the registers of the A and D fragments as they are. It runs through the
// translator on the first Vulkan device and on the CPU PTX device (the reference), on the same
// inputs, and every byte written must be the same: the products (summed in k order, as both
// devices sum), and the fragments, whose layout is hal's on both (ptx/wmma_layout.h). The cases
// cover every multiplicand type and shape the translation takes, both layouts of each matrix,
// strides given and not, f16 and f32 accumulators, and .satfinite.
#include <gtest/gtest.h>
#include <hal/hal.h>

#include "two_devices.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kWarps = 4;  // 2 blocks of 2 warps

enum class Ty { kF16, kBF16, kTf32, kF32, kS32, kS8, kU8 };

const char* name(Ty t) {
  switch (t) {
    case Ty::kF16:
      return "f16";
    case Ty::kBF16:
      return "bf16";
    case Ty::kTf32:
      return "tf32";
    case Ty::kF32:
      return "f32";
    case Ty::kS32:
      return "s32";
    case Ty::kS8:
      return "s8";
    default:
      return "u8";
  }
}
uint32_t bytes(Ty t) {
  return t == Ty::kS8 || t == Ty::kU8 ? 1 : t == Ty::kF16 || t == Ty::kBF16 ? 2 : 4;
}

struct Case {
  uint32_t m, n, k;
  Ty a, b, c, d;
  bool a_col = false, b_col = true, c_col = false, d_col = false;
  uint32_t pad = 0;  // 0: no stride operand; else each stride is the matrix's own plus pad
  bool satfinite = false;
  bool a_shared = false;  // A is copied to shared memory and loaded from there
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "m" << c.m << "n" << c.n << "k" << c.k << " " << name(c.a) << "x" << name(c.b) << " C "
    << name(c.c) << " D " << name(c.d) << (c.a_col ? " A col" : " A row")
    << (c.b_col ? " B col" : " B row") << (c.c_col ? " C col" : "") << (c.d_col ? " D col" : "")
    << (c.pad ? " strided" : "") << (c.satfinite ? " satfinite" : "")
    << (c.a_shared ? " A shared" : "");
  return s.str();
}

// A matrix in memory: rows x cols with a leading dimension.
struct Matrix {
  uint32_t rows, cols;
  bool col_major;
  uint32_t pad;
  uint32_t stride() const { return (col_major ? rows : cols) + pad; }
  uint32_t elements() const { return (col_major ? cols : rows) * stride(); }
};

// Registers of a fragment: f16 multiplicands hold 16 elements a lane, the rest rows*cols/32;
// a register holds 4 / bytes of them.
uint32_t fragment_registers(const Matrix& m, Ty t, bool multiplicand) {
  const uint32_t per_lane = t == Ty::kF16 && multiplicand ? 16 : m.rows * m.cols / 32;
  return per_lane / (4 / bytes(t));
}

std::string regs(const std::string& prefix, uint32_t count) {
  std::ostringstream s;
  s << "{";
  for (uint32_t i = 0; i < count; ++i) s << (i ? ", " : "") << prefix << i;
  s << "}";
  return s.str();
}

struct Built {
  std::string ptx;
  Matrix a, b, c, d;
  uint32_t a_regs, d_regs;
};

// The kernel k(a, b, c, d, frag): warp w's tiles start at w times a tile's elements; frag gets,
// per thread, its A registers then its D registers.
Built build(const Case& cs) {
  Built out;
  out.a = {cs.m, cs.k, cs.a_col, cs.pad};
  out.b = {cs.k, cs.n, cs.b_col, cs.pad};
  out.c = {cs.m, cs.n, cs.c_col, cs.pad};
  out.d = {cs.m, cs.n, cs.d_col, cs.pad};
  out.a_regs = fragment_registers(out.a, cs.a, true);
  const uint32_t b_regs = fragment_registers(out.b, cs.b, true);
  const uint32_t c_regs = fragment_registers(out.c, cs.c, false);
  out.d_regs = fragment_registers(out.d, cs.d, false);
  std::ostringstream shape_text;
  shape_text << "m" << cs.m << "n" << cs.n << "k" << cs.k;
  const std::string shape = shape_text.str();
  auto reg_prefix = [](Ty t, char which) {
    std::string prefix = t == Ty::kF32 ? "%f" : "%r";
    prefix.push_back(which);
    return prefix;
  };
  auto stride = [&](const Matrix& m) {
    return cs.pad ? ", " + std::to_string(m.stride()) : std::string();
  };
  std::ostringstream p;
  p << ".version 8.0\n.target sm_80\n.address_size 64\n"
    << ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, "
       ".param .u64 pf)\n{\n"
    << "  .reg .b32 %ra<20>, %rb<20>, %rc<20>, %rd<20>, %t<8>;\n"
    << "  .reg .f32 %fc<20>, %fd<20>;\n  .reg .b64 %x<12>;\n  .reg .pred %p<2>;\n"
    << "  .shared .align 16 .b8 tile[" << 2 * out.a.elements() * bytes(cs.a) << "];\n"
    << "  mov.u32 %t0, %tid.x;\n  shr.u32 %t1, %t0, 5;\n  mov.u32 %t2, %ctaid.x;\n"
    << "  shl.b32 %t3, %t2, 1;\n  add.u32 %t3, %t3, %t1;\n";  // t3: the warp's global index
  auto tile = [&](const char* param, const Matrix& m, Ty t, int reg) {
    p << "  ld.param.u64 %x" << reg << ", [" << param << "];\n  mul.wide.u32 %x" << reg + 1
      << ", %t3, " << m.elements() * bytes(t) << ";\n  add.s64 %x" << reg << ", %x" << reg << ", %x"
      << reg + 1 << ";\n";
  };
  tile("pa", out.a, cs.a, 0);
  tile("pb", out.b, cs.b, 2);
  tile("pc", out.c, cs.c, 4);
  tile("pd", out.d, cs.d, 6);
  const char* a_layout = cs.a_col ? "col" : "row";
  const char* b_layout = cs.b_col ? "col" : "row";
  if (cs.a_shared) {
    // Copy this warp's A tile into its half of |tile|, word by word, then load it from there.
    const uint32_t words = out.a.elements() * bytes(cs.a) / 4;
    p << "  and.b32 %t4, %t0, 31;\n  mov.u32 %t5, tile;\n  mul.lo.u32 %t6, %t1, " << words * 4
      << ";\n  add.u32 %t5, %t5, %t6;\n"
      << "COPY:\n  setp.ge.u32 %p0, %t4, " << words << ";\n  @%p0 bra COPIED;\n"
      << "  mul.wide.u32 %x8, %t4, 4;\n  add.s64 %x9, %x0, %x8;\n  ld.global.u32 %t6, [%x9];\n"
      << "  shl.b32 %t7, %t4, 2;\n  add.u32 %t7, %t5, %t7;\n  st.shared.u32 [%t7], %t6;\n"
      << "  add.u32 %t4, %t4, 32;\n  bra COPY;\nCOPIED:\n  bar.sync 0;\n"
      << "  wmma.load.a.sync.aligned." << a_layout << "." << shape << ".shared." << name(cs.a)
      << " " << regs("%ra", out.a_regs) << ", [%t5]" << stride(out.a) << ";\n";
  } else {
    p << "  wmma.load.a.sync.aligned." << a_layout << "." << shape << ".global." << name(cs.a)
      << " " << regs("%ra", out.a_regs) << ", [%x0]" << stride(out.a) << ";\n";
  }
  // B through a generic address (no state space named).
  p << "  wmma.load.b.sync.aligned." << b_layout << "." << shape << "." << name(cs.b) << " "
    << regs("%rb", b_regs) << ", [%x2]" << stride(out.b) << ";\n";
  p << "  wmma.load.c.sync.aligned." << (cs.c_col ? "col" : "row") << "." << shape << ".global."
    << name(cs.c) << " " << regs(reg_prefix(cs.c, 'c'), c_regs) << ", [%x4]" << stride(out.c)
    << ";\n";
  p << "  wmma.mma.sync.aligned." << a_layout << "." << b_layout << "." << shape;
  if (cs.a == Ty::kF16) {
    p << "." << name(cs.d) << "." << name(cs.c);
  } else {
    p << "." << name(cs.d) << "." << name(cs.a) << "." << name(cs.b) << "." << name(cs.c);
  }
  if (cs.satfinite) p << ".satfinite";
  p << " " << regs(reg_prefix(cs.d, 'd'), out.d_regs) << ", " << regs("%ra", out.a_regs) << ", "
    << regs("%rb", b_regs) << ", " << regs(reg_prefix(cs.c, 'c'), c_regs) << ";\n";
  p << "  wmma.store.d.sync.aligned." << (cs.d_col ? "col" : "row") << "." << shape << ".global."
    << name(cs.d) << " [%x6], " << regs(reg_prefix(cs.d, 'd'), out.d_regs) << stride(out.d)
    << ";\n";
  // The fragments as they are: thread (2 * ctaid + warp) * 32 + lane's A then D registers.
  const uint32_t per_thread = out.a_regs + out.d_regs;
  p << "  ld.param.u64 %x8, [pf];\n  mov.u32 %t6, %ctaid.x;\n  shl.b32 %t6, %t6, 6;\n"
    << "  add.u32 %t6, %t6, %t0;\n  mul.wide.u32 %x9, %t6, " << per_thread * 4
    << ";\n  add.s64 %x8, %x8, %x9;\n";
  for (uint32_t i = 0; i < out.a_regs; ++i) {
    p << "  st.global.b32 [%x8+" << 4 * i << "], %ra" << i << ";\n";
  }
  for (uint32_t i = 0; i < out.d_regs; ++i) {
    p << "  st.global.b32 [%x8+" << 4 * (out.a_regs + i) << "], " << reg_prefix(cs.d, 'd') << i
      << ";\n";
  }
  p << "  ret;\n}\n";
  out.ptx = p.str();
  return out;
}

// Random element bits that keep every product and sum finite and normal in f32: f16 and bf16
// of magnitude 2^-4 to 2^3, tf32 and f32 of magnitude 2^-4 to 2^4, integers of any value.
std::vector<uint8_t> fill(Ty t, uint32_t elements, std::mt19937& rng) {
  std::vector<uint8_t> out(size_t{elements} * bytes(t));
  for (uint32_t i = 0; i < elements; ++i) {
    const uint32_t r = rng(), sign = r >> 31;
    uint32_t bits = 0;
    switch (t) {
      case Ty::kF16:
        bits = sign << 15 | (11 + r % 8) << 10 | (r >> 8 & 0x3FF);
        break;
      case Ty::kBF16:
        bits = sign << 15 | (123 + r % 8) << 7 | (r >> 8 & 0x7F);
        break;
      case Ty::kTf32:  // low fraction bits set too: the instruction must ignore them
      case Ty::kF32:
        bits = sign << 31 | (123 + r % 9) << 23 | (static_cast<uint32_t>(rng()) & 0x7FFFFF);
        break;
      default:
        bits = r;
        break;
    }
    std::memcpy(&out[size_t{i} * bytes(t)], &bits, bytes(t));  // little-endian: the low bytes
  }
  return out;
}

class Wmma : public ptx_spirv_testing::TwoDevices {
 protected:
  // Runs |cs| on both devices; every byte of D and of the fragments must agree.
  void Check(const Case& cs) {
    SCOPED_TRACE(describe(cs));
    const Built built = build(cs);
    std::mt19937 rng(cs.m * 131 + cs.n * 17 + cs.k + static_cast<uint32_t>(cs.a) * 7 + cs.pad);
    const std::vector<uint8_t> a = fill(cs.a, built.a.elements() * kWarps, rng);
    const std::vector<uint8_t> bm = fill(cs.b, built.b.elements() * kWarps, rng);
    std::vector<uint8_t> c = fill(cs.c, built.c.elements() * kWarps, rng);
    if (cs.satfinite) {
      // Accumulators near the ends of the s32 range, so that some sums leave it.
      for (size_t i = 0; i < c.size(); i += 4) c[i + 3] = i % 8 == 0 ? 0x7F : 0x80;
    }
    const size_t d_bytes = size_t{built.d.elements()} * kWarps * bytes(cs.d);
    const size_t f_bytes = size_t{built.a_regs + built.d_regs} * 32 * kWarps * 4;
    std::vector<std::vector<uint8_t>> d_out, f_out;
    for (ptx_spirv_testing::Device* dev : {&cpu_, &vulkan_}) {
      hal_module module = nullptr;
      hal_function f = nullptr;
      ASSERT_EQ(hal_module_load(dev->device, built.ptx.data(), built.ptx.size(), nullptr, &module),
                HAL_SUCCESS)
          << hal_last_error() << "\n"
          << built.ptx;
      ASSERT_EQ(hal_module_get_function(module, "k", &f), HAL_SUCCESS) << hal_last_error();
      hal_deviceptr p[5] = {};
      const std::vector<uint8_t>* inputs[3] = {&a, &bm, &c};
      const size_t sizes[5] = {a.size(), bm.size(), c.size(), d_bytes, f_bytes};
      for (int i = 0; i < 5; ++i) {
        ASSERT_EQ(hal_mem_alloc(dev->device, sizes[i], &p[i]), HAL_SUCCESS) << hal_last_error();
        if (i < 3) {
          EXPECT_EQ(hal_memcpy_htod(dev->stream, p[i], inputs[i]->data(), sizes[i]), HAL_SUCCESS);
        } else {  // a pattern that must survive where nothing is stored
          EXPECT_EQ(hal_memset_d8(dev->stream, p[i], 0xA5, sizes[i]), HAL_SUCCESS);
        }
      }
      void* args[] = {&p[0], &p[1], &p[2], &p[3], &p[4]};
      const hal_launch_config config{{kWarps / 2, 1, 1}, {64, 1, 1}, 0};
      EXPECT_EQ(hal_launch(dev->stream, f, &config, args), HAL_SUCCESS) << hal_last_error();
      std::vector<uint8_t> d(d_bytes), frag(f_bytes);
      EXPECT_EQ(hal_memcpy_dtoh(dev->stream, d.data(), p[3], d_bytes), HAL_SUCCESS);
      EXPECT_EQ(hal_memcpy_dtoh(dev->stream, frag.data(), p[4], f_bytes), HAL_SUCCESS);
      EXPECT_EQ(hal_stream_synchronize(dev->stream), HAL_SUCCESS) << hal_last_error();
      for (hal_deviceptr q : p) hal_mem_free(dev->device, q);
      hal_module_unload(module);
      d_out.push_back(d);
      f_out.push_back(frag);
    }
    ExpectProducts(cs, built, a, bm, c, d_out[0]);
    ExpectSame("D", d_out[0], d_out[1], bytes(cs.d));
    ExpectSame("fragment registers", f_out[0], f_out[1], 4);
  }

  // The reference device's D against the host's A B + C, so that the comparison is with
  // products and not with something both devices got wrong alike.
  static void ExpectProducts(const Case& cs, const Built& built, const std::vector<uint8_t>& a,
                             const std::vector<uint8_t>& bm, const std::vector<uint8_t>& c,
                             const std::vector<uint8_t>& d) {
    auto at = [](const Matrix& m, uint32_t warp, uint32_t r, uint32_t col) {
      return size_t{warp} * m.elements() +
             (m.col_major ? size_t{col} * m.stride() + r : size_t{r} * m.stride() + col);
    };
    auto value = [](const std::vector<uint8_t>& v, size_t i, Ty t) -> double {
      uint32_t bits = 0;
      std::memcpy(&bits, &v[i * bytes(t)], bytes(t));
      switch (t) {
        case Ty::kF16:
        case Ty::kBF16: {
          const bool half = t == Ty::kF16;
          const int fraction_bits = half ? 10 : 7, bias = half ? 15 : 127;
          const uint32_t exponent = (bits >> fraction_bits) & (half ? 0x1F : 0xFF);
          const double magnitude =
              std::ldexp(1.0 + (bits & ((1u << fraction_bits) - 1)) / double(1u << fraction_bits),
                         static_cast<int>(exponent) - bias);  // normal numbers only (fill)
          return (bits >> 15) & 1 ? -magnitude : magnitude;
        }
        case Ty::kTf32:
          bits &= 0xFFFFE000u;
          [[fallthrough]];
        case Ty::kF32: {
          float f;
          std::memcpy(&f, &bits, 4);
          return f;
        }
        case Ty::kS8:
          return static_cast<int8_t>(bits);
        case Ty::kU8:
          return static_cast<uint8_t>(bits);
        default:
          return static_cast<int32_t>(bits);
      }
    };
    int reported = 0;
    for (uint32_t w = 0; w < kWarps; ++w) {
      for (uint32_t r = 0; r < cs.m; ++r) {
        for (uint32_t col = 0; col < cs.n && reported < 4; ++col) {
          double sum = value(c, at(built.c, w, r, col), cs.c), magnitude = std::fabs(sum);
          for (uint32_t q = 0; q < cs.k; ++q) {
            const double p =
                value(a, at(built.a, w, r, q), cs.a) * value(bm, at(built.b, w, q, col), cs.b);
            sum += p;
            magnitude += std::fabs(p);
          }
          const double got = value(d, at(built.d, w, r, col), cs.d);
          double want = sum, tolerance = 0;
          if (cs.d == Ty::kS32) {
            want = cs.satfinite ? std::fmin(std::fmax(sum, -2147483648.0), 2147483647.0)
                                : static_cast<double>(static_cast<int32_t>(
                                      static_cast<uint32_t>(static_cast<int64_t>(sum))));
          } else {
            tolerance = magnitude * (cs.d == Ty::kF16 ? 2e-3 : 1e-6);
          }
          if (std::fabs(got - want) > tolerance) {
            ++reported;
            ADD_FAILURE() << "warp " << w << " D[" << r << "][" << col << "] is " << got
                          << ", the host's A B + C " << want;
          }
        }
      }
    }
  }

  static void ExpectSame(const char* what, const std::vector<uint8_t>& cpu,
                         const std::vector<uint8_t>& vk, uint32_t unit) {
    int reported = 0;
    for (size_t i = 0; i + unit <= cpu.size() && reported < 4; i += unit) {
      if (std::memcmp(&cpu[i], &vk[i], unit) == 0) continue;
      uint32_t x = 0, y = 0;
      std::memcpy(&x, &cpu[i], unit);
      std::memcpy(&y, &vk[i], unit);
      ++reported;
      ADD_FAILURE() << what << " at byte " << i << ": the CPU PTX device 0x" << std::hex << x
                    << ", Vulkan 0x" << y;
    }
  }
};

TEST_F(Wmma, F16OnEveryShape) {
  for (const auto& [m, n] : {std::pair{16u, 16u}, {32u, 8u}, {8u, 32u}}) {
    Check({m, n, 16, Ty::kF16, Ty::kF16, Ty::kF32, Ty::kF32});
  }
}

TEST_F(Wmma, F16LayoutsStridesAndAccumulators) {
  Check({16, 16, 16, Ty::kF16, Ty::kF16, Ty::kF32, Ty::kF32, true, false, true, true, 8});
  Check({16, 16, 16, Ty::kF16, Ty::kF16, Ty::kF16, Ty::kF16, false, true, false, false, 0});
  Check({32, 8, 16, Ty::kF16, Ty::kF16, Ty::kF16, Ty::kF32, false, false, true, false, 16});
  Check({8, 32, 16, Ty::kF16, Ty::kF16, Ty::kF32, Ty::kF16, true, true, false, true, 8});
}

TEST_F(Wmma, Bf16AndTf32) {
  Check({16, 16, 16, Ty::kBF16, Ty::kBF16, Ty::kF32, Ty::kF32});
  Check({32, 8, 16, Ty::kBF16, Ty::kBF16, Ty::kF32, Ty::kF32, true, false, false, false, 8});
  Check({16, 16, 8, Ty::kTf32, Ty::kTf32, Ty::kF32, Ty::kF32});
  Check({16, 16, 8, Ty::kTf32, Ty::kTf32, Ty::kF32, Ty::kF32, true, false, true, true, 4});
}

TEST_F(Wmma, Integers) {
  Check({16, 16, 16, Ty::kS8, Ty::kS8, Ty::kS32, Ty::kS32});
  Check({8, 32, 16, Ty::kU8, Ty::kS8, Ty::kS32, Ty::kS32, false, false, false, false, 4});
  Check({32, 8, 16, Ty::kS8, Ty::kU8, Ty::kS32, Ty::kS32, true, true, false, false, 0, true});
  Check({16, 16, 16, Ty::kU8, Ty::kU8, Ty::kS32, Ty::kS32, false, true, false, false, 0, true});
}

TEST_F(Wmma, MultiplicandFromSharedMemory) {
  Check({16, 16, 16, Ty::kF16, Ty::kF16, Ty::kF32, Ty::kF32, false, true, false, false, 0, false,
         true});
  Check({16, 16, 8, Ty::kTf32, Ty::kTf32, Ty::kF32, Ty::kF32, true, true, false, false, 4, false,
         true});
}

}  // namespace
