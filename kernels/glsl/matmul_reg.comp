#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// matmul_reg_{f32,f16}_<BM>x<BN>(A, B, C, M, N, K, lda, ldb, ldc, alpha, beta):
// C = alpha * A * B + beta * C, row-major, as matmul_naive. Register-tiled, without shared
// memory or barriers: a workgroup of 64 invocations, arranged TX x TY (TY = 64 / TX), computes a
// BM x BN tile of C (BM = TY * TM, BN = TX * TN); each invocation accumulates TM x TN outputs in
// registers, at rows m0 + ty * TM + i and columns n0 + tx + j * TX (neighbouring invocations
// read neighbouring columns of B). Every element loaded is used TM or TN times, which is what
// makes it fast where loads are expensive (CPU Vulkan implementations). Row and column indices
// of every load are clamped into the matrices and every store is guarded, so any M, N, K >= 1
// and any leading dimensions work. Block 64 (1-D); grid (ceil(N/BN), ceil(M/BM), 1).
// Specialization constants (0: TM, 1: TN, 2: TX); the defaults come from the build
// (-DREG_TM=...), one blob per named instance. The workgroup size stays 64.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint TM = REG_TM;
layout(constant_id = 1) const uint TN = REG_TN;
layout(constant_id = 2) const uint TX = REG_TX;
const uint TY = 64 / TX;
layout(set = 0, binding = 0) readonly buffer A_ {
  ELEM a[];
};
layout(set = 0, binding = 1) readonly buffer B_ {
  ELEM b[];
};
layout(set = 0, binding = 2) buffer C_ {
  ELEM c[];
};
layout(push_constant) uniform Params {
  uint M, N, K, lda, ldb, ldc;
  float alpha, beta;
}
p;
void main() {
  uint tid = gl_LocalInvocationID.x;
  uint tx = tid % TX;
  uint ty = tid / TX;
  uint m0 = gl_WorkGroupID.y * (TY * TM) + ty * TM;
  uint n0 = gl_WorkGroupID.x * (TX * TN) + tx;
  // Clamped load offsets: rows past M repeat row M-1 and columns past N repeat column N-1; their
  // results are never stored.
  uint arow[TM];
  [[unroll]] for (uint i = 0; i < TM; ++i) arow[i] = min(m0 + i, p.M - 1) * p.lda;
  uint bcol[TN];
  [[unroll]] for (uint j = 0; j < TN; ++j) bcol[j] = min(n0 + j * TX, p.N - 1);
  float acc[TM * TN];
  [[unroll]] for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;
  uint k = 0;
  // Main loop: 4 values of k at a time.
  for (; k + 4 <= p.K; k += 4) {
    vec4 av[TM];
    [[unroll]] for (uint i = 0; i < TM; ++i) {
      uint o = arow[i] + k;
      av[i] = vec4(LOAD(a[o]), LOAD(a[o + 1]), LOAD(a[o + 2]), LOAD(a[o + 3]));
    }
    [[unroll]] for (uint kk = 0; kk < 4; ++kk) {
      float bv[TN];
      uint o = (k + kk) * p.ldb;
      [[unroll]] for (uint j = 0; j < TN; ++j) bv[j] = LOAD(b[o + bcol[j]]);
      [[unroll]] for (uint i = 0; i < TM; ++i) {
        [[unroll]] for (uint j = 0; j < TN; ++j) acc[i * TN + j] += av[i][kk] * bv[j];
      }
    }
  }
  // Tail: the last K % 4 values.
  for (; k < p.K; ++k) {
    float av[TM];
    [[unroll]] for (uint i = 0; i < TM; ++i) av[i] = LOAD(a[arow[i] + k]);
    float bv[TN];
    uint o = k * p.ldb;
    [[unroll]] for (uint j = 0; j < TN; ++j) bv[j] = LOAD(b[o + bcol[j]]);
    [[unroll]] for (uint i = 0; i < TM; ++i) {
      [[unroll]] for (uint j = 0; j < TN; ++j) acc[i * TN + j] += av[i] * bv[j];
    }
  }
  HAL_STORE_REGISTER_TILE(m0, n0, TX)
}
