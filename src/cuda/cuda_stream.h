// CUDA memory, streams, events and launches.
//
// Memory: device memory comes from cuMemAlloc, and its CUdeviceptr is the hal_deviceptr itself
// (Allocation::backend_data is unused), so pointer arguments reach kernels unchanged. Host memory
// from hal_host_alloc is cuMemHostAlloc(CU_MEMHOSTALLOC_PORTABLE) page-locked memory.
//
// Copies are cuMemcpy*Async on the stream. hal promises that the source of hal_memcpy_htod may be
// reused once the call returns. From pageable memory the driver already stages the bytes before
// returning; from memory the driver knows (hal_host_alloc, registered or managed memory) it does
// not, so such a copy is followed by cuStreamSynchronize and has completed when the call returns.
// Page-locked memory still gives the full transfer rate, but no overlap of that copy with the
// host: to overlap, copy from pageable memory or issue the copy from another thread.
//
// Streams are CU_STREAM_NON_BLOCKING (no implicit ordering with the legacy default stream);
// events are created with timing enabled.
//
// Launch: cuLaunchKernel with LaunchParams::args as kernelParams. Dynamic shared memory beyond
// the default per-block limit (48 KiB) raises the function's
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first, up to the device's opt-in limit
// (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN); beyond that is HAL_ERROR_OUT_OF_RANGE.
//
// Thread-safety: the runtime serialises calls on one stream; events and functions may be used
// from several streams at once.
#pragma once

#include "common/backend.h"
#include "cuda/cuda_device.h"
#include "cuda/stream_trace.h"

#include <memory>

namespace hal::cuda {

class CudaStream final : public Stream {
 public:
  // Takes ownership of |stream|.
  CudaStream(CudaDevice& device, CUstream stream);
  ~CudaStream() override;

  hal_status copy_htod(const DeviceRange& dst, const void* src, size_t size,
                       const HostAllocation* host) override;
  hal_status copy_dtoh(void* dst, const DeviceRange& src, size_t size,
                       const HostAllocation* host) override;
  hal_status copy_dtod(const DeviceRange& dst, const DeviceRange& src, size_t size) override;
  hal_status fill(const DeviceRange& dst, uint32_t pattern, uint32_t pattern_size,
                  size_t bytes) override;
  hal_status launch(Function& function, const LaunchParams& params) override;
  hal_status record(Event& event) override;
  hal_status wait(Event& event) override;
  hal_status synchronize() override;
  hal_status query() override;

 private:
  // Issues one operation through |issue| (returns its CUresult), bracketed for the timeline
  // trace when it is on; |describe| builds the trace's description only then.
  template <typename Issue, typename Describe>
  CUresult issue_traced(Issue&& issue, Describe&& describe) {
    if (!trace_) return issue();
    CUevent begin = trace_->begin();
    const CUresult result = issue();
    trace_->end(begin, result == CUDA_SUCCESS, describe());
    return result;
  }

  CudaDevice& device_;
  CUstream stream_;
  std::unique_ptr<StreamTrace> trace_;  // only with the timeline trace on
};

class CudaEvent final : public Event {
 public:
  // Takes ownership of |event|.
  CudaEvent(CudaDevice& device, CUevent event) : device_(device), event_(event) {}
  ~CudaEvent() override;

  hal_status synchronize() override;
  hal_status query() override;
  hal_status elapsed_ms(Event& end, float* ms) override;

  CUevent handle() const { return event_; }

 private:
  CudaDevice& device_;
  CUevent event_;
};

}  // namespace hal::cuda
