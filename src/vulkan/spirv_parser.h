// The SPIR-V reflection parser's internals, shared by its parts (spirv_reflect.h is the
// interface): the module walk and type layout (spirv_reflect.cpp), the evaluation of constants
// after specialization (spirv_constants.cpp), and the tracing of buffer device addresses through
// function bodies (spirv_addresses.cpp). Not for use outside those files.
#pragma once

#include "vulkan/spirv_enums.h"
#include "vulkan/spirv_reflect.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace hal::vulkan::spirv {

// Caps on what the parser follows in hostile input.
constexpr int kMaxTypeDepth = 32;
constexpr int kMaxConstantDepth = 64;
constexpr uint64_t kMaxSize = 0xFFFFFFFFull;

struct Type {
  uint32_t op = 0;
  std::vector<uint32_t> operands;  // the words after the result id
};

struct Constant {
  bool spec = false;
  uint32_t type = 0;
  uint64_t value = 0;
  std::vector<uint32_t> constituents;  // composites
  uint32_t operation = 0;              // OpSpecConstantOp: the opcode, with its operands
  std::vector<uint32_t> operands;
};

// A scalar constant's value after specialization; unknown when it cannot be evaluated here or
// is decided at launch.
struct Value {
  bool known = false;
  uint64_t bits = 0;  // the low |width| bits; booleans are 0 or 1
};

struct Variable {
  uint32_t type = 0;  // a pointer type
  uint32_t storage = 0;
};

struct EntryRecord {
  uint32_t model = 0;
  uint32_t function = 0;
  std::string name;
  std::vector<uint32_t> interface;
};

struct Decorations {
  bool has_set = false, has_binding = false, has_spec_id = false;
  bool block = false, buffer_block = false, workgroup_size = false;
  uint32_t set = 0, binding = 0, spec_id = 0;
  uint32_t aligned = 0;       // the Aligned decoration of a pointer, 0 when absent
  uint32_t array_stride = 0;  // the ArrayStride decoration of an array type, 0 when absent
};

// Where a pointer or address in a function body comes from: push-constant member |member| of
// the push-constant variable |variable|.
inline uint64_t member_key(uint32_t variable, uint32_t member) {
  return (static_cast<uint64_t>(variable) << 32) | member;
}

class Parser {
 public:
  Parser(const uint32_t* words, size_t count, const ReflectOptions& options)
      : words_(words), count_(count) {
    for (const SpecValue& spec : options.specializations) given_[spec.id] = spec.value;
    if (options.launch_spec_id != kNoSpecId) launch_ids_.insert(options.launch_spec_id);
  }

  bool run(ReflectedModule* out, std::string* error);

 private:
  bool fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  bool read_string(size_t begin, size_t end, std::string* out, size_t* next);
  bool parse_instruction(uint32_t op, size_t at, size_t length);
  bool build(ReflectedModule* out);
  bool type_size(uint32_t id, int depth, uint64_t* size, uint32_t* alignment);
  bool type_size_uncached(uint32_t id, int depth, uint64_t* size, uint32_t* alignment);
  bool reflect_cooperative_matrices(ReflectedModule* module);
  bool resolve_block(const std::vector<uint32_t>& ids, ReflectedEntryPoint* entry);
  // Evaluation after specialization. |at_launch|: constants decided at launch are unknown.
  Value evaluate(uint32_t id, bool at_launch, int depth);
  Value evaluate_operation(const Constant& constant, bool at_launch, int depth);
  bool int_type(uint32_t type, uint32_t* width) const;
  uint32_t spec_id_of(uint32_t id) const;
  // Function bodies: which pointers and addresses come from push-constant members, and the
  // alignment of every access made through them.
  void trace(uint32_t op, size_t at, size_t length);
  void note_access(uint32_t pointer, uint32_t alignment);
  uint32_t scalar_alignment(uint32_t type, int depth) const;

  const uint32_t* words_;
  size_t count_;
  std::string error_;
  uint32_t version_ = 0;
  bool physical_storage_buffer_ = false;
  std::vector<uint32_t> capabilities_;
  std::vector<EntryRecord> entries_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> local_size_;  // function -> x,y,z
  std::unordered_map<uint32_t, std::vector<uint32_t>> local_size_id_;
  std::unordered_map<uint32_t, Type> types_;
  std::vector<uint32_t> cooperative_matrix_types_;  // their ids, in declaration order
  std::unordered_map<uint32_t, Constant> constants_;
  std::vector<std::pair<uint32_t, Variable>> variables_;  // in declaration order
  std::unordered_map<uint32_t, Decorations> decorations_;
  std::unordered_map<uint64_t, uint32_t> member_offsets_;  // (struct << 32 | member) -> offset
  // (struct << 32 | member) -> the MatrixStride of a matrix member, and whether it is RowMajor.
  std::unordered_map<uint64_t, uint32_t> member_matrix_strides_;
  std::unordered_map<uint64_t, bool> member_row_major_;
  std::unordered_map<uint32_t, std::string> names_;
  std::unordered_map<uint32_t, std::pair<uint64_t, uint32_t>> sizes_;  // type -> size, alignment
  std::unordered_map<uint32_t, uint64_t> given_;  // SpecId -> value given at load
  std::unordered_set<uint32_t> launch_ids_;       // SpecIds decided at each launch
  std::unordered_map<uint32_t, Value> evaluated_[2];
  std::unordered_set<uint32_t> push_variables_;
  std::unordered_map<uint32_t, uint32_t> pointer_types_;     // traced pointer -> its type
  std::unordered_map<uint32_t, uint64_t> push_slots_;        // pointer to a push member -> key
  std::unordered_map<uint32_t, uint64_t> addresses_;         // value or pointer from a member
  std::unordered_map<uint32_t, uint64_t> held_;              // Function variable holding one
  std::unordered_map<uint64_t, uint32_t> access_alignment_;  // key -> widest access
};

}  // namespace hal::vulkan::spirv
