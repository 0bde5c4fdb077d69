// Warp-level matrix instructions: mma.sync, ldmatrix, stmatrix and movmatrix.
//
// Implemented:
//   mma.sync.aligned.<shape>.row.col.<d>.<a>.<b>.<c>
//     m16n8k16  f16 x f16 with f16 or f32 accumulators (any of the four C/D combinations),
//               bf16 x bf16 -> f32, s8/u8 x s8/u8 -> s32 {.satfinite}, f64 (sm_90)
//     m16n8k8   f16 x f16 (C and D of one type), bf16 and tf32 -> f32, f64 (sm_90)
//     m16n8k4   tf32 -> f32, f64 (sm_90)
//     m16n8k32  s8/u8 x s8/u8 -> s32 {.satfinite}
//     m8n8k16   s8/u8 x s8/u8 -> s32 {.satfinite}
//     m8n8k4    f64 {.rn,.rz,.rm,.rp}
//   ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16
//   stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16
//   movmatrix.sync.aligned.m8n8.trans.b16
// Everything else in the family (m8n8k4 with f16 inputs, sub-byte and single-bit integers,
// fp8, sparse and block-scaled forms, the 8-bit ldmatrix/stmatrix shapes) is refused at load
// with the reason.
//
// Each lane's registers hold a fragment of a matrix as PTX ISA's "Matrix Fragments for mma"
// sections lay out: element i of lane l sits at (row, col) given by affine formulas in
// groupID = l / 4 and threadID_in_group = l % 4, packed low to high in the registers. The
// handler gathers the whole warp's fragments into dense A, B and C matrices, computes, and
// scatters D back (so D may alias C or the inputs).
//
// How results are computed (PTX leaves the accumulation order and intermediate rounding of the
// floating-point forms unspecified; this is the order used here):
//   - f16, bf16, tf32 inputs: every product is exact in binary32 (at most 11 significant bits
//     per factor), unless it leaves binary32's exponent range (bf16 and tf32 extremes only).
//     D[m][n] = (((C[m][n] + p_0) + p_1) + ... + p_{K-1}) with
//     p_k = A[m][k] * B[k][n], each addition rounded to binary32, to nearest even. An f16 C is
//     widened exactly first; an f16 D is the binary32 sum rounded once to f16. A NaN result is
//     the canonical NaN. PTX leaves the layout of tf32 in its .b32 register
//     implementation-defined: here it is the binary32 value with the low 13 fraction bits
//     ignored, so a value rounded by cvt.rna.tf32.f32 is used as is and a plain f32 is
//     truncated.
//   - f64: the same order, each step a fused multiply-add in the instruction's rounding mode.
//   - integers: the exact sum of C and the products; .satfinite clamps it to the s32 range,
//     otherwise it wraps modulo 2^32, as PTX specifies.
//
// All of these are .sync.aligned: the whole warp executes them together. A lane of the warp
// that is alive but not executing the instruction (a divergent branch, a false guard) or a warp
// with lanes that exited or were never launched stops the kernel with
// FaultKind::kIllegalInstruction rather than computing with registers a GPU would not read.
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "ptx/mma_layout.h"
#include "ptx_vm/half.h"
#include "ptx_vm/ops_matrix.h"

namespace hal::ptx_vm {
namespace {

using M = ir::Mod;
using O = ir::Opcode;
using T = ir::Type;

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

// ===========================================================================================
// mma
// ===========================================================================================

using ptx::MmaLayout;
using Fragment = ptx::MatrixFragment;
using Shape = ptx::MmaShape;

// The element type of A and B, which picks the handler.
enum class Input : uint8_t { kF16, kBF16, kTf32, kF64, kInt8 };

struct MmaInfo {
  const Shape* shape = nullptr;
  Ref a[8] = {}, b[4] = {}, c[4] = {}, d[4] = {};
  bool c_half = false;  // f16 accumulators (two per register)
  bool d_half = false;
  bool a_signed = false;  // s8 rather than u8
  bool b_signed = false;
  bool satfinite = false;
  int rounding = FE_TONEAREST;  // f64 only
};

// Elements of an input kind per register.
constexpr uint32_t per_register(Input in) {
  switch (in) {
    case Input::kF16:
    case Input::kBF16:
      return 2;
    case Input::kInt8:
      return 4;
    default:
      return 1;
  }
}

template <Input kIn>
using Element = std::conditional_t<kIn == Input::kF64, double,
                                   std::conditional_t<kIn == Input::kInt8, int32_t, float>>;

template <Input kIn>
using Accumulator = std::conditional_t<kIn == Input::kF64, double,
                                       std::conditional_t<kIn == Input::kInt8, int64_t, float>>;

// Unpacks a multiplicand fragment of the whole warp into the dense matrix |out|.
template <Input kIn>
void gather(const Exec& x, const Ref* regs, const Fragment& f, bool is_signed, Element<kIn>* out) {
  constexpr uint32_t kPer = per_register(kIn);
  const uint32_t nregs = f.count / kPer;
  for (uint32_t r = 0; r < nregs; ++r) {
    if constexpr (kIn == Input::kF64) {
      const double* row = x.row<double>(regs[r]);
      for (uint32_t l = 0; l < kWarpSize; ++l) out[f.index[l][r]] = row[l];
    } else {
      const uint32_t* row = x.row<uint32_t>(regs[r]);
      for (uint32_t l = 0; l < kWarpSize; ++l) {
        const uint32_t w = row[l];
        const uint16_t* at = &f.index[l][r * kPer];
        if constexpr (kIn == Input::kF16) {
          out[at[0]] = half_to_float(static_cast<uint16_t>(w));
          out[at[1]] = half_to_float(static_cast<uint16_t>(w >> 16));
        } else if constexpr (kIn == Input::kBF16) {
          out[at[0]] = bf16_to_float(static_cast<uint16_t>(w));
          out[at[1]] = bf16_to_float(static_cast<uint16_t>(w >> 16));
        } else if constexpr (kIn == Input::kTf32) {
          out[at[0]] = bits_float(w & 0xffffe000u);
        } else {
          for (uint32_t e = 0; e < 4; ++e) {
            const uint32_t byte = (w >> (8 * e)) & 0xffu;
            out[at[e]] = is_signed ? static_cast<int32_t>(static_cast<int8_t>(byte))
                                   : static_cast<int32_t>(byte);
          }
        }
      }
    }
  }
}

template <Input kIn>
void mma(Exec& x, const Op& op, uint32_t mask) {
  if (!whole_warp(x, mask, "mma.sync")) return;
  const MmaInfo& info = *static_cast<const MmaInfo*>(op.ext);
  const Shape& s = *info.shape;
  using E = Element<kIn>;
  using Acc = Accumulator<kIn>;
  const uint32_t rows = s.m, cols = s.n, depth = s.k;

  E a[16 * 32];
  E b[32 * 8];
  Acc acc[16 * 8];
  gather<kIn>(x, info.a, s.a, info.a_signed, a);
  gather<kIn>(x, info.b, s.b, info.b_signed, b);

  // C, widened to the accumulator type.
  const Fragment& fc = s.c;
  if constexpr (kIn == Input::kF64) {
    for (uint32_t i = 0; i < fc.count; ++i) {
      const double* row = x.row<double>(info.c[i]);
      for (uint32_t l = 0; l < kWarpSize; ++l) acc[fc.index[l][i]] = row[l];
    }
  } else if constexpr (kIn == Input::kInt8) {
    for (uint32_t i = 0; i < fc.count; ++i) {
      const int32_t* row = x.row<int32_t>(info.c[i]);
      for (uint32_t l = 0; l < kWarpSize; ++l) acc[fc.index[l][i]] = row[l];
    }
  } else if (info.c_half) {
    for (uint32_t i = 0; i < fc.count; ++i) {
      const uint32_t* row = x.row<uint32_t>(info.c[i / 2]);
      const uint32_t shift = 16 * (i % 2);
      for (uint32_t l = 0; l < kWarpSize; ++l) {
        acc[fc.index[l][i]] = half_to_float(static_cast<uint16_t>(row[l] >> shift));
      }
    }
  } else {
    for (uint32_t i = 0; i < fc.count; ++i) {
      const float* row = x.row<float>(info.c[i]);
      for (uint32_t l = 0; l < kWarpSize; ++l) acc[fc.index[l][i]] = row[l];
    }
  }

  // D = A * B + C, summed in k order (see the file comment).
  if constexpr (kIn == Input::kF64) {
    const int saved = std::fegetround();
    if (info.rounding != saved) std::fesetround(info.rounding);
    for (uint32_t m = 0; m < rows; ++m) {
      for (uint32_t n = 0; n < cols; ++n) {
        double sum = acc[m * cols + n];
        for (uint32_t k = 0; k < depth; ++k) sum = std::fma(a[m * depth + k], b[k * cols + n], sum);
        acc[m * cols + n] = sum;
      }
    }
    if (info.rounding != saved) std::fesetround(saved);
  } else {
    for (uint32_t m = 0; m < rows; ++m) {
      for (uint32_t n = 0; n < cols; ++n) {
        Acc sum = acc[m * cols + n];
        for (uint32_t k = 0; k < depth; ++k) {
          sum += static_cast<Acc>(a[m * depth + k]) * static_cast<Acc>(b[k * cols + n]);
        }
        acc[m * cols + n] = sum;
      }
    }
  }

  // D.
  if constexpr (kIn == Input::kF64) {
    for (uint32_t i = 0; i < fc.count; ++i) {
      double* row = x.row<double>(info.d[i]);
      for (uint32_t l = 0; l < kWarpSize; ++l) row[l] = acc[fc.index[l][i]];
    }
  } else if constexpr (kIn == Input::kInt8) {
    for (uint32_t i = 0; i < fc.count; ++i) {
      uint32_t* row = x.row<uint32_t>(info.d[i]);
      for (uint32_t l = 0; l < kWarpSize; ++l) {
        int64_t v = acc[fc.index[l][i]];
        if (info.satfinite) {
          v = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
        }
        row[l] = static_cast<uint32_t>(static_cast<uint64_t>(v));
      }
    }
  } else if (info.d_half) {
    for (uint32_t r = 0; r < fc.count / 2u; ++r) {
      uint32_t* row = x.row<uint32_t>(info.d[r]);
      for (uint32_t l = 0; l < kWarpSize; ++l) {
        const uint32_t lo = float_to_half(acc[fc.index[l][2 * r]], Round::kNearest);
        const uint32_t hi = float_to_half(acc[fc.index[l][2 * r + 1]], Round::kNearest);
        row[l] = lo | (hi << 16);
      }
    }
  } else {
    for (uint32_t i = 0; i < fc.count; ++i) {
      uint32_t* row = x.row<uint32_t>(info.d[i]);
      for (uint32_t l = 0; l < kWarpSize; ++l) {
        const float v = acc[fc.index[l][i]];
        row[l] = std::isnan(v) ? 0x7fffffffu : float_bits(v);
      }
    }
  }
}

bool decode_mma(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (!require_sync_aligned(d, ins)) return false;
  if (!only_modifiers(d, ins,
                      {M::kSync, M::kAligned, M::kRow, M::kCol, M::kSatfinite, M::kRn, M::kRz,
                       M::kRm, M::kRp})) {
    return false;
  }
  if (ins.types.size() != 4) return d.fail("mma takes four types: .dtype.atype.btype.ctype");
  const T dt = ins.types[0], at = ins.types[1], bt = ins.types[2], ct = ins.types[3];
  const std::string combo = "mma." + shape_text(ins) + " with ." + ir::type_name(dt) + "." +
                            ir::type_name(at) + "." + ir::type_name(bt) + "." + ir::type_name(ct);
  // Every shape implemented here is defined only with A row-major and B column-major.
  if (ins.text.find(".row.col") == std::string::npos) {
    return d.fail(combo + " needs the layouts .row.col (A row-major, B column-major)");
  }
  const MmaLayout layout = ptx::mma_layout(ins.shape_m, ins.shape_n, ins.shape_k, dt, at, bt, ct);
  const auto is_int8 = [](T t) { return t == T::kS8 || t == T::kU8; };
  Input input = Input::kF16;
  if (at == T::kBF16) input = Input::kBF16;
  if (at == T::kTF32) input = Input::kTf32;
  if (at == T::kF64) input = Input::kF64;
  if (is_int8(at)) input = Input::kInt8;
  if (layout == MmaLayout::kCount) {
    return d.fail(combo +
                  " is not supported on the CPU PTX device (it runs m16n8k16 and m16n8k8 "
                  "f16/bf16, m16n8k8 and m16n8k4 tf32, m16n8k16, m16n8k32 and m8n8k16 s8/u8, "
                  "and m8n8k4, m16n8k4, m16n8k8 and m16n8k16 f64)");
  }
  if (ins.mods.has(M::kSatfinite) && input != Input::kInt8) {
    return d.fail(".satfinite applies only to integer mma");
  }
  const bool rounds =
      ins.mods.has(M::kRn) || ins.mods.has(M::kRz) || ins.mods.has(M::kRm) || ins.mods.has(M::kRp);
  if (rounds && input != Input::kF64) {
    return d.fail("a rounding modifier applies only to f64 mma");
  }
  if (ins.operands.size() != 4) return d.fail("mma takes four operands: d, a, b, c");

  MmaInfo* info = d.kernel().make<MmaInfo>();
  info->shape = &ptx::mma_shape(layout);
  const Shape& s = *info->shape;
  info->c_half = ct == T::kF16;
  info->d_half = dt == T::kF16;
  info->a_signed = at == T::kS8;
  info->b_signed = bt == T::kS8;
  info->satfinite = ins.mods.has(M::kSatfinite);
  if (ins.mods.has(M::kRz)) info->rounding = FE_TOWARDZERO;
  if (ins.mods.has(M::kRm)) info->rounding = FE_DOWNWARD;
  if (ins.mods.has(M::kRp)) info->rounding = FE_UPWARD;

  const uint32_t in_per = per_register(input);
  const uint32_t bytes = input == Input::kF64 ? 8 : 4;
  const uint32_t c_regs = info->c_half ? s.c.count / 2u : s.c.count;
  const uint32_t d_regs = info->d_half ? s.c.count / 2u : s.c.count;
  if (!register_list(d, ins.operands[0], d_regs, bytes, true, "d", info->d) ||
      !register_list(d, ins.operands[1], s.a.count / in_per, bytes, false, "a", info->a) ||
      !register_list(d, ins.operands[2], s.b.count / in_per, bytes, false, "b", info->b) ||
      !register_list(d, ins.operands[3], c_regs, bytes, false, "c", info->c)) {
    return false;
  }
  op.ext = info;
  static constexpr Handler kHandlers[] = {mma<Input::kF16>, mma<Input::kBF16>, mma<Input::kTf32>,
                                          mma<Input::kF64>, mma<Input::kInt8>};
  op.fn = kHandlers[static_cast<size_t>(input)];
  return true;
}

// ===========================================================================================
// ldmatrix, stmatrix, movmatrix
// ===========================================================================================

// An 8x8 matrix of 16-bit elements is held by the warp as one 32-bit register per lane: lane l
// holds row l / 4, columns 2 * (l % 4) and 2 * (l % 4) + 1 (low and high half). The row
// addresses of matrix j come from lanes 8 * j .. 8 * j + 7. With .trans, the matrix in memory
// is the transpose of the one in the registers.

// Op layout of ldmatrix and stmatrix: a[0..3] the registers, a[4] the address base (kNoRef for
// an absolute address), disp the displacement. flags: bit 0 a 64-bit base, bit 1 .trans,
// bit 2 a generic address. imm: the number of matrices.
constexpr uint8_t kWideBase = 1;
constexpr uint8_t kTrans = 2;
constexpr uint8_t kGenericAddress = 4;

// The shared-memory row of 16 bytes that lane |lane| names, or nullptr after a fault.
uint8_t* matrix_row(Exec& x, const Op& op, uint32_t lane, Access access, const char* what) {
  uint64_t address = address_at(x, op.a[4], (op.flags & kWideBase) != 0, op.disp, lane);
  if ((op.flags & kGenericAddress) != 0) {
    if (address - kSharedWindow >= kWindowSize) {
      char buf[24];
      std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(address));
      raise_fault(x, FaultKind::kIllegalAddress, lane,
                  std::string(what) + " row address " + buf +
                      " is not a generic address of shared memory (" + what +
                      " accesses only shared memory)");
      return nullptr;
    }
    address -= kSharedWindow;
  }
  return shared_at(x, address, 16, 16, access, lane);
}

void ldmatrix(Exec& x, const Op& op, uint32_t mask) {
  if (!whole_warp(x, mask, "ldmatrix")) return;
  const uint32_t count = op.imm;
  const bool trans = (op.flags & kTrans) != 0;
  // Every row is read before any register is written: the address base may be a destination.
  uint16_t rows[4][8][8];
  for (uint32_t j = 0; j < count; ++j) {
    for (uint32_t r = 0; r < 8; ++r) {
      const uint8_t* p = matrix_row(x, op, 8 * j + r, Access::kRead, "ldmatrix");
      if (p == nullptr) return;
      std::memcpy(rows[j][r], p, 16);
    }
  }
  for (uint32_t j = 0; j < count; ++j) {
    uint32_t* dst = x.row<uint32_t>(op.a[j]);
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      const uint32_t r = l / 4, c = 2 * (l % 4);
      const uint32_t lo = trans ? rows[j][c][r] : rows[j][r][c];
      const uint32_t hi = trans ? rows[j][c + 1][r] : rows[j][r][c + 1];
      dst[l] = lo | (hi << 16);
    }
  }
}

void stmatrix(Exec& x, const Op& op, uint32_t mask) {
  if (!whole_warp(x, mask, "stmatrix")) return;
  const uint32_t count = op.imm;
  const bool trans = (op.flags & kTrans) != 0;
  uint16_t rows[4][8][8];
  for (uint32_t j = 0; j < count; ++j) {
    const uint32_t* src = x.row<uint32_t>(op.a[j]);
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      const uint32_t r = l / 4, c = 2 * (l % 4);
      const uint16_t lo = static_cast<uint16_t>(src[l]);
      const uint16_t hi = static_cast<uint16_t>(src[l] >> 16);
      if (trans) {
        rows[j][c][r] = lo;
        rows[j][c + 1][r] = hi;
      } else {
        rows[j][r][c] = lo;
        rows[j][r][c + 1] = hi;
      }
    }
  }
  // Every address is checked before anything is written.
  uint8_t* where[4][8];
  for (uint32_t j = 0; j < count; ++j) {
    for (uint32_t r = 0; r < 8; ++r) {
      where[j][r] = matrix_row(x, op, 8 * j + r, Access::kWrite, "stmatrix");
      if (where[j][r] == nullptr) return;
    }
  }
  for (uint32_t j = 0; j < count; ++j) {
    for (uint32_t r = 0; r < 8; ++r) std::memcpy(where[j][r], rows[j][r], 16);
  }
}

// movmatrix: a[0] d, a[1] a.
void movmatrix(Exec& x, const Op& op, uint32_t mask) {
  if (!whole_warp(x, mask, "movmatrix")) return;
  const uint32_t* src = x.row<uint32_t>(op.a[1]);
  uint16_t m[8][8];
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    m[l / 4][2 * (l % 4)] = static_cast<uint16_t>(src[l]);
    m[l / 4][2 * (l % 4) + 1] = static_cast<uint16_t>(src[l] >> 16);
  }
  uint32_t* dst = x.row<uint32_t>(op.a[0]);
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    const uint32_t r = l / 4, c = 2 * (l % 4);
    dst[l] = uint32_t{m[c][r]} | (uint32_t{m[c + 1][r]} << 16);
  }
}

bool check_m8n8_b16(DecodeContext& d, const ir::Instruction& ins) {
  if (ins.shape_m != 8 || ins.shape_n != 8 || ins.shape_k != 0) {
    return d.fail(std::string(ir::opcode_name(ins.opcode)) + "." + shape_text(ins) +
                  " is not supported on the CPU PTX device (only .m8n8 with .b16)");
  }
  if (ins.types.size() != 1 || ins.types[0] != T::kB16) {
    return d.fail(std::string(ir::opcode_name(ins.opcode)) + ".m8n8 takes the type .b16");
  }
  return true;
}

bool decode_ld_st_matrix(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  const bool load = ins.opcode == O::kLdmatrix;
  if (!require_sync_aligned(d, ins)) return false;
  if (ins.mods.has(M::kSharedCluster)) {
    return d.fail(
        ".shared::cluster addresses other blocks' shared memory, which a one-block "
        "cluster does not have on the CPU PTX device");
  }
  if (!only_modifiers(d, ins, {M::kSync, M::kAligned, M::kTrans, M::kShared})) return false;
  if (!check_m8n8_b16(d, ins)) return false;
  const uint32_t count = ins.fragments;
  if (count != 1 && count != 2 && count != 4) return d.fail("needs .x1, .x2 or .x4");
  if (ins.operands.size() != 2) {
    return d.fail(load ? "ldmatrix takes a vector of registers and an address"
                       : "stmatrix takes an address and a vector of registers");
  }
  const ir::Operand& data = ins.operands[load ? 0 : 1];
  const ir::Operand& where = ins.operands[load ? 1 : 0];
  const MemSpace space = ins.mods.has(M::kShared) ? MemSpace::kShared : MemSpace::kGeneric;
  Address addr;
  if (!d.address(where, space, &addr)) return false;
  if (addr.space != MemSpace::kShared && addr.space != MemSpace::kGeneric) {
    return d.fail(std::string(ir::opcode_name(ins.opcode)) + " accesses only shared memory");
  }
  Ref regs[4] = {kNoRef, kNoRef, kNoRef, kNoRef};
  if (!register_list(d, data, count, 4, load, load ? "the destination" : "the source", regs)) {
    return false;
  }
  for (uint32_t i = 0; i < 4; ++i) op.a[i] = regs[i];
  op.a[4] = addr.base;
  op.disp = addr.disp;
  op.flags = static_cast<uint8_t>((addr.base_bytes == 8 ? kWideBase : 0) |
                                  (ins.mods.has(M::kTrans) ? kTrans : 0) |
                                  (addr.space == MemSpace::kGeneric ? kGenericAddress : 0));
  op.imm = count;
  op.fn = load ? ldmatrix : stmatrix;
  return true;
}

bool decode_movmatrix(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (!require_sync_aligned(d, ins)) return false;
  if (!only_modifiers(d, ins, {M::kSync, M::kAligned, M::kTrans})) return false;
  if (!ins.mods.has(M::kTrans)) return d.fail("movmatrix needs .trans");
  if (!check_m8n8_b16(d, ins)) return false;
  if (ins.operands.size() != 2) return d.fail("movmatrix takes d and a");
  op.a[0] = d.destination(ins.operands[0], T::kB32);
  if (op.a[0] == kNoRef) return false;
  op.a[1] = d.source(ins.operands[1], T::kB32);
  if (op.a[1] == kNoRef) return false;
  op.fn = movmatrix;
  return true;
}

}  // namespace

// The .sync.aligned contract: every lane of the warp runs the instruction together. Returns
// false after raising a fault.
bool whole_warp(Exec& x, uint32_t mask, const char* what) {
  if (mask == x.live && mask == kFullMask) return true;
  const uint32_t lane = static_cast<uint32_t>(__builtin_ctz(mask));
  if (mask != x.live) {
    raise_fault(x, FaultKind::kIllegalInstruction, lane,
                std::string(what) + " is .sync.aligned and needs the whole warp, but lanes " +
                    hex(x.live & ~mask) +
                    " have not exited and are not executing it (the warp has diverged, or a "
                    "guard predicate is false for them)");
  } else {
    raise_fault(x, FaultKind::kIllegalInstruction, lane,
                std::string(what) + " needs all 32 lanes of the warp, but lanes " + hex(~mask) +
                    " have exited or were never launched");
  }
  return false;
}

// Resolves a brace-enclosed list of |count| registers of |bytes| each (a lone register when
// count is 1). |what| names the operand for errors.
bool register_list(DecodeContext& d, const ir::Operand& o, uint32_t count, uint32_t bytes,
                   bool destination, const char* what, Ref* out) {
  const T type = bytes == 8 ? T::kB64 : T::kB32;
  const auto one = [&](const ir::Operand& e, Ref* ref) {
    if (e.kind == ir::OperandKind::kSink) {
      return d.fail(std::string(what) + " cannot contain '_'");
    }
    *ref = destination ? d.destination(e, type) : d.source(e, type);
    return *ref != kNoRef;
  };
  if (o.kind == ir::OperandKind::kVector) {
    if (o.elements.size() != count) {
      return d.fail(std::string(what) + " must be a vector of " + std::to_string(count) + " " +
                    std::to_string(bytes * 8) + "-bit registers for this shape and type, not " +
                    std::to_string(o.elements.size()));
    }
    for (uint32_t i = 0; i < count; ++i) {
      if (!one(o.elements[i], &out[i])) return false;
    }
    return true;
  }
  if (count == 1) return one(o, &out[0]);
  return d.fail(std::string(what) + " must be a vector of " + std::to_string(count) +
                " registers in { }");
}

// Refuses every modifier outside |allowed|, naming the first.
bool only_modifiers(DecodeContext& d, const ir::Instruction& ins,
                    std::initializer_list<M> allowed) {
  for (size_t i = 0; i < static_cast<size_t>(M::kCount); ++i) {
    const M mod = static_cast<M>(i);
    if (!ins.mods.has(mod)) continue;
    bool ok = false;
    for (M a : allowed) ok = ok || a == mod;
    if (!ok) {
      return d.fail(std::string("modifier '.") + ir::mod_name(mod) + "' is not valid on " +
                    ir::opcode_name(ins.opcode) + " here");
    }
  }
  return true;
}

bool require_sync_aligned(DecodeContext& d, const ir::Instruction& ins) {
  if (!ins.mods.has(M::kSync) || !ins.mods.has(M::kAligned)) {
    return d.fail(std::string(ir::opcode_name(ins.opcode)) + " needs .sync.aligned");
  }
  return true;
}

std::string shape_text(const ir::Instruction& ins) {
  // Appended piece by piece: "m" + std::to_string(...) trips GCC 12's -Wrestrict at -O3.
  std::string s = "m";
  s += std::to_string(ins.shape_m);
  s += 'n';
  s += std::to_string(ins.shape_n);
  if (ins.shape_k != 0) {
    s += 'k';
    s += std::to_string(ins.shape_k);
  }
  return s;
}

bool decode_matrix(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  switch (ins.opcode) {
    case O::kMma:
      return decode_mma(d, ins, op);
    case O::kLdmatrix:
    case O::kStmatrix:
      return decode_ld_st_matrix(d, ins, op);
    case O::kMovmatrix:
      return decode_movmatrix(d, ins, op);
    default:
      return d.fail("not a matrix instruction");
  }
}

}  // namespace hal::ptx_vm
