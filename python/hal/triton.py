"""Triton kernels on hal, loaded as Triton compiled them and launched with Triton's syntax.

    import hal, hal.triton
    kernel = hal.triton.load(dev, compiled)        # a triton CompiledKernel, or the cache pair
    kernel[(blocks,)](x, y, out, n)                # as Triton's own launcher takes them

`compiled` is either a `CompiledKernel` (what `triton.compile` returns), or what Triton leaves in
its cache: the path of the kernel's metadata `.json`, with the `.ptx` (or `.cubin`) of the same
name beside it, or a `(metadata dict, ptx text or cubin bytes)` pair.

What the launch does, as Triton's launcher does it:
  - the block is 32 * num_warps threads (Triton's PTX fixes it with .reqntid);
  - the dynamic shared memory is metadata["shared"] (hal raises the kernel's limit above 48 KiB);
  - constexpr arguments are dropped (known by name and position from a CompiledKernel; from a
    cache pair, pass them by keyword or not at all);
  - the hidden scratch pointers Triton appends (global and profile scratch) are passed last:
    0 when their size in the metadata is 0, else memory of grid * num_ctas * size bytes that
    hal allocates for the launch.
The device must take the IR: PTX or cubin, that is a CUDA device or the CPU PTX device.
"""

import json
import os

import numpy as np

from . import Array

# Triton's pointer element types, for checking arrays against a CompiledKernel's signature.
_TRITON_DTYPES = {
    "fp16": np.float16, "fp32": np.float32, "fp64": np.float64,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "i1": np.bool_,
}


def _metadata_dict(metadata):
    if isinstance(metadata, dict):
        return metadata
    if hasattr(metadata, "_asdict"):
        return metadata._asdict()
    return dict(vars(metadata))


def _from_compiled(compiled):
    md = _metadata_dict(compiled.metadata)
    blob = compiled.asm.get("ptx") or compiled.asm.get("cubin")
    signature = None
    src = getattr(compiled, "src", None)
    if src is not None and hasattr(src, "signature"):
        signature = dict(src.signature)
    return md, blob, signature


def _from_cache(path):
    with open(path, encoding="utf-8") as f:
        md = json.load(f)
    stem = os.path.splitext(path)[0]
    for ext, mode in ((".ptx", "r"), (".cubin", "rb")):
        if os.path.isfile(stem + ext):
            with open(stem + ext, mode) as f:
                return md, f.read(), None
    raise FileNotFoundError(f"{path}: no {os.path.basename(stem)}.ptx or .cubin beside it "
                            f"(Triton writes both into its cache folder)")


class TritonKernel:
    """A Triton kernel on a hal device. `kernel[grid]` gives a launcher; `grid` is an int, a
    tuple of up to 3 ints, or a function of the constexpr values returning one (as in Triton)."""

    def __init__(self, device, metadata, blob, signature=None):
        self.device = device
        self.metadata = metadata
        self.name = metadata["name"]
        self.num_warps = int(metadata.get("num_warps", 4))
        self.num_ctas = int(metadata.get("num_ctas", 1))
        self.shared = int(metadata.get("shared", 0))
        if self.num_ctas != 1:
            raise NotImplementedError(f"'{self.name}' uses {self.num_ctas} CTAs per cluster; hal "
                                      f"launches one block per program")
        # Hidden parameters, in Triton's order; each is in the metadata when Triton appends it.
        self._scratch = [(int(metadata[f"{kind}_scratch_size"]),
                          int(metadata.get(f"{kind}_scratch_align", 1)))
                         for kind in ("global", "profile") if f"{kind}_scratch_size" in metadata]
        self.module = device.load(blob)
        self.function = self.module[self.name]
        self.signature = signature
        self._runtime = None  # positions of the runtime (non-constexpr) arguments
        self._constexprs = {}
        if signature is not None:
            names = list(signature)
            self._runtime = [i for i, n in enumerate(names) if signature[n] != "constexpr"]
            self._names = names
        count = len(self.function.params) - len(self._scratch)
        if self._runtime is not None and len(self._runtime) != count:
            raise ValueError(f"'{self.name}': the signature has {len(self._runtime)} runtime "
                             f"arguments but the kernel {count}")
        self.arg_count = count

    def __getitem__(self, grid):
        return lambda *args, stream=None, **kwargs: self._launch(grid, args, kwargs, stream)

    def _runtime_args(self, args, kwargs):
        if self._runtime is None:
            if len(args) != self.arg_count:
                raise TypeError(
                    f"'{self.name}' takes {self.arg_count} runtime arguments, got {len(args)} "
                    f"positional ones (constexpr values were fixed when Triton compiled it: "
                    f"pass them by keyword, or not at all)")
            return list(args), dict(kwargs)
        names = self._names
        if len(args) > len(names):
            raise TypeError(f"'{self.name}' takes {len(names)} arguments, got {len(args)}")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"'{self.name}' has no argument '{key}'")
            values[key] = value
        missing = [names[i] for i in self._runtime if names[i] not in values]
        if missing:
            raise TypeError(f"'{self.name}' is missing {', '.join(missing)}")
        for i in self._runtime:
            kind = self.signature[names[i]]
            value = values[names[i]]
            if kind.startswith("*") and isinstance(value, Array):
                want = _TRITON_DTYPES.get(kind[1:])
                if want is not None and value.dtype != np.dtype(want):
                    raise TypeError(f"'{self.name}' argument '{names[i]}' is {kind}, got an "
                                    f"array of {value.dtype}")
        meta = {n: v for n, v in values.items() if self.signature[n] == "constexpr"}
        return [values[names[i]] for i in self._runtime], meta

    def _launch(self, grid, args, kwargs, stream):
        runtime, meta = self._runtime_args(args, kwargs)
        if callable(grid):
            grid = grid(meta)
        grid = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
        programs = 1
        for g in grid:
            programs *= int(g)
        hidden = []
        for size, align in self._scratch:
            if size == 0 or programs == 0:
                hidden.append(0)
                continue
            per_program = (size + align - 1) // align * align
            # The stream keeps this memory until the launch has completed.
            hidden.append(self.device.empty(programs * self.num_ctas * per_program, np.uint8))
        self.function(grid, (32 * self.num_warps, 1, 1), *runtime, *hidden, shared=self.shared,
                      stream=stream)

    def __repr__(self):
        return f"hal.triton.TritonKernel('{self.name}', num_warps={self.num_warps}, " \
               f"shared={self.shared}, device={self.device})"


def load(device, compiled):
    """A Triton kernel on `device`, from a CompiledKernel, the path of its cached metadata
    .json, or a (metadata, ptx or cubin) pair. See the module's documentation."""
    if isinstance(compiled, (str, os.PathLike)):
        md, blob, signature = _from_cache(os.fspath(compiled))
    elif isinstance(compiled, tuple) and len(compiled) == 2:
        md, blob, signature = _metadata_dict(compiled[0]), compiled[1], None
    elif hasattr(compiled, "asm") and hasattr(compiled, "metadata"):
        md, blob, signature = _from_compiled(compiled)
    else:
        raise TypeError("hal.triton.load takes a triton CompiledKernel, the path of its "
                        "metadata .json, or a (metadata, ptx or cubin) pair; got "
                        f"{type(compiled).__name__}")
    if blob is None:
        raise ValueError("the compiled kernel holds neither PTX nor a cubin")
    return TritonKernel(device, md, blob, signature)
