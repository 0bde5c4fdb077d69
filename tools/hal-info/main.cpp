// hal-info: lists every device hal can use, and every backend it cannot use with the reason.
//
//   hal-info           a readable listing
//   hal-info --json    the same as one JSON object, for machines
//
// Exit status: 0 when discovery worked (also with no devices at all), 1 when hal_init failed
// (for instance HAL_BACKENDS names an unknown backend), 2 for a bad command line.
#include <hal/hal.h>

#include "device_json.h"
#include "json_writer.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Snapshot {
  std::vector<hal_backend_info> backends;
  std::vector<hal_device_info> devices;
};

bool collect(Snapshot* snap) {
  uint32_t count = 0;
  if (hal_backend_count(&count) != HAL_SUCCESS) return false;
  for (uint32_t i = 0; i < count; ++i) {
    hal_backend_info info{};
    info.struct_size = sizeof(info);
    if (hal_backend_get_info(i, &info) != HAL_SUCCESS) return false;
    snap->backends.push_back(info);
  }
  if (hal_device_count(&count) != HAL_SUCCESS) return false;
  for (uint32_t i = 0; i < count; ++i) {
    hal_device device = nullptr;
    hal_device_info info{};
    info.struct_size = sizeof(info);
    if (hal_device_get(i, &device) != HAL_SUCCESS ||
        hal_device_get_info(device, &info) != HAL_SUCCESS) {
      return false;
    }
    snap->devices.push_back(info);
  }
  return true;
}

void print_text(const Snapshot& snap, hal_status init) {
  std::printf("hal %u.%u.%u\n", hal_version() >> 16, (hal_version() >> 8) & 0xff,
              hal_version() & 0xff);
  if (init != HAL_SUCCESS) std::printf("warning: %s\n", hal_last_error());
  std::printf("\nBackends:\n");
  if (snap.backends.empty()) std::printf("  none built in\n");
  for (const hal_backend_info& b : snap.backends) {
    if (b.available) {
      std::printf("  %-8s available, %u device(s)\n", b.name, b.device_count);
    } else {
      std::printf("  %-8s unavailable: %s\n", b.name, b.reason);
    }
    if (b.module[0] != '\0') std::printf("  %-8s module %s\n", "", b.module);
  }
  std::printf("\nDevices:\n");
  if (snap.devices.empty()) {
    std::printf("  none: no backend found a device (see the reasons above)\n");
  }
  for (const hal_device_info& d : snap.devices) {
    std::printf("  [%u] %s:%u  %s\n", d.global_index, d.backend_name, d.backend_index, d.name);
    std::printf("      type            %s%s\n", d.is_cpu ? "CPU" : "GPU",
                d.unified_memory ? ", unified memory" : "");
    std::printf("      driver          %s, version %s (%u)%s%s\n", d.driver_name,
                hal_tools::driver_version_text(d).c_str(), d.driver_version,
                d.driver_info[0] != '\0' ? ", " : "", d.driver_info);
    if (d.backend == HAL_BACKEND_VULKAN) {
      const std::string conformance = hal_tools::conformance_version_text(d.conformance_version);
      std::printf("      Vulkan          API %s, driver id %u, conformance %s\n",
                  hal_tools::api_version_text(d).c_str(), d.driver_id,
                  conformance.empty() ? "none claimed" : conformance.c_str());
    }
    std::printf("      vendor/device   0x%04x / 0x%04x\n", d.vendor_id, d.device_id);
    std::printf("      uuid            %s\n", hal_tools::uuid_hex(d.uuid).c_str());
    std::printf("      memory          %.1f MiB (largest allocation %.1f MiB)\n",
                static_cast<double>(d.total_memory) / (1 << 20),
                static_cast<double>(d.max_allocation_size) / (1 << 20));
    std::printf("      IRs             %s\n",
                hal_tools::join(hal_tools::ir_names(d.ir_mask), " ").c_str());
    if (d.compute_capability_major != 0) {
      std::printf("      compute cap.    %u.%u\n", d.compute_capability_major,
                  d.compute_capability_minor);
    }
    std::printf("      compute units   %u, subgroup size %u\n", d.compute_units, d.subgroup_size);
    std::printf("      block           max %u threads, %u x %u x %u\n", d.max_threads_per_block,
                d.max_block_dim[0], d.max_block_dim[1], d.max_block_dim[2]);
    std::printf("      grid            %u x %u x %u\n", d.max_grid_dim[0], d.max_grid_dim[1],
                d.max_grid_dim[2]);
    std::printf("      shared memory   %u bytes per block\n", d.max_shared_memory_per_block);
    std::printf("      pointer align   %u bytes\n", d.pointer_alignment);
    std::printf("      features        %s\n",
                hal_tools::join(hal_tools::feature_names(d.features), " ").c_str());
  }
}

void print_json(const Snapshot& snap, hal_status init) {
  hal_tools::JsonWriter w;
  const uint32_t v = hal_version();
  w.begin_object();
  w.field("version", std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." +
                         std::to_string(v & 0xff));
  w.field("init_status", hal_status_string(init));
  w.field("init_message", init == HAL_SUCCESS ? "" : hal_last_error());
  w.key("backends").begin_array();
  for (const hal_backend_info& b : snap.backends) {
    w.begin_object();
    w.field("name", b.name);
    w.field("available", b.available != 0);
    w.field("device_count", b.device_count);
    w.field("reason", b.reason);
    w.field("module", b.module);
    w.end_object();
  }
  w.end_array();
  w.key("devices").begin_array();
  for (const hal_device_info& d : snap.devices) {
    w.begin_object();
    w.field("selector", std::string(d.backend_name) + ":" + std::to_string(d.backend_index));
    hal_tools::write_device_fields(w, d);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  std::fputs(w.text().c_str(), stdout);
}

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: hal-info [--json]\n"
               "Lists the devices hal can use and the backends it cannot use, with the reason.\n"
               "  --json   print one JSON object instead of text\n"
               "Environment: HAL_BACKENDS (e.g. vulkan,cuda), HAL_LOG_LEVEL, HAL_CUDA_LIBRARY.\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "hal-info: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  const hal_status init = hal_init();
  Snapshot snap;
  if (!collect(&snap)) {
    std::fprintf(stderr, "hal-info: %s\n", hal_last_error());
    return 1;
  }
  if (json) {
    print_json(snap, init);
  } else {
    print_text(snap, init);
  }
  return init == HAL_SUCCESS ? 0 : 1;
}
