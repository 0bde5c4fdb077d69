// Module loading (IR sniffing, option checks) and function lookup.
#include "common/api_guard.h"
#include "common/ir_sniff.h"
#include "common/registry.h"

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

using namespace hal;

namespace {

constexpr uint32_t kKnownModuleFlags = HAL_MODULE_SHARED_BYTES_CONSTANT;

// A module's options as the driver receives them (hal_driver_module_options points into it).
struct ParsedOptions {
  std::vector<hal_driver_specialization> specializations;
  bool shared_bytes_constant = false;
  uint32_t shared_bytes_constant_id = 0;
};

hal_status read_options(const hal_module_options* options, hal_ir* declared, ParsedOptions* out) {
  *declared = HAL_IR_AUTO;
  if (options == nullptr) return HAL_SUCCESS;
  HAL_RETURN_IF_ERROR(
      check_struct_size(options->struct_size, sizeof(hal_module_options), "hal_module_options"));
  switch (options->ir) {
    case HAL_IR_AUTO:
    case HAL_IR_PTX:
    case HAL_IR_SPIRV:
    case HAL_IR_CUBIN:
    case HAL_IR_FATBIN:
    case HAL_IR_BUILTIN:
      *declared = options->ir;
      break;
    default:
      return failf(HAL_ERROR_INVALID_ARGUMENT,
                   "options.ir is {}, not one of HAL_IR_AUTO, HAL_IR_PTX, HAL_IR_SPIRV, "
                   "HAL_IR_CUBIN, HAL_IR_FATBIN, HAL_IR_BUILTIN",
                   static_cast<int>(options->ir));
  }
  HAL_REQUIRE_ARG((options->flags & ~kKnownModuleFlags) == 0,
                  "options.flags has unknown bits {:#x}", options->flags & ~kKnownModuleFlags);
  HAL_REQUIRE_ARG(options->specialization_count == 0 || options->specializations != nullptr,
                  "options.specializations is NULL with specialization_count {}",
                  options->specialization_count);
  std::set<uint32_t> ids;
  for (uint32_t i = 0; i < options->specialization_count; ++i) {
    const hal_specialization& spec = options->specializations[i];
    HAL_REQUIRE_ARG(spec.size == 1 || spec.size == 2 || spec.size == 4 || spec.size == 8,
                    "specialization {} (id {}) has size {}; use 1, 2, 4 or 8 bytes", i, spec.id,
                    spec.size);
    HAL_REQUIRE_ARG(spec.data != nullptr, "specialization {} (id {}) has NULL data", i, spec.id);
    HAL_REQUIRE_ARG(ids.insert(spec.id).second, "specialization id {} is given twice", spec.id);
    hal_driver_specialization s{};
    s.id = spec.id;
    s.size = spec.size;
    std::memcpy(&s.value, spec.data, spec.size);
    out->specializations.push_back(s);
  }
  if (options->flags & HAL_MODULE_SHARED_BYTES_CONSTANT) {
    HAL_REQUIRE_ARG(ids.count(options->shared_bytes_constant_id) == 0,
                    "specialization id {} is both given a value and named as the shared-bytes "
                    "constant, which hal_launch sets",
                    options->shared_bytes_constant_id);
    out->shared_bytes_constant = true;
    out->shared_bytes_constant_id = options->shared_bytes_constant_id;
  }
  return HAL_SUCCESS;
}

// The core's copy of a function the driver describes, after checking the description: a
// driver's mistake here would otherwise become wrong launch checks.
hal_status read_function(const DeviceObject& dev, const hal_driver_function_info* fn,
                         uint32_t index, FunctionDesc* out) {
  const auto bug = [&](std::string what) {
    return failf(HAL_ERROR_INTERNAL,
                 "the driver of device {} ({}) describes function {} wrongly: "
                 "{}. Report it to the driver's authors",
                 dev.label, dev.driver->origin, index, what);
  };
  if (fn == nullptr || fn->name == nullptr || fn->name[0] == '\0') return bug("no name");
  if (fn->param_count > 0 && fn->params == nullptr) return bug("NULL parameter list");
  out->name = fn->name;
  out->params_known = fn->params_known != 0;
  out->params.resize(fn->params_known ? fn->param_count : 0);
  for (size_t p = 0; p < out->params.size(); ++p) {
    const hal_driver_param& in = fn->params[p];
    if (in.kind != HAL_PARAM_VALUE && in.kind != HAL_PARAM_POINTER) {
      return bug(fmt::format("parameter {} has kind {}", p, static_cast<int>(in.kind)));
    }
    if (in.kind == HAL_PARAM_POINTER && in.size != sizeof(hal_deviceptr)) {
      return bug(fmt::format("pointer parameter {} has size {}", p, in.size));
    }
    ParamInfo& param = out->params[p];
    param.kind = in.kind;
    param.size = in.size;
    param.alignment = in.alignment;
    param.nullable = in.nullable != 0;
    param.type = in.type;
  }
  for (int i = 0; i < 3; ++i) out->block[i] = fn->block[i];
  out->static_shared_bytes = fn->static_shared_bytes;
  out->max_threads_per_block = fn->max_threads_per_block;
  out->dynamic_shared = fn->dynamic_shared != 0;
  out->shared_bytes_required = fn->shared_bytes_required != 0;
  if (dev.driver->table.interface_version >= 2 && fn->unavailable != nullptr) {
    out->unavailable = fn->unavailable;
    if (out->unavailable.empty()) return bug("an empty reason why it is unavailable");
  }
  if (dev.driver->table.interface_version >= 3 && fn->param_min_bytes != nullptr) {
    for (size_t p = 0; p < out->params.size(); ++p) {
      const uint64_t bytes = fn->param_min_bytes[p];
      if (bytes != 0 && out->params[p].kind != HAL_PARAM_POINTER) {
        return bug(fmt::format("value parameter {} has {} minimum bytes", p, bytes));
      }
      out->params[p].min_bytes = bytes;
    }
  }
  return HAL_SUCCESS;
}

hal_status load(hal_device device, const void* blob, size_t size, const hal_module_options* options,
                hal_module* module) {
  auto dev = lookup_device(device);
  if (!dev) return HAL_ERROR_INVALID_HANDLE;
  HAL_REQUIRE_ARG(blob != nullptr, "blob is NULL");
  HAL_REQUIRE_ARG(size > 0, "size is 0; pass the blob's length in bytes");
  HAL_REQUIRE_ARG(module != nullptr, "module is NULL");
  hal_ir declared = HAL_IR_AUTO;
  ParsedOptions parsed;
  HAL_RETURN_IF_ERROR(read_options(options, &declared, &parsed));
  HAL_RETURN_IF_ERROR(check_not_lost(*dev));

  const auto* bytes = static_cast<const uint8_t*>(blob);
  hal_ir ir = HAL_IR_AUTO;
  if (hal_status s = sniff_ir(bytes, size, &ir); s != HAL_SUCCESS) {
    if (declared == HAL_IR_AUTO) return s;
    return failf(s, "declared {}, but {}", ir_name(declared), pending_error());
  }
  if (declared != HAL_IR_AUTO && declared != ir) {
    return failf(HAL_ERROR_INVALID_IR, "options.ir declares {}, but the blob is {}",
                 ir_name(declared), ir_name(ir));
  }
  const hal_device_info& info = dev->info;
  if ((info.ir_mask & ir) == 0) {
    return failf(HAL_ERROR_NOT_SUPPORTED,
                 "device {} accepts {}; this blob is {}. Pick a device that accepts it "
                 "(hal-info lists each device's IRs)",
                 dev->label, ir_mask_names(info.ir_mask), ir_name(ir));
  }
  if (ir != HAL_IR_SPIRV && (!parsed.specializations.empty() || parsed.shared_bytes_constant)) {
    return failf(HAL_ERROR_NOT_SUPPORTED,
                 "{} has no specialization constants; they apply to SPIR-V only", ir_name(ir));
  }
  hal_driver_module_options driver_options{};
  driver_options.specializations = parsed.specializations.data();
  driver_options.specialization_count = static_cast<uint32_t>(parsed.specializations.size());
  driver_options.shared_bytes_constant = parsed.shared_bytes_constant ? 1 : 0;
  driver_options.shared_bytes_constant_id = parsed.shared_bytes_constant_id;
  auto object = std::make_shared<ModuleObject>();
  object->device = dev.get();
  uint32_t function_count = 0;
  HAL_RETURN_IF_ERROR(driver_status(
      *dev, dev->driver->table.module_load(dev->impl, ir, bytes, size, &driver_options,
                                           &object->impl, &function_count)));
  // From here on the module object unloads the driver's module if anything fails.
  object->functions.resize(function_count);
  for (uint32_t i = 0; i < function_count; ++i) {
    const hal_driver_function_info* fn = nullptr;
    HAL_RETURN_IF_ERROR(driver_status(*dev, dev->driver->table.module_function(
                                                object->impl, i, &object->functions[i].impl, &fn)));
    HAL_RETURN_IF_ERROR(read_function(*dev, fn, i, &object->functions[i].desc));
  }
  *module = to_handle<hal_module>(register_handle(object));
  return HAL_SUCCESS;
}

std::shared_ptr<FunctionObject> lookup_function(hal_function function) {
  return find_as<FunctionObject>(function, HandleKind::kFunction, "function");
}

}  // namespace

extern "C" {

HAL_API hal_status hal_module_load(hal_device device, const void* blob, size_t size,
                                   const hal_module_options* options, hal_module* module) {
  return guarded("hal_module_load",
                 [&]() -> hal_status { return load(device, blob, size, options, module); });
}

HAL_API hal_status hal_module_load_file(hal_device device, const char* path,
                                        const hal_module_options* options, hal_module* module) {
  return guarded("hal_module_load_file", [&]() -> hal_status {
    if (!lookup_device(device)) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(path != nullptr, "path is NULL");
    HAL_REQUIRE_ARG(module != nullptr, "module is NULL");
    std::FILE* file = std::fopen(path, "rb");
    if (file == nullptr) {
      return failf(HAL_ERROR_NOT_FOUND, "cannot open '{}': {}", path, std::strerror(errno));
    }
    std::vector<uint8_t> data;
    uint8_t chunk[1 << 16];
    size_t n = 0;
    while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0) {
      data.insert(data.end(), chunk, chunk + n);
    }
    const bool failed = std::ferror(file) != 0;
    const int error = errno;
    std::fclose(file);
    if (failed) {
      return failf(HAL_ERROR_NOT_FOUND, "cannot read '{}': {}", path, std::strerror(error));
    }
    if (data.empty()) return failf(HAL_ERROR_INVALID_IR, "'{}' is empty", path);
    if (hal_status s = load(device, data.data(), data.size(), options, module); s != HAL_SUCCESS) {
      return failf(s, "{}: {}", path, pending_error());
    }
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_module_unload(hal_module module) {
  return guarded("hal_module_unload", [&]() -> hal_status {
    auto object = std::static_pointer_cast<ModuleObject>(
        unregister_handle(reinterpret_cast<uintptr_t>(module), HandleKind::kModule, "module"));
    if (!object) return HAL_ERROR_INVALID_HANDLE;
    std::lock_guard lock(object->mutex);
    object->unloaded = true;
    for (const auto& [name, handle] : object->function_handles) {
      unregister_handle(handle, HandleKind::kFunction, "function");
    }
    object->function_handles.clear();
    return HAL_SUCCESS;  // the driver's module goes when the last in-flight call releases it
  });
}

HAL_API hal_status hal_module_get_function(hal_module module, const char* name,
                                           hal_function* function) {
  return guarded("hal_module_get_function", [&]() -> hal_status {
    auto m = find_as<ModuleObject>(module, HandleKind::kModule, "module");
    if (!m) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(name != nullptr, "name is NULL");
    HAL_REQUIRE_ARG(function != nullptr, "function is NULL");
    std::lock_guard lock(m->mutex);
    if (m->unloaded) return fail(HAL_ERROR_INVALID_HANDLE, "the module was unloaded");
    if (auto it = m->function_handles.find(name); it != m->function_handles.end()) {
      *function = to_handle<hal_function>(it->second);
      return HAL_SUCCESS;
    }
    std::string names;
    std::string mangled;  // a C++ name that holds the one asked for, if any
    for (const FunctionEntry& entry : m->functions) {
      const FunctionDesc* f = &entry.desc;
      if (f->name == name) {
        if (!f->unavailable.empty()) {
          return failf(HAL_ERROR_NOT_SUPPORTED, "'{}' cannot run on device {}: {}", name,
                       m->device->label, f->unavailable);
        }
        auto object = std::make_shared<FunctionObject>();
        object->module = m;
        object->entry = &entry;
        const uint64_t handle = register_handle(object);
        m->function_handles.emplace(name, handle);
        *function = to_handle<hal_function>(handle);
        return HAL_SUCCESS;
      }
      names +=
          (names.empty() ? "" : ", ") + f->name + (f->unavailable.empty() ? "" : " (unavailable)");
      if (f->name.rfind("_Z", 0) == 0 && f->name.find(name) != std::string::npos) {
        mangled = f->name;
      }
    }
    std::string hint;
    if (m->functions.size() == 1 && m->functions[0].desc.name == "main") {
      hint =
          ". glslc names every entry point \"main\": look it up as \"main\", or rename it with "
          "hal-spirv-entry <in.spv> <out.spv> <name> so that one name serves both IRs";
    } else if (!mangled.empty()) {
      hint = fmt::format(
          ". '{}' is a C++ (mangled) name: declare the CUDA kernel extern \"C\" to keep its "
          "plain name, or look up '{}'",
          mangled, mangled);
    }
    return failf(HAL_ERROR_NOT_FOUND, "the module has no entry point '{}'; it has: {}{}", name,
                 names.empty() ? "none" : names, hint);
  });
}

HAL_API hal_status hal_function_get_info(hal_function function, hal_function_info* info) {
  return guarded("hal_function_get_info", [&]() -> hal_status {
    auto f = lookup_function(function);
    if (!f) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(info != nullptr, "info is NULL");
    HAL_RETURN_IF_ERROR(
        check_struct_size(info->struct_size, sizeof(hal_function_info), "hal_function_info"));
    const FunctionDesc& d = f->entry->desc;
    hal_function_info out{};
    out.struct_size = sizeof(out);
    fmt::format_to_n(out.name, sizeof(out.name) - 1, "{}", d.name);
    out.param_count =
        d.params_known ? static_cast<uint32_t>(d.params.size()) : HAL_PARAM_COUNT_UNKNOWN;
    const bool fixed = d.block[0] != 0 && d.block[1] != 0 && d.block[2] != 0;
    for (int i = 0; i < 3; ++i) out.block[i] = fixed ? d.block[i] : 0;
    out.static_shared_bytes = d.static_shared_bytes;
    out.max_threads_per_block = max_threads_per_block(d, f->module->device->info);
    copy_out(out, info);
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_function_get_param(hal_function function, uint32_t index,
                                          hal_param_info* param) {
  return guarded("hal_function_get_param", [&]() -> hal_status {
    auto f = lookup_function(function);
    if (!f) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(param != nullptr, "param is NULL");
    // The first published hal_param_info ended before |type| (0.3.0).
    HAL_RETURN_IF_ERROR(
        check_struct_size(param->struct_size, offsetof(hal_param_info, type), "hal_param_info"));
    const FunctionDesc& d = f->entry->desc;
    if (!d.params_known) {
      return failf(HAL_ERROR_NOT_FOUND,
                   "the parameter list of '{}' is unknown (its IR does not "
                   "describe it)",
                   d.name);
    }
    if (index >= d.params.size()) {
      return failf(HAL_ERROR_NOT_FOUND, "'{}' has {} parameter(s); index {} is beyond them", d.name,
                   d.params.size(), index);
    }
    hal_param_info out{};
    out.struct_size = sizeof(out);
    out.kind = d.params[index].kind;
    out.size = d.params[index].size;
    out.alignment = d.params[index].alignment;
    out.type = d.params[index].type;
    copy_out(out, param);
    return HAL_SUCCESS;
  });
}

}  // extern "C"

namespace hal {

ModuleObject::~ModuleObject() {
  if (impl != nullptr) device->driver->table.module_unload(impl);
}

}  // namespace hal
