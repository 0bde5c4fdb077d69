#include "cuda/cuda_stream.h"

#include "common/error.h"
#include "cuda/cuda_module.h"
#include "cuda/cuda_status.h"

#include <fmt/format.h>

namespace hal::cuda {

// ===========================================================================================
// Streams
// ===========================================================================================

CudaStream::CudaStream(CudaDevice& device, CUstream stream) : device_(device), stream_(stream) {
  if (trace::on()) {
    trace_ = std::make_unique<StreamTrace>(device_, stream_);
    if (!trace_->ok()) trace_.reset();
  }
}

CudaStream::~CudaStream() {
  // The runtime synchronised already. On a lost device the driver may refuse; nothing to do.
  if (device_.enter() != HAL_SUCCESS) clear_pending_error();
  trace_.reset();  // resolves the last spans; needs the stream
  device_.api().cuStreamDestroy(stream_);
}

namespace {
using Kind = trace::Op::Kind;
}  // namespace

// The failure text is only formatted on failure: these calls are on the hot path.
hal_status CudaStream::copy_htod(const DeviceRange& dst, const void* src, size_t size,
                                 const HostAllocation* host) {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  const CUresult result = issue_traced(
      [&] { return device_.api().cuMemcpyHtoDAsync(dst.address(), src, size, stream_); },
      [&] { return trace::Op::transfer(Kind::kCopyHostToDevice, size); });
  if (result != CUDA_SUCCESS) {
    return device_.check(result, fmt::format("cuMemcpyHtoDAsync of {} bytes", size));
  }
  if (!device_.read_in_place(src, host)) return HAL_SUCCESS;
  // See the header: the source must be reusable when this returns.
  return device_.check(device_.api().cuStreamSynchronize(stream_),
                       "cuStreamSynchronize after a copy from page-locked or managed memory");
}

hal_status CudaStream::copy_dtoh(void* dst, const DeviceRange& src, size_t size,
                                 const HostAllocation* /*host*/) {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  const CUresult result = issue_traced(
      [&] { return device_.api().cuMemcpyDtoHAsync(dst, src.address(), size, stream_); },
      [&] { return trace::Op::transfer(Kind::kCopyDeviceToHost, size); });
  if (result == CUDA_SUCCESS) return HAL_SUCCESS;
  return device_.check(result, fmt::format("cuMemcpyDtoHAsync of {} bytes", size));
}

hal_status CudaStream::copy_dtod(const DeviceRange& dst, const DeviceRange& src, size_t size) {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  const CUresult result = issue_traced(
      [&] { return device_.api().cuMemcpyDtoDAsync(dst.address(), src.address(), size, stream_); },
      [&] { return trace::Op::transfer(Kind::kCopyDeviceToDevice, size); });
  if (result == CUDA_SUCCESS) return HAL_SUCCESS;
  return device_.check(result, fmt::format("cuMemcpyDtoDAsync of {} bytes", size));
}

hal_status CudaStream::fill(const DeviceRange& dst, uint32_t pattern, uint32_t pattern_size,
                            size_t bytes) {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  const auto describe = [&] { return trace::Op::transfer(Kind::kFill, bytes); };
  if (pattern_size == 4) {
    const CUresult result = issue_traced(
        [&] { return device_.api().cuMemsetD32Async(dst.address(), pattern, bytes / 4, stream_); },
        describe);
    if (result == CUDA_SUCCESS) return HAL_SUCCESS;
    return device_.check(result, fmt::format("cuMemsetD32Async of {} words", bytes / 4));
  }
  const CUresult result = issue_traced(
      [&] {
        return device_.api().cuMemsetD8Async(dst.address(), static_cast<unsigned char>(pattern),
                                             bytes, stream_);
      },
      describe);
  if (result == CUDA_SUCCESS) return HAL_SUCCESS;
  return device_.check(result, fmt::format("cuMemsetD8Async of {} bytes", bytes));
}

hal_status CudaStream::launch(Function& function, const LaunchParams& params) {
  auto& cuda_function = static_cast<CudaFunction&>(function);
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  const DriverApi& api = device_.api();

  // The core has checked static + dynamic shared memory against the opt-in limit, which the
  // device reports as max_shared_memory_per_block; what is left is to opt the function in.
  if (params.shared_bytes > cuda_function.dynamic_shared_limit.load()) {
    // The attribute is per function, not per launch: raise it only, and under the lock, so a
    // smaller request from another stream cannot undo a larger one (see cuda_module.h).
    std::lock_guard<std::mutex> lock(cuda_function.shared_mutex);
    if (params.shared_bytes > cuda_function.dynamic_shared_limit.load()) {
      if (hal_status status = device_.check(
              api.cuFuncSetAttribute(cuda_function.handle,
                                     CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(params.shared_bytes)),
              fmt::format("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, {}) for '{}'",
                          params.shared_bytes, function.desc.name));
          status != HAL_SUCCESS) {
        return status;
      }
      cuda_function.dynamic_shared_limit.store(params.shared_bytes);
    }
  }

  // kernelParams is not written by the driver; the cast only matches its C signature.
  void** args = const_cast<void**>(params.args);
  const CUresult result = issue_traced(
      [&] {
        return api.cuLaunchKernel(cuda_function.handle, params.grid[0], params.grid[1],
                                  params.grid[2], params.block[0], params.block[1], params.block[2],
                                  params.shared_bytes, stream_, args, nullptr);
      },
      [&] {
        return trace::Op::kernel_launch(function.desc.name, params.grid, params.block,
                                        params.shared_bytes);
      });
  if (result == CUDA_SUCCESS) return HAL_SUCCESS;
  return device_.check(
      result, fmt::format("cuLaunchKernel of '{}' (grid {}x{}x{}, block {}x{}x{}, {} shared bytes)",
                          function.desc.name, params.grid[0], params.grid[1], params.grid[2],
                          params.block[0], params.block[1], params.block[2], params.shared_bytes));
}

hal_status CudaStream::record(Event& event) {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  return device_.check(
      device_.api().cuEventRecord(static_cast<CudaEvent&>(event).handle(), stream_),
      "cuEventRecord");
}

hal_status CudaStream::wait(Event& event) {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  return device_.check(device_.api().cuStreamWaitEvent(
                           stream_, static_cast<CudaEvent&>(event).handle(), CU_EVENT_WAIT_DEFAULT),
                       "cuStreamWaitEvent");
}

hal_status CudaStream::synchronize() {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  const hal_status status =
      device_.check(device_.api().cuStreamSynchronize(stream_), "cuStreamSynchronize");
  if (status == HAL_SUCCESS && trace_) trace_->resolve();
  return status;
}

hal_status CudaStream::query() {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  const CUresult result = device_.api().cuStreamQuery(stream_);
  if (result == CUDA_ERROR_NOT_READY) return HAL_ERROR_NOT_READY;
  if (result == CUDA_SUCCESS && trace_) trace_->resolve();
  return device_.check(result, "cuStreamQuery");
}

// ===========================================================================================
// Events
// ===========================================================================================

CudaEvent::~CudaEvent() {
  if (device_.enter() != HAL_SUCCESS) clear_pending_error();
  device_.api().cuEventDestroy(event_);
}

hal_status CudaEvent::synchronize() {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  return device_.check(device_.api().cuEventSynchronize(event_), "cuEventSynchronize");
}

hal_status CudaEvent::query() {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  const CUresult result = device_.api().cuEventQuery(event_);
  if (result == CUDA_ERROR_NOT_READY) return HAL_ERROR_NOT_READY;
  return device_.check(result, "cuEventQuery");
}

hal_status CudaEvent::elapsed_ms(Event& end, float* ms) {
  if (hal_status status = device_.enter(); status != HAL_SUCCESS) return status;
  float value = 0.0f;
  const CUresult result =
      device_.api().cuEventElapsedTime(&value, event_, static_cast<CudaEvent&>(end).event_);
  if (result == CUDA_ERROR_NOT_READY) return HAL_ERROR_NOT_READY;
  if (hal_status status = device_.check(result, "cuEventElapsedTime"); status != HAL_SUCCESS) {
    return status;
  }
  *ms = value;
  return HAL_SUCCESS;
}

}  // namespace hal::cuda
