// libhal with HAL_DRIVER_PATH naming good/ (the skeleton driver) and modules/ (one module for
// each way a driver can fail, and one that leaves every optional entry NULL): every failure is
// listed with its reason and module, and every other backend keeps working.
#include "hal_assertions.h"

#include <hal/hal.h>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

struct Listed {
  hal_backend_info info;
  int count = 0;  // entries under this name
};

// Every backend entry by name; for a name listed twice, the second entry.
std::map<std::string, Listed> backends() {
  std::map<std::string, Listed> out;
  uint32_t count = 0;
  EXPECT_EQ(hal_backend_count(&count), HAL_SUCCESS);
  for (uint32_t i = 0; i < count; ++i) {
    hal_backend_info info{};
    info.struct_size = sizeof(info);
    EXPECT_EQ(hal_backend_get_info(i, &info), HAL_SUCCESS);
    Listed& listed = out[info.name];
    listed.info = info;
    ++listed.count;
  }
  return out;
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

struct Broken {
  const char* name;  // as listed: the table's name, or the file's when there is no table
  const char* file;
  std::vector<const char*> reason;  // parts the reason must contain
};

TEST(DriverModules, EveryBrokenModuleIsListedUnavailableWithItsReason) {
  const std::map<std::string, Listed> listed = backends();
  const Broken broken[] = {
      {"garbage", "libhal_driver_garbage.so", {"does not load"}},
      {"needs_library",
       "libhal_driver_needs_library.so",
       {"does not load", "libhal_test_absent_dependency.so"}},
      {"no_entry", "libhal_driver_no_entry.so", {"is not a hal driver", "hal_driver_query"}},
      {"fault_query", "libhal_driver_fault_query.so", {"hal_driver_query failed"}},
      {"fault_newer",
       "libhal_driver_fault_newer.so",
       {"interface version 4", "newer than this libhal's 3"}},
      {"fault_small", "libhal_driver_fault_small.so", {"struct_size", "version 1's table"}},
      {"fault_name", "libhal_driver_fault_name.so", {"'Not-A-Name'", "a-z"}},
      {"fault_required", "libhal_driver_fault_required.so", {"required entry 'launch' NULL"}},
      {"fault_half_host", "libhal_driver_fault_half_host.so", {"host_alloc", "host_free"}},
      {"fault_init", "libhal_driver_fault_init.so", {"firmware did not answer"}},
      {"fault_kind",
       "libhal_driver_fault_kind.so",
       {"only the backends named 'cuda' and 'vulkan'"}},
  };
  for (const Broken& b : broken) {
    SCOPED_TRACE(b.name);
    auto it = listed.find(b.name);
    ASSERT_NE(it, listed.end()) << "not listed at all";
    const hal_backend_info& info = it->second.info;
    EXPECT_EQ(info.available, 0u);
    EXPECT_EQ(info.device_count, 0u);
    EXPECT_TRUE(ends_with(info.module, std::string("/modules/") + b.file)) << info.module;
    for (const char* part : b.reason) {
      EXPECT_NE(std::strstr(info.reason, part), nullptr)
          << "reason lacks '" << part << "': " << info.reason;
    }
  }
  // "skeleton" three times: a broken file of that name found first (shadow/), the working
  // module, and a second working module of that name, which loses to the first one found.
  auto skeleton = listed.find("skeleton");
  ASSERT_NE(skeleton, listed.end());
  EXPECT_EQ(skeleton->second.count, 3);
  EXPECT_EQ(skeleton->second.info.available, 0u);
  EXPECT_NE(std::strstr(skeleton->second.info.reason, "already taken by"), nullptr)
      << skeleton->second.info.reason;
  EXPECT_TRUE(ends_with(skeleton->second.info.module, "/modules/libhal_driver_duplicate.so"));
}

TEST(DriverModules, SelectingABrokenBackendSaysWhy) {
  hal_device device = nullptr;
  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_device_find("fault_init:0", &device));
  EXPECT_TRUE(hal_testing::LastErrorHas({"fault_init", "unavailable", "firmware"}));
}

// Moves floats through a device and runs the built-in vector_add_f32 on it.
void vector_add_runs_on(hal_device device) {
  constexpr uint32_t n = 1000;
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 0.5f * static_cast<float>(i);
  }
  hal_deviceptr da = 0, db = 0, dc = 0;
  ASSERT_OK(hal_mem_alloc(device, n * 4, &da));
  ASSERT_OK(hal_mem_alloc(device, n * 4, &db));
  ASSERT_OK(hal_mem_alloc(device, n * 4, &dc));
  hal_stream stream = nullptr;
  ASSERT_OK(hal_stream_create(device, &stream));
  ASSERT_OK(hal_memcpy_htod(stream, da, a.data(), n * 4));
  ASSERT_OK(hal_memcpy_htod(stream, db, b.data(), n * 4));
  const char blob[] = "HALKvector_add_f32";
  hal_module module = nullptr;
  ASSERT_OK(hal_module_load(device, blob, sizeof(blob) - 1, nullptr, &module));
  hal_function function = nullptr;
  ASSERT_OK(hal_module_get_function(module, "vector_add_f32", &function));
  uint32_t count = n;
  void* args[] = {&da, &db, &dc, &count};
  hal_function_info info{};
  info.struct_size = sizeof(info);
  ASSERT_OK(hal_function_get_info(function, &info));
  // The pack's kernels have a fixed block; {0,0,0} asks for it.
  const bool fixed = info.block[0] != 0;
  const uint32_t block = fixed ? info.block[0] : 64;
  hal_launch_config launch{};
  launch.grid[0] = (n + block - 1) / block;
  launch.grid[1] = launch.grid[2] = 1;
  if (!fixed) launch.block[0] = block, launch.block[1] = 1, launch.block[2] = 1;
  ASSERT_OK(hal_launch(stream, function, &launch, args));
  ASSERT_OK(hal_memcpy_dtoh(stream, c.data(), dc, n * 4));
  ASSERT_OK(hal_stream_synchronize(stream));
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "at " << i;
  EXPECT_OK(hal_module_unload(module));
  EXPECT_OK(hal_stream_destroy(stream));
  EXPECT_OK(hal_mem_free(device, da));
  EXPECT_OK(hal_mem_free(device, db));
  EXPECT_OK(hal_mem_free(device, dc));
}

TEST(DriverModules, TheWorkingModulesAndTheBuiltInBackendsKeepWorking) {
  // The first "skeleton" listed is the broken file in shadow/: the selector finds the working
  // module of that name all the same.
  hal_device skeleton = nullptr;
  ASSERT_OK(hal_device_find("skeleton:0", &skeleton));
  hal_device_info info{};
  info.struct_size = sizeof(info);
  ASSERT_OK(hal_device_get_info(skeleton, &info));
  EXPECT_STREQ(info.backend_name, "skeleton");
  EXPECT_EQ(info.backend, HAL_BACKEND_UNKNOWN);
  EXPECT_EQ(info.ir_mask, static_cast<uint32_t>(HAL_IR_BUILTIN));
  vector_add_runs_on(skeleton);

  // The built-in modules were found and judged on their own: a broken neighbour changes
  // nothing. (Whether lavapipe or a GPU is present is the machine's business.)
  const std::map<std::string, Listed> listed = backends();
  for (const char* builtin : {"vulkan", "cuda"}) {
    auto it = listed.find(builtin);
    if (it == listed.end()) continue;  // not built
    SCOPED_TRACE(builtin);
    EXPECT_EQ(it->second.count, 1);
    EXPECT_TRUE(ends_with(it->second.info.module,
                          std::string("/hal/drivers/libhal_driver_") + builtin + ".so"))
        << it->second.info.module;
    EXPECT_EQ(std::strstr(it->second.info.reason, "/modules/"), nullptr) << it->second.info.reason;
  }
  auto vulkan = listed.find("vulkan");
  if (vulkan != listed.end() && vulkan->second.info.available) {
    hal_device device = nullptr;
    ASSERT_OK(hal_device_find("vulkan:0", &device));
    hal_deviceptr p = 0;
    ASSERT_OK(hal_mem_alloc(device, 64, &p));
    EXPECT_OK(hal_mem_free(device, p));
  }
}

// A driver made from the skeleton by renaming it (docs/NEW_DEVICE.md) reports a UUID of its own,
// not the skeleton's: programs that keep state per device tell the two apart.
TEST(DriverModules, ARenamedSkeletonHasItsOwnUuid) {
  hal_device skeleton = nullptr, renamed = nullptr;
  ASSERT_OK(hal_device_find("skeleton:0", &skeleton));
  ASSERT_OK(hal_device_find("mynpu:0", &renamed));
  hal_device_info a{}, b{};
  a.struct_size = b.struct_size = sizeof(hal_device_info);
  ASSERT_OK(hal_device_get_info(skeleton, &a));
  ASSERT_OK(hal_device_get_info(renamed, &b));
  EXPECT_STREQ(b.driver_name, "mynpu");
  EXPECT_NE(std::memcmp(a.uuid, b.uuid, sizeof a.uuid), 0) << "the renamed driver kept the UUID";
  const uint8_t zero[16] = {};
  EXPECT_NE(std::memcmp(b.uuid, zero, sizeof zero), 0);
}

// A driver of an older interface (or one that simply leaves them out) has no optional entries:
// the core falls back where it can and says HAL_ERROR_NOT_SUPPORTED where it cannot.
TEST(DriverModules, OptionalEntriesLeftNullFallBackOrAreNotSupported) {
  hal_device device = nullptr;
  ASSERT_OK(hal_device_find("minimal:0", &device));
  vector_add_runs_on(device);

  // host_alloc/host_free: ordinary page-aligned memory from the core, usable for copies.
  void* host = nullptr;
  ASSERT_OK(hal_host_alloc(device, 5000, &host));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % 4096, 0u);
  std::memset(host, 0x5a, 5000);
  hal_deviceptr p = 0;
  ASSERT_OK(hal_mem_alloc(device, 5000, &p));
  hal_stream stream = nullptr;
  ASSERT_OK(hal_stream_create(device, &stream));
  ASSERT_OK(hal_memcpy_htod(stream, p, host, 5000));
  std::vector<uint8_t> back(5000, 0);
  ASSERT_OK(hal_memcpy_dtoh(stream, back.data(), p, 5000));
  ASSERT_OK(hal_stream_synchronize(stream));
  EXPECT_EQ(back[0], 0x5a);
  EXPECT_EQ(back[4999], 0x5a);
  EXPECT_OK(hal_host_free(device, host));

  // host_pointer: not supported, said so.
  void* view = reinterpret_cast<void*>(0x1);
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, hal_mem_host_pointer(device, p, &view));
  EXPECT_TRUE(
      hal_testing::LastErrorIs("hal_mem_host_pointer", {"minimal:0", "gives no host address"}));
  EXPECT_EQ(view, reinterpret_cast<void*>(0x1)) << "output written on failure";

  // event_elapsed_ms: not supported, said so.
  hal_event start = nullptr, end = nullptr;
  ASSERT_OK(hal_event_create(device, &start));
  ASSERT_OK(hal_event_create(device, &end));
  ASSERT_OK(hal_event_record(start, stream));
  ASSERT_OK(hal_event_record(end, stream));
  ASSERT_OK(hal_event_synchronize(end));
  float ms = -1.0f;
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, hal_event_elapsed_ms(start, end, &ms));
  EXPECT_TRUE(
      hal_testing::LastErrorIs("hal_event_elapsed_ms", {"minimal:0", "no device timestamps"}));
  EXPECT_EQ(ms, -1.0f);

  EXPECT_OK(hal_event_destroy(start));
  EXPECT_OK(hal_event_destroy(end));
  EXPECT_OK(hal_stream_destroy(stream));
  EXPECT_OK(hal_mem_free(device, p));
}

}  // namespace
