// The driver's process-wide state (driver.h), cuInit and cuDriverGetVersion.
#include "ptx_cpu/driver.h"

#include "ptx_cpu/context.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/errors.h"
#include "ptx_cpu/logs.h"
#include "ptx_cpu/memory.h"
#include "ptx_vm/vm.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace hal::ptx_cpu {

std::atomic<Driver*> Driver::instance_{nullptr};

namespace {

// HAL_PTX_CPU_DEVICES: unset or empty is 1; otherwise a decimal number from 0 to kMaxDevices.
CUresult device_count_from_environment(int* count, std::string* why) {
  const char* text = std::getenv("HAL_PTX_CPU_DEVICES");
  if (text == nullptr || *text == '\0') {
    *count = 1;
    return CUDA_SUCCESS;
  }
  int value = 0;
  bool digits = true;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || value > kMaxDevices) {
      digits = false;
      break;
    }
    value = value * 10 + (*c - '0');
  }
  if (!digits || value > kMaxDevices) {
    *why = "HAL_PTX_CPU_DEVICES='" + std::string(text) + "' is not a device count from 1 to " +
           std::to_string(kMaxDevices) + " (0 hides every device); unset it for one device";
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (value == 0) {
    *why = "HAL_PTX_CPU_DEVICES=0 hides every device";
    return CUDA_ERROR_NO_DEVICE;
  }
  *count = value;
  return CUDA_SUCCESS;
}

// Half of the machine's RAM: what a program may allocate without starving the host.
uint64_t memory_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 4ull << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) / 2;
}

}  // namespace

CUresult Driver::init() {
  static std::once_flag once;
  static CUresult result = CUDA_ERROR_NOT_INITIALIZED;
  std::call_once(once, [] {
    int count = 0;
    std::string why;
    result = device_count_from_environment(&count, &why);
    if (result != CUDA_SUCCESS) {
      // A configuration mistake must be visible even to a program that prints no error text.
      const std::string line = std::string("cuInit: ") + error_name_or_number(result) + ": " + why;
      log_message(CU_LOG_LEVEL_ERROR, line);
      std::fprintf(stderr, "libhal_ptx_cpu: %s\n", line.c_str());
      return;
    }
    auto* driver = new Driver();  // never deleted: see driver.h
    driver->executor_threads_ = std::max(1u, std::thread::hardware_concurrency());
    driver->executor_ = std::make_unique<ptx_vm::Executor>(driver->executor_threads_);
    driver->executor_threads_ = driver->executor_->threads();
    driver->total_memory_ = memory_budget();
    driver->memory_ = std::make_unique<MemoryRegistry>(driver->total_memory_);
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      driver->contexts_.push_back(std::make_unique<Context>(ordinal));
    }
    instance_.store(driver, std::memory_order_release);
  });
  return result;
}

Context* Driver::find_context(CUcontext handle) const {
  for (const std::unique_ptr<Context>& context : contexts_) {
    if (context->handle() == handle) return context.get();
  }
  return nullptr;
}

void Driver::wait_all_idle() const {
  for (const std::unique_ptr<Context>& context : contexts_) {
    if (context->active()) context->wait_idle();
  }
}

}  // namespace hal::ptx_cpu

using hal::ptx_cpu::Driver;
using hal::ptx_cpu::entry;
using hal::ptx_cpu::fail;

PTXCPU_ENTRY CUresult CUDAAPI cuInit(unsigned int Flags) {
  return entry(__func__, [&] {
    if (Flags != 0) return fail(CUDA_ERROR_INVALID_VALUE, "Flags must be 0");
    return Driver::init();
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuDriverGetVersion(int* driverVersion) {
  return entry(__func__, [&] {
    if (driverVersion == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "driverVersion is NULL");
    *driverVersion = hal::ptx_cpu::kDriverVersion;
    return CUDA_SUCCESS;
  });
}
