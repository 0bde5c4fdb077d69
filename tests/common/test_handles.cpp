// Handle validation: every public call that takes a handle refuses NULL, destroyed, garbage and
// wrong-kind handles with HAL_ERROR_INVALID_HANDLE and a message, before a backend sees them.
#include "test_util.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace hal_test {
namespace {

enum class Kind { kDevice, kStream, kEvent, kModule, kFunction };

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kDevice:
      return "device";
    case Kind::kStream:
      return "stream";
    case Kind::kEvent:
      return "event";
    case Kind::kModule:
      return "module";
    case Kind::kFunction:
      return "function";
  }
  return "?";
}

// The runtime tags handle values in the top 16 bits (0x4841) and keeps the kind in the low 4
// bits (1 = device ... 5 = function); a forged value with the right tag and kind bits and a
// counter far beyond any issued one.
uint64_t forged(Kind kind) {
  return (uint64_t{0x4841} << 48) | (uint64_t{0xFFFFFFFFF} << 4) |
         (static_cast<uint64_t>(kind) + 1);
}

// What the first handle of |kind| would be without the tag: a small integer that must not be
// mistaken for a handle.
uint64_t untagged(Kind kind) {
  return uint64_t{1} << 4 | (static_cast<uint64_t>(kind) + 1);
}

struct Case {
  const char* call;
  Kind kind;
  std::function<hal_status(uint64_t)> run;
};

class Handles : public DoubleTest {
 protected:
  void SetUp() override {
    DoubleTest::SetUp();
    blob_ = spirv_blob(100);
    declare_module(blob_, "k(ptr)");
    module_ = load(gpu, blob_);
    fn_ = function(module_, "k");
    ev_ = event(gpu);
    ev2_ = event(gpu);
    ASSERT_OK(hal_event_record(ev_, stream));
    ASSERT_OK(hal_event_record(ev2_, stream));
    ptr_ = alloc(256);
    ASSERT_OK(hal_host_alloc(gpu, 64, &host_));

    // Destroyed handles of every kind.
    hal_stream s = nullptr;
    ASSERT_OK(hal_stream_create(gpu, &s));
    ASSERT_OK(hal_stream_destroy(s));
    hal_event e = nullptr;
    ASSERT_OK(hal_event_create(gpu, &e));
    ASSERT_OK(hal_event_destroy(e));
    hal_module m = nullptr;
    ASSERT_OK(hal_module_load(gpu, blob_.data(), blob_.size(), nullptr, &m));
    hal_function f = nullptr;
    ASSERT_OK(hal_module_get_function(m, "k", &f));
    ASSERT_OK(hal_module_unload(m));
    destroyed_ = {forged(Kind::kDevice), as_value(s), as_value(e), as_value(m), as_value(f)};
    // A live handle of another kind, for each kind.
    wrong_kind_ = {as_value(stream), as_value(ev_), as_value(stream), as_value(fn_),
                   as_value(module_)};
  }

  void TearDown() override {
    EXPECT_OK(hal_host_free(gpu, host_));
    DoubleTest::TearDown();
  }

  template <typename H>
  static uint64_t as_value(H handle) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
  }
  template <typename H>
  static H as(uint64_t value) {
    return reinterpret_cast<H>(static_cast<uintptr_t>(value));
  }

  std::vector<Case> cases() {
    hal_launch_config config{{1, 1, 1}, {1, 1, 1}, 0};
    void* args[] = {&ptr_};
    static char scratch[64];
    return {
        {"hal_device_get_info", Kind::kDevice,
         [](uint64_t h) {
           hal_device_info info{};
           info.struct_size = sizeof(info);
           return hal_device_get_info(as<hal_device>(h), &info);
         }},
        {"hal_device_synchronize", Kind::kDevice,
         [](uint64_t h) { return hal_device_synchronize(as<hal_device>(h)); }},
        {"hal_mem_alloc", Kind::kDevice,
         [](uint64_t h) {
           hal_deviceptr p = 0;
           return hal_mem_alloc(as<hal_device>(h), 64, &p);
         }},
        {"hal_mem_free", Kind::kDevice,
         [this](uint64_t h) { return hal_mem_free(as<hal_device>(h), ptr_); }},
        {"hal_host_alloc", Kind::kDevice,
         [](uint64_t h) {
           void* p = nullptr;
           return hal_host_alloc(as<hal_device>(h), 64, &p);
         }},
        {"hal_host_free", Kind::kDevice,
         [this](uint64_t h) { return hal_host_free(as<hal_device>(h), host_); }},
        {"hal_mem_host_pointer", Kind::kDevice,
         [this](uint64_t h) {
           void* p = nullptr;
           return hal_mem_host_pointer(as<hal_device>(h), ptr_, &p);
         }},
        {"hal_stream_create", Kind::kDevice,
         [](uint64_t h) {
           hal_stream s = nullptr;
           return hal_stream_create(as<hal_device>(h), &s);
         }},
        {"hal_event_create", Kind::kDevice,
         [](uint64_t h) {
           hal_event e = nullptr;
           return hal_event_create(as<hal_device>(h), &e);
         }},
        {"hal_module_load", Kind::kDevice,
         [this](uint64_t h) {
           hal_module m = nullptr;
           return hal_module_load(as<hal_device>(h), blob_.data(), blob_.size(), nullptr, &m);
         }},
        {"hal_module_load_file", Kind::kDevice,
         [](uint64_t h) {
           hal_module m = nullptr;
           return hal_module_load_file(as<hal_device>(h), "no-such-file.spv", nullptr, &m);
         }},
        {"hal_stream_destroy", Kind::kStream,
         [](uint64_t h) { return hal_stream_destroy(as<hal_stream>(h)); }},
        {"hal_stream_synchronize", Kind::kStream,
         [](uint64_t h) { return hal_stream_synchronize(as<hal_stream>(h)); }},
        {"hal_stream_query", Kind::kStream,
         [](uint64_t h) { return hal_stream_query(as<hal_stream>(h)); }},
        {"hal_stream_wait_event", Kind::kStream,
         [this](uint64_t h) { return hal_stream_wait_event(as<hal_stream>(h), ev_); }},
        {"hal_event_record", Kind::kStream,
         [this](uint64_t h) { return hal_event_record(ev_, as<hal_stream>(h)); }},
        {"hal_memcpy_htod", Kind::kStream,
         [this](uint64_t h) { return hal_memcpy_htod(as<hal_stream>(h), ptr_, scratch, 8); }},
        {"hal_memcpy_htod", Kind::kStream,
         [](uint64_t h) { return hal_memcpy_htod(as<hal_stream>(h), 0, nullptr, 0); }},
        {"hal_memcpy_dtoh", Kind::kStream,
         [this](uint64_t h) { return hal_memcpy_dtoh(as<hal_stream>(h), scratch, ptr_, 8); }},
        {"hal_memcpy_dtod", Kind::kStream,
         [this](uint64_t h) { return hal_memcpy_dtod(as<hal_stream>(h), ptr_, ptr_ + 64, 8); }},
        {"hal_memset_d8", Kind::kStream,
         [this](uint64_t h) { return hal_memset_d8(as<hal_stream>(h), ptr_, 1, 8); }},
        {"hal_memset_d32", Kind::kStream,
         [this](uint64_t h) { return hal_memset_d32(as<hal_stream>(h), ptr_, 1, 2); }},
        {"hal_launch", Kind::kStream,
         [this, config, args](uint64_t h) {
           return hal_launch(as<hal_stream>(h), fn_, &config, args);
         }},
        {"hal_event_destroy", Kind::kEvent,
         [](uint64_t h) { return hal_event_destroy(as<hal_event>(h)); }},
        {"hal_event_synchronize", Kind::kEvent,
         [](uint64_t h) { return hal_event_synchronize(as<hal_event>(h)); }},
        {"hal_event_query", Kind::kEvent,
         [](uint64_t h) { return hal_event_query(as<hal_event>(h)); }},
        {"hal_event_record", Kind::kEvent,
         [this](uint64_t h) { return hal_event_record(as<hal_event>(h), stream); }},
        {"hal_stream_wait_event", Kind::kEvent,
         [this](uint64_t h) { return hal_stream_wait_event(stream, as<hal_event>(h)); }},
        {"hal_event_elapsed_ms", Kind::kEvent,
         [this](uint64_t h) {
           float ms = 0;
           return hal_event_elapsed_ms(as<hal_event>(h), ev2_, &ms);
         }},
        {"hal_event_elapsed_ms", Kind::kEvent,
         [this](uint64_t h) {
           float ms = 0;
           return hal_event_elapsed_ms(ev_, as<hal_event>(h), &ms);
         }},
        {"hal_module_unload", Kind::kModule,
         [](uint64_t h) { return hal_module_unload(as<hal_module>(h)); }},
        {"hal_module_get_function", Kind::kModule,
         [](uint64_t h) {
           hal_function f = nullptr;
           return hal_module_get_function(as<hal_module>(h), "k", &f);
         }},
        {"hal_function_get_info", Kind::kFunction,
         [](uint64_t h) {
           hal_function_info info{};
           info.struct_size = sizeof(info);
           return hal_function_get_info(as<hal_function>(h), &info);
         }},
        {"hal_function_get_param", Kind::kFunction,
         [](uint64_t h) {
           hal_param_info param{};
           param.struct_size = sizeof(param);
           return hal_function_get_param(as<hal_function>(h), 0, &param);
         }},
        {"hal_launch", Kind::kFunction,
         [this, config, args](uint64_t h) {
           return hal_launch(stream, as<hal_function>(h), &config, args);
         }},
    };
  }

  std::vector<uint8_t> blob_;
  hal_module module_ = nullptr;
  hal_function fn_ = nullptr;
  hal_event ev_ = nullptr;
  hal_event ev2_ = nullptr;
  hal_deviceptr ptr_ = 0;
  void* host_ = nullptr;
  std::vector<uint64_t> destroyed_;
  std::vector<uint64_t> wrong_kind_;
};

TEST_F(Handles, EveryCallRefusesEveryBadHandle) {
  const uint64_t gpu_calls = gpu_double->calls();
  const uint64_t cpu_calls = cpu_double->calls();
  const size_t launches = gpu_double->launches().size();
  int checked = 0;
  for (const Case& c : cases()) {
    const size_t k = static_cast<size_t>(c.kind);
    const struct {
      const char* what;
      uint64_t value;
      const char* message;
    } bad[] = {
        {"NULL", 0, "handle is NULL"},
        {"destroyed", destroyed_[k], "is not live"},
        {"garbage 0x1230", 0x1230, "is not live"},
        {"garbage ~0", ~uint64_t{0}, "is not live"},
        {"forged with the right kind bits", forged(c.kind), "is not live"},
        {"untagged small integer", untagged(c.kind), "is not live"},
        {"live handle of another kind", wrong_kind_[k], "not '"},
    };
    for (const auto& b : bad) {
      SCOPED_TRACE(std::string(c.call) + " with a " + kind_name(c.kind) + " that is " + b.what);
      EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, c.run(b.value));
      EXPECT_TRUE(LastErrorIs(c.call, {b.message, kind_name(c.kind)}));
      ++checked;
    }
  }
  EXPECT_GE(checked, 6 * 30);
  // Nothing reached a backend.
  EXPECT_EQ(gpu_double->calls(), gpu_calls);
  EXPECT_EQ(cpu_double->calls(), cpu_calls);
  EXPECT_EQ(gpu_double->launches().size(), launches);
  // The live objects passed as wrong-kind handles were not destroyed by the attempts.
  EXPECT_OK(hal_stream_synchronize(stream));
  EXPECT_OK(hal_event_query(ev_));
  hal_function again = nullptr;
  EXPECT_OK(hal_module_get_function(module_, "k", &again));
  EXPECT_EQ(again, fn_);
  hal_function_info info{};
  info.struct_size = sizeof(info);
  EXPECT_OK(hal_function_get_info(fn_, &info));
}

TEST_F(Handles, DestroyingTwiceIsRefused) {
  hal_stream s = nullptr;
  ASSERT_OK(hal_stream_create(gpu, &s));
  EXPECT_OK(hal_stream_destroy(s));
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_stream_destroy(s));
  EXPECT_TRUE(LastErrorIs("hal_stream_destroy", {"stream handle", "is not live"}));

  hal_event e = nullptr;
  ASSERT_OK(hal_event_create(gpu, &e));
  EXPECT_OK(hal_event_destroy(e));
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_event_destroy(e));
  EXPECT_TRUE(LastErrorIs("hal_event_destroy", {"event handle", "is not live"}));

  hal_module m = nullptr;
  ASSERT_OK(hal_module_load(gpu, blob_.data(), blob_.size(), nullptr, &m));
  EXPECT_OK(hal_module_unload(m));
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_module_unload(m));
  EXPECT_TRUE(LastErrorIs("hal_module_unload", {"module handle", "is not live"}));
}

TEST_F(Handles, FunctionsDieWithTheirModule) {
  hal_module m = nullptr;
  ASSERT_OK(hal_module_load(gpu, blob_.data(), blob_.size(), nullptr, &m));
  hal_function f = nullptr;
  ASSERT_OK(hal_module_get_function(m, "k", &f));
  ASSERT_OK(hal_module_unload(m));

  hal_function_info info{};
  info.struct_size = sizeof(info);
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_function_get_info(f, &info));
  EXPECT_TRUE(LastErrorIs("hal_function_get_info", {"function handle", "is not live"}));
  hal_param_info param{};
  param.struct_size = sizeof(param);
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_function_get_param(f, 0, &param));
  hal_launch_config config{{1, 1, 1}, {1, 1, 1}, 0};
  void* args[] = {&ptr_};
  const size_t launches = gpu_double->launches().size();
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_launch(stream, f, &config, args));
  EXPECT_EQ(gpu_double->launches().size(), launches);
  hal_function g = nullptr;
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_module_get_function(m, "k", &g));
  EXPECT_EQ(g, nullptr);
  // The other module's function is unaffected.
  EXPECT_OK(hal_function_get_info(fn_, &info));
}

TEST_F(Handles, OneFunctionHandlePerNameAndModule) {
  hal_function again = nullptr;
  ASSERT_OK(hal_module_get_function(module_, "k", &again));
  EXPECT_EQ(again, fn_);
  hal_module other = load(gpu, blob_);
  hal_function theirs = function(other, "k");
  EXPECT_NE(theirs, fn_);
}

TEST_F(Handles, ValuesAreNeverReused) {
  std::set<uint64_t> seen;
  for (int i = 0; i < 50; ++i) {
    hal_stream s = nullptr;
    hal_event e = nullptr;
    ASSERT_OK(hal_stream_create(gpu, &s));
    ASSERT_OK(hal_event_create(gpu, &e));
    EXPECT_TRUE(seen.insert(as_value(s)).second);
    EXPECT_TRUE(seen.insert(as_value(e)).second);
    ASSERT_OK(hal_stream_destroy(s));
    ASSERT_OK(hal_event_destroy(e));
  }
  for (uint64_t value : destroyed_) {
    EXPECT_EQ(seen.count(value), 0u);
  }
}

TEST_F(Handles, ObjectsOfDifferentDevicesDoNotMix) {
  hal_event cpu_event = event(cpu);
  ASSERT_OK(hal_event_record(cpu_event, cpu_stream));
  const uint64_t gpu_calls = gpu_double->calls();
  const uint64_t cpu_calls = cpu_double->calls();

  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_stream_wait_event(stream, cpu_event));
  EXPECT_TRUE(LastErrorIs("hal_stream_wait_event",
                          {"stream belongs to device double:1", "event to device double:0"}));
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_event_record(cpu_event, stream));
  EXPECT_TRUE(LastErrorIs("hal_event_record", {"double:0", "double:1"}));
  float ms = -1;
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_event_elapsed_ms(ev_, cpu_event, &ms));
  EXPECT_TRUE(LastErrorIs("hal_event_elapsed_ms", {"start event", "end event", "double:0"}));
  EXPECT_EQ(ms, -1);

  // A function loaded on the CPU device launched on a GPU stream.
  hal_module cpu_module = load(cpu, blob_);
  hal_function cpu_fn = function(cpu_module, "k");
  hal_deviceptr cpu_ptr = alloc(cpu, 64);
  void* args[] = {&cpu_ptr};
  hal_launch_config config{{1, 1, 1}, {1, 1, 1}, 0};
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_launch(stream, cpu_fn, &config, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"'k'", "double:0", "double:1"}));
  // Only the CPU-side setup (module load, allocation) reached a backend.
  EXPECT_EQ(gpu_double->calls(), gpu_calls);
  EXPECT_EQ(cpu_double->calls(), cpu_calls + 2);
}

}  // namespace
}  // namespace hal_test
