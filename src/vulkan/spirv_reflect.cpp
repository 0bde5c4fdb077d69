#include "vulkan/spirv_reflect.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace hal::vulkan {
namespace {

// The opcodes, enumerants and storage classes this parser reads (from the SPIR-V spec).
enum Op : uint32_t {
  kOpName = 5,
  kOpCapability = 17,
  kOpEntryPoint = 15,
  kOpExecutionMode = 16,
  kOpTypeVoid = 19,
  kOpTypeBool = 20,
  kOpTypeInt = 21,
  kOpTypeFloat = 22,
  kOpTypeVector = 23,
  kOpTypeMatrix = 24,
  kOpTypeArray = 28,
  kOpTypeRuntimeArray = 29,
  kOpTypeStruct = 30,
  kOpTypePointer = 32,
  kOpConstantTrue = 41,
  kOpConstantFalse = 42,
  kOpConstant = 43,
  kOpConstantComposite = 44,
  kOpSpecConstantTrue = 48,
  kOpSpecConstantFalse = 49,
  kOpSpecConstant = 50,
  kOpSpecConstantComposite = 51,
  kOpVariable = 59,
  kOpDecorate = 71,
  kOpMemberDecorate = 72,
  kOpExecutionModeId = 331,
};
constexpr uint32_t kMagic = 0x07230203u;
constexpr uint32_t kExecutionModelGLCompute = 5;
constexpr uint32_t kModeLocalSize = 17;
constexpr uint32_t kModeLocalSizeId = 38;
constexpr uint32_t kDecorationSpecId = 1;
constexpr uint32_t kDecorationBlock = 2;
constexpr uint32_t kDecorationBufferBlock = 3;
constexpr uint32_t kDecorationBuiltIn = 11;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kDecorationOffset = 35;
constexpr uint32_t kBuiltInWorkgroupSize = 25;
constexpr uint32_t kCapabilityPhysicalStorageBufferAddresses = 5347;
constexpr uint32_t kStorageUniformConstant = 0;
constexpr uint32_t kStorageUniform = 2;
constexpr uint32_t kStorageWorkgroup = 4;
constexpr uint32_t kStoragePushConstant = 9;
constexpr uint32_t kStorageStorageBuffer = 12;
constexpr uint32_t kStoragePhysicalStorageBuffer = 5349;
constexpr uint32_t kVersion14 = 0x00010400u;
constexpr int kMaxTypeDepth = 32;
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
};

class Parser {
 public:
  Parser(const uint32_t* words, size_t count) : words_(words), count_(count) {}

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
  bool constant_value(uint32_t id, uint64_t* value, uint32_t* spec_id);
  bool resolve_block(const std::vector<uint32_t>& ids, ReflectedEntryPoint* entry);

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
  std::unordered_map<uint32_t, Constant> constants_;
  std::vector<std::pair<uint32_t, Variable>> variables_;  // in declaration order
  std::unordered_map<uint32_t, Decorations> decorations_;
  std::unordered_map<uint64_t, uint32_t> member_offsets_;  // (struct << 32 | member) -> offset
  std::unordered_map<uint32_t, std::string> names_;
  std::unordered_map<uint32_t, std::pair<uint64_t, uint32_t>> sizes_;  // type -> size, alignment
};

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
    case kOpTypePointer: {
      if (!need(2)) return false;
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
        default:
          break;
      }
      return true;
    }
    case kOpMemberDecorate:
      if (!need(4)) return false;
      if (words_[at + 3] == kDecorationOffset) {
        if (!need(5)) return false;
        member_offsets_[(static_cast<uint64_t>(words_[at + 1]) << 32) | words_[at + 2]] =
            words_[at + 4];
      }
      return true;
    default:
      return true;
  }
}

bool Parser::constant_value(uint32_t id, uint64_t* value, uint32_t* spec_id) {
  auto it = constants_.find(id);
  if (it == constants_.end() || !it->second.constituents.empty()) {
    return fail(fmt::format("id %{} is not a scalar constant", id));
  }
  *value = it->second.value;
  *spec_id = kNoSpecId;
  if (it->second.spec) {
    auto d = decorations_.find(id);
    if (d != decorations_.end() && d->second.has_spec_id) *spec_id = d->second.spec_id;
  }
  return true;
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
      uint64_t length = 0;
      uint32_t spec = kNoSpecId;
      if (!constant_value(o[1], &length, &spec)) {
        // A length computed from specialization constants (OpSpecConstantOp) is known only
        // when the pipeline is created: count it as empty here.
        error_.clear();
        length = 0;
      }
      length &= 0xFFFFFFFFull;
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
        uint64_t offset = 0;
        auto off = member_offsets_.find((static_cast<uint64_t>(id) << 32) | m);
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

bool Parser::resolve_block(const std::vector<uint32_t>& ids, ReflectedEntryPoint* entry) {
  if (ids.size() != 3) return fail("a workgroup size needs three components");
  for (int d = 0; d < 3; ++d) {
    uint64_t value = 0;
    uint32_t spec = kNoSpecId;
    if (!constant_value(ids[d], &value, &spec)) return false;
    entry->block[d] = static_cast<uint32_t>(value);
    entry->block_spec_id[d] = spec;
  }
  entry->block_declared = true;
  return true;
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
            if (type.op == kOpTypePointer && !type.operands.empty() &&
                type.operands[0] == kStoragePhysicalStorageBuffer) {
              member.is_address = true;
            }
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
    module.entry_points.push_back(std::move(entry));
  }
  *out = std::move(module);
  return true;
}

}  // namespace

bool reflect_spirv(const uint32_t* words, size_t word_count, ReflectedModule* out,
                   std::string* error) {
  if (words == nullptr) {
    *error = "no SPIR-V words";
    return false;
  }
  Parser parser(words, word_count);
  return parser.run(out, error);
}

}  // namespace hal::vulkan
