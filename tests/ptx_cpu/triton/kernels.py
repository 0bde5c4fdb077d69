"""Triton kernels whose sm_80 PTX hal's tests run (see README.md; generate.py compiles them).

Every tensor is addressed through its base pointer and explicit strides in elements; the
innermost dimension of every matrix is contiguous. Each kernel masks its loads and stores, so any
problem size works, including sizes that are not multiples of the blocks.
"""

import triton
import triton.language as tl

# ------------------------------------------------------------------------------------------------
# 1. Elementwise: out[i] = x[i] + y[i] for i < n.  Grid: (cdiv(n, BLOCK),).
# ------------------------------------------------------------------------------------------------


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# ------------------------------------------------------------------------------------------------
# 2. Row softmax of an fp32 matrix with n_cols <= BLOCK.  Grid: (n_rows,), one program per row.
#    With BLOCK = 32 * num_warps each thread holds one element, so the row maximum and the row
#    sum are reduced within each warp (shuffles) and then across warps (shared memory).
# ------------------------------------------------------------------------------------------------


@triton.jit
def softmax_rows(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)  # exp(-inf) = 0 for the padding lanes
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask)


# ------------------------------------------------------------------------------------------------
# 3. C[M, N] (fp32) = A[M, K] (fp16) @ B[K, N] (fp16), accumulated in fp32.
#    Grid: (cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N),), tiles ordered in groups of GROUP_M tile rows.
#    The two entry points differ only in how B is stored:
#      matmul_f16     B is K x N, row-major (ldb >= N): B's rows are contiguous;
#      matmul_f16_bt  B is given transposed, as N x K row-major (ldb >= K).
# ------------------------------------------------------------------------------------------------


@triton.jit
def _matmul_tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_bn, stride_cm,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr):
    # Map the program id to a (tile row, tile column), GROUP_M tile rows at a time.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group_size = GROUP_M * tiles_n
    first_m = (pid // group_size) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % group_size) % rows_in_group
    tile_n = (pid % group_size) // rows_in_group

    rm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + rk) < K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_f16(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    _matmul_tile(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, 1, ldc, BLOCK_M, BLOCK_N, BLOCK_K,
                 GROUP_M)


@triton.jit
def matmul_f16_bt(a_ptr, bt_ptr, c_ptr, M, N, K, lda, ldbt, ldc, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # B[k, n] = Bt[n, k]: stepping k moves 1 element, stepping n moves ldbt elements.
    _matmul_tile(a_ptr, bt_ptr, c_ptr, M, N, K, lda, 1, ldbt, ldc, BLOCK_M, BLOCK_N, BLOCK_K,
                 GROUP_M)


# ------------------------------------------------------------------------------------------------
# 4. Flash-attention forward: O = softmax(scale * Q K^T [+ causal mask]) V for one head per
#    program column.  Q, K, V (fp16) and O (fp32) are [heads, seq_len, HEAD_DIM], each head
#    stride_h elements apart and each row stride_s apart.  Grid: (cdiv(seq_len, BLOCK_M), heads).
#    The softmax runs online in base 2: scores are scaled by scale * log2(e) and exponentiated
#    with exp2, keeping a running row maximum m_i and row sum l_i.
# ------------------------------------------------------------------------------------------------


@triton.jit
def _attention_tile(q_ptr, k_ptr, v_ptr, o_ptr, scale, seq_len, stride_h, stride_s,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    head = tl.program_id(1).to(tl.int64) * stride_h
    rm = start_m + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rd = tl.arange(0, HEAD_DIM)

    q = tl.load(q_ptr + head + rm[:, None] * stride_s + rd[None, :], mask=rm[:, None] < seq_len,
                other=0.0)
    qk_scale = scale * 1.4426950408889634  # log2(e)
    m_i = tl.full((BLOCK_M, ), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M, ), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)

    # Key blocks: all of them, or (causal) those holding a key <= the block's last query.
    end_n = tl.minimum(start_m + BLOCK_M, seq_len) if CAUSAL else seq_len
    for start_n in range(0, end_n, BLOCK_N):
        cols = start_n + rn
        kv_mask = cols[:, None] < seq_len
        k = tl.load(k_ptr + head + cols[:, None] * stride_s + rd[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + head + cols[:, None] * stride_s + rd[None, :], mask=kv_mask, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        valid = cols[None, :] < seq_len
        if CAUSAL:
            valid = valid & (cols[None, :] <= rm[:, None])
        qk = tl.where(valid, qk, float("-inf"))
        # Every row sees key 0 in the first block, so m_new is finite from then on.
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(o_ptr + head + rm[:, None] * stride_s + rd[None, :], out, mask=rm[:, None] < seq_len)


@triton.jit
def flash_attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, scale, seq_len, stride_h, stride_s,
                        HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    _attention_tile(q_ptr, k_ptr, v_ptr, o_ptr, scale, seq_len, stride_h, stride_s, HEAD_DIM,
                    BLOCK_M, BLOCK_N, False)


# The same forward pass, compiled with two pipeline stages instead of three (generate.py): its
# tiles take 24 KiB of shared memory rather than 40, which fits devices with 32 KiB per block.
@triton.jit
def flash_attention_fwd_2stage(q_ptr, k_ptr, v_ptr, o_ptr, scale, seq_len, stride_h, stride_s,
                               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                               BLOCK_N: tl.constexpr):
    _attention_tile(q_ptr, k_ptr, v_ptr, o_ptr, scale, seq_len, stride_h, stride_s, HEAD_DIM,
                    BLOCK_M, BLOCK_N, False)


@triton.jit
def flash_attention_fwd_causal(q_ptr, k_ptr, v_ptr, o_ptr, scale, seq_len, stride_h, stride_s,
                               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                               BLOCK_N: tl.constexpr):
    _attention_tile(q_ptr, k_ptr, v_ptr, o_ptr, scale, seq_len, stride_h, stride_s, HEAD_DIM,
                    BLOCK_M, BLOCK_N, True)


# ------------------------------------------------------------------------------------------------
# 5. Histogram with global atomics: counts[v] += 1 for every x[i] = v with 0 <= v < num_bins
#    (values outside are ignored).  counts must be zeroed first.  Grid: (cdiv(n, BLOCK),).
# ------------------------------------------------------------------------------------------------


@triton.jit
def histogram_atomic(x_ptr, counts_ptr, n, num_bins, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_range = offsets < n
    v = tl.load(x_ptr + offsets, mask=in_range, other=-1)
    ok = in_range & (v >= 0) & (v < num_bins)
    tl.atomic_add(counts_ptr + v, 1, mask=ok)
