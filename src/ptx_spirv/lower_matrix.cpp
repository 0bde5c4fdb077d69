// The tensor-core instructions, as warp exchanges and f32 (or integer) arithmetic, with the
// results the CPU PTX device gives (src/ptx_vm/ops_matrix.cpp):
//  - mma.sync.aligned .row.col: m16n8k16 and m16n8k8 with f16 inputs (f16 or f32 C and D) or
//    bf16 inputs (f32), m16n8k8 and m16n8k4 with tf32 inputs (f32), m16n8k16, m16n8k32 and
//    m8n8k16 with s8/u8 inputs (s32, .satfinite too);
//  - ldmatrix and stmatrix .sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16, and
//    movmatrix.sync.aligned.m8n8.trans.b16;
//  - the product of wmma.mma (lower_wmma.cpp).
//
// A product (matrix_product) works from the fragment layouts as tables (ptx/mma_layout.h, and
// ptx/wmma_layout.h for wmma): which row-major element each lane's element i is. A lane computes
// its own accumulators D[r][c] = (((C[r][c] + p_0) + p_1) + ... + p_{K-1}), p_q = A[r][q] B[q][c],
// each product exact in f32 (f16, bf16 and tf32 have at most 11 significant bits) and each
// addition rounded to nearest even, as the CPU PTX device sums; an f16 D is the sum rounded once;
// a NaN is 0x7fffffff. Integer sums wrap, or with .satfinite clamp the exact sum. The A and B
// elements come from the lanes holding them: one warp exchange per source register that some
// lane needs. Which lane, register and place hold each element is worked out here for all 32
// lanes at once, so that products that need the same word read it once; at run time each is a
// function of the lane's bits (linear in them, as every layout PTX defines is).
//
// ldmatrix: each lane publishes the row address it gives (lanes 8j to 8j + 7 give the rows of
// matrix j), then reads the word of row g at column 2t (or, with .trans, the two halves of rows
// 2t and 2t + 1 at column g) from shared memory, g = lane / 4 and t = lane % 4. stmatrix stores
// the same places. movmatrix reads the two halves of its transposed row from the lanes holding
// them, through one exchange.
//
// Like every warp instruction these need the whole warp (.sync.aligned): through workgroup
// memory they are refused in divergent code like the others (uniformity.h).
#include "ptx_spirv/kernel.h"

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <spirv/unified1/GLSL.std.450.h>

#include "ptx/mma_layout.h"

namespace hal::ptx_spirv {

namespace {

using T = ir::Type;

// The lane's groupID (lane / 4) and threadID_in_group (lane % 4), as u32 values.
std::pair<uint32_t, uint32_t> quad_of(Kernel& k) {
  const uint32_t lane = k.lane();
  return {k.b.op(spv::Op::OpShiftRightLogical, k.t_u32, {lane, k.b.u32(2)}),
          k.b.op(spv::Op::OpBitwiseAnd, k.t_u32, {lane, k.b.u32(3)})};
}

}  // namespace

// The registers of a vector operand ("{%r1, %r2}"), or the one register.
std::vector<const ir::Operand*> registers_of(const ir::Operand& o) {
  std::vector<const ir::Operand*> out;
  if (o.kind == ir::OperandKind::kVector) {
    for (const ir::Operand& e : o.elements) out.push_back(&e);
  } else {
    out.push_back(&o);
  }
  return out;
}

uint32_t elements_per_register(ir::Type type) {
  switch (type) {
    case ir::Type::kF16:
    case ir::Type::kBF16:
      return 2;
    case ir::Type::kS8:
    case ir::Type::kU8:
      return 4;
    default:
      return 1;
  }
}

void Kernel::lower_mma(const ir::Instruction& ins) {
  if (ins.types.size() != 4 || ins.operands.size() != 4) {
    invalid(ins, "mma takes .d.a.b.c types and the d, a, b and c operands");
  }
  const T dt = ins.types[0], at = ins.types[1], bt = ins.types[2], ct = ins.types[3];
  if (at == T::kF64) {
    refuse(ins,
           "f64 mma does not translate to Vulkan: its steps are fused multiply-adds in a chosen "
           "rounding mode, which Vulkan does not guarantee in f64");
  }
  if (!ins.mods.has(ir::Mod::kRow) || !ins.mods.has(ir::Mod::kCol)) {
    invalid(ins, "mma.sync takes .row.col");
  }
  const ptx::MmaLayout layout =
      ptx::mma_layout(ins.shape_m, ins.shape_n, ins.shape_k, dt, at, bt, ct);
  if (layout == ptx::MmaLayout::kCount) {
    refuse(ins,
           "this form of mma does not translate to Vulkan (m16n8k16 and m16n8k8 f16 and bf16, "
           "m16n8k8 and m16n8k4 tf32, m16n8k16, m16n8k32 and m8n8k16 s8/u8 do)");
  }
  const bool satfinite = ins.mods.has(ir::Mod::kSatfinite);
  const bool int8 = at == T::kS8 || at == T::kU8;
  if (satfinite && !int8) invalid(ins, ".satfinite applies only to integer mma");
  for (ir::Mod mod : {ir::Mod::kRn, ir::Mod::kRz, ir::Mod::kRm, ir::Mod::kRp}) {
    if (ins.mods.has(mod)) invalid(ins, "a rounding modifier applies only to f64 mma");
  }
  const ptx::MmaShape& shape = ptx::mma_shape(layout);
  MatrixProduct p;
  p.m = shape.m;
  p.n = shape.n;
  p.k = shape.k;
  p.a = &shape.a;
  p.b = &shape.b;
  p.c = &shape.c;
  p.in = int8 ? T::kS8 : at;
  p.a_signed = at == T::kS8;
  p.b_signed = bt == T::kS8;
  p.c_type = ct;
  p.d_type = dt;
  p.satfinite = satfinite;
  matrix_product(ins, p);
}

uint32_t Kernel::lane_function(const ir::Instruction& ins, const std::array<uint32_t, 32>& values) {
  bool constant = true;
  for (uint32_t v : values) constant = constant && v == values[0];
  if (constant) return b.u32(values[0]);
  // Linear in the lane's bits: values[l] = values[0] + sum over set bits i of l of step[i], the
  // form every fragment layout's lane, register and element numbers take.
  uint32_t step[5];
  for (uint32_t bit = 0; bit < 5; ++bit) step[bit] = values[1u << bit] - values[0];
  for (uint32_t l = 0; l < 32; ++l) {
    uint32_t v = values[0];
    for (uint32_t bit = 0; bit < 5; ++bit) v += ((l >> bit) & 1u) * step[bit];
    if (v != values[l]) {
      refuse(ins,
             "internal error: a fragment layout whose lane numbers are not linear in the lane");
    }
  }
  // Runs of bits whose steps double from one bit to the next are one field of the lane:
  // (lane >> low & mask) * step[low], or, where step[low] is the field's own weight, the field
  // in place (lane & mask << low).
  const uint32_t u = t_u32;
  uint32_t sum = values[0] == 0 ? 0 : b.u32(values[0]);
  for (uint32_t low = 0; low < 5;) {
    if (step[low] == 0) {
      ++low;
      continue;
    }
    uint32_t high = low + 1;
    while (high < 5 && step[high] == step[low] << (high - low)) ++high;
    const uint32_t mask = (1u << (high - low)) - 1;
    uint32_t term = 0;
    if (step[low] == 1u << low) {
      term = b.op(spv::Op::OpBitwiseAnd, u, {lane(), b.u32(mask << low)});
    } else {
      const uint32_t field =
          b.op(spv::Op::OpBitwiseAnd, u,
               {b.op(spv::Op::OpShiftRightLogical, u, {lane(), b.u32(low)}), b.u32(mask)});
      term = step[low] == 1 ? field : b.op(spv::Op::OpIMul, u, {field, b.u32(step[low])});
    }
    sum = sum == 0 ? term : b.op(spv::Op::OpIAdd, u, {sum, term});
    low = high;
  }
  return sum;
}

void Kernel::matrix_product(const ir::Instruction& ins, const MatrixProduct& p) {
  if (ins.operands.size() != 4) invalid(ins, "a matrix product takes four operands: d, a, b, c");
  const std::vector<const ir::Operand*> d = registers_of(ins.operands[0]);
  const std::vector<const ir::Operand*> a = registers_of(ins.operands[1]);
  const std::vector<const ir::Operand*> bv = registers_of(ins.operands[2]);
  const std::vector<const ir::Operand*> c = registers_of(ins.operands[3]);
  const uint32_t per_in = elements_per_register(p.in);
  const uint32_t per_c = p.c_type == T::kF16 ? 2 : 1, per_d = p.d_type == T::kF16 ? 2 : 1;
  const uint32_t elements = p.c->count;
  if (a.size() != p.a->count / per_in || bv.size() != p.b->count / per_in ||
      c.size() != elements / per_c || d.size() != elements / per_d) {
    invalid(ins, "the fragments have the wrong number of registers for this shape and type");
  }
  const uint32_t u = t_u32;
  // operand_values[x][e * K + q]: the multiplicand of product q of accumulator element e, as
  // f32 (f16, bf16, tf32) or i32 (s8, u8), for x = 0 (A) and 1 (B).
  std::array<std::vector<uint32_t>, 2> operand_values;
  for (uint32_t x = 0; x < 2; ++x) {
    const ptx::MatrixFragment& f = x == 0 ? *p.a : *p.b;
    const std::vector<const ir::Operand*>& regs = x == 0 ? a : bv;
    const uint32_t rows = x == 0 ? p.m : p.k, cols = x == 0 ? p.k : p.n;
    // The lane and element holding each element of the matrix (the lowest lane, where several
    // hold it).
    std::vector<std::pair<uint32_t, uint32_t>> owner(size_t{rows} * cols, {UINT32_MAX, 0});
    for (uint32_t l = 0; l < 32; ++l) {
      for (uint32_t i = 0; i < f.count; ++i) {
        if (owner[f.index[l][i]].first == UINT32_MAX) owner[f.index[l][i]] = {l, i};
      }
    }
    // Per product: for every lane, the lane and register its element is in and its place in
    // that register. Products whose lanes and registers agree read one word.
    struct Where {
      std::array<uint32_t, 32> src{}, reg{}, part{};
    };
    std::vector<Where> where(size_t{elements} * p.k);
    for (uint32_t e = 0; e < elements; ++e) {
      for (uint32_t q = 0; q < p.k; ++q) {
        Where& w = where[e * p.k + q];
        for (uint32_t l = 0; l < 32; ++l) {
          const uint32_t di = p.c->index[l][e], row = di / p.n, col = di % p.n;
          const uint32_t xi = x == 0 ? row * p.k + q : q * p.n + col;
          const auto [src, elem] = owner[xi];
          if (src == UINT32_MAX) invalid(ins, "internal error: an element no lane holds");
          w.src[l] = src;
          w.reg[l] = elem / per_in;
          w.part[l] = elem % per_in;
        }
      }
    }
    std::map<std::pair<std::array<uint32_t, 32>, std::array<uint32_t, 32>>, uint32_t> word_ids;
    std::vector<uint32_t> word_of(where.size());  // index into words
    struct Word {
      const Where* where;
      uint32_t src = 0, reg = 0;  // run-time lane and register (reg 0: one register for all)
      uint32_t value = 0;
    };
    std::vector<Word> words;
    for (size_t i = 0; i < where.size(); ++i) {
      const auto key = std::make_pair(where[i].src, where[i].reg);
      auto [it, fresh] = word_ids.emplace(key, static_cast<uint32_t>(words.size()));
      if (fresh) words.push_back({&where[i]});
      word_of[i] = it->second;
    }
    std::map<std::array<uint32_t, 32>, uint32_t> lane_values;  // one computation per vector
    auto value_of = [&](const std::array<uint32_t, 32>& v) {
      auto found = lane_values.find(v);
      if (found != lane_values.end()) return found->second;
      const uint32_t id = lane_function(ins, v);
      lane_values.emplace(v, id);
      return id;
    };
    for (Word& w : words) {
      w.src = value_of(w.where->src);
      bool one = true;
      for (uint32_t r : w.where->reg) one = one && r == w.where->reg[0];
      if (!one) w.reg = value_of(w.where->reg);
    }
    // One exchange per source register some lane needs; each word reads it where its lanes'
    // register may be this one.
    for (uint32_t reg = 0; reg < regs.size(); ++reg) {
      bool needed = false;
      for (const Word& w : words) {
        for (uint32_t r : w.where->reg) needed = needed || r == reg;
      }
      if (!needed) continue;
      const uint32_t handle = warp_exchange(read_bits(ins, *regs[reg], 4));
      for (Word& w : words) {
        bool some = false;
        for (uint32_t r : w.where->reg) some = some || r == reg;
        if (!some) continue;
        const uint32_t value = warp_exchanged(handle, w.src);
        w.value =
            w.reg == 0 || w.value == 0
                ? value
                : select(u, b.op(spv::Op::OpIEqual, t_bool, {w.reg, b.u32(reg)}), value, w.value);
      }
    }
    // Each product's element, converted once per word and place.
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> converted;  // (word, fixed part)
    std::vector<uint32_t>& values = operand_values[x];
    values.resize(where.size());
    for (size_t i = 0; i < where.size(); ++i) {
      const Word& w = words[word_of[i]];
      bool fixed = true;
      for (uint32_t part : where[i].part) fixed = fixed && part == where[i].part[0];
      if (fixed) {
        auto found = converted.find({word_of[i], where[i].part[0]});
        if (found != converted.end()) {
          values[i] = found->second;
          continue;
        }
      }
      // The element at place |part| (a u32 constant or run-time value) of the word, converted;
      // with a constant place the shifts fold.
      const uint32_t part = fixed ? b.u32(where[i].part[0]) : value_of(where[i].part);
      const bool is_signed = x == 0 ? p.a_signed : p.b_signed;
      uint32_t v = 0;
      switch (p.in) {
        case T::kF16: {  // both halves at once; the one at |part|
          const uint32_t pair = glsl(b.type_vector(t_f32, 2), GLSLstd450UnpackHalf2x16, {w.value});
          v = fixed ? b.op(spv::Op::OpCompositeExtract, t_f32, {pair, where[i].part[0]})
                    : b.op(spv::Op::OpVectorExtractDynamic, t_f32, {pair, part});
          break;
        }
        case T::kBF16:  // the half's bits, moved to the top of an f32
          v = bitcast(t_f32, b.op(spv::Op::OpShiftLeftLogical, u,
                                  {b.op(spv::Op::OpShiftRightLogical, u,
                                        {w.value, b.op(spv::Op::OpIMul, u, {part, b.u32(16)})}),
                                   b.u32(16)}));
          break;
        case T::kTF32:  // the f32 with its low 13 fraction bits ignored
          v = bitcast(t_f32, b.op(spv::Op::OpBitwiseAnd, u, {w.value, b.u32(0xFFFFE000u)}));
          break;
        default: {  // s8 or u8, as an i32: the byte moved to the top, then back
          const uint32_t top = b.op(
              spv::Op::OpShiftLeftLogical, u,
              {w.value,
               b.op(spv::Op::OpISub, u, {b.u32(24), b.op(spv::Op::OpIMul, u, {part, b.u32(8)})})});
          v = b.op(is_signed ? spv::Op::OpShiftRightArithmetic : spv::Op::OpShiftRightLogical, u,
                   {top, b.u32(24)});
          break;
        }
      }
      values[i] = v;
      if (fixed) converted.emplace(std::make_pair(word_of[i], where[i].part[0]), v);
    }
  }
  // The lane's accumulator elements: C and D hold the same ones, f16 two per register.
  std::vector<uint32_t> c_words;
  for (const ir::Operand* reg : c) c_words.push_back(read_bits(ins, *reg, 4));
  std::vector<uint32_t> results;
  const std::vector<uint32_t>& av = operand_values[0];
  const std::vector<uint32_t>& bvals = operand_values[1];
  for (uint32_t e = 0; e < elements; ++e) {
    uint32_t start = 0;
    if (p.c_type == T::kF16) {
      const uint32_t word = c_words[e / 2];
      start = f16_to_f32(e % 2 == 0 ? b.op(spv::Op::OpBitwiseAnd, u, {word, b.u32(0xFFFF)})
                                    : b.op(spv::Op::OpShiftRightLogical, u, {word, b.u32(16)}));
    } else if (p.c_type == T::kF32) {
      start = bitcast(t_f32, c_words[e]);
    } else {
      start = c_words[e];
    }
    if (p.in == T::kS8) {
      if (!p.satfinite) {
        uint32_t sum = start;  // i32 additions wrap, as the exact sum modulo 2^32 does
        for (uint32_t q = 0; q < p.k; ++q) {
          sum = b.op(spv::Op::OpIAdd, u,
                     {sum, b.op(spv::Op::OpIMul, u, {av[e * p.k + q], bvals[e * p.k + q]})});
        }
        results.push_back(sum);
        continue;
      }
      // The exact sum in 64 bits, clamped to the s32 range.
      auto wide = [&](uint32_t v) { return b.op(spv::Op::OpSConvert, t_u64, {v}); };
      uint32_t sum = wide(start);
      for (uint32_t q = 0; q < p.k; ++q) {
        sum = b.op(spv::Op::OpIAdd, t_u64,
                   {sum, wide(b.op(spv::Op::OpIMul, u, {av[e * p.k + q], bvals[e * p.k + q]}))});
      }
      const uint32_t high = b.op(spv::Op::OpSGreaterThan, t_bool, {sum, b.u64(0x7FFFFFFFull)});
      const uint32_t low = b.op(spv::Op::OpSLessThan, t_bool, {sum, b.u64(0xFFFFFFFF80000000ull)});
      uint32_t r = b.op(spv::Op::OpUConvert, u, {sum});
      r = select(u, high, b.u32(0x7FFFFFFFu), r);
      results.push_back(select(u, low, b.u32(0x80000000u), r));
      continue;
    }
    // Every product is exact in f32, so a fused multiply-add would give the same sum.
    uint32_t sum = start;
    for (uint32_t q = 0; q < p.k; ++q) {
      sum = b.op(spv::Op::OpFAdd, t_f32,
                 {sum, b.op(spv::Op::OpFMul, t_f32, {av[e * p.k + q], bvals[e * p.k + q]})});
    }
    if (p.d_type == T::kF16) {
      results.push_back(f32_to_f16(sum));
    } else {
      const uint32_t nan = b.op(spv::Op::OpIsNan, t_bool, {sum});
      results.push_back(select(u, nan, b.u32(0x7FFFFFFFu), bitcast(u, sum)));
    }
  }
  // Every source is read before any destination is written: D may alias A, B or C.
  if (p.d_type == T::kF16) {
    for (uint32_t r = 0; r < d.size(); ++r) {
      const uint32_t word =
          b.op(spv::Op::OpBitwiseOr, u,
               {b.op(spv::Op::OpBitwiseAnd, u, {results[2 * r], b.u32(0xFFFF)}),
                b.op(spv::Op::OpShiftLeftLogical, u, {results[2 * r + 1], b.u32(16)})});
      write_bits(ins, *d[r], 4, word, false);
    }
    return;
  }
  for (uint32_t r = 0; r < d.size(); ++r) write_bits(ins, *d[r], 4, results[r], false);
}

Kernel::ResolvedAddress Kernel::matrix_rows(const ir::Instruction& ins,
                                            std::vector<const ir::Operand*>* regs) {
  const bool load = ins.opcode == ir::Opcode::kLdmatrix;
  const std::string name = load ? "ldmatrix" : "stmatrix";
  if (ins.shape_m != 8 || ins.shape_n != 8 || ins.types.size() != 1 ||
      ir::type_size(ins.types[0]) != 2) {
    refuse(ins, "only " + name + " .m8n8 .b16 translates to Vulkan yet");
  }
  if (ins.operands.size() != 2) invalid(ins, name + " takes registers and an address");
  *regs = registers_of(ins.operands[load ? 0 : 1]);
  const uint32_t count = ins.fragments == 0 ? 1 : ins.fragments;
  if (regs->size() != count || (count != 1 && count != 2 && count != 4)) {
    invalid(ins, name + "'s .x1, .x2 or .x4 names that many registers");
  }
  const ir::Space space = ins.mods.has(ir::Mod::kShared) ? ir::Space::kShared : ir::Space::kNone;
  const ResolvedAddress at = resolve_address(ins, ins.operands[load ? 1 : 0], space);
  if (at.param || at.space != AddressSpace::kShared) {
    refuse(ins, name + " accesses shared memory; this address is not traced to it");
  }
  return at;
}

void Kernel::lower_ldmatrix(const ir::Instruction& ins) {
  std::vector<const ir::Operand*> d;
  const ResolvedAddress at = matrix_rows(ins, &d);
  const uint32_t count = static_cast<uint32_t>(d.size());
  const bool trans = ins.mods.has(ir::Mod::kTrans);
  const uint32_t u = t_u32;
  const auto [g, t] = quad_of(*this);
  auto add = [&](uint32_t x, uint32_t y) { return b.op(spv::Op::OpIAdd, u, {x, y}); };
  auto shared_at = [&](uint32_t offset, uint32_t bytes) {
    ResolvedAddress where = at;
    where.value = offset;
    where.offset = 0;
    return load(ins, where, bytes);
  };
  const uint32_t handle = warp_exchange(at.value);
  std::vector<uint32_t> words;
  for (uint32_t j = 0; j < count; ++j) {
    if (!trans) {
      // Row g of matrix j, the word at column 2t.
      const uint32_t row = warp_exchanged(handle, add(b.u32(8 * j), g));
      words.push_back(shared_at(add(row, b.op(spv::Op::OpShiftLeftLogical, u, {t, b.u32(2)})), 4));
      continue;
    }
    // Column g of rows 2t and 2t + 1: the halves at byte 2g of each.
    const uint32_t first = add(b.u32(8 * j), b.op(spv::Op::OpShiftLeftLogical, u, {t, b.u32(1)}));
    const uint32_t column = b.op(spv::Op::OpShiftLeftLogical, u, {g, b.u32(1)});
    const uint32_t lo = shared_at(add(warp_exchanged(handle, first), column), 2);
    const uint32_t hi = shared_at(add(warp_exchanged(handle, add(first, b.u32(1))), column), 2);
    words.push_back(b.op(spv::Op::OpBitwiseOr, u,
                         {b.op(spv::Op::OpBitwiseAnd, u, {lo, b.u32(0xFFFF)}),
                          b.op(spv::Op::OpShiftLeftLogical, u,
                               {b.op(spv::Op::OpBitwiseAnd, u, {hi, b.u32(0xFFFF)}), b.u32(16)})}));
  }
  // Every row is read before any register is written: the address may be a destination.
  for (uint32_t j = 0; j < count; ++j) write(ins, *d[j], T::kB32, words[j]);
}

void Kernel::lower_stmatrix(const ir::Instruction& ins) {
  std::vector<const ir::Operand*> regs;
  const ResolvedAddress at = matrix_rows(ins, &regs);
  const uint32_t count = static_cast<uint32_t>(regs.size());
  const bool trans = ins.mods.has(ir::Mod::kTrans);
  const uint32_t u = t_u32;
  const auto [g, t] = quad_of(*this);
  auto add = [&](uint32_t x, uint32_t y) { return b.op(spv::Op::OpIAdd, u, {x, y}); };
  auto shared_at = [&](uint32_t offset) {
    ResolvedAddress where = at;
    where.value = offset;
    where.offset = 0;
    return where;
  };
  // Every row address and register is read before anything is stored.
  const uint32_t handle = warp_exchange(at.value);
  std::vector<uint32_t> words;
  for (const ir::Operand* reg : regs) words.push_back(read_bits(ins, *reg, 4));
  struct Store {
    ResolvedAddress where;
    uint32_t bytes, bits;
  };
  std::vector<Store> stores;
  for (uint32_t j = 0; j < count; ++j) {
    if (!trans) {
      // The lane's word is row g of matrix j at column 2t.
      const uint32_t row = warp_exchanged(handle, add(b.u32(8 * j), g));
      stores.push_back(
          {shared_at(add(row, b.op(spv::Op::OpShiftLeftLogical, u, {t, b.u32(2)}))), 4, words[j]});
      continue;
    }
    // Transposed: its halves are column g of rows 2t and 2t + 1.
    const uint32_t first = add(b.u32(8 * j), b.op(spv::Op::OpShiftLeftLogical, u, {t, b.u32(1)}));
    const uint32_t column = b.op(spv::Op::OpShiftLeftLogical, u, {g, b.u32(1)});
    stores.push_back({shared_at(add(warp_exchanged(handle, first), column)), 2,
                      b.op(spv::Op::OpBitwiseAnd, u, {words[j], b.u32(0xFFFF)})});
    stores.push_back({shared_at(add(warp_exchanged(handle, add(first, b.u32(1))), column)), 2,
                      b.op(spv::Op::OpShiftRightLogical, u, {words[j], b.u32(16)})});
  }
  auto store_all = [&] {
    for (const Store& s : stores) store(ins, s.where, s.bytes, s.bits);
  };
  warp_memory_writes(store_all);
}

void Kernel::lower_movmatrix(const ir::Instruction& ins) {
  if (ins.shape_m != 8 || ins.shape_n != 8 || ins.types.size() != 1 ||
      ir::type_size(ins.types[0]) != 2 || !ins.mods.has(ir::Mod::kTrans)) {
    invalid(ins, "movmatrix is .m8n8.trans.b16");
  }
  if (ins.operands.size() != 2) invalid(ins, "movmatrix takes d and a");
  // Lane (g, t) holds row g, columns 2t and 2t + 1. The transpose's row g, column c is the
  // source's row c, column g: the half g % 2 of the word of lane 4c + g / 2.
  const uint32_t u = t_u32;
  const auto [g, t] = quad_of(*this);
  const uint32_t handle = warp_exchange(read_bits(ins, ins.operands[1], 4));
  const uint32_t from = b.op(spv::Op::OpIAdd, u,
                             {b.op(spv::Op::OpShiftLeftLogical, u, {t, b.u32(3)}),
                              b.op(spv::Op::OpShiftRightLogical, u, {g, b.u32(1)})});
  const uint32_t shift = b.op(spv::Op::OpShiftLeftLogical, u,
                              {b.op(spv::Op::OpBitwiseAnd, u, {g, b.u32(1)}), b.u32(4)});
  auto half_from = [&](uint32_t lane) {
    return b.op(spv::Op::OpBitwiseAnd, u,
                {b.op(spv::Op::OpShiftRightLogical, u, {warp_exchanged(handle, lane), shift}),
                 b.u32(0xFFFF)});
  };
  const uint32_t lo = half_from(from);                                        // row 2t
  const uint32_t hi = half_from(b.op(spv::Op::OpIAdd, u, {from, b.u32(4)}));  // row 2t + 1
  write_bits(
      ins, ins.operands[0], 4,
      b.op(spv::Op::OpBitwiseOr, u, {lo, b.op(spv::Op::OpShiftLeftLogical, u, {hi, b.u32(16)})}),
      false);
}

}  // namespace hal::ptx_spirv
