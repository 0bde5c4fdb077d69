// The PTX-to-SPIR-V translator's fuzz entry (fuzz_entries.h). The translator promises SPIR-V that
// passes SPIRV-Tools' validation for Vulkan 1.2 (translate.h), so any invalid module is its bug;
// SPIRV-Tools is used directly, as the translator itself knows nothing of Vulkan's API.
#include "fuzz_entries.h"

#include "ptx/ir.h"
#include "ptx_spirv/translate.h"

#include <spirv-tools/libspirv.hpp>
#include <spirv/unified1/spirv.hpp11>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

namespace hal_fuzz {
namespace {

namespace ir = hal::ptx::ir;
using hal::ptx_spirv::Failure;
using hal::ptx_spirv::KernelInfo;
using hal::ptx_spirv::Target;
using hal::ptx_spirv::Translation;

constexpr uint32_t kSpirvMagic = 0x07230203;

struct Device {
  std::string name;
  Target target;
};

// Every feature, and limits as large as common desktop devices' (twice Vulkan's minimum and more).
Target everything() {
  Target t;
  t.float64 = t.int16 = t.int8 = t.float16 = true;
  t.storage_buffer_8bit = t.storage_buffer_16bit = true;
  t.int64_atomics = t.float32_atomic_add = true;
  t.max_push_constant_bytes = 256;
  t.max_shared_bytes = 65536;
  t.warp32 = true;
  return t;
}

// FNV-1a: any change to the bytes picks another device.
uint64_t hash(const uint8_t* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3u;
  return h;
}

// Features from the low 8 bits; the limits from tables that hold the edges: Vulkan's minimum
// (128 bytes of push constants, 16 KiB of shared memory) and one word more, common ones, and the
// largest a uint32_t says.
Target from_hash(uint64_t h) {
  static constexpr uint32_t kPush[8] = {128, 132, 160, 252, 256, 512, 4096, UINT32_MAX};
  static constexpr uint32_t kShared[8] = {16384, 16388,    32768,    49152,
                                          65536, 1u << 20, 1u << 30, UINT32_MAX};
  Target t;
  t.float64 = (h & 1) != 0;
  t.int16 = (h & 2) != 0;
  t.int8 = (h & 4) != 0;
  t.float16 = (h & 8) != 0;
  t.storage_buffer_8bit = (h & 16) != 0;
  t.storage_buffer_16bit = (h & 32) != 0;
  t.int64_atomics = (h & 64) != 0;
  t.float32_atomic_add = (h & 128) != 0;
  t.max_push_constant_bytes = kPush[(h >> 8) & 7];
  t.max_shared_bytes = kShared[(h >> 11) & 7];
  t.warp32 = (h & (1u << 14)) != 0;
  if (!t.warp32) t.no_warp32 = "the device's subgroups are 8 lanes wide";
  return t;
}

// Whether a device with |a| offers everything one with |b| does.
bool covers(const Target& a, const Target& b) {
  const bool features[][2] = {{a.float64, b.float64},
                              {a.int16, b.int16},
                              {a.int8, b.int8},
                              {a.float16, b.float16},
                              {a.storage_buffer_8bit, b.storage_buffer_8bit},
                              {a.storage_buffer_16bit, b.storage_buffer_16bit},
                              {a.int64_atomics, b.int64_atomics},
                              {a.float32_atomic_add, b.float32_atomic_add},
                              {a.warp32, b.warp32}};
  for (const auto& f : features) {
    if (f[1] && !f[0]) return false;
  }
  return a.max_push_constant_bytes >= b.max_push_constant_bytes &&
         a.max_shared_bytes >= b.max_shared_bytes;
}

// "" when SPIRV-Tools validates |words| for Vulkan 1.2, else its first error.
std::string validate(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string message;
  tools.SetMessageConsumer([&message](spv_message_level_t level, const char*,
                                      const spv_position_t& position, const char* text) {
    if (level <= SPV_MSG_ERROR && message.empty()) {
      message = std::string(text != nullptr ? text : "") + " (at word " +
                std::to_string(position.index) + ")";
    }
  });
  if (tools.Validate(words)) return {};
  return message.empty() ? "invalid, no details" : message;
}

// The names of the module's OpEntryPoints, or a description of why they cannot be read.
bool entry_points(const std::vector<uint32_t>& words, std::vector<std::string>* names,
                  std::string* problem) {
  for (size_t at = 5; at < words.size();) {
    const uint32_t count = words[at] >> 16;
    const auto opcode = static_cast<spv::Op>(words[at] & 0xffff);
    if (count == 0 || at + count > words.size()) {
      *problem = "an instruction at word " + std::to_string(at) + " runs past the module";
      return false;
    }
    if (opcode == spv::Op::OpEntryPoint) {
      if (count < 4) {
        *problem = "an OpEntryPoint of " + std::to_string(count) + " words";
        return false;
      }
      if (words[at + 1] != static_cast<uint32_t>(spv::ExecutionModel::GLCompute)) {
        *problem = "an entry point whose execution model is not GLCompute";
        return false;
      }
      std::string name;
      for (size_t w = at + 3; w < at + count; ++w) {
        char bytes[4];
        std::memcpy(bytes, &words[w], 4);
        const size_t length = static_cast<size_t>(std::find(bytes, bytes + 4, '\0') - bytes);
        name.append(bytes, length);
        if (length < 4) break;
      }
      names->push_back(name);
    }
    at += count;
  }
  return true;
}

// The shared variables |function| names in its instructions, wherever declared.
void named_shared(const ir::Module& module, const ir::Function& function, const ir::Operand& o,
                  std::vector<const ir::Variable*>* out) {
  if (o.kind == ir::OperandKind::kSymbol ||
      (o.kind == ir::OperandKind::kAddress && o.base == ir::AddressBase::kSymbol)) {
    const ir::Variable* v = nullptr;
    if (o.symbol.kind == ir::SymbolKind::kModuleVariable &&
        o.symbol.index < module.variables.size()) {
      v = &module.variables[o.symbol.index];
    } else if (o.symbol.kind == ir::SymbolKind::kFunctionVariable &&
               o.symbol.index < function.variables.size()) {
      v = &function.variables[o.symbol.index];
    }
    if (v != nullptr && v->space == ir::Space::kShared) out->push_back(v);
  }
  for (const ir::Operand& e : o.elements) named_shared(module, function, e, out);
}

// "" when |info| accounts for the shared memory |function| names: the static bytes hold each
// static variable, and dynamic memory is declared when an unsized or .extern one is named.
std::string check_shared(const ir::Module& module, const ir::Function& function,
                         const KernelInfo& info) {
  std::vector<const ir::Variable*> named;
  for (const ir::Instruction& ins : function.code) {
    for (const ir::Operand& o : ins.operands) named_shared(module, function, o, &named);
  }
  for (const ir::Variable* v : named) {
    if (v->unsized || v->linkage == ir::Linkage::kExtern) {
      if (!info.dynamic_shared) return "names '" + v->name + "' and declares no dynamic memory";
    } else if (v->size() > info.static_shared_bytes) {
      return "names '" + v->name + "' of " + std::to_string(v->size()) + " bytes, in " +
             std::to_string(info.static_shared_bytes) + " bytes of static shared memory";
    }
  }
  return {};
}

// "" when |info| describes |function| as translate.h promises on |target|.
std::string check_kernel(const ir::Module& module, const Target& target,
                         const ir::Function& function, const KernelInfo& info) {
  if (info.param_offsets.size() != function.params.size()) {
    return "has " + std::to_string(function.params.size()) + " parameters and " +
           std::to_string(info.param_offsets.size()) + " offsets";
  }
  for (size_t p = 0; p < function.params.size(); ++p) {
    const ir::Variable& param = function.params[p];
    const uint64_t offset = info.param_offsets[p];
    if (offset + param.size() > info.param_bytes || offset % param.alignment() != 0) {
      return "places parameter '" + param.name + "' at offset " + std::to_string(offset) +
             ", unaligned or beyond its " + std::to_string(info.param_bytes) + " bytes";
    }
  }
  if (info.params_in_buffer != (info.param_bytes > target.max_push_constant_bytes)) {
    return "has " + std::to_string(info.param_bytes) + " bytes of parameters, " +
           (info.params_in_buffer ? "in a buffer" : "in push constants") + ", and the device " +
           std::to_string(target.max_push_constant_bytes) + " bytes of push constants";
  }
  if (info.static_shared_bytes > target.max_shared_bytes) {
    return "has " + std::to_string(info.static_shared_bytes) +
           " bytes of static shared memory, beyond the device's " +
           std::to_string(target.max_shared_bytes);
  }
  const std::string shared = check_shared(module, function, info);
  if (!shared.empty()) return shared;
  if (!std::equal(std::begin(info.reqntid), std::end(info.reqntid), std::begin(function.reqntid))) {
    return "is described with another .reqntid";
  }
  return {};
}

// "" when |translation| keeps translate.h's promises for |module| on |target|.
std::string check_translation(const ir::Module& module, const Target& target,
                              const Translation& translation) {
  const std::vector<uint32_t>& words = translation.words;
  if (words.size() < 5 || words[0] != kSpirvMagic) return "the words are not a SPIR-V module";
  const std::string invalid = validate(words);
  if (!invalid.empty()) return "SPIR-V validation for Vulkan 1.2 failed: " + invalid;
  if (translation.kernels.empty()) return "translated, and no kernel described";

  // Every kernel is either described or refused with a reason, both lists in module order.
  size_t k = 0, r = 0;
  for (const ir::Function& function : module.functions) {
    if (!function.is_entry || !function.has_body) continue;
    const std::string which = "kernel '" + function.name + "' ";
    if (k < translation.kernels.size() && translation.kernels[k].name == function.name) {
      const std::string problem = check_kernel(module, target, function, translation.kernels[k]);
      if (!problem.empty()) return which + problem;
      ++k;
    } else if (r < translation.refused.size() && translation.refused[r].name == function.name) {
      if (translation.refused[r].reason.empty()) return which + "is refused without a reason";
      ++r;
    } else {
      return which + "is neither described nor refused, in module order";
    }
  }
  if (k != translation.kernels.size() || r != translation.refused.size()) {
    return std::to_string(translation.kernels.size()) + " kernels described and " +
           std::to_string(translation.refused.size()) + " refused, of " + std::to_string(k + r);
  }

  // One entry point per kernel described, of its name.
  std::vector<std::string> names;
  for (const KernelInfo& info : translation.kernels) names.push_back(info.name);
  std::vector<std::string> points;
  std::string problem;
  if (!entry_points(words, &points, &problem)) return problem;
  std::sort(names.begin(), names.end());
  std::sort(points.begin(), points.end());
  if (names != points) {
    return "the module's " + std::to_string(points.size()) + " entry points are not named as its " +
           std::to_string(names.size()) + " kernels";
  }
  return {};
}

}  // namespace

std::string ptx_spirv_one(const uint8_t* data, size_t size) {
  ir::Module module;
  ir::ParseError error;
  if (!ir::parse(reinterpret_cast<const char*>(data), size, ir::ParseOptions{}, &module, &error)) {
    return {};
  }
  const Device devices[] = {{"every feature", everything()},
                            {"no feature", Target{}},
                            {"picked by the input's hash", from_hash(hash(data, size))}};
  // The kernels each device translated, sorted; none where it refused the module.
  std::vector<std::string> translated[3];
  bool malformed[3] = {};
  for (size_t d = 0; d < 3; ++d) {
    const std::string on = "on the device with " + devices[d].name + ": ";
    Translation translation;
    Failure failure;
    if (!hal::ptx_spirv::translate(module, devices[d].target, &translation, &failure)) {
      if (failure.message.empty()) return on + "refused without a message";
      if (failure.kind != Failure::Kind::kNotSupported && failure.kind != Failure::Kind::kInvalid) {
        return on + "refused with an unknown kind";
      }
      malformed[d] = failure.kind == Failure::Kind::kInvalid;
      continue;
    }
    const std::string problem = check_translation(module, devices[d].target, translation);
    if (!problem.empty()) return on + problem;
    for (const KernelInfo& info : translation.kernels) translated[d].push_back(info.name);
    std::sort(translated[d].begin(), translated[d].end());
  }
  // Malformed PTX is exempt: a device without a feature refuses a kernel at its first
  // instruction that needs it, before the translator can see that the instruction is malformed.
  for (size_t a = 0; a < 3; ++a) {
    for (size_t b = 0; b < 3; ++b) {
      if (!malformed[a] && covers(devices[a].target, devices[b].target) &&
          !std::includes(translated[a].begin(), translated[a].end(), translated[b].begin(),
                         translated[b].end())) {
        return "a kernel translated on the device with " + devices[b].name +
               " is refused on the one with " + devices[a].name + ", which offers all it does";
      }
    }
  }
  return {};
}

}  // namespace hal_fuzz
