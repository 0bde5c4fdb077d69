// Modules: loading (cuModuleLoad, cuModuleLoadData, cuModuleLoadDataEx, cuModuleLoadFatBinary),
// unloading, and finding their functions.
#include "ptx_cpu/module.h"

#include "ptx_cpu/context.h"
#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/handles.h"
#include "ptx_cpu/image.h"
#include "ptx_cpu/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace hal::ptx_cpu {

Function::Function(const std::shared_ptr<Module>& module, const ptx_vm::Kernel& kernel)
    : module_(module),
      context_(module->context()),
      program_(module->program()),
      kernel_(kernel),
      info_(ptx_vm::info(kernel)),
      ptx_version_(module->ptx_version()) {
  max_dynamic_shared.store(
      std::max(0, kSharedPerBlock - static_cast<int>(info_.static_shared_bytes)));
}

uint32_t Function::max_threads_per_block() const {
  const uint32_t limit = info_.max_threads_per_block;
  return limit == 0 ? kMaxThreadsPerBlock : std::min<uint32_t>(limit, kMaxThreadsPerBlock);
}

namespace {

std::string version_text(uint32_t version) {
  return fmt::format("{}.{}", version / 10, version % 10);
}

// What the directives of the PTX say that this device refuses before the interpreter sees it.
CUresult check_header(const PtxHeader& header, std::string* error_log) {
  if (header.version == 0) {
    *error_log = "no .version directive: the text is not PTX";
    return CUDA_ERROR_INVALID_PTX;
  }
  if (header.version > kMaxPtxVersion) {
    *error_log = fmt::format(
        "the PTX is ISA {} (.version {}), newer than the {} this driver (CUDA {}.{}) accepts; "
        "generate PTX for ISA {} or older",
        version_text(header.version), version_text(header.version), version_text(kMaxPtxVersion),
        kDriverVersion / 1000, kDriverVersion % 1000 / 10, version_text(kMaxPtxVersion));
    return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  }
  if (header.target.empty()) {
    *error_log = "no .target sm_XX directive";
    return CUDA_ERROR_INVALID_PTX;
  }
  const bool too_new = header.target_sm > kSm;
  const bool other_arch = header.suffix == 'a' && header.target_sm != kSm;
  const bool other_family = header.suffix == 'f' && header.target_sm / 10 != kSm / 10;
  if (too_new || other_arch || other_family) {
    *error_log = fmt::format(
        "the PTX targets {}, which needs compute capability {}.{}{}; this device is sm_{} "
        "(compute capability {}.{}): generate PTX for sm_{} or older",
        header.target, header.target_sm / 10, header.target_sm % 10,
        header.suffix == 'a' ? " exactly" : (header.suffix == 'f' ? " of that family" : ""), kSm,
        kComputeMajor, kComputeMinor, kSm);
    return CUDA_ERROR_INVALID_PTX;
  }
  return CUDA_SUCCESS;
}

CUresult load_status(ptx_vm::LoadStatus status) {
  switch (status) {
    case ptx_vm::LoadStatus::kOk:
    case ptx_vm::LoadStatus::kInvalidPtx:
      return CUDA_ERROR_INVALID_PTX;
    case ptx_vm::LoadStatus::kUnsupportedVersion:
      return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    case ptx_vm::LoadStatus::kOutOfMemory:
      return CUDA_ERROR_OUT_OF_MEMORY;
  }
  return CUDA_ERROR_INVALID_PTX;
}

}  // namespace

CUresult load_module(Context& context, const void* image, std::string* error_log,
                     std::string* info_log, std::shared_ptr<Module>* out) {
  PtxSource source;
  if (CUresult result = find_ptx(image, &source, error_log); result != CUDA_SUCCESS) {
    return fail(result, *error_log);
  }
  const PtxHeader header = scan_ptx_header(source.text);
  if (CUresult result = check_header(header, error_log); result != CUDA_SUCCESS) {
    return fail(result, *error_log);
  }
  ptx_vm::LoadError error;
  const ptx_vm::LoadOptions options{kSm, kMaxPtxVersion};
  std::shared_ptr<const ptx_vm::Program> program =
      ptx_vm::Program::load(source.text.data(), source.text.size(), options, &error);
  if (program == nullptr) {
    *error_log = error.log.empty() ? std::string("the PTX cannot be loaded") : error.log;
    return fail(load_status(error.status), *error_log);
  }
  auto module = std::make_shared<Module>(context, program, header.version);
  std::string names;
  for (size_t i = 0; i < program->kernel_count(); ++i) {
    auto function = std::make_shared<Function>(module, program->kernel(i));
    if (!names.empty()) names += ", ";
    names += function->info().name;
    module->functions.push_back(std::move(function));
  }
  module_handles().add(module);
  for (const std::shared_ptr<Function>& function : module->functions) {
    function_handles().add(function);
  }
  Driver::get()->memory().add_module(context, module.get(), program);
  *info_log =
      fmt::format("loaded {}: PTX ISA {} for {}; {} kernel{}{}{}", source.origin,
                  version_text(header.version), header.target, module->functions.size(),
                  module->functions.size() == 1 ? "" : "s", names.empty() ? "" : ": ", names);
  *out = std::move(module);
  return CUDA_SUCCESS;
}

void unload_module(const std::shared_ptr<Module>& module) {
  for (const std::shared_ptr<Function>& function : module->functions) {
    function_handles().remove(function.get());
  }
  module_handles().remove(module.get());
  Driver::get()->memory().remove_module(module.get());
}

namespace {

// cuModuleLoadDataEx's JIT options that are read or written here; the others (optimisation
// level, register limits, targets, caching, ...) are accepted and have no effect.
struct JitOptions {
  char* error_buffer = nullptr;
  size_t error_size = 0;
  int error_size_index = -1;
  char* info_buffer = nullptr;
  size_t info_size = 0;
  int info_size_index = -1;
  int wall_time_index = -1;
};

CUresult parse_options(unsigned count, const CUjit_option* options, void* const* values,
                       JitOptions* out) {
  if (count > 0 && (options == nullptr || values == nullptr)) {
    return fail(CUDA_ERROR_INVALID_VALUE, "options or optionValues is NULL");
  }
  for (unsigned i = 0; i < count; ++i) {
    const int index = static_cast<int>(i);
    const int option = as_int(options[i]);
    switch (option) {
      case CU_JIT_ERROR_LOG_BUFFER:
        out->error_buffer = static_cast<char*>(values[i]);
        break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        out->error_size = static_cast<size_t>(reinterpret_cast<uintptr_t>(values[i]));
        out->error_size_index = index;
        break;
      case CU_JIT_INFO_LOG_BUFFER:
        out->info_buffer = static_cast<char*>(values[i]);
        break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        out->info_size = static_cast<size_t>(reinterpret_cast<uintptr_t>(values[i]));
        out->info_size_index = index;
        break;
      case CU_JIT_WALL_TIME:
        out->wall_time_index = index;
        break;
      default:
        if (option < 0 || option >= CU_JIT_NUM_OPTIONS) {
          return fail(CUDA_ERROR_INVALID_VALUE, "unknown JIT option " + std::to_string(option));
        }
        break;
    }
  }
  return CUDA_SUCCESS;
}

// As the real driver: the log, cut to the buffer and NUL-terminated; the bytes written (without
// the NUL) replace the size option's value.
void write_log(const std::string& log, char* buffer, size_t size, int size_index, void** values) {
  if (buffer == nullptr || size == 0) return;
  const size_t length = std::min(log.size(), size - 1);
  std::memcpy(buffer, log.data(), length);
  buffer[length] = '\0';
  if (size_index >= 0) values[size_index] = reinterpret_cast<void*>(uintptr_t{length});
}

CUresult load(CUmodule* handle, const void* image, unsigned count, CUjit_option* options,
              void** values) {
  if (handle == nullptr || image == nullptr) {
    return fail(CUDA_ERROR_INVALID_VALUE, "module or image is NULL");
  }
  JitOptions jit;
  if (CUresult result = parse_options(count, options, values, &jit); result != CUDA_SUCCESS) {
    return result;
  }
  Context* context = nullptr;
  if (CUresult result = current_context(&context); result != CUDA_SUCCESS) return result;
  const auto start = std::chrono::steady_clock::now();
  std::string error_log;
  std::string info_log;
  std::shared_ptr<Module> module;
  const CUresult result = load_module(*context, image, &error_log, &info_log, &module);
  write_log(error_log, jit.error_buffer, jit.error_size, jit.error_size_index, values);
  write_log(info_log, jit.info_buffer, jit.info_size, jit.info_size_index, values);
  if (jit.wall_time_index >= 0) {
    const float ms =
        std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count();
    void* slot = nullptr;
    std::memcpy(&slot, &ms, sizeof(ms));  // a float in the option's slot, as documented
    values[jit.wall_time_index] = slot;
  }
  if (result != CUDA_SUCCESS) return result;
  *handle = reinterpret_cast<CUmodule>(module.get());
  return CUDA_SUCCESS;
}

CUresult find_module(CUmodule handle, std::shared_ptr<Module>* out) {
  if (CUresult result = require_init(); result != CUDA_SUCCESS) return result;
  *out = module_handles().find(handle);
  if (*out == nullptr) return fail(CUDA_ERROR_INVALID_HANDLE, "not a loaded module");
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace hal::ptx_cpu

using hal::ptx_cpu::entry;
using hal::ptx_cpu::fail;
using hal::ptx_cpu::Function;
using hal::ptx_cpu::Module;

PTXCPU_ENTRY CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image,
                                                 unsigned int numOptions, CUjit_option* options,
                                                 void** optionValues) {
  return entry(__func__, [&] {
    return hal::ptx_cpu::load(module, image, numOptions, options, optionValues);
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  return entry(__func__, [&] { return hal::ptx_cpu::load(module, image, 0, nullptr, nullptr); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
  return entry(__func__, [&] { return hal::ptx_cpu::load(module, fatCubin, 0, nullptr, nullptr); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* fname) {
  return entry(__func__, [&] {
    if (module == nullptr || fname == nullptr) {
      return fail(CUDA_ERROR_INVALID_VALUE, "module or fname is NULL");
    }
    std::ifstream file(fname, std::ios::binary);
    if (!file) {
      return fail(CUDA_ERROR_FILE_NOT_FOUND, std::string("cannot open '") + fname + "'");
    }
    std::vector<char> image((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    image.push_back('\0');  // PTX text read from a file has no NUL of its own
    return hal::ptx_cpu::load(module, image.data(), 0, nullptr, nullptr);
  });
}

// Returns at once: launches already issued keep the code and the variables they use (module.h).
PTXCPU_ENTRY CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  return entry(__func__, [&] {
    std::shared_ptr<Module> module;
    if (CUresult result = hal::ptx_cpu::find_module(hmod, &module); result != CUDA_SUCCESS) {
      return result;
    }
    hal::ptx_cpu::unload_module(module);
    return module->context().sticky_error();
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod,
                                                  const char* name) {
  return entry(__func__, [&] {
    if (hfunc == nullptr || name == nullptr) {
      return fail(CUDA_ERROR_INVALID_VALUE, "hfunc or name is NULL");
    }
    std::shared_ptr<Module> module;
    if (CUresult result = hal::ptx_cpu::find_module(hmod, &module); result != CUDA_SUCCESS) {
      return result;
    }
    std::string names;
    for (const std::shared_ptr<Function>& function : module->functions) {
      if (function->info().name == name) {
        *hfunc = reinterpret_cast<CUfunction>(function.get());
        return CUDA_SUCCESS;
      }
      names += names.empty() ? "" : ", ";
      names += function->info().name;
    }
    return fail(CUDA_ERROR_NOT_FOUND, std::string("the module has no kernel '") + name +
                                          "' (it has: " + (names.empty() ? "none" : names) + ")");
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int* count, CUmodule mod) {
  return entry(__func__, [&] {
    if (count == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "count is NULL");
    std::shared_ptr<Module> module;
    if (CUresult result = hal::ptx_cpu::find_module(mod, &module); result != CUDA_SUCCESS) {
      return result;
    }
    *count = static_cast<unsigned int>(module->functions.size());
    return CUDA_SUCCESS;
  });
}

// Fills at most numFunctions handles, in the module's order.
PTXCPU_ENTRY CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction* functions,
                                                         unsigned int numFunctions, CUmodule mod) {
  return entry(__func__, [&] {
    if (functions == nullptr && numFunctions > 0) {
      return fail(CUDA_ERROR_INVALID_VALUE, "functions is NULL");
    }
    std::shared_ptr<Module> module;
    if (CUresult result = hal::ptx_cpu::find_module(mod, &module); result != CUDA_SUCCESS) {
      return result;
    }
    const size_t count = std::min<size_t>(numFunctions, module->functions.size());
    for (size_t i = 0; i < count; ++i) {
      functions[i] = reinterpret_cast<CUfunction>(module->functions[i].get());
    }
    return CUDA_SUCCESS;
  });
}
