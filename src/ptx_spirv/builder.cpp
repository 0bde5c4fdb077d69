#include "ptx_spirv/builder.h"

#include <spirv/unified1/GLSL.std.450.h>

#include <algorithm>
#include <cstring>

namespace hal::ptx_spirv {

void Builder::append(Words* section, spv::Op op, const Words& operands) {
  const uint32_t count = static_cast<uint32_t>(operands.size() + 1);
  section->push_back((count << 16) | static_cast<uint32_t>(op));
  section->insert(section->end(), operands.begin(), operands.end());
}

// A literal string: UTF-8 bytes, NUL-terminated, padded with NULs to a whole word.
void Builder::append_string(Words* words, std::string_view text) {
  const size_t count = text.size() / 4 + 1;
  const size_t at = words->size();
  words->resize(at + count, 0);
  std::memcpy(words->data() + at, text.data(), text.size());
}

void Builder::capability(spv::Capability capability) {
  if (std::find(capabilities_.begin(), capabilities_.end(), capability) == capabilities_.end()) {
    capabilities_.push_back(capability);
  }
}

void Builder::extension(std::string_view name) {
  if (std::find(extensions_.begin(), extensions_.end(), name) == extensions_.end()) {
    extensions_.emplace_back(name);
  }
}

uint32_t Builder::glsl_std_450() {
  if (glsl_ == 0) glsl_ = fresh_id();
  return glsl_;
}

void Builder::entry_point(uint32_t function, std::string_view name, const Words& interface) {
  Words operands{static_cast<uint32_t>(spv::ExecutionModel::GLCompute), function};
  append_string(&operands, name);
  operands.insert(operands.end(), interface.begin(), interface.end());
  append(&entry_points_, spv::Op::OpEntryPoint, operands);
}

void Builder::execution_mode(uint32_t function, spv::ExecutionMode mode, const Words& literals) {
  Words operands{function, static_cast<uint32_t>(mode)};
  operands.insert(operands.end(), literals.begin(), literals.end());
  append(&execution_modes_, spv::Op::OpExecutionMode, operands);
}

void Builder::execution_mode_id(uint32_t function, spv::ExecutionMode mode, const Words& ids) {
  Words operands{function, static_cast<uint32_t>(mode)};
  operands.insert(operands.end(), ids.begin(), ids.end());
  append(&execution_modes_, spv::Op::OpExecutionModeId, operands);
}

void Builder::name(uint32_t id, std::string_view text) {
  Words operands{id};
  append_string(&operands, text);
  append(&debug_, spv::Op::OpName, operands);
}

void Builder::decorate(uint32_t id, spv::Decoration decoration, const Words& literals) {
  Words operands{id, static_cast<uint32_t>(decoration)};
  operands.insert(operands.end(), literals.begin(), literals.end());
  append(&annotations_, spv::Op::OpDecorate, operands);
}

void Builder::member_decorate(uint32_t type, uint32_t member, spv::Decoration decoration,
                              const Words& literals) {
  Words operands{type, member, static_cast<uint32_t>(decoration)};
  operands.insert(operands.end(), literals.begin(), literals.end());
  append(&annotations_, spv::Op::OpMemberDecorate, operands);
}

// Types and constants live in one section, in creation order, which is also dependency order:
// an operand is always created before what uses it.
uint32_t Builder::cached(std::map<Words, uint32_t>* cache, Words* section, spv::Op op,
                         const Words& key_operands, bool result_first) {
  Words key{static_cast<uint32_t>(op)};
  key.insert(key.end(), key_operands.begin(), key_operands.end());
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  const uint32_t id = fresh_id();
  Words operands;
  if (result_first) {
    operands.push_back(id);
    operands.insert(operands.end(), key_operands.begin(), key_operands.end());
  } else {  // result type first, then the id
    operands.push_back(key_operands.front());
    operands.push_back(id);
    operands.insert(operands.end(), key_operands.begin() + 1, key_operands.end());
  }
  append(section, op, operands);
  cache->emplace(std::move(key), id);
  return id;
}

uint32_t Builder::type_void() {
  return cached(&types_, &globals_, spv::Op::OpTypeVoid, {}, true);
}
uint32_t Builder::type_bool() {
  return cached(&types_, &globals_, spv::Op::OpTypeBool, {}, true);
}
uint32_t Builder::type_int(uint32_t bits) {
  return cached(&types_, &globals_, spv::Op::OpTypeInt, {bits, 0}, true);
}
uint32_t Builder::type_float(uint32_t bits) {
  return cached(&types_, &globals_, spv::Op::OpTypeFloat, {bits}, true);
}
uint32_t Builder::type_vector(uint32_t component, uint32_t count) {
  return cached(&types_, &globals_, spv::Op::OpTypeVector, {component, count}, true);
}
uint32_t Builder::type_array(uint32_t element, uint32_t length_id, uint32_t stride) {
  Words key{static_cast<uint32_t>(spv::Op::OpTypeArray), element, length_id};
  if (auto it = types_.find(key); it != types_.end()) return it->second;
  const uint32_t id = cached(&types_, &globals_, spv::Op::OpTypeArray, {element, length_id}, true);
  decorate(id, spv::Decoration::ArrayStride, {stride});
  return id;
}
uint32_t Builder::type_struct(const Words& members) {
  return cached(&types_, &globals_, spv::Op::OpTypeStruct, members, true);
}
uint32_t Builder::type_block(uint32_t member) {
  const uint32_t id = fresh_id();
  append(&globals_, spv::Op::OpTypeStruct, {id, member});
  decorate(id, spv::Decoration::Block);
  member_decorate(id, 0, spv::Decoration::Offset, {0});
  return id;
}
uint32_t Builder::type_pointer(spv::StorageClass storage, uint32_t pointee) {
  return cached(&types_, &globals_, spv::Op::OpTypePointer,
                {static_cast<uint32_t>(storage), pointee}, true);
}
uint32_t Builder::type_function(uint32_t result, const Words& params) {
  Words operands{result};
  operands.insert(operands.end(), params.begin(), params.end());
  return cached(&types_, &globals_, spv::Op::OpTypeFunction, operands, true);
}

uint32_t Builder::constant_bool(bool value) {
  return cached(&constants_, &globals_, value ? spv::Op::OpConstantTrue : spv::Op::OpConstantFalse,
                {type_bool()}, false);
}
uint32_t Builder::constant_int(uint32_t bits, uint64_t value) {
  const uint32_t type = type_int(bits);
  if (bits == 64) {
    return cached(&constants_, &globals_, spv::Op::OpConstant,
                  {type, static_cast<uint32_t>(value), static_cast<uint32_t>(value >> 32)}, false);
  }
  const uint64_t mask = bits >= 32 ? 0xFFFFFFFFull : ((uint64_t{1} << bits) - 1);
  return cached(&constants_, &globals_, spv::Op::OpConstant,
                {type, static_cast<uint32_t>(value & mask)}, false);
}
uint32_t Builder::constant_float(uint32_t bits, uint64_t bit_pattern) {
  const uint32_t type = type_float(bits);
  if (bits == 64) {
    return cached(
        &constants_, &globals_, spv::Op::OpConstant,
        {type, static_cast<uint32_t>(bit_pattern), static_cast<uint32_t>(bit_pattern >> 32)},
        false);
  }
  return cached(&constants_, &globals_, spv::Op::OpConstant,
                {type, static_cast<uint32_t>(bit_pattern)}, false);
}
uint32_t Builder::spec_constant_u32(uint32_t spec_id, uint32_t default_value) {
  const uint32_t id = fresh_id();
  append(&globals_, spv::Op::OpSpecConstant, {type_int(32), id, default_value});
  decorate(id, spv::Decoration::SpecId, {spec_id});
  return id;
}
uint32_t Builder::spec_constant_op(uint32_t type, spv::Op op, const Words& operands) {
  const uint32_t id = fresh_id();
  Words all{type, id, static_cast<uint32_t>(op)};
  all.insert(all.end(), operands.begin(), operands.end());
  append(&globals_, spv::Op::OpSpecConstantOp, all);
  return id;
}
uint32_t Builder::spec_constant_composite(uint32_t type, const Words& constituents) {
  const uint32_t id = fresh_id();
  Words all{type, id};
  all.insert(all.end(), constituents.begin(), constituents.end());
  append(&globals_, spv::Op::OpSpecConstantComposite, all);
  return id;
}

uint32_t Builder::constant_composite(uint32_t type, const Words& constituents) {
  const uint32_t id = fresh_id();
  Words all{type, id};
  all.insert(all.end(), constituents.begin(), constituents.end());
  append(&globals_, spv::Op::OpConstantComposite, all);
  return id;
}

uint32_t Builder::global_variable(uint32_t pointer_type, spv::StorageClass storage,
                                  uint32_t initializer) {
  const uint32_t id = fresh_id();
  Words operands{pointer_type, id, static_cast<uint32_t>(storage)};
  if (initializer != 0) operands.push_back(initializer);
  append(&globals_, spv::Op::OpVariable, operands);
  return id;
}

void Builder::begin_function(uint32_t function, uint32_t result_type, uint32_t function_type) {
  function_header_.clear();
  variables_.clear();
  body_.clear();
  entry_label_.clear();
  entry_label_seen_ = false;
  in_function_ = true;
  append(&function_header_, spv::Op::OpFunction,
         {result_type, function, static_cast<uint32_t>(spv::FunctionControlMask::MaskNone),
          function_type});
}

void Builder::end_function() {
  functions_.insert(functions_.end(), function_header_.begin(), function_header_.end());
  functions_.insert(functions_.end(), entry_label_.begin(), entry_label_.end());
  functions_.insert(functions_.end(), variables_.begin(), variables_.end());
  functions_.insert(functions_.end(), body_.begin(), body_.end());
  append(&functions_, spv::Op::OpFunctionEnd, {});
  in_function_ = false;
}

uint32_t Builder::local_variable(uint32_t pointer_type, uint32_t initializer) {
  const uint32_t id = fresh_id();
  Words operands{pointer_type, id, static_cast<uint32_t>(spv::StorageClass::Function)};
  if (initializer != 0) operands.push_back(initializer);
  append(&variables_, spv::Op::OpVariable, operands);
  return id;
}

void Builder::label(uint32_t id) {
  // The first label opens the entry block, where the variables must come first.
  if (!entry_label_seen_) {
    entry_label_seen_ = true;
    append(&entry_label_, spv::Op::OpLabel, {id});
    return;
  }
  append(&body_, spv::Op::OpLabel, {id});
}

uint32_t Builder::op(spv::Op op, uint32_t type, std::initializer_list<uint32_t> operands) {
  return this->op(op, type, Words(operands));
}

uint32_t Builder::op(spv::Op op, uint32_t type, const Words& operands) {
  const uint32_t id = fresh_id();
  Words all{type, id};
  all.insert(all.end(), operands.begin(), operands.end());
  append(&body_, op, all);
  switch (op) {
    case spv::Op::OpFAdd:
    case spv::Op::OpFSub:
    case spv::Op::OpFMul:
    case spv::Op::OpFDiv:
    case spv::Op::OpFRem:
    case spv::Op::OpFMod:
    case spv::Op::OpFNegate:
      // Every PTX float instruction rounds its own result, and its users see exactly that: a
      // compiler may not contract or reassociate across instructions (drivers do, without this:
      // (x * c + S) - S folded to x * c breaks the rounding tricks of nvcc's math library).
      decorate(id, spv::Decoration::NoContraction);
      break;
    default:
      break;
  }
  return id;
}

void Builder::op_void(spv::Op op, std::initializer_list<uint32_t> operands) {
  append(&body_, op, Words(operands));
}
void Builder::op_void(spv::Op op, const Words& operands) {
  append(&body_, op, operands);
}

uint32_t Builder::ext(uint32_t type, uint32_t instruction,
                      std::initializer_list<uint32_t> operands) {
  Words all{glsl_std_450(), instruction};
  all.insert(all.end(), operands.begin(), operands.end());
  const uint32_t id = op(spv::Op::OpExtInst, type, all);
  // A fused multiply-add must stay one operation (see op() above).
  if (instruction == GLSLstd450Fma) decorate(id, spv::Decoration::NoContraction);
  return id;
}

Builder Builder::checkpoint() const {
  Builder saved;
  saved.next_id_ = next_id_;
  saved.glsl_ = glsl_;
  saved.capabilities_ = capabilities_;
  saved.extensions_ = extensions_;
  saved.entry_points_ = entry_points_;
  saved.execution_modes_ = execution_modes_;
  saved.debug_ = debug_;
  saved.annotations_ = annotations_;
  saved.globals_ = globals_;
  saved.types_ = types_;
  saved.constants_ = constants_;
  saved.functions_size_ = functions_.size();
  return saved;
}

void Builder::restore(Builder&& checkpoint) {
  Words functions = std::move(functions_);
  functions.resize(checkpoint.functions_size_);
  *this = std::move(checkpoint);
  functions_ = std::move(functions);
  functions_size_ = 0;
}

Builder::Words Builder::finish() {
  Words capabilities, extensions, imports, memory_model;
  for (spv::Capability capability : capabilities_) {
    append(&capabilities, spv::Op::OpCapability, {static_cast<uint32_t>(capability)});
  }
  for (const std::string& name : extensions_) {
    Words operands;
    append_string(&operands, name);
    append(&extensions, spv::Op::OpExtension, operands);
  }
  if (glsl_ != 0) {
    Words operands{glsl_};
    append_string(&operands, "GLSL.std.450");
    append(&imports, spv::Op::OpExtInstImport, operands);
  }
  append(&memory_model, spv::Op::OpMemoryModel,
         {static_cast<uint32_t>(spv::AddressingModel::PhysicalStorageBuffer64),
          static_cast<uint32_t>(spv::MemoryModel::GLSL450)});
  // The header: magic, version 1.5, generator 0 (unregistered), id bound, schema.
  Words module{spv::MagicNumber, 0x00010500u, 0u, next_id_, 0u};
  for (const Words* section : {&capabilities, &extensions, &imports, &memory_model, &entry_points_,
                               &execution_modes_, &debug_, &annotations_, &globals_, &functions_}) {
    module.insert(module.end(), section->begin(), section->end());
  }
  return module;
}

}  // namespace hal::ptx_spirv
