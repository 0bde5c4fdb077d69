"""Triton kernels for hal.triton's tests: an elementwise add, a row softmax (warp shuffles and
shared memory) and an fp16 matmul on tensor cores (mma.sync, ldmatrix, cp.async on sm_80)."""

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * cols + offsets, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def sources():
    """(kernel, signature, constexprs, num_warps) for each test kernel."""
    return {
        "add_kernel": (add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                    "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256}, 4),
        "softmax_kernel": (softmax_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "cols": "i32",
                                            "BLOCK": "constexpr"}, {"BLOCK": 128}, 4),
        "matmul_kernel": (matmul_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32",
                                          "M": "i32", "N": "i32", "K": "i32", "BM": "constexpr",
                                          "BN": "constexpr", "BK": "constexpr"},
                          {"BM": 32, "BN": 32, "BK": 32}, 4),
    }


def compile_all():
    out = {}
    for name, (fn, signature, constexprs, warps) in sources().items():
        src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs)
        out[name] = triton.compile(src, target=GPUTarget("cuda", 80, 32),
                                   options={"num_warps": warps, "ptx_version": 80})
    return out
