#include "ptx_cpu/context.h"

#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/errors.h"
#include "ptx_cpu/event.h"
#include "ptx_cpu/handles.h"
#include "ptx_cpu/logs.h"
#include "ptx_cpu/memory.h"
#include "ptx_cpu/module.h"

#include <algorithm>
#include <string>

namespace hal::ptx_cpu {

// ===========================================================================================
// Life
// ===========================================================================================

void Context::retain() {
  std::lock_guard<std::mutex> lock(life_mutex_);
  if (retains_++ == 0) activate();
}

CUresult Context::release() {
  std::lock_guard<std::mutex> lock(life_mutex_);
  if (retains_ == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (--retains_ == 0) deactivate();
  return CUDA_SUCCESS;
}

unsigned Context::retain_count() const {
  std::lock_guard<std::mutex> lock(life_mutex_);
  return retains_;
}

void Context::activate() {
  sticky_.store(CUDA_SUCCESS);
  lane_instructions_.store(0);
  warp_instructions_.store(0);
  kernels_.store(0);
  active_.store(true, std::memory_order_release);
}

void Context::deactivate() {
  // New calls in the context fail from here on; then its work finishes, then everything made in
  // it goes. What other contexts' streams still hold (a dependency on one of its streams, a
  // program) stays valid until they let go.
  active_.store(false, std::memory_order_release);
  wait_idle();
  // Page-locked memory made here may be in use by other devices' copies and kernels.
  Driver::get()->wait_all_idle();
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(order_mutex_);
    streams.swap(streams_);
    legacy_.reset();
    per_thread_.clear();
  }
  for (const std::shared_ptr<Stream>& stream : streams) stream->close();
  for (const std::shared_ptr<Stream>& stream : streams) stream->join();
  stream_handles().remove_if([&](const Stream& stream) { return &stream.context() == this; });
  event_handles().remove_if([&](const Event& event) { return &event.context() == this; });
  function_handles().remove_if(
      [&](const Function& function) { return &function.context() == this; });
  module_handles().remove_if([&](const Module& module) { return &module.context() == this; });
  Driver::get()->memory().release_owned(*this);
  sticky_.store(CUDA_SUCCESS);
}

// ===========================================================================================
// Faults
// ===========================================================================================

void Context::record_fault(CUresult result, std::string_view message) {
  CUresult expected = CUDA_SUCCESS;
  sticky_.compare_exchange_strong(expected, result, std::memory_order_acq_rel);
  std::string line = "device " + std::to_string(device_) + ": ";
  line += error_name_or_number(result);
  line += ": ";
  line += message;
  log_message(CU_LOG_LEVEL_ERROR, line);
}

// ===========================================================================================
// Streams
// ===========================================================================================

std::shared_ptr<Stream> Context::legacy_locked() {
  if (legacy_ == nullptr) {
    legacy_ = std::make_shared<Stream>(*this, Stream::Kind::kLegacy, 0, 0);
    streams_.push_back(legacy_);
  }
  return legacy_;
}

CUresult Context::resolve_stream(CUstream handle, std::shared_ptr<Stream>* out) {
  if (handle == nullptr || handle == CU_STREAM_LEGACY) {
    std::lock_guard<std::mutex> lock(order_mutex_);
    *out = legacy_locked();
    return CUDA_SUCCESS;
  }
  if (handle == CU_STREAM_PER_THREAD) {
    std::lock_guard<std::mutex> lock(order_mutex_);
    std::shared_ptr<Stream>& stream = per_thread_[std::this_thread::get_id()];
    if (stream == nullptr) {
      stream = std::make_shared<Stream>(*this, Stream::Kind::kPerThread, 0, 0);
      streams_.push_back(stream);
    }
    *out = stream;
    return CUDA_SUCCESS;
  }
  std::shared_ptr<Stream> stream = stream_handles().find(handle);
  if (stream == nullptr) return fail(CUDA_ERROR_INVALID_HANDLE, "not a live stream");
  if (&stream->context() != this) {
    return fail(CUDA_ERROR_INVALID_HANDLE,
                "the stream belongs to device " + std::to_string(stream->context().device()) +
                    "'s context, not to the current one (device " + std::to_string(device_) + ")");
  }
  *out = std::move(stream);
  return CUDA_SUCCESS;
}

std::shared_ptr<Stream> Context::create_stream(unsigned flags, int priority) {
  auto stream = std::make_shared<Stream>(*this, Stream::Kind::kCreated, flags, priority);
  std::lock_guard<std::mutex> lock(order_mutex_);
  reap_locked();
  streams_.push_back(stream);
  return stream;
}

void Context::destroy_stream(const std::shared_ptr<Stream>& stream) {
  stream->close();
  std::lock_guard<std::mutex> lock(order_mutex_);
  reap_locked();
}

void Context::reap_locked() {
  auto drained = [](const std::shared_ptr<Stream>& stream) {
    if (!stream->finished()) return false;
    stream->join();
    return true;
  };
  streams_.erase(std::remove_if(streams_.begin(), streams_.end(), drained), streams_.end());
}

// On the legacy stream, every blocking stream's work issued so far; on a blocking stream, the
// legacy stream's.
void Context::add_implied_dependencies(Stream& stream, std::vector<Dependency>* dependencies) {
  const auto wait_for = [&](const std::shared_ptr<Stream>& other) {
    const uint64_t tail = other->submitted();
    if (tail != 0 && !other->completed(tail)) dependencies->push_back(Dependency{other, tail});
  };
  if (stream.kind() == Stream::Kind::kLegacy) {
    for (const std::shared_ptr<Stream>& other : streams_) {
      if (other.get() != &stream && other->blocking()) wait_for(other);
    }
  } else if (stream.blocking() && legacy_ != nullptr) {
    wait_for(legacy_);
  }
  // A stream runs in order: waiting for its own earlier work is already implied.
  dependencies->erase(
      std::remove_if(dependencies->begin(), dependencies->end(),
                     [&](const Dependency& d) { return d.stream.get() == &stream; }),
      dependencies->end());
}

uint64_t Context::enqueue(Stream& stream, std::vector<Dependency> dependencies, Work work) {
  std::lock_guard<std::mutex> lock(order_mutex_);
  add_implied_dependencies(stream, &dependencies);
  return stream.push(std::move(dependencies), std::move(work));
}

bool Context::run_inline(Stream& stream, const Work& work) {
  {
    // The sequence number is taken under the ordering lock, so an operation enqueued on another
    // stream from now on sees it pending and waits for it, as for any pushed operation.
    std::lock_guard<std::mutex> lock(order_mutex_);
    std::vector<Dependency> dependencies;
    add_implied_dependencies(stream, &dependencies);
    if (!dependencies.empty() || stream.begin_inline() == 0) return false;
  }
  try {
    work(sticky_error());
  } catch (...) {
    stream.finish_inline();  // never leave the worker held off
    throw;
  }
  stream.finish_inline();
  return true;
}

std::vector<std::pair<std::shared_ptr<Stream>, uint64_t>> Context::tails(bool blocking_only) {
  std::vector<std::pair<std::shared_ptr<Stream>, uint64_t>> result;
  std::lock_guard<std::mutex> lock(order_mutex_);
  reap_locked();
  for (const std::shared_ptr<Stream>& stream : streams_) {
    if (!blocking_only || stream->blocking()) result.emplace_back(stream, stream->submitted());
  }
  return result;
}

void Context::wait_idle() {
  for (const auto& [stream, tail] : tails(false)) stream->wait(tail);
}

void Context::wait_legacy() {
  for (const auto& [stream, tail] : tails(true)) stream->wait(tail);
}

bool Context::legacy_done() {
  for (const auto& [stream, tail] : tails(true)) {
    if (!stream->completed(tail)) return false;
  }
  return true;
}

void Context::add_run(uint64_t lane_instructions, uint64_t warp_instructions) {
  lane_instructions_.fetch_add(lane_instructions, std::memory_order_relaxed);
  warp_instructions_.fetch_add(warp_instructions, std::memory_order_relaxed);
  kernels_.fetch_add(1, std::memory_order_relaxed);
}

CUresult find_stream(CUstream handle, std::shared_ptr<Stream>* out) {
  if (handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
    Context* context = nullptr;
    if (CUresult result = current_context(&context, /*ignore_sticky=*/true);
        result != CUDA_SUCCESS) {
      return result;
    }
    return context->resolve_stream(handle, out);
  }
  if (CUresult result = require_init(); result != CUDA_SUCCESS) return result;
  std::shared_ptr<Stream> stream = stream_handles().find(handle);
  if (stream == nullptr) return fail(CUDA_ERROR_INVALID_HANDLE, "not a live stream");
  *out = std::move(stream);
  return CUDA_SUCCESS;
}

// ===========================================================================================
// The calling thread's context stack
// ===========================================================================================

namespace {
thread_local std::vector<Context*> t_stack;
}  // namespace

Context* current_thread_context() {
  return t_stack.empty() ? nullptr : t_stack.back();
}

void set_current_thread_context(Context* context) {
  if (context == nullptr) {
    if (!t_stack.empty()) t_stack.pop_back();
  } else if (t_stack.empty()) {
    t_stack.push_back(context);
  } else {
    t_stack.back() = context;
  }
}

void push_thread_context(Context* context) {
  t_stack.push_back(context);
}

Context* pop_thread_context() {
  if (t_stack.empty()) return nullptr;
  Context* top = t_stack.back();
  t_stack.pop_back();
  return top;
}

}  // namespace hal::ptx_cpu
