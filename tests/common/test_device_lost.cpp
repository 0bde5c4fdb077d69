// The device-lost latch: once a backend reports HAL_ERROR_DEVICE_LOST for a device (as a call's
// status, or through the core's hal_driver_host.device_lost), every later call on that device
// fails with it at once, quoting the cause, without reaching the backend. A lost device stays
// lost for the whole process, hence this separate test executable; each test loses its own.
#include "test_util.h"

#include <string>
#include <vector>

namespace hal_test {
namespace {

const bool kInstalled = hal::set_drivers_for_testing({double_factory(), twin_factory()});

TEST(DeviceLost, LatchesForEveryLaterCallOnThatDeviceOnly) {
  ASSERT_TRUE(kInstalled);
  hal_device gpu = nullptr;
  hal_device cpu = nullptr;
  ASSERT_OK(hal_device_get(0, &gpu));
  ASSERT_OK(hal_device_get(1, &cpu));
  DoubleDevice* d = double_device(gpu);
  ASSERT_NE(d, nullptr);

  // Objects made while the device still worked.
  const std::vector<uint8_t> blob = spirv_blob(400);
  declare_module(blob, "k(ptr)");
  hal_stream stream = nullptr;
  hal_event recorded = nullptr;
  hal_event recorded2 = nullptr;
  hal_event unrecorded = nullptr;
  hal_module module = nullptr;
  hal_function fn = nullptr;
  hal_deviceptr ptr = 0;
  hal_deviceptr ptr2 = 0;
  void* host = nullptr;
  ASSERT_OK(hal_stream_create(gpu, &stream));
  ASSERT_OK(hal_event_create(gpu, &recorded));
  ASSERT_OK(hal_event_create(gpu, &recorded2));
  ASSERT_OK(hal_event_create(gpu, &unrecorded));
  ASSERT_OK(hal_module_load(gpu, blob.data(), blob.size(), nullptr, &module));
  ASSERT_OK(hal_module_get_function(module, "k", &fn));
  ASSERT_OK(hal_mem_alloc(gpu, 256, &ptr));
  ASSERT_OK(hal_mem_alloc(gpu, 256, &ptr2));
  ASSERT_OK(hal_host_alloc(gpu, 64, &host));
  ASSERT_OK(hal_event_record(recorded, stream));
  ASSERT_OK(hal_event_record(recorded2, stream));

  // The backend reports the loss once, on a copy.
  uint8_t bytes[16] = {};
  d->fail_next(HAL_ERROR_DEVICE_LOST, "the GPU fell off the bus (injected)");
  ASSERT_HAL(HAL_ERROR_DEVICE_LOST, hal_memcpy_htod(stream, ptr, bytes, sizeof(bytes)));
  EXPECT_TRUE(LastErrorIs("hal_memcpy_htod", {"the GPU fell off the bus (injected)"}));

  const uint64_t calls = d->calls();
  const size_t launches = d->launches().size();
  hal_launch_config config{{1, 1, 1}, {1, 1, 1}, 0};
  void* args[] = {&ptr};
  hal_deviceptr out_ptr = 0x77;
  void* out_host = nullptr;
  hal_stream out_stream = nullptr;
  hal_event out_event = nullptr;
  hal_module out_module = nullptr;
  float ms = 0;
  const struct {
    const char* call;
    hal_status status;
  } later[] = {
      {"hal_memcpy_htod", hal_memcpy_htod(stream, ptr, bytes, sizeof(bytes))},
      {"hal_memcpy_htod", hal_memcpy_htod(stream, ptr, bytes, 0)},
      {"hal_memcpy_dtoh", hal_memcpy_dtoh(stream, bytes, ptr, sizeof(bytes))},
      {"hal_memcpy_dtod", hal_memcpy_dtod(stream, ptr2, ptr, 16)},
      {"hal_memset_d8", hal_memset_d8(stream, ptr, 0, 16)},
      {"hal_memset_d32", hal_memset_d32(stream, ptr, 0, 4)},
      {"hal_launch", hal_launch(stream, fn, &config, args)},
      {"hal_stream_synchronize", hal_stream_synchronize(stream)},
      {"hal_stream_query", hal_stream_query(stream)},
      {"hal_stream_wait_event", hal_stream_wait_event(stream, recorded)},
      {"hal_event_record", hal_event_record(unrecorded, stream)},
      {"hal_event_synchronize", hal_event_synchronize(recorded)},
      {"hal_event_query", hal_event_query(recorded)},
      {"hal_event_elapsed_ms", hal_event_elapsed_ms(recorded, recorded2, &ms)},
      {"hal_device_synchronize", hal_device_synchronize(gpu)},
      {"hal_mem_alloc", hal_mem_alloc(gpu, 64, &out_ptr)},
      {"hal_host_alloc", hal_host_alloc(gpu, 64, &out_host)},
      {"hal_stream_create", hal_stream_create(gpu, &out_stream)},
      {"hal_event_create", hal_event_create(gpu, &out_event)},
      {"hal_module_load", hal_module_load(gpu, blob.data(), blob.size(), nullptr, &out_module)},
  };
  // (The calls above ran in order while the array was built; check each result.)
  for (const auto& l : later) {
    EXPECT_EQ(l.status, HAL_ERROR_DEVICE_LOST)
        << l.call << " returned " << hal_status_string(l.status);
  }
  // One more, checking the text.
  EXPECT_HAL(HAL_ERROR_DEVICE_LOST, hal_stream_synchronize(stream));
  EXPECT_TRUE(LastErrorIs("hal_stream_synchronize",
                          {"double:1", "was lost earlier", "the GPU fell off the bus (injected)"}));
  EXPECT_EQ(d->calls(), calls) << "a call on the lost device reached the backend";
  EXPECT_EQ(d->launches().size(), launches);
  EXPECT_EQ(out_ptr, 0x77u);
  EXPECT_EQ(out_host, nullptr);
  EXPECT_EQ(out_stream, nullptr);
  EXPECT_EQ(out_event, nullptr);
  EXPECT_EQ(out_module, nullptr);

  // Handle validation still comes first, and releasing objects still works (without the
  // backend: there is nothing left to release on a lost device).
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_stream_synchronize(nullptr));
  hal_device_info info{};
  info.struct_size = sizeof(info);
  EXPECT_OK(hal_device_get_info(gpu, &info));
  EXPECT_OK(hal_mem_free(gpu, ptr));
  EXPECT_OK(hal_mem_free(gpu, ptr2));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_free(gpu, ptr)) << "the free still counted";
  EXPECT_OK(hal_host_free(gpu, host));
  EXPECT_OK(hal_stream_destroy(stream));
  EXPECT_OK(hal_event_destroy(recorded));
  EXPECT_OK(hal_event_destroy(recorded2));
  EXPECT_OK(hal_event_destroy(unrecorded));
  EXPECT_OK(hal_module_unload(module));
  EXPECT_EQ(d->calls(), calls);

  // The other device is unaffected.
  hal_stream cpu_stream = nullptr;
  hal_deviceptr cpu_ptr = 0;
  ASSERT_OK(hal_stream_create(cpu, &cpu_stream));
  ASSERT_OK(hal_mem_alloc(cpu, 16, &cpu_ptr));
  EXPECT_OK(hal_memcpy_htod(cpu_stream, cpu_ptr, bytes, sizeof(bytes)));
  EXPECT_OK(hal_stream_synchronize(cpu_stream));
  EXPECT_OK(hal_mem_free(cpu, cpu_ptr));
  EXPECT_OK(hal_stream_destroy(cpu_stream));
  EXPECT_OK(hal_device_synchronize(cpu));
}

TEST(DeviceLost, ReportedByADeviceCallLatchesToo) {
  hal_device cpu = nullptr;
  ASSERT_OK(hal_device_find("cpu", &cpu));
  DoubleDevice* d = double_device(cpu);
  ASSERT_NE(d, nullptr);
  hal_deviceptr p = 0;
  d->fail_next(HAL_ERROR_DEVICE_LOST, "device removed (injected)");
  ASSERT_HAL(HAL_ERROR_DEVICE_LOST, hal_mem_alloc(cpu, 16, &p));
  const uint64_t calls = d->calls();
  EXPECT_HAL(HAL_ERROR_DEVICE_LOST, hal_mem_alloc(cpu, 16, &p));
  EXPECT_TRUE(LastErrorIs("hal_mem_alloc", {"was lost earlier"}));
  EXPECT_HAL(HAL_ERROR_DEVICE_LOST, hal_device_synchronize(cpu));
  EXPECT_EQ(d->calls(), calls);
}

// A driver whose fault leaves the device unusable while the call reports the fault itself (a
// poisoned CUDA context: HAL_ERROR_LAUNCH_FAILED) tells the core through its host; the core then
// latches as for HAL_ERROR_DEVICE_LOST.
TEST(DeviceLost, ReportedThroughTheHostLatchesWhileTheCallKeepsItsStatus) {
  hal_device device = nullptr;
  hal_device other = nullptr;
  ASSERT_OK(hal_device_find("twin:0", &device));
  ASSERT_OK(hal_device_find("twin:1", &other));
  DoubleDevice* d = double_device(device);
  ASSERT_NE(d, nullptr);
  hal_stream stream = nullptr;
  hal_deviceptr p = 0;
  ASSERT_OK(hal_stream_create(device, &stream));
  ASSERT_OK(hal_mem_alloc(device, 64, &p));

  d->fail_next_and_lose(HAL_ERROR_LAUNCH_FAILED, "the kernel faulted at 0x40 (injected)");
  ASSERT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_stream_synchronize(stream));
  EXPECT_TRUE(LastErrorIs("hal_stream_synchronize", {"the kernel faulted at 0x40 (injected)"}));

  const uint64_t calls = d->calls();
  EXPECT_HAL(HAL_ERROR_DEVICE_LOST, hal_memset_d8(stream, p, 0, 64));
  EXPECT_TRUE(LastErrorIs("hal_memset_d8",
                          {"twin:0", "was lost earlier", "the kernel faulted at 0x40 (injected)"}));
  EXPECT_HAL(HAL_ERROR_DEVICE_LOST, hal_stream_synchronize(stream));
  EXPECT_HAL(HAL_ERROR_DEVICE_LOST, hal_mem_alloc(device, 16, &p));
  EXPECT_EQ(d->calls(), calls) << "a call on the lost device reached the backend";
  EXPECT_OK(hal_mem_free(device, p));
  EXPECT_OK(hal_stream_destroy(stream));

  // Its sibling keeps working.
  hal_deviceptr q = 0;
  EXPECT_OK(hal_mem_alloc(other, 16, &q));
  EXPECT_OK(hal_mem_free(other, q));
}

}  // namespace
}  // namespace hal_test
