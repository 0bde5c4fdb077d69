// Streams: creation, destruction, synchronisation, cross-stream waits, host functions.
#include "ptx_cpu/context.h"
#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/event.h"
#include "ptx_cpu/handles.h"
#include "ptx_cpu/stream.h"

#include <string>

namespace hal::ptx_cpu {
namespace {

CUresult create_stream(CUstream* out, unsigned flags, int priority) {
  if (out == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "phStream is NULL");
  if (flags != CU_STREAM_DEFAULT && flags != CU_STREAM_NON_BLOCKING) {
    return fail(
        CUDA_ERROR_INVALID_VALUE,
        "Flags must be CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING, not " + std::to_string(flags));
  }
  Context* context = nullptr;
  if (CUresult result = current_context(&context); result != CUDA_SUCCESS) return result;
  // Priorities are not supported: every one is clamped into the range [0, 0].
  (void)priority;
  std::shared_ptr<Stream> stream = context->create_stream(flags, 0);
  stream_handles().add(stream);
  *out = reinterpret_cast<CUstream>(stream.get());
  return CUDA_SUCCESS;
}

// The stream, in the current context, that an operation is issued on.
CUresult issue_stream(CUstream handle, Context** context, std::shared_ptr<Stream>* stream) {
  if (CUresult result = current_context(context); result != CUDA_SUCCESS) return result;
  return (*context)->resolve_stream(handle, stream);
}

}  // namespace
}  // namespace hal::ptx_cpu

using hal::ptx_cpu::Context;
using hal::ptx_cpu::entry;
using hal::ptx_cpu::fail;
using hal::ptx_cpu::Stream;

PTXCPU_ENTRY CUresult CUDAAPI cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  return entry(__func__, [&] { return hal::ptx_cpu::create_stream(phStream, Flags, 0); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags,
                                                         int priority) {
  return entry(__func__, [&] { return hal::ptx_cpu::create_stream(phStream, flags, priority); });
}

// Returns at once; work already issued on the stream still runs, and cuCtxSynchronize waits
// for it.
PTXCPU_ENTRY CUresult CUDAAPI cuStreamDestroy(CUstream hStream) {
  return entry(__func__, [&] {
    if (CUresult result = hal::ptx_cpu::require_init(); result != CUDA_SUCCESS) return result;
    if (hStream == nullptr || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD) {
      return fail(CUDA_ERROR_INVALID_HANDLE, "the default streams cannot be destroyed");
    }
    std::shared_ptr<Stream> stream = hal::ptx_cpu::stream_handles().remove(hStream);
    if (stream == nullptr) return fail(CUDA_ERROR_INVALID_HANDLE, "not a live stream");
    stream->context().destroy_stream(stream);
    return stream->context().sticky_error();
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  return entry(__func__, [&] {
    std::shared_ptr<Stream> stream;
    if (CUresult result = hal::ptx_cpu::find_stream(hStream, &stream); result != CUDA_SUCCESS) {
      return result;
    }
    if (stream->kind() == Stream::Kind::kLegacy) {
      stream->context().wait_legacy();
    } else {
      stream->wait(stream->submitted());
    }
    return stream->context().sticky_error();
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuStreamQuery(CUstream hStream) {
  return entry(__func__, [&] {
    std::shared_ptr<Stream> stream;
    if (CUresult result = hal::ptx_cpu::find_stream(hStream, &stream); result != CUDA_SUCCESS) {
      return result;
    }
    if (CUresult sticky = stream->context().sticky_error(); sticky != CUDA_SUCCESS) return sticky;
    const bool done = stream->kind() == Stream::Kind::kLegacy
                          ? stream->context().legacy_done()
                          : stream->completed(stream->submitted());
    return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  });
}

// Later work on |hStream| waits for the event's latest record as of this call. The event may
// belong to another device's context; an event never recorded makes this a no-op.
PTXCPU_ENTRY CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
                                                unsigned int Flags) {
  return entry(__func__, [&] {
    if (Flags != CU_EVENT_WAIT_DEFAULT) {
      return fail(CUDA_ERROR_INVALID_VALUE, "Flags must be CU_EVENT_WAIT_DEFAULT");
    }
    Context* context = nullptr;
    std::shared_ptr<Stream> stream;
    if (CUresult result = hal::ptx_cpu::issue_stream(hStream, &context, &stream);
        result != CUDA_SUCCESS) {
      return result;
    }
    std::shared_ptr<hal::ptx_cpu::Event> event = hal::ptx_cpu::event_handles().find(hEvent);
    if (event == nullptr) return fail(CUDA_ERROR_INVALID_HANDLE, "not a live event");
    std::shared_ptr<hal::ptx_cpu::EventRecord> record = event->latest();
    if (record == nullptr) return CUDA_SUCCESS;
    context->enqueue(*stream, {hal::ptx_cpu::Dependency{record->stream, record->sequence}},
                     [](CUresult) {});
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int* flags) {
  return entry(__func__, [&] {
    if (flags == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "flags is NULL");
    std::shared_ptr<Stream> stream;
    if (CUresult result = hal::ptx_cpu::find_stream(hStream, &stream); result != CUDA_SUCCESS) {
      return result;
    }
    *flags = stream->flags();
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int* priority) {
  return entry(__func__, [&] {
    if (priority == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "priority is NULL");
    std::shared_ptr<Stream> stream;
    if (CUresult result = hal::ptx_cpu::find_stream(hStream, &stream); result != CUDA_SUCCESS) {
      return result;
    }
    *priority = stream->priority();
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext* pctx) {
  return entry(__func__, [&] {
    if (pctx == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "pctx is NULL");
    std::shared_ptr<Stream> stream;
    if (CUresult result = hal::ptx_cpu::find_stream(hStream, &stream); result != CUDA_SUCCESS) {
      return result;
    }
    *pctx = stream->context().handle();
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice* device) {
  return entry(__func__, [&] {
    if (device == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "device is NULL");
    std::shared_ptr<Stream> stream;
    if (CUresult result = hal::ptx_cpu::find_stream(hStream, &stream); result != CUDA_SUCCESS) {
      return result;
    }
    *device = stream->context().device();
    return CUDA_SUCCESS;
  });
}

// Runs |fn| on the stream's worker thread, in order. It must not call the driver: a host
// function that waits for its own stream would wait forever, as in CUDA. Not run once a kernel
// of the context has faulted.
PTXCPU_ENTRY CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  return entry(__func__, [&] {
    if (fn == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "fn is NULL");
    Context* context = nullptr;
    std::shared_ptr<Stream> stream;
    if (CUresult result = hal::ptx_cpu::issue_stream(hStream, &context, &stream);
        result != CUDA_SUCCESS) {
      return result;
    }
    context->enqueue(*stream, {}, [fn, userData](CUresult status) {
      if (status == CUDA_SUCCESS) fn(userData);
    });
    return CUDA_SUCCESS;
  });
}

// As cuLaunchHostFunc, but always called, with the context's error status.
PTXCPU_ENTRY CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
                                                  void* userData, unsigned int flags) {
  return entry(__func__, [&] {
    if (callback == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "callback is NULL");
    if (flags != 0) return fail(CUDA_ERROR_INVALID_VALUE, "flags must be 0");
    Context* context = nullptr;
    std::shared_ptr<Stream> stream;
    if (CUresult result = hal::ptx_cpu::issue_stream(hStream, &context, &stream);
        result != CUDA_SUCCESS) {
      return result;
    }
    context->enqueue(*stream, {}, [hStream, callback, userData](CUresult status) {
      callback(hStream, status, userData);
    });
    return CUDA_SUCCESS;
  });
}
