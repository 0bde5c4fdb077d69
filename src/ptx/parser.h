// The PTX parser's internals: one class, written in three parts that share this declaration:
//  - parser.cpp: tokens, the module (header directives, linkage, function signatures and
//    performance directives, skipped bodies) and ir::parse;
//  - parser_decl.cpp: variable and register declarations, and initializers;
//  - parser_body.cpp: function bodies: { } scopes, labels, instructions and their operands.
// Not an interface: callers use ir::parse (ir.h), which documents the behaviour.
//
// How it stays bounded on hostile input: one token of lookahead, no backtracking; recursion only
// for nested { } blocks, operand brackets and initializer braces, each capped at
// ir::kMaxNesting levels; every count that could multiply work (registers, initializer bytes,
// array sizes, functions, parameters) is checked against its cap in ir.h before it is used.
// Thread-safety: a Parser is used once, by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/ir.h"
#include "ptx/lexer.h"
#include "ptx/names.h"

namespace hal::ptx {

class Parser {
 public:
  // Borrows |text| and |out| for the duration of run().
  Parser(const char* text, size_t size, const ir::ParseOptions& options, ir::Module* out)
      : lexer_(text, size), options_(options), out_(out) {}

  // Parses the whole text into |out|; on failure returns false and fills |error|.
  bool run(ir::ParseError* error);

 private:
  // A name at module scope: a variable or a function.
  struct ModuleName {
    ir::SymbolRef ref;
    uint32_t line = 0;
  };
  // A label, .callprototype or target list declared in a body scope.
  struct LabelName {
    ir::SymbolRef ref;
    uint32_t line = 0;
  };
  // A use of a name that no register, variable, parameter or function has: a label, perhaps
  // declared later. Resolved when its scope closes (labels are scoped like registers: an inner
  // block's label shadows an outer one, as repeated inline assembly relies on).
  struct PendingLabel {
    std::string name;
    uint32_t line = 0;
    bool in_target_list = false;  // else an operand of code[instruction]
    uint32_t instruction = 0;     // or the index into target_lists
    std::vector<uint32_t> path;   // operand index, then element indices (or the target index)
  };
  struct Scope {
    NameTable names;
    NameMap<LabelName> labels;
    std::vector<PendingLabel> pending;
  };
  // What may stand before the name in a declaration.
  struct Qualifiers {
    ir::Type type = ir::Type::kNone;
    uint32_t vector = 1;
    uint32_t align = 0;
    bool is_ptr = false;
    ir::Space ptr_space = ir::Space::kNone;
    uint32_t ptr_align = 0;
  };
  enum class DeclKind : uint8_t { kParam, kVariable, kRegister };
  // The extents of an initializer: the array dimensions, then the vector width if any.
  struct InitShape {
    std::vector<uint64_t> extents;  // extents[0] is 0 for an unsized array
    std::vector<uint64_t> strides;  // bytes between elements at each level
  };

  // ---- Tokens and errors (parser.cpp)
  void advance();
  // Consumes the leading directive of the current word and returns it: ".reg" of ".reg", and
  // also of ".reg.b16", whose rest (".b16") then stays the current word, as if written apart
  // (NVIDIA's cuda_fp16.hpp writes its inline assembly's declarations so).
  std::string_view take_directive();
  const Token& peek();
  // Records an error at the current token (a lexer error there takes precedence) or at |line|;
  // both return false so that callers can "return fail(...)".
  bool fail(std::string message);
  bool fail_at(uint32_t line, std::string message);
  // The current token for a message: quoted, or "the end of the input".
  std::string seen() const;
  // The current token as an integer no larger than |max|; does not advance.
  bool read_integer(uint64_t max, uint64_t* out) const;
  bool expect_punct(char c, std::string_view after);
  // "+ 4", "- 4", "+ -4", repeated: adds them to |offset| (two's complement).
  bool parse_offset(int64_t* offset);

  // ---- The module (parser.cpp)
  bool parse_module();
  bool parse_version();
  bool parse_target();
  bool parse_address_size();
  void skip_line();
  bool skip_pragma();
  bool skip_section();
  bool skip_parenthesized(std::string_view after);
  bool parse_alias();
  bool parse_module_declaration();
  bool parse_function(ir::Linkage linkage, bool is_entry);
  bool parse_function_directives(ir::Function* function, const std::string& owner);
  bool parse_dims(uint32_t dims[3]);
  bool parse_count(uint32_t* out);
  bool parse_param_list(std::vector<ir::Variable>* params, const std::string& owner);
  bool parse_param(ir::Variable* param, const std::string& owner);
  bool check_param_layout(const ir::Function& function, const std::string& owner);
  bool add_function(ir::Function function, const std::string& owner, uint32_t* index);
  bool skip_body(const std::string& owner);

  // ---- Declarations (parser_decl.cpp)
  bool parse_qualifiers(DeclKind kind, const std::string& context, Qualifiers* out);
  bool parse_variable_declaration(ir::Linkage linkage, bool in_function);
  bool parse_register_declaration();
  bool parse_array_dims(const std::string& name, uint64_t element_size, bool allow_unsized,
                        std::vector<uint64_t>* dims);
  bool declare_variable(ir::Variable variable, bool in_function);
  bool parse_initializer(ir::Variable* variable, const std::vector<uint64_t>& dims);
  bool parse_init_list(ir::Variable* variable, const InitShape& shape, size_t level,
                       uint64_t offset, uint64_t* entries);
  bool parse_init_value(ir::Variable* variable, uint64_t offset);
  bool parse_init_address(ir::Variable* variable, uint64_t offset, uint64_t mask);
  bool reserve_init(ir::Variable* variable, uint64_t end);

  // ---- Bodies (parser_body.cpp)
  bool parse_body(uint32_t function_index);
  bool parse_block(size_t depth);
  bool close_scope();
  bool parse_label();
  bool parse_prototype(const std::string& name, uint32_t line);
  bool parse_target_list(const std::string& name, uint32_t line, bool calls);
  bool declare_label(const std::string& name, uint32_t line, ir::SymbolRef ref);
  bool parse_instruction();
  bool parse_mnemonic(ir::Instruction* instruction);
  bool parse_operand(ir::Operand* out, size_t depth);
  bool parse_name_operand(ir::Operand* out);
  bool parse_address(ir::Operand* out, size_t depth);
  bool resolve_register(std::string_view name, uint32_t* index);
  bool resolve_symbol(std::string_view name, ir::SymbolRef* out) const;
  ir::Function& function() { return out_->functions[function_]; }

  Lexer lexer_;
  ir::ParseOptions options_;
  ir::Module* out_;
  Token token_;
  Token next_;
  bool has_next_ = false;
  ir::ParseError error_;
  bool failed_ = false;

  NameMap<ModuleName> module_names_;
  uint64_t registers_ = 0;   // declared in the module, against ir::kMaxRegisters
  uint64_t init_bytes_ = 0;  // initializer bytes in the module, against kMaxInitializerBytes

  // The body being parsed.
  uint32_t function_ = 0;
  std::string owner_;  // "entry 'k'" / "function 'f'", for messages
  NameMap<ir::SymbolRef> params_;
  std::vector<Scope> scopes_;
  // Where the operand being parsed lies: instruction operand index, then element indices.
  std::vector<uint32_t> operand_path_;
};

}  // namespace hal::ptx
