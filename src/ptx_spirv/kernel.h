// One PTX .entry, translated into one SPIR-V entry point (translate.h gives the contract).
//
// The emission model, chosen so that every PTX instruction has one obvious lowering and the
// driver's compiler does the rest (every Vulkan driver promotes function variables to SSA):
//  - each PTX register is a Function-storage variable holding its bits: 32-bit unsigned for
//    registers of up to 4 bytes (zero-extended from the register's width), 64-bit for 8 bytes,
//    bool for predicates;
//  - an instruction loads its sources, converts them to the working type its PTX type asks for
//    (32-bit integers for every integer of up to 32 bits, sign- or zero-extended by the type;
//    64-bit integers; f32 for f32, f16 and bf16; f64), computes, and stores the bits back;
//  - global and generic addresses are 64-bit integers turned into PhysicalStorageBuffer
//    pointers at each access; shared memory is one Workgroup array of 32-bit words and local
//    memory one Function array of words, both addressed by byte offsets, which is also what
//    their PTX addresses (and generic addresses traced to them) hold;
//  - control flow comes from the structurizer (structurize.h); guarded instructions become
//    selections.
//
// Internally a refusal is thrown as a Refusal and caught by translate(); nothing else throws.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ptx/ir.h"
#include "ptx/mma_layout.h"
#include "ptx/wmma_layout.h"
#include "ptx_spirv/builder.h"
#include "ptx_spirv/structurize.h"
#include "ptx_spirv/translate.h"

namespace hal::ptx_spirv {

namespace ir = hal::ptx::ir;

// shfl, vote, match, redux, activemask, elect, bar.warp.sync and the matrix instructions.
bool is_warp_instruction(const ir::Instruction& ins);
// %laneid, %warpid, %nwarpid and %lanemask_*.
bool is_warp_special(ir::Special special);
// The registers of a vector operand ("{%r1, %r2}"), or the one register (lower_matrix.cpp).
std::vector<const ir::Operand*> registers_of(const ir::Operand& operand);
// Matrix elements of |type| in one 32-bit register: f16 and bf16 two, s8 and u8 four, others one.
uint32_t elements_per_register(ir::Type type);

struct Refusal {
  Failure::Kind kind;
  std::string message;
};

// Where an address points after tracing generic addresses back to their state space.
// kConstant: the module's .global and .const variables, which translated kernels only read (see
// Kernel::lay_out_memory), held as one initialized array of words.
enum class AddressSpace : uint8_t { kUnknown, kGlobal, kShared, kLocal, kConstant, kConflict };

// What the kernels of one module share: specialization constants may carry a SpecId once per
// module, and WorkgroupSize may be decorated once per module. Created on first use.
// The most bytes of .global and .const module variables one kernel may read.
inline constexpr uint32_t kMaxConstantBytes = 64 * 1024;
// The most local memory one thread may use, as on CUDA devices.
inline constexpr uint32_t kMaxLocalBytes = 512 * 1024;

struct ModuleState {
  uint32_t block_spec[3] = {0, 0, 0};
  uint32_t shared_bytes_spec = 0;
};

class Kernel {
 public:
  Kernel(Builder& builder, ModuleState& state, const ir::Module& module,
         const ir::Function& function, const Target& target);
  // Emits the entry point. Throws Refusal.
  void translate(KernelInfo* info);

 private:
  // ---- refusals -----------------------------------------------------------------------
  [[noreturn]] void refuse(const ir::Instruction& ins, const std::string& why) const;
  [[noreturn]] void refuse_kernel(uint32_t line, const std::string& why) const;
  [[noreturn]] void invalid(const ir::Instruction& ins, const std::string& why) const;
  void need(bool feature, const ir::Instruction& ins, const char* what) const;

  // ---- setup (kernel.cpp) -----------------------------------------------------------------
  void check_declarations();
  void lay_out_params(KernelInfo* info);
  void lay_out_memory(KernelInfo* info);
  void trace_address_spaces();
  void declare_registers();
  void declare_interface();
  std::vector<CfgBlock> build_cfg();

  // ---- control flow (control.cpp) -------------------------------------------------------
  struct Level {
    bool loop = false;
    uint32_t merge = 0;
    uint32_t continue_target = 0;
    uint32_t serial = 0;  // names the level in the exit flag
  };
  void emit_statements(const std::vector<Stmt>& list);
  void emit_construct(const Stmt& stmt);
  void emit_exit(bool is_continue, uint32_t depth);
  void emit_block_body(uint32_t block);
  uint32_t block_condition(uint32_t block);
  void open_block(uint32_t label);
  void branch(uint32_t label);  // terminates the current block
  void if_then(uint32_t condition, const std::function<void()>& then);
  // Emits the memory writes of a warp instruction: where it is guarded, only in the lanes whose
  // guard holds.
  void warp_memory_writes(const std::function<void()>& writes);
  // Atomically replaces the |type| value at |ptr| by update(old), by compare-and-swap until no
  // other write came between; returns the old value the successful swap read.
  uint32_t cas_loop(uint32_t ptr, uint32_t type, uint32_t scope, uint32_t semantics,
                    const std::function<uint32_t(uint32_t)>& update);

  // ---- instructions (lower_*.cpp) -------------------------------------------------------
  void lower(const ir::Instruction& ins);
  bool lower_integer(const ir::Instruction& ins);  // false: not an integer instruction
  bool lower_float(const ir::Instruction& ins);
  uint32_t round_directed(const ir::Instruction& ins, uint32_t wide_f64);
  // An f64 sum with the sign IEEE gives an exact zero under the instruction's rounding mode.
  uint32_t signed_zero_sum(const ir::Instruction& ins, uint32_t x, uint32_t y, uint32_t sum);
  // fma.rn.f32 rounded once; needs float64.
  uint32_t fused_f32(const ir::Instruction& ins, uint32_t x, uint32_t y, uint32_t z);
  // f16 and bf16 arithmetic, scalar and in pairs; false: not an instruction it takes.
  bool lower_half(const ir::Instruction& ins);
  // fma of f16 or bf16 values (in f32) as an f32 that rounds to the format as the exact result
  // does; needs float64.
  uint32_t fused_half(const ir::Instruction& ins, uint32_t x, uint32_t y, uint32_t z);
  bool lower_compare(const ir::Instruction& ins);
  bool lower_convert(const ir::Instruction& ins);
  bool lower_simd(const ir::Instruction& ins);  // the SIMD video instructions
  bool lower_memory(const ir::Instruction& ins);
  void lower_atomic(const ir::Instruction& ins);  // atom and red
  bool lower_misc(const ir::Instruction& ins);

  // ---- warp-level PTX (lower_warp.cpp) --------------------------------------------------
  // Decides whether the kernel is a warp kernel, and how its warps run: on 32-lane subgroups
  // (KernelInfo::warp_size; a .reqntid that does not fit them is refused), or, on a device
  // without them, through workgroup memory.
  void check_warp(KernelInfo* info);
  // Warps through workgroup memory: refuses the kernel when a warp instruction lies in code that
  // the threads of a block may not all run together (uniformity.h).
  void check_warps_run_together(const std::vector<CfgBlock>& cfg);
  // For a warp kernel: the lane and subgroup built-ins, and %tid numbered from them; or, through
  // workgroup memory, lanes from the invocation index and the exchange array.
  void declare_warp();
  void declare_workgroup_warps();
  // A half of the exchange array for a .reqntid block: its threads rounded up to whole warps.
  uint32_t workgroup_warp_words() const;
  void workgroup_barrier();
  bool lower_warp(const ir::Instruction& ins);  // false: not a warp instruction
  void lower_shfl(const ir::Instruction& ins);
  void lower_vote(const ir::Instruction& ins);
  void lower_match(const ir::Instruction& ins);
  void lower_redux(const ir::Instruction& ins);
  void lower_elect(const ir::Instruction& ins);
  // The tensor-core instructions that translate (lower_matrix.cpp).
  void lower_mma(const ir::Instruction& ins);
  void lower_ldmatrix(const ir::Instruction& ins);
  void lower_stmatrix(const ir::Instruction& ins);
  void lower_movmatrix(const ir::Instruction& ins);
  // One warp's D = A B + C on fragments laid out by the tables |a|, |b| and |c| (c also D's):
  // multiplicands of |in| (f16, bf16, tf32, or s8 for both 8-bit integers, with their
  // signedness), accumulators of |c_type| and |d_type| (f16, f32, s32). lower_matrix.cpp.
  struct MatrixProduct {
    uint32_t m = 0, n = 0, k = 0;
    const ptx::MatrixFragment *a = nullptr, *b = nullptr, *c = nullptr;
    ir::Type in = ir::Type::kF16;
    bool a_signed = false, b_signed = false;
    ir::Type c_type = ir::Type::kF32, d_type = ir::Type::kF32;
    bool satfinite = false;
  };
  // Its d, a, b and c are the instruction's four operands, in that order.
  void matrix_product(const ir::Instruction& ins, const MatrixProduct& p);
  // A u32 that is values[lane] in each lane; refuses |ins| unless the values are linear in the
  // lane's bits, as every fragment layout's lane, register and element numbers are.
  uint32_t lane_function(const ir::Instruction& ins, const std::array<uint32_t, 32>& values);
  // wmma's loads, stores and multiply-accumulates (lower_wmma.cpp).
  void lower_wmma(const ir::Instruction& ins);
  void lower_wmma_memory(const ir::Instruction& ins, ptx::WmmaRole role, bool is_load);
  void lower_wmma_mma(const ir::Instruction& ins);

 public:  // the value helpers, used by the lowering files' free functions
  // ---- values (values.cpp) --------------------------------------------------------------
  Builder& b;
  uint32_t t_bool = 0, t_u32 = 0, t_u64 = 0, t_f32 = 0, t_f64 = 0;
  // The working type for PTX type |type| (see above).
  uint32_t working_type(ir::Type type);
  // The f64 type, declaring Float64; refuses |ins| on a device without it.
  uint32_t f64(const ir::Instruction& ins);
  // A source operand read as |type|'s working value.
  uint32_t read(const ir::Instruction& ins, const ir::Operand& operand, ir::Type type);
  // A source operand's raw bits: u32 for |bytes| <= 4 (zero-extended), u64 for 8.
  uint32_t read_bits(const ir::Instruction& ins, const ir::Operand& operand, uint32_t bytes);
  // Stores |value| (|type|'s working value) into the destination register.
  void write(const ir::Instruction& ins, const ir::Operand& operand, ir::Type type, uint32_t value);
  // Stores raw bits (u32 for bytes <= 4, u64 for 8) into a register: extended (signed or not)
  // or truncated to the register's width.
  void write_bits(const ir::Instruction& ins, const ir::Operand& operand, uint32_t bytes,
                  uint32_t bits, bool sign_extend);
  uint32_t read_predicate(const ir::Instruction& ins, const ir::Operand& operand);
  void write_predicate(const ir::Instruction& ins, uint32_t reg, uint32_t value);
  // Bits <-> working value.
  uint32_t to_working(uint32_t bits, ir::Type type);
  uint32_t from_working(uint32_t value, ir::Type type);
  uint32_t f16_to_f32(uint32_t bits_u32);
  uint32_t f32_to_f16(uint32_t value_f32);  // round to nearest even, bits in a u32
  uint32_t bf16_to_f32(uint32_t bits_u32);
  uint32_t f32_to_bf16(uint32_t value_f32);
  uint32_t constant_of(const ir::Instruction& ins, const ir::Operand& operand, ir::Type type);
  uint32_t special(const ir::Instruction& ins, const ir::Operand& operand);
  uint32_t warp_special(const ir::Instruction& ins, ir::Special which);  // %laneid, ...
  // Warp kernels (lower_warp.cpp): whether the warps run through workgroup memory; the lane
  // (u32); the lanes of the thread's warp that the block has (through workgroup memory).
  bool warps_in_workgroup_memory() const { return warp_emulated_; }
  uint32_t lane() const { return lane_; }
  uint32_t warp_lanes() const { return warp_lanes_; }
  // Through workgroup memory: every thread stores |value| (u32) for its warp to read, then a
  // workgroup barrier; published_by(lane) then reads lane |lane|'s (u32, 0..31) word.
  void publish_to_warp(uint32_t value);
  uint32_t published_by(uint32_t lane);
  // Either way: warp_exchange(value) makes each lane's |value| (u32) readable by its warp and
  // returns a handle; warp_exchanged(handle, lane) is lane |lane|'s value (u32, a lane of the
  // warp). Through workgroup memory a handle stays readable until the second exchange after it.
  uint32_t warp_exchange(uint32_t value);
  uint32_t warp_exchanged(uint32_t handle, uint32_t lane);
  uint32_t symbol_address(const ir::Instruction& ins, const ir::SymbolRef& symbol);
  uint32_t load_register(uint32_t reg);
  void store_register(uint32_t reg, uint32_t value);
  uint32_t register_bytes(uint32_t reg) const;
  const ir::Register& reg(uint32_t index) const { return function_.registers[index]; }
  uint32_t glsl(uint32_t type, uint32_t instruction, std::initializer_list<uint32_t> args) {
    return b.ext(type, instruction, args);
  }
  uint32_t select(uint32_t type, uint32_t condition, uint32_t if_true, uint32_t if_false) {
    return b.op(spv::Op::OpSelect, type, {condition, if_true, if_false});
  }
  uint32_t bitcast(uint32_t type, uint32_t value) {
    return b.op(spv::Op::OpBitcast, type, {value});
  }

  // ---- memory (lower_memory.cpp) ---------------------------------------------------------
  struct ResolvedAddress {
    AddressSpace space = AddressSpace::kGlobal;
    bool param = false;  // a kernel parameter: |offset| into the parameter block
    uint32_t value = 0;  // global: u64 address; others: u32 byte offset; 0 for param
    int64_t offset = 0;  // param only
  };
  ResolvedAddress resolve_address(const ir::Instruction& ins, const ir::Operand& address,
                                  ir::Space space);
  uint32_t load(const ir::Instruction& ins, const ResolvedAddress& at, uint32_t bytes);
  void store(const ir::Instruction& ins, const ResolvedAddress& at, uint32_t bytes, uint32_t bits);
  uint32_t load_param(const ir::Instruction& ins, int64_t offset, uint32_t bytes);
  uint32_t word_pointer(spv::StorageClass storage, uint32_t array, uint32_t byte_offset);
  // The word array and its storage class behind a shared, local or constant address.
  std::pair<spv::StorageClass, uint32_t> word_array(AddressSpace space) const;
  ResolvedAddress advance(const ResolvedAddress& at, uint32_t bytes);
  void ordered_access(const ir::Instruction& ins, const ResolvedAddress& at, uint32_t bytes,
                      bool is_load, const ir::Operand& data);
  uint32_t access_mask() const;  // a global access's memory operands: Aligned, maybe Volatile

 private:
  // ldmatrix's and stmatrix's registers (checked against .x1, .x2, .x4) and shared address
  // (lower_matrix.cpp).
  ResolvedAddress matrix_rows(const ir::Instruction& ins, std::vector<const ir::Operand*>* regs);

 private:
  ModuleState& state_;
  const ir::Module& module_;
  const ir::Function& function_;
  const Target& target_;

  std::vector<uint32_t> registers_;       // variable id per PTX register
  std::vector<uint32_t> register_types_;  // its storage type
  std::vector<AddressSpace> spaces_;      // per register, after tracing
  std::vector<bool> constant_reached_;    // per register: may hold a module variable's address
  // Byte offsets of the variables this kernel uses: module-scope ones, then function-scope.
  std::vector<int64_t> module_var_offset_;
  std::vector<int64_t> function_var_offset_;
  uint32_t param_bytes_ = 0;
  bool params_in_buffer_ = false;  // the push constants hold the parameter block's address
  std::vector<uint32_t> param_offsets_;
  uint32_t shared_array_ = 0;  // Workgroup u32 array, or 0
  uint32_t local_array_ = 0;   // Function u32 array, or 0
  uint32_t local_words_ = 0;
  uint32_t constant_array_ = 0;          // Private u32 array of the module variables, or 0
  std::vector<uint8_t> constant_bytes_;  // its initial contents
  uint32_t shared_words_static_ = 0;
  uint32_t dynamic_shared_offset_ = 0;
  bool dynamic_shared_ = false;
  uint32_t shared_bytes_spec_ = 0;
  uint32_t push_constants_ = 0;  // the push-constant variable, or 0
  uint32_t push_words_ = 0;
  uint32_t block_size_[3] = {0, 0, 0};  // ids: u32 constants or spec constants
  uint32_t builtin_local_id_ = 0, builtin_group_id_ = 0, builtin_groups_ = 0;
  bool warp_ = false;            // a warp kernel (check_warp)
  bool warp_emulated_ = false;   // its warps run through workgroup memory
  uint32_t thread_index_ = 0;    // through workgroup memory: LocalInvocationIndex, loaded
  uint32_t warp_lanes_ = 0;      // through workgroup memory: the lanes the warp has (u32)
  uint32_t warp_exchange_ = 0;   // through workgroup memory: the Workgroup u32 array
  uint32_t exchange_half_ = 0;   // its half's length in words (a constant or spec constant)
  uint32_t exchange_side_ = 0;   // u32 Function variable: the half the next exchange uses
  uint32_t published_base_ = 0;  // the first word of the last exchange's half (u32)
  uint32_t lane_ = 0;            // warp kernels: %laneid, loaded at entry
  uint32_t warp_index_ = 0;      // warp kernels: %warpid, loaded at entry
  uint32_t tid_[3] = {0, 0, 0};  // warp kernels: %tid, numbered from the subgroups
  uint32_t carry_ = 0;           // the .cc carry flag (u32 variable), created on first use
  uint32_t exit_flag_ = 0;       // u32 variable for multi-level exits, created on first use
  bool volatile_ = false;        // the access being lowered is ld.volatile or st.volatile
  // Nonzero while a guarded warp instruction is lowered: its guard (bool); only the lanes where
  // it holds store into registers.
  uint32_t store_guard_ = 0;
  std::vector<uint32_t> interface_;

  // The control-flow graph's blocks: instruction ranges, and the branch condition.
  struct BlockRange {
    uint32_t begin = 0, end = 0;  // instructions [begin, end), terminator excluded
    uint32_t guard = 0;           // kBranch: the predicate register
    bool guard_negated = false;
    uint32_t selector = 0;  // kSwitch: the index register
    const ir::Instruction* terminator = nullptr;
  };
  std::vector<BlockRange> ranges_;
  std::vector<Level> levels_;
  uint32_t next_serial_ = 1;
  bool block_open_ = false;  // the current SPIR-V block has no terminator yet
};

}  // namespace hal::ptx_spirv
