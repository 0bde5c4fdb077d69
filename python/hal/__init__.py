"""hal from Python: devices, arrays, streams, events, and kernels loaded from PTX or SPIR-V.

    import hal, numpy as np
    dev = hal.device("default")
    x = dev.asarray(np.arange(1000, dtype=np.float32))
    kernel = dev.load("saxpy.spv")["saxpy"]
    kernel((16,), (64,), x, y, 2.0, 1000)
    print(y.numpy()[:4])

Everything goes through libhal's C ABI, which checks every call; a failure raises the
hal.Error subclass for its status with hal's own message. See docs/PYTHON.md.
"""

import atexit
import os

import numpy as np

from . import _hal
from ._errors import (  # noqa: F401 (the public error classes)
    CompileFailedError,
    DeviceLostError,
    Error,
    InternalError,
    InvalidArgumentError,
    InvalidHandleError,
    InvalidIRError,
    LaunchFailedError,
    NotFoundError,
    NotReadyError,
    NotSupportedError,
    OutOfMemoryError,
    OutOfRangeError,
    TimeoutError,
    UnavailableError,
)

Stream = _hal.Stream
Event = _hal.Event
Module = _hal.Module
Function = _hal.Function

__version__ = "%d.%d.%d" % _hal.version()

# hal's CPU PTX driver, shipped in the package: set HAL_CUDA_LIBRARY to it before the first hal
# call and cuda:0 runs PTX on the host CPU. None when the package was built without it.
cpu_ptx_driver = os.path.join(os.path.dirname(__file__), "libhal_ptx_cpu.so")
if not os.path.isfile(cpu_ptx_driver):
    cpu_ptx_driver = None

IR_NAMES = {1: "ptx", 2: "spirv", 4: "cubin", 8: "fatbin", 16: "builtin"}
FEATURE_NAMES = {
    1 << 0: "float16",
    1 << 1: "int8",
    1 << 2: "storage_16bit",
    1 << 3: "storage_8bit",
    1 << 4: "buffer_device_address",
    1 << 5: "timeline_semaphore",
    1 << 6: "subgroup_size_control",
    1 << 7: "cooperative_matrix",
    1 << 8: "timestamps",
    1 << 9: "subgroup_vote",
    1 << 10: "subgroup_arithmetic",
    1 << 11: "subgroup_ballot",
    1 << 12: "subgroup_shuffle",
}


class DeviceInfo:
    """hal_device_info as read-only attributes (name, backend, total_memory, ...), plus `irs`
    and `feature_names` decoded from the bit masks."""

    def __init__(self, fields):
        object.__setattr__(self, "_fields", dict(fields))

    def __getattr__(self, name):
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"hal.DeviceInfo has no field '{name}'") from None

    def __setattr__(self, name, value):
        raise AttributeError("hal.DeviceInfo is read-only")

    def __dir__(self):
        return sorted(self._fields) + ["irs", "feature_names"]

    @property
    def irs(self):
        return [n for bit, n in IR_NAMES.items() if self._fields["ir_mask"] & bit]

    @property
    def feature_names(self):
        return [n for bit, n in FEATURE_NAMES.items() if self._fields["features"] & bit]

    def as_dict(self):
        return dict(self._fields)

    def __repr__(self):
        return f"hal.DeviceInfo({self._fields['backend']}:{self._fields['backend_index']}, " \
               f"'{self._fields['name']}')"


def _dtype(dtype):
    dt = np.dtype(dtype)
    if dt.hasobject or dt.kind in "USM" or dt.itemsize == 0:
        raise TypeError(f"hal arrays hold plain numbers; {dt} cannot live in device memory")
    return dt


# DLPack's type codes (DLDataTypeCode) for the NumPy kinds it describes.
_DLPACK_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}


def _dlpack_code(dt):
    code = _DLPACK_CODES.get(dt.kind)
    if code is None or not dt.isnative or dt.itemsize > (16 if dt.kind == "c" else 8):
        raise BufferError(f"DLPack has no type for {dt}: use numpy() or host_view() instead")
    return code


def _host_bytes(a):
    """A contiguous NumPy array's memory as a flat uint8 view (any dtype, bfloat16 included)."""
    return a.reshape(-1).view(np.uint8)


class Array(_hal.ArrayBase):
    """An n-dimensional array in device memory (C order). Pass it to a kernel's pointer
    parameter; `numpy()` copies it back. Indexing and slicing along the first axis give views of
    the same memory. The memory is freed when the last array viewing it is gone and no work in
    flight uses it."""

    def __init__(self, device, buffer, offset, shape, dtype):
        super().__init__()
        self._device = device
        self._shape = tuple(int(n) for n in shape)
        self._dtype = np.dtype(dtype)
        count = 1
        for n in self._shape:
            count *= n
        self._bind(buffer, offset, count * self._dtype.itemsize)

    device = property(lambda self: self._device)
    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ndim = property(lambda self: len(self._shape))
    itemsize = property(lambda self: self._dtype.itemsize)

    @property
    def size(self):
        return self.nbytes // self._dtype.itemsize

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d hal.Array")
        return self._shape[0]

    def _row_bytes(self):
        return self.nbytes // self._shape[0] if self._shape[0] else 0

    def __getitem__(self, key):
        if not self._shape:
            raise IndexError("a 0-d hal.Array cannot be indexed")
        rows = self._shape[0]
        row_bytes = 1
        for n in self._shape[1:]:
            row_bytes *= n
        row_bytes *= self._dtype.itemsize
        if isinstance(key, (int, np.integer)):
            i = int(key)
            if i < 0:
                i += rows
            if not 0 <= i < rows:
                raise IndexError(f"index {key} is out of range for {rows} rows")
            return Array(self._device, self._buffer, self._offset + i * row_bytes,
                         self._shape[1:], self._dtype)
        if isinstance(key, slice):
            start, stop, step = key.indices(rows)
            if step != 1:
                raise ValueError("hal.Array slices must be contiguous (step 1)")
            count = max(0, stop - start)
            return Array(self._device, self._buffer, self._offset + start * row_bytes,
                         (count,) + self._shape[1:], self._dtype)
        raise TypeError(f"hal.Array indices are an int or a slice along the first axis, "
                        f"not {type(key).__name__}")

    def numpy(self, stream=None):
        """A new NumPy array with a copy of the contents. Waits for `stream` (default: the
        device's default stream) and so for the work issued on it before."""
        out = np.empty(self._shape, self._dtype)
        _hal.copy_dtoh(stream or self._device.default_stream, _host_bytes(out), self)
        return out

    def copy_from(self, host, stream=None):
        """Copies a NumPy array (or anything np.asarray takes) of the same shape into this
        array. The host data may be changed as soon as this returns."""
        a = np.ascontiguousarray(host, dtype=self._dtype)
        if a.shape != self._shape:
            raise ValueError(f"shape {a.shape} does not match the array's {self._shape}")
        _hal.copy_htod(stream or self._device.default_stream, self, _host_bytes(a))
        return self

    def copy_to(self, other, stream=None):
        """Copies this array into another of the same device and byte size, on the device."""
        _hal.copy_dtod(stream or self._device.default_stream, other, self)
        return other

    def host_view(self):
        """A NumPy array over this array's memory itself, without a copy, on a device whose
        memory the host addresses directly (hal_mem_host_pointer: lavapipe, integrated GPUs);
        None elsewhere. It keeps the memory alive. The host sees what kernels wrote, and
        kernels what the host wrote, only across a synchronize."""
        try:
            raw = self._host_bytes()
        except NotSupportedError:
            return None
        return raw.view(self._dtype).reshape(self._shape)

    # NumPy and DLPack: `view()` (the memory itself) where the device's memory has a host address
    # (after waiting for the device's work), else a host copy; copy=False where no view exists
    # raises.
    def _exported(self, copy, error, view):
        if copy is not True:
            out = view()
            if out is not None:
                self._device.synchronize()
                return out
        if copy is False:
            raise error(f"{self._device.selector}'s memory has no host address: only a copy "
                        f"can be exported (copy=None or True)")
        return self.numpy()

    def _host_tensor_view(self):
        # Not host_view().__dlpack__(): NumPy's exporter keeps its reference when the view is
        # destroyed at interpreter exit, so a view the program still held then would keep the
        # memory past the end and be reported as leaked (see _host_tensor).
        code = _dlpack_code(self._dtype)
        try:
            return self._host_tensor(self._shape, code, self._dtype.itemsize * 8)
        except NotSupportedError:
            return None

    def __array__(self, dtype=None, copy=None):
        out = self._exported(copy, ValueError, self.host_view)
        return out if dtype is None else out.astype(dtype, copy=False)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: the view or the copy lives in host memory

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        host = self._exported(copy, BufferError, self._host_tensor_view)
        if max_version is None:
            return host.__dlpack__()
        return host.__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)

    def free(self):
        """Frees the memory now, once the work already issued that uses it has completed,
        instead of when the last reference goes. This array and every view of the same memory
        are unusable afterwards (hal.InvalidArgumentError)."""
        self._buffer.release()

    def __repr__(self):
        return f"hal.Array(shape={self._shape}, dtype={self._dtype}, device={self._device})"


class Device:
    """A hal device. Devices belong to hal for the whole process: there is nothing to close."""

    def __init__(self, handle):
        self._handle = handle
        self.info = DeviceInfo(_hal.device_info(handle))

    @property
    def selector(self):
        return f"{self.info.backend}:{self.info.backend_index}"

    @property
    def name(self):
        return self.info.name

    @property
    def default_stream(self):
        """The stream used by calls given no stream (created on first use)."""
        return _hal.default_stream(self._handle)

    def stream(self):
        """A new stream. As a context manager it is synchronised and closed on exit."""
        return _hal.Stream(self._handle)

    def event(self):
        return _hal.Event(self._handle)

    def synchronize(self):
        """Waits for all work issued on the device, on every stream."""
        _hal.device_synchronize(self._handle)

    def empty(self, shape, dtype=np.float32):
        """An uninitialised array of `shape` (an int or a tuple) and `dtype`."""
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        dt = _dtype(dtype)
        count = 1
        for n in shape:
            if n < 0:
                raise ValueError(f"negative dimension in shape {shape}")
            count *= n
        # hal allocates at least one byte; an empty array still owns a (tiny) allocation.
        buffer = _hal.Buffer(self._handle, max(count * dt.itemsize, 1))
        return Array(self, buffer, 0, shape, dt)

    def zeros(self, shape, dtype=np.float32, stream=None):
        a = self.empty(shape, dtype)
        _hal.fill_d8(stream or self.default_stream, a, 0)
        return a

    def asarray(self, host, dtype=None, stream=None):
        """A device array with a copy of `host`: a NumPy array, anything exporting DLPack on
        the CPU (`__dlpack__`), or anything np.asarray takes."""
        if hasattr(host, "__dlpack__") and not isinstance(host, (np.ndarray, Array)):
            host = np.from_dlpack(host)
        a = np.ascontiguousarray(host, dtype=dtype)
        return self.empty(a.shape, a.dtype).copy_from(a, stream)

    def load(self, blob, specializations=None, shared_bytes_constant=None):
        """Loads a module from bytes, PTX text, or a file path (PTX, SPIR-V, cubin or fatbin, told
        apart by their contents). `specializations` maps SPIR-V specialization constant ids to values
        (a Python int or float is 4 bytes; a NumPy scalar gives its own size). Returns the
        module: `module["name"]` is a kernel."""
        if isinstance(blob, str) and "\n" in blob:
            blob = blob.encode()  # PTX text (a path has no newline)
        elif isinstance(blob, (str, os.PathLike)):
            with open(blob, "rb") as f:
                blob = f.read()
        spec = []
        for spec_id, value in (specializations or {}).items():
            if isinstance(value, bool):
                value = np.uint32(value)
            elif isinstance(value, int):
                value = np.uint32(value) if value >= 0 else np.int32(value)
            elif isinstance(value, float):
                value = np.float32(value)
            spec.append((int(spec_id), np.asarray(value).tobytes()))
        return _hal.Module(self._handle, bytes(blob), spec, shared_bytes_constant)

    def __eq__(self, other):
        return isinstance(other, Device) and other._handle == self._handle

    def __hash__(self):
        return hash(self._handle)

    def __repr__(self):
        return f"hal.Device({self.selector}, '{self.name}')"


def devices():
    """Every device of every available backend, in hal's order (GPUs first)."""
    return [Device(_hal.device_get(i)) for i in range(_hal.device_count())]


def device(selector="default"):
    """The device a selector names: "default" (HAL_DEVICE, else device 0), "vulkan:0",
    "cuda:1", a global index, or part of the device's name."""
    return Device(_hal.device_find(str(selector)))


def backends():
    """Each backend hal considered: name, available, device_count, the reason if not, and the
    driver module it came from."""
    return _hal.backends()


atexit.register(_hal.shutdown)
