// The PTX parser, part two: variable and register declarations, and variable initializers.
// See parser.h for the parts.
#include <cstring>
#include <utility>

#include "ptx/parser.h"
#include "ptx/words.h"

namespace hal::ptx {
namespace {

constexpr uint64_t kMaxAlign = 1u << 16;

bool is_integer_type(ir::Type type) {
  return ir::is_bits(type) || ir::is_signed(type) || ir::is_unsigned(type);
}

// The state spaces a .ptr parameter may point into.
bool is_pointee_space(std::string_view word) {
  const std::optional<ir::Space> space = space_from_word(word);
  return space && (*space == ir::Space::kGlobal || *space == ir::Space::kShared ||
                   *space == ir::Space::kConst || *space == ir::Space::kLocal);
}

void write_le(uint8_t* bytes, uint64_t value, uint32_t size) {
  for (uint32_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
}

// A floating-point literal's value as a double (an f32 literal exactly).
double to_double(const Number& number, bool negative) {
  double value = 0;
  if (number.kind == Number::Kind::kFloat32) {
    float single = 0;
    const uint32_t bits = static_cast<uint32_t>(number.bits);
    std::memcpy(&single, &bits, sizeof(single));
    value = single;
  } else {
    std::memcpy(&value, &number.bits, sizeof(value));
  }
  return negative ? -value : value;
}

}  // namespace

// ===========================================================================================
// Qualifiers: everything between the state space and the name
// ===========================================================================================

// The lexer keeps dots inside words, so qualifiers may arrive one per token
// (".ptr .global .align 16") or joined, as the PTX ISA writes them (".ptr.global.align 16").
bool Parser::parse_qualifiers(DeclKind kind, const std::string& context, Qualifiers* out) {
  while (token_.kind == TokenKind::kWord && token_.text[0] == '.') {
    const std::string_view joined = token_.text;
    bool align = false;
    bool attribute = false;
    for (size_t start = 0; start < joined.size();) {
      size_t end = joined.find('.', start + 1);
      if (end == std::string_view::npos) end = joined.size();
      const std::string_view word = joined.substr(start, end - start);
      const std::string_view bare = word.substr(1);
      start = end;
      const bool last = start == joined.size();
      if (word == ".align" && kind != DeclKind::kRegister) {
        if (!last) return fail("expected a number after .align in " + quote(joined));
        align = true;
      } else if (word == ".attribute" && kind == DeclKind::kVariable) {
        if (!last) return fail("expected '(' after .attribute in " + quote(joined));
        attribute = true;
      } else if (word == ".ptr" && kind == DeclKind::kParam) {
        out->is_ptr = true;
      } else if (kind == DeclKind::kParam && is_pointee_space(bare)) {
        out->ptr_space = *space_from_word(bare);
      } else if (word == ".v2" || word == ".v4" || word == ".v8") {
        if (out->vector != 1) {
          return fail("a second vector width " + quote(word) + " in " + context);
        }
        out->vector = static_cast<uint32_t>(bare[1] - '0');
      } else if (std::optional<ir::Type> type = type_from_word(bare)) {
        if (out->type != ir::Type::kNone) {
          return fail("a second type " + quote(word) + " in " + context);
        }
        out->type = *type;
      } else {
        return fail("unexpected " + quote(word) + " in " + context);
      }
    }
    advance();
    if (align) {
      uint64_t value = 0;
      if (!read_integer(kMaxAlign, &value) || value == 0 || (value & (value - 1)) != 0) {
        return fail("expected a power of two after .align, saw " + seen());
      }
      // After .ptr, .align N is the alignment of the memory pointed to (PTX ISA, kernel
      // parameter attributes), not of the parameter, which keeps its type's.
      (out->is_ptr ? out->ptr_align : out->align) = static_cast<uint32_t>(value);
      advance();
    } else if (attribute && !skip_parenthesized(".attribute")) {
      return false;
    }
  }
  return true;
}

// ===========================================================================================
// Variables
// ===========================================================================================

bool Parser::parse_variable_declaration(ir::Linkage linkage, bool in_function) {
  const std::string seen_word = seen();
  const std::string directive(take_directive());
  const std::optional<ir::Space> space = space_from_word(std::string_view(directive).substr(1));
  if (!space || *space == ir::Space::kReg || (*space == ir::Space::kParam && !in_function)) {
    return fail("unexpected " + seen_word + ": expected a state space");
  }
  const std::string context = "a " + directive + " declaration";
  Qualifiers qualifiers;
  if (!parse_qualifiers(DeclKind::kVariable, context, &qualifiers)) return false;
  if (qualifiers.type == ir::Type::kNone) {
    return fail(context + " has no type before " + seen());
  }
  if (qualifiers.type == ir::Type::kPred) {
    return fail("a " + directive + " variable cannot be a .pred: only registers can");
  }
  const uint64_t element = uint64_t{ir::type_size(qualifiers.type)} * qualifiers.vector;
  while (true) {
    if (token_.kind != TokenKind::kWord || !is_identifier(token_.text)) {
      return fail("expected a variable name in " + context + ", saw " + seen());
    }
    ir::Variable variable;
    variable.name = std::string(token_.text);
    variable.space = *space;
    variable.linkage = linkage;
    variable.type = qualifiers.type;
    variable.vector = qualifiers.vector;
    variable.align = qualifiers.align;
    variable.line = token_.line;
    advance();
    std::vector<uint64_t> dims;
    if (!parse_array_dims(variable.name, element, true, &dims)) return false;
    for (uint64_t dim : dims) variable.count *= dim;
    variable.unsized = !dims.empty() && dims[0] == 0;
    const std::string name = variable.name;
    if (!declare_variable(std::move(variable), in_function)) return false;
    if (token_.is_punct('=')) {
      if (linkage == ir::Linkage::kExtern) {
        return fail("the .extern variable " + quote(name) + " cannot have an initializer");
      }
      if (*space != ir::Space::kGlobal && *space != ir::Space::kConst) {
        return fail("only .global and .const variables have initializers, not " + quote(name) +
                    " in " + directive);
      }
      advance();
      ir::Variable& stored = in_function ? function().variables.back() : out_->variables.back();
      if (!parse_initializer(&stored, dims)) return false;
    }
    if (token_.is_punct(';')) {
      advance();
      return true;
    }
    if (!token_.is_punct(',')) {
      return fail("expected ',', '=' or ';' after " + quote(name) + ", saw " + seen());
    }
    advance();
  }
}

// "[4][8]" after a name; an empty first pair ("[]") is an unsized array, recorded as 0.
bool Parser::parse_array_dims(const std::string& name, uint64_t element_size, bool allow_unsized,
                              std::vector<uint64_t>* dims) {
  uint64_t total = element_size == 0 ? 1 : element_size;
  const std::string too_large = "array " + quote(name) + " is larger than " +
                                std::to_string(ir::kMaxVariableBytes) + " bytes";
  while (token_.is_punct('[')) {
    if (dims->size() >= ir::kMaxNesting) {
      return fail("array " + quote(name) + " has more than " + std::to_string(ir::kMaxNesting) +
                  " dimensions");
    }
    advance();
    if (token_.is_punct(']')) {
      if (!allow_unsized || !dims->empty()) {
        return fail("only the first dimension of " + quote(name) + " may be left out");
      }
      dims->push_back(0);
      advance();
      continue;
    }
    Number number;
    std::string why;
    if (token_.kind != TokenKind::kNumber || !parse_number(token_.text, &number, &why) ||
        number.kind != Number::Kind::kInteger || number.bits == 0) {
      if (token_.kind == TokenKind::kNumber && why == "does not fit in 64 bits") {
        return fail(too_large + " (its size " + seen() + " does not fit in 64 bits)");
      }
      return fail("expected an array size for " + quote(name) + ", saw " + seen());
    }
    if (number.bits > ir::kMaxVariableBytes || total * number.bits > ir::kMaxVariableBytes) {
      return fail(too_large);
    }
    total *= number.bits;
    dims->push_back(number.bits);
    advance();
    if (!expect_punct(']', "after the array size")) return false;
  }
  return true;
}

bool Parser::declare_variable(ir::Variable variable, bool in_function) {
  if (!in_function) {
    if (auto it = module_names_.find(variable.name); it != module_names_.end()) {
      return fail_at(variable.line, "duplicate declaration of " + quote(variable.name) +
                                        " (first declared on line " +
                                        std::to_string(it->second.line) + ")");
    }
    const auto index = static_cast<uint32_t>(out_->variables.size());
    module_names_.emplace(
        variable.name,
        ModuleName{ir::SymbolRef{ir::SymbolKind::kModuleVariable, index}, variable.line});
    out_->variables.push_back(std::move(variable));
    return true;
  }
  const auto index = static_cast<uint32_t>(function().variables.size());
  const Binding binding{Binding::Kind::kVariable, index, variable.line};
  if (std::optional<Binding> earlier = scopes_.back().names.declare(variable.name, binding)) {
    return fail_at(variable.line, "duplicate declaration of " + quote(variable.name) +
                                      " in this scope (first declared on line " +
                                      std::to_string(earlier->line) + ")");
  }
  function().variables.push_back(std::move(variable));
  return true;
}

// ===========================================================================================
// Registers
// ===========================================================================================

std::string_view Parser::take_directive() {
  const std::string_view word = token_.text;
  const size_t dot = word.find('.', 1);
  if (dot == std::string_view::npos) {
    advance();
    return word;
  }
  token_.text = word.substr(dot);
  return word.substr(0, dot);
}

bool Parser::parse_register_declaration() {
  take_directive();  // .reg
  Qualifiers qualifiers;
  if (!parse_qualifiers(DeclKind::kRegister, "a .reg declaration", &qualifiers)) return false;
  if (qualifiers.type == ir::Type::kNone) {
    return fail("a .reg declaration has no type before " + seen());
  }
  const std::string too_many =
      "more than " + std::to_string(ir::kMaxRegisters) + " registers declared in the module";
  while (true) {
    if (token_.kind != TokenKind::kWord || !is_identifier(token_.text)) {
      return fail("expected a register name in a .reg declaration, saw " + seen());
    }
    const std::string name(token_.text);
    const uint32_t line = token_.line;
    advance();
    ir::Function& owner = function();
    const auto first = static_cast<uint32_t>(owner.registers.size());
    const Binding binding{Binding::Kind::kRegister, first, line};
    ir::Register reg;
    reg.type = qualifiers.type;
    reg.vector = qualifiers.vector;
    reg.line = line;
    if (token_.is_punct('<')) {
      // "%r<10>": %r0 .. %r9.
      advance();
      uint64_t count = 0;
      if (!read_integer(ir::kMaxRegisters, &count)) {
        return fail("expected a register count after '<', saw " + seen());
      }
      advance();
      if (!expect_punct('>', "after the register count")) return false;
      if (registers_ + count > ir::kMaxRegisters) return fail_at(line, too_many);
      if (std::optional<std::string> clash =
              scopes_.back().names.declare_range(name, static_cast<uint32_t>(count), binding)) {
        const std::optional<Binding> earlier = scopes_.back().names.find(*clash);
        return fail_at(line, "duplicate declaration of " + quote(*clash) +
                                 " in this scope (first declared on line " +
                                 std::to_string(earlier ? earlier->line : line) + ")");
      }
      registers_ += count;
      owner.registers.reserve(owner.registers.size() + count);
      for (uint64_t i = 0; i < count; ++i) {
        reg.name = name + std::to_string(i);
        owner.registers.push_back(reg);
      }
    } else {
      if (registers_ + 1 > ir::kMaxRegisters) return fail_at(line, too_many);
      if (std::optional<Binding> earlier = scopes_.back().names.declare(name, binding)) {
        return fail_at(line, "duplicate declaration of " + quote(name) +
                                 " in this scope (first declared on line " +
                                 std::to_string(earlier->line) + ")");
      }
      ++registers_;
      reg.name = name;
      owner.registers.push_back(std::move(reg));
    }
    if (token_.is_punct('[')) {
      return fail("register arrays are not supported (" + quote(name) + ")");
    }
    if (token_.is_punct(';')) {
      advance();
      return true;
    }
    if (!token_.is_punct(',')) {
      return fail("expected ',' or ';' in a .reg declaration, saw " + seen());
    }
    advance();
  }
}

// ===========================================================================================
// Initializers
// ===========================================================================================

bool Parser::parse_initializer(ir::Variable* variable, const std::vector<uint64_t>& dims) {
  InitShape shape;
  shape.extents = dims;
  if (variable->vector > 1) shape.extents.push_back(variable->vector);
  if (shape.extents.empty()) return parse_init_value(variable, 0);
  shape.strides.assign(shape.extents.size(), ir::type_size(variable->type));
  for (size_t i = shape.extents.size() - 1; i-- > 0;) {
    shape.strides[i] = shape.strides[i + 1] * shape.extents[i + 1];
  }
  uint64_t entries = 0;
  if (!parse_init_list(variable, shape, 0, 0, &entries)) return false;
  if (variable->unsized && entries != 0) {
    // "x[] = {...}": the initializer gives the first dimension.
    // entries * strides[0] is the size in bytes; the list kept it near the cap, so no overflow.
    if (entries * shape.strides[0] > ir::kMaxVariableBytes) {
      return fail("array " + quote(variable->name) + " is larger than " +
                  std::to_string(ir::kMaxVariableBytes) + " bytes");
    }
    uint64_t count = entries;
    for (size_t i = 1; i < dims.size(); ++i) count *= dims[i];
    variable->count = count;
    variable->unsized = false;
  }
  return true;
}

// One level of braces: a value per element at the innermost level, else a braced list per
// element (ptxas elides no braces). Lists may be shorter than the dimension.
bool Parser::parse_init_list(ir::Variable* variable, const InitShape& shape, size_t level,
                             uint64_t offset, uint64_t* entries) {
  const std::string& name = variable->name;
  if (!token_.is_punct('{')) {
    return fail("expected '{' to open the initializer of " + quote(name) + ", saw " + seen());
  }
  advance();
  const uint64_t extent = shape.extents[level];  // 0: unsized
  const bool leaf_level = level + 1 == shape.extents.size();
  const uint64_t stride = shape.strides[level];
  uint64_t index = 0;
  while (!token_.is_punct('}')) {
    if (extent != 0 && index >= extent) {
      return fail("too many initializers for " + quote(name) + " (" + std::to_string(extent) +
                  " elements in that dimension)");
    }
    if (index > ir::kMaxVariableBytes / stride) {
      return fail("array " + quote(name) + " is larger than " +
                  std::to_string(ir::kMaxVariableBytes) + " bytes");
    }
    uint64_t ignored = 0;
    const bool ok =
        leaf_level ? parse_init_value(variable, offset + index * stride)
                   : parse_init_list(variable, shape, level + 1, offset + index * stride, &ignored);
    if (!ok) return false;
    ++index;
    if (token_.is_punct(',')) {
      advance();
    } else if (!token_.is_punct('}')) {
      return fail("expected ',' or '}' in the initializer of " + quote(name) + ", saw " + seen());
    }
  }
  advance();  // '}'
  *entries = index;
  return true;
}

// One element: a number, or an address (see parse_init_address).
bool Parser::parse_init_value(ir::Variable* variable, uint64_t offset) {
  bool negative = false;
  if (token_.is_punct('-')) {
    negative = true;
    advance();
  }
  if (token_.kind == TokenKind::kWord && !negative) return parse_init_address(variable, offset, 0);
  if (token_.kind != TokenKind::kNumber) {
    return fail("expected a value in the initializer of " + quote(variable->name) + ", saw " +
                seen());
  }
  Number number;
  std::string why;
  if (!parse_number(token_.text, &number, &why)) {
    return fail("malformed number " + seen() + ": " + why);
  }
  if (!negative && number.kind == Number::Kind::kInteger && peek().is_punct('(')) {
    return parse_init_address(variable, offset, number.bits);  // "0xFF00(sym)"
  }
  const ir::Type type = variable->type;
  const uint32_t size = ir::type_size(type);
  uint64_t bits = 0;
  const bool integer = number.kind == Number::Kind::kInteger;
  if (is_integer_type(type)) {
    if (!integer) {
      return fail("a floating-point value " + seen() + " for the integer variable " +
                  quote(variable->name));
    }
    bits = negative ? uint64_t{0} - number.bits : number.bits;
  } else if (integer && (type == ir::Type::kF32 || type == ir::Type::kF64)) {
    return fail("an integer value " + seen() + " for the floating-point variable " +
                quote(variable->name) + " (write it as 1.0 or 0f3F800000)");
  } else if (type == ir::Type::kF32) {
    if (number.kind == Number::Kind::kFloat32) {
      bits = number.bits ^ (negative ? uint64_t{1} << 31 : 0);  // exact, NaN payloads included
    } else {
      const float single = static_cast<float>(to_double(number, negative));
      uint32_t single_bits = 0;
      std::memcpy(&single_bits, &single, sizeof(single));
      bits = single_bits;
    }
  } else if (type == ir::Type::kF64) {
    if (number.kind == Number::Kind::kFloat64) {
      bits = number.bits ^ (negative ? uint64_t{1} << 63 : 0);
    } else {
      const double value = to_double(number, negative);
      std::memcpy(&bits, &value, sizeof(value));
    }
  } else {  // as ptxas: .f16, .bf16 and the packed and fp8 types take no initializer
    return fail(std::string("initializers of type .") + ir::type_name(type) +
                " are not supported (" + quote(variable->name) + ")");
  }
  if (!reserve_init(variable, offset + size)) return false;
  uint8_t* bytes = variable->init.data() + offset;
  write_le(bytes, bits, size < 8 ? size : 8);
  if (size > 8) {  // .b128: the literal, extended by its sign
    write_le(bytes + 8, negative && bits != 0 ? ~uint64_t{0} : 0, size - 8);
  }
  advance();
  return true;
}

// The address of a module variable or function, as an initializer writes it:
//   sym, sym+8, generic(sym), generic(sym+8)+8, and, with |mask| (the number before the
//   parenthesis, which the caller has read), 0xFF00(sym) or 0xFF00(generic(sym)+4) for one
//   byte of it, or 0xFF00(0x1234) for one byte of a constant.
bool Parser::parse_init_address(ir::Variable* variable, uint64_t offset, uint64_t mask) {
  const std::string& name = variable->name;
  const ir::Type type = variable->type;
  const uint32_t size = ir::type_size(type);
  const uint32_t address_bytes = out_->address_size / 8;
  ir::Relocation relocation;
  relocation.offset = offset;
  relocation.mask = mask;
  relocation.size = mask != 0 ? size : address_bytes;
  uint32_t shift = 0;
  if (mask != 0) {
    while (shift < 64 && (mask >> shift) != 0xFF) shift += 8;
    if (shift >= 64) {
      return fail("expected a byte mask (0xFF, 0xFF00, ... 0xFF00000000000000) before '(', saw " +
                  seen());
    }
    if (!is_integer_type(type) || size > 8) {
      return fail(std::string("a masked initializer needs an integer element; ") + quote(name) +
                  " is ." + ir::type_name(type));
    }
    advance();  // the mask
    advance();  // '('
    if (token_.kind == TokenKind::kNumber || token_.is_punct('-')) {
      int64_t constant = 0;
      if (token_.kind == TokenKind::kNumber) {
        uint64_t value = 0;
        if (!read_integer(~uint64_t{0}, &value)) {
          return fail("expected an integer inside the mask, saw " + seen());
        }
        constant = static_cast<int64_t>(value);
        advance();
      }
      if (!parse_offset(&constant)) return false;
      if (!reserve_init(variable, offset + size)) return false;
      write_le(variable->init.data() + offset, (static_cast<uint64_t>(constant) & mask) >> shift,
               size);
      return expect_punct(')', "after the masked value");
    }
  } else if (!is_integer_type(type) || size != address_bytes) {
    return fail("an address in the initializer of " + quote(name) + " needs a ." +
                (address_bytes == 8 ? "u64" : "u32") + " element, not ." + ir::type_name(type));
  }
  if (token_.is_word("generic") && peek().is_punct('(')) {
    relocation.generic = true;
    advance();
    advance();
  }
  if (token_.kind != TokenKind::kWord || !is_identifier(token_.text)) {
    return fail("expected a variable or function in the initializer of " + quote(name) + ", saw " +
                seen());
  }
  const auto it = module_names_.find(token_.text);
  if (it == module_names_.end()) {
    return fail("undeclared symbol " + seen() + " in the initializer of " + quote(name));
  }
  relocation.symbol = it->second.ref;
  advance();
  if (!parse_offset(&relocation.addend)) return false;
  if (relocation.generic) {
    if (!expect_punct(')', "after generic(")) return false;
    if (!parse_offset(&relocation.addend)) return false;
  }
  if (mask != 0 && !expect_punct(')', "after the masked address")) return false;
  if (!reserve_init(variable, offset + size)) return false;
  variable->relocations.push_back(relocation);
  return true;
}

bool Parser::reserve_init(ir::Variable* variable, uint64_t end) {
  if (end <= variable->init.size()) return true;
  if (end > ir::kMaxVariableBytes) {
    return fail("array " + quote(variable->name) + " is larger than " +
                std::to_string(ir::kMaxVariableBytes) + " bytes");
  }
  const uint64_t growth = end - variable->init.size();
  if (init_bytes_ + growth > ir::kMaxInitializerBytes) {
    return fail("the module's initializers hold more than " +
                std::to_string(ir::kMaxInitializerBytes) + " bytes");
  }
  init_bytes_ += growth;
  variable->init.resize(end);
  return true;
}

}  // namespace hal::ptx
