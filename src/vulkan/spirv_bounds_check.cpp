#include "vulkan/spirv_bounds_check.h"

#include "vulkan/spirv_enums.h"

#include <spirv-tools/libspirv.h>

#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace hal::vulkan {
namespace {

using namespace spirv;  // the opcodes and enumerants (spirv_enums.h)

struct Inst {
  uint32_t op = 0;
  uint32_t type = 0;    // result type id, 0 when none
  uint32_t result = 0;  // result id, 0 when none
  std::vector<uint32_t> words;
};

Inst make(uint32_t op, std::vector<uint32_t> operands) {
  Inst inst;
  inst.op = op;
  inst.words.reserve(operands.size() + 1);
  inst.words.push_back(static_cast<uint32_t>((operands.size() + 1) << 16) | op);
  inst.words.insert(inst.words.end(), operands.begin(), operands.end());
  return inst;
}

// A literal string's words, nul-terminated and padded, as SPIR-V encodes it.
std::vector<uint32_t> string_words(const std::string& text) {
  std::vector<uint32_t> words(text.size() / 4 + 1, 0);
  for (size_t i = 0; i < text.size(); ++i) {
    words[i / 4] |= static_cast<uint32_t>(static_cast<uint8_t>(text[i])) << (8 * (i % 4));
  }
  return words;
}

std::string read_string(const std::vector<uint32_t>& words, size_t first) {
  std::string text;
  for (size_t i = first; i < words.size(); ++i) {
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((words[i] >> (8 * b)) & 0xFF);
      if (c == '\0') return text;
      text += c;
    }
  }
  return text;
}

bool is_annotation(uint32_t op) {
  return op == kOpDecorate || op == kOpMemberDecorate || op == kOpDecorationGroup ||
         op == kOpGroupDecorate || op == kOpGroupMemberDecorate || op == kOpDecorateId ||
         op == kOpDecorateString || op == kOpMemberDecorateString;
}

// The word holding the pointer an access goes through (0: not a memory access), and whether the
// access writes.
uint32_t pointer_word(uint32_t op, bool* write) {
  *write = op != kOpLoad && op != kOpAtomicLoad;
  if (op == kOpStore || op == kOpAtomicStore) return 1;
  if (op == kOpLoad || op == kOpAtomicLoad) return 3;
  if ((op >= kOpAtomicExchange && op <= kOpAtomicXor) || op == kOpAtomicFMinEXT ||
      op == kOpAtomicFMaxEXT || op == kOpAtomicFAddEXT) {
    return 3;
  }
  return 0;
}

struct Block {
  uint32_t label = 0;
  std::vector<Inst> insts;  // after the OpLabel, terminator included
};

struct Function {
  std::vector<Inst> head;  // OpFunction and its parameters
  std::vector<Block> blocks;
  Inst end;
};

// A storage buffer whose block ends in a runtime array.
struct Buffer {
  uint32_t set = 0;
  uint32_t binding = 0;
  uint32_t member = 0;  // the runtime array's member index
  uint32_t stride = 0;
  uint32_t offset = 0;
  std::string name;
};

// A pointer to an element of a buffer's runtime array (or into one): the access through it
// needs |index| < OpArrayLength(|variable|, member).
struct Element {
  uint32_t variable = 0;
  uint32_t index = 0;
};

class Rewriter {
 public:
  Rewriter(uint32_t record_set, BoundsChecks* checks) : record_set_(record_set), checks_(checks) {
    checks_->set = record_set;
  }

  bool run(const std::vector<uint32_t>& words, std::vector<uint32_t>* out, std::string* error);

 private:
  static spv_result_t on_instruction(void* user, const spv_parsed_instruction_t* parsed);
  void scan_globals();
  uint32_t new_id() { return bound_++; }
  uint32_t int_type(uint32_t width, uint32_t signedness);
  uint32_t bool_type();
  uint32_t pointer_type(uint32_t storage, uint32_t pointee);
  uint32_t uint_constant(uint32_t value);
  uint32_t null_constant(uint32_t type);
  uint32_t int_width(uint32_t type) const;
  bool can_zero(uint32_t type, int depth) const;
  uint32_t type_of(uint32_t id) const {
    auto it = result_types_.find(id);
    return it != result_types_.end() ? it->second : 0;
  }
  void rewrite(Function& function);
  // Emits the check of one access into |block| and returns the block the code after it goes to.
  Block check(Block block, Inst access, const Element& element, bool write,
              std::vector<Block>* done);
  void write_module(const std::vector<uint32_t>& words, std::vector<uint32_t>* out);

  uint32_t record_set_;
  BoundsChecks* checks_;
  std::vector<Inst> parsed_;
  std::vector<Inst> globals_;  // everything before the first function
  std::vector<Function> functions_;
  std::vector<Inst> new_annotations_;
  std::vector<Inst> new_globals_;
  uint32_t bound_ = 0;
  uint32_t version_ = 0;
  bool vulkan_memory_model_ = false;
  bool has_storage_buffer_extension_ = false;
  std::unordered_set<uint32_t> capabilities_;

  std::unordered_map<uint32_t, const Inst*> types_;
  std::unordered_map<uint32_t, uint32_t> result_types_;  // result id -> its type
  std::unordered_map<uint32_t, uint32_t> constants_;     // 32-bit OpConstant -> value
  std::unordered_map<uint32_t, std::string> names_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> member_offsets_;
  std::unordered_map<uint32_t, uint32_t> array_strides_;
  std::unordered_map<uint32_t, uint32_t> sets_, bindings_;
  std::unordered_map<uint32_t, uint32_t> block_kind_;              // struct -> Block or BufferBlock
  std::unordered_map<uint32_t, Buffer> buffers_;                   // by variable
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> found_types_;  // (op or width, detail) -> id
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> pointers_;     // (storage, pointee) -> id
  std::unordered_map<uint32_t, uint32_t> uint_constants_;
  std::unordered_map<uint32_t, uint32_t> nulls_;
  uint32_t record_ = 0;  // the record buffer variable
};

spv_result_t Rewriter::on_instruction(void* user, const spv_parsed_instruction_t* parsed) {
  Inst inst;
  inst.op = parsed->opcode;
  inst.type = parsed->type_id;
  inst.result = parsed->result_id;
  inst.words.assign(parsed->words, parsed->words + parsed->num_words);
  static_cast<Rewriter*>(user)->parsed_.push_back(std::move(inst));
  return SPV_SUCCESS;
}

uint32_t Rewriter::int_width(uint32_t type) const {
  auto it = types_.find(type);
  if (it == types_.end() || it->second->op != kOpTypeInt) return 0;
  return it->second->words[2];
}

void Rewriter::scan_globals() {
  for (const Inst& inst : globals_) {
    const std::vector<uint32_t>& w = inst.words;
    switch (inst.op) {
      case kOpExtension:
        if (read_string(w, 1) == kStorageBufferExtension) has_storage_buffer_extension_ = true;
        break;
      case kOpCapability:
        capabilities_.insert(w[1]);
        break;
      case kOpMemoryModel:
        vulkan_memory_model_ = w[2] == kMemoryModelVulkan;
        break;
      case kOpName:
        names_[w[1]] = read_string(w, 2);
        break;
      case kOpDecorate:
        if (w.size() >= 4 && w[2] == kDecorationDescriptorSet) sets_[w[1]] = w[3];
        if (w.size() >= 4 && w[2] == kDecorationBinding) bindings_[w[1]] = w[3];
        if (w.size() >= 4 && w[2] == kDecorationArrayStride) array_strides_[w[1]] = w[3];
        if (w[2] == kDecorationBlock || w[2] == kDecorationBufferBlock) block_kind_[w[1]] = w[2];
        break;
      case kOpMemberDecorate:
        if (w.size() >= 5 && w[3] == kDecorationOffset) member_offsets_[{w[1], w[2]}] = w[4];
        break;
      case kOpTypeInt:
        found_types_[{kOpTypeInt, w[2] << 1 | w[3]}] = inst.result;
        break;
      case kOpTypeBool:
        found_types_[{kOpTypeBool, 0}] = inst.result;
        break;
      case kOpTypePointer:
        pointers_[{w[2], w[3]}] = inst.result;
        break;
      case kOpConstant:
        if (int_width(inst.type) == 32) constants_[inst.result] = w[3];
        break;
      default:
        break;
    }
    if (inst.op >= kOpTypeBool && inst.op <= kOpTypePointer && inst.result != 0) {
      types_[inst.result] = &inst;
    }
  }
  // Storage buffers (StorageBuffer + Block, or Uniform + BufferBlock) whose block ends in a
  // runtime array.
  for (const Inst& inst : globals_) {
    if (inst.op != kOpVariable) continue;
    const uint32_t storage = inst.words[3];
    if (storage != kStorageStorageBuffer && storage != kStorageUniform) continue;
    auto pointer = types_.find(inst.type);
    if (pointer == types_.end() || pointer->second->op != kOpTypePointer) continue;
    const uint32_t block = pointer->second->words[3];
    auto type = types_.find(block);
    if (type == types_.end() || type->second->op != kOpTypeStruct) continue;
    auto kind = block_kind_.find(block);
    const uint32_t wanted =
        storage == kStorageStorageBuffer ? kDecorationBlock : kDecorationBufferBlock;
    if (kind == block_kind_.end() || kind->second != wanted) continue;
    const std::vector<uint32_t>& members = type->second->words;
    if (members.size() < 3) continue;
    const uint32_t last = members.back();
    auto array = types_.find(last);
    if (array == types_.end() || array->second->op != kOpTypeRuntimeArray) continue;
    Buffer buffer;
    buffer.set = sets_.count(inst.result) ? sets_[inst.result] : 0;
    buffer.binding = bindings_.count(inst.result) ? bindings_[inst.result] : 0;
    buffer.member = static_cast<uint32_t>(members.size() - 3);
    buffer.stride = array_strides_.count(last) ? array_strides_[last] : 0;
    auto offset = member_offsets_.find({block, buffer.member});
    buffer.offset = offset != member_offsets_.end() ? offset->second : 0;
    buffer.name = names_.count(inst.result) ? names_[inst.result] : "";
    if (buffer.name.empty() && names_.count(block)) buffer.name = names_[block];
    buffers_[inst.result] = buffer;
  }
}

uint32_t Rewriter::int_type(uint32_t width, uint32_t signedness) {
  uint32_t& id = found_types_[{kOpTypeInt, width << 1 | signedness}];
  if (id == 0) {
    id = new_id();
    new_globals_.push_back(make(kOpTypeInt, {id, width, signedness}));
  }
  return id;
}

uint32_t Rewriter::bool_type() {
  uint32_t& id = found_types_[{kOpTypeBool, 0}];
  if (id == 0) {
    id = new_id();
    new_globals_.push_back(make(kOpTypeBool, {id}));
  }
  return id;
}

uint32_t Rewriter::pointer_type(uint32_t storage, uint32_t pointee) {
  uint32_t& id = pointers_[{storage, pointee}];
  if (id == 0) {
    id = new_id();
    new_globals_.push_back(make(kOpTypePointer, {id, storage, pointee}));
  }
  return id;
}

uint32_t Rewriter::uint_constant(uint32_t value) {
  uint32_t& id = uint_constants_[value];
  if (id == 0) {
    const uint32_t type = int_type(32, 0);
    id = new_id();
    new_globals_.push_back(make(kOpConstant, {type, id, value}));
  }
  return id;
}

uint32_t Rewriter::null_constant(uint32_t type) {
  uint32_t& id = nulls_[type];
  if (id == 0) {
    id = new_id();
    new_globals_.push_back(make(kOpConstantNull, {type, id}));
  }
  return id;
}

// Whether a value of |type| has a zero constant: not when it holds 8- or 16-bit scalars the
// module only loads and stores (storage capabilities without arithmetic), nor pointers.
bool Rewriter::can_zero(uint32_t type, int depth) const {
  auto it = types_.find(type);
  if (it == types_.end() || depth > 16) return false;
  const std::vector<uint32_t>& w = it->second->words;
  switch (it->second->op) {
    case kOpTypeBool:
      return true;
    case kOpTypeInt:
      return w[2] >= 32 || capabilities_.count(w[2] == 16 ? kCapabilityInt16 : kCapabilityInt8);
    case kOpTypeFloat:
      return w[2] >= 32 || capabilities_.count(kCapabilityFloat16);
    case kOpTypeVector:
    case kOpTypeMatrix:
    case kOpTypeArray:
      return can_zero(w[2], depth + 1);
    case kOpTypeStruct:
      for (size_t i = 2; i < w.size(); ++i) {
        if (!can_zero(w[i], depth + 1)) return false;
      }
      return true;
    default:
      return false;
  }
}

// The access goes into a branch taken only in bounds; the other branch counts the access and,
// for the first one, fills the record. A loaded value becomes a phi of the value and 0:
//
//   <block>:  ... %ok = index < OpArrayLength; OpSelectionMerge %merge; branch %ok ? %in : %out
//   %in:      <access>; OpBranch %merge
//   %out:     %n = atomic add 1 to word 0; OpSelectionMerge %done; branch %n == 0 ? %first : %done
//   %first:   words 1..3 = site + 1, index, length; OpBranch %done
//   %done:    OpBranch %merge
//   %merge:   [%result = OpPhi %value %in, 0 %done] ... the rest of <block>
//
// A load of a value without a zero constant (see can_zero) is only reported: there is no %in,
// the branch goes to %merge, and the load stays at the start of %merge.
Block Rewriter::check(Block block, Inst access, const Element& element, bool write,
                      std::vector<Block>* done) {
  const Buffer& buffer = buffers_.at(element.variable);
  const uint32_t uint = int_type(32, 0);
  const uint32_t boolean = bool_type();
  const uint32_t uint_pointer = pointer_type(kStorageStorageBuffer, uint);
  const uint32_t result = access.result;
  const uint32_t result_type = access.type;
  const bool skip = result == 0 || can_zero(result_type, 0);
  const uint32_t site = static_cast<uint32_t>(checks_->sites.size());
  checks_->sites.push_back(BoundsSite{buffer.set, buffer.binding, write, skip, buffer.stride,
                                      buffer.offset, buffer.name});

  // The comparison, at the index's width (indices are signed: a negative one is out of bounds
  // as a huge unsigned number).
  const uint32_t index_type = type_of(element.index);
  const uint32_t width = int_width(index_type);
  const uint32_t length = new_id();
  block.insts.push_back(make(kOpArrayLength, {uint, length, element.variable, buffer.member}));
  uint32_t compared_index = element.index;
  uint32_t compared_length = length;
  if (width == 64) {
    compared_length = new_id();
    block.insts.push_back(make(kOpUConvert, {int_type(64, 0), compared_length, length}));
  } else if (width != 32) {
    compared_index = new_id();
    block.insts.push_back(make(kOpSConvert, {uint, compared_index, element.index}));
  }
  const uint32_t in_bounds = new_id();
  block.insts.push_back(make(kOpULessThan, {boolean, in_bounds, compared_index, compared_length}));
  const uint32_t in = new_id(), out = new_id(), first = new_id(), counted = new_id();
  const uint32_t merge = new_id();
  block.insts.push_back(make(kOpSelectionMerge, {merge, 0}));
  block.insts.push_back(make(kOpBranchConditional, {in_bounds, skip ? in : merge, out}));
  done->push_back(std::move(block));

  uint32_t value = 0;
  if (skip) {
    if (result != 0) access.words[2] = value = new_id();
    Block in_block{in, {}};
    in_block.insts.push_back(std::move(access));
    in_block.insts.push_back(make(kOpBranch, {merge}));
    done->push_back(std::move(in_block));
  }

  Block out_block{out, {}};
  auto word_pointer = [&](Block& b, uint32_t word) {
    const uint32_t id = new_id();
    b.insts.push_back(
        make(kOpAccessChain, {uint_pointer, id, record_, uint_constant(0), uint_constant(word)}));
    return id;
  };
  const uint32_t count = word_pointer(out_block, 0);
  const uint32_t previous = new_id();
  const uint32_t scope = uint_constant(vulkan_memory_model_ ? kScopeQueueFamily : kScopeDevice);
  out_block.insts.push_back(
      make(kOpAtomicIAdd, {uint, previous, count, scope, uint_constant(0), uint_constant(1)}));
  const uint32_t is_first = new_id();
  out_block.insts.push_back(make(kOpIEqual, {boolean, is_first, previous, uint_constant(0)}));
  out_block.insts.push_back(make(kOpSelectionMerge, {counted, 0}));
  out_block.insts.push_back(make(kOpBranchConditional, {is_first, first, counted}));
  done->push_back(std::move(out_block));

  Block first_block{first, {}};
  first_block.insts.push_back(
      make(kOpStore, {word_pointer(first_block, 1), uint_constant(site + 1)}));
  // The low 32 bits of the index, as the record's unsigned word.
  uint32_t recorded_index = compared_index;
  if (width == 64 || (width == 32 && index_type != uint)) {
    recorded_index = new_id();
    first_block.insts.push_back(
        make(width == 64 ? kOpUConvert : kOpBitcast, {uint, recorded_index, element.index}));
  }
  first_block.insts.push_back(make(kOpStore, {word_pointer(first_block, 2), recorded_index}));
  first_block.insts.push_back(make(kOpStore, {word_pointer(first_block, 3), length}));
  first_block.insts.push_back(make(kOpBranch, {counted}));
  done->push_back(std::move(first_block));

  Block counted_block{counted, {}};
  counted_block.insts.push_back(make(kOpBranch, {merge}));
  done->push_back(std::move(counted_block));

  Block merge_block{merge, {}};
  if (!skip) {
    merge_block.insts.push_back(std::move(access));
  } else if (result != 0) {
    merge_block.insts.push_back(
        make(kOpPhi, {result_type, result, value, in, null_constant(result_type), counted}));
  }
  return merge_block;
}

void Rewriter::rewrite(Function& function) {
  // Pointers into runtime arrays, in a forward walk (definitions precede their uses in block
  // order, except through phis, which are not followed).
  std::unordered_map<uint32_t, uint32_t> arrays;  // pointer to a whole runtime array -> variable
  std::unordered_map<uint32_t, Element> elements;
  auto element_of = [&](const Inst& inst, Element* out) {
    bool write = false;
    const uint32_t word = pointer_word(inst.op, &write);
    if (word == 0 || word >= inst.words.size()) return false;
    auto it = elements.find(inst.words[word]);
    if (it == elements.end()) return false;
    *out = it->second;
    return true;
  };
  bool any = false;
  for (const Block& block : function.blocks) {
    for (const Inst& inst : block.insts) {
      const std::vector<uint32_t>& w = inst.words;
      if ((inst.op == kOpAccessChain || inst.op == kOpInBoundsAccessChain) && w.size() >= 5) {
        const uint32_t base = w[3];
        auto buffer = buffers_.find(base);
        if (buffer != buffers_.end()) {
          auto member = constants_.find(w[4]);
          if (member == constants_.end() || member->second != buffer->second.member) continue;
          if (w.size() == 5) {
            arrays[inst.result] = base;
          } else {
            elements[inst.result] = Element{base, w[5]};
          }
        } else if (auto array = arrays.find(base); array != arrays.end()) {
          elements[inst.result] = Element{array->second, w[4]};
        } else if (auto element = elements.find(base); element != elements.end()) {
          const Element derived = element->second;
          elements[inst.result] = derived;
        }
      } else if (inst.op == kOpCopyObject && w.size() >= 4) {
        if (auto element = elements.find(w[3]); element != elements.end()) {
          const Element copied = element->second;
          elements[inst.result] = copied;
        }
      } else {
        Element element;
        any = any || element_of(inst, &element);
      }
    }
  }
  if (!any) return;

  std::vector<Block> done;
  std::unordered_map<uint32_t, uint32_t> last_part;  // block label -> where its terminator went
  for (Block& original : function.blocks) {
    bool has_access = false;
    for (const Inst& inst : original.insts) {
      Element element;
      has_access = has_access || element_of(inst, &element);
    }
    if (!has_access) {
      done.push_back(std::move(original));
      continue;
    }
    std::vector<Inst> insts = std::move(original.insts);
    Block block{original.label, {}};
    size_t next = 0;
    // A loop header keeps its phis and OpLoopMerge and branches to a new block holding the
    // rest: the header itself cannot become a selection header.
    if (insts.size() >= 2 && insts[insts.size() - 2].op == kOpLoopMerge) {
      while (next < insts.size() && (insts[next].op == kOpPhi || insts[next].op == kOpLine ||
                                     insts[next].op == kOpNoLine)) {
        block.insts.push_back(std::move(insts[next++]));
      }
      const uint32_t body = new_id();
      block.insts.push_back(std::move(insts[insts.size() - 2]));
      block.insts.push_back(make(kOpBranch, {body}));
      done.push_back(std::move(block));
      block = Block{body, {}};
      insts.erase(insts.end() - 2);
    }
    for (; next < insts.size(); ++next) {
      Element element;
      if (!element_of(insts[next], &element)) {
        block.insts.push_back(std::move(insts[next]));
        continue;
      }
      bool write = false;
      pointer_word(insts[next].op, &write);
      block = check(std::move(block), std::move(insts[next]), element, write, &done);
    }
    if (block.label != original.label) last_part[original.label] = block.label;
    done.push_back(std::move(block));
  }
  // Phis name their predecessors: a split block's successors now come from its last part.
  for (Block& block : done) {
    for (Inst& inst : block.insts) {
      if (inst.op != kOpPhi) continue;
      for (size_t i = 4; i < inst.words.size(); i += 2) {
        auto it = last_part.find(inst.words[i]);
        if (it != last_part.end()) inst.words[i] = it->second;
      }
    }
  }
  function.blocks = std::move(done);
}

void Rewriter::write_module(const std::vector<uint32_t>& words, std::vector<uint32_t>* out) {
  // Declarations the checks use: the record buffer, struct { uint words[4]; } at binding 0 of
  // the record set.
  const uint32_t uint = int_type(32, 0);
  const uint32_t array = new_id();
  const uint32_t record_block = new_id();
  new_globals_.push_back(make(kOpTypeArray, {array, uint, uint_constant(kBoundsRecordWords)}));
  new_globals_.push_back(make(kOpTypeStruct, {record_block, array}));
  const uint32_t pointer = pointer_type(kStorageStorageBuffer, record_block);
  new_globals_.push_back(make(kOpVariable, {pointer, record_, kStorageStorageBuffer}));
  new_annotations_.push_back(make(kOpDecorate, {array, kDecorationArrayStride, 4}));
  new_annotations_.push_back(make(kOpDecorate, {record_block, kDecorationBlock}));
  new_annotations_.push_back(make(kOpMemberDecorate, {record_block, 0, kDecorationOffset, 0}));
  new_annotations_.push_back(make(kOpDecorate, {record_, kDecorationDescriptorSet, record_set_}));
  new_annotations_.push_back(make(kOpDecorate, {record_, kDecorationBinding, 0}));

  // The new annotations follow the module's last one (a Vulkan module decorates its buffers).
  size_t last_annotation = 0;
  for (size_t i = 0; i < globals_.size(); ++i) {
    if (is_annotation(globals_[i].op)) last_annotation = i;
  }
  auto append = [out](const Inst& inst) {
    out->insert(out->end(), inst.words.begin(), inst.words.end());
  };
  out->assign(words.begin(), words.begin() + 5);
  (*out)[3] = bound_;
  bool extension_done = has_storage_buffer_extension_ || version_ >= kVersion13;
  for (size_t i = 0; i < globals_.size(); ++i) {
    Inst& inst = globals_[i];
    if (!extension_done && inst.op != kOpCapability) {
      append(make(kOpExtension, string_words(kStorageBufferExtension)));
      extension_done = true;
    }
    if (inst.op == kOpEntryPoint && version_ >= kVersion14) {
      // From SPIR-V 1.4 an entry point lists every global variable it uses.
      inst.words.push_back(record_);
      inst.words[0] = static_cast<uint32_t>(inst.words.size() << 16) | kOpEntryPoint;
    }
    append(inst);
    if (i == last_annotation) {
      for (const Inst& added : new_annotations_) append(added);
    }
  }
  for (const Inst& added : new_globals_) append(added);
  for (const Function& function : functions_) {
    for (const Inst& inst : function.head) append(inst);
    for (const Block& block : function.blocks) {
      append(make(kOpLabel, {block.label}));
      for (const Inst& inst : block.insts) append(inst);
    }
    append(function.end);
  }
}

bool Rewriter::run(const std::vector<uint32_t>& words, std::vector<uint32_t>* out,
                   std::string* error) {
  if (words.size() < 5) {
    *error = "the module is shorter than its header";
    return false;
  }
  version_ = words[1];
  bound_ = words[3];
  spv_context context = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  spv_diagnostic diagnostic = nullptr;
  const spv_result_t result = spvBinaryParse(context, this, words.data(), words.size(), nullptr,
                                             &Rewriter::on_instruction, &diagnostic);
  if (result != SPV_SUCCESS) {
    *error = diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error
                                                                   : "the module cannot be parsed";
  }
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  if (result != SPV_SUCCESS) return false;

  size_t at = 0;
  while (at < parsed_.size() && parsed_[at].op != kOpFunction) globals_.push_back(parsed_[at++]);
  while (at < parsed_.size()) {
    Function function;
    while (at < parsed_.size() && parsed_[at].op != kOpLabel && parsed_[at].op != kOpFunctionEnd) {
      function.head.push_back(parsed_[at++]);
    }
    while (at < parsed_.size() && parsed_[at].op == kOpLabel) {
      Block block{parsed_[at++].result, {}};
      while (at < parsed_.size() && parsed_[at].op != kOpLabel &&
             parsed_[at].op != kOpFunctionEnd) {
        block.insts.push_back(parsed_[at++]);
      }
      function.blocks.push_back(std::move(block));
    }
    if (at >= parsed_.size()) {
      *error = "a function has no OpFunctionEnd";
      return false;
    }
    function.end = parsed_[at++];
    functions_.push_back(std::move(function));
  }
  for (const Inst& inst : parsed_) {
    if (inst.result != 0 && inst.type != 0) result_types_[inst.result] = inst.type;
  }
  scan_globals();
  if (buffers_.empty()) {
    *out = words;
    return true;
  }
  record_ = new_id();
  for (Function& function : functions_) rewrite(function);
  if (checks_->sites.empty()) {
    *out = words;
    return true;
  }
  write_module(words, out);
  return true;
}

}  // namespace

bool add_bounds_checks(const std::vector<uint32_t>& words, uint32_t record_set,
                       std::vector<uint32_t>* out_words, BoundsChecks* out, std::string* error) {
  BoundsChecks checks;
  Rewriter rewriter(record_set, &checks);
  std::vector<uint32_t> rewritten;
  if (!rewriter.run(words, &rewritten, error)) return false;
  *out_words = std::move(rewritten);
  *out = std::move(checks);
  return true;
}

}  // namespace hal::vulkan
