#include "vulkan/cooperative_matrix.h"

#include "common/error.h"

#include <fmt/format.h>

#include <algorithm>

namespace hal::vulkan {
namespace {

namespace khr = khr_cooperative_matrix;

constexpr uint32_t kNoComponent = 0xFFFFFFFFu;

// Names by VkComponentTypeKHR value (ComponentType), by VkScopeKHR value, by SPIR-V use.
constexpr const char* kComponentNames[] = {"float16", "float32", "float64", "int8",
                                           "int16",   "int32",   "int64",   "uint8",
                                           "uint16",  "uint32",  "uint64"};
constexpr const char* kScopeNames[] = {"cross-device", "device",     "workgroup",
                                       "subgroup",     "invocation", "queue family"};
constexpr const char* kUseNames[] = {"A", "B", "accumulator"};

template <size_t N>
const char* name_in(const char* const (&names)[N], uint32_t value, const char* otherwise) {
  return value < N ? names[value] : otherwise;
}

const char* component_name(uint32_t type) {
  return name_in(kComponentNames, type, "another type");
}
const char* scope_name(uint32_t scope) {
  return name_in(kScopeNames, scope, "an unknown");
}
const char* use_name(uint32_t use) {
  return name_in(kUseNames, use, "of an unknown use");
}

// The VkComponentTypeKHR of a reflected component type, kNoComponent when it has none.
uint32_t component_of(const ReflectedCooperativeMatrix& matrix) {
  using Kind = ReflectedCooperativeMatrix::Kind;
  auto pick = [&](uint32_t w8, uint32_t w16, uint32_t w32, uint32_t w64) {
    switch (matrix.width) {
      case 8:
        return w8;
      case 16:
        return w16;
      case 32:
        return w32;
      case 64:
        return w64;
      default:
        return kNoComponent;
    }
  };
  switch (matrix.kind) {
    case Kind::kFloat:
      return pick(kNoComponent, khr::kFloat16, khr::kFloat32, khr::kFloat64);
    case Kind::kSignedInt:
      return pick(khr::kSInt8, khr::kSInt16, khr::kSInt32, khr::kSInt64);
    case Kind::kUnsignedInt:
      return pick(khr::kUInt8, khr::kUInt16, khr::kUInt32, khr::kUInt64);
    case Kind::kOther:
      return kNoComponent;
  }
  return kNoComponent;
}

// A type is valid when it is one of the four matrices of some configuration at its scope: A
// (M x K), B (K x N), C or the result (M x N), each with its component type. As in Vulkan's rule
// for the type itself, its Use does not narrow this (an accumulator shaped like A is valid).
bool matches(const ReflectedCooperativeMatrix& matrix, uint32_t component,
             const CooperativeMatrixShape& shape) {
  if (matrix.scope != shape.scope) return false;
  auto is = [&](uint32_t rows, uint32_t columns, uint32_t type) {
    return matrix.rows == rows && matrix.columns == columns && component == type;
  };
  return is(shape.m, shape.k, shape.a) || is(shape.k, shape.n, shape.b) ||
         is(shape.m, shape.n, shape.c) || is(shape.m, shape.n, shape.result);
}

std::string describe_list(const std::vector<CooperativeMatrixShape>& shapes) {
  if (shapes.empty()) return "none";
  std::string list;
  for (const CooperativeMatrixShape& shape : shapes) {
    if (!list.empty()) list += ", ";
    list += describe(shape);
  }
  return list;
}

}  // namespace

std::vector<CooperativeMatrixShape> query_cooperative_matrix_shapes(VkPhysicalDevice physical,
                                                                    khr::GetConfigurations get) {
  std::vector<CooperativeMatrixShape> shapes;
  if (get == nullptr) return shapes;
  uint32_t count = 0;
  if (get(physical, &count, nullptr) != VK_SUCCESS || count == 0) return shapes;
  std::vector<khr::Configuration> configurations(count);
  // VK_INCOMPLETE would mean the list grew between the calls; what was written is still valid.
  const VkResult result = get(physical, &count, configurations.data());
  if (result != VK_SUCCESS && result != VK_INCOMPLETE) return shapes;
  configurations.resize(count);
  for (const khr::Configuration& c : configurations) {
    shapes.push_back(CooperativeMatrixShape{c.MSize, c.NSize, c.KSize, c.AType, c.BType, c.CType,
                                            c.ResultType, c.scope, c.saturatingAccumulation != 0});
  }
  return shapes;
}

std::string describe(const CooperativeMatrixShape& shape) {
  return fmt::format("{}x{}x{} {}*{}+{}={}{} ({})", shape.m, shape.n, shape.k,
                     component_name(shape.a), component_name(shape.b), component_name(shape.c),
                     component_name(shape.result), shape.saturating ? " saturating" : "",
                     scope_name(shape.scope));
}

hal_status check_cooperative_matrices(const ReflectedModule& module,
                                      const std::vector<CooperativeMatrixShape>& shapes) {
  for (const ReflectedCooperativeMatrix& matrix : module.cooperative_matrices) {
    if (!matrix.known) {
      return hal::fail(HAL_ERROR_NOT_SUPPORTED,
                       "a cooperative matrix type of the module has a shape, scope or use that "
                       "depends on a value decided at each launch, so hal cannot check it "
                       "against the device. Give its specialization constants (and the "
                       "workgroup size) a value at load");
    }
    const uint32_t component = component_of(matrix);
    const bool supported = std::any_of(
        shapes.begin(), shapes.end(),
        [&](const CooperativeMatrixShape& shape) { return matches(matrix, component, shape); });
    if (!supported) {
      return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                        "the module uses a {}x{} {} cooperative matrix {} at {} scope, which no "
                        "configuration of the device has (MxNxK A*B+C=result: {}). Use one of "
                        "its shapes, or check hal_device_info.features for "
                        "HAL_FEATURE_COOPERATIVE_MATRIX",
                        matrix.rows, matrix.columns, component_name(component),
                        use_name(matrix.use), scope_name(matrix.scope), describe_list(shapes));
    }
  }
  return HAL_SUCCESS;
}

hal_status check_cooperative_matrix_block(const std::string& entry, const uint32_t block[3],
                                          uint32_t subgroup_size) {
  if (subgroup_size == 0 || block[0] % subgroup_size == 0) return HAL_SUCCESS;
  return hal::failf(HAL_ERROR_INVALID_ARGUMENT,
                    "'{}' uses cooperative matrices at subgroup scope, so its block's x size "
                    "must be a multiple of the device's subgroup size ({}); block {{{},{},{}}} "
                    "is not",
                    entry, subgroup_size, block[0], block[1], block[2]);
}

}  // namespace hal::vulkan
