#include "cuda/stream_trace.h"

#include "common/error.h"
#include "common/log.h"

namespace hal::cuda {

StreamTrace::StreamTrace(CudaDevice& device, CUstream stream) : device_(device), stream_(stream) {
  CUevent base = take_event();
  if (base == nullptr) return;
  const DriverApi& api = device_.api();
  if (api.cuEventRecord(base, stream_) != CUDA_SUCCESS ||
      api.cuEventSynchronize(base) != CUDA_SUCCESS) {
    api.cuEventDestroy(base);
    log()->warn("trace: cannot time a CUDA stream on '{}'; its device spans are left out",
                device_.info.name);
    return;
  }
  base_host_ns_ = trace::now_ns();
  base_ = base;
  row_ = trace::stream_row(device_.info);
}

StreamTrace::~StreamTrace() {
  resolve();
  const DriverApi& api = device_.api();
  for (const Pending& span : pending_) {
    api.cuEventDestroy(span.begin);
    api.cuEventDestroy(span.end);
  }
  for (CUevent event : spare_) api.cuEventDestroy(event);
  if (base_ != nullptr) api.cuEventDestroy(base_);
}

CUevent StreamTrace::take_event() {
  if (!spare_.empty()) {
    CUevent event = spare_.back();
    spare_.pop_back();
    return event;
  }
  CUevent event = nullptr;
  if (device_.api().cuEventCreate(&event, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return nullptr;
  return event;
}

void StreamTrace::give_back(CUevent event) {
  if (event != nullptr) spare_.push_back(event);
}

CUevent StreamTrace::begin() {
  if (!ok()) return nullptr;
  CUevent event = take_event();
  if (event != nullptr && device_.api().cuEventRecord(event, stream_) != CUDA_SUCCESS) {
    give_back(event);
    return nullptr;
  }
  return event;
}

void StreamTrace::end(CUevent begin, bool issued, trace::Op op) {
  if (begin == nullptr) return;
  CUevent end = issued ? take_event() : nullptr;
  if (end == nullptr || device_.api().cuEventRecord(end, stream_) != CUDA_SUCCESS) {
    give_back(begin);
    give_back(end);
    return;
  }
  pending_.push_back(Pending{begin, end, std::move(op)});
  if (pending_.size() <= kMaxPending) return;
  resolve();
  if (pending_.size() <= kMaxPending) return;
  if (!reported_drop_) {
    log()->warn(
        "trace: more than {} operations on a CUDA stream of '{}' were never waited for; "
        "the oldest are left out of the trace",
        kMaxPending, device_.info.name);
    reported_drop_ = true;
  }
  give_back(pending_.front().begin);
  give_back(pending_.front().end);
  pending_.pop_front();
}

void StreamTrace::resolve() {
  if (!ok()) return;
  const DriverApi& api = device_.api();
  CUevent new_base = nullptr;
  uint64_t new_base_ns = 0;
  while (!pending_.empty()) {
    const Pending& span = pending_.front();
    float begin_ms = 0.0f, end_ms = 0.0f;
    if (api.cuEventElapsedTime(&begin_ms, base_, span.begin) != CUDA_SUCCESS ||
        api.cuEventElapsedTime(&end_ms, base_, span.end) != CUDA_SUCCESS) {
      break;  // not complete yet (or the context failed: the spans stay unresolved)
    }
    const auto to_host = [&](float ms) {
      return base_host_ns_ + static_cast<uint64_t>(ms > 0.0f ? ms * 1.0e6 : 0.0);
    };
    trace::device_span(device_.info, row_, span.op, to_host(begin_ms), to_host(end_ms));
    give_back(span.begin);
    give_back(new_base);
    new_base = span.end;
    new_base_ns = to_host(end_ms);
    pending_.pop_front();
  }
  if (new_base != nullptr) {
    give_back(base_);
    base_ = new_base;
    base_host_ns_ = new_base_ns;
  }
}

}  // namespace hal::cuda
