"""Every kernel of the pack, launched from Python on each device and checked against NumPy.
The same lines run the SPIR-V on lavapipe and the PTX on the CPU PTX device."""

import numpy as np
import pytest

F16_TOL = dict(rtol=2e-2, atol=2e-2)
F32_TOL = dict(rtol=1e-4, atol=1e-4)


def ceil_div(a, b):
    return (a + b - 1) // b


def test_fill_copy_add_saxpy(dev, pack):
    n = 1000
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    dx, dy, out = dev.asarray(x), dev.asarray(y), dev.empty(n, np.float32)
    grid, block = ceil_div(n, 256), pack.manifest["fill_f32"]["block"]

    pack.kernel("fill_f32")(grid, block, out, n, 1.5)
    np.testing.assert_array_equal(out.numpy(), np.full(n, 1.5, np.float32))
    pack.kernel("copy_f32")(grid, block, dx, out, n)
    np.testing.assert_array_equal(out.numpy(), x)
    pack.kernel("vector_add_f32")(grid, block, dx, dy, out, n)
    np.testing.assert_allclose(out.numpy(), x + y, **F32_TOL)
    pack.kernel("saxpy")(grid, block, dx, dy, n, np.float32(2.5))
    np.testing.assert_allclose(dy.numpy(), 2.5 * x + y, **F32_TOL)


MATMULS = [f"matmul_naive_{t}" for t in ("f32", "f16")] + [
    f"matmul_tiled_{t}_{n}x{n}" for t in ("f32", "f16") for n in (32, 64, 128)] + [
    f"matmul_reg_{t}_64x{n}" for t in ("f32", "f16") for n in (64, 256)] + [
    f"matmul_sg_{t}_{m}x64" for t in ("f32", "f16") for m in (128, 256)] + [
    f"matmul_mma_f16_{v}" for v in ("256x128_k64", "128x256_k64", "128x128", "128x128_w8",
                                    "64x64", "256x128_k64_prefetch", "128x256_k64_prefetch",
                                    "128x128_prefetch")]  # PTX only: skipped on SPIR-V devices


def test_every_pack_kernel_is_covered_here(kernels):
    import json
    import os

    with open(os.path.join(kernels, "manifest.json"), encoding="utf-8") as f:
        names = {k["name"] for k in json.load(f)["kernels"]}
    covered = {"fill_f32", "copy_f32", "vector_add_f32", "saxpy", *MATMULS}
    for t in ("f32", "f16"):
        covered |= {f"row_sum_{t}", f"softmax_rows_{t}", f"attention_scores_{t}",
                    f"attention_pv_{t}", f"attention_fused_{t}_d64", f"attention_fused_{t}_d128",
                    f"attention_reg_{t}_d64", f"attention_reg_{t}_d128"}
    assert names == covered, f"not tested from Python: {sorted(names - covered)}"


@pytest.mark.parametrize("name", MATMULS)
def test_matmul(dev, pack, name):
    dtype = np.float16 if "f16" in name else np.float32
    m, n, k = 40, 72, 24
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = rng.standard_normal((m, n)).astype(dtype)
    da, db, dc = dev.asarray(a), dev.asarray(b), dev.asarray(c)
    kernel = pack.kernel(name)
    entry = pack.manifest[name]
    if "tiled" in name or "reg" in name or "sg" in name or "mma" in name:
        # The block's tile of C is in the name: <rows>x<cols>, maybe followed by _w8 or _k64.
        tile = next(p for p in name.split("_") if "x" in p)
        rows, cols = (int(v) for v in tile.split("x"))
        grid = (ceil_div(n, cols), ceil_div(m, rows))
    else:
        grid = (ceil_div(n, 16), ceil_div(m, 16))
    kernel(grid, entry["block"], da, db, dc, m, n, k, k, n, n, 0.5, 2.0,
           shared=entry.get("shared_bytes", 0))
    expected = 0.5 * (a.astype(np.float64) @ b.astype(np.float64)) + 2.0 * c.astype(np.float64)
    np.testing.assert_allclose(dc.numpy().astype(np.float64), expected,
                               **(F16_TOL if dtype == np.float16 else F32_TOL))


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_row_sum_and_softmax(dev, pack, dtype):
    suffix = "f16" if dtype == np.float16 else "f32"
    rows, cols = 9, 300
    x = np.random.default_rng(2).standard_normal((rows, cols)).astype(dtype)
    dx, dy = dev.asarray(x), dev.empty((rows, cols), dtype)
    tol = F16_TOL if dtype == np.float16 else F32_TOL
    pack.kernel(f"softmax_rows_{suffix}")(rows, 128, dx, dy, rows, cols)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(dy.numpy(), e / e.sum(axis=1, keepdims=True), **tol)
    sums = dev.empty(rows, dtype)
    pack.kernel(f"row_sum_{suffix}")(rows, 128, dx, sums, rows, cols)
    np.testing.assert_allclose(sums.numpy().astype(np.float64), x.astype(np.float64).sum(axis=1),
                               rtol=tol["rtol"], atol=tol["atol"] * cols)


def attention_reference(q, k, v, scale, causal):
    s = scale * np.einsum("hid,hjd->hij", q.astype(np.float64), k.astype(np.float64))
    seq_q, seq_kv = q.shape[1], k.shape[1]
    if causal:
        i = np.arange(seq_q)[:, None]
        j = np.arange(seq_kv)[None, :]
        s = np.where(j > i + seq_kv - seq_q, -np.inf, s)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - s.max(axis=2, keepdims=True))
        p = p / p.sum(axis=2, keepdims=True)
    p = np.nan_to_num(p)
    return s, p, np.einsum("hij,hjd->hid", p, v.astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("d", [64, 128])
def test_attention_three_kernels_and_fused(dev, pack, dtype, causal, d):
    suffix = "f16" if dtype == np.float16 else "f32"
    heads, seq_q, seq_kv = 2, 24, 40
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((heads, n, d)).astype(dtype) for n in (seq_q, seq_kv, seq_kv))
    scale = 1.0 / np.sqrt(d)
    s_ref, p_ref, o_ref = attention_reference(q, k, v, scale, causal)
    tol = F16_TOL if dtype == np.float16 else F32_TOL
    dq, dk, dv = dev.asarray(q), dev.asarray(k), dev.asarray(v)

    s = dev.empty((heads, seq_q, seq_kv), np.float32)
    pack.kernel(f"attention_scores_{suffix}")(
        (ceil_div(seq_kv, 16), ceil_div(seq_q, 16), heads), (16, 16), dq, dk, s,
        heads, seq_q, seq_kv, d, scale, causal)
    np.testing.assert_allclose(s.numpy(), s_ref, **tol)

    p = dev.asarray(p_ref.astype(np.float32))
    o = dev.empty((heads, seq_q, d), dtype)
    pack.kernel(f"attention_pv_{suffix}")(
        (ceil_div(d, 16), ceil_div(seq_q, 16), heads), (16, 16), p, dv, o, heads, seq_q, seq_kv, d)
    np.testing.assert_allclose(o.numpy().astype(np.float64), o_ref, **tol)

    fused = dev.zeros((heads, seq_q, d), dtype)
    pack.kernel(f"attention_fused_{suffix}_d{d}")(
        (ceil_div(seq_q, 16), heads), 128, dq, dk, dv, fused, heads, seq_q, seq_kv, scale, causal)
    np.testing.assert_allclose(fused.numpy().astype(np.float64), o_ref, **tol)

    # The register variant: WG threads per block, RQ query rows each (the instance's values).
    reg = pack.kernel(f"attention_reg_{suffix}_d{d}")
    rows = 16 * (4 if d == 64 else 2)
    out = dev.zeros((heads, seq_q, d), dtype)
    reg((ceil_div(seq_q, rows), heads), 16, dq, dk, dv, out, heads, seq_q, seq_kv, scale, causal)
    np.testing.assert_allclose(out.numpy().astype(np.float64), o_ref, **tol)
