#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// matmul_naive_{f32,f16}(A, B, C, M, N, K, lda, ldb, ldc, alpha, beta):
// C = alpha * A * B + beta * C, row-major, A is MxK, B is KxN, C is MxN. One output per thread.
// Block 16x16; grid (ceil(N/16), ceil(M/16), 1). beta == 0 does not read C.
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) readonly buffer A_ { ELEM a[]; };
layout(set = 0, binding = 1) readonly buffer B_ { ELEM b[]; };
layout(set = 0, binding = 2) buffer C_ { ELEM c[]; };
layout(push_constant) uniform Params {
  uint M, N, K, lda, ldb, ldc;
  float alpha, beta;
} p;
void main() {
  uint col = gl_GlobalInvocationID.x;
  uint row = gl_GlobalInvocationID.y;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.0;
  for (uint k = 0; k < p.K; ++k) acc += LOAD(a[row * p.lda + k]) * LOAD(b[k * p.ldb + col]);
  float r = p.alpha * acc;
  if (p.beta != 0.0) r += p.beta * LOAD(c[row * p.ldc + col]);
  c[row * p.ldc + col] = STORE(r);
}
