// hal_init, hal_version and the backend list.
#include "common/api_guard.h"
#include "common/registry.h"

#include <algorithm>
#include <cstddef>

using namespace hal;

extern "C" {

HAL_API hal_status hal_init(void) {
  return guarded("hal_init", []() -> hal_status {
    const Registry& reg = registry();
    if (reg.init_status != HAL_SUCCESS) return fail(reg.init_status, reg.init_message);
    return HAL_SUCCESS;
  });
}

HAL_API uint32_t hal_version(void) {
  return HAL_VERSION;
}

HAL_API hal_status hal_backend_count(uint32_t* count) {
  return guarded("hal_backend_count", [&]() -> hal_status {
    HAL_REQUIRE_ARG(count != nullptr, "count is NULL");
    *count = static_cast<uint32_t>(registry().backends.size());
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_backend_get_info(uint32_t index, hal_backend_info* info) {
  return guarded("hal_backend_get_info", [&]() -> hal_status {
    HAL_REQUIRE_ARG(info != nullptr, "info is NULL");
    HAL_RETURN_IF_ERROR(check_struct_size(info->struct_size, offsetof(hal_backend_info, module),
                                          "hal_backend_info"));
    const Registry& reg = registry();
    if (index >= reg.backends.size()) {
      return failf(HAL_ERROR_NOT_FOUND, "backend index {} is out of range; there are {}", index,
                   reg.backends.size());
    }
    const BackendEntry& entry = *reg.backends[index];
    hal_backend_info out{};
    out.struct_size = sizeof(out);
    out.backend = entry.kind;
    out.available = entry.available ? 1 : 0;
    out.device_count = static_cast<uint32_t>(entry.devices.size());
    fmt::format_to_n(out.name, sizeof(out.name) - 1, "{}", entry.name);
    fmt::format_to_n(out.reason, sizeof(out.reason) - 1, "{}", entry.reason);
    fmt::format_to_n(out.module, sizeof(out.module) - 1, "{}", entry.origin);
    copy_out(out, info);
    return HAL_SUCCESS;
  });
}

}  // extern "C"
