#include "cuda/cuda_module.h"

#include "common/error.h"
#include "common/log.h"
#include "common/ptx_params.h"
#include "cuda/cuda_status.h"
#include "ptx/reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace hal::cuda {
namespace {

constexpr size_t kJitLogBytes = 32 * 1024;
constexpr size_t kMaxFunctionParams = 4096;  // cuFuncGetParamInfo queries per function

template <typename T>
T read_le(const uint8_t* blob, size_t offset) {
  T value;
  std::memcpy(&value, blob + offset, sizeof(T));  // hosts that run CUDA are little-endian
  return value;
}

// [offset, offset + length) within [0, size), without overflow.
bool inside(uint64_t offset, uint64_t length, size_t size) {
  return offset <= size && length <= size - offset;
}

hal_status check_elf(const uint8_t* blob, size_t size) {
  constexpr size_t kHeaderSize = 64;
  constexpr uint16_t kEmCuda = 190;
  if (size < kHeaderSize || std::memcmp(blob,
                                        "\x7f"
                                        "ELF",
                                        4) != 0) {
    return fail(HAL_ERROR_INVALID_IR, "the cubin is not an ELF file");
  }
  if (blob[4] != 2 || blob[5] != 1) {
    return fail(HAL_ERROR_INVALID_IR, "the cubin is not a 64-bit little-endian ELF file");
  }
  const uint16_t machine = read_le<uint16_t>(blob, 0x12);
  if (machine != kEmCuda) {
    return failf(HAL_ERROR_INVALID_IR, "the ELF file is for machine {}, not CUDA ({})", machine,
                 kEmCuda);
  }
  const uint64_t phoff = read_le<uint64_t>(blob, 0x20);
  const uint64_t shoff = read_le<uint64_t>(blob, 0x28);
  const uint16_t phentsize = read_le<uint16_t>(blob, 0x36);
  const uint16_t phnum = read_le<uint16_t>(blob, 0x38);
  const uint16_t shentsize = read_le<uint16_t>(blob, 0x3a);
  const uint16_t shnum = read_le<uint16_t>(blob, 0x3c);
  if ((shnum != 0 && shentsize < 64) || (phnum != 0 && phentsize < 56) ||
      !inside(shoff, uint64_t{shnum} * shentsize, size) ||
      !inside(phoff, uint64_t{phnum} * phentsize, size)) {
    return failf(HAL_ERROR_INVALID_IR,
                 "the cubin's headers lie outside its {} bytes (truncated file?)", size);
  }
  constexpr uint32_t kShtNobits = 8;
  for (uint32_t i = 0; i < shnum; ++i) {
    const uint8_t* header = blob + shoff + uint64_t{i} * shentsize;
    const uint32_t type = read_le<uint32_t>(header, 4);
    const uint64_t offset = read_le<uint64_t>(header, 0x18);
    const uint64_t length = read_le<uint64_t>(header, 0x20);
    if (type != kShtNobits && !inside(offset, length, size)) {
      return failf(HAL_ERROR_INVALID_IR,
                   "section {} of the cubin lies outside its {} bytes (truncated file?)", i, size);
    }
  }
  for (uint32_t i = 0; i < phnum; ++i) {
    const uint8_t* header = blob + phoff + uint64_t{i} * phentsize;
    const uint64_t offset = read_le<uint64_t>(header, 0x08);
    const uint64_t length = read_le<uint64_t>(header, 0x20);
    if (!inside(offset, length, size)) {
      return failf(HAL_ERROR_INVALID_IR,
                   "segment {} of the cubin lies outside its {} bytes (truncated file?)", i, size);
    }
  }
  return HAL_SUCCESS;
}

hal_status check_fatbin(const uint8_t* blob, size_t size) {
  constexpr uint32_t kMagic = 0xBA55ED50u;
  constexpr size_t kMinHeader = 16;
  if (size < kMinHeader || read_le<uint32_t>(blob, 0) != kMagic) {
    return fail(HAL_ERROR_INVALID_IR, "the fatbin does not start with the fatbin magic");
  }
  const uint16_t header_size = read_le<uint16_t>(blob, 6);
  const uint64_t body_size = read_le<uint64_t>(blob, 8);
  if (header_size < kMinHeader || !inside(header_size, body_size, size)) {
    return failf(HAL_ERROR_INVALID_IR,
                 "the fatbin header describes {} bytes but {} were given (truncated file?)",
                 uint64_t{header_size} + body_size, size);
  }
  return HAL_SUCCESS;
}

// The kernels of a cubin that check_elf accepted: global or weak FUNC symbols marked as CUDA
// entries (STO_CUDA_ENTRY in st_other), named through the symbol table's string table.
hal_status elf_entries(const uint8_t* blob, size_t size, std::vector<std::string>* names) {
  constexpr uint32_t kShtSymtab = 2;
  constexpr size_t kSymbolSize = 24;
  constexpr uint8_t kStoCudaEntry = 0x10;
  constexpr size_t kMaxEntries = 65536;
  const uint64_t shoff = read_le<uint64_t>(blob, 0x28);
  const uint16_t shentsize = read_le<uint16_t>(blob, 0x3a);
  const uint16_t shnum = read_le<uint16_t>(blob, 0x3c);
  const auto section = [&](uint32_t index) { return blob + shoff + uint64_t{index} * shentsize; };
  for (uint32_t i = 0; i < shnum; ++i) {
    const uint8_t* symtab = section(i);
    if (read_le<uint32_t>(symtab, 4) != kShtSymtab) continue;
    const uint64_t offset = read_le<uint64_t>(symtab, 0x18);
    const uint64_t length = read_le<uint64_t>(symtab, 0x20);
    const uint32_t link = read_le<uint32_t>(symtab, 0x28);
    if (link >= shnum) return fail(HAL_ERROR_INVALID_IR, "the cubin's symbol table has no names");
    const uint64_t strings = read_le<uint64_t>(section(link), 0x18);
    const uint64_t strings_size = read_le<uint64_t>(section(link), 0x20);
    if (!inside(strings, strings_size, size)) {
      return fail(HAL_ERROR_INVALID_IR, "the cubin's symbol names lie outside it");
    }
    for (uint64_t at = 0; at + kSymbolSize <= length; at += kSymbolSize) {
      const uint8_t* symbol = blob + offset + at;
      const uint32_t name = read_le<uint32_t>(symbol, 0);
      const uint8_t info = symbol[4];
      const uint8_t other = symbol[5];
      const bool function = (info & 0xf) == 2;
      const bool visible = (info >> 4) == 1 || (info >> 4) == 2;
      if (!function || !visible || (other & kStoCudaEntry) == 0) continue;
      if (name >= strings_size) return fail(HAL_ERROR_INVALID_IR, "a cubin symbol has no name");
      const char* text = reinterpret_cast<const char*>(blob + strings + name);
      const size_t room = static_cast<size_t>(strings_size - name);
      const size_t text_length = strnlen(text, room);
      if (text_length == room) return fail(HAL_ERROR_INVALID_IR, "a cubin symbol name is cut off");
      if (names->size() >= kMaxEntries) return fail(HAL_ERROR_INVALID_IR, "too many cubin entries");
      names->emplace_back(text, text_length);
    }
  }
  return HAL_SUCCESS;
}

std::string log_text(const std::vector<char>& log) {
  std::string text(log.data(), strnlen(log.data(), log.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Alignment of a parameter known only by offset and size: the largest power of two, at most 8,
// that divides the offset and does not exceed the size.
uint32_t guess_alignment(size_t offset, size_t size) {
  uint32_t alignment = 8;
  while (alignment > 1 && (offset % alignment != 0 || alignment > size)) alignment /= 2;
  return alignment;
}

hal_status query_attributes(CudaDevice& device, CudaFunction& function) {
  int max_threads = 0;
  int static_shared = 0;
  const DriverApi& api = device.api();
  if (hal_status status = device.check(
          api.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                 function.handle),
          fmt::format("cuFuncGetAttribute(MAX_THREADS_PER_BLOCK) for '{}'", function.desc.name));
      status != HAL_SUCCESS) {
    return status;
  }
  if (hal_status status = device.check(
          api.cuFuncGetAttribute(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                 function.handle),
          fmt::format("cuFuncGetAttribute(SHARED_SIZE_BYTES) for '{}'", function.desc.name));
      status != HAL_SUCCESS) {
    return status;
  }
  function.desc.max_threads_per_block = static_cast<uint32_t>(std::max(max_threads, 0));
  function.desc.static_shared_bytes = static_cast<uint32_t>(std::max(static_shared, 0));
  function.desc.dynamic_shared = true;
  const uint32_t base = device.default_shared_bytes();
  function.dynamic_shared_limit.store(
      base > function.desc.static_shared_bytes ? base - function.desc.static_shared_bytes : 0);
  return HAL_SUCCESS;
}

void describe_ptx_entry(const ptx::Entry& entry, FunctionDesc* desc) {
  desc->name = entry.name;
  desc->params_known = true;
  desc->params = ptx_param_infos(entry);
  for (int i = 0; i < 3; ++i) desc->block[i] = entry.reqntid[i];
}

// Parameters of a cubin function through cuFuncGetParamInfo (offset and size only; kinds by the
// rule of ptx/reader.h). Unknown when the driver lacks the query or answers anything but
// CUDA_ERROR_INVALID_VALUE, its answer past the last parameter.
void describe_binary_params(const DriverApi& api, CUfunction handle, FunctionDesc* desc) {
  desc->params_known = false;
  if (api.cuFuncGetParamInfo == nullptr) return;
  std::vector<size_t> offsets;
  std::vector<size_t> sizes;
  for (size_t index = 0;; ++index) {
    size_t offset = 0;
    size_t param_size = 0;
    const CUresult result = api.cuFuncGetParamInfo(handle, index, &offset, &param_size);
    if (result == CUDA_ERROR_INVALID_VALUE) break;
    if (result != CUDA_SUCCESS || index == kMaxFunctionParams || param_size == 0) return;
    offsets.push_back(offset);
    sizes.push_back(param_size);
  }
  std::vector<bool> candidates;
  for (size_t param_size : sizes) candidates.push_back(param_size == 8);
  const std::vector<bool> pointers = ptx::classify_params(desc->name, candidates);
  for (size_t i = 0; i < sizes.size(); ++i) {
    ParamInfo info;
    info.kind = pointers[i] ? HAL_PARAM_POINTER : HAL_PARAM_VALUE;
    info.size = static_cast<uint32_t>(sizes[i]);
    // A cubin does not say what its pointers need: any address passes.
    info.alignment = pointers[i] ? 1 : guess_alignment(offsets[i], sizes[i]);
    info.nullable = pointers[i];
    desc->params.push_back(info);
  }
  desc->params_known = true;
}

// Lists a binary module's functions through the driver, or from the cubin's symbol table on
// drivers without enumeration (see the header).
hal_status list_binary_functions(CudaDevice& device, hal_ir ir, const uint8_t* blob, size_t size,
                                 CUmodule module,
                                 std::vector<std::unique_ptr<Function>>* functions) {
  const DriverApi& api = device.api();
  if (api.cuModuleGetFunctionCount == nullptr || api.cuModuleEnumerateFunctions == nullptr ||
      api.cuFuncGetName == nullptr) {
    if (ir != HAL_IR_CUBIN) {
      return failf(HAL_ERROR_NOT_SUPPORTED,
                   "this CUDA driver ({}.{}) cannot list the functions of a fatbin "
                   "(cuModuleEnumerateFunctions needs CUDA 12.4). Update the driver, or load the "
                   "cubin or PTX inside it",
                   device.driver().version() / 1000, device.driver().version() % 1000 / 10);
    }
    std::vector<std::string> names;
    if (hal_status status = elf_entries(blob, size, &names); status != HAL_SUCCESS) {
      return status;
    }
    for (const std::string& name : names) {
      auto function = std::make_unique<CudaFunction>();
      function->desc.name = name;
      if (hal_status status =
              device.check(api.cuModuleGetFunction(&function->handle, module, name.c_str()),
                           fmt::format("cuModuleGetFunction('{}')", name));
          status != HAL_SUCCESS) {
        return status;
      }
      if (hal_status status = query_attributes(device, *function); status != HAL_SUCCESS) {
        return status;
      }
      describe_binary_params(api, function->handle, &function->desc);
      functions->push_back(std::move(function));
    }
    return HAL_SUCCESS;
  }
  unsigned int count = 0;
  if (hal_status status =
          device.check(api.cuModuleGetFunctionCount(&count, module), "cuModuleGetFunctionCount");
      status != HAL_SUCCESS) {
    return status;
  }
  std::vector<CUfunction> handles(count);
  if (count > 0) {
    if (hal_status status =
            device.check(api.cuModuleEnumerateFunctions(handles.data(), count, module),
                         "cuModuleEnumerateFunctions");
        status != HAL_SUCCESS) {
      return status;
    }
  }
  for (CUfunction handle : handles) {
    auto function = std::make_unique<CudaFunction>();
    function->handle = handle;
    const char* name = nullptr;
    if (hal_status status = device.check(api.cuFuncGetName(&name, handle), "cuFuncGetName");
        status != HAL_SUCCESS) {
      return status;
    }
    function->desc.name = name != nullptr ? name : "";
    // Attributes first: under lazy loading (CUDA_MODULE_LOADING=LAZY) they load the function.
    if (hal_status status = query_attributes(device, *function); status != HAL_SUCCESS) {
      return status;
    }
    describe_binary_params(api, handle, &function->desc);
    functions->push_back(std::move(function));
  }
  return HAL_SUCCESS;
}

}  // namespace

hal_status cubin_entries(const uint8_t* blob, size_t size, std::vector<std::string>* names) {
  if (hal_status status = check_elf(blob, size); status != HAL_SUCCESS) return status;
  return elf_entries(blob, size, names);
}

hal_status check_binary(hal_ir ir, const uint8_t* blob, size_t size) {
  if (ir == HAL_IR_CUBIN) return check_elf(blob, size);
  if (ir == HAL_IR_FATBIN) return check_fatbin(blob, size);
  return HAL_SUCCESS;
}

CudaModule::~CudaModule() {
  if (device_.lost()) return;  // a lost context took the module with it
  // Launches already issued must finish before their code goes away.
  if (device_.enter() != HAL_SUCCESS) {
    clear_pending_error();
    return;
  }
  // A fault seen here is reported to the core (check), as the destructor has no caller to tell.
  if (device_.check(device_.api().cuCtxSynchronize(), "cuCtxSynchronize before cuModuleUnload") !=
      HAL_SUCCESS) {
    clear_pending_error();
    if (device_.lost()) return;  // the context and the module are gone with it
  }
  device_.api().cuModuleUnload(module_);  // nothing to do on failure
}

hal_status load_cuda_module(CudaDevice& device, hal_ir ir, const uint8_t* blob, size_t size,
                            const ModuleOptions& options, std::unique_ptr<Module>* out) {
  if (!options.specializations.empty() || options.shared_bytes_constant) {
    return fail(HAL_ERROR_NOT_SUPPORTED, "PTX, cubin and fatbin have no specialization constants");
  }
  if (ir != HAL_IR_PTX && ir != HAL_IR_CUBIN && ir != HAL_IR_FATBIN) {
    return failf(HAL_ERROR_NOT_SUPPORTED, "the CUDA backend does not load IR kind {}",
                 static_cast<int>(ir));
  }

  ptx::Module ptx;
  if (ir == HAL_IR_PTX) {
    // The driver reads PTX up to its first NUL; so does everything here, so that hal lists
    // exactly the entries the driver compiles (a trailing NUL, as sizeof of a string gives, is
    // common; text after an embedded NUL is never seen by the driver).
    if (const void* nul = std::memchr(blob, 0, size); nul != nullptr) {
      size = static_cast<size_t>(static_cast<const uint8_t*>(nul) - blob);
    }
    std::string error;
    if (!ptx::parse(std::string_view(reinterpret_cast<const char*>(blob), size), &ptx, &error)) {
      return failf(HAL_ERROR_INVALID_IR, "malformed PTX: {}", error);
    }
    const uint32_t device_sm = device.compute_capability();
    const char suffix = ptx.target.back();
    if (ptx.target_sm > device_sm) {
      return failf(HAL_ERROR_NOT_SUPPORTED,
                   "the PTX targets {} but {} is sm_{} (compute capability {}.{}). Compile for "
                   "sm_{} or lower",
                   ptx.target, device.info.name, device_sm, device.info.compute_capability_major,
                   device.info.compute_capability_minor, device_sm);
    }
    if (suffix == 'a' && ptx.target_sm != device_sm) {
      return failf(HAL_ERROR_NOT_SUPPORTED,
                   "the PTX targets {}, which runs only on compute capability {}.{}, but {} is "
                   "sm_{}. Compile for sm_{} without the 'a' suffix",
                   ptx.target, ptx.target_sm / 10, ptx.target_sm % 10, device.info.name, device_sm,
                   ptx.target_sm);
    }
    if (suffix == 'f' && ptx.target_sm / 10 != device_sm / 10) {
      return failf(HAL_ERROR_NOT_SUPPORTED,
                   "the PTX targets the family {}, which runs only on compute capability {}.x, "
                   "but {} is sm_{}",
                   ptx.target, ptx.target_sm / 10, device.info.name, device_sm);
    }
    if (ptx.address_size != 64) {
      return fail(HAL_ERROR_NOT_SUPPORTED,
                  "the PTX uses 32-bit addresses (.address_size 32 or none); hal runs only "
                  "64-bit PTX: add .address_size 64");
    }
  } else if (hal_status status = check_binary(ir, blob, size); status != HAL_SUCCESS) {
    return status;
  }

  if (hal_status status = device.enter(); status != HAL_SUCCESS) return status;

  // An aligned, zero-padded copy: NUL-terminates PTX, aligns binaries (see the header).
  std::vector<uint64_t> image(size / sizeof(uint64_t) + 2, 0);
  std::memcpy(image.data(), blob, size);

  std::vector<char> error_log(kJitLogBytes, '\0');
  std::vector<char> info_log(kJitLogBytes, '\0');
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(uintptr_t{kJitLogBytes - 1}),
                    info_log.data(), reinterpret_cast<void*>(uintptr_t{kJitLogBytes - 1})};
  CUmodule module = nullptr;
  const CUresult result = device.api().cuModuleLoadDataEx(&module, image.data(), 4, keys, values);
  const std::string errors = log_text(error_log);
  const std::string infos = log_text(info_log);
  if (!infos.empty()) log()->debug("cuda: JIT info log: {}", infos);
  if (result != CUDA_SUCCESS) {
    std::string detail;
    if (!errors.empty()) detail = "JIT log: " + errors;
    if (result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION && ir == HAL_IR_PTX) {
      if (!detail.empty()) detail += ". ";
      detail += fmt::format(
          "The PTX is .version {}.{}, and this driver supports CUDA {}.{} (driver version {})",
          ptx.version_major, ptx.version_minor, device.driver().version() / 1000,
          device.driver().version() % 1000 / 10, device.driver().version());
    }
    if (result == CUDA_ERROR_NO_BINARY_FOR_GPU) {
      if (!detail.empty()) detail += ". ";
      detail += fmt::format("{} is sm_{}", device.info.name, device.compute_capability());
    }
    const char* kind = ir == HAL_IR_PTX ? "PTX" : ir == HAL_IR_CUBIN ? "cubin" : "fatbin";
    return device.check(result, fmt::format("cuModuleLoadDataEx of {} bytes of {}", size, kind),
                        detail);
  }

  auto loaded = std::make_unique<CudaModule>(device, module);
  if (ir == HAL_IR_PTX) {
    for (const ptx::Entry& entry : ptx.entries) {
      auto function = std::make_unique<CudaFunction>();
      describe_ptx_entry(entry, &function->desc);
      if (hal_status status = device.check(
              device.api().cuModuleGetFunction(&function->handle, module, entry.name.c_str()),
              fmt::format("cuModuleGetFunction('{}')", entry.name));
          status != HAL_SUCCESS) {
        return status;
      }
      if (hal_status status = query_attributes(device, *function); status != HAL_SUCCESS) {
        return status;
      }
      // .maxntid (__launch_bounds__) bounds the block whatever the driver answers: the code
      // was compiled for at most that many threads (its registers were allotted for them).
      uint32_t& max_threads = function->desc.max_threads_per_block;
      if (entry.maxntid != 0 && (max_threads == 0 || entry.maxntid < max_threads)) {
        max_threads = entry.maxntid;
      }
      loaded->functions.push_back(std::move(function));
    }
  } else if (hal_status status =
                 list_binary_functions(device, ir, blob, size, module, &loaded->functions);
             status != HAL_SUCCESS) {
    return status;
  }
  *out = std::move(loaded);
  return HAL_SUCCESS;
}

}  // namespace hal::cuda
