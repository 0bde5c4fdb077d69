// Decoding one kernel from the front end's IR into a Kernel (code.h).
//
// The decoder inlines every .func call into the entry (refusing recursion), lays out the frame,
// the constant pool, shared, local and parameter memory, turns each instruction into one or more
// Ops through the decoder of its instruction family (ops_*.cpp), and finally computes each
// branch's reconvergence point (cfg.h).
//
// Family decoders see only DecodeContext: it resolves operands to Refs with PTX's type rules,
// materialises immediates, and reports errors as "line N: 'text': reason". A family decoder
// returns false after calling fail(); it never throws.
#pragma once

#include "ptx/ir.h"
#include "ptx_vm/code.h"
#include "ptx_vm/exec.h"

#include <cstdint>
#include <string>

namespace hal::ptx_vm {

namespace ir = hal::ptx::ir;

// An address operand, resolved: base register (kNoRef for an absolute address), its width, the
// displacement, and the state space the access goes to.
struct Address {
  Ref base = kNoRef;
  uint32_t base_bytes = 0;  // 4 or 8 when |base| is a register
  int64_t disp = 0;
  MemSpace space = MemSpace::kGeneric;
};

class DecodeContext {
 public:
  virtual ~DecodeContext() = default;

  // The instruction being decoded.
  virtual const ir::Instruction& instruction() const = 0;
  // Records "line N: 'text': |reason|" and returns false, for `return d.fail(...)`.
  virtual bool fail(const std::string& reason) = 0;

  // A source operand of |type|: a register of exactly its size (predicates: a .pred register),
  // or an immediate converted to |type| and materialised in the constant pool. With
  // |allow_wider|, a register wider than |type| is accepted (ld, st and cvt permit it; the
  // handler reads the low bytes). kNoRef after fail().
  virtual Ref source(const ir::Operand& operand, ir::Type type, bool allow_wider = false) = 0;
  // A destination register of |type|'s size (wider with |allow_wider|). kNoRef after fail().
  virtual Ref destination(const ir::Operand& operand, ir::Type type, bool allow_wider = false) = 0;
  // The size in bytes of the register |operand| names (0 for predicates and non-registers).
  virtual uint32_t register_bytes(const ir::Operand& operand) const = 0;
  // A predicate operand (source or destination): its word. |negate| receives "!%p".
  virtual Ref predicate(const ir::Operand& operand, bool* negate = nullptr) = 0;
  // A row of 32 copies of |bytes| (1, 2, 4, 8 or 16 bytes) in the constant pool.
  virtual Ref constant(const void* bytes, uint32_t size) = 0;
  // A row the engine fills before the warp runs (special registers that are fixed for a block).
  // kNoRef (after fail()) for registers that change while running (%clock, %globaltimer).
  virtual Ref special(ir::Special special, uint32_t component) = 0;
  // A scratch row of |bytes| per lane, private to this instruction.
  virtual Ref scratch(uint32_t bytes) = 0;
  // The word holding the carry flag of add.cc and friends.
  virtual Ref carry() = 0;
  // An address operand ("[%rd1+8]", "[name]") for an instruction whose state space is |space|
  // (kGeneric when it names none). Resolves variable names to their addresses in that space.
  virtual bool address(const ir::Operand& operand, MemSpace space, Address* out) = 0;
  // The address of a symbol operand (plus its offset) in |space|: generic addresses for
  // kGeneric, and for any other space the address within it, which must be the symbol's own
  // (or, for ld.param/st.param of a .func's parameters, the thread's storage for them). False
  // after fail() for names that have no address (labels, functions).
  virtual bool symbol_address(const ir::Operand& operand, MemSpace space, uint64_t* out) = 0;
  // What mov of a symbol gives: its address in its own state space (a shared variable's offset
  // in shared memory, a global's host address).
  virtual bool symbol_value(const ir::Operand& operand, uint64_t* out) = 0;
  // Storage owned by the kernel, for Op::ext.
  virtual Kernel& kernel() = 0;
  // Appends one more Op after the one being decoded (for instructions that need several);
  // the primary Op is written by the family decoder through its |op| argument.
  virtual Op& extra_op() = 0;
};

// A family decoder: fills |op| (fn, refs, kind) for |ins|, or returns false after d.fail().
using FamilyDecoder = bool (*)(DecodeContext& d, const ir::Instruction& ins, Op& op);

// The decoders of each family (ops_*.cpp). Each handles the opcodes its file lists and fails
// with a reason for combinations of modifiers and types it does not execute.
bool decode_move(DecodeContext& d, const ir::Instruction& ins, Op& op);        // mov, selp, ...
bool decode_integer(DecodeContext& d, const ir::Instruction& ins, Op& op);     // integer ALU
bool decode_float(DecodeContext& d, const ir::Instruction& ins, Op& op);       // float ALU
bool decode_compare(DecodeContext& d, const ir::Instruction& ins, Op& op);     // setp, set, slct
bool decode_convert(DecodeContext& d, const ir::Instruction& ins, Op& op);     // cvt
bool decode_memory(DecodeContext& d, const ir::Instruction& ins, Op& op);      // ld, st, cvta, ...
bool decode_atomic(DecodeContext& d, const ir::Instruction& ins, Op& op);      // atom, red
bool decode_async_copy(DecodeContext& d, const ir::Instruction& ins, Op& op);  // cp.async
bool decode_warp(DecodeContext& d, const ir::Instruction& ins, Op& op);        // shfl, vote, ...
bool decode_matrix(DecodeContext& d, const ir::Instruction& ins, Op& op);      // mma, ldmatrix
bool decode_wmma(DecodeContext& d, const ir::Instruction& ins, Op& op);        // wmma
bool decode_simd(DecodeContext& d, const ir::Instruction& ins, Op& op);        // vabsdiff4, ...

// Handlers the decoder core uses directly (ops_move.cpp).
// Copies a row of |bytes| per lane from a[1] to a[0]; 0 copies a predicate word.
Handler copy_row_handler(uint32_t bytes);
// Nothing, or a host memory fence for fence/membar.
Handler fence_handler(bool fence);
// CUDA's device printf: vprintf(format, arguments) with a PrintfInfo in Op::ext (ops_printf.cpp).
Handler vprintf_handler();

// Whether |type| is one of the integer types an integer instruction names (b/u/s).
inline bool is_integer_type(ir::Type t) {
  return ir::is_signed(t) || ir::is_unsigned(t) || ir::is_bits(t);
}

}  // namespace hal::ptx_vm
