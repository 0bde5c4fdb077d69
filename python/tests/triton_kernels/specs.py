"""The Triton kernels hal.triton's tests load: four of the project's Triton test kernels
(tests/ptx_cpu/triton: the kernels in kernels.py, the compile settings in generate.py), compiled
exactly as that generator compiles them, so there is one source for both."""

import importlib.util
import os
import shutil
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests",
                                    "ptx_cpu", "triton"))
NAMES = ("vector_add", "softmax_rows", "matmul_f16", "flash_attention_fwd_2stage")


def _generator():
    """tests/ptx_cpu/triton/generate.py as a module. It exits (SystemExit) unless the installed
    triton is the version its committed PTX comes from."""
    sys.path.insert(0, ROOT)
    spec = importlib.util.spec_from_file_location("hal_triton_generate",
                                                  os.path.join(ROOT, "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_all():
    """{name: CompiledKernel} for NAMES."""
    gen = _generator()
    try:
        return {s["name"]: gen.compile_kernel(s) for s in gen.KERNELS if s["name"] in NAMES}
    finally:
        shutil.rmtree(gen.CACHE_DIR, ignore_errors=True)
