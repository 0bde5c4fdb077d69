"""Triton's kernels through hal.triton, on a device that takes PTX (the CPU PTX device here).

The kernels in triton_kernels/ were compiled by PyPI triton (triton_kernels/generate.py) and are loaded as its
cache holds them; where triton is importable, the same kernels are also compiled here and
loaded from the CompiledKernel."""

import json
import os

import numpy as np
import pytest

import hal
import hal.triton

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "triton_kernels")


@pytest.fixture
def ptx_dev():
    for d in hal.devices():
        if "ptx" in d.info.irs:
            return d
    pytest.skip("no device takes PTX (set HAL_CUDA_LIBRARY to hal.cpu_ptx_driver)")


def cached(name):
    return os.path.join(HERE, f"{name}.json")


def check_add(dev, kernel, **constexprs):
    n = 1000
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    dx, dy, out = dev.asarray(x), dev.asarray(y), dev.zeros(n)
    kernel[(n + 255) // 256,](dx, dy, out, n, **constexprs)
    np.testing.assert_array_equal(out.numpy(), x + y)


def test_elementwise_from_the_cache_pair(ptx_dev):
    kernel = hal.triton.load(ptx_dev, cached("add_kernel"))
    assert kernel.num_warps == 4 and kernel.arg_count == 4
    # Triton appends two hidden pointers: the function has 4 + 2 parameters.
    assert len(kernel.function.params) == 6
    assert kernel.function.info["block"] == (128, 1, 1)  # .reqntid 32 * num_warps
    check_add(ptx_dev, kernel)
    check_add(ptx_dev, kernel, BLOCK=256)  # a constexpr by keyword is dropped


def test_grid_as_a_function_and_the_pair_form(ptx_dev):
    with open(cached("add_kernel")) as f:
        metadata = json.load(f)
    with open(os.path.join(HERE, "add_kernel.ptx")) as f:
        ptx = f.read()
    kernel = hal.triton.load(ptx_dev, (metadata, ptx))
    n = 700
    x = ptx_dev.asarray(np.ones(n, np.float32))
    out = ptx_dev.zeros(n)
    kernel[lambda meta: ((n + 255) // 256,)](x, x, out, n)
    np.testing.assert_array_equal(out.numpy(), np.full(n, 2.0, np.float32))


def test_softmax_uses_its_shared_memory(ptx_dev):
    kernel = hal.triton.load(ptx_dev, cached("softmax_kernel"))
    assert kernel.shared > 0
    rows, cols = 6, 100
    x = np.random.default_rng(5).standard_normal((rows, cols)).astype(np.float32)
    out = ptx_dev.zeros((rows, cols))
    kernel[rows](ptx_dev.asarray(x), out, cols)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5,
                               atol=1e-6)


def test_tensor_core_matmul(ptx_dev):
    kernel = hal.triton.load(ptx_dev, cached("matmul_kernel"))
    m, n, k = 48, 40, 64
    rng = np.random.default_rng(6)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = ptx_dev.zeros((m, n))
    kernel[(m + 31) // 32, (n + 31) // 32](ptx_dev.asarray(a), ptx_dev.asarray(b), c, m, n, k)
    np.testing.assert_allclose(c.numpy(), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=1e-2, atol=1e-2)


def test_mistakes_raise(ptx_dev):
    kernel = hal.triton.load(ptx_dev, cached("add_kernel"))
    x = ptx_dev.zeros(8)
    with pytest.raises(TypeError, match="takes 4 runtime arguments, got 5 positional"):
        kernel[1](x, x, x, 8, 256)
    with pytest.raises(TypeError, match="takes a hal.Array"):
        kernel[1](x, 1.5, x, 8)
    with pytest.raises(TypeError, match="CompiledKernel"):
        hal.triton.load(ptx_dev, 42)
    with pytest.raises(FileNotFoundError, match="missing.json"):
        hal.triton.load(ptx_dev, os.path.join(HERE, "missing.json"))


def test_a_device_without_ptx_refuses_it(vk):
    with pytest.raises(hal.NotSupportedError, match="accepts SPIR-V"):
        hal.triton.load(vk, cached("add_kernel"))


def test_compiled_kernel_from_triton_itself(ptx_dev):
    pytest.importorskip("triton")
    import sys

    sys.path.insert(0, HERE)
    import kernels

    compiled = kernels.compile_all()
    kernel = hal.triton.load(ptx_dev, compiled["add_kernel"])
    check_add(ptx_dev, kernel)                # runtime arguments only
    n = 300
    x = ptx_dev.asarray(np.ones(n, np.float32))
    out = ptx_dev.zeros(n)
    kernel[2](x, x, out, n, 256)              # the constexpr by position is dropped too
    np.testing.assert_array_equal(out.numpy(), np.full(n, 2.0, np.float32))
    with pytest.raises(TypeError, match="argument 'x_ptr' is \\*fp32, got an array of float16"):
        kernel[2](ptx_dev.zeros(n, np.float16), x, out, n)
