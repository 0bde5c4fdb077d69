#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// matmul_tiled_{f32,f16}_<BM>x<BN>(A, B, C, M, N, K, lda, ldb, ldc, alpha, beta):
// C = alpha * A * B + beta * C, row-major, as matmul_naive. A workgroup of 256 invocations (16x16)
// computes a BM x BN tile of C; A and B are staged through shared memory BK columns/rows at a
// time; each invocation accumulates a (BM/16) x (BN/16) register tile, at rows ty + 16*i and
// columns tx + 16*j of the tile. Block 256 (1-D); grid (ceil(N/BN), ceil(M/BM), 1).
// Tile sizes are specialization constants (0: BM, 1: BN, 2: BK), BM and BN multiples of 16;
// the defaults come from the build (-DTILE_BM=...), one blob per named instance.
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint BM = TILE_BM;
layout(constant_id = 1) const uint BN = TILE_BN;
layout(constant_id = 2) const uint BK = TILE_BK;
const uint TM = BM / 16;
const uint TN = BN / 16;
layout(set = 0, binding = 0) readonly buffer A_ { ELEM a[]; };
layout(set = 0, binding = 1) readonly buffer B_ { ELEM b[]; };
layout(set = 0, binding = 2) buffer C_ { ELEM c[]; };
layout(push_constant) uniform Params {
  uint M, N, K, lda, ldb, ldc;
  float alpha, beta;
} p;
shared float As[BK * BM];  // As[k * BM + m]: the A tile, transposed
shared float Bs[BK * BN];  // Bs[k * BN + n]
void main() {
  uint tid = gl_LocalInvocationID.x;
  uint tx = tid % 16;
  uint ty = tid / 16;
  uint m0 = gl_WorkGroupID.y * BM;
  uint n0 = gl_WorkGroupID.x * BN;
  float acc[TM * TN];
  for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;
  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    for (uint idx = tid; idx < BM * BK; idx += 256) {
      uint r = idx / BK;
      uint k = idx % BK;
      float v = 0.0;
      if (m0 + r < p.M && k0 + k < p.K) v = LOAD(a[(m0 + r) * p.lda + k0 + k]);
      As[k * BM + r] = v;
    }
    for (uint idx = tid; idx < BK * BN; idx += 256) {
      uint k = idx / BN;
      uint cc = idx % BN;
      float v = 0.0;
      if (k0 + k < p.K && n0 + cc < p.N) v = LOAD(b[(k0 + k) * p.ldb + n0 + cc]);
      Bs[k * BN + cc] = v;
    }
    barrier();
    for (uint k = 0; k < BK; ++k) {
      float av[TM];
      float bv[TN];
      for (uint i = 0; i < TM; ++i) av[i] = As[k * BM + ty + 16 * i];
      for (uint j = 0; j < TN; ++j) bv[j] = Bs[k * BN + tx + 16 * j];
      for (uint i = 0; i < TM; ++i)
        for (uint j = 0; j < TN; ++j) acc[i * TN + j] += av[i] * bv[j];
    }
    barrier();
  }
  for (uint i = 0; i < TM; ++i) {
    uint row = m0 + ty + 16 * i;
    if (row >= p.M) break;
    for (uint j = 0; j < TN; ++j) {
      uint col = n0 + tx + 16 * j;
      if (col >= p.N) break;
      float r = p.alpha * acc[i * TN + j];
      if (p.beta != 0.0) r += p.beta * LOAD(c[row * p.ldc + col]);
      c[row * p.ldc + col] = STORE(r);
    }
  }
}
