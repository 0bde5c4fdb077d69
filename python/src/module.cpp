// The extension module hal._hal: the C ABI's objects for the Python package `hal`.
//
// Devices cross as ints (a hal_device is owned by the runtime and lives for the process); every
// other handle is an object that releases it. The Pythonic surface (hal.Device, hal.Array, the
// error classes) is in hal/__init__.py over these.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <map>
#include <memory>

#include "hal_python.h"

namespace nb = nanobind;
using namespace nb::literals;
using namespace hal_python;

namespace {

hal_device to_device(uintptr_t handle) {
  return reinterpret_cast<hal_device>(handle);
}
uintptr_t from_device(hal_device device) {
  return reinterpret_cast<uintptr_t>(device);
}

nb::dict device_info(uintptr_t handle) {
  hal_device_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  check(hal_device_get_info(to_device(handle), &info));
  auto triple = [](const uint32_t v[3]) { return nb::make_tuple(v[0], v[1], v[2]); };
  nb::dict d;
  d["backend"] = info.backend_name;  // "cuda", "vulkan", or a driver module's own name
  d["backend_index"] = info.backend_index;
  d["global_index"] = info.global_index;
  d["name"] = info.name;
  d["driver_name"] = info.driver_name;
  d["vendor_id"] = info.vendor_id;
  d["device_id"] = info.device_id;
  d["uuid"] = nb::bytes(reinterpret_cast<const char*>(info.uuid), sizeof info.uuid);
  d["driver_version"] = info.driver_version;
  d["ir_mask"] = info.ir_mask;
  d["total_memory"] = info.total_memory;
  d["max_allocation_size"] = info.max_allocation_size;
  d["max_threads_per_block"] = info.max_threads_per_block;
  d["max_block_dim"] = triple(info.max_block_dim);
  d["max_grid_dim"] = triple(info.max_grid_dim);
  d["max_shared_memory_per_block"] = info.max_shared_memory_per_block;
  d["subgroup_size"] = info.subgroup_size;
  d["compute_units"] = info.compute_units;
  d["pointer_alignment"] = info.pointer_alignment;
  d["is_cpu"] = info.is_cpu != 0;
  d["unified_memory"] = info.unified_memory != 0;
  d["compute_capability"] =
      nb::make_tuple(info.compute_capability_major, info.compute_capability_minor);
  d["features"] = info.features;
  d["driver_info"] = info.driver_info;
  d["api_version"] = info.api_version;
  d["driver_id"] = info.driver_id;
  d["conformance_version"] = info.conformance_version;
  return d;
}

nb::list backends() {
  check(hal_init());
  uint32_t count = 0;
  check(hal_backend_count(&count));
  nb::list out;
  for (uint32_t i = 0; i < count; ++i) {
    hal_backend_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    check(hal_backend_get_info(i, &info));
    nb::dict d;
    d["name"] = info.name;
    d["available"] = info.available != 0;
    d["device_count"] = info.device_count;
    d["reason"] = info.reason;
    d["module"] = info.module;
    out.append(d);
  }
  return out;
}

// One stream per device for calls given no stream, made on first use.
std::map<hal_device, std::shared_ptr<Stream>>& default_streams() {
  static auto* streams = new std::map<hal_device, std::shared_ptr<Stream>>();
  return *streams;
}

std::shared_ptr<Stream> default_stream(uintptr_t handle) {
  auto& streams = default_streams();
  auto it = streams.find(to_device(handle));
  if (it != streams.end() && !it->second->closed()) return it->second;
  auto stream = std::make_shared<Stream>(to_device(handle));
  streams[to_device(handle)] = stream;
  return stream;
}

// The module's device, for a call given no stream.
struct LoadedModule {
  std::shared_ptr<Module> module;
  uintptr_t device;
};

struct BoundFunction {
  std::shared_ptr<Function> function;
  uintptr_t device;
};

// A copy's host side: an address and a byte count taken from an object that exposes the
// buffer protocol (NumPy arrays, bytes, bytearray, memoryview), contiguous.
struct HostSpan {
  explicit HostSpan(nb::handle object, bool writable) {
    const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object.ptr(), &view, flags) != 0) {
      throw nb::python_error();
    }
  }
  ~HostSpan() { PyBuffer_Release(&view); }
  HostSpan(const HostSpan&) = delete;
  HostSpan& operator=(const HostSpan&) = delete;
  Py_buffer view{};
};

// The host address of an array's bytes where the device's memory has one (hal_mem_host_pointer);
// raises hal.NotSupportedError elsewhere.
void* host_address(const ArrayBase& a) {
  const auto& buffer = a.checked_buffer();
  void* host = nullptr;
  check(hal_mem_host_pointer(buffer->device, a.nbytes != 0 ? a.address() : buffer->base, &host));
  return host;
}

void check_span(const char* what, size_t host_bytes, size_t nbytes) {
  if (host_bytes != nbytes) {
    throw nb::value_error((std::string(what) + ": the host buffer has " +
                           std::to_string(host_bytes) + " bytes and the array " +
                           std::to_string(nbytes))
                              .c_str());
  }
}

}  // namespace

NB_MODULE(_hal, m) {
  m.doc() = "hal's C ABI for the Python package hal (use the package, not this module)";

  m.def("version", [] {
    const uint32_t v = hal_version();
    return nb::make_tuple(v >> 16, (v >> 8) & 0xFF, v & 0xFF);
  });
  m.def("init", [] { check(hal_init()); });
  m.def("backends", &backends);
  m.def("device_count", [] {
    check(hal_init());
    uint32_t count = 0;
    check(hal_device_count(&count));
    return count;
  });
  m.def("device_get", [](uint32_t index) {
    hal_device device = nullptr;
    check(hal_device_get(index, &device));
    return from_device(device);
  });
  m.def("device_find", [](const std::string& selector) {
    hal_device device = nullptr;
    check(hal_device_find(selector.c_str(), &device));
    return from_device(device);
  });
  m.def("device_info", &device_info);
  m.def("device_synchronize", [](uintptr_t device) {
    hal_status status;
    {
      nb::gil_scoped_release release;
      status = hal_device_synchronize(to_device(device));
    }
    check(status);
  });
  m.def("default_stream", &default_stream);
  m.def("shutdown", [] {
    // Called at interpreter exit: the default streams go before hal's leak report is written.
    for (auto& [device, stream] : default_streams()) stream->close();
    default_streams().clear();
  });
  m.def("last_error", [] { return std::string(hal_last_error()); });
  m.def("status_string",
        [](int status) { return std::string(hal_status_string(static_cast<hal_status>(status))); });

  nb::class_<Buffer>(m, "Buffer")
      .def(nb::new_([](uintptr_t device, size_t size) {
             return std::make_shared<Buffer>(to_device(device), size);
           }),
           "device"_a, "size"_a)
      .def_ro("size", &Buffer::size)
      .def("release", &Buffer::release)
      .def_prop_ro("address", [](const Buffer& b) { return b.base; });

  nb::class_<ArrayBase>(m, "ArrayBase")
      .def(nb::init<>())
      .def("_bind",
           [](ArrayBase& a, std::shared_ptr<Buffer> buffer, size_t offset, size_t nbytes) {
             if (offset + nbytes > buffer->size) throw nb::value_error("view beyond its buffer");
             a.buffer = std::move(buffer);
             a.offset = offset;
             a.nbytes = nbytes;
           })
      .def_prop_ro("_buffer", [](const ArrayBase& a) { return a.buffer; })
      .def_ro("_offset", &ArrayBase::offset)
      .def_ro("nbytes", &ArrayBase::nbytes)
      .def_prop_ro("address", [](const ArrayBase& a) { return a.checked_buffer(), a.address(); })
      .def("_host_bytes",
           [](nb::handle self) {
             // The array's bytes in place, where the device's memory has a host address; the
             // NumPy array keeps the hal.Array, and so the memory, alive.
             const ArrayBase& a = nb::cast<const ArrayBase&>(self);
             const size_t shape[1] = {a.nbytes};
             return nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(host_address(a), 1, shape, self);
           })
      .def("_host_tensor",
           [](nb::handle self, const std::vector<size_t>& shape, uint8_t code, uint8_t bits) {
             // The array's memory in place as a DLPack producer (shape, DLPack type code and
             // bits), for hal.Array.__dlpack__. Its capsules hold the hal.Array through nanobind's
             // deleter, which releases it even while the interpreter destroys the program's
             // objects at exit: a view still alive then is the program's, and its memory must be
             // freed before the leak checks run. (NumPy's exporter keeps its reference once
             // finalization has begun, which made such a view look like a leak.)
             const ArrayBase& a = nb::cast<const ArrayBase&>(self);
             size_t bytes = bits / 8;
             for (size_t n : shape) bytes *= n;
             if (bytes != a.nbytes)
               throw nb::value_error("the shape and type do not match the array");
             return nb::ndarray<nb::array_api>(host_address(a), shape.size(), shape.data(), self,
                                               nullptr, nb::dlpack::dtype{code, bits, 1});
           });

  nb::class_<Stream>(m, "Stream")
      .def(nb::new_([](uintptr_t device) { return std::make_shared<Stream>(to_device(device)); }),
           "device"_a)
      .def("synchronize", &Stream::synchronize)
      .def("query", &Stream::query)
      .def("close", &Stream::close)
      .def_prop_ro("closed", &Stream::closed)
      .def_prop_ro("device", [](const Stream& s) { return from_device(s.device()); })
      .def_prop_ro("_pending_buffers", &Stream::pending_buffers)
      .def("__enter__", [](nb::handle self) { return self; })
      .def(
          "__exit__",
          [](Stream& s, nb::handle, nb::handle, nb::handle) {
            if (!s.closed()) s.synchronize();
            s.close();
          },
          "exc_type"_a.none(), "exc"_a.none(), "traceback"_a.none());

  m.def("copy_htod", [](Stream& stream, const ArrayBase& dst, nb::handle src) {
    HostSpan span(src, false);
    check_span("copy to the device", static_cast<size_t>(span.view.len), dst.nbytes);
    const auto& buffer = dst.checked_buffer();
    check(hal_memcpy_htod(stream.handle(), dst.address(), span.view.buf, dst.nbytes));
    stream.keep(buffer);
  });
  m.def("copy_dtoh", [](Stream& stream, nb::handle dst, const ArrayBase& src) {
    // Synchronous: the host buffer must hold the data when this returns.
    HostSpan span(dst, true);
    check_span("copy to the host", static_cast<size_t>(span.view.len), src.nbytes);
    src.checked_buffer();
    check(hal_memcpy_dtoh(stream.handle(), span.view.buf, src.address(), src.nbytes));
    stream.synchronize();
  });
  m.def("copy_dtod", [](Stream& stream, const ArrayBase& dst, const ArrayBase& src) {
    if (dst.nbytes != src.nbytes) {
      throw nb::value_error(("copy between arrays of " + std::to_string(src.nbytes) + " and " +
                             std::to_string(dst.nbytes) + " bytes")
                                .c_str());
    }
    const auto& d = dst.checked_buffer();
    const auto& s = src.checked_buffer();
    check(hal_memcpy_dtod(stream.handle(), dst.address(), src.address(), src.nbytes));
    stream.keep(d);
    stream.keep(s);
  });
  m.def("fill_d8", [](Stream& stream, const ArrayBase& dst, uint8_t value) {
    const auto& d = dst.checked_buffer();
    check(hal_memset_d8(stream.handle(), dst.address(), value, dst.nbytes));
    stream.keep(d);
  });

  nb::class_<Event>(m, "Event")
      .def(nb::new_([](uintptr_t device) { return std::make_shared<Event>(to_device(device)); }),
           "device"_a)
      .def("record", &Event::record, "stream"_a)
      .def("synchronize", &Event::synchronize)
      .def("query", &Event::query)
      .def("elapsed_ms", &Event::elapsed_ms, "end"_a);

  nb::class_<LoadedModule>(m, "Module")
      .def(nb::new_([](uintptr_t device, nb::bytes blob,
                       std::vector<std::pair<uint32_t, nb::bytes>> specializations,
                       nb::object shared_bytes_constant) {
             std::vector<hal_specialization> spec;
             for (const auto& [id, value] : specializations) {
               spec.push_back(
                   hal_specialization{id, static_cast<uint32_t>(value.size()), value.c_str()});
             }
             hal_module_options options;
             std::memset(&options, 0, sizeof options);
             options.struct_size = sizeof options;
             options.specialization_count = static_cast<uint32_t>(spec.size());
             options.specializations = spec.data();
             if (!shared_bytes_constant.is_none()) {
               options.flags = HAL_MODULE_SHARED_BYTES_CONSTANT;
               options.shared_bytes_constant_id = nb::cast<uint32_t>(shared_bytes_constant);
             }
             auto module =
                 std::make_shared<Module>(to_device(device), blob.c_str(), blob.size(), &options);
             return LoadedModule{std::move(module), device};
           }),
           "device"_a, "blob"_a, "specializations"_a, "shared_bytes_constant"_a.none())
      .def("unload", [](LoadedModule& m) { m.module->unload(); })
      .def_prop_ro("unloaded", [](const LoadedModule& m) { return m.module->unloaded(); })
      .def("__getitem__",
           [](const LoadedModule& m, const std::string& name) {
             return BoundFunction{std::make_shared<Function>(m.module, name), m.device};
           })
      .def("__enter__", [](nb::handle self) { return self; })
      .def(
          "__exit__",
          [](LoadedModule& m, nb::handle, nb::handle, nb::handle) { m.module->unload(); },
          "exc_type"_a.none(), "exc"_a.none(), "traceback"_a.none());

  nb::class_<BoundFunction>(m, "Function")
      .def_prop_ro("name", [](const BoundFunction& f) { return f.function->name(); })
      .def_prop_ro("device", [](const BoundFunction& f) { return f.device; })
      .def_prop_ro("params_known",
                   [](const BoundFunction& f) { return f.function->params_known(); })
      .def_prop_ro("params",
                   [](const BoundFunction& f) {
                     nb::list out;
                     for (const Param& p : f.function->params()) {
                       const char* type = p.type == HAL_PARAM_TYPE_FLOAT     ? "float"
                                          : p.type == HAL_PARAM_TYPE_INTEGER ? "integer"
                                                                             : "";
                       out.append(nb::make_tuple(p.kind == HAL_PARAM_POINTER ? "pointer" : "value",
                                                 p.size, p.alignment, type));
                     }
                     return out;
                   })
      .def_prop_ro("info",
                   [](const BoundFunction& f) {
                     const hal_function_info fi = f.function->info();
                     nb::dict d;
                     d["name"] = fi.name;
                     d["block"] = nb::make_tuple(fi.block[0], fi.block[1], fi.block[2]);
                     d["static_shared_bytes"] = fi.static_shared_bytes;
                     d["max_threads_per_block"] = fi.max_threads_per_block;
                     return d;
                   })
      .def(
          "__call__",
          [](BoundFunction& f, nb::handle grid, nb::handle block, nb::args args, uint32_t shared,
             nb::object stream) {
            if (stream.is_none()) {
              f.function->launch(grid, block, args, shared, *default_stream(f.device));
            } else {
              f.function->launch(grid, block, args, shared, nb::cast<Stream&>(stream));
            }
          },
          "grid"_a, "block"_a, "args"_a, nb::kw_only(), "shared"_a = 0, "stream"_a = nb::none())
      .def(
          "_launch_repeated",
          [](BoundFunction& f, uint32_t count, nb::handle grid, nb::handle block, nb::args args,
             Stream& stream) {
            return f.function->launch_repeated(count, grid, block, args, stream);
          },
          "count"_a, "grid"_a, "block"_a, "args"_a, nb::kw_only(), "stream"_a);

  // hal errors become hal.Error subclasses (hal/_errors.py), with the status and the message.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      nb::object errors = nb::module_::import_("hal._errors");
      nb::object exc = errors.attr("make")(static_cast<int>(e.status), e.message);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });
}
