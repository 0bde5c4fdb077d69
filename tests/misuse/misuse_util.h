// Shared pieces of the misuse catalogue: a case table entry, the check that a failure's message
// names its call and its problem, and a known-good vector_add_f32 run that proves the device
// still works after each case.
#pragma once

#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace hal_misuse {

// One misuse: |run| performs it and returns the status of the misused call, which must be
// |expected|; hal_last_error() must then start with |call| and contain |phrase|.
template <typename Context>
struct Case {
  const char* name;
  hal_status expected;
  const char* call;
  const char* phrase;
  std::function<hal_status(Context&)> run;
};

inline ::testing::AssertionResult MessageNames(const char* call, const char* phrase) {
  const std::string text = hal_last_error();
  if (text.rfind(std::string(call) + ":", 0) != 0) {
    return ::testing::AssertionFailure()
           << "hal_last_error does not start with '" << call << ":': " << text;
  }
  if (text.find(phrase) == std::string::npos) {
    return ::testing::AssertionFailure() << "hal_last_error lacks '" << phrase << "': " << text;
  }
  return ::testing::AssertionSuccess();
}

// Loads vector_add_f32 in |ir| on |device|, adds 1000 floats and checks every sum exactly.
inline ::testing::AssertionResult DeviceStillWorks(hal_device device, hal_ir ir = HAL_IR_SPIRV) {
  const hal_kernel_blob* blob = hal_kernels_find("vector_add_f32", ir);
  if (blob == nullptr) return ::testing::AssertionFailure() << "vector_add_f32 is not in the pack";
  constexpr uint32_t kCount = 1000;
  std::vector<float> a(kCount), b(kCount), c(kCount, -1.0f);
  for (uint32_t i = 0; i < kCount; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i + 1);
  }
  hal_stream stream = nullptr;
  hal_module module = nullptr;
  hal_function fn = nullptr;
  hal_deviceptr d[3] = {0, 0, 0};
  std::string failure;
  auto check = [&](hal_status status, const char* what) {
    if (status != HAL_SUCCESS && failure.empty()) {
      failure =
          std::string(what) + " returned " + hal_status_string(status) + ": " + hal_last_error();
    }
    return status == HAL_SUCCESS;
  };
  if (check(hal_stream_create(device, &stream), "hal_stream_create") &&
      check(hal_module_load(device, blob->data, blob->size, nullptr, &module), "hal_module_load") &&
      check(hal_module_get_function(module, "vector_add_f32", &fn), "hal_module_get_function") &&
      check(hal_mem_alloc(device, kCount * 4, &d[0]), "hal_mem_alloc") &&
      check(hal_mem_alloc(device, kCount * 4, &d[1]), "hal_mem_alloc") &&
      check(hal_mem_alloc(device, kCount * 4, &d[2]), "hal_mem_alloc") &&
      check(hal_memcpy_htod(stream, d[0], a.data(), kCount * 4), "hal_memcpy_htod") &&
      check(hal_memcpy_htod(stream, d[1], b.data(), kCount * 4), "hal_memcpy_htod")) {
    uint32_t n = kCount;
    void* args[] = {&d[0], &d[1], &d[2], &n};
    hal_launch_config config = {{4, 1, 1}, {256, 1, 1}, 0};
    if (check(hal_launch(stream, fn, &config, args), "hal_launch") &&
        check(hal_memcpy_dtoh(stream, c.data(), d[2], kCount * 4), "hal_memcpy_dtoh") &&
        check(hal_stream_synchronize(stream), "hal_stream_synchronize")) {
      for (uint32_t i = 0; i < kCount && failure.empty(); ++i) {
        if (c[i] != a[i] + b[i]) {
          failure = "C[" + std::to_string(i) + "] = " + std::to_string(c[i]) + ", expected " +
                    std::to_string(a[i] + b[i]);
        }
      }
    }
  }
  for (hal_deviceptr ptr : d) {
    if (ptr != 0) check(hal_mem_free(device, ptr), "hal_mem_free");
  }
  if (module != nullptr) check(hal_module_unload(module), "hal_module_unload");
  if (stream != nullptr) check(hal_stream_destroy(stream), "hal_stream_destroy");
  if (!failure.empty()) return ::testing::AssertionFailure() << failure;
  return ::testing::AssertionSuccess();
}

}  // namespace hal_misuse
