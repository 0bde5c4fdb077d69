// The objects of the Python extension `hal._hal`: thin owners of hal's C handles.
//
// Everything here goes through the public C ABI (hal/hal.h) only: hal validates every call, and
// these classes add what Python needs on top: ownership (a handle is released when its last
// Python reference goes), the lifetime rule for device memory (memory used by work in flight is
// kept until that work has completed), and errors raised as hal.Error with hal's own message.
//
// Threading: every method runs with the GIL held except the waits (synchronize, copies to the
// host), which release it. hal itself is thread-safe, so two Python threads may launch on two
// streams at once.
#pragma once

#include <hal/hal.h>
#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

namespace hal_python {

namespace nb = nanobind;

// A failed hal call: the status and hal_last_error() at the time. Translated into the
// hal.Error subclass for the status (hal/_errors.py).
struct Error {
  hal_status status;
  std::string message;
};

// Throws Error when |status| is not HAL_SUCCESS, with hal_last_error()'s text.
void check(hal_status status);

// One device allocation; hal_mem_free when the last owner goes (arrays, and streams holding
// it for work in flight).
struct Buffer {
  Buffer(hal_device device, size_t size);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  // Frees the memory now (hal first waits for work that uses it); every array viewing it then
  // raises hal.InvalidArgumentError. A second release does nothing.
  void release();

  hal_device device;
  hal_deviceptr base = 0;
  size_t size = 0;
};

// The part of a Python hal.Array the launch path reads: which allocation, and where in it.
// hal.Array (Python) derives from it and adds shape and dtype.
struct ArrayBase {
  std::shared_ptr<Buffer> buffer;
  size_t offset = 0;  // bytes from the allocation's base
  size_t nbytes = 0;

  hal_deviceptr address() const { return buffer->base + offset; }
  // Raises hal.InvalidArgumentError when the array has no memory (never bound, or freed).
  const std::shared_ptr<Buffer>& checked_buffer() const;
};

// A hal stream. Keeps every buffer that issued work uses until a synchronize shows the work
// done, so dropping the last Python reference to an array never frees memory a kernel still
// reads or writes.
class Stream {
 public:
  explicit Stream(hal_device device);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  hal_stream handle() const;  // raises hal.InvalidHandleError after close()
  hal_device device() const { return device_; }
  void keep(const std::shared_ptr<Buffer>& buffer);
  void synchronize();  // releases the GIL while it waits
  bool query();        // true when all issued work has completed
  void close();        // waits, then destroys the stream; later use raises
  bool closed() const { return handle_ == nullptr; }
  size_t pending_buffers();  // how many buffers issued work still holds (for tests)

 private:
  hal_device device_;
  hal_stream handle_ = nullptr;
  std::mutex mutex_;  // guards pending_ (two Python threads may share a stream)
  std::vector<std::shared_ptr<Buffer>> pending_;
  std::unordered_set<const Buffer*> pending_set_;  // the same buffers, to keep each once
};

class Event {
 public:
  explicit Event(hal_device device);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(Stream& stream);
  void synchronize();  // releases the GIL
  bool query();
  float elapsed_ms(const Event& end) const;  // from this event to |end|
  hal_event handle() const;

 private:
  hal_event handle_ = nullptr;
};

// A loaded module. Functions keep it alive; unload() releases it at once, after which its
// functions raise hal.InvalidHandleError (hal's own check).
class Module {
 public:
  Module(hal_device device, const void* blob, size_t size, const hal_module_options* options);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  hal_module handle() const { return handle_; }
  void unload();
  bool unloaded() const { return handle_ == nullptr; }

 private:
  hal_module handle_ = nullptr;
};

struct Param {
  hal_param_kind kind;
  uint32_t size;
  uint32_t alignment;
  hal_param_type type;  // HAL_PARAM_TYPE_UNKNOWN when the IR does not say
};

// A kernel of a module, with the parameter list hal reflected from its IR.
class Function {
 public:
  Function(std::shared_ptr<Module> module, const std::string& name);

  // fn(grid, block, *args, shared=0, stream): packs each argument by its parameter and
  // launches. Raises TypeError naming the parameter for an argument of the wrong kind.
  void launch(nb::handle grid, nb::handle block, nb::args args, uint32_t shared, Stream& stream);

  // The benchmark's baseline: packs the arguments once, then calls hal_launch |count| times from
  // C++ with the GIL held, as a C program would. Returns the seconds the calls took.
  double launch_repeated(uint32_t count, nb::handle grid, nb::handle block, nb::args args,
                         Stream& stream);

  const std::string& name() const { return name_; }
  const std::vector<Param>& params() const { return params_; }
  bool params_known() const { return params_known_; }
  hal_function_info info() const;

 private:
  std::shared_ptr<Module> module_;
  hal_function handle_ = nullptr;
  std::string name_;
  bool params_known_ = true;
  std::vector<Param> params_;
  // Scratch reused from call to call (guarded by the GIL): no allocation per launch.
  std::vector<uint64_t> values_;
  std::vector<void*> pointers_;
  std::vector<std::shared_ptr<Buffer>> used_;
  hal_launch_config last_config_{};
};

}  // namespace hal_python
