// Constants after specialization: the values given at load, the defaults of the others, and
// every OpSpecConstantOp a shader may use, evaluated as SPIR-V defines them (wrapping at each
// constant's width). Workgroup sizes and shared-array lengths are read through here.
#include "vulkan/spirv_parser.h"

#include <fmt/format.h>

#include <climits>

namespace hal::vulkan::spirv {

uint32_t Parser::spec_id_of(uint32_t id) const {
  auto d = decorations_.find(id);
  return d != decorations_.end() && d->second.has_spec_id ? d->second.spec_id : kNoSpecId;
}

// The width of |type| as an integer (a boolean is a 1-bit one). False for anything else. The
// signedness is not needed: each operation says how it reads its operands.
bool Parser::int_type(uint32_t type, uint32_t* width) const {
  auto it = types_.find(type);
  if (it == types_.end()) return false;
  const std::vector<uint32_t>& o = it->second.operands;
  if (it->second.op == kOpTypeBool) {
    *width = 1;
    return true;
  }
  if (it->second.op != kOpTypeInt || o.size() < 2 || o[0] == 0 || o[0] > 64) return false;
  *width = o[0];
  return true;
}

namespace {

uint64_t truncate_to(uint64_t bits, uint32_t width) {
  return width >= 64 ? bits : bits & ((uint64_t{1} << width) - 1);
}

int64_t sign_extend(uint64_t bits, uint32_t width) {
  if (width >= 64) return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (width - 1);
  return static_cast<int64_t>((truncate_to(bits, width) ^ sign) - sign);
}

}  // namespace

Value Parser::evaluate(uint32_t id, bool at_launch, int depth) {
  if (depth > kMaxConstantDepth) return {};
  std::unordered_map<uint32_t, Value>& memo = evaluated_[at_launch ? 1 : 0];
  if (auto known = memo.find(id); known != memo.end()) return known->second;
  Value value;
  auto it = constants_.find(id);
  uint32_t width = 0;
  if (it != constants_.end() && it->second.constituents.empty() &&
      int_type(it->second.type, &width)) {
    const Constant& constant = it->second;
    if (constant.operation != 0) {
      value = evaluate_operation(constant, at_launch, depth);
    } else {
      const uint32_t spec_id = constant.spec ? spec_id_of(id) : kNoSpecId;
      if (at_launch && spec_id != kNoSpecId && launch_ids_.count(spec_id) != 0) {
        value = {};
      } else if (auto given = given_.find(spec_id); spec_id != kNoSpecId && given != given_.end()) {
        value = {true, width == 1 ? uint64_t{(given->second & 0xFFFFFFFFu) != 0} : given->second};
      } else {
        value = {true, constant.value};
      }
    }
    value.bits = truncate_to(value.bits, width);
  }
  memo[id] = value;
  return value;
}

Value Parser::evaluate_operation(const Constant& constant, bool at_launch, int depth) {
  const std::vector<uint32_t>& o = constant.operands;
  uint32_t width = 0;
  if (!int_type(constant.type, &width)) return {};
  if (constant.operation == kOpCompositeExtract) {
    // A component of a composite constant (glslc reads gl_WorkGroupSize.x this way).
    if (o.size() < 2) return {};
    uint32_t id = o[0];
    for (size_t i = 1; i < o.size(); ++i) {
      auto composite = constants_.find(id);
      if (composite == constants_.end() || o[i] >= composite->second.constituents.size()) {
        return {};
      }
      id = composite->second.constituents[o[i]];
    }
    return evaluate(id, at_launch, depth + 1);
  }
  const size_t arity = constant.operation == kSelect ? 3
                       : (constant.operation == kUConvert || constant.operation == kSConvert ||
                          constant.operation == kSNegate || constant.operation == kNot ||
                          constant.operation == kLogicalNot)
                           ? 1
                           : 2;
  if (o.size() != arity) return {};
  Value in[3];
  uint32_t in_width[3] = {0, 0, 0};
  for (size_t i = 0; i < arity; ++i) {
    in[i] = evaluate(o[i], at_launch, depth + 1);
    if (!in[i].known) return {};
    auto operand = constants_.find(o[i]);
    if (operand == constants_.end() || !int_type(operand->second.type, &in_width[i])) {
      return {};
    }
  }
  const uint64_t a = in[0].bits;
  const uint64_t b = arity > 1 ? in[1].bits : 0;
  const int64_t sa = sign_extend(a, in_width[0]);
  const int64_t sb = arity > 1 ? sign_extend(b, in_width[1]) : 0;
  auto known = [](uint64_t bits) { return Value{true, bits}; };
  switch (constant.operation) {
    case kUConvert:
      return known(a);
    case kSConvert:
      return known(static_cast<uint64_t>(sa));
    case kSNegate:
      return known(uint64_t{0} - a);
    case kNot:
      return known(~a);
    case kIAdd:
      return known(a + b);
    case kISub:
      return known(a - b);
    case kIMul:
      return known(a * b);
    case kUDiv:
      return b == 0 ? Value{} : known(a / b);
    case kUMod:
      return b == 0 ? Value{} : known(a % b);
    case kSDiv:
    case kSRem:
    case kSMod: {
      // Division by zero, and the one quotient that overflows, are undefined in SPIR-V.
      if (sb == 0 || (sb == -1 && sa == INT64_MIN)) return {};
      if (constant.operation == kSDiv) return known(static_cast<uint64_t>(sa / sb));
      int64_t r = sa % sb;
      if (constant.operation == kSMod && r != 0 && ((r < 0) != (sb < 0))) r += sb;
      return known(static_cast<uint64_t>(r));
    }
    case kShiftRightLogical:
    case kShiftRightArithmetic:
    case kShiftLeftLogical:
      if (b >= in_width[0]) return {};
      if (constant.operation == kShiftLeftLogical) return known(a << b);
      if (constant.operation == kShiftRightLogical) return known(a >> b);
      return known(static_cast<uint64_t>(sa >> b));
    case kBitwiseOr:
    case kLogicalOr:
      return known(a | b);
    case kBitwiseXor:
      return known(a ^ b);
    case kBitwiseAnd:
    case kLogicalAnd:
      return known(a & b);
    case kLogicalNot:
      return known(a == 0);
    case kLogicalEqual:
    case kIEqual:
      return known(a == b);
    case kLogicalNotEqual:
    case kINotEqual:
      return known(a != b);
    case kUGreaterThan:
      return known(a > b);
    case kUGreaterThanEqual:
      return known(a >= b);
    case kULessThan:
      return known(a < b);
    case kULessThanEqual:
      return known(a <= b);
    case kSGreaterThan:
      return known(sa > sb);
    case kSGreaterThanEqual:
      return known(sa >= sb);
    case kSLessThan:
      return known(sa < sb);
    case kSLessThanEqual:
      return known(sa <= sb);
    case kSelect:
      return in[0].bits != 0 ? in[1] : in[2];
    default:
      return {};  // floating point, vectors: not needed for sizes
  }
}

bool Parser::resolve_block(const std::vector<uint32_t>& ids, ReflectedEntryPoint* entry) {
  if (ids.size() != 3) return fail("a workgroup size needs three components");
  for (int d = 0; d < 3; ++d) {
    auto it = constants_.find(ids[d]);
    if (it == constants_.end() || !it->second.constituents.empty()) {
      return fail(fmt::format("workgroup size component %{} is not a scalar constant", ids[d]));
    }
    const Value value = evaluate(ids[d], /*at_launch=*/false, 0);
    if (!value.known) {
      return fail(fmt::format("workgroup size component %{} cannot be evaluated", ids[d]));
    }
    entry->block[d] = static_cast<uint32_t>(value.bits);
    // A bare specialization constant left without a value at load is the launch's to set.
    const uint32_t spec = spec_id_of(ids[d]);
    const bool bare = it->second.spec && it->second.operation == 0;
    if (bare && spec != kNoSpecId && given_.count(spec) == 0) {
      entry->block_spec_id[d] = spec;
      launch_ids_.insert(spec);
    }
  }
  entry->block_declared = true;
  return true;
}

}  // namespace hal::vulkan::spirv
