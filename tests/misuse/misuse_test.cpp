// The misuse catalogue: every public call given NULL, dangling, garbage and out-of-range input on
// the Vulkan device. Each case checks the status the contract (hal.h) promises, that
// hal_last_error() starts with the call's name and names the problem, that the validation layer
// stayed silent, and that the device still runs vector_add_f32 correctly afterwards.
#include "misuse_util.h"
#include "vulkan/validation.h"

#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using hal_misuse::Case;
using hal_misuse::DeviceStillWorks;
using hal_misuse::MessageNames;

constexpr size_t kBufferBytes = 1024;

// What every case starts from: a device, a stream, vector_add_f32 loaded, one live buffer.
struct Ctx {
  hal_device device = nullptr;
  hal_device_info info{};
  hal_stream stream = nullptr;
  hal_module module = nullptr;
  hal_function fn = nullptr;
  hal_deviceptr buf = 0;
  std::vector<uint8_t> host = std::vector<uint8_t>(kBufferBytes * 2);

  const hal_kernel_blob* spirv() const { return hal_kernels_find("vector_add_f32", HAL_IR_SPIRV); }

  hal_deviceptr freed_pointer() {
    hal_deviceptr ptr = 0;
    EXPECT_EQ(hal_mem_alloc(device, kBufferBytes, &ptr), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_mem_free(device, ptr), HAL_SUCCESS) << hal_last_error();
    return ptr;
  }
  hal_stream destroyed_stream() {
    hal_stream s = nullptr;
    EXPECT_EQ(hal_stream_create(device, &s), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_stream_destroy(s), HAL_SUCCESS) << hal_last_error();
    return s;
  }
  hal_event destroyed_event() {
    hal_event e = nullptr;
    EXPECT_EQ(hal_event_create(device, &e), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_event_destroy(e), HAL_SUCCESS) << hal_last_error();
    return e;
  }
  // A function whose module has been unloaded.
  hal_function stale_function() {
    hal_module m = nullptr;
    hal_function f = nullptr;
    EXPECT_EQ(hal_module_load(device, spirv()->data, spirv()->size, nullptr, &m), HAL_SUCCESS)
        << hal_last_error();
    EXPECT_EQ(hal_module_get_function(m, "vector_add_f32", &f), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_module_unload(m), HAL_SUCCESS) << hal_last_error();
    return f;
  }
  hal_status launch(const hal_launch_config& config, hal_deviceptr a, hal_deviceptr b,
                    hal_deviceptr c, hal_function f = nullptr, hal_stream s = nullptr) {
    uint32_t n = 16;
    void* args[] = {&a, &b, &c, &n};
    return hal_launch(s ? s : stream, f ? f : fn, &config, args);
  }
};

constexpr hal_launch_config kGood = {{1, 1, 1}, {256, 1, 1}, 0};

template <typename T>
T garbage() {
  return reinterpret_cast<T>(static_cast<uintptr_t>(0xDEADBEEF0ull));
}

const std::vector<Case<Ctx>>& cases() {
  static const std::vector<Case<Ctx>> table = {
      // --- library and devices ---
      {"backend_count_null", HAL_ERROR_INVALID_ARGUMENT, "hal_backend_count", "count",
       [](Ctx&) { return hal_backend_count(nullptr); }},
      {"backend_info_null", HAL_ERROR_INVALID_ARGUMENT, "hal_backend_get_info", "info",
       [](Ctx&) { return hal_backend_get_info(0, nullptr); }},
      {"backend_info_index", HAL_ERROR_NOT_FOUND, "hal_backend_get_info", "99",
       [](Ctx&) {
         hal_backend_info info{};
         info.struct_size = sizeof(info);
         return hal_backend_get_info(99, &info);
       }},
      {"backend_info_struct_size", HAL_ERROR_INVALID_ARGUMENT, "hal_backend_get_info",
       "struct_size",
       [](Ctx&) {
         hal_backend_info info{};
         info.struct_size = 4;
         return hal_backend_get_info(0, &info);
       }},
      {"device_count_null", HAL_ERROR_INVALID_ARGUMENT, "hal_device_count", "count",
       [](Ctx&) { return hal_device_count(nullptr); }},
      {"device_get_null", HAL_ERROR_INVALID_ARGUMENT, "hal_device_get", "device",
       [](Ctx&) { return hal_device_get(0, nullptr); }},
      {"device_get_index", HAL_ERROR_NOT_FOUND, "hal_device_get", "1000",
       [](Ctx&) {
         hal_device d = nullptr;
         return hal_device_get(1000, &d);
       }},
      {"device_find_null_selector", HAL_ERROR_INVALID_ARGUMENT, "hal_device_find", "selector",
       [](Ctx&) {
         hal_device d = nullptr;
         return hal_device_find(nullptr, &d);
       }},
      {"device_find_null_out", HAL_ERROR_INVALID_ARGUMENT, "hal_device_find", "device",
       [](Ctx&) { return hal_device_find("vulkan:0", nullptr); }},
      {"device_find_unknown_backend", HAL_ERROR_INVALID_ARGUMENT, "hal_device_find", "bogus",
       [](Ctx&) {
         hal_device d = nullptr;
         return hal_device_find("bogus:0", &d);
       }},
      {"device_find_no_match", HAL_ERROR_NOT_FOUND, "hal_device_find", "no such gpu",
       [](Ctx&) {
         hal_device d = nullptr;
         return hal_device_find("no such gpu", &d);
       }},
      {"device_find_index_beyond", HAL_ERROR_NOT_FOUND, "hal_device_find", "vulkan:7",
       [](Ctx&) {
         hal_device d = nullptr;
         return hal_device_find("vulkan:7", &d);
       }},
      {"device_info_null_handle", HAL_ERROR_INVALID_HANDLE, "hal_device_get_info", "NULL",
       [](Ctx& c) { return hal_device_get_info(nullptr, &c.info); }},
      {"device_info_garbage_handle", HAL_ERROR_INVALID_HANDLE, "hal_device_get_info", "device",
       [](Ctx& c) { return hal_device_get_info(garbage<hal_device>(), &c.info); }},
      {"device_info_wrong_kind", HAL_ERROR_INVALID_HANDLE, "hal_device_get_info", "device",
       [](Ctx& c) { return hal_device_get_info(reinterpret_cast<hal_device>(c.stream), &c.info); }},
      {"device_info_null_info", HAL_ERROR_INVALID_ARGUMENT, "hal_device_get_info", "info",
       [](Ctx& c) { return hal_device_get_info(c.device, nullptr); }},
      {"device_info_struct_size", HAL_ERROR_INVALID_ARGUMENT, "hal_device_get_info", "struct_size",
       [](Ctx& c) {
         hal_device_info info{};
         info.struct_size = 3;
         return hal_device_get_info(c.device, &info);
       }},
      {"device_synchronize_null", HAL_ERROR_INVALID_HANDLE, "hal_device_synchronize", "NULL",
       [](Ctx&) { return hal_device_synchronize(nullptr); }},

      // --- memory ---
      {"mem_alloc_null_device", HAL_ERROR_INVALID_HANDLE, "hal_mem_alloc", "NULL",
       [](Ctx&) {
         hal_deviceptr p = 0;
         return hal_mem_alloc(nullptr, 64, &p);
       }},
      {"mem_alloc_null_out", HAL_ERROR_INVALID_ARGUMENT, "hal_mem_alloc", "ptr",
       [](Ctx& c) { return hal_mem_alloc(c.device, 64, nullptr); }},
      {"mem_alloc_zero", HAL_ERROR_INVALID_ARGUMENT, "hal_mem_alloc", "0",
       [](Ctx& c) {
         hal_deviceptr p = 0;
         return hal_mem_alloc(c.device, 0, &p);
       }},
      {"mem_alloc_above_max", HAL_ERROR_OUT_OF_MEMORY, "hal_mem_alloc", "largest allocation",
       [](Ctx& c) {
         hal_deviceptr p = 0;
         return hal_mem_alloc(c.device, c.info.max_allocation_size + 1, &p);
       }},
      {"mem_alloc_size_max", HAL_ERROR_OUT_OF_MEMORY, "hal_mem_alloc", "largest allocation",
       [](Ctx& c) {
         hal_deviceptr p = 0;
         return hal_mem_alloc(c.device, SIZE_MAX, &p);
       }},
      {"mem_free_null_device", HAL_ERROR_INVALID_HANDLE, "hal_mem_free", "NULL",
       [](Ctx& c) { return hal_mem_free(nullptr, c.buf); }},
      {"mem_free_zero", HAL_ERROR_INVALID_ARGUMENT, "hal_mem_free", "0x0",
       [](Ctx& c) { return hal_mem_free(c.device, 0); }},
      {"mem_free_never_allocated", HAL_ERROR_INVALID_ARGUMENT, "hal_mem_free", "live allocation",
       [](Ctx& c) { return hal_mem_free(c.device, 0x1234500); }},
      {"mem_free_double", HAL_ERROR_INVALID_ARGUMENT, "hal_mem_free", "live allocation",
       [](Ctx& c) { return hal_mem_free(c.device, c.freed_pointer()); }},
      {"mem_free_interior", HAL_ERROR_INVALID_ARGUMENT, "hal_mem_free", "base",
       [](Ctx& c) { return hal_mem_free(c.device, c.buf + 256); }},
      {"host_alloc_null_out", HAL_ERROR_INVALID_ARGUMENT, "hal_host_alloc", "host",
       [](Ctx& c) { return hal_host_alloc(c.device, 64, nullptr); }},
      {"host_alloc_zero", HAL_ERROR_INVALID_ARGUMENT, "hal_host_alloc", "0",
       [](Ctx& c) {
         void* p = nullptr;
         return hal_host_alloc(c.device, 0, &p);
       }},
      {"host_alloc_null_device", HAL_ERROR_INVALID_HANDLE, "hal_host_alloc", "NULL",
       [](Ctx&) {
         void* p = nullptr;
         return hal_host_alloc(nullptr, 64, &p);
       }},
      {"host_free_null", HAL_ERROR_INVALID_ARGUMENT, "hal_host_free", "host",
       [](Ctx& c) { return hal_host_free(c.device, nullptr); }},
      {"host_free_double", HAL_ERROR_INVALID_ARGUMENT, "hal_host_free", "host",
       [](Ctx& c) {
         void* p = nullptr;
         EXPECT_EQ(hal_host_alloc(c.device, 64, &p), HAL_SUCCESS) << hal_last_error();
         EXPECT_EQ(hal_host_free(c.device, p), HAL_SUCCESS) << hal_last_error();
         return hal_host_free(c.device, p);
       }},
      {"host_free_foreign", HAL_ERROR_INVALID_ARGUMENT, "hal_host_free", "host",
       [](Ctx& c) { return hal_host_free(c.device, c.host.data()); }},

      // --- streams ---
      {"stream_create_null_device", HAL_ERROR_INVALID_HANDLE, "hal_stream_create", "NULL",
       [](Ctx&) {
         hal_stream s = nullptr;
         return hal_stream_create(nullptr, &s);
       }},
      {"stream_create_null_out", HAL_ERROR_INVALID_ARGUMENT, "hal_stream_create", "stream",
       [](Ctx& c) { return hal_stream_create(c.device, nullptr); }},
      {"stream_destroy_null", HAL_ERROR_INVALID_HANDLE, "hal_stream_destroy", "NULL",
       [](Ctx&) { return hal_stream_destroy(nullptr); }},
      {"stream_destroy_double", HAL_ERROR_INVALID_HANDLE, "hal_stream_destroy", "stream",
       [](Ctx& c) { return hal_stream_destroy(c.destroyed_stream()); }},
      {"stream_destroy_garbage", HAL_ERROR_INVALID_HANDLE, "hal_stream_destroy", "stream",
       [](Ctx&) { return hal_stream_destroy(garbage<hal_stream>()); }},
      {"stream_synchronize_destroyed", HAL_ERROR_INVALID_HANDLE, "hal_stream_synchronize",
       "stream", [](Ctx& c) { return hal_stream_synchronize(c.destroyed_stream()); }},
      {"stream_query_destroyed", HAL_ERROR_INVALID_HANDLE, "hal_stream_query", "stream",
       [](Ctx& c) { return hal_stream_query(c.destroyed_stream()); }},
      {"stream_wait_null_event", HAL_ERROR_INVALID_HANDLE, "hal_stream_wait_event", "event",
       [](Ctx& c) { return hal_stream_wait_event(c.stream, nullptr); }},
      {"stream_wait_destroyed_event", HAL_ERROR_INVALID_HANDLE, "hal_stream_wait_event", "event",
       [](Ctx& c) { return hal_stream_wait_event(c.stream, c.destroyed_event()); }},
      {"stream_wait_destroyed_stream", HAL_ERROR_INVALID_HANDLE, "hal_stream_wait_event", "stream",
       [](Ctx& c) {
         hal_event e = nullptr;
         EXPECT_EQ(hal_event_create(c.device, &e), HAL_SUCCESS);
         hal_status s = hal_stream_wait_event(c.destroyed_stream(), e);
         std::string text = hal_last_error();
         EXPECT_EQ(hal_event_destroy(e), HAL_SUCCESS);
         EXPECT_EQ(text, hal_last_error());
         return s;
       }},
      {"stream_wait_event_as_stream", HAL_ERROR_INVALID_HANDLE, "hal_stream_wait_event", "stream",
       [](Ctx& c) {
         hal_event e = nullptr;
         EXPECT_EQ(hal_event_create(c.device, &e), HAL_SUCCESS);
         hal_status s = hal_stream_wait_event(reinterpret_cast<hal_stream>(e), e);
         std::string text = hal_last_error();
         EXPECT_EQ(hal_event_destroy(e), HAL_SUCCESS);
         EXPECT_EQ(text, hal_last_error());
         return s;
       }},

      // --- events ---
      {"event_create_null_device", HAL_ERROR_INVALID_HANDLE, "hal_event_create", "NULL",
       [](Ctx&) {
         hal_event e = nullptr;
         return hal_event_create(nullptr, &e);
       }},
      {"event_create_null_out", HAL_ERROR_INVALID_ARGUMENT, "hal_event_create", "event",
       [](Ctx& c) { return hal_event_create(c.device, nullptr); }},
      {"event_destroy_null", HAL_ERROR_INVALID_HANDLE, "hal_event_destroy", "NULL",
       [](Ctx&) { return hal_event_destroy(nullptr); }},
      {"event_destroy_double", HAL_ERROR_INVALID_HANDLE, "hal_event_destroy", "event",
       [](Ctx& c) { return hal_event_destroy(c.destroyed_event()); }},
      {"event_record_destroyed_event", HAL_ERROR_INVALID_HANDLE, "hal_event_record", "event",
       [](Ctx& c) { return hal_event_record(c.destroyed_event(), c.stream); }},
      {"event_record_destroyed_stream", HAL_ERROR_INVALID_HANDLE, "hal_event_record", "stream",
       [](Ctx& c) {
         hal_event e = nullptr;
         EXPECT_EQ(hal_event_create(c.device, &e), HAL_SUCCESS);
         hal_status s = hal_event_record(e, c.destroyed_stream());
         std::string text = hal_last_error();
         EXPECT_EQ(hal_event_destroy(e), HAL_SUCCESS);
         EXPECT_EQ(text, hal_last_error());
         return s;
       }},
      {"event_synchronize_destroyed", HAL_ERROR_INVALID_HANDLE, "hal_event_synchronize", "event",
       [](Ctx& c) { return hal_event_synchronize(c.destroyed_event()); }},
      {"event_query_null", HAL_ERROR_INVALID_HANDLE, "hal_event_query", "NULL",
       [](Ctx&) { return hal_event_query(nullptr); }},
      {"event_elapsed_null_ms", HAL_ERROR_INVALID_ARGUMENT, "hal_event_elapsed_ms", "ms",
       [](Ctx& c) {
         hal_event e = nullptr;
         EXPECT_EQ(hal_event_create(c.device, &e), HAL_SUCCESS);
         hal_status s = hal_event_elapsed_ms(e, e, nullptr);
         std::string text = hal_last_error();
         EXPECT_EQ(hal_event_destroy(e), HAL_SUCCESS);
         EXPECT_EQ(text, hal_last_error());
         return s;
       }},
      {"event_elapsed_never_recorded", HAL_ERROR_INVALID_ARGUMENT, "hal_event_elapsed_ms",
       "recorded",
       [](Ctx& c) {
         hal_event e = nullptr;
         float ms = 0;
         EXPECT_EQ(hal_event_create(c.device, &e), HAL_SUCCESS);
         hal_status s = hal_event_elapsed_ms(e, e, &ms);
         std::string text = hal_last_error();
         EXPECT_EQ(hal_event_destroy(e), HAL_SUCCESS);
         EXPECT_EQ(text, hal_last_error());
         return s;
       }},
      {"event_elapsed_destroyed", HAL_ERROR_INVALID_HANDLE, "hal_event_elapsed_ms", "event",
       [](Ctx& c) {
         float ms = 0;
         hal_event e = c.destroyed_event();
         return hal_event_elapsed_ms(e, e, &ms);
       }},

      // --- copies and fills ---
      {"htod_overrun_one_byte", HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_htod", "1025",
       [](Ctx& c) { return hal_memcpy_htod(c.stream, c.buf, c.host.data(), kBufferBytes + 1); }},
      {"htod_offset_overrun", HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_htod", "allocation",
       [](Ctx& c) { return hal_memcpy_htod(c.stream, c.buf + kBufferBytes - 3, c.host.data(), 4); }},
      {"dtoh_overrun_one_byte", HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtoh", "1025",
       [](Ctx& c) { return hal_memcpy_dtoh(c.stream, c.host.data(), c.buf, kBufferBytes + 1); }},
      {"dtod_dst_overrun", HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtod", "allocation",
       [](Ctx& c) { return hal_memcpy_dtod(c.stream, c.buf + 1, c.buf, kBufferBytes); }},
      {"dtod_src_freed", HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtod", "allocation",
       [](Ctx& c) { return hal_memcpy_dtod(c.stream, c.buf, c.freed_pointer(), 16); }},
      {"htod_freed", HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_htod", "allocation",
       [](Ctx& c) { return hal_memcpy_htod(c.stream, c.freed_pointer(), c.host.data(), 16); }},
      {"htod_zero_pointer", HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_htod", "null device address",
       [](Ctx& c) { return hal_memcpy_htod(c.stream, 0, c.host.data(), 16); }},
      {"htod_null_source", HAL_ERROR_INVALID_ARGUMENT, "hal_memcpy_htod", "src",
       [](Ctx& c) { return hal_memcpy_htod(c.stream, c.buf, nullptr, 16); }},
      {"dtoh_null_destination", HAL_ERROR_INVALID_ARGUMENT, "hal_memcpy_dtoh", "dst",
       [](Ctx& c) { return hal_memcpy_dtoh(c.stream, nullptr, c.buf, 16); }},
      {"htod_destroyed_stream", HAL_ERROR_INVALID_HANDLE, "hal_memcpy_htod", "stream",
       [](Ctx& c) { return hal_memcpy_htod(c.destroyed_stream(), c.buf, c.host.data(), 16); }},
      {"htod_zero_size_destroyed_stream", HAL_ERROR_INVALID_HANDLE, "hal_memcpy_htod", "stream",
       [](Ctx& c) { return hal_memcpy_htod(c.destroyed_stream(), c.buf, c.host.data(), 0); }},
      {"memset_d8_overrun", HAL_ERROR_OUT_OF_RANGE, "hal_memset_d8", "allocation",
       [](Ctx& c) { return hal_memset_d8(c.stream, c.buf, 0, kBufferBytes + 1); }},
      {"memset_d32_overrun", HAL_ERROR_OUT_OF_RANGE, "hal_memset_d32", "allocation",
       [](Ctx& c) { return hal_memset_d32(c.stream, c.buf + 4, 0, kBufferBytes / 4); }},
      {"memset_d32_unaligned", HAL_ERROR_INVALID_ARGUMENT, "hal_memset_d32", "aligned",
       [](Ctx& c) { return hal_memset_d32(c.stream, c.buf + 2, 0, 4); }},
      {"memset_d32_count_overflow", HAL_ERROR_INVALID_ARGUMENT, "hal_memset_d32", "overflows",
       [](Ctx& c) { return hal_memset_d32(c.stream, c.buf, 0, SIZE_MAX / 2); }},

      // --- modules and functions ---
      {"module_load_null_device", HAL_ERROR_INVALID_HANDLE, "hal_module_load", "NULL",
       [](Ctx& c) {
         hal_module m = nullptr;
         return hal_module_load(nullptr, c.spirv()->data, c.spirv()->size, nullptr, &m);
       }},
      {"module_load_null_blob", HAL_ERROR_INVALID_ARGUMENT, "hal_module_load", "blob",
       [](Ctx& c) {
         hal_module m = nullptr;
         return hal_module_load(c.device, nullptr, 64, nullptr, &m);
       }},
      {"module_load_zero_size", HAL_ERROR_INVALID_ARGUMENT, "hal_module_load", "size",
       [](Ctx& c) {
         hal_module m = nullptr;
         return hal_module_load(c.device, c.spirv()->data, 0, nullptr, &m);
       }},
      {"module_load_null_out", HAL_ERROR_INVALID_ARGUMENT, "hal_module_load", "module",
       [](Ctx& c) { return hal_module_load(c.device, c.spirv()->data, c.spirv()->size, nullptr, nullptr); }},
      // A cubin (an ELF image): Vulkan devices take SPIR-V and PTX, never NVIDIA's binaries.
      {"module_load_wrong_ir_for_device", HAL_ERROR_NOT_SUPPORTED, "hal_module_load", "cubin",
       [](Ctx& c) {
         unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
         hal_module m = nullptr;
         return hal_module_load(c.device, elf, sizeof elf, nullptr, &m);
       }},
      {"module_load_declared_ir_mismatch", HAL_ERROR_INVALID_IR, "hal_module_load", "declares",
       [](Ctx& c) {
         hal_module_options options{};
         options.struct_size = sizeof(options);
         options.ir = HAL_IR_PTX;
         hal_module m = nullptr;
         return hal_module_load(c.device, c.spirv()->data, c.spirv()->size, &options, &m);
       }},
      {"module_load_options_struct_size", HAL_ERROR_INVALID_ARGUMENT, "hal_module_load",
       "struct_size",
       [](Ctx& c) {
         hal_module_options options{};
         options.struct_size = 2;
         hal_module m = nullptr;
         return hal_module_load(c.device, c.spirv()->data, c.spirv()->size, &options, &m);
       }},
      {"module_load_truncated_spirv", HAL_ERROR_INVALID_IR, "hal_module_load", "SPIR-V",
       [](Ctx& c) {
         hal_module m = nullptr;
         return hal_module_load(c.device, c.spirv()->data, (c.spirv()->size / 2) & ~size_t{3},
                                nullptr, &m);
       }},
      {"module_load_truncated_odd_size", HAL_ERROR_INVALID_IR, "hal_module_load", "SPIR-V",
       [](Ctx& c) {
         hal_module m = nullptr;
         return hal_module_load(c.device, c.spirv()->data, c.spirv()->size - 1, nullptr, &m);
       }},
      {"module_load_corrupted_spirv", HAL_ERROR_INVALID_IR, "hal_module_load", "SPIR-V",
       [](Ctx& c) {
         std::vector<uint8_t> bytes(static_cast<const uint8_t*>(c.spirv()->data),
                                    static_cast<const uint8_t*>(c.spirv()->data) + c.spirv()->size);
         // Word 5 starts the instruction stream; make its word count 0 (never valid).
         std::memset(bytes.data() + 20, 0, 4);
         hal_module m = nullptr;
         return hal_module_load(c.device, bytes.data(), bytes.size(), nullptr, &m);
       }},
      {"module_load_garbage", HAL_ERROR_INVALID_IR, "hal_module_load", "not",
       [](Ctx& c) {
         const char text[] = "definitely not a kernel";
         hal_module m = nullptr;
         return hal_module_load(c.device, text, sizeof(text), nullptr, &m);
       }},
      {"module_load_file_missing", HAL_ERROR_NOT_FOUND, "hal_module_load_file", "cannot open",
       [](Ctx& c) {
         hal_module m = nullptr;
         return hal_module_load_file(c.device, "no/such/kernel.spv", nullptr, &m);
       }},
      {"module_load_file_null_path", HAL_ERROR_INVALID_ARGUMENT, "hal_module_load_file", "path",
       [](Ctx& c) {
         hal_module m = nullptr;
         return hal_module_load_file(c.device, nullptr, nullptr, &m);
       }},
      {"module_unload_null", HAL_ERROR_INVALID_HANDLE, "hal_module_unload", "NULL",
       [](Ctx&) { return hal_module_unload(nullptr); }},
      {"module_unload_double", HAL_ERROR_INVALID_HANDLE, "hal_module_unload", "module",
       [](Ctx& c) {
         hal_module m = nullptr;
         EXPECT_EQ(hal_module_load(c.device, c.spirv()->data, c.spirv()->size, nullptr, &m),
                   HAL_SUCCESS);
         EXPECT_EQ(hal_module_unload(m), HAL_SUCCESS);
         return hal_module_unload(m);
       }},
      {"get_function_unknown_name", HAL_ERROR_NOT_FOUND, "hal_module_get_function",
       "vector_add_f32",
       [](Ctx& c) {
         hal_function f = nullptr;
         return hal_module_get_function(c.module, "vector_add_f64", &f);
       }},
      {"get_function_null_name", HAL_ERROR_INVALID_ARGUMENT, "hal_module_get_function", "name",
       [](Ctx& c) {
         hal_function f = nullptr;
         return hal_module_get_function(c.module, nullptr, &f);
       }},
      {"get_function_null_out", HAL_ERROR_INVALID_ARGUMENT, "hal_module_get_function", "function",
       [](Ctx& c) { return hal_module_get_function(c.module, "vector_add_f32", nullptr); }},
      {"get_function_unloaded_module", HAL_ERROR_INVALID_HANDLE, "hal_module_get_function",
       "module",
       [](Ctx& c) {
         hal_module m = nullptr;
         EXPECT_EQ(hal_module_load(c.device, c.spirv()->data, c.spirv()->size, nullptr, &m),
                   HAL_SUCCESS);
         EXPECT_EQ(hal_module_unload(m), HAL_SUCCESS);
         hal_function f = nullptr;
         return hal_module_get_function(m, "vector_add_f32", &f);
       }},
      {"function_info_stale", HAL_ERROR_INVALID_HANDLE, "hal_function_get_info", "function",
       [](Ctx& c) {
         hal_function_info info{};
         info.struct_size = sizeof(info);
         return hal_function_get_info(c.stale_function(), &info);
       }},
      {"function_info_null", HAL_ERROR_INVALID_ARGUMENT, "hal_function_get_info", "info",
       [](Ctx& c) { return hal_function_get_info(c.fn, nullptr); }},
      {"function_param_beyond", HAL_ERROR_NOT_FOUND, "hal_function_get_param", "index 4",
       [](Ctx& c) {
         hal_param_info p{};
         p.struct_size = sizeof(p);
         return hal_function_get_param(c.fn, 4, &p);
       }},
      {"function_param_struct_size", HAL_ERROR_INVALID_ARGUMENT, "hal_function_get_param",
       "struct_size",
       [](Ctx& c) {
         hal_param_info p{};
         p.struct_size = 1;
         return hal_function_get_param(c.fn, 0, &p);
       }},

      // --- launch ---
      {"launch_null_arg", HAL_ERROR_INVALID_ARGUMENT, "hal_launch", "args[3]",
       [](Ctx& c) {
         void* args[] = {&c.buf, &c.buf, &c.buf, nullptr};
         return hal_launch(c.stream, c.fn, &kGood, args);
       }},
      {"launch_null_args", HAL_ERROR_INVALID_ARGUMENT, "hal_launch", "args",
       [](Ctx& c) { return hal_launch(c.stream, c.fn, &kGood, nullptr); }},
      {"launch_null_config", HAL_ERROR_INVALID_ARGUMENT, "hal_launch", "config",
       [](Ctx& c) {
         uint32_t n = 1;
         void* args[] = {&c.buf, &c.buf, &c.buf, &n};
         return hal_launch(c.stream, c.fn, nullptr, args);
       }},
      {"launch_freed_pointer_arg", HAL_ERROR_OUT_OF_RANGE, "hal_launch", "allocation",
       [](Ctx& c) { return c.launch(kGood, c.buf, c.freed_pointer(), c.buf); }},
      {"launch_zero_pointer_arg", HAL_ERROR_OUT_OF_RANGE, "hal_launch", "null device address",
       [](Ctx& c) { return c.launch(kGood, 0, c.buf, c.buf); }},
      {"launch_grid_zero", HAL_ERROR_OUT_OF_RANGE, "hal_launch", "grid.y is 0",
       [](Ctx& c) { return c.launch({{1, 0, 1}, {256, 1, 1}, 0}, c.buf, c.buf, c.buf); }},
      {"launch_grid_beyond_limit", HAL_ERROR_OUT_OF_RANGE, "hal_launch", "grid.x",
       [](Ctx& c) {
         return c.launch({{c.info.max_grid_dim[0] + 1, 1, 1}, {256, 1, 1}, 0}, c.buf, c.buf,
                         c.buf);
       }},
      {"launch_grid_z_beyond_limit", HAL_ERROR_OUT_OF_RANGE, "hal_launch", "grid.z",
       [](Ctx& c) {
         return c.launch({{1, 1, c.info.max_grid_dim[2] + 1}, {256, 1, 1}, 0}, c.buf, c.buf,
                         c.buf);
       }},
      {"launch_block_beyond_limit", HAL_ERROR_OUT_OF_RANGE, "hal_launch", "block",
       [](Ctx& c) {
         return c.launch({{1, 1, 1}, {c.info.max_block_dim[0] + 1, 1, 1}, 0}, c.buf, c.buf,
                         c.buf);
       }},
      {"launch_block_not_fixed_size", HAL_ERROR_OUT_OF_RANGE, "hal_launch", "256",
       [](Ctx& c) { return c.launch({{1, 1, 1}, {128, 1, 1}, 0}, c.buf, c.buf, c.buf); }},
      {"launch_dynamic_shared_unsizable", HAL_ERROR_NOT_SUPPORTED, "hal_launch",
       "cannot size shared memory",
       [](Ctx& c) {
         return c.launch({{1, 1, 1}, {256, 1, 1}, c.info.max_shared_memory_per_block + 1}, c.buf,
                         c.buf, c.buf);
       }},
      {"launch_stale_function", HAL_ERROR_INVALID_HANDLE, "hal_launch", "function",
       [](Ctx& c) { return c.launch(kGood, c.buf, c.buf, c.buf, c.stale_function()); }},
      {"launch_destroyed_stream", HAL_ERROR_INVALID_HANDLE, "hal_launch", "stream",
       [](Ctx& c) { return c.launch(kGood, c.buf, c.buf, c.buf, nullptr, c.destroyed_stream()); }},
      {"launch_null_function", HAL_ERROR_INVALID_HANDLE, "hal_launch", "NULL",
       [](Ctx& c) {
         uint32_t n = 1;
         void* args[] = {&c.buf, &c.buf, &c.buf, &n};
         return hal_launch(c.stream, nullptr, &kGood, args);
       }},
      {"launch_module_as_function", HAL_ERROR_INVALID_HANDLE, "hal_launch", "function",
       [](Ctx& c) {
         return c.launch(kGood, c.buf, c.buf, c.buf, reinterpret_cast<hal_function>(c.module));
       }},
  };
  return table;
}

class Misuse : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    ASSERT_EQ(hal_device_find("vulkan:0", &c_.device), HAL_SUCCESS) << hal_last_error();
    c_.info.struct_size = sizeof(c_.info);
    ASSERT_EQ(hal_device_get_info(c_.device, &c_.info), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_stream_create(c_.device, &c_.stream), HAL_SUCCESS) << hal_last_error();
    const hal_kernel_blob* blob = c_.spirv();
    ASSERT_NE(blob, nullptr);
    ASSERT_EQ(hal_module_load(c_.device, blob->data, blob->size, nullptr, &c_.module), HAL_SUCCESS)
        << hal_last_error();
    ASSERT_EQ(hal_module_get_function(c_.module, "vector_add_f32", &c_.fn), HAL_SUCCESS);
    ASSERT_EQ(hal_mem_alloc(c_.device, kBufferBytes, &c_.buf), HAL_SUCCESS) << hal_last_error();
  }
  void TearDown() override {
    if (c_.buf != 0) {
      EXPECT_EQ(hal_mem_free(c_.device, c_.buf), HAL_SUCCESS) << hal_last_error();
    }
    if (c_.module != nullptr) {
      EXPECT_EQ(hal_module_unload(c_.module), HAL_SUCCESS);
    }
    if (c_.stream != nullptr) {
      EXPECT_EQ(hal_stream_destroy(c_.stream), HAL_SUCCESS);
    }
    EXPECT_EQ(hal::vulkan::validation_error_count(), 0u)
        << "the Vulkan validation layer reported errors (see the log above)";
  }
  Ctx c_;
};

TEST_P(Misuse, FailsCleanlyAndTheDeviceStillWorks) {
  const Case<Ctx>& misuse = cases()[GetParam()];
  const hal_status status = misuse.run(c_);
  EXPECT_EQ(status, misuse.expected)
      << misuse.call << " returned " << hal_status_string(status) << ", expected "
      << hal_status_string(misuse.expected) << "; hal_last_error: " << hal_last_error();
  if (status != HAL_SUCCESS) {
    EXPECT_TRUE(MessageNames(misuse.call, misuse.phrase));
  }
  EXPECT_EQ(hal_stream_synchronize(c_.stream), HAL_SUCCESS) << hal_last_error();
  EXPECT_TRUE(DeviceStillWorks(c_.device));
}

INSTANTIATE_TEST_SUITE_P(Catalogue, Misuse, ::testing::Range<size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& param_info) {
                           return std::string(cases()[param_info.param].name);
                         });

TEST(MisuseCatalogue, HasAtLeastSixtyCases) {
  EXPECT_GE(cases().size(), 60u);
}

// Documented, not a failure: destroying a stream with work pending waits for it, then destroys.
TEST(MisuseStreams, DestroyWithPendingWorkWaitsThenDestroys) {
  hal_device device = nullptr;
  ASSERT_EQ(hal_device_find("vulkan:0", &device), HAL_SUCCESS) << hal_last_error();
  const hal_kernel_blob* blob = hal_kernels_find("vector_add_f32", HAL_IR_SPIRV);
  ASSERT_NE(blob, nullptr);
  hal_module module = nullptr;
  hal_function fn = nullptr;
  ASSERT_EQ(hal_module_load(device, blob->data, blob->size, nullptr, &module), HAL_SUCCESS);
  ASSERT_EQ(hal_module_get_function(module, "vector_add_f32", &fn), HAL_SUCCESS);
  constexpr uint32_t kCount = 4096;
  std::vector<float> ones(kCount, 1.0f), out(kCount, 0.0f);
  hal_deviceptr a = 0, c = 0;
  ASSERT_EQ(hal_mem_alloc(device, kCount * 4, &a), HAL_SUCCESS);
  ASSERT_EQ(hal_mem_alloc(device, kCount * 4, &c), HAL_SUCCESS);
  hal_stream stream = nullptr;
  ASSERT_EQ(hal_stream_create(device, &stream), HAL_SUCCESS);
  ASSERT_EQ(hal_memcpy_htod(stream, a, ones.data(), kCount * 4), HAL_SUCCESS);
  // c = a + a, then c = c + c eight times: 2^9 = 512 if every launch ran, in order.
  uint32_t n = kCount;
  void* first[] = {&a, &a, &c, &n};
  void* again[] = {&c, &c, &c, &n};
  const hal_launch_config config = {{kCount / 256, 1, 1}, {256, 1, 1}, 0};
  ASSERT_EQ(hal_launch(stream, fn, &config, first), HAL_SUCCESS) << hal_last_error();
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(hal_launch(stream, fn, &config, again), HAL_SUCCESS) << hal_last_error();
  }
  ASSERT_EQ(hal_memcpy_dtoh(stream, out.data(), c, kCount * 4), HAL_SUCCESS);
  EXPECT_EQ(hal_stream_destroy(stream), HAL_SUCCESS) << hal_last_error();
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(out[i], 512.0f) << "element " << i;
  EXPECT_EQ(hal_stream_query(stream), HAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(hal_mem_free(device, a), HAL_SUCCESS);
  EXPECT_EQ(hal_mem_free(device, c), HAL_SUCCESS);
  EXPECT_EQ(hal_module_unload(module), HAL_SUCCESS);
  EXPECT_TRUE(DeviceStillWorks(device));
  EXPECT_EQ(hal::vulkan::validation_error_count(), 0u);
}

}  // namespace
