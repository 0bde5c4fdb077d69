// The CUDA backend and its devices.
//
// Devices: one CudaDevice per CUdevice the driver lists, in the driver's order (which follows
// CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES). Discovery reads attributes only; the device's
// primary context is retained on first use (so listing devices, as hal-info does, creates no
// context) and released when the device is destroyed. Every call that reaches the driver first
// makes that primary context current on the calling thread, so any thread may call in, and an
// application that also uses the CUDA runtime shares the same context and memory.
//
// Context loss: when a driver call returns a context-poisoning result (see cuda_status.h), the
// call returns its mapped status and reports the loss to the core (Device::report_lost), which
// fails every later call on the device naming the first error. Frees and destructors still run
// on a lost device; they ask Device::lost() and leave the dead context alone (the memory went
// with it).
//
// Thread-safety: every method may be called from several threads at once.
//
// One concern per file: the whole of CudaDevice (discovery, the context, memory, creating
// streams and events) is in cuda_device.cpp; streams and events in cuda_stream.cpp; loading a
// module (load_cuda_module, which load_module calls) in cuda_module.cpp.
#pragma once

#include "common/backend.h"
#include "cuda/cuda_driver.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string_view>

namespace hal::cuda {

class CudaBackend final : public Backend {
 public:
  hal_status init(std::vector<std::unique_ptr<Device>>* devices) override;
};

class CudaDevice final : public Device {
 public:
  CudaDevice(std::shared_ptr<const Driver> driver, CUdevice device, int ordinal);
  ~CudaDevice() override;

  // Fills |info| from the driver. Fails naming the query that failed.
  hal_status query();

  // Retains the primary context if needed and makes it current on the calling thread.
  hal_status enter();
  // HAL_SUCCESS for CUDA_SUCCESS; otherwise returns fail_result(|result|, |what|, |detail|),
  // reporting the device lost first when |result| poisons the context.
  hal_status check(CUresult result, std::string_view what, std::string_view detail = {});

  const DriverApi& api() const { return driver_->api(); }
  const Driver& driver() const { return *driver_; }
  // 10 * major + minor.
  uint32_t compute_capability() const {
    return info.compute_capability_major * 10 + info.compute_capability_minor;
  }
  // Shared memory per block without opting in, and the most a kernel can opt in to (bytes).
  uint32_t default_shared_bytes() const { return default_shared_bytes_; }
  uint32_t optin_shared_bytes() const { return optin_shared_bytes_; }
  // Whether an async copy from |host| may read it after the call returns: memory from
  // host_alloc (|allocation|, from the core's table), or any memory the driver knows (registered or
  // page-locked by other code, managed memory), asked through cuPointerGetAttribute when the driver
  // has it. Only memory the driver does not know (pageable) is staged before cuMemcpyHtoDAsync
  // returns.
  bool read_in_place(const void* host, const HostAllocation* allocation);

  hal_status mem_alloc(size_t size, Allocation* out) override;
  hal_status mem_free(const Allocation& alloc) override;
  hal_status host_alloc(size_t size, HostAllocation* out) override;
  hal_status host_free(const HostAllocation& allocation) override;
  hal_status create_stream(std::unique_ptr<Stream>* out) override;
  hal_status create_event(std::unique_ptr<Event>* out) override;
  hal_status load_module(hal_ir ir, const uint8_t* blob, size_t size, const ModuleOptions& options,
                         std::unique_ptr<Module>* out) override;
  hal_status synchronize() override;

 private:
  hal_status attribute(CUdevice_attribute attribute, const char* name, int* value);

  std::shared_ptr<const Driver> driver_;
  CUdevice device_;
  int ordinal_;
  uint32_t default_shared_bytes_ = 0;
  uint32_t optin_shared_bytes_ = 0;

  std::mutex context_mutex_;  // guards retaining the context
  std::atomic<CUcontext> context_{nullptr};
};

}  // namespace hal::cuda
