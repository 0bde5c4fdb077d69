"""Triton's kernels through hal.triton, on a device that takes PTX (the CPU PTX device here).

The kernels in triton_kernels/ are four of the project's Triton test kernels
(tests/ptx_cpu/triton), compiled by PyPI triton (triton_kernels/generate.py) and stored as
Triton's cache holds them; where triton is importable, they are also compiled here and loaded
from the CompiledKernel."""

import json
import os

import numpy as np
import pytest

import hal
import hal.triton

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "triton_kernels")


@pytest.fixture
def ptx_dev():
    # A CUDA device (the CPU PTX device here); test_a_vulkan_device_runs_triton_ptx_through_
    # translation runs the same kernels on the Vulkan device.
    for d in hal.devices():
        if "ptx" in d.info.irs and "spirv" not in d.info.irs:
            return d
    pytest.skip("no device takes PTX (set HAL_CUDA_LIBRARY to hal.cpu_ptx_driver)")


def cached(name):
    return os.path.join(HERE, f"{name}.json")


def test_the_cache_pairs_hold_the_projects_triton_ptx():
    # One source: the PTX beside each metadata file is the one tests/ptx_cpu runs.
    ptx_cpu = os.path.join(HERE, "..", "..", "..", "tests", "ptx_cpu", "triton")
    for name in ("vector_add", "softmax_rows", "matmul_f16", "flash_attention_fwd_2stage"):
        with open(os.path.join(HERE, f"{name}.ptx")) as a, open(os.path.join(ptx_cpu,
                                                                             f"{name}.ptx")) as b:
            assert a.read() == b.read(), f"{name}.ptx: run triton_kernels/generate.py again"


def check_add(dev, kernel, **constexprs):
    n = 1000
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    dx, dy, out = dev.asarray(x), dev.asarray(y), dev.zeros(n)
    kernel[(n + 255) // 256,](dx, dy, out, n, **constexprs)
    np.testing.assert_array_equal(out.numpy(), x + y)


def test_elementwise_from_the_cache_pair(ptx_dev):
    kernel = hal.triton.load(ptx_dev, cached("vector_add"))
    assert kernel.num_warps == 4 and kernel.arg_count == 4
    # Triton appends two hidden pointers: the function has 4 + 2 parameters.
    assert len(kernel.function.params) == 6
    assert kernel.function.info["block"] == (128, 1, 1)  # .reqntid 32 * num_warps
    check_add(ptx_dev, kernel)
    check_add(ptx_dev, kernel, BLOCK=256)  # a constexpr by keyword is dropped


def test_grid_as_a_function_and_the_pair_form(ptx_dev):
    with open(cached("vector_add")) as f:
        metadata = json.load(f)
    with open(os.path.join(HERE, "vector_add.ptx")) as f:
        ptx = f.read()
    kernel = hal.triton.load(ptx_dev, (metadata, ptx))
    n = 700
    x = ptx_dev.asarray(np.ones(n, np.float32))
    out = ptx_dev.zeros(n)
    kernel[lambda meta: ((n + 255) // 256,)](x, x, out, n)
    np.testing.assert_array_equal(out.numpy(), np.full(n, 2.0, np.float32))


def check_softmax(dev, kernel):
    rows, cols = 6, 100
    x = np.random.default_rng(5).standard_normal((rows, cols)).astype(np.float32)
    out = dev.zeros((rows, cols))
    kernel[rows](out, dev.asarray(x), cols, cols, cols)  # (out, in, strides, n_cols)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5,
                               atol=1e-6)


def test_softmax_uses_its_shared_memory(ptx_dev):
    kernel = hal.triton.load(ptx_dev, cached("softmax_rows"))
    assert kernel.shared > 0
    check_softmax(ptx_dev, kernel)


def check_matmul(dev, kernel):
    m, n, k = 72, 48, 64  # N, K and the strides multiples of 16, as the kernel was compiled for
    rng = np.random.default_rng(6)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = dev.zeros((m, n))
    grid = ((m + 63) // 64) * ((n + 63) // 64)  # BLOCK_M = BLOCK_N = 64
    kernel[grid](dev.asarray(a), dev.asarray(b), c, m, n, k, k, n, n)
    np.testing.assert_allclose(c.numpy(), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=1e-2, atol=1e-2)


def test_tensor_core_matmul(ptx_dev):
    check_matmul(ptx_dev, hal.triton.load(ptx_dev, cached("matmul_f16")))


def check_attention(dev, kernel):
    heads, seq, dim = 2, 100, 64  # the head dimension and 64 x 64 tiles are compiled in
    rng = np.random.default_rng(7)
    q, k, v = (rng.uniform(-1, 1, (heads, seq, dim)).astype(np.float16) for _ in range(3))
    o = dev.zeros((heads, seq, dim))
    scale = 0.125
    kernel[((seq + 63) // 64, heads)](dev.asarray(q), dev.asarray(k), dev.asarray(v), o, scale,
                                      seq, seq * dim, dim)
    s = np.einsum("hmd,hnd->hmn", q.astype(np.float64), k.astype(np.float64)) * scale
    p = np.exp(s - s.max(axis=2, keepdims=True))
    want = np.einsum("hmn,hnd->hmd", p / p.sum(axis=2, keepdims=True), v.astype(np.float64))
    # P is rounded to f16 before P V.
    np.testing.assert_allclose(o.numpy(), want, rtol=0, atol=2e-3)


def test_flash_attention(ptx_dev):
    check_attention(ptx_dev, hal.triton.load(ptx_dev, cached("flash_attention_fwd_2stage")))


def test_mistakes_raise(ptx_dev):
    kernel = hal.triton.load(ptx_dev, cached("vector_add"))
    x = ptx_dev.zeros(8)
    with pytest.raises(TypeError, match="takes 4 runtime arguments, got 5 positional"):
        kernel[1](x, x, x, 8, 256)
    with pytest.raises(TypeError, match="takes a hal.Array"):
        kernel[1](x, 1.5, x, 8)
    with pytest.raises(TypeError, match="CompiledKernel"):
        hal.triton.load(ptx_dev, 42)
    with pytest.raises(FileNotFoundError, match="missing.json"):
        hal.triton.load(ptx_dev, os.path.join(HERE, "missing.json"))


def test_a_vulkan_device_runs_triton_ptx_through_translation(vk):
    if "ptx" not in vk.info.irs:
        pytest.skip(f"{vk.info.name} cannot run translated PTX")
    kernel = hal.triton.load(vk, cached("vector_add"))
    check_add(vk, kernel)
    # Softmax reduces with warp shuffles, the matmul is built from mma.sync and ldmatrix: on
    # 32-lane subgroups, or through workgroup memory.
    check_softmax(vk, hal.triton.load(vk, cached("softmax_rows")))
    check_matmul(vk, hal.triton.load(vk, cached("matmul_f16")))
    # Flash attention uses them all together; this build's 24 KiB of shared memory fits
    # lavapipe's 32 KiB per block.
    check_attention(vk, hal.triton.load(vk, cached("flash_attention_fwd_2stage")))


def test_compiled_kernel_from_triton_itself(ptx_dev):
    pytest.importorskip("triton")
    import sys

    sys.path.insert(0, HERE)
    import specs

    try:
        compiled = specs.compile_all()
    except SystemExit as e:  # the generator runs only with the triton its PTX comes from
        pytest.skip(str(e))
    kernel = hal.triton.load(ptx_dev, compiled["vector_add"])
    check_add(ptx_dev, kernel)                # runtime arguments only
    n = 300
    x = ptx_dev.asarray(np.ones(n, np.float32))
    out = ptx_dev.zeros(n)
    kernel[2](x, x, out, n, 256)              # the constexpr by position is dropped too
    np.testing.assert_array_equal(out.numpy(), np.full(n, 2.0, np.float32))
    with pytest.raises(TypeError, match="argument 'x_ptr' is \\*fp32, got an array of float16"):
        kernel[2](ptx_dev.zeros(n, np.float16), x, out, n)
