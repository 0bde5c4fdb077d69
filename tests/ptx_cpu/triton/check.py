#!/usr/bin/env python3
"""Checks the kernels of kernels.py and the references of ../triton_test.cpp without a GPU.

For every case that triton_test.cpp runs, this script builds the same inputs (the same
splitmix64 generator, filled in the same order), runs the kernel in Triton's interpreter
(TRITON_INTERPRET=1, on numpy arrays), computes an independent float64 numpy reference, and
compares the two with the test's tolerances. It prints each reference's digest,
sum_i out[i] * (1 + i % 7) over the logical output in row-major order, which triton_test.cpp
compares with the digest of its own C++ reference (the digest field of its case tables), so the
C++ references are tied to numpy and to Triton's semantics.

Same environment as generate.py (see its header):  .venv/bin/python check.py
"""

import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: @triton.jit runs on numpy

import numpy as np  # noqa: E402
import triton  # noqa: E402

if triton.__version__ != "3.9.0":
    sys.exit(f"check.py: triton {triton.__version__} is installed; use 3.9.0 (see generate.py)")

import triton.runtime.interpreter as interpreter  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ beside kernels.py
sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernels  # noqa: E402

MASK64 = (1 << 64) - 1


class Rng:
    """splitmix64; triton_test.cpp has the same generator."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def ints(self, count, lo, hi):
        """count integers uniform in [lo, hi]."""
        return np.array([lo + self.next() % (hi - lo + 1) for _ in range(count)], dtype=np.int64)

    # Inputs are exactly representable in their storage type, so no rounding happens on upload.
    def f32(self, count, scale_bits, range_bits):
        """count multiples of 2**-scale_bits in [-2**range_bits, 2**range_bits] (fp32-exact)."""
        return (self.ints(count, -(1 << (scale_bits + range_bits)), 1 << (scale_bits + range_bits))
                / float(1 << scale_bits))

    def f16(self, count):
        """count multiples of 1/1024 in [-1, 1] (fp16-exact)."""
        return self.ints(count, -1024, 1024) / 1024.0


def digest(out):
    flat = np.asarray(out, dtype=np.float64).reshape(-1)
    return float(np.sum(flat * (1 + np.arange(flat.size) % 7)))


class Ptr:
    """What the interpreter needs of a tensor argument: its address and dtype."""

    def __init__(self, array):
        self.array = array
        self.dtype = array.dtype

    def data_ptr(self):
        return self.array.ctypes.data


# The arrays already live on the host: skip the interpreter's device-to-host round trip.
interpreter.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))
interpreter.GridExecutor._restore_args_dev = lambda self, *args: None

cdiv = triton.cdiv
failures = 0


def report(kernel, shape, got, ref, tol):
    """got and ref are the logical outputs; tol is the allowed |got - ref| per element."""
    global failures
    err = np.abs(np.asarray(got, np.float64) - ref)
    ok = bool(np.all(err <= tol))
    failures += not ok
    print(f"{kernel:28} {str(shape):24} digest {digest(ref):.17g}  max|interp-ref| "
          f"{err.max():.3g}  {'ok' if ok else 'FAILED'}")


def vector_add(seed, n):
    rng = Rng(seed)
    x = rng.f32(n, 16, 4)
    y = rng.f32(n, 16, 4)
    ref = x + y
    out = np.zeros(n, np.float32)
    kernels.vector_add[(cdiv(n, 256), )](Ptr(x.astype(np.float32)), Ptr(y.astype(np.float32)),
                                         Ptr(out), n, BLOCK=256)
    report("vector_add", (n, ), out, ref, 0.0)


def softmax_rows(seed, rows, cols, in_stride, out_stride):
    rng = Rng(seed)
    x = rng.f32(rows * in_stride, 14, 2).reshape(rows, in_stride)
    logical = x[:, :cols]
    e = np.exp(logical - logical.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    out = np.zeros((rows, out_stride), np.float32)
    kernels.softmax_rows[(rows, )](Ptr(out), Ptr(x.astype(np.float32)), in_stride, out_stride,
                                   cols, BLOCK=128)
    report("softmax_rows", (rows, cols, in_stride, out_stride), out[:, :cols], ref,
           1e-6 + 1e-5 * ref)


def matmul(seed, transposed_b, m, n, k, lda, ldb, ldc):
    rng = Rng(seed)
    a = rng.f16(m * lda).reshape(m, lda)
    b_rows = n if transposed_b else k
    b = rng.f16(b_rows * ldb).reshape(b_rows, ldb)
    a_l = a[:, :k]
    b_l = b[:, :k].T if transposed_b else b[:, :n]
    ref = a_l @ b_l
    tol = 2e-5 * (np.abs(a_l) @ np.abs(b_l)) + 1e-6
    c = np.zeros((m, ldc), np.float32)
    fn = kernels.matmul_f16_bt if transposed_b else kernels.matmul_f16
    grid = (cdiv(m, 64) * cdiv(n, 64), )
    fn[grid](Ptr(a.astype(np.float16)), Ptr(b.astype(np.float16)), Ptr(c), m, n, k, lda, ldb,
             ldc, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=4)
    name = "matmul_f16_bt" if transposed_b else "matmul_f16"
    report(name, (m, n, k, lda, ldb, ldc), c[:, :n], ref, tol)


def attention(seed, causal, heads, seq, name=None):
    rng = Rng(seed)
    q, k, v = (rng.f16(heads * seq * 64).reshape(heads, seq, 64) for _ in range(3))
    scale = 0.125
    s = np.einsum("hmd,hnd->hmn", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=2, keepdims=True))
    ref = np.einsum("hmn,hnd->hmd", p / p.sum(axis=2, keepdims=True), v)
    o = np.zeros((heads, seq, 64), np.float32)
    name = name or ("flash_attention_fwd_causal" if causal else "flash_attention_fwd")
    fn = getattr(kernels, name)
    fn[(cdiv(seq, 64), heads)](*(Ptr(t.astype(np.float16)) for t in (q, k, v)), Ptr(o), scale,
                               seq, seq * 64, 64, HEAD_DIM=64, BLOCK_M=64, BLOCK_N=64)
    report(name, (heads, seq), o, ref, 2e-3)


def histogram(seed, n, bins):
    rng = Rng(seed)
    x = rng.ints(n, -3, bins + 2)
    ref = np.array([np.count_nonzero(x == b) for b in range(bins)], np.float64)
    counts = np.zeros(bins, np.int32)
    kernels.histogram_atomic[(cdiv(n, 256), )](Ptr(x.astype(np.int32)), Ptr(counts), n, bins,
                                               BLOCK=256)
    report("histogram_atomic", (n, bins), counts, ref, 0.0)


# The cases of triton_test.cpp, with the same seeds.
vector_add(1, 1000)
vector_add(2, 256)
vector_add(3, 1)
softmax_rows(11, 7, 100, 104, 112)
softmax_rows(12, 3, 128, 128, 128)
softmax_rows(13, 4, 37, 37, 40)
matmul(21, False, 100, 80, 48, 64, 96, 96)
matmul(22, False, 64, 64, 64, 64, 64, 64)
matmul(23, False, 37, 144, 112, 112, 160, 144)
matmul(31, True, 70, 50, 80, 80, 96, 64)
matmul(32, True, 33, 130, 32, 32, 32, 144)
attention(41, False, 2, 100)
attention(42, False, 1, 64)
# The two-stage build of the same pass: the same cases, so the same digests.
attention(41, False, 2, 100, "flash_attention_fwd_2stage")
attention(42, False, 1, 64, "flash_attention_fwd_2stage")
attention(51, True, 2, 100)
attention(52, True, 1, 130)
histogram(61, 1000, 37)
histogram(62, 256, 8)
sys.exit(1 if failures else 0)
