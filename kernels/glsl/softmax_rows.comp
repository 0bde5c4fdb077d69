#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// softmax_rows_{f32,f16}(X, Y, rows, cols): for each row r of the row-major rows x cols matrix,
// Y[r, c] = exp(X[r, c] - m) / sum_c' exp(X[r, c'] - m) with m = max_c X[r, c] (numerically
// stable). -inf entries get 0; a row that is entirely -inf gives a row of 0. X may equal Y.
// One workgroup per row (rows beyond the grid are taken in turn). Block 128; grid (any, 1, 1).
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) readonly buffer X_ { ELEM x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { ELEM y[]; };
layout(push_constant) uniform Params { uint rows, cols; } p;
shared float red[128];
void main() {
  uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    uint base = row * p.cols;
    float m = NEG_INF;
    for (uint c = tid; c < p.cols; c += 128) m = max(m, LOAD(x[base + c]));
    red[tid] = m;
    barrier();
    for (uint s = 64; s > 0; s >>= 1) {
      if (tid < s) red[tid] = max(red[tid], red[tid + s]);
      barrier();
    }
    m = red[0];
    barrier();
    float sum = 0.0;
    if (m != NEG_INF) {
      for (uint c = tid; c < p.cols; c += 128) {
        float v = LOAD(x[base + c]);
        if (v != NEG_INF) sum += exp(v - m);
      }
    }
    red[tid] = sum;
    barrier();
    for (uint s = 64; s > 0; s >>= 1) {
      if (tid < s) red[tid] += red[tid + s];
      barrier();
    }
    sum = red[0];
    barrier();
    float inv = m != NEG_INF ? 1.0 / sum : 0.0;
    for (uint c = tid; c < p.cols; c += 128) {
      float v = LOAD(x[base + c]);
      y[base + c] = STORE(v != NEG_INF ? exp(v - m) * inv : 0.0);
    }
  }
}
