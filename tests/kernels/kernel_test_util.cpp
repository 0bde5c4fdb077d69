#include "kernel_test_util.h"

#include <cstdio>
#include <cstring>

void PrintTo(hal_ir ir, std::ostream* os) {
  *os << kernel_test::ir_name(ir);
}

namespace kernel_test {

const char* ir_name(hal_ir ir) {
  return ir == HAL_IR_PTX ? "PTX" : "SPIR-V";
}

std::string last_error(hal_status status) {
  return std::string(hal_status_string(status)) + ": " + hal_last_error();
}

// A device for the pack's |ir|. For PTX, a CUDA device: Vulkan devices also take PTX, through
// translation, but not the pack's warp-level PTX kernels everywhere (differential_test.cpp).
static bool usable(const hal_device_info& info, hal_ir ir) {
  if ((info.ir_mask & ir) == 0) return false;
  return ir != HAL_IR_PTX || (info.ir_mask & HAL_IR_SPIRV) == 0;
}

bool find_device(hal_ir ir, hal_device* device, hal_device_info* info, std::string* why) {
  uint32_t count = 0;
  if (hal_device_count(&count) != HAL_SUCCESS) {
    *why = "hal_device_count failed: " + std::string(hal_last_error());
    return false;
  }
  hal_device candidate = nullptr;
  hal_device_info candidate_info{};
  candidate_info.struct_size = sizeof candidate_info;
  if (hal_device_find("default", &candidate) == HAL_SUCCESS &&
      hal_device_get_info(candidate, &candidate_info) == HAL_SUCCESS &&
      usable(candidate_info, ir)) {
    *device = candidate;
    *info = candidate_info;
    return true;
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (hal_device_get(i, &candidate) != HAL_SUCCESS) continue;
    if (hal_device_get_info(candidate, &candidate_info) != HAL_SUCCESS) continue;
    if (usable(candidate_info, ir)) {
      *device = candidate;
      *info = candidate_info;
      return true;
    }
  }
  *why =
      std::string("no device takes ") + ir_name(ir) + " (" + std::to_string(count) + " device(s))";
  uint32_t backends = 0;
  hal_backend_count(&backends);
  for (uint32_t i = 0; i < backends; ++i) {
    hal_backend_info b{};
    b.struct_size = sizeof b;
    if (hal_backend_get_info(i, &b) == HAL_SUCCESS && !b.available) {
      *why += std::string("; backend ") + b.name + " unavailable: " + b.reason;
    }
  }
  return false;
}

bool supports(const hal_device_info& info, hal_ir ir, const std::string& name, std::string* why) {
  const hal_kernel_info* k = hal_kernels_info(name.c_str());
  if (k == nullptr) {
    *why = "unknown kernel " + name;
    return false;
  }
  char reason[512];
  if (!hal_kernels_runs_on(k, ir, &info, reason, sizeof reason)) {
    *why = reason;
    return false;
  }
  return true;
}

Buffer::Buffer(hal_device device, hal_stream stream, size_t count, ref::Storage storage)
    : device_(device), stream_(stream), count_(count), storage_(storage) {
  const size_t bytes = count * (storage == ref::Storage::kF16 ? 2 : 4);
  const hal_status s = hal_mem_alloc(device, bytes == 0 ? 4 : bytes, &ptr);
  EXPECT_EQ(s, HAL_SUCCESS) << last_error(s);
}

Buffer::~Buffer() {
  if (ptr != 0) {
    EXPECT_EQ(hal_mem_free(device_, ptr), HAL_SUCCESS);
  }
}

void Buffer::upload(const std::vector<float>& values) {
  ASSERT_EQ(values.size(), count_);
  hal_status s;
  if (storage_ == ref::Storage::kF16) {
    const std::vector<uint16_t> h = ref::to_half(values);
    s = hal_memcpy_htod(stream_, ptr, h.data(), h.size() * 2);
  } else {
    s = hal_memcpy_htod(stream_, ptr, values.data(), values.size() * 4);
  }
  ASSERT_EQ(s, HAL_SUCCESS) << last_error(s);
}

std::vector<float> Buffer::download() {
  std::vector<float> out(count_);
  std::vector<uint16_t> h;
  hal_status s;
  if (storage_ == ref::Storage::kF16) {
    h.resize(count_);
    s = hal_memcpy_dtoh(stream_, h.data(), ptr, count_ * 2);
  } else {
    s = hal_memcpy_dtoh(stream_, out.data(), ptr, count_ * 4);
  }
  EXPECT_EQ(s, HAL_SUCCESS) << last_error(s);
  s = hal_stream_synchronize(stream_);
  EXPECT_EQ(s, HAL_SUCCESS) << last_error(s);
  if (storage_ == ref::Storage::kF16) out = ref::from_half(h);
  return out;
}

void expect_close(const std::vector<float>& device, const ref::Result& want,
                  const std::string& what) {
  const ref::Check check = ref::compare(device, want);
  std::printf("[ check    ] %s: %s\n", what.c_str(), check.summary().c_str());
  EXPECT_TRUE(check.ok()) << what << ": " << check.summary();
}

}  // namespace kernel_test
