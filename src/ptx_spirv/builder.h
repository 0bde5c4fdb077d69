// A SPIR-V module builder: ids, the module's sections in the order the specification lays
// them out, types and constants created once each, and the instructions of function bodies.
//
// It checks nothing about what it is given: the translator decides what is valid, and the
// caller validates the finished module before any driver sees it (translate.h).
//
// Thread-safety: one builder per translation, used by one thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <spirv/unified1/spirv.hpp11>

namespace hal::ptx_spirv {

class Builder {
 public:
  using Words = std::vector<uint32_t>;

  uint32_t fresh_id() { return next_id_++; }

  // ---- module-level sections --------------------------------------------------------------
  void capability(spv::Capability capability);  // once each, whatever the number of calls
  void extension(std::string_view name);        // likewise
  uint32_t glsl_std_450();                      // the extended instruction set's id
  void entry_point(uint32_t function, std::string_view name, const Words& interface);
  void execution_mode(uint32_t function, spv::ExecutionMode mode, const Words& literals);
  void execution_mode_id(uint32_t function, spv::ExecutionMode mode, const Words& ids);
  void name(uint32_t id, std::string_view text);
  void decorate(uint32_t id, spv::Decoration decoration, const Words& literals = {});
  void member_decorate(uint32_t type, uint32_t member, spv::Decoration decoration,
                       const Words& literals = {});

  // ---- types (each created once) ----------------------------------------------------------
  uint32_t type_void();
  uint32_t type_bool();
  uint32_t type_int(uint32_t bits);  // unsigned: signedness lives in the opcodes
  uint32_t type_float(uint32_t bits);
  uint32_t type_vector(uint32_t component, uint32_t count);
  uint32_t type_array(uint32_t element, uint32_t length_id, uint32_t stride);  // decorated
  uint32_t type_struct(const Words& members);  // undecorated, created once per member list
  // A Block-decorated struct of one member at offset 0 (push constants). Not shared.
  uint32_t type_block(uint32_t member);
  uint32_t type_pointer(spv::StorageClass storage, uint32_t pointee);
  uint32_t type_function(uint32_t result, const Words& params);

  // ---- constants (each created once) ------------------------------------------------------
  uint32_t constant_bool(bool value);
  uint32_t constant_int(uint32_t bits, uint64_t value);  // the low |bits| bits of value
  uint32_t constant_float(uint32_t bits, uint64_t bit_pattern);
  uint32_t u32(uint32_t value) { return constant_int(32, value); }
  uint32_t u64(uint64_t value) { return constant_int(64, value); }
  uint32_t spec_constant_u32(uint32_t spec_id, uint32_t default_value);  // not shared
  uint32_t spec_constant_op(uint32_t type, spv::Op op, const Words& operands);
  uint32_t spec_constant_composite(uint32_t type, const Words& constituents);
  uint32_t constant_composite(uint32_t type, const Words& constituents);  // not shared

  // A global variable (every storage class but Function); |initializer| a constant id, or 0.
  uint32_t global_variable(uint32_t pointer_type, spv::StorageClass storage,
                           uint32_t initializer = 0);

  // ---- function bodies --------------------------------------------------------------------
  // Instructions go to the current function: its variables (which SPIR-V wants first in the
  // entry block) apart from its code, so both can grow as the body is emitted.
  void begin_function(uint32_t function, uint32_t result_type, uint32_t function_type);
  void end_function();
  // A Function-storage variable, in the entry block; |initializer| a constant id, or 0.
  uint32_t local_variable(uint32_t pointer_type, uint32_t initializer = 0);
  void label(uint32_t id);
  // An instruction with a result type and result id; returns the id.
  uint32_t op(spv::Op op, uint32_t type, std::initializer_list<uint32_t> operands);
  uint32_t op(spv::Op op, uint32_t type, const Words& operands);
  // An instruction without result (stores, branches, barriers).
  void op_void(spv::Op op, std::initializer_list<uint32_t> operands);
  void op_void(spv::Op op, const Words& operands);
  uint32_t ext(uint32_t type, uint32_t instruction, std::initializer_list<uint32_t> operands);

  Words finish();  // the whole module; the builder is spent

  // Going back: checkpoint() returns the builder's state outside function bodies (finished
  // bodies only grow, so their length stands for them), and restore() returns to it, dropping
  // everything emitted since, a half-emitted function included. A kernel refused halfway is
  // undone this way while the module's other kernels stay. Copying is proportional to the
  // module-level sections, not to the bodies.
  Builder checkpoint() const;
  void restore(Builder&& checkpoint);

 private:
  static void append(Words* section, spv::Op op, const Words& operands);
  static void append_string(Words* words, std::string_view text);
  uint32_t cached(std::map<Words, uint32_t>* cache, Words* section, spv::Op op,
                  const Words& key_operands, bool result_first);

  uint32_t next_id_ = 1;
  uint32_t glsl_ = 0;
  std::vector<spv::Capability> capabilities_;
  std::vector<std::string> extensions_;
  Words entry_points_, execution_modes_, debug_, annotations_, globals_, functions_;
  std::map<Words, uint32_t> types_, constants_;
  // The current function.
  Words function_header_, entry_label_, variables_, body_;
  bool in_function_ = false;
  bool entry_label_seen_ = false;
  size_t functions_size_ = 0;  // in a checkpoint: the length of functions_ when it was taken
};

}  // namespace hal::ptx_spirv
