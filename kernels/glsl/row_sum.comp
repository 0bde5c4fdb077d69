#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// row_sum_{f32,f16}(X, Y, rows, cols): Y[r] = sum_c X[r, c] over the row-major rows x cols
// matrix, accumulated in fp32. One workgroup per row (rows beyond the grid are taken in turn).
// Block 128; grid (any, 1, 1).
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) readonly buffer X_ { ELEM x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { ELEM y[]; };
layout(push_constant) uniform Params { uint rows, cols; } p;
shared float red[128];
void main() {
  uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    float sum = 0.0;
    for (uint c = tid; c < p.cols; c += 128) sum += LOAD(x[row * p.cols + c]);
    red[tid] = sum;
    barrier();
    for (uint s = 64; s > 0; s >>= 1) {
      if (tid < s) red[tid] += red[tid + s];
      barrier();
    }
    if (tid == 0) y[row] = STORE(red[0]);
    barrier();
  }
}
