#version 450
// A tiled matmul written the way production inference engines write theirs, to hold hal to what
// Vulkan does with such shaders:
//  - the workgroup size and every tile size are specialization constants, and engines pass one
//    vector of constants to every variant, so some ids given at load are not in this module;
//  - shared arrays are sized by expressions of those constants (OpSpecConstantOp);
//  - binding 0 is read through two aliased views (scalars and vec2 pairs);
//  - the push-constant block has more than a dozen members.
// D[m][n] = alpha * sum_k A[m][k] * B[k][n] (+ D when ACCUMULATE), row-major with strides, for
// every batch b (grid z). Block: BLOCK_SIZE x 1 x 1. Grid: (ceil(N/BN), ceil(M/BM), batches).
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint BLOCK_SIZE = 64;
layout(constant_id = 1) const uint BM = 32;
layout(constant_id = 2) const uint BN = 32;
layout(constant_id = 3) const int BK = 8;  // signed, as engines often declare it
layout(constant_id = 4) const uint WM = 4;  // rows of D per invocation
layout(constant_id = 5) const bool ACCUMULATE = false;
// Ids 6 to 10 are used by other variants of this shader only.

layout(set = 0, binding = 0) readonly buffer A { float data_a[]; };
layout(set = 0, binding = 0) readonly buffer A2 { vec2 data_a2[]; };  // the same buffer
layout(set = 0, binding = 1) readonly buffer B { float data_b[]; };
layout(set = 0, binding = 2) buffer D { float data_d[]; };

layout(push_constant) uniform Params {
  uint M, N, K;
  uint stride_a, stride_b, stride_d;
  uint batch_stride_a, batch_stride_b, batch_stride_d;
  uint k_split;
  uint ne02, ne12;
  uint broadcast2, broadcast3;
  float alpha;
} p;

// +1 column of padding against bank conflicts, as engines do; BK / 2 pairs per row of A.
shared vec2 buf_a[BM * (BK / 2 + 1)];
shared float buf_b[BN * (BK + 1)];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint batch = gl_WorkGroupID.z;
  const uint m0 = gl_WorkGroupID.y * BM;
  const uint n0 = gl_WorkGroupID.x * BN;
  const uint a_base = batch * p.batch_stride_a;
  const uint b_base = batch * p.batch_stride_b;
  const uint d_base = batch * p.batch_stride_d;
  // Each invocation owns column tid % BN and rows (tid / BN) * WM .. + WM of the tile.
  const uint col = tid % BN;
  const uint row0 = (tid / BN) * WM;
  float acc[WM];
  for (uint i = 0; i < WM; ++i) acc[i] = 0.0;
  const uint bk = uint(BK);
  for (uint k0 = 0; k0 < p.K; k0 += bk) {
    // A tile through the vec2 view when the pair lies inside the row, else element by element.
    for (uint idx = tid; idx < BM * (bk / 2); idx += BLOCK_SIZE) {
      const uint r = idx / (bk / 2);
      const uint kp = idx % (bk / 2);
      const uint k = k0 + kp * 2;
      vec2 v = vec2(0.0);
      const uint at = a_base + (m0 + r) * p.stride_a + k;
      if (m0 + r < p.M && k + 1 < p.K && at % 2 == 0) {
        v = data_a2[at / 2];
      } else if (m0 + r < p.M) {
        if (k < p.K) v.x = data_a[at];
        if (k + 1 < p.K) v.y = data_a[at + 1];
      }
      buf_a[r * (bk / 2 + 1) + kp] = v;
    }
    for (uint idx = tid; idx < BN * bk; idx += BLOCK_SIZE) {
      const uint n = idx % BN;
      const uint k = idx / BN;
      float v = 0.0;
      if (k0 + k < p.K && n0 + n < p.N) v = data_b[b_base + (k0 + k) * p.stride_b + n0 + n];
      buf_b[n * (bk + 1) + k] = v;
    }
    barrier();
    for (uint k = 0; k < bk; ++k) {
      const float b = buf_b[col * (bk + 1) + k];
      for (uint i = 0; i < WM; ++i) {
        const vec2 pair = buf_a[(row0 + i) * (bk / 2 + 1) + k / 2];
        acc[i] += ((k & 1) == 0 ? pair.x : pair.y) * b;
      }
    }
    barrier();
  }
  for (uint i = 0; i < WM; ++i) {
    const uint m = m0 + row0 + i;
    const uint n = n0 + col;
    if (m < p.M && n < p.N && row0 + i < BM) {
      const uint at = d_base + m * p.stride_d + n;
      data_d[at] = p.alpha * acc[i] + (ACCUMULATE ? data_d[at] : 0.0);
    }
  }
}
