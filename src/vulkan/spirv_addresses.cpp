// Buffer device addresses: which push-constant member each pointer in a function body comes
// from, and the widest access made through it (ReflectedPushMember::address_alignment).
#include "vulkan/spirv_parser.h"

#include <algorithm>

namespace hal::vulkan::spirv {

void Parser::note_access(uint32_t pointer, uint32_t alignment) {
  auto from = addresses_.find(pointer);
  if (from == addresses_.end()) return;
  if (auto decorated = decorations_.find(pointer);
      alignment == 0 && decorated != decorations_.end() && decorated->second.aligned != 0) {
    alignment = decorated->second.aligned;  // an Aligned decoration on the pointer itself
  }
  if (alignment == 0) {
    // No Aligned operand (atomics have none): the natural alignment of the scalar accessed.
    auto type = pointer_types_.find(pointer);
    auto pointee = type == pointer_types_.end() ? types_.end() : types_.find(type->second);
    alignment = pointee != types_.end() && pointee->second.op == kOpTypePointer &&
                        pointee->second.operands.size() >= 2
                    ? scalar_alignment(pointee->second.operands[1], 0)
                    : 1;
  }
  uint32_t& widest = access_alignment_[from->second];
  widest = std::max(widest, alignment);
}

// Follows addresses from push-constant members through a function body (one forward pass: SPIR-V
// defines every id before its uses in these chains). Anything not followed (phis, function calls)
// leaves the member with the fallback alignment of ReflectedPushMember::address_alignment.
void Parser::trace(uint32_t op, size_t at, size_t length) {
  auto origin = [&](uint32_t id, uint64_t* key) {
    auto it = addresses_.find(id);
    if (it == addresses_.end()) return false;
    *key = it->second;
    return true;
  };
  uint64_t key = 0;
  switch (op) {
    case kOpAccessChain:
    case kOpInBoundsAccessChain:
    case kOpPtrAccessChain:
    case kOpInBoundsPtrAccessChain: {
      if (length < 4) return;
      const uint32_t result = words_[at + 2];
      const uint32_t base = words_[at + 3];
      if (push_variables_.count(base) != 0 && length >= 5) {
        auto index = constants_.find(words_[at + 4]);
        if (index != constants_.end() && !index->second.spec) {
          push_slots_[result] = member_key(base, static_cast<uint32_t>(index->second.value));
        }
      } else if (origin(base, &key)) {
        addresses_[result] = key;
        pointer_types_[result] = words_[at + 1];
      }
      return;
    }
    case kOpLoad: {
      if (length < 4) return;
      const uint32_t result = words_[at + 2];
      const uint32_t pointer = words_[at + 3];
      if (auto slot = push_slots_.find(pointer); slot != push_slots_.end()) {
        addresses_[result] = slot->second;
        pointer_types_[result] = words_[at + 1];
      } else if (auto held = held_.find(pointer); held != held_.end()) {
        addresses_[result] = held->second;
        pointer_types_[result] = words_[at + 1];
      }
      const bool aligned = length >= 6 && (words_[at + 4] & kMemoryAccessAligned) != 0;
      note_access(pointer, aligned ? words_[at + 5] : 0);
      return;
    }
    case kOpStore: {
      if (length < 3) return;
      const uint32_t pointer = words_[at + 1];
      if (origin(words_[at + 2], &key) && addresses_.count(pointer) == 0) held_[pointer] = key;
      const bool aligned = length >= 5 && (words_[at + 3] & kMemoryAccessAligned) != 0;
      note_access(pointer, aligned ? words_[at + 4] : 0);
      return;
    }
    case kOpCopyObject:
    case kOpBitcast:
    case kOpConvertUToPtr:
    case kOpConvertPtrToU:
      if (length >= 4 && origin(words_[at + 3], &key)) {
        addresses_[words_[at + 2]] = key;
        pointer_types_[words_[at + 2]] = words_[at + 1];
      }
      return;
    case kOpIAdd:
    case kOpISub:
      if (length >= 5 && (origin(words_[at + 3], &key) || origin(words_[at + 4], &key))) {
        addresses_[words_[at + 2]] = key;
      }
      return;
    default:
      if (length >= 4 && ((op >= kOpAtomicLoad && op <= kOpAtomicXor) || op == kOpAtomicFMinEXT ||
                          op == kOpAtomicFMaxEXT || op == kOpAtomicFAddEXT)) {
        note_access(op == kOpAtomicStore ? words_[at + 1] : words_[at + 3], 0);
      }
      return;
  }
}

// The widest scalar inside |type| (a vector's or array's element, a struct's members).
uint32_t Parser::scalar_alignment(uint32_t type, int depth) const {
  auto it = types_.find(type);
  if (it == types_.end() || depth > kMaxTypeDepth) return 1;
  const std::vector<uint32_t>& o = it->second.operands;
  switch (it->second.op) {
    case kOpTypeBool:
      return 4;
    case kOpTypeInt:
    case kOpTypeFloat:
      return o.empty() || o[0] < 8 || o[0] > 64 ? 1 : o[0] / 8;
    case kOpTypePointer:
      return 8;
    case kOpTypeVector:
    case kOpTypeMatrix:
    case kOpTypeArray:
    case kOpTypeRuntimeArray:
      return o.empty() ? 1 : scalar_alignment(o[0], depth + 1);
    case kOpTypeStruct: {
      uint32_t widest = 1;
      for (uint32_t member : o) widest = std::max(widest, scalar_alignment(member, depth + 1));
      return widest;
    }
    default:
      return 1;
  }
}

}  // namespace hal::vulkan::spirv
