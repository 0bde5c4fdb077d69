// Events: creation, records, queries, synchronisation and timing. See event.h.
#include "ptx_cpu/event.h"

#include "ptx_cpu/context.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/handles.h"

#include <string>

namespace hal::ptx_cpu {
namespace {

CUresult find_event(CUevent handle, std::shared_ptr<Event>* out) {
  if (CUresult result = require_init(); result != CUDA_SUCCESS) return result;
  *out = event_handles().find(handle);
  if (*out == nullptr) return fail(CUDA_ERROR_INVALID_HANDLE, "not a live event");
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace hal::ptx_cpu

using hal::ptx_cpu::Context;
using hal::ptx_cpu::entry;
using hal::ptx_cpu::Event;
using hal::ptx_cpu::EventRecord;
using hal::ptx_cpu::fail;
using hal::ptx_cpu::Stream;

// CU_EVENT_BLOCKING_SYNC is accepted (waits always block); CU_EVENT_INTERPROCESS is not
// supported (no IPC).
PTXCPU_ENTRY CUresult CUDAAPI cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  return entry(__func__, [&] {
    if (phEvent == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "phEvent is NULL");
    constexpr unsigned kKnown =
        CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if ((Flags & ~kKnown) != 0) {
      return fail(CUDA_ERROR_INVALID_VALUE, "unknown event flags " + std::to_string(Flags));
    }
    if ((Flags & CU_EVENT_INTERPROCESS) != 0) {
      if ((Flags & CU_EVENT_DISABLE_TIMING) == 0) {
        return fail(CUDA_ERROR_INVALID_VALUE,
                    "CU_EVENT_INTERPROCESS needs CU_EVENT_DISABLE_TIMING");
      }
      return fail(CUDA_ERROR_NOT_SUPPORTED, "interprocess events are not supported");
    }
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context); result != CUDA_SUCCESS) {
      return result;
    }
    auto event = std::make_shared<Event>(*context, Flags);
    hal::ptx_cpu::event_handles().add(event);
    *phEvent = reinterpret_cast<CUevent>(event.get());
    return CUDA_SUCCESS;
  });
}

// Records already issued still complete, and waits that captured one keep it.
PTXCPU_ENTRY CUresult CUDAAPI cuEventDestroy(CUevent hEvent) {
  return entry(__func__, [&] {
    if (CUresult result = hal::ptx_cpu::require_init(); result != CUDA_SUCCESS) return result;
    std::shared_ptr<Event> event = hal::ptx_cpu::event_handles().remove(hEvent);
    if (event == nullptr) return fail(CUDA_ERROR_INVALID_HANDLE, "not a live event");
    return CUDA_SUCCESS;
  });
}

// The event and the stream must belong to the same context, the current one.
PTXCPU_ENTRY CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
  return entry(__func__, [&] {
    std::shared_ptr<Event> event;
    if (CUresult result = hal::ptx_cpu::find_event(hEvent, &event); result != CUDA_SUCCESS) {
      return result;
    }
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context); result != CUDA_SUCCESS) {
      return result;
    }
    std::shared_ptr<Stream> stream;
    if (CUresult result = context->resolve_stream(hStream, &stream); result != CUDA_SUCCESS) {
      return result;
    }
    if (&event->context() != context) {
      return fail(CUDA_ERROR_INVALID_HANDLE, "the event belongs to device " +
                                                 std::to_string(event->context().device()) +
                                                 "'s context and the stream to device " +
                                                 std::to_string(context->device()) + "'s");
    }
    auto record = std::make_shared<EventRecord>();
    record->stream = stream;
    // The operation holds the record, not the event: a destroyed event's record still completes.
    record->sequence = context->enqueue(
        *stream, {}, [record](CUresult) { record->time = std::chrono::steady_clock::now(); });
    event->set_latest(std::move(record));
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
  return entry(__func__, [&] {
    std::shared_ptr<Event> event;
    if (CUresult result = hal::ptx_cpu::find_event(hEvent, &event); result != CUDA_SUCCESS) {
      return result;
    }
    if (CUresult sticky = event->context().sticky_error(); sticky != CUDA_SUCCESS) return sticky;
    std::shared_ptr<EventRecord> record = event->latest();
    return record == nullptr || record->done() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  return entry(__func__, [&] {
    std::shared_ptr<Event> event;
    if (CUresult result = hal::ptx_cpu::find_event(hEvent, &event); result != CUDA_SUCCESS) {
      return result;
    }
    if (std::shared_ptr<EventRecord> record = event->latest()) {
      record->stream->wait(record->sequence);
    }
    return event->context().sticky_error();
  });
}

// Milliseconds between the two events' latest records, by the host's steady clock.
PTXCPU_ENTRY CUresult CUDAAPI cuEventElapsedTime(float* pMilliseconds, CUevent hStart,
                                                 CUevent hEnd) {
  return entry(__func__, [&] {
    if (pMilliseconds == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "pMilliseconds is NULL");
    std::shared_ptr<Event> start;
    std::shared_ptr<Event> end;
    if (CUresult result = hal::ptx_cpu::find_event(hStart, &start); result != CUDA_SUCCESS) {
      return result;
    }
    if (CUresult result = hal::ptx_cpu::find_event(hEnd, &end); result != CUDA_SUCCESS) {
      return result;
    }
    if (!start->timing() || !end->timing()) {
      return fail(CUDA_ERROR_INVALID_HANDLE, "an event was created with CU_EVENT_DISABLE_TIMING");
    }
    if (&start->context() != &end->context()) {
      return fail(CUDA_ERROR_INVALID_HANDLE, "the events belong to different contexts");
    }
    if (CUresult sticky = start->context().sticky_error(); sticky != CUDA_SUCCESS) return sticky;
    std::shared_ptr<EventRecord> first = start->latest();
    std::shared_ptr<EventRecord> last = end->latest();
    if (first == nullptr || last == nullptr) {
      return fail(CUDA_ERROR_INVALID_HANDLE, "an event has never been recorded");
    }
    if (!first->done() || !last->done()) return CUDA_ERROR_NOT_READY;
    const std::chrono::duration<double, std::milli> elapsed = last->time - first->time;
    *pMilliseconds = static_cast<float>(elapsed.count());
    return CUDA_SUCCESS;
  });
}
