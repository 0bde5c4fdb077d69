// wmma (what CUDA's nvcuda::wmma API compiles to), with the fragments laid out as on every hal
// device (ptx/wmma_layout.h) and the results the CPU PTX device gives (src/ptx_vm/ops_wmma.cpp):
//  - wmma.load.{a,b,c} and wmma.store.d, .row or .col, from global or shared memory (or generic
//    addresses traced to them), with or without a stride;
//  - wmma.mma with f16 multiplicands and f16 or f32 accumulators, bf16 and tf32 with f32, s8 and
//    u8 with s32 (.satfinite too), on every shape PTX defines for them.
// f64 wmma is refused: its steps are fused multiply-adds in a chosen rounding mode, which
// Vulkan does not guarantee in f64.
//
// A load or store moves each lane's own elements: no lane waits for another. wmma.mma computes
// each lane's accumulator elements D[r][c] = C[r][c] + sum_k A[r][k] B[k][c] in k order, every
// product exact in f32 (f16, bf16 and tf32 have at most 11 significant bits) and every addition
// rounded to nearest even, as the CPU PTX device sums; integers wrap, or with .satfinite clamp
// the exact sum. The A and B elements a lane needs come from the lanes holding them: one warp
// exchange per source register, and from each exchange the words whose register it is. Which
// lane and register hold an element is worked out here for all 32 lanes at once, so that words
// needed by several products are read once and a register that no lane needs is not read.
//
// Like every warp instruction these need the whole warp (.sync.aligned): through workgroup
// memory they are refused in divergent code like the others (uniformity.h).
#include "ptx_spirv/kernel.h"

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ptx/wmma_layout.h"

namespace hal::ptx_spirv {

namespace {

using T = ir::Type;
using ptx::WmmaFragment;
using ptx::WmmaRole;

constexpr uint32_t kLanes = 32;

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

uint32_t element_bytes(T type) {
  return type == T::kS8 || type == T::kU8 ? 1 : type == T::kF16 || type == T::kBF16 ? 2 : 4;
}
// Elements packed in one 32-bit register.
uint32_t per_register(T type) {
  return 4 / element_bytes(type);
}

uint32_t log2_of(uint32_t power_of_two) {
  uint32_t log = 0;
  while ((1u << log) < power_of_two) ++log;
  return log;
}

// The operation words (.load.a, .store.d, .mma), which the front end keeps as unknown
// modifiers; a word after them is one it does not know (such as the sub-byte types .s4, .b1).
std::string operation_of(const ir::Instruction& ins, std::string* unknown) {
  const std::vector<std::string>& words = ins.unknown_mods;
  const bool memory = !words.empty() && (words[0] == "load" || words[0] == "store");
  const size_t used = words.empty() ? 0 : memory ? 2 : 1;
  if (words.size() > used) *unknown = words[used];
  std::string operation;
  for (size_t i = 0; i < words.size() && i < used; ++i) operation += "." + words[i];
  return operation;
}

}  // namespace

void Kernel::lower_wmma(const ir::Instruction& ins) {
  std::string unknown;
  const std::string operation = operation_of(ins, &unknown);
  if (!unknown.empty()) refuse(ins, "modifier '." + unknown + "' is not supported");
  if (!ins.mods.has(ir::Mod::kSync) || !ins.mods.has(ir::Mod::kAligned)) {
    invalid(ins, "wmma needs .sync.aligned");
  }
  if (operation == ".load.a") return lower_wmma_memory(ins, WmmaRole::kA, true);
  if (operation == ".load.b") return lower_wmma_memory(ins, WmmaRole::kB, true);
  if (operation == ".load.c") return lower_wmma_memory(ins, WmmaRole::kAccumulator, true);
  if (operation == ".store.d") return lower_wmma_memory(ins, WmmaRole::kAccumulator, false);
  if (operation == ".mma") return lower_wmma_mma(ins);
  invalid(ins, "wmma needs .load.a, .load.b, .load.c, .store.d or .mma");
}

void Kernel::lower_wmma_memory(const ir::Instruction& ins, ptx::WmmaRole role, bool is_load) {
  const std::string name = is_load ? "wmma.load" : "wmma.store";
  if (ins.mods.has(ir::Mod::kRow) == ins.mods.has(ir::Mod::kCol)) {
    invalid(ins, name + " needs one layout, .row or .col");
  }
  if (ins.types.size() != 1) invalid(ins, name + " takes one type");
  const T type = ins.types[0];
  const uint32_t m = ins.shape_m, n = ins.shape_n, k = ins.shape_k;
  bool fits = false;
  if (type == T::kF64) refuse(ins, "f64 wmma does not translate to Vulkan");
  if (role == WmmaRole::kAccumulator) {
    // C and D go with the multiplicands' shapes: f16 and s32 with f16's, f32 with tf32's too.
    fits = (type == T::kF16 || type == T::kF32 || type == T::kS32) &&
           (ptx::wmma_shape_defined(T::kF16, m, n, k) ||
            (type == T::kF32 && ptx::wmma_shape_defined(T::kTF32, m, n, k)));
  } else {
    fits = type != T::kF32 && type != T::kS32 && ptx::wmma_shape_defined(type, m, n, k);
  }
  if (!fits) {
    invalid(ins, name + " of this type and shape is not one PTX defines");
  }
  if (ins.operands.size() != 2 && ins.operands.size() != 3) {
    invalid(ins, is_load ? "wmma.load takes registers, an address and an optional stride"
                         : "wmma.store takes an address, registers and an optional stride");
  }
  const WmmaFragment f = ptx::wmma_fragment(role, m, n, k, type == T::kF16);
  const uint32_t bytes = element_bytes(type), per = per_register(type);
  const std::vector<const ir::Operand*> regs = registers_of(ins.operands[is_load ? 0 : 1]);
  if (regs.size() != f.per_lane / per) {
    invalid(ins, name + "'s fragment has the wrong number of registers for its type and shape");
  }
  const ir::Space space = ins.mods.has(ir::Mod::kGlobal)   ? ir::Space::kGlobal
                          : ins.mods.has(ir::Mod::kShared) ? ir::Space::kShared
                                                           : ir::Space::kNone;
  const ResolvedAddress at = resolve_address(ins, ins.operands[is_load ? 1 : 0], space);
  if (at.param || at.space == AddressSpace::kLocal) {
    refuse(ins, name + " accesses global or shared memory");
  }
  const uint32_t u = t_u32;
  const bool col_major = ins.mods.has(ir::Mod::kCol);
  const uint32_t stride = ins.operands.size() == 3 ? read(ins, ins.operands[2], T::kU32)
                                                   : b.u32(col_major ? f.rows : f.cols);
  // Lane l's first element, in row-major order: (l % H) * E.
  const uint32_t first =
      b.op(spv::Op::OpIMul, u,
           {b.op(spv::Op::OpUMod, u, {lane(), b.u32(f.holders())}), b.u32(f.per_lane)});
  auto element_at = [&](uint32_t i) {  // the address of the lane's element i
    const uint32_t index = b.op(spv::Op::OpIAdd, u, {first, b.u32(i)});
    const uint32_t row = b.op(spv::Op::OpShiftRightLogical, u, {index, b.u32(log2_of(f.cols))});
    const uint32_t col = b.op(spv::Op::OpBitwiseAnd, u, {index, b.u32(f.cols - 1)});
    const uint32_t major = col_major ? col : row, minor = col_major ? row : col;
    const uint32_t offset =
        b.op(spv::Op::OpIMul, u,
             {b.op(spv::Op::OpIAdd, u, {b.op(spv::Op::OpIMul, u, {major, stride}), minor}),
              b.u32(bytes)});
    ResolvedAddress where = at;
    where.value =
        at.space == AddressSpace::kGlobal
            ? b.op(spv::Op::OpIAdd, t_u64, {at.value, b.op(spv::Op::OpUConvert, t_u64, {offset})})
            : b.op(spv::Op::OpIAdd, u, {at.value, offset});
    return where;
  };
  const uint32_t element_mask = bytes == 4 ? 0xFFFFFFFFu : (1u << (8 * bytes)) - 1;
  if (is_load) {
    std::vector<uint32_t> words;
    for (uint32_t r = 0; r < regs.size(); ++r) {
      uint32_t word = b.u32(0);
      for (uint32_t j = 0; j < per; ++j) {
        uint32_t v = load(ins, element_at(r * per + j), bytes);
        if (bytes < 4) v = b.op(spv::Op::OpBitwiseAnd, u, {v, b.u32(element_mask)});
        word = j == 0
                   ? v
                   : b.op(spv::Op::OpBitwiseOr, u,
                          {word, b.op(spv::Op::OpShiftLeftLogical, u, {v, b.u32(8 * bytes * j)})});
      }
      words.push_back(word);
    }
    // Every element is read before any register is written: the address may be a destination.
    for (uint32_t r = 0; r < regs.size(); ++r) write_bits(ins, *regs[r], 4, words[r], false);
    return;
  }
  std::vector<uint32_t> words;
  for (const ir::Operand* reg : regs) words.push_back(read_bits(ins, *reg, 4));
  auto store_all = [&] {
    for (uint32_t r = 0; r < regs.size(); ++r) {
      for (uint32_t j = 0; j < per; ++j) {
        uint32_t v = words[r];
        if (j > 0) v = b.op(spv::Op::OpShiftRightLogical, u, {v, b.u32(8 * bytes * j)});
        if (bytes < 4) v = b.op(spv::Op::OpBitwiseAnd, u, {v, b.u32(element_mask)});
        store(ins, element_at(r * per + j), bytes, v);
      }
    }
  };
  // A guarded store stores only where its guard holds (the guard of a warp instruction only
  // decides whose results are kept, control.cpp).
  if (store_guard_ != 0) {
    const uint32_t guard = store_guard_;
    store_guard_ = 0;
    if_then(guard, store_all);
    store_guard_ = guard;
  } else {
    store_all();
  }
}

void Kernel::lower_wmma_mma(const ir::Instruction& ins) {
  for (ir::Mod mod : {ir::Mod::kRn, ir::Mod::kRz, ir::Mod::kRm, ir::Mod::kRp}) {
    if (ins.mods.has(mod)) refuse(ins, "f64 wmma does not translate to Vulkan");
  }
  if (!ins.mods.has(ir::Mod::kRow) && !ins.mods.has(ir::Mod::kCol)) {
    invalid(ins, "wmma.mma needs the layouts of A and B (.row or .col each)");
  }
  // The types: .dtype.ctype for f16 multiplicands, .dtype.atype.btype.ctype for the others.
  const std::vector<T>& t = ins.types;
  T in = T::kF16, c_type = T::kF32, d_type = T::kF32;
  bool ok = false, a_signed = false, b_signed = false;
  const auto is_int8 = [](T type) { return type == T::kS8 || type == T::kU8; };
  if (t.size() == 2) {
    d_type = t[0];
    c_type = t[1];
    ok = (d_type == T::kF16 || d_type == T::kF32) && (c_type == T::kF16 || c_type == T::kF32);
  } else if (t.size() == 4 && is_int8(t[1]) && is_int8(t[2])) {
    in = T::kS8;
    a_signed = t[1] == T::kS8;
    b_signed = t[2] == T::kS8;
    d_type = c_type = T::kS32;
    ok = t[0] == T::kS32 && t[3] == T::kS32;
  } else if (t.size() == 4 && t[1] == t[2]) {
    if (t[1] == T::kF64) refuse(ins, "f64 wmma does not translate to Vulkan");
    in = t[1];
    ok = (in == T::kBF16 || in == T::kTF32) && t[0] == T::kF32 && t[3] == T::kF32;
  }
  const uint32_t m = ins.shape_m, n = ins.shape_n, k = ins.shape_k;
  if (!ok || !ptx::wmma_shape_defined(in, m, n, k)) {
    invalid(ins, "wmma.mma of these types and shape is not one PTX defines");
  }
  const bool saturate = ins.mods.has(ir::Mod::kSatfinite);
  if (saturate && in != T::kS8) invalid(ins, ".satfinite applies only to integer wmma.mma");
  if (ins.operands.size() != 4) invalid(ins, "wmma.mma takes four operands: d, a, b, c");
  const bool f16_in = in == T::kF16;
  const WmmaFragment fa = ptx::wmma_fragment(WmmaRole::kA, m, n, k, f16_in);
  const WmmaFragment fb = ptx::wmma_fragment(WmmaRole::kB, m, n, k, f16_in);
  const WmmaFragment fc = ptx::wmma_fragment(WmmaRole::kAccumulator, m, n, k, false);
  const uint32_t per_in = per_register(in);
  const std::vector<const ir::Operand*> d = registers_of(ins.operands[0]);
  const std::vector<const ir::Operand*> a = registers_of(ins.operands[1]);
  const std::vector<const ir::Operand*> bv = registers_of(ins.operands[2]);
  const std::vector<const ir::Operand*> c = registers_of(ins.operands[3]);
  if (a.size() != fa.per_lane / per_in || bv.size() != fb.per_lane / per_in ||
      c.size() != fc.per_lane / per_register(c_type) ||
      d.size() != fc.per_lane / per_register(d_type)) {
    invalid(ins, "wmma.mma's fragments have the wrong number of registers for its shape");
  }
  const uint32_t u = t_u32;
  auto add = [&](uint32_t x, uint32_t y) { return b.op(spv::Op::OpIAdd, u, {x, y}); };
  auto shr = [&](uint32_t x, uint32_t s) {
    return b.op(spv::Op::OpShiftRightLogical, u, {x, b.u32(s)});
  };
  auto low = [&](uint32_t x, uint32_t count) {
    return b.op(spv::Op::OpBitwiseAnd, u, {x, b.u32(count - 1)});
  };

  // The multiplicand element each product needs, for accumulator element e (0..E_c - 1) and
  // step q (0..K-1): its row-major index in A (row * K + q) or B (q * N + col), where row and
  // col are those of the lane's element e. Which lane and which register hold it follow from
  // the layout; computed here for every lane, and at run time for the lane running.
  const uint32_t bits = 32 / per_in, elements_mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  struct Operand {
    const WmmaFragment* f;
    const std::vector<const ir::Operand*>* regs;
    bool is_b;
  };
  // The value of every product's multiplicand, as the working value: f32, or an i32 for s8/u8.
  // operand_values[x][e * K + q].
  std::array<std::vector<uint32_t>, 2> operand_values;
  const uint32_t lane_first = b.op(spv::Op::OpIMul, u, {lane(), b.u32(fc.per_lane)});
  for (uint32_t x = 0; x < 2; ++x) {
    const Operand op = x == 0 ? Operand{&fa, &a, false} : Operand{&fb, &bv, true};
    const WmmaFragment& f = *op.f;
    // Row-major index of the element of product (e, q) for lane |l|.
    auto index_for = [&](uint32_t l, uint32_t e, uint32_t q) {
      const uint32_t idx = fc.index(l, e);
      return op.is_b ? q * n + idx % n : (idx / n) * k + q;
    };
    // A word request: the register and lane, per lane, that a product's element is in.
    struct Request {
      std::array<uint8_t, kLanes> reg{}, src{};
      bool operator<(const Request& o) const { return reg != o.reg ? reg < o.reg : src < o.src; }
    };
    std::map<Request, uint32_t> request_ids;  // request -> its index in |requests|
    std::vector<Request> requests;
    std::vector<uint32_t> request_of(size_t{fc.per_lane} * k);
    std::vector<uint32_t> part_of(request_of.size());  // the element within the word
    std::vector<bool> part_fixed(request_of.size());
    for (uint32_t e = 0; e < fc.per_lane; ++e) {
      for (uint32_t q = 0; q < k; ++q) {
        Request r;
        bool fixed = true;
        uint32_t part0 = 0;
        for (uint32_t l = 0; l < kLanes; ++l) {
          const uint32_t idx = index_for(l, e, q);
          const uint32_t elem = idx % f.per_lane;
          r.src[l] = static_cast<uint8_t>(idx / f.per_lane);
          r.reg[l] = static_cast<uint8_t>(elem / per_in);
          if (l == 0) part0 = elem % per_in;
          fixed = fixed && elem % per_in == part0;
        }
        auto [it, fresh] = request_ids.emplace(r, static_cast<uint32_t>(requests.size()));
        if (fresh) requests.push_back(r);
        request_of[e * k + q] = it->second;
        part_of[e * k + q] = part0;
        part_fixed[e * k + q] = fixed;
      }
    }
    // At run time: the lane's multiplicand index for product (e, q), from its own lane.
    auto runtime_index = [&](uint32_t e, uint32_t q) {
      const uint32_t idx = add(lane_first, b.u32(e));
      if (op.is_b) return add(b.u32(q * n), low(idx, n));
      return add(b.op(spv::Op::OpIMul, u, {shr(idx, log2_of(n)), b.u32(k)}), b.u32(q));
    };
    // A representative product of each request, to compute its lane and register at run time.
    std::vector<std::pair<uint32_t, uint32_t>> example(requests.size());
    for (uint32_t e = 0; e < fc.per_lane; ++e) {
      for (uint32_t q = 0; q < k; ++q) example[request_of[e * k + q]] = {e, q};
    }
    std::vector<uint32_t> src_id(requests.size()), reg_id(requests.size(), 0),
        word(requests.size(), 0);
    for (size_t r = 0; r < requests.size(); ++r) {
      const uint32_t idx = runtime_index(example[r].first, example[r].second);
      src_id[r] = shr(idx, log2_of(f.per_lane));
      bool one_register = true;
      for (uint32_t l = 1; l < kLanes; ++l)
        one_register &= requests[r].reg[l] == requests[r].reg[0];
      if (!one_register) reg_id[r] = shr(low(idx, f.per_lane), log2_of(per_in));
    }
    // One exchange per source register that some lane needs; each request reads it where its
    // lanes' register may be this one.
    for (uint32_t reg = 0; reg < op.regs->size(); ++reg) {
      bool needed = false;
      for (const Request& r : requests) {
        for (uint32_t l = 0; l < kLanes; ++l) needed |= r.reg[l] == reg;
      }
      if (!needed) continue;
      const uint32_t handle = warp_exchange(read_bits(ins, *(*op.regs)[reg], 4));
      for (size_t r = 0; r < requests.size(); ++r) {
        bool some = false;
        for (uint32_t l = 0; l < kLanes; ++l) some |= requests[r].reg[l] == reg;
        if (!some) continue;
        const uint32_t value = warp_exchanged(handle, src_id[r]);
        if (reg_id[r] == 0) {
          word[r] = value;
        } else {
          word[r] = word[r] == 0
                        ? value
                        : select(u, b.op(spv::Op::OpIEqual, t_bool, {reg_id[r], b.u32(reg)}), value,
                                 word[r]);
        }
      }
    }
    // Each product's element, converted.
    std::vector<uint32_t>& values = operand_values[x];
    values.resize(request_of.size());
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> converted;  // (request, fixed part)
    for (uint32_t e = 0; e < fc.per_lane; ++e) {
      for (uint32_t q = 0; q < k; ++q) {
        const uint32_t i = e * k + q, r = request_of[i];
        const auto key = std::make_pair(r, part_of[i]);
        if (part_fixed[i]) {
          auto found = converted.find(key);
          if (found != converted.end()) {
            values[i] = found->second;
            continue;
          }
        }
        uint32_t element = word[r];
        if (per_in > 1) {
          const uint32_t shift =
              part_fixed[i]
                  ? b.u32(part_of[i] * bits)
                  : b.op(spv::Op::OpIMul, u, {low(runtime_index(e, q), per_in), b.u32(bits)});
          element =
              b.op(spv::Op::OpBitwiseAnd, u,
                   {b.op(spv::Op::OpShiftRightLogical, u, {element, shift}), b.u32(elements_mask)});
        }
        uint32_t v = 0;
        switch (in) {
          case T::kF16:
            v = f16_to_f32(element);
            break;
          case T::kBF16:
            v = bf16_to_f32(element);
            break;
          case T::kTF32:  // the f32 with its low 13 fraction bits ignored
            v = bitcast(t_f32, b.op(spv::Op::OpBitwiseAnd, u, {element, b.u32(0xFFFFE000u)}));
            break;
          default: {  // s8 or u8, as an i32
            const bool is_signed = x == 0 ? a_signed : b_signed;
            v = is_signed
                    ? b.op(spv::Op::OpShiftRightArithmetic, u,
                           {b.op(spv::Op::OpShiftLeftLogical, u, {element, b.u32(24)}), b.u32(24)})
                    : element;
            break;
          }
        }
        values[i] = v;
        if (part_fixed[i]) converted.emplace(key, v);
      }
    }
  }
  // The lane's accumulator elements: C (and D) of f16 hold two per register, of f32 and s32 one.
  std::vector<uint32_t> c_words;
  for (const ir::Operand* reg : c) c_words.push_back(read_bits(ins, *reg, 4));
  std::vector<uint32_t> results;
  for (uint32_t e = 0; e < fc.per_lane; ++e) {
    uint32_t start = 0;
    if (c_type == T::kF16) {
      const uint32_t word16 = c_words[e / 2];
      start = f16_to_f32(e % 2 == 0 ? b.op(spv::Op::OpBitwiseAnd, u, {word16, b.u32(0xFFFF)})
                                    : shr(word16, 16));
    } else if (c_type == T::kF32) {
      start = bitcast(t_f32, c_words[e]);
    } else {
      start = c_words[e];
    }
    const std::vector<uint32_t>& av = operand_values[0];
    const std::vector<uint32_t>& bvals = operand_values[1];
    if (in == T::kS8) {
      if (!saturate) {
        uint32_t sum = start;  // i32 additions wrap, as the exact sum modulo 2^32 does
        for (uint32_t q = 0; q < k; ++q) {
          sum = add(sum, b.op(spv::Op::OpIMul, u, {av[e * k + q], bvals[e * k + q]}));
        }
        results.push_back(sum);
        continue;
      }
      // The exact sum in 64 bits, clamped to the s32 range.
      auto wide = [&](uint32_t v) { return b.op(spv::Op::OpSConvert, t_u64, {v}); };
      uint32_t sum = wide(start);
      for (uint32_t q = 0; q < k; ++q) {
        sum = b.op(spv::Op::OpIAdd, t_u64,
                   {sum, wide(b.op(spv::Op::OpIMul, u, {av[e * k + q], bvals[e * k + q]}))});
      }
      const uint32_t high = b.op(spv::Op::OpSGreaterThan, t_bool, {sum, b.u64(0x7FFFFFFFull)});
      const uint32_t below =
          b.op(spv::Op::OpSLessThan, t_bool, {sum, b.u64(0xFFFFFFFF80000000ull)});
      uint32_t r = b.op(spv::Op::OpUConvert, u, {sum});
      r = select(u, high, b.u32(0x7FFFFFFFu), r);
      results.push_back(select(u, below, b.u32(0x80000000u), r));
      continue;
    }
    uint32_t sum = start;
    for (uint32_t q = 0; q < k; ++q) {
      const uint32_t product = b.op(spv::Op::OpFMul, t_f32, {av[e * k + q], bvals[e * k + q]});
      sum = b.op(spv::Op::OpFAdd, t_f32, {sum, product});
    }
    if (d_type == T::kF16) {
      results.push_back(f32_to_f16(sum));
    } else {
      const uint32_t nan = b.op(spv::Op::OpIsNan, t_bool, {sum});
      results.push_back(select(u, nan, b.u32(0x7FFFFFFFu), bitcast(u, sum)));
    }
  }
  // Every source is read before any destination is written: D may alias A, B or C.
  if (d_type == T::kF16) {
    for (uint32_t r = 0; r < d.size(); ++r) {
      const uint32_t word16 =
          b.op(spv::Op::OpBitwiseOr, u,
               {b.op(spv::Op::OpBitwiseAnd, u, {results[2 * r], b.u32(0xFFFF)}),
                b.op(spv::Op::OpShiftLeftLogical, u, {results[2 * r + 1], b.u32(16)})});
      write_bits(ins, *d[r], 4, word16, false);
    }
    return;
  }
  for (uint32_t r = 0; r < d.size(); ++r) write_bits(ins, *d[r], 4, results[r], false);
}

}  // namespace hal::ptx_spirv
