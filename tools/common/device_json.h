// How the tools name and describe a device, in text and in their JSON reports: one spelling of
// every field for hal-info --json, hal-cts --json and hal-bench --json (the schema is in
// docs/CONFORMANCE.md, "devices").
#pragma once

#include <hal/hal.h>

#include <string>
#include <vector>

#include "json_writer.h"

namespace hal_tools {

// "cuda", "vulkan", or "unknown" (a backend this build does not know by name).
const char* backend_name(hal_backend backend);
// "0x10de": PCI-style ids.
std::string hex_id(uint32_t value);
// 32 lowercase hex digits.
std::string uuid_hex(const uint8_t uuid[16]);
// The names of the bits set in a hal_device_info's ir_mask ("ptx", "spirv", "cubin", "fatbin")
// and features ("float16", "storage_16bit", ...), in bit order.
std::vector<const char*> ir_names(uint32_t ir_mask);
std::vector<const char*> feature_names(uint64_t features);
// A packed HAL_MAKE_VERSION as "0.2.0".
std::string version_text(uint32_t version);
// The driver's version as its vendor writes it: "12.4" on CUDA; on Vulkan NVIDIA's 10.8.8.6-bit
// encoding, else Vulkan's major.minor.patch (Mesa drivers say more in driver_info).
std::string driver_version_text(const hal_device_info& info);
// A Vulkan-style API version ("1.3.230"), or "12.4" for a CUDA api_version; "" for 0.
std::string api_version_text(const hal_device_info& info);
// The conformance version "1.3.5.0", or "" when the driver claims none.
std::string conformance_version_text(uint32_t packed);
// |names| separated by |separator|.
std::string join(const std::vector<const char*>& names, const char* separator);

// Writes every field of |info| into the JSON object the caller has open, so a tool can add its
// own fields (a label, the selector it was given) to the same object.
void write_device_fields(JsonWriter& w, const hal_device_info& info);

}  // namespace hal_tools
