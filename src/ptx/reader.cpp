#include "ptx/reader.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace hal::ptx {
namespace {

// A scalar parameter's type as hal_param_info reports it; packed pairs (f16x2), tf32 and fp8
// are bit patterns to the caller, not numbers it could convert.
ParamType value_type(const ir::Variable& variable, bool pointer) {
  if (pointer || variable.count != 1 || variable.vector != 1) return ParamType::kUnknown;
  switch (variable.type) {
    case ir::Type::kF16:
    case ir::Type::kBF16:
    case ir::Type::kF32:
    case ir::Type::kF64:
      return ParamType::kFloat;
    default:
      break;
  }
  if (ir::is_signed(variable.type) || ir::is_unsigned(variable.type)) return ParamType::kInteger;
  return ParamType::kUnknown;
}

bool is_64bit_integer(ir::Type type) {
  return type == ir::Type::kU64 || type == ir::Type::kS64 || type == ir::Type::kB64;
}

// ===========================================================================================
// Demangled signatures
// ===========================================================================================

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Whether one demangled parameter type ("float const* restrict", "unsigned long") is a pointer.
bool is_pointer_type(std::string_view type) {
  static constexpr std::string_view kQualifiers[] = {" const", " volatile", " restrict",
                                                     " __restrict__", " __restrict"};
  bool stripped = true;
  while (stripped) {
    stripped = false;
    type = trim(type);
    for (std::string_view qualifier : kQualifiers) {
      if (ends_with(type, qualifier)) {
        type.remove_suffix(qualifier.size());
        stripped = true;
      }
    }
  }
  if (ends_with(type, "*")) return true;
  return ends_with(type, ")") && type.find("(*") != std::string_view::npos;  // function pointer
}

// Splits the parameter list of a demangled function signature; false when it cannot.
bool split_signature(std::string_view signature, std::vector<std::string_view>* params) {
  signature = trim(signature);
  if (!ends_with(signature, ")")) return false;
  size_t depth = 0;
  size_t open = std::string_view::npos;
  for (size_t i = signature.size(); i-- > 0;) {
    const char c = signature[i];
    if (c == ')') ++depth;
    if (c == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos) return false;
  const std::string_view list = trim(signature.substr(open + 1, signature.size() - open - 2));
  if (list.empty() || list == "void") return true;
  size_t nesting = 0;
  size_t start = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    if (c == '(' || c == '<' || c == '[') ++nesting;
    if ((c == ')' || c == '>' || c == ']') && nesting > 0) --nesting;
    if (c == ',' && nesting == 0) {
      params->push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  params->push_back(list.substr(start));
  return true;
}

}  // namespace

bool parse(std::string_view text, Module* out, std::string* error) {
  *out = Module{};
  ir::Module module;
  ir::ParseError parse_error;
  ir::ParseOptions options;
  options.bodies = false;
  if (!ir::parse(text.data(), text.size(), options, &module, &parse_error)) {
    *error = "line " + std::to_string(parse_error.line) + ": " + parse_error.message;
    return false;
  }
  out->version_major = module.version_major;
  out->version_minor = module.version_minor;
  out->target = std::move(module.target);
  out->target_sm = module.target_sm;
  out->address_size = module.address_size;
  // The PTX ISA's limit on an entry's parameter space, which every driver's compiler enforces:
  // 4352 bytes, or 32764 from PTX ISA 8.1 on sm_70 and later. Checked here so that a kernel
  // hal's own devices would run is refused as the CUDA driver refuses it.
  const bool large_params =
      (module.version_major > 8 || (module.version_major == 8 && module.version_minor >= 1)) &&
      module.target_sm >= 70;
  const uint64_t param_limit = large_params ? 32764 : 4352;
  for (ir::Function& function : module.functions) {
    if (!function.is_entry || !function.has_body) continue;  // nothing to launch
    uint64_t param_bytes = 0;
    for (const ir::Variable& variable : function.params) {
      const uint64_t align = std::max<uint64_t>(variable.alignment(), 1);
      param_bytes = (param_bytes + align - 1) / align * align + variable.size();
    }
    if (param_bytes > param_limit) {
      *error = "line " + std::to_string(function.line) + ": the parameters of entry '" +
               function.name + "' take " + std::to_string(param_bytes) + " bytes, more than the " +
               std::to_string(param_limit) + " the PTX ISA allows" +
               (large_params ? "" : " (32764 from PTX ISA 8.1 with .target sm_70 or later)") +
               ". Pass large data through a pointer";
      return false;
    }
    Entry entry;
    entry.name = std::move(function.name);
    std::vector<bool> candidates;
    for (ir::Variable& variable : function.params) {
      // The front end capped each parameter and the entry's layout at kMaxParamBytes.
      const bool array = variable.count != 1;
      const uint32_t element = ir::type_size(variable.type) * variable.vector;
      // A pointer argument is a 64-bit hal_deviceptr; a .ptr on a narrower type (32-bit PTX)
      // is marshalled, and so checked, as the value it is.
      const bool pointer = variable.is_ptr && element == 8 && !array;
      Param param;
      param.name = std::move(variable.name);
      param.kind = pointer ? ParamKind::kPointer : ParamKind::kValue;
      param.size = static_cast<uint32_t>(variable.size());
      param.alignment = variable.alignment();
      if (variable.ptr_align > 1) param.pointee_alignment = variable.ptr_align;
      param.type = value_type(variable, pointer);
      candidates.push_back(!pointer && !array && variable.vector == 1 &&
                           is_64bit_integer(variable.type));
      entry.params.push_back(std::move(param));
    }
    const std::vector<bool> pointers = classify_params(entry.name, candidates);
    for (size_t i = 0; i < entry.params.size(); ++i) {
      if (pointers[i]) {
        entry.params[i].kind = ParamKind::kPointer;
        entry.params[i].type = ParamType::kUnknown;
      }
    }
    for (int i = 0; i < 3; ++i) entry.reqntid[i] = function.reqntid[i];
    if (function.maxntid[0] != 0) {
      const uint64_t threads =
          uint64_t{function.maxntid[0]} * function.maxntid[1] * function.maxntid[2];
      entry.maxntid = static_cast<uint32_t>(threads > (1u << 20) ? (1u << 20) : threads);
    }
    out->entries.push_back(std::move(entry));
  }
  return true;
}

std::vector<bool> classify_params(std::string_view mangled_name,
                                  const std::vector<bool>& is_64bit_integer) {
  std::vector<bool> pointers = is_64bit_integer;
  // Only mangled C++ names carry types; the cap keeps the demangler's work small.
  constexpr size_t kMaxDemangledName = 1024;
  if (mangled_name.size() < 3 || mangled_name.substr(0, 2) != "_Z" ||
      mangled_name.size() > kMaxDemangledName) {
    return pointers;
  }
  int status = 0;
  const std::string name(mangled_name);
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || demangled == nullptr) return pointers;
  std::vector<std::string_view> params;
  if (!split_signature(demangled.get(), &params) || params.size() != pointers.size()) {
    return pointers;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (pointers[i]) pointers[i] = is_pointer_type(params[i]);
  }
  return pointers;
}

}  // namespace hal::ptx
