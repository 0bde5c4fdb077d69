#include "cuda/cuda_driver.h"

#include "common/error.h"
#include "common/log.h"
#include "cuda/cuda_status.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

namespace hal::cuda {
namespace {

constexpr EntryPointInfo kEntryPoints[] = {
#define HAL_CUDA_ENTRY_INFO(name, version, need, params) {#name, version, Need::need},
    HAL_CUDA_DRIVER_ENTRY_POINTS(HAL_CUDA_ENTRY_INFO)
#undef HAL_CUDA_ENTRY_INFO
};

// cuGetProcAddress as exported under its versioned name since CUDA 12.0.
using GetProcAddressFn = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t,
                                            CUdriverProcAddressQueryResult*);

// Opens the first library that loads; on failure |tried| lists "name (dlerror)" for each.
void* open_library(std::string* opened, std::string* tried, bool* from_env) {
  const char* override_path = std::getenv("HAL_CUDA_LIBRARY");
  *from_env = override_path != nullptr && *override_path != '\0';
  const char* const system_names[] = {"libcuda.so.1", "libcuda.so"};
  const char* const env_names[] = {override_path};
  const char* const* names = *from_env ? env_names : system_names;
  const size_t count = *from_env ? 1 : 2;
  for (size_t i = 0; i < count; ++i) {
    const char* name = names[i];
    dlerror();
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      *opened = name;
      return handle;
    }
    const char* why = dlerror();
    if (!tried->empty()) *tried += "; ";
    *tried += name;
    *tried += " (";
    *tried += why != nullptr ? why : "unknown dlopen failure";
    *tried += ")";
  }
  return nullptr;
}

}  // namespace

const EntryPointInfo* entry_points(size_t* count) {
  *count = sizeof(kEntryPoints) / sizeof(kEntryPoints[0]);
  return kEntryPoints;
}

hal_status Driver::open(std::shared_ptr<const Driver>* out) {
  std::string opened;
  std::string tried;
  bool from_env = false;
  void* handle = open_library(&opened, &tried, &from_env);
  if (handle == nullptr) {
    if (from_env) {
      return failf(HAL_ERROR_UNAVAILABLE,
                   "cannot open the CUDA driver library named by HAL_CUDA_LIBRARY: {}. Point "
                   "HAL_CUDA_LIBRARY at libcuda.so.1, or unset it to search the system",
                   tried);
    }
    return failf(HAL_ERROR_UNAVAILABLE,
                 "no CUDA driver library found: tried {}. Install the NVIDIA driver (it "
                 "provides libcuda.so.1), or set HAL_CUDA_LIBRARY to its path",
                 tried);
  }

  dlerror();
  auto get_proc = reinterpret_cast<GetProcAddressFn>(dlsym(handle, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    dlclose(handle);
    return failf(HAL_ERROR_UNAVAILABLE,
                 "{} has no cuGetProcAddress_v2: the CUDA driver is older than 12.0. Install a "
                 "driver for CUDA 12.0 or later",
                 opened);
  }

  std::shared_ptr<Driver> driver(new Driver());
  driver->library_ = opened;
  DriverApi& api = driver->api_;
  std::string missing;
  const auto resolve = [&](const char* name, int version, Need need, void** slot) {
    void* pointer = nullptr;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const CUresult result =
        get_proc(name, &pointer, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
    if (result == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS && pointer != nullptr) {
      *slot = pointer;
      return;
    }
    *slot = nullptr;
    const char* why = found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          ? "the driver's version of it is too old"
                          : "not found";
    if (need == Need::kRequired) {
      if (!missing.empty()) missing += ", ";
      missing += std::string(name) + " (CUDA " + std::to_string(version / 1000) + "." +
                 std::to_string(version % 1000 / 10) + ": " + why + ")";
    } else {
      log()->debug("cuda: optional entry point {} unavailable ({})", name, why);
    }
  };
#define HAL_CUDA_RESOLVE_ENTRY(name, version, need, params) \
  resolve(#name, version, Need::need, reinterpret_cast<void**>(&api.name));
  HAL_CUDA_DRIVER_ENTRY_POINTS(HAL_CUDA_RESOLVE_ENTRY)
#undef HAL_CUDA_RESOLVE_ENTRY
  if (!missing.empty()) {
    dlclose(handle);
    return failf(HAL_ERROR_UNAVAILABLE,
                 "{} lacks required CUDA driver entry points: {}. Update the NVIDIA driver", opened,
                 missing);
  }

  // From here on the library stays loaded for the life of the process (see the header).
  const CUresult init = api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const std::string name = driver->error_name(init);
    if (init == CUDA_ERROR_NO_DEVICE) {
      return failf(HAL_ERROR_UNAVAILABLE,
                   "{} loaded, but cuInit finds no NVIDIA GPU ({}). Check nvidia-smi and "
                   "CUDA_VISIBLE_DEVICES",
                   opened, name);
    }
    return failf(HAL_ERROR_UNAVAILABLE, "{} loaded, but cuInit failed ({}). {}", opened, name,
                 error_hint(init));
  }
  CUresult result = api.cuDriverGetVersion(&driver->version_);
  if (result != CUDA_SUCCESS) {
    return failf(HAL_ERROR_UNAVAILABLE, "cuDriverGetVersion failed ({}). {}",
                 driver->error_name(result), error_hint(result));
  }
  // Start the error log where it is now: only what happens from here on belongs to hal's calls.
  if (api.cuLogsCurrent != nullptr && api.cuLogsDumpToMemory != nullptr) {
    driver->has_log_ = api.cuLogsCurrent(&driver->log_iterator_, 0) == CUDA_SUCCESS;
  }
  log()->debug("cuda: opened {} (driver CUDA {}.{})", opened, driver->version_ / 1000,
               driver->version_ % 1000 / 10);
  *out = std::move(driver);
  return HAL_SUCCESS;
}

std::string Driver::take_log() const {
  if (!has_log_) return {};
  // The driver keeps at most 25600 bytes of log; one buffer of that size takes all of it.
  constexpr size_t kLogBytes = 25600;
  std::string buffer(kLogBytes + 1, '\0');
  size_t size = kLogBytes;
  {
    std::lock_guard<std::mutex> lock(log_mutex_);
    if (api_.cuLogsDumpToMemory(&log_iterator_, buffer.data(), &size, 0) != CUDA_SUCCESS) {
      return {};
    }
  }
  buffer.resize(std::min(size, kLogBytes));
  while (!buffer.empty() && (buffer.back() == '\n' || buffer.back() == '\0')) buffer.pop_back();
  return buffer;
}

std::string Driver::error_name(CUresult result) const {
  const char* name = nullptr;
  if (api_.cuGetErrorName != nullptr && api_.cuGetErrorName(result, &name) == CUDA_SUCCESS &&
      name != nullptr) {
    return name;
  }
  const char* known = table_error_name(result);
  if (known != nullptr) return known;
  return "CUresult " + std::to_string(static_cast<int>(result));
}

}  // namespace hal::cuda
