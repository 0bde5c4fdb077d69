// The decoder's state, shared by the files that implement it (decoder.h is its interface):
//  - decoder.cpp           storage (frame rows, constants), inlining, control flow, dispatch to
//                          the instruction families, and the kernel as a whole;
//  - decoder_layout.cpp    memory layout: the shared variables a kernel uses, local memory;
//  - decoder_operands.cpp  operands: registers, immediates, special registers, symbols and
//                          addresses, with PTX's type rules.
// Internal to src/ptx_vm.
#pragma once

#include "ptx_vm/decode.h"
#include "ptx_vm/decoder.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hal::ptx_vm::decoding {

constexpr uint32_t kMaxOps = 1u << 22;
constexpr uint32_t kMaxInlineDepth = 64;
constexpr uint64_t kMaxFrameBytes = 64u << 20;   // per warp
constexpr uint64_t kMaxLocalBytes = 512u << 10;  // per thread (CUDA's limit)
constexpr uint64_t kMaxStaticShared = 1u << 30;  // beyond any device's; the driver checks
constexpr uint32_t kScratchBytes = 2048;         // shared by all instructions
constexpr uint64_t kUnplaced = ~uint64_t{0};

inline uint64_t align_up(uint64_t value, uint64_t align) {
  return align <= 1 ? value : (value + align - 1) / align * align;
}

// Where a variable of a function body, or a formal parameter, lives.
struct Location {
  MemSpace space = MemSpace::kLocal;
  uint64_t offset = kUnplaced;
};

// One inlined instance of a function (the entry is the first).
struct Copy {
  uint32_t function = 0;
  bool is_entry = false;
  std::vector<Ref> registers;   // per ir::Function::registers
  std::vector<Ref> reg_params;  // .reg-style formals, kNoRef for .param ones
  std::vector<Ref> reg_returns;
  std::vector<Location> params;  // .param formals: the caller's argument variables
  std::vector<Location> returns;
  std::vector<uint32_t> pc_of;  // the first Op of each instruction; [size] = the end
};

struct Fixup {
  uint32_t pc = 0;
  uint32_t copy = 0;
  uint32_t label = 0;
  bool to_end = false;  // ret inside an inlined function
};

inline std::string quote(const std::string& text) {
  return "'" + text + "'";
}

class Decoder final : public DecodeContext {
 public:
  Decoder(const ir::Module& module, const ModuleAddresses& addresses, size_t entry, Kernel* out)
      : module_(module), addresses_(addresses), entry_(entry), k_(*out) {}

  bool run(std::string* error);

  // DecodeContext
  const ir::Instruction& instruction() const override { return *ins_; }
  bool fail(const std::string& reason) override;
  Ref source(const ir::Operand& operand, ir::Type type, bool allow_wider = false) override;
  Ref destination(const ir::Operand& operand, ir::Type type, bool allow_wider = false) override;
  uint32_t register_bytes(const ir::Operand& operand) const override;
  Ref predicate(const ir::Operand& operand, bool* negate = nullptr) override;
  Ref constant(const void* bytes, uint32_t size) override;
  Ref special(ir::Special special, uint32_t component) override;
  Ref scratch(uint32_t bytes) override;
  Ref carry() override;
  bool address(const ir::Operand& operand, MemSpace space, Address* out) override;
  bool symbol_address(const ir::Operand& operand, MemSpace space, uint64_t* out) override;
  bool symbol_value(const ir::Operand& operand, uint64_t* out) override;
  Kernel& kernel() override { return k_; }
  Op& extra_op() override;

 private:
  const ir::Function& function(uint32_t index) const { return module_.functions[index]; }
  // The defined function a call to |index| runs (a declaration resolves to the definition of
  // the same name), or |index| itself.
  uint32_t definition_of(uint32_t index) const;

  bool plan_memory();
  bool collect(uint32_t function, std::vector<uint8_t>* reachable, uint32_t depth);
  bool place_variable(const ir::Variable& variable, uint64_t* shared_top, uint64_t* local_top,
                      uint32_t line, Location* out);
  bool expand(uint32_t function, Copy* copy, uint32_t depth);
  bool decode_instruction(const ir::Instruction& ins, uint32_t copy_index, uint32_t depth);
  bool decode_call(const ir::Instruction& ins, uint32_t copy_index, uint32_t depth);
  bool decode_control(const ir::Instruction& ins, uint32_t copy_index, Op& op, bool* handled);
  bool decode_barrier(const ir::Instruction& ins, Op& op);
  bool finish(std::string* error);

  Ref alloc_row(uint32_t bytes_per_lane);
  Ref alloc_word();
  Ref register_ref(const ir::Operand& operand, uint32_t* bytes, bool* is_pred);
  bool immediate_bytes(const ir::Operand& operand, ir::Type type, uint8_t* out, uint32_t* size);
  const Location* variable_location(const ir::SymbolRef& symbol) const;
  void push_op(const Op& op);

  const ir::Module& module_;
  const ModuleAddresses& addresses_;
  size_t entry_;
  Kernel& k_;

  std::vector<std::unique_ptr<Copy>> copies_;
  std::vector<uint32_t> call_chain_;
  std::vector<Fixup> fixups_;
  std::map<std::string, uint32_t> definitions_;  // name -> defined function index

  // Memory layout.
  std::vector<uint64_t> module_shared_;               // per module variable; kUnplaced
  std::vector<std::vector<Location>> function_vars_;  // per function, per body variable
  uint64_t dynamic_align_ = 0;                        // 0: no .extern .shared
  uint64_t dynamic_offset_ = 0;

  // Frame layout.
  uint64_t frame_top_ = kScratchBytes;
  Ref word_block_ = kNoRef;
  uint32_t words_left_ = 0;
  uint32_t scratch_used_ = 0;
  std::map<std::string, Ref> constants_;
  std::map<uint32_t, Ref> specials_;
  Ref carry_ = kNoRef;

  // The instruction being decoded.
  const ir::Instruction* ins_ = nullptr;
  Copy* copy_ = nullptr;
  std::vector<Op> extras_;
  std::string error_;
};

}  // namespace hal::ptx_vm::decoding
