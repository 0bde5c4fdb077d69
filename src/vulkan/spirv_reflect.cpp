// The SPIR-V reflection parser: the walk over the module's instructions, type layout, and the
// description of each entry point.
#include "vulkan/spirv_parser.h"

#include <fmt/format.h>

#include <algorithm>

namespace hal::vulkan::spirv {

bool Parser::read_string(size_t begin, size_t end, std::string* out, size_t* next) {
  out->clear();
  for (size_t w = begin; w < end; ++w) {
    uint32_t word = words_[w];
    for (int b = 0; b < 4; ++b) {
      char c = static_cast<char>((word >> (8 * b)) & 0xFF);
      if (c == '\0') {
        *next = w + 1;
        return true;
      }
      out->push_back(c);
    }
  }
  return fail(fmt::format("unterminated string literal in the instruction at word {}", begin));
}

bool Parser::run(ReflectedModule* out, std::string* error) {
  if (count_ < 5) {
    *error = fmt::format("SPIR-V needs a 5-word header, the blob has {} words", count_);
    return false;
  }
  if (words_[0] != kMagic) {
    *error = fmt::format("bad SPIR-V magic number 0x{:08x} (expected 0x{:08x})", words_[0], kMagic);
    return false;
  }
  version_ = words_[1];
  size_t at = 5;
  while (at < count_) {
    const uint32_t length = words_[at] >> 16;
    const uint32_t op = words_[at] & 0xFFFF;
    if (length == 0 || length > count_ - at) {
      *error = fmt::format("instruction at word {} has word count {}, but {} words remain", at,
                           length, count_ - at);
      return false;
    }
    if (!parse_instruction(op, at, length)) {
      *error = error_;
      return false;
    }
    at += length;
  }
  if (!build(out)) {
    *error = error_;
    return false;
  }
  return true;
}

bool Parser::parse_instruction(uint32_t op, size_t at, size_t length) {
  const size_t end = at + length;
  auto need = [&](size_t words) {
    if (length >= words) return true;
    return fail(fmt::format("instruction with opcode {} at word {} is too short ({} words)", op, at,
                            length));
  };
  switch (op) {
    case kOpCapability:
      if (!need(2)) return false;
      capabilities_.push_back(words_[at + 1]);
      if (words_[at + 1] == kCapabilityPhysicalStorageBufferAddresses) {
        physical_storage_buffer_ = true;
      }
      return true;
    case kOpName: {
      if (!need(3)) return false;
      std::string name;
      size_t next = 0;
      if (!read_string(at + 2, end, &name, &next)) return false;
      names_[words_[at + 1]] = std::move(name);
      return true;
    }
    case kOpEntryPoint: {
      if (!need(4)) return false;
      EntryRecord entry;
      entry.model = words_[at + 1];
      entry.function = words_[at + 2];
      size_t next = 0;
      if (!read_string(at + 3, end, &entry.name, &next)) return false;
      entry.interface.assign(words_ + next, words_ + end);
      entries_.push_back(std::move(entry));
      return true;
    }
    case kOpExecutionMode:
    case kOpExecutionModeId: {
      if (!need(3)) return false;
      const uint32_t mode = words_[at + 2];
      if ((op == kOpExecutionMode && mode == kModeLocalSize) ||
          (op == kOpExecutionModeId && mode == kModeLocalSizeId)) {
        if (!need(6)) return false;
        auto& target = op == kOpExecutionMode ? local_size_ : local_size_id_;
        target[words_[at + 1]] = {words_[at + 3], words_[at + 4], words_[at + 5]};
      }
      return true;
    }
    case kOpTypeVoid:
    case kOpTypeBool:
    case kOpTypeInt:
    case kOpTypeFloat:
    case kOpTypeVector:
    case kOpTypeMatrix:
    case kOpTypeArray:
    case kOpTypeRuntimeArray:
    case kOpTypeStruct:
    case kOpTypePointer:
    case kOpTypeCooperativeMatrixKHR: {
      if (!need(2)) return false;
      if (op == kOpTypeCooperativeMatrixKHR) {
        if (!need(7)) return false;
        cooperative_matrix_types_.push_back(words_[at + 1]);
      }
      Type type;
      type.op = op;
      type.operands.assign(words_ + at + 2, words_ + end);
      types_[words_[at + 1]] = std::move(type);
      return true;
    }
    case kOpConstantTrue:
    case kOpConstantFalse:
    case kOpSpecConstantTrue:
    case kOpSpecConstantFalse: {
      if (!need(3)) return false;
      Constant constant;
      constant.spec = op == kOpSpecConstantTrue || op == kOpSpecConstantFalse;
      constant.type = words_[at + 1];
      constant.value = (op == kOpConstantTrue || op == kOpSpecConstantTrue) ? 1 : 0;
      constants_[words_[at + 2]] = std::move(constant);
      return true;
    }
    case kOpConstant:
    case kOpSpecConstant: {
      if (!need(4)) return false;
      Constant constant;
      constant.spec = op == kOpSpecConstant;
      constant.type = words_[at + 1];
      constant.value = words_[at + 3];
      if (length >= 5) constant.value |= static_cast<uint64_t>(words_[at + 4]) << 32;
      constants_[words_[at + 2]] = std::move(constant);
      return true;
    }
    case kOpConstantNull: {
      if (!need(3)) return false;
      Constant constant;
      constant.type = words_[at + 1];
      constants_[words_[at + 2]] = std::move(constant);
      return true;
    }
    case kOpSpecConstantOp: {
      if (!need(4)) return false;
      Constant constant;
      constant.spec = true;
      constant.type = words_[at + 1];
      constant.operation = words_[at + 3];
      constant.operands.assign(words_ + at + 4, words_ + end);
      constants_[words_[at + 2]] = std::move(constant);
      return true;
    }
    case kOpConstantComposite:
    case kOpSpecConstantComposite: {
      if (!need(3)) return false;
      Constant constant;
      constant.spec = op == kOpSpecConstantComposite;
      constant.type = words_[at + 1];
      constant.constituents.assign(words_ + at + 3, words_ + end);
      constants_[words_[at + 2]] = std::move(constant);
      return true;
    }
    case kOpVariable:
      if (!need(4)) return false;
      variables_.emplace_back(words_[at + 2], Variable{words_[at + 1], words_[at + 3]});
      if (words_[at + 3] == kStoragePushConstant) push_variables_.insert(words_[at + 2]);
      return true;
    case kOpDecorate: {
      if (!need(3)) return false;
      Decorations& d = decorations_[words_[at + 1]];
      const uint32_t decoration = words_[at + 2];
      const bool has_literal = length >= 4;
      const uint32_t literal = has_literal ? words_[at + 3] : 0;
      switch (decoration) {
        case kDecorationSpecId:
          if (!need(4)) return false;
          d.has_spec_id = true;
          d.spec_id = literal;
          break;
        case kDecorationBlock:
          d.block = true;
          break;
        case kDecorationBufferBlock:
          d.buffer_block = true;
          break;
        case kDecorationBuiltIn:
          if (!need(4)) return false;
          if (literal == kBuiltInWorkgroupSize) d.workgroup_size = true;
          break;
        case kDecorationBinding:
          if (!need(4)) return false;
          d.has_binding = true;
          d.binding = literal;
          break;
        case kDecorationDescriptorSet:
          if (!need(4)) return false;
          d.has_set = true;
          d.set = literal;
          break;
        case kDecorationAligned:
          if (!need(4)) return false;
          d.aligned = literal;
          break;
        case kDecorationArrayStride:
          if (!need(4)) return false;
          d.array_stride = literal;
          break;
        default:
          break;
      }
      return true;
    }
    case kOpMemberDecorate: {
      if (!need(4)) return false;
      const uint64_t key = (static_cast<uint64_t>(words_[at + 1]) << 32) | words_[at + 2];
      if (words_[at + 3] == kDecorationOffset) {
        if (!need(5)) return false;
        member_offsets_[key] = words_[at + 4];
      } else if (words_[at + 3] == kDecorationMatrixStride) {
        if (!need(5)) return false;
        member_matrix_strides_[key] = words_[at + 4];
      } else if (words_[at + 3] == kDecorationRowMajor) {
        member_row_major_[key] = true;
      }
      return true;
    }
    default:
      trace(op, at, length);
      return true;
  }
}

// Size and base alignment of a type as laid out in memory. Struct members use their Offset
// decorations when present (explicitly laid out blocks), else natural packing.
bool Parser::type_size(uint32_t id, int depth, uint64_t* size, uint32_t* alignment) {
  if (depth > kMaxTypeDepth) return fail("types nest too deeply (or form a cycle)");
  // Memoised: without it, structs of structs make the walk exponential in the nesting depth.
  if (auto known = sizes_.find(id); known != sizes_.end()) {
    *size = known->second.first;
    *alignment = known->second.second;
    return true;
  }
  if (!type_size_uncached(id, depth, size, alignment)) return false;
  sizes_.emplace(id, std::make_pair(*size, *alignment));
  return true;
}

bool Parser::type_size_uncached(uint32_t id, int depth, uint64_t* size, uint32_t* alignment) {
  auto it = types_.find(id);
  if (it == types_.end()) return fail(fmt::format("id %{} is not a type", id));
  const Type& type = it->second;
  const std::vector<uint32_t>& o = type.operands;
  switch (type.op) {
    case kOpTypeBool:
      *size = 4;
      *alignment = 4;
      return true;
    case kOpTypeInt:
    case kOpTypeFloat:
      if (o.empty() || o[0] == 0 || o[0] % 8 != 0 || o[0] > 64) {
        return fail(fmt::format("type %{} has an unsupported width", id));
      }
      *size = o[0] / 8;
      *alignment = o[0] / 8;
      return true;
    case kOpTypeVector:
    case kOpTypeMatrix: {
      if (o.size() < 2 || o[1] == 0 || o[1] > 16) {
        return fail(fmt::format("vector or matrix type %{} is malformed", id));
      }
      uint64_t element = 0;
      uint32_t element_alignment = 0;
      if (!type_size(o[0], depth + 1, &element, &element_alignment)) return false;
      *size = element * o[1];
      *alignment =
          type.op == kOpTypeVector ? element_alignment * (o[1] == 3 ? 4 : o[1]) : element_alignment;
      if (*alignment > 64) *alignment = 64;
      return true;
    }
    case kOpTypeArray: {
      if (o.size() < 2) return fail(fmt::format("array type %{} is malformed", id));
      uint64_t element = 0;
      uint32_t element_alignment = 0;
      if (!type_size(o[0], depth + 1, &element, &element_alignment)) return false;
      // The length after specialization. One decided at launch, or one this parser cannot
      // evaluate, counts as empty.
      const Value length_value = evaluate(o[1], /*at_launch=*/true, 0);
      const uint64_t length = length_value.known ? length_value.bits & 0xFFFFFFFFull : 0;
      // An explicitly laid out array (a block's, std140's 16-byte elements) spans its stride
      // per element, which may be more than the element.
      auto decorated = decorations_.find(id);
      if (decorated != decorations_.end() && decorated->second.array_stride > element) {
        element = decorated->second.array_stride;
      }
      if (element != 0 && length > kMaxSize / element) {
        return fail(fmt::format("array type %{} is larger than 4 GiB", id));
      }
      *size = element * length;
      *alignment = element_alignment;
      return true;
    }
    case kOpTypeRuntimeArray:
      *size = 0;
      *alignment = 1;
      return true;
    case kOpTypePointer:
      *size = 8;
      *alignment = 8;
      return true;
    case kOpTypeStruct: {
      uint64_t end = 0;
      uint32_t max_alignment = 1;
      for (uint32_t m = 0; m < o.size(); ++m) {
        uint64_t member_size = 0;
        uint32_t member_alignment = 1;
        if (!type_size(o[m], depth + 1, &member_size, &member_alignment)) return false;
        const uint64_t key = (static_cast<uint64_t>(id) << 32) | m;
        // A laid-out matrix member spans its MatrixStride per column (per row when RowMajor):
        // std140's mat3 is three 16-byte columns, not three vec3s packed.
        if (auto stride = member_matrix_strides_.find(key);
            stride != member_matrix_strides_.end()) {
          auto matrix = types_.find(o[m]);
          if (matrix != types_.end() && matrix->second.op == kOpTypeMatrix &&
              matrix->second.operands.size() >= 2) {
            uint32_t rows = 0;
            if (auto column = types_.find(matrix->second.operands[0]);
                column != types_.end() && column->second.operands.size() >= 2) {
              rows = column->second.operands[1];
            }
            const uint64_t lines = member_row_major_.count(key) ? rows : matrix->second.operands[1];
            member_size = std::max<uint64_t>(member_size, uint64_t{stride->second} * lines);
          }
        }
        uint64_t offset = 0;
        auto off = member_offsets_.find(key);
        if (off != member_offsets_.end()) {
          offset = off->second;
        } else {
          offset = (end + member_alignment - 1) / member_alignment * member_alignment;
        }
        end = std::max(end, offset + member_size);
        max_alignment = std::max(max_alignment, member_alignment);
        if (end > kMaxSize) return fail(fmt::format("struct type %{} is too large", id));
      }
      *size = end;
      *alignment = max_alignment;
      return true;
    }
    default:
      return fail(fmt::format("type %{} (opcode {}) has no size", id, type.op));
  }
}

bool Parser::build(ReflectedModule* out) {
  ReflectedModule module;
  module.version = version_;
  module.uses_physical_storage_buffer = physical_storage_buffer_;
  module.capabilities = capabilities_;

  for (const auto& [id, constant] : constants_) {
    if (!constant.spec || !constant.constituents.empty()) continue;
    auto d = decorations_.find(id);
    if (d == decorations_.end() || !d->second.has_spec_id) continue;
    auto type = types_.find(constant.type);
    if (type == types_.end()) return fail(fmt::format("spec constant %{} has no type", id));
    uint32_t size = 4;
    if (type->second.op == kOpTypeInt || type->second.op == kOpTypeFloat) {
      if (type->second.operands.empty()) return fail("scalar type without a width");
      size = type->second.operands[0] / 8;
    }
    module.spec_constants.push_back({d->second.spec_id, size});
  }
  std::sort(
      module.spec_constants.begin(), module.spec_constants.end(),
      [](const ReflectedSpecConstant& a, const ReflectedSpecConstant& b) { return a.id < b.id; });
  // Several constants may share a SpecId (for instance LocalSizeId and the WorkgroupSize value).
  module.spec_constants.erase(
      std::unique(module.spec_constants.begin(), module.spec_constants.end(),
                  [](const ReflectedSpecConstant& a, const ReflectedSpecConstant& b) {
                    return a.id == b.id;
                  }),
      module.spec_constants.end());

  // A constant decorated BuiltIn WorkgroupSize overrides every LocalSize in the module. A
  // module with several (linked from several shaders) is ambiguous; each entry point's own
  // execution mode is used then.
  std::vector<uint32_t> workgroup_size_builtin;
  int builtins = 0;
  for (const auto& [id, constant] : constants_) {
    auto d = decorations_.find(id);
    if (d != decorations_.end() && d->second.workgroup_size) {
      ++builtins;
      workgroup_size_builtin = constant.constituents;
      if (workgroup_size_builtin.size() != 3) {
        return fail("the WorkgroupSize built-in is not a 3-component constant");
      }
    }
  }
  if (builtins > 1) workgroup_size_builtin.clear();

  // Workgroup sizes first: they decide which constants are set at launch, and so which shared
  // arrays have a size known at load.
  std::vector<const EntryRecord*> records;
  for (const EntryRecord& record : entries_) {
    if (record.model != kExecutionModelGLCompute) continue;
    ReflectedEntryPoint entry;
    entry.name = record.name;
    if (!workgroup_size_builtin.empty()) {
      if (!resolve_block(workgroup_size_builtin, &entry)) return false;
    } else if (auto fixed = local_size_.find(record.function); fixed != local_size_.end()) {
      for (int d = 0; d < 3; ++d) entry.block[d] = fixed->second[d];
      entry.block_declared = true;
    } else if (auto ids = local_size_id_.find(record.function); ids != local_size_id_.end()) {
      if (!resolve_block(ids->second, &entry)) return false;
    }
    module.entry_points.push_back(std::move(entry));
    records.push_back(&record);
  }

  for (size_t e = 0; e < records.size(); ++e) {
    const EntryRecord& record = *records[e];
    ReflectedEntryPoint& entry = module.entry_points[e];

    // Resources: from SPIR-V 1.4 on the interface lists every global the entry point uses;
    // before, it lists only inputs and outputs, so every resource of the module counts.
    std::unordered_set<uint32_t> interface(record.interface.begin(), record.interface.end());
    const bool filter = version_ >= kVersion14;
    bool have_push = false;
    uint64_t workgroup_bytes = 0;
    for (const auto& [id, variable] : variables_) {
      if (filter && interface.count(id) == 0) continue;
      auto pointer = types_.find(variable.type);
      if (pointer == types_.end() || pointer->second.op != kOpTypePointer ||
          pointer->second.operands.size() < 2) {
        return fail(fmt::format("variable %{} does not have a pointer type", id));
      }
      const uint32_t pointee = pointer->second.operands[1];
      // Arrays of blocks are descriptor arrays: look through them for the block decoration.
      uint32_t block_type = pointee;
      for (int depth = 0; depth < kMaxTypeDepth; ++depth) {
        auto t = types_.find(block_type);
        if (t == types_.end()) break;
        if ((t->second.op == kOpTypeArray || t->second.op == kOpTypeRuntimeArray) &&
            !t->second.operands.empty()) {
          block_type = t->second.operands[0];
          continue;
        }
        break;
      }
      const Decorations& type_decorations = decorations_[block_type];
      const uint32_t storage = variable.storage;
      if (storage == kStorageStorageBuffer || storage == kStorageUniform ||
          storage == kStorageUniformConstant) {
        const Decorations& d = decorations_[id];
        ReflectedBinding binding;
        binding.set = d.set;
        binding.binding = d.binding;
        binding.is_array = block_type != pointee;
        if (storage == kStorageStorageBuffer ||
            (storage == kStorageUniform && type_decorations.buffer_block)) {
          binding.kind = DescriptorKind::kStorageBuffer;
        } else if (storage == kStorageUniform) {
          binding.kind = DescriptorKind::kUniformBuffer;
          // The bytes a launch must bind: a uniform block has no runtime array, so its layout
          // fixes its size (after specialization).
          uint32_t alignment = 0;
          if (!type_size(block_type, 0, &binding.block_bytes, &alignment)) return false;
        } else {
          binding.kind = DescriptorKind::kOther;
        }
        if (auto n = names_.find(id); n != names_.end()) binding.name = n->second;
        entry.bindings.push_back(std::move(binding));
      } else if (storage == kStoragePushConstant) {
        if (have_push) return fail("an entry point uses more than one push-constant block");
        have_push = true;
        auto t = types_.find(pointee);
        if (t == types_.end() || t->second.op != kOpTypeStruct) {
          return fail(fmt::format("push-constant variable %{} is not a struct", id));
        }
        uint64_t end = 0;
        for (uint32_t m = 0; m < t->second.operands.size(); ++m) {
          const uint32_t member_type = t->second.operands[m];
          ReflectedPushMember member;
          auto off = member_offsets_.find((static_cast<uint64_t>(pointee) << 32) | m);
          if (off == member_offsets_.end()) {
            return fail(fmt::format("push-constant member {} has no Offset decoration", m));
          }
          member.offset = off->second;
          uint64_t size = 0;
          uint32_t alignment = 1;
          if (!type_size(member_type, 0, &size, &alignment)) return false;
          auto mt = types_.find(member_type);
          if (mt != types_.end()) {
            const Type& type = mt->second;
            if (type.op == kOpTypeInt && !type.operands.empty() && type.operands[0] == 64) {
              member.is_address = true;
            }
            member.is_integer = type.op == kOpTypeInt && !member.is_address;
            member.is_float = type.op == kOpTypeFloat;
            if (type.op == kOpTypePointer && type.operands.size() >= 2 &&
                type.operands[0] == kStoragePhysicalStorageBuffer) {
              member.is_address = true;
              member.address_alignment = scalar_alignment(type.operands[1], 0);
            }
          }
          if (auto traced = access_alignment_.find(member_key(id, m));
              member.is_address && traced != access_alignment_.end()) {
            member.address_alignment = traced->second;
          }
          member.size = static_cast<uint32_t>(size);
          member.alignment = alignment;
          end = std::max<uint64_t>(end, uint64_t{member.offset} + size);
          if (end > kMaxSize) return fail("push-constant block is too large");
          entry.push_members.push_back(member);
        }
        std::sort(entry.push_members.begin(), entry.push_members.end(),
                  [](const ReflectedPushMember& a, const ReflectedPushMember& b) {
                    return a.offset < b.offset;
                  });
        entry.push_constant_size = static_cast<uint32_t>((end + 3) & ~uint64_t{3});
      } else if (storage == kStorageWorkgroup) {
        uint64_t size = 0;
        uint32_t alignment = 1;
        if (!type_size(pointee, 0, &size, &alignment)) return false;
        workgroup_bytes = (workgroup_bytes + alignment - 1) / alignment * alignment + size;
        if (workgroup_bytes > kMaxSize) return fail("workgroup memory is larger than 4 GiB");
      }
    }
    entry.workgroup_bytes = static_cast<uint32_t>(workgroup_bytes);
    std::sort(entry.bindings.begin(), entry.bindings.end(),
              [](const ReflectedBinding& a, const ReflectedBinding& b) {
                return a.set != b.set ? a.set < b.set : a.binding < b.binding;
              });
    // Variables that alias one binding (views of one buffer with different types) are one
    // descriptor, and so one parameter. A kind other than a storage buffer wins, so that the
    // binding is refused as that kind.
    std::vector<ReflectedBinding> merged;
    for (ReflectedBinding& binding : entry.bindings) {
      if (!merged.empty() && merged.back().set == binding.set &&
          merged.back().binding == binding.binding) {
        ReflectedBinding& into = merged.back();
        if (binding.kind != DescriptorKind::kStorageBuffer) into.kind = binding.kind;
        into.is_array = into.is_array || binding.is_array;
        if (!binding.name.empty()) into.name += (into.name.empty() ? "" : "/") + binding.name;
        continue;
      }
      merged.push_back(std::move(binding));
    }
    entry.bindings = std::move(merged);
  }
  if (!reflect_cooperative_matrices(&module)) return false;
  *out = std::move(module);
  return true;
}

// Each OpTypeCooperativeMatrixKHR: Component Type, then the ids of Scope, Rows, Columns and Use,
// which may be specialization constants. Evaluated as at a launch, so that a value decided per
// launch (a workgroup size left open at load) is reported unknown.
bool Parser::reflect_cooperative_matrices(ReflectedModule* module) {
  for (uint32_t id : cooperative_matrix_types_) {
    const Type& type = types_[id];
    // The id may have been declared again since, as another type (invalid, but not validated).
    if (type.op != kOpTypeCooperativeMatrixKHR || type.operands.size() < 5) {
      return fail(fmt::format("type %{} is declared more than once", id));
    }
    const std::vector<uint32_t>& o = type.operands;
    ReflectedCooperativeMatrix matrix;
    auto component = types_.find(o[0]);
    if (component != types_.end() && !component->second.operands.empty()) {
      const Type& c = component->second;
      matrix.width = c.operands[0];
      if (c.op == kOpTypeFloat && c.operands.size() == 1) {  // no FP encoding (bfloat16, fp8)
        matrix.kind = ReflectedCooperativeMatrix::Kind::kFloat;
      } else if (c.op == kOpTypeInt && c.operands.size() >= 2) {
        matrix.kind = c.operands[1] != 0 ? ReflectedCooperativeMatrix::Kind::kSignedInt
                                         : ReflectedCooperativeMatrix::Kind::kUnsignedInt;
      }
    }
    const Value scope = evaluate(o[1], true, 0);
    const Value rows = evaluate(o[2], true, 0);
    const Value columns = evaluate(o[3], true, 0);
    const Value use = evaluate(o[4], true, 0);
    matrix.known = scope.known && rows.known && columns.known && use.known;
    matrix.scope = static_cast<uint32_t>(scope.bits);
    matrix.rows = static_cast<uint32_t>(rows.bits);
    matrix.columns = static_cast<uint32_t>(columns.bits);
    matrix.use = static_cast<uint32_t>(use.bits);
    module->cooperative_matrices.push_back(matrix);
  }
  return true;
}

}  // namespace hal::vulkan::spirv

namespace hal::vulkan {

bool reflect_spirv(const uint32_t* words, size_t word_count, const ReflectOptions& options,
                   ReflectedModule* out, std::string* error) {
  if (words == nullptr) {
    *error = "no SPIR-V words";
    return false;
  }
  spirv::Parser parser(words, word_count, options);
  return parser.run(out, error);
}

bool reflect_spirv(const uint32_t* words, size_t word_count, ReflectedModule* out,
                   std::string* error) {
  return reflect_spirv(words, word_count, ReflectOptions{}, out, error);
}

}  // namespace hal::vulkan
