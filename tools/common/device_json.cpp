#include "device_json.h"

#include <cstdio>

namespace hal_tools {
namespace {

struct IrName {
  uint32_t bit;
  const char* name;
};
constexpr IrName kIrs[] = {{HAL_IR_PTX, "ptx"},
                           {HAL_IR_SPIRV, "spirv"},
                           {HAL_IR_CUBIN, "cubin"},
                           {HAL_IR_FATBIN, "fatbin"},
                           {HAL_IR_BUILTIN, "builtin"}};

struct FeatureName {
  uint64_t bit;
  const char* name;
};
constexpr FeatureName kFeatures[] = {
    {HAL_FEATURE_FLOAT16, "float16"},
    {HAL_FEATURE_INT8, "int8"},
    {HAL_FEATURE_STORAGE_16BIT, "storage_16bit"},
    {HAL_FEATURE_STORAGE_8BIT, "storage_8bit"},
    {HAL_FEATURE_BUFFER_DEVICE_ADDRESS, "buffer_device_address"},
    {HAL_FEATURE_TIMELINE_SEMAPHORE, "timeline_semaphore"},
    {HAL_FEATURE_SUBGROUP_SIZE_CONTROL, "subgroup_size_control"},
    {HAL_FEATURE_COOPERATIVE_MATRIX, "cooperative_matrix"},
    {HAL_FEATURE_TIMESTAMPS, "timestamps"},
    {HAL_FEATURE_SUBGROUP_VOTE, "subgroup_vote"},
    {HAL_FEATURE_SUBGROUP_ARITHMETIC, "subgroup_arithmetic"},
    {HAL_FEATURE_SUBGROUP_BALLOT, "subgroup_ballot"},
    {HAL_FEATURE_SUBGROUP_SHUFFLE, "subgroup_shuffle"},
};

}  // namespace

const char* backend_name(hal_backend backend) {
  switch (backend) {
    case HAL_BACKEND_CUDA:
      return "cuda";
    case HAL_BACKEND_VULKAN:
      return "vulkan";
    default:
      return "unknown";
  }
}

std::string hex_id(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", value);
  return buf;
}

std::string uuid_hex(const uint8_t uuid[16]) {
  std::string out;
  char buf[4];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", uuid[i]);
    out += buf;
  }
  return out;
}

std::vector<const char*> ir_names(uint32_t ir_mask) {
  std::vector<const char*> out;
  for (const IrName& ir : kIrs) {
    if ((ir_mask & ir.bit) != 0) out.push_back(ir.name);
  }
  return out;
}

std::vector<const char*> feature_names(uint64_t features) {
  std::vector<const char*> out;
  for (const FeatureName& f : kFeatures) {
    if ((features & f.bit) != 0) out.push_back(f.name);
  }
  return out;
}

std::string join(const std::vector<const char*>& names, const char* separator) {
  std::string out;
  for (const char* name : names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

std::string version_text(uint32_t v) {
  return std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xFF) + "." +
         std::to_string(v & 0xFF);
}

std::string driver_version_text(const hal_device_info& i) {
  const uint32_t v = i.driver_version;
  if (i.backend == HAL_BACKEND_CUDA) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  }
  if (i.vendor_id == 0x10de) {
    return std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xFF) + "." +
           std::to_string((v >> 6) & 0xFF) + "." + std::to_string(v & 0x3F);
  }
  return std::to_string((v >> 22) & 0x7F) + "." + std::to_string((v >> 12) & 0x3FF) + "." +
         std::to_string(v & 0xFFF);
}

std::string api_version_text(const hal_device_info& i) {
  const uint32_t v = i.api_version;
  if (v == 0) return "";
  if (i.backend == HAL_BACKEND_CUDA) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  }
  return std::to_string((v >> 22) & 0x7F) + "." + std::to_string((v >> 12) & 0x3FF) + "." +
         std::to_string(v & 0xFFF);
}

std::string conformance_version_text(uint32_t packed) {
  if (packed == 0) return "";
  return std::to_string(packed >> 24) + "." + std::to_string((packed >> 16) & 0xFF) + "." +
         std::to_string((packed >> 8) & 0xFF) + "." + std::to_string(packed & 0xFF);
}

void write_device_fields(JsonWriter& w, const hal_device_info& i) {
  w.field("backend", i.backend_name);
  w.field("backend_index", i.backend_index);
  w.field("global_index", i.global_index);
  w.field("name", std::string(i.name));
  w.field("driver_name", std::string(i.driver_name));
  w.field("driver_version", i.driver_version);
  w.field("driver_version_text", driver_version_text(i));
  w.field("driver_info", std::string(i.driver_info));
  w.field("api_version", api_version_text(i));
  w.field("driver_id", i.driver_id);
  w.field("conformance_version", conformance_version_text(i.conformance_version));
  w.field("vendor_id", hex_id(i.vendor_id));
  w.field("device_id", hex_id(i.device_id));
  w.field("uuid", uuid_hex(i.uuid));
  w.key("ir").begin_array();
  for (const char* name : ir_names(i.ir_mask)) w.value(name);
  w.end_array();
  w.field("total_memory", i.total_memory);
  w.field("max_allocation_size", i.max_allocation_size);
  w.field("max_threads_per_block", i.max_threads_per_block);
  w.key("max_block_dim").begin_array();
  for (uint32_t v : i.max_block_dim) w.value(v);
  w.end_array();
  w.key("max_grid_dim").begin_array();
  for (uint32_t v : i.max_grid_dim) w.value(v);
  w.end_array();
  w.field("max_shared_memory_per_block", i.max_shared_memory_per_block);
  w.field("subgroup_size", i.subgroup_size);
  w.field("compute_units", i.compute_units);
  w.field("pointer_alignment", i.pointer_alignment);
  w.field("is_cpu", i.is_cpu != 0);
  w.field("unified_memory", i.unified_memory != 0);
  w.field("compute_capability", std::to_string(i.compute_capability_major) + "." +
                                    std::to_string(i.compute_capability_minor));
  w.key("features").begin_array();
  for (const char* name : feature_names(i.features)) w.value(name);
  w.end_array();
}

}  // namespace hal_tools
