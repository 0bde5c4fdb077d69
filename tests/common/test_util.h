// Helpers shared by the runtime's tests: status assertions that show hal_last_error(), and a
// fixture with the two devices of the backend test double.
#pragma once

#include "backend_double.h"
#include "hal_assertions.h"

#include <hal/hal.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hal_test {

using hal_testing::LastErrorHas;
using hal_testing::LastErrorIs;

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Sets an environment variable for one scope, restoring the previous value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fixture with both devices of the "double" backend (global index 0 is its GPU-like device,
// 1 its CPU-like one) and a stream on each. Frees what the test registered for cleanup.
class DoubleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(hal_device_get(0, &gpu));
    ASSERT_OK(hal_device_get(1, &cpu));
    gpu_double = double_device(gpu);
    cpu_double = double_device(cpu);
    ASSERT_NE(gpu_double, nullptr);
    ASSERT_NE(cpu_double, nullptr);
    ASSERT_EQ(gpu_double->info.is_cpu, 0u);
    ASSERT_EQ(cpu_double->info.is_cpu, 1u);
    ASSERT_OK(hal_stream_create(gpu, &stream));
    ASSERT_OK(hal_stream_create(cpu, &cpu_stream));
  }

  void TearDown() override {
    for (auto& [device, ptr] : allocations_) {
      EXPECT_OK(hal_mem_free(device, ptr));
    }
    for (hal_module m : modules_) {
      EXPECT_OK(hal_module_unload(m));
    }
    for (hal_event e : events_) {
      EXPECT_OK(hal_event_destroy(e));
    }
    if (stream) {
      EXPECT_OK(hal_stream_destroy(stream));
    }
    if (cpu_stream) {
      EXPECT_OK(hal_stream_destroy(cpu_stream));
    }
  }

  // Allocates |size| bytes, freed after the test.
  hal_deviceptr alloc(hal_device device, size_t size) {
    hal_deviceptr ptr = 0;
    EXPECT_OK(hal_mem_alloc(device, size, &ptr));
    if (ptr != 0) allocations_.emplace_back(device, ptr);
    return ptr;
  }
  hal_deviceptr alloc(size_t size) { return alloc(gpu, size); }

  // Frees an allocation made with alloc() now rather than after the test.
  void free_now(hal_device device, hal_deviceptr ptr) {
    for (auto it = allocations_.begin(); it != allocations_.end(); ++it) {
      if (it->first == device && it->second == ptr) {
        allocations_.erase(it);
        break;
      }
    }
    EXPECT_OK(hal_mem_free(device, ptr));
  }

  hal_event event(hal_device device) {
    hal_event e = nullptr;
    EXPECT_OK(hal_event_create(device, &e));
    if (e) events_.push_back(e);
    return e;
  }

  // Loads |blob| on |device|, unloaded after the test.
  hal_module load(hal_device device, const std::vector<uint8_t>& blob) {
    hal_module m = nullptr;
    EXPECT_OK(hal_module_load(device, blob.data(), blob.size(), nullptr, &m));
    if (m) modules_.push_back(m);
    return m;
  }

  hal_function function(hal_module module, const char* name) {
    hal_function f = nullptr;
    EXPECT_OK(hal_module_get_function(module, name, &f));
    return f;
  }

  std::vector<uint8_t> read(hal_stream s, hal_deviceptr ptr, size_t size) {
    std::vector<uint8_t> out(size);
    EXPECT_OK(hal_memcpy_dtoh(s, out.data(), ptr, size));
    EXPECT_OK(hal_stream_synchronize(s));
    return out;
  }

  hal_device gpu = nullptr;
  hal_device cpu = nullptr;
  DoubleDevice* gpu_double = nullptr;
  DoubleDevice* cpu_double = nullptr;
  hal_stream stream = nullptr;      // on gpu
  hal_stream cpu_stream = nullptr;  // on cpu

 private:
  std::vector<std::pair<hal_device, hal_deviceptr>> allocations_;
  std::vector<hal_module> modules_;
  std::vector<hal_event> events_;
};

// A byte pattern that differs at every position (mod 251).
inline std::vector<uint8_t> pattern(size_t size, uint8_t seed) {
  std::vector<uint8_t> out(size);
  for (size_t i = 0; i < size; ++i) out[i] = static_cast<uint8_t>((i * 7 + seed) % 251);
  return out;
}

}  // namespace hal_test
