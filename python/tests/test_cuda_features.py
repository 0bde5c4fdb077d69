"""CUDA features as nvcc compiles them, run on a device that takes PTX (the CPU PTX device here).

The kernels are tests/ptx_cpu/nvcc/features.cu; the PTX beside it is nvcc's output. Each test
compares one kernel's results with a host reference."""

import math
import os
import re

import numpy as np
import pytest

import hal

PTX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "ptx_cpu",
                   "nvcc", "features.ptx")


# The kernels a Vulkan device without 32-lane warps (lavapipe) refuses, each with words its
# reason must give. There, warps run through workgroup memory, which needs the whole block to
# reach each warp instruction (block_reduce shuffles in the first warp only); the rest are gaps
# of the translator that remove their kernel from here when they close.
VULKAN_REFUSES = {
    "block_reduce": "workgroup memory",
    "hmath": "sqrt.rm.f32",
    "memory_model": "%clock64",
    "asserting": "assert",
    "say": "printf",
}


def _takes_spirv(d):
    return "spirv" in d.info.irs


# The CPU PTX device runs PTX as it is; the first Vulkan device that takes PTX runs it
# translated to SPIR-V, and must give the same results for every kernel it does not refuse.
@pytest.fixture(scope="module", params=["cpu_ptx", "vulkan"])
def ptx_dev(request):
    vulkan = request.param == "vulkan"
    for d in hal.devices():
        if "ptx" in d.info.irs and _takes_spirv(d) == vulkan:
            return d
    if vulkan:
        pytest.skip("no Vulkan device takes PTX")
    pytest.skip("no CUDA device takes PTX (set HAL_CUDA_LIBRARY to hal.cpu_ptx_driver)")


@pytest.fixture(scope="module")
def mod(ptx_dev):
    return ptx_dev.load(PTX)


def kernel(dev, mod, name):
    """The kernel, or None where the device is expected to refuse it: then the refusal (a
    NotSupportedError at lookup, giving the table's words) is what is checked, and nothing runs."""
    words = VULKAN_REFUSES.get(name) if _takes_spirv(dev) else None
    if words is None:
        return mod[name]
    try:
        k = mod[name]
    except hal.NotSupportedError as refused:
        assert name in str(refused) and words in str(refused), str(refused)
        return None
    # A device with 32-lane warps runs every warp-level kernel; every other refusal stays.
    assert words == "workgroup memory", \
        f"{name} ran on {dev.info.name}, expected to refuse it ({words})"
    return k


def test_every_expected_refusal_names_a_kernel():
    with open(PTX) as f:
        entries = set(re.findall(r"\.entry (\w+)\(", f.read()))
    assert set(VULKAN_REFUSES) <= entries


def rng(seed):
    return np.random.default_rng(seed)


def lanes(v, n, signed):
    w = 32 // n
    out = []
    for i in range(n):
        x = (v >> (i * w)) & ((1 << w) - 1)
        out.append(x - (1 << w) if signed and x >> (w - 1) else x)
    return out


def test_block_reduce_with_shuffles_and_an_atomic(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "block_reduce")
    if k is None:
        return
    n = 20000
    x = rng(1).standard_normal(n).astype(np.float32)
    out = ptx_dev.zeros(1)
    k(16, 256, ptx_dev.asarray(x), out, n)
    np.testing.assert_allclose(out.numpy()[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)


def test_histogram_in_shared_then_global_atomics(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "histogram")
    if k is None:
        return
    x = rng(2).integers(0, 256, 30000).astype(np.uint8)
    h = ptx_dev.zeros(256, np.uint32)
    k(8, 128, ptx_dev.asarray(x), h, x.size)
    np.testing.assert_array_equal(h.numpy(), np.bincount(x, minlength=256))


def test_transpose_through_a_padded_shared_tile(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "transpose")
    if k is None:
        return
    r, c = 70, 45
    x = rng(3).standard_normal((r, c)).astype(np.float32)
    out = ptx_dev.zeros((c, r))
    k(((c + 31) // 32, (r + 31) // 32, 1), (32, 8, 1), ptx_dev.asarray(x), out, r, c)
    np.testing.assert_array_equal(out.numpy(), x.T)


def test_warp_scan(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "warp_scan")
    if k is None:
        return
    n = 1000
    x = rng(4).integers(-100, 100, n).astype(np.int32)
    out = ptx_dev.zeros(n, np.int32)
    k((n + 127) // 128, 128, ptx_dev.asarray(x), out, n)
    pad = np.zeros(((n + 31) // 32) * 32, np.int64)
    pad[:n] = x
    np.testing.assert_array_equal(out.numpy(), np.cumsum(pad.reshape(-1, 32), axis=1).ravel()[:n])


def test_integer_intrinsics(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "bits")
    if k is None:
        return
    n = 256
    a = rng(5).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    a[:4] = [0, 1, 0x80000000, 0xFFFFFFFF]
    out, out64 = ptx_dev.zeros(n * 12, np.uint32), ptx_dev.zeros(n * 3, np.uint64)
    k((n + 127) // 128, 128, ptx_dev.asarray(a), out, out64, n)
    got, got64 = out.numpy().reshape(n, 12), out64.numpy().reshape(n, 3)

    def s32(v):
        return v - (1 << 32) if v >= 1 << 31 else v

    for i in range(n):
        x, b = int(a[i]), int(a[(i * 7 + 3) % n]) | 1
        a64 = (x << 32) | b
        bs = x.to_bytes(4, "little") + b.to_bytes(4, "little")
        bd = b | 0x100
        q = abs(s32(x)) // abs(s32(bd))
        q = q if (s32(x) < 0) == (s32(bd) < 0) else -q
        want = [bin(x).count("1"), 32 - x.bit_length(), int(f"{x:032b}"[::-1], 2),
                (x & -x).bit_length(), sum(bs[(0x5140 >> (4 * k)) & 7] << (8 * k) for k in range(4)),
                ((((b << 32) | x) << (i & 31)) >> 32) & 0xFFFFFFFF, (x * b) >> 32, x // b, x % b,
                (abs(s32(x) - s32(b)) + 5) & 0xFFFFFFFF, q & 0xFFFFFFFF, bin(a64).count("1")]
        assert [int(v) for v in got[i]] == want, i
        want64 = [a64 // (b + 12345), a64 % (b + 12345), (a64 * (a64 + 977)) >> 64]
        assert [int(v) for v in got64[i]] == want64, i


def test_single_precision_math(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "mathf")
    if k is None:
        return
    n = 500
    x = (rng(6).standard_normal(n) * 3).astype(np.float32)
    out = ptx_dev.zeros(n * 10)
    k((n + 127) // 128, 128, ptx_dev.asarray(x), out, n)
    g, xd = out.numpy().reshape(n, 10), x.astype(np.float64)
    want = [np.exp(xd), np.log(np.abs(xd) + 1e-3), np.sin((x * np.float32(1000)).astype(np.float64)),
            np.cos(xd), np.tanh(xd), np.abs(xd) ** 1.7, np.array([math.erf(v) for v in xd]),
            xd / (np.roll(xd, -1) + 3.0), np.sqrt(np.abs(xd)), 1 / np.sqrt(np.abs(xd) + 1)]
    for k in range(10):
        np.testing.assert_allclose(g[:, k], want[k], rtol=2e-6, atol=1e-6, err_msg=str(k))


def test_double_precision_math(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "mathd")
    if k is None:
        return
    n = 300
    x = rng(7).standard_normal(n) * 3
    out = ptx_dev.zeros(n * 6, np.float64)
    k((n + 127) // 128, 128, ptx_dev.asarray(x), out, n)
    g = out.numpy().reshape(n, 6)
    want = [np.exp(x), np.log(np.abs(x) + 1e-3), np.sin(x * 100), np.sqrt(np.abs(x)),
            x / (np.roll(x, -1) + 3.0), np.abs(x) ** 0.3]
    # nvcc's double-precision sin relies on fused multiply-adds. Vulkan lets a driver compute
    # Fma as a multiply then an add (lavapipe does, and f64 has no wider type to fuse in), so
    # through translation the argument reduction loses bits: a looser bound there.
    rtol = 1e-11 if _takes_spirv(ptx_dev) else 1e-14
    for k in range(6):
        np.testing.assert_allclose(g[:, k], want[k], rtol=rtol, atol=1e-15, err_msg=str(k))


def test_half_pairs(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "halves")
    if k is None:
        return
    n = 300
    a = rng(8).standard_normal(2 * n).astype(np.float16)
    b = rng(9).standard_normal(2 * n).astype(np.float16)
    out, f = ptx_dev.zeros(6 * n, np.float16), ptx_dev.zeros(n)
    k(3, 128, ptx_dev.asarray(a), ptx_dev.asarray(b), out, f, n)
    g, A, B = out.numpy().reshape(n, 3, 2), a.reshape(n, 2), b.reshape(n, 2)
    np.testing.assert_array_equal(g[:, 0], A + B)
    np.testing.assert_array_equal(g[:, 1], A * B)
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    np.testing.assert_array_equal(g[:, 2], (A32 * B32 + A32).astype(np.float16))
    np.testing.assert_allclose(f.numpy(), A32[:, 0] * A32[:, 1] + B.max(axis=1).astype(np.float32),
                               rtol=1e-6)


def test_half_math_intrinsics_with_inline_assembly(ptx_dev, mod):
    # cuda_fp16.hpp's h2sqrt and h2exp declare ".reg.b16" in inline assembly; __hmax2 is a set
    # on pairs.
    k = kernel(ptx_dev, mod, "hmath")
    if k is None:
        return
    n = 64
    a = rng(10).standard_normal(2 * n).astype(np.float16)
    out, acc, f = ptx_dev.zeros(8 * n, np.float16), ptx_dev.zeros(1, np.uint16), ptx_dev.zeros(4 * n)
    k(1, 64, ptx_dev.asarray(a), out, acc, f, n)
    A, g = a.reshape(n, 2).astype(np.float32), out.numpy().reshape(n, 4, 2).astype(np.float32)
    np.testing.assert_array_equal(g[:, 0], np.maximum(A, np.abs(A)))
    np.testing.assert_allclose(g[:, 1], np.sqrt(np.abs(A)), rtol=2e-3)
    np.testing.assert_allclose(g[:, 2], np.exp(A * 0.1), rtol=3e-3)
    np.testing.assert_array_equal(g[:, 3], -A)
    assert acc.numpy()[0] == 0x4280  # 64.0 in bfloat16: one atomic add of 1.0 per thread
    F = f.numpy().reshape(n, 4)
    np.testing.assert_allclose(F[:, 0], A[:, 0] / 3, rtol=1e-6)
    np.testing.assert_array_equal(F[:, 1], np.clip(A[:, 1], 0, 1))
    np.testing.assert_allclose(F[:, 2], 1 / (A[:, 0] + 10), rtol=1e-7)


def test_warp_votes_matches_and_reductions(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "votes")
    if k is None:
        return
    n = 256
    x = rng(11).integers(-50, 150, n).astype(np.int32)
    out = ptx_dev.zeros(n * 6, np.uint32)
    k(2, 128, ptx_dev.asarray(x), out, n)
    g = out.numpy().reshape(n, 6)
    for w in range(n // 32):
        v = x[w * 32:(w + 1) * 32]
        ballot = sum(1 << k for k in range(32) if v[k] > 0)
        for k in range(32):
            match = sum(1 << j for j in range(32) if (v[j] & 3) == (v[k] & 3))
            want = [ballot, int(any(v > 100)), int(all(v > -1000)), match,
                    sum(int(t) & 255 for t in v), max(int(t) & 255 for t in v)]
            assert [int(t) for t in g[w * 32 + k]] == want, w * 32 + k


def test_tiles_of_sixteen_lanes_reduce_and_shuffle_separately(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "tiles")
    if k is None:
        return
    n = 256
    x = rng(12).integers(-100, 100, n).astype(np.int32)
    out = ptx_dev.zeros(3 * n, np.int32)
    k(2, 128, ptx_dev.asarray(x), out, n)
    g = out.numpy().reshape(n, 3)
    for i in range(n):
        t0 = i // 16 * 16
        assert list(g[i]) == [x[t0:t0 + 16].sum(), x[t0 + 3], x[i - 1] if i % 16 else x[i]], i


def test_atomics_of_every_width(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "atomics")
    if k is None:
        return
    n = 1000
    x = rng(13).standard_normal(n).astype(np.float32)
    fmax = ptx_dev.asarray(np.array([-1e30], np.float32))
    dsum, u64 = ptx_dev.zeros(1, np.float64), ptx_dev.zeros(1, np.uint64)
    ctr = ptx_dev.asarray(np.array([0, 2**31 - 1, 0], np.uint32))
    k((n + 127) // 128, 128, ptx_dev.asarray(x), fmax, dsum, u64, ctr, n)
    assert fmax.numpy()[0] == x.max()
    np.testing.assert_allclose(dsum.numpy()[0], x.astype(np.float64).sum(), rtol=1e-12)
    assert int(u64.numpy()[0]) == n << 33
    c = ctr.numpy()
    assert int(c[0]) == n % 10
    assert int(c[1].view(np.int32)) == int((x * 1000).astype(np.int32).min())
    assert int(c[2]) == 0xFFFFFFFF


def test_local_array_and_a_struct_parameter(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "local_array")
    if k is None:
        return
    n = 300
    x = rng(14).standard_normal(n).astype(np.float32)
    idx = rng(15).integers(0, 1000, n).astype(np.int32)
    dt = np.dtype({"names": ["scale", "offset", "bias", "s"],
                   "formats": [np.float32, np.int32, np.float64, (np.int16, 3)],
                   "offsets": [0, 4, 8, 16], "itemsize": 24})
    p = np.zeros(1, dt)
    p["scale"], p["offset"], p["bias"], p["s"] = 1.5, 5, 0.25, [1, 2, 3]
    out = ptx_dev.zeros(n)
    k(3, 128, ptx_dev.asarray(idx), ptx_dev.asarray(x), out, p[0], n)
    want = np.zeros(n, np.float32)
    for i in range(n):
        arr = [np.float32(x[(i + k) % n]) * np.float32(1.5) + np.float32(k) for k in range(24)]
        acc = np.float32(0)
        for k in range(8):
            acc = np.float32(acc + arr[(idx[(i + k) % n] + 5) % 24])
        want[i] = acc + np.float32(0.25) + np.float32(14)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


def test_three_dimensional_grid(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "grid3d")
    if k is None:
        return
    out = ptx_dev.zeros(12 * 24, np.uint32)
    k((3, 2, 2), (4, 3, 2), out)
    np.testing.assert_array_equal(out.numpy(), [b * 1000 + t for b in range(12) for t in range(24)])


def test_dynamic_shared_memory(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "dyn_shared")
    if k is None:
        return
    x = rng(16).standard_normal(200)
    total = ptx_dev.zeros(1, np.float64)
    k(1, 256, ptx_dev.asarray(x), total, x.size, shared=256 * 8)
    np.testing.assert_allclose(total.numpy()[0], x.sum(), rtol=1e-12)


def test_wmma_fp16_tiles(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "wmma16")
    if k is None:
        return
    M, N, K = 32, 48, 64
    A = rng(17).integers(-3, 4, (M, K)).astype(np.float16)
    Bt = rng(18).integers(-3, 4, (N, K)).astype(np.float16)
    C = ptx_dev.zeros((M, N))
    k((N // 16, M // 16, 1), 32, ptx_dev.asarray(A), ptx_dev.asarray(Bt), C, M, N, K)
    np.testing.assert_array_equal(C.numpy(), A.astype(np.float32) @ Bt.astype(np.float32).T)


def test_memory_model(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "memory_model")
    if k is None:
        return
    flag, data, t = ptx_dev.zeros(1, np.int32), ptx_dev.zeros(8, np.int32), ptx_dev.zeros(2, np.uint64)
    k(8, 64, flag, data, t)
    assert flag.numpy()[0] == 8 and list(data.numpy()) == [7 * i for i in range(8)]
    assert list(t.numpy()) == [1, 1]


def test_vector_loads(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "vec_ldg")
    if k is None:
        return
    a = rng(19).standard_normal((100, 4)).astype(np.float32)
    out = ptx_dev.zeros((100, 4))
    k(1, 128, ptx_dev.asarray(a), out, 100)
    w = np.roll(a, -1, axis=0)
    np.testing.assert_array_equal(
        out.numpy(), np.stack([a[:, 0] + w[:, 3], a[:, 1] * 2, a[:, 2] - w[:, 0], a[:, 3]], 1))


def test_pipelined_copy(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "pipeline_copy")
    if k is None:
        return
    x = rng(20).standard_normal(256).astype(np.float32)
    rev = ptx_dev.zeros(256)
    k(1, 256, ptx_dev.asarray(x), rev, 256)
    np.testing.assert_array_equal(rev.numpy(), x[::-1] + 1)


def test_assert(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "asserting")
    if k is None:
        return
    ok = ptx_dev.zeros(64, np.int32)
    k(1, 64, ptx_dev.asarray(np.arange(64, dtype=np.int32)), ok, 64)
    np.testing.assert_array_equal(ok.numpy(), np.arange(64) * 2)


def test_dp4a_and_bf16(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "dp4a_bf16")
    if k is None:
        return
    ml_dtypes = pytest.importorskip("ml_dtypes")
    n = 128
    r = rng(21)
    a = r.integers(-2**31, 2**31, n).astype(np.int32)
    b = r.integers(-2**31, 2**31, n).astype(np.int32)
    x = r.standard_normal(2 * n).astype(ml_dtypes.bfloat16)
    out, y, f = ptx_dev.zeros(n, np.int32), ptx_dev.zeros(2 * n, np.uint16), ptx_dev.zeros(n)
    k(1, 128, ptx_dev.asarray(a), ptx_dev.asarray(b), out, ptx_dev.asarray(x.view(np.uint16)), y,
      f, n)
    prods = a.view(np.int8).reshape(n, 4).astype(np.int32) * b.view(np.int8).reshape(n, 4)
    np.testing.assert_array_equal(out.numpy(), prods.sum(1) + 7)
    xf = x.astype(np.float32)
    np.testing.assert_array_equal(y.numpy().view(ml_dtypes.bfloat16).astype(np.float32),
                                  (xf * 1.5).astype(ml_dtypes.bfloat16).astype(np.float32))
    np.testing.assert_array_equal(f.numpy(), xf.reshape(n, 2).sum(1))


def test_fns_and_bit_fields(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "fns_bfe")
    if k is None:
        return
    v = rng(21).integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    fb = ptx_dev.zeros(3 * 64, np.uint32)
    k(1, 64, ptx_dev.asarray(v), fb, 64)
    g = fb.numpy().reshape(64, 3)
    for i in range(64):
        val, nxt = int(v[i]), int(v[(i + 1) % 64])
        set_bits = [k for k in range(32) if val >> k & 1]
        want = [set_bits[2] if len(set_bits) > 2 else 0xFFFFFFFF,
                (val >> (i & 15)) & ((1 << ((i & 7) + 1)) - 1),
                sum(abs(p - q) << (8 * k) for k, (p, q) in
                    enumerate(zip(lanes(val, 4, False), lanes(nxt, 4, False))))]
        assert [int(t) for t in g[i]] == want, i


def test_jump_tables(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "jump")
    if k is None:
        return
    n = 64
    x = rng(22).integers(-1000, 1000, n).astype(np.int32)
    out = ptx_dev.zeros(n, np.int32)
    k(1, 64, ptx_dev.asarray(x), out, n)
    for i, v in enumerate(int(t) for t in x):
        cases = [v * 3, v + 7, v ^ 0x55, v - 100, v << 2, v >> 1, ~v, v * v, int(v / 3),
                 int(math.fmod(v, 5)), -v, v | 0x100]
        assert int(out.numpy()[i]) == (cases[v & 15] if (v & 15) < 12 else 42), i


def test_wide_integers(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "wide")
    if k is None:
        return
    n = 64
    u = rng(23).integers(0, 2**64, n, dtype=np.uint64)
    w = ptx_dev.zeros(6 * n, np.uint64)
    k(1, 64, ptx_dev.asarray(u), w, n)
    W = w.numpy().reshape(n, 6)
    for i in range(n):
        v = int(u[i])
        p = v * (v | 1)
        assert [int(t) for t in W[i]] == [p >> 64, p & (2**64 - 1), int(f"{v:064b}"[::-1], 2),
                                          64 - v.bit_length(), (v & -v).bit_length(),
                                          v // 7 + v % 1000003], i


def test_lane_masks(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "specials")
    if k is None:
        return
    s = ptx_dev.zeros(3 * 64, np.uint32)
    k(1, 64, s)
    S = s.numpy().reshape(64, 3)
    for t in range(64):
        assert list(S[t]) == [(1 << (t % 32)) - 1, 0xFFFFFFFF, 1 if t // 32 == 0 else 0], t


def test_simd_video_intrinsics(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "simd")
    if k is None:
        return
    n = 64
    a = rng(24).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    out = ptx_dev.zeros(6 * n, np.uint32)
    k(1, 64, ptx_dev.asarray(a), out, n)
    g = out.numpy().reshape(n, 6)
    for i in range(n):
        x, y = int(a[i]), int(a[(i + 1) % n])
        bx, by = lanes(x, 4, False), lanes(y, 4, False)
        hx, hy = lanes(x, 2, False), lanes(y, 2, False)
        want = [sum(((p + q) & 255) << (8 * k) for k, (p, q) in enumerate(zip(bx, by))),
                sum(((p - q) & 0xFFFF) << (16 * k) for k, (p, q) in enumerate(zip(hx, hy))),
                sum(abs(p - q) << (8 * k) for k, (p, q) in enumerate(zip(bx, by))),
                sum((255 if p >= q else 0) << (8 * k) for k, (p, q) in enumerate(zip(bx, by))),
                sum(max(p, q) << (16 * k) for k, (p, q) in enumerate(zip(hx, hy))),
                sum(((p + q + 1) >> 1) << (8 * k) for k, (p, q) in enumerate(zip(bx, by)))]
        assert [int(t) for t in g[i]] == want, i


def test_device_printf(ptx_dev, mod, capfd):
    k = kernel(ptx_dev, mod, "say")
    if k is None:
        return
    capfd.readouterr()
    k(1, 32, 7)
    ptx_dev.synchronize()
    assert capfd.readouterr().out == "hello 7\n"


def test_half_pair_atomics(ptx_dev, mod):
    k = kernel(ptx_dev, mod, "half_atomics")
    if k is None:
        return
    # Small integers: every partial sum is exact in f16, so the order of the atomics is moot.
    n = 500
    x = rng(25).integers(-4, 5, 2 * n).astype(np.float16)
    acc, facc = ptx_dev.zeros(2, np.float16), ptx_dev.zeros(1)
    k((n + 127) // 128, 128, ptx_dev.asarray(x), acc, facc, n)
    X = x.reshape(n, 2).astype(np.float32)
    np.testing.assert_array_equal(acc.numpy(), X.sum(0).astype(np.float16))
    assert facc.numpy()[0] == X[:, 0].sum()
