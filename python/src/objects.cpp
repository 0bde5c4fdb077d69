// Owners of hal's handles for Python: buffers, streams, events, modules, functions.
#include "hal_python.h"

#include <cstring>
#include <utility>

namespace hal_python {

void check(hal_status status) {
  if (status != HAL_SUCCESS) throw Error{status, hal_last_error()};
}

// ---- Buffer -------------------------------------------------------------------------------

Buffer::Buffer(hal_device device_, size_t size_) : device(device_), size(size_) {
  check(hal_mem_alloc(device, size, &base));
}

Buffer::~Buffer() {
  // Work that used the buffer has completed (streams hold a buffer until then), so this does
  // not wait. A failure here has no caller to report to; hal logs it and its leak report names
  // what was left.
  if (base != 0) (void)hal_mem_free(device, base);
}

void Buffer::release() {
  if (base == 0) return;
  const hal_deviceptr freed = std::exchange(base, 0);
  hal_status status;
  {
    nb::gil_scoped_release unlocked;
    status = hal_mem_free(device, freed);
  }
  check(status);
}

const std::shared_ptr<Buffer>& ArrayBase::checked_buffer() const {
  if (!buffer) {
    throw Error{HAL_ERROR_INVALID_ARGUMENT,
                "the array has no device memory (it was never bound to an allocation); create "
                "arrays with Device.empty or Device.asarray"};
  }
  if (buffer->base == 0) {
    throw Error{HAL_ERROR_INVALID_ARGUMENT,
                "the array's memory was freed (Array.free); use the array no more, or keep it "
                "until its last use"};
  }
  return buffer;
}

// ---- Stream -------------------------------------------------------------------------------

Stream::Stream(hal_device device) : device_(device) {
  check(hal_stream_create(device, &handle_));
}

Stream::~Stream() {
  if (handle_ != nullptr) (void)hal_stream_destroy(handle_);  // waits for the work first
}

hal_stream Stream::handle() const {
  if (handle_ == nullptr) {
    throw Error{HAL_ERROR_INVALID_HANDLE,
                "the stream was closed; create another with Device.stream()"};
  }
  return handle_;
}

void Stream::keep(const std::shared_ptr<Buffer>& buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Launches reuse the same buffers over and over: keep each once.
  if (pending_set_.insert(buffer.get()).second) pending_.push_back(buffer);
}

void Stream::synchronize() {
  hal_stream stream = handle();
  hal_status status;
  {
    nb::gil_scoped_release release;
    status = hal_stream_synchronize(stream);
  }
  // The work has ended, successfully or not: nothing of it still uses the buffers.
  std::vector<std::shared_ptr<Buffer>> done;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done.swap(pending_);
    pending_set_.clear();
  }
  done.clear();
  check(status);
}

size_t Stream::pending_buffers() {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.size();
}

bool Stream::query() {
  const hal_status status = hal_stream_query(handle());
  if (status == HAL_ERROR_NOT_READY) return false;
  check(status);
  return true;
}

void Stream::close() {
  if (handle_ == nullptr) return;
  hal_stream stream = std::exchange(handle_, nullptr);
  {
    nb::gil_scoped_release release;
    (void)hal_stream_destroy(stream);  // waits for the pending work first
  }
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.clear();
  pending_set_.clear();
}

// ---- Event --------------------------------------------------------------------------------

Event::Event(hal_device device) {
  check(hal_event_create(device, &handle_));
}

Event::~Event() {
  if (handle_ != nullptr) (void)hal_event_destroy(handle_);
}

hal_event Event::handle() const {
  return handle_;
}

void Event::record(Stream& stream) {
  check(hal_event_record(handle_, stream.handle()));
}

void Event::synchronize() {
  hal_status status;
  {
    nb::gil_scoped_release release;
    status = hal_event_synchronize(handle_);
  }
  check(status);
}

bool Event::query() {
  const hal_status status = hal_event_query(handle_);
  if (status == HAL_ERROR_NOT_READY) return false;
  check(status);
  return true;
}

float Event::elapsed_ms(const Event& end) const {
  float ms = 0.0f;
  check(hal_event_elapsed_ms(handle_, end.handle_, &ms));
  return ms;
}

// ---- Module and Function ------------------------------------------------------------------

Module::Module(hal_device device, const void* blob, size_t size,
               const hal_module_options* options) {
  check(hal_module_load(device, blob, size, options, &handle_));
}

Module::~Module() {
  if (handle_ != nullptr) (void)hal_module_unload(handle_);
}

void Module::unload() {
  if (handle_ == nullptr) return;
  check(hal_module_unload(std::exchange(handle_, nullptr)));
}

Function::Function(std::shared_ptr<Module> module, const std::string& name)
    : module_(std::move(module)), name_(name) {
  if (module_->unloaded()) {
    throw Error{HAL_ERROR_INVALID_HANDLE, "the module was unloaded; load it again"};
  }
  check(hal_module_get_function(module_->handle(), name.c_str(), &handle_));
  const hal_function_info fi = info();
  if (fi.param_count == HAL_PARAM_COUNT_UNKNOWN) {
    params_known_ = false;
    return;
  }
  for (uint32_t i = 0; i < fi.param_count; ++i) {
    hal_param_info p;
    std::memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    check(hal_function_get_param(handle_, i, &p));
    params_.push_back(Param{p.kind, p.size, p.alignment, p.type});
  }
}

hal_function_info Function::info() const {
  hal_function_info fi;
  std::memset(&fi, 0, sizeof fi);
  fi.struct_size = sizeof fi;
  check(hal_function_get_info(handle_, &fi));
  return fi;
}

}  // namespace hal_python
