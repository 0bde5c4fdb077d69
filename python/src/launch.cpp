// Function.__call__: each Python argument packed by the parameter hal reflected for it.
//
// A pointer parameter takes a hal.Array (its device address) or an int (a raw device address,
// 0 for NULL where the kernel takes raw addresses). A value parameter of N bytes takes a Python
// int (range-checked for N bytes, signed or unsigned), a Python float (N = 4: float32, N = 8:
// float64), a bool, or a NumPy scalar of exactly N bytes. Anything else is a TypeError that
// names the parameter: the packing must never guess.
#include <nanobind/stl/string.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>

#include "hal_python.h"

namespace hal_python {
namespace {

std::string kind_of(nb::handle h) {
  return nb::type_name(h.type()).c_str();
}

// str(h), as Python prints it.
std::string text(nb::handle h) {
  nb::object s = nb::steal(PyObject_Str(h.ptr()));
  if (!s.is_valid()) throw nb::python_error();
  return nb::cast<std::string>(s);
}

// grid or block: an int, or a sequence of 1 to 3 ints; missing dimensions are 1 (0 for an
// all-zero block, which asks for the kernel's own block).
void dims(nb::handle value, const char* what, uint32_t out[3], uint32_t fill) {
  out[0] = out[1] = out[2] = fill;
  if (PyLong_Check(value.ptr())) {
    out[0] = nb::cast<uint32_t>(value);
    return;
  }
  if (!PySequence_Check(value.ptr()) || PyUnicode_Check(value.ptr())) {
    throw nb::type_error(
        (std::string(what) + " must be an int or a tuple of 1 to 3 ints, got " + kind_of(value))
            .c_str());
  }
  const Py_ssize_t n = PySequence_Size(value.ptr());
  if (n < 1 || n > 3) {
    throw nb::value_error(
        (std::string(what) + " has " + std::to_string(n) + " dimensions; give 1 to 3").c_str());
  }
  nb::sequence seq = nb::borrow<nb::sequence>(value);
  for (Py_ssize_t i = 0; i < n; ++i) out[i] = nb::cast<uint32_t>(seq[static_cast<size_t>(i)]);
}

// "a pointer", "4-byte float", "4-byte integer", "12-byte value".
std::string describe(const Param& param) {
  if (param.kind == HAL_PARAM_POINTER) return "a pointer";
  const char* what = param.type == HAL_PARAM_TYPE_FLOAT     ? "float"
                     : param.type == HAL_PARAM_TYPE_INTEGER ? "integer"
                                                            : "value";
  return std::to_string(param.size) + "-byte " + what;
}

[[noreturn]] void argument_error(const std::string& function, size_t index, const Param& param,
                                 const std::string& what) {
  throw nb::type_error(("'" + function + "' parameter " + std::to_string(index) + " (" +
                        describe(param) + "): " + what)
                           .c_str());
}

constexpr const char* kShifted = ": is an argument missing or out of order?";

void pack_float(double v, const std::string& function, size_t index, const Param& param,
                uint8_t* slot) {
  if (param.size == 4) {
    const float f = static_cast<float>(v);
    std::memcpy(slot, &f, 4);
  } else if (param.size == 8) {
    std::memcpy(slot, &v, 8);
  } else {
    argument_error(function, index, param,
                   "a Python number fills 4 (float32) or 8 (float64) bytes; pass a NumPy "
                   "scalar of " +
                       std::to_string(param.size) + " bytes (e.g. numpy.float16)");
  }
}

nb::handle numpy_generic() {
  static nb::object generic = nb::module_::import_("numpy").attr("generic");
  return generic;
}

// Packs a value argument into |slot| (param.size bytes).
void pack_value(nb::handle arg, const std::string& function, size_t index, const Param& param,
                uint8_t* slot) {
  const uint32_t size = param.size;
  // NumPy scalars give their own bytes, whose size must match; numpy.float64, which is also a
  // Python float, converts like one (1.0 / np.sqrt(d) is a common scale argument).
  if (nb::isinstance(arg, numpy_generic()) && !PyFloat_Check(arg.ptr())) {
    // A NumPy scalar says what it is: an integer for a float parameter (or the other way) is
    // a mistake, not something to convert silently.
    const std::string kind = nb::cast<std::string>(arg.attr("dtype").attr("kind"));
    const bool numpy_float = kind == "f";
    const bool numpy_integer = kind == "i" || kind == "u" || kind == "b";
    if ((param.type == HAL_PARAM_TYPE_FLOAT && numpy_integer) ||
        (param.type == HAL_PARAM_TYPE_INTEGER && numpy_float)) {
      argument_error(function, index, param,
                     "got a NumPy " + text(arg.attr("dtype")) + std::string(kShifted));
    }
    nb::bytes raw = nb::cast<nb::bytes>(arg.attr("tobytes")());
    if (raw.size() != size) {
      argument_error(function, index, param,
                     "got a NumPy " + text(arg.attr("dtype")) + " of " +
                         std::to_string(raw.size()) + " bytes");
    }
    std::memcpy(slot, raw.c_str(), size);
    return;
  }
  if (param.type == HAL_PARAM_TYPE_FLOAT && PyLong_Check(arg.ptr())) {
    // A Python int (or bool) for a float parameter: its value, as a float.
    const double v = PyLong_AsDouble(arg.ptr());
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    pack_float(v, function, index, param, slot);
    return;
  }
  if (param.type == HAL_PARAM_TYPE_INTEGER && PyFloat_Check(arg.ptr())) {
    argument_error(function, index, param, "got float " + text(arg) + std::string(kShifted));
  }
  if (PyBool_Check(arg.ptr())) {
    std::memset(slot, 0, size);
    slot[0] = arg.ptr() == Py_True ? 1 : 0;
    return;
  }
  if (PyLong_Check(arg.ptr())) {
    if (size > 8) argument_error(function, index, param, "give a NumPy value of that size");
    int overflow = 0;
    const long long signed_value = PyLong_AsLongLongAndOverflow(arg.ptr(), &overflow);
    uint64_t bits;
    bool fits;
    if (overflow == 0) {
      bits = static_cast<uint64_t>(signed_value);
      const int bits_count = static_cast<int>(size) * 8;
      fits = bits_count == 64 ||
             (signed_value >= -(1LL << (bits_count - 1)) && signed_value < (1LL << bits_count));
    } else {
      bits = PyLong_AsUnsignedLongLong(arg.ptr());
      fits = !PyErr_Occurred() && size == 8;
      PyErr_Clear();
    }
    if (!fits) {
      throw nb::value_error(("'" + function + "' parameter " + std::to_string(index) + " (" +
                             std::to_string(size) + "-byte value): " + text(arg) +
                             " does not fit in " + std::to_string(size) + " bytes")
                                .c_str());
    }
    std::memcpy(slot, &bits, size);  // little-endian: the low bytes
    return;
  }
  if (PyFloat_Check(arg.ptr())) {
    pack_float(PyFloat_AS_DOUBLE(arg.ptr()), function, index, param, slot);
    return;
  }
  if (nb::isinstance<ArrayBase>(arg)) {
    argument_error(function, index, param,
                   "got a hal.Array, but the kernel takes a value here: is an argument missing "
                   "or out of order?");
  }
  argument_error(function, index, param,
                 "takes an int, a float or a NumPy scalar, got " + kind_of(arg));
}

}  // namespace

void Function::launch(nb::handle grid, nb::handle block, nb::args args, uint32_t shared,
                      Stream& stream) {
  if (!params_known_) {
    throw Error{HAL_ERROR_NOT_SUPPORTED,
                "'" + name_ +
                    "' has no parameter list (a binary whose driver cannot describe it), so its "
                    "arguments cannot be packed from Python; load its PTX instead"};
  }
  if (args.size() != params_.size()) {
    std::string kinds;
    for (const Param& p : params_) kinds += (kinds.empty() ? "" : ", ") + describe(p);
    throw nb::type_error(("'" + name_ + "' takes " + std::to_string(params_.size()) +
                          " arguments (" + kinds + "), got " + std::to_string(args.size()))
                             .c_str());
  }
  hal_launch_config config;
  dims(grid, "grid", config.grid, 1);
  dims(block, "block", config.block, 1);
  if (PyLong_Check(block.ptr()) && config.block[0] == 0) config.block[1] = config.block[2] = 0;
  config.shared_bytes = shared;

  // One 16-byte slot per parameter (pointers take 8); larger values get their own size.
  size_t bytes = 0;
  for (const Param& p : params_) bytes += p.size <= 16 ? 16 : (p.size + 15) / 16 * 16;
  values_.assign(bytes / 8, 0);
  pointers_.resize(params_.size());
  used_.clear();
  uint8_t* slot = reinterpret_cast<uint8_t*>(values_.data());
  for (size_t i = 0; i < params_.size(); ++i) {
    const Param& p = params_[i];
    nb::handle arg = args[i];
    if (p.kind == HAL_PARAM_POINTER) {
      hal_deviceptr address;
      if (nb::isinstance<ArrayBase>(arg)) {
        const ArrayBase& array = nb::cast<const ArrayBase&>(arg);
        used_.push_back(array.checked_buffer());
        address = array.address();
      } else if (PyLong_Check(arg.ptr()) && !PyBool_Check(arg.ptr())) {
        address = nb::cast<uint64_t>(arg);
      } else {
        argument_error(
            name_, i, p,
            "takes a hal.Array (or an int device address), got " + kind_of(arg) +
                (PyFloat_Check(arg.ptr()) || nb::isinstance(arg, numpy_generic()) ? kShifted : ""));
      }
      std::memcpy(slot, &address, sizeof address);
    } else {
      pack_value(arg, name_, i, p, slot);
    }
    pointers_[i] = slot;
    slot += p.size <= 16 ? 16 : (p.size + 15) / 16 * 16;
  }
  check(hal_launch(stream.handle(), handle_, &config, pointers_.data()));
  for (const auto& buffer : used_) stream.keep(buffer);
  used_.clear();
  last_config_ = config;
}

double Function::launch_repeated(uint32_t count, nb::handle grid, nb::handle block, nb::args args,
                                 Stream& stream) {
  launch(grid, block, args, 0, stream);  // packs (and checks) the arguments once
  const hal_launch_config config = last_config_;
  hal_stream handle = stream.handle();
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t i = 1; i < count; ++i)
    check(hal_launch(handle, handle_, &config, pointers_.data()));
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count();
}

}  // namespace hal_python
