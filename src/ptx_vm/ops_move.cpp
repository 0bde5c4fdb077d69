// mov (registers, immediates, special registers, variable addresses, vector packing), selp,
// createpolicy; and the row copy and fence the decoder core uses.
#include <atomic>
#include <chrono>
#include <ctime>

#include "ptx_vm/decode.h"

namespace hal::ptx_vm {
namespace {

struct U128 {
  uint64_t lo, hi;
};

template <typename T>
void copy_row(Exec& x, const Op& op, uint32_t mask) {
  T* d = x.row<T>(op.a[0]);
  const T* s = x.row<T>(op.a[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = s[l]; });
}

void copy_pred(Exec& x, const Op& op, uint32_t mask) {
  write_pred(x, op.a[0], x.word(op.a[1]), mask);
}

void nothing(Exec&, const Op&, uint32_t) {}

void host_fence(Exec&, const Op&, uint32_t) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

// {a, b, ...} -> d: parts a[1..N] of Part each, lowest first.
template <typename Part, int N>
void pack(Exec& x, const Op& op, uint32_t mask) {
  uint8_t* d = x.row<uint8_t>(op.a[0]);
  for (int i = 0; i < N; ++i) {
    if (op.a[1 + i] == kNoRef) continue;
    const Part* s = x.row<Part>(op.a[1 + i]);
    for_lanes(mask, [&](uint32_t l) {
      std::memcpy(d + (size_t{l} * N + i) * sizeof(Part), &s[l], sizeof(Part));
    });
  }
}

// d -> {a, b, ...}; a sink ("_") part is kNoRef and skipped.
template <typename Part, int N>
void unpack(Exec& x, const Op& op, uint32_t mask) {
  const uint8_t* s = x.row<uint8_t>(op.a[0]);
  for (int i = 0; i < N; ++i) {
    if (op.a[1 + i] == kNoRef) continue;
    Part* d = x.row<Part>(op.a[1 + i]);
    for_lanes(mask, [&](uint32_t l) {
      std::memcpy(&d[l], s + (size_t{l} * N + i) * sizeof(Part), sizeof(Part));
    });
  }
}

template <typename T>
void select(Exec& x, const Op& op, uint32_t mask) {
  T* d = x.row<T>(op.a[0]);
  const T* a = x.row<T>(op.a[1]);
  const T* b = x.row<T>(op.a[2]);
  uint32_t c = x.word(op.a[3]);
  if (op.flags != 0) c = ~c;
  for_lanes(mask, [&](uint32_t l) { d[l] = ((c >> l) & 1u) != 0 ? a[l] : b[l]; });
}

void select_pred(Exec& x, const Op& op, uint32_t mask) {
  uint32_t c = x.word(op.a[3]);
  if (op.flags != 0) c = ~c;
  const uint32_t value = (x.word(op.a[1]) & c) | (x.word(op.a[2]) & ~c);
  write_pred(x, op.a[0], value, mask);
}

uint64_t clock_now() {
  // A cycle-like counter: nanoseconds of the monotonic clock.
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

uint64_t global_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// mov d, %clock64 / %globaltimer...: imm selects the source, flags the destination width.
void read_timer(Exec& x, const Op& op, uint32_t mask) {
  uint64_t value = 0;
  switch (op.imm) {
    // clang-format off
    case 0: value = clock_now(); break;                  // %clock64
    case 1: value = clock_now() & 0xffffffffu; break;    // %clock
    case 2: value = clock_now() >> 32; break;            // %clock_hi
    case 3: value = global_now(); break;                 // %globaltimer
    case 4: value = global_now() & 0xffffffffu; break;   // %globaltimer_lo
    case 5: value = global_now() >> 32; break;           // %globaltimer_hi
      // clang-format on
  }
  if (op.flags == 8) {
    uint64_t* d = x.row<uint64_t>(op.a[0]);
    for_lanes(mask, [&](uint32_t l) { d[l] = value; });
  } else {
    uint32_t* d = x.row<uint32_t>(op.a[0]);
    for_lanes(mask, [&](uint32_t l) { d[l] = static_cast<uint32_t>(value); });
  }
}

Handler copy_for(uint32_t bytes) {
  switch (bytes) {
    // clang-format off
    case 0: return copy_pred;
    case 1: return copy_row<uint8_t>;
    case 2: return copy_row<uint16_t>;
    case 4: return copy_row<uint32_t>;
    case 8: return copy_row<uint64_t>;
    case 16: return copy_row<U128>;
      // clang-format on
  }
  return nullptr;
}

template <typename Part>
Handler pack_for(int n, bool packing) {
  switch (n) {
    // clang-format off
    case 2: return packing ? pack<Part, 2> : unpack<Part, 2>;
    case 4: return packing ? pack<Part, 4> : unpack<Part, 4>;
      // clang-format on
  }
  return nullptr;
}

bool decode_mov(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.types.size() != 1 || ins.operands.size() != 2) {
    return d.fail("mov takes one type, a destination and a source");
  }
  const ir::Type type = ins.types[0];
  const ir::Operand& dst = ins.operands[0];
  const ir::Operand& src = ins.operands[1];
  const uint32_t size = ir::type_size(type);

  // Vector packing and unpacking: mov.b64 %rd, {%r1, %r2} / mov.b32 {%h1, %h2}, %r1.
  if (dst.kind == ir::OperandKind::kVector || src.kind == ir::OperandKind::kVector) {
    const bool packing = src.kind == ir::OperandKind::kVector;
    const ir::Operand& vec = packing ? src : dst;
    const ir::Operand& whole = packing ? dst : src;
    const int n = static_cast<int>(vec.elements.size());
    if ((n != 2 && n != 4 && n != 8) || size % n != 0) {
      return d.fail("mov can pack or unpack 2, 4 or 8 equal parts of the whole");
    }
    const uint32_t part_bytes = size / n;
    ir::Type part_type = ir::Type::kNone;
    switch (part_bytes) {
      // clang-format off
      case 1: part_type = ir::Type::kB8; break;
      case 2: part_type = ir::Type::kB16; break;
      case 4: part_type = ir::Type::kB32; break;
      case 8: part_type = ir::Type::kB64; break;
      default: return d.fail("unsupported part size for mov");
        // clang-format on
    }
    op.a[0] = packing ? d.destination(whole, type) : d.source(whole, type);
    if (op.a[0] == kNoRef) return false;
    for (int i = 0; i < n; ++i) {
      const ir::Operand& e = vec.elements[i];
      if (e.kind == ir::OperandKind::kSink) {
        if (packing) return d.fail("a vector to pack cannot contain '_'");
        continue;
      }
      if (n > 4 && i >= 5) return d.fail("mov packs at most 5 named parts here");
      op.a[1 + i] = packing ? d.source(e, part_type) : d.destination(e, part_type);
      if (op.a[1 + i] == kNoRef) return false;
    }
    if (n == 8) return d.fail("mov with 8 parts is not supported on the CPU PTX device");
    switch (part_bytes) {
      // clang-format off
      case 1: op.fn = pack_for<uint8_t>(n, packing); break;
      case 2: op.fn = pack_for<uint16_t>(n, packing); break;
      case 4: op.fn = pack_for<uint32_t>(n, packing); break;
      case 8: op.fn = pack_for<uint64_t>(n, packing); break;
        // clang-format on
    }
    return op.fn != nullptr || d.fail("unsupported mov packing");
  }

  // Timers change while the kernel runs: read them when the instruction executes.
  if (src.kind == ir::OperandKind::kSpecial) {
    using S = ir::Special;
    int which = -1;
    switch (src.special) {
      // clang-format off
      case S::kClock64: which = 0; break;
      case S::kClock: which = 1; break;
      case S::kClockHi: which = 2; break;
      case S::kGlobaltimer: which = 3; break;
      case S::kGlobaltimerLo: which = 4; break;
      case S::kGlobaltimerHi: which = 5; break;
      default: break;
        // clang-format on
    }
    if (which >= 0) {
      const bool wide = which == 0 || which == 3;
      if (size != (wide ? 8u : 4u)) {
        // clang-format off
        return d.fail(std::string(ir::special_name(src.special)) + " is " +
                      (wide ? "64" : "32") + " bits wide");
        // clang-format on
      }
      op.a[0] = d.destination(dst, type);
      if (op.a[0] == kNoRef) return false;
      op.fn = read_timer;
      op.imm = static_cast<uint32_t>(which);
      op.flags = static_cast<uint8_t>(size);
      return true;
    }
  }

  if (type == ir::Type::kPred) {
    op.a[0] = d.predicate(dst);
    bool negate = false;
    op.a[1] = d.predicate(src, &negate);
    if (op.a[0] == kNoRef || op.a[1] == kNoRef) return false;
    if (negate) return d.fail("mov.pred cannot negate its source");
    op.fn = copy_pred;
    return true;
  }
  op.a[0] = d.destination(dst, type);
  if (op.a[0] == kNoRef) return false;
  op.a[1] = d.source(src, type);
  if (op.a[1] == kNoRef) return false;
  op.fn = copy_for(size);
  return op.fn != nullptr || d.fail("unsupported mov type");
}

bool decode_selp(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.types.size() != 1 || ins.operands.size() != 4) {
    return d.fail("selp takes one type, a destination, two values and a predicate");
  }
  const ir::Type type = ins.types[0];
  bool negate = false;
  op.a[3] = d.predicate(ins.operands[3], &negate);
  if (op.a[3] == kNoRef) return false;
  op.flags = negate ? 1 : 0;
  if (type == ir::Type::kPred) {
    op.a[0] = d.predicate(ins.operands[0]);
    op.a[1] = d.predicate(ins.operands[1]);
    op.a[2] = d.predicate(ins.operands[2]);
    if (op.a[0] == kNoRef || op.a[1] == kNoRef || op.a[2] == kNoRef) return false;
    op.fn = select_pred;
    return true;
  }
  op.a[0] = d.destination(ins.operands[0], type);
  op.a[1] = d.source(ins.operands[1], type);
  op.a[2] = d.source(ins.operands[2], type);
  if (op.a[0] == kNoRef || op.a[1] == kNoRef || op.a[2] == kNoRef) return false;
  switch (ir::type_size(type)) {
    // clang-format off
    case 2: op.fn = select<uint16_t>; break;
    case 4: op.fn = select<uint32_t>; break;
    case 8: op.fn = select<uint64_t>; break;
    default: return d.fail("unsupported selp type");
      // clang-format on
  }
  return true;
}

// createpolicy: cache policies only steer the L2 cache; the value is opaque to the program, so
// any 64-bit value will do for the instructions that take it.
bool decode_createpolicy(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  if (ins.operands.empty()) return d.fail("createpolicy needs a destination");
  op.a[0] = d.destination(ins.operands[0], ir::Type::kB64);
  if (op.a[0] == kNoRef) return false;
  const uint64_t zero = 0;
  op.a[1] = d.constant(&zero, 8);
  op.fn = copy_row<uint64_t>;
  return true;
}

}  // namespace

Handler copy_row_handler(uint32_t bytes) {
  return copy_for(bytes);
}

Handler fence_handler(bool fence) {
  return fence ? host_fence : nothing;
}

bool decode_move(DecodeContext& d, const ir::Instruction& ins, Op& op) {
  switch (ins.opcode) {
    // clang-format off
    case ir::Opcode::kMov: return decode_mov(d, ins, op);
    case ir::Opcode::kSelp: return decode_selp(d, ins, op);
    case ir::Opcode::kCreatepolicy: return decode_createpolicy(d, ins, op);
    default: return d.fail("not a move instruction");
      // clang-format on
  }
}

}  // namespace hal::ptx_vm
